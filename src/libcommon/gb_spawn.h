/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_spawn.h - the one place gpuburst starts processes: run a program (or
 * a function in a child) and wait for it with a deadline, or start one
 * detached
 *
 * gb_spawn_run(): argv (no shell), a deadline, stdin from a string, stdout
 * and stderr captured with caps (approval_notify, credential_process,
 * doctor's libslurm probe).  The child gets fds 0-2 only (every other
 * descriptor closed), default signal dispositions and an empty mask, its
 * own process group, and the environment given (default: PATH only).
 * argv[0] must be an absolute path: nothing is looked up in PATH.  At the
 * deadline the whole process group is killed (SIGKILL).  A background
 * grandchild that keeps a pipe open is not waited for once the child has
 * exited.  Safe in a multi-threaded process: the child only calls
 * async-signal-safe functions before execve(); SIGPIPE is blocked in the
 * calling thread while it writes stdin, so a child that ignores its stdin
 * costs an EPIPE, not a signal.
 *
 * gb_spawn_detached(): the double fork (MUNGE's daemonize): a new session,
 * stdio on /dev/null, not the caller's child, so slurmctld neither waits
 * for it nor kills it with the caller.
 */
#ifndef GB_LIBCOMMON_GB_SPAWN_H
#define GB_LIBCOMMON_GB_SPAWN_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_err.h"
#include "gb_str.h"

#define GB_SPAWN_PATH "PATH=/usr/sbin:/usr/bin:/sbin:/bin"

struct gb_spawn {
	char *const *argv;	/* argv[0] absolute */
	/*
	 * Instead of argv (NULL): fork and call fn(arg) in the child, its
	 * return the exit status; for work that may exit() the process
	 * (libslurm's fatal()).  Only stdin and stdout (and stderr unless
	 * err_inherit) are replaced: the child keeps the other descriptors
	 * and the process's memory, and must not run in a threaded process.
	 */
	int (*fn)(void *arg);
	void *arg;
	char *const *envp;	/* NULL: { GB_SPAWN_PATH } (argv only) */
	const char *input;	/* stdin (NUL-terminated); NULL: empty */
	double timeout;		/* seconds */
	/*
	 * Where stdout and stderr go, each capped at its max (the rest is
	 * read and dropped; *_truncated says so).  NULL: discarded.  [err_out]
	 * == [out] merges both streams into one buffer.  A buffer whose
	 * capacity already covers its cap is never reallocated, so a caller
	 * that reserves it (gb_buf_reserve()) can wipe the only copy of what a helper printed.
	 */
	struct gb_buf *out;
	size_t out_max;		/* 0: 64 KiB */
	struct gb_buf *err_out;
	size_t err_max;		/* 0: 64 KiB */
	bool err_inherit;	/* stderr stays the caller's (err_out unused) */
	/* results */
	int status;		/* exit status, 128 + signal, or -1 (timeout) */
	bool out_truncated, err_truncated;
};

/*
 * Run [r->argv] (or r->fn) as described above.
 * RET GB_E_OK when it ran to an exit (look at r->status); GB_E_TIMEOUT
 * (killed at the deadline); GB_E_IO when it could not start (pipe, fork,
 * or exit 127 from a failed execve: the text names argv[0]); GB_E_INVALID
 * for an argv[0] that is not absolute.
 */
gb_err_t gb_spawn_run(struct gb_spawn *r, gb_error_t *err);

/*
 * Start [argv] (argv[0] absolute: it runs in /) detached: a grandchild in a new session
 * with fds 0-2 on /dev/null and every other descriptor closed, cwd /,
 * default signal dispositions and an empty mask; execv() keeps the
 * environment.  Returns once the intermediate child has exited.
 * RET GB_E_OK (the program may still fail to exec: it is not waited for);
 * GB_E_IO when /dev/null, a fork or the new session failed.
 */
gb_err_t gb_spawn_detached(char *const *argv, gb_error_t *err);

/*
 * As gb_spawn_detached(), but the grandchild calls fn(arg) and exits with
 * its return: it keeps the caller's memory, descriptors (fds 0-2 on
 * /dev/null) and cwd.  Single-threaded callers only.
 */
gb_err_t gb_spawn_detached_call(int (*fn)(void *arg), void *arg, gb_error_t *err);

/*
 * Close every descriptor above 2 (close_range, or one by one up to 64 Ki).
 * Async-signal-safe: for a child of fork() before it execs.
 */
void gb_spawn_close_from_3(void);

#endif /* GB_LIBCOMMON_GB_SPAWN_H */
