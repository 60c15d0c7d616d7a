/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * decide.c - approve, deny and expire pending requests, a job at a time
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "gb_policy.h"
#include "gb_util.h"
#include "policy_int.h"

/* What we keep of a request row (rows handed to callbacks are borrowed). */
struct target {
	char id[GB_REQUEST_ID_LEN + 1];
	enum gb_request_state state;
	int64_t job_id;
	char *nodes;
	double deadline;	/* approval's expires_at, else the request's */
	bool has_approval;
	bool expire;		/* decided: expire instead */
	bool held;		/* a job held at submit (no nodes yet) */
};

struct targets {
	struct target *v;
	size_t n, cap;
	bool oom;
};

static void targets_free(struct targets *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].nodes);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static bool targets_has(const struct targets *t, const char *id)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i].id, id) == 0)
			return true;
	return false;
}

static void target_add(struct targets *t, const struct gb_request *r)
{
	struct target *x;

	if (targets_has(t, r->id))
		return;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 4;
		void *grown = realloc(t->v, cap * sizeof(*t->v));

		if (!grown) {
			t->oom = true;
			return;
		}
		t->v = grown;
		t->cap = cap;
	}
	x = &t->v[t->n];
	memset(x, 0, sizeof(*x));
	gb_strlcpy(x->id, r->id, sizeof(x->id));
	x->state = r->state;
	x->job_id = r->job_id;
	x->deadline = r->expires_at;
	x->held = gb_policy_request_held(r);
	if (r->nodes && !(x->nodes = strdup(r->nodes))) {
		t->oom = true;
		return;
	}
	t->n++;
}

static void get_cb(const struct gb_request *r, void *arg)
{
	target_add(arg, r);
}

struct sibling_ctx {
	struct targets *t;
	int64_t job_id;
};

static int sibling_cb(const struct gb_request *r, void *arg)
{
	struct sibling_ctx *c = arg;

	if (c->job_id && r->job_id == c->job_id)
		target_add(c->t, r);
	return c->t->oom;
}

/* Every pending request of [job_id] (0: none) joins [t]. */
static gb_err_t add_siblings(gb_state_t *st, struct targets *t,
			     int64_t job_id, gb_error_t *err)
{
	struct gb_request_filter f = GB_REQUEST_FILTER_ANY;
	struct sibling_ctx c = { t, job_id };

	if (!job_id)
		return GB_E_OK;
	f.state = GB_RSTATE_PENDING_APPROVAL;
	return gb_state_request_list(st, &f, sibling_cb, &c, err);
}

static void deadline_cb(const struct gb_approval *a, void *arg)
{
	struct target *x = arg;

	x->has_approval = true;
	if (a->expires_at > 0)
		x->deadline = a->expires_at;
}

static gb_err_t load_deadlines(gb_state_t *st, struct targets *t,
			       gb_error_t *err)
{
	for (size_t i = 0; i < t->n; i++) {
		gb_err_t rc = gb_state_approval_get(st, t->v[i].id, deadline_cb,
						    &t->v[i], err);

		if (rc && rc != GB_E_NOTFOUND)
			return rc;
	}
	return GB_E_OK;
}

static gb_err_t add_nodes(struct gb_strv *dst, const char *expr,
			  gb_error_t *err)
{
	if (!expr || policy_add_hosts(dst, expr))
		return GB_E_OK;
	/* Not a hostlist we can expand: hand it over as it is. */
	if (gb_strv_add(dst, expr))
		return gb_errorf(err, GB_E_NOMEM, "deciding: out of memory");
	return GB_E_OK;
}

/* Job [job_id] as text into [v], once; RET non-zero when out of memory. */
static int add_job(struct gb_strv *v, int64_t job_id)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lld", (long long)job_id);
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->v[i], buf) == 0)
			return 0;
	return gb_strv_add(v, buf);
}

/* approvals.state of [x] -> [to]; a request without a row gets one first. */
static gb_err_t decide_approval(gb_state_t *st, const struct target *x,
				enum gb_approval_state to, const char *by,
				int64_t uid, const char *comment,
				gb_error_t *err)
{
	if (!x->has_approval) {
		struct gb_approval a = {
			.request_id = x->id, .state = GB_APPROVAL_PENDING,
			.why = "no approval record (added when decided)",
			.expires_at = x->deadline, .decided_uid = -1,
		};
		gb_err_t rc = gb_state_approval_add(st, &a, err);

		if (rc)
			return rc;
	}
	return gb_state_approval_decide(st, x->id, to, by, uid, comment, err);
}

static gb_err_t expire_one(gb_state_t *st, const struct target *x, double now,
			   struct gb_policy_outcome *out, gb_error_t *err)
{
	char iso[32], detail[128];
	gb_err_t rc;

	gb_time_iso(x->deadline, iso, sizeof(iso));
	snprintf(detail, sizeof(detail), "deadline %s passed", iso);
	rc = decide_approval(st, x, GB_APPROVAL_EXPIRED, GB_POLICY_EXPIRY_ACTOR,
			     -1, detail, err);
	if (rc == GB_E_OK)
		rc = gb_state_request_transition(st, x->id,
						 GB_RSTATE_PENDING_APPROVAL,
						 GB_RSTATE_EXPIRED,
						 "approval expired", err);
	if (rc == GB_E_OK) {
		snprintf(detail, sizeof(detail), "deadline=%s late=%.0fs", iso,
			 now - x->deadline);
		rc = gb_state_event_add(st, x->id, "expire", detail, err);
	}
	if (rc == GB_E_OK && x->job_id > 0 &&
	    add_job(x->held ? &out->expired_held_jobs : &out->expired_jobs, x->job_id))
		rc = gb_errorf(err, GB_E_NOMEM, "expiring: out of memory");
	if (rc == GB_E_OK && (gb_strv_add(&out->expired_ids, x->id) ||
			      gb_strv_add(&out->expired_exprs, x->nodes ? x->nodes : "") ||
			      add_nodes(&out->expired_nodes, x->nodes, err)))
		rc = gb_errorf(err, GB_E_NOMEM, "expiring: out of memory");
	if (rc == GB_E_OK)
		gb_log_notice("approval_expired req=%s nodes=%s job=%lld deadline=%s",
			      x->id, x->nodes ? x->nodes : "-",
			      (long long)x->job_id, iso);
	return rc;
}

static gb_err_t decide_one(gb_state_t *st, const struct target *x,
			   enum gb_policy_decision d, const char *who,
			   int64_t uid, const char *comment,
			   struct gb_policy_outcome *out, gb_error_t *err)
{
	char reason[GB_POLICY_REASON_MAX], detail[GB_POLICY_REASON_MAX + 128];
	char qwho[96], qc[GB_POLICY_REASON_MAX + 8];
	bool approve = d != GB_POLICY_DENY, gone = d == GB_POLICY_APPROVE_GONE;
	enum gb_request_state to;
	gb_err_t rc;

	to = !approve ? GB_RSTATE_DENIED : x->held ? GB_RSTATE_DONE
		: gone ? GB_RSTATE_CANCELLED : GB_RSTATE_QUEUED;
	if (gone && !x->held)
		snprintf(reason, sizeof(reason), "approved by %s: job %lld is gone, nothing launched",
			 who, (long long)x->job_id);
	else if (approve && x->held)
		snprintf(reason, sizeof(reason), "approved by %s: job %lld released",
			 who, (long long)x->job_id);
	else if (approve)
		snprintf(reason, sizeof(reason), "approved by %s", who);
	else
		snprintf(reason, sizeof(reason), "denied by %s: %s", who, comment);
	rc = decide_approval(st, x, approve ? GB_APPROVAL_APPROVED
					    : GB_APPROVAL_DENIED,
			     who, uid, comment, err);
	if (rc == GB_E_OK)
		rc = gb_state_request_transition(st, x->id,
						 GB_RSTATE_PENDING_APPROVAL, to,
						 reason, err);
	snprintf(detail, sizeof(detail), "by=%s uid=%lld comment=%s",
		 gb_log_q(qwho, sizeof(qwho), who), (long long)uid,
		 gb_log_q(qc, sizeof(qc), comment ? comment : ""));
	if (rc == GB_E_OK)
		rc = gb_state_event_add(st, x->id, approve ? "approve" : "deny",
					detail, err);
	if (rc == GB_E_OK && (gb_strv_add(&out->ids, x->id) ||
			      gb_strv_add(&out->exprs, x->nodes ? x->nodes : "")))
		rc = gb_errorf(err, GB_E_NOMEM, "deciding: out of memory");
	if (rc == GB_E_OK && x->job_id > 0 &&
	    add_job(x->held ? &out->held_jobs : &out->jobs, x->job_id))
		rc = gb_errorf(err, GB_E_NOMEM, "deciding: out of memory");
	if (rc == GB_E_OK && !approve)
		rc = add_nodes(&out->nodes, x->nodes, err);
	if (rc == GB_E_OK)
		gb_log_notice("approval_%s req=%s nodes=%s job=%lld %s",
			      approve ? "approved" : "denied", x->id,
			      x->nodes ? x->nodes : "-", (long long)x->job_id,
			      detail);
	return rc;
}

/* A job is decided as a whole: one expired part expires all of it. */
static bool any_expired(struct targets *t, double now)
{
	bool any = false;

	for (size_t i = 0; i < t->n; i++)
		any = any || (t->v[i].deadline > 0 && t->v[i].deadline <= now);
	return any;
}

static gb_err_t valid_comment(enum gb_policy_decision d, const char *c,
			      gb_error_t *err)
{
	bool blank = true;

	for (const char *p = c; p && *p && blank; p++)
		blank = isspace((unsigned char)*p);
	if (d == GB_POLICY_DENY && blank)
		return gb_errorf(err, GB_E_INVALID,
				 "a denial needs a reason (--reason TEXT)");
	return GB_E_OK;
}

gb_err_t gb_policy_decide(const struct gb_conf *conf, gb_state_t *st,
			  const char *id, enum gb_policy_decision d,
			  const char *who, int64_t uid, const char *comment,
			  double now, struct gb_policy_outcome *out,
			  gb_error_t *err)
{
	struct targets t = { 0 };
	bool expired = false;
	gb_err_t rc;

	(void)conf;
	if ((rc = valid_comment(d, comment, err)))
		return rc;
	if ((rc = gb_state_tx_begin(st, err)))
		return rc;
	rc = gb_state_request_get(st, id, get_cb, &t, err);
	if (rc == GB_E_NOTFOUND)
		rc = gb_errorf(err, GB_E_NOTFOUND, "no request %s", id);
	if (rc == GB_E_OK && t.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "deciding: out of memory");
	if (rc == GB_E_OK && t.v[0].state != GB_RSTATE_PENDING_APPROVAL)
		rc = gb_errorf(err, GB_E_BUSY,
			       "request %s is %s, not pending approval", id,
			       gb_request_state_name(t.v[0].state));
	if (rc == GB_E_OK)
		rc = add_siblings(st, &t, t.v[0].job_id, err);
	if (rc == GB_E_OK && t.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "deciding: out of memory");
	if (rc == GB_E_OK)
		rc = load_deadlines(st, &t, err);
	expired = rc == GB_E_OK && any_expired(&t, now);
	for (size_t i = 0; rc == GB_E_OK && i < t.n; i++)
		rc = expired ? expire_one(st, &t.v[i], now, out, err)
			     : decide_one(st, &t.v[i], d, who, uid, comment,
					  out, err);
	if (rc == GB_E_OK)
		rc = gb_state_tx_commit(st, err);
	if (rc)
		gb_state_tx_rollback(st);
	if (rc == GB_E_OK && expired) {
		char iso[32];

		rc = gb_errorf(err, GB_E_TIMEOUT,
			       "the approval of request %s expired at %s: its nodes go down",
			       id, gb_time_iso(t.v[0].deadline, iso, sizeof(iso)));
	}
	targets_free(&t);
	return rc;
}

/*****************************************************************************
 *  Expiry
 *****************************************************************************/

struct pending_ctx {
	gb_state_t *st;
	struct targets *t;
	double now;
	gb_err_t rc;
	gb_error_t *err;
};

static int pending_cb(const struct gb_approval *a, void *arg)
{
	struct pending_ctx *c = arg;

	if (a->expires_at <= 0 || a->expires_at > c->now)
		return 0;
	c->rc = gb_state_request_get(c->st, a->request_id, get_cb, c->t,
				     c->err);
	if (c->rc == GB_E_NOTFOUND)	/* cannot be: a foreign key */
		c->rc = GB_E_OK;
	return c->rc != GB_E_OK || c->t->oom;
}

gb_err_t gb_policy_expire(const struct gb_conf *conf, gb_state_t *st,
			  double now, struct gb_policy_outcome *out,
			  gb_error_t *err)
{
	struct targets t = { 0 };
	struct pending_ctx c = { st, &t, now, GB_E_OK, err };
	gb_err_t rc;
	size_t n0;

	(void)conf;
	if ((rc = gb_state_tx_begin(st, err)))
		return rc;
	rc = gb_state_approval_list(st, GB_APPROVAL_PENDING, pending_cb, &c, err);
	if (rc == GB_E_OK)
		rc = c.rc;
	/* the rest of each job goes with it */
	n0 = t.n;
	for (size_t i = 0; rc == GB_E_OK && i < n0; i++)
		rc = add_siblings(st, &t, t.v[i].job_id, err);
	if (rc == GB_E_OK && t.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "expiring: out of memory");
	if (rc == GB_E_OK)
		rc = load_deadlines(st, &t, err);
	for (size_t i = 0; rc == GB_E_OK && i < t.n; i++) {
		if (t.v[i].state == GB_RSTATE_PENDING_APPROVAL) {
			rc = expire_one(st, &t.v[i], now, out, err);
			continue;
		}
		/* The request moved on without its approval (a stale row). */
		rc = gb_state_approval_decide(st, t.v[i].id, GB_APPROVAL_EXPIRED,
					      GB_POLICY_EXPIRY_ACTOR, -1,
					      "request no longer pending", err);
		if (rc == GB_E_BUSY || rc == GB_E_NOTFOUND)
			rc = GB_E_OK;
	}
	if (rc == GB_E_OK)
		rc = gb_state_tx_commit(st, err);
	if (rc)
		gb_state_tx_rollback(st);
	targets_free(&t);
	return rc;
}

void gb_policy_outcome_clear(struct gb_policy_outcome *o)
{
	if (!o)
		return;
	gb_strv_free(&o->ids);
	gb_strv_free(&o->exprs);
	gb_strv_free(&o->nodes);
	gb_strv_free(&o->expired_ids);
	gb_strv_free(&o->expired_exprs);
	gb_strv_free(&o->expired_nodes);
	gb_strv_free(&o->held_jobs);
	gb_strv_free(&o->expired_held_jobs);
	gb_strv_free(&o->jobs);
	gb_strv_free(&o->expired_jobs);
}

/*****************************************************************************
 *  Slurm reasons
 *****************************************************************************/

/* Slurm prints reasons on one line: no control characters. */
static void flatten(char *s)
{
	for (; *s; s++)
		if (iscntrl((unsigned char)*s))
			*s = ' ';
}

char *gb_policy_reason_denied(char *buf, size_t n, const char *who,
			      const char *text)
{
	snprintf(buf, n, GB_POLICY_REASON_DENIED "%s: %s", who ? who : "?",
		 text ? text : "");
	flatten(buf);
	return buf;
}

char *gb_policy_reason_expired(char *buf, size_t n)
{
	snprintf(buf, n, "%s", GB_POLICY_REASON_EXPIRED);
	return buf;
}
