/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_spawn.c - paths in the state directory, starting the worker detached
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gb_prog.h"
#include "gb_util.h"

void gb_prog_state_path(const struct gb_conf *conf, char *buf, size_t n)
{
	snprintf(buf, n, "%s/%s", conf->state_dir, GB_STATE_FILE);
}

void gb_prog_lock_path(const struct gb_conf *conf, char *buf, size_t n)
{
	snprintf(buf, n, "%s/%s", conf->state_dir, GB_WORKER_LOCK);
}

gb_err_t gb_prog_self_exe(char *buf, size_t n, gb_error_t *err)
{
	ssize_t len = readlink("/proc/self/exe", buf, n - 1);

	if (len <= 0 || (size_t)len >= n - 1)
		return gb_errorf(err, GB_E_IO, "readlink /proc/self/exe: %s",
				 len < 0 ? strerror(errno) : "path too long");
	buf[len] = '\0';
	return GB_E_OK;
}

/* Every fd above 2 (async-signal-safe: we are a child of fork()). */
static void close_from_3(void)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0)
		return;
#endif
	for (int fd = 3; fd < 65536; fd++)
		(void)close(fd);
}

/* In the grandchild: only async-signal-safe calls until execv(). */
static void exec_detached(char *const *argv, int devnull)
{
	if (dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0)
		_exit(126);
	close_from_3();
	gb_signals_reset();
	if (chdir("/") != 0)
		_exit(126);
	execv(argv[0], argv);
	_exit(127);
}

gb_err_t gb_prog_spawn_detached(char *const *argv, gb_error_t *err)
{
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC), status = 0;
	pid_t pid, w;

	if (devnull < 0)
		return gb_errorf(err, GB_E_IO, "open /dev/null: %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		/* New session: out of slurmctld's process group, no tty. */
		if (setsid() < 0)
			_exit(125);
		pid = fork();
		if (pid == 0)
			exec_detached(argv, devnull);
		_exit(pid < 0 ? 124 : 0);
	}
	close(devnull);
	if (pid < 0)
		return gb_errorf(err, GB_E_IO, "fork: %s", strerror(errno));
	do {
		w = waitpid(pid, &status, 0);
	} while (w < 0 && errno == EINTR);
	if (w < 0 && errno == ECHILD)
		return GB_E_OK;		/* SIGCHLD ignored: reaped for us */
	if (w < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return gb_errorf(err, GB_E_IO, "starting %s: intermediate child %s %d",
				 argv[0], w < 0 ? "lost" : "exited",
				 w < 0 ? errno : WEXITSTATUS(status));
	return GB_E_OK;
}

const char *gb_prog_worker_path(void)
{
	const char *p = getenv(GB_WORKER_ENV);

	return p && *p ? p : GB_WORKER_PATH;
}

gb_err_t gb_prog_start_worker(const char *exe, const char *conf_path,
			      gb_error_t *err)
{
	char *argv[] = { (char *)exe, (char *)"-c", (char *)conf_path, NULL };

	return gb_prog_spawn_detached(argv, err);
}
