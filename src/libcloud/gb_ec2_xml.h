/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_ec2_xml.h - EC2 Query API response parsing (libxml2, hidden here)
 *
 * Used by gb_ec2.c, and exposed for the parser tests and the fuzz target.
 * Every function takes an untrusted body of [len] bytes (need not be
 * NUL-terminated) and either fills a NEW result or returns an error with a
 * one-line reason; no input makes them crash, loop or allocate without
 * bound:
 *  - bodies over GB_EC2_XML_MAX bytes, empty bodies and non-XML are
 *    GB_E_PARSE; so is any document with a DTD (no entity games), and no
 *    network access is ever made (XML_PARSE_NONET);
 *  - elements are matched by local name only, whatever the namespace
 *    (captures carry 2013-10-15 ... 2016-11-15 namespaces, errors none);
 *  - a well-formed document of the wrong kind (say an error envelope where
 *    instances were expected) is GB_E_PARSE naming the root element.
 */
#ifndef GB_LIBCLOUD_GB_EC2_XML_H
#define GB_LIBCLOUD_GB_EC2_XML_H

#include <stddef.h>

#include "gb_ec2.h"
#include "gb_err.h"

#define GB_EC2_XML_MAX (16u << 20)	/* bytes */

/*
 * Read an AWS error envelope: <Response><Errors><Error><Code>,<Message>
 * </Error></Errors><RequestID>...</Response> (also <ErrorResponse> with
 * <Error> directly inside and RequestId spelled either way; extra elements
 * inside <Error> are ignored; the first <Error> counts).
 * OUT ae->code, message, request_id (truncated to fit); class untouched.
 * RET GB_E_OK when it is one; GB_E_NOTFOUND for well-formed XML that is
 * not an error envelope; GB_E_PARSE for anything else.
 */
gb_err_t gb_ec2_xml_parse_error(const char *body, size_t len,
				struct gb_ec2_error *ae, gb_error_t *err);

/* RunInstancesResponse (one reservation) or DescribeInstancesResponse. */
gb_err_t gb_ec2_xml_parse_instances(const char *body, size_t len,
				    struct gb_ec2_instance_list **out,
				    gb_error_t *err);

/* TerminateInstancesResponse (also Stop/StartInstancesResponse). */
gb_err_t gb_ec2_xml_parse_state_changes(const char *body, size_t len,
					struct gb_ec2_state_change_list **out,
					gb_error_t *err);

gb_err_t gb_ec2_xml_parse_offerings(const char *body, size_t len,
				    struct gb_ec2_offering_list **out,
				    gb_error_t *err);

gb_err_t gb_ec2_xml_parse_azs(const char *body, size_t len,
			      struct gb_ec2_az_list **out, gb_error_t *err);

/*
 * DescribeInstanceTypesResponse: instanceTypeSet/item.  A well-formed reply
 * with an item without <instanceType>, or a figure that is not a
 * non-negative number (a flag not true/false), is GB_E_CLOUD naming the
 * field and the type.  Absent figures are 0 (no GPU: gpu_name NULL).
 */
gb_err_t gb_ec2_xml_parse_instance_types(const char *body, size_t len,
					 struct gb_ec2_instance_type_list **out,
					 gb_error_t *err);

/* DescribePlacementGroupsResponse: placementGroupSet/item (GB_E_CLOUD without groupName). */
gb_err_t gb_ec2_xml_parse_placement_groups(const char *body, size_t len,
					   struct gb_ec2_placement_group_list **out,
					   gb_error_t *err);

/*
 * DescribeSecurityGroupsResponse: securityGroupInfo/item with its
 * ipPermissions and ipPermissionsEgress; GB_E_CLOUD for an item without
 * groupId or a port that is not a number in -1..65535.
 */
gb_err_t gb_ec2_xml_parse_security_groups(const char *body, size_t len,
					  struct gb_ec2_security_group_list **out,
					  gb_error_t *err);

/*
 * DescribeCapacityReservationsResponse: capacityReservationSet/item;
 * GB_E_CLOUD for an item without capacityReservationId, a count that is
 * not a non-negative number or a date that is not ISO 8601.
 */
gb_err_t gb_ec2_xml_parse_capacity_reservations(
	const char *body, size_t len, struct gb_ec2_capacity_reservation_list **out,
	gb_error_t *err);

/*
 * DescribeCapacityBlockOfferingsResponse: capacityBlockOfferingSet/item;
 * GB_E_CLOUD for an item without capacityBlockOfferingId, instanceType or
 * availabilityZone, or with a bad number or date.
 */
gb_err_t gb_ec2_xml_parse_capacity_block_offerings(
	const char *body, size_t len, struct gb_ec2_capacity_block_offering_list **out,
	gb_error_t *err);

/*
 * DescribeSpotPriceHistoryResponse: spotPriceHistorySet/item; GB_E_CLOUD
 * for an item without availabilityZone, instanceType, productDescription,
 * spotPrice or timestamp, a spotPrice that is not a positive decimal
 * number or a timestamp that is not ISO 8601.  An empty <nextToken/> is
 * the last page (next_token NULL).
 */
gb_err_t gb_ec2_xml_parse_spot_price_history(const char *body, size_t len,
					     struct gb_ec2_spot_price_list **out,
					     gb_error_t *err);

/*
 * A response that only acknowledges (CreateTagsResponse: <return>true):
 * [root] is the expected root element name.
 * OUT *request_id NEW or NULL (may be NULL to ignore).
 * RET GB_E_OK; GB_E_PARSE (also when <return> is present and not true).
 */
gb_err_t gb_ec2_xml_parse_ack(const char *body, size_t len, const char *root,
			      char **request_id, gb_error_t *err);

#endif /* GB_LIBCLOUD_GB_EC2_XML_H */
