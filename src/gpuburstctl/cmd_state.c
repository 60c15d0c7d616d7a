/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_state.c - gpuburstctl state vacuum [--older-than AGE|off] [--dry-run]
 *
 * Prune finished requests past the retention (gb_state_prune, all of them,
 * not reconcile's batch), then VACUUM (gb_state_vacuum).  VACUUM holds the
 * file's write lock for the whole rewrite, and a writer that waits longer
 * than its busy timeout fails: this command therefore takes the worker's
 * lock first (no worker runs meanwhile; one that starts exits at once) and
 * refuses to run while a worker holds it.  After it, a worker is started
 * when requests are due.  The programs slurmctld runs still enqueue; they
 * wait up to their 10 s busy timeout, which is why the page says to run it
 * in a quiet hour and the output says how long it took.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"
#include "gb_log.h"
#include "gb_prog.h"
#include "gb_util.h"

/* The cool-downs and resume-fail read the requests of the last hours. */
#define MIN_AGE 86400.0

json_t *ctl_prune_json(const struct gb_state_prune_counts *n)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			 "requests", (json_int_t)n->requests,
			 "request_nodes", (json_int_t)n->request_nodes,
			 "plans", (json_int_t)n->plans,
			 "attempts", (json_int_t)n->attempts,
			 "approvals", (json_int_t)n->approvals,
			 "events", (json_int_t)n->events,
			 "instances", (json_int_t)n->instances,
			 "global_events", (json_int_t)n->global_events);
}

static const char *bytes(int64_t v, char *buf, size_t n)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double x = (double)v;
	size_t u = 0;

	while (x >= 1024 && u + 1 < GB_ARRAY_LEN(unit)) {
		x /= 1024;
		u++;
	}
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", x, unit[u]);
	return buf;
}

struct vac {
	bool dry_run, prune;
	double keep;			/* seconds; the cutoff is now - keep */
	struct gb_state_prune_counts pruned;
	struct gb_state_vacuum_info v;
	int worker;			/* -1 not tried, 0 failed, 1 started */
};

static int64_t size_of(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

static void sizes(const struct gb_conf *conf, struct gb_state_vacuum_info *v)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", conf->state_dir, GB_STATE_FILE);
	v->db_before = size_of(path);
	snprintf(path, sizeof(path), "%s/%s-wal", conf->state_dir, GB_STATE_FILE);
	v->wal_before = size_of(path);
}

/* ", 3 plans" for a count that is not 0. */
static void count(struct gb_buf *b, long n, const char *one, const char *many)
{
	if (n)
		gb_buf_printf(b, "%s%ld %s", b->len ? ", " : "", n, n == 1 ? one : many);
}

static void print_text(const struct ctl *ctl, const struct vac *x)
{
	const struct gb_state_prune_counts *n = &x->pruned;
	struct gb_buf rows = GB_BUF_INIT;
	char cut[32], a[32], b[32], w[32];

	if (!x->prune) {
		printf("prune: off (policy.retention off, or --older-than off)\n");
	} else {
		count(&rows, n->plans, "plan", "plans");
		count(&rows, n->attempts, "attempt", "attempts");
		count(&rows, n->instances, "instance record", "instance records");
		count(&rows, n->approvals, "approval", "approvals");
		count(&rows, n->events, "event", "events");
		count(&rows, n->request_nodes, "node index row", "node index rows");
		printf("%s %ld finished request%s older than %g days (before %s)%s%s; "
		       "%ld global event%s\n", x->dry_run ? "would prune" : "pruned",
		       n->requests, n->requests == 1 ? "" : "s", x->keep / 86400,
		       ctl_time(ctl->now - x->keep, cut, sizeof(cut)), rows.len ? ": " : "",
		       gb_buf_str(&rows), n->global_events, n->global_events == 1 ? "" : "s");
		gb_buf_free(&rows);
	}
	if (x->dry_run) {
		printf("dry run: nothing deleted, not vacuumed (%s is %s, WAL %s)\n",
		       GB_STATE_FILE, bytes(x->v.db_before, a, sizeof(a)),
		       bytes(x->v.wal_before, w, sizeof(w)));
		return;
	}
	printf("vacuum: %s %s -> %s (WAL %s) in %.2f s\n", GB_STATE_FILE,
	       bytes(x->v.db_before, a, sizeof(a)), bytes(x->v.db_after, b, sizeof(b)),
	       bytes(x->v.wal_after, w, sizeof(w)), x->v.seconds);
	if (!x->v.checkpointed)
		printf("note: a reader holds an older snapshot: the file shrinks at the next checkpoint\n");
	if (x->worker == 1)
		printf("worker started (requests are due)\n");
}

static void print_json(const struct ctl *ctl, const struct vac *x)
{
	json_t *doc = json_object();

	json_object_set_new(doc, "dry_run", json_boolean(x->dry_run));
	json_object_set_new(doc, "older_than", x->prune ? json_real(x->keep) : json_null());
	json_object_set_new(doc, "cutoff", x->prune ? ctl_jtime(ctl->now - x->keep) : json_null());
	json_object_set_new(doc, "pruned", ctl_prune_json(&x->pruned));
	json_object_set_new(doc, "bytes_before", json_integer(x->v.db_before));
	json_object_set_new(doc, "wal_bytes_before", json_integer(x->v.wal_before));
	if (x->dry_run) {
		json_object_set_new(doc, "vacuum", json_null());
	} else {
		json_object_set_new(doc, "vacuum", json_pack("{s:I,s:I,s:b,s:f}",
			"bytes_after", (json_int_t)x->v.db_after,
			"wal_bytes_after", (json_int_t)x->v.wal_after,
			"checkpointed", x->v.checkpointed, "seconds", x->v.seconds));
	}
	json_object_set_new(doc, "worker_started", x->worker < 0 ? json_null()
						  : json_boolean(x->worker));
	ctl_json_result(doc);
}

static int min_due(const struct gb_request *r, void *arg)
{
	double *m = arg;

	*m = fmin(*m, r->not_before);
	return 0;
}

/* Requests that came in while the worker was held off: start one. */
static int start_if_due(struct ctl *ctl, const struct gb_conf *conf)
{
	struct gb_request_filter f = GB_REQUEST_FILTER_ANY;
	double due = INFINITY;
	gb_error_t e = { 0 };

	f.state = GB_RSTATE_QUEUED;
	if (gb_state_request_list(ctl->st, &f, min_due, &due, &e) || due > gb_time_now())
		return -1;
	if (gb_prog_start_worker(gb_prog_worker_path(), conf->path, &e)) {
		gb_log_error("worker_start_failed by=gpuburstctl error=%s", GB_LOG_Q(e.text));
		fprintf(stderr, "gpuburstctl: the worker could not be started: %s (the next resume or gpuburstctl reconcile starts one)\n",
			e.text);
		return 0;
	}
	gb_log_info("worker_started by=gpuburstctl");
	return 1;
}

/* The worker's lock, not blocking.  RET fd >= 0, or -1 (printed, *rc). */
static int hold_worker(const struct gb_conf *conf, gb_err_t *rc)
{
	char path[4096];
	int fd;

	gb_prog_lock_path(conf, path, sizeof(path));
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640)) < 0) {
		*rc = ctl_fail(GB_E_IO, "open %s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	*rc = errno == EWOULDBLOCK
	      ? ctl_fail(GB_E_BUSY, "state vacuum: the worker is running (it holds %s): nothing pruned or vacuumed; try again when it has finished",
			 path)
	      : ctl_fail(GB_E_IO, "flock %s: %s", path, strerror(errno));
	close(fd);
	return -1;
}

static gb_err_t vacuum(struct ctl *ctl, const struct gb_conf *conf, struct vac *x)
{
	struct gb_policy_actor who = { 0 };
	gb_error_t err = { 0 };
	char detail[512];
	gb_err_t rc = GB_E_OK;
	int fd = -1;

	/* a dry run reads only: anyone who may read the file */
	if (!x->dry_run && (rc = ctl_authorize(ctl, conf, &who)))
		return rc;
	ctl_log_open(ctl);
	if (!x->dry_run && (fd = hold_worker(conf, &rc)) < 0)
		return rc;
	if (!ctl_state(ctl, !x->dry_run, &rc)) {
		if (rc == GB_E_OK)	/* read-only, and no file yet */
			rc = ctl_fail(GB_E_NOTFOUND, "state vacuum: no state file yet");
		goto out;
	}
	if (x->prune && (rc = gb_state_prune(ctl->st, ctl->now - x->keep, 0, x->dry_run,
					     &x->pruned, &err))) {
		rc = ctl_fail(rc, "%s", err.text);
		goto out;
	}
	if (x->dry_run) {
		sizes(conf, &x->v);	/* what a real run would start from */
		goto done;
	}
	snprintf(detail, sizeof(detail), "by=%s uid=%lld requests=%ld events=%ld global_events=%ld",
		 who.name, (long long)who.uid, x->pruned.requests, x->pruned.events,
		 x->pruned.global_events);
	gb_state_event_add(ctl->st, NULL, "state_vacuum", detail, NULL);
	gb_log_notice("state_vacuum %s", detail);
	if ((rc = gb_state_vacuum(ctl->st, &x->v, &err))) {
		rc = ctl_fail(rc, "%s (the rows were pruned; the file was not compacted)",
			      err.text);
		goto out;
	}
	flock(fd, LOCK_UN);
	x->worker = start_if_due(ctl, conf);
done:
	if (ctl->json)
		print_json(ctl, x);
	else
		print_text(ctl, x);
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

gb_err_t ctl_cmd_state_vacuum(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longs[] = {
		CTL_COMMON_LONGOPTS,
		{ "older-than", required_argument, NULL, 'o' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd = "state vacuum", *older = NULL;
	struct vac x = { .worker = -1 };
	const struct gb_conf *conf;
	bool first = true;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, cmd, argc, argv, ":jhn", longs, &first, &rc)) != -1) {
		switch (c) {
		case CTL_OPT_DONE:
			return rc;
		case 'o':
			older = optarg;
			break;
		case 'n':
			x.dry_run = true;
			break;
		default:
			return ctl_unimplemented(cmd, c);
		}
	}
	if (optind < argc)
		return ctl_usage(cmd, "unexpected argument \"%s\"", argv[optind]);
	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	x.keep = conf->policy.retention;
	if (older && strcmp(older, "off") == 0) {
		x.keep = 0;
	} else if (older) {
		double t;

		if (gb_time_parse(older, ctl->now, &t))
			return ctl_usage(cmd, "invalid --older-than \"%s\": an age (90d, 36h) or a time (2026-01-31), or off",
					 older);
		x.keep = ctl->now - t;
		if (x.keep < MIN_AGE)
			return ctl_usage(cmd, "--older-than \"%s\" is under a day: the cool-downs still read those requests",
					 older);
	}
	x.prune = x.keep > 0;
	return vacuum(ctl, conf, &x);
}
