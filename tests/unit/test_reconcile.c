/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_reconcile.c - reconcile's NOTICE from Slurm's reasons: which nodes it
 * acts on (the agent's spot interruption and failed GPU check naming the
 * node's newest live instance, on nodes of a nodeset), what it remembers
 * (an ICE of the record's offering), and that it does so once per
 * instance, whatever the pass and whichever handle asks
 *
 * No Slurm: the nodes are given to the pass (opts.nodes), as the
 * controller would list them.  No cloud: only_notice and the cheap pass.
 * Each test works in its own mkdtemp directory, removed afterwards.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <fcntl.h>

#include <cmocka.h>

#include "gb_conf.h"
#include "gb_reconcile.h"
#include "gb_slurm.h"
#include "gb_state.h"
#include "gb_str.h"
#include "gb_util.h"
#include "teststate.h"
#include "testutil.h"

#define T0 2000000000.0		/* launches; the passes run an hour later */
#define NOW (T0 + 3600)

/* 17 hex digits, as EC2's ids */
#define I_SPOT "i-00000000000000001"
#define I_OLD "i-00000000000000002"
#define I_NEW "i-00000000000000003"
#define I_REBAL "i-00000000000000004"
#define I_OTHER "i-00000000000000005"
#define I_SICK "i-00000000000000006"
#define I_GONE "i-00000000000000007"

static const char conf_yaml[] =
	TU_CONF_HEAD
	"    azs: [{name: ap-south-1a, subnets: [subnet-1]}, {name: ap-south-1b, subnets: [subnet-2]}]\n"
	"fallback_groups:\n"
	"  g: {consumer_regions: [ap-south-1], fallback_regions: [ap-south-1]}\n"
	"nodesets:\n"
	"  - {name: g5, nodes: 'g5-[1-8]', instance_type: g5.xlarge, home_region: ap-south-1}\n"
	"policy: {ice_cooldown: 15m}\n";

struct fx {
	char dir[64];
	char path[160];
	struct gb_conf *conf;
	gb_state_t *st;
	char req[GB_REQUEST_ID_LEN + 1];
	struct gb_slurm_node v[8];
	struct gb_slurm_node_list nodes;
};

static void add_instance(struct fx *f, const char *id, const char *node, const char *az,
			 const char *capacity, double launched, enum gb_instance_state state)
{
	struct gb_instance in = { 0 };
	gb_error_t e = { 0 };

	in.request_id = f->req;
	in.region = "ap-south-1";
	in.instance_id = id;
	in.node = node;
	in.az = az;
	in.instance_type = "g5.xlarge";
	in.capacity = capacity;
	in.state = state;
	in.launched_at = launched;
	if (state == GB_INST_TERMINATED)
		in.terminated_at = launched + 60;
	tu_ok(gb_state_instance_add(f->st, &in, &e), &e);
}

/* Slurm's nodes (sorted by name, as gb_slurm_nodes_load gives them). */
static void add_node(struct fx *f, const char *name, const char *reason)
{
	struct gb_slurm_node *sn = &f->v[f->nodes.n++];

	memset(sn, 0, sizeof(*sn));
	sn->name = (char *)name;
	sn->addr = sn->hostname = (char *)name;
	sn->reason = (char *)reason;
	sn->features = sn->features_act = (char *)"";
	sn->state_str = (char *)"IDLE+DRAIN+CLOUD";
	sn->reason_time = NOW - 30;
	sn->idle = sn->cloud = sn->drain = true;
}

/*
 * A running resume and its instances, and what the agents set:
 *   g5-1  spot interruption of its instance           -> notice (spot)
 *   g5-2  spot interruption of its older instance     -> stale, ignored
 *   g5-3  rebalance recommendation                     -> ignored
 *   g5-4  unhealthy, its instance on-demand in 1b      -> notice (+ failure)
 *   g5-5  spot interruption of a terminated instance  -> ignored
 *   x1    (in no nodeset) spot interruption            -> never touched
 */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	gb_error_t e = { 0 };

	if (!f ||
	    tu_tmpdir(f->dir, sizeof(f->dir), "reconcile", f->path, sizeof(f->path), "state.db"))
		return -1;
	if (gb_conf_load_string("t.yaml", conf_yaml, strlen(conf_yaml), &f->conf, NULL, &e) ||
	    gb_state_open(f->path, 0, TS_BUSY_MS, &f->st, &e))
		fail_msg("%s", e.text);
	ts_request(f->st, GB_RSTATE_RUNNING, "g5-[1-5]", 5, "ap-south-1", f->req);
	add_instance(f, I_SPOT, "g5-1", "ap-south-1a", "spot", T0, GB_INST_RUNNING);
	add_instance(f, I_OLD, "g5-2", "ap-south-1a", "spot", T0, GB_INST_TERMINATING);
	add_instance(f, I_NEW, "g5-2", "ap-south-1b", "spot", T0 + 100, GB_INST_PENDING);
	add_instance(f, I_REBAL, "g5-3", "ap-south-1a", "spot", T0, GB_INST_RUNNING);
	add_instance(f, I_OTHER, "x1", "ap-south-1a", "spot", T0, GB_INST_RUNNING);
	add_instance(f, I_SICK, "g5-4", "ap-south-1b", NULL, T0, GB_INST_RUNNING);
	add_instance(f, I_GONE, "g5-5", "ap-south-1a", "spot", T0, GB_INST_TERMINATED);
	add_node(f, "g5-1", "gpuburst: spot interruption: instance " I_SPOT
		 " at 2033-05-18T04:35:20Z");
	add_node(f, "g5-2", "gpuburst: spot interruption: instance " I_OLD
		 " at 2033-05-18T04:35:20Z");
	add_node(f, "g5-3", "gpuburst: rebalance recommendation: instance " I_REBAL);
	add_node(f, "g5-4", "gpuburst: unhealthy: instance " I_SICK ": nvidia-smi: 3 GPUs, "
		 "expected 4");
	add_node(f, "g5-5", "gpuburst: spot interruption: instance " I_GONE " at T");
	add_node(f, "g5-6", NULL);
	add_node(f, "x1", "gpuburst: spot interruption: instance " I_OTHER " at T");
	f->nodes.v = f->v;
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

/* One pass on [st]; RET the report (gb_reconcile_report_clear). */
static struct gb_reconcile_report pass(struct fx *f, gb_state_t *st, bool only_notice,
				       bool dry_run)
{
	struct gb_reconcile_opts o = { 0 };
	struct gb_reconcile_report rep = { 0 };
	gb_error_t e = { 0 };

	o.conf = f->conf;
	o.st = st;
	o.dry_run = dry_run;
	o.cheap = true;
	o.only_notice = only_notice;
	o.now = NOW;
	o.nodes = &f->nodes;
	tu_ok(gb_reconcile_run(&o, &rep, &e), &e);
	return rep;
}

/* Capacity memory, one line per row: "az capacity ice failures last_ice_at". */
struct mem {
	int n;
	char row[8][128];
};

static int mem_cb(const struct gb_capacity *c, void *arg)
{
	struct mem *m = arg;

	if (m->n < 8)
		snprintf(m->row[m->n], sizeof(m->row[0]), "%s %s %s %.2f %.2f %.0f",
			 c->az ? c->az : "-", c->instance_type, c->capacity, c->ice,
			 c->failures, c->last_ice_at - T0);
	m->n++;
	return 0;
}

static struct mem memory(struct fx *f)
{
	struct mem m = { 0 };
	gb_error_t e = { 0 };

	tu_ok(gb_state_capacity_list(f->st, NULL, NOW, f->conf->policy.capacity_half_life, mem_cb,
				     &m, &e), &e);
	return m;
}

/* The request's reconcile events with action "notice". */
static int ev_cb(const struct gb_event *ev, void *arg)
{
	if (strcmp(ev->kind, "reconcile") == 0 && ev->detail &&
	    strstr(ev->detail, "\"action\":\"notice\""))
		++*(int *)arg;
	return 0;
}

static int notice_events(struct fx *f)
{
	gb_error_t e = { 0 };
	int n = 0;

	tu_ok(gb_state_event_list(f->st, f->req, ev_cb, &n, &e), &e);
	return n;
}

static void test_notice_which(void **state)
{
	struct fx *f = *state;
	struct gb_reconcile_report rep;
	struct mem m;

	/* a dry run says what it would do, and does none of it */
	rep = pass(f, f->st, true, true);
	assert_int_equal(rep.n, 2);
	assert_int_equal(rep.counts[GB_RECONCILE_NOTICE], 2);
	assert_false(rep.v[0].done || rep.v[1].done);
	gb_reconcile_report_clear(&rep);
	assert_int_equal(memory(f).n, 0);

	rep = pass(f, f->st, true, false);
	assert_int_equal(rep.n, 2);
	assert_int_equal(rep.failed, 0);
	assert_int_equal(rep.v[0].kind, GB_RECONCILE_NOTICE);
	assert_string_equal(rep.v[0].target, "ap-south-1#" I_SPOT);
	assert_string_equal(rep.v[0].node, "g5-1");
	assert_true(rep.v[0].done);
	assert_non_null(strstr(rep.v[0].detail, "offering ap-south-1/ap-south-1a g5.xlarge spot "
					       "dry for 900 s (policy.ice_cooldown)"));
	assert_string_equal(rep.v[1].target, "ap-south-1#" I_SICK);
	assert_string_equal(rep.v[1].node, "g5-4");
	assert_non_null(strstr(rep.v[1].detail, "ap-south-1/ap-south-1b g5.xlarge on-demand"));
	gb_reconcile_report_clear(&rep);

	/* an ICE of each offering, now; the failed GPU check a failure too */
	m = memory(f);
	assert_int_equal(m.n, 2);
	assert_string_equal(m.row[0], "ap-south-1a g5.xlarge spot 1.00 0.00 3600");
	assert_string_equal(m.row[1], "ap-south-1b g5.xlarge on-demand 1.00 1.00 3600");
	assert_int_equal(notice_events(f), 2);
}

/* Once per instance: the next passes, another handle, a dry run: nothing. */
static void test_notice_once(void **state)
{
	struct fx *f = *state;
	struct gb_reconcile_report rep;
	gb_state_t *other = NULL;
	gb_error_t e = { 0 };

	rep = pass(f, f->st, true, false);
	assert_int_equal(rep.n, 2);
	gb_reconcile_report_clear(&rep);

	rep = pass(f, f->st, true, false);
	assert_int_equal(rep.n, 0);
	gb_reconcile_report_clear(&rep);
	rep = pass(f, f->st, true, true);
	assert_int_equal(rep.n, 0);
	gb_reconcile_report_clear(&rep);
	tu_ok(gb_state_open(f->path, 0, TS_BUSY_MS, &other, &e), &e);
	rep = pass(f, other, false, false);
	assert_int_equal(rep.counts[GB_RECONCILE_NOTICE], 0);
	gb_reconcile_report_clear(&rep);
	gb_state_close(other);
	assert_string_equal(memory(f).row[0], "ap-south-1a g5.xlarge spot 1.00 0.00 3600");
	assert_int_equal(notice_events(f), 2);

	/* the node relaunched on a new instance that is interrupted too: again */
	add_instance(f, "i-00000000000000011", "g5-1", "ap-south-1b", "spot", NOW - 60,
		     GB_INST_RUNNING);
	f->v[0].reason = (char *)"gpuburst: spot interruption: instance i-00000000000000011 at T";
	rep = pass(f, f->st, true, false);
	assert_int_equal(rep.n, 1);
	assert_string_equal(rep.v[0].target, "ap-south-1#i-00000000000000011");
	gb_reconcile_report_clear(&rep);
	assert_int_equal(memory(f).n, 3);
}

/* only_notice is NOTICE alone: the cheap pass would fail the old request. */
static void test_only_notice(void **state)
{
	struct fx *f = *state;
	struct gb_reconcile_opts o = { 0 };
	struct gb_reconcile_report rep = { 0 };
	gb_error_t e = { 0 };

	o.conf = f->conf;
	o.st = f->st;
	o.only_notice = true;
	o.now = gb_time_now() + 30 * 86400;	/* past request_deadline */
	o.nodes = &f->nodes;
	tu_ok(gb_reconcile_run(&o, &rep, &e), &e);
	assert_int_equal(rep.counts[GB_RECONCILE_STUCK], 0);
	assert_int_equal(rep.counts[GB_RECONCILE_NOTICE], 2);
	gb_reconcile_report_clear(&rep);
	o.only_notice = false;
	o.cheap = true;
	tu_ok(gb_reconcile_run(&o, &rep, &e), &e);
	assert_int_equal(rep.counts[GB_RECONCILE_STUCK], 1);
	assert_int_equal(rep.counts[GB_RECONCILE_NOTICE], 0);
	gb_reconcile_report_clear(&rep);
	assert_string_equal(gb_reconcile_kind_name(GB_RECONCILE_NOTICE), "notice");
}

/* No node has an agent's reason: the records are not even read. */
static void test_notice_none(void **state)
{
	struct fx *f = *state;
	struct gb_reconcile_report rep;

	for (size_t i = 0; i < f->nodes.n; i++)
		if (strcmp(f->v[i].name, "x1") != 0)
			f->v[i].reason = NULL;	/* x1 is in no nodeset */
	rep = pass(f, f->st, true, false);
	assert_int_equal(rep.n, 0);
	gb_reconcile_report_clear(&rep);
	assert_int_equal(memory(f).n, 0);
}

/*
 * Passes that act run one at a time (reconcile.lock beside the state
 * file): held by another, a pass that does not wait is skipped, one that
 * waits gives up with GB_E_BUSY after its wait; a dry run needs no lock.
 */
static void test_lock(void **state)
{
	struct fx *f = *state;
	struct gb_reconcile_opts o = { 0 };
	struct gb_reconcile_report rep = { 0 };
	char lock[256];
	gb_error_t e = { 0 };
	double t0;
	int fd;

	snprintf(lock, sizeof(lock), "%s/%s", f->dir, GB_RECONCILE_LOCK);
	fd = open(lock, O_RDONLY | O_CREAT | O_CLOEXEC, 0640);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	o.conf = f->conf;
	o.st = f->st;
	o.cheap = true;
	o.now = NOW;
	o.nodes = &f->nodes;
	o.lock_wait = -1;
	tu_ok(gb_reconcile_run(&o, &rep, &e), &e);
	assert_true(rep.skipped);
	assert_int_equal(rep.n, 0);
	gb_reconcile_report_clear(&rep);
	memset(&rep, 0, sizeof(rep));
	o.lock_wait = 0.3;
	t0 = gb_time_mono();
	assert_int_equal(gb_reconcile_run(&o, &rep, &e), GB_E_BUSY);
	assert_true(gb_time_mono() - t0 >= 0.3);
	assert_non_null(strstr(e.text, "another pass has held"));
	assert_non_null(strstr(e.text, GB_RECONCILE_LOCK));
	gb_reconcile_report_clear(&rep);
	memset(&rep, 0, sizeof(rep));
	o.dry_run = true;	/* acts on nothing: no lock */
	tu_ok(gb_reconcile_run(&o, &rep, &e), &e);
	assert_false(rep.skipped);
	assert_int_equal(rep.counts[GB_RECONCILE_NOTICE], 2);
	gb_reconcile_report_clear(&rep);
	memset(&rep, 0, sizeof(rep));
	close(fd);	/* released: the pass runs, and the lock is free after it */
	o.dry_run = false;
	tu_ok(gb_reconcile_run(&o, &rep, &e), &e);
	assert_false(rep.skipped);
	assert_int_equal(rep.counts[GB_RECONCILE_NOTICE], 2);
	gb_reconcile_report_clear(&rep);
	fd = open(lock, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	close(fd);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_notice_which),
		T(test_notice_once),
		T(test_only_notice),
		T(test_notice_none),
		T(test_lock),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
