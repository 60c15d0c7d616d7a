/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_plan.h - candidates, preflight, capacity memory, planners, THE validator
 *
 * A request asks for N nodes of a nodeset's instance types (one or more,
 * in preference order, equivalent GPUs) on behalf of a home region.
 * libplan answers "where": the candidate regions (the home region's
 * fallback group, home first when launchable, the rest nearest first by
 * great-circle distance), the pools in them ((region, type, AZ, subnet)
 * that offer the type), what capacity memory says about each pool, and a
 * plan: an ordered list of pools with a batch size and a one-line reason
 * each.  Every plan, from any planner (the heuristic one here, the LLM one
 * later), passes gb_plan_validate() before anything is launched.
 *
 * Nothing here launches instances or talks to the cloud: that is liborch,
 * which sends the preflight (DescribeInstanceTypeOfferings) itself and
 * hands the answer to gb_plan_offerings_apply() (cached in the state file
 * with a TTL).
 *
 * Ownership: a struct gb_plan and everything in it is NEW (gb_plan_free).
 * Facts (struct gb_plan_facts) borrow their strings from the config.
 * Thread-safety: no global mutable state; distinct objects may be used
 * from distinct threads.
 */
#ifndef GB_LIBPLAN_GB_PLAN_H
#define GB_LIBPLAN_GB_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_conf.h"
#include "gb_err.h"

struct gb_state;
struct gb_ec2;
struct gb_creds;
struct gb_http_opts;

/*
 * The credential chain configured in gpuburst.yaml (cloud: explicit keys,
 * profile and files, IMDS), its STS client with the HTTP options of
 * gb_plan_http_opts().  OUT *out NEW (gb_creds_destroy).
 */
gb_err_t gb_plan_creds_create(const struct gb_conf *conf, struct gb_creds **out,
			      gb_error_t *err);

/*
 * Fill what every HTTP client of gpuburst takes from [conf] (EC2, STS,
 * the LLM planner, doctor): cloud.ca_bundle, cloud.proxy and cloud.no_proxy
 * (joined, conf->cloud.no_proxy_hosts).  The other fields of [ho] stay as
 * they are.  OUT the strings BORROWED from [conf]: copy them to outlive it
 * (gb_http_create() and gb_creds_create() do).
 */
void gb_plan_http_opts(const struct gb_conf *conf, struct gb_http_opts *ho);

#define GB_PLAN_SUMMARY_MAX 1000	/* capacity summary for the LLM, chars */
#define GB_PLAN_REASON_MAX 200		/* one-line reasons */

/*****************************************************************************
 *  The plan model (shared by every planner)
 *****************************************************************************/

struct gb_plan_step {
	char *region;		/* "ap-south-1" */
	char *az;		/* "ap-south-1a" */
	char *subnet;		/* "subnet-..." of that AZ in the config */
	char *type;		/* instance type launched here, one of the
				 * request's; JSON "type", absent in plans
				 * stored before it: the plan's instance_type */
	enum gb_capacity_kind capacity;	/* the ladder's rung launched here;
				 * JSON "capacity", absent: on-demand */
	char *target;		/* the reservation id ("cr-...") or resource
				 * group ARN launched into; NULL: none
				 * (on-demand, spot, open reservations) */
	int batch;		/* max instances per RunInstances call here,
				 * 1 <= batch <= policy.batch_max */
	int expect;		/* instances the planner expects from this
				 * pool; 0: unknown (informative only) */
	char *reason;		/* one line, < GB_PLAN_REASON_MAX */
};

struct gb_plan {
	char *instance_type;	/* the request's first (preferred) type */
	int total;		/* instances this plan aims to obtain, <= target */
	struct gb_plan_step *steps;	/* in order of preference */
	size_t n_steps;
	char *planner;		/* "heuristic", "llm:openai", ... */
	char *rationale;	/* free text, or NULL */
};

/* OUT *out NEW empty plan (gb_plan_free).  RET GB_E_OK or GB_E_NOMEM. */
gb_err_t gb_plan_new(const char *instance_type, const char *planner,
		     int total, struct gb_plan **out, gb_error_t *err);
void gb_plan_free(struct gb_plan *p);

/*
 * Append a step (strings copied); [type] NULL or "": the plan's
 * instance_type.  RET GB_E_OK or GB_E_NOMEM.
 */
gb_err_t gb_plan_add_step(struct gb_plan *p, const char *region,
			  const char *az, const char *subnet, const char *type,
			  int batch, int expect, const char *reason,
			  gb_error_t *err);

/*
 * Set the capacity kind and target (copied; NULL: none) of step [s]
 * (gb_plan_add_step gives on-demand and no target).  RET GB_E_OK or
 * GB_E_NOMEM.
 */
gb_err_t gb_plan_step_capacity(struct gb_plan_step *s,
			       enum gb_capacity_kind capacity,
			       const char *target, gb_error_t *err);

/* Replace the rationale (copied; NULL clears). */
gb_err_t gb_plan_set_rationale(struct gb_plan *p, const char *text,
			       gb_error_t *err);

/*
 * JSON, as stored in plans.body:
 *   {"instance_type":"g5.xlarge","total":8,"planner":"heuristic",
 *    "rationale":"...","steps":[{"region":..,"az":..,"subnet":..,
 *    "type":"g5.xlarge","capacity":"reservation","target":"cr-...",
 *    "batch":4,"expect":3,"reason":".."}, ...]}
 * A step without "type" (stored before it existed) gets the plan's
 * instance_type; without "capacity", on-demand; "target" is present only
 * when the step has one.
 * to_json: OUT *out NEW compact text (free()).
 * from_json: OUT *out NEW plan; GB_E_PARSE names the member that is
 * missing or of the wrong type ("steps[2].batch: expected an integer").
 * Shape only: run gb_plan_validate() on what comes back.
 */
gb_err_t gb_plan_to_json(const struct gb_plan *p, char **out, gb_error_t *err);
gb_err_t gb_plan_from_json(const char *text, struct gb_plan **out,
			   gb_error_t *err);

/*****************************************************************************
 *  Candidates: where a request from a home region may launch
 *****************************************************************************/

struct gb_candidate {
	const struct gb_conf_region *region;	/* BORROWED from the config */
	double distance_km;	/* from the home region; 0 for home itself,
				 * HUGE_VAL when either has no coordinates */
	bool home;
	/* gb_plan_candidates_prefer(): the price it ordered by, -1 unknown */
	double usd_per_hour;
	const char *price_type;	/* BORROWED: the type priced, or NULL */
};

struct gb_candidates {
	char *home;			/* NEW copy of the home region */
	enum gb_mode mode;
	struct gb_candidate *v;		/* NEW array, in order of preference */
	size_t n;
	/* The request's allowed set: names of v[], NULL-terminated, BORROWED
	 * from the config.  single_region narrows v[] but not this set. */
	const char **allowed;		/* NEW array of BORROWED strings */
	size_t n_allowed;
	/*
	 * What policy.prefer did to v[] (gb_plan_candidates_prefer), for the
	 * plans' rationale: "prefer cheapest: ap-south-1 g5.xlarge 1.21 USD/h
	 * before ..."; NULL under nearest (the order of gb_plan_candidates).
	 */
	char *prefer;			/* NEW */
};

/*
 * The candidate regions of [home]: the configured fallback regions of the
 * group that lists [home] as a consumer, with [home] first when it is
 * itself configured (launchable), the others by ascending Haversine
 * distance from [home] (ties: lower priority, then name).  In
 * GB_MODE_SINGLE_REGION only the first candidate remains (home when
 * launchable, as the ancestor's regions[:1]); the allowed set is the same.
 * A [home] in no group is GB_E_PLAN: "home region us-west-2 is in no
 * fallback group; allowed consumer regions: ap-southeast-1, ...".  A group
 * with no configured region is GB_E_PLAN too.
 * OUT [out] filled (gb_plan_candidates_clear, also after failure).
 */
gb_err_t gb_plan_candidates(const struct gb_conf *conf, const char *home,
			    enum gb_mode mode, struct gb_candidates *out,
			    gb_error_t *err);
void gb_plan_candidates_clear(struct gb_candidates *c);

/*
 * Order [c] (from gb_plan_candidates) by policy.prefer of [conf] for a
 * request of [n_types] [types] (preference order; BORROWED, they must
 * outlive [c]) bought as [kind] (its ladder's first rung).  Each
 * candidate's price is that of the first of [types] the price file
 * prices in its region as [kind] (gb_conf_price), -1 when none is.
 *  - nearest: the order stays as it is; c->prefer stays NULL.
 *  - cheapest: by ascending price; the regions without a price after the
 *    priced ones; ties, and the unpriced regions, in the order they had
 *    (home, then distance).
 *  - nearest_within(P): the regions priced at most P percent above the
 *    cheapest priced one, then all the others, each part in the order it
 *    had; without any price, the order stays.
 * Under cheapest and nearest_within with two candidates or more,
 * c->prefer says what was done (NEW, freed by gb_plan_candidates_clear).
 * RET GB_E_OK or GB_E_NOMEM.
 */
gb_err_t gb_plan_candidates_prefer(const struct gb_conf *conf,
				   struct gb_candidates *c,
				   const char *const *types, size_t n_types,
				   enum gb_capacity_kind kind, gb_error_t *err);

/*
 * Append c->prefer (when set) to the rationale of [plan]: "<rationale>;
 * prefer cheapest: ...".  RET GB_E_OK or GB_E_NOMEM.
 */
gb_err_t gb_plan_rationale_prefer(struct gb_plan *plan,
				  const struct gb_candidates *c, gb_error_t *err);

/*****************************************************************************
 *  Pools and the facts a planner sees
 *****************************************************************************/

enum gb_offer {
	GB_OFFER_UNKNOWN = 0,	/* not checked (no cache, cloud not asked) */
	GB_OFFER_YES,
	GB_OFFER_NO,		/* DescribeInstanceTypeOfferings: not offered */
};

/* Capacity memory of one (region, AZ, type), decayed to facts.now. */
struct gb_pool_memory {
	bool known;		/* a row exists */
	double asked, got, ice, failures;
	double last_ice_at, last_success_at;
	bool recent_ice;	/* last_ice_at within policy.ice_cooldown */
	/*
	 * Estimated instances the pool can give now: got/ice when the pool
	 * has run dry before (the average level it had), HUGE_VAL when it
	 * never ran dry and gave at least 2 x batch_max ("plenty"), -1 when
	 * unknown.
	 */
	double est;
	bool assumed;		/* est is the heuristic's guess for a pool
				 * memory cannot judge (not stored) */
	/*
	 * Schema-2 memory (gb_state_capacity_level), decayed to facts.now.
	 * With facts.bounds the estimate comes from these: the decayed mean
	 * of the measured levels; a pool never seen dry is estimated at its
	 * mean lower bound ("at least").
	 */
	double level_sum, level_n, floor_sum, floor_n;
	double counter_est;	/* the counters' estimate, whatever bounds */
	double floor;		/* mean lower bound, -1: none */
	bool measured;		/* a level was measured (it ran dry) */
	/*
	 * Quota memory of the pool's region (gb_plan_quota_rooms): instances
	 * of the type the remembered limits leave now, given the live
	 * instances the state file holds there; HUGE_VAL when no limit is
	 * remembered.  With facts.bounds, a pool whose region has no room
	 * left is "walled": estimate 0, planned last, never probed by the
	 * default strategy.
	 */
	double quota_room;
	bool walled;
	char quota_code[40];	/* the wall's EC2 code, "" when none */
};

/*
 * A reservation or Capacity Block of a candidate region, as
 * DescribeCapacityReservations told liborch's preflight (or its cache
 * holds): what the ladder's reservation and capacity_blocks rungs make
 * pools of.  Strings BORROWED.
 */
struct gb_plan_resv {
	const char *region;
	const char *id;			/* "cr-..." */
	const char *type;
	const char *az;
	enum gb_capacity_kind kind;	/* GB_CAPACITY_RESERVATION or _BLOCK */
	bool open;			/* instanceMatchCriteria open */
	const char *state;		/* EC2's: active, scheduled, expired, ...; never NULL */
	int available;			/* availableInstanceCount */
	int total;			/* totalInstanceCount: what a block that
					 * has not opened yet will hold */
	double start, end;		/* epoch s; 0: none */
};

/*
 * The ladder a request climbs: its nodeset's capacity: rungs (in the order
 * tried) and the reservations and blocks known in its candidate regions.
 */
struct gb_plan_ladder {
	const struct gb_conf_rung *rungs;	/* BORROWED; NULL/0: one
						 * on-demand rung */
	size_t n_rungs;
	const struct gb_plan_resv *resv;	/* BORROWED */
	size_t n_resv;
	/*
	 * A Capacity Block that opens within policy.capacity_block_wait is a
	 * usable pool (the engine waits for it: the default strategy); false:
	 * excluded until it opens.
	 */
	bool wait;
};

/*
 * A pool is (region, type, AZ, subnet) of one rung of the ladder: a
 * capacity kind, and for a targeted reservation or a Capacity Block the
 * reservation (or resource group) it launches into.  EC2 capacity lives per AZ and
 * type: pools of one (region, AZ, type) share memory and offerings (their
 * subnets only add addresses); locality groups (a region or an AZ) span
 * the types.
 */
struct gb_pool {
	const char *region;	/* BORROWED from the config */
	const char *az;
	const char *subnet;
	const char *type;	/* BORROWED: one of facts.types */
	int type_index;		/* its index in facts.types (preference) */
	int rank;		/* candidate index of the region (0 = first) */
	int az_index;		/* index of the AZ in the region's config */
	int subnet_index;	/* index of the subnet in the AZ */
	double distance_km;
	enum gb_capacity_kind capacity;	/* its rung's kind */
	int rung;		/* the rung's index in the ladder */
	const char *target;	/* BORROWED: reservation id or resource group
				 * ARN launched into; NULL: none */
	const char *max_price;	/* spot: BORROWED from the rung, NULL: none */
	double usd_per_hour;	/* gb_conf_price() of its region, type and
				 * kind; -1 unknown */
	/*
	 * Instances the reservation (or Capacity Block) has available now,
	 * as DescribeCapacityReservations said: an exact bound, the pool's
	 * estimate; -1 when not bounded (on-demand, spot, resource groups).
	 */
	int reserved;
	double opens_at, ends_at;	/* a Capacity Block's window (epoch s);
					 * 0: not a block */
	enum gb_offer offered;
	struct gb_pool_memory mem;
	/* Set by the engine during a run; planners skip excluded pools. */
	bool excluded;
	char why[64];		/* "not offered", "quota", "dry", ... */
	double score;		/* the heuristic's, for the trace */
};

struct gb_plan_facts {
	const struct gb_conf *conf;	/* BORROWED */
	const char *instance_type;	/* BORROWED: types[0] */
	const char *const *types;	/* BORROWED: the request's types, in
					 * preference order */
	size_t n_types;
	int target;		/* instances still wanted */
	int job_size;		/* nodes that must share a locality group;
				 * 1 when they may spread */
	enum gb_locality locality;
	const struct gb_candidates *cand;	/* BORROWED */
	const struct gb_conf_rung *rungs;	/* BORROWED: the ladder (never
						 * empty: on-demand alone by
						 * default) */
	size_t n_rungs;
	const struct gb_plan_resv *resv;	/* BORROWED: the ladder's; pools
						 * point into them (the ladder
						 * must outlive the facts) */
	size_t n_resv;
	struct gb_pool *pools;	/* NEW: every configured pool of v[], in
				 * candidate, rung, type, AZ, subnet order */
	size_t n_pools;
	double now;		/* epoch seconds for memory decay */
	int batch_max;		/* policy.batch_max */
	int hedge;		/* instances asked beyond a finite estimate
				 * (facts_build sets 1; 0: none) */
	/*
	 * Estimate from measured levels and lower bounds and heed quota
	 * walls (the default strategy sets it, then calls
	 * gb_plan_pool_estimate); false from gb_plan_facts_build: the
	 * estimate of the asked/got/ice counters, as before schema 2.
	 */
	bool bounds;
	/*
	 * For a proposing planner (gb_plan_propose_fn, the LLM planner): set
	 * by the engine before each call, NULL/0 from gb_plan_facts_build().
	 */
	const char *request_id;	/* BORROWED */
	const char *untrusted;	/* BORROWED text users wrote about the
				 * request (job name, comment, Slurm's job
				 * input): data to quote, never instructions */
	const char *history;	/* BORROWED gb_plan_history() text: the
				 * attempts and plan versions so far */
	int proposals;		/* proposals already asked for in this
				 * request (0 for the first plan) */
};

/*
 * Build the pools of [cand] for the [n_types] [types] (preference order,
 * n_types >= 1; the array and its strings BORROWED, they must outlive
 * [f]) with what the state file knows: offerings cached since now -
 * policy.offerings_ttl, and capacity memory decayed with
 * policy.capacity_half_life ([st] may be NULL: no knowledge), each per
 * pool's (region, AZ, type).  Pools: every candidate region, type, AZ,
 * subnet, in that order.  OUT [f] filled (gb_plan_facts_clear).
 * gb_plan_facts_build: the same for the one type [instance_type]; then
 * f->types points at f->instance_type (a copy of [f] keeps pointing at
 * the original: it must outlive the copy).
 */
gb_err_t gb_plan_facts_build_types(const struct gb_conf *conf,
				   const struct gb_candidates *cand,
				   const char *const *types, size_t n_types,
				   int target, int job_size,
				   enum gb_locality locality,
				   struct gb_state *st, double now,
				   struct gb_plan_facts *f, gb_error_t *err);
/*
 * The same for the rungs of [ladder] (NULL: one on-demand rung; BORROWED,
 * with its reservations, for as long as [f] is used): pools in
 * candidate, rung, type, AZ, subnet order.  On-demand and spot rungs give
 * a pool per (type, AZ, subnet); a reservations rung one per subnet of
 * the AZ of each reservation it names (ids) of a request's type, one per
 * (type, AZ, subnet) with open reservations (open: true; their available
 * counts summed) and one per (type, AZ, subnet) of each resource group of
 * the region; a capacity_blocks rung one per subnet of each block it
 * names (or any block of a request's type).  A reservation or block that
 * is not active, has nothing available, ends within
 * policy.capacity_block_margin or opens later (beyond
 * policy.capacity_block_wait, or at all without ladder->wait) is a pool
 * excluded with the reason, so that it costs no call.  Capacity memory is
 * per (region, AZ, type, kind); a reservation's or block's available count
 * is its pool's estimate.
 */
gb_err_t gb_plan_facts_build_ladder(const struct gb_conf *conf,
				    const struct gb_candidates *cand,
				    const char *const *types, size_t n_types,
				    const struct gb_plan_ladder *ladder,
				    int target, int job_size,
				    enum gb_locality locality,
				    struct gb_state *st, double now,
				    struct gb_plan_facts *f, gb_error_t *err);
gb_err_t gb_plan_facts_build(const struct gb_conf *conf,
			     const struct gb_candidates *cand,
			     const char *instance_type, int target,
			     int job_size, enum gb_locality locality,
			     struct gb_state *st, double now,
			     struct gb_plan_facts *f, gb_error_t *err);
void gb_plan_facts_clear(struct gb_plan_facts *f);

/*
 * The preflight's answer (liborch sends the request): apply the
 * DescribeInstanceTypeOfferings answer [l] for [region] (asked for every
 * one of f->types) to f->pools, each pool by its AZ and type, and cache it
 * in [st] (may be NULL), one row per (AZ, type) and one per (region,
 * type).
 */
struct gb_ec2_offering_list;
void gb_plan_offerings_apply(struct gb_plan_facts *f, const char *region,
			     const struct gb_ec2_offering_list *l,
			     struct gb_state *st);

/*
 * Read again what the cache in [st] knows of the offerings of f->pools
 * still unknown (policy.offerings_ttl), as gb_plan_facts_load() did: what
 * another run cached since.
 */
void gb_plan_offerings_cached(struct gb_plan_facts *f, struct gb_state *st);

/*
 * Do pools [a] and [b] draw on the same capacity: one (region, AZ, type)
 * of one kind, and for a reservation or block the same one?  (Their
 * subnets may differ: subnets only add addresses.)
 */
bool gb_plan_same_capacity(const struct gb_pool *a, const struct gb_pool *b);

/*
 * Append a step for pool [p]: its region, AZ, subnet, type, capacity kind
 * and target.  RET GB_E_OK or GB_E_NOMEM.
 */
gb_err_t gb_plan_add_pool_step(struct gb_plan *plan, const struct gb_pool *p,
			       int batch, int expect, const char *reason,
			       gb_error_t *err);

/* Recompute every pool's memory estimate (after the engine changed it). */
void gb_plan_pool_estimate(const struct gb_plan_facts *f, struct gb_pool *p);

/*
 * The quota an EC2 quota refusal [code] for [type] counts against, written
 * into [buf] of [n] bytes: "vcpus:<bucket>" for VcpuLimitExceeded (the
 * vCPU quota of the type's family bucket, "G" for the G and VT families;
 * "vcpus:G:spot" for spot), "instances" for InstanceLimitExceeded (the
 * region's instance count), GB_PLAN_QUOTA_ACCOUNT for a code of class
 * GB_EC2_CLASS_REGION (OptInRequired, AuthFailure, ...: the account may
 * not use the region at all, whatever the type; remembered with a limit
 * of 0, which nothing holds), else "<code>:<type>".  RET what one
 * instance of [type] counts against it: its vCPUs for a vCPU quota (from
 * the catalog in use by [conf], NULL: the built-in; 4 when the catalog
 * does not know the type), else 1.
 */
#define GB_PLAN_QUOTA_ACCOUNT "account"
int gb_plan_quota_key(const struct gb_conf *conf, const char *type, bool spot,
		      const char *code, char *buf, size_t n);

/*
 * Every pool's quota_room (and walled, quota_code) from the quota memory
 * in [st] that applies to the pool's type and market (a spot pool's spot
 * quotas, the on-demand ones for on-demand and reservation pools, none for
 * a Capacity Block's; a vCPU quota counts in the units of that type),
 * minus what the live instances recorded in [st] already hold in each
 * region; HUGE_VAL when nothing is remembered.  Remembered = observations
 * decayed to at least a quarter of one (two half-lives after a single
 * refusal).
 */
gb_err_t gb_plan_quota_rooms(struct gb_plan_facts *f, struct gb_state *st,
			     gb_error_t *err);

/*
 * OUT *held: what the live instances recorded in [st] in [region] hold of
 * [quota] (a gb_plan_quota_key() name under [conf]), in its unit.
 */
gb_err_t gb_plan_quota_held(const struct gb_conf *conf, struct gb_state *st,
			    const char *region,
			    const char *quota, bool spot, double *held,
			    gb_error_t *err);

/*
 * For tools that show what the planners remember (gpuburstctl capacity):
 * the planners' own reading of one row, so that what is shown means what
 * they use.
 *
 * gb_plan_memory_of: capacity memory row [c] (gb_state_capacity_list(),
 * decayed to [now]) as a pool's memory after gb_plan_facts_build() and
 * gb_plan_pool_estimate() with facts.bounds = [bounds] (true: the default
 * strategy's estimate, from levels and lower bounds; false: the counters',
 * which best_effort and all_or_nothing plan with) and the quota room
 * [quota_room] of its region (gb_plan_quota_room(); HUGE_VAL: no wall).
 */
struct gb_capacity;
struct gb_quota;
void gb_plan_memory_of(const struct gb_conf *conf, const struct gb_capacity *c,
		       double now, bool bounds, double quota_room,
		       struct gb_pool_memory *m);

/* One row of quota memory as the default strategy reads it. */
struct gb_plan_quota_view {
	bool heeded;		/* remembered: weight at least a quarter of one
				 * observation (else the planners ignore it) */
	double limit;		/* limit_sum / limit_n, in the quota's unit */
	double held;		/* of it, by the live instances of the state
				 * file in the region */
	double forget_at;	/* when it stops being heeded; 0: already */
};

/*
 * OUT [v] for quota memory row [q] (gb_state_quota_list(), decayed to
 * [now] with [half_life]); [st] gives the live instances (may be NULL: 0),
 * counted in the units of [conf]'s catalog.
 */
gb_err_t gb_plan_quota_view(const struct gb_conf *conf, struct gb_state *st,
			    const struct gb_quota *q,
			    double now, double half_life,
			    struct gb_plan_quota_view *v, gb_error_t *err);

/*
 * RET the instances of [type] ([spot] market) that quota [q], viewed as
 * [v], leaves room for: the room gb_plan_quota_rooms() gives a pool of its
 * region (>= 0); HUGE_VAL when [q] does not bound [type] or is not heeded.
 */
double gb_plan_quota_room(const struct gb_conf *conf, const struct gb_quota *q,
			  const struct gb_plan_quota_view *v, const char *type,
			  bool spot);

/*
 * The capacity memory in at most GB_PLAN_SUMMARY_MAX characters (the LLM
 * planner's prompt): the most informative pools first, one compact item
 * each, e.g. "ap-south-1a got 9.2/12.0 dry 3.1 est 3 last-ice 4m;"; with
 * several types each item names its type ("ap-south-1a/p5e.48xlarge ...").
 * Writes into [buf] of [n] bytes (NUL-terminated, truncated at an item
 * boundary).  RET the length written.
 */
size_t gb_plan_capacity_summary(const struct gb_plan_facts *f, char *buf,
				size_t n);

/*****************************************************************************
 *  Planners and the validator
 *****************************************************************************/

/*
 * The heuristic planner.  Scores every pool that is not excluded or known
 * not offered: expected yield from capacity memory (pools that gave
 * plenty and never ran dry first, then by estimate), recent ICE last,
 * then candidate order (distance, or as policy.prefer put it) and config
 * order.  With locality and a job of several nodes it puts first the
 * region (or AZ) whose pools are expected to hold the whole job, first in
 * candidate order.  The rationale ends with the candidates' prefer note.  Batch per step:
 * min(batch_max, estimate + 1) for a pool with a finite estimate (the +1
 * keeps memory exact: the call ends with the pool dry), batch_max
 * otherwise.  total = min(target, what the plan's pools may give).
 * OUT *out NEW plan, planner "heuristic".  An empty plan (no usable pool)
 * is GB_E_PLAN "no pool offers g5.xlarge in ...".
 */
gb_err_t gb_plan_heuristic(const struct gb_plan_facts *f,
			   struct gb_plan **out, gb_error_t *err);

/*
 * The ancestor's fixed order, for probe_fill: usable pools in candidate
 * order, then AZ and subnet order of the config, batch = batch_max,
 * planner "ancestor-order".  Empty: GB_E_PLAN as above.
 */
gb_err_t gb_plan_ordered(const struct gb_plan_facts *f, struct gb_plan **out,
			 gb_error_t *err);

/*
 * A planner other than the heuristic one (the LLM planner of a later
 * issue) plugs in as this function: it proposes a plan from the facts.
 * Its plan is validated like any other; on failure, lateness or rejection
 * the heuristic plan is used (status "fallback").
 */
typedef gb_err_t (*gb_plan_propose_fn)(const struct gb_plan_facts *f,
				       const char *memory_summary,
				       struct gb_plan **out, void *ctx,
				       gb_error_t *err);
/*
 * Contract of a gb_plan_propose_fn (gb_llm_propose() is one): GB_E_OK with
 * *out a NEW plan to validate; or an error with the reason in [err] and
 * *out either NULL (nothing to record: the planner declined) or a NEW
 * plan shell naming the planner (and the model's rationale, if any) that
 * the engine stores as the "rejected" version with that reason.
 */

/*
 * What happened so far in request [request_id], for a re-plan: every
 * attempt ("attempt #3 ap-south-1 ap-south-1a subnet-x asked 4 got 2 ok
 * (g5.xlarge)", "... got 0 failed InsufficientInstanceCapacity (g5.xlarge)",
 * the type last) and every plan version
 * ("plan v2 llm:openai rejected: step 1: ..."), one per line, oldest first;
 * when over [max] bytes (0: 2000) the oldest lines are left out.
 * OUT *out NEW text (free()), "" when nothing happened yet.
 */
gb_err_t gb_plan_history(struct gb_state *st, const char *request_id,
			 size_t max, char **out, gb_error_t *err);

/* What a plan is checked against: the request's limits. */
struct gb_plan_scope {
	const struct gb_conf *conf;	/* families, catalog, pools, batch_max */
	const char *instance_type;	/* the request's (first) type */
	int target;			/* the request's nodes still wanted */
	const char *const *allowed;	/* allowed regions */
	size_t n_allowed;
	const char *const *types;	/* the request's types; NULL/0: only
					 * instance_type */
	size_t n_types;
	const struct gb_conf_rung *rungs;	/* the request's ladder; NULL/0:
						 * on-demand only */
	size_t n_rungs;
};

/*
 * THE validator, for every planner.  Rules, each with its own reason:
 *  - the plan's instance type is the request's, in the catalog, and in
 *    the allowed families ("instance type m7i.xlarge is not allowed: only
 *    GPU families g4dn, g5, g5g, g6, g6e");
 *  - 1 <= total <= target ("total 25 exceeds the request's 20 nodes");
 *  - at least one step;
 *  - every step's region inside the allowed set ("step 3: region
 *    eu-west-1 is outside the allowed set {ap-south-1, ...}");
 *  - (region, az, subnet) configured ("step 2: subnet subnet-x is not
 *    configured in ap-south-1a");
 *  - every step's type one of the request's types ("step 2: instance
 *    type p4d.24xlarge is not one of the request's types {p5.48xlarge,
 *    p5e.48xlarge}");
 *  - every step's capacity a rung of the request's ladder ("step 2:
 *    capacity spot is not on the request's ladder {reservation,
 *    on-demand}") and its target one the rung names ("step 1:
 *    reservation cr-0123... is not one the ladder names");
 *  - 1 <= batch <= policy.batch_max ("step 1: batch 9 is outside 1..4");
 *  - no (region, az, subnet, type, capacity, target) twice ("step 4:
 *    duplicate of step 1").
 * Steps are numbered from 1.  RET GB_E_OK, or GB_E_PLAN with the first
 * rejection in [err]; every rejection is appended to [errs] (may be NULL).
 */
gb_err_t gb_plan_validate(const struct gb_plan_scope *s,
			  const struct gb_plan *p, struct gb_errlist *errs,
			  gb_error_t *err);

#endif /* GB_LIBPLAN_GB_PLAN_H */
