/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_default.c - the default strategy: a work queue of calls sized by
 * capacity and quota memory, hedged, as an explicit phase machine
 *
 * doc/orchestrator.md ("default") describes what it does; bench/fill
 * measures it against the other strategies.  One locality group at a
 * time runs the phases below; phase() is the only place the phase
 * changes, and it writes the decision trace of each change that matters.
 *
 *   ALLOCATE  size the next batch from the plan, memory and the calls
 *             in flight; nothing to send: DONE, BACKOFF or WALL
 *   SEND      begin the batch's attempts and send them; they fly
 *   LAND      wait for answers, record them, judge their pools
 *   REPLAN    nodes are left that no call in flight names: a new plan
 *   BACKOFF   only pools backing off (throttled, a block not open yet) are left: wait
 *   WALL      every pool left is behind a remembered quota wall: stop
 *   DONE      the group is over (filled, stalled, stopped, or nothing left)
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "orch_int.h"

/*****************************************************************************
 *  The default: parallel waves sized by memory, hedged
 *****************************************************************************/

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
	bool held;		/* ... or while another request's call asks it */
	int busy_rank;		/* the best region rank held so (INT_MAX: none):
				 * no pool of a farther region is asked meanwhile */
	unsigned long board_gen;	/* the board when the batch was made */
	int *hedge;		/* hedge slots wanted per call */
	int *cover;		/* call whose last node a spare covers, or -1 */
	size_t n_pass1;		/* calls to pools memory does not call empty */
	bool *used;		/* slots named by a call in flight or of the batch */
};

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

/* Calls in flight and in the batch: at most max_parallel. */
static bool wave_full(const struct orch_run *r, const struct wave *w)
{
	return w->n + w->n_fly >= (size_t)r->o->max_parallel;
}

/* A call in flight or in the batch asks [pool]'s AZ (for its type) already. */
static bool az_busy(const struct orch_run *r, const struct wave *w,
		    size_t pool)
{
	for (size_t k = 0; k < w->n; k++)
		if (orch_same_capacity(r, w->v[k]->pool, pool))
			return true;
	for (size_t k = 0; k < w->n_fly; k++)
		if (orch_same_capacity(r, w->fly[k]->pool, pool))
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
	struct orch_call *c = orch_call_new(r, pool, 1, count + hedge, count, w->used);

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

	if (e < 0 || isinf(p->mem.est) || p->reserved >= 0)
		return false;	/* a reservation's count is exact */
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

/*
 * Do Capacity Blocks of a rung above [rung], not open yet but waited for,
 * hold every node still unfilled?  Then a lower rung waits with them:
 * capacity bought ahead is not doubled by on-demand meanwhile.
 */
static bool blocks_cover(const struct orch_run *r, const struct wave *w, int rung)
{
	int held = 0, free_nodes = 0;

	for (size_t i = 0; i < r->facts.n_pools; i++) {
		const struct gb_pool *p = &r->facts.pools[i];

		if (p->rung < rung && p->opens_at > 0 && !p->excluded &&
		    r->pr[i].not_before > 0 && p->subnet_index == 0 && p->reserved > 0)
			held += p->reserved;
	}
	/* the nodes no call in flight or in the batch names */
	for (int j = 0; held > 0 && j < r->n; j++)
		free_nodes += r->slots[j].state == SLOT_EMPTY && !w->used[j];
	return held > 0 && held >= free_nodes;
}

/* Does [r] use the board?  Not when off, nor placed (its pools are its own). */
static bool board_on(const struct orch_run *r)
{
	return !r->placed && r->o->tuning.board >= 0;
}

/*
 * Another request of this worker has a call in flight to [pool]: its
 * answer comes first (orch_board.c).
 */
static bool board_busy(const struct orch_run *r, size_t pool)
{
	char key[ORCH_BOARD_KEY_MAX];

	if (!board_on(r))
		return false;
	orch_board_key(r, pool, NULL, key, sizeof(key));
	return orch_board_busy(r->o->board, key, r, orch_mono(r->o));
}

/*
 * Pools another request of this worker found dry (orch_board.c) are left
 * as if this run had: one InsufficientInstanceCapacity per dry pool and
 * burst.  The trace says whose answer it was.
 */
static void board_dry(struct orch_run *r, int group)
{
	double now = orch_mono(r->o);

	if (!board_on(r))
		return;
	for (size_t i = 0; i < r->facts.n_pools; i++) {
		const struct gb_pool *p = &r->facts.pools[i];
		char key[ORCH_BOARD_KEY_MAX];
		struct orch_board_dry d;

		if (p->excluded || !orch_in_group(r, i, group))
			continue;
		orch_board_key(r, i, NULL, key, sizeof(key));
		if (!orch_board_dry(r->o->board, key, now, r->t0, &d) ||
		    strcmp(d.by, r->req->id) == 0)
			continue;
		orch_exclude_capacity(r, i, "dry");
		r->saw_capacity = true;
		gb_strlcpy(r->last_code, strcmp(d.code, "partial") ? d.code : GB_EC2_CODE_ICE,
			   sizeof(r->last_code));
		orch_trace(r, "board", "pool=%s type=%s capacity=%s left: request %s's call there answered %s %.1f s ago",
			   p->az, p->type, gb_conf_capacity_name(p->capacity), d.by,
			   strcmp(d.code, "partial") ? d.code : "with fewer instances than asked",
			   d.age);
	}
}

/*
 * May [pool] be asked in this batch?  Not when excluded, of another
 * group, backing off after throttling or waiting for its Capacity Block to
 * open (w->waiting), below such blocks that will hold the rest, asked
 * already in its AZ (one call per AZ at a time, or chunks below), asked
 * by another request's call in flight (w->held), or behind its region's
 * remembered quota (w->wall).
 */
static bool may_ask(const struct orch_run *r, struct wave *w, int group,
		    size_t pool)
{
	const struct gb_pool *p = &r->facts.pools[pool];

	if (p->excluded || !orch_in_group(r, pool, group))
		return false;
	if (r->pr[pool].not_before > 0 || blocks_cover(r, w, p->rung)) {
		w->waiting = true;
		return false;
	}
	if (az_busy(r, w, pool))
		return false;
	if (p->rank > w->busy_rank || board_busy(r, pool)) {
		/* its answer first; another AZ of the region may go on */
		if (p->rank < w->busy_rank)
			w->busy_rank = p->rank;
		w->waiting = w->held = true;
		return false;
	}
	if (region_room(r, w, pool) < 1) {
		/*
		 * Quota memory: the region's limit is reached.  Quotas are
		 * account settings, not weather: no probe (the nodes come
		 * back through reconcile after the cool-down).
		 */
		w->wall = p->mem.quota_code[0] ? p->mem.quota_code : GB_EC2_CODE_VCPU_LIMIT;
		return false;
	}
	return true;
}

/* One pool's ask in a batch. */
struct ask {
	int count;		/* nodes it is asked for */
	int hedge;		/* hedge slots beyond them */
	bool unsure;		/* more than memory can vouch for: a spare covers it */
};

/* What memory and the plan expect of a pool, against what is needed. */
enum expect_class {
	EXPECT_EMPTY,		/* memory calls it empty: last resort */
	EXPECT_UNKNOWN,		/* never seen, or it gave all it was asked */
	EXPECT_ENOUGH,		/* expected to hold every node still needed */
	EXPECT_SHORT,		/* expected to hold some */
};

static enum expect_class expect_class(int e, int need)
{
	if (e == 0)
		return EXPECT_EMPTY;
	if (e < 0)
		return EXPECT_UNKNOWN;
	return e >= need ? EXPECT_ENOUGH : EXPECT_SHORT;
}

/*
 * Size [pool]'s ask for [need] nodes in [pass] (0: pools memory does not
 * call empty; 1: those too, when pass 0 asked nothing).  RET false: not
 * asked in this pass.
 */
static bool ask_size(const struct orch_run *r, const struct wave *w, size_t pool,
		     const struct gb_plan_step *s, int need, int pass,
		     struct ask *a)
{
	int cap = orch_pool_cap(r, pool), e = expectation(r, pool, s);
	double room = region_room(r, w, pool);
	long room_c;

	a->hedge = 0;
	switch (expect_class(e, need)) {
	case EXPECT_EMPTY:
		if (pass == 0 || w->n_pass1 > 0)
			return false;	/* only when nothing else is left */
		a->count = 1;	/* a probe of one, in parallel with others */
		break;
	case EXPECT_UNKNOWN:
		/*
		 * One call, then one more in parallel for each call it
		 * answered in full (a slow start: the chunks double per round
		 * while it delivers).  Not under throttling: more calls feed
		 * the storm.
		 */
		room_c = (long)cap * (1 + (r->saw_throttle ? 0 : r->pr[pool].chunks));
		a->count = need < room_c ? need : (int)room_c;
		break;
	case EXPECT_ENOUGH:
		a->count = need;
		break;
	case EXPECT_SHORT:
		a->count = e;
		/*
		 * A pool memory has never seen run dry is asked to the cap
		 * (its last chunk's): the answer then measures it (and
		 * covers others).
		 */
		a->hedge = r->hedge <= 0 || r->facts.pools[pool].reserved >= 0 ? 0 :
			   never_dry(&r->facts.pools[pool]) ? (cap - a->count % cap) % cap :
			   r->hedge;
		break;
	}
	/* never ask past the remembered quota */
	if (a->count > room)
		a->count = (int)room;
	if (a->count + a->hedge > room)
		a->hedge = (int)room - a->count;
	if (a->hedge < 0)
		a->hedge = 0;
	a->unsure = uncertain(r, pool, e, a->count);
	return true;
}

/*
 * [a] as calls of at most the pool's cap, the hedge on the last; OUT
 * a->count what the parallel cap left over, *cover the last call when the
 * ask is unsure (a spare may cover it).
 */
static gb_err_t chunk_pool(struct orch_run *r, struct wave *w, size_t pool,
			   struct ask *a, int *cover, gb_error_t *err)
{
	int cap = orch_pool_cap(r, pool);
	size_t first = w->n;
	gb_err_t rc = GB_E_OK;

	while (a->count > 0 && !rc && !wave_full(r, w)) {
		int c = a->count < cap ? a->count : cap;
		int h = a->count == c ? (a->hedge < cap - c ? a->hedge : cap - c) : 0;

		rc = wave_add(r, w, pool, c, h, err);
		a->count -= c;
		/*
		 * Chunks of one pool race for its instances: the last one's
		 * hedge covers the chunk before it, so a split of 3 + 2 for a
		 * 4 + 1 ask still fills every node.
		 */
		if (!rc && w->n - first > 1)
			w->cover[w->n - 1] = (int)w->n - 2;
		if (!rc && a->count == 0 && a->unsure)
			*cover = (int)w->n - 1;
	}
	return rc;
}

/* One pass over the plan's steps for the *need nodes left. */
static gb_err_t allocate_pass(struct orch_run *r, int group, struct wave *w,
			      int pass, int *need, int *cover, gb_error_t *err)
{
	for (size_t i = 0; i < r->plan->n_steps && *need > 0; i++) {
		const struct gb_plan_step *s = &r->plan->steps[i];
		long p = orch_pool_index(r, s);
		struct ask a;
		gb_err_t rc;

		if (wave_full(r, w))
			break;
		if (p < 0 || !may_ask(r, w, group, (size_t)p) ||
		    !ask_size(r, w, (size_t)p, s, *need, pass, &a))
			continue;
		*need -= a.count;
		rc = chunk_pool(r, w, (size_t)p, &a, cover, err);
		*need += a.count;
		if (rc)
			return rc;
	}
	return GB_E_OK;
}

/* Drop the spares no name was left for. */
static void drop_nameless(struct wave *w)
{
	for (size_t i = 0; i < w->n; i++) {
		if (w->v[i]->max >= 1)
			continue;
		orch_call_free(w->v[i]);
		w->v[i] = w->v[--w->n];
		w->hedge[i] = w->hedge[w->n];
		w->cover[i] = w->cover[w->n];
		i--;
	}
}

/*
 * Note the batch's calls on the board, each checked at once against the
 * other requests' calls in flight (board_busy() only filtered: another
 * request may have sent there since).  A call whose pool another request
 * now asks leaves the batch (w->held): its nodes go to the next batch.
 */
static void board_admit(struct orch_run *r, struct wave *w)
{
	double now = orch_mono(r->o);

	if (!board_on(r))
		return;
	for (size_t i = 0; i < w->n; i++) {
		struct orch_call *c = w->v[i];

		orch_board_key(r, c->pool, NULL, c->board_key, sizeof(c->board_key));
		switch (orch_board_admit(r->o->board, c->board_key, r, now)) {
		case ORCH_ADMIT_FLYING:
			c->job.board_flying = true;
			break;
		case ORCH_ADMIT_UNNOTED:
			c->board_unnoted = true;
			break;
		case ORCH_ADMIT_BUSY:
			orch_call_free(c);
			w->v[i] = w->v[--w->n];
			w->hedge[i] = w->hedge[w->n];
			w->cover[i] = w->cover[w->n];
			w->waiting = w->held = true;
			i--;
			break;
		}
	}
}

/* Take the batch's calls off the board: they were not sent. */
static void board_unadmit(struct orch_run *r, struct wave *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i]->job.board_flying)
			orch_board_land(r->o->board, w->v[i]->board_key, r, orch_mono(r->o),
					false, false, r->req->id, "");
}

/*
 * The next batch for [group]: the plan's pools in two passes, a spare when
 * an ask is unsure, then the hedge slots named; what another request asks
 * now waits (board_admit).
 */
static gb_err_t allocate(struct orch_run *r, int group, struct wave *w,
			 gb_error_t *err)
{
	int need = mark_flying(r, w), cover = -1;
	gb_err_t rc = GB_E_OK;

	w->n_pass1 = 0;
	w->wall = NULL;
	w->waiting = w->held = false;
	w->busy_rank = INT_MAX;
	w->board_gen = orch_board_gen(r->o->board);
	board_dry(r, group);
	for (int pass = 0; pass < 2 && need > 0 && !rc; pass++) {
		rc = allocate_pass(r, group, w, pass, &need, &cover, err);
		w->n_pass1 = w->n;
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
	drop_nameless(w);
	if (!rc)
		board_admit(r, w);
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
		board_unadmit(r, w);
		wave_free(w);
		return rc;
	}
	if (!orch_calls_send(r, w->v, w->n)) {
		/* no memory to queue them: send them as one wave */
		rc = orch_wave(r, w->v, w->n, err);
		for (i = 0; i < w->n && !rc; i++)
			orch_judge_pool(r, w->v[i], false);
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
			orch_judge_pool(r, done[i], false);
		if (!rc && orch_call_outcome(done[i]) == CALL_THROTTLE &&
		    !r->facts.pools[done[i]->pool].excluded)
			pr->not_before = orch_mono(r->o) +
					 orch_backoff(r, pr->throttled - 1) / 2;
		orch_call_free(done[i]);
	}
	return rc;
}

/*
 * Nothing flies and only pools backing off, or asked by another request's
 * call in flight, are left: wait for the first back-off to end or for an
 * answer on the board.
 */
static void wait_backoff(struct orch_run *r, const struct wave *w)
{
	double first = HUGE_VAL, now = orch_mono(r->o);

	for (size_t i = 0; i < r->facts.n_pools; i++)
		if (r->pr[i].not_before > 0 && r->pr[i].not_before < first)
			first = r->pr[i].not_before;
	if (w->held) {	/* ph_allocate() then ends the back-offs that are over */
		orch_board_wait(r->o->board, w->board_gen,
				first - now < ORCH_BOARD_HOLD_S ? first - now : ORCH_BOARD_HOLD_S);
		return;
	}
	if (isinf(first))
		return;
	if (first > now)
		orch_sleep(r->o, first - now);
	for (size_t i = 0; i < r->facts.n_pools; i++)
		if (r->pr[i].not_before > 0 && r->pr[i].not_before <= first)
			r->pr[i].not_before = 0;
}

/*****************************************************************************
 *  The phase machine of one locality group
 *****************************************************************************/

enum orch_phase {
	PHASE_ALLOCATE = 0,
	PHASE_SEND,
	PHASE_LAND,
	PHASE_REPLAN,
	PHASE_BACKOFF,
	PHASE_WALL,
	PHASE_DONE,
	PHASE__COUNT
};

static const char *const phase_names[PHASE__COUNT] = {
	"allocate", "send", "land", "replan", "backoff", "wall", "done",
};

/* One group's run of the default strategy. */
struct dgroup {
	struct orch_run *r;
	struct wave *w;
	int group;
	enum orch_phase phase;
	int round;		/* batches sent */
	int stalled;		/* ... in a row without a node filled */
	int last;		/* nodes unfilled when one was last filled */
	bool go;		/* ALLOCATE found more to ask for */
	bool waiting;		/* in BACKOFF since the last batch sent: one
				 * trace line per wait, not one per wake-up */
	const char *why;	/* DONE: why the group is over */
	gb_err_t rc;
	gb_error_t *err;
};

static void enter_send(struct dgroup *d)
{
	d->waiting = false;
	trace_batch(d->r, d->w, ++d->round);
}

static void enter_backoff(struct dgroup *d)
{
	if (d->waiting)
		return;
	d->waiting = true;
	orch_trace(d->r, "backoff", "group=%d wait: only pools backing off after throttling, Capacity Blocks not open yet or pools another request's call asks are left",
		   d->group);
}

static void enter_wall(struct dgroup *d)
{
	stop_at_wall(d->r, d->w->wall);
}

static void enter_done(struct dgroup *d)
{
	orch_trace(d->r, "done", "group=%d rounds=%d remaining=%d reason=%s", d->group,
		   d->round, orch_unfilled(d->r), d->why);
}

/* What entering a phase writes into the decision trace (curl's mstate()). */
static void (*const phase_enter[PHASE__COUNT])(struct dgroup *d) = {
	[PHASE_SEND] = enter_send,
	[PHASE_BACKOFF] = enter_backoff,
	[PHASE_WALL] = enter_wall,
	[PHASE_DONE] = enter_done,
};

/* The one place the phase changes. */
static void phase(struct dgroup *d, enum orch_phase to)
{
	gb_log_debug("orch_phase req=%s group=%d from=%s to=%s", d->r->req->id, d->group,
		     phase_names[d->phase], phase_names[to]);
	d->phase = to;
	if (phase_enter[to])
		phase_enter[to](d);
}

/* Nothing more was sent: land what flies, else the group is over. */
static enum orch_phase after_batch(struct dgroup *d)
{
	struct orch_run *r = d->r;

	if (d->w->n_fly > 0)
		return PHASE_LAND;
	if (d->rc || r->abort_rc) {
		d->why = d->rc ? "error" : "aborted";
		return PHASE_DONE;
	}
	if (orch_unfilled(r) == 0) {
		d->why = "all nodes filled";
		return PHASE_DONE;
	}
	if (!d->go) {
		d->why = !r->plan ? "no plan" : orch_stopped(r) ? "stopped" :
			 "no node filled in max_rounds batches";
		return PHASE_DONE;
	}
	if (d->w->waiting)
		return PHASE_BACKOFF;
	if (d->w->wall)
		return PHASE_WALL;
	d->why = "no pool left to ask";
	return PHASE_DONE;
}

/*
 * A pool of [group]'s plan that no call has asked yet and nothing has
 * excluded: the group is not over while one is left, whatever max_rounds
 * says (a batch of one call to a pool memory calls empty is one round).
 */
static bool unasked(const struct orch_run *r, int group)
{
	for (size_t i = 0; r->plan && i < r->plan->n_steps; i++) {
		long p = orch_pool_index(r, &r->plan->steps[i]);

		if (p >= 0 && !r->pr[p].tried && !r->facts.pools[p].excluded &&
		    orch_in_group(r, (size_t)p, group))
			return true;
	}
	return false;
}

static enum orch_phase ph_allocate(struct dgroup *d)
{
	struct orch_run *r = d->r;
	double now = orch_mono(r->o);

	/*
	 * max_rounds bounds the batches sent in a row without a node filled:
	 * a large request against ample capacity takes as many batches as it
	 * needs (1000 nodes in calls of 4).
	 */
	if (orch_unfilled(r) < d->last) {
		d->last = orch_unfilled(r);
		d->stalled = 0;
	}
	d->go = !d->rc && !r->abort_rc && r->plan &&
		(d->stalled < r->o->tuning.max_rounds || unasked(r, d->group)) &&
		orch_unfilled(r) > 0 && !orch_stopped(r);
	for (size_t i = 0; i < r->facts.n_pools; i++)
		if (r->pr[i].not_before > 0 && r->pr[i].not_before <= now)
			r->pr[i].not_before = 0;
	if (d->go && (d->rc = allocate(r, d->group, d->w, d->err)) == GB_E_OK &&
	    d->w->n > 0)
		return PHASE_SEND;
	wave_free(d->w);
	return after_batch(d);
}

static enum orch_phase ph_send(struct dgroup *d)
{
	d->stalled++;
	d->rc = send_batch(d->r, d->w, d->err);
	wave_free(d->w);
	return after_batch(d);
}

static enum orch_phase ph_land(struct dgroup *d)
{
	struct orch_run *r = d->r;
	/* answers are always processed: every instance gets recorded */
	gb_err_t rc = land(r, d->w, d->rc ? NULL : d->err);

	if (!d->rc)
		d->rc = rc;
	if (!d->rc && !r->abort_rc && orch_unfilled(r) > 0 && mark_flying(r, d->w) > 0)
		return PHASE_REPLAN;
	return PHASE_ALLOCATE;
}

static enum orch_phase ph_replan(struct dgroup *d)
{
	char why[96];

	snprintf(why, sizeof(why), "wave %d left %d nodes", d->round, orch_unfilled(d->r));
	d->rc = orch_replan(d->r, why, d->err);
	return PHASE_ALLOCATE;
}

static enum orch_phase ph_backoff(struct dgroup *d)
{
	wait_backoff(d->r, d->w);
	return PHASE_ALLOCATE;
}

static enum orch_phase ph_wall(struct dgroup *d)
{
	d->why = "every pool left is behind a quota wall";
	return PHASE_DONE;
}

static enum orch_phase (*const phase_step[PHASE__COUNT])(struct dgroup *d) = {
	[PHASE_ALLOCATE] = ph_allocate,
	[PHASE_SEND] = ph_send,
	[PHASE_LAND] = ph_land,
	[PHASE_REPLAN] = ph_replan,
	[PHASE_BACKOFF] = ph_backoff,
	[PHASE_WALL] = ph_wall,
};

static gb_err_t default_group(struct orch_run *r, int group, struct wave *w,
			      gb_error_t *err)
{
	struct dgroup d = {
		.r = r, .w = w, .group = group, .phase = PHASE_ALLOCATE,
		.last = orch_unfilled(r), .why = "", .err = err,
	};

	while (d.phase != PHASE_DONE)
		phase(&d, phase_step[d.phase](&d));
	return d.rc;
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
