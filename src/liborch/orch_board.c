/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_board.c - what the requests running in one worker learn from each
 * other's RunInstances calls, the moment the answers arrive
 *
 * The requests of a burst (the jobs Slurm powers up together) run side by
 * side in one worker, each with its own plan.  Capacity memory in the
 * state file reaches the requests planned after an answer; the board
 * reaches the ones already running:
 *
 *   dry     a pool (region, AZ, type, capacity kind, reservation,
 *           placement group: the key Karpenter's unavailable-offerings
 *           cache uses) that answered InsufficientInstanceCapacity, or
 *           gave fewer than it was asked, is left by every other request
 *           whose capacity memory predates it: the ones that began before
 *           the answering request wrote it into memory (orch_learn), for
 *           at most ORCH_BOARD_DRY_S.  Later requests go by memory, which
 *           probes such a pool with one instance when nothing else is
 *           left.  An answer with instances clears the mark.
 *   flying  while one request's call to a pool is in flight, no other
 *           request sends one there (for at most ORCH_BOARD_HOLD_S): it
 *           waits for the answer, so a pool that is dry costs one
 *           InsufficientInstanceCapacity per burst, not one per request.
 *   flowing ... or as many as its answers in a row gave every instance
 *           asked (the last within ORCH_BOARD_FLOW_S, at most
 *           ORCH_BOARD_FLOW_MAX): a burst into ample capacity is not one
 *           call at a time (the allowance grows like TCP's slow start),
 *           and a pool that runs dry costs at most that many refusals,
 *           never more than the instances it gave; the first refusal
 *           marks it dry.
 *
 * The pool threads report answers (orch_board_land), so a request that
 * waits never depends on another request's thread making progress.
 * Everything here is under one mutex; the tables are as small as the
 * calls in flight and the pools that ran dry.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gb_util.h"
#include "orch_int.h"

struct flight {
	char key[ORCH_BOARD_KEY_MAX];
	const void *owner;
	double since;		/* mono */
};

struct dry {
	char key[ORCH_BOARD_KEY_MAX];
	double until;		/* mono */
	const void *owner;	/* the run that found it, until it learned it */
	double learned;		/* when that run wrote memory (mono), or 0 */
	char by[GB_REQUEST_ID_LEN + 1];	/* the request that asked */
	char code[48];		/* EC2's code, or "partial" */
};

/* A pool whose last answers gave every instance asked. */
struct flow {
	char key[ORCH_BOARD_KEY_MAX];
	double until;		/* mono */
	int full;		/* such answers in a row */
};

struct orch_board {
	pthread_mutex_t mu;
	pthread_cond_t changed;
	unsigned long gen;	/* bumped by every answer */
	struct flight *fly;
	size_t n_fly, cap_fly;
	struct dry *dry;
	size_t n_dry, cap_dry;
	struct flow *flow;
	size_t n_flow, cap_flow;
};

gb_err_t orch_board_create(struct orch_board **out, gb_error_t *err)
{
	struct orch_board *b = calloc(1, sizeof(*b));
	pthread_condattr_t ca;

	*out = NULL;
	if (!b)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	if (pthread_condattr_init(&ca) != 0) {
		free(b);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->changed, &ca);
	pthread_condattr_destroy(&ca);
	*out = b;
	return GB_E_OK;
}

void orch_board_destroy(struct orch_board *b)
{
	if (!b)
		return;
	pthread_cond_destroy(&b->changed);
	pthread_mutex_destroy(&b->mu);
	free(b->fly);
	free(b->dry);
	free(b->flow);
	free(b);
}

void orch_board_key(const struct orch_run *r, size_t pool, const char *group,
		    char *buf, size_t n)
{
	const struct gb_pool *p = &r->facts.pools[pool];

	snprintf(buf, n, "%s|%s|%s|%s|%s|%s", p->region, p->az, p->type,
		 gb_conf_capacity_name(p->capacity), p->target ? p->target : "",
		 group ? group : "");
}

static struct dry *find_dry(struct orch_board *b, const char *key)
{
	for (size_t i = 0; i < b->n_dry; i++)
		if (strcmp(b->dry[i].key, key) == 0)
			return &b->dry[i];
	return NULL;
}

static struct flow *find_flow(struct orch_board *b, const char *key)
{
	for (size_t i = 0; i < b->n_flow; i++)
		if (strcmp(b->flow[i].key, key) == 0)
			return &b->flow[i];
	return NULL;
}

/*
 * Are as many calls of other owners to [key] in flight (each for less than
 * the hold) as the pool takes at once?  One, or as many as its answers in
 * a row gave every instance asked (the last within ORCH_BOARD_FLOW_S):
 * a pool that delivers is asked by more requests at once, one more per
 * full answer, and one that runs dry costs at most that many refusals.
 * Mutex held.
 */
static bool busy(struct orch_board *b, const char *key, const void *owner,
		 double now)
{
	struct flow *f = find_flow(b, key);
	int limit = 1, n = 0;

	if (f && f->until > now)
		limit = f->full > 1 ? f->full : 1;
	else if (f)
		*f = b->flow[--b->n_flow];	/* expired */
	for (size_t i = 0; i < b->n_fly && n < limit; i++)
		if (b->fly[i].owner != owner && now - b->fly[i].since < ORCH_BOARD_HOLD_S &&
		    strcmp(b->fly[i].key, key) == 0)
			n++;
	return n >= limit;
}

/* Note a flight; RET false when out of memory.  Mutex held. */
static bool add_flight(struct orch_board *b, const char *key, const void *owner,
		       double now)
{
	struct flight *f = gb_grow(b->fly, &b->cap_fly, b->n_fly + 1, sizeof(*f));

	if (!f)
		return false;
	b->fly = f;
	gb_strlcpy(b->fly[b->n_fly].key, key, sizeof(b->fly[b->n_fly].key));
	b->fly[b->n_fly].owner = owner;
	b->fly[b->n_fly].since = now;
	b->n_fly++;
	return true;
}

enum orch_admit orch_board_admit(struct orch_board *b, const char *key,
				 const void *owner, double now)
{
	enum orch_admit a;

	pthread_mutex_lock(&b->mu);
	a = busy(b, key, owner, now) ? ORCH_ADMIT_BUSY :
	    add_flight(b, key, owner, now) ? ORCH_ADMIT_FLYING : ORCH_ADMIT_UNNOTED;
	pthread_mutex_unlock(&b->mu);
	return a;
}

bool orch_board_fly(struct orch_board *b, const char *key, const void *owner,
		    double now)
{
	bool ok;

	pthread_mutex_lock(&b->mu);
	ok = add_flight(b, key, owner, now);	/* false: flies unannounced */
	pthread_mutex_unlock(&b->mu);
	return ok;
}

/* A pool that gave all it was asked flows; one that did not, not.  Mutex held. */
static void note_flow(struct orch_board *b, const char *key, double now, bool full)
{
	struct flow *f = find_flow(b, key), *v;

	if (!full) {
		if (f)
			*f = b->flow[--b->n_flow];
		return;
	}
	if (!f) {
		v = gb_grow(b->flow, &b->cap_flow, b->n_flow + 1, sizeof(*v));
		if (!v)
			return;	/* out of memory: one call at a time */
		b->flow = v;
		f = &b->flow[b->n_flow++];
		gb_strlcpy(f->key, key, sizeof(f->key));
		f->full = 0;
	}
	if (f->full < ORCH_BOARD_FLOW_MAX)
		f->full++;
	f->until = now + ORCH_BOARD_FLOW_S;
}

void orch_board_land(struct orch_board *b, const char *key, const void *owner,
		     double now, bool dry, bool gave, const char *request_id,
		     const char *code)
{
	struct dry *d;

	pthread_mutex_lock(&b->mu);
	for (size_t i = 0; i < b->n_fly; i++) {
		if (b->fly[i].owner == owner && strcmp(b->fly[i].key, key) == 0) {
			b->fly[i] = b->fly[--b->n_fly];
			break;
		}
	}
	d = find_dry(b, key);
	note_flow(b, key, now, gave && !dry);
	if (dry) {
		struct dry *v = d ? NULL : gb_grow(b->dry, &b->cap_dry, b->n_dry + 1, sizeof(*v));

		if (v)
			b->dry = v;
		if (!d && b->n_dry < b->cap_dry) {
			d = &b->dry[b->n_dry++];
			gb_strlcpy(d->key, key, sizeof(d->key));
		}
		if (d) {	/* else out of memory: the others ask themselves */
			d->until = now + ORCH_BOARD_DRY_S;
			d->owner = owner;
			d->learned = 0;
			gb_strlcpy(d->by, request_id, sizeof(d->by));
			gb_strlcpy(d->code, code, sizeof(d->code));
		}
	} else if (gave && d) {
		*d = b->dry[--b->n_dry];	/* capacity came back */
	}
	b->gen++;
	pthread_cond_broadcast(&b->changed);
	pthread_mutex_unlock(&b->mu);
}

void orch_board_learned(struct orch_board *b, const void *owner, double now)
{
	pthread_mutex_lock(&b->mu);
	for (size_t i = 0; i < b->n_dry; i++) {
		if (b->dry[i].owner == owner) {
			b->dry[i].owner = NULL;
			b->dry[i].learned = now;
		}
	}
	pthread_mutex_unlock(&b->mu);
}

bool orch_board_dry(struct orch_board *b, const char *key, double now,
		    double began, struct orch_board_dry *out)
{
	struct dry *d;
	bool yes = false;

	pthread_mutex_lock(&b->mu);
	d = find_dry(b, key);
	if (d && d->until > now) {
		yes = d->learned == 0 || began < d->learned;
		if (yes && out) {
			gb_strlcpy(out->by, d->by, sizeof(out->by));
			gb_strlcpy(out->code, d->code, sizeof(out->code));
			out->age = now - (d->until - ORCH_BOARD_DRY_S);
		}
	} else if (d) {
		*d = b->dry[--b->n_dry];	/* expired */
	}
	pthread_mutex_unlock(&b->mu);
	return yes;
}

bool orch_board_busy(struct orch_board *b, const char *key, const void *owner,
		     double now)
{
	bool yes;

	pthread_mutex_lock(&b->mu);
	yes = busy(b, key, owner, now);
	pthread_mutex_unlock(&b->mu);
	return yes;
}

unsigned long orch_board_gen(struct orch_board *b)
{
	unsigned long g;

	pthread_mutex_lock(&b->mu);
	g = b->gen;
	pthread_mutex_unlock(&b->mu);
	return g;
}

void orch_board_wait(struct orch_board *b, unsigned long gen, double max_s)
{
	struct timespec ts;

	if (!(max_s > 0))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)max_s;
	ts.tv_nsec += (long)((max_s - (double)(time_t)max_s) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&b->mu);
	while (b->gen == gen) {
		if (pthread_cond_timedwait(&b->changed, &b->mu, &ts) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&b->mu);
}
