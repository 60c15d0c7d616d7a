/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_prog.h - what gpuburst-resume, -suspend and -resume-fail share
 *
 * Each program's main() is gb_prog_main().  The fast path, in order
 * (slurm-lab README and power_save.shtml are the contract):
 *
 *  1. fds 0-2 onto /dev/null if closed, signal mask and dispositions reset
 *     (slurmctld starts us with 0-2 closed and TERM, CHLD, ... blocked);
 *  2. SLURM_RESUME_FILE read and parsed (resume only; it vanishes when we
 *     exit and must be read within ten seconds);
 *  3. the configuration loaded (on failure: syslog only, nodes of a resume
 *     set DOWN with a reason so that their jobs requeue, exit 3);
 *  4. the hostlist expanded, nodes matched to nodesets (resume: unknown
 *     nodes go DOWN with a reason; nothing is launched for them);
 *  5. the requests written in one transaction: resume one per (nodeset,
 *     job), jobless nodes one per nodeset with job_id 0, split at
 *     policy.max_request_nodes; suspend / resume-fail one per call;
 *  6. the worker (gpuburst-worker, gb_worker.h) started detached; exit 0.
 *
 * These programs link only what the fast path needs (libslurm for host
 * lists, SQLite, libyaml, jansson): every shared library costs start-up
 * time (44 of them, with libcurl's, took 10 ms of a 12 ms run), so the
 * cloud client lives in the worker's own binary.
 *
 * Nothing is ever printed on stdout/stderr: logging goes to the configured
 * file and/or syslog (stderr gets a copy only on a terminal).  The exit
 * status is a gb_err_t (slurmctld only logs it).
 */
#ifndef GB_LIBENQUEUE_GB_PROG_H
#define GB_LIBENQUEUE_GB_PROG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gb_conf.h"
#include "gb_err.h"
#include "gb_resume_file.h"
#include "gb_state.h"
#include "gb_str.h"

enum gb_prog_kind {
	GB_PROG_RESUME = 0,
	GB_PROG_SUSPEND,
	GB_PROG_RESUME_FAIL,
};

/* RET static "gpuburst-resume", ... */
const char *gb_prog_name(enum gb_prog_kind kind);

/*
 * main() of the three programs:
 *   PROG [-c FILE] HOSTLIST     what slurmctld runs
 *   PROG --worker [-c FILE]     exec gpuburst-worker in the foreground
 *   PROG -h | -V
 * RET the exit status.
 */
int gb_prog_main(enum gb_prog_kind kind, int argc, char **argv);

/*****************************************************************************
 *  Resume: nodes -> requests (pure, unit-tested)
 *****************************************************************************/

/* One request to write: nodes of one nodeset for one job. */
struct gb_prog_group {
	const struct gb_conf_nodeset *ns;	/* BORROWED from the config */
	int64_t job_id;				/* 0: no job */
	const char *raw;			/* BORROWED job JSON, or NULL */
	struct gb_strv nodes;			/* NEW, in Slurm's order */
};

struct gb_prog_groups {
	struct gb_prog_group *v;
	size_t n;
	struct gb_strv unknown;			/* nodes in no nodeset */
};

/*
 * Match the nodes of every group of [split] to nodesets of [conf]: each
 * (job, nodeset) pair becomes one group, in the order of first appearance;
 * a group longer than policy.max_request_nodes is cut into several.
 * Nodes of no nodeset go to out->unknown.
 */
gb_err_t gb_prog_group_nodes(const struct gb_conf *conf,
			     const struct gb_resume_split *split,
			     struct gb_prog_groups *out, gb_error_t *err);
void gb_prog_groups_free(struct gb_prog_groups *g);

/*
 * Write one RESUME request per group in one transaction of [st] (every
 * row or none), each with an "enqueue" event.  The approval policy
 * (gb_policy_gate, with slurm.conf's ResumeTimeout) decides each row's
 * state: queued, or pending_approval with its approval row; after the
 * commit a detached notifier runs policy.approval_notify per gated row.
 * OUT ids (may be NULL): the new request ids, in group order.
 */
gb_err_t gb_prog_enqueue_resume(gb_state_t *st, const struct gb_conf *conf,
				const struct gb_prog_groups *g,
				const char *source, struct gb_strv *ids,
				gb_error_t *err);

/*
 * Write one SUSPEND or RESUME_FAIL request ([kind]) for [nodes] (nodeset
 * NULL: the nodes may span nodesets).  OUT [id] of GB_REQUEST_ID_LEN + 1.
 */
gb_err_t gb_prog_enqueue_term(gb_state_t *st, enum gb_request_kind kind,
			      const struct gb_strv *nodes, char *id,
			      gb_error_t *err);

/*****************************************************************************
 *  Paths and the detached worker
 *****************************************************************************/

#define GB_WORKER_LOCK "worker.lock"

/* "<state_dir>/state.db" and "<state_dir>/worker.lock" into [buf]. */
void gb_prog_state_path(const struct gb_conf *conf, char *buf, size_t n);
void gb_prog_lock_path(const struct gb_conf *conf, char *buf, size_t n);

#define GB_WORKER_ENV "GPUBURST_WORKER"	/* the worker's path (tests) */
#define GB_WORKER_PATH GB_PKGLIBEXECDIR "/gpuburst-worker"

/* RET BORROWED path of gpuburst-worker: $GPUBURST_WORKER, else GB_WORKER_PATH. */
const char *gb_prog_worker_path(void);

/*
 * Start gpuburst-worker ([exe]) detached as `exe -c CONF`
 * (gb_spawn_detached: out of slurmctld's process group, which slurmscriptd
 * kills after the timeout, and off our stdout, whose EOF it waits for).
 */
gb_err_t gb_prog_start_worker(const char *exe, const char *conf_path,
			      gb_error_t *err);

/* readlink("/proc/self/exe") into [buf]. */
gb_err_t gb_prog_self_exe(char *buf, size_t n, gb_error_t *err);

/* Fill request_nodes for requests of the last GB_PROG_INDEX_BACK seconds. */
#define GB_PROG_INDEX_BACK (7 * 86400.0)

#endif /* GB_LIBENQUEUE_GB_PROG_H */
