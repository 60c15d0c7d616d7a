/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_region.c - regions the account may not use: skip, remember, decide
 *
 * EC2 answers OptInRequired (an opt-in region not enabled),
 * PendingVerification (an account or region still being validated, up to
 * hours), UnauthorizedOperation (an SCP or IAM condition that denies the
 * region) and AuthFailure (a disabled region, but also bad credentials)
 * per region: class GB_EC2_CLASS_REGION.  Such an answer skips its region
 * for the rest of the run and the others are still tried.  Only when no
 * region accepted a RunInstances (every region tried refused so) is it
 * taken for a problem of the credentials or the account, the same
 * everywhere: the request aborts with that code, and nothing is
 * remembered.  Otherwise each region skipped in the run is remembered in
 * quota memory as an "account" wall of the code (limit 0): later requests
 * skip it until the wall is forgotten, two capacity half-lives after the
 * last refusal (doc/orchestrator.md, "Regions the account may not use").
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "gb_util.h"
#include "orch_int.h"

static struct region_skip *skip_of(struct orch_run *r, const char *region)
{
	for (size_t i = 0; i < r->n_skips; i++)
		if (strcmp(r->skips[i].region, region) == 0)
			return &r->skips[i];
	return NULL;
}

static struct region_skip *skip_add(struct orch_run *r, const char *region,
				    const char *code, const char *message)
{
	struct region_skip *v, *s;

	if ((s = skip_of(r, region)))
		return NULL;	/* a call still in flight says it again */
	if (!(v = realloc(r->skips, (r->n_skips + 1) * sizeof(*v)))) {
		gb_log_error("region_skip_nomem req=%s region=%s", r->req->id, region);
		return NULL;
	}
	r->skips = v;
	s = &v[r->n_skips++];
	memset(s, 0, sizeof(*s));
	gb_strlcpy(s->region, region, sizeof(s->region));
	gb_strlcpy(s->code, code, sizeof(s->code));
	gb_strlcpy(s->message, message, sizeof(s->message));
	return s;
}

void orch_region_refused(struct orch_run *r, const char *region,
			 const struct orch_job *j)
{
	const char *code = j->ae.code[0] ? j->ae.code : gb_ec2_class_name(j->ae.cls);
	char q[GB_ERROR_TEXT_MAX], why[64];
	struct region_skip *s;

	s = skip_add(r, region, code, j->ae.message[0] ? j->ae.message : j->err.text);
	snprintf(why, sizeof(why), "account: %s", code);
	orch_exclude_region(r, region, why);
	if (!s)
		return;
	orch_trace(r, "skip", "region=%s code=%s action=%s: left for this run msg=%s",
		   region, code, j->kind == ORCH_JOB_RUN ? "RunInstances" :
		   "DescribeInstanceTypeOfferings",
		   gb_log_q(q, 160, s->message));
}

void orch_region_accepted(struct orch_run *r, const char *region)
{
	if (gb_strv_find(&r->accepted, region) < 0 &&
	    gb_strv_add(&r->accepted, region))
		gb_log_error("region_accepted_nomem req=%s region=%s", r->req->id, region);
}

/* One remembered "account" wall, if a candidate region has it. */
struct walls_ctx {
	struct orch_run *r;
	gb_err_t rc;
	gb_error_t *err;
};

static int wall_row(const struct gb_quota *q, void *arg)
{
	struct walls_ctx *c = arg;
	struct orch_run *r = c->r;
	struct gb_plan_quota_view v;
	struct region_skip *s;
	char why[64], until[32];
	bool candidate = false;

	if (strcmp(q->quota, GB_PLAN_QUOTA_ACCOUNT) != 0)
		return 0;
	for (size_t i = 0; i < r->cand.n && !candidate; i++)
		candidate = strcmp(r->cand.v[i].region->name, q->region) == 0;
	if (!candidate)
		return 0;
	if ((c->rc = gb_plan_quota_view(r->conf, r->st, q, r->facts.now,
					r->conf->policy.capacity_half_life, &v, c->err)))
		return 1;
	if (!v.heeded)
		return 0;	/* forgotten: the region is tried again */
	if (!(s = skip_add(r, q->region, q->code, "remembered from an earlier request")))
		return 0;
	s->remembered = true;
	snprintf(why, sizeof(why), "account: %s", q->code);
	orch_exclude_region(r, q->region, why);
	gb_time_iso(v.forget_at, until, sizeof(until));
	orch_trace(r, "skip", "region=%s code=%s remembered: not asked until %s (gpuburstctl capacity forget %s --quota)",
		   q->region, q->code, until, q->region);
	return 0;
}

static size_t rank_of(const struct orch_run *r, const char *region)
{
	for (size_t i = 0; i < r->cand.n; i++)
		if (strcmp(r->cand.v[i].region->name, region) == 0)
			return i;
	return r->cand.n;
}

gb_err_t orch_region_remembered(struct orch_run *r, gb_error_t *err)
{
	struct walls_ctx c = { r, GB_E_OK, err };
	double hl = r->conf->policy.capacity_half_life;
	gb_err_t rc;

	if (!r->st)
		return GB_E_OK;
	rc = gb_state_quota_list(r->st, r->facts.now, hl > 0 ? hl : 3600, wall_row, &c,
				 err);
	/* in the candidates' order, as the reason names them (few: insertion) */
	for (size_t i = 1; i < r->n_skips; i++) {
		struct region_skip t = r->skips[i];
		size_t j = i;

		for (; j > 0 && rank_of(r, r->skips[j - 1].region) > rank_of(r, t.region); j--)
			r->skips[j] = r->skips[j - 1];
		r->skips[j] = t;
	}
	return rc ? rc : c.rc;
}

static size_t refused_here(const struct orch_run *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_skips; i++)
		n += !r->skips[i].remembered;
	return n;
}

void orch_region_verdict(struct orch_run *r)
{
	const struct region_skip *first = NULL;
	struct gb_buf where = GB_BUF_INIT;

	if (r->abort_rc || refused_here(r) == 0 || r->accepted.n > 0)
		return;
	for (size_t i = 0; i < r->n_skips; i++) {
		if (r->skips[i].remembered)
			continue;
		if (!first)
			first = &r->skips[i];
		gb_buf_printf(&where, "%s%s", where.len ? ", " : "", r->skips[i].region);
	}
	r->skips_everywhere = true;
	{
		char text[GB_ERROR_TEXT_MAX];

		snprintf(text, sizeof(text), "%.600s (every region tried refused: %s)",
			 first->message, gb_buf_str(&where));
		orch_abort(r, GB_E_AUTH, first->code, text);
	}
	orch_trace(r, "skip", "abort: no region accepted the credentials (%s); a problem of the credentials or the account, nothing remembered",
		   gb_buf_str(&where));
	gb_buf_free(&where);
}

void orch_region_learn(struct orch_run *r)
{
	double now = orch_wall(r->o), hl = r->conf->policy.capacity_half_life;
	gb_error_t e;

	if (r->dry || r->skips_everywhere)
		return;
	for (size_t i = 0; i < r->n_skips; i++) {
		const struct region_skip *s = &r->skips[i];

		if (s->remembered)
			continue;
		if (gb_state_quota_record(r->st, s->region, GB_PLAN_QUOTA_ACCOUNT, s->code, 0,
					  true, now, hl > 0 ? hl : 3600, &e))
			gb_log_warn("quota_record_failed req=%s region=%s error=%s",
				    r->req->id, s->region, e.text);
	}
}

const char *orch_region_code(const struct orch_run *r)
{
	return r->n_skips ? r->skips[0].code : NULL;
}

void orch_region_reason(const struct orch_run *r, bool alone, struct gb_buf *b)
{
	if (!r->n_skips || r->skips_everywhere)
		return;
	if (alone) {
		/* nothing else stopped the request: the skips are the reason
		 * (the first one's code is the result's) */
		gb_buf_printf(b, "region %s skipped: %.80s", r->skips[0].region,
			      r->skips[0].message);
		for (size_t i = 1; i < r->n_skips; i++)
			gb_buf_printf(b, "; %s (Code:%s)", r->skips[i].region,
				      r->skips[i].code);
		return;
	}
	gb_buf_puts(b, "; skipped");
	for (size_t i = 0; i < r->n_skips; i++)
		gb_buf_printf(b, "%s %s (Code:%s)", i ? "," : "", r->skips[i].region,
			      r->skips[i].code);
}
