/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * node_text.c - what gpuburst-node reads and writes as text: the user
 * data's node list, nvidia-smi's GPU names, IMDS notices, the reasons and
 * tag values of contract sections 2 and 3
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "gb_util.h"
#include "node_int.h"

#define GPU_NAME_MAX 256
#define SHOW_MAX 64

/* [s] of [len] bytes for a message: printable, cut at SHOW_MAX. */
static const char *show(const char *s, size_t len, char *buf, size_t n)
{
	size_t j = 0;

	for (size_t i = 0; i < len && j + 4 < n && i < SHOW_MAX; i++)
		buf[j++] = isprint((unsigned char)s[i]) ? s[i] : '?';
	if (len > SHOW_MAX && j + 4 < n) {
		memcpy(buf + j, "...", 3);
		j += 3;
	}
	buf[j] = '\0';
	return buf;
}

bool node_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > NODE_NAME_MAX)
		return false;
	for (; *s; s++) {
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
			return false;
	}
	return true;
}

/*****************************************************************************
 *  User data
 *****************************************************************************/

/* Split the value [v] of [len] bytes (quotes removed) into names. */
static gb_err_t split_nodes(const char *v, size_t len, unsigned line,
			    struct gb_strv *out, gb_error_t *err)
{
	char name[NODE_NAME_MAX + 2], tmp[SHOW_MAX + 8];
	size_t i = 0, added = 0;

	while (i < len) {
		size_t w;

		while (i < len && (v[i] == ' ' || v[i] == '\t'))
			i++;
		for (w = 0; i + w < len && v[i + w] != ' ' && v[i + w] != '\t'; w++)
			;
		if (w == 0)
			break;
		if (w > NODE_NAME_MAX)
			return gb_errorf(err, GB_E_PARSE,
					 "user data line %u: %s: node name '%s' is longer than %d characters",
					 line, NODE_USERDATA_KEY, show(v + i, w, tmp, sizeof(tmp)),
					 NODE_NAME_MAX);
		memcpy(name, v + i, w);
		name[w] = '\0';
		if (!node_name_ok(name))
			return gb_errorf(err, GB_E_PARSE,
					 "user data line %u: %s: '%s' is not a node name (letters, digits, '.', '_', '-')",
					 line, NODE_USERDATA_KEY, show(name, w, tmp, sizeof(tmp)));
		if (gb_strv_add(out, name))
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		added++;
		i += w;
	}
	if (added == 0)
		return gb_errorf(err, GB_E_PARSE, "user data line %u: %s is empty",
				 line, NODE_USERDATA_KEY);
	return GB_E_OK;
}

/* The value after "KEY=" on one line [p..end), quotes taken off. */
static gb_err_t line_value(const char *p, const char *end, unsigned line,
			   struct gb_strv *out, gb_error_t *err)
{
	char q = *p;

	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (q == '"' || q == '\'') {
		if (end - p < 2 || end[-1] != q)
			return gb_errorf(err, GB_E_PARSE,
					 "user data line %u: %s: unterminated %c quote",
					 line, NODE_USERDATA_KEY, q);
		p++;
		end--;
	}
	return split_nodes(p, (size_t)(end - p), line, out, err);
}

gb_err_t node_userdata_nodes(const char *ud, size_t len, struct gb_strv *out,
			     gb_error_t *err)
{
	static const char key[] = NODE_USERDATA_KEY "=";
	const char *p = ud, *end = ud + len;
	unsigned line = 1;

	for (; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end, *s = p;

		while (s < eol && (*s == ' ' || *s == '\t'))
			s++;
		if ((size_t)(eol - s) > 7 && !memcmp(s, "export", 6) &&
		    (s[6] == ' ' || s[6] == '\t')) {
			s += 7;
			while (s < eol && (*s == ' ' || *s == '\t'))
				s++;
		}
		if ((size_t)(eol - s) >= sizeof(key) - 1 && !memcmp(s, key, sizeof(key) - 1))
			return line_value(s + sizeof(key) - 1, eol, line, out, err);
		p = nl ? nl + 1 : end;
	}
	return gb_errorf(err, GB_E_NOTFOUND, "the user data has no line %s...", key);
}

/*****************************************************************************
 *  nvidia-smi
 *****************************************************************************/

struct gpu_kind {
	char name[GPU_NAME_MAX + 1];
	int count;
};

/* RET whether [hay] contains [needle], ignoring case. */
static bool contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++) {
		if (!strncasecmp(hay, needle, n))
			return true;
	}
	return n == 0;
}

/* "7 x NAME" or "3 x A, 1 x B" of the kinds seen, or "no GPU". */
static void kinds_text(const struct gpu_kind *k, size_t nk, struct gb_buf *b)
{
	if (nk == 0)
		gb_buf_puts(b, "no GPU");
	for (size_t i = 0; i < nk; i++)
		gb_buf_printf(b, "%s%d x %s", i ? ", " : "", k[i].count, k[i].name);
}

gb_err_t node_gpu_check(const char *out, const struct node_gpu_expect *e,
			char *summary, size_t n)
{
	struct gpu_kind kinds[16];
	struct gb_buf b = GB_BUF_INIT;
	size_t nk = 0;
	int total = 0, other = 0;
	bool model_ok = true;
	unsigned line = 0;
	gb_err_t rc = GB_E_OK;
	char tmp[SHOW_MAX + 8];

	gb_buf_printf(&b, "expected %d x %s, nvidia-smi shows ", e->gpus, e->model);
	for (const char *p = out; *p; ) {
		const char *nl = strchr(p, '\n'), *eol = nl ? nl : p + strlen(p);
		const char *s = p, *t = eol;
		size_t len, k;

		line++;
		p = nl ? nl + 1 : eol;
		while (s < t && isspace((unsigned char)*s))
			s++;
		while (t > s && isspace((unsigned char)t[-1]))
			t--;
		if ((len = (size_t)(t - s)) == 0)
			continue;
		for (k = 0; k < len && isprint((unsigned char)s[k]); k++)
			;
		if (k < len || len > GPU_NAME_MAX) {
			gb_buf_printf(&b, "a malformed line %u: '%s'", line,
				      show(s, len, tmp, sizeof(tmp)));
			rc = GB_E_PARSE;
			goto out;
		}
		total++;
		for (k = 0; k < nk; k++) {
			if (strlen(kinds[k].name) == len && !memcmp(kinds[k].name, s, len))
				break;
		}
		if (k == nk && nk < GB_ARRAY_LEN(kinds)) {
			memcpy(kinds[nk].name, s, len);
			kinds[nk].name[len] = '\0';
			kinds[nk++].count = 0;
		}
		if (k < nk)
			kinds[k].count++;
		else
			other++;
		if (!contains_ci(k < nk ? kinds[k].name : "", e->model))
			model_ok = false;
	}
	kinds_text(kinds, nk, &b);
	if (other)
		gb_buf_printf(&b, ", %d x other", other);
	if (total != e->gpus || !model_ok)
		rc = GB_E_INVALID;
out:
	gb_strlcpy(summary, gb_buf_failed(&b) ? "out of memory" : gb_buf_str(&b), n);
	gb_buf_free(&b);
	return rc;
}

/*****************************************************************************
 *  IMDS notices
 *****************************************************************************/

/* The string member [key] of [o], an ISO 8601 UTC time, into [t]. */
static gb_err_t json_time(json_t *o, const char *key, const char *what, char *t,
			  gb_error_t *err)
{
	const char *s = json_string_value(json_object_get(o, key));
	char tmp[SHOW_MAX + 8];
	double v;

	if (!s)
		return gb_errorf(err, GB_E_PARSE, "%s: no string \"%s\"", what, key);
	if (!strchr(s, 'T') || gb_time_parse(s, 0, &v) != GB_E_OK)
		return gb_errorf(err, GB_E_PARSE,
				 "%s: \"%s\" is not a UTC time YYYY-MM-DDTHH:MM:SSZ: '%s'",
				 what, key, show(s, strlen(s), tmp, sizeof(tmp)));
	gb_time_iso(v, t, NODE_TIME_MAX);
	return GB_E_OK;
}

static json_t *json_doc(const char *text, const char *what, gb_error_t *err)
{
	json_error_t je;
	json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &je);

	if (!o) {
		gb_errorf(err, GB_E_PARSE, "%s: malformed JSON at line %d: %s", what,
			  je.line, je.text);
		return NULL;
	}
	if (!json_is_object(o)) {
		gb_errorf(err, GB_E_PARSE, "%s: not a JSON object", what);
		json_decref(o);
		return NULL;
	}
	return o;
}

gb_err_t node_spot_parse(const char *text, char *action, char *t, gb_error_t *err)
{
	static const char what[] = "spot/instance-action";
	static const char *const actions[] = { "terminate", "stop", "hibernate" };
	json_t *o = json_doc(text, what, err);
	const char *a;
	char tmp[SHOW_MAX + 8];
	gb_err_t rc;

	if (!o)
		return GB_E_PARSE;
	rc = json_time(o, "time", what, t, err);
	a = json_string_value(json_object_get(o, "action"));
	if (!rc && !a)
		rc = gb_errorf(err, GB_E_PARSE, "%s: no string \"action\"", what);
	for (size_t i = 0; !rc; i++) {
		if (i == GB_ARRAY_LEN(actions)) {
			rc = gb_errorf(err, GB_E_PARSE,
				       "%s: \"action\" is not terminate, stop or hibernate: '%s'",
				       what, show(a, strlen(a), tmp, sizeof(tmp)));
		} else if (!strcmp(a, actions[i])) {
			gb_strlcpy(action, actions[i], NODE_TIME_MAX);
			break;
		}
	}
	json_decref(o);
	return rc;
}

gb_err_t node_rebalance_parse(const char *text, char *t, gb_error_t *err)
{
	static const char what[] = "events/recommendations/rebalance";
	json_t *o = json_doc(text, what, err);
	gb_err_t rc;

	if (!o)
		return GB_E_PARSE;
	rc = json_time(o, "noticeTime", what, t, err);
	json_decref(o);
	return rc;
}

gb_err_t node_job_ids(const char *out, struct gb_strv *ids, gb_error_t *err)
{
	char tmp[SHOW_MAX + 8];
	unsigned line = 0;

	for (const char *p = out; *p; ) {
		const char *nl = strchr(p, '\n'), *eol = nl ? nl : p + strlen(p);
		const char *s = p, *t = eol;
		char id[24];
		long v;

		line++;
		p = nl ? nl + 1 : eol;
		while (s < t && isspace((unsigned char)*s))
			s++;
		while (t > s && isspace((unsigned char)t[-1]))
			t--;
		if (s == t)
			continue;
		if ((size_t)(t - s) >= sizeof(id))
			return gb_errorf(err, GB_E_PARSE, "squeue line %u: not a job id: '%s'",
					 line, show(s, (size_t)(t - s), tmp, sizeof(tmp)));
		memcpy(id, s, (size_t)(t - s));
		id[t - s] = '\0';
		if (gb_parse_long(id, 1, 0x7fffffffL, &v) != GB_E_OK || id[0] == '+')
			return gb_errorf(err, GB_E_PARSE, "squeue line %u: not a job id: '%s'",
					 line, show(id, strlen(id), tmp, sizeof(tmp)));
		if (gb_strv_add(ids, id))
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	return GB_E_OK;
}

/*****************************************************************************
 *  Reasons and tag values
 *****************************************************************************/

void node_text_cut(char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max)
		return;
	n = max;
	/* back to the start of a UTF-8 character: 10xxxxxx continues one */
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	s[n] = '\0';
}

const char *node_reason_spot(char *buf, size_t n, const char *iid, const char *t)
{
	snprintf(buf, n, "gpuburst: spot interruption: instance %s at %s", iid, t);
	return buf;
}

const char *node_reason_rebalance(char *buf, size_t n, const char *iid)
{
	snprintf(buf, n, "gpuburst: rebalance recommendation: instance %s", iid);
	return buf;
}

const char *node_reason_unhealthy(char *buf, size_t n, const char *iid,
				  const char *summary)
{
	snprintf(buf, n, "gpuburst: unhealthy: instance %s: %s", iid, summary);
	return buf;
}

static const char *tag_done(char *buf, size_t n, struct gb_buf *b)
{
	gb_strlcpy(buf, gb_buf_failed(b) ? "" : gb_buf_str(b), n);
	gb_buf_free(b);
	node_text_cut(buf, NODE_TAG_MAX);
	return buf;
}

const char *node_tag_ok(char *buf, size_t n, const char *node,
			const struct node_gpu_expect *e)
{
	struct gb_buf b = GB_BUF_INIT;

	if (e->gpus > 0)
		gb_buf_printf(&b, "ok: node %s, %d x %s, slurmd started", node, e->gpus,
			      e->model);
	else
		gb_buf_printf(&b, "ok: node %s, no GPU, slurmd started", node);
	return tag_done(buf, n, &b);
}

const char *node_tag_unhealthy(char *buf, size_t n, const char *summary)
{
	struct gb_buf b = GB_BUF_INIT;

	gb_buf_printf(&b, "unhealthy: %s", summary);
	return tag_done(buf, n, &b);
}

static void ids_text(struct gb_buf *b, const struct gb_strv *ids)
{
	for (size_t i = 0; i < ids->n; i++)
		gb_buf_printf(b, "%s%s", i ? "," : "", ids->v[i]);
}

const char *node_tag_interrupted(char *buf, size_t n, const char *action,
				 const char *t, bool drained,
				 const struct gb_strv *requeued,
				 const struct gb_strv *refused, bool powered_down)
{
	struct gb_buf b = GB_BUF_INIT;

	gb_buf_printf(&b, "interrupted: spot %s at %s; %s; requeued ", action, t,
		      drained ? "drained" : "drain failed");
	if (requeued->n)
		ids_text(&b, requeued);
	else
		gb_buf_puts(&b, "none");
	if (refused->n) {
		gb_buf_puts(&b, "; not requeued ");
		ids_text(&b, refused);
	}
	if (!powered_down)
		gb_buf_puts(&b, "; power down failed");
	return tag_done(buf, n, &b);
}

const char *node_tag_rebalance(char *buf, size_t n, const char *t, bool drain,
			       bool done)
{
	struct gb_buf b = GB_BUF_INIT;

	gb_buf_printf(&b, "rebalance: recommendation at %s; %s", t,
		      !drain ? "ignored (notices.rebalance: ignore)" :
		      done ? "power down asap" : "power down failed");
	return tag_done(buf, n, &b);
}
