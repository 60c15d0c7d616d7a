/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_outcome.c - what a RunInstances answer means: the one rule table
 *
 * DESIGN.md's rule "CAPACITY/QUOTA -> next pool or region, THROTTLE ->
 * back off, CONFIG/AUTH -> abort" lives here and only here: every
 * strategy reads the table below; probe_fill overrides two rows of it
 * (doc/orchestrator.md, "Outcomes").
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gb_log.h"
#include "orch_int.h"

/*
 * One row per outcome: what the run leaves for the rest of the request,
 * the word the exclusion carries (pool "why", traces), whether the pool
 * backs off, whether the request stops, and whether leaving a region
 * writes a trace line here (REGION's "skip" line is orch_region_refused's).
 */
static const struct orch_rule rules[CALL__COUNT] = {
	[CALL_OK] = { ORCH_SCOPE_NONE, "ok", false, false, false },
	[CALL_ICE] = { ORCH_SCOPE_AZ, "dry", false, false, false },
	[CALL_ADDRESSES] = { ORCH_SCOPE_SUBNET, "addresses", false, false, false },
	[CALL_UNSUPPORTED] = { ORCH_SCOPE_AZ, "unsupported", false, false, false },
	/* the region's pools that count against the same quotas */
	[CALL_QUOTA] = { ORCH_SCOPE_QUOTA, "quota", false, false, true },
	/* past tuning.throttle_limit throttled calls in a row: the subnet */
	[CALL_THROTTLE] = { ORCH_SCOPE_SUBNET, "throttled", true, false, false },
	[CALL_ABORT] = { ORCH_SCOPE_NONE, "abort", false, true, false },
	/* orch_region_refused() skipped the region when it was noted */
	[CALL_REGION] = { ORCH_SCOPE_REGION, "skip", false, false, false },
	/* the instances may exist: not this subnet again in this run */
	[CALL_UNKNOWN] = { ORCH_SCOPE_SUBNET, "unknown outcome", false, false, false },
};

const struct orch_rule *orch_rule(enum call_outcome oc)
{
	return &rules[(unsigned)oc < CALL__COUNT ? oc : CALL_ABORT];
}

static bool transport_failure(const struct orch_job *j)
{
	return j->rc == GB_E_TIMEOUT || j->rc == GB_E_HTTP;
}

enum call_outcome orch_call_outcome(const struct orch_call *c)
{
	const struct orch_job *j = &c->job;

	if (j->rc == GB_E_OK)
		return j->instances && j->instances->n > 0 ? CALL_OK : CALL_ICE;
	if (transport_failure(j) && j->ae.http_status == 0)
		return j->ae.cls == GB_EC2_CLASS_TRANSIENT ? CALL_UNKNOWN : CALL_ABORT;
	switch (j->ae.cls) {
	case GB_EC2_CLASS_CAPACITY:
		return CALL_ICE;
	case GB_EC2_CLASS_ADDRESSES:
		return CALL_ADDRESSES;
	case GB_EC2_CLASS_UNSUPPORTED:
		return CALL_UNSUPPORTED;
	case GB_EC2_CLASS_QUOTA:
		return CALL_QUOTA;
	case GB_EC2_CLASS_THROTTLE:
	case GB_EC2_CLASS_TRANSIENT:
		return CALL_THROTTLE;
	case GB_EC2_CLASS_REGION:
		return CALL_REGION;
	default:
		return CALL_ABORT;
	}
}

double orch_backoff(const struct orch_run *r, int k)
{
	double d = r->o->tuning.backoff_first * pow(2, k);

	return d > r->o->tuning.backoff_max ? r->o->tuning.backoff_max : d;
}

bool orch_throttled_out(struct orch_run *r, size_t pool)
{
	return ++r->pr[pool].throttled > r->o->tuning.throttle_limit;
}

void orch_outcome_exclude(struct orch_run *r, const struct orch_call *c,
			  const char *word)
{
	enum call_outcome oc = orch_call_outcome(c);
	const struct orch_rule *rule = orch_rule(oc);
	const struct gb_pool *p = &r->facts.pools[c->pool];

	if (!word)
		word = rule->word;
	if (rule->backoff && !orch_throttled_out(r, c->pool))
		return;
	switch (rule->scope) {
	case ORCH_SCOPE_SUBNET:
		orch_exclude_subnet(r, c->pool, word);
		break;
	case ORCH_SCOPE_AZ:	/* the AZ's capacity of the pool's type */
		orch_exclude_capacity(r, c->pool, word);
		break;
	case ORCH_SCOPE_QUOTA:
		orch_exclude_quota(r, c->pool, word);
		if (rule->trace)
			orch_trace(r, word, "region=%s capacity=%s excluded for this run",
				   p->region, gb_conf_capacity_name(p->capacity));
		break;
	case ORCH_SCOPE_REGION:
		orch_exclude_region(r, p->region, word);	/* once: a no-op after */
		if (rule->trace)
			orch_trace(r, word, "region=%s excluded for this run", p->region);
		break;
	case ORCH_SCOPE_NONE:
		break;
	}
}

/* The run's account of why it may stop short (the result's code and cause). */
void orch_outcome_note(struct orch_run *r, const struct orch_call *c)
{
	const struct orch_job *j = &c->job;
	enum call_outcome oc = orch_call_outcome(c);

	switch (oc) {
	case CALL_ICE:
	case CALL_ADDRESSES:
		r->saw_capacity = true;
		gb_strlcpy(r->last_code, j->ae.code[0] ? j->ae.code : GB_EC2_CODE_ICE,
			   sizeof(r->last_code));
		break;
	case CALL_UNSUPPORTED:
		r->saw_offer_no = true;
		break;
	case CALL_QUOTA:
		r->saw_quota = true;
		gb_strlcpy(r->quota_code, j->ae.code, sizeof(r->quota_code));
		break;
	case CALL_THROTTLE:
		r->saw_throttle = true;
		break;
	case CALL_REGION:
		orch_region_refused(r, r->facts.pools[c->pool].region, j);
		break;
	case CALL_ABORT:
		if (c->recovered && j->ae.cls == GB_EC2_CLASS_IDEMPOTENT)
			break;	/* an old attempt, not this request's fault */
		orch_abort(r, j->ae.cls == GB_EC2_CLASS_AUTH ? GB_E_AUTH : GB_E_CLOUDCONFIG,
			   j->ae.code[0] ? j->ae.code : gb_ec2_class_name(j->ae.cls),
			   j->ae.message[0] ? j->ae.message : j->err.text);
		break;
	case CALL_OK:
	case CALL_UNKNOWN:
	case CALL__COUNT:
		break;
	}
}

/* What one call's outcome means for its pool (all but probe_fill). */
void orch_judge_pool(struct orch_run *r, struct orch_call *c, bool aon)
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
			orch_exclude_capacity(r, c->pool, "dry");
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
				if (orch_same_capacity(r, i, c->pool))
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

int orch_call_got(const struct orch_call *c)
{
	return c->job.rc == GB_E_OK && c->job.instances ?
	       (int)c->job.instances->n : 0;
}
