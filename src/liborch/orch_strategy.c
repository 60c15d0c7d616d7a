/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_strategy.c - probe_fill, best_effort, all_or_nothing and the default
 *
 * doc/orchestrator.md describes each; the benchmark (bench/fill) compares
 * them on the same capacity landscapes.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "orch_int.h"

/*****************************************************************************
 *  Helpers
 *****************************************************************************/

static bool one_per_call(const struct orch_run *r, size_t pool)
{
	const struct gb_conf_region *cr =
		gb_conf_region(r->conf, r->facts.pools[pool].region);

	return cr && cr->user_data && strstr(cr->user_data, "{node}");
}

static int pool_cap(const struct orch_run *r, size_t pool)
{
	return one_per_call(r, pool) ? 1 : r->bmax;
}

static bool same_az(const struct orch_run *r, size_t a, size_t b)
{
	return strcmp(r->facts.pools[a].region, r->facts.pools[b].region) == 0 &&
	       strcmp(r->facts.pools[a].az, r->facts.pools[b].az) == 0;
}

/* A call for [pool] with the first [k] empty slots not [used] yet. */
static struct orch_call *call_new(struct orch_run *r, size_t pool, int min,
				  int max, int k, bool *used)
{
	struct orch_call *c = calloc(1, sizeof(*c));
	int got = 0;

	if (max < k)
		max = k;	/* the node list holds at least the k nodes */
	if (!c || !(c->nodes = calloc((size_t)(max > 0 ? max : 1), sizeof(*c->nodes)))) {
		free(c);
		return NULL;
	}
	c->pool = pool;
	c->min = min;
	c->max = max;
	for (int i = 0; i < r->n && got < k; i++) {
		if (r->slots[i].state != SLOT_EMPTY || (used && used[i]))
			continue;
		c->nodes[got++] = r->slots[i].name;
		if (used)
			used[i] = true;
	}
	c->n_new = got;
	return c;
}

static gb_err_t run_calls(struct orch_run *r, struct orch_call **calls,
			  size_t n, gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;

	for (size_t i = 0; i < n && !rc; i++)
		rc = orch_call_begin(r, calls[i], err);
	if (!rc)
		rc = orch_wave(r, calls, n, err);
	return rc;
}

static gb_err_t run_one(struct orch_run *r, struct orch_call *c, gb_error_t *err)
{
	return run_calls(r, &c, 1, err);
}

/* probe_fill's decision after a region (the ancestor's NextAction, P10). */
static void trace_decide(struct orch_run *r, const char *action,
			 const char *why)
{
	orch_trace(r, "decide", "action=%s cursor=%d remaining=%d reason=%s",
		   action, r->cursor, orch_unfilled(r), why);
}

/* What one call's outcome means for its pool (all but probe_fill). */
static void judge_pool(struct orch_run *r, struct orch_call *c, bool aon)
{
	enum call_outcome oc = orch_call_outcome(c);
	struct pool_run *pr = &r->pr[c->pool];
	int got = orch_call_got(c);

	pr->tried = true;
	switch (oc) {
	case CALL_OK:
		pr->got += got;
		pr->throttled = 0;
		if (c->min < c->max && got < c->max) {
			/* a level measured; empty pools say nothing of others */
			orch_exclude_az(r, c->pool, "dry");
			r->prior_sum += got;
			r->prior_n++;
		} else if (pr->got >= 1 && r->facts.pools[c->pool].mem.est >= 0 &&
			   !isinf(r->facts.pools[c->pool].mem.est) &&
			   pr->got >= floor(r->facts.pools[c->pool].mem.est + 0.5)) {
			/*
			 * It gave what memory said it holds: asked again only
			 * when every other pool is spent (a probe of one).
			 */
			for (size_t i = 0; i < r->facts.n_pools; i++)
				if (same_az(r, i, c->pool))
					r->pr[i].at_estimate = true;
		} else {
			pr->run_est = -1;	/* gave all it was asked: maybe more */
			pr->chunks++;
		}
		break;
	default:
		/* all_or_nothing's dry pools gave too few, not none */
		orch_outcome_exclude(r, c, oc == CALL_ICE && aon ? "short" : NULL);
		break;
	}
	if (r->prior_n > 0)
		r->run_prior = r->prior_sum / r->prior_n;
}

/*****************************************************************************
 *  probe_fill: the ancestor's algorithm (research s1.3, s1.4)
 *****************************************************************************/

static int filled_in(const struct orch_run *r, const char *region)
{
	int n = 0;

	for (int i = 0; i < r->n; i++)
		n += r->slots[i].state != SLOT_EMPTY && r->slots[i].region &&
		     strcmp(r->slots[i].region, region) == 0 &&
		     r->slots[i].state != SLOT_REUSED;
	return n;
}

static bool region_offers_any(const struct orch_run *r, const char *region)
{
	for (size_t i = 0; i < r->facts.n_pools; i++)
		if (strcmp(r->facts.pools[i].region, region) == 0 &&
		    r->facts.pools[i].offered != GB_OFFER_NO)
			return true;
	return false;
}

/*
 * One subnet, MinCount = MaxCount = n, halving on ICE (the ancestor's
 * launcher).  RET true to go on with the next subnet, false when the
 * region is over ([code] then names why, unless it simply filled).
 */
static bool probe_subnet(struct orch_run *r, size_t pool, char *code,
			 size_t code_len, gb_err_t *rc, gb_error_t *err)
{
	int cap = pool_cap(r, pool), attempts = 0, throttles = 0;
	int need = orch_unfilled(r);
	int batch = need < cap ? need : cap;

	while (need > 0 && attempts < r->o->tuning.max_attempts_per_subnet &&
	       !orch_stopped(r)) {
		int n = batch < need ? batch : need;
		struct orch_call *c = call_new(r, pool, n, n, n, NULL);
		enum call_outcome oc;

		if (!c) {
			*rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			return false;
		}
		*rc = run_one(r, c, err);
		oc = orch_call_outcome(c);
		if (oc != CALL_OK && oc != CALL_ICE)
			gb_strlcpy(code, c->job.ae.code[0] ? c->job.ae.code :
				   gb_ec2_class_name(c->job.ae.cls), code_len);
		if (!*rc && oc != CALL_OK && oc != CALL_ICE && oc != CALL_THROTTLE)
			orch_outcome_exclude(r, c, NULL);
		orch_call_free(c);
		if (*rc)
			return false;
		need = orch_unfilled(r);
		if (oc == CALL_OK) {
			attempts = 0;
			batch = need < cap ? need : cap;
		} else if (oc == CALL_ICE) {
			/* probe_fill's own rule: halve, down to one */
			if (n == 1)
				return true;	/* subnet exhausted */
			batch = (n + 1) / 2;
			attempts++;
		} else if (oc == CALL_THROTTLE) {
			/* probe_fill's own rule: exhausted throttling ends the region */
			if (++throttles > r->o->tuning.throttle_limit)
				return false;
			gb_orch_sleep(r->o, orch_backoff(r, throttles - 1));
		} else {
			const struct orch_rule *rule = orch_rule(oc);

			if (rule->abort || rule->scope == ORCH_SCOPE_REGION)
				return false;	/* the region is over */
			code[0] = '\0';	/* only the subnet or AZ is */
			return true;
		}
	}
	return true;
}

static const char *region_status(int requested, int launched, bool error)
{
	if (requested > 0 && launched >= requested)
		return "FULL";
	if (launched > 0)
		return "PARTIAL";
	return error ? "ERROR" : "NONE";
}

/* The subnets of [region] in plan order. RET false when the region stopped. */
static bool probe_region(struct orch_run *r, const char *region, bool *any,
			 char *code, size_t code_len, gb_err_t *rc,
			 gb_error_t *err)
{
	for (size_t i = 0; r->plan && i < r->plan->n_steps; i++) {
		long p = orch_pool_index(r, &r->plan->steps[i]);

		if (p < 0 || strcmp(r->facts.pools[p].region, region) ||
		    r->facts.pools[p].excluded)
			continue;
		*any = true;
		if (!probe_subnet(r, (size_t)p, code, code_len, rc, err))
			return false;
		if (orch_unfilled(r) == 0)
			break;
	}
	return true;
}

gb_err_t orch_probe_fill(struct orch_run *r, gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;

	for (int g = r->cursor; g < (int)r->cand.n && !rc; g++) {
		const char *region = r->cand.v[g].region->name;
		int requested = orch_unfilled(r), before = filled_in(r, region);
		char code[64] = "";
		bool any = false, stopped;
		int launched;

		r->cursor = g;
		if ((rc = orch_check(r, "region", err)) || orch_stopped(r))
			break;
		stopped = !probe_region(r, region, &any, code, sizeof(code), &rc, err);
		if (rc)
			break;
		if (!any)
			gb_strlcpy(code, region_offers_any(r, region) ? "NO_SUBNETS" :
				   "NOT_OFFERED", sizeof(code));
		launched = filled_in(r, region) - before;
		orch_trace(r, "region_result", "region=%s status=%s requested=%d launched=%d remaining=%d code=%s",
			   region, region_status(requested, launched, stopped && code[0]),
			   requested, launched, orch_unfilled(r),
			   code[0] ? code : "-");
		/* probe_fill keeps locality per region, whatever its grain */
		if ((rc = orch_group_close(r, -1, err)))
			break;
		if (orch_unfilled(r) == 0) {
			trace_decide(r, "done", "all nodes filled");
			break;
		}
		if (r->abort_rc) {
			trace_decide(r, "abort", r->abort_text);
			break;
		}
		if (r->mode == GB_MODE_SINGLE_REGION) {
			trace_decide(r, "done", "single_region mode: no cross-region fallback");
			break;
		}
		trace_decide(r, "continue_next_region",
			     g + 1 < (int)r->cand.n ? "nodes remain" : "regions exhausted");
	}
	return rc;
}

/*****************************************************************************
 *  best_effort and all_or_nothing: one call at a time, in plan order
 *****************************************************************************/

static gb_err_t fill_pool(struct orch_run *r, size_t pool, bool aon,
			  gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;

	while (orch_unfilled(r) > 0 && !r->facts.pools[pool].excluded &&
	       !orch_stopped(r)) {
		int cap = pool_cap(r, pool), need = orch_unfilled(r);
		int k = need < cap ? need : cap;
		struct orch_call *c = call_new(r, pool, aon ? k : 1, k, k, NULL);
		enum call_outcome oc;

		if (!c)
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		rc = run_one(r, c, err);
		oc = orch_call_outcome(c);
		if (!rc)
			judge_pool(r, c, aon);
		orch_call_free(c);
		if (rc || oc == CALL_ABORT)
			break;
		if (oc == CALL_THROTTLE && !r->facts.pools[pool].excluded)
			gb_orch_sleep(r->o, orch_backoff(r, r->pr[pool].throttled - 1));
	}
	return rc;
}

gb_err_t orch_sequential(struct orch_run *r, bool aon, gb_error_t *err)
{
	int *groups = calloc((r->plan ? r->plan->n_steps : 0) + 1, sizeof(int));
	size_t ng;
	gb_err_t rc = GB_E_OK;

	if (!groups)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	ng = orch_plan_groups(r, groups);
	for (size_t gi = (size_t)r->cursor; gi < ng && !rc; gi++) {
		r->cursor = (int)gi;
		for (size_t i = 0; i < r->plan->n_steps && !rc; i++) {
			long p = orch_pool_index(r, &r->plan->steps[i]);

			if (orch_unfilled(r) == 0 || orch_stopped(r))
				break;
			if (p < 0 || !orch_in_group(r, (size_t)p, groups[gi]))
				continue;
			rc = fill_pool(r, (size_t)p, aon, err);
		}
		if (!rc)
			rc = orch_group_close(r, groups[gi], err);
		if (rc || orch_unfilled(r) == 0 || orch_stopped(r))
			break;
	}
	free(groups);
	return rc;
}

/*****************************************************************************
 *  The default: parallel waves sized by memory, hedged
 *****************************************************************************/

/* Instances the planner (or this run) expects from [pool]; -1 unknown. */
static int expectation(const struct orch_run *r, size_t pool,
		       const struct gb_plan_step *s)
{
	const struct pool_run *pr = &r->pr[pool];
	const struct gb_pool *p = &r->facts.pools[pool];

	if (pr->at_estimate)
		return 0;	/* last resort, as a pool memory calls empty */
	if (pr->tried)
		return -1;	/* it gave all it was asked: maybe more */
	if (s->expect > 0)
		return s->expect;
	if (p->mem.est >= 0 && !isinf(p->mem.est) && floor(p->mem.est + 0.5) < 1)
		return 0;	/* memory says empty: last resort only */
	if (p->mem.est < 0 && !p->mem.recent_ice && r->run_prior >= 0 &&
	    r->o->tuning.prior >= 0) {
		int e = (int)floor(r->run_prior + 0.5);

		return e < 1 ? 1 : e;
	}
	return -1;
}

/*
 * The default's work queue: [fly] are the calls sent and not yet
 * answered; [v] the batch being allocated (a "wave"), sent as soon as it
 * is made.  A new batch is made whenever an answer leaves nodes that no
 * call in flight names, so a call still backing off inside the client
 * never holds up the others' follow-ups.
 */
struct wave {
	struct orch_call **v;
	size_t n;
	struct orch_call **fly;
	size_t n_fly;
	const char *wall;	/* a pool was left for its remembered quota
				 * wall: the EC2 code (BORROWED), or NULL */
	bool waiting;		/* a pool was left while it backs off */
	int *hedge;		/* hedge slots wanted per call */
	int *cover;		/* call whose last node a spare covers, or -1 */
	size_t n_pass1;		/* calls to pools memory does not call empty */
	bool *used;		/* slots named by a call in flight or of the batch */
};

/* Calls in flight and in the batch: at most max_parallel. */
static bool wave_full(const struct orch_run *r, const struct wave *w)
{
	return w->n + w->n_fly >= (size_t)r->o->max_parallel;
}

/* A call in flight or in the batch asks [pool]'s AZ already. */
static bool az_busy(const struct orch_run *r, const struct wave *w,
		    size_t pool)
{
	for (size_t k = 0; k < w->n; k++)
		if (same_az(r, w->v[k]->pool, pool))
			return true;
	for (size_t k = 0; k < w->n_fly; k++)
		if (same_az(r, w->fly[k]->pool, pool))
			return true;
	return false;
}

/* used[] = the nodes named by calls in flight (hedge slots included). */
static int mark_flying(struct orch_run *r, struct wave *w)
{
	int free_nodes = 0;

	memset(w->used, 0, (size_t)r->n * sizeof(*w->used));
	for (size_t k = 0; k < w->n_fly; k++)
		for (int i = 0; i < w->fly[k]->max; i++)
			for (int j = 0; j < r->n; j++)
				if (r->slots[j].name == w->fly[k]->nodes[i])
					w->used[j] = true;
	for (int j = 0; j < r->n; j++)
		free_nodes += r->slots[j].state == SLOT_EMPTY && !w->used[j];
	return free_nodes;
}

static gb_err_t wave_add(struct orch_run *r, struct wave *w, size_t pool,
			 int count, int hedge, gb_error_t *err)
{
	struct orch_call *c = call_new(r, pool, 1, count + hedge, count, w->used);

	if (!c)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	w->hedge[w->n] = hedge;
	w->cover[w->n] = -1;
	w->v[w->n++] = c;
	return GB_E_OK;
}

/* No quota is remembered for [pool]'s region, and none refused in this run. */
static bool no_quota(const struct orch_run *r, size_t pool)
{
	const char *region = r->facts.pools[pool].region;

	if (!isinf(r->facts.pools[pool].mem.quota_room))
		return false;
	for (size_t i = 0; i < r->facts.n_pools; i++)
		if (r->pr[i].q_refused && strcmp(r->facts.pools[i].region, region) == 0)
			return false;
	return true;
}

/*
 * Hedge slots take the names of nodes no call in flight or of this batch
 * has; beyond those, each call shares at most one name: the last node of
 * the call it covers (a spare, the last chunk of a pool), else of the next
 * call in another region.  If that call falls one short, the hedge fills
 * exactly the node it missed; if both deliver, one is an extra, terminated
 * at once.  More shared names could only make extras: the call is shrunk
 * instead.  An extra holds its region's quota until EC2 has shut it down,
 * so calls in a region with a remembered quota share no name but a
 * cover's, and a hedge never shares with a call of its own region.
 */
static void name_hedges(struct orch_run *r, struct wave *w)
{
	for (size_t i = 0; i < w->n; i++) {
		struct orch_call *c = w->v[i];
		bool shared = false;
		int h;

		for (h = 0; h < w->hedge[i]; h++) {
			const char *name = NULL;

			for (int k = 0; k < r->n && !name; k++) {
				if (r->slots[k].state == SLOT_EMPTY && !w->used[k]) {
					w->used[k] = true;
					name = r->slots[k].name;
				}
			}
			if (!name && !shared && w->cover[i] >= 0 &&
			    w->v[w->cover[i]]->n_new > 0) {
				const struct orch_call *o = w->v[w->cover[i]];

				name = o->nodes[o->n_new - 1];
				shared = true;
			}
			for (size_t d = 1; d < w->n && !name && !shared &&
			     no_quota(r, c->pool); d++) {
				const struct orch_call *o = w->v[(i + d) % w->n];

				if (o->n_new > 0 && no_quota(r, o->pool) &&
				    strcmp(r->facts.pools[o->pool].region,
					   r->facts.pools[c->pool].region)) {
					name = o->nodes[o->n_new - 1];
					shared = true;
				}
			}
			if (!name)
				break;
			c->nodes[c->n_new + h] = name;
		}
		c->max = c->n_new + h;
	}
}

/*
 * Relying on [asked] instances from [pool] (expected [e]) is more than
 * memory can vouch for: the pool is only assumed, it never ran dry and
 * proved less, or its mean level is short of it.
 */
static bool uncertain(const struct orch_run *r, size_t pool, int e, int asked)
{
	const struct gb_pool *p = &r->facts.pools[pool];

	if (e < 0 || isinf(p->mem.est))
		return false;
	if (!p->mem.known || p->mem.est < 0)
		return true;
	if (!p->mem.measured && p->mem.floor >= 0)
		return asked > p->mem.floor + 0.2;
	return asked > p->mem.est + 0.2;
}

/*
 * Instances [pool]'s region may still give in this wave by quota memory:
 * its remembered room (live instances counted) minus what the wave already
 * asks there; HUGE_VAL when no quota is remembered.
 */
static double region_room(const struct orch_run *r, const struct wave *w,
			  size_t pool)
{
	const struct gb_pool *p = &r->facts.pools[pool];
	double room = p->mem.quota_room;

	if (isinf(room))
		return room;
	for (size_t k = 0; k < w->n; k++)
		if (strcmp(r->facts.pools[w->v[k]->pool].region, p->region) == 0)
			room -= w->v[k]->max;
	for (size_t k = 0; k < w->n_fly; k++)
		if (strcmp(r->facts.pools[w->fly[k]->pool].region, p->region) == 0)
			room -= w->fly[k]->max;
	return room;
}

/* A pool that was never seen run dry (its answer measures it). */
static bool never_dry(const struct gb_pool *p)
{
	return !p->mem.measured && p->mem.ice < 1e-3;
}

/*
 * A spare: when the wave relies on an uncertain estimate, one more pool is
 * asked for one instance named like the uncertain call's last node; if that
 * call falls one short the spare fills it in this wave instead of the next,
 * else it is an extra and terminated at once.
 */
static gb_err_t add_spare(struct orch_run *r, int group, struct wave *w,
			  int cover, gb_error_t *err)
{
	for (size_t i = 0; i < r->plan->n_steps; i++) {
		const struct gb_plan_step *s = &r->plan->steps[i];
		long p = orch_pool_index(r, s);
		gb_err_t rc;

		if (wave_full(r, w))
			return GB_E_OK;
		if (p < 0 || r->facts.pools[p].excluded || !orch_in_group(r, (size_t)p, group) ||
		    expectation(r, (size_t)p, s) == 0 || r->pr[p].not_before > 0 ||
		    az_busy(r, w, (size_t)p) || region_room(r, w, (size_t)p) < 1)
			continue;
		if ((rc = wave_add(r, w, (size_t)p, 0, 1, err)))
			return rc;
		w->cover[w->n - 1] = cover;
		return GB_E_OK;
	}
	return GB_E_OK;
}

static gb_err_t allocate(struct orch_run *r, int group, struct wave *w,
			 gb_error_t *err)
{
	int need = mark_flying(r, w), cover = -1;
	gb_err_t rc = GB_E_OK;

	w->n_pass1 = 0;
	w->wall = NULL;
	w->waiting = false;
	for (int pass = 0; pass < 2 && need > 0 && !rc; pass++, w->n_pass1 = w->n)
	for (size_t i = 0; i < r->plan->n_steps && need > 0 && !rc; i++) {
		const struct gb_plan_step *s = &r->plan->steps[i];
		long p = orch_pool_index(r, s);
		int cap, e, count, hedge = 0;
		double room;
		size_t first;
		bool unsure;

		if (wave_full(r, w))
			break;
		if (p < 0 || r->facts.pools[p].excluded || !orch_in_group(r, (size_t)p, group))
			continue;
		if (r->pr[p].not_before > 0) {
			w->waiting = true;	/* backing off after throttling */
			continue;
		}
		if (az_busy(r, w, (size_t)p))
			continue;	/* one call per AZ at a time, or chunks below */
		room = region_room(r, w, (size_t)p);
		if (room < 1) {
			/*
			 * Quota memory: the region's limit is reached.  Quotas
			 * are account settings, not weather: no probe (the
			 * nodes come back through reconcile after the cool-down).
			 */
			w->wall = r->facts.pools[p].mem.quota_code[0] ?
				  r->facts.pools[p].mem.quota_code : GB_EC2_CODE_VCPU_LIMIT;
			continue;
		}
		cap = pool_cap(r, (size_t)p);
		e = expectation(r, (size_t)p, s);
		if (e == 0 && (pass == 0 || w->n_pass1 > 0))
			continue;	/* empty per memory: only when nothing else is left */
		if (e == 0) {
			count = 1;	/* a probe of one, in parallel with others */
		} else if (e < 0) {
			/*
			 * Unknown size: one call, then one more in parallel
			 * for each call it answered in full (a slow start:
			 * the chunks double per round while it delivers).
			 * Not under throttling: more calls feed the storm.
			 */
			long room_c = (long)cap *
				      (1 + (r->saw_throttle ? 0 : r->pr[p].chunks));

			count = need < room_c ? need : (int)room_c;
		} else if (e >= need) {
			count = need;
		} else {
			const struct gb_pool *pl = &r->facts.pools[p];

			count = e;
			/*
			 * A pool memory has never seen run dry is asked to the
			 * cap (its last chunk's): the answer then measures it
			 * (and covers others).
			 */
			hedge = never_dry(pl) ? (cap - count % cap) % cap : r->hedge;
			if (r->hedge <= 0)
				hedge = 0;
		}
		if (count > room)
			count = (int)room;	/* never ask past the remembered quota */
		if (count + hedge > room)
			hedge = (int)room - count;
		if (hedge < 0)
			hedge = 0;
		unsure = uncertain(r, (size_t)p, e, count);
		need -= count;
		first = w->n;
		while (count > 0 && !rc && !wave_full(r, w)) {
			int c = count < cap ? count : cap;
			int h = count == c ? (hedge < cap - c ? hedge : cap - c) : 0;

			rc = wave_add(r, w, (size_t)p, c, h, err);
			count -= c;
			/*
			 * Chunks of one pool race for its instances: the last
			 * one's hedge covers the chunk before it, so a split
			 * of 3 + 2 for a 4 + 1 ask still fills every node.
			 */
			if (!rc && w->n - first > 1)
				w->cover[w->n - 1] = (int)w->n - 2;
			if (!rc && count == 0 && unsure)
				cover = (int)w->n - 1;
		}
		need += count;	/* what the parallel cap left over */
	}
	/*
	 * A spare saves a round trip only while nothing else is in flight:
	 * a follow-up batch is sent the moment its uncertain call answers.
	 * Under throttling a call costs several requests and feeds the storm.
	 */
	if (!rc && cover >= 0 && need <= 0 && r->hedge > 0 && w->n_fly == 0 &&
	    !r->saw_throttle)
		rc = add_spare(r, group, w, cover, err);
	if (!rc)
		name_hedges(r, w);
	for (size_t i = 0; i < w->n; i++) {
		if (w->v[i]->max >= 1)
			continue;
		orch_call_free(w->v[i]);	/* a spare without a name */
		w->v[i] = w->v[--w->n];
		w->hedge[i] = w->hedge[w->n];
		w->cover[i] = w->cover[w->n];
		i--;
	}
	return rc;
}

static void wave_free(struct wave *w)
{
	for (size_t i = 0; i < w->n; i++)
		orch_call_free(w->v[i]);
	w->n = 0;
}

/*
 * Every pool left is behind a quota wall that memory remembers: finish
 * (PARTIAL or FAILED) instead of probing them.  The unfilled nodes go
 * DOWN with the quota reason, and reconcile returns them after the
 * cool-down; the wall is forgotten two half-lives after its last refusal.
 */
static void stop_at_wall(struct orch_run *r, const char *code)
{
	struct gb_buf b = GB_BUF_INIT;

	for (size_t i = 0; i < r->facts.n_pools; i++) {
		const struct gb_pool *p = &r->facts.pools[i];
		bool first = true;

		if (p->excluded || p->offered == GB_OFFER_NO || p->mem.quota_room >= 1)
			continue;
		for (size_t j = 0; j < i && first; j++)
			first = strcmp(r->facts.pools[j].region, p->region) != 0;
		if (!first)
			continue;
		gb_buf_printf(&b, "%s%s:%s", b.len ? "," : "", p->region,
			      p->mem.quota_code[0] ? p->mem.quota_code : code);
		/* the reason names where the request could not go */
		if (gb_strv_find(&r->tried_regions, p->region) < 0)
			gb_strv_add(&r->tried_regions, p->region);
	}
	r->saw_quota = true;
	gb_strlcpy(r->quota_code, code, sizeof(r->quota_code));
	orch_trace(r, "quota", "stop: every pool left is behind a remembered quota wall (%s); not probed, %d nodes unfilled",
		   b.len ? gb_buf_str(&b) : code, orch_unfilled(r));
	gb_buf_free(&b);
}

/* "wave round=2 calls=3 need=5 flying=2 asks=ap-south-1a:3+1,..." */
static void trace_batch(struct orch_run *r, const struct wave *w, int round)
{
	struct gb_buf b = GB_BUF_INIT;

	for (size_t i = 0; i < w->n; i++)
		gb_buf_printf(&b, "%s%s:%d+%d", i ? "," : "",
			      r->facts.pools[w->v[i]->pool].az, w->v[i]->n_new,
			      w->v[i]->max - w->v[i]->n_new);
	orch_trace(r, "wave", "round=%d calls=%zu need=%d flying=%zu asks=%s", round,
		   w->n, orch_unfilled(r), w->n_fly, gb_buf_str(&b));
	gb_buf_free(&b);
}

/* Begin the batch's calls (attempt rows) and send them; they fly. */
static gb_err_t send_batch(struct orch_run *r, struct wave *w, gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;
	size_t i;

	for (i = 0; i < w->n && !rc; i++)
		rc = orch_call_begin(r, w->v[i], err);
	if (rc) {
		wave_free(w);
		return rc;
	}
	if (!orch_calls_send(r, w->v, w->n)) {
		/* no memory to queue them: send them as one wave */
		rc = orch_wave(r, w->v, w->n, err);
		for (i = 0; i < w->n && !rc; i++)
			judge_pool(r, w->v[i], false);
		wave_free(w);
		return rc;
	}
	for (i = 0; i < w->n; i++)
		w->fly[w->n_fly++] = w->v[i];
	w->n = 0;
	return GB_E_OK;
}

/*
 * Wait for answers, process them (records, nodes, extras, memory) and
 * judge their pools; a throttled pool backs off before it is asked again,
 * while the others go on.
 */
static gb_err_t land(struct orch_run *r, struct wave *w, gb_error_t *err)
{
	struct orch_call *done[GB_ORCH_MAX_PARALLEL];
	size_t n;
	gb_err_t rc = GB_E_OK;

	n = orch_calls_answered(r, done, w->n_fly);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < w->n_fly; k++)
			if (w->fly[k] == done[i]) {
				w->fly[k] = w->fly[--w->n_fly];
				break;
			}
	rc = orch_calls_process(r, done, n, err);
	for (size_t i = 0; i < n; i++) {
		struct pool_run *pr = &r->pr[done[i]->pool];

		if (!rc)
			judge_pool(r, done[i], false);
		if (!rc && orch_call_outcome(done[i]) == CALL_THROTTLE &&
		    !r->facts.pools[done[i]->pool].excluded)
			pr->not_before = gb_orch_mono(r->o) +
					 orch_backoff(r, pr->throttled - 1) / 2;
		orch_call_free(done[i]);
	}
	return rc;
}

/* Nothing flies and only pools backing off are left: wait for the first. */
static void wait_backoff(struct orch_run *r)
{
	double first = HUGE_VAL, now = gb_orch_mono(r->o);

	for (size_t i = 0; i < r->facts.n_pools; i++)
		if (r->pr[i].not_before > 0 && r->pr[i].not_before < first)
			first = r->pr[i].not_before;
	if (isinf(first))
		return;
	if (first > now)
		gb_orch_sleep(r->o, first - now);
	for (size_t i = 0; i < r->facts.n_pools; i++)
		if (r->pr[i].not_before > 0 && r->pr[i].not_before <= first)
			r->pr[i].not_before = 0;
}

static gb_err_t default_group(struct orch_run *r, int group, struct wave *w,
			      gb_error_t *err)
{
	int round = 0, stalled = 0, last = orch_unfilled(r);
	gb_err_t rc = GB_E_OK, rc2;
	char why[96];

	for (;;) {
		bool go;

		/*
		 * max_rounds bounds the batches sent in a row without a node
		 * filled: a large request against ample capacity takes as
		 * many batches as it needs (1000 nodes in calls of 4).
		 */
		if (orch_unfilled(r) < last) {
			last = orch_unfilled(r);
			stalled = 0;
		}
		go = !rc && !r->abort_rc && r->plan && stalled < r->o->tuning.max_rounds &&
		     orch_unfilled(r) > 0 && !orch_stopped(r);

		for (size_t i = 0; i < r->facts.n_pools; i++)
			if (r->pr[i].not_before > 0 &&
			    r->pr[i].not_before <= gb_orch_mono(r->o))
				r->pr[i].not_before = 0;
		if (go && (rc = allocate(r, group, w, err)) == GB_E_OK && w->n > 0) {
			trace_batch(r, w, ++round);
			stalled++;
			rc = send_batch(r, w, err);
		}
		wave_free(w);
		if (w->n_fly == 0) {
			if (!go || rc || r->abort_rc || orch_unfilled(r) == 0)
				break;
			if (w->waiting) {
				wait_backoff(r);
				continue;
			}
			if (w->wall)
				stop_at_wall(r, w->wall);
			break;
		}
		/* answers are always processed: every instance gets recorded */
		rc2 = land(r, w, rc ? NULL : err);
		if (!rc)
			rc = rc2;
		if (!rc && !r->abort_rc && orch_unfilled(r) > 0 &&
		    mark_flying(r, w) > 0) {
			snprintf(why, sizeof(why), "wave %d left %d nodes", round,
				 orch_unfilled(r));
			rc = orch_replan(r, why, err);
		}
	}
	return rc;
}

gb_err_t orch_default(struct orch_run *r, gb_error_t *err)
{
	size_t steps = r->plan ? r->plan->n_steps : 0;
	int *groups = calloc(steps + 1, sizeof(int));
	struct wave w = { 0 };
	size_t ng;
	gb_err_t rc = GB_E_OK;

	w.v = calloc((size_t)r->o->max_parallel + 1, sizeof(*w.v));
	w.fly = calloc((size_t)r->o->max_parallel + 1, sizeof(*w.fly));
	w.hedge = calloc((size_t)r->o->max_parallel + 1, sizeof(*w.hedge));
	w.cover = calloc((size_t)r->o->max_parallel + 1, sizeof(*w.cover));
	w.used = calloc((size_t)r->n + 1, sizeof(*w.used));
	if (!groups || !w.v || !w.fly || !w.hedge || !w.cover || !w.used) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	ng = orch_plan_groups(r, groups);
	for (size_t gi = (size_t)r->cursor; gi < ng && !rc; gi++) {
		r->cursor = (int)gi;
		if ((rc = orch_check(r, "group", err)))
			break;
		rc = default_group(r, groups[gi], &w, err);
		if (!rc)
			rc = orch_group_close(r, groups[gi], err);
		if (rc || orch_unfilled(r) == 0 || orch_stopped(r))
			break;
	}
out:
	free(groups);
	free(w.v);
	free(w.fly);
	free(w.hedge);
	free(w.cover);
	free(w.used);
	return rc;
}
