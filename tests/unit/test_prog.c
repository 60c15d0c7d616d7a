/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_prog.c - libenqueue's pure parts: nodes -> nodesets -> requests,
 * the approval policy's place in the enqueue, the one-transaction enqueue
 *
 * Slurm and the cloud are not needed: the Slurm-facing parts run end to
 * end in tests/e2e against the lab.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gb_conf.h"
#include "gb_prog.h"
#include "gb_resume_file.h"
#include "gb_slurm.h"
#include "gb_str.h"
#include "gb_util.h"
#include "testutil.h"

static const char conf_yaml[] =
	TU_CONF_HEAD
	"    azs: [{name: ap-south-1a, subnets: [subnet-1]}]\n"
	"fallback_groups:\n"
	"  g: {consumer_regions: [ap-southeast-1], fallback_regions: [ap-south-1]}\n"
	"nodesets:\n"
	"  - {name: g5, nodes: 'g5-[1-100]', instance_type: g5.xlarge, home_region: ap-southeast-1}\n"
	"  - {name: g6, nodes: 'g6-[1-10],x6', instance_type: g6.xlarge, home_region: ap-southeast-1}\n"
	"policy: {max_request_nodes: 3}\n";

static struct gb_conf *load_conf(void)
{
	struct gb_conf *conf = NULL;
	gb_error_t e;

	if (gb_conf_load_string("t.yaml", conf_yaml, strlen(conf_yaml), &conf, NULL, &e))
		fail_msg("%s", e.text);
	return conf;
}

static char *hl(const struct gb_strv *v)
{
	char *s = NULL;

	assert_int_equal(gb_slurm_hostlist_compress(v->v, v->n, &s, NULL), 0);
	return s;
}

/* "job nodeset nodes" per group, then "unknown nodes". */
static char *describe(const struct gb_prog_groups *g)
{
	struct gb_buf b = GB_BUF_INIT;

	for (size_t i = 0; i < g->n; i++) {
		char *s = hl(&g->v[i].nodes);

		gb_buf_printf(&b, "%lld %s %s|", (long long)g->v[i].job_id, g->v[i].ns->name, s);
		free(s);
	}
	if (g->unknown.n) {
		char *s = hl(&g->unknown);

		gb_buf_printf(&b, "unknown %s", s);
		free(s);
	}
	return gb_buf_steal(&b);
}

static char *group(const struct gb_conf *conf, const char *json, const char *argv_nodes)
{
	struct gb_resume_file *rf = NULL;
	struct gb_strv nodes = { 0 };
	struct gb_resume_split sp;
	struct gb_prog_groups g;
	gb_error_t e;
	char *out;

	if (json)
		assert_int_equal(gb_resume_file_parse(json, strlen(json), &rf, &e), 0);
	assert_int_equal(gb_slurm_hostlist_expand(argv_nodes, 100000, &nodes, &e), 0);
	assert_int_equal(gb_resume_split(rf, &nodes, &sp, &e), 0);
	assert_int_equal(gb_prog_group_nodes(conf, &sp, &g, &e), 0);
	out = describe(&g);
	gb_prog_groups_free(&g);
	gb_resume_split_free(&sp);
	gb_strv_free(&nodes);
	gb_resume_file_free(rf);
	return out;
}

static void expect_groups(const struct gb_conf *conf, const char *json, const char *nodes,
			  const char *want)
{
	char *got = group(conf, json, nodes);

	if (strcmp(got, want) != 0)
		fail_msg("nodes %s:\n want %s\n got  %s", nodes, want, got);
	free(got);
}

static void test_group_nodes(void **state)
{
	struct gb_conf *conf = load_conf();

	(void)state;
	/* one job, one nodeset */
	expect_groups(conf, "{\"all_nodes\":\"g5-[1-2]\",\"jobs\":[{\"job_id\":7,\"nodes\":\"g5-[1-2]\"}]}",
		      "g5-[1-2]", "7 g5 g5-[1-2]|");
	/* one job across two nodesets: one request per (job, nodeset) */
	expect_groups(conf, "{\"all_nodes\":\"g5-1,g6-1,x6\",\"jobs\":[{\"job_id\":7,\"nodes\":\"g5-1,g6-1,x6\"}]}",
		      "g5-1,g6-1,x6", "7 g5 g5-1|7 g6 g6-1,x6|");
	/* two jobs plus jobless nodes (a manual power_up) */
	expect_groups(conf, "{\"all_nodes_resume\":\"g5-[1-4]\",\"jobs\":[{\"job_id\":8,\"nodes_resume\":\"g5-[3-4]\"},{\"job_id\":9,\"nodes_resume\":\"g5-1\"}]}",
		      "g5-[1-4],g6-2", "8 g5 g5-[3-4]|9 g5 g5-1|0 g5 g5-2|0 g6 g6-2|");
	/* no file: everything jobless, per nodeset, max_request_nodes 3 splits */
	expect_groups(conf, NULL, "g5-[1-7],g6-[1-2]", "0 g5 g5-[1-3]|0 g5 g5-[4-6]|0 g5 g5-7|0 g6 g6-[1-2]|");
	/* interleaved nodesets keep one open group each */
	expect_groups(conf, NULL, "g5-1,g6-1,g5-2,g6-2", "0 g5 g5-[1-2]|0 g6 g6-[1-2]|");
	/* unknown nodes are reported, not grouped */
	expect_groups(conf, NULL, "g5-1,cpu-[1-2],g5-101", "0 g5 g5-1|unknown cpu-[1-2],g5-101");
	expect_groups(conf, NULL, "cpu-1", "unknown cpu-1");
	gb_conf_destroy(conf);
}

struct seen {
	int n;
	char nodes[8][64];
	int64_t job[8];
	enum gb_request_state st[8];
};

static int collect(const struct gb_request *r, void *arg)
{
	struct seen *s = arg;

	if (s->n < 8) {
		snprintf(s->nodes[s->n], sizeof(s->nodes[0]), "%s:%s:%s", gb_request_kind_name(r->kind),
			 r->nodeset ? r->nodeset : "-", r->nodes);
		s->job[s->n] = r->job_id;
		s->st[s->n] = r->state;
	}
	s->n++;
	return 0;
}

static void test_enqueue(void **state)
{
	struct gb_conf *conf = load_conf();
	struct gb_request_filter f = GB_REQUEST_FILTER_ANY;
	struct gb_strv nodes = { 0 }, ids = { 0 };
	struct gb_resume_split sp;
	struct gb_prog_groups g;
	struct seen s = { 0 };
	char dir[] = "/tmp/test_prog.XXXXXX", path[128], id[GB_REQUEST_ID_LEN + 1];
	const char *json = "{\"all_nodes\":\"g5-[1-2],g6-1\",\"jobs\":[{\"job_id\":42,\"nodes\":\"g5-[1-2],g6-1\"}]}";
	struct gb_resume_file *rf = NULL;
	gb_state_t *st = NULL;
	gb_error_t e;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.db", dir);
	assert_int_equal(gb_state_open(path, 0, 5000, &st, &e), 0);
	assert_int_equal(gb_resume_file_parse(json, strlen(json), &rf, &e), 0);
	assert_int_equal(gb_slurm_hostlist_expand(rf->all_nodes, 100, &nodes, &e), 0);
	assert_int_equal(gb_resume_split(rf, &nodes, &sp, &e), 0);
	assert_int_equal(gb_prog_group_nodes(conf, &sp, &g, &e), 0);
	assert_int_equal(gb_prog_enqueue_resume(st, conf, &g, "resume_file", &ids, &e), 0);
	assert_int_equal(ids.n, 2);
	assert_int_equal(gb_prog_enqueue_term(st, GB_REQ_SUSPEND, &nodes, id, &e), 0);
	assert_int_equal(strlen(id), GB_REQUEST_ID_LEN);
	assert_int_equal(gb_state_request_list(st, &f, collect, &s, &e), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.nodes[0], "resume:g5:g5-[1-2]");
	assert_string_equal(s.nodes[1], "resume:g6:g6-1");
	assert_string_equal(s.nodes[2], "suspend:-:g5-[1-2],g6-1");
	assert_int_equal(s.job[0], 42);
	assert_int_equal(s.job[2], 0);
	assert_int_equal(s.st[0], GB_RSTATE_QUEUED);

	/* One transaction: a failure leaves no row (here: inside a tx already). */
	assert_int_equal(gb_state_tx_begin(st, &e), 0);
	assert_int_not_equal(gb_prog_enqueue_resume(st, conf, &g, "argv", NULL, &e), 0);
	gb_state_tx_rollback(st);
	s.n = 0;
	assert_int_equal(gb_state_request_list(st, &f, collect, &s, &e), 0);
	assert_int_equal(s.n, 3);

	gb_prog_groups_free(&g);
	gb_resume_split_free(&sp);
	gb_resume_file_free(rf);
	gb_strv_free(&nodes);
	gb_strv_free(&ids);
	gb_state_close(st);
	gb_conf_destroy(conf);
	tu_rmtree(dir);
}

/*
 * The approval policy decides the rows' states (libpolicy, tested in
 * test_policy): a job over the threshold across two nodesets waits as a
 * whole, with its approval rows, in the same transaction.
 */
static void test_enqueue_gated(void **state)
{
	static const char yaml[] =
		"cluster_name: t\n"
		"state_dir: /nonexistent\n"
		"log: {file: ''}\n"
		"regions:\n"
		"  - {name: ap-south-1, ami: ami-1, azs: [{name: ap-south-1a, subnets: [subnet-1]}]}\n"
		"fallback_groups:\n"
		"  g: {consumer_regions: [ap-southeast-1], fallback_regions: [ap-south-1]}\n"
		"nodesets:\n"
		"  - {name: g5, nodes: 'g5-[1-100]', instance_type: g5.xlarge, home_region: ap-southeast-1}\n"
		"  - {name: g6, nodes: 'g6-[1-10]', instance_type: g6.xlarge, home_region: ap-southeast-1}\n"
		"policy: {approval_thresholds: {dev: 2}, approval_timeout: 5m}\n";
	const char *json = "{\"all_nodes\":\"g5-[1-2],g6-1,g5-9\",\"jobs\":[{\"job_id\":42,\"nodes\":\"g5-[1-2],g6-1\"},{\"job_id\":43,\"nodes\":\"g5-9\"}]}";
	struct gb_request_filter f = GB_REQUEST_FILTER_ANY;
	struct gb_strv nodes = { 0 }, ids = { 0 };
	struct gb_resume_split sp;
	struct gb_prog_groups g;
	struct gb_resume_file *rf = NULL;
	struct gb_conf *conf = NULL;
	struct seen s = { 0 };
	char dir[] = "/tmp/test_prog.XXXXXX", path[128];
	gb_state_t *st = NULL;
	gb_error_t e;
	long pending = 0;

	(void)state;
	unsetenv("GPUBURST_ENV");
	setenv("SLURM_CONF", "/nonexistent/slurm.conf", 1);	/* defaults apply */
	assert_int_equal(gb_conf_load_string("t.yaml", yaml, strlen(yaml), &conf, NULL, &e), 0);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.db", dir);
	assert_int_equal(gb_state_open(path, 0, 5000, &st, &e), 0);
	assert_int_equal(gb_resume_file_parse(json, strlen(json), &rf, &e), 0);
	assert_int_equal(gb_slurm_hostlist_expand(rf->all_nodes, 100, &nodes, &e), 0);
	assert_int_equal(gb_resume_split(rf, &nodes, &sp, &e), 0);
	assert_int_equal(gb_prog_group_nodes(conf, &sp, &g, &e), 0);
	assert_int_equal(gb_prog_enqueue_resume(st, conf, &g, "resume_file", &ids, &e), 0);
	assert_int_equal(ids.n, 3);
	assert_int_equal(gb_state_request_list(st, &f, collect, &s, &e), 0);
	assert_int_equal(s.n, 3);
	/* job 42: 2 + 1 nodes > 2, both parts wait; job 43: 1 node, queued */
	assert_string_equal(s.nodes[0], "resume:g5:g5-[1-2]");
	assert_int_equal(s.st[0], GB_RSTATE_PENDING_APPROVAL);
	assert_string_equal(s.nodes[1], "resume:g6:g6-1");
	assert_int_equal(s.st[1], GB_RSTATE_PENDING_APPROVAL);
	assert_string_equal(s.nodes[2], "resume:g5:g5-9");
	assert_int_equal(s.st[2], GB_RSTATE_QUEUED);
	assert_int_equal(gb_state_request_count(st, GB_RSTATE_PENDING_APPROVAL, &pending, &e), 0);
	assert_int_equal(pending, 2);
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(gb_state_approval_get(st, ids.v[i], NULL, NULL, &e), 0);
	assert_int_equal(gb_state_approval_get(st, ids.v[2], NULL, NULL, &e), GB_E_NOTFOUND);
	unsetenv("SLURM_CONF");
	gb_prog_groups_free(&g);
	gb_resume_split_free(&sp);
	gb_resume_file_free(rf);
	gb_strv_free(&nodes);
	gb_strv_free(&ids);
	gb_state_close(st);
	gb_conf_destroy(conf);
	tu_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_nodes),
		cmocka_unit_test(test_enqueue),
		cmocka_unit_test(test_enqueue_gated),
	};

	return cmocka_run_group_tests_name("prog", tests, NULL, NULL);
}
