/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_hostlist.c - Slurm-style host patterns: parse, match, count, expand
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_hostlist.h"

#define HOSTLIST_MAX_WIDTH 9

/*****************************************************************************
 *  Private Data Types
 *****************************************************************************/

struct range {
	unsigned long lo, hi;
	int width;		/* zero-pad to this many digits */
};

/* A piece of an item: literal text, or a bracket group of ranges. */
struct piece {
	char *text;		/* literal when ranges == NULL */
	struct range *ranges;
	size_t n_ranges;
};

struct item {
	struct piece *pieces;
	size_t n_pieces;
};

struct gb_hostlist {
	struct item *items;
	size_t n_items;
};

/*****************************************************************************
 *  Parsing
 *****************************************************************************/

static void *grow(void *p, size_t n, size_t size)
{
	return realloc(p, (n + 1) * size);
}

static gb_err_t parse_number(const char *expr, const char **pp,
			     unsigned long *v, int *width, gb_error_t *err)
{
	const char *p = *pp, *start = p;

	while (isdigit((unsigned char)*p))
		p++;
	if (p == start)
		return gb_errorf(err, GB_E_INVALID,
				 "hostlist \"%s\": expected a number at position %zu",
				 expr, (size_t)(start - expr) + 1);
	if (p - start > HOSTLIST_MAX_WIDTH)
		return gb_errorf(err, GB_E_INVALID,
				 "hostlist \"%s\": number too long at position %zu",
				 expr, (size_t)(start - expr) + 1);
	*v = strtoul(start, NULL, 10);
	*width = (int)(p - start);
	*pp = p;
	return GB_E_OK;
}

/* Parse "1-4,7]" after a '['; leaves *pp after the ']'. */
static gb_err_t parse_group(const char *expr, const char **pp,
			    struct piece *pc, gb_error_t *err)
{
	const char *p = *pp;
	gb_err_t rc;

	for (;;) {
		struct range r;
		int w2;

		if ((rc = parse_number(expr, &p, &r.lo, &r.width, err)))
			return rc;
		r.hi = r.lo;
		if (*p == '-') {
			p++;
			if ((rc = parse_number(expr, &p, &r.hi, &w2, err)))
				return rc;
			if (r.hi < r.lo)
				return gb_errorf(err, GB_E_INVALID,
						 "hostlist \"%s\": range %lu-%lu is reversed",
						 expr, r.lo, r.hi);
		}
		struct range *nr = grow(pc->ranges, pc->n_ranges, sizeof(*nr));
		if (!nr)
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		pc->ranges = nr;
		pc->ranges[pc->n_ranges++] = r;
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == ']') {
			*pp = p + 1;
			return GB_E_OK;
		}
		return gb_errorf(err, GB_E_INVALID,
				 "hostlist \"%s\": unexpected '%c' at position %zu",
				 expr, *p ? *p : '?', (size_t)(p - expr) + 1);
	}
}

static bool host_char_ok(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

static gb_err_t parse_item(const char *expr, const char **pp, struct item *it,
			   gb_error_t *err)
{
	const char *p = *pp;
	gb_err_t rc;

	while (*p && *p != ',') {
		struct piece *np = grow(it->pieces, it->n_pieces, sizeof(*np));

		if (!np)
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		it->pieces = np;
		struct piece *pc = &it->pieces[it->n_pieces++];
		memset(pc, 0, sizeof(*pc));
		if (*p == '[') {
			p++;
			if ((rc = parse_group(expr, &p, pc, err)))
				return rc;
			continue;
		}
		const char *start = p;
		while (*p && *p != ',' && *p != '[') {
			if (!host_char_ok(*p))
				return gb_errorf(err, GB_E_INVALID,
						 "hostlist \"%s\": invalid character '%c' at position %zu",
						 expr, *p, (size_t)(p - expr) + 1);
			p++;
		}
		pc->text = strndup(start, (size_t)(p - start));
		if (!pc->text)
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	if (it->n_pieces == 0)
		return gb_errorf(err, GB_E_INVALID,
				 "hostlist \"%s\": empty host name at position %zu",
				 expr, (size_t)(p - expr) + 1);
	*pp = p;
	return GB_E_OK;
}

gb_err_t gb_hostlist_parse(const char *expr, gb_hostlist_t **out,
			   gb_error_t *err)
{
	gb_hostlist_t *hl = NULL;
	const char *p = expr;
	gb_err_t rc = GB_E_OK;

	if (!expr || !*expr)
		return gb_errorf(err, GB_E_INVALID, "hostlist is empty");
	hl = calloc(1, sizeof(*hl));
	if (!hl)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (;;) {
		struct item *ni = grow(hl->items, hl->n_items, sizeof(*ni));

		if (!ni) {
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			goto out;
		}
		hl->items = ni;
		memset(&hl->items[hl->n_items], 0, sizeof(struct item));
		hl->n_items++;
		if ((rc = parse_item(expr, &p, &hl->items[hl->n_items - 1], err)))
			goto out;
		if (*p == '\0')
			break;
		p++;	/* ',' */
	}
out:
	if (rc) {
		gb_hostlist_destroy(hl);
		return rc;
	}
	*out = hl;
	return GB_E_OK;
}

void gb_hostlist_destroy(gb_hostlist_t *hl)
{
	if (!hl)
		return;
	for (size_t i = 0; i < hl->n_items; i++) {
		struct item *it = &hl->items[i];

		for (size_t j = 0; j < it->n_pieces; j++) {
			free(it->pieces[j].text);
			free(it->pieces[j].ranges);
		}
		free(it->pieces);
	}
	free(hl->items);
	free(hl);
}

/*****************************************************************************
 *  Matching
 *****************************************************************************/

static bool match_pieces(const struct piece *pc, size_t n, const char *s)
{
	if (n == 0)
		return *s == '\0';
	if (!pc->ranges) {
		size_t len = strlen(pc->text);

		return strncmp(s, pc->text, len) == 0 &&
		       match_pieces(pc + 1, n - 1, s + len);
	}
	/* Try every digit-run length: "[1-20]0" must match "100". */
	size_t digits = 0;
	while (isdigit((unsigned char)s[digits]) && digits < HOSTLIST_MAX_WIDTH)
		digits++;
	for (size_t len = 1; len <= digits; len++) {
		char num[HOSTLIST_MAX_WIDTH + 1], fmt[HOSTLIST_MAX_WIDTH + 2];
		unsigned long v;

		memcpy(num, s, len);
		num[len] = '\0';
		v = strtoul(num, NULL, 10);
		for (size_t r = 0; r < pc->n_ranges; r++) {
			const struct range *rg = &pc->ranges[r];

			if (v < rg->lo || v > rg->hi)
				continue;
			snprintf(fmt, sizeof(fmt), "%0*lu", rg->width, v);
			if (strcmp(fmt, num) == 0 &&
			    match_pieces(pc + 1, n - 1, s + len))
				return true;
		}
	}
	return false;
}

bool gb_hostlist_match(const gb_hostlist_t *hl, const char *name)
{
	for (size_t i = 0; i < hl->n_items; i++) {
		if (match_pieces(hl->items[i].pieces, hl->items[i].n_pieces, name))
			return true;
	}
	return false;
}

static size_t sat_add(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t sat_mul(size_t a, size_t b)
{
	return (a && b > SIZE_MAX / a) ? SIZE_MAX : a * b;
}

static size_t piece_count(const struct piece *pc)
{
	size_t n = 0;

	if (!pc->ranges)
		return 1;
	for (size_t r = 0; r < pc->n_ranges; r++)
		n = sat_add(n, pc->ranges[r].hi - pc->ranges[r].lo + 1);
	return n;
}

size_t gb_hostlist_count(const gb_hostlist_t *hl)
{
	size_t total = 0;

	for (size_t i = 0; i < hl->n_items; i++) {
		size_t n = 1;

		for (size_t j = 0; j < hl->items[i].n_pieces; j++)
			n = sat_mul(n, piece_count(&hl->items[i].pieces[j]));
		total = sat_add(total, n);
	}
	return total;
}

/*****************************************************************************
 *  Expansion
 *****************************************************************************/

static gb_err_t expand_pieces(const struct piece *pc, size_t n,
			      struct gb_buf *prefix, struct gb_strv *out,
			      gb_error_t *err)
{
	size_t mark = prefix->len;
	gb_err_t rc;

	if (n == 0) {
		if (gb_buf_failed(prefix) || gb_strv_add(out, gb_buf_str(prefix)))
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		return GB_E_OK;
	}
	if (!pc->ranges) {
		gb_buf_puts(prefix, pc->text);
		rc = expand_pieces(pc + 1, n - 1, prefix, out, err);
		prefix->len = mark;
		if (prefix->data)
			prefix->data[mark] = '\0';
		return rc;
	}
	for (size_t r = 0; r < pc->n_ranges; r++) {
		for (unsigned long v = pc->ranges[r].lo; v <= pc->ranges[r].hi; v++) {
			gb_buf_printf(prefix, "%0*lu", pc->ranges[r].width, v);
			rc = expand_pieces(pc + 1, n - 1, prefix, out, err);
			prefix->len = mark;
			if (prefix->data)
				prefix->data[mark] = '\0';
			if (rc)
				return rc;
		}
	}
	return GB_E_OK;
}

gb_err_t gb_hostlist_expand(const gb_hostlist_t *hl, size_t max,
			    struct gb_strv *out, gb_error_t *err)
{
	struct gb_buf prefix = GB_BUF_INIT;
	size_t count = gb_hostlist_count(hl);
	gb_err_t rc = GB_E_OK;

	if (count > max)
		return gb_errorf(err, GB_E_INVALID,
				 "hostlist has %zu hosts, more than the limit of %zu",
				 count, max);
	for (size_t i = 0; i < hl->n_items && !rc; i++)
		rc = expand_pieces(hl->items[i].pieces, hl->items[i].n_pieces,
				   &prefix, out, err);
	gb_buf_free(&prefix);
	return rc;
}
