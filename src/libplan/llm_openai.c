/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * llm_openai.c - OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp,
 * Ollama)
 *
 * POST <base>/v1/chat/completions with response_format in the nested form
 * {"type":"json_schema","json_schema":{"name","strict","schema"}}: llama.cpp
 * reads response_format.json_schema.schema only (a flat "schema" next to
 * "type":"json_schema" means unconstrained output there), and OpenAI, vLLM
 * and Ollama accept the same (research s5b).  The plan comes back as JSON
 * *text* in choices[0].message.content, parsed a second time; finish_reason
 * "length" means the text was cut off.
 *
 * The answer's budget goes as max_completion_tokens: OpenAI deprecated
 * max_tokens and its o-series and GPT-5 models refuse it (HTTP 400,
 * "unsupported_parameter"), as they refuse temperature 0 ("unsupported_value":
 * only their default is allowed), so temperature is sent only when
 * configured.  Compatible servers differ (doc/llm-planner.md): vLLM reads
 * both names; llama.cpp's server and Ollama ignore members they do not
 * know, so a build reading only max_tokens answers with its own default
 * budget.  A server that refuses max_completion_tokens instead (HTTP 400 or
 * 422 naming it) gets max_tokens from then on (openai_adapt()).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "llm_int.h"

static json_t *openai_body(const gb_llm_t *l, const struct llm_shape *sh,
			   const struct llm_task *task, const char *system,
			   const char *user, json_t *schema)
{
	json_t *b = json_pack("{s:s,s:[{s:s,s:s},{s:s,s:s}],s:i,s:{s:s,s:{s:s,s:b,s:O}}}",
			      "model", l->model,
			      "messages", "role", "system", "content", system,
			      "role", "user", "content", user,
			      sh->legacy_max_tokens ? "max_tokens" : "max_completion_tokens",
			      l->max_tokens,
			      "response_format", "type", "json_schema",
			      "json_schema", "name", task->schema_name, "strict", 1,
			      "schema", schema);

	if (b && sh->temperature &&
	    json_object_set_new(b, "temperature", json_real(l->temperature))) {
		json_decref(b);
		b = NULL;
	}
	return b;
}

static gb_err_t openai_prepare(gb_llm_t *l, gb_http_t *h, struct llm_wire *w,
			       gb_error_t *err)
{
	struct gb_buf auth = GB_BUF_INIT;
	gb_err_t rc;

	llm_wire_path(w, h, "/v1/chat/completions");
	rc = llm_wire_header(w, "Content-Type", "application/json", false);
	if (!rc && l->key) {
		gb_buf_printf(&auth, "Bearer %s", l->key);
		rc = gb_buf_failed(&auth) ? GB_E_NOMEM :
		     llm_wire_header(w, "Authorization", gb_buf_str(&auth), true);
		gb_memzero(auth.data, auth.len);
		gb_buf_free(&auth);
	}
	if (!rc && gb_buf_failed(&w->path))
		rc = GB_E_NOMEM;
	return rc ? gb_errorf(err, rc, "llm openai: cannot build the request") : GB_E_OK;
}

static gb_err_t openai_answer(json_t *root, const struct llm_task *task, json_t **plan,
			      gb_error_t *err)
{
	json_t *choices = json_object_get(root, "choices");
	json_t *c0 = json_array_get(choices, 0), *msg, *content, *refusal;
	const char *finish;

	(void)task;	/* response_format holds the schema: no tool */
	*plan = NULL;
	if (!json_is_array(choices) || !json_is_object(c0))
		return gb_errorf(err, GB_E_PARSE, "answer: no choices[0]");
	finish = json_string_value(json_object_get(c0, "finish_reason"));
	msg = json_object_get(c0, "message");
	if (!json_is_object(msg))
		return gb_errorf(err, GB_E_PARSE, "answer: choices[0].message is not an object");
	refusal = json_object_get(msg, "refusal");
	if (json_is_string(refusal))
		return gb_errorf(err, GB_E_PLANNER, "the model refused: %.200s",
				 json_string_value(refusal));
	if (finish && strcmp(finish, "length") == 0)
		return gb_errorf(err, GB_E_PLANNER,
				 "truncated answer (finish_reason length: planner.llm.max_tokens too small?)");
	if (!finish || strcmp(finish, "stop") != 0)
		return gb_errorf(err, GB_E_PLANNER, "answer ended with finish_reason %s, not stop",
				 finish ? finish : "(none)");
	content = json_object_get(msg, "content");
	if (!json_is_string(content))
		return gb_errorf(err, GB_E_PARSE, "answer: choices[0].message.content is not a string");
	return llm_json_load(json_string_value(content), json_string_length(content),
			     "message content", plan, err);
}

static char *openai_error(json_t *root, const struct gb_http_response *r)
{
	(void)r;
	return llm_error_message(root);
}

/*
 * The message of error answer [root]: error.message, error, message or
 * detail (FastAPI); without JSON, the raw [body].
 */
static const char *message_of(json_t *root, const char *body)
{
	static const char *const paths[][2] = {
		{ "error", "message" }, { "error", NULL }, { "message", NULL }, { "detail", NULL },
	};

	if (!root)
		return body;
	for (size_t i = 0; i < GB_ARRAY_LEN(paths); i++) {
		json_t *v = json_object_get(root, paths[i][0]);

		if (paths[i][1])
			v = json_object_get(v, paths[i][1]);
		if (json_is_string(v))
			return json_string_value(v);
	}
	return NULL;
}

/*
 * Does error answer [root] (or the raw [body]) refuse the member [name]?
 * OpenAI says so with error.param and a code "unsupported_parameter" /
 * "unsupported_value"; other servers in the message ("Unrecognized request
 * argument supplied: max_completion_tokens", "unknown field
 * `max_completion_tokens`", "Extra inputs are not permitted").  A value
 * out of range ("integer_above_max_value") is not a refusal of the member.
 */
static bool refuses(json_t *root, const char *body, const char *name)
{
	static const char *const words[] = {
		"unsupported", "not supported", "does not support", "unrecognized",
		"unknown", "not permitted", "not allowed", "extra",
	};
	json_t *e = json_object_get(root, "error");
	const char *param = json_string_value(json_object_get(e, "param"));
	const char *code = json_string_value(json_object_get(e, "code"));
	const char *msg = message_of(root, body);
	bool refusal = false;

	for (size_t i = 0; i < GB_ARRAY_LEN(words) && !refusal; i++)
		refusal = llm_has(code, words[i]) || llm_has(msg, words[i]);
	if (param && strcmp(param, name) == 0)
		return refusal;
	return refusal && llm_has(msg, name);
}

static const char *openai_adapt(struct llm_shape *sh, json_t *root,
				const struct gb_http_response *r)
{
	if (!sh->legacy_max_tokens && refuses(root, r->body, "max_completion_tokens")) {
		sh->legacy_max_tokens = true;
		return "max_tokens_instead_of_max_completion_tokens";
	}
	if (sh->temperature && refuses(root, r->body, "temperature")) {
		sh->temperature = false;
		return "no_temperature";
	}
	return NULL;
}

const struct llm_format llm_format_openai = {
	"openai", openai_body, openai_prepare, openai_answer, openai_error,
	openai_adapt,
};
