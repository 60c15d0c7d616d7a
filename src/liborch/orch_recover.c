/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_recover.c - a re-run of a request picks up where a crash left it
 *
 * EC2 idempotency (research s3): the same ClientToken with the same
 * parameters returns the original reservation instead of launching again.
 * Every attempt still "started" or "unknown" is therefore re-sent exactly
 * as it was (token, pool, counts, tags and UserData rebuilt from the node
 * list its "launch" event kept), before anything new is planned.  Nodes
 * that already have a live instance count as filled.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "orch_int.h"

struct old_attempt {
	int64_t id;
	int seq;
	char *region, *az, *subnet, *token;
	char *type;		/* the type it was sent with; NULL: r->type
				 * (recorded before attempts had several) */
	char *capacity;		/* the rung's kind it drew on */
	char *target;		/* ... and its reservation, or NULL */
	int min, max;
	enum gb_attempt_state state;
	char *nodes;		/* from the launch event, comma-separated */
	bool named;		/* ... which says it was named at launch */
};

struct recov {
	struct orch_run *r;
	struct old_attempt *v;
	size_t n, cap;
	bool nomem;
	struct gb_strv extras_ids, extras_regions;
};

static int attempt_row(const struct gb_attempt *a, void *arg)
{
	struct recov *x = arg;
	struct old_attempt *o;

	if (a->seq >= x->r->next_seq)
		x->r->next_seq = a->seq + 1;
	if (a->state != GB_ATTEMPT_STARTED && a->state != GB_ATTEMPT_UNKNOWN)
		return 0;
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 8;
		struct old_attempt *v = realloc(x->v, cap * sizeof(*v));

		if (!v) {
			x->nomem = true;
			return 1;
		}
		x->v = v;
		x->cap = cap;
	}
	o = &x->v[x->n++];
	memset(o, 0, sizeof(*o));
	o->id = a->id;
	o->seq = a->seq;
	o->region = gb_strdup0(a->region);
	o->az = gb_strdup0(a->az);
	o->subnet = gb_strdup0(a->subnet);
	o->type = gb_strdup0(a->instance_type);
	o->capacity = gb_strdup0(a->capacity ? a->capacity : "on-demand");
	o->target = gb_strdup0(a->capacity_target);
	o->token = gb_strdup0(a->client_token);
	o->min = a->min_count;
	o->max = a->asked;
	o->state = a->state;
	x->nomem |= !o->region || !o->token || !o->capacity ||
		    (a->capacity_target && !o->target);
	return x->nomem;
}

/* "seq=3 ... [named=1 ]nodes=a,b,c" */
static int event_row(const struct gb_event *e, void *arg)
{
	struct recov *x = arg;
	const char *nodes;
	long seq;
	char num[16];
	size_t k = 0;

	if (!e->kind || strcmp(e->kind, "launch") || !e->detail ||
	    !gb_str_has_prefix(e->detail, "seq="))
		return 0;
	for (const char *p = e->detail + 4; *p && *p != ' ' && k + 1 < sizeof(num); p++)
		num[k++] = *p;
	num[k] = '\0';
	nodes = strstr(e->detail, " nodes=");
	if (!nodes || gb_parse_long(num, 0, 1L << 30, &seq))
		return 0;
	for (size_t i = 0; i < x->n; i++) {
		if (x->v[i].seq == (int)seq && !x->v[i].nodes) {
			x->v[i].nodes = strdup(nodes + 7);
			x->v[i].named = memmem(e->detail, (size_t)(nodes - e->detail),
					       " named=1", 8) != NULL;
		}
	}
	return 0;
}

static struct slot *slot_named(struct orch_run *r, const char *node)
{
	for (int i = 0; node && i < r->n; i++)
		if (strcmp(r->slots[i].name, node) == 0)
			return &r->slots[i];
	return NULL;
}

static void slot_reuse(struct orch_run *r, struct slot *s,
		       const struct gb_instance *in, bool ours)
{
	s->state = SLOT_REUSED;
	s->instance_id = gb_strdup0(in->instance_id);
	s->region = gb_strdup0(in->region);
	s->az = gb_strdup0(in->az);
	s->subnet = gb_strdup0(in->subnet);
	s->type = gb_strdup0(in->instance_type);
	s->private_ip = gb_strdup0(in->private_ip);
	s->public_ip = gb_strdup0(in->public_ip);
	s->tagged = !ours;	/* ours: the crash may have come before CreateTags */
	s->attempt_id = in->attempt_id;
	r->remaining--;
}

/* Live instances of this request: filled nodes, or leftovers to end. */
static int ours_row(const struct gb_instance *in, void *arg)
{
	struct recov *x = arg;
	struct slot *s = slot_named(x->r, in->node);

	/* a terminate the crash interrupted is sent again (idempotent) */
	if (s && s->state == SLOT_EMPTY && in->state != GB_INST_TERMINATING) {
		slot_reuse(x->r, s, in, true);
		return 0;
	}
	if (gb_strv_add(&x->extras_ids, in->instance_id) ||
	    gb_strv_add(&x->extras_regions, in->region))
		x->nomem = true;
	return x->nomem;
}

static int theirs_row(const struct gb_instance *in, void *arg)
{
	struct recov *x = arg;
	struct slot *s = slot_named(x->r, in->node);

	if (s && s->state == SLOT_EMPTY && in->state != GB_INST_TERMINATING)
		slot_reuse(x->r, s, in, false);
	return 0;
}

static gb_err_t live_instances(struct recov *x, gb_error_t *err)
{
	struct orch_run *r = x->r;
	struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
	gb_err_t rc;

	f.request_id = r->req->id;
	f.alive = true;
	if ((rc = gb_state_instance_list(r->st, &f, ours_row, x, err)))
		return rc;
	for (int i = 0; i < r->n && !rc; i++) {
		struct gb_instance_filter g = GB_INSTANCE_FILTER_ANY;

		if (r->slots[i].state != SLOT_EMPTY)
			continue;
		g.node = r->slots[i].name;
		g.alive = true;
		rc = gb_state_instance_list(r->st, &g, theirs_row, x, err);
	}
	if (!rc && x->nomem)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	return rc;
}

/*
 * The pool of [a]: its subnet, the type and the capacity it was sent with
 * (an exhausted reservation's pool is still one: excluded, found here).
 */
static long find_pool(const struct orch_run *r, const struct old_attempt *a)
{
	const char *type = a->type && *a->type ? a->type : r->type;

	for (size_t i = 0; i < r->facts.n_pools; i++) {
		const struct gb_pool *p = &r->facts.pools[i];

		if (strcmp(p->region, a->region) == 0 &&
		    gb_strcmp0(p->az, a->az) == 0 &&
		    gb_strcmp0(p->subnet, a->subnet) == 0 && strcmp(p->type, type) == 0 &&
		    strcmp(gb_conf_capacity_name(p->capacity), a->capacity) == 0 &&
		    gb_strcmp0(p->target, a->target) == 0)
			return (long)i;
	}
	return -1;
}

/* Split "a,b,c" into exactly [max] BORROWED names of the request. */
static bool split_nodes(struct orch_run *r, const char *list, int max,
			const char **out)
{
	int k = 0;
	const char *p = list;

	while (p && *p && k < max) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *name = NULL;

		for (int i = 0; i < r->n && !name; i++)
			if (strlen(r->slots[i].name) == len &&
			    strncmp(r->slots[i].name, p, len) == 0)
				name = r->slots[i].name;
		if (!name)
			return false;
		out[k++] = name;
		p = e ? e + 1 : NULL;
	}
	return k == max && (!p || !*p);
}

static gb_err_t give_up(struct orch_run *r, const struct old_attempt *a,
			const char *why, gb_error_t *err)
{
	struct gb_attempt f = { 0 };

	f.id = a->id;
	f.state = GB_ATTEMPT_FAILED;
	f.error_code = "NotRecoverable";
	f.error_class = "CONFIG";
	f.message = why;
	orch_trace(r, "recover", "seq=%d token=%s not re-sent: %s", a->seq,
		   a->token, why);
	return gb_state_attempt_finish(r->st, &f, err);
}

static gb_err_t resend(struct recov *x, gb_error_t *err)
{
	struct orch_run *r = x->r;
	struct orch_call **calls = calloc(x->n + 1, sizeof(*calls));
	size_t n = 0;
	gb_err_t rc = GB_E_OK;

	if (!calls)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (size_t i = 0; i < x->n && !rc; i++) {
		struct old_attempt *a = &x->v[i];
		long p = find_pool(r, a);
		struct orch_call *c;

		if (p < 0 || !a->nodes || a->max < 1) {
			rc = give_up(r, a, p < 0 ? "its pool is no longer a candidate" :
				     "no node list was recorded for it", err);
			continue;
		}
		if (!(c = calloc(1, sizeof(*c))) ||
		    !(c->nodes = calloc((size_t)a->max, sizeof(*c->nodes)))) {
			free(c);
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			break;
		}
		calls[n++] = c;
		c->pool = (size_t)p;
		c->seq = a->seq;
		c->min = a->min;
		c->max = a->max;
		c->n_new = a->max;
		c->attempt_id = a->id;
		c->recovered = true;
		c->named = a->named;
		gb_strlcpy(c->token, a->token, sizeof(c->token));
		if (!split_nodes(r, a->nodes, a->max, c->nodes)) {
			n--;
			orch_call_free(c);
			rc = give_up(r, a, "its node list does not match the request", err);
			continue;
		}
		/* its recorded pool: the ClientToken stands for the same call */
		rc = orch_call_params(r, c, err);
	}
	if (!rc && n) {
		orch_trace(r, "recover", "re-sending %zu attempt(s) with their own tokens", n);
		rc = orch_wave(r, calls, n, err);
	}
	for (size_t i = 0; i < n; i++)
		orch_call_free(calls[i]);
	free(calls);
	return rc;
}

static bool held_by_slot(const struct orch_run *r, const char *id)
{
	for (int i = 0; i < r->n; i++)
		if (gb_strcmp0(r->slots[i].instance_id, id) == 0)
			return true;
	return false;
}

/*
 * Leftover live instances of this request that no node holds: a node's
 * second instance, or one recorded as an extra whose terminate did not
 * happen.  A re-sent launch may have given one of them its node after
 * all (its launch index names a node no other instance holds): kept.
 */
static gb_err_t end_leftovers(struct recov *x, gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;
	int done = 0;

	for (size_t i = 0; i < x->extras_ids.n && !rc; i++) {
		const char *id[1] = { x->extras_ids.v[i] };

		if (held_by_slot(x->r, id[0]))
			continue;
		x->r->extras++;
		rc = orch_terminate_ids(x->r, x->extras_regions.v[i], id, 1,
					"extra: left over by an earlier run", &done, err);
	}
	x->r->terminated += done;
	return rc;
}

/* With locality, recovered instances pin the job to their group. */
static void lock_group(struct orch_run *r)
{
	for (int i = 0; r->grouped && i < r->n; i++) {
		const struct slot *s = &r->slots[i];

		if (s->state != SLOT_REUSED && s->state != SLOT_COMMITTED &&
		    s->state != SLOT_TENTATIVE)
			continue;
		for (size_t k = 0; k < r->facts.n_pools; k++) {
			const struct gb_pool *p = &r->facts.pools[k];

			if (strcmp(p->region, s->region) == 0 &&
			    (r->locality != GB_LOCALITY_AZ || gb_strcmp0(p->az, s->az) == 0)) {
				r->lock_group = orch_group_of(r, k);
				orch_trace(r, "recover", "locality: the job stays in %s",
					   p->region);
				return;
			}
		}
	}
}

gb_err_t orch_recover(struct orch_run *r, gb_error_t *err)
{
	struct recov x = { 0 };
	gb_err_t rc;

	x.r = r;
	rc = gb_state_attempt_list(r->st, r->req->id, attempt_row, &x, err);
	if (!rc && x.nomem)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	if (!rc && x.n)
		rc = gb_state_event_list(r->st, r->req->id, event_row, &x, err);
	if (!rc)
		rc = live_instances(&x, err);
	if (!rc && (x.n || r->remaining < r->n))
		orch_trace(r, "recover", "open_attempts=%zu live_nodes=%d next_seq=%d",
			   x.n, r->n - r->remaining, r->next_seq);
	if (!rc && x.n)
		rc = resend(&x, err);
	if (!rc && x.extras_ids.n)
		rc = end_leftovers(&x, err);
	if (!rc)
		lock_group(r);
	if (!rc)
		rc = orch_check(r, "recover", err);
	for (size_t i = 0; i < x.n; i++) {
		free(x.v[i].region);
		free(x.v[i].az);
		free(x.v[i].subnet);
		free(x.v[i].type);
		free(x.v[i].capacity);
		free(x.v[i].target);
		free(x.v[i].token);
		free(x.v[i].nodes);
	}
	free(x.v);
	gb_strv_free(&x.extras_ids);
	gb_strv_free(&x.extras_regions);
	return rc;
}
