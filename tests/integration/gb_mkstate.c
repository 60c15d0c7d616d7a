/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_mkstate.c - build state files for the gpuburstctl tests through libstate
 * and libpolicy (the same calls the programs make)
 *
 *   gb_mkstate STATE fixture
 *       a done resume with plans, attempts (the second, and its instances,
 *       into a targeted reservation), instances and events, a pending
 *       approval, a denied request, a suspend and capacity memory; prints
 *       "NAME ID" per request
 *   gb_mkstate STATE pending CONFIG JOB TIMEOUT NODESET NODES [NODESET NODES]...
 *       the resume requests of one Slurm call for job JOB (0: none), gated
 *       together by the approval policy of CONFIG with an approval timeout
 *       of TIMEOUT seconds; prints "ID STATE" per request
 *   gb_mkstate STATE instance REQUEST_ID REGION INSTANCE_ID NODE [AGE [AZ [CAPACITY]]]
 *       a running g5.xlarge instance record launched AGE seconds ago
 *       (default 3600), in AZ (default none), of the capacity kind
 *       CAPACITY (default on-demand)
 *   gb_mkstate STATE running NODES
 *       a running resume of nodeset g5 for NODES; prints its id
 *   gb_mkstate STATE events REQUEST_ID GAP_MS KIND...
 *       one event of each KIND for the request, GAP_MS milliseconds apart
 *   gb_mkstate STATE age REQUEST_ID DAYS
 *       move everything of the request DAYS days back (the library stamps
 *       rows with the clock; this edits the file behind its back)
 *   gb_mkstate STATE memory
 *       capacity memory as the default strategy writes it (levels, lower
 *       bounds, an ICE), quota memory and cached offerings
 *   gb_mkstate STATE ladder
 *       capacity memory of two kinds of one pool (on-demand, spot) and two
 *       cached reservations
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gb_conf.h"
#include "gb_hostlist.h"
#include "gb_policy.h"
#include "gb_state.h"
#include "gb_util.h"

#include <sqlite3.h>

static gb_state_t *st;

static void check(gb_err_t rc, const char *what, const gb_error_t *e)
{
	if (rc == GB_E_OK)
		return;
	fprintf(stderr, "gb_mkstate: %s: %s\n", what, e->text);
	exit(1);
}

static int count_hosts(const char *expr)
{
	gb_hostlist_t *hl = NULL;
	gb_error_t e = { 0 };
	int n;

	check(gb_hostlist_parse(expr, &hl, &e), expr, &e);
	n = (int)gb_hostlist_count(hl);
	gb_hostlist_destroy(hl);
	return n;
}

static void add_request(struct gb_request *r, enum gb_request_kind kind,
			enum gb_request_state state, const char *nodeset,
			int64_t job, const char *nodes)
{
	gb_error_t e = { 0 };

	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->state = state;
	r->nodeset = nodeset;
	r->job_id = job;
	r->nodes = nodes;
	r->node_count = count_hosts(nodes);
	r->instance_type = nodeset ? "g5.xlarge" : NULL;
	r->home_region = nodeset ? "ap-southeast-1" : NULL;
	r->input = job ? "{\"job_id\":4711,\"nodes\":\"g5-[1-4]\"}" : NULL;
	check(gb_state_request_add(st, r, &e), "request", &e);
	check(gb_state_event_add(st, r->id, "enqueue", "source=test", &e),
	      "event", &e);
}

static void fixture_done(void)
{
	static const char *body =
		"{\"instance_type\":\"g5.xlarge\",\"total\":4,\"planner\":\"heuristic\","
		"\"steps\":[{\"region\":\"ap-south-1\",\"az\":\"ap-south-1a\","
		"\"subnet\":\"subnet-1\",\"batch\":4,\"expect\":2,\"reason\":\"nearest\"},"
		"{\"region\":\"ap-northeast-1\",\"az\":\"ap-northeast-1a\","
		"\"subnet\":\"subnet-3\",\"batch\":4,\"expect\":0,\"reason\":\"next\"}]}";
	const char *nodes[] = { "g5-1", "g5-2", "g5-3", "g5-4" };
	struct gb_plan_row p = { 0 };
	struct gb_attempt a = { 0 };
	struct gb_request r;
	gb_error_t e = { 0 };
	double now = gb_time_now();

	add_request(&r, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5", 4711, "g5-[1-4]");
	p.request_id = r.id;
	p.planner = "llm:openai";
	p.status = "rejected";
	p.reason = "step 1: ap-east-1 is not in the allowed regions";
	p.rationale = "Hong Kong is closest to Singapore";
	p.body = "{\"instance_type\":\"g5.xlarge\",\"total\":4,\"steps\":[]}";
	check(gb_state_plan_add(st, &p, NULL, &e), "plan", &e);
	p.planner = "heuristic";
	p.status = "fallback";
	p.reason = "2 pools in 2 regions";
	p.rationale = "nearest regions of the group first";
	p.body = body;
	check(gb_state_plan_add(st, &p, NULL, &e), "plan", &e);

	a.request_id = r.id;
	a.region = "ap-south-1";
	a.az = "ap-south-1a";
	a.subnet = "subnet-1";
	a.instance_type = "g5.xlarge";
	a.min_count = 1;
	a.asked = 4;
	a.client_token = "gb-test-0";
	check(gb_state_attempt_begin(st, &a, &e), "attempt", &e);
	a.state = GB_ATTEMPT_OK;
	a.got = 2;
	a.latency = 0.25;
	check(gb_state_attempt_finish(st, &a, &e), "attempt", &e);
	memset(&a, 0, sizeof(a));
	a.request_id = r.id;
	a.seq = 1;
	a.region = "ap-northeast-1";
	a.az = "ap-northeast-1a";
	a.subnet = "subnet-3";
	a.instance_type = "g5.xlarge";
	a.min_count = 1;
	a.asked = 2;
	a.client_token = "gb-test-1";
	a.capacity = "reservation";
	a.capacity_target = "cr-0123456789abcdef0";
	check(gb_state_attempt_begin(st, &a, &e), "attempt", &e);
	a.state = GB_ATTEMPT_OK;
	a.got = 2;
	a.latency = 0.5;
	check(gb_state_attempt_finish(st, &a, &e), "attempt", &e);

	for (int i = 0; i < 4; i++) {
		struct gb_instance in = { 0 };
		char id[32];

		snprintf(id, sizeof(id), "i-0000000000000000%d", i + 1);
		in.request_id = r.id;
		in.region = i < 2 ? "ap-south-1" : "ap-northeast-1";
		in.az = i < 2 ? "ap-south-1a" : "ap-northeast-1a";
		in.subnet = i < 2 ? "subnet-1" : "subnet-3";
		in.instance_id = id;
		in.node = nodes[i];
		in.instance_type = "g5.xlarge";
		in.private_ip = "10.0.0.1";
		in.state = GB_INST_RUNNING;
		in.launched_at = now - 3600 - i;
		if (i >= 2) {	/* the second attempt's: into a reservation */
			in.capacity = "reservation";
			in.capacity_target = "cr-0123456789abcdef0";
		}
		if (i == 3) {
			in.state = GB_INST_TERMINATED;
			in.terminated_at = now - 1800;
			in.reason = "suspended";
		}
		check(gb_state_instance_add(st, &in, &e), "instance", &e);
	}
	check(gb_state_event_add(st, r.id, "slurm_update",
				 "nodes=g5-[1-4] addr=set", &e), "event", &e);
	{
		char claimed[GB_REQUEST_ID_LEN + 1];

		(void)claimed;
		check(gb_state_request_transition(st, r.id, GB_RSTATE_QUEUED,
						  GB_RSTATE_RUNNING, NULL, &e),
		      "running", &e);
		check(gb_state_request_finish(st, r.id, GB_RSTATE_DONE,
					      GB_RESULT_SUCCESS, 4,
					      "launched 4/4", &e), "finish", &e);
	}
	printf("done %s\n", r.id);
}

static void fixture(void)
{
	struct gb_request r;
	struct gb_approval ap = { 0 };
	gb_error_t e = { 0 };
	double now = gb_time_now();

	fixture_done();

	add_request(&r, GB_REQ_RESUME, GB_RSTATE_PENDING_APPROVAL, "g5", 4712,
		    "g5-[5-16]");
	ap.request_id = r.id;
	ap.why = "12 nodes for job 4712 > prod threshold 10";
	ap.expires_at = now + 600;
	ap.decided_uid = -1;
	check(gb_state_approval_add(st, &ap, &e), "approval", &e);
	printf("pending %s\n", r.id);

	add_request(&r, GB_REQ_RESUME, GB_RSTATE_PENDING_APPROVAL, "g6", 4713,
		    "g6-[1-11]");
	ap.request_id = r.id;
	ap.why = "11 nodes for job 4713 > prod threshold 10";
	check(gb_state_approval_add(st, &ap, &e), "approval", &e);
	check(gb_state_approval_decide(st, r.id, GB_APPROVAL_DENIED, "alice",
				       1001, "not today", &e), "decide", &e);
	check(gb_state_request_transition(st, r.id, GB_RSTATE_PENDING_APPROVAL,
					  GB_RSTATE_DENIED,
					  "denied by alice: not today", &e),
	      "deny", &e);
	printf("denied %s\n", r.id);

	add_request(&r, GB_REQ_SUSPEND, GB_RSTATE_QUEUED, NULL, 0, "g5-4");
	printf("suspend %s\n", r.id);

	check(gb_state_capacity_record(st, "ap-south-1", "ap-south-1a",
				       "g5.xlarge", NULL, 4, 2, true, false, now,
				       3600, &e), "capacity", &e);
	check(gb_state_capacity_record(st, "ap-northeast-1", "ap-northeast-1a",
				       "g5.xlarge", NULL, 2, 2, false, false, now,
				       3600, &e), "capacity", &e);
}

static int pending(int argc, char **argv)
{
	struct gb_conf *conf = NULL;
	struct gb_request r[16];
	struct gb_policy_verdict v[16];
	struct gb_slurmconf sc = { 0 };
	gb_error_t e = { 0 };
	size_t n = 0;
	long job;

	if (argc < 8 || (argc - 6) % 2 || (argc - 6) / 2 > 16) {
		fprintf(stderr, "gb_mkstate: pending CONFIG JOB TIMEOUT NODESET NODES [NODESET NODES]...\n");
		return 2;
	}
	check(gb_conf_load(argv[3], &conf, NULL, &e), argv[3], &e);
	check(gb_parse_long(argv[4], 0, 1L << 40, &job), "job id", &e);
	/* the approval timeout is half of ResumeTimeout */
	sc.resume_timeout = 2 * atof(argv[5]);
	for (int i = 6; i + 1 < argc; i += 2, n++) {
		memset(&r[n], 0, sizeof(r[n]));
		r[n].kind = GB_REQ_RESUME;
		r[n].nodeset = argv[i];
		r[n].job_id = job;
		r[n].nodes = argv[i + 1];
		r[n].node_count = count_hosts(argv[i + 1]);
		r[n].instance_type = "g5.xlarge";
		r[n].home_region = "ap-southeast-1";
	}
	/* one Slurm call: gated together, written in one transaction */
	check(gb_state_tx_begin(st, &e), "begin", &e);
	check(gb_policy_gate(conf, st, r, n, gb_time_now(), &sc, v, &e), "gate", &e);
	for (size_t i = 0; i < n; i++) {
		double exp = r[i].expires_at;

		check(gb_state_request_add(st, &r[i], &e), "request", &e);
		r[i].expires_at = exp;
		if (v[i].needs_approval)
			check(gb_policy_record(st, &r[i], &v[i], &e), "record", &e);
	}
	check(gb_state_tx_commit(st, &e), "commit", &e);
	for (size_t i = 0; i < n; i++)
		printf("%s %s\n", r[i].id, gb_request_state_name(r[i].state));
	gb_conf_destroy(conf);
	return 0;
}

static int instance(int argc, char **argv)
{
	struct gb_instance in = { 0 };
	gb_error_t e = { 0 };

	if (argc < 7)
		return fprintf(stderr, "gb_mkstate: instance REQUEST REGION ID NODE [AGE [AZ "
			       "[CAPACITY]]]\n"), 2;
	in.request_id = argv[3];
	in.region = argv[4];
	in.instance_id = argv[5];
	in.node = argv[6];
	in.az = argc > 8 ? argv[8] : NULL;
	in.capacity = argc > 9 ? argv[9] : NULL;
	in.instance_type = "g5.xlarge";
	in.state = GB_INST_RUNNING;
	in.launched_at = gb_time_now() - (argc > 7 ? atof(argv[7]) : 3600);
	check(gb_state_instance_add(st, &in, &e), "instance", &e);
	return 0;
}

/* A running resume of nodeset g5 (a worker on it, as it launches); prints its id. */
static int running(int argc, char **argv)
{
	struct gb_request r;

	if (argc < 4)
		return fprintf(stderr, "gb_mkstate: running NODES\n"), 2;
	add_request(&r, GB_REQ_RESUME, GB_RSTATE_RUNNING, "g5", 0, argv[3]);
	printf("%s\n", r.id);
	return 0;
}

static int events(int argc, char **argv)
{
	struct timespec gap;
	gb_error_t e = { 0 };
	long ms;

	if (argc < 6 || gb_parse_long(argv[4], 0, 10000, &ms))
		return fprintf(stderr, "gb_mkstate: events REQUEST GAP_MS KIND...\n"), 2;
	gap.tv_sec = ms / 1000;
	gap.tv_nsec = ms % 1000 * 1000000L;
	for (int i = 5; i < argc; i++) {
		if (i > 5)
			nanosleep(&gap, NULL);
		check(gb_state_event_add(st, argv[3], argv[i], "source=test", &e),
		      "event", &e);
	}
	return 0;
}

static int age(const char *path, int argc, char **argv)
{
	char sql[1024], *msg = NULL;
	sqlite3 *db = NULL;
	double d;
	int rc;

	if (argc < 5 || strlen(argv[3]) != GB_REQUEST_ID_LEN ||
	    strspn(argv[3], "0123456789abcdef") != GB_REQUEST_ID_LEN)
		return fprintf(stderr, "gb_mkstate: age REQUEST_ID DAYS\n"), 2;
	d = atof(argv[4]) * 86400;
	snprintf(sql, sizeof(sql),
		 "UPDATE requests SET created_at = created_at - %f, updated_at = updated_at - %f WHERE id = '%s';"
		 "UPDATE events SET at = at - %f WHERE request_id = '%s';"
		 "UPDATE plans SET created_at = created_at - %f WHERE request_id = '%s';"
		 "UPDATE attempts SET started_at = started_at - %f, finished_at = finished_at - %f WHERE request_id = '%s';"
		 "UPDATE instances SET launched_at = launched_at - %f, terminated_at = "
		 "CASE WHEN terminated_at > 0 THEN terminated_at - %f ELSE 0 END WHERE request_id = '%s';",
		 d, d, argv[3], d, argv[3], d, argv[3], d, d, argv[3], d, d, argv[3]);
	rc = sqlite3_open(path, &db);
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(db, 10000);
		rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	}
	if (rc != SQLITE_OK)
		fprintf(stderr, "gb_mkstate: age: %s\n", msg ? msg : sqlite3_errstr(rc));
	sqlite3_free(msg);
	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : 1;
}

/*
 * us-east-1a: ran dry at 3 twice, an ICE a minute ago (cooling); us-east-1b:
 * gave all it was asked, 6, three times (at least 6); a vCPU wall of 16 in
 * us-east-1 refused 2 minutes ago; eu-west-1a: not offered.
 */
static void memory(void)
{
	const double now = gb_time_now(), hl = 3600;
	gb_error_t e = { 0 };

	check(gb_state_capacity_level(st, "us-east-1", "us-east-1a", "g5.xlarge", NULL, 3, true,
				      now - 600, hl, &e), "level", &e);
	check(gb_state_capacity_level(st, "us-east-1", "us-east-1a", "g5.xlarge", NULL, 3, true,
				      now - 60, hl, &e), "level", &e);
	check(gb_state_capacity_record(st, "us-east-1", "us-east-1a", "g5.xlarge", NULL, 4, 3, true,
				       false, now - 60, hl, &e), "capacity", &e);
	for (int i = 0; i < 3; i++)
		check(gb_state_capacity_level(st, "us-east-1", "us-east-1b", "g5.xlarge", NULL, 6,
					      false, now - 300 + i, hl, &e), "floor", &e);
	check(gb_state_quota_record(st, "us-east-1", "vcpus:G", "VcpuLimitExceeded", 16, true,
				    now - 120, hl, &e), "quota", &e);
	check(gb_state_offering_put(st, "us-east-1", "us-east-1a", "g5.xlarge", true, now, &e),
	      "offering", &e);
	check(gb_state_offering_put(st, "eu-west-1", "eu-west-1a", "g5.xlarge", false, now, &e),
	      "offering", &e);
}

/*
 * us-east-1a: on-demand gave the 4 it was asked, spot ran dry at 0 a
 * minute ago; us-east-1 has a targeted reservation in each AZ.
 */
static void ladder(void)
{
	const double now = gb_time_now(), hl = 3600;
	const struct gb_reservation cr[] = {
		{ .id = "cr-0a", .instance_type = "g5.xlarge", .az = "us-east-1a",
		  .kind = "reservation", .state = "active", .match = "targeted",
		  .total = 4, .available = 2 },
		{ .id = "cr-0b", .instance_type = "g5.xlarge", .az = "us-east-1b",
		  .kind = "capacity-block", .state = "scheduled", .match = "targeted",
		  .total = 8, .available = 8, .start_at = now + 86400,
		  .end_at = now + 2 * 86400 },
	};
	gb_error_t e = { 0 };

	check(gb_state_capacity_level(st, "us-east-1", "us-east-1a", "g5.xlarge", "on-demand", 4,
				      false, now - 300, hl, &e), "floor", &e);
	check(gb_state_capacity_level(st, "us-east-1", "us-east-1a", "g5.xlarge", "spot", 0, true,
				      now - 60, hl, &e), "level", &e);
	check(gb_state_capacity_record(st, "us-east-1", "us-east-1a", "g5.xlarge", "spot", 4, 0,
				       true, false, now - 60, hl, &e), "capacity", &e);
	check(gb_state_reservations_replace(st, "us-east-1", cr, GB_ARRAY_LEN(cr), now, &e),
	      "reservations", &e);
}

int main(int argc, char **argv)
{
	gb_error_t e = { 0 };
	int rc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: gb_mkstate STATE fixture|pending|instance|running|events|age|memory|ladder ...\n");
		return 2;
	}
	check(gb_state_open(argv[1], 0, 10000, &st, &e), argv[1], &e);
	if (strcmp(argv[2], "fixture") == 0)
		fixture();
	else if (strcmp(argv[2], "pending") == 0)
		rc = pending(argc, argv);
	else if (strcmp(argv[2], "instance") == 0)
		rc = instance(argc, argv);
	else if (strcmp(argv[2], "running") == 0)
		rc = running(argc, argv);
	else if (strcmp(argv[2], "events") == 0)
		rc = events(argc, argv);
	else if (strcmp(argv[2], "age") == 0)
		rc = age(argv[1], argc, argv);
	else if (strcmp(argv[2], "memory") == 0)
		memory();
	else if (strcmp(argv[2], "ladder") == 0)
		ladder();
	else
		rc = 2;
	gb_state_close(st);
	return rc;
}
