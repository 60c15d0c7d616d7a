/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plan.c - the plan model: build, copy, free, JSON (jansson) round trip
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_plan.h"
#include "gb_str.h"

gb_err_t gb_plan_new(const char *instance_type, const char *planner,
		     int total, struct gb_plan **out, gb_error_t *err)
{
	struct gb_plan *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return gb_errorf(err, GB_E_NOMEM, "plan: out of memory");
	p->instance_type = gb_strdup0(instance_type ? instance_type : "");
	p->planner = gb_strdup0(planner ? planner : "");
	p->total = total;
	if (!p->instance_type || !p->planner) {
		gb_plan_free(p);
		return gb_errorf(err, GB_E_NOMEM, "plan: out of memory");
	}
	*out = p;
	return GB_E_OK;
}

static void step_clear(struct gb_plan_step *s)
{
	free(s->region);
	free(s->az);
	free(s->subnet);
	free(s->type);
	free(s->target);
	free(s->reason);
}

void gb_plan_free(struct gb_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_steps; i++)
		step_clear(&p->steps[i]);
	free(p->steps);
	free(p->instance_type);
	free(p->planner);
	free(p->rationale);
	free(p);
}

gb_err_t gb_plan_add_step(struct gb_plan *p, const char *region,
			  const char *az, const char *subnet, const char *type,
			  int batch, int expect, const char *reason,
			  gb_error_t *err)
{
	struct gb_plan_step *v, *s;

	v = realloc(p->steps, (p->n_steps + 1) * sizeof(*v));
	if (!v)
		return gb_errorf(err, GB_E_NOMEM, "plan: out of memory");
	p->steps = v;
	s = &v[p->n_steps];
	memset(s, 0, sizeof(*s));
	s->region = gb_strdup0(region ? region : "");
	s->az = gb_strdup0(az ? az : "");
	s->subnet = gb_strdup0(subnet ? subnet : "");
	s->type = gb_strdup0(type && *type ? type : p->instance_type);
	s->reason = gb_strdup0(reason ? reason : "");
	s->batch = batch;
	s->expect = expect;
	if (!s->region || !s->az || !s->subnet || !s->type || !s->reason) {
		step_clear(s);
		return gb_errorf(err, GB_E_NOMEM, "plan: out of memory");
	}
	p->n_steps++;
	return GB_E_OK;
}

gb_err_t gb_plan_step_capacity(struct gb_plan_step *s,
			       enum gb_capacity_kind capacity,
			       const char *target, gb_error_t *err)
{
	char *t = NULL;

	if (target && !(t = strdup(target)))
		return gb_errorf(err, GB_E_NOMEM, "plan: out of memory");
	free(s->target);
	s->target = t;
	s->capacity = capacity;
	return GB_E_OK;
}

gb_err_t gb_plan_add_pool_step(struct gb_plan *plan, const struct gb_pool *p,
			       int batch, int expect, const char *reason,
			       gb_error_t *err)
{
	gb_err_t rc = gb_plan_add_step(plan, p->region, p->az, p->subnet, p->type,
				       batch, expect, reason, err);

	if (rc)
		return rc;
	rc = gb_plan_step_capacity(&plan->steps[plan->n_steps - 1], p->capacity,
				   p->target, err);
	if (rc)
		step_clear(&plan->steps[--plan->n_steps]);
	return rc;
}

bool gb_plan_same_capacity(const struct gb_pool *a, const struct gb_pool *b)
{
	return strcmp(a->region, b->region) == 0 && strcmp(a->az, b->az) == 0 &&
	       a->type_index == b->type_index && a->capacity == b->capacity &&
	       gb_strcmp0(a->target, b->target) == 0;
}

gb_err_t gb_plan_set_rationale(struct gb_plan *p, const char *text,
			       gb_error_t *err)
{
	char *t = NULL;

	if (text && !(t = strdup(text)))
		return gb_errorf(err, GB_E_NOMEM, "plan: out of memory");
	free(p->rationale);
	p->rationale = t;
	return GB_E_OK;
}

/*****************************************************************************
 *  JSON
 *****************************************************************************/

static json_t *step_json(const struct gb_plan_step *s)
{
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:i,s:i,s:s}", "region", s->region,
			      "az", s->az, "subnet", s->subnet, "type", s->type,
			      "capacity", gb_conf_capacity_name(s->capacity),
			      "batch", s->batch, "expect", s->expect, "reason",
			      s->reason);

	if (o && s->target &&
	    json_object_set_new(o, "target", json_string(s->target)) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* RET true and *out for a capacity kind's name ("on-demand", ...). */
static bool capacity_of(const char *name, enum gb_capacity_kind *out)
{
	return gb_conf_capacity_parse(name, out) == GB_E_OK;
}

gb_err_t gb_plan_to_json(const struct gb_plan *p, char **out, gb_error_t *err)
{
	json_t *root, *steps;
	char *text = NULL;
	bool ok;

	*out = NULL;
	root = json_pack("{s:s,s:i,s:s}", "instance_type", p->instance_type,
			 "total", p->total, "planner", p->planner);
	steps = json_array();
	ok = root && steps;
	for (size_t i = 0; ok && i < p->n_steps; i++)
		ok = json_array_append_new(steps, step_json(&p->steps[i])) == 0;
	if (ok && p->rationale)
		ok = json_object_set_new(root, "rationale",
					 json_string(p->rationale)) == 0;
	if (ok)
		ok = json_object_set(root, "steps", steps) == 0;
	if (ok)
		text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(steps);
	json_decref(root);
	if (!text)
		return gb_errorf(err, GB_E_NOMEM, "plan: cannot encode JSON");
	*out = text;
	return GB_E_OK;
}

/* Read member [key] of [obj] as a string; NULL (and an error) if not one. */
static const char *get_str(json_t *obj, const char *key, const char *where,
			   bool optional, gb_error_t *err, gb_err_t *rc)
{
	json_t *v = json_object_get(obj, key);

	if (!v && optional)
		return NULL;
	if (!v || !json_is_string(v)) {
		*rc = gb_errorf(err, GB_E_PARSE, "plan JSON: %s%s%s: expected a string",
				where, *where ? "." : "", key);
		return NULL;
	}
	return json_string_value(v);
}

static bool get_int(json_t *obj, const char *key, const char *where,
		    bool optional, int *out, gb_error_t *err, gb_err_t *rc)
{
	json_t *v = json_object_get(obj, key);
	json_int_t i;

	if (!v && optional)
		return true;
	if (!v || !json_is_integer(v) ||
	    (i = json_integer_value(v)) < -1000000 || i > 1000000) {
		*rc = gb_errorf(err, GB_E_PARSE,
				"plan JSON: %s%s%s: expected an integer", where,
				*where ? "." : "", key);
		return false;
	}
	*out = (int)i;
	return true;
}

static gb_err_t steps_from_json(struct gb_plan *p, json_t *steps,
				gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;
	char where[32];

	for (size_t i = 0; i < json_array_size(steps); i++) {
		json_t *s = json_array_get(steps, i);
		const char *region, *az, *subnet, *type, *reason, *cap, *target;
		enum gb_capacity_kind kind = GB_CAPACITY_ON_DEMAND;
		int batch = 0, expect = 0;

		snprintf(where, sizeof(where), "steps[%zu]", i);
		if (!json_is_object(s))
			return gb_errorf(err, GB_E_PARSE,
					 "plan JSON: %s: expected an object", where);
		if (!(region = get_str(s, "region", where, false, err, &rc)) ||
		    !(az = get_str(s, "az", where, false, err, &rc)) ||
		    !(subnet = get_str(s, "subnet", where, false, err, &rc)) ||
		    !get_int(s, "batch", where, false, &batch, err, &rc) ||
		    !get_int(s, "expect", where, true, &expect, err, &rc))
			return rc;
		reason = get_str(s, "reason", where, true, err, &rc);
		/* absent in plans stored before steps had a type: the plan's */
		type = rc ? NULL : get_str(s, "type", where, true, err, &rc);
		/* absent in plans stored before the capacity ladder: on-demand */
		cap = rc ? NULL : get_str(s, "capacity", where, true, err, &rc);
		target = rc ? NULL : get_str(s, "target", where, true, err, &rc);
		if (rc)
			return rc;
		if (cap && !capacity_of(cap, &kind))
			return gb_errorf(err, GB_E_PARSE,
					 "plan JSON: %s.capacity: \"%.40s\" is not on-demand, spot, reservation or capacity-block",
					 where, cap);
		rc = gb_plan_add_step(p, region, az, subnet, type, batch, expect,
				      reason, err);
		if (!rc && (kind != GB_CAPACITY_ON_DEMAND || target))
			rc = gb_plan_step_capacity(&p->steps[p->n_steps - 1], kind, target,
						   err);
		if (rc)
			return rc;
	}
	return GB_E_OK;
}

gb_err_t gb_plan_from_json(const char *text, struct gb_plan **out,
			   gb_error_t *err)
{
	json_error_t je;
	json_t *root, *steps;
	struct gb_plan *p = NULL;
	const char *type, *planner, *rationale;
	int total = 0;
	gb_err_t rc = GB_E_OK;

	*out = NULL;
	root = json_loads(text ? text : "", JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return gb_errorf(err, GB_E_PARSE, "plan JSON: line %d column %d: %s",
				 je.line, je.column, je.text);
	if (!json_is_object(root)) {
		rc = gb_errorf(err, GB_E_PARSE, "plan JSON: expected an object");
		goto out;
	}
	if (!(type = get_str(root, "instance_type", "", false, err, &rc)) ||
	    !get_int(root, "total", "", false, &total, err, &rc))
		goto out;
	planner = get_str(root, "planner", "", true, err, &rc);
	rationale = rc ? NULL : get_str(root, "rationale", "", true, err, &rc);
	if (rc)
		goto out;
	steps = json_object_get(root, "steps");
	if (!json_is_array(steps)) {
		rc = gb_errorf(err, GB_E_PARSE, "plan JSON: steps: expected an array");
		goto out;
	}
	if ((rc = gb_plan_new(type, planner ? planner : "unknown", total, &p, err)) ||
	    (rc = steps_from_json(p, steps, err)) ||
	    (rc = gb_plan_set_rationale(p, rationale, err)))
		goto out;
	*out = p;
	p = NULL;
out:
	gb_plan_free(p);
	json_decref(root);
	return rc;
}
