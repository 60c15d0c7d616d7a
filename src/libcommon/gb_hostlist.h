/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_hostlist.h - Slurm-style host patterns without libslurm
 *
 * The job_submit plugin is loaded into slurmctld and must not link libslurm,
 * and the config needs to test node names against nodeset patterns without
 * expanding them, so patterns get a small parser of their own.  Grammar, as
 * Slurm's hostlist: items separated by ',' at the top level; an item is text
 * with zero or more bracket groups "[1-4,7,010-012]"; a range "lo-hi" prints
 * its numbers zero-padded to the width of "lo" ("[01-10]" -> 01..10).
 * Programs expanding slurmctld's own hostlists use libslurm (libslurmif).
 */
#ifndef GB_LIBCOMMON_GB_HOSTLIST_H
#define GB_LIBCOMMON_GB_HOSTLIST_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_err.h"
#include "gb_str.h"

typedef struct gb_hostlist gb_hostlist_t;

/*
 * Parse [expr].  Errors name the offending character position.
 * OUT *out NEW (gb_hostlist_destroy).
 */
gb_err_t gb_hostlist_parse(const char *expr, gb_hostlist_t **out,
			   gb_error_t *err);
void gb_hostlist_destroy(gb_hostlist_t *hl);

/* RET whether [name] is one of the hosts of [hl] (no expansion). */
bool gb_hostlist_match(const gb_hostlist_t *hl, const char *name);

/* RET the number of hosts, saturating at SIZE_MAX. */
size_t gb_hostlist_count(const gb_hostlist_t *hl);

/*
 * Append every host of [hl], in order, to [out]; refuses (GB_E_INVALID)
 * when there are more than [max].
 */
gb_err_t gb_hostlist_expand(const gb_hostlist_t *hl, size_t max,
			    struct gb_strv *out, gb_error_t *err);

#endif /* GB_LIBCOMMON_GB_HOSTLIST_H */
