/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * catalog.c - the GPU instance types gpuburst may launch
 *
 * Every size of the G families (AWS instance-type pages: vCPUs, memory
 * GiB, GPUs per instance).  Memory is stored in MiB because Slurm's
 * RealMemory is in MiB; the GPU model is Slurm's gres type name.
 */
#include "config.h"

#include <string.h>

#include "conf_int.h"

#define GIB 1024

/* One macro per family: what is constant across its sizes. */
#define FAMILY_(fam, size, cpu, mem, gpu, model, gmem, arch) \
	{ fam "." size, fam, cpu, (mem) * GIB, gpu, model, (gmem) * GIB, arch }
#define G4DN(size, cpu, mem, gpu) FAMILY_("g4dn", size, cpu, mem, gpu, "t4", 16, "x86_64")
#define G5(size, cpu, mem, gpu) FAMILY_("g5", size, cpu, mem, gpu, "a10g", 24, "x86_64")
#define G5G(size, cpu, mem, gpu) FAMILY_("g5g", size, cpu, mem, gpu, "t4g", 16, "arm64")
#define G6(size, cpu, mem, gpu) FAMILY_("g6", size, cpu, mem, gpu, "l4", 24, "x86_64")
#define G6E(size, cpu, mem, gpu) FAMILY_("g6e", size, cpu, mem, gpu, "l40s", 48, "x86_64")

static const struct gb_instance_type catalog[] = {
	G4DN("xlarge", 4, 16, 1),
	G4DN("2xlarge", 8, 32, 1),
	G4DN("4xlarge", 16, 64, 1),
	G4DN("8xlarge", 32, 128, 1),
	G4DN("12xlarge", 48, 192, 4),
	G4DN("16xlarge", 64, 256, 1),
	G4DN("metal", 96, 384, 8),

	G5("xlarge", 4, 16, 1),
	G5("2xlarge", 8, 32, 1),
	G5("4xlarge", 16, 64, 1),
	G5("8xlarge", 32, 128, 1),
	G5("12xlarge", 48, 192, 4),
	G5("16xlarge", 64, 256, 1),
	G5("24xlarge", 96, 384, 4),
	G5("48xlarge", 192, 768, 8),

	G5G("xlarge", 4, 8, 1),
	G5G("2xlarge", 8, 16, 1),
	G5G("4xlarge", 16, 32, 1),
	G5G("8xlarge", 32, 64, 1),
	G5G("16xlarge", 64, 128, 2),
	G5G("metal", 64, 128, 2),

	G6("xlarge", 4, 16, 1),
	G6("2xlarge", 8, 32, 1),
	G6("4xlarge", 16, 64, 1),
	G6("8xlarge", 32, 128, 1),
	G6("12xlarge", 48, 192, 4),
	G6("16xlarge", 64, 256, 1),
	G6("24xlarge", 96, 384, 4),
	G6("48xlarge", 192, 768, 8),

	G6E("xlarge", 4, 32, 1),
	G6E("2xlarge", 8, 64, 1),
	G6E("4xlarge", 16, 128, 1),
	G6E("8xlarge", 32, 256, 1),
	G6E("12xlarge", 48, 384, 4),
	G6E("16xlarge", 64, 512, 1),
	G6E("24xlarge", 96, 768, 4),
	G6E("48xlarge", 192, 1536, 8),
};

/* The families, in catalog order: the default allowed_families. */
static const char *const families[] = { "g4dn", "g5", "g5g", "g6", "g6e" };

const struct gb_instance_type *gb_catalog_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < GB_ARRAY_LEN(catalog); i++) {
		if (strcmp(catalog[i].name, name) == 0)
			return &catalog[i];
	}
	return NULL;
}

const struct gb_instance_type *gb_catalog_all(size_t *n)
{
	if (n)
		*n = GB_ARRAY_LEN(catalog);
	return catalog;
}

bool conf_catalog_family_known(const char *family)
{
	for (size_t i = 0; i < GB_ARRAY_LEN(families); i++) {
		if (strcmp(families[i], family) == 0)
			return true;
	}
	return false;
}

void conf_catalog_family_list(struct gb_buf *b)
{
	for (size_t i = 0; i < GB_ARRAY_LEN(families); i++)
		gb_buf_printf(b, "%s%s", i ? ", " : "", families[i]);
}

/* The family is the text before the first '.': "g5g.xlarge" is "g5g". */
bool gb_conf_type_allowed(const struct gb_conf *conf, const char *type)
{
	const char *dot = type ? strchr(type, '.') : NULL;
	size_t len = dot ? (size_t)(dot - type) : 0;
	const char *const *fam = families;
	size_t n = GB_ARRAY_LEN(families);

	if (!dot || len == 0 || !dot[1])
		return false;
	if (conf) {
		fam = (const char *const *)conf->policy.allowed_families;
		n = conf->policy.n_allowed_families;
	}
	for (size_t i = 0; i < n; i++) {
		if (strlen(fam[i]) == len && strncmp(fam[i], type, len) == 0)
			return true;
	}
	return false;
}
