/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * itype.c - the instance types the simulator knows: libconf's GPU catalog
 * (the product's one list of types and their figures) plus the P types the
 * catalog may lack, so that scenarios can exercise the separate P bucket.
 */
#include "config.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gb_conf.h"
#include "gb_str.h"
#include "itype.h"

/* Known for the P vCPU bucket only while the catalog lacks them. */
static const struct gb_itype extras[] = {
	{ "p4d.24xlarge", 96, GB_ITYPE_BUCKET_P, "x86_64", NULL },
	{ "p5.48xlarge", 192, GB_ITYPE_BUCKET_P, "x86_64", NULL },
};

/* Slurm gres type -> the name EC2's GpuInfo gives the same GPU. */
static const struct {
	const char *gres, *aws;
} gpu_names[] = {
	{ "t4", "T4" }, { "t4g", "T4g" }, { "a10g", "A10G" }, { "l4", "L4" },
	{ "l40s", "L40S" }, { "v100", "V100" }, { "a100", "A100" },
	{ "h100", "H100" }, { "h200", "H200" }, { "b200", "B200" },
	{ "m60", "M60" }, { "k80", "K80" },
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct gb_itype *table;	/* built on first use, kept for the process */
static size_t ntable;
static const struct gb_instance_type *source;	/* NULL: gb_catalog_all() */
static size_t nsource;

enum gb_itype_bucket gb_itype_bucket_of(const char *family)
{
	return family && family[0] == 'p' ? GB_ITYPE_BUCKET_P : GB_ITYPE_BUCKET_G;
}

static bool in_catalog(const struct gb_instance_type *c, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(c[i].name, name) == 0)
			return true;
	}
	return false;
}

/* Called with [mu] held. */
static void build(void)
{
	size_t n, k = 0;
	const struct gb_instance_type *c = source ? source : gb_catalog_all(&n);

	if (source)
		n = nsource;
	table = calloc(n + GB_ARRAY_LEN(extras), sizeof(*table));
	if (!table)
		return;		/* every type is then unknown: a clear error */
	for (size_t i = 0; i < n; i++, k++) {
		table[k].name = c[i].name;
		table[k].vcpus = c[i].vcpus;
		table[k].bucket = gb_itype_bucket_of(c[i].family);
		table[k].arch = c[i].arch;
		table[k].ct = &c[i];
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(extras); i++) {
		if (!in_catalog(c, n, extras[i].name))
			table[k++] = extras[i];
	}
	ntable = k;
}

const struct gb_itype *gb_itype_all(size_t *n)
{
	const struct gb_itype *t;

	pthread_mutex_lock(&mu);
	if (!table)
		build();
	t = table;
	*n = ntable;
	pthread_mutex_unlock(&mu);
	return t;
}

const struct gb_itype *gb_itype_find(const char *name)
{
	size_t n;
	const struct gb_itype *t = gb_itype_all(&n);

	for (size_t i = 0; name && i < n; i++) {
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	}
	return NULL;
}

void gb_itype_catalog_set(const struct gb_instance_type *v, size_t n)
{
	pthread_mutex_lock(&mu);
	free(table);
	table = NULL;
	ntable = 0;
	source = v;
	nsource = v ? n : 0;
	pthread_mutex_unlock(&mu);
}

const char *gb_itype_bucket_name(enum gb_itype_bucket b)
{
	return b == GB_ITYPE_BUCKET_P ? "P" : "G and VT";
}

const char *gb_itype_gpu_name(const char *gres, char *buf, size_t n)
{
	size_t i;

	for (i = 0; i < GB_ARRAY_LEN(gpu_names); i++) {
		if (strcmp(gpu_names[i].gres, gres) == 0)
			return gpu_names[i].aws;
	}
	for (i = 0; gres[i] && i + 1 < n; i++)
		buf[i] = (char)toupper((unsigned char)gres[i]);
	if (n)
		buf[i] = '\0';
	return buf;
}
