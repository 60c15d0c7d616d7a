/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * resume-bench.c - driver for bench/resume/run.sh
 *
 *   resume-bench prefill DB N          N historical (terminated) instance
 *                                      rows, N/100 requests, through libstate
 *   resume-bench hold LOCKFILE -- CMD  run CMD while holding the worker lock,
 *                                      and 1 s more: the worker CMD starts
 *                                      must find it taken
 *   resume-bench time RUNS -- CMD...   exec CMD RUNS times: wall time from
 *                                      fork to its exit, median/p90/min/max,
 *                                      the mean of the first and last three
 *   resume-bench cpu -- CMD...         exec CMD once: wall, user and system
 *                                      CPU seconds of it and its threads
 *
 * Timing is taken here, around fork/exec/wait, so no shell start-up is
 * counted.  Between runs it waits 50 ms (untimed) so that the worker each
 * run starts (which finds the lock held and exits) does not share the CPU
 * with the next run.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gb_state.h"
#include "gb_str.h"
#include "gb_util.h"

static int usage(void)
{
	fprintf(stderr, "usage: resume-bench prefill DB N\n"
			"       resume-bench hold LOCKFILE -- CMD...\n"
			"       resume-bench time RUNS -- CMD...\n"
			"       resume-bench cpu -- CMD...\n");
	return 2;
}

static int prefill(const char *db, long n)
{
	static const char *const regions[] = { "ap-south-1", "ap-northeast-1", "ap-northeast-2" };
	char req[GB_REQUEST_ID_LEN + 1] = "", iid[32], ip[32], node[32];
	gb_state_t *st = NULL;
	double t0 = gb_time_now() - 86400.0 * 30;
	gb_error_t e;

	if (gb_state_open(db, 0, 30000, &st, &e) || gb_state_tx_begin(st, &e))
		goto err;
	for (long i = 0; i < n; i++) {
		struct gb_instance in = { 0 };

		if (i % 100 == 0) {
			struct gb_request r = { 0 };

			r.kind = GB_REQ_RESUME;
			r.state = GB_RSTATE_QUEUED;
			r.nodeset = "g5";
			r.job_id = i / 100 + 1;
			snprintf(node, sizeof(node), "g5-[%ld-%ld]", i % 10000 + 1, i % 10000 + 100);
			r.nodes = node;
			r.node_count = 100;
			r.instance_type = "g5.xlarge";
			r.home_region = "ap-southeast-1";
			if (gb_state_request_add(st, &r, &e))
				goto err;
			memcpy(req, r.id, sizeof(req));
		}
		snprintf(iid, sizeof(iid), "i-%017lx", 0x1000000UL + (unsigned long)i);
		snprintf(ip, sizeof(ip), "10.%ld.%ld.%ld", (i >> 16) & 255, (i >> 8) & 255, i & 255);
		snprintf(node, sizeof(node), "g5-%ld", i % 10000 + 1);
		in.request_id = req;
		in.region = regions[i % 3];
		in.instance_id = iid;
		in.node = node;
		in.az = "a";
		in.instance_type = "g5.xlarge";
		in.private_ip = ip;
		in.state = GB_INST_TERMINATED;
		in.launched_at = t0 + (double)i * 20;
		in.terminated_at = t0 + (double)i * 20 + 3600;
		in.reason = "suspended by Slurm (SuspendProgram)";
		if (gb_state_instance_add(st, &in, &e))
			goto err;
	}
	if (gb_state_tx_commit(st, &e))
		goto err;
	gb_state_close(st);
	printf("prefilled %s: %ld instance rows, %ld requests\n", db, n, (n + 99) / 100);
	return 0;
err:
	fprintf(stderr, "resume-bench: %s\n", e.text);
	gb_state_close(st);
	return 1;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One run; RET wall seconds, *ru the child's usage, *status its status. */
static double run_once(char **argv, struct rusage *ru, int *status)
{
	double t0 = mono();
	pid_t pid = fork();

	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, status, 0, ru) != pid) {
		perror("resume-bench: fork/wait");
		exit(1);
	}
	return mono() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int time_runs(long runs, char **argv)
{
	double *v = calloc((size_t)runs, sizeof(*v)), first = 0, last = 0;
	struct rusage ru;
	int status;
	long k;

	if (!v)
		return 1;
	for (long i = 0; i < runs; i++) {
		v[i] = run_once(argv, &ru, &status) * 1000.0;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "resume-bench: %s exited with %d\n", argv[0],
				WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			return 1;
		}
		usleep(50000);
	}
	/* the runs re-resume the same jobs: the first and last three in
	 * order show whether that grows with the rows it leaves */
	k = runs < 3 ? runs : 3;
	for (long i = 0; i < k; i++) {
		first += v[i] / (double)k;
		last += v[runs - k + i] / (double)k;
	}
	qsort(v, (size_t)runs, sizeof(*v), cmp_double);
	printf("runs=%ld median_ms=%.2f p90_ms=%.2f min_ms=%.2f max_ms=%.2f first3_ms=%.2f last3_ms=%.2f\n",
	       runs, runs % 2 ? v[runs / 2] : (v[runs / 2 - 1] + v[runs / 2]) / 2,
	       v[(size_t)((double)(runs - 1) * 0.9)], v[0], v[runs - 1], first, last);
	free(v);
	return 0;
}

static int cpu_run(char **argv)
{
	struct rusage ru;
	int status;
	double wall = run_once(argv, &ru, &status);

	printf("wall_s=%.3f user_s=%.3f sys_s=%.3f cpu_s=%.3f exit=%d\n", wall,
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}

static int hold(const char *lock, char **argv)
{
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0640), status;
	struct rusage ru;

	if (fd < 0 || flock(fd, LOCK_EX) != 0) {
		perror(lock);
		return 1;
	}
	run_once(argv, &ru, &status);
	sleep(1);	/* the detached worker is still starting */
	close(fd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	long n;

	if (argc >= 4 && strcmp(argv[1], "prefill") == 0 &&
	    gb_parse_long(argv[3], 0, 100000000, &n) == GB_E_OK)
		return prefill(argv[2], n);
	if (argc >= 5 && strcmp(argv[1], "hold") == 0 && strcmp(argv[3], "--") == 0)
		return hold(argv[2], argv + 4);
	if (argc >= 5 && strcmp(argv[1], "time") == 0 && strcmp(argv[3], "--") == 0 &&
	    gb_parse_long(argv[2], 1, 100000, &n) == GB_E_OK)
		return time_runs(n, argv + 4);
	if (argc >= 4 && strcmp(argv[1], "cpu") == 0 && strcmp(argv[2], "--") == 0)
		return cpu_run(argv + 3);
	return usage();
}
