/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * held.c - jobs held at submit for approval: their requests, and what an
 * approval of a job covers when its nodes are resumed
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "gb_policy.h"
#include "gb_util.h"
#include "policy_int.h"

bool gb_policy_request_held(const struct gb_request *r)
{
	return r->kind == GB_REQ_RESUME && r->job_id > 0 && !r->nodes;
}

/* The first nodeset whose partition is one of the job's ("a,b"). */
static const char *nodeset_of(const struct gb_conf *conf, const char *parts)
{
	for (size_t i = 0; parts && i < conf->n_nodesets; i++) {
		const char *p = parts, *want = conf->nodesets[i].partition;
		size_t n = strlen(want);

		while (*p) {
			size_t len = strcspn(p, ",");

			if (len == n && strncmp(p, want, n) == 0)
				return conf->nodesets[i].name;
			p += len + (p[len] == ',');
		}
	}
	return NULL;
}

struct job_scan {
	bool any;			/* a held request of the job exists */
	int approved;			/* ... and one approved (1), 0 unknown */
	char id[GB_REQUEST_ID_LEN + 1];	/* the newest held request */
};

static int job_cb(const struct gb_request *r, void *arg)
{
	struct job_scan *s = arg;

	if (!gb_policy_request_held(r))
		return 0;
	s->any = true;
	gb_strlcpy(s->id, r->id, sizeof(s->id));
	return 0;
}

static gb_err_t scan_job(gb_state_t *st, int64_t job_id, struct job_scan *s,
			 gb_error_t *err)
{
	struct gb_request_filter f = GB_REQUEST_FILTER_ANY;

	memset(s, 0, sizeof(*s));
	f.job_id = job_id;
	f.kind = GB_REQ_RESUME;
	return gb_state_request_list(st, &f, job_cb, s, err);
}

static void approved_cb(const struct gb_approval *a, void *arg)
{
	*(int *)arg = a->state == GB_APPROVAL_APPROVED;
}

gb_err_t gb_policy_job_approved(gb_state_t *st, int64_t job_id, bool *yes,
				gb_error_t *err)
{
	struct job_scan s;
	int approved = 0;
	gb_err_t rc;

	*yes = false;
	if (!st || job_id <= 0)
		return GB_E_OK;
	if ((rc = scan_job(st, job_id, &s, err)) || !s.any)
		return rc;
	rc = gb_state_approval_get(st, s.id, approved_cb, &approved, err);
	if (rc == GB_E_NOTFOUND)
		rc = GB_E_OK;
	*yes = rc == GB_E_OK && approved;
	return rc;
}

struct notify_ctx {
	const struct gb_conf *conf;
	gb_state_t *st;
	const struct gb_request *req;	/* during notify_request_cb */
	gb_err_t rc;
	gb_error_t *err;
};

static void notify_approval_cb(const struct gb_approval *a, void *arg)
{
	struct notify_ctx *c = arg;

	c->rc = gb_policy_notify_spawn(c->conf, c->req, a->why, a->expires_at, c->err);
}

static void notify_request_cb(const struct gb_request *r, void *arg)
{
	struct notify_ctx *c = arg;

	c->req = r;
	c->rc = gb_state_approval_get(c->st, r->id, notify_approval_cb, c, c->err);
}

gb_err_t gb_policy_held_notify(const struct gb_conf *conf, gb_state_t *st,
			       const char *id, gb_error_t *err)
{
	struct notify_ctx c = { conf, st, NULL, GB_E_OK, err };
	gb_err_t rc = gb_state_request_get(st, id, notify_request_cb, &c, err);

	return rc ? rc : c.rc;
}

static char *job_input(const struct gb_policy_held *h)
{
	json_t *j = json_pack("{s:s,s:s?,s:s?,s:s?,s:s?,s:s?,s:i,s:o,s:I,s:o,s:o,s:s?}",
			      "source", "submit", "user", h->user,
			      "account", h->account, "partition", h->partition,
			      "name", h->name, "tres", h->tres, "nodes", h->nodes,
			      "gpus", h->gpus >= 0 ? json_integer(h->gpus) : json_null(),
			      "time_limit", (json_int_t)h->time_limit,
			      "cost", h->cost >= 0 ? json_real(h->cost) : json_null(),
			      "cost_worst", h->cost_worst >= 0 ? json_real(h->cost_worst)
							       : json_null(),
			      "budget", h->budget);
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	json_decref(j);
	return s;
}

/* One held job's request and approval, in the caller's transaction. */
static gb_err_t add_held(const struct gb_conf *conf, gb_state_t *st,
			 const struct gb_policy_held *h, double now,
			 struct gb_strv *created, gb_error_t *err)
{
	struct gb_policy_verdict v;
	struct gb_request r = { 0 };
	const struct gb_conf_nodeset *ns;
	char *input = job_input(h);
	gb_err_t rc;

	if (!input)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	gb_policy_judge(conf, h->job_id, h->nodes, &v);
	if (h->budget && !v.needs_approval) {
		v.needs_approval = true;
		v.rule = GB_POLICY_RULE_BUDGET;
		v.counted = h->nodes;
		v.threshold = gb_conf_threshold(conf);
		if (h->cost >= 0)
			snprintf(v.why, sizeof(v.why), "job %lld (~%.2f USD) would go over budget '%s' (held at submit)",
				 (long long)h->job_id, h->cost, h->budget);
		else
			snprintf(v.why, sizeof(v.why), "job %lld: its cost for budget '%s' is not known (held at submit)",
				 (long long)h->job_id, h->budget);
	} else {
		if (!v.needs_approval) {	/* the threshold was raised since */
			v.rule = GB_POLICY_RULE_SIZE;
			v.counted = h->nodes;
			v.threshold = gb_conf_threshold(conf);
		}
		snprintf(v.why, sizeof(v.why), "%d nodes for job %lld > %s threshold %d%s (held at submit)",
			 h->nodes, (long long)h->job_id,
			 gb_conf_env_name(conf->environment), v.threshold,
			 h->budget ? ", and over a budget" : "");
	}
	r.kind = GB_REQ_RESUME;
	r.state = GB_RSTATE_PENDING_APPROVAL;
	r.nodeset = nodeset_of(conf, h->partition);
	r.job_id = h->job_id;
	r.node_count = h->nodes;
	ns = r.nodeset ? gb_conf_nodeset(conf, r.nodeset) : NULL;
	r.instance_type = ns ? ns->instance_type : NULL;
	r.home_region = h->home && *h->home ? h->home
					    : ns ? ns->home_region : NULL;
	r.input = input;
	r.created_at = now;
	r.expires_at = now + conf->policy.submit_approval_timeout;
	rc = gb_state_request_add(st, &r, err);
	if (rc == GB_E_OK)
		rc = gb_policy_record(st, &r, &v, err);
	if (rc == GB_E_OK && gb_strv_add(created, r.id))
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	free(input);
	return rc;
}

gb_err_t gb_policy_held_sync(const struct gb_conf *conf, gb_state_t *st,
			     const struct gb_policy_held *jobs, size_t n,
			     double now, bool dry, struct gb_strv *created,
			     gb_error_t *err)
{
	gb_err_t rc;

	if (n == 0)
		return GB_E_OK;
	if (!dry && (rc = gb_state_tx_begin(st, err)))
		return rc;
	rc = GB_E_OK;
	for (size_t i = 0; rc == GB_E_OK && i < n; i++) {
		struct job_scan s;
		char job[24];

		if (jobs[i].job_id <= 0)
			continue;
		rc = scan_job(st, jobs[i].job_id, &s, err);
		if (rc || s.any)
			continue;
		snprintf(job, sizeof(job), "%lld", (long long)jobs[i].job_id);
		if (dry && gb_strv_add(created, job))
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		else if (!dry)
			rc = add_held(conf, st, &jobs[i], now, created, err);
	}
	if (dry) {
		if (rc)
			gb_strv_free(created);
		return rc;
	}
	if (rc == GB_E_OK)
		rc = gb_state_tx_commit(st, err);
	if (rc) {
		gb_state_tx_rollback(st);
		gb_strv_free(created);
	}
	return rc;
}
