/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * worker.c - one worker per state directory: lock, drain, re-check
 *
 * The protocol against lost wake-ups is in gb_worker.h.  Threads claim
 * requests themselves (the claim is an atomic UPDATE in the state file);
 * the mutex only guards the in-flight node sets, so that two requests
 * sharing a node never run at the same time.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "gb_hostlist.h"
#include "gb_log.h"
#include "gb_prog.h"
#include "gb_reconcile.h"
#include "gb_util.h"
#include "gb_worker.h"
#include "prog_int.h"

#define STATE_BUSY_MS 10000
#define TERM_KINDS ((1u << GB_REQ_SUSPEND) | (1u << GB_REQ_RESUME_FAIL) | \
		    (1u << GB_REQ_TERMINATE))
#define RESUME_KINDS (1u << GB_REQ_RESUME)
#define ORDER_DELAY 0.5		/* seconds a request waits behind an older one */


/*****************************************************************************
 *  In-flight nodes
 *****************************************************************************/

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Does a node of [t] belong to a request that another thread is running?
 * (mutex held)  Only running threads count: two waiting threads never wait
 * for each other, so there is no deadlock.
 */
static bool conflicts(const struct wthread *t)
{
	const struct worker *w = t->w;

	for (int i = 0; i < w->n_threads; i++) {
		const struct wthread *o = &w->threads[i];

		if (o == t || !o->running)
			continue;
		for (size_t k = 0; k < t->n_busy; k++) {
			if (bsearch(&t->busy[k], o->busy, o->n_busy, sizeof(char *), strp_cmp))
				return true;
		}
	}
	return false;
}

/* Publish [nodes] as this thread's, waiting while another thread has one. */
static gb_err_t acquire_nodes(struct wthread *t, struct gb_strv *nodes)
{
	char **v = malloc((nodes->n ? nodes->n : 1) * sizeof(*v));

	if (!v)
		return GB_E_NOMEM;
	memcpy(v, nodes->v, nodes->n * sizeof(*v));
	qsort(v, nodes->n, sizeof(*v), strp_cmp);
	pthread_mutex_lock(&t->w->mu);
	t->busy = v;
	t->n_busy = nodes->n;
	while (conflicts(t))
		pthread_cond_wait(&t->w->cv, &t->w->mu);
	t->running = true;
	pthread_mutex_unlock(&t->w->mu);
	return GB_E_OK;
}

static void release_nodes(struct wthread *t)
{
	pthread_mutex_lock(&t->w->mu);
	free(t->busy);
	t->busy = NULL;
	t->n_busy = 0;
	t->running = false;
	pthread_cond_broadcast(&t->w->cv);
	pthread_mutex_unlock(&t->w->mu);
}

/*****************************************************************************
 *  Ordering between requests of the same nodes
 *****************************************************************************/

struct order_scan {
	const struct gb_request *req;
	const struct gb_strv *nodes;
	char id[GB_REQUEST_ID_LEN + 1];
	double not_before;
};

static int scan_older(const struct gb_request *r, void *arg)
{
	struct order_scan *os = arg;
	gb_hostlist_t *hl = NULL;
	bool hit = false;

	if (!r->nodes)
		return 0;
	if (gb_hostlist_parse(r->nodes, &hl, NULL))
		return 0;
	for (size_t i = 0; i < os->nodes->n && !hit; i++)
		hit = gb_hostlist_match(hl, os->nodes->v[i]);
	gb_hostlist_destroy(hl);
	if (hit) {
		memcpy(os->id, r->id, sizeof(os->id));
		os->not_before = r->not_before;
		return 1;
	}
	return 0;
}

/*
 * RET whether [req] must wait for an older request of its nodes of the
 * other family (a resume behind a suspend/resume-fail, or the reverse):
 * a queued one its claim overtook (terminations are claimed first, and a
 * backed-off row is not claimable), or a running one another thread
 * claimed just before (both would then race for the nodes in
 * acquire_nodes(), and the newer could win).  Then it is requeued behind
 * it.
 */
static bool wait_for_older(struct wthread *t, const struct gb_request *req,
			   const struct gb_strv *nodes)
{
	struct order_scan os = { req, nodes, "", 0 };
	char why[128];
	double now = gb_time_now(), nb;

	if (gb_state_request_older_active(t->st, req, scan_older, &os, NULL) || !os.id[0])
		return false;
	nb = fmax(now + ORDER_DELAY, os.not_before + 0.1);
	snprintf(why, sizeof(why), "waiting for older request %s of the same nodes", os.id);
	if (gb_state_request_requeue(t->st, req->id, nb, why, NULL))
		return false;
	gb_log_info("request_waits req=%s behind=%s delay_s=%.1f", req->id, os.id, nb - now);
	return true;
}

/*****************************************************************************
 *  One request
 *****************************************************************************/

struct retry_count {
	int n;
};

static int count_retries(const struct gb_event *ev, void *arg)
{
	if (strcmp(ev->kind, "retry") == 0)
		((struct retry_count *)arg)->n++;
	return 0;
}

/* After a failure that may heal: back off, or give up after a few. */
static void retry_or_fail(struct wthread *t, const struct gb_request *req,
			  gb_err_t rc, const gb_error_t *err, struct gb_strv *nodes)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	struct retry_count rcnt = { 0 };
	char reason[GB_REASON_MAX];
	double delay;
	gb_error_t e;

	prog_event_json(t->st, req->id, "retry",
			json_pack("{s:s,s:s}", "error", gb_err_name(rc), "detail", err->text));
	gb_state_event_list(t->st, req->id, count_retries, &rcnt, NULL);
	if (rcnt.n < GB_WORKER_MAX_CLAIMS && rc != GB_E_INVALID) {
		delay = fmin(30.0, pow(2.0, rcnt.n));
		gb_log_warn("request_retry req=%s retries=%d delay_s=%.0f error=%s", req->id,
			    rcnt.n, delay, gb_log_q(lq, sizeof(lq), err->text));
		if (gb_state_request_requeue(t->st, req->id, gb_time_now() + delay,
					     err->text, &e) == GB_E_OK)
			return;
		gb_log_error("request_requeue_failed req=%s error=%s", req->id,
			     gb_log_q(lq, sizeof(lq), e.text));
	}
	gb_log_error("request_failed req=%s kind=%s retries=%d error=%s", req->id,
		     gb_request_kind_name(req->kind), rcnt.n, gb_log_q(lq, sizeof(lq), err->text));
	if (gb_state_request_finish(t->st, req->id, GB_RSTATE_FAILED, GB_RESULT_FAILED, 0,
				    err->text, &e))
		gb_log_error("request_finish_failed req=%s error=%s", req->id,
			     gb_log_q(lq, sizeof(lq), e.text));
	if (req->kind == GB_REQ_RESUME) {
		/* The jobs should not wait for ResumeTimeout. */
		gb_reason_capacity(reason, sizeof(reason), gb_err_name(rc), err->text, req->id);
		prog_slurm_update(t->st, req->id, GB_SLURM_DOWN, nodes->v, NULL, nodes->n,
				  reason);
	}
}

static void run_request(struct wthread *t, const struct gb_request *req)
{
	struct gb_strv nodes = { 0 };
	double t0 = gb_time_mono();
	gb_error_t err = { 0 };
	gb_err_t rc;

	rc = gb_slurm_hostlist_expand(req->nodes, 100000, &nodes, &err);
	if (rc) {
		retry_or_fail(t, req, GB_E_INVALID, &err, &nodes);
		goto out;
	}
	if (wait_for_older(t, req, &nodes))
		goto out;
	if ((rc = acquire_nodes(t, &nodes))) {
		gb_errorf(&err, rc, "out of memory");
		retry_or_fail(t, req, rc, &err, &nodes);
		goto out;
	}
	gb_log_info("request_start req=%s kind=%s nodes=%s count=%zu job=%lld thread=%d",
		    req->id, gb_request_kind_name(req->kind), req->nodes, nodes.n,
		    (long long)req->job_id, t->idx);
	if (req->kind == GB_REQ_RESUME)
		rc = worker_resume(t, req, &nodes, &err);
	else
		rc = worker_term(t, req, &nodes, &err);
	if (rc)
		retry_or_fail(t, req, rc, &err, &nodes);
	release_nodes(t);
	gb_log_info("request_end req=%s kind=%s rc=%s elapsed_ms=%.1f", req->id,
		    gb_request_kind_name(req->kind), gb_err_name(rc),
		    (gb_time_mono() - t0) * 1000.0);
out:
	gb_strv_free(&nodes);
}

static void copy_claimed(const struct gb_request *r, void *arg)
{
	struct prog_req *pr = arg;

	if (prog_req_copy(r, pr))
		pr->r.id[0] = '\0';
}

/* Claim and run requests until none is runnable; terminations first. */
static void *thread_main(void *arg)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	struct wthread *t = arg;
	gb_error_t err;

	for (;;) {
		struct prog_req pr = { 0 };
		gb_err_t rc;

		rc = gb_state_request_claim(t->st, t->w->pid, TERM_KINDS, copy_claimed, &pr, &err);
		if (rc == GB_E_NOTFOUND)
			rc = gb_state_request_claim(t->st, t->w->pid, RESUME_KINDS, copy_claimed,
						    &pr, &err);
		if (rc == GB_E_NOTFOUND)
			break;
		if (rc) {
			gb_log_error("claim_failed thread=%d error=%s", t->idx,
				     gb_log_q(lq, sizeof(lq), err.text));
			break;
		}
		if (!pr.r.id[0]) {
			gb_log_error("claim_copy_failed thread=%d error=\"out of memory\"", t->idx);
			break;
		}
		run_request(t, &pr.r);
		prog_req_free(&pr);
	}
	return NULL;
}

/*****************************************************************************
 *  The loop
 *****************************************************************************/

static int min_not_before(const struct gb_request *r, void *arg)
{
	double *m = arg;

	if (r->not_before < *m)
		*m = r->not_before;
	return 0;
}

/* RET the earliest time a queued request may be claimed (INFINITY: none). */
static double next_due(gb_state_t *st)
{
	struct gb_request_filter f = GB_REQUEST_FILTER_ANY;
	double m = INFINITY;

	f.state = GB_RSTATE_QUEUED;
	if (gb_state_request_list(st, &f, min_not_before, &m, NULL))
		return gb_time_now();	/* cannot tell: look again */
	return m;
}

static gb_err_t open_threads(struct worker *w, int n, gb_error_t *err)
{
	gb_err_t rc;

	w->threads = calloc((size_t)n, sizeof(*w->threads));
	if (!w->threads)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (int i = 0; i < n; i++) {
		w->threads[i].w = w;
		w->threads[i].idx = i;
		rc = gb_state_open(w->state_path, 0, STATE_BUSY_MS, &w->threads[i].st, err);
		if (rc)
			return rc;
		w->n_threads = i + 1;
	}
	return GB_E_OK;
}

static void drain(struct worker *w)
{
	pthread_t *tid = calloc((size_t)w->n_threads, sizeof(*tid));
	int started = 0;

	for (int i = 1; tid && i < w->n_threads; i++) {
		if (pthread_create(&tid[i], NULL, thread_main, &w->threads[i]) != 0)
			break;
		started = i;
	}
	thread_main(&w->threads[0]);
	for (int i = 1; i <= started; i++)
		pthread_join(tid[i], NULL);
	free(tid);
}

/*
 * Before each drain, NOTICE alone: an offering an agent reported (a spot
 * interruption, a failed GPU check) is remembered as dry before the
 * resume that follows its job's requeue is planned.  One Slurm node read;
 * the state file is read only when a node has such a reason.
 */
static void notice_reconcile(struct worker *w)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	struct gb_reconcile_opts ro = { w->conf, w->threads[0].st, NULL, false, true, 0 };
	struct gb_reconcile_report rep = { 0 };
	gb_error_t err;

	ro.only_notice = true;
	if (gb_reconcile_run(&ro, &rep, &err))
		gb_log_warn("reconcile_notice_failed error=%s", gb_log_q(lq, sizeof(lq), err.text));
	else if (rep.n)
		gb_log_info("reconcile_notice actions=%zu failed=%zu", rep.n, rep.failed);
	gb_reconcile_report_clear(&rep);
}

static void cheap_reconcile(struct worker *w)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	struct gb_reconcile_opts ro = { w->conf, w->threads[0].st, NULL, false, true, 0 };
	struct gb_reconcile_report rep = { 0 };
	gb_error_t err;

	ro.lock_wait = -1;	/* another pass at work does the same: no wait */
	if (gb_reconcile_run(&ro, &rep, &err))
		gb_log_warn("reconcile_cheap_failed error=%s", gb_log_q(lq, sizeof(lq), err.text));
	else if (rep.n)
		gb_log_info("reconcile_cheap actions=%zu failed=%zu", rep.n, rep.failed);
	gb_reconcile_report_clear(&rep);
}

/*
 * The programs write requests without their request_nodes rows (one index
 * page per node: too slow for their fast path); the worker they start
 * adds them.  A week back covers any worker that was not started.
 */
static void index_nodes(gb_state_t *st)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	gb_error_t err;
	int n = 0;

	if (gb_state_request_index_nodes(st, gb_time_now() - GB_PROG_INDEX_BACK, &n, &err))
		gb_log_error("index_nodes_failed error=%s", gb_log_q(lq, sizeof(lq), err.text));
	else if (n)
		gb_log_debug("indexed_request_nodes requests=%d", n);
}

/* Work while holding the lock; RET when nothing is due soon. */
static void work(struct worker *w)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	gb_state_t *st = w->threads[0].st;
	gb_error_t err;
	int stale = 0;

	if (gb_state_request_requeue_stale(st, &stale, &err))
		gb_log_error("requeue_stale_failed error=%s", gb_log_q(lq, sizeof(lq), err.text));
	else if (stale)
		gb_log_warn("requeued_stale count=%d note=\"a worker died while running them\"",
			    stale);
	for (;;) {
		double due, now;

		index_nodes(st);
		notice_reconcile(w);
		drain(w);
		cheap_reconcile(w);
		due = next_due(st);
		now = gb_time_now();
		if (due <= now)
			continue;
		if (due - now > GB_WORKER_WAIT_MAX)
			return;
		gb_time_sleep(due - now);
	}
}

/* slurm.conf's ResumeTimeouts, read once per worker (well under 1 ms). */
static void read_slurmconf(struct worker *w)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	gb_error_t e = { 0 };

	w->have_sc = gb_slurmconf_read(gb_slurmconf_path(true), &w->sc, &e) == GB_E_OK;
	if (!w->have_sc) {
		gb_log_warn("slurm_conf_unreadable error=%s resume_timeout=default",
			    gb_log_q(lq, sizeof(lq), e.text));
		gb_slurmconf_clear(&w->sc);
	}
}

static gb_err_t worker_init(struct worker *w, const struct gb_worker_opts *o,
			    gb_error_t *err)
{
	struct gb_orch_opts oo = { 0 };
	gb_err_t rc;

	w->conf = o->conf;
	w->pid = (int64_t)getpid();
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	gb_prog_state_path(o->conf, w->state_path, sizeof(w->state_path));
	if ((rc = open_threads(w, o->threads > 0 ? o->threads : GB_WORKER_THREADS, err)))
		return rc;
	read_slurmconf(w);
	oo.conf = o->conf;
	oo.state_path = w->state_path;
	return gb_orch_create(&oo, &w->orch, err);
}

static void worker_fini(struct worker *w)
{
	for (int i = 0; i < w->n_threads; i++)
		gb_state_close(w->threads[i].st);
	free(w->threads);
	gb_orch_destroy(w->orch);
	gb_slurmconf_clear(&w->sc);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
}

gb_err_t gb_worker_run(const struct gb_worker_opts *o, gb_error_t *err)
{
	struct worker w = { 0 };
	char lock_path[4096];
	double t0 = gb_time_mono();
	int fd = -1, rounds = 0;
	gb_err_t rc;

	gb_prog_lock_path(o->conf, lock_path, sizeof(lock_path));
	if ((rc = gb_mkdir_p(o->conf->state_dir, 0750, err)))
		return rc;
	fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0)
		return gb_errorf(err, GB_E_IO, "open %s: %s", lock_path, strerror(errno));
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			if (errno != EWOULDBLOCK && errno != EINTR)
				rc = gb_errorf(err, GB_E_IO, "flock %s: %s", lock_path,
					       strerror(errno));
			else
				gb_log_debug("worker_lock_busy note=\"another worker runs\"");
			break;
		}
		/* The state file and Slurm after the lock: a worker that only
		 * finds it taken opens nothing (its closing connections would
		 * checkpoint the file under the worker that runs). */
		if (rounds++ == 0 && ((rc = worker_init(&w, o, err)) ||
				      (rc = gb_slurm_init(err)))) {
			flock(fd, LOCK_UN);
			break;
		}
		work(&w);
		flock(fd, LOCK_UN);
		/* A program may have enqueued while we held the lock and seen it
		 * taken: its rows are committed now, so this sees them. */
		if (next_due(w.threads[0].st) > gb_time_now())
			break;
	}
	gb_log_info("worker_exit rounds=%d elapsed_s=%.2f", rounds, gb_time_mono() - t0);
	if (rounds > 0)
		worker_fini(&w);
	close(fd);
	return rc;
}
