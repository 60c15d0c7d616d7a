/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * schema.c - the parameter tables of the simulator's EC2 actions and the
 * one check every request goes through before its handler
 *
 * Wire names follow botocore's EC2Serializer (botocore/serialize.py): a
 * member's queryName, else its locationName capitalised, else the member
 * name; structures flatten as Name.Member, lists as Name.N (1-based, the
 * list's own name dropped).  Types, enum values and the required members
 * are those of the 2016-11-15 model (botocore's ec2 service-2.json); ranges
 * are the ones the API reference states (MinCount >= 1, MaxResults 5..1000,
 * HttpPutResponseHopLimit 1..64).  Only what the simulator implements is
 * listed: anything else, even a parameter real EC2 has, is UnknownParameter,
 * so that a client never relies on a parameter the simulator ignores.
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "gb_str.h"
#include "schema.h"

#define MAX_PARTS 8		/* components of the longest wire name, with room */

static const char *const v_location_type[] = {
	"region", "availability-zone", "availability-zone-id", NULL };
/* RunInstances tags what it creates (EC2 API reference, TagSpecification) */
static const char *const v_launch_resource[] = {
	"instance", "volume", "network-interface", "spot-instances-request", NULL };
static const char *const v_market[] = { "spot", "capacity-block", NULL };
static const char *const v_cr_pref[] = {
	"capacity-reservations-only", "open", "none", NULL };
static const char *const v_spot_type[] = { "one-time", "persistent", NULL };
static const char *const v_interruption[] = { "hibernate", "stop", "terminate", NULL };
static const char *const v_http_tokens[] = { "optional", "required", NULL };
static const char *const v_on_off[] = { "disabled", "enabled", NULL };
static const char *const v_pg_strategy[] = { "cluster", "spread", "partition", NULL };
static const char *const v_pg_resource[] = { "placement-group", NULL };

#define STR(n)			{ n, GB_SCHEMA_STRING, NULL, 0, 0, 0 }
#define STR_F(n, f)		{ n, GB_SCHEMA_STRING, NULL, f, 0, 0 }
#define BOOL(n)			{ n, GB_SCHEMA_BOOLEAN, NULL, 0, 0, 0 }
#define ENUM(n, v)		{ n, GB_SCHEMA_ENUM, v, 0, 0, 0 }
#define ENUM_F(n, v, f)		{ n, GB_SCHEMA_ENUM, v, f, 0, 0 }
#define TIME(n)			{ n, GB_SCHEMA_TIMESTAMP, NULL, 0, 0, 0 }
#define INT_MIN_F(n, lo, f)	{ n, GB_SCHEMA_INTEGER, NULL, (f) | GB_SCHEMA_MIN, lo, 0 }
#define INT_RANGE(n, lo, hi)	{ n, GB_SCHEMA_INTEGER, NULL, \
				  GB_SCHEMA_MIN | GB_SCHEMA_MAX, lo, hi }
#define STR_LEN_F(n, lo, hi, c, f) { n, GB_SCHEMA_STRING, NULL, \
				  (f) | GB_SCHEMA_MIN | GB_SCHEMA_MAX, lo, hi, c }

#define FILTERS \
	STR_F("Filter.N.Name", GB_SCHEMA_IN_ITEM), \
	STR("Filter.N.Value.N")

static const struct gb_schema_param run_instances[] = {
	BOOL("DryRun"),
	STR_F("ImageId", GB_SCHEMA_REQUIRED),	/* no LaunchTemplate here */
	STR("InstanceType"),
	INT_MIN_F("MinCount", 1, GB_SCHEMA_REQUIRED),
	INT_MIN_F("MaxCount", 1, GB_SCHEMA_REQUIRED),
	STR("SubnetId"),
	STR("Placement.AvailabilityZone"),
	STR("SecurityGroupId.N"),
	STR("KeyName"),
	STR("ClientToken"),
	STR("UserData"),
	STR("IamInstanceProfile.Arn"),
	STR("IamInstanceProfile.Name"),
	ENUM_F("TagSpecification.N.ResourceType", v_launch_resource, GB_SCHEMA_IN_ITEM),
	STR_F("TagSpecification.N.Tag.N.Key", GB_SCHEMA_IN_ITEM),
	STR("TagSpecification.N.Tag.N.Value"),
	ENUM("InstanceMarketOptions.MarketType", v_market),
	STR("InstanceMarketOptions.SpotOptions.MaxPrice"),
	ENUM("InstanceMarketOptions.SpotOptions.SpotInstanceType", v_spot_type),
	ENUM("InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior", v_interruption),
	TIME("InstanceMarketOptions.SpotOptions.ValidUntil"),
	ENUM("MetadataOptions.HttpTokens", v_http_tokens),
	INT_RANGE("MetadataOptions.HttpPutResponseHopLimit", 1, 64),
	ENUM("MetadataOptions.HttpEndpoint", v_on_off),
	ENUM("MetadataOptions.HttpProtocolIpv6", v_on_off),
	ENUM("MetadataOptions.InstanceMetadataTags", v_on_off),
	BOOL("Monitoring.Enabled"),
	BOOL("EbsOptimized"),
	STR("Placement.GroupName"),
	INT_MIN_F("NetworkInterface.N.DeviceIndex", 0, GB_SCHEMA_IN_ITEM),
	INT_MIN_F("NetworkInterface.N.NetworkCardIndex", 0, 0),
	STR("NetworkInterface.N.InterfaceType"),
	STR("NetworkInterface.N.SubnetId"),
	STR("NetworkInterface.N.SecurityGroupId.N"),
	BOOL("NetworkInterface.N.DeleteOnTermination"),
	ENUM("CapacityReservationSpecification.CapacityReservationPreference", v_cr_pref),
	STR("CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId"),
	STR("CapacityReservationSpecification.CapacityReservationTarget."
	    "CapacityReservationResourceGroupArn"),
};

static const struct gb_schema_param describe_instances[] = {
	BOOL("DryRun"),
	STR("InstanceId.N"),
	FILTERS,
	INT_RANGE("MaxResults", 5, 1000),
	STR("NextToken"),
};

static const struct gb_schema_param terminate_instances[] = {
	BOOL("DryRun"),
	STR_F("InstanceId.N", GB_SCHEMA_REQUIRED),
};

static const struct gb_schema_param describe_offerings[] = {
	BOOL("DryRun"),
	ENUM("LocationType", v_location_type),
	FILTERS,
	INT_RANGE("MaxResults", 5, 1000),
	STR("NextToken"),
};

static const struct gb_schema_param create_tags[] = {
	BOOL("DryRun"),
	STR_F("ResourceId.N", GB_SCHEMA_REQUIRED),
	STR_F("Tag.N.Key", GB_SCHEMA_REQUIRED | GB_SCHEMA_IN_ITEM),
	STR("Tag.N.Value"),
};

static const struct gb_schema_param describe_azs[] = {
	BOOL("DryRun"),
	STR("ZoneName.N"),
	STR("ZoneId.N"),
	BOOL("AllAvailabilityZones"),	/* the simulator has no opt-in zones */
	FILTERS,
};

static const struct gb_schema_param describe_instance_types[] = {
	BOOL("DryRun"),
	STR("InstanceType.N"),
	FILTERS,
	INT_RANGE("MaxResults", 5, 100),
	STR("NextToken"),
};

static const struct gb_schema_param create_placement_group[] = {
	BOOL("DryRun"),
	STR_F("GroupName", GB_SCHEMA_REQUIRED),	/* EC2 requires it; the model does not */
	ENUM("Strategy", v_pg_strategy),
	ENUM_F("TagSpecification.N.ResourceType", v_pg_resource, GB_SCHEMA_IN_ITEM),
	STR_F("TagSpecification.N.Tag.N.Key", GB_SCHEMA_IN_ITEM),
	STR("TagSpecification.N.Tag.N.Value"),
};

static const struct gb_schema_param describe_placement_groups[] = {
	BOOL("DryRun"),
	STR("GroupName.N"),
	STR("GroupId.N"),
	FILTERS,
};

static const struct gb_schema_param delete_placement_group[] = {
	BOOL("DryRun"),
	STR_F("GroupName", GB_SCHEMA_REQUIRED),
};

static const struct gb_schema_param describe_security_groups[] = {
	BOOL("DryRun"),
	STR("GroupId.N"),
	INT_RANGE("MaxResults", 5, 1000),
	STR("NextToken"),
};

static const struct gb_schema_param describe_capacity_reservations[] = {
	BOOL("DryRun"),
	STR("CapacityReservationId.N"),
	FILTERS,
	INT_RANGE("MaxResults", 1, 1000),
	STR("NextToken"),
};

static const struct gb_schema_param describe_capacity_block_offerings[] = {
	BOOL("DryRun"),
	STR("InstanceType"),
	INT_MIN_F("InstanceCount", 1, 0),
	TIME("StartDateRange"),
	TIME("EndDateRange"),
	INT_MIN_F("CapacityDurationHours", 1, GB_SCHEMA_REQUIRED),
	INT_RANGE("MaxResults", 1, 1000),
	STR("NextToken"),
};

/*
 * ProductDescription.N is a plain string in the model: the sim checks its
 * values (gb_sim_describe_spot_prices).  MaxResults: 1..1000, default 1000
 * (the API reference of 2016-11-15).  No AvailabilityZoneId: botocore
 * models it only from 2024 on, and gpuburst names zones.
 */
static const struct gb_schema_param describe_spot_price_history[] = {
	BOOL("DryRun"),
	STR("InstanceType.N"),
	STR("ProductDescription.N"),
	STR("AvailabilityZone"),
	TIME("StartTime"),
	TIME("EndTime"),
	FILTERS,
	INT_RANGE("MaxResults", 1, 1000),
	STR("NextToken"),
};

#define ACTION(name, t) { name, t, GB_ARRAY_LEN(t) }

/* In enum gb_sim_action order. */
static const struct gb_schema_action ec2_actions[GB_SIM_ACTION_COUNT] = {
	[GB_SIM_ACTION_RUN_INSTANCES] = ACTION("RunInstances", run_instances),
	[GB_SIM_ACTION_DESCRIBE_INSTANCES] = ACTION("DescribeInstances",
						    describe_instances),
	[GB_SIM_ACTION_TERMINATE_INSTANCES] = ACTION("TerminateInstances",
						     terminate_instances),
	[GB_SIM_ACTION_DESCRIBE_OFFERINGS] = ACTION("DescribeInstanceTypeOfferings",
						    describe_offerings),
	[GB_SIM_ACTION_CREATE_TAGS] = ACTION("CreateTags", create_tags),
	[GB_SIM_ACTION_DESCRIBE_AZS] = ACTION("DescribeAvailabilityZones", describe_azs),
	[GB_SIM_ACTION_DESCRIBE_INSTANCE_TYPES] = ACTION("DescribeInstanceTypes",
						       describe_instance_types),
	[GB_SIM_ACTION_CREATE_PLACEMENT_GROUP] = ACTION("CreatePlacementGroup",
						      create_placement_group),
	[GB_SIM_ACTION_DESCRIBE_PLACEMENT_GROUPS] = ACTION("DescribePlacementGroups",
							 describe_placement_groups),
	[GB_SIM_ACTION_DELETE_PLACEMENT_GROUP] = ACTION("DeletePlacementGroup",
						      delete_placement_group),
	[GB_SIM_ACTION_DESCRIBE_SECURITY_GROUPS] = ACTION("DescribeSecurityGroups",
							describe_security_groups),
	[GB_SIM_ACTION_DESCRIBE_CAPACITY_RESERVATIONS] = ACTION(
		"DescribeCapacityReservations", describe_capacity_reservations),
	[GB_SIM_ACTION_DESCRIBE_CAPACITY_BLOCK_OFFERINGS] = ACTION(
		"DescribeCapacityBlockOfferings", describe_capacity_block_offerings),
	[GB_SIM_ACTION_DESCRIBE_SPOT_PRICE_HISTORY] = ACTION(
		"DescribeSpotPriceHistory", describe_spot_price_history),
};

const struct gb_schema_service gb_schema_ec2 = {
	"AmazonEC2", GB_SCHEMA_API_VERSION, false, ec2_actions, GB_SIM_ACTION_COUNT,
};

/*
 * STS (2011-06-15): only what gpuburst calls.  The string constraints are
 * the model's (min/max length, the characters of its pattern); STS answers
 * a value outside them with ValidationError.
 */
#define ROLE_ARN	STR_LEN_F("RoleArn", 20, 2048, NULL, GB_SCHEMA_REQUIRED)
#define SESSION_NAME	STR_LEN_F("RoleSessionName", 2, 64, "+=,.@-", GB_SCHEMA_REQUIRED)

static const struct gb_schema_param assume_role[] = {
	ROLE_ARN,
	SESSION_NAME,
	INT_RANGE("DurationSeconds", 900, 43200),
	STR_LEN_F("ExternalId", 2, 1224, "+=,.@:/-", 0),
};

static const struct gb_schema_param assume_role_web[] = {
	ROLE_ARN,
	SESSION_NAME,
	STR_LEN_F("WebIdentityToken", 4, 20000, NULL, GB_SCHEMA_REQUIRED),
	INT_RANGE("DurationSeconds", 900, 43200),
};

static const struct gb_schema_param get_caller_identity[] = {
	{ NULL, GB_SCHEMA_STRING, NULL, 0, 0, 0, NULL },	/* no parameter */
};

static const struct gb_schema_action sts_actions[] = {
	ACTION("AssumeRole", assume_role),
	ACTION("AssumeRoleWithWebIdentity", assume_role_web),
	{ "GetCallerIdentity", get_caller_identity, 0 },
};

const struct gb_schema_service gb_schema_sts = {
	"AWSSecurityTokenService", GB_SCHEMA_STS_VERSION, true, sts_actions,
	GB_ARRAY_LEN(sts_actions),
};

const struct gb_schema_param *gb_schema_params(enum gb_sim_action a, size_t *n)
{
	*n = (unsigned)a < GB_SIM_ACTION_COUNT ? ec2_actions[a].n : 0;
	return *n ? ec2_actions[a].p : NULL;
}

const struct gb_schema_action *gb_schema_action_find(const struct gb_schema_service *sv,
						     const char *name)
{
	for (size_t i = 0; name && i < sv->n; i++) {
		if (strcmp(sv->actions[i].name, name) == 0)
			return &sv->actions[i];
	}
	return NULL;
}

/*****************************************************************************
 *  Names
 *****************************************************************************/

/* A wire name split at its dots; the parts point into [buf]. */
struct parts {
	char buf[256];
	const char *v[MAX_PARTS];
	size_t n;
};

/* RET false when [s] is too long or has too many (or empty) parts. */
static bool split(const char *s, struct parts *p)
{
	char *c;

	p->n = 0;
	if (strlen(s) >= sizeof(p->buf))
		return false;
	memcpy(p->buf, s, strlen(s) + 1);
	for (c = p->buf;; c++) {
		char *dot = strchr(c, '.');

		if (p->n == MAX_PARTS || (dot ? dot == c : !*c))
			return false;
		p->v[p->n++] = c;
		if (!dot)
			return true;
		*dot = '\0';
		c = dot;
	}
}

/* A list index as EC2 numbers them: 1, 2, ... (no sign, no leading 0). */
static long list_index(const char *s)
{
	long v;

	if (s[0] < '1' || s[0] > '9' || gb_parse_long(s, 1, 1000000, &v) != GB_E_OK)
		return 0;
	return v;
}

/* Do the first [n] parts of [key] match the first [n] of [pattern]? */
static bool parts_match(const struct parts *key, const struct parts *pattern, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(pattern->v[i], "N") == 0 ? !list_index(key->v[i]) :
		    strcmp(pattern->v[i], key->v[i]) != 0)
			return false;
	}
	return true;
}

static const struct gb_schema_param *find_param(const struct gb_schema_action *a,
						const char *key)
{
	const struct gb_schema_param *t = a->p;
	struct parts k, pt;

	if (!split(key, &k))
		return NULL;
	for (size_t i = 0; i < a->n; i++) {
		if (split(t[i].name, &pt) && pt.n == k.n && parts_match(&k, &pt, k.n))
			return &t[i];
	}
	return NULL;
}

/* [buf] = the first [n] parts of [k], joined again. */
static void join(const struct parts *k, size_t n, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "." : "", k->v[i]);
}

/* Is there a parameter [prefix] or [prefix].something? */
static bool have_prefix(const struct gb_cs_param *p, size_t n, const char *prefix)
{
	size_t len = strlen(prefix);

	for (size_t i = 0; i < n; i++) {
		if (strncmp(p[i].key, prefix, len) == 0 &&
		    (p[i].key[len] == '\0' || p[i].key[len] == '.'))
			return true;
	}
	return false;
}

static bool have_key(const struct gb_cs_param *p, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(p[i].key, key) == 0)
			return true;
	}
	return false;
}

/* Parameters the schema does not look at: Action, Version, a presigned query's. */
static bool common_key(const char *key)
{
	return strcmp(key, "Action") == 0 || strcmp(key, "Version") == 0 ||
	       gb_str_has_prefix(key, "X-Amz-");
}

/*****************************************************************************
 *  Values
 *****************************************************************************/

static bool digits(const char *s, size_t n, int lo, int hi, int *out)
{
	int v = 0;

	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return v >= lo && v <= hi;
}

bool gb_schema_timestamp(const char *s, double *epoch)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, mo, d, h, mi, sec, oh = 0, om = 0;
	double frac = 0, scale = 0.1;
	struct tm tm = { 0 };
	const char *p = s + 19;

	if (strlen(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
	    s[13] != ':' || s[16] != ':' || !digits(s, 4, 1970, 9999, &y) ||
	    !digits(s + 5, 2, 1, 12, &mo) || !digits(s + 8, 2, 1, mdays[mo - 1], &d) ||
	    !digits(s + 11, 2, 0, 23, &h) || !digits(s + 14, 2, 0, 59, &mi) ||
	    !digits(s + 17, 2, 0, 59, &sec))
		return false;
	if (*p == '.') {
		if (!isdigit((unsigned char)p[1]))
			return false;
		for (p++; isdigit((unsigned char)*p); p++, scale /= 10)
			frac += (*p - '0') * scale;
	}
	if (*p == 'Z') {
		p++;
	} else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':' &&
		   digits(p + 1, 2, 0, 23, &oh) && digits(p + 4, 2, 0, 59, &om)) {
		if (*p == '-') {
			oh = -oh;
			om = -om;
		}
		p += 6;
	} else {
		return false;
	}
	if (*p)
		return false;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	*epoch = (double)timegm(&tm) - oh * 3600.0 - om * 60.0 + frac;
	return true;
}

static void enum_list(const char *const *v, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; v[i] && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", v[i]);
}

/* "DurationSeconds" -> "durationSeconds": how STS names a member in its messages. */
static void member_name(const char *key, char *buf, size_t len)
{
	snprintf(buf, len, "%s", key);
	buf[0] = (char)tolower((unsigned char)buf[0]);
}

/*
 * A value the schema refuses: EC2's InvalidParameterValue, or, for a
 * service that validates members (STS), ValidationError in its words
 * ("1 validation error detected: Value 'x' at 'roleSessionName' failed to
 * satisfy constraint: Member must ...").  [expect] is EC2's sentence,
 * [constraint] the member rule ("have length less than or equal to 64").
 */
static bool bad_value(const struct gb_schema_service *sv, struct gb_sim_error *e,
		      const char *key, const char *value, const char *expect,
		      const char *constraint)
{
	char member[128];

	if (!sv->validation_errors) {
		gb_sim_error_set(e, 400, "InvalidParameterValue",
				 "Value (%s) for parameter %s is invalid. %s", value, key,
				 expect);
		return false;
	}
	member_name(key, member, sizeof(member));
	gb_sim_error_set(e, 400, "ValidationError",
			 "1 validation error detected: Value '%.200s' at '%s' failed to satisfy constraint: Member must %s",
			 value, member, constraint);
	return false;
}

static bool check_integer(const struct gb_schema_service *sv,
			  const struct gb_schema_param *s, const char *key,
			  const char *value, struct gb_sim_error *e)
{
	bool lo = s->flags & GB_SCHEMA_MIN, hi = s->flags & GB_SCHEMA_MAX;
	char expect[96], rule[96];
	long v;

	if (gb_parse_long(value, INT32_MIN, INT32_MAX, &v) != GB_E_OK)
		return bad_value(sv, e, key, value, "Expecting an integer.", "be an integer");
	if ((!lo || v >= s->min) && (!hi || v <= s->max))
		return true;
	if (lo && hi)
		snprintf(expect, sizeof(expect), "Expecting a value between %ld and %ld.",
			 s->min, s->max);
	else if (lo)
		snprintf(expect, sizeof(expect), "Expecting a value of at least %ld.", s->min);
	else
		snprintf(expect, sizeof(expect), "Expecting a value of at most %ld.", s->max);
	snprintf(rule, sizeof(rule), "have value %s than or equal to %ld",
		 lo && v < s->min ? "greater" : "less", lo && v < s->min ? s->min : s->max);
	return bad_value(sv, e, key, value, expect, rule);
}

/* A string's length range and, with [chars], the characters of [\w<chars>]*. */
static bool check_string(const struct gb_schema_service *sv,
			 const struct gb_schema_param *s, const char *key,
			 const char *value, struct gb_sim_error *e)
{
	long len = (long)strlen(value);
	char expect[160], rule[128];

	if ((s->flags & GB_SCHEMA_MIN && len < s->min) ||
	    (s->flags & GB_SCHEMA_MAX && len > s->max)) {
		bool shorter = s->flags & GB_SCHEMA_MIN && len < s->min;

		snprintf(expect, sizeof(expect), "Expecting %ld to %ld characters.",
			 s->min, s->max);
		snprintf(rule, sizeof(rule), "have length %s than or equal to %ld",
			 shorter ? "greater" : "less", shorter ? s->min : s->max);
		return bad_value(sv, e, key, value, expect, rule);
	}
	for (const char *c = value; s->chars && *c; c++) {
		if (!isalnum((unsigned char)*c) && *c != '_' && !strchr(s->chars, *c)) {
			snprintf(expect, sizeof(expect),
				 "Expecting letters, digits and any of _%s.", s->chars);
			snprintf(rule, sizeof(rule),
				 "satisfy regular expression pattern: [\\w%s]*", s->chars);
			return bad_value(sv, e, key, value, expect, rule);
		}
	}
	return true;
}

static bool check_value(const struct gb_schema_service *sv,
			const struct gb_schema_param *s, const char *key,
			const char *value, struct gb_sim_error *e)
{
	char expect[512];
	double t;

	switch (s->type) {
	case GB_SCHEMA_STRING:
		return check_string(sv, s, key, value, e);
	case GB_SCHEMA_INTEGER:
		return check_integer(sv, s, key, value, e);
	case GB_SCHEMA_BOOLEAN:
		if (strcmp(value, "true") == 0 || strcmp(value, "false") == 0)
			return true;
		return bad_value(sv, e, key, value, "Expecting a boolean: true or false.",
				 "be a boolean");
	case GB_SCHEMA_ENUM:
		for (size_t i = 0; s->values[i]; i++) {
			if (strcmp(value, s->values[i]) == 0)
				return true;
		}
		memcpy(expect, "Valid values: ", 15);
		enum_list(s->values, expect + 14, sizeof(expect) - 14);
		return bad_value(sv, e, key, value, expect, "satisfy enum value set");
	case GB_SCHEMA_TIMESTAMP:
		if (gb_schema_timestamp(value, &t))
			return true;
		return bad_value(sv, e, key, value,
				 "Expecting an ISO 8601 timestamp such as 2026-01-31T12:00:00Z.",
				 "be an ISO 8601 timestamp");
	}
	return true;
}

/*****************************************************************************
 *  The check
 *****************************************************************************/

static bool check_version(const struct gb_schema_service *sv, const struct gb_cs_param *p,
			  size_t n, struct gb_sim_error *e)
{
	const char *v = NULL;

	for (size_t i = 0; i < n && !v; i++) {
		if (strcmp(p[i].key, "Version") == 0)
			v = p[i].value;
	}
	if (!v) {
		gb_sim_error_set(e, 400, "MissingParameter",
				 "The request must contain the parameter Version");
		return false;
	}
	if (strcmp(v, sv->version) != 0) {
		gb_sim_error_set(e, 400, "NoSuchVersion",
				 "The requested version (%s) of service %s does not exist",
				 v, sv->name);
		return false;
	}
	return true;
}

/* Item K > 1 of a list needs item K - 1: botocore numbers them 1, 2, ... */
static bool check_numbering(const struct gb_cs_param *p, size_t n, const char *key,
			    struct gb_sim_error *e)
{
	char prev[300];
	struct parts k;
	long idx;

	if (!split(key, &k))
		return true;		/* unknown, refused already */
	for (size_t i = 1; i < k.n; i++) {
		if ((idx = list_index(k.v[i])) <= 1)
			continue;
		join(&k, i, prev, sizeof(prev));
		snprintf(prev + strlen(prev), sizeof(prev) - strlen(prev), ".%ld", idx - 1);
		if (!have_prefix(p, n, prev)) {
			gb_sim_error_set(e, 400, "InvalidParameterValue",
					 "The parameter %s follows a gap: list items are numbered 1, 2, 3, ... and there is no %s",
					 key, prev);
			return false;
		}
	}
	return true;
}

/* "InstanceId.N" -> "InstanceId", "Tag.N.Key" -> "Tag": the parameter to name. */
static void base_name(const char *pattern, char *buf, size_t len)
{
	size_t n = strcspn(pattern, ".");

	while (pattern[n] == '.' && strncmp(pattern + n, ".N", 2) != 0)
		n += 1 + strcspn(pattern + n + 1, ".");
	snprintf(buf, len, "%.*s", (int)n, pattern);
}

/* IN_ITEM: each item of the innermost list around [s] must have it. */
static bool check_in_item(const struct gb_schema_param *s, const struct gb_cs_param *p,
			  size_t n, struct gb_sim_error *e)
{
	struct parts pt, k;
	size_t last = 0;
	char want[300];

	if (!split(s->name, &pt))
		return true;
	for (size_t i = 0; i < pt.n; i++) {
		if (strcmp(pt.v[i], "N") == 0)
			last = i;
	}
	for (size_t i = 0; i < n; i++) {
		if (!split(p[i].key, &k) || k.n <= last + 1 || !parts_match(&k, &pt, last + 1))
			continue;
		join(&k, last + 1, want, sizeof(want));
		for (size_t j = last + 1; j < pt.n; j++)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), ".%s", pt.v[j]);
		if (!have_key(p, n, want)) {
			gb_sim_error_set(e, 400, "MissingParameter",
					 "The request must contain the parameter %s", want);
			return false;
		}
	}
	return true;
}

static bool check_required(const struct gb_schema_service *sv,
			   const struct gb_schema_action *a, const struct gb_cs_param *p,
			   size_t n, struct gb_sim_error *e)
{
	char name[128], member[128];

	for (size_t i = 0; i < a->n; i++) {
		const struct gb_schema_param *t = &a->p[i];
		bool found = false;

		if (t->flags & GB_SCHEMA_IN_ITEM && !check_in_item(t, p, n, e))
			return false;
		if (!(t->flags & GB_SCHEMA_REQUIRED))
			continue;
		for (size_t k = 0; k < n && !found; k++)
			found = find_param(a, p[k].key) == t;
		if (found)
			continue;
		base_name(t->name, name, sizeof(name));
		if (sv->validation_errors) {
			member_name(name, member, sizeof(member));
			gb_sim_error_set(e, 400, "ValidationError",
					 "1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null",
					 member);
		} else {
			gb_sim_error_set(e, 400, "MissingParameter",
					 "The request must contain the parameter %s", name);
		}
		return false;
	}
	return true;
}

bool gb_schema_check_action(const struct gb_schema_service *sv,
			    const struct gb_schema_action *a, const struct gb_cs_param *p,
			    size_t n, struct gb_sim_error *e)
{
	if (!check_version(sv, p, n, e))
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct gb_schema_param *s;

		if (common_key(p[i].key))
			continue;
		if (!(s = find_param(a, p[i].key))) {
			gb_sim_error_set(e, 400, "UnknownParameter",
					 "The parameter %s is not recognized", p[i].key);
			return false;
		}
		if (have_key(p, i, p[i].key)) {
			gb_sim_error_set(e, 400, "InvalidQueryParameter",
					 "The parameter %s is given more than once", p[i].key);
			return false;
		}
		if (!check_value(sv, s, p[i].key, p[i].value, e))
			return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (!common_key(p[i].key) && !check_numbering(p, n, p[i].key, e))
			return false;
	}
	return check_required(sv, a, p, n, e);
}

bool gb_schema_check(enum gb_sim_action a, const struct gb_cs_param *p, size_t n,
		     struct gb_sim_error *e)
{
	if ((unsigned)a >= GB_SIM_ACTION_COUNT) {
		gb_sim_error_set(e, 400, "InvalidAction", "no such action");
		return false;
	}
	return gb_schema_check_action(&gb_schema_ec2, &ec2_actions[a], p, n, e);
}

/*****************************************************************************
 *  --dump-schema
 *****************************************************************************/

static const char *type_name(enum gb_schema_type t)
{
	switch (t) {
	case GB_SCHEMA_STRING:
		return "string";
	case GB_SCHEMA_INTEGER:
		return "integer";
	case GB_SCHEMA_BOOLEAN:
		return "boolean";
	case GB_SCHEMA_ENUM:
		return "enum";
	case GB_SCHEMA_TIMESTAMP:
		return "timestamp";
	}
	return "unknown";
}

static json_t *param_json(const struct gb_schema_param *s)
{
	json_t *o = json_pack("{s:s,s:s}", "name", s->name, "type", type_name(s->type));

	if (!o)
		return NULL;
	if (s->type == GB_SCHEMA_ENUM) {
		json_t *v = json_array();

		for (size_t i = 0; s->values[i]; i++)
			json_array_append_new(v, json_string(s->values[i]));
		json_object_set_new(o, "values", v);
	}
	if (s->flags & GB_SCHEMA_REQUIRED)
		json_object_set_new(o, "required", json_true());
	if (s->flags & GB_SCHEMA_IN_ITEM)
		json_object_set_new(o, "required_in_item", json_true());
	if (s->flags & GB_SCHEMA_MIN)
		json_object_set_new(o, "min", json_integer(s->min));
	if (s->flags & GB_SCHEMA_MAX)
		json_object_set_new(o, "max", json_integer(s->max));
	if (s->chars)
		json_object_set_new(o, "chars", json_string(s->chars));
	return o;
}

static json_t *actions_json(const struct gb_schema_service *sv)
{
	json_t *acts = json_object();

	for (size_t a = 0; acts && a < sv->n; a++) {
		json_t *l = json_array();

		for (size_t i = 0; l && i < sv->actions[a].n; i++)
			json_array_append_new(l, param_json(&sv->actions[a].p[i]));
		json_object_set_new(acts, sv->actions[a].name, l);
	}
	return acts;
}

char *gb_schema_dump(void)
{
	json_t *doc;
	char *out;

	doc = json_pack("{s:s,s:[s,s],s:o*,s:{s:s,s:o*}}", "version", gb_schema_ec2.version,
			"common", "Action", "Version", "actions", actions_json(&gb_schema_ec2),
			"sts", "version", gb_schema_sts.version, "actions",
			actions_json(&gb_schema_sts));
	if (!doc)
		return NULL;
	out = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	return out;
}
