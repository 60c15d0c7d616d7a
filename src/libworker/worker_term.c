/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * worker_term.c - suspend, resume-fail and manual terminate requests, and
 * the terminate flow gpuburstctl terminate runs too (gb_worker_terminate_now)
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "gb_util.h"
#include "gb_worker.h"
#include "prog_int.h"

static int any_live(const struct gb_instance *in, void *arg)
{
	(void)in;
	*(bool *)arg = true;
	return 1;
}

/* The nodes of [nodes] that have a live instance in the state file. */
static gb_err_t live_nodes(gb_state_t *st, const struct gb_strv *nodes,
			   struct gb_strv *out, gb_error_t *err)
{
	for (size_t i = 0; i < nodes->n; i++) {
		struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
		bool live = false;
		gb_err_t rc;

		f.node = nodes->v[i];
		f.alive = true;
		if ((rc = gb_state_instance_list(st, &f, any_live, &live, err)))
			return rc;
		if (live && gb_strv_add(out, nodes->v[i]))
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	return GB_E_OK;
}

/* A list of nodes that share one Slurm update (same action and reason). */
struct bucket {
	int action;
	char reason[GB_REASON_MAX];
	struct gb_strv nodes;
};

static gb_err_t bucket_add(struct bucket **v, size_t *n, int action,
			   const char *reason, const char *node)
{
	struct bucket *b = NULL;

	for (size_t i = 0; i < *n && !b; i++) {
		if ((*v)[i].action == action && strcmp((*v)[i].reason, reason) == 0)
			b = &(*v)[i];
	}
	if (!b) {
		struct bucket *nv = realloc(*v, (*n + 1) * sizeof(*nv));

		if (!nv)
			return GB_E_NOMEM;
		*v = nv;
		b = &nv[(*n)++];
		memset(b, 0, sizeof(*b));
		b->action = action;
		snprintf(b->reason, sizeof(b->reason), "%s", reason);
	}
	return gb_strv_add(&b->nodes, node);
}

/*
 * After ResumeTimeout slurmctld leaves a node DOWN+POWERED_DOWN with
 * "ResumeTimeout reached" (slurm-lab §5) until someone acts; a plain
 * state=resume would leave it POWERED_DOWN+NOT_RESPONDING and
 * unschedulable (pitfall 10), so: power_down_force -> idle~.  Two kinds of
 * nodes stay DOWN: nodes in no nodeset (nothing can back them) and nodes in
 * their capacity cool-down, whose reason slurmctld overwrote: it is put
 * back, and reconcile returns them when the cool-down is over.
 */
static void recover_nodes(struct wthread *t, const struct gb_request *req,
			  const struct gb_strv *nodes)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	const struct gb_conf *conf = t->w->conf;
	struct gb_slurm_node_list *sl = NULL;
	struct bucket *b = NULL;
	size_t nb = 0;
	char reason[GB_REASON_MAX], back[GB_REASON_MAX];
	double now = gb_time_now(), ended;
	gb_error_t e;

	if (gb_slurm_nodes_load(&sl, &e)) {
		gb_log_error("resume_fail_recover_skipped req=%s error=%s", req->id,
			     gb_log_q(lq, sizeof(lq), e.text));
		return;
	}
	snprintf(back, sizeof(back), "gpuburst: back in service after a failed resume req=%s",
		 req->id);
	for (size_t i = 0; i < nodes->n; i++) {
		const struct gb_slurm_node *sn = gb_slurm_node_find(sl, nodes->v[i]);
		int action = GB_SLURM_POWER_DOWN_FORCE;
		const char *why = back;

		if (!sn || !sn->down)
			continue;	/* Slurm has moved on: leave it */
		if (!gb_conf_nodeset_for_node(conf, nodes->v[i])) {
			prog_reason_unknown(conf, reason, sizeof(reason));
			action = GB_SLURM_DOWN;
			why = reason;
		} else if (prog_capacity_marker(t->st, conf, nodes->v[i], now, reason,
						sizeof(reason), &ended)) {
			action = GB_SLURM_DOWN;
			why = reason;
		}
		if (bucket_add(&b, &nb, action, why, nodes->v[i])) {
			gb_log_error("resume_fail_recover req=%s error=\"out of memory\"", req->id);
			break;
		}
	}
	for (size_t i = 0; i < nb; i++) {
		prog_slurm_update(t->st, req->id, b[i].action, b[i].nodes.v, NULL,
				  b[i].nodes.n, b[i].reason);
		gb_strv_free(&b[i].nodes);
	}
	free(b);
	gb_slurm_node_list_free(sl);
}

static const char *term_reason(enum gb_request_kind kind)
{
	switch (kind) {
	case GB_REQ_SUSPEND:
		return "suspended by Slurm (SuspendProgram)";
	case GB_REQ_RESUME_FAIL:
		return "resume failed: the node did not register within ResumeTimeout";
	default:
		return "terminated by an administrator";
	}
}

/* Slurm's update of [nodes], or its record as not made ([no_slurm]). */
static void slurm_update(gb_state_t *st, const struct gb_worker_term *t, int action,
			 const struct gb_strv *nodes, const char *reason, size_t *failed)
{
	if (t->no_slurm)
		*failed += prog_slurm_not_updated(st, t->req_id, action, nodes->v, nodes->n,
						  reason, t->no_slurm);
	else
		*failed += prog_slurm_update(st, t->req_id, action, nodes->v, NULL, nodes->n,
					     reason);
}

/*
 * The nodes Slurm still has up on the instances just terminated go DOWN
 * (their jobs requeue or fail now) and then power_down_force (idle~ again).
 */
static void end_jobs(gb_state_t *st, struct gb_worker_term *t, const struct gb_strv *nodes)
{
	struct gb_slurm_node_list *l = NULL;
	struct gb_strv up = { 0 };
	char reason[GB_REASON_MAX];
	gb_error_t e = { 0 };

	snprintf(reason, sizeof(reason), "%s%s req=%s", GB_REASON_PREFIX, t->reason, t->req_id);
	if (t->no_slurm || gb_slurm_nodes_load(&l, &e)) {
		t->slurm_failed += prog_slurm_not_updated(st, t->req_id, GB_SLURM_DOWN, nodes->v,
							  nodes->n, reason,
							  t->no_slurm ? t->no_slurm : e.text);
		return;
	}
	for (size_t i = 0; i < nodes->n; i++) {
		const struct gb_slurm_node *sn = gb_slurm_node_find(l, nodes->v[i]);

		if (sn && !sn->powered_down && gb_strv_add(&up, nodes->v[i])) {
			t->slurm_failed += prog_slurm_not_updated(st, t->req_id, GB_SLURM_DOWN,
								  nodes->v, nodes->n, reason,
								  "out of memory");
			goto out;
		}
	}
	slurm_update(st, t, GB_SLURM_DOWN, &up, reason, &t->slurm_failed);
	slurm_update(st, t, GB_SLURM_POWER_DOWN_FORCE, &up, reason, &t->slurm_failed);
out:
	gb_strv_free(&up);
	gb_slurm_node_list_free(l);
}

gb_err_t gb_worker_terminate_now(gb_orch_t *orch, gb_state_t *st,
				 const struct gb_strv *nodes, struct gb_worker_term *t,
				 gb_error_t *err)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	struct gb_strv live = { 0 };
	gb_err_t rc;

	t->terminated = 0;
	t->live = 0;
	t->slurm_failed = 0;
	if ((rc = live_nodes(st, nodes, &live, err)))
		goto out;
	t->live = live.n;
	if (live.n == 0)
		goto out;
	rc = gb_orch_terminate(orch, st, t->req_id, (const char *const *)live.v, live.n,
			       t->reason, t->flags, &t->terminated, err);
	if (rc)
		gb_log_error("terminate_failed req=%s nodes=%zu terminated=%d error=%s",
			     t->req_id, live.n, t->terminated, gb_log_q(lq, sizeof(lq), err->text));
	/* Retried unless [once]: what was terminated is no longer alive. */
	if (rc && !t->once)
		goto out;
	/* DOWN first (Slurm ends the jobs through the old address), then
	 * the addresses that are gone are cleared */
	if (t->once)
		end_jobs(st, t, &live);
	slurm_update(st, t, PROG_CLEAR_ADDR, &live, NULL, &t->slurm_failed);
	/* a node of several types may be any of them again */
	t->slurm_failed += prog_slurm_types(st, gb_orch_conf(orch), t->req_id, live.v, NULL,
					    live.n);
out:
	gb_strv_free(&live);
	return rc;
}

gb_err_t worker_term(struct wthread *t, const struct gb_request *req,
		     struct gb_strv *nodes, gb_error_t *err)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	struct gb_worker_term wt = {
		.req_id = req->id, .reason = term_reason(req->kind),
		.flags = req->kind == GB_REQ_RESUME_FAIL ? GB_ORCH_TERM_FAILURE : 0,
	};
	char reason[256];
	gb_err_t rc;

	if ((rc = gb_worker_terminate_now(t->w->orch, t->st, nodes, &wt, err)))
		return rc;
	if (req->kind == GB_REQ_RESUME_FAIL)
		recover_nodes(t, req, nodes);
	snprintf(reason, sizeof(reason), "terminated %d instances; %zu of %zu nodes had none",
		 wt.terminated, nodes->n - wt.live, nodes->n);
	if (gb_state_request_finish(t->st, req->id, GB_RSTATE_DONE, GB_RESULT_SUCCESS, 0,
				    reason, err))
		gb_log_error("request_finish_failed req=%s error=%s", req->id,
			     gb_log_q(lq, sizeof(lq), err->text));
	/* the work is done; reconcile settles the row */
	gb_log_info("%s_done req=%s nodes=%s %s", gb_request_kind_name(req->kind), req->id,
		    req->nodes, reason);
	return GB_E_OK;
}
