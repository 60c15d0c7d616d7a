/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conf_check.c - checks that span mappings: names, groups, nodesets, policy
 *
 * They run after the whole file is read, on whatever could be read: an
 * element whose own keys were bad has NULL fields, and every check here
 * skips NULLs, so one mistake gives one message, not a cascade.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_int.h"
#include "gb_hostlist.h"
#include "gb_partition.h"

/*
 * Work budget of the overlap check, in host names expanded plus matched
 * (about 0.1 s per million).  Patterns with different literal prefixes
 * cost nothing; ten 4096-node nodesets sharing one prefix cost 0.7 million.
 */
#define OVERLAP_BUDGET 4000000UL

static bool configured(const struct gb_conf *conf, const char *region)
{
	return gb_conf_region(conf, region) != NULL;
}

static bool known(const struct gb_conf *conf, const char *region)
{
	return configured(conf, region) || gb_region_coords(region, NULL, NULL);
}

/* "duplicate subnet 'subnet-1' (first at line 12)" */
static void dup_plain(struct conf_ctx *c, const struct conf_named *first,
		      const struct conf_named *dup, const void *what)
{
	char tmp[CONF_SHOW_MAX + 8], at[64];

	conf_error(c, conf_mark_of(c, dup->addr), "duplicate %s '%s' (first at %s)",
		   (const char *)what, conf_show(dup->name, tmp, sizeof(tmp)),
		   conf_mark_where(c, first->addr, dup->addr, at, sizeof(at)));
}

static void check_env(struct conf_ctx *c)
{
	const char *v = getenv(GB_CONF_ENV_ENVIRONMENT);
	struct gb_conf_mark none = { 0, 0 };
	char tmp[CONF_SHOW_MAX + 8];
	int e;

	if (!v || !*v)
		return;
	if ((e = conf_enum_find(&conf_enum_env, v)) < 0) {
		conf_error(c, none, "environment variable %s='%s' is invalid (expected one of: dev, staging, prod)",
			   GB_CONF_ENV_ENVIRONMENT, conf_show(v, tmp, sizeof(tmp)));
		return;
	}
	c->conf->environment = (enum gb_env)e;
	c->conf->environment_from_env = true;
}

/* Region names, AZ names and subnet ids are each unique in the file. */
static void check_regions(struct conf_ctx *c)
{
	const struct gb_conf *conf = c->conf;
	struct conf_namev regions = { 0 }, azs = { 0 }, subnets = { 0 };

	for (size_t i = 0; i < conf->n_regions; i++) {
		const struct gb_conf_region *r = &conf->regions[i];

		conf_namev_add(c, &regions, r->name, &r->name, i);
		for (size_t j = 0; j < r->n_azs; j++) {
			const struct gb_conf_az *az = &r->azs[j];

			conf_namev_add(c, &azs, az->name, &az->name, i);
			for (size_t k = 0; k < az->n_subnets; k++)
				conf_namev_add(c, &subnets, az->subnets[k],
					       &az->subnets[k], i);
		}
	}
	conf_dups_report(c, &regions, dup_plain, "region");
	conf_dups_report(c, &azs, dup_plain, "availability zone");
	conf_dups_report(c, &subnets, dup_plain, "subnet");
	conf_namev_free(&regions);
	conf_namev_free(&azs);
	conf_namev_free(&subnets);
}

/*
 * The regions that use their default endpoint must all be in one AWS
 * partition (gb_partition.h): the one set of credentials of
 * cloud.credentials is valid in one partition only.  Regions with an
 * endpoint (their own or cloud.endpoint) are not judged: the endpoint
 * decides where they are; nor are names in no known partition (custom
 * regions with lat/lon), which the EC2 client refuses without an endpoint.
 */
static void check_partitions(struct conf_ctx *c)
{
	const struct gb_conf *conf = c->conf;
	const struct gb_conf_region *first = NULL;
	const struct gb_partition *fp = NULL;

	for (size_t i = 0; i < conf->n_regions; i++) {
		const struct gb_conf_region *r = &conf->regions[i];
		const struct gb_partition *p;

		if (!r->name || gb_conf_endpoint(conf, r) || !(p = gb_partition_of(r->name)))
			continue;
		if (!fp) {
			first = r;
			fp = p;
		} else if (strcmp(p->name, fp->name) != 0) {
			conf_error(c, conf_mark_of(c, &r->name),
				   "region '%s' is in AWS partition %s, region '%s' in %s: one set of credentials cannot sign for both (one gpuburst.yaml per partition)",
				   r->name, p->name, first->name, fp->name);
		}
	}
}

/* A consumer region in two groups would make the fallback list ambiguous. */
static void dup_consumer(struct conf_ctx *c, const struct conf_named *first,
			 const struct conf_named *dup, const void *arg)
{
	const struct gb_conf_group *g = arg;
	struct gb_conf_mark m = conf_mark_of(c, dup->addr);

	if (first->owner == dup->owner)
		conf_error(c, m, "consumer region '%s' is listed twice in group '%s'",
			   dup->name, g[dup->owner].name);
	else
		conf_error(c, m, "consumer region '%s' is in groups '%s' and '%s' (ambiguous)",
			   dup->name, g[first->owner].name, g[dup->owner].name);
}

static void dup_fallback(struct conf_ctx *c, const struct conf_named *first,
			 const struct conf_named *dup, const void *arg)
{
	const struct gb_conf_group *g = arg;
	char at[64];

	conf_error(c, conf_mark_of(c, dup->addr),
		   "fallback region '%s' is listed twice in group '%s' (first at %s)",
		   dup->name, g->name,
		   conf_mark_where(c, first->addr, dup->addr, at, sizeof(at)));
}

static void check_group(struct conf_ctx *c, const struct gb_conf_group *g)
{
	struct conf_namev fb = { 0 };
	char tmp[CONF_SHOW_MAX + 8];

	for (size_t j = 0; j < g->n_consumer_regions; j++) {
		const char *r = g->consumer_regions[j];

		if (!known(c->conf, r))
			conf_error(c, conf_mark_of(c, &g->consumer_regions[j]),
				   "consumer region '%s' of group '%s' is neither a known AWS region nor configured under regions",
				   conf_show(r, tmp, sizeof(tmp)), g->name);
	}
	for (size_t j = 0; j < g->n_fallback_regions; j++) {
		const char *r = g->fallback_regions[j];

		if (!configured(c->conf, r))
			conf_error(c, conf_mark_of(c, &g->fallback_regions[j]),
				   "fallback region '%s' of group '%s' is not configured under regions",
				   conf_show(r, tmp, sizeof(tmp)), g->name);
		conf_namev_add(c, &fb, r, &g->fallback_regions[j], 0);
	}
	conf_dups_report(c, &fb, dup_fallback, g);
	conf_namev_free(&fb);
}

static void check_groups(struct conf_ctx *c)
{
	const struct gb_conf *conf = c->conf;
	struct conf_namev consumers = { 0 };

	for (size_t i = 0; i < conf->n_groups; i++) {
		const struct gb_conf_group *g = &conf->groups[i];

		if (!g->name)
			continue;
		check_group(c, g);
		for (size_t j = 0; j < g->n_consumer_regions; j++)
			conf_namev_add(c, &consumers, g->consumer_regions[j],
				       &g->consumer_regions[j], i);
	}
	conf_dups_report(c, &consumers, dup_consumer, conf->groups);
	conf_namev_free(&consumers);
}

/* The catalog's sizes of [type]'s family: "g5.xlarge, g5.2xlarge, ..." */
static void sizes_list(const struct gb_conf *conf, const char *type, struct gb_buf *b)
{
	const struct gb_instance_type *all;
	size_t n;

	all = gb_conf_instance_types(conf, &n);
	for (size_t i = 0; i < n; i++) {
		size_t flen = strlen(all[i].family);

		if (strncmp(all[i].name, type, flen) == 0 && type[flen] == '.')
			gb_buf_printf(b, "%s%s", b->len ? ", " : "", all[i].name);
	}
}

/* The policy's rule (gb_conf_type_check), with the known sizes when missing. */
static bool check_one_type(struct conf_ctx *c, const struct gb_conf_nodeset *ns, size_t i)
{
	const char *type = ns->instance_types[i];
	struct gb_conf_mark m = conf_mark_of(c, &ns->instance_types[i]);
	struct gb_buf b = GB_BUF_INIT;
	char tmp[CONF_SHOW_MAX + 8];
	gb_error_t e = { 0 };

	if (c->conf->policy.n_allowed_families == 0)
		return false;	/* reported at allowed_families */
	if (!gb_conf_type_check(c->conf, type, &e))
		return true;
	if (gb_conf_type_allowed(c->conf, type) && !gb_conf_instance_type(c->conf, type)) {
		sizes_list(c->conf, type, &b);
		conf_error(c, m, "instance type %s is not in the catalog%s%s (known sizes: %s)",
			   conf_show(type, tmp, sizeof(tmp)),
			   c->conf->catalog_path ? " " : "",
			   c->conf->catalog_path ? c->conf->catalog_path : "",
			   b.len ? gb_buf_str(&b) : "none");
	} else {
		conf_error(c, m, "%s", e.text);
	}
	if (gb_buf_failed(&b))
		conf_nomem(c);
	gb_buf_free(&b);
	return false;
}

/*
 * Every type of a nodeset: launchable, once; all of one GPU model and one
 * arch (one AMI per region; Slurm's gres names one model); with efa, all
 * support EFA; with placement: cluster, all support cluster placement.
 */
static void check_type(struct conf_ctx *c, const struct gb_conf_nodeset *ns)
{
	const struct gb_instance_type *first = NULL;

	for (size_t i = 0; i < ns->n_instance_types; i++) {
		const char *type = ns->instance_types[i];
		struct gb_conf_mark m = conf_mark_of(c, &ns->instance_types[i]);
		const struct gb_instance_type *t;
		bool again = false;

		for (size_t j = 0; j < i && !again; j++)
			again = strcmp(type, ns->instance_types[j]) == 0;
		if (again) {
			conf_error(c, m, "nodeset '%s' lists instance type %s twice", ns->name, type);
			continue;
		}
		if (!check_one_type(c, ns, i))
			continue;
		t = gb_conf_instance_type(c->conf, type);
		if (!first) {
			first = t;
		} else if (strcmp(t->gpu_model, first->gpu_model) != 0) {
			conf_error(c, m, "instance type %s has %s GPUs, %s has %s: the types of nodeset '%s' must have one GPU model (Slurm's gres names one)",
				   t->name, t->gpu_model, first->name, first->gpu_model, ns->name);
		} else if (strcmp(t->arch, first->arch) != 0) {
			conf_error(c, m, "instance type %s is %s, %s is %s: the types of nodeset '%s' must have one architecture (one AMI per region)",
				   t->name, t->arch, first->name, first->arch, ns->name);
		}
		if (ns->efa && !t->efa)
			conf_error(c, m, "instance type %s does not support EFA, and nodeset '%s' has efa: true",
				   t->name, ns->name);
		if (ns->placement == GB_PLACEMENT_CLUSTER && !t->cluster_placement)
			conf_error(c, m, "instance type %s does not support cluster placement groups, and nodeset '%s' has placement: cluster",
				   t->name, ns->name);
	}
}

static void consumer_list(const struct gb_conf *conf, struct gb_buf *b)
{
	struct gb_strv seen = { 0 };

	for (size_t i = 0; i < conf->n_groups; i++) {
		const struct gb_conf_group *g = &conf->groups[i];

		for (size_t j = 0; j < g->n_consumer_regions; j++) {
			const char *r = g->consumer_regions[j];

			if (gb_strv_find(&seen, r) >= 0 || gb_strv_add(&seen, r))
				continue;
			gb_buf_printf(b, "%s%s", seen.n > 1 ? ", " : "", r);
		}
	}
	gb_strv_free(&seen);
}

static bool in_list(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i], s) == 0)
			return true;
	}
	return false;
}

static void check_home(struct conf_ctx *c, const struct gb_conf_nodeset *ns)
{
	const struct gb_conf_group *g = gb_conf_group_for(c->conf, ns->home_region);
	struct gb_conf_mark m = conf_mark_of(c, &ns->home_region);
	struct gb_buf b = GB_BUF_INIT;
	char tmp[CONF_SHOW_MAX + 8];
	const char *home = conf_show(ns->home_region, tmp, sizeof(tmp));

	if (!g) {
		consumer_list(c->conf, &b);
		conf_error(c, m, "home region '%s' of nodeset '%s' is in no fallback group (%s%s)",
			   home, ns->name, b.len ? "allowed consumer regions: " :
			   "no fallback_groups are configured", gb_buf_str(&b));
	} else if (ns->mode == GB_MODE_SINGLE_REGION &&
		   !in_list(g->fallback_regions, g->n_fallback_regions,
			    ns->home_region)) {
		conf_error(c, m, "nodeset '%s' is single_region, but its home region '%s' is not a fallback region of group '%s': it could launch nowhere",
			   ns->name, home, g->name);
	}
	if (gb_buf_failed(&b))
		conf_nomem(c);
	gb_buf_free(&b);
}

/* "ap-south-1, ap-northeast-1": the configured regions. */
static void region_list(const struct gb_conf *conf, struct gb_buf *b)
{
	for (size_t i = 0; i < conf->n_regions; i++) {
		if (conf->regions[i].name)
			gb_buf_printf(b, "%s%s", b->len ? ", " : "", conf->regions[i].name);
	}
}

/*
 * A resource group of the reservations rung is searched in its own region:
 * a configured one, in the ARN's partition when the region has a known one.
 * Malformed ARNs were reported when read.
 */
static void check_group_arn(struct conf_ctx *c, const struct gb_conf_nodeset *ns,
			    char *const *arn)
{
	char part[72], region[72], tmp[CONF_SHOW_MAX + 8];
	const struct gb_partition *p;
	struct gb_buf b = GB_BUF_INIT;

	if (!conf_group_arn_parse(*arn, part, region, sizeof(region)))
		return;
	if (!configured(c->conf, region)) {
		region_list(c->conf, &b);
		conf_error(c, conf_mark_of(c, arn),
			   "resource group '%s' of nodeset '%s' is in region '%s', which is not configured under regions (%s%s)",
			   conf_show(*arn, tmp, sizeof(tmp)), ns->name, region,
			   b.len ? "configured: " : "none is configured", gb_buf_str(&b));
	} else if ((p = gb_partition_of(region)) && strcmp(p->name, part) != 0) {
		conf_error(c, conf_mark_of(c, arn),
			   "resource group '%s' of nodeset '%s' names partition %s, but region '%s' is in %s",
			   conf_show(*arn, tmp, sizeof(tmp)), ns->name, part, region, p->name);
	}
	if (gb_buf_failed(&b))
		conf_nomem(c);
	gb_buf_free(&b);
}

static void check_ladder(struct conf_ctx *c, const struct gb_conf_nodeset *ns)
{
	for (size_t i = 0; i < ns->n_capacity; i++) {
		const struct gb_conf_rung *r = &ns->capacity[i];

		for (size_t j = 0; j < r->n_resource_groups; j++)
			check_group_arn(c, ns, &r->resource_groups[j]);
	}
}

/*
 * Every host of a single-item pattern starts with its text before the
 * first '['; two such patterns can share a host only if one of those
 * prefixes starts the other.
 */
static bool may_overlap(const char *a, const char *b)
{
	size_t la = strcspn(a, "["), lb = strcspn(b, "[");

	if (strchr(a, ',') || strchr(b, ','))
		return true;
	return strncmp(a, b, la < lb ? la : lb) == 0;
}

/* RET whether a host of [small] is in [big]; the first one in *host. */
static bool overlap(struct conf_ctx *c, const struct gb_conf_nodeset *small,
		    const struct gb_conf_nodeset *big, size_t *budget,
		    char *host, size_t hostlen)
{
	size_t n = gb_hostlist_count(small->pattern_);
	struct gb_strv hosts = { 0 };
	bool hit = false;

	if (n > *budget) {
		*budget = 0;
		return false;
	}
	*budget -= n;
	if (gb_hostlist_expand(small->pattern_, CONF_MAX_NODESET_HOSTS, &hosts, NULL)) {
		conf_nomem(c);
		return false;
	}
	for (size_t i = 0; i < hosts.n && !hit && *budget; i++, (*budget)--) {
		if ((hit = gb_hostlist_match(big->pattern_, hosts.v[i])))
			gb_strlcpy(host, hosts.v[i], hostlen);
	}
	gb_strv_free(&hosts);
	return hit;
}

/* Report nodeset [j] against the first earlier nodeset it overlaps. */
static void overlap_one(struct conf_ctx *c, size_t j, size_t *budget)
{
	const struct gb_conf_nodeset *b = &c->conf->nodesets[j];
	char host[256], tmp[CONF_SHOW_MAX + 8];

	for (size_t i = 0; i < j && *budget; i++) {
		const struct gb_conf_nodeset *a = &c->conf->nodesets[i];
		bool a_small;

		if (!a->pattern_ || !may_overlap(a->nodes, b->nodes))
			continue;
		a_small = gb_hostlist_count(a->pattern_) <= gb_hostlist_count(b->pattern_);
		if (!overlap(c, a_small ? a : b, a_small ? b : a, budget, host,
			     sizeof(host)))
			continue;
		conf_error(c, conf_mark_of(c, &b->nodes),
			   "nodes of nodeset '%s' overlap nodeset '%s' (both contain '%s')",
			   b->name ? b->name : "?", a->name ? a->name : "?",
			   conf_show(host, tmp, sizeof(tmp)));
		return;
	}
}

static void check_overlaps(struct conf_ctx *c)
{
	const struct gb_conf *conf = c->conf;
	size_t budget = OVERLAP_BUDGET, j;

	for (j = 1; j < conf->n_nodesets && budget; j++) {
		if (conf->nodesets[j].pattern_)
			overlap_one(c, j, &budget);
	}
	if (!budget)
		conf_error(c, conf_mark_of(c, &conf->nodesets[j - 1].nodes),
			   "too many node names to check nodesets for overlaps (more than %lu)",
			   OVERLAP_BUDGET);
}

static void check_nodesets(struct conf_ctx *c)
{
	const struct gb_conf *conf = c->conf;
	struct conf_namev names = { 0 };

	for (size_t i = 0; i < conf->n_nodesets; i++) {
		const struct gb_conf_nodeset *ns = &conf->nodesets[i];

		conf_namev_add(c, &names, ns->name, &ns->name, i);
		if (!ns->name)
			continue;
		check_type(c, ns);
		check_ladder(c, ns);
		if (ns->home_region)
			check_home(c, ns);
	}
	conf_dups_report(c, &names, dup_plain, "nodeset");
	conf_namev_free(&names);
	check_overlaps(c);
}

/*
 * Every allowed family must be a family of the catalog in use, once.  A
 * default one a refreshed catalog lacks is left alone: nothing names it.
 */
static void check_families(struct conf_ctx *c)
{
	const struct gb_conf_policy *p = &c->conf->policy;
	struct gb_buf known = GB_BUF_INIT;
	char tmp[CONF_SHOW_MAX + 8];

	conf_catalog_family_list(c->conf, &known);
	for (size_t i = 0; i < p->n_allowed_families; i++) {
		const char *f = p->allowed_families[i];
		struct gb_conf_mark m = conf_mark_of(c, &p->allowed_families[i]);
		bool again = false, is_known = conf_catalog_family_known(c->conf, f);

		for (size_t j = 0; j < i && !again; j++)
			again = is_known && strcmp(f, p->allowed_families[j]) == 0;
		if (again)
			conf_error(c, m, "'allowed_families' lists %s twice", f);
		else if (!is_known && m.line)
			conf_error(c, m, "instance family %s is not in the GPU catalog%s%s (its families: %s)",
				   conf_show(f, tmp, sizeof(tmp)),
				   c->conf->catalog_path ? " " : "",
				   c->conf->catalog_path ? c->conf->catalog_path : "",
				   gb_buf_str(&known));
	}
	if (gb_buf_failed(&known))
		conf_nomem(c);
	gb_buf_free(&known);
}

static void check_policy(struct conf_ctx *c)
{
	const struct gb_conf_policy *p = &c->conf->policy;
	char tmp[CONF_SHOW_MAX + 8];

	check_families(c);

	for (size_t i = 0; i < p->n_allowed_geo_regions; i++) {
		const char *r = p->allowed_geo_regions[i];

		if (!known(c->conf, r))
			conf_error(c, conf_mark_of(c, &p->allowed_geo_regions[i]),
				   "allowed geo region '%s' is neither a known AWS region nor configured under regions",
				   conf_show(r, tmp, sizeof(tmp)));
	}
}

/* {munge_key} in a region's user data is the key sealed: it must be configured. */
static void check_munge_key(struct conf_ctx *c)
{
	const struct gb_conf *conf = c->conf;
	char tmp[CONF_SHOW_MAX + 8];

	if (c->munge_key_seen)
		return;		/* given, and its own errors said if incomplete */
	for (size_t i = 0; i < conf->n_regions; i++) {
		const struct gb_conf_region *r = &conf->regions[i];

		if (!r->user_data_munge_key)
			continue;
		conf_error(c, conf_mark_of(c, &r->user_data),
			   "the user data of region '%s' names {munge_key}, but cloud.munge_key is not set (file: the munge key, seal_to: the image's public key)",
			   conf_show(r->name ? r->name : "?", tmp, sizeof(tmp)));
	}
}

void conf_check_all(struct conf_ctx *c)
{
	check_env(c);
	check_regions(c);
	check_partitions(c);
	check_groups(c);
	check_nodesets(c);
	check_policy(c);
	check_munge_key(c);
}
