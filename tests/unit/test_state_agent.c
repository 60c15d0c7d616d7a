/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_state_agent.c - libstate schema 4, the instance's side: the
 * gpuburst:agent tag kept on an instance record, the once-per-instance
 * notice mark (gb_state_instance_notice), the migration of a version 3 file
 *
 * Version 3 files are made with the released migration scripts and edited
 * with a second SQLite connection.  Every test works in its own mkdtemp
 * directory, removed afterwards.
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
#include "gb_state_int.h"	/* gb_state_migrations */
#include "gb_str.h"
#include "gb_util.h"
#include "teststate.h"
#include "testutil.h"

#define REQ "0123456789abcdef"

/*****************************************************************************
 *  Helpers
 *****************************************************************************/

static int setup(void **state)
{
	return ts_setup(state, "agent", "state.db");
}

/*
 * A version 3 file, as gpuburst 3 left it: the released scripts 1 to 3, a
 * running request and a spot instance of it; then [extra] (may be NULL).
 */
static void make_v3(const char *path, const char *extra)
{
	ts_sql(path, gb_state_migrations[1]);
	ts_sql(path, gb_state_migrations[2]);
	ts_sql(path, gb_state_migrations[3]);
	ts_sql(path,
	       "INSERT INTO requests (id, kind, state, created_at, updated_at) VALUES "
	       "('" REQ "', 'resume', 'running', 1e9, 1e9);"
	       "INSERT INTO instances (request_id, region_instance_id, region, instance_id, "
	       "node, az, instance_type, state, launched_at, capacity) VALUES ('" REQ "', "
	       "'ap-south-1#i-1', 'ap-south-1', 'i-1', 'g5-1', 'ap-south-1a', 'g5.xlarge', "
	       "'running', 1e9, 'spot');"
	       "PRAGMA user_version = 3;");
	if (extra)
		ts_sql(path, extra);
}

/* What the tests look at of each record: "id agent noticed_at". */
struct sink {
	int n;
	char what[4][320];
	double noticed[4];
};

static int inst_cb(const struct gb_instance *in, void *arg)
{
	struct sink *s = arg;

	if (s->n < 4) {
		snprintf(s->what[s->n], sizeof(s->what[0]), "%s %s %s", in->instance_id,
			 in->capacity, in->agent ? in->agent : "-");
		s->noticed[s->n] = in->noticed_at;
	}
	s->n++;
	return 0;
}

static struct sink list(gb_state_t *st)
{
	struct sink s = { 0 };
	gb_error_t e = { 0 };

	tu_ok(gb_state_instance_list(st, NULL, inst_cb, &s, &e), &e);
	return s;
}

static void add_instance(gb_state_t *st, const char *id, const char *agent)
{
	struct gb_instance in = { 0 };
	gb_error_t e = { 0 };

	in.request_id = REQ;
	in.region = "ap-south-1";
	in.instance_id = id;
	in.node = "g5-2";
	in.az = "ap-south-1b";
	in.instance_type = "g5.xlarge";
	in.capacity = "spot";
	in.state = GB_INST_RUNNING;
	in.launched_at = 2e9;
	in.agent = agent;
	tu_ok(gb_state_instance_add(st, &in, &e), &e);
}

/*****************************************************************************
 *  Migration from version 3
 *****************************************************************************/

static void test_migrate_v3(void **state)
{
	struct ts_fx *f = *state;
	struct sink s;
	gb_error_t e = { 0 };
	char other[200], *a, *b;

	make_v3(f->path, NULL);
	ts_open(f);
	assert_int_equal(gb_state_schema_version(f->st), GB_STATE_SCHEMA_VERSION);
	/* and version 5's index of requests by job */
	assert_int_equal(ts_int(f->path, "SELECT count(*) FROM sqlite_master "
				"WHERE type = 'index' AND name = 'requests_job'"), 1);
	/* the record of version 3 kept everything, has no tag, never noticed */
	s = list(f->st);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.what[0], "i-1 spot -");
	assert_true(s.noticed[0] == 0);
	assert_int_equal(ts_int(f->path, "SELECT count(*) FROM pragma_table_info('instances') "
				"WHERE name IN ('agent', 'noticed_at')"), 2);
	tu_ok(gb_state_check(f->st, &e), &e);
	gb_state_close(f->st);
	f->st = NULL;

	/* the same table as a file made at version 4 */
	snprintf(other, sizeof(other), "%s/new.db", f->dir);
	{
		gb_state_t *st = NULL;

		tu_ok(gb_state_open(other, 0, TS_BUSY_MS, &st, &e), &e);
		gb_state_close(st);
	}
	a = ts_table_sql(f->path, "instances");
	b = ts_table_sql(other, "instances");
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "noticed_at REAL NOT NULL DEFAULT 0"));
	free(a);
	free(b);
}

/* A migration that fails leaves the file at the version it had. */
static void test_migrate_v4_fails_whole(void **state)
{
	struct ts_fx *f = *state;
	gb_error_t e = { 0 };

	/* noticed_at exists already: step 4 fails at its second statement */
	make_v3(f->path, "ALTER TABLE instances ADD COLUMN noticed_at INTEGER;");
	assert_int_equal(gb_state_open(f->path, 0, TS_BUSY_MS, &f->st, &e), GB_E_STATE);
	assert_non_null(strstr(e.text, "noticed_at"));
	assert_null(f->st);
	assert_int_equal(ts_int(f->path, "PRAGMA user_version"), 3);
	/* its first statement was rolled back with it */
	assert_int_equal(ts_int(f->path, "SELECT count(*) FROM pragma_table_info('instances') "
				"WHERE name = 'agent'"), 0);
}

/*****************************************************************************
 *  The agent tag and the notice mark
 *****************************************************************************/

static void test_agent_tag(void **state)
{
	struct ts_fx *f = *state;
	struct gb_instance up = { 0 };
	gb_error_t e = { 0 };
	struct sink s;

	ts_open(f);
	add_instance(f->st, "i-2", NULL);
	add_instance(f->st, "i-3", "ok: slurmd started as node g5-2");
	up.region = "ap-south-1";
	up.instance_id = "i-2";
	up.state = GB_INST_RUNNING;
	up.agent = "unhealthy: nvidia-smi: 3 GPUs, expected 4";
	tu_ok(gb_state_instance_update(f->st, &up, &e), &e);
	/* an update without a tag keeps the one recorded */
	up.agent = NULL;
	up.state = GB_INST_TERMINATED;
	up.terminated_at = 2e9 + 60;
	up.reason = "unhealthy";
	tu_ok(gb_state_instance_update(f->st, &up, &e), &e);
	s = list(f->st);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.what[0], "i-2 spot unhealthy: nvidia-smi: 3 GPUs, expected 4");
	assert_string_equal(s.what[1], "i-3 spot ok: slurmd started as node g5-2");
}

/* Once per instance, whoever asks, and only with what it guards. */
static void test_notice_once(void **state)
{
	struct ts_fx *f = *state;
	gb_state_t *other = NULL;
	gb_error_t e = { 0 };
	bool first = true;
	struct sink s;

	ts_open(f);
	add_instance(f->st, "i-2", NULL);
	add_instance(f->st, "i-3", NULL);

	/* a rolled back transaction leaves it unnoticed */
	tu_ok(gb_state_tx_begin(f->st, &e), &e);
	tu_ok(gb_state_instance_notice(f->st, REQ, "ap-south-1", "i-2", 2e9 + 5, &first, &e), &e);
	assert_true(first);
	gb_state_tx_rollback(f->st);
	assert_true(list(f->st).noticed[0] == 0);

	tu_ok(gb_state_instance_notice(f->st, REQ, "ap-south-1", "i-2", 2e9 + 10, &first, &e), &e);
	assert_true(first);
	tu_ok(gb_state_instance_notice(f->st, REQ, "ap-south-1", "i-2", 2e9 + 20, &first, &e), &e);
	assert_false(first);
	/* another process (another handle) sees it noticed too */
	tu_ok(gb_state_open(f->path, 0, TS_BUSY_MS, &other, &e), &e);
	tu_ok(gb_state_instance_notice(other, REQ, "ap-south-1", "i-2", 2e9 + 30, &first, &e), &e);
	assert_false(first);
	tu_ok(gb_state_instance_notice(other, REQ, "ap-south-1", "i-3", 2e9 + 30, &first, &e), &e);
	assert_true(first);
	gb_state_close(other);
	/* the first mark stays; no record is no mark */
	s = list(f->st);
	assert_true(s.noticed[0] == 2e9 + 10);
	assert_true(s.noticed[1] == 2e9 + 30);
	tu_ok(gb_state_instance_notice(f->st, REQ, "ap-south-1", "i-9", 2e9, &first, &e), &e);
	assert_false(first);
	tu_ok(gb_state_instance_notice(f->st, "fedcba9876543210", "ap-south-1", "i-3", 2e9, &first,
				       &e), &e);
	assert_false(first);
	assert_int_equal(gb_state_instance_notice(f->st, REQ, "ap-south-1", NULL, 2e9, &first,
						  &e), GB_E_INVALID);
	assert_int_equal(gb_state_instance_notice(f->st, REQ, "ap-south-1", "i-3", 0, &first,
						  &e), GB_E_INVALID);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, ts_teardown)
	const struct CMUnitTest tests[] = {
		T(test_migrate_v3),
		T(test_migrate_v4_fails_whole),
		T(test_agent_tag),
		T(test_notice_once),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
