/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heuristic.c - the heuristic planner and the ancestor's fixed order
 *
 * Order of pools (doc/orchestrator.md, "Heuristic planner"):
 *  1. pools that gave instances and never ran dry ("plenty");
 *  2. pools with a finite estimate, largest first: filling from the biggest
 *     pools needs the fewest calls;
 *  3. pools memory knows nothing about;
 *  4. pools memory says are empty;
 *  5. pools that ran dry within policy.ice_cooldown ("cooling");
 *  6. pools whose region's remembered quota has no room left ("walled",
 *     with facts.bounds only);
 * all of it inside each rung of the capacity ladder, rung by rung (every
 * region's reservations before any region's spot, say); ties by candidate
 * order (home, then distance, or as policy.prefer put them), type
 * preference (the
 * nodeset's instance_types order), AZ and subnet order: the types of one
 * nodeset are equivalent GPUs, so a nearer region's second type comes
 * before a farther region's first.
 * With locality and a job of several nodes the pools are grouped by
 * region (or AZ) first: groups that memory says can hold the whole job,
 * nearest first; then groups memory cannot judge; then the rest.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_plan.h"
#include "gb_str.h"

enum tier {
	TIER_PLENTY = 0,
	TIER_ESTIMATE,
	TIER_UNKNOWN,
	TIER_EMPTY,
	TIER_COOLING,
	TIER_WALLED,
};

static bool usable(const struct gb_pool *p)
{
	return !p->excluded && p->offered != GB_OFFER_NO;
}

static int rounded(double est)
{
	return est < 0 ? -1 : isinf(est) ? INT32_MAX : (int)floor(est + 0.5);
}

static enum tier tier_of(const struct gb_pool *p)
{
	if (p->mem.walled)
		return TIER_WALLED;
	if (p->mem.recent_ice)
		return TIER_COOLING;
	if (p->mem.est < 0)
		return TIER_UNKNOWN;
	if (isinf(p->mem.est))
		return TIER_PLENTY;
	return rounded(p->mem.est) >= 1 ? TIER_ESTIMATE : TIER_EMPTY;
}

static int cmp_pool(const struct gb_pool *a, const struct gb_pool *b)
{
	enum tier ta = tier_of(a), tb = tier_of(b);

	/* the ladder first: every region's first rung before any's second */
	if (a->rung != b->rung)
		return a->rung < b->rung ? -1 : 1;
	if (ta != tb)
		return ta < tb ? -1 : 1;
	if (ta == TIER_ESTIMATE && rounded(a->mem.est) != rounded(b->mem.est))
		return rounded(a->mem.est) > rounded(b->mem.est) ? -1 : 1;
	if (ta == TIER_ESTIMATE && a->mem.assumed != b->mem.assumed)
		return a->mem.assumed ? 1 : -1;	/* measured before assumed */
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->type_index != b->type_index)
		return a->type_index < b->type_index ? -1 : 1;
	if (a->az_index != b->az_index)
		return a->az_index < b->az_index ? -1 : 1;
	return a->subnet_index < b->subnet_index ? -1 :
	       a->subnet_index > b->subnet_index;
}

/* Locality groups: a region, or an AZ, whatever the pools' types. */
struct group {
	const char *region;
	const char *az;		/* NULL for a region group */
	int rank, az_index;
	double known;		/* sum of finite estimates (one per AZ) */
	bool plenty, unknown;
	int klass;		/* 0 capable, 1 cannot judge, 2 short */
};

static bool in_group(const struct group *g, const struct gb_pool *p)
{
	return strcmp(g->region, p->region) == 0 &&
	       (!g->az || strcmp(g->az, p->az) == 0);
}

static int cmp_group(const void *x, const void *y)
{
	const struct group *a = x, *b = y;

	if (a->klass != b->klass)
		return a->klass < b->klass ? -1 : 1;
	if (a->klass == 2 && a->known != b->known)
		return a->known > b->known ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->az_index < b->az_index ? -1 : a->az_index > b->az_index;
}

/*
 * First subnet of its (AZ, type, capacity) among the usable pools (memory
 * is per AZ, type and kind; a reservation's count per reservation).
 */
static bool first_subnet(const struct gb_plan_facts *f, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (usable(&f->pools[j]) && gb_plan_same_capacity(&f->pools[j], &f->pools[i]))
			return false;
	return true;
}

static size_t build_groups(const struct gb_plan_facts *f, struct group *g)
{
	bool by_az = f->locality == GB_LOCALITY_AZ;
	size_t n = 0;

	for (size_t i = 0; i < f->n_pools; i++) {
		const struct gb_pool *p = &f->pools[i];
		size_t k;

		if (!usable(p))
			continue;
		for (k = 0; k < n && !in_group(&g[k], p); k++)
			;
		if (k == n) {
			g[n].region = p->region;
			g[n].az = by_az ? p->az : NULL;
			g[n].rank = p->rank;
			g[n].az_index = by_az ? p->az_index : 0;
			n++;
		}
		if (!first_subnet(f, i))
			continue;
		if (tier_of(p) >= TIER_COOLING)
			continue;	/* counts for nothing now */
		if (p->mem.est < 0)
			g[k].unknown = true;
		else if (isinf(p->mem.est))
			g[k].plenty = true;
		else
			g[k].known += rounded(p->mem.est);
	}
	for (size_t k = 0; k < n; k++)
		g[k].klass = g[k].plenty || g[k].known >= f->job_size ? 0 :
			     g[k].unknown ? 1 : 2;
	qsort(g, n, sizeof(*g), cmp_group);
	return n;
}

static void reason_of(const struct gb_plan_facts *f, const struct gb_pool *p,
		      bool first, char *buf, size_t n)
{
	const struct gb_candidate *c = &f->cand->v[p->rank];

	if (!first) {
		snprintf(buf, n, "another subnet of %s%s%s (address rotation)", p->az,
			 f->n_types > 1 ? " for " : "", f->n_types > 1 ? p->type : "");
		return;
	}
	if (p->reserved >= 0) {
		snprintf(buf, n, "%s %s: %d available%s", gb_conf_capacity_name(p->capacity),
			 p->target ? p->target : "open", p->reserved,
			 p->opens_at > f->now ? " when it opens" : "");
		return;
	}
	if (p->mem.assumed) {
		snprintf(buf, n, "no memory; assumed about %d like the pools memory knows",
			 rounded(p->mem.est));
		return;
	}
	if (f->bounds && (p->mem.level_n > 0 || p->mem.floor_n > 0) &&
	    tier_of(p) <= TIER_EMPTY && tier_of(p) != TIER_UNKNOWN) {
		/* the evidence of the schema-2 estimate: levels, lower bounds */
		if (p->mem.measured && p->mem.floor >= 0)
			snprintf(buf, n, "memory: about %d (level %.1f over %.1f dry-outs, at least %.1f over %.1f visits)",
				 rounded(p->mem.est), p->mem.level_sum / p->mem.level_n,
				 p->mem.level_n, p->mem.floor, p->mem.floor_n);
		else if (p->mem.measured)
			snprintf(buf, n, "memory: about %d (level %.1f over %.1f dry-outs)",
				 rounded(p->mem.est), p->mem.level_sum / p->mem.level_n,
				 p->mem.level_n);
		else
			snprintf(buf, n, "memory: at least %.1f (over %.1f visits, never dry)",
				 p->mem.floor, p->mem.floor_n);
		return;
	}
	switch (tier_of(p)) {
	case TIER_PLENTY:
		snprintf(buf, n, "memory: gave %.1f and never ran dry", p->mem.got);
		break;
	case TIER_ESTIMATE:
	case TIER_EMPTY:
		snprintf(buf, n, "memory: about %d (got %.1f over %.1f dry-outs)",
			 rounded(p->mem.est), p->mem.got, p->mem.ice);
		break;
	case TIER_COOLING:
		snprintf(buf, n, "ran dry %.0fs ago (cooling down)",
			 f->now - p->mem.last_ice_at);
		break;
	case TIER_WALLED:
		snprintf(buf, n, "quota: %s remembered, no room left in %s",
			 p->mem.quota_code[0] ? p->mem.quota_code : "limit", p->region);
		break;
	default:
		if (c->home)
			snprintf(buf, n, "no memory; home region");
		else if (isinf(c->distance_km))
			snprintf(buf, n, "no memory; candidate %d", p->rank + 1);
		else
			snprintf(buf, n, "no memory; candidate %d (%.0f km)",
				 p->rank + 1, c->distance_km);
	}
}

/* batch and expect of one step, from the pool's estimate. */
static void sizing(const struct gb_plan_facts *f, const struct gb_pool *p,
		   bool first, int *batch, int *expect)
{
	int bmax = f->batch_max > 0 ? f->batch_max : 1;
	int e = rounded(p->mem.est);

	*batch = bmax;
	*expect = 0;
	if (p->reserved >= 0) {
		/* an exact count: ask for it, never more (no hedge) */
		*expect = p->reserved;
		*batch = p->reserved < 1 ? 1 : p->reserved < bmax ? p->reserved : bmax;
		return;
	}
	if (!first || tier_of(p) == TIER_COOLING || e < 0)
		return;
	if (tier_of(p) == TIER_WALLED) {
		*batch = 1;
		return;
	}
	if (e == INT32_MAX) {
		*expect = f->target;
		return;
	}
	*expect = e;
	*batch = e + (f->hedge > 0 ? f->hedge : 0);
	if (*batch < 1)
		*batch = 1;
	if (*batch > bmax)
		*batch = bmax;
}

static gb_err_t add(struct gb_plan *plan, const struct gb_plan_facts *f,
		    size_t i, gb_error_t *err)
{
	const struct gb_pool *p = &f->pools[i];
	bool first = first_subnet(f, i);
	char why[GB_PLAN_REASON_MAX];
	int batch, expect;

	reason_of(f, p, first, why, sizeof(why));
	sizing(f, p, first, &batch, &expect);
	return gb_plan_add_pool_step(plan, p, batch, expect, why, err);
}

/* Indices of the usable pools (of group [g], or all), in pool order. */
static size_t ordered(const struct gb_plan_facts *f, const struct group *g,
		      size_t *idx)
{
	size_t n = 0;

	for (size_t i = 0; i < f->n_pools; i++)
		if (usable(&f->pools[i]) && (!g || in_group(g, &f->pools[i])))
			idx[n++] = i;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 &&
		     cmp_pool(&f->pools[idx[j - 1]], &f->pools[idx[j]]) > 0; j--) {
			size_t t = idx[j];

			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	return n;
}

static void rationale(const struct gb_plan_facts *f, const struct group *g,
		      size_t ng, struct gb_plan *plan)
{
	struct gb_buf b = GB_BUF_INIT;

	gb_buf_printf(&b, "%zu pools for %d x %s; yield from memory first, then distance",
		      plan->n_steps, f->target, f->instance_type);
	if (g && ng) {
		gb_buf_printf(&b, "; job of %d in one %s, first %s%s%s (%s)",
			      f->job_size,
			      f->locality == GB_LOCALITY_AZ ? "AZ" : "region",
			      g[0].region, g[0].az ? "/" : "", g[0].az ? g[0].az : "",
			      g[0].klass == 0 ? "memory says it can hold the job" :
			      g[0].klass == 1 ? "unknown capacity" :
			      "largest known capacity");
	}
	if (!gb_buf_failed(&b))
		gb_plan_set_rationale(plan, gb_buf_str(&b), NULL);
	gb_buf_free(&b);
	gb_plan_rationale_prefer(plan, f->cand, NULL);
}

static gb_err_t no_pool(const struct gb_plan_facts *f, gb_error_t *err)
{
	struct gb_buf b = GB_BUF_INIT;
	gb_err_t rc;

	struct gb_buf t = GB_BUF_INIT;

	for (size_t i = 0; f->cand && i < f->cand->n; i++)
		gb_buf_printf(&b, "%s%s", i ? ", " : "", f->cand->v[i].region->name);
	for (size_t i = 0; i < f->n_types; i++)
		gb_buf_printf(&t, "%s%s", i ? " or " : "", f->types[i]);
	rc = gb_errorf(err, GB_E_PLAN, "no usable pool offers %s in %s",
		       t.len ? gb_buf_str(&t) : f->instance_type,
		       b.len ? gb_buf_str(&b) : "(no region)");
	gb_buf_free(&t);
	gb_buf_free(&b);
	return rc;
}

/*
 * A pool memory knows nothing about is assumed to hold what the pools it
 * knows to have capacity hold on average (two of them at least): so a
 * warm plan explores unknown pools before pools known to be small, and
 * sizes their calls.  With facts.bounds the same goes for a pool only
 * known to hold at least less than that.  The copy in [pools] is what the
 * planner works on.
 */
/* A pool never seen dry, known by lower bounds only (facts.bounds). */
static bool bounded_only(const struct gb_plan_facts *f, const struct gb_pool *p)
{
	return f->bounds && !p->mem.measured && p->mem.floor >= 0;
}

/*
 * The mean estimate of the pools with capacity (an empty one says nothing
 * of the others), first subnets only; pools known by lower bounds only
 * count at no less than the mean of the others (a bound under it is no
 * evidence against it).  RET the mean, or -1 with fewer than two pools.
 */
static double capacity_mean(const struct gb_plan_facts *f)
{
	double sum[2] = { 0, 0 }, mean;
	int n[2] = { 0, 0 };

	for (size_t i = 0; i < f->n_pools; i++) {
		const struct gb_pool *p = &f->pools[i];
		int k = bounded_only(f, p);

		if (p->reserved < 0 && p->mem.est >= 0.5 && !isinf(p->mem.est) &&
		    p->offered != GB_OFFER_NO && !p->mem.walled && first_subnet(f, i)) {
			sum[k] += p->mem.est;
			n[k]++;
		}
	}
	if (n[0] + n[1] < 2)
		return -1;
	if (n[0] == 0 || n[1] == 0)
		return (sum[0] + sum[1]) / (n[0] + n[1]);
	mean = sum[0] / n[0];
	for (size_t i = 0; i < f->n_pools; i++) {
		const struct gb_pool *p = &f->pools[i];

		if (bounded_only(f, p) && p->mem.est >= 0.5 && !isinf(p->mem.est) &&
		    p->offered != GB_OFFER_NO && !p->mem.walled && first_subnet(f, i) &&
		    p->mem.est < mean)
			sum[1] += mean - p->mem.est;
	}
	return (sum[0] + sum[1]) / (n[0] + n[1]);
}

static void assume_unknown(const struct gb_plan_facts *f, struct gb_pool *pools)
{
	double mean = capacity_mean(f);
	double sum = mean;
	int n = 1;

	if (mean < 0)
		return;
	for (size_t i = 0; i < f->n_pools; i++) {
		struct gb_pool_memory *m = &pools[i].mem;

		if (m->recent_ice || m->walled)
			continue;
		/*
		 * A lower bound under the average says nothing against it: a
		 * pool that gave 1 when asked 1 is assumed average too.
		 */
		if (m->est < 0 || (bounded_only(f, &pools[i]) && !isinf(m->est) &&
				   m->est < sum / n)) {
			/* never more than the region's remembered quota room */
			m->est = sum / n < m->quota_room ? sum / n : m->quota_room;
			m->assumed = true;
		}
	}
}

gb_err_t gb_plan_heuristic(const struct gb_plan_facts *in,
			   struct gb_plan **out, gb_error_t *err)
{
	struct gb_plan_facts local = *in;
	const struct gb_plan_facts *f = &local;
	struct gb_plan *plan = NULL;
	struct group *g = NULL;
	size_t *idx = NULL, ng = 0, n;
	bool grouped = f->job_size > 1 && f->locality != GB_LOCALITY_NONE;
	gb_err_t rc;

	*out = NULL;
	idx = calloc(f->n_pools + 1, sizeof(*idx));
	g = calloc(f->n_pools + 1, sizeof(*g));
	local.pools = calloc(in->n_pools + 1, sizeof(*local.pools));
	if (!idx || !g || !local.pools) {
		rc = gb_errorf(err, GB_E_NOMEM, "planner: out of memory");
		goto out;
	}
	memcpy(local.pools, in->pools, in->n_pools * sizeof(*local.pools));
	assume_unknown(in, local.pools);
	if ((rc = gb_plan_new(f->instance_type, "heuristic", f->target, &plan, err)))
		goto out;
	if (grouped)
		ng = build_groups(f, g);
	for (size_t k = 0; k < (grouped ? ng : 1); k++) {
		n = ordered(f, grouped ? &g[k] : NULL, idx);
		for (size_t i = 0; i < n; i++)
			if ((rc = add(plan, f, idx[i], err)))
				goto out;
	}
	if (plan->n_steps == 0) {
		rc = no_pool(f, err);
		goto out;
	}
	rationale(f, grouped ? g : NULL, ng, plan);
	*out = plan;
	plan = NULL;
out:
	gb_plan_free(plan);
	free(idx);
	free(g);
	free(local.pools);
	return rc;
}

gb_err_t gb_plan_ordered(const struct gb_plan_facts *f, struct gb_plan **out,
			 gb_error_t *err)
{
	struct gb_plan *plan = NULL;
	char why[GB_PLAN_REASON_MAX];
	gb_err_t rc;

	*out = NULL;
	if ((rc = gb_plan_new(f->instance_type, "ancestor-order", f->target,
			      &plan, err)))
		return rc;
	for (size_t i = 0; i < f->n_pools; i++) {
		const struct gb_pool *p = &f->pools[i];

		if (!usable(p))
			continue;
		snprintf(why, sizeof(why), "candidate %d, rung %d, type %d, AZ %d, subnet %d in config order",
			 p->rank + 1, p->rung + 1, p->type_index + 1, p->az_index + 1,
			 p->subnet_index + 1);
		rc = gb_plan_add_pool_step(plan, p, f->batch_max, 0, why, err);
		if (rc)
			goto fail;
	}
	if (plan->n_steps == 0) {
		rc = no_pool(f, err);
		goto fail;
	}
	gb_plan_set_rationale(plan, "the ancestor's Probe-and-Fill order: regions by candidate order, subnets in config order", NULL);
	gb_plan_rationale_prefer(plan, f->cand, NULL);
	*out = plan;
	return GB_E_OK;
fail:
	gb_plan_free(plan);
	return rc;
}
