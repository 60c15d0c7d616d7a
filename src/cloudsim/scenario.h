/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scenario.h - the simulator's scenario file (YAML): load and validate
 *
 * A scenario describes the simulated cloud: regions -> availability zones ->
 * subnets (CIDR) and capacity per instance type (On-Demand, and Spot with
 * its price), per-region quotas (On-Demand and Spot), security groups and
 * their rules (security_groups: [ID | {id, rules: self|none|egress}]),
 * placement groups (placement_groups: {limit: 500, cluster_capacity: N |
 * {default: N, TYPE: N}}),
 * capacity reservations and Capacity Blocks (capacity_reservations:
 * [{id, az, type, count, match, kind, start, end, state}]), Capacity Block
 * offerings, Capacity Reservation resource groups,
 * instance-type offerings per AZ, per-action faults (latency distribution,
 * throttling, 5xx, dropped connections, slow bodies), capacity that appears
 * or disappears at given times, test credentials and the random seed that
 * makes a run replay exactly.  The format is documented in
 * gpuburst-cloudsim(8) and etc/cloudsim/default.yaml.
 *
 * gb_scenario_load() is all-or-nothing: the first problem is reported as
 * "FILE:LINE:COL: message" (1-based) and nothing is returned.  Unknown keys
 * are errors.  Durations are a number of seconds or a string with a unit
 * ("250ms", "2s", "5m", "1h"); rates are numbers in [0, 1].
 *
 * The loaded structure is immutable; the simulator keeps borrowed pointers
 * into it for its lifetime.
 */
#ifndef GB_CLOUDSIM_SCENARIO_H
#define GB_CLOUDSIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gb_err.h"
#include "gb_str.h"
#include "itype.h"

/* The EC2 actions the simulator serves; index of per-action settings. */
enum gb_sim_action {
	GB_SIM_ACTION_RUN_INSTANCES = 0,
	GB_SIM_ACTION_DESCRIBE_INSTANCES,
	GB_SIM_ACTION_TERMINATE_INSTANCES,
	GB_SIM_ACTION_DESCRIBE_OFFERINGS,
	GB_SIM_ACTION_CREATE_TAGS,
	GB_SIM_ACTION_DESCRIBE_AZS,
	GB_SIM_ACTION_DESCRIBE_INSTANCE_TYPES,
	GB_SIM_ACTION_CREATE_PLACEMENT_GROUP,
	GB_SIM_ACTION_DESCRIBE_PLACEMENT_GROUPS,
	GB_SIM_ACTION_DELETE_PLACEMENT_GROUP,
	GB_SIM_ACTION_DESCRIBE_SECURITY_GROUPS,
	GB_SIM_ACTION_DESCRIBE_CAPACITY_RESERVATIONS,
	GB_SIM_ACTION_DESCRIBE_CAPACITY_BLOCK_OFFERINGS,
	GB_SIM_ACTION_DESCRIBE_SPOT_PRICE_HISTORY,
	GB_SIM_ACTION_COUNT
};

/* RET the EC2 action name ("RunInstances"). */
const char *gb_sim_action_name(enum gb_sim_action a);
/* RET the action for an EC2 action name, or GB_SIM_ACTION_COUNT. */
enum gb_sim_action gb_sim_action_find(const char *name);

enum gb_latency_kind {
	GB_LATENCY_FIXED = 0,		/* always a */
	GB_LATENCY_UNIFORM,		/* uniform in [a, b] */
	GB_LATENCY_LOGNORMAL,		/* median a, shape sigma b */
	GB_LATENCY_PERCENTILES,		/* piecewise-linear quantile function */
};

/* Quantile points of GB_LATENCY_PERCENTILES: p0 (min), p50, p90, p99, p100 (max). */
#define GB_LATENCY_NQ 5
extern const double gb_latency_qprob[GB_LATENCY_NQ];

struct gb_latency {
	enum gb_latency_kind kind;
	double a, b;			/* seconds (b: sigma for lognormal) */
	double q[GB_LATENCY_NQ];	/* seconds at gb_latency_qprob[] */
};

/* A window of simulated time with its own throttle rate (a "storm"). */
struct gb_sc_burst {
	double at, duration, rate;
};

struct gb_fault_profile {
	struct gb_latency latency;
	double throttle_rate;		/* P(RequestLimitExceeded) */
	struct gb_sc_burst *bursts;
	size_t nbursts;
	double bucket_size;		/* token bucket; 0 = none */
	double bucket_refill;		/* tokens per second */
	double error_rate;		/* P(5xx) */
	const char *error_code;		/* "InternalError" or "Unavailable" (static) */
	double drop_rate;		/* close the connection, action not done */
	double lost_response_rate;	/* action done, then connection closed */
	double slow_body_rate;		/* P(body trickled) */
	double slow_body_bps;		/* bytes per second when trickled */
};

struct gb_sc_cred {
	char *access_key_id;
	char *secret_access_key;
};

/* An IAM role STS lets a caller assume (`roles:`). */
struct gb_sc_role {
	char *arn;			/* arn:aws:iam::ACCOUNT:role/NAME */
	long max_session_s;		/* MaxSessionDuration, 3600..43200 */
	char *external_id;		/* AssumeRole must send it; NULL: none */
	struct gb_strv web_tokens;	/* AssumeRoleWithWebIdentity accepts these */
};

struct gb_sc_subnet {
	char *id;			/* "subnet-aps1a-1" */
	char *cidr;			/* as written */
	char *vpc_id;
	uint32_t net;			/* host byte order */
	unsigned prefix;		/* 16..28, as in VPC */
};

/* One instance type offered in one AZ, with its capacity pools. */
struct gb_sc_pool {
	const struct gb_itype *type;	/* BORROWED from the catalog */
	long capacity;			/* On-Demand instances that fit at time 0 */
	bool spot;			/* Spot offered (spot: in the AZ) */
	long spot_capacity;		/* Spot instances that fit at time 0 */
	double spot_price;		/* USD per hour: what a MaxPrice must reach
					 * and DescribeSpotPriceHistory reports */
};

struct gb_sc_az {
	char *name;			/* "ap-south-1a" */
	char *zone_id;			/* "aps1-az1" (generated if absent) */
	struct gb_sc_pool *pools;	/* the AZ's offerings */
	size_t npools;
	struct gb_sc_subnet *subnets;	/* at least one */
	size_t nsubnets;
};

#define GB_SC_UNLIMITED (-1L)

/* The rules of a security group (DescribeSecurityGroups). */
enum gb_sc_sg_rules {
	GB_SC_SG_SELF = 0,		/* all traffic from and to itself (EFA's rule) */
	GB_SC_SG_NONE,			/* no rule at all */
	GB_SC_SG_EGRESS,		/* all traffic out to 0.0.0.0/0, nothing in */
};

/* How many instances of one type one cluster placement group holds. */
struct gb_sc_pg_cap {
	const struct gb_itype *type;
	long n;
};

#define GB_SC_PG_LIMIT 500		/* EC2: placement groups per Region */

enum gb_sc_cr_kind {
	GB_SC_CR_DEFAULT = 0,		/* an On-Demand Capacity Reservation */
	GB_SC_CR_BLOCK,			/* a Capacity Block for ML */
};

#define GB_SC_CR_BLOCK_MAX 64		/* EC2: instances in one Capacity Block */

/*
 * A capacity reservation (`capacity_reservations:`): [count] instances of
 * [type] in [az] from [start] (simulated seconds) to [end] (< 0: none).
 */
struct gb_sc_cr {
	char *id;			/* "cr-" and 17 hex digits */
	char *az_name;			/* as written */
	const struct gb_sc_az *az;	/* resolved once the region is read */
	const struct gb_itype *type;
	long count;
	bool open;			/* match: open (default targeted) */
	enum gb_sc_cr_kind kind;
	double start, end;
	char *state;			/* an override of EC2's states, or NULL */
	unsigned line;			/* for messages */
};

/* A Capacity Reservation resource group (`resource_groups: {ARN: [ids]}`). */
struct gb_sc_rgroup {
	char *arn;			/* arn:aws:resource-groups:REGION:ACCOUNT:group/NAME */
	struct gb_strv ids;		/* reservations of the region */
	unsigned line;
};

/* A Capacity Block DescribeCapacityBlockOfferings can offer. */
struct gb_sc_cb_offer {
	const struct gb_itype *type;
	char *az_name;
	const struct gb_sc_az *az;
	long count;			/* at most this many instances */
	double start;			/* simulated seconds */
	long hours;			/* duration_hours */
	char *upfront_fee;		/* USD, as written, for [count] instances */
	unsigned line;
};

struct gb_sc_region {
	char *name;
	long vcpu_quota[GB_ITYPE_BUCKET_COUNT];	/* GB_SC_UNLIMITED if unset */
	long instance_quota;			/* GB_SC_UNLIMITED if unset */
	long spot_vcpu_quota[GB_ITYPE_BUCKET_COUNT]; /* the same for Spot */
	struct gb_strv images;		/* allowed ImageIds; empty = any */
	struct gb_strv key_pairs;	/* allowed KeyNames; empty = any */
	struct gb_strv security_groups;	/* existing SecurityGroupIds; empty = any */
	enum gb_sc_sg_rules *sg_rules;	/* one per security_groups entry */
	long pg_limit;			/* placement groups, GB_SC_PG_LIMIT */
	long pg_capacity;		/* per cluster group and type; or unlimited */
	struct gb_sc_pg_cap *pg_caps;	/* per type, overriding pg_capacity */
	size_t npg_caps;
	struct gb_strv instance_profiles; /* IAM instance profile names; empty = any */
	struct gb_sc_az *azs;
	size_t nazs;
	struct gb_sc_cr *crs;		/* capacity_reservations */
	size_t ncrs;
	struct gb_sc_cb_offer *cb_offers;	/* capacity_block_offerings */
	size_t ncb_offers;
	struct gb_sc_rgroup *rgroups;	/* resource_groups */
	size_t nrgroups;
};

enum gb_sc_event_op {
	GB_SC_EVENT_SET = 0,
	GB_SC_EVENT_ADD,
	GB_SC_EVENT_REMOVE,
};

/* Capacity that appears or disappears at a simulated time. */
struct gb_sc_event {
	double at;
	char *az;
	const struct gb_itype *type;
	enum gb_sc_event_op op;
	long n;
	bool spot;			/* market: spot (the Spot pool) */
	unsigned line;			/* for messages */
};

enum gb_sc_boot {
	GB_SC_BOOT_NONE = 0,
	GB_SC_BOOT_EXEC,		/* run UserData when an instance runs */
};

struct gb_scenario {
	char *path;
	uint64_t seed;
	char *account_id;		/* ownerId, 12 digits */
	struct gb_sc_cred *creds;
	size_t ncreds;
	struct gb_sc_role *roles;
	size_t nroles;
	double pending_s;		/* pending -> running */
	double shutting_down_s;		/* shutting-down -> terminated */
	double terminated_visible_s;	/* terminated instances stay visible */
	double invisible_s;		/* consistency: fresh ids unknown */
	double no_private_ip_s;		/* consistency: no address described */
	enum gb_sc_boot boot;
	char *boot_dir;			/* NULL: decided by the program */
	struct gb_fault_profile faults[GB_SIM_ACTION_COUNT];
	struct gb_sc_region *regions;
	size_t nregions;
	struct gb_sc_event *events;	/* sorted by time */
	size_t nevents;
};

/*
 * Load and validate [path].
 * OUT *out NEW (gb_scenario_destroy).
 * RET GB_E_OK, GB_E_NOTFOUND or GB_E_IO (cannot read it), GB_E_CONFIG
 * ("FILE:LINE:COL: msg").
 */
gb_err_t gb_scenario_load(const char *path, struct gb_scenario **out,
			  gb_error_t *err);

/* The same from a string; [name] stands for the file in messages. */
gb_err_t gb_scenario_parse(const char *name, const char *text, size_t len,
			   struct gb_scenario **out, gb_error_t *err);

void gb_scenario_destroy(struct gb_scenario *sc);

/* RET BORROWED the role [arn], or NULL. */
const struct gb_sc_role *gb_scenario_role(const struct gb_scenario *sc, const char *arn);

/* RET BORROWED region / AZ / subnet by name, or NULL. */
const struct gb_sc_region *gb_scenario_region(const struct gb_scenario *sc,
					      const char *name);
const struct gb_sc_az *gb_scenario_az(const struct gb_scenario *sc,
				      const char *name,
				      const struct gb_sc_region **region);

#endif /* GB_CLOUDSIM_SCENARIO_H */
