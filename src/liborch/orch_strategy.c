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

/* probe_fill's decision after a region (the ancestor's NextAction, P10). */
static void trace_decide(struct orch_run *r, const char *action,
			 const char *why)
{
	orch_trace(r, "decide", "action=%s cursor=%d remaining=%d reason=%s",
		   action, r->cursor, orch_unfilled(r), why);
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
	int cap = orch_pool_cap(r, pool), attempts = 0, throttles = 0;
	int need = orch_unfilled(r);
	int batch = need < cap ? need : cap;

	while (need > 0 && attempts < r->o->tuning.max_attempts_per_subnet &&
	       !orch_stopped(r)) {
		int n = batch < need ? batch : need;
		struct orch_call *c = orch_call_new(r, pool, n, n, n, NULL);
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
		if (!*rc && oc != CALL_OK && oc != CALL_ICE && oc != CALL_THROTTLE)
			orch_outcome_exclude(r, c, NULL);
		orch_call_free(c);
		if (*rc)
			return false;
		need = orch_unfilled(r);
		/*
		 * A reservation's count is exact: once used up (or refused:
		 * EC2 knows better) its pool is excluded and no smaller call
		 * can help; while it lasts no call asks for more than it holds.
		 */
		if (oc == CALL_OK) {
			if (r->facts.pools[pool].excluded)
				return true;
			attempts = 0;
			cap = orch_pool_cap(r, pool);
			batch = need < cap ? need : cap;
		} else if (oc == CALL_ICE) {
			/* probe_fill's own rule: halve, down to one */
			if (n == 1 || r->facts.pools[pool].excluded)
				return true;	/* subnet exhausted */
			batch = (n + 1) / 2;
			attempts++;
		} else if (oc == CALL_THROTTLE) {
			/* probe_fill's own rule: exhausted throttling ends the region */
			if (++throttles > r->o->tuning.throttle_limit)
				return false;
			orch_sleep(r->o, orch_backoff(r, throttles - 1));
		} else {
			const struct orch_rule *rule = orch_rule(oc);

			if (rule->abort || rule->scope == ORCH_SCOPE_REGION ||
			    rule->scope == ORCH_SCOPE_QUOTA)
				return false;	/* the region is over */
			code[0] = '\0';	/* only the subnet or AZ is */
			return true;
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
		long p = orch_pool_index(r, &r->plan->steps[i]);

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
		if ((rc = orch_group_close(r, -1, err)))
			break;
		if (orch_unfilled(r) == 0) {
			trace_decide(r, "done", "all nodes filled");
			break;
		}
		if (r->abort_rc) {
			char line[GB_ERROR_TEXT_MAX];

			trace_decide(r, "abort", orch_abort_line(r, line, sizeof(line)));
			break;
		}
		if (r->mode == GB_MODE_SINGLE_REGION) {
			trace_decide(r, "done", "single_region mode: no cross-region fallback");
			break;
		}
		trace_decide(r, "continue_next_region",
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
		int cap = orch_pool_cap(r, pool), need = orch_unfilled(r);
		int k = need < cap ? need : cap;
		struct orch_call *c;
		enum call_outcome oc;

		if (r->placed && !orch_place_group(r, pool, &rc, err))
			break;	/* refused: the AZ (or region) is excluded */
		c = orch_call_new(r, pool, aon ? k : 1, k, k, NULL);
		if (!c)
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		rc = run_one(r, c, err);
		oc = orch_call_outcome(c);
		if (!rc)
			orch_judge_pool(r, c, aon);
		orch_call_free(c);
		if (rc || oc == CALL_ABORT)
			break;
		if (oc == CALL_THROTTLE && !r->facts.pools[pool].excluded)
			orch_sleep(r->o, orch_backoff(r, r->pr[pool].throttled - 1));
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
	ng = orch_plan_groups(r, groups);
	for (size_t gi = (size_t)r->cursor; gi < ng && !rc; gi++) {
		r->cursor = (int)gi;
		for (size_t i = 0; i < r->plan->n_steps && !rc; i++) {
			long p = orch_pool_index(r, &r->plan->steps[i]);

			if (orch_unfilled(r) == 0 || orch_stopped(r))
				break;
			if (p < 0 || !orch_in_group(r, (size_t)p, groups[gi]))
				continue;
			rc = fill_pool(r, (size_t)p, aon, err);
		}
		if (!rc)
			rc = orch_group_close(r, groups[gi], err);
		if (rc || orch_unfilled(r) == 0 || orch_stopped(r))
			break;
	}
	free(groups);
	return rc;
}
