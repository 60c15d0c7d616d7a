/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_partition.c - AWS partitions (botocore endpoints.json regionRegex)
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "gb_partition.h"
#include "gb_str.h"

/* One row per prefix; "us-" of aws is tried after the longer us-* ones. */
static const struct {
	const char *prefix;
	struct gb_partition p;
} rules[] = {
	{ "us-gov-", { "aws-us-gov", "amazonaws.com" } },
	{ "us-isob-", { "aws-iso-b", "sc2s.sgov.gov" } },
	{ "us-iso-", { "aws-iso", "c2s.ic.gov" } },
	{ "cn-", { "aws-cn", "amazonaws.com.cn" } },
	{ "us-", { "aws", "amazonaws.com" } },
	{ "eu-", { "aws", "amazonaws.com" } },
	{ "ap-", { "aws", "amazonaws.com" } },
	{ "sa-", { "aws", "amazonaws.com" } },
	{ "ca-", { "aws", "amazonaws.com" } },
	{ "me-", { "aws", "amazonaws.com" } },
	{ "af-", { "aws", "amazonaws.com" } },
	{ "il-", { "aws", "amazonaws.com" } },
	{ "mx-", { "aws", "amazonaws.com" } },
};

/* "WORD-N": \w+\-\d+ to the end. */
static bool word_dash_number(const char *s)
{
	const char *p = s;

	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	if (p == s || *p != '-')
		return false;
	s = ++p;
	while (isdigit((unsigned char)*p))
		p++;
	return p > s && *p == '\0';
}

const struct gb_partition *gb_partition_of(const char *region)
{
	for (size_t i = 0; region && i < GB_ARRAY_LEN(rules); i++) {
		if (!gb_str_has_prefix(region, rules[i].prefix))
			continue;
		/* the first prefix that matches decides: us-isof-x-1 is not aws */
		return word_dash_number(region + strlen(rules[i].prefix)) ? &rules[i].p : NULL;
	}
	return NULL;
}

const struct gb_partition *gb_partition_named(const char *name)
{
	for (size_t i = 0; name && i < GB_ARRAY_LEN(rules); i++)
		if (strcmp(rules[i].p.name, name) == 0)
			return &rules[i].p;
	return NULL;
}

gb_err_t gb_partition_endpoint(const char *service, const char *region,
			       char *buf, size_t n, gb_error_t *err)
{
	const struct gb_partition *p = gb_partition_of(region);
	int len;

	if (!p)
		return gb_errorf(err, GB_E_INVALID,
				 "region '%s' is in no AWS partition gpuburst knows (aws, aws-cn, aws-us-gov, aws-iso, aws-iso-b): give its endpoint",
				 region ? region : "(null)");
	len = snprintf(buf, n, "https://%s.%s.%s", service, region, p->dns_suffix);
	if (len < 0 || (size_t)len >= n)
		return gb_errorf(err, GB_E_INVALID, "endpoint of %s in %s: too long", service,
				 region);
	return GB_E_OK;
}
