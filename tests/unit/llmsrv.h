/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * llmsrv.h - a scripted LLM endpoint on 127.0.0.1 for tests and benchmarks
 *
 * One server speaks one wire format (OpenAI chat completions, Anthropic
 * Messages, Bedrock Converse) over testsrv.  The test scripts what the
 * "model" answers next: a plan (wrapped the way the provider wraps it), a
 * truncated answer, a raw body, an HTTP error with the provider's error
 * body (and retry-after headers), or a hang; and what the model refuses
 * (a request member current models answer with HTTP 400).  Every request is checked against the wire format
 * (path, headers, body shape; Bedrock's SigV4 signature is verified with
 * the test credentials, or its bearer key compared) and the verdict is
 * kept per request, with the system prompt and user message it carried.
 * A request forces one tool (anthropic, bedrock): the planner's
 * submit_plan or the tool of another question (gb_llm_ask); the answer
 * calls the tool the request named, with the scripted text as its input.
 */
#ifndef GB_TESTS_LLMSRV_H
#define GB_TESTS_LLMSRV_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_conf.h"
#include "testsrv.h"

/* What the next answers are. */
enum llmsrv_mode {
	LLMSRV_PLAN = 0,	/* the plan text, wrapped, normal stop */
	LLMSRV_TRUNCATED,	/* cut off by max tokens */
	LLMSRV_RAW,		/* the text as the whole body, status 200 */
	LLMSRV_STATUS,		/* HTTP [status] with the provider's error body;
				 * bedrock: [text] the x-amzn-ErrorType, one of
				 * those of the Converse API (NULL: the one of
				 * [status]) */
	LLMSRV_HANG,		/* the plan, after [hang_ms] */
};

/* Credentials the Bedrock server verifies SigV4 signatures with. */
#define LLMSRV_AK "AKIDEXAMPLE"
#define LLMSRV_SK "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define LLMSRV_REGION "us-east-1"

struct llmsrv;

/*
 * Start a server for [provider].  [key]: the API key (bearer, x-api-key,
 * or Bedrock bearer) the requests must carry; NULL: none expected (for
 * Bedrock: SigV4 expected).  [model]: the model every request must name
 * (for Bedrock: in the path, percent-encoded).  RET NEW or NULL.
 */
struct llmsrv *llmsrv_start(enum gb_llm_provider provider, const char *key,
			    const char *model);
void llmsrv_stop(struct llmsrv *s);

/* BORROWED "http://127.0.0.1:PORT". */
const char *llmsrv_url(const struct llmsrv *s);

/* Script the next answers (until set again).  [text] is copied. */
void llmsrv_set(struct llmsrv *s, enum llmsrv_mode mode, const char *text,
		unsigned status);
/*
 * Queue a one-off answer, given before the one set with llmsrv_set()
 * (queued answers go first, in order; llmsrv_set() empties the queue).
 */
void llmsrv_queue(struct llmsrv *s, enum llmsrv_mode mode, const char *text,
		  unsigned status);
/*
 * What the model refuses with HTTP 400 (until set again; 0: nothing),
 * before any scripted answer and without using one up:
 */
#define LLMSRV_REFUSE_MAX_TOKENS 1u		/* openai: o-series, GPT-5:
						 * "max_tokens" present */
#define LLMSRV_REFUSE_TEMPERATURE 2u		/* openai: temperature != 1 */
#define LLMSRV_REFUSE_MAX_COMPLETION_TOKENS 4u	/* openai: older servers */
#define LLMSRV_REFUSE_TOOL_CHOICE 8u		/* bedrock: toolChoice other
						 * than auto (ValidationException) */
void llmsrv_refuse(struct llmsrv *s, unsigned what);
/*
 * The retry-after and retry-after-ms headers of LLMSRV_STATUS answers
 * (copied; NULL: not sent).
 */
void llmsrv_retry_after(struct llmsrv *s, const char *retry_after,
			const char *retry_after_ms);
/* Wait [ms] before every answer (latency of a real model); 0: none. */
void llmsrv_latency(struct llmsrv *s, long ms);
/* How long LLMSRV_HANG waits (default 10 s; ends early at stop). */
void llmsrv_hang_ms(struct llmsrv *s, long ms);

/* Requests received so far. */
size_t llmsrv_count(struct llmsrv *s);
/* BORROWED what was wrong with request [i] (NULL: it was well-formed). */
const char *llmsrv_problem(struct llmsrv *s, size_t i);
/* BORROWED system prompt / user message of request [i], or NULL. */
const char *llmsrv_system(struct llmsrv *s, size_t i);
const char *llmsrv_user(struct llmsrv *s, size_t i);
/* BORROWED the raw request [i] (valid while the server is idle). */
const struct testsrv_req *llmsrv_request(struct llmsrv *s, size_t i);

/*
 * Called for request [n] after its checks, before it is answered, under
 * the server's lock (the hook must not call llmsrv_*): [req] BORROWED for
 * the call, [problem] what was wrong with it (NULL: well-formed).  RET NEW
 * plan text that becomes the standing answer (as llmsrv_set(LLMSRV_PLAN)
 * would, queued answers still going first), or NULL to answer as scripted.
 * For a program whose answers come from outside (tests/e2e/llm-stub.c).
 */
typedef char *(*llmsrv_hook_fn)(void *ctx, size_t n, const struct testsrv_req *req,
				const char *problem);
void llmsrv_hook(struct llmsrv *s, llmsrv_hook_fn fn, void *ctx);

#endif /* GB_TESTS_LLMSRV_H */
