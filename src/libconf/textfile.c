/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * textfile.c - the line-oriented files gpuburstctl writes into state_dir
 *
 * The GPU catalog (catalog_file.c) and the price file (prices.c) share one
 * layout: three header lines ("MAGIC VERSION", "refreshed TIME", "source
 * TEXT"), then one entry per line of blank-separated fields.  This is the
 * reading half both use; each file's own module checks its fields.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conf_int.h"
#include "gb_util.h"

#define TIME_FMT "%Y-%m-%dT%H:%M:%SZ"

bool conf_tf_printable(const char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return false;
	}
	return true;
}

void conf_tf_bad(struct conf_tf *r, const char *fmt, ...)
{
	struct gb_conf_mark none = { 0, 0 };
	char text[256];
	va_list ap;

	if (r->failed)
		return;
	r->failed = true;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (r->line)
		conf_error(r->c, none, "%s %s:%u: %s", r->what, r->path, r->line, text);
	else
		conf_error(r->c, none, "%s %s: %s", r->what, r->path, text);
}

char *conf_tf_next_line(struct conf_tf *r, char **p, char *end)
{
	char *s = *p, *nl;

	if (s >= end || r->failed)
		return NULL;
	nl = memchr(s, '\n', (size_t)(end - s));
	*p = nl ? nl + 1 : end;
	if (nl)
		*nl = '\0';
	r->line++;
	if ((size_t)((nl ? nl : end) - s) > r->line_max) {
		conf_tf_bad(r, "the line is longer than %zu bytes", r->line_max);
		return NULL;
	}
	return s;
}

char *conf_tf_next_entry(struct conf_tf *r, char **p, char *end)
{
	char *s;

	while ((s = conf_tf_next_line(r, p, end))) {
		size_t lead = strspn(s, " \t");

		if (s[lead] && s[lead] != '#')
			return s;
	}
	return NULL;
}

bool conf_tf_header(struct conf_tf *r, char **p, char *end, const char *magic, int version,
		    double *refreshed_at, char **source)
{
	size_t ml = strlen(magic);
	struct tm tm = { 0 };
	char *s, *rest, *e;
	long v;

	s = conf_tf_next_line(r, p, end);
	if (!s || strncmp(s, magic, ml) != 0 || s[ml] != ' ') {
		conf_tf_bad(r, "the first line is not \"%s %d\": not a gpuburst %s file", magic,
			    version, r->what);
		return false;
	}
	errno = 0;
	v = strtol(s + ml + 1, &e, 10);
	if (errno || e == s + ml + 1 || *e) {
		conf_tf_bad(r, "the first line is not \"%s %d\": not a gpuburst %s file", magic,
			    version, r->what);
		return false;
	}
	if (v != version) {
		conf_tf_bad(r, "%s format version %ld, this gpuburst reads version %d", r->what,
			    v, version);
		return false;
	}
	if (!(s = conf_tf_next_line(r, p, end)) || strncmp(s, "refreshed ", 10) != 0 ||
	    !(rest = strptime(s + 10, TIME_FMT, &tm)) || *rest) {
		conf_tf_bad(r, "the second line is not \"refreshed YYYY-MM-DDTHH:MM:SSZ\"");
		return false;
	}
	*refreshed_at = (double)timegm(&tm);
	if (!(s = conf_tf_next_line(r, p, end)) || strncmp(s, "source ", 7) != 0 || !s[7] ||
	    !conf_tf_printable(s + 7)) {
		conf_tf_bad(r, "the third line is not \"source TEXT\" (printable text)");
		return false;
	}
	if (!(*source = strdup(s + 7))) {
		conf_nomem(r->c);
		r->failed = true;
		return false;
	}
	return true;
}

int conf_tf_split(char *s, char **f, int max)
{
	int n = 0;

	while (n < max) {
		s += strspn(s, " \t");
		if (!*s)
			break;
		f[n++] = s;
		if (n == max)
			break;
		s += strcspn(s, " \t");
		if (*s)
			*s++ = '\0';
	}
	if (n == max) {	/* the last field takes the rest, trailing blanks off */
		char *e = f[n - 1] + strlen(f[n - 1]);

		while (e > f[n - 1] && (e[-1] == ' ' || e[-1] == '\t'))
			*--e = '\0';
	}
	return n;
}

bool conf_tf_read(struct conf_tf *r, size_t max, char **text, size_t *len)
{
	gb_error_t e;
	gb_err_t rc;

	*text = NULL;
	rc = gb_file_read(r->path, max, text, len, &e);
	if (rc == GB_E_NOTFOUND)
		return false;
	if (rc == GB_E_INVALID)
		conf_tf_bad(r, "the file is larger than %zu bytes", max);
	else if (rc == GB_E_NOMEM)
		conf_nomem(r->c);
	else if (rc)
		conf_error(r->c, (struct gb_conf_mark){ 0, 0 }, "%s %s", r->what, e.text);
	if (rc) {
		r->failed = true;
		return false;
	}
	if (memchr(*text, '\0', *len)) {
		conf_tf_bad(r, "the file contains a NUL byte");
		free(*text);
		*text = NULL;
		return false;
	}
	return true;
}

bool conf_tf_stamp(double t, char *buf, size_t n)
{
	time_t when = (time_t)t;
	struct tm tm;

	return t >= 0 && gmtime_r(&when, &tm) && strftime(buf, n, TIME_FMT, &tm);
}
