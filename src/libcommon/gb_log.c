/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_log.c - file/syslog/stderr logging with secret redaction
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "gb_log.h"
#include "gb_str.h"

#define LOG_LINE_MAX 8192
#define SECRETS_MAX 64

/*****************************************************************************
 *  Private Variables
 *****************************************************************************/

static pthread_mutex_t log_mutex = PTHREAD_MUTEX_INITIALIZER;
static char log_ident[64] = "gpuburst";	/* program name in every line */
static int log_fd = -1;			/* the log file, or -1 */
static bool log_syslog;			/* openlog() done */
static bool log_stderr = true;		/* copy to stderr if it is a tty */
static bool log_stderr_always;		/* ... or whatever it is */
static enum gb_log_level log_level = GB_LOG_INFO;
static char *secrets[SECRETS_MAX];	/* strings redacted from every line */
static size_t n_secrets;

static const char *level_names[] = {
	[GB_LOG_ERROR] = "error",
	[GB_LOG_WARNING] = "warning",
	[GB_LOG_NOTICE] = "notice",
	[GB_LOG_INFO] = "info",
	[GB_LOG_DEBUG] = "debug",
};

static const int level_prio[] = {
	[GB_LOG_ERROR] = LOG_ERR,
	[GB_LOG_WARNING] = LOG_WARNING,
	[GB_LOG_NOTICE] = LOG_NOTICE,
	[GB_LOG_INFO] = LOG_INFO,
	[GB_LOG_DEBUG] = LOG_DEBUG,
};

/*****************************************************************************
 *  Public Functions
 *****************************************************************************/

gb_err_t gb_log_open(const char *ident, const struct gb_log_opts *o,
		     gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;
	int fd = -1;

	if (o->file && o->file[0]) {
		fd = open(o->file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
			  0640);
		if (fd < 0)
			rc = gb_errorf(err, GB_E_IO, "cannot open log file %s: %s",
				       o->file, strerror(errno));
	}
	pthread_mutex_lock(&log_mutex);
	gb_strlcpy(log_ident, ident ? ident : "gpuburst", sizeof(log_ident));
	if (log_fd >= 0)
		close(log_fd);
	log_fd = fd;
	if (log_syslog)
		closelog();
	log_syslog = o->syslog;
	if (log_syslog)
		openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	log_level = o->level;
	log_stderr = !o->no_stderr;
	log_stderr_always = log_stderr && o->stderr_always;
	pthread_mutex_unlock(&log_mutex);
	return rc;
}

void gb_log_close(void)
{
	pthread_mutex_lock(&log_mutex);
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -1;
	if (log_syslog)
		closelog();
	log_syslog = false;
	log_stderr = false;
	log_stderr_always = false;
	pthread_mutex_unlock(&log_mutex);
}

bool gb_log_enabled(enum gb_log_level lvl)
{
	return lvl <= log_level;
}

gb_err_t gb_log_level_parse(const char *s, enum gb_log_level *out)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (s && strcmp(s, level_names[i]) == 0) {
			*out = (enum gb_log_level)i;
			return GB_E_OK;
		}
	}
	return GB_E_INVALID;
}

const char *gb_log_level_name(enum gb_log_level lvl)
{
	if ((size_t)lvl >= sizeof(level_names) / sizeof(level_names[0]))
		return "unknown";
	return level_names[lvl];
}

const char *gb_log_q(char *buf, size_t n, const char *v)
{
	size_t j = 0;
	bool plain = true;

	if (!v)
		return "(null)";
	if (!*v)
		plain = false;
	for (const char *p = v; *p && plain; p++) {
		unsigned char c = (unsigned char)*p;

		if (c <= ' ' || c == '"' || c == '\\' || c == '=' || c == 0x7f)
			plain = false;
	}
	if (plain || n < 3)
		return plain ? v : "\"\"";
	buf[j++] = '"';
	for (const char *p = v; *p && j + 3 < n; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '"' || c == '\\') {
			buf[j++] = '\\';
			buf[j++] = (char)c;
		} else if (c == '\n') {
			buf[j++] = '\\';
			buf[j++] = 'n';
		} else if (c < ' ' || c == 0x7f) {
			buf[j++] = '?';
		} else {
			buf[j++] = (char)c;
		}
	}
	buf[j++] = '"';
	buf[j] = '\0';
	return buf;
}

void gb_log_secret_add(const char *secret)
{
	if (!secret || strlen(secret) < 4)
		return;
	pthread_mutex_lock(&log_mutex);
	for (size_t i = 0; i < n_secrets; i++) {
		if (strcmp(secrets[i], secret) == 0)
			goto out;
	}
	char *copy = strdup(secret);

	if (!copy)
		goto out;
	if (n_secrets == SECRETS_MAX) {
		/* Full: forget the oldest (an expired credential rotated out by
		 * refreshes) rather than refuse the newest, which is live. */
		gb_memzero(secrets[0], strlen(secrets[0]));
		free(secrets[0]);
		memmove(secrets, secrets + 1, (SECRETS_MAX - 1) * sizeof(*secrets));
		n_secrets--;
	}
	secrets[n_secrets++] = copy;
out:
	pthread_mutex_unlock(&log_mutex);
}

void gb_log_secret_clear(void)
{
	pthread_mutex_lock(&log_mutex);
	for (size_t i = 0; i < n_secrets; i++) {
		gb_memzero(secrets[i], strlen(secrets[i]));
		free(secrets[i]);
		secrets[i] = NULL;
	}
	n_secrets = 0;
	pthread_mutex_unlock(&log_mutex);
}

/*****************************************************************************
 *  Private Functions
 *****************************************************************************/

/* Replace every registered secret in [line] (in place) by [REDACTED]. */
static void redact(char *line, size_t size)
{
	static const char mark[] = "[REDACTED]";

	for (size_t i = 0; i < n_secrets; i++) {
		size_t slen = strlen(secrets[i]);
		char *p = line;

		while ((p = strstr(p, secrets[i]))) {
			size_t tail = strlen(p + slen) + 1;
			size_t mlen = sizeof(mark) - 1;

			if ((size_t)(p - line) + mlen + tail > size)
				tail = size - (size_t)(p - line) - mlen - 1;
			memmove(p + mlen, p + slen, tail);
			memcpy(p, mark, mlen);
			line[size - 1] = '\0';
			p += mlen;
		}
	}
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		len -= (size_t)w;
	}
}

void gb_log(enum gb_log_level lvl, const char *fmt, ...)
{
	char msg[LOG_LINE_MAX];
	char line[LOG_LINE_MAX + 128];
	struct timespec ts;
	struct tm tm;
	va_list ap;
	int saved_errno = errno;
	int n;

	if (lvl > log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *p = msg; *p; p++) {	/* one event, one line */
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);

	pthread_mutex_lock(&log_mutex);
	redact(msg, sizeof(msg));
	n = snprintf(line, sizeof(line),
		     "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%ld]: %s: %s\n",
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		     tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000L, log_ident,
		     (long)getpid(), level_names[lvl], msg);
	if (n < 0)
		goto out;
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	if (log_fd >= 0)
		write_all(log_fd, line, (size_t)n);
	if (log_syslog)
		syslog(level_prio[lvl], "%s: %s", level_names[lvl], msg);
	if (log_stderr && (log_stderr_always || isatty(STDERR_FILENO)))
		write_all(STDERR_FILENO, line, (size_t)n);
out:
	pthread_mutex_unlock(&log_mutex);
	errno = saved_errno;
}
