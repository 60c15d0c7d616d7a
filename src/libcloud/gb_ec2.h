/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_ec2.h - EC2 Query API client (Version 2016-11-15): RunInstances,
 * DescribeInstances, TerminateInstances, DescribeInstanceTypeOfferings,
 * CreateTags, DescribeAvailabilityZones, DescribeInstanceTypes,
 * Create/Delete/DescribePlacementGroups, DescribeSecurityGroups,
 * DescribeCapacityReservations, DescribeCapacityBlockOfferings,
 * DescribeSpotPriceHistory
 *
 * Requests are "POST /" with an application/x-www-form-urlencoded body
 * ("Action=...&Version=2016-11-15&..."; lists 1-based: SecurityGroupId.1,
 * Filter.1.Value.1), signed with SigV4 (service "ec2").  Responses are XML,
 * parsed namespace-agnostically (gb_ec2_xml.h).
 *
 * Errors.  Every action returns GB_E_OK or:
 *  - an AWS error, read from the <Response><Errors><Error> envelope
 *    whatever the HTTP status (InsufficientInstanceCapacity arrives as 500),
 *    and classified (gb_ec2_classify): GB_E_CAPACITY, GB_E_QUOTA,
 *    GB_E_THROTTLE, GB_E_CLOUDCONFIG, GB_E_AUTH (classes AUTH and REGION)
 *    or GB_E_TRANSIENT;
 *  - GB_E_TIMEOUT or GB_E_HTTP when no HTTP answer came back (after the
 *    retries; ae->cls is TRANSIENT for connect/timeout/IO failures, which
 *    were retried, and CONFIG for TLS, oversized answers or a bad URL,
 *    which were not).  For RunInstances the outcome is then UNKNOWN:
 *    instances may exist; the ClientToken (and the instance tags) let the
 *    caller find out;
 *  - GB_E_PARSE for a success response that cannot be read; GB_E_CLOUD
 *    for one that reads but carries a wrong field (DescribeInstanceTypes,
 *    DescribePlacementGroups, DescribeSecurityGroups, the two capacity
 *    calls, DescribeSpotPriceHistory: a missing name or id, a figure that is not a number, a date
 *    that is not ISO 8601; the text names field and item);
 *  - GB_E_INVALID for bad parameters (nothing is sent), GB_E_AUTH or
 *    GB_E_CONFIG when no credentials can be had, GB_E_NOMEM.
 * The optional struct gb_ec2_error receives the AWS Code, Message,
 * RequestID, HTTP status, class and the number of requests sent; the
 * gb_error_t text has all of it on one line.
 *
 * Retries happen inside the client: THROTTLE and TRANSIENT errors and
 * transport failures that may heal (connect, timeout, connection lost) are
 * retried with exponential back-off and full jitter within the
 * gb_retry_policy (attempts and total time), each retry logged as
 * "ec2_retry".  CAPACITY, QUOTA, CONFIG, AUTH and REGION are returned at
 * once (the orchestrator decides), except that an AuthFailure/
 * ExpiredToken-like code invalidates the credentials and retries once.  Every action here is
 * idempotent: RunInstances always carries a ClientToken (generated when
 * the caller gives none) and every retry resends the very same body, so a
 * retried launch cannot launch twice.
 *
 * Ownership: results are NEW and freed with their *_free function; every
 * string in them is NEW inside the result.  A string field is NULL when the
 * response did not have that element, "" when the element was empty.
 * A gb_ec2_t is not thread-safe (it owns one HTTP connection).
 */
#ifndef GB_LIBCLOUD_GB_EC2_H
#define GB_LIBCLOUD_GB_EC2_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_creds.h"
#include "gb_err.h"
#include "gb_http.h"
#include "gb_retry.h"
#include "gb_str.h"

#define GB_EC2_API_VERSION "2016-11-15"
#define GB_EC2_SERVICE "ec2"
#define GB_EC2_TERMINATE_BATCH 1000	/* TerminateInstances: ids per call */
#define GB_EC2_CLIENT_TOKEN_MAX 64	/* ASCII characters */
#define GB_EC2_USER_DATA_MAX 16384	/* bytes before base64 */
#define GB_EC2_DEFAULT_MAX_PAGES 100
#define GB_EC2_INSTANCE_TYPES_MAX 100	/* DescribeInstanceTypes: InstanceType.N */
#define GB_EC2_INSTANCE_TYPES_PAGE 100	/* its MaxResults (5..100) */
#define GB_EC2_SECURITY_GROUPS_PAGE 1000	/* DescribeSecurityGroups MaxResults (5..1000) */
#define GB_EC2_CAPACITY_RESERVATIONS_PAGE 1000	/* DescribeCapacityReservations MaxResults */
#define GB_EC2_CAPACITY_RESERVATIONS_MAX 1000	/* CapacityReservationId.N per call */
#define GB_EC2_SPOT_PRICE_PAGE 1000	/* DescribeSpotPriceHistory MaxResults (1..1000) */
#define GB_EC2_PRODUCT_LINUX "Linux/UNIX"	/* the ProductDescription gpuburst launches */

/* ---- errors and their classes ------------------------------------------ */

enum gb_ec2_class {
	GB_EC2_CLASS_NONE = 0,	/* no error */
	GB_EC2_CLASS_CAPACITY,	/* no capacity here now: try another pool */
	GB_EC2_CLASS_QUOTA,	/* account limit in this region: skip it */
	GB_EC2_CLASS_THROTTLE,	/* request rate: back off (retried inside) */
	GB_EC2_CLASS_CONFIG,	/* the request is wrong: abort it */
	GB_EC2_CLASS_AUTH,	/* credentials, the same everywhere: abort */
	GB_EC2_CLASS_TRANSIENT,	/* server-side hiccup (retried inside) */
	GB_EC2_CLASS_REGION,	/* the account may not use this region:
				 * skip it (OptInRequired, PendingVerification,
				 * AuthFailure, UnauthorizedOperation) */
	GB_EC2_CLASS_ADDRESSES,	/* the subnet has no free address: another
				 * subnet (InsufficientFreeAddressesInSubnet) */
	GB_EC2_CLASS_UNSUPPORTED,	/* the AZ cannot launch the type: another
					 * AZ (Unsupported) */
	GB_EC2_CLASS_IDEMPOTENT,	/* the ClientToken belongs to an earlier
					 * request (IdempotentParameterMismatch,
					 * IdempotentInstanceTerminated): a config
					 * error, unless a re-sent attempt's */
};

/*
 * The EC2 codes gpuburst itself names (in results, reasons and capacity
 * memory), so that no module spells them by hand.
 */
#define GB_EC2_CODE_ICE "InsufficientInstanceCapacity"
#define GB_EC2_CODE_VCPU_LIMIT "VcpuLimitExceeded"
#define GB_EC2_CODE_THROTTLED "RequestLimitExceeded"
#define GB_EC2_CODE_AUTH_FAILURE "AuthFailure"
#define GB_EC2_CODE_NOT_VISIBLE "InvalidInstanceID.NotFound"
/* placement groups (CreatePlacementGroup, DeletePlacementGroup, RunInstances) */
#define GB_EC2_CODE_PG_DUPLICATE "InvalidPlacementGroup.Duplicate"
#define GB_EC2_CODE_PG_IN_USE "InvalidPlacementGroup.InUse"
#define GB_EC2_CODE_PG_UNKNOWN "InvalidPlacementGroup.Unknown"
#define GB_EC2_CODE_PG_LIMIT "PlacementGroupLimitExceeded"
/*
 * RunInstances with network interfaces the type cannot take: an EFA on a
 * type without EFA, more EFAs than it has, two parameters that exclude
 * each other (InvalidParameterCombination); a NetworkCardIndex or
 * DeviceIndex beyond the type's cards (InvalidParameterValue).
 */
#define GB_EC2_CODE_PARAM_COMBINATION "InvalidParameterCombination"
#define GB_EC2_CODE_PARAM_VALUE "InvalidParameterValue"
/*
 * The capacity ladder: a targeted reservation (ODCR or Capacity Block)
 * with no instance left (ReservationCapacityExceeded, CAPACITY: of that
 * reservation only); a reservation id EC2 does not know
 * (InvalidCapacityReservationId.NotFound, CONFIG); spot-only refusals
 * that say nothing of on-demand capacity: a price cap below the spot
 * price (SpotMaxPriceTooLow, CAPACITY) and the spot instance count
 * (MaxSpotInstanceCountExceeded, QUOTA).
 */
#define GB_EC2_CODE_RESERVATION_FULL "ReservationCapacityExceeded"
#define GB_EC2_CODE_RESERVATION_UNKNOWN "InvalidCapacityReservationId.NotFound"
#define GB_EC2_CODE_SPOT_PRICE "SpotMaxPriceTooLow"
#define GB_EC2_CODE_SPOT_COUNT "MaxSpotInstanceCountExceeded"

struct gb_ec2_error {
	enum gb_ec2_class cls;
	long http_status;	/* 0 when no HTTP response arrived */
	char code[128];		/* AWS <Code>, "" when none */
	char message[1024];	/* AWS <Message> (truncated) or transport detail */
	char request_id[128];	/* <RequestID>, "" when none */
	int attempts;		/* requests sent, retries included */
	bool known_code;	/* false: class from the default rules */
};

/*
 * Classify an AWS error [code] (may be NULL or "") received with
 * [http_status].  A "Client."/"Server." prefix is ignored.  Codes in the
 * table (shared/research §4 and errors-manifest.tsv, plus the usual
 * throttling/transient codes of the SDKs) get their class and *known =
 * true.  Unknown codes get a default, logged as "ec2_unknown_code":
 * by name first (Insufficient* -> CAPACITY, *Throttl* -> THROTTLE,
 * *LimitExceeded -> QUOTA, Invalid*, Missing*, *.NotFound, *.Malformed ->
 * CONFIG, Unauthorized*, *Expired* -> AUTH: an unknown code is never
 * taken for one region's), else by status (429 ->
 * THROTTLE, 401/403 -> AUTH, 5xx -> TRANSIENT, anything else -> CONFIG:
 * an unknown client error is not worth repeating).  [known] may be NULL.
 */
enum gb_ec2_class gb_ec2_classify(const char *code, long http_status,
				  bool *known);

/*
 * Look [code] up in that table only (no default, nothing logged): RET
 * whether it is known, its class in *cls.
 */
bool gb_ec2_code_class(const char *code, enum gb_ec2_class *cls);

/*
 * RET the gb_err_t of [cls] (GB_E_CAPACITY ...; GB_E_AUTH for AUTH and
 * REGION; GB_E_OK for NONE).
 */
gb_err_t gb_ec2_class_err(enum gb_ec2_class cls);

/* RET static "CAPACITY", "QUOTA", ..., "REGION" ("NONE"). */
const char *gb_ec2_class_name(enum gb_ec2_class cls);

/* RET whether the client retries errors of [cls] (THROTTLE, TRANSIENT). */
bool gb_ec2_class_retryable(enum gb_ec2_class cls);

/* ---- results ------------------------------------------------------------ */

struct gb_ec2_tag {
	char *key;
	char *value;
};

struct gb_ec2_instance {
	char *instance_id;
	char *image_id;
	char *instance_type;
	int state_code;		/* low byte of <instanceState><code>; -1 if absent */
	char *state_name;	/* pending, running, shutting-down, terminated, ... */
	char *availability_zone;
	char *subnet_id;
	char *vpc_id;
	char *private_ip;
	char *public_ip;	/* <ipAddress> */
	char *private_dns;
	char *public_dns;	/* <dnsName> */
	char *key_name;
	char *client_token;
	char *launch_time;	/* as sent: "2026-02-14T08:29:31.000Z" */
	double launch_epoch;	/* the same in epoch seconds; 0 if absent/bad */
	int ami_launch_index;	/* -1 if absent */
	char *lifecycle;	/* <instanceLifecycle>: "spot", or NULL */
	char *state_reason_code;
	char *state_reason_message;
	char *reservation_id;	/* of the enclosing reservation */
	struct gb_ec2_tag *tags;
	size_t n_tags;
};

struct gb_ec2_instance_list {
	struct gb_ec2_instance *v;
	size_t n;
	char *request_id;
	char *reservation_id;	/* RunInstances: the reservation */
	char *owner_id;		/* RunInstances */
	char *client_token;	/* RunInstances: the token that was sent */
	char *next_token;	/* parser output; NULL after Describe* loops */
};

struct gb_ec2_state_change {
	char *instance_id;
	int current_code;	/* -1 if absent */
	char *current_name;
	int previous_code;
	char *previous_name;
};

struct gb_ec2_state_change_list {
	struct gb_ec2_state_change *v;
	size_t n;
	char *request_id;	/* of the last batch */
};

struct gb_ec2_offering {
	char *instance_type;
	char *location_type;	/* region, availability-zone, availability-zone-id */
	char *location;
};

struct gb_ec2_offering_list {
	struct gb_ec2_offering *v;
	size_t n;
	char *request_id;
	char *next_token;
};

struct gb_ec2_az {
	char *zone_name;
	char *zone_id;
	char *state;		/* <zoneState> */
	char *region_name;
};

struct gb_ec2_az_list {
	struct gb_ec2_az *v;
	size_t n;
	char *request_id;
};

/* DescribeInstanceTypes: the figures gpuburst's catalog keeps. */
struct gb_ec2_instance_type {
	char *instance_type;	/* "p5.48xlarge" */
	int vcpus;		/* VCpuInfo.DefaultVCpus */
	int memory_mib;		/* MemoryInfo.SizeInMiB */
	char *arch;		/* the first ProcessorInfo.SupportedArchitectures */
	char *gpu_name;		/* GpuInfo.Gpus[0].Name: "H100"; NULL: no GPU */
	char *gpu_maker;	/* GpuInfo.Gpus[0].Manufacturer: "NVIDIA" */
	int gpus;		/* GpuInfo.Gpus[0].Count */
	int gpu_memory_mib;	/* GpuInfo.Gpus[0].MemoryInfo.SizeInMiB (per GPU) */
	int gpu_total_memory_mib; /* GpuInfo.TotalGpuMemoryInMiB */
	bool efa;		/* NetworkInfo.EfaSupported */
	int efa_max_interfaces;	/* NetworkInfo.EfaInfo.MaximumEfaInterfaces */
	int network_cards;	/* NetworkInfo.MaximumNetworkCards */
	int max_interfaces;	/* NetworkInfo.MaximumNetworkInterfaces */
	bool cluster_placement;	/* PlacementGroupInfo.SupportedStrategies has "cluster" */
};

struct gb_ec2_instance_type_list {
	struct gb_ec2_instance_type *v;
	size_t n;
	char *request_id;
	char *next_token;
};

/* Placement groups (Create/DescribePlacementGroups). */
struct gb_ec2_placement_group {
	char *group_name;
	char *group_id;
	char *strategy;		/* "cluster", "spread", "partition" */
	char *state;		/* pending, available, deleting, deleted */
	struct gb_ec2_tag *tags;
	size_t n_tags;
};

struct gb_ec2_placement_group_list {
	struct gb_ec2_placement_group *v;
	size_t n;
	char *request_id;
};

/* One rule of a security group (DescribeSecurityGroups). */
struct gb_ec2_sg_permission {
	char *ip_protocol;	/* "-1": all traffic; "tcp", "udp", ... */
	int from_port, to_port;	/* -1 when absent */
	char **group_ids;	/* UserIdGroupPairs' GroupId, NULL-terminated */
	size_t n_group_ids;
	char **cidrs;		/* IpRanges' CidrIp, NULL-terminated */
	size_t n_cidrs;
};

struct gb_ec2_security_group {
	char *group_id;
	char *group_name;
	char *vpc_id;
	struct gb_ec2_sg_permission *ingress;	/* ipPermissions */
	size_t n_ingress;
	struct gb_ec2_sg_permission *egress;	/* ipPermissionsEgress */
	size_t n_egress;
};

struct gb_ec2_security_group_list {
	struct gb_ec2_security_group *v;
	size_t n;
	char *request_id;
	char *next_token;
};

/*
 * DescribeCapacityReservations: one On-Demand Capacity Reservation or
 * Capacity Block (reservation_type "capacity-block").  Times are epoch
 * seconds, 0 when absent (end_date 0: no end, EndDateType unlimited).
 */
struct gb_ec2_capacity_reservation {
	char *id;			/* capacityReservationId: "cr-..." */
	char *arn;			/* capacityReservationArn */
	char *instance_type;
	char *availability_zone;
	char *platform;			/* instancePlatform: "Linux/UNIX" */
	char *tenancy;			/* "default", "dedicated" */
	char *state;			/* active, expired, cancelled, pending,
					 * failed, scheduled, payment-pending,
					 * payment-failed, assessing, delayed,
					 * unsupported */
	char *reservation_type;		/* "default" or "capacity-block"; NULL:
					 * absent (a default one) */
	char *match_criteria;		/* instanceMatchCriteria: "open", "targeted" */
	char *end_date_type;		/* "unlimited", "limited" */
	int total;			/* totalInstanceCount */
	int available;			/* availableInstanceCount */
	double start_date;		/* startDate */
	double end_date;		/* endDate */
	struct gb_ec2_tag *tags;
	size_t n_tags;
};

struct gb_ec2_capacity_reservation_list {
	struct gb_ec2_capacity_reservation *v;
	size_t n;
	char *request_id;
	char *next_token;
};

/* DescribeCapacityBlockOfferings: a Capacity Block that can be bought. */
struct gb_ec2_capacity_block_offering {
	char *id;			/* capacityBlockOfferingId */
	char *instance_type;
	char *availability_zone;
	int count;			/* instanceCount */
	double start_date, end_date;	/* epoch seconds */
	int duration_hours;		/* capacityBlockDurationHours */
	char *upfront_fee;		/* upfrontFee, as sent ("1234.56") */
	char *currency;			/* currencyCode: "USD" */
	char *tenancy;
};

struct gb_ec2_capacity_block_offering_list {
	struct gb_ec2_capacity_block_offering *v;
	size_t n;
	char *request_id;
	char *next_token;
};

/*
 * DescribeSpotPriceHistory: one price change of one Spot pool (EC2
 * SpotPrice).  Every field is there: the parser refuses an item without
 * one.
 */
struct gb_ec2_spot_price {
	char *availability_zone;
	char *instance_type;
	char *product_description;	/* "Linux/UNIX", ... */
	double price;			/* spotPrice: USD per hour */
	double timestamp;		/* epoch seconds the price took effect */
};

struct gb_ec2_spot_price_list {
	struct gb_ec2_spot_price *v;
	size_t n;
	char *request_id;
	char *next_token;
};

/* Free a result and everything in it; NULL is accepted. */
void gb_ec2_instance_list_free(struct gb_ec2_instance_list *l);
void gb_ec2_state_change_list_free(struct gb_ec2_state_change_list *l);
void gb_ec2_offering_list_free(struct gb_ec2_offering_list *l);
void gb_ec2_az_list_free(struct gb_ec2_az_list *l);
void gb_ec2_instance_type_list_free(struct gb_ec2_instance_type_list *l);
void gb_ec2_placement_group_list_free(struct gb_ec2_placement_group_list *l);
void gb_ec2_security_group_list_free(struct gb_ec2_security_group_list *l);
void gb_ec2_capacity_reservation_list_free(struct gb_ec2_capacity_reservation_list *l);
void gb_ec2_capacity_block_offering_list_free(struct gb_ec2_capacity_block_offering_list *l);
void gb_ec2_spot_price_list_free(struct gb_ec2_spot_price_list *l);

/* RET BORROWED value of tag [key] of [inst], or NULL. */
const char *gb_ec2_instance_tag(const struct gb_ec2_instance *inst,
				const char *key);

/* ---- request parameters -------------------------------------------------- */

struct gb_ec2_kv {
	const char *key;
	const char *value;
};

struct gb_ec2_tag_spec {
	const char *resource_type;	/* "instance", "volume", ... */
	const struct gb_ec2_kv *tags;
	size_t n_tags;
};

struct gb_ec2_filter {
	const char *name;		/* "instance-type", "tag:gpuburst:cluster" */
	const char *const *values;
	size_t n_values;
};

/*
 * NetworkInterface.N of RunInstances.  With interfaces the subnet and the
 * security groups go on each interface (EC2 refuses them at top level too).
 */
struct gb_ec2_net_if {
	int device_index;			/* .DeviceIndex */
	int network_card_index;			/* .NetworkCardIndex */
	const char *interface_type;		/* .InterfaceType: "efa", "efa-only",
						 * "interface"; NULL: omitted */
	const char *subnet_id;			/* .SubnetId */
	const char *const *security_group_ids;	/* .SecurityGroupId.M */
	size_t n_security_group_ids;
	bool delete_on_termination;		/* .DeleteOnTermination */
};

struct gb_ec2_run_params {
	const char *image_id;			/* required */
	const char *instance_type;		/* required */
	int min_count;				/* 1 <= min_count <= max_count */
	int max_count;
	const char *subnet_id;
	const char *availability_zone;		/* Placement.AvailabilityZone */
	const char *const *security_group_ids;	/* SecurityGroupId.N */
	size_t n_security_group_ids;
	const char *key_name;
	const char *iam_instance_profile_name;	/* IamInstanceProfile.Name */
	const char *iam_instance_profile_arn;	/* IamInstanceProfile.Arn */
	const char *client_token;		/* NULL: generated ("gb-" + hex) */
	const struct gb_ec2_tag_spec *tag_specs; /* TagSpecification.N */
	size_t n_tag_specs;
	const void *user_data;			/* raw bytes; base64 is done here */
	size_t user_data_len;
	bool spot;				/* InstanceMarketOptions.MarketType=spot */
	const char *spot_instance_type;		/* "one-time" / "persistent" / NULL */
	const char *spot_max_price;		/* NULL: on-demand price cap */
	const char *spot_interruption;		/* "terminate" / "stop" / "hibernate" / NULL */
	bool dry_run;				/* DryRun=true: gb_ec2_run_instances_dry_run() */
	bool metadata_tags;			/* MetadataOptions.InstanceMetadataTags=enabled:
						 * the instance reads its tags from the IMDS */
	const struct gb_ec2_net_if *net_ifs;	/* NetworkInterface.N; then subnet_id
						 * and security_group_ids must be unset */
	size_t n_net_ifs;
	const char *placement_group;		/* Placement.GroupName */
	/*
	 * CapacityReservationSpecification: at most one of a target
	 * (CapacityReservationTarget.CapacityReservationId or
	 * .CapacityReservationResourceGroupArn) and a preference
	 * (CapacityReservationPreference: "open", "none",
	 * "capacity-reservations-only"); all NULL: omitted.
	 */
	const char *capacity_reservation_id;
	const char *capacity_reservation_group_arn;
	const char *capacity_reservation_preference;
	bool capacity_block;			/* InstanceMarketOptions.MarketType=
						 * capacity-block (with
						 * capacity_reservation_id; not with spot) */
};

/* DescribeCapacityReservations */
struct gb_ec2_capacity_reservations_params {
	const char *const *ids;			/* CapacityReservationId.N (at most
						 * GB_EC2_CAPACITY_RESERVATIONS_MAX) */
	size_t n_ids;
	const struct gb_ec2_filter *filters;	/* Filter.N: instance-type,
						 * availability-zone, state, ... */
	size_t n_filters;
	int max_results;	/* 1..1000; 0: omitted (and never with ids) */
};

/* DescribeCapacityBlockOfferings */
struct gb_ec2_capacity_block_offerings_params {
	const char *instance_type;		/* InstanceType (required) */
	int instance_count;			/* InstanceCount (required, >= 1) */
	int duration_hours;			/* CapacityDurationHours (required:
						 * 24..182 days in whole days, or
						 * 1..13 x 24 h; EC2 checks) */
	double start_range, end_range;		/* StartDateRange, EndDateRange
						 * (epoch s, 0: omitted) */
	int max_results;			/* 1..1000; 0: omitted */
};

/*
 * DescribeSpotPriceHistory.  EC2 answers the price changes between
 * StartTime and EndTime and, for each pool, the last change before
 * StartTime (the price in effect then); without either, the current price
 * of each pool.
 */
struct gb_ec2_spot_price_history_params {
	const char *const *instance_types;	/* InstanceType.N (none: every type) */
	size_t n_instance_types;
	const char *const *product_descriptions; /* ProductDescription.N:
						  * GB_EC2_PRODUCT_LINUX, ... */
	size_t n_product_descriptions;
	const char *availability_zone;		/* AvailabilityZone; NULL: every AZ */
	double start_time, end_time;		/* StartTime, EndTime (epoch s, 0:
						 * omitted; end not before start) */
	const struct gb_ec2_filter *filters;	/* Filter.N: availability-zone,
						 * instance-type, product-description,
						 * spot-price, timestamp */
	size_t n_filters;
	int max_results;			/* 1..1000; 0: omitted (EC2 pages
						 * by 1000) */
};

struct gb_ec2_describe_params {
	const char *const *instance_ids;	/* InstanceId.N */
	size_t n_instance_ids;
	const struct gb_ec2_filter *filters;	/* Filter.N */
	size_t n_filters;
	int max_results;	/* page size 5..1000; 0: omitted (and never with ids) */
};

struct gb_ec2_offerings_params {
	const char *location_type;	/* "availability-zone", "region", ...; NULL: region */
	const struct gb_ec2_filter *filters;
	size_t n_filters;
	int max_results;	/* 5..1000; 0: omitted */
};

/* ---- the client ------------------------------------------------------------ */

typedef struct gb_ec2 gb_ec2_t;

struct gb_ec2_opts {
	const char *region;		/* required, e.g. "us-east-1" */
	const char *endpoint;		/* NULL: https://ec2.<region>.<the suffix of
					 * its partition> (gb_partition.h):
					 * amazonaws.com, amazonaws.com.cn, ... */
	gb_creds_t *creds;		/* BORROWED, required, outlives the client */
	struct gb_http_opts http;	/* timeouts, CA bundle, cap (0: defaults) */
	struct gb_retry_policy retry;	/* 0 fields: defaults */
	int max_pages;			/* Describe* page cap; 0: default */
	/* Seams for tests; NULL: the real thing. */
	void (*sleep)(double seconds, void *ctx);	/* back-off waits */
	double (*mono)(void *ctx);	/* monotonic seconds: retry budget */
	double (*wall)(void *ctx);	/* epoch seconds: X-Amz-Date */
	double (*uniform)(void *ctx);	/* [0, 1): jitter */
	void *seam_ctx;
};

/*
 * Create a client; strings in [o] are copied.  No request is sent.
 * OUT *out NEW, gb_ec2_destroy().
 * RET GB_E_OK; GB_E_INVALID (no region or credentials, bad endpoint, no
 * endpoint for a region in no known partition);
 * GB_E_NOMEM.
 */
gb_err_t gb_ec2_create(const struct gb_ec2_opts *o, gb_ec2_t **out,
		       gb_error_t *err);
void gb_ec2_destroy(gb_ec2_t *c);

/* RET BORROWED region / endpoint URL of [c]. */
const char *gb_ec2_region(const gb_ec2_t *c);
const char *gb_ec2_endpoint(const gb_ec2_t *c);

/* RET BORROWED the proxy [c] goes through, password "***" (gb_http_proxy()), or NULL. */
const char *gb_ec2_proxy(const gb_ec2_t *c);

/*
 * RunInstances.  OUT *out NEW (also its client_token), NULL on failure.
 * MinCount..MaxCount: EC2 launches the largest number it can above
 * MinCount, or nothing (then an InsufficientInstanceCapacity error).
 * p->dry_run must be false (GB_E_INVALID, nothing sent).
 */
gb_err_t gb_ec2_run_instances(gb_ec2_t *c, const struct gb_ec2_run_params *p,
			      struct gb_ec2_instance_list **out,
			      struct gb_ec2_error *ae, gb_error_t *err);

/*
 * RunInstances of [p] with DryRun=true (p->dry_run is ignored): EC2 checks
 * the request as it would a launch (parameters, AMI, subnet, security
 * groups, key pair, instance profile, instance type offered in the AZ, the
 * caller's permissions) and launches nothing.
 * RET GB_E_OK when EC2 answers DryRunOperation (HTTP 412): [ae] then has
 * that code, the status and the RequestID, class NONE, and [err] is
 * cleared.  Otherwise the classified error of gb_ec2_run_instances, with
 * EC2's Code and Message in [ae] and [err] (THROTTLE and TRANSIENT retried
 * first); GB_E_CLOUD when the endpoint ignored DryRun and answered with a
 * reservation: the message names the instances it launched.
 */
gb_err_t gb_ec2_run_instances_dry_run(gb_ec2_t *c,
				      const struct gb_ec2_run_params *p,
				      struct gb_ec2_error *ae, gb_error_t *err);

/*
 * DescribeInstances; follows NextToken until the last page (at most
 * max_pages pages, else GB_E_CLOUD) and returns every instance of every
 * reservation in one list.  [p] may be NULL (everything).
 * OUT *out NEW, NULL on failure (all or nothing).
 */
gb_err_t gb_ec2_describe_instances(gb_ec2_t *c,
				   const struct gb_ec2_describe_params *p,
				   struct gb_ec2_instance_list **out,
				   struct gb_ec2_error *ae, gb_error_t *err);

/*
 * TerminateInstances in batches of GB_EC2_TERMINATE_BATCH ids.
 * OUT *out NEW: the state changes of every batch that succeeded, also when
 * a later batch failed (then the error is returned too); NULL when none
 * did.  An empty id list sends nothing and gives an empty list.
 */
gb_err_t gb_ec2_terminate_instances(gb_ec2_t *c, const char *const *ids,
				    size_t n_ids,
				    struct gb_ec2_state_change_list **out,
				    struct gb_ec2_error *ae, gb_error_t *err);

/*
 * DescribeInstanceTypeOfferings; pagination as DescribeInstances.
 * [p] may be NULL (all types, location type "region").
 */
gb_err_t gb_ec2_describe_instance_type_offerings(
	gb_ec2_t *c, const struct gb_ec2_offerings_params *p,
	struct gb_ec2_offering_list **out, struct gb_ec2_error *ae,
	gb_error_t *err);

/* CreateTags on up to 1000 resources. */
gb_err_t gb_ec2_create_tags(gb_ec2_t *c, const char *const *resource_ids,
			    size_t n_ids, const struct gb_ec2_kv *tags,
			    size_t n_tags, struct gb_ec2_error *ae,
			    gb_error_t *err);

/*
 * DescribeInstanceTypes of [types] (InstanceType.N, may be empty) and
 * [filters] (e.g. "instance-type" with wildcards); pagination as
 * DescribeInstances (MaxResults 100 per page when no types are named; at
 * most GB_EC2_INSTANCE_TYPES_MAX types).  A reply item without
 * instanceType or with a figure that is not a number is GB_E_CLOUD naming
 * the field and the type (gb_ec2_xml_parse_instance_types).
 */
gb_err_t gb_ec2_describe_instance_types(gb_ec2_t *c, const char *const *types,
					size_t n_types,
					const struct gb_ec2_filter *filters,
					size_t n_filters,
					struct gb_ec2_instance_type_list **out,
					struct gb_ec2_error *ae, gb_error_t *err);

/*
 * CreatePlacementGroup [name] with [strategy] ("cluster") and the tags of
 * [spec] (resource type "placement-group"; may be NULL).  EC2's
 * InvalidPlacementGroup.Duplicate is returned as an error like any other:
 * the caller decides whether a group of its own name is its own.
 */
gb_err_t gb_ec2_create_placement_group(gb_ec2_t *c, const char *name,
				       const char *strategy,
				       const struct gb_ec2_tag_spec *spec,
				       struct gb_ec2_error *ae, gb_error_t *err);

/* DeletePlacementGroup [name]. */
gb_err_t gb_ec2_delete_placement_group(gb_ec2_t *c, const char *name,
				       struct gb_ec2_error *ae, gb_error_t *err);

/* DescribePlacementGroups of [names] (GroupName.N) and [filters] (not paginated). */
gb_err_t gb_ec2_describe_placement_groups(gb_ec2_t *c, const char *const *names,
					  size_t n_names,
					  const struct gb_ec2_filter *filters,
					  size_t n_filters,
					  struct gb_ec2_placement_group_list **out,
					  struct gb_ec2_error *ae, gb_error_t *err);

/* DescribeSecurityGroups of [ids] (GroupId.N); paginated when [ids] is empty. */
gb_err_t gb_ec2_describe_security_groups(gb_ec2_t *c, const char *const *ids,
					 size_t n_ids,
					 struct gb_ec2_security_group_list **out,
					 struct gb_ec2_error *ae, gb_error_t *err);

/*
 * DescribeCapacityReservations of [p] (may be NULL: every reservation of
 * the region), paginated as DescribeInstances.  An item without
 * capacityReservationId, or a count or date that does not parse, is
 * GB_E_CLOUD naming the field and the reservation.
 */
gb_err_t gb_ec2_describe_capacity_reservations(
	gb_ec2_t *c, const struct gb_ec2_capacity_reservations_params *p,
	struct gb_ec2_capacity_reservation_list **out,
	struct gb_ec2_error *ae, gb_error_t *err);

/* DescribeCapacityBlockOfferings of [p] (required fields checked here), paginated. */
gb_err_t gb_ec2_describe_capacity_block_offerings(
	gb_ec2_t *c, const struct gb_ec2_capacity_block_offerings_params *p,
	struct gb_ec2_capacity_block_offering_list **out,
	struct gb_ec2_error *ae, gb_error_t *err);

/*
 * DescribeSpotPriceHistory of [p] (may be NULL: every pool's current
 * price), paginated as DescribeInstances (EC2 ends with an empty
 * <nextToken/>).  An item without availabilityZone, instanceType,
 * productDescription, spotPrice or timestamp, a price that is not a
 * positive number or a timestamp that is not ISO 8601 is GB_E_CLOUD naming
 * the field and the item.
 */
gb_err_t gb_ec2_describe_spot_price_history(
	gb_ec2_t *c, const struct gb_ec2_spot_price_history_params *p,
	struct gb_ec2_spot_price_list **out, struct gb_ec2_error *ae,
	gb_error_t *err);

/* DescribeAvailabilityZones (zones of the client's region). */
gb_err_t gb_ec2_describe_availability_zones(gb_ec2_t *c,
					    const struct gb_ec2_filter *filters,
					    size_t n_filters,
					    struct gb_ec2_az_list **out,
					    struct gb_ec2_error *ae,
					    gb_error_t *err);

/* ---- request bodies (used by the client; exposed for tests) ---------------- */

/*
 * Append the form body of a RunInstances with [client_token] (required
 * here) to [out], in this order: Action, Version, ImageId, InstanceType,
 * MinCount, MaxCount, SubnetId, Placement.AvailabilityZone,
 * Placement.GroupName, SecurityGroupId.N, NetworkInterface.N.{DeviceIndex,
 * NetworkCardIndex, InterfaceType, SubnetId, SecurityGroupId.M,
 * DeleteOnTermination}, KeyName, ClientToken, IamInstanceProfile.*,
 * UserData (base64, then form-encoded),
 * MetadataOptions.InstanceMetadataTags, TagSpecification.N.*,
 * InstanceMarketOptions.*, DryRun (only when p->dry_run, "true").
 * With net_ifs, a top-level SubnetId or SecurityGroupId is GB_E_INVALID
 * (EC2: "If you specify a network interface, you must specify any
 * security groups and subnets as part of the network interface"); so is an
 * InterfaceType other than "interface", "efa" or "efa-only", a negative
 * index or an interface without a subnet.
 * RET GB_E_OK or GB_E_INVALID (detail names the parameter); GB_E_NOMEM.
 */
gb_err_t gb_ec2_form_run_instances(const struct gb_ec2_run_params *p,
				   const char *client_token, struct gb_buf *out,
				   gb_error_t *err);

gb_err_t gb_ec2_form_describe_instances(const struct gb_ec2_describe_params *p,
					const char *next_token,
					struct gb_buf *out, gb_error_t *err);

gb_err_t gb_ec2_form_describe_instance_type_offerings(
	const struct gb_ec2_offerings_params *p, const char *next_token,
	struct gb_buf *out, gb_error_t *err);

gb_err_t gb_ec2_form_terminate_instances(const char *const *ids, size_t n_ids,
					 struct gb_buf *out, gb_error_t *err);

gb_err_t gb_ec2_form_create_tags(const char *const *resource_ids, size_t n_ids,
				 const struct gb_ec2_kv *tags, size_t n_tags,
				 struct gb_buf *out, gb_error_t *err);

gb_err_t gb_ec2_form_describe_availability_zones(
	const struct gb_ec2_filter *filters, size_t n_filters,
	struct gb_buf *out, gb_error_t *err);

/*
 * DescribeInstanceTypes: InstanceType.N (at most GB_EC2_INSTANCE_TYPES_MAX),
 * Filter.N, MaxResults (GB_EC2_INSTANCE_TYPES_PAGE, only without
 * InstanceType.N: a list of types is answered on one page), NextToken.
 */
gb_err_t gb_ec2_form_describe_instance_types(const char *const *types,
					     size_t n_types,
					     const struct gb_ec2_filter *filters,
					     size_t n_filters, const char *next_token,
					     struct gb_buf *out, gb_error_t *err);

/* CreatePlacementGroup: GroupName, Strategy, TagSpecification.1.*. */
gb_err_t gb_ec2_form_create_placement_group(const char *name, const char *strategy,
					    const struct gb_ec2_tag_spec *spec,
					    struct gb_buf *out, gb_error_t *err);

/* DeletePlacementGroup: GroupName. */
gb_err_t gb_ec2_form_delete_placement_group(const char *name, struct gb_buf *out,
					    gb_error_t *err);

/* DescribePlacementGroups: GroupName.N, Filter.N. */
gb_err_t gb_ec2_form_describe_placement_groups(const char *const *names,
					       size_t n_names,
					       const struct gb_ec2_filter *filters,
					       size_t n_filters, struct gb_buf *out,
					       gb_error_t *err);

/*
 * DescribeSecurityGroups: GroupId.N; without ids MaxResults
 * (GB_EC2_SECURITY_GROUPS_PAGE) and NextToken instead.
 */
gb_err_t gb_ec2_form_describe_security_groups(const char *const *ids, size_t n_ids,
					      const char *next_token,
					      struct gb_buf *out, gb_error_t *err);

/*
 * DescribeCapacityReservations: CapacityReservationId.N, Filter.N,
 * MaxResults (only without ids), NextToken.
 */
gb_err_t gb_ec2_form_describe_capacity_reservations(
	const struct gb_ec2_capacity_reservations_params *p, const char *next_token,
	struct gb_buf *out, gb_error_t *err);

/*
 * DescribeCapacityBlockOfferings: InstanceType, InstanceCount,
 * CapacityDurationHours, StartDateRange, EndDateRange (ISO 8601 UTC),
 * MaxResults, NextToken.
 */
gb_err_t gb_ec2_form_describe_capacity_block_offerings(
	const struct gb_ec2_capacity_block_offerings_params *p, const char *next_token,
	struct gb_buf *out, gb_error_t *err);

/*
 * DescribeSpotPriceHistory: InstanceType.N, ProductDescription.N,
 * AvailabilityZone, StartTime, EndTime (ISO 8601 UTC), Filter.N,
 * MaxResults, NextToken.
 */
gb_err_t gb_ec2_form_describe_spot_price_history(
	const struct gb_ec2_spot_price_history_params *p, const char *next_token,
	struct gb_buf *out, gb_error_t *err);

/*
 * Write a new client token ("gb-" and 32 random hex digits) into [buf] of
 * at least 36 bytes.  RET GB_E_OK or an error from the random source.
 */
gb_err_t gb_ec2_client_token_new(char *buf, size_t n, gb_error_t *err);

#endif /* GB_LIBCLOUD_GB_EC2_H */
