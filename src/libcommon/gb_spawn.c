/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_spawn.c - run a program with a deadline, stdin from a string, stdout
 * and stderr captured; start one detached (double fork)
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gb_spawn.h"
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

void gb_spawn_close_from_3(void)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0)
		return;
#endif
	for (int fd = 3; fd < MAX_FD_CLOSE; fd++)
		(void)close(fd);
}

/* The pipes of one run: [0] read end, [1] write end; -1 when closed. */
struct pipes {
	int in[2], out[2], eo[2];
};

/*
 * In the child: fds 0-2 are the pipes, clean signals, then argv with every
 * other descriptor closed, or fn with the parent's ends of the pipes
 * closed (else its stdin would never end).
 */
static void child_start(const struct gb_spawn *r, const struct pipes *p, bool merged)
{
	static char *const path_only[] = { (char *)GB_SPAWN_PATH, NULL };
	int err_fd = r->err_inherit ? 2 : merged ? p->out[1] : p->eo[1];

	setpgid(0, 0);
	/* the child needs blocking standard descriptors */
	fcntl(p->in[0], F_SETFL, 0);
	fcntl(p->out[1], F_SETFL, 0);
	if (err_fd != 2)
		fcntl(err_fd, F_SETFL, 0);
	if (dup2(p->in[0], 0) < 0 || dup2(p->out[1], 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(126);
	gb_signals_reset();
	if (r->fn) {
		const int fds[] = { p->in[0], p->in[1], p->out[0], p->out[1], p->eo[0],
				    p->eo[1] };

		for (size_t i = 0; i < GB_ARRAY_LEN(fds); i++) {
			if (fds[i] > 2)
				close(fds[i]);
		}
		_exit(r->fn(r->arg));
	}
	gb_spawn_close_from_3();
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

static const char *what(const struct gb_spawn *r)
{
	return r->fn ? "child" : r->argv[0];
}

/* The parent after fork(): feed, collect, wait or kill at the deadline. */
static gb_err_t supervise_child(struct gb_spawn *r, struct child *c, struct pipes *p,
				gb_error_t *err)
{
	close_fd(&p->in[0]);
	close_fd(&p->out[1]);
	close_fd(&p->eo[1]);
	c->in_fd = p->in[1];
	c->s[0].fd = p->out[0];
	c->s[1].fd = p->eo[0];
	p->in[1] = p->out[0] = p->eo[0] = -1;
	pump_input(c);
	supervise(c, gb_time_mono() + r->timeout);
	if (!c->exited) {
		kill(-c->pid, SIGKILL);
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &c->status, 0);
		return gb_errorf(err, GB_E_TIMEOUT, "%s did not finish within %g s: killed",
				 what(r), r->timeout);
	}
	if (WIFEXITED(c->status)) {
		r->status = WEXITSTATUS(c->status);
		if (r->status == 127 && !r->fn)
			return gb_errorf(err, GB_E_IO, "%s could not be executed (exit 127)",
					 r->argv[0]);
	} else if (WIFSIGNALED(c->status)) {
		r->status = 128 + WTERMSIG(c->status);
	}
	return GB_E_OK;
}

/* Fork with SIGPIPE blocked (EPIPE instead when it ignores its stdin). */
static gb_err_t fork_and_supervise(struct gb_spawn *r, struct child *c, struct pipes *p,
				   bool merged, gb_error_t *err)
{
	sigset_t pipe_set, old;
	struct timespec zero = { 0, 0 };
	gb_err_t rc;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	c->pid = fork();
	if (c->pid == 0)
		child_start(r, p, merged);
	if (c->pid < 0)
		rc = gb_errorf(err, GB_E_IO, "running %s: fork: %s", what(r), strerror(errno));
	else
		rc = supervise_child(r, c, p, err);
	while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

gb_err_t gb_spawn_run(struct gb_spawn *r, gb_error_t *err)
{
	bool merged = !r->err_inherit && r->err_out && r->err_out == r->out;
	struct child c = { .pid = -1, .in_fd = -1 };
	struct pipes p = { { -1, -1 }, { -1, -1 }, { -1, -1 } };
	gb_err_t rc;

	r->status = -1;
	r->out_truncated = r->err_truncated = false;
	if (!r->fn && (!r->argv || !r->argv[0] || r->argv[0][0] != '/'))
		return gb_errorf(err, GB_E_INVALID,
				 "program to run must be an absolute path");
	c.input = r->input;
	c.in_len = r->input ? strlen(r->input) : 0;
	c.s[0] = (struct stream){ -1, r->out, r->out_max ? r->out_max : DEFAULT_MAX,
				  &r->out_truncated };
	c.s[1] = (struct stream){ -1, r->err_out, r->err_max ? r->err_max : DEFAULT_MAX,
				  &r->err_truncated };
	if (pipe_nb(p.in) < 0 || pipe_nb(p.out) < 0 ||
	    (!merged && !r->err_inherit && pipe_nb(p.eo) < 0)) {
		rc = gb_errorf(err, GB_E_IO, "running %s: pipe: %s", what(r), strerror(errno));
		goto out;
	}
	rc = fork_and_supervise(r, &c, &p, merged, err);
out:
	for (int i = 0; i < 2; i++) {
		close_fd(&p.in[i]);
		close_fd(&p.out[i]);
		close_fd(&p.eo[i]);
	}
	close_fd(&c.in_fd);
	close_fd(&c.s[0].fd);
	close_fd(&c.s[1].fd);
	return rc;
}

/*****************************************************************************
 *  Detached (the double fork)
 *****************************************************************************/

struct detach {
	char *const *argv;		/* or: */
	int (*fn)(void *arg);
	void *arg;
};

/* In the grandchild: only async-signal-safe calls until execv(). */
static void grandchild(const struct detach *d, int devnull)
{
	if (dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0)
		_exit(126);
	if (devnull > 2)
		close(devnull);
	if (d->fn)
		_exit(d->fn(d->arg));
	gb_spawn_close_from_3();
	gb_signals_reset();
	if (chdir("/") != 0)
		_exit(126);
	execv(d->argv[0], d->argv);
	_exit(127);
}

static gb_err_t detach(const struct detach *d, const char *name, gb_error_t *err)
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
			grandchild(d, devnull);
		_exit(pid < 0 ? 124 : 0);
	}
	close(devnull);
	if (pid < 0)
		return gb_errorf(err, GB_E_IO, "starting %s: fork: %s", name, strerror(errno));
	do {
		w = waitpid(pid, &status, 0);
	} while (w < 0 && errno == EINTR);
	if (w < 0 && errno == ECHILD)
		return GB_E_OK;		/* SIGCHLD ignored: reaped for us */
	if (w < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return gb_errorf(err, GB_E_IO, "starting %s: intermediate child %s %d",
				 name, w < 0 ? "lost" : "exited",
				 w < 0 ? errno : WEXITSTATUS(status));
	return GB_E_OK;
}

gb_err_t gb_spawn_detached(char *const *argv, gb_error_t *err)
{
	struct detach d = { .argv = argv };

	return detach(&d, argv[0], err);
}

gb_err_t gb_spawn_detached_call(int (*fn)(void *arg), void *arg, gb_error_t *err)
{
	struct detach d = { .fn = fn, .arg = arg };

	return detach(&d, "detached child", err);
}
