/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_state_capacity.c - libstate schema 3, the capacity ladder: capacity
 * memory per capacity kind, the kind and target of attempts and instances,
 * the reservations cache, the migration of a version 2 file
 *
 * Version 2 files are made with the released migration scripts and edited
 * with a second SQLite connection.  Every test works in its own mkdtemp
 * directory, removed afterwards.
 */
#include "config.h"

#include <math.h>
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
#include "gb_state_int.h"	/* gb_state_migrations, the name tables */
#include "gb_str.h"
#include "gb_util.h"
#include "teststate.h"
#include "testutil.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/*****************************************************************************
 *  Helpers
 *****************************************************************************/

static int setup(void **state)
{
	return ts_setup(state, "capacity", "state.db");
}

/*
 * A version 2 file, as gpuburst 2 left it: the released scripts 1 and 2,
 * capacity memory of one pool (and a region-level row), a running request
 * with a started attempt and an instance; then [extra] (may be NULL).
 */
static void make_v2(struct ts_fx *f, const char *extra)
{
	ts_sql(f->path, gb_state_migrations[1]);
	ts_sql(f->path, gb_state_migrations[2]);
	ts_sql(f->path,
	       "INSERT INTO capacity_stats (region, az, instance_type, asked, got, ice, "
	       "updated_at, level_sum, level_n, floor_sum, floor_n) VALUES "
	       "('ap-south-1', 'ap-south-1a', 'g5.xlarge', 4, 3, 1, 1e9, 6, 2, 0, 0), "
	       "('ap-south-1', '', 'g5.xlarge', 1, 1, 0, 1e9, 0, 0, 5, 1);"
	       "INSERT INTO requests (id, kind, state, created_at, updated_at) VALUES "
	       "('0123456789abcdef', 'resume', 'running', 1e9, 1e9);"
	       "INSERT INTO attempts (request_id, seq, region, instance_type, min_count, "
	       "asked, client_token, state, started_at) VALUES ('0123456789abcdef', 0, "
	       "'ap-south-1', 'g5.xlarge', 1, 4, 'tok-v2', 'started', 1e9);"
	       "INSERT INTO instances (request_id, region_instance_id, region, instance_id, "
	       "state, launched_at) VALUES ('0123456789abcdef', 'ap-south-1#i-1', "
	       "'ap-south-1', 'i-1', 'running', 1e9);"
	       "PRAGMA user_version = 2;");
	if (extra)
		ts_sql(f->path, extra);
}

static void add_req(struct ts_fx *f, char id[GB_REQUEST_ID_LEN + 1])
{
	ts_request(f->st, GB_RSTATE_RUNNING, "g5-[1-4]", 4, "us-east-1", id);
}

/* Callback sinks: copy what the tests look at (rows are BORROWED). */
struct cap_sink {
	int n;
	struct gb_capacity c[8];
	char az[8][32];
	char kind[8][32];
};

static int cap_cb(const struct gb_capacity *c, void *arg)
{
	struct cap_sink *s = arg;

	assert_non_null(c->capacity);
	if (s->n < 8) {
		s->c[s->n] = *c;
		gb_strlcpy(s->az[s->n], c->az ? c->az : "(null)", sizeof(s->az[0]));
		gb_strlcpy(s->kind[s->n], c->capacity, sizeof(s->kind[0]));
		s->c[s->n].region = s->c[s->n].az = NULL;
		s->c[s->n].instance_type = s->c[s->n].capacity = NULL;
	}
	s->n++;
	return 0;
}

static struct cap_sink cap_list(struct ts_fx *f, double now)
{
	struct cap_sink s = { 0 };
	gb_error_t e = { 0 };

	tu_ok(gb_state_capacity_list(f->st, NULL, now, 3600, cap_cb, &s, &e), &e);
	return s;
}

/* One launch row's kind and target: "kind target" ("-" for NULL). */
struct launch_sink {
	int n;
	char what[8][96];
};

static void launch_add(struct launch_sink *s, const char *id, const char *capacity,
		       const char *target)
{
	assert_non_null(capacity);
	if (s->n < 8)
		snprintf(s->what[s->n], sizeof(s->what[0]), "%s %s %s", id, capacity,
			 target ? target : "-");
	s->n++;
}

static int att_cb(const struct gb_attempt *a, void *arg)
{
	launch_add(arg, a->client_token, a->capacity, a->capacity_target);
	return 0;
}

static int inst_cb(const struct gb_instance *in, void *arg)
{
	launch_add(arg, in->instance_id, in->capacity, in->capacity_target);
	return 0;
}

static struct launch_sink inst_list(struct ts_fx *f, const struct gb_instance_filter *flt)
{
	struct launch_sink s = { 0 };
	gb_error_t e = { 0 };

	tu_ok(gb_state_instance_list(f->st, flt, inst_cb, &s, &e), &e);
	return s;
}

struct res_sink {
	int n, stop;			/* stop: the callback returns 1 at the stop-th row */
	char what[8][160];		/* "region id type az kind state match total/available" */
	double start[8], end[8], fetched[8];
};

static int res_cb(const struct gb_reservation *r, void *arg)
{
	struct res_sink *s = arg;

	if (s->n < 8) {
		snprintf(s->what[s->n], sizeof(s->what[0]), "%s %s %s %s %s %s %s %d/%d",
			 r->region, r->id, r->instance_type, r->az, r->kind, r->state, r->match,
			 r->total, r->available);
		s->start[s->n] = r->start_at;
		s->end[s->n] = r->end_at;
		s->fetched[s->n] = r->fetched_at;
	}
	s->n++;
	return s->stop && s->n >= s->stop;
}

static struct res_sink res_list(struct ts_fx *f, const char *region, double min_fetched_at)
{
	struct res_sink s = { 0 };
	gb_error_t e = { 0 };

	tu_ok(gb_state_reservation_list(f->st, region, min_fetched_at, res_cb, &s, &e), &e);
	return s;
}

/*****************************************************************************
 *  Migration from version 2
 *****************************************************************************/

/* Rows of a version 2 file become on-demand; the kind is in the key since. */
static void test_migrate_v2(void **state)
{
	struct ts_fx *f = *state;
	struct gb_instance_filter any = GB_INSTANCE_FILTER_ANY;
	struct launch_sink l = { 0 };
	struct cap_sink s;
	gb_error_t e = { 0 };
	char *sql;

	make_v2(f, NULL);
	ts_open(f);
	/* and on to the current version (test_state_agent.c: 4) */
	assert_int_equal(gb_state_schema_version(f->st), GB_STATE_SCHEMA_VERSION);
	s = cap_list(f, 1e9);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.az[0], "(null)");		/* '' sorts first */
	assert_string_equal(s.kind[0], "on-demand");
	NEAR(s.c[0].floor_sum, 5);
	NEAR(s.c[0].floor_n, 1);
	assert_string_equal(s.az[1], "ap-south-1a");
	assert_string_equal(s.kind[1], "on-demand");
	NEAR(s.c[1].asked, 4);
	NEAR(s.c[1].got, 3);
	NEAR(s.c[1].ice, 1);
	NEAR(s.c[1].level_sum, 6);
	NEAR(s.c[1].level_n, 2);
	NEAR(s.c[1].updated_at, 1e9);
	/* the attempt and the instance of version 2 were on-demand, untargeted */
	tu_ok(gb_state_attempt_list(f->st, NULL, att_cb, &l, &e), &e);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.what[0], "tok-v2 on-demand -");
	l = inst_list(f, &any);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.what[0], "i-1 on-demand -");

	/* the same pool for spot is a row of its own; on-demand is the old one */
	tu_ok(gb_state_capacity_record(f->st, "ap-south-1", "ap-south-1a", "g5.xlarge", "spot", 2,
				       0, true, false, 1e9, 3600, &e), &e);
	tu_ok(gb_state_capacity_record(f->st, "ap-south-1", "ap-south-1a", "g5.xlarge", NULL, 1, 1,
				       false, false, 1e9, 3600, &e), &e);
	s = cap_list(f, 1e9);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.kind[1], "on-demand");
	NEAR(s.c[1].got, 4);
	NEAR(s.c[1].ice, 1);
	assert_string_equal(s.kind[2], "spot");
	NEAR(s.c[2].got, 0);
	NEAR(s.c[2].ice, 1);
	NEAR(s.c[2].asked, 2);
	/* the key itself refuses a second on-demand row of the pool */
	assert_int_equal(ts_int(f->path, "SELECT count(*) FROM capacity_stats WHERE "
				"az = 'ap-south-1a' AND capacity = 'on-demand'"), 1);

	/* rebuilt WITHOUT ROWID with every column and CHECK of versions 1 and 2 */
	sql = ts_table_sql(f->path, "capacity_stats");
	assert_non_null(strstr(sql, "PRIMARY KEY (region, az, instance_type, capacity)"));
	assert_non_null(strstr(sql, ") WITHOUT ROWID"));
	assert_non_null(strstr(sql, "CHECK (asked >= 0)"));
	assert_non_null(strstr(sql, "CHECK (failures >= 0)"));
	assert_non_null(strstr(sql, "CHECK (floor_n >= 0)"));
	assert_non_null(strstr(sql, "last_success_at REAL NOT NULL DEFAULT 0"));
	free(sql);
	assert_int_equal(ts_int(f->path, "SELECT count(*) FROM sqlite_master "
				"WHERE name = 'capacity_stats_v3'"), 0);
	assert_int_equal(ts_int(f->path, "SELECT count(*) FROM pragma_table_info("
				"'capacity_stats')"), 15);
	/* the reservations cache is there, empty */
	assert_int_equal(ts_int(f->path, "SELECT count(*) FROM capacity_reservations"), 0);
	tu_ok(gb_state_check(f->st, &e), &e);
}

/* A file of every version since the first migrates to the same schema. */
static void test_migrate_same_schema(void **state)
{
	static const char *const tables[] = { "capacity_stats", "attempts", "instances",
					      "capacity_reservations" };
	struct ts_fx *f = *state;
	char other[200];

	ts_open(f);	/* a new file: versions 1, 2, 3 in a row */
	gb_state_close(f->st);
	f->st = NULL;
	snprintf(other, sizeof(other), "%s/v2.db", f->dir);
	{
		struct ts_fx g = *f;

		gb_strlcpy(g.path, other, sizeof(g.path));
		make_v2(&g, NULL);
		ts_open(&g);
		gb_state_close(g.st);
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(tables); i++) {
		char *a = ts_table_sql(f->path, tables[i]), *b = ts_table_sql(other, tables[i]);

		assert_string_equal(a, b);
		free(a);
		free(b);
	}
}

/* A migration that fails leaves the file at the version it had. */
static void test_migrate_v3_fails_whole(void **state)
{
	struct ts_fx *f = *state;
	gb_error_t e = { 0 };

	/* the rebuild's new table already exists: step 3 fails half-way */
	make_v2(f, "CREATE TABLE capacity_stats_v3 (x);");
	assert_int_equal(gb_state_open(f->path, 0, TS_BUSY_MS, &f->st, &e), GB_E_STATE);
	assert_non_null(strstr(e.text, "capacity_stats_v3"));
	assert_null(f->st);
	assert_int_equal(ts_int(f->path, "PRAGMA user_version"), 2);
	assert_int_equal(ts_int(f->path, "SELECT count(*) FROM capacity_stats"), 2);
	assert_int_equal(ts_int(f->path, "SELECT count(*) FROM capacity_stats "
				"WHERE capacity = 'on-demand'"), -1);
	assert_int_equal(ts_int(f->path, "SELECT count(capacity) FROM attempts"), -1);
	assert_int_equal(ts_int(f->path, "SELECT count(*) FROM sqlite_master "
				"WHERE name = 'capacity_reservations'"), 0);
	/* once the obstacle is gone, the next open migrates */
	ts_sql(f->path, "DROP TABLE capacity_stats_v3;");
	ts_open(f);
	assert_int_equal(gb_state_schema_version(f->st), GB_STATE_SCHEMA_VERSION);
	assert_int_equal(cap_list(f, 1e9).n, 2);
}

/*****************************************************************************
 *  Capacity memory per kind
 *****************************************************************************/

static void test_capacity_kinds(void **state)
{
	struct ts_fx *f = *state;
	const double t0 = 1e9, hl = 3600;
	struct cap_sink s;
	gb_error_t e = { 0 };

	ts_open(f);
	/* on-demand gave all 4 it was asked; spot in the same AZ ran dry at 0 */
	tu_ok(gb_state_capacity_record(f->st, "us-east-1", "us-east-1a", "g5.xlarge", NULL, 4, 4,
				       false, false, t0, hl, &e), &e);
	tu_ok(gb_state_capacity_level(f->st, "us-east-1", "us-east-1a", "g5.xlarge", "on-demand",
				      4, false, t0, hl, &e), &e);
	tu_ok(gb_state_capacity_record(f->st, "us-east-1", "us-east-1a", "g5.xlarge", "spot", 4, 0,
				       true, false, t0, hl, &e), &e);
	tu_ok(gb_state_capacity_level(f->st, "us-east-1", "us-east-1a", "g5.xlarge", "spot", 0,
				      true, t0, hl, &e), &e);
	s = cap_list(f, t0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.kind[0], "on-demand");
	NEAR(s.c[0].got, 4);
	NEAR(s.c[0].ice, 0);
	NEAR(s.c[0].last_ice_at, 0);
	NEAR(s.c[0].level_n, 0);
	NEAR(s.c[0].floor_sum, 4);
	NEAR(s.c[0].floor_n, 1);
	assert_string_equal(s.kind[1], "spot");
	NEAR(s.c[1].got, 0);
	NEAR(s.c[1].ice, 1);
	NEAR(s.c[1].last_ice_at, t0);
	NEAR(s.c[1].level_sum, 0);
	NEAR(s.c[1].level_n, 1);
	NEAR(s.c[1].floor_n, 0);

	/* each kind of the map has its rows; listed by kind within the pool */
	tu_ok(gb_state_capacity_record(f->st, "us-east-1", "us-east-1a", "g5.xlarge", "reservation",
				       2, 2, false, false, t0, hl, &e), &e);
	tu_ok(gb_state_capacity_level(f->st, "us-east-1", "us-east-1a", "g5.xlarge",
				      "capacity-block", 8, true, t0, hl, &e), &e);
	s = cap_list(f, t0 + hl);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.kind[0], "capacity-block");
	NEAR(s.c[0].level_sum, 4);	/* decayed like the rest */
	assert_string_equal(s.kind[1], "on-demand");
	NEAR(s.c[1].got, 2);
	assert_string_equal(s.kind[2], "reservation");
	assert_string_equal(s.kind[3], "spot");

	/* a kind outside the map is refused, named, and nothing is written */
	assert_int_equal(gb_state_capacity_record(f->st, "us-east-1", "us-east-1b", "g5.xlarge",
						  "ondemand", 1, 0, true, false, t0, hl, &e),
			 GB_E_INVALID);
	assert_non_null(strstr(e.text, "\"ondemand\""));
	assert_int_equal(gb_state_capacity_level(f->st, "us-east-1", "us-east-1b", "g5.xlarge",
						 "Spot", 1, true, t0, hl, &e),
			 GB_E_INVALID);
	assert_non_null(strstr(e.text, "\"Spot\""));
	assert_int_equal(gb_state_capacity_level(f->st, "us-east-1", "us-east-1b", "g5.xlarge",
						 "", 1, true, t0, hl, &e),
			 GB_E_INVALID);
	assert_int_equal(cap_list(f, t0).n, 4);
	/* and the CHECK stops a hand edit */
	assert_int_equal(ts_int(f->path, "SELECT count(*) FROM capacity_stats"), 4);
	{
		sqlite3 *db = NULL;

		assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
		sqlite3_busy_timeout(db, TS_BUSY_MS);
		assert_int_equal(sqlite3_exec(db, "UPDATE capacity_stats SET capacity = 'odcr'",
					      NULL, NULL, NULL),
				 SQLITE_CONSTRAINT);
		sqlite3_close(db);
	}
}

/* The name table the CHECK and the validation come from. */
static void test_capacity_names(void **state)
{
	static const char *const names[] = { "on-demand", "spot", "reservation",
					     "capacity-block" };
	gb_error_t e = { 0 };

	(void)state;
	assert_int_equal(GB_STATE_CAPACITY_COUNT, GB_ARRAY_LEN(names));
	for (size_t i = 0; i < GB_ARRAY_LEN(names); i++) {
		assert_string_equal(gb_state_capacity_names[i], names[i]);
		assert_ptr_equal(gb_state_capacity_of(names[i], "x", &e),
				 gb_state_capacity_names[i]);
	}
	assert_string_equal(gb_state_capacity_of(NULL, "x", &e), "on-demand");
	assert_null(gb_state_capacity_of("on-demand ", "testing", &e));
	assert_int_equal(e.code, GB_E_INVALID);
	assert_non_null(strstr(e.text, "testing: unknown capacity kind \"on-demand \""));
	/* a reservation's kinds are the map's last two */
	assert_int_equal(GB_STATE_RES_KIND_COUNT, 2);
	assert_string_equal(gb_state_res_kind_names[0], names[2]);
	assert_string_equal(gb_state_res_kind_names[1], names[3]);
	assert_string_equal(GB_STATE_SQL_IN(GB_RESERVATION_MATCH_MAP), "('open', 'targeted')");
}

/*****************************************************************************
 *  Attempts and instances
 *****************************************************************************/

static void test_launch_capacity(void **state)
{
	struct ts_fx *f = *state;
	struct gb_instance_filter flt = GB_INSTANCE_FILTER_ANY;
	struct gb_attempt a = { 0 }, b;
	struct gb_instance in = { 0 };
	struct launch_sink l = { 0 };
	gb_error_t e = { 0 };
	char id[GB_REQUEST_ID_LEN + 1];

	ts_open(f);
	add_req(f, id);
	a.request_id = id;
	a.region = "us-east-1";
	a.az = "us-east-1a";
	a.instance_type = "g5.xlarge";
	a.min_count = 1;
	a.asked = 2;
	a.client_token = "gb-cap-0";
	tu_ok(gb_state_attempt_begin(f->st, &a, &e), &e);		/* NULL: on-demand */
	b = a;
	b.seq = 1;
	b.client_token = "gb-cap-1";
	b.capacity = "capacity-block";
	b.capacity_target = "cr-0123456789abcdef0";
	tu_ok(gb_state_attempt_begin(f->st, &b, &e), &e);
	b.seq = 2;
	b.client_token = "gb-cap-2";
	b.capacity = "on demand";
	assert_int_equal(gb_state_attempt_begin(f->st, &b, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "\"on demand\""));
	/* finish leaves them as begin wrote them */
	b.capacity = "spot";
	b.capacity_target = NULL;
	b.state = GB_ATTEMPT_OK;
	b.got = 2;
	tu_ok(gb_state_attempt_finish(f->st, &b, &e), &e);
	tu_ok(gb_state_attempt_list(f->st, id, att_cb, &l, &e), &e);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.what[0], "gb-cap-0 on-demand -");
	assert_string_equal(l.what[1], "gb-cap-1 capacity-block cr-0123456789abcdef0");
	/* crash recovery's listing has them too */
	memset(&l, 0, sizeof(l));
	tu_ok(gb_state_attempt_list(f->st, NULL, att_cb, &l, &e), &e);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.what[0], "gb-cap-0 on-demand -");

	in.request_id = id;
	in.region = "us-east-1";
	in.instance_type = "g5.xlarge";
	in.state = GB_INST_RUNNING;
	in.instance_id = "i-1";
	in.launched_at = 1000;
	tu_ok(gb_state_instance_add(f->st, &in, &e), &e);
	in.instance_id = "i-2";
	in.launched_at = 1001;
	in.capacity = "capacity-block";
	in.capacity_target = "cr-0123456789abcdef0";
	in.attempt_id = b.id;
	tu_ok(gb_state_instance_add(f->st, &in, &e), &e);
	in.instance_id = "i-3";
	in.launched_at = 1002;
	in.capacity = "reservation";
	in.capacity_target = "arn:aws:resource-groups:us-east-1:123456789012:group/odcr";
	tu_ok(gb_state_instance_add(f->st, &in, &e), &e);
	in.instance_id = "i-4";
	in.capacity = "spot";
	in.capacity_target = NULL;
	in.state = GB_INST_TERMINATED;
	in.terminated_at = 2000;
	tu_ok(gb_state_instance_add(f->st, &in, &e), &e);
	in.instance_id = "i-5";
	in.capacity = "Reservation";
	assert_int_equal(gb_state_instance_add(f->st, &in, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "\"Reservation\""));

	l = inst_list(f, &flt);
	assert_int_equal(l.n, 4);
	assert_string_equal(l.what[0], "i-1 on-demand -");
	assert_string_equal(l.what[1], "i-2 capacity-block cr-0123456789abcdef0");
	assert_string_equal(l.what[2],
			    "i-3 reservation arn:aws:resource-groups:us-east-1:123456789012:group/odcr");
	assert_string_equal(l.what[3], "i-4 spot -");
	/* the filter, alone and with the others */
	flt.capacity = "capacity-block";
	l = inst_list(f, &flt);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.what[0], "i-2 capacity-block cr-0123456789abcdef0");
	flt.capacity = "on-demand";
	l = inst_list(f, &flt);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.what[0], "i-1 on-demand -");
	flt.capacity = "spot";
	flt.alive = true;
	assert_int_equal(inst_list(f, &flt).n, 0);
	flt.alive = false;
	flt.region = "us-east-1";
	flt.request_id = id;
	assert_int_equal(inst_list(f, &flt).n, 1);
	flt.capacity = "od";
	assert_int_equal(gb_state_instance_list(f->st, &flt, inst_cb, &l, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "\"od\""));
	/* an update leaves the kind and the target */
	memset(&in, 0, sizeof(in));
	in.region = "us-east-1";
	in.instance_id = "i-2";
	in.state = GB_INST_TERMINATED;
	in.terminated_at = 3000;
	in.capacity = "spot";
	tu_ok(gb_state_instance_update(f->st, &in, &e), &e);
	flt = (struct gb_instance_filter)GB_INSTANCE_FILTER_ANY;
	flt.instance_id = "i-2";
	l = inst_list(f, &flt);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.what[0], "i-2 capacity-block cr-0123456789abcdef0");
}

/*****************************************************************************
 *  The reservations cache
 *****************************************************************************/

static const struct gb_reservation east[] = {
	{ .region = "us-east-1", .id = "cr-2", .instance_type = "g5.xlarge",
	  .az = "us-east-1a", .kind = "reservation", .state = "active", .match = "open",
	  .total = 4, .available = 3 },
	{ .id = "cr-1", .instance_type = "p5.48xlarge", .az = "us-east-1b",
	  .kind = "capacity-block", .state = "scheduled", .match = "targeted",
	  .total = 2, .available = 2, .start_at = 2e9, .end_at = 2e9 + 86400,
	  .fetched_at = 42 /* not read */ },
};
static const struct gb_reservation west[] = {
	{ .id = "cr-9", .instance_type = "g5.xlarge", .az = "us-west-2a",
	  .kind = "reservation", .state = "active", .match = "targeted",
	  .total = 1, .available = 1 },
};

static void test_reservations(void **state)
{
	struct ts_fx *f = *state;
	struct res_sink s;
	gb_error_t e = { 0 };

	ts_open(f);
	tu_ok(gb_state_reservations_replace(f->st, "us-east-1", east, 2, 1000, &e), &e);
	tu_ok(gb_state_reservations_replace(f->st, "us-west-2", west, 1, 2000, &e), &e);
	/* by region then id; the region of the call, the time of the call */
	s = res_list(f, NULL, 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.what[0],
			    "us-east-1 cr-1 p5.48xlarge us-east-1b capacity-block scheduled targeted 2/2");
	NEAR(s.start[0], 2e9);
	NEAR(s.end[0], 2e9 + 86400);
	NEAR(s.fetched[0], 1000);
	assert_string_equal(s.what[1],
			    "us-east-1 cr-2 g5.xlarge us-east-1a reservation active open 4/3");
	NEAR(s.start[1], 0);
	NEAR(s.end[1], 0);
	assert_string_equal(s.what[2],
			    "us-west-2 cr-9 g5.xlarge us-west-2a reservation active targeted 1/1");
	NEAR(s.fetched[2], 2000);
	/* one region; the fresh ones; the walk stops when told */
	s = res_list(f, "us-east-1", 0);
	assert_int_equal(s.n, 2);
	s = res_list(f, NULL, 1500);
	assert_int_equal(s.n, 1);
	assert_non_null(strstr(s.what[0], " cr-9 "));
	s = res_list(f, NULL, 2000);
	assert_int_equal(s.n, 1);
	s = res_list(f, "us-east-1", 1001);
	assert_int_equal(s.n, 0);
	memset(&s, 0, sizeof(s));
	s.stop = 1;
	tu_ok(gb_state_reservation_list(f->st, NULL, 0, res_cb, &s, &e), &e);
	assert_int_equal(s.n, 1);
	tu_ok(gb_state_reservation_list(f->st, NULL, 0, NULL, NULL, &e), &e);
	assert_int_equal(gb_state_reservation_list(f->st, "", 0, res_cb, &s, &e), GB_E_INVALID);
	assert_int_equal(gb_state_reservation_list(f->st, NULL, NAN, res_cb, &s, &e),
			 GB_E_INVALID);

	/* take: counts down, not below 0 */
	tu_ok(gb_state_reservation_take(f->st, "us-east-1", "cr-2", 2, &e), &e);
	s = res_list(f, "us-east-1", 0);
	assert_non_null(strstr(s.what[1], " cr-2 "));
	assert_non_null(strstr(s.what[1], " 4/1"));
	tu_ok(gb_state_reservation_take(f->st, "us-east-1", "cr-2", 5, &e), &e);
	tu_ok(gb_state_reservation_take(f->st, "us-east-1", "cr-2", 0, &e), &e);
	s = res_list(f, "us-east-1", 0);
	assert_non_null(strstr(s.what[1], " 4/0"));
	assert_non_null(strstr(s.what[0], " 2/2"));	/* the other untouched */
	assert_int_equal(gb_state_reservation_take(f->st, "us-west-2", "cr-2", 1, &e),
			 GB_E_NOTFOUND);
	assert_non_null(strstr(e.text, "cr-2"));
	assert_int_equal(gb_state_reservation_take(f->st, "us-east-1", "cr-404", 1, &e),
			 GB_E_NOTFOUND);
	assert_int_equal(gb_state_reservation_take(f->st, "us-east-1", "cr-2", -1, &e),
			 GB_E_INVALID);
	assert_int_equal(gb_state_reservation_take(f->st, "us-east-1", NULL, 1, &e),
			 GB_E_INVALID);
	assert_int_equal(gb_state_reservation_take(f->st, "", "cr-2", 1, &e), GB_E_INVALID);

	/* replace again: the region's old rows go, the other region's stay */
	tu_ok(gb_state_reservations_replace(f->st, "us-east-1", &east[1], 1, 3000, &e), &e);
	s = res_list(f, NULL, 0);
	assert_int_equal(s.n, 2);
	assert_non_null(strstr(s.what[0], "us-east-1 cr-1 "));
	NEAR(s.fetched[0], 3000);
	assert_non_null(strstr(s.what[1], "us-west-2 cr-9 "));
	NEAR(s.fetched[1], 2000);
	/* nothing: the region has none left; 0 is now */
	tu_ok(gb_state_reservations_replace(f->st, "us-east-1", NULL, 0, 0, &e), &e);
	assert_int_equal(res_list(f, "us-east-1", 0).n, 0);
	assert_int_equal(res_list(f, NULL, 0).n, 1);
	tu_ok(gb_state_reservations_replace(f->st, "us-east-1", east, 1, 0, &e), &e);
	s = res_list(f, "us-east-1", 0);
	assert_int_equal(s.n, 1);
	assert_true(s.fetched[0] > 1.5e9);
}

/* Bad input is refused before anything is written; a failed replace is whole. */
static void test_reservations_invalid(void **state)
{
	struct ts_fx *f = *state;
	struct gb_reservation bad[2];
	gb_error_t e = { 0 };

	ts_open(f);
	tu_ok(gb_state_reservations_replace(f->st, "us-west-2", west, 1, 1000, &e), &e);
#define REFUSED(field, value, needle) \
	do { \
		bad[0] = west[0]; \
		bad[0].field = value; \
		assert_int_equal(gb_state_reservations_replace(f->st, "us-west-2", bad, 1, \
							       2000, &e), \
				 GB_E_INVALID); \
		assert_non_null(strstr(e.text, needle)); \
	} while (0)
	REFUSED(kind, "odcr", "\"odcr\"");
	REFUSED(kind, "on-demand", "\"on-demand\"");	/* not a reservation's */
	REFUSED(kind, NULL, "kind");
	REFUSED(match, "any", "\"any\"");
	REFUSED(id, "", "required");
	REFUSED(id, NULL, "required");
	REFUSED(instance_type, "", "required");
	REFUSED(az, NULL, "required");
	REFUSED(state, "", "required");
	REFUSED(region, "us-east-1", "us-east-1");
	REFUSED(total, -1, "-1");
	REFUSED(available, -2, "-2");
#undef REFUSED
	assert_int_equal(gb_state_reservations_replace(f->st, NULL, west, 1, 0, &e),
			 GB_E_INVALID);
	assert_int_equal(gb_state_reservations_replace(f->st, "", west, 1, 0, &e),
			 GB_E_INVALID);
	assert_int_equal(gb_state_reservations_replace(f->st, "us-west-2", NULL, 1, 0, &e),
			 GB_E_INVALID);
	/* an id twice: EXISTS, and the region keeps what it had */
	bad[0] = bad[1] = west[0];
	bad[1].az = "us-west-2b";
	assert_int_equal(gb_state_reservations_replace(f->st, "us-west-2", bad, 2, 2000, &e),
			 GB_E_EXISTS);
	assert_non_null(strstr(e.text, "cr-9"));
	{
		struct res_sink s = res_list(f, NULL, 0);

		assert_int_equal(s.n, 1);
		assert_string_equal(s.what[0],
				    "us-west-2 cr-9 g5.xlarge us-west-2a reservation active targeted 1/1");
		NEAR(s.fetched[0], 1000);
	}
	/* read-only: no writes */
	{
		gb_state_t *ro = NULL;

		tu_ok(gb_state_open(f->path, GB_STATE_RDONLY, TS_BUSY_MS, &ro, &e), &e);
		assert_int_equal(gb_state_reservation_take(ro, "us-west-2", "cr-9", 1, &e),
				 GB_E_INVALID);
		assert_int_equal(gb_state_reservations_replace(ro, "us-west-2", NULL, 0, 0, &e),
				 GB_E_INVALID);
		tu_ok(gb_state_reservation_list(ro, "us-west-2", 0, NULL, NULL, &e), &e);
		gb_state_close(ro);
	}
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, ts_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_migrate_v2),
		T(test_migrate_same_schema),
		T(test_migrate_v3_fails_whole),
		T(test_capacity_kinds),
		T(test_capacity_names),
		T(test_launch_capacity),
		T(test_reservations),
		T(test_reservations_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
