/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim.c - the simulated cloud's state and EC2 semantics
 *
 * Time-driven changes use FIFO queues: every instance waits the same
 * pending and shutting-down delays, so launch order is due order and
 * gb_sim_advance() only looks at queue heads.
 */
#include "config.h"

#include <arpa/inet.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gb_conf.h"
#include "gb_partition.h"
#include "rng.h"
#include "sim.h"
#include "strmap.h"

#define MAX_TAGS 50		/* EC2: 50 tags per resource */
#define TAG_KEY_MAX 128
#define TAG_VALUE_MAX 256

struct queue {
	struct gb_sim_instance *head, *tail;
	size_t off;		/* offsetof the instance's link member */
};

struct sim_region {
	const struct gb_sc_region *rg;
	struct gb_sim_usage usage;
};

struct gb_sim {
	const struct gb_scenario *sc;
	struct gb_rng rng_id;		/* instance and reservation ids */
	struct gb_rng rng_req;		/* request ids */
	uint64_t token_key;		/* obfuscates NextToken values */
	double epoch;			/* wall clock of simulated time 0 */
	double now;			/* latest time seen */
	size_t next_event;		/* scenario capacity events applied */
	uint64_t seq;
	struct sim_region *regions;
	size_t nregions;
	struct gb_sim_pool *pools;
	size_t npools;
	struct gb_sim_subnet *subnets;
	size_t nsubnets;
	struct gb_sim_instance **inst;	/* creation order */
	size_t ninst, capinst;
	struct gb_strmap by_id;		/* instance id -> instance */
	struct gb_strmap by_token;	/* scope "\n" token -> reservation */
	struct queue q_pending, q_shut, q_term;
	bool events_on;
	struct gb_sim_event *events;
	size_t nevents, capevents;
	struct gb_sim_consistency consistency;
	struct gb_sim_pgroup **pgs;	/* every region's, deleted ones too */
	size_t npgs;
	struct gb_sim_cr *crs;		/* every region's, in scenario order */
	size_t ncrs;
	size_t nnotices;		/* Spot notices possibly not yet due */
};

/*****************************************************************************
 *  Small helpers
 *****************************************************************************/

const char *gb_sim_state_name(enum gb_sim_state s)
{
	switch (s) {
	case GB_SIM_STATE_PENDING:
		return "pending";
	case GB_SIM_STATE_RUNNING:
		return "running";
	case GB_SIM_STATE_SHUTTING_DOWN:
		return "shutting-down";
	case GB_SIM_STATE_TERMINATED:
		return "terminated";
	}
	return "unknown";
}

int gb_sim_error_set(struct gb_sim_error *e, int status, const char *code,
		     const char *fmt, ...)
{
	va_list ap;

	e->status = status;
	gb_strlcpy(e->code, code, sizeof(e->code));
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return status;
}

/* Set [e] and RET the gpuburst class of the error. */
static gb_err_t fail(struct gb_sim_error *e, gb_err_t cls, int status,
		     const char *code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static gb_err_t fail(struct gb_sim_error *e, gb_err_t cls, int status,
		     const char *code, const char *fmt, ...)
{
	va_list ap;

	e->status = status;
	gb_strlcpy(e->code, code, sizeof(e->code));
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return cls;
}

static gb_err_t fail_nomem(struct gb_sim_error *e)
{
	return fail(e, GB_E_NOMEM, 500, "InternalError",
		    "An internal error has occurred");
}

/* The link a queue uses inside each instance. */
static struct gb_sim_instance **qlink(const struct queue *q,
				      struct gb_sim_instance *i)
{
	return (struct gb_sim_instance **)((char *)i + q->off);
}

static void queue_push(struct queue *q, struct gb_sim_instance *i)
{
	*qlink(q, i) = NULL;
	if (q->tail)
		*qlink(q, q->tail) = i;
	else
		q->head = i;
	q->tail = i;
}

static struct gb_sim_instance *queue_pop(struct queue *q)
{
	struct gb_sim_instance *i = q->head;

	if (i) {
		q->head = *qlink(q, i);
		if (!q->head)
			q->tail = NULL;
	}
	return i;
}

static struct sim_region *find_region(gb_sim_t *sim, const char *name)
{
	for (size_t i = 0; name && i < sim->nregions; i++) {
		if (strcmp(sim->regions[i].rg->name, name) == 0)
			return &sim->regions[i];
	}
	return NULL;
}

static struct sim_region *region_of(gb_sim_t *sim, const struct gb_sc_region *rg)
{
	return &sim->regions[rg - sim->sc->regions];
}

static struct gb_sim_pool *find_pool(gb_sim_t *sim, const struct gb_sc_az *az,
				     const struct gb_itype *t)
{
	for (size_t i = 0; i < sim->npools; i++) {
		if (sim->pools[i].az == az && sim->pools[i].type == t)
			return &sim->pools[i];
	}
	return NULL;
}

static long pool_free(const struct gb_sim_pool *p)
{
	return p->total > p->used ? p->total - p->used : 0;
}

/* Free room of the pool a launch takes from: On-Demand or Spot. */
static long market_free(const struct gb_sim_pool *p, bool spot)
{
	if (!spot)
		return pool_free(p);
	return p->spot && p->spot_total > p->spot_used ? p->spot_total - p->spot_used : 0;
}

static struct gb_sim_subnet *find_subnet(gb_sim_t *sim, const char *id)
{
	for (size_t i = 0; i < sim->nsubnets; i++) {
		if (strcmp(sim->subnets[i].sn->id, id) == 0)
			return &sim->subnets[i];
	}
	return NULL;
}

/* Usable addresses: VPC reserves the first four and the last one. */
static uint32_t subnet_free(const struct gb_sim_subnet *s)
{
	return s->size - 5 - s->used;
}

/* FNV-1a: ids derived from another id, without drawing from the PRNG. */
static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static void random_id(gb_sim_t *sim, const char *prefix, char out[GB_SIM_ID_MAX])
{
	uint64_t v = gb_rng_next(&sim->rng_id);

	/* 17 hex digits, like current EC2 ids */
	snprintf(out, GB_SIM_ID_MAX, "%s%01x%016" PRIx64, prefix,
		 (unsigned)(gb_rng_next(&sim->rng_id) & 0xf), v);
}

void gb_sim_request_id(gb_sim_t *sim, char out[40])
{
	uint64_t a = gb_rng_next(&sim->rng_req), b = gb_rng_next(&sim->rng_req);

	snprintf(out, 40, "%08x-%04x-4%03x-%04x-%012" PRIx64,
		 (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
		 (unsigned)a & 0xfff, (unsigned)(0x8000 | ((b >> 48) & 0x3fff)),
		 (uint64_t)(b & 0xffffffffffffULL));
}

void gb_sim_set_epoch(gb_sim_t *sim, double epoch)
{
	sim->epoch = epoch;
}

double gb_sim_epoch(const gb_sim_t *sim)
{
	return sim->epoch;
}

bool gb_sim_has_region(const gb_sim_t *sim, const char *region)
{
	return gb_scenario_region(sim->sc, region) != NULL;
}

void gb_sim_tags_free(struct gb_sim_tag *tags, size_t n)
{
	for (size_t i = 0; tags && i < n; i++) {
		free(tags[i].key);
		free(tags[i].value);
	}
	free(tags);
}

/*****************************************************************************
 *  Construction
 *****************************************************************************/

static gb_err_t build_az(gb_sim_t *sim, const struct gb_sc_region *rg,
			 const struct gb_sc_az *az, gb_error_t *err)
{
	for (size_t p = 0; p < az->npools; p++) {
		struct gb_sim_pool *pl = &sim->pools[sim->npools++];

		pl->region = rg;
		pl->az = az;
		pl->type = az->pools[p].type;
		pl->total = az->pools[p].capacity;
		pl->spot = az->pools[p].spot;
		pl->spot_total = az->pools[p].spot_capacity;
		pl->spot_price = az->pools[p].spot_price;
	}
	for (size_t s = 0; s < az->nsubnets; s++) {
		struct gb_sim_subnet *sn = &sim->subnets[sim->nsubnets++];

		sn->sn = &az->subnets[s];
		sn->az = az;
		sn->size = 1u << (32 - az->subnets[s].prefix);
		sn->hint = 4;
		sn->bits = calloc(sn->size / 8 + 1, 1);
		if (!sn->bits)
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	return GB_E_OK;
}

static gb_err_t build(gb_sim_t *sim, gb_error_t *err)
{
	const struct gb_scenario *sc = sim->sc;
	size_t np = 0, ns = 0;

	for (size_t r = 0; r < sc->nregions; r++) {
		for (size_t z = 0; z < sc->regions[r].nazs; z++) {
			np += sc->regions[r].azs[z].npools;
			ns += sc->regions[r].azs[z].nsubnets;
		}
	}
	sim->regions = calloc(sc->nregions, sizeof(*sim->regions));
	sim->pools = calloc(np + 1, sizeof(*sim->pools));
	sim->subnets = calloc(ns + 1, sizeof(*sim->subnets));
	if (!sim->regions || !sim->pools || !sim->subnets)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	sim->nregions = sc->nregions;
	for (size_t r = 0; r < sc->nregions; r++)
		sim->ncrs += sc->regions[r].ncrs;
	if (!(sim->crs = calloc(sim->ncrs + 1, sizeof(*sim->crs))))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	sim->ncrs = 0;
	for (size_t r = 0; r < sc->nregions; r++) {
		for (size_t k = 0; k < sc->regions[r].ncrs; k++) {
			sim->crs[sim->ncrs].sc = &sc->regions[r].crs[k];
			sim->crs[sim->ncrs++].region = &sc->regions[r];
		}
	}
	for (size_t r = 0; r < sc->nregions; r++) {
		sim->regions[r].rg = &sc->regions[r];
		for (size_t z = 0; z < sc->regions[r].nazs; z++) {
			if (build_az(sim, &sc->regions[r], &sc->regions[r].azs[z], err))
				return GB_E_NOMEM;
		}
	}
	return GB_E_OK;
}

gb_err_t gb_sim_create(const struct gb_scenario *sc, gb_sim_t **out,
		       gb_error_t *err)
{
	gb_sim_t *sim = calloc(1, sizeof(*sim));

	*out = NULL;
	if (!sim)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	sim->sc = sc;
	sim->consistency.invisible = sc->invisible_s;
	sim->consistency.no_private_ip = sc->no_private_ip_s;
	gb_rng_seed(&sim->rng_id, sc->seed, 1);
	gb_rng_seed(&sim->rng_req, sc->seed, 2);
	sim->token_key = gb_rng_next(&sim->rng_req);
	sim->q_pending.off = offsetof(struct gb_sim_instance, q_pending);
	sim->q_shut.off = offsetof(struct gb_sim_instance, q_shut);
	sim->q_term.off = offsetof(struct gb_sim_instance, q_term);
	if (build(sim, err)) {
		gb_sim_destroy(sim);
		return GB_E_NOMEM;
	}
	*out = sim;
	return GB_E_OK;
}

static void instance_free(struct gb_sim_instance *i)
{
	free(i->image_id);
	free(i->key_name);
	free(i->client_token);
	free(i->iam_profile_arn);
	gb_strv_free(&i->sg_ids);
	gb_sim_tags_free(i->tags, i->ntags);
	free(i->user_data);
	for (size_t k = 0; k < i->nnetifs; k++)
		gb_strv_free(&i->netifs[k].sg_ids);
	free(i->netifs);
	free(i);
}

static void reservation_free(struct gb_sim_reservation *r)
{
	free(r->inst);
	free(r->token_key);
	free(r->digest);
	free(r);
}

void gb_sim_destroy(gb_sim_t *sim)
{
	if (!sim)
		return;
	for (size_t i = 0; i < sim->ninst; i++) {
		struct gb_sim_reservation *r = sim->inst[i]->res;

		if (--r->alive == 0)
			reservation_free(r);
		instance_free(sim->inst[i]);
	}
	free(sim->inst);
	for (size_t i = 0; i < sim->nsubnets; i++)
		free(sim->subnets[i].bits);
	free(sim->subnets);
	free(sim->pools);
	free(sim->regions);
	gb_strmap_free(&sim->by_id);
	gb_strmap_free(&sim->by_token);
	gb_sim_events_free(sim->events, sim->nevents);
	for (size_t i = 0; i < sim->npgs; i++) {
		free(sim->pgs[i]->name);
		gb_sim_tags_free(sim->pgs[i]->tags, sim->pgs[i]->ntags);
		free(sim->pgs[i]);
	}
	free(sim->pgs);
	free(sim->crs);
	free(sim);
}

/*****************************************************************************
 *  Private IPs
 *****************************************************************************/

static bool bit_get(const uint8_t *b, uint32_t i)
{
	return b[i / 8] & (1u << (i % 8));
}

/* The lowest free address, so that a replay hands out the same IPs. */
static void ip_alloc(struct gb_sim_subnet *s, struct gb_sim_instance *inst)
{
	uint32_t i = s->hint, addr;
	struct in_addr a;

	while (bit_get(s->bits, i))
		i++;
	s->bits[i / 8] |= (uint8_t)(1u << (i % 8));
	s->used++;
	s->hint = i + 1;
	addr = s->sn->net + i;
	inst->ip_n = addr;
	a.s_addr = htonl(addr);
	inet_ntop(AF_INET, &a, inst->ip, sizeof(inst->ip));
}

static void ip_release(struct gb_sim_subnet *s, uint32_t addr)
{
	uint32_t i = addr - s->sn->net;

	s->bits[i / 8] &= (uint8_t)~(1u << (i % 8));
	s->used--;
	if (i < s->hint)
		s->hint = i;
}

static struct gb_sim_subnet *subnet_of(gb_sim_t *sim, const struct gb_sc_subnet *sn)
{
	for (size_t i = 0; i < sim->nsubnets; i++) {
		if (sim->subnets[i].sn == sn)
			return &sim->subnets[i];
	}
	return NULL;
}

/*****************************************************************************
 *  Time
 *****************************************************************************/

static gb_err_t event_push(gb_sim_t *sim, enum gb_sim_event_kind kind,
			   const struct gb_sim_instance *i)
{
	struct gb_sim_event *ev, *p;

	if (!sim->events_on)
		return GB_E_OK;
	p = gb_grow(sim->events, &sim->capevents, sim->nevents + 1, sizeof(*p));
	if (!p)
		return GB_E_NOMEM;
	sim->events = p;
	ev = &sim->events[sim->nevents];
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->launch_index = i->launch_index;
	gb_strlcpy(ev->id, i->id, sizeof(ev->id));
	gb_strlcpy(ev->ip, i->ip, sizeof(ev->ip));
	ev->region = i->region->name;
	ev->az = i->az->name;
	ev->instance_type = i->type->name;
	if (i->ntags && !(ev->tags = calloc(i->ntags, sizeof(*ev->tags))))
		return GB_E_NOMEM;
	for (size_t t = 0; t < i->ntags; t++, ev->ntags++) {
		ev->tags[t].key = strdup(i->tags[t].key);
		ev->tags[t].value = strdup(i->tags[t].value);
	}
	if (i->user_data && (ev->user_data = malloc(i->user_data_len + 1))) {
		memcpy(ev->user_data, i->user_data, i->user_data_len);
		ev->user_data[i->user_data_len] = '\0';
		ev->user_data_len = i->user_data_len;
	}
	sim->nevents++;
	return GB_E_OK;
}

static void apply_event(gb_sim_t *sim, const struct gb_sc_event *ev)
{
	const struct gb_sc_az *az = gb_scenario_az(sim->sc, ev->az, NULL);
	struct gb_sim_pool *p = find_pool(sim, az, ev->type);
	long *total;

	if (!p)
		return;		/* the scenario checked this */
	total = ev->spot ? &p->spot_total : &p->total;
	switch (ev->op) {
	case GB_SC_EVENT_SET:
		*total = ev->n;
		break;
	case GB_SC_EVENT_ADD:
		*total += ev->n;
		break;
	case GB_SC_EVENT_REMOVE:
		*total = *total > ev->n ? *total - ev->n : 0;
		break;
	}
}

static void set_state(struct gb_sim_instance *i, enum gb_sim_state s, double t)
{
	i->state = s;
	i->state_time = t;
}

/* Terminated: give back capacity, quota and the address. */
static void release(gb_sim_t *sim, struct gb_sim_instance *i)
{
	struct sim_region *r = region_of(sim, i->region);
	struct gb_sim_pool *p = find_pool(sim, i->az, i->type);

	if (i->spot) {
		if (p)
			p->spot_used--;
		r->usage.spot_vcpus[i->type->bucket] -= i->type->vcpus;
	} else {
		if (i->cr)
			i->cr->used--;	/* its slot, not the pool's */
		else if (p)
			p->used--;
		r->usage.instances--;
		r->usage.vcpus[i->type->bucket] -= i->type->vcpus;
	}
	ip_release(subnet_of(sim, i->subnet), i->ip_n);
	if (i->pg)
		i->pg->live--;
}

static void forget(gb_sim_t *sim, struct gb_sim_instance *i)
{
	struct gb_sim_reservation *r = i->res;

	gb_strmap_del(&sim->by_id, i->id);
	for (size_t k = 0; k < r->n; k++) {
		if (r->inst[k] == i)
			r->inst[k] = NULL;
	}
	if (--r->alive == 0) {
		if (r->token_key)
			gb_strmap_del(&sim->by_token, r->token_key);
		reservation_free(r);
	}
	instance_free(i);
}

static void advance_pending(gb_sim_t *sim, double now)
{
	struct gb_sim_instance *i;

	while ((i = sim->q_pending.head) &&
	       i->launch_time + sim->sc->pending_s <= now) {
		queue_pop(&sim->q_pending);
		i->in_pending_q = false;
		if (i->state != GB_SIM_STATE_PENDING)
			continue;	/* terminated while pending */
		set_state(i, GB_SIM_STATE_RUNNING, i->launch_time + sim->sc->pending_s);
		event_push(sim, GB_SIM_EVENT_RUNNING, i);
	}
}

static void advance_shutting(gb_sim_t *sim, double now)
{
	struct gb_sim_instance *i;

	while ((i = sim->q_shut.head) &&
	       i->state_time + sim->sc->shutting_down_s <= now) {
		queue_pop(&sim->q_shut);
		set_state(i, GB_SIM_STATE_TERMINATED,
			  i->state_time + sim->sc->shutting_down_s);
		release(sim, i);
		queue_push(&sim->q_term, i);
	}
}

/* Forget instances terminated long ago; RET how many. */
static size_t advance_terminated(gb_sim_t *sim, double now)
{
	struct gb_sim_instance *i;
	size_t n = 0;

	while ((i = sim->q_term.head) && !i->in_pending_q &&
	       i->state_time + sim->sc->terminated_visible_s <= now) {
		queue_pop(&sim->q_term);
		i->seq = UINT64_MAX;	/* marks the slot for compaction */
		n++;
	}
	return n;
}

static void compact(gb_sim_t *sim)
{
	size_t j = 0;

	for (size_t k = 0; k < sim->ninst; k++) {
		if (sim->inst[k]->seq == UINT64_MAX)
			forget(sim, sim->inst[k]);
		else
			sim->inst[j++] = sim->inst[k];
	}
	sim->ninst = j;
}

/*
 * EC2 Capacity Blocks: "when the Capacity Block expires, its instances are
 * terminated".  They go shutting-down at the block's end (or at the time
 * last seen, which keeps the shutting-down queue in time order).
 */
static void advance_blocks(gb_sim_t *sim, double prev, double now)
{
	for (size_t k = 0; k < sim->ncrs; k++) {
		struct gb_sim_cr *cr = &sim->crs[k];
		double t = cr->sc->end > prev ? cr->sc->end : prev;

		if (cr->ended || cr->sc->kind != GB_SC_CR_BLOCK || cr->sc->end > now)
			continue;
		cr->ended = true;
		for (size_t j = 0; j < sim->ninst; j++) {
			struct gb_sim_instance *i = sim->inst[j];

			if (i->cr != cr || (i->state != GB_SIM_STATE_PENDING &&
					    i->state != GB_SIM_STATE_RUNNING))
				continue;
			set_state(i, GB_SIM_STATE_SHUTTING_DOWN, t);
			i->cr_ended = true;
			queue_push(&sim->q_shut, i);
			event_push(sim, GB_SIM_EVENT_SHUTTING_DOWN, i);
		}
	}
}

/*
 * EC2 Spot interruption: at the time of its instance-action notice the
 * instance is terminated.  A notice found due late takes the time last
 * seen, as advance_blocks() does.  An instance terminated otherwise meanwhile
 * drops its notice.
 */
static void advance_notices(gb_sim_t *sim, double prev, double now)
{
	size_t left = 0;

	if (!sim->nnotices)
		return;
	for (size_t k = 0; k < sim->ninst; k++) {
		struct gb_sim_instance *i = sim->inst[k];
		double t = i->spot_action_time > prev ? i->spot_action_time : prev;

		if (!i->spot_notice || i->spot_interrupted ||
		    (i->state != GB_SIM_STATE_PENDING && i->state != GB_SIM_STATE_RUNNING))
			continue;
		if (i->spot_action_time > now) {
			left++;
			continue;
		}
		set_state(i, GB_SIM_STATE_SHUTTING_DOWN, t);
		i->spot_interrupted = true;
		queue_push(&sim->q_shut, i);
		event_push(sim, GB_SIM_EVENT_SHUTTING_DOWN, i);
	}
	sim->nnotices = left;
}

void gb_sim_advance(gb_sim_t *sim, double now)
{
	double prev = sim->now;

	if (now < sim->now)
		now = sim->now;
	sim->now = now;
	while (sim->next_event < sim->sc->nevents &&
	       sim->sc->events[sim->next_event].at <= now)
		apply_event(sim, &sim->sc->events[sim->next_event++]);
	advance_pending(sim, now);
	advance_blocks(sim, prev, now);
	advance_notices(sim, prev, now);
	advance_shutting(sim, now);
	if (advance_terminated(sim, now))
		compact(sim);
}

/*****************************************************************************
 *  RunInstances
 *****************************************************************************/

/* ami-, then 8 or 17 hex digits (EC2's two id lengths); we accept 1..17. */
static bool valid_hex_id(const char *s, const char *prefix)
{
	size_t pl = strlen(prefix), n;

	if (!s || strncmp(s, prefix, pl) != 0)
		return false;
	n = strlen(s + pl);
	return n >= 1 && n <= 17 && strspn(s + pl, "0123456789abcdef") == n;
}

static gb_err_t check_tags(const struct gb_sim_kv *tags, size_t n,
			   struct gb_sim_error *e)
{
	if (n > MAX_TAGS)
		return fail(e, GB_E_CLOUDCONFIG, 400, "TagLimitExceeded",
			    "The maximum number of Tags for a resource is %d.", MAX_TAGS);
	for (size_t i = 0; i < n; i++) {
		if (!tags[i].key[0] || strlen(tags[i].key) > TAG_KEY_MAX)
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
				    "Tag keys must be between 1 and %d characters.", TAG_KEY_MAX);
		if (tags[i].value && strlen(tags[i].value) > TAG_VALUE_MAX)
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
				    "Tag values must be at most %d characters.", TAG_VALUE_MAX);
		if (gb_str_has_prefix(tags[i].key, "aws:"))
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
				    "Tag keys starting with 'aws:' are reserved for internal use");
	}
	return GB_E_OK;
}

static gb_err_t validate_launch(const struct sim_region *r,
				const struct gb_sim_launch *l,
				const struct gb_itype **type, struct gb_sim_error *e)
{
	const struct gb_sc_region *rg = r->rg;

	if (!l->image_id)
		return fail(e, GB_E_CLOUDCONFIG, 400, "MissingParameter",
			    "The request must contain the parameter ImageId");
	if (l->min_count < 1 || l->max_count < l->min_count)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "Invalid value for MinCount/MaxCount: MinCount (%ld) must be at least 1 and at most MaxCount (%ld)",
			    l->min_count, l->max_count);
	*type = gb_itype_find(l->instance_type ? l->instance_type : "m1.small");
	if (!*type)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "Invalid value '%s' for InstanceType.",
			    l->instance_type ? l->instance_type : "m1.small");
	if (!valid_hex_id(l->image_id, "ami-"))
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidAMIID.Malformed",
			    "Invalid id: \"%s\" (expecting \"ami-...\")", l->image_id);
	if (rg->images.n && gb_strv_find(&rg->images, l->image_id) < 0)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidAMIID.NotFound",
			    "The image id '[%s]' does not exist", l->image_id);
	if (l->key_name && rg->key_pairs.n && gb_strv_find(&rg->key_pairs, l->key_name) < 0)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidKeyPair.NotFound",
			    "The key pair '%s' does not exist", l->key_name);
	return check_tags(l->tags, l->ntags, e);
}

/* SecurityGroupId.N: well-formed and, when the region lists them, existing. */
static gb_err_t check_groups(const struct gb_sc_region *rg, const struct gb_strv *sg,
			     struct gb_sim_error *e)
{
	for (size_t k = 0; sg && k < sg->n; k++) {
		if (!valid_hex_id(sg->v[k], "sg-"))
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidGroupId.Malformed",
				    "Invalid id: \"%s\" (expecting \"sg-...\")", sg->v[k]);
		if (rg->security_groups.n && gb_strv_find(&rg->security_groups, sg->v[k]) < 0)
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidGroup.NotFound",
				    "The security group '%s' does not exist", sg->v[k]);
	}
	return GB_E_OK;
}

/*
 * The NAME of "arn:PARTITION:iam::ACCOUNT:instance-profile/[PATH/]NAME",
 * or NULL.  PARTITION is [region]'s ("aws-cn" for cn-north-1; "aws" for a
 * name in no known partition): an ARN of another partition is invalid.
 */
static const char *profile_arn_name(const char *arn, const char *region,
				    const char *account)
{
	static const char kind[] = ":instance-profile/";
	const struct gb_partition *pt = gb_partition_of(region);
	const char *part = pt ? pt->name : "aws", *p = arn, *name;
	size_t na = strlen(account), np = strlen(part);

	if (strncmp(p, "arn:", 4) != 0 || strncmp(p + 4, part, np) != 0 ||
	    strncmp(p + 4 + np, ":iam::", 6) != 0)
		return NULL;
	p += 4 + np + 6;
	if (strncmp(p, account, na) != 0 || strncmp(p + na, kind, sizeof(kind) - 1) != 0)
		return NULL;
	p += na + sizeof(kind) - 1;
	name = strrchr(p, '/');
	name = name ? name + 1 : p;
	return *name ? name : NULL;
}

/* IAM: instance profile names are 1..128 of [A-Za-z0-9+=,.@_-]. */
static bool valid_profile_name(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 128 &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			 "0123456789+=,.@_-") == n;
}

/* IamInstanceProfile.Name or .Arn (not both): a profile of this account. */
static gb_err_t check_profile(const gb_sim_t *sim, const struct gb_sc_region *rg,
			      const struct gb_sim_launch *l, struct gb_sim_error *e)
{
	const struct gb_strv *known = &rg->instance_profiles;
	const char *name = l->iam_profile_name;

	if (l->iam_profile_name && l->iam_profile_arn)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
			    "The parameter 'iamInstanceProfile.name' may not be used in combination with 'iamInstanceProfile.arn'");
	if (l->iam_profile_arn) {
		name = profile_arn_name(l->iam_profile_arn, rg->name, sim->sc->account_id);
		if (!name || !valid_profile_name(name) ||
		    (known->n && gb_strv_find(known, name) < 0))
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
				    "Value (%s) for parameter iamInstanceProfile.arn is invalid. Invalid IAM Instance Profile ARN",
				    l->iam_profile_arn);
		return GB_E_OK;
	}
	if (name && (!valid_profile_name(name) || (known->n && gb_strv_find(known, name) < 0)))
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "Value (%s) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name",
			    name);
	return GB_E_OK;
}

/* The subnet of an AZ with the most free addresses. */
static struct gb_sim_subnet *roomiest_subnet(gb_sim_t *sim, const struct gb_sc_az *az)
{
	struct gb_sim_subnet *best = NULL;

	for (size_t i = 0; i < sim->nsubnets; i++) {
		if (sim->subnets[i].az == az &&
		    (!best || subnet_free(&sim->subnets[i]) > subnet_free(best)))
			best = &sim->subnets[i];
	}
	return best;
}

/* No subnet and no AZ: EC2 picks; we pick the offering AZ with most room. */
static const struct gb_sc_az *pick_az(gb_sim_t *sim, const struct gb_sc_region *rg,
				      const struct gb_itype *t, bool spot)
{
	const struct gb_sc_az *best = NULL;
	long best_free = -1;

	for (size_t z = 0; z < rg->nazs; z++) {
		struct gb_sim_pool *p = find_pool(sim, &rg->azs[z], t);

		if (p && market_free(p, spot) > best_free) {
			best = &rg->azs[z];
			best_free = market_free(p, spot);
		}
	}
	return best ? best : &rg->azs[0];
}

struct placement {
	const struct gb_sc_az *az;
	struct gb_sim_subnet *subnet;
	struct gb_sim_pgroup *pg;	/* Placement.GroupName */
	bool zonal;			/* subnet or AZ given: zonal idempotency */
	struct gb_sim_cr *cr;		/* the capacity reservation used, or NULL */
	bool targeted;			/* CapacityReservationTarget named it */
	long cr_room;			/* its free slots */
};

static gb_err_t place(gb_sim_t *sim, const struct gb_sc_region *rg,
		      const struct gb_sim_launch *l, const struct gb_itype *t,
		      struct placement *pl, struct gb_sim_error *e)
{
	const struct gb_sc_region *azrg = NULL;

	pl->zonal = l->subnet_id || l->az;
	if (l->az) {
		pl->az = gb_scenario_az(sim->sc, l->az, &azrg);
		if (!pl->az || azrg != rg)
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
				    "Invalid availability zone: [%s]", l->az);
	}
	if (l->subnet_id) {
		pl->subnet = find_subnet(sim, l->subnet_id);
		if (pl->subnet)		/* subnets of other regions do not exist here */
			gb_scenario_az(sim->sc, pl->subnet->az->name, &azrg);
		if (!pl->subnet || azrg != rg)
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidSubnetID.NotFound",
				    "The subnet ID '%s' does not exist", l->subnet_id);
		if (pl->az && pl->az != pl->subnet->az)
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
				    "Subnet %s is in %s, not in the requested availability zone %s",
				    l->subnet_id, pl->subnet->az->name, pl->az->name);
		pl->az = pl->subnet->az;
		return GB_E_OK;
	}
	if (!pl->az)
		pl->az = pick_az(sim, rg, t, l->spot);
	pl->subnet = roomiest_subnet(sim, pl->az);
	return GB_E_OK;
}

/* AZs of [rg] offering [t], for messages: "a, b" ("" when none). */
static void list_azs(gb_sim_t *sim, const struct gb_sc_region *rg,
		     const struct gb_itype *t, long min_free,
		     const struct gb_sc_az *except, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t z = 0; z < rg->nazs; z++) {
		struct gb_sim_pool *p = find_pool(sim, &rg->azs[z], t);

		if (!p || &rg->azs[z] == except || pool_free(p) < min_free)
			continue;
		len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s",
					len ? ", " : "", rg->azs[z].name);
	}
}

static gb_err_t check_offered(gb_sim_t *sim, const struct gb_sc_region *rg,
			      const struct placement *pl, const struct gb_itype *t,
			      struct gb_sim_error *e)
{
	char others[512];

	if (find_pool(sim, pl->az, t))
		return GB_E_OK;
	list_azs(sim, rg, t, 0, NULL, others, sizeof(others));
	if (!others[0])
		return fail(e, GB_E_CAPACITY, 400, "Unsupported",
			    "The requested configuration is currently not supported. Please check the documentation for supported configurations.");
	return fail(e, GB_E_CAPACITY, 400, "Unsupported",
		    "Your requested instance type (%s) is not supported in your requested Availability Zone (%s). Please retry your request by not specifying an Availability Zone or choosing %s.",
		    t->name, pl->az->name, others);
}

/* How many more instances of [t] the region's quotas allow. */
static gb_err_t quota_room(const struct sim_region *r, const struct gb_itype *t,
			   long min_count, long *room, struct gb_sim_error *e)
{
	long iq = r->rg->instance_quota, vq = r->rg->vcpu_quota[t->bucket];
	long ileft = iq == GB_SC_UNLIMITED ? LONG_MAX : iq - r->usage.instances;
	long vleft = vq == GB_SC_UNLIMITED ? LONG_MAX :
		     (vq - r->usage.vcpus[t->bucket]) / t->vcpus;

	if (ileft < 0)
		ileft = 0;
	if (vleft < 0)
		vleft = 0;
	if (ileft < min_count)
		return fail(e, GB_E_QUOTA, 400, "InstanceLimitExceeded",
			    "Your quota allows for %ld more running instance(s). You requested at least %ld.",
			    ileft, min_count);
	if (vleft < min_count)
		return fail(e, GB_E_QUOTA, 400, "VcpuLimitExceeded",
			    "You have requested more vCPU capacity than your current vCPU limit of %ld allows for the instance bucket that the specified instance type belongs to. Please visit http://aws.amazon.com/contact-us/ec2-request to request an adjustment to this limit.",
			    vq);
	*room = ileft < vleft ? ileft : vleft;
	return GB_E_OK;
}

/* Spot: the region's Spot vCPU quota of the type's bucket, nothing else. */
static gb_err_t spot_quota_room(const struct sim_region *r, const struct gb_itype *t,
				long min_count, long *room, struct gb_sim_error *e)
{
	long q = r->rg->spot_vcpu_quota[t->bucket];
	long left = q == GB_SC_UNLIMITED ? LONG_MAX :
		    (q - r->usage.spot_vcpus[t->bucket]) / t->vcpus;

	if (left < 0)
		left = 0;
	if (left < min_count)
		return fail(e, GB_E_QUOTA, 400, "MaxSpotInstanceCountExceeded",
			    "Max spot instance count exceeded");
	*room = left;
	return GB_E_OK;
}

/* SpotOptions.MaxPrice below the pool's current Spot price. */
static gb_err_t check_spot_price(gb_sim_t *sim, const struct placement *pl,
				 const struct gb_itype *t, const struct gb_sim_launch *l,
				 struct gb_sim_error *e)
{
	struct gb_sim_pool *p = find_pool(sim, pl->az, t);

	if (!l->spot_max_price || !p->spot || l->spot_max_price >= p->spot_price)
		return GB_E_OK;
	return fail(e, GB_E_CAPACITY, 400, "SpotMaxPriceTooLow",
		    "Your Spot request price of %g is lower than the minimum required Spot request fulfillment price of %g.",
		    l->spot_max_price, p->spot_price);
}

/* EC2: fewer than MinCount fit -> InsufficientInstanceCapacity, nothing launched. */
static gb_err_t check_capacity(gb_sim_t *sim, const struct gb_sc_region *rg,
			       const struct placement *pl, const struct gb_itype *t,
			       const struct gb_sim_launch *l, struct gb_sim_error *e)
{
	struct gb_sim_pool *p = find_pool(sim, pl->az, t);
	long min_count = l->min_count;
	char others[512];

	if (market_free(p, l->spot) + pl->cr_room >= min_count)
		return GB_E_OK;
	if (l->spot)
		return fail(e, GB_E_CAPACITY, 500, "InsufficientInstanceCapacity",
			    "There is no Spot capacity available that matches your request.");
	list_azs(sim, rg, t, min_count, pl->az, others, sizeof(others));
	if (!others[0])
		return fail(e, GB_E_CAPACITY, 500, "InsufficientInstanceCapacity",
			    "We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). Our system will be working on provisioning additional capacity.",
			    t->name, pl->az->name);
	return fail(e, GB_E_CAPACITY, 500, "InsufficientInstanceCapacity",
		    "We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). Our system will be working on provisioning additional capacity. You can currently get %s capacity by not specifying an Availability Zone in your request or choosing %s.",
		    t->name, pl->az->name, t->name, others);
}

/*****************************************************************************
 *  RunInstances: network interfaces and placement groups
 *****************************************************************************/

/* A subnet of [rg], or NULL. */
static struct gb_sim_subnet *region_subnet(gb_sim_t *sim, const struct gb_sc_region *rg,
					   const char *id)
{
	struct gb_sim_subnet *s = id ? find_subnet(sim, id) : NULL;
	const struct gb_sc_region *at = NULL;

	if (s)
		gb_scenario_az(sim->sc, s->az->name, &at);
	return s && at == rg ? s : NULL;
}

/* EC2: with NetworkInterface.N the subnet and groups go on the interfaces. */
static gb_err_t check_netif_combination(const struct gb_sim_launch *l,
					struct gb_sim_error *e)
{
	if (l->subnet_id)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
			    "Network interfaces and an instance-level subnet ID may not be specified on the same request");
	if (l->sg_ids && l->sg_ids->n)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
			    "Network interfaces and an instance-level security groups may not be specified on the same request");
	return GB_E_OK;
}

/* One interface against the type: EFA support, its network cards. */
static gb_err_t check_netif_type(const struct gb_sim_netif *f, const struct gb_itype *t,
				 struct gb_sim_error *e)
{
	int cards = t->ct && t->ct->network_cards > 0 ? t->ct->network_cards : 1;
	bool efa = strcmp(f->type, "interface") != 0;

	if (efa && !(t->ct && t->ct->efa))
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
			    "%s instances do not support Elastic Fabric Adapters.", t->name);
	/* more cards than EFA interfaces (p6-b300): card 0 is ENA only */
	if (efa && f->card_index == 0 && cards > t->ct->efa_max_interfaces)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
			    "Network card 0 of instance type %s does not support Elastic Fabric Adapters: use the network cards 1 to %d.",
			    t->name, cards - 1);
	if (f->card_index < 0 || f->card_index >= cards)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "Network card index %ld is not valid for instance type %s: it has %d network card(s), numbered from 0.",
			    f->card_index, t->name, cards);
	if (f->device_index < 0)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "Invalid value '%ld' for deviceIndex", f->device_index);
	return GB_E_OK;
}

/* Two interfaces on one (card, device) slot, or an interface without a subnet. */
static gb_err_t check_netif_slots(const struct gb_sim_launch *l, struct gb_sim_error *e)
{
	bool primary = false;

	for (size_t k = 0; k < l->nnetifs; k++) {
		const struct gb_sim_netif *f = &l->netifs[k];

		primary |= f->card_index == 0 && f->device_index == 0;
		if (!f->subnet_id)
			return fail(e, GB_E_CLOUDCONFIG, 400, "MissingParameter",
				    "The request must contain the parameter NetworkInterface.%zu.SubnetId",
				    k + 1);
		for (size_t j = 0; j < k; j++) {
			if (l->netifs[j].card_index == f->card_index &&
			    l->netifs[j].device_index == f->device_index)
				return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
					    "Each network interface requires a unique device index and network card index: NetworkInterface.%zu and NetworkInterface.%zu both use device index %ld on network card %ld.",
					    j + 1, k + 1, f->device_index, f->card_index);
		}
	}
	if (!primary)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "The primary network interface (device index 0 on network card 0) must be specified.");
	return GB_E_OK;
}

/*
 * NetworkInterface.N (EC2 user guide, "Elastic Fabric Adapter": EFA and
 * EFA-only interfaces on an instance type that supports EFA, at most its
 * MaximumEfaInterfaces, one per network card slot; all the interfaces of
 * an instance in subnets of one AZ).  The security groups of each are
 * checked as the top-level ones.  [*primary] is the subnet of device 0.
 */
static gb_err_t check_netifs(gb_sim_t *sim, const struct gb_sc_region *rg,
			     const struct gb_sim_launch *l, const struct gb_itype *t,
			     const char **primary, struct gb_sim_error *e)
{
	const struct gb_sim_subnet *first = NULL;
	long nefa = 0;
	gb_err_t rc;

	if ((rc = check_netif_combination(l, e)) || (rc = check_netif_slots(l, e)))
		return rc;
	for (size_t k = 0; k < l->nnetifs; k++) {
		const struct gb_sim_netif *f = &l->netifs[k];
		const struct gb_sim_subnet *s = region_subnet(sim, rg, f->subnet_id);

		if ((rc = check_netif_type(f, t, e)) || (rc = check_groups(rg, &f->sg_ids, e)))
			return rc;
		if (!s)
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidSubnetID.NotFound",
				    "The subnet ID '%s' does not exist", f->subnet_id);
		if (first && s->az != first->az)
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
				    "The network interfaces of an instance must be in one Availability Zone: subnet %s is in %s, subnet %s in %s.",
				    first->sn->id, first->az->name, s->sn->id, s->az->name);
		first = first ? first : s;
		nefa += strcmp(f->type, "interface") != 0;
		if (f->card_index == 0 && f->device_index == 0)
			*primary = f->subnet_id;
	}
	if (t->ct && nefa > t->ct->efa_max_interfaces)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "You have exceeded the maximum number of EFA interfaces (%d) for instance type %s: the request has %ld.",
			    t->ct->efa_max_interfaces, t->name, nefa);
	if (t->ct && t->ct->max_interfaces > 0 && (long)l->nnetifs > t->ct->max_interfaces)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "You have exceeded the maximum number of network interfaces (%d) for instance type %s.",
			    t->ct->max_interfaces, t->name);
	return GB_E_OK;
}

static struct gb_sim_pgroup *find_pgroup(gb_sim_t *sim, const struct gb_sc_region *rg,
					 const char *name)
{
	for (size_t i = 0; name && i < sim->npgs; i++) {
		struct gb_sim_pgroup *g = sim->pgs[i];

		if (!g->deleted && g->region == rg && strcmp(g->name, name) == 0)
			return g;
	}
	return NULL;
}

/* Placement.GroupName: an existing group; a cluster one takes supporting types. */
static gb_err_t check_pgroup(gb_sim_t *sim, const struct gb_sc_region *rg,
			     const struct gb_sim_launch *l, const struct gb_itype *t,
			     struct gb_sim_pgroup **g, struct gb_sim_error *e)
{
	*g = NULL;
	if (!l->placement_group)
		return GB_E_OK;
	if (!(*g = find_pgroup(sim, rg, l->placement_group)))
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidPlacementGroup.Unknown",
			    "The Placement Group '%s' is unknown.", l->placement_group);
	if (strcmp((*g)->strategy, "cluster") == 0 && !(t->ct && t->ct->cluster_placement))
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
			    "Placement groups may not be used with instances of type '%s'.",
			    t->name);
	return GB_E_OK;
}

/* A cluster group lives in one AZ: the one its first launch went to. */
static gb_err_t check_pgroup_az(const struct gb_sim_pgroup *g, const struct gb_sc_az *az,
				struct gb_sim_error *e)
{
	if (!g || !g->az || g->az == az || strcmp(g->strategy, "cluster") != 0)
		return GB_E_OK;
	return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidPlacementGroup.InUse",
		    "The placement group '%s' is in use in another availability zone: %s",
		    g->name, g->az->name);
}

/* Room for [t] in cluster group [g]: the scenario's cluster_capacity. */
static gb_err_t pgroup_room(gb_sim_t *sim, const struct gb_sim_pgroup *g,
			    const struct gb_itype *t, const struct gb_sc_az *az,
			    long min_count, long *room, struct gb_sim_error *e)
{
	long cap = g ? g->region->pg_capacity : GB_SC_UNLIMITED, used = 0;

	*room = LONG_MAX;
	if (!g || strcmp(g->strategy, "cluster") != 0)
		return GB_E_OK;
	for (size_t k = 0; k < g->region->npg_caps; k++) {
		if (g->region->pg_caps[k].type == t)
			cap = g->region->pg_caps[k].n;
	}
	if (cap == GB_SC_UNLIMITED)
		return GB_E_OK;
	for (size_t k = 0; k < sim->ninst; k++) {
		const struct gb_sim_instance *i = sim->inst[k];

		used += i->pg == g && i->type == t && i->state != GB_SIM_STATE_TERMINATED;
	}
	*room = cap > used ? cap - used : 0;
	if (*room >= min_count)
		return GB_E_OK;
	return fail(e, GB_E_CAPACITY, 500, "InsufficientInstanceCapacity",
		    "We currently do not have sufficient %s capacity in the Availability Zone you requested (%s). Our system will be working on provisioning additional capacity.",
		    t->name, az->name);
}

static gb_err_t copy_netifs(struct gb_sim_instance *i, gb_sim_t *sim,
			    const struct gb_sim_launch *l)
{
	if (!l->nnetifs)
		return GB_E_OK;
	if (!(i->netifs = calloc(l->nnetifs, sizeof(*i->netifs))))
		return GB_E_NOMEM;
	for (size_t k = 0; k < l->nnetifs; k++, i->nnetifs++) {
		struct gb_sim_netif *f = &i->netifs[k];

		*f = l->netifs[k];
		memset(&f->sg_ids, 0, sizeof(f->sg_ids));
		f->subnet = find_subnet(sim, l->netifs[k].subnet_id)->sn;
		f->subnet_id = f->subnet->id;
		for (size_t j = 0; j < l->netifs[k].sg_ids.n; j++) {
			const char *g = l->netifs[k].sg_ids.v[j];

			if (gb_strv_add(&f->sg_ids, g) ||
			    (f->card_index == 0 && f->device_index == 0 &&
			     gb_strv_add(&i->sg_ids, g)))
				return GB_E_NOMEM;
		}
	}
	return GB_E_OK;
}

static char *token_key(const char *scope, const char *token)
{
	size_t a = strlen(scope), b = strlen(token);
	char *k = malloc(a + b + 2);

	if (k) {
		memcpy(k, scope, a);
		k[a] = '\n';
		memcpy(k + a + 1, token, b + 1);
	}
	return k;
}

/*
 * EC2 idempotency: the same token with the same parameters returns the
 * original reservation; with other parameters IdempotentParameterMismatch.
 * RET GB_E_OK with *res NULL when the token is new.
 */
static gb_err_t idempotent(gb_sim_t *sim, const char *key,
			   const struct gb_sim_launch *l,
			   struct gb_sim_reservation **res, struct gb_sim_error *e)
{
	struct gb_sim_reservation *r = gb_strmap_get(&sim->by_token, key);
	bool alive = false;

	*res = NULL;
	if (!r)
		return GB_E_OK;
	if (strcmp(r->digest, l->digest ? l->digest : "") != 0)
		return fail(e, GB_E_CLOUDCONFIG, 400, "IdempotentParameterMismatch",
			    "Arguments on this idempotent request are inconsistent with arguments used in previous request(s).");
	for (size_t k = 0; k < r->n; k++)
		alive |= r->inst[k] && r->inst[k]->state != GB_SIM_STATE_TERMINATED;
	if (!alive)
		return fail(e, GB_E_CLOUDCONFIG, 400, "IdempotentInstanceTerminated",
			    "The client token %s was used by a previous request whose instances have been terminated.",
			    l->client_token);
	*res = r;
	return GB_E_OK;
}

static gb_err_t copy_tags(struct gb_sim_instance *i, const struct gb_sim_kv *tags,
			  size_t n)
{
	if (!n)
		return GB_E_OK;
	i->tags = calloc(n, sizeof(*i->tags));
	if (!i->tags)
		return GB_E_NOMEM;
	for (size_t k = 0; k < n; k++, i->ntags++) {
		i->tags[k].key = strdup(tags[k].key);
		i->tags[k].value = strdup(tags[k].value ? tags[k].value : "");
		if (!i->tags[k].key || !i->tags[k].value)
			return GB_E_NOMEM;
	}
	return GB_E_OK;
}

/* The instance profile's ARN: as given, or this account's for a name. RET NEW. */
static char *profile_arn(const gb_sim_t *sim, const struct gb_sim_launch *l)
{
	struct gb_buf b = GB_BUF_INIT;

	if (l->iam_profile_arn)
		return strdup(l->iam_profile_arn);
	gb_buf_printf(&b, "arn:aws:iam::%s:instance-profile/%s", sim->sc->account_id,
		      l->iam_profile_name);
	return gb_buf_steal(&b);
}

/* Allocate one instance with copies of the launch's parameters. */
static struct gb_sim_instance *instance_new(gb_sim_t *sim,
					    const struct gb_sim_launch *l)
{
	struct gb_sim_instance *i = calloc(1, sizeof(*i));
	bool profile = l->iam_profile_name || l->iam_profile_arn;
	bool ok;

	if (!i)
		return NULL;
	i->image_id = strdup(l->image_id);
	i->key_name = l->key_name ? strdup(l->key_name) : NULL;
	i->metadata = l->metadata;
	if (!i->metadata.hop_limit)
		i->metadata.hop_limit = 1;
	i->monitoring = l->monitoring;
	i->ebs_optimized = l->ebs_optimized;
	i->spot = l->spot;
	i->cr_pref = l->cr_pref;
	i->client_token = l->client_token ? strdup(l->client_token) : NULL;
	i->iam_profile_arn = profile ? profile_arn(sim, l) : NULL;
	ok = i->image_id && (!l->key_name || i->key_name) &&
	     (!l->client_token || i->client_token) && (!profile || i->iam_profile_arn);
	for (size_t k = 0; ok && l->sg_ids && k < l->sg_ids->n; k++)
		ok = gb_strv_add(&i->sg_ids, l->sg_ids->v[k]) == GB_E_OK;
	ok = ok && copy_tags(i, l->tags, l->ntags) == GB_E_OK &&
	     copy_netifs(i, sim, l) == GB_E_OK;
	if (ok && l->user_data) {
		i->user_data = malloc(l->user_data_len + 1);
		ok = i->user_data != NULL;
		if (ok) {
			memcpy(i->user_data, l->user_data, l->user_data_len);
			i->user_data[l->user_data_len] = '\0';
			i->user_data_len = l->user_data_len;
		}
	}
	if (!ok) {
		instance_free(i);
		return NULL;
	}
	return i;
}

static bool inst_reserve(gb_sim_t *sim, size_t more)
{
	size_t cap = sim->capinst ? sim->capinst : 256;
	struct gb_sim_instance **p;

	if (sim->ninst + more <= sim->capinst)
		return true;
	while (cap < sim->ninst + more)
		cap *= 2;
	p = realloc(sim->inst, cap * sizeof(*p));
	if (!p)
		return false;
	sim->inst = p;
	sim->capinst = cap;
	return true;
}

/* Commit instance [i] of reservation [r]: id, IP, accounting, queues. */
static void commit_instance(gb_sim_t *sim, struct gb_sim_reservation *r,
			    struct gb_sim_instance *i, const struct placement *pl,
			    const struct gb_itype *t, struct gb_sim_cr *cr, double now)
{
	struct sim_region *reg = region_of(sim, i->region);

	do
		random_id(sim, "i-", i->id);
	while (gb_strmap_get(&sim->by_id, i->id));
	i->seq = sim->seq++;
	i->res = r;
	i->az = pl->az;
	i->subnet = pl->subnet->sn;
	i->type = t;
	i->launch_time = now;
	set_state(i, GB_SIM_STATE_PENDING, now);
	ip_alloc(pl->subnet, i);
	if (i->spot) {
		/* one-time: a Spot request per instance, named after it */
		snprintf(i->spot_request_id, sizeof(i->spot_request_id), "sir-%08" PRIx32,
			 (uint32_t)(fnv1a(i->id) >> 16));
		find_pool(sim, pl->az, t)->spot_used++;
		reg->usage.spot_vcpus[t->bucket] += t->vcpus;
	} else {
		if ((i->cr = cr))
			cr->used++;
		else
			find_pool(sim, pl->az, t)->used++;
		i->cr_targeted = cr && pl->targeted;
		reg->usage.instances++;
		reg->usage.vcpus[t->bucket] += t->vcpus;
	}
	if (pl->pg) {
		i->pg = pl->pg;
		pl->pg->live++;
		if (!pl->pg->az && strcmp(pl->pg->strategy, "cluster") == 0)
			pl->pg->az = pl->az;
	}
	i->in_pending_q = true;
	queue_push(&sim->q_pending, i);
	sim->inst[sim->ninst++] = i;
	gb_strmap_put(&sim->by_id, i->id, i);
}

static gb_err_t launch(gb_sim_t *sim, const struct gb_sc_region *rg,
		       const struct placement *pl, const struct gb_itype *t,
		       const struct gb_sim_launch *l, long n, const char *tkey,
		       double now, struct gb_sim_reservation **out)
{
	struct gb_sim_reservation *r = calloc(1, sizeof(*r));

	if (!r || !(r->inst = calloc((size_t)n, sizeof(*r->inst))) ||
	    !(r->digest = strdup(l->digest ? l->digest : "")) ||
	    !inst_reserve(sim, (size_t)n))
		goto nomem;
	for (r->n = 0; r->n < (size_t)n; r->n++) {
		if (!(r->inst[r->n] = instance_new(sim, l)))
			goto nomem;
		r->inst[r->n]->region = rg;
		r->inst[r->n]->launch_index = (int)r->n;
	}
	random_id(sim, "r-", r->id);
	r->alive = r->n;
	/* a reservation's slots first, then (untargeted) the pool */
	for (size_t k = 0; k < r->n; k++)
		commit_instance(sim, r, r->inst[k], pl, t,
				(long)k < pl->cr_room ? pl->cr : NULL, now);
	if (tkey && (r->token_key = strdup(tkey)))
		gb_strmap_put(&sim->by_token, r->token_key, r);
	*out = r;
	return GB_E_OK;
nomem:
	for (size_t k = 0; r && r->inst && k < r->n; k++)
		instance_free(r->inst[k]);
	if (r)
		reservation_free(r);
	return GB_E_NOMEM;
}

/* Room in the subnet: fewer free addresses than MinCount is an error. */
static gb_err_t address_room(const struct placement *pl, long min_count,
			     long *room, struct gb_sim_error *e)
{
	long left = (long)subnet_free(pl->subnet);

	if (left < min_count)
		return fail(e, GB_E_CAPACITY, 400, "InsufficientFreeAddressesInSubnet",
			    "There are not enough free addresses in subnet '%s' to satisfy the requested number of instances.",
			    pl->subnet->sn->id);
	*room = left;
	return GB_E_OK;
}

static long min3(long a, long b, long c)
{
	long m = a < b ? a : b;

	return m < c ? m : c;
}

/*****************************************************************************
 *  RunInstances: capacity reservations
 *****************************************************************************/

static bool cr_id_ok(const char *s)
{
	return s && strncmp(s, "cr-", 3) == 0 && strlen(s) == 20 &&
	       strspn(s + 3, "0123456789abcdef") == 17;
}

static struct gb_sim_cr *find_cr(gb_sim_t *sim, const struct gb_sc_region *rg,
				 const char *id)
{
	for (size_t k = 0; k < sim->ncrs; k++) {
		if (sim->crs[k].region == rg && strcmp(sim->crs[k].sc->id, id) == 0)
			return &sim->crs[k];
	}
	return NULL;
}

const char *gb_sim_cr_state(const struct gb_sim_cr *cr, double now)
{
	if (cr->sc->state)
		return cr->sc->state;
	if (now < cr->sc->start)
		return "scheduled";
	if (cr->sc->end >= 0 && now >= cr->sc->end)
		return "expired";
	return "active";
}

long gb_sim_cr_available(const struct gb_sim_cr *cr, double now)
{
	long n = cr->sc->count - cr->used;

	if (strcmp(gb_sim_cr_state(cr, now), "active") != 0)
		return 0;
	return n > 0 ? n : 0;
}

/* An open, active reservation of [t] in [az] with room, or NULL. */
static struct gb_sim_cr *open_cr(gb_sim_t *sim, const struct gb_sc_region *rg,
				 const struct gb_sc_az *az, const struct gb_itype *t)
{
	for (size_t k = 0; k < sim->ncrs; k++) {
		struct gb_sim_cr *cr = &sim->crs[k];

		if (cr->region == rg && cr->sc->open && cr->sc->type == t &&
		    (!az || cr->sc->az == az) && gb_sim_cr_available(cr, sim->now) > 0)
			return cr;
	}
	return NULL;
}

static const char *open_cr_az(gb_sim_t *sim, const struct gb_sc_region *rg,
			      const struct gb_itype *t)
{
	struct gb_sim_cr *cr = open_cr(sim, rg, NULL, t);

	return cr ? cr->sc->az->name : NULL;
}

/*
 * CapacityReservationResourceGroupArn: a group of the region's
 * resource_groups (an unknown one InvalidParameterValue: the simulator's
 * choice, not confirmed).  The launch goes to one reservation of the group:
 * of its type and market, in the AZ it names if any, active, the one with
 * the most free slots.
 */
static gb_err_t group_cr(gb_sim_t *sim, const struct gb_sc_region *rg,
			 const struct gb_sim_launch *l, const struct gb_itype *t,
			 const char **id, struct gb_sim_error *e)
{
	const struct gb_sc_rgroup *g = NULL;
	const struct gb_sim_subnet *sn = l->subnet_id ? find_subnet(sim, l->subnet_id) : NULL;
	const char *az = sn ? sn->az->name : l->az;
	long best = -1;

	for (size_t k = 0; k < rg->nrgroups && !g; k++) {
		if (strcmp(rg->rgroups[k].arn, l->cr_group_arn) == 0)
			g = &rg->rgroups[k];
	}
	if (!g)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "The resource group %s does not exist or is not a Capacity Reservation group",
			    l->cr_group_arn);
	for (size_t k = 0; k < g->ids.n; k++) {
		struct gb_sim_cr *cr = find_cr(sim, rg, g->ids.v[k]);
		long room = gb_sim_cr_available(cr, sim->now);

		if (cr->sc->type != t || (cr->sc->kind == GB_SC_CR_BLOCK) != l->capacity_block ||
		    (az && strcmp(az, cr->sc->az->name) != 0) || room <= best)
			continue;
		best = room;
		*id = cr->sc->id;
	}
	if (best < 0)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
			    "No Capacity Reservation in resource group %s matches the launch (instance type %s%s%s%s)",
			    l->cr_group_arn, t->name, az ? ", Availability Zone " : "", az ? az : "",
			    l->capacity_block ? ", capacity-block" : "");
	return GB_E_OK;
}

/*
 * CapacityReservationTarget.CapacityReservationId: the reservation must
 * exist in the region, be of the launch's type (its AZ is checked once
 * placed) and match the market: a Capacity Block only with MarketType
 * capacity-block, which in turn needs one; Spot never.  EC2 documents these
 * rules; the codes for a mismatch (InvalidParameterCombination) are the
 * simulator's choice, not confirmed against EC2.
 */
static gb_err_t check_cr_target(gb_sim_t *sim, const struct gb_sc_region *rg,
				const struct gb_sim_launch *l, const struct gb_itype *t,
				struct placement *pl, struct gb_sim_error *e)
{
	struct gb_sim_cr *cr;
	const char *id = l->cr_id;
	gb_err_t rc;

	if (!id && l->cr_group_arn && (rc = group_cr(sim, rg, l, t, &id, e)))
		return rc;
	if (!id) {
		if (l->capacity_block)
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
				    "InstanceMarketOptions.MarketType capacity-block requires a CapacityReservationSpecification.CapacityReservationTarget naming a Capacity Block");
		return GB_E_OK;
	}
	if (!cr_id_ok(id))
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidCapacityReservationId.Malformed",
			    "Invalid id: \"%s\" (expecting \"cr-...\")", id);
	if (!(cr = find_cr(sim, rg, id)))
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidCapacityReservationId.NotFound",
			    "The capacity reservation ID '%s' does not exist", id);
	if (l->spot)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
			    "Spot Instances cannot be launched into Capacity Reservation %s",
			    id);
	if (cr->sc->kind == GB_SC_CR_BLOCK && !l->capacity_block)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
			    "%s is a Capacity Block: launch into it with InstanceMarketOptions.MarketType capacity-block",
			    id);
	if (cr->sc->kind != GB_SC_CR_BLOCK && l->capacity_block)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
			    "%s is not a Capacity Block: InstanceMarketOptions.MarketType capacity-block needs one",
			    id);
	if (cr->sc->type != t)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
			    "The instance type %s does not match the instance type %s of Capacity Reservation %s",
			    t->name, cr->sc->type->name, id);
	pl->cr = cr;
	pl->targeted = true;
	return GB_E_OK;
}

static void iso_time(double epoch, char *buf, size_t n)
{
	time_t t = (time_t)epoch;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/*
 * A targeted reservation must be active (a Capacity Block only in its
 * window).  EC2's code for launching into a Capacity Block before its start
 * is not confirmed here: InvalidParameterValue with the reason.
 */
static gb_err_t check_cr_state(gb_sim_t *sim, const struct placement *pl, double now,
			       struct gb_sim_error *e)
{
	const char *state;
	char when[40];

	if (!pl->targeted || !strcmp((state = gb_sim_cr_state(pl->cr, now)), "active"))
		return GB_E_OK;
	if (!strcmp(state, "scheduled")) {
		iso_time(sim->epoch + pl->cr->sc->start, when, sizeof(when));
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "%s %s is scheduled: instances can be launched into it from its start date %s",
			    pl->cr->sc->kind == GB_SC_CR_BLOCK ? "Capacity Block" :
			    "Capacity Reservation", pl->cr->sc->id, when);
	}
	return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
		    "Capacity Reservation %s is in state %s: instances can be launched only into an active one",
		    pl->cr->sc->id, state);
}

/*
 * Slots for the launch: a targeted reservation's (fewer than MinCount:
 * ReservationCapacityExceeded), else an open one of the AZ and type unless
 * the preference is none.  capacity-reservations-only without an open
 * reservation that holds MinCount: ReservationCapacityExceeded as well (the
 * code EC2 answers there is not confirmed).
 */
static gb_err_t cr_room(gb_sim_t *sim, const struct gb_sc_region *rg,
			struct placement *pl, const struct gb_itype *t,
			const struct gb_sim_launch *l, struct gb_sim_error *e)
{
	if (!pl->targeted && !l->spot && l->cr_pref != GB_SIM_CR_PREF_NONE)
		pl->cr = open_cr(sim, rg, pl->az, t);
	pl->cr_room = pl->cr ? gb_sim_cr_available(pl->cr, sim->now) : 0;
	if (pl->targeted && pl->cr_room < l->min_count)
		return fail(e, GB_E_CAPACITY, 400, "ReservationCapacityExceeded",
			    "The requested number of instances (%ld) exceeds the available capacity of Capacity Reservation %s (%ld of %ld).",
			    l->min_count, pl->cr->sc->id, pl->cr_room, pl->cr->sc->count);
	if (!pl->targeted && l->cr_pref == GB_SIM_CR_PREF_ONLY && pl->cr_room < l->min_count)
		return fail(e, GB_E_CAPACITY, 400, "ReservationCapacityExceeded",
			    "CapacityReservationPreference capacity-reservations-only: no open Capacity Reservation for %s in %s has room for %ld instance(s).",
			    t->name, pl->az->name, l->min_count);
	return GB_E_OK;
}

/* Network interfaces, the placement group, then where the launch goes. */
static gb_err_t check_launch(gb_sim_t *sim, const struct sim_region *r,
			     const struct gb_sim_launch *l, const struct gb_itype **t,
			     struct placement *pl, struct gb_sim_error *e)
{
	struct gb_sim_launch ll = *l;
	gb_err_t rc;

	if ((rc = validate_launch(r, l, t, e)))
		return rc;
	if (l->nnetifs && (rc = check_netifs(sim, r->rg, l, *t, &ll.subnet_id, e)))
		return rc;
	if ((rc = check_groups(r->rg, l->sg_ids, e)) ||
	    (rc = check_profile(sim, r->rg, l, e)) ||
	    (rc = check_pgroup(sim, r->rg, l, *t, &pl->pg, e)) ||
	    (rc = check_cr_target(sim, r->rg, l, *t, pl, e)))
		return rc;
	/* EC2 puts a launch into a cluster group's AZ when it names none */
	if (pl->pg && pl->pg->az && !ll.az && !ll.subnet_id &&
	    strcmp(pl->pg->strategy, "cluster") == 0)
		ll.az = pl->pg->az->name;
	/* ... and into its reservation's AZ; an open one's when it can */
	if (!ll.az && !ll.subnet_id && pl->cr)
		ll.az = pl->cr->sc->az->name;
	if (!ll.az && !ll.subnet_id && !l->spot && l->cr_pref != GB_SIM_CR_PREF_NONE)
		ll.az = open_cr_az(sim, r->rg, *t);
	if ((rc = place(sim, r->rg, &ll, *t, pl, e)))
		return rc;
	if (pl->targeted && pl->az != pl->cr->sc->az)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
			    "The Availability Zone %s does not match the Availability Zone %s of Capacity Reservation %s",
			    pl->az->name, pl->cr->sc->az->name, pl->cr->sc->id);
	return check_pgroup_az(pl->pg, pl->az, e);
}

gb_err_t gb_sim_run_instances(gb_sim_t *sim, const char *region,
			      const struct gb_sim_launch *l, double now,
			      struct gb_sim_reservation **out,
			      struct gb_sim_error *e)
{
	struct sim_region *r = find_region(sim, region);
	const struct gb_itype *t = NULL;
	struct placement pl = { 0 };
	long qroom = 0, aroom = 0, groom = 0, n;
	char *tkey = NULL;
	gb_err_t rc;

	*out = NULL;
	gb_sim_advance(sim, now);
	if (!r)
		return fail(e, GB_E_AUTH, 401, "AuthFailure",
			    "AWS was not able to validate the provided access credentials");
	if ((rc = check_launch(sim, r, l, &t, &pl, e)) ||
	    (rc = check_cr_state(sim, &pl, now, e)))
		return rc;
	if (l->dry_run) {	/* the token is neither looked up nor recorded */
		if ((rc = check_offered(sim, r->rg, &pl, t, e)))
			return rc;
		return fail(e, GB_E_CANCELLED, 412, "DryRunOperation",
			    "Request would have succeeded, but DryRun flag is set.");
	}
	if (l->client_token && !(tkey = token_key(pl.zonal ? pl.az->name : r->rg->name,
						  l->client_token)))
		return fail_nomem(e);
	if ((rc = tkey ? idempotent(sim, tkey, l, out, e) : GB_E_OK) || *out)
		goto out;
	if ((rc = check_offered(sim, r->rg, &pl, t, e)) ||
	    (l->spot && (rc = check_spot_price(sim, &pl, t, l, e))))
		goto out;
	if ((rc = cr_room(sim, r->rg, &pl, t, l, e)) ||
	    (rc = l->spot ? spot_quota_room(r, t, l->min_count, &qroom, e) :
			    quota_room(r, t, l->min_count, &qroom, e)) ||
	    (!pl.targeted && l->cr_pref != GB_SIM_CR_PREF_ONLY &&
	     (rc = check_capacity(sim, r->rg, &pl, t, l, e))) ||
	    (rc = pgroup_room(sim, pl.pg, t, pl.az, l->min_count, &groom, e)) ||
	    (rc = address_room(&pl, l->min_count, &aroom, e)))
		goto out;
	/* EC2: MaxCount launches the largest possible number above MinCount */
	n = min3(l->max_count,
		 pl.cr_room + (pl.targeted || l->cr_pref == GB_SIM_CR_PREF_ONLY ? 0 :
			       market_free(find_pool(sim, pl.az, t), l->spot)),
		 qroom < aroom ? qroom : aroom);
	if (n > groom)
		n = groom;
	if (launch(sim, r->rg, &pl, t, l, n, tkey, now, out))
		rc = fail_nomem(e);
out:
	free(tkey);
	return rc;
}

/*****************************************************************************
 *  DescribeInstances
 *****************************************************************************/

static bool any_match(const struct gb_sim_filter *f, const char *v)
{
	for (size_t k = 0; v && k < f->nvalues; k++) {
		if (fnmatch(f->values[k], v, 0) == 0)
			return true;
	}
	return false;
}

static bool tag_match(const struct gb_sim_filter *f, const struct gb_sim_instance *i)
{
	for (size_t t = 0; t < i->ntags; t++) {
		if (strcmp(f->name, "tag-key") == 0) {
			if (any_match(f, i->tags[t].key))
				return true;
		} else if (strcmp(f->name, "tag-value") == 0) {
			if (any_match(f, i->tags[t].value))
				return true;
		} else if (strcmp(f->name + 4, i->tags[t].key) == 0 &&
			   any_match(f, i->tags[t].value)) {
			return true;	/* tag:KEY */
		}
	}
	return false;
}

/* The instance value a filter looks at, or NULL for the tag filters. */
static const char *filter_value(const char *name, const struct gb_sim_instance *i)
{
	if (strcmp(name, "instance-id") == 0)
		return i->id;
	if (strcmp(name, "instance-state-name") == 0)
		return gb_sim_state_name(i->state);
	if (strcmp(name, "availability-zone") == 0)
		return i->az->name;
	if (strcmp(name, "instance-type") == 0)
		return i->type->name;
	if (strcmp(name, "subnet-id") == 0)
		return i->subnet->id;
	if (strcmp(name, "private-ip-address") == 0)
		return i->ip;
	if (strcmp(name, "reservation-id") == 0)
		return i->res->id;
	if (strcmp(name, "image-id") == 0)
		return i->image_id;
	if (strcmp(name, "instance-lifecycle") == 0)
		return "spot";		/* On-Demand has none: field_absent() */
	if (strcmp(name, "spot-instance-request-id") == 0)
		return i->spot_request_id;
	if (strcmp(name, "placement-group-name") == 0)
		return i->pg ? i->pg->name : NULL;
	return NULL;
}

static bool instance_filter_known(const char *name)
{
	static const char *names[] = {
		"instance-id", "instance-state-name", "availability-zone",
		"instance-type", "subnet-id", "private-ip-address",
		"reservation-id", "image-id", "tag-key", "tag-value",
		"instance-lifecycle", "spot-instance-request-id", "placement-group-name",
	};

	for (size_t k = 0; k < GB_ARRAY_LEN(names); k++) {
		if (strcmp(name, names[k]) == 0)
			return true;
	}
	return gb_str_has_prefix(name, "tag:") && name[4];
}

/* A field On-Demand instances do not have matches no filter value, not even "*". */
static bool field_absent(const char *name, const struct gb_sim_instance *i)
{
	if (strcmp(name, "placement-group-name") == 0)
		return !i->pg;
	return !i->spot && (strcmp(name, "instance-lifecycle") == 0 ||
			    strcmp(name, "spot-instance-request-id") == 0);
}

static bool instance_matches(const struct gb_sim_query *q,
			     const struct gb_sim_instance *i)
{
	for (size_t f = 0; f < q->nfilters; f++) {
		const char *v = filter_value(q->filters[f].name, i);

		if (field_absent(q->filters[f].name, i))
			return false;
		if (v ? !any_match(&q->filters[f], v) : !tag_match(&q->filters[f], i))
			return false;
	}
	return true;
}

static gb_err_t check_filters(const struct gb_sim_query *q,
			      bool (*known)(const char *), struct gb_sim_error *e)
{
	for (size_t f = 0; f < q->nfilters; f++) {
		if (!known(q->filters[f].name))
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
				    "The filter '%s' is invalid", q->filters[f].name);
		if (!q->filters[f].nvalues)
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
				    "The filter '%s' requires at least one value",
				    q->filters[f].name);
	}
	return GB_E_OK;
}

/* NextToken: an opaque form of the position to resume at. */
static void token_encode(const gb_sim_t *sim, uint64_t pos, char out[GB_SIM_TOKEN_MAX])
{
	snprintf(out, GB_SIM_TOKEN_MAX, "gbsim1%016" PRIx64, pos ^ sim->token_key);
}

static gb_err_t token_decode(const gb_sim_t *sim, const char *tok, uint64_t *pos,
			     struct gb_sim_error *e)
{
	char *end = NULL;
	uint64_t v;

	*pos = 0;
	if (!tok)
		return GB_E_OK;
	if (strlen(tok) != 22 || strncmp(tok, "gbsim1", 6) != 0 ||
	    strspn(tok + 6, "0123456789abcdef") != 16)
		goto bad;
	v = strtoull(tok + 6, &end, 16);
	if (*end)
		goto bad;
	*pos = v ^ sim->token_key;
	return GB_E_OK;
bad:
	return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidNextToken",
		    "The token '%s' is invalid.", tok);
}

static gb_err_t check_max_results(long max, struct gb_sim_error *e)
{
	if (max && (max < 5 || max > 1000))
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "Value ( %ld ) for parameter maxResults is invalid. Expecting a value between 5 and 1000.",
			    max);
	return GB_E_OK;
}

static bool valid_instance_id(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return valid_hex_id(s, "i-") && (n == 10 || n == 19);
}

/*****************************************************************************
 *  Eventual consistency
 *****************************************************************************/

void gb_sim_consistency_set(gb_sim_t *sim, const struct gb_sim_consistency *c)
{
	sim->consistency = *c;
}

void gb_sim_consistency_get(const gb_sim_t *sim, struct gb_sim_consistency *c)
{
	*c = sim->consistency;
}

bool gb_sim_instance_visible(const gb_sim_t *sim, const struct gb_sim_instance *i,
			     double now)
{
	return now - i->launch_time >= sim->consistency.invisible;
}

bool gb_sim_instance_shows_ip(const gb_sim_t *sim, const struct gb_sim_instance *i,
			      double now)
{
	return i->state != GB_SIM_STATE_TERMINATED &&
	       now - i->launch_time >= sim->consistency.no_private_ip;
}

/*
 * InstanceId.N: every id must be well-formed, then exist in [r] and be
 * visible already; EC2 names every one that is not: "The instance ID 'X'
 * does not exist", "The instance IDs 'X, Y' do not exist".
 */
static gb_err_t check_ids(gb_sim_t *sim, const struct sim_region *r,
			  const char *const *ids, size_t nids,
			  struct gb_sim_error *e)
{
	struct gb_buf missing = GB_BUF_INIT;
	size_t n = 0;
	gb_err_t rc;

	for (size_t k = 0; k < nids; k++)
		if (!valid_instance_id(ids[k]))
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidInstanceID.Malformed",
				    "Invalid id: \"%s\"", ids[k]);
	for (size_t k = 0; k < nids; k++) {
		struct gb_sim_instance *i = gb_strmap_get(&sim->by_id, ids[k]);

		if (i && i->region == r->rg && gb_sim_instance_visible(sim, i, sim->now))
			continue;
		gb_buf_printf(&missing, "%s%s", n++ ? ", " : "", ids[k]);
	}
	if (n == 0)
		return GB_E_OK;
	if (gb_buf_failed(&missing))
		rc = fail_nomem(e);
	else
		rc = fail(e, GB_E_NOTFOUND, 400, "InvalidInstanceID.NotFound",
			  n == 1 ? "The instance ID '%s' does not exist" :
			  "The instance IDs '%s' do not exist", gb_buf_str(&missing));
	gb_buf_free(&missing);
	return rc;
}

static int seq_cmp(const void *a, const void *b)
{
	const struct gb_sim_instance *x = *(struct gb_sim_instance *const *)a;
	const struct gb_sim_instance *y = *(struct gb_sim_instance *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * InstanceId.N (already checked to exist in the region): look them up
 * instead of scanning, in creation order, each once, filters applied.
 */
static gb_err_t describe_ids(gb_sim_t *sim, const struct gb_sim_query *q,
			     struct gb_sim_instance ***out, size_t *n,
			     struct gb_sim_error *e)
{
	if (!(*out = calloc(q->nids + 1, sizeof(**out))))
		return fail_nomem(e);
	for (size_t k = 0; k < q->nids; k++) {
		struct gb_sim_instance *i = gb_strmap_get(&sim->by_id, q->ids[k]);
		bool dup = false;

		for (size_t j = 0; j < *n && !dup; j++)
			dup = (*out)[j] == i;
		if (!dup && instance_matches(q, i))
			(*out)[(*n)++] = i;
	}
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), seq_cmp);
	return GB_E_OK;
}

gb_err_t gb_sim_describe_instances(gb_sim_t *sim, const char *region,
				   const struct gb_sim_query *q, double now,
				   struct gb_sim_instance ***out, size_t *n,
				   char next[GB_SIM_TOKEN_MAX],
				   struct gb_sim_error *e)
{
	struct sim_region *r = find_region(sim, region);
	uint64_t from;
	gb_err_t rc;

	*out = NULL;
	*n = 0;
	next[0] = '\0';
	gb_sim_advance(sim, now);
	if (!r)
		return fail(e, GB_E_AUTH, 401, "AuthFailure",
			    "AWS was not able to validate the provided access credentials");
	if (q->nids && q->max_results)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
			    "The parameter instancesSet cannot be used with the parameter maxResults");
	if ((rc = check_max_results(q->max_results, e)) ||
	    (rc = check_filters(q, instance_filter_known, e)) ||
	    (rc = check_ids(sim, r, q->ids, q->nids, e)) ||
	    (rc = token_decode(sim, q->next_token, &from, e)))
		return rc;
	if (q->nids)
		return describe_ids(sim, q, out, n, e);
	if (!(*out = calloc(sim->ninst + 1, sizeof(**out))))
		return fail_nomem(e);
	for (size_t k = 0; k < sim->ninst; k++) {
		struct gb_sim_instance *i = sim->inst[k];

		if (i->seq < from || i->region != r->rg || !instance_matches(q, i) ||
		    !gb_sim_instance_visible(sim, i, sim->now))
			continue;
		if (q->max_results && *n == (size_t)q->max_results) {
			token_encode(sim, i->seq, next);
			break;
		}
		(*out)[(*n)++] = i;
	}
	return GB_E_OK;
}

/*****************************************************************************
 *  TerminateInstances, CreateTags
 *****************************************************************************/

/* EC2: pending/running -> shutting-down; later terminated (gb_sim_advance). */
static void terminate_one(gb_sim_t *sim, struct gb_sim_instance *i, double now,
			  struct gb_sim_state_change *ch)
{
	ch->inst = i;
	ch->prev = i->state;
	if (i->state == GB_SIM_STATE_PENDING || i->state == GB_SIM_STATE_RUNNING) {
		set_state(i, GB_SIM_STATE_SHUTTING_DOWN, now);
		i->user_terminated = true;
		queue_push(&sim->q_shut, i);
		event_push(sim, GB_SIM_EVENT_SHUTTING_DOWN, i);
	}
	ch->cur = i->state;
}

gb_err_t gb_sim_terminate_instances(gb_sim_t *sim, const char *region,
				    const char *const *ids, size_t nids,
				    bool dry_run, double now,
				    struct gb_sim_state_change **out, size_t *n,
				    struct gb_sim_error *e)
{
	struct sim_region *r = find_region(sim, region);
	gb_err_t rc;

	*out = NULL;
	*n = 0;
	gb_sim_advance(sim, now);
	if (!r)
		return fail(e, GB_E_AUTH, 401, "AuthFailure",
			    "AWS was not able to validate the provided access credentials");
	if (!nids)
		return fail(e, GB_E_CLOUDCONFIG, 400, "MissingParameter",
			    "The request must contain the parameter InstanceId");
	if (nids > 1000)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "TerminateInstances accepts at most 1000 instance IDs");
	if ((rc = check_ids(sim, r, ids, nids, e)))
		return rc;
	if (dry_run)
		return fail(e, GB_E_CANCELLED, 412, "DryRunOperation",
			    "Request would have succeeded, but DryRun flag is set.");
	if (!(*out = calloc(nids, sizeof(**out))))
		return fail_nomem(e);
	for (size_t k = 0; k < nids; k++) {
		bool dup = false;

		for (size_t j = 0; j < k; j++)
			dup |= strcmp(ids[j], ids[k]) == 0;
		if (!dup)
			terminate_one(sim, gb_strmap_get(&sim->by_id, ids[k]), now,
				      &(*out)[(*n)++]);
	}
	return GB_E_OK;
}

gb_err_t gb_sim_interrupt(gb_sim_t *sim, const char *id, enum gb_sim_interrupt kind,
			  double in, double now, double *at, gb_error_t *err)
{
	struct gb_sim_instance *i;

	gb_sim_advance(sim, now);
	*at = sim->now + in;
	i = gb_strmap_get(&sim->by_id, id);
	if (!i || (i->state != GB_SIM_STATE_PENDING && i->state != GB_SIM_STATE_RUNNING))
		return gb_errorf(err, GB_E_NOTFOUND, "no pending or running instance %s", id);
	if (kind == GB_SIM_INTERRUPT_REBALANCE) {
		i->rebalance = true;
		i->rebalance_time = *at;
		return GB_E_OK;
	}
	if (!i->spot)
		return gb_errorf(err, GB_E_INVALID,
				 "instance %s is On-Demand: only a Spot instance gets a Spot interruption",
				 id);
	i->spot_notice = true;
	i->spot_action_time = *at;
	sim->nnotices++;
	gb_sim_advance(sim, sim->now);		/* in 0: terminated now */
	return GB_E_OK;
}

static gb_err_t tag_one(struct gb_sim_instance *i, const struct gb_sim_kv *t)
{
	struct gb_sim_tag *nt;
	char *v = strdup(t->value ? t->value : "");

	if (!v)
		return GB_E_NOMEM;
	for (size_t k = 0; k < i->ntags; k++) {
		if (strcmp(i->tags[k].key, t->key) == 0) {
			free(i->tags[k].value);
			i->tags[k].value = v;
			return GB_E_OK;
		}
	}
	nt = realloc(i->tags, (i->ntags + 1) * sizeof(*nt));
	if (!nt || !(nt[i->ntags].key = strdup(t->key))) {
		if (nt)
			i->tags = nt;
		free(v);
		return GB_E_NOMEM;
	}
	nt[i->ntags++].value = v;
	i->tags = nt;
	return GB_E_OK;
}

static size_t tags_after(const struct gb_sim_instance *i,
			 const struct gb_sim_kv *tags, size_t ntags)
{
	size_t n = i->ntags;

	for (size_t k = 0; k < ntags; k++) {
		bool have = false;

		for (size_t j = 0; j < i->ntags; j++)
			have |= strcmp(i->tags[j].key, tags[k].key) == 0;
		n += !have;
	}
	return n;
}

gb_err_t gb_sim_create_tags(gb_sim_t *sim, const char *region,
			    const char *const *ids, size_t nids,
			    const struct gb_sim_kv *tags, size_t ntags,
			    bool dry_run, double now, struct gb_sim_error *e)
{
	struct sim_region *r = find_region(sim, region);
	gb_err_t rc;

	gb_sim_advance(sim, now);
	if (!r)
		return fail(e, GB_E_AUTH, 401, "AuthFailure",
			    "AWS was not able to validate the provided access credentials");
	if (!nids)
		return fail(e, GB_E_CLOUDCONFIG, 400, "MissingParameter",
			    "The request must contain the parameter ResourceId");
	if ((rc = check_ids(sim, r, ids, nids, e)) || (rc = check_tags(tags, ntags, e)))
		return rc;
	for (size_t k = 0; k < nids; k++) {
		if (tags_after(gb_strmap_get(&sim->by_id, ids[k]), tags, ntags) > MAX_TAGS)
			return fail(e, GB_E_CLOUDCONFIG, 400, "TagLimitExceeded",
				    "The maximum number of Tags for a resource is %d.", MAX_TAGS);
	}
	if (dry_run)
		return fail(e, GB_E_CANCELLED, 412, "DryRunOperation",
			    "Request would have succeeded, but DryRun flag is set.");
	for (size_t k = 0; k < nids; k++) {
		for (size_t t = 0; t < ntags; t++) {
			if (tag_one(gb_strmap_get(&sim->by_id, ids[k]), &tags[t]))
				return fail_nomem(e);
		}
	}
	return GB_E_OK;
}

/*****************************************************************************
 *  DescribeInstanceTypeOfferings, DescribeAvailabilityZones
 *****************************************************************************/

static bool offering_filter_known(const char *name)
{
	return strcmp(name, "instance-type") == 0 || strcmp(name, "location") == 0;
}

static bool offering_matches(const struct gb_sim_query *q, const struct gb_sim_offering *o)
{
	for (size_t f = 0; f < q->nfilters; f++) {
		const char *v = strcmp(q->filters[f].name, "location") == 0 ?
				o->location : o->instance_type;

		if (!any_match(&q->filters[f], v))
			return false;
	}
	return true;
}

/* Every offering of [rg] at [loc] granularity, in scenario order. */
static size_t list_offerings(const struct gb_sc_region *rg, enum gb_sim_location loc,
			     struct gb_sim_offering *all)
{
	size_t n = 0;

	for (size_t z = 0; z < rg->nazs; z++) {
		for (size_t p = 0; p < rg->azs[z].npools; p++) {
			const char *type = rg->azs[z].pools[p].type->name;
			bool dup = false;

			for (size_t k = 0; loc == GB_SIM_LOC_REGION && k < n; k++)
				dup |= strcmp(all[k].instance_type, type) == 0;
			if (dup)
				continue;
			all[n].instance_type = type;
			all[n].location = loc == GB_SIM_LOC_REGION ? rg->name :
					  loc == GB_SIM_LOC_AZ ? rg->azs[z].name :
					  rg->azs[z].zone_id;
			n++;
		}
	}
	return n;
}

gb_err_t gb_sim_describe_offerings(gb_sim_t *sim, const char *region,
				   enum gb_sim_location loc,
				   const struct gb_sim_query *q,
				   struct gb_sim_offering **out, size_t *n,
				   char next[GB_SIM_TOKEN_MAX],
				   struct gb_sim_error *e)
{
	const struct gb_sc_region *rg = gb_scenario_region(sim->sc, region);
	struct gb_sim_offering *all;
	size_t nall, total = 0;
	uint64_t from;
	gb_err_t rc;

	*out = NULL;
	*n = 0;
	next[0] = '\0';
	if (!rg)
		return fail(e, GB_E_AUTH, 401, "AuthFailure",
			    "AWS was not able to validate the provided access credentials");
	if ((rc = check_max_results(q->max_results, e)) ||
	    (rc = check_filters(q, offering_filter_known, e)) ||
	    (rc = token_decode(sim, q->next_token, &from, e)))
		return rc;
	for (size_t z = 0; z < rg->nazs; z++)
		total += rg->azs[z].npools;
	if (!(all = calloc(total + 1, sizeof(*all))))
		return fail_nomem(e);
	nall = list_offerings(rg, loc, all);
	for (size_t k = (size_t)from; k < nall; k++) {
		if (!offering_matches(q, &all[k]))
			continue;
		if (q->max_results && *n == (size_t)q->max_results) {
			token_encode(sim, k, next);
			break;
		}
		all[(*n)++] = all[k];
	}
	*out = all;
	return GB_E_OK;
}

static bool az_filter_known(const char *name)
{
	return strcmp(name, "zone-name") == 0 || strcmp(name, "zone-id") == 0 ||
	       strcmp(name, "region-name") == 0 || strcmp(name, "state") == 0 ||
	       strcmp(name, "zone-type") == 0;
}

static bool az_matches(const struct gb_sim_query *q, const struct gb_sc_region *rg,
		       const struct gb_sc_az *az)
{
	for (size_t f = 0; f < q->nfilters; f++) {
		const char *name = q->filters[f].name;
		const char *v = strcmp(name, "zone-name") == 0 ? az->name :
				strcmp(name, "zone-id") == 0 ? az->zone_id :
				strcmp(name, "region-name") == 0 ? rg->name :
				strcmp(name, "state") == 0 ? "available" : "availability-zone";

		if (!any_match(&q->filters[f], v))
			return false;
	}
	for (size_t k = 0; k < q->nids; k++) {
		if (strcmp(q->ids[k], az->name) == 0 || strcmp(q->ids[k], az->zone_id) == 0)
			return true;
	}
	return q->nids == 0;
}

gb_err_t gb_sim_describe_azs(gb_sim_t *sim, const char *region,
			     const struct gb_sim_query *q,
			     const struct gb_sc_az ***out, size_t *n,
			     struct gb_sim_error *e)
{
	const struct gb_sc_region *rg = gb_scenario_region(sim->sc, region);
	gb_err_t rc;

	*out = NULL;
	*n = 0;
	if (!rg)
		return fail(e, GB_E_AUTH, 401, "AuthFailure",
			    "AWS was not able to validate the provided access credentials");
	if ((rc = check_filters(q, az_filter_known, e)))
		return rc;
	for (size_t k = 0; k < q->nids; k++) {
		bool found = false;

		for (size_t z = 0; z < rg->nazs; z++)
			found |= strcmp(q->ids[k], rg->azs[z].name) == 0 ||
				 strcmp(q->ids[k], rg->azs[z].zone_id) == 0;
		if (!found)
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
				    "Invalid availability zone: [%s]", q->ids[k]);
	}
	if (!(*out = calloc(rg->nazs + 1, sizeof(**out))))
		return fail_nomem(e);
	for (size_t z = 0; z < rg->nazs; z++) {
		if (az_matches(q, rg, &rg->azs[z]))
			(*out)[(*n)++] = &rg->azs[z];
	}
	return GB_E_OK;
}

/*****************************************************************************
 *  Control and views
 *****************************************************************************/

gb_err_t gb_sim_capacity_set(gb_sim_t *sim, const char *az, const char *type,
			     bool spot, long n, bool available, gb_error_t *err)
{
	const struct gb_sc_az *z = gb_scenario_az(sim->sc, az, NULL);
	const struct gb_itype *t = gb_itype_find(type);
	struct gb_sim_pool *p;

	if (!z)
		return gb_errorf(err, GB_E_NOTFOUND, "no availability zone '%s'", az ? az : "");
	if (!t)
		return gb_errorf(err, GB_E_NOTFOUND, "unknown instance type '%s'",
				 type ? type : "");
	p = find_pool(sim, z, t);
	if (!p)
		return gb_errorf(err, GB_E_NOTFOUND, "%s does not offer %s", az, type);
	if (spot && !p->spot)
		return gb_errorf(err, GB_E_NOTFOUND, "%s has no Spot pool of %s", az, type);
	if (n < 0)
		return gb_errorf(err, GB_E_INVALID, "capacity must not be negative");
	if (spot)
		p->spot_total = available ? p->spot_used + n : n;
	else
		p->total = available ? p->used + n : n;
	return GB_E_OK;
}

const struct gb_sim_pool *gb_sim_pools(const gb_sim_t *sim, size_t *n)
{
	*n = sim->npools;
	return sim->pools;
}

const struct gb_sim_subnet *gb_sim_subnets(const gb_sim_t *sim, size_t *n)
{
	*n = sim->nsubnets;
	return sim->subnets;
}

struct gb_sim_instance *const *gb_sim_instances(const gb_sim_t *sim, size_t *n)
{
	*n = sim->ninst;
	return sim->inst;
}

const struct gb_sim_usage *gb_sim_usage(const gb_sim_t *sim, const char *region)
{
	for (size_t i = 0; region && i < sim->nregions; i++) {
		if (strcmp(sim->regions[i].rg->name, region) == 0)
			return &sim->regions[i].usage;
	}
	return NULL;
}

void gb_sim_events_enable(gb_sim_t *sim, bool on)
{
	sim->events_on = on;
}

size_t gb_sim_events_take(gb_sim_t *sim, struct gb_sim_event **out)
{
	size_t n = sim->nevents;

	*out = sim->events;
	sim->events = NULL;
	sim->nevents = sim->capevents = 0;
	return n;
}

void gb_sim_events_free(struct gb_sim_event *ev, size_t n)
{
	for (size_t i = 0; ev && i < n; i++) {
		gb_sim_tags_free(ev[i].tags, ev[i].ntags);
		free(ev[i].user_data);
	}
	free(ev);
}

/*****************************************************************************
 *  DescribeInstanceTypes
 *****************************************************************************/

/*
 * The filters of DescribeInstanceTypes (botocore's documentation of the
 * request) the simulator has the figures for; EC2 has no GPU filter.
 */
static const char *const itype_filters[] = {
	"instance-type", "current-generation", "bare-metal", "hypervisor",
	"vcpu-info.default-vcpus", "vcpu-info.default-cores",
	"vcpu-info.default-threads-per-core", "memory-info.size-in-mib",
	"processor-info.supported-architecture", "network-info.efa-supported",
	"network-info.ena-support", "network-info.maximum-network-cards",
	"network-info.maximum-network-interfaces",
	"network-info.efa-info.maximum-efa-interfaces",
};

static bool itype_filter_known(const char *name)
{
	for (size_t k = 0; k < GB_ARRAY_LEN(itype_filters); k++) {
		if (strcmp(name, itype_filters[k]) == 0)
			return true;
	}
	return false;
}

static const char *itype_long(long v, char *buf, size_t n)
{
	snprintf(buf, n, "%ld", v);
	return buf;
}

static bool itype_metal(const struct gb_itype *t)
{
	const char *dot = strchr(t->name, '.');

	return dot && strcmp(dot, ".metal") == 0;
}

/* What the vCPUs, architecture and name say, the same for every type. */
static const char *itype_common(const struct gb_itype *t, const char *name,
				char *buf, size_t n)
{
	int threads = strcmp(t->arch, "arm64") == 0 ? 1 : 2;

	if (strcmp(name, "instance-type") == 0)
		return t->name;
	if (strcmp(name, "processor-info.supported-architecture") == 0)
		return t->arch;
	if (strcmp(name, "vcpu-info.default-vcpus") == 0)
		return itype_long(t->vcpus, buf, n);
	if (strcmp(name, "vcpu-info.default-cores") == 0)
		return itype_long(t->vcpus / threads, buf, n);
	if (strcmp(name, "vcpu-info.default-threads-per-core") == 0)
		return itype_long(threads, buf, n);
	if (strcmp(name, "current-generation") == 0)
		return "true";
	if (strcmp(name, "bare-metal") == 0)
		return itype_metal(t) ? "true" : "false";
	if (strcmp(name, "hypervisor") == 0)
		return itype_metal(t) ? NULL : "nitro";
	if (strcmp(name, "network-info.ena-support") == 0)
		return "required";
	return NULL;
}

const char *gb_sim_itype_value(const struct gb_itype *t, const char *name,
			       char *buf, size_t n)
{
	const struct gb_instance_type *c = t->ct;
	const char *v = itype_common(t, name, buf, n);

	if (v || !c)
		return v;
	if (strcmp(name, "memory-info.size-in-mib") == 0)
		return itype_long(c->memory_mib, buf, n);
	if (strcmp(name, "network-info.efa-supported") == 0)
		return c->efa ? "true" : "false";
	if (strcmp(name, "network-info.maximum-network-cards") == 0)
		return itype_long(c->network_cards > 0 ? c->network_cards : 1, buf, n);
	if (strcmp(name, "network-info.maximum-network-interfaces") == 0)
		return c->max_interfaces > 0 ? itype_long(c->max_interfaces, buf, n) : NULL;
	if (strcmp(name, "network-info.efa-info.maximum-efa-interfaces") == 0)
		return c->efa ? itype_long(c->efa_max_interfaces, buf, n) : NULL;
	return NULL;
}

/* Every filter matches one of the type's values (EC2: AND of filters, OR of values). */
static bool itype_matches(const struct gb_sim_query *q, const struct gb_itype *t)
{
	char buf[64];

	for (size_t f = 0; f < q->nfilters; f++) {
		const struct gb_sim_filter *fl = &q->filters[f];

		if (!any_match(fl, gb_sim_itype_value(t, fl->name, buf, sizeof(buf))))
			return false;
	}
	return true;
}

/* InstanceType.N: EC2 names every unknown one. */
static gb_err_t check_itype_names(const struct gb_sim_query *q, struct gb_sim_error *e)
{
	struct gb_buf bad = GB_BUF_INIT;
	gb_err_t rc = GB_E_OK;

	for (size_t k = 0; k < q->nids; k++) {
		const struct gb_itype *t = gb_itype_find(q->ids[k]);

		if (!t || !t->ct)
			gb_buf_printf(&bad, "%s%s", bad.len ? ", " : "", q->ids[k]);
	}
	if (bad.len)
		rc = fail(e, GB_E_CLOUDCONFIG, 400, "InvalidInstanceType",
			  "The following supplied instance types do not exist: [%s]",
			  gb_buf_str(&bad));
	gb_buf_free(&bad);
	return rc;
}

static bool itype_named(const struct gb_sim_query *q, const struct gb_itype *t)
{
	for (size_t k = 0; k < q->nids; k++) {
		if (strcmp(q->ids[k], t->name) == 0)
			return true;
	}
	return !q->nids;
}

gb_err_t gb_sim_describe_itypes(gb_sim_t *sim, const char *region,
				const struct gb_sim_query *q,
				const struct gb_itype ***out, size_t *n,
				char next[GB_SIM_TOKEN_MAX], struct gb_sim_error *e)
{
	size_t all, k;
	const struct gb_itype *t = gb_itype_all(&all);
	uint64_t from;
	gb_err_t rc;

	*out = NULL;
	*n = 0;
	next[0] = '\0';
	if (!find_region(sim, region))
		return fail(e, GB_E_AUTH, 401, "AuthFailure",
			    "AWS was not able to validate the provided access credentials");
	if (q->max_results && (q->max_results < 5 || q->max_results > 100))
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "Value ( %ld ) for parameter maxResults is invalid. Expecting a value between 5 and 100.",
			    q->max_results);
	if ((rc = check_filters(q, itype_filter_known, e)) || (rc = check_itype_names(q, e)) ||
	    (rc = token_decode(sim, q->next_token, &from, e)))
		return rc;
	if (!(*out = calloc(all + 1, sizeof(**out))))
		return fail_nomem(e);
	for (k = (size_t)(from < all ? from : all); k < all; k++) {
		if (!t[k].ct || !itype_named(q, &t[k]) || !itype_matches(q, &t[k]))
			continue;
		if (q->max_results && (long)*n == q->max_results) {
			token_encode(sim, k, next);
			break;
		}
		(*out)[(*n)++] = &t[k];
	}
	return GB_E_OK;
}

/*****************************************************************************
 *  Placement groups
 *****************************************************************************/

static gb_err_t pgroup_new(gb_sim_t *sim, const struct gb_sc_region *rg, const char *name,
			   const char *strategy, const struct gb_sim_kv *tags, size_t ntags,
			   struct gb_sim_pgroup **out)
{
	static const char *const strategies[] = { "cluster", "spread", "partition" };
	struct gb_sim_pgroup *g = calloc(1, sizeof(*g)), **v;

	if (!g || !(g->name = strdup(name)) ||
	    !(v = realloc(sim->pgs, (sim->npgs + 1) * sizeof(*v))))
		goto nomem;
	sim->pgs = v;
	random_id(sim, "pg-", g->id);
	g->region = rg;
	g->strategy = strategies[0];
	for (size_t k = 0; k < GB_ARRAY_LEN(strategies); k++) {
		if (strcmp(strategy, strategies[k]) == 0)
			g->strategy = strategies[k];
	}
	if (ntags && !(g->tags = calloc(ntags, sizeof(*g->tags))))
		goto nomem;
	for (size_t k = 0; k < ntags; k++, g->ntags++) {
		g->tags[k].key = strdup(tags[k].key);
		g->tags[k].value = strdup(tags[k].value ? tags[k].value : "");
		if (!g->tags[k].key || !g->tags[k].value)
			goto nomem;
	}
	sim->pgs[sim->npgs++] = g;
	*out = g;
	return GB_E_OK;
nomem:
	if (g) {
		gb_sim_tags_free(g->tags, g->ntags);
		free(g->name);
	}
	free(g);
	return GB_E_NOMEM;
}

gb_err_t gb_sim_create_pgroup(gb_sim_t *sim, const char *region, const char *name,
			      const char *strategy, const struct gb_sim_kv *tags,
			      size_t ntags, bool dry_run, double now,
			      const struct gb_sim_pgroup **out, struct gb_sim_error *e)
{
	struct sim_region *r = find_region(sim, region);
	struct gb_sim_pgroup *g = NULL;
	long live = 0;
	gb_err_t rc;

	*out = NULL;
	gb_sim_advance(sim, now);
	if (!r)
		return fail(e, GB_E_AUTH, 401, "AuthFailure",
			    "AWS was not able to validate the provided access credentials");
	if (!name[0] || strlen(name) > 255)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "Value (%s) for parameter groupName is invalid. The name must be 1 to 255 ASCII characters.",
			    name);
	if ((rc = check_tags(tags, ntags, e)))
		return rc;
	if (find_pgroup(sim, r->rg, name))
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidPlacementGroup.Duplicate",
			    "The placement group '%s' already exists.", name);
	for (size_t k = 0; k < sim->npgs; k++)
		live += !sim->pgs[k]->deleted && sim->pgs[k]->region == r->rg;
	if (live >= r->rg->pg_limit)
		return fail(e, GB_E_QUOTA, 400, "PlacementGroupLimitExceeded",
			    "You have reached the maximum number of placement groups (%ld) for this Region.",
			    r->rg->pg_limit);
	if (dry_run)
		return fail(e, GB_E_CANCELLED, 412, "DryRunOperation",
			    "Request would have succeeded, but DryRun flag is set.");
	if (pgroup_new(sim, r->rg, name, strategy, tags, ntags, &g))
		return fail_nomem(e);
	*out = g;
	return GB_E_OK;
}

gb_err_t gb_sim_delete_pgroup(gb_sim_t *sim, const char *region, const char *name,
			      bool dry_run, double now, struct gb_sim_error *e)
{
	struct sim_region *r = find_region(sim, region);
	struct gb_sim_pgroup *g;

	gb_sim_advance(sim, now);
	if (!r)
		return fail(e, GB_E_AUTH, 401, "AuthFailure",
			    "AWS was not able to validate the provided access credentials");
	if (!(g = find_pgroup(sim, r->rg, name)))
		return fail(e, GB_E_NOTFOUND, 400, "InvalidPlacementGroup.Unknown",
			    "The Placement Group '%s' is unknown.", name);
	if (g->live > 0)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidPlacementGroup.InUse",
			    "The placement group '%s' is in use and may not be deleted.", name);
	if (dry_run)
		return fail(e, GB_E_CANCELLED, 412, "DryRunOperation",
			    "Request would have succeeded, but DryRun flag is set.");
	g->deleted = true;
	return GB_E_OK;
}

static bool pgroup_filter_known(const char *name)
{
	static const char *names[] = { "group-name", "group-arn", "strategy", "state",
				       "tag-key" };

	for (size_t k = 0; k < GB_ARRAY_LEN(names); k++) {
		if (strcmp(name, names[k]) == 0)
			return true;
	}
	return gb_str_has_prefix(name, "tag:") && name[4];
}

static bool pgroup_tag_match(const struct gb_sim_filter *f, const struct gb_sim_pgroup *g)
{
	for (size_t t = 0; t < g->ntags; t++) {
		if (strcmp(f->name, "tag-key") == 0 ? any_match(f, g->tags[t].key) :
		    strcmp(f->name + 4, g->tags[t].key) == 0 && any_match(f, g->tags[t].value))
			return true;
	}
	return false;
}

/* The ARN EC2 gives a group: arn:aws:ec2:REGION:ACCOUNT:placement-group/NAME. */
void gb_sim_pgroup_arn(const gb_sim_t *sim, const struct gb_sim_pgroup *g, char *buf,
		       size_t n)
{
	const struct gb_partition *pt = gb_partition_of(g->region->name);

	snprintf(buf, n, "arn:%s:ec2:%s:%s:placement-group/%s", pt ? pt->name : "aws",
		 g->region->name, sim->sc->account_id, g->name);
}

static bool pgroup_matches(const gb_sim_t *sim, const struct gb_sim_query *q,
			   const struct gb_sim_pgroup *g)
{
	char arn[512];

	gb_sim_pgroup_arn(sim, g, arn, sizeof(arn));
	for (size_t f = 0; f < q->nfilters; f++) {
		const struct gb_sim_filter *fl = &q->filters[f];
		const char *v = strcmp(fl->name, "group-name") == 0 ? g->name :
				strcmp(fl->name, "group-arn") == 0 ? arn :
				strcmp(fl->name, "strategy") == 0 ? g->strategy :
				strcmp(fl->name, "state") == 0 ? "available" : NULL;

		if (v ? !any_match(fl, v) : !pgroup_tag_match(fl, g))
			return false;
	}
	return true;
}

/* GroupName.N and GroupId.N: each must name a group of the region. */
static gb_err_t check_pgroup_names(gb_sim_t *sim, const struct gb_sc_region *rg,
				   const struct gb_sim_query *q, struct gb_sim_error *e)
{
	for (size_t k = 0; k < q->nids; k++) {
		if (!find_pgroup(sim, rg, q->ids[k]))
			return fail(e, GB_E_NOTFOUND, 400, "InvalidPlacementGroup.Unknown",
				    "The Placement Group '%s' is unknown.", q->ids[k]);
	}
	for (size_t k = 0; k < q->nids2; k++) {
		bool found = false;

		if (!valid_hex_id(q->ids2[k], "pg-"))
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidPlacementGroupId.Malformed",
				    "Invalid id: \"%s\" (expecting \"pg-...\")", q->ids2[k]);
		for (size_t i = 0; i < sim->npgs && !found; i++)
			found = !sim->pgs[i]->deleted && sim->pgs[i]->region == rg &&
				strcmp(sim->pgs[i]->id, q->ids2[k]) == 0;
		if (!found)
			return fail(e, GB_E_NOTFOUND, 400, "InvalidPlacementGroupId.NotFound",
				    "The Placement Group ID '%s' does not exist", q->ids2[k]);
	}
	return GB_E_OK;
}

static bool pgroup_named(const struct gb_sim_query *q, const struct gb_sim_pgroup *g)
{
	for (size_t k = 0; k < q->nids; k++) {
		if (strcmp(q->ids[k], g->name) == 0)
			return true;
	}
	for (size_t k = 0; k < q->nids2; k++) {
		if (strcmp(q->ids2[k], g->id) == 0)
			return true;
	}
	return !q->nids && !q->nids2;
}

gb_err_t gb_sim_describe_pgroups(gb_sim_t *sim, const char *region,
				 const struct gb_sim_query *q, double now,
				 const struct gb_sim_pgroup ***out, size_t *n,
				 struct gb_sim_error *e)
{
	struct sim_region *r = find_region(sim, region);
	gb_err_t rc;

	*out = NULL;
	*n = 0;
	gb_sim_advance(sim, now);
	if (!r)
		return fail(e, GB_E_AUTH, 401, "AuthFailure",
			    "AWS was not able to validate the provided access credentials");
	if ((rc = check_filters(q, pgroup_filter_known, e)) ||
	    (rc = check_pgroup_names(sim, r->rg, q, e)))
		return rc;
	if (!(*out = calloc(sim->npgs + 1, sizeof(**out))))
		return fail_nomem(e);
	for (size_t k = 0; k < sim->npgs; k++) {
		const struct gb_sim_pgroup *g = sim->pgs[k];

		if (!g->deleted && g->region == r->rg && pgroup_named(q, g) &&
		    pgroup_matches(sim, q, g))
			(*out)[(*n)++] = g;
	}
	return GB_E_OK;
}

/*****************************************************************************
 *  DescribeSecurityGroups
 *****************************************************************************/

gb_err_t gb_sim_describe_sgroups(gb_sim_t *sim, const char *region,
				 const struct gb_sim_query *q, size_t **out, size_t *n,
				 char next[GB_SIM_TOKEN_MAX], struct gb_sim_error *e)
{
	struct sim_region *r = find_region(sim, region);
	const struct gb_strv *sg;
	uint64_t from;
	gb_err_t rc;

	*out = NULL;
	*n = 0;
	next[0] = '\0';
	if (!r)
		return fail(e, GB_E_AUTH, 401, "AuthFailure",
			    "AWS was not able to validate the provided access credentials");
	sg = &r->rg->security_groups;
	if (q->nids && (q->max_results || q->next_token))
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
			    "The parameter groupIds cannot be used with the parameter maxResults");
	if ((rc = check_max_results(q->max_results, e)) ||
	    (rc = token_decode(sim, q->next_token, &from, e)))
		return rc;
	for (size_t k = 0; k < q->nids; k++) {
		if (!valid_hex_id(q->ids[k], "sg-"))
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidGroupId.Malformed",
				    "Invalid id: \"%s\" (expecting \"sg-...\")", q->ids[k]);
		if (gb_strv_find(sg, q->ids[k]) < 0)
			return fail(e, GB_E_NOTFOUND, 400, "InvalidGroup.NotFound",
				    "The security group '%s' does not exist", q->ids[k]);
	}
	if (!(*out = calloc(sg->n + 1, sizeof(**out))))
		return fail_nomem(e);
	for (size_t k = q->nids ? 0 : (size_t)(from < sg->n ? from : sg->n); k < sg->n; k++) {
		bool named = !q->nids;

		for (size_t j = 0; j < q->nids && !named; j++)
			named = strcmp(q->ids[j], sg->v[k]) == 0;
		if (!named)
			continue;
		if (q->max_results && (long)*n == q->max_results) {
			token_encode(sim, k, next);
			break;
		}
		(*out)[(*n)++] = k;
	}
	return GB_E_OK;
}

/*****************************************************************************
 *  DescribeCapacityReservations, DescribeCapacityBlockOfferings
 *****************************************************************************/

static bool cr_filter_known(const char *name)
{
	static const char *const names[] = {
		"instance-type", "availability-zone", "state", "instance-match-criteria",
		"instance-platform", "tenancy", "end-date-type", "owner-id",
	};

	for (size_t k = 0; k < GB_ARRAY_LEN(names); k++) {
		if (strcmp(name, names[k]) == 0)
			return true;
	}
	return false;
}

static const char *cr_value(const gb_sim_t *sim, const struct gb_sim_cr *cr,
			    const char *name, double now)
{
	if (!strcmp(name, "instance-type"))
		return cr->sc->type->name;
	if (!strcmp(name, "availability-zone"))
		return cr->sc->az->name;
	if (!strcmp(name, "state"))
		return gb_sim_cr_state(cr, now);
	if (!strcmp(name, "instance-match-criteria"))
		return cr->sc->open ? "open" : "targeted";
	if (!strcmp(name, "instance-platform"))
		return "Linux/UNIX";
	if (!strcmp(name, "tenancy"))
		return "default";
	if (!strcmp(name, "end-date-type"))
		return cr->sc->end >= 0 ? "limited" : "unlimited";
	return sim->sc->account_id;	/* owner-id */
}

static bool cr_matches(const gb_sim_t *sim, const struct gb_sim_query *q,
		       const struct gb_sim_cr *cr, double now)
{
	for (size_t f = 0; f < q->nfilters; f++) {
		if (!any_match(&q->filters[f], cr_value(sim, cr, q->filters[f].name, now)))
			return false;
	}
	return true;
}

/* Every id well-formed (Malformed) and existing in [rg] (NotFound). */
static gb_err_t check_cr_ids(gb_sim_t *sim, const struct gb_sc_region *rg,
			     const struct gb_sim_query *q, struct gb_sim_error *e)
{
	if (q->nids && (q->max_results || q->next_token))
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterCombination",
			    "The parameter capacityReservationIds cannot be used with the parameter maxResults");
	if (q->nids > 1000)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "DescribeCapacityReservations accepts at most 1000 capacity reservation IDs");
	for (size_t k = 0; k < q->nids; k++) {
		if (!cr_id_ok(q->ids[k]))
			return fail(e, GB_E_CLOUDCONFIG, 400,
				    "InvalidCapacityReservationId.Malformed",
				    "Invalid id: \"%s\" (expecting \"cr-...\")", q->ids[k]);
		if (!find_cr(sim, rg, q->ids[k]))
			return fail(e, GB_E_NOTFOUND, 400, "InvalidCapacityReservationId.NotFound",
				    "The capacity reservation ID '%s' does not exist", q->ids[k]);
	}
	return GB_E_OK;
}

static bool cr_named(const struct gb_sim_query *q, const struct gb_sim_cr *cr)
{
	for (size_t k = 0; k < q->nids; k++) {
		if (strcmp(q->ids[k], cr->sc->id) == 0)
			return true;
	}
	return !q->nids;
}

gb_err_t gb_sim_describe_crs(gb_sim_t *sim, const char *region,
			     const struct gb_sim_query *q, double now,
			     const struct gb_sim_cr ***out, size_t *n,
			     char next[GB_SIM_TOKEN_MAX], struct gb_sim_error *e)
{
	struct sim_region *r = find_region(sim, region);
	uint64_t from;
	gb_err_t rc;

	*out = NULL;
	*n = 0;
	next[0] = '\0';
	gb_sim_advance(sim, now);
	if (!r)
		return fail(e, GB_E_AUTH, 401, "AuthFailure",
			    "AWS was not able to validate the provided access credentials");
	if ((rc = check_cr_ids(sim, r->rg, q, e)) ||
	    (rc = check_filters(q, cr_filter_known, e)) ||
	    (rc = token_decode(sim, q->next_token, &from, e)))
		return rc;
	if (!(*out = calloc(sim->ncrs + 1, sizeof(**out))))
		return fail_nomem(e);
	for (size_t k = (size_t)(from < sim->ncrs ? from : sim->ncrs); k < sim->ncrs; k++) {
		const struct gb_sim_cr *cr = &sim->crs[k];

		if (cr->region != r->rg || !cr_named(q, cr) || !cr_matches(sim, q, cr, now))
			continue;
		if (q->max_results && (long)*n == q->max_results) {
			token_encode(sim, k, next);
			break;
		}
		(*out)[(*n)++] = cr;
	}
	return GB_E_OK;
}

/*
 * CapacityDurationHours: EC2 sells Capacity Blocks in 1-day steps up to 14
 * days, then 7-day steps up to 182 days (the EC2 User Guide, "Capacity
 * Blocks for ML").  The wording of the refusal is the simulator's.
 */
static gb_err_t check_cb_hours(long h, struct gb_sim_error *e)
{
	if (h >= 24 && h % 24 == 0 && (h <= 14 * 24 || (h % (7 * 24) == 0 && h <= 182 * 24)))
		return GB_E_OK;
	return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
		    "Value (%ld) for parameter capacityDurationHours is invalid. Capacity Blocks last 24 to 336 hours in steps of 24, or 504 to 4368 hours in steps of 168.",
		    h);
}

static gb_err_t check_cb_query(const struct gb_sim_cb_query *q, struct gb_sim_error *e)
{
	gb_err_t rc;

	if ((rc = check_cb_hours(q->hours, e)))
		return rc;
	if (q->instance_type && !gb_itype_find(q->instance_type))
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "Value (%s) for parameter instanceType is invalid.", q->instance_type);
	if (q->count > GB_SC_CR_BLOCK_MAX)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "Value (%ld) for parameter instanceCount is invalid. A Capacity Block holds 1 to %d instances.",
			    q->count, GB_SC_CR_BLOCK_MAX);
	if (q->start_range >= 0 && q->end_range >= 0 && q->end_range < q->start_range)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "The end date range must not be before the start date range.");
	return GB_E_OK;
}

static bool cb_fits(const struct gb_sim_cb_query *q, const struct gb_sc_cb_offer *o,
		    double now)
{
	double end = o->start + (double)o->hours * 3600;

	return (!q->instance_type || !strcmp(q->instance_type, o->type->name)) &&
	       q->count <= o->count && q->hours == o->hours && o->start >= now &&
	       (q->start_range < 0 || o->start >= q->start_range) &&
	       (q->end_range < 0 || end <= q->end_range);
}

gb_err_t gb_sim_describe_cb_offerings(gb_sim_t *sim, const char *region,
				      const struct gb_sim_cb_query *q, double now,
				      struct gb_sim_cb_offering **out, size_t *n,
				      char next[GB_SIM_TOKEN_MAX],
				      struct gb_sim_error *e)
{
	struct sim_region *r = find_region(sim, region);
	uint64_t from;
	gb_err_t rc;

	*out = NULL;
	*n = 0;
	next[0] = '\0';
	gb_sim_advance(sim, now);
	if (!r)
		return fail(e, GB_E_AUTH, 401, "AuthFailure",
			    "AWS was not able to validate the provided access credentials");
	if ((rc = check_cb_query(q, e)) ||
	    (rc = token_decode(sim, q->next_token, &from, e)))
		return rc;
	if (!(*out = calloc(r->rg->ncb_offers + 1, sizeof(**out))))
		return fail_nomem(e);
	for (size_t k = (size_t)from; k < r->rg->ncb_offers; k++) {
		const struct gb_sc_cb_offer *o = &r->rg->cb_offers[k];
		struct gb_sim_cb_offering *v;
		double fee = 0;

		if (!cb_fits(q, o, now))
			continue;
		if (q->max_results && (long)*n == q->max_results) {
			token_encode(sim, k, next);
			break;
		}
		v = &(*out)[(*n)++];
		v->sc = o;
		v->count = q->count ? q->count : o->count;
		gb_parse_double(o->upfront_fee, &fee);
		v->fee = fee * (double)v->count / (double)o->count;
	}
	return GB_E_OK;
}

/*****************************************************************************
 *  DescribeSpotPriceHistory
 *****************************************************************************/

/* EC2's ProductDescription values (API reference, the product-description filter). */
static bool spot_product_known(const char *s)
{
	static const char *const names[] = {
		"Linux/UNIX", "Red Hat Enterprise Linux", "SUSE Linux", "Windows",
		"Linux/UNIX (Amazon VPC)", "Red Hat Enterprise Linux (Amazon VPC)",
		"SUSE Linux (Amazon VPC)", "Windows (Amazon VPC)",
	};

	for (size_t k = 0; k < GB_ARRAY_LEN(names); k++) {
		if (strcmp(s, names[k]) == 0)
			return true;
	}
	return false;
}

static bool spot_filter_known(const char *name)
{
	static const char *const names[] = {
		"availability-zone", "availability-zone-id", "instance-type",
		"product-description", "spot-price", "timestamp",
	};

	for (size_t k = 0; k < GB_ARRAY_LEN(names); k++) {
		if (strcmp(name, names[k]) == 0)
			return true;
	}
	return false;
}

const char *gb_sim_spot_price_text(const struct gb_sim_pool *p, char *buf, size_t n)
{
	snprintf(buf, n, "%.6f", p->spot_price);
	return buf;
}

const char *gb_sim_spot_time_text(double t, char *buf, size_t n)
{
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, n, "%a %b %d %H:%M:%S UTC %Y", &tm);
	return buf;
}

/* Every AZ, type and product named exists. */
static gb_err_t check_spot_query(const struct gb_sc_region *rg,
				 const struct gb_sim_spot_query *q, struct gb_sim_error *e)
{
	bool az_ok = !q->az;

	for (size_t z = 0; z < rg->nazs && !az_ok; z++)
		az_ok = strcmp(q->az, rg->azs[z].name) == 0;
	if (!az_ok)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "Invalid availability zone: [%s]", q->az);
	for (size_t k = 0; k < q->ntypes; k++) {
		if (!gb_itype_find(q->types[k]))
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
				    "Value (%s) for parameter instanceType is invalid.",
				    q->types[k]);
	}
	for (size_t k = 0; k < q->nproducts; k++) {
		if (!spot_product_known(q->products[k]))
			return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
				    "Value (%s) for parameter productDescription is invalid.",
				    q->products[k]);
	}
	if (q->has_start && q->has_end && q->end < q->start)
		return fail(e, GB_E_CLOUDCONFIG, 400, "InvalidParameterValue",
			    "The end time must not be before the start time.");
	return GB_E_OK;
}

static bool any_of(const char *const *v, size_t n, const char *s)
{
	for (size_t k = 0; k < n; k++) {
		if (strcmp(v[k], s) == 0)
			return true;
	}
	return !n;
}

static const char *spot_value(const struct gb_sim_pool *p, const char *name, double at,
			      char *buf, size_t n)
{
	if (!strcmp(name, "availability-zone"))
		return p->az->name;
	if (!strcmp(name, "availability-zone-id"))
		return p->az->zone_id;
	if (!strcmp(name, "instance-type"))
		return p->type->name;
	if (!strcmp(name, "product-description"))
		return GB_SIM_SPOT_PRODUCT;
	if (!strcmp(name, "spot-price"))
		return gb_sim_spot_price_text(p, buf, n);
	return gb_sim_spot_time_text(at, buf, n);	/* timestamp */
}

static bool spot_fits(const struct gb_sim_spot_query *q, const struct gb_sim_pool *p,
		      double at)
{
	char buf[64];

	if (!p->spot || !any_of(q->types, q->ntypes, p->type->name) ||
	    !any_of(q->products, q->nproducts, GB_SIM_SPOT_PRODUCT) ||
	    (q->az && strcmp(q->az, p->az->name) != 0) ||
	    (q->has_end && at > q->end))
		return false;
	for (size_t f = 0; f < q->nfilters; f++) {
		if (!any_match(&q->filters[f], spot_value(p, q->filters[f].name, at, buf,
							   sizeof(buf))))
			return false;
	}
	return true;
}

gb_err_t gb_sim_describe_spot_prices(gb_sim_t *sim, const char *region,
				     const struct gb_sim_spot_query *q, double now,
				     struct gb_sim_spot_price **out, size_t *n,
				     char next[GB_SIM_TOKEN_MAX], struct gb_sim_error *e)
{
	struct sim_region *r = find_region(sim, region);
	uint64_t from;
	gb_err_t rc;

	*out = NULL;
	*n = 0;
	next[0] = '\0';
	gb_sim_advance(sim, now);
	if (!r)
		return fail(e, GB_E_AUTH, 401, "AuthFailure",
			    "AWS was not able to validate the provided access credentials");
	if ((rc = check_spot_query(r->rg, q, e)) ||
	    (rc = check_filters(&(struct gb_sim_query){ .filters = q->filters,
							.nfilters = q->nfilters },
				spot_filter_known, e)) ||
	    (rc = token_decode(sim, q->next_token, &from, e)))
		return rc;
	if (!(*out = calloc(sim->npools + 1, sizeof(**out))))
		return fail_nomem(e);
	/* each pool's price holds since simulated time 0: one change per pool */
	for (size_t k = (size_t)(from < sim->npools ? from : sim->npools); k < sim->npools; k++) {
		const struct gb_sim_pool *p = &sim->pools[k];

		if (p->region != r->rg || !spot_fits(q, p, sim->epoch))
			continue;
		if (q->max_results && (long)*n == q->max_results) {
			token_encode(sim, k, next);
			break;
		}
		(*out)[*n].pool = p;
		(*out)[(*n)++].at = sim->epoch;
	}
	return GB_E_OK;
}
