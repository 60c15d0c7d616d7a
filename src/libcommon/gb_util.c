/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_util.c - time, randomness and file helpers
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_SYS_RANDOM_H
#include <sys/random.h>
#endif

#include "gb_str.h"
#include "gb_util.h"

double gb_time_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double gb_time_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void gb_time_sleep(double seconds)
{
	struct timespec ts;

	if (!(seconds > 0))	/* also NaN */
		return;
	if (seconds > GB_TIME_SLEEP_MAX)
		seconds = GB_TIME_SLEEP_MAX;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec > 999999999L)
		ts.tv_nsec = 999999999L;
	/* POSIX nanosleep: on EINTR [ts] holds the time that remains */
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

char *gb_time_iso(double t, char *buf, size_t n)
{
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	if (strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0 && n)
		buf[0] = '\0';
	return buf;
}

char *gb_time_iso_ms(double t, char *buf, size_t n)
{
	/*
	 * Down to the millisecond, as the log lines, so that a time printed
	 * is never later than the record (--since TIME finds it); the
	 * microsecond added first absorbs the double's error (0.1 s is
	 * 0.0999999 s).
	 */
	long long ms = t > 0 ? (long long)(t * 1000.0 + 1e-3) : 0;
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	char sec[32];

	gmtime_r(&s, &tm);
	if (strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		sec[0] = '\0';
	snprintf(buf, n, "%s.%03dZ", sec, (int)(ms % 1000));
	return buf;
}

char *gb_time_human(double seconds, char *buf, size_t n)
{
	long s = seconds < 0 ? 0 : (long)(seconds + 0.5);
	long d = s / 86400, h = (s % 86400) / 3600, m = (s % 3600) / 60;

	s %= 60;
	if (d)
		snprintf(buf, n, "%ldd %02ldh %02ldm", d, h, m);
	else if (h)
		snprintf(buf, n, "%ldh %02ldm %02lds", h, m, s);
	else if (m)
		snprintf(buf, n, "%ldm %02lds", m, s);
	else
		snprintf(buf, n, "%lds", s);
	return buf;
}

gb_err_t gb_time_parse(const char *s, double now, double *out)
{
	static const struct { char unit; long mult; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
	};
	struct tm tm;
	const char *end;
	double frac = 0;
	bool zulu = false, timed = false;
	size_t len;

	if (!s || !*s)
		return GB_E_INVALID;
	len = strlen(s);
	for (size_t i = 0; i < GB_ARRAY_LEN(units); i++) {
		char num[32];
		long v;

		if (s[len - 1] != units[i].unit || len >= sizeof(num))
			continue;
		memcpy(num, s, len - 1);
		num[len - 1] = '\0';
		if (gb_parse_long(num, 0, LONG_MAX / 86400, &v))
			return GB_E_INVALID;
		*out = now - (double)(v * units[i].mult);
		return GB_E_OK;
	}
	memset(&tm, 0, sizeof(tm));
	if ((end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)))
		zulu = timed = true;
	else if ((end = strptime(s, "%Y-%m-%d %H:%M:%S", &tm)))
		timed = true;
	else if (!(end = strptime(s, "%Y-%m-%d", &tm)))
		return GB_E_INVALID;
	/* the milliseconds gpuburstctl prints: ".123" (up to nanoseconds) */
	if (timed && *end == '.' && end[1] >= '0' && end[1] <= '9') {
		long digits = 0, scale = 1;

		for (end++; *end >= '0' && *end <= '9'; end++)
			if (scale < 1000000000L) {
				digits = digits * 10 + (*end - '0');
				scale *= 10;
			}
		frac = (double)digits / (double)scale;
	}
	if (zulu && *end++ != 'Z')
		return GB_E_INVALID;
	if (*end)
		return GB_E_INVALID;
	*out = (double)timegm(&tm) + frac;
	return GB_E_OK;
}

gb_err_t gb_random_bytes(void *buf, size_t n, gb_error_t *err)
{
	unsigned char *p = buf;

	while (n > 0) {
#ifdef HAVE_GETRANDOM
		ssize_t r = getrandom(p, n, 0);
#else
		ssize_t r = -1;
		int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			r = read(fd, p, n);
			close(fd);
		}
#endif
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return gb_errorf(err, GB_E_IO, "no random bytes: %s",
					 strerror(errno));
		p += r;
		n -= (size_t)r;
	}
	return GB_E_OK;
}

gb_err_t gb_random_hex(char *buf, size_t nhex, gb_error_t *err)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[64];
	size_t nbytes = (nhex + 1) / 2;
	gb_err_t rc;

	if (nbytes > sizeof(raw))
		return gb_errorf(err, GB_E_INVALID, "random hex too long");
	if ((rc = gb_random_bytes(raw, nbytes, err)))
		return rc;
	for (size_t i = 0; i < nhex; i++)
		buf[i] = hex[(raw[i / 2] >> ((i % 2) ? 0 : 4)) & 0xf];
	buf[nhex] = '\0';
	return GB_E_OK;
}

gb_err_t gb_mkdir_p(const char *path, mode_t mode, gb_error_t *err)
{
	char tmp[PATH_MAX];
	struct stat st;

	if (gb_strlcpy(tmp, path, sizeof(tmp)) >= sizeof(tmp))
		return gb_errorf(err, GB_E_INVALID, "path too long: %s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return gb_errorf(err, GB_E_IO, "cannot create %s: %s",
					 tmp, strerror(errno));
		*p = '/';
	}
	if (mkdir(tmp, mode) < 0) {
		if (errno != EEXIST)
			return gb_errorf(err, GB_E_IO, "cannot create %s: %s",
					 tmp, strerror(errno));
		if (stat(tmp, &st) < 0 || !S_ISDIR(st.st_mode))
			return gb_errorf(err, GB_E_IO, "%s exists and is not a directory",
					 tmp);
	} else if (chmod(tmp, mode) < 0) {	/* mkdir's mode is umask-filtered */
		return gb_errorf(err, GB_E_IO, "cannot chmod %s: %s", tmp,
				 strerror(errno));
	}
	return GB_E_OK;
}

const char *gb_file_kind(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "of an unknown kind";
}

static gb_err_t not_regular(const char *path, mode_t mode, gb_error_t *err)
{
	return gb_errorf(err, GB_E_IO, "%s is not a regular file (%s)", path,
			 gb_file_kind(mode));
}

gb_err_t gb_file_open(const char *path, size_t max, int *fd, size_t *size,
		      gb_error_t *err)
{
	struct stat st;
	gb_err_t rc;
	int f, flags;

	*fd = -1;
	/* Opening a device can act (a tape rewinds, a watchdog starts):
	 * refuse what stat(2) already tells; fstat(2) below decides. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return not_regular(path, st.st_mode, err);
	/* O_NONBLOCK: open(2) of a FIFO waits for a writer, of some devices
	 * for a carrier; O_NOCTTY: a terminal never becomes ours. */
	f = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (f < 0)
		return gb_errorf(err, errno == ENOENT || errno == ENOTDIR ?
				 GB_E_NOTFOUND : GB_E_IO, "cannot open %s: %s",
				 path, strerror(errno));
	if (fstat(f, &st) < 0) {
		rc = gb_errorf(err, GB_E_IO, "cannot stat %s: %s", path,
			       strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {	/* replaced since stat(2) */
		rc = not_regular(path, st.st_mode, err);
		goto out;
	}
	if ((uintmax_t)st.st_size > max) {
		rc = gb_errorf(err, GB_E_INVALID, "%s is larger than %zu bytes",
			       path, max);
		goto out;
	}
	/* No effect on a regular file; cleared for whoever reads the fd. */
	if ((flags = fcntl(f, F_GETFL)) < 0 ||
	    fcntl(f, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		rc = gb_errorf(err, GB_E_IO, "%s: fcntl: %s", path,
			       strerror(errno));
		goto out;
	}
	if (size)
		*size = (size_t)st.st_size;
	*fd = f;
	f = -1;
	rc = GB_E_OK;
out:
	if (f >= 0)
		close(f);
	return rc;
}

gb_err_t gb_file_check(const char *path, size_t max, gb_error_t *err)
{
	gb_err_t rc;
	int fd;

	if ((rc = gb_file_open(path, max, &fd, NULL, err)) == GB_E_OK)
		close(fd);
	return rc;
}

gb_err_t gb_write_all(int fd, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n > 0) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = 0;
			return GB_E_IO;
		}
		b += w;
		n -= (size_t)w;
	}
	return GB_E_OK;
}

/* fsync the directory holding [path], so that a rename is durable. */
static gb_err_t sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int fd, r;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return GB_E_IO;
	r = fsync(fd);
	close(fd);
	return r == 0 ? GB_E_OK : GB_E_IO;
}

gb_err_t gb_file_replace(const char *path, const void *p, size_t n, mode_t mode,
			 gb_error_t *err)
{
	char tmp[PATH_MAX];
	bool made = false;		/* tmp exists and is ours to remove */
	int fd = -1, len;
	gb_err_t rc = GB_E_OK;

	len = snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path ? path : "");
	if (!path || !*path || len < 0 || (size_t)len >= sizeof(tmp))
		return gb_errorf(err, GB_E_INVALID, "the path is empty or too long");
	if ((fd = mkstemp(tmp)) < 0)
		return gb_errorf(err, GB_E_IO, "%s: cannot create a temporary file: %s", tmp,
				 strerror(errno));
	made = true;
	if (fchmod(fd, mode) || gb_write_all(fd, p, n) || fsync(fd)) {
		rc = gb_errorf(err, GB_E_IO, "%s: cannot write: %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd)) {
		fd = -1;
		rc = gb_errorf(err, GB_E_IO, "%s: cannot write: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path)) {
		rc = gb_errorf(err, GB_E_IO, "cannot rename %s to %s: %s", tmp, path,
			       strerror(errno));
		goto out;
	}
	made = false;
	if (sync_dir(path))
		rc = gb_errorf(err, GB_E_IO, "%s: cannot sync its directory: %s", path,
			       strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	if (made)
		unlink(tmp);
	return rc;
}

gb_err_t gb_file_read(const char *path, size_t max, char **data, size_t *len,
		      gb_error_t *err)
{
	struct gb_buf b = GB_BUF_INIT;
	char chunk[8192];
	gb_err_t rc;
	int fd;

	if ((rc = gb_file_open(path, max, &fd, NULL, err)))
		return rc;
	/* The size checked above may grow while we read (or be 0, /proc). */
	for (;;) {
		ssize_t r = read(fd, chunk, sizeof(chunk));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = gb_errorf(err, GB_E_IO, "cannot read %s: %s", path,
				       strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		if (b.len + (size_t)r > max) {
			rc = gb_errorf(err, GB_E_INVALID,
				       "%s is larger than %zu bytes", path, max);
			goto out;
		}
		gb_buf_append(&b, chunk, (size_t)r);
	}
	if (gb_buf_failed(&b)) {
		rc = gb_errorf(err, GB_E_NOMEM, "reading %s: out of memory", path);
		goto out;
	}
	if (len)
		*len = b.len;
	*data = gb_buf_steal(&b);
	if (!*data)
		rc = gb_errorf(err, GB_E_NOMEM, "reading %s: out of memory", path);
out:
	close(fd);
	gb_buf_free(&b);
	return rc;
}

void gb_stdio_sanitize(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int nfd = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);

		if (nfd >= 0 && nfd != fd) {	/* lowest free fd is fd */
			dup2(nfd, fd);
			close(nfd);
		}
	}
}

/*
 * glibc's sigaction() refuses the two signals it reserves (32, 33), so an
 * ignored disposition inherited from an ancestor (GNU make ignores them)
 * would survive execve().  The kernel's rt_sigaction takes them: an
 * all-zero struct is SIG_DFL, no flags, empty mask on every architecture.
 * The mask is emptied by the kernel call too, since sanitizer runtimes
 * intercept sigprocmask() and may leave a child of fork() fully blocked.
 */
static void reset_reserved_signals(void)
{
	static const unsigned long zero[16];

#ifdef SYS_rt_sigaction
	for (int sig = 32; sig < 34; sig++)
		(void)syscall(SYS_rt_sigaction, sig, zero, NULL, (size_t)8);
#endif
#ifdef SYS_rt_sigprocmask
	(void)syscall(SYS_rt_sigprocmask, SIG_SETMASK, zero, NULL, (size_t)8);
#endif
}

void gb_signals_reset(void)
{
	struct sigaction sa;
	sigset_t all;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		(void)sigaction(sig, &sa, NULL);	/* EINVAL for RT internals */
	}
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	reset_reserved_signals();
}
