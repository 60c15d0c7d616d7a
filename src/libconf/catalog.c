/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * catalog.c - the built-in catalog of NVIDIA GPU instance types, and lookups
 *
 * Every size of the current NVIDIA GPU families of EC2, from AWS's
 * instance-type pages ("Accelerated computing": vCPUs, memory GiB, GPUs,
 * network cards, network interfaces, EFA), checked against published
 * DescribeInstanceTypes data (2026: VCpuInfo, MemoryInfo, GpuInfo,
 * NetworkInfo.MaximumNetworkInterfaces and MaximumNetworkCards,
 * EfaInfo.MaximumEfaInterfaces).  Memory is stored in MiB because Slurm's
 * RealMemory is in MiB; GPU memory is GpuInfo's MemoryInfo.SizeInMiB per
 * GPU, EC2's exact figure (22888 MiB for the "24 GB" A10G and L4), so
 * that the built-in catalog and a refreshed one agree.  gpu_model is
 * gb_catalog_gres_name() of EC2's GpuInfo Name (test_conf checks every
 * entry).  `gpuburstctl catalog refresh` replaces the table with what EC2
 * says now.  Every family listed supports cluster placement groups.
 */
#include "config.h"

#include <string.h>

#include "conf_int.h"

#define GIB 1024

/*
 * One macro per family: what is constant across its sizes.  [gmem] is
 * MiB per GPU (GpuInfo), [mem] GiB per instance.  [efa] is
 * EfaInfo.MaximumEfaInterfaces (0: no EFA), [cards] NetworkInfo.
 * MaximumNetworkCards, [enis] NetworkInfo.MaximumNetworkInterfaces.
 */
#define TYPE_(fam, size, cpu, mem, gpu, model, gname, gmem, ar, efa_, cards, enis, frac) \
	{ .name = fam "." size, .family = fam, .vcpus = cpu, .memory_mib = (mem) * GIB, \
	  .gpus = gpu, .gpu_model = model, .gpu_memory_mib = gmem, \
	  .arch = ar, .gpu_maker = "NVIDIA", .efa = (efa_) > 0, \
	  .efa_max_interfaces = efa_, .network_cards = cards, .max_interfaces = enis, \
	  .cluster_placement = true, .gpu_name = gname, .gpu_fraction = frac }
#define X86 "x86_64"
#define ARM "arm64"

/* G families: one network card below 24xlarge; EFA from 8xlarge up. */
#define G4DN(size, cpu, mem, gpu, efa, enis) \
	TYPE_("g4dn", size, cpu, mem, gpu, "t4", "T4", 16384, X86, efa, 1, enis, 0)
#define G5(size, cpu, mem, gpu, efa, enis) \
	TYPE_("g5", size, cpu, mem, gpu, "a10g", "A10G", 22888, X86, efa, 1, enis, 0)
#define G5G(size, cpu, mem, gpu, enis) \
	TYPE_("g5g", size, cpu, mem, gpu, "t4g", "T4g", 16384, ARM, 0, 1, enis, 0)
#define G6(size, cpu, mem, gpu, efa, enis) \
	TYPE_("g6", size, cpu, mem, gpu, "l4", "L4", 22888, X86, efa, 1, enis, 0)
#define GR6(size, cpu, mem, gpu, efa, enis) \
	TYPE_("gr6", size, cpu, mem, gpu, "l4", "L4", 22888, X86, efa, 1, enis, 0)
#define G6E(size, cpu, mem, gpu, efa, cards, enis) \
	TYPE_("g6e", size, cpu, mem, gpu, "l40s", "L40S", 45776, X86, efa, cards, enis, 0)
/* Fractional L4 (NVIDIA vGPU): [frac] is the share's denominator. */
#define G6F(size, cpu, mem, frac, gmem, enis) \
	TYPE_("g6f", size, cpu, mem, 1, "l4", "L4", gmem, X86, 0, 1, enis, frac)
#define GR6F(size, cpu, mem, frac, gmem, enis) \
	TYPE_("gr6f", size, cpu, mem, 1, "l4", "L4", gmem, X86, 0, 1, enis, frac)

/* P families. */
#define P3(size, cpu, mem, gpu, enis) \
	TYPE_("p3", size, cpu, mem, gpu, "v100", "V100", 16384, X86, 0, 1, enis, 0)
#define P3DN(size, cpu, mem, gpu, efa, enis) \
	TYPE_("p3dn", size, cpu, mem, gpu, "v100", "V100", 32768, X86, efa, 1, enis, 0)
#define P4D(size, cpu, mem, gpu, efa, cards, enis) \
	TYPE_("p4d", size, cpu, mem, gpu, "a100", "A100", 40960, X86, efa, cards, enis, 0)
#define P4DE(size, cpu, mem, gpu, efa, cards, enis) \
	TYPE_("p4de", size, cpu, mem, gpu, "a100", "A100", 81920, X86, efa, cards, enis, 0)
#define P5(size, cpu, mem, gpu, efa, cards, enis) \
	TYPE_("p5", size, cpu, mem, gpu, "h100", "H100", 81920, X86, efa, cards, enis, 0)
#define P5E(size, cpu, mem, gpu, efa, cards, enis) \
	TYPE_("p5e", size, cpu, mem, gpu, "h200", "H200", 144384, X86, efa, cards, enis, 0)
#define P5EN(size, cpu, mem, gpu, efa, cards, enis) \
	TYPE_("p5en", size, cpu, mem, gpu, "h200", "H200", 144384, X86, efa, cards, enis, 0)
#define P6_B200(size, cpu, mem, gpu, efa, cards, enis) \
	TYPE_("p6-b200", size, cpu, mem, gpu, "b200", "B200", 183359, X86, efa, cards, enis, 0)
#define P6_B300(size, cpu, mem, gpu, efa, cards, enis) \
	TYPE_("p6-b300", size, cpu, mem, gpu, "b300", "B300", 275040, X86, efa, cards, enis, 0)

static const struct gb_instance_type catalog[] = {
	G4DN("xlarge", 4, 16, 1, 0, 3),
	G4DN("2xlarge", 8, 32, 1, 0, 3),
	G4DN("4xlarge", 16, 64, 1, 0, 3),
	G4DN("8xlarge", 32, 128, 1, 1, 4),
	G4DN("12xlarge", 48, 192, 4, 1, 8),
	G4DN("16xlarge", 64, 256, 1, 1, 4),
	G4DN("metal", 96, 384, 8, 1, 15),

	G5("xlarge", 4, 16, 1, 0, 4),
	G5("2xlarge", 8, 32, 1, 0, 4),
	G5("4xlarge", 16, 64, 1, 0, 8),
	G5("8xlarge", 32, 128, 1, 1, 8),
	G5("12xlarge", 48, 192, 4, 1, 15),
	G5("16xlarge", 64, 256, 1, 1, 8),
	G5("24xlarge", 96, 384, 4, 1, 15),
	G5("48xlarge", 192, 768, 8, 1, 7),

	/* no EFA on any g5g size */
	G5G("xlarge", 4, 8, 1, 4),
	G5G("2xlarge", 8, 16, 1, 4),
	G5G("4xlarge", 16, 32, 1, 8),
	G5G("8xlarge", 32, 64, 1, 8),
	G5G("16xlarge", 64, 128, 2, 15),
	G5G("metal", 64, 128, 2, 15),

	G6("xlarge", 4, 16, 1, 0, 4),
	G6("2xlarge", 8, 32, 1, 0, 4),
	G6("4xlarge", 16, 64, 1, 0, 8),
	G6("8xlarge", 32, 128, 1, 1, 8),
	G6("12xlarge", 48, 192, 4, 1, 8),
	G6("16xlarge", 64, 256, 1, 1, 15),
	G6("24xlarge", 96, 384, 4, 1, 15),
	G6("48xlarge", 192, 768, 8, 1, 15),

	/* g6 with twice the memory per vCPU; whole L4s */
	GR6("4xlarge", 16, 128, 1, 0, 8),
	GR6("8xlarge", 32, 256, 1, 1, 8),

	/* 24xlarge: 2 network cards, 48xlarge: 4 */
	G6E("xlarge", 4, 32, 1, 0, 1, 4),
	G6E("2xlarge", 8, 64, 1, 0, 1, 4),
	G6E("4xlarge", 16, 128, 1, 0, 1, 8),
	G6E("8xlarge", 32, 256, 1, 1, 1, 8),
	G6E("12xlarge", 48, 384, 4, 1, 1, 10),
	G6E("16xlarge", 64, 512, 1, 1, 1, 15),
	G6E("24xlarge", 96, 768, 4, 2, 2, 20),
	G6E("48xlarge", 192, 1536, 8, 4, 4, 40),

	/*
	 * Fractional L4s: in the catalog so that the refusal can say why
	 * (gb_conf_type_check): Slurm's gres counts whole GPUs.  GPU memory
	 * is the share's (EC2 says 0 GPUs for these types: the catalog keeps
	 * 1, the share in gpu_fraction).
	 */
	G6F("large", 2, 8, 8, 2861, 2),
	G6F("xlarge", 4, 16, 8, 2861, 4),
	G6F("2xlarge", 8, 32, 4, 5722, 4),
	G6F("4xlarge", 16, 64, 2, 11444, 8),
	GR6F("4xlarge", 16, 128, 2, 11444, 8),

	P3("2xlarge", 8, 61, 1, 4),
	P3("8xlarge", 32, 244, 4, 8),
	P3("16xlarge", 64, 488, 8, 8),

	P3DN("24xlarge", 96, 768, 8, 1, 15),

	/* 4 network cards of 100 Gbps, 15 interfaces each */
	P4D("24xlarge", 96, 1152, 8, 4, 4, 60),
	P4DE("24xlarge", 96, 1152, 8, 4, 4, 60),

	/*
	 * p5.48xlarge: 32 network cards, one EFA each (3200 Gbps), 64
	 * interfaces.  p5.4xlarge: one H100, one EFA.
	 */
	P5("4xlarge", 16, 256, 1, 1, 1, 4),
	P5("48xlarge", 192, 2048, 8, 32, 32, 64),
	P5E("48xlarge", 192, 2048, 8, 32, 32, 64),

	/* EFAv3: 16 network cards of 200 Gbps, 4 interfaces each */
	P5EN("48xlarge", 192, 2048, 8, 16, 16, 64),

	/* EFAv4: 8 network cards of 400 Gbps, 4 interfaces each */
	P6_B200("48xlarge", 192, 2048, 8, 8, 8, 32),

	/*
	 * 17 network cards: card 0 ENA only, 16 EFA cards of 400 Gbps
	 * (6400 Gbps); 4 interfaces per card; 4 TiB of memory.
	 */
	P6_B300("48xlarge", 192, 4096, 8, 16, 17, 68),
};

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

static bool gres_sep(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '-' || ch == '.' || ch == '/' || ch == '_';
}

const char *gb_catalog_gres_name(const char *gpu_name, char *buf, size_t n)
{
	size_t len = 0;
	bool sep = false;

	if (!gpu_name || !buf || n == 0)
		return NULL;
	for (const char *p = gpu_name; *p; p++) {
		char ch = *p;

		if (gres_sep(ch)) {
			sep = len > 0;
			continue;
		}
		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		else if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
			continue;	/* "(", "+", non-ASCII: dropped */
		if (len + (sep ? 2 : 1) >= n)
			return NULL;
		if (sep)
			buf[len++] = '_';
		buf[len++] = ch;
		sep = false;
	}
	buf[len] = '\0';
	return len ? buf : NULL;
}

const struct gb_instance_type *gb_conf_instance_types(const struct gb_conf *conf,
						      size_t *n)
{
	if (conf && conf->catalog_path) {
		if (n)
			*n = conf->n_catalog_;
		return conf->catalog_;
	}
	return gb_catalog_all(n);
}

const struct gb_instance_type *gb_conf_instance_type(const struct gb_conf *conf,
						     const char *name)
{
	const struct gb_instance_type *v;
	size_t n;

	if (!name)
		return NULL;
	v = gb_conf_instance_types(conf, &n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	}
	return NULL;
}

bool conf_catalog_family_known(const struct gb_conf *conf, const char *family)
{
	const struct gb_instance_type *v;
	size_t n;

	v = gb_conf_instance_types(conf, &n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].family, family) == 0)
			return true;
	}
	return false;
}

/* The families in catalog order, once each. */
void conf_catalog_family_list(const struct gb_conf *conf, struct gb_buf *b)
{
	const struct gb_instance_type *v;
	size_t n, start = b->len;

	v = gb_conf_instance_types(conf, &n);
	for (size_t i = 0; i < n; i++) {
		bool again = false;

		for (size_t j = 0; j < i && !again; j++)
			again = strcmp(v[i].family, v[j].family) == 0;
		if (!again)
			gb_buf_printf(b, "%s%s", b->len > start ? ", " : "", v[i].family);
	}
}

/* The default allowed_families: g4dn g5 g5g g6 g6e (gpuburst.yaml(5)). */
static const char *const default_families[] = { "g4dn", "g5", "g5g", "g6", "g6e" };

/* The family is the text before the first '.': "g5g.xlarge" is "g5g". */
bool gb_conf_type_allowed(const struct gb_conf *conf, const char *type)
{
	const char *dot = type ? strchr(type, '.') : NULL;
	size_t len = dot ? (size_t)(dot - type) : 0;
	const char *const *fam = default_families;
	size_t n = GB_ARRAY_LEN(default_families);

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

static void allowed_list(const struct gb_conf *conf, struct gb_buf *b)
{
	const char *const *fam = default_families;
	size_t n = GB_ARRAY_LEN(default_families);

	if (conf) {
		fam = (const char *const *)conf->policy.allowed_families;
		n = conf->policy.n_allowed_families;
	}
	for (size_t i = 0; i < n; i++)
		gb_buf_printf(b, "%s%s", i ? ", " : "", fam[i]);
}

/* "a" or "an" before a GPU model's name, as it is read aloud ("an L4"). */
static const char *article(const char *model)
{
	return model[0] && strchr("AEFHILMNORSXaefhilmnorsx", model[0]) ? "an" : "a";
}

gb_err_t gb_conf_type_check(const struct gb_conf *conf, const char *type,
			    gb_error_t *err)
{
	const struct gb_instance_type *t;
	struct gb_buf b = GB_BUF_INIT;
	gb_err_t rc = GB_E_OK;

	if (!type || !*type)
		return gb_errorf(err, GB_E_CONFIG, "no instance type");
	if (!gb_conf_type_allowed(conf, type)) {
		allowed_list(conf, &b);
		rc = gb_errorf(err, GB_E_CONFIG, "instance type %s is not allowed: only GPU families %s",
			       type, b.len ? gb_buf_str(&b) : "(none)");
	} else if (!(t = gb_conf_instance_type(conf, type))) {
		rc = gb_errorf(err, GB_E_CONFIG, "instance type %s is not in the catalog of known GPU types",
			       type);
	} else if (strcmp(t->gpu_maker, "NVIDIA") != 0) {
		rc = gb_errorf(err, GB_E_CONFIG, "instance type %s has %s GPUs (%s), not NVIDIA's: gpuburst launches NVIDIA GPU types only",
			       type, t->gpu_maker, t->gpu_name);
	} else if (t->gpu_fraction > 1) {
		rc = gb_errorf(err, GB_E_CONFIG, "instance type %s has a fractional GPU (1/%d of %s %s): Slurm's gres counts whole GPUs; gpuburst does not launch it",
			       type, t->gpu_fraction, article(t->gpu_name), t->gpu_name);
	} else if (t->gpus < 1) {
		rc = gb_errorf(err, GB_E_CONFIG, "instance type %s has no GPU", type);
	}
	if (gb_buf_failed(&b))
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	gb_buf_free(&b);
	return rc;
}
