/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_worker.h - the worker: drains the request queue, one at a time
 *
 * It is its own program, gpuburst-worker (installed in pkglibexecdir), so
 * that the programs slurmctld runs need not load the cloud client.
 *
 * Exactly one worker runs per state directory: it holds an exclusive
 * flock(2) on <state_dir>/worker.lock.  A program that enqueued work
 * starts one; if the lock is taken the new worker exits at once, and the
 * running one sees the new rows because it looks at the queue again
 * before and after releasing the lock:
 *
 *   loop:  try the lock (non-blocking; taken -> exit)
 *          requeue RUNNING rows of dead workers
 *          reconcile's NOTICE alone (an agent's spot interruption or
 *          failed GPU check makes its offering dry before any resume)
 *          drain: N threads claim and process runnable requests,
 *                 suspend/resume-fail/terminate first
 *          cheap reconcile pass (no cloud calls)
 *          unlock; if anything is runnable now, go to loop
 *
 * A program commits its rows before it tries to start a worker, so either
 * that worker gets the lock, or the lock was held when it tried, which
 * means the holder unlocks afterwards and then sees the rows.  Requests
 * backed off into the near future (<= GB_WORKER_WAIT_MAX) are waited for
 * with the lock held; later ones are left to the next program run or to
 * `gpuburstctl reconcile`, which also starts a worker when work is due.
 *
 * The programs write their requests without the request_nodes index (an
 * index page per node once the file has history: too slow for a program
 * that must exit within milliseconds); the worker indexes them before it
 * claims anything (gb_state_request_index_nodes).
 *
 * Per request (threads share one orchestrator, each has its own state
 * handle): resume -> nodes that already have a live instance get their
 * address again (slurmctld may re-run ResumeProgram), the others go through
 * gb_orch_resume(); NodeAddr/NodeHostname are set in batches, unfilled
 * nodes go DOWN with "gpuburst: (Code:<code>) <text> req=<id>".
 * Suspend / resume-fail -> gb_orch_terminate(), addresses cleared; a
 * resume-fail also feeds capacity memory and returns the nodes to service
 * (state=power_down_force), except nodes still in their capacity
 * cool-down (their DOWN reason is put back: slurmctld overwrote it with
 * "ResumeTimeout reached") and nodes in no nodeset (kept DOWN).
 * Two requests that share a node never run at once; a suspend never
 * overtakes an older queued resume of the same node.
 */
#ifndef GB_LIBWORKER_GB_WORKER_H
#define GB_LIBWORKER_GB_WORKER_H

#include <stdbool.h>

#include "gb_conf.h"
#include "gb_err.h"
#include "gb_orch.h"
#include "gb_state.h"
#include "gb_str.h"

#define GB_WORKER_THREADS 16		/* requests worked on at once: the calls
					 * of all of them share the orchestrator's
					 * 32 pool threads */
#define GB_WORKER_WAIT_MAX 60.0		/* seconds waited for backed-off rows */
#define GB_WORKER_MAX_CLAIMS 5		/* a request failing this often fails */

struct gb_worker_opts {
	const struct gb_conf *conf;	/* BORROWED */
	int threads;			/* 0: GB_WORKER_THREADS */
};

/*
 * Run the worker until the queue is empty.  Once it holds the lock it
 * calls gb_slurm_init() (SLURM_CONF, see gb_slurm.h).  RET GB_E_OK (also
 * when another worker holds the lock: it will do the work), or the error
 * that stopped it.
 */
gb_err_t gb_worker_run(const struct gb_worker_opts *o, gb_error_t *err);

/* One terminate: what it is for, how, and what came of it. */
struct gb_worker_term {
	const char *req_id;	/* BORROWED: the request (a row of the state file) */
	const char *reason;	/* BORROWED: why, for the instances' records */
	unsigned flags;		/* GB_ORCH_TERM_* */
	/*
	 * Run once, nothing retries it (gpuburstctl terminate): the nodes
	 * Slurm still has up go DOWN and then power_down_force (their jobs end
	 * now, reason "gpuburst: REASON req=ID"), and Slurm is updated also
	 * after a failed terminate.
	 */
	bool once;
	/*
	 * Slurm cannot be reached (gb_slurm_init()'s text), or NULL: the
	 * updates are recorded as failed with this error, not tried.
	 */
	const char *no_slurm;
	/* results */
	int terminated;		/* instances terminated */
	size_t live;		/* nodes of [nodes] that had a live instance */
	size_t slurm_failed;	/* node updates not made in Slurm */
};

/*
 * The terminate flow of the worker's suspend, resume-fail and terminate
 * requests, and of gpuburstctl terminate: the instances of the nodes of
 * [nodes] that have a live one in [st] are terminated through [orch]
 * (gb_orch_terminate), then Slurm's NodeAddr/NodeHostname of those nodes
 * are cleared (after the DOWN of [t->once]).  Every Slurm update, made or
 * not, is a "slurm_update" event of the request, so the request's
 * timeline (gpuburstctl requests show) has it; Slurm updates are best
 * effort and do not fail the call.  The caller has called gb_slurm_init()
 * or set [t->no_slurm], and finishes the request.
 * RET GB_E_OK, or gb_orch_terminate()'s error (some may be terminated:
 * t->terminated); without [t->once] Slurm is then left alone, the request
 * being retried.
 */
gb_err_t gb_worker_terminate_now(gb_orch_t *orch, gb_state_t *st,
				 const struct gb_strv *nodes, struct gb_worker_term *t,
				 gb_error_t *err);

/*
 * main() of gpuburst-worker [-c FILE] [--threads N]: fds 0-2 on /dev/null
 * if closed, signals reset, configuration, log, gb_worker_run().
 * RET the exit status.
 */
int gb_worker_main(int argc, char **argv);

#endif /* GB_LIBWORKER_GB_WORKER_H */
