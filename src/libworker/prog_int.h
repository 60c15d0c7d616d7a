/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_int.h - libworker internals shared by the worker and reconcile
 */
#ifndef GB_LIBWORKER_PROG_INT_H
#define GB_LIBWORKER_PROG_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gb_conf.h"
#include "gb_orch.h"
#include "gb_slurm.h"
#include "gb_slurmconf.h"
#include "gb_state.h"
#include "gb_str.h"

/* A deep copy of a request row (the callbacks' rows are BORROWED). */
struct prog_req {
	struct gb_request r;	/* strings point into the copies below */
	char *nodeset, *nodes, *instance_type, *home_region, *strategy,
	     *input, *reason, *job_user, *job_account, *job_partition;
};

gb_err_t prog_req_copy(const struct gb_request *src, struct prog_req *dst);
void prog_req_free(struct prog_req *r);

/*
 * Apply a Slurm node update and record it as a "slurm_update" event of
 * [req_id] (JSON: action, nodes, count, failed, reason/error).
 * [action] is a gb_slurm_node_action, or -1 for set-address, -2 for
 * clear-address ([addrs] then NULL).  Failures are logged, not returned:
 * a Slurm update is best effort, reconcile and ResumeTimeout back it up.
 * RET how many nodes failed.
 */
size_t prog_slurm_update(gb_state_t *st, const char *req_id, int action,
			 char *const *names, char *const *addrs, size_t n,
			 const char *reason);
#define PROG_SET_ADDR (-1)
#define PROG_CLEAR_ADDR (-2)

/*
 * Nodes of a nodeset of several instance types say in Slurm which type
 * each got: ActiveFeatures = its AvailableFeatures without the nodeset's
 * other types ([types][i] is [names][i]'s type); with [types] NULL, every
 * type again (AvailableFeatures: a powered-down node can be any of them).
 * Nodes of one-type nodesets, and nodes already so, are left alone.
 * Best effort as prog_slurm_update ("slurm_update" event, action
 * active_features).  RET how many nodes failed.
 */
size_t prog_slurm_types(gb_state_t *st, const struct gb_conf *conf, const char *req_id,
			char *const *names, char *const *types, size_t n);

/*
 * The update prog_slurm_update() would make, not made because Slurm cannot
 * be reached ([why]): logged and recorded as its "slurm_update" event, all
 * [n] nodes failed, [why] the error.  ([action] not set-address.)
 * RET [n].
 */
size_t prog_slurm_not_updated(gb_state_t *st, const char *req_id, int action,
			      char *const *names, size_t n, const char *reason,
			      const char *why);

/* Record a JSON event (json_t * STOLEN). Failures are logged. */
void prog_event_json(gb_state_t *st, const char *req_id, const char *kind,
		     void *json);

/*
 * The capacity marker of [node]: the reason of the newest "node_unfilled"
 * event of the newest final resume request of [node], when that request
 * ended less than policy.ice_cooldown before [now].  OUT [reason] (of
 * [n] bytes) and *ended (the request's end).  RET whether one was found.
 */
bool prog_capacity_marker(gb_state_t *st, const struct gb_conf *conf,
			  const char *node, double now, char *reason, size_t n,
			  double *ended);

/* RET the end time (updated_at of a final row) of request [id], or 0. */
double prog_request_end(gb_state_t *st, const char *id);

/* The reason a node in no nodeset is kept DOWN with. */
void prog_reason_unknown(const struct gb_conf *conf, char *buf, size_t n);

/*****************************************************************************
 *  The worker
 *****************************************************************************/

struct worker;

struct wthread {
	struct worker *w;
	gb_state_t *st;
	int idx;
	/* the request this thread runs, sorted node names (in-flight set) */
	char **busy;
	size_t n_busy;
	bool running;		/* past the wait: [busy] is in use */
};

struct worker {
	const struct gb_conf *conf;
	char state_path[4096];
	gb_orch_t *orch;
	int64_t pid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct wthread *threads;
	int n_threads;
	/* slurm.conf as the worker started (ResumeTimeout: approval and
	 * re-probe windows); have_sc false: unreadable, Slurm's defaults */
	struct gb_slurmconf sc;
	bool have_sc;
};

gb_err_t worker_resume(struct wthread *t, const struct gb_request *req,
		       struct gb_strv *nodes, gb_error_t *err);
gb_err_t worker_term(struct wthread *t, const struct gb_request *req,
		     struct gb_strv *nodes, gb_error_t *err);

#endif /* GB_LIBWORKER_PROG_INT_H */
