/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_llm.h - the LLM planner: a language model proposes, the validator decides
 *
 * gb_llm_propose() is a gb_plan_propose_fn.  It sends the facts of one
 * request (the request, the candidate regions with their distances, every
 * pool with its offering and capacity memory, the capacity summary, the
 * attempts so far) to a model behind one of three wire formats and turns
 * the answer into a struct gb_plan:
 *
 *  - openai: POST <endpoint>/v1/chat/completions with response_format
 *    {"type":"json_schema","json_schema":{"name","strict","schema"}} (the
 *    nested form OpenAI, llama.cpp, vLLM and Ollama accept) and the
 *    answer's budget as max_completion_tokens (o-series and GPT-5 models
 *    refuse max_tokens); temperature only when planner.llm.temperature is
 *    set (those models refuse any but the default).  A 400 naming
 *    max_completion_tokens as unsupported switches to max_tokens, one
 *    naming temperature drops it, both at once and for the planner's
 *    lifetime.  The plan is the JSON text in choices[0].message.content;
 *    bearer key from a file;
 *  - anthropic: POST <endpoint>/v1/messages with one tool "submit_plan"
 *    and tool_choice forcing it; the plan is the tool_use block's input;
 *    x-api-key from a file, anthropic-version 2023-06-01;
 *  - bedrock: POST <endpoint>/model/<model id>/converse (the id
 *    percent-encoded: "a:b" is sent as "a%3Ab" and signed as "a%253Ab"),
 *    toolConfig with "submit_plan" and the toolChoice the model family
 *    supports (gb_llm_bedrock_tool_choice(); a ValidationException naming
 *    toolChoice falls back to "auto" for the planner's lifetime, the
 *    answer must still be the tool call); SigV4 with service "bedrock" and
 *    the configured region, or a bearer key (api_key_file, else
 *    $AWS_BEARER_TOKEN_BEDROCK).  Default endpoint
 *    https://bedrock-runtime.<region>.amazonaws.com.
 *
 * The answer must be exactly the output schema (gb_llm_schema()):
 *   {"instance_type": str, "total": int, "steps": [{"region": str,
 *    "az": str, "subnet": str, "type": str, "batch": int, "reason": str},
 *    ...], "rationale": str}
 * parsed with duplicate keys rejected and no member missing (but a step's
 * "type": absent, the step launches the plan's instance_type), extra or of
 * another type; the facts list request.instance_types and each pool's
 * "type", which a step names like its region, az and subnet; a truncated answer (finish_reason "length", stop reason
 * "max_tokens") is refused.  The plan's planner is "llm:<provider>" and
 * its rationale the model's.  Nothing here validates the plan against the
 * request's rules: the caller (the orchestrator) runs gb_plan_validate()
 * on it like on any other plan and launches nothing it rejects.
 *
 * Deadlines: planner.llm.timeout bounds a whole proposal, every request
 * (connect included) and every wait between them: the planning deadline.
 * HTTP 429, 503 and 529 (Anthropic's overloaded_error), and Bedrock's
 * ThrottlingException, ServiceUnavailableException and
 * ModelNotReadyException, are asked again at most LLM_RETRIES_MAX times,
 * after the wait the answer asks for (retry-after-ms, else retry-after in
 * seconds or as an HTTP-date) or else a jittered exponential back-off;
 * a wait that would end at or past the deadline is not started: the
 * proposal fails at once, saying so.  At most planner.llm.max_calls
 * proposals per request (gb_plan_facts.proposals counts them); a request
 * whose call timed out is not asked again (the endpoint is likely to hang
 * again and every re-plan would wait once more).
 *
 * Untrusted text: whatever users wrote (gb_plan_facts.untrusted: the job
 * name or comment) goes, at most GB_LLM_UNTRUSTED_MAX bytes of it with
 * control characters and invalid UTF-8 replaced, into one JSON string
 * member "untrusted_user_data.text" of the user message, never into the
 * system prompt.
 *
 * Secrets: the key read from api_key_file (or the environment) is
 * registered with gb_log_secret_add() and wiped at destroy; no header is
 * ever logged.  Prompts and answers are logged at debug level only, each
 * cut to GB_LLM_LOG_MAX bytes.
 *
 * Other questions: gb_llm_ask() sends a prompt of the caller's and takes
 * back one JSON object held to the caller's schema (the response_format or
 * forced tool of the caller's name), with the same endpoint, credentials,
 * deadline and retries; gpuburstctl ask turns an administrator's question
 * into SQL with it.
 *
 * Thread-safety: a gb_llm_t may serve several threads at once (idle HTTP
 * clients are kept in a small pool under a mutex).
 */
#ifndef GB_LIBPLAN_GB_LLM_H
#define GB_LIBPLAN_GB_LLM_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_conf.h"
#include "gb_creds.h"
#include "gb_err.h"
#include "gb_plan.h"

#define GB_LLM_UNTRUSTED_MAX 200	/* bytes of user text in a prompt */
#define GB_LLM_LOG_MAX 2048		/* bytes of a prompt/answer in a log line */
#define GB_LLM_RATIONALE_MAX 1000	/* bytes kept of the model's rationale */
#define GB_LLM_MAX_STEPS 256		/* longer answers are refused */
#define GB_LLM_TOOL "submit_plan"	/* the forced tool (anthropic, bedrock) */
#define GB_LLM_ANTHROPIC_VERSION "2023-06-01"
#define GB_LLM_BEDROCK_SERVICE "bedrock"
#define GB_LLM_BEDROCK_TOKEN_ENV "AWS_BEARER_TOKEN_BEDROCK"

typedef struct gb_llm gb_llm_t;

struct gb_llm_opts {
	const struct gb_conf *conf;	/* BORROWED, outlives the planner:
					 * planner.llm, cloud.ca_bundle, and
					 * cloud's credentials for bedrock */
	const struct gb_conf_llm *llm;	/* BORROWED; NULL: &conf->planner.llm */
	gb_creds_t *creds;		/* BORROWED (bedrock SigV4); NULL:
					 * built from conf->cloud when needed */
	/* Seams for tests; NULL: the real thing.  Called from any thread. */
	void (*sleep)(double seconds, void *ctx);	/* waits before a retry */
	double (*mono)(void *ctx);	/* monotonic seconds: the deadline */
	double (*wall)(void *ctx);	/* epoch seconds: retry-after dates */
	double (*uniform)(void *ctx);	/* [0, 1): back-off jitter */
	void *seam_ctx;
};

/*
 * Create a planner for the configured provider.  Reads api_key_file now
 * (at most 4 KiB, surrounding blanks trimmed; a warning is logged when the
 * file is readable by group or others).  No network call is made.
 * OUT *out NEW (gb_llm_destroy).
 * RET GB_E_OK; GB_E_CONFIG (no provider or model, bedrock without region,
 * unreadable or empty key file, bad endpoint URL); GB_E_NOMEM.
 */
gb_err_t gb_llm_create(const struct gb_llm_opts *o, gb_llm_t **out,
		       gb_error_t *err);

/* Wipe the key, close the connections, free [l]; NULL is accepted. */
void gb_llm_destroy(gb_llm_t *l);

/* RET BORROWED "llm:openai", "llm:bedrock" or "llm:anthropic". */
const char *gb_llm_planner_name(const gb_llm_t *l);

/*
 * The gb_plan_propose_fn of the LLM planner; [ctx] is a gb_llm_t.
 * OUT *out NEW plan (planner "llm:<provider>", not validated).
 * RET GB_E_OK with a plan.  Otherwise no plan to use, with the reason in
 * [err], and *out is either NULL (the model was not asked: max_calls
 * reached, or an earlier call of the request timed out) or an empty plan
 * naming the planner (and carrying the model's rationale if it gave one),
 * for the caller to store as the "rejected" version:
 *   GB_E_TIMEOUT  no answer within planner.llm.timeout;
 *   GB_E_PLANNER  HTTP error status (429, 5xx, ... once the retries are
 *                 spent or the next wait would pass the deadline),
 *                 transport failure, refusal, truncated or malformed
 *                 answer, max_calls;
 *   GB_E_NOMEM.
 */
gb_err_t gb_llm_propose(const struct gb_plan_facts *f,
			const char *memory_summary, struct gb_plan **out,
			void *ctx, gb_error_t *err);

/*
 * A question outside planning: the fixed rules [system], the question
 * [user], and the answer asked for: one JSON object of JSON Schema
 * [schema] (text), which openai gets as response_format json_schema named
 * [name], and anthropic and bedrock as the one tool [name] (described as
 * [about]) the model is made to call (bedrock: as far as the model family
 * allows, gb_llm_bedrock_tool_choice()).
 */
struct gb_llm_question {
	const char *name;		/* 1 to 64 of A-Z a-z 0-9 _ - */
	const char *about;		/* the tool's description; NULL: [name] */
	const char *schema;
	const char *system;
	const char *user;
};

/*
 * Ask [q] of the model of [l], like a proposal: planner.llm.timeout bounds
 * the whole call, retries and adaptations included (planner.llm.max_calls
 * is per request and does not apply).  The answer must be one JSON object
 * (duplicate keys rejected); whether it has the schema's members is the
 * caller's to check.
 * OUT *answer NEW (free()): that object as compact JSON text.
 * RET GB_E_OK; GB_E_INVALID (no question, a bad name, a schema that is not
 * an object); GB_E_TIMEOUT (no answer within planner.llm.timeout);
 * GB_E_PLANNER (HTTP error status, transport failure, refusal, truncated
 * answer, no call of the tool); GB_E_PARSE (the answer is not one JSON
 * object, [err] says where: "malformed answer: ..."); GB_E_NOMEM.
 */
gb_err_t gb_llm_ask(gb_llm_t *l, const struct gb_llm_question *q, char **answer,
		    gb_error_t *err);

/*****************************************************************************
 *  Pieces exposed for tests and the benchmark
 *****************************************************************************/

/*
 * The prompt of a proposal: [*system] the fixed rules (no request data at
 * all), [*user] one JSON document with the facts.
 * OUT both NEW (free()).
 */
gb_err_t gb_llm_prompt(const struct gb_plan_facts *f,
		       const char *memory_summary, char **system, char **user,
		       gb_error_t *err);

/*
 * The output schema (JSON Schema) for [batch_max] (<= 0: no maximum).
 * RET NEW compact JSON text (free()), or NULL when out of memory.
 */
char *gb_llm_schema(int batch_max);

/*
 * Strictly parse a plan object [text] of [len] bytes (the schema above,
 * duplicate keys rejected) into a plan named [planner].
 * OUT *out NEW.  RET GB_E_OK or GB_E_PARSE naming what is wrong.
 */
gb_err_t gb_llm_plan_parse(const char *text, size_t len, const char *planner,
			   struct gb_plan **out, gb_error_t *err);

/*
 * Extract and strictly parse the plan from a provider's successful
 * (HTTP 2xx) answer body.
 * OUT *out NEW.  On failure *out may hold an empty plan carrying the
 * model's rationale (NULL otherwise).
 * RET GB_E_OK; GB_E_PARSE (malformed envelope or plan); GB_E_PLANNER
 * (truncated, refused, no tool call).
 */
gb_err_t gb_llm_answer_parse(enum gb_llm_provider p, const char *body,
			     size_t len, struct gb_plan **out,
			     gb_error_t *err);

/*
 * The Bedrock Converse toolChoice sent for [model]: "tool" (forcing
 * submit_plan), "any" or "auto", by the model family after any
 * cross-region inference profile prefix ("us.", "eu.", "apac.",
 * "global.", ...) and ARN path: "tool" for Anthropic Claude 3 and later
 * and Amazon Nova, "any" for Mistral Large, "auto" for every other or
 * unknown family.  RET static text.
 */
const char *gb_llm_bedrock_tool_choice(const char *model);

#endif /* GB_LIBPLAN_GB_LLM_H */
