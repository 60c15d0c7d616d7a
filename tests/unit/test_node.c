/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_node.c - gpuburst-node's pure parts: node.yaml (every key, every
 * kind of mistake with its message), the user data's node list, the
 * nvidia-smi check, IMDS notice documents, the reasons and tag values
 * (contract sections 2 and 3), squeue's job ids
 */
#include "config.h"

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

#include "gb_http.h"
#include "gb_imds.h"
#include "gb_node_conf.h"
#include "gb_str.h"
#include "node_int.h"

/*****************************************************************************
 *  node.yaml
 *****************************************************************************/

static struct gb_node_conf *load_ok(const char *yaml)
{
	struct gb_node_conf *c = NULL;
	gb_error_t e;

	if (gb_node_conf_load_string("node.yaml", yaml, strlen(yaml), &c, NULL, &e))
		fail_msg("%s", e.text);
	return c;
}

static char *printed(const struct gb_node_conf *c)
{
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);

	assert_non_null(fp);
	gb_node_conf_print(c, fp);
	assert_int_equal(fclose(fp), 0);
	return out;
}

static const char defaults_printed[] =
	"imds:\n"
	"  endpoint: http://169.254.169.254\n"
	"  source_address: ~\n"
	"  timeout: 2s\n"
	"ec2:\n"
	"  endpoint: ~\n"
	"node:\n"
	"  tag_wait: 5m\n"
	"  set_hostname: true\n"
	"slurm:\n"
	"  conf: /etc/slurm/slurm.conf\n"
	"  slurmd: /usr/sbin/slurmd\n"
	"  scontrol: /usr/bin/scontrol\n"
	"  squeue: /usr/bin/squeue\n"
	"  slurmd_args: []\n"
	"munge:\n"
	"  key: /etc/munge/munge.key\n"
	"health:\n"
	"  nvidia_smi: nvidia-smi\n"
	"  timeout: 1m\n"
	"  dcgm: false\n"
	"  dcgmi: dcgmi\n"
	"  gpus: auto\n"
	"  model: auto\n"
	"notices:\n"
	"  interval: 5s\n"
	"  rebalance: drain\n";

static void test_conf_defaults(void **state)
{
	struct gb_node_conf *c = load_ok("");
	char *out = printed(c);

	(void)state;
	assert_string_equal(out, defaults_printed);
	assert_string_equal(c->imds.endpoint, "http://169.254.169.254");
	assert_null(c->imds.source_address);
	assert_true(c->imds.timeout == 2);
	assert_null(c->ec2.endpoint);
	assert_true(c->node.tag_wait == 300);
	assert_true(c->node.set_hostname);
	assert_string_equal(c->slurm.conf, "/etc/slurm/slurm.conf");
	assert_null(c->slurm.conf_server);
	assert_int_equal(c->slurm.n_slurmd_args, 0);
	assert_int_equal(c->health.gpus, GB_NODE_CONF_GPUS_AUTO);
	assert_null(c->health.model);
	assert_false(c->health.dcgm);
	assert_true(c->notices.interval == 5);
	assert_int_equal(c->notices.rebalance, GB_NODE_REBALANCE_DRAIN);
	assert_string_equal(c->munge.key, "/etc/munge/munge.key");
	assert_null(c->munge.sealed_with);	/* munge-key needs it */
	free(out);
	gb_node_conf_destroy(c);
	/* a comment-only file is an empty document: the defaults too */
	c = load_ok("# nothing\n");
	out = printed(c);
	assert_string_equal(out, defaults_printed);
	free(out);
	gb_node_conf_destroy(c);
}

static const char full_yaml[] =
	"imds: {endpoint: 'http://127.0.0.1:8080', source_address: 127.0.0.5, timeout: 3s}\n"
	"ec2: {endpoint: 'http://127.0.0.1:8080'}\n"
	"node: {tag_wait: 10s, set_hostname: false}\n"
	"slurm:\n"
	"  conf_server: ctl.example.com:6817\n"
	"  slurmd: /opt/slurm/sbin/slurmd\n"
	"  scontrol: /opt/slurm/bin/scontrol\n"
	"  squeue: /opt/slurm/bin/squeue\n"
	"  slurmd_args: [--extra, 'Feature=spot x']\n"
	"munge: {key: /run/munge.key, sealed_with: /etc/gpuburst/node-key.pem}\n"
	"health: {nvidia_smi: /usr/bin/nvidia-smi, timeout: 90, dcgm: true, dcgmi: dcgmi,\n"
	"         gpus: 4, model: \"A10G\"}\n"
	"notices: {interval: 1s, rebalance: ignore}\n";

static void test_conf_full(void **state)
{
	struct gb_node_conf *c = load_ok(full_yaml), *again;
	char *out = printed(c), *out2;

	(void)state;
	assert_string_equal(c->imds.source_address, "127.0.0.5");
	assert_true(c->imds.timeout == 3);
	assert_string_equal(c->ec2.endpoint, "http://127.0.0.1:8080");
	assert_true(c->node.tag_wait == 10);
	assert_false(c->node.set_hostname);
	assert_null(c->slurm.conf);	/* configless: no slurm.conf */
	assert_string_equal(c->slurm.conf_server, "ctl.example.com:6817");
	assert_int_equal(c->slurm.n_slurmd_args, 2);
	assert_string_equal(c->slurm.slurmd_args[1], "Feature=spot x");
	assert_null(c->slurm.slurmd_args[2]);
	assert_string_equal(c->munge.key, "/run/munge.key");
	assert_string_equal(c->munge.sealed_with, "/etc/gpuburst/node-key.pem");
	assert_true(c->health.timeout == 90);
	assert_true(c->health.dcgm);
	assert_int_equal(c->health.gpus, 4);
	assert_string_equal(c->health.model, "A10G");
	assert_true(c->notices.interval == 1);
	assert_int_equal(c->notices.rebalance, GB_NODE_REBALANCE_IGNORE);
	/* what check prints loads back to the same configuration */
	again = load_ok(out);
	out2 = printed(again);
	assert_string_equal(out, out2);
	assert_non_null(strstr(out, "  conf_server: ctl.example.com:6817\n"));
	assert_non_null(strstr(out, "    - \"Feature=spot x\"\n"));
	assert_non_null(strstr(out, "  gpus: 4\n"));
	assert_non_null(strstr(out, "munge:\n  key: /run/munge.key\n"
				    "  sealed_with: /etc/gpuburst/node-key.pem\n"));
	assert_string_equal(again->munge.sealed_with, "/etc/gpuburst/node-key.pem");
	free(out);
	free(out2);
	gb_node_conf_destroy(again);
	gb_node_conf_destroy(c);
}

struct bad_case {
	const char *yaml;
	const char *msg;	/* the first message, exactly */
};

static const struct bad_case bad_cases[] = {
	{ "imds: {endpiont: x}\n",
	  "node.yaml:1:8: unknown key 'endpiont' in imds (expected one of: endpoint, source_address, timeout)" },
	{ "imds: {timeout: 2x}\n",
	  "node.yaml:1:17: 'timeout' must be a duration (seconds, or a number with unit s, m, h or d such as 90s or 10m), got '2x'" },
	{ "imds: {timeout: 0s}\n",
	  "node.yaml:1:17: 'timeout' must be between 1s and 1m, got '0s'" },
	{ "imds: {timeout: 61}\n",
	  "node.yaml:1:17: 'timeout' must be between 1s and 1m, got '61'" },
	{ "imds: {source_address: 10.0.0.300}\n",
	  "node.yaml:1:24: 'source_address' must be an IPv4 or IPv6 address, got '10.0.0.300'" },
	{ "imds: {endpoint: ftp://x}\n",
	  "node.yaml:1:18: 'endpoint' must be an http:// or https:// URL, got 'ftp://x'" },
	{ "node: {set_hostname: 'yes'}\n",
	  "node.yaml:1:22: 'set_hostname' must be a boolean (true, false, yes or no), got 'yes' (a quoted string)" },
	{ "node: {tag_wait: -1s}\n",
	  "node.yaml:1:18: 'tag_wait' must be a duration (seconds, or a number with unit s, m, h or d such as 90s or 10m), got '-1s'" },
	{ "slurm: {conf: /etc/slurm.conf, conf_server: ctl}\n",
	  "node.yaml:1:45: 'conf_server' (configless Slurm) and 'conf' exclude each other: give one" },
	{ "slurm: {conf_server: 'ctl:99999'}\n",
	  "node.yaml:1:22: 'conf_server' must be host[:port] (a port 1 to 65535), got 'ctl:99999'" },
	{ "slurm: {slurmd: slurmd}\n",
	  "node.yaml:1:17: 'slurmd' must be an absolute path, got 'slurmd'" },
	{ "slurm: {slurmd_args: --x}\n",
	  "node.yaml:1:22: 'slurmd_args' must be a list of strings, got '--x'" },
	{ "munge: {key: munge.key}\n",
	  "node.yaml:1:14: 'key' must be an absolute path, got 'munge.key'" },
	{ "munge: {sealed_with: node-key.pem}\n",
	  "node.yaml:1:22: 'sealed_with' must be an absolute path, got 'node-key.pem'" },
	{ "munge: {sealed: /x}\n",
	  "node.yaml:1:9: unknown key 'sealed' in munge (expected one of: key, sealed_with)" },
	{ "health: {gpus: many}\n",
	  "node.yaml:1:16: 'gpus' must be auto or a number of GPUs from 0 to 64, got 'many'" },
	{ "health: {gpus: 65}\n",
	  "node.yaml:1:16: 'gpus' must be auto or a number of GPUs from 0 to 64, got '65'" },
	{ "health: {gpus: '8'}\n",
	  "node.yaml:1:16: 'gpus' must be auto or a number of GPUs from 0 to 64, got '8'" },
	{ "health: {nvidia_smi: bin/nvidia-smi}\n",
	  "node.yaml:1:22: 'nvidia_smi' must be an absolute path or a program name looked up in PATH, got 'bin/nvidia-smi'" },
	{ "notices: {rebalance: stop}\n",
	  "node.yaml:1:22: 'rebalance' must be one of drain, ignore, got 'stop'" },
	{ "notices: {interval: 0}\n",
	  "node.yaml:1:21: 'interval' must be between 1s and 5m, got '0'" },
	{ "notices: 5s\n",
	  "node.yaml:1:10: 'notices' must be a mapping, got '5s'" },
	{ "- a\n- b\n",
	  "node.yaml:1:1: the top level must be a mapping of keys, got a list" },
	{ "imds: {timeout: 2s}\nimds: {timeout: 3s}\n",
	  "node.yaml:2:1: duplicate key 'imds' at the top level (first at line 1)" },
	{ "health: !!str {gpus: 1}\n",
	  "node.yaml:1:9: YAML tag '!!str' is not allowed (gpuburst.yaml uses no tags: write the value plainly, or quote a string)" },
	{ "imds: {timeout: [2s}\n",
	  "node.yaml:1:20: YAML syntax error: did not find expected ',' or ']' while parsing a flow sequence" },
	{ "a: 1\n---\nb: 2\n",
	  "node.yaml:1:1: unknown key 'a' at the top level (expected one of: imds, ec2, node, slurm, munge, health, notices)" },
};

static void test_conf_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(bad_cases); i++) {
		const struct bad_case *b = &bad_cases[i];
		struct gb_node_conf *c = NULL;
		gb_error_t e;
		gb_err_t rc;

		rc = gb_node_conf_load_string("node.yaml", b->yaml, strlen(b->yaml), &c,
					      NULL, &e);
		if (rc != GB_E_CONFIG)
			fail_msg("case %zu: %s: loaded", i, b->yaml);
		assert_null(c);
		if (strcmp(e.text, b->msg))
			fail_msg("case %zu: %s\n  expected: %s\n  got:      %s", i, b->yaml,
				 b->msg, e.text);
	}
}

/* Several problems are all reported, in file order. */
static void test_conf_all_errors(void **state)
{
	static const char yaml[] =
		"notices: {interval: 0}\n"
		"imds: {bogus: 1, timeout: 1h}\n";
	struct gb_errlist errs = { 0 };
	struct gb_node_conf *c = NULL;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_node_conf_load_string("node.yaml", yaml, strlen(yaml), &c, &errs,
						  &e), GB_E_CONFIG);
	assert_int_equal(errs.n, 3);
	assert_true(gb_str_has_prefix(errs.msgs[0], "node.yaml:1:"));
	assert_true(gb_str_has_prefix(errs.msgs[1], "node.yaml:2:"));
	assert_true(gb_str_has_prefix(errs.msgs[2], "node.yaml:2:"));
	gb_errlist_free(&errs);
}

/* The file itself: missing, a directory, a FIFO. */
static void test_conf_files(void **state)
{
	char dir[] = "/tmp/test_node.XXXXXX", path[128];
	struct gb_node_conf *c = NULL;
	gb_error_t e;
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/none.yaml", dir);
	assert_int_equal(gb_node_conf_load(path, &c, NULL, &e), GB_E_NOTFOUND);
	assert_int_equal(gb_node_conf_load(dir, &c, NULL, &e), GB_E_IO);
	assert_non_null(strstr(e.text, "not a regular file"));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(gb_node_conf_load(path, &c, NULL, &e), GB_E_IO);
	assert_non_null(strstr(e.text, "not a regular file"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/node.yaml", dir);
	assert_non_null(fp = fopen(path, "w"));
	fputs("notices: {interval: 2s}\n", fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(gb_node_conf_load(path, &c, NULL, &e), GB_E_OK);
	assert_true(c->notices.interval == 2);
	assert_string_equal(c->path, path);
	gb_node_conf_destroy(c);
	unlink(path);
	rmdir(dir);
}

/*****************************************************************************
 *  The user data's node list
 *****************************************************************************/

static void nodes_ok(const char *ud, const char *want)
{
	struct gb_strv v = { 0 };
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t e;

	if (node_userdata_nodes(ud, strlen(ud), &v, &e))
		fail_msg("%s: %s", ud, e.text);
	for (size_t i = 0; i < v.n; i++)
		gb_buf_printf(&b, "%s%s", i ? "|" : "", v.v[i]);
	assert_string_equal(gb_buf_str(&b), want);
	gb_buf_free(&b);
	gb_strv_free(&v);
}

static void nodes_bad(const char *ud, gb_err_t code, const char *msg)
{
	struct gb_strv v = { 0 };
	gb_error_t e;

	assert_int_equal(node_userdata_nodes(ud, strlen(ud), &v, &e), code);
	assert_string_equal(e.text, msg);
	gb_strv_free(&v);
}

static void test_userdata(void **state)
{
	(void)state;
	nodes_ok("GPUBURST_NODES=g5-1 g5-2 g5-3\n", "g5-1|g5-2|g5-3");
	nodes_ok("#!/bin/sh\nset -e\nGPUBURST_NODES=\"a-1 b.2\"\n/usr/sbin/gpuburst-node run\n",
		 "a-1|b.2");
	nodes_ok("  export GPUBURST_NODES='x_1'\r\n", "x_1");
	nodes_ok("GPUBURST_NODES=n1\tn2   n3  ", "n1|n2|n3");
	/* the first line wins; a longer name is not the key */
	nodes_ok("GPUBURST_NODESX=z\nGPUBURST_NODES=a\nGPUBURST_NODES=b\n", "a");
	/* no trailing newline, the last line */
	nodes_ok("echo hi\nGPUBURST_NODES=last", "last");
	nodes_bad("#!/bin/sh\necho {nodes}\n", GB_E_NOTFOUND,
		  "the user data has no line GPUBURST_NODES=...");
	nodes_bad("", GB_E_NOTFOUND, "the user data has no line GPUBURST_NODES=...");
	nodes_bad("x\nGPUBURST_NODES=\n", GB_E_PARSE, "user data line 2: GPUBURST_NODES is empty");
	nodes_bad("GPUBURST_NODES=\"a b\n", GB_E_PARSE,
		  "user data line 1: GPUBURST_NODES: unterminated \" quote");
	nodes_bad("GPUBURST_NODES=a $(reboot)\n", GB_E_PARSE,
		  "user data line 1: GPUBURST_NODES: '$(reboot)' is not a node name (letters, digits, '.', '_', '-')");
	nodes_bad("GPUBURST_NODES=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
		  GB_E_PARSE,
		  "user data line 1: GPUBURST_NODES: node name 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is longer than 64 characters");
	assert_true(node_name_ok("g5-12"));
	assert_false(node_name_ok(""));
	assert_false(node_name_ok("a b"));
	assert_false(node_name_ok("a/b"));
}

/*****************************************************************************
 *  nvidia-smi
 *****************************************************************************/

static void gpu(const char *out, int n, const char *model, gb_err_t code,
		const char *summary)
{
	struct node_gpu_expect e = { n, model };
	char s[NODE_SUMMARY_MAX];

	assert_int_equal(node_gpu_check(out, &e, s, sizeof(s)), code);
	assert_string_equal(s, summary);
}

static void test_gpu_check(void **state)
{
	static const char h100x8[] =
		"NVIDIA H100 80GB HBM3\nNVIDIA H100 80GB HBM3\nNVIDIA H100 80GB HBM3\n"
		"NVIDIA H100 80GB HBM3\nNVIDIA H100 80GB HBM3\nNVIDIA H100 80GB HBM3\n"
		"NVIDIA H100 80GB HBM3\nNVIDIA H100 80GB HBM3\n";

	(void)state;
	gpu(h100x8, 8, "H100", GB_E_OK,
	    "expected 8 x H100, nvidia-smi shows 8 x NVIDIA H100 80GB HBM3");
	/* one GPU fell off the bus */
	gpu(h100x8 + strlen("NVIDIA H100 80GB HBM3\n"), 8, "H100", GB_E_INVALID,
	    "expected 8 x H100, nvidia-smi shows 7 x NVIDIA H100 80GB HBM3");
	/* case-insensitive, blanks and CRLF tolerated */
	gpu("  NVIDIA A10G \r\n", 1, "a10g", GB_E_OK,
	    "expected 1 x a10g, nvidia-smi shows 1 x NVIDIA A10G");
	gpu("NVIDIA T4G", 1, "T4g", GB_E_OK, "expected 1 x T4g, nvidia-smi shows 1 x NVIDIA T4G");
	/* the wrong model, the right count */
	gpu("NVIDIA A100-SXM4-40GB\nNVIDIA A100-SXM4-40GB\n", 2, "H100", GB_E_INVALID,
	    "expected 2 x H100, nvidia-smi shows 2 x NVIDIA A100-SXM4-40GB");
	/* a mix */
	gpu("NVIDIA L4\nTesla T4\nNVIDIA L4\n", 3, "L4", GB_E_INVALID,
	    "expected 3 x L4, nvidia-smi shows 2 x NVIDIA L4, 1 x Tesla T4");
	/* nothing at all, blank lines only */
	gpu("", 4, "L40S", GB_E_INVALID, "expected 4 x L40S, nvidia-smi shows no GPU");
	gpu("\n\n", 4, "L40S", GB_E_INVALID, "expected 4 x L40S, nvidia-smi shows no GPU");
	/* too many is not healthy either */
	gpu("NVIDIA L4\nNVIDIA L4\n", 1, "L4", GB_E_INVALID,
	    "expected 1 x L4, nvidia-smi shows 2 x NVIDIA L4");
	/* not a GPU name */
	gpu("NVIDIA L4\nbad\x01line\n", 2, "L4", GB_E_PARSE,
	    "expected 2 x L4, nvidia-smi shows a malformed line 2: 'bad?line'");
}

/*****************************************************************************
 *  IMDS notices
 *****************************************************************************/

static void test_notices(void **state)
{
	char action[NODE_TIME_MAX], t[NODE_TIME_MAX];
	gb_error_t e;

	(void)state;
	assert_int_equal(node_spot_parse("{\"action\": \"terminate\", \"time\": \"2026-12-06T12:34:56Z\"}",
					 action, t, &e), GB_E_OK);
	assert_string_equal(action, "terminate");
	assert_string_equal(t, "2026-12-06T12:34:56Z");
	assert_int_equal(node_spot_parse("{\"action\":\"stop\",\"time\":\"2026-12-06T12:34:56.500Z\"}",
					 action, t, &e), GB_E_OK);
	assert_string_equal(action, "stop");
	assert_string_equal(t, "2026-12-06T12:34:56Z");
	assert_int_equal(node_spot_parse("{\"action\": \"explode\", \"time\": \"2026-12-06T12:34:56Z\"}",
					 action, t, &e), GB_E_PARSE);
	assert_string_equal(e.text, "spot/instance-action: \"action\" is not terminate, stop or hibernate: 'explode'");
	assert_int_equal(node_spot_parse("{\"action\": \"terminate\", \"time\": \"soon\"}",
					 action, t, &e), GB_E_PARSE);
	assert_string_equal(e.text, "spot/instance-action: \"time\" is not a UTC time YYYY-MM-DDTHH:MM:SSZ: 'soon'");
	assert_int_equal(node_spot_parse("{\"action\": \"terminate\"}", action, t, &e), GB_E_PARSE);
	assert_string_equal(e.text, "spot/instance-action: no string \"time\"");
	assert_int_equal(node_spot_parse("[1]", action, t, &e), GB_E_PARSE);
	assert_string_equal(e.text, "spot/instance-action: not a JSON object");
	assert_int_equal(node_spot_parse("<html>", action, t, &e), GB_E_PARSE);
	assert_true(gb_str_has_prefix(e.text, "spot/instance-action: malformed JSON at line 1: "));
	assert_int_equal(node_rebalance_parse("{\"noticeTime\": \"2026-12-06T12:32:56Z\"}", t, &e),
			 GB_E_OK);
	assert_string_equal(t, "2026-12-06T12:32:56Z");
	assert_int_equal(node_rebalance_parse("{\"time\": \"2026-12-06T12:32:56Z\"}", t, &e),
			 GB_E_PARSE);
	assert_string_equal(e.text, "events/recommendations/rebalance: no string \"noticeTime\"");
}

static void test_job_ids(void **state)
{
	struct gb_strv ids = { 0 };
	gb_error_t e;

	(void)state;
	assert_int_equal(node_job_ids("12\n13\n\n 7 \n", &ids, &e), GB_E_OK);
	assert_int_equal(ids.n, 3);
	assert_string_equal(ids.v[0], "12");
	assert_string_equal(ids.v[2], "7");
	gb_strv_free(&ids);
	assert_int_equal(node_job_ids("", &ids, &e), GB_E_OK);
	assert_int_equal(ids.n, 0);
	assert_int_equal(node_job_ids("12\nslurm_load_jobs error: x\n", &ids, &e), GB_E_PARSE);
	assert_string_equal(e.text, "squeue line 2: not a job id: 'slurm_load_jobs error: x'");
	gb_strv_free(&ids);
	assert_int_equal(node_job_ids("-3\n", &ids, &e), GB_E_PARSE);
	gb_strv_free(&ids);
}

/*****************************************************************************
 *  Reasons and tags (contract sections 2 and 3)
 *****************************************************************************/

static void test_texts(void **state)
{
	struct node_gpu_expect e8 = { 8, "H100" }, e0 = { 0, "GPU" };
	struct gb_strv rq = { 0 }, refused = { 0 };
	char b[1024], longsum[600];

	(void)state;
	assert_string_equal(node_reason_spot(b, sizeof(b), "i-0abc", "2026-12-06T12:34:56Z"),
			    "gpuburst: spot interruption: instance i-0abc at 2026-12-06T12:34:56Z");
	assert_string_equal(node_reason_rebalance(b, sizeof(b), "i-0abc"),
			    "gpuburst: rebalance recommendation: instance i-0abc");
	assert_string_equal(node_reason_unhealthy(b, sizeof(b), "i-0abc",
						  "expected 8 x H100, nvidia-smi shows 7 x NVIDIA H100 80GB HBM3"),
			    "gpuburst: unhealthy: instance i-0abc: expected 8 x H100, nvidia-smi shows 7 x NVIDIA H100 80GB HBM3");
	assert_string_equal(node_tag_ok(b, sizeof(b), "p5-1", &e8),
			    "ok: node p5-1, 8 x H100, slurmd started");
	assert_string_equal(node_tag_ok(b, sizeof(b), "c-1", &e0),
			    "ok: node c-1, no GPU, slurmd started");
	assert_string_equal(node_tag_unhealthy(b, sizeof(b), "expected 1 x L4, nvidia-smi shows no GPU"),
			    "unhealthy: expected 1 x L4, nvidia-smi shows no GPU");
	assert_string_equal(node_tag_interrupted(b, sizeof(b), "terminate", "2026-12-06T12:34:56Z",
						 true, &rq, &refused, true),
			    "interrupted: spot terminate at 2026-12-06T12:34:56Z; drained; requeued none");
	gb_strv_add(&rq, "12");
	gb_strv_add(&rq, "13");
	assert_string_equal(node_tag_interrupted(b, sizeof(b), "terminate", "2026-12-06T12:34:56Z",
						 true, &rq, &refused, true),
			    "interrupted: spot terminate at 2026-12-06T12:34:56Z; drained; requeued 12,13");
	gb_strv_add(&refused, "14");
	assert_string_equal(node_tag_interrupted(b, sizeof(b), "stop", "2026-12-06T12:34:56Z",
						 false, &rq, &refused, false),
			    "interrupted: spot stop at 2026-12-06T12:34:56Z; drain failed; requeued 12,13; not requeued 14; power down failed");
	assert_string_equal(node_tag_rebalance(b, sizeof(b), "2026-12-06T12:32:56Z", true, true),
			    "rebalance: recommendation at 2026-12-06T12:32:56Z; power down asap");
	assert_string_equal(node_tag_rebalance(b, sizeof(b), "2026-12-06T12:32:56Z", false, false),
			    "rebalance: recommendation at 2026-12-06T12:32:56Z; ignored (notices.rebalance: ignore)");
	/* a tag value is cut to 255 characters, never inside a UTF-8 one */
	memset(longsum, 'x', sizeof(longsum) - 1);
	longsum[sizeof(longsum) - 1] = '\0';
	assert_int_equal(strlen(node_tag_unhealthy(b, sizeof(b), longsum)), NODE_TAG_MAX);
	assert_true(gb_str_has_prefix(b, "unhealthy: xxx"));
	memset(b, 'a', 254);
	memcpy(b + 254, "\xc3\xa9z", 4);	/* 'é' straddles byte 255 */
	node_text_cut(b, NODE_TAG_MAX);
	assert_int_equal(strlen(b), 254);
	gb_strv_free(&rq);
	gb_strv_free(&refused);
}

/*****************************************************************************
 *  The munge key, PATH lookup
 *****************************************************************************/

static void test_munge_which(void **state)
{
	char dir[] = "/tmp/test_node.XXXXXX", key[128], *p;
	gb_error_t e;
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(key, sizeof(key), "%s/munge.key", dir);
	assert_int_equal(node_munge_check(key, &e), GB_E_NOTFOUND);
	assert_non_null(fp = fopen(key, "w"));
	fputs("0123456789abcdef0123456789abcdef", fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(chmod(key, 0644), 0);
	assert_int_equal(node_munge_check(key, &e), GB_E_PERM);
	assert_non_null(strstr(e.text, "mode 0644 lets group or others at it"));
	assert_int_equal(chmod(key, 0400), 0);
	assert_int_equal(node_munge_check(key, &e), GB_E_OK);
	assert_int_equal(node_munge_check(dir, &e), GB_E_IO);
	assert_non_null(strstr(e.text, "not a regular file"));
	unlink(key);
	rmdir(dir);
	assert_null(node_which("no-such-program-gpuburst"));
	assert_non_null(p = node_which("sh"));
	assert_true(p[0] == '/');
	free(p);
	assert_non_null(p = node_which("/x/y"));
	assert_string_equal(p, "/x/y");
	free(p);
}

/*
 * munge-key refuses before it asks IMDS: no munge.sealed_with, a private
 * key group or others may use, a missing one.  (The IMDS part, and the
 * key written, are node-munge-key.sh's.)
 */
static void test_munge_key_refused(void **state)
{
	char dir[] = "/tmp/test_node.XXXXXX", yaml[512], priv[128];
	struct gb_node_conf *c;
	gb_error_t e;
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(priv, sizeof(priv), "%s/node-key.pem", dir);
	/* an endpoint nothing listens on: a test that reached it would fail */
	snprintf(yaml, sizeof(yaml), "imds: {endpoint: 'http://127.0.0.1:1'}\n"
		 "munge: {key: %s/munge.key}\n", dir);
	c = load_ok(yaml);
	assert_int_equal(node_munge_key(c, &e), GB_E_CONFIG);
	assert_non_null(strstr(e.text, "munge.sealed_with is not set in node.yaml"));
	gb_node_conf_destroy(c);
	snprintf(yaml, sizeof(yaml), "imds: {endpoint: 'http://127.0.0.1:1'}\n"
		 "munge: {key: %s/munge.key, sealed_with: %s}\n", dir, priv);
	c = load_ok(yaml);
	assert_int_equal(node_munge_key(c, &e), GB_E_NOTFOUND);
	assert_non_null(strstr(e.text, "node-key.pem"));
	assert_non_null(fp = fopen(priv, "w"));
	fputs("-----BEGIN PRIVATE KEY-----\n", fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(chmod(priv, 0640), 0);
	assert_int_equal(node_munge_key(c, &e), GB_E_PERM);
	assert_non_null(strstr(e.text, "mode 0640 lets group or others at the private key"));
	assert_int_equal(chmod(priv, 0604), 0);
	assert_int_equal(node_munge_key(c, &e), GB_E_PERM);
	gb_node_conf_destroy(c);
	unlink(priv);
	/* nothing was written */
	assert_int_equal(rmdir(dir), 0);
}

/* The source address of IMDS connections: an IP literal or nothing. */
static void test_local_address(void **state)
{
	struct gb_http_opts ho = { .local_address = "127.0.0.5" };
	struct gb_imds_opts io = { .endpoint = "http://127.0.0.1:1", .local_address = "::1" };
	gb_http_t *h = NULL;
	gb_imds_t *m = NULL;
	char *body = NULL;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_http_create("http://127.0.0.1:1", &ho, &h, &e), GB_E_OK);
	gb_http_destroy(h);
	ho.local_address = "eth0";
	assert_int_equal(gb_http_create("http://127.0.0.1:1", &ho, &h, &e), GB_E_INVALID);
	assert_string_equal(e.text, "local address \"eth0\": need an IPv4 or IPv6 address");
	assert_int_equal(gb_imds_create(&io, &m, &e), GB_E_OK);
	/* nothing listens on port 1: a transport error naming the path, no hang */
	assert_int_not_equal(gb_imds_get(m, "meta-data/instance-id", &body, NULL, &e), GB_E_OK);
	assert_null(body);
	assert_true(gb_str_has_prefix(e.text, "IMDS api/token: "));
	gb_imds_destroy(m);
	io.local_address = "10.0.0.300";
	assert_int_equal(gb_imds_create(&io, &m, &e), GB_E_INVALID);
	assert_null(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conf_defaults),
		cmocka_unit_test(test_conf_full),
		cmocka_unit_test(test_conf_bad),
		cmocka_unit_test(test_conf_all_errors),
		cmocka_unit_test(test_conf_files),
		cmocka_unit_test(test_userdata),
		cmocka_unit_test(test_gpu_check),
		cmocka_unit_test(test_notices),
		cmocka_unit_test(test_job_ids),
		cmocka_unit_test(test_texts),
		cmocka_unit_test(test_munge_which),
		cmocka_unit_test(test_munge_key_refused),
		cmocka_unit_test(test_local_address),
	};

	return cmocka_run_group_tests_name("node", tests, NULL, NULL);
}
