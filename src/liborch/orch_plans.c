/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_plans.c - a run's plan versions: made, proposed, validated, stored
 *
 * Every plan a run makes is a row of the plans table (used, fallback or
 * rejected), so that `gpuburstctl requests show` explains each decision.
 * The strategies re-plan through orch_replan() after a wave; the driver
 * makes the first with orch_plan_make().
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_llm.h"
#include "gb_log.h"
#include "orch_int.h"

static gb_err_t store_plan(struct orch_run *r, const struct gb_plan *p,
			   const char *status, const char *reason,
			   gb_error_t *err)
{
	struct gb_plan_row row = { 0 };
	char *body = NULL;
	gb_err_t rc;
	int version = 0;

	if (r->dry)
		return GB_E_OK;
	if ((rc = gb_plan_to_json(p, &body, err)))
		return rc;
	row.request_id = r->req->id;
	row.planner = p->planner;
	row.status = status;
	row.reason = reason;
	row.rationale = p->rationale;
	row.body = body;
	row.created_at = orch_wall(r->o);
	rc = gb_state_plan_add(r->st, &row, &version, err);
	free(body);
	if (rc)
		return rc;
	r->plan_versions++;
	orch_trace(r, "plan", "version=%d planner=%s status=%s steps=%zu total=%d reason=%s",
		   version, p->planner, status, p->n_steps, p->total,
		   reason ? reason : "-");
	return GB_E_OK;
}

static void scope_of(const struct orch_run *r, struct gb_plan_scope *s)
{
	s->conf = r->conf;
	s->instance_type = r->type;
	s->types = r->types;
	s->n_types = r->n_types;
	s->target = r->facts.target;
	s->allowed = r->cand.allowed;
	s->n_allowed = r->cand.n_allowed;
	s->rungs = r->ladder.rungs;
	s->n_rungs = r->ladder.n_rungs;
}

/*
 * Does [p] name at least one pool this run may still use?  A proposal made
 * only of pools the run excluded (dry, quota, not offered) passes the
 * validator's rules but would stall the strategy: it is not used.
 */
static bool plan_usable(const struct orch_run *r, const struct gb_plan *p)
{
	for (size_t i = 0; i < p->n_steps; i++) {
		long k = orch_pool_index(r, &p->steps[i]);	/* type included */
		const struct gb_pool *q = k >= 0 ? &r->facts.pools[k] : NULL;

		if (q && !q->excluded && q->offered != GB_OFFER_NO)
			return true;
	}
	return false;
}

/* Record in r->proposal (the dry run's caller) what became of a proposal. */
static void note_proposal(struct orch_run *r, const struct gb_plan *p,
			  const char *status, const char *reason)
{
	struct gb_orch_proposal *o = r->proposal;

	if (!o)
		return;
	if (p && p->planner)
		snprintf(o->planner, sizeof(o->planner), "%s", p->planner);
	else if (r->o->llm)
		snprintf(o->planner, sizeof(o->planner), "%s", gb_llm_planner_name(r->o->llm));
	else if (r->o->llm_error)
		snprintf(o->planner, sizeof(o->planner), "llm:%s",
			 gb_conf_llm_provider_name(r->conf->planner.llm.provider));
	else
		snprintf(o->planner, sizeof(o->planner), "plug-in");
	snprintf(o->status, sizeof(o->status), "%s", status);
	snprintf(o->reason, sizeof(o->reason), "%s", reason ? reason : "");
}

/*
 * Ask the plug-in planner (the LLM planner, gb_llm.h); *out NULL when there
 * is none, or it failed or was rejected: then [verdict] says why, and the
 * heuristic plan stored next is the "fallback".  A failed proposal that
 * names its planner and a plan the validator rejected are stored as
 * "rejected" versions, so that every decision is in the plans table.
 */
static gb_err_t proposed(struct orch_run *r, struct gb_plan **out,
			 char *verdict, size_t vn, gb_error_t *err)
{
	struct gb_plan_scope s;
	struct gb_plan *p = NULL;
	char summary[GB_PLAN_SUMMARY_MAX + 1];
	char why[GB_ERROR_TEXT_MAX];
	char *history = NULL;
	gb_error_t e = { 0 };
	gb_err_t rc;

	*out = NULL;
	verdict[0] = '\0';
	if (r->strategy == GB_STRATEGY_PROBE_FILL)
		return GB_E_OK;
	if (!r->o->propose) {
		if (r->o->llm_error)	/* planner.kind llm, not set up */
			note_proposal(r, NULL, "failed", r->o->llm_error);
		return GB_E_OK;
	}
	/*
	 * A proposing planner names pools without a capacity kind (its
	 * answer's schema has none): on a ladder other than on-demand alone
	 * its plan could only be rejected, so it is not asked.
	 */
	if (r->facts.n_rungs != 1 || r->facts.rungs[0].kind != GB_CAPACITY_ON_DEMAND) {
		if (r->replans == 0)	/* once, with the first plan */
			orch_trace(r, "plan", "planner=%s not asked: the capacity ladder is "
				   "planned by the heuristic planner", r->o->llm ?
				   gb_llm_planner_name(r->o->llm) : "plug-in");
		note_proposal(r, NULL, "skipped",
			      "the capacity ladder is planned by the heuristic planner");
		return GB_E_OK;
	}
	gb_plan_capacity_summary(&r->facts, summary, sizeof(summary));
	/* what a re-plan needs to know: the attempts and plans so far */
	if (!r->dry && gb_plan_history(r->st, r->req->id, 0, &history, &e))
		gb_log_warn("plan_history_failed req=%s error=%s", r->req->id,
			    gb_log_q(why, sizeof(why), e.text));
	r->facts.request_id = r->req->id;
	r->facts.untrusted = r->untrusted;
	r->facts.history = history;
	rc = r->o->propose(&r->facts, summary, &p, r->o->propose_ctx, &e);
	r->facts.history = NULL;
	r->facts.proposals++;
	free(history);
	if (rc || !p) {
		snprintf(verdict, vn, "%s", rc ? e.text : "no plan");
		note_proposal(r, p, "failed", verdict);
		orch_trace(r, "planner", "proposal failed: %s", verdict);
		rc = rc && p ? store_plan(r, p, "rejected", verdict, err) : GB_E_OK;
		gb_plan_free(p);
		return rc;
	}
	scope_of(r, &s);
	if (gb_plan_validate(&s, p, NULL, &e) ||
	    (!plan_usable(r, p) &&
	     gb_errorf(&e, GB_E_PLAN, "no step names a pool still usable in this request (all excluded: dry, quota or not offered)"))) {
		note_proposal(r, p, "rejected", e.text);
		snprintf(why, sizeof(why), "rejected: %s", e.text);
		snprintf(verdict, vn, "%s", why);
		rc = store_plan(r, p, "rejected", why, err);
		gb_plan_free(p);
		return rc;
	}
	note_proposal(r, p, "used", NULL);
	*out = p;
	return GB_E_OK;
}

/* Make, validate and store a plan for what is still missing. */
gb_err_t orch_plan_make(struct orch_run *r, const char *why, gb_error_t *err)
{
	struct gb_plan *p = NULL, *llm = NULL;
	struct gb_plan_scope s;
	char verdict[GB_ERROR_TEXT_MAX], fwhy[GB_ERROR_TEXT_MAX];
	gb_error_t e;
	gb_err_t rc;

	r->facts.target = orch_unfilled(r);
	if (r->facts.target < 1)
		r->facts.target = 1;
	if ((rc = proposed(r, &llm, verdict, sizeof(verdict), err)))
		return rc;
	if (llm) {
		rc = store_plan(r, llm, "used", why, err);
		if (rc) {
			gb_plan_free(llm);
			return rc;
		}
		gb_plan_free(r->plan);
		r->plan = llm;
		return GB_E_OK;
	}
	rc = r->strategy == GB_STRATEGY_PROBE_FILL ?
	     gb_plan_ordered(&r->facts, &p, &e) : gb_plan_heuristic(&r->facts, &p, &e);
	if (rc) {
		if (rc != GB_E_PLAN)
			return gb_errorf(err, rc, "%s", e.text);
		orch_trace(r, "plan", "no plan: %s", e.text);
		gb_plan_free(r->plan);
		r->plan = NULL;
		if (!r->saw_offer_no && strstr(e.text, "offers"))
			r->saw_offer_no = true;
		return GB_E_OK;
	}
	scope_of(r, &s);
	if (gb_plan_validate(&s, p, NULL, &e)) {
		/* our own planner broke a rule: a bug, never launch it */
		store_plan(r, p, "rejected", e.text, NULL);
		gb_plan_free(p);
		return orch_broken(r, "plan", e.text, err);
	}
	/* the fallback says why the proposal was not used */
	snprintf(fwhy, sizeof(fwhy), "%s%s%.900s", why,
		 verdict[0] ? "; proposal not used: " : "", verdict);
	rc = store_plan(r, p, r->o->propose && r->strategy != GB_STRATEGY_PROBE_FILL ?
			"fallback" : "used", fwhy, err);
	if (rc) {
		gb_plan_free(p);
		return rc;
	}
	gb_plan_free(r->plan);
	r->plan = p;
	return GB_E_OK;
}

/*
 * The default strategy plans with measured levels, lower bounds and quota
 * walls (facts.bounds); the others keep the counters' estimate.  Quota
 * rooms count the live instances the state file holds, this run's too.
 */
void orch_plan_estimate(struct orch_run *r)
{
	gb_error_t e;

	r->facts.bounds = r->strategy == GB_STRATEGY_DEFAULT;
	if (r->facts.bounds &&
	    gb_plan_quota_rooms(&r->facts, r->st, &e))
		gb_log_warn("quota_memory_failed req=%s error=%s", r->req->id, e.text);
	for (size_t i = 0; i < r->facts.n_pools; i++)
		gb_plan_pool_estimate(&r->facts, &r->facts.pools[i]);
}

/* Refresh memory estimates from the state file (exclusions are kept). */
static void refresh_memory(struct orch_run *r)
{
	struct gb_plan_facts f;
	gb_error_t e;

	if (gb_plan_facts_build_ladder(r->conf, &r->cand, r->types, r->n_types, &r->ladder,
				       1, 1, GB_LOCALITY_NONE, r->st, orch_wall(r->o), &f, &e)) {
		gb_log_warn("memory_refresh_failed req=%s error=%s", r->req->id, e.text);
		return;
	}
	r->facts.now = f.now;
	for (size_t i = 0; i < r->facts.n_pools && i < f.n_pools; i++)
		r->facts.pools[i].mem = f.pools[i].mem;
	gb_plan_facts_clear(&f);
	orch_plan_estimate(r);
}

gb_err_t orch_replan(struct orch_run *r, const char *why, gb_error_t *err)
{
	if (orch_unfilled(r) == 0)
		return GB_E_OK;
	/* quota rooms count this run's live instances: refresh them always */
	refresh_memory(r);
	if (r->replans >= r->o->tuning.max_replans)
		return GB_E_OK;
	r->replans++;
	return orch_plan_make(r, why, err);
}
