/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prices_blocks.c - Capacity Block prices as EC2 offers them
 *
 * A Capacity Block is paid up front: DescribeCapacityBlockOfferings
 * answers, for an instance type, count and duration, the blocks EC2 would
 * sell now with their upfrontFee.  `gpuburstctl prices refresh
 * --capacity-blocks` asks it, in each region a nodeset with a
 * capacity-block rung may launch in, for one instance of each of its
 * types over --days days, and prices the (region, type) at the cheapest
 * offering's fee per instance-hour: upfrontFee / (instanceCount x
 * capacityBlockDurationHours).  A block gpuburst launches into was bought
 * by the site; what it paid is not in any EC2 answer about the block, so
 * the offering of today is the figure EC2 reports (a site that knows
 * better writes its own capacity-block line, which a refresh without
 * --capacity-blocks keeps).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "gb_ec2.h"
#include "gb_plan.h"
#include "gb_str.h"
#include "gb_util.h"

#define BLOCKS_TIMEOUT_MS 15000
#define FEE_MAX 1e9

static bool has_block_rung(const struct gb_conf_nodeset *ns)
{
	for (size_t k = 0; k < ns->n_capacity; k++)
		if (ns->capacity[k].kind == GB_CAPACITY_BLOCK)
			return true;
	return false;
}

bool ctl_region_wanted(char *const *only, size_t n_only, const char *region)
{
	if (!n_only)
		return true;
	for (size_t i = 0; i < n_only; i++)
		if (strcmp(only[i], region) == 0)
			return true;
	return false;
}

static struct ctl_block_price *find(struct ctl_block_prices *b, const char *region,
				    const char *type)
{
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->v[i].p.region, region) == 0 && strcmp(b->v[i].p.type, type) == 0)
			return &b->v[i];
	return NULL;
}

static const char *keep(struct ctl_block_prices *b, const char *s)
{
	if (gb_strv_add(&b->keep, s))
		return NULL;
	return b->keep.v[b->keep.n - 1];
}

/* The (region, type) pairs to ask about, each once, usd -1 until priced. */
static gb_err_t pairs(const struct gb_conf *conf, char **only, size_t n_only,
		      struct ctl_block_prices *b, gb_error_t *err)
{
	for (size_t i = 0; i < conf->n_nodesets; i++) {
		const struct gb_conf_nodeset *ns = &conf->nodesets[i];
		struct gb_candidates c;
		gb_error_t why = { 0 };

		if (!has_block_rung(ns))
			continue;
		if (gb_plan_candidates(conf, ns->home_region, ns->mode, &c, &why)) {
			gb_plan_candidates_clear(&c);
			return gb_errorf(err, GB_E_CONFIG, "nodeset %s: %s", ns->name, why.text);
		}
		for (size_t r = 0; r < c.n; r++) {
			const char *region = c.v[r].region->name;

			if (!ctl_region_wanted(only, n_only, region))
				continue;
			for (size_t t = 0; t < ns->n_instance_types; t++) {
				struct ctl_block_price *v, *x;

				if (find(b, region, ns->instance_types[t]))
					continue;
				if (!(v = realloc(b->v, (b->n + 1) * sizeof(*v)))) {
					gb_plan_candidates_clear(&c);
					return gb_errorf(err, GB_E_NOMEM, "out of memory");
				}
				b->v = v;
				x = memset(&v[b->n++], 0, sizeof(*x));
				x->p.region = keep(b, region);
				x->p.type = keep(b, ns->instance_types[t]);
				x->p.kind = GB_CAPACITY_BLOCK;
				x->p.usd_per_hour = -1;
				if (!x->p.region || !x->p.type) {
					gb_plan_candidates_clear(&c);
					return gb_errorf(err, GB_E_NOMEM, "out of memory");
				}
			}
		}
		gb_plan_candidates_clear(&c);
	}
	if (!b->n)
		return gb_errorf(err, GB_E_NOTFOUND, "no nodeset has a capacity-block rung%s: "
				 "there is no Capacity Block to price",
				 n_only ? " in the --region given" : "");
	return GB_E_OK;
}

/* One offering's price per instance-hour; RET GB_E_CLOUD naming what EC2 sent wrong. */
static gb_err_t offering_price(const char *region, const struct gb_ec2_capacity_block_offering *o,
			       double *usd, gb_error_t *err)
{
	const char *id = o->id ? o->id : "?";
	double fee;

	if (!o->currency || strcmp(o->currency, "USD") != 0)
		return gb_errorf(err, GB_E_CLOUD, "%s: offering %s: currencyCode '%.16s', not USD",
				 region, id, o->currency ? o->currency : "");
	if (!o->upfront_fee || gb_parse_double(o->upfront_fee, &fee) || !isfinite(fee) ||
	    fee <= 0 || fee > FEE_MAX)
		return gb_errorf(err, GB_E_CLOUD, "%s: offering %s: upfrontFee '%.32s' is not a price",
				 region, id, o->upfront_fee ? o->upfront_fee : "");
	if (o->count < 1 || o->duration_hours < 1)
		return gb_errorf(err, GB_E_CLOUD, "%s: offering %s: instanceCount %d and capacityBlockDurationHours %d do not make an instance-hour",
				 region, id, o->count, o->duration_hours);
	*usd = fee / ((double)o->count * (double)o->duration_hours);
	return GB_E_OK;
}

/* The cheapest offering of [x]'s (region, type) into [x]. */
static gb_err_t price_one(const struct gb_conf *conf, gb_creds_t *creds, int days,
			  struct ctl_block_prices *b, struct ctl_block_price *x, gb_error_t *err)
{
	const struct gb_conf_region *r = gb_conf_region(conf, x->p.region);
	struct gb_ec2_capacity_block_offerings_params p = {
		.instance_type = x->p.type, .instance_count = 1, .duration_hours = days * 24,
	};
	struct gb_ec2_capacity_block_offering_list *l = NULL;
	struct gb_ec2_error ae = { 0 };
	gb_error_t why = { 0 };
	gb_ec2_t *ec2 = NULL;
	gb_err_t rc;

	if ((rc = ctl_ec2_client(conf, r, creds, BLOCKS_TIMEOUT_MS, &ec2, &why)) ||
	    (b->calls++, rc = gb_ec2_describe_capacity_block_offerings(ec2, &p, &l, &ae, &why))) {
		gb_ec2_destroy(ec2);
		return gb_errorf(err, rc, "DescribeCapacityBlockOfferings of %s in %s: %s",
				 x->p.type, x->p.region, why.text);
	}
	x->offerings = l->n;
	for (size_t k = 0; !rc && k < l->n; k++) {
		const struct gb_ec2_capacity_block_offering *o = &l->v[k];
		double usd = -1;

		if ((rc = offering_price(x->p.region, o, &usd, err)))
			break;
		if (x->p.usd_per_hour >= 0 && usd >= x->p.usd_per_hour)
			continue;
		x->p.usd_per_hour = usd;
		x->hours = o->duration_hours;
		if (!(x->offering = keep(b, o->id ? o->id : "?")))
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	gb_ec2_capacity_block_offering_list_free(l);
	gb_ec2_destroy(ec2);
	return rc;
}

gb_err_t ctl_block_prices_fetch(const struct gb_conf *conf, char **only, size_t n_only,
				int days, struct ctl_block_prices *b, gb_error_t *err)
{
	gb_creds_t *creds = NULL;
	gb_error_t why = { 0 };
	gb_err_t rc;

	if ((rc = pairs(conf, only, n_only, b, err)))
		return rc;
	if ((rc = gb_plan_creds_create(conf, &creds, &why)))
		return gb_errorf(err, rc, "credentials: %s", why.text);
	for (size_t i = 0; !rc && i < b->n; i++)
		rc = price_one(conf, creds, days, b, &b->v[i], err);
	gb_creds_destroy(creds);
	return rc;
}

void ctl_block_prices_free(struct ctl_block_prices *b)
{
	free(b->v);
	gb_strv_free(&b->keep);
	memset(b, 0, sizeof(*b));
}
