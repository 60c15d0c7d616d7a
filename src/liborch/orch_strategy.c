/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_strategy.c - probe_fill, best_effort, all_or_nothing and the default
 *
 * doc/orchestrator.md describes each; the benchmark (bench/fill) compares
 * them on the same capacity landscapes.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "orch_int.h"

/*****************************************************************************
 *  Helpers
 *****************************************************************************/

static bool one_per_call(const struct orch_run *r, size_t pool)
{
	const struct gb_conf_region *cr =
		gb_conf_region(r->conf, r->facts.pools[pool].region);

	return cr && cr->user_data && strstr(cr->user_data, "{node}");
}

static int pool_cap(const struct orch_run *r, size_t pool)
{
	return one_per_call(r, pool) ? 1 : r->bmax;
}

static long pool_index(const struct orch_run *r, const struct gb_plan_step *s)
{
	for (size_t i = 0; i < r->facts.n_pools; i++) {
		const struct gb_pool *p = &r->facts.pools[i];

		if (strcmp(p->region, s->region) == 0 && strcmp(p->az, s->az) == 0 &&
		    strcmp(p->subnet, s->subnet) == 0)
			return (long)i;
	}
	return -1;
}

static bool same_az(const struct orch_run *r, size_t a, size_t b)
{
	return strcmp(r->facts.pools[a].region, r->facts.pools[b].region) == 0 &&
	       strcmp(r->facts.pools[a].az, r->facts.pools[b].az) == 0;
}

/* A call for [pool] with the first [k] empty slots not [used] yet. */
static struct orch_call *call_new(struct orch_run *r, size_t pool, int min,
				  int max, int k, bool *used)
{
	struct orch_call *c = calloc(1, sizeof(*c));
	int got = 0;

	if (!c || !(c->nodes = calloc((size_t)max, sizeof(*c->nodes)))) {
		free(c);
		return NULL;
	}
	c->pool = pool;
	c->min = min;
	c->max = max;
	for (int i = 0; i < r->n && got < k; i++) {
		if (r->slots[i].state != SLOT_EMPTY || (used && used[i]))
			continue;
		c->nodes[got++] = r->slots[i].name;
		if (used)
			used[i] = true;
	}
	c->n_new = got;
	return c;
}

static gb_err_t run_calls(struct orch_run *r, struct orch_call **calls,
			  size_t n, gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;

	for (size_t i = 0; i < n && !rc; i++)
		rc = orch_call_begin(r, calls[i], err);
	if (!rc)
		rc = orch_wave(r, calls, n, err);
	return rc;
}

static gb_err_t run_one(struct orch_run *r, struct orch_call *c, gb_error_t *err)
{
	return run_calls(r, &c, 1, err);
}

static double backoff(int k)
{
	double d = 2.0 * pow(2, k);

	return d > 30 ? 30 : d;
}

static void trace_decide(struct orch_run *r, enum orch_action a,
			 const char *why)
{
	orch_trace(r, "decide", "action=%s cursor=%d remaining=%d reason=%s",
		   orch_action_name(a), r->cursor, orch_unfilled(r), why);
}

/* Distinct locality groups in plan order (one group 0 when not grouped). */
static size_t plan_groups(const struct orch_run *r, int *g)
{
	size_t n = 0;

	if (!r->grouped) {
		g[0] = 0;
		return 1;
	}
	for (size_t i = 0; r->plan && i < r->plan->n_steps; i++) {
		long p = pool_index(r, &r->plan->steps[i]);
		int id;
		size_t k;

		if (p < 0)
			continue;
		id = orch_group_of(r, (size_t)p);
		if (r->lock_group >= 0 && id != r->lock_group)
			continue;
		for (k = 0; k < n && g[k] != id; k++)
			;
		if (k == n)
			g[n++] = id;
	}
	return n;
}

static bool in_group(const struct orch_run *r, size_t pool, int group)
{
	return !r->grouped || orch_group_of(r, pool) == group;
}

/* End of a locality group: commit it whole or roll it back. */
static gb_err_t close_group(struct orch_run *r, int group, gb_error_t *err)
{
	int held = 0;
	char why[160];

	if (!r->grouped)
		return GB_E_OK;
	for (int i = 0; i < r->n; i++)
		held += r->slots[i].state == SLOT_TENTATIVE &&
			(group < 0 || r->slots[i].group == group);
	if (orch_unfilled(r) == 0) {
		for (int i = 0; i < r->n; i++) {
			if (r->slots[i].state == SLOT_TENTATIVE) {
				r->slots[i].state = SLOT_COMMITTED;
				r->remaining--;
			}
		}
		orch_trace(r, "locality", "group=%d holds the whole job of %d", group, r->n);
		return orch_check(r, "commit", err);
	}
	r->saw_locality = true;
	snprintf(why, sizeof(why), "locality: this %s gave %d of the job's %d nodes",
		 r->locality == GB_LOCALITY_AZ && group >= 0 ? "AZ" : "region",
		 held, r->n);
	orch_trace(r, "locality", "%s; rolling back", why);
	return orch_rollback(r, group, why, err);
}

/* What one call's outcome means for its pool (all but probe_fill). */
static void judge_pool(struct orch_run *r, struct orch_call *c, bool aon)
{
	enum call_outcome oc = orch_call_outcome(c);
	struct pool_run *pr = &r->pr[c->pool];
	int got = orch_call_got(c);

	pr->tried = true;
	switch (oc) {
	case CALL_OK:
		pr->got += got;
		pr->throttled = 0;
		if (c->min < c->max && got < c->max) {
			/* a level measured; empty pools say nothing of others */
			orch_exclude_az(r, c->pool, "dry");
			r->prior_sum += got;
			r->prior_n++;
		} else if (pr->got >= 1 && r->facts.pools[c->pool].mem.est >= 0 &&
			   !isinf(r->facts.pools[c->pool].mem.est) &&
			   pr->got >= floor(r->facts.pools[c->pool].mem.est + 0.5)) {
			/*
			 * It gave what memory said it holds: asked again only
			 * when every other pool is spent (a probe of one).
			 */
			for (size_t i = 0; i < r->facts.n_pools; i++)
				if (same_az(r, i, c->pool))
					r->pr[i].at_estimate = true;
		} else {
			pr->run_est = -1;	/* gave all it was asked: maybe more */
		}
		break;
	case CALL_ICE:
		orch_exclude_az(r, c->pool, aon ? "short" : "dry");
		break;
	case CALL_ADDRESSES:
		orch_exclude_subnet(r, c->pool, "addresses");
		break;
	case CALL_UNSUPPORTED:
		orch_exclude_az(r, c->pool, "unsupported");
		break;
	case CALL_QUOTA:
		orch_exclude_region(r, r->facts.pools[c->pool].region, "quota");
		orch_trace(r, "quota", "region=%s excluded for this run",
			   r->facts.pools[c->pool].region);
		break;
	case CALL_THROTTLE:
		if (++pr->throttled > 2)
			orch_exclude_subnet(r, c->pool, "throttled");
		break;
	case CALL_UNKNOWN:
		orch_exclude_subnet(r, c->pool, "unknown outcome");
		break;
	case CALL_ABORT:
		break;
	}
	if (r->prior_n > 0)
		r->run_prior = r->prior_sum / r->prior_n;
}

/*****************************************************************************
 *  probe_fill: the ancestor's algorithm (research s1.3, s1.4)
 *****************************************************************************/

static int filled_in(const struct orch_run *r, const char *region)
{
	int n = 0;

	for (int i = 0; i < r->n; i++)
		n += r->slots[i].state != SLOT_EMPTY && r->slots[i].region &&
		     strcmp(r->slots[i].region, region) == 0 &&
		     r->slots[i].state != SLOT_REUSED;
	return n;
}

static bool region_offers_any(const struct orch_run *r, const char *region)
{
	for (size_t i = 0; i < r->facts.n_pools; i++)
		if (strcmp(r->facts.pools[i].region, region) == 0 &&
		    r->facts.pools[i].offered != GB_OFFER_NO)
			return true;
	return false;
}

/*
 * One subnet, MinCount = MaxCount = n, halving on ICE (the ancestor's
 * launcher).  RET true to go on with the next subnet, false when the
 * region is over ([code] then names why, unless it simply filled).
 */
static bool probe_subnet(struct orch_run *r, size_t pool, char *code,
			 size_t code_len, gb_err_t *rc, gb_error_t *err)
{
	int cap = pool_cap(r, pool), attempts = 0, throttles = 0;
	int need = orch_unfilled(r);
	int batch = need < cap ? need : cap;

	while (need > 0 && attempts < r->o->tuning.max_attempts_per_subnet &&
	       !orch_stopped(r)) {
		int n = batch < need ? batch : need;
		struct orch_call *c = call_new(r, pool, n, n, n, NULL);
		enum call_outcome oc;

		if (!c) {
			*rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			return false;
		}
		*rc = run_one(r, c, err);
		oc = orch_call_outcome(c);
		if (oc != CALL_OK && oc != CALL_ICE)
			gb_strlcpy(code, c->job.ae.code[0] ? c->job.ae.code :
				   gb_ec2_class_name(c->job.ae.cls), code_len);
		orch_call_free(c);
		if (*rc)
			return false;
		need = orch_unfilled(r);
		switch (oc) {
		case CALL_OK:
			attempts = 0;
			batch = need < cap ? need : cap;
			break;
		case CALL_ICE:
			if (n == 1)
				return true;	/* subnet exhausted */
			batch = (n + 1) / 2;
			attempts++;
			break;
		case CALL_ADDRESSES:
			code[0] = '\0';
			return true;
		case CALL_UNSUPPORTED:
			code[0] = '\0';
			orch_exclude_az(r, pool, "unsupported");
			return true;
		case CALL_THROTTLE:
			if (++throttles > 2)
				return false;
			gb_orch_sleep(r->o, backoff(throttles - 1));
			break;
		case CALL_QUOTA:
			orch_exclude_region(r, r->facts.pools[pool].region, "quota");
			return false;
		default:
			return false;	/* abort, unknown */
		}
	}
	return true;
}

static const char *region_status(int requested, int launched, bool error)
{
	if (requested > 0 && launched >= requested)
		return "FULL";
	if (launched > 0)
		return "PARTIAL";
	return error ? "ERROR" : "NONE";
}

/* The subnets of [region] in plan order. RET false when the region stopped. */
static bool probe_region(struct orch_run *r, const char *region, bool *any,
			 char *code, size_t code_len, gb_err_t *rc,
			 gb_error_t *err)
{
	for (size_t i = 0; r->plan && i < r->plan->n_steps; i++) {
		long p = pool_index(r, &r->plan->steps[i]);

		if (p < 0 || strcmp(r->facts.pools[p].region, region) ||
		    r->facts.pools[p].excluded)
			continue;
		*any = true;
		if (!probe_subnet(r, (size_t)p, code, code_len, rc, err))
			return false;
		if (orch_unfilled(r) == 0)
			break;
	}
	return true;
}

gb_err_t orch_probe_fill(struct orch_run *r, gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;

	for (int g = r->cursor; g < (int)r->cand.n && !rc; g++) {
		const char *region = r->cand.v[g].region->name;
		int requested = orch_unfilled(r), before = filled_in(r, region);
		char code[64] = "";
		bool any = false, stopped;
		int launched;

		r->cursor = g;
		if ((rc = orch_check(r, "region", err)) || orch_stopped(r))
			break;
		stopped = !probe_region(r, region, &any, code, sizeof(code), &rc, err);
		if (rc)
			break;
		if (!any)
			gb_strlcpy(code, region_offers_any(r, region) ? "NO_SUBNETS" :
				   "NOT_OFFERED", sizeof(code));
		launched = filled_in(r, region) - before;
		orch_trace(r, "region_result", "region=%s status=%s requested=%d launched=%d remaining=%d code=%s",
			   region, region_status(requested, launched, stopped && code[0]),
			   requested, launched, orch_unfilled(r),
			   code[0] ? code : "-");
		/* probe_fill keeps locality per region, whatever its grain */
		if ((rc = close_group(r, -1, err)))
			break;
		if (orch_unfilled(r) == 0) {
			trace_decide(r, ORCH_ACTION_DONE, "all nodes filled");
			break;
		}
		if (r->abort_rc) {
			trace_decide(r, ORCH_ACTION_ABORT, r->abort_text);
			break;
		}
		if (r->mode == GB_MODE_SINGLE_REGION) {
			trace_decide(r, ORCH_ACTION_DONE, "single_region mode: no cross-region fallback");
			break;
		}
		trace_decide(r, ORCH_ACTION_CONTINUE_NEXT_REGION,
			     g + 1 < (int)r->cand.n ? "nodes remain" : "regions exhausted");
	}
	return rc;
}

/*****************************************************************************
 *  best_effort and all_or_nothing: one call at a time, in plan order
 *****************************************************************************/

static gb_err_t fill_pool(struct orch_run *r, size_t pool, bool aon,
			  gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;

	while (orch_unfilled(r) > 0 && !r->facts.pools[pool].excluded &&
	       !orch_stopped(r)) {
		int cap = pool_cap(r, pool), need = orch_unfilled(r);
		int k = need < cap ? need : cap;
		struct orch_call *c = call_new(r, pool, aon ? k : 1, k, k, NULL);
		enum call_outcome oc;

		if (!c)
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		rc = run_one(r, c, err);
		oc = orch_call_outcome(c);
		if (!rc)
			judge_pool(r, c, aon);
		orch_call_free(c);
		if (rc || oc == CALL_ABORT)
			break;
		if (oc == CALL_THROTTLE && !r->facts.pools[pool].excluded)
			gb_orch_sleep(r->o, backoff(r->pr[pool].throttled - 1));
	}
	return rc;
}

gb_err_t orch_sequential(struct orch_run *r, bool aon, gb_error_t *err)
{
	int *groups = calloc((r->plan ? r->plan->n_steps : 0) + 1, sizeof(int));
	size_t ng;
	gb_err_t rc = GB_E_OK;

	if (!groups)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	ng = plan_groups(r, groups);
	for (size_t gi = (size_t)r->cursor; gi < ng && !rc; gi++) {
		r->cursor = (int)gi;
		for (size_t i = 0; i < r->plan->n_steps && !rc; i++) {
			long p = pool_index(r, &r->plan->steps[i]);

			if (orch_unfilled(r) == 0 || orch_stopped(r))
				break;
			if (p < 0 || !in_group(r, (size_t)p, groups[gi]))
				continue;
			rc = fill_pool(r, (size_t)p, aon, err);
		}
		if (!rc)
			rc = close_group(r, groups[gi], err);
		if (rc || orch_unfilled(r) == 0 || orch_stopped(r))
			break;
	}
	free(groups);
	return rc;
}

/*****************************************************************************
 *  The default: parallel waves sized by memory, hedged
 *****************************************************************************/

/* Instances the planner (or this run) expects from [pool]; -1 unknown. */
static int expectation(const struct orch_run *r, size_t pool,
		       const struct gb_plan_step *s)
{
	const struct pool_run *pr = &r->pr[pool];
	const struct gb_pool *p = &r->facts.pools[pool];

	if (pr->at_estimate)
		return 0;	/* last resort, as a pool memory calls empty */
	if (pr->tried)
		return -1;	/* it gave all it was asked: maybe more */
	if (s->expect > 0)
		return s->expect;
	if (p->mem.est >= 0 && !isinf(p->mem.est) && floor(p->mem.est + 0.5) < 1)
		return 0;	/* memory says empty: last resort only */
	if (p->mem.est < 0 && !p->mem.recent_ice && r->run_prior >= 0 &&
	    r->o->tuning.prior >= 0) {
		int e = (int)floor(r->run_prior + 0.5);

		return e < 1 ? 1 : e;
	}
	return -1;
}

struct wave {
	struct orch_call **v;
	size_t n;
	int *hedge;		/* hedge slots wanted per call */
	int *cover;		/* call whose last node a spare covers, or -1 */
	size_t n_pass1;		/* calls to pools memory does not call empty */
	bool *used;		/* slots given to a call of this wave */
};

static gb_err_t wave_add(struct orch_run *r, struct wave *w, size_t pool,
			 int count, int hedge, gb_error_t *err)
{
	struct orch_call *c = call_new(r, pool, 1, count + hedge, count, w->used);

	if (!c)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	w->hedge[w->n] = hedge;
	w->cover[w->n] = -1;
	w->v[w->n++] = c;
	return GB_E_OK;
}

/*
 * Hedge slots take the names of nodes no call of this wave has; beyond
 * those, one slot per call takes the last node of another call (the one it
 * covers, else the next): if that call falls one short, the hedge fills
 * exactly the node it missed; if both deliver, one is an extra.  More
 * shared names would only make extras: the call is shrunk instead.
 */
static void name_hedges(struct orch_run *r, struct wave *w)
{
	for (size_t i = 0; i < w->n; i++) {
		struct orch_call *c = w->v[i];
		bool shared = false;
		int h;

		for (h = 0; h < w->hedge[i]; h++) {
			const char *name = NULL;

			for (int k = 0; k < r->n && !name; k++) {
				if (r->slots[k].state == SLOT_EMPTY && !w->used[k]) {
					w->used[k] = true;
					name = r->slots[k].name;
				}
			}
			if (!name && !shared && w->cover[i] >= 0) {
				const struct orch_call *o = w->v[w->cover[i]];

				name = o->nodes[o->n_new - 1];
				shared = true;
			}
			for (size_t d = 1; d < w->n && !name && !shared; d++) {
				const struct orch_call *o = w->v[(i + d) % w->n];

				if (o->n_new > 0) {
					name = o->nodes[o->n_new - 1];
					shared = true;
				}
			}
			if (!name)
				break;
			c->nodes[c->n_new + h] = name;
		}
		c->max = c->n_new + h;
	}
}

/* An expectation that memory cannot vouch for: assumed, or between levels. */
static bool uncertain(const struct orch_run *r, size_t pool, int e)
{
	const struct gb_pool *p = &r->facts.pools[pool];
	double frac;

	if (e < 0 || isinf(p->mem.est))
		return false;
	if (!p->mem.known || p->mem.est < 0)
		return true;
	frac = p->mem.est - floor(p->mem.est);
	return frac > 0.2 && frac < 0.8;
}

/*
 * A spare: when the wave relies on an uncertain estimate, one more pool is
 * asked for one instance named like the uncertain call's last node; if that
 * call falls one short the spare fills it in this wave instead of the next,
 * else it is an extra and terminated at once.
 */
static gb_err_t add_spare(struct orch_run *r, int group, struct wave *w,
			  int cover, gb_error_t *err)
{
	for (size_t i = 0; i < r->plan->n_steps; i++) {
		const struct gb_plan_step *s = &r->plan->steps[i];
		long p = pool_index(r, s);
		bool busy = false;
		gb_err_t rc;

		if (w->n >= (size_t)r->o->max_parallel)
			return GB_E_OK;
		if (p < 0 || r->facts.pools[p].excluded || !in_group(r, (size_t)p, group) ||
		    expectation(r, (size_t)p, s) == 0)
			continue;
		for (size_t k = 0; k < w->n && !busy; k++)
			busy = same_az(r, w->v[k]->pool, (size_t)p);
		if (busy)
			continue;
		if ((rc = wave_add(r, w, (size_t)p, 0, 1, err)))
			return rc;
		w->cover[w->n - 1] = cover;
		return GB_E_OK;
	}
	return GB_E_OK;
}

static gb_err_t allocate(struct orch_run *r, int group, struct wave *w,
			 gb_error_t *err)
{
	int need = orch_unfilled(r), cover = -1;
	gb_err_t rc = GB_E_OK;

	w->n_pass1 = 0;
	for (int pass = 0; pass < 2 && need > 0 && !rc; pass++, w->n_pass1 = w->n)
	for (size_t i = 0; i < r->plan->n_steps && need > 0 && !rc; i++) {
		const struct gb_plan_step *s = &r->plan->steps[i];
		long p = pool_index(r, s);
		bool busy = false;
		int cap, e, count, hedge = 0;

		if (w->n >= (size_t)r->o->max_parallel)
			break;
		if (p < 0 || r->facts.pools[p].excluded || !in_group(r, (size_t)p, group))
			continue;
		for (size_t k = 0; k < w->n && !busy; k++)
			busy = same_az(r, w->v[k]->pool, (size_t)p);
		if (busy)
			continue;	/* one call per AZ per wave, or chunks below */
		cap = pool_cap(r, (size_t)p);
		e = expectation(r, (size_t)p, s);
		if (e == 0 && (pass == 0 || w->n_pass1 > 0))
			continue;	/* empty per memory: only when nothing else is left */
		if (e == 0) {
			count = 1;	/* a probe of one, in parallel with others */
		} else if (e < 0) {
			count = need < cap ? need : cap;
		} else if (e >= need) {
			count = need;
		} else {
			const struct gb_pool *pl = &r->facts.pools[p];

			count = e;
			/*
			 * A pool memory has never seen run dry is asked to the
			 * cap: the answer then measures it (and covers others).
			 */
			hedge = !pl->mem.known || pl->mem.est < 0 ? cap - count : r->hedge;
			if (r->hedge <= 0)
				hedge = 0;
		}
		need -= count;
		while (count > 0 && !rc && w->n < (size_t)r->o->max_parallel) {
			int c = count < cap ? count : cap;
			int h = count == c ? (hedge < cap - c ? hedge : cap - c) : 0;

			rc = wave_add(r, w, (size_t)p, c, h, err);
			count -= c;
			if (!rc && count == 0 && uncertain(r, (size_t)p, e))
				cover = (int)w->n - 1;
		}
		need += count;	/* what the parallel cap left over */
	}
	if (!rc && cover >= 0 && need <= 0 && r->hedge > 0)
		rc = add_spare(r, group, w, cover, err);
	if (!rc)
		name_hedges(r, w);
	for (size_t i = 0; i < w->n; i++) {
		if (w->v[i]->max >= 1)
			continue;
		orch_call_free(w->v[i]);	/* a spare without a name */
		w->v[i] = w->v[--w->n];
		w->hedge[i] = w->hedge[w->n];
		w->cover[i] = w->cover[w->n];
		i--;
	}
	return rc;
}

static void wave_free(struct wave *w)
{
	for (size_t i = 0; i < w->n; i++)
		orch_call_free(w->v[i]);
	w->n = 0;
}

static gb_err_t default_group(struct orch_run *r, int group, struct wave *w,
			      gb_error_t *err)
{
	int throttle_waves = 0;
	gb_err_t rc = GB_E_OK;
	char why[96];

	for (int round = 0; round < r->o->tuning.max_rounds && !rc; round++) {
		bool throttled = false;

		if (orch_unfilled(r) == 0 || orch_stopped(r) || !r->plan)
			break;
		memset(w->used, 0, (size_t)r->n * sizeof(*w->used));
		if ((rc = allocate(r, group, w, err)) || w->n == 0)
			break;
		orch_trace(r, "wave", "round=%d calls=%zu need=%d", round + 1,
			   w->n, orch_unfilled(r));
		rc = run_calls(r, w->v, w->n, err);
		for (size_t i = 0; i < w->n && !rc; i++) {
			judge_pool(r, w->v[i], false);
			throttled |= orch_call_outcome(w->v[i]) == CALL_THROTTLE;
		}
		wave_free(w);
		if (rc || r->abort_rc)
			break;
		if (throttled)
			gb_orch_sleep(r->o, backoff(throttle_waves++) / 2);
		if (orch_unfilled(r) > 0) {
			snprintf(why, sizeof(why), "wave %d left %d nodes", round + 1,
				 orch_unfilled(r));
			rc = orch_replan(r, why, err);
		}
	}
	wave_free(w);
	return rc;
}

gb_err_t orch_default(struct orch_run *r, gb_error_t *err)
{
	size_t steps = r->plan ? r->plan->n_steps : 0;
	int *groups = calloc(steps + 1, sizeof(int));
	struct wave w = { 0 };
	size_t ng;
	gb_err_t rc = GB_E_OK;

	w.v = calloc((size_t)r->o->max_parallel + 1, sizeof(*w.v));
	w.hedge = calloc((size_t)r->o->max_parallel + 1, sizeof(*w.hedge));
	w.cover = calloc((size_t)r->o->max_parallel + 1, sizeof(*w.cover));
	w.used = calloc((size_t)r->n + 1, sizeof(*w.used));
	if (!groups || !w.v || !w.hedge || !w.cover || !w.used) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	ng = plan_groups(r, groups);
	for (size_t gi = (size_t)r->cursor; gi < ng && !rc; gi++) {
		r->cursor = (int)gi;
		if ((rc = orch_check(r, "group", err)))
			break;
		rc = default_group(r, groups[gi], &w, err);
		if (!rc)
			rc = close_group(r, groups[gi], err);
		if (rc || orch_unfilled(r) == 0 || orch_stopped(r))
			break;
	}
out:
	free(groups);
	free(w.v);
	free(w.hedge);
	free(w.cover);
	free(w.used);
	return rc;
}
