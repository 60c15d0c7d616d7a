/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_state_query.c - one read-only SELECT written outside gpuburst, under guards
 *
 * The text comes from a model (gpuburstctl ask) and is treated as hostile.
 * Each guard would be enough against a write on its own: the handle is
 * SQLITE_OPEN_READONLY and query_only, and the authorizer refuses every
 * action but SELECT, the reads of the listed columns and the listed
 * functions while the statement is prepared (https://sqlite.org/c3ref/
 * set_authorizer.html), so a refused statement never runs.  The others
 * bound what a permitted SELECT may cost: one statement, the limits of
 * sqlite3_limit(), a row limit and a wall-clock limit enforced by the
 * progress handler (https://sqlite.org/c3ref/progress_handler.html).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gb_state_int.h"
#include "gb_util.h"

/* VM instructions between two looks at the clock (a few microseconds). */
#define PROGRESS_OPS 1000

const char *const gb_state_query_functions[] = {
	/* core scalar functions (https://sqlite.org/lang_corefunc.html) */
	"abs", "char", "coalesce", "concat", "concat_ws", "format", "glob", "hex",
	"ifnull", "iif", "instr", "length", "like", "likelihood", "likely", "lower",
	"ltrim", "max", "min", "nullif", "octet_length", "printf", "quote", "replace",
	"round", "rtrim", "sign", "substr", "substring", "trim", "typeof", "unhex",
	"unicode", "unlikely", "upper",
	/* dates and times */
	"date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff",
	"current_date", "current_time", "current_timestamp",
	/* aggregates */
	"avg", "count", "group_concat", "string_agg", "sum", "total",
	/* window functions */
	"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile",
	"lag", "lead", "first_value", "last_value", "nth_value",
	/* math (SQLITE_ENABLE_MATH_FUNCTIONS) */
	"ceil", "ceiling", "floor", "trunc", "exp", "ln", "log", "log10", "log2",
	"mod", "pi", "pow", "power", "sqrt", "degrees", "radians",
	/* JSON, as values (json_each and json_tree are tables: not listed) */
	"json", "json_array", "json_array_length", "json_extract", "json_object",
	"json_quote", "json_type", "json_valid", "json_group_array",
	"json_group_object", "->", "->>",
	NULL
};

/*
 * What the authorizer says for the actions it refuses outright: "the query
 * <what> (<head><a3><join><a4>)", [a3] and [a4] as the action defines them
 * (https://sqlite.org/c3ref/c_alter_table.html); [join] NULL: no [a4].
 */
static const struct {
	int action;
	const char *what;
	const char *head;
	const char *join;
} refusals[] = {
	{ SQLITE_INSERT, "writes", "INSERT INTO ", NULL },
	{ SQLITE_UPDATE, "writes", "UPDATE ", " SET " },
	{ SQLITE_DELETE, "writes", "DELETE FROM ", NULL },
	{ SQLITE_PRAGMA, "is a PRAGMA", "PRAGMA ", " = " },
	{ SQLITE_ATTACH, "attaches a database", "ATTACH ", NULL },
	{ SQLITE_DETACH, "detaches a database", "DETACH ", NULL },
	{ SQLITE_TRANSACTION, "is a transaction statement", "", NULL },
	{ SQLITE_SAVEPOINT, "is a savepoint statement", "SAVEPOINT ", " " },
	{ SQLITE_RECURSIVE, "is a recursive common table expression", "WITH RECURSIVE", NULL },
	{ SQLITE_CREATE_TABLE, "creates a table", "CREATE TABLE ", NULL },
	{ SQLITE_CREATE_TEMP_TABLE, "creates a table", "CREATE TEMP TABLE ", NULL },
	{ SQLITE_CREATE_VIEW, "creates a view", "CREATE VIEW ", NULL },
	{ SQLITE_CREATE_TEMP_VIEW, "creates a view", "CREATE TEMP VIEW ", NULL },
	{ SQLITE_CREATE_INDEX, "creates an index", "CREATE INDEX ", " ON " },
	{ SQLITE_CREATE_TEMP_INDEX, "creates an index", "CREATE TEMP INDEX ", " ON " },
	{ SQLITE_CREATE_TRIGGER, "creates a trigger", "CREATE TRIGGER ", " ON " },
	{ SQLITE_CREATE_TEMP_TRIGGER, "creates a trigger", "CREATE TEMP TRIGGER ", " ON " },
	{ SQLITE_CREATE_VTABLE, "creates a virtual table", "CREATE VIRTUAL TABLE ", " USING " },
	{ SQLITE_DROP_TABLE, "drops a table", "DROP TABLE ", NULL },
	{ SQLITE_DROP_TEMP_TABLE, "drops a table", "DROP TABLE ", NULL },
	{ SQLITE_DROP_VIEW, "drops a view", "DROP VIEW ", NULL },
	{ SQLITE_DROP_TEMP_VIEW, "drops a view", "DROP VIEW ", NULL },
	{ SQLITE_DROP_INDEX, "drops an index", "DROP INDEX ", " ON " },
	{ SQLITE_DROP_TEMP_INDEX, "drops an index", "DROP INDEX ", " ON " },
	{ SQLITE_DROP_TRIGGER, "drops a trigger", "DROP TRIGGER ", " ON " },
	{ SQLITE_DROP_TEMP_TRIGGER, "drops a trigger", "DROP TRIGGER ", " ON " },
	{ SQLITE_DROP_VTABLE, "drops a virtual table", "DROP TABLE ", " USING " },
	{ SQLITE_ALTER_TABLE, "alters a table", "ALTER TABLE ", "." },
	{ SQLITE_REINDEX, "rebuilds an index", "REINDEX ", NULL },
	{ SQLITE_ANALYZE, "analyzes", "ANALYZE ", NULL },
};

/* The limits of a guarded query (sqlite3_limit()), restored after it. */
static const struct {
	int id;
	int value;
} limits[] = {
	{ SQLITE_LIMIT_ATTACHED, 0 },
	{ SQLITE_LIMIT_SQL_LENGTH, GB_STATE_QUERY_SQL_MAX },
	{ SQLITE_LIMIT_LENGTH, GB_STATE_QUERY_VALUE_MAX },
	{ SQLITE_LIMIT_COLUMN, 100 },
	{ SQLITE_LIMIT_EXPR_DEPTH, 100 },
	{ SQLITE_LIMIT_COMPOUND_SELECT, 20 },
	{ SQLITE_LIMIT_FUNCTION_ARG, 32 },
	{ SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 1000 },
	{ SQLITE_LIMIT_WORKER_THREADS, 0 },
};

struct guard {
	const char *const *columns;
	struct gb_strv tables;		/* of the file: tables and views */
	char why[256];			/* the first refusal, or "" */
	double deadline;		/* gb_time_mono() */
	bool timed_out;
	bool on;			/* the settings below were changed */
	int saved[GB_ARRAY_LEN(limits)];
	int defensive, trusted;		/* the handle's settings before */
};

__attribute__((format(printf, 2, 3)))
static int refuse(struct guard *g, const char *fmt, ...)
{
	va_list ap;

	if (!g->why[0]) {
		va_start(ap, fmt);
		vsnprintf(g->why, sizeof(g->why), fmt, ap);
		va_end(ap);
	}
	return SQLITE_DENY;
}

static bool listed(const char *const *names, const char *name)
{
	for (size_t i = 0; names[i] && name; i++)
		if (strcasecmp(names[i], name) == 0)
			return true;
	return false;
}

/* "table.column" in [columns]; an empty [column] (no column read): any. */
static bool column_ok(const char *const *columns, const char *table,
		      const char *column)
{
	size_t tl = table ? strlen(table) : 0;

	for (size_t i = 0; tl && columns[i]; i++) {
		const char *c = columns[i];

		if (strncasecmp(c, table, tl) != 0 || c[tl] != '.')
			continue;
		if (!column || !*column || strcasecmp(c + tl + 1, column) == 0)
			return true;
	}
	return false;
}

/* A table or view of the file, or one of SQLite's own (sqlite_schema). */
static bool is_table(const struct guard *g, const char *name)
{
	if (!name || strncasecmp(name, "sqlite_", 7) == 0)
		return true;
	for (size_t i = 0; i < g->tables.n; i++)
		if (strcasecmp(g->tables.v[i], name) == 0)
			return true;
	return false;
}

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* sqlite3_set_authorizer(): [a3], [a4] as the action defines them. */
static int authorize(void *ctx, int action, const char *a3, const char *a4,
		     const char *db, const char *inner)
{
	struct guard *g = ctx;

	(void)inner;
	switch (action) {
	case SQLITE_SELECT:
		return SQLITE_OK;
	case SQLITE_READ:
		if (db && strcmp(db, "main") != 0)
			return refuse(g, "reads %s.%s, which is not in the state file", db,
				      nz(a3));
		if (column_ok(g->columns, a3, a4))
			return SQLITE_OK;
		/*
		 * A column of a name that is no table of the file: an eponymous
		 * virtual table (pragma_table_info(), json_each()).  SQLite 3.40
		 * asks first about the schema write that connects it (below);
		 * 3.53 asks about this read only.
		 */
		if (a4 && *a4 && !is_table(g, a3))
			return refuse(g, "uses a table-valued function or virtual table (%s)",
				      nz(a3));
		/*
		 * A FROM item of which no column is read (count(*)) comes with
		 * an empty column and no database, whether a table, a CTE or a
		 * subquery; the reads of the last two were asked about already.
		 */
		if (!db && !(a4 && *a4) && !is_table(g, a3))
			return SQLITE_OK;
		return refuse(g, "reads %s%s%s, which the state file's documentation does not describe",
			      nz(a3), a4 && *a4 ? "." : "", nz(a4));
	case SQLITE_FUNCTION:
		if (listed(gb_state_query_functions, a4))
			return SQLITE_OK;
		return refuse(g, "calls %s(), which is not one of the functions allowed", nz(a4));
	default:
		break;
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(refusals); i++) {
		const char *what = refusals[i].what, *join = refusals[i].join;

		if (refusals[i].action != action)
			continue;
		/*
		 * SQLite asks first about the write of the schema table: for
		 * DDL, and (SET type) to connect a table-valued function
		 * (pragma_table_info(), json_each()) on first use
		 */
		if (a3 && strncmp(a3, "sqlite_", 7) == 0 && (action == SQLITE_INSERT ||
		    action == SQLITE_UPDATE || action == SQLITE_DELETE))
			what = action == SQLITE_UPDATE && a4 && strcmp(a4, "type") == 0 ?
			       "uses a table-valued function or virtual table" :
			       "changes the schema";
		return refuse(g, "%s (%s%s%s%s)", what, refusals[i].head, nz(a3),
			      join && a4 ? join : "", join ? nz(a4) : "");
	}
	return refuse(g, "needs SQLite action %d, which is not a read", action);
}

/* sqlite3_progress_handler(): non-zero interrupts the statement. */
static int progress(void *ctx)
{
	struct guard *g = ctx;

	if (gb_time_mono() < g->deadline)
		return 0;
	g->timed_out = true;
	return 1;
}

/* sqlite3_exec() callback: the names of the file's tables and views. */
static int add_table(void *arg, int n, char **v, char **names)
{
	struct guard *g = arg;

	(void)names;
	return n > 0 && v[0] && gb_strv_add(&g->tables, v[0]) != GB_E_OK;
}

static gb_err_t guard_on(gb_state_t *st, struct guard *g, gb_error_t *err)
{
	sqlite3 *db = st->db;
	char *msg = NULL;
	gb_err_t rc = GB_E_OK;

	/* before the authorizer: it reads the schema table, which nobody else may */
	if (sqlite3_exec(db, "PRAGMA query_only = 1;"
			 "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
			 "UNION ALL SELECT name FROM sqlite_temp_master "
			 "WHERE type IN ('table', 'view')", add_table, g, &msg) != SQLITE_OK) {
		rc = gb_errorf(err, GB_E_STATE, "guarding %s: %s", st->path,
			       msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return rc;
	}
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, -1, &g->defensive);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, -1, &g->trusted);
	for (size_t i = 0; i < GB_ARRAY_LEN(limits); i++)
		g->saved[i] = sqlite3_limit(db, limits[i].id, limits[i].value);
	g->on = true;
	if (sqlite3_enable_load_extension(db, 0) != SQLITE_OK ||
	    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL) != SQLITE_OK ||
	    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL) != SQLITE_OK ||
	    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL) != SQLITE_OK)
		return gb_errorf(err, GB_E_STATE, "guarding %s: %s", st->path,
				 sqlite3_errmsg(db));
	sqlite3_set_authorizer(db, authorize, g);
	sqlite3_progress_handler(db, PROGRESS_OPS, progress, g);
	return GB_E_OK;
}

/* Everything but query_only back as it was. */
static void guard_off(gb_state_t *st, struct guard *g)
{
	sqlite3 *db = st->db;

	sqlite3_progress_handler(db, 0, NULL, NULL);
	sqlite3_set_authorizer(db, NULL, NULL);
	gb_strv_free(&g->tables);
	if (!g->on)
		return;
	for (size_t i = 0; i < GB_ARRAY_LEN(limits); i++)
		sqlite3_limit(db, limits[i].id, g->saved[i]);
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, g->defensive, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, g->trusted, NULL);
}

/* Past blanks and comments (and ';' when [semicolons]). */
static const char *skip_blank(const char *p, bool semicolons)
{
	for (;;) {
		p += strspn(p, " \t\r\n\f\v");
		if (semicolons && *p == ';') {
			p++;
		} else if (p[0] == '-' && p[1] == '-') {
			p += strcspn(p, "\n");
		} else if (p[0] == '/' && p[1] == '*') {
			const char *end = strstr(p + 2, "*/");

			p = end ? end + 2 : p + strlen(p);
		} else {
			return p;
		}
	}
}

/* Does [p] start with the keyword [kw] (any case, then no identifier)? */
static bool keyword(const char *p, const char *kw)
{
	size_t n = strlen(kw);
	char c;

	if (strncasecmp(p, kw, n) != 0)
		return false;
	c = p[n];
	return !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		 (c >= '0' && c <= '9') || c == '_' || (c & 0x80));
}

/* The checks of a prepared statement [s] whose text ended at [tail]. */
static gb_err_t check_prepared(sqlite3_stmt *s, const char *sql, const char *tail,
			       gb_error_t *err)
{
	const char *rest = skip_blank(tail, true);
	const char *what = NULL;

	if (*rest)
		return gb_errorf(err, GB_E_DENIED,
				 "refused: the query is more than one statement (then: %.80s); nothing was run",
				 rest);
	if (!keyword(skip_blank(sql, false), "SELECT") &&
	    !keyword(skip_blank(sql, false), "WITH"))
		what = "does not start with SELECT or WITH";
	else if (!sqlite3_stmt_readonly(s))
		what = "is not read-only";
	else if (sqlite3_column_count(s) == 0)
		what = "returns no columns";
	else if (sqlite3_bind_parameter_count(s) > 0)
		what = "has parameters, which nothing binds";
	if (what)
		return gb_errorf(err, GB_E_DENIED, "refused: the query %s; nothing was run", what);
	return GB_E_OK;
}

/* Prepare [sql] under [g].  OUT *out NEW.  RET as gb_state_query. */
static gb_err_t prepare(gb_state_t *st, struct guard *g, const char *sql,
			sqlite3_stmt **out, gb_error_t *err)
{
	const char *tail = NULL;
	gb_err_t rc;
	int src;

	*out = NULL;
	src = sqlite3_prepare_v2(st->db, sql, -1, out, &tail);
	if (g->why[0]) {	/* whatever SQLite made of the refusal */
		rc = gb_errorf(err, GB_E_DENIED, "refused: the query %s; nothing was run",
			       g->why);
		goto fail;
	}
	if (src == SQLITE_INTERRUPT && g->timed_out) {
		rc = gb_errorf(err, GB_E_TIMEOUT, "stopped: preparing the query took too long");
		goto fail;
	}
	if (src != SQLITE_OK) {
		rc = gb_errorf(err, (src & 0xff) == SQLITE_NOMEM ? GB_E_NOMEM : GB_E_INVALID,
			       "the query is not valid SQLite: %s; nothing was run",
			       sqlite3_errmsg(st->db));
		goto fail;
	}
	if (!*out)
		return gb_errorf(err, GB_E_DENIED, "refused: the query is empty (no statement)");
	if ((rc = check_prepared(*out, sql, tail, err)))
		goto fail;
	return GB_E_OK;
fail:
	sqlite3_finalize(*out);
	*out = NULL;
	return rc;
}

/* Column [i] of the current row into [v]; a BLOB in hex into [hex]. */
static gb_err_t value_of(sqlite3_stmt *s, int i, struct gb_state_value *v,
			 struct gb_buf *hex)
{
	const unsigned char *b;
	int n;

	memset(v, 0, sizeof(*v));
	switch (sqlite3_column_type(s, i)) {
	case SQLITE_NULL:
		v->type = GB_STATE_VALUE_NULL;
		return GB_E_OK;
	case SQLITE_INTEGER:
		v->type = GB_STATE_VALUE_INTEGER;
		v->i = sqlite3_column_int64(s, i);
		break;
	case SQLITE_FLOAT:
		v->type = GB_STATE_VALUE_REAL;
		v->d = sqlite3_column_double(s, i);
		break;
	case SQLITE_BLOB:
		v->type = GB_STATE_VALUE_BLOB;
		b = sqlite3_column_blob(s, i);
		n = sqlite3_column_bytes(s, i);
		gb_buf_reset(hex);
		for (int k = 0; k < n; k++)
			gb_buf_printf(hex, "%02x", b[k]);
		if (gb_buf_failed(hex))
			return GB_E_NOMEM;
		v->text = gb_buf_str(hex);
		return GB_E_OK;
	default:
		v->type = GB_STATE_VALUE_TEXT;
		break;
	}
	v->text = (const char *)sqlite3_column_text(s, i);
	return v->text ? GB_E_OK : GB_E_NOMEM;
}

/* Column names, then rows, until the limit.  RET as gb_state_query. */
static gb_err_t deliver(gb_state_t *st, struct guard *g, sqlite3_stmt *s, size_t max,
			int (*cb)(void *, size_t, const char *const *,
				  const struct gb_state_value *),
			void *arg, struct gb_state_query_info *info, gb_error_t *err)
{
	size_t n = (size_t)sqlite3_column_count(s);
	struct gb_strv names = { NULL, 0, 0 };
	struct gb_state_value *row = calloc(n, sizeof(*row));
	struct gb_buf *hex = calloc(n, sizeof(*hex));
	gb_err_t rc = GB_E_OK;
	int src = SQLITE_DONE;

	for (size_t i = 0; row && hex && i < n && !rc; i++)
		rc = gb_strv_add(&names, sqlite3_column_name(s, (int)i) ?
				 sqlite3_column_name(s, (int)i) : "?");
	if (!row || !hex || rc) {
		rc = gb_errorf(err, GB_E_NOMEM, "query: out of memory");
		goto out;
	}
	if (cb && cb(arg, n, (const char *const *)names.v, NULL))
		goto out;
	while ((src = sqlite3_step(s)) == SQLITE_ROW) {
		if (info->rows == max) {	/* one more row: the output is cut */
			info->cut = true;
			src = SQLITE_DONE;
			break;
		}
		for (size_t i = 0; i < n && !rc; i++)
			rc = value_of(s, (int)i, &row[i], &hex[i]);
		if (rc) {
			rc = gb_errorf(err, GB_E_NOMEM, "query: out of memory");
			goto out;
		}
		info->rows++;
		if (cb && cb(arg, n, (const char *const *)names.v, row)) {
			src = SQLITE_DONE;
			break;
		}
	}
	if (src == SQLITE_INTERRUPT && g->timed_out)
		rc = gb_errorf(err, GB_E_TIMEOUT, "stopped: the query ran into the time limit after %zu row%s",
			       info->rows, info->rows == 1 ? "" : "s");
	else if (src != SQLITE_DONE)
		rc = gb_errorf(err, (src & 0xff) == SQLITE_NOMEM ? GB_E_NOMEM : GB_E_INVALID,
			       "the query failed after %zu row%s: %s", info->rows,
			       info->rows == 1 ? "" : "s", sqlite3_errmsg(st->db));
out:
	for (size_t i = 0; hex && i < n; i++)
		gb_buf_free(&hex[i]);
	free(hex);
	free(row);
	gb_strv_free(&names);
	return rc;
}

gb_err_t gb_state_query(gb_state_t *st, const char *sql,
			const struct gb_state_query_opts *o,
			int (*cb)(void *arg, size_t ncols, const char *const *names,
				  const struct gb_state_value *row),
			void *arg, struct gb_state_query_info *info,
			gb_error_t *err)
{
	struct gb_state_query_info dummy;
	struct guard g;
	sqlite3_stmt *s = NULL;
	double t0 = gb_time_mono();
	gb_err_t rc;

	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	if (!st || !sql || !o || !o->columns)
		return gb_errorf(err, GB_E_INVALID, "query: no handle, query or column list");
	if (!(st->flags & GB_STATE_RDONLY))
		return gb_errorf(err, GB_E_INVALID,
				 "query: state file %s must be opened read-only for this", st->path);
	if (strlen(sql) > GB_STATE_QUERY_SQL_MAX)
		return gb_errorf(err, GB_E_DENIED,
				 "refused: the query is longer than %d bytes; nothing was run",
				 GB_STATE_QUERY_SQL_MAX);
	memset(&g, 0, sizeof(g));
	g.columns = o->columns;
	g.deadline = t0 + (o->timeout > 0 ? o->timeout : GB_STATE_QUERY_TIMEOUT);
	if ((rc = guard_on(st, &g, err)))
		goto out;
	if ((rc = prepare(st, &g, sql, &s, err)) == GB_E_OK)
		rc = deliver(st, &g, s, o->max_rows ? o->max_rows : GB_STATE_QUERY_ROWS, cb,
			     arg, info, err);
	sqlite3_finalize(s);
out:
	guard_off(st, &g);
	info->seconds = gb_time_mono() - t0;
	return rc;
}
