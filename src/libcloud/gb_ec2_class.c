/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_ec2_class.c - EC2 error codes to error classes (what the caller does)
 */
#include "config.h"

#include <string.h>

#include "gb_ec2.h"
#include "gb_log.h"
#include "gb_str.h"

/*
 * Codes from "Error codes for the Amazon EC2 API" as summarised in
 * shared/research/seed-and-protocols.md §4 and errors-manifest.tsv, plus
 * the throttling and transient codes of botocore's standard retry mode
 * (botocore/retries/standard.py) and the usual STS/signature codes.
 */
static const struct {
	const char *code;
	enum gb_ec2_class cls;
} table[] = {
	/* no capacity for this request here and now: next pool/AZ/region */
	{ "InsufficientInstanceCapacity", GB_EC2_CLASS_CAPACITY },
	{ "InsufficientHostCapacity", GB_EC2_CLASS_CAPACITY },
	{ "InsufficientReservedInstanceCapacity", GB_EC2_CLASS_CAPACITY },
	{ "InsufficientReservedInstancesCapacity", GB_EC2_CLASS_CAPACITY },
	{ "InsufficientCapacityOnHost", GB_EC2_CLASS_CAPACITY },
	{ "InsufficientFreeAddressesInSubnet", GB_EC2_CLASS_ADDRESSES },
	{ "Unsupported", GB_EC2_CLASS_UNSUPPORTED },	/* type not offered in the AZ */
	{ GB_EC2_CODE_SPOT_PRICE, GB_EC2_CLASS_CAPACITY },
	{ "UnfulfillableCapacity", GB_EC2_CLASS_CAPACITY },
	{ GB_EC2_CODE_RESERVATION_FULL, GB_EC2_CLASS_CAPACITY },	/* of that reservation */
	/* account limits, per region */
	{ "InstanceLimitExceeded", GB_EC2_CLASS_QUOTA },
	{ "VcpuLimitExceeded", GB_EC2_CLASS_QUOTA },
	{ GB_EC2_CODE_SPOT_COUNT, GB_EC2_CLASS_QUOTA },
	{ "ResourceLimitExceeded", GB_EC2_CLASS_QUOTA },
	/* request rate */
	{ "RequestLimitExceeded", GB_EC2_CLASS_THROTTLE },
	{ "Throttling", GB_EC2_CLASS_THROTTLE },
	{ "ThrottlingException", GB_EC2_CLASS_THROTTLE },
	{ "ThrottledException", GB_EC2_CLASS_THROTTLE },
	{ "EC2ThrottledException", GB_EC2_CLASS_THROTTLE },
	{ "RequestThrottled", GB_EC2_CLASS_THROTTLE },
	{ "RequestThrottledException", GB_EC2_CLASS_THROTTLE },
	{ "TooManyRequestsException", GB_EC2_CLASS_THROTTLE },
	{ "BandwidthLimitExceeded", GB_EC2_CLASS_THROTTLE },
	{ "SlowDown", GB_EC2_CLASS_THROTTLE },
	/* the request is wrong: fix the configuration (or the code) */
	{ GB_EC2_CODE_PARAM_VALUE, GB_EC2_CLASS_CONFIG },
	{ "InvalidParameter", GB_EC2_CLASS_CONFIG },
	{ GB_EC2_CODE_PARAM_COMBINATION, GB_EC2_CLASS_CONFIG },
	{ "MissingParameter", GB_EC2_CLASS_CONFIG },
	{ "UnknownParameter", GB_EC2_CLASS_CONFIG },
	{ "InvalidAction", GB_EC2_CLASS_CONFIG },
	{ "InvalidSubnetID.NotFound", GB_EC2_CLASS_CONFIG },
	{ "InvalidSubnetId.NotFound", GB_EC2_CLASS_CONFIG },
	{ "InvalidAMIID.NotFound", GB_EC2_CLASS_CONFIG },
	{ "InvalidAMIID.Malformed", GB_EC2_CLASS_CONFIG },
	{ "InvalidAMIID.Unavailable", GB_EC2_CLASS_CONFIG },
	{ "InvalidKeyPair.NotFound", GB_EC2_CLASS_CONFIG },
	{ "InvalidGroup.NotFound", GB_EC2_CLASS_CONFIG },
	{ "InvalidSecurityGroupID.NotFound", GB_EC2_CLASS_CONFIG },
	{ "InvalidInstanceID.NotFound", GB_EC2_CLASS_CONFIG },
	{ "InvalidInstanceID.Malformed", GB_EC2_CLASS_CONFIG },
	{ "InvalidInstanceType", GB_EC2_CLASS_CONFIG },
	/* a targeted reservation (ODCR or Capacity Block) EC2 does not know */
	{ GB_EC2_CODE_RESERVATION_UNKNOWN, GB_EC2_CLASS_CONFIG },
	{ "InvalidCapacityReservationId.Malformed", GB_EC2_CLASS_CONFIG },
	{ "IdempotentParameterMismatch", GB_EC2_CLASS_IDEMPOTENT },
	{ "IdempotentInstanceTerminated", GB_EC2_CLASS_IDEMPOTENT },
	{ "InvalidClientToken", GB_EC2_CLASS_CONFIG },
	{ "InvalidNextToken", GB_EC2_CLASS_CONFIG },
	{ "InvalidPaginationToken", GB_EC2_CLASS_CONFIG },
	{ "DryRunOperation", GB_EC2_CLASS_CONFIG },
	/*
	 * Placement groups: a name taken (the caller decides whether the
	 * group is its own), a group still holding instances, a group that
	 * does not exist.  The limit on groups is the account's, per region.
	 * An InsufficientInstanceCapacity inside a cluster group is the usual
	 * CAPACITY.  EFA and network-card mistakes in RunInstances arrive as
	 * InvalidParameterCombination / InvalidParameterValue (above).
	 */
	{ GB_EC2_CODE_PG_DUPLICATE, GB_EC2_CLASS_CONFIG },
	{ GB_EC2_CODE_PG_IN_USE, GB_EC2_CLASS_CONFIG },
	{ GB_EC2_CODE_PG_UNKNOWN, GB_EC2_CLASS_CONFIG },
	{ GB_EC2_CODE_PG_LIMIT, GB_EC2_CLASS_QUOTA },
	/*
	 * Limits of one request, not of the region: more resources, tags or
	 * security groups than EC2 takes in one call or on one instance.
	 * Asking another region the same would fail the same way.
	 */
	{ "ResourceCountExceeded", GB_EC2_CLASS_CONFIG },
	{ "TagLimitExceeded", GB_EC2_CLASS_CONFIG },
	{ "SecurityGroupsPerInstanceLimitExceeded", GB_EC2_CLASS_CONFIG },
	/*
	 * The account may not use this region (now): an opt-in region not
	 * enabled, an account still being verified, an SCP or IAM condition
	 * that denies the region.  EC2 also answers AuthFailure for bad
	 * credentials, in every region alike: the orchestrator tells the two
	 * apart by whether another region accepted the same credentials.
	 */
	{ "OptInRequired", GB_EC2_CLASS_REGION },
	{ "PendingVerification", GB_EC2_CLASS_REGION },
	{ "UnauthorizedOperation", GB_EC2_CLASS_REGION },
	{ "AuthFailure", GB_EC2_CLASS_REGION },
	/* who we are: the same in every region */
	{ "RequestExpired", GB_EC2_CLASS_AUTH },
	{ "InvalidSecurity.RequestHasExpired", GB_EC2_CLASS_AUTH },
	{ "SignatureDoesNotMatch", GB_EC2_CLASS_AUTH },
	{ "IncompleteSignature", GB_EC2_CLASS_AUTH },
	{ "MissingAuthenticationToken", GB_EC2_CLASS_AUTH },
	{ "InvalidClientTokenId", GB_EC2_CLASS_AUTH },
	{ "ExpiredToken", GB_EC2_CLASS_AUTH },
	{ "Blocked", GB_EC2_CLASS_AUTH },
	/* the service had a bad moment: retry with back-off */
	{ "InternalError", GB_EC2_CLASS_TRANSIENT },
	{ "InternalFailure", GB_EC2_CLASS_TRANSIENT },
	{ "ServerInternal", GB_EC2_CLASS_TRANSIENT },
	{ "ServiceUnavailable", GB_EC2_CLASS_TRANSIENT },
	{ "Unavailable", GB_EC2_CLASS_TRANSIENT },
	{ "RequestTimeout", GB_EC2_CLASS_TRANSIENT },
	{ "RequestTimeoutException", GB_EC2_CLASS_TRANSIENT },
	{ "PriorRequestNotComplete", GB_EC2_CLASS_TRANSIENT },
	/* CreateTags: another call is changing the resource's tags */
	{ "ConcurrentTagAccess", GB_EC2_CLASS_TRANSIENT },
};

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Class of an unknown code from its name alone, or NONE. */
static enum gb_ec2_class by_name(const char *code)
{
	if (!*code)
		return GB_EC2_CLASS_NONE;
	if (gb_str_has_prefix(code, "Insufficient"))
		return GB_EC2_CLASS_CAPACITY;
	if (strstr(code, "Throttl"))
		return GB_EC2_CLASS_THROTTLE;
	if (has_suffix(code, "LimitExceeded"))
		return GB_EC2_CLASS_QUOTA;
	if (gb_str_has_prefix(code, "Unauthorized") || strstr(code, "Expired"))
		return GB_EC2_CLASS_AUTH;
	if (gb_str_has_prefix(code, "Invalid") || gb_str_has_prefix(code, "Missing") ||
	    has_suffix(code, ".NotFound") || has_suffix(code, ".Malformed"))
		return GB_EC2_CLASS_CONFIG;
	return GB_EC2_CLASS_NONE;
}

static enum gb_ec2_class by_status(long status)
{
	if (status == 429)
		return GB_EC2_CLASS_THROTTLE;
	if (status == 401 || status == 403)
		return GB_EC2_CLASS_AUTH;
	if (status >= 500 && status <= 599)
		return GB_EC2_CLASS_TRANSIENT;
	return GB_EC2_CLASS_CONFIG;
}

bool gb_ec2_code_class(const char *code, enum gb_ec2_class *cls)
{
	if (!code)
		return false;
	/* old-style "Client.RequestLimitExceeded" / "Server.InternalError" */
	if (gb_str_has_prefix(code, "Client.") || gb_str_has_prefix(code, "Server."))
		code += 7;
	for (size_t i = 0; i < GB_ARRAY_LEN(table); i++) {
		if (strcmp(code, table[i].code) == 0) {
			*cls = table[i].cls;
			return true;
		}
	}
	return false;
}

enum gb_ec2_class gb_ec2_classify(const char *code, long http_status,
				  bool *known)
{
	enum gb_ec2_class cls;
	char q[160];

	if (!code)
		code = "";
	if (gb_ec2_code_class(code, &cls)) {
		if (known)
			*known = true;
		return cls;
	}
	if (known)
		*known = false;
	if (gb_str_has_prefix(code, "Client.") || gb_str_has_prefix(code, "Server."))
		code += 7;
	cls = by_name(code);
	if (cls == GB_EC2_CLASS_NONE)
		cls = by_status(http_status);
	if (*code)
		gb_log_warn("ec2_unknown_code code=%s status=%ld class=%s",
			    gb_log_q(q, sizeof(q), code), http_status,
			    gb_ec2_class_name(cls));
	return cls;
}

gb_err_t gb_ec2_class_err(enum gb_ec2_class cls)
{
	switch (cls) {
	case GB_EC2_CLASS_NONE:
		return GB_E_OK;
	case GB_EC2_CLASS_CAPACITY:
	case GB_EC2_CLASS_ADDRESSES:
	case GB_EC2_CLASS_UNSUPPORTED:
		return GB_E_CAPACITY;
	case GB_EC2_CLASS_QUOTA:
		return GB_E_QUOTA;
	case GB_EC2_CLASS_THROTTLE:
		return GB_E_THROTTLE;
	case GB_EC2_CLASS_CONFIG:
	case GB_EC2_CLASS_IDEMPOTENT:
		return GB_E_CLOUDCONFIG;
	case GB_EC2_CLASS_AUTH:
	case GB_EC2_CLASS_REGION:
		return GB_E_AUTH;
	case GB_EC2_CLASS_TRANSIENT:
		return GB_E_TRANSIENT;
	}
	return GB_E_CLOUD;
}

const char *gb_ec2_class_name(enum gb_ec2_class cls)
{
	switch (cls) {
	case GB_EC2_CLASS_NONE:
		return "NONE";
	case GB_EC2_CLASS_CAPACITY:
		return "CAPACITY";
	case GB_EC2_CLASS_QUOTA:
		return "QUOTA";
	case GB_EC2_CLASS_THROTTLE:
		return "THROTTLE";
	case GB_EC2_CLASS_CONFIG:
		return "CONFIG";
	case GB_EC2_CLASS_AUTH:
		return "AUTH";
	case GB_EC2_CLASS_TRANSIENT:
		return "TRANSIENT";
	case GB_EC2_CLASS_REGION:
		return "REGION";
	case GB_EC2_CLASS_ADDRESSES:
		return "ADDRESSES";
	case GB_EC2_CLASS_UNSUPPORTED:
		return "UNSUPPORTED";
	case GB_EC2_CLASS_IDEMPOTENT:
		return "IDEMPOTENT";
	}
	return "UNKNOWN";
}

bool gb_ec2_class_retryable(enum gb_ec2_class cls)
{
	return cls == GB_EC2_CLASS_THROTTLE || cls == GB_EC2_CLASS_TRANSIENT;
}
