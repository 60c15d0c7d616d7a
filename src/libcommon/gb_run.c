/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_run.c - run a program with a deadline, stdin from a string, stdout
 * and stderr captured
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gb_run.h"
#include "gb_util.h"

#define MAX_FD_CLOSE 65536
#define DEFAULT_MAX (64u << 10)

/* One output stream of the child. */
struct stream {
	int fd;
	struct gb_buf *buf;
	size_t max;
	bool *truncated;
};

struct child {
	pid_t pid;
	int in_fd;
	const char *input;
	size_t in_len, in_off;
	struct stream s[2];	/* stdout, stderr (fd -1 when merged) */
	bool exited;
	int status;
};

/* In the child: fds 0-2 are the pipes, everything else closed, clean signals. */
static void child_exec(const struct gb_run *r, int in_fd, int out_fd, int err_fd)
{
	static char *const path_only[] = { (char *)GB_RUN_PATH, NULL };
	long max = sysconf(_SC_OPEN_MAX);

	setpgid(0, 0);
	if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(126);
	if (max < 0 || max > MAX_FD_CLOSE)
		max = MAX_FD_CLOSE;
	for (int fd = 3; fd < max; fd++)
		close(fd);
	gb_signals_reset();
	execve(r->argv[0], r->argv, r->envp ? r->envp : path_only);
	_exit(127);
}

static void pump_output(struct stream *s)
{
	char buf[512];
	ssize_t got;

	while ((got = read(s->fd, buf, sizeof(buf))) > 0) {
		size_t room = 0;

		if (s->buf && s->buf->len < s->max)
			room = s->max - s->buf->len;
		if (s->buf && room)
			gb_buf_append(s->buf, buf, (size_t)got < room ? (size_t)got : room);
		if ((size_t)got > room && s->truncated)
			*s->truncated = true;
	}
	gb_memzero(buf, sizeof(buf));
	if (got == 0) {
		close(s->fd);
		s->fd = -1;
	}
}

static void pump_input(struct child *c)
{
	ssize_t put = 0;

	while (c->in_off < c->in_len) {
		put = write(c->in_fd, c->input + c->in_off, c->in_len - c->in_off);
		if (put <= 0)
			break;
		c->in_off += (size_t)put;
	}
	/* all written, or the reader is gone (EPIPE): stdin ends */
	if (c->in_off >= c->in_len || (put < 0 && errno != EAGAIN)) {
		close(c->in_fd);
		c->in_fd = -1;
	}
}

static bool streams_open(const struct child *c)
{
	return c->s[0].fd >= 0 || c->s[1].fd >= 0;
}

/* Wait for exit and output EOF until [deadline] (monotonic). */
static void supervise(struct child *c, double deadline)
{
	while (!(c->exited && !streams_open(c))) {
		struct pollfd p[3];
		nfds_t n = 0;
		double left = deadline - gb_time_mono();
		int wait_ms = left <= 0 ? 0 : left > 0.05 ? 50 : (int)(left * 1000);

		if (left <= 0)
			return;
		for (int i = 0; i < 2; i++) {
			if (c->s[i].fd >= 0)
				p[n++] = (struct pollfd){ c->s[i].fd, POLLIN, 0 };
		}
		if (c->in_fd >= 0)
			p[n++] = (struct pollfd){ c->in_fd, POLLOUT, 0 };
		if (poll(p, n, wait_ms) > 0) {
			for (int i = 0; i < 2; i++) {
				if (c->s[i].fd >= 0)
					pump_output(&c->s[i]);
			}
			if (c->in_fd >= 0)
				pump_input(c);
		}
		if (!c->exited && waitpid(c->pid, &c->status, WNOHANG) == c->pid)
			c->exited = true;
		/* A background grandchild may hold a pipe: do not wait for it. */
		for (int i = 0; c->exited && i < 2; i++) {
			if (c->s[i].fd < 0)
				continue;
			pump_output(&c->s[i]);
			if (c->s[i].fd >= 0) {
				close(c->s[i].fd);
				c->s[i].fd = -1;
			}
		}
	}
}

static int pipe_nb(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

gb_err_t gb_run(struct gb_run *r, gb_error_t *err)
{
	bool merged = r->err_out && r->err_out == r->out;
	struct child c = { .pid = -1, .in_fd = -1 };
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, eo[2] = { -1, -1 };
	sigset_t pipe_set, old;
	struct timespec zero = { 0, 0 };
	gb_err_t rc = GB_E_OK;

	r->status = -1;
	r->out_truncated = r->err_truncated = false;
	if (!r->argv || !r->argv[0] || r->argv[0][0] != '/')
		return gb_errorf(err, GB_E_INVALID,
				 "program to run must be an absolute path");
	c.input = r->input;
	c.in_len = r->input ? strlen(r->input) : 0;
	c.s[0] = (struct stream){ -1, r->out, r->out_max ? r->out_max : DEFAULT_MAX,
				  &r->out_truncated };
	c.s[1] = (struct stream){ -1, r->err_out, r->err_max ? r->err_max : DEFAULT_MAX,
				  &r->err_truncated };
	if (pipe_nb(in) < 0 || pipe_nb(out) < 0 || (!merged && pipe_nb(eo) < 0)) {
		rc = gb_errorf(err, GB_E_IO, "running %s: pipe: %s", r->argv[0],
			       strerror(errno));
		goto out;
	}
	/* EPIPE instead of a SIGPIPE when the program ignores its stdin */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	c.pid = fork();
	if (c.pid == 0) {
		/* the child needs blocking standard descriptors */
		fcntl(in[0], F_SETFL, 0);
		fcntl(out[1], F_SETFL, 0);
		if (!merged)
			fcntl(eo[1], F_SETFL, 0);
		child_exec(r, in[0], out[1], merged ? out[1] : eo[1]);
	}
	if (c.pid < 0) {
		rc = gb_errorf(err, GB_E_IO, "running %s: fork: %s", r->argv[0],
			       strerror(errno));
	} else {
		close_fd(&in[0]);
		close_fd(&out[1]);
		close_fd(&eo[1]);
		c.in_fd = in[1];
		c.s[0].fd = out[0];
		c.s[1].fd = eo[0];
		in[1] = out[0] = eo[0] = -1;
		pump_input(&c);
		supervise(&c, gb_time_mono() + r->timeout);
		if (!c.exited) {
			kill(-c.pid, SIGKILL);
			kill(c.pid, SIGKILL);
			waitpid(c.pid, &c.status, 0);
			rc = gb_errorf(err, GB_E_TIMEOUT,
				       "%s did not finish within %g s: killed",
				       r->argv[0], r->timeout);
		} else if (WIFEXITED(c.status)) {
			r->status = WEXITSTATUS(c.status);
			if (r->status == 127)
				rc = gb_errorf(err, GB_E_IO,
					       "%s could not be executed (exit 127)",
					       r->argv[0]);
		} else if (WIFSIGNALED(c.status)) {
			r->status = 128 + WTERMSIG(c.status);
		}
	}
	while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
out:
	for (int i = 0; i < 2; i++) {
		close_fd(&in[i]);
		close_fd(&out[i]);
		close_fd(&eo[i]);
	}
	close_fd(&c.in_fd);
	close_fd(&c.s[0].fd);
	close_fd(&c.s[1].fd);
	return rc;
}
