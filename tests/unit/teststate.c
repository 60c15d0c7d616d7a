/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * teststate.c - helpers shared by the unit tests of libstate and its users
 * (teststate.h)
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "gb_err.h"
#include "gb_state.h"
#include "teststate.h"
#include "testutil.h"

int ts_setup(void **state, const char *name, const char *file)
{
	struct ts_fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	if (tu_tmpdir(f->dir, sizeof(f->dir), name, f->path, sizeof(f->path), file)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

int ts_teardown(void **state)
{
	struct ts_fx *f = *state;

	gb_state_close(f->st);
	tu_rmtree(f->dir);
	free(f);
	return 0;
}

void ts_open(struct ts_fx *f)
{
	gb_error_t e = { 0 };

	tu_ok(gb_state_open(f->path, 0, TS_BUSY_MS, &f->st, &e), &e);
}

void ts_sql(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(db);
}

int ts_sql_rc(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	int rc;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc;
}

long ts_int(const char *path, const char *sql)
{
	sqlite3_stmt *s = NULL;
	sqlite3 *db = NULL;
	long v = -1;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		v = (long)sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

char *ts_table_sql(const char *path, const char *table)
{
	sqlite3_stmt *s = NULL;
	sqlite3 *db = NULL;
	char *sql;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_master "
					    "WHERE type = 'table' AND name = ?", -1, &s, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	sql = strdup((const char *)sqlite3_column_text(s, 0));
	assert_non_null(sql);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return sql;
}

void ts_request(gb_state_t *st, enum gb_request_state state, const char *nodes, int count,
		const char *home, char id[GB_REQUEST_ID_LEN + 1])
{
	struct gb_request r = { .id = "" };
	gb_error_t e = { 0 };

	r.kind = GB_REQ_RESUME;
	r.state = state;
	r.nodes = nodes;
	r.node_count = count;
	r.nodeset = "g5";
	r.instance_type = "g5.xlarge";
	r.home_region = home;
	tu_ok(gb_state_request_add(st, &r, &e), &e);
	memcpy(id, r.id, GB_REQUEST_ID_LEN + 1);
}
