/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_str.h - bounded string helpers, a growable buffer, number parsing
 */
#ifndef GB_LIBCOMMON_GB_STR_H
#define GB_LIBCOMMON_GB_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gb_err.h"

/* Free [p] and set it to NULL (Slurm's xfree idiom). */
#define GB_FREE_NULL(p) \
	do { \
		free(p); \
		(p) = NULL; \
	} while (0)

#define GB_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Room for [need] elements of [size] bytes in the array [v] of *[cap]
 * (doubled, at least 16): RET the array, moved or not (*[cap] updated),
 * or NULL when out of memory ([v] and *[cap] unchanged).
 */
void *gb_grow(void *v, size_t *cap, size_t need, size_t size);

/* Copy [src] into [dst] of [size] bytes, always terminated. RET strlen(src). */
size_t gb_strlcpy(char *dst, const char *src, size_t size);

/* Zero [n] bytes at [p] in a way the compiler cannot elide (secrets). */
void gb_memzero(void *p, size_t n);

/* Zero the string *[p] (a secret), free it and set *[p] to NULL. */
void gb_free_secret(char **p);

/* strcmp that treats NULL as equal to NULL and less than any string. */
int gb_strcmp0(const char *a, const char *b);

/* RET whether [s] starts with [prefix]. */
bool gb_str_has_prefix(const char *s, const char *prefix);

/* RET NEW copy of [s] (NULL for NULL); free(). Aborts nothing: NULL on ENOMEM. */
char *gb_strdup0(const char *s);

/*
 * The password of [url]'s user information ("http://user:PASSWORD@host"):
 * what lies between the first ':' after the scheme's "://" (or the start,
 * without a scheme) and the last '@' of the string, so that a password
 * holding an unencoded '/', ':' or '@' is taken whole.
 * OUT *len its length (may be 0).
 * RET BORROWED pointer into [url], or NULL when there is no "user:" part.
 */
const char *gb_url_password(const char *url, size_t *len);

/*
 * Copy [url] into [buf] of [n] bytes with its password (gb_url_password())
 * replaced by "***": "http://user:***@proxy:3128"; the user name stays.  A
 * URL without one is copied as is; NULL gives "".  Truncated to fit.
 * RET [buf].
 */
const char *gb_url_redact(const char *url, char *buf, size_t n);

/*
 * Parse all of [s] as a base-10 integer in [min, max] into [out].
 * Rejects empty input, trailing junk, blanks and overflow.
 * RET GB_E_OK or GB_E_INVALID (nothing written).
 */
gb_err_t gb_parse_long(const char *s, long min, long max, long *out);

/* The same for floating point (strtod, finite values only). */
gb_err_t gb_parse_double(const char *s, double *out);

/*
 * Growable, always NUL-terminated byte buffer.  Zero-initialise, or use
 * GB_BUF_INIT; gb_buf_free() releases.  After an allocation failure the
 * buffer keeps what it had and gb_buf_failed() is true; appends become
 * no-ops, so callers may check once at the end.
 */
struct gb_buf {
	char *data;
	size_t len;
	size_t cap;
	bool oom;
};
#define GB_BUF_INIT { NULL, 0, 0, false }

/*
 * Make room for [extra] more bytes (and the NUL) without changing the
 * contents.  RET false (and gb_buf_failed()) when out of memory.
 */
bool gb_buf_reserve(struct gb_buf *b, size_t extra);
void gb_buf_append(struct gb_buf *b, const void *p, size_t n);
void gb_buf_puts(struct gb_buf *b, const char *s);
void gb_buf_putc(struct gb_buf *b, char c);
void gb_buf_printf(struct gb_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void gb_buf_reset(struct gb_buf *b);
bool gb_buf_failed(const struct gb_buf *b);
/* RET BORROWED contents ("" when empty). */
const char *gb_buf_str(const struct gb_buf *b);
/* RET NEW contents (caller frees), leaving [b] empty; NULL on failure. */
char *gb_buf_steal(struct gb_buf *b);
void gb_buf_free(struct gb_buf *b);

/*
 * A NULL-terminated vector of NEW strings.  Zero-initialise.
 */
struct gb_strv {
	char **v;	/* v[n] == NULL when n > 0 */
	size_t n;
	size_t cap;
};

gb_err_t gb_strv_add(struct gb_strv *sv, const char *s);
/* RET index of [s] in [sv] or -1. */
long gb_strv_find(const struct gb_strv *sv, const char *s);
/* Sort [sv] (strcmp order) and drop the repeats. */
void gb_strv_sort_unique(struct gb_strv *sv);
void gb_strv_free(struct gb_strv *sv);

#endif /* GB_LIBCOMMON_GB_STR_H */
