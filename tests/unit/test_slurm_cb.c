/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_slurm_cb.c - the Capacity Block plan (gb_slurm_cb_plan): which
 * reservations to ensure or delete and which nodes to power down, from
 * the blocks, Slurm's reservations and node states, the margin and now;
 * the reason it writes; the reservation calls' argument checks (no
 * controller: they refuse before any RPC)
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "gb_slurm.h"
#include "gb_slurm_cb.h"

/* the node lists are char *const * (as gb_slurm_nodes_update takes them) */
#define S(lit) ((char *)(lit))
#define M (40 * 60)			/* the margin */
#define END 1800000000.0		/* 2027-01-15T08:00:00Z */
#define RESV_A "gpuburst_cb_cr-0aaaabbbbccccdddd"
#define ID_A "cr-0aaaabbbbccccdddd"
#define ID_B "cr-0bbbb000011112222"
#define REASON_A "gpuburst: capacity block cr-0aaaabbbbccccdddd ends 2027-01-15T08:00:00Z"

/* Slurm's nodes g-1..g-6 (sorted by name), all up and idle. */
static struct gb_slurm_node node_v[6];
static struct gb_slurm_node_list nodes = { node_v, 6 };

static int setup(void **state)
{
	static char names[6][8];

	(void)state;
	memset(node_v, 0, sizeof(node_v));
	for (int i = 0; i < 6; i++) {
		snprintf(names[i], sizeof(names[i]), "g-%d", i + 1);
		node_v[i].name = names[i];
		node_v[i].cloud = node_v[i].idle = true;
	}
	return 0;
}

static struct gb_slurm_node *node(const char *name)
{
	for (size_t i = 0; i < nodes.n; i++) {
		if (strcmp(node_v[i].name, name) == 0)
			return &node_v[i];
	}
	fail_msg("no node %s", name);
	return NULL;
}

static struct gb_slurm_cb_plan *plan(const struct gb_slurm_cb_block *b, size_t nb,
				     const struct gb_slurm_resv *r, size_t nr, double now)
{
	struct gb_slurm_cb_in in = { b, nb, r, nr, &nodes, M, now };
	struct gb_slurm_cb_plan *p = NULL;
	gb_error_t e;

	if (gb_slurm_cb_plan(&in, &p, &e))
		fail_msg("gb_slurm_cb_plan: %s", e.text);
	return p;
}

/* "ensure g-1,g-2 [start,end] ...", "power_down_asap g-1 ...", "delete NAME" */
static char *show(const struct gb_slurm_cb_action *a)
{
	static char buf[1024];
	size_t k;

	k = (size_t)snprintf(buf, sizeof(buf), "%s", gb_slurm_cb_act_name(a->act));
	switch (a->act) {
	case GB_SLURM_CB_ENSURE:
		snprintf(buf + k, sizeof(buf) - k, " %s on %s [%+.0f,%+.0f]", a->resv.name,
			 a->resv.nodes, a->resv.start - END, a->resv.end - END);
		assert_string_equal(a->resv.comment, a->reason);
		break;
	case GB_SLURM_CB_POWER_DOWN:
		for (size_t i = 0; i < a->nodes.n; i++)
			k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s", i ? "," : " ",
					      a->nodes.v[i]);
		break;
	case GB_SLURM_CB_DELETE:
		snprintf(buf + k, sizeof(buf) - k, " %s", a->resv.name);
		break;
	}
	return buf;
}

/* The plan is exactly [n] actions, as show() prints them. */
static void expect(struct gb_slurm_cb_plan *p, size_t n, ...)
{
	va_list ap;

	for (size_t i = 0; i < p->n; i++)
		print_message("  action %zu: %s\n", i, show(&p->v[i]));
	assert_int_equal(p->n, n);
	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(show(&p->v[i]), va_arg(ap, const char *));
	va_end(ap);
	gb_slurm_cb_plan_free(p);
}

static void test_reason(void **state)
{
	char buf[GB_REASON_MAX], small[40], id[300];

	(void)state;
	assert_string_equal(gb_reason_capacity_block(buf, sizeof(buf), ID_A, END), REASON_A);
	/* the id gives way, the end stays */
	memset(id, 'a', sizeof(id) - 1);
	id[sizeof(id) - 1] = '\0';
	gb_reason_capacity_block(buf, sizeof(buf), id, END);
	assert_true(strlen(buf) == GB_REASON_MAX - 1);
	assert_non_null(strstr(buf, "a ends 2027-01-15T08:00:00Z"));
	/* not even the end fits: cut */
	gb_reason_capacity_block(small, sizeof(small), ID_A, END);
	assert_string_equal(small, "gpuburst: capacity block cr-0aaaabbbbcc");
}

/* A block with live nodes and no reservation: ensure it, nodes sorted, once each. */
static void test_new_block(void **state)
{
	char *n[] = { S("g-3"), S("g-1"), S("g-3") };
	struct gb_slurm_cb_block b = { ID_A, END, n, 3 };
	struct gb_slurm_cb_plan *p;

	(void)state;
	p = plan(&b, 1, NULL, 0, END - 3 * 3600);
	assert_int_equal(p->n, 1);
	assert_string_equal(p->v[0].block, ID_A);
	assert_string_equal(p->v[0].resv.comment, REASON_A);
	assert_int_equal(p->v[0].nodes.n, 2);
	assert_string_equal(p->v[0].nodes.v[1], "g-3");
	expect(p, 1, "ensure " RESV_A " on g-1,g-3 [-2400,+0]");
}

/* Nodes join and leave: ensure with the new set; the same set in another form: nothing. */
static void test_nodes_change(void **state)
{
	char *joined[] = { S("g-1"), S("g-2"), S("g-3") }, *left[] = { S("g-2") };
	char *same[] = { S("g-2"), S("g-1") };
	struct gb_slurm_resv r = { RESV_A, "g-[1-2]", END - M, END, REASON_A };
	struct gb_slurm_cb_block b = { ID_A, END, joined, 3 };
	double now = END - 3 * 3600;

	(void)state;
	expect(plan(&b, 1, &r, 1, now), 1, "ensure " RESV_A " on g-1,g-2,g-3 [-2400,+0]");
	b.nodes = left;
	b.n_nodes = 1;
	expect(plan(&b, 1, &r, 1, now), 1, "ensure " RESV_A " on g-2 [-2400,+0]");
	b.nodes = same;
	b.n_nodes = 2;
	expect(plan(&b, 1, &r, 1, now), 0);
	/* Slurm's own spelling of the same set */
	r.nodes = "g-1,g-2";
	expect(plan(&b, 1, &r, 1, now), 0);
}

/* Times: a different end, or a start not reached yet, is ensured; a reached start stays. */
static void test_times(void **state)
{
	char *n[] = { S("g-1") };
	struct gb_slurm_cb_block b = { ID_A, END, n, 1 };
	struct gb_slurm_resv r = { RESV_A, "g-1", END - M, END + 60, NULL };

	(void)state;
	expect(plan(&b, 1, &r, 1, END - 3 * 3600), 1, "ensure " RESV_A " on g-1 [-2400,+0]");
	r.end = END;
	r.start = END - M - 600;		/* the margin was 50 min */
	expect(plan(&b, 1, &r, 1, END - 3 * 3600), 1, "ensure " RESV_A " on g-1 [-2400,+0]");
	/* ...but it has started: Slurm would not move it, nor need to */
	expect(plan(&b, 1, &r, 1, END - M - 60), 0);
	/* created late: it started when it was made, after end - margin */
	r.start = END - M + 300;
	expect(plan(&b, 1, &r, 1, END - M + 400), 1, "power_down_asap g-1");
	/* a comment is not compared (22.05 keeps none) */
	r.start = END - M;
	r.comment = "something else";
	expect(plan(&b, 1, &r, 1, END - 3 * 3600), 0);
}

/* At end - margin: power down the block's nodes, those not going down already. */
static void test_drain(void **state)
{
	char *n[] = { S("g-1"), S("g-2"), S("g-3"), S("g-4"), S("g-5") };
	struct gb_slurm_cb_block b = { ID_A, END, n, 5 };
	struct gb_slurm_resv r = { RESV_A, "g-[1-5]", END - M, END, REASON_A };
	struct gb_slurm_cb_plan *p;

	(void)state;
	expect(plan(&b, 1, &r, 1, END - M - 1), 0);
	node("g-2")->allocated = true;
	node("g-2")->idle = false;
	node("g-3")->powering_up = node("g-3")->not_responding = true;
	p = plan(&b, 1, &r, 1, END - M);
	assert_int_equal(p->n, 1);
	assert_string_equal(p->v[0].reason, REASON_A);
	assert_string_equal(p->v[0].block, ID_A);
	expect(p, 1, "power_down_asap g-1,g-2,g-3,g-4,g-5");

	/* asked already (POWER_DOWN + DRAIN), powering down, powered down */
	node("g-1")->power_down_requested = node("g-1")->drain = true;
	node("g-2")->powering_down = true;
	node("g-3")->powered_down = true;
	/* drained by someone else, or asked to power down without a drain: not enough */
	node("g-4")->drain = true;
	node("g-5")->power_down_requested = true;
	expect(plan(&b, 1, &r, 1, END - 60), 1, "power_down_asap g-4,g-5");
	node("g-4")->power_down_requested = true;
	node("g-5")->drain = true;
	expect(plan(&b, 1, &r, 1, END - 60), 0);

	/* without Slurm's node states every node, every time */
	{
		struct gb_slurm_cb_in in = { &b, 1, &r, 1, NULL, M, END - 60 };

		assert_int_equal(gb_slurm_cb_plan(&in, &p, NULL), GB_E_OK);
		expect(p, 1, "power_down_asap g-1,g-2,g-3,g-4,g-5");
	}
}

/* A block with no live node (or none Slurm knows) loses its reservation. */
static void test_no_live_nodes(void **state)
{
	char *unknown[] = { S("x-1"), S("") };
	struct gb_slurm_cb_block b = { ID_A, END, NULL, 0 };
	struct gb_slurm_resv r = { RESV_A, "g-[1-2]", END - M, END, REASON_A };

	(void)state;
	expect(plan(&b, 1, &r, 1, END - 3 * 3600), 1, "delete " RESV_A);
	expect(plan(&b, 1, &r, 1, END - 60), 1, "delete " RESV_A);
	expect(plan(&b, 1, NULL, 0, END - 60), 0);
	b.nodes = unknown;
	b.n_nodes = 2;
	expect(plan(&b, 1, &r, 1, END - 60), 1, "delete " RESV_A);
}

/* gpuburst's reservations of blocks it does not know go; others' stay. */
static void test_unknown_block(void **state)
{
	char *n[] = { S("g-1") };
	struct gb_slurm_cb_block b = { ID_B, END, n, 1 };
	struct gb_slurm_resv r[] = {
		{ "maint_friday", "g-[1-6]", END - 3600, END, NULL },
		{ "gpuburst_cb_cr-0ffff", "g-4", END - M, END, NULL },
		{ RESV_A, "g-[2-3]", END - M, END, NULL },
		{ "gpuburst_cb_", "g-5", END - M, END, NULL },
	};
	struct gb_slurm_cb_plan *p;

	(void)state;
	p = plan(&b, 1, r, 4, END - 3 * 3600);
	assert_string_equal(p->v[1].block, "");
	assert_string_equal(p->v[2].block, ID_A);
	expect(p, 4, "ensure gpuburst_cb_" ID_B " on g-1 [-2400,+0]",
	       "delete gpuburst_cb_", "delete " RESV_A, "delete gpuburst_cb_cr-0ffff");
	expect(plan(NULL, 0, r, 1, END), 0);
}

/* Nothing differs: nothing to do. */
static void test_nothing(void **state)
{
	char *na[] = { S("g-1"), S("g-2") }, *nb[] = { S("g-4") };
	struct gb_slurm_cb_block b[] = { { ID_B, END + 600, nb, 1 }, { ID_A, END, na, 2 } };
	struct gb_slurm_resv r[] = {
		{ "gpuburst_cb_" ID_B, "g-4", END + 600 - M, END + 600, NULL },
		{ RESV_A, "g-[1-2]", END - M, END, REASON_A },
	};

	(void)state;
	expect(plan(NULL, 0, NULL, 0, END), 0);
	expect(plan(b, 2, r, 2, END - 3 * 3600), 0);
	/* both reach their margin: block order, then each block's drain */
	node("g-1")->power_down_requested = node("g-1")->drain = true;
	expect(plan(b, 2, r, 2, END + 600 - M), 2, "power_down_asap g-2",
	       "power_down_asap g-4");
}

/* An ended block: no window any more (Slurm ends it anyway), its nodes still go down. */
static void test_ended(void **state)
{
	char *n[] = { S("g-1") };
	struct gb_slurm_cb_block b = { ID_A, END, n, 1 };
	struct gb_slurm_resv r = { RESV_A, "g-1", END - M, END, REASON_A };

	(void)state;
	expect(plan(&b, 1, &r, 1, END), 2, "power_down_asap g-1", "delete " RESV_A);
	expect(plan(&b, 1, NULL, 0, END + 10), 1, "power_down_asap g-1");
}

static void test_invalid(void **state)
{
	char *n[] = { S("g-1") };
	struct gb_slurm_cb_block b[] = { { ID_A, END, n, 1 }, { ID_A, END, n, 1 } };
	struct gb_slurm_cb_in in = { b, 2, NULL, 0, &nodes, M, END - 3600 };
	struct gb_slurm_cb_plan *p = (void *)1;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_slurm_cb_plan(&in, &p, &e), GB_E_INVALID);
	assert_null(p);
	assert_string_equal(e.text, "capacity block " ID_A " given twice");
	in.n_blocks = 1;
	b[0].id = "cr-0A,x";
	assert_int_equal(gb_slurm_cb_plan(&in, &p, &e), GB_E_INVALID);
	assert_string_equal(e.text, "bad capacity block id \"cr-0A,x\" (want 1-63 of [a-z0-9-])");
	b[0].id = "";
	assert_int_equal(gb_slurm_cb_plan(&in, &p, &e), GB_E_INVALID);
	b[0].id = ID_A;
	in.margin = -1;
	assert_int_equal(gb_slurm_cb_plan(&in, &p, &e), GB_E_INVALID);
}

/* The reservation calls refuse bad arguments before any RPC (no gb_slurm_init here). */
static void test_resv_args(void **state)
{
	double now = (double)time(NULL);
	struct gb_slurm_resv r = { RESV_A, "g-1", now + 60, now + 3600, NULL };
	enum gb_slurm_resv_did did = GB_SLURM_RESV_CREATED;
	char *n[] = { S("g-1") };
	gb_error_t e;

	(void)state;
	r.name = "a,b";
	assert_int_equal(gb_slurm_resv_ensure(&r, &did, &e), GB_E_INVALID);
	assert_int_equal(did, GB_SLURM_RESV_UNCHANGED);
	r.name = RESV_A;
	r.nodes = "";
	assert_int_equal(gb_slurm_resv_ensure(&r, NULL, &e), GB_E_INVALID);
	r.nodes = "g-1";
	r.end = r.start;
	assert_int_equal(gb_slurm_resv_ensure(&r, NULL, &e), GB_E_INVALID);
	r.start = now - 7200;
	r.end = now - 3600;
	assert_int_equal(gb_slurm_resv_ensure(&r, NULL, &e), GB_E_INVALID);
	r.end = now + 3600;
	assert_int_equal(gb_slurm_resv_ensure(&r, NULL, &e), GB_E_INTERNAL);
	assert_string_equal(e.text, "gb_slurm_init() was not called");
	assert_int_equal(gb_slurm_resv_delete("", &e), GB_E_INVALID);
	assert_int_equal(gb_slurm_nodes_update(GB_SLURM_POWER_DOWN_ASAP, n, 1, NULL, NULL, &e),
			 GB_E_INVALID);
	assert_string_equal(e.text, "setting nodes power_down_asap needs a reason");
	assert_string_equal(gb_slurm_action_name(GB_SLURM_POWER_DOWN_ASAP), "power_down_asap");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reason),
		cmocka_unit_test_setup(test_new_block, setup),
		cmocka_unit_test_setup(test_nodes_change, setup),
		cmocka_unit_test_setup(test_times, setup),
		cmocka_unit_test_setup(test_drain, setup),
		cmocka_unit_test_setup(test_no_live_nodes, setup),
		cmocka_unit_test_setup(test_unknown_block, setup),
		cmocka_unit_test_setup(test_nothing, setup),
		cmocka_unit_test_setup(test_ended, setup),
		cmocka_unit_test_setup(test_invalid, setup),
		cmocka_unit_test(test_resv_args),
	};

	return cmocka_run_group_tests_name("slurm_cb", tests, NULL, NULL);
}
