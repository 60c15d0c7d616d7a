/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_pool.c - worker threads that send the cloud calls of every request
 *
 * One set of threads per orchestrator (gb_orch_t), made at its first run
 * and shared by the requests it runs at once and after: no thread is made
 * per request, and the number of calls in flight for all of them is the
 * number of threads.  A gb_ec2_t owns one HTTP connection and is not
 * thread-safe, so each worker keeps its own client per region, created on
 * first use and kept (keep-alive across waves and requests).  Workers
 * never touch the state file: they send one call and store EC2's answer in
 * the job.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "orch_int.h"

struct worker {
	struct orch_workers *ws;
	pthread_t tid;
	bool started;
	gb_ec2_t **clients;	/* one per configured region, lazily */
};

/*
 * The threads every request of one orchestrator sends its calls through
 * (gb_orch_t.workers, made at the first run): jobs wait in [queue] (FIFO,
 * whoever queued them) for a worker.  Each run sees them through its own
 * struct orch_pool; a finished job is flagged (job->done, under the mutex)
 * and, when it was submitted on its own (orch_pool_submit), also put on its
 * run's [finished] for orch_pool_collect().
 */
struct orch_workers {
	gb_orch_t *o;
	pthread_mutex_t mu;
	pthread_cond_t work;
	struct orch_job **queue;
	size_t head, len, cap;
	bool stop;
	struct worker *w;
	int n;
};

/* One run's view of the workers: its jobs, answered. */
struct orch_pool {
	struct orch_workers *ws;
	pthread_cond_t done;	/* with ws->mu: a job of this run finished */
	struct orch_job **finished;
	size_t n_finished, cap_finished;
	size_t async;		/* submitted jobs not yet collected */
	size_t pending;		/* jobs queued or running */
};

void orch_job_clear(struct orch_job *j)
{
	gb_ec2_instance_list_free(j->instances);
	gb_ec2_state_change_list_free(j->changes);
	gb_ec2_offering_list_free(j->offerings);
	gb_ec2_capacity_reservation_list_free(j->reservations);
	j->instances = NULL;
	j->changes = NULL;
	j->offerings = NULL;
	j->reservations = NULL;
}

static gb_ec2_t *client(struct worker *w, const char *region,
			gb_error_t *err, gb_err_t *rc)
{
	const struct gb_conf *conf = w->ws->o->conf;

	for (size_t i = 0; i < conf->n_regions; i++) {
		if (strcmp(conf->regions[i].name, region))
			continue;
		if (!w->clients[i])
			*rc = orch_ec2_new(w->ws->o, region, &w->clients[i], err);
		return w->clients[i];
	}
	*rc = gb_errorf(err, GB_E_INVALID, "region %s is not configured", region);
	return NULL;
}

static void describe(gb_ec2_t *c, struct orch_job *j)
{
	j->rc = gb_ec2_describe_instances(c, j->describe, &j->instances, &j->ae,
					  &j->err);
}

static void reservations(gb_ec2_t *c, struct orch_job *j)
{
	static const char *const states[] = { "active", "scheduled" };
	struct gb_ec2_filter f[2] = {
		{ "instance-type", j->types, j->n_types },
		{ "state", states, 2 },
	};
	struct gb_ec2_capacity_reservations_params p = { NULL, 0, f, 2, 0 };

	j->rc = gb_ec2_describe_capacity_reservations(c, &p, &j->reservations, &j->ae,
						      &j->err);
}

/*
 * Put [j]'s answer on the board at once, from this thread: a pool that
 * answered without capacity, or with fewer instances than asked (MinCount
 * below MaxCount: it gave what it had), is spent; one that gave instances
 * is not.  An all-or-nothing call's refusal says only that the pool holds
 * fewer than its MinCount.
 */
static void board_land(gb_orch_t *o, const struct orch_job *j)
{
	size_t got = j->rc == GB_E_OK && j->instances ? j->instances->n : 0;
	bool partial = got > 0 && j->run.min_count < j->run.max_count &&
		       got < (size_t)j->run.max_count;
	bool dry = partial || (got == 0 && j->run.min_count <= 1 &&
			       (j->rc == GB_E_OK || j->ae.cls == GB_EC2_CLASS_CAPACITY));

	orch_board_land(o->board, j->board_key, j->board_owner, j->t_done, dry, got > 0,
			j->board_request, partial ? "partial" :
			j->ae.code[0] ? j->ae.code : GB_EC2_CODE_ICE);
}

static void run_job(struct worker *w, struct orch_job *j)
{
	struct gb_ec2_filter f;
	struct gb_ec2_offerings_params op = { "availability-zone", &f, 1, 0 };
	gb_ec2_t *c;

	memset(&j->ae, 0, sizeof(j->ae));
	gb_error_clear(&j->err);
	j->rc = GB_E_OK;
	j->t_start = orch_mono(w->ws->o);
	c = client(w, j->region, &j->err, &j->rc);
	if (!c || j->rc) {
		j->ae.cls = GB_EC2_CLASS_CONFIG;
		gb_strlcpy(j->ae.message, j->err.text, sizeof(j->ae.message));
		if (!j->rc)
			j->rc = GB_E_INVALID;
		goto out;
	}
	switch (j->kind) {
	case ORCH_JOB_RUN:
		j->rc = gb_ec2_run_instances(c, &j->run, &j->instances, &j->ae,
					     &j->err);
		break;
	case ORCH_JOB_TAGS:
		j->rc = gb_ec2_create_tags(c, j->ids, j->n_ids, j->tags,
					   j->n_tags, &j->ae, &j->err);
		break;
	case ORCH_JOB_TERMINATE:
		j->rc = gb_ec2_terminate_instances(c, j->ids, j->n_ids,
						   &j->changes, &j->ae, &j->err);
		break;
	case ORCH_JOB_OFFERINGS:
		f.name = "instance-type";
		f.values = j->types;
		f.n_values = j->n_types;
		j->rc = gb_ec2_describe_instance_type_offerings(
			c, &op, &j->offerings, &j->ae, &j->err);
		break;
	case ORCH_JOB_DESCRIBE:
		describe(c, j);
		break;
	case ORCH_JOB_PLACEMENT:
		j->rc = gb_ec2_create_placement_group(c, j->group, "cluster", j->spec,
						      &j->ae, &j->err);
		break;
	case ORCH_JOB_RESERVATIONS:
		reservations(c, j);
		break;
	}
out:
	j->t_done = orch_mono(w->ws->o);
	if (j->kind == ORCH_JOB_RUN && j->board_key)
		board_land(w->ws->o, j);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct orch_workers *ws = w->ws;

	pthread_mutex_lock(&ws->mu);
	for (;;) {
		struct orch_job *j;
		struct orch_pool *p;

		while (!ws->stop && ws->len == 0)
			pthread_cond_wait(&ws->work, &ws->mu);
		if (ws->stop)
			break;
		j = ws->queue[ws->head++];
		if (--ws->len == 0)
			ws->head = 0;
		pthread_mutex_unlock(&ws->mu);
		run_job(w, j);
		pthread_mutex_lock(&ws->mu);
		p = j->owner;
		j->done = true;
		if (j->async)	/* room reserved by orch_pool_submit */
			p->finished[p->n_finished++] = j;
		p->pending--;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&ws->mu);
	return NULL;
}

static void workers_destroy(struct orch_workers *ws)
{
	if (!ws)
		return;
	pthread_mutex_lock(&ws->mu);
	ws->stop = true;
	pthread_cond_broadcast(&ws->work);
	pthread_mutex_unlock(&ws->mu);
	for (int i = 0; ws->w && i < ws->n; i++) {
		if (ws->w[i].started)
			pthread_join(ws->w[i].tid, NULL);
		for (size_t k = 0; ws->w[i].clients && k < ws->o->conf->n_regions; k++)
			gb_ec2_destroy(ws->w[i].clients[k]);
		free(ws->w[i].clients);
	}
	free(ws->w);
	free(ws->queue);
	pthread_cond_destroy(&ws->work);
	pthread_mutex_destroy(&ws->mu);
	free(ws);
}

static gb_err_t workers_create(gb_orch_t *o, int threads, struct orch_workers **out,
			       gb_error_t *err)
{
	struct orch_workers *ws = calloc(1, sizeof(*ws));

	*out = NULL;
	if (!ws)
		return gb_errorf(err, GB_E_NOMEM, "worker pool: out of memory");
	ws->o = o;
	ws->n = threads > 0 ? threads : 1;
	pthread_mutex_init(&ws->mu, NULL);
	pthread_cond_init(&ws->work, NULL);
	ws->w = calloc((size_t)ws->n, sizeof(*ws->w));
	if (!ws->w) {
		workers_destroy(ws);
		return gb_errorf(err, GB_E_NOMEM, "worker pool: out of memory");
	}
	for (int i = 0; i < ws->n; i++) {
		ws->w[i].ws = ws;
		ws->w[i].clients = calloc(o->conf->n_regions + 1, sizeof(gb_ec2_t *));
		if (!ws->w[i].clients ||
		    pthread_create(&ws->w[i].tid, NULL, worker_main, &ws->w[i])) {
			workers_destroy(ws);
			return gb_errorf(err, GB_E_NOMEM, "worker pool: cannot start thread %d", i);
		}
		ws->w[i].started = true;
	}
	*out = ws;
	return GB_E_OK;
}

void orch_workers_free(gb_orch_t *o)
{
	workers_destroy(o->workers);
	o->workers = NULL;
}

/* Make room for [n] more queued jobs (and finished ones of [p]); mutex held. */
static bool reserve(struct orch_pool *p, size_t n, bool async)
{
	struct orch_workers *ws = p->ws;
	struct orch_job **q, **f;

	if (ws->head > 0 && ws->len > 0) {
		memmove(ws->queue, ws->queue + ws->head, ws->len * sizeof(*ws->queue));
		ws->head = 0;
	} else if (ws->len == 0) {
		ws->head = 0;
	}
	q = gb_grow(ws->queue, &ws->cap, ws->len + n, sizeof(*q));
	if (!q)
		return false;
	ws->queue = q;
	if (async) {
		f = gb_grow(p->finished, &p->cap_finished, p->async + n, sizeof(*f));
		if (!f)
			return false;
		p->finished = f;
	}
	return true;
}

/* Queue [jobs]; RET false (nothing queued) when out of memory. */
static bool enqueue(struct orch_pool *p, struct orch_job **jobs, size_t n,
		    bool async)
{
	struct orch_workers *ws = p->ws;

	pthread_mutex_lock(&ws->mu);
	if (!reserve(p, n, async)) {
		pthread_mutex_unlock(&ws->mu);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		jobs[i]->done = false;
		jobs[i]->async = async;
		jobs[i]->owner = p;
		ws->queue[ws->head + ws->len++] = jobs[i];
	}
	if (async)
		p->async += n;
	p->pending += n;
	pthread_cond_broadcast(&ws->work);
	pthread_mutex_unlock(&ws->mu);
	return true;
}

/* No memory for a queue: run them here, one by one, on clients of their own. */
static void run_inline(struct orch_pool *p, struct orch_job **jobs, size_t n)
{
	size_t nr = p->ws->o->conf->n_regions;
	gb_ec2_t **clients = calloc(nr + 1, sizeof(*clients));
	struct worker self = { p->ws, 0, false, clients };

	for (size_t i = 0; i < n; i++) {
		if (clients) {
			run_job(&self, jobs[i]);
		} else {
			jobs[i]->rc = gb_errorf(&jobs[i]->err, GB_E_NOMEM, "out of memory");
			jobs[i]->ae.cls = GB_EC2_CLASS_CONFIG;
		}
		jobs[i]->done = true;
	}
	for (size_t k = 0; clients && k < nr; k++)
		gb_ec2_destroy(clients[k]);
	free(clients);
}

/*
 * The orchestrator's workers are made at its first run: a program that
 * only plans or reconciles never starts them.  Every run after shares
 * them, and with them each worker's keep-alive connections.
 */
gb_err_t orch_pool_create(gb_orch_t *o, struct orch_pool **out, gb_error_t *err)
{
	struct orch_pool *p;
	gb_err_t rc = GB_E_OK;

	*out = NULL;
	pthread_mutex_lock(&o->workers_mu);
	if (!o->workers)
		rc = workers_create(o, o->pool_threads, &o->workers, err);
	pthread_mutex_unlock(&o->workers_mu);
	if (rc)
		return rc;
	if (!(p = calloc(1, sizeof(*p))))
		return gb_errorf(err, GB_E_NOMEM, "worker pool: out of memory");
	p->ws = o->workers;
	pthread_cond_init(&p->done, NULL);
	*out = p;
	return GB_E_OK;
}

void orch_pool_run(struct orch_pool *p, struct orch_job **jobs, size_t n)
{
	if (n == 0)
		return;
	if (!enqueue(p, jobs, n, false)) {
		run_inline(p, jobs, n);
		return;
	}
	pthread_mutex_lock(&p->ws->mu);
	for (size_t i = 0; i < n; i++)
		while (!jobs[i]->done)
			pthread_cond_wait(&p->done, &p->ws->mu);
	pthread_mutex_unlock(&p->ws->mu);
}

bool orch_pool_submit(struct orch_pool *p, struct orch_job **jobs, size_t n)
{
	return n == 0 || enqueue(p, jobs, n, true);
}

size_t orch_pool_collect(struct orch_pool *p, struct orch_job **out,
			 size_t max)
{
	size_t n;

	pthread_mutex_lock(&p->ws->mu);
	while (p->n_finished == 0 && p->async > 0)
		pthread_cond_wait(&p->done, &p->ws->mu);
	n = p->n_finished < max ? p->n_finished : max;
	memcpy(out, p->finished, n * sizeof(*out));
	memmove(p->finished, p->finished + n, (p->n_finished - n) * sizeof(*out));
	p->n_finished -= n;
	p->async -= n;
	pthread_mutex_unlock(&p->ws->mu);
	return n;
}

/* The run is over: its jobs still queued or running are waited for. */
void orch_pool_destroy(struct orch_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->ws->mu);
	while (p->pending > 0)
		pthread_cond_wait(&p->done, &p->ws->mu);
	pthread_mutex_unlock(&p->ws->mu);
	free(p->finished);
	pthread_cond_destroy(&p->done);
	free(p);
}
