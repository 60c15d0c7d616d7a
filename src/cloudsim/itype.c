/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * itype.c - the instance types the simulator knows: libconf's GPU catalog
 * (the product's one list of G-family types and their vCPUs) plus two P
 * types, so that scenarios can exercise the separate P quota bucket.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gb_conf.h"
#include "itype.h"

/* Not launched by gpuburst, known here only for the P vCPU bucket. */
static const struct gb_itype extras[] = {
	{ "p4d.24xlarge", 96, GB_ITYPE_BUCKET_P, "x86_64" },
	{ "p5.48xlarge", 192, GB_ITYPE_BUCKET_P, "x86_64" },
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct gb_itype *table;	/* built once, kept for the process */
static size_t ntable;

/* Every G family shares EC2's "G and VT" bucket. */
static void build(void)
{
	size_t n, k = 0;
	const struct gb_instance_type *c = gb_catalog_all(&n);

	table = calloc(n + sizeof(extras) / sizeof(extras[0]), sizeof(*table));
	if (!table)
		return;		/* every type is then unknown: a clear error */
	for (size_t i = 0; i < n; i++, k++) {
		table[k].name = c[i].name;
		table[k].vcpus = c[i].vcpus;
		table[k].bucket = GB_ITYPE_BUCKET_G;
		table[k].arch = c[i].arch;
	}
	for (size_t i = 0; i < sizeof(extras) / sizeof(extras[0]); i++)
		table[k++] = extras[i];
	ntable = k;
}

const struct gb_itype *gb_itype_find(const char *name)
{
	pthread_once(&once, build);
	for (size_t i = 0; name && i < ntable; i++) {
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	}
	return NULL;
}

const char *gb_itype_bucket_name(enum gb_itype_bucket b)
{
	return b == GB_ITYPE_BUCKET_P ? "P" : "G and VT";
}
