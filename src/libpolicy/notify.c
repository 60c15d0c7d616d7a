/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * notify.c - run policy.approval_notify: argv, no shell, JSON on stdin,
 * bounded, never in the way of the resume fast path
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "gb_log.h"
#include "gb_policy.h"
#include "gb_util.h"

#define NOTIFY_PATH "PATH=/usr/sbin:/usr/bin:/sbin:/bin"
#define MAX_FD_CLOSE 65536

/*****************************************************************************
 *  The document
 *****************************************************************************/

static json_t *jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *jtime(double t)
{
	char iso[32];

	return t > 0 ? json_string(gb_time_iso(t, iso, sizeof(iso))) : json_null();
}

gb_err_t gb_policy_notify_json(const struct gb_conf *conf,
			       const struct gb_request *req, const char *why,
			       double expires_at, char **out, gb_error_t *err)
{
	json_t *o = json_object();
	char cmd[128];

	*out = NULL;
	if (!o)
		return gb_errorf(err, GB_E_NOMEM, "notify: out of memory");
	json_object_set_new(o, "event", json_string("approval_needed"));
	json_object_set_new(o, "cluster", jstr(conf->cluster_name));
	json_object_set_new(o, "environment",
			    json_string(gb_conf_env_name(conf->environment)));
	json_object_set_new(o, "request_id", json_string(req->id));
	json_object_set_new(o, "kind", json_string(gb_request_kind_name(req->kind)));
	json_object_set_new(o, "nodeset", jstr(req->nodeset));
	json_object_set_new(o, "job_id", req->job_id ? json_integer(req->job_id)
						     : json_null());
	json_object_set_new(o, "nodes", jstr(req->nodes));
	json_object_set_new(o, "node_count", json_integer(req->node_count));
	json_object_set_new(o, "instance_type", jstr(req->instance_type));
	json_object_set_new(o, "home_region", jstr(req->home_region));
	json_object_set_new(o, "why", jstr(why));
	json_object_set_new(o, "requested_at", jtime(req->created_at));
	json_object_set_new(o, "expires_at", jtime(expires_at));
	snprintf(cmd, sizeof(cmd), "gpuburstctl approve %s", req->id);
	json_object_set_new(o, "approve", json_string(cmd));
	snprintf(cmd, sizeof(cmd), "gpuburstctl deny %s --reason TEXT", req->id);
	json_object_set_new(o, "deny", json_string(cmd));
	*out = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (!*out)
		return gb_errorf(err, GB_E_NOMEM, "notify: out of memory");
	return GB_E_OK;
}

/*****************************************************************************
 *  Running a program with a deadline
 *****************************************************************************/

/* In the child: fds 0-2 are the pipes, everything else closed, clean signals. */
static void child_exec(char *const *argv, int in_fd, int out_fd)
{
	char *const envp[] = { (char *)NOTIFY_PATH, NULL };
	long max = sysconf(_SC_OPEN_MAX);

	setpgid(0, 0);
	if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
		_exit(126);
	if (max < 0 || max > MAX_FD_CLOSE)
		max = MAX_FD_CLOSE;
	for (int fd = 3; fd < max; fd++)
		close(fd);
	gb_signals_reset();
	execve(argv[0], argv, envp);
	_exit(127);
}

struct run {
	pid_t pid;
	int in_fd, out_fd;
	const char *input;
	size_t in_len, in_off;
	struct gb_buf *output;
	bool exited;
	int status;
};

static void pump_output(struct run *r)
{
	char buf[512];
	ssize_t got;

	while ((got = read(r->out_fd, buf, sizeof(buf))) > 0) {
		if (r->output && r->output->len < GB_POLICY_NOTIFY_OUTPUT_MAX) {
			size_t room = GB_POLICY_NOTIFY_OUTPUT_MAX - r->output->len;

			gb_buf_append(r->output, buf,
				      (size_t)got < room ? (size_t)got : room);
		}
	}
	if (got == 0) {
		close(r->out_fd);
		r->out_fd = -1;
	}
}

static void pump_input(struct run *r)
{
	ssize_t put = 0;

	while (r->in_off < r->in_len) {
		put = write(r->in_fd, r->input + r->in_off, r->in_len - r->in_off);
		if (put <= 0)
			break;
		r->in_off += (size_t)put;
	}
	/* all written, or the reader is gone (EPIPE): stdin ends */
	if (r->in_off >= r->in_len || (put < 0 && errno != EAGAIN)) {
		close(r->in_fd);
		r->in_fd = -1;
	}
}

/* Wait for exit and output EOF until [deadline] (monotonic). */
static void supervise(struct run *r, double deadline)
{
	while (!(r->exited && r->out_fd < 0)) {
		struct pollfd p[2];
		nfds_t n = 0;
		double left = deadline - gb_time_mono();
		int wait_ms = left <= 0 ? 0 : left > 0.05 ? 50 : (int)(left * 1000);

		if (left <= 0)
			return;
		if (r->out_fd >= 0)
			p[n++] = (struct pollfd){ r->out_fd, POLLIN, 0 };
		if (r->in_fd >= 0)
			p[n++] = (struct pollfd){ r->in_fd, POLLOUT, 0 };
		if (poll(p, n, wait_ms) > 0) {
			if (r->out_fd >= 0)
				pump_output(r);
			if (r->in_fd >= 0)
				pump_input(r);
		}
		if (!r->exited && waitpid(r->pid, &r->status, WNOHANG) == r->pid)
			r->exited = true;
		/* A background grandchild may hold the pipe: do not wait for it. */
		if (r->exited && r->out_fd >= 0) {
			pump_output(r);
			if (r->out_fd >= 0) {
				close(r->out_fd);
				r->out_fd = -1;
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

gb_err_t gb_policy_run(char *const *argv, const char *input, double timeout,
		       int *status, struct gb_buf *output, gb_error_t *err)
{
	struct run r = { -1, -1, -1, input, input ? strlen(input) : 0, 0,
			 output, false, 0 };
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };
	sigset_t pipe_set, old;
	struct timespec zero = { 0, 0 };
	gb_err_t rc = GB_E_OK;

	*status = -1;
	if (!argv || !argv[0] || argv[0][0] != '/')
		return gb_errorf(err, GB_E_INVALID,
				 "program to run must be an absolute path");
	if (pipe_nb(in) < 0 || pipe_nb(out) < 0) {
		rc = gb_errorf(err, GB_E_IO, "running %s: pipe: %s", argv[0],
			       strerror(errno));
		goto out;
	}
	/* EPIPE instead of a SIGPIPE when the program ignores its stdin */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	r.pid = fork();
	if (r.pid == 0) {
		/* the child needs a blocking stdin and stdout */
		fcntl(in[0], F_SETFL, 0);
		fcntl(out[1], F_SETFL, 0);
		child_exec(argv, in[0], out[1]);
	}
	if (r.pid < 0) {
		rc = gb_errorf(err, GB_E_IO, "running %s: fork: %s", argv[0],
			       strerror(errno));
	} else {
		close(in[0]);
		close(out[1]);
		in[0] = out[1] = -1;
		r.in_fd = in[1];
		r.out_fd = out[0];
		in[1] = out[0] = -1;
		pump_input(&r);
		supervise(&r, gb_time_mono() + timeout);
		if (!r.exited) {
			kill(-r.pid, SIGKILL);
			kill(r.pid, SIGKILL);
			waitpid(r.pid, &r.status, 0);
			rc = gb_errorf(err, GB_E_TIMEOUT,
				       "%s did not finish within %.0f s: killed",
				       argv[0], timeout);
		} else if (WIFEXITED(r.status)) {
			*status = WEXITSTATUS(r.status);
			if (*status == 127)
				rc = gb_errorf(err, GB_E_IO,
					       "%s could not be executed (exit 127)",
					       argv[0]);
		} else if (WIFSIGNALED(r.status)) {
			*status = 128 + WTERMSIG(r.status);
		}
	}
	while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
out:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	if (r.in_fd >= 0)
		close(r.in_fd);
	if (r.out_fd >= 0)
		close(r.out_fd);
	return rc;
}

/*****************************************************************************
 *  Detached notification
 *****************************************************************************/

static void detach_stdio(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return;
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
}

static gb_err_t notify_doc(const struct gb_conf *conf, const char *id,
			   const char *doc, gb_error_t *err)
{
	struct gb_buf output = GB_BUF_INIT;
	char q[GB_POLICY_NOTIFY_OUTPUT_MAX * 2 + 8];
	double t0 = gb_time_mono();
	gb_error_t e = { 0 };
	int status = -1;
	gb_err_t rc;

	rc = gb_policy_run(conf->policy.approval_notify, doc,
			   GB_POLICY_NOTIFY_TIMEOUT, &status, &output, &e);
	gb_buf_putc(&output, '\0');
	if (rc == GB_E_OK && status == 0) {
		gb_log_info("approval_notify req=%s status=0 elapsed=%.3f", id,
			    gb_time_mono() - t0);
	} else {
		gb_log_error("approval_notify req=%s status=%d elapsed=%.3f error=%s output=%s",
			     id, status, gb_time_mono() - t0,
			     gb_log_q(q, sizeof(q) / 2, rc ? e.text : "non-zero exit"),
			     gb_log_q(q + sizeof(q) / 2, sizeof(q) / 2,
				      gb_buf_str(&output)));
		if (rc == GB_E_OK)
			rc = gb_errorf(&e, GB_E_IO, "%s exited with status %d",
				       conf->policy.approval_notify[0], status);
		if (err)
			*err = e;
	}
	gb_buf_free(&output);
	return rc;
}

gb_err_t gb_policy_notify_run(const struct gb_conf *conf,
			      const struct gb_request *req, const char *why,
			      double expires_at, gb_error_t *err)
{
	char *doc = NULL;
	gb_err_t rc;

	if (!conf->policy.approval_notify || !conf->policy.approval_notify[0])
		return GB_E_OK;
	rc = gb_policy_notify_json(conf, req, why, expires_at, &doc, err);
	if (rc == GB_E_OK)
		rc = notify_doc(conf, req->id, doc, err);
	free(doc);
	return rc;
}

gb_err_t gb_policy_notify_spawn(const struct gb_conf *conf,
				const struct gb_request *req, const char *why,
				double expires_at, gb_error_t *err)
{
	char *doc = NULL;
	pid_t pid;
	int st;
	gb_err_t rc;

	if (!conf->policy.approval_notify || !conf->policy.approval_notify[0])
		return GB_E_OK;
	rc = gb_policy_notify_json(conf, req, why, expires_at, &doc, err);
	if (rc)
		return rc;
	pid = fork();
	if (pid == 0) {
		/* the child: a new session, then the grandchild does the work */
		setsid();
		detach_stdio();
		if (fork() == 0)
			_exit(notify_doc(conf, req->id, doc, NULL) ? 1 : 0);
		_exit(0);
	}
	free(doc);
	if (pid < 0) {
		rc = gb_errorf(err, GB_E_IO, "notify: fork: %s", strerror(errno));
		gb_log_error("approval_notify req=%s error=fork: %s", req->id,
			     strerror(errno));
		return rc;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return GB_E_OK;
}
