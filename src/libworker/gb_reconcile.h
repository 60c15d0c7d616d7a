/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_reconcile.h - make the state file and Slurm agree with the cloud
 *
 * The cloud's tags are the ground truth (anchors.md §1.7, §2.4: every
 * Slurm cloud plugin needs such a fixer).  One pass does, in this order:
 *
 *  STUCK     a request still queued or running past policy.request_deadline
 *            after its creation -> failed, reason "deadline passed";
 *            (pending_approval requests expire by the approval rules);
 *  LOST      a live record whose instance the cloud no longer has running
 *            (terminated behind our back, spot reclaim), launched more than
 *            policy.orphan_timeout ago -> record closed as lost with
 *            terminated_at; its node, if Slurm still has it up or powering
 *            up, set DOWN (jobs requeue now), then power_down_force;
 *  ORPHAN    a pending/running instance tagged gpuburst:cluster=<ours>
 *            that no live record explains and no node's NodeAddr points
 *            at, older than policy.orphan_timeout -> terminated;
 *  GROUP     a placement group tagged gpuburst:cluster=<ours> and named
 *            as gpuburst names its groups ("gpuburst-<cluster>-<request>-
 *            <az>"), whose request (tag gpuburst:request) is not queued or
 *            running -> deleted; EC2 refuses while an instance is still in
 *            it (InvalidPlacementGroup.InUse): kept for a later pass,
 *            without an action;
 *  BLOCK     EC2 Capacity Blocks with live gpuburst nodes (instances
 *            recorded with capacity capacity-block, the block's end from
 *            the reservations cache): a Slurm reservation
 *            "gpuburst_cb_<id>" on those nodes from the end less
 *            policy.capacity_block_margin to the end (MAINT, IGNORE_JOBS:
 *            no job starts there whose time limit reaches into it), kept
 *            to the block's nodes; from then on, the nodes
 *            POWER_DOWN_ASAP with "gpuburst: capacity block <id> ends
 *            <time>" (drained, powered down once their jobs end); the
 *            reservation deleted once the block has no live node
 *            (gb_slurm_cb_plan).  No cloud call: in the cheap pass too;
 *  COOLDOWN  a node of a nodeset DOWN because a resume could not launch
 *            ("gpuburst: (Code:...) ... req=<id>"), once its wait is over
 *            (counted from the end of the request named in the reason,
 *            else from the reason's time) -> state=power_down_force (back
 *            to idle~).  The wait: policy.ice_cooldown for capacity codes;
 *            for a launch the cloud refused (an AUTH or CONFIG code such as
 *            UnauthorizedOperation or InvalidAMIID.NotFound)
 *            policy.error_cooldown, doubled for each failed resume of the
 *            node in a row, at most policy.error_cooldown_max;
 *  EXPIRE    a pending approval past its deadline (gb_policy_expire): the
 *            request (and the rest of its job) -> expired, its nodes DOWN
 *            with "gpuburst: resume approval expired" (jobs requeue now);
 *  RELEASE   a node of a nodeset DOWN because its resume was denied or its
 *            approval expired ("gpuburst: resume denied by ...",
 *            "gpuburst: resume approval expired") -> state=power_down_force
 *            at once; one DOWN because a program could not use its
 *            configuration, its resume file or the state file, or found
 *            it in no nodeset (GB_REASON_CONFIG, _RESUME_FILE, _STATE,
 *            _NO_NODESET) -> the same after policy.error_cooldown;
 *  NOTICE    what an instance's agent (gpuburst-node) reported, before
 *            LOST (the record of a reclaimed spot instance is still live):
 *            a node of a nodeset whose Slurm reason is the agent's
 *            "gpuburst: spot interruption: instance i-X ..." or
 *            "gpuburst: unhealthy: instance i-X ..." (gb_reason_agent),
 *            where i-X is the node's newest live record -> once per
 *            instance (instances.noticed_at, a compare-and-set committed
 *            with the memory: across passes and processes) the record's
 *            offering (region, AZ, instance type, capacity kind) recorded
 *            in capacity memory as an ICE (gb_state_capacity_record with
 *            ice, as the orchestrator records a pool that ran dry; a failed
 *            GPU check also as a resume failure), so the planners avoid it
 *            for policy.ice_cooldown.  The node is left to Slurm (the agent
 *            set DRAIN + POWER_DOWN_ASAP or POWER_DOWN_FORCE; the suspend
 *            terminates the instance).  A reason naming another instance
 *            is stale: ignored.  Full pass only, with the cloud's tags:
 *            the gpuburst:agent tag of every live record is stored on it
 *            (bookkeeping, no action); the newest live instance of a node
 *            of a nodeset, pending or running, whose tag starts with
 *            "unhealthy:" and whose node has no such reason (the agent
 *            could not reach Slurm) -> the same memory (once), then the
 *            instance terminated (record closed as terminated, reason
 *            "unhealthy (reconcile): SUMMARY") and its node, unless off,
 *            power_down_force with "gpuburst: unhealthy: instance i-X:
 *            SUMMARY" (SUMMARY: the tag after "unhealthy: ");
 *  SPOT      full pass, not a dry run: per region, the spot prices in
 *            effect (DescribeSpotPriceHistory, Linux/UNIX, StartTime now)
 *            of every instance type a nodeset with a spot rung can launch
 *            there (its candidate regions), when one of them was asked
 *            for longer than policy.spot_price_ttl ago (0: every pass),
 *            into the state file (gb_state_spot_prices_replace): one
 *            action per region asked, target the region; a failure is
 *            its error and keeps what was cached;
 *  PRUNE     with opts.prune: finished requests past policy.retention,
 *            with their rows, and global events as old (gb_state_prune):
 *            at most GB_RECONCILE_PRUNE_MAX requests a pass, the oldest
 *            first; one action with the counts (rep->pruned), none when
 *            nothing is due or retention is off.
 *
 * A node in no nodeset of the configuration is never touched.
 * The cheap pass does STUCK, EXPIRE, NOTICE (Slurm's reasons), BLOCK,
 * COOLDOWN, RELEASE (and PRUNE when asked): no cloud call.  opts.only_notice
 * does NOTICE alone, from Slurm's reasons: the worker's pass before each
 * drain, so that the resume of a requeued job already avoids the offering.
 * The worker's cheap pass, after each drain, does not prune: a first pass
 * over a long history would hold the write lock while requests wait;
 * gpuburstctl reconcile (the timer) does.  Every action is logged and
 * recorded as an event (kind "reconcile"); a dry run
 * decides the same actions and does none (PRUNE only counts).
 */
#ifndef GB_LIBWORKER_GB_RECONCILE_H
#define GB_LIBWORKER_GB_RECONCILE_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_conf.h"
#include "gb_err.h"
#include "gb_orch.h"
#include "gb_slurm.h"
#include "gb_state.h"

enum gb_reconcile_kind {
	GB_RECONCILE_STUCK = 0,
	GB_RECONCILE_LOST,
	GB_RECONCILE_ORPHAN,
	GB_RECONCILE_COOLDOWN,
	GB_RECONCILE_EXPIRE,
	GB_RECONCILE_RELEASE,
	GB_RECONCILE_PRUNE,
	GB_RECONCILE_GROUP,
	GB_RECONCILE_BLOCK,
	GB_RECONCILE_NOTICE,
	GB_RECONCILE_HELD,		/* a job held at submit gets its approval */
	GB_RECONCILE_SPOT,		/* spot prices fetched into the cache */
	GB_RECONCILE_KIND_COUNT
};

/* The tag gpuburst-node writes on its own instance, and its failed-check word. */
#define GB_RECONCILE_AGENT_TAG "gpuburst:agent"
#define GB_RECONCILE_AGENT_UNHEALTHY "unhealthy:"

/* Requests one pass prunes at most (a timer pass a minute catches up fast). */
#define GB_RECONCILE_PRUNE_MAX 1000

struct gb_reconcile_action {
	enum gb_reconcile_kind kind;
	char *target;		/* request id, "region#instance", or node */
	char *node;		/* the Slurm node concerned, or NULL */
	char *detail;		/* one line: why */
	bool done;		/* carried out (false in a dry run) */
	char *error;		/* why it could not be done, or NULL */
};

struct gb_reconcile_report {
	struct gb_reconcile_action *v;
	size_t n;
	size_t counts[GB_RECONCILE_KIND_COUNT];
	size_t failed;		/* actions with an error */
	size_t running;		/* pending records the cloud lists running
				 * (marked running; counted in a dry run) */
	bool cloud_checked;	/* LOST/ORPHAN ran (not cheap, cloud answered) */
	char *cloud_error;	/* why LOST/ORPHAN were skipped, or NULL */
	char *slurm_error;	/* why the node checks were skipped, or NULL */
	bool skipped;		/* another pass held the lock (lock_wait < 0) */
	struct gb_state_prune_counts pruned;	/* PRUNE's rows (dry run: due) */
};

struct gb_reconcile_opts {
	const struct gb_conf *conf;	/* BORROWED */
	gb_state_t *st;			/* BORROWED read-write handle */
	gb_orch_t *orch;		/* BORROWED; NULL: cheap pass only */
	bool dry_run;
	bool cheap;			/* no cloud call */
	double now;			/* 0: the clock */
	bool prune;			/* PRUNE too */
	bool only_notice;		/* NOTICE alone (the worker, before each
					 * drain): one Slurm node read, and the
					 * live records only when a node has an
					 * agent's reason; no cloud call */
	const struct gb_slurm_node_list *nodes;	/* BORROWED: Slurm's nodes as
					 * read by the caller; NULL: read them */
	/*
	 * Passes that act (not dry runs, not only_notice) run one at a time:
	 * each holds reconcile.lock (flock) in the directory of the state
	 * file, so that two of them
	 * (the worker's cheap pass and the timer's, say) never both act on
	 * what they read before the other acted.  Seconds to wait for it:
	 * 0: GB_RECONCILE_LOCK_WAIT; < 0: not at all (busy: the pass is
	 * skipped, rep->skipped, GB_E_OK: the pass in progress does the same).
	 */
	double lock_wait;
};
#define GB_RECONCILE_LOCK_WAIT 120.0
#define GB_RECONCILE_LOCK "reconcile.lock"

/*
 * One pass.  Slurm must be initialised (gb_slurm_init) unless the node
 * reads fail gracefully (then COOLDOWN and the node parts are skipped
 * and the error is reported).  OUT [rep] (zero it first;
 * gb_reconcile_report_clear).  RET GB_E_OK when the pass ran, even if
 * some actions failed (see rep->failed), or when it was skipped (see
 * rep->skipped); GB_E_BUSY when another pass held the lock for longer
 * than lock_wait, GB_E_IO when the lock cannot be opened; otherwise an
 * error only for a broken state file.
 */
gb_err_t gb_reconcile_run(const struct gb_reconcile_opts *o,
			  struct gb_reconcile_report *rep, gb_error_t *err);
void gb_reconcile_report_clear(struct gb_reconcile_report *rep);

/* RET static "stuck", "lost", "orphan", "cooldown", "expire", "release",
 * "prune", "group", "block", "notice", "held", "spot". */
const char *gb_reconcile_kind_name(enum gb_reconcile_kind k);

#endif /* GB_LIBWORKER_GB_RECONCILE_H */
