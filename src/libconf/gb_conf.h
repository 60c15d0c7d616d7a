/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_conf.h - gpuburst.yaml: load, validate, and read the configuration
 *
 * gb_conf_load() turns the YAML file into an immutable struct gb_conf, or
 * reports every problem as "file:line:col: message" and returns nothing:
 * loading is all-or-nothing.  Unknown keys and wrong types are errors.  The
 * structure is public and read-only: consumers hold `const struct gb_conf *`
 * and never modify it; gb_conf_destroy() frees all of it.
 *
 * Keys, types and defaults are documented in gpuburst.yaml(5) and in
 * etc/gpuburst.yaml.example.  Durations accept an integer number of seconds
 * or a string with a unit ("90s", "10m", "2h", "1d").
 *
 * This library links libcommon and libyaml only (the job_submit plugin uses
 * it inside slurmctld): no network, no exit(), no libslurm.
 */
#ifndef GB_LIBCONF_GB_CONF_H
#define GB_LIBCONF_GB_CONF_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_err.h"
#include "gb_log.h"
#include "gb_str.h"

#define GB_CONF_DEFAULT_PATH GB_SYSCONFDIR "/gpuburst/gpuburst.yaml"
#define GB_CONF_ENV_PATH "GPUBURST_CONF"	/* overrides the default path */
#define GB_CONF_ENV_ENVIRONMENT "GPUBURST_ENV"	/* overrides `environment` */

enum gb_env {
	GB_ENV_DEV = 0,
	GB_ENV_STAGING,
	GB_ENV_PROD,
	GB_ENV_COUNT
};

enum gb_mode {
	GB_MODE_MULTI_REGION = 0,	/* fall through to fallback regions */
	GB_MODE_SINGLE_REGION,		/* home region only */
};

/* Launch strategies (liborch implements them; names in gb_conf_strategy_name). */
enum gb_strategy {
	GB_STRATEGY_DEFAULT = 0,	/* the orchestrator's best design */
	GB_STRATEGY_PROBE_FILL,		/* the ancestor's algorithm, exactly */
	GB_STRATEGY_BEST_EFFORT,	/* MinCount=1, MaxCount=remaining */
	GB_STRATEGY_ALL_OR_NOTHING,	/* a job's full count or nothing */
	GB_STRATEGY_COUNT
};

/* Where the nodes of one multi-node job may land. */
enum gb_locality {
	GB_LOCALITY_REGION = 0,		/* one region per job (default) */
	GB_LOCALITY_AZ,			/* one availability zone per job */
	GB_LOCALITY_NONE,		/* anywhere allowed */
};

enum gb_market {
	GB_MARKET_ON_DEMAND = 0,
	GB_MARKET_SPOT,
};

/*
 * A capacity kind: one rung of a nodeset's ladder (capacity:).  Not
 * "enum gb_capacity": struct gb_capacity is libstate's capacity memory, and
 * C gives struct and enum tags one namespace.
 */
enum gb_capacity_kind {
	GB_CAPACITY_ON_DEMAND = 0,
	GB_CAPACITY_SPOT,
	GB_CAPACITY_RESERVATION,	/* On-Demand Capacity Reservations */
	GB_CAPACITY_BLOCK,		/* EC2 Capacity Blocks for ML */
};
#define GB_CAPACITY_COUNT 4

enum gb_planner_kind {
	GB_PLANNER_HEURISTIC = 0,
	GB_PLANNER_LLM,
};

enum gb_llm_provider {
	GB_LLM_NONE = 0,
	GB_LLM_OPENAI,
	GB_LLM_BEDROCK,
	GB_LLM_ANTHROPIC,
};

/* Where in the file a value came from, for later messages. */
struct gb_conf_mark {
	unsigned line, col;		/* 1-based; 0 when built in */
};

/*
 * One rung of a nodeset's capacity ladder.  Only the fields of its kind
 * are set; the others are NULL, 0 or false.
 */
struct gb_conf_rung {
	enum gb_capacity_kind kind;
	char **ids;			/* reservation / capacity_blocks: "cr-...",
					 * NULL-terminated, or NULL */
	size_t n_ids;
	char **resource_groups;		/* reservation: resource group ARNs,
					 * NULL-terminated, or NULL */
	size_t n_resource_groups;
	bool open;			/* reservation: open reservations matching
					 * type and AZ */
	char *max_price;		/* spot: USD per hour as EC2 takes it
					 * ("12.5", normalised); NULL: no cap */
	struct gb_conf_mark mark;	/* where it was written */
};

struct gb_conf_az {
	char *name;			/* "ap-south-1a" */
	char **subnets;			/* NULL-terminated, in rotation order */
	size_t n_subnets;
};

/*
 * EC2: at most 16 security groups per network interface (the quota's
 * ceiling); the config refuses more rather than dropping any.
 */
#define GB_CONF_SECURITY_GROUPS_MAX 16

struct gb_conf_region {
	char *name;			/* "ap-south-1" */
	double lat, lon;		/* built-in default for AWS regions */
	char *endpoint;			/* NULL: cloud.endpoint or the public one */
	char *ami;			/* ImageId */
	char *key_name;			/* NULL: no key pair */
	char **security_groups;		/* NULL-terminated SecurityGroupId.N */
	size_t n_security_groups;	/* <= GB_CONF_SECURITY_GROUPS_MAX */
	char *iam_profile;		/* IamInstanceProfile.Name or NULL */
	char *user_data;		/* template text ({node} ...) or NULL */
	bool user_data_per_node;	/* it names {node}: one instance per
					 * RunInstances call (set at load) */
	bool user_data_munge_key;	/* it names {munge_key} (set at load;
					 * needs cloud.munge_key) */
	int priority;			/* tie-break between equal distances */
	struct gb_conf_az *azs;
	size_t n_azs;
	struct gb_conf_mark mark;
};

struct gb_conf_group {
	char *name;
	char **consumer_regions;	/* NULL-terminated */
	size_t n_consumer_regions;
	char **fallback_regions;	/* NULL-terminated, configured regions */
	size_t n_fallback_regions;
};

/* How the instances of one multi-node job are placed inside an AZ. */
/* What happens to a job held for approval when its approval expires. */
enum gb_held_action {
	GB_HELD_HOLD = 0,		/* stays held, the reason in its comment */
	GB_HELD_CANCEL,			/* cancelled */
};

/* policy.prefer: how the planners order the candidate regions. */
enum gb_prefer {
	GB_PREFER_NEAREST = 0,		/* home, then by distance (default) */
	GB_PREFER_CHEAPEST,		/* by price, unpriced regions last */
	GB_PREFER_NEAREST_WITHIN,	/* by distance among the regions priced
					 * within prefer_within percent of the
					 * cheapest, then the others */
};

/* Who a budget of policy.budgets counts: its one key of user/account/partition. */
enum gb_budget_scope {
	GB_BUDGET_CLUSTER = 0,		/* every job of the cluster */
	GB_BUDGET_ACCOUNT,
	GB_BUDGET_PARTITION,
	GB_BUDGET_USER,
};

/* What happens to a job that would go over a budget. */
enum gb_budget_over {
	GB_BUDGET_HOLD = 0,		/* held for approval (default) */
	GB_BUDGET_REFUSE,		/* refused at submit */
};

/* policy.budgets.NAME (gpuburst.yaml(5), BUDGETS). */
struct gb_conf_budget {
	char *name;			/* the key: messages name the budget */
	char *user, *account, *partition;	/* at most one; none: cluster */
	double monthly;			/* US dollars per calendar month (UTC);
					 * 0: no monthly limit */
	double per_job;			/* US dollars a job may cost; 0: none */
	enum gb_budget_over over;
	/* derived at load */
	enum gb_budget_scope scope;
	const char *who;		/* BORROWED user/account/partition, or
					 * NULL for the cluster */
};

/*
 * The tag keys instances carry for cost attribution (policy.cost_tags);
 * NULL: that tag is not set.  A site activates them as AWS cost
 * allocation tags.
 */
struct gb_conf_cost_tags {
	char *job;			/* default "gpuburst:job" */
	char *user;			/* default "gpuburst:user" */
	char *account;			/* default "gpuburst:account" */
	char *partition;		/* default "gpuburst:partition" */
};

enum gb_placement {
	GB_PLACEMENT_NONE = 0,		/* wherever EC2 puts them (default) */
	GB_PLACEMENT_CLUSTER,		/* a cluster placement group per job */
};

struct gb_conf_nodeset {
	char *name;
	char *nodes;			/* hostlist pattern "g5-[1-64]" */
	char *instance_type;		/* instance_types[0] (set at load) */
	char **instance_types;		/* NULL-terminated, preference order;
					 * `instance_type: X` is [X] */
	size_t n_instance_types;
	bool efa;			/* one EFA interface per network card;
					 * implies locality az */
	enum gb_placement placement;
	char *home_region;		/* a consumer region of some group */
	enum gb_mode mode;
	enum gb_strategy strategy;
	enum gb_locality locality;
	enum gb_market market;		/* GB_MARKET_SPOT exactly when the
					 * ladder is [spot] (set at load) */
	struct gb_conf_rung *capacity;	/* the ladder, in the order tried; never empty:
					 * without capacity: one rung of [market] */
	size_t n_capacity;
	char *partition;		/* Slurm partition, default "gpuburst" */
	struct gb_conf_mark mark;
	struct gb_hostlist *pattern_;	/* private: parsed [nodes] */
};

/*
 * cloud.munge_key: the cluster's munge key, sealed to the instance image's
 * public key for {munge_key} in user data (gb_seal.h).  Checked at load:
 * [file] a regular file of 32 to 1024 bytes (munge's limits) that neither
 * group nor others may read or write; [seal_to] a regular file holding a
 * PEM public key.  A user who may not look into the key's directory (stat
 * fails with EACCES: an admin's gpuburstctl, the job_submit plugin) loads
 * the configuration without the check of [file]; the launch that seals it
 * reads it.
 */
struct gb_conf_munge_key {
	char *file;			/* NULL: not configured */
	char *seal_to;			/* set exactly when [file] is */
};

struct gb_conf_cloud {
	char *provider;			/* "ec2" */
	char *endpoint;			/* default endpoint for every region */
	char *ca_bundle;		/* NULL: the system's */
	char *proxy;			/* "http(s)://[user:pass@]host[:port]";
					 * NULL: direct.  Holds a secret */
	char **no_proxy;		/* NULL-terminated: hosts, domains,
					 * IPs reached directly; or NULL */
	size_t n_no_proxy;
	char *no_proxy_hosts;		/* derived: no_proxy joined by ','
					 * (gb_http_opts.no_proxy_hosts);
					 * NULL when empty */
	char *profile;			/* shared-file profile, NULL: default */
	char *credentials_file;		/* NULL: AWS_SHARED_CREDENTIALS_FILE/~ */
	char *config_file;		/* NULL: AWS_CONFIG_FILE/~ */
	char *access_key_id;		/* explicit credentials (discouraged) */
	char *secret_access_key;
	char *session_token;
	char *role_arn;			/* a role (with one of the next three) */
	char *source_profile;		/* ... whose source is a shared-file profile, */
	char *credential_source;	/* "Environment" / "Ec2InstanceMetadata", */
	char *web_identity_token_file;	/* or a web identity token */
	char *external_id;
	char *role_session_name;	/* NULL: "gpuburst-<epoch>" */
	double duration;		/* role session seconds; 0: STS's 1 h */
	char **credential_process;	/* argv, NULL-terminated, or NULL */
	double process_timeout;		/* seconds, default 30 */
	char *sts_endpoint;		/* NULL: regional (never with endpoint) */
	char *sts_region;		/* NULL: the first region of regions: */
	bool imds;			/* may use IMDSv2 (default true) */
	double connect_timeout;		/* seconds, default 5 */
	double request_timeout;		/* seconds, default 30 */
	int max_retries;		/* THROTTLE/TRANSIENT retries, default 4 */
	double retry_budget;		/* seconds of retrying per call, default 60 */
	struct gb_conf_munge_key munge_key;
};

struct gb_conf_policy {
	int batch_max;			/* default 4 */
	int max_request_nodes;		/* nodes per request, default 1000 */
	int approval_thresholds[GB_ENV_COUNT];	/* default 50, 20, 10 */
	char **allowed_geo_regions;	/* NULL-terminated; empty: no check */
	size_t n_allowed_geo_regions;
	double approval_timeout;	/* seconds; < 0: derive from ResumeTimeout */
	bool manual_resume_needs_approval;	/* jobless power-ups */
	bool approve_at_submit;		/* job_submit holds jobs over the
					 * threshold until approved (default) */
	double submit_approval_timeout;	/* a held job's approval, 24 h */
	enum gb_held_action on_approval_expiry;	/* default hold */
	char **approval_notify;		/* argv, NULL-terminated, or NULL */
	double ice_cooldown;		/* default 600 s */
	double error_cooldown;		/* first retry after AUTH/CONFIG, 900 s */
	double error_cooldown_max;	/* its back-off's ceiling, 6 h */
	double orphan_timeout;		/* default 600 s */
	double request_deadline;	/* stuck requests fail after, default 3600 s */
	double reprobe_window;		/* seconds after a resume request is made
					 * in which pools that answered
					 * InsufficientInstanceCapacity are
					 * asked again; < 0: half of
					 * ResumeTimeout (auto); 0: never */
	double offerings_ttl;		/* default 3600 s */
	double capacity_half_life;	/* default 3600 s */
	double capacity_block_margin;	/* a Capacity Block's nodes drain this
					 * long before it ends, default 40m */
	double capacity_block_wait;	/* a request waits this long for a
					 * Capacity Block of its ladder to
					 * open, default 5m; 0: never */
	double reservation_ttl;		/* DescribeCapacityReservations answers
					 * are reused this long, default 60 s */
	double spot_price_ttl;		/* DescribeSpotPriceHistory answers are
					 * reused this long, default 1h; 0:
					 * asked at every full reconcile */
	double retention;		/* finished requests kept, default
					   90 days; 0: forever ("off") */
	char **allowed_families;	/* default g4dn g5 g5g g6 g6e */
	size_t n_allowed_families;
	struct gb_conf_budget *budgets;	/* policy.budgets, in file order */
	size_t n_budgets;
	struct gb_conf_cost_tags cost_tags;
	enum gb_prefer prefer;		/* default nearest */
	double prefer_within;		/* nearest_within's percent, 0..1000 */
};

struct gb_conf_llm {
	enum gb_llm_provider provider;
	char *endpoint;			/* base URL */
	char *model;
	char *region;			/* bedrock signing region */
	char *api_key_file;		/* bearer / x-api-key source */
	double timeout;			/* seconds, default 5 */
	int max_tokens;			/* default 1024 */
	int max_calls;			/* per request, default 3 */
	double temperature;		/* 0..2, when has_temperature */
	bool has_temperature;		/* set: sent to every provider; unset:
					 * openai none, the others 0 */
};

struct gb_conf_planner {
	enum gb_planner_kind kind;
	struct gb_conf_llm llm;
};

struct gb_conf_admins {
	char **users;			/* NULL-terminated */
	size_t n_users;
	char *group;			/* NULL: none */
};

struct gb_conf_log {
	char *file;			/* NULL: no file */
	bool syslog;
	enum gb_log_level level;
};

/* metrics: (gpuburstctl metrics, gpuburst.yaml(5) METRICS). */
struct gb_conf_metrics {
	char *textfile;			/* reconcile writes the metrics there
					 * after each pass; NULL: no file */
	char *listen;			/* `gpuburstctl metrics serve`'s address,
					 * "127.0.0.1:9812", "[::1]:9812" or
					 * "unix:/PATH" */
	bool status_page;		/* metrics serve also serves the page */
	char *token_file;		/* the token every request must bear;
					 * NULL: none asked */
};

/* The job_submit/gpuburst plugin (doc/job_submit_gpuburst.md). */
struct gb_conf_job_submit {
	bool route_gpu_jobs;		/* GPU jobs naming no partition are
					   routed to the burst partitions
					   (default true) */
};

struct gb_conf {
	char *path;			/* the file it was loaded from */
	char *cluster_name;
	enum gb_env environment;
	bool environment_from_env;	/* GPUBURST_ENV overrode the file */
	char *state_dir;
	struct gb_conf_log log;
	struct gb_conf_metrics metrics;
	struct gb_conf_cloud cloud;
	struct gb_conf_region *regions;
	size_t n_regions;
	struct gb_conf_group *groups;
	size_t n_groups;
	struct gb_conf_nodeset *nodesets;
	size_t n_nodesets;
	struct gb_conf_policy policy;
	struct gb_conf_planner planner;
	struct gb_conf_admins admins;
	struct gb_conf_job_submit job_submit;
	/* The GPU catalog in use: <state_dir>/catalog when that file existed
	 * at load (gpuburstctl catalog refresh writes it), else the built-in
	 * one.  Read it through gb_conf_instance_type[s](). */
	char *catalog_path;		/* NULL: the built-in catalog */
	char *catalog_source;		/* the file's "source", NULL: built in */
	double catalog_refreshed_at;	/* the file's "refreshed" (epoch s), 0 */
	char *catalog_unreachable;	/* <state_dir>/catalog when this user
					 * may not search state_dir: built in */
	struct gb_instance_type *catalog_;	/* private: the file's types */
	size_t n_catalog_;
	/* the price file read at load (gb_conf_price): <state_dir>/prices,
	 * else GB_PRICES_SHIPPED when installed */
	char *prices_path;		/* NULL: no price is known */
	char *prices_source;		/* the file's "source" */
	double prices_refreshed_at;	/* the file's "refreshed" (epoch s) */
	struct gb_price *prices_;	/* private: sorted by region, type, kind */
	size_t n_prices_;
};

/*
 * RET BORROWED the path to load: [cli] (-c FILE) if set, else
 * $GPUBURST_CONF, else GB_CONF_DEFAULT_PATH.
 */
const char *gb_conf_path(const char *cli);

/*
 * The path for programs that slurmctld runs or loads (the job_submit
 * plugin): $GPUBURST_CONF if set, else "gpuburst.yaml" in the directory of
 * [slurm_conf] (the path of slurm.conf, may be NULL) when that file exists,
 * else GB_CONF_DEFAULT_PATH.  Written to [buf] of [n] bytes.
 * RET [buf], or NULL when the path does not fit.
 */
const char *gb_conf_path_slurm(const char *slurm_conf, char *buf, size_t n);

/*
 * Load and validate [path].  On success *out is NEW (gb_conf_destroy).
 * On failure *out is NULL, the first message is in [err] and every message
 * is appended to [errs] (if not NULL), each "file:line:col: message".
 * RET GB_E_OK, GB_E_CONFIG, GB_E_NOTFOUND/GB_E_IO (file), GB_E_NOMEM.
 *
 * Messages come in file order ("file: message" when no line applies, e.g.
 * a bad $GPUBURST_ENV); after 100 of them one line counts the rest.  A
 * non-empty $GPUBURST_ENV overrides `environment`.  Files over 1 MiB,
 * nesting deeper than 64 levels and more than 100000 YAML nodes to read
 * (aliases) are errors.  On success the explicit cloud secrets, if any,
 * are registered with gb_log_secret_add().  Safe to call from several
 * threads; nothing is printed.
 */
gb_err_t gb_conf_load(const char *path, struct gb_conf **out,
		      struct gb_errlist *errs, gb_error_t *err);

/* The same from memory; [name] is used as the file name in messages. */
gb_err_t gb_conf_load_string(const char *name, const char *text, size_t len,
			     struct gb_conf **out, struct gb_errlist *errs,
			     gb_error_t *err);

void gb_conf_destroy(struct gb_conf *conf);

/* Lookups.  All RET BORROWED pointers into [conf], or NULL. */
const struct gb_conf_region *gb_conf_region(const struct gb_conf *conf,
					    const char *name);
const struct gb_conf_nodeset *gb_conf_nodeset(const struct gb_conf *conf,
					      const char *name);
/* RET whether [type] is one of the instance types of [ns]. */
bool gb_conf_nodeset_has_type(const struct gb_conf_nodeset *ns, const char *type);
/* The nodeset whose pattern contains [node] (patterns never overlap). */
const struct gb_conf_nodeset *gb_conf_nodeset_for_node(const struct gb_conf *conf,
						       const char *node);
/* RET the number of Slurm nodes of [ns] (its pattern's host count). */
size_t gb_conf_nodeset_size(const struct gb_conf_nodeset *ns);
/*
 * RET BORROWED the rung of [kind] in the ladder of [ns] (each kind is
 * there at most once), or NULL.
 */
const struct gb_conf_rung *gb_conf_nodeset_rung(const struct gb_conf_nodeset *ns,
						 enum gb_capacity_kind kind);
/* The group listing [consumer] among its consumer regions. */
const struct gb_conf_group *gb_conf_group_for(const struct gb_conf *conf,
					      const char *consumer);

/* RET the approval threshold of the effective environment. */
int gb_conf_threshold(const struct gb_conf *conf);

/* RET the endpoint URL for [region]: region override, cloud.endpoint, or NULL. */
const char *gb_conf_endpoint(const struct gb_conf *conf,
			     const struct gb_conf_region *region);

/* Names <-> enums ("dev", "probe_fill", "multi_region", ...). */
const char *gb_conf_env_name(enum gb_env e);
const char *gb_conf_mode_name(enum gb_mode m);
const char *gb_conf_strategy_name(enum gb_strategy s);
const char *gb_conf_locality_name(enum gb_locality l);
const char *gb_conf_market_name(enum gb_market m);
/*
 * "HOST:PORT" (metrics.listen): an IPv4 literal or a bracketed IPv6 one,
 * a port 1..65535.  OUT [host] (without brackets, at most [hn] - 1
 * bytes), *port.  RET false when [s] is not one.
 */
bool gb_conf_listen_parse(const char *s, char *host, size_t hn, unsigned *port);
/* sizeof(sockaddr_un.sun_path) on Linux */
#define GB_CONF_UNIX_PATH_MAX 108
/* "unix:/ABSOLUTE/PATH" (metrics.listen): RET the path in [s], else NULL. */
const char *gb_conf_listen_unix(const char *s);

/* "on-demand", "spot", "reservation", "capacity-block" (the names the state file and tags use) */
const char *gb_conf_capacity_name(enum gb_capacity_kind c);
const char *gb_conf_placement_name(enum gb_placement p);
const char *gb_conf_llm_provider_name(enum gb_llm_provider p);
gb_err_t gb_conf_strategy_parse(const char *s, enum gb_strategy *out);
/* "on-demand", "spot", ... -> the kind.  RET GB_E_OK or GB_E_INVALID. */
gb_err_t gb_conf_capacity_parse(const char *s, enum gb_capacity_kind *out);

/*
 * policy.prefer: "nearest", "cheapest", "nearest_within(15)" or
 * "nearest_within(15%)", PERCENT a number in 0..1000.  OUT *prefer and
 * *within (0 unless nearest_within).  RET GB_E_OK or GB_E_INVALID.
 */
gb_err_t gb_conf_prefer_parse(const char *s, enum gb_prefer *prefer, double *within);
/* "nearest", "cheapest", "nearest_within(15%)" into [buf] of [n] bytes; RET buf. */
const char *gb_conf_prefer_name(enum gb_prefer prefer, double within, char *buf,
				size_t n);

/*
 * Every key the parser accepts, in table (file) order, parents before
 * their children.  Paths are dotted: "policy.approval_timeout"; the items
 * of a list of mappings add "[]" ("regions[].azs[].subnets"), the entries
 * of a mapping keyed by name add ".NAME" ("fallback_groups.NAME.
 * consumer_regions").  gpuburst.yaml(5) documents each of these paths
 * (a test checks it through `gpuburstctl config keys`).
 */
struct gb_conf_key_info {
	const char *path;		/* "policy.approval_thresholds.dev" */
	const char *name;		/* last component: "dev" */
	const char *type;		/* "string", "path", "url", "bool",
					   "integer", "number", "duration",
					   "enum", "list of strings", "mapping",
					   "list of mappings",
					   "mapping of mappings" */
	const char *def;		/* default as file text, or NULL: none
					   (lists: blank-separated words) */
	const char *values;		/* enum: "dev, staging, prod"; else NULL */
	bool required;
	bool has_range;			/* integer, number, duration */
	bool auto_ok;			/* duration: also "auto" */
	bool off_ok;			/* duration: also "off" or 0 (stored 0) */
	double min, max;		/* when has_range (durations: seconds) */
};

/* Return non-zero to stop the walk. */
typedef int gb_conf_key_fn(const struct gb_conf_key_info *k, void *arg);

/*
 * Call [cb] for every key; all strings are BORROWED for the call only.
 * RET 0, or the non-zero value [cb] stopped the walk with.
 */
int gb_conf_keys(gb_conf_key_fn *cb, void *arg);

/*
 * Write the human summary printed by `gpuburstctl config check` to [fp]
 * (a FILE *; void * keeps <stdio.h> out of this header's contract).
 */
void gb_conf_print_summary(const struct gb_conf *conf, void *fp);

/*****************************************************************************
 *  Built-in knowledge: AWS region coordinates, GPU instance-type catalog
 *****************************************************************************/

/* RET whether [region] is a public AWS region we know; fills lat/lon. */
bool gb_region_coords(const char *region, double *lat, double *lon);

/* RET the public AWS region names, NULL-terminated, BORROWED. */
const char *const *gb_region_names(void);

/*
 * RET the great-circle distance in km between two points given in degrees
 * (Haversine, R = 6371 km, as the ancestor).  Added for the summary's
 * fallback order; libplan orders candidates with the same function.
 */
double gb_region_distance_km(double lat1, double lon1, double lat2, double lon2);

struct gb_instance_type {
	const char *name;		/* "g5.xlarge" */
	const char *family;		/* "g5" */
	int vcpus;
	int memory_mib;
	int gpus;
	const char *gpu_model;		/* Slurm gres type: "a10g" */
	int gpu_memory_mib;		/* per GPU */
	const char *arch;		/* "x86_64" | "arm64" */
	const char *gpu_maker;		/* GpuInfo Manufacturer: "NVIDIA" */
	bool efa;			/* EfaSupported */
	int efa_max_interfaces;		/* EfaInfo.MaximumEfaInterfaces, 0: none */
	int network_cards;		/* NetworkInfo.MaximumNetworkCards */
	int max_interfaces;		/* NetworkInfo.MaximumNetworkInterfaces */
	bool cluster_placement;		/* PlacementGroupInfo: "cluster" */
	const char *gpu_name;		/* GpuInfo Name: "A10G"; gpu_model is
					 * gb_catalog_gres_name() of it */
	int gpu_fraction;		/* 0: whole GPUs; N: each GPU is a 1/N
					 * share of one (g6f.large: 8) */
};

/* The built-in catalog.  RET BORROWED its entry for [name], or NULL. */
const struct gb_instance_type *gb_catalog_find(const char *name);

/* RET the whole built-in catalog (BORROWED), *n set to its length. */
const struct gb_instance_type *gb_catalog_all(size_t *n);

/*
 * Slurm's gres type name of EC2's GpuInfo Name: ASCII letters lower-cased,
 * digits and '_' kept, each run of blanks, '-', '.' and '/' one '_', '_'
 * trimmed at both ends, anything else dropped ("H100" -> "h100", "L40S" ->
 * "l40s", "RTX PRO 6000" -> "rtx_pro_6000").  Written to [buf] of [n].
 * RET [buf], or NULL when [gpu_name] is NULL, gives nothing, or does not fit.
 * The built-in catalog's gpu_model is this function of its gpu_name, and a
 * catalog file's is computed with it: a refreshed catalog and the built-in
 * one name a model alike.
 */
const char *gb_catalog_gres_name(const char *gpu_name, char *buf, size_t n);

/*
 * The catalog in use by [conf] (see struct gb_conf; NULL: the built-in).
 * RET BORROWED the entry of [name], or NULL.
 */
const struct gb_instance_type *gb_conf_instance_type(const struct gb_conf *conf,
						     const char *name);

/* RET BORROWED all entries of the catalog in use, *n set to their number. */
const struct gb_instance_type *gb_conf_instance_types(const struct gb_conf *conf,
						      size_t *n);

/*
 * Whether gpuburst may launch [type] under [conf] (NULL: the defaults and
 * the built-in catalog): its family is in policy.allowed_families, it is
 * in the catalog in use, its GPUs are NVIDIA's, and whole (Slurm's gres
 * counts whole GPUs: a g6f's 1/8 of an L4 cannot be described).
 * RET GB_E_OK, or GB_E_CONFIG with the reason in [err] ("instance type
 * g6f.large has a fractional GPU (1/8 of an L4): ...").
 */
gb_err_t gb_conf_type_check(const struct gb_conf *conf, const char *type,
			    gb_error_t *err);

/*
 * The catalog file `gpuburstctl catalog refresh` writes (format in
 * catalog_file.c and gpuburst.yaml(5), "CATALOG FILE").  Write the [n]
 * types of [v] to [path] atomically: a temporary file in the same
 * directory, fsync, rename, fsync of the directory; mode 0644.  [source]
 * says where the figures came from (one line of printable text), and
 * [refreshed_at] when (epoch seconds, written to the second).
 * RET GB_E_OK, GB_E_INVALID (a type the reader would refuse, named in
 * [err]), GB_E_IO.
 */
gb_err_t gb_catalog_write(const char *path, const struct gb_instance_type *v,
			  size_t n, const char *source, double refreshed_at,
			  gb_error_t *err);

/* The catalog file's name inside state_dir. */
#define GB_CATALOG_FILE "catalog"

/*
 * Put the path of [conf]'s catalog file, <state_dir>/catalog, into [buf]
 * (whether the file exists or not).  RET false when it does not fit in
 * [n] bytes (or [conf] has no state_dir), [buf] then "".
 */
bool gb_conf_catalog_file(const struct gb_conf *conf, char *buf, size_t n);

/*
 * Prices (gpuburst.yaml(5), PRICE FILE): US dollars per instance-hour of
 * one instance type in one region, bought as one capacity kind.
 */
struct gb_price {
	const char *region;		/* owned by the table */
	const char *type;
	enum gb_capacity_kind kind;
	double usd_per_hour;
};

/* The price file's name inside state_dir. */
#define GB_PRICES_FILE "prices"
/* The price file shipped with gpuburst: read while state_dir has none. */
#define GB_PRICES_SHIPPED GB_PKGDATADIR "/prices"
/* Limits of the price file. */
#define GB_PRICES_MAX_BYTES (16 * 1024 * 1024)
#define GB_PRICES_MAX_LINES 200000

/*
 * The price of [type] in [region] bought as [kind], from the price file
 * of [conf]: the line of that kind, else (reservation, capacity-block,
 * spot) the on-demand line, which bounds what EC2 charges for them.
 * OUT *kind_used (may be NULL) the kind whose line was used.
 * RET the price in US dollars per hour, or -1 when none is known.
 */
double gb_conf_price(const struct gb_conf *conf, const char *region, const char *type,
		     enum gb_capacity_kind kind, enum gb_capacity_kind *kind_used);

/* All prices of [conf]'s file (sorted by region, type, kind); *n set. */
const struct gb_price *gb_conf_prices(const struct gb_conf *conf, size_t *n);

/*
 * Write the [n] prices of [v] to [path] atomically (as gb_catalog_write),
 * mode 0644, with [source] and [refreshed_at] in its header.
 * RET GB_E_OK, GB_E_INVALID (a line the reader would refuse, named in
 * [err]), GB_E_IO.
 */
gb_err_t gb_prices_write(const char *path, const struct gb_price *v, size_t n,
			 const char *source, double refreshed_at, gb_error_t *err);

/* <state_dir>/prices into [buf]; RET false when it does not fit. */
bool gb_conf_prices_file(const struct gb_conf *conf, char *buf, size_t n);

/*
 * The spend summary, <state_dir>/spend: what each budget scope spent in
 * the current calendar month (UTC), written by reconcile and the worker
 * (libpolicy's gb_policy_spend_summary) so that the job_submit plugin
 * judges budgets without the state file.  Format, version 1:
 *
 *	gpuburst-spend 1
 *	refreshed 2026-12-06T20:00:00Z
 *	source 2026-12
 *	# scope name usd
 *	cluster - 12.5
 *	user alice 7.25
 *
 * "source" is the month the figures are for; a summary of another month
 * counts as nothing spent.
 */
#define GB_SPEND_FILE "spend"
#define GB_SPEND_MAX_BYTES (4 * 1024 * 1024)

struct gb_spend_entry {
	enum gb_budget_scope scope;
	char *name;			/* NULL for the cluster */
	double usd;
};

struct gb_spend_summary {
	char month[8];			/* "2026-12"; "" when none was read */
	double refreshed_at;
	struct gb_spend_entry *v;	/* sorted by scope, name */
	size_t n;
};

/* "YYYY-MM" of [t] (UTC) into [buf] of at least 8 bytes; the month's start. */
double gb_spend_month(double t, char *buf, size_t n);

/*
 * Read [path] into [out] (cleared first).  No file: an empty summary,
 * GB_E_OK.  RET GB_E_OK, GB_E_INVALID ("PATH:LINE: what"), GB_E_IO,
 * GB_E_NOMEM.
 */
gb_err_t gb_spend_read(const char *path, struct gb_spend_summary *out, gb_error_t *err);
/* Write [s] to [path] atomically (mode 0644). */
gb_err_t gb_spend_write(const char *path, const struct gb_spend_summary *s,
			gb_error_t *err);
void gb_spend_clear(struct gb_spend_summary *s);
/* RET what [scope]/[name] spent in the summary's month (0: nothing known). */
double gb_spend_of(const struct gb_spend_summary *s, enum gb_budget_scope scope,
		   const char *name);
/* <state_dir>/spend into [buf]; RET false when it does not fit. */
bool gb_conf_spend_file(const struct gb_conf *conf, char *buf, size_t n);

/* A job as budgets see it.  Strings BORROWED, NULL: not known. */
struct gb_budget_job {
	const char *user;
	const char *account;
	const char *partitions;		/* "a,b": a budget of any of them counts */
	double estimate;		/* US dollars; < 0: not known */
	const char *why_unknown;	/* when estimate < 0: "it has no time
					 * limit (--time)" */
};

/*
 * The first budget of [conf] that [job] would go over, given what [spent]
 * says for the month of [now] (NULL or another month: nothing spent).
 * Over: the estimate is above per_job, or spent + estimate above monthly,
 * or the estimate is not known.  OUT [msg] (may be NULL) the sentence for
 * the user: "budget 'alice' (user alice): 7.25 of 10.00 USD spent in
 * 2026-12, this job ~4.00 USD".  RET the budget, or NULL.
 */
const struct gb_conf_budget *gb_budget_over(const struct gb_conf *conf,
					    const struct gb_spend_summary *spent,
					    const struct gb_budget_job *job, double now,
					    struct gb_buf *msg);

/* RET "cluster", "account", "partition", "user". */
const char *gb_conf_budget_scope_name(enum gb_budget_scope s);

/*
 * RET whether [type] belongs to one of the allowed families of [conf]
 * (or the defaults when [conf] is NULL): "g5.xlarge" is in family "g5",
 * "g5g.xlarge" in "g5g".
 */
bool gb_conf_type_allowed(const struct gb_conf *conf, const char *type);

#endif /* GB_LIBCONF_GB_CONF_H */
