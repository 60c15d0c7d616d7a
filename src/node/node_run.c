/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * node_run.c - `gpuburst-node run`: identity, health, slurmd, notices
 *
 * One thread, no daemon framework.  slurmd runs as a child in our process
 * group; SIGTERM, SIGINT and SIGCHLD are blocked and taken with
 * sigtimedwait() between two IMDS polls, so a signal is forwarded to
 * slurmd at once and the program exits with slurmd's status when slurmd
 * exits.  A notice is acted on once; IMDS errors in the loop are logged,
 * never fatal (the instance keeps serving its node).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gb_conf.h"
#include "gb_log.h"
#include "gb_spawn.h"
#include "gb_util.h"
#include "node_int.h"

#define REASON_MAX 1024

struct run {
	const struct gb_node_conf *conf;
	gb_imds_t *imds;
	struct node_ident id;
	struct node_act *act;
	struct node_gpu_expect expect;
	char model[64];
	pid_t slurmd;
	bool spot_done, rebalance_done;
	bool imds_failing;	/* log a failing poll once, and its recovery */
};

/* RET ms since [t0] (monotonic seconds). */
static double ms_since(double t0)
{
	return (gb_time_mono() - t0) * 1000;
}

/*****************************************************************************
 *  Health
 *****************************************************************************/

/* What the check expects: health.gpus/model, else the catalog's. */
static void expect_of(struct run *r)
{
	const struct gb_node_conf_health *h = &r->conf->health;
	const struct gb_instance_type *t = gb_catalog_find(r->id.instance_type);

	r->expect.gpus = h->gpus != GB_NODE_CONF_GPUS_AUTO ? h->gpus : t ? t->gpus : 0;
	gb_strlcpy(r->model, h->model ? h->model : t && t->gpu_name ? t->gpu_name : "GPU",
		   sizeof(r->model));
	r->expect.model = r->model;
	if (!t && (h->gpus == GB_NODE_CONF_GPUS_AUTO || !h->model))
		gb_log_warn("health_type_unknown type=%s gpus=%d model=%s note=%s",
			    r->id.instance_type, r->expect.gpus, GB_LOG_Q(r->model),
			    GB_LOG_Q("not in the catalog: set health.gpus and health.model"));
}

/* Report a failed check: log, tag, POWER_DOWN_FORCE with the reason. */
static void report_unhealthy(struct run *r, const char *summary)
{
	char reason[REASON_MAX], arg[REASON_MAX + 16], node[NODE_NAME_MAX + 16];
	char tag[NODE_TAG_MAX * 4 + 1];
	const char *args[] = { "update", node, "State=POWER_DOWN_FORCE", arg, NULL };

	gb_log_error("unhealthy instance=%s node=%s summary=%s", r->id.instance_id,
		     r->id.node, GB_LOG_Q(summary));
	node_tag_unhealthy(tag, sizeof(tag), summary);
	node_act_tag(r->act, tag);
	node_reason_unhealthy(reason, sizeof(reason), r->id.instance_id, summary);
	snprintf(node, sizeof(node), "NodeName=%s", r->id.node);
	snprintf(arg, sizeof(arg), "Reason=%s", reason);
	if (node_act_scontrol(r->act, args, NULL) == GB_E_OK)
		gb_log_notice("node_power_down_force node=%s reason=%s", r->id.node,
			      GB_LOG_Q(reason));
}

/*****************************************************************************
 *  slurmd
 *****************************************************************************/

/*
 * The child: stdin /dev/null, default signals, exec.  It stays in our
 * process group: whatever stops the group (a terminal, a supervisor that
 * signals the group, an instance's shutdown) stops slurmd with us, and a
 * SIGTERM to us alone is forwarded.
 */
static void slurmd_child(struct run *r, char *const *argv, const sigset_t *old)
{
	int fd = open("/dev/null", O_RDONLY);

	if (fd >= 0 && fd != STDIN_FILENO) {
		dup2(fd, STDIN_FILENO);
		close(fd);
	}
	gb_spawn_close_from_3();
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigprocmask(SIG_SETMASK, old, NULL);
	if (r->conf->slurm.conf)
		setenv("SLURM_CONF", r->conf->slurm.conf, 1);
	execv(argv[0], argv);
	_exit(127);
}

static gb_err_t start_slurmd(struct run *r, const sigset_t *old, gb_error_t *err)
{
	const struct gb_node_conf_slurm *s = &r->conf->slurm;
	struct gb_strv argv = { 0 };
	struct gb_buf cmd = GB_BUF_INIT;
	gb_err_t rc = GB_E_OK;

	if (gb_strv_add(&argv, s->slurmd) || gb_strv_add(&argv, "-D") ||
	    gb_strv_add(&argv, "-N") || gb_strv_add(&argv, r->id.node) ||
	    (s->conf_server && (gb_strv_add(&argv, "--conf-server") ||
				gb_strv_add(&argv, s->conf_server)))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < s->n_slurmd_args; i++) {
		if (gb_strv_add(&argv, s->slurmd_args[i])) {
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			goto out;
		}
	}
	for (size_t i = 0; i < argv.n; i++)
		gb_buf_printf(&cmd, "%s%s", i ? " " : "", argv.v[i]);
	r->slurmd = fork();
	if (r->slurmd < 0) {
		rc = gb_errorf(err, GB_E_IO, "fork: %s", strerror(errno));
		goto out;
	}
	if (r->slurmd == 0)
		slurmd_child(r, argv.v, old);
	gb_log_notice("slurmd_started pid=%ld node=%s cmd=%s", (long)r->slurmd, r->id.node,
		      GB_LOG_Q(gb_buf_str(&cmd)));
out:
	gb_buf_free(&cmd);
	gb_strv_free(&argv);
	return rc;
}

/*****************************************************************************
 *  Notices
 *****************************************************************************/

/* Drain, requeue every job, power down, tag: contract section 2. */
static void on_spot(struct run *r, const char *action, const char *t, double t0)
{
	char reason[REASON_MAX], arg[REASON_MAX + 16], node[NODE_NAME_MAX + 16];
	char tag[NODE_TAG_MAX * 4 + 1];
	const char *drain[] = { "update", node, "State=DRAIN", arg, NULL };
	const char *down[] = { "update", node, "State=POWER_DOWN_ASAP", NULL };
	struct gb_strv jobs = { 0 }, requeued = { 0 }, refused = { 0 };
	bool drained, powered;
	gb_error_t e;

	snprintf(node, sizeof(node), "NodeName=%s", r->id.node);
	node_reason_spot(reason, sizeof(reason), r->id.instance_id, t);
	snprintf(arg, sizeof(arg), "Reason=%s", reason);
	drained = node_act_scontrol(r->act, drain, NULL) == GB_E_OK;
	gb_log_notice("spot_drain node=%s result=%s reason=%s ms=%.0f", r->id.node,
		      drained ? "ok" : "failed", GB_LOG_Q(reason), ms_since(t0));
	if (node_act_jobs(r->act, r->id.node, &jobs, &e))
		gb_log_error("spot_jobs_failed node=%s error=%s ms=%.0f", r->id.node,
			     GB_LOG_Q(e.text), ms_since(t0));
	for (size_t i = 0; i < jobs.n; i++) {
		const char *rq[] = { "requeue", jobs.v[i], NULL };

		if (node_act_scontrol(r->act, rq, &e) == GB_E_OK) {
			gb_strv_add(&requeued, jobs.v[i]);
			gb_log_notice("spot_requeue job=%s result=ok ms=%.0f", jobs.v[i],
				      ms_since(t0));
		} else {
			gb_strv_add(&refused, jobs.v[i]);
			gb_log_warn("spot_requeue job=%s result=refused error=%s ms=%.0f note=%s",
				    jobs.v[i], GB_LOG_Q(e.text), ms_since(t0),
				    GB_LOG_Q("left to the site's policy (e.g. --no-requeue)"));
		}
	}
	powered = node_act_scontrol(r->act, down, NULL) == GB_E_OK;
	gb_log_notice("spot_power_down_asap node=%s result=%s jobs=%zu requeued=%zu ms=%.0f",
		      r->id.node, powered ? "ok" : "failed", jobs.n, requeued.n, ms_since(t0));
	node_tag_interrupted(tag, sizeof(tag), action, t, drained, &requeued, &refused,
			     powered);
	node_act_tag(r->act, tag);
	gb_strv_free(&jobs);
	gb_strv_free(&requeued);
	gb_strv_free(&refused);
}

static void on_rebalance(struct run *r, const char *t, double t0)
{
	char reason[REASON_MAX], arg[REASON_MAX + 16], node[NODE_NAME_MAX + 16];
	char tag[NODE_TAG_MAX * 4 + 1];
	const char *down[] = { "update", node, "State=POWER_DOWN_ASAP", arg, NULL };
	bool drain = r->conf->notices.rebalance == GB_NODE_REBALANCE_DRAIN, done = false;

	if (drain) {
		snprintf(node, sizeof(node), "NodeName=%s", r->id.node);
		node_reason_rebalance(reason, sizeof(reason), r->id.instance_id);
		snprintf(arg, sizeof(arg), "Reason=%s", reason);
		done = node_act_scontrol(r->act, down, NULL) == GB_E_OK;
	}
	gb_log_notice("rebalance node=%s notice_time=%s action=%s result=%s ms=%.0f",
		      r->id.node, t, drain ? "power_down_asap" : "ignore",
		      !drain ? "ignored" : done ? "ok" : "failed", ms_since(t0));
	node_tag_rebalance(tag, sizeof(tag), t, drain, done);
	node_act_tag(r->act, tag);
}

/* GET one notice path; RET its body (NEW) or NULL (none, or an error logged). */
static char *poll_one(struct run *r, const char *path)
{
	char *body = NULL;
	gb_error_t e;
	gb_err_t rc = gb_imds_get(r->imds, path, &body, NULL, &e);

	if (rc == GB_E_OK || rc == GB_E_NOTFOUND) {
		if (r->imds_failing)
			gb_log_notice("imds_poll_recovered path=%s", path);
		r->imds_failing = false;
		return body;
	}
	if (!r->imds_failing)
		gb_log_warn("imds_poll_failed path=%s code=%s error=%s", path,
			    gb_err_name(rc), GB_LOG_Q(e.text));
	r->imds_failing = true;
	if (rc == GB_E_AUTH)
		gb_imds_reset_token(r->imds);
	return NULL;
}

static void poll_notices(struct run *r)
{
	char action[NODE_TIME_MAX], t[NODE_TIME_MAX], *body;
	double t0;
	gb_error_t e;

	if (!r->spot_done && (body = poll_one(r, "meta-data/spot/instance-action"))) {
		t0 = gb_time_mono();
		if (node_spot_parse(body, action, t, &e) == GB_E_OK) {
			r->spot_done = true;
			gb_log_notice("spot_notice instance=%s node=%s action=%s time=%s",
				      r->id.instance_id, r->id.node, action, t);
			on_spot(r, action, t, t0);
		} else {
			gb_log_error("spot_notice_malformed error=%s", GB_LOG_Q(e.text));
		}
		free(body);
	}
	if (r->spot_done || r->rebalance_done)
		return;
	if ((body = poll_one(r, "meta-data/events/recommendations/rebalance"))) {
		t0 = gb_time_mono();
		if (node_rebalance_parse(body, t, &e) == GB_E_OK) {
			r->rebalance_done = true;
			gb_log_notice("rebalance_notice instance=%s node=%s time=%s",
				      r->id.instance_id, r->id.node, t);
			on_rebalance(r, t, t0);
		} else {
			gb_log_error("rebalance_notice_malformed error=%s", GB_LOG_Q(e.text));
		}
		free(body);
	}
}

/*****************************************************************************
 *  The loop
 *****************************************************************************/

/* RET slurmd's exit status (128 + signal) once it has exited, else -1. */
static int reap(struct run *r)
{
	int st;
	pid_t p = waitpid(r->slurmd, &st, WNOHANG);

	if (p != r->slurmd)
		return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

static int loop(struct run *r, const sigset_t *set)
{
	double next = gb_time_mono();
	int status;

	for (;;) {
		double wait = next - gb_time_mono();
		struct timespec ts;
		int sig;

		if (wait <= 0) {
			poll_notices(r);
			next = gb_time_mono() + r->conf->notices.interval;
			continue;
		}
		ts.tv_sec = (time_t)wait;
		ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
		sig = sigtimedwait(set, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT) {
			gb_log_notice("signal_forwarded signal=%s slurmd_pid=%ld",
				      sig == SIGTERM ? "TERM" : "INT", (long)r->slurmd);
			kill(r->slurmd, sig);
		}
		if ((status = reap(r)) >= 0) {
			gb_log_notice("slurmd_exited pid=%ld status=%d", (long)r->slurmd, status);
			return status;
		}
	}
}

/*****************************************************************************
 *  The run
 *****************************************************************************/

static gb_err_t identify(struct run *r)
{
	const struct gb_node_conf *c = r->conf;
	struct gb_imds_opts io = { 0 };
	gb_error_t e;
	gb_err_t rc;
	double t0 = gb_time_mono();

	io.endpoint = c->imds.endpoint;
	io.local_address = c->imds.source_address;
	io.timeout_ms = (long)(c->imds.timeout * 1000);
	if ((rc = gb_imds_create(&io, &r->imds, &e)) ||
	    (rc = node_ident_read(r->imds, c, &r->id, &e))) {
		gb_log_error("identity_failed code=%s error=%s", gb_err_name(rc),
			     GB_LOG_Q(e.text));
		return rc;
	}
	gb_log_notice("identity instance=%s type=%s az=%s region=%s launch_index=%ld node=%s from=%s ms=%.0f",
		      r->id.instance_id, r->id.instance_type, r->id.az, r->id.region,
		      r->id.launch_index, r->id.node, r->id.node_from, ms_since(t0));
	if (c->node.set_hostname) {
		if (sethostname(r->id.node, strlen(r->id.node)) != 0) {
			gb_log_error("sethostname_failed node=%s error=%s", r->id.node,
				     GB_LOG_Q(strerror(errno)));
			return GB_E_PERM;
		}
		gb_log_info("hostname_set hostname=%s", r->id.node);
	}
	return GB_E_OK;
}

/* Health before registration.  RET GB_E_OK or GB_E_DENIED (reported). */
static gb_err_t health(struct run *r)
{
	char summary[NODE_SUMMARY_MAX];
	double t0 = gb_time_mono();
	gb_error_t e;

	expect_of(r);
	if (node_munge_check(r->conf->munge.key, &e)) {
		report_unhealthy(r, e.text);
		return GB_E_DENIED;
	}
	if (node_act_health(r->act, &r->expect, summary, sizeof(summary))) {
		report_unhealthy(r, summary);
		return GB_E_DENIED;
	}
	gb_log_notice("healthy node=%s gpus=%d model=%s summary=%s ms=%.0f", r->id.node,
		      r->expect.gpus, GB_LOG_Q(r->expect.model), GB_LOG_Q(summary),
		      ms_since(t0));
	return GB_E_OK;
}

int node_run(const struct gb_node_conf *conf)
{
	struct run r = { .conf = conf, .slurmd = -1 };
	char tag[NODE_TAG_MAX * 4 + 1];
	sigset_t set, old;
	gb_error_t e;
	gb_err_t rc;
	int status;

	if ((rc = identify(&r)))
		goto out;
	if ((rc = node_act_create(conf, &r.id, &r.act, &e))) {
		gb_log_error("start_failed error=%s", GB_LOG_Q(e.text));
		goto out;
	}
	if ((rc = health(&r)))
		goto out;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, &old);
	if ((rc = start_slurmd(&r, &old, &e))) {
		gb_log_error("slurmd_failed error=%s", GB_LOG_Q(e.text));
		goto out;
	}
	node_tag_ok(tag, sizeof(tag), r.id.node, &r.expect);
	node_act_tag(r.act, tag);
	status = loop(&r, &set);
	node_act_destroy(r.act);
	node_ident_clear(&r.id);
	gb_imds_destroy(r.imds);
	return status;
out:
	node_act_destroy(r.act);
	node_ident_clear(&r.id);
	gb_imds_destroy(r.imds);
	return (int)rc;
}
