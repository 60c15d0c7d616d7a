/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job_submit_gpuburst.c - Slurm job_submit/gpuburst: route and guard GPU jobs
 *
 * NOTE: enable with JobSubmitPlugins=gpuburst in slurm.conf.  The plugin
 * reads gpuburst.yaml ($GPUBURST_CONF in slurmctld's environment, else
 * gpuburst.yaml next to slurm.conf, else the compiled-in default) in init()
 * and again after `scontrol reconfigure`: from 23.11 that is a new
 * slurmctld calling init(), before it the plugin's reload thread (see "The
 * reload thread" below).  doc/job_submit_gpuburst.md describes what it
 * does to jobs; route.c decides, this file only talks to Slurm.
 *
 * Built against <slurm/slurm.h> only: slurmctld's libslurmfull provides
 * the slurm_* functions below when it dlopen()s the plugin, which is why
 * the plugin must be built for exactly the Slurm that loads it.  Strings
 * handed to slurmctld (err_msg, job fields) come from Slurm's allocator,
 * because slurmctld xfree()s them.
 *
 * slurmctld calls job_submit()/job_modify() with its config, job, node and
 * partition locks held (and, in 22.05, one plugin call at a time): they do
 * no file-system I/O and never wait for anything but js_mutex, which is
 * only ever held for work on memory.  The configuration pointer is guarded
 * by js_mutex, since init(), fini() and the reload thread replace it.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "gb_conf.h"
#include "gb_log.h"
#include "gb_slurm_release.h"
#include "gb_str.h"
#include "route.h"

#define PUBLIC __attribute__((visibility("default")))

/* From libslurmfull (src/common/slurm_xlator.h names), resolved at dlopen. */
extern void slurm_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern void slurm_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern void slurm_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern char *slurm_xstrdup(const char *str);
extern char *slurm_xstrdup_printf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
extern void slurm_xfree(void **p);
/* slurmctld's parsed slurm.conf; read under its config lock (held here). */
extern slurm_conf_t slurm_conf;

/* Required Slurm plugin symbols: */
PUBLIC const char plugin_name[] = "gpuburst job submit plugin";
PUBLIC const char plugin_type[] = "job_submit/gpuburst";
PUBLIC const uint32_t plugin_version = SLURM_VERSION_NUMBER;

PUBLIC int init(void);
PUBLIC int fini(void);
PUBLIC int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid,
		      char **err_msg);
/* 22.05 calls job_modify() without err_msg; 23.02 added it. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#define GB_MODIFY_HAS_ERR_MSG 1
PUBLIC int job_modify(job_desc_msg_t *job_desc, void *job_ptr,
		      uint32_t submit_uid, char **err_msg);
#else
#define GB_MODIFY_HAS_ERR_MSG 0
PUBLIC int job_modify(job_desc_msg_t *job_desc, void *job_ptr,
		      uint32_t submit_uid);
#endif

/*
 * One loaded configuration and what was derived from it.  With budgets,
 * also the spend summary of its state_dir (<state_dir>/spend, written by
 * reconcile and the worker): read at load and re-read by the reload
 * thread when it changes (every JS_SPEND_SEC), never on the submit path.
 */
struct js_conf {
	struct gb_conf *conf;
	gb_route_t *route;
	char path[PATH_MAX];		/* the file it came from */
	char spend_path[PATH_MAX];	/* "": no budget */
	struct stat spend_st;		/* of the summary read; zero: none */
	struct gb_spend_summary spent;
};

/* How often the reload thread looks at the spend summary, seconds. */
#define JS_SPEND_SEC 10

/*
 * The files a configuration is read from, as last looked at: gpuburst.yaml
 * (path "" when its path is too long) and the catalog file of the
 * configuration in use, <state_dir>/catalog (gpuburstctl catalog refresh
 * writes it; catalog "" before any configuration was loaded).
 */
struct js_seen {
	char path[PATH_MAX];
	struct stat st;			/* zero when stat() failed */
	char catalog[PATH_MAX];
	struct stat catalog_st;		/* zero when stat() failed (no file) */
};

static pthread_mutex_t js_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct js_conf *js;		/* guarded by js_mutex */

#define S(s) ((s) ? (s) : "(null)")

static void js_free(struct js_conf *c)
{
	if (!c)
		return;
	gb_route_destroy(c->route);
	gb_conf_destroy(c->conf);
	gb_spend_clear(&c->spent);
	free(c);
}

static void js_stat(const char *path, struct stat *st)
{
	if (!path[0] || stat(path, st) != 0)
		memset(st, 0, sizeof(*st));
}

/*
 * Where the configuration is, for slurm.conf at [slurm_conf_path] (NULL:
 * the default), and its stat() into [seen]; and the stat() of [catalog],
 * the catalog file of the configuration in use ("": none yet).  Both are
 * looked at before the files are read, so that a change made during the
 * read is seen by the next check.  File-system I/O (access(), stat()):
 * init() or the reload thread only.
 */
static void js_locate(const char *slurm_conf_path, const char *catalog,
		      struct js_seen *seen)
{
	if (!gb_conf_path_slurm(slurm_conf_path, seen->path, sizeof(seen->path)))
		seen->path[0] = '\0';
	js_stat(seen->path, &seen->st);
	gb_strlcpy(seen->catalog, catalog, sizeof(seen->catalog));
	js_stat(seen->catalog, &seen->catalog_st);
}

/*
 * After [c] was loaded from [seen]: when its catalog file is not the one
 * [seen] looked at (the first load, or state_dir changed), look at it now.
 * A refresh between the read and this stat() is then seen only at the
 * refresh after it; a refresh is not that frequent.
 */
static void js_locate_catalog(const struct js_conf *c, struct js_seen *seen)
{
	char catalog[PATH_MAX];

	gb_conf_catalog_file(c->conf, catalog, sizeof(catalog));
	if (strcmp(catalog, seen->catalog) == 0)
		return;
	gb_strlcpy(seen->catalog, catalog, sizeof(seen->catalog));
	js_stat(seen->catalog, &seen->catalog_st);
}

/*
 * Read the spend summary at [path] into [out] and its stat() into [st]
 * (zero when there is none).  A bad summary is logged and counts as
 * nothing spent: budgets then judge by the estimate alone.  File-system
 * I/O: init() or the reload thread only.
 */
static void js_spend_read(const char *path, struct stat *st, struct gb_spend_summary *out)
{
	gb_error_t err = { 0 };

	js_stat(path, st);
	if (gb_spend_read(path, out, &err) != GB_E_OK)
		slurm_error("%s: %s: counted as nothing spent", plugin_type, err.text);
}

/*
 * Load the configuration at [at] (js_locate()).  RET NEW, or NULL with the
 * reason, naming file:line:col, in [why] (one line).  File-system I/O:
 * init() or the reload thread only.
 */
static struct js_conf *js_load(const struct js_seen *at, char *why, size_t n)
{
	struct gb_errlist errs = { 0 };
	struct js_conf *c = calloc(1, sizeof(*c));
	gb_error_t err = { 0 };

	if (!c) {
		snprintf(why, n, "out of memory");
		return NULL;
	}
	if (!at->path[0]) {
		snprintf(why, n, "the configuration path is longer than %zu bytes",
			 sizeof(c->path) - 1);
		goto fail;
	}
	gb_strlcpy(c->path, at->path, sizeof(c->path));
	if (gb_conf_load(c->path, &c->conf, &errs, &err) != GB_E_OK) {
		if (errs.n > 1)
			snprintf(why, n, "%s (and %zu more errors; see gpuburstctl -c %s config check)",
				 err.text, errs.n - 1, c->path);
		else
			snprintf(why, n, "%s", err.text);
		goto fail;
	}
	if (gb_route_create(c->conf, &c->route, &err) != GB_E_OK) {
		snprintf(why, n, "%s", err.text);
		goto fail;
	}
	if (c->conf->policy.n_budgets &&
	    gb_conf_spend_file(c->conf, c->spend_path, sizeof(c->spend_path)))
		js_spend_read(c->spend_path, &c->spend_st, &c->spent);
	gb_errlist_free(&errs);
	return c;
fail:
	gb_errlist_free(&errs);
	js_free(c);
	return NULL;
}

static void js_announce(const struct js_conf *c, const char *verb)
{
	const char *parts = gb_route_partitions(c->route);

	slurm_info("%s: %s %s: %zu nodesets, burst partitions %s, GPU jobs without a partition %s, catalog %s",
		   plugin_type, verb, c->path, c->conf->n_nodesets,
		   *parts ? parts : "(none)",
		   c->conf->job_submit.route_gpu_jobs ? "routed" : "left alone",
		   c->conf->catalog_path ? c->conf->catalog_path : "built in");
}

static bool same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static bool same_files(const struct js_seen *a, const struct js_seen *b)
{
	return !strcmp(a->path, b->path) && same_stat(&a->st, &b->st) &&
	       !strcmp(a->catalog, b->catalog) && same_stat(&a->catalog_st, &b->catalog_st);
}

/*****************************************************************************
 *  The reload thread (before 23.11)
 *****************************************************************************/

/*
 * Before 23.11 (GB_SLURM_RECONFIG_REEXEC), slurmctld re-initialises
 * job_submit plugins on `scontrol reconfigure` only when JobSubmitPlugins
 * changed (job_submit_plugin_reconfig()), but every reconfigure sets
 * slurm_conf.last_update.  The submit path only compares that number with
 * the one it last handed over and, when it moved, wakes the reload thread
 * (js_handover()): a read from a hung file system, or a FIFO, would hang
 * that thread, never slurmctld's locks.  The thread stat()s the file and
 * the catalog file of the configuration in use and, when either changed
 * (path, inode, size or mtime: `gpuburstctl catalog refresh` renames a new
 * catalog into place), loads the configuration and swaps the pointer;
 * until then jobs keep the current configuration.
 * A bad file keeps the previous configuration and is logged once.
 *
 * last_update counts whole seconds, so a second reconfigure in the same
 * second leaves it as it was: a check that began in that second may have
 * missed the second one's file.  The thread therefore checks again once
 * the clock has left the second of the last update it was handed, and
 * only a check begun after it (checked > handed) ends the matter.
 */
struct js_reloader {
	pthread_t tid;
	bool done;			/* js_mutex: the thread is leaving */
	bool orphan;			/* js_mutex: fini() stopped waiting:
					 * the thread frees this */
	char slurm_conf[PATH_MAX];	/* slurm_conf.slurm_conf, set by init():
					 * the path is fixed for the life of
					 * slurmctld, the string is not */
	struct js_seen seen;		/* the thread's: the file last tried */
};

/* Between the submit path and the reload thread; guarded by js_mutex. */
static struct {
	struct js_reloader *thread;	/* the running one (NULL: none, or
					 * fini() asks it to leave) */
	pthread_cond_t wake;		/* to the thread */
	pthread_cond_t done;		/* from the thread, to fini() */
	bool want;			/* a check is asked for */
	time_t handed;			/* slurm_conf.last_update handed over */
	time_t checked;			/* the second the last check began in */
	time_t spend_next;		/* when the spend summary is looked at */
} jr = { .wake = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER };

/* How long fini() waits for a thread that may be stuck in a read. */
#define JS_FINI_WAIT_SEC 2

/*
 * The submit path's whole part: compare a number, maybe signal.  Caller
 * holds js_mutex, and slurmctld its config read lock (slurm_conf).
 */
static void js_handover(void)
{
	if (!jr.thread || slurm_conf.last_update == jr.handed)
		return;
	jr.handed = slurm_conf.last_update;
	jr.want = true;
	pthread_cond_signal(&jr.wake);
}

enum js_wake { JS_LEAVE, JS_CONF, JS_SPEND };

/* Whether the configuration in use has a spend summary to follow. */
static bool js_follows_spend(void)
{
	return js && js->spend_path[0];
}

/*
 * Wait, holding js_mutex, until a check is due: one was asked for, or no
 * check has begun after the second of the last update handed over and
 * that second is past (JS_CONF); or, with budgets, the spend summary's
 * look every JS_SPEND_SEC (JS_SPEND).  RET JS_LEAVE when the thread is to
 * leave.
 */
static enum js_wake js_reload_wait(const struct js_reloader *r)
{
	struct timespec at;

	while (jr.thread == r) {
		bool conf_due = jr.checked <= jr.handed;

		if (jr.want || (conf_due && time(NULL) > jr.handed))
			return JS_CONF;
		if (js_follows_spend() && time(NULL) >= jr.spend_next)
			return JS_SPEND;
		if (!conf_due && !js_follows_spend()) {
			pthread_cond_wait(&jr.wake, &js_mutex);
			continue;
		}
		/* time() may trail CLOCK_REALTIME by a tick: wake a little later */
		at.tv_sec = conf_due ? jr.handed + 1 : jr.spend_next;
		if (conf_due && js_follows_spend() && jr.spend_next < at.tv_sec)
			at.tv_sec = jr.spend_next;
		at.tv_nsec = 20 * 1000 * 1000;
		pthread_cond_timedwait(&jr.wake, &js_mutex, &at);
	}
	return JS_LEAVE;
}

/*
 * Re-read the spend summary of the configuration in use when its file
 * changed.  Called and returns with js_mutex held; drops it for the I/O.
 */
static void js_spend_check(void)
{
	struct gb_spend_summary fresh = { 0 }, old = { 0 };
	char path[PATH_MAX];
	struct stat st, was;

	jr.spend_next = time(NULL) + JS_SPEND_SEC;
	gb_strlcpy(path, js->spend_path, sizeof(path));
	was = js->spend_st;
	pthread_mutex_unlock(&js_mutex);
	js_stat(path, &st);
	if (!same_stat(&st, &was))
		js_spend_read(path, &st, &fresh);
	pthread_mutex_lock(&js_mutex);
	if (same_stat(&st, &was) || !js || strcmp(js->spend_path, path) != 0) {
		gb_spend_clear(&fresh);	/* unchanged, or another configuration */
		return;
	}
	old = js->spent;
	js->spent = fresh;
	js->spend_st = st;
	pthread_mutex_unlock(&js_mutex);
	gb_spend_clear(&old);
	slurm_debug("%s: spend summary %s re-read (%s)", plugin_type, path,
		    fresh.month[0] ? fresh.month : "empty");
	pthread_mutex_lock(&js_mutex);
}

enum js_check { JS_UNCHANGED, JS_RELOADED, JS_KEPT };

/*
 * One check, with no lock held: the plugin's only file-system I/O after
 * init().  JS_RELOADED puts the NEW configuration in [*out]; JS_KEPT puts
 * the reason in [why].
 */
static enum js_check js_check(struct js_reloader *r, struct js_conf **out,
			      char *why, size_t n)
{
	struct js_seen now;

	js_locate(r->slurm_conf, r->seen.catalog, &now);
	if (same_files(&now, &r->seen))
		return JS_UNCHANGED;
	/* whatever comes of it, these files have had their one log line */
	*out = js_load(&now, why, n);
	if (*out)
		js_locate_catalog(*out, &now);
	r->seen = now;
	return *out ? JS_RELOADED : JS_KEPT;
}

static void *js_reload_main(void *arg)
{
	char why[GB_ERROR_TEXT_MAX + PATH_MAX];
	struct js_reloader *r = arg;
	struct js_conf *c = NULL;
	enum js_check got;
	enum js_wake wake;
	time_t started;
	bool orphan;

	pthread_mutex_lock(&js_mutex);
	while ((wake = js_reload_wait(r)) != JS_LEAVE) {
		if (wake == JS_SPEND) {
			js_spend_check();
			continue;
		}
		jr.want = false;
		pthread_mutex_unlock(&js_mutex);
		started = time(NULL);
		got = js_check(r, &c, why, sizeof(why));
		pthread_mutex_lock(&js_mutex);
		if (jr.thread != r)
			break;		/* fini() came while we read: drop it */
		if (started > jr.checked)
			jr.checked = started;
		switch (got) {
		case JS_RELOADED:
			js_free(js);
			js = c;
			c = NULL;
			js_announce(js, "reloaded");
			break;
		case JS_KEPT:
			slurm_error("%s: reconfigure: keeping the previous configuration: %s",
				    plugin_type, why);
			break;
		case JS_UNCHANGED:
			slurm_debug("%s: reconfigure: %s unchanged", plugin_type,
				    r->seen.path[0] ? r->seen.path : "(path too long)");
			break;
		}
	}
	r->done = true;
	orphan = r->orphan;
	pthread_cond_broadcast(&jr.done);
	pthread_mutex_unlock(&js_mutex);
	js_free(c);
	if (orphan)
		free(r);
	return NULL;
}

/*
 * Start [r] as the reload thread, with every signal blocked (slurmctld
 * takes its signals in a thread of its own).  Caller holds js_mutex.
 * RET 0 or an errno.
 */
static int js_reload_start(struct js_reloader *r)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&r->tid, NULL, js_reload_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return rc;
	pthread_setname_np(r->tid, "gb_conf_reload");
	jr.thread = r;
	jr.want = false;
	jr.handed = slurm_conf.last_update;
	return 0;
}

/*
 * Ask the reload thread to leave and join it.  A thread stuck in a read
 * (a hung NFS server) cannot be interrupted: after JS_FINI_WAIT_SEC it is
 * left to finish on its own (-z nodelete keeps its code mapped), drops what
 * it read and frees its state.  Caller holds js_mutex.  RET the thread to
 * join, or NULL.
 */
static struct js_reloader *js_reload_stop(void)
{
	struct js_reloader *r = jr.thread;
	struct timespec at;

	if (!r)
		return NULL;
	jr.thread = NULL;
	pthread_cond_broadcast(&jr.wake);
	clock_gettime(CLOCK_REALTIME, &at);
	at.tv_sec += JS_FINI_WAIT_SEC;
	while (!r->done &&
	       pthread_cond_timedwait(&jr.done, &js_mutex, &at) != ETIMEDOUT)
		;
	if (r->done)
		return r;
	r->orphan = true;
	pthread_detach(r->tid);
	slurm_error("%s: the configuration reload thread did not stop within %d s "
		    "(a read of the configuration blocks?): left behind",
		    plugin_type, JS_FINI_WAIT_SEC);
	return NULL;
}

/*****************************************************************************
 *  init() and fini()
 *****************************************************************************/

/*
 * slurmctld's loader calls init() twice when it fails (once by name, once
 * scanning PluginDir), and again at every submission if the plugin was
 * added by a reconfigure: say each reason once.  The plugin is linked
 * with -z nodelete, so this survives the dlclose() in between.
 */
static char init_error[GB_ERROR_TEXT_MAX + PATH_MAX];	/* js_mutex */

/* Say why init() fails, once per reason.  Caller holds js_mutex. */
static int init_failed(const char *why)
{
	if (strcmp(why, init_error))
		slurm_error("%s: %s", plugin_type, why);
	else
		slurm_debug("%s: %s (again)", plugin_type, why);
	gb_strlcpy(init_error, why, sizeof(init_error));
	return SLURM_ERROR;
}

/*
 * The reload thread's state, for a configuration loaded from [seen].  RET
 * NEW (free()), or NULL with the reason in [why].
 */
static struct js_reloader *js_reloader_new(const struct js_seen *seen,
					   char *why, size_t n)
{
	const char *sc = slurm_conf.slurm_conf ? slurm_conf.slurm_conf : "";
	struct js_reloader *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(why, n, "out of memory");
		return NULL;
	}
	if (gb_strlcpy(r->slurm_conf, sc, sizeof(r->slurm_conf)) >=
	    sizeof(r->slurm_conf)) {
		snprintf(why, n, "the path of slurm.conf is longer than %zu bytes",
			 sizeof(r->slurm_conf) - 1);
		free(r);
		return NULL;
	}
	r->seen = *seen;
	return r;
}

/*
 * Loads the file; a file that cannot be read or parsed fails init().
 * Before 23.11 it also starts the reload thread.  This read happens on
 * whatever thread slurmctld calls init() from: at start-up, from 23.11 in
 * the new slurmctld of a reconfigure, and in 22.05 on the submit path
 * when an earlier init() failed.  It relies on gb_file_read() to refuse a
 * FIFO rather than wait for a writer; a hung NFS server would still hold
 * it, as it holds slurmctld's own read of slurm.conf.
 */
extern int init(void)
{
	char why[sizeof(init_error)];
	time_t started = time(NULL);
	struct js_reloader *r = NULL;
	struct js_conf *c, *old;
	struct js_seen seen;
	int rc;

	js_locate(slurm_conf.slurm_conf, "", &seen);
	if ((c = js_load(&seen, why, sizeof(why))))
		js_locate_catalog(c, &seen);
	/* from 23.11 only budgets need the thread (the spend summary) */
	if (c && (!gb_slurm_has(SLURM_VERSION_NUMBER, GB_SLURM_RECONFIG_REEXEC) ||
		  c->spend_path[0]) &&
	    !(r = js_reloader_new(&seen, why, sizeof(why)))) {
		js_free(c);
		c = NULL;
	}
	pthread_mutex_lock(&js_mutex);
	if (!c) {
		rc = init_failed(why);
		pthread_mutex_unlock(&js_mutex);
		return rc;
	}
	if (r && !jr.thread) {
		jr.checked = started;
		if ((rc = js_reload_start(r))) {
			snprintf(why, sizeof(why),
				 "cannot start the configuration reload thread: %s",
				 strerror(rc));
			rc = init_failed(why);
			pthread_mutex_unlock(&js_mutex);
			free(r);
			js_free(c);
			return rc;
		}
		r = NULL;
	}
	init_error[0] = '\0';
	old = js;
	js = c;
	js_announce(c, "loaded");
	pthread_mutex_unlock(&js_mutex);
	free(r);	/* init() without fini(): the running thread stays */
	js_free(old);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	struct js_reloader *r;
	struct js_conf *old;

	pthread_mutex_lock(&js_mutex);
	r = js_reload_stop();
	old = js;
	js = NULL;
	pthread_mutex_unlock(&js_mutex);
	if (r) {
		pthread_join(r->tid, NULL);
		free(r);
	}
	js_free(old);
	/* gb_conf_load() registered any cloud keys (a thread left behind may
	 * register one more, which lives until slurmctld exits) */
	gb_log_secret_clear();
	return SLURM_SUCCESS;
}

/*****************************************************************************
 *  Jobs
 *****************************************************************************/

static uint32_t given32(uint32_t v)
{
	return (v == NO_VAL || v == INFINITE) ? 0 : v;
}

static uint32_t given16(uint16_t v)
{
	return (v == NO_VAL16 || v == INFINITE16) ? 0 : v;
}

static void job_fields(struct gb_route_job *job, const job_desc_msg_t *d,
		       bool update)
{
	job->partition = d->partition;
	job->features = d->features;
	job->tres_per_job = d->tres_per_job;
	job->tres_per_node = d->tres_per_node;
	job->tres_per_socket = d->tres_per_socket;
	job->tres_per_task = d->tres_per_task;
	job->comment = d->comment;
	job->admin_comment = d->admin_comment;
	job->min_nodes = given32(d->min_nodes);
	job->max_nodes = given32(d->max_nodes);
	job->num_tasks = given32(d->num_tasks);
	job->ntasks_per_node = given16(d->ntasks_per_node);
	job->time_limit = given32(d->time_limit);
	job->account = d->account;
	job->update = update;
}

static int reason_rc(enum gb_route_reason why)
{
	switch (why) {
	case GB_ROUTE_BAD_TYPE:
		return ESLURM_INVALID_FEATURE;
	case GB_ROUTE_BAD_HOME:
		return ESLURM_ACCESS_DENIED;
	case GB_ROUTE_BAD_MODEL:
	case GB_ROUTE_TOO_MANY_GPUS:
		return ESLURM_INVALID_GRES;
	case GB_ROUTE_TOO_MANY_NODES:
		return ESLURM_INVALID_NODE_COUNT;
	case GB_ROUTE_NO_NODESET:
		return ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE;
	case GB_ROUTE_BUDGET:
		return ESLURM_ACCOUNTING_POLICY;
	case GB_ROUTE_NOMEM:
		return ENOMEM;
	case GB_ROUTE_OK:
		break;
	}
	return SLURM_ERROR;
}

/* Replace a job string with a copy from Slurm's allocator. */
static void set_field(char **field, const struct gb_buf *value)
{
	char *copy;

	if (!value->len)
		return;
	copy = slurm_xstrdup(gb_buf_str(value));
	slurm_xfree((void **)field);
	*field = copy;
}

/* Add a line for the user, after what an earlier plugin may have said. */
static void tell_user(char **err_msg, const char *msg)
{
	char *line;

	if (!err_msg || !*msg)
		return;
	if (*err_msg) {
		line = slurm_xstrdup_printf("%s\n%s", *err_msg, msg);
		slurm_xfree((void **)err_msg);
	} else {
		line = slurm_xstrdup(msg);
	}
	*err_msg = line;
}

/* Decide and apply, under js_mutex.  RET a Slurm error code. */
static int route(job_desc_msg_t *d, const struct gb_route_job *job,
		 struct gb_route_result *res, uint32_t uid, char **err_msg)
{
	const char *verb = job->update ? "update of job" : "job";
	const char *id = job->update ? S(d->job_id_str) : S(d->name);

	/* before 23.11: maybe wake the reload thread (from 23.11 it only
	 * follows the spend summary) */
	js_handover();
	switch (gb_route_job(js->route, job, res)) {
	case GB_ROUTE_UNTOUCHED:
		return SLURM_SUCCESS;
	case GB_ROUTE_REJECT:
		if (!res->msg.len)
			gb_buf_puts(&res->msg, "gpuburst: out of memory");
		slurm_info("%s: refused %s %s of uid %u: %s", plugin_type, verb,
			   id, uid, gb_buf_str(&res->msg));
		tell_user(err_msg, gb_buf_str(&res->msg));
		return reason_rc(res->reason);
	case GB_ROUTE_ACCEPT:
		break;
	}
	if (!job->update) {
		set_field(&d->partition, &res->partition);
		set_field(&d->features, &res->features);
	}
	set_field(&d->admin_comment, &res->admin_comment);
	/*
	 * Held for approval: priority 0 set here is an admin hold (JobHeldAdmin,
	 * which only an operator releases) unless the user submitted it held
	 * (-H, JobHeldUser); slurmctld keeps it across restarts.
	 */
	if (res->hold && !job->update)
		d->priority = 0;
	tell_user(err_msg, gb_buf_str(&res->msg));
	slurm_debug("%s: %s %s of uid %u: partition=%s features=%s home=%s nodes=%llu cost=%.2f%s%s",
		    plugin_type, verb, id, uid, S(d->partition), S(d->features),
		    S(res->home), (unsigned long long)res->nodes, res->estimate,
		    res->hold ? " (held for approval)" : res->needs_approval ? " (needs approval)" : "",
		    res->budget ? " (over a budget)" : "");
	return SLURM_SUCCESS;
}

static int route_locked(job_desc_msg_t *d, bool update, uint32_t uid,
			char **err_msg)
{
	struct gb_route_result res;
	struct gb_route_job job;
	int rc = SLURM_SUCCESS;

	job_fields(&job, d, update);
	/* slurmctld set user_id to the job's user before calling us */
	job.user_id = d->user_id != NO_VAL ? d->user_id : uid;
	job.now = (double)time(NULL);
	gb_route_result_init(&res);
	pthread_mutex_lock(&js_mutex);
	if (js) {
		job.spent = &js->spent;
		rc = route(d, &job, &res, uid, err_msg);
	}
	pthread_mutex_unlock(&js_mutex);
	gb_route_result_free(&res);
	return rc;
}

extern int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid,
		      char **err_msg)
{
	return route_locked(job_desc, false, submit_uid, err_msg);
}

#if GB_MODIFY_HAS_ERR_MSG
extern int job_modify(job_desc_msg_t *job_desc, void *job_ptr,
		      uint32_t submit_uid, char **err_msg)
{
	(void)job_ptr;
	return route_locked(job_desc, true, submit_uid, err_msg);
}
#else
extern int job_modify(job_desc_msg_t *job_desc, void *job_ptr,
		      uint32_t submit_uid)
{
	/* no err_msg before 23.02: the refusal is in slurmctld's log */
	(void)job_ptr;
	return route_locked(job_desc, true, submit_uid, NULL);
}
#endif
