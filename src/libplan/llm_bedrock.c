/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * llm_bedrock.c - Amazon Bedrock Runtime Converse, SigV4 or a bearer key
 *
 * POST <endpoint>/model/{modelId}/converse (rest-json; botocore's
 * bedrock-runtime model: signing name "bedrock").  The model id is a URI
 * label: every byte but A-Z a-z 0-9 - _ . ~ is percent-encoded, so
 * "us.anthropic.claude-sonnet-4-20250514-v1:0" is sent with "%3A"; our
 * signer then encodes the path once more for the canonical request
 * ("%253A"), exactly as botocore does (research s2; the cross-check in
 * test_sigv4_botocore and test_llm).  The schema goes in as the tool
 * "submit_plan", forced as far as the model family allows (bedrock_choice
 * below); the plan is that toolUse block's input, and stopReason
 * "max_tokens" means it was cut (research s5a).  Another question
 * (gb_llm_ask) names its own tool (struct llm_task).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gb_creds.h"
#include "gb_sigv4.h"
#include "gb_str.h"
#include "gb_util.h"
#include "llm_int.h"

/*
 * Converse's toolChoice by model family.  Source: the Amazon Bedrock API
 * Reference, ToolChoice (docs.aws.amazon.com/bedrock/latest/APIReference/
 * API_runtime_ToolChoice.html): "tool" is "only supported by Anthropic
 * Claude 3 and Amazon Nova models"; its earlier text ("ToolChoice is only
 * supported by Anthropic Claude 3 models and by Mistral AI Mistral Large")
 * gives "any" to Mistral Large; the other families the user guide's
 * "Supported models and model features" table lists with Converse tool use
 * (Meta Llama, Cohere Command R, AI21 Jamba, ...) take "auto" only.  The
 * table may lag behind AWS: a ValidationException naming toolChoice falls
 * back to "auto" (bedrock_adapt()), and with "auto" the answer must still
 * be the tool call.
 */
static const struct {
	const char *prefix;		/* of the base model id */
	enum llm_choice choice;
} families[] = {
	{ "anthropic.claude-3", LLM_CHOICE_TOOL },	/* 3, 3.5, 3.7 */
	{ "anthropic.claude-opus-", LLM_CHOICE_TOOL },	/* 4 and later */
	{ "anthropic.claude-sonnet-", LLM_CHOICE_TOOL },
	{ "anthropic.claude-haiku-", LLM_CHOICE_TOOL },
	{ "amazon.nova-", LLM_CHOICE_TOOL },
	{ "mistral.mistral-large-", LLM_CHOICE_ANY },
};

/* Cross-region inference profiles put a geography before the model id. */
static const char *const geographies[] = {
	"us", "us-gov", "eu", "apac", "au", "ca", "jp", "global",
};

enum llm_choice llm_bedrock_choice(const char *model)
{
	const char *id = model ? model : "", *slash = strrchr(id, '/'), *dot;

	if (slash)	/* arn:aws:bedrock:...:inference-profile/us.anthropic... */
		id = slash + 1;
	dot = strchr(id, '.');
	for (size_t i = 0; dot && i < GB_ARRAY_LEN(geographies); i++) {
		size_t n = strlen(geographies[i]);

		if ((size_t)(dot - id) == n && strncmp(id, geographies[i], n) == 0) {
			id = dot + 1;
			break;
		}
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(families); i++)
		if (gb_str_has_prefix(id, families[i].prefix))
			return families[i].choice;
	return LLM_CHOICE_AUTO;
}

const char *gb_llm_bedrock_tool_choice(const char *model)
{
	switch (llm_bedrock_choice(model)) {
	case LLM_CHOICE_TOOL:
		return "tool";
	case LLM_CHOICE_ANY:
		return "any";
	default:
		return "auto";
	}
}

static json_t *tool_choice(enum llm_choice c, const char *tool)
{
	if (c == LLM_CHOICE_TOOL)
		return json_pack("{s:{s:s}}", "tool", "name", tool);
	return json_pack("{s:{}}", c == LLM_CHOICE_ANY ? "any" : "auto");
}

static json_t *bedrock_body(const gb_llm_t *l, const struct llm_shape *sh,
			    const struct llm_task *task, const char *system,
			    const char *user, json_t *schema)
{
	json_t *b = json_pack("{s:[{s:s}],s:[{s:s,s:[{s:s}]}],s:{s:i},"
			      "s:{s:[{s:{s:s,s:s,s:{s:O}}}],s:o}}",
			      "system", "text", system,
			      "messages", "role", "user", "content", "text", user,
			      "inferenceConfig", "maxTokens", l->max_tokens,
			      "toolConfig", "tools", "toolSpec", "name", task->tool,
			      "description", task->about,
			      "inputSchema", "json", schema,
			      "toolChoice", tool_choice(sh->choice, task->tool));

	/* temperature: 0 unless configured (the families here take 0..1) */
	if (b && sh->temperature &&
	    json_object_set_new(json_object_get(b, "inferenceConfig"), "temperature",
				json_real(l->temperature))) {
		json_decref(b);
		b = NULL;
	}
	return b;
}

/* SigV4 with service "bedrock": Host, Content-Type and X-Amz-Date signed. */
static gb_err_t sign(gb_llm_t *l, gb_http_t *h, struct llm_wire *w,
		     gb_error_t *err)
{
	struct gb_creds_snapshot cs = { 0 };
	struct gb_sigv4_result sig = { 0 };
	struct gb_sigv4_header sh[2] = {
		{ "Host", gb_http_host(h) },
		{ "Content-Type", "application/json" },
	};
	struct gb_sigv4_request sr = { .method = "POST", .path = gb_buf_str(&w->path),
				       .headers = sh, .n_headers = 2,
				       .payload = w->body, .payload_len = w->body_len };
	struct gb_sigv4_creds sc;
	gb_err_t rc;

	if ((rc = gb_creds_get(l->creds, &cs, err)))
		goto out;
	sc.access_key_id = cs.access_key_id;
	sc.secret_access_key = cs.secret_access_key;
	sc.session_token = cs.session_token;
	rc = gb_sigv4_sign(&sr, &sc, l->region, GB_LLM_BEDROCK_SERVICE,
			   (time_t)gb_time_now(), &sig, err);
	if (rc)
		goto out;
	if ((rc = llm_wire_header(w, "X-Amz-Date", sig.amz_date, true)) ||
	    (sig.need_token_header &&
	     (rc = llm_wire_header(w, "X-Amz-Security-Token", cs.session_token, true))) ||
	    (rc = llm_wire_header(w, "Authorization", sig.authorization, true)))
		rc = gb_errorf(err, rc, "llm bedrock: cannot build the request");
out:
	gb_sigv4_result_free(&sig);
	gb_creds_snapshot_clear(&cs);
	return rc;
}

static gb_err_t bedrock_prepare(gb_llm_t *l, gb_http_t *h, struct llm_wire *w,
				gb_error_t *err)
{
	struct gb_buf id = GB_BUF_INIT, auth = GB_BUF_INIT;
	gb_err_t rc;

	gb_buf_puts(&id, "/model/");
	gb_sigv4_uri_encode(&id, l->model, strlen(l->model), false);
	gb_buf_puts(&id, "/converse");
	llm_wire_path(w, h, gb_buf_str(&id));
	rc = gb_buf_failed(&w->path) || gb_buf_failed(&id) ? GB_E_NOMEM : GB_E_OK;
	gb_buf_free(&id);
	if (rc)
		return gb_errorf(err, rc, "llm bedrock: cannot build the request");
	if ((rc = llm_wire_header(w, "Content-Type", "application/json", false)))
		return gb_errorf(err, rc, "llm bedrock: cannot build the request");
	if (!l->key)
		return sign(l, h, w, err);
	/* a Bedrock API key (smithy.api#httpBearerAuth) */
	gb_buf_printf(&auth, "Bearer %s", l->key);
	rc = gb_buf_failed(&auth) ? GB_E_NOMEM :
	     llm_wire_header(w, "Authorization", gb_buf_str(&auth), true);
	gb_memzero(auth.data, auth.len);
	gb_buf_free(&auth);
	return rc ? gb_errorf(err, rc, "llm bedrock: cannot build the request") : GB_E_OK;
}

static gb_err_t bedrock_answer(json_t *root, const struct llm_task *task, json_t **plan,
			       gb_error_t *err)
{
	const char *stop = json_string_value(json_object_get(root, "stopReason"));
	json_t *msg = json_object_get(json_object_get(root, "output"), "message");
	json_t *content = json_object_get(msg, "content"), *found = NULL;
	size_t n = 0;

	*plan = NULL;
	if (stop && strcmp(stop, "max_tokens") == 0)
		return gb_errorf(err, GB_E_PLANNER,
				 "truncated answer (stopReason max_tokens: planner.llm.max_tokens too small?)");
	if (!json_is_array(content))
		return gb_errorf(err, GB_E_PARSE, "answer: output.message.content is not an array");
	for (size_t i = 0; i < json_array_size(content); i++) {
		json_t *tu = json_object_get(json_array_get(content, i), "toolUse");
		const char *name = json_string_value(json_object_get(tu, "name"));

		if (!tu)
			continue;
		n++;
		if (name && strcmp(name, task->tool) == 0 && !found)
			found = tu;
	}
	if (!found)
		return gb_errorf(err, GB_E_PLANNER, "the model did not call %s (stopReason %s)",
				 task->tool, stop ? stop : "(none)");
	if (n > 1)
		return gb_errorf(err, GB_E_PARSE, "answer: %zu tool calls, expected one", n);
	if (!stop || strcmp(stop, "tool_use") != 0)
		return gb_errorf(err, GB_E_PLANNER, "answer ended with stopReason %s, not tool_use",
				 stop ? stop : "(none)");
	*plan = json_incref(json_object_get(found, "input"));
	if (!json_is_object(*plan)) {
		json_decref(*plan);
		*plan = NULL;
		return gb_errorf(err, GB_E_PARSE, "answer: the toolUse input is not an object");
	}
	return GB_E_OK;
}

/* rest-json errors: {"message": ...}, type in x-amzn-ErrorType or __type. */
static char *bedrock_error(json_t *root, const struct gb_http_response *r)
{
	const char *type = json_string_value(json_object_get(root, "__type"));
	char *msg = llm_error_message(root), *both = NULL;

	if (type && !gb_http_response_header(r, "x-amzn-ErrorType") && msg &&
	    asprintf(&both, "%s: %s", type, msg) >= 0) {
		free(msg);
		return both;
	}
	return msg;
}

/*
 * "ValidationException: This model doesn't support the toolConfig.toolChoice.tool
 * field. Remove toolConfig.toolChoice.tool and try again.": ask again with
 * "auto".
 */
static const char *bedrock_adapt(struct llm_shape *sh, json_t *root,
				 const struct gb_http_response *r)
{
	char type[64];
	const char *msg = json_string_value(json_object_get(root, "message"));

	if (!msg)
		msg = json_string_value(json_object_get(root, "Message"));
	if (sh->choice == LLM_CHOICE_AUTO ||
	    strcmp(llm_aws_error_type(root, r, type, sizeof(type)), "ValidationException") != 0 ||
	    !llm_has(msg, "toolChoice"))
		return NULL;
	sh->choice = LLM_CHOICE_AUTO;
	return "tool_choice_auto";
}

const struct llm_format llm_format_bedrock = {
	"bedrock", bedrock_body, bedrock_prepare, bedrock_answer, bedrock_error,
	bedrock_adapt,
};
