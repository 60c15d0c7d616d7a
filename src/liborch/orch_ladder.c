/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_ladder.c - the capacity ladder: reservations and blocks known, blocks
 * waited for, reservations counted down
 *
 * A nodeset's capacity: rungs are climbed in order (libplan makes a pool
 * of each rung in each candidate region and the heuristic planner orders
 * them rung by rung).  What the reservation and capacity_blocks rungs can
 * use is what DescribeCapacityReservations lists in the candidate regions:
 * read once per region within policy.reservation_ttl (the state file
 * caches it, so that a burst of requests asks once), counted down as
 * launches take from it, so that an exhausted reservation costs no call.
 * A Capacity Block that opens within policy.capacity_block_wait is waited
 * for (doc/orchestrator.md, "The capacity ladder").
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "orch_int.h"

/* Does a rung of the ladder draw on listed reservations or blocks? */
static bool needs_listing(const struct orch_run *r)
{
	for (size_t k = 0; k < r->ladder.n_rungs; k++) {
		const struct gb_conf_rung *rg = &r->ladder.rungs[k];

		if (rg->kind == GB_CAPACITY_BLOCK ||
		    (rg->kind == GB_CAPACITY_RESERVATION && (rg->n_ids || rg->open)))
			return true;
	}
	return false;
}

static bool fresh(const struct orch_run *r, const char *region, double now)
{
	double at = 0;

	return gb_state_reservations_fetched(r->st, region, &at, NULL) == GB_E_OK &&
	       at >= now - r->conf->policy.reservation_ttl && at <= now;
}

/* EC2's answer for [region] into the cache. */
static gb_err_t cache_answer(struct orch_run *r, const char *region,
			     const struct gb_ec2_capacity_reservation_list *l,
			     double now, gb_error_t *err)
{
	struct gb_reservation *v = calloc(l->n + 1, sizeof(*v));
	size_t n = 0;
	gb_err_t rc;

	if (!v)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (size_t i = 0; i < l->n; i++) {
		const struct gb_ec2_capacity_reservation *c = &l->v[i];

		if (!c->id || !c->instance_type || !c->availability_zone || !c->state)
			continue;	/* the parser names what it needs: not here */
		v[n++] = (struct gb_reservation){
			.region = region,
			.id = c->id,
			.instance_type = c->instance_type,
			.az = c->availability_zone,
			.kind = gb_strcmp0(c->reservation_type, "capacity-block") == 0 ?
				"capacity-block" : "reservation",
			.state = c->state,
			.match = gb_strcmp0(c->match_criteria, "targeted") == 0 ?
				 "targeted" : "open",
			.total = c->total > 0 ? c->total : 0,
			.available = c->available > 0 ? c->available : 0,
			.start_at = c->start_date,
			.end_at = c->end_date,
			.fetched_at = now,
		};
	}
	rc = gb_state_reservations_replace(r->st, region, v, n, now, err);
	free(v);
	return rc;
}

static bool stale(const struct orch_run *r, const char *region)
{
	return !fresh(r, region, orch_wall(r->o));
}

/* Ask EC2 for the reservations of the candidate regions not cached. */
static gb_err_t describe_stale(struct orch_run *r, double now, gb_error_t *err)
{
	struct orch_job *jobs = NULL;
	size_t n = 0;
	gb_err_t rc;

	rc = orch_region_jobs(r, ORCH_JOB_RESERVATIONS, stale, &jobs, &n, err);
	for (size_t i = 0; i < n; i++) {
		struct orch_job *j = &jobs[i];

		if (j->rc == GB_E_OK && !rc)
			rc = cache_answer(r, j->region, j->reservations, now, err);
		else if (j->rc)
			/* none known there: its reservation pools are not made */
			orch_trace(r, "ladder", "region=%s reservations unknown: %s", j->region,
				   j->err.text);
	}
	orch_jobs_free(jobs, n);
	return rc;
}

struct load_ctx {
	struct orch_run *r;
	size_t cap;
	bool nomem;
};

static const char *keep(struct load_ctx *x, const char *s)
{
	if (!s || gb_strv_add(&x->r->resv_strs, s)) {
		x->nomem = true;
		return "";
	}
	return x->r->resv_strs.v[x->r->resv_strs.n - 1];
}

static bool candidate(const struct orch_run *r, const char *region)
{
	for (size_t i = 0; i < r->cand.n; i++)
		if (strcmp(r->cand.v[i].region->name, region) == 0)
			return true;
	return false;
}

static int resv_row(const struct gb_reservation *g, void *arg)
{
	struct load_ctx *x = arg;
	struct orch_run *r = x->r;
	struct gb_plan_resv *p;

	if (!candidate(r, g->region))
		return 0;
	if (r->ladder.n_resv == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 8;
		struct gb_plan_resv *v = realloc(r->resv, cap * sizeof(*v));

		if (!v) {
			x->nomem = true;
			return 1;
		}
		r->resv = v;
		r->ladder.resv = v;
		x->cap = cap;
	}
	p = &r->resv[r->ladder.n_resv++];
	p->region = keep(x, g->region);
	p->id = keep(x, g->id);
	p->type = keep(x, g->instance_type);
	p->az = keep(x, g->az);
	p->state = keep(x, g->state);
	p->kind = strcmp(g->kind, "capacity-block") == 0 ? GB_CAPACITY_BLOCK :
		  GB_CAPACITY_RESERVATION;
	p->open = strcmp(g->match, "open") == 0;
	p->available = g->available;
	p->total = g->total;
	p->start = g->start_at;
	p->end = g->end_at;
	return x->nomem;
}

gb_err_t orch_ladder_load(struct orch_run *r, gb_error_t *err)
{
	struct load_ctx x = { r, 0, false };
	double now = orch_wall(r->o);
	gb_err_t rc;

	r->ladder.rungs = r->ns ? r->ns->capacity : NULL;
	r->ladder.n_rungs = r->ns ? r->ns->n_capacity : 0;
	/* only the default strategy can wait while it fills elsewhere */
	r->ladder.wait = r->strategy == GB_STRATEGY_DEFAULT;
	if (!needs_listing(r) || !r->st)
		return GB_E_OK;
	if ((rc = describe_stale(r, now, err)))
		return rc;
	rc = gb_state_reservation_list(r->st, NULL, now - r->conf->policy.reservation_ttl,
				       resv_row, &x, err);
	if (!rc && x.nomem)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	return rc;
}

void orch_ladder_clear(struct orch_run *r)
{
	free(r->resv);
	r->resv = NULL;
	gb_strv_free(&r->resv_strs);
	memset(&r->ladder, 0, sizeof(r->ladder));
}

void orch_ladder_wait(struct orch_run *r)
{
	double now = orch_wall(r->o), mono = orch_mono(r->o);

	for (size_t i = 0; r->ladder.wait && i < r->facts.n_pools; i++) {
		const struct gb_pool *p = &r->facts.pools[i];

		if (p->excluded || p->opens_at <= now)
			continue;
		r->pr[i].not_before = mono + (p->opens_at - now);
		if (p->subnet_index == 0)
			orch_trace(r, "ladder", "pool=%s/%s %s %s opens in %.0f s: waited for",
				   p->az, p->subnet, gb_conf_capacity_name(p->capacity), p->target,
				   p->opens_at - now);
	}
}

/* Do pools [a] and [b] draw on the same reservations? */
static bool same_reserve(const struct gb_pool *a, const struct gb_pool *b)
{
	return a->reserved >= 0 && b->reserved >= 0 && a->capacity == b->capacity &&
	       (a->target || b->target ? gb_strcmp0(a->target, b->target) == 0 :
		strcmp(a->region, b->region) == 0 && strcmp(a->az, b->az) == 0 &&
		strcmp(a->type, b->type) == 0);
}

void orch_ladder_took(struct orch_run *r, size_t pool, int got)
{
	struct gb_pool *p = &r->facts.pools[pool];
	gb_error_t e;

	if (p->reserved < 0 || got <= 0)
		return;
	if (p->target && !r->dry &&
	    gb_state_reservation_take(r->st, p->region, p->target, got, &e) &&
	    e.code != GB_E_NOTFOUND)
		gb_log_warn("reservation_count_failed req=%s id=%s error=%s", r->req->id,
			    p->target, e.text);
	for (size_t i = 0; i < r->facts.n_pools; i++) {
		struct gb_pool *q = &r->facts.pools[i];

		if (i != pool && !same_reserve(q, p))
			continue;
		q->reserved = q->reserved > got ? q->reserved - got : 0;
		gb_plan_pool_estimate(&r->facts, q);
		if (q->reserved == 0)
			orch_exclude_subnet(r, i, "reservation used up");
	}
}
