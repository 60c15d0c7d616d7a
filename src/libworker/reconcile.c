/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reconcile.c - stuck requests, lost records, orphans, the way back of DOWN
 * nodes, what the instances' agents report, retention
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gb_ec2.h"
#include "gb_log.h"
#include "gb_plan.h"
#include "gb_policy.h"
#include "gb_reconcile.h"
#include "gb_slurm_cb.h"
#include "gb_util.h"
#include "prog_int.h"


struct cinst {			/* one instance the cloud listed */
	char *region, *id, *state, *ip, *node, *request;
	char *agent;		/* its gpuburst:agent tag, or NULL */
	double launched;
};

struct rec {			/* one live record of the state file */
	char *request, *region, *id, *node, *ip;
	char *az, *type, *capacity, *agent;
	double launched;
	double noticed;		/* noticed_at (updated by NOTICE) */
	enum gb_instance_state state;
};

struct rctx {
	const struct gb_reconcile_opts *o;
	struct gb_reconcile_report *rep;
	double now;
	struct gb_slurm_node_list *nodes;	/* NULL: Slurm did not answer */
	bool nodes_owned;			/* read here (not opts.nodes) */
	struct cinst *ci;
	size_t n_ci;
	struct rec *rec;
	size_t n_rec;
	bool recs_read;				/* rec holds the live records */
	struct gb_strv listed;			/* regions the cloud answered for */
};

const char *gb_reconcile_kind_name(enum gb_reconcile_kind k)
{
	static const char *const names[] = { "stuck", "lost", "orphan", "cooldown",
					     "expire", "release", "prune", "group", "block",
					     "notice", "held", "spot" };

	return k < GB_RECONCILE_KIND_COUNT ? names[k] : "invalid";
}

/*****************************************************************************
 *  Report
 *****************************************************************************/

static struct gb_reconcile_action *add_action(struct rctx *c, enum gb_reconcile_kind k,
					      const char *target, const char *node,
					      const char *detail)
{
	struct gb_reconcile_report *rep = c->rep;
	struct gb_reconcile_action *v = realloc(rep->v, (rep->n + 1) * sizeof(*v)), *a;

	if (!v)
		return NULL;
	rep->v = v;
	a = &v[rep->n];
	memset(a, 0, sizeof(*a));
	a->kind = k;
	a->target = gb_strdup0(target);
	a->node = gb_strdup0(node);
	a->detail = gb_strdup0(detail);
	if (!a->target || (node && !a->node) || !a->detail) {
		free(a->target);
		free(a->node);
		free(a->detail);
		return NULL;
	}
	rep->n++;
	rep->counts[k]++;
	return a;
}

/* Log and record what happened to [a] (request [req_id] may be NULL). */
static void settle(struct rctx *c, struct gb_reconcile_action *a, const char *req_id,
		   gb_err_t rc, const char *error)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	char qd[512];

	if (!c->o->dry_run && rc == GB_E_OK)
		a->done = true;
	if (rc) {
		a->error = gb_strdup0(error ? error : gb_strerror(rc));
		c->rep->failed++;
	}
	if (c->o->dry_run) {
		gb_log_info("reconcile_would action=%s target=%s%s%s detail=%s",
			    gb_reconcile_kind_name(a->kind), a->target, a->node ? " node=" : "",
			    a->node ? a->node : "", gb_log_q(qd, sizeof(qd), a->detail));
		return;
	}
	if (rc)
		gb_log_error("reconcile action=%s target=%s%s%s detail=%s error=%s",
			     gb_reconcile_kind_name(a->kind), a->target, a->node ? " node=" : "",
			     a->node ? a->node : "", gb_log_q(qd, sizeof(qd), a->detail),
			     gb_log_q(lq, sizeof(lq), a->error));
	else
		gb_log_notice("reconcile action=%s target=%s%s%s detail=%s",
			      gb_reconcile_kind_name(a->kind), a->target, a->node ? " node=" : "",
			      a->node ? a->node : "", gb_log_q(qd, sizeof(qd), a->detail));
	prog_event_json(c->o->st, req_id, "reconcile",
			json_pack("{s:s,s:s,s:s?,s:s,s:b,s:s?}", "action",
				  gb_reconcile_kind_name(a->kind), "target", a->target,
				  "node", a->node, "detail", a->detail, "done", a->done,
				  "error", a->error));
}

void gb_reconcile_report_clear(struct gb_reconcile_report *rep)
{
	if (!rep)
		return;
	for (size_t i = 0; i < rep->n; i++) {
		free(rep->v[i].target);
		free(rep->v[i].node);
		free(rep->v[i].detail);
		free(rep->v[i].error);
	}
	free(rep->v);
	free(rep->cloud_error);
	free(rep->slurm_error);
	memset(rep, 0, sizeof(*rep));
}

/*****************************************************************************
 *  STUCK
 *****************************************************************************/

struct stuck {
	char id[GB_REQUEST_ID_LEN + 1];
	enum gb_request_state state;
	enum gb_request_kind kind;
	double created;
};

struct stuck_scan {
	double cutoff;
	struct stuck *v;
	size_t n;
	bool oom;
};

static int collect_stuck(const struct gb_request *r, void *arg)
{
	struct stuck_scan *ss = arg;
	struct stuck *v;

	if (r->created_at >= ss->cutoff)
		return 1;	/* oldest first: the rest are younger */
	if (!(v = realloc(ss->v, (ss->n + 1) * sizeof(*v)))) {
		ss->oom = true;
		return 1;
	}
	ss->v = v;
	memcpy(v[ss->n].id, r->id, sizeof(v[ss->n].id));
	v[ss->n].state = r->state;
	v[ss->n].kind = r->kind;
	v[ss->n++].created = r->created_at;
	return 0;
}

static gb_err_t fail_stuck(gb_state_t *st, const struct stuck *s, const char *why,
			   gb_error_t *err)
{
	gb_err_t rc;

	if (s->state == GB_RSTATE_RUNNING)
		return gb_state_request_finish(st, s->id, GB_RSTATE_FAILED, GB_RESULT_FAILED,
					       0, why, err);
	/* queued -> running -> failed in one transaction, for a final result */
	if ((rc = gb_state_tx_begin(st, err)))
		return rc;
	rc = gb_state_request_transition(st, s->id, GB_RSTATE_QUEUED, GB_RSTATE_RUNNING,
					 why, err);
	if (rc == GB_E_OK)
		rc = gb_state_request_finish(st, s->id, GB_RSTATE_FAILED, GB_RESULT_FAILED, 0,
					     why, err);
	if (rc) {
		gb_state_tx_rollback(st);
		return rc;
	}
	return gb_state_tx_commit(st, err);
}

static gb_err_t do_stuck(struct rctx *c, gb_error_t *err)
{
	static const enum gb_request_state states[] = { GB_RSTATE_QUEUED, GB_RSTATE_RUNNING };
	double deadline = c->o->conf->policy.request_deadline;
	struct stuck_scan ss = { c->now - deadline, NULL, 0, false };
	gb_err_t rc = GB_E_OK;

	for (size_t k = 0; k < GB_ARRAY_LEN(states) && rc == GB_E_OK; k++) {
		struct gb_request_filter f = GB_REQUEST_FILTER_ANY;

		f.state = (int)states[k];
		rc = gb_state_request_list(c->o->st, &f, collect_stuck, &ss, err);
	}
	if (rc == GB_E_OK && ss.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (size_t i = 0; i < ss.n && rc == GB_E_OK; i++) {
		struct gb_reconcile_action *a;
		char why[256];
		gb_error_t e = { 0 };
		gb_err_t arc = GB_E_OK;

		snprintf(why, sizeof(why), "%s %s request still %s %.0f s after it was queued "
			 "(request_deadline %.0f s)", "deadline passed:",
			 gb_request_kind_name(ss.v[i].kind), gb_request_state_name(ss.v[i].state),
			 c->now - ss.v[i].created, deadline);
		if (!(a = add_action(c, GB_RECONCILE_STUCK, ss.v[i].id, NULL, why))) {
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			break;
		}
		if (!c->o->dry_run)
			arc = fail_stuck(c->o->st, &ss.v[i], why, &e);
		if (arc == GB_E_BUSY)
			arc = GB_E_OK;	/* it moved on meanwhile: nothing to do */
		settle(c, a, ss.v[i].id, arc, e.text);
	}
	free(ss.v);
	return rc;
}

/*****************************************************************************
 *  Cloud listing and live records
 *****************************************************************************/

static int take_instance(const struct gb_ec2_instance *in, const char *region, void *arg)
{
	struct rctx *c = arg;
	struct cinst *v = realloc(c->ci, (c->n_ci + 1) * sizeof(*v)), *x;

	if (!v)
		return 1;
	c->ci = v;
	x = &v[c->n_ci++];
	memset(x, 0, sizeof(*x));
	x->region = gb_strdup0(region);
	x->id = gb_strdup0(in->instance_id);
	x->state = gb_strdup0(in->state_name ? in->state_name : "unknown");
	x->ip = gb_strdup0(in->private_ip);
	x->node = gb_strdup0(gb_ec2_instance_tag(in, "gpuburst:node"));
	x->request = gb_strdup0(gb_ec2_instance_tag(in, "gpuburst:request"));
	x->agent = gb_strdup0(gb_ec2_instance_tag(in, GB_RECONCILE_AGENT_TAG));
	x->launched = in->launch_epoch;
	return 0;
}

static int take_record(const struct gb_instance *in, void *arg)
{
	struct rctx *c = arg;
	struct rec *v = realloc(c->rec, (c->n_rec + 1) * sizeof(*v)), *x;

	if (!v)
		return 1;
	c->rec = v;
	x = &v[c->n_rec++];
	x->request = gb_strdup0(in->request_id);
	x->region = gb_strdup0(in->region);
	x->id = gb_strdup0(in->instance_id);
	x->node = gb_strdup0(in->node);
	x->ip = gb_strdup0(in->private_ip);
	x->az = gb_strdup0(in->az);
	x->type = gb_strdup0(in->instance_type);
	x->capacity = gb_strdup0(in->capacity);
	x->agent = gb_strdup0(in->agent);
	x->launched = in->launched_at;
	x->noticed = in->noticed_at;
	x->state = in->state;
	return 0;
}

/* The live records, once a pass (the cheap pass only when NOTICE needs them). */
static gb_err_t read_records(struct rctx *c, gb_error_t *err)
{
	struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
	gb_err_t rc;

	if (c->recs_read)
		return GB_E_OK;
	f.alive = true;
	if ((rc = gb_state_instance_list(c->o->st, &f, take_record, c, err)))
		return rc;
	c->recs_read = true;
	return GB_E_OK;
}

static void list_cloud(struct rctx *c)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	const struct gb_conf *conf = c->o->conf;
	struct gb_buf errs = GB_BUF_INIT;

	for (size_t i = 0; i < conf->n_regions; i++) {
		const char *region = conf->regions[i].name;
		gb_error_t e;

		if (gb_orch_cloud_instances(c->o->orch, region, true, take_instance, c, &e)) {
			gb_log_warn("reconcile_cloud_unlisted region=%s error=%s "
				    "note=\"no lost/orphan decisions there\"", region,
				    gb_log_q(lq, sizeof(lq), e.text));
			gb_buf_printf(&errs, "%s%s: %s", errs.len ? "; " : "", region, e.text);
			continue;
		}
		gb_strv_add(&c->listed, region);
	}
	if (errs.len)
		c->rep->cloud_error = gb_buf_steal(&errs);
	gb_buf_free(&errs);
	c->rep->cloud_checked = c->listed.n > 0;
}

static const struct cinst *cloud_find(const struct rctx *c, const char *region, const char *id)
{
	for (size_t i = 0; i < c->n_ci; i++) {
		if (strcmp(c->ci[i].id, id) == 0 && strcmp(c->ci[i].region, region) == 0)
			return &c->ci[i];
	}
	return NULL;
}

static bool running_state(const char *s)
{
	return strcmp(s, "pending") == 0 || strcmp(s, "running") == 0;
}

static bool gone_state(const char *s)
{
	return strcmp(s, "shutting-down") == 0 || strcmp(s, "terminated") == 0;
}

/* Slurm considers [sn] off (not just suspended for a moment: idle~). */
static bool node_off(const struct gb_slurm_node *sn)
{
	return sn->powered_down && !sn->powering_up;
}

/*****************************************************************************
 *  RUNNING: records launched pending that the cloud now lists running
 *****************************************************************************/

/*
 * The record of [r] becomes [state] (with [reason], or the one it has);
 * an ended state gets terminated_at = now.  OUT *e on failure.
 */
static gb_err_t rec_set_state(struct rctx *c, const struct rec *r,
			      enum gb_instance_state state, const char *reason,
			      gb_error_t *e)
{
	struct gb_instance up = { 0 };

	up.request_id = r->request;
	up.region = r->region;
	up.instance_id = r->id;
	up.state = state;
	up.reason = reason;
	if (state == GB_INST_TERMINATED || state == GB_INST_LOST)
		up.terminated_at = c->now;
	return gb_state_instance_update(c->o->st, &up, e);
}

/*
 * Bookkeeping, not an action: the record follows the cloud (no Slurm
 * change).  A failed update is logged and retried by the next pass.
 */
static void do_running(struct rctx *c)
{
	char lq[GB_ERROR_TEXT_MAX + 8];

	for (size_t i = 0; i < c->n_rec; i++) {
		const struct rec *r = &c->rec[i];
		const struct cinst *ci;
		gb_error_t e;

		if (r->state != GB_INST_PENDING || !r->region || !r->id ||
		    gb_strv_find(&c->listed, r->region) < 0)
			continue;
		ci = cloud_find(c, r->region, r->id);
		if (!ci || strcmp(ci->state, "running") != 0)
			continue;
		c->rep->running++;
		if (c->o->dry_run)
			continue;
		if (rec_set_state(c, r, GB_INST_RUNNING, NULL, &e))
			gb_log_warn("reconcile_running_failed instance=%s#%s error=%s",
				    r->region, r->id, gb_log_q(lq, sizeof(lq), e.text));
	}
}

/*****************************************************************************
 *  LOST
 *****************************************************************************/

/*
 * The instance Slurm's node [node] runs on: its newest live record.  The
 * record, not NodeAddr, says so: from Slurm 23.11 slurmctld sets a cloud
 * node's NodeAddr to wherever its slurmd registered from
 * (GB_SLURM_CTLD_OWNS_CLOUD_ADDR), which need not be the address
 * gpuburst recorded.
 */
static const struct rec *node_instance(const struct rctx *c, const char *node)
{
	const struct rec *best = NULL;

	for (size_t i = 0; i < c->n_rec; i++) {
		const struct rec *r = &c->rec[i];

		if (r->node && strcmp(r->node, node) == 0 &&
		    (!best || r->launched > best->launched))
			best = r;
	}
	return best;
}

static void lost_node(struct rctx *c, const struct rec *r, const char *why,
		      gb_err_t *rc, char *etext, size_t en)
{
	const struct gb_slurm_node *sn = gb_slurm_node_find(c->nodes, r->node);
	char reason[GB_REASON_MAX];
	char *names[1];

	/* Only a node up on this very instance is concerned (not one
	 * relaunched since, nor one Slurm has powered off). */
	if (!sn || node_off(sn) || node_instance(c, r->node) != r)
		return;
	names[0] = r->node;
	snprintf(reason, sizeof(reason), "gpuburst: instance %s %s req=%s", r->id, why,
		 r->request);
	/* DOWN requeues its jobs now; power_down_force then returns it to idle~. */
	if (prog_slurm_update(c->o->st, r->request, GB_SLURM_DOWN, names, NULL, 1, reason) ||
	    prog_slurm_update(c->o->st, r->request, GB_SLURM_POWER_DOWN_FORCE, names, NULL, 1,
			      reason)) {
		*rc = GB_E_SLURM;
		snprintf(etext, en, "Slurm update of %s failed (see the log)", r->node);
	}
}

/* A worker closes the record of an instance it terminates right after the call. */
#define GONE_GRACE_S 30.0

static int count_one(const struct gb_instance *in, void *arg)
{
	(void)in;
	++*(int *)arg;
	return 0;
}

/* Is [r] still live in the state file now (not closed since it was read)? */
static bool still_live(const struct rctx *c, const struct rec *r)
{
	struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
	int n = 0;

	f.request_id = r->request;
	f.region = r->region;
	f.instance_id = r->id;
	f.alive = true;
	return gb_state_instance_list(c->o->st, &f, count_one, &n, NULL) == GB_E_OK && n > 0;
}

/*
 * A record "terminating" is one gpuburst sent TerminateInstances for and
 * did not close (the worker died in between): the cloud listing it gone
 * (or not at all, past the settle time) completes it as terminated, with
 * the reason the terminate gave.  Never "lost".
 */
static void terminate_completed(struct rctx *c, const struct rec *r,
				const struct cinst *ci)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	gb_error_t e;

	if (!ci && r->launched + c->o->conf->policy.orphan_timeout > c->now)
		return;
	gb_log_info("terminate_completed instance=%s#%s req=%s cloud=%s%s", r->region,
		    r->id, r->request, ci ? ci->state : "not-listed",
		    c->o->dry_run ? " dry_run=1" : "");
	if (c->o->dry_run)
		return;
	if (rec_set_state(c, r, GB_INST_TERMINATED, NULL, &e))
		gb_log_warn("terminate_complete_failed instance=%s error=%s", r->id,
			    gb_log_q(lq, sizeof(lq), e.text));
}

static gb_err_t do_lost(struct rctx *c, gb_error_t *err)
{
	double settle_s = c->o->conf->policy.orphan_timeout;

	for (size_t i = 0; i < c->n_rec; i++) {
		const struct rec *r = &c->rec[i];
		const struct cinst *ci;
		struct gb_reconcile_action *a;
		char target[256], why[160], etext[256] = "";
		gb_err_t rc = GB_E_OK;

		if (!r->region || !r->id || gb_strv_find(&c->listed, r->region) < 0)
			continue;
		ci = cloud_find(c, r->region, r->id);
		if (ci && !gone_state(ci->state))
			continue;
		if (r->state == GB_INST_TERMINATING) {
			terminate_completed(c, r, ci);
			continue;
		}
		/* The cloud saying terminated counts at any age past a short
		 * grace (a spot reclaim, a console terminate in the first
		 * minutes); only an instance missing from the listing waits
		 * the settle time, as EC2's listing of fresh ids is eventually
		 * consistent.  The grace and still_live() keep an instance the
		 * worker is terminating itself (an extra) from counting. */
		if (r->launched + (ci ? GONE_GRACE_S : settle_s) > c->now || !still_live(c, r))
			continue;
		snprintf(why, sizeof(why), "gone from the cloud (%s), not terminated by gpuburst",
			 ci ? ci->state : "not listed");
		snprintf(target, sizeof(target), "%s#%s", r->region, r->id);
		if (!(a = add_action(c, GB_RECONCILE_LOST, target, r->node, why)))
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		if (!c->o->dry_run) {
			gb_error_t e;

			if ((rc = rec_set_state(c, r, GB_INST_LOST, why, &e)))
				snprintf(etext, sizeof(etext), "%s", e.text);
			else if (r->node && c->nodes)
				lost_node(c, r, "gone from the cloud", &rc, etext, sizeof(etext));
		}
		settle(c, a, r->request, rc, etext);
	}
	return GB_E_OK;
}

/*****************************************************************************
 *  ORPHAN
 *****************************************************************************/

static const struct rec *record_of(const struct rctx *c, const struct cinst *ci)
{
	for (size_t i = 0; i < c->n_rec; i++) {
		if (c->rec[i].id && strcmp(c->rec[i].id, ci->id) == 0 &&
		    c->rec[i].region && strcmp(c->rec[i].region, ci->region) == 0)
			return &c->rec[i];
	}
	return NULL;
}

static void req_state(const struct gb_request *r, void *arg)
{
	*(enum gb_request_state *)arg = r->state;
}

/* Why [ci] is not an orphan, or NULL when nothing explains it. */
static const char *explained(const struct rctx *c, const struct cinst *ci)
{
	const struct rec *r = record_of(c, ci);
	enum gb_request_state rs = GB_RSTATE_DONE;

	if (r) {
		const struct gb_slurm_node *sn = c->nodes ? gb_slurm_node_find(c->nodes, r->node)
							  : NULL;

		if (!c->nodes || (sn && !node_off(sn)))
			return "live record, node up";
		/* a record whose node Slurm has powered off: a missed suspend */
	}
	if (ci->request && gb_state_request_get(c->o->st, ci->request, req_state, &rs,
						NULL) == GB_E_OK &&
	    (rs == GB_RSTATE_QUEUED || rs == GB_RSTATE_RUNNING))
		return "its request is still being worked on";
	/* A last resort that only ever spares an instance: from Slurm 23.11
	 * NodeAddr is where the slurmd registered from, normally (not always)
	 * the instance's private address. */
	for (size_t i = 0; c->nodes && ci->ip && i < c->nodes->n; i++) {
		const struct gb_slurm_node *sn = &c->nodes->v[i];

		if (strcmp(sn->addr, ci->ip) == 0 && !node_off(sn))
			return "a node's NodeAddr points at it";
	}
	return NULL;
}

static gb_err_t do_orphans(struct rctx *c, gb_error_t *err)
{
	double age_min = c->o->conf->policy.orphan_timeout;

	for (size_t i = 0; i < c->n_ci; i++) {
		const struct cinst *ci = &c->ci[i];
		struct gb_reconcile_action *a;
		char target[256], why[256], etext[256] = "";
		gb_err_t rc = GB_E_OK;

		if (!running_state(ci->state) || explained(c, ci))
			continue;
		if (ci->launched <= 0 || ci->launched + age_min > c->now)
			continue;	/* too young (or age unknown): maybe in flight */
		snprintf(why, sizeof(why), "tagged for this cluster (node %s, request %s), "
			 "%s, no live record or node explains it, %.0f s old",
			 ci->node ? ci->node : "-", ci->request ? ci->request : "-", ci->state,
			 c->now - ci->launched);
		snprintf(target, sizeof(target), "%s#%s", ci->region, ci->id);
		if (!(a = add_action(c, GB_RECONCILE_ORPHAN, target, ci->node, why)))
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		if (!c->o->dry_run) {
			const char *ids[1] = { ci->id };
			int n = 0;
			gb_error_t e;

			if ((rc = gb_orch_terminate_instances(c->o->orch, c->o->st, ci->region, ids,
							      1, "orphan (reconcile)", &n, &e)))
				snprintf(etext, sizeof(etext), "%s", e.text);
		}
		settle(c, a, ci->request, rc, etext);
	}
	return GB_E_OK;
}

/*****************************************************************************
 *  NOTICE: what an instance's agent (gpuburst-node) reported
 *****************************************************************************/

/*
 * The agent tag of each recorded instance the cloud lists follows the
 * cloud's (bookkeeping, not an action, like do_running): `gpuburstctl
 * instances` and `requests show` print it.  Terminated instances count
 * too (EC2 lists them for about an hour): an instance that was
 * interrupted or failed its GPU check is usually gone before a pass sees
 * it, and what its agent said is the point.  The update is a no-op when
 * the record already has the text.  A failed update is logged and
 * retried by the next pass.
 */
static void keep_agent_tags(struct rctx *c)
{
	char lq[GB_ERROR_TEXT_MAX + 8];

	for (size_t i = 0; !c->o->dry_run && i < c->n_ci; i++) {
		const struct cinst *ci = &c->ci[i];
		const struct rec *r;
		gb_error_t e;

		if (!ci->agent || !ci->id || !ci->region ||
		    ((r = record_of(c, ci)) && r->agent && strcmp(r->agent, ci->agent) == 0))
			continue;
		if (gb_state_instance_agent(c->o->st, ci->region, ci->id, ci->agent, &e))
			gb_log_warn("reconcile_agent_tag_failed instance=%s#%s error=%s",
				    ci->region, ci->id, gb_log_q(lq, sizeof(lq), e.text));
	}
}

/* "ap-south-1a g5.xlarge spot": the offering of [r] ("?" where unknown). */
static const char *offering(const struct rec *r, char *buf, size_t n)
{
	snprintf(buf, n, "%s%s%s %s %s", r->region, r->az ? "/" : "", r->az ? r->az : "",
		 r->type ? r->type : "?", r->capacity ? r->capacity : "on-demand");
	return buf;
}

/*
 * Once per instance: mark [r] noticed and remember its offering as dry,
 * in one transaction (gb_state_instance_notice is the compare-and-set
 * that makes it once, whichever process gets there first).  The memory
 * is an ICE's (gb_state_capacity_record with ice, as orch_learn records
 * a pool that ran dry): the planners avoid the pool for
 * policy.ice_cooldown; a failed GPU check also counts as a resume failure
 * (the node never registered).  OUT *first whether this call did it (in a
 * dry run: whether it would).
 */
static gb_err_t notice_record(struct rctx *c, struct rec *r, bool unhealthy, bool *first,
			      gb_error_t *e)
{
	gb_state_t *st = c->o->st;
	gb_err_t rc;

	*first = r->noticed <= 0;
	if (c->o->dry_run || !*first)
		return GB_E_OK;
	if ((rc = gb_state_tx_begin(st, e)))
		return rc;
	rc = gb_state_instance_notice(st, r->request, r->region, r->id, c->now, first, e);
	if (rc == GB_E_OK && *first && r->type)
		rc = gb_state_capacity_record(st, r->region, r->az, r->type, r->capacity, 0, 0,
					      true, unhealthy, c->now,
					      c->o->conf->policy.capacity_half_life, e);
	if (rc) {
		gb_state_tx_rollback(st);
		*first = false;
		return rc;
	}
	if ((rc = gb_state_tx_commit(st, e)))
		*first = false;
	else
		r->noticed = c->now;	/* noticed now, or by another before us */
	return rc;
}

/*
 * A node of a nodeset whose reason is the agent's spot interruption or
 * failed GPU check naming the node's newest live instance: its offering
 * is remembered as dry once.  The node itself is Slurm's (the agent set
 * it DRAIN + POWER_DOWN_ASAP or POWER_DOWN_FORCE; the suspend terminates
 * the instance).  A reason naming another instance is stale: ignored.
 */
static gb_err_t notice_node(struct rctx *c, const struct gb_slurm_node *sn, gb_error_t *err)
{
	char id[GB_INSTANCE_ID_MAX], target[256], what[160], detail[GB_REASON_MAX + 320];
	enum gb_reason_agent kind = gb_reason_agent(sn->reason, id);
	struct gb_reconcile_action *a;
	struct rec *r;
	gb_error_t e = { 0 };
	bool first;
	gb_err_t rc;

	if ((kind != GB_REASON_AGENT_SPOT && kind != GB_REASON_AGENT_UNHEALTHY) ||
	    !gb_conf_nodeset_for_node(c->o->conf, sn->name))
		return GB_E_OK;		/* not the agent's, or not ours: never touched */
	if ((rc = read_records(c, err)))
		return rc;
	r = (struct rec *)node_instance(c, sn->name);
	if (!r || !r->id || strcmp(r->id, id) != 0) {
		gb_log_debug("reconcile_notice_stale node=%s instance=%s newest=%s", sn->name,
			     id, r && r->id ? r->id : "-");
		return GB_E_OK;
	}
	rc = notice_record(c, r, kind == GB_REASON_AGENT_UNHEALTHY, &first, &e);
	if (rc == GB_E_OK && !first)
		return GB_E_OK;		/* done before, by this process or another */
	snprintf(target, sizeof(target), "%s#%s", r->region, r->id);
	snprintf(detail, sizeof(detail), "\"%s\": offering %s dry for %.0f s "
		 "(policy.ice_cooldown)", sn->reason, offering(r, what, sizeof(what)),
		 c->o->conf->policy.ice_cooldown);
	if (!(a = add_action(c, GB_RECONCILE_NOTICE, target, sn->name, detail)))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	settle(c, a, r->request, rc, e.text);
	return GB_E_OK;
}

/* Does [sn]'s reason already say the agent's word on instance [id]? */
static bool reason_names(const struct gb_slurm_node *sn, const char *id)
{
	char named[GB_INSTANCE_ID_MAX];
	enum gb_reason_agent kind = sn ? gb_reason_agent(sn->reason, named)
				       : GB_REASON_AGENT_NONE;

	return (kind == GB_REASON_AGENT_SPOT || kind == GB_REASON_AGENT_UNHEALTHY) &&
	       strcmp(named, id) == 0;
}

/* Terminate [r] (the record closed as terminated) and power its node down. */
static gb_err_t unhealthy_act(struct rctx *c, const struct rec *r, const char *summary,
			      char *etext, size_t en)
{
	const struct gb_slurm_node *sn = c->nodes ? gb_slurm_node_find(c->nodes, r->node) : NULL;
	const char *ids[1] = { r->id };
	char why[GB_REASON_MAX], reason[GB_REASON_MAX];
	char *names[1] = { r->node };
	gb_error_t e;
	gb_err_t rc;
	int n = 0;

	snprintf(why, sizeof(why), "unhealthy (reconcile): %s", summary);
	if ((rc = gb_orch_terminate_instances(c->o->orch, c->o->st, r->region, ids, 1, why, &n,
					      &e))) {
		snprintf(etext, en, "%s", e.text);
		return rc;
	}
	/* POWER_DOWN_FORCE, as the agent would have: the power-up is
	 * cancelled, its job requeued, the node back to idle~ */
	if (!sn || node_off(sn))
		return GB_E_OK;
	gb_reason_unhealthy(reason, sizeof(reason), r->id, summary);
	if (prog_slurm_update(c->o->st, r->request, GB_SLURM_POWER_DOWN_FORCE, names, NULL, 1,
			      reason)) {
		snprintf(etext, en, "Slurm update of %s failed (see the log)", r->node);
		return GB_E_SLURM;
	}
	return GB_E_OK;
}

/*
 * Full pass: an instance whose gpuburst:agent tag says its GPU check
 * failed, whose node did not get the agent's reason (no slurm.conf on the
 * instance, scontrol failed): the same memory, then reconcile does the
 * rest itself (unhealthy_act).  Only the newest live instance of a node
 * of a nodeset, still pending or running in the cloud.
 */
static gb_err_t notice_tag(struct rctx *c, struct rec *r, gb_error_t *err)
{
	const struct cinst *ci;
	const char *summary;
	struct gb_reconcile_action *a;
	char target[256], what[160], detail[GB_REASON_MAX + 320], etext[256] = "";
	gb_error_t e = { 0 };
	bool first;
	gb_err_t rc;

	if (!r->region || !r->id || !r->node || gb_strv_find(&c->listed, r->region) < 0 ||
	    !(ci = cloud_find(c, r->region, r->id)) || !running_state(ci->state) ||
	    !ci->agent || !gb_str_has_prefix(ci->agent, GB_RECONCILE_AGENT_UNHEALTHY) ||
	    !gb_conf_nodeset_for_node(c->o->conf, r->node) || node_instance(c, r->node) != r ||
	    (c->nodes && reason_names(gb_slurm_node_find(c->nodes, r->node), r->id)))
		return GB_E_OK;
	summary = ci->agent + strlen(GB_RECONCILE_AGENT_UNHEALTHY);
	summary += strspn(summary, " ");
	rc = notice_record(c, r, true, &first, &e);
	snprintf(etext, sizeof(etext), "%s", rc ? e.text : "");
	snprintf(target, sizeof(target), "%s#%s", r->region, r->id);
	snprintf(detail, sizeof(detail), "tag \"%s\" and no Slurm reason: %s%s%s; terminate, "
		 "node power_down_force", ci->agent,
		 first ? "offering " : "offering noticed before",
		 first ? offering(r, what, sizeof(what)) : "",
		 first ? " dry (policy.ice_cooldown)" : "");
	if (!(a = add_action(c, GB_RECONCILE_NOTICE, target, r->node, detail)))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	if (rc == GB_E_OK && !c->o->dry_run)
		rc = unhealthy_act(c, r, summary, etext, sizeof(etext));
	settle(c, a, r->request, rc, etext);
	return GB_E_OK;
}

static gb_err_t do_notice(struct rctx *c, gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;

	for (size_t i = 0; c->nodes && i < c->nodes->n && rc == GB_E_OK; i++)
		rc = notice_node(c, &c->nodes->v[i], err);
	if (c->o->cheap || c->o->only_notice || !c->o->orch)
		return rc;
	for (size_t i = 0; i < c->n_rec && rc == GB_E_OK; i++)
		rc = notice_tag(c, &c->rec[i], err);
	return rc;
}

/*****************************************************************************
 *  GROUP: placement groups of requests no longer in progress
 *****************************************************************************/

/* The group is one gpuburst made: its name has our prefix. */
static bool our_group(const struct gb_conf *conf, const char *name)
{
	char prefix[128];

	snprintf(prefix, sizeof(prefix), "gpuburst-%s-", conf->cluster_name);
	return name && gb_str_has_prefix(name, prefix);
}

static void one_group(struct rctx *c, const char *region,
		      const struct gb_ec2_placement_group *g)
{
	const char *req = NULL;
	enum gb_request_state rs = GB_RSTATE_DONE;
	struct gb_reconcile_action *a;
	struct gb_ec2_error ae;
	char target[320], why[256], etext[256] = "";
	gb_error_t e;
	gb_err_t rc = GB_E_OK;

	for (size_t t = 0; t < g->n_tags; t++)
		if (strcmp(g->tags[t].key, "gpuburst:request") == 0)
			req = g->tags[t].value;
	if (!our_group(c->o->conf, g->group_name) || (g->state && strcmp(g->state, "available")))
		return;		/* not ours by name, or going away already */
	if (req && gb_state_request_get(c->o->st, req, req_state, &rs, NULL) == GB_E_OK &&
	    (rs == GB_RSTATE_QUEUED || rs == GB_RSTATE_RUNNING))
		return;		/* its request may still launch into it */
	snprintf(target, sizeof(target), "%s#%s", region, g->group_name);
	snprintf(why, sizeof(why), "placement group of request %s, which is no longer in progress",
		 req ? req : "-");
	if (c->o->dry_run) {
		if ((a = add_action(c, GB_RECONCILE_GROUP, target, NULL, why)))
			settle(c, a, req, GB_E_OK, NULL);
		return;
	}
	memset(&ae, 0, sizeof(ae));
	rc = gb_orch_delete_group(c->o->orch, region, g->group_name, &ae, &e);
	if (rc && strcmp(ae.code, GB_EC2_CODE_PG_IN_USE) == 0) {
		gb_log_info("reconcile_group_kept region=%s group=%s note=\"instances still in it\"",
			    region, g->group_name);
		return;		/* its instances are still going: a later pass */
	}
	if (rc)
		snprintf(etext, sizeof(etext), "%s", e.text);
	if ((a = add_action(c, GB_RECONCILE_GROUP, target, NULL, why)))
		settle(c, a, req, rc, etext);
}

static void do_groups(struct rctx *c)
{
	char lq[GB_ERROR_TEXT_MAX + 8];

	for (size_t i = 0; i < c->listed.n; i++) {
		struct gb_ec2_placement_group_list *l = NULL;
		gb_error_t e;

		if (gb_orch_cloud_groups(c->o->orch, c->listed.v[i], &l, &e)) {
			gb_log_warn("reconcile_groups_unlisted region=%s error=%s",
				    c->listed.v[i], gb_log_q(lq, sizeof(lq), e.text));
			continue;
		}
		for (size_t k = 0; l && k < l->n; k++)
			one_group(c, c->listed.v[i], &l->v[k]);
		gb_ec2_placement_group_list_free(l);
	}
}

/*****************************************************************************
 *  SPOT: the spot prices of what the spot rungs can launch
 *****************************************************************************/

/* The instance types one region is asked for (BORROWED from the config). */
struct spot_ask {
	const char *region;
	struct gb_strv types;
};

struct spot_asks {
	struct spot_ask *v;
	size_t n;
};

static bool spot_ask_add(struct spot_asks *a, const char *region, const char *type)
{
	struct spot_ask *x = NULL, *v;

	for (size_t i = 0; i < a->n && !x; i++)
		if (strcmp(a->v[i].region, region) == 0)
			x = &a->v[i];
	if (!x) {
		if (!(v = realloc(a->v, (a->n + 1) * sizeof(*v))))
			return false;
		a->v = v;
		x = &v[a->n++];
		memset(x, 0, sizeof(*x));
		x->region = region;
	}
	return gb_strv_find(&x->types, type) >= 0 || gb_strv_add(&x->types, type) == GB_E_OK;
}

static void spot_asks_free(struct spot_asks *a)
{
	for (size_t i = 0; i < a->n; i++)
		gb_strv_free(&a->v[i].types);
	free(a->v);
}

/*
 * Every (region, type) a nodeset with a spot rung can launch: its types
 * in its candidate regions (gb_plan_candidates, as its planner sees them).
 * A nodeset whose candidates cannot be made is skipped (logged): its
 * resumes fail with the same message.  RET false: out of memory.
 */
static bool spot_collect(const struct gb_conf *conf, struct spot_asks *a)
{
	char lq[GB_ERROR_TEXT_MAX + 8];

	for (size_t i = 0; i < conf->n_nodesets; i++) {
		const struct gb_conf_nodeset *ns = &conf->nodesets[i];
		struct gb_candidates c;
		gb_error_t e = { 0 };
		bool ok = true;

		if (!gb_conf_nodeset_rung(ns, GB_CAPACITY_SPOT))
			continue;
		if (gb_plan_candidates(conf, ns->home_region, ns->mode, &c, &e)) {
			gb_log_warn("reconcile_spot_skipped nodeset=%s error=%s", ns->name,
				    gb_log_q(lq, sizeof(lq), e.text));
			gb_plan_candidates_clear(&c);
			continue;
		}
		for (size_t r = 0; ok && r < c.n; r++)
			for (size_t t = 0; ok && t < ns->n_instance_types; t++)
				ok = spot_ask_add(a, c.v[r].region->name, ns->instance_types[t]);
		gb_plan_candidates_clear(&c);
		if (!ok)
			return false;
	}
	return true;
}

/* Each type of [x] was asked for within policy.spot_price_ttl (0: never fresh). */
static bool spot_fresh(const struct rctx *c, const struct spot_ask *x)
{
	double ttl = c->o->conf->policy.spot_price_ttl, at;

	if (ttl <= 0)
		return false;
	for (size_t i = 0; i < x->types.n; i++)
		if (gb_state_spot_prices_fetched(c->o->st, x->region, x->types.v[i], &at, NULL) ||
		    at < c->now - ttl || at > c->now)
			return false;
	return true;
}

/* EC2's answer for [x] into the cache: Linux/UNIX pools of the types asked. */
static gb_err_t spot_cache(struct rctx *c, const struct spot_ask *x,
			   const struct gb_ec2_spot_price_list *l, size_t *n_out,
			   gb_error_t *err)
{
	struct gb_spot_price *v = calloc(l->n + 1, sizeof(*v));
	size_t n = 0;
	gb_err_t rc;

	if (!v)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (size_t i = 0; i < l->n; i++) {
		const struct gb_ec2_spot_price *p = &l->v[i];

		if (gb_strcmp0(p->product_description, GB_EC2_PRODUCT_LINUX) ||
		    gb_strv_find(&x->types, p->instance_type) < 0)
			continue;
		v[n++] = (struct gb_spot_price){
			.region = x->region,
			.az = p->availability_zone,
			.instance_type = p->instance_type,
			.usd_per_hour = p->price,
			.seen_at = p->timestamp,
		};
	}
	rc = gb_state_spot_prices_replace(c->o->st, x->region, (const char *const *)x->types.v,
					  x->types.n, v, n, c->now, err);
	free(v);
	*n_out = n;
	return rc;
}

static void spot_region(struct rctx *c, const struct spot_ask *x)
{
	struct gb_ec2_spot_price_list *l = NULL;
	struct gb_reconcile_action *a;
	struct gb_ec2_error ae;
	char why[512], types[256];
	size_t len = 0, n = 0;
	gb_error_t e = { 0 };
	gb_err_t rc;

	types[0] = '\0';
	for (size_t i = 0; i < x->types.n && len < sizeof(types); i++)
		len += (size_t)snprintf(types + len, sizeof(types) - len, "%s%s", i ? "," : "",
					x->types.v[i]);
	memset(&ae, 0, sizeof(ae));
	rc = gb_orch_spot_prices(c->o->orch, x->region, (const char *const *)x->types.v,
				 x->types.n, c->now, &l, &ae, &e);
	if (rc == GB_E_OK)
		rc = spot_cache(c, x, l, &n, &e);
	gb_ec2_spot_price_list_free(l);
	if (rc)
		snprintf(why, sizeof(why), "spot prices of %s (DescribeSpotPriceHistory): kept "
			 "what was cached", types);
	else
		snprintf(why, sizeof(why), "%zu spot price%s of %s (DescribeSpotPriceHistory)", n,
			 n == 1 ? "" : "s", types);
	if ((a = add_action(c, GB_RECONCILE_SPOT, x->region, NULL, why)))
		settle(c, a, NULL, rc, e.text);
}

/*
 * A full pass, not a dry run: once per region, the spot prices in effect
 * of the types the spot rungs can launch there, when one of them is older
 * than policy.spot_price_ttl.  A failure is the region's action's error:
 * cost keeps using what was cached (or the price file).
 */
static gb_err_t do_spot(struct rctx *c, gb_error_t *err)
{
	struct spot_asks a = { 0 };

	if (c->o->dry_run)
		return GB_E_OK;
	if (!spot_collect(c->o->conf, &a)) {
		spot_asks_free(&a);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < a.n; i++)
		if (!spot_fresh(c, &a.v[i]))
			spot_region(c, &a.v[i]);
	spot_asks_free(&a);
	return GB_E_OK;
}

/*****************************************************************************
 *  COOLDOWN: nodes left DOWN by a resume that could not launch
 *****************************************************************************/

/*
 * Every DOWN reason gpuburst sets has a way back (README, "Every DOWN
 * reason and its way back").  Reconcile takes it for the nodes of a
 * nodeset only, never for a node gpuburst does not own:
 *   capacity ("(Code:InsufficientInstanceCapacity) ...", quota, Unfilled)
 *       after policy.ice_cooldown (COOLDOWN);
 *   the cloud refused the launch itself ("(Code:AUTH) ...", "(Code:
 *       CLOUDCONFIG) ...": a missing permission, a bad AMI) after
 *       policy.error_cooldown, doubled for each failed resume of the node
 *       in a row, up to policy.error_cooldown_max (COOLDOWN);
 *   gpuburst's own configuration or state file could not be used, or the
 *       node was in no nodeset, after policy.error_cooldown (RELEASE);
 *   a denied or expired approval at once (RELEASE, do_release).
 */
enum down_why {
	WHY_NONE = 0,
	WHY_CAPACITY,
	WHY_REFUSED,
	WHY_SETUP,
};

/*
 * A launch the cloud refused: EC2's authorization, region-account and
 * configuration codes (UnauthorizedOperation, OptInRequired,
 * InvalidAMIID.NotFound, ...), or the worker's
 * "AUTH"/"CLOUDCONFIG" when a whole request failed so.
 */
static bool refused_code(const char *code)
{
	enum gb_ec2_class cls;

	if (strcmp(code, gb_err_name(GB_E_AUTH)) == 0 ||
	    strcmp(code, gb_err_name(GB_E_CLOUDCONFIG)) == 0)
		return true;
	return gb_ec2_code_class(code, &cls) &&
	       (cls == GB_EC2_CLASS_AUTH || cls == GB_EC2_CLASS_CONFIG ||
		cls == GB_EC2_CLASS_IDEMPOTENT ||
		cls == GB_EC2_CLASS_REGION);
}

static enum down_why down_why(const char *reason, char *code, size_t code_n, char *id,
			      size_t id_n)
{
	code[0] = id[0] = '\0';
	if (!reason)
		return WHY_NONE;
	if (gb_reason_is_capacity(reason, code, code_n, id, id_n))
		return refused_code(code) ? WHY_REFUSED : WHY_CAPACITY;
	if (gb_str_has_prefix(reason, GB_REASON_CONFIG) ||
	    gb_str_has_prefix(reason, GB_REASON_NO_NODESET) ||
	    gb_str_has_prefix(reason, GB_REASON_STATE) ||
	    gb_str_has_prefix(reason, GB_REASON_RESUME_FILE))
		return WHY_SETUP;
	return WHY_NONE;
}

/*
 * The cloud's own code of a refused launch: "(Code:AUTH) (Code:
 * UnauthorizedOperation) ..." names UnauthorizedOperation; else [code].
 */
static const char *cloud_code(const char *reason, const char *code, char *buf, size_t n)
{
	const char *p = strchr(reason + strlen(GB_REASON_CAPACITY_PREFIX), ')'), *end;

	if (p && strncmp(p + 1, " (Code:", 7) == 0 && (end = strchr(p + 8, ')')) &&
	    (size_t)(end - (p + 8)) < n && end > p + 8) {
		memcpy(buf, p + 8, (size_t)(end - (p + 8)));
		buf[end - (p + 8)] = '\0';
		return buf;
	}
	return code;
}

/* Oldest first: the failed requests since the last one that was not. */
static int count_streak(const struct gb_request *r, void *arg)
{
	int *n = arg;

	*n = r->state == GB_RSTATE_FAILED ? *n + 1 : 0;
	return 0;
}

/* The failed resumes of [node] in a row, newest back (at least 1). */
static int failures_in_a_row(gb_state_t *st, const char *node)
{
	struct gb_request_filter f = GB_REQUEST_FILTER_ANY;
	int n = 0;

	f.kind = GB_REQ_RESUME;
	f.node = node;
	f.limit = 16;
	if (gb_state_request_list(st, &f, count_streak, &n, NULL) != GB_E_OK)
		n = 0;
	return n > 0 ? n : 1;
}

/* policy.error_cooldown doubled [failures] - 1 times, at most _max. */
static double backoff(const struct gb_conf_policy *p, int failures)
{
	double cap = p->error_cooldown_max > p->error_cooldown ? p->error_cooldown_max
							       : p->error_cooldown;
	double w = p->error_cooldown;

	for (int i = 1; i < failures && w < cap; i++)
		w *= 2;
	return w < cap ? w : cap;
}

static gb_err_t do_cooldown(struct rctx *c, gb_error_t *err)
{
	const struct gb_conf_policy *p = &c->o->conf->policy;

	for (size_t i = 0; c->nodes && i < c->nodes->n; i++) {
		const struct gb_slurm_node *sn = &c->nodes->v[i];
		struct gb_reconcile_action *a;
		char code[128], ec2[128], id[GB_REQUEST_ID_LEN + 1], detail[400];
		char reason[GB_REASON_MAX];
		const char *named = code;
		enum down_why why;
		char *names[1];
		double start = 0, wait;
		int k = 0;
		gb_err_t rc = GB_E_OK;

		if (!sn->down || !gb_conf_nodeset_for_node(c->o->conf, sn->name))
			continue;	/* not DOWN, or not ours: never touched */
		why = down_why(sn->reason, code, sizeof(code), id, sizeof(id));
		if (why != WHY_CAPACITY && why != WHY_REFUSED)
			continue;
		if (id[0])
			start = prog_request_end(c->o->st, id);
		if (start <= 0)
			start = sn->reason_time;
		if (why == WHY_REFUSED) {
			named = cloud_code(sn->reason, code, ec2, sizeof(ec2));
			k = failures_in_a_row(c->o->st, sn->name);
			wait = backoff(p, k);
		} else {
			wait = p->ice_cooldown;
		}
		if (start + wait > c->now)
			continue;
		if (why == WHY_REFUSED)
			snprintf(detail, sizeof(detail), "DOWN since %.0f s: the cloud refused the "
				 "launch (Code:%s), failed resume %d in a row, retry after %.0f s",
				 c->now - start, named, k, wait);
		else
			snprintf(detail, sizeof(detail), "DOWN for capacity (Code:%s) since %.0f s, "
				 "cool-down %.0f s over", code, c->now - start, wait);
		if (!(a = add_action(c, GB_RECONCILE_COOLDOWN, sn->name, sn->name, detail)))
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		if (!c->o->dry_run) {
			if (why == WHY_REFUSED)
				snprintf(reason, sizeof(reason), "gpuburst: retry after Code:%s "
					 "(failure %d in a row)%s%s", named, k, id[0] ? " req=" : "",
					 id);
			else
				snprintf(reason, sizeof(reason), "gpuburst: cool-down over after "
					 "Code:%s%s%s", code, id[0] ? " req=" : "", id);
			names[0] = sn->name;
			if (prog_slurm_update(c->o->st, id[0] ? id : NULL,
					      GB_SLURM_POWER_DOWN_FORCE, names, NULL, 1, reason))
				rc = GB_E_SLURM;
		}
		settle(c, a, id[0] ? id : NULL, rc, rc ? "Slurm update failed (see the log)" : NULL);
	}
	return GB_E_OK;
}

/*****************************************************************************
 *  EXPIRE and RELEASE: the approval deadlines (gb_policy.h)
 *****************************************************************************/

struct due_scan {
	double now;
	struct gb_strv ids;
};

static int collect_due(const struct gb_approval *a, void *arg)
{
	struct due_scan *d = arg;

	if (a->expires_at > 0 && a->expires_at <= d->now)
		gb_strv_add(&d->ids, a->request_id);
	return 0;
}

/* A dry run only says which approvals are past their deadline. */
static gb_err_t expire_dry(struct rctx *c, gb_error_t *err)
{
	struct due_scan d = { c->now, { 0 } };
	gb_err_t rc;

	rc = gb_state_approval_list(c->o->st, GB_APPROVAL_PENDING, collect_due, &d, err);
	for (size_t i = 0; rc == GB_E_OK && i < d.ids.n; i++) {
		struct gb_reconcile_action *a =
			add_action(c, GB_RECONCILE_EXPIRE, d.ids.v[i], NULL,
				   "approval deadline passed");

		if (!a)
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		else
			settle(c, a, d.ids.v[i], GB_E_OK, NULL);
	}
	gb_strv_free(&d.ids);
	return rc;
}

/*
 * The approval of job [job] (held at submit) expired: the job stays held
 * with the token "expired", or is cancelled (policy.on_approval_expiry).
 */
static gb_err_t expire_held(struct rctx *c, const char *job, gb_error_t *err)
{
	bool cancel = c->o->conf->policy.on_approval_expiry == GB_HELD_CANCEL;
	struct gb_reconcile_action *a;
	char detail[128];
	gb_error_t e = { 0 };
	long id = 0;
	gb_err_t arc;

	snprintf(detail, sizeof(detail), "approval of held job %s expired: %s", job,
		 cancel ? "job cancelled" : "job stays held");
	if (!(a = add_action(c, GB_RECONCILE_EXPIRE, job, NULL, detail)))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	arc = gb_parse_long(job, 1, INT32_MAX, &id);
	if (arc == GB_E_OK)
		arc = gb_slurm_held_act((uint32_t)id, cancel ? GB_SLURM_JOB_CANCEL
							 : GB_SLURM_JOB_HOLD,
					"expired", &e);
	if (arc == GB_E_NOTFOUND)
		arc = GB_E_OK;		/* gone meanwhile: nothing to hold */
	settle(c, a, NULL, arc, e.text);
	return GB_E_OK;
}

/* Held jobs without a request get one, and their approval is asked for. */
static gb_err_t do_held(struct rctx *c, gb_error_t *err)
{
	struct gb_slurm_held_list *l = NULL;
	struct gb_policy_held *v = NULL;
	struct gb_strv created = { 0 };
	char lq[GB_ERROR_TEXT_MAX + 8], tok[64], home[GB_REGION_NAME_MAX], budget[128];
	gb_error_t e = { 0 };
	gb_err_t rc;

	if (gb_slurm_jobs_held(&l, &e)) {
		gb_log_warn("reconcile_no_slurm error=%s note=\"held jobs not read\"",
			    gb_log_q(lq, sizeof(lq), e.text));
		return GB_E_OK;
	}
	if (l->n && !(v = calloc(l->n, sizeof(*v)))) {
		gb_slurm_held_list_free(l);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct gb_slurm_held_job *j = &l->v[i];
		long nodes = 0;
		const char *slash;

		gb_approval_token(j->admin_comment, tok, sizeof(tok));
		if (strncmp(tok, "pending", 7) != 0 || (tok[7] && tok[7] != '/'))
			continue;	/* decided: only kept an operator's hold */
		slash = strchr(tok, '/');
		if (!slash || gb_parse_long(slash + 1, 1, INT32_MAX, &nodes))
			nodes = j->num_nodes ? j->num_nodes : 1;
		v[i] = (struct gb_policy_held){
			.job_id = j->job_id, .user = j->user, .account = j->account,
			.partition = j->partition, .name = j->name, .tres = j->tres,
			.nodes = (int)nodes, .gpus = j->gpus, .time_limit = j->time_limit,
		};
		gb_cost_token(j->admin_comment, &v[i].cost, &v[i].cost_worst);
		if (gb_admin_token(j->admin_comment, GB_BUDGET_KEY, budget, sizeof(budget)) &&
		    budget[0] && !(v[i].budget = strdup(budget))) {
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			goto out;
		}
		if (gb_intent_home_region(j->admin_comment, home, sizeof(home), NULL) == GB_E_OK &&
		    (v[i].home = strdup(home)) == NULL) {
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			goto out;
		}
	}
	/* jobs whose token is not "pending" have job_id 0 in [v]: skipped */
	rc = gb_policy_held_sync(c->o->conf, c->o->st, v, l->n, c->now,
				 c->o->dry_run, &created, err);
	/*
	 * Every job gpuburst holds is an operator's hold, which its user cannot
	 * release: a recorded one, and a denied or expired one (slurmctld makes
	 * a requeue-hold a user hold again once the job's cleaning ends).
	 */
	for (size_t i = 0; rc == GB_E_OK && !c->o->dry_run && i < l->n; i++) {
		if (!l->v[i].user_hold)
			continue;
		if (gb_slurm_job_act(l->v[i].job_id, GB_SLURM_JOB_HOLD, NULL, &e))
			gb_log_warn("held_job job=%u action=admin_hold error=%s",
				    l->v[i].job_id, gb_log_q(lq, sizeof(lq), e.text));
		else
			gb_log_info("held_job job=%u action=admin_hold", l->v[i].job_id);
	}
	for (size_t i = 0; rc == GB_E_OK && i < created.n; i++) {
		struct gb_reconcile_action *a;
		gb_err_t nrc = GB_E_OK;

		if (!(a = add_action(c, GB_RECONCILE_HELD, created.v[i], NULL,
				     "job held at submit: approval requested"))) {
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			break;
		}
		if (!c->o->dry_run)
			nrc = gb_policy_held_notify(c->o->conf, c->o->st, created.v[i], &e);
		if (!c->o->dry_run)
			settle(c, a, created.v[i], nrc, e.text);
	}
out:
	for (size_t i = 0; v && i < l->n; i++) {
		free((char *)v[i].home);
		free((char *)v[i].budget);
	}
	free(v);
	gb_strv_free(&created);
	gb_slurm_held_list_free(l);
	return rc;
}

static gb_err_t do_expire(struct rctx *c, gb_error_t *err)
{
	struct gb_policy_outcome out = { 0 };
	char reason[GB_POLICY_REASON_MAX];
	gb_err_t rc;

	if (c->o->dry_run)
		return expire_dry(c, err);
	rc = gb_policy_expire(c->o->conf, c->o->st, c->now, &out, err);
	gb_policy_reason_expired(reason, sizeof(reason));
	for (size_t i = 0; rc == GB_E_OK && i < out.expired_held_jobs.n; i++)
		rc = expire_held(c, out.expired_held_jobs.v[i], err);
	/* a job whose power-up expired is held first: it must not ask again */
	for (size_t i = 0; i < out.expired_jobs.n; i++) {
		char q[GB_ERROR_TEXT_MAX + 8];
		gb_error_t e = { 0 };
		long id = 0;
		gb_err_t arc = gb_parse_long(out.expired_jobs.v[i], 1, INT32_MAX, &id);

		if (arc == GB_E_OK)
			arc = gb_slurm_held_act((uint32_t)id, GB_SLURM_JOB_REQUEUE_HOLD,
						"expired", &e);
		if (arc && arc != GB_E_NOTFOUND)
			gb_log_warn("held_job job=%s action=requeue_hold error=%s",
				    out.expired_jobs.v[i], gb_log_q(q, sizeof(q), e.text));
		else if (arc == GB_E_OK)
			gb_log_notice("held_job job=%s action=requeue_hold why=expired",
				      out.expired_jobs.v[i]);
	}
	for (size_t i = 0; rc == GB_E_OK && i < out.expired_ids.n; i++) {
		const char *id = out.expired_ids.v[i], *expr = out.expired_exprs.v[i];
		struct gb_strv names = { 0 };
		struct gb_reconcile_action *a;
		char detail[512];
		gb_error_t e = { 0 };
		gb_err_t arc = GB_E_OK;

		if (!*expr)
			continue;	/* a job held at submit: expire_held */
		snprintf(detail, sizeof(detail), "approval expired: nodes %s DOWN (%s)",
			 expr, reason);
		if (!(a = add_action(c, GB_RECONCILE_EXPIRE, id, NULL, detail))) {
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			break;
		}
		arc = gb_slurm_hostlist_expand(expr, 100000, &names, &e);
		if (arc == GB_E_OK &&
		    prog_slurm_update(c->o->st, id, GB_SLURM_DOWN, names.v, NULL,
				      names.n, reason))
			arc = GB_E_SLURM;
		settle(c, a, id, arc, arc == GB_E_SLURM ? "Slurm update failed (see the log)"
							 : e.text);
		gb_strv_free(&names);
	}
	gb_policy_outcome_clear(&out);
	return rc;
}

static bool declined_reason(const char *reason)
{
	return reason && (gb_str_has_prefix(reason, GB_POLICY_REASON_DENIED) ||
			  strcmp(reason, GB_POLICY_REASON_EXPIRED) == 0);
}

/*
 * Denied or expired nodes served their purpose (jobs requeued): release
 * at once.  Nodes a program could not serve (its configuration or the
 * state file unusable, the node in no nodeset then) are released after
 * policy.error_cooldown: this pass could read both, and the node is in a
 * nodeset now.
 */
static gb_err_t do_release(struct rctx *c, gb_error_t *err)
{
	for (size_t i = 0; c->nodes && i < c->nodes->n; i++) {
		const struct gb_slurm_node *sn = &c->nodes->v[i];
		struct gb_reconcile_action *a;
		char detail[GB_REASON_MAX + 96], code[8], id[GB_REQUEST_ID_LEN + 1];
		const char *reason = "gpuburst: released after the approval decision";
		char *names[1];
		gb_err_t rc = GB_E_OK;

		if (!sn->down || !gb_conf_nodeset_for_node(c->o->conf, sn->name))
			continue;	/* not DOWN, or not ours: never touched */
		if (declined_reason(sn->reason)) {
			snprintf(detail, sizeof(detail), "DOWN after \"%s\": power down",
				 sn->reason);
		} else if (down_why(sn->reason, code, sizeof(code), id, sizeof(id)) == WHY_SETUP) {
			if (sn->reason_time + c->o->conf->policy.error_cooldown > c->now)
				continue;
			snprintf(detail, sizeof(detail), "DOWN since %.0f s after \"%s\": the "
				 "configuration and state file are usable and the node is in a "
				 "nodeset now: power down", c->now - sn->reason_time, sn->reason);
			reason = "gpuburst: released: configuration and state file usable again";
		} else {
			continue;
		}
		if (!(a = add_action(c, GB_RECONCILE_RELEASE, sn->name, sn->name, detail)))
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		if (!c->o->dry_run) {
			names[0] = sn->name;
			if (prog_slurm_update(c->o->st, NULL, GB_SLURM_POWER_DOWN_FORCE, names,
					      NULL, 1, reason))
				rc = GB_E_SLURM;
		}
		settle(c, a, NULL, rc, rc ? "Slurm update failed (see the log)" : NULL);
	}
	return GB_E_OK;
}

/*****************************************************************************
 *  BLOCK: a Capacity Block's nodes take no job past its end, and drain
 *****************************************************************************/

struct blocks {
	struct gb_slurm_cb_block *v;	/* ids, nodes owned here */
	size_t n;
	struct gb_strv *nodes;		/* per block */
	struct gb_slurm_resv *resvs;	/* Slurm's gpuburst_cb_*, strings owned */
	size_t n_resvs;
	bool nomem;
};

static void blocks_free(struct blocks *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free((char *)b->v[i].id);
		gb_strv_free(&b->nodes[i]);
	}
	for (size_t i = 0; i < b->n_resvs; i++) {
		free((char *)b->resvs[i].name);
		free((char *)b->resvs[i].nodes);
		free((char *)b->resvs[i].comment);
	}
	free(b->v);
	free(b->nodes);
	free(b->resvs);
}

/* A live instance in a Capacity Block: its node joins the block's. */
static int block_instance(const struct gb_instance *in, void *arg)
{
	struct blocks *b = arg;
	size_t k;

	if (!in->node || !in->capacity_target)
		return 0;
	for (k = 0; k < b->n && strcmp(b->v[k].id, in->capacity_target); k++)
		;
	if (k == b->n) {
		struct gb_slurm_cb_block *v = realloc(b->v, (k + 1) * sizeof(*v));
		struct gb_strv *nv = v ? realloc(b->nodes, (k + 1) * sizeof(*nv)) : NULL;

		if (v)
			b->v = v;
		if (!v || !nv || !(b->v[k].id = strdup(in->capacity_target))) {
			if (nv)
				b->nodes = nv;
			b->nomem = true;
			return 1;
		}
		b->nodes = nv;
		memset(&b->nodes[k], 0, sizeof(b->nodes[k]));
		b->v[k].end = 0;
		b->n++;
	}
	b->nomem |= gb_strv_find(&b->nodes[k], in->node) < 0 &&
		    gb_strv_add(&b->nodes[k], in->node) != GB_E_OK;
	return b->nomem;
}

/* The block's end, as DescribeCapacityReservations said (the cache). */
static int block_end(const struct gb_reservation *g, void *arg)
{
	struct blocks *b = arg;

	for (size_t k = 0; k < b->n; k++)
		if (strcmp(b->v[k].id, g->id) == 0 && g->end_at > 0)
			b->v[k].end = g->end_at;
	return 0;
}

static int block_resv(const struct gb_slurm_resv *r, void *arg)
{
	struct blocks *b = arg;
	struct gb_slurm_resv *v = realloc(b->resvs, (b->n_resvs + 1) * sizeof(*v));

	if (!v) {
		b->nomem = true;
		return 1;
	}
	b->resvs = v;
	v[b->n_resvs] = (struct gb_slurm_resv){
		gb_strdup0(r->name), gb_strdup0(r->nodes), r->start, r->end,
		gb_strdup0(r->comment) };
	b->nomem |= !v[b->n_resvs].name || !v[b->n_resvs].nodes ||
		    (r->comment && !v[b->n_resvs].comment);
	b->n_resvs++;
	return b->nomem;
}

/*
 * The blocks whose end is unknown (the cache lost it) are left alone, and
 * so are their Slurm reservations: no drain is timed on nothing.  OUT
 * [in]'s blocks and reservations: the others (b->v and b->resvs reordered).
 */
static void known_blocks(struct blocks *b, struct gb_slurm_cb_in *in)
{
	char name[GB_SLURM_CB_ID_MAX + sizeof(GB_SLURM_CB_RESV_PREFIX)];
	size_t nb = 0, nr = b->n_resvs;

	for (size_t k = 0; k < b->n; k++) {
		struct gb_slurm_cb_block t = b->v[k];
		struct gb_strv tn = b->nodes[k];

		b->v[k].nodes = b->nodes[k].v;
		b->v[k].n_nodes = b->nodes[k].n;
		if (b->v[k].end > 0) {	/* swap it to the front */
			t = b->v[k];
			b->v[k] = b->v[nb];
			b->v[nb] = t;
			b->nodes[k] = b->nodes[nb];
			b->nodes[nb++] = tn;
			continue;
		}
		gb_log_warn("reconcile_block_unknown id=%s nodes=%zu note=\"no end known: left alone\"",
			    t.id, tn.n);
		snprintf(name, sizeof(name), "%s%s", GB_SLURM_CB_RESV_PREFIX, t.id);
		for (size_t i = 0; i < nr; i++) {
			if (strcmp(b->resvs[i].name, name))
				continue;
			struct gb_slurm_resv r = b->resvs[i];

			b->resvs[i] = b->resvs[--nr];
			b->resvs[nr] = r;
			break;
		}
	}
	*in = (struct gb_slurm_cb_in){ .blocks = b->v, .n_blocks = nb, .resvs = b->resvs,
				       .n_resvs = nr };
}

/* Carry out one action of the plan. */
static gb_err_t block_act(struct rctx *c, const struct gb_slurm_cb_action *a,
			  gb_error_t *e)
{
	switch (a->act) {
	case GB_SLURM_CB_ENSURE:
		return gb_slurm_resv_ensure(&a->resv, NULL, e);
	case GB_SLURM_CB_POWER_DOWN:
		return prog_slurm_update(c->o->st, NULL, GB_SLURM_POWER_DOWN_ASAP, a->nodes.v,
					 NULL, a->nodes.n, a->reason) ?
		       gb_errorf(e, GB_E_SLURM, "Slurm update failed (see the log)") : GB_E_OK;
	case GB_SLURM_CB_DELETE:
		return gb_slurm_resv_delete(a->resv.name, e);
	}
	return GB_E_OK;
}

/* What the blocks' nodes need in Slurm, done (gb_slurm_cb_plan). */
static gb_err_t do_blocks(struct rctx *c, gb_error_t *err)
{
	struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
	struct blocks b = { 0 };
	struct gb_slurm_cb_plan *plan = NULL;
	struct gb_slurm_cb_in in = { 0 };
	gb_error_t e = { 0 };
	gb_err_t rc;

	if (!c->nodes)
		return GB_E_OK;	/* Slurm did not answer: reported already */
	f.alive = true;
	f.capacity = "capacity-block";
	if ((rc = gb_state_instance_list(c->o->st, &f, block_instance, &b, err)) ||
	    (rc = gb_state_reservation_list(c->o->st, NULL, 0, block_end, &b, err)))
		goto out;
	if (b.nomem || gb_slurm_resv_list(GB_SLURM_CB_RESV_PREFIX, block_resv, &b, &e)) {
		if (!b.nomem)
			gb_log_warn("reconcile_blocks_skipped error=%s", e.text);
		rc = b.nomem ? gb_errorf(err, GB_E_NOMEM, "out of memory") : GB_E_OK;
		goto out;
	}
	known_blocks(&b, &in);
	in.nodes = c->nodes;
	in.margin = c->o->conf->policy.capacity_block_margin;
	in.now = c->now;
	for (size_t k = 0; k < in.n_blocks; k++)
		gb_log_debug("reconcile_block id=%s end=%.0f nodes=%zu ends_in=%.0f margin=%.0f",
			     in.blocks[k].id, in.blocks[k].end, in.blocks[k].n_nodes,
			     in.blocks[k].end - in.now, in.margin);
	if ((rc = gb_slurm_cb_plan(&in, &plan, err)))
		goto out;
	for (size_t i = 0; i < plan->n; i++) {
		const struct gb_slurm_cb_action *pa = &plan->v[i];
		struct gb_reconcile_action *a;
		char detail[GB_REASON_MAX + 160];
		gb_err_t arc = GB_E_OK;

		snprintf(detail, sizeof(detail), "%s %s%s%s", gb_slurm_cb_act_name(pa->act),
			 pa->act == GB_SLURM_CB_POWER_DOWN ? "nodes" : pa->resv.name,
			 pa->act == GB_SLURM_CB_DELETE ? "" : ": ",
			 pa->act == GB_SLURM_CB_DELETE ? "" : pa->reason);
		if (!(a = add_action(c, GB_RECONCILE_BLOCK, pa->block, NULL, detail))) {
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			break;
		}
		if (!c->o->dry_run)
			arc = block_act(c, pa, &e);
		settle(c, a, NULL, arc, arc ? e.text : NULL);
	}
out:
	gb_slurm_cb_plan_free(plan);
	blocks_free(&b);
	return rc;
}

/*****************************************************************************
 *  PRUNE: finished requests past policy.retention (gb_state_prune)
 *****************************************************************************/

static const char *plural(long n)
{
	return n == 1 ? "" : "s";
}

static long pruned_rows(const struct gb_state_prune_counts *n)
{
	return n->request_nodes + n->plans + n->attempts + n->approvals + n->events +
	       n->instances;
}

static gb_err_t do_prune(struct rctx *c, gb_error_t *err)
{
	const struct gb_state_prune_counts *n = &c->rep->pruned;
	double keep = c->o->conf->policy.retention;
	struct gb_reconcile_action *a;
	char age[64], detail[320];
	gb_error_t e = { 0 };
	gb_err_t rc;

	if (keep <= 0)
		return GB_E_OK;		/* off: everything is kept */
	rc = gb_state_prune(c->o->st, c->now - keep, GB_RECONCILE_PRUNE_MAX, c->o->dry_run,
			    &c->rep->pruned, &e);
	if (rc == GB_E_OK && n->requests == 0 && n->global_events == 0)
		return GB_E_OK;
	snprintf(age, sizeof(age), "%g day%s", keep / 86400, keep == 86400 ? "" : "s");
	if (rc)
		snprintf(detail, sizeof(detail), "finished requests older than %s (policy.retention)",
			 age);
	else
		snprintf(detail, sizeof(detail), "%ld finished request%s older than %s "
			 "(policy.retention) and %ld row%s of theirs (%ld event%s, %ld instance "
			 "record%s); %ld global event%s", n->requests, plural(n->requests), age,
			 pruned_rows(n), plural(pruned_rows(n)), n->events, plural(n->events),
			 n->instances, plural(n->instances), n->global_events,
			 plural(n->global_events));
	if (!(a = add_action(c, GB_RECONCILE_PRUNE, "state file", NULL, detail)))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	settle(c, a, NULL, rc, e.text);
	return GB_E_OK;
}

/*
 * SPEND: the month's spend per budget scope, for the job_submit plugin
 * (<state_dir>/spend; only when policy.budgets is set).  A failure is
 * logged: the plugin keeps judging with the previous summary.
 */
static void do_spend(struct rctx *c)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	gb_error_t e;

	if (gb_policy_spend_refresh(c->o->conf, c->o->st, c->now, &e))
		gb_log_error("spend_summary_failed error=%s", gb_log_q(lq, sizeof(lq), e.text));
}

/*****************************************************************************
 *  The pass
 *****************************************************************************/

static void ctx_free(struct rctx *c)
{
	for (size_t i = 0; i < c->n_ci; i++) {
		free(c->ci[i].region);
		free(c->ci[i].id);
		free(c->ci[i].state);
		free(c->ci[i].ip);
		free(c->ci[i].node);
		free(c->ci[i].request);
		free(c->ci[i].agent);
	}
	free(c->ci);
	for (size_t i = 0; i < c->n_rec; i++) {
		free(c->rec[i].request);
		free(c->rec[i].region);
		free(c->rec[i].id);
		free(c->rec[i].node);
		free(c->rec[i].ip);
		free(c->rec[i].az);
		free(c->rec[i].type);
		free(c->rec[i].capacity);
		free(c->rec[i].agent);
	}
	free(c->rec);
	gb_strv_free(&c->listed);
	if (c->nodes_owned)
		gb_slurm_node_list_free(c->nodes);
}

/*
 * The pass as the last run of "reconcile" (a full pass) or
 * "reconcile_cheap" in the state file (runs, schema 8): the metrics and
 * `gpuburstctl why` read it.  Its findings by kind, and why a part was
 * skipped.  A failure to record is logged, never the pass's.
 */
static void record_run(struct rctx *c, gb_err_t pass_rc)
{
	const struct gb_reconcile_opts *o = c->o;
	struct gb_reconcile_report *rep = c->rep;
	json_t *d = json_object();
	char *detail = NULL, lq[GB_ERROR_TEXT_MAX + 8];
	struct gb_run r = {
		.name = o->cheap || !o->orch ? "reconcile_cheap" : "reconcile",
		.started_at = c->now, .ok = pass_rc == GB_E_OK,
		.actions = (long)rep->n, .failed = (long)rep->failed,
	};
	gb_error_t e;

	r.finished_at = gb_time_now();
	if (r.finished_at < r.started_at)
		r.finished_at = r.started_at;
	for (int k = 0; d && k < GB_RECONCILE_KIND_COUNT; k++)
		if (rep->counts[k])
			json_object_set_new(d, gb_reconcile_kind_name((enum gb_reconcile_kind)k),
					    json_integer((json_int_t)rep->counts[k]));
	if (d && rep->cloud_error)
		json_object_set_new(d, "cloud_error", json_string(rep->cloud_error));
	if (d && rep->slurm_error)
		json_object_set_new(d, "slurm_error", json_string(rep->slurm_error));
	if (d)
		detail = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
	r.detail = detail;
	if (gb_state_run_record(o->st, &r, &e))
		gb_log_warn("reconcile_run_not_recorded error=%s", gb_log_q(lq, sizeof(lq), e.text));
	free(detail);
	json_decref(d);
}

/*
 * The lock of the passes that act: reconcile.lock in the directory of the
 * state file, flock'ed.  A new file gets that directory's owner and group
 * when root makes it (gpuburstctl as root, the worker as SlurmUser share
 * it).  RET fd, or -1 with [*rc] (GB_E_OK: busy and not to wait, the
 * pass is skipped).
 */
static int reconcile_lock(const struct gb_reconcile_opts *o, gb_err_t *rc,
			  gb_error_t *err)
{
	double wait = o->lock_wait == 0 ? GB_RECONCILE_LOCK_WAIT : o->lock_wait;
	double until = gb_time_mono() + (wait > 0 ? wait : 0);
	char path[4096], dirname[4096];
	struct stat dir;
	int fd;

	gb_state_dir(o->st, dirname, sizeof(dirname));
	snprintf(path, sizeof(path), "%s/%s", dirname, GB_RECONCILE_LOCK);
	fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (fd < 0) {
		*rc = gb_errorf(err, GB_E_IO, "reconcile: cannot open its lock %s: %s", path,
				strerror(errno));
		return -1;
	}
	if (geteuid() == 0 && stat(dirname, &dir) == 0 &&
	    fchown(fd, dir.st_uid, dir.st_gid) != 0)
		gb_log_warn("reconcile_lock_owner file=%s error=%s", path, GB_LOG_Q(strerror(errno)));
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK) {
			*rc = gb_errorf(err, GB_E_IO, "reconcile: flock %s: %s", path,
					strerror(errno));
		} else if (wait < 0) {
			gb_log_debug("reconcile_busy lock=%s note=\"another pass runs: skipped\"", path);
			*rc = GB_E_OK;
		} else if (gb_time_mono() >= until) {
			*rc = gb_errorf(err, GB_E_BUSY,
					"reconcile: another pass has held %s for more than %.0f s",
					path, wait);
		} else {
			gb_time_sleep(0.05);
			continue;
		}
		close(fd);
		return -1;
	}
	return fd;
}

gb_err_t gb_reconcile_run(const struct gb_reconcile_opts *o,
			  struct gb_reconcile_report *rep, gb_error_t *err)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	struct rctx c = { .o = o, .rep = rep, .now = o->now };
	int lock = -1;
	gb_error_t e;
	gb_err_t rc = GB_E_OK;

	/* before anything is read: what it reads, the pass before has acted on */
	if (!o->dry_run && !o->only_notice && (lock = reconcile_lock(o, &rc, err)) < 0) {
		rep->skipped = rc == GB_E_OK;
		return rc;
	}
	if (c.now <= 0)
		c.now = gb_time_now();	/* when it runs, not when it began to wait */
	if (!o->only_notice && ((rc = do_stuck(&c, err)) || (rc = do_expire(&c, err))))
		goto out;
	if (o->nodes) {
		c.nodes = (struct gb_slurm_node_list *)o->nodes;
	} else if (gb_slurm_nodes_load(&c.nodes, &e)) {
		gb_log_warn("reconcile_no_slurm error=%s note=\"node checks skipped\"",
			    gb_log_q(lq, sizeof(lq), e.text));
		c.nodes = NULL;
		/* NULL when out of memory: the log has it */
		rep->slurm_error = strdup(e.text);
	} else {
		c.nodes_owned = true;
	}
	if (o->only_notice) {
		rc = do_notice(&c, err);
		goto out;
	}
	if (!o->cheap && o->orch) {
		list_cloud(&c);
		if ((rc = read_records(&c, err)))
			goto out;
		do_running(&c);
		keep_agent_tags(&c);
		/* before LOST: a reclaimed spot instance's record is still live */
		if ((rc = do_notice(&c, err)) || (rc = do_lost(&c, err)) ||
		    (rc = do_orphans(&c, err)))
			goto out;
		do_groups(&c);
		if ((rc = do_spot(&c, err)))
			goto out;
	} else if ((rc = do_notice(&c, err))) {
		goto out;
	}
	/* no cloud call: the cheap pass (the worker's too) records them */
	if ((rc = do_held(&c, err)))
		goto out;
	if ((rc = do_blocks(&c, err)) == GB_E_OK && (rc = do_cooldown(&c, err)) == GB_E_OK)
		rc = do_release(&c, err);
	if (rc == GB_E_OK && o->prune)
		rc = do_prune(&c, err);
	if (rc == GB_E_OK && !o->dry_run)
		do_spend(&c);
out:
	if (!o->dry_run && !o->only_notice)
		record_run(&c, rc);
	ctx_free(&c);
	if (lock >= 0)
		close(lock);	/* and the lock with it */
	return rc;
}
