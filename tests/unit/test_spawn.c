/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_spawn.c - libcommon's gb_spawn: a program or a function run with a
 * deadline and its output captured, and the detached double fork
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gb_spawn.h"
#include "gb_str.h"
#include "gb_util.h"

/*****************************************************************************
 *  gb_spawn_run
 *****************************************************************************/

/* gb_spawn_run() as approval_notify uses it: both streams in [out]. */
static gb_err_t run(char *const *argv, const char *input, double timeout, int *status,
		    struct gb_buf *out, gb_error_t *err)
{
	struct gb_spawn r = { .argv = argv, .input = input, .timeout = timeout,
			      .out = out, .err_out = out };
	gb_err_t rc = gb_spawn_run(&r, err);

	*status = r.status;
	return rc;
}

/*
 * Output captured (stdin echoed, stderr merged), exit status reported,
 * killed at the deadline, argv[0] checked, a deaf reader costs no SIGPIPE,
 * the environment is PATH only.
 */
static void test_run(void **state)
{
	struct gb_buf out = GB_BUF_INIT;
	char *cat[] = { (char *)"/bin/cat", NULL };
	char *fail[] = { (char *)"/bin/sh", (char *)"-c", (char *)"echo oops >&2; exit 3", NULL };
	char *slow[] = { (char *)"/bin/sleep", (char *)"5", NULL };
	char *none[] = { (char *)"/nonexistent/notify", NULL };
	char *rel[] = { (char *)"notify", NULL };
	char *deaf[] = { (char *)"/bin/true", NULL };
	char *env[] = { (char *)"/usr/bin/env", NULL };
	struct gb_buf big = GB_BUF_INIT;
	gb_error_t e = { 0 };
	int status;
	double t0;

	(void)state;
	assert_int_equal(run(cat, "{\"a\":1}", 5, &status, &out, &e), GB_E_OK);
	assert_int_equal(status, 0);
	assert_string_equal(gb_buf_str(&out), "{\"a\":1}");
	gb_buf_reset(&out);
	assert_int_equal(run(fail, "", 5, &status, &out, &e), GB_E_OK);
	assert_int_equal(status, 3);
	assert_string_equal(gb_buf_str(&out), "oops\n");
	gb_buf_reset(&out);
	t0 = gb_time_mono();
	assert_int_equal(run(slow, "x", 0.3, &status, &out, &e), GB_E_TIMEOUT);
	assert_true(gb_time_mono() - t0 < 3);
	assert_int_equal(status, -1);
	assert_int_equal(run(none, "x", 5, &status, NULL, &e), GB_E_IO);
	assert_int_equal(run(rel, "x", 5, &status, NULL, &e), GB_E_INVALID);
	/* a program that does not read 1 MiB of stdin: no SIGPIPE for us */
	for (int i = 0; i < 1024 * 16; i++)
		gb_buf_puts(&big, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n");
	assert_int_equal(run(deaf, gb_buf_str(&big), 5, &status, NULL, &e), GB_E_OK);
	assert_int_equal(status, 0);
	/* the environment is PATH only */
	assert_int_equal(run(env, NULL, 5, &status, &out, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&out), "PATH=/usr/sbin:/usr/bin:/sbin:/bin\n");
	gb_buf_free(&big);
	gb_buf_free(&out);
}

static int child_fn(void *arg)
{
	const char *word = arg;

	/* our stdin is the input: echo it after the word */
	char buf[64];
	ssize_t n = read(0, buf, sizeof(buf));

	printf("%s:%.*s", word, n > 0 ? (int)n : 0, buf);
	fflush(stdout);
	return 7;
}

static int sleepy_fn(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

/* A function in the child: its output, its return as the status, the deadline. */
static void test_run_fn(void **state)
{
	struct gb_buf out = GB_BUF_INIT;
	struct gb_spawn r = { .fn = child_fn, .arg = (void *)"word", .input = "in",
			      .timeout = 5, .out = &out, .err_inherit = true };
	gb_error_t e = { 0 };
	double t0;

	(void)state;
	assert_int_equal(gb_spawn_run(&r, &e), GB_E_OK);
	assert_int_equal(r.status, 7);
	assert_string_equal(gb_buf_str(&out), "word:in");
	r = (struct gb_spawn){ .fn = sleepy_fn, .timeout = 0.3 };
	t0 = gb_time_mono();
	assert_int_equal(gb_spawn_run(&r, &e), GB_E_TIMEOUT);
	assert_true(gb_time_mono() - t0 < 3);
	assert_int_equal(r.status, -1);
	gb_buf_free(&out);
}

/*****************************************************************************
 *  gb_spawn_detached
 *****************************************************************************/

/* Find the process whose cmdline is exactly [a0] [a1]; RET its pid or 0. */
static pid_t find_proc(const char *a0, const char *a1)
{
	for (int tries = 0; tries < 200; tries++) {
		DIR *d = opendir("/proc");
		struct dirent *de;
		pid_t found = 0;

		assert_non_null(d);
		while (!found && (de = readdir(d))) {
			char path[300], buf[256];
			ssize_t n;
			int fd;

			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
			if ((fd = open(path, O_RDONLY)) < 0)
				continue;
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n > 0 && (size_t)n == strlen(a0) + strlen(a1) + 2 &&
			    strcmp(buf, a0) == 0 && strcmp(buf + strlen(a0) + 1, a1) == 0) {
				long v = 0;

				if (gb_parse_long(de->d_name, 1, 1L << 30, &v) == GB_E_OK)
					found = (pid_t)v;
			}
		}
		closedir(d);
		if (found)
			return found;
		usleep(25000);
	}
	return 0;
}

static char *proc_file(pid_t pid, const char *name)
{
	char path[128], *text = NULL;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	assert_int_equal(gb_file_read(path, 1 << 16, &text, NULL, NULL), 0);
	return text;
}

/*
 * The spawned program runs in a new session, is not our child (double
 * fork), has fds 0-2 on /dev/null and no other, cwd /, and an empty signal
 * mask although ours blocks TERM and CHLD (as slurmctld's does).
 */
static void test_detached(void **state)
{
	char sleep_bin[] = "/bin/sleep", arg[32];
	char *argv[] = { sleep_bin, arg, NULL };
	char *status, *stat_s, path[64], link[256];
	int extra_fd = open("/dev/null", O_RDONLY);	/* must not leak */
	sigset_t blk, old;
	DIR *d;
	struct dirent *de;
	pid_t pid;
	long sid;
	int nfd = 0;
	gb_error_t e;

	(void)state;
	snprintf(arg, sizeof(arg), "%d.%06d", 30, (int)(getpid() % 1000000));
	sigemptyset(&blk);
	sigaddset(&blk, SIGTERM);
	sigaddset(&blk, SIGCHLD);
	sigprocmask(SIG_BLOCK, &blk, &old);
	assert_int_equal(gb_spawn_detached(argv, &e), 0);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(extra_fd);
	pid = find_proc(sleep_bin, arg);
	assert_true(pid > 0);
	usleep(300000);		/* sleep(1) opens and closes locale files first */

	status = proc_file(pid, "status");
	assert_non_null(strstr(status, "SigBlk:\t0000000000000000"));
	assert_null(strstr(status, "SigIgn:\t0000000000000004"));
	{
		char want[32];

		snprintf(want, sizeof(want), "PPid:\t%d\n", (int)getpid());
		assert_null(strstr(status, want));	/* not our child */
	}
	free(status);
	stat_s = proc_file(pid, "stat");
	/* field 6 (after "pid (comm) state ppid pgrp") is the session */
	assert_int_equal(sscanf(strrchr(stat_s, ')') + 2, "%*c %*d %*d %ld", &sid), 1);
	assert_true(sid != (long)getsid(0));
	free(stat_s);

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	assert_non_null(d = opendir(path));
	while ((de = readdir(d))) {
		char fdpath[300];
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, de->d_name);
		n = readlink(fdpath, link, sizeof(link) - 1);
		if (n < 0 && errno == ENOENT)
			continue;	/* closed since readdir() */
		assert_true(n > 0);
		link[n] = '\0';
		nfd++;
		{
			long fd = -1;

			assert_int_equal(gb_parse_long(de->d_name, 0, 2, &fd), GB_E_OK);
		}
		assert_string_equal(link, "/dev/null");
	}
	closedir(d);
	assert_int_equal(nfd, 3);
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
	assert_true(readlink(path, link, sizeof(link) - 1) == 1);
	kill(pid, SIGKILL);
}

static int write_pid(void *arg)
{
	FILE *fp = fopen(arg, "w");

	if (!fp)
		return 1;
	fprintf(fp, "%d %d\n", (int)getpid(), (int)getsid(0));
	fclose(fp);
	return 0;
}

/* The function runs in a grandchild of its own session; we do not wait. */
static void test_detached_call(void **state)
{
	char dir[] = "/tmp/gb-spawn-XXXXXX", path[64], *text = NULL;
	gb_error_t e;
	int pid = 0, sid = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/pid", dir);
	assert_int_equal(gb_spawn_detached_call(write_pid, path, &e), GB_E_OK);
	for (int i = 0; i < 300 && sid == 0; i++) {
		free(text);
		text = NULL;
		if (gb_file_read(path, 1024, &text, NULL, NULL) != GB_E_OK ||
		    sscanf(text, "%d %d\n", &pid, &sid) != 2)
			sid = 0;
		if (sid == 0)
			usleep(10000);
	}
	assert_int_not_equal(sid, 0);
	assert_int_not_equal(pid, (int)getpid());
	assert_int_not_equal(sid, (int)getsid(0));	/* a session of its own */
	assert_int_not_equal(sid, pid);	/* not its leader: the intermediate was */
	free(text);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_run_fn),
		cmocka_unit_test(test_detached),
		cmocka_unit_test(test_detached_call),
	};

	return cmocka_run_group_tests_name("spawn", tests, NULL, NULL);
}
