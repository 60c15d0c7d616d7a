/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_slurmconf.h - slurm.conf without libslurm: the few values gpuburst
 * reads from it (gb_slurmconf_read) and the lines it needs in it
 * (gb_slurmconf_write_*)
 *
 * Kept out of libslurm's reach like gb_slurm_text.c: the fast path and
 * gpuburstctl read the file, and the generator is pure (config + Slurm
 * release in, text out) so that it can be tested without a cluster.
 *
 * Reading: the resume fast path needs ResumeTimeout (approval expiry) and
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
#ifndef GB_LIBSLURMIF_GB_SLURMCONF_H
#define GB_LIBSLURMIF_GB_SLURMCONF_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_err.h"
#include "gb_str.h"

struct gb_conf;

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

/*****************************************************************************
 *  Writing: gpuburstctl slurm-conf (gpuburstctl(8), SLURM-CONF)
 *
 *  - CPUs = the type's vCPUs; RealMemory = GB_SLURMCONF_MEMORY_HEADROOM of
 *    its memory, rounded down: slurmd reports what the kernel sees, a
 *    little less than the nominal size, and a node configured with more
 *    memory than it reports is drained ("Low RealMemory") when it
 *    registers;
 *  - Gres=gpu:<model>:<count>, Feature=<model>[,efa],<instance type>...
 *    (every type of the nodeset: what the job_submit/gpuburst plugin
 *    constrains on; no region feature, since a node may land in any region
 *    of its fallback group), State=CLOUD; a nodeset of several types gets
 *    the lowest GPU count, CPUs and memory among them;
 *  - one NodeSet per nodeset, one PartitionName per partition over them,
 *    with the power-save timeouts (power saving on those partitions only);
 *  - gres.conf File=/dev/nvidia0.. per node (the devices of the type);
 *    lab: fake GPUs on character devices that exist everywhere
 *    (/dev/null, ...), GB_SLURMCONF_LAB_CPUS and _LAB_MEMORY, because every
 *    lab slurmd runs on one host and reports its resources;
 *  - ports: Port=[BASE-...] per nodeset (several slurmd on one host need
 *    one port each), consecutive over the nodesets;
 *  - the power-save block with the programs' paths; lines that only some
 *    Slurm releases accept (gb_slurm_release.h) are chosen for the release
 *    [slurm] targets;
 *  - keys Slurm keeps one line of (SlurmctldParameters, GresTypes, ...)
 *    are merged into the site's own values, never emitted blind.
 *
 *  Every function appends to [out]; on an allocation failure the buffer
 *  says so (gb_str.h) and the text is incomplete.
 *****************************************************************************/

#define GB_SLURMCONF_MEMORY_HEADROOM 0.95
#define GB_SLURMCONF_LAB_CPUS 1
#define GB_SLURMCONF_LAB_MEMORY 500	/* MiB */

struct gb_slurmconf_gen {
	unsigned long slurm;	/* the release it targets (GB_SLURM_VERSION) */
	const char *sbindir;	/* where gpuburst-resume and the others are */
	bool lab;		/* fake GPUs, one host (see above) */
	long ports;		/* first slurmd port (lab), 0: no Port= */
	long suspend_time, suspend_timeout, resume_timeout;	/* per partition */
};

/* The global power-save lines (ResumeProgram ... SuspendRate). */
void gb_slurmconf_write_power(struct gb_buf *out, const struct gb_slurmconf_gen *g);

/*
 * The keys to merge: with [site] (BORROWED, the site's slurm.conf read by
 * gb_slurmconf_read) NULL, as comments saying what to add; otherwise the
 * site's lines with gpuburst's options added (and the options defunct in
 * the target release removed), its duplicate keys warned about, and a
 * SuspendExcParts that keeps a global SuspendTime off the site's
 * partitions.
 */
void gb_slurmconf_write_merge(struct gb_buf *out, const struct gb_conf *conf,
			      const struct gb_slurmconf_gen *g,
			      const struct gb_slurmconf *site);

/*
 * NodeName, NodeSet and PartitionName lines for [conf]'s nodesets into
 * [out], their gres.conf lines into [gres].
 * RET GB_E_OK; GB_E_CONFIG for an instance type not in the catalog;
 * GB_E_INVALID for a lab type with more GPUs than there are fake devices.
 */
gb_err_t gb_slurmconf_write_nodes(struct gb_buf *out, struct gb_buf *gres,
				  const struct gb_conf *conf,
				  const struct gb_slurmconf_gen *g, gb_error_t *err);

/* RET how many nodes [conf]'s nodesets name (the ports a lab needs). */
size_t gb_slurmconf_node_count(const struct gb_conf *conf);

#endif /* GB_LIBSLURMIF_GB_SLURMCONF_H */
