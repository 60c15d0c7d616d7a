/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * facts.c - pools, the offerings preflight and capacity memory
 *
 * A pool is (region, AZ, subnet).  EC2 capacity lives per AZ and instance
 * type, so the memory and the offerings are per AZ and every subnet of an
 * AZ shares them; subnets only add addresses.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_ec2.h"
#include "gb_log.h"
#include "gb_plan.h"
#include "gb_state.h"
#include "gb_str.h"

/* Memory weaker than this (decayed instances asked) is no memory at all. */
#define MEMORY_MIN_ASKED 0.25
/* Below this decayed count a pool has never run dry. */
#define MEMORY_DRY_EPS 1e-3

void gb_plan_facts_clear(struct gb_plan_facts *f)
{
	if (!f)
		return;
	free(f->pools);
	memset(f, 0, sizeof(*f));
}

static size_t count_pools(const struct gb_candidates *cand)
{
	size_t n = 0;

	for (size_t i = 0; i < cand->n; i++) {
		const struct gb_conf_region *r = cand->v[i].region;

		for (size_t a = 0; a < r->n_azs; a++)
			n += r->azs[a].n_subnets;
	}
	return n;
}

void gb_plan_pool_estimate(const struct gb_plan_facts *f, struct gb_pool *p)
{
	struct gb_pool_memory *m = &p->mem;
	double cooldown = f->conf ? f->conf->policy.ice_cooldown : 600;

	m->recent_ice = m->last_ice_at > 0 && f->now - m->last_ice_at < cooldown;
	if (!m->known || m->asked < MEMORY_MIN_ASKED)
		m->est = -1;
	else if (m->ice < MEMORY_DRY_EPS)	/* never dry: plenty, if it gave a lot */
		m->est = m->got >= 2.0 * (f->batch_max > 0 ? f->batch_max : 4) ? HUGE_VAL : -1;
	else
		m->est = m->got / m->ice;
}

struct mem_ctx {
	struct gb_plan_facts *f;
};

static int mem_row(const struct gb_capacity *c, void *arg)
{
	struct gb_plan_facts *f = ((struct mem_ctx *)arg)->f;

	for (size_t i = 0; i < f->n_pools; i++) {
		struct gb_pool *p = &f->pools[i];

		if (strcmp(p->region, c->region) || gb_strcmp0(p->az, c->az))
			continue;
		p->mem.known = true;
		p->mem.asked = c->asked;
		p->mem.got = c->got;
		p->mem.ice = c->ice;
		p->mem.failures = c->failures;
		p->mem.last_ice_at = c->last_ice_at;
		p->mem.last_success_at = c->last_success_at;
	}
	return 0;
}

/* Offerings from the cache, when fresh. */
static void cached_offerings(struct gb_plan_facts *f, gb_state_t *st)
{
	double since = f->now - f->conf->policy.offerings_ttl;

	for (size_t i = 0; i < f->n_pools; i++) {
		struct gb_pool *p = &f->pools[i];
		bool offered;

		if (gb_state_offering_get(st, p->region, p->az, f->instance_type,
					  since, &offered, NULL) == GB_E_OK)
			p->offered = offered ? GB_OFFER_YES : GB_OFFER_NO;
	}
}

gb_err_t gb_plan_facts_build(const struct gb_conf *conf,
			     const struct gb_candidates *cand,
			     const char *instance_type, int target,
			     int job_size, enum gb_locality locality,
			     struct gb_state *st, double now,
			     struct gb_plan_facts *f, gb_error_t *err)
{
	struct mem_ctx mc = { f };
	size_t n, k = 0;
	gb_err_t rc;

	memset(f, 0, sizeof(*f));
	f->conf = conf;
	f->instance_type = instance_type;
	f->target = target;
	f->job_size = job_size > 0 ? job_size : 1;
	f->locality = locality;
	f->cand = cand;
	f->now = now;
	f->batch_max = conf->policy.batch_max;
	f->hedge = 1;
	n = count_pools(cand);
	if (n && !(f->pools = calloc(n, sizeof(*f->pools))))
		return gb_errorf(err, GB_E_NOMEM, "facts: out of memory");
	for (size_t i = 0; i < cand->n; i++) {
		const struct gb_conf_region *r = cand->v[i].region;

		for (size_t a = 0; a < r->n_azs; a++) {
			for (size_t s = 0; s < r->azs[a].n_subnets; s++) {
				struct gb_pool *p = &f->pools[k++];

				p->region = r->name;
				p->az = r->azs[a].name;
				p->subnet = r->azs[a].subnets[s];
				p->rank = (int)i;
				p->az_index = (int)a;
				p->subnet_index = (int)s;
				p->distance_km = cand->v[i].distance_km;
				p->mem.est = -1;
			}
		}
	}
	f->n_pools = k;
	if (st) {
		cached_offerings(f, st);
		rc = gb_state_capacity_list(st, instance_type, now,
					    conf->policy.capacity_half_life,
					    mem_row, &mc, err);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < f->n_pools; i++)
		gb_plan_pool_estimate(f, &f->pools[i]);
	return GB_E_OK;
}

/*****************************************************************************
 *  Preflight
 *****************************************************************************/

static bool region_cached(const struct gb_plan_facts *f, const char *region)
{
	bool any = false;

	for (size_t i = 0; i < f->n_pools; i++) {
		if (strcmp(f->pools[i].region, region))
			continue;
		any = true;
		if (f->pools[i].offered == GB_OFFER_UNKNOWN)
			return false;
	}
	return any;
}

static bool offered_in(const struct gb_ec2_offering_list *l, const char *type,
		       const char *az)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].location && strcmp(l->v[i].location, az) == 0 &&
		    (!l->v[i].instance_type || strcmp(l->v[i].instance_type, type) == 0))
			return true;
	return false;
}

/* Store what the cloud said, one row per configured AZ and one per region. */
void gb_plan_offerings_apply(struct gb_plan_facts *f, const char *region,
			     const struct gb_ec2_offering_list *l,
			     struct gb_state *st)
{
	bool any = false;
	const char *last_az = NULL;
	gb_error_t e;

	for (size_t i = 0; i < f->n_pools; i++) {
		struct gb_pool *p = &f->pools[i];
		bool yes;

		if (strcmp(p->region, region))
			continue;
		yes = offered_in(l, f->instance_type, p->az);
		p->offered = yes ? GB_OFFER_YES : GB_OFFER_NO;
		any |= yes;
		if (st && gb_strcmp0(last_az, p->az) &&
		    gb_state_offering_put(st, region, p->az, f->instance_type,
					  yes, f->now, &e))
			gb_log_warn("offerings_cache_failed region=%s az=%s error=%s",
				    region, p->az, e.text);
		last_az = p->az;
	}
	if (st && gb_state_offering_put(st, region, NULL, f->instance_type, any,
					f->now, &e))
		gb_log_warn("offerings_cache_failed region=%s error=%s", region,
			    e.text);
}

gb_err_t gb_plan_preflight(struct gb_plan_facts *f, const char *region,
			   struct gb_state *st, struct gb_ec2 *ec2,
			   int *calls, gb_error_t *err)
{
	const char *types[] = { f->instance_type };
	struct gb_ec2_filter filt = { "instance-type", types, 1 };
	struct gb_ec2_offerings_params op = { "availability-zone", &filt, 1, 0 };
	struct gb_ec2_offering_list *l = NULL;
	struct gb_ec2_error ae = { 0 };
	gb_err_t rc;

	if (region_cached(f, region))
		return GB_E_OK;
	if (!ec2)
		return gb_errorf(err, GB_E_INVALID, "preflight %s: no EC2 client", region);
	rc = gb_ec2_describe_instance_type_offerings(ec2, &op, &l, &ae, err);
	if (calls)
		*calls += ae.attempts > 0 ? ae.attempts : 1;
	if (rc)
		return rc;
	gb_plan_offerings_apply(f, region, l, st);
	gb_ec2_offering_list_free(l);
	return GB_E_OK;
}

/*****************************************************************************
 *  The capacity summary (for the LLM planner's prompt)
 *****************************************************************************/

/* Pools of one AZ share their memory: keep the first subnet's only. */
static bool first_of_az(const struct gb_plan_facts *f, size_t i)
{
	return i == 0 || strcmp(f->pools[i - 1].az, f->pools[i].az) != 0 ||
	       strcmp(f->pools[i - 1].region, f->pools[i].region) != 0;
}

/* Informative = much asked recently; dry and fresh facts matter most. */
static double informative(const struct gb_pool *p)
{
	if (p->offered == GB_OFFER_NO)
		return 0.5;
	if (!p->mem.known)
		return 0;
	return 1 + p->mem.asked + (p->mem.recent_ice ? 2 : 0);
}

static void age(double now, double t, char *buf, size_t n)
{
	double d = now - t;

	if (t <= 0)
		snprintf(buf, n, "never");
	else if (d < 120)
		snprintf(buf, n, "%.0fs", d < 0 ? 0 : d);
	else if (d < 7200)
		snprintf(buf, n, "%.0fm", d / 60);
	else
		snprintf(buf, n, "%.0fh", d / 3600);
}

static void item(const struct gb_plan_facts *f, const struct gb_pool *p,
		 char *buf, size_t n)
{
	char a1[16], est[16];

	if (p->offered == GB_OFFER_NO) {
		snprintf(buf, n, "%s not-offered;", p->az);
		return;
	}
	if (p->mem.est < 0)
		snprintf(est, sizeof(est), "?");
	else if (isinf(p->mem.est))
		snprintf(est, sizeof(est), "plenty");
	else
		snprintf(est, sizeof(est), "%.0f", floor(p->mem.est + 0.25));
	age(f->now, p->mem.last_ice_at, a1, sizeof(a1));
	snprintf(buf, n, "%s got %.1f/%.1f dry %.1f est %s last-dry %s%s;",
		 p->az, p->mem.got, p->mem.asked, p->mem.ice, est, a1,
		 p->mem.recent_ice ? " cooling" : "");
}

size_t gb_plan_capacity_summary(const struct gb_plan_facts *f, char *buf,
				size_t n)
{
	size_t *idx, k = 0, len;
	int w;

	if (!buf || n == 0)
		return 0;
	if (n > GB_PLAN_SUMMARY_MAX + 1)
		n = GB_PLAN_SUMMARY_MAX + 1;
	w = snprintf(buf, n, "memory %s:", f->instance_type);
	len = w < 0 ? 0 : (size_t)w >= n ? n - 1 : (size_t)w;
	idx = calloc(f->n_pools ? f->n_pools : 1, sizeof(*idx));
	if (!idx)
		return len;
	for (size_t i = 0; i < f->n_pools; i++)
		if (first_of_az(f, i) && informative(&f->pools[i]) > 0)
			idx[k++] = i;
	/* insertion sort by informativeness, most first (few pools) */
	for (size_t i = 1; i < k; i++)
		for (size_t j = i; j > 0 &&
		     informative(&f->pools[idx[j - 1]]) < informative(&f->pools[idx[j]]); j--) {
			size_t t = idx[j];

			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	for (size_t i = 0; i < k; i++) {
		char one[160];
		size_t l;

		item(f, &f->pools[idx[i]], one, sizeof(one));
		l = strlen(one);
		if (len + 1 + l >= n)
			break;
		buf[len++] = ' ';
		memcpy(buf + len, one, l + 1);
		len += l;
	}
	if (k == 0 && len + 10 < n) {
		memcpy(buf + len, " (empty)", 9);
		len += 8;
	}
	free(idx);
	return len;
}
