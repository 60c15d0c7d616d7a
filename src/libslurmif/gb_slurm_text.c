/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_slurm_text.c - node reasons and the job_submit plugin's intent token
 *
 * Pure string functions (no libslurm), kept with the Slurm glue because
 * they define what gpuburst writes into and reads out of Slurm.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_slurm.h"
#include "gb_util.h"

#define REQ_TAG " req="
#define REQ_ID_LEN 16	/* GB_REQUEST_ID_LEN: libstate's request ids */

char *gb_reason_capacity(char *buf, size_t n, const char *code,
			 const char *text, const char *request_id)
{
	char clean[GB_REASON_MAX];
	size_t fixed, room, k = 0;

	if (!code || !*code)
		code = "Unfilled";
	if (!text)
		text = "";
	if (!request_id)
		request_id = "";
	/* What the text may use: n minus "gpuburst: (Code:X) " and " req=ID". */
	fixed = strlen(GB_REASON_CAPACITY_PREFIX) + strlen(code) + 2 +
		strlen(REQ_TAG) + strlen(request_id) + 1;
	room = n > fixed ? n - fixed : 0;
	if (room >= sizeof(clean))
		room = sizeof(clean) - 1;
	for (const char *p = text; *p && k < room; p++)
		clean[k++] = (unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p;
	while (k > 0 && clean[k - 1] == ' ')
		k--;
	clean[k] = '\0';
	snprintf(buf, n, "%s%s) %s%s%s", GB_REASON_CAPACITY_PREFIX, code, clean,
		 REQ_TAG, request_id);
	return buf;
}

char *gb_reason_capacity_block(char *buf, size_t n, const char *block_id, double end)
{
	char when[32];
	int room;

	gb_time_iso(end, when, sizeof(when));
	/* the id gives way to the end (unless not even that fits: then cut) */
	room = (int)n - (int)(strlen(GB_REASON_CAPACITY_BLOCK) + strlen(" ends ") +
			      strlen(when) + 1);
	snprintf(buf, n, "%s%.*s ends %s", GB_REASON_CAPACITY_BLOCK, room > 0 ? room : -1,
		 block_id ? block_id : "", when);
	return buf;
}

static bool is_hex_id(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return i == REQ_ID_LEN;
}

bool gb_reason_is_capacity(const char *reason, char *code, size_t code_n,
			   char *request_id, size_t id_n)
{
	const char *c, *end, *req;

	if (code && code_n)
		code[0] = '\0';
	if (request_id && id_n)
		request_id[0] = '\0';
	if (!reason || strncmp(reason, GB_REASON_CAPACITY_PREFIX,
			       strlen(GB_REASON_CAPACITY_PREFIX)) != 0)
		return false;
	c = reason + strlen(GB_REASON_CAPACITY_PREFIX);
	if ((end = strchr(c, ')')) && code && code_n) {
		size_t len = (size_t)(end - c);

		if (len >= code_n)
			len = code_n - 1;
		memcpy(code, c, len);
		code[len] = '\0';
	}
	req = strstr(reason, REQ_TAG);
	while (req && strstr(req + 1, REQ_TAG))
		req = strstr(req + 1, REQ_TAG);		/* the last one */
	if (req && is_hex_id(req + strlen(REQ_TAG)) && request_id && id_n)
		snprintf(request_id, id_n, "%s", req + strlen(REQ_TAG));
	return true;
}

/* EC2's instance ids: "i-" and 8 (before 2016) or 17 hex digits. */
static size_t instance_id_len(const char *s)
{
	size_t k = 0;

	if (strncmp(s, "i-", 2) != 0)
		return 0;
	while ((s[2 + k] >= '0' && s[2 + k] <= '9') || (s[2 + k] >= 'a' && s[2 + k] <= 'f'))
		k++;
	if ((k != 8 && k != 17) || (s[2 + k] && s[2 + k] != ' ' && s[2 + k] != ':'))
		return 0;
	return 2 + k;
}

enum gb_reason_agent gb_reason_agent(const char *reason, char *id)
{
	static const struct {
		const char *prefix;
		enum gb_reason_agent kind;
	} agent[] = {
		{ GB_REASON_SPOT, GB_REASON_AGENT_SPOT },
		{ GB_REASON_REBALANCE, GB_REASON_AGENT_REBALANCE },
		{ GB_REASON_UNHEALTHY, GB_REASON_AGENT_UNHEALTHY },
	};

	id[0] = '\0';
	for (size_t i = 0; reason && i < GB_ARRAY_LEN(agent); i++) {
		size_t plen = strlen(agent[i].prefix), len;

		if (strncmp(reason, agent[i].prefix, plen) != 0)
			continue;
		if (!(len = instance_id_len(reason + plen)))
			return GB_REASON_AGENT_NONE;
		memcpy(id, reason + plen, len);
		id[len] = '\0';
		return agent[i].kind;
	}
	return GB_REASON_AGENT_NONE;
}

char *gb_reason_unhealthy(char *buf, size_t n, const char *instance_id,
			  const char *summary)
{
	int len = snprintf(buf, n, "%s%s: ", GB_REASON_UNHEALTHY,
			   instance_id ? instance_id : "");

	for (const char *p = summary ? summary : ""; len >= 0 && (size_t)len + 1 < n && *p;
	     p++)
		buf[len++] = (unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p;
	if (len >= 0 && (size_t)len < n) {
		while (len > 0 && buf[len - 1] == ' ')
			len--;
		buf[len] = '\0';
	}
	return buf;
}

static bool is_delim(char c)
{
	return c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	       c == ';' || c == ',';
}

static bool region_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

gb_err_t gb_intent_home_region(const char *admin_comment, char *buf,
			       size_t n, gb_error_t *err)
{
	const size_t klen = strlen(GB_INTENT_HOME_KEY);
	char found[GB_REGION_NAME_MAX] = "";

	if (n)
		buf[0] = '\0';
	for (const char *p = admin_comment; p && *p; p++) {
		const char *v, *e;
		size_t len;

		if ((p != admin_comment && !is_delim(p[-1])) ||
		    strncmp(p, GB_INTENT_HOME_KEY, klen) != 0)
			continue;
		v = p + klen;
		for (e = v; !is_delim(*e); e++)
			;
		len = (size_t)(e - v);
		for (const char *q = v; q < e; q++) {
			if (!region_char(*q))
				return gb_errorf(err, GB_E_INVALID,
						 "AdminComment token %.*s: bad region name",
						 (int)(e - p), p);
		}
		if (len == 0 || len >= GB_REGION_NAME_MAX)
			return gb_errorf(err, GB_E_INVALID,
					 "AdminComment token %.*s: region name must be 1-%d characters",
					 (int)(e - p), p, GB_REGION_NAME_MAX - 1);
		if (found[0] && (strlen(found) != len || strncmp(found, v, len) != 0))
			return gb_errorf(err, GB_E_INVALID,
					 "AdminComment has conflicting %s tokens (%s, %.*s)",
					 GB_INTENT_HOME_KEY, found, (int)len, v);
		memcpy(found, v, len);
		found[len] = '\0';
		p = e - 1;
	}
	if (!found[0])
		return GB_E_NOTFOUND;
	if (strlen(found) >= n)
		return gb_errorf(err, GB_E_INVALID, "region name too long for the buffer");
	memcpy(buf, found, strlen(found) + 1);
	return GB_E_OK;
}

/* The next [key] token of [s] at or after [p]; its end in *end. */
static const char *token_next(const char *s, const char *p, const char *key,
			      const char **end)
{
	const size_t klen = strlen(key);

	for (; p && *p; p++) {
		if ((p != s && !is_delim(p[-1])) || strncmp(p, key, klen) != 0)
			continue;
		for (*end = p + klen; !is_delim(**end); (*end)++)
			;
		return p;
	}
	return NULL;
}

bool gb_admin_token(const char *admin_comment, const char *key, char *buf, size_t n)
{
	const char *end, *t = token_next(admin_comment, admin_comment, key, &end);

	if (n)
		buf[0] = '\0';
	if (!t)
		return false;
	snprintf(buf, n, "%.*s", (int)(end - t - strlen(key)), t + strlen(key));
	return true;
}

bool gb_cost_token(const char *admin_comment, double *cost, double *worst)
{
	char tok[64], *slash;

	*cost = *worst = -1;
	if (!gb_admin_token(admin_comment, GB_COST_KEY, tok, sizeof(tok)) ||
	    !(slash = strchr(tok, '/')))
		return false;
	*slash = '\0';
	if (gb_parse_double(tok, cost) || *cost < 0 || gb_parse_double(slash + 1, worst) ||
	    *worst < *cost) {
		*cost = *worst = -1;
		return false;
	}
	return true;
}

bool gb_approval_token(const char *admin_comment, char *buf, size_t n)
{
	return gb_admin_token(admin_comment, GB_APPROVAL_KEY, buf, n);
}

gb_err_t gb_approval_comment(const char *old, const char *value, char **out,
			     gb_error_t *err)
{
	struct gb_buf b = GB_BUF_INIT;
	const char *p = old ? old : "", *t, *end;

	*out = NULL;
	while ((t = token_next(old, p, GB_APPROVAL_KEY, &end))) {
		const char *start = t;

		if (start > p && (start[-1] == ' ' || start[-1] == '\t'))
			start--;	/* and the blank before it */
		gb_buf_append(&b, p, (size_t)(start - p));
		p = end;
	}
	gb_buf_puts(&b, p);
	while (b.len && (b.data[b.len - 1] == ' ' || b.data[b.len - 1] == '\t'))
		b.data[--b.len] = '\0';
	gb_buf_printf(&b, "%s%s%s", b.len ? " " : "", GB_APPROVAL_KEY, value);
	if (gb_buf_failed(&b)) {
		gb_buf_free(&b);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	*out = gb_buf_steal(&b);
	return GB_E_OK;
}

/* GPUs of one TRES string; RET -1 when an item is not understood. */
static long tres_gpu_count(const char *tres)
{
	long total = 0;

	for (const char *p = tres; p && *p;) {
		size_t len = strcspn(p, ",");
		char item[128], *q;
		long v = 1;

		if (len >= sizeof(item))
			return -1;
		memcpy(item, p, len);
		item[len] = '\0';
		p += len + (p[len] == ',');
		q = item;
		if (strncmp(q, "gres:", 5) == 0 || strncmp(q, "gres/", 5) == 0)
			q += 5;
		if (strncmp(q, "gpu", 3) != 0 || (q[3] && q[3] != ':' && q[3] != '='))
			continue;	/* not a GPU */
		q += 3;
		/* the count is the last ":N" or "=N"; a bare name means 1 */
		for (char *c = q; *c; c++) {
			if ((*c == ':' || *c == '=') && c[1] >= '0' && c[1] <= '9') {
				char *end;

				v = strtol(c + 1, &end, 10);
				if (*end)
					v = 1;	/* "a10g" style, not a count */
			}
		}
		if (v < 0 || v > 1000000)
			return -1;
		total += v;
	}
	return total;
}

int gb_tres_gpus(const char *per_job, const char *per_node, uint32_t nodes)
{
	long j = tres_gpu_count(per_job), n = tres_gpu_count(per_node);

	if (j < 0 || n < 0)
		return -1;
	if (j > 0)
		return (int)j;
	n *= nodes ? (long)nodes : 1;
	return n > 1000000 ? -1 : (int)n;
}
