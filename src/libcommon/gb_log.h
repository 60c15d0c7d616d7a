/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_log.h - one line per event, key=value fields, file and/or syslog
 *
 * Programs run by slurmctld have no visible stdout/stderr, so they log to a
 * file and/or syslog; stderr gets a copy only when it is a terminal.  A line
 * is "<ISO-8601 UTC> <ident>[<pid>]: <level>: <event> key=value ...".
 * Values that contain blanks, quotes or '=' go through gb_log_q().
 *
 * Secrets never reach a log: every string registered with
 * gb_log_secret_add() is replaced by "[REDACTED]" in every line, whatever
 * the call site formatted.  The credential code registers what it loads.
 *
 * Thread-safe: one mutex; each line is one write(2) on an O_APPEND file,
 * so lines from concurrent processes do not interleave.
 */
#ifndef GB_LIBCOMMON_GB_LOG_H
#define GB_LIBCOMMON_GB_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_err.h"

enum gb_log_level {
	GB_LOG_ERROR = 0,
	GB_LOG_WARNING,
	GB_LOG_NOTICE,
	GB_LOG_INFO,
	GB_LOG_DEBUG,
};

struct gb_log_opts {
	const char *file;		/* NULL: no log file */
	bool syslog;			/* also syslog(LOG_DAEMON) */
	enum gb_log_level level;	/* lines above this level are dropped */
	bool no_stderr;			/* never copy to stderr, even on a tty */
	bool stderr_always;		/* copy to stderr whatever it is (a
					 * program whose stderr is the journal) */
};

/*
 * Start logging as [ident] (program name).  May be called again to switch
 * destinations (e.g. after the config is loaded).  If [o]->file cannot be
 * opened, the other destinations stay and GB_E_IO is returned with detail.
 * Before the first call, messages go to stderr when it is a terminal.
 */
gb_err_t gb_log_open(const char *ident, const struct gb_log_opts *o,
		     gb_error_t *err);

/* Flush and close every destination; later messages go nowhere. */
void gb_log_close(void);

/* RET whether a message of [lvl] would be written anywhere. */
bool gb_log_enabled(enum gb_log_level lvl);

void gb_log(enum gb_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define gb_log_error(...) gb_log(GB_LOG_ERROR, __VA_ARGS__)
#define gb_log_warn(...) gb_log(GB_LOG_WARNING, __VA_ARGS__)
#define gb_log_notice(...) gb_log(GB_LOG_NOTICE, __VA_ARGS__)
#define gb_log_info(...) gb_log(GB_LOG_INFO, __VA_ARGS__)
#define gb_log_debug(...) \
	do { \
		if (gb_log_enabled(GB_LOG_DEBUG)) \
			gb_log(GB_LOG_DEBUG, __VA_ARGS__); \
	} while (0)

/*
 * Parse "error|warning|notice|info|debug" into [out].
 * RET GB_E_OK or GB_E_INVALID.
 */
gb_err_t gb_log_level_parse(const char *s, enum gb_log_level *out);
const char *gb_log_level_name(enum gb_log_level lvl);

/*
 * Quote [v] for a key=value field: returned as is when it has no blank,
 * quote, backslash, '=' or control character and is not empty; otherwise
 * written into [buf] in double quotes with \" \\ \n escapes (truncated to
 * fit).  RET BORROWED: [v] or [buf].  NULL prints as "(null)".
 */
const char *gb_log_q(char *buf, size_t n, const char *v);

/*
 * gb_log_q() into a buffer that lives to the end of the enclosing block:
 * for an argument of one log call, gb_log_error("x error=%s", GB_LOG_Q(t)).
 * Every free-text value in a log line goes through one of the two.
 */
#define GB_LOG_Q_MAX 512
#define GB_LOG_Q(v) gb_log_q((char[GB_LOG_Q_MAX]){ 0 }, GB_LOG_Q_MAX, (v))

/*
 * Register a secret to redact from every later line.  Strings shorter than
 * 4 bytes are ignored (they would redact ordinary words).  The registry
 * keeps a private copy, wiped by gb_log_secret_clear().  It holds the 64
 * most recent secrets: a long-running process whose credentials rotate
 * forgets the oldest, never the current ones.
 */
void gb_log_secret_add(const char *secret);
void gb_log_secret_clear(void);

#endif /* GB_LIBCOMMON_GB_LOG_H */
