/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_err.c - error names, texts, detail buffers and error lists
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_err.h"

const char *gb_strerror(int code)
{
	switch (code) {
#define GB_ERR_TEXT_(name, num, text) case num: return text;
	GB_ERR_MAP(GB_ERR_TEXT_)
#undef GB_ERR_TEXT_
	}
	return "unknown error";
}

const char *gb_err_name(int code)
{
	switch (code) {
#define GB_ERR_NAME_(name, num, text) case num: return #name;
	GB_ERR_MAP(GB_ERR_NAME_)
#undef GB_ERR_NAME_
	}
	return "UNKNOWN";
}

gb_err_t gb_errorf(gb_error_t *err, gb_err_t code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	return code;
}

gb_err_t gb_error_prefix(gb_error_t *err, const char *fmt, ...)
{
	char old[GB_ERROR_TEXT_MAX];
	char pre[GB_ERROR_TEXT_MAX];
	va_list ap;

	if (!err)
		return GB_E_INTERNAL;
	memcpy(old, err->text, sizeof(old));
	va_start(ap, fmt);
	vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	snprintf(err->text, sizeof(err->text), "%s: %s", pre, old);
	return err->code;
}

void gb_error_clear(gb_error_t *err)
{
	if (!err)
		return;
	err->code = GB_E_OK;
	err->text[0] = '\0';
}

gb_err_t gb_errlist_add(struct gb_errlist *l, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return GB_E_NOMEM;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		char **m = realloc(l->msgs, cap * sizeof(*m));

		if (!m) {
			free(msg);
			return GB_E_NOMEM;
		}
		l->msgs = m;
		l->cap = cap;
	}
	l->msgs[l->n++] = msg;
	return GB_E_OK;
}

void gb_errlist_free(struct gb_errlist *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		free(l->msgs[i]);
	free(l->msgs);
	l->msgs = NULL;
	l->n = l->cap = 0;
}
