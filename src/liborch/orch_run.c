/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_run.c - gb_orch_resume(): set up, plan, run a strategy, report
 *
 * The flow follows the ancestor's state machine (research s1.4: Init,
 * Preflight, Launch, Describe, Record, Decide, Loop) with the recording
 * moved before and after every call and the decision made in code.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_hostlist.h"
#include "gb_llm.h"
#include "gb_log.h"
#include "orch_int.h"

/*****************************************************************************
 *  Trace, invariants, small helpers
 *****************************************************************************/

/*****************************************************************************
 *  Plans
 *****************************************************************************/

/*****************************************************************************
 *  Locality: roll back or commit a group
 *****************************************************************************/

/*****************************************************************************
 *  Set-up
 *****************************************************************************/

static gb_err_t expand_nodes(struct orch_run *r,
			     const struct gb_orch_resume_opts *ro,
			     gb_error_t *err)
{
	gb_hostlist_t *hl = NULL;
	gb_err_t rc = GB_E_OK;
	size_t max = r->conf->policy.max_request_nodes > 0 ?
		     (size_t)r->conf->policy.max_request_nodes : 100000;

	if (ro && ro->nodes) {
		for (size_t i = 0; i < ro->n_nodes && !rc; i++)
			if (gb_strv_find(&r->names, ro->nodes[i]) < 0)
				rc = gb_strv_add(&r->names, ro->nodes[i]);
	} else if (r->req->nodes) {
		rc = gb_hostlist_parse(r->req->nodes, &hl, err);
		if (!rc)
			rc = gb_hostlist_expand(hl, max, &r->names, err);
		gb_hostlist_destroy(hl);
	} else if (r->dry && r->req->node_count > 0 &&
		   (size_t)r->req->node_count <= max) {
		char name[32];

		for (int i = 0; i < r->req->node_count && !rc; i++) {
			snprintf(name, sizeof(name), "node%d", i + 1);
			rc = gb_strv_add(&r->names, name);
		}
	}
	if (rc)
		return rc;
	if (r->names.n == 0)
		return gb_errorf(err, GB_E_INVALID, "request %s has no nodes", r->req->id);
	if (r->names.n > max)
		return gb_errorf(err, GB_E_INVALID, "request %s has %zu nodes, more than policy.max_request_nodes %zu",
				 r->req->id, r->names.n, max);
	r->n = (int)r->names.n;
	r->slots = calloc(r->names.n, sizeof(*r->slots));
	if (!r->slots)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (int i = 0; i < r->n; i++)
		r->slots[i].name = r->names.v[i];
	return GB_E_OK;
}

static gb_err_t settle_options(struct orch_run *r,
			       const struct gb_orch_resume_opts *ro,
			       gb_error_t *err)
{
	const struct gb_request *q = r->req;
	enum gb_strategy s;

	if (q->kind != GB_REQ_RESUME)
		return gb_errorf(err, GB_E_INVALID, "request %s is a %s, not a resume",
				 q->id, gb_request_kind_name(q->kind));
	if (!r->dry && strlen(q->id) != GB_REQUEST_ID_LEN)
		return gb_errorf(err, GB_E_INVALID, "request id '%s' is not %d hex digits",
				 q->id, GB_REQUEST_ID_LEN);
	r->ns = q->nodeset ? gb_conf_nodeset(r->conf, q->nodeset) : NULL;
	if (!r->ns)
		return gb_errorf(err, GB_E_INVALID, "request %s: unknown nodeset '%s'",
				 q->id, q->nodeset ? q->nodeset : "(none)");
	r->type = q->instance_type && *q->instance_type ? q->instance_type :
		  r->ns->instance_type;
	if (r->ns->n_instance_types > 0 && strcmp(r->type, r->ns->instance_type) == 0) {
		r->types = (const char *const *)r->ns->instance_types;
		r->n_types = r->ns->n_instance_types;
	} else {
		/* another single type (plan --type X), or no list parsed yet */
		r->types = &r->type;
		r->n_types = 1;
	}
	if (ro && ro->types && ro->n_types > 0 && r->types != &r->type) {
		/* the job asked for some of them (-C): those, in the nodeset's order */
		r->types = ro->types;
		r->n_types = ro->n_types;
		r->type = ro->types[0];
	}
	r->home = ro && ro->home_region ? ro->home_region :
		  q->home_region && *q->home_region ? q->home_region :
		  r->ns->home_region;
	r->strategy = r->ns->strategy;
	if (ro && ro->strategy >= 0 && ro->strategy < GB_STRATEGY_COUNT)
		r->strategy = (enum gb_strategy)ro->strategy;
	else if (q->strategy && *q->strategy) {
		if (gb_conf_strategy_parse(q->strategy, &s))
			return gb_errorf(err, GB_E_INVALID, "request %s: unknown strategy '%s'",
					 q->id, q->strategy);
		r->strategy = s;
	}
	r->locality = ro && ro->locality >= 0 ? (enum gb_locality)ro->locality :
		      r->ns->locality;
	r->mode = ro && ro->mode >= 0 ? (enum gb_mode)ro->mode : r->ns->mode;
	r->bmax = r->conf->policy.batch_max > 0 ? r->conf->policy.batch_max : 1;
	r->hedge = r->o->tuning.hedge > 0 ? r->o->tuning.hedge : 0;
	r->untrusted = ro && ro->untrusted ? ro->untrusted : q->input;
	if (ro) {
		r->owner_user = ro->user;
		r->owner_account = ro->account;
		r->owner_partition = ro->partition;
	}
	return GB_E_OK;
}

/* A region with a pool whose offering is not known yet. */
static bool offerings_unknown(const struct orch_run *r, const char *region)
{
	for (size_t k = 0; k < r->facts.n_pools; k++)
		if (strcmp(r->facts.pools[k].region, region) == 0 &&
		    r->facts.pools[k].offered == GB_OFFER_UNKNOWN)
			return true;
	return false;
}

/*
 * Preflight every candidate region not cached, in parallel.  The requests
 * of a burst start together and none of them finds the cache filled: one
 * run at a time asks, and the next first reads what it cached, so a
 * region is asked once per burst (per offerings_ttl), not once per
 * request.
 */
static gb_err_t preflight(struct orch_run *r, gb_error_t *err)
{
	struct orch_job *jobs = NULL;
	size_t n = 0;
	gb_err_t rc;

	pthread_mutex_lock(&r->o->preflight_mu);
	if (r->st)
		gb_plan_offerings_cached(&r->facts, r->st);
	rc = orch_region_jobs(r, ORCH_JOB_OFFERINGS, offerings_unknown, &jobs, &n, err);
	for (size_t i = 0; i < n; i++) {
		struct orch_job *j = &jobs[i];

		if (j->rc == GB_E_OK) {
			gb_plan_offerings_apply(&r->facts, j->region, j->offerings, r->st);
		} else if (j->ae.cls == GB_EC2_CLASS_REGION) {
			orch_region_refused(r, j->region, j);
		} else if (j->ae.cls == GB_EC2_CLASS_AUTH) {
			orch_abort(r, GB_E_AUTH,
				   j->ae.code[0] ? j->ae.code : GB_EC2_CODE_AUTH_FAILURE,
				   j->ae.message[0] ? j->ae.message : j->err.text);
		} else {
			orch_trace(r, "preflight", "region=%s offerings unknown: %s",
				   j->region, j->err.text);
		}
	}
	pthread_mutex_unlock(&r->o->preflight_mu);
	orch_jobs_free(jobs, n);
	for (size_t k = 0; k < r->facts.n_pools; k++)
		if (r->facts.pools[k].offered == GB_OFFER_NO)
			orch_exclude_subnet(r, k, "not offered");
	return rc;
}

static bool region_offers(const struct orch_run *r, const char *region)
{
	for (size_t k = 0; k < r->facts.n_pools; k++)
		if (strcmp(r->facts.pools[k].region, region) == 0 &&
		    r->facts.pools[k].offered != GB_OFFER_NO)
			return true;
	return false;
}

static void trace_candidates(struct orch_run *r)
{
	struct gb_buf b = GB_BUF_INIT;

	for (size_t i = 0; i < r->cand.n; i++)
		gb_buf_printf(&b, "%s%s", i ? "," : "", r->cand.v[i].region->name);
	orch_trace(r, "candidates", "home=%s mode=%s strategy=%s locality=%s job=%s order=%s",
		   r->home, gb_conf_mode_name(r->mode),
		   gb_conf_strategy_name(r->strategy),
		   gb_conf_locality_name(r->grouped ? r->locality : GB_LOCALITY_NONE),
		   r->grouped ? "multi-node" : "spread", gb_buf_str(&b));
	gb_buf_free(&b);
	if (r->cand.prefer)
		orch_trace(r, "candidates", "%s", r->cand.prefer);
}

/*****************************************************************************
 *  Result
 *****************************************************************************/

static void join_regions(const struct gb_strv *v, struct gb_buf *b)
{
	for (size_t i = 0; i < v->n; i++)
		gb_buf_printf(b, "%s%s", i ? ", " : "", v->v[i]);
}

/* Why a request stopped short, most telling first. */
enum denial {
	DENY_ABORT,		/* abort_code, abort_text */
	DENY_QUOTA,
	DENY_LOCALITY,
	DENY_CAPACITY,
	DENY_DEADLINE,
	DENY_THROTTLE,
	DENY_SKIPS,		/* regions the account may not use */
	DENY_NOT_OFFERED,
};

static enum denial denial_of(const struct orch_run *r)
{
	if (r->abort_rc && r->abort_rc != GB_E_INTERNAL)
		return DENY_ABORT;
	if (r->saw_quota && !r->saw_capacity)
		return DENY_QUOTA;
	if (r->saw_locality)
		return DENY_LOCALITY;
	if (r->saw_capacity)
		return DENY_CAPACITY;
	if (r->deadline_hit)
		return DENY_DEADLINE;
	if (r->saw_throttle)
		return DENY_THROTTLE;
	if (r->n_skips)
		return DENY_SKIPS;
	if (r->saw_offer_no)
		return DENY_NOT_OFFERED;
	return DENY_CAPACITY;
}

/* The code unfilled nodes carry ("" when an abort had none). */
static const char *denial_code(const struct orch_run *r)
{
	switch (denial_of(r)) {
	case DENY_ABORT:
		return r->abort_code;
	case DENY_QUOTA:
		return r->quota_code[0] ? r->quota_code : GB_EC2_CODE_VCPU_LIMIT;
	case DENY_LOCALITY:
		return gb_orch_code_name(GB_ORCH_CODE_LOCALITY);
	case DENY_CAPACITY:
		return r->last_code[0] ? r->last_code : GB_EC2_CODE_ICE;
	case DENY_DEADLINE:
		return gb_orch_code_name(GB_ORCH_CODE_DEADLINE);
	case DENY_THROTTLE:
		return GB_EC2_CODE_THROTTLED;
	case DENY_SKIPS:
		return orch_region_code(r);
	case DENY_NOT_OFFERED:
		return gb_orch_code_name(GB_ORCH_CODE_NOT_OFFERED);
	}
	return GB_EC2_CODE_ICE;
}

/* Only skipped regions explain why the request stopped short. */
static bool skips_alone(const struct orch_run *r)
{
	return r->n_skips && !r->abort_rc && !r->saw_capacity && !r->saw_quota &&
	       !r->saw_locality && !r->deadline_hit && !r->saw_throttle;
}

static gb_err_t cause_of(const struct orch_run *r)
{
	if (r->abort_rc)
		return r->abort_rc;
	if (r->deadline_hit)
		return GB_E_TIMEOUT;
	if (r->saw_capacity || r->saw_locality)
		return GB_E_CAPACITY;
	if (r->saw_quota)
		return GB_E_QUOTA;
	if (r->saw_throttle)
		return GB_E_THROTTLE;
	if (r->n_skips)
		return GB_E_AUTH;	/* the account may not use the regions left */
	if (r->saw_offer_no || !r->plan)
		return GB_E_PLAN;
	return GB_E_CAPACITY;
}

/* The request's types for a reason: "p5.48xlarge or p5e.48xlarge". */
static const char *types_text(const struct orch_run *r, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < r->n_types && len < n; i++) {
		int w = snprintf(buf + len, n - len, "%s%s", i ? " or " : "", r->types[i]);

		len += w > 0 ? (size_t)w : 0;
	}
	return buf;
}

/* The text of [d], without its code: where the request could not go. */
static void denial_text(const struct orch_run *r, enum denial d, const char *where,
			struct gb_buf *b)
{
	char tt[256];
	const char *type = types_text(r, tt, sizeof(tt));

	if (d == DENY_ABORT) {
		gb_buf_puts(b, r->abort_text);
	} else if (skips_alone(r)) {
		orch_region_reason(r, true, b);
	} else if (d == DENY_NOT_OFFERED) {
		gb_buf_printf(b, "%s is not offered in %s", type, where);
	} else if (d == DENY_LOCALITY) {
		gb_buf_printf(b, "no %s could hold the %d-node job of %s in %s",
			      r->locality == GB_LOCALITY_AZ ? "AZ" : "region", r->n, type,
			      where);
	} else if (d == DENY_DEADLINE) {
		gb_buf_printf(b, "request deadline passed in %s", where);
	} else if (d == DENY_QUOTA) {
		gb_buf_printf(b, "quota exhausted for %s in %s", type, where);
	} else {
		gb_buf_printf(b, "no %s capacity in %s", type, where);
	}
}

/* out->code, out->text and the one line made of them, out->reason. */
static void reason_text(struct orch_run *r, struct gb_orch_result *out)
{
	struct gb_buf b = GB_BUF_INIT, text = GB_BUF_INIT, where = GB_BUF_INIT;

	if (r->tried_regions.n)
		join_regions(&r->tried_regions, &where);
	else
		for (size_t i = 0; i < r->cand.n; i++)
			gb_buf_printf(&where, "%s%s", i ? ", " : "",
				      r->cand.v[i].region->name);
	if (out->result == GB_RESULT_SUCCESS) {
		gb_buf_printf(&text, "launched %d/%d", out->launched, out->requested);
	} else {
		gb_strlcpy(out->code, denial_code(r), sizeof(out->code));
		denial_text(r, denial_of(r), gb_buf_str(&where), &text);
		if (out->result == GB_RESULT_PARTIAL)
			gb_buf_printf(&b, "launched %d/%d; ", out->launched,
				      out->requested);
	}
	if (out->result == GB_RESULT_SUCCESS || !skips_alone(r))
		orch_region_reason(r, false, &text);
	gb_strlcpy(out->text, gb_buf_str(&text), sizeof(out->text));
	orch_code_line(&b, out->code, gb_buf_str(&text));
	gb_strlcpy(out->reason, gb_buf_str(&b), sizeof(out->reason));
	gb_buf_free(&b);
	gb_buf_free(&text);
	gb_buf_free(&where);
}

static gb_err_t node_result(const struct orch_run *r, const struct slot *s,
			    struct gb_orch_node *nd, const char *code)
{
	bool filled = s->state == SLOT_COMMITTED || s->state == SLOT_REUSED;

	nd->node = strdup(s->name);
	nd->reused = s->state == SLOT_REUSED;
	if (filled) {
		nd->instance_id = gb_strdup0(s->instance_id);
		nd->region = gb_strdup0(s->region);
		nd->az = gb_strdup0(s->az);
		nd->subnet = gb_strdup0(s->subnet);
		nd->type = gb_strdup0(s->type ? s->type : r->type);
		nd->private_ip = gb_strdup0(s->private_ip);
		nd->public_ip = gb_strdup0(s->public_ip);
	} else {
		const char *c = s->state == SLOT_DOUBT ? gb_orch_code_name(GB_ORCH_CODE_UNKNOWN) :
				s->code ? s->code : code && *code ? code : GB_EC2_CODE_ICE;

		nd->code = strdup(c);
		nd->why = gb_strdup0(s->state == SLOT_DOUBT ?
				     "a launch for this node has an unknown outcome; a re-run resolves it" :
				     s->why ? s->why : r->abort_text[0] ? r->abort_text :
				     "no capacity in the allowed regions");
	}
	return nd->node ? GB_E_OK : GB_E_NOMEM;
}

static gb_err_t build_result(struct orch_run *r, struct gb_orch_result *out,
			     gb_error_t *err)
{
	const char *code = denial_code(r);
	double last = r->t0;

	out->n_nodes = (size_t)r->n;
	out->nodes = calloc(out->n_nodes ? out->n_nodes : 1, sizeof(*out->nodes));
	if (!out->nodes)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	out->requested = r->n;
	out->launched = 0;
	for (int i = 0; i < r->n; i++) {
		const struct slot *s = &r->slots[i];

		if (node_result(r, s, &out->nodes[i], code))
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		if (s->state == SLOT_COMMITTED || s->state == SLOT_REUSED) {
			out->launched++;
			if (s->state == SLOT_COMMITTED && s->filled_at > last)
				last = s->filled_at;
		}
	}
	out->gap = out->requested - out->launched;
	out->result = out->launched == out->requested ? GB_RESULT_SUCCESS :
		      out->launched > 0 ? GB_RESULT_PARTIAL : GB_RESULT_FAILED;
	out->cause = out->result == GB_RESULT_SUCCESS ? GB_E_OK : cause_of(r);
	out->strategy = r->strategy;
	out->api_calls = r->api_calls;
	out->other_calls = r->other_calls;
	out->extras = r->extras;
	out->rolled_back = r->rolled_back;
	out->terminated = r->terminated;
	out->plan_versions = r->plan_versions;
	out->elapsed = orch_mono(r->o) - r->t0;
	out->time_to_capacity = out->launched > 0 ? last - r->t0 : out->elapsed;
	reason_text(r, out);
	return GB_E_OK;
}

double gb_orch_reprobe_delay(const struct gb_orch_result *res, int done, double left)
{
	double d = GB_ORCH_REPROBE_FIRST;

	if (!res || res->cause != GB_E_CAPACITY || res->launched >= res->requested)
		return -1;
	for (int i = 0; i < done && d < GB_ORCH_REPROBE_MAX; i++)
		d *= 2;
	if (d > GB_ORCH_REPROBE_MAX)
		d = GB_ORCH_REPROBE_MAX;
	return d <= left ? d : -1;
}

void gb_orch_result_clear(struct gb_orch_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->nodes && i < r->n_nodes; i++) {
		struct gb_orch_node *n = &r->nodes[i];

		free(n->node);
		free(n->type);
		free(n->instance_id);
		free(n->region);
		free(n->az);
		free(n->subnet);
		free(n->private_ip);
		free(n->public_ip);
		free(n->code);
		free(n->why);
	}
	free(r->nodes);
	gb_strv_free(&r->trace);
	memset(r, 0, sizeof(*r));
}

/*****************************************************************************
 *  The final check against the records
 *****************************************************************************/

struct alive_ctx {
	struct orch_run *r;
	int alive;
	int dup;
	struct gb_strv nodes;
};

static int alive_row(const struct gb_instance *in, void *arg)
{
	struct alive_ctx *a = arg;

	a->alive++;
	if (!in->node)
		return 0;	/* an extra whose terminate failed: counted */
	if (gb_strv_find(&a->nodes, in->node) >= 0)
		a->dup++;
	else
		gb_strv_add(&a->nodes, in->node);
	return 0;
}

static gb_err_t final_check(struct orch_run *r, gb_error_t *err)
{
	struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
	struct alive_ctx a = { r, 0, 0, { 0 } };
	gb_err_t rc;

	f.request_id = r->req->id;
	f.alive = true;
	rc = gb_state_instance_list(r->st, &f, alive_row, &a, err);
	gb_strv_free(&a.nodes);
	if (rc)
		return rc;
	if (a.dup)
		return orch_broken(r, "end", "a node has two live instances", err);
	if (a.alive > r->n)
		return orch_broken(r, "end", "more live instances than requested nodes", err);
	return orch_check(r, "end", err);
}

/*****************************************************************************
 *  gb_orch_resume
 *****************************************************************************/

static void run_free(struct orch_run *r)
{
	for (int i = 0; r->slots && i < r->n; i++) {
		orch_slot_clear(&r->slots[i]);
		free(r->slots[i].code);
		free(r->slots[i].why);
	}
	free(r->slots);
	free(r->pr);
	free(r->munge_key);
	orch_place_clear(r);
	gb_strv_free(&r->names);
	gb_plan_facts_clear(&r->facts);
	orch_ladder_clear(r);
	gb_plan_candidates_clear(&r->cand);
	gb_plan_free(r->plan);
	orch_pool_destroy(r->pool);
	gb_strv_free(&r->tried_regions);
	gb_strv_free(&r->accepted);
	free(r->skips);
	gb_strv_free(&r->trace);
}

/*
 * A multi-node job of a nodeset with placement cluster: one AZ per job,
 * a group of its own there, the whole job in one call where the size
 * allows, all-or-nothing per AZ (orch_place.c).
 */
static void place(struct orch_run *r)
{
	r->placed = r->req->job_id != 0 && r->n > 1 &&
		    r->ns->placement == GB_PLACEMENT_CLUSTER;
	if (!r->placed)
		return;
	if (r->locality != GB_LOCALITY_AZ || r->strategy != GB_STRATEGY_ALL_OR_NOTHING)
		orch_trace(r, "placement", "cluster: the job of %d nodes runs all_or_nothing "
			   "in one AZ (was %s, locality %s), a placement group per AZ tried",
			   r->n, gb_conf_strategy_name(r->strategy),
			   gb_conf_locality_name(r->locality));
	r->grouped = true;
	r->locality = GB_LOCALITY_AZ;
	r->strategy = GB_STRATEGY_ALL_OR_NOTHING;
}

static gb_err_t prepare(struct orch_run *r, const struct gb_orch_resume_opts *ro,
			gb_error_t *err)
{
	double dl = ro && ro->deadline > 0 ? ro->deadline :
		    r->conf->policy.request_deadline;
	gb_error_t e;
	gb_err_t rc;

	if ((rc = settle_options(r, ro, err)) || (rc = expand_nodes(r, ro, err)))
		return rc;
	r->deadline = r->t0 + (dl > 0 ? dl : 3600);
	r->remaining = r->prev_remaining = r->n;
	r->grouped = r->req->job_id != 0 && r->n > 1 &&
		     r->locality != GB_LOCALITY_NONE;
	place(r);
	r->run_prior = -1;
	r->lock_group = -1;
	if (gb_plan_candidates(r->conf, r->home, r->mode, &r->cand, &e)) {
		orch_trace(r, "candidates", "refused: %s", e.text);
		orch_abort(r, e.code == GB_E_NOMEM ? GB_E_NOMEM : GB_E_PLAN, NULL, e.text);
		return e.code == GB_E_NOMEM ? gb_errorf(err, GB_E_NOMEM, "%s", e.text) :
		       GB_E_OK;
	}
	if ((rc = orch_pool_create(r->o, &r->pool, err)) ||
	    (rc = orch_ladder_load(r, err)))
		return rc;
	/*
	 * policy.prefer orders the candidates once, before the facts: every
	 * planner (and every re-plan's facts) sees the regions in one order
	 */
	rc = gb_plan_candidates_prefer(r->conf, &r->cand, r->types, r->n_types,
				       r->ladder.n_rungs ? r->ladder.rungs[0].kind :
				       GB_CAPACITY_ON_DEMAND, err);
	if (rc)
		return rc;
	rc = gb_plan_facts_build_ladder(r->conf, &r->cand, r->types, r->n_types, &r->ladder,
					r->n, r->grouped ? r->n : 1, r->locality, r->st,
					orch_wall(r->o), &r->facts, err);
	if (rc)
		return rc;
	r->facts.hedge = r->hedge;
	orch_plan_estimate(r);
	r->pr = calloc(r->facts.n_pools + 1, sizeof(*r->pr));
	if (!r->pr)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (size_t i = 0; i < r->facts.n_pools; i++) {
		r->pr[i].run_est = -1;
		r->pr[i].room0 = r->facts.pools[i].mem.quota_room;
	}
	orch_ladder_wait(r);
	return GB_E_OK;
}

static gb_err_t execute(struct orch_run *r, gb_error_t *err)
{
	char tt[256];
	gb_err_t rc;

	if (r->abort_rc)
		return GB_E_OK;
	trace_candidates(r);
	if ((rc = orch_region_remembered(r, err)) || (rc = orch_recover(r, err)))
		return rc;
	if (orch_unfilled(r) == 0) {
		/*
		 * A re-run whose recovered instances fill every node: with
		 * locality they are still tentative (one group, the one
		 * recovery locked), and no wave will close the group.
		 */
		orch_commit_tentative(r);
		return GB_E_OK;
	}
	if (orch_stopped(r))
		return rc;
	if ((rc = preflight(r, err)) || r->abort_rc)
		return rc;
	for (size_t i = 0; i < r->cand.n; i++)
		if (!region_offers(r, r->cand.v[i].region->name))
			orch_trace(r, "preflight", "region=%s NOT_OFFERED %s",
				   r->cand.v[i].region->name,
				   types_text(r, tt, sizeof(tt)));
	if ((rc = orch_plan_make(r, "initial plan", err)) || !r->plan)
		return rc;
	switch (r->strategy) {
	case GB_STRATEGY_PROBE_FILL:
		rc = orch_probe_fill(r, err);
		break;
	case GB_STRATEGY_BEST_EFFORT:
		rc = orch_sequential(r, false, err);
		break;
	case GB_STRATEGY_ALL_OR_NOTHING:
		rc = orch_sequential(r, true, err);
		break;
	default:
		rc = orch_default(r, err);
		break;
	}
	if (rc)
		return rc;
	/* all_or_nothing: the whole request or nothing */
	if (r->strategy == GB_STRATEGY_ALL_OR_NOTHING && orch_unfilled(r) > 0)
		rc = orch_rollback(r, -1, "all_or_nothing: the request could not be filled whole", err);
	else
		orch_commit_tentative(r);
	return rc;
}

/*
 * Tags last, also after an abort: a filled node's instance needs its name;
 * then the addresses a launch answer lacked.
 */
static gb_err_t finish_tags(struct orch_run *r, gb_error_t *err)
{
	gb_err_t rc;

	if (!r->pool || !r->slots)
		return GB_E_OK;
	rc = orch_tag_nodes(r, err);
	return rc ? rc : orch_addresses(r, err);
}

gb_err_t gb_orch_resume(gb_orch_t *o, gb_state_t *st,
			const struct gb_request *req,
			const struct gb_orch_resume_opts *ro,
			struct gb_orch_result *out, gb_error_t *err)
{
	struct orch_run r;
	gb_err_t rc;

	memset(&r, 0, sizeof(r));
	memset(out, 0, sizeof(*out));
	if (!o || !st || !req)
		return gb_errorf(err, GB_E_INVALID, "resume: missing orchestrator, state or request");
	r.o = o;
	r.st = st;
	r.conf = o->conf;
	r.req = req;
	r.t0 = orch_mono(o);
	gb_strlcpy(out->request_id, req->id, sizeof(out->request_id));
	rc = prepare(&r, ro, err);
	if (!rc)
		rc = execute(&r, err);
	if (!rc && r.slots)
		orch_region_verdict(&r);
	if (r.pr) {
		orch_learn(&r);
		orch_region_learn(&r);
	}
	/* later runs find this run's dry pools in memory; [r] is gone after */
	orch_board_learned(o->board, &r, orch_mono(o));
	if (!rc)
		rc = finish_tags(&r, err);
	if (!rc || rc == GB_E_INTERNAL) {
		gb_err_t rc2 = r.slots ? final_check(&r, err) : GB_E_OK;

		if (!rc)
			rc = rc2;
	}
	if (r.slots && build_result(&r, out, rc ? NULL : err) == GB_E_OK) {
		orch_trace(&r, "result", "result=%s launched=%d/%d calls=%d extras=%d rolled_back=%d ttc=%.3f reason=%s",
			   gb_request_result_name(out->result), out->launched,
			   out->requested, out->api_calls, out->extras,
			   out->rolled_back, out->time_to_capacity, out->reason);
	} else if (!r.slots) {
		out->result = GB_RESULT_FAILED;
		out->cause = rc ? rc : GB_E_INVALID;
	}
	out->trace = r.trace;
	memset(&r.trace, 0, sizeof(r.trace));
	run_free(&r);
	return rc;
}

gb_err_t gb_orch_plan_dry_run(gb_orch_t *o, gb_state_t *st,
			      const struct gb_request *req,
			      const struct gb_orch_resume_opts *ro,
			      struct gb_plan **plan, char **summary,
			      struct gb_orch_proposal *proposal,
			      gb_error_t *err)
{
	struct orch_run r;
	char text[GB_PLAN_SUMMARY_MAX + 1];
	char line[GB_ERROR_TEXT_MAX];
	gb_err_t rc;

	*plan = NULL;
	if (summary)
		*summary = NULL;
	if (proposal)
		memset(proposal, 0, sizeof(*proposal));
	if (!o || !req)
		return gb_errorf(err, GB_E_INVALID, "plan: missing orchestrator or request");
	memset(&r, 0, sizeof(r));
	r.o = o;
	r.st = st;
	r.conf = o->conf;
	r.req = req;
	r.dry = true;
	r.proposal = proposal;
	r.t0 = orch_mono(o);
	rc = prepare(&r, ro, err);
	if (!rc && r.abort_rc)
		rc = gb_errorf(err, r.abort_rc, "%s", orch_abort_line(&r, line, sizeof(line)));
	if (!rc)
		rc = orch_region_remembered(&r, err);
	if (!rc)
		rc = preflight(&r, err);
	if (!rc && r.abort_rc)
		rc = gb_errorf(err, r.abort_rc, "%s", orch_abort_line(&r, line, sizeof(line)));
	if (!rc)
		rc = orch_plan_make(&r, "dry run", err);
	if (!rc && !r.plan && r.n_skips) {
		struct gb_buf b = GB_BUF_INIT;

		orch_region_reason(&r, true, &b);
		rc = gb_errorf(err, GB_E_AUTH, "no usable pool for home region %s: %s", r.home,
			       gb_buf_str(&b));
		gb_buf_free(&b);
	} else if (!rc && !r.plan) {
		rc = gb_errorf(err, GB_E_PLAN, "no usable pool offers %s for home region %s",
			       r.type, r.home);
	}
	if (!rc && summary) {
		gb_plan_capacity_summary(&r.facts, text, sizeof(text));
		if (!(*summary = strdup(text)))
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	if (!rc) {
		*plan = r.plan;
		r.plan = NULL;
	}
	run_free(&r);
	return rc;
}
