/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * candidates.c - the regions a request may launch in, in order of preference
 *
 * The ancestor's get_region_order (research s1.9): the home region's
 * fallback group bounds the set, home comes first when it can itself
 * launch, the others follow by great-circle distance from home.
 */
#include "config.h"

#include <math.h>
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
