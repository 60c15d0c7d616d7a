/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_route.c - job_submit/gpuburst decisions (plugins/.../route.c)
 *
 * The jobs are what slurmctld 22.05 hands the plugin (field forms checked
 * in the lab: tres_per_node "gres:gpu:a10g:1", tres_per_job "gres:gpu:2").
 * The configuration is tests/data/plugin/gpuburst.yaml, the one the lab
 * tests load into slurmctld: partition gpuburst = g5 (4 x g5.xlarge, 1
 * a10g), g5q (2 x g5.12xlarge, 4 a10g), g6 (2 x g6.xlarge, 1 l4);
 * partition tokyo = 2 x g6e.xlarge (1 l40s), single_region in
 * ap-northeast-1; approval threshold 2.
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

#include <cmocka.h>

#include "gb_conf.h"
#include "gb_str.h"
#include "route.h"

static const char *top_srcdir(void)
{
	const char *s = getenv("GB_TOP_SRCDIR");

	return s && *s ? s : GB_TOP_SRCDIR;
}

struct fixture {
	struct gb_conf *conf;
	gb_route_t *route;
};

static struct fixture *fixture_text(const char *yaml)
{
	struct fixture *f = calloc(1, sizeof(*f));
	gb_error_t err;

	assert_non_null(f);
	if (gb_conf_load_string("t.yaml", yaml, strlen(yaml), &f->conf, NULL, &err))
		fail_msg("%s", err.text);
	assert_int_equal(gb_route_create(f->conf, &f->route, &err), GB_E_OK);
	return f;
}

static int setup_lab(void **state)
{
	char path[4096];
	struct fixture *f = calloc(1, sizeof(*f));
	gb_error_t err;

	assert_non_null(f);
	unsetenv(GB_CONF_ENV_ENVIRONMENT);
	snprintf(path, sizeof(path), "%s/tests/data/plugin/gpuburst.yaml", top_srcdir());
	if (gb_conf_load(path, &f->conf, NULL, &err))
		fail_msg("%s", err.text);
	assert_int_equal(gb_route_create(f->conf, &f->route, &err), GB_E_OK);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	gb_route_destroy(f->route);
	gb_conf_destroy(f->conf);
	free(f);
	return 0;
}

/*****************************************************************************
 *  Parsers
 *****************************************************************************/

static void gpus_is(const char *tres, bool want, uint64_t count,
		    const char *model, bool complex)
{
	struct gb_route_gpus g;
	bool got = gb_route_parse_gpus(tres, &g);

	if (got != want || g.count != count || g.complex != complex ||
	    (model ? !g.model || g.model_len != strlen(model) ||
	     memcmp(g.model, model, g.model_len) : g.model != NULL))
		fail_msg("'%s': got %d count %llu model %.*s complex %d", tres ? tres : "NULL",
			 got, (unsigned long long)g.count, (int)g.model_len,
			 g.model ? g.model : "-", g.complex);
}

static void test_parse_gpus(void **state)
{
	(void)state;
	gpus_is(NULL, false, 0, NULL, false);
	gpus_is("", false, 0, NULL, false);
	gpus_is("gres:gpu:a10g:1", true, 1, "a10g", false);
	gpus_is("gres:gpu:2", true, 2, NULL, false);
	gpus_is("gres:gpu", true, 1, NULL, false);
	gpus_is("gres:gpu:a10g", true, 1, "a10g", false);
	gpus_is("gres/gpu:l4=3", true, 3, "l4", false);
	gpus_is("gres/gpu=4", true, 4, NULL, false);
	gpus_is("gpu:a10g:2", true, 2, "a10g", false);
	gpus_is("gres:gpu:2k", true, 2048, NULL, false);
	gpus_is("gres:mps:100", false, 0, NULL, false);
	gpus_is("gres:gpus:2", false, 0, NULL, false);
	gpus_is("gres:mps:100,gres:gpu:l4:1", true, 1, "l4", false);
	gpus_is("gres:gpu:0", false, 0, NULL, false);
	gpus_is("gres:gpu:a10g:0,gres:gpu:l4:2", true, 2, "l4", false);
	/* two GPU items, or one we cannot read: "complex" */
	gpus_is("gres:gpu:a10g:1,gres:gpu:l4:1", true, 2, NULL, true);
	gpus_is("gres:gpu:a10g:x", true, 0, NULL, true);
	gpus_is("gres:gpu:a:b:c,gres:gpu:a10g:1", true, 1, NULL, true);
	gpus_is("gres:gpu:x,gres:gpu:a10g:1", true, 2, NULL, true);
	gpus_is("gres:gpu:a10g:1,gres:gpu:", true, 1, NULL, true);
	gpus_is("gres:gpu:", true, 0, NULL, true);
	gpus_is("gres:gpu=", true, 0, NULL, true);
	gpus_is("gres:gpu::2", true, 0, NULL, true);
	gpus_is("gres:gpu:a10g:1:2", true, 0, NULL, true);
	gpus_is("gres:gpu:99999999999999999999999", true, 0, NULL, true);
	gpus_is("gres:gpu:2q", true, 0, NULL, true);
}

static void test_instance_type(void **state)
{
	static const char *const yes[] = {
		"g5.xlarge", "m7i.xlarge", "g5.48xlarge", "u-6tb1.metal",
		"m7i-flex.large", "c6i.metal-24xl", "t3.nano", "p4d.24xlarge",
	};
	static const char *const no[] = {
		"bigmem", "v1.2", "gpu.large", "G5.xlarge", "g5.", ".xlarge",
		"g5.huge", "g5.xlargex", "g5_1.xlarge", "5g.xlarge", "",
	};

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(yes); i++) {
		if (!gb_route_is_instance_type(yes[i], strlen(yes[i])))
			fail_msg("%s should look like an instance type", yes[i]);
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(no); i++) {
		if (gb_route_is_instance_type(no[i], strlen(no[i])))
			fail_msg("%s should not look like an instance type", no[i]);
	}
	/* only [len] bytes count */
	assert_true(gb_route_is_instance_type("g5.xlarge&bigmem", 9));
}

static void home_is(const char *text, const char *want)
{
	size_t len = 99;
	const char *h = gb_route_find_home(text, &len);

	if (!want) {
		assert_null(h);
		return;
	}
	assert_non_null(h);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(h, want, len);
}

static void test_find_home(void **state)
{
	(void)state;
	home_is(NULL, NULL);
	home_is("", NULL);
	home_is("gpuburst:home=ap-northeast-1", "ap-northeast-1");
	home_is("run 3 gpuburst:home=eu-west-1 again", "eu-west-1");
	home_is("a,gpuburst:home=ap-south-1;b", "ap-south-1");
	home_is("x\tgpuburst:home=ap-south-1\n", "ap-south-1");
	home_is("notgpuburst:home=x", NULL);
	home_is("notgpuburst:home=x gpuburst:home=y", "y");
	home_is("gpuburst:home=", "");
	home_is("gpuburst:home", NULL);
}

/*****************************************************************************
 *  Decisions
 *****************************************************************************/

struct want {
	enum gb_route_verdict verdict;
	enum gb_route_reason reason;
	const char *partition;		/* NULL: not changed */
	const char *features;		/* NULL: not changed */
	const char *admin_comment;	/* NULL: not changed */
	const char *msg;		/* NULL: none; else exact */
	uint64_t nodes;			/* 0: not checked */
};

static void buf_is(const char *what, const struct gb_buf *b, const char *want)
{
	if (!want && b->len)
		fail_msg("%s: got '%s', want it unchanged", what, gb_buf_str(b));
	if (want && strcmp(gb_buf_str(b), want))
		fail_msg("%s: got '%s', want '%s'", what, gb_buf_str(b), want);
}

static void check(const gb_route_t *r, const struct gb_route_job *job,
		  const struct want *w)
{
	struct gb_route_result res;
	enum gb_route_verdict v;

	gb_route_result_init(&res);
	v = gb_route_job(r, job, &res);
	if (v != w->verdict || res.verdict != v || res.reason != w->reason)
		fail_msg("verdict %d reason %d (msg '%s'), want %d/%d", v,
			 res.reason, gb_buf_str(&res.msg), w->verdict, w->reason);
	buf_is("partition", &res.partition, w->partition);
	buf_is("features", &res.features, w->features);
	buf_is("admin_comment", &res.admin_comment, w->admin_comment);
	buf_is("msg", &res.msg, w->msg);
	if (w->nodes)
		assert_int_equal(res.nodes, w->nodes);
	gb_route_result_free(&res);
}

static void test_untouched(void **state)
{
	const struct fixture *f = *state;
	const struct want none = { GB_ROUTE_UNTOUCHED, GB_ROUTE_OK };

	check(f->route, &(struct gb_route_job){ 0 }, &none);
	check(f->route, &(struct gb_route_job){ .min_nodes = 40 }, &none);
	/* names an on-premises partition only */
	check(f->route, &(struct gb_route_job){
		.partition = "cpu", .tres_per_node = "gres:gpu:a10g:1" }, &none);
	/* an on-premises feature is not an instance type */
	check(f->route, &(struct gb_route_job){ .features = "bigmem" }, &none);
	/* a comment without the key */
	check(f->route, &(struct gb_route_job){ .comment = "home=ap-south-1" }, &none);
}

static void test_routed(void **state)
{
	const struct fixture *f = *state;

	/* a model: its nodesets' partition, and their types as features */
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:a10g:1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst",
			      "g5.xlarge|g5.12xlarge", NULL, NULL, 1 });
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:l40s:1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "tokyo", "g6e.xlarge" });
	/* any GPU fits everywhere: both partitions, no constraint added */
	check(f->route, &(struct gb_route_job){ .tres_per_job = "gres:gpu:1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst,tokyo", NULL });
	/* four per node: only g5.12xlarge */
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:a10g:4" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst", "g5.12xlarge" });
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:4" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst", "g5.12xlarge" });
	/* 2 per task x 2 tasks per node */
	check(f->route, &(struct gb_route_job){ .tres_per_task = "gres:gpu:2",
						.num_tasks = 4, .ntasks_per_node = 2 },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst", "g5.12xlarge" });
	/* the user's constraint is kept; the partition follows it */
	check(f->route, &(struct gb_route_job){ .features = "g6.xlarge",
						.tres_per_node = "gres:gpu:1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst", NULL });
	check(f->route, &(struct gb_route_job){ .features = "[g6e.xlarge*2|g6.xlarge]" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst,tokyo", NULL });
	/* a named burst partition is kept; the constraint narrows within it */
	check(f->route, &(struct gb_route_job){ .partition = "gpuburst",
						.tres_per_node = "gres:gpu:a10g:1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, NULL,
			      "g5.xlarge|g5.12xlarge" });
	/* a burst partition without GPUs: ours, nothing to change */
	check(f->route, &(struct gb_route_job){ .partition = "gpuburst" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK });
	/* several partitions, one of them on premises: no constraint added */
	check(f->route, &(struct gb_route_job){ .partition = "cpu,gpuburst",
						.tres_per_node = "gres:gpu:a10g:1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK });
	/* GPU items we cannot reason about still route, without a model */
	check(f->route, &(struct gb_route_job){
		.tres_per_node = "gres:gpu:a10g:1,gres:gpu:l4:1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst,tokyo", NULL });
}

static void test_rejected(void **state)
{
	const struct fixture *f = *state;

	check(f->route, &(struct gb_route_job){ .features = "m7i.xlarge" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_TYPE, NULL, NULL, NULL,
			      "gpuburst: instance type m7i.xlarge is not allowed: only GPU families g4dn, g5, g5g, g6, g6e" });
	check(f->route, &(struct gb_route_job){ .partition = "gpuburst",
						.features = "bigmem&m7i.xlarge*2" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_TYPE, NULL, NULL, NULL,
			      "gpuburst: instance type m7i.xlarge is not allowed: only GPU families g4dn, g5, g5g, g6, g6e" });
	check(f->route, &(struct gb_route_job){ .features = "g5.huge" },
	      &(struct want){ GB_ROUTE_UNTOUCHED, GB_ROUTE_OK });
	check(f->route, &(struct gb_route_job){ .features = "g5.64xlarge" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_TYPE, NULL, NULL, NULL,
			      "gpuburst: instance type g5.64xlarge is not a known GPU instance type" });
	check(f->route, &(struct gb_route_job){ .features = "g4dn.xlarge" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_TYPE, NULL, NULL, NULL,
			      "gpuburst: no burst nodeset provides the instance type asked for: there are g5.xlarge (gpuburst), g5.12xlarge (gpuburst), g6.xlarge (gpuburst), g6e.xlarge (tokyo)" });
	check(f->route, &(struct gb_route_job){ .partition = "tokyo", .features = "g5.xlarge" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_TYPE, NULL, NULL, NULL,
			      "gpuburst: no nodeset of the partitions asked for provides the instance type asked for: they have g6e.xlarge (tokyo)" });
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:h100:1" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_MODEL, NULL, NULL, NULL,
			      "gpuburst: no burst nodeset has GPU model h100: there are a10g (g5.xlarge), a10g (g5.12xlarge), l4 (g6.xlarge), l40s (g6e.xlarge)" });
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:a10g:8" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_TOO_MANY_GPUS, NULL, NULL, NULL,
			      "gpuburst: this job asks for 8 a10g GPUs per node, more than any burst nodeset has: at most 4 (g5.12xlarge)" });
	check(f->route, &(struct gb_route_job){ .tres_per_job = "gres:gpu:100" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_TOO_MANY_GPUS, NULL, NULL, NULL,
			      "gpuburst: this job asks for 100 GPUs, more than any burst nodeset can give: at most 14 in partition gpuburst" });
	/* 7 nodes with one a10g each: 12 a10g GPUs but only 6 such nodes */
	check(f->route, &(struct gb_route_job){ .partition = "gpuburst", .min_nodes = 7,
						.tres_per_node = "gres:gpu:a10g:1" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_TOO_MANY_NODES, NULL, NULL, NULL,
			      "gpuburst: this job asks for 7 nodes, more than the burst nodesets have: at most 6 in partition gpuburst" });
	/* ... unless it may also run on premises */
	check(f->route, &(struct gb_route_job){ .partition = "gpuburst,cpu", .min_nodes = 7,
						.tres_per_node = "gres:gpu:a10g:1" },
	      &(struct want){ GB_ROUTE_UNTOUCHED, GB_ROUTE_OK });
}

static void test_home(void **state)
{
	const struct fixture *f = *state;

	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:a10g:1",
						.comment = "gpuburst:home=ap-northeast-1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst",
			      "g5.xlarge|g5.12xlarge", "gpuburst:home=ap-northeast-1" });
	/* the key is checked and recorded on any job; other text is kept */
	check(f->route, &(struct gb_route_job){ .comment = "x gpuburst:home=ap-southeast-1",
						.admin_comment = "keep me gpuburst:home=old  tail " },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, NULL, NULL,
			      "keep me  tail gpuburst:home=ap-southeast-1" });
	check(f->route, &(struct gb_route_job){ .comment = "gpuburst:home=ap-south-1",
						.admin_comment = "audit 7" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_HOME, NULL, NULL, NULL,
			      "gpuburst: home region ap-south-1 is not in any fallback group: allowed home regions are ap-southeast-1, ap-northeast-1, ap-northeast-3" });
	check(f->route, &(struct gb_route_job){ .comment = "gpuburst:home=eu-west-1",
						.tres_per_node = "gres:gpu:1" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_HOME, NULL, NULL, NULL,
			      "gpuburst: home region eu-west-1 is not in any fallback group: allowed home regions are ap-southeast-1, ap-northeast-1, ap-northeast-3" });
	check(f->route, &(struct gb_route_job){ .comment = "gpuburst:home= x" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_HOME, NULL, NULL, NULL,
			      "gpuburst: home region (empty) is not in any fallback group: allowed home regions are ap-southeast-1, ap-northeast-1, ap-northeast-3" });
	/* a long region is cut for the message */
	check(f->route, &(struct gb_route_job){ .comment = "gpuburst:home="
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_HOME, NULL, NULL, NULL,
			      "gpuburst: home region aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa... is not in any fallback group: allowed home regions are ap-southeast-1, ap-northeast-1, ap-northeast-3" });
	check(f->route, &(struct gb_route_job){ .comment = "gpuburst:home=\x01\x02" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_HOME, NULL, NULL, NULL,
			      "gpuburst: home region ?? is not in any fallback group: allowed home regions are ap-southeast-1, ap-northeast-1, ap-northeast-3" });
	/* tokyo launches in ap-northeast-1 only */
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:l40s:1",
						.comment = "gpuburst:home=ap-northeast-3" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_NO_NODESET, NULL, NULL, NULL,
			      "gpuburst: no burst nodeset can serve this home region: the matching ones launch only in their own region: tokyo in ap-northeast-1" });
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:l40s:1",
						.comment = "gpuburst:home=ap-northeast-1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "tokyo", "g6e.xlarge",
			      "gpuburst:home=ap-northeast-1" });
	/* any GPU with a home: tokyo only serves its own home */
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:1",
						.comment = "gpuburst:home=ap-southeast-1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst",
			      "g5.xlarge|g5.12xlarge|g6.xlarge", "gpuburst:home=ap-southeast-1" });
}

static void test_approval(void **state)
{
	const struct fixture *f = *state;

	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:a10g:1",
						.min_nodes = 2, .max_nodes = 2 },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst",
			      "g5.xlarge|g5.12xlarge", NULL, NULL, 2 });
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:a10g:1",
						.min_nodes = 3, .max_nodes = 3 },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst",
			      "g5.xlarge|g5.12xlarge", "gpuburst:approval=pending/3",
			      "gpuburst: this job needs 3 cloud nodes, more than the approval threshold of 2 (dev): it is held until an administrator approves it (gpuburstctl approvals; gpuburstctl why JOB tells its story)", 3 });
	/* 12 GPUs on 4-GPU nodes need 3 of them at least */
	check(f->route, &(struct gb_route_job){ .tres_per_job = "gres:gpu:a10g:12" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst",
			      "g5.xlarge|g5.12xlarge", "gpuburst:approval=pending/3",
			      "gpuburst: this job needs 3 cloud nodes, more than the approval threshold of 2 (dev): it is held until an administrator approves it (gpuburstctl approvals; gpuburstctl why JOB tells its story)", 3 });
	/* --gpus=8 -N 2: 4 per node */
	check(f->route, &(struct gb_route_job){ .tres_per_job = "gres:gpu:8",
						.min_nodes = 2, .max_nodes = 2 },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst",
			      "g5.12xlarge", NULL, NULL, 2 });
	/* an old token (a resubmitted job's) is replaced, the rest kept */
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:a10g:1",
						.min_nodes = 4, .max_nodes = 4,
						.admin_comment = "keep gpuburst:approval=approved/0123456789abcdef me" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst",
			      "g5.xlarge|g5.12xlarge", "keep me gpuburst:approval=pending/4",
			      "gpuburst: this job needs 4 cloud nodes, more than the approval threshold of 2 (dev): it is held until an administrator approves it (gpuburstctl approvals; gpuburstctl why JOB tells its story)", 4 });
}

static bool held(const gb_route_t *r, const struct gb_route_job *job)
{
	struct gb_route_result res;
	bool h;

	gb_route_result_init(&res);
	assert_int_equal(gb_route_job(r, job, &res), GB_ROUTE_ACCEPT);
	h = res.hold;
	assert_true(res.needs_approval || !h);
	gb_route_result_free(&res);
	return h;
}

/* policy.approve_at_submit: false: the notice of the resume-time gate. */
static void test_approval_at_resume(void **state)
{
	struct fixture *f = *state;
	const struct gb_route_job three = { .tres_per_node = "gres:gpu:a10g:1",
					    .min_nodes = 3, .max_nodes = 3 };
	const struct gb_route_job two = { .tres_per_node = "gres:gpu:a10g:1",
					  .min_nodes = 2, .max_nodes = 2 };
	gb_error_t err;

	assert_true(held(f->route, &three));
	assert_false(held(f->route, &two));
	f->conf->policy.approve_at_submit = false;
	gb_route_destroy(f->route);
	assert_int_equal(gb_route_create(f->conf, &f->route, &err), GB_E_OK);
	assert_false(held(f->route, &three));
	check(f->route, &three,
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "gpuburst",
			      "g5.xlarge|g5.12xlarge", NULL,
			      "gpuburst: this job needs 3 cloud nodes, more than the approval threshold of 2 (dev): an administrator must approve it (gpuburstctl approvals, then gpuburstctl approve ID) before its nodes start", 3 });
	/* updates are never held */
	check(f->route, &(struct gb_route_job){ .update = true, .min_nodes = 3,
						.tres_per_node = "gres:gpu:a10g:1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK });
}

static void test_update(void **state)
{
	const struct fixture *f = *state;

	check(f->route, &(struct gb_route_job){ .update = true },
	      &(struct want){ GB_ROUTE_UNTOUCHED, GB_ROUTE_OK });
	/* accepted updates change nothing but the admin comment */
	check(f->route, &(struct gb_route_job){ .update = true,
						.tres_per_node = "gres:gpu:a10g:1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK });
	check(f->route, &(struct gb_route_job){ .update = true, .min_nodes = 3,
						.tres_per_node = "gres:gpu:a10g:1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK });
	check(f->route, &(struct gb_route_job){ .update = true,
						.features = "m7i.xlarge" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_TYPE, NULL, NULL, NULL,
			      "gpuburst: instance type m7i.xlarge is not allowed: only GPU families g4dn, g5, g5g, g6, g6e" });
	check(f->route, &(struct gb_route_job){ .update = true,
						.tres_per_node = "gres:gpu:a10g:64" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_TOO_MANY_GPUS, NULL, NULL, NULL,
			      "gpuburst: this job asks for 64 a10g GPUs per node, more than any burst nodeset has: at most 4 (g5.12xlarge)" });
	check(f->route, &(struct gb_route_job){ .update = true,
						.comment = "gpuburst:home=ap-northeast-3" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, NULL, NULL,
			      "gpuburst:home=ap-northeast-3" });
	check(f->route, &(struct gb_route_job){ .update = true,
						.comment = "gpuburst:home=us-east-1" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_HOME, NULL, NULL, NULL,
			      "gpuburst: home region us-east-1 is not in any fallback group: allowed home regions are ap-southeast-1, ap-northeast-1, ap-northeast-3" });
}

/* With route_gpu_jobs off only jobs naming a burst partition are ours. */
static void test_routing_off(void **state)
{
	struct fixture *f = fixture_text(
		"cluster_name: c\n"
		"regions: [{name: ap-south-1}]\n"
		"fallback_groups: {g: {consumer_regions: [ap-southeast-1],"
		" fallback_regions: [ap-south-1]}}\n"
		"nodesets:\n"
		"  - {name: a, nodes: 'a-[1-4]', instance_type: g5.xlarge,"
		" home_region: ap-southeast-1}\n"
		"  - {name: b, nodes: 'b-[1-4]', instance_type: g6.xlarge,"
		" home_region: ap-southeast-1, partition: other}\n"
		"policy: {allowed_families: [g5, g6]}\n"
		"job_submit: {route_gpu_jobs: false}\n");

	(void)state;
	assert_string_equal(gb_route_partitions(f->route), "gpuburst, other");
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:a10g:1" },
	      &(struct want){ GB_ROUTE_UNTOUCHED, GB_ROUTE_OK });
	check(f->route, &(struct gb_route_job){ .features = "m7i.xlarge" },
	      &(struct want){ GB_ROUTE_UNTOUCHED, GB_ROUTE_OK });
	check(f->route, &(struct gb_route_job){ .partition = "other",
						.features = "g4dn.xlarge" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_TYPE, NULL, NULL, NULL,
			      "gpuburst: instance type g4dn.xlarge is not allowed: only GPU families g5, g6" });
	check(f->route, &(struct gb_route_job){ .partition = "gpuburst,other",
						.tres_per_node = "gres:gpu:l4:1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, NULL, "g6.xlarge" });
	teardown((void **)&f);
}

/* No nodesets: nothing is ours, but a home key is still checked. */
static void test_no_nodesets(void **state)
{
	struct fixture *f = fixture_text("cluster_name: c\n");

	(void)state;
	assert_string_equal(gb_route_partitions(f->route), "");
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:1",
						.features = "m7i.xlarge" },
	      &(struct want){ GB_ROUTE_UNTOUCHED, GB_ROUTE_OK });
	check(f->route, &(struct gb_route_job){ .comment = "gpuburst:home=ap-south-1" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_HOME, NULL, NULL, NULL,
			      "gpuburst: home region ap-south-1 is not allowed: no fallback group is configured" });
	teardown((void **)&f);
}

/* A long list of allowed home regions is not cut. */
static void test_long_message(void **state)
{
	struct gb_buf y = GB_BUF_INIT;
	struct gb_route_result res;
	struct fixture *f;
	const char *msg;

	(void)state;
	gb_buf_puts(&y, "cluster_name: c\n"
		    "fallback_groups: {g: {fallback_regions: [ap-south-1], consumer_regions: [");
	for (int i = 0; i < 80; i++)
		gb_buf_printf(&y, "%sonprem-%02d", i ? ", " : "", i);
	gb_buf_puts(&y, "]}}\nregions:\n  - name: ap-south-1\n");
	for (int i = 0; i < 80; i++)
		gb_buf_printf(&y, "  - {name: onprem-%02d, lat: 1, lon: 2}\n", i);
	f = fixture_text(gb_buf_str(&y));
	gb_route_result_init(&res);
	assert_int_equal(gb_route_job(f->route, &(struct gb_route_job){
		.comment = "gpuburst:home=mars-1" }, &res), GB_ROUTE_REJECT);
	assert_int_equal(res.reason, GB_ROUTE_BAD_HOME);
	msg = gb_buf_str(&res.msg);
	assert_true(res.msg.len > 800);
	assert_non_null(strstr(msg, "allowed home regions are onprem-00, onprem-01"));
	assert_string_equal(msg + res.msg.len - 11, ", onprem-79");
	gb_route_result_free(&res);
	teardown((void **)&f);
	gb_buf_free(&y);
}

/*
 * A nodeset of several types: any of them in a constraint finds it, a
 * routed job may run on any of them, and the GPUs per node Slurm is told
 * are the lowest count.
 */
static void test_several_types(void **state)
{
	struct fixture *f;

	(void)state;
	f = fixture_text("cluster_name: c\nregions: [{name: ap-south-1}]\n"
			 "fallback_groups: {g: {consumer_regions: [ap-southeast-1],"
			 " fallback_regions: [ap-south-1]}}\n"
			 "policy: {allowed_families: [p5e, p5en, g6, g6f]}\n"
			 "nodesets:\n"
			 "  - {name: h, nodes: 'h-[1-2]', instance_types: [p5en.48xlarge, p5e.48xlarge],"
			 " home_region: ap-southeast-1, partition: train}\n"
			 "  - {name: l, nodes: 'l-[1-4]', instance_types: [g6.12xlarge, g6.xlarge],"
			 " home_region: ap-southeast-1}\n");
	check(f->route, &(struct gb_route_job){ .features = "p5e.48xlarge" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "train", NULL });
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:h200:8" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "train",
			      "p5en.48xlarge|p5e.48xlarge" });
	/* g6.12xlarge has 4 L4s, but the nodeset promises the lowest: 1 */
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:l4:4" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_TOO_MANY_GPUS, NULL, NULL, NULL,
			      "gpuburst: this job asks for 4 l4 GPUs per node, more than any burst nodeset has: at most 1 (g6.12xlarge)" });
	check(f->route, &(struct gb_route_job){ .features = "g6f.large" },
	      &(struct want){ GB_ROUTE_REJECT, GB_ROUTE_BAD_TYPE, NULL, NULL, NULL,
			      "gpuburst: instance type g6f.large has a fractional GPU (1/8 of an L4): Slurm's gres counts whole GPUs; gpuburst does not launch it" });
	teardown((void **)&f);
}

/* More nodesets than the stack scratch holds. */
static void test_many_nodesets(void **state)
{
	struct gb_buf y = GB_BUF_INIT;
	struct fixture *f;
	char want[32];

	(void)state;
	gb_buf_puts(&y, "cluster_name: c\nregions: [{name: ap-south-1}]\n"
		    "fallback_groups: {g: {consumer_regions: [ap-southeast-1],"
		    " fallback_regions: [ap-south-1]}}\nnodesets:\n");
	for (int i = 0; i < 100; i++)
		gb_buf_printf(&y, "  - {name: n%d, nodes: 'n%d-[1-2]', instance_type: %s,"
			      " home_region: ap-southeast-1, partition: p%d}\n",
			      i, i, i == 99 ? "g6e.xlarge" : "g5.xlarge", i);
	f = fixture_text(gb_buf_str(&y));
	check(f->route, &(struct gb_route_job){ .tres_per_node = "gres:gpu:l40s:1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK, "p99", "g6e.xlarge" });
	/* a refusal lists all 100 candidates, however long */
	{
		struct gb_route_job job = { .tres_per_node = "gres:gpu:h100:1" };
		const char *tail = "a10g (g5.xlarge), l40s (g6e.xlarge)";
		struct gb_route_result res;

		gb_route_result_init(&res);
		assert_int_equal(gb_route_job(f->route, &job, &res), GB_ROUTE_REJECT);
		assert_int_equal(res.reason, GB_ROUTE_BAD_MODEL);
		assert_true(res.msg.len > 1500);	/* longer than reject()'s line */
		assert_non_null(strstr(gb_buf_str(&res.msg),
				       "there are a10g (g5.xlarge), a10g (g5.xlarge)"));
		assert_string_equal(gb_buf_str(&res.msg) + res.msg.len - strlen(tail),
				    tail);
		gb_route_result_free(&res);
	}
	snprintf(want, sizeof(want), "p%d", 42);
	check(f->route, &(struct gb_route_job){ .partition = want,
						.tres_per_node = "gres:gpu:a10g:1" },
	      &(struct want){ GB_ROUTE_ACCEPT, GB_ROUTE_OK });
	teardown((void **)&f);
	gb_buf_free(&y);
}

/*****************************************************************************
 *  Cost and budgets
 *****************************************************************************/

struct budget_fx {
	char dir[64];
	struct fixture *f;
	struct gb_spend_summary spent;
};

static void budget_fx_open(struct budget_fx *b, double now)
{
	char path[128], yaml[2048];
	FILE *fp;

	snprintf(b->dir, sizeof(b->dir), "/tmp/gb-route-XXXXXX");
	assert_non_null(mkdtemp(b->dir));
	snprintf(path, sizeof(path), "%s/prices", b->dir);
	assert_non_null(fp = fopen(path, "w"));
	fputs("gpuburst-prices 1\nrefreshed 2026-12-01T00:00:00Z\nsource test\n"
	      "ap-south-1 g5.xlarge on-demand 2\nap-northeast-1 g5.xlarge on-demand 3\n"
	      "ap-south-1 g5.12xlarge on-demand 8\n", fp);
	assert_int_equal(fclose(fp), 0);
	snprintf(yaml, sizeof(yaml),
		 "cluster_name: t\nenvironment: dev\nstate_dir: %s\n"
		 "regions:\n"
		 "  - {name: ap-south-1, ami: ami-00000000000000001, azs: [{name: ap-south-1a, subnets: [subnet-1]}]}\n"
		 "  - {name: ap-northeast-1, ami: ami-00000000000000002, azs: [{name: ap-northeast-1a, subnets: [subnet-2]}]}\n"
		 "fallback_groups:\n  sea: {consumer_regions: [ap-southeast-1], fallback_regions: [ap-south-1, ap-northeast-1]}\n"
		 "nodesets:\n  - {name: g5, nodes: \"g5-[1-8]\", instance_type: g5.xlarge, home_region: ap-southeast-1}\n"
		 "policy:\n  approval_thresholds: {dev: 10}\n  budgets:\n"
		 "    root: {user: root, monthly: 10}\n"
		 "    big: {partition: gpuburst, per_job: 20, over: refuse}\n", b->dir);
	b->f = fixture_text(yaml);
	/* root spent 5.00 this month */
	gb_spend_month(now, b->spent.month, sizeof(b->spent.month));
	b->spent.v = calloc(1, sizeof(*b->spent.v));
	assert_non_null(b->spent.v);
	b->spent.v[0] = (struct gb_spend_entry){ GB_BUDGET_USER, strdup("root"), 5 };
	b->spent.n = 1;
}

static void budget_fx_close(struct budget_fx *b)
{
	char path[128];

	gb_spend_clear(&b->spent);
	gb_route_destroy(b->f->route);
	gb_conf_destroy(b->f->conf);
	free(b->f);
	snprintf(path, sizeof(path), "%s/prices", b->dir);
	unlink(path);
	rmdir(b->dir);
}

static void test_budgets(void **state)
{
	const double now = 1797336000.0;	/* 2026-12-15T12:00:00Z */
	struct budget_fx b;
	struct gb_route_result res;
	struct gb_route_job job = { .tres_per_node = "gres:gpu:a10g:1", .min_nodes = 1,
				    .time_limit = 60, .user_id = 0, .now = now };

	(void)state;
	budget_fx_open(&b, now);
	job.spent = &b.spent;
	gb_route_result_init(&res);
	/* 1 node x 1 h: 2.00 in ap-south-1 (the first fallback), 3.00 at worst */
	assert_int_equal(gb_route_job(b.f->route, &job, &res), GB_ROUTE_ACCEPT);
	assert_false(res.hold);
	assert_true(res.estimate == 2 && res.worst == 3);
	assert_string_equal(gb_buf_str(&res.admin_comment), "gpuburst:cost=2.00/3.00");
	/* 3 h: 5.00 spent + 6.00 > root's 10: held, with the budget named */
	job.time_limit = 180;
	assert_int_equal(gb_route_job(b.f->route, &job, &res), GB_ROUTE_ACCEPT);
	assert_true(res.hold && res.needs_approval);
	assert_string_equal(res.budget->name, "root");
	assert_string_equal(gb_buf_str(&res.admin_comment),
			    "gpuburst:cost=6.00/9.00 gpuburst:approval=pending/1 gpuburst:budget=root");
	assert_string_equal(gb_buf_str(&res.msg),
			    "gpuburst: budget 'root' (user root): 5.00 of 10.00 USD spent in 2026-12, this job ~6.00 USD: it is held until an administrator approves it (gpuburstctl approvals; gpuburstctl why JOB tells its story)");
	/* next month nothing is spent yet */
	job.now = now + 40 * 86400.0;
	assert_int_equal(gb_route_job(b.f->route, &job, &res), GB_ROUTE_ACCEPT);
	assert_false(res.hold);
	job.now = now;
	/* someone else: 4 nodes x 3 h = 24.00 > the partition's 20 a job: refused */
	job.user_id = 4242;
	job.min_nodes = 4;
	assert_int_equal(gb_route_job(b.f->route, &job, &res), GB_ROUTE_REJECT);
	assert_int_equal(res.reason, GB_ROUTE_BUDGET);
	assert_string_equal(gb_buf_str(&res.msg),
			    "gpuburst: budget 'big' (partition gpuburst): this job ~24.00 USD is over the 20.00 USD a job may cost: this budget refuses such jobs");
	/* no time limit: the cost is not known, so the budget cannot pass it */
	job.time_limit = 0;
	job.min_nodes = 1;
	assert_int_equal(gb_route_job(b.f->route, &job, &res), GB_ROUTE_REJECT);
	assert_string_equal(gb_buf_str(&res.msg),
			    "gpuburst: budget 'big' (partition gpuburst): this job's cost cannot be estimated: it has no time limit (--time): this budget refuses such jobs");
	/* a job for another partition than the budget's: only the estimate */
	gb_route_result_free(&res);
	budget_fx_close(&b);
}

/* Without budgets or prices nothing changes but the cost token, when known. */
static void test_cost_token(void **state)
{
	const struct fixture *f = *state;
	struct gb_route_result res;

	gb_route_result_init(&res);
	assert_int_equal(gb_route_job(f->route, &(struct gb_route_job){
					     .tres_per_node = "gres:gpu:a10g:1", .time_limit = 60 },
				     &res), GB_ROUTE_ACCEPT);
	assert_true(res.estimate < 0);	/* the lab has no price file */
	assert_int_equal(res.admin_comment.len, 0);
	gb_route_result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_gpus),
		cmocka_unit_test(test_instance_type),
		cmocka_unit_test(test_find_home),
		cmocka_unit_test(test_several_types),
		cmocka_unit_test_setup_teardown(test_untouched, setup_lab, teardown),
		cmocka_unit_test_setup_teardown(test_routed, setup_lab, teardown),
		cmocka_unit_test_setup_teardown(test_rejected, setup_lab, teardown),
		cmocka_unit_test_setup_teardown(test_home, setup_lab, teardown),
		cmocka_unit_test_setup_teardown(test_approval, setup_lab, teardown),
		cmocka_unit_test_setup_teardown(test_approval_at_resume, setup_lab, teardown),
		cmocka_unit_test_setup_teardown(test_update, setup_lab, teardown),
		cmocka_unit_test(test_budgets),
		cmocka_unit_test_setup_teardown(test_cost_token, setup_lab, teardown),
		cmocka_unit_test(test_routing_off),
		cmocka_unit_test(test_no_nodesets),
		cmocka_unit_test(test_many_nodesets),
		cmocka_unit_test(test_long_message),
	};

	return cmocka_run_group_tests_name("route", tests, NULL, NULL);
}
