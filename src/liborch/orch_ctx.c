/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_ctx.c - one run's shared context: trace, invariants, exclusions
 *
 * The bottom of a run (doc/orchestrator.md, "Layers"): everything here
 * reads or writes struct orch_run and calls nothing above it; the call
 * layer, the strategies and the driver all call down into it.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "orch_int.h"

void orch_trace(struct orch_run *r, const char *kind, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	gb_error_t e;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	gb_log_info("orch_%s req=%s %s", kind, r->req->id, line);
	if (!r->dry && gb_state_event_add(r->st, r->req->id, kind, line, &e))
		gb_log_warn("event_failed req=%s error=%s", r->req->id, e.text);
	{
		struct gb_buf b = GB_BUF_INIT;

		gb_buf_printf(&b, "%s %s", kind, line);
		if (!gb_buf_failed(&b))
			gb_strv_add(&r->trace, gb_buf_str(&b));
		gb_buf_free(&b);
	}
}

int orch_unfilled(const struct orch_run *r)
{
	int n = 0;

	for (int i = 0; i < r->n; i++)
		n += r->slots[i].state == SLOT_EMPTY;
	return n;
}

bool orch_stopped(struct orch_run *r)
{
	if (r->abort_rc)
		return true;
	if (!r->deadline_hit && orch_mono(r->o) > r->deadline) {
		r->deadline_hit = true;
		orch_trace(r, "deadline", "stop: request deadline reached");
	}
	return r->deadline_hit;
}

int orch_group_of(const struct orch_run *r, size_t pool)
{
	const struct gb_pool *p = &r->facts.pools[pool];

	if (!r->grouped)
		return 0;
	return r->locality == GB_LOCALITY_AZ ? p->rank * 1000 + p->az_index :
	       p->rank;
}

gb_err_t orch_broken(struct orch_run *r, const char *where, const char *what,
		       gb_error_t *err)
{
	gb_log_error("orch_invariant req=%s where=%s broken=%s", r->req->id,
		     where, what);
	if (!r->abort_rc) {
		char text[GB_ERROR_TEXT_MAX];

		snprintf(text, sizeof(text), "internal error: invariant broken at %s: %s",
			 where, what);
		orch_abort(r, GB_E_INTERNAL, NULL, text);
	}
	return gb_errorf(err, GB_E_INTERNAL, "invariant broken at %s: %s", where, what);
}

/*
 * The invariants of doc/orchestrator.md: remaining never increases, the
 * cursor never moves back, every launched instance is recorded, and no
 * node has more than one instance (so no more instances than nodes).
 */
gb_err_t orch_check(struct orch_run *r, const char *where, gb_error_t *err)
{
	int held = 0;

	for (int i = 0; i < r->n; i++)
		held += r->slots[i].state == SLOT_COMMITTED ||
			r->slots[i].state == SLOT_REUSED;
	if (r->remaining != r->n - held)
		return orch_broken(r, where, "remaining differs from the nodes held", err);
	if (r->remaining > r->prev_remaining)
		return orch_broken(r, where, "remaining increased", err);
	r->prev_remaining = r->remaining;
	if (r->cursor < r->prev_cursor)
		return orch_broken(r, where, "cursor moved back", err);
	r->prev_cursor = r->cursor;
	if (r->launched_recorded != r->launched_seen)
		return orch_broken(r, where, "a launched instance was not recorded", err);
	return GB_E_OK;
}

void orch_exclude_subnet(struct orch_run *r, size_t pool, const char *why)
{
	struct gb_pool *p = &r->facts.pools[pool];

	if (p->excluded)
		return;
	p->excluded = true;
	gb_strlcpy(p->why, why, sizeof(p->why));
}

void orch_exclude_az(struct orch_run *r, size_t pool, const char *why)
{
	const struct gb_pool *p = &r->facts.pools[pool];

	for (size_t i = 0; i < r->facts.n_pools; i++)
		if (strcmp(r->facts.pools[i].region, p->region) == 0 &&
		    strcmp(r->facts.pools[i].az, p->az) == 0)
			orch_exclude_subnet(r, i, why);
}

void orch_exclude_capacity(struct orch_run *r, size_t pool, const char *why)
{
	for (size_t i = 0; i < r->facts.n_pools; i++)
		if (orch_same_capacity(r, i, pool))
			orch_exclude_subnet(r, i, why);
}

void orch_exclude_region(struct orch_run *r, const char *region,
			 const char *why)
{
	for (size_t i = 0; i < r->facts.n_pools; i++)
		if (strcmp(r->facts.pools[i].region, region) == 0)
			orch_exclude_subnet(r, i, why);
}

void orch_slot_clear(struct slot *s)
{
	GB_FREE_NULL(s->instance_id);
	GB_FREE_NULL(s->region);
	GB_FREE_NULL(s->az);
	GB_FREE_NULL(s->subnet);
	GB_FREE_NULL(s->type);
	GB_FREE_NULL(s->private_ip);
	GB_FREE_NULL(s->public_ip);
	s->state = SLOT_EMPTY;
	s->tagged = false;
}

void orch_commit_tentative(struct orch_run *r)
{
	for (int i = 0; i < r->n; i++) {
		if (r->slots[i].state == SLOT_TENTATIVE) {
			r->slots[i].state = SLOT_COMMITTED;
			r->remaining--;
		}
	}
}

long orch_pool_index(const struct orch_run *r, const struct gb_plan_step *s)
{
	for (size_t i = 0; i < r->facts.n_pools; i++) {
		const struct gb_pool *p = &r->facts.pools[i];

		/* a step without a type (older plans) means the first type */
		if (strcmp(p->region, s->region) == 0 && strcmp(p->az, s->az) == 0 &&
		    strcmp(p->subnet, s->subnet) == 0 &&
		    strcmp(p->type, s->type && *s->type ? s->type : r->type) == 0 &&
		    p->capacity == s->capacity && gb_strcmp0(p->target, s->target) == 0)
			return (long)i;
	}
	return -1;
}

void orch_abort(struct orch_run *r, gb_err_t rc, const char *code,
		const char *text)
{
	if (r->abort_rc)
		return;
	r->abort_rc = rc;
	gb_strlcpy(r->abort_code, code ? code : "", sizeof(r->abort_code));
	gb_strlcpy(r->abort_text, text, sizeof(r->abort_text));
}

bool orch_same_az(const struct orch_run *r, size_t a, size_t b)
{
	return strcmp(r->facts.pools[a].region, r->facts.pools[b].region) == 0 &&
	       strcmp(r->facts.pools[a].az, r->facts.pools[b].az) == 0;
}

bool orch_same_capacity(const struct orch_run *r, size_t a, size_t b)
{
	return gb_plan_same_capacity(&r->facts.pools[a], &r->facts.pools[b]);
}

/* Which quotas a pool's launches count against: spot, blocks', on-demand's. */
static int market_of(const struct gb_pool *p)
{
	return p->capacity == GB_CAPACITY_SPOT ? 1 : p->capacity == GB_CAPACITY_BLOCK ? 2 : 0;
}

bool orch_same_quota(const struct orch_run *r, size_t a, size_t b)
{
	const struct gb_pool *pa = &r->facts.pools[a], *pb = &r->facts.pools[b];

	return strcmp(pa->region, pb->region) == 0 && market_of(pa) == market_of(pb);
}

void orch_exclude_quota(struct orch_run *r, size_t pool, const char *why)
{
	for (size_t i = 0; i < r->facts.n_pools; i++)
		if (orch_same_quota(r, i, pool))
			orch_exclude_subnet(r, i, why);
}

int orch_pool_cap(const struct orch_run *r, size_t pool)
{
	const struct gb_conf_region *cr =
		gb_conf_region(r->conf, r->facts.pools[pool].region);

	int reserved = r->facts.pools[pool].reserved;
	int cap;

	if (cr && cr->user_data_per_node)
		return 1;
	/* a placed job asks for all its nodes at once: one group, one call */
	cap = r->placed ? r->n : r->bmax;
	/* never more than a reservation holds (EC2 would refuse the call) */
	return reserved > 0 && reserved < cap ? reserved : cap;
}

void orch_code_line(struct gb_buf *b, const char *code, const char *text)
{
	if (code && *code)
		gb_buf_printf(b, "(Code:%s) ", code);
	gb_buf_puts(b, text);
}

const char *orch_abort_line(const struct orch_run *r, char *buf, size_t n)
{
	struct gb_buf b = GB_BUF_INIT;

	orch_code_line(&b, r->abort_code, r->abort_text);
	gb_strlcpy(buf, gb_buf_failed(&b) ? r->abort_text : gb_buf_str(&b), n);
	gb_buf_free(&b);
	return buf;
}

gb_err_t orch_region_jobs(struct orch_run *r, enum orch_job_kind kind,
			  bool (*want)(const struct orch_run *r, const char *region),
			  struct orch_job **out, size_t *n_out, gb_error_t *err)
{
	struct orch_job *jobs = calloc(r->cand.n + 1, sizeof(*jobs));
	struct orch_job **jp = calloc(r->cand.n + 1, sizeof(*jp));
	size_t n = 0;

	*out = NULL;
	*n_out = 0;
	if (!jobs || !jp) {
		free(jobs);
		free(jp);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < r->cand.n; i++) {
		const char *region = r->cand.v[i].region->name;

		if (!want(r, region))
			continue;
		jobs[n].kind = kind;
		jobs[n].region = region;
		jobs[n].types = r->types;	/* every type in one call */
		jobs[n].n_types = r->n_types;
		jp[n] = &jobs[n];
		n++;
	}
	orch_pool_run(r->pool, jp, n);
	for (size_t i = 0; i < n; i++)
		r->other_calls += jobs[i].ae.attempts > 0 ? jobs[i].ae.attempts : 1;
	free(jp);
	*out = jobs;
	*n_out = n;
	return GB_E_OK;
}

void orch_jobs_free(struct orch_job *jobs, size_t n)
{
	for (size_t i = 0; jobs && i < n; i++)
		orch_job_clear(&jobs[i]);
	free(jobs);
}
