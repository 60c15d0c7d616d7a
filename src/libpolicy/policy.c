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
	case GB_POLICY_RULE_BUDGET:
		return "budget";
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

/* Half of the ResumeTimeout of [nodeset]'s partition (or the global one). */
static double half_resume_timeout(const struct gb_conf *conf, bool use_conf,
				  const struct gb_slurmconf *sc, const char *nodeset)
{
	const struct gb_conf_nodeset *ns = nodeset ? gb_conf_nodeset(conf, nodeset)
						   : NULL;
	const struct gb_slurmconf_partition *p =
		sc && ns ? gb_slurmconf_partition(sc, ns->partition) : NULL;

	return gb_policy_approval_timeout(use_conf ? conf : NULL,
					  sc ? sc->resume_timeout : -1,
					  p ? p->resume_timeout : -1);
}

double gb_policy_timeout_for(const struct gb_conf *conf,
			     const struct gb_slurmconf *sc,
			     const char *nodeset)
{
	return half_resume_timeout(conf, true, sc, nodeset);
}

double gb_policy_reprobe_window(const struct gb_conf *conf,
				const struct gb_slurmconf *sc,
				const char *nodeset)
{
	double w = conf->policy.reprobe_window >= 0 ? conf->policy.reprobe_window :
		   half_resume_timeout(conf, false, sc, nodeset);

	/* reconcile fails a request queued past the deadline as stuck */
	return w < conf->policy.request_deadline ? w : conf->policy.request_deadline;
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

/*
 * One Slurm call's resume requests are judged job by job: each job's
 * requests (and its earlier ones) are expanded once, whatever the number
 * of jobs and requests, so a call costs O(n log n) in nodes and jobs.
 */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The node lists of earlier resume requests of the call's jobs (copied). */
struct earlier_row {
	int64_t job_id;
	char *nodes;
};

struct earlier {
	const int64_t *jobs;		/* the call's jobs, sorted, unique */
	size_t n_jobs;
	struct earlier_row *v;		/* by job, as listed */
	size_t n, cap;
	bool oom;
};

/* gb_state_job_node_lists: the rows come by job, each list once. */
static int earlier_cb(int64_t job_id, const char *nodes, void *arg)
{
	struct earlier *e = arg;

	if (!bsearch(&job_id, e->jobs, e->n_jobs, sizeof(*e->jobs), cmp_i64))
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
	e->v[e->n].job_id = job_id;
	if (!(e->v[e->n].nodes = strdup(nodes))) {
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

/* The first earlier row of [job] (e->v sorted), or e->n. */
static size_t earlier_first(const struct earlier *e, int64_t job)
{
	size_t lo = 0, hi = e->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->v[mid].job_id < job)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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

/*
 * Distinct nodes of the job of the call's requests reqs[idx[0..k)] (one
 * job) over them and its earlier requests; when a node list does not
 * expand, the sum of the requests' node counts.
 */
static int count_job(const struct gb_request *reqs, const size_t *idx, size_t k,
		     const struct earlier *e)
{
	int64_t job = reqs[idx[0]].job_id;
	struct gb_strv names = { 0 };
	long fallback = 0;
	bool exact = true;
	size_t u;

	for (size_t i = 0; i < k; i++) {
		fallback += reqs[idx[i]].node_count;
		exact = policy_add_hosts(&names, reqs[idx[i]].nodes) && exact;
	}
	for (size_t i = earlier_first(e, job); i < e->n && e->v[i].job_id == job; i++)
		exact = policy_add_hosts(&names, e->v[i].nodes) && exact;
	u = count_unique(&names);
	gb_strv_free(&names);
	if (exact)
		return (int)u;
	return (int)(fallback > INT32_MAX ? INT32_MAX : fallback);
}

/* The call's resume requests of a job, by job (then by place in the call). */
struct by_job {
	const struct gb_request *reqs;
	size_t *idx;			/* NEW: indexes into reqs */
	size_t n;
	int64_t *jobs;			/* NEW: sorted, unique */
	size_t n_jobs;
};

struct job_ref {
	int64_t job_id;
	size_t i;
};

static int cmp_ref(const void *a, const void *b)
{
	const struct job_ref *x = a, *y = b;
	int c = cmp_i64(&x->job_id, &y->job_id);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

static bool by_job_make(struct by_job *g, const struct gb_request *reqs, size_t n)
{
	struct job_ref *refs;

	memset(g, 0, sizeof(*g));
	g->reqs = reqs;
	if (!n)
		return true;
	refs = malloc(n * sizeof(*refs));
	g->idx = malloc(n * sizeof(*g->idx));
	g->jobs = malloc(n * sizeof(*g->jobs));
	if (!refs || !g->idx || !g->jobs) {
		free(refs);
		return false;
	}
	for (size_t i = 0; i < n; i++)
		if (reqs[i].kind == GB_REQ_RESUME && reqs[i].job_id)
			refs[g->n++] = (struct job_ref){ reqs[i].job_id, i };
	qsort(refs, g->n, sizeof(*refs), cmp_ref);
	for (size_t i = 0; i < g->n; i++) {
		g->idx[i] = refs[i].i;
		if (i == 0 || refs[i].job_id != refs[i - 1].job_id)
			g->jobs[g->n_jobs++] = refs[i].job_id;
	}
	free(refs);
	return true;
}

static void by_job_free(struct by_job *g)
{
	free(g->idx);
	free(g->jobs);
}

/* The end of the group of one job starting at g->idx[a]. */
static size_t group_end(const struct by_job *g, size_t a)
{
	size_t b = a + 1;

	while (b < g->n && g->reqs[g->idx[b]].job_id == g->reqs[g->idx[a]].job_id)
		b++;
	return b;
}

/* One job's verdicts, its requests being reqs[g->idx[a..b)]. */
static gb_err_t judge_job(const struct gb_conf *conf, gb_state_t *st, const struct by_job *g,
			  size_t a, size_t b, const struct earlier *e,
			  struct gb_policy_verdict *v, gb_error_t *err)
{
	const struct gb_request *reqs = g->reqs;
	int64_t job = reqs[g->idx[a]].job_id;
	int counted = count_job(reqs, g->idx + a, b - a, e);
	const struct gb_policy_verdict *gated = NULL;
	bool sized = false, approved = false;
	gb_err_t rc;

	for (size_t i = a; i < b; i++) {
		gb_policy_judge(conf, job, counted, &v[g->idx[i]]);
		sized = sized || v[g->idx[i]].rule == GB_POLICY_RULE_SIZE;
	}
	/* A job approved when it was held at submit is not asked again. */
	if (st && sized) {
		if ((rc = gb_policy_job_approved(st, job, &approved, err)))
			return rc;
		for (size_t i = a; approved && i < b; i++)
			if (v[g->idx[i]].rule == GB_POLICY_RULE_SIZE)
				memset(&v[g->idx[i]], 0, sizeof(v[g->idx[i]]));
	}
	/* Never half a job: one gated request gates the job's others. */
	for (size_t i = a; i < b && !gated; i++)
		if (v[g->idx[i]].needs_approval)
			gated = &v[g->idx[i]];
	for (size_t i = a; gated && i < b; i++)
		if (!v[g->idx[i]].needs_approval)
			v[g->idx[i]] = *gated;
	return GB_E_OK;
}

gb_err_t gb_policy_gate(const struct gb_conf *conf, gb_state_t *st,
			struct gb_request *reqs, size_t n, double now,
			const struct gb_slurmconf *sc,
			struct gb_policy_verdict *v, gb_error_t *err)
{
	struct earlier e = { 0 };
	struct by_job g;
	gb_err_t rc = GB_E_OK;

	if (!by_job_make(&g, reqs, n)) {
		rc = gb_errorf(err, GB_E_NOMEM, "approval policy: out of memory");
		goto out;
	}
	e.jobs = g.jobs;
	e.n_jobs = g.n_jobs;
	if (st && g.n_jobs) {
		/* by job already, and identical lists of a job once: a job
		 * resumed again costs its distinct lists, not its history */
		rc = gb_state_job_node_lists(st, g.jobs[0], g.jobs[g.n_jobs - 1],
					     now - count_window(sc), earlier_cb, &e, err);
		if (rc == GB_E_OK && e.oom)
			rc = gb_errorf(err, GB_E_NOMEM, "approval policy: out of memory");
		if (rc)
			goto out;
	}
	/* the requests of no job count their own nodes */
	for (size_t i = 0; i < n; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		if (reqs[i].kind == GB_REQ_RESUME && !reqs[i].job_id)
			gb_policy_judge(conf, 0, reqs[i].node_count, &v[i]);
	}
	for (size_t a = 0, b; a < g.n; a = b) {
		b = group_end(&g, a);
		if ((rc = judge_job(conf, st, &g, a, b, &e, v, err)))
			goto out;
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
	by_job_free(&g);
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
