/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_slurmif.c - libslurmif's pure parts: SLURM_RESUME_FILE parsing and
 * splitting, hostlists through libslurm, node reasons, the intent token
 *
 * Data-driven cases live in tests/data/resume/<case>/:
 *   input.json   the file slurmctld would pass (real 22.05 output, the
 *                documented 23.02+/26.05 examples, malformed variants)
 *   argv         the hostlist of argv[1]
 *   expected     "format F", "all_nodes H", one "job ID NODES [k=v...]"
 *                per group, "jobless NODES", "ignored NODES"; or a single
 *                "parse-error MESSAGE" / "split-error MESSAGE" line
 * No controller is needed: hostlists do not talk to slurmctld.
 */
#include "config.h"

#include <dirent.h>
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

#include "gb_resume_file.h"
#include "gb_slurm_release.h"
#include "gb_slurm.h"
#include "gb_str.h"
#include "gb_util.h"

static const char *top_srcdir(void)
{
	const char *s = getenv("GB_TOP_SRCDIR");

	return s && *s ? s : GB_TOP_SRCDIR;
}

static char *slurp(const char *path, size_t *len)
{
	char *data = NULL;
	gb_error_t e;

	if (gb_file_read(path, 4 << 20, &data, len, &e))
		fail_msg("%s", e.text);
	return data;
}

static char *compress(const struct gb_strv *v)
{
	char *s = NULL;
	gb_error_t e;

	if (gb_slurm_hostlist_compress(v->v, v->n, &s, &e))
		fail_msg("%s", e.text);
	return s;
}

static void put_opt(struct gb_buf *b, const char *k, const char *v)
{
	if (v)
		gb_buf_printf(b, " %s=%s", k, v);
}

static const struct gb_resume_job *job_of(const struct gb_resume_file *rf,
					  int64_t id)
{
	for (size_t i = 0; i < rf->n_jobs; i++) {
		if (rf->jobs[i].job_id == id)
			return &rf->jobs[i];
	}
	return NULL;
}

/* The text the case's "expected" file holds, computed from its input. */
static char *run_case(const char *dir)
{
	struct gb_resume_file *rf = NULL;
	struct gb_resume_split sp;
	struct gb_strv resume = { 0 };
	struct gb_buf out = GB_BUF_INIT;
	char path[4096], *text, *argv_s;
	size_t len;
	gb_error_t e;

	snprintf(path, sizeof(path), "%s/argv", dir);
	argv_s = slurp(path, NULL);
	argv_s[strcspn(argv_s, "\n")] = '\0';
	snprintf(path, sizeof(path), "%s/input.json", dir);
	text = slurp(path, &len);
	if (gb_resume_file_parse(text, len, &rf, &e)) {
		assert_int_equal(e.code, GB_E_PARSE);
		assert_null(rf);
		gb_buf_printf(&out, "parse-error %s\n", e.text);
		goto done;
	}
	gb_buf_printf(&out, "format %s\nall_nodes %s\n", gb_resume_format_name(rf->format),
		      rf->all_nodes);
	if (gb_slurm_hostlist_expand(argv_s, 100000, &resume, &e))
		fail_msg("argv: %s", e.text);
	if (gb_resume_split(rf, &resume, &sp, &e)) {
		gb_buf_printf(&out, "split-error %s\n", e.text);
		goto done;
	}
	for (size_t i = 0; i < sp.n_groups; i++) {
		const struct gb_resume_group *g = &sp.groups[i];
		char *nodes = compress(&g->nodes);

		if (g->job_id == 0) {
			gb_buf_printf(&out, "jobless %s\n", nodes);
		} else {
			const struct gb_resume_job *j = job_of(rf, g->job_id);

			assert_non_null(j);
			assert_ptr_equal(g->raw, j->raw);
			gb_buf_printf(&out, "job %lld %s", (long long)g->job_id, nodes);
			put_opt(&out, "alloc", j->nodes_alloc);
			put_opt(&out, "partition", j->partition);
			put_opt(&out, "features", j->features);
			put_opt(&out, "reservation", j->reservation);
			gb_buf_putc(&out, '\n');
		}
		free(nodes);
	}
	if (sp.ignored.n) {
		char *ign = compress(&sp.ignored);

		gb_buf_printf(&out, "ignored %s\n", ign);
		free(ign);
	}
	gb_resume_split_free(&sp);
done:
	gb_resume_file_free(rf);
	gb_strv_free(&resume);
	free(text);
	free(argv_s);
	assert_false(gb_buf_failed(&out));
	return gb_buf_steal(&out);
}

static void test_resume_cases(void **state)
{
	char dirpath[4096];
	struct dirent **ents = NULL;
	int n, failed = 0, valid = 0, invalid = 0;

	(void)state;
	snprintf(dirpath, sizeof(dirpath), "%s/tests/data/resume", top_srcdir());
	n = scandir(dirpath, &ents, NULL, alphasort);
	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		char dir[4608], path[4700], *want, *got;

		/* cases are the valid-* and invalid-* directories (SOURCES.md says where from) */
		if (strncmp(ents[i]->d_name, "valid-", 6) != 0 &&
		    strncmp(ents[i]->d_name, "invalid-", 8) != 0) {
			free(ents[i]);
			continue;
		}
		snprintf(dir, sizeof(dir), "%s/%s", dirpath, ents[i]->d_name);
		snprintf(path, sizeof(path), "%s/expected", dir);
		want = slurp(path, NULL);
		got = run_case(dir);
		if (strcmp(want, got) != 0) {
			print_error("case %s differs\n--- expected\n%s--- got\n%s---\n",
				    ents[i]->d_name, want, got);
			failed++;
		}
		if (strncmp(ents[i]->d_name, "valid-", 6) == 0) {
			valid++;
			assert_null(strstr(got, "error "));
		} else {
			invalid++;
			assert_true(strstr(got, "error ") != NULL);
		}
		free(want);
		free(got);
		free(ents[i]);
	}
	free(ents);
	print_message("resume-file cases: %d valid, %d invalid\n", valid, invalid);
	assert_int_equal(failed, 0);
	assert_true(valid >= 10 && invalid >= 10);
}

static void test_resume_read(void **state)
{
	struct gb_resume_file *rf = (void *)1;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_resume_file_read("/nonexistent/resume.json", &rf, &e),
			 GB_E_NOTFOUND);
	assert_null(rf);
}

/* Duplicate argv nodes and a split with no file at all. */
static void test_split_without_file(void **state)
{
	struct gb_strv resume = { 0 };
	struct gb_resume_split sp;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_slurm_hostlist_expand("g5-[1-3],g5-2", 100, &resume, &e), 0);
	assert_int_equal(resume.n, 4);
	assert_int_equal(gb_resume_split(NULL, &resume, &sp, &e), 0);
	assert_int_equal(sp.n_groups, 1);
	assert_int_equal(sp.groups[0].job_id, 0);
	assert_null(sp.groups[0].raw);
	assert_int_equal(sp.groups[0].nodes.n, 3);
	assert_string_equal(sp.groups[0].nodes.v[0], "g5-1");
	assert_string_equal(sp.groups[0].nodes.v[2], "g5-3");
	gb_resume_split_free(&sp);
	gb_strv_free(&resume);
}

/* 10000 nodes of one job: the split must not be quadratic. */
static void test_split_large(void **state)
{
	const char *json = "{\"all_nodes\":\"n-[1-10000]\",\"jobs\":[{\"job_id\":1,"
			   "\"nodes\":\"n-[5001-10000]\"},{\"job_id\":2,\"nodes\":\"n-[1-5000]\"}]}";
	struct gb_resume_file *rf = NULL;
	struct gb_strv resume = { 0 };
	struct gb_resume_split sp;
	double t0 = gb_time_mono();
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_resume_file_parse(json, strlen(json), &rf, &e), 0);
	assert_int_equal(gb_slurm_hostlist_expand(rf->all_nodes, 100000, &resume, &e), 0);
	assert_int_equal(gb_resume_split(rf, &resume, &sp, &e), 0);
	assert_int_equal(sp.n_groups, 2);
	assert_int_equal(sp.groups[0].job_id, 1);
	assert_int_equal(sp.groups[0].nodes.n, 5000);
	assert_string_equal(sp.groups[0].nodes.v[0], "n-5001");
	assert_int_equal(sp.groups[1].nodes.n, 5000);
	/* generous: catches an O(n^2) split (seconds), not machine speed */
	assert_true(gb_time_mono() - t0 < 2.0);
	gb_resume_split_free(&sp);
	gb_strv_free(&resume);
	gb_resume_file_free(rf);
}

static void test_hostlist(void **state)
{
	struct gb_strv v = { 0 };
	char *s = NULL;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_slurm_hostlist_expand("g5-[01-03],x", 10, &v, &e), 0);
	assert_int_equal(v.n, 4);
	assert_string_equal(v.v[0], "g5-01");
	assert_string_equal(v.v[3], "x");
	assert_int_equal(gb_slurm_hostlist_compress(v.v, v.n, &s, &e), 0);
	assert_string_equal(s, "g5-[01-03],x");
	free(s);
	gb_strv_free(&v);

	assert_int_equal(gb_slurm_hostlist_expand("a-[1-5]", 4, &v, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "limit 4"));
	assert_int_equal(gb_slurm_hostlist_expand("", 4, &v, &e), GB_E_INVALID);
	assert_int_equal(gb_slurm_hostlist_expand("a-[1-", 4, &v, &e), GB_E_INVALID);
	assert_int_equal(gb_slurm_hostlist_expand("a-1]", 4, &v, &e), GB_E_INVALID);
	assert_int_equal(gb_slurm_hostlist_expand("a-[1-[2]]", 4, &v, &e), GB_E_INVALID);
	assert_int_equal(v.n, 0);

	/* compress sorts and drops duplicates */
	assert_int_equal(gb_slurm_hostlist_expand("n-3,n-1,n-2,n-1,m", 10, &v, &e), 0);
	assert_int_equal(gb_slurm_hostlist_compress(v.v, v.n, &s, &e), 0);
	assert_string_equal(s, "m,n-[1-3]");
	free(s);
	gb_strv_free(&v);
}

/*
 * A request holds up to 100000 nodes, and libslurm refuses a bracket range
 * of more than 65536 hosts: the range is handed over in pieces, with the
 * same names (zero padding too) in the same order.
 */
static void test_hostlist_past_slurm_range(void **state)
{
	struct gb_strv v = { 0 };
	char *s = NULL;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_slurm_hostlist_expand("gpu-[1-100000]", 100000, &v, &e), 0);
	assert_int_equal(v.n, 100000);
	assert_string_equal(v.v[0], "gpu-1");
	assert_string_equal(v.v[65535], "gpu-65536");
	assert_string_equal(v.v[65536], "gpu-65537");
	assert_string_equal(v.v[99999], "gpu-100000");
	/* what compress prints is expanded again */
	assert_int_equal(gb_slurm_hostlist_compress(v.v, v.n, &s, &e), 0);
	assert_string_equal(s, "gpu-[1-100000]");
	gb_strv_free(&v);
	assert_int_equal(gb_slurm_hostlist_expand(s, 100000, &v, &e), 0);
	assert_int_equal(v.n, 100000);
	free(s);
	gb_strv_free(&v);

	assert_int_equal(gb_slurm_hostlist_expand("g-[000001-100000],x[7-8]", 100002, &v, &e), 0);
	assert_int_equal(v.n, 100002);
	assert_string_equal(v.v[0], "g-000001");
	assert_string_equal(v.v[65536], "g-065537");
	assert_string_equal(v.v[99999], "g-100000");
	assert_string_equal(v.v[100001], "x8");
	gb_strv_free(&v);

	/* two big ranges in one bracket, then a second bracket */
	assert_int_equal(gb_slurm_hostlist_expand("n[0-69999,200000-229999]", 100000, &v, &e), 0);
	assert_int_equal(v.n, 100000);
	assert_string_equal(v.v[0], "n0");
	assert_string_equal(v.v[69999], "n69999");
	assert_string_equal(v.v[70000], "n200000");
	assert_string_equal(v.v[99999], "n229999");
	gb_strv_free(&v);
	assert_int_equal(gb_slurm_hostlist_expand("r[1-2]n[00001-70000]", 140000, &v, &e), 0);
	assert_int_equal(v.n, 140000);
	assert_string_equal(v.v[0], "r1n00001");
	assert_string_equal(v.v[69999], "r1n70000");
	assert_string_equal(v.v[70000], "r2n00001");
	assert_string_equal(v.v[139999], "r2n70000");
	gb_strv_free(&v);

	/* past the limit: said so, not "malformed" */
	assert_int_equal(gb_slurm_hostlist_expand("gpu-[1-100001]", 100000, &v, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "100001 hosts (limit 100000)"));
	assert_int_equal(v.n, 0);
}

static void test_reason(void **state)
{
	char buf[GB_REASON_MAX], code[64], id[32], big[600];

	(void)state;
	gb_reason_capacity(buf, sizeof(buf), "InsufficientInstanceCapacity",
			   "no capacity in 3 regions", "68540dad20465e97");
	assert_string_equal(buf, "gpuburst: (Code:InsufficientInstanceCapacity) "
				 "no capacity in 3 regions req=68540dad20465e97");
	assert_true(gb_reason_is_capacity(buf, code, sizeof(code), id, sizeof(id)));
	assert_string_equal(code, "InsufficientInstanceCapacity");
	assert_string_equal(id, "68540dad20465e97");

	gb_reason_capacity(buf, sizeof(buf), NULL, "line1\nline2\t", "0123456789abcdef");
	assert_string_equal(buf, "gpuburst: (Code:Unfilled) line1 line2 req=0123456789abcdef");

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	gb_reason_capacity(buf, sizeof(buf), "VcpuLimitExceeded", big, "0123456789abcdef");
	assert_true(strlen(buf) < GB_REASON_MAX);
	assert_non_null(strstr(buf, " req=0123456789abcdef"));
	assert_int_equal(strncmp(buf, "gpuburst: (Code:VcpuLimitExceeded) xxx", 38), 0);

	assert_false(gb_reason_is_capacity("ResumeTimeout reached", code, sizeof(code),
					   id, sizeof(id)));
	assert_string_equal(code, "");
	assert_false(gb_reason_is_capacity(NULL, NULL, 0, NULL, 0));
	assert_false(gb_reason_is_capacity("gpuburst: node not in a nodeset", NULL, 0,
					   NULL, 0));
	/* a request id that is not 16 hex digits is not taken */
	assert_true(gb_reason_is_capacity("gpuburst: (Code:X) t req=nothex", code,
					  sizeof(code), id, sizeof(id)));
	assert_string_equal(code, "X");
	assert_string_equal(id, "");
}

/* The reasons gpuburst-node sets on its own node, as reconcile reads them. */
static void test_reason_agent(void **state)
{
	static const struct {
		const char *reason;
		enum gb_reason_agent kind;
		const char *id;
	} cases[] = {
		{ "gpuburst: spot interruption: instance i-0123456789abcdef0 at "
		  "2026-12-06T12:34:56Z", GB_REASON_AGENT_SPOT, "i-0123456789abcdef0" },
		{ "gpuburst: unhealthy: instance i-0123456789abcdef0: nvidia-smi: 3 GPUs, "
		  "expected 4", GB_REASON_AGENT_UNHEALTHY, "i-0123456789abcdef0" },
		{ "gpuburst: rebalance recommendation: instance i-01234567",
		  GB_REASON_AGENT_REBALANCE, "i-01234567" },
		{ "gpuburst: unhealthy: instance i-0a1b2c3d", GB_REASON_AGENT_UNHEALTHY,
		  "i-0a1b2c3d" },
		/* not the agent's: another prefix, another case, a malformed id */
		{ "gpuburst: instance i-0123456789abcdef0 gone from the cloud req=0123456789abcdef",
		  GB_REASON_AGENT_NONE, "" },
		{ "Gpuburst: spot interruption: instance i-0123456789abcdef0 at T",
		  GB_REASON_AGENT_NONE, "" },
		{ "gpuburst: spot interruption: instance i-0123456789ABCDEF0 at T",
		  GB_REASON_AGENT_NONE, "" },
		{ "gpuburst: spot interruption: instance i-0123 at T", GB_REASON_AGENT_NONE, "" },
		{ "gpuburst: spot interruption: instance i-0123456789abcdef01 at T",
		  GB_REASON_AGENT_NONE, "" },
		{ "gpuburst: spot interruption: instance i-0123456789abcdef0x", GB_REASON_AGENT_NONE,
		  "" },
		{ "gpuburst: spot interruption: instance ", GB_REASON_AGENT_NONE, "" },
		{ "gpuburst: unhealthy: i-0123456789abcdef0", GB_REASON_AGENT_NONE, "" },
		{ "", GB_REASON_AGENT_NONE, "" },
	};
	char id[GB_INSTANCE_ID_MAX], buf[GB_REASON_MAX], big[600];

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		snprintf(id, sizeof(id), "junk");
		assert_int_equal(gb_reason_agent(cases[i].reason, id), cases[i].kind);
		assert_string_equal(id, cases[i].id);
	}
	assert_int_equal(gb_reason_agent(NULL, id), GB_REASON_AGENT_NONE);
	assert_string_equal(id, "");

	/* reconcile's own unhealthy reason reads back as the agent's */
	gb_reason_unhealthy(buf, sizeof(buf), "i-0123456789abcdef0", "dcgmi diag:\nfailed\t");
	assert_string_equal(buf, "gpuburst: unhealthy: instance i-0123456789abcdef0: "
				 "dcgmi diag: failed");
	assert_int_equal(gb_reason_agent(buf, id), GB_REASON_AGENT_UNHEALTHY);
	assert_string_equal(id, "i-0123456789abcdef0");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	gb_reason_unhealthy(buf, sizeof(buf), "i-0123456789abcdef0", big);
	assert_int_equal(strlen(buf), GB_REASON_MAX - 1);
	assert_int_equal(gb_reason_agent(buf, id), GB_REASON_AGENT_UNHEALTHY);
	gb_reason_unhealthy(buf, 20, "i-0123456789abcdef0", "x");
	assert_string_equal(buf, "gpuburst: unhealthy");
}

static void test_intent(void **state)
{
	static const struct {
		const char *in;
		gb_err_t rc;
		const char *region;
	} cases[] = {
		{ "gpuburst:home=ap-south-1", GB_E_OK, "ap-south-1" },
		{ "routed gpuburst:home=us-east-1 by policy", GB_E_OK, "us-east-1" },
		{ "a;gpuburst:home=eu-west-2;b", GB_E_OK, "eu-west-2" },
		{ "a,gpuburst:home=eu-west-2,b", GB_E_OK, "eu-west-2" },
		{ "x\tgpuburst:home=ap-northeast-1\n", GB_E_OK, "ap-northeast-1" },
		{ "gpuburst:home=ap-south-1 gpuburst:home=ap-south-1", GB_E_OK, "ap-south-1" },
		{ NULL, GB_E_NOTFOUND, "" },
		{ "", GB_E_NOTFOUND, "" },
		{ "nothing here", GB_E_NOTFOUND, "" },
		{ "xgpuburst:home=ap-south-1", GB_E_NOTFOUND, "" },
		{ "gpuburst:home", GB_E_NOTFOUND, "" },
		{ "gpuburst:homes=ap-south-1", GB_E_NOTFOUND, "" },
		{ "gpuburst:home=", GB_E_INVALID, "" },
		{ "gpuburst:home=;x", GB_E_INVALID, "" },
		{ "gpuburst:home=AP-SOUTH-1", GB_E_INVALID, "" },
		{ "gpuburst:home=ap_south", GB_E_INVALID, "" },
		{ "gpuburst:home=ap-south-1:x", GB_E_INVALID, "" },
		{ "gpuburst:home=a gpuburst:home=b", GB_E_INVALID, "" },
		{ "gpuburst:home=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		  GB_E_INVALID, "" },
	};
	char buf[GB_REGION_NAME_MAX];
	gb_error_t e;

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		gb_err_t rc = gb_intent_home_region(cases[i].in, buf, sizeof(buf), &e);

		if (rc != cases[i].rc)
			fail_msg("case %zu \"%s\": rc %d, want %d", i,
				 cases[i].in ? cases[i].in : "(null)", rc, cases[i].rc);
		if (rc == GB_E_OK)
			assert_string_equal(buf, cases[i].region);
		else
			assert_string_equal(buf, "");
		if (rc == GB_E_INVALID)
			assert_non_null(strstr(e.text, "AdminComment"));
	}
}

/*
 * slurmctld unreachable (a closed port): a 1000-node update gives up at
 * once instead of retrying node by node (each RPC waits for libslurm's
 * connect retries).  SLURM_CONF names a private file: no lookup leaves
 * the host.
 */
/* The release table: versions parsed as Slurm prints them; each change from its release on. */
static void test_release(void **state)
{
	static const struct { const char *in; unsigned long want; } good[] = {
		{ "22.05", 0x160500 }, { "22.05.8", 0x160508 }, { "slurm 24.11.5", 0x180b05 },
		{ "slurm-wlm 22.05.8", 0x160508 }, { "24.11.5-4+deb13u1", 0x180b05 },
		{ "26.05.5\n", 0x1a0505 },
	};
	static const char *const bad[] = {
		"", "24", "24.", "24.11.", "x24.11", "24.11.5.1", "24.11 ", "1024.11", "24.1111",
		"21.08.8", "slurm", "24,11",
	};
	unsigned long v;
	char buf[32];
	gb_error_t e;

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(good); i++) {
		assert_int_equal(gb_slurm_version_parse(good[i].in, &v, &e), GB_E_OK);
		assert_int_equal(v, good[i].want);
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(bad); i++) {
		assert_int_equal(gb_slurm_version_parse(bad[i], &v, &e), GB_E_INVALID);
		assert_non_null(strstr(e.text, bad[i]));
	}
	assert_int_equal(gb_slurm_version_parse("21.08", &v, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "too old"));
	assert_string_equal(gb_slurm_version_str(0x180b05, buf, sizeof(buf)), "24.11.5");

	/* the releases CI runs, against the rows the code acts on */
	assert_false(gb_slurm_has(GB_SLURM_VERSION(22, 5, 8), GB_SLURM_CTLD_OWNS_CLOUD_ADDR));
	assert_false(gb_slurm_has(GB_SLURM_VERSION(23, 2, 7), GB_SLURM_CTLD_OWNS_CLOUD_ADDR));
	assert_true(gb_slurm_has(GB_SLURM_VERSION(23, 11, 0), GB_SLURM_CTLD_OWNS_CLOUD_ADDR));
	assert_true(gb_slurm_has(GB_SLURM_VERSION(24, 11, 5), GB_SLURM_RECONFIG_REEXEC));
	assert_false(gb_slurm_has(GB_SLURM_VERSION(22, 5, 8), GB_SLURM_CLOUD_VISIBLE));
	assert_true(gb_slurm_has(GB_SLURM_VERSION(23, 2, 0), GB_SLURM_CLOUD_VISIBLE));
	assert_false(gb_slurm_has(GB_SLURM_VERSION(24, 11, 5), GB_SLURM_REQUEUE_ON_RESUME_FAILURE));
	assert_true(gb_slurm_has(GB_SLURM_VERSION(26, 5, 5), GB_SLURM_REQUEUE_ON_RESUME_FAILURE));
	assert_false(gb_slurm_has(GB_SLURM_VERSION(26, 5, 5), GB_SLURM_N_CHANGES));
	/* every row has its release and its words; the table is in release order */
	for (int c = 0; c < GB_SLURM_N_CHANGES; c++) {
		assert_non_null(gb_slurm_change_since(c, buf, sizeof(buf)));
		assert_non_null(gb_slurm_change_what(c));
		if (c > 0)
			assert_true(gb_slurm_change_version(c) >= gb_slurm_change_version(c - 1));
	}
	assert_null(gb_slurm_change_since(GB_SLURM_N_CHANGES, buf, sizeof(buf)));
	assert_string_equal(gb_slurm_change_since(GB_SLURM_CTLD_OWNS_CLOUD_ADDR, buf, sizeof(buf)),
			    "23.11");
}

/* ActiveFeatures of a node of several types: its features but the other types. */
static void test_features_without(void **state)
{
	const char *other[] = { "p5e.48xlarge" };
	const char *both[] = { "p5e.48xlarge", "p5en.48xlarge" };
	char *f;

	(void)state;
	f = gb_slurm_features_without("h200,efa,p5e.48xlarge,p5en.48xlarge", other, 1);
	assert_string_equal(f, "h200,efa,p5en.48xlarge");
	free(f);
	/* a prefix of a feature is another feature */
	f = gb_slurm_features_without("p5e.48xlarge2,p5e.48xlarge", other, 1);
	assert_string_equal(f, "p5e.48xlarge2");
	free(f);
	f = gb_slurm_features_without("p5e.48xlarge,p5en.48xlarge", both, 2);
	assert_string_equal(f, "");
	free(f);
	f = gb_slurm_features_without("a,,b,", NULL, 0);
	assert_string_equal(f, "a,b");
	free(f);
	f = gb_slurm_features_without(NULL, other, 1);
	assert_string_equal(f, "");
	free(f);
}

static void test_update_unreachable(void **state)
{
	char dir[] = "/tmp/test_slurmif.XXXXXX", conf[128], fifo[128], want[256];
	struct gb_strv nodes = { 0 };
	size_t failed = 0;
	double t0;
	FILE *fp;
	gb_error_t e;
	gb_err_t rc;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(conf, sizeof(conf), "%s/slurm.conf", dir);
	fp = fopen(conf, "w");
	assert_non_null(fp);
	/* port 1 on loopback: nothing listens there (needs root to) */
	fprintf(fp, "ClusterName=unreach\nSlurmctldHost=localhost(127.0.0.1)\n"
		    "SlurmctldPort=1\nMessageTimeout=2\nAuthType=auth/none\n"
		    "NodeName=n-[1-1000] State=CLOUD\n"
		    "PartitionName=p Nodes=n-[1-1000]\n");
	fclose(fp);
	/* a FIFO as SLURM_CONF: refused before libslurm, which reads it as
	 * an empty file and exits the program (fatal) */
	snprintf(fifo, sizeof(fifo), "%s/fifo.conf", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	setenv("SLURM_CONF", fifo, 1);
	assert_int_equal(gb_slurm_init(&e), GB_E_SLURM);
	snprintf(want, sizeof(want), "%s is not a regular file (a FIFO)", fifo);
	assert_string_equal(e.text, want);
	unlink(fifo);
	setenv("SLURM_CONF", conf, 1);
	assert_int_equal(gb_slurm_init(&e), GB_E_OK);
	assert_int_equal(gb_slurm_hostlist_expand("n-[1-1000]", 1000, &nodes, &e), 0);
	t0 = gb_time_mono();
	rc = gb_slurm_nodes_update(GB_SLURM_DOWN, nodes.v, nodes.n, "test", &failed, &e);
	print_message("unreachable: rc=%d failed=%zu in %.1f s: %s\n", rc, failed,
		      gb_time_mono() - t0, e.text);
	assert_int_equal(rc, GB_E_SLURM);
	assert_int_equal(failed, 1000);
	/* two batches of 500 would be ~2 x MessageTimeout; one by one, hours */
	assert_true(gb_time_mono() - t0 < 60.0);
	gb_strv_free(&nodes);
	unlink(conf);
	rmdir(dir);
}

static void comment_is(const char *old, const char *value, const char *want)
{
	char *got = NULL;
	gb_error_t err;

	assert_int_equal(gb_approval_comment(old, value, &got, &err), GB_E_OK);
	assert_string_equal(got, want);
	free(got);
}

/* The plugin's "gpuburst:approval=" token (route.c writes it). */
static void test_approval_token(void **state)
{
	char buf[64];

	(void)state;
	assert_false(gb_approval_token(NULL, buf, sizeof(buf)));
	assert_string_equal(buf, "");
	assert_false(gb_approval_token("notgpuburst:approval=pending/3", buf, sizeof(buf)));
	assert_true(gb_approval_token("gpuburst:home=ap-south-1 gpuburst:approval=pending/3",
				      buf, sizeof(buf)));
	assert_string_equal(buf, "pending/3");
	assert_true(gb_approval_token("a;gpuburst:approval=approved/0123456789abcdef,b",
				      buf, sizeof(buf)));
	assert_string_equal(buf, "approved/0123456789abcdef");
	assert_true(gb_approval_token("gpuburst:approval=", buf, sizeof(buf)));
	assert_string_equal(buf, "");
	comment_is(NULL, "pending/3", "gpuburst:approval=pending/3");
	comment_is("", "x", "gpuburst:approval=x");
	comment_is("gpuburst:home=ap-south-1 gpuburst:approval=pending/3",
		   "approved/0123456789abcdef",
		   "gpuburst:home=ap-south-1 gpuburst:approval=approved/0123456789abcdef");
	comment_is("a gpuburst:approval=pending/3 b notgpuburst:approval=1", "denied/1",
		   "a b notgpuburst:approval=1 gpuburst:approval=denied/1");
}

/* GPUs of a job in each release's TRES spelling. */
static void test_tres_gpus(void **state)
{
	(void)state;
	assert_int_equal(gb_tres_gpus(NULL, NULL, 4), 0);
	assert_int_equal(gb_tres_gpus(NULL, "gres:gpu:a10g:1", 2), 2);	/* 22.05 */
	assert_int_equal(gb_tres_gpus(NULL, "gres/gpu:a10g:1", 2), 2);	/* 23.02+ */
	assert_int_equal(gb_tres_gpus(NULL, "gres/gpu:4", 3), 12);
	assert_int_equal(gb_tres_gpus(NULL, "gres:gpu", 3), 3);
	assert_int_equal(gb_tres_gpus("gres/gpu=16", "gres/gpu:4", 4), 16);
	assert_int_equal(gb_tres_gpus("gres:gpu:h100:8,gres:mps:100", NULL, 1), 8);
	assert_int_equal(gb_tres_gpus(NULL, "gres/gpu:a10g:1,gres/gpu:l4:2", 1), 3);
	assert_int_equal(gb_tres_gpus(NULL, "license/matlab:2", 2), 0);
	assert_int_equal(gb_tres_gpus(NULL, "gres/gpu:99999999", 2), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resume_cases),
		cmocka_unit_test(test_resume_read),
		cmocka_unit_test(test_split_without_file),
		cmocka_unit_test(test_split_large),
		cmocka_unit_test(test_hostlist),
		cmocka_unit_test(test_hostlist_past_slurm_range),
		cmocka_unit_test(test_reason),
		cmocka_unit_test(test_reason_agent),
		cmocka_unit_test(test_intent),
		cmocka_unit_test(test_approval_token),
		cmocka_unit_test(test_tres_gpus),
		cmocka_unit_test(test_release),
		cmocka_unit_test(test_features_without),
		cmocka_unit_test(test_update_unreachable),
	};

	return cmocka_run_group_tests_name("slurmif", tests, NULL, NULL);
}
