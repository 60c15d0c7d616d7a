/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_decide.c - gpuburstctl approve ID | deny ID --reason TEXT
 *
 * Who: the real uid (gb_policy_authorize), checked before the state file is
 * opened for writing, so a refusal changes nothing.  What: gb_policy_decide
 * (one transaction, a job as a whole).  Then the side effects the state
 * file cannot hold: Slurm (denied or expired nodes DOWN, so their jobs
 * requeue now) and, after an approval, a worker to run the request.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "gb_log.h"
#include "gb_policy.h"
#include "gb_prog.h"
#include "gb_slurm.h"
#include "gb_slurmconf.h"

struct decision {
	const char *cmd;
	enum gb_policy_decision d;
	const char *id;
	const char *comment;
	bool cancel;		/* deny --cancel: a held job is cancelled */
};

/* What became of the jobs held at submit that were decided. */
struct held_out {
	struct gb_strv lines;	/* one per job, for the report */
	size_t failed;
	char error[GB_ERROR_TEXT_MAX];
};

/* Slurm's outcome for the report. */
struct slurm_out {
	size_t asked, failed;
	char error[GB_ERROR_TEXT_MAX];
};

gb_err_t ctl_authorize(struct ctl *ctl, const struct gb_conf *conf,
		       struct gb_policy_actor *who)
{
	struct gb_slurmconf sc = { 0 };
	const char *path = gb_slurmconf_path(!ctl->setid);
	gb_error_t err = { 0 };
	gb_err_t rc;

	/* Without slurm.conf only the SlurmUser rule is lost: say so. */
	if (gb_slurmconf_read(path, &sc, &err))
		fprintf(stderr, "gpuburstctl: warning: %s: SlurmUser unknown\n", err.text);
	rc = gb_policy_authorize(conf, getuid(), sc.slurm_user, who, &err);
	gb_slurmconf_clear(&sc);
	if (rc)
		return ctl_fail(rc, "%s", err.text);
	return GB_E_OK;
}

/* [action] (with [reason], may be NULL); recorded as a slurm_update event of [id]. */
static void slurm_nodes(struct ctl *ctl, const char *id, const char *expr,
			enum gb_slurm_node_action action, const char *reason,
			struct slurm_out *so)
{
	struct gb_strv names = { 0 };
	char detail[GB_POLICY_REASON_MAX + 256], q[GB_POLICY_REASON_MAX + 8];
	const char *act = gb_slurm_action_name(action);
	gb_error_t err = { 0 };
	size_t failed = 0;
	gb_err_t rc;

	rc = gb_slurm_hostlist_expand(expr, 100000, &names, &err);
	if (rc == GB_E_OK)
		rc = gb_slurm_init(&err);
	if (rc == GB_E_OK)
		rc = gb_slurm_nodes_update(action, names.v, names.n, reason,
					   &failed, &err);
	so->asked += names.n;
	if (rc) {
		so->failed += failed ? failed : names.n;
		if (!so->error[0])
			snprintf(so->error, sizeof(so->error), "%s", err.text);
		gb_log_error("slurm_update req=%s action=%s nodes=%s error=%s", id,
			     act, expr, gb_log_q(q, sizeof(q), err.text));
	} else {
		gb_log_notice("slurm_update req=%s action=%s nodes=%s reason=%s", id,
			      act, expr, gb_log_q(q, sizeof(q), reason ? reason : ""));
	}
	snprintf(detail, sizeof(detail), "action=%s nodes=%s count=%zu failed=%zu reason=%s",
		 act, expr, names.n, rc ? (failed ? failed : names.n) : 0,
		 gb_log_q(q, sizeof(q), reason ? reason : ""));
	if (ctl->st)
		gb_state_event_add(ctl->st, id, "slurm_update", detail, NULL);
	gb_strv_free(&names);
}

static void slurm_down(struct ctl *ctl, const char *id, const char *expr,
		       const char *reason, struct slurm_out *so)
{
	slurm_nodes(ctl, id, expr, GB_SLURM_DOWN, reason, so);
}

static void slurm_power_down(struct ctl *ctl, const char *id, const char *expr,
			     struct slurm_out *so)
{
	slurm_nodes(ctl, id, expr, GB_SLURM_POWER_DOWN_FORCE, NULL, so);
}

/*
 * Release, hold or cancel held job [job] of request [id]; a job that is
 * gone (or runs already) is said, not an error: nothing is launched for it.
 */
static void held_act(struct ctl *ctl, const char *id, const char *job,
		     enum gb_slurm_job_action a, const char *value,
		     struct held_out *ho)
{
	static const char *const done[] = { "released", "held", "cancelled",
					    "requeued and held" };
	char line[GB_ERROR_TEXT_MAX + 128], detail[GB_ERROR_TEXT_MAX + 64];
	char q[GB_ERROR_TEXT_MAX + 8];
	gb_error_t err = { 0 };
	long jid = 0;
	gb_err_t rc;

	rc = gb_parse_long(job, 1, INT32_MAX, &jid);
	if (rc == GB_E_OK)
		rc = gb_slurm_init(&err);
	if (rc == GB_E_OK)
		rc = gb_slurm_held_act((uint32_t)jid, a, value, &err);
	if (rc == GB_E_OK) {
		snprintf(line, sizeof(line), "job %s %s", job, done[a]);
		gb_log_notice("held_job req=%s job=%s action=%s", id, job, done[a]);
	} else if (rc == GB_E_PERM) {
		snprintf(line, sizeof(line), "job %s may not be requeued (%s): it fails with its nodes",
			 job, err.text);
		gb_log_notice("held_job req=%s job=%s action=%s refused=%s", id, job,
			      done[a], gb_log_q(q, sizeof(q), err.text));
	} else if (rc == GB_E_NOTFOUND && a == GB_SLURM_JOB_REQUEUE_HOLD) {
		snprintf(line, sizeof(line), "job %s no longer waits for its nodes (%s)", job, err.text);
		gb_log_notice("held_job req=%s job=%s action=%s gone=%s", id, job,
			      done[a], gb_log_q(q, sizeof(q), err.text));
	} else if (rc == GB_E_NOTFOUND) {
		snprintf(line, sizeof(line), "job %s is gone or no longer held (%s): nothing %s, nothing launched",
			 job, err.text, done[a]);
		gb_log_notice("held_job req=%s job=%s action=%s gone=%s", id, job,
			      done[a], gb_log_q(q, sizeof(q), err.text));
	} else {
		snprintf(line, sizeof(line), "job %s could not be %s: %s", job, done[a], err.text);
		gb_log_error("held_job req=%s job=%s action=%s error=%s", id, job,
			     done[a], gb_log_q(q, sizeof(q), err.text));
		ho->failed++;
		if (!ho->error[0])
			snprintf(ho->error, sizeof(ho->error), "%s", err.text);
	}
	snprintf(detail, sizeof(detail), "action=%s job=%s result=%s", done[a], job,
		 rc == GB_E_OK ? "ok" : rc == GB_E_NOTFOUND ? "gone" :
		 rc == GB_E_PERM ? "refused" : "failed");
	if (ctl->st)
		gb_state_event_add(ctl->st, id, "slurm_job", detail, NULL);
	gb_strv_add(&ho->lines, line);
}

struct job_of {
	int64_t job_id;
	bool held;
};

static void job_of_cb(const struct gb_request *r, void *arg)
{
	struct job_of *j = arg;

	j->job_id = r->job_id;
	j->held = gb_policy_request_held(r);
}

/*
 * Approving request [id]: does its job still wait for the nodes?  OUT
 * [why] when it does not (gone, or no longer holding nodes): the approval
 * is then recorded and nothing launched (GB_POLICY_APPROVE_GONE).  A Slurm
 * that does not answer is taken as "still waits".
 */
static bool job_gone(struct ctl *ctl, const char *id, char *why, size_t n)
{
	struct gb_slurm_held_job j;
	struct job_of jo = { 0 };
	gb_error_t err = { 0 };
	gb_err_t rc;

	if (gb_state_request_get(ctl->st, id, job_of_cb, &jo, NULL) ||
	    jo.job_id <= 0 || jo.job_id > UINT32_MAX || jo.held ||
	    gb_slurm_init(&err))
		return false;
	rc = gb_slurm_job_brief((uint32_t)jo.job_id, &j, &err);
	if (rc == GB_E_NOTFOUND) {
		snprintf(why, n, "job %lld is gone (%s)", (long long)jo.job_id, err.text);
		return true;
	}
	if (rc)
		return false;
	if (!j.allocated)
		snprintf(why, n, "job %lld no longer waits for these nodes", (long long)jo.job_id);
	gb_slurm_held_job_clear(&j);
	return why[0] != '\0';
}

/* The worker runs what was approved (gb_worker.h: one at a time). */
static bool start_worker(const struct gb_conf *conf, char *error, size_t n)
{
	gb_error_t err = { 0 };

	if (gb_prog_start_worker(gb_prog_worker_path(), conf->path, &err)) {
		snprintf(error, n, "%s", err.text);
		gb_log_error("worker_start_failed by=gpuburstctl error=%s", GB_LOG_Q(err.text));
		return false;
	}
	gb_log_info("worker_started by=gpuburstctl");
	return true;
}

static json_t *pairs_json(const struct gb_strv *ids, const struct gb_strv *exprs)
{
	json_t *a = json_array();

	for (size_t i = 0; i < ids->n; i++)
		json_array_append_new(a, json_pack("{s:s,s:s}", "id", ids->v[i],
						   "nodes", exprs->v[i]));
	return a;
}

static void report(struct ctl *ctl, const struct decision *dc,
		   const struct gb_policy_actor *who,
		   const struct gb_policy_outcome *out, const struct slurm_out *so,
		   const struct held_out *ho, bool gone,
		   int worker, const char *worker_error, const char *reason)
{
	bool approve = dc->d == GB_POLICY_APPROVE;

	if (ctl->json) {
		json_t *doc = json_object();

		json_object_set_new(doc, "decision", json_string(approve ? "approve" : "deny"));
		json_object_set_new(doc, "by", json_string(who->name));
		json_object_set_new(doc, "uid", json_integer(who->uid));
		json_object_set_new(doc, "as", json_string(who->as));
		json_object_set_new(doc, "comment", ctl_jstr(dc->comment));
		json_object_set_new(doc, "requests", pairs_json(&out->ids, &out->exprs));
		json_object_set_new(doc, "expired",
				    pairs_json(&out->expired_ids, &out->expired_exprs));
		json_object_set_new(doc, "slurm_reason", ctl_jstr(reason));
		json_object_set_new(doc, "slurm", json_pack("{s:i,s:i,s:s?}",
			"nodes", (int)so->asked, "failed", (int)so->failed,
			"error", so->error[0] ? so->error : NULL));
		json_object_set_new(doc, "worker_started", worker < 0 ? json_null()
							: json_boolean(worker));
		json_t *held = json_array();

		for (size_t i = 0; i < ho->lines.n; i++)
			json_array_append_new(held, json_string(ho->lines.v[i]));
		json_object_set_new(doc, "held_jobs", held);
		ctl_json_result(doc);
		return;
	}
	for (size_t i = 0; i < out->ids.n; i++) {
		if (!*out->exprs.v[i])
			printf("%s %s (a job held at submit)\n",
			       approve ? "approved" : "denied", out->ids.v[i]);
		else
			printf("%s %s (nodes %s)%s\n", approve ? "approved" : "denied",
			       out->ids.v[i], out->exprs.v[i],
			       gone ? ": cancelled" : approve ? ": queued"
			       : ": nodes DOWN, their jobs held");
	}
	for (size_t i = 0; i < out->expired_ids.n; i++) {
		if (!*out->expired_exprs.v[i])
			printf("expired %s (a job held at submit): its deadline had passed\n",
			       out->expired_ids.v[i]);
		else
			printf("expired %s (nodes %s): its deadline had passed; nodes DOWN\n",
			       out->expired_ids.v[i], out->expired_exprs.v[i]);
	}
	for (size_t i = 0; i < ho->lines.n; i++)
		printf("%s\n", ho->lines.v[i]);
	if (reason && so->asked)
		printf("Slurm reason: %s\n", reason);
	if (worker > 0)
		printf("worker started\n");
	else if (worker == 0)
		fprintf(stderr, "gpuburstctl: the worker could not be started: %s (the next resume or gpuburstctl reconcile starts one)\n",
			worker_error);
}

static gb_err_t decide(struct ctl *ctl, const struct decision *dc)
{
	struct gb_policy_outcome out = { 0 };
	struct gb_policy_actor who;
	struct slurm_out so = { 0 };
	struct held_out ho = { 0 };
	const struct gb_conf *conf;
	char reason[GB_POLICY_REASON_MAX], expired[GB_POLICY_REASON_MAX];
	char worker_error[GB_ERROR_TEXT_MAX] = "", qs[64], gone_why[GB_ERROR_TEXT_MAX] = "";
	const char *sudo = getenv("SUDO_USER");
	enum gb_policy_decision d = dc->d;
	gb_error_t err = { 0 };
	int worker = -1;
	gb_err_t rc;

	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	if ((rc = ctl_authorize(ctl, conf, &who)))
		return rc;
	ctl_log_open(ctl);
	if (!ctl_state(ctl, true, &rc))
		return rc;
	gb_log_info("approval_cli decision=%s req=%s by=%s uid=%lld as=%s%s%s", dc->cmd,
		    dc->id, who.name, (long long)who.uid, who.as,
		    who.uid == 0 && sudo ? " sudo_user=" : "",
		    who.uid == 0 && sudo ? gb_log_q(qs, sizeof(qs), sudo) : "");
	if (dc->d == GB_POLICY_APPROVE &&
	    job_gone(ctl, dc->id, gone_why, sizeof(gone_why)))
		d = GB_POLICY_APPROVE_GONE;
	rc = gb_policy_decide(conf, ctl->st, dc->id, d, who.name, who.uid,
			      dc->comment, ctl->now, &out, &err);
	if (rc && rc != GB_E_TIMEOUT) {
		gb_policy_outcome_clear(&out);
		return ctl_fail(rc, "%s", err.text);
	}
	gb_policy_reason_denied(reason, sizeof(reason), who.name, dc->comment);
	gb_policy_reason_expired(expired, sizeof(expired));
	/* a denied or expired job is held first: it must not ask again */
	for (size_t i = 0; dc->d == GB_POLICY_DENY && i < out.jobs.n; i++) {
		char value[64];

		snprintf(value, sizeof(value), "denied/%s", dc->id);
		held_act(ctl, dc->id, out.jobs.v[i], GB_SLURM_JOB_REQUEUE_HOLD, value, &ho);
	}
	for (size_t i = 0; i < out.expired_jobs.n; i++)
		held_act(ctl, dc->id, out.expired_jobs.v[i], GB_SLURM_JOB_REQUEUE_HOLD,
			 "expired", &ho);
	for (size_t i = 0; dc->d == GB_POLICY_DENY && i < out.ids.n; i++)
		if (*out.exprs.v[i])
			slurm_down(ctl, out.ids.v[i], out.exprs.v[i], reason, &so);
	for (size_t i = 0; i < out.expired_ids.n; i++)
		if (*out.expired_exprs.v[i])
			slurm_down(ctl, out.expired_ids.v[i], out.expired_exprs.v[i],
				   expired, &so);
	/* approved for a job that is gone: its nodes go back to idle~ */
	for (size_t i = 0; d == GB_POLICY_APPROVE_GONE && i < out.ids.n; i++) {
		char line[GB_ERROR_TEXT_MAX + 128];

		if (!*out.exprs.v[i])
			continue;
		slurm_power_down(ctl, out.ids.v[i], out.exprs.v[i], &so);
		snprintf(line, sizeof(line), "%s: nothing launched, nodes %s powered down",
			 gone_why, out.exprs.v[i]);
		gb_strv_add(&ho.lines, line);
	}
	for (size_t i = 0; i < out.held_jobs.n; i++) {
		char value[64];

		snprintf(value, sizeof(value), "%s/%s",
			 dc->d == GB_POLICY_APPROVE ? "approved" : "denied", dc->id);
		held_act(ctl, dc->id, out.held_jobs.v[i],
			 dc->d == GB_POLICY_APPROVE ? GB_SLURM_JOB_RELEASE
			 : dc->cancel ? GB_SLURM_JOB_CANCEL : GB_SLURM_JOB_HOLD,
			 value, &ho);
	}
	for (size_t i = 0; i < out.expired_held_jobs.n; i++)
		held_act(ctl, dc->id, out.expired_held_jobs.v[i],
			 conf->policy.on_approval_expiry == GB_HELD_CANCEL
			 ? GB_SLURM_JOB_CANCEL : GB_SLURM_JOB_HOLD, "expired", &ho);
	if (d == GB_POLICY_APPROVE && out.ids.n > out.held_jobs.n)
		worker = start_worker(conf, worker_error, sizeof(worker_error));
	report(ctl, dc, &who, &out, &so, &ho, d == GB_POLICY_APPROVE_GONE, worker, worker_error,
	       rc == GB_E_TIMEOUT ? expired : dc->d == GB_POLICY_DENY ? reason : NULL);
	if (rc == GB_E_TIMEOUT)
		ctl_fail(rc, "%s", err.text);
	else if (so.failed)
		rc = ctl_fail(GB_E_SLURM, "%zu of %zu nodes could not be set DOWN: %s (Slurm's ResumeTimeout will fail them)",
			      so.failed, so.asked, so.error);
	else if (ho.failed)
		rc = ctl_fail(GB_E_SLURM, "%zu held job%s could not be updated in Slurm: %s",
			      ho.failed, ho.failed == 1 ? "" : "s", ho.error);
	gb_strv_free(&ho.lines);
	gb_policy_outcome_clear(&out);
	return rc;
}

static const struct option approve_longopts[] = {
	CTL_COMMON_LONGOPTS,
	{ "comment", required_argument, NULL, 'm' },
	{ NULL, 0, NULL, 0 }
};

static const struct option deny_longopts[] = {
	CTL_COMMON_LONGOPTS,
	{ "reason", required_argument, NULL, 'r' },
	{ "cancel", no_argument, NULL, 'C' },
	{ "hold", no_argument, NULL, 'H' },
	{ NULL, 0, NULL, 0 }
};

static gb_err_t parse(struct ctl *ctl, int argc, char **argv,
		      struct decision *dc, bool *done)
{
	bool approve = dc->d == GB_POLICY_APPROVE, first = true;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, dc->cmd, argc, argv,
			       approve ? ":jhm:" : ":jhr:CH",
			       approve ? approve_longopts : deny_longopts,
			       &first, &rc)) != -1) {
		switch (c) {
		case CTL_OPT_DONE:
			*done = true;
			return rc;
		case 'm':
		case 'r':
			dc->comment = optarg;
			break;
		case 'C':
			dc->cancel = true;
			break;
		case 'H':
			dc->cancel = false;
			break;
		default:
			return ctl_unimplemented(dc->cmd, c);
		}
	}
	if (optind >= argc)
		return ctl_usage(dc->cmd, "which request? (an ID from gpuburstctl approvals)");
	if (optind + 1 < argc)
		return ctl_usage(dc->cmd, "unexpected argument \"%s\"", argv[optind + 1]);
	dc->id = argv[optind];
	if ((rc = ctl_check_id(dc->cmd, dc->id)))
		return rc;
	if (!approve && (!dc->comment || !dc->comment[strspn(dc->comment, " \t")]))
		return ctl_usage(dc->cmd, "deny needs --reason TEXT (it becomes the Slurm node reason)");
	return GB_E_OK;
}

gb_err_t ctl_cmd_approve(struct ctl *ctl, int argc, char **argv)
{
	struct decision dc = { "approve", GB_POLICY_APPROVE, NULL, NULL };
	bool done = false;
	gb_err_t rc = parse(ctl, argc, argv, &dc, &done);

	return rc || done ? rc : decide(ctl, &dc);
}

gb_err_t ctl_cmd_deny(struct ctl *ctl, int argc, char **argv)
{
	struct decision dc = { "deny", GB_POLICY_DENY, NULL, NULL };
	bool done = false;
	gb_err_t rc = parse(ctl, argc, argv, &dc, &done);

	return rc || done ? rc : decide(ctl, &dc);
}
