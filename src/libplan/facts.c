/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * facts.c - pools, the offerings preflight and capacity memory
 *
 * A pool is (region, type, AZ, subnet).  EC2 capacity lives per AZ and
 * instance type, so the memory and the offerings are per (AZ, type) and
 * every subnet of an AZ shares them; subnets only add addresses.
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
/*
 * Schema-2 memory (levels, lower bounds) and quota memory weaker than this
 * (decayed observations) is forgotten: two half-lives after one visit.
 */
#define MEMORY_MIN_VISITS 0.25

void gb_plan_facts_clear(struct gb_plan_facts *f)
{
	if (!f)
		return;
	free(f->pools);
	memset(f, 0, sizeof(*f));
}

/* The estimate of the asked/got/ice counters (before schema 2). */
static double counter_estimate(const struct gb_plan_facts *f,
			       const struct gb_pool_memory *m)
{
	if (!m->known || m->asked < MEMORY_MIN_ASKED)
		return -1;
	if (m->ice < MEMORY_DRY_EPS)	/* never dry: plenty, if it gave a lot */
		return m->got >= 2.0 * (f->batch_max > 0 ? f->batch_max : 4) ?
		       HUGE_VAL : -1;
	return m->got / m->ice;
}

/*
 * From levels and lower bounds (libstate keeps them consistent: newer
 * evidence drops what it contradicts, so bounds never exceed the levels):
 * the decayed mean of the levels measured when the pool ran dry; for a
 * pool never seen dry, the mean lower bound, and plenty when that is
 * 2 x batch_max or more.
 */
static double bounds_estimate(const struct gb_plan_facts *f,
			      struct gb_pool_memory *m)
{
	double lv;
	int bmax = f->batch_max > 0 ? f->batch_max : 4;

	m->floor = m->floor_n > MEMORY_DRY_EPS ? m->floor_sum / m->floor_n : -1;
	m->measured = m->level_n > MEMORY_DRY_EPS;
	if (m->level_n == 0 && m->floor_n == 0)
		return counter_estimate(f, m);	/* written before schema 2 */
	if (m->level_n + m->floor_n < MEMORY_MIN_VISITS)
		return -1;	/* faded */
	if (!m->measured)
		return m->floor >= 2.0 * bmax ? HUGE_VAL : m->floor;
	lv = m->level_sum / m->level_n;
	return m->floor > lv ? m->floor : lv;
}

void gb_plan_pool_estimate(const struct gb_plan_facts *f, struct gb_pool *p)
{
	struct gb_pool_memory *m = &p->mem;
	double cooldown = f->conf ? f->conf->policy.ice_cooldown : 600;

	m->recent_ice = m->last_ice_at > 0 && f->now - m->last_ice_at < cooldown;
	m->walled = false;
	if (p->reserved >= 0) {
		/* EC2 said what the reservation holds: no guess beats it */
		m->recent_ice = false;
		m->counter_est = m->est = p->reserved;
		m->measured = true;
		return;
	}
	m->counter_est = counter_estimate(f, m);
	if (!f->bounds) {
		m->est = m->counter_est;
		return;
	}
	m->est = bounds_estimate(f, m);
	if (m->quota_room < 1) {
		m->walled = true;	/* the region's quota has no room left */
		m->est = 0;
	} else if (m->est >= 0 && m->est > m->quota_room) {
		m->est = floor(m->quota_room);
	}
}

struct mem_ctx {
	struct gb_plan_facts *f;
};

static void mem_fill(struct gb_pool_memory *m, const struct gb_capacity *c)
{
	m->known = true;
	m->asked = c->asked;
	m->got = c->got;
	m->ice = c->ice;
	m->failures = c->failures;
	m->last_ice_at = c->last_ice_at;
	m->last_success_at = c->last_success_at;
	m->level_sum = c->level_sum;
	m->level_n = c->level_n;
	m->floor_sum = c->floor_sum;
	m->floor_n = c->floor_n;
}

static int mem_row(const struct gb_capacity *c, void *arg)
{
	struct gb_plan_facts *f = ((struct mem_ctx *)arg)->f;

	for (size_t i = 0; i < f->n_pools; i++) {
		struct gb_pool *p = &f->pools[i];

		if (strcmp(p->region, c->region) || gb_strcmp0(p->az, c->az) ||
		    gb_strcmp0(p->type, c->instance_type) ||
		    strcmp(gb_conf_capacity_name(p->capacity),
			   c->capacity ? c->capacity : "on-demand"))
			continue;
		mem_fill(&p->mem, c);
	}
	return 0;
}

void gb_plan_memory_of(const struct gb_conf *conf, const struct gb_capacity *c,
		       double now, bool bounds, double quota_room,
		       struct gb_pool_memory *m)
{
	struct gb_plan_facts f = { 0 };
	struct gb_pool p = { 0 };

	f.conf = conf;
	f.now = now;
	f.batch_max = conf ? conf->policy.batch_max : 4;
	f.bounds = bounds;
	p.mem.est = -1;
	p.mem.floor = -1;
	p.reserved = -1;
	mem_fill(&p.mem, c);
	p.mem.quota_room = quota_room;
	gb_plan_pool_estimate(&f, &p);
	*m = p.mem;
}

/* Offerings from the cache, when fresh, for the pools not known yet. */
void gb_plan_offerings_cached(struct gb_plan_facts *f, gb_state_t *st)
{
	double since = f->now - f->conf->policy.offerings_ttl;

	for (size_t i = 0; i < f->n_pools; i++) {
		struct gb_pool *p = &f->pools[i];
		bool offered;

		if (p->offered == GB_OFFER_UNKNOWN &&
		    gb_state_offering_get(st, p->region, p->az, p->type,
					  since, &offered, NULL) == GB_E_OK)
			p->offered = offered ? GB_OFFER_YES : GB_OFFER_NO;
	}
}

/* The pools being built, and what they point into. */
struct pools_in {
	struct gb_plan_facts *f;
	size_t cap;
	const struct gb_plan_ladder *ladder;
	gb_error_t *err;
};

static const struct gb_conf_rung on_demand_rung = { .kind = GB_CAPACITY_ON_DEMAND };

/* RET a new pool at the end of f->pools (zeroed but for the defaults), or NULL. */
static struct gb_pool *pool_new(struct pools_in *in)
{
	struct gb_plan_facts *f = in->f;
	struct gb_pool *p;

	if (f->n_pools == in->cap) {
		size_t cap = in->cap ? 2 * in->cap : 64;
		struct gb_pool *v = realloc(f->pools, cap * sizeof(*v));

		if (!v)
			return NULL;
		f->pools = v;
		in->cap = cap;
	}
	p = &f->pools[f->n_pools++];
	memset(p, 0, sizeof(*p));
	p->mem.est = -1;
	p->mem.floor = -1;
	p->mem.quota_room = HUGE_VAL;
	p->reserved = -1;
	return p;
}

/*
 * The pools of candidate [i], rung [k], type [t] in AZ [a] (every AZ when
 * a < 0), one per subnet; [rv] the reservation or block they launch into,
 * or NULL.  RET GB_E_OK or GB_E_NOMEM.
 */
static gb_err_t add_pools(struct pools_in *in, size_t i, size_t k, size_t t,
			  long a, const char *target, int reserved,
			  const struct gb_plan_resv *rv)
{
	struct gb_plan_facts *f = in->f;
	const struct gb_conf_region *r = f->cand->v[i].region;

	for (size_t z = 0; z < r->n_azs; z++) {
		if (a >= 0 && z != (size_t)a)
			continue;
		for (size_t s = 0; s < r->azs[z].n_subnets; s++) {
			struct gb_pool *p = pool_new(in);

			if (!p)
				return gb_errorf(in->err, GB_E_NOMEM, "facts: out of memory");
			p->region = r->name;
			p->az = r->azs[z].name;
			p->subnet = r->azs[z].subnets[s];
			p->type = f->types[t];
			p->type_index = (int)t;
			p->rank = (int)i;
			p->az_index = (int)z;
			p->subnet_index = (int)s;
			p->distance_km = f->cand->v[i].distance_km;
			p->rung = (int)k;
			p->capacity = f->rungs[k].kind;
			p->max_price = f->rungs[k].max_price;
			p->usd_per_hour = gb_conf_price(f->conf, r->name, p->type,
							p->capacity, NULL);
			p->target = target;
			p->reserved = reserved;
			if (rv && rv->kind == GB_CAPACITY_BLOCK) {
				p->opens_at = rv->start;
				p->ends_at = rv->end;
			}
		}
	}
	return GB_E_OK;
}

static long type_index(const struct gb_plan_facts *f, const char *type)
{
	for (size_t t = 0; type && t < f->n_types; t++)
		if (strcmp(f->types[t], type) == 0)
			return (long)t;
	return -1;
}

static long az_index(const struct gb_conf_region *r, const char *az)
{
	for (size_t z = 0; az && z < r->n_azs; z++)
		if (strcmp(r->azs[z].name, az) == 0)
			return (long)z;
	return -1;
}

static bool listed(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/*
 * Why reservation [rv] can give nothing now ("" when it can): not active,
 * nothing left, a block that ends within the margin or opens too late.
 */
static void resv_why(const struct pools_in *in, const struct gb_plan_resv *rv,
		     char *why, size_t n)
{
	const struct gb_plan_facts *f = in->f;
	const struct gb_conf_policy *pol = &f->conf->policy;
	bool block = rv->kind == GB_CAPACITY_BLOCK;

	why[0] = '\0';
	if (block && rv->end > 0 && f->now >= rv->end - pol->capacity_block_margin)
		snprintf(why, n, "%s ends within the margin", rv->id);
	else if (block && rv->start > f->now &&
		 (!in->ladder->wait || rv->start - f->now > pol->capacity_block_wait))
		snprintf(why, n, "%s opens in %.0f s", rv->id, rv->start - f->now);
	else if (block && strcmp(rv->state, "scheduled") == 0 && rv->start > f->now)
		;	/* opens soon: the engine waits for it */
	else if (strcmp(rv->state, "active") != 0)
		snprintf(why, n, "%s is %s", rv->id, rv->state);
	else if (rv->available <= 0 && !(block && rv->start > f->now))
		snprintf(why, n, "%s has none available", rv->id);
}

/* Exclude the pools [from..] with [why] (nothing when empty). */
static void exclude_from(struct gb_plan_facts *f, size_t from, const char *why)
{
	for (size_t j = from; why[0] && j < f->n_pools; j++) {
		f->pools[j].excluded = true;
		gb_strlcpy(f->pools[j].why, why, sizeof(f->pools[j].why));
	}
}

/* A reservations or capacity_blocks rung's pools of candidate [i]: one per named reservation. */
static gb_err_t reserved_pools(struct pools_in *in, size_t i, size_t k)
{
	struct gb_plan_facts *f = in->f;
	const struct gb_conf_rung *rg = &f->rungs[k];
	const struct gb_conf_region *r = f->cand->v[i].region;
	char why[64];
	gb_err_t rc;

	for (size_t j = 0; j < f->n_resv; j++) {
		const struct gb_plan_resv *rv = &f->resv[j];
		long t = type_index(f, rv->type), z = az_index(r, rv->az);
		size_t from = f->n_pools;
		int avail;

		if (strcmp(rv->region, r->name) || rv->kind != rg->kind || t < 0 || z < 0)
			continue;
		if (rg->n_ids ? !listed(rg->ids, rg->n_ids, rv->id) :
		    rg->kind != GB_CAPACITY_BLOCK)
			continue;	/* not one the rung names */
		/* a block not open yet holds what was bought when it opens */
		avail = rv->kind == GB_CAPACITY_BLOCK && rv->start > f->now ? rv->total :
			rv->available;
		rc = add_pools(in, i, k, (size_t)t, z, rv->id, avail > 0 ? avail : 0, rv);
		if (rc)
			return rc;
		resv_why(in, rv, why, sizeof(why));
		exclude_from(f, from, why);
	}
	return GB_E_OK;
}

/* Open reservations of candidate [i]: per (type, AZ), their available counts summed. */
static gb_err_t open_pools(struct pools_in *in, size_t i, size_t k)
{
	struct gb_plan_facts *f = in->f;
	const struct gb_conf_region *r = f->cand->v[i].region;
	char why[64];
	gb_err_t rc;

	for (size_t t = 0; t < f->n_types; t++) {
		for (size_t z = 0; z < r->n_azs; z++) {
			int avail = 0;
			bool any = false;

			for (size_t j = 0; j < f->n_resv; j++) {
				const struct gb_plan_resv *rv = &f->resv[j];

				if (rv->kind != GB_CAPACITY_RESERVATION || !rv->open ||
				    strcmp(rv->region, r->name) || strcmp(rv->type, f->types[t]) ||
				    strcmp(rv->az, r->azs[z].name))
					continue;
				resv_why(in, rv, why, sizeof(why));
				any = true;
				avail += why[0] ? 0 : rv->available;
			}
			if (!any)
				continue;
			if ((rc = add_pools(in, i, k, t, (long)z, NULL, avail, NULL)))
				return rc;
			if (avail == 0)
				exclude_from(f, f->n_pools - r->azs[z].n_subnets,
					     "open reservations have none available");
		}
	}
	return GB_E_OK;
}

/* Resource groups of candidate [i]'s region: what they hold is not listed. */
static gb_err_t group_pools(struct pools_in *in, size_t i, size_t k)
{
	struct gb_plan_facts *f = in->f;
	const struct gb_conf_rung *rg = &f->rungs[k];
	const char *region = f->cand->v[i].region->name;
	size_t rl = strlen(region);
	gb_err_t rc;

	for (size_t g = 0; g < rg->n_resource_groups; g++) {
		/* arn:PARTITION:resource-groups:REGION:ACCOUNT:group/NAME */
		const char *a = strstr(rg->resource_groups[g], ":resource-groups:");

		if (!a || strncmp(a + 17, region, rl) || a[17 + rl] != ':')
			continue;
		for (size_t t = 0; t < f->n_types; t++)
			if ((rc = add_pools(in, i, k, t, -1, rg->resource_groups[g], -1, NULL)))
				return rc;
	}
	return GB_E_OK;
}

static gb_err_t rung_pools(struct pools_in *in, size_t i, size_t k)
{
	struct gb_plan_facts *f = in->f;
	const struct gb_conf_rung *rg = &f->rungs[k];
	gb_err_t rc = GB_E_OK;

	switch (rg->kind) {
	case GB_CAPACITY_ON_DEMAND:
	case GB_CAPACITY_SPOT:
		for (size_t t = 0; t < f->n_types && !rc; t++)
			rc = add_pools(in, i, k, t, -1, NULL, -1, NULL);
		return rc;
	case GB_CAPACITY_RESERVATION:
		if (rg->n_ids && (rc = reserved_pools(in, i, k)))
			return rc;
		if (rg->open && (rc = open_pools(in, i, k)))
			return rc;
		return group_pools(in, i, k);
	case GB_CAPACITY_BLOCK:
		return reserved_pools(in, i, k);
	}
	return GB_E_OK;
}

gb_err_t gb_plan_facts_build_ladder(const struct gb_conf *conf,
				    const struct gb_candidates *cand,
				    const char *const *types, size_t n_types,
				    const struct gb_plan_ladder *ladder,
				    int target, int job_size,
				    enum gb_locality locality,
				    struct gb_state *st, double now,
				    struct gb_plan_facts *f, gb_error_t *err)
{
	static const struct gb_plan_ladder none = { 0 };
	struct pools_in in = { f, 0, ladder ? ladder : &none, err };
	struct mem_ctx mc = { f };
	gb_err_t rc;

	memset(f, 0, sizeof(*f));
	if (!types || n_types == 0 || !types[0])
		return gb_errorf(err, GB_E_INVALID, "facts: no instance type");
	f->conf = conf;
	f->instance_type = types[0];
	f->types = types;
	f->n_types = n_types;
	f->target = target;
	f->job_size = job_size > 0 ? job_size : 1;
	f->locality = locality;
	f->cand = cand;
	f->now = now;
	f->batch_max = conf->policy.batch_max;
	f->hedge = 1;
	f->rungs = in.ladder->n_rungs ? in.ladder->rungs : &on_demand_rung;
	f->n_rungs = in.ladder->n_rungs ? in.ladder->n_rungs : 1;
	f->resv = in.ladder->resv;
	f->n_resv = in.ladder->n_resv;
	for (size_t i = 0; i < cand->n; i++)
		for (size_t k = 0; k < f->n_rungs; k++)
			if ((rc = rung_pools(&in, i, k)))
				return rc;
	if (st) {
		gb_plan_offerings_cached(f, st);
		for (size_t t = 0; t < n_types; t++) {
			rc = gb_state_capacity_list(st, types[t], now,
						    conf->policy.capacity_half_life,
						    mem_row, &mc, err);
			if (rc)
				return rc;
		}
	}
	for (size_t i = 0; i < f->n_pools; i++)
		gb_plan_pool_estimate(f, &f->pools[i]);
	return GB_E_OK;
}

gb_err_t gb_plan_facts_build_types(const struct gb_conf *conf,
				   const struct gb_candidates *cand,
				   const char *const *types, size_t n_types,
				   int target, int job_size,
				   enum gb_locality locality,
				   struct gb_state *st, double now,
				   struct gb_plan_facts *f, gb_error_t *err)
{
	return gb_plan_facts_build_ladder(conf, cand, types, n_types, NULL, target,
					  job_size, locality, st, now, f, err);
}

gb_err_t gb_plan_facts_build(const struct gb_conf *conf,
			     const struct gb_candidates *cand,
			     const char *instance_type, int target,
			     int job_size, enum gb_locality locality,
			     struct gb_state *st, double now,
			     struct gb_plan_facts *f, gb_error_t *err)
{
	gb_err_t rc;

	/*
	 * f->types must outlive this call: point it at f->instance_type,
	 * which holds the caller's (BORROWED) string.
	 */
	rc = gb_plan_facts_build_types(conf, cand, &instance_type, 1, target,
				       job_size, locality, st, now, f, err);
	if (rc == GB_E_OK)
		f->types = &f->instance_type;
	return rc;
}

/*****************************************************************************
 *  Quota memory
 *****************************************************************************/

int gb_plan_quota_key(const struct gb_conf *conf, const char *type, bool spot,
		      const char *code, char *buf, size_t n)
{
	const struct gb_instance_type *it = type ? gb_conf_instance_type(conf, type) : NULL;
	char bucket = type && *type ? type[0] : '?';
	enum gb_ec2_class cls;

	if (code && strcmp(code, GB_EC2_CODE_VCPU_LIMIT) == 0) {
		/* EC2's vCPU quotas count per family bucket: G and VT share one */
		if (bucket == 'g' || bucket == 'v')
			bucket = 'G';
		else if (bucket >= 'a' && bucket <= 'z')
			bucket = (char)(bucket - 'a' + 'A');
		snprintf(buf, n, "vcpus:%c%s", bucket, spot ? ":spot" : "");
		return it && it->vcpus > 0 ? it->vcpus : 4;
	}
	if (code && strcmp(code, "InstanceLimitExceeded") == 0)
		snprintf(buf, n, "instances");
	else if (code && gb_ec2_code_class(code, &cls) && cls == GB_EC2_CLASS_REGION)
		snprintf(buf, n, "%s", GB_PLAN_QUOTA_ACCOUNT);
	else
		snprintf(buf, n, "%s:%s", code ? code : "quota", type ? type : "?");
	return 1;
}

struct held_ctx {
	const struct gb_conf *conf;
	const char *quota;
	bool spot;
	double units;
};

/* What one live instance holds of the quota being counted. */
static int held_row(const struct gb_instance *in, void *arg)
{
	struct held_ctx *h = arg;
	const char *code = gb_str_has_prefix(h->quota, "vcpus:") ? GB_EC2_CODE_VCPU_LIMIT :
			   strcmp(h->quota, "instances") == 0 ? "InstanceLimitExceeded" :
			   NULL;
	char key[64];
	int u;

	if (!in->instance_type || strcmp(h->quota, GB_PLAN_QUOTA_ACCOUNT) == 0)
		return 0;	/* an account wall: no instance holds any of it */
	if (!code) {
		/* "<code>:<type>": instances of that type */
		const char *colon = strrchr(h->quota, ':');

		h->units += colon && strcmp(colon + 1, in->instance_type) == 0;
		return 0;
	}
	u = gb_plan_quota_key(h->conf, in->instance_type, h->spot, code, key, sizeof(key));
	if (strcmp(key, h->quota) == 0)
		h->units += u;
	return 0;
}

gb_err_t gb_plan_quota_held(const struct gb_conf *conf, struct gb_state *st,
			    const char *region, const char *quota, bool spot,
			    double *held, gb_error_t *err)
{
	struct gb_instance_filter flt = GB_INSTANCE_FILTER_ANY;
	struct held_ctx h = { conf, quota, spot, 0 };
	gb_err_t rc;

	*held = 0;
	if (!st)
		return GB_E_OK;
	flt.region = region;
	flt.alive = true;
	rc = gb_state_instance_list(st, &flt, held_row, &h, err);
	*held = h.units;
	return rc;
}

struct quota_ctx {
	struct gb_plan_facts *f;
	struct gb_state *st;
	gb_err_t rc;
	gb_error_t *err;
};

/* Is [q] remembered and a quota of [type]?  OUT *units one instance counts. */
static bool quota_bounds(const struct gb_conf *conf, const struct gb_quota *q,
			 const char *type, bool spot, int *units)
{
	char key[64];

	*units = gb_plan_quota_key(conf, type, spot, q->code, key, sizeof(key));
	return q->limit_n >= MEMORY_MIN_VISITS && strcmp(key, q->quota) == 0;
}

/* Instances of [units] each that the limit leaves beside [held]. */
static double room_of(const struct gb_quota *q, double held, int units)
{
	return floor((q->limit_sum / q->limit_n - held) / units + 1e-9);
}

gb_err_t gb_plan_quota_view(const struct gb_conf *conf, struct gb_state *st,
			    const struct gb_quota *q, double now, double half_life,
			    struct gb_plan_quota_view *v, gb_error_t *err)
{
	memset(v, 0, sizeof(*v));
	v->heeded = q->limit_n >= MEMORY_MIN_VISITS;
	v->limit = q->limit_n > 0 ? q->limit_sum / q->limit_n : 0;
	/* limit_n(t) = limit_n(now) * 2^(-(t - now) / half_life) */
	if (v->heeded)
		v->forget_at = now + half_life * log2(q->limit_n / MEMORY_MIN_VISITS);
	return gb_plan_quota_held(conf, st, q->region, q->quota,
				  strstr(q->quota, ":spot") != NULL, &v->held, err);
}

double gb_plan_quota_room(const struct gb_conf *conf, const struct gb_quota *q,
			  const struct gb_plan_quota_view *v, const char *type,
			  bool spot)
{
	double room;
	int units;

	if (!v->heeded || !quota_bounds(conf, q, type, spot, &units))
		return HUGE_VAL;
	room = room_of(q, v->held, units);
	return room < 0 ? 0 : room;
}

static int quota_row(const struct gb_quota *q, void *arg)
{
	struct quota_ctx *c = arg;
	struct gb_plan_facts *f = c->f;
	double room, held = 0;
	bool have_held = false;
	int units;

	/* per pool: a vCPU quota counts each type in its own vCPUs */
	for (size_t i = 0; i < f->n_pools; i++) {
		struct gb_pool *p = &f->pools[i];
		bool spot = p->capacity == GB_CAPACITY_SPOT;

		if (p->capacity == GB_CAPACITY_BLOCK || strcmp(p->region, q->region) ||
		    !quota_bounds(f->conf, q, p->type, spot, &units))
			continue;	/* forgotten, or another type's or market's quota */
		if (!have_held &&
		    (c->rc = gb_plan_quota_held(f->conf, c->st, q->region, q->quota,
						spot, &held, c->err)))
			return 1;
		have_held = true;
		room = room_of(q, held, units);
		if (room >= p->mem.quota_room)
			continue;
		p->mem.quota_room = room < 0 ? 0 : room;
		gb_strlcpy(p->mem.quota_code, q->code, sizeof(p->mem.quota_code));
	}
	return 0;
}

gb_err_t gb_plan_quota_rooms(struct gb_plan_facts *f, struct gb_state *st,
			     gb_error_t *err)
{
	struct quota_ctx c = { f, st, GB_E_OK, err };
	double hl = f->conf ? f->conf->policy.capacity_half_life : 3600;
	gb_err_t rc;

	for (size_t i = 0; i < f->n_pools; i++) {
		f->pools[i].mem.quota_room = HUGE_VAL;
		f->pools[i].mem.quota_code[0] = '\0';
	}
	if (!st)
		return GB_E_OK;
	rc = gb_state_quota_list(st, f->now, hl > 0 ? hl : 3600, quota_row, &c,
				 err);
	return rc ? rc : c.rc;
}

/*****************************************************************************
 *  Preflight
 *****************************************************************************/

static bool offered_in(const struct gb_ec2_offering_list *l, const char *type,
		       const char *az)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].location && strcmp(l->v[i].location, az) == 0 &&
		    (!l->v[i].instance_type || strcmp(l->v[i].instance_type, type) == 0))
			return true;
	return false;
}

/*
 * Store what the cloud said: one row per configured (AZ, type) and one per
 * (region, type).
 */
void gb_plan_offerings_apply(struct gb_plan_facts *f, const char *region,
			     const struct gb_ec2_offering_list *l,
			     struct gb_state *st)
{
	const char *last_az = NULL, *last_type = NULL;
	gb_error_t e;

	for (size_t t = 0; t < f->n_types; t++) {
		bool any = false;

		for (size_t i = 0; i < f->n_pools; i++) {
			struct gb_pool *p = &f->pools[i];
			bool yes;

			if (strcmp(p->region, region) || p->type_index != (int)t)
				continue;
			yes = offered_in(l, p->type, p->az);
			p->offered = yes ? GB_OFFER_YES : GB_OFFER_NO;
			any |= yes;
			if (st && (gb_strcmp0(last_az, p->az) || last_type != p->type) &&
			    gb_state_offering_put(st, region, p->az, p->type, yes, f->now, &e))
				gb_log_warn("offerings_cache_failed region=%s az=%s type=%s error=%s",
					    region, p->az, p->type, GB_LOG_Q(e.text));
			last_az = p->az;
			last_type = p->type;
		}
		if (st && gb_state_offering_put(st, region, NULL, f->types[t], any,
						f->now, &e))
			gb_log_warn("offerings_cache_failed region=%s type=%s error=%s",
				    region, f->types[t], GB_LOG_Q(e.text));
	}
}

/*****************************************************************************
 *  The capacity summary (for the LLM planner's prompt)
 *****************************************************************************/

/* Pools of one (AZ, type) share their memory: keep the first subnet's only. */
static bool first_of_az(const struct gb_plan_facts *f, size_t i)
{
	return i == 0 || strcmp(f->pools[i - 1].az, f->pools[i].az) != 0 ||
	       strcmp(f->pools[i - 1].region, f->pools[i].region) != 0 ||
	       f->pools[i - 1].type_index != f->pools[i].type_index;
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
	char a1[16], est[16], where[96];

	/* one type: the AZ alone, as before several types */
	snprintf(where, sizeof(where), "%s%s%s", p->az, f->n_types > 1 ? "/" : "",
		 f->n_types > 1 ? p->type : "");
	if (p->offered == GB_OFFER_NO) {
		snprintf(buf, n, "%s not-offered;", where);
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
		 where, p->mem.got, p->mem.asked, p->mem.ice, est, a1,
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
