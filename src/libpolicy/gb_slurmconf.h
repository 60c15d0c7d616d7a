/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_slurmconf.h - the few slurm.conf values gpuburst needs, without libslurm
 *
 * The resume fast path needs ResumeTimeout (approval expiry) and
 * gpuburstctl needs SlurmUser (who may decide) and the power-save
 * settings (doctor); reading the file is a few hundred microseconds and
 * needs no controller, no libslurm and no network.
 *
 * Syntax read as slurm.conf(5) describes it: "Key=Value" pairs separated
 * by blanks, keys case-insensitive, '#' starts a comment (a '\#' is a
 * literal '#'), a trailing '\' continues the line, values may be
 * double-quoted, "Include FILE" (relative paths from the directory of the
 * including file; glob patterns are not expanded) up to 8 levels.  For
 * repeated keys the last one wins, as in Slurm.  Unknown keys are
 * ignored.
 */
#ifndef GB_LIBPOLICY_GB_SLURMCONF_H
#define GB_LIBPOLICY_GB_SLURMCONF_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_err.h"
#include "gb_str.h"

#define GB_SLURMCONF_DEFAULT "/etc/slurm/slurm.conf"
#define GB_SLURMCONF_ENV "SLURM_CONF"
#define GB_SLURM_DEFAULT_RESUME_TIMEOUT 60.0	/* slurm.conf(5) */

struct gb_slurmconf_partition {
	char *name;
	double resume_timeout;		/* seconds; -1: not set */
};

struct gb_slurmconf {
	char *path;			/* the file read */
	char *cluster_name;		/* NULL when not set */
	char *slurm_user;		/* "root" when not set (Slurm's default) */
	double resume_timeout;		/* default 60 */
	double suspend_timeout;		/* default 30 */
	double suspend_time;		/* -1: INFINITE/NONE or not set */
	char *resume_program;		/* NULL when not set */
	char *suspend_program;
	char *resume_fail_program;
	char *slurmctld_parameters;
	char *tree_width;
	char *private_data;
	char *communication_parameters;
	char *job_submit_plugins;
	char *gres_types;
	char *return_to_service;
	char *scheduler_parameters;
	char *suspend_exc_nodes;
	char *suspend_exc_parts;
	struct gb_slurmconf_partition *partitions;
	size_t n_partitions;
	/*
	 * The string keys above given more than once (Slurm keeps the last
	 * and logs "specified more than once, latest value used"): one
	 * "Key: FILE:LINE replaces FILE:LINE" each, in the order found.
	 */
	struct gb_strv duplicates;
};

/*
 * RET BORROWED the slurm.conf to read: $SLURM_CONF unless [trusted_env]
 * is false (set-id programs must not let the caller choose), else
 * GB_SLURMCONF_DEFAULT.
 */
const char *gb_slurmconf_path(bool trusted_env);

/*
 * Read [path].  OUT [out] filled (gb_slurmconf_clear, also after failure).
 * RET GB_E_OK; GB_E_NOTFOUND / GB_E_IO (file, or an Include); GB_E_PARSE
 * for a value that must be a number and is not ("FILE:LINE: ...");
 * GB_E_NOMEM.
 */
gb_err_t gb_slurmconf_read(const char *path, struct gb_slurmconf *out,
			   gb_error_t *err);
void gb_slurmconf_clear(struct gb_slurmconf *sc);

/*
 * RET BORROWED the value of string key [key] (case-insensitive: one of the
 * string fields above, such as "SlurmctldParameters"), NULL when unset or
 * not one of them.
 */
const char *gb_slurmconf_value(const struct gb_slurmconf *sc, const char *key);

/* RET BORROWED partition [name], or NULL. */
const struct gb_slurmconf_partition *
gb_slurmconf_partition(const struct gb_slurmconf *sc, const char *name);

#endif /* GB_LIBPOLICY_GB_SLURMCONF_H */
