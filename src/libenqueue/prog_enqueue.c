/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_enqueue.c - nodes to requests, the approval policy, one transaction
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_hostlist.h"
#include "gb_log.h"
#include "gb_policy.h"
#include "gb_prog.h"
#include "gb_slurm.h"
#include "gb_slurmconf.h"
#include "gb_util.h"

/*****************************************************************************
 *  Grouping
 *****************************************************************************/

static gb_err_t new_group(struct gb_prog_groups *out,
			  const struct gb_conf_nodeset *ns,
			  const struct gb_resume_group *rg, size_t *idx)
{
	struct gb_prog_group *v = realloc(out->v, (out->n + 1) * sizeof(*v));

	if (!v)
		return GB_E_NOMEM;
	out->v = v;
	memset(&v[out->n], 0, sizeof(v[out->n]));
	v[out->n].ns = ns;
	v[out->n].job_id = rg->job_id;
	v[out->n].raw = rg->raw;
	*idx = out->n++;
	return GB_E_OK;
}

/*
 * The nodes of one job: one open group per nodeset (index into out->v, or
 * SIZE_MAX), a new one when the open one is full.
 */
static gb_err_t group_job(const struct gb_conf *conf,
			  const struct gb_resume_group *rg,
			  struct gb_prog_groups *out)
{
	size_t *open = malloc((conf->n_nodesets ? conf->n_nodesets : 1) * sizeof(*open));
	size_t max = conf->policy.max_request_nodes > 0 ?
		     (size_t)conf->policy.max_request_nodes : 1000;
	const struct gb_conf_nodeset *last = NULL;
	gb_err_t rc = GB_E_OK;

	if (!open)
		return GB_E_NOMEM;
	for (size_t i = 0; i < conf->n_nodesets; i++)
		open[i] = SIZE_MAX;
	for (size_t i = 0; i < rg->nodes.n && rc == GB_E_OK; i++) {
		const char *node = rg->nodes.v[i];
		const struct gb_conf_nodeset *ns;
		size_t k;

		/* consecutive nodes are usually of one nodeset: try it first */
		if (last && gb_hostlist_match(last->pattern_, node))
			ns = last;
		else
			ns = gb_conf_nodeset_for_node(conf, node);
		if (!ns) {
			rc = gb_strv_add(&out->unknown, node);
			continue;
		}
		last = ns;
		k = (size_t)(ns - conf->nodesets);
		if (open[k] == SIZE_MAX || out->v[open[k]].nodes.n >= max)
			rc = new_group(out, ns, rg, &open[k]);
		if (rc == GB_E_OK)
			rc = gb_strv_add(&out->v[open[k]].nodes, node);
	}
	free(open);
	return rc;
}

gb_err_t gb_prog_group_nodes(const struct gb_conf *conf,
			     const struct gb_resume_split *split,
			     struct gb_prog_groups *out, gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < split->n_groups && rc == GB_E_OK; i++)
		rc = group_job(conf, &split->groups[i], out);
	if (rc) {
		gb_prog_groups_free(out);
		return gb_errorf(err, rc, "grouping nodes: out of memory");
	}
	return GB_E_OK;
}

void gb_prog_groups_free(struct gb_prog_groups *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++)
		gb_strv_free(&g->v[i].nodes);
	free(g->v);
	gb_strv_free(&g->unknown);
	memset(g, 0, sizeof(*g));
}

/*****************************************************************************
 *  Writing, with the approval policy (gb_policy.h) deciding each row's state
 *****************************************************************************/

static gb_err_t build_rows(const struct gb_prog_groups *g,
			   struct gb_request *reqs, char **nodes,
			   gb_error_t *err)
{
	for (size_t i = 0; i < g->n; i++) {
		const struct gb_prog_group *gr = &g->v[i];
		struct gb_request *req = &reqs[i];
		gb_err_t rc;

		if ((rc = gb_slurm_hostlist_compress(gr->nodes.v, gr->nodes.n,
						     &nodes[i], err)))
			return rc;
		req->kind = GB_REQ_RESUME;
		req->nodeset = gr->ns->name;
		req->job_id = gr->job_id;
		req->nodes = nodes[i];
		req->node_count = (int)gr->nodes.n;
		req->instance_type = gr->ns->instance_type;
		req->home_region = gr->ns->home_region;
		req->input = gr->raw;
		req->defer_node_index = true;	/* the worker indexes: see gb_worker.h */
	}
	return GB_E_OK;
}

static gb_err_t add_row(gb_state_t *st, struct gb_request *req,
			const struct gb_policy_verdict *v, const char *source,
			struct gb_strv *ids, gb_error_t *err)
{
	char detail[GB_POLICY_WHY_MAX + 512], qn[256], qw[GB_POLICY_WHY_MAX + 8];
	double expires_at = req->expires_at;
	gb_err_t rc;

	if ((rc = gb_state_request_add(st, req, err)))
		return rc;
	req->expires_at = expires_at;	/* add does not touch it; be sure */
	snprintf(detail, sizeof(detail), "state=%s job=%lld nodeset=%s nodes=%s count=%d source=%s%s%s",
		 gb_request_state_name(req->state), (long long)req->job_id, req->nodeset,
		 gb_log_q(qn, sizeof(qn), req->nodes), req->node_count, source,
		 v->needs_approval ? " why=" : "",
		 v->needs_approval ? gb_log_q(qw, sizeof(qw), v->why) : "");
	if ((rc = gb_state_event_add(st, req->id, "enqueue", detail, err)))
		return rc;
	if (v->needs_approval && (rc = gb_policy_record(st, req, v, err)))
		return rc;
	if (ids && gb_strv_add(ids, req->id))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	return GB_E_OK;
}

/*
 * slurm.conf gives ResumeTimeout (approval deadlines, the per-job counting
 * window).  The fast path reads it, well under a millisecond; without it
 * Slurm's defaults apply.
 */
static bool read_slurmconf(struct gb_slurmconf *sc)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	gb_error_t e = { 0 };

	if (gb_slurmconf_read(gb_slurmconf_path(true), sc, &e) == GB_E_OK)
		return true;
	gb_log_warn("slurm_conf_unreadable error=%s resume_timeout=default",
		    gb_log_q(lq, sizeof(lq), e.text));
	gb_slurmconf_clear(sc);
	return false;
}

/*
 * Every row of the call is gated together (a job split over nodesets is
 * counted whole), inside the transaction that writes them, so earlier rows
 * of the same jobs are seen consistently.
 */
gb_err_t gb_prog_enqueue_resume(gb_state_t *st, const struct gb_conf *conf,
				const struct gb_prog_groups *g,
				const char *source, struct gb_strv *ids,
				gb_error_t *err)
{
	struct gb_request *reqs = NULL;
	struct gb_policy_verdict *v = NULL;
	struct gb_slurmconf sc = { 0 };
	char **nodes = NULL;
	bool have_sc;
	gb_err_t rc = GB_E_OK;

	if (g->n == 0)
		return GB_E_OK;
	reqs = calloc(g->n, sizeof(*reqs));
	v = calloc(g->n, sizeof(*v));
	nodes = calloc(g->n, sizeof(*nodes));
	if (!reqs || !v || !nodes) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	have_sc = read_slurmconf(&sc);
	if ((rc = build_rows(g, reqs, nodes, err)) ||
	    (rc = gb_state_tx_begin(st, err)))
		goto out;
	rc = gb_policy_gate(conf, st, reqs, g->n, gb_time_now(),
			    have_sc ? &sc : NULL, v, err);
	for (size_t i = 0; rc == GB_E_OK && i < g->n; i++)
		rc = add_row(st, &reqs[i], &v[i], source, ids, err);
	if (rc == GB_E_OK)
		rc = gb_state_tx_commit(st, err);
	if (rc) {
		gb_state_tx_rollback(st);
		if (ids)
			gb_strv_free(ids);
		goto out;
	}
	/* After the commit, never in the way: a detached notifier per row. */
	for (size_t i = 0; i < g->n; i++)
		if (v[i].needs_approval)
			gb_policy_notify_spawn(conf, &reqs[i], v[i].why,
					       reqs[i].expires_at, NULL);
out:
	for (size_t i = 0; nodes && i < g->n; i++)
		free(nodes[i]);
	free(nodes);
	free(reqs);
	free(v);
	gb_slurmconf_clear(&sc);
	return rc;
}

gb_err_t gb_prog_enqueue_term(gb_state_t *st, enum gb_request_kind kind,
			      const struct gb_strv *nodes, char *id,
			      gb_error_t *err)
{
	struct gb_request req = { 0 };
	char *list = NULL, detail[512], qn[256];
	gb_err_t rc;

	id[0] = '\0';
	if ((rc = gb_slurm_hostlist_compress(nodes->v, nodes->n, &list, err)))
		return rc;
	req.kind = kind;
	req.state = GB_RSTATE_QUEUED;
	req.nodes = list;
	req.node_count = (int)nodes->n;
	req.defer_node_index = true;
	if ((rc = gb_state_tx_begin(st, err)))
		goto out;
	rc = gb_state_request_add(st, &req, err);
	if (rc == GB_E_OK) {
		snprintf(detail, sizeof(detail), "state=queued nodes=%s count=%d",
			 gb_log_q(qn, sizeof(qn), list), req.node_count);
		rc = gb_state_event_add(st, req.id, "enqueue", detail, err);
	}
	if (rc) {
		gb_state_tx_rollback(st);
		goto out;
	}
	if ((rc = gb_state_tx_commit(st, err)) == GB_E_OK)
		memcpy(id, req.id, sizeof(req.id));
out:
	free(list);
	return rc;
}
