/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prices.c - what an instance-hour costs: <state_dir>/prices
 *
 * gpuburst estimates a job's cost, counts spend against budgets and
 * reports cost from one table: US dollars per hour of an instance type in
 * a region, per capacity kind.  `gpuburstctl prices refresh` writes it
 * from an AWS Price List file and EC2's Capacity Block offerings; a site
 * may add reservation and Capacity Block lines by hand (a refresh keeps
 * them).  Until the site has one, the file shipped with gpuburst
 * (GB_PRICES_SHIPPED, etc/prices in the source) is read: the same format,
 * the G families' on-demand prices.  gb_conf_load() reads it
 * like the catalog, so the job_submit plugin reads it at slurmctld's start
 * and reconfigure, never on the submit path.  Format, version 1
 * (gpuburst.yaml(5), PRICE FILE):
 *
 *	gpuburst-prices 1
 *	refreshed 2026-12-06T20:00:00Z
 *	source aws-pricing AmazonEC2 us-east-1 20261201000000
 *	# region type capacity usd_per_hour
 *	us-east-1 g5.xlarge on-demand 1.006
 *
 * capacity is one of on-demand, spot, reservation, capacity-block; the
 * price a decimal number, 0 to 100000.  A (region, type, capacity) is
 * listed once.  Spot prices come from DescribeSpotPriceHistory at run
 * time; a spot line here is the fallback when none is cached.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf_int.h"
#include "gb_str.h"
#include "gb_util.h"

#define MAGIC "gpuburst-prices"
#define PRICES_VERSION 1
#define LINE_MAX_ 256
#define FIELD_MAX_ 64
#define PRICE_MAX 100000.0

static bool name_ok(const char *s, const char *extra)
{
	if (!*s || strlen(s) > FIELD_MAX_)
		return false;
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      strchr(extra, *s)))
			return false;
	}
	return true;
}

/* RET NULL when [p] may be written and read back, else what is wrong. */
static const char *price_problem(const struct gb_price *p)
{
	const char *dot;

	if (!p->region || !name_ok(p->region, "-"))
		return "the region is not a region name (like us-east-1)";
	dot = p->type ? strchr(p->type, '.') : NULL;
	if (!p->type || !name_ok(p->type, ".-") || !dot || dot == p->type || !dot[1] ||
	    strchr(dot + 1, '.'))
		return "the type is not an instance type (like g5.xlarge)";
	if ((unsigned)p->kind >= GB_CAPACITY_COUNT)
		return "the capacity kind is unknown";
	if (!(p->usd_per_hour >= 0 && p->usd_per_hour <= PRICE_MAX))
		return "the price is not between 0 and 100000 dollars an hour";
	return NULL;
}

static int price_cmp(const void *a, const void *b)
{
	const struct gb_price *x = a, *y = b;
	int r = strcmp(x->region, y->region);

	if (!r)
		r = strcmp(x->type, y->type);
	if (!r)
		r = (int)x->kind - (int)y->kind;
	return r;
}

/*****************************************************************************
 *  Writing
 *****************************************************************************/

gb_err_t gb_prices_write(const char *path, const struct gb_price *v, size_t n,
			 const char *source, double refreshed_at, gb_error_t *err)
{
	struct gb_buf b = GB_BUF_INIT;
	struct gb_price *sorted = NULL;
	char stamp[32];
	const char *why;
	gb_err_t rc = GB_E_OK;

	if (!path || !*path)
		return gb_errorf(err, GB_E_INVALID, "price file path is empty");
	if (!source || !*source || !conf_tf_printable(source) || strlen(source) > 256)
		return gb_errorf(err, GB_E_INVALID, "price source must be 1 to 256 printable characters");
	if (!conf_tf_stamp(refreshed_at, stamp, sizeof(stamp)))
		return gb_errorf(err, GB_E_INVALID, "price refresh time %.0f is invalid",
				 refreshed_at);
	if (n > GB_PRICES_MAX_LINES)
		return gb_errorf(err, GB_E_INVALID, "a price file holds at most %d prices, not %zu",
				 GB_PRICES_MAX_LINES, n);
	for (size_t i = 0; i < n; i++) {
		if ((why = price_problem(&v[i])))
			return gb_errorf(err, GB_E_INVALID, "price %zu (%s %s): %s", i + 1,
					 v[i].region ? v[i].region : "-",
					 v[i].type ? v[i].type : "-", why);
	}
	if (n && !(sorted = malloc(n * sizeof(*sorted))))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	if (n)
		memcpy(sorted, v, n * sizeof(*sorted));
	if (n)
		qsort(sorted, n, sizeof(*sorted), price_cmp);
	gb_buf_printf(&b, "%s %d\nrefreshed %s\nsource %s\n", MAGIC, PRICES_VERSION, stamp,
		      source);
	gb_buf_puts(&b, "# region type capacity usd_per_hour\n");
	for (size_t i = 0; i < n; i++) {
		if (i && price_cmp(&sorted[i - 1], &sorted[i]) == 0) {
			rc = gb_errorf(err, GB_E_INVALID, "price of %s %s %s is given twice",
				       sorted[i].region, sorted[i].type,
				       gb_conf_capacity_name(sorted[i].kind));
			goto out;
		}
		gb_buf_printf(&b, "%s %s %s %.6g\n", sorted[i].region, sorted[i].type,
			      gb_conf_capacity_name(sorted[i].kind), sorted[i].usd_per_hour);
	}
	if (gb_buf_failed(&b))
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	else
		rc = gb_file_replace(path, b.data, b.len, 0644, err);
out:
	free(sorted);
	gb_buf_free(&b);
	return rc;
}

/*****************************************************************************
 *  Reading
 *****************************************************************************/

/* One allocation per entry holds its two strings: free(p->region). */
static bool price_line(struct conf_tf *r, char *s, struct gb_price *p)
{
	char *f[5], *e, *blk;
	size_t lr, lt;
	const char *why;
	double v;
	int n = conf_tf_split(s, f, 5);

	if (n != 4) {
		conf_tf_bad(r, "%d fields, expected 4 (region type capacity usd_per_hour)", n);
		return false;
	}
	if (gb_conf_capacity_parse(f[2], &p->kind)) {
		conf_tf_bad(r, "capacity '%.32s' is not on-demand, spot, reservation or capacity-block",
			    f[2]);
		return false;
	}
	errno = 0;
	v = strtod(f[3], &e);
	if (errno || e == f[3] || *e || !isfinite(v) || strspn(f[3], "0123456789.") != strlen(f[3])) {
		conf_tf_bad(r, "price '%.32s' is not a decimal number", f[3]);
		return false;
	}
	p->usd_per_hour = v;
	lr = strlen(f[0]);
	lt = strlen(f[1]);
	if (!(blk = malloc(lr + lt + 2))) {
		conf_nomem(r->c);
		r->failed = true;
		return false;
	}
	memcpy(blk, f[0], lr + 1);
	memcpy(blk + lr + 1, f[1], lt + 1);
	p->region = blk;
	p->type = blk + lr + 1;
	if ((why = price_problem(p))) {
		conf_tf_bad(r, "%.64s %.64s: %s", f[0], f[1], why);
		free(blk);
		p->region = p->type = NULL;
		return false;
	}
	return true;
}

/* An entry and the line it came from, sorted together. */
struct ent {
	struct gb_price p;
	unsigned line;
};

static int ent_cmp(const void *a, const void *b)
{
	return price_cmp(&((const struct ent *)a)->p, &((const struct ent *)b)->p);
}

/* Read the entries, sort them for lookups; a duplicate sorts next to its twin. */
static void entries(struct conf_tf *r, char **p, char *end, size_t cap, struct gb_conf *conf)
{
	struct ent *v = calloc(cap, sizeof(*v));
	size_t n = 0;
	char *s;

	if (!v) {
		conf_nomem(r->c);
		r->failed = true;
		return;
	}
	while ((s = conf_tf_next_entry(r, p, end))) {
		if (n == cap) {
			conf_tf_bad(r, "more than %d prices", GB_PRICES_MAX_LINES);
			break;
		}
		if (!price_line(r, s, &v[n].p))
			break;
		v[n++].line = r->line;
	}
	qsort(v, n, sizeof(*v), ent_cmp);
	for (size_t i = 1; i < n && !r->failed; i++) {
		const struct ent *a = &v[i - 1], *b = &v[i];

		if (price_cmp(&a->p, &b->p) == 0) {
			r->line = a->line > b->line ? a->line : b->line;
			conf_tf_bad(r, "the price of %s %s %s is given twice (first on line %u)",
				    b->p.region, b->p.type, gb_conf_capacity_name(b->p.kind),
				    a->line < b->line ? a->line : b->line);
		}
	}
	for (size_t i = 0; i < n; i++)
		conf->prices_[conf->n_prices_++] = v[i].p;
	free(v);
}

void conf_prices_load(struct conf_ctx *c)
{
	struct gb_conf *conf = c->conf;
	struct conf_tf r = { .c = c, .what = "prices", .line_max = LINE_MAX_ };
	char path[PATH_MAX], *text = NULL, *p;
	size_t len = 0, lines = 1;

	if (!gb_conf_prices_file(conf, path, sizeof(path)))
		return;
	r.path = path;
	if (access(path, F_OK) != 0) {
		/* as the catalog: a user who may not search state_dir knows no price */
		if (errno != ENOENT)
			return;
		/* no file of the site's: the one shipped with gpuburst, if installed */
		r.path = GB_PRICES_SHIPPED;
		if (access(r.path, F_OK) != 0)
			return;
	}
	if (!conf_tf_read(&r, GB_PRICES_MAX_BYTES, &text, &len))
		return;
	for (p = text; (p = memchr(p, '\n', len - (size_t)(p - text))); p++)
		lines++;
	if (lines > GB_PRICES_MAX_LINES)
		lines = GB_PRICES_MAX_LINES;
	if (!(conf->prices_path = strdup(r.path)) ||
	    !(conf->prices_ = calloc(lines, sizeof(*conf->prices_)))) {
		conf_nomem(c);
		goto out;
	}
	p = text;
	if (conf_tf_header(&r, &p, text + len, MAGIC, PRICES_VERSION,
			   &conf->prices_refreshed_at, &conf->prices_source))
		entries(&r, &p, text + len, lines, conf);
out:
	free(text);
	if (r.failed)
		conf_prices_free(conf);
}

void conf_prices_free(struct gb_conf *conf)
{
	for (size_t i = 0; i < conf->n_prices_; i++)
		free((char *)conf->prices_[i].region);
	free(conf->prices_);
	free(conf->prices_path);
	free(conf->prices_source);
	conf->prices_ = NULL;
	conf->n_prices_ = 0;
	conf->prices_path = conf->prices_source = NULL;
}

bool gb_conf_prices_file(const struct gb_conf *conf, char *buf, size_t n)
{
	if (n == 0)
		return false;
	if (!conf->state_dir ||
	    snprintf(buf, n, "%s/%s", conf->state_dir, GB_PRICES_FILE) >= (int)n) {
		buf[0] = '\0';
		return false;
	}
	return true;
}

/*****************************************************************************
 *  Lookups
 *****************************************************************************/

const struct gb_price *gb_conf_prices(const struct gb_conf *conf, size_t *n)
{
	*n = conf ? conf->n_prices_ : 0;
	return conf ? conf->prices_ : NULL;
}

static const struct gb_price *find(const struct gb_conf *conf, const char *region,
				   const char *type, enum gb_capacity_kind kind)
{
	struct gb_price key = { region, type, kind, 0 };

	if (!conf || !conf->n_prices_)
		return NULL;
	return bsearch(&key, conf->prices_, conf->n_prices_, sizeof(key), price_cmp);
}

double gb_conf_price(const struct gb_conf *conf, const char *region, const char *type,
		     enum gb_capacity_kind kind, enum gb_capacity_kind *kind_used)
{
	const struct gb_price *p;

	if (!region || !type)
		return -1;
	if (!(p = find(conf, region, type, kind)) && kind != GB_CAPACITY_ON_DEMAND)
		p = find(conf, region, type, GB_CAPACITY_ON_DEMAND);
	if (!p)
		return -1;
	if (kind_used)
		*kind_used = p->kind;
	return p->usd_per_hour;
}
