/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_partition.h - AWS partitions: which one a region is in, its DNS
 * suffix and ARN partition
 *
 * A partition is a separate AWS: its own regions, endpoints (DNS suffix),
 * IAM users and ARNs ("arn:PARTITION:..."); credentials of one partition
 * are not valid in another.  The rules are botocore's endpoints.json
 * (partitions[].regionRegex and dnsSuffix) for the partitions listed here:
 *
 *   aws         (us|eu|ap|sa|ca|me|af|il|mx)-WORD-N   amazonaws.com
 *   aws-cn      cn-WORD-N                              amazonaws.com.cn
 *   aws-us-gov  us-gov-WORD-N                          amazonaws.com
 *   aws-iso     us-iso-WORD-N                          c2s.ic.gov
 *   aws-iso-b   us-isob-WORD-N                         sc2s.sgov.gov
 *
 * (WORD: letters, digits, '_'; N: digits.)  Any other name is in no known
 * partition: it needs an explicit endpoint.
 */
#ifndef GB_LIBCOMMON_GB_PARTITION_H
#define GB_LIBCOMMON_GB_PARTITION_H

#include <stddef.h>

#include "gb_err.h"

struct gb_partition {
	const char *name;	/* the ARN partition: "aws", "aws-cn", ... */
	const char *dns_suffix;	/* "amazonaws.com", "amazonaws.com.cn", ... */
};

/* RET BORROWED (static) partition of [region], or NULL when none matches. */
const struct gb_partition *gb_partition_of(const char *region);

/* RET BORROWED (static) partition named [name] ("aws-cn"), or NULL. */
const struct gb_partition *gb_partition_named(const char *name);

/*
 * The default endpoint of [service] ("ec2") in [region]:
 * "https://SERVICE.REGION.DNS_SUFFIX", into [buf] of [n] bytes.
 * RET GB_E_OK; GB_E_INVALID when [region] is in no known partition (the
 * detail names it and asks for an endpoint) or [buf] is too small.
 */
gb_err_t gb_partition_endpoint(const char *service, const char *region,
			       char *buf, size_t n, gb_error_t *err);

#endif /* GB_LIBCOMMON_GB_PARTITION_H */
