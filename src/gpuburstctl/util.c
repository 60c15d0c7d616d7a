/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * util.c - gpuburstctl: config and state on demand, options, tables, JSON
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "gb_log.h"
#include "gb_plan.h"
#include "gb_util.h"

/*****************************************************************************
 *  Messages
 *****************************************************************************/

/*
 * The last failure message and its code, for the --json error document.
 * One run is one command, so this is the process's.
 */
static struct {
	gb_err_t code;
	char text[GB_ERROR_TEXT_MAX];
} last;

__attribute__((format(printf, 2, 0)))
static void vnote(gb_err_t code, const char *fmt, va_list ap)
{
	last.code = code;
	vsnprintf(last.text, sizeof(last.text), fmt, ap);
}

void ctl_error_note(gb_err_t code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(code, fmt, ap);
	va_end(ap);
}

gb_err_t ctl_fail(gb_err_t code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(code, fmt, ap);
	va_end(ap);
	fprintf(stderr, "gpuburstctl: %s\n", last.text);
	return code;
}

gb_err_t ctl_usage(const char *cmd, const char *fmt, ...)
{
	const struct ctl_cmd *c = ctl_command(cmd);
	va_list ap;

	va_start(ap, fmt);
	vnote(GB_E_USAGE, fmt, ap);
	va_end(ap);
	fprintf(stderr, "gpuburstctl: %s\n", last.text);
	if (c)
		fprintf(stderr, "Usage: gpuburstctl %s%s%s\n", c->name,
			c->args[0] ? " " : "", c->args);
	return GB_E_USAGE;
}

gb_err_t ctl_unimplemented(const char *cmd, int c)
{
	return ctl_usage(cmd, "unimplemented option \"%c\"", c);
}

/*****************************************************************************
 *  Config, state, log
 *****************************************************************************/

void ctl_conf_errors(gb_err_t rc, const struct gb_errlist *errs,
		     const gb_error_t *err)
{
	if (errs->n == 0) {
		ctl_fail(rc, "%s", err->text);
		return;
	}
	for (size_t i = 0; i < errs->n; i++)
		fprintf(stderr, "%s\n", errs->msgs[i]);
	if (errs->n > 1)
		ctl_error_note(rc, "%s (and %zu more)", errs->msgs[0], errs->n - 1);
	else
		ctl_error_note(rc, "%s", errs->msgs[0]);
}

const struct gb_conf *ctl_conf(struct ctl *ctl, gb_err_t *rc)
{
	struct gb_errlist errs = { 0 };
	gb_error_t err = { 0 };

	if (ctl->conf)
		return ctl->conf;
	*rc = gb_conf_load(gb_conf_path(ctl->conf_path), &ctl->conf, &errs,
			   &err);
	if (*rc)
		ctl_conf_errors(*rc, &errs, &err);
	gb_errlist_free(&errs);
	return ctl->conf;
}

void ctl_state_notice(const gb_state_t *st)
{
	const char *note = gb_state_open_notice(st);

	if (note)
		fprintf(stderr, "gpuburstctl: warning: %s\n", note);
}

gb_state_t *ctl_state(struct ctl *ctl, bool write, gb_err_t *rc)
{
	const struct gb_conf *conf;
	char path[4096];
	gb_error_t err = { 0 };

	*rc = GB_E_OK;
	if (ctl->st && (ctl->st_rw || !write))
		return ctl->st;
	if (!(conf = ctl_conf(ctl, rc)))
		return NULL;
	gb_state_close(ctl->st);
	ctl->st = NULL;
	snprintf(path, sizeof(path), "%s/%s", conf->state_dir, GB_STATE_FILE);
	*rc = gb_state_open(path, write ? 0 : GB_STATE_RDONLY, CTL_STATE_BUSY_MS,
			    &ctl->st, &err);
	if (*rc == GB_E_NOTFOUND && !write) {
		ctl->st_missing = true;
		*rc = GB_E_OK;
		return NULL;
	}
	if (*rc) {
		ctl_fail(*rc, "%s", err.text);
		return NULL;
	}
	ctl_state_notice(ctl->st);
	ctl->st_rw = write;
	return ctl->st;
}

gb_state_t *ctl_state_existing(struct ctl *ctl, gb_error_t *why)
{
	const struct gb_conf *conf;
	gb_state_t *st = NULL;
	char path[4096];
	gb_err_t rc;

	if (ctl->st && ctl->st_rw)
		return ctl->st;
	if (!(conf = ctl_conf(ctl, &rc))) {
		gb_errorf(why, rc, "no configuration");
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/%s", conf->state_dir, GB_STATE_FILE);
	rc = gb_state_open(path, GB_STATE_NO_CREATE, CTL_STATE_BUSY_MS, &st, why);
	if (rc == GB_E_NOTFOUND)
		ctl->st_missing = true;
	if (rc)
		return NULL;
	ctl_state_notice(st);
	gb_state_close(ctl->st);
	ctl->st = st;
	ctl->st_rw = true;
	return st;
}

void ctl_log_open(struct ctl *ctl)
{
	const struct gb_conf *conf = ctl->conf;
	struct gb_log_opts o = { 0 };
	gb_error_t err = { 0 };

	if (ctl->log_open || !conf)
		return;
	ctl->log_open = true;
	o.file = conf->log.file;
	o.syslog = conf->log.syslog;
	o.level = conf->log.level;
	o.no_stderr = true;	/* the terminal gets our own messages */
	if (gb_log_open("gpuburstctl", &o, &err))
		fprintf(stderr, "gpuburstctl: warning: %s (the decision is still recorded in the state file)\n",
			err.text);
}

/*****************************************************************************
 *  Options
 *****************************************************************************/

int ctl_getopt(struct ctl *ctl, const char *cmd, int argc, char **argv,
	       const char *shortopts, const struct option *longopts,
	       bool *first, gb_err_t *rc)
{
	const struct ctl_cmd *c;
	int opt;

	if (*first) {
		optind = 0;	/* glibc: full re-initialisation */
		opterr = 0;
		*first = false;
	}
	opt = getopt_long(argc, argv, shortopts, longopts, NULL);
	switch (opt) {
	case 'j':
		ctl->json = true;
		return ctl_getopt(ctl, cmd, argc, argv, shortopts, longopts,
				  first, rc);
	case 'h':
		c = ctl_command(cmd);
		printf("Usage: gpuburstctl %s%s%s\n  %s\n", cmd,
		       c && c->args[0] ? " " : "", c ? c->args : "",
		       c ? c->summary : "");
		*rc = GB_E_OK;
		return CTL_OPT_DONE;
	case '?':
		if (optopt)
			*rc = ctl_usage(cmd, "invalid option \"-%c\"", optopt);
		else
			*rc = ctl_usage(cmd, "invalid option \"%s\"",
					argv[optind - 1]);
		return CTL_OPT_DONE;
	case ':':
		*rc = ctl_usage(cmd, "missing argument for option \"%s\"",
				argv[optind - 1]);
		return CTL_OPT_DONE;
	default:
		return opt;
	}
}

gb_err_t ctl_parse_long(const char *cmd, const char *opt, const char *s,
			long min, long max, long *out)
{
	if (gb_parse_long(s, min, max, out) == GB_E_OK)
		return GB_E_OK;
	return ctl_usage(cmd, "invalid %s \"%s\": a whole number from %ld to %ld",
			 opt, s, min, max);
}

size_t ctl_id_len(const char *id)
{
	size_t n = 0;

	while (id[n] && isxdigit((unsigned char)id[n]) && !isupper((unsigned char)id[n]))
		n++;
	return n;
}

gb_err_t ctl_check_id(const char *cmd, const char *id)
{
	size_t n = ctl_id_len(id);

	if (n == GB_REQUEST_ID_LEN && !id[n])
		return GB_E_OK;
	return ctl_usage(cmd, "invalid request id \"%s\": %d lower-case hex digits expected",
			 id, GB_REQUEST_ID_LEN);
}

/*****************************************************************************
 *  JSON and times
 *****************************************************************************/

static json_t *result;		/* the command's document, until the end */
static const char *streaming;	/* the array being streamed, or NULL */
static size_t streamed;		/* its rows so far */

void ctl_json_stream(const char *member)
{
	streaming = member;
	streamed = 0;
	printf("{\n  \"%s\": [", member);
}

void ctl_json_row(json_t *row)
{
	if (!row)
		return;
	fputs(streamed++ ? ",\n    " : "\n    ", stdout);
	json_dumpf(row, stdout, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(row);
}

void ctl_json_result(json_t *doc)
{
	json_decref(result);
	result = doc;
}

gb_err_t ctl_json_finish(gb_err_t rc)
{
	json_t *doc = result;

	result = NULL;
	if (!doc && rc == GB_E_OK && !streaming)
		return rc;	/* --help, worker: no document */
	if (!doc)
		doc = json_object();
	else if (!json_is_object(doc))
		doc = json_pack("{s:o}", "result", doc);
	json_object_set_new(doc, "schema", json_string(CTL_JSON_SCHEMA));
	if (rc)
		json_object_set_new(doc, "error", json_pack("{s:s,s:i,s:s}",
			"code", gb_err_name(rc), "exit", (int)rc, "message",
			last.code == rc && last.text[0] ? last.text : gb_strerror(rc)));
	if (streaming) {
		/* the streamed array, then the other members as they print */
		char *rest = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);

		printf("%s]%s%s\n", streamed ? "\n  " : "", rest ? "," : "",
		       rest ? rest + 1 : "\n}");
		free(rest);
		streaming = NULL;
	} else {
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		fputc('\n', stdout);
	}
	json_decref(doc);
	return rc;
}

json_t *ctl_jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *ctl_jtime(double t)
{
	char iso[40];

	return t > 0 ? json_string(gb_time_iso_ms(t, iso, sizeof(iso))) : json_null();
}

json_t *ctl_jraw(const char *text)
{
	json_t *j;

	if (!text)
		return json_null();
	j = json_loads(text, JSON_DECODE_ANY, NULL);
	return j ? j : json_string(text);
}

const char *ctl_time(double t, char *buf, size_t n)
{
	if (t > 0)
		return gb_time_iso(t, buf, n);
	gb_strlcpy(buf, "-", n);
	return buf;
}

const char *ctl_dur(double seconds, char *buf, size_t n)
{
	if (seconds >= 0)
		return gb_time_human(seconds, buf, n);
	gb_strlcpy(buf, "-", n);
	return buf;
}

const char *ctl_itoa(long long v, char *buf, size_t n)
{
	snprintf(buf, n, "%lld", v);
	return buf;
}

/*****************************************************************************
 *  Tables
 *****************************************************************************/

void ctl_table_init_v(struct ctl_table *t, size_t ncols, const char *const *headers)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->failed = ncols > CTL_TABLE_COLS_MAX;
	for (size_t i = 0; i < ncols; i++)
		t->failed |= gb_strv_add(&t->cells, headers[i]) != GB_E_OK;
}

void ctl_table_init(struct ctl_table *t, size_t ncols, ...)
{
	const char *h[CTL_TABLE_COLS_MAX];
	va_list ap;

	va_start(ap, ncols);
	for (size_t i = 0; i < ncols && i < CTL_TABLE_COLS_MAX; i++)
		h[i] = va_arg(ap, const char *);
	va_end(ap);
	if (ncols > CTL_TABLE_COLS_MAX) {	/* a programming error, said once */
		memset(t, 0, sizeof(*t));
		t->failed = true;
		return;
	}
	ctl_table_init_v(t, ncols, h);
}

/* Widen [t]'s columns to [cells] ([header]: without its '>' marks). */
static void widen(struct ctl_table *t, const char *const *cells, bool header)
{
	for (size_t c = 0; c < t->ncols; c++) {
		size_t len = strlen(cells[c]) - (header && cells[c][0] == '>');

		if (len > t->w[c])
			t->w[c] = len;
	}
}

/* Cells never contain newlines or tabs: they would break the columns. */
static void print_cell(FILE *fp, const char *s)
{
	for (; *s; s++)
		fputc(iscntrl((unsigned char)*s) ? ' ' : *s, fp);
}

static void print_row(const struct ctl_table *t, const char *const *cells,
		      bool header, FILE *fp)
{
	if (t->indent)
		fputs(t->indent, fp);
	for (size_t c = 0; c < t->ncols; c++) {
		bool right = t->cells.v[c][0] == '>';
		const char *s = cells[c] + (header && right);
		size_t len = strlen(s);

		if (c)
			fputs("  ", fp);
		if (right && len < t->w[c])
			fprintf(fp, "%*s", (int)(t->w[c] - len), "");
		print_cell(fp, s);
		if (!right && c + 1 < t->ncols && len < t->w[c])
			fprintf(fp, "%*s", (int)(t->w[c] - len), "");
	}
	fputc('\n', fp);
}

void ctl_table_row_v(struct ctl_table *t, const char *const *cells)
{
	const char *row[CTL_TABLE_COLS_MAX];

	if (t->failed)
		return;
	for (size_t i = 0; i < t->ncols; i++)
		row[i] = cells[i] && *cells[i] ? cells[i] : "-";
	switch (t->mode) {
	case CTL_TABLE_HOLD:
		for (size_t i = 0; i < t->ncols; i++)
			t->failed |= gb_strv_add(&t->cells, row[i]) != GB_E_OK;
		break;
	case CTL_TABLE_MEASURE:
		widen(t, row, false);
		break;
	case CTL_TABLE_STREAM:
		print_row(t, row, false, t->fp);
		break;
	}
}

void ctl_table_row(struct ctl_table *t, ...)
{
	const char *row[CTL_TABLE_COLS_MAX];
	va_list ap;

	va_start(ap, t);
	for (size_t i = 0; i < t->ncols && i < CTL_TABLE_COLS_MAX; i++)
		row[i] = va_arg(ap, const char *);
	va_end(ap);
	ctl_table_row_v(t, row);
}

void ctl_table_measure(struct ctl_table *t)
{
	t->mode = CTL_TABLE_MEASURE;
	memset(t->w, 0, sizeof(t->w));
	if (!t->failed)
		widen(t, (const char *const *)t->cells.v, true);
}

void ctl_table_stream(struct ctl_table *t, FILE *fp)
{
	t->mode = CTL_TABLE_STREAM;
	t->fp = fp;
	if (t->failed)
		fprintf(stderr, "gpuburstctl: out of memory printing a table\n");
	else
		print_row(t, (const char *const *)t->cells.v, true, fp);
}

void ctl_table_print(struct ctl_table *t, FILE *fp)
{
	size_t rows = t->ncols ? t->cells.n / t->ncols : 0;

	if (t->mode != CTL_TABLE_HOLD)
		return;
	if (t->failed) {
		fprintf(stderr, "gpuburstctl: out of memory printing a table\n");
		return;
	}
	memset(t->w, 0, sizeof(t->w));
	for (size_t r = 0; r < rows; r++)
		widen(t, (const char *const *)t->cells.v + r * t->ncols, r == 0);
	for (size_t r = 0; r < rows; r++)
		print_row(t, (const char *const *)t->cells.v + r * t->ncols, r == 0, fp);
}

void ctl_table_free(struct ctl_table *t)
{
	gb_strv_free(&t->cells);
	memset(t, 0, sizeof(*t));
}

gb_err_t ctl_ec2_client(const struct gb_conf *conf, const struct gb_conf_region *r,
			gb_creds_t *creds, long timeout_ms, gb_ec2_t **out, gb_error_t *err)
{
	struct gb_ec2_opts eo = { 0 };

	eo.region = r->name;
	eo.endpoint = gb_conf_endpoint(conf, r);
	eo.creds = creds;
	eo.http.timeout_ms = timeout_ms;
	gb_plan_http_opts(conf, &eo.http);
	eo.max_pages = 100;
	return gb_ec2_create(&eo, out, err);
}
