/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * llm-stub.c - a scripted LLM endpoint on 127.0.0.1 for the end-to-end tests
 *
 * The worker that slurmctld starts is a separate process, so the e2e tests
 * cannot script tests/unit/llmsrv in-process as test_llm_planner does.
 * This program runs one llmsrv (one provider's wire format, its checks of
 * every request) and takes its answers from outside:
 *
 *   llm-stub --plan-file F --log L --url-file U --pid-file P
 *            [--provider openai|anthropic|bedrock] [--model M] [--key-file K]
 *
 * - F is read for every request: its whole text is the model's plan, sent
 *   wrapped the provider's way.  The test rewrites it between jobs (write
 *   a new file and rename it over F).  While F cannot be read the answer
 *   stays the previous one (at first: HTTP 503 with the provider's error).
 * - Every request is appended to L as one JSON line {"n", "path",
 *   "problem" (null: well-formed for the provider), "body" (the request
 *   body, parsed; a string if it was not JSON)}.
 * - U gets "http://127.0.0.1:PORT" (ephemeral port), P the pid, both
 *   written whole (rename) once the server listens.  SIGTERM or SIGINT
 *   stop it; P is removed.
 * - K: the key the requests must carry (bearer / x-api-key); without it,
 *   none (Bedrock: SigV4 with llmsrv's test credentials).
 *
 * Exit status 0 after a signal, 2 on a usage or start-up error.
 */
#include "config.h"

#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gb_conf.h"
#include "gb_err.h"
#include "gb_str.h"
#include "gb_util.h"
#include "llmsrv.h"

#define PLAN_MAX (1 << 20)
#define KEY_MAX 4096

struct stub {
	const char *plan_file;
	const char *log_file;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: llm-stub --plan-file F --log L --url-file U --pid-file P\n"
		   "                [--provider openai|anthropic|bedrock] [--model M] [--key-file K]\n");
}

/* Write [text] to [path] whole: a temporary file renamed over it. */
static int write_whole(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -1;
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	if (fputs(text, f) == EOF || fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Append request [n] to the log as one JSON line (under llmsrv's lock). */
static void log_request(const struct stub *st, size_t n, const struct testsrv_req *req,
			const char *problem)
{
	json_t *body = json_loadb(req->body, req->body_len, 0, NULL);
	json_t *line;
	char *text;
	FILE *f;
	bool ok = false;

	if (!body)
		body = json_stringn_nocheck(req->body, req->body_len);
	line = json_pack("{s:I,s:s,s:s?,s:o}", "n", (json_int_t)n, "path",
			 req->path ? req->path : "", "problem", problem,
			 "body", body ? body : json_null());
	text = line ? json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(line);
	f = text ? fopen(st->log_file, "a") : NULL;
	if (f) {
		ok = fprintf(f, "%s\n", text) >= 0;
		ok = fclose(f) == 0 && ok;
	}
	if (!ok)
		fprintf(stderr, "llm-stub: cannot append request %zu to %s\n", n, st->log_file);
	free(text);
}

static char *on_request(void *ctx, size_t n, const struct testsrv_req *req,
			const char *problem)
{
	const struct stub *st = ctx;
	char *plan = NULL;
	size_t len;
	gb_error_t err;

	log_request(st, n, req, problem);
	if (gb_file_read(st->plan_file, PLAN_MAX, &plan, &len, &err)) {
		fprintf(stderr, "llm-stub: request %zu: %s (previous answer kept)\n", n, err.text);
		return NULL;
	}
	return plan;
}

/* The key in [path], surrounding blanks trimmed.  RET NEW or NULL. */
static char *read_key(const char *path)
{
	char *text = NULL, *b, *e;
	size_t len;
	gb_error_t err;

	if (gb_file_read(path, KEY_MAX, &text, &len, &err)) {
		fprintf(stderr, "llm-stub: %s\n", err.text);
		return NULL;
	}
	for (b = text; *b == ' ' || *b == '\t' || *b == '\n' || *b == '\r'; b++)
		;
	e = b + strlen(b);
	while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	memmove(text, b, strlen(b) + 1);
	return text;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "provider", required_argument, NULL, 'p' },
		{ "model", required_argument, NULL, 'm' },
		{ "key-file", required_argument, NULL, 'k' },
		{ "plan-file", required_argument, NULL, 'f' },
		{ "log", required_argument, NULL, 'l' },
		{ "url-file", required_argument, NULL, 'u' },
		{ "pid-file", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum gb_llm_provider provider = GB_LLM_OPENAI;
	const char *model = "e2e-model", *key_file = NULL, *url_file = NULL, *pid_file = NULL;
	struct stub st = { NULL, NULL };
	struct llmsrv *srv = NULL;
	char *key = NULL, pid[32], url[128];
	sigset_t set;
	int c, sig = 0, rc = 2;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (strcmp(optarg, "openai") == 0)
				provider = GB_LLM_OPENAI;
			else if (strcmp(optarg, "anthropic") == 0)
				provider = GB_LLM_ANTHROPIC;
			else if (strcmp(optarg, "bedrock") == 0)
				provider = GB_LLM_BEDROCK;
			else {
				fprintf(stderr, "llm-stub: --provider %s: openai, anthropic or bedrock\n",
					optarg);
				return 2;
			}
			break;
		case 'm': model = optarg; break;
		case 'k': key_file = optarg; break;
		case 'f': st.plan_file = optarg; break;
		case 'l': st.log_file = optarg; break;
		case 'u': url_file = optarg; break;
		case 'P': pid_file = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || !st.plan_file || !st.log_file || !url_file || !pid_file) {
		usage(stderr);
		return 2;
	}
	if (key_file && !(key = read_key(key_file)))
		return 2;
	/*
	 * Block the stop signals before the server's threads exist: they
	 * inherit the mask, and only sigwait() below takes the signal.
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0) {
		fprintf(stderr, "llm-stub: cannot block signals\n");
		goto out;
	}
	srv = llmsrv_start(provider, key, model);
	if (!srv) {
		fprintf(stderr, "llm-stub: cannot start the server on 127.0.0.1\n");
		goto out;
	}
	llmsrv_set(srv, LLMSRV_STATUS, NULL, 503);
	llmsrv_hook(srv, on_request, &st);
	snprintf(url, sizeof(url), "%s\n", llmsrv_url(srv));
	snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	/* the URL first: a test that sees the pid file finds the URL too */
	if (write_whole(url_file, url) || write_whole(pid_file, pid)) {
		fprintf(stderr, "llm-stub: cannot write %s or %s\n", url_file, pid_file);
		goto out;
	}
	fprintf(stderr, "llm-stub: %s %s model %s pid %s", llmsrv_url(srv),
		gb_conf_llm_provider_name(provider), model, pid);
	if (sigwait(&set, &sig) != 0)
		goto out;
	fprintf(stderr, "llm-stub: signal %d after %zu requests, stopping\n", sig,
		llmsrv_count(srv));
	rc = 0;
out:
	llmsrv_stop(srv);
	if (pid_file)
		unlink(pid_file);
	if (key)
		gb_memzero(key, strlen(key));
	free(key);
	return rc;
}
