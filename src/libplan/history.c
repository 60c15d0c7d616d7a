/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * history.c - what a request went through so far, as text for a re-plan
 *
 * A proposing planner asked again after a pool or region failed must know
 * what was tried: the attempts (pool, asked, got, the cloud's code) and the
 * plan versions (who proposed what, and why it was used or rejected).  The
 * state file has both; this turns them into short lines.
 */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_plan.h"
#include "gb_state.h"
#include "gb_str.h"

#define HISTORY_DEFAULT_MAX 2000
#define HISTORY_REASON_MAX 160

struct entry {
	double at;
	size_t seq;		/* insertion order: keeps the sort stable */
	char *line;
};

struct hist {
	struct entry *v;
	size_t n, cap;
	bool oom;
};

static void add_line(struct hist *h, double at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add_line(struct hist *h, double at, const char *fmt, ...)
{
	char line[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one line each, whatever the stored text holds */
	for (char *p = line; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 16;
		struct entry *v = realloc(h->v, cap * sizeof(*v));

		if (!v) {
			h->oom = true;
			return;
		}
		h->v = v;
		h->cap = cap;
	}
	h->v[h->n].at = at;
	h->v[h->n].seq = h->n;
	if (!(h->v[h->n].line = strdup(line))) {
		h->oom = true;
		return;
	}
	h->n++;
}

static int by_time(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int attempt_row(const struct gb_attempt *a, void *arg)
{
	const char *state = gb_attempt_state_name(a->state);

	/* the type last: the pool's type, for a nodeset of several */
	add_line(arg, a->started_at, "attempt #%d %s %s %s asked %d got %d %s%s%s%s%s%s",
		 a->seq, a->region ? a->region : "-", a->az ? a->az : "-",
		 a->subnet ? a->subnet : "-", a->asked, a->got, state,
		 a->error_code ? " " : "", a->error_code ? a->error_code : "",
		 a->instance_type ? " (" : "", a->instance_type ? a->instance_type : "",
		 a->instance_type ? ")" : "");
	return 0;
}

static int plan_row(const struct gb_plan_row *p, void *arg)
{
	add_line(arg, p->created_at, "plan v%d %s %s: %.*s", p->version,
		 p->planner ? p->planner : "-", p->status ? p->status : "-",
		 HISTORY_REASON_MAX, p->reason ? p->reason : "");
	return 0;
}

gb_err_t gb_plan_history(struct gb_state *st, const char *request_id,
			 size_t max, char **out, gb_error_t *err)
{
	struct hist h = { NULL, 0, 0, false };
	struct gb_buf b = GB_BUF_INIT;
	gb_err_t rc;
	size_t first = 0, len = 0;

	*out = NULL;
	if (!max)
		max = HISTORY_DEFAULT_MAX;
	if (!st || !request_id || !*request_id)
		return (*out = strdup("")) ? GB_E_OK :
		       gb_errorf(err, GB_E_NOMEM, "history: out of memory");
	rc = gb_state_plan_list(st, request_id, plan_row, &h, err);
	if (!rc)
		rc = gb_state_attempt_list(st, request_id, attempt_row, &h, err);
	if (rc)
		goto out;
	if (h.oom) {
		rc = gb_errorf(err, GB_E_NOMEM, "history: out of memory");
		goto out;
	}
	if (h.n > 1)
		qsort(h.v, h.n, sizeof(*h.v), by_time);
	/* the newest lines matter most: drop the oldest ones that do not fit */
	for (size_t i = h.n; i > 0; i--) {
		size_t l = strlen(h.v[i - 1].line) + 1;

		if (len + l > max)
			break;
		len += l;
		first = i - 1;
	}
	if (len == 0)
		first = h.n;
	for (size_t i = first; i < h.n; i++)
		gb_buf_printf(&b, "%s\n", h.v[i].line);
	if (gb_buf_failed(&b) || !(*out = b.data ? gb_buf_steal(&b) : strdup("")))
		rc = gb_errorf(err, GB_E_NOMEM, "history: out of memory");
out:
	for (size_t i = 0; i < h.n; i++)
		free(h.v[i].line);
	free(h.v);
	gb_buf_free(&b);
	return rc;
}
