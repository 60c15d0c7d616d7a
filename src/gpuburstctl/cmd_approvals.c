/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_approvals.c - gpuburstctl approvals
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#include "ctl.h"
#include "gb_policy.h"
#include "gb_slurm.h"

struct appr_out {
	struct ctl *ctl;
	gb_state_t *st;
	json_t *list;
	struct ctl_table table;
	size_t n;
	bool all;
	bool slurm_ok;			/* jobs can be looked up */
};

/* What the listing shows of a request and its job. */
struct req_hold {
	json_t *json;
	char nodes[256], nodeset[64], job[32], count[16];
	bool held;			/* a job held at submit */
	int64_t job_id;
	json_t *input;			/* held: the job as recorded (NEW) */
};

static void req_cb(const struct gb_request *r, void *arg)
{
	struct req_hold *h = arg;

	h->json = ctl_request_json(r);
	h->held = gb_policy_request_held(r);
	h->job_id = r->job_id;
	if (h->held && r->input)
		h->input = json_loads(r->input, 0, NULL);
	snprintf(h->nodes, sizeof(h->nodes), "%s", r->nodes ? r->nodes : "-");
	snprintf(h->nodeset, sizeof(h->nodeset), "%s", r->nodeset ? r->nodeset : "-");
	if (r->job_id)
		snprintf(h->job, sizeof(h->job), "%lld", (long long)r->job_id);
	else
		snprintf(h->job, sizeof(h->job), "manual");
	snprintf(h->count, sizeof(h->count), "%d", r->node_count);
}

/* The job's side: user, account, partition, name, GPUs, time limit, cost. */
struct job_view {
	char user[64], account[64], partition[64], name[64], gpus[16], time[32];
	char cost[32];			/* "12.50" (the likely estimate), "-" */
	json_t *json;			/* the same, or null */
};

/* The plugin's estimate, from the held record or the job's token. */
static void view_cost(struct job_view *v, double cost, double worst)
{
	if (cost >= 0)
		snprintf(v->cost, sizeof(v->cost), "%.2f", cost);
	else
		snprintf(v->cost, sizeof(v->cost), "-");
	if (json_is_object(v->json)) {
		json_object_set_new(v->json, "cost_usd", cost >= 0 ? json_real(cost) : json_null());
		json_object_set_new(v->json, "cost_worst_usd",
				    worst >= 0 ? json_real(worst) : json_null());
	}
}

static void limit_text(long minutes, char *buf, size_t n)
{
	if (minutes <= 0)
		snprintf(buf, n, "-");
	else if (minutes >= 24 * 60)
		snprintf(buf, n, "%ld-%02ld:%02ld:00", minutes / (24 * 60),
			 minutes / 60 % 24, minutes % 60);
	else
		snprintf(buf, n, "%ld:%02ld:00", minutes / 60, minutes % 60);
}

static void view_set(struct job_view *v, const char *user, const char *account,
		     const char *partition, const char *name, long gpus,
		     long time_limit)
{
	snprintf(v->user, sizeof(v->user), "%s", user ? user : "-");
	snprintf(v->account, sizeof(v->account), "%s", account ? account : "-");
	snprintf(v->partition, sizeof(v->partition), "%s", partition ? partition : "-");
	snprintf(v->name, sizeof(v->name), "%s", name ? name : "-");
	if (gpus >= 0)
		snprintf(v->gpus, sizeof(v->gpus), "%ld", gpus);
	else
		snprintf(v->gpus, sizeof(v->gpus), "-");
	limit_text(time_limit, v->time, sizeof(v->time));
	v->json = json_pack("{s:s?,s:s?,s:s?,s:s?,s:o,s:o}", "user", user,
			    "account", account, "partition", partition,
			    "name", name,
			    "gpus", gpus >= 0 ? json_integer(gpus) : json_null(),
			    "time_limit_minutes", time_limit > 0 ? json_integer(time_limit)
								 : json_null());
}

/*
 * A held job as recorded (it may have changed since); another job as Slurm
 * shows it now, when Slurm can be asked; else dashes.
 */
static void job_view(struct appr_out *o, const struct req_hold *h, struct job_view *v)
{
	struct gb_slurm_held_job j;
	gb_error_t err = { 0 };

	memset(v, 0, sizeof(*v));
	double cost, worst;

	if (h->held && h->input) {
		json_t *in = h->input;

		view_set(v, json_string_value(json_object_get(in, "user")),
			 json_string_value(json_object_get(in, "account")),
			 json_string_value(json_object_get(in, "partition")),
			 json_string_value(json_object_get(in, "name")),
			 json_is_integer(json_object_get(in, "gpus"))
				 ? (long)json_integer_value(json_object_get(in, "gpus")) : -1,
			 (long)json_integer_value(json_object_get(in, "time_limit")));
		view_cost(v, json_is_number(json_object_get(in, "cost"))
				     ? json_number_value(json_object_get(in, "cost")) : -1,
			  json_is_number(json_object_get(in, "cost_worst"))
				  ? json_number_value(json_object_get(in, "cost_worst")) : -1);
		return;
	}
	if (h->job_id > 0 && h->job_id <= UINT32_MAX && o->slurm_ok &&
	    gb_slurm_job_brief((uint32_t)h->job_id, &j, &err) == GB_E_OK) {
		view_set(v, j.user, j.account, j.partition, j.name, j.gpus,
			 (long)j.time_limit);
		gb_cost_token(j.admin_comment, &cost, &worst);
		view_cost(v, cost, worst);
		gb_slurm_held_job_clear(&j);
		return;
	}
	view_set(v, NULL, NULL, NULL, NULL, -1, 0);
	view_cost(v, -1, -1);
	json_decref(v->json);
	v->json = json_null();
}

struct rule_scan {
	char rule[16];
};

/* "rule=NAME" of the request's approval_needed event. */
static int rule_cb(const struct gb_event *ev, void *arg)
{
	struct rule_scan *r = arg;
	const char *p;

	if (strcmp(ev->kind, "approval_needed") || !ev->detail ||
	    !(p = strstr(ev->detail, "rule=")))
		return 0;
	snprintf(r->rule, sizeof(r->rule), "%.*s", (int)strcspn(p + 5, " "), p + 5);
	return 1;
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
	struct rule_scan rs = { "-" };
	struct job_view v;
	char req[32], exp[64], decided[160];

	o->n++;
	gb_state_request_get(o->st, a->request_id, req_cb, &h, NULL);
	gb_state_event_list(o->st, a->request_id, rule_cb, &rs, NULL);
	job_view(o, &h, &v);
	if (o->list) {
		json_t *j = json_object();

		json_object_set_new(j, "request_id", json_string(a->request_id));
		json_object_set_new(j, "state", json_string(gb_approval_state_name(a->state)));
		json_object_set_new(j, "rule", strcmp(rs.rule, "-") ? json_string(rs.rule)
								    : json_null());
		json_object_set_new(j, "held_at_submit", json_boolean(h.held));
		json_object_set_new(j, "why", ctl_jstr(a->why));
		json_object_set_new(j, "requested_at", ctl_jtime(a->requested_at));
		json_object_set_new(j, "expires_at", ctl_jtime(a->expires_at));
		json_object_set_new(j, "decided_by", ctl_jstr(a->decided_by));
		json_object_set_new(j, "decided_uid", a->decided_uid >= 0
			? json_integer(a->decided_uid) : json_null());
		json_object_set_new(j, "decided_at", ctl_jtime(a->decided_at));
		json_object_set_new(j, "comment", ctl_jstr(a->comment));
		json_object_set_new(j, "job", v.json);
		json_object_set_new(j, "request", h.json ? h.json : json_null());
		json_array_append_new(o->list, j);
		json_decref(h.input);
		return 0;
	}
	json_decref(v.json);
	json_decref(h.json);
	json_decref(h.input);
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
			      gb_approval_state_name(a->state), h.job, v.user,
			      v.account, h.count, h.nodes, rs.rule, a->why, req,
			      exp, decided);
	else
		ctl_table_row(&o->table, a->request_id, h.job, v.user, v.account,
			      v.partition, v.name, h.count, v.gpus, v.time, v.cost,
			      h.nodes, rs.rule, a->why, exp);
	return 0;
}

gb_err_t ctl_approvals_json(struct ctl *ctl, gb_state_t *st, int state, bool ask_slurm,
			   json_t **out, gb_error_t *err)
{
	struct appr_out o = { ctl, st, json_array() };
	gb_error_t serr = { 0 };
	gb_err_t rc;

	*out = NULL;
	if (!o.list)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	o.all = state != GB_APPROVAL_PENDING;
	o.slurm_ok = ask_slurm && gb_slurm_init(&serr) == GB_E_OK;
	if (st && (rc = gb_state_approval_list(st, state, appr_cb, &o, err))) {
		json_decref(o.list);
		return rc;
	}
	*out = o.list;
	return GB_E_OK;
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
	gb_error_t err = { 0 }, serr = { 0 };
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
	if (ctl->json) {
		json_t *doc = json_object(), *list;

		/* who asked: Slurm's view of the jobs, when it answers */
		if ((rc = ctl_approvals_json(ctl, o.st, state, true, &list, &err))) {
			json_decref(doc);
			return ctl_fail(rc, "%s", err.text);
		}
		json_object_set_new(doc, "approvals", list);
		ctl_json_result(doc);
		return GB_E_OK;
	}
	if (o.all)
		ctl_table_init(&o.table, 12, "REQUEST", "STATE", ">JOB", "USER",
			       "ACCOUNT", ">N", "NODES", "RULE", "WHY",
			       "REQUESTED", "EXPIRES", "DECIDED");
	else
		ctl_table_init(&o.table, 14, "REQUEST", ">JOB", "USER", "ACCOUNT",
			       "PARTITION", "NAME", ">N", ">GPUS", ">TIME", ">COST",
			       "NODES", "RULE", "WHY", "EXPIRES");
	/* who asked: Slurm's view of the jobs, when it answers */
	o.slurm_ok = gb_slurm_init(&serr) == GB_E_OK;
	if (o.st && (rc = gb_state_approval_list(o.st, state, appr_cb, &o, &err)))
		ctl_fail(rc, "%s", err.text);
	if (rc == GB_E_OK && o.n)
		ctl_table_print(&o.table, stdout);
	else if (rc == GB_E_OK)
		printf("no %sapprovals%s\n", o.all ? "" : "pending ",
		       ctl->st_missing ? " (no state file yet)" : "");
	ctl_table_free(&o.table);
	return rc;
}
