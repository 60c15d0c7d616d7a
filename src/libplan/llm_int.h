/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * llm_int.h - the LLM planner's internals shared by llm*.c (not installed)
 *
 * llm.c holds what every provider shares (the object, the prompt, the
 * schema, strict plan parsing, the call and its deadlines); each wire
 * format (llm_openai.c, llm_anthropic.c, llm_bedrock.c) supplies a struct
 * llm_format: how to wrap the prompt, where to send it and how to
 * authenticate, and where the plan sits in the answer.
 */
#ifndef GB_LIBPLAN_LLM_INT_H
#define GB_LIBPLAN_LLM_INT_H

#include <jansson.h>
#include <pthread.h>

#include "gb_http.h"
#include "gb_llm.h"
#include "gb_state.h"
#include "gb_str.h"

#define LLM_IDLE_MAX 4		/* idle HTTP clients kept for reuse */
#define LLM_TIMED_OUT_MAX 32	/* requests remembered as timed out */
#define LLM_KEY_MAX 4096	/* bytes of an api_key_file */
#define LLM_RESPONSE_MAX (1u << 20)	/* answer body cap */
#define LLM_ERROR_TEXT_MAX 200	/* provider error message kept */
#define LLM_RETRIES_MAX 3	/* waits after 429/503/529 per proposal */
#define LLM_ADAPT_MAX 3		/* requests re-shaped after a 400 per proposal */
#define LLM_BACKOFF_BASE 0.25	/* seconds: first back-off ceiling */
#define LLM_BACKOFF_MAX 2.0	/* seconds: largest back-off ceiling */

struct llm_format;

/*
 * What one call asks the model for, besides the schema: the name the wire
 * format gives the answer (the forced tool of anthropic and bedrock, the
 * response_format name of openai) and the tool's description.  The plan
 * (gb_llm_propose) is one task, a question (gb_llm_ask) another.
 */
struct llm_task {
	const char *tool;		/* "submit_plan" */
	const char *about;		/* "Submit the launch plan." */
	const char *schema_name;	/* openai: "gpuburst_plan" */
};

/* Bedrock Converse toolChoice: how hard the tool call is forced. */
enum llm_choice {
	LLM_CHOICE_TOOL = 0,	/* {"tool": {"name": "submit_plan"}}: the task's tool */
	LLM_CHOICE_ANY,		/* {"any": {}}: some tool; ours is the only one */
	LLM_CHOICE_AUTO,	/* {"auto": {}}: the validation alone decides */
};

/*
 * What a request carries beyond the prompt.  It starts from the
 * configuration and the model id, and an endpoint's refusal (HTTP 400
 * naming a member, see llm_format.adapt) changes it for the planner's
 * lifetime, only ever towards the more compatible form.
 */
struct llm_shape {
	bool legacy_max_tokens;		/* openai: "max_tokens", not
					 * "max_completion_tokens" */
	bool temperature;		/* send gb_llm.temperature */
	enum llm_choice choice;		/* bedrock */
};

struct gb_llm {
	enum gb_llm_provider provider;
	const struct llm_format *fmt;
	char planner[32];		/* "llm:openai" */
	char *endpoint;			/* NEW */
	char *model;			/* NEW */
	char *region;			/* NEW (bedrock) or NULL */
	char *key;			/* NEW secret or NULL */
	char *ca_bundle;		/* NEW or NULL */
	char *proxy;			/* NEW or NULL; a secret (its password) */
	char *no_proxy_hosts;		/* NEW or NULL */
	double timeout;			/* seconds per call */
	int max_tokens;
	int max_calls;
	int batch_max;
	double temperature;		/* sent when shape.temperature */
	gb_creds_t *creds;		/* bedrock SigV4 without a key */
	bool own_creds;
	void (*sleep)(double seconds, void *ctx);	/* seams, or NULL */
	double (*mono)(void *ctx);
	double (*wall)(void *ctx);
	double (*uniform)(void *ctx);
	void *seam_ctx;

	pthread_mutex_t mu;		/* guards what follows */
	struct llm_shape shape;
	gb_http_t *idle[LLM_IDLE_MAX];
	size_t n_idle;
	char timed_out[LLM_TIMED_OUT_MAX][GB_REQUEST_ID_LEN + 1];
	size_t next_timed_out;
};

/* One HTTP exchange being prepared: path, headers, body. */
struct llm_wire {
	struct gb_buf path;
	char *body;			/* NEW, JSON */
	size_t body_len;
	struct gb_http_header h[8];
	size_t n_h;
	char *own[4];			/* NEW strings some h[] point to */
	size_t n_own;
};

void llm_wire_free(struct llm_wire *w);
/* Add a header; [value] is copied when [copy]. RET GB_E_OK or GB_E_NOMEM. */
gb_err_t llm_wire_header(struct llm_wire *w, const char *name,
			 const char *value, bool copy);
/*
 * The endpoint's base path joined with [suffix] ("/v1/chat/completions"):
 * a base already ending in the suffix's first segment ("/v1") does not get
 * it twice, so both "http://host:11434" and "http://host:11434/v1" work.
 */
void llm_wire_path(struct llm_wire *w, gb_http_t *h, const char *suffix);

struct llm_format {
	const char *name;
	/*
	 * The request body for [system] and [user] with the output [schema]
	 * of [task], shaped by [sh].
	 */
	json_t *(*body)(const gb_llm_t *l, const struct llm_shape *sh,
			const struct llm_task *task, const char *system,
			const char *user, json_t *schema);
	/* Path and headers (authentication) for [w]->body on client [h]. */
	gb_err_t (*prepare)(gb_llm_t *l, gb_http_t *h, struct llm_wire *w,
			    gb_error_t *err);
	/*
	 * From a 2xx answer [root] to [task], OUT *plan NEW: the answer's
	 * object (the plan; not yet checked).  RET GB_E_OK; GB_E_PARSE
	 * (shape); GB_E_PLANNER (truncated, refused, no call of task->tool).
	 */
	gb_err_t (*answer)(json_t *root, const struct llm_task *task, json_t **plan,
			   gb_error_t *err);
	/* The error text of a non-2xx answer (NEW), or NULL. */
	char *(*error_text)(json_t *root, const struct gb_http_response *r);
	/*
	 * An HTTP 400 or 422 answer [r] ([root]: its body as JSON, or NULL) that
	 * refuses a member of the request shaped by [sh]: change *sh so that
	 * the request leaves it out.  RET static text saying what changed
	 * (for the log), or NULL: not such a refusal, nothing changed.  NULL
	 * hook: the format never adapts.
	 */
	const char *(*adapt)(struct llm_shape *sh, json_t *root,
			     const struct gb_http_response *r);
};

extern const struct llm_format llm_format_openai;
extern const struct llm_format llm_format_anthropic;
extern const struct llm_format llm_format_bedrock;

/* Parse [text] as JSON with duplicate keys rejected; [what] names it. */
gb_err_t llm_json_load(const char *text, size_t len, const char *what,
		       json_t **out, gb_error_t *err);

/* The member "message" of [o] (or of o.error), as NEW text, or NULL. */
char *llm_error_message(json_t *o);

/* Does [hay] contain [needle], ignoring ASCII case?  NULL: no. */
bool llm_has(const char *hay, const char *needle);

/*
 * The AWS error type of an answer: x-amzn-ErrorType up to its ':', else
 * the body's "__type" after its last '#', into [buf]; "" when none.
 */
const char *llm_aws_error_type(json_t *root, const struct gb_http_response *r,
			       char *buf, size_t n);

/* The Bedrock toolChoice for [model] (see gb_llm_bedrock_tool_choice()). */
enum llm_choice llm_bedrock_choice(const char *model);

#endif /* GB_LIBPLAN_LLM_INT_H */
