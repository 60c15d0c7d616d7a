/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_main.c - main() of gpuburst-resume, -suspend and -resume-fail
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gb_log.h"
#include "gb_prog.h"
#include "gb_resume_file.h"
#include "gb_slurm.h"
#include "gb_util.h"

#define MAX_NODES 100000u	/* a request's node list holds at most this */
#define STATE_BUSY_MS 10000

struct prog {
	enum gb_prog_kind kind;
	const char *conf_arg;		/* -c FILE */
	const char *hostlist;		/* argv[1] */
	bool worker;
	int threads;
	double t0;			/* monotonic start */
	struct gb_conf *conf;
	/* SLURM_RESUME_FILE, read first thing */
	const char *rf_path;
	struct gb_resume_file *rf;
	gb_err_t rf_rc;
	gb_error_t rf_err;
};

const char *gb_prog_name(enum gb_prog_kind kind)
{
	switch (kind) {
	case GB_PROG_RESUME: return "gpuburst-resume";
	case GB_PROG_SUSPEND: return "gpuburst-suspend";
	case GB_PROG_RESUME_FAIL: return "gpuburst-resume-fail";
	}
	return "gpuburst";
}

static double elapsed_ms(const struct prog *p)
{
	return (gb_time_mono() - p->t0) * 1000.0;
}

/*****************************************************************************
 *  Command line
 *****************************************************************************/

static void usage(FILE *fp, enum gb_prog_kind kind)
{
	static const char *const what[] = {
		"Slurm ResumeProgram: queue the launch of cloud instances for HOSTLIST",
		"Slurm SuspendProgram: queue the termination of HOSTLIST's instances",
		("Slurm ResumeFailProgram: terminate the instances of HOSTLIST, which\n"
		 "did not register in time, and record the failure"),
	};

	fprintf(fp, "Usage: %s [-c FILE] HOSTLIST\n"
		    "       %s --worker [-c FILE] [--threads=N]\n\n%s.\n"
		    "Run by slurmctld as SlurmUser; it logs to the configured log file\n"
		    "and/or syslog, never to stdout.  A detached worker does the work.\n\n",
		gb_prog_name(kind), gb_prog_name(kind), what[kind]);
	fprintf(fp, "  -c, --config=FILE  configuration (default $%s, then gpuburst.yaml\n"
		    "                     next to $SLURM_CONF, then %s)\n"
		    "      --worker       become the worker (gpuburst-worker) in the foreground\n"
		    "      --threads=N    with --worker: requests worked on at once\n"
		    "  -h, --help         this help\n"
		    "  -V, --version      print the version\n\n"
		    "Exit status: 0, or a gpuburst error code (gpuburst-resume(8)).\n",
		GB_CONF_ENV_PATH, GB_CONF_DEFAULT_PATH);
}

enum { OPT_WORKER = 256, OPT_THREADS };

static gb_err_t parse_args(struct prog *p, int argc, char **argv, bool *done)
{
	static const struct option longs[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "worker", no_argument, NULL, OPT_WORKER },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ NULL, 0, NULL, 0 }
	};
	const char *me = gb_prog_name(p->kind);
	long v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:hV", longs, NULL)) != -1) {
		switch (c) {
		case 'c':
			p->conf_arg = optarg;
			break;
		case 'h':
			usage(stdout, p->kind);
			*done = true;
			return GB_E_OK;
		case 'V':
			printf("%s %s\n", me, PACKAGE_VERSION);
			*done = true;
			return GB_E_OK;
		case OPT_WORKER:
			p->worker = true;
			break;
		case OPT_THREADS:
			if (gb_parse_long(optarg, 1, 64, &v)) {
				fprintf(stderr, "%s: --threads: expected 1..64, got \"%s\"\n",
					me, optarg);
				return GB_E_USAGE;
			}
			p->threads = (int)v;
			break;
		case ':':
			fprintf(stderr, "%s: missing argument for option \"%s\"\n", me,
				argv[optind - 1]);
			return GB_E_USAGE;
		default:
			fprintf(stderr, "%s: invalid option \"%s\"\n", me, argv[optind - 1]);
			return GB_E_USAGE;
		}
	}
	if (optind < argc)
		p->hostlist = argv[optind++];
	if (optind < argc && p->kind != GB_PROG_RESUME) {
		fprintf(stderr, "%s: unexpected argument \"%s\"\n", me, argv[optind]);
		return GB_E_USAGE;
	}
	/* A 2nd argument to ResumeProgram is the features of a node_features
	 * reboot (power_save.c): not ours to act on, so it is ignored. */
	if (p->worker && p->hostlist) {
		fprintf(stderr, "%s: --worker takes no HOSTLIST\n", me);
		return GB_E_USAGE;
	}
	return GB_E_OK;
}

/*****************************************************************************
 *  Configuration and logging
 *****************************************************************************/

static const char *ident(const struct prog *p)
{
	return p->worker ? "gpuburst-worker" : gb_prog_name(p->kind);
}

/*
 * Put [expr]'s nodes DOWN with [reason]; used when we cannot go on.  With
 * a state handle [st] the update is recorded as a "slurm_update" event.
 */
static void nodes_down(gb_state_t *st, const char *expr, const char *reason)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	struct gb_strv nodes = { 0 };
	char detail[GB_REASON_MAX + 256], qr[GB_REASON_MAX + 8];
	gb_error_t e;
	size_t failed = 0;
	gb_err_t rc;

	rc = !expr ? gb_errorf(&e, GB_E_INVALID, "no nodes") :
	     gb_slurm_hostlist_expand(expr, MAX_NODES, &nodes, &e);
	if (rc == GB_E_OK && (rc = gb_slurm_init(&e)) == GB_E_OK)
		rc = gb_slurm_nodes_update(GB_SLURM_DOWN, nodes.v, nodes.n, reason, &failed, &e);
	if (rc)
		gb_log_error("nodes_down_failed nodes=%s reason=%s error=%s",
			     expr ? expr : "(none)", gb_log_q(qr, sizeof(qr), reason),
			     gb_log_q(lq, sizeof(lq), e.text));
	else
		gb_log_warn("nodes_down nodes=%s reason=%s", expr, gb_log_q(qr, sizeof(qr), reason));
	if (st) {
		snprintf(detail, sizeof(detail), "action=down nodes=%s count=%zu failed=%zu "
			 "reason=%s%s", expr, nodes.n, rc ? nodes.n : failed,
			 gb_log_q(qr, sizeof(qr), reason), rc ? " error=yes" : "");
		gb_state_event_add(st, NULL, "slurm_update", detail, NULL);
	}
	gb_strv_free(&nodes);
}

/*
 * DOWN requeues the jobs now instead of after ResumeTimeout; the reason
 * ([prefix] and [text]) names the error itself, as syslog may go nowhere.
 */
static void nodes_down_error(const char *expr, const char *prefix, const char *text)
{
	char reason[GB_REASON_MAX];

	snprintf(reason, sizeof(reason), "%s%s", prefix, text);
	for (char *c = reason; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = ' ';
	nodes_down(NULL, expr, reason);
}

static const char *resume_expr(const struct prog *p)
{
	if (p->hostlist)
		return p->hostlist;
	return p->rf ? p->rf->all_nodes : NULL;
}

/*
 * -c FILE, else $GPUBURST_CONF, else gpuburst.yaml next to slurm.conf
 * ($SLURM_CONF, which slurmctld sets), else the default path: the file
 * the job_submit plugin reads too.
 */
static const char *conf_path(const struct prog *p, char *buf, size_t n)
{
	const char *path = NULL;

	if (!p->conf_arg || !*p->conf_arg)
		path = gb_conf_path_slurm(getenv("SLURM_CONF"), buf, n);
	return path ? path : gb_conf_path(p->conf_arg);
}

static gb_err_t load_config(struct prog *p)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	char buf[4096];
	const char *path = conf_path(p, buf, sizeof(buf));
	struct gb_errlist errs = { 0 };
	struct gb_log_opts lo = { NULL, true, GB_LOG_INFO, false };
	gb_error_t err;
	gb_err_t rc;

	rc = gb_conf_load(path, &p->conf, &errs, &err);
	if (rc == GB_E_OK) {
		struct gb_log_opts co = { p->conf->log.file, p->conf->log.syslog,
					  p->conf->log.level, false };

		if (gb_log_open(ident(p), &co, &err)) {
			co.syslog = true;	/* the file failed: keep a trace */
			gb_log_open(ident(p), &co, NULL);
			gb_log_error("log_file_unusable error=%s",
				     gb_log_q(lq, sizeof(lq), err.text));
		}
		return GB_E_OK;
	}
	/* No configuration, no log file: syslog is all there is. */
	gb_log_open(ident(p), &lo, NULL);
	gb_log_error("config_error path=%s error=%s", path, gb_log_q(lq, sizeof(lq), err.text));
	for (size_t i = 0; i < errs.n; i++)
		gb_log_error("config_error %s", errs.msgs[i]);
	gb_errlist_free(&errs);
	if (p->kind == GB_PROG_RESUME && !p->worker)
		nodes_down_error(resume_expr(p), GB_REASON_CONFIG, err.text);
	return rc;
}

/*****************************************************************************
 *  The fast paths
 *****************************************************************************/

static void read_resume_file(struct prog *p)
{
	p->rf_path = getenv(GB_RESUME_FILE_ENV);
	if (!p->rf_path || !*p->rf_path) {
		p->rf_rc = GB_E_NOTFOUND;
		gb_errorf(&p->rf_err, GB_E_NOTFOUND, "%s is not set", GB_RESUME_FILE_ENV);
		return;
	}
	p->rf_rc = gb_resume_file_read(p->rf_path, &p->rf, &p->rf_err);
}

/*
 * A resume file that is missing or malformed leaves the host list, as
 * jobless nodes.  One that is there but cannot be read (not a regular
 * file, too large, no permission) is not guessed around: the nodes go
 * DOWN naming the problem, nothing is queued.  RET GB_E_OK or the error.
 */
static gb_err_t check_resume_file(const struct prog *p)
{
	char lq[GB_ERROR_TEXT_MAX + 8];

	if (p->rf || p->rf_rc == GB_E_NOTFOUND || p->rf_rc == GB_E_PARSE)
		return GB_E_OK;
	gb_log_error("resume_file_unreadable path=%s nodes=%s error=%s action=down",
		     p->rf_path, p->hostlist, gb_log_q(lq, sizeof(lq), p->rf_err.text));
	nodes_down_error(p->hostlist, GB_REASON_RESUME_FILE, p->rf_err.text);
	return p->rf_rc;
}

static gb_err_t open_state(const struct prog *p, gb_state_t **st, gb_error_t *err)
{
	char path[4096];

	gb_prog_state_path(p->conf, path, sizeof(path));
	/* The worker, started next, checkpoints: we only append. */
	return gb_state_open(path, GB_STATE_NO_CHECKPOINT, STATE_BUSY_MS, st, err);
}

static void start_worker(const struct prog *p)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	gb_error_t e;

	if (gb_prog_start_worker(gb_prog_worker_path(), p->conf->path, &e))
		gb_log_error("worker_start_failed worker=%s error=%s",
			     gb_prog_worker_path(), gb_log_q(lq, sizeof(lq), e.text));
}

static void log_split(const struct prog *p, const struct gb_resume_split *sp)
{
	if (sp->ignored.n)
		gb_log_info("resume_file_extra_nodes count=%zu first=%s note=\"listed for a job "
			    "but not being resumed\"", sp->ignored.n, sp->ignored.v[0]);
	if (p->rf)
		gb_log_debug("resume_file path=%s format=%s jobs=%zu", p->rf_path,
			     gb_resume_format_name(p->rf->format), p->rf->n_jobs);
}

/* Nodes + resume file -> groups by (job, nodeset). */
static gb_err_t resume_groups(struct prog *p, const char *expr,
			      struct gb_strv *nodes, struct gb_prog_groups *g,
			      const char **source, gb_error_t *err)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	struct gb_resume_split sp;
	gb_err_t rc;

	if ((rc = gb_slurm_hostlist_expand(expr, MAX_NODES, nodes, err)))
		return rc;
	*source = "resume_file";
	if (!p->rf) {
		*source = "argv";
		gb_log_warn("resume_file_unusable error=%s fallback=argv",
			    gb_log_q(lq, sizeof(lq), p->rf_err.text));
	}
	rc = gb_resume_split(p->rf, nodes, &sp, err);
	if (rc == GB_E_INVALID) {
		gb_log_warn("resume_file_unusable error=%s fallback=argv",
			    gb_log_q(lq, sizeof(lq), err->text));
		*source = "argv";
		rc = gb_resume_split(NULL, nodes, &sp, err);
	}
	if (rc)
		return rc;
	log_split(p, &sp);
	rc = gb_prog_group_nodes(p->conf, &sp, g, err);
	gb_resume_split_free(&sp);
	return rc;
}

/*
 * Nodes in no nodeset.  A CLOUD node is one gpuburst could own (its
 * nodeset is missing from the configuration): DOWN with the reason, so its
 * job requeues now instead of at ResumeTimeout.  Any other node (the
 * site's own, handed over by a power-saving setting that reaches it) is
 * never touched, nor one whose kind Slurm cannot tell now: the error names
 * the slurm.conf fix (gpuburstctl doctor reports it too).
 */
static void unknown_nodes(struct prog *p, gb_state_t *st, const struct gb_strv *unknown)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	struct gb_strv cloud = { 0 }, other = { 0 };
	struct gb_slurm_node_list *sl = NULL;
	char reason[GB_REASON_MAX], *list = NULL;
	gb_error_t err;

	if (gb_slurm_init(&err) || gb_slurm_nodes_load(&sl, &err)) {
		gb_log_error("resume_unknown_nodes count=%zu action=none error=%s "
			     "note=\"cannot tell whether they are CLOUD nodes: left alone\"",
			     unknown->n, gb_log_q(lq, sizeof(lq), err.text));
		return;
	}
	for (size_t i = 0; i < unknown->n; i++) {
		const struct gb_slurm_node *sn = gb_slurm_node_find(sl, unknown->v[i]);

		gb_strv_add(sn && sn->cloud ? &cloud : &other, unknown->v[i]);
	}
	if (other.n && gb_slurm_hostlist_compress(other.v, other.n, &list, &err) == GB_E_OK)
		gb_log_error("resume_not_ours nodes=%s count=%zu action=none "
			     "error=\"not CLOUD nodes of a gpuburst nodeset: Slurm's power saving "
			     "reaches them\" fix=\"set SuspendTime on the gpuburst partitions only, "
			     "or list these nodes in SuspendExcNodes (gpuburstctl slurm-conf --merge, "
			     "gpuburstctl doctor)\"", list, other.n);
	free(list);
	list = NULL;
	if (cloud.n && gb_slurm_hostlist_compress(cloud.v, cloud.n, &list, &err) == GB_E_OK) {
		snprintf(reason, sizeof(reason), GB_REASON_NO_NODESET "%s",
			 p->conf->path);
		gb_log_error("resume_unknown_nodes nodes=%s count=%zu action=down", list, cloud.n);
		nodes_down(st, list, reason);
	}
	free(list);
	gb_strv_free(&cloud);
	gb_strv_free(&other);
	gb_slurm_node_list_free(sl);
}

static gb_err_t run_resume(struct prog *p)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	struct gb_strv nodes = { 0 }, ids = { 0 };
	struct gb_prog_groups g = { 0 };
	const char *expr = resume_expr(p), *source = "argv";
	gb_state_t *st = NULL;
	gb_error_t err;
	gb_err_t rc;

	if (!expr) {
		gb_log_error("resume_no_nodes error=\"no HOSTLIST argument and %s\"",
			     p->rf_err.text);
		return GB_E_USAGE;
	}
	if ((rc = resume_groups(p, expr, &nodes, &g, &source, &err))) {
		gb_log_error("resume_bad_hostlist nodes=%s error=%s", expr,
			     gb_log_q(lq, sizeof(lq), err.text));
		goto out;
	}
	if (g.n > 0) {
		rc = open_state(p, &st, &err);
		if (rc == GB_E_OK)
			rc = gb_prog_enqueue_resume(st, p->conf, &g, source, &ids, &err);
		if (rc) {
			gb_log_error("resume_enqueue_failed nodes=%s error=%s", expr,
				     gb_log_q(lq, sizeof(lq), err.text));
			nodes_down(NULL, expr,
				   GB_REASON_STATE ", see the log");
			goto out;
		}
		start_worker(p);
	}
	if (g.unknown.n) {
		if (!st && open_state(p, &st, &err))
			st = NULL;	/* the DOWN matters more than its record */
		unknown_nodes(p, st, &g.unknown);
	}
	gb_log_info("resume_queued nodes=%s count=%zu requests=%zu first_req=%s unknown=%zu "
		    "source=%s elapsed_ms=%.2f", expr, nodes.n, g.n,
		    ids.n ? ids.v[0] : "-", g.unknown.n, source, elapsed_ms(p));
out:
	gb_state_close(st);
	gb_prog_groups_free(&g);
	gb_strv_free(&nodes);
	gb_strv_free(&ids);
	return rc;
}

static gb_err_t run_term(struct prog *p)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	enum gb_request_kind kind = p->kind == GB_PROG_SUSPEND ? GB_REQ_SUSPEND :
				    GB_REQ_RESUME_FAIL;
	struct gb_strv nodes = { 0 };
	char id[GB_REQUEST_ID_LEN + 1] = "";
	gb_state_t *st = NULL;
	gb_error_t err;
	gb_err_t rc;

	if (!p->hostlist) {
		gb_log_error("%s_no_nodes error=\"no HOSTLIST argument\"",
			     gb_request_kind_name(kind));
		return GB_E_USAGE;
	}
	if ((rc = gb_slurm_hostlist_expand(p->hostlist, MAX_NODES, &nodes, &err))) {
		gb_log_error("bad_hostlist nodes=%s error=%s", p->hostlist,
			     gb_log_q(lq, sizeof(lq), err.text));
		goto out;
	}
	rc = open_state(p, &st, &err);
	if (rc == GB_E_OK)
		rc = gb_prog_enqueue_term(st, kind, &nodes, id, &err);
	gb_state_close(st);
	if (rc) {
		gb_log_error("%s_enqueue_failed nodes=%s error=%s",
			     gb_request_kind_name(kind), p->hostlist,
			     gb_log_q(lq, sizeof(lq), err.text));
		goto out;
	}
	start_worker(p);
	gb_log_info("%s_queued nodes=%s count=%zu req=%s elapsed_ms=%.2f",
		    gb_request_kind_name(kind), p->hostlist, nodes.n, id, elapsed_ms(p));
out:
	gb_strv_free(&nodes);
	return rc;
}

/* --worker: become gpuburst-worker, in the foreground. */
static gb_err_t run_worker(struct prog *p)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	const char *exe = gb_prog_worker_path();
	char threads[16];
	char *argv[] = { (char *)exe, (char *)"-c", p->conf->path, NULL, NULL, NULL };

	if (p->threads) {
		snprintf(threads, sizeof(threads), "%d", p->threads);
		argv[3] = (char *)"--threads";
		argv[4] = threads;
	}
	execv(exe, argv);	/* the log's fds are close-on-exec */
	gb_log_error("worker_exec_failed worker=%s error=%s", exe,
		     gb_log_q(lq, sizeof(lq), strerror(errno)));
	return GB_E_IO;
}

int gb_prog_main(enum gb_prog_kind kind, int argc, char **argv)
{
	struct prog p = { .kind = kind };
	bool done = false;
	gb_err_t rc;

	p.t0 = gb_time_mono();
	/* slurmctld: fds 0-2 closed, TERM/CHLD/... blocked (slurm-lab §5) */
	gb_stdio_sanitize();
	gb_signals_reset();
	rc = parse_args(&p, argc, argv, &done);
	if (rc || done)
		return rc;
	if (kind == GB_PROG_RESUME && !p.worker)
		read_resume_file(&p);	/* first: it is gone when we exit */
	if (!p.worker && !p.hostlist && !(p.rf && kind == GB_PROG_RESUME)) {
		usage(stderr, kind);
		rc = GB_E_USAGE;
		goto out;
	}
	if ((rc = load_config(&p)))
		goto out;
	if (kind == GB_PROG_RESUME && !p.worker && (rc = check_resume_file(&p)))
		goto out;
	if (p.worker)
		rc = run_worker(&p);
	else if (kind == GB_PROG_RESUME)
		rc = run_resume(&p);
	else
		rc = run_term(&p);
out:
	gb_resume_file_free(p.rf);
	gb_conf_destroy(p.conf);
	gb_log_close();
	return rc;
}
