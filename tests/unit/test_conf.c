/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_conf.c - libconf: loader, validation messages, catalog, regions
 *
 * Data-driven cases live in tests/data/conf/:
 *   valid/<case>/input.yaml + expected     expected = the summary
 *   invalid/<case>/input.yaml + expected   expected = every error line
 *   <case>/env (optional)                  VAR=value lines set for the case
 * Each case runs in its own directory and loads "input.yaml", so messages
 * do not depend on where the tree is.  "@GB_STATE_DIR@" in an expected
 * summary stands for the compiled-in state directory.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gb_conf.h"
#include "gb_str.h"
#include "gb_util.h"

/*****************************************************************************
 *  Helpers
 *****************************************************************************/

static const char *top_srcdir(void)
{
	const char *s = getenv("GB_TOP_SRCDIR");

	return s && *s ? s : GB_TOP_SRCDIR;
}

static char *slurp(const char *path)
{
	char *data = NULL;
	gb_error_t e;

	if (gb_file_read(path, 4 << 20, &data, NULL, &e))
		fail_msg("%s", e.text);
	return data;
}

static void clear_env(void)
{
	unsetenv(GB_CONF_ENV_ENVIRONMENT);
	unsetenv(GB_CONF_ENV_PATH);
}

/* Apply the case's "env" file (VAR=value per line), if any. */
static void case_env(void)
{
	char *text = NULL, *line, *next;
	gb_error_t e;

	if (access("env", F_OK) != 0)
		return;
	if (gb_file_read("env", 4096, &text, NULL, &e))
		fail_msg("%s", e.text);
	for (line = text; line && *line; line = next) {
		char *eq;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!*line)
			continue;
		eq = strchr(line, '=');
		assert_non_null(eq);
		*eq = '\0';
		assert_int_equal(setenv(line, eq + 1, 1), 0);
	}
	free(text);
}

/* Replace every "@GB_STATE_DIR@" of [s]; RET NEW. */
static char *subst(const char *s)
{
	static const char key[] = "@GB_STATE_DIR@";
	struct gb_buf b = GB_BUF_INIT;
	const char *hit;

	while ((hit = strstr(s, key))) {
		gb_buf_append(&b, s, (size_t)(hit - s));
		gb_buf_puts(&b, GB_STATE_DIR);
		s = hit + strlen(key);
	}
	gb_buf_puts(&b, s);
	assert_false(gb_buf_failed(&b));
	return gb_buf_steal(&b);
}

static char *summary_of(const struct gb_conf *conf)
{
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);

	assert_non_null(fp);
	gb_conf_print_summary(conf, fp);
	assert_int_equal(fclose(fp), 0);
	return out;
}

static void check_text(const char *what, const char *expected, const char *got)
{
	if (strcmp(expected, got) == 0)
		return;
	print_error("%s differs.\n--- expected\n%s--- got\n%s---\n", what,
		    expected, got);
	fail();
}

static struct gb_conf *load_ok(const char *yaml)
{
	struct gb_errlist errs = { 0 };
	struct gb_conf *conf = NULL;
	gb_error_t err;
	gb_err_t rc;

	rc = gb_conf_load_string("test.yaml", yaml, strlen(yaml), &conf, &errs, &err);
	if (rc) {
		for (size_t i = 0; i < errs.n; i++)
			print_error("%s\n", errs.msgs[i]);
		fail_msg("load failed: %s", gb_strerror(rc));
	}
	assert_int_equal(errs.n, 0);
	gb_errlist_free(&errs);
	return conf;
}

/* Load [yaml] expecting failure; RET NEW the error lines joined by '\n'. */
static char *load_bad(const char *yaml)
{
	struct gb_errlist errs = { 0 };
	struct gb_conf *conf = (struct gb_conf *)&errs;
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t err;

	assert_int_equal(gb_conf_load_string("t.yaml", yaml, strlen(yaml), &conf,
					     &errs, &err), GB_E_CONFIG);
	assert_null(conf);
	assert_true(errs.n > 0);
	assert_string_equal(err.text, errs.msgs[0]);
	for (size_t i = 0; i < errs.n; i++)
		gb_buf_printf(&b, "%s\n", errs.msgs[i]);
	gb_errlist_free(&errs);
	return gb_buf_steal(&b);
}

/* load_bad() whose result lives until the next call (for one-line asserts). */
static const char *load_bad_free(const char *yaml)
{
	static char *last;

	free(last);
	last = load_bad(yaml);
	return last;
}

/*****************************************************************************
 *  Data-driven cases
 *****************************************************************************/

struct conf_case {
	char *dir;
	bool valid;
};

static void run_valid(const char *expected)
{
	struct gb_errlist errs = { 0 };
	struct gb_conf *conf = NULL;
	char *want = subst(expected), *got;
	gb_error_t err;
	gb_err_t rc;

	rc = gb_conf_load("input.yaml", &conf, &errs, &err);
	for (size_t i = 0; i < errs.n; i++)
		print_error("%s\n", errs.msgs[i]);
	assert_int_equal(rc, GB_E_OK);
	assert_int_equal(errs.n, 0);
	got = summary_of(conf);
	check_text("summary", want, got);
	/* secrets of the cases never reach the summary */
	assert_null(strstr(got, "EXAMPLEKEY"));
	assert_null(strstr(got, "EXAMPLETOKEN"));
	assert_null(strstr(got, "s3cr3t"));	/* the proxy's password */
	free(got);
	free(want);
	gb_conf_destroy(conf);
	gb_errlist_free(&errs);
}

static void run_invalid(const char *expected)
{
	struct gb_errlist errs = { 0 };
	struct gb_conf *conf = NULL;
	struct gb_buf got = GB_BUF_INIT;
	gb_error_t err;

	assert_int_equal(gb_conf_load("input.yaml", &conf, &errs, &err), GB_E_CONFIG);
	assert_null(conf);
	assert_true(errs.n > 0);
	assert_int_equal(err.code, GB_E_CONFIG);
	assert_string_equal(err.text, errs.msgs[0]);
	for (size_t i = 0; i < errs.n; i++)
		gb_buf_printf(&got, "%s\n", errs.msgs[i]);
	check_text("errors", expected, gb_buf_str(&got));
	assert_null(strstr(gb_buf_str(&got), "not-printed"));
	assert_null(strstr(gb_buf_str(&got), "hunter22"));	/* proxy passwords */
	gb_buf_free(&got);
	gb_errlist_free(&errs);
}

static void test_case(void **state)
{
	const struct conf_case *cc = *state;
	char cwd[PATH_MAX], *expected;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(cc->dir), 0);
	clear_env();
	case_env();
	expected = slurp("expected");
	if (cc->valid)
		run_valid(expected);
	else
		run_invalid(expected);
	free(expected);
	clear_env();
	assert_int_equal(chdir(cwd), 0);
}

static int case_filter(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Append one test per case directory of <srcdir>/tests/data/conf/[kind]. */
static void add_cases(const char *kind, bool valid, struct CMUnitTest **tests,
		      size_t *n)
{
	struct dirent **ents = NULL;
	char base[PATH_MAX];
	int m;

	snprintf(base, sizeof(base), "%s/tests/data/conf/%s", top_srcdir(), kind);
	m = scandir(base, &ents, case_filter, alphasort);
	if (m <= 0) {
		fprintf(stderr, "no test cases in %s\n", base);
		exit(1);
	}
	*tests = realloc(*tests, (*n + (size_t)m) * sizeof(**tests));
	for (int i = 0; i < m; i++) {
		struct conf_case *cc = calloc(1, sizeof(*cc));
		struct CMUnitTest *t = &(*tests)[(*n)++];
		char *name = NULL;

		if (!cc || asprintf(&cc->dir, "%s/%s", base, ents[i]->d_name) < 0 ||
		    asprintf(&name, "%s/%s", kind, ents[i]->d_name) < 0)
			exit(1);
		cc->valid = valid;
		memset(t, 0, sizeof(*t));
		t->name = name;
		t->test_func = test_case;
		t->initial_state = cc;
		free(ents[i]);
	}
	free(ents);
}

static int run_cases(void)
{
	struct CMUnitTest *tests = NULL;
	size_t n = 0;
	int failed;

	add_cases("valid", true, &tests, &n);
	add_cases("invalid", false, &tests, &n);
	/* cmocka_run_group_tests() wants a fixed array; this is what it expands to */
	failed = _cmocka_run_group_tests("conf_cases", tests, n, NULL, NULL);
	for (size_t i = 0; i < n; i++) {
		struct conf_case *cc = tests[i].initial_state;

		free(cc->dir);
		free(cc);
		free((char *)tests[i].name);
	}
	free(tests);
	return failed;
}

/*****************************************************************************
 *  Built-in knowledge
 *****************************************************************************/

static void test_catalog(void **state)
{
	const struct gb_instance_type *t, *all;
	char model[32];
	size_t n;

	(void)state;
	all = gb_catalog_all(&n);
	assert_int_equal(n, 56);
	assert_ptr_equal(gb_conf_instance_types(NULL, &n), all);
	for (size_t i = 0; i < n; i++) {
		size_t flen = strlen(all[i].family);

		assert_int_equal(strncmp(all[i].name, all[i].family, flen), 0);
		assert_int_equal(all[i].name[flen], '.');
		assert_ptr_equal(gb_catalog_find(all[i].name), &all[i]);
		assert_ptr_equal(gb_conf_instance_type(NULL, all[i].name), &all[i]);
		assert_true(all[i].gpus >= 1 && all[i].vcpus >= 2);
		assert_int_equal(all[i].memory_mib % 1024, 0);
		assert_string_equal(all[i].gpu_maker, "NVIDIA");
		/* the one naming rule: a refreshed catalog names models alike */
		assert_non_null(gb_catalog_gres_name(all[i].gpu_name, model, sizeof(model)));
		assert_string_equal(all[i].gpu_model, model);
		assert_int_equal(all[i].efa, all[i].efa_max_interfaces > 0);
		assert_true(all[i].efa_max_interfaces <= all[i].network_cards);
		assert_true(all[i].network_cards >= 1);
		assert_true(all[i].max_interfaces >= all[i].network_cards);
		assert_true(all[i].cluster_placement);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(all[i].name, all[j].name);
	}
	t = gb_catalog_find("g5.xlarge");
	assert_non_null(t);
	assert_string_equal(t->family, "g5");
	assert_int_equal(t->vcpus, 4);
	assert_int_equal(t->memory_mib, 16 * 1024);
	assert_int_equal(t->gpus, 1);
	assert_string_equal(t->gpu_model, "a10g");
	assert_int_equal(t->gpu_memory_mib, 22888);	/* EC2's MiB of the "24 GB" A10G */
	assert_string_equal(t->arch, "x86_64");
	assert_false(t->efa);
	t = gb_catalog_find("g5g.16xlarge");
	assert_int_equal(t->memory_mib, 128 * 1024);
	assert_int_equal(t->gpus, 2);
	assert_string_equal(t->arch, "arm64");
	assert_string_equal(t->gpu_model, "t4g");
	assert_false(t->efa);
	t = gb_catalog_find("g4dn.metal");
	assert_int_equal(t->vcpus, 96);
	assert_int_equal(t->gpus, 8);
	assert_string_equal(t->gpu_model, "t4");
	assert_true(t->efa);
	t = gb_catalog_find("g6e.48xlarge");
	assert_int_equal(t->memory_mib, 1536 * 1024);
	assert_int_equal(t->gpu_memory_mib, 45776);
	assert_string_equal(t->gpu_model, "l40s");
	assert_int_equal(t->network_cards, 4);
	assert_int_equal(t->efa_max_interfaces, 4);
	assert_string_equal(gb_catalog_find("g6.12xlarge")->gpu_model, "l4");
	assert_null(gb_catalog_find("m7i.xlarge"));
	assert_null(gb_catalog_find("g5.3xlarge"));
	assert_null(gb_catalog_find(""));
	assert_null(gb_catalog_find(NULL));
	assert_null(gb_conf_instance_type(NULL, NULL));
}

/* The P families' figures (AWS's instance-type pages). */
static void test_catalog_p(void **state)
{
	const struct gb_instance_type *t;

	(void)state;
	t = gb_catalog_find("p5.48xlarge");
	assert_non_null(t);
	assert_string_equal(t->family, "p5");
	assert_int_equal(t->vcpus, 192);
	assert_int_equal(t->memory_mib, 2048 * 1024);
	assert_int_equal(t->gpus, 8);
	assert_string_equal(t->gpu_model, "h100");
	assert_string_equal(t->gpu_name, "H100");
	assert_int_equal(t->gpu_memory_mib, 80 * 1024);
	assert_true(t->efa);
	assert_int_equal(t->efa_max_interfaces, 32);
	assert_int_equal(t->network_cards, 32);
	assert_int_equal(t->max_interfaces, 64);
	assert_true(t->cluster_placement);
	assert_int_equal(t->gpu_fraction, 0);
	t = gb_catalog_find("p5e.48xlarge");
	assert_string_equal(t->gpu_model, "h200");
	assert_int_equal(t->gpu_memory_mib, 141 * 1024);
	assert_int_equal(t->network_cards, 32);
	t = gb_catalog_find("p5en.48xlarge");
	assert_string_equal(t->gpu_model, "h200");
	assert_int_equal(t->network_cards, 16);
	assert_int_equal(t->efa_max_interfaces, 16);
	assert_int_equal(t->max_interfaces, 64);
	t = gb_catalog_find("p6-b300.48xlarge");
	assert_int_equal(t->network_cards, 17);		/* card 0 ENA only */
	assert_int_equal(t->efa_max_interfaces, 16);
	assert_int_equal(t->gpu_memory_mib, 275040);
	t = gb_catalog_find("p4d.24xlarge");
	assert_int_equal(t->vcpus, 96);
	assert_int_equal(t->memory_mib, 1152 * 1024);
	assert_string_equal(t->gpu_model, "a100");
	assert_int_equal(t->gpu_memory_mib, 40 * 1024);
	assert_int_equal(t->network_cards, 4);
	assert_int_equal(t->efa_max_interfaces, 4);
	assert_int_equal(gb_catalog_find("p4de.24xlarge")->gpu_memory_mib, 80 * 1024);
	t = gb_catalog_find("p6-b200.48xlarge");
	assert_string_equal(t->family, "p6-b200");
	assert_string_equal(t->gpu_model, "b200");
	assert_int_equal(t->gpus, 8);
	assert_int_equal(t->network_cards, 8);
	assert_int_equal(t->max_interfaces, 32);
	t = gb_catalog_find("p3.2xlarge");
	assert_int_equal(t->vcpus, 8);
	assert_int_equal(t->memory_mib, 61 * 1024);
	assert_string_equal(t->gpu_model, "v100");
	assert_false(t->efa);
	t = gb_catalog_find("p3dn.24xlarge");
	assert_int_equal(t->gpu_memory_mib, 32 * 1024);
	assert_true(t->efa);
	t = gb_catalog_find("gr6.8xlarge");
	assert_int_equal(t->memory_mib, 256 * 1024);
	assert_int_equal(t->gpu_fraction, 0);	/* whole L4s */
	t = gb_catalog_find("g6f.large");
	assert_int_equal(t->gpu_fraction, 8);
	assert_int_equal(t->gpu_memory_mib, 2861);	/* the share's */
}

static void test_gres_name(void **state)
{
	static const char *const cases[][2] = {
		{ "H100", "h100" }, { "A10G", "a10g" }, { "L40S", "l40s" }, { "T4g", "t4g" },
		{ "L4", "l4" }, { "B200", "b200" }, { "RTX PRO 6000", "rtx_pro_6000" },
		{ "Radeon Pro V520", "radeon_pro_v520" }, { "A100-SXM4 (80GB)", "a100_sxm4_80gb" },
		{ " -x- ", "x" }, { "a__b", "a_b" }, { "Gaudi\xc3\xa9", "gaudi" },
	};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_ptr_equal(gb_catalog_gres_name(cases[i][0], buf, sizeof(buf)), buf);
		assert_string_equal(buf, cases[i][1]);
	}
	assert_null(gb_catalog_gres_name("", buf, sizeof(buf)));
	assert_null(gb_catalog_gres_name("++", buf, sizeof(buf)));
	assert_null(gb_catalog_gres_name(NULL, buf, sizeof(buf)));
	assert_null(gb_catalog_gres_name("H100", buf, 4));	/* no room for the NUL */
	assert_ptr_equal(gb_catalog_gres_name("H100", buf, 5), buf);
}

static void test_type_allowed(void **state)
{
	struct gb_conf *conf;

	(void)state;
	assert_true(gb_conf_type_allowed(NULL, "g5.xlarge"));
	assert_true(gb_conf_type_allowed(NULL, "g5g.xlarge"));
	assert_true(gb_conf_type_allowed(NULL, "g4dn.12xlarge"));
	assert_true(gb_conf_type_allowed(NULL, "g6e.2xlarge"));
	/* family only: an unknown size of an allowed family passes here */
	assert_true(gb_conf_type_allowed(NULL, "g6.99xlarge"));
	assert_false(gb_conf_type_allowed(NULL, "m7i.xlarge"));
	assert_false(gb_conf_type_allowed(NULL, "g5gx.xlarge"));
	assert_false(gb_conf_type_allowed(NULL, "g7.xlarge"));
	assert_false(gb_conf_type_allowed(NULL, "p5.48xlarge"));
	assert_false(gb_conf_type_allowed(NULL, "g5"));
	assert_false(gb_conf_type_allowed(NULL, "g5."));
	assert_false(gb_conf_type_allowed(NULL, ".xlarge"));
	assert_false(gb_conf_type_allowed(NULL, ""));
	assert_false(gb_conf_type_allowed(NULL, NULL));

	conf = load_ok("cluster_name: t\npolicy: {allowed_families: [g5, g6e]}\n");
	assert_true(gb_conf_type_allowed(conf, "g5.xlarge"));
	assert_false(gb_conf_type_allowed(conf, "g5g.xlarge"));
	assert_false(gb_conf_type_allowed(conf, "g6.xlarge"));
	assert_true(gb_conf_type_allowed(conf, "g6e.xlarge"));
	gb_conf_destroy(conf);
}

/* The launch rule: allowed family, in the catalog, NVIDIA, whole GPUs. */
static void test_type_check(void **state)
{
	struct gb_conf *conf;
	gb_error_t e = { 0 };

	(void)state;
	clear_env();
	assert_int_equal(gb_conf_type_check(NULL, "g5.xlarge", &e), GB_E_OK);
	assert_int_equal(gb_conf_type_check(NULL, "p5.48xlarge", &e), GB_E_CONFIG);
	assert_string_equal(e.text, "instance type p5.48xlarge is not allowed: only GPU families "
			    "g4dn, g5, g5g, g6, g6e");
	assert_int_equal(gb_conf_type_check(NULL, "g5.3xlarge", &e), GB_E_CONFIG);
	assert_string_equal(e.text, "instance type g5.3xlarge is not in the catalog of known GPU types");
	assert_int_equal(gb_conf_type_check(NULL, NULL, &e), GB_E_CONFIG);
	/* the default families are unchanged; training families are opt-in */
	conf = load_ok("cluster_name: c\n");
	assert_int_equal(conf->policy.n_allowed_families, 5);
	assert_string_equal(conf->policy.allowed_families[4], "g6e");
	gb_conf_destroy(conf);
	conf = load_ok("cluster_name: c\npolicy: {allowed_families: [p5, p6-b200, g6f, gr6]}\n");
	assert_int_equal(gb_conf_type_check(conf, "p5.48xlarge", &e), GB_E_OK);
	assert_int_equal(gb_conf_type_check(conf, "p6-b200.48xlarge", &e), GB_E_OK);
	assert_int_equal(gb_conf_type_check(conf, "gr6.4xlarge", &e), GB_E_OK);
	assert_int_equal(gb_conf_type_check(conf, "g5.xlarge", &e), GB_E_CONFIG);
	assert_string_equal(e.text, "instance type g5.xlarge is not allowed: only GPU families "
			    "p5, p6-b200, g6f, gr6");
	assert_int_equal(gb_conf_type_check(conf, "g6f.large", &e), GB_E_CONFIG);
	assert_string_equal(e.text, "instance type g6f.large has a fractional GPU (1/8 of an L4): "
			    "Slurm's gres counts whole GPUs; gpuburst does not launch it");
	assert_int_equal(gb_conf_type_check(conf, "g6f.4xlarge", &e), GB_E_CONFIG);
	assert_non_null(strstr(e.text, "(1/2 of an L4)"));
	gb_conf_destroy(conf);
	/* a family is known when the catalog in use has a type of it */
	assert_string_equal(load_bad_free("cluster_name: c\npolicy: {allowed_families: [p5, p7]}\n"),
			    "t.yaml:2:33: instance family p7 is not in the GPU catalog (its families: "
			    "g4dn, g5, g5g, g6, gr6, g6e, g6f, gr6f, p3, p3dn, p4d, p4de, p5, p5e, "
			    "p5en, p6-b200, p6-b300)\n");
}

/* instance_types and instance_type at load; efa and placement defaults. */
static void test_nodeset_types(void **state)
{
	static const char head[] =
		"cluster_name: c\n"
		"regions: [{name: us-east-1, ami: ami-1, azs: [{name: us-east-1a, subnets: [s-1]}]}]\n"
		"fallback_groups: {g: {consumer_regions: [us-east-1], fallback_regions: [us-east-1]}}\n"
		"policy: {allowed_families: [g5, p5e, p5en]}\n"
		"nodesets:\n";
	struct gb_conf *conf;
	const struct gb_conf_nodeset *ns;
	char *yaml = NULL;

	(void)state;
	clear_env();
	assert_true(asprintf(&yaml, "%s"
			     "  - {name: a, nodes: \"a-[1-2]\", instance_type: g5.xlarge, home_region: us-east-1}\n"
			     "  - {name: b, nodes: \"b-[1-2]\", instance_types: [p5en.48xlarge, p5e.48xlarge],\n"
			     "     efa: true, placement: cluster, home_region: us-east-1}\n", head) > 0);
	conf = load_ok(yaml);
	free(yaml);
	ns = gb_conf_nodeset(conf, "a");
	assert_int_equal(ns->n_instance_types, 1);
	assert_string_equal(ns->instance_types[0], "g5.xlarge");
	assert_null(ns->instance_types[1]);
	assert_string_equal(ns->instance_type, "g5.xlarge");
	assert_false(ns->efa);
	assert_int_equal(ns->placement, GB_PLACEMENT_NONE);
	assert_int_equal(ns->locality, GB_LOCALITY_REGION);
	ns = gb_conf_nodeset(conf, "b");
	assert_int_equal(ns->n_instance_types, 2);
	assert_string_equal(ns->instance_type, "p5en.48xlarge");	/* the first */
	assert_string_equal(ns->instance_types[1], "p5e.48xlarge");
	assert_true(ns->efa);
	assert_int_equal(ns->placement, GB_PLACEMENT_CLUSTER);
	assert_int_equal(ns->locality, GB_LOCALITY_AZ);	/* implied */
	assert_string_equal(gb_conf_placement_name(ns->placement), "cluster");
	gb_conf_destroy(conf);

	assert_true(asprintf(&yaml, "%s"
			     "  - {name: a, nodes: \"a-[1-2]\", instance_type: g5.xlarge, placement: cluster,\n"
			     "     locality: region, home_region: us-east-1}\n", head) > 0);
	assert_string_equal(load_bad_free(yaml),
			    "t.yaml:7:16: nodeset 'a' has placement: cluster: its jobs need one availability "
			    "zone each (EFA and cluster placement groups do not cross zones), so locality "
			    "must be az or left out, not region\n");
	free(yaml);
	assert_true(asprintf(&yaml, "%s"
			     "  - {name: a, nodes: \"a-[1-2]\", instance_types: [g5.xlarge, g5.8xlarge],\n"
			     "     efa: true, locality: az, home_region: us-east-1}\n", head) > 0);
	assert_string_equal(load_bad_free(yaml),
			    "t.yaml:6:50: instance type g5.xlarge does not support EFA, and nodeset 'a' "
			    "has efa: true\n");
	free(yaml);
}

/* The kinds of [ns]'s ladder, "reservation > spot". */
static const char *ladder_of(const struct gb_conf_nodeset *ns)
{
	static char buf[256];
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ns->n_capacity; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? " > " : "",
					gb_conf_capacity_name(ns->capacity[i].kind));
	return buf;
}

static void test_capacity(void **state)
{
	static const char yaml[] =
		"cluster_name: c\n"
		"regions: [{name: us-east-1, ami: ami-1, azs: [{name: us-east-1a, subnets: [s-1]}]}]\n"
		"fallback_groups: {g: {consumer_regions: [us-east-1], fallback_regions: [us-east-1]}}\n"
		"nodesets:\n"
		"  - name: ladder\n"
		"    nodes: l-[1-2]\n"
		"    instance_type: g5.xlarge\n"
		"    home_region: us-east-1\n"
		"    capacity:\n"
		"      - reservations:\n"
		"          ids: [cr-0123456789abcdef0, cr-01234567]\n"
		"          resource_groups: ['arn:aws:resource-groups:us-east-1:123456789012:group/g-1']\n"
		"      - capacity_blocks: {ids: [cr-0aaaabbbbccccdddd]}\n"
		"      - spot: {max_price: 012.50}\n"
		"      - on_demand: {}\n"
		"  - {name: plain, nodes: p-1, instance_type: g5.xlarge, home_region: us-east-1}\n"
		"  - {name: sp, nodes: s-1, instance_type: g5.xlarge, home_region: us-east-1,"
		" market: spot}\n"
		"  - {name: sp2, nodes: t-1, instance_type: g5.xlarge, home_region: us-east-1,"
		" capacity: [spot: ]}\n"
		"  - {name: sp_od, nodes: u-1, instance_type: g5.xlarge, home_region: us-east-1,"
		" capacity: [spot: {}, on_demand: {}]}\n"
		"  - {name: cb, nodes: v-1, instance_type: g5.xlarge, home_region: us-east-1,"
		" capacity: [capacity_blocks: {}]}\n";
	const struct gb_conf_nodeset *ns;
	const struct gb_conf_rung *r;
	struct gb_conf *conf;

	(void)state;
	clear_env();
	conf = load_ok(yaml);
	ns = gb_conf_nodeset(conf, "ladder");
	assert_int_equal(ns->n_capacity, 4);
	assert_string_equal(ladder_of(ns), "reservation > capacity-block > spot > on-demand");
	assert_int_equal(ns->market, GB_MARKET_ON_DEMAND);
	r = &ns->capacity[0];
	assert_ptr_equal(gb_conf_nodeset_rung(ns, GB_CAPACITY_RESERVATION), r);
	assert_int_equal(r->n_ids, 2);
	assert_string_equal(r->ids[0], "cr-0123456789abcdef0");
	assert_string_equal(r->ids[1], "cr-01234567");
	assert_null(r->ids[2]);
	assert_int_equal(r->n_resource_groups, 1);
	assert_string_equal(r->resource_groups[0],
			    "arn:aws:resource-groups:us-east-1:123456789012:group/g-1");
	assert_null(r->resource_groups[1]);
	assert_false(r->open);
	assert_null(r->max_price);
	assert_int_equal(r->mark.line, 10);
	assert_int_equal(r->mark.col, 9);
	r = gb_conf_nodeset_rung(ns, GB_CAPACITY_BLOCK);
	assert_ptr_equal(r, &ns->capacity[1]);
	assert_int_equal(r->n_ids, 1);
	assert_string_equal(r->ids[0], "cr-0aaaabbbbccccdddd");
	assert_null(r->resource_groups);
	r = gb_conf_nodeset_rung(ns, GB_CAPACITY_SPOT);
	assert_ptr_equal(r, &ns->capacity[2]);
	assert_string_equal(r->max_price, "12.5");	/* normalised */
	assert_null(r->ids);
	r = gb_conf_nodeset_rung(ns, GB_CAPACITY_ON_DEMAND);
	assert_ptr_equal(r, &ns->capacity[3]);
	assert_int_equal(r->n_ids + r->n_resource_groups, 0);
	assert_null(r->max_price);

	/* no capacity: [on-demand]; market: spot and [spot: ] are [spot] */
	ns = gb_conf_nodeset(conf, "plain");
	assert_string_equal(ladder_of(ns), "on-demand");
	assert_int_equal(ns->market, GB_MARKET_ON_DEMAND);
	assert_null(gb_conf_nodeset_rung(ns, GB_CAPACITY_SPOT));
	assert_int_equal(ns->capacity[0].mark.line, ns->mark.line);
	ns = gb_conf_nodeset(conf, "sp");
	assert_string_equal(ladder_of(ns), "spot");
	assert_int_equal(ns->market, GB_MARKET_SPOT);
	assert_null(gb_conf_nodeset_rung(ns, GB_CAPACITY_SPOT)->max_price);
	ns = gb_conf_nodeset(conf, "sp2");
	assert_string_equal(ladder_of(ns), "spot");
	assert_int_equal(ns->market, GB_MARKET_SPOT);
	/* market is spot only when the ladder is [spot] alone */
	ns = gb_conf_nodeset(conf, "sp_od");
	assert_string_equal(ladder_of(ns), "spot > on-demand");
	assert_int_equal(ns->market, GB_MARKET_ON_DEMAND);
	ns = gb_conf_nodeset(conf, "cb");
	assert_string_equal(ladder_of(ns), "capacity-block");
	assert_null(ns->capacity[0].ids);	/* {}: every block of its types */
	assert_int_equal(ns->market, GB_MARKET_ON_DEMAND);
	assert_null(gb_conf_nodeset_rung(NULL, GB_CAPACITY_ON_DEMAND));
	gb_conf_destroy(conf);

	/* one message per problem, at the value */
	assert_string_equal(load_bad_free(
		"cluster_name: c\n"
		"nodesets: [{name: a, nodes: a-1, instance_type: g5.xlarge, home_region: x,\n"
		"  capacity: [spot: {max_price: 0}], market: spot}]\n"),
		"t.yaml:2:73: home region 'x' of nodeset 'a' is in no fallback group "
		"(no fallback_groups are configured)\n"
		"t.yaml:3:32: 'max_price' must be a price in US dollars per hour, a decimal number "
		"above 0 and at most 100000 such as \"12.50\", got '0'\n"
		"t.yaml:3:45: nodeset 'a' has both 'capacity' and 'market: spot': give one: "
		"market: spot is capacity: [spot: {}], market: on-demand is capacity: [on_demand: {}]\n");
}

/*****************************************************************************
 *  The catalog file
 *****************************************************************************/

static char *catalog_dir(void)
{
	char *dir = strdup("/tmp/gb-test-catalog-XXXXXX");

	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	return dir;
}

static void rm_dir(const char *dir)
{
	char path[PATH_MAX];
	DIR *d = opendir(dir);
	struct dirent *de;

	assert_non_null(d);
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) != 0)
			assert_int_equal(rmdir(path), 0);
	}
	closedir(d);
	assert_int_equal(rmdir(dir), 0);
}

static size_t dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	size_t n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n - 2;
}

static char *state_yaml(const char *dir, const char *extra)
{
	char *yaml = NULL;

	assert_true(asprintf(&yaml, "cluster_name: c\nstate_dir: %s\n%s", dir, extra) > 0);
	return yaml;
}

/* Write, read back through gb_conf_load_string, and the file's text. */
static void test_catalog_file(void **state)
{
	struct gb_instance_type v[2];
	const struct gb_instance_type *t;
	char *dir = catalog_dir(), path[PATH_MAX], *yaml, *text;
	struct gb_conf *conf;
	struct stat st;
	gb_error_t e = { 0 };
	size_t n;

	(void)state;
	clear_env();
	v[0] = *gb_catalog_find("p5.48xlarge");
	v[1] = (struct gb_instance_type){ .name = "g7e.48xlarge", .family = "g7e", .vcpus = 192,
		.memory_mib = 2048 * 1024, .gpus = 8, .gpu_model = "rtx_pro_6000",
		.gpu_memory_mib = 98304, .arch = "x86_64", .gpu_maker = "NVIDIA", .efa = true,
		.efa_max_interfaces = 4, .network_cards = 4, .max_interfaces = 16,
		.cluster_placement = false, .gpu_name = "RTX PRO 6000", .gpu_fraction = 0 };
	snprintf(path, sizeof(path), "%s/" GB_CATALOG_FILE, dir);
	assert_int_equal(gb_catalog_write(path, v, 2, "ec2:DescribeInstanceTypes us-east-1",
					  1764769307.9, &e), GB_E_OK);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(dir_entries(dir), 1);	/* no temporary file left */
	text = slurp(path);
	assert_int_equal(strncmp(text, "gpuburst-catalog 1\nrefreshed 2025-12-03T13:41:47Z\n"
				 "source ec2:DescribeInstanceTypes us-east-1\n", 87), 0);
	assert_non_null(strstr(text, "\np5.48xlarge p5 192 2097152 8 81920 0 x86_64 NVIDIA 32 32 64 yes H100\n"));
	assert_non_null(strstr(text, "\ng7e.48xlarge g7e 192 2097152 8 98304 0 x86_64 NVIDIA 4 4 16 no RTX PRO 6000\n"));
	free(text);

	yaml = state_yaml(dir, "policy: {allowed_families: [g7e, p5]}\n");
	conf = load_ok(yaml);
	free(yaml);
	assert_string_equal(conf->catalog_path, path);
	assert_string_equal(conf->catalog_source, "ec2:DescribeInstanceTypes us-east-1");
	assert_true(conf->catalog_refreshed_at == 1764769307.0);
	assert_non_null(gb_conf_instance_types(conf, &n));
	assert_int_equal(n, 2);
	t = gb_conf_instance_type(conf, "g7e.48xlarge");
	assert_non_null(t);
	assert_string_equal(t->gpu_model, "rtx_pro_6000");	/* computed, never stored */
	assert_string_equal(t->gpu_name, "RTX PRO 6000");
	assert_int_equal(t->memory_mib, 2048 * 1024);
	assert_int_equal(t->efa_max_interfaces, 4);
	assert_true(t->efa);
	assert_false(t->cluster_placement);
	t = gb_conf_instance_type(conf, "p5.48xlarge");
	assert_int_equal(t->network_cards, 32);
	assert_string_equal(t->gpu_model, "h100");
	assert_int_equal(gb_conf_type_check(conf, "g7e.48xlarge", &e), GB_E_OK);
	/* the file replaces the built-in catalog */
	assert_null(gb_conf_instance_type(conf, "g5.xlarge"));
	assert_non_null(gb_conf_instance_type(NULL, "g5.xlarge"));
	gb_conf_destroy(conf);

	/* the writer refuses what the reader would */
	v[1].family = "g7";
	assert_int_equal(gb_catalog_write(path, v, 2, "x", 0, &e), GB_E_INVALID);
	assert_string_equal(e.text, "catalog type 2 (g7e.48xlarge): the family is not the name's "
			    "text before '.'");
	v[1] = v[0];
	assert_int_equal(gb_catalog_write(path, v, 2, "x", 0, &e), GB_E_INVALID);
	assert_string_equal(e.text, "catalog type p5.48xlarge is listed twice");
	assert_int_equal(gb_catalog_write(path, v, 1, "two\nlines", 0, &e), GB_E_INVALID);
	assert_int_equal(gb_catalog_write(path, v, 0, "x", 0, &e), GB_E_INVALID);
	snprintf(path, sizeof(path), "%s/no/such/dir/catalog", dir);
	assert_int_equal(gb_catalog_write(path, v, 1, "x", 0, &e), GB_E_IO);
	rm_dir(dir);
	free(dir);
}

#define CAT_HEAD "gpuburst-catalog 1\nrefreshed 2026-01-02T03:04:05Z\nsource test\n"
#define P5_LINE "p5.48xlarge p5 192 2097152 8 81920 0 x86_64 NVIDIA 32 32 64 yes H100\n"

/* Each bad file: the config does not load, the message names file and line. */
static void test_catalog_file_bad(void **state)
{
	static const struct { const char *text; const char *want; } cases[] = {
		{ "", ": the first line is not \"gpuburst-catalog 1\": not a gpuburst catalog file" },
		{ "[catalog]\n", ":1: the first line is not \"gpuburst-catalog 1\": not a gpuburst catalog file" },
		{ "gpuburst-catalog 2\n", ":1: catalog format version 2, this gpuburst reads version 1" },
		{ "gpuburst-catalog 1\nrefreshed yesterday\n", ":2: the second line is not \"refreshed YYYY-MM-DDTHH:MM:SSZ\"" },
		{ "gpuburst-catalog 1\nrefreshed 2026-01-02T03:04:05Z\n# c\n", ":3: the third line is not \"source TEXT\" (printable text)" },
		{ CAT_HEAD, ": the file lists no instance type" },
		{ CAT_HEAD "p5.48xlarge p5 192 2097152\n", ":4: 4 fields, expected 14 (name ... gpu_name)" },
		{ CAT_HEAD "\n# x\np5.48xlarge p5 192 2097152 8 81920 0 x86_64 NVIDIA 32 32 sixty yes H100\n",
		  ":6: max_interfaces 'sixty' is not a whole number" },
		{ CAT_HEAD "p5.48xlarge p5 192 2097152 8 81920 0 x86_64 NVIDIA 32 32 64 maybe H100\n",
		  ":4: cluster_placement 'maybe' is neither yes nor no" },
		{ CAT_HEAD "p5.48xlarge p4 192 2097152 8 81920 0 x86_64 NVIDIA 32 32 64 yes H100\n",
		  ":4: instance type p5.48xlarge: the family is not the name's text before '.'" },
		{ CAT_HEAD "p5.48xlarge p5 192 2097152 8 81920 0 riscv NVIDIA 32 32 64 yes H100\n",
		  ":4: instance type p5.48xlarge: arch is neither x86_64 nor arm64" },
		{ CAT_HEAD "p5.48xlarge p5 192 2097152 0 81920 0 x86_64 NVIDIA 32 32 64 yes H100\n",
		  ":4: instance type p5.48xlarge: gpus is not in 1..64" },
		{ CAT_HEAD "p5.48xlarge p5 192 2097152 8 81920 0 x86_64 NVIDIA 32 32 64 yes ++\n",
		  ":4: instance type p5.48xlarge: gpu_name is not printable text that gives a gres name" },
		{ CAT_HEAD P5_LINE "g5.xlarge g5 4 16384 1 24576 0 x86_64 NVIDIA 0 1 4 yes A10G\n" P5_LINE,
		  ":6: instance type p5.48xlarge is listed twice (first on line 4)" },
	};
	char *dir = catalog_dir(), path[PATH_MAX], *yaml, *got, want[512];
	FILE *fp;

	(void)state;
	clear_env();
	snprintf(path, sizeof(path), "%s/" GB_CATALOG_FILE, dir);
	yaml = state_yaml(dir, "");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_non_null(fp = fopen(path, "w"));
		fputs(cases[i].text, fp);
		assert_int_equal(fclose(fp), 0);
		got = load_bad(yaml);
		snprintf(want, sizeof(want), "t.yaml: catalog %s%s\n", path, cases[i].want);
		assert_string_equal(got, want);
		free(got);
	}
	/* a NUL byte; too big; not a regular file */
	assert_non_null(fp = fopen(path, "w"));
	fwrite(CAT_HEAD "x\0y\n", 1, sizeof(CAT_HEAD "x\0y\n") - 1, fp);
	assert_int_equal(fclose(fp), 0);
	got = load_bad(yaml);
	snprintf(want, sizeof(want), "t.yaml: catalog %s: the file contains a NUL byte\n", path);
	assert_string_equal(got, want);
	free(got);
	assert_int_equal(truncate(path, 1024 * 1024 + 1), 0);
	got = load_bad(yaml);
	snprintf(want, sizeof(want), "t.yaml: catalog %s: the file is larger than 1048576 bytes\n", path);
	assert_string_equal(got, want);
	free(got);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	got = load_bad(yaml);
	assert_non_null(strstr(got, "is not a regular file"));
	assert_int_equal(strncmp(got, "t.yaml: catalog ", 16), 0);
	free(got);
	free(yaml);
	rm_dir(dir);
	free(dir);
}

/* A damaged price file is a configuration error naming the file and line. */
static void test_prices_file_bad(void **state)
{
#define PR_HEAD "gpuburst-prices 1\nrefreshed 2026-12-01T00:00:00Z\nsource test\n"
	static const struct { const char *text; const char *want; } cases[] = {
		{ "gpuburst-catalog 1\n", ":1: the first line is not \"gpuburst-prices 1\": not a gpuburst prices file" },
		{ "gpuburst-prices 2\n", ":1: prices format version 2, this gpuburst reads version 1" },
		{ PR_HEAD "us-east-1 g5.xlarge on-demand\n", ":4: 3 fields, expected 4 (region type capacity usd_per_hour)" },
		{ PR_HEAD "us-east-1 g5.xlarge cheap 1\n", ":4: capacity 'cheap' is not on-demand, spot, reservation or capacity-block" },
		{ PR_HEAD "us-east-1 g5.xlarge spot -1\n", ":4: price '-1' is not a decimal number" },
		{ PR_HEAD "us-east-1 g5.xlarge spot 1e3\n", ":4: price '1e3' is not a decimal number" },
		{ PR_HEAD "us-east-1 g5 spot 1\n", ":4: us-east-1 g5: the type is not an instance type (like g5.xlarge)" },
		{ PR_HEAD "us-east-1 g5.xlarge spot 100001\n", ":4: us-east-1 g5.xlarge: the price is not between 0 and 100000 dollars an hour" },
		{ PR_HEAD "us-east-1 g5.xlarge spot 1\n# x\nus-east-1 g5.xlarge spot 2\n",
		  ":6: the price of us-east-1 g5.xlarge spot is given twice (first on line 4)" },
	};
	char *dir = catalog_dir(), path[PATH_MAX], *yaml, *got, want[512];
	struct gb_conf *conf = NULL;
	gb_error_t err;
	FILE *fp;

	(void)state;
	clear_env();
	snprintf(path, sizeof(path), "%s/" GB_PRICES_FILE, dir);
	yaml = state_yaml(dir, "");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_non_null(fp = fopen(path, "w"));
		fputs(cases[i].text, fp);
		assert_int_equal(fclose(fp), 0);
		got = load_bad(yaml);
		snprintf(want, sizeof(want), "t.yaml: prices %s%s\n", path, cases[i].want);
		assert_string_equal(got, want);
		free(got);
	}
	/* a good one: sorted for lookups, reservation falls back to on-demand */
	assert_non_null(fp = fopen(path, "w"));
	fputs(PR_HEAD "us-east-1 g5.xlarge spot 0.5\nap-south-1 g5.xlarge on-demand 1.25\n"
	      "us-east-1 g5.xlarge on-demand 1.006\n", fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(gb_conf_load_string("t.yaml", yaml, strlen(yaml), &conf, NULL, &err), GB_E_OK);
	assert_true(gb_conf_price(conf, "us-east-1", "g5.xlarge", GB_CAPACITY_SPOT, NULL) == 0.5);
	assert_true(gb_conf_price(conf, "us-east-1", "g5.xlarge", GB_CAPACITY_RESERVATION, NULL) == 1.006);
	assert_true(gb_conf_price(conf, "ap-south-1", "g5.xlarge", GB_CAPACITY_ON_DEMAND, NULL) == 1.25);
	assert_true(gb_conf_price(conf, "ap-south-1", "g6.xlarge", GB_CAPACITY_ON_DEMAND, NULL) < 0);
	gb_conf_destroy(conf);
	free(yaml);
	rm_dir(dir);
	free(dir);
#undef PR_HEAD
}

/*
 * The price file shipped with gpuburst (etc/prices) reads as a site's
 * would, prices every size of the G families it covers in each of its
 * regions, gives no P-family price (those it had were out of date), and
 * names only regions gpuburst knows.
 */
static void test_prices_shipped(void **state)
{
	static const char *const fams[] = { "g4dn", "g5", "g5g", "g6", "gr6", "g6e" };
	const char *const *known = gb_region_names();
	char *dir = catalog_dir(), src[PATH_MAX], path[PATH_MAX], *yaml, buf[1 << 14];
	struct gb_conf *conf = NULL;
	const struct gb_instance_type *cat;
	const struct gb_price *v;
	size_t n, n_cat, got, regions = 0;
	gb_error_t err;
	FILE *in, *out;

	(void)state;
	clear_env();
	snprintf(src, sizeof(src), "%s/etc/prices", top_srcdir());
	snprintf(path, sizeof(path), "%s/" GB_PRICES_FILE, dir);
	assert_non_null(in = fopen(src, "r"));
	assert_non_null(out = fopen(path, "w"));
	while ((got = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, got, out), got);
	assert_int_equal(fclose(in), 0);
	assert_int_equal(fclose(out), 0);
	yaml = state_yaml(dir, "");
	assert_int_equal(gb_conf_load_string("t.yaml", yaml, strlen(yaml), &conf, NULL, &err), GB_E_OK);
	v = gb_conf_prices(conf, &n);
	assert_true(n > 400);
	assert_true(gb_conf_price(conf, "us-east-1", "g5.xlarge", GB_CAPACITY_ON_DEMAND, NULL) == 1.006);
	cat = gb_catalog_all(&n_cat);
	for (size_t i = 0; i < n; i++) {
		bool region_known = false, fam_ok = false;

		assert_int_equal(v[i].kind, GB_CAPACITY_ON_DEMAND);
		assert_true(v[i].usd_per_hour > 0);
		for (size_t k = 0; known[k]; k++)
			region_known = region_known || strcmp(known[k], v[i].region) == 0;
		if (!region_known)
			fail_msg("etc/prices: region %s is not one gpuburst knows", v[i].region);
		for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++)
			fam_ok = fam_ok || strcmp(gb_catalog_find(v[i].type) ?
						  gb_catalog_find(v[i].type)->family : "",
						  fams[f]) == 0;
		if (!fam_ok)
			fail_msg("etc/prices: %s is not of the G families shipped", v[i].type);
		if (i > 0 && strcmp(v[i - 1].region, v[i].region) == 0)
			continue;
		regions++;
		/* a region that has a family has every size of it */
		for (size_t t = 0; t < n_cat; t++) {
			bool has_fam = false;

			for (size_t k = 0; k < n; k++)
				has_fam = has_fam || (strcmp(v[k].region, v[i].region) == 0 &&
						      strcmp(gb_catalog_find(v[k].type)->family,
							     cat[t].family) == 0);
			if (has_fam && gb_conf_price(conf, v[i].region, cat[t].name,
						     GB_CAPACITY_ON_DEMAND, NULL) < 0)
				fail_msg("etc/prices: %s has %s but not %s", v[i].region,
					 cat[t].family, cat[t].name);
		}
	}
	assert_int_equal(regions, 22);
	gb_conf_destroy(conf);
	free(yaml);
	rm_dir(dir);
	free(dir);
}

static void test_regions(void **state)
{
	const char *const *names = gb_region_names();
	double lat = 0, lon = 0;
	size_t n = 0;

	(void)state;
	for (n = 0; names[n]; n++) {
		assert_true(gb_region_coords(names[n], &lat, &lon));
		assert_true(lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180);
		for (size_t j = 0; j < n; j++)
			assert_string_not_equal(names[j], names[n]);
	}
	/* every row of seed-and-protocols.md section 1.9, China and GovCloud */
	assert_int_equal(n, 38);
	assert_true(gb_region_coords("cn-north-1", NULL, NULL));
	assert_true(gb_region_coords("cn-northwest-1", NULL, NULL));
	assert_true(gb_region_coords("us-gov-west-1", NULL, NULL));
	assert_true(gb_region_coords("us-gov-east-1", NULL, NULL));
	assert_true(gb_region_coords("ap-southeast-1", &lat, &lon));
	assert_true(lat == 1.35 && lon == 103.82);
	assert_true(gb_region_coords("sa-east-1", &lat, &lon));
	assert_true(lat == -23.55 && lon == -46.63);
	assert_true(gb_region_coords("mx-central-1", &lat, &lon));
	assert_true(lat == 19.43 && lon == -99.13);
	assert_true(gb_region_coords("eu-west-2", NULL, NULL));
	assert_false(gb_region_coords("mars-1", &lat, &lon));
	assert_false(gb_region_coords(NULL, &lat, &lon));
}

static double dist(const char *a, const char *b)
{
	double la, lo, lb, lob;

	assert_true(gb_region_coords(a, &la, &lo));
	assert_true(gb_region_coords(b, &lb, &lob));
	return gb_region_distance_km(la, lo, lb, lob);
}

/* The golden values of seed-and-protocols.md section 1.9. */
static void test_distance(void **state)
{
	(void)state;
	assert_true(fabs(dist("ap-southeast-1", "ap-south-1") - 3903.9) < 0.1);
	assert_true(fabs(dist("ap-southeast-1", "ap-northeast-2") - 4672.6) < 0.1);
	assert_true(fabs(dist("ap-southeast-1", "ap-northeast-3") - 4951.0) < 0.1);
	assert_true(fabs(dist("ap-southeast-1", "ap-northeast-1") - 5314.5) < 0.1);
	assert_true(fabs(dist("ap-southeast-1", "us-east-1") - 15520.9) < 0.1);
	assert_true(fabs(dist("ap-northeast-1", "ap-northeast-3") - 396.3) < 0.1);
	assert_true(fabs(dist("ap-northeast-1", "ap-northeast-2") - 1152.6) < 0.1);
	assert_true(dist("eu-west-1", "eu-west-1") == 0);
	assert_true(fabs(dist("us-east-1", "ap-south-1") - dist("ap-south-1", "us-east-1")) < 1e-9);
}

/*****************************************************************************
 *  Loading and lookups
 *****************************************************************************/

static struct gb_conf *load_example(void)
{
	struct gb_errlist errs = { 0 };
	struct gb_conf *conf = NULL;
	char path[PATH_MAX];
	gb_error_t err;

	snprintf(path, sizeof(path), "%s/etc/gpuburst.yaml.example", top_srcdir());
	if (gb_conf_load(path, &conf, &errs, &err)) {
		for (size_t i = 0; i < errs.n; i++)
			print_error("%s\n", errs.msgs[i]);
		fail_msg("the example does not load: %s", err.text);
	}
	assert_int_equal(errs.n, 0);
	gb_errlist_free(&errs);
	return conf;
}

static void test_example(void **state)
{
	struct gb_conf *conf;
	const struct gb_conf_group *g;

	(void)state;
	clear_env();
	conf = load_example();
	assert_string_equal(conf->cluster_name, "burst");
	assert_int_equal(conf->n_regions, 4);
	assert_int_equal(conf->n_groups, 2);
	assert_int_equal(conf->n_nodesets, 3);
	assert_null(gb_conf_region(conf, "ap-southeast-1"));	/* consumer only */
	g = gb_conf_group_for(conf, "ap-southeast-1");
	assert_non_null(g);
	assert_string_equal(g->name, "southeast_asia");
	assert_int_equal(g->n_fallback_regions, 3);
	assert_string_equal(gb_conf_group_for(conf, "ap-northeast-3")->name, "japan");
	assert_null(gb_conf_group_for(conf, "us-west-2"));
	assert_null(gb_conf_group_for(conf, NULL));
	assert_string_equal(gb_conf_nodeset_for_node(conf, "g5-1")->name, "g5");
	assert_string_equal(gb_conf_nodeset_for_node(conf, "g5-16")->name, "g5");
	assert_string_equal(gb_conf_nodeset_for_node(conf, "g6-3")->name, "g6");
	assert_string_equal(gb_conf_nodeset_for_node(conf, "g6e-8")->name, "g6e");
	assert_null(gb_conf_nodeset_for_node(conf, "g6e-9"));
	assert_null(gb_conf_nodeset_for_node(conf, "g5-17"));
	assert_null(gb_conf_nodeset_for_node(conf, "g5-01"));
	assert_null(gb_conf_nodeset_for_node(conf, "gpu-1"));
	assert_null(gb_conf_nodeset_for_node(conf, NULL));
	assert_string_equal(gb_conf_nodeset(conf, "g6e")->instance_type, "g6e.xlarge");
	assert_null(gb_conf_nodeset(conf, "g7"));
	assert_int_equal(gb_conf_threshold(conf), 50);
	assert_null(gb_conf_endpoint(conf, gb_conf_region(conf, "ap-south-1")));
	assert_true(gb_conf_type_allowed(conf, "g5g.xlarge"));
	gb_conf_destroy(conf);
}

static const char *const env_yaml =
	"cluster_name: env\n"
	"environment: staging\n"
	"policy: {approval_thresholds: {dev: 40, staging: 30, prod: 5}}\n";

static void test_threshold_env(void **state)
{
	struct gb_conf *conf;
	char *errs;

	(void)state;
	clear_env();
	conf = load_ok(env_yaml);
	assert_int_equal(conf->environment, GB_ENV_STAGING);
	assert_false(conf->environment_from_env);
	assert_int_equal(gb_conf_threshold(conf), 30);
	gb_conf_destroy(conf);

	setenv(GB_CONF_ENV_ENVIRONMENT, "prod", 1);
	conf = load_ok(env_yaml);
	assert_int_equal(conf->environment, GB_ENV_PROD);
	assert_true(conf->environment_from_env);
	assert_int_equal(gb_conf_threshold(conf), 5);
	gb_conf_destroy(conf);

	setenv(GB_CONF_ENV_ENVIRONMENT, "dev", 1);
	conf = load_ok(env_yaml);
	assert_int_equal(gb_conf_threshold(conf), 40);
	gb_conf_destroy(conf);

	setenv(GB_CONF_ENV_ENVIRONMENT, "", 1);	/* empty: not set */
	conf = load_ok(env_yaml);
	assert_false(conf->environment_from_env);
	assert_int_equal(gb_conf_threshold(conf), 30);
	gb_conf_destroy(conf);

	setenv(GB_CONF_ENV_ENVIRONMENT, "Prod", 1);
	errs = load_bad(env_yaml);
	assert_string_equal(errs, "t.yaml: environment variable GPUBURST_ENV='Prod' is invalid (expected one of: dev, staging, prod)\n");
	free(errs);
	clear_env();
}

static void test_endpoint(void **state)
{
	struct gb_conf *conf;
	const struct gb_conf_region *a, *b;

	(void)state;
	conf = load_ok("cluster_name: ep\n"
		       "cloud: {endpoint: 'http://127.0.0.1:4566'}\n"
		       "regions:\n"
		       "  - {name: us-east-1, endpoint: 'https://127.0.0.1:9443/x'}\n"
		       "  - {name: us-west-2}\n");
	a = gb_conf_region(conf, "us-east-1");
	b = gb_conf_region(conf, "us-west-2");
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(gb_conf_endpoint(conf, a), "https://127.0.0.1:9443/x");
	assert_string_equal(gb_conf_endpoint(conf, b), "http://127.0.0.1:4566");
	assert_string_equal(gb_conf_endpoint(conf, NULL), "http://127.0.0.1:4566");
	assert_true(b->lat == 45.59 && b->lon == -122.60);
	assert_true(a->mark.line == 4 && a->mark.col == 5);
	gb_conf_destroy(conf);

	conf = load_ok("cluster_name: ep\nregions: [{name: us-east-1}]\n");
	assert_null(gb_conf_endpoint(conf, gb_conf_region(conf, "us-east-1")));
	gb_conf_destroy(conf);
}

/* One set of credentials: the default endpoints must be in one partition. */
static void test_partitions(void **state)
{
	struct gb_conf *conf;
	char *errs;

	(void)state;
	conf = load_ok("cluster_name: cn\nregions: [{name: cn-north-1}, {name: cn-northwest-1}]\n");
	gb_conf_destroy(conf);
	errs = load_bad("cluster_name: mix\n"
			"regions:\n"
			"  - {name: us-east-1}\n"
			"  - {name: cn-north-1}\n"
			"  - {name: us-gov-west-1}\n");
	check_text("errors",
		   "t.yaml:4:12: region 'cn-north-1' is in AWS partition aws-cn, region 'us-east-1' in aws: one set of credentials cannot sign for both (one gpuburst.yaml per partition)\n"
		   "t.yaml:5:12: region 'us-gov-west-1' is in AWS partition aws-us-gov, region 'us-east-1' in aws: one set of credentials cannot sign for both (one gpuburst.yaml per partition)\n",
		   errs);
	free(errs);
	/* an endpoint decides for the region: a simulator can mix them */
	conf = load_ok("cluster_name: sim\ncloud: {endpoint: 'http://127.0.0.1:8773'}\n"
		       "regions: [{name: us-east-1}, {name: cn-north-1}]\n");
	gb_conf_destroy(conf);
}

/* Every default, as documented in gb_conf.h and the example. */
static void test_defaults(void **state)
{
	struct gb_conf *conf;
	const struct gb_conf_policy *p;

	(void)state;
	clear_env();
	conf = load_ok("cluster_name: d\n");
	assert_string_equal(conf->path, "test.yaml");
	assert_int_equal(conf->environment, GB_ENV_DEV);
	assert_string_equal(conf->state_dir, GB_STATE_DIR);
	assert_string_equal(conf->log.file, "/var/log/gpuburst/gpuburst.log");
	assert_false(conf->log.syslog);
	assert_int_equal(conf->log.level, GB_LOG_INFO);
	assert_string_equal(conf->cloud.provider, "ec2");
	assert_null(conf->cloud.endpoint);
	assert_null(conf->cloud.ca_bundle);
	assert_null(conf->cloud.profile);
	assert_null(conf->cloud.access_key_id);
	assert_true(conf->cloud.imds);
	assert_true(conf->cloud.connect_timeout == 5);
	assert_true(conf->cloud.request_timeout == 30);
	assert_int_equal(conf->cloud.max_retries, 4);
	assert_true(conf->cloud.retry_budget == 60);
	assert_int_equal(conf->n_regions + conf->n_groups + conf->n_nodesets, 0);
	p = &conf->policy;
	assert_int_equal(p->batch_max, 4);
	assert_int_equal(p->max_request_nodes, 1000);
	assert_int_equal(p->approval_thresholds[GB_ENV_DEV], 50);
	assert_int_equal(p->approval_thresholds[GB_ENV_STAGING], 20);
	assert_int_equal(p->approval_thresholds[GB_ENV_PROD], 10);
	assert_int_equal(p->n_allowed_geo_regions, 0);
	assert_true(p->approval_timeout < 0);
	assert_false(p->manual_resume_needs_approval);
	assert_null(p->approval_notify);
	assert_true(p->ice_cooldown == 600 && p->orphan_timeout == 600);
	assert_true(p->request_deadline == 3600 && p->offerings_ttl == 3600);
	assert_true(p->reprobe_window < 0);	/* auto */
	assert_true(p->capacity_half_life == 3600);
	assert_true(p->capacity_block_margin == 40 * 60 && p->capacity_block_wait == 5 * 60);
	assert_true(p->reservation_ttl == 60);
	assert_true(p->spot_price_ttl == 3600);
	assert_true(p->retention == 90 * 86400.0);
	assert_int_equal(p->n_allowed_families, 5);
	assert_string_equal(p->allowed_families[0], "g4dn");
	assert_string_equal(p->allowed_families[4], "g6e");
	assert_null(p->allowed_families[5]);
	assert_int_equal(p->prefer, GB_PREFER_NEAREST);
	assert_true(p->prefer_within == 0);
	assert_int_equal(conf->planner.kind, GB_PLANNER_HEURISTIC);
	assert_int_equal(conf->planner.llm.provider, GB_LLM_NONE);
	assert_null(conf->planner.llm.endpoint);
	assert_true(conf->planner.llm.timeout == 5);
	assert_int_equal(conf->planner.llm.max_tokens, 1024);
	assert_int_equal(conf->planner.llm.max_calls, 3);
	assert_int_equal(conf->admins.n_users, 0);
	assert_null(conf->admins.group);
	gb_conf_destroy(conf);
}

static void test_values(void **state)
{
	struct gb_conf *conf;
	const struct gb_conf_nodeset *ns;

	(void)state;
	conf = load_ok("cluster_name: v\n"
		       "log: {file: '', syslog: yes, level: warning}\n"
		       "cloud: {connect_timeout: 1h, request_timeout: '90', retry_budget: 0}\n"
		       "regions:\n"
		       "  - name: ap-south-1\n"
		       "    ami: ami-1\n"
		       "    security_groups: [sg-1, sg-2]\n"
		       "    azs:\n"
		       "      - {name: ap-south-1a, subnets: [s-1, s-2]}\n"
		       "fallback_groups:\n"
		       "  g: {consumer_regions: [ap-south-1], fallback_regions: [ap-south-1]}\n"
		       "nodesets:\n"
		       "  - {name: n, nodes: 'n[01-10]', instance_type: g5.xlarge,\n"
		       "     home_region: ap-south-1, strategy: best_effort, market: spot}\n"
		       "policy: {approval_timeout: 2h, approval_notify: [/bin/true, a b],\n"
		       "         manual_resume_needs_approval: true, retention: 0,\n"
		       "         reprobe_window: 0}\n");
	assert_null(conf->log.file);
	assert_true(conf->log.syslog);
	assert_int_equal(conf->log.level, GB_LOG_WARNING);
	assert_true(conf->cloud.connect_timeout == 3600);
	assert_true(conf->cloud.request_timeout == 90);
	assert_true(conf->cloud.retry_budget == 0);
	assert_int_equal(conf->regions[0].n_security_groups, 2);
	assert_null(conf->regions[0].security_groups[2]);
	assert_int_equal(conf->regions[0].azs[0].n_subnets, 2);
	assert_string_equal(conf->regions[0].azs[0].subnets[1], "s-2");
	assert_null(conf->regions[0].azs[0].subnets[2]);
	ns = gb_conf_nodeset_for_node(conf, "n07");
	assert_non_null(ns);
	assert_int_equal(ns->strategy, GB_STRATEGY_BEST_EFFORT);
	assert_int_equal(ns->market, GB_MARKET_SPOT);
	assert_int_equal(ns->mode, GB_MODE_MULTI_REGION);
	assert_int_equal(ns->locality, GB_LOCALITY_REGION);
	assert_string_equal(ns->partition, "gpuburst");
	assert_int_equal(ns->mark.line, 13);
	assert_null(gb_conf_nodeset_for_node(conf, "n7"));
	assert_true(conf->policy.approval_timeout == 7200);
	assert_true(conf->policy.manual_resume_needs_approval);
	assert_string_equal(conf->policy.approval_notify[1], "a b");
	assert_null(conf->policy.approval_notify[2]);
	assert_true(conf->policy.retention == 0);	/* 0: like off, under the 1d minimum */
	assert_true(conf->policy.reprobe_window == 0);	/* off, not auto */
	gb_conf_destroy(conf);
}

/*
 * cloud.proxy and cloud.no_proxy: the values, the list joined for curl,
 * the password kept out of messages and logs, what a proxy URL may be.
 */
static void test_proxy(void **state)
{
	static const char *const good[] = {
		"http://proxy.example:3128", "https://proxy.example", "http://10.1.2.3:8080/",
		"http://[fd00::1]:3128", "http://u:p%40ss@proxy_1.example:1", "http://u@h:65535",
	};
	static const char *const bad[] = {
		"proxy.example:3128", "ftp://proxy.example", "http://", "http://:3128",
		"http://proxy.example:0", "http://proxy.example:", "http://proxy.example:31a8",
		"http://u:hunter22@", "http://:hunter22@proxy.example:1", "http://pro xy.example:1",
		"http://proxy.example:3128/x", "http://proxy.example?x", "http://[fd00::1:3128",
		"http://[fd00::1]x", "http://[]:1", "http://u:hunter22@proxy!example:1",
	};
	char dir[] = "/tmp/gb-test-conf-log-XXXXXX", path[128], yaml[256], *text = NULL, *msg;
	struct gb_log_opts lo = { .level = GB_LOG_INFO, .no_stderr = true };
	struct gb_conf *conf;

	(void)state;
	conf = load_ok("cluster_name: p\n"
		       "cloud:\n"
		       "  proxy: http://gpuburst:hunter22@proxy.example:3128\n"
		       "  no_proxy: [.internal, vpce.example.com, 10.0.0.5, '[fd00::5]', '*']\n");
	assert_string_equal(conf->cloud.proxy, "http://gpuburst:hunter22@proxy.example:3128");
	assert_int_equal(conf->cloud.n_no_proxy, 5);
	assert_string_equal(conf->cloud.no_proxy[3], "[fd00::5]");
	assert_string_equal(conf->cloud.no_proxy_hosts,
			    ".internal,vpce.example.com,10.0.0.5,[fd00::5],*");
	/* loading registered the password: no log line shows it */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/gb.log", dir);
	lo.file = path;
	assert_int_equal(gb_log_open("test-conf", &lo, NULL), GB_E_OK);
	gb_log_info("proxy_url url=%s", conf->cloud.proxy);
	gb_log_close();
	assert_int_equal(gb_file_read(path, 1 << 16, &text, NULL, NULL), GB_E_OK);
	assert_null(strstr(text, "hunter22"));
	assert_non_null(strstr(text, "url=http://gpuburst:[REDACTED]@proxy.example:3128"));
	free(text);
	unlink(path);
	rmdir(dir);
	gb_log_secret_clear();
	gb_conf_destroy(conf);
	/* a proxy without exceptions; "" is no proxy */
	conf = load_ok("cluster_name: p\ncloud: {proxy: 'https://proxy.example'}\n");
	assert_null(conf->cloud.no_proxy);
	assert_null(conf->cloud.no_proxy_hosts);
	gb_conf_destroy(conf);
	conf = load_ok("cluster_name: p\ncloud: {proxy: ''}\n");
	assert_null(conf->cloud.proxy);
	gb_conf_destroy(conf);
	for (size_t i = 0; i < GB_ARRAY_LEN(good); i++) {
		snprintf(yaml, sizeof(yaml), "cluster_name: p\ncloud: {proxy: '%s'}\n", good[i]);
		conf = load_ok(yaml);
		assert_string_equal(conf->cloud.proxy, good[i]);
		gb_conf_destroy(conf);
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(bad); i++) {
		snprintf(yaml, sizeof(yaml), "cluster_name: p\ncloud: {proxy: '%s'}\n", bad[i]);
		msg = load_bad(yaml);
		if (!strstr(msg, "t.yaml:2:16: 'proxy' must be an http:// or https:// URL"))
			fail_msg("%s: %s", bad[i], msg);
		if (strstr(msg, "hunter22"))
			fail_msg("password shown: %s", msg);
		free(msg);
	}
}

static void test_llm_defaults(void **state)
{
	struct gb_conf *conf;

	(void)state;
	conf = load_ok("cluster_name: l\nplanner: {kind: llm, llm: {provider: openai, model: m}}\n");
	assert_int_equal(conf->planner.kind, GB_PLANNER_LLM);
	assert_string_equal(conf->planner.llm.endpoint, "https://api.openai.com");
	gb_conf_destroy(conf);
	conf = load_ok("cluster_name: l\nplanner: {kind: llm, llm: {provider: openai, model: m,"
		       " endpoint: 'http://127.0.0.1:8080'}}\n");
	assert_string_equal(conf->planner.llm.endpoint, "http://127.0.0.1:8080");
	gb_conf_destroy(conf);
	conf = load_ok("cluster_name: l\nplanner: {kind: llm, llm: {provider: bedrock, model: m,"
		       " region: us-west-2}}\n");
	assert_int_equal(conf->planner.llm.provider, GB_LLM_BEDROCK);
	assert_null(conf->planner.llm.endpoint);
	assert_string_equal(conf->planner.llm.region, "us-west-2");
	gb_conf_destroy(conf);
}

/* Write [len] bytes of [c] to a new temporary file; RET its path (NEW). */
static char *temp_file(const char *content, size_t len)
{
	char *path = strdup("/tmp/gb-test-conf-XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	close(fd);
	return path;
}

static char *user_data_yaml(const char *path)
{
	char *yaml = NULL;

	assert_true(asprintf(&yaml, "cluster_name: u\nregions:\n"
			     "  - name: ap-south-1\n    user_data_file: %s\n", path) > 0);
	return yaml;
}

static void test_user_data_file(void **state)
{
	static const char script[] = "#!/bin/sh\necho {node}\n";
	char *big = calloc(1, 16385), *path, *yaml, *errs, *want = NULL;
	struct gb_conf *conf;

	(void)state;
	path = temp_file(script, strlen(script));
	yaml = user_data_yaml(path);
	conf = load_ok(yaml);
	assert_string_equal(conf->regions[0].user_data, script);
	/* a template naming {node} launches one instance per call */
	assert_true(conf->regions[0].user_data_per_node);
	gb_conf_destroy(conf);
	unlink(path);
	free(yaml);
	free(path);
	path = temp_file("#!/bin/sh\necho {nodes}\n", 20);
	yaml = user_data_yaml(path);
	conf = load_ok(yaml);
	assert_false(conf->regions[0].user_data_per_node);
	gb_conf_destroy(conf);
	unlink(path);
	free(yaml);
	free(path);

	memset(big, 'x', 16385);
	path = temp_file(big, 16385);
	yaml = user_data_yaml(path);
	errs = load_bad(yaml);
	assert_true(asprintf(&want, "t.yaml:4:21: 'user_data_file' %s is larger than EC2's limit of 16384 bytes\n",
			     path) > 0);
	assert_string_equal(errs, want);
	unlink(path);
	free(yaml);
	free(path);
	free(errs);
	free(want);
	free(big);

	path = temp_file("a\0b", 3);
	yaml = user_data_yaml(path);
	errs = load_bad(yaml);
	assert_non_null(strstr(errs, "contains a NUL byte"));
	unlink(path);
	free(yaml);
	free(path);
	free(errs);

	/* a FIFO: refused at once, naming it (the alarm fails a wait) */
	path = temp_file("", 0);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	yaml = user_data_yaml(path);
	alarm(20);
	errs = load_bad(yaml);
	alarm(0);
	assert_true(asprintf(&want, "t.yaml:4:21: 'user_data_file': %s is not a regular file (a FIFO)\n",
			     path) > 0);
	assert_string_equal(errs, want);
	unlink(path);
	free(yaml);
	free(path);
	free(errs);
	free(want);
}

#define PUBKEY_PEM "-----BEGIN PUBLIC KEY-----\n" \
	"MCowBQYDK2VuAyEAq2rVbBBpO5Zl0mVvMi2QeKuJ4fHjVZBoHuPvvJ3XFlk=\n" \
	"-----END PUBLIC KEY-----\n"

static char *munge_yaml(const char *file, const char *seal_to, const char *ud)
{
	char *yaml = NULL;

	assert_true(asprintf(&yaml, "cluster_name: u\ncloud:\n"
			     "  munge_key: {file: %s, seal_to: %s}\nregions:\n"
			     "  - name: ap-south-1\n    user_data_file: %s\n",
			     file, seal_to, ud) > 0);
	return yaml;
}

/* Load cloud.munge_key with [file] and [seal_to]; RET NEW the errors. */
static char *munge_bad(const char *file, const char *seal_to, const char *ud)
{
	char *yaml = munge_yaml(file, seal_to, ud), *errs = load_bad(yaml);

	free(yaml);
	return errs;
}

static void test_munge_key(void **state)
{
	unsigned char key[1025];
	char *pub = temp_file(PUBKEY_PEM, strlen(PUBKEY_PEM));
	char *ud = temp_file("#!/bin/sh\n# {munge_key}\n", 24);
	char *file, *yaml, *errs, *want = NULL, *sum;
	struct gb_conf *conf;

	(void)state;
	memset(key, 'k', sizeof(key));
	file = temp_file((char *)key, 32);	/* mkstemp: mode 0600 */
	yaml = munge_yaml(file, pub, ud);
	conf = load_ok(yaml);
	assert_string_equal(conf->cloud.munge_key.file, file);
	assert_string_equal(conf->cloud.munge_key.seal_to, pub);
	assert_true(conf->regions[0].user_data_munge_key);
	assert_false(conf->regions[0].user_data_per_node);
	sum = summary_of(conf);
	assert_true(asprintf(&want, "  munge_key: %s, sealed to %s\n", file, pub) > 0);
	assert_non_null(strstr(sum, want));
	free(sum);
	free(want);
	gb_conf_destroy(conf);
	free(yaml);

	/* munged's own rules: private, 32 to 1024 bytes */
	assert_int_equal(chmod(file, 0640), 0);
	errs = munge_bad(file, pub, ud);
	assert_true(asprintf(&want, "t.yaml:3:21: 'file' %s may be read or written by group or others (mode 0640): a munge key is private (chmod 0400)\n",
			     file) > 0);
	assert_string_equal(errs, want);
	free(want);
	free(errs);
	assert_int_equal(chmod(file, 0602), 0);
	errs = munge_bad(file, pub, ud);
	assert_non_null(strstr(errs, "(mode 0602)"));
	free(errs);
	unlink(file);
	free(file);
	file = temp_file((char *)key, 31);
	errs = munge_bad(file, pub, ud);
	assert_non_null(strstr(errs, "has 31 bytes: a munge key has 32 to 1024\n"));
	free(errs);
	unlink(file);
	free(file);
	file = temp_file((char *)key, 1025);
	errs = munge_bad(file, pub, ud);
	assert_non_null(strstr(errs, "has 1025 bytes: a munge key has 32 to 1024\n"));
	free(errs);
	errs = munge_bad("/tmp", pub, ud);
	assert_non_null(strstr(errs, "t.yaml:3:21: 'file' /tmp is not a regular file\n"));
	free(errs);
	unlink(file);
	free(file);

	/* seal_to: a public key, never the private half */
	file = temp_file((char *)key, 64);
	{
		char *priv = temp_file("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VuBCIEIA==\n"
				       "-----END PRIVATE KEY-----\n", 77);
		char *junk = temp_file("ssh-ed25519 AAAA\n", 17);

		errs = munge_bad(file, priv, ud);
		assert_non_null(strstr(errs, "holds a private key: give its public half (openssl pkey -in KEY -pubout)\n"));
		free(errs);
		errs = munge_bad(file, junk, ud);
		assert_non_null(strstr(errs, "holds no PEM public key (BEGIN PUBLIC KEY)\n"));
		free(errs);
		errs = munge_bad(file, "/nonexistent/node-key.pub", ud);
		assert_non_null(strstr(errs, "'seal_to': cannot open /nonexistent/node-key.pub"));
		free(errs);
		unlink(priv);
		unlink(junk);
		free(priv);
		free(junk);
	}
	/* a user who may not look into the key's directory cannot check it */
	if (geteuid() != 0) {
		char dir[] = "/tmp/gb-test-munge-XXXXXX", inner[64];
		int fd;

		assert_non_null(mkdtemp(dir));
		snprintf(inner, sizeof(inner), "%s/munge.key", dir);
		assert_true((fd = open(inner, O_WRONLY | O_CREAT, 0600)) >= 0);
		assert_int_equal(write(fd, key, 40), 40);
		close(fd);
		assert_int_equal(chmod(dir, 0), 0);
		yaml = munge_yaml(inner, pub, ud);
		conf = load_ok(yaml);
		gb_conf_destroy(conf);
		free(yaml);
		assert_int_equal(chmod(dir, 0700), 0);
		unlink(inner);
		rmdir(dir);
	}
	unlink(file);
	free(file);
	unlink(pub);
	free(pub);
	unlink(ud);
	free(ud);
}

static void test_file_errors(void **state)
{
	struct gb_errlist errs = { 0 };
	struct gb_conf *conf = NULL;
	char *big = malloc((1 << 20) + 2), *path;
	gb_error_t err;

	(void)state;
	assert_int_equal(gb_conf_load("/nonexistent/gpuburst.yaml", &conf, &errs, &err),
			 GB_E_NOTFOUND);
	assert_null(conf);
	assert_int_equal(errs.n, 1);
	assert_non_null(strstr(err.text, "/nonexistent/gpuburst.yaml"));
	assert_string_equal(err.text, errs.msgs[0]);
	gb_errlist_free(&errs);

	/* a directory cannot be read */
	assert_int_equal(gb_conf_load("/", &conf, NULL, &err), GB_E_IO);
	assert_null(conf);
	assert_string_equal(err.text, "/ is not a regular file (a directory)");
	/* nor a FIFO, which is not waited on (the alarm fails a wait) */
	path = temp_file("", 0);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(20);
	assert_int_equal(gb_conf_load(path, &conf, &errs, &err), GB_E_IO);
	alarm(0);
	assert_null(conf);
	assert_non_null(strstr(err.text, " is not a regular file (a FIFO)"));
	assert_string_equal(err.text, errs.msgs[0]);
	gb_errlist_free(&errs);
	unlink(path);
	free(path);

	memset(big, '#', (1 << 20) + 1);
	path = temp_file(big, (1 << 20) + 1);
	assert_int_equal(gb_conf_load(path, &conf, &errs, &err), GB_E_CONFIG);
	assert_null(conf);
	assert_non_null(strstr(err.text, "is larger than 1048576 bytes"));
	gb_errlist_free(&errs);
	assert_int_equal(gb_conf_load_string("big.yaml", big, (1 << 20) + 1, &conf,
					     &errs, &err), GB_E_CONFIG);
	assert_string_equal(err.text, "big.yaml: the file is larger than 1048576 bytes");
	gb_errlist_free(&errs);
	unlink(path);
	free(path);
	free(big);
}

/* errs and err may be NULL; the loader still fails cleanly. */
static void test_null_outputs(void **state)
{
	static const char bad[] = "cluster_name: x\nfoo: 1\n";
	static const char good[] = "cluster_name: x\n";
	struct gb_conf *conf = NULL;

	(void)state;
	assert_int_equal(gb_conf_load_string("n", bad, strlen(bad), &conf, NULL, NULL),
			 GB_E_CONFIG);
	assert_null(conf);
	assert_int_equal(gb_conf_load_string("n", good, strlen(good), &conf, NULL, NULL),
			 GB_E_OK);
	assert_non_null(conf);
	gb_conf_destroy(conf);
	gb_conf_destroy(NULL);
}

/* More than 100 errors: the first 100 and a count of the rest. */
static void test_error_cap(void **state)
{
	struct gb_buf y = GB_BUF_INIT;
	struct gb_errlist errs = { 0 };
	struct gb_conf *conf = NULL;

	(void)state;
	gb_buf_puts(&y, "cluster_name: x\n");
	for (int i = 0; i < 150; i++)
		gb_buf_printf(&y, "k%d: 1\n", i);
	assert_int_equal(gb_conf_load_string("cap.yaml", y.data, y.len, &conf, &errs,
					     NULL), GB_E_CONFIG);
	assert_int_equal(errs.n, 101);
	assert_string_equal(errs.msgs[100], "cap.yaml: 50 more errors not shown");
	assert_non_null(strstr(errs.msgs[99], "cap.yaml:101:1: unknown key 'k99'"));
	gb_errlist_free(&errs);
	gb_buf_free(&y);
}

static void test_messages_inline(void **state)
{
	char *e;

	(void)state;
	/* a scalar's control characters are not echoed raw */
	e = load_bad("cluster_name: \"a\\tb\"\n");
	assert_string_equal(e, "t.yaml:1:15: cluster_name 'a?b' is invalid: use 1 to 32 lower-case letters, digits and '-', not starting with '-' (it goes into cloud tags)\n");
	free(e);
	e = load_bad("cluster_name: x\nstate_dir: \"/a\\0b\"\n");
	assert_string_equal(e, "t.yaml:2:12: 'state_dir' must not contain a NUL character, got '/a?b'\n");
	free(e);
	/* a NUL in a key: not read as the key before it */
	e = load_bad("cluster_name: x\n\"state_dir\\0/elsewhere\": /tmp\n");
	assert_string_equal(e, "t.yaml:2:1: keys must not contain a NUL character, got 'state_dir?/elsewhere'\n");
	free(e);
	e = load_bad("cluster_name: x\nadmins: {users: [\"root\\x00x\"]}\n");
	assert_string_equal(e, "t.yaml:2:18: items of 'users' must not contain a NUL character, got 'root?x'\n");
	free(e);
	/* any explicit tag is an error, the core schema's too */
	e = load_bad("cluster_name: !!str x\n");
	assert_string_equal(e, "t.yaml:1:15: YAML tag '!!str' is not allowed (gpuburst.yaml uses no tags: write the value plainly, or quote a string)\n");
	free(e);
	e = load_bad("cluster_name: x\nadmins: !!python/object:os.system {users: [a]}\n");
	assert_string_equal(e, "t.yaml:2:9: YAML tag '!!python/object:os.system' is not allowed (gpuburst.yaml uses no tags: write the value plainly, or quote a string)\n");
	free(e);
	e = load_bad("cluster_name: x\npolicy: {batch_max: !!int 4, ice_cooldown: !!binary MTBt}\n");
	assert_string_equal(e, "t.yaml:2:21: YAML tag '!!int' is not allowed (gpuburst.yaml uses no tags: write the value plainly, or quote a string)\n"
			       "t.yaml:2:44: YAML tag '!!binary' is not allowed (gpuburst.yaml uses no tags: write the value plainly, or quote a string)\n"
			       "t.yaml:2:44: 'ice_cooldown' must be a duration (seconds, or a number with unit s, m, h or d such as 90s or 10m), got 'MTBt'\n");
	free(e);
	e = load_bad("cluster_name: x\nlog: {level: [info]}\n");
	assert_string_equal(e, "t.yaml:2:14: 'level' must be one of error, warning, notice, info, debug, got a list\n");
	free(e);
	e = load_bad("cluster_name: x\n? [a]\n: 1\n");
	assert_string_equal(e, "t.yaml:2:3: keys must be strings, got a list\n");
	free(e);
	e = load_bad("cluster_name: x\nadmins: {users: [a, ~]}\n");
	assert_string_equal(e, "t.yaml:2:21: items of 'users' must be strings, got nothing\n");
	free(e);
	e = load_bad("cluster_name: x\nlog: {syslog: on}\n");
	assert_string_equal(e, "t.yaml:2:15: 'syslog' must be a boolean (true, false, yes or no), got 'on'\n");
	free(e);
}

/* policy.prefer: its three forms, and what is refused with file:line:col */
static void test_prefer(void **state)
{
	static const char *const bad[] = {
		"near", "Nearest", "cheapest()", "nearest_within", "nearest_within()",
		"nearest_within(-1)", "nearest_within(1001)", "nearest_within(1e9%)",
		"nearest_within(10%%)", "nearest_within(10) ", "nearest_within( 10)",
		"nearest_within(0x10)", "nearest_within(inf)", "nearest_within(nan)",
		"nearest_within(10", "nearest_within(ten)", "",
	};
	enum gb_prefer pr = GB_PREFER_CHEAPEST;
	struct gb_conf *conf;
	double w = 5;
	char buf[48];

	(void)state;
	assert_int_equal(gb_conf_prefer_parse("nearest", &pr, &w), GB_E_OK);
	assert_int_equal(pr, GB_PREFER_NEAREST);
	assert_true(w == 0);
	assert_int_equal(gb_conf_prefer_parse("cheapest", &pr, &w), GB_E_OK);
	assert_int_equal(pr, GB_PREFER_CHEAPEST);
	assert_int_equal(gb_conf_prefer_parse("nearest_within(15)", &pr, &w), GB_E_OK);
	assert_int_equal(pr, GB_PREFER_NEAREST_WITHIN);
	assert_true(w == 15);
	assert_int_equal(gb_conf_prefer_parse("nearest_within(12.5%)", &pr, &w), GB_E_OK);
	assert_true(w == 12.5);
	assert_string_equal(gb_conf_prefer_name(pr, w, buf, sizeof(buf)), "nearest_within(12.5%)");
	assert_int_equal(gb_conf_prefer_parse("nearest_within(0)", &pr, &w), GB_E_OK);
	assert_true(w == 0);
	assert_int_equal(gb_conf_prefer_parse("nearest_within(1000%)", &pr, &w), GB_E_OK);
	assert_true(w == 1000);
	assert_string_equal(gb_conf_prefer_name(GB_PREFER_CHEAPEST, 0, buf, sizeof(buf)), "cheapest");
	assert_string_equal(gb_conf_prefer_name(GB_PREFER_NEAREST, 0, buf, sizeof(buf)), "nearest");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (gb_conf_prefer_parse(bad[i], &pr, &w) != GB_E_INVALID)
			fail_msg("'%s' was taken", bad[i]);
	}
	assert_int_equal(gb_conf_prefer_parse(NULL, &pr, &w), GB_E_INVALID);
	conf = load_ok("cluster_name: d\npolicy: {prefer: cheapest}\n");
	assert_int_equal(conf->policy.prefer, GB_PREFER_CHEAPEST);
	gb_conf_destroy(conf);
	conf = load_ok("cluster_name: d\npolicy: {prefer: \"nearest_within(7%)\"}\n");
	assert_int_equal(conf->policy.prefer, GB_PREFER_NEAREST_WITHIN);
	assert_true(conf->policy.prefer_within == 7);
	gb_conf_destroy(conf);
	assert_string_equal(load_bad_free("cluster_name: d\npolicy:\n  prefer: [cheapest]\n"),
			    "t.yaml:3:11: 'prefer' must be a string, got a list\n");
	assert_string_equal(load_bad_free("cluster_name: d\npolicy: {prefer: cheap}\n"),
			    "t.yaml:2:18: 'prefer' must be one of nearest, cheapest, nearest_within(PERCENT) with PERCENT between 0 and 1000, got 'cheap'\n");
}

static void test_names(void **state)
{
	enum gb_strategy s = GB_STRATEGY_DEFAULT;

	(void)state;
	assert_string_equal(gb_conf_env_name(GB_ENV_STAGING), "staging");
	assert_string_equal(gb_conf_env_name(GB_ENV_COUNT), "unknown");
	assert_string_equal(gb_conf_mode_name(GB_MODE_SINGLE_REGION), "single_region");
	assert_string_equal(gb_conf_strategy_name(GB_STRATEGY_PROBE_FILL), "probe_fill");
	assert_string_equal(gb_conf_strategy_name(GB_STRATEGY_COUNT), "unknown");
	assert_string_equal(gb_conf_locality_name(GB_LOCALITY_AZ), "az");
	assert_string_equal(gb_conf_market_name(GB_MARKET_ON_DEMAND), "on-demand");
	assert_string_equal(gb_conf_llm_provider_name(GB_LLM_NONE), "none");
	assert_string_equal(gb_conf_llm_provider_name(GB_LLM_ANTHROPIC), "anthropic");
	assert_string_equal(gb_conf_capacity_name(GB_CAPACITY_ON_DEMAND), "on-demand");
	assert_string_equal(gb_conf_capacity_name(GB_CAPACITY_SPOT), "spot");
	assert_string_equal(gb_conf_capacity_name(GB_CAPACITY_RESERVATION), "reservation");
	assert_string_equal(gb_conf_capacity_name(GB_CAPACITY_BLOCK), "capacity-block");
	assert_string_equal(gb_conf_capacity_name(GB_CAPACITY_COUNT), "unknown");
	for (int i = 0; i < GB_STRATEGY_COUNT; i++) {
		assert_int_equal(gb_conf_strategy_parse(gb_conf_strategy_name(i), &s), GB_E_OK);
		assert_int_equal(s, i);
	}
	assert_int_equal(gb_conf_strategy_parse("probe-fill", &s), GB_E_INVALID);
	assert_int_equal(gb_conf_strategy_parse(NULL, &s), GB_E_INVALID);
	assert_int_equal(s, GB_STRATEGY_ALL_OR_NOTHING);
}

static void test_path(void **state)
{
	(void)state;
	clear_env();
	assert_string_equal(gb_conf_path(NULL), GB_SYSCONFDIR "/gpuburst/gpuburst.yaml");
	assert_string_equal(gb_conf_path(""), GB_CONF_DEFAULT_PATH);
	setenv(GB_CONF_ENV_PATH, "/tmp/env.yaml", 1);
	assert_string_equal(gb_conf_path(NULL), "/tmp/env.yaml");
	assert_string_equal(gb_conf_path("/tmp/cli.yaml"), "/tmp/cli.yaml");
	clear_env();
}

struct key_seen {
	size_t n;
	bool timeout, subnets, consumer, level, retention, ladder, stopped_at_3;
};

static int key_cb(const struct gb_conf_key_info *k, void *arg)
{
	struct key_seen *s = arg;

	s->n++;
	assert_non_null(k->path);
	assert_non_null(k->type);
	assert_true(gb_str_has_prefix(k->path + strlen(k->path) -
					      strlen(k->name), k->name));
	if (strcmp(k->path, "policy.approval_timeout") == 0) {
		s->timeout = true;
		assert_string_equal(k->type, "duration");
		assert_string_equal(k->def, "auto");
		assert_true(k->auto_ok && k->has_range && !k->off_ok);
	}
	if (strcmp(k->path, "policy.retention") == 0) {
		s->retention = true;
		assert_string_equal(k->def, "90d");
		assert_true(k->off_ok && !k->auto_ok && k->min == 86400);
	}
	if (strcmp(k->path, "regions[].azs[].subnets") == 0) {
		s->subnets = true;
		assert_string_equal(k->type, "list of strings");
		assert_true(k->required);
	}
	if (strcmp(k->path, "fallback_groups.NAME.consumer_regions") == 0)
		s->consumer = true;
	if (strcmp(k->path, "nodesets[].capacity[].reservations.ids") == 0) {
		s->ladder = true;
		assert_string_equal(k->type, "list of strings");
		assert_false(k->required);
	}
	if (strcmp(k->path, "log.level") == 0) {
		s->level = true;
		assert_string_equal(k->values, "error, warning, notice, info, debug");
		assert_string_equal(k->def, "info");
	}
	return 0;
}

static int stop_cb(const struct gb_conf_key_info *k, void *arg)
{
	size_t *n = arg;

	(void)k;
	return ++*n == 3 ? 42 : 0;
}

static void test_keys(void **state)
{
	struct key_seen s = { 0 };
	size_t n = 0;

	(void)state;
	assert_int_equal(gb_conf_keys(key_cb, &s), 0);
	assert_true(s.timeout && s.subnets && s.consumer && s.level && s.retention && s.ladder);
	assert_true(s.n > 60);
	assert_int_equal(gb_conf_keys(stop_cb, &n), 42);
	assert_int_equal(n, 3);
}

static void test_path_slurm(void **state)
{
	char dir[] = "/tmp/gb-conf-path-XXXXXX", conf[PATH_MAX], yaml[PATH_MAX];
	char buf[PATH_MAX], tiny[8];
	FILE *fp;

	(void)state;
	clear_env();
	assert_non_null(mkdtemp(dir));
	snprintf(conf, sizeof(conf), "%s/slurm.conf", dir);
	snprintf(yaml, sizeof(yaml), "%s/gpuburst.yaml", dir);
	/* nothing next to slurm.conf: the default */
	assert_string_equal(gb_conf_path_slurm(conf, buf, sizeof(buf)),
			    GB_CONF_DEFAULT_PATH);
	assert_string_equal(gb_conf_path_slurm(NULL, buf, sizeof(buf)),
			    GB_CONF_DEFAULT_PATH);
	assert_string_equal(gb_conf_path_slurm("slurm.conf", buf, sizeof(buf)),
			    GB_CONF_DEFAULT_PATH);
	/* next to slurm.conf when it is there */
	assert_non_null(fp = fopen(yaml, "w"));
	fclose(fp);
	assert_string_equal(gb_conf_path_slurm(conf, buf, sizeof(buf)), yaml);
	/* $GPUBURST_CONF first */
	setenv(GB_CONF_ENV_PATH, "/tmp/env.yaml", 1);
	assert_string_equal(gb_conf_path_slurm(conf, buf, sizeof(buf)),
			    "/tmp/env.yaml");
	assert_null(gb_conf_path_slurm(conf, tiny, sizeof(tiny)));
	clear_env();
	assert_null(gb_conf_path_slurm(conf, tiny, sizeof(tiny)));
	unlink(yaml);
	rmdir(dir);
}

static void test_job_submit_and_size(void **state)
{
	struct gb_conf *conf = load_ok(
		"cluster_name: c\n"
		"regions: [{name: ap-south-1}]\n"
		"fallback_groups: {g: {consumer_regions: [ap-southeast-1],"
		" fallback_regions: [ap-south-1]}}\n"
		"nodesets:\n"
		"  - {name: a, nodes: 'a-[1-16],a-x', instance_type: g5.xlarge,"
		" home_region: ap-southeast-1}\n"
		"job_submit: {route_gpu_jobs: no}\n");

	(void)state;
	assert_false(conf->job_submit.route_gpu_jobs);
	assert_int_equal(gb_conf_nodeset_size(&conf->nodesets[0]), 17);
	assert_int_equal(gb_conf_nodeset_size(NULL), 0);
	gb_conf_destroy(conf);
	conf = load_ok("cluster_name: c\n");
	assert_true(conf->job_submit.route_gpu_jobs);
	gb_conf_destroy(conf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalog),
		cmocka_unit_test(test_prices_file_bad),
		cmocka_unit_test(test_prices_shipped),
		cmocka_unit_test(test_catalog_p),
		cmocka_unit_test(test_gres_name),
		cmocka_unit_test(test_type_allowed),
		cmocka_unit_test(test_type_check),
		cmocka_unit_test(test_nodeset_types),
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_catalog_file),
		cmocka_unit_test(test_catalog_file_bad),
		cmocka_unit_test(test_regions),
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_example),
		cmocka_unit_test(test_threshold_env),
		cmocka_unit_test(test_endpoint),
		cmocka_unit_test(test_partitions),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_proxy),
		cmocka_unit_test(test_llm_defaults),
		cmocka_unit_test(test_user_data_file),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_null_outputs),
		cmocka_unit_test(test_error_cap),
		cmocka_unit_test(test_messages_inline),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_prefer),
		cmocka_unit_test(test_path),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_path_slurm),
		cmocka_unit_test(test_job_submit_and_size),
		cmocka_unit_test(test_munge_key),
	};
	int failed;

	clear_env();
	failed = cmocka_run_group_tests_name("conf", tests, NULL, NULL);
	return failed + run_cases();
}
