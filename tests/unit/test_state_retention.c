/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_state_retention.c - libstate's deletes: pruning finished requests,
 * forgetting capacity and quota memory, VACUUM
 *
 * Ages are made behind the library's back with a second SQLite connection
 * (the library stamps every row with the clock).  Every test works in its
 * own mkdtemp directory, removed afterwards.
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

#define BUSY_MS 30000
#define DAY 86400.0

struct fx {
	char dir[64];
	char path[160];
	gb_state_t *st;
	sqlite3 *db;		/* the second connection */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	gb_error_t e = { 0 };

	if (!f)
		return -1;
	if (tu_tmpdir(f->dir, sizeof(f->dir), "retention", f->path, sizeof(f->path), "state.db") ||
	    gb_state_open(f->path, 0, BUSY_MS, &f->st, &e) ||
	    sqlite3_open(f->path, &f->db) != SQLITE_OK)
		return -1;
	sqlite3_busy_timeout(f->db, BUSY_MS);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	gb_state_close(f->st);
	sqlite3_close(f->db);
	tu_rmtree(f->dir);
	free(f);
	return 0;
}

__attribute__((format(printf, 2, 3)))
static void sql(struct fx *f, const char *fmt, ...)
{
	char buf[1024], *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (sqlite3_exec(f->db, buf, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", buf, msg);
}

/* RET count(*) of "FROM <what>" (a table and a WHERE clause). */
__attribute__((format(printf, 2, 3)))
static long rows(struct fx *f, const char *fmt, ...)
{
	char what[900], buf[1024];
	sqlite3_stmt *s = NULL;
	va_list ap;
	long n = -1;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(buf, sizeof(buf), "SELECT count(*) FROM %s", what);
	if (sqlite3_prepare_v2(f->db, buf, -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		n = (long)sqlite3_column_int64(s, 0);
	else
		fail_msg("%s: %s", buf, sqlite3_errmsg(f->db));
	sqlite3_finalize(s);
	return n;
}

/* A request in [state] with one event and its request_nodes rows. */
static void add_req(struct fx *f, enum gb_request_state state, const char *nodes,
		    char id[GB_REQUEST_ID_LEN + 1])
{
	gb_error_t e = { 0 };

	ts_request(f->st, state, nodes, 2, "us-east-1", id);
	tu_ok(gb_state_event_add(f->st, id, "enqueue", "source=test", &e), &e);
}

static void add_inst(struct fx *f, const char *req, const char *iid,
		     enum gb_instance_state state)
{
	struct gb_instance in = { 0 };
	gb_error_t e = { 0 };

	in.request_id = req;
	in.region = "us-east-1";
	in.instance_id = iid;
	in.node = "g5-1";
	in.instance_type = "g5.xlarge";
	in.state = state;
	in.launched_at = gb_time_now();
	if (state == GB_INST_TERMINATED || state == GB_INST_LOST)
		in.terminated_at = gb_time_now();
	tu_ok(gb_state_instance_add(f->st, &in, &e), &e);
}

/* Everything of request [id] happened [days] ago. */
static void age(struct fx *f, const char *id, double days)
{
	double d = days * DAY;

	sql(f, "UPDATE requests SET created_at = created_at - %f, updated_at = updated_at - %f WHERE id = '%s'",
	    d, d, id);
	sql(f, "UPDATE events SET at = at - %f WHERE request_id = '%s'", d, id);
	sql(f, "UPDATE plans SET created_at = created_at - %f WHERE request_id = '%s'", d, id);
	sql(f, "UPDATE instances SET launched_at = launched_at - %f, "
	       "terminated_at = CASE WHEN terminated_at > 0 THEN terminated_at - %f ELSE 0 END "
	       "WHERE request_id = '%s'", d, d, id);
}

static long of(struct fx *f, const char *table, const char *id)
{
	return rows(f, "%s WHERE %s = '%s'", table,
		    strcmp(table, "requests") == 0 ? "id" : "request_id", id);
}

/*****************************************************************************
 *  Prune
 *****************************************************************************/

static void test_prune(void **state)
{
	static const char *const tables[] = { "requests", "request_nodes", "plans",
					      "attempts", "approvals", "events",
					      "instances" };
	struct fx *f = *state;
	char old_done[17], old_failed[17], live[17], pend[17], queued[17], running[17];
	char late_inst[17], late_event[17], young[17];
	struct gb_state_prune_counts dry, wet;
	struct gb_plan_row p = { 0 };
	struct gb_attempt a = { 0 };
	struct gb_approval ap = { 0 };
	double cutoff = gb_time_now() - 90 * DAY;
	gb_error_t e = { 0 };

	/* an old done resume with a plan, an attempt, an approval, a closed instance */
	add_req(f, GB_RSTATE_DONE, "g5-[1-2]", old_done);
	p.request_id = old_done;
	p.planner = "heuristic";
	p.status = "used";
	tu_ok(gb_state_plan_add(f->st, &p, NULL, &e), &e);
	a.request_id = old_done;
	a.region = "us-east-1";
	a.instance_type = "g5.xlarge";
	a.min_count = 1;
	a.asked = 2;
	a.client_token = "tok-old-done";
	tu_ok(gb_state_attempt_begin(f->st, &a, &e), &e);
	ap.request_id = old_done;
	ap.state = GB_APPROVAL_APPROVED;
	ap.decided_uid = 0;
	tu_ok(gb_state_approval_add(f->st, &ap, &e), &e);
	add_inst(f, old_done, "i-old-done", GB_INST_TERMINATED);
	age(f, old_done, 100);
	add_req(f, GB_RSTATE_FAILED, "g5-[3-4]", old_failed);
	age(f, old_failed, 120);

	/* old, but not finished, or not over */
	add_req(f, GB_RSTATE_DONE, "g5-[5-6]", live);
	add_inst(f, live, "i-live", GB_INST_RUNNING);
	age(f, live, 100);
	add_req(f, GB_RSTATE_PENDING_APPROVAL, "g5-[7-8]", pend);
	age(f, pend, 100);
	add_req(f, GB_RSTATE_QUEUED, "g5-[9-10]", queued);
	age(f, queued, 100);
	add_req(f, GB_RSTATE_RUNNING, "g5-[11-12]", running);
	age(f, running, 100);
	add_req(f, GB_RSTATE_DONE, "g5-[13-14]", late_inst);
	add_inst(f, late_inst, "i-late", GB_INST_TERMINATED);
	age(f, late_inst, 100);
	sql(f, "UPDATE instances SET terminated_at = %f WHERE request_id = '%s'",
	    cutoff + DAY, late_inst);		/* ran until 89 days ago */
	add_req(f, GB_RSTATE_DONE, "g5-[15-16]", late_event);
	age(f, late_event, 100);
	tu_ok(gb_state_event_add(f->st, late_event, "reconcile", "action=cooldown", &e), &e);
	add_req(f, GB_RSTATE_DONE, "g5-[17-18]", young);
	age(f, young, 10);

	/* global events: one old, one new */
	tu_ok(gb_state_event_add(f->st, NULL, "reconcile", "old", &e), &e);
	sql(f, "UPDATE events SET at = at - %f WHERE detail = 'old'", 95 * DAY);
	tu_ok(gb_state_event_add(f->st, NULL, "reconcile", "new", &e), &e);

	/* a dry run counts what a real one deletes, and deletes nothing */
	tu_ok(gb_state_prune(f->st, cutoff, 0, true, &dry, &e), &e);
	assert_int_equal(dry.requests, 2);
	assert_int_equal(rows(f, "requests"), 9);
	tu_ok(gb_state_prune(f->st, cutoff, 0, false, &wet, &e), &e);
	assert_memory_equal(&dry, &wet, sizeof(dry));
	assert_int_equal(wet.requests, 2);
	assert_int_equal(wet.request_nodes, 4);
	assert_int_equal(wet.plans, 1);
	assert_int_equal(wet.attempts, 1);
	assert_int_equal(wet.approvals, 1);
	assert_int_equal(wet.events, 2);
	assert_int_equal(wet.instances, 1);
	assert_int_equal(wet.global_events, 1);
	/* the old finished ones went with all their rows */
	for (size_t i = 0; i < GB_ARRAY_LEN(tables); i++) {
		assert_int_equal(of(f, tables[i], old_done), 0);
		assert_int_equal(of(f, tables[i], old_failed), 0);
	}
	/* the others stayed whole */
	{
		const char *kept[] = { live, pend, queued, running, late_inst, late_event,
				       young };

		for (size_t i = 0; i < GB_ARRAY_LEN(kept); i++) {
			assert_int_equal(of(f, "requests", kept[i]), 1);
			assert_int_equal(of(f, "request_nodes", kept[i]), 2);
			assert_true(of(f, "events", kept[i]) >= 1);
		}
	}
	assert_int_equal(of(f, "instances", live), 1);
	assert_int_equal(rows(f, "events WHERE request_id IS NULL"), 1);
	assert_int_equal(gb_state_check(f->st, &e), GB_E_OK);

	/* a second pass finds nothing */
	tu_ok(gb_state_prune(f->st, cutoff, 0, false, &wet, &e), &e);
	assert_int_equal(wet.requests + wet.events + wet.global_events, 0);
}

/* [limit]: the oldest first; inside the caller's transaction, its rollback undoes it. */
static void test_prune_limit_and_tx(void **state)
{
	struct fx *f = *state;
	char a[17], b[17], c[17];
	struct gb_state_prune_counts n;
	double cutoff = gb_time_now() - 30 * DAY;
	gb_error_t e = { 0 };

	add_req(f, GB_RSTATE_DONE, "g5-[1-2]", a);
	age(f, a, 50);
	add_req(f, GB_RSTATE_CANCELLED, "g5-[3-4]", b);
	age(f, b, 60);
	add_req(f, GB_RSTATE_EXPIRED, "g5-[5-6]", c);
	age(f, c, 40);

	tu_ok(gb_state_tx_begin(f->st, &e), &e);
	tu_ok(gb_state_prune(f->st, cutoff, 0, false, &n, &e), &e);
	assert_int_equal(n.requests, 3);
	gb_state_tx_rollback(f->st);
	assert_int_equal(rows(f, "requests"), 3);

	tu_ok(gb_state_prune(f->st, cutoff, 1, false, &n, &e), &e);
	assert_int_equal(n.requests, 1);
	assert_int_equal(of(f, "requests", b), 0);	/* the oldest */
	tu_ok(gb_state_prune(f->st, cutoff, 5, false, &n, &e), &e);
	assert_int_equal(n.requests, 2);
	assert_int_equal(rows(f, "requests"), 0);

	assert_int_equal(gb_state_prune(f->st, 0, 0, false, &n, &e), GB_E_INVALID);
}

/* A dry run works on a read-only handle (it writes nothing). */
static void test_prune_dry_read_only(void **state)
{
	struct fx *f = *state;
	struct gb_state_prune_counts n;
	gb_state_t *ro = NULL;
	char a[17];
	gb_error_t e = { 0 };

	add_req(f, GB_RSTATE_DONE, "g5-[1-2]", a);
	age(f, a, 200);
	tu_ok(gb_state_open(f->path, GB_STATE_RDONLY, BUSY_MS, &ro, &e), &e);
	tu_ok(gb_state_prune(ro, gb_time_now() - 90 * DAY, 0, true, &n, &e), &e);
	assert_int_equal(n.requests, 1);
	assert_int_equal(n.request_nodes, 2);
	assert_int_not_equal(gb_state_prune(ro, gb_time_now() - 90 * DAY, 0, false, &n, &e),
			     GB_E_OK);
	gb_state_close(ro);
	assert_int_equal(rows(f, "requests"), 1);
}

/*****************************************************************************
 *  Forget
 *****************************************************************************/

/*
 * Per region: capacity memory of 2 types in 2 AZs (and of spot in the a
 * AZ of the first type), their offerings, 2 quotas, and a reservation of
 * the first type in the a AZ and of the second in the b AZ.
 */
static void memory(struct fx *f)
{
	static const char *const regions[] = { "us-east-1", "eu-west-1" };
	static const char *const types[] = { "g5.xlarge", "g6.xlarge" };
	const double t = gb_time_now(), hl = 3600;
	gb_error_t e = { 0 };

	for (size_t r = 0; r < 2; r++) {
		char cr_az[2][32], id[2][32];
		struct gb_reservation cr[2];

		for (int i = 0; i < 2; i++) {
			snprintf(cr_az[i], sizeof(cr_az[i]), "%s%c", regions[r], 'a' + i);
			snprintf(id[i], sizeof(id[i]), "cr-%zu%d", r, i);
			cr[i] = (struct gb_reservation){ .id = id[i], .instance_type = types[i],
				.az = cr_az[i], .kind = "reservation", .state = "active",
				.match = "open", .total = 2, .available = 2 };
		}
		tu_ok(gb_state_reservations_replace(f->st, regions[r], cr, 2, t, &e), &e);
		tu_ok(gb_state_capacity_level(f->st, regions[r], cr_az[0], types[0], "spot", 1,
					      true, t, hl, &e), &e);
		for (size_t t2 = 0; t2 < 2; t2++) {
			for (char az = 'a'; az <= 'b'; az++) {
				char name[32];

				snprintf(name, sizeof(name), "%s%c", regions[r], az);
				tu_ok(gb_state_capacity_level(f->st, regions[r], name, types[t2], NULL,
							      3, true, t, hl, &e), &e);
				tu_ok(gb_state_offering_put(f->st, regions[r], name, types[t2],
							    true, t, &e), &e);
			}
			tu_ok(gb_state_offering_put(f->st, regions[r], NULL, types[t2], true, t,
						    &e), &e);
		}
		tu_ok(gb_state_quota_record(f->st, regions[r], "vcpus:G", "VcpuLimitExceeded",
					    16, true, t, hl, &e), &e);
		tu_ok(gb_state_quota_record(f->st, regions[r], "instances",
					    "InstanceLimitExceeded", 4, true, t, hl, &e), &e);
	}
}

static void test_forget(void **state)
{
	struct fx *f = *state;
	struct gb_state_forget_counts n;
	gb_error_t e = { 0 };

	memory(f);
	/* one pool of one type: its rows (both kinds), its AZ's offering and
	 * cached reservation */
	tu_ok(gb_state_memory_forget(f->st, "us-east-1", "us-east-1a", "g5.xlarge",
				     GB_STATE_FORGET_CAPACITY, &n, &e), &e);
	assert_int_equal(n.capacity, 2);
	assert_int_equal(n.offerings, 1);
	assert_int_equal(n.reservations, 1);
	assert_int_equal(n.quotas, 0);
	assert_int_equal(rows(f, "capacity_stats WHERE region = 'us-east-1'"), 3);
	assert_int_equal(rows(f, "capacity_reservations WHERE region = 'us-east-1'"), 1);
	/* again: nothing left there, no error */
	tu_ok(gb_state_memory_forget(f->st, "us-east-1", "us-east-1a", "g5.xlarge",
				     GB_STATE_FORGET_CAPACITY, &n, &e), &e);
	assert_int_equal(n.capacity + n.offerings + n.reservations, 0);
	/* one type of a region: every AZ and the region-level offering */
	tu_ok(gb_state_memory_forget(f->st, "us-east-1", NULL, "g6.xlarge",
				     GB_STATE_FORGET_CAPACITY, &n, &e), &e);
	assert_int_equal(n.capacity, 2);
	assert_int_equal(n.offerings, 3);
	assert_int_equal(n.reservations, 1);
	/* a whole region, in the caller's transaction: rolled back, nothing went */
	tu_ok(gb_state_tx_begin(f->st, &e), &e);
	tu_ok(gb_state_memory_forget(f->st, "eu-west-1", NULL, NULL,
				     GB_STATE_FORGET_CAPACITY | GB_STATE_FORGET_QUOTA, &n, &e),
	      &e);
	assert_int_equal(n.capacity, 5);
	assert_int_equal(n.offerings, 6);
	assert_int_equal(n.reservations, 2);
	assert_int_equal(n.quotas, 2);
	gb_state_tx_rollback(f->st);
	assert_int_equal(rows(f, "capacity_stats WHERE region = 'eu-west-1'"), 5);
	assert_int_equal(rows(f, "capacity_reservations WHERE region = 'eu-west-1'"), 2);
	/* quotas only: capacity memory and reservations stay */
	tu_ok(gb_state_memory_forget(f->st, "eu-west-1", NULL, NULL, GB_STATE_FORGET_QUOTA,
				     &n, &e), &e);
	assert_int_equal(n.quotas, 2);
	assert_int_equal(n.capacity + n.reservations, 0);
	assert_int_equal(rows(f, "quota_stats"), 2);
	assert_int_equal(rows(f, "capacity_stats WHERE region = 'eu-west-1'"), 5);
	assert_int_equal(rows(f, "capacity_reservations WHERE region = 'eu-west-1'"), 2);
	/* the rest of us-east-1 is untouched by all of it */
	assert_int_equal(rows(f, "capacity_stats WHERE region = 'us-east-1'"), 1);
	assert_int_equal(rows(f, "capacity_reservations WHERE region = 'us-east-1'"), 0);
	assert_int_equal(rows(f, "quota_stats WHERE region = 'us-east-1'"), 2);

	/* bad arguments change nothing */
	assert_int_equal(gb_state_memory_forget(f->st, "", NULL, NULL,
						GB_STATE_FORGET_CAPACITY, &n, &e),
			 GB_E_INVALID);
	assert_int_equal(gb_state_memory_forget(f->st, "us-east-1", "us-east-1b", NULL,
						GB_STATE_FORGET_QUOTA, &n, &e),
			 GB_E_INVALID);
	assert_int_equal(gb_state_memory_forget(f->st, "us-east-1", NULL, NULL, 0, &n, &e),
			 GB_E_INVALID);
	assert_int_equal(rows(f, "quota_stats WHERE region = 'us-east-1'"), 2);
}

/*****************************************************************************
 *  VACUUM
 *****************************************************************************/

static void test_vacuum(void **state)
{
	struct fx *f = *state;
	struct gb_state_vacuum_info v;
	struct gb_state_prune_counts n;
	char detail[512];
	gb_state_t *ro = NULL;
	gb_error_t e = { 0 };

	memset(detail, 'x', sizeof(detail) - 1);
	detail[sizeof(detail) - 1] = '\0';
	tu_ok(gb_state_tx_begin(f->st, &e), &e);
	for (int i = 0; i < 4000; i++)
		tu_ok(gb_state_event_add(f->st, NULL, "test", detail, &e), &e);
	tu_ok(gb_state_tx_commit(f->st, &e), &e);
	sql(f, "UPDATE events SET at = at - %f", 100 * DAY);
	tu_ok(gb_state_event_add(f->st, NULL, "test", "kept", &e), &e);
	tu_ok(gb_state_prune(f->st, gb_time_now() - 90 * DAY, 0, false, &n, &e), &e);
	assert_int_equal(n.global_events, 4000);

	/* not inside a transaction, not read-only */
	tu_ok(gb_state_tx_begin(f->st, &e), &e);
	assert_int_equal(gb_state_vacuum(f->st, &v, &e), GB_E_INVALID);
	gb_state_tx_rollback(f->st);
	tu_ok(gb_state_open(f->path, GB_STATE_RDONLY, BUSY_MS, &ro, &e), &e);
	assert_int_equal(gb_state_vacuum(ro, &v, &e), GB_E_INVALID);
	gb_state_close(ro);

	tu_ok(gb_state_vacuum(f->st, &v, &e), &e);
	assert_true(v.checkpointed);
	assert_true(v.db_before > 2 * 1024 * 1024);
	assert_true(v.db_after < v.db_before / 4);
	assert_int_equal(v.wal_after, 0);
	assert_int_equal(rows(f, "events"), 1);
	assert_int_equal(gb_state_check(f->st, &e), GB_E_OK);
}

/* A reader on an old snapshot does not make VACUUM fail, only the checkpoint wait. */
static void test_vacuum_with_reader(void **state)
{
	struct fx *f = *state;
	struct gb_state_vacuum_info v;
	gb_state_t *st = NULL;
	sqlite3_stmt *s = NULL;
	gb_error_t e = { 0 };

	tu_ok(gb_state_event_add(f->st, NULL, "test", "one", &e), &e);
	tu_ok(gb_state_open(f->path, 0, 200, &st, &e), &e);
	sql(f, "BEGIN");
	assert_int_equal(sqlite3_prepare_v2(f->db, "SELECT count(*) FROM events", -1, &s,
					    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	tu_ok(gb_state_vacuum(st, &v, &e), &e);
	assert_false(v.checkpointed);
	sqlite3_finalize(s);
	sql(f, "COMMIT");
	tu_ok(gb_state_vacuum(st, &v, &e), &e);
	assert_true(v.checkpointed);
	gb_state_close(st);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_prune),
		T(test_prune_limit_and_tx),
		T(test_prune_dry_read_only),
		T(test_forget),
		T(test_vacuum),
		T(test_vacuum_with_reader),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
