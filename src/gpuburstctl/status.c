/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * status.c - what the status page shows, as one JSON document
 *
 * The page (www/, served by `metrics serve`) draws nothing but this: the
 * newest requests of the last day with their progress and the answers of
 * their RunInstances calls by region, the pending approvals as
 * `approvals --json` lists them (from the state file only: the page never
 * asks Slurm), and the capacity memory as `capacity --json` reads it,
 * made steady (steady_pools) so that the document changes when something
 * happens, not with every second.  It
 * is computed from the state file each time, so it is right after a
 * restart, like the metrics.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "ctl.h"

/* The requests shown: the newest of the last day. */
#define STATUS_REQUESTS_MAX 50
#define STATUS_SINCE (24 * 3600.0)

struct status_ctx {
	gb_state_t *st;
	json_t *requests;
	gb_error_t *err;
	gb_err_t rc;
};

/* Instances of one request, by what the page's progress bar needs. */
struct inst_counts {
	long total, alive, running;
};

static int inst_cb(const struct gb_instance *in, void *arg)
{
	struct inst_counts *c = arg;

	c->total++;
	if (in->terminated_at > 0)
		return 0;
	c->alive++;
	c->running += in->state == GB_INST_RUNNING;
	return 0;
}

static void bump(json_t *o, const char *key)
{
	json_object_set_new(o, key, json_integer(json_integer_value(json_object_get(o, key)) + 1));
}

/* RunInstances calls of one request, by region: {region: {calls, ok, refused, last}}. */
static int attempt_cb(const struct gb_attempt *a, void *arg)
{
	json_t *by = arg, *r = json_object_get(by, a->region);

	if (!r) {
		r = json_pack("{s:s,s:i,s:i,s:i,s:n}", "region", a->region, "calls", 0, "ok", 0,
			      "refused", 0, "last_error");
		if (!r || json_object_set_new(by, a->region, r))
			return 1;
	}
	bump(r, "calls");
	if (a->state == GB_ATTEMPT_OK && a->got > 0) {
		bump(r, "ok");
	} else if (a->error_code) {
		bump(r, "refused");
		json_object_set_new(r, "last_error", json_string(a->error_code));
	}
	return 0;
}

static int request_cb(const struct gb_request *r, void *arg)
{
	struct status_ctx *c = arg;
	const struct gb_instance_filter f = { .request_id = r->id, .state = -1 };
	struct inst_counts n = { 0 };
	json_t *o = ctl_request_json(r), *by = json_object(), *regions = json_array(), *v;
	const char *k;

	if (!o || !by || !regions) {
		c->rc = gb_errorf(c->err, GB_E_NOMEM, "out of memory");
		goto fail;
	}
	json_object_del(o, "input");	/* what Slurm gave: not the page's business */
	json_object_set_new(o, "user", ctl_jstr(r->job_user));
	json_object_set_new(o, "account", ctl_jstr(r->job_account));
	json_object_set_new(o, "partition", ctl_jstr(r->job_partition));
	json_object_set_new(o, "created", json_real(r->created_at));
	json_object_set_new(o, "updated", json_real(r->updated_at));
	if ((c->rc = gb_state_instance_list(c->st, &f, inst_cb, &n, c->err)) ||
	    (c->rc = gb_state_attempt_list(c->st, r->id, attempt_cb, by, c->err)))
		goto fail;
	json_object_set_new(o, "instances", json_pack("{s:I,s:I,s:I}", "total", (json_int_t)n.total,
						      "alive", (json_int_t)n.alive,
						      "running", (json_int_t)n.running));
	json_object_foreach(by, k, v)
		json_array_append(regions, v);
	json_object_set_new(o, "calls", regions);
	json_decref(by);
	if (json_array_append_new(c->requests, o)) {	/* [o] is freed even then */
		c->rc = gb_errorf(c->err, GB_E_NOMEM, "out of memory");
		return 1;
	}
	return 0;
fail:
	json_decref(regions);
	json_decref(by);
	json_decref(o);
	return 1;
}

/*
 * The capacity memory as the page shows it, steady while nothing happens:
 * what `capacity --json` says of each pool but its weights (they decay
 * with every second), the estimate rounded to hundredths, and the
 * cool-down's seconds left made the second it ends.
 */
static void steady_pools(json_t *pools, double now)
{
	static const char *const shown[] = {
		"region", "az", "instance_type", "capacity", "offered", "estimate",
		"estimate_basis", "cooling", "cool_down_until", "walled", "quota_room",
		"last_ice_at", NULL
	};
	size_t i;
	json_t *p, *v;
	const char *k;
	void *tmp;

	json_array_foreach(pools, i, p) {
		v = json_object_get(p, "cool_down_left");
		json_object_set_new(p, "cool_down_until", json_is_number(v)
				    ? json_integer((json_int_t)(now + json_number_value(v) + 0.5))
				    : json_null());
		json_object_foreach_safe(p, tmp, k, v) {
			size_t j = 0;

			while (shown[j] && strcmp(shown[j], k) != 0)
				j++;
			if (!shown[j])
				json_object_del(p, k);
			else if (json_is_real(v))
				json_real_set(v, round(json_real_value(v) * 100) / 100);
		}
	}
}

gb_err_t ctl_status_json(struct ctl *ctl, const struct gb_conf *conf, gb_state_t *st,
			 json_t **out, gb_error_t *err)
{
	struct gb_request_filter f = GB_REQUEST_FILTER_ANY;
	struct status_ctx c = { st, json_array(), err, GB_E_OK };
	json_t *doc = json_object(), *approvals = NULL, *pools = NULL, *quotas = NULL;
	gb_err_t rc;

	*out = NULL;
	if (!doc || !c.requests) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto fail;
	}
	f.since = ctl->now - STATUS_SINCE;
	f.limit = STATUS_REQUESTS_MAX;
	if (st && (rc = gb_state_request_list(st, &f, request_cb, &c, err)))
		goto fail;
	if ((rc = c.rc))
		goto fail;
	if ((rc = ctl_approvals_json(ctl, st, GB_APPROVAL_PENDING, false, &approvals, err)) ||
	    (rc = ctl_capacity_json(ctl, conf, st, &pools, &quotas, err)))
		goto fail;
	json_object_set_new(doc, "cluster", ctl_jstr(conf->cluster_name));
	json_object_set_new(doc, "version", json_string(PACKAGE_VERSION));
	json_object_set_new(doc, "now", json_real(ctl->now));
	json_object_set_new(doc, "state_file", json_boolean(st != NULL));
	json_object_set_new(doc, "requests", c.requests);
	json_object_set_new(doc, "approvals", approvals);
	steady_pools(pools, ctl->now);
	json_object_set_new(doc, "pools", pools);
	json_object_set_new(doc, "quotas", quotas);
	*out = doc;
	return GB_E_OK;
fail:
	json_decref(doc);
	json_decref(c.requests);
	json_decref(approvals);
	json_decref(pools);
	json_decref(quotas);
	return rc;
}
