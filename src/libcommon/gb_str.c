/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_str.c - bounded string helpers, a growable buffer, number parsing
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_str.h"

size_t gb_strlcpy(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);

	if (size) {
		size_t n = len < size - 1 ? len : size - 1;

		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}

void gb_memzero(void *p, size_t n)
{
	if (!p)
		return;
#ifdef HAVE_EXPLICIT_BZERO
	explicit_bzero(p, n);
#else
	volatile unsigned char *v = p;

	while (n--)
		*v++ = 0;
#endif
}

void gb_free_secret(char **p)
{
	if (*p) {
		gb_memzero(*p, strlen(*p));
		free(*p);
		*p = NULL;
	}
}

const char *gb_url_password(const char *url, size_t *len)
{
	const char *start, *at, *colon;

	*len = 0;
	if (!url)
		return NULL;
	start = strstr(url, "://");
	start = start ? start + 3 : url;
	if (!(at = strrchr(start, '@')))
		return NULL;
	if (!(colon = memchr(start, ':', (size_t)(at - start))))
		return NULL;
	*len = (size_t)(at - colon - 1);
	return colon + 1;
}

const char *gb_url_redact(const char *url, char *buf, size_t n)
{
	const char *pw;
	size_t len;

	if (!n)
		return buf;
	if (!(pw = gb_url_password(url, &len))) {
		gb_strlcpy(buf, url ? url : "", n);
		return buf;
	}
	snprintf(buf, n, "%.*s***%s", (int)(pw - url), url, pw + len);
	return buf;
}

int gb_strcmp0(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

bool gb_str_has_prefix(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

char *gb_strdup0(const char *s)
{
	return s ? strdup(s) : NULL;
}

gb_err_t gb_parse_long(const char *s, long min, long max, long *out)
{
	char *end = NULL;
	long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return GB_E_INVALID;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return GB_E_INVALID;
	*out = v;
	return GB_E_OK;
}

gb_err_t gb_parse_double(const char *s, double *out)
{
	char *end = NULL;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return GB_E_INVALID;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return GB_E_INVALID;
	*out = v;
	return GB_E_OK;
}

/*****************************************************************************
 *  struct gb_buf
 *****************************************************************************/

bool gb_buf_reserve(struct gb_buf *b, size_t extra)
{
	size_t need;
	char *d;

	if (b->oom)
		return false;
	if (extra > SIZE_MAX - b->len - 1) {
		b->oom = true;
		return false;
	}
	need = b->len + extra + 1;
	if (need <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	d = realloc(b->data, cap);
	if (!d) {
		b->oom = true;
		return false;
	}
	b->data = d;
	b->cap = cap;
	return true;
}

void gb_buf_append(struct gb_buf *b, const void *p, size_t n)
{
	if (!gb_buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void gb_buf_puts(struct gb_buf *b, const char *s)
{
	gb_buf_append(b, s, strlen(s));
}

void gb_buf_putc(struct gb_buf *b, char c)
{
	gb_buf_append(b, &c, 1);
}

void gb_buf_printf(struct gb_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !gb_buf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void gb_buf_reset(struct gb_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

bool gb_buf_failed(const struct gb_buf *b)
{
	return b->oom;
}

const char *gb_buf_str(const struct gb_buf *b)
{
	return b->data ? b->data : "";
}

char *gb_buf_steal(struct gb_buf *b)
{
	char *s;

	if (b->oom) {
		gb_buf_free(b);
		return NULL;
	}
	s = b->data ? b->data : strdup("");
	b->data = NULL;
	b->len = b->cap = 0;
	return s;
}

void gb_buf_free(struct gb_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->oom = false;
}

/*****************************************************************************
 *  struct gb_strv
 *****************************************************************************/

void *gb_grow(void *v, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;

	if (need <= *cap)
		return v;
	while (n < need)
		n *= 2;
	if (!(v = realloc(v, n * size)))
		return NULL;
	*cap = n;
	return v;
}

gb_err_t gb_strv_add(struct gb_strv *sv, const char *s)
{
	char *copy;

	if (sv->n + 1 >= sv->cap) {
		size_t cap = sv->cap ? 2 * sv->cap : 8;
		char **v = realloc(sv->v, cap * sizeof(*v));

		if (!v)
			return GB_E_NOMEM;
		sv->v = v;
		sv->cap = cap;
	}
	copy = strdup(s);
	if (!copy)
		return GB_E_NOMEM;
	sv->v[sv->n++] = copy;
	sv->v[sv->n] = NULL;
	return GB_E_OK;
}

long gb_strv_find(const struct gb_strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++) {
		if (strcmp(sv->v[i], s) == 0)
			return (long)i;
	}
	return -1;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void gb_strv_sort_unique(struct gb_strv *sv)
{
	size_t k = 0;

	if (sv->n == 0)
		return;
	qsort(sv->v, sv->n, sizeof(*sv->v), cmp_strp);
	for (size_t i = 0; i < sv->n; i++) {
		if (k && strcmp(sv->v[k - 1], sv->v[i]) == 0)
			free(sv->v[i]);
		else
			sv->v[k++] = sv->v[i];
	}
	sv->n = k;
	sv->v[k] = NULL;
}

void gb_strv_free(struct gb_strv *sv)
{
	if (!sv)
		return;
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}
