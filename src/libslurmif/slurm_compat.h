/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slurm_compat.h - libslurm's API across Slurm 22.05 .. 26.05, in one place
 *
 * libslurmif's own: included by gb_slurm.c after <slurm/slurm.h>.  Each
 * difference is decided by a configure check of the headers (config.h),
 * not by a version number, so a backported change is right too.  What the
 * releases do differently at run time is gb_slurm_release.h.
 *
 * Differences that need no code here:
 *  - hostlist_t: a pointer typedef until 23.11, the struct since; the code
 *    says `struct hostlist *`, which is the same type in both.
 *  - slurm_get_errno(): removed in 24.11; it only ever returned errno,
 *    which libslurm still sets: the code reads errno.
 *  - resv_desc_msg_t.node_cnt and .core_cnt: arrays until 23.02, counts
 *    from 23.11; slurm_init_resv_desc_msg() sets them and the code never
 *    touches them.  25.05 adds time_force, 25.11 allowed_parts and qos,
 *    also left as initialised.
 */
#ifndef GB_LIBSLURMIF_SLURM_COMPAT_H
#define GB_LIBSLURMIF_SLURM_COMPAT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * slurm_hostlist_ranged_string_malloc() left slurm.h in 23.11 (only the
 * _xmalloc one, freed with Slurm's xfree, is left).  The buffer form is in
 * every release: grow until it fits.  RET NEW (free()), NULL when out of
 * memory.
 */
static inline char *compat_hostlist_ranged(struct hostlist *hl)
{
	size_t n = 256;

	for (;;) {
		char *buf = malloc(n);
		ssize_t len;

		if (!buf)
			return NULL;
		/* RET -1 when truncated; a full buffer may be truncated too */
		len = slurm_hostlist_ranged_string(hl, n, buf);
		if (len >= 0 && (size_t)len < n - 1)
			return buf;
		free(buf);
		if (n > SIZE_MAX / 2)
			return NULL;
		n *= 2;
	}
}

/* update_node_msg_t.reason_uid: gone in 26.05 (slurmctld takes the caller's uid). */
static inline void compat_set_reason_uid(update_node_msg_t *m, uint32_t uid)
{
#ifdef HAVE_UPDATE_NODE_MSG_T_REASON_UID
	m->reason_uid = uid;
#else
	(void)m;
	(void)uid;
#endif
}

/* slurm_free_ctl_conf() became slurm_free_conf() in 26.05. */
static inline void compat_free_ctl_conf(slurm_conf_t *conf)
{
#if HAVE_DECL_SLURM_FREE_CONF
	slurm_free_conf(conf);
#else
	slurm_free_ctl_conf(conf);
#endif
}

/*
 * slurm_load_job() of one job: 26.05 takes a slurm_step_id_t (its job-id
 * form is only under SLURM_BACKWARD_COMPAT).
 */
static inline int compat_load_job(job_info_msg_t **msg, uint32_t job_id, uint16_t flags)
{
#ifdef HAVE_SLURM_LOAD_JOB_STEP_ID
	slurm_step_id_t id = SLURM_STEP_ID_INITIALIZER;

	id.job_id = job_id;
	return slurm_load_job(msg, id, flags);
#else
	return slurm_load_job(msg, job_id, flags);
#endif
}

/* A reservation's Comment= (resv_desc_msg_t, reserve_info_t): from 23.02. */
#if defined(HAVE_RESV_DESC_MSG_T_COMMENT) && defined(HAVE_RESERVE_INFO_T_COMMENT)
#define COMPAT_RESV_COMMENT 1
#else
#define COMPAT_RESV_COMMENT 0
#endif

static inline void compat_resv_set_comment(resv_desc_msg_t *m, const char *comment)
{
#ifdef HAVE_RESV_DESC_MSG_T_COMMENT
	m->comment = (char *)comment;
#else
	(void)m;
	(void)comment;
#endif
}

/* RET BORROWED the comment of [r], NULL when none (or before 23.02). */
static inline const char *compat_resv_comment(const reserve_info_t *r)
{
#ifdef HAVE_RESERVE_INFO_T_COMMENT
	return r->comment && *r->comment ? r->comment : NULL;
#else
	(void)r;
	return NULL;
#endif
}

/*
 * The name slurm_create_reservation() returns: strdup()ed until 25.11,
 * xstrdup()ed from 26.05 (SchedMD commit 74f4b700bc, "Return xstring from
 * slurm_create_reservation()").  Nothing in the headers but the comment
 * says which, so this one is decided by the version.  slurm_xfree() is in
 * libslurm in every release but not in slurm.h (the job_submit plugin
 * declares it the same way).
 */
extern void slurm_xfree(void **p);

static inline void compat_free_resv_name(char *name)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	if (name)
		slurm_xfree((void **)&name);
#else
	free(name);
#endif
}

#endif /* GB_LIBSLURMIF_SLURM_COMPAT_H */
