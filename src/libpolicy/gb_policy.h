/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_policy.h - approval policy: which resumes wait for an administrator,
 * who may decide, what a decision does to the queue, expiry, notification
 *
 * The anchors have no approval gating; the ancestor gated one launch call
 * at a time (shared/research/seed-and-protocols.md §1.8).  Here a resume
 * REQUEST is gated before anything is launched, and the rules are:
 *
 *  1. Size.  A request needs approval when the nodes COUNTED for it exceed
 *     (strictly) the threshold of the effective environment
 *     (policy.approval_thresholds: dev 50, staging 20, prod 10).
 *     Counting (gpuburstctl(8), APPROVALS, has worked examples):
 *       - a request is one (nodeset, job) of one Slurm call;
 *       - for a job, the count is the number of distinct nodes of that job
 *         in ALL nodesets of this call, plus those of the same job's
 *         earlier requests created within the last [window] seconds (the
 *         resume timeout) that are pending_approval, queued, running or
 *         done: a job split over several nodesets, or over several calls
 *         by ResumeRate, is counted whole.  When the count exceeds the
 *         threshold every request of the job in this call is gated (never
 *         half a job); a part already admitted earlier is not recalled;
 *       - a jobless power-up (scontrol update state=power_up) is counted
 *         per nodeset and call: the request's own nodes.
 *  2. Manual power-ups.  With policy.manual_resume_needs_approval, every
 *     jobless request is gated whatever its size.
 *  3. Geography.  With a non-empty policy.allowed_geo_regions, a plan that
 *     would launch in any other region is gated when the worker has made
 *     it (gb_policy_geo_gate), before any launch.
 * A request is approved as a whole; an approved request is never gated
 * again (an approval covers its size and its plan).
 *
 * Expiry.  A gated request keeps its nodes POWERING_UP in Slurm, and Slurm
 * fails them (DOWN, "ResumeTimeout reached") ResumeTimeout seconds after
 * the power-up: waiting for approval consumes that budget, and launching
 * plus booting needs the rest.  So the default approval timeout is HALF of
 * the ResumeTimeout that applies to the nodes (gb_policy_approval_timeout),
 * counted from the request's creation (the power-up), not from the moment
 * the gate was hit; policy.approval_timeout overrides it.
 *
 * Ownership: strings in results are NEW inside the result and freed by its
 * *_clear function; config pointers are BORROWED.
 */
#ifndef GB_LIBPOLICY_GB_POLICY_H
#define GB_LIBPOLICY_GB_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gb_conf.h"
#include "gb_err.h"
#include "gb_slurmconf.h"
#include "gb_state.h"
#include "gb_str.h"

#define GB_POLICY_WHY_MAX 256
/* Slurm node reasons of denied and expired requests (gpuburstctl(8)). */
#define GB_POLICY_REASON_DENIED "gpuburst: resume denied by "
#define GB_POLICY_REASON_EXPIRED "gpuburst: resume approval expired"
#define GB_POLICY_REASON_MAX 256	/* bytes with the NUL */
/* Who decides an expiry, in approvals.decided_by and events. */
#define GB_POLICY_EXPIRY_ACTOR "gpuburst"
/* The notify command gets this long before it is killed. */
#define GB_POLICY_NOTIFY_TIMEOUT 10.0
/* Output of the notify command kept for the log, bytes. */
#define GB_POLICY_NOTIFY_OUTPUT_MAX 512

enum gb_policy_rule {
	GB_POLICY_RULE_NONE = 0,	/* no approval needed */
	GB_POLICY_RULE_SIZE,		/* counted nodes > threshold */
	GB_POLICY_RULE_MANUAL,		/* jobless and manual_resume_needs_approval */
	GB_POLICY_RULE_GEO,		/* plan outside allowed_geo_regions */
	GB_POLICY_RULE_BUDGET,		/* held at submit: over a budget */
};

struct gb_policy_verdict {
	bool needs_approval;
	enum gb_policy_rule rule;
	int counted;			/* nodes counted against the threshold */
	int threshold;			/* of the effective environment */
	char why[GB_POLICY_WHY_MAX];	/* one line, for approvals.why */
};

/* RET static "none", "size", "manual", "geo". */
const char *gb_policy_rule_name(enum gb_policy_rule r);

/*
 * The size and manual rules for one request of job [job_id] (0: none)
 * whose counted nodes are [counted].  Pure.  Rule 1 is checked before
 * rule 2, so a large manual power-up says why by its size.
 * why: "12 nodes for job 4711 > prod threshold 10",
 *      "manual power-up of 3 nodes (policy.manual_resume_needs_approval)".
 */
void gb_policy_judge(const struct gb_conf *conf, int64_t job_id, int counted,
		     struct gb_policy_verdict *v);

/*
 * The geography rule: RET whether some of [regions] (n names, duplicates
 * allowed) is outside policy.allowed_geo_regions (always false when that
 * list is empty).  [v] may be NULL; else filled, why e.g. "plan uses
 * ap-northeast-2 outside allowed_geo_regions [ap-south-1, ap-northeast-1]".
 */
bool gb_policy_geo(const struct gb_conf *conf, const char *const *regions,
		   size_t n, struct gb_policy_verdict *v);

/*
 * The approval timeout of a request of nodeset [nodeset] (may be NULL):
 * gb_policy_approval_timeout() with slurm.conf's global ResumeTimeout and
 * that of the nodeset's partition ([sc] NULL: Slurm's default 60 s).
 */
double gb_policy_timeout_for(const struct gb_conf *conf,
			     const struct gb_slurmconf *sc,
			     const char *nodeset);

/*
 * How long after its creation a resume request of nodeset [nodeset] may
 * go on asking pools that answered InsufficientInstanceCapacity (the
 * worker's re-probes, gb_orch_reprobe_delay): policy.reprobe_window when
 * set (0: never), else (auto) half of the ResumeTimeout that applies, as
 * the approval timeout: capacity found in the first half leaves the
 * second to launch and boot.  Never past policy.request_deadline (reconcile
 * fails a request queued longer).  [sc] NULL: Slurm's default 60 s.
 */
double gb_policy_reprobe_window(const struct gb_conf *conf,
				const struct gb_slurmconf *sc,
				const char *nodeset);

/*
 * The resume fast path's hook.  [reqs] are the n requests of ONE Slurm
 * call, not yet inserted (ids may be empty); for each, counts as in rule 1
 * and applies rules 1 and 2.  Earlier requests are read from [st] (NULL:
 * none) back to [now] minus the larger of the global and partition
 * ResumeTimeouts of [sc] (NULL: 60 s).  OUT v[i] per request;
 * reqs[i].state becomes GB_RSTATE_PENDING_APPROVAL with expires_at =
 * created + gb_policy_timeout_for() (created: reqs[i].created_at, or
 * [now] when 0) for the gated ones, GB_RSTATE_QUEUED for the other resume
 * requests; other kinds are left alone.  Reads only.  Nodes that are not
 * a valid hostlist count by node_count.
 * RET GB_E_OK; GB_E_STATE reading [st]; GB_E_NOMEM.
 */
gb_err_t gb_policy_gate(const struct gb_conf *conf, gb_state_t *st,
			struct gb_request *reqs, size_t n, double now,
			const struct gb_slurmconf *sc,
			struct gb_policy_verdict *v, gb_error_t *err);

/*
 * After [req] (gated by [v]) was inserted, in the caller's transaction if
 * any: the approval row (state pending, why, requested_at =
 * req->created_at, expires_at = req->expires_at), the event
 * "approval_needed" (rule=, counted=, threshold=, expires=) and the log
 * line.  RET as gb_state_approval_add.
 */
gb_err_t gb_policy_record(gb_state_t *st, const struct gb_request *req,
			  const struct gb_policy_verdict *v, gb_error_t *err);

/*
 * The worker's geography gate for request [req] (RUNNING, claimed by the
 * caller) whose plan would use [regions].  When the request has an
 * approved approval, or the regions are all allowed: RET GB_E_OK, nothing
 * written.  Otherwise, in one transaction: the request goes RUNNING ->
 * PENDING_APPROVAL, an approval row (expiring at req->created_at +
 * gb_policy_timeout_for(): Slurm's clock started at the power-up) and an
 * event are written; RET GB_E_PENDING (the caller stops working on it and
 * notifies: gb_policy_notify_spawn).  OUT [v] (may be NULL) the verdict.
 */
gb_err_t gb_policy_geo_gate(const struct gb_conf *conf, gb_state_t *st,
			    const struct gb_request *req,
			    const char *const *regions, size_t n,
			    const struct gb_slurmconf *sc,
			    struct gb_policy_verdict *v, gb_error_t *err);

/*
 * The default approval timeout (seconds) for nodes of Slurm partition
 * [partition] (may be NULL): policy.approval_timeout when set (not auto),
 * else half of the ResumeTimeout that applies (the smaller of the global
 * one and the partition's own, when it has one), at least 1 s.
 * [resume_timeout] and [partition_timeout] come from slurm.conf
 * (gb_slurmconf.h); <= 0 means unknown / not set (the global one then
 * defaults to Slurm's 60 s).
 */
double gb_policy_approval_timeout(const struct gb_conf *conf,
				  double resume_timeout,
				  double partition_timeout);

/*****************************************************************************
 *  Jobs held at submit (job_submit/gpuburst, policy.approve_at_submit)
 *
 *  The plugin holds a job over the threshold (priority 0, the admin-comment
 *  token "gpuburst:approval=pending/NODES"); it cannot write the state file
 *  under slurmctld's locks, and the job has no id yet.  Whoever lists the
 *  held jobs next (gpuburstctl reconcile, every minute; gpuburstctl
 *  approvals) records them: one RESUME request per job with no nodes
 *  (gb_policy_request_held), PENDING_APPROVAL until
 *  policy.submit_approval_timeout, and its approval row.  Approving it
 *  releases the job (the request is DONE: it launches nothing itself);
 *  the job's later power-ups are then not gated by size
 *  (gb_policy_job_approved).  Denying or expiring it holds or cancels the
 *  job (gpuburstctl deny --hold | --cancel; policy.on_approval_expiry).
 *****************************************************************************/

/* A held job as Slurm shows it.  Strings BORROWED, NULL: not known. */
struct gb_policy_held {
	int64_t job_id;
	const char *user, *account, *partition, *name, *tres;
	const char *home;		/* gpuburst:home= of its admin comment */
	int nodes;			/* the plugin's estimate (its token) */
	int gpus;			/* in all; -1: not known */
	uint32_t time_limit;		/* minutes; 0: none */
	const char *budget;		/* the budget it would go over, or NULL */
	double cost, cost_worst;	/* the plugin's estimate, US dollars;
					 * < 0: not known */
};

/* RET whether [r] is the request of a job held at submit. */
bool gb_policy_request_held(const struct gb_request *r);

/*
 * For each of [jobs] (n) that has no held request yet: the request (input:
 * JSON {"source":"submit", user, account, partition, name, tres, nodes,
 * gpus (null: not known), time_limit, cost, cost_worst (null: not known),
 * budget (when one held it)}), its approval row and event (rule "budget"
 * when a budget held it, else "size"), in one transaction.  OUT
 * [created] the new request ids (the caller notifies:
 * gb_policy_notify_spawn).  RET GB_E_OK or as libstate.
 */
gb_err_t gb_policy_held_sync(const struct gb_conf *conf, gb_state_t *st,
			     const struct gb_policy_held *jobs, size_t n,
			     double now, bool dry, struct gb_strv *created,
			     gb_error_t *err);

/* [dry]: nothing is written; [created] gets the job ids ("4711") instead. */

/* policy.approval_notify about held request [id] (gb_policy_notify_spawn). */
gb_err_t gb_policy_held_notify(const struct gb_conf *conf, gb_state_t *st,
			       const char *id, gb_error_t *err);

/* OUT *yes: job [job_id] was held at submit and its approval approved. */
gb_err_t gb_policy_job_approved(gb_state_t *st, int64_t job_id, bool *yes,
				gb_error_t *err);

/*****************************************************************************
 *  Decisions: approve, deny, expire
 *****************************************************************************/

enum gb_policy_decision {
	GB_POLICY_APPROVE = 0,
	GB_POLICY_DENY,
	GB_POLICY_APPROVE_GONE,	/* approved, but the job no longer needs the
				 * nodes (the caller asked Slurm): the
				 * requests are CANCELLED, nothing launched */
};

/* What a decision (or an expiry pass) changed, for Slurm and the report. */
struct gb_policy_outcome {
	struct gb_strv ids;		/* requests decided, the named one first */
	struct gb_strv exprs;		/* ... the hostlist of each of them */
	struct gb_strv nodes;		/* denied: all their nodes, expanded */
	struct gb_strv expired_ids;	/* requests found past their deadline */
	struct gb_strv expired_exprs;	/* ... the hostlist of each of them */
	struct gb_strv expired_nodes;	/* ... all their nodes, expanded */
	struct gb_strv held_jobs;	/* decided requests of jobs held at
					 * submit: their job ids ("4711") */
	struct gb_strv expired_held_jobs;	/* ... expired ones */
	struct gb_strv jobs;		/* the other decided requests' jobs,
					 * each once (denied: the caller holds
					 * them, so they do not ask again) */
	struct gb_strv expired_jobs;	/* ... of the other expired ones */
};
void gb_policy_outcome_clear(struct gb_policy_outcome *o);

/*
 * Decide request [id] ([d] by [who], real uid [uid], [comment]: the
 * approval comment (may be NULL) or the deny reason (required)), in one
 * transaction with every other pending request of the same job (job_id
 * != 0): a job is decided as a whole.  Approve: approvals -> approved,
 * requests pending_approval -> queued (a held job's -> done; APPROVE_GONE:
 * -> cancelled).  out->held_jobs / out->jobs name the jobs decided (the
 * caller releases, holds or cancels them in Slurm).  Deny: approvals -> denied,
 * requests -> denied with reason "denied by WHO: TEXT"; their nodes in
 * out->nodes.  Each request gets an event ("approve"/"deny", by=, uid=,
 * comment=) and a log line.  A request whose deadline has passed is
 * expired instead (out->expired_*) and, if it is [id] itself,
 * RET GB_E_TIMEOUT ("approval of ID expired at ...").
 * Other RET: GB_E_NOTFOUND (no such request), GB_E_BUSY (not pending
 * approval: the text says its state), GB_E_INVALID (deny without a
 * reason), GB_E_STATE.  Nothing is written unless the transaction
 * commits.  The caller then updates Slurm (DOWN with
 * gb_policy_reason_denied / _expired) and, after an approval, starts the
 * worker.
 */
gb_err_t gb_policy_decide(const struct gb_conf *conf, gb_state_t *st,
			  const char *id, enum gb_policy_decision d,
			  const char *who, int64_t uid, const char *comment,
			  double now, struct gb_policy_outcome *out,
			  gb_error_t *err);

/*
 * Expire every pending approval whose expires_at <= [now]: approvals ->
 * expired (by GB_POLICY_EXPIRY_ACTOR), requests pending_approval ->
 * expired, events "expire".  One transaction.  OUT out->expired_ids and
 * out->expired_nodes (the caller puts those nodes DOWN with
 * gb_policy_reason_expired).  RET GB_E_OK (also when nothing expired).
 */
gb_err_t gb_policy_expire(const struct gb_conf *conf, gb_state_t *st,
			  double now, struct gb_policy_outcome *out,
			  gb_error_t *err);

/*
 * Slurm node reasons: "gpuburst: resume denied by WHO: TEXT" (control
 * characters become blanks; TEXT is cut so that the whole fits [n]) and
 * "gpuburst: resume approval expired".  RET [buf].
 */
char *gb_policy_reason_denied(char *buf, size_t n, const char *who,
			      const char *text);
char *gb_policy_reason_expired(char *buf, size_t n);

/*****************************************************************************
 *  Who may decide
 *****************************************************************************/

struct gb_policy_actor {
	int64_t uid;			/* the real uid judged */
	char name[64];			/* its user name, or the number */
	const char *as;			/* why allowed: "root", "SlurmUser",
					   "admins.users", "admins.group";
					   NULL when refused */
};

/*
 * May real uid [uid] decide approvals and terminate instances?  Allowed:
 * uid 0, the SlurmUser [slurm_user] (a name from slurm.conf, may be NULL),
 * a user named in admins.users (by name, or by number "#1001"), a member
 * of admins.group (primary or supplementary, via getgrouplist).  Pass
 * getuid(), never geteuid(): gpuburstctl may run set-uid to reach the
 * state file.  OUT [a] (may be NULL).
 * RET GB_E_OK, or GB_E_PERM with a message naming the user and who may.
 */
gb_err_t gb_policy_authorize(const struct gb_conf *conf, uid_t uid,
			     const char *slurm_user,
			     struct gb_policy_actor *a, gb_error_t *err);

/*****************************************************************************
 *  Notification
 *****************************************************************************/

/*
 * The JSON document given to policy.approval_notify on stdin:
 * {"event":"approval_needed","cluster":..,"environment":..,
 *  "request_id":..,"kind":..,"nodeset":..,"job_id":..|null,"nodes":..,
 *  "node_count":..,"instance_type":..,"home_region":..,"why":..,
 *  "requested_at":"ISO","expires_at":"ISO",
 *  "approve":"gpuburstctl approve ID","deny":"gpuburstctl deny ID --reason TEXT"}
 * OUT *out NEW (free()).
 */
gb_err_t gb_policy_notify_json(const struct gb_conf *conf,
			       const struct gb_request *req, const char *why,
			       double expires_at, char **out, gb_error_t *err);

/*
 * Run policy.approval_notify about [req] now, in this thread, for at most
 * GB_POLICY_NOTIFY_TIMEOUT seconds, and log the outcome
 * ("approval_notify req=... status=... elapsed=..."), failures as errors.
 * Safe in a multi-threaded process (the child only execs).  No-op when
 * approval_notify is not set.  RET as gb_spawn_run(), or GB_E_IO for a
 * non-zero exit.
 */
gb_err_t gb_policy_notify_run(const struct gb_conf *conf,
			      const struct gb_request *req, const char *why,
			      double expires_at, gb_error_t *err);

/*
 * Notify about [req] gated for [why] until [expires_at], without blocking
 * the caller (the resume fast path; call it from a single-threaded
 * process: the grandchild logs): a detached grandchild (setsid) runs policy.approval_notify
 * with gb_spawn_run(), GB_POLICY_NOTIFY_TIMEOUT, and logs the outcome
 * ("approval_notify req=... status=... elapsed=..."), failures as errors.
 * No-op when approval_notify is not set.  Only the double fork can fail
 * here (logged; RET GB_E_IO).
 */
gb_err_t gb_policy_notify_spawn(const struct gb_conf *conf,
				const struct gb_request *req, const char *why,
				double expires_at, gb_error_t *err);

/*****************************************************************************
 *  Spend (spend.c): instance time x price, from the state file
 *****************************************************************************/

/* What `gpuburstctl cost --by` groups by. */
enum gb_cost_by {
	GB_COST_BY_CLUSTER = 0,
	GB_COST_BY_JOB,
	GB_COST_BY_USER,
	GB_COST_BY_ACCOUNT,
	GB_COST_BY_PARTITION,
	GB_COST_BY_REGION,
	GB_COST_BY_TYPE,
};

const char *gb_cost_by_name(enum gb_cost_by by);
/* RET GB_E_OK or GB_E_INVALID (not one of the names). */
gb_err_t gb_cost_by_parse(const char *s, enum gb_cost_by *out);

struct gb_cost_row {
	char *key;			/* NEW; "-" when not known */
	size_t instances;		/* records with time in the window */
	double seconds;			/* instance-seconds in the window */
	double usd;			/* seconds x price of the priced ones */
	double unpriced_seconds;	/* of those, without a known price */
};

struct gb_cost_report {
	struct gb_cost_row *v;		/* the most expensive first */
	size_t n;
	size_t instances;		/* totals */
	double seconds, usd, unpriced_seconds;
};

/*
 * Cost of every instance with time in [since, until), grouped [by]; a
 * live instance's time runs to [now].  Price: gb_policy_usage_price(),
 * per second.  OUT [out] NEW
 * (gb_cost_report_clear).  RET GB_E_OK, GB_E_INVALID, state errors.
 */
gb_err_t gb_policy_cost(const struct gb_conf *conf, gb_state_t *st, double since,
			double until, double now, enum gb_cost_by by,
			struct gb_cost_report *out, gb_error_t *err);
void gb_cost_report_clear(struct gb_cost_report *r);

/*
 * RET the price of [u] in US dollars per hour, or -1 when not known.  A
 * spot instance ([u]'s capacity "spot") costs the spot price [st] caches
 * (gb_state_spot_price_get: the pool of its AZ, or without an AZ the
 * highest of its region's, as last fetched, however old); without one,
 * and for the other kinds, gb_conf_price() of its region, type and kind.
 * [st] NULL: the price file alone.
 */
double gb_policy_usage_price(const struct gb_conf *conf, gb_state_t *st,
			     const struct gb_usage *u);

/*
 * What each budget scope (cluster, account, partition, user) spent in the
 * calendar month (UTC) of [now], up to [now].  OUT [out] NEW
 * (gb_spend_clear).
 */
gb_err_t gb_policy_spend_summary(const struct gb_conf *conf, gb_state_t *st, double now,
				 struct gb_spend_summary *out, gb_error_t *err);

/*
 * Write the spend summary of [now] to <state_dir>/spend (atomically) for
 * the job_submit plugin; nothing when no budget is configured.
 */
gb_err_t gb_policy_spend_refresh(const struct gb_conf *conf, gb_state_t *st, double now,
				 gb_error_t *err);

#endif /* GB_LIBPOLICY_GB_POLICY_H */
