/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_state.h - the SQLite state file: durable queue, records, audit log
 *
 * One database per cluster (default <state_dir>/state.db), WAL journal,
 * busy timeout, schema migrations by PRAGMA user_version.  The directory is
 * created 0750 and the file 0640.  An existing directory or file (-wal and
 * -shm too) writable by others (gb_state_mode_safe()) is tightened by a
 * read-write open, with a warning, or refused when it cannot be; a
 * read-only open only warns (gb_state_open_notice()).  A file with a newer
 * schema than this program knows is refused (GB_E_SCHEMA) and left
 * untouched.
 *
 * Times are epoch seconds (REAL, UTC): `datetime(created_at,'unixepoch')`
 * in the stock sqlite3 shell prints them.
 *
 * Every write is a transaction.  gb_state_tx_begin() opens an IMMEDIATE
 * transaction for callers that must write several rows atomically (the
 * resume program writes all of its requests at once); the single-row
 * functions open their own when none is active.
 *
 * A handle is used by one thread at a time; open one handle per thread.
 * Rows handed to callbacks are BORROWED and valid only during the call.
 */
#ifndef GB_LIBSTATE_GB_STATE_H
#define GB_LIBSTATE_GB_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gb_err.h"

#define GB_STATE_SCHEMA_VERSION 11
#define GB_STATE_FILE "state.db"
#define GB_REQUEST_ID_LEN 16		/* lower-case hex */

typedef struct gb_state gb_state_t;

/*****************************************************************************
 *  Open / close / transactions
 *****************************************************************************/

enum gb_state_open_flags {
	GB_STATE_RDONLY = 1 << 0,	/* never create, never migrate */
	/*
	 * A short-lived writer (the programs slurmctld runs) never
	 * checkpoints the WAL: not when a commit makes it long, not when it
	 * closes last.  A checkpoint copies every page written since the
	 * last one into the file and syncs it (~15 ms after a 1000-node
	 * request); the worker and gpuburstctl, which open without this
	 * flag, do it instead.
	 */
	GB_STATE_NO_CHECKPOINT = 1 << 1,
	/*
	 * Read-write, but only a file that exists (else GB_E_NOTFOUND):
	 * neither the file nor its directory is created, for a command that
	 * only caches what it learns (gpuburstctl plan, the offerings).
	 */
	GB_STATE_NO_CREATE = 1 << 2,
};

/*
 * Open [path] (a file; its directory is created 0750 if missing, unless
 * GB_STATE_RDONLY or GB_STATE_NO_CREATE), create or migrate the schema, set
 * WAL and the busy timeout [busy_ms].
 * A directory, file, -wal or -shm writable by others is tightened to
 * gb_state_mode_safe() (logged: state_mode_tightened path= old= new=), or,
 * when chmod fails (not ours, not root), refused with GB_E_PERM; with
 * GB_STATE_RDONLY it is left as it is (logged: state_mode_unsafe).
 * OUT *out NEW (gb_state_close).
 */
gb_err_t gb_state_open(const char *path, unsigned flags, int busy_ms,
		       gb_state_t **out, gb_error_t *err);
void gb_state_close(gb_state_t *st);

/*
 * RET BORROWED what the open of [st] found too open and tightened or, read
 * only, left as it was ("state directory D was world-writable (mode 0777):
 * tightened to 0755"; several joined by "; "), for a program with a
 * terminal to print; NULL when nothing was.
 */
const char *gb_state_open_notice(const gb_state_t *st);

/*
 * RET the mode an existing state directory or file of [mode] owned by
 * [owner] is tightened to: without write for others, nor for the group
 * unless root owns it (the layout where the group is how the SlurmUser
 * writes: root:slurm 0770).  RET [mode] itself when it is safe.
 */
mode_t gb_state_mode_safe(mode_t mode, uid_t owner);

/* The directory of the handle's file into [buf] (n bytes): "." or "/" when
 * its path names none.  RET [buf]. */
const char *gb_state_dir(const gb_state_t *st, char *buf, size_t n);

/* RET PRAGMA user_version of the open file. */
int gb_state_schema_version(gb_state_t *st);

/* BEGIN IMMEDIATE / COMMIT / ROLLBACK.  Nesting is an error. */
gb_err_t gb_state_tx_begin(gb_state_t *st, gb_error_t *err);
gb_err_t gb_state_tx_commit(gb_state_t *st, gb_error_t *err);
void gb_state_tx_rollback(gb_state_t *st);

/*
 * A read snapshot: the reads between gb_state_read_begin() and
 * gb_state_read_end() see one state of the file (BEGIN DEFERRED), as a
 * listing read twice (column widths, then rows) or a set of figures that
 * must agree needs.  Writes meanwhile are refused (GB_E_INVALID); it does
 * not nest, nor open inside a transaction.
 */
gb_err_t gb_state_read_begin(gb_state_t *st, gb_error_t *err);
void gb_state_read_end(gb_state_t *st);

/* PRAGMA integrity_check; GB_E_STATE with the first problem if not "ok". */
gb_err_t gb_state_check(gb_state_t *st, gb_error_t *err);

/* A new random request id (GB_REQUEST_ID_LEN hex + NUL) into [buf]. */
gb_err_t gb_state_new_id(char buf[GB_REQUEST_ID_LEN + 1], gb_error_t *err);

/*****************************************************************************
 *  Enumerated columns
 *
 *  Each GB_<THING>_MAP(XX, SEP) is the only list of one enumerated column's
 *  values: XX(VALUE, name) is the enum constant's suffix and the text the
 *  column stores, in the order of the enum.  SEP(brk) stands between two
 *  values; it generates nothing for the enum and the name table, and the
 *  separator of the SQL "CHECK (col IN ('a', 'b'))" text that
 *  gb_state_schema.c builds with GB_STATE_SQL_IN(); SEP(wrap) is where that
 *  text breaks its line.  The CHECK text is that of the schema version that
 *  added the column (1, or 3 for the capacity maps), so a new value also
 *  needs a migration step that rebuilds the table for existing files
 *  (test_state.c holds the released text and fails when it changes).
 *****************************************************************************/

#define GB_REQUEST_KIND_MAP(XX, SEP) \
	XX(RESUME, resume) SEP() \
	XX(SUSPEND, suspend) SEP() \
	XX(RESUME_FAIL, resume_fail) SEP() \
	XX(TERMINATE, terminate)	/* manual, from gpuburstctl */

/*
 * Life cycle: pending_approval -> queued (approve) | denied | expired;
 * queued -> running (claimed by a worker) -> done | failed;
 * running -> queued again when its worker died (gb_state_request_requeue_stale).
 */
#define GB_REQUEST_STATE_MAP(XX, SEP) \
	XX(PENDING_APPROVAL, pending_approval) SEP() \
	XX(QUEUED, queued) SEP() \
	XX(RUNNING, running) SEP() \
	XX(DONE, done) SEP() \
	XX(FAILED, failed) SEP(wrap) \
	XX(DENIED, denied) SEP() \
	XX(EXPIRED, expired) SEP() \
	XX(CANCELLED, cancelled)

#define GB_REQUEST_RESULT_MAP(XX, SEP) \
	XX(NONE, none) SEP()		/* not final yet */ \
	XX(SUCCESS, success) SEP() \
	XX(PARTIAL, partial) SEP() \
	XX(FAILED, failed)

#define GB_ATTEMPT_STATE_MAP(XX, SEP) \
	XX(STARTED, started) SEP()	/* written before the call */ \
	XX(OK, ok) SEP()		/* got >= 1 */ \
	XX(FAILED, failed) SEP()	/* cloud said no */ \
	XX(UNKNOWN, unknown)		/* outcome unknown (crash, timeout) */

#define GB_INSTANCE_STATE_MAP(XX, SEP) \
	XX(PENDING, pending) SEP() \
	XX(RUNNING, running) SEP() \
	XX(TERMINATING, terminating) SEP() /* TerminateInstances sent */ \
	XX(TERMINATED, terminated) SEP() /* terminated_at set */ \
	XX(LOST, lost)			/* gone without us (reconcile) */

#define GB_APPROVAL_STATE_MAP(XX, SEP) \
	XX(PENDING, pending) SEP() \
	XX(APPROVED, approved) SEP() \
	XX(DENIED, denied) SEP() \
	XX(EXPIRED, expired)

/*
 * Since schema 3 (gb_state_schema.c), the capacity ladder: where a launch's
 * instances come from.  Plain on-demand, spot, an On-Demand Capacity
 * Reservation, an EC2 Capacity Block; the text of attempts.capacity,
 * instances.capacity and capacity_stats.capacity, in the order of libconf's
 * enum gb_capacity_kind.  libstate takes and gives these as text (NULL on
 * write: on-demand), so it declares no enum of its own.  The last two are
 * GB_RESERVATION_KIND_MAP, the kinds a cached reservation can be.
 */
#define GB_CAPACITY_KIND_MAP(XX, SEP) \
	XX(ON_DEMAND, on-demand) SEP() \
	XX(SPOT, spot) SEP() \
	GB_RESERVATION_KIND_MAP(XX, SEP)

#define GB_RESERVATION_KIND_MAP(XX, SEP) \
	XX(RESERVATION, reservation) SEP() \
	XX(CAPACITY_BLOCK, capacity-block)

/* A reservation's instance match criteria (EC2 InstanceMatchCriteria). */
#define GB_RESERVATION_MATCH_MAP(XX, SEP) \
	XX(OPEN, open) SEP() \
	XX(TARGETED, targeted)

/* SEP() of the enums and name tables: nothing. */
#define GB_STATE_NO_SEP(brk)
/* XX() counting values: GB_<THING>_COUNT = 0 GB_<THING>_MAP(GB_STATE_ONE_, ...) */
#define GB_STATE_ONE_(value, name) + 1

/* "('a', 'b', ...)", a string literal: the value list of a CHECK ... IN. */
#define GB_STATE_SQL_IN(MAP) "(" MAP(GB_STATE_SQL_ITEM_, GB_STATE_SQL_SEP_) ")"
#define GB_STATE_SQL_ITEM_(value, name) "'" #name "'"
#define GB_STATE_SQL_SEP_(brk) "," GB_STATE_SQL_BRK_##brk
#define GB_STATE_SQL_BRK_ " "
#define GB_STATE_SQL_BRK_wrap "\n                 "

/*****************************************************************************
 *  Requests: the durable queue
 *****************************************************************************/

enum gb_request_kind {
#define GB_REQ_ENUM_(value, name) GB_REQ_##value,
	GB_REQUEST_KIND_MAP(GB_REQ_ENUM_, GB_STATE_NO_SEP)
#undef GB_REQ_ENUM_
};
enum { GB_REQUEST_KIND_COUNT = 0 GB_REQUEST_KIND_MAP(GB_STATE_ONE_, GB_STATE_NO_SEP) };

/* GB_REQUEST_STATE_MAP: the life cycle. */
enum gb_request_state {
#define GB_RSTATE_ENUM_(value, name) GB_RSTATE_##value,
	GB_REQUEST_STATE_MAP(GB_RSTATE_ENUM_, GB_STATE_NO_SEP)
#undef GB_RSTATE_ENUM_
};
enum { GB_REQUEST_STATE_COUNT = 0 GB_REQUEST_STATE_MAP(GB_STATE_ONE_, GB_STATE_NO_SEP) };

enum gb_request_result {
#define GB_RESULT_ENUM_(value, name) GB_RESULT_##value,
	GB_REQUEST_RESULT_MAP(GB_RESULT_ENUM_, GB_STATE_NO_SEP)
#undef GB_RESULT_ENUM_
};
enum { GB_REQUEST_RESULT_COUNT = 0 GB_REQUEST_RESULT_MAP(GB_STATE_ONE_, GB_STATE_NO_SEP) };

struct gb_request {
	char id[GB_REQUEST_ID_LEN + 1];	/* empty on add: assigned */
	enum gb_request_kind kind;
	enum gb_request_state state;
	const char *nodeset;		/* NULL for suspend of mixed nodes */
	int64_t job_id;			/* 0: no job (manual power-up) */
	const char *nodes;		/* hostlist expression */
	int node_count;
	const char *instance_type;
	const char *home_region;
	const char *strategy;		/* NULL: the nodeset's */
	const char *input;		/* JSON: what Slurm gave us, verbatim bits */
	double created_at;		/* set by add */
	double updated_at;
	double not_before;		/* not claimable before (back-off); 0 */
	double expires_at;		/* pending_approval deadline, or 0 */
	int64_t worker_pid;		/* claimant, or 0 */
	int claims;			/* times claimed */
	enum gb_request_result result;
	int launched;			/* instances that reached the node */
	const char *reason;		/* final reason / gap text */
	bool defer_node_index;		/* add: leave request_nodes to
					 * gb_state_request_index_nodes() */
	/* read only (schema 6, gb_state_request_set_owner): the job's
	 * owner as Slurm said when its instances were launched; NULL */
	const char *job_user, *job_account, *job_partition;
};

/*
 * Insert [req] (state as given, normally QUEUED or PENDING_APPROVAL).
 * An empty req->id gets a new one, written back into req->id; created_at
 * and updated_at are set to now and written back too.  req->nodes (a
 * hostlist expression, at most 100000 nodes) is expanded into the
 * request_nodes index (with req->defer_node_index: only parsed and
 * counted, see gb_state_request_index_nodes); a malformed one is
 * GB_E_INVALID.
 */
gb_err_t gb_state_request_add(gb_state_t *st, struct gb_request *req,
			      gb_error_t *err);

/*
 * Fill request_nodes for requests created at or after [since] that have a
 * node list and no request_nodes row yet (added with defer_node_index),
 * one transaction each.  A 1000-node request writes about one index page
 * per node once the file has history; a program that must exit quickly
 * defers that to the worker it starts.  OUT *n (may be NULL) how many
 * requests were indexed.
 */
gb_err_t gb_state_request_index_nodes(gb_state_t *st, double since, int *n,
				      gb_error_t *err);

/*
 * Atomically claim the oldest QUEUED request whose not_before has passed
 * and whose kind is in [kinds] (bit mask of 1 << kind; 0 = any): it becomes
 * RUNNING with worker_pid [pid].  [cb] gets the claimed row.
 * RET GB_E_OK, or GB_E_NOTFOUND when nothing is runnable.
 */
gb_err_t gb_state_request_claim(gb_state_t *st, int64_t pid, unsigned kinds,
				void (*cb)(const struct gb_request *, void *),
				void *arg, gb_error_t *err);

/*
 * Move [id] from state [from] to [to] (compare-and-set); GB_E_BUSY when its
 * current state is not [from], GB_E_NOTFOUND when absent.  [reason] (may
 * be NULL) is stored.  Entering QUEUED clears worker_pid.
 */
gb_err_t gb_state_request_transition(gb_state_t *st, const char *id,
				     enum gb_request_state from,
				     enum gb_request_state to,
				     const char *reason, gb_error_t *err);

/*
 * RUNNING -> DONE/FAILED with the result, launched count and reason.
 * GB_E_BUSY if [id] is not RUNNING; worker_pid is kept (who ran it).
 */
gb_err_t gb_state_request_finish(gb_state_t *st, const char *id,
				 enum gb_request_state final,
				 enum gb_request_result result, int launched,
				 const char *reason, gb_error_t *err);

/*
 * Put [id] back to QUEUED, claimable after [not_before], worker_pid 0.
 * Only from RUNNING (back-off) or QUEUED (reschedule); else GB_E_BUSY.
 */
gb_err_t gb_state_request_requeue(gb_state_t *st, const char *id,
				  double not_before, const char *reason,
				  gb_error_t *err);

/*
 * RUNNING requests whose worker pid is not alive (kill(pid, 0) == ESRCH)
 * go back to QUEUED.  OUT *n how many (may be NULL).
 */
gb_err_t gb_state_request_requeue_stale(gb_state_t *st, int *n,
					gb_error_t *err);

/* [cb] gets request [id].  GB_E_NOTFOUND if absent. */
gb_err_t gb_state_request_get(gb_state_t *st, const char *id,
			      void (*cb)(const struct gb_request *, void *),
			      void *arg, gb_error_t *err);

struct gb_request_filter {
	int state;			/* enum gb_request_state, or -1: any */
	int kind;			/* enum gb_request_kind, or -1: any */
	double since;			/* created_at >= since; 0: any */
	const char *node;		/* requests whose nodes contain it; NULL */
	size_t limit;			/* the newest [limit], still oldest first; 0: all */
	int64_t job_id;			/* of this Slurm job; 0: any */
	bool stream;			/* each row to [cb] as it is read, none
					 * held: [cb] must not use the handle */
};
#define GB_REQUEST_FILTER_ANY { -1, -1, 0, NULL, 0, 0, false }

/*
 * [cb] for each match, oldest first; a non-zero return stops the walk.
 * As gb_state_instance_list(): the rows are read first, unless f->stream.
 * Without a limit the walk follows the index of its order (no sort).
 */
gb_err_t gb_state_request_list(gb_state_t *st,
			       const struct gb_request_filter *f,
			       int (*cb)(const struct gb_request *, void *),
			       void *arg, gb_error_t *err);

/*
 * [cb] once for each distinct node list of the resume requests of jobs
 * [lo]..[hi] (> 0) created at or after [since] that count towards their
 * job (pending_approval, queued, running, done), ordered by job: what the
 * approval gate counts a job's nodes over.  A job resumed again with the
 * same nodes gives its list once, however often it was.  [nodes] is
 * BORROWED for the call; [cb] must not use [st]; a non-zero return stops.
 */
gb_err_t gb_state_job_node_lists(gb_state_t *st, int64_t lo, int64_t hi,
				 double since,
				 int (*cb)(int64_t job_id, const char *nodes,
					   void *arg),
				 void *arg, gb_error_t *err);

/*
 * [cb] for each request, queued or running, of the other family than
 * [req]'s (the kinds that end instances for a resume, resumes for those)
 * that is older than [req] in queue order (created_at, then id), oldest
 * first; a non-zero return stops the walk.  Its cost is the number of such
 * rows, not the length of the queue (schema 10's requests_state).
 */
gb_err_t gb_state_request_older_active(gb_state_t *st,
				       const struct gb_request *req,
				       int (*cb)(const struct gb_request *, void *),
				       void *arg, gb_error_t *err);

/* RET the count of requests in [state] (-1: any). */
gb_err_t gb_state_request_count(gb_state_t *st, int state, long *n,
				gb_error_t *err);

/*****************************************************************************
 *  Plans: versions per request
 *****************************************************************************/

struct gb_plan_row {
	const char *request_id;
	int version;			/* 1, 2, ... assigned by add */
	const char *planner;		/* "heuristic", "llm:openai", ... */
	const char *status;		/* "used", "rejected", "fallback" */
	const char *reason;		/* validator verdict / why chosen */
	const char *rationale;		/* the model's own words, or NULL */
	const char *body;		/* JSON of the plan */
	double created_at;
};

/*
 * Insert with the next version number; OUT *version (may be NULL).
 * created_at 0: now.  Here and below, a time given as 0 on insert means
 * "now" (attempt started_at/finished_at, instance launched_at, approval
 * requested_at, offering fetched_at).
 */
gb_err_t gb_state_plan_add(gb_state_t *st, const struct gb_plan_row *p,
			   int *version, gb_error_t *err);
gb_err_t gb_state_plan_list(gb_state_t *st, const char *request_id,
			    int (*cb)(const struct gb_plan_row *, void *),
			    void *arg, gb_error_t *err);

/*****************************************************************************
 *  Attempts: one per cloud launch call, written before and after it
 *****************************************************************************/

enum gb_attempt_state {
#define GB_ATTEMPT_ENUM_(value, name) GB_ATTEMPT_##value,
	GB_ATTEMPT_STATE_MAP(GB_ATTEMPT_ENUM_, GB_STATE_NO_SEP)
#undef GB_ATTEMPT_ENUM_
};
enum { GB_ATTEMPT_STATE_COUNT = 0 GB_ATTEMPT_STATE_MAP(GB_STATE_ONE_, GB_STATE_NO_SEP) };

struct gb_attempt {
	int64_t id;			/* assigned by begin */
	const char *request_id;
	int seq;			/* 0, 1, ... within the request */
	const char *region;
	const char *az;
	const char *subnet;
	const char *instance_type;
	const char *capacity;		/* GB_CAPACITY_KIND_MAP; NULL on begin:
					 * "on-demand"; never NULL when read */
	const char *capacity_target;	/* the reservation id ("cr-...") or
					 * resource group ARN the launch
					 * targeted; NULL: none (on-demand,
					 * spot, an open reservation) */
	int min_count;
	int asked;			/* MaxCount */
	int got;
	const char *client_token;	/* unique, <= 64 ASCII */
	enum gb_attempt_state state;
	const char *error_code;		/* AWS <Code> or NULL */
	const char *error_class;	/* CAPACITY, QUOTA, ... or NULL */
	const char *message;
	double started_at;
	double finished_at;
	double latency;			/* seconds */
};

/*
 * Insert as STARTED; OUT a->id (and a->state, a->started_at).
 * A duplicate client_token is GB_E_EXISTS; a capacity kind outside
 * GB_CAPACITY_KIND_MAP is GB_E_INVALID.  capacity and capacity_target are
 * written once, here (finish leaves them).
 */
gb_err_t gb_state_attempt_begin(gb_state_t *st, struct gb_attempt *a,
				gb_error_t *err);
/*
 * Complete attempt a->id with state, got, error fields, finished_at, latency.
 * Allowed from STARTED or UNKNOWN (a recovered outcome); GB_E_BUSY when it
 * is already OK/FAILED, GB_E_NOTFOUND when absent.
 */
gb_err_t gb_state_attempt_finish(gb_state_t *st, const struct gb_attempt *a,
				 gb_error_t *err);
/* Attempts of [request_id] (NULL: all STARTED ones, for crash recovery). */
gb_err_t gb_state_attempt_list(gb_state_t *st, const char *request_id,
			       int (*cb)(const struct gb_attempt *, void *),
			       void *arg, gb_error_t *err);

/*****************************************************************************
 *  Instances: key (request_id, "region#instance_id"), like the ancestor
 *****************************************************************************/

enum gb_instance_state {
#define GB_INST_ENUM_(value, name) GB_INST_##value,
	GB_INSTANCE_STATE_MAP(GB_INST_ENUM_, GB_STATE_NO_SEP)
#undef GB_INST_ENUM_
};
enum { GB_INSTANCE_STATE_COUNT = 0 GB_INSTANCE_STATE_MAP(GB_STATE_ONE_, GB_STATE_NO_SEP) };

struct gb_instance {
	const char *request_id;
	const char *region;
	const char *instance_id;	/* "i-..." */
	const char *node;		/* Slurm node name, or NULL (extra) */
	const char *az;
	const char *subnet;
	const char *instance_type;
	const char *capacity;		/* as in struct gb_attempt: NULL on add
					 * is "on-demand"; never NULL read */
	const char *capacity_target;	/* "cr-..." or an ARN; NULL: none */
	const char *private_ip;
	const char *public_ip;
	enum gb_instance_state state;
	int64_t attempt_id;		/* 0 if unknown */
	double launched_at;
	double terminated_at;		/* 0 while alive */
	const char *reason;		/* why terminated / lost */
	/* Since schema 4: what the instance's own agent (gpuburst-node)
	 * reports, and whether the controller acted on it. */
	const char *agent;		/* its gpuburst:agent tag as reconcile
					 * last listed it ("ok: ...",
					 * "unhealthy: ..."); NULL: none seen */
	double noticed_at;		/* when reconcile's NOTICE remembered
					 * its offering as dry (read only:
					 * gb_state_instance_notice); 0: never */
};

/*
 * Insert; an existing (request_id, region#instance_id) is GB_E_EXISTS, a
 * capacity kind outside GB_CAPACITY_KIND_MAP GB_E_INVALID.
 */
gb_err_t gb_state_instance_add(gb_state_t *st, const struct gb_instance *in,
			       gb_error_t *err);

/*
 * Update the mutable fields of the record (region, instance_id): node,
 * private_ip, public_ip, state, terminated_at, reason, agent (not capacity
 * nor capacity_target: what the launch used; nor noticed_at).  NULL strings and 0 times leave
 * the stored value as it is.  A non-NULL in->request_id narrows the match
 * to that request (else every record of the instance).
 * GB_E_NOTFOUND when nothing matched.
 */
gb_err_t gb_state_instance_update(gb_state_t *st, const struct gb_instance *in,
				  gb_error_t *err);

/*
 * Set the agent tag of every record of (region, instance_id) to [agent]
 * (NULL: none), leaving the rest as it is (the state may move meanwhile).
 * No record is no error.
 */
gb_err_t gb_state_instance_agent(gb_state_t *st, const char *region,
				 const char *instance_id, const char *agent,
				 gb_error_t *err);

/*
 * Mark the record (request_id, region, instance_id) noticed at [now]
 * unless it is already: a compare-and-set on noticed_at = 0, so that of
 * several passes (or processes) exactly one acts on an agent's report.
 * OUT *first true when this call set it (false: noticed before, or no
 * such record).  Inside the caller's transaction when one is open, so the
 * mark commits with what it guards.
 */
gb_err_t gb_state_instance_notice(gb_state_t *st, const char *request_id,
				  const char *region, const char *instance_id,
				  double now, bool *first, gb_error_t *err);

struct gb_instance_filter {
	const char *request_id;
	const char *node;
	const char *region;
	const char *instance_type;
	const char *instance_id;
	int state;			/* enum gb_instance_state, or -1 */
	bool alive;			/* only not terminated/lost */
	size_t limit;			/* the newest [limit], still oldest first; 0: all */
	const char *capacity;		/* GB_CAPACITY_KIND_MAP, or NULL: any */
	bool stream;			/* each row to [cb] as it is read, none
					 * held: [cb] must not use the handle */
};
#define GB_INSTANCE_FILTER_ANY { NULL, NULL, NULL, NULL, NULL, -1, false, 0, NULL, false }

/*
 * [cb] for each match ([f] NULL: every record), oldest launch first; a
 * non-zero return stops the walk.  The rows are read first and then
 * handed over, so [cb] may use [st]; with f->stream they are handed over
 * as they are read, in constant memory, and [cb] must not.  An invalid
 * state or capacity kind is GB_E_INVALID.
 */
gb_err_t gb_state_instance_list(gb_state_t *st,
				const struct gb_instance_filter *f,
				int (*cb)(const struct gb_instance *, void *),
				void *arg, gb_error_t *err);

/* OUT *count of the instances [f] matches, its limit aside. */
gb_err_t gb_state_instance_count(gb_state_t *st, const struct gb_instance_filter *f,
				 long *count, gb_error_t *err);

/*****************************************************************************
 *  Approvals
 *****************************************************************************/

enum gb_approval_state {
#define GB_APPROVAL_ENUM_(value, name) GB_APPROVAL_##value,
	GB_APPROVAL_STATE_MAP(GB_APPROVAL_ENUM_, GB_STATE_NO_SEP)
#undef GB_APPROVAL_ENUM_
};
enum { GB_APPROVAL_STATE_COUNT = 0 GB_APPROVAL_STATE_MAP(GB_STATE_ONE_, GB_STATE_NO_SEP) };

struct gb_approval {
	const char *request_id;
	enum gb_approval_state state;
	const char *why;		/* why approval is needed */
	double requested_at;
	double expires_at;
	const char *decided_by;		/* user name */
	int64_t decided_uid;		/* -1 until decided */
	double decided_at;
	const char *comment;		/* approve comment / deny reason */
};

gb_err_t gb_state_approval_add(gb_state_t *st, const struct gb_approval *a,
			       gb_error_t *err);
/* PENDING -> [to]; GB_E_BUSY if already decided, GB_E_NOTFOUND if absent. */
gb_err_t gb_state_approval_decide(gb_state_t *st, const char *request_id,
				  enum gb_approval_state to, const char *by,
				  int64_t uid, const char *comment,
				  gb_error_t *err);
gb_err_t gb_state_approval_get(gb_state_t *st, const char *request_id,
			       void (*cb)(const struct gb_approval *, void *),
			       void *arg, gb_error_t *err);
/* [state] -1: all. */
gb_err_t gb_state_approval_list(gb_state_t *st, int state,
				int (*cb)(const struct gb_approval *, void *),
				void *arg, gb_error_t *err);

/*****************************************************************************
 *  Events: the decision log
 *****************************************************************************/

struct gb_event {
	int64_t id;
	double at;
	const char *request_id;		/* NULL for global events */
	const char *kind;		/* "enqueue", "plan", "slurm_update", ... */
	const char *detail;		/* one line, key=value or JSON */
};

/* at = now.  [request_id] is free text, not checked against requests. */
gb_err_t gb_state_event_add(gb_state_t *st, const char *request_id,
			    const char *kind, const char *detail,
			    gb_error_t *err);
/* Events of [request_id] (NULL: every event), in insertion order. */
gb_err_t gb_state_event_list(gb_state_t *st, const char *request_id,
			     int (*cb)(const struct gb_event *, void *),
			     void *arg, gb_error_t *err);

/*****************************************************************************
 *  Offerings cache and capacity memory
 *****************************************************************************/

/*
 * [offered] 1/0; fetched_at = now.  Replaces the existing row.
 * [az] NULL: a region-level entry (stored as '').
 */
gb_err_t gb_state_offering_put(gb_state_t *st, const char *region,
			       const char *az, const char *instance_type,
			       bool offered, double fetched_at,
			       gb_error_t *err);
/*
 * OUT *offered for (region, az, type) if cached at or after [min_fetched_at];
 * GB_E_NOTFOUND if not cached or stale.
 */
gb_err_t gb_state_offering_get(gb_state_t *st, const char *region,
			       const char *az, const char *instance_type,
			       double min_fetched_at, bool *offered,
			       gb_error_t *err);

struct gb_offering {
	const char *region;
	const char *az;			/* NULL: the region-level entry */
	const char *instance_type;
	bool offered;
	double fetched_at;
};

/* [cb] for every cached offering, by region, AZ, type (stale ones too). */
gb_err_t gb_state_offering_list(gb_state_t *st,
				int (*cb)(const struct gb_offering *, void *),
				void *arg, gb_error_t *err);

/*
 * Capacity memory: per (region, az, instance_type, capacity) exponentially
 * decayed counters.  Before adding, stored values are multiplied by
 * 2^(-(now - updated_at) / half_life).  Since schema 3 each capacity kind
 * (GB_CAPACITY_KIND_MAP) of a pool has a row of its own, so that a spot
 * refusal does not make the on-demand pool of the same AZ look dry; rows
 * of older files are "on-demand".
 */
struct gb_capacity {
	const char *region;
	const char *az;
	const char *instance_type;
	const char *capacity;		/* never NULL */
	double asked;			/* decayed instances asked for */
	double got;			/* decayed instances obtained */
	double ice;			/* decayed capacity refusals */
	double failures;		/* decayed resume failures (no register) */
	double last_ice_at;		/* 0: never */
	double last_success_at;
	double updated_at;
	/* Since schema 2 (gb_state_capacity_level), decayed like the rest: */
	double level_sum, level_n;	/* levels measured when it ran dry */
	double floor_sum, floor_n;	/* lower bounds: it gave all asked */
};

/*
 * Add one visit of the pool (region, az, instance_type, capacity): [asked]
 * and [got] instances, [ice] a capacity refusal, [failure] a resume failure
 * (the row is created if missing).  [capacity] NULL: "on-demand"; a name
 * outside GB_CAPACITY_KIND_MAP is GB_E_INVALID, as in
 * gb_state_capacity_level().
 */
gb_err_t gb_state_capacity_record(gb_state_t *st, const char *region,
				  const char *az, const char *instance_type,
				  const char *capacity, int asked, int got,
				  bool ice, bool failure, double now,
				  double half_life, gb_error_t *err);
/*
 * What one visit proved about a pool's level, decayed like the counters
 * (the row is created if missing): [exact] true when the pool ran dry
 * there, so it held [level] (level_sum += level, level_n += 1); false when
 * it gave [level] and was not asked for more, so it held at least that
 * (floor_sum, floor_n).  [level] >= 0.  Newer evidence wins where it
 * contradicts older: a level under the mean lower bound drops the bounds,
 * a bound over the mean level drops the levels; a bound over the mean
 * bound raises them to it (weight kept, plus one), a bound at or under it
 * adds nothing (it proves nothing new).
 */
gb_err_t gb_state_capacity_level(gb_state_t *st, const char *region,
				 const char *az, const char *instance_type,
				 const char *capacity, int level, bool exact,
				 double now, double half_life, gb_error_t *err);
/*
 * Rows decayed to [now] (nothing is written), by region, AZ, type and
 * capacity kind; [instance_type] NULL: all types, every kind either way.
 * updated_at is the time of the last record(); az NULL for ''.
 * half_life must be > 0 (GB_E_INVALID), here and in record().
 */
gb_err_t gb_state_capacity_list(gb_state_t *st, const char *instance_type,
				double now, double half_life,
				int (*cb)(const struct gb_capacity *, void *),
				void *arg, gb_error_t *err);

/*
 * Quota memory: per (region, quota) the account limit EC2's quota refusals
 * revealed, in the quota's unit (vCPUs for a vCPU quota, instances for an
 * instance-count one), as a decayed average of observations.  [quota] names
 * the limit ("vcpus:G" for the G and VT on-demand vCPU quota, "instances"
 * for the regional instance count; liborch makes the names), [code] the
 * EC2 code that revealed it.
 */
struct gb_quota {
	const char *region;
	const char *quota;
	const char *code;		/* the last observation's */
	double limit_sum, limit_n;	/* decayed: limit = sum / n */
	double refusals;		/* decayed refusals */
	double last_refusal_at;		/* 0: never */
	double updated_at;
};

/*
 * Add one observation: the limit looked like [limit] (>= 0) at [now];
 * [refusal] when a refusal revealed it (refusals += 1, last_refusal_at).
 * Stored values are decayed first, as in capacity memory.
 */
gb_err_t gb_state_quota_record(gb_state_t *st, const char *region,
			       const char *quota, const char *code,
			       double limit, bool refusal, double now,
			       double half_life, gb_error_t *err);
/* Rows decayed to [now], by region and quota (nothing is written). */
gb_err_t gb_state_quota_list(gb_state_t *st, double now, double half_life,
			     int (*cb)(const struct gb_quota *, void *),
			     void *arg, gb_error_t *err);

/*****************************************************************************
 *  Reservations cache (schema 3): DescribeCapacityReservations' answers
 *****************************************************************************/

/*
 * One On-Demand Capacity Reservation or Capacity Block of a region as EC2
 * last described it, counted down by the launches made into it since.
 */
struct gb_reservation {
	const char *region;
	const char *id;			/* "cr-..." */
	const char *instance_type;
	const char *az;
	const char *kind;		/* "reservation" or "capacity-block" */
	const char *state;		/* EC2's: active, scheduled, expired, ... */
	const char *match;		/* "open" or "targeted" */
	int total, available;
	double start_at, end_at;	/* epoch s, 0: none */
	double fetched_at;
};

/*
 * Replace every cached reservation of [region] by [v] (n may be 0, v then
 * NULL), in one transaction (the caller's when one is open): the region's
 * other rows go.  Each row's region is [region] (v[i].region NULL or the
 * same); id, instance_type, az and state are required, kind is one of
 * GB_RESERVATION_KIND_MAP, match one of GB_RESERVATION_MATCH_MAP, total and
 * available >= 0; else GB_E_INVALID, naming the row, and nothing is
 * written.  An id twice in [v] is GB_E_EXISTS.  Every row gets [fetched_at]
 * (0: now; v[i].fetched_at is not read).
 */
gb_err_t gb_state_reservations_replace(gb_state_t *st, const char *region,
				       const struct gb_reservation *v,
				       size_t n, double fetched_at,
				       gb_error_t *err);

/*
 * OUT *at: when [region]'s reservations were last cached (replace), also
 * when EC2 listed none there; GB_E_NOTFOUND when never (or forgotten).
 */
gb_err_t gb_state_reservations_fetched(gb_state_t *st, const char *region,
				       double *at, gb_error_t *err);
/*
 * [cb] for each cached reservation of [region] (NULL: every region), by
 * region then id; [min_fetched_at]: only rows fetched at or after it (0:
 * all).  A non-zero return stops the walk.
 */
gb_err_t gb_state_reservation_list(gb_state_t *st, const char *region,
				   double min_fetched_at,
				   int (*cb)(const struct gb_reservation *,
					     void *),
				   void *arg, gb_error_t *err);

/*
 * Count down [id] of [region] by [n] >= 0 (a launch took n), not below 0;
 * GB_E_NOTFOUND when not cached.  The next replace() sets it to what EC2
 * says again.
 */
gb_err_t gb_state_reservation_take(gb_state_t *st, const char *region,
				   const char *id, int n, gb_error_t *err);

/*****************************************************************************
 *  Spot prices (schema 7): DescribeSpotPriceHistory's answers
 *****************************************************************************/

/* The price in effect in one Spot pool as EC2 last said it. */
struct gb_spot_price {
	const char *region;
	const char *az;			/* "us-east-1a"; NULL in get()'s answer
					 * for no AZ (the region's highest) */
	const char *instance_type;
	double usd_per_hour;		/* > 0 */
	double seen_at;			/* EC2's timestamp: when the price took
					 * effect (epoch s) */
	double fetched_at;		/* when gpuburst asked */
};

/*
 * Replace every cached spot price of [region] by [v] (n may be 0, v then
 * NULL), and note that the [n_types] instance types of [types] were asked
 * for there, in one transaction (the caller's when one is open): the
 * region's other rows go, prices and notes.  Each row's region is
 * [region] (v[i].region NULL or the same); az and instance_type are
 * required, usd_per_hour finite and > 0, seen_at finite; else
 * GB_E_INVALID, naming the row, and nothing is written.  A pool twice in
 * [v] keeps the price with the later seen_at (EC2 lists the changes of a
 * pool since StartTime too).  Every row gets [fetched_at] (0: now;
 * v[i].fetched_at is not read).
 */
gb_err_t gb_state_spot_prices_replace(gb_state_t *st, const char *region,
				      const char *const *types, size_t n_types,
				      const struct gb_spot_price *v, size_t n,
				      double fetched_at, gb_error_t *err);

/*
 * OUT *at: when the spot prices of [instance_type] in [region] were last
 * asked for (replace), also when EC2 listed none; GB_E_NOTFOUND when never
 * (or when a later replace of the region did not ask for the type).
 */
gb_err_t gb_state_spot_prices_fetched(gb_state_t *st, const char *region,
				      const char *instance_type, double *at,
				      gb_error_t *err);

/*
 * The cached spot price of [instance_type] in [region]: the price of the
 * pool of [az] when [az] is not NULL; with [az] NULL the highest price of
 * the region's AZs (where an instance ran is not known: a bound on what it
 * paid, as the on-demand price bounds the other kinds in the price file),
 * its seen_at and fetched_at the oldest of those AZs'.  Stale rows count
 * too: the caller judges out->fetched_at.  OUT *out (its strings BORROWED
 * from the arguments).  RET GB_E_OK, GB_E_NOTFOUND (no such pool cached),
 * GB_E_INVALID.
 */
gb_err_t gb_state_spot_price_get(gb_state_t *st, const char *region, const char *az,
				 const char *instance_type, struct gb_spot_price *out,
				 gb_error_t *err);

/*
 * [cb] for each cached spot price of [region] (NULL: every region), by
 * region, type, AZ; stale ones too.  A non-zero return stops the walk.
 */
gb_err_t gb_state_spot_price_list(gb_state_t *st, const char *region,
				  int (*cb)(const struct gb_spot_price *, void *),
				  void *arg, gb_error_t *err);

/*****************************************************************************
 *  Retention, forgetting memory, VACUUM (the only deletes)
 *****************************************************************************/

/*****************************************************************************
 *  Spend (schema 6): who a request's job was, and instance time by owner
 *****************************************************************************/

/*
 * Record the owner of request [id]'s job: Slurm's [user], [account] and
 * [partition] (each may be NULL: not known).  RET GB_E_OK, GB_E_NOTFOUND.
 */
gb_err_t gb_state_request_set_owner(gb_state_t *st, const char *id, const char *user,
				    const char *account, const char *partition,
				    gb_error_t *err);

/* One instance's time, with whom it ran for (BORROWED for the callback). */
struct gb_usage {
	const char *request_id;
	const char *region;
	const char *instance_id;
	const char *node;		/* NULL: an extra */
	const char *instance_type;
	const char *az;			/* NULL: not recorded */
	const char *capacity;		/* "on-demand", "spot", ... */
	double launched_at;
	double terminated_at;		/* 0 while alive */
	int64_t job_id;			/* 0: no job */
	const char *user, *account, *partition;	/* NULL: not known */
};

/*
 * Call [cb] for every instance alive at some time in [since, until)
 * (launched before [until], not terminated before [since]), oldest
 * launch first; [cb] returning non-zero stops.  RET GB_E_OK or an error.
 */
gb_err_t gb_state_usage_list(gb_state_t *st, double since, double until,
			     int (*cb)(const struct gb_usage *, void *), void *arg,
			     gb_error_t *err);

/* Rows gb_state_prune() deleted (with dry_run: would delete). */
struct gb_state_prune_counts {
	long requests;
	long request_nodes;
	long plans;
	long attempts;
	long approvals;
	long events;			/* of those requests */
	long instances;			/* their closed records */
	long global_events;		/* request_id NULL, older than the cutoff */
};

/*
 * Retention: delete, in one transaction, every request whose story ended
 * before [cutoff]: state done, failed, denied, expired or cancelled with
 * updated_at < cutoff, no instance record alive (pending, running,
 * terminating) or closed at or after cutoff, and no event at or after
 * cutoff; with every row that carries its id (request_nodes, plans,
 * attempts, approvals, events, instances).  A pending_approval, queued or
 * running request is never deleted, whatever its age.  Also the global
 * events (request_id NULL) older than [cutoff].  [limit] > 0: only the
 * [limit] oldest requests (by creation) this call; 0: all.  [dry_run]:
 * count, delete nothing, take no write lock.  Instance records of
 * requests this file never saw (reconcile adopts those) are kept.
 * OUT *out (may be NULL).
 */
gb_err_t gb_state_prune(gb_state_t *st, double cutoff, size_t limit,
			bool dry_run, struct gb_state_prune_counts *out,
			gb_error_t *err);

enum gb_state_forget_what {
	GB_STATE_FORGET_CAPACITY = 1 << 0,	/* capacity_stats, offerings_cache,
						 * capacity_reservations */
	GB_STATE_FORGET_QUOTA = 1 << 1,		/* quota_stats */
};

/* Rows gb_state_memory_forget() deleted. */
struct gb_state_forget_counts {
	long capacity;			/* capacity_stats */
	long offerings;			/* offerings_cache */
	long quotas;			/* quota_stats */
	long reservations;		/* capacity_reservations */
};

/*
 * Forget what the planners remember of [region] (required), in one
 * transaction (the caller's when one is open): [what] is a mask of enum
 * gb_state_forget_what.  Capacity: the capacity_stats (every capacity
 * kind), offerings_cache and capacity_reservations rows of the region,
 * narrowed to [az] and [instance_type] when not NULL (an [az] leaves the
 * region-level offering row).  Quota: the region's quota_stats rows; [az]
 * and [instance_type] must then be NULL (quotas are per region;
 * GB_E_INVALID).  Nothing to delete is no error: OUT *out (may be NULL)
 * all zero.
 */
gb_err_t gb_state_memory_forget(gb_state_t *st, const char *region,
				const char *az, const char *instance_type,
				unsigned what, struct gb_state_forget_counts *out,
				gb_error_t *err);

struct gb_state_vacuum_info {
	int64_t db_before, wal_before;	/* bytes of the file and of its -wal */
	int64_t db_after, wal_after;
	bool checkpointed;		/* the WAL went back into the file and
					 * was emptied; false: a reader held an
					 * older snapshot (a later checkpoint
					 * shrinks the file) */
	double seconds;			/* VACUUM and checkpoint */
};

/*
 * VACUUM the file (rebuild it without free pages), then checkpoint the WAL
 * (TRUNCATE) so that the file shrinks now.  Outside any transaction
 * (GB_E_INVALID); not on a read-only handle.  VACUUM holds the write lock
 * for the whole rewrite: every other writer waits, up to its busy timeout,
 * and fails after it (GB_E_BUSY), so callers keep writers away first;
 * readers are not blocked (WAL).  It needs free space for about two copies
 * of the file (a temporary copy, then the WAL).  OUT *out (may be NULL).
 */
gb_err_t gb_state_vacuum(gb_state_t *st, struct gb_state_vacuum_info *out,
			 gb_error_t *err);

/*****************************************************************************
 *  Guarded queries: SQL gpuburst did not write (gpuburstctl ask)
 *
 *  gb_state_query() runs one SELECT written elsewhere (a model's answer)
 *  on a handle opened GB_STATE_RDONLY (SQLITE_OPEN_READONLY), after
 *  PRAGMA query_only = 1, with extension loading off, SQLite's defensive
 *  mode on and these guards:
 *   - an authorizer that allows only SELECT, reading the columns the
 *     caller lists and calling gb_state_query_functions; anything else
 *     (writes, ATTACH, PRAGMA, transactions, DDL, temporary objects,
 *     WITH RECURSIVE, another table or column) fails the preparation, so
 *     nothing runs;
 *   - exactly one statement: after it only blanks, comments and ';';
 *   - it starts with SELECT or WITH, sqlite3_stmt_readonly(), returns
 *     columns and has no parameters;
 *   - limits: no attached database, GB_STATE_QUERY_SQL_MAX bytes of SQL,
 *     GB_STATE_QUERY_VALUE_MAX bytes per value, 100 result columns,
 *     expression depth 100, 20 compound terms, 32 function arguments;
 *   - a row limit (rows beyond it are not stepped to, one step tells
 *     whether there were more) and a wall-clock limit (a progress handler
 *     interrupts the statement), preparation and stepping included.
 *  The handle keeps query_only; the other settings are restored.
 *****************************************************************************/

#define GB_STATE_QUERY_SQL_MAX 65536		/* bytes of a query */
#define GB_STATE_QUERY_VALUE_MAX 1000000	/* bytes of one value */
#define GB_STATE_QUERY_ROWS 1000		/* default row limit */
#define GB_STATE_QUERY_TIMEOUT 5.0		/* default time limit, seconds */

/*
 * The SQL functions a guarded query may call (NULL-ended, lower case): the
 * core, date, aggregate, window, math and JSON functions that read their
 * arguments only.  Not load_extension, readfile, writefile, edit,
 * fts3_tokenizer, randomblob, zeroblob, random, the sqlite_* functions,
 * changes or last_insert_rowid.
 */
extern const char *const gb_state_query_functions[];

enum gb_state_value_type {
	GB_STATE_VALUE_NULL = 0,
	GB_STATE_VALUE_INTEGER,
	GB_STATE_VALUE_REAL,
	GB_STATE_VALUE_TEXT,
	GB_STATE_VALUE_BLOB,
};

/* One value of a result row. */
struct gb_state_value {
	enum gb_state_value_type type;
	int64_t i;			/* INTEGER */
	double d;			/* REAL */
	const char *text;		/* SQLite's text of the value (a BLOB
					 * in hex); NULL for NULL */
};

struct gb_state_query_opts {
	const char *const *columns;	/* what may be read: "table.column",
					 * NULL-ended (required) */
	size_t max_rows;		/* rows delivered at most; 0:
					 * GB_STATE_QUERY_ROWS */
	double timeout;			/* wall-clock seconds; <= 0:
					 * GB_STATE_QUERY_TIMEOUT */
};

struct gb_state_query_info {
	size_t rows;			/* rows delivered */
	bool cut;			/* there were more than max_rows */
	double seconds;			/* preparing and stepping */
};

/*
 * Run [sql] on [st] (GB_STATE_RDONLY) under the guards above.  [cb] gets
 * the column names first with [row] NULL, then each row ([ncols] values);
 * all BORROWED for the call; a non-zero return stops (GB_E_OK).
 * OUT *info (may be NULL), also on failure: what was delivered.
 * RET GB_E_OK;
 *   GB_E_DENIED  refused by a guard, [err] says which ("refused: the query
 *                writes (DELETE FROM requests); nothing was run"): nothing
 *                was run;
 *   GB_E_INVALID not valid SQL (SQLite's message, nothing run), or it
 *                failed while running; not a read-only handle;
 *   GB_E_TIMEOUT stopped at the time limit (the rows before were
 *                delivered);
 *   GB_E_NOMEM.
 */
gb_err_t gb_state_query(gb_state_t *st, const char *sql,
			const struct gb_state_query_opts *o,
			int (*cb)(void *arg, size_t ncols, const char *const *names,
				  const struct gb_state_value *row),
			void *arg, struct gb_state_query_info *info,
			gb_error_t *err);

/*****************************************************************************
 *  Names
 *****************************************************************************/

/* RET static text as stored in the state file; "invalid" out of range. */
const char *gb_request_kind_name(enum gb_request_kind k);
const char *gb_request_state_name(enum gb_request_state s);
const char *gb_request_result_name(enum gb_request_result r);
const char *gb_attempt_state_name(enum gb_attempt_state s);
const char *gb_instance_state_name(enum gb_instance_state s);
const char *gb_approval_state_name(enum gb_approval_state s);
/* Parse a state name; RET GB_E_OK or GB_E_INVALID. */
gb_err_t gb_request_state_parse(const char *s, enum gb_request_state *out);
gb_err_t gb_instance_state_parse(const char *s, enum gb_instance_state *out);
/* Added with the implementation: the other parse counterparts. */
gb_err_t gb_request_kind_parse(const char *s, enum gb_request_kind *out);
gb_err_t gb_request_result_parse(const char *s, enum gb_request_result *out);
gb_err_t gb_attempt_state_parse(const char *s, enum gb_attempt_state *out);
gb_err_t gb_approval_state_parse(const char *s, enum gb_approval_state *out);

/*****************************************************************************
 *  Runs (schema 8) and metrics
 *****************************************************************************/

/* The last run of a periodic job ("reconcile", "reconcile_cheap"). */
struct gb_run {
	const char *name;
	double started_at, finished_at;
	bool ok;			/* it completed (its actions may have failed) */
	long actions, failed;
	const char *detail;		/* JSON {"kind": count, ...}, or NULL */
};

/* Record [r] as the last run of r->name, replacing the one before. */
gb_err_t gb_state_run_record(gb_state_t *st, const struct gb_run *r, gb_error_t *err);

/*
 * The aggregates the metrics expose, each family one query, all in one
 * read transaction so that they agree.  A row's labels and values:
 *   REQUESTS   kind, state, result            count
 *   ATTEMPTS   region, az, capacity, outcome  count, sum(asked), sum(got)
 *              (outcome: "ok", the error code, "started" or "unknown")
 *   INSTANCES  region, instance_type, capacity, state   count
 *   EXTRAS     region, instance_type          count (launched, no node)
 *   CAPACITY_TIME  nodeset                    seconds from a resume
 *              request's creation to its last instance's launch (one row
 *              per request that got capacity)
 *   APPROVALS  state                          count, oldest requested_at
 *   NODES      node, state (of an alive instance: pending, running,
 *              terminating; "requested": in a live resume request without
 *              an alive instance)
 *   RUNS       name, ok ("1"/"0")             started_at, finished_at,
 *              actions, failed (value[3]); label[2] the detail JSON
 * Strings are valid during the callback only.
 */
enum gb_metric_family {
	GB_METRIC_REQUESTS,
	GB_METRIC_ATTEMPTS,
	GB_METRIC_INSTANCES,
	GB_METRIC_EXTRAS,
	GB_METRIC_CAPACITY_TIME,
	GB_METRIC_APPROVALS,
	GB_METRIC_NODES,
	GB_METRIC_RUNS,
};

struct gb_metric_row {
	enum gb_metric_family family;
	const char *label[4];		/* NULL: SQL NULL or unused */
	double value[4];
};

typedef int (*gb_metric_cb)(const struct gb_metric_row *row, void *arg);

/* Every family's rows to [cb] (nonzero stops).  RET GB_E_OK or the SQL error. */
gb_err_t gb_state_metrics(gb_state_t *st, gb_metric_cb cb, void *arg, gb_error_t *err);

#endif /* GB_LIBSTATE_GB_STATE_H */
