/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * validate.c - THE plan validator: one set of hard rules for every planner
 *
 * Whatever proposed a plan (the heuristic here, a language model later),
 * nothing is launched unless the plan passes these rules.  Each rejection
 * says exactly what is wrong, so that a stored "rejected" plan version
 * explains itself and an LLM can be told why.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gb_plan.h"
#include "gb_str.h"

struct verdict {
	struct gb_errlist *errs;
	gb_error_t *err;
	int n;
};

static void reject(struct verdict *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void reject(struct verdict *v, const char *fmt, ...)
{
	char msg[GB_ERROR_TEXT_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (v->n++ == 0)
		gb_errorf(v->err, GB_E_PLAN, "%s", msg);
	if (v->errs)
		gb_errlist_add(v->errs, "%s", msg);
}

static void families(const struct gb_conf *conf, struct gb_buf *b)
{
	static const char *const defaults[] = { "g4dn", "g5", "g5g", "g6", "g6e" };
	const char *const *f = defaults;
	size_t n = GB_ARRAY_LEN(defaults);

	if (conf && conf->policy.n_allowed_families) {
		f = (const char *const *)conf->policy.allowed_families;
		n = conf->policy.n_allowed_families;
	}
	for (size_t i = 0; i < n; i++)
		gb_buf_printf(b, "%s%s", i ? ", " : "", f[i]);
}

static void check_type(const struct gb_plan_scope *s, const struct gb_plan *p,
		       struct verdict *v)
{
	const char *t = p->instance_type ? p->instance_type : "";
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t e = { 0 };

	if (!gb_conf_type_allowed(s->conf, t)) {
		families(s->conf, &b);
		reject(v, "instance type %s is not allowed: only GPU families %s",
		       *t ? t : "(none)", gb_buf_str(&b));
	} else if (gb_conf_type_check(s->conf, t, &e)) {
		reject(v, "%s", e.text);	/* not in the catalog, fractional, ... */
	} else if (s->instance_type && strcmp(t, s->instance_type) != 0) {
		reject(v, "instance type %s differs from the request's %s", t,
		       s->instance_type);
	}
	gb_buf_free(&b);
}

static bool allowed(const struct gb_plan_scope *s, const char *region)
{
	for (size_t i = 0; i < s->n_allowed; i++)
		if (strcmp(s->allowed[i], region) == 0)
			return true;
	return false;
}

static void allowed_set(const struct gb_plan_scope *s, struct gb_buf *b)
{
	gb_buf_putc(b, '{');
	for (size_t i = 0; i < s->n_allowed; i++)
		gb_buf_printf(b, "%s%s", i ? ", " : "", s->allowed[i]);
	gb_buf_putc(b, '}');
}

/* RET whether (region, az, subnet) is a configured pool; else reject. */
static void check_pool(const struct gb_plan_scope *s, size_t k,
		       const struct gb_plan_step *st, struct verdict *v)
{
	const struct gb_conf_region *r = gb_conf_region(s->conf, st->region);
	const struct gb_conf_az *az = NULL;

	if (!r) {
		reject(v, "step %zu: region %s is not configured", k, st->region);
		return;
	}
	for (size_t i = 0; i < r->n_azs && !az; i++)
		if (strcmp(r->azs[i].name, st->az) == 0)
			az = &r->azs[i];
	if (!az) {
		reject(v, "step %zu: availability zone %s is not configured in %s",
		       k, *st->az ? st->az : "(none)", st->region);
		return;
	}
	for (size_t i = 0; i < az->n_subnets; i++)
		if (strcmp(az->subnets[i], st->subnet) == 0)
			return;
	reject(v, "step %zu: subnet %s is not configured in %s", k,
	       *st->subnet ? st->subnet : "(none)", st->az);
}

/* A step's type: its own, or the plan's (a step made without one). */
static const char *step_type(const struct gb_plan *p, const struct gb_plan_step *st)
{
	return st->type && *st->type ? st->type : p->instance_type ? p->instance_type : "";
}

static bool same_pool(const struct gb_plan *p, const struct gb_plan_step *a,
		      const struct gb_plan_step *b)
{
	return strcmp(a->region, b->region) == 0 && strcmp(a->az, b->az) == 0 &&
	       strcmp(a->subnet, b->subnet) == 0 &&
	       strcmp(step_type(p, a), step_type(p, b)) == 0 &&
	       a->capacity == b->capacity && gb_strcmp0(a->target, b->target) == 0;
}

static bool named(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

static void ladder_text(const struct gb_plan_scope *s, struct gb_buf *b)
{
	gb_buf_putc(b, '{');
	for (size_t i = 0; i < s->n_rungs; i++)
		gb_buf_printf(b, "%s%s", i ? ", " : "", gb_conf_capacity_name(s->rungs[i].kind));
	if (s->n_rungs == 0)
		gb_buf_puts(b, "on-demand");
	gb_buf_putc(b, '}');
}

/*
 * The step's capacity must be a rung of the request's ladder, and its
 * target one that rung names: a reservation or resource group of its
 * list (none for open reservations), any Capacity Block when the rung
 * lists none; on-demand and spot have no target.
 */
static void check_step_capacity(const struct gb_plan_scope *s, size_t k,
				const struct gb_plan_step *st, struct verdict *v)
{
	static const struct gb_conf_rung od = { .kind = GB_CAPACITY_ON_DEMAND };
	const struct gb_conf_rung *r = s->n_rungs ? NULL : &od;
	const char *name = gb_conf_capacity_name(st->capacity);
	struct gb_buf b = GB_BUF_INIT;

	for (size_t i = 0; !r && i < s->n_rungs; i++)
		if (s->rungs[i].kind == st->capacity)
			r = &s->rungs[i];
	if (!r) {
		ladder_text(s, &b);
		reject(v, "step %zu: capacity %s is not on the request's ladder %s", k, name,
		       gb_buf_str(&b));
		gb_buf_free(&b);
		return;
	}
	switch (r->kind) {
	case GB_CAPACITY_ON_DEMAND:
	case GB_CAPACITY_SPOT:
		if (st->target)
			reject(v, "step %zu: %s capacity has no target (got %.64s)", k, name,
			       st->target);
		return;
	case GB_CAPACITY_RESERVATION:
		if (!st->target ? !r->open :
		    !named(r->ids, r->n_ids, st->target) &&
		    !named(r->resource_groups, r->n_resource_groups, st->target))
			reject(v, "step %zu: reservation %.64s is not one the ladder names", k,
			       st->target ? st->target : "(open)");
		return;
	case GB_CAPACITY_BLOCK:
		if (!st->target || (r->n_ids && !named(r->ids, r->n_ids, st->target)))
			reject(v, "step %zu: capacity block %.64s is not one the ladder names", k,
			       st->target ? st->target : "(none)");
		return;
	}
}

static bool request_type(const struct gb_plan_scope *s, const char *t)
{
	if (!s->types || s->n_types == 0)
		return !s->instance_type || strcmp(s->instance_type, t) == 0;
	for (size_t i = 0; i < s->n_types; i++)
		if (s->types[i] && strcmp(s->types[i], t) == 0)
			return true;
	return false;
}

static void request_types(const struct gb_plan_scope *s, struct gb_buf *b)
{
	gb_buf_putc(b, '{');
	if (!s->types || s->n_types == 0)
		gb_buf_printf(b, "%s", s->instance_type ? s->instance_type : "");
	for (size_t i = 0; s->types && i < s->n_types; i++)
		gb_buf_printf(b, "%s%s", i ? ", " : "", s->types[i]);
	gb_buf_putc(b, '}');
}

/* The step's type must be one the request may launch. */
static void check_step_type(const struct gb_plan_scope *s, const struct gb_plan *p,
			    size_t k, const struct gb_plan_step *st, struct verdict *v)
{
	const char *t = step_type(p, st);
	struct gb_buf b = GB_BUF_INIT;

	if (!request_type(s, t)) {
		request_types(s, &b);
		reject(v, "step %zu: instance type %s is not one of the request's types %s",
		       k, *t ? t : "(none)", gb_buf_str(&b));
	} else if (!gb_conf_type_allowed(s->conf, t)) {
		families(s->conf, &b);
		reject(v, "step %zu: instance type %s is not allowed: only GPU families %s",
		       k, t, gb_buf_str(&b));
	}
	gb_buf_free(&b);
}

static void check_step(const struct gb_plan_scope *s, const struct gb_plan *p,
		       size_t i, struct verdict *v)
{
	const struct gb_plan_step *st = &p->steps[i];
	int bmax = s->conf ? s->conf->policy.batch_max : 4;
	size_t k = i + 1;
	struct gb_buf b = GB_BUF_INIT;

	if (!allowed(s, st->region)) {
		allowed_set(s, &b);
		reject(v, "step %zu: region %s is outside the allowed set %s", k,
		       *st->region ? st->region : "(none)", gb_buf_str(&b));
		gb_buf_free(&b);
	} else {
		check_pool(s, k, st, v);
	}
	check_step_type(s, p, k, st, v);
	check_step_capacity(s, k, st, v);
	if (st->batch < 1 || st->batch > bmax)
		reject(v, "step %zu: batch %d is outside 1..%d (policy.batch_max)",
		       k, st->batch, bmax);
	for (size_t j = 0; j < i; j++) {
		if (same_pool(p, st, &p->steps[j])) {
			bool od = st->capacity == GB_CAPACITY_ON_DEMAND;

			reject(v, "step %zu: duplicate of step %zu (%s %s %s %s%s%s%s%s)", k,
			       j + 1, st->region, st->az, st->subnet, step_type(p, st),
			       od ? "" : " ", od ? "" : gb_conf_capacity_name(st->capacity),
			       st->target ? " " : "", st->target ? st->target : "");
			break;
		}
	}
}

gb_err_t gb_plan_validate(const struct gb_plan_scope *s,
			  const struct gb_plan *p, struct gb_errlist *errs,
			  gb_error_t *err)
{
	struct verdict v = { errs, err, 0 };

	if (!s || !s->conf || !p)
		return gb_errorf(err, GB_E_INVALID, "validate: no plan or scope");
	check_type(s, p, &v);
	if (p->total > s->target)
		reject(&v, "total %d exceeds the request's %d nodes", p->total,
		       s->target);
	else if (p->total < 1)
		reject(&v, "total %d: a plan must aim at 1 instance or more",
		       p->total);
	if (p->n_steps == 0)
		reject(&v, "the plan has no steps");
	for (size_t i = 0; i < p->n_steps; i++)
		check_step(s, p, i, &v);
	return v.n ? GB_E_PLAN : GB_E_OK;
}
