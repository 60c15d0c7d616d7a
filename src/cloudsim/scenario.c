/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scenario.c - parse and validate a cloudsim scenario (libyaml document API)
 *
 * The whole file is loaded as a libyaml document so that every node keeps
 * its position for messages; parsing walks the tree with one table of
 * accepted keys per mapping, so an unknown key is always an error.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "gb_err.h"
#include "gb_str.h"
#include "gb_util.h"
#include "scenario.h"

#define SCENARIO_MAX_BYTES (4 * 1024 * 1024)
#define Z99 2.3263478740408408	/* standard normal quantile of 0.99 */

/* The AWS documentation's example key pair (SigV4 test suite). */
#define DEFAULT_ACCESS_KEY "AKIDEXAMPLE"
#define DEFAULT_SECRET_KEY "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

const double gb_latency_qprob[GB_LATENCY_NQ] = { 0.0, 0.5, 0.9, 0.99, 1.0 };

static const char *action_names[GB_SIM_ACTION_COUNT] = {
	[GB_SIM_ACTION_RUN_INSTANCES] = "RunInstances",
	[GB_SIM_ACTION_DESCRIBE_INSTANCES] = "DescribeInstances",
	[GB_SIM_ACTION_TERMINATE_INSTANCES] = "TerminateInstances",
	[GB_SIM_ACTION_DESCRIBE_OFFERINGS] = "DescribeInstanceTypeOfferings",
	[GB_SIM_ACTION_CREATE_TAGS] = "CreateTags",
	[GB_SIM_ACTION_DESCRIBE_AZS] = "DescribeAvailabilityZones",
	[GB_SIM_ACTION_DESCRIBE_INSTANCE_TYPES] = "DescribeInstanceTypes",
	[GB_SIM_ACTION_CREATE_PLACEMENT_GROUP] = "CreatePlacementGroup",
	[GB_SIM_ACTION_DESCRIBE_PLACEMENT_GROUPS] = "DescribePlacementGroups",
	[GB_SIM_ACTION_DELETE_PLACEMENT_GROUP] = "DeletePlacementGroup",
	[GB_SIM_ACTION_DESCRIBE_SECURITY_GROUPS] = "DescribeSecurityGroups",
	[GB_SIM_ACTION_DESCRIBE_CAPACITY_RESERVATIONS] = "DescribeCapacityReservations",
	[GB_SIM_ACTION_DESCRIBE_CAPACITY_BLOCK_OFFERINGS] = "DescribeCapacityBlockOfferings",
	[GB_SIM_ACTION_DESCRIBE_SPOT_PRICE_HISTORY] = "DescribeSpotPriceHistory",
};

/* Parser state: the document and where errors go. */
struct pctx {
	const char *name;
	yaml_document_t *doc;
	gb_error_t *err;
	struct gb_scenario *sc;
};

/* A mapping key and the function that parses its value into [obj]. */
struct keydef {
	const char *key;
	gb_err_t (*fn)(struct pctx *c, yaml_node_t *val, void *obj);
};

/*****************************************************************************
 *  Small helpers
 *****************************************************************************/

const char *gb_sim_action_name(enum gb_sim_action a)
{
	return (unsigned)a < GB_SIM_ACTION_COUNT ? action_names[a] : "Unknown";
}

enum gb_sim_action gb_sim_action_find(const char *name)
{
	for (int i = 0; i < GB_SIM_ACTION_COUNT; i++) {
		if (name && strcmp(name, action_names[i]) == 0)
			return (enum gb_sim_action)i;
	}
	return GB_SIM_ACTION_COUNT;
}

static gb_err_t perr(struct pctx *c, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static gb_err_t perr(struct pctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gb_errorf(c->err, GB_E_CONFIG, "%s:%lu:%lu: %s", c->name,
			 n ? (unsigned long)n->start_mark.line + 1 : 0UL,
			 n ? (unsigned long)n->start_mark.column + 1 : 0UL, msg);
}

static yaml_node_t *node(struct pctx *c, int idx)
{
	return yaml_document_get_node(c->doc, idx);
}

static const char *sval(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static gb_err_t want_scalar(struct pctx *c, yaml_node_t *n, const char *what)
{
	if (n->type != YAML_SCALAR_NODE)
		return perr(c, n, "%s must be a scalar", what);
	return GB_E_OK;
}

static gb_err_t get_str(struct pctx *c, yaml_node_t *n, const char *what,
			char **out)
{
	if (want_scalar(c, n, what))
		return GB_E_CONFIG;
	if (!sval(n)[0])
		return perr(c, n, "%s must not be empty", what);
	free(*out);
	*out = strdup(sval(n));
	if (!*out)
		return gb_errorf(c->err, GB_E_NOMEM, "out of memory");
	return GB_E_OK;
}

static gb_err_t get_long(struct pctx *c, yaml_node_t *n, const char *what,
			 long min, long max, long *out)
{
	if (want_scalar(c, n, what))
		return GB_E_CONFIG;
	if (gb_parse_long(sval(n), min, max, out) != GB_E_OK)
		return perr(c, n, "%s must be an integer in [%ld, %ld], not '%s'",
			    what, min, max, sval(n));
	return GB_E_OK;
}

static gb_err_t get_rate(struct pctx *c, yaml_node_t *n, const char *what,
			 double *out)
{
	double v;

	if (want_scalar(c, n, what))
		return GB_E_CONFIG;
	if (gb_parse_double(sval(n), &v) != GB_E_OK || v < 0.0 || v > 1.0)
		return perr(c, n, "%s must be a number in [0, 1], not '%s'",
			    what, sval(n));
	*out = v;
	return GB_E_OK;
}

/* "250ms", "2s", "1.5m", "1h" or a bare number of seconds. */
static gb_err_t get_duration(struct pctx *c, yaml_node_t *n, const char *what,
			     double *out)
{
	/* "ms" before "s" and "m": the first suffix that matches wins */
	static const struct { const char *unit; double mult; } units[] = {
		{ "ms", 0.001 }, { "s", 1 }, { "m", 60 }, { "h", 3600 },
	};
	char num[64];
	const char *s;
	size_t len;
	double mult = 1, v;

	if (want_scalar(c, n, what))
		return GB_E_CONFIG;
	s = sval(n);
	len = strlen(s);
	for (size_t i = 0; i < GB_ARRAY_LEN(units); i++) {
		size_t ul = strlen(units[i].unit);

		if (len > ul && strcmp(s + len - ul, units[i].unit) == 0) {
			mult = units[i].mult;
			len -= ul;
			break;
		}
	}
	if (len >= sizeof(num))
		len = sizeof(num) - 1;
	memcpy(num, s, len);
	num[len] = '\0';
	if (gb_parse_double(num, &v) != GB_E_OK || v < 0)
		return perr(c, n, "%s must be a duration (e.g. 250ms, 2s, 5m), not '%s'",
			    what, s);
	*out = v * mult;
	return GB_E_OK;
}

/* Call [fn] for each pair of mapping [map]; duplicate keys are errors. */
static gb_err_t each_pair(struct pctx *c, yaml_node_t *map, const char *what,
			  gb_err_t (*fn)(struct pctx *, yaml_node_t *,
					 yaml_node_t *, void *),
			  void *obj)
{
	yaml_node_pair_t *p, *q;

	if (map->type != YAML_MAPPING_NODE)
		return perr(c, map, "%s must be a mapping", what);
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(c, p->key);

		if (k->type != YAML_SCALAR_NODE)
			return perr(c, k, "keys of %s must be scalars", what);
		for (q = map->data.mapping.pairs.start; q < p; q++) {
			if (strcmp(sval(node(c, q->key)), sval(k)) == 0)
				return perr(c, k, "duplicate key '%s' in %s",
					    sval(k), what);
		}
		if (fn(c, k, node(c, p->value), obj))
			return c->err ? c->err->code : GB_E_CONFIG;
	}
	return GB_E_OK;
}

struct keyed {
	const struct keydef *keys;
	const char *what;
	void *obj;
};

static gb_err_t keyed_pair(struct pctx *c, yaml_node_t *k, yaml_node_t *v,
			   void *arg)
{
	struct keyed *kd = arg;

	for (const struct keydef *d = kd->keys; d->key; d++) {
		if (strcmp(d->key, sval(k)) == 0)
			return d->fn(c, v, kd->obj);
	}
	return perr(c, k, "unknown key '%s' in %s", sval(k), kd->what);
}

/* Parse mapping [map] whose keys must all be in [keys]. */
static gb_err_t parse_map(struct pctx *c, yaml_node_t *map, const char *what,
			  const struct keydef *keys, void *obj)
{
	struct keyed kd = { keys, what, obj };

	return each_pair(c, map, what, keyed_pair, &kd);
}

static gb_err_t strv_from_seq(struct pctx *c, yaml_node_t *n, const char *what,
			      struct gb_strv *out)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return perr(c, n, "%s must be a list", what);
	for (yaml_node_item_t *i = n->data.sequence.items.start;
	     i < n->data.sequence.items.top; i++) {
		yaml_node_t *e = node(c, *i);

		if (want_scalar(c, e, what))
			return GB_E_CONFIG;
		if (gb_strv_find(out, sval(e)) >= 0)
			return perr(c, e, "duplicate '%s' in %s", sval(e), what);
		if (gb_strv_add(out, sval(e)))
			return gb_errorf(c->err, GB_E_NOMEM, "out of memory");
	}
	return GB_E_OK;
}

/* Grow [*arr] of [*n] elements of [size] by one zeroed element. */
static void *grow(struct pctx *c, void **arr, size_t *n, size_t size)
{
	char *p = realloc(*arr, (*n + 1) * size);

	if (!p) {
		gb_errorf(c->err, GB_E_NOMEM, "out of memory");
		return NULL;
	}
	*arr = p;
	memset(p + *n * size, 0, size);
	return p + (*n)++ * size;
}

/*****************************************************************************
 *  Latency distributions
 *****************************************************************************/

enum lat_key { LK_VALUE, LK_MIN, LK_MAX, LK_MEDIAN, LK_SIGMA, LK_P50, LK_P90,
	       LK_P99, LK_COUNT };

static const char *lat_keys[LK_COUNT] = {
	"value", "min", "max", "median", "sigma", "p50", "p90", "p99",
};

/* Which keys each distribution accepts (bit per enum lat_key). */
static const struct {
	const char *name;
	enum gb_latency_kind kind;
	unsigned allowed;
} lat_dists[] = {
	{ "fixed", GB_LATENCY_FIXED, 1u << LK_VALUE },
	{ "uniform", GB_LATENCY_UNIFORM, (1u << LK_MIN) | (1u << LK_MAX) },
	{ "lognormal", GB_LATENCY_LOGNORMAL,
	  (1u << LK_MEDIAN) | (1u << LK_SIGMA) | (1u << LK_P99) },
	{ "percentiles", GB_LATENCY_PERCENTILES,
	  (1u << LK_MIN) | (1u << LK_MAX) | (1u << LK_P50) | (1u << LK_P90) |
	  (1u << LK_P99) },
};

struct lat_in {
	yaml_node_t *map;
	yaml_node_t *dist;
	yaml_node_t *n[LK_COUNT];	/* NULL: key absent */
	double v[LK_COUNT];
};

static gb_err_t lat_pair(struct pctx *c, yaml_node_t *k, yaml_node_t *v,
			 void *arg)
{
	struct lat_in *in = arg;

	if (strcmp(sval(k), "distribution") == 0)
		return want_scalar(c, v, "distribution") ? GB_E_CONFIG :
		       ((in->dist = v), GB_E_OK);
	for (int i = 0; i < LK_COUNT; i++) {
		if (strcmp(sval(k), lat_keys[i]) == 0) {
			in->n[i] = v;
			if (i == LK_SIGMA) {
				if (want_scalar(c, v, "sigma") ||
				    gb_parse_double(sval(v), &in->v[i]) ||
				    in->v[i] <= 0)
					return perr(c, v, "sigma must be a positive number");
				return GB_E_OK;
			}
			return get_duration(c, v, lat_keys[i], &in->v[i]);
		}
	}
	return perr(c, k, "unknown key '%s' in latency", sval(k));
}

static gb_err_t lat_require(struct pctx *c, struct lat_in *in, enum lat_key k,
			    const char *dist)
{
	if (!in->n[k])
		return perr(c, in->map, "latency distribution %s needs '%s'",
			    dist, lat_keys[k]);
	return GB_E_OK;
}

/* Values must not decrease along the quantile points. */
static gb_err_t lat_order(struct pctx *c, struct lat_in *in, struct gb_latency *l)
{
	for (int i = 1; i < GB_LATENCY_NQ; i++) {
		if (l->q[i] < l->q[i - 1])
			return perr(c, in->map,
				    "latency percentiles must not decrease (min <= p50 <= p90 <= p99 <= max)");
	}
	return GB_E_OK;
}

static gb_err_t lat_build(struct pctx *c, struct lat_in *in, unsigned d,
			  struct gb_latency *l)
{
	const char *dn = lat_dists[d].name;

	memset(l, 0, sizeof(*l));
	l->kind = lat_dists[d].kind;
	switch (l->kind) {
	case GB_LATENCY_FIXED:
		if (lat_require(c, in, LK_VALUE, dn))
			return GB_E_CONFIG;
		l->a = in->v[LK_VALUE];
		return GB_E_OK;
	case GB_LATENCY_UNIFORM:
		if (lat_require(c, in, LK_MIN, dn) || lat_require(c, in, LK_MAX, dn))
			return GB_E_CONFIG;
		l->a = in->v[LK_MIN];
		l->b = in->v[LK_MAX];
		if (l->b < l->a)
			return perr(c, in->n[LK_MAX], "max must not be below min");
		return GB_E_OK;
	case GB_LATENCY_LOGNORMAL:
		if (lat_require(c, in, LK_MEDIAN, dn))
			return GB_E_CONFIG;
		if (!in->n[LK_SIGMA] == !in->n[LK_P99])
			return perr(c, in->map, "latency distribution lognormal needs exactly one of 'sigma' and 'p99'");
		l->a = in->v[LK_MEDIAN];
		if (l->a <= 0)
			return perr(c, in->n[LK_MEDIAN], "median must be positive");
		if (in->n[LK_P99] && in->v[LK_P99] <= l->a)
			return perr(c, in->n[LK_P99], "p99 must be above the median");
		l->b = in->n[LK_SIGMA] ? in->v[LK_SIGMA] :
		       log(in->v[LK_P99] / l->a) / Z99;
		return GB_E_OK;
	case GB_LATENCY_PERCENTILES:
		if (lat_require(c, in, LK_P50, dn) || lat_require(c, in, LK_P90, dn) ||
		    lat_require(c, in, LK_P99, dn))
			return GB_E_CONFIG;
		l->q[0] = in->n[LK_MIN] ? in->v[LK_MIN] : 0.0;
		l->q[1] = in->v[LK_P50];
		l->q[2] = in->v[LK_P90];
		l->q[3] = in->v[LK_P99];
		/* default max: as far beyond p99 as p99 is beyond p90 */
		l->q[4] = in->n[LK_MAX] ? in->v[LK_MAX] : 2 * l->q[3] - l->q[2];
		return lat_order(c, in, l);
	}
	return GB_E_OK;
}

/* latency: DURATION | {distribution: NAME, ...} */
static gb_err_t parse_latency(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_fault_profile *fp = obj;
	struct lat_in in = { .map = v };
	unsigned d;

	if (v->type == YAML_SCALAR_NODE) {
		memset(&fp->latency, 0, sizeof(fp->latency));
		fp->latency.kind = GB_LATENCY_FIXED;
		return get_duration(c, v, "latency", &fp->latency.a);
	}
	if (each_pair(c, v, "latency", lat_pair, &in))
		return GB_E_CONFIG;
	if (!in.dist)
		return perr(c, v, "latency needs 'distribution' (fixed, uniform, lognormal, percentiles)");
	for (d = 0; d < GB_ARRAY_LEN(lat_dists); d++) {
		if (strcmp(sval(in.dist), lat_dists[d].name) == 0)
			break;
	}
	if (d == GB_ARRAY_LEN(lat_dists))
		return perr(c, in.dist, "unknown latency distribution '%s' (fixed, uniform, lognormal, percentiles)",
			    sval(in.dist));
	for (int k = 0; k < LK_COUNT; k++) {
		if (in.n[k] && !(lat_dists[d].allowed & (1u << k)))
			return perr(c, in.n[k], "key '%s' does not apply to latency distribution %s",
				    lat_keys[k], lat_dists[d].name);
	}
	return lat_build(c, &in, d, &fp->latency);
}

/*****************************************************************************
 *  Fault profiles
 *****************************************************************************/

static gb_err_t burst_at(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_duration(c, v, "at", &((struct gb_sc_burst *)obj)->at);
}

static gb_err_t burst_duration(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_duration(c, v, "duration", &((struct gb_sc_burst *)obj)->duration);
}

static gb_err_t burst_rate(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_rate(c, v, "rate", &((struct gb_sc_burst *)obj)->rate);
}

static const struct keydef burst_keys[] = {
	{ "at", burst_at },
	{ "duration", burst_duration },
	{ "rate", burst_rate },
	{ NULL, NULL },
};

/* bursts: [{at: 60s, duration: 10s, rate: 0.9}, ...] (replaces inherited ones) */
static gb_err_t parse_bursts(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_fault_profile *fp = obj;

	if (v->type != YAML_SEQUENCE_NODE)
		return perr(c, v, "bursts must be a list");
	GB_FREE_NULL(fp->bursts);
	fp->nbursts = 0;
	for (yaml_node_item_t *i = v->data.sequence.items.start;
	     i < v->data.sequence.items.top; i++) {
		yaml_node_t *e = node(c, *i);
		struct gb_sc_burst *b = grow(c, (void **)&fp->bursts,
					     &fp->nbursts, sizeof(*b));

		if (!b)
			return GB_E_NOMEM;
		b->rate = 1.0;
		if (parse_map(c, e, "burst", burst_keys, b))
			return GB_E_CONFIG;
		if (b->duration <= 0)
			return perr(c, e, "burst needs a positive 'duration'");
	}
	return GB_E_OK;
}

static gb_err_t bucket_size(struct pctx *c, yaml_node_t *v, void *obj)
{
	long n;

	if (get_long(c, v, "size", 1, 1000000, &n))
		return GB_E_CONFIG;
	((struct gb_fault_profile *)obj)->bucket_size = (double)n;
	return GB_E_OK;
}

static gb_err_t bucket_refill(struct pctx *c, yaml_node_t *v, void *obj)
{
	double r;

	if (want_scalar(c, v, "refill") || gb_parse_double(sval(v), &r) || r < 0)
		return perr(c, v, "refill must be a number of tokens per second >= 0");
	((struct gb_fault_profile *)obj)->bucket_refill = r;
	return GB_E_OK;
}

static const struct keydef bucket_keys[] = {
	{ "size", bucket_size },
	{ "refill", bucket_refill },
	{ NULL, NULL },
};

/* EC2 throttles with a token bucket per account and action class. */
static gb_err_t parse_bucket(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_fault_profile *fp = obj;

	fp->bucket_size = 0;
	fp->bucket_refill = 0;
	if (parse_map(c, v, "bucket", bucket_keys, fp))
		return GB_E_CONFIG;
	if (fp->bucket_size <= 0)
		return perr(c, v, "bucket needs 'size'");
	return GB_E_OK;
}

static gb_err_t throttle_rate(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_rate(c, v, "rate", &((struct gb_fault_profile *)obj)->throttle_rate);
}

static const struct keydef throttle_keys[] = {
	{ "rate", throttle_rate },
	{ "bursts", parse_bursts },
	{ "bucket", parse_bucket },
	{ NULL, NULL },
};

/* throttle: RATE | {rate, bursts, bucket} */
static gb_err_t parse_throttle(struct pctx *c, yaml_node_t *v, void *obj)
{
	if (v->type == YAML_SCALAR_NODE)
		return get_rate(c, v, "throttle",
				&((struct gb_fault_profile *)obj)->throttle_rate);
	return parse_map(c, v, "throttle", throttle_keys, obj);
}

static gb_err_t error_rate(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_rate(c, v, "rate", &((struct gb_fault_profile *)obj)->error_rate);
}

static gb_err_t error_code(struct pctx *c, yaml_node_t *v, void *obj)
{
	static const char *codes[] = { "InternalError", "Unavailable" };

	if (want_scalar(c, v, "code"))
		return GB_E_CONFIG;
	for (size_t i = 0; i < GB_ARRAY_LEN(codes); i++) {
		if (strcmp(sval(v), codes[i]) == 0) {
			((struct gb_fault_profile *)obj)->error_code = codes[i];
			return GB_E_OK;
		}
	}
	return perr(c, v, "server error code must be InternalError (500) or Unavailable (503), not '%s'",
		    sval(v));
}

static const struct keydef server_error_keys[] = {
	{ "rate", error_rate },
	{ "code", error_code },
	{ NULL, NULL },
};

/* server_errors: RATE | {rate, code} */
static gb_err_t parse_server_errors(struct pctx *c, yaml_node_t *v, void *obj)
{
	if (v->type == YAML_SCALAR_NODE)
		return get_rate(c, v, "server_errors",
				&((struct gb_fault_profile *)obj)->error_rate);
	return parse_map(c, v, "server_errors", server_error_keys, obj);
}

static gb_err_t drop_rate(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_rate(c, v, "drop_rate", &((struct gb_fault_profile *)obj)->drop_rate);
}

static gb_err_t lost_response_rate(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_rate(c, v, "lost_response_rate",
			&((struct gb_fault_profile *)obj)->lost_response_rate);
}

static gb_err_t slow_rate(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_rate(c, v, "rate", &((struct gb_fault_profile *)obj)->slow_body_rate);
}

static gb_err_t slow_bps(struct pctx *c, yaml_node_t *v, void *obj)
{
	long n;

	if (get_long(c, v, "bytes_per_second", 1, 1L << 30, &n))
		return GB_E_CONFIG;
	((struct gb_fault_profile *)obj)->slow_body_bps = (double)n;
	return GB_E_OK;
}

static const struct keydef slow_keys[] = {
	{ "rate", slow_rate },
	{ "bytes_per_second", slow_bps },
	{ NULL, NULL },
};

static gb_err_t parse_slow_body(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_fault_profile *fp = obj;

	if (parse_map(c, v, "slow_body", slow_keys, obj))
		return GB_E_CONFIG;
	if (fp->slow_body_rate > 0 && fp->slow_body_bps <= 0)
		return perr(c, v, "slow_body needs 'bytes_per_second'");
	return GB_E_OK;
}

static const struct keydef profile_keys[] = {
	{ "latency", parse_latency },
	{ "throttle", parse_throttle },
	{ "server_errors", parse_server_errors },
	{ "drop_rate", drop_rate },
	{ "lost_response_rate", lost_response_rate },
	{ "slow_body", parse_slow_body },
	{ NULL, NULL },
};

/* Deep copy of [src] into [dst] (bursts are owned per profile). */
static gb_err_t profile_copy(struct pctx *c, struct gb_fault_profile *dst,
			     const struct gb_fault_profile *src)
{
	free(dst->bursts);
	*dst = *src;
	dst->bursts = NULL;
	if (src->nbursts) {
		dst->bursts = calloc(src->nbursts, sizeof(*dst->bursts));
		if (!dst->bursts)
			return gb_errorf(c->err, GB_E_NOMEM, "out of memory");
		memcpy(dst->bursts, src->bursts, src->nbursts * sizeof(*dst->bursts));
	}
	return GB_E_OK;
}

static gb_err_t fault_action_pair(struct pctx *c, yaml_node_t *k,
				  yaml_node_t *v, void *arg)
{
	enum gb_sim_action a = gb_sim_action_find(sval(k));

	(void)arg;
	if (strcmp(sval(k), "default") == 0)
		return GB_E_OK;		/* applied first, see parse_faults */
	if (a == GB_SIM_ACTION_COUNT)
		return perr(c, k, "unknown key '%s' in faults (default or an action: RunInstances, DescribeInstances, TerminateInstances, DescribeInstanceTypeOfferings, CreateTags, DescribeAvailabilityZones, DescribeInstanceTypes, CreatePlacementGroup, DescribePlacementGroups, DeletePlacementGroup, DescribeSecurityGroups)",
			    sval(k));
	return parse_map(c, v, sval(k), profile_keys, &c->sc->faults[a]);
}

/* faults: {default: PROFILE, ACTION: PROFILE...}; actions inherit default. */
static gb_err_t parse_faults(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_fault_profile def = c->sc->faults[0];
	gb_err_t rc = GB_E_OK;

	(void)obj;
	def.bursts = NULL;
	def.nbursts = 0;
	if (v->type != YAML_MAPPING_NODE)
		return perr(c, v, "faults must be a mapping");
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start;
	     p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(c, p->key);

		if (k->type == YAML_SCALAR_NODE && strcmp(sval(k), "default") == 0 &&
		    (rc = parse_map(c, node(c, p->value), "default", profile_keys, &def)))
			goto out;
	}
	for (int a = 0; a < GB_SIM_ACTION_COUNT; a++) {
		if ((rc = profile_copy(c, &c->sc->faults[a], &def)))
			goto out;
	}
	rc = each_pair(c, v, "faults", fault_action_pair, NULL);
out:
	free(def.bursts);
	return rc;
}

/*****************************************************************************
 *  Regions, availability zones, subnets
 *****************************************************************************/

/* Parse "a.b.c.d/p": VPC subnets are /16 to /28 with no host bits set. */
static gb_err_t parse_cidr(struct pctx *c, yaml_node_t *v, struct gb_sc_subnet *sn)
{
	char buf[32];
	const char *slash;
	struct in_addr a;
	long prefix;
	uint32_t mask;

	if (want_scalar(c, v, "cidr"))
		return GB_E_CONFIG;
	slash = strchr(sval(v), '/');
	if (!slash || (size_t)(slash - sval(v)) >= sizeof(buf))
		return perr(c, v, "cidr must look like 127.1.0.0/24, not '%s'", sval(v));
	memcpy(buf, sval(v), (size_t)(slash - sval(v)));
	buf[slash - sval(v)] = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1 ||
	    gb_parse_long(slash + 1, 0, 32, &prefix) != GB_E_OK)
		return perr(c, v, "cidr must look like 127.1.0.0/24, not '%s'", sval(v));
	if (prefix < 16 || prefix > 28)
		return perr(c, v, "cidr %s: the prefix length must be between /16 and /28",
			    sval(v));
	mask = 0xffffffffu << (32 - prefix);
	sn->net = ntohl(a.s_addr);
	sn->prefix = (unsigned)prefix;
	if (sn->net & ~mask)
		return perr(c, v, "cidr %s has host bits set", sval(v));
	free(sn->cidr);
	sn->cidr = strdup(sval(v));
	return sn->cidr ? GB_E_OK : gb_errorf(c->err, GB_E_NOMEM, "out of memory");
}

static gb_err_t subnet_cidr(struct pctx *c, yaml_node_t *v, void *obj)
{
	return parse_cidr(c, v, obj);
}

static gb_err_t subnet_vpc(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_str(c, v, "vpc_id", &((struct gb_sc_subnet *)obj)->vpc_id);
}

static const struct keydef subnet_keys[] = {
	{ "cidr", subnet_cidr },
	{ "vpc_id", subnet_vpc },
	{ NULL, NULL },
};

static bool cidr_overlap(const struct gb_sc_subnet *a, const struct gb_sc_subnet *b)
{
	unsigned p = a->prefix < b->prefix ? a->prefix : b->prefix;
	uint32_t mask = 0xffffffffu << (32 - p);

	return (a->net & mask) == (b->net & mask);
}

/* Subnet ids and CIDRs are unique across the whole scenario. */
static gb_err_t subnet_unique(struct pctx *c, yaml_node_t *k,
			      const struct gb_sc_subnet *sn)
{
	for (size_t r = 0; r < c->sc->nregions; r++) {
		const struct gb_sc_region *rg = &c->sc->regions[r];

		for (size_t z = 0; z < rg->nazs; z++) {
			const struct gb_sc_az *az = &rg->azs[z];

			for (size_t s = 0; s < az->nsubnets; s++) {
				const struct gb_sc_subnet *o = &az->subnets[s];

				if (o == sn)
					continue;
				if (strcmp(o->id, sn->id) == 0)
					return perr(c, k, "duplicate subnet id '%s'", sn->id);
				if (o->cidr && cidr_overlap(o, sn))
					return perr(c, k, "cidr %s of %s overlaps %s of %s",
						    sn->cidr, sn->id, o->cidr, o->id);
			}
		}
	}
	return GB_E_OK;
}

static gb_err_t subnet_pair(struct pctx *c, yaml_node_t *k, yaml_node_t *v,
			    void *arg)
{
	struct gb_sc_az *az = arg;
	struct gb_sc_subnet *sn;

	if (!gb_str_has_prefix(sval(k), "subnet-") || !sval(k)[7])
		return perr(c, k, "subnet id '%s' must start with 'subnet-'", sval(k));
	sn = grow(c, (void **)&az->subnets, &az->nsubnets, sizeof(*sn));
	if (!sn || get_str(c, k, "subnet id", &sn->id))
		return GB_E_CONFIG;
	if (v->type == YAML_SCALAR_NODE) {
		if (parse_cidr(c, v, sn))
			return GB_E_CONFIG;
	} else if (parse_map(c, v, sn->id, subnet_keys, sn)) {
		return GB_E_CONFIG;
	}
	if (!sn->cidr)
		return perr(c, v, "subnet %s needs 'cidr'", sn->id);
	return subnet_unique(c, k, sn);
}

/* What an AZ mapping holds; offerings, capacity, spot are applied at the end. */
struct az_in {
	struct gb_sc_az *az;
	yaml_node_t *offerings;
	yaml_node_t *capacity;
	yaml_node_t *spot;
};

static gb_err_t az_subnets(struct pctx *c, yaml_node_t *v, void *obj)
{
	return each_pair(c, v, "subnets", subnet_pair, ((struct az_in *)obj)->az);
}

static gb_err_t az_zone_id(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_str(c, v, "zone_id", &((struct az_in *)obj)->az->zone_id);
}

static gb_err_t az_offerings_node(struct pctx *c, yaml_node_t *v, void *obj)
{
	(void)c;
	((struct az_in *)obj)->offerings = v;
	return GB_E_OK;
}

static gb_err_t az_capacity_node(struct pctx *c, yaml_node_t *v, void *obj)
{
	(void)c;
	((struct az_in *)obj)->capacity = v;
	return GB_E_OK;
}

static gb_err_t az_spot_node(struct pctx *c, yaml_node_t *v, void *obj)
{
	(void)c;
	((struct az_in *)obj)->spot = v;
	return GB_E_OK;
}

static const struct keydef az_keys[] = {
	{ "zone_id", az_zone_id },
	{ "subnets", az_subnets },
	{ "offerings", az_offerings_node },
	{ "capacity", az_capacity_node },
	{ "spot", az_spot_node },
	{ NULL, NULL },
};

static const struct gb_itype *want_itype(struct pctx *c, yaml_node_t *n)
{
	const struct gb_itype *t;

	if (want_scalar(c, n, "instance type"))
		return NULL;
	t = gb_itype_find(sval(n));
	if (!t)
		perr(c, n, "unknown instance type '%s' (the simulator knows g4dn, g5, g5g, g6, g6e, p4d.24xlarge, p5.48xlarge)",
		     sval(n));
	return t;
}

static struct gb_sc_pool *az_pool(struct gb_sc_az *az, const struct gb_itype *t)
{
	for (size_t i = 0; i < az->npools; i++) {
		if (az->pools[i].type == t)
			return &az->pools[i];
	}
	return NULL;
}

/* offerings: [TYPE...] */
static gb_err_t az_offerings(struct pctx *c, yaml_node_t *v, struct gb_sc_az *az)
{
	if (v->type != YAML_SEQUENCE_NODE)
		return perr(c, v, "offerings must be a list of instance types");
	for (yaml_node_item_t *i = v->data.sequence.items.start;
	     i < v->data.sequence.items.top; i++) {
		const struct gb_itype *t = want_itype(c, node(c, *i));
		struct gb_sc_pool *p;

		if (!t)
			return GB_E_CONFIG;
		if (az_pool(az, t))
			return perr(c, node(c, *i), "duplicate offering '%s'", t->name);
		p = grow(c, (void **)&az->pools, &az->npools, sizeof(*p));
		if (!p)
			return GB_E_NOMEM;
		p->type = t;
	}
	return GB_E_OK;
}

static gb_err_t capacity_pair(struct pctx *c, yaml_node_t *k, yaml_node_t *v,
			      void *arg)
{
	struct az_in *in = arg;
	const struct gb_itype *t = want_itype(c, k);
	struct gb_sc_pool *p;

	if (!t)
		return GB_E_CONFIG;
	p = az_pool(in->az, t);
	if (!p && in->offerings)
		return perr(c, k, "capacity for %s, which %s does not offer (add it to offerings)",
			    t->name, in->az->name);
	if (!p && !(p = grow(c, (void **)&in->az->pools, &in->az->npools, sizeof(*p))))
		return GB_E_NOMEM;
	p->type = t;
	return get_long(c, v, "capacity", 0, 1000000000L, &p->capacity);
}

static gb_err_t spot_capacity(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_long(c, v, "capacity", 0, 1000000000L,
			&((struct gb_sc_pool *)obj)->spot_capacity);
}

static gb_err_t spot_price(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_sc_pool *p = obj;

	if (want_scalar(c, v, "price") || gb_parse_double(sval(v), &p->spot_price) ||
	    p->spot_price <= 0 || p->spot_price > 100000)
		return perr(c, v, "price must be a number of USD per hour in (0, 100000], not '%s'",
			    v->type == YAML_SCALAR_NODE ? sval(v) : "");
	return GB_E_OK;
}

static const struct keydef spot_keys[] = {
	{ "capacity", spot_capacity },
	{ "price", spot_price },
	{ NULL, NULL },
};

/* spot: {TYPE: {capacity: N, price: USD}}, for types the AZ offers. */
static gb_err_t spot_pair(struct pctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
	struct az_in *in = arg;
	const struct gb_itype *t = want_itype(c, k);
	struct gb_sc_pool *p;
	char what[160];

	if (!t)
		return GB_E_CONFIG;
	if (!(p = az_pool(in->az, t)))
		return perr(c, k, "spot for %s, which %s does not offer (add it to offerings or capacity)",
			    t->name, in->az->name);
	snprintf(what, sizeof(what), "spot %s", t->name);
	p->spot_price = 0;
	p->spot_capacity = -1;
	if (parse_map(c, v, what, spot_keys, p))
		return GB_E_CONFIG;
	if (p->spot_price <= 0 || p->spot_capacity < 0)
		return perr(c, v, "spot %s needs 'capacity' and 'price'", t->name);
	p->spot = true;
	return GB_E_OK;
}

/* An AZ: offerings (default: the types given a capacity), capacity, spot, subnets. */
static gb_err_t parse_az_body(struct pctx *c, yaml_node_t *v, struct gb_sc_az *az)
{
	struct az_in in = { az, NULL, NULL, NULL };
	char what[160];

	snprintf(what, sizeof(what), "availability zone %s", az->name);
	if (parse_map(c, v, what, az_keys, &in))
		return GB_E_CONFIG;
	if (in.offerings && az_offerings(c, in.offerings, az))
		return GB_E_CONFIG;
	if (in.capacity && each_pair(c, in.capacity, "capacity", capacity_pair, &in))
		return GB_E_CONFIG;
	if (in.spot && each_pair(c, in.spot, "spot", spot_pair, &in))
		return GB_E_CONFIG;
	if (az->nsubnets == 0)
		return perr(c, v, "availability zone %s needs at least one subnet", az->name);
	return GB_E_OK;
}

/* EC2 zone ids abbreviate the region: ap-northeast-1 -> apne1-az<N>. */
static void make_zone_id(const char *region, size_t index, char *out, size_t n)
{
	static const struct { const char *word, *abbr; } dirs[] = {
		{ "northeast", "ne" }, { "southeast", "se" }, { "northwest", "nw" },
		{ "southwest", "sw" }, { "north", "n" }, { "south", "s" },
		{ "east", "e" }, { "west", "w" }, { "central", "c" },
	};
	struct gb_buf b = GB_BUF_INIT;
	const char *w = region;

	for (int part = 0; *w; part++) {
		size_t len = strcspn(w, "-");
		const char *abbr = NULL;

		for (size_t i = 0; part > 0 && i < GB_ARRAY_LEN(dirs) && !abbr; i++) {
			if (strlen(dirs[i].word) == len && !strncmp(w, dirs[i].word, len))
				abbr = dirs[i].abbr;
		}
		if (abbr)
			gb_buf_puts(&b, abbr);
		else
			gb_buf_append(&b, w, len);
		w += len + (w[len] == '-');
	}
	snprintf(out, n, "%s-az%zu", gb_buf_str(&b), index + 1);
	gb_buf_free(&b);
}

static gb_err_t az_pair(struct pctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
	struct gb_sc_region *rg = arg;
	struct gb_sc_az *az;
	char zid[80];

	if (!gb_str_has_prefix(sval(k), rg->name) || !sval(k)[strlen(rg->name)])
		return perr(c, k, "availability zone '%s' must be named after its region (e.g. %sa)",
			    sval(k), rg->name);
	if (gb_scenario_az(c->sc, sval(k), NULL))
		return perr(c, k, "duplicate availability zone '%s'", sval(k));
	az = grow(c, (void **)&rg->azs, &rg->nazs, sizeof(*az));
	if (!az || get_str(c, k, "availability zone", &az->name))
		return GB_E_CONFIG;
	if (parse_az_body(c, v, az))
		return GB_E_CONFIG;
	if (!az->zone_id) {
		make_zone_id(rg->name, rg->nazs - 1, zid, sizeof(zid));
		if (!(az->zone_id = strdup(zid)))
			return gb_errorf(c->err, GB_E_NOMEM, "out of memory");
	}
	return GB_E_OK;
}

static gb_err_t region_azs(struct pctx *c, yaml_node_t *v, void *obj)
{
	return each_pair(c, v, "azs", az_pair, obj);
}

static gb_err_t quota_g(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_long(c, v, "g_vt_vcpus", 0, 100000000L,
			&((struct gb_sc_region *)obj)->vcpu_quota[GB_ITYPE_BUCKET_G]);
}

static gb_err_t quota_p(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_long(c, v, "p_vcpus", 0, 100000000L,
			&((struct gb_sc_region *)obj)->vcpu_quota[GB_ITYPE_BUCKET_P]);
}

static gb_err_t quota_instances(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_long(c, v, "instances", 0, 100000000L,
			&((struct gb_sc_region *)obj)->instance_quota);
}

/* EC2's "All G and VT Spot Instance Requests" and "All P Spot ..." (vCPUs) */
static gb_err_t quota_spot_g(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_long(c, v, "spot_g_vt_vcpus", 0, 100000000L,
			&((struct gb_sc_region *)obj)->spot_vcpu_quota[GB_ITYPE_BUCKET_G]);
}

static gb_err_t quota_spot_p(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_long(c, v, "spot_p_vcpus", 0, 100000000L,
			&((struct gb_sc_region *)obj)->spot_vcpu_quota[GB_ITYPE_BUCKET_P]);
}

static const struct keydef quota_keys[] = {
	{ "g_vt_vcpus", quota_g },
	{ "p_vcpus", quota_p },
	{ "instances", quota_instances },
	{ "spot_g_vt_vcpus", quota_spot_g },
	{ "spot_p_vcpus", quota_spot_p },
	{ NULL, NULL },
};

static gb_err_t region_quotas(struct pctx *c, yaml_node_t *v, void *obj)
{
	return parse_map(c, v, "quotas", quota_keys, obj);
}

static gb_err_t region_images(struct pctx *c, yaml_node_t *v, void *obj)
{
	return strv_from_seq(c, v, "images", &((struct gb_sc_region *)obj)->images);
}

static gb_err_t region_key_pairs(struct pctx *c, yaml_node_t *v, void *obj)
{
	return strv_from_seq(c, v, "key_pairs", &((struct gb_sc_region *)obj)->key_pairs);
}

/* rules: self (default: all traffic from and to the group) | none | egress */
static gb_err_t sg_rules(struct pctx *c, yaml_node_t *v, void *obj)
{
	static const char *names[] = { "self", "none", "egress" };

	if (want_scalar(c, v, "rules"))
		return GB_E_CONFIG;
	for (size_t i = 0; i < GB_ARRAY_LEN(names); i++) {
		if (strcmp(sval(v), names[i]) == 0) {
			*(enum gb_sc_sg_rules *)obj = (enum gb_sc_sg_rules)i;
			return GB_E_OK;
		}
	}
	return perr(c, v, "rules must be self, none or egress, not '%s'", sval(v));
}

/* One security group: its id, or {id: sg-..., rules: RULES}. */
struct sg_in {
	yaml_node_t *id;
	enum gb_sc_sg_rules rules;
};

static gb_err_t sg_id(struct pctx *c, yaml_node_t *v, void *obj)
{
	((struct sg_in *)obj)->id = v;
	return want_scalar(c, v, "id");
}

static gb_err_t sg_rules_key(struct pctx *c, yaml_node_t *v, void *obj)
{
	return sg_rules(c, v, &((struct sg_in *)obj)->rules);
}

static const struct keydef sg_keys[] = {
	{ "id", sg_id },
	{ "rules", sg_rules_key },
	{ NULL, NULL },
};

/*
 * security_groups: [ID | {id: ID, rules: self|none|egress}]: the groups
 * that exist (DescribeSecurityGroups lists them; RunInstances accepts only
 * them), each by default with EC2's EFA rule (all traffic from and to
 * itself, in and out).
 */
static gb_err_t region_security_groups(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_sc_region *rg = obj;
	size_t n = 0;

	if (v->type != YAML_SEQUENCE_NODE)
		return perr(c, v, "security_groups must be a list");
	for (yaml_node_item_t *i = v->data.sequence.items.start;
	     i < v->data.sequence.items.top; i++) {
		yaml_node_t *e = node(c, *i);
		struct sg_in in = { e, GB_SC_SG_SELF };

		if (e->type == YAML_MAPPING_NODE &&
		    parse_map(c, e, "security group", sg_keys, &in))
			return GB_E_CONFIG;
		if (e->type == YAML_MAPPING_NODE && in.id == e)
			return perr(c, e, "a security group needs 'id'");
		if (want_scalar(c, in.id, "security group id"))
			return GB_E_CONFIG;
		if (gb_strv_find(&rg->security_groups, sval(in.id)) >= 0)
			return perr(c, in.id, "duplicate '%s' in security_groups", sval(in.id));
		if (!grow(c, (void **)&rg->sg_rules, &n, sizeof(*rg->sg_rules)) ||
		    gb_strv_add(&rg->security_groups, sval(in.id)))
			return gb_errorf(c->err, GB_E_NOMEM, "out of memory");
		rg->sg_rules[n - 1] = in.rules;
	}
	return GB_E_OK;
}

static gb_err_t pg_limit(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_long(c, v, "limit", 0, 100000, &((struct gb_sc_region *)obj)->pg_limit);
}

static gb_err_t pg_cap_pair(struct pctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
	struct gb_sc_region *rg = arg;
	struct gb_sc_pg_cap *cap;
	const struct gb_itype *t;

	if (strcmp(sval(k), "default") == 0)
		return get_long(c, v, "cluster_capacity default", 0, 100000000L,
				&rg->pg_capacity);
	if (!(t = want_itype(c, k)))
		return GB_E_CONFIG;
	if (!(cap = grow(c, (void **)&rg->pg_caps, &rg->npg_caps, sizeof(*cap))))
		return GB_E_NOMEM;
	cap->type = t;
	return get_long(c, v, sval(k), 0, 100000000L, &cap->n);
}

/* cluster_capacity: N | {default: N, TYPE: N}: instances one cluster group holds */
static gb_err_t pg_capacity(struct pctx *c, yaml_node_t *v, void *obj)
{
	if (v->type == YAML_SCALAR_NODE)
		return get_long(c, v, "cluster_capacity", 0, 100000000L,
				&((struct gb_sc_region *)obj)->pg_capacity);
	return each_pair(c, v, "cluster_capacity", pg_cap_pair, obj);
}

static const struct keydef pg_keys[] = {
	{ "limit", pg_limit },
	{ "cluster_capacity", pg_capacity },
	{ NULL, NULL },
};

/* placement_groups: {limit: 500, cluster_capacity: ...} */
static gb_err_t region_placement_groups(struct pctx *c, yaml_node_t *v, void *obj)
{
	return parse_map(c, v, "placement_groups", pg_keys, obj);
}

static gb_err_t region_instance_profiles(struct pctx *c, yaml_node_t *v, void *obj)
{
	return strv_from_seq(c, v, "instance_profiles",
			     &((struct gb_sc_region *)obj)->instance_profiles);
}

/*
 * capacity_reservations: [{id, az, type, count, match, kind, start, end,
 * state}]: what DescribeCapacityReservations lists and RunInstances can
 * launch into.  AZs and types are checked once the region's azs are read.
 */
struct cr_in {
	struct gb_sc_cr *cr;
	bool has_end;
};

/* EC2's CapacityReservationState values (botocore's model). */
static const char *const cr_states[] = {
	"active", "expired", "cancelled", "pending", "failed", "scheduled",
	"payment-pending", "payment-failed", "assessing", "delayed", "unsupported",
	"unavailable", NULL,
};

static bool hex_id_ok(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) == 0 && strlen(s + n) == 17 &&
	       strspn(s + n, "0123456789abcdef") == 17;
}

static gb_err_t cr_id(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_sc_cr *cr = ((struct cr_in *)obj)->cr;

	if (get_str(c, v, "id", &cr->id))
		return GB_E_CONFIG;
	if (!hex_id_ok(cr->id, "cr-"))
		return perr(c, v, "capacity reservation id must be cr- and 17 hex digits, not '%s'",
			    cr->id);
	return GB_E_OK;
}

static gb_err_t cr_az(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_str(c, v, "az", &((struct cr_in *)obj)->cr->az_name);
}

static gb_err_t cr_type(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_sc_cr *cr = ((struct cr_in *)obj)->cr;

	return (cr->type = want_itype(c, v)) ? GB_E_OK : GB_E_CONFIG;
}

static gb_err_t cr_count(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_long(c, v, "count", 1, 100000, &((struct cr_in *)obj)->cr->count);
}

static gb_err_t cr_match(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_sc_cr *cr = ((struct cr_in *)obj)->cr;

	if (want_scalar(c, v, "match"))
		return GB_E_CONFIG;
	if (strcmp(sval(v), "open") && strcmp(sval(v), "targeted"))
		return perr(c, v, "match must be open or targeted, not '%s'", sval(v));
	cr->open = strcmp(sval(v), "open") == 0;
	return GB_E_OK;
}

static gb_err_t cr_kind(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_sc_cr *cr = ((struct cr_in *)obj)->cr;

	if (want_scalar(c, v, "kind"))
		return GB_E_CONFIG;
	if (strcmp(sval(v), "default") && strcmp(sval(v), "capacity-block"))
		return perr(c, v, "kind must be default or capacity-block, not '%s'", sval(v));
	cr->kind = strcmp(sval(v), "default") ? GB_SC_CR_BLOCK : GB_SC_CR_DEFAULT;
	return GB_E_OK;
}

static gb_err_t cr_start(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_duration(c, v, "start", &((struct cr_in *)obj)->cr->start);
}

static gb_err_t cr_end(struct pctx *c, yaml_node_t *v, void *obj)
{
	((struct cr_in *)obj)->has_end = true;
	return get_duration(c, v, "end", &((struct cr_in *)obj)->cr->end);
}

static gb_err_t cr_state(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_sc_cr *cr = ((struct cr_in *)obj)->cr;

	if (get_str(c, v, "state", &cr->state))
		return GB_E_CONFIG;
	for (size_t i = 0; cr_states[i]; i++) {
		if (strcmp(cr->state, cr_states[i]) == 0)
			return GB_E_OK;
	}
	return perr(c, v, "state must be one of EC2's (active, expired, cancelled, pending, failed, scheduled, payment-pending, payment-failed, assessing, delayed, unsupported, unavailable), not '%s'",
		    cr->state);
}

static const struct keydef cr_keys[] = {
	{ "id", cr_id },
	{ "az", cr_az },
	{ "type", cr_type },
	{ "count", cr_count },
	{ "match", cr_match },
	{ "kind", cr_kind },
	{ "start", cr_start },
	{ "end", cr_end },
	{ "state", cr_state },
	{ NULL, NULL },
};

static gb_err_t parse_cr(struct pctx *c, yaml_node_t *e, struct gb_sc_cr *cr)
{
	struct cr_in in = { cr, false };

	cr->line = (unsigned)e->start_mark.line + 1;
	cr->end = -1;
	if (parse_map(c, e, "capacity reservation", cr_keys, &in))
		return GB_E_CONFIG;
	if (!cr->id || !cr->az_name || !cr->type || !cr->count)
		return perr(c, e, "capacity reservation needs id, az, type and count");
	if (in.has_end && cr->end <= cr->start)
		return perr(c, e, "capacity reservation %s: end must be after start", cr->id);
	if (cr->kind == GB_SC_CR_BLOCK && !in.has_end)
		return perr(c, e, "capacity reservation %s: a capacity-block needs end", cr->id);
	if (cr->kind == GB_SC_CR_BLOCK && cr->count > GB_SC_CR_BLOCK_MAX)
		return perr(c, e, "capacity reservation %s: a capacity-block holds at most %d instances, not %ld",
			    cr->id, GB_SC_CR_BLOCK_MAX, cr->count);
	return GB_E_OK;
}

static gb_err_t region_crs(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_sc_region *rg = obj;

	if (v->type != YAML_SEQUENCE_NODE)
		return perr(c, v, "capacity_reservations must be a list");
	for (yaml_node_item_t *i = v->data.sequence.items.start;
	     i < v->data.sequence.items.top; i++) {
		struct gb_sc_cr *cr = grow(c, (void **)&rg->crs, &rg->ncrs, sizeof(*cr));

		if (!cr || parse_cr(c, node(c, *i), cr))
			return GB_E_CONFIG;
		for (size_t j = 0; j + 1 < rg->ncrs; j++) {
			if (strcmp(rg->crs[j].id, cr->id) == 0)
				return perr(c, node(c, *i), "duplicate capacity reservation '%s'",
					    cr->id);
		}
	}
	return GB_E_OK;
}

/* capacity_block_offerings: [{type, az, count, start, duration_hours, upfront_fee}] */
static gb_err_t cbo_type(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_sc_cb_offer *o = obj;

	return (o->type = want_itype(c, v)) ? GB_E_OK : GB_E_CONFIG;
}

static gb_err_t cbo_az(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_str(c, v, "az", &((struct gb_sc_cb_offer *)obj)->az_name);
}

static gb_err_t cbo_count(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_long(c, v, "count", 1, GB_SC_CR_BLOCK_MAX,
			&((struct gb_sc_cb_offer *)obj)->count);
}

static gb_err_t cbo_start(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_duration(c, v, "start", &((struct gb_sc_cb_offer *)obj)->start);
}

static gb_err_t cbo_hours(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_long(c, v, "duration_hours", 1, 182 * 24,
			&((struct gb_sc_cb_offer *)obj)->hours);
}

static gb_err_t cbo_fee(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_sc_cb_offer *o = obj;
	double d;

	if (get_str(c, v, "upfront_fee", &o->upfront_fee))
		return GB_E_CONFIG;
	if (gb_parse_double(o->upfront_fee, &d) != GB_E_OK || d < 0 ||
	    strspn(o->upfront_fee, "0123456789.") != strlen(o->upfront_fee))
		return perr(c, v, "upfront_fee must be a price in USD such as 1234.56, not '%s'",
			    o->upfront_fee);
	return GB_E_OK;
}

static const struct keydef cbo_keys[] = {
	{ "type", cbo_type },
	{ "az", cbo_az },
	{ "count", cbo_count },
	{ "start", cbo_start },
	{ "duration_hours", cbo_hours },
	{ "upfront_fee", cbo_fee },
	{ NULL, NULL },
};

static gb_err_t region_cb_offers(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_sc_region *rg = obj;

	if (v->type != YAML_SEQUENCE_NODE)
		return perr(c, v, "capacity_block_offerings must be a list");
	for (yaml_node_item_t *i = v->data.sequence.items.start;
	     i < v->data.sequence.items.top; i++) {
		yaml_node_t *e = node(c, *i);
		struct gb_sc_cb_offer *o = grow(c, (void **)&rg->cb_offers, &rg->ncb_offers,
						sizeof(*o));

		if (!o)
			return GB_E_NOMEM;
		o->line = (unsigned)e->start_mark.line + 1;
		if (parse_map(c, e, "capacity block offering", cbo_keys, o))
			return GB_E_CONFIG;
		if (!o->type || !o->az_name || !o->count || !o->hours || !o->upfront_fee)
			return perr(c, e, "capacity block offering needs type, az, count, duration_hours and upfront_fee");
	}
	return GB_E_OK;
}

/* resource_groups: {ARN: [cr ids]}: what CapacityReservationResourceGroupArn names */
static bool rgroup_arn_ok(const char *arn, const char *region)
{
	size_t n = strlen("arn:aws:resource-groups:");
	const char *p = arn + n;

	if (strncmp(arn, "arn:aws:resource-groups:", n) || strncmp(p, region, strlen(region)))
		return false;
	p += strlen(region);
	if (*p++ != ':' || strspn(p, "0123456789") != 12 || strncmp(p + 12, ":group/", 7))
		return false;
	p += 12 + 7;
	return *p && strlen(p) <= 300 && strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == strlen(p);
}

static gb_err_t rgroup_pair(struct pctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
	struct gb_sc_region *rg = arg;
	struct gb_sc_rgroup *g = grow(c, (void **)&rg->rgroups, &rg->nrgroups, sizeof(*g));

	if (!g || get_str(c, k, "resource group ARN", &g->arn))
		return GB_E_CONFIG;
	g->line = (unsigned)k->start_mark.line + 1;
	if (!rgroup_arn_ok(g->arn, rg->name))
		return perr(c, k, "resource group ARN must be arn:aws:resource-groups:%s:ACCOUNT:group/NAME, not '%s'",
			    rg->name, g->arn);
	if (strv_from_seq(c, v, "resource group", &g->ids))
		return GB_E_CONFIG;
	if (!g->ids.n)
		return perr(c, v, "resource group %s names no capacity reservation", g->arn);
	return GB_E_OK;
}

static gb_err_t region_rgroups(struct pctx *c, yaml_node_t *v, void *obj)
{
	return each_pair(c, v, "resource_groups", rgroup_pair, obj);
}

/* An AZ of [rg] offering [t]: resolved after the region is read. */
static gb_err_t resolve_az(struct pctx *c, const struct gb_sc_region *rg, const char *what,
			   unsigned line, const char *name, const struct gb_itype *t,
			   const struct gb_sc_az **out)
{
	for (size_t z = 0; z < rg->nazs; z++) {
		if (strcmp(rg->azs[z].name, name) != 0)
			continue;
		for (size_t p = 0; p < rg->azs[z].npools; p++) {
			if (rg->azs[z].pools[p].type == t) {
				*out = &rg->azs[z];
				return GB_E_OK;
			}
		}
		return gb_errorf(c->err, GB_E_CONFIG, "%s:%u: %s: %s does not offer %s",
				 c->name, line, what, name, t->name);
	}
	return gb_errorf(c->err, GB_E_CONFIG, "%s:%u: %s: availability zone '%s' is not in region %s",
			 c->name, line, what, name, rg->name);
}

/* Reservation ids are EC2's: unique across Regions. */
static gb_err_t cr_unique(struct pctx *c, const struct gb_sc_region *rg,
			  const struct gb_sc_cr *cr)
{
	for (const struct gb_sc_region *o = c->sc->regions; o < rg; o++) {
		for (size_t j = 0; j < o->ncrs; j++) {
			if (strcmp(o->crs[j].id, cr->id) == 0)
				return gb_errorf(c->err, GB_E_CONFIG,
						 "%s:%u: capacity reservation %s is also in region %s",
						 c->name, cr->line, cr->id, o->name);
		}
	}
	return GB_E_OK;
}

/* Every id of a resource group is a reservation of its region. */
static gb_err_t rgroup_ids(struct pctx *c, const struct gb_sc_region *rg,
			   const struct gb_sc_rgroup *g)
{
	for (size_t j = 0; j < g->ids.n; j++) {
		size_t r = 0;

		while (r < rg->ncrs && strcmp(rg->crs[r].id, g->ids.v[j]) != 0)
			r++;
		if (r == rg->ncrs)
			return gb_errorf(c->err, GB_E_CONFIG,
					 "%s:%u: resource group %s: no capacity reservation '%s' in region %s",
					 c->name, g->line, g->arn, g->ids.v[j], rg->name);
	}
	return GB_E_OK;
}

static gb_err_t check_capacity_keys(struct pctx *c, struct gb_sc_region *rg)
{
	char what[96];

	for (size_t k = 0; k < rg->ncrs; k++) {
		snprintf(what, sizeof(what), "capacity reservation %s", rg->crs[k].id);
		if (cr_unique(c, rg, &rg->crs[k]) ||
		    resolve_az(c, rg, what, rg->crs[k].line, rg->crs[k].az_name,
			       rg->crs[k].type, &rg->crs[k].az))
			return GB_E_CONFIG;
	}
	for (size_t k = 0; k < rg->nrgroups; k++) {
		if (rgroup_ids(c, rg, &rg->rgroups[k]))
			return GB_E_CONFIG;
	}
	for (size_t k = 0; k < rg->ncb_offers; k++) {
		if (resolve_az(c, rg, "capacity block offering", rg->cb_offers[k].line,
			       rg->cb_offers[k].az_name, rg->cb_offers[k].type,
			       &rg->cb_offers[k].az))
			return GB_E_CONFIG;
	}
	return GB_E_OK;
}

static const struct keydef region_keys[] = {
	{ "quotas", region_quotas },
	{ "images", region_images },
	{ "key_pairs", region_key_pairs },
	{ "security_groups", region_security_groups },
	{ "instance_profiles", region_instance_profiles },
	{ "placement_groups", region_placement_groups },
	{ "azs", region_azs },
	{ "capacity_reservations", region_crs },
	{ "capacity_block_offerings", region_cb_offers },
	{ "resource_groups", region_rgroups },
	{ NULL, NULL },
};

static gb_err_t region_pair(struct pctx *c, yaml_node_t *k, yaml_node_t *v,
			    void *arg)
{
	struct gb_sc_region *rg;
	char what[96];

	(void)arg;
	rg = grow(c, (void **)&c->sc->regions, &c->sc->nregions, sizeof(*rg));
	if (!rg || get_str(c, k, "region name", &rg->name))
		return GB_E_CONFIG;
	for (int b = 0; b < GB_ITYPE_BUCKET_COUNT; b++)
		rg->vcpu_quota[b] = rg->spot_vcpu_quota[b] = GB_SC_UNLIMITED;
	rg->instance_quota = GB_SC_UNLIMITED;
	rg->pg_limit = GB_SC_PG_LIMIT;
	rg->pg_capacity = GB_SC_UNLIMITED;
	snprintf(what, sizeof(what), "region %s", rg->name);
	if (parse_map(c, v, what, region_keys, rg))
		return GB_E_CONFIG;
	if (rg->nazs == 0)
		return perr(c, v, "region %s needs at least one availability zone (azs)",
			    rg->name);
	return check_capacity_keys(c, rg);
}

static gb_err_t parse_regions(struct pctx *c, yaml_node_t *v, void *obj)
{
	(void)obj;
	if (each_pair(c, v, "regions", region_pair, NULL))
		return GB_E_CONFIG;
	if (c->sc->nregions == 0)
		return perr(c, v, "regions must name at least one region");
	return GB_E_OK;
}

/*****************************************************************************
 *  Top level
 *****************************************************************************/

static gb_err_t cred_key(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_str(c, v, "access_key_id", &((struct gb_sc_cred *)obj)->access_key_id);
}

static gb_err_t cred_secret(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_str(c, v, "secret_access_key",
		       &((struct gb_sc_cred *)obj)->secret_access_key);
}

static const struct keydef cred_keys[] = {
	{ "access_key_id", cred_key },
	{ "secret_access_key", cred_secret },
	{ NULL, NULL },
};

static gb_err_t parse_credentials(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_scenario *sc = obj;

	if (v->type != YAML_SEQUENCE_NODE)
		return perr(c, v, "credentials must be a list");
	for (yaml_node_item_t *i = v->data.sequence.items.start;
	     i < v->data.sequence.items.top; i++) {
		struct gb_sc_cred *cr = grow(c, (void **)&sc->creds, &sc->ncreds,
					     sizeof(*cr));

		if (!cr || parse_map(c, node(c, *i), "credentials", cred_keys, cr))
			return GB_E_CONFIG;
		if (!cr->access_key_id || !cr->secret_access_key)
			return perr(c, node(c, *i), "credentials need access_key_id and secret_access_key");
		for (size_t j = 0; j + 1 < sc->ncreds; j++) {
			if (strcmp(sc->creds[j].access_key_id, cr->access_key_id) == 0)
				return perr(c, node(c, *i), "duplicate access_key_id '%s'",
					    cr->access_key_id);
		}
	}
	return GB_E_OK;
}

/* arn:aws:iam::<12 digits>:role/<path/>NAME, NAME of [\w+=,.@-]{1,64}. */
static bool role_arn_ok(const char *arn)
{
	const char *p = arn, *name;

	if (!gb_str_has_prefix(p, "arn:aws:iam::"))
		return false;
	p += strlen("arn:aws:iam::");
	for (int i = 0; i < 12; i++, p++) {
		if (!isdigit((unsigned char)*p))
			return false;
	}
	if (!gb_str_has_prefix(p, ":role/"))
		return false;
	p += strlen(":role/");
	name = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
	if (!*name || strlen(name) > 64)
		return false;
	for (; *p; p++) {
		if (!isalnum((unsigned char)*p) && !strchr("_+=,.@-/", *p))
			return false;
	}
	return true;
}

static gb_err_t role_arn(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_sc_role *r = obj;

	if (get_str(c, v, "arn", &r->arn))
		return GB_E_CONFIG;
	if (!role_arn_ok(r->arn))
		return perr(c, v, "arn must be arn:aws:iam::ACCOUNT:role/NAME (12 digits, a name of 1 to 64 of [A-Za-z0-9_+=,.@-]), not '%s'",
			    r->arn);
	return GB_E_OK;
}

static gb_err_t role_max(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_long(c, v, "max_session_duration", 3600, 43200,
			&((struct gb_sc_role *)obj)->max_session_s);
}

static gb_err_t role_external_id(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_sc_role *r = obj;
	size_t n;

	if (get_str(c, v, "external_id", &r->external_id))
		return GB_E_CONFIG;
	n = strlen(r->external_id);
	if (n < 2 || n > 1224 || strspn(r->external_id,
			"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+=,.@:/-") != n)
		return perr(c, v, "external_id must be 2 to 1224 of [A-Za-z0-9_+=,.@:/-], not '%s'",
			    r->external_id);
	return GB_E_OK;
}

static gb_err_t role_tokens(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_sc_role *r = obj;

	if (strv_from_seq(c, v, "web_identity_tokens", &r->web_tokens))
		return GB_E_CONFIG;
	for (size_t i = 0; i < r->web_tokens.n; i++) {
		size_t n = strlen(r->web_tokens.v[i]);

		if (n < 4 || n > 20000)
			return perr(c, v, "web_identity_tokens: each token has 4 to 20000 characters ('%.40s' has %zu)",
				    r->web_tokens.v[i], n);
	}
	return GB_E_OK;
}

static const struct keydef role_keys[] = {
	{ "arn", role_arn },
	{ "max_session_duration", role_max },
	{ "external_id", role_external_id },
	{ "web_identity_tokens", role_tokens },
	{ NULL, NULL },
};

static gb_err_t parse_roles(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_scenario *sc = obj;

	if (v->type != YAML_SEQUENCE_NODE)
		return perr(c, v, "roles must be a list");
	for (yaml_node_item_t *i = v->data.sequence.items.start;
	     i < v->data.sequence.items.top; i++) {
		struct gb_sc_role *r = grow(c, (void **)&sc->roles, &sc->nroles, sizeof(*r));

		if (!r)
			return GB_E_NOMEM;
		r->max_session_s = 3600;
		if (parse_map(c, node(c, *i), "a role", role_keys, r))
			return GB_E_CONFIG;
		if (!r->arn)
			return perr(c, node(c, *i), "a role needs its arn");
		for (size_t j = 0; j + 1 < sc->nroles; j++) {
			if (strcmp(sc->roles[j].arn, r->arn) == 0)
				return perr(c, node(c, *i), "duplicate role '%s'", r->arn);
		}
	}
	return GB_E_OK;
}

static gb_err_t timing_pending(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_duration(c, v, "pending", &((struct gb_scenario *)obj)->pending_s);
}

static gb_err_t timing_shutting(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_duration(c, v, "shutting_down",
			    &((struct gb_scenario *)obj)->shutting_down_s);
}

static gb_err_t timing_visible(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_duration(c, v, "terminated_visible",
			    &((struct gb_scenario *)obj)->terminated_visible_s);
}

static const struct keydef timing_keys[] = {
	{ "pending", timing_pending },
	{ "shutting_down", timing_shutting },
	{ "terminated_visible", timing_visible },
	{ NULL, NULL },
};

static gb_err_t parse_timing(struct pctx *c, yaml_node_t *v, void *obj)
{
	return parse_map(c, v, "timing", timing_keys, obj);
}

static gb_err_t consistency_invisible(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_duration(c, v, "invisible", &((struct gb_scenario *)obj)->invisible_s);
}

static gb_err_t consistency_no_ip(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_duration(c, v, "no_private_ip",
			    &((struct gb_scenario *)obj)->no_private_ip_s);
}

static const struct keydef consistency_keys[] = {
	{ "invisible", consistency_invisible },
	{ "no_private_ip", consistency_no_ip },
	{ NULL, NULL },
};

/* Eventual consistency of fresh instances (sim.h, gb_sim_consistency). */
static gb_err_t parse_consistency(struct pctx *c, yaml_node_t *v, void *obj)
{
	return parse_map(c, v, "consistency", consistency_keys, obj);
}

static gb_err_t parse_seed(struct pctx *c, yaml_node_t *v, void *obj)
{
	char *end = NULL;
	unsigned long long s;

	if (want_scalar(c, v, "seed"))
		return GB_E_CONFIG;
	errno = 0;
	s = strtoull(sval(v), &end, 10);
	if (errno || end == sval(v) || *end || sval(v)[0] == '-')
		return perr(c, v, "seed must be a non-negative integer, not '%s'", sval(v));
	((struct gb_scenario *)obj)->seed = (uint64_t)s;
	return GB_E_OK;
}

static gb_err_t parse_account(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_scenario *sc = obj;
	const char *s;

	if (want_scalar(c, v, "account_id"))
		return GB_E_CONFIG;
	s = sval(v);
	if (strlen(s) != 12 || strspn(s, "0123456789") != 12)
		return perr(c, v, "account_id must be 12 digits (quote it), not '%s'", s);
	return get_str(c, v, "account_id", &sc->account_id);
}

static gb_err_t parse_boot(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_scenario *sc = obj;

	if (want_scalar(c, v, "boot"))
		return GB_E_CONFIG;
	if (strcmp(sval(v), "none") == 0)
		sc->boot = GB_SC_BOOT_NONE;
	else if (strcmp(sval(v), "exec") == 0)
		sc->boot = GB_SC_BOOT_EXEC;
	else
		return perr(c, v, "boot must be none or exec, not '%s'", sval(v));
	return GB_E_OK;
}

static gb_err_t parse_boot_dir(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_str(c, v, "boot_dir", &((struct gb_scenario *)obj)->boot_dir);
}

static gb_err_t parse_description(struct pctx *c, yaml_node_t *v, void *obj)
{
	(void)obj;
	return want_scalar(c, v, "description");
}

/* What a capacity event mapping holds, checked once the regions are known. */
struct event_in {
	struct gb_sc_event *ev;
	yaml_node_t *type;
	int nops;
	bool has_at;
};

static gb_err_t ev_at(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct event_in *in = obj;

	in->has_at = true;
	return get_duration(c, v, "at", &in->ev->at);
}

static gb_err_t ev_az(struct pctx *c, yaml_node_t *v, void *obj)
{
	return get_str(c, v, "az", &((struct event_in *)obj)->ev->az);
}

static gb_err_t ev_type(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct event_in *in = obj;

	in->type = v;
	in->ev->type = want_itype(c, v);
	return in->ev->type ? GB_E_OK : GB_E_CONFIG;
}

static gb_err_t ev_op(struct pctx *c, yaml_node_t *v, struct event_in *in,
		      enum gb_sc_event_op op)
{
	in->nops++;
	in->ev->op = op;
	return get_long(c, v, "capacity change", 0, 1000000000L, &in->ev->n);
}

static gb_err_t ev_set(struct pctx *c, yaml_node_t *v, void *obj)
{
	return ev_op(c, v, obj, GB_SC_EVENT_SET);
}

static gb_err_t ev_add(struct pctx *c, yaml_node_t *v, void *obj)
{
	return ev_op(c, v, obj, GB_SC_EVENT_ADD);
}

static gb_err_t ev_remove(struct pctx *c, yaml_node_t *v, void *obj)
{
	return ev_op(c, v, obj, GB_SC_EVENT_REMOVE);
}

static gb_err_t ev_market(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct event_in *in = obj;

	if (want_scalar(c, v, "market"))
		return GB_E_CONFIG;
	if (strcmp(sval(v), "spot") != 0 && strcmp(sval(v), "on-demand") != 0)
		return perr(c, v, "market must be on-demand or spot, not '%s'", sval(v));
	in->ev->spot = strcmp(sval(v), "spot") == 0;
	return GB_E_OK;
}

static const struct keydef event_keys[] = {
	{ "at", ev_at },
	{ "az", ev_az },
	{ "instance_type", ev_type },
	{ "market", ev_market },
	{ "set", ev_set },
	{ "add", ev_add },
	{ "remove", ev_remove },
	{ NULL, NULL },
};

static gb_err_t parse_event(struct pctx *c, yaml_node_t *e, struct gb_sc_event *ev)
{
	struct event_in in = { ev, NULL, 0, false };

	ev->line = (unsigned)e->start_mark.line + 1;
	if (parse_map(c, e, "capacity event", event_keys, &in))
		return GB_E_CONFIG;
	if (!in.has_at || !ev->az || !ev->type)
		return perr(c, e, "capacity event needs at, az and instance_type");
	if (in.nops != 1)
		return perr(c, e, "capacity event needs exactly one of set, add, remove");
	return GB_E_OK;
}

static gb_err_t parse_events(struct pctx *c, yaml_node_t *v, void *obj)
{
	struct gb_scenario *sc = obj;

	if (v->type != YAML_SEQUENCE_NODE)
		return perr(c, v, "capacity_events must be a list");
	for (yaml_node_item_t *i = v->data.sequence.items.start;
	     i < v->data.sequence.items.top; i++) {
		struct gb_sc_event *ev = grow(c, (void **)&sc->events, &sc->nevents,
					      sizeof(*ev));

		if (!ev || parse_event(c, node(c, *i), ev))
			return GB_E_CONFIG;
	}
	return GB_E_OK;
}

static const struct keydef top_keys[] = {
	{ "description", parse_description },
	{ "seed", parse_seed },
	{ "account_id", parse_account },
	{ "credentials", parse_credentials },
	{ "roles", parse_roles },
	{ "timing", parse_timing },
	{ "consistency", parse_consistency },
	{ "boot", parse_boot },
	{ "boot_dir", parse_boot_dir },
	{ "faults", parse_faults },
	{ "regions", parse_regions },
	{ "capacity_events", parse_events },
	{ NULL, NULL },
};

static int event_cmp(const void *a, const void *b)
{
	const struct gb_sc_event *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->line < y->line ? -1 : (x->line > y->line);
}

/* Events name AZs and types that must exist: checked after all regions. */
static gb_err_t check_events(struct pctx *c)
{
	struct gb_scenario *sc = c->sc;

	for (size_t i = 0; i < sc->nevents; i++) {
		struct gb_sc_event *ev = &sc->events[i];
		const struct gb_sc_az *az = gb_scenario_az(sc, ev->az, NULL);
		bool offered = false;

		for (size_t p = 0; az && p < az->npools; p++)
			offered |= az->pools[p].type == ev->type &&
				   (!ev->spot || az->pools[p].spot);
		if (!az)
			return gb_errorf(c->err, GB_E_CONFIG, "%s:%u: capacity event names unknown availability zone '%s'",
					 c->name, ev->line, ev->az);
		if (!offered)
			return gb_errorf(c->err, GB_E_CONFIG, "%s:%u: capacity event for %s%s, which %s does not offer",
					 c->name, ev->line, ev->spot ? "Spot " : "",
					 ev->type->name, ev->az);
	}
	if (sc->nevents)	/* qsort(NULL, 0) is undefined */
		qsort(sc->events, sc->nevents, sizeof(*sc->events), event_cmp);
	return GB_E_OK;
}

static gb_err_t set_defaults(struct pctx *c, struct gb_scenario *sc)
{
	sc->seed = 1;
	sc->pending_s = 0.5;
	sc->shutting_down_s = 1.0;
	sc->terminated_visible_s = 3600.0;
	for (int a = 0; a < GB_SIM_ACTION_COUNT; a++)
		sc->faults[a].error_code = "InternalError";
	if (!(sc->account_id = strdup("123456789012")))
		return gb_errorf(c->err, GB_E_NOMEM, "out of memory");
	return GB_E_OK;
}

/* With no credentials given, the AWS documentation's example pair. */
static gb_err_t default_creds(struct pctx *c, struct gb_scenario *sc)
{
	struct gb_sc_cred *cr;

	if (sc->ncreds)
		return GB_E_OK;
	cr = grow(c, (void **)&sc->creds, &sc->ncreds, sizeof(*cr));
	if (!cr || !(cr->access_key_id = strdup(DEFAULT_ACCESS_KEY)) ||
	    !(cr->secret_access_key = strdup(DEFAULT_SECRET_KEY)))
		return gb_errorf(c->err, GB_E_NOMEM, "out of memory");
	return GB_E_OK;
}

static gb_err_t parse_root(struct pctx *c, yaml_node_t *root)
{
	bool have_regions = false;

	if (!root)
		return gb_errorf(c->err, GB_E_CONFIG, "%s:1:1: the scenario is empty",
				 c->name);
	if (parse_map(c, root, "the scenario", top_keys, c->sc))
		return GB_E_CONFIG;
	have_regions = c->sc->nregions > 0;
	if (!have_regions)
		return perr(c, root, "the scenario needs 'regions'");
	if (check_events(c) || default_creds(c, c->sc))
		return c->err ? c->err->code : GB_E_CONFIG;
	return GB_E_OK;
}

/*****************************************************************************
 *  Public functions
 *****************************************************************************/

static gb_err_t yaml_problem(const char *name, yaml_parser_t *p, gb_error_t *err)
{
	return gb_errorf(err, GB_E_CONFIG, "%s:%lu:%lu: %s%s%s", name,
			 (unsigned long)p->problem_mark.line + 1,
			 (unsigned long)p->problem_mark.column + 1,
			 p->problem ? p->problem : "YAML syntax error",
			 p->context ? " " : "", p->context ? p->context : "");
}

gb_err_t gb_scenario_parse(const char *name, const char *text, size_t len,
			   struct gb_scenario **out, gb_error_t *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct gb_scenario *sc = NULL;
	struct pctx c = { name, &doc, err, NULL };
	bool have_doc = false;
	gb_err_t rc;

	*out = NULL;
	if (!yaml_parser_initialize(&parser))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = yaml_problem(name, &parser, err);
		goto out;
	}
	have_doc = true;
	sc = calloc(1, sizeof(*sc));
	if (!sc || !(sc->path = strdup(name))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	c.sc = sc;
	if ((rc = set_defaults(&c, sc)) ||
	    (rc = parse_root(&c, yaml_document_get_root_node(&doc))))
		goto out;
	*out = sc;
	sc = NULL;
out:
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	gb_scenario_destroy(sc);
	return rc;
}

gb_err_t gb_scenario_load(const char *path, struct gb_scenario **out,
			  gb_error_t *err)
{
	char *text = NULL;
	size_t len = 0;
	gb_err_t rc;

	*out = NULL;
	rc = gb_file_read(path, SCENARIO_MAX_BYTES, &text, &len, err);
	if (rc)
		return rc;
	rc = gb_scenario_parse(path, text, len, out, err);
	free(text);
	return rc;
}

static void region_free(struct gb_sc_region *rg)
{
	for (size_t z = 0; z < rg->nazs; z++) {
		struct gb_sc_az *az = &rg->azs[z];

		for (size_t s = 0; s < az->nsubnets; s++) {
			free(az->subnets[s].id);
			free(az->subnets[s].cidr);
			free(az->subnets[s].vpc_id);
		}
		free(az->subnets);
		free(az->pools);
		free(az->name);
		free(az->zone_id);
	}
	free(rg->azs);
	gb_strv_free(&rg->images);
	gb_strv_free(&rg->key_pairs);
	gb_strv_free(&rg->security_groups);
	free(rg->sg_rules);
	free(rg->pg_caps);
	gb_strv_free(&rg->instance_profiles);
	for (size_t k = 0; k < rg->ncrs; k++) {
		free(rg->crs[k].id);
		free(rg->crs[k].az_name);
		free(rg->crs[k].state);
	}
	free(rg->crs);
	for (size_t k = 0; k < rg->ncb_offers; k++) {
		free(rg->cb_offers[k].az_name);
		free(rg->cb_offers[k].upfront_fee);
	}
	free(rg->cb_offers);
	for (size_t k = 0; k < rg->nrgroups; k++) {
		free(rg->rgroups[k].arn);
		gb_strv_free(&rg->rgroups[k].ids);
	}
	free(rg->rgroups);
	free(rg->name);
}

void gb_scenario_destroy(struct gb_scenario *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < sc->nregions; i++)
		region_free(&sc->regions[i]);
	free(sc->regions);
	for (size_t i = 0; i < sc->ncreds; i++) {
		free(sc->creds[i].access_key_id);
		if (sc->creds[i].secret_access_key) {
			gb_memzero(sc->creds[i].secret_access_key,
				   strlen(sc->creds[i].secret_access_key));
			free(sc->creds[i].secret_access_key);
		}
	}
	free(sc->creds);
	for (size_t i = 0; i < sc->nroles; i++) {
		free(sc->roles[i].arn);
		free(sc->roles[i].external_id);
		gb_strv_free(&sc->roles[i].web_tokens);
	}
	free(sc->roles);
	for (size_t i = 0; i < sc->nevents; i++)
		free(sc->events[i].az);
	free(sc->events);
	for (int a = 0; a < GB_SIM_ACTION_COUNT; a++)
		free(sc->faults[a].bursts);
	free(sc->account_id);
	free(sc->boot_dir);
	free(sc->path);
	free(sc);
}

const struct gb_sc_role *gb_scenario_role(const struct gb_scenario *sc, const char *arn)
{
	for (size_t i = 0; arn && i < sc->nroles; i++) {
		if (strcmp(sc->roles[i].arn, arn) == 0)
			return &sc->roles[i];
	}
	return NULL;
}

const struct gb_sc_region *gb_scenario_region(const struct gb_scenario *sc,
					      const char *name)
{
	for (size_t i = 0; name && i < sc->nregions; i++) {
		if (strcmp(sc->regions[i].name, name) == 0)
			return &sc->regions[i];
	}
	return NULL;
}

const struct gb_sc_az *gb_scenario_az(const struct gb_scenario *sc,
				      const char *name,
				      const struct gb_sc_region **region)
{
	for (size_t r = 0; name && r < sc->nregions; r++) {
		for (size_t z = 0; z < sc->regions[r].nazs; z++) {
			/* a half-parsed AZ may not have its name yet */
			const char *zn = sc->regions[r].azs[z].name;

			if (zn && strcmp(zn, name) == 0) {
				if (region)
					*region = &sc->regions[r];
				return &sc->regions[r].azs[z];
			}
		}
	}
	return NULL;
}
