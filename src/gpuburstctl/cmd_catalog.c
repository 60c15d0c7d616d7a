/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_catalog.c - gpuburstctl catalog, catalog refresh
 *
 * The GPU catalog every part of gpuburst reads (gb_conf_instance_type):
 * <state_dir>/catalog when a refresh wrote one, else the built-in catalog.
 * `catalog refresh` pages through DescribeInstanceTypes in every configured
 * region, keeps the types with GPUs (EC2 has no filter for that: GpuInfo
 * is read from each answer), and writes their union atomically.  Programs
 * read it when they load the configuration: the job_submit plugin at
 * slurmctld's start and reconfigure, never on the submit path.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "gb_ec2.h"
#include "gb_plan.h"
#include "gb_util.h"

/* Refresh: one region's answer costs ~10 pages of 100 types. */
#define CATALOG_TIMEOUT_MS 30000

static void print_types(const struct gb_instance_type *v, size_t n)
{
	printf("%-20s %5s %10s %4s %-14s %8s %-7s %4s %5s %s\n", "TYPE", "VCPUS", "MEMORY",
	       "GPUS", "MODEL", "GPU_MEM", "ARCH", "EFA", "CARDS", "NOTE");
	for (size_t i = 0; i < n; i++) {
		const struct gb_instance_type *t = &v[i];
		char note[64] = "";

		if (t->gpu_fraction > 0)
			snprintf(note, sizeof(note), "1/%d GPU: not launched", t->gpu_fraction);
		else if (t->gpu_maker && strcmp(t->gpu_maker, "NVIDIA"))
			snprintf(note, sizeof(note), "%s GPU: not launched", t->gpu_maker);
		printf("%-20s %5d %6d GiB %4d %-14s %4d GiB %-7s %4s %5d%s%s\n", t->name, t->vcpus,
		       t->memory_mib / 1024, t->gpus, t->gpu_model ? t->gpu_model : "-",
		       t->gpu_memory_mib / 1024, t->arch ? t->arch : "-",
		       t->efa ? "yes" : "no", t->network_cards, *note ? " " : "", note);
	}
}

static json_t *type_json(const struct gb_instance_type *t)
{
	return json_pack("{s:s,s:s?,s:i,s:i,s:i,s:s?,s:s?,s:i,s:s?,s:s?,s:i,s:b,s:i,s:i,s:i,s:b}",
			 "name", t->name, "family", t->family, "vcpus", t->vcpus,
			 "memory_mib", t->memory_mib, "gpus", t->gpus, "gpu_model", t->gpu_model,
			 "gpu_name", t->gpu_name, "gpu_memory_mib", t->gpu_memory_mib,
			 "gpu_maker", t->gpu_maker, "arch", t->arch,
			 "gpu_fraction", t->gpu_fraction, "efa", t->efa,
			 "efa_max_interfaces", t->efa_max_interfaces,
			 "network_cards", t->network_cards, "max_interfaces", t->max_interfaces,
			 "cluster_placement", t->cluster_placement);
}

static void catalog_show_json(const struct gb_conf *conf, const struct gb_instance_type *v,
			      size_t n)
{
	json_t *doc = json_object(), *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, type_json(&v[i]));
	json_object_set_new(doc, "path", ctl_jstr(conf->catalog_path));
	json_object_set_new(doc, "source", ctl_jstr(conf->catalog_source ? conf->catalog_source :
						    "built-in"));
	json_object_set_new(doc, "refreshed_at", conf->catalog_refreshed_at > 0 ?
			    json_real(conf->catalog_refreshed_at) : json_null());
	json_object_set_new(doc, "types", a);
	ctl_json_result(doc);
}

gb_err_t ctl_cmd_catalog(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = { CTL_COMMON_LONGOPTS, { 0 } };
	const struct gb_instance_type *v;
	const struct gb_conf *conf;
	bool first = true;
	char when[32];
	gb_err_t rc;
	size_t n;
	int c;

	while ((c = ctl_getopt(ctl, "catalog", argc, argv, ":jh", longopts, &first, &rc)) != -1) {
		if (c == CTL_OPT_DONE)
			return rc;
		return ctl_unimplemented("catalog", c);
	}
	if (optind < argc)
		return ctl_usage("catalog", "unexpected argument '%s'", argv[optind]);
	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	v = gb_conf_instance_types(conf, &n);
	if (ctl->json) {
		catalog_show_json(conf, v, n);
		return GB_E_OK;
	}
	if (conf->catalog_path)
		printf("catalog %s: %zu types, from %s, refreshed %s\n", conf->catalog_path, n,
		       conf->catalog_source ? conf->catalog_source : "?",
		       ctl_time(conf->catalog_refreshed_at, when, sizeof(when)));
	else
		printf("catalog: built in, %zu types (no %s/%s: run gpuburstctl catalog refresh)\n",
		       n, conf->state_dir, GB_CATALOG_FILE);
	print_types(v, n);
	return GB_E_OK;
}

/*****************************************************************************
 *  refresh
 *****************************************************************************/

struct refresh {
	struct gb_instance_type *v;	/* the union, strings in [keep] */
	size_t n;
	struct gb_strv keep;		/* owns every string of v[] */
	struct gb_buf regions;		/* the regions that answered */
};

static const char *keep(struct refresh *f, const char *s)
{
	if (!s)
		return NULL;
	if (gb_strv_add(&f->keep, s))
		return NULL;
	return f->keep.v[f->keep.n - 1];
}

static bool known(const struct refresh *f, const char *name)
{
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->v[i].name, name) == 0)
			return true;
	return false;
}

/*
 * A share of a GPU: EC2 gives a fractional type (g6f) the GPU's name with
 * the share's memory.  The built-in catalog knows the shares of the types
 * it has; for another, the share is the model's whole memory (its largest
 * per-GPU memory among the answers) over this type's, when below half.
 */
static int fraction_of(const struct gb_ec2_instance_type_list *l,
		       const struct gb_ec2_instance_type *t)
{
	const struct gb_instance_type *b = gb_catalog_find(t->instance_type);
	int whole = 0;

	if (b)
		return b->gpu_fraction;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].gpu_name && strcmp(l->v[i].gpu_name, t->gpu_name) == 0 &&
		    l->v[i].gpu_memory_mib > whole)
			whole = l->v[i].gpu_memory_mib;
	if (t->gpu_memory_mib <= 0 || 2 * t->gpu_memory_mib > whole)
		return 0;
	return (int)lround((double)whole / t->gpu_memory_mib);
}

/* The types of [l] with GPUs, not yet in [f], converted; RET false: out of memory. */
static bool take(struct refresh *f, const struct gb_ec2_instance_type_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct gb_ec2_instance_type *t = &l->v[i];
		struct gb_instance_type *v, *x;
		char model[64], fam[64];
		size_t flen = strcspn(t->instance_type, ".");

		if (!t->gpu_name || t->gpus <= 0 || known(f, t->instance_type))
			continue;
		if (!gb_catalog_gres_name(t->gpu_name, model, sizeof(model)) ||
		    flen >= sizeof(fam))
			continue;	/* a name Slurm could not use: not in the catalog */
		memcpy(fam, t->instance_type, flen);
		fam[flen] = '\0';
		if (!(v = realloc(f->v, (f->n + 1) * sizeof(*v))))
			return false;
		f->v = v;
		x = &v[f->n];
		memset(x, 0, sizeof(*x));
		x->name = keep(f, t->instance_type);
		x->family = keep(f, fam);
		x->vcpus = t->vcpus;
		x->memory_mib = t->memory_mib;
		x->gpus = t->gpus;
		x->gpu_model = keep(f, model);
		x->gpu_name = keep(f, t->gpu_name);
		x->gpu_memory_mib = t->gpu_memory_mib;
		x->gpu_maker = keep(f, t->gpu_maker ? t->gpu_maker : "unknown");
		x->arch = keep(f, t->arch ? t->arch : "x86_64");
		x->efa = t->efa;
		x->efa_max_interfaces = t->efa_max_interfaces;
		x->network_cards = t->network_cards;
		x->max_interfaces = t->max_interfaces;
		x->cluster_placement = t->cluster_placement;
		x->gpu_fraction = fraction_of(l, t);
		if (!x->name || !x->family || !x->gpu_model || !x->gpu_name || !x->gpu_maker ||
		    !x->arch)
			return false;
		f->n++;
	}
	return true;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct gb_instance_type *)a)->name,
		      ((const struct gb_instance_type *)b)->name);
}

static gb_err_t refresh_region(const struct gb_conf *conf, const struct gb_conf_region *r,
			       gb_creds_t *creds, struct refresh *f, gb_error_t *err)
{
	struct gb_ec2_instance_type_list *l = NULL;
	struct gb_ec2_error ae = { 0 };
	gb_ec2_t *ec2 = NULL;
	gb_err_t rc;

	if ((rc = ctl_ec2_client(conf, r, creds, CATALOG_TIMEOUT_MS, &ec2, err)))
		return rc;
	rc = gb_ec2_describe_instance_types(ec2, NULL, 0, NULL, 0, &l, &ae, err);
	if (!rc && !take(f, l))
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	if (!rc)
		gb_buf_printf(&f->regions, "%s%s", f->regions.len ? " " : "", r->name);
	gb_ec2_instance_type_list_free(l);
	gb_ec2_destroy(ec2);
	return rc;
}

gb_err_t ctl_cmd_catalog_refresh(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dry-run", no_argument, NULL, 'n' }, CTL_COMMON_LONGOPTS, { 0 }
	};
	struct refresh f = { NULL, 0, { 0 }, GB_BUF_INIT };
	const struct gb_conf *conf;
	gb_creds_t *creds = NULL;
	char path[4096], source[512];
	bool first = true, dry = false;
	size_t nvidia = 0;
	gb_error_t err = { 0 };
	gb_err_t rc;
	int c;

	while ((c = ctl_getopt(ctl, "catalog refresh", argc, argv, ":jhn", longopts, &first,
			       &rc)) != -1) {
		if (c == CTL_OPT_DONE)
			return rc;
		if (c != 'n')
			return ctl_unimplemented("catalog refresh", c);
		dry = true;
	}
	if (optind < argc)
		return ctl_usage("catalog refresh", "unexpected argument '%s'", argv[optind]);
	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	if (!gb_conf_catalog_file(conf, path, sizeof(path)))
		return ctl_fail(GB_E_CONFIG, "catalog refresh: %s/%s is too long for a path",
				conf->state_dir, GB_CATALOG_FILE);
	ctl_log_open(ctl);
	if ((rc = gb_plan_creds_create(conf, &creds, &err))) {
		rc = ctl_fail(rc, "catalog refresh: credentials: %s", err.text);
		goto out;
	}
	/* every region must answer: a partial union would drop types */
	for (size_t i = 0; i < conf->n_regions; i++) {
		if ((rc = refresh_region(conf, &conf->regions[i], creds, &f, &err))) {
			rc = ctl_fail(rc, "catalog refresh: DescribeInstanceTypes in %s: %s "
				      "(nothing written)", conf->regions[i].name, err.text);
			goto out;
		}
	}
	qsort(f.v, f.n, sizeof(*f.v), by_name);
	for (size_t i = 0; i < f.n; i++)
		nvidia += strcmp(f.v[i].gpu_maker, "NVIDIA") == 0;
	snprintf(source, sizeof(source), "DescribeInstanceTypes in %s", gb_buf_str(&f.regions));
	if (!dry && (rc = gb_catalog_write(path, f.v, f.n, source, ctl->now, &err))) {
		rc = ctl_fail(rc, "catalog refresh: %s", err.text);
		goto out;
	}
	if (ctl->json) {
		json_t *doc = json_object(), *a = json_array();

		for (size_t i = 0; i < f.n; i++)
			json_array_append_new(a, type_json(&f.v[i]));
		json_object_set_new(doc, "path", json_string(path));
		json_object_set_new(doc, "source", json_string(source));
		json_object_set_new(doc, "dry_run", json_boolean(dry));
		json_object_set_new(doc, "types", a);
		ctl_json_result(doc);
	} else {
		printf("%s %zu GPU types (%zu NVIDIA) from %s%s\n", dry ? "would write" : "wrote",
		       f.n, nvidia, source, dry ? "" : "");
		printf("%s%s\n", path, dry ? ": unchanged (dry run)" :
		       ": programs read it when they next load the configuration "
		       "(slurmctld: scontrol reconfigure)");
	}
out:
	gb_creds_destroy(creds);
	free(f.v);
	gb_strv_free(&f.keep);
	gb_buf_free(&f.regions);
	return rc;
}
