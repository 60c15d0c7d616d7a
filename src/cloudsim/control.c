/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * control.c - the loopback control interface for tests (JSON, no SigV4)
 *
 *   GET    /_sim/health     {"ok": true}
 *   GET    /_sim/state      regions, pools (On-Demand, Spot), subnets, quotas,
 *                            instances, faults, calls (per action: received,
 *                            answered)
 *   POST   /_sim/capacity   {"az", "instance_type", "available" | "total",
 *                            "market": "on-demand" (default) | "spot"}
 *   POST   /_sim/fault      {"count", "kind", "code", "status", "message",
 *                            "latency", "action", "region"}
 *   DELETE /_sim/fault      drop every injected fault
 *   GET    /_sim/time       {"time": simulated seconds}
 *   POST   /_sim/time       {"advance": seconds}
 *   GET    /_sim/consistency {"invisible", "no_private_ip"} (seconds)
 *   POST   /_sim/consistency {"invisible", "no_private_ip"}: set either
 *   GET    /_sim/sts        STS: calls per action, times each role was
 *                            assumed, the sessions issued (key, role,
 *                            session name, signer, expiration, calls,
 *                            expired), the STS clock
 *   POST   /_sim/interrupt  {"instance": "i-...", "kind": "spot" |
 *                            "rebalance", "in": seconds >= 0 (spot: default
 *                            120, rebalance: 0)}: an EC2 interruption
 *                            notice (sim.h: gb_sim_interrupt).  404: no
 *                            pending or running instance of that id; 400:
 *                            spot for an On-Demand instance, or a field
 *                            missing, unknown or of the wrong type (named).
 *                            The notices show in /_sim/state per instance
 *                            (spot_action, rebalance: null or {time, at}).
 *
 * Documented in gpuburst-cloudsim(8).
 */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cloudsim.h"
#include "gb_log.h"

static void reply_json(struct gb_cs_response *r, int status, json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	r->status = s ? status : 500;
	r->content_type = "application/json";
	gb_buf_reset(&r->body);
	gb_buf_puts(&r->body, s ? s : "{\"error\":\"out of memory\"}");
	gb_buf_putc(&r->body, '\n');
	free(s);
	json_decref(j);
}

static void reply_error(struct gb_cs_response *r, int status, const char *msg)
{
	reply_json(r, status, json_pack("{s:s}", "error", msg));
}

static void iso_time(double t, char *buf, size_t n)
{
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/*****************************************************************************
 *  GET /_sim/state
 *****************************************************************************/

static json_t *quota_json(long v)
{
	return v == GB_SC_UNLIMITED ? json_null() : json_integer(v);
}

/*
 * The pools of one AZ in one market; the Spot pools (with their price) apart,
 * so that the On-Demand pool objects keep their shape.
 */
static json_t *pools_json(const gb_sim_t *sim, const struct gb_sc_az *az, bool spot)
{
	size_t n;
	const struct gb_sim_pool *p = gb_sim_pools(sim, &n);
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		long total = spot ? p[i].spot_total : p[i].total;
		long used = spot ? p[i].spot_used : p[i].used;
		json_t *o;

		if (p[i].az != az || (spot && !p[i].spot))
			continue;
		o = json_pack("{s:s,s:I,s:I,s:I}", "instance_type", p[i].type->name,
			      "total", (json_int_t)total, "used", (json_int_t)used,
			      "available", (json_int_t)(total > used ? total - used : 0));
		if (spot)
			json_object_set_new(o, "price", json_real(p[i].spot_price));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *subnets_json(const gb_sim_t *sim, const struct gb_sc_az *az)
{
	size_t n;
	const struct gb_sim_subnet *s = gb_sim_subnets(sim, &n);
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		if (s[i].az == az)
			json_array_append_new(a, json_pack("{s:s,s:s,s:I,s:I}",
				"id", s[i].sn->id, "cidr", s[i].sn->cidr,
				"used", (json_int_t)s[i].used,
				"free", (json_int_t)(s[i].size - 5 - s[i].used)));
	}
	return a;
}

static json_t *region_json(const gb_sim_t *sim, const struct gb_sc_region *rg)
{
	const struct gb_sim_usage *u = gb_sim_usage(sim, rg->name);
	json_t *azs = json_array();

	for (size_t z = 0; z < rg->nazs; z++)
		json_array_append_new(azs, json_pack("{s:s,s:s,s:o,s:o,s:o}",
			"name", rg->azs[z].name, "zone_id", rg->azs[z].zone_id,
			"pools", pools_json(sim, &rg->azs[z], false),
			"spot_pools", pools_json(sim, &rg->azs[z], true),
			"subnets", subnets_json(sim, &rg->azs[z])));
	return json_pack("{s:s,s:{s:o,s:o,s:o},s:{s:I,s:I,s:I},s:{s:{s:o,s:o},s:{s:I,s:I}},s:o}",
		"name", rg->name,
		"quotas", "g_vt_vcpus", quota_json(rg->vcpu_quota[GB_ITYPE_BUCKET_G]),
		"p_vcpus", quota_json(rg->vcpu_quota[GB_ITYPE_BUCKET_P]),
		"instances", quota_json(rg->instance_quota),
		"usage", "instances", (json_int_t)u->instances,
		"g_vt_vcpus", (json_int_t)u->vcpus[GB_ITYPE_BUCKET_G],
		"p_vcpus", (json_int_t)u->vcpus[GB_ITYPE_BUCKET_P],
		"spot", "quotas",
		"g_vt_vcpus", quota_json(rg->spot_vcpu_quota[GB_ITYPE_BUCKET_G]),
		"p_vcpus", quota_json(rg->spot_vcpu_quota[GB_ITYPE_BUCKET_P]),
		"usage", "g_vt_vcpus", (json_int_t)u->spot_vcpus[GB_ITYPE_BUCKET_G],
		"p_vcpus", (json_int_t)u->spot_vcpus[GB_ITYPE_BUCKET_P],
		"azs", azs);
}

/* A notice: its time in UTC and in simulated seconds, or null. */
static json_t *notice_json(const gb_sim_t *sim, bool set, double at)
{
	char t[32];

	if (!set)
		return json_null();
	iso_time(gb_sim_epoch(sim) + at, t, sizeof(t));
	return json_pack("{s:s,s:f}", "time", t, "at", at);
}

static json_t *instance_json(const gb_sim_t *sim, const struct gb_sim_instance *i)
{
	json_t *tags = json_object();

	for (size_t t = 0; t < i->ntags; t++)
		json_object_set_new(tags, i->tags[t].key, json_string(i->tags[t].value));
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:f,s:f,s:s?,s:s,s:o,s:o,s:o,s:b}",
		"id", i->id, "reservation", i->res->id, "region", i->region->name,
		"az", i->az->name, "subnet", i->subnet->id, "instance_type", i->type->name,
		"state", gb_sim_state_name(i->state), "private_ip", i->ip,
		"launch_time", i->launch_time, "state_time", i->state_time,
		"client_token", i->client_token, "market", i->spot ? "spot" : "on-demand",
		"tags", tags,
		"spot_action", notice_json(sim, i->spot_notice, i->spot_action_time),
		"rebalance", notice_json(sim, i->rebalance, i->rebalance_time),
		"spot_interrupted", i->spot_interrupted);
}

static json_t *faults_json(const gb_faults_t *f)
{
	json_t *acts = json_object();

	for (int a = 0; a < GB_SIM_ACTION_COUNT; a++) {
		const struct gb_fault_counters *c = gb_faults_counters(f, (enum gb_sim_action)a);

		json_object_set_new(acts, gb_sim_action_name((enum gb_sim_action)a),
			json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
				  "calls", (json_int_t)c->calls, "throttled", (json_int_t)c->throttled,
				  "errors", (json_int_t)c->errors, "drops", (json_int_t)c->drops,
				  "lost_responses", (json_int_t)c->lost, "slow_bodies", (json_int_t)c->slow,
				  "injected", (json_int_t)c->injected));
	}
	return json_pack("{s:I,s:o}", "pending_injections", (json_int_t)gb_faults_pending(f),
			 "actions", acts);
}

static json_t *calls_json(const struct gb_cloudsim *cs)
{
	json_t *o = json_object();

	for (int a = 0; a < GB_SIM_ACTION_COUNT; a++)
		if (cs->received[a])
			json_object_set_new(o, gb_sim_action_name((enum gb_sim_action)a),
					    json_pack("{s:I,s:I}", "received",
						      (json_int_t)cs->received[a], "answered",
						      (json_int_t)cs->answered[a]));
	return o;
}

static json_t *consistency_json(const gb_sim_t *sim)
{
	struct gb_sim_consistency c;

	gb_sim_consistency_get(sim, &c);
	return json_pack("{s:f,s:f}", "invisible", c.invisible, "no_private_ip",
			 c.no_private_ip);
}

static json_t *state_json(struct gb_cloudsim *cs)
{
	json_t *regions = json_array(), *insts = json_array();
	struct gb_sim_instance *const *in;
	size_t n;

	gb_sim_advance(cs->sim, gb_cloudsim_now(cs));
	for (size_t r = 0; r < cs->sc->nregions; r++)
		json_array_append_new(regions, region_json(cs->sim, &cs->sc->regions[r]));
	in = gb_sim_instances(cs->sim, &n);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(insts, instance_json(cs->sim, in[i]));
	return json_pack("{s:f,s:f,s:s,s:o,s:o,s:o,s:o,s:o}", "time", gb_cloudsim_now(cs),
			 "epoch", gb_sim_epoch(cs->sim), "scenario", cs->sc->path,
			 "regions", regions, "instances", insts,
			 "faults", faults_json(cs->faults), "calls", calls_json(cs),
			 "consistency", consistency_json(cs->sim));
}

/*****************************************************************************
 *  POST handlers
 *****************************************************************************/

static json_t *parse_body(const struct gb_cs_request *req, struct gb_cs_response *r)
{
	json_error_t je;
	json_t *j = json_loadb(req->body ? req->body : "", req->body_len, 0, &je);
	char msg[300];

	if (!j || !json_is_object(j)) {
		snprintf(msg, sizeof(msg), "the body must be a JSON object%s%s",
			 j ? "" : ": ", j ? "" : je.text);
		reply_error(r, 400, msg);
		json_decref(j);
		return NULL;
	}
	return j;
}

static void post_capacity(struct gb_cloudsim *cs, json_t *j, struct gb_cs_response *r)
{
	const char *az = NULL, *type = NULL, *market = "on-demand";
	json_int_t avail = -1, total = -1;
	json_error_t je;
	gb_error_t err;
	gb_err_t rc;

	if (json_unpack_ex(j, &je, JSON_STRICT, "{s:s,s:s,s?I,s?I,s?s}", "az", &az,
			   "instance_type", &type, "available", &avail, "total", &total,
			   "market", &market)) {
		reply_error(r, 400, je.text);
		return;
	}
	if ((avail < 0) == (total < 0)) {
		reply_error(r, 400, "give exactly one of available and total (>= 0)");
		return;
	}
	if (strcmp(market, "on-demand") != 0 && strcmp(market, "spot") != 0) {
		reply_error(r, 400, "market must be on-demand or spot");
		return;
	}
	pthread_mutex_lock(&cs->mu);
	gb_sim_advance(cs->sim, gb_cloudsim_now(cs));
	rc = gb_sim_capacity_set(cs->sim, az, type, strcmp(market, "spot") == 0,
				 avail >= 0 ? (long)avail : (long)total, avail >= 0, &err);
	pthread_mutex_unlock(&cs->mu);
	if (rc) {
		reply_error(r, rc == GB_E_NOTFOUND ? 404 : 400, err.text);
		return;
	}
	gb_log_info("control capacity az=%s instance_type=%s market=%s %s=%ld", az, type,
		    market, avail >= 0 ? "available" : "total",
		    (long)(avail >= 0 ? avail : total));
	reply_json(r, 200, json_pack("{s:b}", "ok", 1));
}

static bool fault_kind(const char *s, enum gb_fault_kind *k)
{
	static const struct { const char *name; enum gb_fault_kind kind; } kinds[] = {
		{ "error", GB_FAULT_ERROR }, { "drop", GB_FAULT_DROP },
		{ "lost_response", GB_FAULT_LOST_RESPONSE }, { "latency", GB_FAULT_LATENCY },
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(s, kinds[i].name) == 0) {
			*k = kinds[i].kind;
			return true;
		}
	}
	return false;
}

static void post_fault(struct gb_cloudsim *cs, json_t *j, struct gb_cs_response *r)
{
	struct gb_fault_injection inj = { 0 };
	const char *kind = NULL, *action = NULL;
	json_int_t count = 1, status = 0;
	json_error_t je;
	gb_error_t err;
	gb_err_t rc;

	if (json_unpack_ex(j, &je, JSON_STRICT, "{s?s,s?s,s?I,s?s,s?F,s?I,s?s,s?s}",
			   "kind", &kind, "code", &inj.code, "status", &status,
			   "message", &inj.message, "latency", &inj.latency, "count", &count,
			   "action", &action, "region", &inj.region)) {
		reply_error(r, 400, je.text);
		return;
	}
	inj.kind = inj.code ? GB_FAULT_ERROR : GB_FAULT_LATENCY;
	if (kind && !fault_kind(kind, &inj.kind)) {
		reply_error(r, 400, "kind must be error, drop, lost_response or latency");
		return;
	}
	inj.action = action ? gb_sim_action_find(action) : GB_SIM_ACTION_COUNT;
	if (action && inj.action == GB_SIM_ACTION_COUNT) {
		reply_error(r, 400, "unknown action");
		return;
	}
	inj.count = (long)count;
	inj.status = (int)status;
	pthread_mutex_lock(&cs->mu);
	rc = gb_faults_inject(cs->faults, &inj, &err);
	count = gb_faults_pending(cs->faults);
	pthread_mutex_unlock(&cs->mu);
	if (rc) {
		reply_error(r, 400, err.text);
		return;
	}
	gb_log_info("control fault kind=%s code=%s count=%ld action=%s",
		    kind ? kind : (inj.code ? "error" : "latency"),
		    inj.code ? inj.code : "-", (long)inj.count, action ? action : "*");
	reply_json(r, 200, json_pack("{s:I}", "pending", count));
}

static void post_time(struct gb_cloudsim *cs, json_t *j, struct gb_cs_response *r)
{
	double adv = 0, now;
	json_error_t je;

	if (json_unpack_ex(j, &je, JSON_STRICT, "{s:F}", "advance", &adv)) {
		reply_error(r, 400, je.text);
		return;
	}
	if (adv < 0) {
		reply_error(r, 400, "time only moves forward");
		return;
	}
	pthread_mutex_lock(&cs->mu);
	cs->offset += adv;
	now = gb_cloudsim_now(cs);
	pthread_mutex_unlock(&cs->mu);
	gb_cloudsim_tick(cs);	/* let due transitions (and boots) happen now */
	reply_json(r, 200, json_pack("{s:f}", "time", now));
}

/* Either setting may be given; the other keeps its value. */
static void post_consistency(struct gb_cloudsim *cs, json_t *j, struct gb_cs_response *r)
{
	struct gb_sim_consistency c;
	double inv = -1, noip = -1;
	json_error_t je;

	if (json_unpack_ex(j, &je, JSON_STRICT, "{s?F,s?F}", "invisible", &inv,
			   "no_private_ip", &noip)) {
		reply_error(r, 400, je.text);
		return;
	}
	if ((json_object_get(j, "invisible") && !(inv >= 0 && inv < 86400)) ||
	    (json_object_get(j, "no_private_ip") && !(noip >= 0 && noip < 86400))) {
		reply_error(r, 400, "invisible and no_private_ip are seconds in [0, 86400)");
		return;
	}
	pthread_mutex_lock(&cs->mu);
	gb_sim_consistency_get(cs->sim, &c);
	if (inv >= 0)
		c.invisible = inv;
	if (noip >= 0)
		c.no_private_ip = noip;
	gb_sim_consistency_set(cs->sim, &c);
	pthread_mutex_unlock(&cs->mu);
	gb_log_info("control consistency invisible=%.3f no_private_ip=%.3f", c.invisible,
		    c.no_private_ip);
	reply_json(r, 200, json_pack("{s:f,s:f}", "invisible", c.invisible, "no_private_ip",
				     c.no_private_ip));
}

#define INTERRUPT_SPOT_DEFAULT 120.0	/* EC2: the two-minute warning */
#define INTERRUPT_IN_MAX 31536000.0	/* a year */

/* The fields of POST /_sim/interrupt; RET false with the 400 sent. */
static bool interrupt_fields(json_t *j, struct gb_cs_response *r, const char **id,
			     enum gb_sim_interrupt *kind, double *in)
{
	json_t *vi = json_object_get(j, "instance"), *vk = json_object_get(j, "kind");
	json_t *vin = json_object_get(j, "in");
	const char *key, *k;
	json_t *v;
	char msg[160];

	json_object_foreach(j, key, v) {
		if (strcmp(key, "instance") && strcmp(key, "kind") && strcmp(key, "in")) {
			snprintf(msg, sizeof(msg), "unknown field %.64s", key);
			reply_error(r, 400, msg);
			return false;
		}
	}
	if (!json_is_string(vi)) {
		reply_error(r, 400, "instance must be a string (the instance id)");
		return false;
	}
	k = json_is_string(vk) ? json_string_value(vk) : "";
	if (strcmp(k, "spot") != 0 && strcmp(k, "rebalance") != 0) {
		reply_error(r, 400, "kind must be spot or rebalance");
		return false;
	}
	*id = json_string_value(vi);
	*kind = strcmp(k, "spot") == 0 ? GB_SIM_INTERRUPT_SPOT : GB_SIM_INTERRUPT_REBALANCE;
	*in = *kind == GB_SIM_INTERRUPT_SPOT ? INTERRUPT_SPOT_DEFAULT : 0;
	if (vin && (!json_is_number(vin) || !(json_number_value(vin) >= 0) ||
		    json_number_value(vin) > INTERRUPT_IN_MAX)) {
		reply_error(r, 400, "in must be a number of seconds, 0 to 31536000");
		return false;
	}
	if (vin)
		*in = json_number_value(vin);
	return true;
}

static void post_interrupt(struct gb_cloudsim *cs, json_t *j, struct gb_cs_response *r)
{
	enum gb_sim_interrupt kind;
	const char *id = NULL;
	double in = 0, at = 0;
	gb_error_t err;
	gb_err_t rc;
	char t[32], qid[64];

	if (!interrupt_fields(j, r, &id, &kind, &in))
		return;
	pthread_mutex_lock(&cs->mu);
	rc = gb_sim_interrupt(cs->sim, id, kind, in, gb_cloudsim_now(cs), &at, &err);
	iso_time(gb_sim_epoch(cs->sim) + at, t, sizeof(t));
	pthread_mutex_unlock(&cs->mu);
	if (rc) {
		reply_error(r, rc == GB_E_NOTFOUND ? 404 : 400, err.text);
		return;
	}
	gb_cloudsim_tick(cs);	/* in 0: the termination (and its boot stop) now */
	gb_log_info("control interrupt instance=%s kind=%s in=%.3f time=%s",
		    gb_log_q(qid, sizeof(qid), id),
		    kind == GB_SIM_INTERRUPT_SPOT ? "spot" : "rebalance", in, t);
	reply_json(r, 200, json_pack("{s:s,s:s,s:s,s:f}", "instance", id, "kind",
				     kind == GB_SIM_INTERRUPT_SPOT ? "spot" : "rebalance",
				     "time", t, "at", at));
}

/*****************************************************************************
 *  Routing
 *****************************************************************************/

typedef void (*post_fn)(struct gb_cloudsim *, json_t *, struct gb_cs_response *);

static void with_body(struct gb_cloudsim *cs, const struct gb_cs_request *req,
		      struct gb_cs_response *r, post_fn fn)
{
	json_t *j = parse_body(req, r);

	if (j) {
		fn(cs, j, r);
		json_decref(j);
	}
}

static void route(struct gb_cloudsim *cs, const struct gb_cs_request *req,
		  struct gb_cs_response *r)
{
	const char *what = req->path + strlen(GB_CS_CONTROL_PREFIX);
	bool get = strcmp(req->method, "GET") == 0, post = strcmp(req->method, "POST") == 0;
	double now;

	if (strcmp(what, "health") == 0 && get) {
		reply_json(r, 200, json_pack("{s:b}", "ok", 1));
	} else if (strcmp(what, "state") == 0 && get) {
		pthread_mutex_lock(&cs->mu);
		reply_json(r, 200, state_json(cs));
		pthread_mutex_unlock(&cs->mu);
	} else if (strcmp(what, "capacity") == 0 && post) {
		with_body(cs, req, r, post_capacity);
	} else if (strcmp(what, "fault") == 0 && post) {
		with_body(cs, req, r, post_fault);
	} else if (strcmp(what, "fault") == 0 && strcmp(req->method, "DELETE") == 0) {
		pthread_mutex_lock(&cs->mu);
		gb_faults_clear(cs->faults);
		pthread_mutex_unlock(&cs->mu);
		reply_json(r, 200, json_pack("{s:i}", "pending", 0));
	} else if (strcmp(what, "time") == 0 && get) {
		pthread_mutex_lock(&cs->mu);
		now = gb_cloudsim_now(cs);
		pthread_mutex_unlock(&cs->mu);
		reply_json(r, 200, json_pack("{s:f}", "time", now));
	} else if (strcmp(what, "time") == 0 && post) {
		with_body(cs, req, r, post_time);
	} else if (strcmp(what, "consistency") == 0 && get) {
		pthread_mutex_lock(&cs->mu);
		reply_json(r, 200, consistency_json(cs->sim));
		pthread_mutex_unlock(&cs->mu);
	} else if (strcmp(what, "consistency") == 0 && post) {
		with_body(cs, req, r, post_consistency);
	} else if (strcmp(what, "sts") == 0 && get) {
		pthread_mutex_lock(&cs->mu);
		reply_json(r, 200, gb_cs_sts_json(cs));
		pthread_mutex_unlock(&cs->mu);
	} else if (strcmp(what, "interrupt") == 0 && post) {
		with_body(cs, req, r, post_interrupt);
	} else if (!strcmp(what, "health") || !strcmp(what, "state") ||
		   !strcmp(what, "capacity") || !strcmp(what, "fault") ||
		   !strcmp(what, "time") || !strcmp(what, "consistency") ||
		   !strcmp(what, "sts") || !strcmp(what, "interrupt")) {
		reply_error(r, 405, "method not allowed");
	} else {
		reply_error(r, 404, "no such control endpoint");
	}
}

void gb_simctl_handle(struct gb_cloudsim *cs, const struct gb_cs_request *req,
		      struct gb_cs_response *r)
{
	char qp[256];

	snprintf(r->request_id, sizeof(r->request_id), "control");
	route(cs, req, r);
	gb_log_info("control method=%s path=%s status=%d peer=%s", req->method,
		    gb_log_q(qp, sizeof(qp), req->path), r->status,
		    req->peer ? req->peer : "-");
}
