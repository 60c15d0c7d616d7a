/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conf_yaml.c - walk a libyaml document through the key schema
 *
 * The walker never stops at the first problem: every error is collected
 * with its position (conf_error) and loading fails as a whole at the end.
 * Values are converted from the scalar text ourselves: libyaml's document
 * loader tags every scalar as a string, and the YAML 1.1 implicit types
 * (on/off, 0x10, 1_000) are too loose for a configuration file.
 */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_int.h"

/*****************************************************************************
 *  Messages and marks
 *****************************************************************************/

struct gb_conf_mark conf_node_mark(const yaml_node_t *n)
{
	struct gb_conf_mark m = { 0, 0 };

	if (n) {
		m.line = (unsigned)n->start_mark.line + 1;
		m.col = (unsigned)n->start_mark.column + 1;
	}
	return m;
}

__attribute__((format(printf, 3, 0)))
static void msg_vadd(struct conf_ctx *c, struct gb_conf_mark m,
		     const char *fmt, va_list ap)
{
	char *text = NULL;

	if (c->n_msgs >= CONF_MAX_ERRORS) {
		c->n_dropped++;
		return;
	}
	if (c->n_msgs == c->cap_msgs) {
		size_t cap = c->cap_msgs ? 2 * c->cap_msgs : 16;
		struct conf_msg *v = realloc(c->msgs, cap * sizeof(*v));

		if (!v) {
			c->oom = true;
			return;
		}
		c->msgs = v;
		c->cap_msgs = cap;
	}
	if (vasprintf(&text, fmt, ap) < 0) {
		c->oom = true;
		return;
	}
	c->msgs[c->n_msgs].line = m.line;
	c->msgs[c->n_msgs].col = m.col;
	c->msgs[c->n_msgs].seq = c->n_msgs;
	c->msgs[c->n_msgs].text = text;
	c->n_msgs++;
}

void conf_error(struct conf_ctx *c, struct gb_conf_mark m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vadd(c, m, fmt, ap);
	va_end(ap);
}

void conf_error_at(struct conf_ctx *c, const yaml_node_t *n,
		   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_vadd(c, conf_node_mark(n), fmt, ap);
	va_end(ap);
}

void conf_nomem(struct conf_ctx *c)
{
	c->oom = true;
}

void conf_mark_add(struct conf_ctx *c, const void *addr, const yaml_node_t *n)
{
	if (c->n_marks == c->cap_marks) {
		size_t cap = c->cap_marks ? 2 * c->cap_marks : 64;
		struct conf_markent *v = realloc(c->marks, cap * sizeof(*v));

		if (!v) {
			conf_nomem(c);
			return;
		}
		c->marks = v;
		c->cap_marks = cap;
	}
	c->marks[c->n_marks].addr = addr;
	c->marks[c->n_marks].mark = conf_node_mark(n);
	c->n_marks++;
	c->marks_sorted = false;
}

static int mark_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct conf_markent *)a)->addr;
	uintptr_t y = (uintptr_t)((const struct conf_markent *)b)->addr;

	return (x > y) - (x < y);
}

struct gb_conf_mark conf_mark_of(struct conf_ctx *c, const void *addr)
{
	struct conf_markent key = { addr, { 0, 0 } }, *hit;
	struct gb_conf_mark none = { 0, 0 };

	if (!c->marks)
		return none;
	if (!c->marks_sorted) {
		qsort(c->marks, c->n_marks, sizeof(*c->marks), mark_cmp);
		c->marks_sorted = true;
	}
	hit = bsearch(&key, c->marks, c->n_marks, sizeof(*c->marks), mark_cmp);
	return hit ? hit->mark : none;
}

const char *conf_mark_where(struct conf_ctx *c, const void *first,
			    const void *here, char *buf, size_t n)
{
	struct gb_conf_mark f = conf_mark_of(c, first), h = conf_mark_of(c, here);

	if (f.line == h.line)
		snprintf(buf, n, "line %u, column %u", f.line, f.col);
	else
		snprintf(buf, n, "line %u", f.line);
	return buf;
}

const char *conf_show_len(const char *s, size_t len, char *buf, size_t n)
{
	size_t i, j = 0;

	for (i = 0; i < len && j + 4 < n && i < CONF_SHOW_MAX; i++)
		buf[j++] = iscntrl((unsigned char)s[i]) ? '?' : s[i];
	if (i < len && j + 4 <= n) {
		memcpy(buf + j, "...", 3);
		j += 3;
	}
	buf[j] = '\0';
	return buf;
}

const char *conf_show(const char *s, char *buf, size_t n)
{
	return conf_show_len(s, strlen(s), buf, n);
}

/*
 * A double-quoted scalar can hold a NUL ("a\0b"); every reader of the
 * value takes it as a C string, so "state_dir\0x" would be read as the
 * key state_dir and "/etc/passwd\0x" as /etc/passwd.
 */
bool conf_has_nul(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE &&
	       strlen((const char *)n->data.scalar.value) != n->data.scalar.length;
}

void conf_error_nul(struct conf_ctx *c, const yaml_node_t *n, const char *what)
{
	char tmp[CONF_SHOW_MAX + 8];

	conf_error_at(c, n, "%s must not contain a NUL character, got '%s'", what,
		      conf_show_len((const char *)n->data.scalar.value,
				    n->data.scalar.length, tmp, sizeof(tmp)));
}

/* "a list", "a mapping", or the scalar itself in quotes. */
static const char *got(const yaml_node_t *n, char *buf, size_t len)
{
	char tmp[CONF_SHOW_MAX + 8];

	if (n->type == YAML_SEQUENCE_NODE)
		return "a list";
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	snprintf(buf, len, "'%s'",
		 conf_show((const char *)n->data.scalar.value, tmp, sizeof(tmp)));
	return buf;
}

const char *conf_kind_name(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "a scalar";
	}
}

/*****************************************************************************
 *  Names, enums, durations
 *****************************************************************************/

int conf_enum_find(const struct conf_enum *e, const char *s)
{
	for (int i = 0; i < e->n; i++) {
		if (e->names[i] && strcmp(e->names[i], s) == 0)
			return i;
	}
	return -1;
}

void conf_enum_list(const struct conf_enum *e, struct gb_buf *b)
{
	bool first = true;

	for (int i = 0; i < e->n; i++) {
		if (!e->names[i])
			continue;
		gb_buf_printf(b, "%s%s", first ? "" : ", ", e->names[i]);
		first = false;
	}
}

const char *conf_duration_str(double s, char *buf, size_t n)
{
	static const struct { double secs; char unit; } units[] = {
		{ 86400, 'd' }, { 3600, 'h' }, { 60, 'm' },
	};

	if (s < 0) {
		snprintf(buf, n, "auto");
		return buf;
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(units); i++) {
		if (s >= units[i].secs && fmod(s, units[i].secs) == 0) {
			snprintf(buf, n, "%.0f%c", s / units[i].secs, units[i].unit);
			return buf;
		}
	}
	snprintf(buf, n, "%.0fs", s);
	return buf;
}

/* "90", "90s", "10m", "2h", "1d" -> seconds.  RET false if malformed. */
static bool parse_duration(const char *s, double *out)
{
	static const char units[] = "smhd";
	static const double mult[] = { 1, 60, 3600, 86400 };
	size_t digits = 0;
	long v;

	while (isdigit((unsigned char)s[digits]))
		digits++;
	if (digits == 0 || digits > 9)
		return false;
	if (gb_parse_long(s, 0, 999999999, &v) == GB_E_OK) {
		*out = (double)v;
		return true;
	}
	if (s[digits + 1] != '\0' || !s[digits] || !strchr(units, s[digits]))
		return false;
	v = strtol(s, NULL, 10);
	*out = (double)v * mult[strchr(units, s[digits]) - units];
	return true;
}

/*****************************************************************************
 *  Scalars
 *****************************************************************************/

/* One scalar to convert: from the file ([n] set) or a default. */
struct scalar {
	const char *s;
	size_t len;
	bool quoted;
	const yaml_node_t *n;
};

static bool is_null(const yaml_node_t *n)
{
	const char *v = (const char *)n->data.scalar.value;

	if (n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") ||
	       !strcmp(v, "Null") || !strcmp(v, "NULL");
}

static const char *got_text(const yaml_node_t *n, char *buf, size_t len)
{
	if (is_null(n))
		return "nothing";
	return got(n, buf, len);
}

static void type_desc(const struct conf_key *k, struct gb_buf *b)
{
	static const char *const desc[] = {
		[CT_STR] = "a string",
		[CT_ABSPATH] = "an absolute path",
		[CT_URL] = "an http:// or https:// URL",
		[CT_BOOL] = "a boolean (true, false, yes or no)",
		[CT_INT] = "an integer",
		[CT_NUMBER] = "a number",
		[CT_DURATION] = ("a duration (seconds, or a number with unit "
				 "s, m, h or d such as 90s or 10m)"),
		[CT_ENUM] = "one of ",
		[CT_STRV] = "a list of strings",
		[CT_MAP] = "a mapping",
		[CT_LIST] = "a list of mappings",
		[CT_DICT] = "a mapping of names to mappings",
		[CT_FUNC] = "a string",
	};

	gb_buf_puts(b, desc[k->type]);
	if (k->type == CT_ENUM)
		conf_enum_list(k->arg, b);
	if (k->type == CT_DURATION && (k->flags & CF_AUTO))
		gb_buf_puts(b, ", or auto");
	if (k->type == CT_DURATION && (k->flags & CF_OFF))
		gb_buf_puts(b, ", or off");
}

/* "'batch_max' must be an integer, got 'four'" */
static bool wrong_type(struct conf_ctx *c, const struct conf_key *k,
		       const yaml_node_t *n, const struct scalar *sv)
{
	struct gb_buf b = GB_BUF_INIT;
	char tmp[CONF_SHOW_MAX + 8], g[CONF_SHOW_MAX + 16];

	type_desc(k, &b);
	if (sv)
		snprintf(g, sizeof(g), "'%s'%s", conf_show(sv->s, tmp, sizeof(tmp)),
			 sv->quoted ? " (a quoted string)" : "");
	conf_error_at(c, n, "'%s' must be %s, got %s", k->name, gb_buf_str(&b),
		      sv ? g : got_text(n, tmp, sizeof(tmp)));
	if (gb_buf_failed(&b))
		conf_nomem(c);
	gb_buf_free(&b);
	return false;
}

static void store_str(struct conf_ctx *c, char **dst, const char *s)
{
	char *v = NULL;

	if (s && !(v = strdup(s))) {
		conf_nomem(c);
		return;
	}
	free(*dst);
	*dst = v;
}

static bool url_ok(const char *s)
{
	const char *rest;

	if (gb_str_has_prefix(s, "http://"))
		rest = s + 7;
	else if (gb_str_has_prefix(s, "https://"))
		rest = s + 8;
	else
		return false;
	if (!*rest || *rest == '/')
		return false;
	for (; *s; s++) {
		if (isspace((unsigned char)*s) || iscntrl((unsigned char)*s))
			return false;
	}
	return true;
}

static bool conv_string(struct conf_ctx *c, const struct conf_key *k,
			const struct scalar *sv, char **dst)
{
	if (!*sv->s) {
		if (!(k->flags & CF_EMPTY_NULL)) {
			conf_error_at(c, sv->n, "'%s' must not be empty", k->name);
			return false;
		}
		store_str(c, dst, NULL);
		return true;
	}
	if ((k->type == CT_ABSPATH && sv->s[0] != '/') ||
	    (k->type == CT_URL && !url_ok(sv->s)))
		return wrong_type(c, k, sv->n, sv);
	store_str(c, dst, sv->s);
	return true;
}

static bool conv_bool(struct conf_ctx *c, const struct conf_key *k,
		      const struct scalar *sv, bool *dst)
{
	if (sv->quoted)
		return wrong_type(c, k, sv->n, sv);
	if (!strcmp(sv->s, "true") || !strcmp(sv->s, "yes"))
		*dst = true;
	else if (!strcmp(sv->s, "false") || !strcmp(sv->s, "no"))
		*dst = false;
	else
		return wrong_type(c, k, sv->n, sv);
	return true;
}

static bool conv_int(struct conf_ctx *c, const struct conf_key *k,
		     const struct scalar *sv, int *dst)
{
	long v;

	if (sv->quoted ||
	    gb_parse_long(sv->s, LONG_MIN, LONG_MAX, &v))
		return wrong_type(c, k, sv->n, sv);
	if (v < k->min || v > k->max) {
		conf_error_at(c, sv->n, "'%s' must be between %.0f and %.0f, got %ld",
			      k->name, k->min, k->max, v);
		return false;
	}
	*dst = (int)v;
	return true;
}

static bool conv_number(struct conf_ctx *c, const struct conf_key *k,
			const struct scalar *sv, double *dst)
{
	char tmp[CONF_SHOW_MAX + 8];
	double v;

	if (sv->quoted ||
	    gb_parse_double(sv->s, &v) || v < k->min || v > k->max) {
		conf_error_at(c, sv->n, "'%s' must be a number between %g and %g, got '%s'%s",
			      k->name, k->min, k->max,
			      conf_show(sv->s, tmp, sizeof(tmp)),
			      sv->quoted ? " (a quoted string)" : "");
		return false;
	}
	*dst = v;
	return true;
}

static bool conv_duration(struct conf_ctx *c, const struct conf_key *k,
			  const struct scalar *sv, double *dst)
{
	char lo[32], hi[32], tmp[CONF_SHOW_MAX + 8];
	double v;

	if ((k->flags & CF_AUTO) && !strcmp(sv->s, "auto")) {
		*dst = -1;
		return true;
	}
	if ((k->flags & CF_OFF) && !strcmp(sv->s, "off")) {
		*dst = 0;
		return true;
	}
	if (!parse_duration(sv->s, &v))
		return wrong_type(c, k, sv->n, sv);
	if ((k->flags & CF_OFF) && v == 0) {
		*dst = 0;
		return true;
	}
	if (v < k->min || v > k->max) {
		conf_error_at(c, sv->n, "'%s' must be %sbetween %s and %s, got '%s'",
			      k->name, k->flags & CF_OFF ? "off (or 0), or " : "",
			      conf_duration_str(k->min, lo, sizeof(lo)),
			      conf_duration_str(k->max, hi, sizeof(hi)),
			      conf_show(sv->s, tmp, sizeof(tmp)));
		return false;
	}
	*dst = v;
	return true;
}

static bool conv_enum(struct conf_ctx *c, const struct conf_key *k,
		      const struct scalar *sv, void *dst)
{
	int v = conf_enum_find(k->arg, sv->s);

	if (v < 0)
		return wrong_type(c, k, sv->n, sv);
	memcpy(dst, &v, sizeof(v));	/* every conf enum is int-sized */
	return true;
}

static bool conv_scalar(struct conf_ctx *c, const struct conf_key *k,
			const struct scalar *sv, void *dst)
{
	if (strlen(sv->s) != sv->len) {
		char what[CONF_SHOW_MAX + 8];

		snprintf(what, sizeof(what), "'%s'", k->name);
		if (k->flags & CF_SECRET)
			conf_error_at(c, sv->n, "%s must not contain a NUL character", what);
		else
			conf_error_nul(c, sv->n, what);
		return false;
	}
	switch (k->type) {
	case CT_STR:
	case CT_ABSPATH:
	case CT_URL:
		return conv_string(c, k, sv, dst);
	case CT_BOOL:
		return conv_bool(c, k, sv, dst);
	case CT_INT:
		return conv_int(c, k, sv, dst);
	case CT_NUMBER:
		return conv_number(c, k, sv, dst);
	case CT_DURATION:
		return conv_duration(c, k, sv, dst);
	case CT_ENUM:
		return conv_enum(c, k, sv, dst);
	default:
		conf_error_at(c, sv->n, "internal error: '%s' is not a scalar key",
			      k->name);
		return false;
	}
}

/*****************************************************************************
 *  Walking
 *****************************************************************************/

static yaml_node_t *node_at(struct conf_ctx *c, int index)
{
	return yaml_document_get_node(c->doc, index);
}

/* Count one more node; RET false (once reporting why) past the budget. */
static bool visit(struct conf_ctx *c, const yaml_node_t *n)
{
	if (c->stop || !n)
		return false;
	if (++c->visits <= CONF_MAX_NODE_VISITS)
		return true;
	conf_error_at(c, n, "more than %d YAML nodes to read (a file far too large, or an alias repeated too often)",
		      CONF_MAX_NODE_VISITS);
	c->stop = true;
	return false;
}

static const char *where_str(const char *where, char *buf, size_t n)
{
	if (!*where)
		return "at the top level";
	snprintf(buf, n, "in %s", where);
	return buf;
}

static void walk_scalar(struct conf_ctx *c, const struct conf_key *k,
			yaml_node_t *n, void *obj)
{
	void *dst = (char *)obj + k->off;
	struct scalar sv;

	if (n->type != YAML_SCALAR_NODE) {
		wrong_type(c, k, n, NULL);
		return;
	}
	sv.s = (const char *)n->data.scalar.value;
	sv.len = n->data.scalar.length;
	sv.quoted = n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
	sv.n = n;
	if (!conv_scalar(c, k, &sv, dst))
		return;
	conf_mark_add(c, dst, n);
	if (k->check)
		k->check(c, k, n, dst);
}

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Read one item of a list of strings into v[*m]. */
static void strv_item(struct conf_ctx *c, const struct conf_key *k,
		      yaml_node_t *in, char **v, size_t *m)
{
	char tmp[CONF_SHOW_MAX + 8];

	if (in->type != YAML_SCALAR_NODE || is_null(in)) {
		conf_error_at(c, in, "items of '%s' must be strings, got %s",
			      k->name, got_text(in, tmp, sizeof(tmp)));
		return;
	}
	if (conf_has_nul(in)) {
		snprintf(tmp, sizeof(tmp), "items of '%s'", k->name);
		conf_error_nul(c, in, tmp);
		return;
	}
	if (in->data.scalar.length == 0) {
		conf_error_at(c, in, "items of '%s' must be non-empty strings",
			      k->name);
		return;
	}
	if (!(v[*m] = strdup((const char *)in->data.scalar.value))) {
		conf_nomem(c);
		return;
	}
	conf_mark_add(c, &v[*m], in);
	(*m)++;
}

static void walk_strv(struct conf_ctx *c, const struct conf_key *k,
		      yaml_node_t *n, void *obj)
{
	char ***dst = (char ***)((char *)obj + k->off);
	size_t total, m = 0;
	char **v;

	if (n->type != YAML_SEQUENCE_NODE) {
		wrong_type(c, k, n, NULL);
		return;
	}
	total = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (!(v = calloc(total + 1, sizeof(*v)))) {
		conf_nomem(c);
		return;
	}
	for (size_t i = 0; i < total; i++) {
		yaml_node_t *in = node_at(c, n->data.sequence.items.start[i]);

		if (!visit(c, in))
			break;
		strv_item(c, k, in, v, &m);
	}
	strv_free(*dst);
	*dst = v;
	if (k->off_n != CONF_NO_OFF)
		*(size_t *)((char *)obj + k->off_n) = m;
	if (total == 0 && (k->flags & CF_NONEMPTY))
		conf_error_at(c, n, "'%s' must not be empty", k->name);
	else if (k->check)
		k->check(c, k, n, dst);
}

static void walk_map(struct conf_ctx *c, const struct conf_key *k,
		     yaml_node_t *n, void *obj, const char *where)
{
	char sub[256];

	if (n->type != YAML_MAPPING_NODE) {
		wrong_type(c, k, n, NULL);
		return;
	}
	snprintf(sub, sizeof(sub), "%s%s%s", where, *where ? "." : "", k->name);
	conf_walk_mapping(c, k->arg, n, (char *)obj + k->off, sub);
}

/* Allocate [n] zeroed elements of [sc] for row [k] of [obj], defaults set. */
static char *elems_alloc(struct conf_ctx *c, const struct conf_key *k,
			 const struct conf_schema *sc, size_t n, void *obj)
{
	char *arr = NULL;

	if (n && !(arr = calloc(n, sc->size))) {
		conf_nomem(c);
		return NULL;
	}
	*(void **)((char *)obj + k->off) = arr;
	*(size_t *)((char *)obj + k->off_n) = n;
	for (size_t i = 0; i < n; i++)
		conf_defaults(c, sc, arr + i * sc->size);
	return arr;
}

static void walk_list(struct conf_ctx *c, const struct conf_key *k,
		      yaml_node_t *n, void *obj, const char *where)
{
	const struct conf_schema *sc = k->arg;
	char sub[256], tmp[CONF_SHOW_MAX + 8];
	size_t total;
	char *arr;

	if (n->type != YAML_SEQUENCE_NODE) {
		wrong_type(c, k, n, NULL);
		return;
	}
	total = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (total == 0 && (k->flags & CF_NONEMPTY)) {
		conf_error_at(c, n, "'%s' must not be empty", k->name);
		return;
	}
	if (!(arr = elems_alloc(c, k, sc, total, obj)))
		return;
	for (size_t i = 0; i < total; i++) {
		yaml_node_t *in = node_at(c, n->data.sequence.items.start[i]);
		char *elem = arr + i * sc->size;

		if (!visit(c, in))
			break;
		if (in->type != YAML_MAPPING_NODE) {
			conf_error_at(c, in, "items of '%s' must be mappings, got %s",
				      k->name, got_text(in, tmp, sizeof(tmp)));
			continue;
		}
		if (sc->mark_off != CONF_NO_OFF)
			*(struct gb_conf_mark *)(elem + sc->mark_off) = conf_node_mark(in);
		snprintf(sub, sizeof(sub), "%s%s%s[%zu]", where, *where ? "." : "",
			 k->name, i);
		conf_walk_mapping(c, sc, in, elem, sub);
	}
}

static void dup_key(struct conf_ctx *c, const struct conf_named *first,
		    const struct conf_named *dup, const void *arg)
{
	char tmp[CONF_SHOW_MAX + 8], at[64];

	conf_error(c, conf_mark_of(c, dup->addr),
		   "duplicate key '%s' %s (first at %s)",
		   conf_show(dup->name, tmp, sizeof(tmp)), (const char *)arg,
		   conf_mark_where(c, first->addr, dup->addr, at, sizeof(at)));
}

/* Read the name of a CT_DICT entry; RET false if it is not usable. */
static bool dict_name(struct conf_ctx *c, const struct conf_key *k,
		      yaml_node_t *kn, char *elem, struct conf_namev *names)
{
	const struct conf_schema *sc = k->arg;
	char **name = (char **)(elem + sc->name_off);
	char tmp[CONF_SHOW_MAX + 8];

	if (kn->type != YAML_SCALAR_NODE || is_null(kn)) {
		conf_error_at(c, kn, "names in '%s' must be non-empty strings, got %s",
			      k->name, got_text(kn, tmp, sizeof(tmp)));
		return false;
	}
	if (conf_has_nul(kn)) {
		snprintf(tmp, sizeof(tmp), "names in '%s'", k->name);
		conf_error_nul(c, kn, tmp);
		return false;
	}
	store_str(c, name, (const char *)kn->data.scalar.value);
	if (!*name)
		return false;
	conf_mark_add(c, name, kn);
	conf_namev_add(c, names, *name, name, 0);
	return true;
}

static void walk_dict(struct conf_ctx *c, const struct conf_key *k,
		      yaml_node_t *n, void *obj, const char *where)
{
	const struct conf_schema *sc = k->arg;
	struct conf_namev names = { 0 };
	char sub[256], in_where[300];
	size_t total;
	char *arr;

	if (n->type != YAML_MAPPING_NODE) {
		wrong_type(c, k, n, NULL);
		return;
	}
	total = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	if (!(arr = elems_alloc(c, k, sc, total, obj)))
		return;
	for (size_t i = 0; i < total; i++) {
		yaml_node_pair_t *p = &n->data.mapping.pairs.start[i];
		yaml_node_t *kn = node_at(c, p->key), *vn = node_at(c, p->value);
		char *elem = arr + i * sc->size;

		if (!visit(c, kn) || !dict_name(c, k, kn, elem, &names))
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s.%s", where, *where ? "." : "",
			 k->name, *(char **)(elem + sc->name_off));
		if (vn->type != YAML_MAPPING_NODE)
			wrong_type(c, k, vn, NULL);
		else
			conf_walk_mapping(c, sc, vn, elem, sub);
	}
	snprintf(sub, sizeof(sub), "%s%s%s", where, *where ? "." : "", k->name);
	where_str(sub, in_where, sizeof(in_where));
	conf_dups_report(c, &names, dup_key, in_where);
	conf_namev_free(&names);
}

static void walk_value(struct conf_ctx *c, const struct conf_key *k,
		       yaml_node_t *vn, void *obj, const char *where)
{
	switch (k->type) {
	case CT_STRV:
		walk_strv(c, k, vn, obj);
		break;
	case CT_MAP:
		walk_map(c, k, vn, obj, where);
		break;
	case CT_LIST:
		walk_list(c, k, vn, obj, where);
		break;
	case CT_DICT:
		walk_dict(c, k, vn, obj, where);
		break;
	case CT_FUNC:
		k->func(c, k, vn, obj);
		break;
	default:
		walk_scalar(c, k, vn, obj);
		break;
	}
}

static int key_index(const struct conf_schema *sc, const char *name)
{
	for (int i = 0; sc->keys[i].name; i++) {
		if (strcmp(sc->keys[i].name, name) == 0)
			return i;
	}
	return -1;
}

yaml_node_t *conf_seen(const struct conf_schema *sc, yaml_node_t *const *seen,
		       const char *name)
{
	int i = key_index(sc, name);

	return i < 0 ? NULL : seen[i];
}

static void unknown_key(struct conf_ctx *c, const struct conf_schema *sc,
			const yaml_node_t *kn, const char *where)
{
	struct gb_buf b = GB_BUF_INIT;
	char tmp[CONF_SHOW_MAX + 8], w[300];

	for (int i = 0; sc->keys[i].name; i++)
		gb_buf_printf(&b, "%s%s", i ? ", " : "", sc->keys[i].name);
	if (!sc->keys[0].name)	/* a mapping that only says "here": {} */
		conf_error_at(c, kn, "unknown key '%s' %s (it takes no keys: write {})",
			      conf_show((const char *)kn->data.scalar.value, tmp, sizeof(tmp)),
			      where_str(where, w, sizeof(w)));
	else
		conf_error_at(c, kn, "unknown key '%s' %s (expected one of: %s)",
			      conf_show((const char *)kn->data.scalar.value, tmp, sizeof(tmp)),
			      where_str(where, w, sizeof(w)), gb_buf_str(&b));
	if (gb_buf_failed(&b))
		conf_nomem(c);
	gb_buf_free(&b);
}

/* Find the row of key node [kn]; report unknown and duplicate keys. */
static int pair_row(struct conf_ctx *c, const struct conf_schema *sc,
		    yaml_node_t *kn, yaml_node_t **first, const char *where)
{
	char tmp[CONF_SHOW_MAX + 8], w[300], at[64];
	int i;

	if (kn->type != YAML_SCALAR_NODE) {
		conf_error_at(c, kn, "keys must be strings, got %s",
			      conf_kind_name(kn));
		return -1;
	}
	if (conf_has_nul(kn)) {	/* else read as the key before the NUL */
		conf_error_nul(c, kn, "keys");
		return -1;
	}
	if ((i = key_index(sc, (const char *)kn->data.scalar.value)) < 0) {
		unknown_key(c, sc, kn, where);
		return -1;
	}
	if (first[i]) {
		struct gb_conf_mark f = conf_node_mark(first[i]);

		if (f.line == conf_node_mark(kn).line)
			snprintf(at, sizeof(at), "line %u, column %u", f.line, f.col);
		else
			snprintf(at, sizeof(at), "line %u", f.line);
		conf_error_at(c, kn, "duplicate key '%s' %s (first at %s)",
			      conf_show(sc->keys[i].name, tmp, sizeof(tmp)),
			      where_str(where, w, sizeof(w)), at);
		return -1;
	}
	first[i] = kn;
	return i;
}

void conf_walk_mapping(struct conf_ctx *c, const struct conf_schema *sc,
		       yaml_node_t *map, void *obj, const char *where)
{
	yaml_node_t *first[CONF_MAX_KEYS] = { NULL }, *seen[CONF_MAX_KEYS] = { NULL };
	char w[300];
	int nkeys = 0;

	while (sc->keys[nkeys].name)
		nkeys++;
	if (nkeys > CONF_MAX_KEYS) {
		conf_error_at(c, map, "internal error: %s has too many keys", sc->what);
		return;
	}
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = node_at(c, p->key), *vn = node_at(c, p->value);
		int i;

		if (!visit(c, kn) || !visit(c, vn))
			return;
		if ((i = pair_row(c, sc, kn, first, where)) < 0)
			continue;
		if (is_null(vn))
			continue;	/* an empty value keeps the default */
		seen[i] = vn;
		walk_value(c, &sc->keys[i], vn, obj, where);
	}
	for (int i = 0; i < nkeys; i++) {
		if (!(sc->keys[i].flags & CF_REQUIRED) || seen[i])
			continue;
		if (first[i])
			conf_error_at(c, first[i], "required key '%s' %s has no value",
				      sc->keys[i].name, where_str(where, w, sizeof(w)));
		else
			conf_error_at(c, map, "missing required key '%s' %s",
				      sc->keys[i].name, where_str(where, w, sizeof(w)));
	}
	if (sc->post && !c->stop)
		sc->post(c, sc, map, obj, seen);
}

/*****************************************************************************
 *  Defaults and freeing, from the same tables
 *****************************************************************************/

static void default_strv(struct conf_ctx *c, const struct conf_key *k, void *obj)
{
	struct gb_strv sv = { 0 };
	const char *p = k->def;

	while (*p) {
		size_t len = strcspn(p, " ");
		char *w = strndup(p, len);

		if (!w || gb_strv_add(&sv, w))
			conf_nomem(c);
		free(w);
		p += len;
		p += strspn(p, " ");
	}
	if (!sv.v && !(sv.v = calloc(1, sizeof(char *))))
		conf_nomem(c);
	*(char ***)((char *)obj + k->off) = sv.v;
	if (k->off_n != CONF_NO_OFF)
		*(size_t *)((char *)obj + k->off_n) = sv.n;
}

void conf_defaults(struct conf_ctx *c, const struct conf_schema *sc, void *obj)
{
	for (const struct conf_key *k = sc->keys; k->name; k++) {
		struct scalar sv = { k->def, 0, false, NULL };

		if (k->type == CT_MAP) {
			conf_defaults(c, k->arg, (char *)obj + k->off);
		} else if (k->def && k->type == CT_STRV) {
			default_strv(c, k, obj);
		} else if (k->def && k->type != CT_FUNC) {
			sv.len = strlen(k->def);
			conv_scalar(c, k, &sv, (char *)obj + k->off);
		}
	}
}

static void elems_free(const struct conf_key *k, void *obj)
{
	const struct conf_schema *sc = k->arg;
	char *arr = *(char **)((char *)obj + k->off);
	size_t n = *(size_t *)((char *)obj + k->off_n);

	for (size_t i = 0; arr && i < n; i++) {
		char *elem = arr + i * sc->size;

		conf_free_obj(sc, elem);
		if (sc->name_off != CONF_NO_OFF)
			free(*(char **)(elem + sc->name_off));
		if (sc->fini)
			sc->fini(elem);
	}
	free(arr);
	*(char **)((char *)obj + k->off) = NULL;
	*(size_t *)((char *)obj + k->off_n) = 0;
}

/*
 * Freed pointers are set to NULL: two schemas may fill one field (the
 * rungs of capacity: read ids under reservations and capacity_blocks into
 * the same struct), and the second row must then find nothing to free.
 */
void conf_free_obj(const struct conf_schema *sc, void *obj)
{
	for (const struct conf_key *k = sc->keys; k->name; k++) {
		void *p = (char *)obj + k->off;

		switch (k->type) {
		case CT_STR:
		case CT_ABSPATH:
		case CT_URL:
			free(*(char **)p);
			*(char **)p = NULL;
			break;
		case CT_STRV:
			strv_free(*(char ***)p);
			*(char ***)p = NULL;
			break;
		case CT_MAP:
			conf_free_obj(k->arg, p);
			break;
		case CT_LIST:
		case CT_DICT:
			elems_free(k, obj);
			break;
		default:
			break;
		}
	}
}

/*****************************************************************************
 *  Duplicate finder
 *****************************************************************************/

void conf_namev_add(struct conf_ctx *c, struct conf_namev *nv,
		    const char *name, const void *addr, size_t owner)
{
	if (!name)
		return;
	if (nv->n == nv->cap) {
		size_t cap = nv->cap ? 2 * nv->cap : 16;
		struct conf_named *v = realloc(nv->v, cap * sizeof(*v));

		if (!v) {
			conf_nomem(c);
			return;
		}
		nv->v = v;
		nv->cap = cap;
	}
	nv->v[nv->n].name = name;
	nv->v[nv->n].addr = addr;
	nv->v[nv->n].owner = owner;
	nv->v[nv->n].seq = nv->n;
	nv->n++;
}

static int named_cmp(const void *a, const void *b)
{
	const struct conf_named *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	if (r)
		return r;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Sort [nv] by name and call [fn] for each repeat; the caller's messages
 * are put in file order later, with all the others. */
void conf_dups_report(struct conf_ctx *c, struct conf_namev *nv,
		      conf_dup_fn *fn, const void *arg)
{
	if (nv->n < 2)
		return;
	qsort(nv->v, nv->n, sizeof(*nv->v), named_cmp);
	for (size_t i = 1, f = 0; i < nv->n; i++) {
		if (strcmp(nv->v[i].name, nv->v[f].name) != 0)
			f = i;
		else
			fn(c, &nv->v[f], &nv->v[i], arg);
	}
}

void conf_namev_free(struct conf_namev *nv)
{
	free(nv->v);
	nv->v = NULL;
	nv->n = nv->cap = 0;
}
