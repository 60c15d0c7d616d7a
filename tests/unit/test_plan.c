/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_plan.c - libplan and the pure parts of liborch: Haversine, golden
 * candidate orders, the plan validator (one case per rule, exact reasons),
 * plan JSON round trip, capacity memory estimates and summary, the
 * heuristic planner's order, client tokens and user data rendering.
 *
 * The configuration is tests/data/orch/gpuburst.yaml, the ancestor's
 * geography (research s1.1, s1.9).
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "gb_conf.h"
#include "gb_ec2.h"
#include "gb_orch.h"
#include "gb_plan.h"
#include "gb_seal.h"
#include "gb_state.h"
#include "gb_str.h"
#include "gb_util.h"

static struct gb_conf *conf;

static const char *top_srcdir(void)
{
	const char *s = getenv("GB_TOP_SRCDIR");

	return s && *s ? s : GB_TOP_SRCDIR;
}

static int setup(void **state)
{
	char path[1024], *text = NULL;
	struct gb_buf b = GB_BUF_INIT;
	size_t len, off;
	gb_error_t err;

	(void)state;
	snprintf(path, sizeof(path), "%s/tests/data/orch/gpuburst.yaml", top_srcdir());
	if (gb_file_read(path, 1 << 20, &text, &len, &err))
		return -1;
	off = strcspn(text, "@");
	gb_buf_append(&b, text, off);
	gb_buf_puts(&b, "http://127.0.0.1:9");
	gb_buf_puts(&b, text + off + strlen("@ENDPOINT@"));
	free(text);
	if (gb_conf_load_string("gpuburst.yaml", b.data, b.len, &conf, NULL, &err)) {
		fprintf(stderr, "%s\n", err.text);
		gb_buf_free(&b);
		return -1;
	}
	gb_buf_free(&b);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gb_conf_destroy(conf);
	return 0;
}

/*****************************************************************************
 *  Haversine and candidates
 *****************************************************************************/

static void test_haversine(void **state)
{
	double slat, slon, lat, lon;

	(void)state;
	assert_true(gb_region_coords("ap-southeast-1", &slat, &slon));
	assert_true(gb_region_coords("ap-south-1", &lat, &lon));
	assert_true(fabs(gb_region_distance_km(slat, slon, lat, lon) - 3903.9) < 0.1);
	assert_true(gb_region_coords("ap-northeast-2", &lat, &lon));
	assert_true(fabs(gb_region_distance_km(slat, slon, lat, lon) - 4672.6) < 0.1);
	assert_true(gb_region_coords("ap-northeast-1", &lat, &lon));
	assert_true(fabs(gb_region_distance_km(slat, slon, lat, lon) - 5314.5) < 0.1);
	assert_true(gb_region_coords("ap-northeast-3", &slat, &slon));
	assert_true(fabs(gb_region_distance_km(slat, slon, lat, lon) - 396.3) < 0.1);
	assert_true(gb_region_distance_km(1, 2, 1, 2) == 0);
}

static void assert_order(const struct gb_candidates *c, const char *const *names, size_t n)
{
	assert_int_equal(c->n, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(c->v[i].region->name, names[i]);
}

static void test_candidates_singapore(void **state)
{
	static const char *const want[] = { "ap-south-1", "ap-northeast-2", "ap-northeast-1" };
	struct gb_candidates c;
	gb_error_t err;

	(void)state;
	assert_int_equal(gb_plan_candidates(conf, "ap-southeast-1", GB_MODE_MULTI_REGION, &c, &err),
			 GB_E_OK);
	assert_order(&c, want, 3);
	assert_false(c.v[0].home);
	assert_true(fabs(c.v[0].distance_km - 3903.9) < 0.1);
	assert_true(fabs(c.v[2].distance_km - 5314.5) < 0.1);
	assert_int_equal(c.n_allowed, 3);
	assert_string_equal(c.allowed[1], "ap-northeast-2");
	assert_null(c.allowed[3]);
	gb_plan_candidates_clear(&c);

	/* single_region: the ancestor's regions[:1]; the allowed set stays */
	assert_int_equal(gb_plan_candidates(conf, "ap-southeast-1", GB_MODE_SINGLE_REGION, &c, &err),
			 GB_E_OK);
	assert_order(&c, want, 1);
	assert_int_equal(c.n_allowed, 3);
	gb_plan_candidates_clear(&c);
}

static void test_candidates_japan(void **state)
{
	static const char *const tokyo[] = { "ap-northeast-1", "ap-northeast-3" };
	static const char *const osaka[] = { "ap-northeast-3", "ap-northeast-1" };
	struct gb_candidates c;
	gb_error_t err;

	(void)state;
	assert_int_equal(gb_plan_candidates(conf, "ap-northeast-1", GB_MODE_MULTI_REGION, &c, &err),
			 GB_E_OK);
	assert_order(&c, tokyo, 2);
	assert_true(c.v[0].home);
	assert_true(c.v[0].distance_km == 0);
	assert_true(fabs(c.v[1].distance_km - 396.3) < 0.1);
	gb_plan_candidates_clear(&c);
	assert_int_equal(gb_plan_candidates(conf, "ap-northeast-3", GB_MODE_MULTI_REGION, &c, &err),
			 GB_E_OK);
	assert_order(&c, osaka, 2);
	gb_plan_candidates_clear(&c);
	assert_int_equal(gb_plan_candidates(conf, "ap-northeast-1", GB_MODE_SINGLE_REGION, &c, &err),
			 GB_E_OK);
	assert_order(&c, tokyo, 1);
	gb_plan_candidates_clear(&c);
}

static void test_candidates_refused(void **state)
{
	struct gb_candidates c;
	gb_error_t err;

	(void)state;
	assert_int_equal(gb_plan_candidates(conf, "us-west-2", GB_MODE_MULTI_REGION, &c, &err),
			 GB_E_PLAN);
	assert_string_equal(err.text,
			    "home region us-west-2 is in no fallback group; allowed consumer "
			    "regions: ap-southeast-1, ap-northeast-1, ap-northeast-3");
	assert_int_equal(c.n, 0);
	gb_plan_candidates_clear(&c);
	assert_int_equal(gb_plan_candidates(conf, NULL, GB_MODE_MULTI_REGION, &c, &err),
			 GB_E_INVALID);
	gb_plan_candidates_clear(&c);
}

/*
 * policy.prefer: the orch configuration with [prefer] and a price file of
 * [lines] in the fresh directory [dir] (its state_dir).
 */
static struct gb_conf *prefer_conf(const char *dir, const char *prefer,
				   const char *lines)
{
	char path[1024], *text = NULL;
	const char *text_rest;
	struct gb_buf b = GB_BUF_INIT;
	struct gb_conf *c = NULL;
	size_t len, off;
	gb_error_t err;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/prices", dir);
	assert_non_null(fp = fopen(path, "w"));
	fprintf(fp, "gpuburst-prices 1\nrefreshed 2026-12-01T00:00:00Z\nsource test\n"
		"# region type capacity usd_per_hour\n%s", lines);
	assert_int_equal(fclose(fp), 0);
	snprintf(path, sizeof(path), "%s/tests/data/orch/gpuburst.yaml", top_srcdir());
	assert_int_equal(gb_file_read(path, 1 << 20, &text, &len, &err), GB_E_OK);
	/* the endpoint as setup() fills it; state_dir and prefer before policy's keys */
	off = strcspn(text, "@");
	gb_buf_append(&b, text, off);
	gb_buf_puts(&b, "http://127.0.0.1:9");
	text_rest = text + off + strlen("@ENDPOINT@");
	off = strstr(text_rest, "\npolicy:\n") - text_rest;
	gb_buf_append(&b, text_rest, off);
	gb_buf_printf(&b, "\nstate_dir: %s\npolicy:\n  prefer: \"%s\"\n", dir, prefer);
	gb_buf_puts(&b, text_rest + off + strlen("\npolicy:\n"));
	free(text);
	if (gb_conf_load_string("gpuburst.yaml", b.data, b.len, &c, NULL, &err))
		fail_msg("%s", err.text);
	gb_buf_free(&b);
	return c;
}

/* The candidates of [home] under [prefer] and [lines], ordered for [types] bought as [kind]. */
static void prefer_order(const char *dir, const char *home, const char *prefer,
			 const char *lines, const char *const *types, size_t n_types,
			 enum gb_capacity_kind kind, struct gb_conf **c,
			 struct gb_candidates *cand)
{
	gb_error_t err;

	*c = prefer_conf(dir, prefer, lines);
	assert_int_equal(gb_plan_candidates(*c, home, GB_MODE_MULTI_REGION, cand, &err),
			 GB_E_OK);
	assert_int_equal(gb_plan_candidates_prefer(*c, cand, types, n_types, kind, &err),
			 GB_E_OK);
}

static void test_prefer_order(void **state)
{
	static const char *const g5[] = { "g5.xlarge" }, *const two[] = { "g5.xlarge", "g6.xlarge" };
	static const char *const nearest[] = { "ap-south-1", "ap-northeast-2", "ap-northeast-1" };
	static const char *const cheap[] = { "ap-northeast-2", "ap-south-1", "ap-northeast-1" };
	static const char *const tie[] = { "ap-northeast-1", "ap-south-1", "ap-northeast-2" };
	static const char *const within[] = { "ap-northeast-2", "ap-northeast-1", "ap-south-1" };
	static const char *const mixed[] = { "ap-northeast-1", "ap-south-1", "ap-northeast-2" };
	static const char *const rev[] = { "ap-northeast-1", "ap-northeast-2", "ap-south-1" };
	static const char *const osaka[] = { "ap-northeast-3", "ap-northeast-1" };
	static const char *const prices =
		"ap-south-1 g5.xlarge on-demand 1.46\nap-northeast-2 g5.xlarge on-demand 1.21\n";
	struct gb_candidates c;
	struct gb_conf *pc;
	char dir[] = "/tmp/gb-prefer-XXXXXX", path[1024];

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* nearest: the order of gb_plan_candidates, prices noted, no rationale */
	prefer_order(dir, "ap-southeast-1", "nearest", prices, g5, 1, GB_CAPACITY_ON_DEMAND, &pc, &c);
	assert_order(&c, nearest, 3);
	assert_null(c.prefer);
	assert_true(c.v[0].usd_per_hour == 1.46 && c.v[2].usd_per_hour < 0);
	gb_plan_candidates_clear(&c);
	gb_conf_destroy(pc);
	/* cheapest: by price, Tokyo (no price) last */
	prefer_order(dir, "ap-southeast-1", "cheapest", prices, g5, 1, GB_CAPACITY_ON_DEMAND, &pc, &c);
	assert_order(&c, cheap, 3);
	assert_string_equal(c.prefer, "prefer cheapest: ap-northeast-2 g5.xlarge 1.21 USD/h "
			    "before ap-south-1 1.46 USD/h, ap-northeast-1 no price");
	gb_plan_candidates_clear(&c);
	gb_conf_destroy(pc);
	/* ties go by distance */
	prefer_order(dir, "ap-southeast-1", "cheapest",
		     "ap-south-1 g5.xlarge on-demand 1.21\nap-northeast-2 g5.xlarge on-demand 1.21\n"
		     "ap-northeast-1 g5.xlarge on-demand 1\n", g5, 1, GB_CAPACITY_ON_DEMAND, &pc, &c);
	assert_order(&c, tie, 3);
	assert_string_equal(c.prefer, "prefer cheapest: ap-northeast-1 g5.xlarge 1.00 USD/h "
			    "before ap-south-1 1.21 USD/h, ap-northeast-2 1.21 USD/h");
	gb_plan_candidates_clear(&c);
	gb_conf_destroy(pc);
	/* no price at all: nearest first, and said so */
	prefer_order(dir, "ap-southeast-1", "cheapest", "", g5, 1, GB_CAPACITY_ON_DEMAND, &pc, &c);
	assert_order(&c, nearest, 3);
	assert_string_equal(c.prefer, "prefer cheapest: no price known for g5.xlarge (on-demand) in "
			    "ap-south-1, ap-northeast-2, ap-northeast-1; nearest first");
	gb_plan_candidates_clear(&c);
	gb_conf_destroy(pc);
	prefer_order(dir, "ap-southeast-1", "nearest_within(10%)", "", g5, 1, GB_CAPACITY_ON_DEMAND,
		     &pc, &c);
	assert_order(&c, nearest, 3);
	assert_non_null(strstr(c.prefer, "prefer nearest_within(10%): no price known"));
	gb_plan_candidates_clear(&c);
	gb_conf_destroy(pc);
	/* nearest_within: Seoul 1.35 and Tokyo 1.30 within 10% of 1.30, Mumbai over */
	prefer_order(dir, "ap-southeast-1", "nearest_within(10)",
		     "ap-south-1 g5.xlarge on-demand 1.46\nap-northeast-2 g5.xlarge on-demand 1.35\n"
		     "ap-northeast-1 g5.xlarge on-demand 1.3\n", g5, 1, GB_CAPACITY_ON_DEMAND, &pc, &c);
	assert_order(&c, within, 3);
	assert_string_equal(c.prefer, "prefer nearest_within(10%): ap-northeast-2 g5.xlarge 1.35 USD/h, "
			    "ap-northeast-1 1.30 USD/h (within 10% of 1.30 USD/h) before ap-south-1 1.46 USD/h");
	gb_plan_candidates_clear(&c);
	gb_conf_destroy(pc);
	/* the others, priced over the bound or not at all, by distance */
	prefer_order(dir, "ap-southeast-1", "nearest_within(10)",
		     "ap-northeast-2 g5.xlarge on-demand 2\nap-northeast-1 g5.xlarge on-demand 1\n",
		     g5, 1, GB_CAPACITY_ON_DEMAND, &pc, &c);
	assert_order(&c, mixed, 3);
	assert_string_equal(c.prefer, "prefer nearest_within(10%): ap-northeast-1 g5.xlarge 1.00 USD/h "
			    "(within 10% of 1.00 USD/h) before ap-south-1 no price, ap-northeast-2 2.00 USD/h");
	gb_plan_candidates_clear(&c);
	gb_conf_destroy(pc);
	/* a price written as the bound is within it; 0% keeps the equal ones */
	prefer_order(dir, "ap-southeast-1", "nearest_within(0)",
		     "ap-south-1 g5.xlarge on-demand 1.5\nap-northeast-2 g5.xlarge on-demand 1.2\n"
		     "ap-northeast-1 g5.xlarge on-demand 1.2\n", g5, 1, GB_CAPACITY_ON_DEMAND, &pc, &c);
	assert_order(&c, within, 3);
	gb_plan_candidates_clear(&c);
	gb_conf_destroy(pc);
	/* the first of the request's types priced in the region, named when another */
	prefer_order(dir, "ap-southeast-1", "cheapest",
		     "ap-south-1 g6.xlarge on-demand 0.9\nap-south-1 g5.xlarge on-demand 1.6\n"
		     "ap-northeast-2 g6.xlarge on-demand 1.1\nap-northeast-1 g6.xlarge on-demand 1.0\n",
		     two, 2, GB_CAPACITY_ON_DEMAND, &pc, &c);
	assert_order(&c, rev, 3);
	assert_string_equal(c.prefer, "prefer cheapest: ap-northeast-1 g6.xlarge 1.00 USD/h "
			    "before ap-northeast-2 1.10 USD/h, ap-south-1 g5.xlarge 1.60 USD/h");
	gb_plan_candidates_clear(&c);
	gb_conf_destroy(pc);
	/* the ladder's first kind: a spot line where there is one, else on-demand's */
	prefer_order(dir, "ap-southeast-1", "cheapest",
		     "ap-south-1 g5.xlarge on-demand 1.46\nap-northeast-2 g5.xlarge on-demand 1.21\n"
		     "ap-northeast-1 g5.xlarge on-demand 1.5\nap-northeast-1 g5.xlarge spot 0.526\n",
		     g5, 1, GB_CAPACITY_SPOT, &pc, &c);
	assert_order(&c, rev, 3);
	assert_true(c.v[0].usd_per_hour == 0.526);
	assert_non_null(strstr(c.prefer, "ap-northeast-1 g5.xlarge 0.526 USD/h before"));
	gb_plan_candidates_clear(&c);
	gb_conf_destroy(pc);
	/* price comes before home: Osaka before Tokyo, Tokyo still home */
	prefer_order(dir, "ap-northeast-1", "cheapest",
		     "ap-northeast-1 g5.xlarge on-demand 1.46\nap-northeast-3 g5.xlarge on-demand 1.4\n",
		     g5, 1, GB_CAPACITY_ON_DEMAND, &pc, &c);
	assert_order(&c, osaka, 2);
	assert_true(c.v[1].home && !c.v[0].home);
	gb_plan_candidates_clear(&c);
	gb_conf_destroy(pc);
	/* single_region: one candidate, nothing to order or say */
	pc = prefer_conf(dir, "cheapest", "ap-northeast-3 g5.xlarge on-demand 1\n");
	assert_int_equal(gb_plan_candidates(pc, "ap-northeast-1", GB_MODE_SINGLE_REGION, &c, NULL),
			 GB_E_OK);
	assert_int_equal(gb_plan_candidates_prefer(pc, &c, g5, 1, GB_CAPACITY_ON_DEMAND, NULL),
			 GB_E_OK);
	assert_int_equal(c.n, 1);
	assert_string_equal(c.v[0].region->name, "ap-northeast-1");
	assert_null(c.prefer);
	gb_plan_candidates_clear(&c);
	gb_conf_destroy(pc);
	snprintf(path, sizeof(path), "%s/prices", dir);
	unlink(path);
	rmdir(dir);
}

/*
 * The planners plan in the preferred order: the pools carry their price,
 * the heuristic's and the ancestor order's rationale say what prefer did,
 * and nearest leaves both as they were.
 */
static void test_prefer_plan(void **state)
{
	static const char *const g5[] = { "g5.xlarge" };
	struct gb_plan_facts f;
	struct gb_candidates c;
	struct gb_plan *p = NULL, *q = NULL;
	struct gb_conf *pc;
	char dir[] = "/tmp/gb-prefer-XXXXXX", path[1024];
	gb_error_t err;

	(void)state;
	assert_non_null(mkdtemp(dir));
	prefer_order(dir, "ap-southeast-1", "cheapest",
		     "ap-south-1 g5.xlarge on-demand 1.46\nap-northeast-2 g5.xlarge on-demand 1.21\n",
		     g5, 1, GB_CAPACITY_ON_DEMAND, &pc, &c);
	assert_int_equal(gb_plan_facts_build(pc, &c, "g5.xlarge", 8, 1, GB_LOCALITY_NONE, NULL,
					     1.8e9, &f, &err), GB_E_OK);
	assert_string_equal(f.pools[0].region, "ap-northeast-2");
	assert_true(f.pools[0].usd_per_hour == 1.21);
	assert_true(f.pools[f.n_pools - 1].usd_per_hour < 0);	/* Tokyo */
	assert_int_equal(gb_plan_heuristic(&f, &p, &err), GB_E_OK);
	assert_string_equal(p->steps[0].region, "ap-northeast-2");
	assert_string_equal(p->steps[p->n_steps - 1].region, "ap-northeast-1");
	assert_non_null(strstr(p->rationale, "then distance; prefer cheapest: ap-northeast-2 "
			       "g5.xlarge 1.21 USD/h before ap-south-1 1.46 USD/h, "
			       "ap-northeast-1 no price"));
	assert_int_equal(gb_plan_ordered(&f, &q, &err), GB_E_OK);
	assert_string_equal(q->steps[0].region, "ap-northeast-2");
	assert_non_null(strstr(q->rationale, "config order; prefer cheapest: ap-northeast-2"));
	gb_plan_free(p);
	gb_plan_free(q);
	gb_plan_facts_clear(&f);
	gb_plan_candidates_clear(&c);
	gb_conf_destroy(pc);
	/* nearest: today's plan, today's rationale */
	prefer_order(dir, "ap-southeast-1", "nearest",
		     "ap-south-1 g5.xlarge on-demand 1.46\nap-northeast-2 g5.xlarge on-demand 1.21\n",
		     g5, 1, GB_CAPACITY_ON_DEMAND, &pc, &c);
	assert_int_equal(gb_plan_facts_build(pc, &c, "g5.xlarge", 8, 1, GB_LOCALITY_NONE, NULL,
					     1.8e9, &f, &err), GB_E_OK);
	assert_int_equal(gb_plan_heuristic(&f, &p, &err), GB_E_OK);
	assert_string_equal(p->steps[0].region, "ap-south-1");
	assert_null(strstr(p->rationale, "prefer"));
	assert_int_equal(gb_plan_rationale_prefer(p, &c, &err), GB_E_OK);
	assert_null(strstr(p->rationale, "prefer"));
	gb_plan_free(p);
	gb_plan_facts_clear(&f);
	gb_plan_candidates_clear(&c);
	gb_conf_destroy(pc);
	snprintf(path, sizeof(path), "%s/prices", dir);
	unlink(path);
	rmdir(dir);
}

/*****************************************************************************
 *  The validator: one case per rule
 *****************************************************************************/

static const char *const allowed[] = { "ap-south-1", "ap-northeast-2", "ap-northeast-1" };

static struct gb_plan *good_plan(void)
{
	struct gb_plan *p = NULL;

	assert_int_equal(gb_plan_new("g5.xlarge", "test", 8, &p, NULL), GB_E_OK);
	assert_int_equal(gb_plan_add_step(p, "ap-south-1", "ap-south-1a", "subnet-aps1a-1", NULL, 4, 3,
					  "first", NULL), GB_E_OK);
	assert_int_equal(gb_plan_add_step(p, "ap-northeast-2", "ap-northeast-2b", "subnet-apne2b-1", NULL,
					  2, 0, "second", NULL), GB_E_OK);
	assert_int_equal(gb_plan_add_step(p, "ap-northeast-1", "ap-northeast-1c", "subnet-apne1c-1", NULL,
					  1, 0, "third", NULL), GB_E_OK);
	return p;
}

static void expect_rejection(struct gb_plan *p, int target, const char *reason)
{
	struct gb_plan_scope s = { conf, "g5.xlarge", target, allowed, 3 };
	gb_error_t err;

	assert_int_equal(gb_plan_validate(&s, p, NULL, &err), GB_E_PLAN);
	assert_int_equal(err.code, GB_E_PLAN);
	assert_string_equal(err.text, reason);
	gb_plan_free(p);
}

static void test_validate_ok(void **state)
{
	struct gb_plan_scope s = { conf, "g5.xlarge", 8, allowed, 3 };
	struct gb_plan *p = good_plan();
	gb_error_t err;

	(void)state;
	assert_int_equal(gb_plan_validate(&s, p, NULL, &err), GB_E_OK);
	gb_plan_free(p);
}

static void test_validate_type(void **state)
{
	struct gb_plan *p = good_plan();

	(void)state;
	free(p->instance_type);
	p->instance_type = strdup("m7i.xlarge");
	expect_rejection(p, 8, "instance type m7i.xlarge is not allowed: only GPU families "
			 "g4dn, g5, g5g, g6, g6e");
	p = good_plan();
	free(p->instance_type);
	p->instance_type = strdup("g5.7xlarge");
	expect_rejection(p, 8, "instance type g5.7xlarge is not in the catalog of known GPU types");
	p = good_plan();
	free(p->instance_type);
	p->instance_type = strdup("g6e.xlarge");
	expect_rejection(p, 8, "instance type g6e.xlarge differs from the request's g5.xlarge");
}

static void test_validate_total(void **state)
{
	struct gb_plan *p = good_plan();

	(void)state;
	p->total = 25;
	expect_rejection(p, 20, "total 25 exceeds the request's 20 nodes");
	p = good_plan();
	p->total = 0;
	expect_rejection(p, 20, "total 0: a plan must aim at 1 instance or more");
}

static void test_validate_steps(void **state)
{
	struct gb_plan *p = NULL;

	(void)state;
	assert_int_equal(gb_plan_new("g5.xlarge", "test", 2, &p, NULL), GB_E_OK);
	expect_rejection(p, 2, "the plan has no steps");

	p = good_plan();
	gb_plan_add_step(p, "eu-west-1", "eu-west-1a", "subnet-x", NULL, 1, 0, "far", NULL);
	expect_rejection(p, 8, "step 4: region eu-west-1 is outside the allowed set "
			 "{ap-south-1, ap-northeast-2, ap-northeast-1}");
	p = good_plan();
	free(p->steps[0].az);
	p->steps[0].az = strdup("ap-south-1z");
	expect_rejection(p, 8, "step 1: availability zone ap-south-1z is not configured in ap-south-1");
	p = good_plan();
	free(p->steps[1].subnet);
	p->steps[1].subnet = strdup("subnet-nope");
	expect_rejection(p, 8, "step 2: subnet subnet-nope is not configured in ap-northeast-2b");
	p = good_plan();
	p->steps[0].batch = 5;
	expect_rejection(p, 8, "step 1: batch 5 is outside 1..4 (policy.batch_max)");
	p = good_plan();
	p->steps[2].batch = 0;
	expect_rejection(p, 8, "step 3: batch 0 is outside 1..4 (policy.batch_max)");
	p = good_plan();
	gb_plan_add_step(p, "ap-south-1", "ap-south-1a", "subnet-aps1a-1", NULL, 1, 0, "again", NULL);
	expect_rejection(p, 8, "step 4: duplicate of step 1 (ap-south-1 ap-south-1a subnet-aps1a-1 g5.xlarge)");
}

static void test_validate_all_reasons(void **state)
{
	struct gb_plan_scope s = { conf, "g5.xlarge", 4, allowed, 3 };
	struct gb_errlist errs = { 0 };
	struct gb_plan *p = good_plan();
	gb_error_t err;

	(void)state;
	p->total = 9;
	p->steps[0].batch = 7;
	free(p->steps[2].region);
	p->steps[2].region = strdup("ap-northeast-3");
	assert_int_equal(gb_plan_validate(&s, p, &errs, &err), GB_E_PLAN);
	assert_int_equal(errs.n, 3);
	assert_string_equal(errs.msgs[0], "total 9 exceeds the request's 4 nodes");
	assert_string_equal(errs.msgs[1], "step 1: batch 7 is outside 1..4 (policy.batch_max)");
	assert_string_equal(errs.msgs[2], "step 3: region ap-northeast-3 is outside the allowed set "
			    "{ap-south-1, ap-northeast-2, ap-northeast-1}");
	assert_string_equal(err.text, errs.msgs[0]);
	gb_errlist_free(&errs);
	gb_plan_free(p);
}

/*****************************************************************************
 *  Plan JSON
 *****************************************************************************/

static void test_plan_json(void **state)
{
	struct gb_plan *p = good_plan(), *q = NULL;
	char *text = NULL, *again = NULL;
	gb_error_t err;

	(void)state;
	gb_plan_set_rationale(p, "because \"quotes\" and\nnewlines", NULL);
	assert_int_equal(gb_plan_to_json(p, &text, &err), GB_E_OK);
	assert_int_equal(gb_plan_from_json(text, &q, &err), GB_E_OK);
	assert_string_equal(q->instance_type, "g5.xlarge");
	assert_string_equal(q->planner, "test");
	assert_string_equal(q->rationale, p->rationale);
	assert_int_equal(q->total, 8);
	assert_int_equal(q->n_steps, 3);
	assert_string_equal(q->steps[1].subnet, "subnet-apne2b-1");
	assert_int_equal(q->steps[0].expect, 3);
	assert_int_equal(q->steps[1].batch, 2);
	assert_string_equal(q->steps[2].reason, "third");
	assert_int_equal(gb_plan_to_json(q, &again, &err), GB_E_OK);
	assert_string_equal(text, again);
	free(text);
	free(again);
	gb_plan_free(p);
	gb_plan_free(q);

	assert_int_equal(gb_plan_from_json("{\"instance_type\":\"g5.xlarge\",\"total\":1}", &q, &err),
			 GB_E_PARSE);
	assert_string_equal(err.text, "plan JSON: steps: expected an array");
	assert_int_equal(gb_plan_from_json("{\"instance_type\":\"g5.xlarge\",\"total\":1,\"steps\":"
					   "[{\"region\":\"a\",\"az\":\"b\",\"subnet\":\"c\",\"batch\":\"4\"}]}",
					   &q, &err), GB_E_PARSE);
	assert_string_equal(err.text, "plan JSON: steps[0].batch: expected an integer");
	assert_int_equal(gb_plan_from_json("[1,2]", &q, &err), GB_E_PARSE);
	assert_int_equal(gb_plan_from_json("{\"total\":", &q, &err), GB_E_PARSE);
	assert_null(q);
}

/*****************************************************************************
 *  Memory, summary, heuristic
 *****************************************************************************/

static char dbdir[256];

static gb_state_t *temp_state(void)
{
	char path[300];
	gb_state_t *st = NULL;

	snprintf(dbdir, sizeof(dbdir), "/tmp/test-plan.XXXXXX");
	assert_non_null(mkdtemp(dbdir));
	snprintf(path, sizeof(path), "%s/state.db", dbdir);
	assert_int_equal(gb_state_open(path, 0, 1000, &st, NULL), GB_E_OK);
	return st;
}

static void drop_state(gb_state_t *st)
{
	char path[300];

	gb_state_close(st);
	snprintf(path, sizeof(path), "%s/state.db", dbdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/state.db-wal", dbdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/state.db-shm", dbdir);
	unlink(path);
	rmdir(dbdir);
}

static const struct gb_pool *pool_of(const struct gb_plan_facts *f, const char *subnet)
{
	for (size_t i = 0; i < f->n_pools; i++)
		if (!strcmp(f->pools[i].subnet, subnet))
			return &f->pools[i];
	fail_msg("no pool %s", subnet);
	return NULL;
}

static void test_memory_and_heuristic(void **state)
{
	gb_state_t *st = temp_state();
	struct gb_candidates c;
	struct gb_plan_facts f;
	struct gb_plan *p = NULL;
	double now = 1.8e9, hl = conf->policy.capacity_half_life;
	char summary[GB_PLAN_SUMMARY_MAX + 1];
	gb_error_t err;

	(void)state;
	/* ap-northeast-2b: plenty; ap-northeast-1a: about 3; ap-south-1a: dry 60 s ago */
	assert_int_equal(gb_state_capacity_record(st, "ap-northeast-2", "ap-northeast-2b", "g5.xlarge", NULL,
						  40, 40, false, false, now - 7200, hl, &err), GB_E_OK);
	/* gave all asked but little: no verdict yet */
	assert_int_equal(gb_state_capacity_record(st, "ap-northeast-2", "ap-northeast-2a", "g5.xlarge", NULL,
						  2, 2, false, false, now - 7200, hl, &err), GB_E_OK);
	assert_int_equal(gb_state_capacity_record(st, "ap-northeast-1", "ap-northeast-1a", "g5.xlarge", NULL,
						  4, 3, true, false, now - 7200, hl, &err), GB_E_OK);
	assert_int_equal(gb_state_capacity_record(st, "ap-northeast-1", "ap-northeast-1a", "g5.xlarge", NULL,
						  4, 3, true, false, now - 3600, hl, &err), GB_E_OK);
	assert_int_equal(gb_state_capacity_record(st, "ap-south-1", "ap-south-1a", "g5.xlarge", NULL,
						  4, 2, true, false, now - 60, hl, &err), GB_E_OK);
	assert_int_equal(gb_state_offering_put(st, "ap-northeast-2", "ap-northeast-2c", "g5.xlarge",
					       false, now - 10, &err), GB_E_OK);
	assert_int_equal(gb_plan_candidates(conf, "ap-southeast-1", GB_MODE_MULTI_REGION, &c, &err),
			 GB_E_OK);
	assert_int_equal(gb_plan_facts_build(conf, &c, "g5.xlarge", 8, 1, GB_LOCALITY_NONE, st, now,
					     &f, &err), GB_E_OK);
	assert_int_equal(f.n_pools, 8);
	assert_true(isinf(pool_of(&f, "subnet-apne2b-1")->mem.est));
	assert_true(fabs(pool_of(&f, "subnet-apne1a-1")->mem.est - 3.0) < 1e-9);
	assert_true(pool_of(&f, "subnet-aps1a-1")->mem.recent_ice);
	assert_true(pool_of(&f, "subnet-aps1a-2")->mem.recent_ice);	/* same AZ */
	assert_true(pool_of(&f, "subnet-aps1b-1")->mem.est < 0);
	assert_true(pool_of(&f, "subnet-apne2a-1")->mem.known);
	assert_true(pool_of(&f, "subnet-apne2a-1")->mem.est < 0);
	assert_int_equal(pool_of(&f, "subnet-apne2c-1")->offered, GB_OFFER_NO);

	assert_int_equal(gb_plan_heuristic(&f, &p, &err), GB_E_OK);
	assert_string_equal(p->planner, "heuristic");
	assert_int_equal(p->total, 8);
	assert_int_equal(p->n_steps, 7);	/* 2c is not offered */
	assert_string_equal(p->steps[0].subnet, "subnet-apne2b-1");	/* plenty */
	assert_int_equal(p->steps[0].expect, 8);
	assert_int_equal(p->steps[0].batch, 4);
	assert_string_equal(p->steps[1].subnet, "subnet-apne1a-1");	/* about 3 */
	assert_int_equal(p->steps[1].expect, 3);
	assert_int_equal(p->steps[1].batch, 4);			/* 3 + 1 hedge */
	/* unknown pools are assumed to hold what known ones hold: (3 + 2) / 2,
	 * after the measured pool of the same size */
	assert_string_equal(p->steps[2].subnet, "subnet-aps1b-1");
	assert_int_equal(p->steps[2].expect, 3);
	assert_string_equal(p->steps[2].reason,
			    "no memory; assumed about 3 like the pools memory knows");
	assert_string_equal(p->steps[3].subnet, "subnet-apne2a-1");
	assert_string_equal(p->steps[4].subnet, "subnet-apne1c-1");
	assert_string_equal(p->steps[5].subnet, "subnet-aps1a-1");	/* cooling last */
	assert_string_equal(p->steps[6].subnet, "subnet-aps1a-2");
	assert_string_equal(p->steps[6].reason, "another subnet of ap-south-1a (address rotation)");
	{
		struct gb_plan_scope s = { conf, "g5.xlarge", 8, c.allowed, c.n_allowed };

		assert_int_equal(gb_plan_validate(&s, p, NULL, &err), GB_E_OK);
	}
	gb_plan_free(p);

	/* an 8-node job with locality: Seoul (plenty) first */
	f.job_size = 8;
	f.locality = GB_LOCALITY_REGION;
	assert_int_equal(gb_plan_heuristic(&f, &p, &err), GB_E_OK);
	assert_string_equal(p->steps[0].region, "ap-northeast-2");
	assert_string_equal(p->steps[1].region, "ap-northeast-2");
	assert_non_null(strstr(p->rationale, "first ap-northeast-2"));
	gb_plan_free(p);

	/* the ancestor's order ignores memory */
	assert_int_equal(gb_plan_ordered(&f, &p, &err), GB_E_OK);
	assert_string_equal(p->steps[0].subnet, "subnet-aps1a-1");
	assert_string_equal(p->steps[6].subnet, "subnet-apne1c-1");
	gb_plan_free(p);

	assert_true(gb_plan_capacity_summary(&f, summary, sizeof(summary)) <= GB_PLAN_SUMMARY_MAX);
	assert_non_null(strstr(summary, "ap-northeast-1a got"));
	assert_non_null(strstr(summary, "ap-northeast-2c not-offered"));
	assert_non_null(strstr(summary, "cooling"));

	/* nothing usable */
	for (size_t i = 0; i < f.n_pools; i++)
		f.pools[i].excluded = true;
	assert_int_equal(gb_plan_heuristic(&f, &p, &err), GB_E_PLAN);
	assert_non_null(strstr(err.text, "no usable pool offers g5.xlarge"));
	gb_plan_facts_clear(&f);
	gb_plan_candidates_clear(&c);
	drop_state(st);
}

static void level(gb_state_t *st, const char *region, const char *az, int n,
		  bool exact, double at)
{
	gb_error_t err;

	assert_int_equal(gb_state_capacity_level(st, region, az, "g5.xlarge", NULL, n, exact, at,
						 conf->policy.capacity_half_life, &err),
			 GB_E_OK);
}

/* A live g5.xlarge of ours in [region] (it holds 4 vCPUs of its quota). */
static void live_instance(gb_state_t *st, const char *region, const char *id)
{
	struct gb_request req = { 0 };
	struct gb_instance in = { 0 };
	gb_error_t err;

	req.kind = GB_REQ_RESUME;
	req.state = GB_RSTATE_RUNNING;
	req.nodeset = "g5";
	req.nodes = "g5-1";
	req.node_count = 1;
	assert_int_equal(gb_state_request_add(st, &req, &err), GB_E_OK);
	in.request_id = req.id;
	in.region = region;
	in.instance_id = id;
	in.node = "g5-1";
	in.instance_type = "g5.xlarge";
	in.state = GB_INST_RUNNING;
	in.launched_at = 1.8e9 - 60;
	assert_int_equal(gb_state_instance_add(st, &in, &err), GB_E_OK);
}

static void bounds_facts(gb_state_t *st, struct gb_candidates *c,
			 struct gb_plan_facts *f, double now)
{
	gb_error_t err;

	assert_int_equal(gb_plan_facts_build(conf, c, "g5.xlarge", 8, 1, GB_LOCALITY_NONE, st,
					     now, f, &err), GB_E_OK);
	f->bounds = true;
	assert_int_equal(gb_plan_quota_rooms(f, st, &err), GB_E_OK);
	for (size_t i = 0; i < f->n_pools; i++)
		gb_plan_pool_estimate(f, &f->pools[i]);
}

/*
 * The default strategy's memory (facts.bounds): levels measured when a pool
 * ran dry, lower bounds when it gave all it was asked, quota walls.
 */
static void test_bounds_and_quota(void **state)
{
	gb_state_t *st = temp_state();
	struct gb_candidates c;
	struct gb_plan_facts f;
	struct gb_plan *p = NULL;
	const struct gb_pool *q;
	double now = 1.8e9, hl = conf->policy.capacity_half_life;
	char key[64];
	gb_error_t err;

	(void)state;
	/* ap-northeast-2b gave all 4 asked three times: at least a full batch */
	for (int i = 0; i < 3; i++)
		level(st, "ap-northeast-2", "ap-northeast-2b", 4, false, now - 1800 + 600 * i);
	/* ap-northeast-1a ran dry at 2 an hour ago, then gave 4 of 4 twice: 4 */
	level(st, "ap-northeast-1", "ap-northeast-1a", 2, true, now - 3600);
	level(st, "ap-northeast-1", "ap-northeast-1a", 4, false, now - 1200);
	level(st, "ap-northeast-1", "ap-northeast-1a", 4, false, now - 600);
	/* ap-south-1b ran dry at 3, then gave the 2 it was asked: still 3 */
	level(st, "ap-south-1", "ap-south-1b", 3, true, now - 1200);
	level(st, "ap-south-1", "ap-south-1b", 2, false, now - 600);
	/* ap-northeast-2a gave the 1 it was asked; ap-northeast-1c gave 9 */
	level(st, "ap-northeast-2", "ap-northeast-2a", 1, false, now - 600);
	level(st, "ap-northeast-1", "ap-northeast-1c", 9, false, now - 600);
	/* ap-south-1 allows 8 vCPUs of G; one g5.xlarge of ours lives there */
	assert_int_equal(gb_state_quota_record(st, "ap-south-1", "vcpus:G", "VcpuLimitExceeded",
					       8, true, now - 600, hl, &err), GB_E_OK);
	live_instance(st, "ap-south-1", "i-0a");
	assert_int_equal(gb_plan_candidates(conf, "ap-southeast-1", GB_MODE_MULTI_REGION, &c, &err),
			 GB_E_OK);

	/* without bounds (the other strategies): the counters, which are empty */
	assert_int_equal(gb_plan_facts_build(conf, &c, "g5.xlarge", 8, 1, GB_LOCALITY_NONE, st,
					     now, &f, &err), GB_E_OK);
	assert_true(pool_of(&f, "subnet-apne2b-1")->mem.est < 0);
	assert_true(isinf(pool_of(&f, "subnet-aps1b-1")->mem.quota_room));
	gb_plan_facts_clear(&f);

	bounds_facts(st, &c, &f, now);
	q = pool_of(&f, "subnet-apne2b-1");
	assert_false(q->mem.measured);
	assert_true(fabs(q->mem.est - 4) < 1e-9 && fabs(q->mem.floor - 4) < 1e-9);
	q = pool_of(&f, "subnet-apne1a-1");
	assert_false(q->mem.measured);	/* the 4s dropped the old level */
	assert_true(fabs(q->mem.est - 4) < 1e-9);
	q = pool_of(&f, "subnet-aps1b-1");	/* 3, but the quota leaves room for 1 */
	assert_true(fabs(q->mem.quota_room - 1) < 1e-9);
	assert_true(fabs(q->mem.est - 1) < 1e-9);
	assert_false(q->mem.walled);
	assert_string_equal(q->mem.quota_code, "VcpuLimitExceeded");
	assert_true(isinf(pool_of(&f, "subnet-apne1c-1")->mem.est));	/* plenty */
	assert_true(fabs(pool_of(&f, "subnet-apne2a-1")->mem.est - 1) < 1e-9);
	assert_true(isinf(pool_of(&f, "subnet-apne2c-1")->mem.quota_room));

	assert_int_equal(gb_plan_heuristic(&f, &p, &err), GB_E_OK);
	assert_string_equal(p->steps[0].subnet, "subnet-apne1c-1");	/* plenty */
	assert_string_equal(p->steps[1].subnet, "subnet-apne2b-1");	/* 4, nearer */
	assert_int_equal(p->steps[1].expect, 4);
	assert_string_equal(p->steps[1].reason, "memory: at least 4.0 (over 2.4 visits, never dry)");
	assert_string_equal(p->steps[2].subnet, "subnet-apne1a-1");	/* 4, farther */
	/* "at least 1" is no reason to rank a pool under the average: assumed */
	assert_string_equal(p->steps[3].subnet, "subnet-apne2a-1");
	assert_non_null(strstr(p->steps[3].reason, "assumed about"));
	assert_string_equal(p->steps[4].subnet, "subnet-apne2c-1");
	assert_string_equal(p->steps[5].subnet, "subnet-aps1b-1");	/* measured, room 1 */
	assert_int_equal(p->steps[5].expect, 1);
	assert_string_equal(p->steps[6].subnet, "subnet-aps1a-1");	/* assumed, room 1 */
	assert_int_equal(p->steps[6].expect, 1);
	gb_plan_free(p);
	gb_plan_facts_clear(&f);

	/* a second g5.xlarge there fills the quota: ap-south-1 is walled, last */
	live_instance(st, "ap-south-1", "i-0b");
	bounds_facts(st, &c, &f, now);
	q = pool_of(&f, "subnet-aps1b-1");
	assert_true(q->mem.walled && q->mem.est == 0 && q->mem.quota_room == 0);
	assert_int_equal(gb_plan_heuristic(&f, &p, &err), GB_E_OK);
	assert_string_equal(p->steps[p->n_steps - 1].region, "ap-south-1");
	assert_string_equal(p->steps[p->n_steps - 3].reason,
			    "quota: VcpuLimitExceeded remembered, no room left in ap-south-1");
	assert_int_equal(p->steps[p->n_steps - 3].batch, 1);
	gb_plan_free(p);
	gb_plan_facts_clear(&f);

	/* two half-lives after the refusal the wall is forgotten */
	bounds_facts(st, &c, &f, now - 600 + 2 * hl + 1);
	assert_true(isinf(pool_of(&f, "subnet-aps1b-1")->mem.quota_room));
	gb_plan_facts_clear(&f);

	assert_int_equal(gb_plan_quota_key(NULL, "g5.xlarge", false, "VcpuLimitExceeded", key,
					   sizeof(key)), 4);
	assert_string_equal(key, "vcpus:G");
	assert_int_equal(gb_plan_quota_key(NULL, "g6e.12xlarge", true, "VcpuLimitExceeded", key,
					   sizeof(key)), 48);
	assert_string_equal(key, "vcpus:G:spot");
	assert_int_equal(gb_plan_quota_key(NULL, "g5.xlarge", false, "InstanceLimitExceeded", key,
					   sizeof(key)), 1);
	assert_string_equal(key, "instances");
	assert_int_equal(gb_plan_quota_key(NULL, "g5.xlarge", true, "MaxSpotInstanceCountExceeded", key,
					   sizeof(key)), 1);
	assert_string_equal(key, "MaxSpotInstanceCountExceeded:g5.xlarge");
	/* a region the account may not use: one wall for every type */
	assert_int_equal(gb_plan_quota_key(NULL, "g6e.xlarge", true, "OptInRequired", key,
					   sizeof(key)), 1);
	assert_string_equal(key, GB_PLAN_QUOTA_ACCOUNT);
	assert_int_equal(gb_plan_quota_key(NULL, "g5.xlarge", false, "AuthFailure", key,
					   sizeof(key)), 1);
	assert_string_equal(key, "account");
	assert_int_equal(gb_state_quota_record(st, "ap-south-1", "account", "PendingVerification",
					       0, true, now, hl, &err), GB_E_OK);
	bounds_facts(st, &c, &f, now + 1);
	assert_true(pool_of(&f, "subnet-aps1b-1")->mem.quota_room == 0);
	assert_true(pool_of(&f, "subnet-aps1b-1")->mem.walled);
	assert_string_equal(pool_of(&f, "subnet-aps1b-1")->mem.quota_code, "PendingVerification");
	gb_plan_facts_clear(&f);
	gb_plan_candidates_clear(&c);
	drop_state(st);
}

/*
 * gb_plan_memory_of(), gb_plan_quota_view() and gb_plan_quota_room() (what
 * gpuburstctl capacity shows) read each row as the planners do: the same
 * estimates, bounds, cool-downs and walls as the facts of a request.
 */
struct mem_cmp {
	const struct gb_plan_facts *f;
	double room;		/* ap-south-1's, from the views */
	int rows;
};

static int mem_cmp_row(const struct gb_capacity *row, void *arg)
{
	struct mem_cmp *mc = arg;
	struct gb_pool_memory m;
	bool seen = false;

	gb_plan_memory_of(conf, row, mc->f->now, true,
			  strcmp(row->region, "ap-south-1") == 0 ? mc->room : HUGE_VAL, &m);
	for (size_t i = 0; i < mc->f->n_pools; i++) {
		const struct gb_pool_memory *w = &mc->f->pools[i].mem;

		if (strcmp(mc->f->pools[i].az, row->az) || seen)
			continue;
		seen = true;
		assert_true(m.est == w->est || fabs(m.est - w->est) < 1e-9);
		assert_true(fabs(m.floor - w->floor) < 1e-9);
		assert_int_equal(m.measured, w->measured);
		assert_int_equal(m.walled, w->walled);
		assert_int_equal(m.recent_ice, w->recent_ice);
		assert_true(m.counter_est == w->counter_est ||
			    fabs(m.counter_est - w->counter_est) < 1e-9);
	}
	assert_true(seen);
	mc->rows++;
	return 0;
}

struct view_out {
	gb_state_t *st;
	double now, hl, room;
	struct gb_plan_quota_view v;
};

static int view_row(const struct gb_quota *q, void *arg)
{
	struct view_out *o = arg;
	gb_error_t err;

	assert_int_equal(gb_plan_quota_view(NULL, o->st, q, o->now, o->hl, &o->v, &err), GB_E_OK);
	o->room = gb_plan_quota_room(NULL, q, &o->v, "g5.xlarge", false);
	assert_true(isinf(gb_plan_quota_room(NULL, q, &o->v, "g5.xlarge", true)));	/* on-demand only */
	return 0;
}

static void test_memory_of(void **state)
{
	gb_state_t *st = temp_state();
	struct gb_candidates c;
	struct gb_plan_facts f;
	struct view_out vo = { 0 };
	struct mem_cmp mc = { 0 };
	double now = 1.8e9, hl = conf->policy.capacity_half_life;
	gb_error_t err;

	(void)state;
	level(st, "ap-northeast-2", "ap-northeast-2b", 4, false, now - 1800);
	level(st, "ap-south-1", "ap-south-1b", 3, true, now - 1200);
	level(st, "ap-south-1", "ap-south-1a", 2, true, now - 120);
	assert_int_equal(gb_state_capacity_record(st, "ap-south-1", "ap-south-1a", "g5.xlarge", NULL,
						  4, 2, true, false, now - 120, hl, &err), GB_E_OK);
	assert_int_equal(gb_state_quota_record(st, "ap-south-1", "vcpus:G", "VcpuLimitExceeded",
					       8, true, now - 600, hl, &err), GB_E_OK);
	live_instance(st, "ap-south-1", "i-0a");
	assert_int_equal(gb_plan_candidates(conf, "ap-southeast-1", GB_MODE_MULTI_REGION, &c, &err),
			 GB_E_OK);
	bounds_facts(st, &c, &f, now);

	vo.st = st;
	vo.now = now;
	vo.hl = hl;
	assert_int_equal(gb_state_quota_list(st, now, hl, view_row, &vo, &err), GB_E_OK);
	assert_true(vo.v.heeded && fabs(vo.v.limit - 8) < 1e-9 && fabs(vo.v.held - 4) < 1e-9);
	/* one refusal is forgotten two half-lives after it */
	assert_true(fabs(vo.v.forget_at - (now - 600 + 2 * hl)) < 1e-6);
	assert_true(fabs(vo.room - pool_of(&f, "subnet-aps1b-1")->mem.quota_room) < 1e-9);

	mc.f = &f;
	mc.room = vo.room;
	assert_int_equal(gb_state_capacity_list(st, "g5.xlarge", now, hl, mem_cmp_row, &mc, &err),
			 GB_E_OK);
	assert_int_equal(mc.rows, 3);
	assert_true(pool_of(&f, "subnet-aps1a-1")->mem.recent_ice);	/* 2 min ago: cooling */
	gb_plan_facts_clear(&f);

	/* forgotten: not heeded, no room limit */
	vo.now = now - 600 + 2 * hl + 1;
	assert_int_equal(gb_state_quota_list(st, vo.now, hl, view_row, &vo, &err), GB_E_OK);
	assert_false(vo.v.heeded);
	assert_true(vo.v.forget_at == 0 && isinf(vo.room));
	gb_plan_candidates_clear(&c);
	drop_state(st);
}

static void test_summary_bounded(void **state)
{
	struct gb_plan_facts f = { 0 };
	struct gb_pool pools[300];
	char names[300][24], big[4096];
	size_t n;

	(void)state;
	memset(pools, 0, sizeof(pools));
	f.instance_type = "g5.xlarge";
	f.conf = conf;
	f.now = 1e9;
	f.pools = pools;
	f.n_pools = 300;
	for (int i = 0; i < 300; i++) {
		snprintf(names[i], sizeof(names[i]), "zone-%d", i);
		pools[i].region = "r";
		pools[i].az = names[i];
		pools[i].subnet = names[i];
		pools[i].mem.known = true;
		pools[i].mem.asked = 100 + i;
		pools[i].mem.got = 50 + i;
		pools[i].mem.ice = 3;
		pools[i].mem.est = (50.0 + i) / 3;
		pools[i].mem.last_ice_at = 1e9 - 100;
		pools[i].mem.recent_ice = true;
	}
	n = gb_plan_capacity_summary(&f, big, sizeof(big));
	assert_true(n <= GB_PLAN_SUMMARY_MAX);
	assert_int_equal(strlen(big), n);
	assert_non_null(strstr(big, "zone-299 "));	/* most informative first */
	assert_int_equal(big[n - 1], ';');		/* cut at an item */
	n = gb_plan_capacity_summary(&f, big, 40);
	assert_true(n < 40);
}

/*****************************************************************************
 *  Re-probes
 *****************************************************************************/

/* 5, 10, 20, 40, 40 s while the window has room; capacity shortfalls only. */
static void test_reprobe_delay(void **state)
{
	struct gb_orch_result r = { 0 };

	(void)state;
	r.cause = GB_E_CAPACITY;
	r.requested = 4;
	r.launched = 1;
	assert_true(gb_orch_reprobe_delay(&r, 0, 100) == 5);
	assert_true(gb_orch_reprobe_delay(&r, 1, 100) == 10);
	assert_true(gb_orch_reprobe_delay(&r, 2, 100) == 20);
	assert_true(gb_orch_reprobe_delay(&r, 3, 100) == 40);
	assert_true(gb_orch_reprobe_delay(&r, 9, 100) == 40);
	assert_true(gb_orch_reprobe_delay(&r, 1000, 100) == 40);
	assert_true(gb_orch_reprobe_delay(&r, 0, 5) == 5);	/* ends on the window's edge */
	assert_true(gb_orch_reprobe_delay(&r, 0, 4.9) < 0);
	assert_true(gb_orch_reprobe_delay(&r, 2, 19) < 0);
	assert_true(gb_orch_reprobe_delay(&r, 0, -3) < 0);
	r.launched = 4;
	assert_true(gb_orch_reprobe_delay(&r, 0, 100) < 0);	/* complete */
	r.launched = 0;
	r.cause = GB_E_QUOTA;	/* an account setting, not weather */
	assert_true(gb_orch_reprobe_delay(&r, 0, 100) < 0);
	r.cause = GB_E_TIMEOUT;
	assert_true(gb_orch_reprobe_delay(&r, 0, 100) < 0);
	r.cause = GB_E_AUTH;
	assert_true(gb_orch_reprobe_delay(&r, 0, 100) < 0);
	assert_true(gb_orch_reprobe_delay(NULL, 0, 100) < 0);
}

/*****************************************************************************
 *  Tokens and user data
 *****************************************************************************/

static void test_token(void **state)
{
	char a[GB_ORCH_TOKEN_MAX + 1], b[GB_ORCH_TOKEN_MAX + 1], c[GB_ORCH_TOKEN_MAX + 1];
	gb_error_t err;

	(void)state;
	assert_int_equal(gb_orch_client_token("68540dad20465e97", "ap-south-1", "ap-south-1a",
					      "subnet-aps1a-1", 12, 1, 4, a, sizeof(a), &err), GB_E_OK);
	assert_int_equal(gb_orch_client_token("68540dad20465e97", "ap-south-1", "ap-south-1a",
					      "subnet-aps1a-1", 12, 1, 4, b, sizeof(b), &err), GB_E_OK);
	assert_string_equal(a, b);
	assert_true(strlen(a) <= 64);
	assert_true(gb_str_has_prefix(a, "gb-68540dad20465e97-12-"));
	assert_int_equal(strlen(a), strlen("gb-68540dad20465e97-12-") + 16);
	for (const char *p = a; *p; p++)
		assert_true(*p > ' ' && *p <= '~');
	/* distinct per attempt, pool and counts */
	gb_orch_client_token("68540dad20465e97", "ap-south-1", "ap-south-1a", "subnet-aps1a-1", 13,
			     1, 4, c, sizeof(c), &err);
	assert_string_not_equal(a, c);
	gb_orch_client_token("68540dad20465e97", "ap-south-1", "ap-south-1a", "subnet-aps1a-2", 12,
			     1, 4, c, sizeof(c), &err);
	assert_string_not_equal(a, c);
	gb_orch_client_token("68540dad20465e97", "ap-south-1", "ap-south-1a", "subnet-aps1a-1", 12,
			     4, 4, c, sizeof(c), &err);
	assert_string_not_equal(a, c);
	/* the longest: a 16-digit id and the largest seq still fit */
	assert_int_equal(gb_orch_client_token("ffffffffffffffff", "r", "z", "s", 2147483647, 1, 1000,
					      c, sizeof(c), &err), GB_E_OK);
	assert_true(strlen(c) <= 64);
	assert_int_equal(gb_orch_client_token("this-request-id-is-far-too-long-for-a-token-of-64",
					      "r", "z", "s", 1, 1, 1, c, sizeof(c), &err),
			 GB_E_INVALID);
	assert_int_equal(gb_orch_client_token("", "r", "z", "s", 1, 1, 1, c, sizeof(c), &err),
			 GB_E_INVALID);
	assert_int_equal(gb_orch_client_token("bad id", "r", "z", "s", 1, 1, 1, c, sizeof(c), &err),
			 GB_E_INVALID);
}

/*
 * The EFA interfaces of a launch: one per network card up to the type's
 * EFA maximum, card 0 the primary; p6-b300's card 0 is ENA only, so a
 * plain primary there and EFA on cards 1 to 16.
 */
static void test_efa_layout(void **state)
{
	static const char yaml[] =
		"cluster_name: t\nenvironment: dev\n"
		"regions: [{name: ap-south-1, ami: ami-00000000000000001, security_groups: [sg-1], "
		"azs: [{name: ap-south-1a, subnets: [subnet-1]}]}]\n"
		"fallback_groups: {g: {consumer_regions: [ap-south-1], fallback_regions: [ap-south-1]}}\n"
		"policy: {allowed_families: [p5, p6-b300]}\n"
		"nodesets:\n"
		"  - {name: p5, nodes: \"p5-[1-2]\", instance_type: p5.48xlarge, home_region: ap-south-1, "
		"efa: true}\n"
		"  - {name: b300, nodes: \"b3-[1-2]\", instance_type: p6-b300.48xlarge, "
		"home_region: ap-south-1, efa: true}\n";
	const char *nodes[] = { "p5-1" };
	struct gb_orch_launch l = { 0 };
	struct gb_conf *c = NULL;
	const struct gb_ec2_net_if *f;
	gb_error_t err;

	(void)state;
	if (gb_conf_load_string("gpuburst.yaml", yaml, strlen(yaml), &c, NULL, &err))
		fail_msg("%s", err.text);
	assert_int_equal(gb_orch_launch_params(c, gb_conf_nodeset(c, "p5"), "p5.48xlarge", NULL,
					       "ap-south-1", "subnet-1", "r1", nodes, 1, 1, NULL, NULL,
					       &l, &err), GB_E_OK);
	assert_int_equal(l.run.n_net_ifs, 32);
	assert_null(l.run.subnet_id);
	assert_int_equal(l.run.n_security_group_ids, 0);
	for (size_t i = 0; i < l.run.n_net_ifs; i++) {
		f = &l.run.net_ifs[i];
		assert_int_equal(f->network_card_index, (int)i);
		assert_int_equal(f->device_index, i == 0 ? 0 : 1);
		assert_string_equal(f->interface_type, "efa");
		assert_string_equal(f->subnet_id, "subnet-1");
		assert_int_equal(f->n_security_group_ids, 1);
	}
	nodes[0] = "b3-1";
	assert_int_equal(gb_orch_launch_params(c, gb_conf_nodeset(c, "b300"), "p6-b300.48xlarge", NULL,
					       "ap-south-1", "subnet-1", "r1", nodes, 1, 1, NULL, NULL,
					       &l, &err), GB_E_OK);
	assert_int_equal(l.run.n_net_ifs, 17);
	assert_string_equal(l.run.net_ifs[0].interface_type, "interface");
	assert_int_equal(l.run.net_ifs[0].device_index, 0);
	for (size_t i = 1; i < l.run.n_net_ifs; i++) {
		f = &l.run.net_ifs[i];
		assert_int_equal(f->network_card_index, (int)i);
		assert_string_equal(f->interface_type, "efa");
	}
	gb_orch_launch_clear(&l);
	gb_conf_destroy(c);
}

/* Render [tmpl] for the call of [nodes] ([n]) with [munge_key]. */
static gb_err_t render(const char *tmpl, const char *const *nodes, size_t n,
		       const char *munge_key, char **out, size_t *len, gb_error_t *err)
{
	struct gb_orch_user_vars v = { "c", "r", "i", nodes, n, munge_key };

	return gb_orch_user_data(tmpl, &v, out, len, err);
}

static void test_user_data(void **state)
{
	const char *nodes[] = { "g5-1", "g5-2", "g5-3" };
	struct gb_orch_user_vars v = { "burst", "ap-south-1", "68540dad20465e97", nodes, 3,
				       NULL };
	char *out = NULL, *big;
	size_t len;
	gb_error_t err;

	(void)state;
	assert_int_equal(gb_orch_user_data("#!/bin/sh\n# {cluster} {region} {request}\n"
					   "set -- {nodes}\n{unknown} ${x}\n", &v, &out, &len, &err),
			 GB_E_OK);
	assert_string_equal(out, "#!/bin/sh\n# burst ap-south-1 68540dad20465e97\n"
			    "set -- g5-1 g5-2 g5-3\n{unknown} ${x}\n");
	assert_int_equal(len, strlen(out));
	free(out);
	assert_int_equal(render("hostname {node}", nodes + 1, 1, NULL, &out, &len, &err), GB_E_OK);
	assert_string_equal(out, "hostname g5-2");
	free(out);
	assert_int_equal(render("hostname {node}", nodes, 2, NULL, &out, &len, &err), GB_E_INVALID);
	assert_null(out);
	assert_int_equal(render("", nodes, 1, NULL, &out, &len, &err), GB_E_OK);
	assert_string_equal(out, "");
	free(out);
	/* {munge_key}: the sealed text as given, once per mention; never without one */
	assert_int_equal(render("K='{munge_key}' {munge_key}{node}", nodes, 1, "gbseal1:QUJD",
				&out, &len, &err), GB_E_OK);
	assert_string_equal(out, "K='gbseal1:QUJD' gbseal1:QUJDg5-1");
	free(out);
	assert_int_equal(render("K={munge_key}", nodes, 1, NULL, &out, &len, &err), GB_E_INVALID);
	assert_null(out);
	assert_non_null(strstr(err.text, "{munge_key} without a sealed munge key"));
	assert_int_equal(render("K={munge_key", nodes, 1, NULL, &out, &len, &err), GB_E_OK);
	assert_string_equal(out, "K={munge_key");
	free(out);
	big = malloc(20000);
	memset(big, 'x', 16380);
	memcpy(big + 16380, "{nodes}", 8);
	assert_int_equal(render(big, nodes, 3, NULL, &out, &len, &err), GB_E_INVALID);
	assert_non_null(strstr(err.text, "more than EC2's 16384"));
	/* a sealed key counts towards the 16 KiB like any other text */
	memcpy(big + 16300, "{munge_key}", 12);
	assert_int_equal(render(big, nodes, 3, "gbseal1:QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=",
				&out, &len, &err), GB_E_OK);
	assert_int_equal(len, 16300 + 44);
	free(out);
	memcpy(big + 16300 + 11, "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy", 73);
	assert_int_equal(render(big, nodes, 3, "gbseal1:QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=",
				&out, &len, &err), GB_E_INVALID);
	assert_non_null(strstr(err.text, "more than EC2's 16384"));
	free(big);
}

/* Write [n] bytes [data] to [path] with [mode]. */
static void put_file(const char *path, const void *data, size_t n, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/*
 * {munge_key} end to end: cloud.munge_key loads, gb_orch_munge_seal()
 * seals the key file to seal_to, the launch's user data carries it, and
 * the private key (what gpuburst-node holds) gets the key back from it.
 */
static void test_user_data_munge_key(void **state)
{
	char dir[] = "/tmp/gb-plan-munge-XXXXXX", key_path[64], pub_path[64], priv_path[64];
	char yaml[1024], *tok = NULL;
	unsigned char key[48], *got = NULL;
	const char *nodes[] = { "g5-1" }, *found;
	struct gb_orch_launch l = { 0 };
	struct gb_conf *cf = NULL;
	EVP_PKEY *pk;
	size_t found_n, got_n = 0;
	gb_error_t err;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(key_path, sizeof(key_path), "%s/munge.key", dir);
	snprintf(pub_path, sizeof(pub_path), "%s/node-key.pub", dir);
	snprintf(priv_path, sizeof(priv_path), "%s/node-key.pem", dir);
	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (unsigned char)(255 - i);
	put_file(key_path, key, sizeof(key), 0400);
	assert_non_null(pk = EVP_PKEY_Q_keygen(NULL, NULL, "X25519"));
	assert_non_null(f = fopen(pub_path, "w"));
	assert_int_equal(PEM_write_PUBKEY(f, pk), 1);
	assert_int_equal(fclose(f), 0);
	assert_non_null(f = fopen(priv_path, "w"));
	assert_int_equal(PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL), 1);
	assert_int_equal(fclose(f), 0);
	EVP_PKEY_free(pk);
	snprintf(yaml, sizeof(yaml),
		 "cluster_name: t\nenvironment: dev\n"
		 "cloud: {munge_key: {file: %s, seal_to: %s}}\n"
		 "regions: [{name: ap-south-1, ami: ami-00000000000000001, "
		 "user_data: \"#!/bin/sh\\necho '{munge_key}' > /run/munge.sealed\\n\", "
		 "azs: [{name: ap-south-1a, subnets: [subnet-1]}]}]\n",
		 key_path, pub_path);
	if (gb_conf_load_string("gpuburst.yaml", yaml, strlen(yaml), &cf, NULL, &err))
		fail_msg("%s", err.text);
	assert_true(gb_conf_region(cf, "ap-south-1")->user_data_munge_key);
	assert_int_equal(gb_orch_munge_seal(cf, "r1", &tok, &err), GB_E_OK);
	assert_true(gb_str_has_prefix(tok, "gbseal1:"));
	/*
	 * per request, deterministic: a launch re-sent after a crash seals
	 * the same text (its ClientToken needs the same UserData); another
	 * request gets another
	 */
	{
		char *again = NULL, *other = NULL;

		assert_int_equal(gb_orch_munge_seal(cf, "r1", &again, &err), GB_E_OK);
		assert_int_equal(gb_orch_munge_seal(cf, "r2", &other, &err), GB_E_OK);
		assert_string_equal(again, tok);
		assert_string_not_equal(other, tok);
		free(again);
		free(other);
	}
	assert_int_equal(gb_orch_launch_params(cf, NULL, "g5.xlarge", NULL, "ap-south-1",
					       "subnet-1", "r1", nodes, 1, 1, NULL, tok, &l, &err),
			 GB_E_OK);
	assert_true(gb_seal_find(l.run.user_data, l.run.user_data_len, &found, &found_n));
	assert_int_equal(found_n, strlen(tok));
	assert_int_equal(gb_seal_open(priv_path, found, found_n, &got, &got_n, &err), GB_E_OK);
	assert_int_equal(got_n, sizeof(key));
	assert_memory_equal(got, key, sizeof(key));
	gb_seal_free(got, got_n);
	/* never the key in clear */
	assert_null(memmem(l.run.user_data, l.run.user_data_len, key, sizeof(key)));
	/* without the sealed text, the launch is refused, not sent bare */
	assert_int_equal(gb_orch_launch_params(cf, NULL, "g5.xlarge", NULL, "ap-south-1",
					       "subnet-1", "r1", nodes, 1, 1, NULL, NULL, &l, &err),
			 GB_E_INVALID);
	gb_orch_launch_clear(&l);
	free(tok);
	/* the key file is checked again when it is sealed */
	assert_int_equal(chmod(key_path, 0640), 0);
	assert_int_equal(gb_orch_munge_seal(cf, "r1", &tok, &err), GB_E_CONFIG);
	assert_null(tok);
	assert_non_null(strstr(err.text, "may be read or written by group or others (mode 0640)"));
	put_file(key_path, key, 8, 0600);
	assert_int_equal(gb_orch_munge_seal(cf, "r1", &tok, &err), GB_E_CONFIG);
	assert_non_null(strstr(err.text, "need 32 to 1024"));
	assert_int_equal(unlink(key_path), 0);
	assert_int_equal(gb_orch_munge_seal(cf, "r1", &tok, &err), GB_E_CONFIG);
	assert_non_null(strstr(err.text, "munge.key"));
	gb_conf_destroy(cf);
	unlink(pub_path);
	unlink(priv_path);
	rmdir(dir);
}

/*
 * Two instance types of one nodeset: pools per (region, type, AZ, subnet),
 * memory per type, the heuristic's order (a nearer region's second type
 * before a farther region's first), the validator's type rule, the step's
 * type in plan JSON and the preflight's answer applied per type.
 */
static const char *const two_types[] = { "g5.xlarge", "g6.xlarge" };

static const struct gb_pool *pool_typed(const struct gb_plan_facts *f, const char *subnet,
					const char *type)
{
	for (size_t i = 0; i < f->n_pools; i++)
		if (!strcmp(f->pools[i].subnet, subnet) && !strcmp(f->pools[i].type, type))
			return &f->pools[i];
	fail_msg("no pool %s %s", subnet, type);
	return NULL;
}

/*
 * A vCPU quota counts each instance in the vCPUs of the catalog in use: a
 * type only a refreshed catalog knows counts its own, not the default 4.
 */
static void test_quota_key_catalog(void **state)
{
	char dir[] = "/tmp/test-plan-cat.XXXXXX", path[300], key[64], *yaml;
	const struct gb_instance_type *all;
	struct gb_instance_type *v;
	struct gb_conf *c = NULL;
	gb_error_t err;
	size_t n;

	(void)state;
	all = gb_catalog_all(&n);
	v = calloc(n + 1, sizeof(*v));
	assert_non_null(v);
	memcpy(v, all, n * sizeof(*v));
	v[n] = *gb_catalog_find("g6.2xlarge");
	v[n].name = "g7.2xlarge";
	v[n].family = "g7";
	v[n].vcpus = 12;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, GB_CATALOG_FILE);
	assert_int_equal(gb_catalog_write(path, v, n + 1, "test_plan", 1e9, &err), GB_E_OK);
	free(v);
	assert_int_not_equal(asprintf(&yaml, "state_dir: %s\n%s", dir,
				      "cluster_name: t\nenvironment: dev\n"
				      "regions: [{name: ap-south-1, ami: ami-00000000000000001, "
				      "azs: [{name: ap-south-1a, subnets: [subnet-1]}]}]\n"
				      "fallback_groups: {g: {consumer_regions: [ap-south-1], "
				      "fallback_regions: [ap-south-1]}}\n"
				      "nodesets: [{name: g6, nodes: \"g6-[1-2]\", "
				      "instance_type: g6.xlarge, home_region: ap-south-1, "
				      "mode: single_region}]\n"), -1);
	if (gb_conf_load_string("gpuburst.yaml", yaml, strlen(yaml), &c, NULL, &err))
		fail_msg("%s", err.text);
	free(yaml);
	assert_non_null(c->catalog_path);
	assert_int_equal(gb_plan_quota_key(c, "g7.2xlarge", false, "VcpuLimitExceeded", key,
					   sizeof(key)), 12);
	assert_string_equal(key, "vcpus:G");
	assert_int_equal(gb_plan_quota_key(NULL, "g7.2xlarge", false, "VcpuLimitExceeded", key,
					   sizeof(key)), 4);
	gb_conf_destroy(c);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_types(void **state)
{
	gb_state_t *st = temp_state();
	struct gb_candidates c;
	struct gb_plan_facts f;
	struct gb_plan *p = NULL, *back = NULL;
	double now = 1.8e9, hl = conf->policy.capacity_half_life;
	char summary[GB_PLAN_SUMMARY_MAX + 1], *js = NULL;
	gb_error_t err;

	(void)state;
	/* g5.xlarge ran dry in ap-south-1a a minute ago; g6.xlarge never asked */
	assert_int_equal(gb_state_capacity_record(st, "ap-south-1", "ap-south-1a", "g5.xlarge", NULL,
						  4, 0, true, false, now - 60, hl, &err), GB_E_OK);
	assert_int_equal(gb_plan_candidates(conf, "ap-southeast-1", GB_MODE_MULTI_REGION, &c, &err),
			 GB_E_OK);
	assert_int_equal(gb_plan_facts_build_types(conf, &c, two_types, 2, 8, 1, GB_LOCALITY_NONE,
						   st, now, &f, &err), GB_E_OK);
	assert_int_equal(f.n_pools, 16);
	assert_int_equal(f.n_types, 2);
	assert_string_equal(f.instance_type, "g5.xlarge");
	/* candidate, type, AZ, subnet order */
	assert_string_equal(f.pools[0].subnet, "subnet-aps1a-1");
	assert_string_equal(f.pools[0].type, "g5.xlarge");
	assert_int_equal(f.pools[0].type_index, 0);
	assert_string_equal(f.pools[2].subnet, "subnet-aps1b-1");
	assert_string_equal(f.pools[3].subnet, "subnet-aps1a-1");
	assert_string_equal(f.pools[3].type, "g6.xlarge");
	assert_int_equal(f.pools[3].type_index, 1);
	assert_string_equal(f.pools[6].region, "ap-northeast-2");
	assert_string_equal(f.pools[6].type, "g5.xlarge");
	/* memory per type: the dry g5.xlarge does not make g6.xlarge dry */
	assert_true(pool_typed(&f, "subnet-aps1a-1", "g5.xlarge")->mem.recent_ice);
	assert_true(pool_typed(&f, "subnet-aps1a-2", "g5.xlarge")->mem.recent_ice);
	assert_false(pool_typed(&f, "subnet-aps1a-1", "g6.xlarge")->mem.known);
	assert_false(pool_typed(&f, "subnet-aps1a-1", "g6.xlarge")->mem.recent_ice);
	gb_plan_capacity_summary(&f, summary, sizeof(summary));
	assert_non_null(strstr(summary, "ap-south-1a/g5.xlarge got 0.0/4.0"));

	assert_int_equal(gb_plan_heuristic(&f, &p, &err), GB_E_OK);
	assert_int_equal(p->n_steps, 16);
	assert_string_equal(p->instance_type, "g5.xlarge");
	assert_string_equal(p->steps[0].subnet, "subnet-aps1b-1");
	assert_string_equal(p->steps[0].type, "g5.xlarge");
	/* Mumbai's second type before Seoul's first: distance matters more */
	assert_string_equal(p->steps[1].subnet, "subnet-aps1a-1");
	assert_string_equal(p->steps[1].type, "g6.xlarge");
	assert_string_equal(p->steps[2].subnet, "subnet-aps1a-2");
	assert_string_equal(p->steps[2].reason,
			    "another subnet of ap-south-1a for g6.xlarge (address rotation)");
	assert_string_equal(p->steps[3].subnet, "subnet-aps1b-1");
	assert_string_equal(p->steps[3].type, "g6.xlarge");
	assert_string_equal(p->steps[4].region, "ap-northeast-2");
	assert_string_equal(p->steps[4].type, "g5.xlarge");
	assert_string_equal(p->steps[7].region, "ap-northeast-2");
	assert_string_equal(p->steps[7].type, "g6.xlarge");
	/* the cooling g5.xlarge pools last */
	assert_string_equal(p->steps[14].subnet, "subnet-aps1a-1");
	assert_string_equal(p->steps[14].type, "g5.xlarge");
	assert_string_equal(p->steps[15].subnet, "subnet-aps1a-2");
	assert_string_equal(p->steps[15].type, "g5.xlarge");
	{
		struct gb_plan_scope s = { conf, "g5.xlarge", 8, c.allowed, c.n_allowed,
					   two_types, 2 };
		struct gb_plan_scope one = { conf, "g5.xlarge", 8, c.allowed, c.n_allowed };

		assert_int_equal(gb_plan_validate(&s, p, NULL, &err), GB_E_OK);
		/* a request of g5.xlarge alone: the g6.xlarge steps are foreign */
		assert_int_equal(gb_plan_validate(&one, p, NULL, &err), GB_E_PLAN);
		assert_string_equal(err.text, "step 2: instance type g6.xlarge is not one of the request's types {g5.xlarge}");
		/* the same subnet with another type is another pool, not a duplicate */
		assert_int_equal(gb_plan_add_step(p, "ap-south-1", "ap-south-1a", "subnet-aps1a-1",
						  "g6e.xlarge", 1, 0, "foreign", &err), GB_E_OK);
		assert_int_equal(gb_plan_validate(&s, p, NULL, &err), GB_E_PLAN);
		assert_string_equal(err.text, "step 17: instance type g6e.xlarge is not one of the request's types {g5.xlarge, g6.xlarge}");
	}
	/* JSON: the step's type round trips */
	assert_int_equal(gb_plan_to_json(p, &js, &err), GB_E_OK);
	assert_non_null(strstr(js, "\"subnet\":\"subnet-aps1a-1\",\"type\":\"g6.xlarge\""));
	assert_int_equal(gb_plan_from_json(js, &back, &err), GB_E_OK);
	assert_int_equal(back->n_steps, 17);
	assert_string_equal(back->steps[1].type, "g6.xlarge");
	assert_string_equal(back->steps[16].type, "g6e.xlarge");
	gb_plan_free(back);
	free(js);
	/* a plan stored before steps had a type: the plan's instance_type */
	assert_int_equal(gb_plan_from_json("{\"instance_type\":\"g5.xlarge\",\"total\":2,"
					   "\"planner\":\"heuristic\",\"steps\":[{\"region\":"
					   "\"ap-south-1\",\"az\":\"ap-south-1b\",\"subnet\":"
					   "\"subnet-aps1b-1\",\"batch\":2}]}", &back, &err), GB_E_OK);
	assert_string_equal(back->steps[0].type, "g5.xlarge");
	gb_plan_free(back);
	gb_plan_free(p);

	/* the preflight: g5.xlarge offered in ap-south-1b only, g6.xlarge in both AZs */
	{
		char t5[] = "g5.xlarge", t6[] = "g6.xlarge", kind[] = "availability-zone";
		char a1[] = "ap-south-1a", b1[] = "ap-south-1b";
		struct gb_ec2_offering v[] = {
			{ t5, kind, b1 },
			{ t6, kind, a1 },
			{ t6, kind, b1 },
		};
		struct gb_ec2_offering_list l = { v, 3, NULL, NULL };
		bool offered = true;

		gb_plan_offerings_apply(&f, "ap-south-1", &l, st);
		assert_int_equal(pool_typed(&f, "subnet-aps1a-1", "g5.xlarge")->offered, GB_OFFER_NO);
		assert_int_equal(pool_typed(&f, "subnet-aps1b-1", "g5.xlarge")->offered, GB_OFFER_YES);
		assert_int_equal(pool_typed(&f, "subnet-aps1a-2", "g6.xlarge")->offered, GB_OFFER_YES);
		assert_int_equal(gb_state_offering_get(st, "ap-south-1", "ap-south-1a", "g5.xlarge",
						       now - 1, &offered, &err), GB_E_OK);
		assert_false(offered);
		assert_int_equal(gb_state_offering_get(st, "ap-south-1", "ap-south-1a", "g6.xlarge",
						       now - 1, &offered, &err), GB_E_OK);
		assert_true(offered);
	}
	gb_plan_facts_clear(&f);
	gb_plan_candidates_clear(&c);
	drop_state(st);
}

/*****************************************************************************
 *  The capacity ladder: pools per rung, reservations, order, validation
 *****************************************************************************/

static const struct gb_pool *pool_rung(const struct gb_plan_facts *f, const char *subnet,
				       enum gb_capacity_kind k, const char *target)
{
	for (size_t i = 0; i < f->n_pools; i++)
		if (!strcmp(f->pools[i].subnet, subnet) && f->pools[i].capacity == k &&
		    !gb_strcmp0(f->pools[i].target, target))
			return &f->pools[i];
	fail_msg("no %s pool %s %s", gb_conf_capacity_name(k), subnet, target ? target : "");
	return NULL;
}

static void test_ladder(void **state)
{
	static char id_a[] = "cr-0000000000000000a", id_e[] = "cr-0000000000000000e";
	static char price[] = "1.50";
	static char *res_ids[] = { id_a, id_e, NULL };
	struct gb_conf_rung rungs[4] = {
		{ .kind = GB_CAPACITY_RESERVATION, .ids = res_ids, .n_ids = 2 },
		{ .kind = GB_CAPACITY_BLOCK },	/* any block of the type */
		{ .kind = GB_CAPACITY_SPOT, .max_price = price },
		{ .kind = GB_CAPACITY_ON_DEMAND },
	};
	double now = 1.8e9, hl = conf->policy.capacity_half_life;
	const struct gb_plan_resv resv[] = {
		/* 2 left in ap-south-1a */
		{ "ap-south-1", "cr-0000000000000000a", "g5.xlarge", "ap-south-1a",
		  GB_CAPACITY_RESERVATION, false, "active", 2, 2, 0, 0 },
		/* used up */
		{ "ap-northeast-2", "cr-0000000000000000e", "g5.xlarge", "ap-northeast-2b",
		  GB_CAPACITY_RESERVATION, false, "active", 0, 4, 0, 0 },
		/* not one the rung names */
		{ "ap-south-1", "cr-0000000000000000f", "g5.xlarge", "ap-south-1b",
		  GB_CAPACITY_RESERVATION, false, "active", 9, 9, 0, 0 },
		/* a block opening in a minute, one ending within the margin */
		{ "ap-northeast-1", "cr-0000000000000000b", "g5.xlarge", "ap-northeast-1a",
		  GB_CAPACITY_BLOCK, false, "scheduled", 0, 4, now + 60, now + 7200 },
		{ "ap-northeast-1", "cr-0000000000000000c", "g5.xlarge", "ap-northeast-1c",
		  GB_CAPACITY_BLOCK, false, "active", 4, 4, now - 3600, now + 600 },
		/* another type's */
		{ "ap-northeast-1", "cr-0000000000000000d", "p5.48xlarge", "ap-northeast-1a",
		  GB_CAPACITY_BLOCK, false, "active", 4, 4, now - 60, now + 7200 },
	};
	struct gb_plan_ladder ladder = { rungs, 4, resv, GB_ARRAY_LEN(resv), true };
	const char *types[] = { "g5.xlarge" };
	struct gb_plan_scope scope = { 0 };
	struct gb_plan *p = NULL, *back = NULL;
	gb_state_t *st = temp_state();
	struct gb_candidates c;
	struct gb_plan_facts f;
	const struct gb_pool *q;
	char *js = NULL;
	gb_error_t err;

	(void)state;
	/* spot ran dry in ap-south-1a a minute ago: on-demand there did not */
	assert_int_equal(gb_state_capacity_record(st, "ap-south-1", "ap-south-1a", "g5.xlarge",
						  "spot", 4, 0, true, false, now - 60, hl, &err),
			 GB_E_OK);
	assert_int_equal(gb_plan_candidates(conf, "ap-southeast-1", GB_MODE_MULTI_REGION, &c, &err),
			 GB_E_OK);
	assert_int_equal(gb_plan_facts_build_ladder(conf, &c, types, 1, &ladder, 8, 1,
						    GB_LOCALITY_NONE, st, now, &f, &err), GB_E_OK);
	/* reservation pools: only in their AZ, with their count */
	q = pool_rung(&f, "subnet-aps1a-2", GB_CAPACITY_RESERVATION, "cr-0000000000000000a");
	assert_int_equal(q->reserved, 2);
	assert_true(fabs(q->mem.est - 2) < 1e-9);
	assert_false(q->excluded);
	assert_int_equal(q->rung, 0);
	q = pool_rung(&f, "subnet-apne2b-1", GB_CAPACITY_RESERVATION, "cr-0000000000000000e");
	assert_true(q->excluded);
	assert_string_equal(q->why, "cr-0000000000000000e has none available");
	for (size_t i = 0; i < f.n_pools; i++)
		assert_true(gb_strcmp0(f.pools[i].target, "cr-0000000000000000f") &&
			    gb_strcmp0(f.pools[i].target, "cr-0000000000000000d"));
	/* blocks: one opening soon (usable, the engine waits), one ending */
	q = pool_rung(&f, "subnet-apne1a-1", GB_CAPACITY_BLOCK, "cr-0000000000000000b");
	assert_false(q->excluded);
	assert_true(fabs(q->opens_at - (now + 60)) < 1e-6);
	q = pool_rung(&f, "subnet-apne1c-1", GB_CAPACITY_BLOCK, "cr-0000000000000000c");
	assert_true(q->excluded);
	assert_string_equal(q->why, "cr-0000000000000000c ends within the margin");
	/* memory per kind */
	assert_true(pool_rung(&f, "subnet-aps1a-1", GB_CAPACITY_SPOT, NULL)->mem.recent_ice);
	assert_false(pool_rung(&f, "subnet-aps1a-1", GB_CAPACITY_ON_DEMAND, NULL)->mem.known);
	assert_string_equal(pool_rung(&f, "subnet-aps1b-1", GB_CAPACITY_SPOT, NULL)->max_price,
			    "1.50");

	/* rung by rung across the regions */
	assert_int_equal(gb_plan_heuristic(&f, &p, &err), GB_E_OK);
	assert_int_equal(p->steps[0].capacity, GB_CAPACITY_RESERVATION);
	assert_string_equal(p->steps[0].subnet, "subnet-aps1a-1");
	assert_string_equal(p->steps[0].target, "cr-0000000000000000a");
	assert_int_equal(p->steps[0].expect, 2);
	assert_int_equal(p->steps[0].batch, 2);		/* exact: no hedge */
	assert_string_equal(p->steps[0].reason, "reservation cr-0000000000000000a: 2 available");
	assert_string_equal(p->steps[1].subnet, "subnet-aps1a-2");
	assert_int_equal(p->steps[2].capacity, GB_CAPACITY_BLOCK);
	assert_string_equal(p->steps[2].target, "cr-0000000000000000b");
	assert_string_equal(p->steps[2].reason,
			    "capacity-block cr-0000000000000000b: 4 available when it opens");
	for (size_t i = 3; i < p->n_steps; i++) {
		/* the rungs' order: spot (2) then on-demand (3) */
		assert_true(p->steps[i].capacity == GB_CAPACITY_SPOT ||
			    p->steps[i].capacity == GB_CAPACITY_ON_DEMAND);
		assert_true(i == 3 || p->steps[i].capacity == p->steps[i - 1].capacity ||
			    p->steps[i].capacity == GB_CAPACITY_ON_DEMAND);
		assert_null(p->steps[i].target);
	}
	assert_int_equal(p->steps[3].capacity, GB_CAPACITY_SPOT);
	assert_int_equal(p->steps[p->n_steps - 1].capacity, GB_CAPACITY_ON_DEMAND);
	/* the dry spot pool is last among spot, the on-demand one is not */
	for (size_t i = 3; i < p->n_steps; i++)
		if (p->steps[i].capacity == GB_CAPACITY_ON_DEMAND) {
			assert_string_equal(p->steps[i].subnet, "subnet-aps1a-1");
			break;
		}

	/* the validator: the ladder's rungs and targets only */
	scope.conf = conf;
	scope.instance_type = "g5.xlarge";
	scope.target = 8;
	scope.allowed = c.allowed;
	scope.n_allowed = c.n_allowed;
	scope.rungs = rungs;
	scope.n_rungs = 4;
	assert_int_equal(gb_plan_validate(&scope, p, NULL, &err), GB_E_OK);
	scope.n_rungs = 1;	/* reservations only */
	assert_int_equal(gb_plan_validate(&scope, p, NULL, &err), GB_E_PLAN);
	assert_string_equal(err.text,
			    "step 3: capacity capacity-block is not on the request's ladder {reservation}");
	scope.n_rungs = 4;
	assert_int_equal(gb_plan_step_capacity(&p->steps[0], GB_CAPACITY_RESERVATION,
					       "cr-00000000000000099", &err), GB_E_OK);
	assert_int_equal(gb_plan_validate(&scope, p, NULL, &err), GB_E_PLAN);
	assert_string_equal(err.text,
			    "step 1: reservation cr-00000000000000099 is not one the ladder names");
	assert_int_equal(gb_plan_step_capacity(&p->steps[0], GB_CAPACITY_SPOT, "cr-0000000000000000a",
					       &err), GB_E_OK);
	assert_int_equal(gb_plan_validate(&scope, p, NULL, &err), GB_E_PLAN);
	assert_string_equal(err.text, "step 1: spot capacity has no target (got cr-0000000000000000a)");
	assert_int_equal(gb_plan_step_capacity(&p->steps[0], GB_CAPACITY_RESERVATION,
					       "cr-0000000000000000a", &err), GB_E_OK);

	/* JSON keeps the capacity and the target */
	assert_int_equal(gb_plan_to_json(p, &js, &err), GB_E_OK);
	assert_non_null(strstr(js, "\"capacity\":\"reservation\",\"batch\":2"));
	assert_non_null(strstr(js, "\"target\":\"cr-0000000000000000a\""));
	assert_int_equal(gb_plan_from_json(js, &back, &err), GB_E_OK);
	assert_int_equal(back->n_steps, p->n_steps);
	for (size_t i = 0; i < p->n_steps; i++) {
		assert_int_equal(back->steps[i].capacity, p->steps[i].capacity);
		assert_true(!gb_strcmp0(back->steps[i].target, p->steps[i].target));
	}
	gb_plan_free(back);
	back = NULL;
	assert_int_equal(gb_plan_from_json("{\"instance_type\":\"g5.xlarge\",\"total\":1,\"steps\":"
					   "[{\"region\":\"a\",\"az\":\"b\",\"subnet\":\"c\","
					   "\"capacity\":\"reserved\",\"batch\":1}]}", &back, &err),
			 GB_E_PARSE);
	assert_string_equal(err.text, "plan JSON: steps[0].capacity: \"reserved\" is not on-demand, spot, reservation or capacity-block");
	free(js);
	gb_plan_free(p);
	gb_plan_facts_clear(&f);
	gb_plan_candidates_clear(&c);
	drop_state(st);
}

/* Open reservations (summed per AZ), resource groups (their region only), launch parameters. */
static void test_ladder_open_groups(void **state)
{
	static char arn[] = "arn:aws:resource-groups:ap-south-1:123456789012:group/odcrs";
	static char *groups[] = { arn, NULL };
	struct gb_conf_rung rung = { .kind = GB_CAPACITY_RESERVATION, .resource_groups = groups,
				     .n_resource_groups = 1, .open = true };
	const struct gb_plan_resv resv[] = {
		{ "ap-south-1", "cr-00000000000000001", "g5.xlarge", "ap-south-1a",
		  GB_CAPACITY_RESERVATION, true, "active", 1, 1, 0, 0 },
		{ "ap-south-1", "cr-00000000000000002", "g5.xlarge", "ap-south-1a",
		  GB_CAPACITY_RESERVATION, true, "active", 2, 2, 0, 0 },
		/* targeted: not for open launches */
		{ "ap-south-1", "cr-00000000000000003", "g5.xlarge", "ap-south-1a",
		  GB_CAPACITY_RESERVATION, false, "active", 5, 5, 0, 0 },
		/* open but used up */
		{ "ap-northeast-1", "cr-00000000000000004", "g5.xlarge", "ap-northeast-1a",
		  GB_CAPACITY_RESERVATION, true, "active", 0, 3, 0, 0 },
	};
	struct gb_plan_ladder ladder = { &rung, 1, resv, GB_ARRAY_LEN(resv), true };
	const char *types[] = { "g5.xlarge" };
	const char *nodes[] = { "g5-1" };
	struct gb_orch_capacity cap = { 0 };
	struct gb_orch_launch l = { 0 };
	struct gb_candidates c;
	struct gb_plan_facts f;
	const struct gb_pool *q;
	size_t n_group = 0;
	gb_error_t err;

	(void)state;
	assert_int_equal(gb_plan_candidates(conf, "ap-southeast-1", GB_MODE_MULTI_REGION, &c, &err),
			 GB_E_OK);
	assert_int_equal(gb_plan_facts_build_ladder(conf, &c, types, 1, &ladder, 8, 1,
						    GB_LOCALITY_NONE, NULL, 1.8e9, &f, &err),
			 GB_E_OK);
	q = pool_rung(&f, "subnet-aps1a-2", GB_CAPACITY_RESERVATION, NULL);
	assert_int_equal(q->reserved, 3);	/* 1 + 2, the targeted one apart */
	assert_false(q->excluded);
	q = pool_rung(&f, "subnet-apne1a-1", GB_CAPACITY_RESERVATION, NULL);
	assert_true(q->excluded);
	assert_string_equal(q->why, "open reservations have none available");
	for (size_t i = 0; i < f.n_pools; i++) {
		if (!f.pools[i].target)
			continue;
		assert_string_equal(f.pools[i].target, arn);
		assert_string_equal(f.pools[i].region, "ap-south-1");
		assert_int_equal(f.pools[i].reserved, -1);	/* memory judges a group */
		n_group++;
	}
	assert_int_equal(n_group, 3);	/* every subnet of ap-south-1 */
	gb_plan_facts_clear(&f);
	gb_plan_candidates_clear(&c);

	/* what each rung sends */
	cap.kind = GB_CAPACITY_RESERVATION;
	assert_int_equal(gb_orch_launch_params(conf, NULL, "g5.xlarge", &cap, "ap-south-1",
					       "subnet-aps1a-1", "r1", nodes, 1, 1, NULL, NULL, &l, &err),
			 GB_E_OK);
	assert_string_equal(l.run.capacity_reservation_preference, "capacity-reservations-only");
	assert_null(l.run.capacity_reservation_id);
	assert_string_equal(l.run.tag_specs[0].tags[2].key, "gpuburst:capacity");
	assert_string_equal(l.run.tag_specs[0].tags[2].value, "reservation");
	cap.target = arn;
	assert_int_equal(gb_orch_launch_params(conf, NULL, "g5.xlarge", &cap, "ap-south-1",
					       "subnet-aps1a-1", "r1", nodes, 1, 1, NULL, NULL, &l, &err),
			 GB_E_OK);
	assert_string_equal(l.run.capacity_reservation_group_arn, arn);
	assert_null(l.run.capacity_reservation_preference);
	cap.target = "cr-00000000000000003";
	assert_int_equal(gb_orch_launch_params(conf, NULL, "g5.xlarge", &cap, "ap-south-1",
					       "subnet-aps1a-1", "r1", nodes, 1, 1, NULL, NULL, &l, &err),
			 GB_E_OK);
	assert_string_equal(l.run.capacity_reservation_id, "cr-00000000000000003");
	assert_false(l.run.capacity_block);
	cap.kind = GB_CAPACITY_BLOCK;
	assert_int_equal(gb_orch_launch_params(conf, NULL, "g5.xlarge", &cap, "ap-south-1",
					       "subnet-aps1a-1", "r1", nodes, 1, 1, NULL, NULL, &l, &err),
			 GB_E_OK);
	assert_true(l.run.capacity_block);
	assert_false(l.run.spot);
	assert_string_equal(l.run.tag_specs[0].tags[2].value, "capacity-block");
	cap = (struct gb_orch_capacity){ GB_CAPACITY_SPOT, NULL, "2.5" };
	assert_int_equal(gb_orch_launch_params(conf, NULL, "g5.xlarge", &cap, "ap-south-1",
					       "subnet-aps1a-1", "r1", nodes, 1, 1, NULL, NULL, &l, &err),
			 GB_E_OK);
	assert_true(l.run.spot);
	assert_string_equal(l.run.spot_max_price, "2.5");
	assert_null(l.run.capacity_reservation_id);
	assert_string_equal(l.run.tag_specs[0].tags[2].value, "spot");
	gb_orch_launch_clear(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_haversine),
		cmocka_unit_test(test_candidates_singapore),
		cmocka_unit_test(test_candidates_japan),
		cmocka_unit_test(test_candidates_refused),
		cmocka_unit_test(test_prefer_order),
		cmocka_unit_test(test_prefer_plan),
		cmocka_unit_test(test_validate_ok),
		cmocka_unit_test(test_validate_type),
		cmocka_unit_test(test_validate_total),
		cmocka_unit_test(test_validate_steps),
		cmocka_unit_test(test_validate_all_reasons),
		cmocka_unit_test(test_plan_json),
		cmocka_unit_test(test_memory_and_heuristic),
		cmocka_unit_test(test_bounds_and_quota),
		cmocka_unit_test(test_memory_of),
		cmocka_unit_test(test_quota_key_catalog),
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_ladder),
		cmocka_unit_test(test_ladder_open_groups),
		cmocka_unit_test(test_summary_bounded),
		cmocka_unit_test(test_reprobe_delay),
		cmocka_unit_test(test_token),
		cmocka_unit_test(test_user_data),
		cmocka_unit_test(test_user_data_munge_key),
		cmocka_unit_test(test_efa_layout),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
