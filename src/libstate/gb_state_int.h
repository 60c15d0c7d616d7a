/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_state_int.h - libstate internals shared by its .c files (not public)
 *
 * This is the only header that includes <sqlite3.h>; gb_state.h stays free
 * of SQLite types.
 */
#ifndef GB_LIBSTATE_GB_STATE_INT_H
#define GB_LIBSTATE_GB_STATE_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "gb_err.h"
#include "gb_state.h"
#include "gb_str.h"
#include "gb_util.h"		/* GB_ARRAY_LEN */

/* PRAGMA application_id of a gpuburst state file: "GBst". */
#define GB_STATE_APPLICATION_ID 0x47427374

/* Nodes of one request expanded into request_nodes (see the schema). */
#define GB_STATE_MAX_REQUEST_NODES 100000

/*
 * Slots of the per-handle statement cache.  Each statement is prepared on
 * first use (SQLITE_PREPARE_PERSISTENT) and finalized by gb_state_close().
 */
enum gb_stmt {
	GB_STMT_BEGIN = 0,
	GB_STMT_COMMIT,
	GB_STMT_ROLLBACK,
	GB_STMT_REQ_ADD,
	GB_STMT_REQ_NODE_ADD,
	GB_STMT_REQ_CLAIM_PICK,
	GB_STMT_REQ_CLAIM_RESUME,
	GB_STMT_REQ_CLAIM_TERM,
	GB_STMT_REQ_OLDER,
	GB_STMT_REQ_JOB_NODES,
	GB_STMT_REQ_CLAIM_TAKE,
	GB_STMT_REQ_GET,
	GB_STMT_REQ_STATE,
	GB_STMT_REQ_TRANSITION,
	GB_STMT_REQ_FINISH,
	GB_STMT_REQ_REQUEUE,
	GB_STMT_REQ_RUNNING,
	GB_STMT_REQ_UNSTALE,
	GB_STMT_REQ_COUNT,
	GB_STMT_REQ_COUNT_STATE,
	GB_STMT_REQ_UNINDEXED,
	GB_STMT_PLAN_NEXT,
	GB_STMT_PLAN_ADD,
	GB_STMT_PLAN_LIST,
	GB_STMT_ATT_BEGIN,
	GB_STMT_ATT_FINISH,
	GB_STMT_ATT_STATE,
	GB_STMT_ATT_LIST,
	GB_STMT_ATT_LIST_STARTED,
	GB_STMT_INST_ADD,
	GB_STMT_INST_UPDATE,
	GB_STMT_INST_NOTICE,
	GB_STMT_INST_AGENT,
	GB_STMT_APP_ADD,
	GB_STMT_APP_DECIDE,
	GB_STMT_APP_GET,
	GB_STMT_APP_LIST,
	GB_STMT_APP_LIST_STATE,
	GB_STMT_EV_ADD,
	GB_STMT_EV_LIST,
	GB_STMT_EV_LIST_ALL,
	GB_STMT_OFF_PUT,
	GB_STMT_OFF_GET,
	GB_STMT_OFF_LIST,
	GB_STMT_CAP_GET,
	GB_STMT_CAP_PUT,
	GB_STMT_CAP_LIST,
	GB_STMT_CAP_LIST_TYPE,
	GB_STMT_QUOTA_GET,
	GB_STMT_QUOTA_PUT,
	GB_STMT_QUOTA_LIST,
	GB_STMT_RES_CLEAR,
	GB_STMT_RES_ADD,
	GB_STMT_RES_LIST,
	GB_STMT_RES_LIST_REGION,
	GB_STMT_RES_TAKE,
	GB_STMT_RES_FETCHED_PUT,
	GB_STMT_RES_FETCHED_GET,
	GB_STMT_REQ_OWNER,
	GB_STMT_USAGE_LIST,
	GB_STMT_SPOT_CLEAR,
	GB_STMT_SPOT_ADD,
	GB_STMT_SPOT_FETCHED_CLEAR,
	GB_STMT_SPOT_FETCHED_PUT,
	GB_STMT_SPOT_FETCHED_GET,
	GB_STMT_SPOT_GET_AZ,
	GB_STMT_SPOT_GET_MAX,
	GB_STMT_SPOT_LIST,
	GB_STMT_SPOT_LIST_REGION,
	GB_STMT__COUNT
};

/* Filter shapes of the two listings whose SQL is built per shape. */
#define GB_REQ_LIST_SHAPES 64		/* state, kind, since, node, job, all */
#define GB_INST_LIST_SHAPES 512		/* request, node, region, type, id,
					   state, alive, capacity, all */

struct gb_state {
	sqlite3 *db;
	char *path;
	char *notice;			/* gb_state_open_notice(), or NULL */
	unsigned flags;			/* enum gb_state_open_flags */
	bool in_tx;			/* a transaction of ours is open */
	bool user_tx;			/* ... and gb_state_tx_begin() opened it */
	bool in_read;			/* gb_state_read_begin()'s snapshot */
	sqlite3_stmt *stmt[GB_STMT__COUNT];
	sqlite3_stmt *req_list[GB_REQ_LIST_SHAPES];
	sqlite3_stmt *inst_list[GB_INST_LIST_SHAPES];
};

/*
 * RET a cached prepared statement for [slot], preparing [sql] on first use.
 * OUT *out BORROWED (owned by the handle); reset it with gb_state_stmt_done.
 */
gb_err_t gb_state_stmt(gb_state_t *st, sqlite3_stmt **slot, const char *sql,
		       sqlite3_stmt **out, gb_error_t *err);
#define GB_STMT(st, id, sql, out, err) \
	gb_state_stmt((st), &(st)->stmt[(id)], (sql), (out), (err))

/* Reset [s] and clear its bindings so the cache can hand it out again. */
void gb_state_stmt_done(sqlite3_stmt *s);

/*
 * Translate SQLite result [rc] (the handle's last error) into gb_err_t and
 * fill [err] with "<what>: <sqlite3_errmsg>".  RET the code.
 */
gb_err_t gb_state_sqlerr(gb_state_t *st, int rc, gb_error_t *err,
			 const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Step a statement that returns no rows; RET GB_E_OK or the translated error. */
gb_err_t gb_state_step_done(gb_state_t *st, sqlite3_stmt *s, gb_error_t *err,
			    const char *what);

/*
 * Open a write transaction unless one is already open (the caller's);
 * OUT *own tells gb_state_tx_end whether to commit/roll back.
 */
gb_err_t gb_state_tx_enter(gb_state_t *st, bool *own, const char *what,
			   gb_error_t *err);
/* Commit (rc == GB_E_OK) or roll back the transaction if [own].  RET rc or
 * the commit error. */
gb_err_t gb_state_tx_end(gb_state_t *st, bool own, gb_err_t rc,
			 gb_error_t *err);

/* Bind helpers: a NULL string binds SQL NULL.  RET SQLite rc. */
int gb_state_bind_text(sqlite3_stmt *s, int i, const char *v);
int gb_state_bind_int(sqlite3_stmt *s, int i, int64_t v);
int gb_state_bind_double(sqlite3_stmt *s, int i, double v);

/*
 * Rows copied out of a statement before they reach a callback: the
 * statement is reset first, so a callback may call back into the handle
 * (even write).  Every string of every row lives in [text].
 */
struct gb_state_rows {
	void *v;			/* array of row structs */
	size_t n;
	size_t cap;
	size_t size;			/* sizeof one row struct */
	struct gb_strv text;
	bool oom;
	/*
	 * Streaming: each row goes to [each] as it is read, and nothing is
	 * held (constant memory; the read transaction lasts the walk, so
	 * [each] must not call into the handle).  A non-zero return stops.
	 */
	int (*each)(const void *row, void *arg);
	void *each_arg;
	bool stop;
};
#define GB_STATE_ROWS_INIT(type) { NULL, 0, 0, sizeof(type), { NULL, 0, 0 }, false, \
				   NULL, NULL, false }

/* RET a copy of column [i] owned by [rows] (NULL for SQL NULL or on OOM). */
const char *gb_state_col_text(struct gb_state_rows *rows, sqlite3_stmt *s,
			      int i);
/* Append a copy of *row.  RET GB_E_OK or GB_E_NOMEM. */
gb_err_t gb_state_rows_push(struct gb_state_rows *rows, const void *row);
/* RET BORROWED pointer to row [i]. */
void *gb_state_rows_at(const struct gb_state_rows *rows, size_t i);
void gb_state_rows_free(struct gb_state_rows *rows);

/*
 * The tail of every *_list: unless [rc] is already an error, hand each row
 * of *[rows] to [cb] (NULL: none) until it returns nonzero; then free the
 * rows.  A macro so that [cb] keeps its row type.
 */
#define GB_STATE_ROWS_DELIVER(rows, rc, cb, arg) \
	do { \
		for (size_t i_ = 0; (rc) == GB_E_OK && (cb) && i_ < (rows)->n; \
		     i_++) \
			if ((cb)(gb_state_rows_at((rows), i_), (arg))) \
				break; \
		gb_state_rows_free(rows); \
	} while (0)

/*
 * Migration scripts, index = schema version reached (index 0 unused), and
 * the steps in C that run after a script, in its transaction (NULL: none).
 */
extern const char *const gb_state_migrations[GB_STATE_SCHEMA_VERSION + 1];
extern gb_err_t (*const gb_state_migration_steps[GB_STATE_SCHEMA_VERSION + 1])(gb_state_t *,
									  gb_error_t *);
/*
 * [sql] (a CREATE TABLE) with each "col IN ('a', 'b', 'c', ...)" of more
 * than two string literals written "(col = 'a' OR col = 'b' OR ...)":
 * schema version 9.  RET malloc'd text, NULL when out of memory.
 */
char *gb_state_checks_as_or(const char *sql);

/* Enum <-> text of the CHECK constraints; name RET NULL when out of range. */
const char *gb_state_name_of(const char *const *names, size_t n, int v);
int gb_state_index_of(const char *const *names, size_t n, const char *s);
/* gb_state_name_of() of one of the tables below, by its length. */
#define GB_STATE_NAME_OF(names, v) \
	gb_state_name_of(names, GB_ARRAY_LEN(names), (int)(v))

extern const char *const gb_state_kind_names[GB_REQUEST_KIND_COUNT];
extern const char *const gb_state_rstate_names[GB_REQUEST_STATE_COUNT];
extern const char *const gb_state_result_names[GB_REQUEST_RESULT_COUNT];
extern const char *const gb_state_attempt_names[GB_ATTEMPT_STATE_COUNT];
extern const char *const gb_state_inst_names[GB_INSTANCE_STATE_COUNT];
extern const char *const gb_state_approval_names[GB_APPROVAL_STATE_COUNT];

/* The text of the schema 3 maps, which have no enum (see gb_state.h). */
enum {
	GB_STATE_CAPACITY_COUNT = 0 GB_CAPACITY_KIND_MAP(GB_STATE_ONE_, GB_STATE_NO_SEP),
	GB_STATE_RES_KIND_COUNT = 0 GB_RESERVATION_KIND_MAP(GB_STATE_ONE_, GB_STATE_NO_SEP),
	GB_STATE_RES_MATCH_COUNT = 0 GB_RESERVATION_MATCH_MAP(GB_STATE_ONE_, GB_STATE_NO_SEP),
};
extern const char *const gb_state_capacity_names[GB_STATE_CAPACITY_COUNT];
extern const char *const gb_state_res_kind_names[GB_STATE_RES_KIND_COUNT];
extern const char *const gb_state_res_match_names[GB_STATE_RES_MATCH_COUNT];

/*
 * RET the stored text of capacity kind [name] (NULL: "on-demand", the
 * first of GB_CAPACITY_KIND_MAP), static; NULL, with GB_E_INVALID in [err]
 * naming it, prefixed by [what], when it is none of the map's.
 */
const char *gb_state_capacity_of(const char *name, const char *what,
				 gb_error_t *err);

#endif /* GB_LIBSTATE_GB_STATE_INT_H */
