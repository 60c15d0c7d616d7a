/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_prices.c - gpuburstctl prices, prices refresh
 *
 * The price file every part of gpuburst reads (gb_conf_price):
 * <state_dir>/prices, US dollars per instance-hour by region, type and
 * capacity kind.  `prices` lists it and marks the (region, type) pairs the
 * nodesets can launch; `prices refresh` reads AWS Price List offer files
 * for AmazonEC2 that the site downloaded (gpuburstctl never does: the
 * Price List is public, the host running this may have no way out) and
 * replaces the on-demand lines of the regions they cover, keeping every
 * other line.  Programs read the file when they load the configuration.
 * `prices` also lists the spot prices reconcile caches in the state file
 * (DescribeSpotPriceHistory), which price spot instances before the file.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "gb_plan.h"
#include "gb_util.h"

/*****************************************************************************
 *  What the nodesets can launch
 *****************************************************************************/

/* A (region, type) some nodeset can launch; strings BORROWED from the config. */
struct use {
	const char *region;
	const char *type;
	struct gb_strv nodesets;
};

struct uses {
	struct use *v;
	size_t n;
};

static struct use *use_find(const struct uses *u, const char *region, const char *type)
{
	for (size_t i = 0; i < u->n; i++)
		if (strcmp(u->v[i].region, region) == 0 && strcmp(u->v[i].type, type) == 0)
			return &u->v[i];
	return NULL;
}

static bool use_add(struct uses *u, const char *region, const char *type, const char *ns)
{
	struct use *x = use_find(u, region, type), *v;

	if (!x) {
		if (!(v = realloc(u->v, (u->n + 1) * sizeof(*v))))
			return false;
		u->v = v;
		x = &v[u->n++];
		memset(x, 0, sizeof(*x));
		x->region = region;
		x->type = type;
	}
	return gb_strv_find(&x->nodesets, ns) >= 0 || gb_strv_add(&x->nodesets, ns) == GB_E_OK;
}

static int use_cmp(const void *a, const void *b)
{
	const struct use *x = a, *y = b;
	int r = strcmp(x->region, y->region);

	return r ? r : strcmp(x->type, y->type);
}

static void uses_free(struct uses *u)
{
	for (size_t i = 0; i < u->n; i++)
		gb_strv_free(&u->v[i].nodesets);
	free(u->v);
}

/*
 * Each nodeset's types in the regions its planner may choose
 * (gb_plan_candidates: the home region and its fallback group's regions;
 * single_region mode: the nearest).  RET false: out of memory.
 */
static bool uses_collect(const struct gb_conf *conf, struct uses *u)
{
	for (size_t i = 0; i < conf->n_nodesets; i++) {
		const struct gb_conf_nodeset *ns = &conf->nodesets[i];
		struct gb_candidates c;
		gb_error_t err = { 0 };
		bool ok = true;

		if (gb_plan_candidates(conf, ns->home_region, ns->mode, &c, &err)) {
			fprintf(stderr, "gpuburstctl: warning: nodeset %s: %s\n", ns->name, err.text);
			gb_plan_candidates_clear(&c);
			continue;
		}
		for (size_t r = 0; ok && r < c.n; r++)
			for (size_t t = 0; ok && t < ns->n_instance_types; t++)
				ok = use_add(u, c.v[r].region->name, ns->instance_types[t],
					     ns->name);
		gb_plan_candidates_clear(&c);
		if (!ok)
			return false;
	}
	if (u->n)
		qsort(u->v, u->n, sizeof(*u->v), use_cmp);
	return true;
}

static json_t *strv_json(const struct gb_strv *sv)
{
	json_t *a = json_array();

	for (size_t i = 0; i < sv->n; i++)
		json_array_append_new(a, json_string(sv->v[i]));
	return a;
}

/* Joined by ',' into [buf]; "-" for none.  RET [buf]. */
static const char *strv_join(const struct gb_strv *sv, char *buf, size_t n)
{
	size_t len = 0;

	snprintf(buf, n, "-");
	for (size_t i = 0; i < sv->n && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "," : "", sv->v[i]);
	return buf;
}

/*****************************************************************************
 *  prices
 *****************************************************************************/

static json_t *price_json(const struct gb_price *p)
{
	return json_pack("{s:s,s:s,s:s,s:f}", "region", p->region, "type", p->type,
			 "capacity", gb_conf_capacity_name(p->kind),
			 "usd_per_hour", p->usd_per_hour);
}

/*****************************************************************************
 *  The cached spot prices
 *****************************************************************************/

/* The state file's spot prices, copied (rows die with the callback). */
struct spots {
	struct gb_spot_price *v;
	size_t n;
	struct gb_strv keep;
	bool nomem;
};

static const char *spot_keep(struct spots *s, const char *str)
{
	if (!str || gb_strv_add(&s->keep, str)) {
		s->nomem = true;
		return NULL;
	}
	return s->keep.v[s->keep.n - 1];
}

static int spot_take(const struct gb_spot_price *p, void *arg)
{
	struct spots *s = arg;
	struct gb_spot_price *v = realloc(s->v, (s->n + 1) * sizeof(*v));

	if (!v) {
		s->nomem = true;
		return 1;
	}
	s->v = v;
	v[s->n] = *p;
	v[s->n].region = spot_keep(s, p->region);
	v[s->n].az = spot_keep(s, p->az);
	v[s->n].instance_type = spot_keep(s, p->instance_type);
	s->n++;
	return s->nomem;
}

static void spots_free(struct spots *s)
{
	free(s->v);
	gb_strv_free(&s->keep);
}

/*
 * The cached spot prices, when there is a state file to read: one that
 * cannot be read (ctl_state says why on stderr) lists none.
 * RET false: out of memory.
 */
static bool spots_read(struct ctl *ctl, struct spots *s)
{
	gb_error_t e = { 0 };
	gb_err_t rc;
	gb_state_t *st = ctl_state(ctl, false, &rc);

	if (!st)
		return true;
	if (gb_state_spot_price_list(st, NULL, spot_take, s, &e) && !s->nomem)
		fprintf(stderr, "gpuburstctl: warning: spot prices not listed: %s\n", e.text);
	return !s->nomem;
}

static json_t *spots_json(const struct spots *s, const struct uses *u)
{
	json_t *a = json_array();

	for (size_t i = 0; i < s->n; i++) {
		const struct gb_spot_price *p = &s->v[i];
		const struct use *x = use_find(u, p->region, p->instance_type);

		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s,s:f,s:s,s:f,s:f,s:b,s:o}",
						   "region", p->region, "az", p->az, "type",
						   p->instance_type, "capacity", "spot",
						   "usd_per_hour", p->usd_per_hour, "source",
						   "DescribeSpotPriceHistory", "seen_at", p->seen_at,
						   "fetched_at", p->fetched_at, "used", x != NULL,
						   "nodesets", x ? strv_json(&x->nodesets) :
						   json_array()));
	}
	return a;
}

static void spots_show(const struct gb_conf *conf, const struct spots *s,
		       const struct uses *u)
{
	char price[32], names[256], seen[32], fetched[32], ttl[32];
	struct ctl_table t;

	if (!s->n)
		return;
	printf("spot prices cached from DescribeSpotPriceHistory (policy.spot_price_ttl %s): %zu, "
	       "before the file's for spot instances\n",
	       ctl_dur(conf->policy.spot_price_ttl, ttl, sizeof(ttl)), s->n);
	ctl_table_init(&t, 7, "REGION", "TYPE", "AZ", ">USD/HOUR", "SINCE", "FETCHED", "USED");
	for (size_t i = 0; i < s->n; i++) {
		const struct gb_spot_price *p = &s->v[i];
		const struct use *x = use_find(u, p->region, p->instance_type);

		snprintf(price, sizeof(price), "%.6g", p->usd_per_hour);
		ctl_table_row(&t, p->region, p->instance_type, p->az, price,
			      ctl_time(p->seen_at, seen, sizeof(seen)),
			      ctl_time(p->fetched_at, fetched, sizeof(fetched)),
			      x ? strv_join(&x->nodesets, names, sizeof(names)) : "-");
	}
	ctl_table_print(&t, stdout);
	ctl_table_free(&t);
}

static void prices_show_json(const struct gb_conf *conf, const char *path,
			     const struct gb_price *v, size_t n, const struct uses *u,
			     const struct spots *s)
{
	json_t *doc = json_object(), *a = json_array(), *m = json_array();

	for (size_t i = 0; i < n; i++) {
		const struct use *x = use_find(u, v[i].region, v[i].type);
		json_t *o = price_json(&v[i]);

		json_object_set_new(o, "used", json_boolean(x != NULL));
		json_object_set_new(o, "nodesets", x ? strv_json(&x->nodesets) : json_array());
		json_array_append_new(a, o);
	}
	for (size_t i = 0; i < u->n; i++) {
		if (gb_conf_price(conf, u->v[i].region, u->v[i].type, GB_CAPACITY_ON_DEMAND,
				  NULL) >= 0)
			continue;
		json_array_append_new(m, json_pack("{s:s,s:s,s:o}", "region", u->v[i].region,
						   "type", u->v[i].type, "nodesets",
						   strv_json(&u->v[i].nodesets)));
	}
	json_object_set_new(doc, "path", ctl_jstr(conf->prices_path));
	json_object_set_new(doc, "file", json_string(path));
	json_object_set_new(doc, "source", ctl_jstr(conf->prices_source));
	json_object_set_new(doc, "refreshed_at", conf->prices_refreshed_at > 0 ?
			    json_real(conf->prices_refreshed_at) : json_null());
	json_object_set_new(doc, "prices", a);
	json_object_set_new(doc, "spot_prices", spots_json(s, u));
	json_object_set_new(doc, "missing", m);
	ctl_json_result(doc);
}

static void prices_show(const struct gb_price *v, size_t n, const struct uses *u)
{
	struct ctl_table t;
	char price[32], names[256];

	ctl_table_init(&t, 5, "REGION", "TYPE", "CAPACITY", ">USD/HOUR", "USED");
	for (size_t i = 0; i < n; i++) {
		const struct use *x = use_find(u, v[i].region, v[i].type);

		snprintf(price, sizeof(price), "%.6g", v[i].usd_per_hour);
		ctl_table_row(&t, v[i].region, v[i].type, gb_conf_capacity_name(v[i].kind), price,
			      x ? strv_join(&x->nodesets, names, sizeof(names)) : "-");
	}
	ctl_table_print(&t, stdout);
	ctl_table_free(&t);
}

/* One warning per launchable (region, type) without an on-demand price. */
static void warn_missing(const struct gb_conf *conf, const struct uses *u)
{
	char names[256];

	for (size_t i = 0; i < u->n; i++) {
		const struct use *x = &u->v[i];

		if (gb_conf_price(conf, x->region, x->type, GB_CAPACITY_ON_DEMAND, NULL) >= 0)
			continue;
		fprintf(stderr, "gpuburstctl: warning: no on-demand price of %s in %s "
			"(nodeset %s can launch it there): its cost is unknown\n",
			x->type, x->region, strv_join(&x->nodesets, names, sizeof(names)));
	}
}

gb_err_t ctl_cmd_prices(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = { CTL_COMMON_LONGOPTS, { 0 } };
	const struct gb_conf *conf;
	const struct gb_price *v;
	struct uses u = { 0 };
	struct spots s = { 0 };
	char path[4096], when[32];
	bool first = true;
	gb_err_t rc;
	size_t n;
	int c;

	while ((c = ctl_getopt(ctl, "prices", argc, argv, ":jh", longopts, &first, &rc)) != -1) {
		if (c == CTL_OPT_DONE)
			return rc;
		return ctl_unimplemented("prices", c);
	}
	if (optind < argc)
		return ctl_usage("prices", "unexpected argument '%s'", argv[optind]);
	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	if (!gb_conf_prices_file(conf, path, sizeof(path)))
		return ctl_fail(GB_E_CONFIG, "prices: %s/%s is too long for a path",
				conf->state_dir, GB_PRICES_FILE);
	if (!uses_collect(conf, &u) || !spots_read(ctl, &s)) {
		uses_free(&u);
		spots_free(&s);
		return ctl_fail(GB_E_NOMEM, "prices: out of memory");
	}
	v = gb_conf_prices(conf, &n);
	if (ctl->json) {
		prices_show_json(conf, path, v, n, &u, &s);
	} else if (conf->prices_path) {
		printf("prices %s: %zu prices, from %s, refreshed %s\n", conf->prices_path, n,
		       conf->prices_source ? conf->prices_source : "?",
		       ctl_time(conf->prices_refreshed_at, when, sizeof(when)));
		if (strcmp(conf->prices_path, path) != 0)
			printf("the file shipped with gpuburst: the site has none (%s; gpuburstctl "
			       "prices refresh writes it, starting from these lines)\n", path);
		prices_show(v, n, &u);
	} else {
		printf("prices: no price file %s, none installed at %s: no price is known "
		       "(make one with gpuburstctl prices refresh --from FILE, FILE an AWS Price "
		       "List offer file for AmazonEC2: gpuburstctl(8))\n", path, GB_PRICES_SHIPPED);
	}
	if (!ctl->json)
		spots_show(conf, &s, &u);
	warn_missing(conf, &u);
	uses_free(&u);
	spots_free(&s);
	return GB_E_OK;
}

/*****************************************************************************
 *  refresh: reading an offer file
 *****************************************************************************/

/*
 * The bulk offer file of one region is some hundreds of MB (us-east-1's
 * is the largest).  jansson builds the whole document before a product is
 * looked at: the process needs about 6 times the file's size in memory
 * (measured with jansson 2.14: 400 MB for a 67 MB offer file shaped like
 * AWS's), so a refresh from a 500 MB file wants 3 GB.  The limit keeps a wrong file (a
 * whole-world offer, a disk image) from taking the host's memory.
 */
#define OFFER_MAX_MIB 2048
#define OFFER_MAX ((size_t)OFFER_MAX_MIB * 1024 * 1024)
#define OFFER_CODE "AmazonEC2"
#define OFFER_FORMAT "v1.0"
#define PRICE_MAX 100000.0
/* The longest Capacity Block EC2 sells: 182 days. */
#define BLOCK_DAYS_MAX 182

/*
 * The products gpuburst prices: what RunInstances without a license, an
 * image's software or a dedicated host costs an hour (capacitystatus Used:
 * not the fee of an unused or allocated reservation).
 */
static const struct {
	const char *attr;
	const char *want;
} linux_on_demand[] = {
	{ "operatingSystem", "Linux" },
	{ "tenancy", "Shared" },
	{ "preInstalledSw", "NA" },
	{ "capacitystatus", "Used" },
	{ "licenseModel", "No License required" },
};

/* What one file gave, for the report. */
struct offer {
	const char *file;			/* BORROWED argv */
	char *publication_date;			/* NEW copies: the document dies */
	char *version;
	struct gb_strv regions;			/* the regions its products cover */
	size_t products, compute, other, not_catalog, other_region, no_price, kept;
};

/* The union of the files' on-demand prices; strings in [keep]. */
struct refresh {
	struct offer *offers;
	size_t n_offers;
	struct gb_price *v;
	char **sku;				/* v[i]'s product, for a conflict */
	size_t n;
	struct gb_strv keep;
	struct gb_strv regions;			/* every file's, sorted unique */
	const struct gb_conf *conf;		/* its catalog decides the types */
	char **only;				/* --region, or NULL: all */
	size_t n_only;
	int block_days;				/* --capacity-blocks [--days]: 0 off */
	struct ctl_block_prices blocks;
};

struct reader {
	int fd;
	size_t left;				/* bytes still allowed */
	bool over;
	int error;
};

/* json_load_callback: read(2), failing one byte past the limit. */
static size_t read_some(void *buf, size_t n, void *data)
{
	struct reader *r = data;
	ssize_t got;

	if (n > r->left + 1)
		n = r->left + 1;
	do
		got = read(r->fd, buf, n);
	while (got < 0 && errno == EINTR);
	if (got < 0) {
		r->error = errno;
		return (size_t)-1;
	}
	if ((size_t)got > r->left) {
		r->over = true;
		return (size_t)-1;
	}
	r->left -= (size_t)got;
	return (size_t)got;
}

/* OUT *doc NEW (json_decref).  RET GB_E_OK, or an error naming [file]. */
static gb_err_t offer_load(const struct ctl *ctl, const char *file, json_t **doc,
			   gb_error_t *err)
{
	struct reader r = { -1, OFFER_MAX, false, 0 };
	json_error_t je;
	gb_error_t e;
	gb_err_t rc;

	*doc = NULL;
	/* set-uid: a file the caller may not read is not read for them */
	if (ctl->setid && access(file, R_OK) != 0)
		return gb_errorf(err, GB_E_PERM, "%s: %s", file, strerror(errno));
	rc = gb_file_open(file, OFFER_MAX, &r.fd, NULL, &e);
	if (rc == GB_E_NOTFOUND)
		return gb_errorf(err, rc, "%s: no such file", file);
	if (rc == GB_E_INVALID)
		return gb_errorf(err, rc, "%s: larger than %d MiB, the limit of an offer file",
				 file, OFFER_MAX_MIB);
	if (rc)
		return gb_errorf(err, rc, "%s", e.text);
	*doc = json_load_callback(read_some, &r, 0, &je);
	close(r.fd);
	if (r.over)
		rc = gb_errorf(err, GB_E_INVALID, "%s: larger than %d MiB, the limit of an offer file",
			       file, OFFER_MAX_MIB);
	else if (r.error)
		rc = gb_errorf(err, GB_E_IO, "%s: read: %s", file, strerror(r.error));
	else if (!*doc)
		rc = gb_errorf(err, GB_E_INVALID, "%s: not JSON: %s (line %d, column %d)", file,
			       je.text, je.line, je.column);
	if (rc) {
		json_decref(*doc);
		*doc = NULL;
	}
	return rc;
}

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/*
 * The top of an offer file (AWS Price List, "Reading the service price
 * list file": formatVersion, offerCode, publicationDate, products, terms).
 * OUT *products, *on_demand BORROWED from [doc].
 */
static gb_err_t offer_check(struct offer *o, json_t *doc, json_t **products,
			    json_t **on_demand, gb_error_t *err)
{
	const char *code, *fmt, *pub;
	json_t *terms;

	if (!json_is_object(doc))
		return gb_errorf(err, GB_E_INVALID, "%s: not an AWS Price List offer file (not a JSON object)",
				 o->file);
	if (!(code = jstr(doc, "offerCode")))
		return gb_errorf(err, GB_E_INVALID, "%s: not an AWS Price List offer file (no \"offerCode\")",
				 o->file);
	if (strcmp(code, OFFER_CODE) != 0)
		return gb_errorf(err, GB_E_INVALID, "%s: the offer of %.64s, not of " OFFER_CODE
				 " (.../offers/v1.0/aws/AmazonEC2/current/REGION/index.json)",
				 o->file, code);
	if (!(fmt = jstr(doc, "formatVersion")) || strcmp(fmt, OFFER_FORMAT) != 0)
		return gb_errorf(err, GB_E_INVALID, "%s: formatVersion %.32s, this gpuburst reads "
				 OFFER_FORMAT, o->file, fmt ? fmt : "missing");
	if (!(pub = jstr(doc, "publicationDate")))
		return gb_errorf(err, GB_E_INVALID, "%s: no \"publicationDate\"", o->file);
	if (!json_is_object(*products = json_object_get(doc, "products")))
		return gb_errorf(err, GB_E_INVALID, "%s: no \"products\" object", o->file);
	terms = json_object_get(doc, "terms");
	if (!json_is_object(*on_demand = json_object_get(terms, "OnDemand")))
		return gb_errorf(err, GB_E_INVALID, "%s: no \"terms\": {\"OnDemand\": ...} object",
				 o->file);
	if (!(o->publication_date = strdup(pub)) ||
	    (jstr(doc, "version") && !(o->version = strdup(jstr(doc, "version")))))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	return GB_E_OK;
}

/* "1.0060000000": digits, at most one '.', between 0 and PRICE_MAX. */
static bool price_parse(const char *s, double *out)
{
	size_t digits = strspn(s, "0123456789");
	char *end;

	if (!digits || (s[digits] && (s[digits] != '.' || !s[digits + 1] ||
				      s[digits + 1 + strspn(s + digits + 1, "0123456789")])))
		return false;
	errno = 0;
	*out = strtod(s, &end);
	return !errno && !*end && *out >= 0 && *out <= PRICE_MAX;
}

/* One price dimension: OUT *usd, or -1 for a unit other than hours. */
static gb_err_t dimension(const struct offer *o, const char *sku, const char *code,
			  const char *rate, json_t *d, double *usd, gb_error_t *err)
{
	const char *unit = jstr(d, "unit"), *s;

	if (!unit)
		return gb_errorf(err, GB_E_INVALID, "%s: terms.OnDemand.%s.%s.priceDimensions.%s: no \"unit\"",
				 o->file, sku, code, rate);
	*usd = -1;
	if (strcmp(unit, "Hrs") != 0)
		return GB_E_OK;
	if (!(s = jstr(json_object_get(d, "pricePerUnit"), "USD")))
		return gb_errorf(err, GB_E_INVALID, "%s: terms.OnDemand.%s.%s.priceDimensions.%s: no \"pricePerUnit\": {\"USD\": ...}",
				 o->file, sku, code, rate);
	if (!price_parse(s, usd))
		return gb_errorf(err, GB_E_INVALID, "%s: terms.OnDemand.%s.%s.priceDimensions.%s: USD \"%.32s\" is not a price (a decimal number, 0 to 100000)",
				 o->file, sku, code, rate, s);
	return GB_E_OK;
}

/*
 * The hourly on-demand price of product [sku].  OUT *usd, -1 when it has
 * none (no on-demand term, no hourly dimension).
 */
static gb_err_t on_demand_price(const struct offer *o, json_t *od, const char *sku,
				double *usd, gb_error_t *err)
{
	json_t *t = json_object_get(od, sku), *term, *dims, *d;
	const char *code, *rate;
	double p = -1;
	gb_err_t rc;

	*usd = -1;
	if (!t)
		return GB_E_OK;
	if (!json_is_object(t))
		return gb_errorf(err, GB_E_INVALID, "%s: terms.OnDemand.%s is not an object",
				 o->file, sku);
	json_object_foreach(t, code, term) {
		if (!json_is_object(dims = json_object_get(term, "priceDimensions")))
			return gb_errorf(err, GB_E_INVALID, "%s: terms.OnDemand.%s.%s: no \"priceDimensions\" object",
					 o->file, sku, code);
		json_object_foreach(dims, rate, d) {
			if ((rc = dimension(o, sku, code, rate, d, &p, err)))
				return rc;
			if (p < 0)
				continue;
			if (*usd >= 0 && p != *usd)
				return gb_errorf(err, GB_E_INVALID, "%s: terms.OnDemand.%s: two hourly prices, %.6g and %.6g USD",
						 o->file, sku, *usd, p);
			*usd = p;
		}
	}
	return GB_E_OK;
}

static const char *keep(struct refresh *f, const char *s)
{
	if (gb_strv_add(&f->keep, s))
		return NULL;
	return f->keep.v[f->keep.n - 1];
}

/* Add (region, type) at [usd]; the same pair twice must have one price. */
static gb_err_t price_add(struct refresh *f, const struct offer *o, const char *sku,
			  const char *region, const char *type, double usd, gb_error_t *err)
{
	struct gb_price *v;
	char **s;

	for (size_t i = 0; i < f->n; i++) {
		if (strcmp(f->v[i].region, region) || strcmp(f->v[i].type, type))
			continue;
		if (f->v[i].usd_per_hour == usd)
			return GB_E_OK;
		return gb_errorf(err, GB_E_INVALID, "%s: two Linux on-demand prices of %s in %s: %.6g (product %s) and %.6g (product %s)",
				 o->file, type, region, f->v[i].usd_per_hour, f->sku[i], usd, sku);
	}
	if (!(v = realloc(f->v, (f->n + 1) * sizeof(*v))))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	f->v = v;
	if (!(s = realloc(f->sku, (f->n + 1) * sizeof(*s))))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	f->sku = s;
	v[f->n].region = keep(f, region);
	v[f->n].type = keep(f, type);
	v[f->n].kind = GB_CAPACITY_ON_DEMAND;
	v[f->n].usd_per_hour = usd;
	s[f->n] = (char *)keep(f, sku);
	if (!v[f->n].region || !v[f->n].type || !s[f->n])
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	f->n++;
	return GB_E_OK;
}

/* A Compute Instance product's attributes: NULL when one is missing (named in [err]). */
static const char *attr(const struct offer *o, const char *sku, json_t *attrs,
			const char *name, gb_error_t *err)
{
	const char *s = jstr(attrs, name);

	if (!s)
		gb_errorf(err, GB_E_INVALID, "%s: products.%s (Compute Instance): no attribute \"%s\"",
			  o->file, sku, name);
	return s;
}

/* One product: counted, and its price taken when gpuburst may use it. */
static gb_err_t product(struct refresh *f, struct offer *o, const char *sku, json_t *p,
			json_t *od, gb_error_t *err)
{
	const char *fam = jstr(p, "productFamily"), *region, *type, *loc;
	json_t *attrs = json_object_get(p, "attributes");
	double usd;
	gb_err_t rc;

	o->products++;
	if (!json_is_object(p) || !fam)
		return gb_errorf(err, GB_E_INVALID, "%s: products.%s: no \"productFamily\"",
				 o->file, sku);
	if (strcmp(fam, "Compute Instance") != 0)
		return GB_E_OK;
	o->compute++;
	if (!json_is_object(attrs))
		return gb_errorf(err, GB_E_INVALID, "%s: products.%s: no \"attributes\" object",
				 o->file, sku);
	if (!(type = attr(o, sku, attrs, "instanceType", err)) ||
	    !(region = attr(o, sku, attrs, "regionCode", err)))
		return GB_E_INVALID;
	if (!ctl_region_wanted(f->only, f->n_only, region)) {
		o->other_region++;
		return GB_E_OK;
	}
	/* a Local Zone's or Outpost's price is not its parent region's */
	if ((loc = jstr(attrs, "locationType")) && strcmp(loc, "AWS Region") != 0) {
		o->other++;
		return GB_E_OK;
	}
	if (gb_strv_find(&o->regions, region) < 0 && gb_strv_add(&o->regions, region))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (size_t i = 0; i < GB_ARRAY_LEN(linux_on_demand); i++) {
		const char *v = attr(o, sku, attrs, linux_on_demand[i].attr, err);

		if (!v)
			return GB_E_INVALID;
		if (strcmp(v, linux_on_demand[i].want) != 0) {
			o->other++;
			return GB_E_OK;
		}
	}
	if (!gb_conf_instance_type(f->conf, type)) {
		o->not_catalog++;
		return GB_E_OK;
	}
	if ((rc = on_demand_price(o, od, sku, &usd, err)))
		return rc;
	/* 0: a product listed without a price, not a free hour */
	if (usd <= 0) {
		o->no_price++;
		return GB_E_OK;
	}
	if ((rc = price_add(f, o, sku, region, type, usd, err)))
		return rc;
	o->kept++;
	return GB_E_OK;
}

static gb_err_t offer_read(const struct ctl *ctl, struct refresh *f, struct offer *o,
			   gb_error_t *err)
{
	json_t *doc = NULL, *products = NULL, *od = NULL, *p;
	const char *sku;
	gb_err_t rc;

	if ((rc = offer_load(ctl, o->file, &doc, err)))
		return rc;
	if ((rc = offer_check(o, doc, &products, &od, err)))
		goto out;
	json_object_foreach(products, sku, p) {
		if ((rc = product(f, o, sku, p, od, err)))
			goto out;
	}
	/* a file all of whose products --region leaves out gives nothing, rightly */
	if (!o->kept && (!f->n_only || o->regions.n))
		rc = gb_errorf(err, GB_E_NOTFOUND, "%s: no usable price: of %zu products, %zu Compute Instances, %zu in other regions, %zu not Linux on-demand, %zu not in the catalog, %zu without an hourly price",
			       o->file, o->products, o->compute, o->other_region, o->other,
			       o->not_catalog, o->no_price);
	for (size_t i = 0; !rc && i < o->regions.n; i++)
		if (gb_strv_find(&f->regions, o->regions.v[i]) < 0 &&
		    gb_strv_add(&f->regions, o->regions.v[i]))
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	json_decref(doc);
	return rc;
}

/*****************************************************************************
 *  refresh: the new file
 *****************************************************************************/

/* A Capacity Block price EC2 gave for [p]'s (region, type), or NULL. */
static const struct ctl_block_price *block_priced(const struct refresh *f,
						  const struct gb_price *p)
{
	for (size_t i = 0; i < f->blocks.n; i++) {
		const struct ctl_block_price *b = &f->blocks.v[i];

		if (b->p.usd_per_hour >= 0 && strcmp(b->p.region, p->region) == 0 &&
		    strcmp(b->p.type, p->type) == 0)
			return b;
	}
	return NULL;
}

/*
 * What the file will hold: the files' on-demand prices, the Capacity
 * Block prices EC2 offered, and from the file in use every other line
 * (other capacity kinds, regions no file covers, blocks EC2 offered none
 * of).  OUT *out NEW (free; strings BORROWED from [f] and [conf]).
 */
static gb_err_t merged(const struct gb_conf *conf, const struct refresh *f,
		       struct gb_price **out, size_t *n, size_t *kept)
{
	const struct gb_price *old;
	size_t n_old;
	struct gb_price *v;

	old = gb_conf_prices(conf, &n_old);
	*n = *kept = 0;
	if (!(v = malloc((f->n + f->blocks.n + n_old + 1) * sizeof(*v))))
		return GB_E_NOMEM;
	for (size_t i = 0; i < n_old; i++) {
		if (old[i].kind == GB_CAPACITY_ON_DEMAND &&
		    gb_strv_find(&f->regions, old[i].region) >= 0)
			continue;
		if (old[i].kind == GB_CAPACITY_BLOCK && block_priced(f, &old[i]))
			continue;
		v[(*n)++] = old[i];
		(*kept)++;
	}
	for (size_t i = 0; i < f->n; i++)
		v[(*n)++] = f->v[i];
	for (size_t i = 0; i < f->blocks.n; i++)
		if (f->blocks.v[i].p.usd_per_hour >= 0)
			v[(*n)++] = f->blocks.v[i].p;
	*out = v;
	return GB_E_OK;
}

static int price_cmp(const void *a, const void *b)
{
	const struct gb_price *x = a, *y = b;
	int r = strcmp(x->region, y->region);

	if (!r)
		r = strcmp(x->type, y->type);
	return r ? r : (int)x->kind - (int)y->kind;
}

/* "aws-pricing AmazonEC2 REGION... VERSION..." of the offer files. */
static void offers_source(const struct refresh *f, char *buf, size_t n)
{
	struct gb_buf b = GB_BUF_INIT;
	struct gb_strv versions = { 0 };

	for (size_t i = 0; i < f->n_offers; i++) {
		const struct offer *o = &f->offers[i];
		const char *ver = o->version ? o->version : o->publication_date;

		if (gb_strv_find(&versions, ver) < 0)
			gb_strv_add(&versions, ver);
	}
	gb_buf_puts(&b, "aws-pricing " OFFER_CODE);
	for (size_t i = 0; i < f->regions.n; i++)
		gb_buf_printf(&b, " %s", f->regions.v[i]);
	for (size_t i = 0; i < versions.n; i++)
		gb_buf_printf(&b, " %s", versions.v[i]);
	/* the header line holds 256 characters: many regions are counted */
	if (gb_buf_failed(&b) || b.len > 256)
		snprintf(buf, n, "aws-pricing " OFFER_CODE " %zu regions %s", f->regions.n,
			 versions.n ? versions.v[0] : "");
	else
		snprintf(buf, n, "%s", gb_buf_str(&b));
	gb_strv_free(&versions);
	gb_buf_free(&b);
}

/*
 * The file's source line: "aws-pricing AmazonEC2 REGION... VERSION..."
 * for offer files (else the file in use's), then "+ ec2
 * DescribeCapacityBlockOfferings" when blocks were priced.  The header
 * line holds 256 characters: the words that do not fit give way.
 */
static void source_of(const struct gb_conf *conf, const struct refresh *f, char *buf,
		      size_t n)
{
	static const char blocks[] = " + ec2 DescribeCapacityBlockOfferings";
	size_t len, cut = 256 - (sizeof(blocks) - 1);
	char *sp;

	if (f->n_offers)
		offers_source(f, buf, n);
	else
		snprintf(buf, n, "%s", conf->prices_source ? conf->prices_source : "none");
	if (!f->block_days || strstr(buf, blocks))
		return;
	if ((len = strlen(buf)) > cut) {
		buf[cut] = '\0';
		if ((sp = strrchr(buf, ' ')))
			*sp = '\0';
		len = strlen(buf);
	}
	snprintf(buf + len, n - len, "%s", blocks);
}

static json_t *offer_json(const struct offer *o)
{
	return json_pack("{s:s,s:s,s:s?,s:o,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I}}",
			 "path", o->file, "publication_date", o->publication_date,
			 "version", o->version, "regions", strv_json(&o->regions),
			 "products", "read", (json_int_t)o->products,
			 "compute_instances", (json_int_t)o->compute,
			 "other_regions", (json_int_t)o->other_region,
			 "not_linux_on_demand", (json_int_t)o->other,
			 "not_in_catalog", (json_int_t)o->not_catalog,
			 "no_hourly_price", (json_int_t)o->no_price,
			 "prices", (json_int_t)o->kept);
}

static json_t *block_json(const struct ctl_block_price *b)
{
	return json_pack("{s:s,s:s,s:o,s:s?,s:i,s:I}", "region", b->p.region, "type", b->p.type,
			 "usd_per_hour", b->p.usd_per_hour >= 0 ? json_real(b->p.usd_per_hour) :
			 json_null(), "offering", b->offering, "duration_hours", b->hours,
			 "offerings", (json_int_t)b->offerings);
}

/* One line per (region, type) asked about: its price, or why there is none. */
static void blocks_report(const struct gb_conf *conf, const struct refresh *f)
{
	for (size_t i = 0; i < f->blocks.n; i++) {
		const struct ctl_block_price *b = &f->blocks.v[i];
		enum gb_capacity_kind used = GB_CAPACITY_ON_DEMAND;
		double was = gb_conf_price(conf, b->p.region, b->p.type, GB_CAPACITY_BLOCK, &used);

		if (b->p.usd_per_hour >= 0) {
			printf("%s %s: capacity-block %.6g USD per instance-hour (cheapest of %zu "
			       "offering%s: %s, %d h)\n", b->p.region, b->p.type, b->p.usd_per_hour,
			       b->offerings, b->offerings == 1 ? "" : "s", b->offering, b->hours);
			continue;
		}
		printf("%s %s: EC2 offers no Capacity Block of %d day%s now; %s\n", b->p.region,
		       b->p.type, f->block_days, f->block_days == 1 ? "" : "s",
		       was >= 0 && used == GB_CAPACITY_BLOCK ? "its capacity-block line is kept" :
		       was >= 0 ? "its instances are priced at the on-demand line" :
		       "its instances have no price");
	}
	printf("%zu DescribeCapacityBlockOfferings call%s\n", f->blocks.calls,
	       f->blocks.calls == 1 ? "" : "s");
}

static void refresh_report(const struct ctl *ctl, const struct refresh *f, const char *path,
			   const char *source, const struct gb_price *v, size_t n, size_t kept,
			   bool dry)
{
	if (ctl->json) {
		json_t *doc = json_object(), *a = json_array(), *fs = json_array();
		json_t *bl = json_array();

		for (size_t i = 0; i < f->n_offers; i++)
			json_array_append_new(fs, offer_json(&f->offers[i]));
		for (size_t i = 0; i < f->blocks.n; i++)
			json_array_append_new(bl, block_json(&f->blocks.v[i]));
		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, price_json(&v[i]));
		json_object_set_new(doc, "path", json_string(path));
		json_object_set_new(doc, "source", json_string(source));
		json_object_set_new(doc, "dry_run", json_boolean(dry));
		json_object_set_new(doc, "files", fs);
		json_object_set_new(doc, "capacity_blocks", bl);
		json_object_set_new(doc, "kept", json_integer((json_int_t)kept));
		json_object_set_new(doc, "prices", a);
		ctl_json_result(doc);
		return;
	}
	for (size_t i = 0; i < f->n_offers; i++) {
		const struct offer *o = &f->offers[i];

		printf("%s: %zu on-demand price%s, published %s (%zu of %zu Compute Instances "
		       "not Linux on-demand, %zu not in the catalog, %zu in other regions)\n",
		       o->file, o->kept, o->kept == 1 ? "" : "s", o->publication_date, o->other, o->compute,
		       o->not_catalog, o->other_region);
	}
	if (f->block_days)
		blocks_report(f->conf, f);
	printf("%s %zu prices to %s: ", dry ? "would write" : "wrote", n, path);
	if (f->n_offers)
		printf("%zu on-demand from %zu file%s, ", f->n, f->n_offers,
		       f->n_offers == 1 ? "" : "s");
	if (f->block_days)
		printf("%zu capacity-block from EC2, ", n - f->n - kept);
	printf("%zu kept from the file in use (other capacity kinds, other regions)\n", kept);
	if (dry) {
		printf("source %s\n", source);
		for (size_t i = 0; i < n; i++)
			printf("%s %s %s %.6g\n", v[i].region, v[i].type,
			       gb_conf_capacity_name(v[i].kind), v[i].usd_per_hour);
		printf("%s: unchanged (dry run)\n", path);
	} else {
		printf("%s: programs read it when they next load the configuration "
		       "(slurmctld: scontrol reconfigure)\n", path);
	}
}

/* After the options: read every file, then write once.  Nothing is written on error. */
static gb_err_t refresh_run(struct ctl *ctl, struct refresh *f, bool dry)
{
	struct gb_policy_actor who = { 0 };
	const struct gb_conf *conf;
	struct gb_price *v = NULL;
	char path[4096], source[300];
	gb_error_t err = { 0 };
	size_t n = 0, kept = 0;
	gb_err_t rc;

	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	f->conf = conf;
	if (!gb_conf_prices_file(conf, path, sizeof(path)))
		return ctl_fail(GB_E_CONFIG, "prices refresh: %s/%s is too long for a path",
				conf->state_dir, GB_PRICES_FILE);
	/* prices decide budgets: writing them is an administrator's act */
	if (!dry && (rc = ctl_authorize(ctl, conf, &who)))
		return rc;
	for (size_t i = 0; i < f->n_offers; i++)
		if ((rc = offer_read(ctl, f, &f->offers[i], &err)))
			return ctl_fail(rc, "prices refresh: %s (nothing written)", err.text);
	for (size_t i = 0; f->n_offers && i < f->n_only; i++)
		if (gb_strv_find(&f->regions, f->only[i]) < 0)
			return ctl_fail(GB_E_NOTFOUND, "prices refresh: --region %s: no product of "
					"that region in the files (nothing written)", f->only[i]);
	if (f->block_days) {
		for (size_t i = 0; i < f->n_only; i++)
			if (!gb_conf_region(conf, f->only[i]))
				return ctl_usage("prices refresh", "--region %s is not configured "
						 "(--capacity-blocks asks its EC2 endpoint)",
						 f->only[i]);
		ctl_log_open(ctl);
		if ((rc = ctl_block_prices_fetch(conf, f->only, f->n_only, f->block_days,
						 &f->blocks, &err)))
			return ctl_fail(rc, "prices refresh: %s (nothing written)", err.text);
	}
	gb_strv_sort_unique(&f->regions);
	source_of(conf, f, source, sizeof(source));
	if (merged(conf, f, &v, &n, &kept))
		return ctl_fail(GB_E_NOMEM, "prices refresh: out of memory");
	qsort(v, n, sizeof(*v), price_cmp);
	if (!dry && (rc = gb_prices_write(path, v, n, source, ctl->now, &err))) {
		rc = ctl_fail(rc, "prices refresh: %s (nothing written)", err.text);
		goto out;
	}
	if (!dry) {
		ctl_log_open(ctl);
		gb_log_notice("prices_refresh by=%s path=%s prices=%zu on_demand=%zu "
			      "capacity_block=%zu kept=%zu", who.name, GB_LOG_Q(path), n, f->n,
			      n - f->n - kept, kept);
	}
	refresh_report(ctl, f, path, source, v, n, kept, dry);
out:
	free(v);
	return rc;
}

gb_err_t ctl_cmd_prices_refresh(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "from", required_argument, NULL, 'f' },
		{ "region", required_argument, NULL, 'r' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "capacity-blocks", no_argument, NULL, 'b' },
		{ "days", required_argument, NULL, 'd' },
		CTL_COMMON_LONGOPTS, { 0 }
	};
	struct refresh f = { 0 };
	bool first = true, dry = false, blocks = false;
	gb_err_t rc = GB_E_OK;
	long days = 0;
	int c;

	/* at most argc of each: arrays sized once */
	f.offers = calloc((size_t)argc + 1, sizeof(*f.offers));
	f.only = calloc((size_t)argc + 1, sizeof(*f.only));
	if (!f.offers || !f.only) {
		rc = ctl_fail(GB_E_NOMEM, "prices refresh: out of memory");
		goto out;
	}
	while ((c = ctl_getopt(ctl, "prices refresh", argc, argv, ":jhf:r:nbd:", longopts, &first,
			       &rc)) != -1) {
		if (c == CTL_OPT_DONE)
			goto out;
		if (c == 'f' && *optarg)
			f.offers[f.n_offers++].file = optarg;
		else if (c == 'r' && *optarg)
			f.only[f.n_only++] = optarg;
		else if (c == 'n')
			dry = true;
		else if (c == 'b')
			blocks = true;
		else if (c == 'd')
			rc = ctl_parse_long("prices refresh", "--days", optarg, 1, BLOCK_DAYS_MAX,
					    &days);
		else if (c == 'f' || c == 'r')
			rc = ctl_usage("prices refresh", "--%s needs a value",
				       c == 'f' ? "from" : "region");
		else
			rc = ctl_unimplemented("prices refresh", c);
		if (rc)
			goto out;
	}
	if (optind < argc)
		rc = ctl_usage("prices refresh", "unexpected argument '%s'", argv[optind]);
	else if (!f.n_offers && !blocks)
		rc = ctl_usage("prices refresh", "--from FILE or --capacity-blocks is required "
			       "(FILE an AWS Price List offer file for AmazonEC2; gpuburstctl "
			       "downloads nothing)");
	else if (days && !blocks)
		rc = ctl_usage("prices refresh", "--days is the length of the Capacity Blocks "
			       "asked about: it needs --capacity-blocks");
	else {
		f.block_days = blocks ? (days ? (int)days : 1) : 0;
		rc = refresh_run(ctl, &f, dry);
	}
out:
	for (size_t i = 0; f.offers && i < f.n_offers; i++) {
		free(f.offers[i].publication_date);
		free(f.offers[i].version);
		gb_strv_free(&f.offers[i].regions);
	}
	free(f.offers);
	free(f.only);
	free(f.v);
	free(f.sku);
	ctl_block_prices_free(&f.blocks);
	gb_strv_free(&f.keep);
	gb_strv_free(&f.regions);
	return rc;
}
