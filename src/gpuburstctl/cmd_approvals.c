/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_approvals.c - gpuburstctl approvals
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ctl.h"

struct appr_out {
	struct ctl *ctl;
	gb_state_t *st;
	json_t *list;
	struct ctl_table table;
	size_t n;
	bool all;
};

struct req_hold {
	json_t *json;
	char nodes[256], nodeset[64], job[32], count[16];
};

static void req_cb(const struct gb_request *r, void *arg)
{
	struct req_hold *h = arg;

	h->json = ctl_request_json(r);
	snprintf(h->nodes, sizeof(h->nodes), "%s", r->nodes ? r->nodes : "-");
	snprintf(h->nodeset, sizeof(h->nodeset), "%s", r->nodeset ? r->nodeset : "-");
	if (r->job_id)
		snprintf(h->job, sizeof(h->job), "%lld", (long long)r->job_id);
	else
		snprintf(h->job, sizeof(h->job), "manual");
	snprintf(h->count, sizeof(h->count), "%d", r->node_count);
}

/* "in 4m 10s" / "2m 05s ago" relative to now. */
static const char *relative(double t, double now, char *buf, size_t n)
{
	char d[48];

	if (t <= 0)
		snprintf(buf, n, "-");
	else if (t >= now)
		snprintf(buf, n, "in %s", ctl_dur(t - now, d, sizeof(d)));
	else
		snprintf(buf, n, "%s ago", ctl_dur(now - t, d, sizeof(d)));
	return buf;
}

static int appr_cb(const struct gb_approval *a, void *arg)
{
	struct appr_out *o = arg;
	struct req_hold h = { 0 };
	char req[32], exp[64], decided[160];

	o->n++;
	gb_state_request_get(o->st, a->request_id, req_cb, &h, NULL);
	if (o->list) {
		json_t *j = json_object();

		json_object_set_new(j, "request_id", json_string(a->request_id));
		json_object_set_new(j, "state", json_string(gb_approval_state_name(a->state)));
		json_object_set_new(j, "why", ctl_jstr(a->why));
		json_object_set_new(j, "requested_at", ctl_jtime(a->requested_at));
		json_object_set_new(j, "expires_at", ctl_jtime(a->expires_at));
		json_object_set_new(j, "decided_by", ctl_jstr(a->decided_by));
		json_object_set_new(j, "decided_uid", a->decided_uid >= 0
			? json_integer(a->decided_uid) : json_null());
		json_object_set_new(j, "decided_at", ctl_jtime(a->decided_at));
		json_object_set_new(j, "comment", ctl_jstr(a->comment));
		json_object_set_new(j, "request", h.json ? h.json : json_null());
		json_array_append_new(o->list, j);
		return 0;
	}
	json_decref(h.json);
	ctl_time(a->requested_at, req, sizeof(req));
	if (a->state == GB_APPROVAL_PENDING)
		relative(a->expires_at, o->ctl->now, exp, sizeof(exp));
	else
		ctl_time(a->expires_at, exp, sizeof(exp));
	if (a->decided_by)
		snprintf(decided, sizeof(decided), "%s%s%s", a->decided_by,
			 a->comment && *a->comment ? ": " : "",
			 a->comment ? a->comment : "");
	else
		snprintf(decided, sizeof(decided), "-");
	if (o->all)
		ctl_table_row(&o->table, a->request_id,
			      gb_approval_state_name(a->state), h.job, h.nodeset,
			      h.count, h.nodes, a->why, req, exp, decided);
	else
		ctl_table_row(&o->table, a->request_id, h.job, h.nodeset, h.count,
			      h.nodes, a->why, req, exp);
	return 0;
}

static const struct option appr_longopts[] = {
	CTL_COMMON_LONGOPTS,
	{ "all", no_argument, NULL, 'a' },
	{ "state", required_argument, NULL, 's' },
	{ NULL, 0, NULL, 0 }
};

gb_err_t ctl_cmd_approvals(struct ctl *ctl, int argc, char **argv)
{
	const char *cmd = "approvals";
	struct appr_out o = { ctl };
	enum gb_approval_state as;
	int state = GB_APPROVAL_PENDING;
	gb_error_t err = { 0 };
	bool first = true;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, cmd, argc, argv, ":jhas:", appr_longopts,
			       &first, &rc)) != -1) {
		switch (c) {
		case CTL_OPT_DONE:
			return rc;
		case 'a':
			state = -1;
			break;
		case 's':
			if (gb_approval_state_parse(optarg, &as))
				return ctl_usage(cmd, "invalid state \"%s\" (pending, approved, denied, expired)",
						 optarg);
			state = (int)as;
			break;
		default:
			return ctl_unimplemented(cmd, c);
		}
	}
	if (optind < argc)
		return ctl_usage(cmd, "unexpected argument \"%s\"", argv[optind]);
	o.all = state != GB_APPROVAL_PENDING;
	o.st = ctl_state(ctl, false, &rc);
	if (rc)
		return rc;
	if (ctl->json)
		o.list = json_array();
	else if (o.all)
		ctl_table_init(&o.table, 10, "REQUEST", "STATE", ">JOB", "NODESET",
			       ">N", "NODES", "WHY", "REQUESTED", "EXPIRES",
			       "DECIDED");
	else
		ctl_table_init(&o.table, 8, "REQUEST", ">JOB", "NODESET", ">N",
			       "NODES", "WHY", "REQUESTED", "EXPIRES");
	if (o.st && (rc = gb_state_approval_list(o.st, state, appr_cb, &o, &err)))
		ctl_fail(rc, "%s", err.text);
	if (ctl->json) {
		json_t *doc = json_object();

		json_object_set_new(doc, "approvals", o.list);
		if (rc == GB_E_OK)
			ctl_json_result(doc);
		else
			json_decref(doc);
	} else {
		if (rc == GB_E_OK && o.n)
			ctl_table_print(&o.table, stdout);
		else if (rc == GB_E_OK)
			printf("no %sapprovals%s\n", o.all ? "" : "pending ",
			       ctl->st_missing ? " (no state file yet)" : "");
		ctl_table_free(&o.table);
	}
	return rc;
}
