/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * llm-bench.c - what the LLM planner costs a resume request, per provider,
 * next to the heuristic planner
 *
 * Two measurements per planner (heuristic; openai, anthropic, bedrock
 * against the scripted LLM server of the tests, at a model latency of 0
 * and of --latency-ms):
 *
 *  plan   the planning step alone: facts -> plan -> gb_plan_validate()
 *         (the heuristic, or gb_llm_propose(): prompt, HTTP on loopback,
 *         strict parsing), no state file, no cloud;
 *  resume a whole gb_orch_resume() of a 4-node request against
 *         gpuburst-cloudsim (zero cloud latency): candidates, preflight,
 *         plan, launch, records.  The instances are terminated after each
 *         request, outside the timing.
 *
 * Everything runs on 127.0.0.1; the simulator is started and stopped by
 * pid.  Output: one Markdown table row per planner and latency.
 *
 *   bench/llm/llm-bench --srcdir SRC --builddir BUILD [--requests N]
 *       [--slow-requests N] [--latency-ms MS]
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gb_conf.h"
#include "gb_llm.h"
#include "gb_log.h"
#include "gb_orch.h"
#include "gb_plan.h"
#include "gb_simh.h"
#include "gb_state.h"
#include "gb_str.h"
#include "gb_util.h"
#include "llmsrv.h"

#define KEY "sk-bench-0000000000000000"
#define MODEL_BEDROCK "us.anthropic.claude-sonnet-4-20250514-v1:0"
#define NODES 4

static struct gb_simh sim;
static char tmpdir[256];
static const char *srcdir, *builddir;
static int state_no, node_no = 1;

static const char plan_json[] =
	"{\"instance_type\":\"g5.xlarge\",\"total\":4,\"steps\":["
	"{\"region\":\"ap-northeast-1\",\"az\":\"ap-northeast-1a\",\"subnet\":\"subnet-apne1a-1\","
	"\"batch\":4,\"reason\":\"room in Tokyo\"},"
	"{\"region\":\"ap-south-1\",\"az\":\"ap-south-1a\",\"subnet\":\"subnet-aps1a-1\","
	"\"batch\":4,\"reason\":\"backup\"}],\"rationale\":\"Tokyo had room.\"}";

static void die(const char *what)
{
	fprintf(stderr, "llm-bench: %s\n", what);
	gb_simh_stop(&sim);
	exit(1);
}

static char *fill(const char *text, const char *const *subst)
{
	struct gb_buf b = GB_BUF_INIT;
	const char *p = text;

	while (*p) {
		bool done = false;

		for (size_t i = 0; subst[i] && !done; i += 2) {
			size_t l = strlen(subst[i]);

			if (strncmp(p, subst[i], l) == 0) {
				gb_buf_puts(&b, subst[i + 1]);
				p += l;
				done = true;
			}
		}
		if (!done)
			gb_buf_putc(&b, *p++);
	}
	return gb_buf_steal(&b);
}

/* The test config, planner.kind llm for [pv] at [url] (NONE: heuristic). */
static struct gb_conf *load_conf(enum gb_llm_provider pv, const char *url, const char *keyfile)
{
	char path[512], keyline[400], *text = NULL, *t;
	struct gb_conf *c = NULL;
	size_t len;
	gb_error_t err;

	snprintf(path, sizeof(path), "%s/tests/data/llm/gpuburst.yaml", srcdir);
	if (gb_file_read(path, 1 << 20, &text, &len, &err))
		die(err.text);
	keyline[0] = '\0';
	if (pv == GB_LLM_OPENAI || pv == GB_LLM_ANTHROPIC)
		snprintf(keyline, sizeof(keyline), "    api_key_file: %s", keyfile);
	{
		const char *const subst[] = {
			"@ENDPOINT@", sim.endpoint,
			"@KIND@", pv == GB_LLM_NONE ? "heuristic" : "llm",
			"@PROVIDER@", pv == GB_LLM_NONE ? "openai" : gb_conf_llm_provider_name(pv),
			"@LLM_ENDPOINT@", url ? url : "http://127.0.0.1:9",
			"@MODEL@", pv == GB_LLM_BEDROCK ? MODEL_BEDROCK : "bench-model",
			"@API_KEY_LINE@", keyline, NULL,
		};

		t = fill(text, subst);
	}
	free(text);
	/* a slow model must not hit the test config's 2 s timeout */
	{
		char *p = strstr(t, "\n    timeout: 2s");	/* planner.llm's */

		if (!p)
			die("no planner.llm.timeout in the test config");
		memcpy(p, "\n    timeout: 9s", 16);
	}
	if (gb_conf_load_string("gpuburst.yaml", t, strlen(t), &c, NULL, &err))
		die(err.text);
	free(t);
	return c;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct stats {
	double mean, p50, p90, max;
};

static struct stats summarize(double *v, int n)
{
	struct stats s = { 0, 0, 0, 0 };

	if (n <= 0)
		return s;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	for (int i = 0; i < n; i++)
		s.mean += v[i];
	s.mean /= n;
	s.p50 = v[n / 2];
	s.p90 = v[(int)floor(0.9 * (n - 1))];
	s.max = v[n - 1];
	return s;
}

/* The planning step alone, [n] times: seconds per plan in [v]. */
static void bench_plan(struct gb_conf *conf, gb_llm_t *l, int n, double *v, size_t *prompt)
{
	struct gb_candidates cand;
	struct gb_plan_facts f;
	struct gb_plan_scope sc = { 0 };
	char summary[GB_PLAN_SUMMARY_MAX + 1], id[GB_REQUEST_ID_LEN + 1];
	gb_error_t e;

	if (gb_plan_candidates(conf, "ap-southeast-1", GB_MODE_MULTI_REGION, &cand, &e) ||
	    gb_plan_facts_build(conf, &cand, "g5.xlarge", NODES, 1, GB_LOCALITY_NONE, NULL,
				gb_time_now(), &f, &e))
		die(e.text);
	sc.conf = conf;
	sc.instance_type = "g5.xlarge";
	sc.target = NODES;
	sc.allowed = cand.allowed;
	sc.n_allowed = cand.n_allowed;
	if (prompt && l) {
		char *sys = NULL, *user = NULL;

		gb_plan_capacity_summary(&f, summary, sizeof(summary));
		if (gb_llm_prompt(&f, summary, &sys, &user, &e))
			die(e.text);
		*prompt = strlen(sys) + strlen(user);
		free(sys);
		free(user);
	}
	for (int i = 0; i < n; i++) {
		struct gb_plan *p = NULL;
		double t0 = gb_time_mono();
		gb_err_t rc;

		snprintf(id, sizeof(id), "%016x", (unsigned)i + 1);
		f.request_id = id;
		gb_plan_capacity_summary(&f, summary, sizeof(summary));
		rc = l ? gb_llm_propose(&f, summary, &p, l, &e) : gb_plan_heuristic(&f, &p, &e);
		if (rc || gb_plan_validate(&sc, p, NULL, &e))
			die(e.text);
		v[i] = gb_time_mono() - t0;
		gb_plan_free(p);
	}
	gb_plan_facts_clear(&f);
	gb_plan_candidates_clear(&cand);
}

/* Whole resume requests, [n] times: seconds per request in [v]. */
static void bench_resume(struct gb_conf *conf, int n, double *v, const char *expect_planner)
{
	char statepath[400], nodes[64];
	gb_state_t *st = NULL;
	gb_orch_t *o = NULL;
	struct gb_orch_opts oo = { 0 };
	gb_error_t e;

	snprintf(statepath, sizeof(statepath), "%s/state-%d.db", tmpdir, ++state_no);
	if (gb_state_open(statepath, 0, 5000, &st, &e))
		die(e.text);
	oo.conf = conf;
	oo.state_path = statepath;
	if (gb_orch_create(&oo, &o, &e))
		die(e.text);
	for (int i = 0; i < n; i++) {
		struct gb_request req = { 0 };
		struct gb_orch_result res = { 0 };
		struct gb_orch_resume_opts ro = GB_ORCH_RESUME_OPTS_INIT;
		double t0;

		snprintf(nodes, sizeof(nodes), "g5-[%d-%d]", node_no, node_no + NODES - 1);
		node_no += NODES;
		req.kind = GB_REQ_RESUME;
		req.state = GB_RSTATE_RUNNING;
		req.nodeset = "g5";
		req.nodes = nodes;
		req.node_count = NODES;
		if (gb_state_request_add(st, &req, &e))
			die(e.text);
		t0 = gb_time_mono();
		if (gb_orch_resume(o, st, &req, &ro, &res, &e))
			die(e.text);
		v[i] = gb_time_mono() - t0;
		if (res.result != GB_RESULT_SUCCESS)
			die(res.reason);
		if (i == 0 && res.trace.n) {
			bool seen = false;

			for (size_t k = 0; k < res.trace.n && !seen; k++)
				seen = strstr(res.trace.v[k], "status=used") &&
				       strstr(res.trace.v[k], expect_planner);
			if (!seen)
				die("the plan used was not the expected planner's");
		}
		/* give the capacity back, untimed */
		{
			const char *names[NODES];

			for (size_t k = 0; k < res.n_nodes && k < NODES; k++)
				names[k] = res.nodes[k].node;
			gb_orch_terminate(o, st, req.id, names, res.n_nodes, "bench", 0, NULL, NULL);
		}
		gb_orch_result_clear(&res);
	}
	gb_orch_destroy(o);
	gb_state_close(st);
	{
		char p[440];

		unlink(statepath);
		snprintf(p, sizeof(p), "%s-wal", statepath);
		unlink(p);
		snprintf(p, sizeof(p), "%s-shm", statepath);
		unlink(p);
	}
}

static void row(const char *planner, const char *latency, const char *what, int n,
		double *v)
{
	struct stats s = summarize(v, n);

	printf("| %s | %s | %s | %d | %.3f | %.3f | %.3f | %.3f |\n", planner, latency, what, n,
	       s.mean * 1e3, s.p50 * 1e3, s.p90 * 1e3, s.max * 1e3);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "srcdir", required_argument, NULL, 's' },
		{ "builddir", required_argument, NULL, 'b' },
		{ "requests", required_argument, NULL, 'n' },
		{ "slow-requests", required_argument, NULL, 'm' },
		{ "latency-ms", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	static const enum gb_llm_provider pv[] = { GB_LLM_OPENAI, GB_LLM_ANTHROPIC, GB_LLM_BEDROCK };
	struct gb_log_opts lo = { NULL, false, GB_LOG_ERROR, true };
	long nfast = 200, nslow = 5, lat = 2000;
	char bin[512], scenario[512], keyfile[320], lbuf[32];
	const char *args[] = { NULL };
	double *v;
	size_t prompt = 0;
	gb_error_t err;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			srcdir = optarg;
			break;
		case 'b':
			builddir = optarg;
			break;
		case 'n':
		case 'm':
		case 'l': {
			long x;

			if (gb_parse_long(optarg, 0, 100000, &x))
				die("bad number");
			*(c == 'n' ? &nfast : c == 'm' ? &nslow : &lat) = x;
			break;
		}
		default:
			fprintf(stderr, "usage: llm-bench --srcdir DIR --builddir DIR [--requests N] "
				"[--slow-requests N] [--latency-ms MS]\n");
			return 2;
		}
	}
	if (!srcdir || !builddir || nfast < 1 || nslow < 1)
		die("--srcdir and --builddir are required");
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	unsetenv(GB_LLM_BEDROCK_TOKEN_ENV);
	gb_log_open("llm-bench", &lo, NULL);
	signal(SIGPIPE, SIG_IGN);
	snprintf(tmpdir, sizeof(tmpdir), "%s/llm-bench.XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir))
		die("mkdtemp");
	snprintf(keyfile, sizeof(keyfile), "%s/key", tmpdir);
	{
		FILE *fp = fopen(keyfile, "w");

		if (!fp || fprintf(fp, "%s\n", KEY) < 0 || fclose(fp))
			die("key file");
		chmod(keyfile, 0600);
	}
	snprintf(bin, sizeof(bin), "%s/src/cloudsim/gpuburst-cloudsim", builddir);
	snprintf(scenario, sizeof(scenario), "%s/tests/data/llm/sim.yaml", srcdir);
	if (gb_simh_start(&sim, bin, scenario, args, &err))
		die(err.text);
	v = calloc((size_t)(nfast > nslow ? nfast : nslow), sizeof(*v));
	if (!v)
		die("out of memory");
	printf("| planner | model latency | measured | requests | mean ms | p50 ms | p90 ms | max ms |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	{
		struct gb_conf *conf = load_conf(GB_LLM_NONE, NULL, keyfile);

		bench_plan(conf, NULL, (int)nfast, v, NULL);
		row("heuristic", "-", "plan", (int)nfast, v);
		bench_resume(conf, (int)nfast / 4 > 0 ? (int)nfast / 4 : 1, v, "planner=heuristic");
		row("heuristic", "-", "resume", (int)nfast / 4 > 0 ? (int)nfast / 4 : 1, v);
		gb_conf_destroy(conf);
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(pv); i++) {
		struct llmsrv *s = llmsrv_start(pv[i], pv[i] == GB_LLM_BEDROCK ? NULL : KEY,
						pv[i] == GB_LLM_BEDROCK ? MODEL_BEDROCK : "bench-model");
		struct gb_conf *conf;
		char name[32];

		if (!s)
			die("scripted LLM server");
		conf = load_conf(pv[i], llmsrv_url(s), keyfile);
		snprintf(name, sizeof(name), "llm:%s", gb_conf_llm_provider_name(pv[i]));
		llmsrv_set(s, LLMSRV_PLAN, plan_json, 0);
		for (int slow = 0; slow <= 1; slow++) {
			struct gb_llm_opts lopt = { conf, NULL, NULL };
			gb_llm_t *l = NULL;
			int n = slow ? (int)nslow : (int)nfast;
			int nr = slow ? (int)nslow : ((int)nfast / 4 > 0 ? (int)nfast / 4 : 1);

			llmsrv_latency(s, slow ? lat : 0);
			snprintf(lbuf, sizeof(lbuf), "%ld ms", slow ? lat : 0L);
			if (gb_llm_create(&lopt, &l, &err))
				die(err.text);
			bench_plan(conf, l, n, v, &prompt);
			row(name, lbuf, "plan", n, v);
			gb_llm_destroy(l);
			bench_resume(conf, nr, v, name);
			row(name, lbuf, "resume", nr, v);
		}
		for (size_t k = 0; k < llmsrv_count(s); k++)
			if (llmsrv_problem(s, k))
				die(llmsrv_problem(s, k));
		gb_conf_destroy(conf);
		llmsrv_stop(s);
	}
	printf("\nprompt: %zu bytes (system + user message, 6 pools)\n", prompt);
	free(v);
	gb_simh_stop(&sim);
	unlink(keyfile);
	rmdir(tmpdir);
	return 0;
}
