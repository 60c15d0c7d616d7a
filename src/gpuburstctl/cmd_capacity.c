/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_capacity.c - gpuburstctl capacity | capacity forget
 *
 * `capacity` shows the memory the planners use, read by libplan's own
 * functions (gb_plan_memory_of, gb_plan_quota_view, gb_plan_quota_room) so
 * that every number means what it means to them: per pool the default
 * strategy's estimate (from levels measured when the pool ran dry and lower
 * bounds proved when it gave all it was asked, capped by its region's quota
 * room), the lower bound, the last capacity refusal and the cool-down left,
 * the cached offering; per region the quota walls.  The asked/got/ice
 * counters, which only best_effort and all_or_nothing plan with, are shown
 * apart, and only when a nodeset uses one of those strategies (--json keeps
 * them as they were, within schema gpuburstctl/1).
 *
 * `capacity forget` clears memory through gb_state_memory_forget(), in one
 * transaction with its event.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "gb_log.h"
#include "gb_plan.h"

/*****************************************************************************
 *  Quota walls
 *****************************************************************************/

struct qrow {
	struct gb_quota q;		/* strings owned below */
	char *region, *quota, *code;
	struct gb_plan_quota_view v;
};

struct orow {			/* a cached offering */
	char *region, *az, *type;	/* az NULL: region-level */
	bool offered, fresh, shown;
	double fetched_at;
};

struct cap {
	struct ctl *ctl;
	gb_state_t *st;			/* the state file read, or NULL: none */
	const struct gb_conf *conf;
	const char *region, *type;	/* filters, or NULL */
	struct qrow *qv;
	size_t nq;
	struct orow *ov;
	size_t no;
	gb_err_t rc;
	gb_error_t err;
	json_t *pools, *quotas, *offerings;
	struct ctl_table pt, qt, ct;
	size_t n_pools, n_walls;	/* rows shown */
	bool show_counters;
};

static bool unit_vcpus(const char *quota)
{
	return strncmp(quota, "vcpus:", 6) == 0;
}

static int quota_cb(const struct gb_quota *q, void *arg)
{
	struct cap *c = arg;
	struct qrow *v, *r;

	if (c->region && strcmp(c->region, q->region))
		return 0;
	if (!(v = realloc(c->qv, (c->nq + 1) * sizeof(*v)))) {
		c->rc = gb_errorf(&c->err, GB_E_NOMEM, "out of memory");
		return 1;
	}
	c->qv = v;
	r = &v[c->nq];
	memset(r, 0, sizeof(*r));
	r->q = *q;
	r->q.region = r->region = strdup(q->region);
	r->q.quota = r->quota = strdup(q->quota);
	r->q.code = r->code = strdup(q->code);
	if (!r->region || !r->quota || !r->code) {
		free(r->region);
		free(r->quota);
		free(r->code);
		c->rc = gb_errorf(&c->err, GB_E_NOMEM, "out of memory");
		return 1;
	}
	c->nq++;
	if ((c->rc = gb_plan_quota_view(c->conf, c->st, &r->q, c->ctl->now,
					c->conf->policy.capacity_half_life, &r->v, &c->err)))
		return 1;
	return 0;
}

static void quota_out(struct cap *c, const struct qrow *r)
{
	double left = r->v.limit - r->v.held;
	bool account = strcmp(r->q.quota, GB_PLAN_QUOTA_ACCOUNT) == 0;
	char lim[64], held[32], lf[32], since[32], until[64], in[32];

	if (left < 0)
		left = 0;
	c->n_walls++;
	if (c->quotas) {
		json_t *j = json_object();

		json_object_set_new(j, "region", json_string(r->q.region));
		json_object_set_new(j, "quota", json_string(r->q.quota));
		json_object_set_new(j, "code", json_string(r->q.code));
		json_object_set_new(j, "unit", json_string(unit_vcpus(r->q.quota) ? "vcpus" :
							   account ? "region" : "instances"));
		json_object_set_new(j, "limit", json_real(r->v.limit));
		json_object_set_new(j, "held", json_real(r->v.held));
		json_object_set_new(j, "left", json_real(left));
		json_object_set_new(j, "heeded", json_boolean(r->v.heeded));
		json_object_set_new(j, "refusals", json_real(r->q.refusals));
		json_object_set_new(j, "since", ctl_jtime(r->q.last_refusal_at));
		json_object_set_new(j, "until", r->v.heeded ? ctl_jtime(r->v.forget_at)
							    : json_null());
		json_array_append_new(c->quotas, j);
		return;
	}
	if (account)	/* the account may not use the region at all */
		snprintf(lim, sizeof(lim), "region refused");
	else
		snprintf(lim, sizeof(lim), "%.0f %s", r->v.limit,
			 unit_vcpus(r->q.quota) ? "vCPUs" : "instances");
	snprintf(held, sizeof(held), "%.0f", r->v.held);
	snprintf(lf, sizeof(lf), "%.0f", left);
	if (r->v.heeded)
		snprintf(until, sizeof(until), "%s (in %s)",
			 ctl_time(r->v.forget_at, since, sizeof(since)),
			 ctl_dur(r->v.forget_at - c->ctl->now, in, sizeof(in)));
	else
		snprintf(until, sizeof(until), "forgotten (ignored)");
	ctl_table_row(&c->qt, r->q.region, r->q.quota, r->q.code, lim, held,
		      r->v.heeded ? lf : "-",
		      ctl_time(r->q.last_refusal_at, since, sizeof(since)), until);
}

/*
 * The room the region's walls leave [type], as gb_plan_quota_rooms() gives
 * a pool (the smallest).  Spot when every nodeset of the type is spot.
 * OUT [code] of that wall.
 */
static double room_for(const struct cap *c, const char *region, const char *type,
		       const char **code)
{
	size_t n = 0, n_spot = 0;
	double room = HUGE_VAL;
	bool spot;

	for (size_t i = 0; i < c->conf->n_nodesets; i++) {
		const struct gb_conf_nodeset *ns = &c->conf->nodesets[i];

		if (gb_conf_nodeset_has_type(ns, type)) {
			n++;
			n_spot += ns->market == GB_MARKET_SPOT;
		}
	}
	spot = n > 0 && n_spot == n;
	*code = NULL;
	for (size_t i = 0; i < c->nq; i++) {
		double r;

		if (strcmp(c->qv[i].q.region, region))
			continue;
		r = gb_plan_quota_room(c->conf, &c->qv[i].q, &c->qv[i].v, type, spot);
		if (r < room) {
			room = r;
			*code = c->qv[i].q.code;
		}
	}
	return room;
}

/*****************************************************************************
 *  Offerings: a pool the cache says does not offer the type is never planned
 *****************************************************************************/

static int offering_cb(const struct gb_offering *o, void *arg)
{
	struct cap *c = arg;
	struct orow *v, *r;

	if ((c->region && strcmp(c->region, o->region)) ||
	    (c->type && strcmp(c->type, o->instance_type)))
		return 0;
	if (!(v = realloc(c->ov, (c->no + 1) * sizeof(*v)))) {
		c->rc = gb_errorf(&c->err, GB_E_NOMEM, "out of memory");
		return 1;
	}
	c->ov = v;
	r = &v[c->no];
	memset(r, 0, sizeof(*r));
	r->region = strdup(o->region);
	r->az = o->az ? strdup(o->az) : NULL;
	r->type = strdup(o->instance_type);
	r->offered = o->offered;
	r->fetched_at = o->fetched_at;
	/* fresh as gb_plan_facts_build() reads the cache */
	r->fresh = o->fetched_at >= c->ctl->now - c->conf->policy.offerings_ttl;
	c->no++;
	if (!r->region || (o->az && !r->az) || !r->type) {
		c->rc = gb_errorf(&c->err, GB_E_NOMEM, "out of memory");
		return 1;
	}
	return 0;
}

/* RET 1/0 offered, -1 unknown (not cached, or stale: it would be asked). */
static int offered_of(struct cap *c, const struct gb_capacity *row)
{
	for (size_t i = 0; i < c->no; i++) {
		struct orow *o = &c->ov[i];

		if (strcmp(o->region, row->region) || gb_strcmp0(o->az, row->az) ||
		    strcmp(o->type, row->instance_type))
			continue;
		o->shown = true;
		return o->fresh ? o->offered : -1;
	}
	return -1;
}

static void offering_out(struct cap *c, const struct orow *o)
{
	char at[96], t[32];

	if (c->pools) {
		json_array_append_new(c->offerings, json_pack("{s:s,s:o,s:s,s:b,s:b,s:o}",
			"region", o->region, "az", ctl_jstr(o->az), "instance_type", o->type,
			"offered", o->offered, "fresh", o->fresh,
			"fetched_at", ctl_jtime(o->fetched_at)));
		return;
	}
	/* pools without memory: only a fresh "no" changes the plan */
	if (o->shown || !o->az || !o->fresh || o->offered)
		return;
	snprintf(at, sizeof(at), "not offered (cached %s): never planned",
		 ctl_time(o->fetched_at, t, sizeof(t)));
	ctl_table_row(&c->pt, o->region, o->az, o->type, "-", "no", "-", "-", "-", "-", at);
	c->n_pools++;
}

/*****************************************************************************
 *  Pools
 *****************************************************************************/

static json_t *est_json(double est)
{
	if (est < 0)
		return json_null();
	return isinf(est) ? json_string("plenty") : json_integer((json_int_t)floor(est + 0.5));
}

static const char *est_text(double est, char *buf, size_t n)
{
	if (est < 0)
		snprintf(buf, n, "unknown");
	else if (isinf(est))
		snprintf(buf, n, "plenty");
	else
		snprintf(buf, n, "%.0f", floor(est + 0.5));
	return buf;
}

/* What the estimate rests on, in the heuristic planner's words. */
static const char *basis(const struct gb_pool_memory *m)
{
	if (m->level_n == 0 && m->floor_n == 0)
		return "counters";	/* a row written before schema 2 */
	if (m->est < 0)
		return "faded";
	return m->measured ? "levels" : "lower_bounds";
}

static void evidence(const struct gb_pool_memory *m, char *buf, size_t n)
{
	const char *b = basis(m);
	int k = 0;

	if (strcmp(b, "counters") == 0 && m->ice < 1e-3) {
		snprintf(buf, n, "written before levels were kept: gave %.1f, never ran dry", m->got);
		return;
	}
	if (strcmp(b, "counters") == 0) {
		snprintf(buf, n, "written before levels were kept: got %.1f over %.1f dry-outs",
			 m->got, m->ice);
		return;
	}
	buf[0] = '\0';
	if (m->level_n > 0)
		k = snprintf(buf, n, "level %.1f over %.1f dry-outs", m->level_sum / m->level_n,
			     m->level_n);
	if (m->floor_n > 0 && k >= 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, "%sat least %.1f over %.1f visits", k ? "; " : "",
			 m->floor_sum / m->floor_n, m->floor_n);
	if (strcmp(b, "faded") == 0) {
		size_t len = strlen(buf);

		snprintf(buf + len, n - len, " (faded: ignored)");
	}
}

static json_t *offered_json(int o)
{
	return o < 0 ? json_null() : json_boolean(o);
}

static void pool_json(struct cap *c, const struct gb_capacity *row,
		      const struct gb_pool_memory *m, int offered, double left)
{
	json_t *j = json_object();

	json_object_set_new(j, "region", json_string(row->region));
	json_object_set_new(j, "az", ctl_jstr(row->az));
	json_object_set_new(j, "instance_type", json_string(row->instance_type));
	json_object_set_new(j, "capacity", json_string(row->capacity));
	json_object_set_new(j, "offered", offered_json(offered));
	json_object_set_new(j, "estimate", est_json(m->est));
	json_object_set_new(j, "estimate_basis", json_string(basis(m)));
	json_object_set_new(j, "level", m->level_n > 0 ? json_real(m->level_sum / m->level_n)
						      : json_null());
	json_object_set_new(j, "level_weight", json_real(m->level_n));
	json_object_set_new(j, "lower_bound", m->floor >= 0 ? json_real(m->floor) : json_null());
	json_object_set_new(j, "lower_bound_weight", json_real(m->floor_n));
	json_object_set_new(j, "last_ice_at", ctl_jtime(m->last_ice_at));
	json_object_set_new(j, "cooling", json_boolean(m->recent_ice));
	json_object_set_new(j, "cool_down_left", m->recent_ice ? json_real(left) : json_null());
	json_object_set_new(j, "quota_room", isinf(m->quota_room) ? json_null()
							: json_real(m->quota_room));
	json_object_set_new(j, "walled", json_boolean(m->walled));
	json_object_set_new(j, "updated_at", ctl_jtime(row->updated_at));
	/*
	 * The counters, as gpuburstctl/1 has always printed them: members
	 * keep their names and meaning within a schema version.  They are
	 * the best_effort/all_or_nothing estimate's, no fill rate of the
	 * default strategy (gpuburstctl(8), JSON OUTPUT).
	 */
	json_object_set_new(j, "asked", json_real(m->asked));
	json_object_set_new(j, "got", json_real(m->got));
	json_object_set_new(j, "ice", json_real(m->ice));
	json_object_set_new(j, "failures", json_real(m->failures));
	json_object_set_new(j, "fill_rate", m->asked > 0 ? json_real(m->got / m->asked)
							 : json_null());
	json_object_set_new(j, "last_success_at", ctl_jtime(m->last_success_at));
	json_object_set_new(j, "counter_estimate", est_json(m->counter_est));
	json_array_append_new(c->pools, j);
}

static void pool_text(struct cap *c, const struct gb_capacity *row,
		      const struct gb_pool_memory *m, double uncapped, int offered,
		      double left, const char *code)
{
	char est[64], e[16], floor_s[32], ice[32], cool[48], ev[160];

	est_text(m->est, e, sizeof(e));
	if (m->walled)
		snprintf(est, sizeof(est), "0 (walled: %s)", code ? code : "quota");
	else if (m->est >= 0 && m->est < uncapped)
		snprintf(est, sizeof(est), "%s (quota: %s)", e, code ? code : "room");
	else
		snprintf(est, sizeof(est), "%s", e);
	if (m->floor >= 0)
		snprintf(floor_s, sizeof(floor_s), "%.1f", m->floor);
	else
		snprintf(floor_s, sizeof(floor_s), "-");
	if (m->recent_ice)
		snprintf(cool, sizeof(cool), "%s left", ctl_dur(left, ice, sizeof(ice)));
	else
		snprintf(cool, sizeof(cool), m->last_ice_at > 0 ? "over" : "-");
	evidence(m, ev, sizeof(ev));
	ctl_table_row(&c->pt, row->region, row->az ? row->az : "-", row->instance_type,
		      row->capacity, offered < 0 ? "?" : offered ? "yes" : "no", est, floor_s,
		      ctl_time(m->last_ice_at, ice, sizeof(ice)), cool, ev);
}

static void counters_text(struct cap *c, const struct gb_capacity *row,
			  const struct gb_pool_memory *m)
{
	char asked[32], got[32], ice[32], fail[32], e[16];

	snprintf(asked, sizeof(asked), "%.2f", m->asked);
	snprintf(got, sizeof(got), "%.2f", m->got);
	snprintf(ice, sizeof(ice), "%.2f", m->ice);
	snprintf(fail, sizeof(fail), "%.2f", m->failures);
	ctl_table_row(&c->ct, row->region, row->az ? row->az : "-", row->instance_type,
		      row->capacity, est_text(m->counter_est, e, sizeof(e)), asked, got, ice,
		      fail);
}

static int pool_cb(const struct gb_capacity *row, void *arg)
{
	struct cap *c = arg;
	const struct gb_conf *conf = c->conf;
	struct gb_pool_memory m, free_m;
	const char *code = NULL;
	double room, left;
	int offered = offered_of(c, row);

	if (c->region && strcmp(c->region, row->region))
		return 0;
	room = room_for(c, row->region, row->instance_type, &code);
	gb_plan_memory_of(conf, row, c->ctl->now, true, room, &m);
	gb_plan_memory_of(conf, row, c->ctl->now, true, HUGE_VAL, &free_m);
	left = m.last_ice_at + conf->policy.ice_cooldown - c->ctl->now;
	c->n_pools++;
	if (c->pools) {
		pool_json(c, row, &m, offered, left);
		return 0;
	}
	pool_text(c, row, &m, free_m.est, offered, left, code);
	if (c->show_counters)
		counters_text(c, row, &m);
	return 0;
}

/*****************************************************************************
 *  capacity
 *****************************************************************************/

static bool counters_used(const struct gb_conf *conf)
{
	for (size_t i = 0; i < conf->n_nodesets; i++)
		if (conf->nodesets[i].strategy == GB_STRATEGY_BEST_EFFORT ||
		    conf->nodesets[i].strategy == GB_STRATEGY_ALL_OR_NOTHING)
			return true;
	return false;
}

static void print_text(struct cap *c)
{
	const struct gb_conf *conf = c->conf;
	char hl[64], cd[64];

	if (c->n_pools) {
		printf("Pools, as the default strategy plans with them:\n");
		ctl_table_print(&c->pt, stdout);
	}
	if (c->n_walls) {
		printf("%sQuota walls (the default strategy never asks a region for more than they leave):\n",
		       c->n_pools ? "\n" : "");
		ctl_table_print(&c->qt, stdout);
	}
	if (c->n_pools && c->show_counters) {
		printf("\nCounters (the estimate of the best_effort and all_or_nothing strategies):\n");
		ctl_table_print(&c->ct, stdout);
	}
	if (!c->n_pools && !c->n_walls) {
		printf("no capacity memory%s\n", c->ctl->st_missing ? " (no state file yet)" : "");
		return;
	}
	printf("\nDecayed to now with a half-life of %s (policy.capacity_half_life).  After a\n"
	       "capacity refusal a pool cools down for %s (policy.ice_cooldown) and is planned\n"
	       "last.  `gpuburstctl capacity forget` clears memory.\n",
	       ctl_dur(conf->policy.capacity_half_life, hl, sizeof(hl)),
	       ctl_dur(conf->policy.ice_cooldown, cd, sizeof(cd)));
}

static void cap_free(struct cap *c)
{
	for (size_t i = 0; i < c->nq; i++) {
		free(c->qv[i].region);
		free(c->qv[i].quota);
		free(c->qv[i].code);
	}
	free(c->qv);
	for (size_t i = 0; i < c->no; i++) {
		free(c->ov[i].region);
		free(c->ov[i].az);
		free(c->ov[i].type);
	}
	free(c->ov);
	json_decref(c->offerings);
	json_decref(c->pools);
	json_decref(c->quotas);
	ctl_table_free(&c->pt);
	ctl_table_free(&c->qt);
	ctl_table_free(&c->ct);
}

/* Read the memory into the tables, or with [as_json] the JSON arrays. */
static gb_err_t gather(struct cap *c, bool as_json)
{
	struct ctl *ctl = c->ctl;
	const struct gb_conf *conf = c->conf;
	gb_err_t rc = GB_E_OK;

	if (as_json) {
		c->pools = json_array();
		c->quotas = json_array();
		c->offerings = json_array();
	}
	ctl_table_init(&c->pt, 10, "REGION", "AZ", "TYPE", "CAPACITY", "OFFERED", "ESTIMATE",
		       ">AT_LEAST", "LAST_ICE", "COOL_DOWN", "EVIDENCE");
	ctl_table_init(&c->qt, 8, "REGION", "QUOTA", "CODE", ">LIMIT", ">HELD", ">LEFT",
		       "SINCE", "UNTIL");
	ctl_table_init(&c->ct, 9, "REGION", "AZ", "TYPE", "CAPACITY", "ESTIMATE", ">ASKED",
		       ">GOT", ">ICE", ">FAILURES");
	c->show_counters = counters_used(conf);
	/* quotas first: a pool's estimate is capped by its region's room */
	if (c->st && (rc = gb_state_quota_list(c->st, ctl->now,
						 conf->policy.capacity_half_life, quota_cb, c,
						 &c->err)) == GB_E_OK)
		rc = c->rc;
	if (rc == GB_E_OK && c->st &&
	    (rc = gb_state_offering_list(c->st, offering_cb, c, &c->err)) == GB_E_OK)
		rc = c->rc;
	if (rc == GB_E_OK && c->st)
		rc = gb_state_capacity_list(c->st, c->type, ctl->now,
					    conf->policy.capacity_half_life, pool_cb, c, &c->err);
	if (rc)
		return rc;
	for (size_t i = 0; i < c->no; i++)
		offering_out(c, &c->ov[i]);
	for (size_t i = 0; i < c->nq; i++) {
		if (c->type &&
		    isinf(gb_plan_quota_room(c->conf, &c->qv[i].q, &c->qv[i].v, c->type, false)) &&
		    isinf(gb_plan_quota_room(c->conf, &c->qv[i].q, &c->qv[i].v, c->type, true)))
			continue;	/* not a quota of that type */
		quota_out(c, &c->qv[i]);
	}
	return GB_E_OK;
}

gb_err_t ctl_capacity_json(struct ctl *ctl, const struct gb_conf *conf, gb_state_t *st,
			   json_t **pools, json_t **quotas, gb_error_t *err)
{
	struct cap c = { .ctl = ctl, .st = st, .conf = conf };
	gb_err_t rc = gather(&c, true);

	*pools = *quotas = NULL;
	if (rc)
		gb_errorf(err, rc, "%s", c.err.text);
	else {
		*pools = json_incref(c.pools);
		*quotas = json_incref(c.quotas);
	}
	cap_free(&c);
	return rc;
}

static gb_err_t show(struct cap *c)
{
	struct ctl *ctl = c->ctl;
	const struct gb_conf *conf = c->conf;
	gb_err_t rc;

	if ((rc = gather(c, ctl->json)))
		return ctl_fail(rc, "%s", c->err.text);
	if (ctl->json) {
		json_t *doc = json_object();

		json_object_set(doc, "capacity", c->pools);
		json_object_set(doc, "quotas", c->quotas);
		json_object_set(doc, "offerings", c->offerings);
		json_object_set_new(doc, "offerings_ttl", json_real(conf->policy.offerings_ttl));
		json_object_set_new(doc, "half_life", json_real(conf->policy.capacity_half_life));
		json_object_set_new(doc, "ice_cooldown", json_real(conf->policy.ice_cooldown));
		json_object_set_new(doc, "as_of", ctl_jtime(ctl->now));
		ctl_json_result(doc);
	} else {
		print_text(c);
	}
	return GB_E_OK;
}

gb_err_t ctl_cmd_capacity(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longs[] = {
		CTL_COMMON_LONGOPTS,
		{ "region", required_argument, NULL, 'r' },
		{ "type", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd = "capacity";
	struct cap c = { 0 };
	bool first = true;
	gb_err_t rc = GB_E_OK;
	int o;

	while ((o = ctl_getopt(ctl, cmd, argc, argv, ":jhr:t:", longs, &first, &rc)) != -1) {
		switch (o) {
		case CTL_OPT_DONE:
			return rc;
		case 'r':
			c.region = optarg;
			break;
		case 't':
			c.type = optarg;
			break;
		default:
			return ctl_unimplemented(cmd, o);
		}
	}
	if (optind < argc)
		return ctl_usage(cmd, "unexpected argument \"%s\"", argv[optind]);
	if (!(c.conf = ctl_conf(ctl, &rc)))
		return rc;
	ctl_state(ctl, false, &rc);
	if (rc)
		return rc;
	c.ctl = ctl;
	c.st = ctl->st;
	rc = show(&c);
	cap_free(&c);
	return rc;
}

/*****************************************************************************
 *  capacity forget REGION[/AZ] [--type T] [--quota]
 *****************************************************************************/

struct forget {
	const char *region, *az, *type;
	bool quota;
	json_t *pools, *quotas;		/* what goes, read before it goes */
	struct gb_strv lines;
};

static int forget_pool(const struct gb_capacity *row, void *arg)
{
	struct forget *f = arg;
	char line[256];

	if (strcmp(row->region, f->region) || (f->az && gb_strcmp0(row->az, f->az)))
		return 0;
	json_array_append_new(f->pools, json_pack("{s:s,s:o,s:s,s:s}", "region", row->region,
						  "az", ctl_jstr(row->az), "instance_type",
						  row->instance_type, "capacity", row->capacity));
	snprintf(line, sizeof(line), "  %s/%s %s %s", row->region, row->az ? row->az : "-",
		 row->instance_type, row->capacity);
	gb_strv_add(&f->lines, line);
	return 0;
}

static int forget_quota(const struct gb_quota *q, void *arg)
{
	struct forget *f = arg;
	char line[256];

	if (strcmp(q->region, f->region))
		return 0;
	json_array_append_new(f->quotas, json_pack("{s:s,s:s,s:s}", "region", q->region,
						   "quota", q->quota, "code", q->code));
	snprintf(line, sizeof(line), "  %s %s (%s)", q->region, q->quota, q->code);
	gb_strv_add(&f->lines, line);
	return 0;
}

/* Nothing matched: a name nobody knows is an error of its own (INVALID). */
static gb_err_t nothing(const struct gb_conf *conf, const struct forget *f)
{
	const struct gb_conf_region *r = gb_conf_region(conf, f->region);
	struct gb_buf names = GB_BUF_INIT;
	bool az_known = false;
	gb_err_t rc;

	if (!r) {
		const char *of = NULL;

		for (size_t i = 0; i < conf->n_regions; i++) {
			gb_buf_printf(&names, "%s%s", i ? ", " : "", conf->regions[i].name);
			for (size_t a = 0; a < conf->regions[i].n_azs; a++)
				if (strcmp(conf->regions[i].azs[a].name, f->region) == 0)
					of = conf->regions[i].name;
		}
		if (of)
			rc = ctl_fail(GB_E_INVALID, "capacity forget: unknown region \"%s\": an availability zone of %s? (write %s/%s)",
				      f->region, of, of, f->region);
		else
			rc = ctl_fail(GB_E_INVALID, "capacity forget: unknown region \"%s\": not configured and not in the memory (configured: %s)",
				      f->region, names.len ? gb_buf_str(&names) : "none");
		gb_buf_free(&names);
		return rc;
	}
	for (size_t i = 0; f->az && i < r->n_azs; i++)
		az_known |= strcmp(r->azs[i].name, f->az) == 0;
	if (f->az && !az_known)
		return ctl_fail(GB_E_INVALID, "capacity forget: unknown availability zone \"%s\" in %s: not configured and not in the memory",
				f->az, f->region);
	if (f->type && !gb_conf_instance_type(conf, f->type))
		return ctl_fail(GB_E_INVALID, "capacity forget: unknown instance type \"%s\": not in the catalog and not in the memory",
				f->type);
	return ctl_fail(GB_E_NOTFOUND, "capacity forget: nothing to forget: no %s memory of %s%s%s%s%s",
			f->quota ? "quota" : "capacity", f->region, f->az ? "/" : "",
			f->az ? f->az : "", f->type ? " " : "", f->type ? f->type : "");
}

static void forget_report(struct ctl *ctl, const struct forget *f,
			  const struct gb_state_forget_counts *n)
{
	if (ctl->json) {
		json_t *doc = json_object();

		json_object_set_new(doc, "region", json_string(f->region));
		json_object_set_new(doc, "az", ctl_jstr(f->az));
		json_object_set_new(doc, "instance_type", ctl_jstr(f->type));
		json_object_set_new(doc, "quota", json_boolean(f->quota));
		json_object_set_new(doc, "forgot", json_pack("{s:I,s:I,s:I,s:I}",
			"capacity", (json_int_t)n->capacity, "offerings", (json_int_t)n->offerings,
			"reservations", (json_int_t)n->reservations,
			"quotas", (json_int_t)n->quotas));
		json_object_set(doc, "pools", f->pools);
		json_object_set(doc, "quotas", f->quotas);
		ctl_json_result(doc);
		return;
	}
	if (f->quota)
		printf("forgot %ld quota wall%s of %s:\n", n->quotas, n->quotas == 1 ? "" : "s",
		       f->region);
	else if (n->reservations)
		printf("forgot the capacity memory of %ld pool%s, %ld cached offering%s and %ld cached reservation%s:\n",
		       n->capacity, n->capacity == 1 ? "" : "s", n->offerings,
		       n->offerings == 1 ? "" : "s", n->reservations,
		       n->reservations == 1 ? "" : "s");
	else
		printf("forgot the capacity memory of %ld pool%s and %ld cached offering%s:\n",
		       n->capacity, n->capacity == 1 ? "" : "s", n->offerings,
		       n->offerings == 1 ? "" : "s");
	for (size_t i = 0; i < f->lines.n; i++)
		printf("%s\n", f->lines.v[i]);
}

/* Read what goes, delete it, record the event: one transaction. */
static gb_err_t forget_tx(struct ctl *ctl, const struct gb_conf *conf, struct forget *f,
			  const struct gb_policy_actor *who,
			  struct gb_state_forget_counts *n, gb_error_t *err)
{
	double hl = conf->policy.capacity_half_life;
	char detail[512];
	gb_err_t rc;

	if ((rc = gb_state_tx_begin(ctl->st, err)))
		return rc;
	rc = f->quota ? gb_state_quota_list(ctl->st, ctl->now, hl, forget_quota, f, err)
		      : gb_state_capacity_list(ctl->st, f->type, ctl->now, hl, forget_pool, f, err);
	if (rc == GB_E_OK)
		rc = gb_state_memory_forget(ctl->st, f->region, f->az, f->type,
					    f->quota ? GB_STATE_FORGET_QUOTA
						     : GB_STATE_FORGET_CAPACITY, n, err);
	if (rc == GB_E_OK && n->capacity + n->offerings + n->reservations + n->quotas == 0) {
		gb_state_tx_rollback(ctl->st);	/* nothing changed: no event */
		return GB_E_OK;
	}
	snprintf(detail, sizeof(detail),
		 "what=%s region=%s az=%s type=%s capacity=%ld offerings=%ld reservations=%ld quotas=%ld by=%s uid=%lld",
		 f->quota ? "quota" : "capacity", f->region, f->az ? f->az : "-",
		 f->type ? f->type : "-", n->capacity, n->offerings, n->reservations, n->quotas,
		 who->name, (long long)who->uid);
	if (rc == GB_E_OK)
		rc = gb_state_event_add(ctl->st, NULL, "capacity_forget", detail, err);
	if (rc) {
		gb_state_tx_rollback(ctl->st);
		return rc;
	}
	if ((rc = gb_state_tx_commit(ctl->st, err)))
		return rc;
	gb_log_notice("capacity_forget %s", detail);
	return GB_E_OK;
}

static gb_err_t forget(struct ctl *ctl, struct forget *f)
{
	struct gb_state_forget_counts n = { 0 };
	struct gb_policy_actor who;
	const struct gb_conf *conf;
	gb_error_t err = { 0 };
	gb_err_t rc = GB_E_OK;

	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	if ((rc = ctl_authorize(ctl, conf, &who)))
		return rc;
	ctl_log_open(ctl);
	if (!ctl_state(ctl, true, &rc))
		return rc;
	if ((rc = forget_tx(ctl, conf, f, &who, &n, &err)))
		return ctl_fail(rc, "%s", err.text);
	if (n.capacity + n.offerings + n.reservations + n.quotas == 0)
		return nothing(conf, f);
	forget_report(ctl, f, &n);
	return GB_E_OK;
}

gb_err_t ctl_cmd_capacity_forget(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longs[] = {
		CTL_COMMON_LONGOPTS,
		{ "type", required_argument, NULL, 't' },
		{ "quota", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd = "capacity forget";
	struct forget f = { 0 };
	char region[128];
	bool first = true;
	gb_err_t rc = GB_E_OK;
	char *slash;
	int o;

	while ((o = ctl_getopt(ctl, cmd, argc, argv, ":jht:q", longs, &first, &rc)) != -1) {
		switch (o) {
		case CTL_OPT_DONE:
			return rc;
		case 't':
			f.type = optarg;
			break;
		case 'q':
			f.quota = true;
			break;
		default:
			return ctl_unimplemented(cmd, o);
		}
	}
	if (optind >= argc)
		return ctl_usage(cmd, "which region? (REGION or REGION/AZ)");
	if (optind + 1 < argc)
		return ctl_usage(cmd, "unexpected argument \"%s\"", argv[optind + 1]);
	if (gb_strlcpy(region, argv[optind], sizeof(region)) >= sizeof(region))
		return ctl_usage(cmd, "region too long");
	if ((slash = strchr(region, '/'))) {
		*slash = '\0';
		f.az = slash + 1;
	}
	if (!region[0] || (f.az && (!*f.az || strchr(f.az, '/'))))
		return ctl_usage(cmd, "invalid region \"%s\": REGION or REGION/AZ expected",
				 argv[optind]);
	if (f.quota && (f.az || f.type))
		return ctl_usage(cmd, "--quota forgets a region's quota walls: no AZ, no --type (quotas are per region)");
	f.region = region;
	f.pools = json_array();
	f.quotas = json_array();
	rc = forget(ctl, &f);
	json_decref(f.pools);
	json_decref(f.quotas);
	gb_strv_free(&f.lines);
	return rc;
}
