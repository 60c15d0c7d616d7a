/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_terminate.c - gpuburstctl terminate NODES|--all, in two steps
 *
 * Like the ancestor's delete approval (describe, then ask), a manual
 * terminate first prints what it would terminate and a confirmation token;
 * only a second run with --confirm TOKEN (or --yes, for scripts) acts.  The
 * token is a hash of the cluster, the exact (node, region, instance) set and
 * a five-minute time bucket: it stops working when the set changes or after
 * five to ten minutes, so a stale confirmation cannot terminate something
 * the administrator never saw.  It is not a secret.
 *
 * Jobs that hold the nodes are listed in the preview and are part of the
 * token: --yes alone refuses to kill them (--force does, and so does the
 * token of a preview that showed them).  When Slurm cannot say which jobs
 * run there, only --force goes on.
 *
 * The termination itself runs here, recorded as a TERMINATE request (state
 * running with our pid: if we die, reconcile requeues it and the worker
 * finishes it), through gb_orch_terminate (TerminateInstances per region,
 * records closed); then Slurm's node addresses are cleared and each node
 * still up in Slurm is set DOWN with the reason (its jobs requeue, or fail
 * when they cannot be requeued, at once instead of after SlurmdTimeout)
 * and powered down (back to idle~, ready for the next job).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "gb_crypto.h"
#include "gb_log.h"
#include "gb_orch.h"
#include "gb_prog.h"
#include "gb_slurm.h"
#include "gb_worker.h"

#define TOKEN_BUCKET 300.0	/* seconds; a token works in its bucket and the next */
#define TOKEN_HEX 10

struct victim {
	char *node, *region, *instance_id, *state;
	double launched_at;
};

struct victims {
	struct victim *v;
	size_t n;
	const struct gb_strv *wanted;	/* sorted node names; NULL: every node */
	bool oom;
	struct gb_slurm_job_list *jobs;	/* on the victims' nodes; NULL: unknown */
	char *jobs_error;		/* why unknown */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_victim(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;
	int c = strcmp(x->node, y->node);

	return c ? c : strcmp(x->instance_id, y->instance_id);
}

static int victim_cb(const struct gb_instance *in, void *arg)
{
	struct victims *vs = arg;
	struct victim *grown, *v;
	const char *node = in->node;

	if (!node || (vs->wanted && !bsearch(&node, vs->wanted->v, vs->wanted->n,
					     sizeof(char *), cmp_str)))
		return 0;
	if (!(grown = realloc(vs->v, (vs->n + 1) * sizeof(*grown)))) {
		vs->oom = true;
		return 1;
	}
	vs->v = grown;
	v = &vs->v[vs->n++];
	v->node = strdup(node);
	v->region = strdup(in->region);
	v->instance_id = strdup(in->instance_id);
	v->state = strdup(gb_instance_state_name(in->state));
	v->launched_at = in->launched_at;
	vs->oom |= !v->node || !v->region || !v->instance_id || !v->state;
	return vs->oom;
}

static void victims_free(struct victims *vs)
{
	for (size_t i = 0; i < vs->n; i++) {
		free(vs->v[i].node);
		free(vs->v[i].region);
		free(vs->v[i].instance_id);
		free(vs->v[i].state);
	}
	free(vs->v);
	gb_slurm_job_list_free(vs->jobs);
	free(vs->jobs_error);
}

/* The token of [vs] (sorted) in time bucket [bucket]. */
static void token_of(const struct gb_conf *conf, const struct victims *vs,
		     long bucket, char out[TOKEN_HEX + 1])
{
	struct gb_buf b = GB_BUF_INIT;
	char hex[2 * GB_SHA256_LEN + 1];

	gb_buf_printf(&b, "gpuburst-terminate\n%s\n%ld\n", conf->cluster_name, bucket);
	for (size_t i = 0; i < vs->n; i++)
		gb_buf_printf(&b, "%s %s %s\n", vs->v[i].node, vs->v[i].region,
			      vs->v[i].instance_id);
	for (size_t i = 0; vs->jobs && i < vs->jobs->n; i++)
		gb_buf_printf(&b, "job %u\n", vs->jobs->v[i].job_id);
	gb_crypto_sha256_hex(gb_buf_str(&b), b.len, hex);
	memcpy(out, hex, TOKEN_HEX);
	out[TOKEN_HEX] = '\0';
	gb_buf_free(&b);
}

/* The distinct nodes of [vs] (sorted), for the request and Slurm. */
static gb_err_t victim_nodes(const struct victims *vs, struct gb_strv *out)
{
	for (size_t i = 0; i < vs->n; i++)
		if ((i == 0 || strcmp(vs->v[i].node, vs->v[i - 1].node) != 0) &&
		    gb_strv_add(out, vs->v[i].node))
			return GB_E_NOMEM;
	return GB_E_OK;
}

struct opts {
	const char *cmd;
	const char *nodes;	/* expression, or NULL with --all */
	bool all, yes, force;
	const char *confirm;
	const char *reason;
};

static json_t *jobs_json(const struct victims *vs)
{
	json_t *a = json_array();

	for (size_t i = 0; vs->jobs && i < vs->jobs->n; i++) {
		const struct gb_slurm_job *j = &vs->jobs->v[i];

		json_array_append_new(a, json_pack("{s:I,s:I,s:o,s:o,s:s,s:s,s:b}",
			"job_id", (json_int_t)j->job_id, "user_id", (json_int_t)j->user_id,
			"user", ctl_jstr(j->user), "name", ctl_jstr(j->name),
			"state", j->state, "nodes", j->nodes, "requeue", j->requeue));
	}
	return a;
}

static void print_jobs(const struct victims *vs)
{
	struct ctl_table t;
	char id[24], uid[24];

	if (!vs->jobs) {
		printf("jobs on these nodes: unknown (%s); only --force terminates them\n",
		       vs->jobs_error ? vs->jobs_error : "Slurm not read");
		return;
	}
	if (vs->jobs->n == 0)
		return;
	printf("%zu job%s on these nodes will end (requeued, or failed where they cannot be requeued):\n",
	       vs->jobs->n, vs->jobs->n == 1 ? "" : "s");
	ctl_table_init(&t, 6, "JOB", "USER", "NAME", "STATE", "NODES", "ON_FAILURE");
	t.indent = "  ";
	for (size_t i = 0; i < vs->jobs->n; i++) {
		const struct gb_slurm_job *j = &vs->jobs->v[i];

		snprintf(id, sizeof(id), "%u", j->job_id);
		snprintf(uid, sizeof(uid), "%u", j->user_id);
		ctl_table_row(&t, id, j->user ? j->user : uid, j->name ? j->name : "-",
			      j->state, j->nodes, j->requeue ? "requeue" : "fail");
	}
	ctl_table_print(&t, stdout);
	ctl_table_free(&t);
}

static void print_preview(struct ctl *ctl, const struct opts *o,
			  const struct victims *vs, const struct gb_strv *missing,
			  const char *token)
{
	struct ctl_table t;
	char launched[32], ran[64];

	if (ctl->json) {
		json_t *doc = json_object(), *a = json_array(), *m = json_array();

		for (size_t i = 0; i < vs->n; i++)
			json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s,s:o}",
				"node", vs->v[i].node, "region", vs->v[i].region,
				"instance_id", vs->v[i].instance_id, "state", vs->v[i].state,
				"launched_at", ctl_jtime(vs->v[i].launched_at)));
		for (size_t i = 0; missing && i < missing->n; i++)
			json_array_append_new(m, json_string(missing->v[i]));
		json_object_set_new(doc, "confirmed", json_false());
		json_object_set_new(doc, "token", json_string(token));
		json_object_set_new(doc, "valid_seconds", json_integer((json_int_t)TOKEN_BUCKET));
		json_object_set_new(doc, "instances", a);
		json_object_set_new(doc, "nodes_without_instance", m);
		json_object_set_new(doc, "jobs", jobs_json(vs));
		json_object_set_new(doc, "jobs_error", ctl_jstr(vs->jobs_error));
		ctl_json_result(doc);
		return;
	}
	printf("would terminate %zu instance%s:\n", vs->n, vs->n == 1 ? "" : "s");
	ctl_table_init(&t, 6, "NODE", "INSTANCE", "REGION", "STATE", "LAUNCHED", "RAN");
	t.indent = "  ";
	for (size_t i = 0; i < vs->n; i++)
		ctl_table_row(&t, vs->v[i].node, vs->v[i].instance_id, vs->v[i].region,
			      vs->v[i].state,
			      ctl_time(vs->v[i].launched_at, launched, sizeof(launched)),
			      ctl_dur(vs->v[i].launched_at > 0 ? ctl->now - vs->v[i].launched_at
							      : -1, ran, sizeof(ran)));
	ctl_table_print(&t, stdout);
	ctl_table_free(&t);
	if (missing && missing->n) {
		printf("nodes without a live instance (nothing to do):");
		for (size_t i = 0; i < missing->n; i++)
			printf(" %s", missing->v[i]);
		printf("\n");
	}
	print_jobs(vs);
	printf("To terminate them%s, run within 5 minutes:\n  gpuburstctl terminate %s%s%s --confirm %s\n",
	       vs->jobs && vs->jobs->n ? " and end those jobs" : "",
	       o->all ? "--all" : "'", o->all ? "" : o->nodes, o->all ? "" : "'", token);
}

/* Nodes of the expression without a live instance, for the preview. */
static gb_err_t missing_nodes(const struct gb_strv *wanted,
			      const struct victims *vs, struct gb_strv *out)
{
	for (size_t i = 0; i < wanted->n; i++) {
		bool found = false;

		for (size_t j = 0; j < vs->n && !found; j++)
			found = strcmp(vs->v[j].node, wanted->v[i]) == 0;
		if (!found && gb_strv_add(out, wanted->v[i]))
			return GB_E_NOMEM;
	}
	return GB_E_OK;
}

/* Record, run the worker's terminate flow once, finish the record. */
static gb_err_t execute(struct ctl *ctl, const struct gb_conf *conf,
			const struct opts *o, const struct gb_policy_actor *who,
			const struct victims *vs)
{
	struct gb_strv nodes = { 0 };
	struct gb_request req = { .id = "" };
	struct gb_orch_opts oo = { 0 };
	gb_orch_t *orch = NULL;
	char *expr = NULL, reason[256], path[4096], result[256], q[300];
	struct gb_worker_term wt = { .reason = reason, .once = true };
	gb_error_t err = { 0 }, se = { 0 };
	int n_term = 0;
	gb_err_t rc;

	snprintf(reason, sizeof(reason), "terminated by %s%s%s", who->name,
		 o->reason ? ": " : " (gpuburstctl terminate)", o->reason ? o->reason : "");
	if (victim_nodes(vs, &nodes) ||
	    gb_slurm_hostlist_compress(nodes.v, nodes.n, &expr, &err)) {
		rc = ctl_fail(GB_E_NOMEM, "out of memory");
		goto out;
	}
	req.kind = GB_REQ_TERMINATE;
	req.state = GB_RSTATE_RUNNING;
	req.nodes = expr;
	req.node_count = (int)nodes.n;
	req.worker_pid = getpid();
	req.reason = reason;
	if ((rc = gb_state_request_add(ctl->st, &req, &err))) {
		ctl_fail(rc, "%s", err.text);
		goto out;
	}
	wt.req_id = req.id;
	snprintf(result, sizeof(result), "by=%s uid=%lld instances=%zu reason=%s",
		 who->name, (long long)who->uid, vs->n, gb_log_q(q, sizeof(q), reason));
	gb_state_event_add(ctl->st, req.id, "terminate_cli", result, NULL);
	gb_log_notice("terminate_cli req=%s nodes=%s %s", req.id, expr, result);

	gb_prog_state_path(conf, path, sizeof(path));
	oo.conf = conf;
	oo.state_path = path;
	/* the worker's terminate flow, run once: its slurm_update events too */
	if (gb_slurm_init(&se))
		wt.no_slurm = se.text;
	rc = gb_orch_create(&oo, &orch, &err);
	if (rc == GB_E_OK)
		rc = gb_worker_terminate_now(orch, ctl->st, &nodes, &wt, &err);
	n_term = wt.terminated;
	if (wt.slurm_failed)
		fprintf(stderr, "gpuburstctl: warning: %zu node updates not made in Slurm "
			"(gpuburstctl requests show %s): %s\n", wt.slurm_failed, req.id,
			wt.no_slurm ? wt.no_slurm : "see the log");
	if (rc)
		snprintf(result, sizeof(result), "terminated %d of %zu instances: %s", n_term,
			 vs->n, err.text);
	else
		snprintf(result, sizeof(result), "terminated %d of %zu instances", n_term, vs->n);
	gb_state_request_finish(ctl->st, req.id, rc ? GB_RSTATE_FAILED : GB_RSTATE_DONE,
				rc ? (n_term ? GB_RESULT_PARTIAL : GB_RESULT_FAILED)
				   : GB_RESULT_SUCCESS, 0, result, NULL);
	gb_log_notice("terminate_done req=%s %s", req.id, gb_log_q(q, sizeof(q), result));
	if (ctl->json) {
		/* a failure is the document's "error" (ctl_json_finish) */
		ctl_json_result(json_pack("{s:b,s:s,s:s,s:i,s:i,s:o}", "confirmed", 1,
					  "request_id", req.id, "nodes", expr,
					  "instances", (int)vs->n, "terminated", n_term,
					  "jobs", jobs_json(vs)));
	} else {
		printf("request %s: %s\n", req.id, result);
	}
	if (rc)
		ctl_fail(rc, "%s", err.text);
out:
	gb_orch_destroy(orch);
	free(expr);
	gb_strv_free(&nodes);
	return rc;
}

static const struct option term_longopts[] = {
	CTL_COMMON_LONGOPTS,
	{ "all", no_argument, NULL, 'a' },
	{ "yes", no_argument, NULL, 'y' },
	{ "force", no_argument, NULL, 'f' },
	{ "confirm", required_argument, NULL, 'k' },
	{ "reason", required_argument, NULL, 'r' },
	{ NULL, 0, NULL, 0 }
};

/* The jobs on the victims' nodes: vs->jobs, or NULL and vs->jobs_error. */
static void load_jobs(struct victims *vs)
{
	struct gb_strv nodes = { 0 };
	gb_error_t e = { 0 };

	if (victim_nodes(vs, &nodes))
		gb_errorf(&e, GB_E_NOMEM, "out of memory");
	else if (gb_slurm_init(&e) == GB_E_OK)
		gb_slurm_jobs_on(nodes.v, nodes.n, &vs->jobs, &e);
	if (!vs->jobs)
		vs->jobs_error = strdup(e.text[0] ? e.text : "Slurm not read");
	gb_strv_free(&nodes);
}

static gb_err_t parse(struct ctl *ctl, int argc, char **argv, struct opts *o,
		      bool *done)
{
	bool first = true;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, o->cmd, argc, argv, ":jhayfk:r:", term_longopts,
			       &first, &rc)) != -1) {
		switch (c) {
		case CTL_OPT_DONE:
			*done = true;
			return rc;
		case 'a':
			o->all = true;
			break;
		case 'y':
			o->yes = true;
			break;
		case 'f':
			o->force = true;
			break;
		case 'k':
			o->confirm = optarg;
			break;
		case 'r':
			o->reason = optarg;
			break;
		default:
			return ctl_unimplemented(o->cmd, c);
		}
	}
	if (optind < argc)
		o->nodes = argv[optind++];
	if (optind < argc)
		return ctl_usage(o->cmd, "unexpected argument \"%s\"", argv[optind]);
	if (!o->all == !o->nodes)
		return ctl_usage(o->cmd, "give NODES (a Slurm host list) or --all, not both");
	if (o->yes && o->confirm)
		return ctl_usage(o->cmd, "give --yes or --confirm TOKEN, not both");
	return GB_E_OK;
}

gb_err_t ctl_cmd_terminate(struct ctl *ctl, int argc, char **argv)
{
	struct opts o = { "terminate" };
	struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
	struct victims vs = { 0 };
	struct gb_strv wanted = { 0 }, missing = { 0 };
	struct gb_policy_actor who;
	const struct gb_conf *conf;
	char token[TOKEN_HEX + 1], prev[TOKEN_HEX + 1];
	gb_error_t err = { 0 };
	bool done = false;
	long bucket;
	gb_err_t rc;

	rc = parse(ctl, argc, argv, &o, &done);
	if (rc || done)
		return rc;
	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	if ((rc = ctl_authorize(ctl, conf, &who)))
		return rc;
	if (o.nodes) {
		if (gb_slurm_hostlist_expand(o.nodes, 100000, &wanted, &err))
			return ctl_usage(o.cmd, "%s", err.text);
		qsort(wanted.v, wanted.n, sizeof(char *), cmp_str);
		vs.wanted = &wanted;
	}
	ctl_log_open(ctl);
	/* read-only until something is to be terminated: a preview creates nothing */
	if (!ctl_state(ctl, false, &rc) && !ctl->st_missing)
		goto out;
	f.alive = true;
	if (ctl->st && (rc = gb_state_instance_list(ctl->st, &f, victim_cb, &vs, &err))) {
		ctl_fail(rc, "%s", err.text);
		goto out;
	}
	if (vs.oom || (o.nodes && missing_nodes(&wanted, &vs, &missing))) {
		rc = ctl_fail(GB_E_NOMEM, "out of memory");
		goto out;
	}
	if (vs.n == 0) {
		rc = ctl_fail(GB_E_NOTFOUND, "nothing to terminate: no live instance for %s",
			      o.all ? "any node" : o.nodes);
		goto out;
	}
	qsort(vs.v, vs.n, sizeof(*vs.v), cmp_victim);
	load_jobs(&vs);
	bucket = (long)(ctl->now / TOKEN_BUCKET);
	token_of(conf, &vs, bucket, token);
	if (!o.yes && !o.confirm) {
		print_preview(ctl, &o, &vs, &missing, token);
		/* nothing done: scripts must not take it for success */
		ctl_error_note(GB_E_PENDING, "nothing terminated yet: confirm with --confirm %s within 5 minutes",
			       token);
		rc = GB_E_PENDING;
		goto out;
	}
	token_of(conf, &vs, bucket - 1, prev);
	if (o.confirm && strcmp(o.confirm, token) != 0 && strcmp(o.confirm, prev) != 0) {
		rc = ctl_fail(GB_E_INVALID, "confirmation token \"%s\" does not match: the instances or their jobs changed, or it is older than 5 minutes; run without --confirm to see them again",
			      o.confirm);
		goto out;
	}
	if (!o.force && (!vs.jobs || (o.yes && vs.jobs->n))) {
		if (!ctl->json)
			print_jobs(&vs);
		rc = vs.jobs ? ctl_fail(GB_E_BUSY, "%zu job%s run on these nodes: not terminated; add --force to end them (requeued, or failed where they cannot be requeued)",
					vs.jobs->n, vs.jobs->n == 1 ? "" : "s")
			     : ctl_fail(GB_E_BUSY, "cannot tell which jobs run on these nodes (%s): not terminated; add --force to terminate anyway",
					vs.jobs_error ? vs.jobs_error : "Slurm not read");
		goto out;
	}
	if (!ctl_state(ctl, true, &rc))
		goto out;
	rc = execute(ctl, conf, &o, &who, &vs);
out:
	victims_free(&vs);
	gb_strv_free(&wanted);
	gb_strv_free(&missing);
	return rc;
}
