/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_state.c - state file: open, migrate, transactions, SQLite error translation
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gb_log.h"
#include "gb_state_int.h"
#include "gb_util.h"

/*****************************************************************************
 *  Names: the text stored in the enumerated columns (see the CHECKs)
 *****************************************************************************/

#define GB_STATE_NAMES_(table, count, map, prefix) \
	const char *const table[count] = { \
		map(prefix, GB_STATE_NO_SEP) \
	}
#define GB_REQ_NAME_(value, name) [GB_REQ_##value] = #name,
#define GB_RSTATE_NAME_(value, name) [GB_RSTATE_##value] = #name,
#define GB_RESULT_NAME_(value, name) [GB_RESULT_##value] = #name,
#define GB_ATTEMPT_NAME_(value, name) [GB_ATTEMPT_##value] = #name,
#define GB_INST_NAME_(value, name) [GB_INST_##value] = #name,
#define GB_APPROVAL_NAME_(value, name) [GB_APPROVAL_##value] = #name,

GB_STATE_NAMES_(gb_state_kind_names, GB_REQUEST_KIND_COUNT,
		GB_REQUEST_KIND_MAP, GB_REQ_NAME_);
GB_STATE_NAMES_(gb_state_rstate_names, GB_REQUEST_STATE_COUNT,
		GB_REQUEST_STATE_MAP, GB_RSTATE_NAME_);
GB_STATE_NAMES_(gb_state_result_names, GB_REQUEST_RESULT_COUNT,
		GB_REQUEST_RESULT_MAP, GB_RESULT_NAME_);
GB_STATE_NAMES_(gb_state_attempt_names, GB_ATTEMPT_STATE_COUNT,
		GB_ATTEMPT_STATE_MAP, GB_ATTEMPT_NAME_);
GB_STATE_NAMES_(gb_state_inst_names, GB_INSTANCE_STATE_COUNT,
		GB_INSTANCE_STATE_MAP, GB_INST_NAME_);
GB_STATE_NAMES_(gb_state_approval_names, GB_APPROVAL_STATE_COUNT,
		GB_APPROVAL_STATE_MAP, GB_APPROVAL_NAME_);

/* The schema 3 maps have no enum: their names in the order of the map. */
#define GB_STATE_TEXT_(value, name) #name,
const char *const gb_state_capacity_names[GB_STATE_CAPACITY_COUNT] = {
	GB_CAPACITY_KIND_MAP(GB_STATE_TEXT_, GB_STATE_NO_SEP)
};
const char *const gb_state_res_kind_names[GB_STATE_RES_KIND_COUNT] = {
	GB_RESERVATION_KIND_MAP(GB_STATE_TEXT_, GB_STATE_NO_SEP)
};
const char *const gb_state_res_match_names[GB_STATE_RES_MATCH_COUNT] = {
	GB_RESERVATION_MATCH_MAP(GB_STATE_TEXT_, GB_STATE_NO_SEP)
};

const char *gb_state_capacity_of(const char *name, const char *what,
				 gb_error_t *err)
{
	int i;

	if (!name)
		return gb_state_capacity_names[0];
	i = gb_state_index_of(gb_state_capacity_names,
			      GB_ARRAY_LEN(gb_state_capacity_names), name);
	if (i < 0) {
		gb_errorf(err, GB_E_INVALID,
			  "%s: unknown capacity kind \"%s\" (not in "
			  GB_STATE_SQL_IN(GB_CAPACITY_KIND_MAP) ")",
			  what, name);
		return NULL;
	}
	return gb_state_capacity_names[i];
}

const char *gb_state_name_of(const char *const *names, size_t n, int v)
{
	if (v < 0 || (size_t)v >= n)
		return NULL;
	return names[v];
}

int gb_state_index_of(const char *const *names, size_t n, const char *s)
{
	if (!s)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

/* Out-of-range values print as "invalid", which no parse function accepts. */
#define NAME_FN(fn, type, table) \
	const char *fn(type v) \
	{ \
		const char *s = GB_STATE_NAME_OF(table, v); \
		return s ? s : "invalid"; \
	}

NAME_FN(gb_request_kind_name, enum gb_request_kind, gb_state_kind_names)
NAME_FN(gb_request_state_name, enum gb_request_state, gb_state_rstate_names)
NAME_FN(gb_request_result_name, enum gb_request_result, gb_state_result_names)
NAME_FN(gb_attempt_state_name, enum gb_attempt_state, gb_state_attempt_names)
NAME_FN(gb_instance_state_name, enum gb_instance_state, gb_state_inst_names)
NAME_FN(gb_approval_state_name, enum gb_approval_state, gb_state_approval_names)

#define PARSE_FN(fn, type, table) \
	gb_err_t fn(const char *s, type *out) \
	{ \
		int i = gb_state_index_of(table, GB_ARRAY_LEN(table), s); \
		if (i < 0) \
			return GB_E_INVALID; \
		*out = (type)i; \
		return GB_E_OK; \
	}

PARSE_FN(gb_request_kind_parse, enum gb_request_kind, gb_state_kind_names)
PARSE_FN(gb_request_state_parse, enum gb_request_state, gb_state_rstate_names)
PARSE_FN(gb_request_result_parse, enum gb_request_result, gb_state_result_names)
PARSE_FN(gb_attempt_state_parse, enum gb_attempt_state, gb_state_attempt_names)
PARSE_FN(gb_instance_state_parse, enum gb_instance_state, gb_state_inst_names)
PARSE_FN(gb_approval_state_parse, enum gb_approval_state, gb_state_approval_names)

/*****************************************************************************
 *  SQLite plumbing shared by the other files
 *****************************************************************************/

static gb_err_t map_rc(int xrc)
{
	switch (xrc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return GB_E_BUSY;
	case SQLITE_NOMEM:
		return GB_E_NOMEM;
	case SQLITE_TOOBIG:
	case SQLITE_MISMATCH:
	case SQLITE_RANGE:
		return GB_E_INVALID;
	case SQLITE_CONSTRAINT:
		switch (xrc) {
		case SQLITE_CONSTRAINT_UNIQUE:
		case SQLITE_CONSTRAINT_PRIMARYKEY:
		case SQLITE_CONSTRAINT_ROWID:
			return GB_E_EXISTS;
		default:	/* CHECK, NOT NULL, FOREIGN KEY */
			return GB_E_INVALID;
		}
	default:
		return GB_E_STATE;
	}
}

gb_err_t gb_state_sqlerr(gb_state_t *st, int rc, gb_error_t *err,
			 const char *fmt, ...)
{
	char what[512];
	va_list ap;
	int xrc = sqlite3_extended_errcode(st->db);

	/* The handle's extended code is more precise when it is this error. */
	if ((xrc & 0xff) != (rc & 0xff))
		xrc = rc;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return gb_errorf(err, map_rc(xrc), "%s: %s", what,
			 (xrc & 0xff) == (sqlite3_errcode(st->db) & 0xff)
				 ? sqlite3_errmsg(st->db)
				 : sqlite3_errstr(xrc));
}

gb_err_t gb_state_stmt(gb_state_t *st, sqlite3_stmt **slot, const char *sql,
		       sqlite3_stmt **out, gb_error_t *err)
{
	int rc;

	if (!*slot) {
		rc = sqlite3_prepare_v3(st->db, sql, -1,
					SQLITE_PREPARE_PERSISTENT, slot, NULL);
		if (rc != SQLITE_OK) {
			*slot = NULL;
			*out = NULL;
			return gb_state_sqlerr(st, rc, err,
					       "preparing statement of %s",
					       st->path);
		}
	}
	*out = *slot;
	return GB_E_OK;
}

void gb_state_stmt_done(sqlite3_stmt *s)
{
	if (!s)
		return;
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

gb_err_t gb_state_step_done(gb_state_t *st, sqlite3_stmt *s, gb_error_t *err,
			    const char *what)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		return GB_E_OK;
	return gb_state_sqlerr(st, rc, err, "%s", what);
}

int gb_state_bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (!v)
		return sqlite3_bind_null(s, i);
	return sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
}

int gb_state_bind_int(sqlite3_stmt *s, int i, int64_t v)
{
	return sqlite3_bind_int64(s, i, v);
}

int gb_state_bind_double(sqlite3_stmt *s, int i, double v)
{
	return sqlite3_bind_double(s, i, v);
}

const char *gb_state_col_text(struct gb_state_rows *rows, sqlite3_stmt *s,
			      int i)
{
	const char *v;

	if (sqlite3_column_type(s, i) == SQLITE_NULL)
		return NULL;
	v = (const char *)sqlite3_column_text(s, i);
	if (!v || gb_strv_add(&rows->text, v) != GB_E_OK) {
		rows->oom = true;
		return NULL;
	}
	return rows->text.v[rows->text.n - 1];
}

gb_err_t gb_state_rows_push(struct gb_state_rows *rows, const void *row)
{
	if (rows->oom)
		return GB_E_NOMEM;
	if (rows->each) {
		rows->stop = rows->each(row, rows->each_arg) != 0;
		gb_strv_free(&rows->text);	/* the row's copies */
		return GB_E_OK;
	}
	if (rows->n == rows->cap) {
		size_t cap = rows->cap ? 2 * rows->cap : 16;
		void *v = realloc(rows->v, cap * rows->size);

		if (!v) {
			rows->oom = true;
			return GB_E_NOMEM;
		}
		rows->v = v;
		rows->cap = cap;
	}
	memcpy((char *)rows->v + rows->n * rows->size, row, rows->size);
	rows->n++;
	return GB_E_OK;
}

void *gb_state_rows_at(const struct gb_state_rows *rows, size_t i)
{
	return (char *)rows->v + i * rows->size;
}

void gb_state_rows_free(struct gb_state_rows *rows)
{
	GB_FREE_NULL(rows->v);
	rows->n = rows->cap = 0;
	gb_strv_free(&rows->text);
	rows->oom = false;
}

/*****************************************************************************
 *  Transactions
 *****************************************************************************/

/*
 * BEGIN IMMEDIATE takes the write lock at once, waiting on the busy
 * timeout, so two writers queue instead of both reading under a deferred
 * transaction and one failing with SQLITE_BUSY when it tries to write.
 */
gb_err_t gb_state_tx_enter(gb_state_t *st, bool *own, const char *what,
			   gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	*own = false;
	if (st->in_tx)
		return GB_E_OK;
	if (st->in_read)
		return gb_errorf(err, GB_E_INVALID, "%s: a read snapshot of %s is open",
				 what, st->path);
	if (st->flags & GB_STATE_RDONLY)
		return gb_errorf(err, GB_E_INVALID,
				 "%s: state file %s is open read-only", what,
				 st->path);
	rc = GB_STMT(st, GB_STMT_BEGIN, "BEGIN IMMEDIATE", &s, err);
	if (rc)
		return rc;
	rc = sqlite3_step(s) == SQLITE_DONE
		     ? GB_E_OK
		     : gb_state_sqlerr(st, sqlite3_errcode(st->db), err,
				       "%s: starting a transaction", what);
	gb_state_stmt_done(s);
	if (rc)
		return rc;
	st->in_tx = true;
	*own = true;
	return GB_E_OK;
}

static void tx_rollback(gb_state_t *st)
{
	sqlite3_stmt *s = NULL;

	st->in_tx = st->user_tx = false;
	if (sqlite3_get_autocommit(st->db))
		return;	/* SQLite already rolled back (e.g. after SQLITE_FULL) */
	if (GB_STMT(st, GB_STMT_ROLLBACK, "ROLLBACK", &s, NULL) == GB_E_OK) {
		if (sqlite3_step(s) != SQLITE_DONE)
			gb_log_warn("state_rollback_failed file=%s error=%s",
				    st->path, sqlite3_errmsg(st->db));
		gb_state_stmt_done(s);
	}
}

static gb_err_t tx_commit(gb_state_t *st, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	if (sqlite3_get_autocommit(st->db)) {
		st->in_tx = st->user_tx = false;
		return gb_errorf(err, GB_E_STATE,
				 "committing to %s: the transaction was already rolled back by an earlier error",
				 st->path);
	}
	rc = GB_STMT(st, GB_STMT_COMMIT, "COMMIT", &s, err);
	if (rc == GB_E_OK && sqlite3_step(s) != SQLITE_DONE)
		rc = gb_state_sqlerr(st, sqlite3_errcode(st->db), err,
				     "committing to %s", st->path);
	gb_state_stmt_done(s);
	if (rc)
		tx_rollback(st);	/* leave nothing half-done */
	st->in_tx = st->user_tx = false;
	return rc;
}

gb_err_t gb_state_tx_end(gb_state_t *st, bool own, gb_err_t rc,
			 gb_error_t *err)
{
	if (!own)
		return rc;
	if (rc == GB_E_OK)
		return tx_commit(st, err);
	tx_rollback(st);
	return rc;
}

gb_err_t gb_state_tx_begin(gb_state_t *st, gb_error_t *err)
{
	bool own;
	gb_err_t rc;

	if (st->in_tx)
		return gb_errorf(err, GB_E_INVALID,
				 "a transaction on %s is already open (transactions do not nest)",
				 st->path);
	rc = gb_state_tx_enter(st, &own, "beginning a transaction", err);
	if (rc == GB_E_OK)
		st->user_tx = true;
	return rc;
}

gb_err_t gb_state_tx_commit(gb_state_t *st, gb_error_t *err)
{
	if (!st->in_tx || !st->user_tx)
		return gb_errorf(err, GB_E_INVALID,
				 "no transaction on %s is open", st->path);
	return tx_commit(st, err);
}

void gb_state_tx_rollback(gb_state_t *st)
{
	if (st && st->in_tx)
		tx_rollback(st);
}

gb_err_t gb_state_read_begin(gb_state_t *st, gb_error_t *err)
{
	int src;

	if (st->in_tx || st->in_read)
		return gb_errorf(err, GB_E_INVALID,
				 "a transaction or read snapshot of %s is already open", st->path);
	/* the snapshot is taken by the first read, and lasts until COMMIT */
	if ((src = sqlite3_exec(st->db, "BEGIN DEFERRED", NULL, NULL, NULL)) != SQLITE_OK)
		return gb_state_sqlerr(st, src, err, "beginning a read of %s", st->path);
	st->in_read = true;
	return GB_E_OK;
}

void gb_state_read_end(gb_state_t *st)
{
	if (!st || !st->in_read)
		return;
	st->in_read = false;
	/* a read-only transaction: COMMIT cannot lose anything */
	if (!sqlite3_get_autocommit(st->db) &&
	    sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		gb_log_warn("state_read_end file=%s error=%s", st->path, sqlite3_errmsg(st->db));
}

/*****************************************************************************
 *  Open
 *****************************************************************************/

/* One-off query returning one integer (pragmas, counts at open time). */
static gb_err_t query_int(gb_state_t *st, const char *sql, int *v,
			  gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc = GB_E_OK;
	int src;

	src = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (src == SQLITE_OK)
		src = sqlite3_step(s);
	if (src == SQLITE_ROW)
		*v = sqlite3_column_int(s, 0);
	else if (src == SQLITE_NOTADB)
		rc = gb_errorf(err, GB_E_STATE,
			       "state file %s is not an SQLite database (%s)",
			       st->path, sqlite3_errmsg(st->db));
	else
		rc = gb_state_sqlerr(st, src, err, "reading %s (%s)", st->path,
				     sql);
	sqlite3_finalize(s);
	return rc;
}

static gb_err_t exec_sql(gb_state_t *st, const char *sql, const char *what,
			 gb_error_t *err)
{
	char *msg = NULL;
	int src = sqlite3_exec(st->db, sql, NULL, NULL, &msg);
	gb_err_t rc = GB_E_OK;

	if (src != SQLITE_OK)
		rc = gb_errorf(err, map_rc(sqlite3_extended_errcode(st->db)),
			       "%s on %s: %s", what, st->path,
			       msg ? msg : sqlite3_errstr(src));
	sqlite3_free(msg);
	return rc;
}

/* [path]'s directory into [dir]: RET false when it has none ("state.db"). */
static bool dir_of(const char *path, char *dir, size_t n)
{
	const char *slash = strrchr(path, '/');

	if (!slash || slash == path || (size_t)(slash - path) >= n)
		return false;
	memcpy(dir, path, slash - path);
	dir[slash - path] = '\0';
	return true;
}

mode_t gb_state_mode_safe(mode_t mode, uid_t owner)
{
	mode_t safe = mode & ~(mode_t)S_IWOTH;

	if (owner != 0)
		safe &= ~(mode_t)S_IWGRP;
	return safe;
}

/*
 * Who may write into the state directory can replace the file, and who
 * may write the file (or its -wal, -shm) can queue launches, forge
 * approvals and make reconcile terminate instances.  Like sshd with its
 * key files, gpuburst does not use such a path silently: a read-write open
 * clears the extra write bits (gb_state_mode_safe(); nothing else) and
 * logs the path with its old and new mode, or refuses (GB_E_PERM) when it
 * cannot (neither our file nor root).  A read-only open (gpuburstctl's
 * listings, doctor) changes nothing: it warns, and the next writer fixes
 * it.  A missing path (-wal, -shm) is no concern here.
 */
static gb_err_t check_mode(const char *path, const char *what, bool rdonly,
			   struct gb_buf *notice, gb_error_t *err)
{
	const char *how;
	struct stat sb;
	mode_t mode, safe;

	if (stat(path, &sb) < 0)
		return GB_E_OK;
	mode = sb.st_mode & 07777;
	safe = gb_state_mode_safe(mode, sb.st_uid);
	if (safe == mode)
		return GB_E_OK;
	how = mode & S_IWOTH ? "world-writable" : "group-writable";
	/*
	 * A shared directory (world-writable with the sticky bit: /tmp) is
	 * everyone's: never chmod it.  Anyone could put a -wal or -shm
	 * there before us, so a writer refuses it.
	 */
	if (!rdonly && S_ISDIR(sb.st_mode) && (mode & S_ISVTX) && (mode & S_IWOTH))
		return gb_errorf(err, GB_E_PERM,
				 "%s %s is a shared directory (mode %04o: world-writable, sticky): "
				 "the state file needs a directory of its own (state_dir)",
				 what, path, (unsigned)mode);
	if (notice->len)
		gb_buf_puts(notice, "; ");
	if (rdonly) {
		gb_log_warn("state_mode_unsafe path=%s mode=%04o owner=%ld action=none note=\"read-only open; the next writer tightens it to %04o\"",
			    path, (unsigned)mode, (long)sb.st_uid, (unsigned)safe);
		gb_buf_printf(notice, "%s %s is %s (mode %04o): the next program that opens it read-write tightens it to %04o",
			      what, path, how, (unsigned)mode, (unsigned)safe);
		return GB_E_OK;
	}
	if (chmod(path, safe) < 0)
		return gb_errorf(err, GB_E_PERM,
				 "%s %s is %s (mode %04o, owner uid %ld) and uid %ld cannot tighten it (%s): chmod %04o %s",
				 what, path, how, (unsigned)mode, (long)sb.st_uid,
				 (long)geteuid(), strerror(errno), (unsigned)safe, path);
	gb_log_warn("state_mode_tightened path=%s old=%04o new=%04o", path,
		    (unsigned)mode, (unsigned)safe);
	gb_buf_printf(notice, "%s %s was %s (mode %04o): tightened to %04o", what,
		      path, how, (unsigned)mode, (unsigned)safe);
	return GB_E_OK;
}

/* The file and its -wal and -shm: see check_mode(). */
static gb_err_t check_modes(const char *path, bool rdonly,
			    struct gb_buf *notice, gb_error_t *err)
{
	static const char *const sides[] = { "-wal", "-shm" };
	char side[PATH_MAX + 8];
	gb_err_t rc;

	if ((rc = check_mode(path, "state file", rdonly, notice, err)))
		return rc;
	for (size_t i = 0; i < GB_ARRAY_LEN(sides); i++) {
		snprintf(side, sizeof(side), "%s%s", path, sides[i]);
		if ((rc = check_mode(side, "state file", rdonly, notice, err)))
			return rc;
	}
	return GB_E_OK;
}

/*
 * Create the directory 0750 and the file 0640 ourselves: SQLite would
 * create the file with 0644 minus the umask.  fchmod makes the mode
 * independent of the umask slurmctld happens to run us with.  An existing
 * directory too open is tightened before the file goes into it.
 */
static gb_err_t create_file(const char *path, struct gb_buf *notice,
			    gb_error_t *err)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat sb;
	gb_err_t rc;
	int fd;

	/* a directory where the file should be: said before its parent's mode */
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
		return gb_errorf(err, GB_E_STATE,
				 "state file %s is not a regular file", path);
	if (slash && slash != path) {
		if (!dir_of(path, dir, sizeof(dir)))
			return gb_errorf(err, GB_E_INVALID,
					 "state file path too long: %s", path);
		rc = gb_mkdir_p(dir, 0750, err);
		if (rc) {
			gb_error_prefix(err, "state directory");
			return rc;
		}
		if ((rc = check_mode(dir, "state directory", false, notice, err)))
			return rc;
	}
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	if (fd >= 0) {
		if (fchmod(fd, 0640) < 0) {
			rc = gb_errorf(err, GB_E_IO, "cannot chmod %s: %s",
				       path, strerror(errno));
			close(fd);
			unlink(path);
			return rc;
		}
		close(fd);
		gb_log_info("state_create file=%s", path);
		return GB_E_OK;
	}
	if (errno != EEXIST)
		return gb_errorf(err,
				 errno == EACCES || errno == EPERM ? GB_E_PERM
								   : GB_E_IO,
				 "cannot create state file %s: %s", path,
				 strerror(errno));
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
		return gb_errorf(err, GB_E_STATE,
				 "state file %s is not a regular file", path);
	return GB_E_OK;
}

static gb_err_t connect_db(gb_state_t *st, int busy_ms, gb_error_t *err)
{
	bool rdonly = st->flags & GB_STATE_RDONLY;
	int oflags = (rdonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
		     SQLITE_OPEN_NOMUTEX;	/* one thread per handle */
	int persist = 1;
	int src;

	src = sqlite3_open_v2(st->path, &st->db, oflags, NULL);
	if (src != SQLITE_OK)
		return gb_errorf(err, map_rc(src) == GB_E_NOMEM ? GB_E_NOMEM
								 : GB_E_STATE,
				 "cannot open state file %s: %s", st->path,
				 st->db ? sqlite3_errmsg(st->db)
					: sqlite3_errstr(src));
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, busy_ms > 0 ? busy_ms : 0);
	if (rdonly)
		return GB_E_OK;
	/* SQLITE_OPEN_READWRITE silently falls back to read-only. */
	if (sqlite3_db_readonly(st->db, "main") == 1)
		return gb_errorf(err, GB_E_PERM,
				 "state file %s is not writable by uid %ld",
				 st->path, (long)geteuid());
	/*
	 * Keep -wal and -shm after the last writer closes, so that readers
	 * without write access to the directory (an admin in the file's
	 * group running gpuburstctl) can still open the WAL database.
	 */
	sqlite3_file_control(st->db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
	return GB_E_OK;
}

/*
 * Read the header before writing anything, so that a file of a newer
 * gpuburst or another program is refused byte-for-byte untouched.  One
 * statement, hence one read snapshot: read one by one, the three values
 * could straddle another process's first migration.
 */
static gb_err_t check_header(gb_state_t *st, int *version, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	int appid = 0, tables = 0, src;
	gb_err_t rc = GB_E_OK;

	src = sqlite3_prepare_v2(st->db,
				 "SELECT (SELECT application_id FROM "
				 "pragma_application_id), (SELECT user_version "
				 "FROM pragma_user_version), (SELECT count(*) "
				 "FROM sqlite_master)",
				 -1, &s, NULL);
	if (src == SQLITE_OK)
		src = sqlite3_step(s);
	if (src == SQLITE_ROW) {
		appid = sqlite3_column_int(s, 0);
		*version = sqlite3_column_int(s, 1);
		tables = sqlite3_column_int(s, 2);
	} else if (src == SQLITE_NOTADB) {
		rc = gb_errorf(err, GB_E_STATE,
			       "state file %s is not an SQLite database (%s)",
			       st->path, sqlite3_errmsg(st->db));
	} else if ((src & 0xff) == SQLITE_READONLY &&
		   (st->flags & GB_STATE_RDONLY)) {
		/* WAL readers need -shm; without write access they cannot
		 * create it.  Writers keep it (SQLITE_FCNTL_PERSIST_WAL). */
		rc = gb_errorf(err, GB_E_PERM,
			       "cannot read state file %s without %s-wal and %s-shm, which only a writer can create (%s): run any gpuburst program that opens it read-write once",
			       st->path, st->path, st->path,
			       sqlite3_errmsg(st->db));
	} else {
		rc = gb_state_sqlerr(st, src, err, "reading the header of %s",
				     st->path);
	}
	sqlite3_finalize(s);
	if (rc)
		return rc;
	if (appid != GB_STATE_APPLICATION_ID && (appid != 0 || tables != 0))
		return gb_errorf(err, GB_E_STATE,
				 "%s is an SQLite database but not a gpuburst state file (application_id %#x)",
				 st->path, (unsigned)appid);
	if (*version > GB_STATE_SCHEMA_VERSION)
		return gb_errorf(err, GB_E_SCHEMA,
				 "state file %s has schema version %d; this gpuburst understands up to %d: upgrade gpuburst",
				 st->path, *version, GB_STATE_SCHEMA_VERSION);
	if (*version < GB_STATE_SCHEMA_VERSION &&
	    (st->flags & GB_STATE_RDONLY))
		return gb_errorf(err, GB_E_SCHEMA,
				 "state file %s has schema version %d; this gpuburst needs %d and does not migrate a file opened read-only",
				 st->path, *version, GB_STATE_SCHEMA_VERSION);
	return GB_E_OK;
}

/*
 * synchronous=NORMAL is safe in WAL mode: the WAL is synced at every
 * checkpoint and a commit is one append to it, so no crash can corrupt the
 * file.  A crash of our process loses nothing (the append is in the kernel);
 * only an OS crash or power cut can lose the last commits, and the cloud's
 * tags (gpuburst:request, gpuburst:node) let reconcile re-adopt whatever
 * those commits described.  FULL would add an fsync to every resume call.
 */
static gb_err_t configure_rw(gb_state_t *st, int busy_ms, gb_error_t *err)
{
	double deadline = gb_time_mono() + busy_ms / 1000.0;
	sqlite3_stmt *s = NULL;
	const char *mode;
	gb_err_t rc = GB_E_OK;
	int src;

	src = sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &s,
				 NULL);
	/*
	 * Two processes converting a new file at once both hold a shared
	 * lock and want an exclusive one; SQLite answers one of them BUSY at
	 * once (the busy handler would deadlock).  Reset drops the shared
	 * lock; by the retry the other has usually made it WAL already.
	 */
	while (src == SQLITE_OK && (src = sqlite3_step(s)) == SQLITE_BUSY &&
	       gb_time_mono() < deadline) {
		sqlite3_reset(s);
		src = SQLITE_OK;
		gb_time_sleep(0.01);
	}
	if (src != SQLITE_ROW) {
		rc = gb_state_sqlerr(st, src, err, "enabling WAL on %s",
				     st->path);
		goto out;
	}
	mode = (const char *)sqlite3_column_text(s, 0);
	if (!mode || strcmp(mode, "wal") != 0) {
		rc = gb_errorf(err, GB_E_STATE,
			       "cannot enable WAL on %s (journal_mode stays %s; is it on a network file system?)",
			       st->path, mode ? mode : "unknown");
		goto out;
	}
	rc = exec_sql(st,
		      "PRAGMA synchronous = NORMAL;"
		      "PRAGMA foreign_keys = ON;"
		      /* persisted WAL is truncated to this on close */
		      "PRAGMA journal_size_limit = 4194304;",
		      "configuring", err);
out:
	sqlite3_finalize(s);
	return rc;
}

static gb_err_t migrate_step(gb_state_t *st, int to, gb_error_t *err)
{
	char sql[64];
	bool own;
	int now = 0;
	gb_err_t rc;

	rc = gb_state_tx_enter(st, &own, "migrating", err);
	if (rc)
		return rc;
	/* Re-read under the write lock: another process may have done it. */
	rc = query_int(st, "PRAGMA user_version", &now, err);
	if (rc == GB_E_OK && now > GB_STATE_SCHEMA_VERSION)
		rc = gb_errorf(err, GB_E_SCHEMA,
			       "state file %s has schema version %d; this gpuburst understands up to %d: upgrade gpuburst",
			       st->path, now, GB_STATE_SCHEMA_VERSION);
	if (rc == GB_E_OK && now < to) {
		rc = exec_sql(st, gb_state_migrations[to], "migrating", err);
		if (rc == GB_E_OK && gb_state_migration_steps[to])
			rc = gb_state_migration_steps[to](st, err);
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", to);
		if (rc == GB_E_OK)
			rc = exec_sql(st, sql, "migrating", err);
		if (rc == GB_E_OK)
			gb_log_info("state_migrate file=%s from=%d to=%d",
				    st->path, to - 1, to);
	}
	return gb_state_tx_end(st, own, rc, err);
}

gb_err_t gb_state_open(const char *path, unsigned flags, int busy_ms,
		       gb_state_t **out, gb_error_t *err)
{
	struct gb_buf notice = GB_BUF_INIT;
	char dir[PATH_MAX];
	gb_state_t *st = NULL;
	struct stat sb;
	int version = 0;
	gb_err_t rc;

	if (!out)
		return gb_errorf(err, GB_E_INVALID, "gb_state_open: no output");
	*out = NULL;
	if (!path || !*path)
		return gb_errorf(err, GB_E_INVALID, "state file path is empty");
	if (flags & ~(unsigned)(GB_STATE_RDONLY | GB_STATE_NO_CHECKPOINT |
				GB_STATE_NO_CREATE))
		return gb_errorf(err, GB_E_INVALID,
				 "unknown state open flags %#x", flags);
	if (flags & (GB_STATE_RDONLY | GB_STATE_NO_CREATE)) {
		bool rdonly = flags & GB_STATE_RDONLY;

		if (stat(path, &sb) < 0)
			return gb_errorf(err,
					 errno == ENOENT ? GB_E_NOTFOUND
							 : GB_E_IO,
					 "state file %s: %s", path,
					 strerror(errno));
		if (!S_ISREG(sb.st_mode))
			return gb_errorf(err, GB_E_STATE,
					 "state file %s is not a regular file", path);
		if (!dir_of(path, dir, sizeof(dir)) ||
		    !(rc = check_mode(dir, "state directory", rdonly, &notice, err)))
			rc = check_modes(path, rdonly, &notice, err);
	} else if (!(rc = create_file(path, &notice, err))) {
		rc = check_modes(path, false, &notice, err);
	}
	if (rc)
		goto out;

	st = calloc(1, sizeof(*st));
	if (!st || !(st->path = strdup(path)) || gb_buf_failed(&notice)) {
		rc = gb_errorf(err, GB_E_NOMEM, "opening %s: out of memory",
			       path);
		goto out;
	}
	st->flags = flags;
	if (notice.len)
		st->notice = gb_buf_steal(&notice);
	if ((rc = connect_db(st, busy_ms, err)) ||
	    (rc = check_header(st, &version, err)))
		goto out;
	if (!(flags & GB_STATE_RDONLY)) {
		if ((rc = configure_rw(st, busy_ms, err)))
			goto out;
		if ((flags & GB_STATE_NO_CHECKPOINT) &&
		    (sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1,
				       NULL) != SQLITE_OK ||
		     (rc = exec_sql(st, "PRAGMA wal_autocheckpoint = 0;",
				    "configuring", err)))) {
			if (!rc)
				rc = gb_state_sqlerr(st, sqlite3_errcode(st->db), err,
						     "configuring %s", st->path);
			goto out;
		}
		for (int v = version + 1; v <= GB_STATE_SCHEMA_VERSION && !rc;
		     v++)
			rc = migrate_step(st, v, err);
		if (rc)
			goto out;
	}
	*out = st;
	st = NULL;
out:
	gb_buf_free(&notice);
	gb_state_close(st);
	return rc;
}

const char *gb_state_open_notice(const gb_state_t *st)
{
	return st ? st->notice : NULL;
}

void gb_state_close(gb_state_t *st)
{
	if (!st)
		return;
	if (st->db) {
		if (st->in_tx)
			tx_rollback(st);
		for (size_t i = 0; i < GB_ARRAY_LEN(st->stmt); i++)
			sqlite3_finalize(st->stmt[i]);
		for (size_t i = 0; i < GB_ARRAY_LEN(st->req_list); i++)
			sqlite3_finalize(st->req_list[i]);
		for (size_t i = 0; i < GB_ARRAY_LEN(st->inst_list); i++)
			sqlite3_finalize(st->inst_list[i]);
		if (sqlite3_close(st->db) != SQLITE_OK)
			gb_log_warn("state_close_failed file=%s error=%s",
				    st->path, sqlite3_errmsg(st->db));
	}
	free(st->notice);
	free(st->path);
	free(st);
}

const char *gb_state_dir(const gb_state_t *st, char *buf, size_t n)
{
	if (!dir_of(st->path, buf, n))
		gb_strlcpy(buf, st->path[0] == '/' ? "/" : ".", n);
	return buf;
}

int gb_state_schema_version(gb_state_t *st)
{
	int v = -1;

	if (query_int(st, "PRAGMA user_version", &v, NULL) != GB_E_OK)
		return -1;
	return v;
}

static gb_err_t check_rows(gb_state_t *st, const char *sql, bool fk,
			   gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc = GB_E_OK;
	int src;

	src = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (src == SQLITE_OK)
		src = sqlite3_step(s);
	if (src == SQLITE_ROW && !fk) {
		const char *v = (const char *)sqlite3_column_text(s, 0);

		if (!v || strcmp(v, "ok") != 0)
			rc = gb_errorf(err, GB_E_STATE,
				       "integrity check of %s failed: %s",
				       st->path, v ? v : "(no text)");
	} else if (src == SQLITE_ROW) {
		rc = gb_errorf(err, GB_E_STATE,
			       "foreign key check of %s failed: %s row %lld references a missing %s row",
			       st->path, sqlite3_column_text(s, 0),
			       (long long)sqlite3_column_int64(s, 1),
			       sqlite3_column_text(s, 2));
	} else if (src != SQLITE_DONE) {
		rc = gb_state_sqlerr(st, src, err, "checking %s", st->path);
	}
	sqlite3_finalize(s);
	return rc;
}

gb_err_t gb_state_check(gb_state_t *st, gb_error_t *err)
{
	gb_err_t rc = check_rows(st, "PRAGMA integrity_check", false, err);

	if (rc == GB_E_OK)
		rc = check_rows(st, "PRAGMA foreign_key_check", true, err);
	return rc;
}

gb_err_t gb_state_new_id(char buf[GB_REQUEST_ID_LEN + 1], gb_error_t *err)
{
	return gb_random_hex(buf, GB_REQUEST_ID_LEN, err);
}
