/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_reconcile.c - gpuburstctl reconcile [--dry-run] [--cheap], and worker
 *
 * The logic is libworker's (gb_reconcile.h), shared with the worker's cheap
 * pass; this file opens what it needs, prints the report, and starts a
 * worker when requests are due and nobody runs them.
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"
#include "gb_log.h"
#include "gb_orch.h"
#include "gb_prog.h"
#include "gb_reconcile.h"
#include "gb_slurm.h"
#include "gb_spawn.h"
#include "gb_util.h"
#include "gb_worker.h"

/* Logging of the actions goes where the programs log (never stdout). */
static void open_log(const struct gb_conf *conf)
{
	struct gb_log_opts lo = { conf->log.file, conf->log.syslog, conf->log.level, true };
	gb_error_t e;

	if (gb_log_open("gpuburstctl", &lo, &e))
		fprintf(stderr, "gpuburstctl: warning: %s\n", e.text);
}

static void print_text(const struct gb_reconcile_report *rep, bool dry_run)
{
	if (rep->cloud_error)
		printf("cloud: not listed: %s\n", rep->cloud_error);
	if (rep->slurm_error)
		printf("slurm: nodes not read (node checks skipped): %s\n", rep->slurm_error);
	if (rep->running)
		printf("records: %zu pending instance%s now running%s\n", rep->running,
		       rep->running == 1 ? "" : "s", dry_run ? " (dry run: not marked)" : "");
	if (rep->n == 0) {
		printf("nothing to reconcile\n");
		return;
	}
	printf("%-9s %-40s %-12s %-9s %s\n", "ACTION", "TARGET", "NODE", "STATUS", "DETAIL");
	for (size_t i = 0; i < rep->n; i++) {
		const struct gb_reconcile_action *a = &rep->v[i];
		const char *status = a->error ? "failed" : a->done ? "done" :
				     dry_run ? "would" : "skipped";

		printf("%-9s %-40s %-12s %-9s %s%s%s\n", gb_reconcile_kind_name(a->kind),
		       a->target, a->node ? a->node : "-", status, a->detail,
		       a->error ? ": " : "", a->error ? a->error : "");
	}
	printf("%zu action%s (stuck %zu, lost %zu, orphan %zu, cooldown %zu, expire %zu, "
	       "release %zu, prune %zu, group %zu, block %zu, notice %zu, held %zu, spot %zu)%s\n", rep->n,
	       rep->n == 1 ? "" : "s", rep->counts[GB_RECONCILE_STUCK],
	       rep->counts[GB_RECONCILE_LOST], rep->counts[GB_RECONCILE_ORPHAN],
	       rep->counts[GB_RECONCILE_COOLDOWN], rep->counts[GB_RECONCILE_EXPIRE],
	       rep->counts[GB_RECONCILE_RELEASE], rep->counts[GB_RECONCILE_PRUNE],
	       rep->counts[GB_RECONCILE_GROUP], rep->counts[GB_RECONCILE_BLOCK],
	       rep->counts[GB_RECONCILE_NOTICE], rep->counts[GB_RECONCILE_HELD],
	       rep->counts[GB_RECONCILE_SPOT], dry_run ? ", dry run: nothing changed" : "");
}

static void print_json(const struct gb_reconcile_report *rep, bool dry_run, bool cheap)
{
	json_t *o = json_object(), *a = json_array();

	for (size_t i = 0; i < rep->n; i++) {
		const struct gb_reconcile_action *x = &rep->v[i];

		json_array_append_new(a, json_pack("{s:s,s:s,s:s?,s:s,s:b,s:s?}", "action",
						   gb_reconcile_kind_name(x->kind), "target",
						   x->target, "node", x->node, "detail", x->detail,
						   "done", x->done, "error", x->error));
	}
	json_object_set_new(o, "dry_run", json_boolean(dry_run));
	json_object_set_new(o, "cheap", json_boolean(cheap));
	json_object_set_new(o, "cloud_checked", json_boolean(rep->cloud_checked));
	json_object_set_new(o, "cloud_error", rep->cloud_error ?
				json_string(rep->cloud_error) : json_null());
	json_object_set_new(o, "slurm_error", rep->slurm_error ?
				json_string(rep->slurm_error) : json_null());
	json_object_set_new(o, "failed", json_integer((json_int_t)rep->failed));
	json_object_set_new(o, "running", json_integer((json_int_t)rep->running));
	json_object_set_new(o, "pruned", ctl_prune_json(&rep->pruned));
	json_object_set_new(o, "actions", a);
	ctl_json_result(o);
}

static int min_due(const struct gb_request *r, void *arg)
{
	double *m = arg;

	*m = fmin(*m, r->not_before);
	return 0;
}

/* Requests due and no worker on them (e.g. after a crash): start one. */
/*
 * metrics.textfile: the metrics after the pass, replaced atomically for
 * node_exporter's textfile collector.  A failure is said and logged; the
 * pass stands.
 */
static void write_metrics(struct ctl *ctl, const struct gb_conf *conf, gb_state_t *st)
{
	char lq[GB_ERROR_TEXT_MAX + 8], pq[4200];
	gb_error_t err = { 0 };

	ctl->now = gb_time_now();
	if (ctl_metrics_write(ctl, conf, st, conf->metrics.textfile, &err) == GB_E_OK)
		return;
	fprintf(stderr, "gpuburstctl: warning: metrics.textfile %s: %s\n", conf->metrics.textfile,
		err.text);
	gb_log_warn("metrics_textfile_failed path=%s error=%s",
		    gb_log_q(pq, sizeof(pq), conf->metrics.textfile),
		    gb_log_q(lq, sizeof(lq), err.text));
}

static void kick_worker(const struct gb_conf *conf, gb_state_t *st)
{
	struct gb_request_filter f = GB_REQUEST_FILTER_ANY;
	double due = INFINITY;
	char exe[4096];
	char *argv[] = { exe, (char *)"-c", conf->path, (char *)"worker", NULL };
	int stale = 0;
	gb_error_t e;

	if (gb_state_request_requeue_stale(st, &stale, &e) == GB_E_OK && stale)
		gb_log_warn("requeued_stale count=%d", stale);
	if (gb_state_request_index_nodes(st, gb_time_now() - GB_PROG_INDEX_BACK, NULL, &e))
		gb_log_error("index_nodes_failed error=%s", GB_LOG_Q(e.text));
	f.state = GB_RSTATE_QUEUED;
	if (gb_state_request_list(st, &f, min_due, &due, &e) || due > gb_time_now())
		return;
	if (gb_prog_self_exe(exe, sizeof(exe), &e) || gb_spawn_detached(argv, &e))
		gb_log_error("worker_start_failed error=%s", GB_LOG_Q(e.text));
	else
		gb_log_info("worker_started by=reconcile");
}

static gb_err_t reconcile(struct ctl *ctl, const struct gb_conf *conf, bool dry_run,
			  bool cheap)
{
	struct gb_reconcile_report rep = { 0 };
	struct gb_orch_opts oo = { 0 };
	struct gb_reconcile_opts ro = { conf, NULL, NULL, dry_run, cheap, 0 };
	char path[4096];
	gb_state_t *st = NULL;
	gb_error_t err;
	gb_err_t rc;

	open_log(conf);
	if (gb_slurm_init(&err))
		fprintf(stderr, "gpuburstctl: warning: %s (Slurm node checks skipped)\n", err.text);
	gb_prog_state_path(conf, path, sizeof(path));
	if ((rc = gb_state_open(path, 0, 10000, &st, &err)))
		return ctl_fail(rc, "%s", err.text);
	ctl_state_notice(st);
	oo.conf = conf;
	oo.state_path = path;
	if (!cheap && (rc = gb_orch_create(&oo, &ro.orch, &err))) {
		ctl_fail(rc, "%s", err.text);
		goto out;
	}
	ro.st = st;
	ro.prune = true;
	if ((rc = gb_reconcile_run(&ro, &rep, &err))) {
		ctl_fail(rc, "%s", err.text);
		goto out;
	}
	if (ctl->json)
		print_json(&rep, dry_run, cheap);
	else
		print_text(&rep, dry_run);
	if (!dry_run)
		kick_worker(conf, st);
	if (!dry_run && conf->metrics.textfile)
		write_metrics(ctl, conf, st);
	/* a part that could not be done is not success: the timer's log says so */
	if (rep.failed || rep.cloud_error || rep.slurm_error)
		rc = ctl_fail(GB_E_PARTIAL, "%zu action%s failed%s%s%s%s", rep.failed,
			      rep.failed == 1 ? "" : "s", rep.cloud_error ? "; cloud: " : "",
			      rep.cloud_error ? rep.cloud_error : "",
			      rep.slurm_error ? "; slurm: " : "",
			      rep.slurm_error ? rep.slurm_error : "");
out:
	gb_reconcile_report_clear(&rep);
	gb_orch_destroy(ro.orch);
	gb_state_close(st);
	return rc;
}

gb_err_t ctl_cmd_reconcile(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longs[] = {
		CTL_COMMON_LONGOPTS,
		{ "dry-run", no_argument, NULL, 'n' },
		{ "cheap", no_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 }
	};
	const struct gb_conf *conf;
	bool dry_run = false, cheap = false, first = true;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, "reconcile", argc, argv, ":jhn", longs, &first,
			       &rc)) != -1) {
		switch (c) {
		case CTL_OPT_DONE:
			return rc;
		case 'n':
			dry_run = true;
			break;
		case 'C':
			cheap = true;
			break;
		default:
			return ctl_unimplemented("reconcile", c);
		}
	}
	if (optind < argc)
		return ctl_usage("reconcile", "unexpected argument \"%s\"", argv[optind]);
	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	return reconcile(ctl, conf, dry_run, cheap);
}

gb_err_t ctl_cmd_worker(struct ctl *ctl, int argc, char **argv)
{
	struct gb_worker_opts wo = { 0 };
	const struct gb_conf *conf;
	gb_error_t err;
	gb_err_t rc = GB_E_OK;

	if (argc > 1)
		return ctl_usage("worker", "unexpected argument \"%s\"", argv[1]);
	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	open_log(conf);
	wo.conf = conf;
	if ((rc = gb_worker_run(&wo, &err)))
		return ctl_fail(rc, "%s", err.text);
	return GB_E_OK;
}
