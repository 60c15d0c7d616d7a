/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tap.h - a small TAP (Test Anything Protocol, version 12) producer for the
 * C integration tests and bench drivers
 *
 * One program is one TAP stream on stdout:
 *
 *   tap_plan(n)            "1..n" up front, when the count is known;
 *   tap_ok(ok, fmt, ...)   "ok N - text" or "not ok N - text"; RET ok;
 *   tap_skip(fmt, ...)     "ok N # skip text": a check that could not run;
 *   tap_diag(fmt, ...)     "# text", a comment the harness shows;
 *   tap_skip_all(fmt, ...) "1..0 # SKIP text"; RET 77, what make check
 *                          reads as a skip (never silent: the reason is
 *                          in the log);
 *   tap_bail(fmt, ...)     "Bail out! text"; the caller then exits 1;
 *   tap_done()             "1..N" when no plan was given (a trailing plan
 *                          is valid TAP); RET the exit status: 0 when
 *                          every check passed, 1 otherwise (also when a
 *                          plan was given and not met).
 *
 * Each line is flushed, so the output of a program that crashes ends at
 * its last check.  Everything is static inline: a program includes this
 * once, and its counters are its own.
 */
#ifndef GB_TESTS_TAP_H
#define GB_TESTS_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

struct tap_state {
	int n;				/* checks so far */
	int failed;
	int planned;			/* 0: no plan yet */
};

static inline struct tap_state *tap_state(void)
{
	static struct tap_state s;

	return &s;
}

static inline void tap_plan(int n)
{
	tap_state()->planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline void tap_vline(const char *head, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
static inline void tap_vline(const char *head, const char *fmt, va_list ap)
{
	fputs(head, stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

static inline bool tap_ok(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline bool tap_ok(bool ok, const char *fmt, ...)
{
	struct tap_state *t = tap_state();
	char head[32];
	va_list ap;

	snprintf(head, sizeof(head), "%s %d - ", ok ? "ok" : "not ok", ++t->n);
	t->failed += !ok;
	va_start(ap, fmt);
	tap_vline(head, fmt, ap);
	va_end(ap);
	return ok;
}

static inline void tap_skip(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void tap_skip(const char *fmt, ...)
{
	char head[32];
	va_list ap;

	snprintf(head, sizeof(head), "ok %d # skip ", ++tap_state()->n);
	va_start(ap, fmt);
	tap_vline(head, fmt, ap);
	va_end(ap);
}

static inline void tap_diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vline("# ", fmt, ap);
	va_end(ap);
}

static inline int tap_skip_all(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline int tap_skip_all(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vline("1..0 # SKIP ", fmt, ap);
	va_end(ap);
	return 77;
}

static inline void tap_bail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void tap_bail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vline("Bail out! ", fmt, ap);
	va_end(ap);
}

/* RET the failures so far. */
static inline int tap_failures(void)
{
	return tap_state()->failed;
}

static inline int tap_done(void)
{
	struct tap_state *t = tap_state();

	if (!t->planned) {
		printf("1..%d\n", t->n);
	} else if (t->planned != t->n) {
		printf("# planned %d checks, ran %d\n", t->planned, t->n);
		t->failed++;
	}
	fflush(stdout);
	return t->failed ? 1 : 0;
}

#endif /* GB_TESTS_TAP_H */
