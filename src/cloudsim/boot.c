/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * boot.c - run UserData as an instance's boot script, stop it on terminate
 *
 * Everything the child needs (argv, envp, file descriptors) is prepared
 * before fork(); between fork() and execve() the child only makes
 * async-signal-safe calls, since the simulator is multi-threaded.  Events
 * are handled one at a time under the hook's mutex, so no other fork of
 * ours can inherit the user-data file while it is open for writing
 * (which would make the exec fail with ETXTBSY).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot.h"
#include "gb_log.h"
#include "gb_spawn.h"
#include "gb_str.h"
#include "gb_util.h"
#include "sim.h"

#define BOOT_PATH "PATH=/usr/sbin:/usr/bin:/sbin:/bin"
#define STOP_GRACE_S 2.0	/* SIGTERM, then SIGKILL, at exit */

struct child {
	char id[GB_SIM_ID_MAX];
	pid_t pid;		/* also the process group (setsid) */
	bool alive;
};

struct gb_boot {
	char *dir;
	pthread_mutex_t mu;
	struct child *kids;
	size_t n;
};

gb_err_t gb_boot_create(const char *dir, gb_boot_t **out, gb_error_t *err)
{
	gb_boot_t *b;
	gb_err_t rc;

	*out = NULL;
	if (!dir || !*dir)
		return gb_errorf(err, GB_E_INVALID, "boot: exec needs a boot directory");
	if ((rc = gb_mkdir_p(dir, 0700, err)))
		return rc;
	b = calloc(1, sizeof(*b));
	if (!b || !(b->dir = strdup(dir))) {
		free(b);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	pthread_mutex_init(&b->mu, NULL);
	*out = b;
	return GB_E_OK;
}

const char *gb_boot_dir(const gb_boot_t *b)
{
	return b->dir;
}

/*****************************************************************************
 *  Preparing the child
 *****************************************************************************/

/* GPUBURST_SIM_TAG_<KEY>=value with KEY upper-cased, [^A-Z0-9] -> '_'. */
static gb_err_t tag_env(const struct gb_sim_tag *t, struct gb_strv *env)
{
	struct gb_buf b = GB_BUF_INIT;
	gb_err_t rc;

	gb_buf_puts(&b, "GPUBURST_SIM_TAG_");
	for (const char *k = t->key; *k; k++) {
		char c = (*k >= 'a' && *k <= 'z') ? (char)(*k - 'a' + 'A') : *k;

		gb_buf_putc(&b, (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_');
	}
	gb_buf_printf(&b, "=%s", t->value);
	rc = gb_buf_failed(&b) ? GB_E_NOMEM : gb_strv_add(env, gb_buf_str(&b));
	gb_buf_free(&b);
	return rc;
}

static gb_err_t build_env(const struct gb_sim_event *ev, struct gb_strv *env)
{
	const char *names[] = { "GPUBURST_SIM_INSTANCE_ID", "GPUBURST_SIM_PRIVATE_IP",
				"GPUBURST_SIM_REGION", "GPUBURST_SIM_AZ",
				"GPUBURST_SIM_INSTANCE_TYPE" };
	const char *values[] = { ev->id, ev->ip, ev->region, ev->az,
				 ev->instance_type ? ev->instance_type : "" };
	char line[512];

	if (gb_strv_add(env, BOOT_PATH))
		return GB_E_NOMEM;
	/* EC2's ami-launch-index: which of a reservation's instances this is,
	 * so one UserData can name a node per instance (doc/orchestrator.md). */
	snprintf(line, sizeof(line), "GPUBURST_SIM_AMI_LAUNCH_INDEX=%d",
		 ev->launch_index);
	if (gb_strv_add(env, line))
		return GB_E_NOMEM;
	for (size_t i = 0; i < GB_ARRAY_LEN(names); i++) {
		snprintf(line, sizeof(line), "%s=%s", names[i], values[i]);
		if (gb_strv_add(env, line))
			return GB_E_NOMEM;
	}
	for (size_t i = 0; i < ev->ntags; i++) {
		if (tag_env(&ev->tags[i], env))
			return GB_E_NOMEM;
	}
	return GB_E_OK;
}

static gb_err_t write_script(const char *path, const struct gb_sim_event *ev,
			     gb_error_t *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0700);
	size_t off = 0;

	if (fd < 0)
		return gb_errorf(err, GB_E_IO, "cannot create %s: %s", path, strerror(errno));
	while (off < ev->user_data_len) {
		ssize_t w = write(fd, ev->user_data + off, ev->user_data_len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return gb_errorf(err, GB_E_IO, "cannot write %s: %s", path,
					 strerror(errno));
		}
		off += (size_t)w;
	}
	if (fchmod(fd, 0700) != 0 || close(fd) != 0)
		return gb_errorf(err, GB_E_IO, "cannot write %s: %s", path, strerror(errno));
	return GB_E_OK;
}

/* In the child: new session, stdio, clean signals, then the script. */
static void child_exec(const char *script, const char *dir, int in, int log,
		       char **envp)
{
	static const char msg[] = "gpuburst-cloudsim: cannot execute user-data (it must start with #!)\n";
	char *argv[] = { (char *)script, NULL };

	(void)setsid();
	if (dup2(in, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0)
		_exit(127);
	gb_spawn_close_from_3();
	gb_signals_reset();
	if (chdir(dir) != 0)
		_exit(127);
	execve(script, argv, envp);
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(127);
}

/*****************************************************************************
 *  Starting, stopping, reaping
 *****************************************************************************/

static struct child *find_child(gb_boot_t *b, const char *id)
{
	for (size_t i = 0; i < b->n; i++) {
		if (b->kids[i].alive && strcmp(b->kids[i].id, id) == 0)
			return &b->kids[i];
	}
	return NULL;
}

static gb_err_t add_child(gb_boot_t *b, const char *id, pid_t pid)
{
	struct child *k = realloc(b->kids, (b->n + 1) * sizeof(*k));

	if (!k)
		return GB_E_NOMEM;
	b->kids = k;
	gb_strlcpy(k[b->n].id, id, sizeof(k[b->n].id));
	k[b->n].pid = pid;
	k[b->n++].alive = true;
	return GB_E_OK;
}

struct paths {
	char dir[4096], script[4200], log[4200];
};

static gb_err_t spawn(gb_boot_t *b, const struct gb_sim_event *ev,
		      const struct paths *p, char **envp, gb_error_t *err)
{
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int log = open(p->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	gb_err_t rc = GB_E_OK;
	pid_t pid = -1;

	if (in < 0 || log < 0) {
		rc = gb_errorf(err, GB_E_IO, "cannot open %s: %s", in < 0 ? "/dev/null" : p->log,
			       strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid == 0)
		child_exec(p->script, p->dir, in, log, envp);
	if (pid < 0) {
		rc = gb_errorf(err, GB_E_IO, "fork: %s", strerror(errno));
		goto out;
	}
	if (add_child(b, ev->id, pid)) {
		kill(-pid, SIGTERM);	/* cannot track it: do not leave it behind */
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	gb_log_info("boot started instance=%s pid=%ld ip=%s log=%s", ev->id, (long)pid,
		    ev->ip, p->log);
out:
	if (in >= 0)
		close(in);
	if (log >= 0)
		close(log);
	return rc;
}

static gb_err_t boot_start(gb_boot_t *b, const struct gb_sim_event *ev, gb_error_t *err)
{
	struct gb_strv env = { 0 };
	struct paths p;
	gb_err_t rc;

	if (!ev->user_data || !ev->user_data_len) {
		gb_log_info("boot skipped instance=%s reason=no-user-data", ev->id);
		return GB_E_OK;
	}
	snprintf(p.dir, sizeof(p.dir), "%s/%s", b->dir, ev->id);
	snprintf(p.script, sizeof(p.script), "%s/user-data", p.dir);
	snprintf(p.log, sizeof(p.log), "%s/boot.log", p.dir);
	if ((rc = gb_mkdir_p(p.dir, 0700, err)) || (rc = write_script(p.script, ev, err)))
		return rc;
	if (build_env(ev, &env)) {
		gb_strv_free(&env);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	rc = spawn(b, ev, &p, env.v, err);
	gb_strv_free(&env);
	return rc;
}

static void boot_stop(gb_boot_t *b, const struct gb_sim_event *ev)
{
	struct child *k = find_child(b, ev->id);

	if (!k)
		return;
	if (kill(-k->pid, SIGTERM) == 0)
		gb_log_info("boot stopping instance=%s pgid=%ld signal=TERM", ev->id,
			    (long)k->pid);
}

gb_err_t gb_boot_event(gb_boot_t *b, const struct gb_sim_event *ev, gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;

	pthread_mutex_lock(&b->mu);
	if (ev->kind == GB_SIM_EVENT_RUNNING && !find_child(b, ev->id))
		rc = boot_start(b, ev, err);
	else if (ev->kind == GB_SIM_EVENT_SHUTTING_DOWN)
		boot_stop(b, ev);
	pthread_mutex_unlock(&b->mu);
	return rc;
}

static size_t reap_locked(gb_boot_t *b)
{
	size_t n = 0;

	for (size_t i = 0; i < b->n; i++) {
		int st;

		if (!b->kids[i].alive || waitpid(b->kids[i].pid, &st, WNOHANG) <= 0)
			continue;
		b->kids[i].alive = false;
		n++;
		if (WIFEXITED(st))
			gb_log_info("boot exited instance=%s pid=%ld status=%d", b->kids[i].id,
				    (long)b->kids[i].pid, WEXITSTATUS(st));
		else
			gb_log_info("boot exited instance=%s pid=%ld signal=%d", b->kids[i].id,
				    (long)b->kids[i].pid, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	}
	/* forget the dead so the table does not grow without bound */
	for (size_t i = 0; i < b->n;) {
		if (!b->kids[i].alive)
			b->kids[i] = b->kids[--b->n];
		else
			i++;
	}
	return n;
}

size_t gb_boot_reap(gb_boot_t *b)
{
	size_t n;

	pthread_mutex_lock(&b->mu);
	n = reap_locked(b);
	pthread_mutex_unlock(&b->mu);
	return n;
}

pid_t gb_boot_pid(gb_boot_t *b, const char *instance_id)
{
	struct child *k;
	pid_t pid;

	pthread_mutex_lock(&b->mu);
	k = find_child(b, instance_id);
	pid = k ? k->pid : 0;
	pthread_mutex_unlock(&b->mu);
	return pid;
}

/* SIGTERM every group, wait a little, then SIGKILL what is left. */
static void stop_all(gb_boot_t *b)
{
	double until = gb_time_mono() + STOP_GRACE_S;

	for (size_t i = 0; i < b->n; i++)
		(void)kill(-b->kids[i].pid, SIGTERM);
	while (b->n && gb_time_mono() < until) {
		reap_locked(b);
		if (b->n)
			usleep(20000);
	}
	for (size_t i = 0; i < b->n; i++) {
		gb_log_warn("boot killed instance=%s pgid=%ld signal=KILL", b->kids[i].id,
			    (long)b->kids[i].pid);
		(void)kill(-b->kids[i].pid, SIGKILL);
		(void)waitpid(b->kids[i].pid, NULL, 0);
	}
	b->n = 0;
}

void gb_boot_destroy(gb_boot_t *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&b->mu);
	stop_all(b);
	pthread_mutex_unlock(&b->mu);
	pthread_mutex_destroy(&b->mu);
	free(b->kids);
	free(b->dir);
	free(b);
}
