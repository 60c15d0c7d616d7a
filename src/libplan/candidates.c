/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * candidates.c - the regions a request may launch in, in order of preference
 *
 * The ancestor's get_region_order (research s1.9): the home region's
 * fallback group bounds the set, home comes first when it can itself
 * launch, the others follow by great-circle distance from home.
 * policy.prefer may then put price before distance
 * (gb_plan_candidates_prefer).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_plan.h"
#include "gb_str.h"

void gb_plan_candidates_clear(struct gb_candidates *c)
{
	if (!c)
		return;
	free(c->home);
	free(c->v);
	free(c->allowed);
	free(c->prefer);
	memset(c, 0, sizeof(*c));
}

/* A configured region with at least one subnet can launch. */
static bool launchable(const struct gb_conf_region *r)
{
	for (size_t i = 0; r && i < r->n_azs; i++)
		if (r->azs[i].n_subnets > 0)
			return true;
	return false;
}

static int cmp_candidate(const void *a, const void *b)
{
	const struct gb_candidate *x = a, *y = b;

	if (x->home != y->home)
		return x->home ? -1 : 1;
	if (x->distance_km < y->distance_km)
		return -1;
	if (x->distance_km > y->distance_km)
		return 1;
	if (x->region->priority != y->region->priority)
		return x->region->priority < y->region->priority ? -1 : 1;
	return strcmp(x->region->name, y->region->name);
}

/* "ap-southeast-1, ap-northeast-1, ..." of every group's consumers. */
static void consumer_list(const struct gb_conf *conf, struct gb_buf *b)
{
	for (size_t i = 0; i < conf->n_groups; i++)
		for (size_t j = 0; j < conf->groups[i].n_consumer_regions; j++)
			gb_buf_printf(b, "%s%s", b->len ? ", " : "",
				      conf->groups[i].consumer_regions[j]);
}

static gb_err_t no_group(const struct gb_conf *conf, const char *home,
			 gb_error_t *err)
{
	struct gb_buf b = GB_BUF_INIT;
	gb_err_t rc;

	consumer_list(conf, &b);
	rc = gb_errorf(err, GB_E_PLAN,
		       "home region %s is in no fallback group; allowed consumer regions: %s",
		       home, b.len ? gb_buf_str(&b) : "(none configured)");
	gb_buf_free(&b);
	return rc;
}

static bool in_list(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* Append [r] to out->v unless already there. */
static void add_region(struct gb_candidates *out, const struct gb_conf_region *r,
		       bool home, bool home_known, double hlat, double hlon)
{
	for (size_t i = 0; i < out->n; i++)
		if (out->v[i].region == r)
			return;
	out->v[out->n].region = r;
	out->v[out->n].home = home;
	out->v[out->n].usd_per_hour = -1;
	out->v[out->n].distance_km = home ? 0.0 :
		home_known ? gb_region_distance_km(hlat, hlon, r->lat, r->lon) :
		HUGE_VAL;
	out->n++;
}

gb_err_t gb_plan_candidates(const struct gb_conf *conf, const char *home,
			    enum gb_mode mode, struct gb_candidates *out,
			    gb_error_t *err)
{
	const struct gb_conf_group *g;
	const struct gb_conf_region *hr;
	double hlat = 0, hlon = 0;
	bool home_known;
	size_t cap;

	memset(out, 0, sizeof(*out));
	out->mode = mode;
	if (!conf || !home || !*home)
		return gb_errorf(err, GB_E_INVALID, "candidates: no home region");
	if (!(out->home = strdup(home)))
		return gb_errorf(err, GB_E_NOMEM, "candidates: out of memory");
	if (!(g = gb_conf_group_for(conf, home)))
		return no_group(conf, home, err);
	hr = gb_conf_region(conf, home);
	if (hr) {
		hlat = hr->lat;
		hlon = hr->lon;
		home_known = true;
	} else {
		home_known = gb_region_coords(home, &hlat, &hlon);
	}
	cap = g->n_fallback_regions + 1;
	out->v = calloc(cap, sizeof(*out->v));
	out->allowed = calloc(cap + 1, sizeof(*out->allowed));
	if (!out->v || !out->allowed)
		return gb_errorf(err, GB_E_NOMEM, "candidates: out of memory");
	if (hr && launchable(hr))
		add_region(out, hr, true, home_known, hlat, hlon);
	for (size_t i = 0; i < g->n_fallback_regions; i++) {
		const struct gb_conf_region *r =
			gb_conf_region(conf, g->fallback_regions[i]);

		if (r)
			add_region(out, r, r == hr, home_known, hlat, hlon);
	}
	if (out->n == 0)
		return gb_errorf(err, GB_E_PLAN,
				 "fallback group %s of home region %s has no configured region",
				 g->name, home);
	qsort(out->v, out->n, sizeof(*out->v), cmp_candidate);
	for (size_t i = 0; i < out->n; i++)
		if (!in_list(out->allowed, out->n_allowed, out->v[i].region->name))
			out->allowed[out->n_allowed++] = out->v[i].region->name;
	/* The ancestor's single_region: regions[:1] of the ordered list. */
	if (mode == GB_MODE_SINGLE_REGION)
		out->n = 1;
	return GB_E_OK;
}

/*****************************************************************************
 *  policy.prefer
 *****************************************************************************/

/* A candidate and its place in the order it had (home, then distance). */
struct ranked {
	struct gb_candidate c;
	size_t was;
	int part;		/* 0 first, 1 after */
	double key;		/* inside a part, before was: the price for
				 * cheapest, 0 for nearest_within */
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->was < y->was ? -1 : x->was > y->was;
}

/* "1.21", "0.526", "98.30": at least two decimals, at most four. */
static const char *usd(double v, char *buf, size_t n)
{
	size_t len;

	snprintf(buf, n, "%.4f", v);
	len = strlen(buf);
	while (len > 0 && buf[len - 1] == '0' && len >= 4 && buf[len - 3] != '.')
		buf[--len] = '\0';
	return buf;
}

/* "ap-south-1 g5.xlarge 1.21 USD/h", the type unless it is [type0] (the first's). */
static void note_item(struct gb_buf *b, const struct gb_candidate *c,
		      const char *type0)
{
	char p[32];

	gb_buf_puts(b, c->region->name);
	if (c->usd_per_hour < 0) {
		gb_buf_puts(b, " no price");
		return;
	}
	if (!type0 || strcmp(type0, c->price_type) != 0)
		gb_buf_printf(b, " %s", c->price_type);
	gb_buf_printf(b, " %s USD/h", usd(c->usd_per_hour, p, sizeof(p)));
}

/*
 * "prefer cheapest: A g5.xlarge 1.21 USD/h before B 1.46 USD/h, C no
 * price"; "prefer nearest_within(10%): B g5.xlarge 1.30 USD/h, A 1.21
 * USD/h (within 10% of 1.21 USD/h) before C 1.46 USD/h, D no price".
 */
static gb_err_t note(struct gb_candidates *c, const struct ranked *r,
		     const struct gb_conf_policy *pol, const char *const *types,
		     size_t n_types, enum gb_capacity_kind kind, double cheapest,
		     gb_error_t *err)
{
	struct gb_buf b = GB_BUF_INIT;
	const char *type0 = NULL;
	char name[48], p[32];

	gb_buf_printf(&b, "prefer %s: ",
		      gb_conf_prefer_name(pol->prefer, pol->prefer_within, name, sizeof(name)));
	if (cheapest < 0) {
		gb_buf_puts(&b, "no price known for ");
		for (size_t t = 0; t < n_types; t++)
			gb_buf_printf(&b, "%s%s", t ? " or " : "", types[t]);
		gb_buf_printf(&b, " (%s) in ", gb_conf_capacity_name(kind));
		for (size_t i = 0; i < c->n; i++)
			gb_buf_printf(&b, "%s%s", i ? ", " : "", r[i].c.region->name);
		gb_buf_puts(&b, "; nearest first");
	}
	for (size_t i = 0; cheapest >= 0 && i < c->n; i++) {
		bool before = pol->prefer == GB_PREFER_CHEAPEST ? i == 1 :
			      i > 0 && r[i].part != r[i - 1].part;

		if (i > 0)
			gb_buf_puts(&b, before ? " before " : ", ");
		note_item(&b, &r[i].c, type0);
		if (i == 0)
			type0 = r[i].c.price_type;
		if (pol->prefer == GB_PREFER_NEAREST_WITHIN && r[i].part == 0 &&
		    (i + 1 == c->n || r[i + 1].part != 0))
			gb_buf_printf(&b, " (within %g%% of %s USD/h)", pol->prefer_within,
				      usd(cheapest, p, sizeof(p)));
	}
	if (gb_buf_failed(&b)) {
		gb_buf_free(&b);
		return gb_errorf(err, GB_E_NOMEM, "candidates: out of memory");
	}
	free(c->prefer);
	c->prefer = strdup(gb_buf_str(&b));
	gb_buf_free(&b);
	return c->prefer ? GB_E_OK :
	       gb_errorf(err, GB_E_NOMEM, "candidates: out of memory");
}

gb_err_t gb_plan_candidates_prefer(const struct gb_conf *conf,
				   struct gb_candidates *c,
				   const char *const *types, size_t n_types,
				   enum gb_capacity_kind kind, gb_error_t *err)
{
	const struct gb_conf_policy *pol = &conf->policy;
	struct ranked *r;
	double cheapest = -1, bound;
	gb_err_t rc;

	for (size_t i = 0; i < c->n; i++) {
		struct gb_candidate *v = &c->v[i];

		v->usd_per_hour = -1;
		v->price_type = NULL;
		for (size_t t = 0; t < n_types && v->usd_per_hour < 0; t++) {
			v->usd_per_hour = gb_conf_price(conf, v->region->name, types[t],
							kind, NULL);
			v->price_type = types[t];
		}
		if (v->usd_per_hour < 0)
			v->price_type = NULL;
		else if (cheapest < 0 || v->usd_per_hour < cheapest)
			cheapest = v->usd_per_hour;
	}
	if (pol->prefer == GB_PREFER_NEAREST || c->n < 2)
		return GB_E_OK;
	if (!(r = calloc(c->n, sizeof(*r))))
		return gb_errorf(err, GB_E_NOMEM, "candidates: out of memory");
	bound = cheapest * (1 + pol->prefer_within / 100);
	for (size_t i = 0; i < c->n; i++) {
		double p = c->v[i].usd_per_hour;

		r[i].c = c->v[i];
		r[i].was = i;
		if (pol->prefer == GB_PREFER_CHEAPEST) {
			r[i].part = p < 0;
			r[i].key = p < 0 ? 0 : p;
		} else {
			/* 1e-9: a price written as the bound itself is within */
			r[i].part = cheapest >= 0 &&
				    !(p >= 0 && p <= bound + 1e-9);
		}
	}
	qsort(r, c->n, sizeof(*r), cmp_ranked);
	for (size_t i = 0; i < c->n; i++)
		c->v[i] = r[i].c;
	rc = note(c, r, pol, types, n_types, kind, cheapest, err);
	free(r);
	return rc;
}

gb_err_t gb_plan_rationale_prefer(struct gb_plan *plan,
				  const struct gb_candidates *c, gb_error_t *err)
{
	struct gb_buf b = GB_BUF_INIT;
	gb_err_t rc;

	if (!plan || !c || !c->prefer)
		return GB_E_OK;
	gb_buf_printf(&b, "%s%s%s", plan->rationale ? plan->rationale : "",
		      plan->rationale && *plan->rationale ? "; " : "", c->prefer);
	rc = gb_buf_failed(&b) ? gb_errorf(err, GB_E_NOMEM, "plan: out of memory") :
	     gb_plan_set_rationale(plan, gb_buf_str(&b), err);
	gb_buf_free(&b);
	return rc;
}
