/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim.h - the simulated cloud: capacity, quotas, instances, idempotency
 *
 * Pure state machine, no I/O: every entry point takes the simulated time
 * [now] (seconds since the simulation started; it never goes backwards) and
 * first applies whatever was due by then: capacity events, pending ->
 * running, Spot interruptions due (gb_sim_interrupt), shutting-down ->
 * terminated (which releases capacity, quota and the private IP), and
 * forgetting long-terminated instances.  Tests drive the
 * clock explicitly; the server passes a scaled monotonic clock.
 *
 * Semantics follow EC2 (research/seed-and-protocols.md s3, s4): capacity is
 * per (AZ, instance type); MinCount..MaxCount launches the largest possible
 * number or nothing; ClientToken idempotency is zonal when a subnet or AZ is
 * given, else regional; quotas are per region (vCPUs per bucket, instances).
 * Spot is a market of its own: a Spot launch takes Spot capacity of the
 * (AZ, type) only, counts against the region's Spot vCPU quota only, and
 * needs a MaxPrice (when given) at or above the pool's Spot price.
 * Capacity reservations hold slots of their own (struct gb_sim_cr): a
 * targeted launch takes only its reservation's, an untargeted On-Demand
 * launch an open reservation's first; a Capacity Block's instances end
 * with it.
 * EC2 errors come back in struct gb_sim_error (code, message, HTTP status).
 *
 * Not thread-safe: the caller serializes (the server holds one mutex).
 * Pointers returned are BORROWED and valid until the next call.
 */
#ifndef GB_CLOUDSIM_SIM_H
#define GB_CLOUDSIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gb_err.h"
#include "gb_str.h"
#include "scenario.h"

typedef struct gb_sim gb_sim_t;

/* EC2 instance-state codes (the low byte of instanceState/code). */
enum gb_sim_state {
	GB_SIM_STATE_PENDING = 0,
	GB_SIM_STATE_RUNNING = 16,
	GB_SIM_STATE_SHUTTING_DOWN = 32,
	GB_SIM_STATE_TERMINATED = 48,
};

/* RET "pending", "running", "shutting-down", "terminated". */
const char *gb_sim_state_name(enum gb_sim_state s);

#define GB_SIM_ID_MAX 24	/* "i-" + 17 hex digits + NUL, with room */

/* An EC2 error: code, message and the HTTP status EC2 sends with it. */
struct gb_sim_error {
	int status;
	char code[64];
	char message[1024];
};

struct gb_sim_tag {
	char *key;
	char *value;		/* "" when empty, never NULL */
};

/* A tag given in a request (BORROWED strings). */
struct gb_sim_kv {
	const char *key;
	const char *value;	/* NULL is "" */
};

struct gb_sim_reservation;

/*
 * A capacity reservation of the scenario and what is in it.  Instances in
 * it take its slots, not the (AZ, type) pool's; a terminated one gives its
 * slot back once terminated.  A Capacity Block's instances are terminated
 * at its end.
 */
struct gb_sim_cr {
	const struct gb_sc_cr *sc;		/* BORROWED from the scenario */
	const struct gb_sc_region *region;
	long used;				/* pending, running or shutting-down */
	bool ended;				/* a block's end was applied */
};

/* RET EC2's state of [cr] at [now]: the scenario's override, else by time. */
const char *gb_sim_cr_state(const struct gb_sim_cr *cr, double now);
/* RET availableInstanceCount at [now] (0 unless active). */
long gb_sim_cr_available(const struct gb_sim_cr *cr, double now);

/* CapacityReservationSpecification.CapacityReservationPreference */
enum gb_sim_cr_pref {
	GB_SIM_CR_PREF_OPEN = 0,		/* the default */
	GB_SIM_CR_PREF_NONE,
	GB_SIM_CR_PREF_ONLY,			/* capacity-reservations-only */
};

/* A placement group of one region (CreatePlacementGroup). */
struct gb_sim_pgroup {
	char *name;
	char id[GB_SIM_ID_MAX];			/* "pg-" and 17 hex digits */
	const struct gb_sc_region *region;
	const char *strategy;			/* "cluster", "spread", "partition" */
	const struct gb_sc_az *az;		/* cluster: fixed by its first launch */
	long live;				/* instances in it not terminated */
	bool deleted;				/* kept for the instances naming it */
	struct gb_sim_tag *tags;
	size_t ntags;
};

/* NetworkInterface.N of RunInstances, and what an instance records. */
struct gb_sim_netif {
	long device_index;
	long card_index;			/* NetworkCardIndex, default 0 */
	const char *type;			/* "interface", "efa", "efa-only" (static) */
	const char *subnet_id;			/* launch: BORROWED; NULL: none given */
	const struct gb_sc_subnet *subnet;	/* instance: where it is */
	struct gb_strv sg_ids;			/* SecurityGroupId.N */
	bool delete_on_termination;		/* default true */
};

/* MetadataOptions of an instance; zeroed is EC2's default. */
struct gb_sim_metadata {
	bool tokens_optional;		/* HttpTokens=optional (default required) */
	bool endpoint_disabled;		/* HttpEndpoint=disabled: no IMDS */
	bool ipv6;			/* HttpProtocolIpv6=enabled */
	bool tags;			/* InstanceMetadataTags=enabled (imds.c) */
	long hop_limit;			/* HttpPutResponseHopLimit; 0: 1 */
};

struct gb_sim_instance {
	char id[GB_SIM_ID_MAX];
	uint64_t seq;				/* creation order */
	struct gb_sim_reservation *res;
	const struct gb_sc_region *region;	/* BORROWED from the scenario */
	const struct gb_sc_az *az;
	const struct gb_sc_subnet *subnet;
	const struct gb_itype *type;
	char *image_id;
	char *key_name;				/* NULL when none */
	char *client_token;			/* NULL when none */
	struct gb_strv sg_ids;
	char ip[16];
	uint32_t ip_n;
	enum gb_sim_state state;
	double launch_time;			/* simulated seconds */
	double state_time;			/* when [state] began */
	int launch_index;
	bool user_terminated;			/* TerminateInstances did it */
	bool spot;				/* instanceLifecycle spot */
	char spot_request_id[GB_SIM_ID_MAX];	/* "sir-...", "" when on-demand */
	char *iam_profile_arn;			/* NULL when none */
	struct gb_sim_metadata metadata;
	bool monitoring;			/* Monitoring.Enabled=true */
	bool ebs_optimized;			/* EbsOptimized=true */
	struct gb_sim_tag *tags;
	size_t ntags;
	char *user_data;			/* decoded; NULL when none */
	size_t user_data_len;
	struct gb_sim_pgroup *pg;		/* Placement.GroupName, or NULL */
	struct gb_sim_netif *netifs;		/* NetworkInterface.N; NULL: the */
	size_t nnetifs;				/* one default interface */
	struct gb_sim_cr *cr;			/* the reservation it runs in, or NULL */
	bool cr_ended;				/* terminated at its Capacity Block's end */
	bool cr_targeted;			/* CapacityReservationTarget named [cr] */
	enum gb_sim_cr_pref cr_pref;		/* the launch's preference */
	/* interruption notices (gb_sim_interrupt), in simulated seconds */
	bool spot_notice;			/* spot/instance-action scheduled */
	double spot_action_time;		/* terminated then */
	bool spot_interrupted;			/* terminated by that notice */
	bool rebalance;				/* a rebalance recommendation set */
	double rebalance_time;			/* its noticeTime (shown from then) */
	/* private: the simulator's time queues */
	struct gb_sim_instance *q_pending, *q_shut, *q_term;
	bool in_pending_q;
};

struct gb_sim_reservation {
	char id[GB_SIM_ID_MAX];
	struct gb_sim_instance **inst;
	size_t n;
	size_t alive;			/* instances not yet forgotten */
	char *token_key;		/* scope "\n" ClientToken, or NULL */
	char *digest;			/* canonical parameters of the launch */
};

/* One RunInstances call, decoded by the API layer. */
struct gb_sim_launch {
	const char *image_id;
	const char *instance_type;
	const char *subnet_id;		/* NULL: any subnet of the AZ */
	const char *az;			/* Placement.AvailabilityZone or NULL */
	const char *key_name;
	const char *iam_profile_name;	/* IamInstanceProfile.Name or NULL */
	const char *iam_profile_arn;	/* IamInstanceProfile.Arn or NULL */
	const char *client_token;
	long min_count, max_count;
	const char *user_data;		/* decoded bytes, or NULL */
	size_t user_data_len;
	const struct gb_sim_kv *tags;	/* TagSpecification for instances */
	size_t ntags;
	const struct gb_strv *sg_ids;	/* may be NULL */
	const char *digest;		/* the request's parameters, canonical */
	bool dry_run;			/* validate only: 412 DryRunOperation */
	struct gb_sim_metadata metadata;	/* MetadataOptions.* */
	bool monitoring;		/* Monitoring.Enabled */
	bool ebs_optimized;		/* EbsOptimized */
	bool spot;			/* InstanceMarketOptions.MarketType=spot */
	double spot_max_price;		/* SpotOptions.MaxPrice; 0: none given */
	const char *placement_group;	/* Placement.GroupName or NULL */
	const struct gb_sim_netif *netifs;	/* NetworkInterface.N (BORROWED) */
	size_t nnetifs;
	const char *cr_id;		/* CapacityReservationTarget.CapacityReservationId */
	const char *cr_group_arn;	/* ...Target.CapacityReservationResourceGroupArn */
	enum gb_sim_cr_pref cr_pref;
	bool capacity_block;		/* InstanceMarketOptions.MarketType=capacity-block */
};

struct gb_sim_filter {
	const char *name;
	const char *const *values;
	size_t nvalues;
};

struct gb_sim_query {
	const char *const *ids;		/* InstanceId.N / ZoneName.N */
	size_t nids;
	const struct gb_sim_filter *filters;
	size_t nfilters;
	const char *const *ids2;	/* GroupId.N of DescribePlacementGroups */
	size_t nids2;
	long max_results;		/* 0: all, no paging */
	const char *next_token;		/* NULL: from the start */
};

#define GB_SIM_TOKEN_MAX 48

struct gb_sim_state_change {
	const struct gb_sim_instance *inst;
	enum gb_sim_state prev, cur;
};

enum gb_sim_location {
	GB_SIM_LOC_REGION = 0,
	GB_SIM_LOC_AZ,
	GB_SIM_LOC_AZ_ID,
};

struct gb_sim_offering {
	const char *instance_type;
	const char *location;
};

/* Capacity pools of one (AZ, instance type): On-Demand and Spot. */
struct gb_sim_pool {
	const struct gb_sc_region *region;
	const struct gb_sc_az *az;
	const struct gb_itype *type;
	long total;			/* On-Demand instances the pool can hold now */
	long used;			/* pending, running or shutting-down */
	bool spot;			/* the scenario gives Spot for it */
	long spot_total, spot_used;	/* the same for Spot */
	double spot_price;		/* USD per hour */
};

struct gb_sim_subnet {
	const struct gb_sc_subnet *sn;
	const struct gb_sc_az *az;
	uint32_t size;			/* addresses in the CIDR */
	uint32_t used;			/* allocated private IPs */
	uint32_t hint;			/* lowest possibly free offset */
	uint8_t *bits;
};

/* What a region's instances count against its quotas. */
struct gb_sim_usage {
	long instances;				/* On-Demand */
	long vcpus[GB_ITYPE_BUCKET_COUNT];	/* On-Demand */
	long spot_vcpus[GB_ITYPE_BUCKET_COUNT];
};

/*
 * Build the simulated cloud of [sc] (BORROWED: must outlive the result).
 * OUT *out NEW (gb_sim_destroy).
 */
gb_err_t gb_sim_create(const struct gb_scenario *sc, gb_sim_t **out,
		       gb_error_t *err);
void gb_sim_destroy(gb_sim_t *sim);

/* Apply everything due by [now]. */
void gb_sim_advance(gb_sim_t *sim, double now);

/*
 * RunInstances in [region].  On success *out is the reservation (the
 * original one for a repeated ClientToken).  RET GB_E_OK or an error class
 * (GB_E_CAPACITY, GB_E_QUOTA, GB_E_CLOUDCONFIG, GB_E_INVALID) with [e] set.
 *
 * l->spot: the Spot pool instead (InsufficientInstanceCapacity "There is
 * no Spot capacity available that matches your request." when fewer than
 * MinCount fit), the Spot vCPU quota instead (MaxSpotInstanceCountExceeded),
 * and SpotMaxPriceTooLow when l->spot_max_price is below the pool's price.
 *
 * l->cr_id / l->cr_group_arn: that reservation's slots only (fewer than
 * MinCount: ReservationCapacityExceeded), of the launch's type and AZ, active
 * (InvalidParameterValue otherwise); a Capacity Block only with
 * l->capacity_block.  l->cr_pref: none skips open reservations,
 * capacity-reservations-only uses nothing else.
 *
 * l->dry_run: every check a launch makes up to the point where capacity
 * is taken (parameters, image, key pair, security groups, instance
 * profile, subnet or AZ, the type offered there), then GB_E_CANCELLED with
 * 412 DryRunOperation.  Quotas, capacity, free addresses and the Spot
 * price are not looked at (EC2 answers a dry run without reserving
 * anything), the ClientToken is neither looked up nor recorded, nothing
 * changes.
 */
gb_err_t gb_sim_run_instances(gb_sim_t *sim, const char *region,
			      const struct gb_sim_launch *l, double now,
			      struct gb_sim_reservation **out,
			      struct gb_sim_error *e);

/*
 * DescribeInstances.  OUT *out NEW array (free()) of BORROWED instances in
 * creation order; [next] receives the NextToken or "" at the end.
 */
gb_err_t gb_sim_describe_instances(gb_sim_t *sim, const char *region,
				   const struct gb_sim_query *q, double now,
				   struct gb_sim_instance ***out, size_t *n,
				   char next[GB_SIM_TOKEN_MAX],
				   struct gb_sim_error *e);

/*
 * TerminateInstances: all ids exist in [region] (and are visible) or
 * nothing happens. OUT *out NEW.
 */
gb_err_t gb_sim_terminate_instances(gb_sim_t *sim, const char *region,
				    const char *const *ids, size_t nids,
				    bool dry_run, double now,
				    struct gb_sim_state_change **out, size_t *n,
				    struct gb_sim_error *e);

/* CreateTags on instances of [region]; a key given again replaces the value. */
gb_err_t gb_sim_create_tags(gb_sim_t *sim, const char *region,
			    const char *const *ids, size_t nids,
			    const struct gb_sim_kv *tags, size_t ntags,
			    bool dry_run, double now, struct gb_sim_error *e);

/* DescribeInstanceTypeOfferings (filters instance-type, location). OUT *out NEW. */
gb_err_t gb_sim_describe_offerings(gb_sim_t *sim, const char *region,
				   enum gb_sim_location loc,
				   const struct gb_sim_query *q,
				   struct gb_sim_offering **out, size_t *n,
				   char next[GB_SIM_TOKEN_MAX],
				   struct gb_sim_error *e);

/*
 * DescribeAvailabilityZones (ZoneName.N in q->ids; filters zone-name,
 * zone-id, region-name, state).  OUT *out NEW.
 */
gb_err_t gb_sim_describe_azs(gb_sim_t *sim, const char *region,
			     const struct gb_sim_query *q,
			     const struct gb_sc_az ***out, size_t *n,
			     struct gb_sim_error *e);

/*
 * Eventual consistency (EC2's "Eventual consistency in the Amazon EC2
 * API"), off when both are 0.  For [invisible] seconds after its launch
 * an instance is unknown to every call but the RunInstances that made it
 * (and its idempotent repeats): DescribeInstances does not list it, and
 * naming it in InstanceId.N / ResourceId.N (DescribeInstances,
 * TerminateInstances, CreateTags) fails the whole call with
 * InvalidInstanceID.NotFound.  For [no_private_ip] seconds DescribeInstances
 * shows it without privateIpAddress and privateDnsName (RunInstances
 * answers with them).  Simulated seconds; from scenario "consistency",
 * changed through the control interface.
 */
struct gb_sim_consistency {
	double invisible;
	double no_private_ip;
};

void gb_sim_consistency_set(gb_sim_t *sim, const struct gb_sim_consistency *c);
void gb_sim_consistency_get(const gb_sim_t *sim, struct gb_sim_consistency *c);
/* RET whether calls other than RunInstances know [i] at [now]. */
bool gb_sim_instance_visible(const gb_sim_t *sim, const struct gb_sim_instance *i,
			     double now);
/* RET whether DescribeInstances shows [i]'s private address at [now]. */
bool gb_sim_instance_shows_ip(const gb_sim_t *sim, const struct gb_sim_instance *i,
			      double now);

/*
 * DescribeInstanceTypes: InstanceType.N in q->ids (an unknown one is
 * InvalidInstanceType), filters (instance-type, current-generation,
 * bare-metal, hypervisor, vcpu-info.default-vcpus, .default-cores,
 * .default-threads-per-core, memory-info.size-in-mib,
 * processor-info.supported-architecture, network-info.efa-supported,
 * .ena-support, .maximum-network-cards, .maximum-network-interfaces,
 * .efa-info.maximum-efa-interfaces; EC2 has no GPU filter), MaxResults
 * 5..100 and NextToken.  Only the types with a catalog entry.  OUT *out NEW.
 */
gb_err_t gb_sim_describe_itypes(gb_sim_t *sim, const char *region,
				const struct gb_sim_query *q,
				const struct gb_itype ***out, size_t *n,
				char next[GB_SIM_TOKEN_MAX], struct gb_sim_error *e);

/* RET the value of filter [name] of [t] (a static or [buf]), NULL: none. */
const char *gb_sim_itype_value(const struct gb_itype *t, const char *name,
			       char *buf, size_t n);

/*
 * CreatePlacementGroup [name] with [strategy] in [region]: unique per
 * region (InvalidPlacementGroup.Duplicate), at most the region's
 * placement-group limit (PlacementGroupLimitExceeded).  OUT *out BORROWED.
 */
gb_err_t gb_sim_create_pgroup(gb_sim_t *sim, const char *region, const char *name,
			      const char *strategy, const struct gb_sim_kv *tags,
			      size_t ntags, bool dry_run, double now,
			      const struct gb_sim_pgroup **out, struct gb_sim_error *e);

/* The group's ARN into [buf]. */
void gb_sim_pgroup_arn(const gb_sim_t *sim, const struct gb_sim_pgroup *g, char *buf,
		       size_t n);

/* DeletePlacementGroup: InvalidPlacementGroup.Unknown / .InUse. */
gb_err_t gb_sim_delete_pgroup(gb_sim_t *sim, const char *region, const char *name,
			      bool dry_run, double now, struct gb_sim_error *e);

/*
 * DescribePlacementGroups: GroupName.N in q->ids, GroupId.N in q->ids2
 * (each must exist: InvalidPlacementGroup.Unknown /
 * InvalidPlacementGroupId.Malformed / .NotFound), filters group-name,
 * group-arn, strategy, state, tag:KEY, tag-key.  OUT *out NEW array of
 * BORROWED.
 */
gb_err_t gb_sim_describe_pgroups(gb_sim_t *sim, const char *region,
				 const struct gb_sim_query *q, double now,
				 const struct gb_sim_pgroup ***out, size_t *n,
				 struct gb_sim_error *e);

/*
 * DescribeSecurityGroups: GroupId.N in q->ids (InvalidGroup.NotFound), or
 * the region's groups paged by MaxResults (5..1000) / NextToken.
 * OUT *out NEW array of indexes into the region's security_groups.
 */
gb_err_t gb_sim_describe_sgroups(gb_sim_t *sim, const char *region,
				 const struct gb_sim_query *q, size_t **out, size_t *n,
				 char next[GB_SIM_TOKEN_MAX], struct gb_sim_error *e);

/*
 * DescribeCapacityReservations: CapacityReservationId.N in q->ids (each must
 * exist: InvalidCapacityReservationId.Malformed / .NotFound; not with
 * MaxResults or NextToken), filters instance-type, availability-zone, state,
 * instance-match-criteria, instance-platform, tenancy, end-date-type,
 * owner-id; MaxResults 1..1000.  OUT *out NEW array of BORROWED.
 */
gb_err_t gb_sim_describe_crs(gb_sim_t *sim, const char *region,
			     const struct gb_sim_query *q, double now,
			     const struct gb_sim_cr ***out, size_t *n,
			     char next[GB_SIM_TOKEN_MAX], struct gb_sim_error *e);

/* DescribeCapacityBlockOfferings: what is asked (0 / NULL: not given). */
struct gb_sim_cb_query {
	const char *instance_type;
	long count;
	long hours;			/* CapacityDurationHours (required) */
	double start_range, end_range;	/* simulated seconds; < 0: not given */
	long max_results;
	const char *next_token;
};

struct gb_sim_cb_offering {
	const struct gb_sc_cb_offer *sc;
	long count;			/* what was asked, else the scenario's */
	double fee;			/* USD for [count] instances */
};

/*
 * The region's capacity_block_offerings that fit [q] (type, at least
 * q->count instances, exactly q->hours, starting at or after
 * start_range, ending at or before end_range) and start after [now].
 * OUT *out NEW.
 */
gb_err_t gb_sim_describe_cb_offerings(gb_sim_t *sim, const char *region,
				      const struct gb_sim_cb_query *q, double now,
				      struct gb_sim_cb_offering **out, size_t *n,
				      char next[GB_SIM_TOKEN_MAX],
				      struct gb_sim_error *e);

/* DescribeSpotPriceHistory: what is asked (0 / NULL: not given). */
struct gb_sim_spot_query {
	const char *const *types;	/* InstanceType.N */
	size_t ntypes;
	const char *const *products;	/* ProductDescription.N */
	size_t nproducts;
	const char *az;			/* AvailabilityZone */
	bool has_start, has_end;
	double start, end;		/* StartTime, EndTime: wall-clock epoch s */
	const struct gb_sim_filter *filters;
	size_t nfilters;
	long max_results;
	const char *next_token;
};

/* One price change of one Spot pool. */
struct gb_sim_spot_price {
	const struct gb_sim_pool *pool;
	double at;			/* wall-clock epoch seconds */
};

/* The Linux/UNIX Spot product: the only one the simulator prices. */
#define GB_SIM_SPOT_PRODUCT "Linux/UNIX"

/*
 * The history of the region's Spot pools (the scenario's spot: price, in
 * effect since simulated time 0) that fit [q]: type, product, AZ, set by
 * EndTime (the
 * price in effect at StartTime is listed, as EC2 lists the last change
 * before it), filters availability-zone, availability-zone-id,
 * instance-type, product-description, spot-price (as written, "%.6f"),
 * timestamp ("Mon Mar 02 09:15:00 UTC 2026"), all with wildcards.  An
 * unknown AZ, type or product, or EndTime before StartTime, is
 * InvalidParameterValue.  OUT *out NEW.
 */
gb_err_t gb_sim_describe_spot_prices(gb_sim_t *sim, const char *region,
				     const struct gb_sim_spot_query *q, double now,
				     struct gb_sim_spot_price **out, size_t *n,
				     char next[GB_SIM_TOKEN_MAX], struct gb_sim_error *e);

/* RET [p]'s price as EC2 writes it ("2.718400") into [buf]. */
const char *gb_sim_spot_price_text(const struct gb_sim_pool *p, char *buf, size_t n);

/* RET [t] as EC2's timestamp filter reads it ("Mon Mar 02 09:15:00 UTC 2026"). */
const char *gb_sim_spot_time_text(double t, char *buf, size_t n);

/* What POST /_sim/interrupt schedules. */
enum gb_sim_interrupt {
	GB_SIM_INTERRUPT_SPOT = 0,		/* spot/instance-action: terminate */
	GB_SIM_INTERRUPT_REBALANCE,		/* events/recommendations/rebalance */
};

/*
 * An EC2 interruption notice for instance [id] (any region, pending or
 * running, else GB_E_NOTFOUND), [in] seconds (>= 0) from [now].
 * GB_SIM_INTERRUPT_SPOT: a Spot instance only (GB_E_INVALID otherwise);
 * the instance-action is visible at once with its time now + in, and at
 * that time the instance is terminated as EC2 reclaims Spot capacity:
 * shutting-down then terminated like TerminateInstances, StateReason
 * Server.SpotInstanceTermination, its capacity given back.  A second
 * notice moves the time.  GB_SIM_INTERRUPT_REBALANCE: the rebalance
 * recommendation, visible from now + in (its noticeTime); nothing ends.
 * The notices are applied by gb_sim_advance(), so by any clock movement.
 * OUT *at the notice's time (simulated seconds).
 */
gb_err_t gb_sim_interrupt(gb_sim_t *sim, const char *id, enum gb_sim_interrupt kind,
			  double in, double now, double *at, gb_error_t *err);

/* RET whether [region] exists in the scenario. */
bool gb_sim_has_region(const gb_sim_t *sim, const char *region);

/*
 * Capacity control: set the pool of ([az], [type]) so that [n] instances
 * fit from now on (available) or to a total of [n] (total = used + free);
 * [spot]: its Spot pool (which the scenario must give).
 */
gb_err_t gb_sim_capacity_set(gb_sim_t *sim, const char *az, const char *type,
			     bool spot, long n, bool available, gb_error_t *err);

/* Read-only views for the control interface. RET BORROWED. */
const struct gb_sim_pool *gb_sim_pools(const gb_sim_t *sim, size_t *n);
const struct gb_sim_subnet *gb_sim_subnets(const gb_sim_t *sim, size_t *n);
struct gb_sim_instance *const *gb_sim_instances(const gb_sim_t *sim, size_t *n);
const struct gb_sim_usage *gb_sim_usage(const gb_sim_t *sim, const char *region);

/*
 * State-change events, for the boot hook.  Off by default (nothing is
 * queued); when on, every pending->running and ->shutting-down change is.
 */
enum gb_sim_event_kind {
	GB_SIM_EVENT_RUNNING = 0,
	GB_SIM_EVENT_SHUTTING_DOWN,
};

struct gb_sim_event {
	enum gb_sim_event_kind kind;
	char id[GB_SIM_ID_MAX];
	char ip[16];
	const char *region;		/* BORROWED from the scenario */
	const char *az;
	const char *instance_type;	/* BORROWED from the catalog */
	struct gb_sim_tag *tags;	/* copies */
	size_t ntags;
	int launch_index;		/* amiLaunchIndex in its reservation */
	char *user_data;		/* copy, or NULL */
	size_t user_data_len;
};

void gb_sim_events_enable(gb_sim_t *sim, bool on);

/* Move the queued events to *out (NEW, gb_sim_events_free). RET count. */
size_t gb_sim_events_take(gb_sim_t *sim, struct gb_sim_event **out);
void gb_sim_events_free(struct gb_sim_event *ev, size_t n);

/* Free tags made by the API layer or by events. */
void gb_sim_tags_free(struct gb_sim_tag *tags, size_t n);

/* A fresh request id (UUID form) from the scenario's seed. */
void gb_sim_request_id(gb_sim_t *sim, char out[40]);

/* Wall-clock epoch seconds that simulated time 0 stands for. */
void gb_sim_set_epoch(gb_sim_t *sim, double epoch);
double gb_sim_epoch(const gb_sim_t *sim);

/* Fill [e]. RET [e]->status. */
int gb_sim_error_set(struct gb_sim_error *e, int status, const char *code,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif /* GB_CLOUDSIM_SIM_H */
