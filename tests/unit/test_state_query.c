/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_state_query.c - gb_state_query(): SQL written outside gpuburst, run
 * on a read-only handle under guards
 *
 * The good queries deliver their names, typed values and row counts; every
 * hostile one (a write, ATTACH, a PRAGMA, a transaction, DDL, two
 * statements, load_extension(), the schema table, a recursive CTE, an
 * unlisted column) is refused while it is prepared, with the reason, and
 * the file stays as it was; a huge cross join is cut at the row limit or
 * stopped at the time limit.  Each test has its own mkdtemp directory.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "gb_err.h"
#include "gb_state.h"
#include "gb_str.h"
#include "gb_util.h"
#include "teststate.h"
#include "testutil.h"

/* What the tests may read (a documented subset). */
static const char *const cols[] = {
	"requests.id", "requests.state", "requests.nodes", "requests.node_count",
	"requests.created_at", "requests.strategy",
	"request_nodes.node", "request_nodes.request_id",
	NULL,
};

/* The rows a query delivered, as text: "name|name\n" then "v|v\n" each. */
struct got {
	struct gb_buf text;
	size_t headers, rows;
	enum gb_state_value_type types[8];	/* of the first row */
	size_t stop_after;			/* 0: never */
};

static int collect(void *arg, size_t n, const char *const *names,
		   const struct gb_state_value *row)
{
	struct got *g = arg;

	if (!row)
		g->headers++;
	for (size_t i = 0; i < n; i++) {
		if (row && g->rows == 0 && i < GB_ARRAY_LEN(g->types))
			g->types[i] = row[i].type;
		gb_buf_printf(&g->text, "%s%s", i ? "|" : "",
			      !row ? names[i] : row[i].text ? row[i].text : "NULL");
	}
	gb_buf_putc(&g->text, '\n');
	g->rows += row != NULL;
	return g->stop_after && g->text.len && --g->stop_after == 0;
}

static int setup(void **state)
{
	struct ts_fx *f;
	char id[GB_REQUEST_ID_LEN + 1];
	gb_error_t e = { 0 };

	if (ts_setup(state, "query", "state.db"))
		return -1;
	f = *state;
	ts_open(f);
	ts_request(f->st, GB_RSTATE_QUEUED, "g5-[1-40]", 40, "ap-south-1", id);
	ts_request(f->st, GB_RSTATE_QUEUED, "g5-[41-42]", 2, "ap-south-1", id);
	tu_ok(gb_state_event_add(f->st, id, "enqueue", "n=2", &e), &e);
	gb_state_close(f->st);
	f->st = NULL;
	tu_ok(gb_state_open(f->path, GB_STATE_RDONLY, TS_BUSY_MS, &f->st, &e), &e);
	return 0;
}

/* Run [sql] with the test columns.  OUT [g] (caller frees g->text). */
static gb_err_t run(struct ts_fx *f, const char *sql, size_t max, double timeout,
		    struct got *g, struct gb_state_query_info *info, gb_error_t *e)
{
	struct gb_state_query_opts o = { cols, max, timeout };

	memset(g, 0, sizeof(*g));
	return gb_state_query(f->st, sql, &o, collect, g, info, e);
}

static void expect_refused(struct ts_fx *f, gb_err_t want, const char *sql, const char *why)
{
	struct gb_state_query_info info;
	struct got g;
	gb_error_t e = { 0 };
	gb_err_t rc = run(f, sql, 0, 0, &g, &info, &e);

	if (rc != want || !strstr(e.text, why))
		fail_msg("%s: rc %d '%s', expected %d '%s'", sql, rc, e.text, want, why);
	assert_int_equal(g.text.len, 0);	/* not even the column names */
	assert_int_equal(info.rows, 0);
	gb_buf_free(&g.text);
}

static void test_select(void **state)
{
	struct ts_fx *f = *state;
	struct gb_state_query_info info;
	struct got g;
	gb_error_t e = { 0 };

	tu_ok(run(f, "SELECT state, count(*) AS n, sum(node_count) AS nodes, "
		     "typeof(min(created_at)), NULL AS nil, x'00ff' AS b "
		     "FROM requests GROUP BY state", 0, 0, &g, &info, &e), &e);
	assert_string_equal(gb_buf_str(&g.text),
			    "state|n|nodes|typeof(min(created_at))|nil|b\n"
			    "queued|2|42|real|NULL|00ff\n");
	assert_int_equal(g.headers, 1);
	assert_int_equal(g.types[0], GB_STATE_VALUE_TEXT);
	assert_int_equal(g.types[1], GB_STATE_VALUE_INTEGER);
	assert_int_equal(g.types[4], GB_STATE_VALUE_NULL);
	assert_int_equal(g.types[5], GB_STATE_VALUE_BLOB);
	assert_int_equal(info.rows, 1);
	assert_false(info.cut);
	gb_buf_free(&g.text);

	/* a comment first, a CTE, a join, a window, JSON, a date, trailing ';' */
	tu_ok(run(f, "-- nodes per request\n/* two */ WITH r AS (SELECT id, nodes FROM requests)\n"
		     "SELECT r.nodes, count(n.node) AS c, row_number() OVER (ORDER BY r.nodes) AS k, "
		     "json_array(1, 2) ->> '$[1]' AS j, date(0, 'unixepoch') AS d "
		     "FROM r JOIN request_nodes n ON n.request_id = r.id GROUP BY r.id "
		     "ORDER BY r.nodes;  -- done\n ;", 0, 0, &g, &info, &e), &e);
	assert_string_equal(gb_buf_str(&g.text), "nodes|c|k|j|d\n"
			    "g5-[1-40]|40|1|2|1970-01-01\ng5-[41-42]|2|2|2|1970-01-01\n");
	gb_buf_free(&g.text);

	/* no rows: the names all the same */
	tu_ok(run(f, "SELECT id FROM requests WHERE state = 'done'", 0, 0, &g, &info, &e), &e);
	assert_string_equal(gb_buf_str(&g.text), "id\n");
	assert_int_equal(info.rows, 0);
	gb_buf_free(&g.text);

	/* a read of no column (count(*)) needs the table listed only */
	tu_ok(run(f, "select COUNT(*) from REQUEST_NODES", 0, 0, &g, &info, &e), &e);
	assert_string_equal(gb_buf_str(&g.text), "COUNT(*)\n42\n");
	gb_buf_free(&g.text);

	/* CTEs and subqueries read through to what they read */
	tu_ok(run(f, "WITH r AS (SELECT id FROM requests) SELECT count(*) AS n FROM r, "
		     "(SELECT 1) AS one", 0, 0, &g, &info, &e), &e);
	assert_string_equal(gb_buf_str(&g.text), "n\n2\n");
	gb_buf_free(&g.text);
	expect_refused(f, GB_E_DENIED, "WITH r AS (SELECT kind FROM requests) SELECT count(*) FROM r",
		       "reads requests.kind");
	expect_refused(f, GB_E_DENIED, "SELECT count(*) FROM (SELECT * FROM sqlite_master)",
		       "reads sqlite_master.type");

	/* the callback may stop early */
	memset(&g, 0, sizeof(g));
	g.stop_after = 3;
	{
		struct gb_state_query_opts o = { cols, 0, 0 };

		tu_ok(gb_state_query(f->st, "SELECT node FROM request_nodes", &o, collect, &g,
				     &info, &e), &e);
	}
	assert_int_equal(info.rows, 2);
	assert_false(info.cut);
	gb_buf_free(&g.text);

	/* the handle reads as before afterwards */
	{
		long n = 0;

		tu_ok(gb_state_request_count(f->st, -1, &n, &e), &e);
		assert_int_equal(n, 2);
	}
}

static void test_refused(void **state)
{
	struct ts_fx *f = *state;
	long before = ts_int(f->path, "SELECT count(*) FROM requests");

	expect_refused(f, GB_E_DENIED, "DELETE FROM requests", "writes (DELETE FROM requests)");
	expect_refused(f, GB_E_DENIED, "UPDATE requests SET state = 'done'",
		       "writes (UPDATE requests SET state)");
	expect_refused(f, GB_E_DENIED, "INSERT INTO events (at, kind) VALUES (1, 'x')",
		       "writes (INSERT INTO events)");
	/* DDL writes the schema table first, and SQLite asks about that first */
	expect_refused(f, GB_E_DENIED, "DROP TABLE requests",
		       "changes the schema (DELETE FROM sqlite_master)");
	expect_refused(f, GB_E_DENIED, "CREATE TEMP TABLE t (x)",
		       "changes the schema (INSERT INTO sqlite_temp_master)");
	expect_refused(f, GB_E_DENIED, "CREATE TEMP TRIGGER t AFTER INSERT ON requests BEGIN SELECT 1; END",
		       "creates a trigger (CREATE TEMP TRIGGER t ON requests)");
	expect_refused(f, GB_E_DENIED, "CREATE TEMP VIEW v AS SELECT 1", "changes the schema");
	expect_refused(f, GB_E_DENIED, "ATTACH '/tmp/x.db' AS x", "attaches a database (ATTACH /tmp/x.db)");
	expect_refused(f, GB_E_DENIED, "DETACH main", "detaches a database");
	expect_refused(f, GB_E_DENIED, "PRAGMA user_version", "is a PRAGMA (PRAGMA user_version)");
	expect_refused(f, GB_E_DENIED, "PRAGMA query_only = 0", "is a PRAGMA (PRAGMA query_only = 0)");
	expect_refused(f, GB_E_DENIED, "BEGIN IMMEDIATE", "is a transaction statement (BEGIN)");
	expect_refused(f, GB_E_DENIED, "SAVEPOINT s", "is a savepoint statement");
	expect_refused(f, GB_E_DENIED, "VACUUM", "");
	expect_refused(f, GB_E_DENIED, "ANALYZE", "changes the schema");
	expect_refused(f, GB_E_DENIED, "REINDEX", "rebuilds an index");
	/* two statements, the second never prepared */
	expect_refused(f, GB_E_DENIED, "SELECT id FROM requests; DELETE FROM requests",
		       "more than one statement (then: DELETE FROM requests)");
	expect_refused(f, GB_E_DENIED, "SELECT 1;SELECT 2", "more than one statement");
	/* functions: not listed, or not there at all */
	expect_refused(f, GB_E_DENIED, "SELECT load_extension('/tmp/evil.so')",
		       "calls load_extension(), which is not one of the functions allowed");
	expect_refused(f, GB_E_DENIED, "SELECT id FROM requests WHERE random() > 0", "calls random()");
	expect_refused(f, GB_E_DENIED, "SELECT zeroblob(1000000000)", "calls zeroblob()");
	expect_refused(f, GB_E_DENIED, "SELECT sqlite_version()", "calls sqlite_version()");
	expect_refused(f, GB_E_INVALID, "SELECT readfile('/etc/passwd')",
		       "not valid SQLite: no such function: readfile");
	/* tables and columns outside the list */
	expect_refused(f, GB_E_DENIED, "SELECT name, sql FROM sqlite_master",
		       "reads sqlite_master.name, which the state file's documentation does not describe");
	expect_refused(f, GB_E_DENIED, "SELECT count(*) FROM sqlite_schema", "reads sqlite_");
	expect_refused(f, GB_E_DENIED, "SELECT * FROM temp.sqlite_master", "reads temp.");
	expect_refused(f, GB_E_DENIED, "SELECT * FROM sqlite_sequence", "reads sqlite_sequence");
	expect_refused(f, GB_E_DENIED, "SELECT * FROM pragma_table_info('requests')",
		       "uses a table-valued function or virtual table");
	expect_refused(f, GB_E_DENIED, "SELECT value FROM json_each('[1,2]')",
		       "uses a table-valued function or virtual table");
	expect_refused(f, GB_E_DENIED, "SELECT at FROM events", "reads events.at");
	expect_refused(f, GB_E_DENIED, "SELECT * FROM requests", "reads requests.kind");
	expect_refused(f, GB_E_DENIED, "SELECT rowid FROM requests", "reads requests.ROWID");
	expect_refused(f, GB_E_DENIED, "SELECT id FROM requests WHERE input IS NULL",
		       "reads requests.input");
	/* shapes */
	expect_refused(f, GB_E_DENIED, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
		       "FROM c) SELECT count(*) FROM c", "recursive common table expression");
	expect_refused(f, GB_E_DENIED, "EXPLAIN SELECT id FROM requests",
		       "does not start with SELECT or WITH");
	expect_refused(f, GB_E_DENIED, "VALUES (1)", "does not start with SELECT or WITH");
	expect_refused(f, GB_E_DENIED, "SELECT id FROM requests WHERE id = ?",
		       "has parameters, which nothing binds");
	expect_refused(f, GB_E_DENIED, "", "empty");
	expect_refused(f, GB_E_DENIED, "  -- nothing\n", "empty");
	expect_refused(f, GB_E_INVALID, "SELEC id FROM requests", "not valid SQLite");
	expect_refused(f, GB_E_INVALID, "SELECT id FROM no_such_table", "no such table");
	/* nothing changed, the handle still reads */
	assert_int_equal(ts_int(f->path, "SELECT count(*) FROM requests"), before);
	assert_int_equal(ts_int(f->path, "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
				"AND name = 'requests'"), 1);
	{
		long n = 0;
		gb_error_t e = { 0 };

		tu_ok(gb_state_request_count(f->st, -1, &n, &e), &e);
		assert_int_equal(n, before);
	}
}

/* A cross join of 42^4 rows: cut at the row limit, or stopped in time. */
static void test_limits(void **state)
{
	struct ts_fx *f = *state;
	static const char join[] = "SELECT a.node, b.node FROM request_nodes a, request_nodes b, "
				   "request_nodes c, request_nodes d";
	struct gb_state_query_info info;
	struct got g;
	gb_error_t e = { 0 };
	gb_err_t rc;
	double t0;

	tu_ok(run(f, join, 10, 0, &g, &info, &e), &e);
	assert_int_equal(info.rows, 10);
	assert_true(info.cut);
	gb_buf_free(&g.text);
	/* exactly the limit: not cut */
	tu_ok(run(f, "SELECT node FROM request_nodes", 42, 0, &g, &info, &e), &e);
	assert_int_equal(info.rows, 42);
	assert_false(info.cut);
	gb_buf_free(&g.text);

	t0 = gb_time_mono();
	assert_int_equal(run(f, "SELECT count(*) FROM request_nodes a, request_nodes b, "
			     "request_nodes c, request_nodes d, request_nodes e", 0, 0.3, &g,
			     &info, &e), GB_E_TIMEOUT);
	assert_non_null(strstr(e.text, "stopped: the query ran into the time limit after 0 rows"));
	assert_true(gb_time_mono() - t0 < 3);	/* loosely: timings belong in bench/ */
	assert_true(info.seconds >= 0.3);
	gb_buf_free(&g.text);

	/* rows before the time limit are delivered */
	assert_int_equal(run(f, "SELECT 'first' AS x UNION ALL SELECT count(*) FROM request_nodes a, "
			     "request_nodes b, request_nodes c, request_nodes d, request_nodes e",
			     0, 0.3, &g, &info, &e), GB_E_TIMEOUT);
	assert_string_equal(gb_buf_str(&g.text), "x\nfirst\n");
	assert_int_equal(info.rows, 1);
	assert_non_null(strstr(e.text, "after 1 row"));
	gb_buf_free(&g.text);

	/*
	 * a value past GB_STATE_QUERY_VALUE_MAX is never delivered: printf()
	 * gives NULL instead (SQLite 3.40) or fails the query (3.53)
	 */
	rc = run(f, "SELECT printf('%.*c', 2000000, 'x') IS NULL FROM requests LIMIT 1", 0, 0,
		 &g, &info, &e);
	if (rc == GB_E_OK)
		assert_string_equal(gb_buf_str(&g.text), "printf('%.*c', 2000000, 'x') IS NULL\n1\n");
	else if (rc != GB_E_INVALID || !strstr(e.text, "string or blob too big"))
		fail_msg("printf() past the value limit: rc %d '%s'", rc, e.text);
	gb_buf_free(&g.text);
	assert_int_equal(run(f, "SELECT replace(printf('%.*c', 900000, 'x'), 'x', 'yy') "
			     "FROM requests", 0, 0, &g, &info, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "the query failed after 0 rows: string or blob too big"));
	gb_buf_free(&g.text);
}

/* A read-write handle is refused; the limits are restored after a query. */
static void test_handle(void **state)
{
	struct ts_fx *f = *state;
	struct gb_state_query_opts o = { cols, 0, 0 };
	gb_state_t *rw = NULL;
	gb_error_t e = { 0 };
	char big[GB_STATE_QUERY_SQL_MAX + 64];

	tu_ok(gb_state_open(f->path, 0, TS_BUSY_MS, &rw, &e), &e);
	assert_int_equal(gb_state_query(rw, "SELECT id FROM requests", &o, NULL, NULL, NULL, &e),
			 GB_E_INVALID);
	assert_non_null(strstr(e.text, "must be opened read-only"));
	gb_state_close(rw);
	o.columns = NULL;
	assert_int_equal(gb_state_query(f->st, "SELECT 1", &o, NULL, NULL, NULL, &e),
			 GB_E_INVALID);
	o.columns = cols;
	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "SELECT 1", 8);
	assert_int_equal(gb_state_query(f->st, big, &o, NULL, NULL, NULL, &e), GB_E_DENIED);
	assert_non_null(strstr(e.text, "longer than 65536 bytes"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_select, setup, ts_teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, ts_teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, ts_teardown),
		cmocka_unit_test_setup_teardown(test_handle, setup, ts_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
