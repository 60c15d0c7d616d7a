/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_ask.c - gpuburstctl ask [--limit N] [--timeout S] QUESTION
 *
 * A question in plain language over the state file.  The configured LLM
 * endpoint (planner.llm, through libplan's client: its providers, keys,
 * deadline and retries) turns it into one SQL query; the model gets the
 * question and the state file's documentation (ctl_ask_schema_doc, built
 * from doc/state-schema.md), never a row.  libstate runs the query on a
 * read-only handle under its guards (gb_state_query: only SELECT, only the
 * documented columns, harmless functions, one statement, row and time
 * limits), so whatever the model writes can neither change the file nor
 * read what the page does not describe.  The query is printed before the
 * result, for the administrator to check, and also when it was refused.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "gb_llm.h"
#include "gb_log.h"
#include "gb_util.h"

#define ASK_QUESTION_MAX 2000		/* bytes of a question */
#define ASK_EXPLANATION_MAX 1000	/* bytes of the model's explanation kept */
#define ASK_LIMIT_MAX 100000		/* --limit */
#define ASK_TIMEOUT_MAX 600.0		/* --timeout, seconds */
#define ASK_TOOL "submit_query"

static const char answer_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"sql\":{\"type\":\"string\",\"description\":\"one read-only SQLite SELECT\"},"
	"\"explanation\":{\"type\":\"string\",\"description\":\"what the query returns, "
	"in one or two plain sentences\"}},"
	"\"required\":[\"sql\",\"explanation\"],\"additionalProperties\":false}";

/*
 * The fixed rules (a format: the functions, the row limit, the schema
 * version), then the documentation.  The guards enforce them whatever the
 * model answers: the rules are there so that a well-behaved model writes a
 * query that passes.
 */
#define RULES \
	"You answer an administrator's questions about the state file of gpuburst, which " \
	"bursts the GPU jobs of a Slurm cluster into Amazon EC2. The state file is an SQLite " \
	"database; its documentation follows. Turn the question into exactly one read-only " \
	"SQLite query whose result answers it.\n" \
	"Rules:\n" \
	"1. One SELECT statement (a WITH clause is fine, WITH RECURSIVE is not); no PRAGMA, " \
	"ATTACH, INSERT, UPDATE, DELETE, CREATE, DROP, transaction or second statement; no " \
	"parameters.\n" \
	"2. Read only the tables and columns the documentation below describes; sqlite_master " \
	"and every other table cannot be read.\n" \
	"3. Call only these functions: %s.\n" \
	"4. Times are REAL seconds since the epoch (UTC), 0 meaning never: show them with " \
	"datetime(column, 'unixepoch'); the current time is unixepoch('now').\n" \
	"5. Name every computed column with a short alias, order the rows usefully, and " \
	"return only the rows the question needs (at most %ld are shown).\n" \
	"6. When the state file cannot answer the question, return one row saying so " \
	"(SELECT 'not recorded in the state file' AS answer) and tell why in the explanation.\n" \
	"Answer only with one JSON object {\"sql\": \"...\", \"explanation\": \"...\"}, through " \
	"the " ASK_TOOL " tool when one is offered; the explanation says in one or two plain " \
	"sentences (no markup) what the query returns.\n\n" \
	"The documentation of the state file (schema version %d):\n\n"

struct ask {
	const char *question;		/* BORROWED or in [qbuf] */
	struct gb_buf qbuf;
	long limit;
	double timeout;
	char *sql;			/* the model's, NEW */
	char *explanation;		/* NEW, one line */
	/* the result */
	struct gb_strv names;
	struct gb_strv cells;		/* row-major, "" for NULL */
	bool *numeric;			/* per column: numbers only (and one) */
	bool *other;			/* per column: a value that is no number */
	json_t *rows;			/* arrays of typed values */
	bool prepared;			/* the guards let it run */
	bool oom;
	struct gb_state_query_info info;
};

/*****************************************************************************
 *  The question and the answer
 *****************************************************************************/

/* The configured endpoint, or a CONFIG error naming the missing key. */
static gb_err_t llm_configured(const struct ctl *ctl, const struct gb_conf *conf)
{
	const struct gb_conf_llm *c = &conf->planner.llm;
	const char *path = gb_conf_path(ctl->conf_path);

	if (c->provider == GB_LLM_NONE)
		return ctl_fail(GB_E_CONFIG,
				"ask: no LLM endpoint is configured: planner.llm.provider is not set in %s (openai, anthropic or bedrock, with planner.llm.model; planner.kind may stay heuristic)",
				path);
	if (!c->model || !*c->model)
		return ctl_fail(GB_E_CONFIG, "ask: planner.llm.model is not set in %s", path);
	if (c->provider == GB_LLM_BEDROCK && (!c->region || !*c->region))
		return ctl_fail(GB_E_CONFIG,
				"ask: planner.llm.region is not set in %s (bedrock signs for a region)",
				path);
	return GB_E_OK;
}

/* The system prompt: the rules, the functions, the documentation.  NEW. */
static char *system_prompt(const struct ask *a)
{
	struct gb_buf fns = GB_BUF_INIT, b = GB_BUF_INIT;

	for (size_t i = 0; gb_state_query_functions[i]; i++)
		if (gb_state_query_functions[i][0] != '-')	/* -> and ->> are operators */
			gb_buf_printf(&fns, "%s%s", i ? ", " : "", gb_state_query_functions[i]);
	gb_buf_puts(&fns, "; and the operators -> and ->> of JSON");
	gb_buf_printf(&b, RULES, gb_buf_str(&fns), a->limit, GB_STATE_SCHEMA_VERSION);
	gb_buf_puts(&b, ctl_ask_schema_doc);
	gb_buf_free(&fns);
	if (gb_buf_failed(&b)) {
		gb_buf_free(&b);
		return NULL;
	}
	return gb_buf_steal(&b);
}

/* [s] on one line of at most [max] bytes: controls blanked, UTF-8 kept whole. NEW. */
static char *one_line(const char *s, size_t max)
{
	struct gb_buf b = GB_BUF_INIT;
	size_t n = strlen(s);

	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;	/* not inside a UTF-8 sequence */
	}
	for (size_t i = 0; i < n; i++)
		gb_buf_putc(&b, (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i]);
	if (gb_buf_failed(&b)) {
		gb_buf_free(&b);
		return NULL;
	}
	return b.data ? gb_buf_steal(&b) : strdup("");
}

static const char *json_kind(json_t *v)
{
	return json_is_object(v) ? "an object" : json_is_array(v) ? "an array" :
	       json_is_integer(v) || json_is_real(v) ? "a number" :
	       json_is_boolean(v) ? "a boolean" : json_is_null(v) ? "null" : "a string";
}

/*
 * The model's answer [text] (one JSON object, gb_llm_ask) strictly as
 * {"sql": string, "explanation": string}, nothing more.  RET GB_E_OK or
 * GB_E_PARSE saying what is wrong.
 */
static gb_err_t parse_answer(struct ask *a, const char *text, gb_error_t *err)
{
	static const char want[] = "{\"sql\": \"...\", \"explanation\": \"...\"}";
	json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, NULL), *sql, *ex, *v;
	const char *key, *why = NULL;
	char what[160];
	gb_err_t rc = GB_E_OK;

	sql = json_object_get(o, "sql");
	ex = json_object_get(o, "explanation");
	json_object_foreach(o, key, v) {
		if (!why && strcmp(key, "sql") != 0 && strcmp(key, "explanation") != 0) {
			snprintf(what, sizeof(what), "it has a member \"%.60s\"", key);
			why = what;
		}
	}
	if (!json_is_object(o))
		why = "it is not one JSON object";
	else if (!sql || !ex)
		why = !sql ? "member \"sql\" is missing" : "member \"explanation\" is missing";
	else if (!json_is_string(sql) || !json_is_string(ex)) {
		snprintf(what, sizeof(what), "\"%s\" is %s, not a string",
			 json_is_string(sql) ? "explanation" : "sql",
			 json_kind(json_is_string(sql) ? ex : sql));
		why = what;
	}
	else if (!*(json_string_value(sql) + strspn(json_string_value(sql), " \t\r\n;")))
		why = "\"sql\" is empty";
	if (why)
		rc = gb_errorf(err, GB_E_PARSE, "the model's answer is not the JSON asked for (%s): %s",
			       want, why);
	else if (!(a->sql = strdup(json_string_value(sql))) ||
		 !(a->explanation = one_line(json_string_value(ex), ASK_EXPLANATION_MAX)))
		rc = gb_errorf(err, GB_E_NOMEM, "ask: out of memory");
	json_decref(o);
	return rc;
}

/* Ask the model.  OUT a->sql, a->explanation.  RET printed on failure. */
static gb_err_t ask_model(const struct gb_conf *conf, struct ask *a)
{
	struct gb_llm_opts lo = { conf, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
	struct gb_llm_question q = { ASK_TOOL, "Submit the SQL query that answers the question.",
				     answer_schema, NULL, a->question };
	gb_llm_t *l = NULL;
	char *system = NULL, *text = NULL;
	gb_error_t e = { 0 };
	gb_err_t rc;

	if ((rc = gb_llm_create(&lo, &l, &e))) {
		rc = ctl_fail(rc, "ask: %s", e.text);
		goto out;
	}
	if (!(system = system_prompt(a))) {
		rc = ctl_fail(GB_E_NOMEM, "ask: out of memory");
		goto out;
	}
	q.system = system;
	if ((rc = gb_llm_ask(l, &q, &text, &e))) {
		if (rc == GB_E_PARSE)
			rc = ctl_fail(rc, "ask: the model's answer is not the JSON asked for: %s", e.text);
		else
			rc = ctl_fail(rc, "ask: %s asked, no query: %s", gb_llm_planner_name(l), e.text);
		goto out;
	}
	if ((rc = parse_answer(a, text, &e)))
		rc = ctl_fail(rc, "ask: %s", e.text);
out:
	free(text);
	free(system);
	gb_llm_destroy(l);
	return rc;
}

/*****************************************************************************
 *  The query and its result
 *****************************************************************************/

static json_t *value_json(const struct gb_state_value *v)
{
	switch (v->type) {
	case GB_STATE_VALUE_INTEGER:
		return json_integer(v->i);
	case GB_STATE_VALUE_REAL:
		return json_real(v->d);
	case GB_STATE_VALUE_NULL:
		return json_null();
	default:	/* text, a BLOB in hex */
		return json_string(v->text ? v->text : "");
	}
}

/* gb_state_query's callback: the names, then each row, kept. */
static int on_row(void *arg, size_t n, const char *const *names,
		  const struct gb_state_value *row)
{
	struct ask *a = arg;
	json_t *r;

	if (!row) {
		a->prepared = true;
		a->numeric = calloc(n, sizeof(*a->numeric));
		a->other = calloc(n, sizeof(*a->other));
		a->rows = json_array();
		for (size_t i = 0; i < n; i++)
			a->oom |= gb_strv_add(&a->names, names[i]) != GB_E_OK;
		a->oom |= !a->numeric || !a->other || !a->rows;
		return a->oom;
	}
	r = json_array();
	for (size_t i = 0; r && i < n; i++) {
		bool number = row[i].type == GB_STATE_VALUE_INTEGER ||
			      row[i].type == GB_STATE_VALUE_REAL;

		a->numeric[i] |= number;
		a->other[i] |= !number && row[i].type != GB_STATE_VALUE_NULL;
		a->oom |= gb_strv_add(&a->cells, row[i].text ? row[i].text : "") != GB_E_OK ||
			  json_array_append_new(r, value_json(&row[i])) != 0;
	}
	a->oom |= !r || json_array_append_new(a->rows, r) != 0;
	return a->oom;
}

/* The query, each line indented, controls blanked. */
static void print_sql(const char *sql)
{
	printf("Query:\n  ");
	for (const char *p = sql; *p; p++) {
		if (*p == '\n' && p[1])
			printf("\n  ");
		else if (*p != '\n' && *p != '\r')
			putchar((unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p);
	}
	putchar('\n');
}

static void print_text(const struct ask *a, gb_err_t rc)
{
	size_t n = a->names.n;
	struct gb_strv head = { NULL, 0, 0 };
	struct ctl_table t;
	bool failed = false;

	print_sql(a->sql);
	printf("Explanation: %s\n", a->explanation);
	if (!a->prepared || a->oom)
		return;
	/* numbers right-aligned: '>' before the header (ctl_table) */
	for (size_t i = 0; i < n; i++) {
		char *h;

		if (asprintf(&h, "%s%s", a->numeric[i] && !a->other[i] ? ">" : "",
			     a->names.v[i]) < 0)
			h = NULL;
		failed |= !h || gb_strv_add(&head, h) != GB_E_OK;
		free(h);
	}
	if (!failed) {
		ctl_table_init_v(&t, n, (const char *const *)head.v);
		for (size_t r = 0; r < a->info.rows; r++)
			ctl_table_row_v(&t, (const char *const *)&a->cells.v[r * n]);
		putchar('\n');
		ctl_table_print(&t, stdout);
		ctl_table_free(&t);
	}
	gb_strv_free(&head);
	putchar('\n');
	if (rc == GB_E_TIMEOUT)
		printf("%zu row%s before the time limit (--timeout %g s) stopped the query\n",
		       a->info.rows, a->info.rows == 1 ? "" : "s", a->timeout);
	else if (rc)
		printf("%zu row%s before the query failed\n", a->info.rows,
		       a->info.rows == 1 ? "" : "s");
	else if (a->info.cut)
		printf("%zu rows shown: output cut, the query returns more (--limit %ld)\n",
		       a->info.rows, a->limit);
	else
		printf("%zu row%s\n", a->info.rows, a->info.rows == 1 ? "" : "s");
}

static void put_json(const struct gb_conf *conf, const struct ask *a)
{
	json_t *doc = json_object(), *cols = json_array();
	char planner[32];

	for (size_t i = 0; cols && i < a->names.n; i++)
		json_array_append_new(cols, json_string(a->names.v[i]));
	json_object_set_new(doc, "question", json_string(a->question));
	snprintf(planner, sizeof(planner), "llm:%s",
		 gb_conf_llm_provider_name(conf->planner.llm.provider));
	json_object_set_new(doc, "planner", json_string(planner));
	json_object_set_new(doc, "model", ctl_jstr(conf->planner.llm.model));
	json_object_set_new(doc, "sql", ctl_jstr(a->sql));
	json_object_set_new(doc, "explanation", ctl_jstr(a->explanation));
	json_object_set_new(doc, "columns", a->prepared && cols ? cols : json_null());
	if (!a->prepared)
		json_decref(cols);
	json_object_set_new(doc, "rows", a->prepared && a->rows ? json_incref(a->rows) :
			    json_null());
	json_object_set_new(doc, "row_count", json_integer((json_int_t)a->info.rows));
	json_object_set_new(doc, "cut", json_boolean(a->info.cut));
	json_object_set_new(doc, "limit", json_integer(a->limit));
	json_object_set_new(doc, "timeout", json_real(a->timeout));
	json_object_set_new(doc, "seconds", json_real(a->info.seconds));
	ctl_json_result(doc);
}

static gb_err_t run_query(struct ctl *ctl, const struct gb_conf *conf, struct ask *a)
{
	struct gb_state_query_opts o = { ctl_ask_columns, (size_t)a->limit, a->timeout };
	gb_error_t e = { 0 };
	gb_err_t rc;

	rc = gb_state_query(ctl->st, a->sql, &o, on_row, a, &a->info, &e);
	if (!rc && a->oom)
		rc = gb_errorf(&e, GB_E_NOMEM, "out of memory");
	if (ctl->json)
		put_json(conf, a);
	else
		print_text(a, rc);
	fflush(stdout);
	if (rc == GB_E_TIMEOUT)
		gb_errorf(&e, rc, "stopped: the query ran longer than --timeout %g s (after %zu row%s)",
			  a->timeout, a->info.rows, a->info.rows == 1 ? "" : "s");
	gb_log_info("ask rows=%zu cut=%d ms=%.0f outcome=%s sql=%s error=%s", a->info.rows,
		    a->info.cut, a->info.seconds * 1000, gb_err_name(rc), GB_LOG_Q(a->sql),
		    GB_LOG_Q(rc ? e.text : "-"));
	return rc ? ctl_fail(rc, "ask: %s", e.text) : GB_E_OK;
}

/*****************************************************************************
 *  The command
 *****************************************************************************/

/* "5", "0.5", "5s": seconds in (0, ASK_TIMEOUT_MAX]. */
static bool parse_seconds(const char *s, double *out)
{
	char num[32];
	size_t n = strlen(s);

	if (n && s[n - 1] == 's')
		n--;
	if (n == 0 || n >= sizeof(num))
		return false;
	memcpy(num, s, n);
	num[n] = '\0';
	return gb_parse_double(num, out) == GB_E_OK && *out > 0 && *out <= ASK_TIMEOUT_MAX;
}

/* The words after the options, joined by blanks. */
static gb_err_t question_of(const char *cmd, int argc, char **argv, struct ask *a)
{
	for (int i = optind; i < argc; i++)
		gb_buf_printf(&a->qbuf, "%s%s", i > optind ? " " : "", argv[i]);
	if (gb_buf_failed(&a->qbuf))
		return ctl_fail(GB_E_NOMEM, "ask: out of memory");
	a->question = gb_buf_str(&a->qbuf);
	if (!*(a->question + strspn(a->question, " \t\r\n")))
		return ctl_usage(cmd, "no question");
	if (a->qbuf.len > ASK_QUESTION_MAX)
		return ctl_usage(cmd, "the question is longer than %d bytes", ASK_QUESTION_MAX);
	return GB_E_OK;
}

static void ask_free(struct ask *a)
{
	gb_buf_free(&a->qbuf);
	free(a->sql);
	free(a->explanation);
	gb_strv_free(&a->names);
	gb_strv_free(&a->cells);
	free(a->numeric);
	free(a->other);
	json_decref(a->rows);
}

gb_err_t ctl_cmd_ask(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longs[] = {
		CTL_COMMON_LONGOPTS,
		{ "limit", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd = "ask";
	struct ask a = { .limit = GB_STATE_QUERY_ROWS, .timeout = GB_STATE_QUERY_TIMEOUT };
	const struct gb_conf *conf;
	bool first = true;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, cmd, argc, argv, ":jhn:t:", longs, &first, &rc)) != -1) {
		switch (c) {
		case CTL_OPT_DONE:
			return rc;
		case 'n':
			if ((rc = ctl_parse_long(cmd, "--limit", optarg, 1, ASK_LIMIT_MAX, &a.limit)))
				return rc;
			break;
		case 't':
			if (!parse_seconds(optarg, &a.timeout))
				return ctl_usage(cmd, "invalid --timeout \"%s\": seconds (5, 0.5, 5s) up to %g",
						 optarg, ASK_TIMEOUT_MAX);
			break;
		default:
			return ctl_unimplemented(cmd, c);
		}
	}
	if ((rc = question_of(cmd, argc, argv, &a)))
		goto out;
	/* the configuration, the endpoint and the file before the model is asked */
	if (!(conf = ctl_conf(ctl, &rc)) || (rc = llm_configured(ctl, conf)))
		goto out;
	if (!ctl_state(ctl, false, &rc)) {
		if (rc == GB_E_OK)
			rc = ctl_fail(GB_E_NOTFOUND, "ask: no state file yet (%s/%s)",
				      conf->state_dir, GB_STATE_FILE);
		goto out;
	}
	ctl_log_open(ctl);
	if (!(rc = ask_model(conf, &a)))
		rc = run_query(ctl, conf, &a);
out:
	ask_free(&a);
	return rc;
}
