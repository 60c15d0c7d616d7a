/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_err.h - gpuburst error codes: one table, the enum, names and texts
 *
 * GB_ERR_MAP is the only list of error codes.  It generates enum gb_err,
 * gb_strerror() and gb_err_name().  Numbers are append-only (a retired code
 * keeps its slot as OBSOLETE<n>) and stay below 126, so that they double as
 * exit statuses: slurmctld logs "power_save: program exit status of N" and
 * the man pages' EXIT STATUS section is this table.
 *
 * Rich detail (file:line:col, the AWS <Code>/<Message>, the SQLite message)
 * travels in a caller-supplied gb_error_t; every fallible API takes one as
 * its last argument and accepts NULL.
 */
#ifndef GB_LIBCOMMON_GB_ERR_H
#define GB_LIBCOMMON_GB_ERR_H

#include <stddef.h>

#define GB_ERR_MAP(XX) \
	XX(OK,              0, "success") \
	XX(NOMEM,           1, "out of memory") \
	XX(USAGE,           2, "invalid command-line usage") \
	XX(CONFIG,          3, "invalid configuration") \
	XX(IO,              4, "input/output error") \
	XX(STATE,           5, "state file error") \
	XX(SCHEMA,          6, "state file has an unsupported schema version") \
	XX(BUSY,            7, "resource busy or locked") \
	XX(NOTFOUND,        8, "not found") \
	XX(EXISTS,          9, "already exists") \
	XX(INVALID,        10, "invalid argument") \
	XX(PARSE,          11, "malformed input") \
	XX(HTTP,           12, "HTTP transport error") \
	XX(TIMEOUT,        13, "operation timed out") \
	XX(AUTH,           14, "cloud authentication or authorization failure") \
	XX(CAPACITY,       15, "insufficient cloud capacity") \
	XX(QUOTA,          16, "cloud quota exceeded") \
	XX(THROTTLE,       17, "cloud request throttled") \
	XX(CLOUDCONFIG,    18, "cloud rejected the launch configuration") \
	XX(TRANSIENT,      19, "transient cloud error") \
	XX(CLOUD,          20, "cloud error") \
	XX(SLURM,          21, "Slurm API error") \
	XX(PERM,           22, "permission denied") \
	XX(PLAN,           23, "plan rejected by validation") \
	XX(PLANNER,        24, "planner failure") \
	XX(CRYPTO,         25, "cryptographic library error") \
	XX(INTERNAL,       26, "internal error") \
	XX(DENIED,         27, "request denied") \
	XX(PENDING,        28, "awaiting approval") \
	XX(PARTIAL,        29, "request only partly fulfilled") \
	XX(CANCELLED,      30, "cancelled") \
	/* End of GB_ERR_MAP; append only, keep numbers < 126 */

enum gb_err {
#define GB_ERR_ENUM_(name, num, text) GB_E_##name = num,
	GB_ERR_MAP(GB_ERR_ENUM_)
#undef GB_ERR_ENUM_
};
typedef enum gb_err gb_err_t;

/* Detail of the last failure: code plus one line of text, no newline. */
#define GB_ERROR_TEXT_MAX 1024
typedef struct gb_error {
	gb_err_t code;
	char text[GB_ERROR_TEXT_MAX];
} gb_error_t;

/*
 * RET static text for [code] ("unknown error" for an unlisted number).
 */
const char *gb_strerror(int code);

/*
 * RET the symbolic name without prefix ("CONFIG"), or "UNKNOWN".
 */
const char *gb_err_name(int code);

/*
 * Fill [err] (may be NULL) with [code] and the formatted text.
 * RET [code], so that `return gb_errorf(err, GB_E_IO, "...")` reads well.
 */
gb_err_t gb_errorf(gb_error_t *err, gb_err_t code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Prefix the text already in [err] with the formatted context and ": ".
 * RET err->code (GB_E_INTERNAL when [err] is NULL).
 */
gb_err_t gb_error_prefix(gb_error_t *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Reset [err] to GB_E_OK and empty text; NULL is accepted. */
void gb_error_clear(gb_error_t *err);

/*
 * A list of error messages, for checks that report every problem at once
 * (config validation).  Zero-initialise; gb_errlist_free() releases it.
 */
struct gb_errlist {
	char **msgs;
	size_t n;
	size_t cap;
};

/* Append one formatted message. RET GB_E_OK or GB_E_NOMEM. */
gb_err_t gb_errlist_add(struct gb_errlist *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void gb_errlist_free(struct gb_errlist *l);

#endif /* GB_LIBCOMMON_GB_ERR_H */
