/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * itype.c - vCPU counts of the GPU instance types the simulator knows
 *
 * Values from the EC2 instance-type pages (accelerated computing): sizes
 * xlarge..48xlarge have 4, 8, 16, 32, 48, 64, 96, 192 vCPUs; g4dn.metal 96,
 * g5g.metal 64.
 */
#include "config.h"

#include <string.h>

#include "itype.h"

#define G GB_ITYPE_BUCKET_G
#define P GB_ITYPE_BUCKET_P

static const struct gb_itype catalog[] = {
	{ "g4dn.xlarge", 4, G },    { "g4dn.2xlarge", 8, G },
	{ "g4dn.4xlarge", 16, G },  { "g4dn.8xlarge", 32, G },
	{ "g4dn.12xlarge", 48, G }, { "g4dn.16xlarge", 64, G },
	{ "g4dn.metal", 96, G },
	{ "g5.xlarge", 4, G },      { "g5.2xlarge", 8, G },
	{ "g5.4xlarge", 16, G },    { "g5.8xlarge", 32, G },
	{ "g5.12xlarge", 48, G },   { "g5.16xlarge", 64, G },
	{ "g5.24xlarge", 96, G },   { "g5.48xlarge", 192, G },
	{ "g5g.xlarge", 4, G },     { "g5g.2xlarge", 8, G },
	{ "g5g.4xlarge", 16, G },   { "g5g.8xlarge", 32, G },
	{ "g5g.16xlarge", 64, G },  { "g5g.metal", 64, G },
	{ "g6.xlarge", 4, G },      { "g6.2xlarge", 8, G },
	{ "g6.4xlarge", 16, G },    { "g6.8xlarge", 32, G },
	{ "g6.12xlarge", 48, G },   { "g6.16xlarge", 64, G },
	{ "g6.24xlarge", 96, G },   { "g6.48xlarge", 192, G },
	{ "g6e.xlarge", 4, G },     { "g6e.2xlarge", 8, G },
	{ "g6e.4xlarge", 16, G },   { "g6e.8xlarge", 32, G },
	{ "g6e.12xlarge", 48, G },  { "g6e.16xlarge", 64, G },
	{ "g6e.24xlarge", 96, G },  { "g6e.48xlarge", 192, G },
	{ "p4d.24xlarge", 96, P },  { "p5.48xlarge", 192, P },
};

const struct gb_itype *gb_itype_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(catalog) / sizeof(catalog[0]); i++) {
		if (strcmp(catalog[i].name, name) == 0)
			return &catalog[i];
	}
	return NULL;
}

const char *gb_itype_bucket_name(enum gb_itype_bucket b)
{
	return b == GB_ITYPE_BUCKET_P ? "P" : "G and VT";
}
