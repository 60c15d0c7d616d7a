/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_slurm_cb.h - what Slurm must be told about EC2 Capacity Blocks
 *
 * A Capacity Block is EC2 capacity bought for a fixed window [start, end):
 * EC2 terminates its instances at (about 30 min before) the end.  For each
 * block that has live gpuburst nodes, gpuburst keeps in Slurm:
 *
 *  - the reservation GB_SLURM_CB_RESV_PREFIX<block id> on exactly those
 *    nodes from (end - margin) to end, a maintenance window (gb_slurm.h,
 *    "Reservations"): from the moment the block has a node, no job starts
 *    there whose time limit reaches past end - margin.  Its node list
 *    follows the nodes that join and leave the block; it is deleted once
 *    the block has no live node, or has ended;
 *  - from end - margin on, POWER_DOWN_ASAP on those nodes with the reason
 *    gb_reason_capacity_block(): drained at once, powered down when their
 *    jobs are done.
 *
 * gb_slurm_cb_plan() compares that with what Slurm has and lists what to
 * do; the caller does it, in the order given, with gb_slurm_resv_ensure(),
 * gb_slurm_nodes_update(GB_SLURM_POWER_DOWN_ASAP) and
 * gb_slurm_resv_delete().  A pure function: no libslurm, no controller,
 * no state file (libcommon only).
 */
#ifndef GB_LIBSLURMIF_GB_SLURM_CB_H
#define GB_LIBSLURMIF_GB_SLURM_CB_H

#include <stddef.h>

#include "gb_err.h"
#include "gb_slurm.h"
#include "gb_str.h"

/* "gpuburst_cb_cr-0aaaabbbbccccdddd": Slurm takes the '-' (checked on 22.05). */
#define GB_SLURM_CB_RESV_PREFIX "gpuburst_cb_"
#define GB_SLURM_CB_MARGIN_DEFAULT (40 * 60)	/* seconds before the end */
#define GB_SLURM_CB_ID_MAX 64			/* bytes of a block id, NUL included */

/* A Capacity Block and its live gpuburst nodes. */
struct gb_slurm_cb_block {
	const char *id;		/* "cr-0aaaabbbbccccdddd": 1..63 of [a-z0-9-] */
	double end;		/* epoch seconds */
	char *const *nodes;	/* its live gpuburst nodes, any order, duplicates ok */
	size_t n_nodes;
};

struct gb_slurm_cb_in {
	const struct gb_slurm_cb_block *blocks;
	size_t n_blocks;
	/* Slurm's reservations (gb_slurm_resv_list); those without
	 * GB_SLURM_CB_RESV_PREFIX are not gpuburst's and are left alone */
	const struct gb_slurm_resv *resvs;
	size_t n_resvs;
	/*
	 * Slurm's nodes (gb_slurm_nodes_load: sorted by name).  A node Slurm
	 * does not know is left out of everything (an update naming it would
	 * fail); one already powering down (POWER_DOWN with DRAIN, POWERING_DOWN,
	 * POWERED_DOWN) gets no POWER_DOWN_ASAP: sent to a powered-down node it
	 * would run SuspendProgram again.  NULL: every node is taken as known
	 * and up, so that POWER_DOWN comes again every time.
	 */
	const struct gb_slurm_node_list *nodes;
	double margin;		/* seconds; GB_SLURM_CB_MARGIN_DEFAULT */
	double now;		/* epoch seconds */
};

enum gb_slurm_cb_act {
	GB_SLURM_CB_ENSURE = 0,	/* gb_slurm_resv_ensure(&a->resv) */
	GB_SLURM_CB_POWER_DOWN,	/* gb_slurm_nodes_update(GB_SLURM_POWER_DOWN_ASAP,
				 * a->nodes.v, a->nodes.n, a->reason) */
	GB_SLURM_CB_DELETE,	/* gb_slurm_resv_delete(a->resv.name) */
};

struct gb_slurm_cb_action {
	enum gb_slurm_cb_act act;
	/* BORROWED from the input: the block (for a DELETE, the id in the
	 * reservation's name, whether or not the block is known) */
	const char *block;
	/*
	 * ENSURE: the reservation to ensure (start end - margin, which
	 * gb_slurm_resv_ensure() takes as now once past; comment = reason);
	 * DELETE: its name only.  Strings owned by the plan.
	 */
	struct gb_slurm_resv resv;
	struct gb_strv nodes;		/* ENSURE, POWER_DOWN: sorted, unique */
	char reason[GB_REASON_MAX];	/* ENSURE, POWER_DOWN: gb_reason_capacity_block() */
};

struct gb_slurm_cb_plan {
	struct gb_slurm_cb_action *v;
	size_t n;
};

/*
 * What to do so that Slurm matches the blocks of [in] (see above).  Blocks
 * in id order: ENSURE when the reservation is missing or differs (node
 * set, end, or a start not yet reached), then POWER_DOWN at or after end -
 * margin for the nodes not already powering down; then the DELETEs, in
 * name order, of gpuburst's reservations whose block is unknown, has no
 * live node Slurm knows, or has ended.  Nothing to do: an empty plan.
 * RET GB_E_INVALID (a bad or repeated block id, a negative margin),
 * GB_E_NOMEM.  OUT *out NEW (gb_slurm_cb_plan_free).
 */
gb_err_t gb_slurm_cb_plan(const struct gb_slurm_cb_in *in, struct gb_slurm_cb_plan **out,
			  gb_error_t *err);
void gb_slurm_cb_plan_free(struct gb_slurm_cb_plan *p);

/* RET static "ensure", "power_down_asap", "delete". */
const char *gb_slurm_cb_act_name(enum gb_slurm_cb_act act);

#endif /* GB_LIBSLURMIF_GB_SLURM_CB_H */
