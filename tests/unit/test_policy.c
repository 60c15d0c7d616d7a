/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_policy.c - libpolicy: counting and gating, decisions, expiry,
 * authorization, notify, and libslurmif's slurm.conf reader (the policy reads
 * ResumeTimeout and SlurmUser through it)
 *
 * Every test works in its own mkdtemp directory (a state file, configs,
 * slurm.conf files), removed afterwards.
 */
#include "config.h"

#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "gb_conf.h"
#include "gb_policy.h"
#include "gb_slurmconf.h"
#include "gb_state.h"
#include "gb_str.h"
#include "gb_util.h"
#include "testutil.h"

struct fx {
	char dir[64];
	char path[160];
	gb_state_t *st;
	struct gb_conf *conf;
};

/*****************************************************************************
 *  Helpers
 *****************************************************************************/

static struct gb_conf *conf_from(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static struct gb_conf *conf_from(const char *fmt, ...)
{
	struct gb_conf *conf = NULL;
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t e = { 0 };
	va_list ap;
	char line[1024];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	gb_buf_puts(&b, line);
	unsetenv("GPUBURST_ENV");
	if (gb_conf_load_string("test.yaml", b.data, b.len, &conf, NULL, &e))
		fail_msg("config: %s", e.text);
	gb_buf_free(&b);
	return conf;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	gb_error_t e = { 0 };

	if (!f)
		return -1;
	if (tu_tmpdir(f->dir, sizeof(f->dir), "policy", f->path, sizeof(f->path), "state.db"))
		return -1;
	if (gb_state_open(f->path, 0, 5000, &f->st, &e)) {
		fprintf(stderr, "open: %s\n", e.text);
		return -1;
	}
	f->conf = conf_from("cluster_name: t\nenvironment: prod\n");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	gb_state_close(f->st);
	gb_conf_destroy(f->conf);
	tu_rmtree(f->dir);
	free(f);
	return 0;
}

static struct gb_request mkreq(const char *nodeset, int64_t job,
			       const char *nodes, int count)
{
	struct gb_request r = { .id = "" };

	r.kind = GB_REQ_RESUME;
	r.state = GB_RSTATE_QUEUED;
	r.nodeset = nodeset;
	r.job_id = job;
	r.nodes = nodes;
	r.node_count = count;
	r.instance_type = "g5.xlarge";
	r.home_region = "ap-south-1";
	return r;
}

/* slurm.conf values with a global ResumeTimeout of [rt] seconds. */
static struct gb_slurmconf sc_rt(double rt)
{
	struct gb_slurmconf sc = { 0 };

	sc.resume_timeout = rt;
	return sc;
}

/* Gate then insert (with approval rows), as the resume fast path does. */
static void gate_and_add(struct fx *f, struct gb_request *reqs, size_t n,
			 double timeout, struct gb_policy_verdict *v)
{
	struct gb_slurmconf sc = sc_rt(2 * timeout);
	gb_error_t e = { 0 };

	if (gb_policy_gate(f->conf, f->st, reqs, n, gb_time_now(), &sc, v, &e))
		fail_msg("gate: %s", e.text);
	assert_int_equal(gb_state_tx_begin(f->st, &e), GB_E_OK);
	for (size_t i = 0; i < n; i++) {
		double exp = reqs[i].expires_at;

		if (gb_state_request_add(f->st, &reqs[i], &e))
			fail_msg("add: %s", e.text);
		/* add stamps created_at; keep the gate's deadline */
		reqs[i].expires_at = exp;
		if (v[i].needs_approval && gb_policy_record(f->st, &reqs[i], &v[i], &e))
			fail_msg("record: %s", e.text);
	}
	assert_int_equal(gb_state_tx_commit(f->st, &e), GB_E_OK);
}

struct req_copy {
	enum gb_request_state state;
	char reason[256];
};

static void copy_cb(const struct gb_request *r, void *arg)
{
	struct req_copy *c = arg;

	c->state = r->state;
	gb_strlcpy(c->reason, r->reason ? r->reason : "", sizeof(c->reason));
}

static struct req_copy req_of(struct fx *f, const char *id)
{
	struct req_copy c = { 0 };

	assert_int_equal(gb_state_request_get(f->st, id, copy_cb, &c, NULL),
			 GB_E_OK);
	return c;
}

struct appr_copy {
	enum gb_approval_state state;
	char by[64], comment[256], why[256];
	int64_t uid;
	double expires_at, decided_at;
};

static void appr_cb(const struct gb_approval *a, void *arg)
{
	struct appr_copy *c = arg;

	c->state = a->state;
	gb_strlcpy(c->by, a->decided_by ? a->decided_by : "", sizeof(c->by));
	gb_strlcpy(c->comment, a->comment ? a->comment : "", sizeof(c->comment));
	gb_strlcpy(c->why, a->why ? a->why : "", sizeof(c->why));
	c->uid = a->decided_uid;
	c->expires_at = a->expires_at;
	c->decided_at = a->decided_at;
}

static struct appr_copy appr_of(struct fx *f, const char *id)
{
	struct appr_copy c = { 0 };

	assert_int_equal(gb_state_approval_get(f->st, id, appr_cb, &c, NULL),
			 GB_E_OK);
	return c;
}

struct ev_count {
	const char *kind;
	int n;
	char last[512];
};

static int ev_cb(const struct gb_event *ev, void *arg)
{
	struct ev_count *c = arg;

	if (strcmp(ev->kind, c->kind) == 0) {
		c->n++;
		gb_strlcpy(c->last, ev->detail ? ev->detail : "", sizeof(c->last));
	}
	return 0;
}

static struct ev_count events_of(struct fx *f, const char *id, const char *kind)
{
	struct ev_count c = { kind, 0, "" };

	assert_int_equal(gb_state_event_list(f->st, id, ev_cb, &c, NULL), GB_E_OK);
	return c;
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/*****************************************************************************
 *  Rules
 *****************************************************************************/

static void test_judge(void **state)
{
	struct fx *f = *state;
	struct gb_conf *dev = conf_from("cluster_name: t\n");
	struct gb_conf *manual = conf_from("cluster_name: t\nenvironment: staging\n"
					   "policy:\n  manual_resume_needs_approval: true\n");
	struct gb_policy_verdict v;

	gb_policy_judge(f->conf, 4711, 10, &v);	/* prod: 10 is not > 10 */
	assert_false(v.needs_approval);
	assert_int_equal(v.rule, GB_POLICY_RULE_NONE);
	assert_int_equal(v.threshold, 10);
	gb_policy_judge(f->conf, 4711, 11, &v);
	assert_true(v.needs_approval);
	assert_int_equal(v.rule, GB_POLICY_RULE_SIZE);
	assert_string_equal(v.why, "11 nodes for job 4711 > prod threshold 10");
	gb_policy_judge(f->conf, 0, 3, &v);	/* manual, small, rule off */
	assert_false(v.needs_approval);
	gb_policy_judge(f->conf, 0, 12, &v);
	assert_string_equal(v.why, "manual power-up of 12 nodes > prod threshold 10");

	gb_policy_judge(dev, 1, 50, &v);
	assert_false(v.needs_approval);
	gb_policy_judge(dev, 1, 51, &v);
	assert_true(v.needs_approval);
	assert_int_equal(v.threshold, 50);

	gb_policy_judge(manual, 0, 1, &v);
	assert_true(v.needs_approval);
	assert_int_equal(v.rule, GB_POLICY_RULE_MANUAL);
	assert_string_equal(v.why, "manual power-up of 1 node (policy.manual_resume_needs_approval)");
	gb_policy_judge(manual, 0, 21, &v);	/* size first */
	assert_int_equal(v.rule, GB_POLICY_RULE_SIZE);
	gb_policy_judge(manual, 5, 3, &v);	/* a job: manual rule n/a */
	assert_false(v.needs_approval);
	assert_string_equal(gb_policy_rule_name(GB_POLICY_RULE_GEO), "geo");
	gb_conf_destroy(dev);
	gb_conf_destroy(manual);
}

static void test_geo(void **state)
{
	struct fx *f = *state;
	struct gb_conf *geo = conf_from("cluster_name: t\npolicy:\n  allowed_geo_regions: [ap-south-1, ap-northeast-1]\n");
	const char *in[] = { "ap-south-1", "ap-northeast-1", "ap-south-1" };
	const char *out[] = { "ap-south-1", "ap-northeast-2", "us-west-2",
			      "ap-northeast-2" };
	struct gb_policy_verdict v;

	assert_false(gb_policy_geo(f->conf, out, 4, &v));	/* no list: no check */
	assert_false(v.needs_approval);
	assert_false(gb_policy_geo(geo, in, 3, &v));
	assert_true(gb_policy_geo(geo, out, 4, &v));
	assert_true(v.needs_approval);
	assert_int_equal(v.rule, GB_POLICY_RULE_GEO);
	assert_string_equal(v.why, "plan uses ap-northeast-2, us-west-2 outside allowed_geo_regions [ap-south-1, ap-northeast-1]");
	assert_true(gb_policy_geo(geo, out, 4, NULL));
	gb_conf_destroy(geo);
}

static void test_timeout(void **state)
{
	struct fx *f = *state;
	struct gb_conf *fixed = conf_from("cluster_name: t\npolicy:\n  approval_timeout: 7m\n");

	assert_true(gb_policy_approval_timeout(f->conf, 600, -1) == 300);
	assert_true(gb_policy_approval_timeout(f->conf, 601, -1) == 300);
	assert_true(gb_policy_approval_timeout(f->conf, 600, 120) == 60);
	assert_true(gb_policy_approval_timeout(f->conf, 600, 1200) == 300);
	assert_true(gb_policy_approval_timeout(f->conf, 0, -1) == 30);	/* Slurm's 60 */
	assert_true(gb_policy_approval_timeout(f->conf, 1, -1) == 1);
	assert_true(gb_policy_approval_timeout(fixed, 600, 100) == 420);
	assert_true(gb_policy_approval_timeout(NULL, 20, -1) == 10);
	gb_conf_destroy(fixed);
}

/* Two nodesets: g5 in Slurm partition fast, g6 in the default one. */
static const char two_partitions[] =
	"cluster_name: t\n"
	"regions:\n"
	"  - {name: ap-south-1, ami: ami-1, azs: [{name: ap-south-1a, subnets: [subnet-1]}]}\n"
	"fallback_groups:\n"
	"  g: {consumer_regions: [ap-south-1], fallback_regions: [ap-south-1]}\n"
	"nodesets:\n"
	"  - {name: g5, nodes: \"g5-[1-4]\", instance_type: g5.xlarge, home_region: ap-south-1, partition: fast}\n"
	"  - {name: g6, nodes: \"g6-[1-4]\", instance_type: g6.xlarge, home_region: ap-south-1}\n";

static void test_timeout_for(void **state)
{
	struct gb_conf *c = conf_from("%s", two_partitions);
	struct gb_slurmconf_partition parts[] = { { (char *)"fast", 120 },
						  { (char *)"gpuburst", -1 } };
	struct gb_slurmconf sc = { 0 };

	(void)state;
	sc.resume_timeout = 600;
	sc.partitions = parts;
	sc.n_partitions = 2;
	assert_true(gb_policy_timeout_for(c, &sc, "g5") == 60);	/* partition's 120 */
	assert_true(gb_policy_timeout_for(c, &sc, "g6") == 300);	/* global */
	assert_true(gb_policy_timeout_for(c, &sc, "nope") == 300);
	assert_true(gb_policy_timeout_for(c, &sc, NULL) == 300);
	assert_true(gb_policy_timeout_for(c, NULL, "g5") == 30);	/* Slurm's 60 */
	gb_conf_destroy(c);
}

/* The re-probe window: auto is half of the ResumeTimeout that applies. */
static void test_reprobe_window(void **state)
{
	const char *base = two_partitions;
	struct gb_conf *c = conf_from("%s", base), *off, *fixed;
	struct gb_slurmconf_partition parts[] = { { (char *)"fast", 120 } };
	struct gb_slurmconf sc = { 0 };

	(void)state;
	sc.resume_timeout = 600;
	sc.partitions = parts;
	sc.n_partitions = 1;
	assert_true(gb_policy_reprobe_window(c, &sc, "g5") == 60);	/* partition's 120 */
	assert_true(gb_policy_reprobe_window(c, &sc, "g6") == 300);
	assert_true(gb_policy_reprobe_window(c, NULL, "g6") == 30);	/* Slurm's 60 */
	off = conf_from("%spolicy: {reprobe_window: 0, approval_timeout: 7m}\n", base);
	assert_true(gb_policy_reprobe_window(off, &sc, "g5") == 0);
	/* an explicit approval timeout does not move the re-probe window */
	gb_conf_destroy(off);
	off = conf_from("%spolicy: {approval_timeout: 7m}\n", base);
	assert_true(gb_policy_reprobe_window(off, &sc, "g6") == 300);
	fixed = conf_from("%spolicy: {reprobe_window: 90s}\n", base);
	assert_true(gb_policy_reprobe_window(fixed, &sc, "g5") == 90);
	gb_conf_destroy(fixed);
	/* never past the request deadline */
	fixed = conf_from("%spolicy: {reprobe_window: 2h, request_deadline: 30m}\n", base);
	assert_true(gb_policy_reprobe_window(fixed, &sc, "g5") == 1800);
	gb_conf_destroy(c);
	gb_conf_destroy(off);
	gb_conf_destroy(fixed);
}

/*****************************************************************************
 *  Gating a call
 *****************************************************************************/

static void test_gate_job_split(void **state)
{
	struct gb_slurmconf sc600 = sc_rt(600);
	struct fx *f = *state;
	struct gb_request r[5] = {
		mkreq("g5", 7, "g5-[1-6]", 6),	/* job 7: 6 + 6 = 12 > 10 */
		mkreq("g6", 7, "g6-[1-6]", 6),
		mkreq("g5", 8, "g5-[7-11]", 5),	/* job 8: 5 */
		mkreq("g6", 0, "g6-[7-18]", 12),	/* manual: 12 > 10 */
		mkreq("g5", 0, "g5-[12-14]", 3),	/* manual: 3 */
	};
	struct gb_policy_verdict v[5];
	double t0 = gb_time_now();

	r[3].created_at = t0 - 100;	/* the deadline runs from creation */
	assert_int_equal(gb_policy_gate(f->conf, f->st, r, 5, t0, &sc600, v,
					NULL), GB_E_OK);
	assert_true(v[0].needs_approval && v[1].needs_approval);
	assert_int_equal(v[0].counted, 12);
	assert_int_equal(v[1].counted, 12);
	assert_string_equal(v[1].why, "12 nodes for job 7 > prod threshold 10");
	assert_int_equal(r[0].state, GB_RSTATE_PENDING_APPROVAL);
	assert_true(r[0].expires_at == t0 + 300);
	assert_false(v[2].needs_approval);
	assert_int_equal(v[2].counted, 5);
	assert_int_equal(r[2].state, GB_RSTATE_QUEUED);
	assert_true(r[2].expires_at == 0);
	assert_true(v[3].needs_approval);
	assert_int_equal(r[3].state, GB_RSTATE_PENDING_APPROVAL);
	assert_true(r[3].expires_at == t0 - 100 + 300);
	assert_false(v[4].needs_approval);
}

/*
 * Many jobs in one call, a job's requests apart from each other: each job
 * counts its own nodes (with its earlier requests), whatever the order.
 */
static void test_gate_many_jobs(void **state)
{
	struct gb_slurmconf sc600 = sc_rt(600);
	struct fx *f = *state;
	enum { N = 2003 };
	static char names[N][24];
	struct gb_request *r = calloc(N, sizeof(*r)), early[1];
	struct gb_policy_verdict *v = calloc(N, sizeof(*v));
	double now = gb_time_now();
	gb_error_t e = { 0 };

	assert_non_null(r);
	assert_non_null(v);
	/* job 50 had 4 nodes queued before: 4 + 2 + 3 + 2 = 11 > 10 */
	early[0] = mkreq("g5", 50, "g6-[31-34]", 4);
	tu_ok(gb_state_request_add(f->st, &early[0], &e), &e);
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "g5-%d", i + 1);
		r[i] = mkreq("g5", 3 * N - i, names[i], 1);	/* jobs 3N..2N+1, a node each */
	}
	r[7] = mkreq("g5", 50, "g5-[20-21]", 2);
	r[1000] = mkreq("g6", 50, "g6-[1-3]", 3);
	r[N - 1] = mkreq("g6", 50, "g6-[4-5]", 2);
	r[9] = mkreq("g5", 0, "g5-[40-51]", 12);	/* no job: its own 12 */
	assert_int_equal(gb_policy_gate(f->conf, f->st, r, N, now, &sc600, v, NULL), GB_E_OK);
	for (int i = 0; i < N; i++) {
		if (r[i].job_id == 50) {
			assert_true(v[i].needs_approval);
			assert_int_equal(v[i].counted, 11);
		} else if (i == 9) {
			assert_true(v[i].needs_approval);
			assert_int_equal(v[i].counted, 12);
		} else {
			assert_false(v[i].needs_approval);
			assert_int_equal(v[i].counted, 1);
			assert_int_equal(r[i].state, GB_RSTATE_QUEUED);
		}
	}
	free(r);
	free(v);
}

static void test_gate_earlier(void **state)
{
	struct gb_slurmconf sc600 = sc_rt(600);
	struct fx *f = *state;
	struct gb_request first[1] = { mkreq("g5", 9, "g5-[1-8]", 8) };
	struct gb_request again[1] = { mkreq("g5", 9, "g5-[5-10]", 6) };
	struct gb_request more[1] = { mkreq("g5", 9, "g5-[9-12]", 4) };
	struct gb_request other[1] = { mkreq("g5", 10, "g5-[20-25]", 6) };
	struct gb_policy_verdict v[1];
	double now = gb_time_now();

	gate_and_add(f, first, 1, 300, v);	/* 8: queued */
	assert_false(v[0].needs_approval);
	/* a re-run naming some of the same nodes counts them once: 10 */
	assert_int_equal(gb_policy_gate(f->conf, f->st, again, 1, now, &sc600, v, NULL), GB_E_OK);
	assert_int_equal(v[0].counted, 10);
	assert_false(v[0].needs_approval);
	/* a later part of the same job (ResumeRate): 8 + 4 = 12 */
	assert_int_equal(gb_policy_gate(f->conf, f->st, more, 1, now, &sc600, v, NULL), GB_E_OK);
	assert_int_equal(v[0].counted, 12);
	assert_true(v[0].needs_approval);
	/* ... but not when the earlier part is outside the window */
	assert_int_equal(gb_policy_gate(f->conf, f->st, more, 1, now + 1000, &sc600, v, NULL), GB_E_OK);
	assert_int_equal(v[0].counted, 4);
	/* ... nor without a state file */
	assert_int_equal(gb_policy_gate(f->conf, NULL, more, 1, now, &sc600, v, NULL), GB_E_OK);
	assert_int_equal(v[0].counted, 4);
	/* other jobs do not count */
	assert_int_equal(gb_policy_gate(f->conf, f->st, other, 1, now, &sc600, v, NULL), GB_E_OK);
	assert_int_equal(v[0].counted, 6);
}

static void test_gate_denied_not_counted(void **state)
{
	struct gb_slurmconf sc600 = sc_rt(600);
	struct fx *f = *state;
	struct gb_request first[1] = { mkreq("g5", 11, "g5-[1-12]", 12) };
	struct gb_request retry[1] = { mkreq("g5", 11, "g5-[1-4]", 4) };
	struct gb_policy_verdict v[1];
	struct gb_policy_outcome o = { 0 };

	gate_and_add(f, first, 1, 300, v);
	assert_true(v[0].needs_approval);
	assert_int_equal(gb_policy_decide(f->conf, f->st, first[0].id,
					  GB_POLICY_DENY, "alice", 1000, "no",
					  gb_time_now(), &o, NULL), GB_E_OK);
	gb_policy_outcome_clear(&o);
	/* the requeued job asks again: the denied request does not count */
	assert_int_equal(gb_policy_gate(f->conf, f->st, retry, 1, gb_time_now(), &sc600, v, NULL), GB_E_OK);
	assert_int_equal(v[0].counted, 4);
	assert_false(v[0].needs_approval);
}

static void test_gate_bad_hostlist(void **state)
{
	struct gb_slurmconf sc600 = sc_rt(600);
	struct fx *f = *state;
	struct gb_request r[2] = { mkreq("g5", 3, "g5-[1-", 7),
				   mkreq("g6", 3, "g6-[1-4]", 4) };
	struct gb_policy_verdict v[2];

	/* counted by node_count when a hostlist cannot be expanded */
	assert_int_equal(gb_policy_gate(f->conf, NULL, r, 2, gb_time_now(), &sc600, v, NULL), GB_E_OK);
	assert_int_equal(v[0].counted, 11);
	assert_true(v[0].needs_approval && v[1].needs_approval);
}

static void test_gate_other_kinds(void **state)
{
	struct gb_slurmconf sc600 = sc_rt(600);
	struct fx *f = *state;
	struct gb_request r[1] = { mkreq("g5", 0, "g5-[1-40]", 40) };
	struct gb_policy_verdict v[1];

	r[0].kind = GB_REQ_SUSPEND;
	assert_int_equal(gb_policy_gate(f->conf, NULL, r, 1, gb_time_now(), &sc600, v, NULL), GB_E_OK);
	assert_false(v[0].needs_approval);
	assert_int_equal(r[0].state, GB_RSTATE_QUEUED);	/* untouched */
}

/*****************************************************************************
 *  Decisions and expiry
 *****************************************************************************/

static void test_record(void **state)
{
	struct fx *f = *state;
	struct gb_request r[1] = { mkreq("g5", 21, "g5-[1-11]", 11) };
	struct gb_policy_verdict v[1];
	struct appr_copy a;
	struct ev_count ev;

	gate_and_add(f, r, 1, 300, v);
	a = appr_of(f, r[0].id);
	assert_int_equal(a.state, GB_APPROVAL_PENDING);
	assert_string_equal(a.why, "11 nodes for job 21 > prod threshold 10");
	assert_true(a.expires_at == r[0].expires_at);
	assert_int_equal(a.uid, -1);
	ev = events_of(f, r[0].id, "approval_needed");
	assert_int_equal(ev.n, 1);
	assert_non_null(strstr(ev.last, "rule=size counted=11 threshold=10 expires="));
	assert_int_equal(req_of(f, r[0].id).state, GB_RSTATE_PENDING_APPROVAL);
}

static void test_approve_job(void **state)
{
	struct fx *f = *state;
	struct gb_request r[3] = { mkreq("g5", 31, "g5-[1-6]", 6),
				   mkreq("g6", 31, "g6-[1-6]", 6),
				   mkreq("g5", 32, "g5-[7-20]", 14) };
	struct gb_policy_verdict v[3];
	struct gb_policy_outcome o = { 0 };
	struct appr_copy a;
	struct ev_count ev;

	gate_and_add(f, r, 3, 300, v);
	assert_int_equal(gb_policy_decide(f->conf, f->st, r[1].id,
					  GB_POLICY_APPROVE, "alice", 1001,
					  "ok for the demo", gb_time_now(), &o,
					  NULL), GB_E_OK);
	/* both requests of job 31, the named one first; job 32 untouched */
	assert_int_equal(o.ids.n, 2);
	assert_string_equal(o.ids.v[0], r[1].id);
	assert_string_equal(o.ids.v[1], r[0].id);
	assert_int_equal(o.nodes.n, 0);
	for (int i = 0; i < 2; i++) {
		a = appr_of(f, r[i].id);
		assert_int_equal(a.state, GB_APPROVAL_APPROVED);
		assert_string_equal(a.by, "alice");
		assert_int_equal(a.uid, 1001);
		assert_string_equal(a.comment, "ok for the demo");
		assert_true(a.decided_at > 0);
		assert_int_equal(req_of(f, r[i].id).state, GB_RSTATE_QUEUED);
		assert_string_equal(req_of(f, r[i].id).reason, "approved by alice");
		ev = events_of(f, r[i].id, "approve");
		assert_int_equal(ev.n, 1);
		assert_string_equal(ev.last, "by=alice uid=1001 comment=\"ok for the demo\"");
	}
	assert_int_equal(req_of(f, r[2].id).state, GB_RSTATE_PENDING_APPROVAL);
	gb_policy_outcome_clear(&o);

	/* a second decision on the same request: BUSY, nothing changes */
	assert_int_equal(gb_policy_decide(f->conf, f->st, r[0].id,
					  GB_POLICY_DENY, "bob", 1002, "late",
					  gb_time_now(), &o, NULL), GB_E_BUSY);
	assert_int_equal(o.ids.n, 0);
	assert_int_equal(appr_of(f, r[0].id).state, GB_APPROVAL_APPROVED);
	gb_policy_outcome_clear(&o);
}

static void test_deny(void **state)
{
	struct fx *f = *state;
	struct gb_request r[1] = { mkreq("g5", 41, "g5-[1-3,8-15]", 11) };
	struct gb_policy_verdict v[1];
	struct gb_policy_outcome o = { 0 };
	gb_error_t e = { 0 };
	char reason[GB_POLICY_REASON_MAX];

	gate_and_add(f, r, 1, 300, v);
	/* no reason, or a blank one: refused before anything is written */
	assert_int_equal(gb_policy_decide(f->conf, f->st, r[0].id,
					  GB_POLICY_DENY, "alice", 1, NULL,
					  gb_time_now(), &o, &e), GB_E_INVALID);
	assert_int_equal(gb_policy_decide(f->conf, f->st, r[0].id,
					  GB_POLICY_DENY, "alice", 1, " \t",
					  gb_time_now(), &o, &e), GB_E_INVALID);
	assert_string_equal(e.text, "a denial needs a reason (--reason TEXT)");
	assert_int_equal(req_of(f, r[0].id).state, GB_RSTATE_PENDING_APPROVAL);

	assert_int_equal(gb_policy_decide(f->conf, f->st, r[0].id,
					  GB_POLICY_DENY, "alice", 1,
					  "too many for a test", gb_time_now(),
					  &o, &e), GB_E_OK);
	assert_int_equal(o.nodes.n, 11);
	assert_string_equal(o.nodes.v[0], "g5-1");
	assert_string_equal(o.nodes.v[10], "g5-15");
	assert_int_equal(req_of(f, r[0].id).state, GB_RSTATE_DENIED);
	assert_string_equal(req_of(f, r[0].id).reason,
			    "denied by alice: too many for a test");
	assert_int_equal(appr_of(f, r[0].id).state, GB_APPROVAL_DENIED);
	assert_int_equal(events_of(f, r[0].id, "deny").n, 1);
	gb_policy_outcome_clear(&o);

	assert_string_equal(gb_policy_reason_denied(reason, sizeof(reason),
						    "alice", "too\nmany"),
			    "gpuburst: resume denied by alice: too many");
	assert_string_equal(gb_policy_reason_expired(reason, sizeof(reason)),
			    "gpuburst: resume approval expired");
	gb_policy_reason_denied(reason, 40, "alice", "a very long reason indeed, longer than forty");
	assert_int_equal(strlen(reason), 39);
}

static void test_decide_errors(void **state)
{
	struct fx *f = *state;
	struct gb_request q = mkreq("g5", 51, "g5-1", 1);
	struct gb_policy_outcome o = { 0 };
	gb_error_t e = { 0 };

	assert_int_equal(gb_policy_decide(f->conf, f->st, "0123456789abcdef",
					  GB_POLICY_APPROVE, "root", 0, NULL,
					  gb_time_now(), &o, &e), GB_E_NOTFOUND);
	assert_string_equal(e.text, "no request 0123456789abcdef");
	assert_int_equal(gb_state_request_add(f->st, &q, NULL), GB_E_OK);
	assert_int_equal(gb_policy_decide(f->conf, f->st, q.id,
					  GB_POLICY_APPROVE, "root", 0, NULL,
					  gb_time_now(), &o, &e), GB_E_BUSY);
	assert_non_null(strstr(e.text, "is queued, not pending approval"));
	gb_policy_outcome_clear(&o);
}

static void test_decide_after_deadline(void **state)
{
	struct fx *f = *state;
	struct gb_request r[2] = { mkreq("g5", 61, "g5-[1-6]", 6),
				   mkreq("g6", 61, "g6-[1-6]", 6) };
	struct gb_policy_verdict v[2];
	struct gb_policy_outcome o = { 0 };
	gb_error_t e = { 0 };

	gate_and_add(f, r, 2, 60, v);
	/* approving after the deadline expires the whole job instead */
	assert_int_equal(gb_policy_decide(f->conf, f->st, r[0].id,
					  GB_POLICY_APPROVE, "alice", 1, NULL,
					  gb_time_now() + 61, &o, &e),
			 GB_E_TIMEOUT);
	assert_non_null(strstr(e.text, "expired at"));
	assert_int_equal(o.ids.n, 0);
	assert_int_equal(o.expired_ids.n, 2);
	assert_int_equal(o.expired_nodes.n, 12);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(req_of(f, r[i].id).state, GB_RSTATE_EXPIRED);
		assert_int_equal(appr_of(f, r[i].id).state, GB_APPROVAL_EXPIRED);
		assert_string_equal(appr_of(f, r[i].id).by, GB_POLICY_EXPIRY_ACTOR);
		assert_int_equal(events_of(f, r[i].id, "expire").n, 1);
	}
	gb_policy_outcome_clear(&o);
}

static void test_expire(void **state)
{
	struct fx *f = *state;
	struct gb_request a[1] = { mkreq("g5", 71, "g5-[1-11]", 11) };
	struct gb_request b[1] = { mkreq("g6", 72, "g6-[1-11]", 11) };
	struct gb_policy_verdict v[1];
	struct gb_policy_outcome o = { 0 };
	double now = gb_time_now();

	gate_and_add(f, a, 1, 10, v);
	gate_and_add(f, b, 1, 1000, v);
	assert_int_equal(gb_policy_expire(f->conf, f->st, now, &o, NULL), GB_E_OK);
	assert_int_equal(o.expired_ids.n, 0);
	assert_int_equal(gb_policy_expire(f->conf, f->st, now + 20, &o, NULL),
			 GB_E_OK);
	assert_int_equal(o.expired_ids.n, 1);
	assert_string_equal(o.expired_ids.v[0], a[0].id);
	assert_int_equal(o.expired_nodes.n, 11);
	assert_int_equal(req_of(f, a[0].id).state, GB_RSTATE_EXPIRED);
	assert_string_equal(req_of(f, a[0].id).reason, "approval expired");
	assert_int_equal(req_of(f, b[0].id).state, GB_RSTATE_PENDING_APPROVAL);
	gb_policy_outcome_clear(&o);
	/* idempotent */
	assert_int_equal(gb_policy_expire(f->conf, f->st, now + 20, &o, NULL),
			 GB_E_OK);
	assert_int_equal(o.expired_ids.n, 0);
	gb_policy_outcome_clear(&o);
}

static int held_cb(const struct gb_request *r, void *arg)
{
	struct { char *buf; int n; } *c = arg;

	if (gb_policy_request_held(r)) {
		gb_strlcpy(c->buf, r->id, GB_REQUEST_ID_LEN + 1);
		c->n++;
	}
	return 0;
}

/*****************************************************************************
 *  Jobs held at submit
 *****************************************************************************/

static struct gb_policy_held held_job(int64_t id, int nodes)
{
	return (struct gb_policy_held){ .job_id = id, .user = "alice",
					 .account = "physics", .partition = "gpuburst",
					 .name = "train", .tres = "cpu=8,node=2,gres/gpu=16",
					 .nodes = nodes, .gpus = 2 * nodes, .time_limit = 90 };
}

static const char *held_req(struct fx *f, int64_t job, char *buf)
{
	struct gb_request_filter flt = GB_REQUEST_FILTER_ANY;
	struct { char *buf; int n; } c = { buf, 0 };

	flt.job_id = job;
	buf[0] = '\0';
	assert_int_equal(gb_state_request_list(f->st, &flt, held_cb, &c, NULL), GB_E_OK);
	assert_int_equal(c.n, 1);
	return buf;
}

static void test_held(void **state)
{
	struct fx *f = *state;
	struct gb_policy_held jobs[2] = { held_job(81, 12), held_job(82, 15) };
	struct gb_strv created = { 0 };
	struct gb_policy_outcome o = { 0 };
	struct gb_policy_verdict v[1];
	struct gb_slurmconf sc = sc_rt(600);
	char r81[GB_REQUEST_ID_LEN + 1], r82[GB_REQUEST_ID_LEN + 1];
	double now = gb_time_now();
	struct gb_request later;
	struct appr_copy a;
	bool yes = true;
	long n = -1;

	/* a dry run names the jobs and writes nothing */
	assert_int_equal(gb_policy_held_sync(f->conf, f->st, jobs, 2, now, true,
					     &created, NULL), GB_E_OK);
	assert_int_equal(created.n, 2);
	assert_string_equal(created.v[0], "81");
	assert_int_equal(gb_state_request_count(f->st, -1, &n, NULL), GB_E_OK);
	assert_int_equal(n, 0);
	gb_strv_free(&created);

	assert_int_equal(gb_policy_held_sync(f->conf, f->st, jobs, 2, now, false,
					     &created, NULL), GB_E_OK);
	assert_int_equal(created.n, 2);
	gb_strv_free(&created);
	held_req(f, 81, r81);
	held_req(f, 82, r82);
	assert_int_equal(req_of(f, r81).state, GB_RSTATE_PENDING_APPROVAL);
	a = appr_of(f, r81);
	assert_int_equal(a.state, GB_APPROVAL_PENDING);
	assert_string_equal(a.why, "12 nodes for job 81 > prod threshold 10 (held at submit)");
	assert_true(a.expires_at > now + 86399 && a.expires_at < now + 86460);
	assert_int_equal(events_of(f, r81, "approval_needed").n, 1);
	/* known jobs are not recorded again */
	assert_int_equal(gb_policy_held_sync(f->conf, f->st, jobs, 2, now, false,
					     &created, NULL), GB_E_OK);
	assert_int_equal(created.n, 0);

	/* before the approval, the job's power-up is gated as ever */
	assert_int_equal(gb_policy_job_approved(f->st, 81, &yes, NULL), GB_E_OK);
	assert_false(yes);
	later = mkreq("g5", 81, "g5-[1-12]", 12);
	assert_int_equal(gb_policy_gate(f->conf, f->st, &later, 1, now, &sc, v, NULL), GB_E_OK);
	assert_true(v[0].needs_approval);

	/* approved: DONE (the release is the caller's), then never gated */
	assert_int_equal(gb_policy_decide(f->conf, f->st, r81, GB_POLICY_APPROVE,
					  "alice", 1001, NULL, now, &o, NULL), GB_E_OK);
	assert_int_equal(o.held_jobs.n, 1);
	assert_string_equal(o.held_jobs.v[0], "81");
	assert_string_equal(o.exprs.v[0], "");
	assert_int_equal(req_of(f, r81).state, GB_RSTATE_DONE);
	assert_string_equal(req_of(f, r81).reason, "approved by alice: job 81 released");
	gb_policy_outcome_clear(&o);
	assert_int_equal(gb_policy_job_approved(f->st, 81, &yes, NULL), GB_E_OK);
	assert_true(yes);
	later = mkreq("g5", 81, "g5-[1-12]", 12);
	assert_int_equal(gb_policy_gate(f->conf, f->st, &later, 1, now, &sc, v, NULL), GB_E_OK);
	assert_false(v[0].needs_approval);
	assert_int_equal(later.state, GB_RSTATE_QUEUED);

	/* denied: the job to hold or cancel is named, its request DENIED */
	assert_int_equal(gb_policy_decide(f->conf, f->st, r82, GB_POLICY_DENY,
					  "bob", 1002, "too big", now, &o, NULL), GB_E_OK);
	assert_int_equal(o.held_jobs.n, 1);
	assert_string_equal(o.held_jobs.v[0], "82");
	assert_int_equal(o.nodes.n, 0);
	assert_int_equal(req_of(f, r82).state, GB_RSTATE_DENIED);
	gb_policy_outcome_clear(&o);
	assert_int_equal(gb_policy_job_approved(f->st, 82, &yes, NULL), GB_E_OK);
	assert_false(yes);

	/* expiry after policy.submit_approval_timeout */
	jobs[0] = held_job(83, 11);
	assert_int_equal(gb_policy_held_sync(f->conf, f->st, jobs, 1, now, false,
					     &created, NULL), GB_E_OK);
	assert_int_equal(created.n, 1);
	gb_strv_free(&created);
	assert_int_equal(gb_policy_expire(f->conf, f->st, now + 3600, &o, NULL), GB_E_OK);
	assert_int_equal(o.expired_held_jobs.n, 0);
	assert_int_equal(gb_policy_expire(f->conf, f->st, now + 86401, &o, NULL), GB_E_OK);
	assert_int_equal(o.expired_held_jobs.n, 1);
	assert_string_equal(o.expired_held_jobs.v[0], "83");
	assert_string_equal(o.expired_exprs.v[0], "");
	assert_int_equal(o.expired_nodes.n, 0);
	gb_policy_outcome_clear(&o);
}

static void claim_cb(const struct gb_request *r, void *arg)
{
	gb_strlcpy(arg, r->id, GB_REQUEST_ID_LEN + 1);
}

static void test_geo_gate(void **state)
{
	struct gb_slurmconf sc600 = sc_rt(600);
	struct fx *f = *state;
	struct gb_conf *geo = conf_from("cluster_name: t\nenvironment: prod\npolicy:\n  allowed_geo_regions: [ap-south-1]\n");
	struct gb_request q = mkreq("g5", 81, "g5-[1-2]", 2);
	const char *ok[] = { "ap-south-1" }, *bad[] = { "ap-south-1", "us-east-1" };
	struct gb_policy_verdict v;
	struct gb_policy_outcome o = { 0 };
	char claimed[GB_REQUEST_ID_LEN + 1] = "";
	gb_error_t e = { 0 };

	assert_int_equal(gb_state_request_add(f->st, &q, NULL), GB_E_OK);
	assert_int_equal(gb_state_request_claim(f->st, getpid(), 0, claim_cb,
						claimed, NULL), GB_E_OK);
	assert_string_equal(claimed, q.id);
	assert_int_equal(gb_policy_geo_gate(geo, f->st, &q, ok, 1, &sc600, &v, &e),
			 GB_E_OK);
	assert_int_equal(req_of(f, q.id).state, GB_RSTATE_RUNNING);
	assert_int_equal(gb_policy_geo_gate(geo, f->st, &q, bad, 2, &sc600, &v, &e),
			 GB_E_PENDING);
	assert_string_equal(v.why, "plan uses us-east-1 outside allowed_geo_regions [ap-south-1]");
	assert_int_equal(req_of(f, q.id).state, GB_RSTATE_PENDING_APPROVAL);
	assert_true(appr_of(f, q.id).expires_at == q.created_at + 300);
	assert_int_equal(events_of(f, q.id, "approval_needed").n, 1);
	/* approved: queued, claimed again, and the same plan now passes */
	assert_int_equal(gb_policy_decide(geo, f->st, q.id, GB_POLICY_APPROVE,
					  "root", 0, NULL, gb_time_now(), &o,
					  &e), GB_E_OK);
	gb_policy_outcome_clear(&o);
	assert_int_equal(gb_state_request_claim(f->st, getpid(), 0, claim_cb,
						claimed, NULL), GB_E_OK);
	assert_int_equal(gb_policy_geo_gate(geo, f->st, &q, bad, 2, &sc600, &v, &e),
			 GB_E_OK);
	assert_int_equal(req_of(f, q.id).state, GB_RSTATE_RUNNING);
	gb_conf_destroy(geo);
}

/*****************************************************************************
 *  Authorization
 *****************************************************************************/

static void test_authorize(void **state)
{
	struct fx *f = *state;
	struct passwd *pw = getpwnam("nobody");
	struct gb_policy_actor a;
	struct gb_conf *c;
	gb_error_t e = { 0 };
	uid_t nobody;
	gid_t nobody_gid;
	struct group *gr;
	char grname[64];

	if (!pw) {
		skip();
		return;
	}
	nobody = pw->pw_uid;
	nobody_gid = pw->pw_gid;
	assert_int_equal(gb_policy_authorize(f->conf, 0, "slurm", &a, &e), GB_E_OK);
	assert_string_equal(a.as, "root");
	assert_string_equal(a.name, "root");

	assert_int_equal(gb_policy_authorize(f->conf, nobody, "slurm", &a, &e),
			 GB_E_PERM);
	assert_null(a.as);
	assert_string_equal(a.name, "nobody");
	assert_non_null(strstr(e.text, "user nobody (uid "));
	assert_non_null(strstr(e.text, "SlurmUser (slurm)"));

	assert_int_equal(gb_policy_authorize(f->conf, nobody, "nobody", &a, &e),
			 GB_E_OK);
	assert_string_equal(a.as, "SlurmUser");

	c = conf_from("cluster_name: t\nadmins:\n  users: [alice, nobody]\n");
	assert_int_equal(gb_policy_authorize(c, nobody, NULL, &a, &e), GB_E_OK);
	assert_string_equal(a.as, "admins.users");
	gb_conf_destroy(c);
	c = conf_from("cluster_name: t\nadmins:\n  users: [\"#%lu\"]\n",
		      (unsigned long)nobody);
	assert_int_equal(gb_policy_authorize(c, nobody, NULL, &a, &e), GB_E_OK);
	gb_conf_destroy(c);

	gr = getgrgid(nobody_gid);
	if (gr) {
		gb_strlcpy(grname, gr->gr_name, sizeof(grname));
		c = conf_from("cluster_name: t\nadmins:\n  group: %s\n", grname);
		assert_int_equal(gb_policy_authorize(c, nobody, NULL, &a, &e),
				 GB_E_OK);
		assert_string_equal(a.as, "admins.group");
		gb_conf_destroy(c);
	}
	c = conf_from("cluster_name: t\nadmins:\n  group: gb-no-such-group\n");
	assert_int_equal(gb_policy_authorize(c, nobody, NULL, &a, &e), GB_E_PERM);
	gb_conf_destroy(c);
	/* a uid without a passwd entry is refused by number */
	assert_int_equal(gb_policy_authorize(f->conf, 4000123, NULL, &a, &e),
			 GB_E_PERM);
	assert_string_equal(a.name, "#4000123");
}

/*****************************************************************************
 *  Notify
 *****************************************************************************/

static void test_notify(void **state)
{
	struct fx *f = *state;
	struct gb_request r = mkreq("g5", 91, "g5-[1-11]", 11);
	char out[200], *doc = NULL, *text = NULL;
	struct gb_conf *c;
	json_t *j;

	snprintf(out, sizeof(out), "%s/notified.json", f->dir);
	gb_strlcpy(r.id, "00112233445566aa", sizeof(r.id));
	r.created_at = 1800000000;
	assert_int_equal(gb_policy_notify_json(f->conf, &r, "why not",
					       1800000300, &doc, NULL), GB_E_OK);
	j = json_loads(doc, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "request_id")),
			    "00112233445566aa");
	assert_int_equal(json_integer_value(json_object_get(j, "job_id")), 91);
	assert_int_equal(json_integer_value(json_object_get(j, "node_count")), 11);
	assert_string_equal(json_string_value(json_object_get(j, "expires_at")),
			    "2027-01-15T08:05:00Z");
	assert_string_equal(json_string_value(json_object_get(j, "approve")),
			    "gpuburstctl approve 00112233445566aa");
	assert_string_equal(json_string_value(json_object_get(j, "environment")),
			    "prod");
	json_decref(j);
	free(doc);

	/* not configured: nothing runs */
	assert_int_equal(gb_policy_notify_spawn(f->conf, &r, "w", 1, NULL), GB_E_OK);
	c = conf_from("cluster_name: t\npolicy:\n  approval_notify: [/bin/sh, -c, 'cat > %s.tmp && mv %s.tmp %s']\n",
		      out, out, out);
	assert_int_equal(gb_policy_notify_spawn(c, &r, "spawned", 1800000300, NULL),
			 GB_E_OK);
	for (int i = 0; i < 500 && access(out, F_OK) != 0; i++)
		usleep(10000);
	assert_int_equal(gb_file_read(out, 65536, &text, NULL, NULL), GB_E_OK);
	j = json_loads(text, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "why")), "spawned");
	json_decref(j);
	free(text);
	gb_conf_destroy(c);
}

/*****************************************************************************
 *  slurm.conf
 *****************************************************************************/

static void test_slurmconf(void **state)
{
	struct fx *f = *state;
	struct gb_slurmconf sc;
	char main_path[200], inc[200], text[1024];
	gb_error_t e = { 0 };

	snprintf(main_path, sizeof(main_path), "%s/slurm.conf", f->dir);
	snprintf(inc, sizeof(inc), "%s/power.conf", f->dir);
	write_file(inc,
		   "# power saving\n"
		   "ResumeTimeout=600 # seconds\n"
		   "SuspendTime=INFINITE\n"
		   "ResumeProgram=\"/usr/sbin/gpuburst-resume\"\n"
		   "SlurmctldParameters=idle_on_node_suspend,\\\n"
		   "power_save_interval=5\n");
	snprintf(text, sizeof(text),
		 "ClusterName=lab\n"
		 "slurmuser=slurm(64030)\n"
		 "Include power.conf\n"
		 "NodeName=g5-[1-4] CPUs=4 State=CLOUD ResumeTimeout=1\n"
		 "PartitionName=DEFAULT ResumeTimeout=300\n"
		 "PartitionName=gpu Nodes=g5-[1-4] Default=YES\n"
		 "PartitionName=fast Nodes=g5-[1-2] ResumeTimeout=120\n"
		 "PartitionName=cpu Nodes=c1\n"
		 "Reason=\"a \\# hash\"\n"
		 "SuspendTimeout=45\n");
	write_file(main_path, text);
	assert_int_equal(gb_slurmconf_read(main_path, &sc, &e), GB_E_OK);
	assert_string_equal(sc.cluster_name, "lab");
	assert_string_equal(sc.slurm_user, "slurm");
	assert_true(sc.resume_timeout == 600);
	assert_true(sc.suspend_timeout == 45);
	assert_true(sc.suspend_time == -1);
	assert_string_equal(sc.resume_program, "/usr/sbin/gpuburst-resume");
	assert_string_equal(sc.slurmctld_parameters,
			    "idle_on_node_suspend,power_save_interval=5");
	assert_null(sc.suspend_program);
	assert_int_equal(sc.n_partitions, 3);
	assert_true(gb_slurmconf_partition(&sc, "gpu")->resume_timeout == 300);
	assert_true(gb_slurmconf_partition(&sc, "fast")->resume_timeout == 120);
	assert_null(gb_slurmconf_partition(&sc, "DEFAULT"));
	assert_null(gb_slurmconf_partition(&sc, "nope"));
	gb_slurmconf_clear(&sc);

	assert_int_equal(sc.duplicates.n, 0);

	/* the keys a site merges with gpuburst's, and each one set twice */
	write_file(inc, "SlurmctldParameters=idle_on_node_suspend\nGresTypes=gpu\n");
	write_file(main_path,
		   "SlurmctldParameters=enable_configless\n"
		   "ReturnToService=1\nSchedulerParameters=bf_interval=5\n"
		   "SuspendExcNodes=n[1-2]:1\nSuspendExcParts=site\n"
		   "Include power.conf\n"
		   "gres_types=gpu,mps\n");	/* keys are case-insensitive, not '_'-blind */
	assert_int_equal(gb_slurmconf_read(main_path, &sc, &e), GB_E_OK);
	assert_string_equal(sc.slurmctld_parameters, "idle_on_node_suspend");
	assert_string_equal(sc.return_to_service, "1");
	assert_string_equal(sc.scheduler_parameters, "bf_interval=5");
	assert_string_equal(sc.suspend_exc_nodes, "n[1-2]:1");
	assert_string_equal(sc.suspend_exc_parts, "site");
	assert_string_equal(sc.gres_types, "gpu");
	assert_int_equal(sc.duplicates.n, 1);
	snprintf(text, sizeof(text), "SlurmctldParameters: %s:1 replaces %s:1", inc, main_path);
	assert_string_equal(sc.duplicates.v[0], text);
	gb_slurmconf_clear(&sc);

	/* defaults */
	write_file(main_path, "ClusterName=x\n");
	assert_int_equal(gb_slurmconf_read(main_path, &sc, &e), GB_E_OK);
	assert_string_equal(sc.slurm_user, "root");
	assert_true(sc.resume_timeout == 60);
	gb_slurmconf_clear(&sc);

	/* errors name the file and line */
	write_file(main_path, "ClusterName=x\n\nResumeTimeout=ten\n");
	assert_int_equal(gb_slurmconf_read(main_path, &sc, &e), GB_E_PARSE);
	snprintf(text, sizeof(text), "%s:3: ResumeTimeout 'ten' is not a number of seconds", main_path);
	assert_string_equal(e.text, text);
	gb_slurmconf_clear(&sc);
	write_file(main_path, "Include missing.conf\n");
	assert_int_equal(gb_slurmconf_read(main_path, &sc, &e), GB_E_NOTFOUND);
	gb_slurmconf_clear(&sc);
	write_file(main_path, "Include slurm.conf\n");	/* a loop */
	assert_int_equal(gb_slurmconf_read(main_path, &sc, &e), GB_E_PARSE);
	assert_non_null(strstr(e.text, "nested more than"));
	gb_slurmconf_clear(&sc);
	/* an included FIFO is refused, not waited on (the alarm fails a wait) */
	unlink(inc);
	assert_int_equal(mkfifo(inc, 0600), 0);
	write_file(main_path, "Include power.conf\n");
	alarm(20);
	assert_int_equal(gb_slurmconf_read(main_path, &sc, &e), GB_E_IO);
	alarm(0);
	snprintf(text, sizeof(text), "%s is not a regular file (a FIFO)", inc);
	assert_non_null(strstr(e.text, text));
	gb_slurmconf_clear(&sc);
	unlink(inc);

	setenv(GB_SLURMCONF_ENV, "/x/slurm.conf", 1);
	assert_string_equal(gb_slurmconf_path(true), "/x/slurm.conf");
	assert_string_equal(gb_slurmconf_path(false), GB_SLURMCONF_DEFAULT);
	unsetenv(GB_SLURMCONF_ENV);
	assert_string_equal(gb_slurmconf_path(true), GB_SLURMCONF_DEFAULT);
}

/*****************************************************************************
 *  Spend: instance time x price, the summary, budgets
 *****************************************************************************/

#define SPEND_NOW 1797336000.0	/* 2026-12-15T12:00:00Z */

static void tu_write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	if (!fp || fputs(text, fp) == EOF || fclose(fp))
		fail_msg("writing %s", path);
}

static void spend_instance(struct fx *f, const char *req, const char *region, const char *id,
			   const char *capacity, double launched, double terminated)
{
	struct gb_instance in = { 0 };
	gb_error_t e = { 0 };

	in.request_id = req;
	in.region = region;
	in.instance_id = id;
	in.node = "g5-1";
	in.instance_type = "g5.xlarge";
	in.capacity = capacity;
	in.state = terminated > 0 ? GB_INST_TERMINATED : GB_INST_RUNNING;
	in.launched_at = launched;
	in.terminated_at = terminated;
	if (gb_state_instance_add(f->st, &in, &e))
		fail_msg("instance %s: %s", id, e.text);
}

static const struct gb_cost_row *row_of(const struct gb_cost_report *r, const char *key)
{
	for (size_t i = 0; i < r->n; i++) {
		if (strcmp(r->v[i].key, key) == 0)
			return &r->v[i];
	}
	fail_msg("no cost row %s", key);
	return NULL;
}

/*
 * Spot prices cached by reconcile price spot instances: the pool of the
 * record's AZ, the region's highest without one, the price file otherwise.
 */
static void spend_spot(struct fx *f, const struct gb_conf *conf)
{
	static const char *const types[] = { "g5.xlarge" };
	const struct gb_spot_price cached[] = {
		{ NULL, "ap-south-1a", "g5.xlarge", 0.9, SPEND_NOW - 86400, 0 },
		{ NULL, "ap-south-1b", "g5.xlarge", 1.44, SPEND_NOW - 86400, 0 },
	};
	struct gb_usage u = { .region = "ap-south-1", .instance_type = "g5.xlarge",
			      .capacity = "spot" };
	struct gb_instance in = { 0 };
	struct gb_cost_report r = { 0 };
	gb_error_t e = { 0 };

	/* nothing cached: the price file's spot line */
	assert_true(gb_policy_usage_price(conf, f->st, &u) == 1.8);
	tu_ok(gb_state_spot_prices_replace(f->st, "ap-south-1", types, 1, cached, 2,
					   SPEND_NOW - 60, &e), &e);
	assert_true(gb_policy_usage_price(conf, f->st, &u) == 1.44);	/* no AZ: highest */
	u.az = "ap-south-1a";
	assert_true(gb_policy_usage_price(conf, f->st, &u) == 0.9);
	u.az = "ap-south-1c";						/* not cached there */
	assert_true(gb_policy_usage_price(conf, f->st, &u) == 1.8);
	u.az = "ap-south-1a";
	assert_true(gb_policy_usage_price(conf, NULL, &u) == 1.8);	/* no state: the file */
	u.capacity = "on-demand";
	assert_true(gb_policy_usage_price(conf, f->st, &u) == 3.6);
	u.capacity = "spot";
	u.region = "us-east-1";
	assert_true(gb_policy_usage_price(conf, f->st, &u) < 0);

	/* i-2 (spot, no AZ) 500 s at 1.44; i-5 (spot, ap-south-1a) 360 s at 0.90 */
	in.request_id = "0123456789abcdef";
	in.region = "ap-south-1";
	in.instance_id = "i-5";
	in.az = "ap-south-1a";
	in.instance_type = "g5.xlarge";
	in.capacity = "spot";
	in.state = GB_INST_RUNNING;
	in.launched_at = SPEND_NOW - 360;
	tu_ok(gb_state_instance_add(f->st, &in, &e), &e);
	assert_int_equal(gb_policy_cost(conf, f->st, SPEND_NOW - 500, SPEND_NOW, SPEND_NOW,
					GB_COST_BY_CLUSTER, &r, &e), GB_E_OK);
	assert_int_equal(r.instances, 3);		/* and bob's unpriced i-3 */
	assert_true(fabs(r.usd - (500 * 1.44 + 360 * 0.9) / 3600) < 1e-9);
	gb_cost_report_clear(&r);
}

static void test_spend(void **state)
{
	struct fx *f = *state;
	struct gb_request a = mkreq("g5", 7, "g5-1", 1), b = mkreq("g5", 8, "g5-2", 1);
	struct gb_spend_summary sum = { 0 };
	struct gb_cost_report r = { 0 };
	struct gb_buf msg = GB_BUF_INIT;
	struct gb_budget_job job = { "alice", "phys", "gpu,cpu", 7.0, NULL };
	const struct gb_conf_budget *over;
	char prices[200], spend[200];
	gb_error_t e = { 0 };
	struct gb_conf *conf;

	snprintf(prices, sizeof(prices), "%s/prices", f->dir);
	snprintf(spend, sizeof(spend), "%s/spend", f->dir);
	tu_write_file(prices, "gpuburst-prices 1\nrefreshed 2026-12-01T00:00:00Z\n"
		      "source test\n# region type capacity usd_per_hour\n"
		      "ap-south-1 g5.xlarge on-demand 3.6\nap-south-1 g5.xlarge spot 1.8\n");
	conf = conf_from("cluster_name: t\nstate_dir: %s\npolicy:\n  budgets:\n"
			 "    alice: {user: alice, monthly: 10}\n"
			 "    gpu: {partition: gpu, per_job: 7.5, over: refuse}\n", f->dir);
	assert_int_equal(conf->n_prices_, 2);
	assert_true(gb_conf_price(conf, "ap-south-1", "g5.xlarge", GB_CAPACITY_BLOCK, NULL) == 3.6);
	assert_true(gb_conf_price(conf, "us-east-1", "g5.xlarge", GB_CAPACITY_ON_DEMAND, NULL) < 0);

	assert_int_equal(gb_state_request_add(f->st, &a, &e), GB_E_OK);
	assert_int_equal(gb_state_request_add(f->st, &b, &e), GB_E_OK);
	assert_int_equal(gb_state_request_set_owner(f->st, a.id, "alice", "phys", "gpu", &e),
			 GB_E_OK);
	assert_int_equal(gb_state_request_set_owner(f->st, b.id, "bob", NULL, "gpu", &e),
			 GB_E_OK);
	assert_int_equal(gb_state_request_set_owner(f->st, "0123456789abcdef", "x", NULL, NULL,
						    &e), GB_E_NOTFOUND);
	/* 1800 s on demand (1.80), 1000 s spot still running (0.50) */
	spend_instance(f, a.id, "ap-south-1", "i-1", "on-demand", SPEND_NOW - 3600,
		       SPEND_NOW - 1800);
	spend_instance(f, a.id, "ap-south-1", "i-2", "spot", SPEND_NOW - 1000, 0);
	/* bob: 100 s where no price is known; and one before the window */
	spend_instance(f, b.id, "us-east-1", "i-3", "on-demand", SPEND_NOW - 100, 0);
	spend_instance(f, b.id, "ap-south-1", "i-4", "on-demand", SPEND_NOW - 90000,
		       SPEND_NOW - 80000);

	assert_int_equal(gb_policy_cost(conf, f->st, SPEND_NOW - 7200, SPEND_NOW, SPEND_NOW,
					GB_COST_BY_USER, &r, &e), GB_E_OK);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.v[0].key, "alice");	/* the most expensive first */
	assert_int_equal(row_of(&r, "alice")->instances, 2);
	assert_true(fabs(row_of(&r, "alice")->seconds - 2800) < 1e-6);
	assert_true(fabs(row_of(&r, "alice")->usd - 2.3) < 1e-9);
	assert_true(fabs(row_of(&r, "bob")->unpriced_seconds - 100) < 1e-6);
	assert_true(row_of(&r, "bob")->usd == 0);
	assert_true(fabs(r.usd - 2.3) < 1e-9 && fabs(r.seconds - 2900) < 1e-6);
	gb_cost_report_clear(&r);
	/* a window that cuts: i-2's last 500 s only */
	assert_int_equal(gb_policy_cost(conf, f->st, SPEND_NOW - 500, SPEND_NOW, SPEND_NOW,
					GB_COST_BY_JOB, &r, &e), GB_E_OK);
	assert_true(fabs(row_of(&r, "7")->usd - 0.25) < 1e-9);
	assert_true(fabs(row_of(&r, "8")->seconds - 100) < 1e-6);
	gb_cost_report_clear(&r);
	assert_int_equal(gb_policy_cost(conf, f->st, SPEND_NOW, SPEND_NOW - 1, SPEND_NOW,
					GB_COST_BY_JOB, &r, &e), GB_E_INVALID);

	/* the summary: this month, per scope; read back as the plugin does */
	assert_int_equal(gb_policy_spend_refresh(conf, f->st, SPEND_NOW, &e), GB_E_OK);
	tu_ok(gb_spend_read(spend, &sum, &e), &e);
	assert_string_equal(sum.month, "2026-12");
	assert_true(fabs(gb_spend_of(&sum, GB_BUDGET_USER, "alice") - 2.3) < 1e-6);
	/* bob's unpriced 100 s add nothing; i-4 (10000 s, 10.00) is this month too */
	assert_true(fabs(gb_spend_of(&sum, GB_BUDGET_PARTITION, "gpu") - 12.3) < 1e-6);
	assert_true(fabs(gb_spend_of(&sum, GB_BUDGET_CLUSTER, NULL) - 12.3) < 1e-6);
	assert_true(fabs(gb_spend_of(&sum, GB_BUDGET_USER, "bob") - 10.0) < 1e-6);
	assert_true(gb_spend_of(&sum, GB_BUDGET_USER, "nobody") == 0);

	/* budgets: 2.30 spent + 7.00 fits alice's 10; 8.00 does not */
	assert_null(gb_budget_over(conf, &sum, &job, SPEND_NOW, &msg));
	job.estimate = 8;
	over = gb_budget_over(conf, &sum, &job, SPEND_NOW, &msg);
	assert_non_null(over);
	assert_string_equal(over->name, "alice");	/* the first that is over */
	gb_buf_reset(&msg);
	job.user = "carol";				/* the gpu partition's per-job cap */
	over = gb_budget_over(conf, &sum, &job, SPEND_NOW, &msg);
	assert_non_null(over);
	assert_string_equal(over->name, "gpu");
	assert_int_equal(over->over, GB_BUDGET_REFUSE);
	assert_string_equal(gb_buf_str(&msg),
			    "budget 'gpu' (partition gpu): this job ~8.00 USD is over the 7.50 USD a job may cost");
	gb_buf_reset(&msg);
	job.user = "alice";
	job.partitions = "cpu";
	over = gb_budget_over(conf, &sum, &job, SPEND_NOW, &msg);
	assert_non_null(over);
	assert_string_equal(over->name, "alice");
	assert_string_equal(gb_buf_str(&msg),
			    "budget 'alice' (user alice): 2.30 of 10.00 USD spent in 2026-12, this job ~8.00 USD");
	/* last month's summary counts as nothing spent */
	gb_buf_reset(&msg);
	job.estimate = 7.8;
	assert_null(gb_budget_over(conf, &sum, &job, SPEND_NOW + 40 * 86400.0, &msg));
	assert_non_null(gb_budget_over(conf, &sum, &job, SPEND_NOW, &msg));
	/* an estimate not known is over any budget that applies */
	gb_buf_reset(&msg);
	job.estimate = -1;
	job.why_unknown = "it has no time limit (--time)";
	assert_non_null(gb_budget_over(conf, &sum, &job, SPEND_NOW, &msg));
	assert_string_equal(gb_buf_str(&msg),
			    "budget 'alice' (user alice): this job's cost cannot be estimated: it has no time limit (--time)");
	job.user = "carol";
	assert_null(gb_budget_over(conf, &sum, &job, SPEND_NOW, NULL));

	spend_spot(f, conf);
	gb_buf_free(&msg);
	gb_spend_clear(&sum);
	gb_conf_destroy(conf);
}

/* A damaged summary is refused, naming the line; a missing one is empty. */
static void test_spend_file(void **state)
{
	struct fx *f = *state;
	struct gb_spend_summary s = { 0 };
	char path[200];
	gb_error_t e = { 0 };

	snprintf(path, sizeof(path), "%s/spend", f->dir);
	assert_int_equal(gb_spend_read(path, &s, &e), GB_E_OK);
	assert_int_equal(s.n, 0);
	tu_write_file(path, "gpuburst-spend 1\nrefreshed 2026-12-15T12:00:00Z\nsource 2026-12\n"
		      "user alice 1.5\nuser al ice 2\n");
	assert_int_equal(gb_spend_read(path, &s, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "spend:5: expected 3 fields"));
	tu_write_file(path, "gpuburst-spend 1\nrefreshed 2026-12-15T12:00:00Z\nsource 2026-12\n"
		      "group x 1\n");
	assert_int_equal(gb_spend_read(path, &s, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, ":4: the scope is not"));
	tu_write_file(path, "gpuburst-spend 2\n");
	assert_int_equal(gb_spend_read(path, &s, &e), GB_E_INVALID);
	tu_write_file(path, "gpuburst-spend 1\nrefreshed 2026-12-15T12:00:00Z\nsource 2026-12\n"
		      "cluster - 4\nuser alice -1\n");
	assert_int_equal(gb_spend_read(path, &s, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, ":5: the amount"));
	assert_int_equal(s.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_judge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_geo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test(test_timeout_for),
		cmocka_unit_test(test_reprobe_window),
		cmocka_unit_test_setup_teardown(test_gate_job_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_many_jobs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_earlier, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_denied_not_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_bad_hostlist, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_other_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_approve_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deny, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decide_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decide_after_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expire, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_geo_gate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_authorize, setup, teardown),
		cmocka_unit_test_setup_teardown(test_notify, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slurmconf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spend, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spend_file, setup, teardown),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
