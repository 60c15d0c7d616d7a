/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_orch.h - the cross-region orchestrator: plan, launch, record, terminate
 *
 * gb_orch_resume() turns one resume request (one Slurm job, or a jobless
 * power-up) into instances: candidates and preflight, a validated plan
 * (stored as a version in the plans table), then execution by the chosen
 * strategy against the EC2 API of each region, with every attempt, instance,
 * plan version, decision (events) and capacity outcome recorded in the state
 * file as it happens.  doc/orchestrator.md describes the model, the
 * strategies, tokens and crash recovery.
 *
 * Division of work with the caller (the worker of gpuburst-resume):
 *  - the caller owns the request's life cycle: it claims the request, calls
 *    gb_orch_resume(), then records the outcome with gb_state_request_finish()
 *    (result, launched, reason from struct gb_orch_result) and updates Slurm
 *    (NodeAddr/NodeHostname of filled nodes, DOWN with the reason for the
 *    unfilled ones).  The orchestrator never changes the requests table;
 *  - the orchestrator records everything else: attempts (written before each
 *    RunInstances call and completed after it), instances (also extras and
 *    rolled-back ones, with why they were terminated), plan versions, events
 *    (the decision trace), capacity memory and the offerings cache.
 *
 * Idempotency: calling gb_orch_resume() again for the same request id (a
 * crashed or killed worker) first re-sends every attempt left "started" or
 * "unknown" with the SAME ClientToken and parameters (EC2 returns the
 * original reservation instead of launching again) and records what comes
 * back, counts the nodes that already have a live instance as filled, and
 * only then plans the nodes still missing.
 *
 * Thread-safety: a gb_orch_t is immutable after creation (but for its
 * board and its worker threads, which lock) and may serve several threads
 * at once, each with its own gb_state_t.  One call runs up to
 * opts.max_parallel cloud calls at once on the orchestrator's worker
 * threads (2 x max_parallel of them, made at the first call and shared by
 * every call, each with its own EC2 client per region, kept alive across
 * calls); the workers never touch the
 * state file: every record is written by the calling thread, with the
 * caller's handle, before and after each wave of calls.  The seams (wall,
 * mono, sleep) must be thread-safe: the EC2 clients' back-off uses them.
 */
#ifndef GB_LIBORCH_GB_ORCH_H
#define GB_LIBORCH_GB_ORCH_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_conf.h"
#include "gb_creds.h"
#include "gb_ec2.h"
#include "gb_err.h"
#include "gb_plan.h"
#include "gb_state.h"
#include "gb_str.h"

#define GB_ORCH_DEFAULT_PARALLEL 16
#define GB_ORCH_MAX_PARALLEL 64
#define GB_ORCH_REASON_MAX 200		/* result reason, chars incl. NUL */
#define GB_ORCH_CODE_MAX 64		/* a result's or node's code, incl. NUL */

/*
 * The orchestrator's own codes (beside EC2's, which results carry as EC2
 * spells them): why nodes stayed unfilled when no EC2 answer says it.
 */
#define GB_ORCH_CODE_MAP(XX)						\
	XX(NOT_OFFERED, "NotOffered")	/* no region tried offers the type */ \
	XX(LOCALITY, "Locality")	/* no group could hold the whole job */ \
	XX(DEADLINE, "Deadline")	/* policy.request_deadline passed */ \
	XX(ALL_OR_NOTHING, "AllOrNothing")	/* rolled back: not whole */ \
	XX(UNKNOWN, "Unknown")		/* a launch's outcome is unknown */ \
	/* End of GB_ORCH_CODE_MAP */

enum gb_orch_code {
#define XX(name, text) GB_ORCH_CODE_##name,
	GB_ORCH_CODE_MAP(XX)
#undef XX
	GB_ORCH_CODE__COUNT
};

/* RET the code's name ("NotOffered", ...); "" for an unknown value. */
const char *gb_orch_code_name(enum gb_orch_code c);
#define GB_ORCH_TOKEN_MAX 64		/* EC2 ClientToken, ASCII */
#define GB_ORCH_MAX_ATTEMPTS_PER_SUBNET 3	/* probe_fill, the ancestor's */

typedef struct gb_orch gb_orch_t;

/*
 * Knobs of the default strategy (the benchmark tunes them; NULL in the
 * options means the defaults documented in doc/orchestrator.md).
 * Zero fields take their default.
 */
struct gb_orch_tuning {
	int max_rounds;		/* batches sent in a row without a node
				 * filled; 0: 16 */
	int max_replans;	/* plan versions after the first; 0: 4 */
	int hedge;		/* extra instances asked per pool with a
				 * memory estimate; 0: default 1, -1: none */
	int max_attempts_per_subnet;	/* probe_fill; 0: 3 */
	int prior;		/* default strategy: size calls to pools without
				 * memory from the pools seen dry in this run;
				 * 0: on, -1: off */
	/*
	 * Throttling that outlasted the EC2 client's own retries (gb_retry.h):
	 * the pool backs off backoff_first * 2^k seconds, at most backoff_max,
	 * after its k+1-th throttled call in a row, and is left for the run
	 * after throttle_limit + 1 in a row (probe_fill: the region ends).
	 */
	int throttle_limit;	/* 0: 2 */
	double backoff_first;	/* seconds; 0: 2 */
	double backoff_max;	/* seconds; 0: 30 */
	/*
	 * Default strategy: requests run at once in one orchestrator share
	 * their answers (dry pools, calls in flight: doc/orchestrator.md,
	 * "The board"); 0: on, -1: off (bench/fill compares the two).
	 */
	int board;
};

struct gb_orch_opts {
	const struct gb_conf *conf;	/* BORROWED, outlives the orchestrator */
	const char *state_path;		/* the state file of the caller's
					 * handles (informative: every write
					 * goes through the caller's handle);
					 * NULL: <state_dir>/state.db */
	gb_creds_t *creds;		/* BORROWED; NULL: built from conf->cloud */
	int max_parallel;		/* cloud calls in flight per request;
					 * 0: GB_ORCH_DEFAULT_PARALLEL */
	int state_busy_ms;		/* busy timeout of the handles opened
					 * here; 0: 10000 */
	const struct gb_orch_tuning *tuning;	/* BORROWED (copied), or NULL */
	/*
	 * The planner that proposes first.  NULL: the LLM planner (gb_llm.h)
	 * when conf->planner.kind is llm (if it cannot be set up, a warning
	 * is logged and the heuristic plans alone), else the heuristic alone.
	 */
	gb_plan_propose_fn propose;
	void *propose_ctx;
	/* Seams for tests and the benchmark; NULL: the real thing. */
	double (*wall)(void *ctx);	/* epoch seconds: records, memory */
	double (*mono)(void *ctx);	/* seconds: durations, deadlines */
	void (*sleep)(double seconds, void *ctx);	/* back-off waits */
	void *seam_ctx;
};

/*
 * Create an orchestrator.  No cloud call is made.
 * OUT *out NEW (gb_orch_destroy).
 * RET GB_E_OK; GB_E_INVALID (no config); GB_E_CONFIG (credentials cannot
 * be set up from conf->cloud); GB_E_NOMEM.
 */
gb_err_t gb_orch_create(const struct gb_orch_opts *opts, gb_orch_t **out,
			gb_error_t *err);

/* RET BORROWED the configuration [o] was made with. */
const struct gb_conf *gb_orch_conf(const gb_orch_t *o);
void gb_orch_destroy(gb_orch_t *o);

/*****************************************************************************
 *  Resume
 *****************************************************************************/

struct gb_orch_resume_opts {
	const char *home_region;	/* NULL: req->home_region, else the
					 * nodeset's (a job's intent may
					 * override it) */
	int strategy;			/* enum gb_strategy; -1: req->strategy
					 * (a name), else the nodeset's */
	int locality;			/* enum gb_locality; -1: the nodeset's */
	int mode;			/* enum gb_mode; -1: the nodeset's */
	const char *const *nodes;	/* expanded nodes; NULL: req->nodes */
	size_t n_nodes;
	double deadline;		/* seconds for this call; 0:
					 * policy.request_deadline */
	/*
	 * Text users wrote about the request (job name, comment) for a
	 * proposing planner, which quotes it as untrusted data; NULL:
	 * req->input (what Slurm gave for the job).
	 */
	const char *untrusted;
	/*
	 * The types the request may launch, a subset of the nodeset's in its
	 * order (a job's constraint naming some of them); NULL: all of them.
	 */
	const char *const *types;
	size_t n_types;
	/*
	 * Whose job it is, for the cost tags (policy.cost_tags); NULL: not
	 * known.  The worker passes what the request recorded, so a re-sent
	 * attempt carries the tags its ClientToken was first sent with.
	 */
	const char *user, *account, *partition;
};
#define GB_ORCH_RESUME_OPTS_INIT { NULL, -1, -1, -1, NULL, 0, 0, NULL, NULL, 0, NULL, NULL, NULL }

/* One requested node and what became of it. */
struct gb_orch_node {
	char *node;			/* NEW, the Slurm node name */
	char *instance_id;		/* NEW; NULL: unfilled */
	char *region, *az, *subnet;	/* NEW; NULL when unfilled */
	char *type;			/* NEW: the instance type it got (one of
					 * the nodeset's); NULL when unfilled */
	char *private_ip, *public_ip;	/* NEW or NULL */
	bool reused;			/* its live instance existed before this
					 * call (re-run, or the node was up) */
	char *code;			/* unfilled: the EC2 <Code> that denied it
					 * ("InsufficientInstanceCapacity") or a
					 * gpuburst code ("NotOffered", "Quota",
					 * "Locality", "Deadline"); else NULL */
	char *why;			/* unfilled: short text; else NULL */
};

struct gb_orch_result {
	char request_id[GB_REQUEST_ID_LEN + 1];
	enum gb_request_result result;	/* SUCCESS: all nodes, PARTIAL: some,
					 * FAILED: none */
	gb_err_t cause;			/* why it stopped short: GB_E_OK when
					 * SUCCESS, GB_E_CAPACITY, GB_E_QUOTA,
					 * GB_E_AUTH, GB_E_CLOUDCONFIG,
					 * GB_E_TIMEOUT (deadline), GB_E_PLAN,
					 * GB_E_TRANSIENT, GB_E_THROTTLE */
	enum gb_strategy strategy;	/* the one that ran */
	int requested;			/* nodes */
	int launched;			/* nodes with a live instance */
	int gap;			/* requested - launched */
	int api_calls;			/* RunInstances calls made */
	int other_calls;		/* DescribeInstanceTypeOfferings,
					 * CreateTags, TerminateInstances, ... */
	int extras;			/* instances beyond need (launched and
					 * terminated at once) */
	int rolled_back;		/* instances terminated because their
					 * job could not be completed in one
					 * locality group (or all_or_nothing) */
	int terminated;			/* extras + rolled_back whose
					 * TerminateInstances succeeded */
	int plan_versions;		/* plans stored by this call */
	double time_to_capacity;	/* seconds until the last filled node
					 * got its instance (elapsed when none
					 * did) */
	double elapsed;			/* seconds in gb_orch_resume() */
	struct gb_orch_node *nodes;	/* NEW, one per node, request order */
	size_t n_nodes;
	/*
	 * Why it stopped short, in two parts: [code] (EC2's, or a
	 * gb_orch_code_name(); "" on SUCCESS) and [text], e.g.
	 * "InsufficientInstanceCapacity" and "no g5.xlarge capacity in
	 * ap-south-1, ap-northeast-2".  Programs read these two; nothing
	 * parses [reason].
	 */
	char code[GB_ORCH_CODE_MAX];
	char text[GB_ORCH_REASON_MAX];
	/*
	 * The one line for the request row and logs, < GB_ORCH_REASON_MAX,
	 * formatted from the two once: "[launched 3/8; ](Code:<code>) <text>"
	 * or "launched 8/8".
	 */
	char reason[GB_ORCH_REASON_MAX];
	struct gb_strv trace;		/* NEW: the decision trace, one line
					 * per decision (also in events) */
};

/* Free what a result holds and zero it; NULL is accepted. */
void gb_orch_result_clear(struct gb_orch_result *r);

/*
 * Capacity that comes back (doc/orchestrator.md, "Re-probes").  A resume
 * that ended short for capacity (out->cause GB_E_CAPACITY: pools answered
 * InsufficientInstanceCapacity, or a locality group could not hold the
 * job) may run again after a wait, its unfilled nodes kept POWERING_UP:
 * the pools memory now calls empty are asked once more, a probe of one
 * each, and the board shares each answer with the other requests of the
 * burst.  Waits are GB_ORCH_REPROBE_FIRST seconds, doubling, at most
 * GB_ORCH_REPROBE_MAX (the worker waits that long for a backed-off row).
 * [done]: the request's re-probes so far; [left]: seconds left of its
 * window (gb_policy_reprobe_window() after its creation).
 * RET the seconds to wait, or -1: finish now ([res] complete, short for
 * another cause, or the wait would end past the window).
 */
#define GB_ORCH_REPROBE_FIRST 5.0
#define GB_ORCH_REPROBE_MAX 40.0
double gb_orch_reprobe_delay(const struct gb_orch_result *res, int done, double left);

/*
 * Plan and execute resume request [req] (its id must be a row of the
 * state file: attempts reference it; state normally RUNNING).  [st] is the
 * caller's handle on opts.state_path, used by this thread only and not
 * inside a transaction.  [ro] may be NULL (all defaults).
 * OUT [out] (zero it first; gb_orch_result_clear) is filled whatever
 * happens, as far as it got.
 * RET GB_E_OK when the request reached a result (SUCCESS, PARTIAL or
 * FAILED, including a FAILED request aborted by a CONFIG/AUTH cloud error
 * or a plan that cannot be made: see out->cause and out->reason);
 * otherwise the result is not trustworthy and the caller should requeue:
 * GB_E_INVALID (bad request: unknown nodeset, no nodes, wrong kind),
 * GB_E_STATE (the state file failed), GB_E_INTERNAL (an invariant broke:
 * a bug, logged), GB_E_NOMEM.
 */
gb_err_t gb_orch_resume(gb_orch_t *o, gb_state_t *st,
			const struct gb_request *req,
			const struct gb_orch_resume_opts *ro,
			struct gb_orch_result *out, gb_error_t *err);

/* What became of a plug-in planner's (the LLM planner's) proposal. */
struct gb_orch_proposal {
	char planner[32];	/* "llm:openai", ...; "" when none was asked
				 * (heuristic planner, probe_fill strategy) */
	char status[16];	/* "used"; "rejected" (the validator refused
				 * the plan); "failed" (no plan: no answer in
				 * time, HTTP error, malformed or truncated
				 * answer, max_calls reached); "skipped" (not
				 * asked: a capacity ladder other than
				 * on-demand alone) */
	char reason[GB_ERROR_TEXT_MAX];	/* why, unless used */
};

/*
 * The plan gb_orch_resume() would start with now, without launching
 * (`gpuburstctl plan`): candidates, preflight (may call
 * DescribeInstanceTypeOfferings and fill the offerings cache), capacity
 * memory, the plug-in planner's proposal if one is configured (checked by
 * the validator), else or instead the heuristic plan.  Nothing else is
 * written.  [st] may be NULL (no state file: no cache, no memory).  [req]
 * needs nodeset and node_count (or nodes); its id may be empty.
 * OUT *plan NEW (gb_plan_free); *summary NEW capacity summary (free()),
 * [summary] may be NULL; *proposal what became of the proposal,
 * [proposal] may be NULL.
 */
gb_err_t gb_orch_plan_dry_run(gb_orch_t *o, gb_state_t *st,
			      const struct gb_request *req,
			      const struct gb_orch_resume_opts *ro,
			      struct gb_plan **plan, char **summary,
			      struct gb_orch_proposal *proposal,
			      gb_error_t *err);

/*****************************************************************************
 *  Terminate and inspect
 *****************************************************************************/

enum gb_orch_term_flags {
	GB_ORCH_TERM_FAILURE = 1 << 0,	/* the nodes never registered: also
					 * record a resume failure in the
					 * capacity memory of their pools */
};

/*
 * Terminate the live instances of [nodes] (per the state file, whatever
 * request launched them): TerminateInstances per region in batches, then
 * each record gets state terminated, terminated_at and [reason].  Nodes
 * without a live instance are a no-op.  [request_id] (may be NULL) tags
 * the events.  OUT *n_terminated (may be NULL) instances terminated.
 * An instance EC2 no longer knows (InvalidInstanceID.NotFound) is recorded
 * as lost.  RET GB_E_OK, or the first error (the other regions are still
 * done).  Used by suspend, resume-fail, manual terminate and reconcile.
 */
gb_err_t gb_orch_terminate(gb_orch_t *o, gb_state_t *st,
			   const char *request_id, const char *const *nodes,
			   size_t n, const char *reason, unsigned flags,
			   int *n_terminated, gb_error_t *err);

/*
 * Terminate instances by id in [region] (reconcile's orphans, which the
 * state file may not know).  Records that exist are closed as above.
 */
gb_err_t gb_orch_terminate_instances(gb_orch_t *o, gb_state_t *st,
				     const char *region,
				     const char *const *ids, size_t n,
				     const char *reason, int *n_terminated,
				     gb_error_t *err);

/*
 * DescribeInstances in [region] (NULL: every configured region, one after
 * the other) for reconcile; with [cluster_only] filtered by the tag
 * gpuburst:cluster=<cluster_name>.  [cb] gets each instance (BORROWED,
 * valid during the call) with its region; a non-zero return stops.
 */
/*
 * The placement groups of [region] tagged gpuburst:cluster=<cluster_name>
 * (DescribePlacementGroups).  OUT *out NEW, NULL on failure.
 */
struct gb_ec2_placement_group_list;
gb_err_t gb_orch_cloud_groups(gb_orch_t *o, const char *region,
			      struct gb_ec2_placement_group_list **out,
			      gb_error_t *err);

/* DeletePlacementGroup [name] in [region]; EC2's answer in [ae] (may be NULL). */
gb_err_t gb_orch_delete_group(gb_orch_t *o, const char *region, const char *name,
			      struct gb_ec2_error *ae, gb_error_t *err);

/*
 * DescribeSpotPriceHistory in [region] for the [n] instance types of
 * [types], product GB_EC2_PRODUCT_LINUX, StartTime [now] (EC2 then lists
 * the price in effect in each pool, and any change since).  OUT *out NEW,
 * NULL on failure; EC2's answer in [ae] (may be NULL).
 */
struct gb_ec2_spot_price_list;
gb_err_t gb_orch_spot_prices(gb_orch_t *o, const char *region, const char *const *types,
			     size_t n, double now, struct gb_ec2_spot_price_list **out,
			     struct gb_ec2_error *ae, gb_error_t *err);

gb_err_t gb_orch_cloud_instances(gb_orch_t *o, const char *region,
				 bool cluster_only,
				 int (*cb)(const struct gb_ec2_instance *inst,
					   const char *region, void *arg),
				 void *arg, gb_error_t *err);

/*****************************************************************************
 *  Pieces exposed for tests and tools
 *****************************************************************************/

/*
 * The ClientToken of an attempt: "gb-" + request id + "-" + seq + "-" +
 * the first 16 hex digits of SHA-256("region|az|subnet|seq|min|max").
 * Deterministic, distinct per attempt, at most 64 ASCII characters.
 * [buf] has at least GB_ORCH_TOKEN_MAX + 1 bytes.
 * RET GB_E_OK or GB_E_INVALID (the result would not fit).
 */
gb_err_t gb_orch_client_token(const char *request_id, const char *region,
			      const char *az, const char *subnet, int seq,
			      int min_count, int max_count, char *buf,
			      size_t n, gb_error_t *err);

/*
 * The RunInstances parameters of one launch, as the orchestrator sends
 * them (gpuburstctl doctor dry-runs the same): the region's AMI, security
 * groups (the first 16), key pair, instance profile and rendered user
 * data, instance type [type], the capacity [cap] draws on (NULL: spot
 * when [ns], which may be NULL, has market spot, else on-demand):
 * spot with its price cap; a targeted reservation
 * (CapacityReservationTarget.CapacityReservationId), a resource group
 * (...CapacityReservationResourceGroupArn), or open reservations only
 * (CapacityReservationPreference capacity-reservations-only: never
 * on-demand behind the rung's back); a Capacity Block (MarketType
 * capacity-block and its id), MinCount [min], MaxCount [max], [subnet],
 * ClientToken [token] (NULL: the client makes one), and the tags
 * gpuburst:cluster, gpuburst:request and gpuburst:capacity (the kind's
 * name).  A nodeset
 * with efa gets one EFA interface per network card of [type] (up to its
 * EFA maximum; card 0 at device index 0, the others at 1; a type with
 * more cards than EFA interfaces, p6-b300, has a plain interface on its
 * ENA-only card 0 and the EFA ones on the next cards), each with the
 * subnet and the security groups, which then leave the top level, as EC2
 * requires.  [nodes] holds [max] names in launch-index order.
 * [munge_key] is the sealed key for {munge_key} (gb_orch_munge_seal();
 * NULL when the region's user data does not name it).  l->run points into
 * [l], the configuration and the arguments (BORROWED: they must outlive it).
 * RET GB_E_OK; GB_E_INVALID (region not configured, user data: {node}
 * with several nodes, {munge_key} without [munge_key], or over 16 KiB,
 * efa on a type the catalog gives no EFA); GB_E_NOMEM.  gb_orch_launch_clear()
 * after use, also after a failure.
 */
/* EC2's most network cards on one instance (p5.48xlarge and its kin: 32). */
#define GB_ORCH_NET_IFS_MAX 64

/* What a launch draws on: a rung of the ladder (a gb_pool's). */
struct gb_orch_capacity {
	enum gb_capacity_kind kind;
	const char *target;	/* reservation id or resource group ARN; NULL */
	const char *max_price;	/* spot: USD per hour; NULL: none */
};

struct gb_orch_launch {
	struct gb_ec2_run_params run;
	/* private: what run points to */
	const char *sg_[GB_CONF_SECURITY_GROUPS_MAX];
	struct gb_ec2_net_if nif_[GB_ORCH_NET_IFS_MAX];
	struct gb_ec2_kv kv_[10];
	char job_[24];
	struct gb_ec2_tag_spec spec_;
	char *user_data_;
};

gb_err_t gb_orch_launch_params(const struct gb_conf *conf,
			       const struct gb_conf_nodeset *ns, const char *type,
			       const struct gb_orch_capacity *cap,
			       const char *region, const char *subnet,
			       const char *request_id, const char *const *nodes,
			       int min, int max, const char *token,
			       const char *munge_key, struct gb_orch_launch *l,
			       gb_error_t *err);
void gb_orch_launch_clear(struct gb_orch_launch *l);

/*
 * Name the one instance of [l] (MaxCount 1) as Slurm node [node] at
 * launch: the tags gpuburst:node and Name, which CreateTags sets
 * otherwise once the record names the instance.
 */
void gb_orch_launch_name(struct gb_orch_launch *l, const char *node);

/*
 * Add the cost tags of policy.cost_tags to the instance tags of [l]
 * (after gb_orch_launch_params): job id [job_id] (0: none), [user],
 * [account], [partition] (NULL: that tag is left out).  A value that is
 * not a valid AWS tag value is left out too: a tag is never worth a
 * failed launch.
 */
void gb_orch_launch_cost_tags(const struct gb_conf *conf, struct gb_orch_launch *l,
			      int64_t job_id, const char *user, const char *account,
			      const char *partition);

/* What a user_data template's placeholders stand for in one call. */
struct gb_orch_user_vars {
	const char *cluster;		/* {cluster} */
	const char *region;		/* {region} */
	const char *request_id;		/* {request} */
	const char *const *nodes;	/* {nodes}: the call's nodes, in
					 * launch-index order; {node}: the one */
	size_t n_nodes;
	const char *munge_key;		/* {munge_key}: the sealed key
					 * (gb_orch_munge_seal()), or NULL */
};

/*
 * Render a region's user_data template for one call: {cluster},
 * {region}, {request}, {nodes} (space-separated), {node} (only when the
 * call has one node) and {munge_key} (only when [v]->munge_key is set).
 * OUT *out NEW (free()), *len its length.  RET GB_E_OK; GB_E_INVALID when
 * {node} is used with several nodes, {munge_key} without a sealed key, or
 * the result exceeds 16 KiB.
 */
gb_err_t gb_orch_user_data(const char *tmpl, const struct gb_orch_user_vars *v,
			   char **out, size_t *len, gb_error_t *err);

/*
 * Seal the munge key of cloud.munge_key (file, checked again as the
 * configuration was: a regular file of 32 to 1024 bytes that neither
 * group nor others may read or write) to its seal_to key, for
 * {munge_key} in the launches of request [request_id] (the seal's
 * context).  The seal is deterministic (gb_seal.h): every call of the
 * request, and a launch a later run re-sends after a crash, carry the same
 * text as long as the key file and seal_to are unchanged; another request
 * gets another text.  The key's bytes are wiped after use.
 * OUT *out NEW (free()), "gbseal1:...".  RET GB_E_OK; GB_E_CONFIG when
 * cloud.munge_key is not set or the key file is not fit; what gb_seal()
 * returns.
 */
gb_err_t gb_orch_munge_seal(const struct gb_conf *conf, const char *request_id,
			    char **out, gb_error_t *err);

#endif /* GB_LIBORCH_GB_ORCH_H */
