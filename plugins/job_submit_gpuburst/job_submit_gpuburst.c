/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job_submit_gpuburst.c - Slurm job_submit/gpuburst: route and guard GPU jobs
 *
 * NOTE: enable with JobSubmitPlugins=gpuburst in slurm.conf.  The plugin
 * reads gpuburst.yaml ($GPUBURST_CONF in slurmctld's environment, else
 * gpuburst.yaml next to slurm.conf, else the compiled-in default) and
 * re-reads it after `scontrol reconfigure`: from 23.11 that is a new
 * slurmctld calling init(), before it a reload seen on the next
 * submission (js_refresh()).  doc/job_submit_gpuburst.md
 * describes what it does to jobs; route.c decides, this file only talks to
 * Slurm.
 *
 * Built against <slurm/slurm.h> only: slurmctld's libslurmfull provides
 * the slurm_* functions below when it dlopen()s the plugin, which is why
 * the plugin must be built for exactly the Slurm that loads it.  Strings
 * handed to slurmctld (err_msg, job fields) come from Slurm's allocator,
 * because slurmctld xfree()s them.
 *
 * slurmctld calls job_submit()/job_modify() with its config, job, node and
 * partition locks held (and, in 22.05, one plugin call at a time); the
 * configuration pointer is still guarded by js_mutex, since init() and
 * fini() may run in other threads.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
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

/* One loaded configuration and what was derived from it. */
struct js_conf {
	struct gb_conf *conf;
	gb_route_t *route;
	char path[PATH_MAX];		/* the file it came from */
	char seen_path[PATH_MAX];	/* the file last tried (maybe bad) */
	struct stat seen_st;		/* of seen_path, just before reading */
	time_t slurm_update;		/* slurm_conf.last_update last seen */
	time_t checked;			/* when it was last compared */
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
	free(c);
}

/*
 * Load the configuration.  RET NEW, or NULL with the reason, naming
 * file:line:col, in [why] (one line).
 */
static struct js_conf *js_load(char *why, size_t n)
{
	struct gb_errlist errs = { 0 };
	struct js_conf *c = calloc(1, sizeof(*c));
	gb_error_t err = { 0 };

	if (!c) {
		snprintf(why, n, "out of memory");
		return NULL;
	}
	if (!gb_conf_path_slurm(slurm_conf.slurm_conf, c->path, sizeof(c->path))) {
		snprintf(why, n, "the configuration path is longer than %zu bytes",
			 sizeof(c->path) - 1);
		goto fail;
	}
	gb_strlcpy(c->seen_path, c->path, sizeof(c->seen_path));
	if (stat(c->path, &c->seen_st) != 0)
		memset(&c->seen_st, 0, sizeof(c->seen_st));
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

	slurm_info("%s: %s %s: %zu nodesets, burst partitions %s, GPU jobs without a partition %s",
		   plugin_type, verb, c->path, c->conf->n_nodesets,
		   *parts ? parts : "(none)",
		   c->conf->job_submit.route_gpu_jobs ? "routed" : "left alone");
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/*
 * Before 23.11 (GB_SLURM_RECONFIG_REEXEC): slurmctld re-initialises
 * job_submit plugins on `scontrol reconfigure` only
 * when JobSubmitPlugins changed (job_submit_plugin_reconfig()), but every
 * reconfigure sets slurm_conf.last_update: reload when it moved and the
 * file did too.  last_update counts whole seconds, so while the clock is
 * still in the second of the last update we saw, a second reconfigure
 * could hide behind the same value: then the file is compared on every
 * call until that second is over.  A bad file keeps the previous
 * configuration.  Caller holds js_mutex.
 */
static void js_refresh(void)
{
	time_t now = time(NULL);
	char path[PATH_MAX], why[GB_ERROR_TEXT_MAX + PATH_MAX];
	struct js_conf *c;
	struct stat st;

	if (slurm_conf.last_update == js->slurm_update &&
	    js->checked > js->slurm_update)
		return;
	js->slurm_update = slurm_conf.last_update;
	js->checked = now;
	if (!gb_conf_path_slurm(slurm_conf.slurm_conf, path, sizeof(path)))
		path[0] = '\0';
	if (stat(path, &st) != 0)
		memset(&st, 0, sizeof(st));
	if (!strcmp(path, js->seen_path) && same_file(&st, &js->seen_st))
		return;
	/* whatever comes of it, this file has had its one log line */
	gb_strlcpy(js->seen_path, path, sizeof(js->seen_path));
	js->seen_st = st;
	c = js_load(why, sizeof(why));
	if (!c) {
		slurm_error("%s: reconfigure: keeping the previous configuration: %s",
			    plugin_type, why);
		return;
	}
	c->slurm_update = js->slurm_update;
	c->checked = js->checked;
	js_free(js);
	js = c;
	js_announce(js, "reloaded");
}

/*
 * slurmctld's loader calls init() twice when it fails (once by name, once
 * scanning PluginDir), and again at every submission if the plugin was
 * added by a reconfigure: say each reason once.  The plugin is linked
 * with -z nodelete, so this survives the dlclose() in between.
 */
static char init_error[GB_ERROR_TEXT_MAX + PATH_MAX];	/* js_mutex */

extern int init(void)
{
	char why[sizeof(init_error)];
	struct js_conf *c = js_load(why, sizeof(why)), *old;

	pthread_mutex_lock(&js_mutex);
	if (!c) {
		if (strcmp(why, init_error))
			slurm_error("%s: %s", plugin_type, why);
		else
			slurm_debug("%s: %s (again)", plugin_type, why);
		gb_strlcpy(init_error, why, sizeof(init_error));
		pthread_mutex_unlock(&js_mutex);
		return SLURM_ERROR;
	}
	init_error[0] = '\0';
	c->slurm_update = slurm_conf.last_update;
	c->checked = time(NULL);
	old = js;
	js = c;
	js_announce(c, "loaded");
	pthread_mutex_unlock(&js_mutex);
	js_free(old);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	struct js_conf *old;

	pthread_mutex_lock(&js_mutex);
	old = js;
	js = NULL;
	pthread_mutex_unlock(&js_mutex);
	js_free(old);
	gb_log_secret_clear();	/* gb_conf_load() registered any cloud keys */
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

	/* From 23.11 a reconfigure is a new slurmctld, which calls init(). */
	if (!gb_slurm_has(SLURM_VERSION_NUMBER, GB_SLURM_RECONFIG_REEXEC))
		js_refresh();
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
	tell_user(err_msg, gb_buf_str(&res->msg));
	slurm_debug("%s: %s %s of uid %u: partition=%s features=%s home=%s nodes=%llu%s",
		    plugin_type, verb, id, uid, S(d->partition), S(d->features),
		    S(res->home), (unsigned long long)res->nodes,
		    res->needs_approval ? " (needs approval)" : "");
	return SLURM_SUCCESS;
}

static int route_locked(job_desc_msg_t *d, bool update, uint32_t uid,
			char **err_msg)
{
	struct gb_route_result res;
	struct gb_route_job job;
	int rc = SLURM_SUCCESS;

	job_fields(&job, d, update);
	gb_route_result_init(&res);
	pthread_mutex_lock(&js_mutex);
	if (js)
		rc = route(d, &job, &res, uid, err_msg);
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
