/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_util.h - time, randomness and file helpers
 */
#ifndef GB_LIBCOMMON_GB_UTIL_H
#define GB_LIBCOMMON_GB_UTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "gb_err.h"

/* RET wall-clock time, seconds since the epoch, with sub-second part. */
double gb_time_now(void);

/* RET CLOCK_MONOTONIC seconds: for durations, never for records. */
double gb_time_mono(void);

/*
 * Sleep [seconds] (sub-second part honoured).  A signal that interrupts the
 * sleep (EINTR) only shortens one round: the rest of the time is slept;
 * any other nanosleep error ends the sleep (never a busy loop).  Negative
 * and NaN sleep nothing; more than GB_TIME_SLEEP_MAX is cut to that.
 */
#define GB_TIME_SLEEP_MAX 86400.0
void gb_time_sleep(double seconds);

/*
 * Format epoch seconds [t] as "2026-11-29T15:13:45Z" (UTC) into [buf] of at
 * least 21 bytes.  RET [buf].
 */
char *gb_time_iso(double t, char *buf, size_t n);

/*
 * The same to the millisecond, "2026-11-29T15:13:45.123Z", into [buf] of
 * at least 25 bytes: for records, where events a fraction of a second
 * apart must read in their order.  RET [buf].
 */
char *gb_time_iso_ms(double t, char *buf, size_t n);

/*
 * Format a duration as "3h 02m 05s" / "4m 10s" / "12s". RET [buf].
 */
char *gb_time_human(double seconds, char *buf, size_t n);

/*
 * Parse "2026-11-29T15:13:45Z", "2026-11-29 15:13:45" (UTC), either with
 * a fraction of a second ("2026-11-29T15:13:45.123Z"), "2026-11-29", or a
 * relative age "90s", "15m", "2h", "3d" (meaning now minus that).
 * RET GB_E_OK or GB_E_INVALID.
 */
gb_err_t gb_time_parse(const char *s, double now, double *out);

/* Fill [buf] with [n] cryptographically random bytes. */
gb_err_t gb_random_bytes(void *buf, size_t n, gb_error_t *err);

/* Write [nhex] random lower-case hex digits plus NUL into [buf]. */
gb_err_t gb_random_hex(char *buf, size_t nhex, gb_error_t *err);

/*
 * Create directory [path] and missing parents; the last component gets
 * [mode] (parents 0755).  An existing directory is left as it is.
 */
gb_err_t gb_mkdir_p(const char *path, mode_t mode, gb_error_t *err);

/*
 * Open [path] to read a file given from outside (configuration, input,
 * secrets) without blocking: the open is non-blocking, as a FIFO with no
 * writer or a device would wait forever, then anything but a regular file
 * is refused ("PATH is not a regular file (a FIFO)", naming the kind), and
 * so is a file over [max] bytes, before a byte is read.
 * OUT *fd, blocking again (close() it); *size the file's size when [size]
 * is not NULL.  RET GB_E_OK, GB_E_NOTFOUND (no such file), GB_E_IO (cannot
 * open it, not a regular file), GB_E_INVALID (larger than [max]).
 */
gb_err_t gb_file_open(const char *path, size_t max, int *fd, size_t *size,
		      gb_error_t *err);

/*
 * gb_file_open() and close(), for a file another library reads by itself
 * (libslurm's slurm.conf, curl's CA bundle).  RET as gb_file_open().
 */
gb_err_t gb_file_check(const char *path, size_t max, gb_error_t *err);

/*
 * Write all [n] bytes of [p] to [fd], again after EINTR and short writes.
 * RET GB_E_OK, GB_E_IO (errno says why; 0 after a write of 0 bytes).
 */
gb_err_t gb_write_all(int fd, const void *p, size_t n);

/*
 * Read all of [path], opened by gb_file_open() (at most [max] bytes, else
 * GB_E_INVALID).  OUT *data NEW, NUL-terminated (free()); *len without
 * the NUL.  RET as gb_file_open(), GB_E_NOMEM.
 */
gb_err_t gb_file_read(const char *path, size_t max, char **data, size_t *len,
		      gb_error_t *err);

/* What a file of [mode] that is not a regular file is: "a FIFO", "a directory", ... */
const char *gb_file_kind(mode_t mode);

/*
 * Replace [path] with the [n] bytes of [p], atomically and durably: a
 * temporary file in the same directory, written, given [mode], fsync'd,
 * renamed over [path], and the directory fsync'd.  A reader sees the old
 * file or the new one, never a part.  RET GB_E_OK, GB_E_INVALID (path
 * empty or too long), GB_E_IO (named in [err]).
 */
gb_err_t gb_file_replace(const char *path, const void *p, size_t n, mode_t mode,
			 gb_error_t *err);

/*
 * Make fds 0, 1, 2 valid: any that is closed is opened on /dev/null.
 * slurmctld starts power-save programs with all three closed.
 */
void gb_stdio_sanitize(void);

/*
 * Unblock every signal and reset every disposition to the default, so
 * that children do not inherit slurmctld's blocked mask (TERM, CHLD, ...).
 */
void gb_signals_reset(void);

#endif /* GB_LIBCOMMON_GB_UTIL_H */
