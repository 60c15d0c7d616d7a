/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * summary.c - the human summary of `gpuburstctl config check`
 *
 * The output is stable (tests compare it byte for byte) and never contains
 * a secret: explicit cloud keys appear as the first characters of the
 * access key id only.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf_int.h"
#include "gb_hostlist.h"

#define OR_DASH(s) ((s) ? (s) : "-")
#define OR_EMPTY(s) ((s) ? (s) : "")

static const char *dur(double s, char *buf, size_t n)
{
	return conf_duration_str(s, buf, n);
}

static const char *yesno(bool b)
{
	return b ? "yes" : "no";
}

static void print_list(FILE *fp, char *const *v, size_t n, const char *empty)
{
	if (!n)
		fputs(empty, fp);
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "%s%s", i ? ", " : "", v[i]);
}

static void print_head(FILE *fp, const struct gb_conf *conf)
{
	const struct gb_conf_log *l = &conf->log;

	fprintf(fp, "configuration: %s\n", conf->path);
	fprintf(fp, "cluster: %s\n", conf->cluster_name);
	fprintf(fp, "environment: %s%s (approval threshold %d nodes)\n",
		gb_conf_env_name(conf->environment),
		conf->environment_from_env ? ", from " GB_CONF_ENV_ENVIRONMENT : "",
		gb_conf_threshold(conf));
	fprintf(fp, "state_dir: %s\n", conf->state_dir);
	fprintf(fp, "log: file %s, syslog %s, level %s\n",
		l->file ? l->file : "none", yesno(l->syslog),
		gb_log_level_name(l->level));
}

static void print_credentials(FILE *fp, const struct gb_conf_cloud *cl)
{
	fputs("  credentials: ", fp);
	if (cl->access_key_id) {
		fprintf(fp, "explicit access key %.4s... (secret not shown)%s\n",
			cl->access_key_id,
			cl->session_token ? ", session token (not shown)" : "");
		return;
	}
	if (cl->role_arn) {
		fprintf(fp, "role %s", cl->role_arn);
		if (cl->source_profile)
			fprintf(fp, " assumed with profile %s of the shared files",
				cl->source_profile);
		else if (cl->credential_source)
			fprintf(fp, " assumed with credentials from %s",
				strcmp(cl->credential_source, "Environment") == 0 ?
				"the environment" : "instance metadata (IMDSv2)");
		else
			fprintf(fp, " by web identity (token %s)",
				cl->web_identity_token_file);
		fprintf(fp, "%s, STS %s\n", cl->external_id ? ", external id (not shown)" : "",
			cl->sts_endpoint ? cl->sts_endpoint : "regional");
		return;
	}
	if (cl->credential_process) {
		fprintf(fp, "credential_process %s (timeout %.0f s)\n",
			cl->credential_process[0], cl->process_timeout);
		return;
	}
	fprintf(fp, "profile %s from the shared files (credentials %s, config %s)",
		cl->profile ? cl->profile : "default",
		cl->credentials_file ? cl->credentials_file : "default",
		cl->config_file ? cl->config_file : "default");
	fprintf(fp, "%s\n", cl->imds ? ", then instance metadata (IMDSv2)" :
		", no instance metadata");
}

/* The proxy, its password as "***"; what bypasses it. */
static void print_proxy(FILE *fp, const struct gb_conf_cloud *cl)
{
	char shown[512];

	if (!cl->proxy) {
		fputs("  proxy: none\n", fp);
		return;
	}
	fprintf(fp, "  proxy: %s (not for loopback endpoints and instance metadata)\n",
		gb_url_redact(cl->proxy, shown, sizeof(shown)));
	fputs("  no_proxy: ", fp);
	print_list(fp, cl->no_proxy, cl->n_no_proxy, "-");
	fputc('\n', fp);
}

static void print_cloud(FILE *fp, const struct gb_conf_cloud *cl)
{
	char a[32], b[32], d[32];

	fprintf(fp, "cloud: provider %s\n", cl->provider);
	fprintf(fp, "  endpoint: %s\n", cl->endpoint ? cl->endpoint :
		"the public one of each region");
	fprintf(fp, "  ca_bundle: %s\n", cl->ca_bundle ? cl->ca_bundle :
		"the system's");
	print_proxy(fp, cl);
	fprintf(fp, "  timeouts: connect %s, request %s; retries %d within %s\n",
		dur(cl->connect_timeout, a, sizeof(a)),
		dur(cl->request_timeout, b, sizeof(b)), cl->max_retries,
		dur(cl->retry_budget, d, sizeof(d)));
	if (cl->munge_key.file)
		fprintf(fp, "  munge_key: %s, sealed to %s\n", cl->munge_key.file,
			cl->munge_key.seal_to);
	print_credentials(fp, cl);
}

static void print_region(FILE *fp, const struct gb_conf *conf,
			 const struct gb_conf_region *r)
{
	size_t subnets = 0;

	for (size_t j = 0; j < r->n_azs; j++)
		subnets += r->azs[j].n_subnets;
	fprintf(fp, "  %s (%.2f, %.2f): priority %d, %zu AZ%s, %zu subnet%s\n",
		r->name, r->lat, r->lon, r->priority, r->n_azs,
		r->n_azs == 1 ? "" : "s", subnets, subnets == 1 ? "" : "s");
	fprintf(fp, "    endpoint %s, ami %s, key %s, iam profile %s, user data %zu bytes\n",
		gb_conf_endpoint(conf, r) ? gb_conf_endpoint(conf, r) : "public",
		OR_DASH(r->ami), OR_DASH(r->key_name), OR_DASH(r->iam_profile),
		r->user_data ? strlen(r->user_data) : 0);
	fputs("    security groups: ", fp);
	print_list(fp, r->security_groups, r->n_security_groups, "-");
	fputc('\n', fp);
	for (size_t j = 0; j < r->n_azs; j++) {
		fprintf(fp, "    %s: ", r->azs[j].name);
		print_list(fp, r->azs[j].subnets, r->azs[j].n_subnets, "-");
		fputc('\n', fp);
	}
}

/* A fallback region and its distance from the consumer, for sorting. */
struct hop {
	const struct gb_conf_region *r;
	double km;
	size_t order;
};

static int hop_cmp(const void *a, const void *b)
{
	const struct hop *x = a, *y = b;

	if (x->km != y->km)
		return x->km < y->km ? -1 : 1;
	if (x->r->priority != y->r->priority)
		return x->r->priority < y->r->priority ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

/* "ap-southeast-1 -> ap-south-1 (3904 km), ap-northeast-2 (4673 km)" */
static void print_order(FILE *fp, const struct gb_conf *conf,
			const struct gb_conf_group *g, const char *consumer)
{
	const struct gb_conf_region *cr = gb_conf_region(conf, consumer);
	struct hop *hops = calloc(g->n_fallback_regions + 1, sizeof(*hops));
	double lat = 0, lon = 0;
	size_t n = 0;

	if (cr) {
		lat = cr->lat;
		lon = cr->lon;
	} else {
		gb_region_coords(consumer, &lat, &lon);
	}
	fprintf(fp, "    %s ->", consumer);
	for (size_t i = 0; hops && i < g->n_fallback_regions; i++) {
		const struct gb_conf_region *r = gb_conf_region(conf, g->fallback_regions[i]);

		if (!r)
			continue;
		hops[n].r = r;
		hops[n].km = gb_region_distance_km(lat, lon, r->lat, r->lon);
		hops[n].order = i;
		n++;
	}
	if (hops)
		qsort(hops, n, sizeof(*hops), hop_cmp);
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "%s %s (%.0f km)", i ? "," : "", hops[i].r->name, hops[i].km);
	fputc('\n', fp);
	free(hops);
}

static void print_groups(FILE *fp, const struct gb_conf *conf)
{
	fprintf(fp, "fallback groups (%zu):\n", conf->n_groups);
	for (size_t i = 0; i < conf->n_groups; i++) {
		const struct gb_conf_group *g = &conf->groups[i];

		fprintf(fp, "  %s:\n", g->name);
		for (size_t j = 0; j < g->n_consumer_regions; j++)
			print_order(fp, conf, g, g->consumer_regions[j]);
	}
}

/* "reservation(cr-1, group my-odcrs, open)", "spot(max 12.5)", "on-demand" */
static void print_rung(FILE *fp, const struct gb_conf_rung *r)
{
	const char *sep = "(";

	fputs(gb_conf_capacity_name(r->kind), fp);
	for (size_t i = 0; i < r->n_ids; i++, sep = ", ")
		fprintf(fp, "%s%s", sep, r->ids[i]);
	for (size_t i = 0; i < r->n_resource_groups; i++, sep = ", ") {
		const char *g = strstr(r->resource_groups[i], ":group/");

		fprintf(fp, "%sgroup %s", sep, g ? g + 7 : r->resource_groups[i]);
	}
	if (r->open) {
		fprintf(fp, "%sopen", sep);
		sep = ", ";
	}
	if (r->max_price) {
		fprintf(fp, "%smax %s", sep, r->max_price);
		sep = ", ";
	}
	if (r->kind == GB_CAPACITY_BLOCK && !r->n_ids) {
		fprintf(fp, "%sany", sep);	/* every block of the nodeset's types */
		sep = ", ";
	}
	if (*sep == ',')
		fputc(')', fp);
}

static void print_nodeset(FILE *fp, const struct gb_conf *conf,
			  const struct gb_conf_nodeset *ns)
{
	size_t n = ns->pattern_ ? gb_hostlist_count(ns->pattern_) : 0;

	fprintf(fp, "  %s: %s (%zu node%s)\n", ns->name, ns->nodes, n,
		n == 1 ? "" : "s");
	for (size_t i = 0; i < ns->n_instance_types; i++) {
		const struct gb_instance_type *t;

		if (!(t = gb_conf_instance_type(conf, ns->instance_types[i])))
			continue;
		fprintf(fp, "    type %s: %d vCPU, %d MiB, %d x %s (%d MiB each), %s",
			t->name, t->vcpus, t->memory_mib, t->gpus, t->gpu_model,
			t->gpu_memory_mib, t->arch);
		if (t->efa)
			fprintf(fp, ", EFA x %d", t->efa_max_interfaces);
		fprintf(fp, "%s\n", ns->n_instance_types > 1 && i == 0 ? " (preferred)" : "");
	}
	fprintf(fp, "    home %s, mode %s, strategy %s, locality %s, market %s, partition %s\n",
		ns->home_region, gb_conf_mode_name(ns->mode),
		gb_conf_strategy_name(ns->strategy),
		gb_conf_locality_name(ns->locality), gb_conf_market_name(ns->market),
		ns->partition);
	fputs("    capacity ", fp);
	for (size_t i = 0; i < ns->n_capacity; i++) {
		fputs(i ? " > " : "", fp);
		print_rung(fp, &ns->capacity[i]);
	}
	fputc('\n', fp);
	if (ns->efa || ns->placement != GB_PLACEMENT_NONE)
		fprintf(fp, "    efa %s, placement %s\n", yesno(ns->efa),
			gb_conf_placement_name(ns->placement));
}

/* Where the catalog in use came from: the refreshed file, or built in. */
static void print_catalog(FILE *fp, const struct gb_conf *conf)
{
	char stamp[32] = "?";
	time_t when = (time_t)conf->catalog_refreshed_at;
	struct tm tm;
	size_t n;

	gb_conf_instance_types(conf, &n);
	if (!conf->catalog_path) {
		fprintf(fp, "catalog: built in (%zu instance types)%s%s%s\n", n,
			conf->catalog_unreachable ? "; " : "",
			OR_EMPTY(conf->catalog_unreachable),
			conf->catalog_unreachable ? " not readable by this user" : "");
		return;
	}
	if (gmtime_r(&when, &tm))
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(fp, "catalog: %s (%zu instance types), refreshed %s from %s\n",
		conf->catalog_path, n, stamp, conf->catalog_source);
}

static void print_policy(FILE *fp, const struct gb_conf_policy *p)
{
	char a[32], b[32], c[32], d[32], e[32], f[32], g[32];

	fprintf(fp, "policy:\n  batch_max %d, max_request_nodes %d\n",
		p->batch_max, p->max_request_nodes);
	fprintf(fp, "  approval thresholds: dev %d, staging %d, prod %d; timeout %s; manual resumes need approval: %s\n",
		p->approval_thresholds[GB_ENV_DEV],
		p->approval_thresholds[GB_ENV_STAGING],
		p->approval_thresholds[GB_ENV_PROD],
		dur(p->approval_timeout, a, sizeof(a)),
		yesno(p->manual_resume_needs_approval));
	fprintf(fp, "  at submit: %s; held jobs' approvals expire after %s, then the job is %s\n",
		p->approve_at_submit ? "jobs over the threshold are held" : "off",
		dur(p->submit_approval_timeout, b, sizeof(b)),
		p->on_approval_expiry == GB_HELD_CANCEL ? "cancelled" : "left held");
	fputs("  approval notify: ", fp);
	for (size_t i = 0; p->approval_notify && p->approval_notify[i]; i++) {
		const char *arg = p->approval_notify[i];
		bool q = strpbrk(arg, " \t'\"") != NULL;

		fprintf(fp, "%s%s%s%s", i ? " " : "", q ? "'" : "", arg,
			q ? "'" : "");
	}
	fputs(p->approval_notify ? "\n" : "-\n", fp);
	fputs("  allowed geo regions: ", fp);
	print_list(fp, p->allowed_geo_regions, p->n_allowed_geo_regions,
		   "any (no geo check)");
	fprintf(fp, "\n  ice_cooldown %s, orphan_timeout %s, request_deadline %s, offerings_ttl %s, capacity_half_life %s, retention %s\n",
		dur(p->ice_cooldown, b, sizeof(b)), dur(p->orphan_timeout, c, sizeof(c)),
		dur(p->request_deadline, d, sizeof(d)), dur(p->offerings_ttl, e, sizeof(e)),
		dur(p->capacity_half_life, f, sizeof(f)),
		p->retention > 0 ? dur(p->retention, g, sizeof(g)) : "off (kept forever)");
	fprintf(fp, "  reprobe_window %s\n", p->reprobe_window < 0 ?
		"auto (half of ResumeTimeout)" : p->reprobe_window == 0 ? "0 (off)" :
		dur(p->reprobe_window, b, sizeof(b)));
	fprintf(fp, "  capacity_block_margin %s, capacity_block_wait %s, reservation_ttl %s, spot_price_ttl %s\n",
		dur(p->capacity_block_margin, b, sizeof(b)),
		dur(p->capacity_block_wait, c, sizeof(c)),
		dur(p->reservation_ttl, d, sizeof(d)), dur(p->spot_price_ttl, e, sizeof(e)));
	fprintf(fp, "  error_cooldown %s, doubling up to %s\n",
		dur(p->error_cooldown, b, sizeof(b)),
		dur(p->error_cooldown_max > p->error_cooldown ? p->error_cooldown_max
							      : p->error_cooldown, c, sizeof(c)));
	fputs("  allowed families: ", fp);
	print_list(fp, p->allowed_families, p->n_allowed_families, "-");
	fputc('\n', fp);
	if (p->prefer == GB_PREFER_CHEAPEST)
		fputs("  prefer cheapest: candidate regions by price, the unpriced ones last by distance\n", fp);
	else if (p->prefer == GB_PREFER_NEAREST_WITHIN)
		fprintf(fp, "  prefer nearest_within(%g%%): by distance among the regions priced within %g%% of the cheapest, then the others by distance\n",
			p->prefer_within, p->prefer_within);
	else
		fputs("  prefer nearest: the home region, then the others by distance\n", fp);
	fprintf(fp, "  cost tags: job %s, user %s, account %s, partition %s\n",
		OR_DASH(p->cost_tags.job), OR_DASH(p->cost_tags.user),
		OR_DASH(p->cost_tags.account), OR_DASH(p->cost_tags.partition));
	if (!p->n_budgets)
		fputs("  budgets: none\n", fp);
	for (size_t i = 0; i < p->n_budgets; i++) {
		const struct gb_conf_budget *bu = &p->budgets[i];

		fprintf(fp, "  budget %s: %s%s%s", bu->name, gb_conf_budget_scope_name(bu->scope),
			bu->who ? " " : "", OR_EMPTY(bu->who));
		if (bu->monthly > 0)
			fprintf(fp, ", %.2f USD a month", bu->monthly);
		if (bu->per_job > 0)
			fprintf(fp, ", %.2f USD a job", bu->per_job);
		fprintf(fp, "; over it a job is %s\n",
			bu->over == GB_BUDGET_REFUSE ? "refused" : "held for approval");
	}
}

/* Where the prices come from: <state_dir>/prices, the shipped file, or none known. */
static void print_prices(FILE *fp, const struct gb_conf *conf)
{
	time_t when = (time_t)conf->prices_refreshed_at;
	char stamp[32] = "?";
	struct tm tm;

	if (!conf->prices_path) {
		fputs("prices: none (no price file in state_dir, the shipped one not installed: "
		      "gpuburstctl prices refresh)\n", fp);
		return;
	}
	if (gmtime_r(&when, &tm))
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(fp, "prices: %s (%zu prices%s), refreshed %s from %s\n", conf->prices_path,
		conf->n_prices_, strcmp(conf->prices_path, GB_PRICES_SHIPPED) == 0 ?
		", shipped with gpuburst" : "", stamp, conf->prices_source);
}

static void print_planner(FILE *fp, const struct gb_conf_planner *p)
{
	const struct gb_conf_llm *l = &p->llm;
	char t[32];

	if (p->kind == GB_PLANNER_HEURISTIC) {
		fputs("planner: heuristic\n", fp);
		return;
	}
	fprintf(fp, "planner: llm, provider %s, model %s\n",
		gb_conf_llm_provider_name(l->provider), OR_DASH(l->model));
	fprintf(fp, "  endpoint %s, region %s, api key file %s\n",
		OR_DASH(l->endpoint), OR_DASH(l->region), OR_DASH(l->api_key_file));
	fprintf(fp, "  timeout %s, max_tokens %d, max_calls %d",
		dur(l->timeout, t, sizeof(t)), l->max_tokens, l->max_calls);
	if (l->has_temperature)
		fprintf(fp, ", temperature %g", l->temperature);
	fputc('\n', fp);
}

void gb_conf_print_summary(const struct gb_conf *conf, void *out)
{
	FILE *fp = out;

	print_head(fp, conf);
	print_catalog(fp, conf);
	print_prices(fp, conf);
	print_cloud(fp, &conf->cloud);
	fprintf(fp, "regions (%zu):\n", conf->n_regions);
	for (size_t i = 0; i < conf->n_regions; i++)
		print_region(fp, conf, &conf->regions[i]);
	print_groups(fp, conf);
	fprintf(fp, "nodesets (%zu):\n", conf->n_nodesets);
	for (size_t i = 0; i < conf->n_nodesets; i++)
		print_nodeset(fp, conf, &conf->nodesets[i]);
	print_policy(fp, &conf->policy);
	print_planner(fp, &conf->planner);
	fputs("admins: users ", fp);
	print_list(fp, conf->admins.users, conf->admins.n_users, "-");
	fprintf(fp, "; group %s\n", OR_DASH(conf->admins.group));
	fprintf(fp, "job_submit: route GPU jobs without a partition: %s\n",
		yesno(conf->job_submit.route_gpu_jobs));
}
