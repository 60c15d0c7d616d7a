/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * teststate.h - helpers shared by the unit tests of libstate and its
 * users: a fixture with a state file in its own mkdtemp directory, SQL on
 * the file through a second SQLite connection (behind the library's back),
 * a resume request
 *
 * Include after <cmocka.h>.  teststate.c needs libstate, SQLite and
 * testutil.c.
 */
#ifndef GB_TESTS_TESTSTATE_H
#define GB_TESTS_TESTSTATE_H

#include "gb_state.h"

#define TS_BUSY_MS 30000

/* The fixture: a directory, the state file's path in it, a handle. */
struct ts_fx {
	char dir[64];
	char path[160];
	gb_state_t *st;
};

/*
 * cmocka setup: a struct ts_fx in *[state], its directory
 * /tmp/gb-test-[name]-XXXXXX made, its path [file] below it; no handle.
 */
int ts_setup(void **state, const char *name, const char *file);

/* cmocka teardown: close the handle, remove the directory, free. */
int ts_teardown(void **state);

/* Open [f]'s handle on its path (TS_BUSY_MS); fail the test on an error. */
void ts_open(struct ts_fx *f);

/* [sql] on the file through a connection of its own. */
void ts_sql(const char *path, const char *sql);
/* [sql] on [path] by a connection of its own: RET SQLite's result code. */
int ts_sql_rc(const char *path, const char *sql);

/* RET the integer [sql] gives on the file, or -1 when it fails. */
long ts_int(const char *path, const char *sql);

/* RET NEW (free()) the CREATE TABLE text of [table] in [path]. */
char *ts_table_sql(const char *path, const char *table);

/*
 * Add a resume in [state] of nodeset g5 (g5.xlarge) for [nodes] ([count]
 * of them), home region [home]; its id into [id].
 */
void ts_request(gb_state_t *st, enum gb_request_state state, const char *nodes, int count,
		const char *home, char id[GB_REQUEST_ID_LEN + 1]);

#endif /* GB_TESTS_TESTSTATE_H */
