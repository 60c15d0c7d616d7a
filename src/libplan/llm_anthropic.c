/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * llm_anthropic.c - Anthropic Messages API with forced tool use
 *
 * POST <base>/v1/messages, x-api-key and anthropic-version headers.  The
 * schema is the input_schema of one tool, "submit_plan", and tool_choice
 * {"type":"tool","name":"submit_plan"} forces the model to call it: the
 * most portable way to get schema-shaped JSON (research s5c).  The plan is
 * that tool_use block's input; stop_reason "max_tokens" means it was cut.
 * Another question (gb_llm_ask) names its own tool (struct llm_task).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm_int.h"

/* temperature: 0 unless configured (Anthropic takes 0..1) */
static json_t *anthropic_body(const gb_llm_t *l, const struct llm_shape *sh,
			      const struct llm_task *task, const char *system,
			      const char *user, json_t *schema)
{
	json_t *b = json_pack("{s:s,s:i,s:s,s:[{s:s,s:s}],s:[{s:s,s:s,s:O}],s:{s:s,s:s}}",
			      "model", l->model, "max_tokens", l->max_tokens,
			      "system", system,
			      "messages", "role", "user", "content", user,
			      "tools", "name", task->tool,
			      "description", task->about,
			      "input_schema", schema,
			      "tool_choice", "type", "tool", "name", task->tool);

	if (b && sh->temperature &&
	    json_object_set_new(b, "temperature", json_real(l->temperature))) {
		json_decref(b);
		b = NULL;
	}
	return b;
}

static gb_err_t anthropic_prepare(gb_llm_t *l, gb_http_t *h, struct llm_wire *w,
				  gb_error_t *err)
{
	gb_err_t rc;

	llm_wire_path(w, h, "/v1/messages");
	rc = llm_wire_header(w, "Content-Type", "application/json", false);
	if (!rc)
		rc = llm_wire_header(w, "anthropic-version", GB_LLM_ANTHROPIC_VERSION, false);
	if (!rc && l->key)
		rc = llm_wire_header(w, "x-api-key", l->key, true);
	if (!rc && gb_buf_failed(&w->path))
		rc = GB_E_NOMEM;
	return rc ? gb_errorf(err, rc, "llm anthropic: cannot build the request") : GB_E_OK;
}

static gb_err_t anthropic_answer(json_t *root, const struct llm_task *task, json_t **plan,
				 gb_error_t *err)
{
	const char *stop = json_string_value(json_object_get(root, "stop_reason"));
	json_t *content = json_object_get(root, "content"), *found = NULL;
	size_t i, n = 0;

	*plan = NULL;
	if (stop && strcmp(stop, "max_tokens") == 0)
		return gb_errorf(err, GB_E_PLANNER,
				 "truncated answer (stop_reason max_tokens: planner.llm.max_tokens too small?)");
	if (stop && strcmp(stop, "refusal") == 0)
		return gb_errorf(err, GB_E_PLANNER, "the model refused (stop_reason refusal)");
	if (!json_is_array(content))
		return gb_errorf(err, GB_E_PARSE, "answer: content is not an array");
	for (i = 0; i < json_array_size(content); i++) {
		json_t *b = json_array_get(content, i);
		const char *type = json_string_value(json_object_get(b, "type"));
		const char *name = json_string_value(json_object_get(b, "name"));

		if (type && strcmp(type, "tool_use") == 0) {
			n++;
			if (name && strcmp(name, task->tool) == 0 && !found)
				found = b;
		}
	}
	if (!found)
		return gb_errorf(err, GB_E_PLANNER, "the model did not call %s (stop_reason %s)",
				 task->tool, stop ? stop : "(none)");
	if (n > 1)
		return gb_errorf(err, GB_E_PARSE, "answer: %zu tool calls, expected one", n);
	if (!stop || strcmp(stop, "tool_use") != 0)
		return gb_errorf(err, GB_E_PLANNER, "answer ended with stop_reason %s, not tool_use",
				 stop ? stop : "(none)");
	*plan = json_incref(json_object_get(found, "input"));
	if (!json_is_object(*plan)) {
		json_decref(*plan);
		*plan = NULL;
		return gb_errorf(err, GB_E_PARSE, "answer: the tool input is not an object");
	}
	return GB_E_OK;
}

static char *anthropic_error(json_t *root, const struct gb_http_response *r)
{
	json_t *e = json_object_get(root, "error");
	const char *type = json_string_value(json_object_get(e, "type"));
	char *msg = llm_error_message(root), *both = NULL;

	(void)r;
	if (type && msg && asprintf(&both, "%s: %s", type, msg) < 0)
		both = NULL;
	if (both) {
		free(msg);
		return both;
	}
	return msg;
}

const struct llm_format llm_format_anthropic = {
	"anthropic", anthropic_body, anthropic_prepare, anthropic_answer,
	anthropic_error, NULL,
};
