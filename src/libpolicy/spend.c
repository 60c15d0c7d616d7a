/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spend.c - money from the state file: instance time x price
 *
 * Every instance record has its launch and termination time (0 while
 * alive), region, type and capacity kind; its request says whose job it
 * ran for (schema 6).  Cost is the record's seconds inside a window times
 * the price of its (region, type, kind) from the price file, per second
 * as EC2 bills Linux instances; a spot instance's from the spot prices
 * reconcile caches (DescribeSpotPriceHistory) when one is cached.
 * `gpuburstctl cost` reports it grouped; the spend summary the job_submit
 * plugin reads (gb_conf.h) is the same sum for the current month, per
 * budget scope.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_policy.h"
#include "gb_util.h"

static const char *const by_names[] = { "cluster", "job", "user", "account", "partition",
					"region", "type" };

const char *gb_cost_by_name(enum gb_cost_by by)
{
	return (unsigned)by < GB_ARRAY_LEN(by_names) ? by_names[by] : "?";
}

gb_err_t gb_cost_by_parse(const char *s, enum gb_cost_by *out)
{
	for (size_t i = 0; i < GB_ARRAY_LEN(by_names); i++) {
		if (s && strcmp(s, by_names[i]) == 0) {
			*out = (enum gb_cost_by)i;
			return GB_E_OK;
		}
	}
	return GB_E_INVALID;
}

void gb_cost_report_clear(struct gb_cost_report *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].key);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* The kind of a record's capacity column (on-demand for an unknown one). */
static enum gb_capacity_kind kind_of(const char *capacity)
{
	enum gb_capacity_kind k;

	return gb_conf_capacity_parse(capacity, &k) ? GB_CAPACITY_ON_DEMAND : k;
}

double gb_policy_usage_price(const struct gb_conf *conf, gb_state_t *st,
			     const struct gb_usage *u)
{
	enum gb_capacity_kind kind = kind_of(u->capacity);
	struct gb_spot_price p;

	if (kind == GB_CAPACITY_SPOT && st && u->region && u->instance_type &&
	    gb_state_spot_price_get(st, u->region, u->az && *u->az ? u->az : NULL,
				    u->instance_type, &p, NULL) == GB_E_OK)
		return p.usd_per_hour;
	return gb_conf_price(conf, u->region, u->instance_type, kind, NULL);
}

/* The seconds of [u] inside [since, until), its end "now" while alive. */
static double seconds_in(const struct gb_usage *u, double since, double until, double now)
{
	double start = u->launched_at > since ? u->launched_at : since;
	double end = u->terminated_at > 0 ? u->terminated_at : now;

	if (end > until)
		end = until;
	return end > start ? end - start : 0;
}

/* One grouping of a scan: its key and its report. */
struct grouping {
	enum gb_cost_by by;
	struct gb_cost_report *out;
	size_t cap;
};

/* One scan of the instance records feeds [n] groupings (each priced once). */
struct cost_ctx {
	const struct gb_conf *conf;
	gb_state_t *st;
	double since, until, now;
	struct grouping *g;
	size_t n;
	gb_err_t rc;
};

static const char *key_of(const struct cost_ctx *c, enum gb_cost_by by,
			  const struct gb_usage *u, char *buf, size_t n)
{
	const char *k = NULL;

	switch (by) {
	case GB_COST_BY_CLUSTER:
		k = c->conf->cluster_name;
		break;
	case GB_COST_BY_JOB:
		if (u->job_id > 0)
			snprintf(buf, n, "%lld", (long long)u->job_id);
		k = u->job_id > 0 ? buf : NULL;
		break;
	case GB_COST_BY_USER:
		k = u->user;
		break;
	case GB_COST_BY_ACCOUNT:
		k = u->account;
		break;
	case GB_COST_BY_PARTITION:
		k = u->partition;
		break;
	case GB_COST_BY_REGION:
		k = u->region;
		break;
	case GB_COST_BY_TYPE:
		k = u->instance_type;
		break;
	}
	return k && *k ? k : "-";
}

static struct gb_cost_row *row_for(struct grouping *g, const char *key)
{
	struct gb_cost_report *r = g->out;

	for (size_t i = 0; i < r->n; i++) {
		if (strcmp(r->v[i].key, key) == 0)
			return &r->v[i];
	}
	if (r->n == g->cap) {
		size_t nc = g->cap ? 2 * g->cap : 16;
		struct gb_cost_row *v = realloc(r->v, nc * sizeof(*v));

		if (!v)
			return NULL;
		r->v = v;
		g->cap = nc;
	}
	memset(&r->v[r->n], 0, sizeof(r->v[r->n]));
	if (!(r->v[r->n].key = strdup(key)))
		return NULL;
	return &r->v[r->n++];
}

/* Add [secs] at [price] (< 0: not known) to [row] and its report's totals. */
static void count(struct gb_cost_report *r, struct gb_cost_row *row, double secs, double price)
{
	row->instances++;
	row->seconds += secs;
	r->instances++;
	r->seconds += secs;
	if (price < 0) {
		row->unpriced_seconds += secs;
		r->unpriced_seconds += secs;
		return;
	}
	row->usd += secs * price / 3600.0;
	r->usd += secs * price / 3600.0;
}

static int add_usage(const struct gb_usage *u, void *arg)
{
	struct cost_ctx *c = arg;
	double secs = seconds_in(u, c->since, c->until, c->now), price;
	char buf[24];

	if (secs <= 0)
		return 0;
	price = gb_policy_usage_price(c->conf, c->st, u);
	for (size_t i = 0; i < c->n; i++) {
		struct grouping *g = &c->g[i];
		struct gb_cost_row *row = row_for(g, key_of(c, g->by, u, buf, sizeof(buf)));

		if (!row) {
			c->rc = GB_E_NOMEM;
			return 1;
		}
		count(g->out, row, secs, price);
	}
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct gb_cost_row *x = a, *y = b;

	if (x->usd != y->usd)
		return x->usd < y->usd ? 1 : -1;	/* the most expensive first */
	return strcmp(x->key, y->key);
}

/* Every grouping of [g] ([n]) over one scan of [since, until). */
static gb_err_t cost_scan(const struct gb_conf *conf, gb_state_t *st, double since,
			  double until, double now, struct grouping *g, size_t n,
			  gb_error_t *err)
{
	struct cost_ctx c = { conf, st, since, until, now, g, n, GB_E_OK };
	gb_err_t rc;

	for (size_t i = 0; i < n; i++)
		memset(g[i].out, 0, sizeof(*g[i].out));
	if (!(until > since))
		return gb_errorf(err, GB_E_INVALID, "cost: the window ends before it starts");
	rc = gb_state_usage_list(st, since, until, add_usage, &c, err);
	if (rc == GB_E_OK && c.rc)
		rc = gb_errorf(err, c.rc, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct gb_cost_report *out = g[i].out;

		if (rc)
			gb_cost_report_clear(out);
		else if (out->n > 1)
			qsort(out->v, out->n, sizeof(*out->v), row_cmp);
	}
	return rc;
}

gb_err_t gb_policy_cost(const struct gb_conf *conf, gb_state_t *st, double since,
			double until, double now, enum gb_cost_by by,
			struct gb_cost_report *out, gb_error_t *err)
{
	struct grouping g = { by, out, 0 };

	return cost_scan(conf, st, since, until, now, &g, 1, err);
}

/*****************************************************************************
 *  The spend summary
 *****************************************************************************/

static gb_err_t summary_add(struct gb_spend_summary *s, size_t *cap,
			    enum gb_budget_scope scope, const struct gb_cost_row *row)
{
	if (scope != GB_BUDGET_CLUSTER && strcmp(row->key, "-") == 0)
		return GB_E_OK;		/* owner not known: counted for the cluster only */
	if (s->n == *cap) {
		size_t nc = *cap ? 2 * *cap : 16;
		struct gb_spend_entry *v = realloc(s->v, nc * sizeof(*v));

		if (!v)
			return GB_E_NOMEM;
		s->v = v;
		*cap = nc;
	}
	s->v[s->n].scope = scope;
	s->v[s->n].usd = row->usd;
	s->v[s->n].name = NULL;
	if (scope != GB_BUDGET_CLUSTER && !(s->v[s->n].name = strdup(row->key)))
		return GB_E_NOMEM;
	s->n++;
	return GB_E_OK;
}

gb_err_t gb_policy_spend_summary(const struct gb_conf *conf, gb_state_t *st, double now,
				 struct gb_spend_summary *out, gb_error_t *err)
{
	static const struct {
		enum gb_cost_by by;
		enum gb_budget_scope scope;
	} scopes[] = {
		{ GB_COST_BY_CLUSTER, GB_BUDGET_CLUSTER },
		{ GB_COST_BY_ACCOUNT, GB_BUDGET_ACCOUNT },
		{ GB_COST_BY_PARTITION, GB_BUDGET_PARTITION },
		{ GB_COST_BY_USER, GB_BUDGET_USER },
	};
	double start = gb_spend_month(now, out->month, sizeof(out->month));
	struct gb_cost_report r[GB_ARRAY_LEN(scopes)];
	struct grouping g[GB_ARRAY_LEN(scopes)];
	size_t cap = 0;
	gb_err_t rc = GB_E_OK;

	out->v = NULL;
	out->n = 0;
	out->refreshed_at = now;
	if (!(now > start))
		return GB_E_OK;	/* the month's first instant: nothing spent */
	for (size_t i = 0; i < GB_ARRAY_LEN(scopes); i++)
		g[i] = (struct grouping){ scopes[i].by, &r[i], 0 };
	/* one scan of the month's records for the four scopes */
	if ((rc = cost_scan(conf, st, start, now, now, g, GB_ARRAY_LEN(g), err)))
		return rc;
	for (size_t i = 0; rc == GB_E_OK && i < GB_ARRAY_LEN(scopes); i++) {
		for (size_t k = 0; rc == GB_E_OK && k < r[i].n; k++) {
			if ((rc = summary_add(out, &cap, scopes[i].scope, &r[i].v[k])))
				gb_errorf(err, rc, "out of memory");
		}
		if (rc == GB_E_OK && i == 0 && r[i].n == 0)
			rc = summary_add(out, &cap, GB_BUDGET_CLUSTER,
					 &(struct gb_cost_row){ .key = (char *)"-" });
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(scopes); i++)
		gb_cost_report_clear(&r[i]);
	if (rc)
		gb_spend_clear(out);
	return rc;
}

gb_err_t gb_policy_spend_refresh(const struct gb_conf *conf, gb_state_t *st, double now,
				 gb_error_t *err)
{
	struct gb_spend_summary s = { 0 };
	char path[4096];
	gb_err_t rc;

	if (!conf->policy.n_budgets)
		return GB_E_OK;		/* nobody reads it */
	if (!gb_conf_spend_file(conf, path, sizeof(path)))
		return gb_errorf(err, GB_E_INVALID, "the spend summary's path is too long");
	if ((rc = gb_policy_spend_summary(conf, st, now, &s, err)))
		return rc;
	rc = gb_spend_write(path, &s, err);
	gb_spend_clear(&s);
	return rc;
}
