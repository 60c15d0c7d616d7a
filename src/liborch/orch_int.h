/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_int.h - liborch internals shared by its .c files (not installed)
 *
 * Threads: every cloud call of a request runs as a job on the
 * orchestrator's worker threads (orch_pool.c: shared by the requests it
 * runs, each run with its own handle, struct orch_pool), each thread with
 * its own EC2 client per region (a gb_ec2_t is not thread-safe).  Everything else - planning,
 * node assignment, every state-file write - happens in the calling thread
 * with the caller's gb_state_t, between waves of jobs, so the per-request
 * invariants need no lock: workers only send requests and hand back what
 * EC2 answered.
 */
#ifndef GB_LIBORCH_ORCH_INT_H
#define GB_LIBORCH_ORCH_INT_H

#include <pthread.h>

#include "gb_orch.h"

struct gb_orch {
	const struct gb_conf *conf;
	char *state_path;
	gb_creds_t *creds;
	bool own_creds;
	int max_parallel;
	int busy_ms;
	struct gb_orch_tuning tuning;
	gb_plan_propose_fn propose;
	void *propose_ctx;
	struct gb_llm *llm;	/* planner.kind llm: made and owned here */
	char *llm_error;	/* why it could not be made, or NULL */
	double (*wall)(void *ctx);
	double (*mono)(void *ctx);
	void (*sleep)(double seconds, void *ctx);
	void *seam_ctx;
	struct orch_board *board;	/* shared by the requests run at once */
	/* the threads that send every request's calls (orch_pool.c), made
	 * at the first run under [workers_mu]; pool_threads of them */
	struct orch_workers *workers;
	pthread_mutex_t workers_mu;
	int pool_threads;
	/* one run at a time asks regions for their offerings: the others
	 * of a burst find the answers in the cache (orch_run.c preflight) */
	pthread_mutex_t preflight_mu;
};

double orch_wall(const gb_orch_t *o);
double orch_mono(const gb_orch_t *o);
void orch_sleep(const gb_orch_t *o, double seconds);

/* A new EC2 client for [region] (configured), OUT *out NEW. */
gb_err_t orch_ec2_new(const gb_orch_t *o, const char *region,
			 gb_ec2_t **out, gb_error_t *err);

/*****************************************************************************
 *  The board: what concurrent requests learn from each other (orch_board.c)
 *****************************************************************************/

#define ORCH_BOARD_KEY_MAX 320
#define ORCH_BOARD_DRY_S 120.0	/* a dry pool is left this long (SkyPilot's
				 * capacity figure; Karpenter uses 180 s) */
#define ORCH_BOARD_HOLD_S 10.0	/* a call in flight holds its pool off
				 * others at most this long */
#define ORCH_BOARD_FLOW_S 30.0	/* ... or one more per answer in a row that
				 * gave all it was asked, the last this recent */
#define ORCH_BOARD_FLOW_MAX 64	/* at most this many at once */

struct orch_board;
struct orch_run;

/* Who found a pool dry, and how long ago (orch_board_dry). */
struct orch_board_dry {
	char by[GB_REQUEST_ID_LEN + 1];
	char code[48];
	double age;		/* seconds */
};

gb_err_t orch_board_create(struct orch_board **out, gb_error_t *err);
void orch_board_destroy(struct orch_board *b);
/* [pool]'s key (region|az|type|capacity|target|group) into [buf]. */
void orch_board_key(const struct orch_run *r, size_t pool, const char *group,
		    char *buf, size_t n);
/* A call of [owner] to [key] is in flight from [now] (mono); RET false: not noted. */
bool orch_board_fly(struct orch_board *b, const char *key, const void *owner,
		    double now);
/*
 * [owner]'s call to [key] was answered: [dry] (no capacity, or fewer
 * instances than asked: the pool is spent; [request_id] asked, EC2 said
 * [code]) or [gave] instances (a dry mark is cleared).  Wakes the waiters.
 */
void orch_board_land(struct orch_board *b, const char *key, const void *owner,
		     double now, bool dry, bool gave, const char *request_id,
		     const char *code);
/*
 * Is [key] dry at [now] for a run that began at [began] (its memory does
 * not have it yet)?  OUT *out who said so (may be NULL).
 */
bool orch_board_dry(struct orch_board *b, const char *key, double now,
		    double began, struct orch_board_dry *out);
/* [owner]'s run wrote what it found into capacity memory at [now]. */
void orch_board_learned(struct orch_board *b, const void *owner, double now);
/*
 * Check and note at once: a call of [owner] to [key] flies from [now],
 * unless another owner's does (BUSY); UNNOTED: out of memory, it flies
 * unannounced.
 */
enum orch_admit { ORCH_ADMIT_FLYING, ORCH_ADMIT_BUSY, ORCH_ADMIT_UNNOTED };
enum orch_admit orch_board_admit(struct orch_board *b, const char *key,
				 const void *owner, double now);
/* Does a call of another owner to [key] fly (for less than the hold)? */
bool orch_board_busy(struct orch_board *b, const char *key, const void *owner,
		     double now);
/* The board's generation: orch_board_wait() returns once it moves on. */
unsigned long orch_board_gen(struct orch_board *b);
/* Wait until an answer lands after [gen], at most [max_s] seconds. */
void orch_board_wait(struct orch_board *b, unsigned long gen, double max_s);

/*****************************************************************************
 *  Jobs and the worker pool
 *****************************************************************************/

enum orch_job_kind {
	ORCH_JOB_RUN = 0,	/* RunInstances */
	ORCH_JOB_TAGS,		/* CreateTags */
	ORCH_JOB_TERMINATE,	/* TerminateInstances */
	ORCH_JOB_OFFERINGS,	/* DescribeInstanceTypeOfferings (the
				 * request's types, one call) */
	ORCH_JOB_DESCRIBE,	/* DescribeInstances (filters) */
	ORCH_JOB_PLACEMENT,	/* CreatePlacementGroup (cluster) */
	ORCH_JOB_RESERVATIONS,	/* DescribeCapacityReservations (the
				 * request's types) */
};

struct orch_job {
	enum orch_job_kind kind;
	const char *region;		/* BORROWED (config) */
	/* RUN */
	struct gb_ec2_run_params run;
	struct gb_ec2_instance_list *instances;	/* NEW result */
	/* TAGS / TERMINATE */
	const char *const *ids;
	size_t n_ids;
	const struct gb_ec2_kv *tags;
	size_t n_tags;
	struct gb_ec2_state_change_list *changes;	/* NEW result */
	/* OFFERINGS: filter instance-type with these values */
	const char *const *types;
	size_t n_types;
	struct gb_ec2_offering_list *offerings;	/* NEW result */
	/* RESERVATIONS: filter instance-type with [types] too */
	struct gb_ec2_capacity_reservation_list *reservations;	/* NEW result */
	/* DESCRIBE */
	const struct gb_ec2_describe_params *describe;
	/* PLACEMENT: group [group] with the tags of [spec] */
	const char *group;
	const struct gb_ec2_tag_spec *spec;
	/* RUN: announced on the board (orch_board_fly) under this key, or "" */
	const char *board_key;
	const void *board_owner;
	const char *board_request;
	bool board_flying;		/* noted already (orch_board_admit) */
	/* results */
	gb_err_t rc;
	struct gb_ec2_error ae;
	gb_error_t err;
	double t_start, t_done;		/* orchestrator's mono clock */
	/* the pool's bookkeeping (under the workers' mutex) */
	bool done;
	bool async;			/* orch_pool_submit: collected */
	struct orch_pool *owner;	/* the run that queued it */
};

struct orch_pool;
struct orch_workers;

/*
 * A run's handle on the orchestrator's worker threads (made at the first
 * run, shared by every request after: orch_pool.c).
 */
gb_err_t orch_pool_create(gb_orch_t *o, struct orch_pool **out, gb_error_t *err);
/* The threads themselves, at gb_orch_destroy(). */
void orch_workers_free(gb_orch_t *o);
/* Run [jobs] (as many at once as threads are free) and wait for all. */
void orch_pool_run(struct orch_pool *p, struct orch_job **jobs, size_t n);
/*
 * Queue [jobs] and return at once; each comes back, answered, from
 * orch_pool_collect().  Jobs of orch_pool_run() may run meanwhile.
 * RET false when out of memory: nothing was queued.
 */
bool orch_pool_submit(struct orch_pool *p, struct orch_job **jobs, size_t n);
/*
 * Wait until a submitted job is answered (returns at once when none is
 * outstanding); OUT [out] up to [max] answered jobs.  RET how many.
 */
size_t orch_pool_collect(struct orch_pool *p, struct orch_job **out,
			 size_t max);
/* The run's handle, once its jobs still queued or running are done. */
void orch_pool_destroy(struct orch_pool *p);
void orch_job_clear(struct orch_job *j);

/*****************************************************************************
 *  One resume request in progress
 *****************************************************************************/

enum slot_state {
	SLOT_EMPTY = 0,		/* no instance yet */
	SLOT_TENTATIVE,		/* has one, not yet committed (locality) */
	SLOT_COMMITTED,		/* has one for good */
	SLOT_REUSED,		/* had a live one before this call */
	SLOT_DOUBT,		/* a launch for it has an unknown outcome */
};

struct slot {
	const char *name;	/* BORROWED from run->names */
	enum slot_state state;
	char *instance_id, *region, *az, *subnet, *private_ip, *public_ip;
	char *type;		/* the instance's type */
	char *code;		/* why unfilled (last denial) */
	char *why;
	int group;		/* locality group of its instance */
	double filled_at;	/* mono */
	bool tagged;		/* gpuburst:node is on the instance */
	int64_t attempt_id;
};

/* In-run knowledge of a pool (beside f->pools[i]). */
struct pool_run {
	int throttled;		/* consecutive THROTTLE/TRANSIENT failures */
	int halvings;		/* probe_fill bookkeeping */
	bool tried;
	int got;		/* instances obtained here in this run */
	double run_est;		/* -1: unknown */
	bool at_estimate;	/* gave what memory expected: last resort */
	int chunks;		/* default: parallel calls it has earned, 1 +
				 * one per call it answered in full */
	/* this run's visit, for capacity memory (orch_learn) */
	bool m_seen, m_dry;
	int m_asked, m_got;
	double room0;		/* quota room remembered at the start */
	double not_before;	/* default: backing off after throttling
				 * until then (mono), 0 when not */
	bool q_refused;		/* a quota refusal here: */
	int q_min;		/* ... the refused call's MinCount */
	char q_code[40];	/* ... and EC2's code */
};

struct orch_call;

/* A cluster placement group of this run: one per (region, AZ). */
struct orch_group_pg {
	char *region, *az;
	char *name;		/* NULL: the AZ could not have one (excluded) */
};

/* A region the account may not use, skipped in this run (orch_region.c). */
struct region_skip {
	char region[64];
	char code[64];		/* OptInRequired, AuthFailure, ... */
	char message[256];	/* EC2's */
	bool remembered;	/* skipped for quota memory's "account" wall,
				 * not asked in this run */
};

struct orch_run {
	gb_orch_t *o;
	char *munge_key;	/* {munge_key}: the key sealed for req, made by
				 * the first call that needs it (orch_call_params) */
	gb_state_t *st;
	const struct gb_conf *conf;
	const struct gb_request *req;
	const struct gb_conf_nodeset *ns;
	/*
	 * The request's types, in preference order (facts.types is this
	 * array): the nodeset's instance_types, or the one type the request
	 * names when it is another (gpuburstctl plan --type X).  [type] is
	 * types[0], for where one name is needed (messages); every call
	 * uses its pool's type.
	 */
	const char *const *types;
	size_t n_types;
	const char *type;
	const char *home;
	enum gb_strategy strategy;
	enum gb_locality locality;
	enum gb_mode mode;
	bool grouped;		/* locality applies (job of several nodes) */
	bool placed;		/* ... in a cluster placement group per AZ
				 * (orch_place.c) */
	struct orch_group_pg *pgs;	/* the groups made or found, per AZ */
	size_t n_pgs;
	bool dry;		/* plan dry run: no events */
	struct gb_orch_proposal *proposal;	/* NULL, or filled by each
						 * plan made (the dry run's) */
	const char *untrusted;	/* user text for a proposing planner */
	const char *owner_user, *owner_account, *owner_partition; /* cost tags */
	int bmax;
	int hedge;

	struct gb_strv names;
	struct slot *slots;
	int n;

	/* invariants */
	int remaining;		/* nodes not committed or reused */
	int prev_remaining;
	int cursor;		/* locality group / region cursor */
	int prev_cursor;
	int lock_group;		/* group of recovered instances, or -1 */
	int launched_seen;	/* instances RunInstances returned */
	int launched_recorded;	/* ... and recorded */

	struct gb_candidates cand;
	/*
	 * The capacity ladder: the nodeset's rungs and the reservations and
	 * Capacity Blocks known in the candidate regions (ladder.resv is
	 * [resv], NEW, its strings in [resv_strs]), orch_ladder.c.
	 */
	struct gb_plan_ladder ladder;
	struct gb_plan_resv *resv;
	struct gb_strv resv_strs;
	struct gb_plan_facts facts;
	struct pool_run *pr;	/* one per facts.pools[] */
	struct gb_plan *plan;
	int replans;
	int next_seq;
	struct orch_pool *pool;

	/* outcome bookkeeping */
	int api_calls, other_calls, extras, rolled_back, terminated;
	int plan_versions;
	double t0, deadline;
	gb_err_t abort_rc;	/* CONFIG/AUTH/INTERNAL/STATE stop */
	char abort_code[64];	/* EC2's code of the abort, or "" */
	char abort_text[GB_ERROR_TEXT_MAX];
	char last_code[64];	/* last capacity-ish denial code */
	char quota_code[64];
	bool saw_capacity, saw_quota, saw_offer_no, saw_throttle, saw_locality;
	bool deadline_hit;
	struct gb_strv tried_regions;
	struct region_skip *skips;	/* regions skipped for the account */
	size_t n_skips;
	struct gb_strv accepted;	/* regions that took a RunInstances
					 * (answered anything but REGION/AUTH) */
	bool skips_everywhere;	/* no region accepted: aborted, not remembered */
	struct gb_strv trace;
	double run_prior;	/* mean dry level seen in this run, or -1 */
	double prior_sum;
	int prior_n;
};

/* Trace: one line to the result's trace, the events table and the log. */
void orch_trace(struct orch_run *r, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A RunInstances call being prepared, sent, and processed. */
struct orch_call {
	struct orch_job job;
	size_t pool;			/* index in facts.pools */
	int seq;
	int min, max;
	const char **nodes;		/* NEW array of BORROWED names, max long */
	int n_new;			/* nodes counted towards the need */
	char token[GB_ORCH_TOKEN_MAX + 1];
	int64_t attempt_id;
	double started_at;		/* the attempt's; 0 when recovered */
	struct gb_orch_launch launch;	/* what job.run points to */
	char group[256];		/* placed: Placement.GroupName */
	char board_key[ORCH_BOARD_KEY_MAX];	/* orch_board_key() */
	bool board_unnoted;		/* admitted, but not noted (no memory) */
	bool recovered;
	bool named;			/* gpuburst:node and Name at launch */
};

/*
 * A call for [pool] (MinCount [min], MaxCount [max], at least [k]) naming
 * the first [k] empty slots not [used] yet (marked used; [used] may be
 * NULL).  RET NEW (orch_call_free), or NULL when out of memory.
 */
struct orch_call *orch_call_new(struct orch_run *r, size_t pool, int min,
				int max, int k, bool *used);
void orch_call_free(struct orch_call *c);

/* Prepare [c] (pool, min, max, nodes set): token, attempt row, event. */
gb_err_t orch_call_begin(struct orch_run *r, struct orch_call *c,
			 gb_error_t *err);
/* Build the job parameters of [c] (also for a recovered attempt). */
gb_err_t orch_call_params(struct orch_run *r, struct orch_call *c,
			  gb_error_t *err);
/*
 * Send [calls] in parallel and process every answer: record instances and
 * attempts, assign nodes, memory, extras, tags.  RET GB_E_OK or a fatal
 * error (state, internal).  Per-call outcomes are in r's bookkeeping.
 */
gb_err_t orch_wave(struct orch_run *r, struct orch_call **calls, size_t n,
		   gb_error_t *err);
/*
 * The same in steps, for a work queue: send begun [calls] without waiting
 * (RET false when out of memory: nothing sent); wait for answered calls
 * (OUT [out] up to [max]; RET how many, 0 when none is outstanding);
 * process answered calls as orch_wave() does.
 */
bool orch_calls_send(struct orch_run *r, struct orch_call **calls, size_t n);
size_t orch_calls_answered(struct orch_run *r, struct orch_call **out,
			   size_t max);
gb_err_t orch_calls_process(struct orch_run *r, struct orch_call **calls,
			    size_t n, gb_error_t *err);

/*
 * Cluster placement (orch_place.c).  A multi-node job of a nodeset with
 * placement cluster launches into a group of its own in each AZ it
 * tries: "gpuburst-<cluster>-<request>-<az>", made before the first call
 * there, tagged like its instances.  RET BORROWED the group of [pool]'s
 * AZ, or NULL when EC2 would not make one (the AZ or the region is then
 * excluded, with a trace line); NULL with GB_E_NOMEM in [*rc] when out of
 * memory.  Reconcile deletes groups (gb_reconcile.h): nothing here does.
 */
const char *orch_place_group(struct orch_run *r, size_t pool, gb_err_t *rc,
			     gb_error_t *err);
/* Write the group's name for [r], [region], [az] into [buf] of [n] bytes. */
void orch_place_name(const struct orch_run *r, const char *az, char *buf,
		     size_t n);
/* Free the run's groups. */
void orch_place_clear(struct orch_run *r);

/*
 * One [kind] job per candidate region that [want] names (filtered by the
 * request's types), run in parallel and counted in r->other_calls.  OUT
 * *out NEW array of the *n_out answered jobs (orch_jobs_free).
 */
gb_err_t orch_region_jobs(struct orch_run *r, enum orch_job_kind kind,
			  bool (*want)(const struct orch_run *r, const char *region),
			  struct orch_job **out, size_t *n_out, gb_error_t *err);
void orch_jobs_free(struct orch_job *jobs, size_t n);

/*
 * The capacity ladder (orch_ladder.c).  orch_ladder_load: before the facts
 * are built, the reservations and Capacity Blocks of the candidate regions
 * that the ladder's rungs may use, from the state file's cache when
 * fetched within policy.reservation_ttl, else from
 * DescribeCapacityReservations (one call per region, in parallel, cached);
 * a region that does not answer has none (traced).  Sets r->ladder.
 * orch_ladder_wait: after, a Capacity Block pool that opens later is
 * backed off until it opens (the default strategy waits for it).
 * orch_ladder_took: [got] instances launched into [pool]'s reservation
 * count it down, in the run and in the cache.
 */
gb_err_t orch_ladder_load(struct orch_run *r, gb_error_t *err);
void orch_ladder_wait(struct orch_run *r);
void orch_ladder_took(struct orch_run *r, size_t pool, int got);
void orch_ladder_clear(struct orch_run *r);

/* What a processed call said, for the strategies. */
enum call_outcome {
	CALL_OK = 0,		/* got >= 1 */
	CALL_ICE,		/* capacity: the AZ has none (for this count) */
	CALL_ADDRESSES,		/* subnet full */
	CALL_UNSUPPORTED,	/* the AZ cannot launch the type */
	CALL_QUOTA,
	CALL_THROTTLE,		/* THROTTLE/TRANSIENT after the client's retries */
	CALL_ABORT,		/* CONFIG/AUTH: the request stops */
	CALL_REGION,		/* REGION: the account may not use the
				 * region: skip it (orch_region.c) */
	CALL_UNKNOWN,		/* outcome unknown (transport) */
	CALL__COUNT
};
enum call_outcome orch_call_outcome(const struct orch_call *c);

/* What an outcome rules out for the rest of the request. */
enum orch_scope {
	ORCH_SCOPE_NONE = 0,
	ORCH_SCOPE_SUBNET,
	ORCH_SCOPE_AZ,		/* the AZ for the pool's type (its capacity) */
	ORCH_SCOPE_QUOTA,	/* the region, for pools of the pool's quotas */
	ORCH_SCOPE_REGION,
};

/* One row of the outcome table (orch_outcome.c). */
struct orch_rule {
	enum orch_scope scope;	/* excluded after this outcome */
	const char *word;	/* the exclusion's why, the trace word */
	bool backoff;		/* wait, then ask again; scope applies past
				 * tuning.throttle_limit in a row */
	bool abort;		/* the request stops */
	bool trace;		/* leaving the region writes a trace line */
};

/* The rule of [oc] (never NULL). */
const struct orch_rule *orch_rule(enum call_outcome oc);
/*
 * Apply [c]'s rule to its pool: exclude the rule's scope (with [word], or
 * the rule's own when NULL); a back-off row counts the pool's throttled
 * calls and excludes only past the limit.  OK and ABORT exclude nothing;
 * REGION was excluded when it was noted (excluding again changes nothing).
 */
void orch_outcome_exclude(struct orch_run *r, const struct orch_call *c,
			  const char *word);
/*
 * What a processed call says of its pool, for every strategy but
 * probe_fill: the table's rule, and for a success the level it measured
 * ([aon]: all_or_nothing, whose dry pools are "short").
 */
void orch_judge_pool(struct orch_run *r, struct orch_call *c, bool aon);
/* [c]'s outcome into the run's account (result code, cause, abort). */
void orch_outcome_note(struct orch_run *r, const struct orch_call *c);
/* The [k]-th back-off, seconds (tuning.backoff_first * 2^k, capped). */
double orch_backoff(const struct orch_run *r, int k);
/* One more throttled call of [pool]: RET true past tuning.throttle_limit. */
bool orch_throttled_out(struct orch_run *r, size_t pool);
int orch_call_got(const struct orch_call *c);

/*
 * CreateTags gpuburst:node and Name on every filled node's instance that
 * lacks them (calls with MaxCount 1 tag at launch), all at once at the end
 * of the run: during it they would compete with launches for the
 * account's request rate.
 */
gb_err_t orch_tag_nodes(struct orch_run *r, gb_error_t *err);

/*
 * Before TerminateInstances: the records of [ids] become "terminating"
 * with [reason], in one transaction, so that a crash between the call and
 * the records' closing leaves "gpuburst ended it" (reconcile closes them
 * as terminated when the cloud lists them gone), not "lost".  [undo]:
 * EC2 refused the call, the instances run on: "running" again.
 */
void orch_mark_terminating(gb_state_t *st, const char *region,
			   const char *const *ids, size_t n, const char *reason,
			   bool undo);

/*
 * Eventual consistency: CreateTags and TerminateInstances of instances
 * launched in this run retry InvalidInstanceID.NotFound after
 * ORCH_VISIBLE_FIRST seconds, doubling, until ORCH_VISIBLE_BOUND seconds
 * of waits (the sleep seam) are spent.
 */
#define ORCH_VISIBLE_FIRST 0.25
#define ORCH_VISIBLE_BOUND 30.0

/* [j] failed with InvalidInstanceID.NotFound: an id EC2 does not know yet. */
bool orch_not_visible(const struct orch_job *j);
/*
 * The next wait (seconds) after [waited] seconds of waits, from *wait
 * (ORCH_VISIBLE_FIRST at first; doubled here), capped so that the waits
 * add up to ORCH_VISIBLE_BOUND; 0 when the bound is spent.
 */
double orch_visible_wait(double *wait, double waited);

/*
 * DescribeInstances of each of [ids] (one call per id, in parallel on
 * [pool]) until it shows a privateIpAddress: OUT ips[i] NEW (free()),
 * left NULL when none showed within the bound (ORCH_VISIBLE_*) or the
 * call failed for good; running[i] whether it was running then.  Not yet
 * listed (InvalidInstanceID.NotFound) and listed without an address are
 * "not yet": retried after the back-off (orch_sleep).  Adds the HTTP
 * requests to *calls, OUT *waited the seconds waited.  RET GB_E_OK or
 * GB_E_NOMEM.
 */
gb_err_t orch_describe_ips(gb_orch_t *o, struct orch_pool *pool,
			   const char *region, const char *const *ids, size_t n,
			   char **ips, bool *running, int *calls,
			   double *waited, gb_error_t *err);
/*
 * Filled nodes whose launch answer had no private address (EC2 gives one
 * in RunInstances; this is the defence for when it did not): their
 * address from DescribeInstances, into the slot and its record.
 */
gb_err_t orch_addresses(struct orch_run *r, gb_error_t *err);

/*
 * Terminate [ids] of [region] now, closing their records with [reason].
 * A batch EC2 refuses for an id it does not know yet is split, one call
 * per id, and the unknown ones are retried (ORCH_VISIBLE_*); those still
 * unknown then stay "terminating" for reconcile.
 */
gb_err_t orch_terminate_ids(struct orch_run *r, const char *region,
			    const char *const *ids, size_t n,
			    const char *reason, int *done, gb_error_t *err);

/*****************************************************************************
 *  Layers (calls only go down; `make lint` checks it)
 *
 *   orch_run.c        the driver: set-up, preflight, strategy, result
 *   orch_strategy.c   probe_fill, best_effort, all_or_nothing
 *   orch_default.c    the default strategy's phase machine
 *   orch_recover.c    crash recovery: re-send started attempts
 *   orch_group.c      locality groups: commit or roll back
 *   orch_plans.c      plan versions: made, proposed, validated, stored
 *   orch_call.c       one RunInstances call; terminate, tags
 *   orch_outcome.c    what a call's outcome means: the one rule table
 *   orch_region.c     regions the account may not use
 *   orch_visible.c    eventual consistency: ids and addresses not yet seen
 *   orch_ctx.c        the run's shared context: trace, invariants, exclusions
 *   orch_pool.c orch_token.c orch_term.c orch.c   threads, tokens, handle
 *****************************************************************************/

/* Roll back the tentative instances of [group] (-1: every group). */
gb_err_t orch_rollback(struct orch_run *r, int group, const char *why,
		       gb_error_t *err);
/*
 * Distinct locality groups in plan order into [g] (one group 0 when not
 * grouped); [g] holds the plan's steps + 1.  RET how many.
 */
size_t orch_plan_groups(const struct orch_run *r, int *g);
/* Pool [pool] belongs to locality group [group] (always when not grouped). */
bool orch_in_group(const struct orch_run *r, size_t pool, int group);
/* End of a locality group: commit it whole or roll it back. */
gb_err_t orch_group_close(struct orch_run *r, int group, gb_error_t *err);

/*
 * Make, validate and store a plan for what is still missing (r->plan NEW,
 * or NULL when none can be made).
 */
gb_err_t orch_plan_make(struct orch_run *r, const char *why, gb_error_t *err);
/* Re-plan (new version, heuristic or proposed) from the facts as now. */
gb_err_t orch_replan(struct orch_run *r, const char *why, gb_error_t *err);
/* Every pool's estimate from memory (the default: levels and quota walls). */
void orch_plan_estimate(struct orch_run *r);

/*
 * Exclude pools: one subnet, the AZ's pools of [pool]'s type and capacity
 * kind (its capacity: ICE, unsupported; a reservation's pools), the
 * region's pools of [pool]'s quotas (a quota refusal: a spot quota leaves
 * on-demand alone), the whole AZ whatever the type (placement), or a whole
 * region.
 */
void orch_exclude_subnet(struct orch_run *r, size_t pool, const char *why);
void orch_exclude_capacity(struct orch_run *r, size_t pool, const char *why);
void orch_exclude_quota(struct orch_run *r, size_t pool, const char *why);
void orch_exclude_az(struct orch_run *r, size_t pool, const char *why);
void orch_exclude_region(struct orch_run *r, const char *region,
			 const char *why);
/* The pool a plan step names (region, AZ, subnet, type, capacity, target), or -1. */
long orch_pool_index(const struct orch_run *r, const struct gb_plan_step *s);
/*
 * Pools [a] and [b] are in the same AZ (locality, placement groups).
 * orch_same_capacity: ... of the same type and capacity kind, and the
 * same reservation or block (memory, ICE, levels: gb_plan_same_capacity).
 * orch_same_quota: in the same region, counting against the same quotas
 * (spot pools, Capacity Block pools, the others: on-demand's).
 */
bool orch_same_az(const struct orch_run *r, size_t a, size_t b);
bool orch_same_capacity(const struct orch_run *r, size_t a, size_t b);
bool orch_same_quota(const struct orch_run *r, size_t a, size_t b);
/* Instances one call to [pool] may ask: batch_max, 1 with {node} user data. */
int orch_pool_cap(const struct orch_run *r, size_t pool);

/*
 * Regions the account may not use (orch_region.c).  refused: [j] (a
 * RunInstances or the offerings preflight of [region]) answered a REGION
 * error: the region is skipped for the run (a trace line "skip").
 * accepted: a RunInstances in [region] got an answer that was not a
 * REGION or AUTH error.  remembered: at the start, skip the candidate
 * regions with an "account" wall in quota memory.  verdict: after the
 * strategy, when regions were refused and none accepted, abort with the
 * first refusal (GB_E_AUTH).  learn: remember the regions refused in this
 * run (not after such an abort).  code: the first skip's code, or NULL.
 * reason: append the skips to a result reason; [alone]: nothing else
 * stopped the request, they lead it.
 */
void orch_region_refused(struct orch_run *r, const char *region,
			 const struct orch_job *j);
void orch_region_accepted(struct orch_run *r, const char *region);
gb_err_t orch_region_remembered(struct orch_run *r, gb_error_t *err);
void orch_region_verdict(struct orch_run *r);
void orch_region_learn(struct orch_run *r);
const char *orch_region_code(const struct orch_run *r);
void orch_region_reason(const struct orch_run *r, bool alone, struct gb_buf *b);

/* Record this run's visit of each AZ in capacity memory. */
void orch_learn(struct orch_run *r);

/* Nodes not yet filled (not committed, tentative, reused or in doubt). */
int orch_unfilled(const struct orch_run *r);
/* Invariant checks; GB_E_INTERNAL (logged) on violation. */
gb_err_t orch_check(struct orch_run *r, const char *where, gb_error_t *err);
/* RET whether the run must stop launching (abort, deadline). */
bool orch_stopped(struct orch_run *r);
/*
 * The request stops with [rc] (the first abort wins): [code] (an EC2 code,
 * or NULL) and [text] become the result's reason.
 */
void orch_abort(struct orch_run *r, gb_err_t rc, const char *code,
		const char *text);
/*
 * The one format of a code and its text: "(Code:<code>) <text>", or the
 * text alone when [code] is NULL or "" (appended to [b]).
 */
void orch_code_line(struct gb_buf *b, const char *code, const char *text);
/* The abort's line (orch_code_line) into [buf]; RET buf. */
const char *orch_abort_line(const struct orch_run *r, char *buf, size_t n);
/* An invariant broke at [where]: the run aborts (GB_E_INTERNAL, logged). */
gb_err_t orch_broken(struct orch_run *r, const char *where, const char *what,
		     gb_error_t *err);
/* Free a slot's instance and make it empty (its code and why are kept). */
void orch_slot_clear(struct slot *s);
/* Every tentative slot becomes committed. */
void orch_commit_tentative(struct orch_run *r);

/* Strategies (orch_strategy.c; the default: orch_default.c). */
gb_err_t orch_probe_fill(struct orch_run *r, gb_error_t *err);
gb_err_t orch_sequential(struct orch_run *r, bool all_or_nothing,
			 gb_error_t *err);
gb_err_t orch_default(struct orch_run *r, gb_error_t *err);

/* Locality group of pool [i] (index into the distinct groups), or 0. */
int orch_group_of(const struct orch_run *r, size_t pool);

/* Crash recovery: re-send started/unknown attempts (orch_recover.c). */
gb_err_t orch_recover(struct orch_run *r, gb_error_t *err);

#endif /* GB_LIBORCH_ORCH_INT_H */
