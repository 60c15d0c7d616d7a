/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * notify.c - run policy.approval_notify: argv, no shell, JSON on stdin,
 * bounded, never in the way of the resume fast path
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gb_log.h"
#include "gb_policy.h"
#include "gb_spawn.h"
#include "gb_util.h"


/*****************************************************************************
 *  The document
 *****************************************************************************/

static json_t *jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *jtime(double t)
{
	char iso[32];

	return t > 0 ? json_string(gb_time_iso(t, iso, sizeof(iso))) : json_null();
}

gb_err_t gb_policy_notify_json(const struct gb_conf *conf,
			       const struct gb_request *req, const char *why,
			       double expires_at, char **out, gb_error_t *err)
{
	json_t *o = json_object();
	char cmd[128];

	*out = NULL;
	if (!o)
		return gb_errorf(err, GB_E_NOMEM, "notify: out of memory");
	json_object_set_new(o, "event", json_string("approval_needed"));
	json_object_set_new(o, "cluster", jstr(conf->cluster_name));
	json_object_set_new(o, "environment",
			    json_string(gb_conf_env_name(conf->environment)));
	json_object_set_new(o, "request_id", json_string(req->id));
	json_object_set_new(o, "kind", json_string(gb_request_kind_name(req->kind)));
	json_object_set_new(o, "nodeset", jstr(req->nodeset));
	json_object_set_new(o, "job_id", req->job_id ? json_integer(req->job_id)
						     : json_null());
	json_object_set_new(o, "nodes", jstr(req->nodes));
	json_object_set_new(o, "node_count", json_integer(req->node_count));
	json_object_set_new(o, "instance_type", jstr(req->instance_type));
	json_object_set_new(o, "home_region", jstr(req->home_region));
	json_object_set_new(o, "why", jstr(why));
	json_object_set_new(o, "requested_at", jtime(req->created_at));
	json_object_set_new(o, "expires_at", jtime(expires_at));
	snprintf(cmd, sizeof(cmd), "gpuburstctl approve %s", req->id);
	json_object_set_new(o, "approve", json_string(cmd));
	snprintf(cmd, sizeof(cmd), "gpuburstctl deny %s --reason TEXT", req->id);
	json_object_set_new(o, "deny", json_string(cmd));
	*out = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (!*out)
		return gb_errorf(err, GB_E_NOMEM, "notify: out of memory");
	return GB_E_OK;
}

/*****************************************************************************
 *  Running the notify program, now or detached
 *****************************************************************************/

static gb_err_t notify_doc(const struct gb_conf *conf, const char *id,
			   const char *doc, gb_error_t *err)
{
	struct gb_buf output = GB_BUF_INIT;
	struct gb_spawn r = { .argv = conf->policy.approval_notify, .input = doc,
			      .timeout = GB_POLICY_NOTIFY_TIMEOUT, .out = &output,
			      .err_out = &output, .out_max = GB_POLICY_NOTIFY_OUTPUT_MAX };
	char q[GB_POLICY_NOTIFY_OUTPUT_MAX * 2 + 8];
	double t0 = gb_time_mono();
	gb_error_t e = { 0 };
	int status;
	gb_err_t rc;

	rc = gb_spawn_run(&r, &e);
	status = r.status;
	gb_buf_putc(&output, '\0');
	if (rc == GB_E_OK && status == 0) {
		gb_log_info("approval_notify req=%s status=0 elapsed=%.3f", id,
			    gb_time_mono() - t0);
	} else {
		gb_log_error("approval_notify req=%s status=%d elapsed=%.3f error=%s output=%s",
			     id, status, gb_time_mono() - t0,
			     gb_log_q(q, sizeof(q) / 2, rc ? e.text : "non-zero exit"),
			     gb_log_q(q + sizeof(q) / 2, sizeof(q) / 2,
				      gb_buf_str(&output)));
		if (rc == GB_E_OK)
			rc = gb_errorf(&e, GB_E_IO, "%s exited with status %d",
				       conf->policy.approval_notify[0], status);
		if (err)
			*err = e;
	}
	gb_buf_free(&output);
	return rc;
}

gb_err_t gb_policy_notify_run(const struct gb_conf *conf,
			      const struct gb_request *req, const char *why,
			      double expires_at, gb_error_t *err)
{
	char *doc = NULL;
	gb_err_t rc;

	if (!conf->policy.approval_notify || !conf->policy.approval_notify[0])
		return GB_E_OK;
	rc = gb_policy_notify_json(conf, req, why, expires_at, &doc, err);
	if (rc == GB_E_OK)
		rc = notify_doc(conf, req->id, doc, err);
	free(doc);
	return rc;
}

struct notify_job {
	const struct gb_conf *conf;
	const char *id, *doc;
};

/* In the detached grandchild. */
static int notify_detached(void *arg)
{
	const struct notify_job *j = arg;

	return notify_doc(j->conf, j->id, j->doc, NULL) ? 1 : 0;
}

gb_err_t gb_policy_notify_spawn(const struct gb_conf *conf,
				const struct gb_request *req, const char *why,
				double expires_at, gb_error_t *err)
{
	struct notify_job j = { conf, req->id, NULL };
	char *doc = NULL, q[256];
	gb_error_t e = { 0 };
	gb_err_t rc;

	if (!conf->policy.approval_notify || !conf->policy.approval_notify[0])
		return GB_E_OK;
	rc = gb_policy_notify_json(conf, req, why, expires_at, &doc, err);
	if (rc)
		return rc;
	j.doc = doc;
	rc = gb_spawn_detached_call(notify_detached, &j, &e);
	free(doc);
	if (rc) {
		gb_log_error("approval_notify req=%s error=%s", req->id,
			     gb_log_q(q, sizeof(q), e.text));
		if (err)
			*err = e;
	}
	return rc;
}
