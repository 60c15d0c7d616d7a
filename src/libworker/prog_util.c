/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_util.c - request copies, recorded Slurm updates, capacity markers
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_hostlist.h"
#include "gb_log.h"
#include "gb_util.h"
#include "prog_int.h"

/*****************************************************************************
 *  Request copies
 *****************************************************************************/

static bool dup_field(const char *src, char **dst, const char **view)
{
	*dst = NULL;
	*view = NULL;
	if (!src)
		return true;
	if (!(*dst = strdup(src)))
		return false;
	*view = *dst;
	return true;
}

gb_err_t prog_req_copy(const struct gb_request *src, struct prog_req *dst)
{
	memset(dst, 0, sizeof(*dst));
	dst->r = *src;
	if (!dup_field(src->nodeset, &dst->nodeset, &dst->r.nodeset) ||
	    !dup_field(src->nodes, &dst->nodes, &dst->r.nodes) ||
	    !dup_field(src->instance_type, &dst->instance_type, &dst->r.instance_type) ||
	    !dup_field(src->home_region, &dst->home_region, &dst->r.home_region) ||
	    !dup_field(src->strategy, &dst->strategy, &dst->r.strategy) ||
	    !dup_field(src->input, &dst->input, &dst->r.input) ||
	    !dup_field(src->reason, &dst->reason, &dst->r.reason) ||
	    !dup_field(src->job_user, &dst->job_user, &dst->r.job_user) ||
	    !dup_field(src->job_account, &dst->job_account, &dst->r.job_account) ||
	    !dup_field(src->job_partition, &dst->job_partition, &dst->r.job_partition)) {
		prog_req_free(dst);
		return GB_E_NOMEM;
	}
	return GB_E_OK;
}

void prog_req_free(struct prog_req *r)
{
	if (!r)
		return;
	free(r->nodeset);
	free(r->nodes);
	free(r->instance_type);
	free(r->home_region);
	free(r->strategy);
	free(r->input);
	free(r->reason);
	free(r->job_user);
	free(r->job_account);
	free(r->job_partition);
	memset(r, 0, sizeof(*r));
}

/*****************************************************************************
 *  Events and Slurm updates
 *****************************************************************************/

void prog_event_json(gb_state_t *st, const char *req_id, const char *kind,
		     void *json)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	char *s = json ? json_dumps(json, JSON_COMPACT) : NULL;
	gb_error_t e;

	if (!s)
		gb_log_error("event_lost kind=%s req=%s error=\"out of memory\"", kind,
			     req_id ? req_id : "-");
	else if (gb_state_event_add(st, req_id, kind, s, &e))
		gb_log_error("event_lost kind=%s req=%s error=%s", kind,
			     req_id ? req_id : "-", gb_log_q(lq, sizeof(lq), e.text));
	free(s);
	json_decref(json);
}

static const char *update_name(int action)
{
	if (action == PROG_SET_ADDR)
		return "set_addr";
	if (action == PROG_CLEAR_ADDR)
		return "clear_addr";
	return gb_slurm_action_name((enum gb_slurm_node_action)action);
}

/* The "slurm_update" event of one node update, done or not ([error]). */
static void record_update(gb_state_t *st, const char *req_id, int action,
			  char *const *names, char *const *addrs, size_t n,
			  const char *reason, const char *list, size_t failed,
			  const char *error)
{
	json_t *ev = json_pack("{s:s,s:s?,s:I,s:I}", "action", update_name(action),
			       "nodes", list, "count", (json_int_t)n,
			       "failed", (json_int_t)failed);

	if (ev && reason)
		json_object_set_new(ev, "reason", json_string(reason));
	if (ev && action == PROG_SET_ADDR && n <= 64) {
		json_t *a = json_array();

		for (size_t i = 0; a && i < n; i++)
			json_array_append_new(a, json_pack("[s,s]", names[i], addrs[i]));
		json_object_set_new(ev, "addresses", a);
	}
	if (ev && error)
		json_object_set_new(ev, "error", json_string(error));
	prog_event_json(st, req_id, "slurm_update", ev);
}

size_t prog_slurm_update(gb_state_t *st, const char *req_id, int action,
			 char *const *names, char *const *addrs, size_t n,
			 const char *reason)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	char *list = NULL, q[GB_REASON_MAX + 8];
	size_t failed = 0;
	gb_error_t e = { 0 };
	gb_err_t rc;

	if (n == 0)
		return 0;
	if (action == PROG_SET_ADDR)
		rc = gb_slurm_nodes_set_addr(names, addrs, names, n, &failed, &e);
	else if (action == PROG_CLEAR_ADDR)
		rc = gb_slurm_nodes_clear_addr(names, n, &failed, &e);
	else
		rc = gb_slurm_nodes_update((enum gb_slurm_node_action)action, names, n,
					   reason, &failed, &e);
	if (gb_slurm_hostlist_compress(names, n, &list, NULL))
		list = NULL;
	if (rc)
		gb_log_error("slurm_update action=%s nodes=%s count=%zu failed=%zu req=%s "
			     "error=%s", update_name(action), list ? list : "?", n,
			     failed, req_id ? req_id : "-", gb_log_q(lq, sizeof(lq), e.text));
	else
		gb_log_info("slurm_update action=%s nodes=%s count=%zu req=%s%s%s",
			    update_name(action), list ? list : "?", n,
			    req_id ? req_id : "-", reason ? " reason=" : "",
			    reason ? gb_log_q(q, sizeof(q), reason) : "");
	record_update(st, req_id, action, names, addrs, n, reason, list, failed,
		      rc ? e.text : NULL);
	free(list);
	return failed;
}

size_t prog_slurm_not_updated(gb_state_t *st, const char *req_id, int action,
			      char *const *names, size_t n, const char *reason,
			      const char *why)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	char *list = NULL;

	if (n == 0)
		return 0;
	if (gb_slurm_hostlist_compress(names, n, &list, NULL))
		list = NULL;
	gb_log_error("slurm_update action=%s nodes=%s count=%zu failed=%zu req=%s "
		     "error=%s", update_name(action), list ? list : "?", n, n,
		     req_id ? req_id : "-", gb_log_q(lq, sizeof(lq), why));
	record_update(st, req_id, action, names, NULL, n, reason, list, n, why);
	free(list);
	return n;
}

void prog_reason_unknown(const struct gb_conf *conf, char *buf, size_t n)
{
	snprintf(buf, n, GB_REASON_NO_NODESET "%s", conf->path);
}

/*****************************************************************************
 *  Capacity markers
 *****************************************************************************/

struct newest {
	char id[GB_REQUEST_ID_LEN + 1];
	double ended;
};

static int newest_final(const struct gb_request *r, void *arg)
{
	struct newest *nw = arg;

	if (r->state == GB_RSTATE_DONE || r->state == GB_RSTATE_FAILED) {
		memcpy(nw->id, r->id, sizeof(nw->id));
		nw->ended = r->updated_at;
	} else {
		nw->id[0] = '\0';	/* a newer one is still open: no marker */
	}
	return 0;
}

struct marker_scan {
	const char *node;
	char *reason;
	size_t n;
	bool found;
};

static int scan_unfilled(const struct gb_event *ev, void *arg)
{
	struct marker_scan *ms = arg;
	json_t *j = NULL;
	const char *nodes = NULL, *reason = NULL;
	gb_hostlist_t *hl = NULL;

	if (strcmp(ev->kind, "node_unfilled") != 0 || !ev->detail)
		return 0;
	j = json_loads(ev->detail, 0, NULL);
	if (j && json_unpack(j, "{s:s,s:s}", "nodes", &nodes, "reason", &reason) == 0 &&
	    gb_hostlist_parse(nodes, &hl, NULL) == GB_E_OK &&
	    gb_hostlist_match(hl, ms->node)) {
		snprintf(ms->reason, ms->n, "%s", reason);
		ms->found = true;
	}
	gb_hostlist_destroy(hl);
	json_decref(j);
	return 0;
}

bool prog_capacity_marker(gb_state_t *st, const struct gb_conf *conf,
			  const char *node, double now, char *reason, size_t n,
			  double *ended)
{
	struct gb_request_filter f = GB_REQUEST_FILTER_ANY;
	struct newest nw = { "", 0 };
	struct marker_scan ms = { node, reason, n, false };
	double cool = conf->policy.ice_cooldown;

	*ended = 0;
	f.kind = GB_REQ_RESUME;
	f.node = node;
	f.since = now - cool - conf->policy.request_deadline - 60;
	if (gb_state_request_list(st, &f, newest_final, &nw, NULL) || !nw.id[0] ||
	    nw.ended + cool <= now)
		return false;
	if (gb_state_event_list(st, nw.id, scan_unfilled, &ms, NULL) || !ms.found)
		return false;
	*ended = nw.ended;
	return true;
}

static void get_end(const struct gb_request *r, void *arg)
{
	double *t = arg;

	if (r->state == GB_RSTATE_DONE || r->state == GB_RSTATE_FAILED)
		*t = r->updated_at;
}

double prog_request_end(gb_state_t *st, const char *id)
{
	double t = 0;

	if (gb_state_request_get(st, id, get_end, &t, NULL))
		return 0;
	return t;
}

/* The features [sn] should have for [type] (NULL: every type). */
static char *wanted_features(const struct gb_conf_nodeset *ns, const struct gb_slurm_node *sn,
			     const char *type)
{
	const char *drop[64];
	size_t k = 0;

	for (size_t i = 0; type && i < ns->n_instance_types && k < GB_ARRAY_LEN(drop); i++)
		if (strcmp(ns->instance_types[i], type))
			drop[k++] = ns->instance_types[i];
	return gb_slurm_features_without(sn->features, drop, k);
}

size_t prog_slurm_types(gb_state_t *st, const struct gb_conf *conf, const char *req_id,
			char *const *names, char *const *types, size_t n)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	struct gb_slurm_node_list *nl = NULL;
	struct gb_strv want = { 0 };
	char **f = NULL;	/* per node: the list it should have, NULL: leave it */
	size_t failed = 0;
	bool any = false;
	gb_error_t e = { 0 };

	for (size_t i = 0; i < n && !any; i++) {
		const struct gb_conf_nodeset *ns = gb_conf_nodeset_for_node(conf, names[i]);

		any = ns && ns->n_instance_types > 1;
	}
	if (!any)
		return 0;
	if (gb_slurm_nodes_load(&nl, &e)) {
		gb_log_warn("slurm_features_unread req=%s error=%s", req_id ? req_id : "-",
			    gb_log_q(lq, sizeof(lq), e.text));
		return n;
	}
	if (!(f = calloc(n, sizeof(*f))))
		goto out;	/* out of memory: the features are a courtesy */
	/* each node's list once; one update per distinct list */
	for (size_t i = 0; i < n; i++) {
		const struct gb_conf_nodeset *ns = gb_conf_nodeset_for_node(conf, names[i]);
		const struct gb_slurm_node *sn = gb_slurm_node_find(nl, names[i]);

		if (!ns || ns->n_instance_types < 2 || !sn ||
		    !(f[i] = wanted_features(ns, sn, types ? types[i] : NULL)))
			continue;
		if (!strcmp(f[i], sn->features_act)) {
			free(f[i]);
			f[i] = NULL;	/* so already */
		} else if (gb_strv_find(&want, f[i]) < 0) {
			gb_strv_add(&want, f[i]);
		}
	}
	for (size_t w = 0; w < want.n; w++) {
		struct gb_strv group = { 0 };
		size_t nf = 0;
		gb_err_t rc;

		for (size_t i = 0; i < n; i++)
			if (f[i] && strcmp(f[i], want.v[w]) == 0 &&
			    gb_strv_find(&group, names[i]) < 0)
				gb_strv_add(&group, names[i]);
		rc = gb_slurm_nodes_set_active(group.v, group.n, want.v[w], &nf, &e);
		failed += nf;
		if (rc)
			gb_log_error("slurm_update action=active_features features=%s count=%zu "
				     "failed=%zu req=%s error=%s", want.v[w], group.n, nf,
				     req_id ? req_id : "-", gb_log_q(lq, sizeof(lq), e.text));
		else
			gb_log_info("slurm_update action=active_features features=%s count=%zu req=%s",
				    want.v[w], group.n, req_id ? req_id : "-");
		prog_event_json(st, req_id, "slurm_update",
				json_pack("{s:s,s:s,s:I,s:I,s:s?}", "action", "active_features",
					  "features", want.v[w], "count", (json_int_t)group.n,
					  "failed", (json_int_t)nf, "error", rc ? e.text : NULL));
		gb_strv_free(&group);
	}
out:
	for (size_t i = 0; f && i < n; i++)
		free(f[i]);
	free(f);
	gb_strv_free(&want);
	gb_slurm_node_list_free(nl);
	return failed;
}
