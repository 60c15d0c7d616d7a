/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy.c - which resume requests need approval, and recording that they do
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_hostlist.h"
#include "gb_log.h"
#include "gb_policy.h"
#include "gb_util.h"
#include "policy_int.h"

/*****************************************************************************
 *  Rules
 *****************************************************************************/

const char *gb_policy_rule_name(enum gb_policy_rule r)
{
	switch (r) {
	case GB_POLICY_RULE_NONE:
		return "none";
	case GB_POLICY_RULE_SIZE:
		return "size";
	case GB_POLICY_RULE_MANUAL:
		return "manual";
	case GB_POLICY_RULE_GEO:
		return "geo";
	}
	return "invalid";
}

void gb_policy_judge(const struct gb_conf *conf, int64_t job_id, int counted,
		     struct gb_policy_verdict *v)
{
	const char *env = gb_conf_env_name(conf->environment);

	memset(v, 0, sizeof(*v));
	v->counted = counted;
	v->threshold = gb_conf_threshold(conf);
	/* the ancestor's ApprovalHook: target_count > batch_threshold */
	if (counted > v->threshold) {
		v->needs_approval = true;
		v->rule = GB_POLICY_RULE_SIZE;
		if (job_id)
			snprintf(v->why, sizeof(v->why),
				 "%d nodes for job %lld > %s threshold %d",
				 counted, (long long)job_id, env, v->threshold);
		else
			snprintf(v->why, sizeof(v->why),
				 "manual power-up of %d nodes > %s threshold %d",
				 counted, env, v->threshold);
	} else if (!job_id && conf->policy.manual_resume_needs_approval) {
		v->needs_approval = true;
		v->rule = GB_POLICY_RULE_MANUAL;
		snprintf(v->why, sizeof(v->why),
			 "manual power-up of %d node%s (policy.manual_resume_needs_approval)",
			 counted, counted == 1 ? "" : "s");
	}
}

static bool geo_allowed(const struct gb_conf *conf, const char *region)
{
	for (size_t i = 0; i < conf->policy.n_allowed_geo_regions; i++)
		if (strcmp(conf->policy.allowed_geo_regions[i], region) == 0)
			return true;
	return false;
}

bool gb_policy_geo(const struct gb_conf *conf, const char *const *regions,
		   size_t n, struct gb_policy_verdict *v)
{
	struct gb_buf outside = GB_BUF_INIT, allowed = GB_BUF_INIT;
	size_t n_out = 0;

	if (v)
		memset(v, 0, sizeof(*v));
	if (conf->policy.n_allowed_geo_regions == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool dup = false;

		if (!regions[i] || geo_allowed(conf, regions[i]))
			continue;
		for (size_t j = 0; j < i && !dup; j++)
			dup = regions[j] && strcmp(regions[i], regions[j]) == 0;
		if (dup)
			continue;
		gb_buf_printf(&outside, "%s%s", n_out ? ", " : "", regions[i]);
		n_out++;
	}
	if (n_out && v) {
		for (size_t i = 0; i < conf->policy.n_allowed_geo_regions; i++)
			gb_buf_printf(&allowed, "%s%s", i ? ", " : "",
				      conf->policy.allowed_geo_regions[i]);
		v->needs_approval = true;
		v->rule = GB_POLICY_RULE_GEO;
		v->threshold = gb_conf_threshold(conf);
		snprintf(v->why, sizeof(v->why),
			 "plan uses %s outside allowed_geo_regions [%s]",
			 gb_buf_str(&outside), gb_buf_str(&allowed));
	}
	gb_buf_free(&outside);
	gb_buf_free(&allowed);
	return n_out > 0;
}

double gb_policy_approval_timeout(const struct gb_conf *conf,
				  double resume_timeout,
				  double partition_timeout)
{
	double rt = resume_timeout > 0 ? resume_timeout : 60.0;

	if (conf && conf->policy.approval_timeout > 0)
		return conf->policy.approval_timeout;
	if (partition_timeout > 0 && partition_timeout < rt)
		rt = partition_timeout;
	/* The first half waits for a decision, the second launches and boots. */
	return rt / 2 >= 1 ? (double)(long)(rt / 2) : 1;
}

double gb_policy_timeout_for(const struct gb_conf *conf,
			     const struct gb_slurmconf *sc,
			     const char *nodeset)
{
	const struct gb_conf_nodeset *ns = nodeset ? gb_conf_nodeset(conf, nodeset)
						   : NULL;
	const struct gb_slurmconf_partition *p =
		sc && ns ? gb_slurmconf_partition(sc, ns->partition) : NULL;

	return gb_policy_approval_timeout(conf, sc ? sc->resume_timeout : -1,
					  p ? p->resume_timeout : -1);
}

/* How far back a job's earlier requests count: its longest ResumeTimeout. */
static double count_window(const struct gb_slurmconf *sc)
{
	double w = sc && sc->resume_timeout > 0 ? sc->resume_timeout
					       : GB_SLURM_DEFAULT_RESUME_TIMEOUT;

	for (size_t i = 0; sc && i < sc->n_partitions; i++)
		if (sc->partitions[i].resume_timeout > w)
			w = sc->partitions[i].resume_timeout;
	return w;
}

/*****************************************************************************
 *  Counting one Slurm call's requests
 *****************************************************************************/

/* Earlier resume requests of the call's jobs (copied: rows are borrowed). */
struct earlier {
	const struct gb_request *call;	/* the call's requests */
	size_t n_call;
	struct {
		int64_t job_id;
		char *nodes;
	} *v;
	size_t n, cap;
	bool oom;
};

static bool counts_for_job(enum gb_request_state s)
{
	return s == GB_RSTATE_PENDING_APPROVAL || s == GB_RSTATE_QUEUED ||
	       s == GB_RSTATE_RUNNING || s == GB_RSTATE_DONE;
}

static int earlier_cb(const struct gb_request *r, void *arg)
{
	struct earlier *e = arg;
	bool ours = false;

	if (!r->job_id || !counts_for_job(r->state) || !r->nodes)
		return 0;
	for (size_t i = 0; i < e->n_call && !ours; i++)
		ours = e->call[i].job_id == r->job_id;
	if (!ours)
		return 0;
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 8;
		void *grown = realloc(e->v, cap * sizeof(*e->v));

		if (!grown) {
			e->oom = true;
			return 1;
		}
		e->v = grown;
		e->cap = cap;
	}
	e->v[e->n].job_id = r->job_id;
	if (!(e->v[e->n].nodes = strdup(r->nodes))) {
		e->oom = true;
		return 1;
	}
	e->n++;
	return 0;
}

static void earlier_free(struct earlier *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->v[i].nodes);
	free(e->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool policy_add_hosts(struct gb_strv *names, const char *expr)
{
	gb_hostlist_t *hl = NULL;
	bool ok;

	if (!expr || gb_hostlist_parse(expr, &hl, NULL))
		return false;
	ok = gb_hostlist_expand(hl, GB_POLICY_MAX_NODES, names, NULL) == GB_E_OK;
	gb_hostlist_destroy(hl);
	return ok;
}

static size_t count_unique(struct gb_strv *names)
{
	size_t u = 0;

	if (names->n == 0)
		return 0;
	qsort(names->v, names->n, sizeof(*names->v), cmp_str);
	for (size_t i = 0; i < names->n; i++)
		if (i == 0 || strcmp(names->v[i], names->v[i - 1]) != 0)
			u++;
	return u;
}

/* Distinct nodes of job [job] over this call and its earlier requests. */
static gb_err_t count_job(const struct gb_request *reqs, size_t n,
			  const struct earlier *e, int64_t job, int *out,
			  gb_error_t *err)
{
	struct gb_strv names = { 0 };
	long fallback = 0;
	bool exact = true;

	for (size_t i = 0; i < n; i++) {
		if (reqs[i].job_id != job || reqs[i].kind != GB_REQ_RESUME)
			continue;
		fallback += reqs[i].node_count;
		exact = policy_add_hosts(&names, reqs[i].nodes) && exact;
	}
	for (size_t i = 0; e && i < e->n; i++) {
		if (e->v[i].job_id != job)
			continue;
		exact = policy_add_hosts(&names, e->v[i].nodes) && exact;
	}
	if (exact)
		*out = (int)count_unique(&names);
	else
		*out = (int)(fallback > INT32_MAX ? INT32_MAX : fallback);
	gb_strv_free(&names);
	(void)err;
	return GB_E_OK;
}

gb_err_t gb_policy_gate(const struct gb_conf *conf, gb_state_t *st,
			struct gb_request *reqs, size_t n, double now,
			const struct gb_slurmconf *sc,
			struct gb_policy_verdict *v, gb_error_t *err)
{
	struct earlier e = { reqs, n, NULL, 0, 0, false };
	struct gb_request_filter f = GB_REQUEST_FILTER_ANY;
	gb_err_t rc = GB_E_OK;

	if (st) {
		f.kind = GB_REQ_RESUME;
		f.since = now - count_window(sc);
		rc = gb_state_request_list(st, &f, earlier_cb, &e, err);
		if (rc == GB_E_OK && e.oom)
			rc = gb_errorf(err, GB_E_NOMEM, "approval policy: out of memory");
		if (rc)
			goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct gb_request *r = &reqs[i];
		int counted = r->node_count;

		memset(&v[i], 0, sizeof(v[i]));
		if (r->kind != GB_REQ_RESUME)
			continue;
		if (r->job_id && (rc = count_job(reqs, n, &e, r->job_id,
						 &counted, err)))
			goto out;
		gb_policy_judge(conf, r->job_id, counted, &v[i]);
	}
	/* A job approved when it was held at submit is not asked again. */
	for (size_t i = 0; st && i < n; i++) {
		bool approved = false;

		if (reqs[i].kind != GB_REQ_RESUME || !reqs[i].job_id ||
		    v[i].rule != GB_POLICY_RULE_SIZE)
			continue;
		if ((rc = gb_policy_job_approved(st, reqs[i].job_id, &approved, err)))
			goto out;
		if (approved)
			memset(&v[i], 0, sizeof(v[i]));
	}
	/* Never half a job: one gated request gates the job's others. */
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; reqs[i].job_id && j < n; j++)
			if (j != i && reqs[j].job_id == reqs[i].job_id &&
			    v[j].needs_approval && !v[i].needs_approval)
				v[i] = v[j];
	}
	for (size_t i = 0; i < n; i++) {
		struct gb_request *r = &reqs[i];

		if (r->kind != GB_REQ_RESUME)
			continue;
		if (v[i].needs_approval) {
			r->state = GB_RSTATE_PENDING_APPROVAL;
			r->expires_at = (r->created_at > 0 ? r->created_at : now) +
					gb_policy_timeout_for(conf, sc, r->nodeset);
		} else {
			r->state = GB_RSTATE_QUEUED;
			r->expires_at = 0;
		}
	}
out:
	earlier_free(&e);
	return rc;
}

/*****************************************************************************
 *  Recording
 *****************************************************************************/

static gb_err_t record(gb_state_t *st, const struct gb_request *req,
		       const struct gb_policy_verdict *v, double expires_at,
		       gb_error_t *err)
{
	struct gb_approval a = {
		.request_id = req->id,
		.state = GB_APPROVAL_PENDING,
		.why = v->why,
		.requested_at = req->created_at,
		.expires_at = expires_at,
		.decided_uid = -1,
	};
	char detail[GB_POLICY_WHY_MAX + 200], iso[32], q[GB_POLICY_WHY_MAX + 16];
	gb_err_t rc;

	rc = gb_state_approval_add(st, &a, err);
	if (rc)
		return rc;
	gb_time_iso(expires_at, iso, sizeof(iso));
	snprintf(detail, sizeof(detail),
		 "rule=%s counted=%d threshold=%d expires=%s why=%s",
		 gb_policy_rule_name(v->rule), v->counted, v->threshold, iso,
		 gb_log_q(q, sizeof(q), v->why));
	rc = gb_state_event_add(st, req->id, "approval_needed", detail, err);
	if (rc)
		return rc;
	gb_log_notice("approval_needed req=%s nodes=%s job=%lld %s", req->id,
		      req->nodes ? req->nodes : "-", (long long)req->job_id,
		      detail);
	return GB_E_OK;
}

gb_err_t gb_policy_record(gb_state_t *st, const struct gb_request *req,
			  const struct gb_policy_verdict *v, gb_error_t *err)
{
	return record(st, req, v, req->expires_at, err);
}

struct approval_state {
	bool found;
	enum gb_approval_state state;
};

static void approval_cb(const struct gb_approval *a, void *arg)
{
	struct approval_state *s = arg;

	s->found = true;
	s->state = a->state;
}

gb_err_t gb_policy_geo_gate(const struct gb_conf *conf, gb_state_t *st,
			    const struct gb_request *req,
			    const char *const *regions, size_t n,
			    const struct gb_slurmconf *sc,
			    struct gb_policy_verdict *v, gb_error_t *err)
{
	struct gb_policy_verdict local;
	struct approval_state as = { false, GB_APPROVAL_PENDING };
	double expires;
	gb_err_t rc;

	if (!v)
		v = &local;
	memset(v, 0, sizeof(*v));
	rc = gb_state_approval_get(st, req->id, approval_cb, &as, err);
	if (rc && rc != GB_E_NOTFOUND)
		return rc;
	if (as.found && as.state == GB_APPROVAL_APPROVED)
		return GB_E_OK;
	if (!gb_policy_geo(conf, regions, n, v))
		return GB_E_OK;
	/* Slurm's ResumeTimeout runs from the power-up, not from this plan. */
	expires = (req->created_at > 0 ? req->created_at : gb_time_now()) +
		  gb_policy_timeout_for(conf, sc, req->nodeset);
	rc = gb_state_tx_begin(st, err);
	if (rc)
		return rc;
	rc = gb_state_request_transition(st, req->id, GB_RSTATE_RUNNING,
					 GB_RSTATE_PENDING_APPROVAL, v->why, err);
	if (rc == GB_E_OK)
		rc = record(st, req, v, expires, err);
	if (rc == GB_E_OK)
		rc = gb_state_tx_commit(st, err);
	if (rc) {
		gb_state_tx_rollback(st);
		return rc;
	}
	return GB_E_PENDING;
}
