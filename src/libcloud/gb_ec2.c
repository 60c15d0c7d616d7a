/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_ec2.c - EC2 Query API client: form bodies, signing, retries, actions
 */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gb_crypto.h"
#include "gb_ec2.h"
#include "gb_ec2_xml.h"
#include "gb_log.h"
#include "gb_partition.h"
#include "gb_sigv4.h"
#include "gb_util.h"

#define FORM_CONTENT_TYPE "application/x-www-form-urlencoded; charset=utf-8"

struct gb_ec2 {
	char *region;
	char *endpoint;
	gb_creds_t *creds;		/* BORROWED */
	gb_http_t *http;
	struct gb_retry_policy retry;
	int max_pages;
	void (*sleep)(double seconds, void *ctx);
	double (*mono)(void *ctx);
	double (*wall)(void *ctx);
	double (*uniform)(void *ctx);
	void *seam_ctx;
};

/* ---- form bodies ---------------------------------------------------------- */

/* The same with a printf-formatted key ("Filter.%zu.Name"). */
static void form_putf(struct gb_buf *b, const char *value, const char *kfmt, ...)
	__attribute__((format(printf, 3, 4)));

static void form_putf(struct gb_buf *b, const char *value, const char *kfmt, ...)
{
	char key[128];
	va_list ap;

	va_start(ap, kfmt);
	vsnprintf(key, sizeof(key), kfmt, ap);
	va_end(ap);
	gb_sigv4_form_put(b, key, value);
}

static void form_int(struct gb_buf *b, const char *key, long v)
{
	char num[32];

	snprintf(num, sizeof(num), "%ld", v);
	gb_sigv4_form_put(b, key, num);
}

static gb_err_t need(const char *what, const char *name, const char *v,
		     gb_error_t *err)
{
	if (!v || !*v)
		return gb_errorf(err, GB_E_INVALID, "%s: %s is required", what, name);
	return GB_E_OK;
}

/* Every element of a list must be a non-empty string. */
static gb_err_t need_list(const char *what, const char *name,
			  const char *const *v, size_t n, gb_error_t *err)
{
	if (n && !v)
		return gb_errorf(err, GB_E_INVALID, "%s: %s list missing", what, name);
	for (size_t i = 0; i < n; i++) {
		if (!v[i] || !*v[i])
			return gb_errorf(err, GB_E_INVALID, "%s: %s %zu is empty",
					 what, name, i + 1);
	}
	return GB_E_OK;
}

static gb_err_t form_filters(struct gb_buf *b, const char *what,
			     const struct gb_ec2_filter *f, size_t n,
			     gb_error_t *err)
{
	if (n && !f)
		return gb_errorf(err, GB_E_INVALID, "%s: filters missing", what);
	for (size_t i = 0; i < n; i++) {
		gb_err_t rc = need(what, "Filter.Name", f[i].name, err);

		if (!rc && f[i].n_values == 0)
			rc = gb_errorf(err, GB_E_INVALID, "%s: filter %s has no value",
				       what, f[i].name);
		if (!rc)
			rc = need_list(what, "filter value", f[i].values,
				       f[i].n_values, err);
		if (rc)
			return rc;
		form_putf(b, f[i].name, "Filter.%zu.Name", i + 1);
		for (size_t k = 0; k < f[i].n_values; k++)
			form_putf(b, f[i].values[k], "Filter.%zu.Value.%zu", i + 1,
				  k + 1);
	}
	return GB_E_OK;
}

static gb_err_t form_done(struct gb_buf *b, gb_error_t *err)
{
	return gb_buf_failed(b) ? gb_errorf(err, GB_E_NOMEM, "out of memory")
				: GB_E_OK;
}

static void form_start(struct gb_buf *b, const char *action)
{
	gb_sigv4_form_put(b, "Action", action);
	gb_sigv4_form_put(b, "Version", GB_EC2_API_VERSION);
}

static gb_err_t check_token(const char *t, gb_error_t *err)
{
	size_t n = t ? strlen(t) : 0;

	if (n == 0 || n > GB_EC2_CLIENT_TOKEN_MAX)
		return gb_errorf(err, GB_E_INVALID,
				 "RunInstances: ClientToken must have 1 to %d characters",
				 GB_EC2_CLIENT_TOKEN_MAX);
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f)
			return gb_errorf(err, GB_E_INVALID,
					 "RunInstances: ClientToken must be printable ASCII");
	}
	return GB_E_OK;
}

static gb_err_t check_tag_specs(const char *what, const struct gb_ec2_tag_spec *specs,
			       size_t n, gb_error_t *err)
{
	gb_err_t rc;

	if (n && !specs)
		return gb_errorf(err, GB_E_INVALID, "%s: tag specs missing", what);
	for (size_t i = 0; i < n; i++) {
		const struct gb_ec2_tag_spec *ts = &specs[i];

		if ((rc = need(what, "TagSpecification.ResourceType",
			       ts->resource_type, err)))
			return rc;
		if (ts->n_tags && !ts->tags)
			return gb_errorf(err, GB_E_INVALID, "%s: tags missing", what);
		for (size_t k = 0; k < ts->n_tags; k++) {
			if ((rc = need(what, "Tag.Key", ts->tags[k].key, err)))
				return rc;
		}
	}
	return GB_E_OK;
}

static void form_tag_specs(struct gb_buf *out, const struct gb_ec2_tag_spec *specs,
			   size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct gb_ec2_tag_spec *ts = &specs[i];

		form_putf(out, ts->resource_type, "TagSpecification.%zu.ResourceType",
			  i + 1);
		for (size_t k = 0; k < ts->n_tags; k++) {
			form_putf(out, ts->tags[k].key,
				  "TagSpecification.%zu.Tag.%zu.Key", i + 1, k + 1);
			form_putf(out, ts->tags[k].value ? ts->tags[k].value : "",
				  "TagSpecification.%zu.Tag.%zu.Value", i + 1, k + 1);
		}
	}
}

/* EC2 InstanceNetworkInterfaceSpecification.InterfaceType: "interface | efa | efa-only" */
static bool interface_type_ok(const char *t)
{
	return !strcmp(t, "interface") || !strcmp(t, "efa") || !strcmp(t, "efa-only");
}

static gb_err_t check_net_if(size_t n, const struct gb_ec2_net_if *ni, gb_error_t *err)
{
	char name[64];

	if (ni->device_index < 0)
		return gb_errorf(err, GB_E_INVALID,
				 "RunInstances: NetworkInterface.%zu.DeviceIndex %d is negative",
				 n, ni->device_index);
	if (ni->network_card_index < 0)
		return gb_errorf(err, GB_E_INVALID,
				 "RunInstances: NetworkInterface.%zu.NetworkCardIndex %d is negative",
				 n, ni->network_card_index);
	if (ni->interface_type && !interface_type_ok(ni->interface_type))
		return gb_errorf(err, GB_E_INVALID,
				 "RunInstances: NetworkInterface.%zu.InterfaceType '%.40s' is not interface, efa or efa-only",
				 n, ni->interface_type);
	if (ni->subnet_id && !*ni->subnet_id)
		return gb_errorf(err, GB_E_INVALID,
				 "RunInstances: NetworkInterface.%zu.SubnetId is empty", n);
	snprintf(name, sizeof(name), "NetworkInterface.%zu.SecurityGroupId", n);
	return need_list("RunInstances", name, ni->security_group_ids,
			 ni->n_security_group_ids, err);
}

/*
 * EC2 RunInstances: "If you specify a network interface, you must specify
 * any security groups and subnets as part of the network interface."
 */
static gb_err_t check_net_ifs(const struct gb_ec2_run_params *p, gb_error_t *err)
{
	gb_err_t rc;

	if (!p->n_net_ifs)
		return GB_E_OK;
	if (!p->net_ifs)
		return gb_errorf(err, GB_E_INVALID, "RunInstances: network interfaces missing");
	if (p->subnet_id && *p->subnet_id)
		return gb_errorf(err, GB_E_INVALID,
				 "RunInstances: SubnetId with NetworkInterface: the subnet goes on each interface");
	if (p->n_security_group_ids)
		return gb_errorf(err, GB_E_INVALID,
				 "RunInstances: SecurityGroupId with NetworkInterface: the security groups go on each interface");
	for (size_t i = 0; i < p->n_net_ifs; i++) {
		if ((rc = check_net_if(i + 1, &p->net_ifs[i], err)))
			return rc;
	}
	return GB_E_OK;
}

static void form_net_ifs(struct gb_buf *out, const struct gb_ec2_run_params *p)
{
	char num[32];

	for (size_t i = 0; i < p->n_net_ifs; i++) {
		const struct gb_ec2_net_if *ni = &p->net_ifs[i];
		size_t n = i + 1;

		snprintf(num, sizeof(num), "%d", ni->device_index);
		form_putf(out, num, "NetworkInterface.%zu.DeviceIndex", n);
		snprintf(num, sizeof(num), "%d", ni->network_card_index);
		form_putf(out, num, "NetworkInterface.%zu.NetworkCardIndex", n);
		if (ni->interface_type)
			form_putf(out, ni->interface_type, "NetworkInterface.%zu.InterfaceType", n);
		if (ni->subnet_id)
			form_putf(out, ni->subnet_id, "NetworkInterface.%zu.SubnetId", n);
		for (size_t k = 0; k < ni->n_security_group_ids; k++)
			form_putf(out, ni->security_group_ids[k],
				  "NetworkInterface.%zu.SecurityGroupId.%zu", n, k + 1);
		form_putf(out, ni->delete_on_termination ? "true" : "false",
			  "NetworkInterface.%zu.DeleteOnTermination", n);
	}
}

/* EC2 CapacityReservationPreference: "capacity-reservations-only | open | none" */
static bool preference_ok(const char *s)
{
	return !strcmp(s, "open") || !strcmp(s, "none") ||
	       !strcmp(s, "capacity-reservations-only");
}

/* A string that is set must not be empty: "" would silently drop the reservation. */
static gb_err_t not_empty(const char *name, const char *v, gb_error_t *err)
{
	if (v && !*v)
		return gb_errorf(err, GB_E_INVALID, "RunInstances: %s is empty", name);
	return GB_E_OK;
}

/*
 * EC2 CapacityReservationSpecification: a preference or a target, not
 * both; a target is a reservation id or a resource group ARN.  EC2
 * InstanceMarketOptions: a Capacity Block is launched into by its
 * reservation id, and MarketType is capacity-block or spot, not both.
 */
static gb_err_t check_capacity_reservation(const struct gb_ec2_run_params *p,
					   gb_error_t *err)
{
	const char *id = p->capacity_reservation_id;
	const char *arn = p->capacity_reservation_group_arn;
	const char *pref = p->capacity_reservation_preference;
	gb_err_t rc;

	if ((rc = not_empty("CapacityReservationId", id, err)) ||
	    (rc = not_empty("CapacityReservationResourceGroupArn", arn, err)))
		return rc;
	if (id && arn)
		return gb_errorf(err, GB_E_INVALID,
				 "RunInstances: CapacityReservationId and CapacityReservationResourceGroupArn exclude each other");
	if ((id || arn) && pref)
		return gb_errorf(err, GB_E_INVALID,
				 "RunInstances: CapacityReservationTarget and CapacityReservationPreference exclude each other");
	if (pref && !preference_ok(pref))
		return gb_errorf(err, GB_E_INVALID,
				 "RunInstances: CapacityReservationPreference '%.40s' is not open, none or capacity-reservations-only",
				 pref);
	if (p->capacity_block && !id)
		return gb_errorf(err, GB_E_INVALID,
				 "RunInstances: a capacity block needs its CapacityReservationId");
	if (p->capacity_block && p->spot)
		return gb_errorf(err, GB_E_INVALID,
				 "RunInstances: MarketType capacity-block and spot exclude each other");
	return GB_E_OK;
}

static void form_capacity_reservation(struct gb_buf *out, const struct gb_ec2_run_params *p)
{
	if (p->capacity_reservation_id)
		gb_sigv4_form_put(out, "CapacityReservationSpecification.CapacityReservationTarget."
				  "CapacityReservationId", p->capacity_reservation_id);
	if (p->capacity_reservation_group_arn)
		gb_sigv4_form_put(out, "CapacityReservationSpecification.CapacityReservationTarget."
				  "CapacityReservationResourceGroupArn",
				  p->capacity_reservation_group_arn);
	if (p->capacity_reservation_preference)
		gb_sigv4_form_put(out, "CapacityReservationSpecification.CapacityReservationPreference",
				  p->capacity_reservation_preference);
	if (p->capacity_block)
		gb_sigv4_form_put(out, "InstanceMarketOptions.MarketType", "capacity-block");
}

static gb_err_t check_run(const struct gb_ec2_run_params *p, gb_error_t *err)
{
	static const char *const what = "RunInstances";
	gb_err_t rc;

	if ((rc = need(what, "ImageId", p->image_id, err)) ||
	    (rc = need(what, "InstanceType", p->instance_type, err)) ||
	    (rc = need_list(what, "SecurityGroupId", p->security_group_ids,
			    p->n_security_group_ids, err)))
		return rc;
	if (p->min_count < 1 || p->max_count < p->min_count)
		return gb_errorf(err, GB_E_INVALID,
				 "RunInstances: need 1 <= MinCount (%d) <= MaxCount (%d)",
				 p->min_count, p->max_count);
	if (p->user_data_len > GB_EC2_USER_DATA_MAX ||
	    (p->user_data_len && !p->user_data))
		return gb_errorf(err, GB_E_INVALID,
				 "RunInstances: UserData over %d bytes or missing",
				 GB_EC2_USER_DATA_MAX);
	if ((rc = check_tag_specs(what, p->tag_specs, p->n_tag_specs, err)) ||
	    (rc = check_capacity_reservation(p, err)))
		return rc;
	return check_net_ifs(p, err);
}

static gb_err_t form_user_data(struct gb_buf *b, const struct gb_ec2_run_params *p,
			       gb_error_t *err)
{
	size_t n = gb_crypto_base64_len(p->user_data_len) + 1;
	char *b64;

	if (!p->user_data_len)
		return GB_E_OK;
	b64 = malloc(n);
	if (!b64)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	gb_crypto_base64(p->user_data, p->user_data_len, b64, n);
	/* "User data must be base64-encoded", then form-encoded (+ / =) */
	gb_sigv4_form_put(b, "UserData", b64);
	free(b64);
	return GB_E_OK;
}

gb_err_t gb_ec2_form_run_instances(const struct gb_ec2_run_params *p,
				   const char *client_token, struct gb_buf *out,
				   gb_error_t *err)
{
	gb_err_t rc;

	if ((rc = check_run(p, err)) || (rc = check_token(client_token, err)))
		return rc;
	form_start(out, "RunInstances");
	gb_sigv4_form_put(out, "ImageId", p->image_id);
	gb_sigv4_form_put(out, "InstanceType", p->instance_type);
	form_int(out, "MinCount", p->min_count);
	form_int(out, "MaxCount", p->max_count);
	if (p->subnet_id && *p->subnet_id)
		gb_sigv4_form_put(out, "SubnetId", p->subnet_id);
	if (p->availability_zone && *p->availability_zone)
		gb_sigv4_form_put(out, "Placement.AvailabilityZone", p->availability_zone);
	if (p->placement_group && *p->placement_group)
		gb_sigv4_form_put(out, "Placement.GroupName", p->placement_group);
	for (size_t i = 0; i < p->n_security_group_ids; i++)
		form_putf(out, p->security_group_ids[i], "SecurityGroupId.%zu", i + 1);
	form_net_ifs(out, p);
	if (p->key_name && *p->key_name)
		gb_sigv4_form_put(out, "KeyName", p->key_name);
	gb_sigv4_form_put(out, "ClientToken", client_token);
	if (p->iam_instance_profile_name && *p->iam_instance_profile_name)
		gb_sigv4_form_put(out, "IamInstanceProfile.Name", p->iam_instance_profile_name);
	if (p->iam_instance_profile_arn && *p->iam_instance_profile_arn)
		gb_sigv4_form_put(out, "IamInstanceProfile.Arn", p->iam_instance_profile_arn);
	rc = form_user_data(out, p, err);
	if (rc)
		return rc;
	if (p->metadata_tags)
		gb_sigv4_form_put(out, "MetadataOptions.InstanceMetadataTags", "enabled");
	form_tag_specs(out, p->tag_specs, p->n_tag_specs);
	form_capacity_reservation(out, p);
	if (p->spot) {
		gb_sigv4_form_put(out, "InstanceMarketOptions.MarketType", "spot");
		if (p->spot_instance_type)
			gb_sigv4_form_put(out, "InstanceMarketOptions.SpotOptions.SpotInstanceType",
				 p->spot_instance_type);
		if (p->spot_max_price)
			gb_sigv4_form_put(out, "InstanceMarketOptions.SpotOptions.MaxPrice",
				 p->spot_max_price);
		if (p->spot_interruption)
			gb_sigv4_form_put(out, "InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior",
				 p->spot_interruption);
	}
	if (p->dry_run)
		gb_sigv4_form_put(out, "DryRun", "true");
	return form_done(out, err);
}

static gb_err_t check_max_results(const char *what, int v, gb_error_t *err)
{
	if (v != 0 && (v < 5 || v > 1000))
		return gb_errorf(err, GB_E_INVALID,
				 "%s: MaxResults %d is outside 5..1000", what, v);
	return GB_E_OK;
}

gb_err_t gb_ec2_form_describe_instances(const struct gb_ec2_describe_params *p,
					const char *next_token,
					struct gb_buf *out, gb_error_t *err)
{
	static const char *const what = "DescribeInstances";
	struct gb_ec2_describe_params none = { 0 };
	gb_err_t rc;

	if (!p)
		p = &none;
	if ((rc = need_list(what, "InstanceId", p->instance_ids,
			    p->n_instance_ids, err)) ||
	    (rc = check_max_results(what, p->max_results, err)))
		return rc;
	form_start(out, what);
	for (size_t i = 0; i < p->n_instance_ids; i++)
		form_putf(out, p->instance_ids[i], "InstanceId.%zu", i + 1);
	rc = form_filters(out, what, p->filters, p->n_filters, err);
	if (rc)
		return rc;
	/* "You cannot specify this parameter and the instance IDs parameter" */
	if (p->max_results && !p->n_instance_ids)
		form_int(out, "MaxResults", p->max_results);
	if (next_token)
		gb_sigv4_form_put(out, "NextToken", next_token);
	return form_done(out, err);
}

gb_err_t gb_ec2_form_describe_instance_type_offerings(
	const struct gb_ec2_offerings_params *p, const char *next_token,
	struct gb_buf *out, gb_error_t *err)
{
	static const char *const what = "DescribeInstanceTypeOfferings";
	struct gb_ec2_offerings_params none = { 0 };
	gb_err_t rc;

	if (!p)
		p = &none;
	rc = check_max_results(what, p->max_results, err);
	if (rc)
		return rc;
	form_start(out, what);
	if (p->location_type && *p->location_type)
		gb_sigv4_form_put(out, "LocationType", p->location_type);
	rc = form_filters(out, what, p->filters, p->n_filters, err);
	if (rc)
		return rc;
	if (p->max_results)
		form_int(out, "MaxResults", p->max_results);
	if (next_token)
		gb_sigv4_form_put(out, "NextToken", next_token);
	return form_done(out, err);
}

gb_err_t gb_ec2_form_terminate_instances(const char *const *ids, size_t n_ids,
					 struct gb_buf *out, gb_error_t *err)
{
	gb_err_t rc = need_list("TerminateInstances", "InstanceId", ids, n_ids, err);

	if (rc)
		return rc;
	if (n_ids == 0 || n_ids > GB_EC2_TERMINATE_BATCH)
		return gb_errorf(err, GB_E_INVALID,
				 "TerminateInstances: %zu ids (1..%d per call)", n_ids,
				 GB_EC2_TERMINATE_BATCH);
	form_start(out, "TerminateInstances");
	for (size_t i = 0; i < n_ids; i++)
		form_putf(out, ids[i], "InstanceId.%zu", i + 1);
	return form_done(out, err);
}

gb_err_t gb_ec2_form_create_tags(const char *const *resource_ids, size_t n_ids,
				 const struct gb_ec2_kv *tags, size_t n_tags,
				 struct gb_buf *out, gb_error_t *err)
{
	static const char *const what = "CreateTags";
	gb_err_t rc = need_list(what, "ResourceId", resource_ids, n_ids, err);

	if (rc)
		return rc;
	if (n_ids == 0 || n_ids > 1000 || n_tags == 0 || !tags)
		return gb_errorf(err, GB_E_INVALID,
				 "CreateTags: need 1..1000 resources and at least one tag");
	for (size_t i = 0; i < n_tags; i++) {
		if ((rc = need(what, "Tag.Key", tags[i].key, err)))
			return rc;
	}
	form_start(out, what);
	for (size_t i = 0; i < n_ids; i++)
		form_putf(out, resource_ids[i], "ResourceId.%zu", i + 1);
	for (size_t i = 0; i < n_tags; i++) {
		form_putf(out, tags[i].key, "Tag.%zu.Key", i + 1);
		form_putf(out, tags[i].value ? tags[i].value : "", "Tag.%zu.Value",
			  i + 1);
	}
	return form_done(out, err);
}

gb_err_t gb_ec2_form_describe_availability_zones(
	const struct gb_ec2_filter *filters, size_t n_filters,
	struct gb_buf *out, gb_error_t *err)
{
	gb_err_t rc;

	form_start(out, "DescribeAvailabilityZones");
	rc = form_filters(out, "DescribeAvailabilityZones", filters, n_filters, err);
	if (rc)
		return rc;
	return form_done(out, err);
}

/* EC2 CreatePlacementGroup: "Up to 255 ASCII characters" */
static gb_err_t check_group_name(const char *what, const char *name, gb_error_t *err)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > 255)
		return gb_errorf(err, GB_E_INVALID, "%s: GroupName must have 1 to 255 characters",
				 what);
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)name[i] < 0x20 || (unsigned char)name[i] >= 0x7f)
			return gb_errorf(err, GB_E_INVALID,
					 "%s: GroupName must be printable ASCII", what);
	}
	return GB_E_OK;
}

gb_err_t gb_ec2_form_describe_instance_types(const char *const *types,
					     size_t n_types,
					     const struct gb_ec2_filter *filters,
					     size_t n_filters, const char *next_token,
					     struct gb_buf *out, gb_error_t *err)
{
	static const char *const what = "DescribeInstanceTypes";
	gb_err_t rc = need_list(what, "InstanceType", types, n_types, err);

	if (rc)
		return rc;
	if (n_types > GB_EC2_INSTANCE_TYPES_MAX)
		return gb_errorf(err, GB_E_INVALID,
				 "DescribeInstanceTypes: %zu instance types (at most %d per call)",
				 n_types, GB_EC2_INSTANCE_TYPES_MAX);
	form_start(out, what);
	for (size_t i = 0; i < n_types; i++)
		form_putf(out, types[i], "InstanceType.%zu", i + 1);
	rc = form_filters(out, what, filters, n_filters, err);
	if (rc)
		return rc;
	/* at most 100 types are named, and a page holds 100: no page size needed */
	if (!n_types)
		form_int(out, "MaxResults", GB_EC2_INSTANCE_TYPES_PAGE);
	if (next_token)
		gb_sigv4_form_put(out, "NextToken", next_token);
	return form_done(out, err);
}

/* EC2 PlacementStrategy: cluster | spread | partition */
static bool strategy_ok(const char *s)
{
	return !strcmp(s, "cluster") || !strcmp(s, "spread") || !strcmp(s, "partition");
}

gb_err_t gb_ec2_form_create_placement_group(const char *name, const char *strategy,
					    const struct gb_ec2_tag_spec *spec,
					    struct gb_buf *out, gb_error_t *err)
{
	static const char *const what = "CreatePlacementGroup";
	gb_err_t rc;

	if ((rc = check_group_name(what, name, err)))
		return rc;
	if (!strategy || !strategy_ok(strategy))
		return gb_errorf(err, GB_E_INVALID,
				 "CreatePlacementGroup: Strategy '%.40s' is not cluster, spread or partition",
				 strategy ? strategy : "(none)");
	if (spec && (rc = check_tag_specs(what, spec, 1, err)))
		return rc;
	if (spec && strcmp(spec->resource_type, "placement-group") != 0)
		return gb_errorf(err, GB_E_INVALID,
				 "CreatePlacementGroup: TagSpecification.ResourceType '%.40s' is not placement-group",
				 spec->resource_type);
	form_start(out, what);
	gb_sigv4_form_put(out, "GroupName", name);
	gb_sigv4_form_put(out, "Strategy", strategy);
	if (spec)
		form_tag_specs(out, spec, 1);
	return form_done(out, err);
}

gb_err_t gb_ec2_form_delete_placement_group(const char *name, struct gb_buf *out,
					    gb_error_t *err)
{
	gb_err_t rc = check_group_name("DeletePlacementGroup", name, err);

	if (rc)
		return rc;
	form_start(out, "DeletePlacementGroup");
	gb_sigv4_form_put(out, "GroupName", name);
	return form_done(out, err);
}

gb_err_t gb_ec2_form_describe_placement_groups(const char *const *names,
					       size_t n_names,
					       const struct gb_ec2_filter *filters,
					       size_t n_filters, struct gb_buf *out,
					       gb_error_t *err)
{
	static const char *const what = "DescribePlacementGroups";
	gb_err_t rc = need_list(what, "GroupName", names, n_names, err);

	if (rc)
		return rc;
	form_start(out, what);
	for (size_t i = 0; i < n_names; i++)
		form_putf(out, names[i], "GroupName.%zu", i + 1);
	rc = form_filters(out, what, filters, n_filters, err);
	if (rc)
		return rc;
	return form_done(out, err);
}

gb_err_t gb_ec2_form_describe_security_groups(const char *const *ids, size_t n_ids,
					      const char *next_token,
					      struct gb_buf *out, gb_error_t *err)
{
	static const char *const what = "DescribeSecurityGroups";
	gb_err_t rc = need_list(what, "GroupId", ids, n_ids, err);

	if (rc)
		return rc;
	form_start(out, what);
	for (size_t i = 0; i < n_ids; i++)
		form_putf(out, ids[i], "GroupId.%zu", i + 1);
	/* pages only for "all groups": named groups come back together */
	if (!n_ids)
		form_int(out, "MaxResults", GB_EC2_SECURITY_GROUPS_PAGE);
	if (next_token)
		gb_sigv4_form_put(out, "NextToken", next_token);
	return form_done(out, err);
}

/* MaxResults of the capacity calls: 1..1000, 0 omitted. */
static gb_err_t check_max_results_1k(const char *what, int v, gb_error_t *err)
{
	if (v < 0 || v > GB_EC2_CAPACITY_RESERVATIONS_PAGE)
		return gb_errorf(err, GB_E_INVALID, "%s: MaxResults %d is outside 1..%d",
				 what, v, GB_EC2_CAPACITY_RESERVATIONS_PAGE);
	return GB_E_OK;
}

gb_err_t gb_ec2_form_describe_capacity_reservations(
	const struct gb_ec2_capacity_reservations_params *p, const char *next_token,
	struct gb_buf *out, gb_error_t *err)
{
	static const char *const what = "DescribeCapacityReservations";
	struct gb_ec2_capacity_reservations_params none = { 0 };
	gb_err_t rc;

	if (!p)
		p = &none;
	if ((rc = need_list(what, "CapacityReservationId", p->ids, p->n_ids, err)) ||
	    (rc = check_max_results_1k(what, p->max_results, err)))
		return rc;
	if (p->n_ids > GB_EC2_CAPACITY_RESERVATIONS_MAX)
		return gb_errorf(err, GB_E_INVALID,
				 "%s: %zu reservation ids (at most %d per call)", what,
				 p->n_ids, GB_EC2_CAPACITY_RESERVATIONS_MAX);
	form_start(out, what);
	for (size_t i = 0; i < p->n_ids; i++)
		form_putf(out, p->ids[i], "CapacityReservationId.%zu", i + 1);
	rc = form_filters(out, what, p->filters, p->n_filters, err);
	if (rc)
		return rc;
	/* as DescribeInstances: named reservations come back together */
	if (p->max_results && !p->n_ids)
		form_int(out, "MaxResults", p->max_results);
	if (next_token)
		gb_sigv4_form_put(out, "NextToken", next_token);
	return form_done(out, err);
}

static gb_err_t check_block_offerings(const struct gb_ec2_capacity_block_offerings_params *p,
				      gb_error_t *err)
{
	static const char *const what = "DescribeCapacityBlockOfferings";
	gb_err_t rc;

	if (!p)
		return gb_errorf(err, GB_E_INVALID, "%s: no parameters", what);
	if ((rc = need(what, "InstanceType", p->instance_type, err)) ||
	    (rc = check_max_results_1k(what, p->max_results, err)))
		return rc;
	if (p->instance_count < 1)
		return gb_errorf(err, GB_E_INVALID, "%s: InstanceCount %d is below 1", what,
				 p->instance_count);
	if (p->duration_hours < 1)
		return gb_errorf(err, GB_E_INVALID, "%s: CapacityDurationHours %d is below 1",
				 what, p->duration_hours);
	if (p->start_range < 0 || p->end_range < 0)
		return gb_errorf(err, GB_E_INVALID, "%s: a negative date range", what);
	if (p->start_range && p->end_range && p->end_range < p->start_range)
		return gb_errorf(err, GB_E_INVALID, "%s: EndDateRange before StartDateRange",
				 what);
	return GB_E_OK;
}

gb_err_t gb_ec2_form_describe_capacity_block_offerings(
	const struct gb_ec2_capacity_block_offerings_params *p, const char *next_token,
	struct gb_buf *out, gb_error_t *err)
{
	char when[32];
	gb_err_t rc = check_block_offerings(p, err);

	if (rc)
		return rc;
	form_start(out, "DescribeCapacityBlockOfferings");
	gb_sigv4_form_put(out, "InstanceType", p->instance_type);
	form_int(out, "InstanceCount", p->instance_count);
	form_int(out, "CapacityDurationHours", p->duration_hours);
	/* EC2 Query timestamps: ISO 8601 UTC, as botocore serializes them */
	if (p->start_range)
		gb_sigv4_form_put(out, "StartDateRange",
				  gb_time_iso(p->start_range, when, sizeof(when)));
	if (p->end_range)
		gb_sigv4_form_put(out, "EndDateRange",
				  gb_time_iso(p->end_range, when, sizeof(when)));
	if (p->max_results)
		form_int(out, "MaxResults", p->max_results);
	if (next_token)
		gb_sigv4_form_put(out, "NextToken", next_token);
	return form_done(out, err);
}

static gb_err_t check_spot_history(const struct gb_ec2_spot_price_history_params *p,
				   gb_error_t *err)
{
	static const char *const what = "DescribeSpotPriceHistory";
	gb_err_t rc;

	if ((rc = need_list(what, "InstanceType", p->instance_types, p->n_instance_types,
			    err)) ||
	    (rc = need_list(what, "ProductDescription", p->product_descriptions,
			    p->n_product_descriptions, err)) ||
	    (rc = check_max_results_1k(what, p->max_results, err)))
		return rc;
	if (p->availability_zone && !*p->availability_zone)
		return gb_errorf(err, GB_E_INVALID, "%s: AvailabilityZone is empty", what);
	if (p->start_time < 0 || p->end_time < 0)
		return gb_errorf(err, GB_E_INVALID, "%s: a negative time", what);
	if (p->start_time && p->end_time && p->end_time < p->start_time)
		return gb_errorf(err, GB_E_INVALID, "%s: EndTime before StartTime", what);
	return GB_E_OK;
}

gb_err_t gb_ec2_form_describe_spot_price_history(
	const struct gb_ec2_spot_price_history_params *p, const char *next_token,
	struct gb_buf *out, gb_error_t *err)
{
	static const char *const what = "DescribeSpotPriceHistory";
	struct gb_ec2_spot_price_history_params none = { 0 };
	char when[32];
	gb_err_t rc;

	if (!p)
		p = &none;
	if ((rc = check_spot_history(p, err)))
		return rc;
	form_start(out, what);
	for (size_t i = 0; i < p->n_instance_types; i++)
		form_putf(out, p->instance_types[i], "InstanceType.%zu", i + 1);
	for (size_t i = 0; i < p->n_product_descriptions; i++)
		form_putf(out, p->product_descriptions[i], "ProductDescription.%zu", i + 1);
	if (p->availability_zone)
		gb_sigv4_form_put(out, "AvailabilityZone", p->availability_zone);
	/* EC2 Query timestamps: ISO 8601 UTC, as botocore serializes them */
	if (p->start_time)
		gb_sigv4_form_put(out, "StartTime", gb_time_iso(p->start_time, when, sizeof(when)));
	if (p->end_time)
		gb_sigv4_form_put(out, "EndTime", gb_time_iso(p->end_time, when, sizeof(when)));
	rc = form_filters(out, what, p->filters, p->n_filters, err);
	if (rc)
		return rc;
	if (p->max_results)
		form_int(out, "MaxResults", p->max_results);
	if (next_token)
		gb_sigv4_form_put(out, "NextToken", next_token);
	return form_done(out, err);
}

gb_err_t gb_ec2_client_token_new(char *buf, size_t n, gb_error_t *err)
{
	if (n < 36)
		return gb_errorf(err, GB_E_INVALID, "client token buffer too small");
	memcpy(buf, "gb-", 3);
	return gb_random_hex(buf + 3, 32, err);
}

/* ---- the client ------------------------------------------------------------ */

static void do_sleep(gb_ec2_t *c, double s)
{
	if (c->sleep)
		c->sleep(s, c->seam_ctx);
	else
		gb_time_sleep(s);
}

static double mono(gb_ec2_t *c)
{
	return c->mono ? c->mono(c->seam_ctx) : gb_time_mono();
}

static double wall(gb_ec2_t *c)
{
	return c->wall ? c->wall(c->seam_ctx) : gb_time_now();
}

static double uniform(gb_ec2_t *c)
{
	return c->uniform ? c->uniform(c->seam_ctx) : gb_retry_uniform();
}

gb_err_t gb_ec2_create(const struct gb_ec2_opts *o, gb_ec2_t **out,
		       gb_error_t *err)
{
	struct gb_buf ep = GB_BUF_INIT;
	gb_ec2_t *c;
	gb_err_t rc;

	*out = NULL;
	if (!o || !o->region || !*o->region || strpbrk(o->region, "/ \t\r\n"))
		return gb_errorf(err, GB_E_INVALID, "EC2 client: invalid region");
	if (!o->creds)
		return gb_errorf(err, GB_E_INVALID, "EC2 client: no credentials provider");
	if (o->max_pages < 0)
		return gb_errorf(err, GB_E_INVALID, "EC2 client: negative page cap");
	if (o->endpoint && *o->endpoint) {
		gb_buf_puts(&ep, o->endpoint);
	} else {
		/* the region's partition: amazonaws.com, amazonaws.com.cn, ... */
		char def[256];

		if ((rc = gb_partition_endpoint(GB_EC2_SERVICE, o->region, def, sizeof(def),
						 err))) {
			gb_error_prefix(err, "EC2 client");
			return rc;
		}
		gb_buf_puts(&ep, def);
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		gb_buf_free(&ep);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	c->endpoint = gb_buf_steal(&ep);
	c->region = strdup(o->region);
	if (!c->endpoint || !c->region) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto fail;
	}
	rc = gb_http_create(c->endpoint, &o->http, &c->http, err);
	if (rc) {
		gb_error_prefix(err, "EC2 client for %s", c->region);
		goto fail;
	}
	c->creds = o->creds;
	c->retry = o->retry;
	gb_retry_policy_fill(&c->retry);
	c->max_pages = o->max_pages ? o->max_pages : GB_EC2_DEFAULT_MAX_PAGES;
	c->sleep = o->sleep;
	c->mono = o->mono;
	c->wall = o->wall;
	c->uniform = o->uniform;
	c->seam_ctx = o->seam_ctx;
	*out = c;
	return GB_E_OK;
fail:
	gb_ec2_destroy(c);
	return rc;
}

void gb_ec2_destroy(gb_ec2_t *c)
{
	if (!c)
		return;
	gb_http_destroy(c->http);
	free(c->region);
	free(c->endpoint);
	free(c);
}

const char *gb_ec2_region(const gb_ec2_t *c)
{
	return c->region;
}

const char *gb_ec2_endpoint(const gb_ec2_t *c)
{
	return c->endpoint;
}

const char *gb_ec2_proxy(const gb_ec2_t *c)
{
	return gb_http_proxy(c->http);
}

/* ---- one signed request ------------------------------------------------------ */

/* Sign [body] with the current credentials and POST it. */
static gb_err_t send_once(gb_ec2_t *c, const struct gb_buf *body,
			  struct gb_http_response *resp, gb_error_t *err)
{
	struct gb_creds_snapshot cs = { 0 };
	struct gb_sigv4_result sig = { 0 };
	struct gb_sigv4_header sh[2] = {
		{ "Host", gb_http_host(c->http) },
		{ "Content-Type", FORM_CONTENT_TYPE },
	};
	struct gb_sigv4_request sr = { .method = "POST",
				       .path = gb_http_base_path(c->http),
				       .headers = sh, .n_headers = 2,
				       .payload = body->data,
				       .payload_len = body->len };
	struct gb_sigv4_creds sc;
	struct gb_http_header hh[4];
	struct gb_http_request req = { .method = "POST", .headers = hh,
				       .body = body->data ? body->data : "",
				       .body_len = body->len };
	gb_err_t rc;

	memset(resp, 0, sizeof(*resp));
	rc = gb_creds_get(c->creds, &cs, err);
	if (rc)
		goto out;
	sc.access_key_id = cs.access_key_id;
	sc.secret_access_key = cs.secret_access_key;
	sc.session_token = cs.session_token;
	rc = gb_sigv4_sign(&sr, &sc, c->region, GB_EC2_SERVICE, (time_t)wall(c),
			   &sig, err);
	if (rc)
		goto out;
	hh[req.n_headers++] = (struct gb_http_header){ "Content-Type",
						       FORM_CONTENT_TYPE };
	hh[req.n_headers++] = (struct gb_http_header){ "X-Amz-Date", sig.amz_date };
	if (sig.need_token_header)
		hh[req.n_headers++] = (struct gb_http_header){ "X-Amz-Security-Token",
							       cs.session_token };
	hh[req.n_headers++] = (struct gb_http_header){ "Authorization",
						       sig.authorization };
	rc = gb_http_do(c->http, &req, resp, err);
out:
	gb_sigv4_result_free(&sig);
	gb_creds_snapshot_clear(&cs);
	return rc;
}

/* Does a 2xx body start like an error envelope?  (Cheap: no full parse.) */
static bool looks_like_error(const struct gb_http_response *r)
{
	size_t n = r->body_len < 512 ? r->body_len : 512;

	return memmem(r->body, n, "<Response>", 10) ||
	       memmem(r->body, n, "<Response ", 10) ||
	       memmem(r->body, n, "<ErrorResponse", 14);
}

/*
 * Look at a response: GB_E_OK for a success, else the class's code with
 * [ae] filled.  The error envelope is read whatever the status.
 */
static gb_err_t judge(const struct gb_http_response *r, struct gb_ec2_error *ae)
{
	bool is_2xx = r->status >= 200 && r->status <= 299;
	gb_err_t prc = GB_E_NOTFOUND;

	ae->http_status = r->status;
	ae->code[0] = ae->message[0] = ae->request_id[0] = '\0';
	if (!is_2xx || looks_like_error(r))
		prc = gb_ec2_xml_parse_error(r->body, r->body_len, ae, NULL);
	if (prc == GB_E_OK) {
		ae->cls = gb_ec2_classify(ae->code, r->status, &ae->known_code);
		return gb_ec2_class_err(ae->cls);
	}
	if (is_2xx) {
		ae->cls = GB_EC2_CLASS_NONE;
		return GB_E_OK;
	}
	/* an error status without a readable envelope: judge by the status */
	snprintf(ae->message, sizeof(ae->message),
		 "HTTP %ld without an EC2 error envelope (%zu bytes)", r->status,
		 r->body_len);
	ae->cls = gb_ec2_classify(NULL, r->status, &ae->known_code);
	return gb_ec2_class_err(ae->cls);
}

/* Codes after which fresh credentials may help (once). */
static bool credential_code(const char *code)
{
	return !strcmp(code, "AuthFailure") || !strcmp(code, "ExpiredToken") ||
	       !strcmp(code, "RequestExpired") ||
	       !strcmp(code, "InvalidClientTokenId") ||
	       !strcmp(code, "InvalidSecurity.RequestHasExpired");
}

static gb_err_t final_error(gb_ec2_t *c, const char *action, gb_err_t rc,
			    const struct gb_ec2_error *ae, gb_error_t *err)
{
	if (ae->http_status == 0)
		return gb_errorf(err, rc,
				 "%s %s: %s (no HTTP response, %s, %d attempt%s)",
				 action, c->region, ae->message,
				 gb_ec2_class_name(ae->cls), ae->attempts,
				 ae->attempts == 1 ? "" : "s");
	return gb_errorf(err, rc,
			 "%s %s: %s%s%s (HTTP %ld, RequestID %s, %s, %d attempt%s)",
			 action, c->region, ae->code, ae->code[0] ? ": " : "",
			 ae->message, ae->http_status,
			 ae->request_id[0] ? ae->request_id : "none",
			 gb_ec2_class_name(ae->cls), ae->attempts,
			 ae->attempts == 1 ? "" : "s");
}

/*
 * Send [body] for [action] until it succeeds, fails for good, or the
 * retry policy says stop.  On GB_E_OK [resp] holds the success response
 * (caller frees); on failure it is freed here.
 */
static gb_err_t ec2_call(gb_ec2_t *c, const char *action,
			 const struct gb_buf *body, struct gb_http_response *resp,
			 struct gb_ec2_error *ae, gb_error_t *err)
{
	struct gb_ec2_error local;
	double t0 = mono(c);
	bool refreshed = false;
	gb_error_t e;
	gb_err_t rc;
	char q[160];

	if (!ae)
		ae = &local;
	memset(ae, 0, sizeof(*ae));
	for (;;) {
		double delay = 0;
		bool again;

		ae->attempts++;
		rc = send_once(c, body, resp, &e);
		if (rc == GB_E_OK) {
			rc = judge(resp, ae);
			if (rc == GB_E_OK)
				return GB_E_OK;
		} else if (rc == GB_E_HTTP || rc == GB_E_TIMEOUT) {
			ae->http_status = 0;
			ae->code[0] = ae->request_id[0] = '\0';
			gb_strlcpy(ae->message, e.text, sizeof(ae->message));
			ae->cls = gb_http_fail_retryable(resp->fail)
					  ? GB_EC2_CLASS_TRANSIENT
					  : GB_EC2_CLASS_CONFIG;
		} else {
			/* no credentials, bad input, no memory: not the cloud's doing */
			ae->cls = rc == GB_E_AUTH ? GB_EC2_CLASS_AUTH : GB_EC2_CLASS_CONFIG;
			gb_strlcpy(ae->message, e.text, sizeof(ae->message));
			gb_http_response_free(resp);
			if (err)
				*err = e;
			return rc;
		}
		gb_http_response_free(resp);
		again = false;
		if ((ae->cls == GB_EC2_CLASS_AUTH || ae->cls == GB_EC2_CLASS_REGION) &&
		    credential_code(ae->code) && !refreshed) {
			refreshed = again = true;
			gb_creds_invalidate(c->creds);
		} else if (gb_ec2_class_retryable(ae->cls)) {
			again = true;
			delay = gb_retry_backoff(&c->retry, ae->attempts - 1, uniform(c));
		}
		if (!again || !gb_retry_allowed(&c->retry, ae->attempts,
						mono(c) - t0, delay))
			return final_error(c, action, rc, ae, err);
		gb_log_warn("ec2_retry action=%s region=%s attempt=%d code=%s status=%ld class=%s delay_ms=%.0f",
			    action, c->region, ae->attempts,
			    gb_log_q(q, sizeof(q), ae->code[0] ? ae->code : "-"),
			    ae->http_status, gb_ec2_class_name(ae->cls), delay * 1000);
		do_sleep(c, delay);
	}
}

/* ---- actions ------------------------------------------------------------------ */

gb_err_t gb_ec2_run_instances(gb_ec2_t *c, const struct gb_ec2_run_params *p,
			      struct gb_ec2_instance_list **out,
			      struct gb_ec2_error *ae, gb_error_t *err)
{
	struct gb_http_response resp = { 0 };
	struct gb_buf body = GB_BUF_INIT;
	char token[40];
	const char *tok = p ? p->client_token : NULL;
	gb_err_t rc;

	*out = NULL;
	if (ae)
		memset(ae, 0, sizeof(*ae));
	if (!p)
		return gb_errorf(err, GB_E_INVALID, "RunInstances: no parameters");
	if (p->dry_run)
		return gb_errorf(err, GB_E_INVALID,
				 "RunInstances: a dry run goes through gb_ec2_run_instances_dry_run");
	if (!tok) {
		rc = gb_ec2_client_token_new(token, sizeof(token), err);
		if (rc)
			return rc;
		tok = token;
	}
	rc = gb_ec2_form_run_instances(p, tok, &body, err);
	if (rc)
		goto out;
	rc = ec2_call(c, "RunInstances", &body, &resp, ae, err);
	if (rc)
		goto out;
	rc = gb_ec2_xml_parse_instances(resp.body, resp.body_len, out, err);
	if (rc) {
		gb_error_prefix(err, "RunInstances %s", c->region);
		goto out;
	}
	(*out)->client_token = strdup(tok);
	if (!(*out)->client_token) {
		gb_ec2_instance_list_free(*out);
		*out = NULL;
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
out:
	gb_http_response_free(&resp);
	gb_buf_free(&body);
	return rc;
}

/* A 2xx answer to a dry run: the endpoint launched.  RET GB_E_CLOUD. */
static gb_err_t dry_run_ignored(gb_ec2_t *c, const struct gb_http_response *r,
				gb_error_t *err)
{
	struct gb_ec2_instance_list *l = NULL;
	struct gb_buf ids = GB_BUF_INIT;
	gb_err_t rc;

	if (gb_ec2_xml_parse_instances(r->body, r->body_len, &l, NULL) == GB_E_OK)
		for (size_t i = 0; i < l->n; i++)
			gb_buf_printf(&ids, " %s", l->v[i].instance_id ? l->v[i].instance_id : "?");
	rc = gb_errorf(err, GB_E_CLOUD,
		       "RunInstances %s: the endpoint ignored DryRun=true and launched %zu instance%s:%s",
		       c->region, l ? l->n : 0, l && l->n == 1 ? "" : "s",
		       ids.len ? gb_buf_str(&ids) : " (unreadable answer)");
	gb_buf_free(&ids);
	gb_ec2_instance_list_free(l);
	return rc;
}

gb_err_t gb_ec2_run_instances_dry_run(gb_ec2_t *c,
				      const struct gb_ec2_run_params *p,
				      struct gb_ec2_error *ae, gb_error_t *err)
{
	struct gb_http_response resp = { 0 };
	struct gb_buf body = GB_BUF_INIT;
	struct gb_ec2_run_params dp;
	struct gb_ec2_error local;
	char token[40];
	gb_err_t rc;

	if (!ae)
		ae = &local;
	memset(ae, 0, sizeof(*ae));
	if (!p)
		return gb_errorf(err, GB_E_INVALID, "RunInstances: no parameters");
	dp = *p;
	dp.dry_run = true;
	if (!dp.client_token) {
		rc = gb_ec2_client_token_new(token, sizeof(token), err);
		if (rc)
			return rc;
		dp.client_token = token;
	}
	rc = gb_ec2_form_run_instances(&dp, dp.client_token, &body, err);
	if (rc == GB_E_OK)
		rc = ec2_call(c, "RunInstances", &body, &resp, ae, err);
	if (rc == GB_E_OK) {
		rc = dry_run_ignored(c, &resp, err);
	} else if (strcmp(ae->code, "DryRunOperation") == 0) {
		/* EC2: "If you have the required permissions, the error response is DryRunOperation" */
		ae->cls = GB_EC2_CLASS_NONE;
		gb_error_clear(err);
		rc = GB_E_OK;
	}
	gb_http_response_free(&resp);
	gb_buf_free(&body);
	return rc;
}

/*
 * OUT *out: [v] (an array of [n] items of [size] bytes) grown by the
 * [n_more] items of [more], copied; [v] itself when there are none.
 * RET false on overflow or OOM, [v] untouched.
 */
static bool vec_append(void *v, size_t n, const void *more, size_t n_more,
		       size_t size, void **out)
{
	char *nv;

	*out = v;
	if (!n_more)
		return true;
	if (n_more > SIZE_MAX / size - n)
		return false;
	nv = realloc(v, (n + n_more) * size);
	if (!nv)
		return false;
	memcpy(nv + n * size, more, n_more * size);
	*out = nv;
	return true;
}

/*
 * Move the items and the request id of [page] to the end of [all], two
 * lists of one gb_ec2_*_list type; the page keeps neither, so it is freed
 * as usual afterwards.  On OOM [rc] = GB_E_NOMEM and both are untouched.
 */
#define LIST_TAKE_PAGE(rc, all, page, err) \
	do { \
		void *nv_; \
		if (!vec_append((all)->v, (all)->n, (page)->v, (page)->n, \
				sizeof(*(all)->v), &nv_)) { \
			(rc) = gb_errorf((err), GB_E_NOMEM, "out of memory"); \
			break; \
		} \
		(all)->v = nv_; \
		(all)->n += (page)->n; \
		(page)->n = 0; \
		free((all)->request_id); \
		(all)->request_id = (page)->request_id; \
		(page)->request_id = NULL; \
	} while (0)

/* Pagination guard: a page cap and no token seen twice in a row. */
static gb_err_t check_page(gb_ec2_t *c, const char *action, int pages,
			   const char *prev, const char *next, gb_error_t *err)
{
	if (!next)
		return GB_E_OK;
	if (prev && strcmp(prev, next) == 0)
		return gb_errorf(err, GB_E_PARSE, "%s %s: NextToken repeated", action,
				 c->region);
	if (pages >= c->max_pages)
		return gb_errorf(err, GB_E_CLOUD, "%s %s: more than %d pages", action,
				 c->region, c->max_pages);
	return GB_E_OK;
}

/*
 * A paginated Describe*: [form] writes the body of one page ([token] NULL
 * for the first); [take] reads an answer, moves its items to the caller's
 * list and hands back the page's nextToken (NEW, or NULL at the end).
 * Both get [ctx], which holds the action's typed parameters and list.
 */
struct pager {
	const char *action;
	gb_err_t (*form)(void *ctx, const char *token, struct gb_buf *body,
			 gb_error_t *err);
	gb_err_t (*take)(void *ctx, const struct gb_http_response *resp, char **next,
			 gb_error_t *err);
	void *ctx;
};

/* Every page of [pg], each through ec2_call and check_page. */
static gb_err_t paginate(gb_ec2_t *c, const struct pager *pg, struct gb_ec2_error *ae,
			 gb_error_t *err)
{
	char *token = NULL;
	int pages = 0;
	gb_err_t rc;

	do {
		struct gb_http_response resp = { 0 };
		struct gb_buf body = GB_BUF_INIT;
		char *next = NULL;

		rc = pg->form(pg->ctx, token, &body, err);
		if (!rc)
			rc = ec2_call(c, pg->action, &body, &resp, ae, err);
		if (!rc)
			rc = pg->take(pg->ctx, &resp, &next, err);
		gb_http_response_free(&resp);
		gb_buf_free(&body);
		if (rc)
			break;
		pages++;
		rc = check_page(c, pg->action, pages, token, next, err);
		free(token);
		token = next;
	} while (!rc && token);
	free(token);
	return rc;
}

/*
 * LIST_TAKE_PAGE, then *[next] = the page's next_token (moved out of it).
 * On OOM [rc] = GB_E_NOMEM and *[next] is untouched.
 */
#define LIST_TAKE_NEXT(rc, all, page, next, err) \
	do { \
		LIST_TAKE_PAGE(rc, all, page, err); \
		if (!(rc)) { \
			*(next) = (page)->next_token; \
			(page)->next_token = NULL; \
		} \
	} while (0)

/* ---- DescribeInstances ---- */

struct instances_pages {
	gb_ec2_t *c;
	const struct gb_ec2_describe_params *p;
	struct gb_ec2_instance_list *all;
};

static gb_err_t instances_form(void *ctx, const char *token, struct gb_buf *body,
			       gb_error_t *err)
{
	struct instances_pages *ip = ctx;

	return gb_ec2_form_describe_instances(ip->p, token, body, err);
}

static gb_err_t instances_take(void *ctx, const struct gb_http_response *r, char **next,
			       gb_error_t *err)
{
	struct instances_pages *ip = ctx;
	struct gb_ec2_instance_list *page = NULL;
	gb_err_t rc = gb_ec2_xml_parse_instances(r->body, r->body_len, &page, err);

	if (rc) {
		gb_error_prefix(err, "DescribeInstances %s", ip->c->region);
		return rc;
	}
	LIST_TAKE_NEXT(rc, ip->all, page, next, err);
	gb_ec2_instance_list_free(page);
	return rc;
}

gb_err_t gb_ec2_describe_instances(gb_ec2_t *c,
				   const struct gb_ec2_describe_params *p,
				   struct gb_ec2_instance_list **out,
				   struct gb_ec2_error *ae, gb_error_t *err)
{
	struct instances_pages ip = { c, p, calloc(1, sizeof(*ip.all)) };
	struct pager pg = { "DescribeInstances", instances_form, instances_take, &ip };
	gb_err_t rc;

	*out = NULL;
	if (!ip.all)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	rc = paginate(c, &pg, ae, err);
	if (rc)
		gb_ec2_instance_list_free(ip.all);
	else
		*out = ip.all;
	return rc;
}

gb_err_t gb_ec2_terminate_instances(gb_ec2_t *c, const char *const *ids,
				    size_t n_ids,
				    struct gb_ec2_state_change_list **out,
				    struct gb_ec2_error *ae, gb_error_t *err)
{
	struct gb_ec2_state_change_list *all = calloc(1, sizeof(*all));
	gb_err_t rc = GB_E_OK;

	*out = NULL;
	if (!all)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (size_t off = 0; off < n_ids && !rc; off += GB_EC2_TERMINATE_BATCH) {
		size_t n = n_ids - off < GB_EC2_TERMINATE_BATCH
				   ? n_ids - off : GB_EC2_TERMINATE_BATCH;
		struct gb_http_response resp = { 0 };
		struct gb_buf body = GB_BUF_INIT;
		struct gb_ec2_state_change_list *page = NULL;

		rc = gb_ec2_form_terminate_instances(ids + off, n, &body, err);
		if (!rc)
			rc = ec2_call(c, "TerminateInstances", &body, &resp, ae, err);
		if (!rc)
			rc = gb_ec2_xml_parse_state_changes(resp.body, resp.body_len,
							    &page, err);
		if (!rc)
			LIST_TAKE_PAGE(rc, all, page, err);
		gb_ec2_state_change_list_free(page);
		gb_http_response_free(&resp);
		gb_buf_free(&body);
	}
	/* what earlier batches terminated is reported even after a failure */
	if (rc && all->n == 0)
		gb_ec2_state_change_list_free(all);
	else
		*out = all;
	return rc;
}

/* ---- DescribeInstanceTypeOfferings ---- */

struct offerings_pages {
	const struct gb_ec2_offerings_params *p;
	struct gb_ec2_offering_list *all;
};

static gb_err_t offerings_form(void *ctx, const char *token, struct gb_buf *body,
			       gb_error_t *err)
{
	struct offerings_pages *op = ctx;

	return gb_ec2_form_describe_instance_type_offerings(op->p, token, body, err);
}

static gb_err_t offerings_take(void *ctx, const struct gb_http_response *r, char **next,
			       gb_error_t *err)
{
	struct offerings_pages *op = ctx;
	struct gb_ec2_offering_list *page = NULL;
	gb_err_t rc = gb_ec2_xml_parse_offerings(r->body, r->body_len, &page, err);

	if (rc)
		return rc;
	LIST_TAKE_NEXT(rc, op->all, page, next, err);
	gb_ec2_offering_list_free(page);
	return rc;
}

gb_err_t gb_ec2_describe_instance_type_offerings(
	gb_ec2_t *c, const struct gb_ec2_offerings_params *p,
	struct gb_ec2_offering_list **out, struct gb_ec2_error *ae,
	gb_error_t *err)
{
	struct offerings_pages op = { p, calloc(1, sizeof(*op.all)) };
	struct pager pg = { "DescribeInstanceTypeOfferings", offerings_form, offerings_take,
			    &op };
	gb_err_t rc;

	*out = NULL;
	if (!op.all)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	rc = paginate(c, &pg, ae, err);
	if (rc)
		gb_ec2_offering_list_free(op.all);
	else
		*out = op.all;
	return rc;
}

gb_err_t gb_ec2_create_tags(gb_ec2_t *c, const char *const *resource_ids,
			    size_t n_ids, const struct gb_ec2_kv *tags,
			    size_t n_tags, struct gb_ec2_error *ae,
			    gb_error_t *err)
{
	struct gb_http_response resp = { 0 };
	struct gb_buf body = GB_BUF_INIT;
	gb_err_t rc;

	if (ae)
		memset(ae, 0, sizeof(*ae));
	rc = gb_ec2_form_create_tags(resource_ids, n_ids, tags, n_tags, &body, err);
	if (!rc)
		rc = ec2_call(c, "CreateTags", &body, &resp, ae, err);
	if (!rc)
		rc = gb_ec2_xml_parse_ack(resp.body, resp.body_len,
					  "CreateTagsResponse", NULL, err);
	gb_http_response_free(&resp);
	gb_buf_free(&body);
	return rc;
}

gb_err_t gb_ec2_describe_availability_zones(gb_ec2_t *c,
					    const struct gb_ec2_filter *filters,
					    size_t n_filters,
					    struct gb_ec2_az_list **out,
					    struct gb_ec2_error *ae,
					    gb_error_t *err)
{
	struct gb_http_response resp = { 0 };
	struct gb_buf body = GB_BUF_INIT;
	gb_err_t rc;

	*out = NULL;
	if (ae)
		memset(ae, 0, sizeof(*ae));
	rc = gb_ec2_form_describe_availability_zones(filters, n_filters, &body, err);
	if (!rc)
		rc = ec2_call(c, "DescribeAvailabilityZones", &body, &resp, ae, err);
	if (!rc)
		rc = gb_ec2_xml_parse_azs(resp.body, resp.body_len, out, err);
	gb_http_response_free(&resp);
	gb_buf_free(&body);
	return rc;
}

/* ---- DescribeInstanceTypes ---- */

struct types_pages {
	gb_ec2_t *c;
	const char *const *types;
	size_t n_types;
	const struct gb_ec2_filter *filters;
	size_t n_filters;
	struct gb_ec2_instance_type_list *all;
};

static gb_err_t types_form(void *ctx, const char *token, struct gb_buf *body,
			   gb_error_t *err)
{
	struct types_pages *tp = ctx;

	return gb_ec2_form_describe_instance_types(tp->types, tp->n_types, tp->filters,
						   tp->n_filters, token, body, err);
}

static gb_err_t types_take(void *ctx, const struct gb_http_response *r, char **next,
			   gb_error_t *err)
{
	struct types_pages *tp = ctx;
	struct gb_ec2_instance_type_list *page = NULL;
	gb_err_t rc = gb_ec2_xml_parse_instance_types(r->body, r->body_len, &page, err);

	if (rc) {
		gb_error_prefix(err, "DescribeInstanceTypes %s", tp->c->region);
		return rc;
	}
	LIST_TAKE_NEXT(rc, tp->all, page, next, err);
	gb_ec2_instance_type_list_free(page);
	return rc;
}

gb_err_t gb_ec2_describe_instance_types(gb_ec2_t *c, const char *const *types,
					size_t n_types,
					const struct gb_ec2_filter *filters,
					size_t n_filters,
					struct gb_ec2_instance_type_list **out,
					struct gb_ec2_error *ae, gb_error_t *err)
{
	struct types_pages tp = { c, types, n_types, filters, n_filters,
				  calloc(1, sizeof(*tp.all)) };
	struct pager pg = { "DescribeInstanceTypes", types_form, types_take, &tp };
	gb_err_t rc;

	*out = NULL;
	if (ae)
		memset(ae, 0, sizeof(*ae));
	if (!tp.all)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	rc = paginate(c, &pg, ae, err);
	if (rc)
		gb_ec2_instance_type_list_free(tp.all);
	else
		*out = tp.all;
	return rc;
}

/* One call whose success answer is an acknowledgement <[root]>. */
static gb_err_t ack_call(gb_ec2_t *c, const char *action, const char *root,
			 const struct gb_buf *body, struct gb_ec2_error *ae,
			 gb_error_t *err)
{
	struct gb_http_response resp = { 0 };
	gb_err_t rc;

	rc = ec2_call(c, action, body, &resp, ae, err);
	if (!rc) {
		rc = gb_ec2_xml_parse_ack(resp.body, resp.body_len, root, NULL, err);
		if (rc)
			gb_error_prefix(err, "%s %s", action, c->region);
	}
	gb_http_response_free(&resp);
	return rc;
}

gb_err_t gb_ec2_create_placement_group(gb_ec2_t *c, const char *name,
				       const char *strategy,
				       const struct gb_ec2_tag_spec *spec,
				       struct gb_ec2_error *ae, gb_error_t *err)
{
	struct gb_buf body = GB_BUF_INIT;
	gb_err_t rc;

	if (ae)
		memset(ae, 0, sizeof(*ae));
	rc = gb_ec2_form_create_placement_group(name, strategy, spec, &body, err);
	if (!rc)
		rc = ack_call(c, "CreatePlacementGroup", "CreatePlacementGroupResponse", &body,
			      ae, err);
	gb_buf_free(&body);
	return rc;
}

gb_err_t gb_ec2_delete_placement_group(gb_ec2_t *c, const char *name,
				       struct gb_ec2_error *ae, gb_error_t *err)
{
	struct gb_buf body = GB_BUF_INIT;
	gb_err_t rc;

	if (ae)
		memset(ae, 0, sizeof(*ae));
	rc = gb_ec2_form_delete_placement_group(name, &body, err);
	if (!rc)
		rc = ack_call(c, "DeletePlacementGroup", "DeletePlacementGroupResponse", &body,
			      ae, err);
	gb_buf_free(&body);
	return rc;
}

gb_err_t gb_ec2_describe_placement_groups(gb_ec2_t *c, const char *const *names,
					  size_t n_names,
					  const struct gb_ec2_filter *filters,
					  size_t n_filters,
					  struct gb_ec2_placement_group_list **out,
					  struct gb_ec2_error *ae, gb_error_t *err)
{
	static const char *const action = "DescribePlacementGroups";
	struct gb_http_response resp = { 0 };
	struct gb_buf body = GB_BUF_INIT;
	gb_err_t rc;

	*out = NULL;
	if (ae)
		memset(ae, 0, sizeof(*ae));
	rc = gb_ec2_form_describe_placement_groups(names, n_names, filters, n_filters, &body,
						   err);
	if (!rc)
		rc = ec2_call(c, action, &body, &resp, ae, err);
	if (!rc) {
		rc = gb_ec2_xml_parse_placement_groups(resp.body, resp.body_len, out, err);
		if (rc)
			gb_error_prefix(err, "%s %s", action, c->region);
	}
	gb_http_response_free(&resp);
	gb_buf_free(&body);
	return rc;
}

/* ---- DescribeSecurityGroups ---- */

struct sgs_pages {
	gb_ec2_t *c;
	const char *const *ids;
	size_t n_ids;
	struct gb_ec2_security_group_list *all;
};

static gb_err_t sgs_form(void *ctx, const char *token, struct gb_buf *body,
			 gb_error_t *err)
{
	struct sgs_pages *sp = ctx;

	return gb_ec2_form_describe_security_groups(sp->ids, sp->n_ids, token, body, err);
}

static gb_err_t sgs_take(void *ctx, const struct gb_http_response *r, char **next,
			 gb_error_t *err)
{
	struct sgs_pages *sp = ctx;
	struct gb_ec2_security_group_list *page = NULL;
	gb_err_t rc = gb_ec2_xml_parse_security_groups(r->body, r->body_len, &page, err);

	if (rc) {
		gb_error_prefix(err, "DescribeSecurityGroups %s", sp->c->region);
		return rc;
	}
	LIST_TAKE_NEXT(rc, sp->all, page, next, err);
	gb_ec2_security_group_list_free(page);
	return rc;
}

gb_err_t gb_ec2_describe_security_groups(gb_ec2_t *c, const char *const *ids,
					 size_t n_ids,
					 struct gb_ec2_security_group_list **out,
					 struct gb_ec2_error *ae, gb_error_t *err)
{
	struct sgs_pages sp = { c, ids, n_ids, calloc(1, sizeof(*sp.all)) };
	struct pager pg = { "DescribeSecurityGroups", sgs_form, sgs_take, &sp };
	gb_err_t rc;

	*out = NULL;
	if (ae)
		memset(ae, 0, sizeof(*ae));
	if (!sp.all)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	rc = paginate(c, &pg, ae, err);
	if (rc)
		gb_ec2_security_group_list_free(sp.all);
	else
		*out = sp.all;
	return rc;
}

/* ---- DescribeCapacityReservations ---- */

struct reservations_pages {
	gb_ec2_t *c;
	const struct gb_ec2_capacity_reservations_params *p;
	struct gb_ec2_capacity_reservation_list *all;
};

static gb_err_t reservations_form(void *ctx, const char *token, struct gb_buf *body,
				  gb_error_t *err)
{
	struct reservations_pages *rp = ctx;

	return gb_ec2_form_describe_capacity_reservations(rp->p, token, body, err);
}

static gb_err_t reservations_take(void *ctx, const struct gb_http_response *r,
				  char **next, gb_error_t *err)
{
	struct reservations_pages *rp = ctx;
	struct gb_ec2_capacity_reservation_list *page = NULL;
	gb_err_t rc = gb_ec2_xml_parse_capacity_reservations(r->body, r->body_len, &page,
							      err);

	if (rc) {
		gb_error_prefix(err, "DescribeCapacityReservations %s", rp->c->region);
		return rc;
	}
	LIST_TAKE_NEXT(rc, rp->all, page, next, err);
	gb_ec2_capacity_reservation_list_free(page);
	return rc;
}

gb_err_t gb_ec2_describe_capacity_reservations(
	gb_ec2_t *c, const struct gb_ec2_capacity_reservations_params *p,
	struct gb_ec2_capacity_reservation_list **out,
	struct gb_ec2_error *ae, gb_error_t *err)
{
	struct reservations_pages rp = { c, p, calloc(1, sizeof(*rp.all)) };
	struct pager pg = { "DescribeCapacityReservations", reservations_form,
			    reservations_take, &rp };
	gb_err_t rc;

	*out = NULL;
	if (ae)
		memset(ae, 0, sizeof(*ae));
	if (!rp.all)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	rc = paginate(c, &pg, ae, err);
	if (rc)
		gb_ec2_capacity_reservation_list_free(rp.all);
	else
		*out = rp.all;
	return rc;
}

/* ---- DescribeCapacityBlockOfferings ---- */

struct blocks_pages {
	gb_ec2_t *c;
	const struct gb_ec2_capacity_block_offerings_params *p;
	struct gb_ec2_capacity_block_offering_list *all;
};

static gb_err_t blocks_form(void *ctx, const char *token, struct gb_buf *body,
			    gb_error_t *err)
{
	struct blocks_pages *bp = ctx;

	return gb_ec2_form_describe_capacity_block_offerings(bp->p, token, body, err);
}

static gb_err_t blocks_take(void *ctx, const struct gb_http_response *r, char **next,
			    gb_error_t *err)
{
	struct blocks_pages *bp = ctx;
	struct gb_ec2_capacity_block_offering_list *page = NULL;
	gb_err_t rc = gb_ec2_xml_parse_capacity_block_offerings(r->body, r->body_len, &page,
								 err);

	if (rc) {
		gb_error_prefix(err, "DescribeCapacityBlockOfferings %s", bp->c->region);
		return rc;
	}
	LIST_TAKE_NEXT(rc, bp->all, page, next, err);
	gb_ec2_capacity_block_offering_list_free(page);
	return rc;
}

gb_err_t gb_ec2_describe_capacity_block_offerings(
	gb_ec2_t *c, const struct gb_ec2_capacity_block_offerings_params *p,
	struct gb_ec2_capacity_block_offering_list **out,
	struct gb_ec2_error *ae, gb_error_t *err)
{
	struct blocks_pages bp = { c, p, calloc(1, sizeof(*bp.all)) };
	struct pager pg = { "DescribeCapacityBlockOfferings", blocks_form, blocks_take, &bp };
	gb_err_t rc;

	*out = NULL;
	if (ae)
		memset(ae, 0, sizeof(*ae));
	if (!bp.all)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	rc = paginate(c, &pg, ae, err);
	if (rc)
		gb_ec2_capacity_block_offering_list_free(bp.all);
	else
		*out = bp.all;
	return rc;
}

/* ---- DescribeSpotPriceHistory ---- */

struct spot_pages {
	gb_ec2_t *c;
	const struct gb_ec2_spot_price_history_params *p;
	struct gb_ec2_spot_price_list *all;
};

static gb_err_t spot_form(void *ctx, const char *token, struct gb_buf *body,
			  gb_error_t *err)
{
	struct spot_pages *sp = ctx;

	return gb_ec2_form_describe_spot_price_history(sp->p, token, body, err);
}

static gb_err_t spot_take(void *ctx, const struct gb_http_response *r, char **next,
			  gb_error_t *err)
{
	struct spot_pages *sp = ctx;
	struct gb_ec2_spot_price_list *page = NULL;
	gb_err_t rc = gb_ec2_xml_parse_spot_price_history(r->body, r->body_len, &page, err);

	if (rc) {
		gb_error_prefix(err, "DescribeSpotPriceHistory %s", sp->c->region);
		return rc;
	}
	LIST_TAKE_NEXT(rc, sp->all, page, next, err);
	gb_ec2_spot_price_list_free(page);
	return rc;
}

gb_err_t gb_ec2_describe_spot_price_history(
	gb_ec2_t *c, const struct gb_ec2_spot_price_history_params *p,
	struct gb_ec2_spot_price_list **out, struct gb_ec2_error *ae,
	gb_error_t *err)
{
	struct spot_pages sp = { c, p, calloc(1, sizeof(*sp.all)) };
	struct pager pg = { "DescribeSpotPriceHistory", spot_form, spot_take, &sp };
	gb_err_t rc;

	*out = NULL;
	if (ae)
		memset(ae, 0, sizeof(*ae));
	if (!sp.all)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	rc = paginate(c, &pg, ae, err);
	if (rc)
		gb_ec2_spot_price_list_free(sp.all);
	else
		*out = sp.all;
	return rc;
}
