/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * worker_term.c - suspend, resume-fail and manual terminate requests
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "gb_util.h"
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
	const struct gb_conf *conf = t->w->conf;
	struct gb_slurm_node_list *sl = NULL;
	struct bucket *b = NULL;
	size_t nb = 0;
	char reason[GB_REASON_MAX], back[GB_REASON_MAX];
	double now = gb_time_now(), ended;
	gb_error_t e;

	if (gb_slurm_nodes_load(&sl, &e)) {
		gb_log_error("resume_fail_recover_skipped req=%s error=\"%s\"", req->id, e.text);
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

gb_err_t worker_term(struct wthread *t, const struct gb_request *req,
		     struct gb_strv *nodes, gb_error_t *err)
{
	struct gb_strv live = { 0 };
	unsigned flags = req->kind == GB_REQ_RESUME_FAIL ? GB_ORCH_TERM_FAILURE : 0;
	char reason[256];
	int n_term = 0;
	gb_err_t rc;

	if ((rc = live_nodes(t->st, nodes, &live, err)))
		goto out;
	if (live.n) {
		rc = gb_orch_terminate(t->w->orch, t->st, req->id,
				       (const char *const *)live.v, live.n,
				       term_reason(req->kind), flags, &n_term, err);
		if (rc) {
			/* Retried: what was terminated is no longer alive. */
			gb_log_error("terminate_failed req=%s nodes=%zu terminated=%d error=\"%s\"",
				     req->id, live.n, n_term, err->text);
			goto out;
		}
		prog_slurm_update(t->st, req->id, PROG_CLEAR_ADDR, live.v, NULL, live.n, NULL);
	}
	if (req->kind == GB_REQ_RESUME_FAIL)
		recover_nodes(t, req, nodes);
	snprintf(reason, sizeof(reason), "terminated %d instances; %zu of %zu nodes had none",
		 n_term, nodes->n - live.n, nodes->n);
	if (gb_state_request_finish(t->st, req->id, GB_RSTATE_DONE, GB_RESULT_SUCCESS, 0,
				    reason, err)) {
		gb_log_error("request_finish_failed req=%s error=\"%s\"", req->id, err->text);
		rc = GB_E_OK;	/* the work is done; reconcile settles the row */
	}
	gb_log_info("%s_done req=%s nodes=%s %s", gb_request_kind_name(req->kind), req->id,
		    req->nodes, reason);
out:
	gb_strv_free(&live);
	return rc;
}
