/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_requests.c - gpuburstctl requests | requests show ID [--svg FILE]
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "gb_util.h"
#include "svg.h"

/*****************************************************************************
 *  One request as JSON (also used by approvals)
 *****************************************************************************/

json_t *ctl_request_json(const struct gb_request *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_string(r->id));
	json_object_set_new(o, "kind", json_string(gb_request_kind_name(r->kind)));
	json_object_set_new(o, "state", json_string(gb_request_state_name(r->state)));
	json_object_set_new(o, "nodeset", ctl_jstr(r->nodeset));
	json_object_set_new(o, "job_id", r->job_id ? json_integer(r->job_id)
						   : json_null());
	json_object_set_new(o, "nodes", ctl_jstr(r->nodes));
	json_object_set_new(o, "node_count", json_integer(r->node_count));
	json_object_set_new(o, "instance_type", ctl_jstr(r->instance_type));
	json_object_set_new(o, "home_region", ctl_jstr(r->home_region));
	json_object_set_new(o, "strategy", ctl_jstr(r->strategy));
	json_object_set_new(o, "input", ctl_jraw(r->input));
	json_object_set_new(o, "created_at", ctl_jtime(r->created_at));
	json_object_set_new(o, "updated_at", ctl_jtime(r->updated_at));
	json_object_set_new(o, "not_before", ctl_jtime(r->not_before));
	json_object_set_new(o, "expires_at", ctl_jtime(r->expires_at));
	json_object_set_new(o, "worker_pid", r->worker_pid
					     ? json_integer(r->worker_pid)
					     : json_null());
	json_object_set_new(o, "claims", json_integer(r->claims));
	json_object_set_new(o, "result", json_string(gb_request_result_name(r->result)));
	json_object_set_new(o, "launched", json_integer(r->launched));
	json_object_set_new(o, "reason", ctl_jstr(r->reason));
	return o;
}

/*****************************************************************************
 *  requests
 *****************************************************************************/

struct list_out {
	bool json;		/* streamed (ctl_json_row) */
	struct ctl_table table;
	size_t n;
};

static int list_cb(const struct gb_request *r, void *arg)
{
	struct list_out *o = arg;
	char created[32], job[32], count[32];

	o->n++;
	if (o->json) {
		ctl_json_row(ctl_request_json(r));
		return 0;
	}
	ctl_table_row(&o->table, r->id, gb_request_kind_name(r->kind),
		      gb_request_state_name(r->state),
		      r->job_id ? ctl_itoa(r->job_id, job, sizeof(job)) : "-",
		      r->nodeset, ctl_itoa(r->node_count, count, sizeof(count)),
		      r->nodes, ctl_time(r->created_at, created, sizeof(created)),
		      r->result == GB_RESULT_NONE ? "-"
						  : gb_request_result_name(r->result));
	return 0;
}

static const struct option list_longopts[] = {
	CTL_COMMON_LONGOPTS,
	{ "state", required_argument, NULL, 's' },
	{ "kind", required_argument, NULL, 'k' },
	{ "since", required_argument, NULL, 't' },
	{ "node", required_argument, NULL, 'n' },
	{ "limit", required_argument, NULL, 'l' },
	{ NULL, 0, NULL, 0 }
};

static gb_err_t list_options(struct ctl *ctl, int argc, char **argv,
			     struct gb_request_filter *f, bool *done)
{
	const char *cmd = "requests";
	enum gb_request_state s;
	enum gb_request_kind k;
	bool first = true;
	gb_err_t rc = GB_E_OK;
	long l;
	int c;

	while ((c = ctl_getopt(ctl, cmd, argc, argv, ":jhs:k:t:n:l:",
			       list_longopts, &first, &rc)) != -1) {
		switch (c) {
		case CTL_OPT_DONE:
			*done = true;
			return rc;
		case 's':
			if (gb_request_state_parse(optarg, &s))
				return ctl_usage(cmd, "invalid state \"%s\" (pending_approval, queued, running, done, failed, denied, expired, cancelled)",
						 optarg);
			f->state = (int)s;
			break;
		case 'k':
			if (gb_request_kind_parse(optarg, &k))
				return ctl_usage(cmd, "invalid kind \"%s\" (resume, suspend, resume_fail, terminate)",
						 optarg);
			f->kind = (int)k;
			break;
		case 't':
			if (gb_time_parse(optarg, ctl->now, &f->since))
				return ctl_usage(cmd, "invalid time \"%s\" (2026-11-29T15:13:45Z, 2026-11-29, or an age: 90s, 15m, 2h, 3d)",
						 optarg);
			break;
		case 'n':
			f->node = optarg;
			break;
		case 'l':
			if ((rc = ctl_parse_long(cmd, "--limit", optarg, 1,
						 1000000, &l)))
				return rc;
			f->limit = (size_t)l;
			break;
		default:
			return ctl_unimplemented(cmd, c);
		}
	}
	if (optind < argc)
		return ctl_usage(cmd, "unexpected argument \"%s\"", argv[optind]);
	return GB_E_OK;
}

gb_err_t ctl_cmd_requests(struct ctl *ctl, int argc, char **argv)
{
	struct gb_request_filter f = GB_REQUEST_FILTER_ANY;
	struct list_out o = { 0 };
	gb_error_t err = { 0 };
	bool done = false;
	gb_state_t *st;
	gb_err_t rc;

	rc = list_options(ctl, argc, argv, &f, &done);
	if (rc || done)
		return rc;
	st = ctl_state(ctl, false, &rc);
	if (rc)
		return rc;
	/* streamed as instances are: constant memory whatever the history */
	f.stream = true;
	o.json = ctl->json;
	if (ctl->json) {
		ctl_json_stream("requests");
	} else {
		ctl_table_init(&o.table, 9, "ID", "KIND", "STATE", ">JOB",
			       "NODESET", ">N", "NODES", "CREATED", "RESULT");
		ctl_table_measure(&o.table);
	}
	if (st && !ctl->json && (rc = gb_state_read_begin(st, &err)))
		ctl_fail(rc, "%s", err.text);
	if (st && !rc && (rc = gb_state_request_list(st, &f, list_cb, &o, &err)))
		ctl_fail(rc, "%s", err.text);
	if (st && !rc && !ctl->json && o.n) {
		ctl_table_stream(&o.table, stdout);
		o.n = 0;	/* counted again as printed */
		if ((rc = gb_state_request_list(st, &f, list_cb, &o, &err)))
			ctl_fail(rc, "%s", err.text);
	}
	gb_state_read_end(st);
	if (!ctl->json) {
		if (rc == GB_E_OK && !o.n)	/* else printed as read */
			printf("no requests%s\n",
			       ctl->st_missing ? " (no state file yet)" : "");
		ctl_table_free(&o.table);
	}
	return rc;
}

/*****************************************************************************
 *  requests show ID: the replay
 *****************************************************************************/

struct show {
	struct ctl *ctl;
	json_t *request, *approval, *plans, *attempts, *instances, *events;
	json_t *timeline;	/* [{at, what, detail}] */
	struct ctl_tl *tl;	/* --svg: the picture's records, else NULL */
	double created_at;
	int extras;		/* instances launched for no node (billed) */
};

static void timeline_add(struct show *s, double at, const char *what,
			 const char *detail)
{
	json_t *e = json_object();

	if (at <= 0)
		return (void)json_decref(e);
	json_object_set_new(e, "at", ctl_jtime(at));
	json_object_set_new(e, "t", json_real(at));
	json_object_set_new(e, "what", json_string(what));
	json_object_set_new(e, "detail", ctl_jstr(detail));
	json_array_append_new(s->timeline, e);
}

static void request_cb(const struct gb_request *r, void *arg)
{
	struct show *s = arg;

	s->request = ctl_request_json(r);
	s->created_at = r->created_at;
	ctl_tl_request(s->tl, r);
}

static void approval_cb(const struct gb_approval *a, void *arg)
{
	struct show *s = arg;
	json_t *o = json_object();

	json_object_set_new(o, "state", json_string(gb_approval_state_name(a->state)));
	json_object_set_new(o, "why", ctl_jstr(a->why));
	json_object_set_new(o, "requested_at", ctl_jtime(a->requested_at));
	json_object_set_new(o, "expires_at", ctl_jtime(a->expires_at));
	json_object_set_new(o, "decided_by", ctl_jstr(a->decided_by));
	json_object_set_new(o, "decided_uid", a->decided_uid >= 0
						      ? json_integer(a->decided_uid)
						      : json_null());
	json_object_set_new(o, "decided_at", ctl_jtime(a->decided_at));
	json_object_set_new(o, "comment", ctl_jstr(a->comment));
	s->approval = o;
	ctl_tl_approval(s->tl, a);
}

static int plan_cb(const struct gb_plan_row *p, void *arg)
{
	struct show *s = arg;
	json_t *o = json_object();
	char what[96];

	json_object_set_new(o, "version", json_integer(p->version));
	json_object_set_new(o, "planner", ctl_jstr(p->planner));
	json_object_set_new(o, "status", ctl_jstr(p->status));
	json_object_set_new(o, "reason", ctl_jstr(p->reason));
	json_object_set_new(o, "rationale", ctl_jstr(p->rationale));
	json_object_set_new(o, "body", ctl_jraw(p->body));
	json_object_set_new(o, "created_at", ctl_jtime(p->created_at));
	json_array_append_new(s->plans, o);
	snprintf(what, sizeof(what), "plan v%d %s %s", p->version,
		 p->planner ? p->planner : "?", p->status ? p->status : "?");
	timeline_add(s, p->created_at, what, p->reason);
	ctl_tl_plan(s->tl, p);
	return 0;
}

static int attempt_cb(const struct gb_attempt *a, void *arg)
{
	struct show *s = arg;
	json_t *o = json_object();
	char what[256], detail[512];

	json_object_set_new(o, "seq", json_integer(a->seq));
	json_object_set_new(o, "region", ctl_jstr(a->region));
	json_object_set_new(o, "az", ctl_jstr(a->az));
	json_object_set_new(o, "subnet", ctl_jstr(a->subnet));
	json_object_set_new(o, "instance_type", ctl_jstr(a->instance_type));
	json_object_set_new(o, "capacity", ctl_jstr(a->capacity));
	json_object_set_new(o, "capacity_target", ctl_jstr(a->capacity_target));
	json_object_set_new(o, "min_count", json_integer(a->min_count));
	json_object_set_new(o, "asked", json_integer(a->asked));
	json_object_set_new(o, "got", json_integer(a->got));
	json_object_set_new(o, "client_token", ctl_jstr(a->client_token));
	json_object_set_new(o, "state", json_string(gb_attempt_state_name(a->state)));
	json_object_set_new(o, "error_code", ctl_jstr(a->error_code));
	json_object_set_new(o, "error_class", ctl_jstr(a->error_class));
	json_object_set_new(o, "message", ctl_jstr(a->message));
	json_object_set_new(o, "started_at", ctl_jtime(a->started_at));
	json_object_set_new(o, "finished_at", ctl_jtime(a->finished_at));
	json_object_set_new(o, "latency", json_real(a->latency));
	json_array_append_new(s->attempts, o);
	snprintf(what, sizeof(what), "attempt %d %s/%s %s%s%s", a->seq,
		 a->region ? a->region : "?", a->az ? a->az : "-",
		 a->capacity ? a->capacity : "on-demand", a->capacity_target ? " " : "",
		 a->capacity_target ? a->capacity_target : "");
	snprintf(detail, sizeof(detail), "asked %d (min %d) got %d %s%s%s latency %.3fs",
		 a->asked, a->min_count, a->got, gb_attempt_state_name(a->state),
		 a->error_code ? " " : "", a->error_code ? a->error_code : "",
		 a->latency);
	timeline_add(s, a->started_at, what, detail);
	ctl_tl_attempt(s->tl, a);
	return 0;
}

/* Seconds an instance ran (or has run so far), or -1 when unknown. */
double ctl_instance_ran(const struct gb_instance *in, double now)
{
	if (in->launched_at <= 0)
		return -1;
	if (in->terminated_at > 0)
		return in->terminated_at - in->launched_at;
	if (in->state == GB_INST_TERMINATED || in->state == GB_INST_LOST)
		return -1;
	return now - in->launched_at;
}

json_t *ctl_instance_json(const struct gb_instance *in, double now)
{
	json_t *o = json_object();
	double ran = ctl_instance_ran(in, now);
	char human[64];

	json_object_set_new(o, "request_id", ctl_jstr(in->request_id));
	json_object_set_new(o, "region", ctl_jstr(in->region));
	json_object_set_new(o, "instance_id", ctl_jstr(in->instance_id));
	json_object_set_new(o, "node", ctl_jstr(in->node));
	json_object_set_new(o, "az", ctl_jstr(in->az));
	json_object_set_new(o, "subnet", ctl_jstr(in->subnet));
	json_object_set_new(o, "instance_type", ctl_jstr(in->instance_type));
	json_object_set_new(o, "capacity", ctl_jstr(in->capacity));
	json_object_set_new(o, "capacity_target", ctl_jstr(in->capacity_target));
	json_object_set_new(o, "private_ip", ctl_jstr(in->private_ip));
	json_object_set_new(o, "public_ip", ctl_jstr(in->public_ip));
	json_object_set_new(o, "state", json_string(gb_instance_state_name(in->state)));
	json_object_set_new(o, "attempt_id", in->attempt_id
					     ? json_integer(in->attempt_id)
					     : json_null());
	json_object_set_new(o, "launched_at", ctl_jtime(in->launched_at));
	json_object_set_new(o, "terminated_at", ctl_jtime(in->terminated_at));
	json_object_set_new(o, "ran_seconds", ran >= 0 ? json_integer((json_int_t)ran)
						       : json_null());
	json_object_set_new(o, "ran", ran >= 0 ? json_string(ctl_dur(ran, human, sizeof(human)))
					       : json_null());
	json_object_set_new(o, "reason", ctl_jstr(in->reason));
	json_object_set_new(o, "agent", ctl_jstr(in->agent));
	json_object_set_new(o, "noticed_at", ctl_jtime(in->noticed_at));
	return o;
}

/* "ok", "unhealthy": the state word of an agent tag ("-" for none). */
const char *ctl_agent_word(const char *agent, char *buf, size_t n)
{
	size_t k;

	if (!agent || !*agent)
		return "-";
	k = strcspn(agent, ": ");
	snprintf(buf, n, "%.*s", (int)k, agent);
	return buf;
}

static int instance_cb(const struct gb_instance *in, void *arg)
{
	struct show *s = arg;
	char what[160];

	json_array_append_new(s->instances, ctl_instance_json(in, s->ctl->now));
	s->extras += !in->node;
	snprintf(what, sizeof(what), "instance %s %s", in->instance_id,
		 in->node ? in->node : "(extra)");
	timeline_add(s, in->launched_at, what, "launched");
	timeline_add(s, in->terminated_at, what, in->reason ? in->reason : "terminated");
	ctl_tl_instance(s->tl, in);
	return 0;
}

static int event_cb(const struct gb_event *ev, void *arg)
{
	struct show *s = arg;
	json_t *o = json_object();
	char what[96];

	json_object_set_new(o, "id", json_integer(ev->id));
	json_object_set_new(o, "at", ctl_jtime(ev->at));
	json_object_set_new(o, "kind", ctl_jstr(ev->kind));
	json_object_set_new(o, "detail", ctl_jstr(ev->detail));
	json_array_append_new(s->events, o);
	snprintf(what, sizeof(what), "event %s", ev->kind ? ev->kind : "?");
	timeline_add(s, ev->at, what, ev->detail);
	ctl_tl_event(s->tl, ev);
	return 0;
}

static int cmp_at(const void *a, const void *b)
{
	double x = json_real_value(json_object_get(*(json_t *const *)a, "t"));
	double y = json_real_value(json_object_get(*(json_t *const *)b, "t"));

	return x < y ? -1 : x > y;
}

/* Stable time order (qsort on an index keeps insertion order on ties). */
static void timeline_sort(json_t *tl)
{
	size_t n = json_array_size(tl);
	json_t **v = calloc(n ? n : 1, sizeof(*v));

	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		v[i] = json_incref(json_array_get(tl, i));
		json_object_set_new(v[i], "seq", json_integer((json_int_t)i));
	}
	for (size_t i = 1; i < n; i++)	/* insertion sort: stable, small n */
		for (size_t j = i; j > 0 && cmp_at(&v[j - 1], &v[j]) > 0; j--) {
			json_t *t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	json_array_clear(tl);
	for (size_t i = 0; i < n; i++) {
		json_object_del(v[i], "seq");
		json_array_append_new(tl, v[i]);
	}
	free(v);
}

static gb_err_t gather(struct show *s, gb_state_t *st, const char *id,
		       gb_error_t *err)
{
	struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
	gb_err_t rc;

	rc = gb_state_request_get(st, id, request_cb, s, err);
	if (rc)
		return rc;
	rc = gb_state_approval_get(st, id, approval_cb, s, err);
	if (rc && rc != GB_E_NOTFOUND)
		return rc;
	f.request_id = id;
	if ((rc = gb_state_event_list(st, id, event_cb, s, err)) ||
	    (rc = gb_state_plan_list(st, id, plan_cb, s, err)) ||
	    (rc = gb_state_attempt_list(st, id, attempt_cb, s, err)) ||
	    (rc = gb_state_instance_list(st, &f, instance_cb, s, err)))
		return rc;
	timeline_sort(s->timeline);
	return GB_E_OK;
}

/* The lists gather() fills.  RET false when out of memory (show_free() then). */
static bool show_lists(struct show *s)
{
	s->plans = json_array();
	s->attempts = json_array();
	s->instances = json_array();
	s->events = json_array();
	s->timeline = json_array();
	return s->plans && s->attempts && s->instances && s->events && s->timeline;
}

static void show_free(struct show *s)
{
	json_decref(s->request);
	json_decref(s->approval);
	json_decref(s->plans);
	json_decref(s->attempts);
	json_decref(s->instances);
	json_decref(s->events);
	json_decref(s->timeline);
	ctl_tl_destroy(s->tl);
}

gb_err_t ctl_request_svg(struct ctl *ctl, gb_state_t *st, const char *id, struct gb_buf *svg,
			 gb_error_t *err)
{
	struct show s = { ctl };
	gb_err_t rc;

	if (!show_lists(&s) || !(s.tl = ctl_tl_create()))
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	else if ((rc = gather(&s, st, id, err)) == GB_E_NOTFOUND)
		gb_errorf(err, rc, "no request %s", id);
	else if (!rc && (rc = ctl_tl_draw(s.tl, ctl->now, svg)))
		gb_errorf(err, rc, "out of memory drawing the picture");
	show_free(&s);
	return rc;
}

/* ---- human form ---------------------------------------------------------- */

static const char *js(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "-";
}

static long long ji(json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

static void print_field(const char *name, const char *value)
{
	printf("  %-14s %s\n", name, value && *value ? value : "-");
}

static void print_request(struct show *s)
{
	json_t *r = s->request;
	char buf[512], job[32];

	printf("Request %s\n", js(r, "id"));
	print_field("kind", js(r, "kind"));
	snprintf(buf, sizeof(buf), "%s%s%s", js(r, "state"),
		 strcmp(js(r, "result"), "none") ? ", result " : "",
		 strcmp(js(r, "result"), "none") ? js(r, "result") : "");
	print_field("state", buf);
	snprintf(buf, sizeof(buf), "%s (%s, home %s%s%s)", js(r, "nodeset"),
		 js(r, "instance_type"), js(r, "home_region"),
		 json_is_string(json_object_get(r, "strategy")) ? ", strategy " : "",
		 json_is_string(json_object_get(r, "strategy")) ? js(r, "strategy") : "");
	print_field("nodeset", buf);
	print_field("job", ji(r, "job_id") ? ctl_itoa(ji(r, "job_id"), job, sizeof(job))
					   : "none (manual power-up)");
	snprintf(buf, sizeof(buf), "%s (%lld)", js(r, "nodes"), ji(r, "node_count"));
	print_field("nodes", buf);
	print_field("created", js(r, "created_at"));
	print_field("updated", js(r, "updated_at"));
	if (json_is_string(json_object_get(r, "expires_at")))
		print_field("expires", js(r, "expires_at"));
	snprintf(buf, sizeof(buf), "%lld (claims %lld, last worker pid %lld)",
		 ji(r, "launched"), ji(r, "claims"), ji(r, "worker_pid"));
	print_field("launched", buf);
	if (!json_is_null(json_object_get(r, "input"))) {
		char *in = json_dumps(json_object_get(r, "input"),
				      JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

		print_field("input", in);
		free(in);
	}
	print_field("reason", js(r, "reason"));
}

/* The outcome last, after the story that led to it. */
static void print_result(struct show *s)
{
	json_t *r = s->request;
	const char *state = js(r, "state");

	printf("\nResult\n  ");
	if (strcmp(js(r, "result"), "none") != 0)
		printf("%s: %lld of %lld nodes launched (%s)\n", js(r, "result"),
		       ji(r, "launched"), ji(r, "node_count"), js(r, "reason"));
	else if (strcmp(state, "denied") == 0 || strcmp(state, "expired") == 0 ||
		 strcmp(state, "cancelled") == 0)
		printf("%s: %s\n", state, js(r, "reason"));
	else
		printf("not final yet (%s)\n", state);
}

static void print_approval(struct show *s)
{
	json_t *a = s->approval;
	char buf[512];

	if (!a)
		return;
	printf("\nApproval\n");
	print_field("state", js(a, "state"));
	print_field("why", js(a, "why"));
	print_field("requested", js(a, "requested_at"));
	print_field("expires", js(a, "expires_at"));
	if (json_is_string(json_object_get(a, "decided_by"))) {
		snprintf(buf, sizeof(buf), "%s (uid %lld) at %s", js(a, "decided_by"),
			 ji(a, "decided_uid"), js(a, "decided_at"));
		print_field("decided by", buf);
		print_field("comment", js(a, "comment"));
	}
}

static void print_plans(struct show *s)
{
	size_t i;
	json_t *p;

	if (json_array_size(s->plans) == 0)
		return;
	printf("\nPlans\n");
	json_array_foreach(s->plans, i, p) {
		json_t *steps = json_object_get(json_object_get(p, "body"), "steps");
		json_t *st;
		size_t j;

		printf("  v%lld  %s  %s  %s\n      %s\n", ji(p, "version"),
		       js(p, "planner"), js(p, "status"), js(p, "created_at"),
		       js(p, "reason"));
		/* the planner's own account (the model's words for an LLM) */
		if (json_is_string(json_object_get(p, "rationale")))
			printf("      rationale: %s\n", js(p, "rationale"));
		json_array_foreach(steps, j, st)
			printf("      %zu. %s/%s %s batch %lld expect %lld: %s\n",
			       j + 1, js(st, "region"), js(st, "az"),
			       js(st, "subnet"), ji(st, "batch"),
			       ji(st, "expect"), js(st, "reason"));
	}
}

/* "spot", "reservation cr-0123...": the rung an attempt or instance drew on. */
static const char *capacity_text(json_t *o, char *buf, size_t n)
{
	const char *t = js(o, "capacity_target");

	snprintf(buf, n, "%s%s%s", js(o, "capacity"), *t && strcmp(t, "-") ? " " : "",
		 *t && strcmp(t, "-") ? t : "");
	return buf;
}

static void print_attempts(struct show *s)
{
	struct ctl_table t;
	size_t i;
	json_t *a;

	if (json_array_size(s->attempts) == 0)
		return;
	printf("\nAttempts\n");
	ctl_table_init(&t, 10, ">#", "REGION", "AZ", "SUBNET", "CAPACITY", ">ASKED", ">GOT",
		       "STATE", "ERROR", ">LATENCY");
	json_array_foreach(s->attempts, i, a) {
		char seq[16], asked[32], got[32], lat[32], cap[96];

		snprintf(asked, sizeof(asked), "%lld-%lld", ji(a, "min_count"),
			 ji(a, "asked"));
		snprintf(lat, sizeof(lat), "%.3fs",
			 json_real_value(json_object_get(a, "latency")));
		ctl_table_row(&t, ctl_itoa(ji(a, "seq"), seq, sizeof(seq)),
			      js(a, "region"), js(a, "az"), js(a, "subnet"),
			      capacity_text(a, cap, sizeof(cap)), asked,
			      ctl_itoa(ji(a, "got"), got, sizeof(got)),
			      js(a, "state"), js(a, "error_code"), lat);
	}
	t.indent = "  ";
	ctl_table_print(&t, stdout);
	ctl_table_free(&t);
}

static void print_instances_of(struct show *s)
{
	struct ctl_table t;
	size_t i;
	json_t *in;

	if (json_array_size(s->instances) == 0)
		return;
	printf("\nInstances (%zu, %d extra%s: launched for no node, billed until terminated)\n",
	       json_array_size(s->instances), s->extras, s->extras == 1 ? "" : "s");
	ctl_table_init(&t, 8, "NODE", "INSTANCE", "REGION", "AZ", "CAPACITY", "STATE",
		       "LAUNCHED", "RAN");
	t.indent = "  ";
	json_array_foreach(s->instances, i, in) {
		char cap[96];

		ctl_table_row(&t, js(in, "node"), js(in, "instance_id"),
			      js(in, "region"), js(in, "az"), capacity_text(in, cap, sizeof(cap)),
			      js(in, "state"), js(in, "launched_at"), js(in, "ran"));
	}
	ctl_table_print(&t, stdout);
	ctl_table_free(&t);
	/* what each instance's own agent (gpuburst-node) last said: one line */
	json_array_foreach(s->instances, i, in) {
		bool noticed = json_is_string(json_object_get(in, "noticed_at"));

		if (!json_is_string(json_object_get(in, "agent")))
			continue;
		printf("  agent %s: %s", js(in, "instance_id"), js(in, "agent"));
		if (noticed)
			printf(" (offering noticed dry %s)", js(in, "noticed_at"));
		printf("\n");
	}
}

static void print_slurm(struct show *s)
{
	bool any = false;
	size_t i;
	json_t *e;

	json_array_foreach(s->events, i, e) {
		if (strncmp(js(e, "kind"), "slurm", 5) != 0)
			continue;
		if (!any)
			printf("\nSlurm updates\n");
		any = true;
		printf("  %s  %s  %s\n", js(e, "at"), js(e, "kind"), js(e, "detail"));
	}
}

static void print_timeline(struct show *s)
{
	size_t i;
	json_t *e;

	if (json_array_size(s->timeline) == 0)
		return;
	printf("\nTimeline\n");
	json_array_foreach(s->timeline, i, e) {
		double t = json_real_value(json_object_get(e, "t"));

		printf("  %s  %+9.3fs  %s%s%s\n", js(e, "at"), t - s->created_at,
		       js(e, "what"), json_is_string(json_object_get(e, "detail")) ? "  " : "",
		       json_is_string(json_object_get(e, "detail")) ? js(e, "detail") : "");
	}
}

static const struct option show_longopts[] = {
	CTL_COMMON_LONGOPTS,
	{ "svg", required_argument, NULL, 'S' },
	{ NULL, 0, NULL, 0 }
};

/*
 * --svg FILE, checked before anything is read: "-" is standard output,
 * which --json has; set-uid, the caller picks no file to write (the shell
 * can: --svg - >FILE).
 */
static gb_err_t svg_check(struct ctl *ctl, const char *cmd, const char *file)
{
	gb_error_t err = { 0 };
	gb_err_t rc;

	if (strcmp(file, "-") == 0 && ctl->json)
		return ctl_usage(cmd, "--svg - and --json would both write to standard output");
	if (strcmp(file, "-") != 0 && ctl->setid)
		return ctl_usage(cmd, "--svg FILE is refused when gpuburstctl runs set-uid or set-gid (--svg - >FILE writes as you)");
	if ((rc = ctl_svg_check_path(file, &err)))
		return ctl_fail(rc, "--svg: %s", err.text);
	return GB_E_OK;
}

gb_err_t ctl_cmd_requests_show(struct ctl *ctl, int argc, char **argv)
{
	const char *cmd = "requests show";
	struct show s = { ctl };
	gb_error_t err = { 0 };
	const char *svg = NULL;
	bool first = true;
	gb_state_t *st;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, cmd, argc, argv, ":jh", show_longopts,
			       &first, &rc)) != -1) {
		if (c == CTL_OPT_DONE)
			return rc;
		if (c != 'S')
			return ctl_unimplemented(cmd, c);
		svg = optarg;
	}
	if (optind >= argc)
		return ctl_usage(cmd, "which request? (an ID from gpuburstctl requests)");
	if (optind + 1 < argc)
		return ctl_usage(cmd, "unexpected argument \"%s\"", argv[optind + 1]);
	if ((rc = ctl_check_id(cmd, argv[optind])))
		return rc;
	if (svg && (rc = svg_check(ctl, cmd, svg)))
		return rc;
	if (svg && !(s.tl = ctl_tl_create()))
		return ctl_fail(GB_E_NOMEM, "out of memory");
	st = ctl_state(ctl, false, &rc);
	if (!rc && !st)
		rc = ctl_fail(GB_E_NOTFOUND, "no request %s (no state file yet)", argv[optind]);
	if (rc) {
		ctl_tl_destroy(s.tl);
		return rc;
	}
	if (!show_lists(&s))
		rc = gb_errorf(&err, GB_E_NOMEM, "out of memory");
	else
		rc = gather(&s, st, argv[optind], &err);
	if (rc == GB_E_NOTFOUND)
		ctl_fail(rc, "no request %s", argv[optind]);
	else if (rc)
		ctl_fail(rc, "%s", err.text);
	else if (svg)
		rc = ctl_tl_write(ctl, s.tl, svg);
	else if (ctl->json) {
		json_t *doc = json_object();
		size_t i;
		json_t *e;

		json_array_foreach(s.timeline, i, e)
			json_object_del(e, "t");
		json_object_set(doc, "request", s.request);
		json_object_set(doc, "approval", s.approval ? s.approval : json_null());
		json_object_set(doc, "plans", s.plans);
		json_object_set(doc, "attempts", s.attempts);
		json_object_set(doc, "instances", s.instances);
		json_object_set_new(doc, "extras", json_integer(s.extras));
		json_object_set(doc, "events", s.events);
		json_object_set(doc, "timeline", s.timeline);
		ctl_json_result(doc);
	} else {
		print_request(&s);
		print_approval(&s);
		print_plans(&s);
		print_attempts(&s);
		print_instances_of(&s);
		print_slurm(&s);
		print_timeline(&s);
		print_result(&s);
	}
	show_free(&s);
	return rc;
}
