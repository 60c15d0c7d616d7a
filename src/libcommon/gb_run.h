/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_run.h - run a program: argv (no shell), a deadline, stdin from a
 * string, stdout and stderr captured with caps
 *
 * The one way gpuburst runs a helper and waits for it (approval_notify,
 * credential_process).  The child gets fds 0-2 only (every other
 * descriptor closed), default signal dispositions and an empty mask, its
 * own process group, and the environment given (default: PATH only).
 * argv[0] must be an absolute path: nothing is looked up in PATH.  At the
 * deadline the whole process group is killed (SIGKILL).  A background
 * grandchild that keeps a pipe open is not waited for once the child has
 * exited.  Safe in a multi-threaded process: the child only calls
 * async-signal-safe functions before execve(); SIGPIPE is blocked in the
 * calling thread while it writes stdin, so a child that ignores its stdin
 * costs an EPIPE, not a signal.
 */
#ifndef GB_LIBCOMMON_GB_RUN_H
#define GB_LIBCOMMON_GB_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_err.h"
#include "gb_str.h"

#define GB_RUN_PATH "PATH=/usr/sbin:/usr/bin:/sbin:/bin"

struct gb_run {
	char *const *argv;	/* argv[0] absolute */
	char *const *envp;	/* NULL: { GB_RUN_PATH } */
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
	/* results */
	int status;		/* exit status, 128 + signal, or -1 (timeout) */
	bool out_truncated, err_truncated;
};

/*
 * Run [r->argv] as described above.
 * RET GB_E_OK when it ran to an exit (look at r->status); GB_E_TIMEOUT
 * (killed at the deadline); GB_E_IO when it could not start (pipe, fork,
 * or exit 127 from a failed execve: the text names argv[0]); GB_E_INVALID
 * for an argv[0] that is not absolute.
 */
gb_err_t gb_run(struct gb_run *r, gb_error_t *err);

#endif /* GB_LIBCOMMON_GB_RUN_H */
