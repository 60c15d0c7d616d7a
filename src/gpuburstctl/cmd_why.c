/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_why.c - gpuburstctl why JOB | NODE
 *
 * "Why is my GPU job pending?" in plain sentences: what Slurm says about
 * the job or node, then what gpuburst did and does for it, from the state
 * file: each request (the newest WHY_REQUESTS), its approval (since when,
 * until when, who may decide), the plan (regions in order, and why), the
 * launch calls with their answers, the instances; what it waits for now
 * (a decision, the worker, a back-off, a pool's cool-down, boot and
 * registration); and what an administrator can do.  --json gives the same
 * as data, the sentences included.  Nothing is changed: read-only.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "gb_slurm.h"
#include "gb_util.h"

#define WHY_REQUESTS 5		/* the newest requests told */
#define WHY_ATTEMPTS 8		/* the last calls of a request told */

struct says {
	struct gb_strv lines;		/* the sentences, in order */
	struct gb_strv todo;		/* what an administrator can do */
	json_t *requests;		/* per request: its facts and sentences */
	json_t *cur;			/* the request being told: its "says" */
	json_t *pools;			/* the capacity memory, read once when a
					 * request needs it (cooling) */
	double now;
};

static void say(struct says *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct says *w, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	gb_strv_add(&w->lines, line);
	if (w->cur)
		json_array_append_new(w->cur, json_string(line));
}

static void todo(struct says *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void todo(struct says *w, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (gb_strv_find(&w->todo, line) < 0)
		gb_strv_add(&w->todo, line);
}

/* "2026-12-07T10:00:00Z (4m ago)" / "(in 20m)" */
static const char *when(const struct says *w, double t, char *buf, size_t n)
{
	char ts[32], d[32];

	if (t <= 0)
		return "never";
	ctl_time(t, ts, sizeof(ts));
	if (t <= w->now)
		snprintf(buf, n, "%s (%s ago)", ts, ctl_dur(w->now - t, d, sizeof(d)));
	else
		snprintf(buf, n, "%s (in %s)", ts, ctl_dur(t - w->now, d, sizeof(d)));
	return buf;
}

/*****************************************************************************
 *  What the state file holds about one request
 *****************************************************************************/

struct req {
	struct gb_request r;
	struct gb_strv keep;		/* its strings */
};

struct reqs {
	struct req *v;
	size_t n;
	bool oom;
};

static const char *keep(struct gb_strv *k, const char *s)
{
	if (!s || gb_strv_add(k, s))
		return NULL;
	return k->v[k->n - 1];
}

static int req_cb(const struct gb_request *r, void *arg)
{
	struct reqs *rs = arg;
	struct req *v = realloc(rs->v, (rs->n + 1) * sizeof(*v)), *x;

	if (!v) {
		rs->oom = true;
		return 1;
	}
	rs->v = v;
	x = memset(&v[rs->n++], 0, sizeof(*x));
	x->r = *r;
	x->r.nodeset = keep(&x->keep, r->nodeset);
	x->r.nodes = keep(&x->keep, r->nodes);
	x->r.instance_type = keep(&x->keep, r->instance_type);
	x->r.home_region = keep(&x->keep, r->home_region);
	x->r.strategy = keep(&x->keep, r->strategy);
	x->r.input = keep(&x->keep, r->input);
	x->r.reason = keep(&x->keep, r->reason);
	x->r.job_user = keep(&x->keep, r->job_user);
	x->r.job_account = keep(&x->keep, r->job_account);
	x->r.job_partition = keep(&x->keep, r->job_partition);
	return 0;
}

static void reqs_free(struct reqs *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		gb_strv_free(&rs->v[i].keep);
	free(rs->v);
}

struct tell {
	struct says *w;
	const struct gb_conf *conf;
	const struct gb_request *r;
	size_t n_attempts, told_attempts;
	int refused;			/* capacity refusals among them */
	const char *last_code;
};

static void approval_cb(const struct gb_approval *a, void *arg)
{
	struct tell *t = arg;
	struct says *w = t->w;
	const struct gb_conf_admins *ad = &t->conf->admins;
	char b1[96], b2[96];
	struct gb_buf who = GB_BUF_INIT;

	switch (a->state) {
	case GB_APPROVAL_PENDING:
		gb_buf_puts(&who, "root, the SlurmUser");
		for (size_t i = 0; i < ad->n_users; i++)
			gb_buf_printf(&who, ", %s", ad->users[i]);
		if (ad->group)
			gb_buf_printf(&who, ", members of group %s", ad->group);
		say(w, "It needs an administrator's approval: %s. Asked %s; it expires %s. Who may decide: %s.",
		    a->why ? a->why : "over the threshold", when(w, a->requested_at, b1, sizeof(b1)),
		    when(w, a->expires_at, b2, sizeof(b2)), gb_buf_failed(&who) ? "?" :
		    gb_buf_str(&who));
		todo(w, "approve it: gpuburstctl approve %s", t->r->id);
		todo(w, "or deny it: gpuburstctl deny %s --reason TEXT [--cancel | --hold]",
		     t->r->id);
		break;
	case GB_APPROVAL_APPROVED:
		say(w, "It was approved by %s %s%s%s.", a->decided_by ? a->decided_by : "?",
		    when(w, a->decided_at, b1, sizeof(b1)), a->comment ? ": " : "",
		    a->comment ? a->comment : "");
		break;
	case GB_APPROVAL_DENIED:
		say(w, "It was denied by %s %s%s%s.", a->decided_by ? a->decided_by : "?",
		    when(w, a->decided_at, b1, sizeof(b1)), a->comment ? ": " : "",
		    a->comment ? a->comment : "");
		break;
	case GB_APPROVAL_EXPIRED:
		say(w, "Its approval expired %s: nobody decided in time.",
		    when(w, a->decided_at > 0 ? a->decided_at : a->expires_at, b1, sizeof(b1)));
		break;
	default:
		break;
	}
	gb_buf_free(&who);
}

/* The regions of a plan's steps, in order, each once: "ap-southeast-1, ap-south-1". */
static void plan_pools(const char *body, char *buf, size_t n)
{
	json_t *d = body ? json_loads(body, 0, NULL) : NULL, *pools, *p;
	struct gb_strv seen = { 0 };
	size_t i, len = 0;

	buf[0] = '\0';
	pools = json_object_get(d, "steps");
	json_array_foreach(pools, i, p) {
		const char *r = json_string_value(json_object_get(p, "region"));

		if (!r || gb_strv_find(&seen, r) >= 0)
			continue;
		gb_strv_add(&seen, r);
		if (len < n)
			len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "", r);
	}
	gb_strv_free(&seen);
	json_decref(d);
}

static int plan_cb(const struct gb_plan_row *p, void *arg)
{
	struct tell *t = arg;
	char pools[512];

	if (!p->status || strcmp(p->status, "rejected") == 0)
		return 0;
	plan_pools(p->body, pools, sizeof(pools));
	say(t->w, "Plan v%d (%s): %s%s%s; %s%s%s.", p->version, p->planner ? p->planner : "?",
	    pools[0] ? "regions " : "no pool left to try", pools, pools[0] ? ", in that order" : "",
	    p->reason ? p->reason : "no reason recorded",
	    !p->rationale ? "" : p->planner && strncmp(p->planner, "llm", 3) == 0 ?
	    "; the model said: " : ": ", p->rationale ? p->rationale : "");
	return 0;
}

static int attempt_count_cb(const struct gb_attempt *a, void *arg)
{
	(void)a;
	((struct tell *)arg)->n_attempts++;
	return 0;
}

/* The length of [s] without its final periods and blanks. */
static int trimmed(const char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '.' || isspace((unsigned char)s[n - 1])))
		n--;
	return n > 400 ? 400 : (int)n;
}

static int attempt_cb(const struct gb_attempt *a, void *arg)
{
	struct tell *t = arg;
	char b[96];

	if (a->error_class && strcmp(a->error_class, "CAPACITY") == 0)
		t->refused++;
	t->told_attempts++;
	if (t->told_attempts + WHY_ATTEMPTS <= t->n_attempts)
		return 0;	/* the last WHY_ATTEMPTS are told */
	if (a->state == GB_ATTEMPT_OK)
		say(t->w, "Call %d %s: RunInstances of %d %s (%s) in %s/%s gave %d.", a->seq + 1,
		    when(t->w, a->started_at, b, sizeof(b)), a->asked,
		    a->instance_type ? a->instance_type : "?", a->capacity ? a->capacity : "on-demand",
		    a->region ? a->region : "?", a->az ? a->az : "-", a->got);
	else if (a->state == GB_ATTEMPT_STARTED)
		say(t->w, "Call %d %s: RunInstances of %d %s in %s/%s has no answer yet.",
		    a->seq + 1, when(t->w, a->started_at, b, sizeof(b)), a->asked,
		    a->instance_type ? a->instance_type : "?", a->region ? a->region : "?",
		    a->az ? a->az : "-");
	else
		say(t->w, "Call %d %s: RunInstances of %d %s (%s) in %s/%s was refused: %s%s%.*s%s.",
		    a->seq + 1, when(t->w, a->started_at, b, sizeof(b)), a->asked,
		    a->instance_type ? a->instance_type : "?", a->capacity ? a->capacity : "on-demand",
		    a->region ? a->region : "?", a->az ? a->az : "-",
		    a->error_code ? a->error_code : gb_attempt_state_name(a->state),
		    a->message ? " (" : "", a->message ? trimmed(a->message) : 0,
		    a->message ? a->message : "", a->message ? ")" : "");
	return 0;
}

static int instance_cb(const struct gb_instance *in, void *arg)
{
	struct tell *t = arg;
	char b[96], b2[96];

	if (!in->node) {
		say(t->w, "Instance %s in %s was launched beyond need and terminated at once (%s).",
		    in->instance_id, in->az ? in->az : in->region,
		    in->reason ? in->reason : "extra");
		return 0;
	}
	if (in->terminated_at > 0 || in->state == GB_INST_TERMINATED || in->state == GB_INST_LOST)
		say(t->w, "Instance %s in %s for %s: launched %s, %s %s%s%s.", in->instance_id,
		    in->az ? in->az : in->region, in->node,
		    when(t->w, in->launched_at, b, sizeof(b)), gb_instance_state_name(in->state),
		    when(t->w, in->terminated_at, b2, sizeof(b2)), in->reason ? ": " : "",
		    in->reason ? in->reason : "");
	else
		say(t->w, "Instance %s in %s for %s: %s since %s%s%s.", in->instance_id,
		    in->az ? in->az : in->region, in->node, gb_instance_state_name(in->state),
		    when(t->w, in->launched_at, b, sizeof(b)), in->agent ? "; its agent says " : "",
		    in->agent ? in->agent : "");
	return 0;
}

/* Pools of [type] cooling down after refusals, from the capacity memory. */
static void cooling(struct ctl *ctl, const struct gb_conf *conf, gb_state_t *st,
		    struct says *w, const char *type)
{
	json_t *quotas = NULL, *p;
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t err;
	char d[32];
	size_t i, n = 0;

	if (!type)
		return;
	if (!w->pools) {
		if (ctl_capacity_json(ctl, conf, st, &w->pools, &quotas, &err))
			return;
		json_decref(quotas);
	}
	json_array_foreach(w->pools, i, p) {
		const char *t = json_string_value(json_object_get(p, "instance_type"));
		const char *az = json_string_value(json_object_get(p, "az"));

		if (!t || strcmp(t, type) || !json_is_true(json_object_get(p, "cooling")))
			continue;
		gb_buf_printf(&b, "%s%s/%s %s (%s left)", n++ ? ", " : "",
			      json_string_value(json_object_get(p, "region")), az ? az : "-",
			      json_string_value(json_object_get(p, "capacity")),
			      ctl_dur(json_number_value(json_object_get(p, "cool_down_left")), d,
				      sizeof(d)));
	}
	if (n && !gb_buf_failed(&b))
		say(w, "Pools of %s cooling down after a capacity refusal (the planner asks them last): %s.",
		    type, gb_buf_str(&b));
	gb_buf_free(&b);
}

/* Where request [r] stands now, and what can be done. */
static void now_sentence(struct ctl *ctl, const struct gb_conf *conf, gb_state_t *st,
			 struct says *w, const struct gb_request *r, const struct tell *t)
{
	char b[96];

	switch (r->state) {
	case GB_RSTATE_PENDING_APPROVAL:
		say(w, "Now: it waits for that decision; no ResumeTimeout runs while the job is held.");
		break;
	case GB_RSTATE_QUEUED:
		if (r->not_before > w->now)
			say(w, "Now: it waits until %s before the worker tries again%s%s.",
			    when(w, r->not_before, b, sizeof(b)), r->reason ? " (" : "",
			    r->reason ? r->reason : "");
		else
			say(w, "Now: it is queued for the worker, which takes the oldest first.");
		cooling(ctl, conf, st, w, r->instance_type);
		break;
	case GB_RSTATE_RUNNING:
		say(w, "Now: worker %lld is launching it (claim %d)%s%s.", (long long)r->worker_pid,
		    r->claims, t->refused ? "; capacity refusals so far: " : "",
		    t->refused ? "see the calls above" : "");
		cooling(ctl, conf, st, w, r->instance_type);
		break;
	case GB_RSTATE_DONE:
		if (r->result == GB_RESULT_SUCCESS) {
			say(w, "Now: every node got its instance (%d); a node runs the job once its instance has booted and its slurmd registered with slurmctld.",
			    r->launched);
		} else {
			say(w, "It ended %s with %d of %d nodes launched%s%s.",
			    gb_request_result_name(r->result), r->launched, r->node_count,
			    r->reason ? ": " : "", r->reason ? r->reason : "");
			if (r->nodes)
				todo(w, "once the cause is fixed, make the nodes that got nothing usable again: gpuburstctl nodes resume %s",
				     r->nodes);
			if (t->refused)
				todo(w, "see what the planner remembers of the pools: gpuburstctl capacity --type %s",
				     r->instance_type ? r->instance_type : "TYPE");
		}
		break;
	case GB_RSTATE_FAILED:
		say(w, "It failed%s%s.", r->reason ? ": " : "", r->reason ? r->reason : "");
		if (r->nodes)
			todo(w, "once the cause is fixed: gpuburstctl nodes resume %s", r->nodes);
		break;
	case GB_RSTATE_DENIED:
		say(w, "It was denied: nothing was launched for it.");
		break;
	case GB_RSTATE_EXPIRED:
		say(w, "It expired before a decision: nothing was launched for it.");
		break;
	case GB_RSTATE_CANCELLED:
		say(w, "It was cancelled%s%s.", r->reason ? ": " : "", r->reason ? r->reason : "");
		break;
	default:
		break;
	}
	todo(w, "replay it in full: gpuburstctl requests show %s", r->id);
}

static gb_err_t tell_request(struct ctl *ctl, const struct gb_conf *conf, gb_state_t *st,
			     struct says *w, const struct gb_request *r, gb_error_t *err)
{
	struct tell t = { .w = w, .conf = conf, .r = r };
	struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
	json_t *o = ctl_request_json(r);
	char b[96];
	gb_err_t rc;

	w->cur = json_array();
	json_object_set_new(o, "says", w->cur);
	json_array_append_new(w->requests, o);
	if (r->kind == GB_REQ_RESUME)
		say(w, "Request %s: resume of %d node%s %s (nodeset %s, %s, home %s), made %s: %s.",
		    r->id, r->node_count, r->node_count == 1 ? "" : "s",
		    r->nodes ? r->nodes : "(decided at submit: no nodes yet)",
		    r->nodeset ? r->nodeset : "-", r->instance_type ? r->instance_type : "?",
		    r->home_region ? r->home_region : "?", when(w, r->created_at, b, sizeof(b)),
		    gb_request_state_name(r->state));
	else
		say(w, "Request %s: %s of %s, made %s: %s.", r->id, gb_request_kind_name(r->kind),
		    r->nodes ? r->nodes : "-", when(w, r->created_at, b, sizeof(b)),
		    gb_request_state_name(r->state));
	rc = gb_state_approval_get(st, r->id, approval_cb, &t, err);
	if (rc && rc != GB_E_NOTFOUND)
		return rc;
	f.request_id = r->id;
	if ((rc = gb_state_plan_list(st, r->id, plan_cb, &t, err)) ||
	    (rc = gb_state_attempt_list(st, r->id, attempt_count_cb, &t, err)))
		return rc;
	if (t.n_attempts > WHY_ATTEMPTS)
		say(w, "%zu launch calls; the last %d:", t.n_attempts, WHY_ATTEMPTS);
	if ((rc = gb_state_attempt_list(st, r->id, attempt_cb, &t, err)) ||
	    (rc = gb_state_instance_list(st, &f, instance_cb, &t, err)))
		return rc;
	now_sentence(ctl, conf, st, w, r, &t);
	w->cur = NULL;
	return GB_E_OK;
}

/*****************************************************************************
 *  What Slurm says
 *****************************************************************************/

static json_t *job_about(struct says *w, uint32_t job, bool slurm_ok)
{
	struct gb_slurm_job_text jt;
	gb_error_t err;
	json_t *o;
	char b[96];
	gb_err_t rc;

	if (!slurm_ok) {
		say(w, "Slurm did not answer: what follows is the state file's alone.");
		return json_null();
	}
	if ((rc = gb_slurm_job_text(job, &jt, &err))) {
		if (rc == GB_E_NOTFOUND)
			say(w, "Slurm does not know job %u (it ended a while ago, or never existed).",
			    job);
		else
			say(w, "Slurm did not say about job %u: %s.", job, err.text);
		return json_null();
	}
	say(w, "Job %u (%s, user %s, account %s, partition %s) is %s%s%s%s%s, submitted %s.", job,
	    jt.name ? jt.name : "no name", jt.user ? jt.user : "?",
	    jt.account ? jt.account : "-", jt.partition ? jt.partition : "-",
	    jt.state ? jt.state : "?", jt.reason ? " (" : "", jt.reason ? jt.reason : "",
	    jt.reason ? ")" : "", jt.nodes && *jt.nodes ? "" : "",
	    when(w, jt.submit_time, b, sizeof(b)));
	if (jt.state && strstr(jt.state, "CONFIGURING"))
		say(w, "Slurm gave it nodes %s and waits for them to power up (boot and register) before it starts; slurmctld gives up after ResumeTimeout.",
		    jt.nodes ? jt.nodes : "?");
	if (jt.reason && strcmp(jt.reason, "JobHeldUser") == 0 && jt.admin_comment &&
	    strstr(jt.admin_comment, GB_APPROVAL_KEY))
		say(w, "job_submit/gpuburst held it at submit for approval; the next reconcile pass records it and makes the hold an administrator's.");
	if (jt.admin_comment && *jt.admin_comment)
		say(w, "Its AdminComment says: %s.", jt.admin_comment);
	o = json_pack("{s:i,s:s?,s:s?,s:s?,s:s?,s:s?,s:s?,s:s?,s:s?,s:i,s:i}", "job_id", (int)job,
		      "name", jt.name, "user", jt.user, "account", jt.account, "partition",
		      jt.partition, "state", jt.state, "reason", jt.reason, "nodes", jt.nodes,
		      "admin_comment", jt.admin_comment, "num_nodes", (int)jt.num_nodes,
		      "time_limit", (int)jt.time_limit);
	gb_slurm_job_text_clear(&jt);
	return o;
}

static json_t *node_about(struct says *w, const char *node, bool slurm_ok)
{
	struct gb_slurm_node_list *l = NULL;
	const struct gb_slurm_node *n;
	gb_error_t err;
	json_t *o;

	if (!slurm_ok || gb_slurm_nodes_load(&l, &err)) {
		say(w, "Slurm did not answer: what follows is the state file's alone.");
		return json_null();
	}
	if (!(n = gb_slurm_node_find(l, node))) {
		say(w, "Slurm has no node %s: its slurm.conf does not list it.", node);
		gb_slurm_node_list_free(l);
		return json_null();
	}
	say(w, "Slurm says node %s is %s%s%s%s.", node, n->state_str ? n->state_str : "?",
	    n->reason ? " (reason: " : "", n->reason ? n->reason : "", n->reason ? ")" : "");
	if (n->powered_down && !n->powering_up)
		say(w, "It is powered down: Slurm powers it up (gpuburst-resume) when a job needs it.");
	o = json_pack("{s:s,s:s?,s:s?}", "node", node, "state", n->state_str, "reason", n->reason);
	gb_slurm_node_list_free(l);
	return o;
}

/*****************************************************************************
 *  why JOB | NODE
 *****************************************************************************/

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

static const struct option why_longopts[] = { CTL_COMMON_LONGOPTS, { 0 } };

gb_err_t ctl_cmd_why(struct ctl *ctl, int argc, char **argv)
{
	struct says w = { .requests = json_array() };
	struct gb_request_filter f = GB_REQUEST_FILTER_ANY;
	const struct gb_conf_nodeset *ns = NULL;
	const struct gb_conf *conf;
	struct reqs rs = { 0 };
	json_t *slurm = NULL;
	gb_error_t err = { 0 };
	const char *what;
	bool first = true, slurm_ok;
	unsigned long job = 0;
	gb_state_t *st;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, "why", argc, argv, ":jh", why_longopts, &first, &rc)) != -1) {
		if (c == CTL_OPT_DONE)
			goto out;
		rc = ctl_unimplemented("why", c);
		goto out;
	}
	if (optind >= argc) {
		rc = ctl_usage("why", "about which job (its id) or node (its name)?");
		goto out;
	}
	if (optind + 1 < argc) {
		rc = ctl_usage("why", "unexpected argument '%s'", argv[optind + 1]);
		goto out;
	}
	what = argv[optind];
	w.now = ctl->now;
	if (!(conf = ctl_conf(ctl, &rc)))
		goto out;
	if (all_digits(what)) {
		errno = 0;
		job = strtoul(what, NULL, 10);
		if (errno || job == 0 || job > 0xfffffffeUL) {
			rc = ctl_usage("why", "job id '%s' is not a Slurm job id (1 to 4294967294)",
				       what);
			goto out;
		}
		f.job_id = (int64_t)job;
	} else if (!(ns = gb_conf_nodeset_for_node(conf, what))) {
		rc = ctl_fail(GB_E_NOTFOUND, "why: '%.64s' is neither a job id nor a node of a nodeset: gpuburst does not own it",
			      what);
		goto out;
	} else {
		f.node = what;
	}
	slurm_ok = gb_slurm_init(&err) == GB_E_OK;
	slurm = job ? job_about(&w, (uint32_t)job, slurm_ok) : node_about(&w, what, slurm_ok);
	if (ns)
		say(&w, "Node %s belongs to nodeset %s (%s, home region %s, partition %s).", what,
		    ns->name, ns->instance_type, ns->home_region, ns->partition);
	st = ctl_state(ctl, false, &rc);
	if (rc)
		goto out;
	if (st && (rc = gb_state_request_list(st, &f, req_cb, &rs, &err))) {
		rc = ctl_fail(rc, "why: %s", err.text);
		goto out;
	}
	if (rs.oom) {
		rc = ctl_fail(GB_E_NOMEM, "why: out of memory");
		goto out;
	}
	if (!rs.n) {
		if (job)
			say(&w, "gpuburst has no request for job %lu: it never asked for cloud nodes. A job waits in PENDING (Priority, Resources) before slurmctld picks nodes; only when it picks powered-down cloud nodes does gpuburst-resume run. A job outside the burst partitions never gets any.",
			    job);
		else
			say(&w, "gpuburst has no request concerning %s%s.", what,
			    st ? "" : " (no state file yet)");
	} else if (rs.n > WHY_REQUESTS) {
		say(&w, "%zu requests concern it; the newest %d:", rs.n, WHY_REQUESTS);
	}
	for (size_t i = rs.n > WHY_REQUESTS ? rs.n - WHY_REQUESTS : 0; i < rs.n; i++)
		if ((rc = tell_request(ctl, conf, st, &w, &rs.v[i].r, &err))) {
			rc = ctl_fail(rc, "why: %s", err.text);
			goto out;
		}
	if (ctl->json) {
		json_t *lines = json_array(), *todos = json_array();

		for (size_t i = 0; i < w.lines.n; i++)
			json_array_append_new(lines, json_string(w.lines.v[i]));
		for (size_t i = 0; i < w.todo.n; i++)
			json_array_append_new(todos, json_string(w.todo.v[i]));
		ctl_json_result(json_pack("{s:o,s:o,s:o,s:o,s:o}", "subject",
					  job ? json_pack("{s:I}", "job", (json_int_t)job) :
					  json_pack("{s:s}", "node", what),
					  "slurm", slurm ? json_incref(slurm) : json_null(),
					  "requests", json_incref(w.requests), "says", lines,
					  "can_do", todos));
	} else {
		for (size_t i = 0; i < w.lines.n; i++)
			printf("%s\n", w.lines.v[i]);
		if (w.todo.n)
			printf("\nWhat an administrator can do:\n");
		for (size_t i = 0; i < w.todo.n; i++)
			printf("  %s\n", w.todo.v[i]);
	}
out:
	json_decref(slurm);
	json_decref(w.pools);
	json_decref(w.requests);
	gb_strv_free(&w.lines);
	gb_strv_free(&w.todo);
	reqs_free(&rs);
	return rc;
}
