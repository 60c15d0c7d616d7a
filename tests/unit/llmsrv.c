/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * llmsrv.c - scripted LLM endpoint (OpenAI, Anthropic, Bedrock) over testsrv
 *
 * The answers follow the providers' documented shapes (research s5a-c);
 * the checks are what each endpoint would refuse: wrong path, missing
 * headers, a flat response_format schema (unconstrained output in
 * llama.cpp), no tool, a bad SigV4 signature.  The refusals of
 * llmsrv_refuse() are the HTTP 400 answers of current models, word for
 * word as far as their documentation and error reports show.
 */
#include "config.h"

#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gb_sigv4.h"
#include "gb_str.h"
#include "llmsrv.h"

struct seen {
	char *problem;
	char *system;
	char *user;
	char *tool;		/* the forced tool (anthropic, bedrock), or NULL */
};

struct llmsrv {
	struct testsrv *srv;
	enum gb_llm_provider provider;
	char *key;
	char *model;
	pthread_mutex_t mu;
	enum llmsrv_mode mode;
	char *text;
	unsigned status;
	long latency_ms;
	long hang_ms;
	struct seen *seen;
	size_t n_seen, cap_seen;
	unsigned refuse;	/* LLMSRV_REFUSE_* */
	char *retry_after;	/* headers of LLMSRV_STATUS answers, or NULL */
	char *retry_after_ms;
	struct answer {
		enum llmsrv_mode mode;
		char *text;
		unsigned status;
	} queue[16];
	size_t n_queue;
	llmsrv_hook_fn hook;
	void *hook_ctx;
	const char *tool;	/* the tool the answer being made calls */
};

/*****************************************************************************
 *  Checks of a request
 *****************************************************************************/

static const char *header(const struct testsrv_req *r, const char *name)
{
	return testsrv_header(r, name);
}

/* The member at a dotted path ("messages.0.content"), or NULL. */
static json_t *at(json_t *root, const char *path)
{
	json_t *v = root;
	const char *p = path;

	while (v && *p) {
		size_t l = strcspn(p, ".");
		char key[64];

		snprintf(key, sizeof(key), "%.*s", (int)(l < sizeof(key) ? l : sizeof(key) - 1), p);
		if (key[0] >= '0' && key[0] <= '9')
			v = json_array_get(v, (size_t)strtoul(key, NULL, 10));
		else
			v = json_object_get(v, key);
		p += l;
		if (*p == '.')
			p++;
	}
	return v;
}

static const char *str_at(json_t *root, const char *path)
{
	return json_string_value(at(root, path));
}

static char *problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *problem(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return strdup(buf);
}

static const char *nz(const char *s)
{
	return s ? s : "(none)";
}

static char *check_openai(struct llmsrv *s, const struct testsrv_req *r, json_t *b,
			  struct seen *sn)
{
	const char *auth = header(r, "Authorization");
	char want[512];

	if (strcmp(r->path, "/v1/chat/completions") != 0)
		return problem("path %s, expected /v1/chat/completions", nz(r->path));
	if (s->key) {
		snprintf(want, sizeof(want), "Bearer %s", s->key);
		if (!auth || strcmp(auth, want) != 0)
			return problem("Authorization %s, expected the bearer key", nz(auth));
	} else if (auth) {
		return problem("unexpected Authorization %s", nz(auth));
	}
	if (!str_at(b, "model") || strcmp(str_at(b, "model"), s->model) != 0)
		return problem("model %s", nz(str_at(b, "model")));
	/* one budget, under either name: o-series models refuse max_tokens */
	if (!json_is_integer(at(b, "max_completion_tokens")) == !json_is_integer(at(b, "max_tokens")))
		return problem("exactly one of max_completion_tokens and max_tokens expected");
	if (at(b, "temperature") && !json_is_number(at(b, "temperature")))
		return problem("temperature is not a number");
	if (!str_at(b, "messages.0.role") || strcmp(str_at(b, "messages.0.role"), "system") ||
	    !str_at(b, "messages.1.role") || strcmp(str_at(b, "messages.1.role"), "user") ||
	    json_array_size(at(b, "messages")) != 2)
		return problem("messages must be [system, user]");
	/* the nested form: llama.cpp reads response_format.json_schema.schema */
	if (!str_at(b, "response_format.type") ||
	    strcmp(str_at(b, "response_format.type"), "json_schema") ||
	    !json_is_object(at(b, "response_format.json_schema.schema")) ||
	    !str_at(b, "response_format.json_schema.name") ||
	    at(b, "response_format.schema"))
		return problem("response_format is not {type: json_schema, json_schema: {name, schema}}");
	sn->system = gb_strdup0(str_at(b, "messages.0.content"));
	sn->user = gb_strdup0(str_at(b, "messages.1.content"));
	return NULL;
}

/* The one tool of a request: a name as the providers allow it. */
static bool tool_ok(const char *name)
{
	static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
	size_t n = name ? strlen(name) : 0;

	return n > 0 && n <= 64 && strspn(name, ok) == n;
}

static char *check_anthropic(struct llmsrv *s, const struct testsrv_req *r, json_t *b,
			     struct seen *sn)
{
	const char *key = header(r, "x-api-key"), *ver = header(r, "anthropic-version");
	const char *tool = str_at(b, "tools.0.name");

	if (strcmp(r->path, "/v1/messages") != 0)
		return problem("path %s, expected /v1/messages", nz(r->path));
	if (s->key && (!key || strcmp(key, s->key) != 0))
		return problem("x-api-key %s, expected the key", nz(key));
	if (!ver || strcmp(ver, "2023-06-01") != 0)
		return problem("anthropic-version %s", nz(ver));
	if (header(r, "Authorization"))
		return problem("unexpected Authorization header");
	if (!str_at(b, "model") || strcmp(str_at(b, "model"), s->model) != 0)
		return problem("model %s", nz(str_at(b, "model")));
	if (!json_is_integer(at(b, "max_tokens")))
		return problem("max_tokens (required) missing");
	if (!str_at(b, "system") || !str_at(b, "messages.0.content") ||
	    gb_strcmp0(str_at(b, "messages.0.role"), "user") || json_array_size(at(b, "messages")) != 1)
		return problem("system + one user message expected");
	/* the planner's submit_plan, or the tool of another question */
	if (!tool_ok(tool) || json_array_size(at(b, "tools")) != 1 ||
	    !json_is_object(at(b, "tools.0.input_schema")))
		return problem("one tool with a name and an input_schema expected");
	if (!str_at(b, "tool_choice.type") || strcmp(str_at(b, "tool_choice.type"), "tool") ||
	    gb_strcmp0(str_at(b, "tool_choice.name"), tool))
		return problem("tool_choice does not force %s", tool);
	sn->tool = gb_strdup0(tool);
	sn->system = gb_strdup0(str_at(b, "system"));
	sn->user = gb_strdup0(str_at(b, "messages.0.content"));
	return NULL;
}

/* Recompute the SigV4 signature of [r] as Bedrock would. */
static char *check_sigv4(const struct testsrv_req *r)
{
	const char *authz = header(r, "Authorization");
	struct gb_sigv4_auth a = { 0 };
	struct gb_sigv4_header h[16];
	struct gb_sigv4_request sr = { 0 };
	struct gb_sigv4_creds c = { LLMSRV_AK, LLMSRV_SK, NULL };
	gb_error_t e;
	char *bad = NULL;

	if (!authz || gb_sigv4_auth_parse(authz, &a, &e))
		return problem("Authorization is not SigV4: %s", nz(authz));
	if (strcmp(a.service, "bedrock") || strcmp(a.region, LLMSRV_REGION))
		bad = problem("SigV4 scope service/region: %s", nz(a.service));
	for (size_t i = 0; !bad && i < a.signed_headers.n && i < 16; i++) {
		h[i].name = a.signed_headers.v[i];
		h[i].value = header(r, a.signed_headers.v[i]);
		if (!h[i].value)
			bad = problem("signed header %s not sent", nz(a.signed_headers.v[i]));
	}
	sr.method = r->method;
	sr.path = r->path;
	sr.query = r->query;
	sr.headers = h;
	sr.n_headers = a.signed_headers.n;
	sr.payload = r->body;
	sr.payload_len = r->body_len;
	if (!bad && gb_sigv4_verify(&sr, &a, &c, NULL, &e))
		bad = problem("SigV4: %s", nz(e.text));
	gb_sigv4_auth_free(&a);
	return bad;
}

static char *check_bedrock(struct llmsrv *s, const struct testsrv_req *r, json_t *b,
			   struct seen *sn)
{
	struct gb_buf want = GB_BUF_INIT;
	const char *auth = header(r, "Authorization");
	const char *tool = str_at(b, "toolConfig.tools.0.toolSpec.name");
	char wantkey[512], *bad = NULL;

	gb_buf_puts(&want, "/model/");
	gb_sigv4_uri_encode(&want, s->model, strlen(s->model), false);
	gb_buf_puts(&want, "/converse");
	if (strcmp(r->path, gb_buf_str(&want)) != 0)
		bad = problem("path %s, expected the model id percent-encoded", nz(r->path));
	gb_buf_free(&want);
	if (bad)
		return bad;
	if (s->key) {
		snprintf(wantkey, sizeof(wantkey), "Bearer %s", s->key);
		if (!auth || strcmp(auth, wantkey) != 0)
			return problem("Authorization %s, expected the bearer key", nz(auth));
	} else if ((bad = check_sigv4(r))) {
		return bad;
	}
	if (!str_at(b, "system.0.text") || !str_at(b, "messages.0.content.0.text") ||
	    gb_strcmp0(str_at(b, "messages.0.role"), "user"))
		return problem("system[0].text and a user message expected");
	if (!json_is_integer(at(b, "inferenceConfig.maxTokens")))
		return problem("inferenceConfig.maxTokens missing");
	if (!tool_ok(tool) || json_array_size(at(b, "toolConfig.tools")) != 1 ||
	    !json_is_object(at(b, "toolConfig.tools.0.toolSpec.inputSchema.json")))
		return problem("toolConfig has no single tool with a name and inputSchema.json");
	/* a union: exactly one of tool {name}, any {}, auto {} */
	if (json_object_size(at(b, "toolConfig.toolChoice")) != 1 ||
	    (gb_strcmp0(str_at(b, "toolConfig.toolChoice.tool.name"), tool) &&
	     !json_is_object(at(b, "toolConfig.toolChoice.any")) &&
	     !json_is_object(at(b, "toolConfig.toolChoice.auto"))))
		return problem("toolConfig.toolChoice is not one of tool %s, any, auto", tool);
	sn->tool = gb_strdup0(tool);
	sn->system = gb_strdup0(str_at(b, "system.0.text"));
	sn->user = gb_strdup0(str_at(b, "messages.0.content.0.text"));
	return NULL;
}

static void check(struct llmsrv *s, const struct testsrv_req *r, struct seen *sn)
{
	json_error_t je;
	json_t *b;
	const char *ct = header(r, "Content-Type");

	if (strcmp(r->method, "POST") != 0) {
		sn->problem = problem("method %s", nz(r->method));
		return;
	}
	if (!ct || strcasecmp(ct, "application/json") != 0) {
		sn->problem = problem("Content-Type %s", nz(ct));
		return;
	}
	b = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &je);
	if (!b) {
		sn->problem = problem("body is not JSON: %s", nz(je.text));
		return;
	}
	switch (s->provider) {
	case GB_LLM_OPENAI:
		sn->problem = check_openai(s, r, b, sn);
		break;
	case GB_LLM_ANTHROPIC:
		sn->problem = check_anthropic(s, r, b, sn);
		break;
	default:
		sn->problem = check_bedrock(s, r, b, sn);
		break;
	}
	json_decref(b);
}

/*****************************************************************************
 *  Answers
 *****************************************************************************/

static char *dump(json_t *j)
{
	char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	return t;
}

/*
 * The provider's envelope around [plan] (text: openai; object: the input
 * of a call of [tool] for the others).
 */
static char *wrap(enum gb_llm_provider p, const char *tool, const char *plan, bool cut)
{
	json_t *obj = NULL;
	char *t;

	if (p == GB_LLM_OPENAI) {
		size_t n = strlen(plan);
		char *half = strndup(plan, cut ? n / 2 : n);

		t = dump(json_pack("{s:s,s:s,s:i,s:s,s:[{s:i,s:{s:s,s:s,s:n},s:s}],s:{s:i,s:i,s:i}}",
				   "id", "chatcmpl-test", "object", "chat.completion",
				   "created", 1735142223, "model", "scripted",
				   "choices", "index", 0, "message", "role", "assistant",
				   "content", half, "refusal", "finish_reason",
				   cut ? "length" : "stop",
				   "usage", "prompt_tokens", 400, "completion_tokens", 60,
				   "total_tokens", 460));
		free(half);
		return t;
	}
	obj = cut ? json_object() : json_loads(plan, 0, NULL);
	if (!obj)
		return strdup("{\"not\": \"a plan\"");	/* plan text was not JSON */
	if (p == GB_LLM_ANTHROPIC)
		return dump(json_pack("{s:s,s:s,s:s,s:s,s:[{s:s,s:s,s:s,s:o}],s:s,s:n,s:{s:i,s:i}}",
				      "id", "msg_test", "type", "message", "role", "assistant",
				      "model", "scripted", "content", "type", "tool_use",
				      "id", "toolu_test", "name", tool, "input", obj,
				      "stop_reason", cut ? "max_tokens" : "tool_use",
				      "stop_sequence", "usage", "input_tokens", 420,
				      "output_tokens", 60));
	return dump(json_pack("{s:{s:{s:s,s:[{s:{s:s,s:s,s:o}}]}},s:s,s:{s:i,s:i,s:i},s:{s:i}}",
			      "output", "message", "role", "assistant", "content",
			      "toolUse", "toolUseId", "tooluse_test", "name", tool,
			      "input", obj, "stopReason", cut ? "max_tokens" : "tool_use",
			      "usage", "inputTokens", 412, "outputTokens", 57, "totalTokens", 469,
			      "metrics", "latencyMs", 5));
}

/* Bedrock error types a test may script (LLMSRV_STATUS text). */
static const char *const bedrock_types[] = {
	"ThrottlingException", "ServiceUnavailableException", "ModelNotReadyException",
	"ValidationException", "InternalServerException", "ModelErrorException",
	"ModelTimeoutException", "AccessDeniedException", "ResourceNotFoundException",
};

/* An error the way the provider sends it (status and body, headers). */
static void error_answer(struct llmsrv *s, struct testsrv_resp *resp)
{
	unsigned st = s->status ? s->status : 500;
	bool throttle = st == 429;
	char *t;

	resp->status = st;
	if (s->retry_after) {
		resp->hname[resp->n_headers] = "retry-after";
		resp->hvalue[resp->n_headers++] = s->retry_after;
	}
	if (s->retry_after_ms) {
		resp->hname[resp->n_headers] = "retry-after-ms";
		resp->hvalue[resp->n_headers++] = s->retry_after_ms;
	}
	if (s->provider == GB_LLM_OPENAI) {
		t = dump(json_pack("{s:{s:s,s:s,s:s}}", "error",
				   "message", throttle ? "Rate limit reached for requests" :
				   "The server had an error while processing your request.",
				   "type", throttle ? "requests" : "server_error",
				   "code", throttle ? "rate_limit_exceeded" : "internal_error"));
	} else if (s->provider == GB_LLM_ANTHROPIC) {
		t = dump(json_pack("{s:s,s:{s:s,s:s}}", "type", "error", "error",
				   "type", throttle ? "rate_limit_error" : st == 529 ?
				   "overloaded_error" : "api_error",
				   "message", throttle ? "Number of request tokens has exceeded your rate limit" :
				   "Overloaded"));
	} else {
		const char *scripted = NULL;

		/* header values must outlive the call: a static name */
		for (size_t i = 0; s->text && i < GB_ARRAY_LEN(bedrock_types); i++)
			if (strcmp(s->text, bedrock_types[i]) == 0)
				scripted = bedrock_types[i];
		/* else the type of the status, as the Converse API reference lists them */
		resp->hname[resp->n_headers] = "x-amzn-ErrorType";
		resp->hvalue[resp->n_headers++] = scripted ? scripted :
			throttle ? "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/" :
			st == 503 ? "ServiceUnavailableException:http://internal.amazon.com/coral/com.amazon.bedrock/" :
			st == 400 ? "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/" :
			"InternalServerException:http://internal.amazon.com/coral/com.amazon.bedrock/";
		t = dump(json_pack("{s:s}", "message", throttle ?
				   "Too many requests, please wait before trying again." :
				   st == 400 ? "The provided request is not valid." :
				   st == 503 ? "Bedrock is unable to process your request." :
				   "The server encountered an internal error."));
	}
	gb_buf_puts(&resp->body, t ? t : "{}");
	free(t);
}

/*
 * A refusal of the request's shape, as the model scripted with
 * llmsrv_refuse() answers it (HTTP 400 with the provider's error body).
 * RET whether [r] was refused.
 */
static bool refuse(struct llmsrv *s, const struct testsrv_req *r,
		   struct testsrv_resp *resp)
{
	json_t *b = json_loadb(r->body, r->body_len, 0, NULL), *t;
	char *body = NULL;

	if (!b || !s->refuse)
		goto out;
	t = at(b, "temperature");
	if ((s->refuse & LLMSRV_REFUSE_MAX_TOKENS) && at(b, "max_tokens"))
		body = dump(json_pack("{s:{s:s,s:s,s:s,s:s}}", "error", "message",
			"Unsupported parameter: 'max_tokens' is not supported with this model. "
			"Use 'max_completion_tokens' instead.",
			"type", "invalid_request_error", "param", "max_tokens",
			"code", "unsupported_parameter"));
	else if ((s->refuse & LLMSRV_REFUSE_TEMPERATURE) && t && json_number_value(t) != 1)
		body = dump(json_pack("{s:{s:s,s:s,s:s,s:s}}", "error", "message",
			"Unsupported value: 'temperature' does not support 0 with this model. "
			"Only the default (1) value is supported.",
			"type", "invalid_request_error", "param", "temperature",
			"code", "unsupported_value"));
	else if ((s->refuse & LLMSRV_REFUSE_MAX_COMPLETION_TOKENS) && at(b, "max_completion_tokens"))
		body = dump(json_pack("{s:{s:s,s:s,s:n,s:n}}", "error", "message",
			"Unrecognized request argument supplied: max_completion_tokens",
			"type", "invalid_request_error", "param", "code"));
	else if ((s->refuse & LLMSRV_REFUSE_TOOL_CHOICE) && !at(b, "toolConfig.toolChoice.auto")) {
		const char *f = at(b, "toolConfig.toolChoice.tool") ? "tool" : "any";
		char msg[200];

		snprintf(msg, sizeof(msg), "This model doesn't support the toolConfig.toolChoice.%s "
			 "field. Remove toolConfig.toolChoice.%s and try again.", f, f);
		body = dump(json_pack("{s:s}", "message", msg));
		resp->hname[resp->n_headers] = "x-amzn-ErrorType";
		resp->hvalue[resp->n_headers++] = "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/";
	}
	if (body) {
		resp->status = 400;
		gb_buf_puts(&resp->body, body);
	}
out:
	json_decref(b);
	free(body);
	return body != NULL;
}

static void answer(struct llmsrv *s, struct testsrv_resp *resp);

static void handle(void *ctx, size_t n, const struct testsrv_req *req,
		   struct testsrv_resp *resp)
{
	struct llmsrv *s = ctx;
	struct seen sn = { NULL, NULL, NULL, NULL };
	bool kept = true;

	pthread_mutex_lock(&s->mu);
	check(s, req, &sn);
	/* answer with a call of the tool asked for (sn stays valid below) */
	s->tool = sn.tool ? sn.tool : "submit_plan";
	if (s->hook) {
		char *t = s->hook(s->hook_ctx, n, req, sn.problem);

		if (t) {
			free(s->text);
			s->text = t;
			s->mode = LLMSRV_PLAN;
		}
	}
	if (n >= s->cap_seen) {
		size_t cap = s->cap_seen ? 2 * s->cap_seen : 32;
		struct seen *v = realloc(s->seen, cap * sizeof(*v));

		if (v) {
			memset(v + s->cap_seen, 0, (cap - s->cap_seen) * sizeof(*v));
			s->seen = v;
			s->cap_seen = cap;
		}
	}
	if (n < s->cap_seen) {
		s->seen[n] = sn;
		if (n + 1 > s->n_seen)
			s->n_seen = n + 1;
	} else {
		free(sn.problem);
		free(sn.system);
		free(sn.user);
		kept = false;	/* sn.tool: freed once answered */
	}
	resp->hname[resp->n_headers] = "Content-Type";
	resp->hvalue[resp->n_headers++] = "application/json";
	if (!sn.problem && refuse(s, req, resp)) {
		/* what the model refuses, whatever answer is scripted */
	} else if (s->n_queue) {	/* a queued answer, then the standing one */
		struct answer q = s->queue[0];
		enum llmsrv_mode m0 = s->mode;
		char *t0 = s->text;
		unsigned s0 = s->status;

		memmove(s->queue, s->queue + 1, --s->n_queue * sizeof(s->queue[0]));
		s->mode = q.mode;
		s->text = q.text;
		s->status = q.status;
		answer(s, resp);
		free(q.text);
		s->mode = m0;
		s->text = t0;
		s->status = s0;
	} else {
		answer(s, resp);
	}
	s->tool = NULL;
	if (!kept)
		free(sn.tool);
	pthread_mutex_unlock(&s->mu);
}

/* Fill [resp] from the current mode (under s->mu). */
static void answer(struct llmsrv *s, struct testsrv_resp *resp)
{
	char *t = NULL;

	switch (s->mode) {
	case LLMSRV_PLAN:
	case LLMSRV_HANG:
		t = wrap(s->provider, s->tool, s->text ? s->text : "{}", false);
		break;
	case LLMSRV_TRUNCATED:
		t = wrap(s->provider, s->tool, s->text ? s->text : "{}", true);
		break;
	case LLMSRV_RAW:
		t = strdup(s->text ? s->text : "");
		break;
	case LLMSRV_STATUS:
		error_answer(s, resp);
		break;
	}
	if (t)
		gb_buf_puts(&resp->body, t);
	free(t);
	resp->delay_ms = s->mode == LLMSRV_HANG ? s->hang_ms : s->latency_ms;
}

/*****************************************************************************
 *  API
 *****************************************************************************/

struct llmsrv *llmsrv_start(enum gb_llm_provider provider, const char *key,
			    const char *model)
{
	struct llmsrv *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->mu, NULL);
	s->provider = provider;
	s->key = gb_strdup0(key);
	s->model = gb_strdup0(model ? model : "");
	s->hang_ms = 10000;
	s->srv = testsrv_start(handle, s);
	if (!s->srv) {
		llmsrv_stop(s);
		return NULL;
	}
	return s;
}

void llmsrv_stop(struct llmsrv *s)
{
	if (!s)
		return;
	testsrv_stop(s->srv);
	for (size_t i = 0; i < s->n_seen; i++) {
		free(s->seen[i].problem);
		free(s->seen[i].system);
		free(s->seen[i].user);
		free(s->seen[i].tool);
	}
	free(s->seen);
	while (s->n_queue)
		free(s->queue[--s->n_queue].text);
	free(s->key);
	free(s->model);
	free(s->text);
	free(s->retry_after);
	free(s->retry_after_ms);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

const char *llmsrv_url(const struct llmsrv *s)
{
	return testsrv_url(s->srv);
}

void llmsrv_queue(struct llmsrv *s, enum llmsrv_mode mode, const char *text,
		  unsigned status)
{
	pthread_mutex_lock(&s->mu);
	if (s->n_queue < GB_ARRAY_LEN(s->queue)) {
		s->queue[s->n_queue].mode = mode;
		s->queue[s->n_queue].text = gb_strdup0(text);
		s->queue[s->n_queue++].status = status;
	}
	pthread_mutex_unlock(&s->mu);
}

void llmsrv_set(struct llmsrv *s, enum llmsrv_mode mode, const char *text,
		unsigned status)
{
	pthread_mutex_lock(&s->mu);
	while (s->n_queue)
		free(s->queue[--s->n_queue].text);
	s->mode = mode;
	free(s->text);
	s->text = gb_strdup0(text);
	s->status = status;
	pthread_mutex_unlock(&s->mu);
}

void llmsrv_refuse(struct llmsrv *s, unsigned what)
{
	pthread_mutex_lock(&s->mu);
	s->refuse = what;
	pthread_mutex_unlock(&s->mu);
}

void llmsrv_retry_after(struct llmsrv *s, const char *retry_after,
			const char *retry_after_ms)
{
	pthread_mutex_lock(&s->mu);
	free(s->retry_after);
	free(s->retry_after_ms);
	s->retry_after = gb_strdup0(retry_after);
	s->retry_after_ms = gb_strdup0(retry_after_ms);
	pthread_mutex_unlock(&s->mu);
}

void llmsrv_latency(struct llmsrv *s, long ms)
{
	pthread_mutex_lock(&s->mu);
	s->latency_ms = ms;
	pthread_mutex_unlock(&s->mu);
}

void llmsrv_hang_ms(struct llmsrv *s, long ms)
{
	pthread_mutex_lock(&s->mu);
	s->hang_ms = ms;
	pthread_mutex_unlock(&s->mu);
}

size_t llmsrv_count(struct llmsrv *s)
{
	return testsrv_count(s->srv);
}

static const struct seen *seen_at(struct llmsrv *s, size_t i)
{
	const struct seen *sn;

	pthread_mutex_lock(&s->mu);
	sn = i < s->n_seen ? &s->seen[i] : NULL;
	pthread_mutex_unlock(&s->mu);
	return sn;
}

const char *llmsrv_problem(struct llmsrv *s, size_t i)
{
	const struct seen *sn = seen_at(s, i);

	return sn ? sn->problem : "no such request";
}

const char *llmsrv_system(struct llmsrv *s, size_t i)
{
	const struct seen *sn = seen_at(s, i);

	return sn ? sn->system : NULL;
}

const char *llmsrv_user(struct llmsrv *s, size_t i)
{
	const struct seen *sn = seen_at(s, i);

	return sn ? sn->user : NULL;
}

const struct testsrv_req *llmsrv_request(struct llmsrv *s, size_t i)
{
	return testsrv_request(s->srv, i);
}

void llmsrv_hook(struct llmsrv *s, llmsrv_hook_fn fn, void *ctx)
{
	pthread_mutex_lock(&s->mu);
	s->hook = fn;
	s->hook_ctx = ctx;
	pthread_mutex_unlock(&s->mu);
}
