/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_slurm_release.h - what each Slurm release does differently, in one list
 *
 * gpuburst builds against and runs with Slurm 22.05 and later.  Every
 * difference of the power-save contract that gpuburst acts on, whether at
 * build time (libslurm's API: slurm_compat.h) or at run time (which
 * slurm.conf lines are valid, who owns a cloud node's NodeAddr), is one
 * row of GB_SLURM_CHANGES below, named by the release that brought it.
 * Code asks gb_slurm_has(version, change) for the release it targets (the
 * running Slurm's, or the one named on the command line), never compares
 * version numbers itself.  README "Supported Slurm releases" lists the
 * same rows.
 *
 * Pure functions: no libslurm, no controller; gb_slurm_has() is inline.
 */
#ifndef GB_LIBSLURMIF_GB_SLURM_RELEASE_H
#define GB_LIBSLURMIF_GB_SLURM_RELEASE_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_err.h"

/* Slurm's SLURM_VERSION_NUM(): 22.05.8 is 0x160508. */
#define GB_SLURM_VERSION(major, minor, micro) \
	(((unsigned long)(major) << 16) + ((unsigned long)(minor) << 8) + (unsigned long)(micro))

/*
 * XX(NAME, MAJOR, MINOR, WHAT): from Slurm MAJOR.MINOR on, WHAT holds.
 * Append only; keep the release order.
 */
#define GB_SLURM_CHANGES(XX) \
	XX(RESUME_FILE_2302, 23, 2, \
	   "SLURM_RESUME_FILE says nodes_resume/all_nodes_resume (was nodes/all_nodes) and adds " \
	   "nodes_alloc, features, partition, reservation") \
	XX(CLOUD_VISIBLE, 23, 2, \
	   "powered-down cloud nodes are shown without PrivateData=cloud") \
	XX(MODIFY_ERR_MSG, 23, 2, \
	   "job_modify() of a job_submit plugin gets err_msg: scontrol update prints the plugin's message") \
	XX(CTLD_OWNS_CLOUD_ADDR, 23, 11, \
	   "slurmctld sets a cloud node's NodeAddr and NodeHostName to where its slurmd registered " \
	   "from (cloud_reg_addrs is the default and was removed) and resets them at power-down") \
	XX(NO_ADDR_CACHE_DEFUNCT, 23, 11, \
	   "CommunicationParameters=NoAddrCache is defunct (an error in every daemon's log)") \
	XX(RECONFIG_REEXEC, 23, 11, \
	   "scontrol reconfigure starts a new slurmctld, which calls the job_submit plugin's init(); " \
	   "a plugin that fails it makes the reconfigure fail and the old slurmctld go on") \
	XX(GRES_SLASH, 23, 11, \
	   "GRES in TRES strings are written gres/NAME (was gres:NAME)") \
	XX(SCONTROL_POWER, 24, 5, \
	   "scontrol power up|down [asap|force] NODES") \
	XX(CGROUP_DISABLED, 24, 5, \
	   "CgroupPlugin=disabled: slurmd runs without a cgroup file system") \
	XX(REQUEUE_ON_RESUME_FAILURE, 25, 5, \
	   "SchedulerParameters=requeue_on_resume_failure: a job whose nodes fail to resume is " \
	   "requeued (not left to the node failure path)")

enum gb_slurm_change {
#define GB_XX(name, major, minor, what) GB_SLURM_##name,
	GB_SLURM_CHANGES(GB_XX)
#undef GB_XX
	GB_SLURM_N_CHANGES
};

/*
 * The first release with [change] (GB_SLURM_VERSION), 0 for a bad one.
 * Inline, so that the job_submit plugin (which links no libslurmif) can
 * ask it about the Slurm it is built for, as a constant.
 */
static inline unsigned long gb_slurm_change_version(enum gb_slurm_change change)
{
	switch (change) {
#define GB_XX(name, major, minor, what) \
	case GB_SLURM_##name: return GB_SLURM_VERSION(major, minor, 0);
	GB_SLURM_CHANGES(GB_XX)
#undef GB_XX
	case GB_SLURM_N_CHANGES:
		break;
	}
	return 0;
}

/* Does Slurm [version] (GB_SLURM_VERSION) have [change]? */
static inline bool gb_slurm_has(unsigned long version, enum gb_slurm_change change)
{
	unsigned long since = gb_slurm_change_version(change);

	return since && version >= since;
}

/*
 * The release that brought [change] ("23.11") into [buf] of [n] bytes, and
 * what it means (static text).  RET [buf] / the text; NULL for a bad change.
 */
char *gb_slurm_change_since(enum gb_slurm_change change, char *buf, size_t n);
const char *gb_slurm_change_what(enum gb_slurm_change change);

/*
 * Parse a Slurm version: "24.11", "24.11.5", "slurm 24.11.5" (scontrol
 * --version; Debian's says "slurm-wlm 24.11.5"), "24.11.5-4+deb13u1"; a
 * missing micro is 0.  RET GB_E_INVALID
 * naming [s] for anything else, or a release before 22.05.
 */
gb_err_t gb_slurm_version_parse(const char *s, unsigned long *out, gb_error_t *err);

/* [version] as "24.11.5" into [buf] of [n] bytes; RET [buf]. */
char *gb_slurm_version_str(unsigned long version, char *buf, size_t n);

#endif /* GB_LIBSLURMIF_GB_SLURM_RELEASE_H */
