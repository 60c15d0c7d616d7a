/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_slurm.h - libslurm glue: hostlists, node updates, node and job reads,
 * reservations
 *
 * The only gpuburst code that includes <slurm/slurm.h> (besides the
 * job_submit plugin, which must not link libslurm).  Built against the
 * Slurm it runs with (22.05 and later).
 *
 * Slurm's client library finds the controller through SLURM_CONF (which
 * slurmctld gives its power-save programs).  Without it libslurm reads its
 * compiled-in default file and, if that is missing too, goes "configless"
 * and asks DNS for SRV records; gb_slurm_init() refuses that case, so no
 * gpuburst program ever sends a DNS query on behalf of Slurm.
 *
 * Every call is serialised by one internal mutex (libslurm's client side
 * keeps global state); callers may use this module from several threads.
 * Errors from libslurm (slurm_get_errno / slurm_strerror) come back as
 * GB_E_SLURM with the Slurm message and the node list in the detail.
 */
#ifndef GB_LIBSLURMIF_GB_SLURM_H
#define GB_LIBSLURMIF_GB_SLURM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gb_err.h"
#include "gb_str.h"

#define GB_SLURM_UPDATE_BATCH 500	/* nodes per update RPC */

/*****************************************************************************
 *  Hostlists (no controller needed, no gb_slurm_init)
 *****************************************************************************/

/*
 * Append every host of Slurm hostlist [expr] to [out], in order, with
 * duplicates kept.  More than [max] hosts, an empty or malformed
 * expression: GB_E_INVALID naming [expr].
 */
gb_err_t gb_slurm_hostlist_expand(const char *expr, size_t max,
				  struct gb_strv *out, gb_error_t *err);

/*
 * Compress [n] names into a ranged hostlist expression ("g5-[1-3,7]"),
 * sorted and without duplicates, as Slurm prints them.
 * OUT *out NEW (free()).
 */
gb_err_t gb_slurm_hostlist_compress(char *const *names, size_t n, char **out,
				    gb_error_t *err);

/*****************************************************************************
 *  The controller
 *****************************************************************************/

/*
 * slurm_init(NULL) once per process (later calls return at once).
 * Refuses (GB_E_SLURM) when $SLURM_CONF is unset and the default
 * slurm.conf does not exist (see above), or when $SLURM_CONF names a file
 * that does not exist.
 */
gb_err_t gb_slurm_init(gb_error_t *err);

/*
 * Set NodeAddr and NodeHostname of nodes [names] to [addrs] and
 * [hostnames] (index-matched; either array may be NULL to leave that
 * field alone), in RPCs of GB_SLURM_UPDATE_BATCH nodes: 22.05 matches a
 * NodeName list to NodeAddr/NodeHostname lists by position
 * (node_mgr.c update_node, uniq=false).  When a batch fails (one unknown
 * node stops slurmctld at that node) its nodes are retried one by one, so
 * every good node is updated.  OUT *n_failed (may be NULL) how many nodes
 * could not be updated; the first failure is in [err].
 */
gb_err_t gb_slurm_nodes_set_addr(char *const *names, char *const *addrs,
				 char *const *hostnames, size_t n,
				 size_t *n_failed, gb_error_t *err);

/* NodeAddr = NodeHostname = the node's own name (what Slurm starts with). */
gb_err_t gb_slurm_nodes_clear_addr(char *const *names, size_t n,
				   size_t *n_failed, gb_error_t *err);

enum gb_slurm_node_action {
	GB_SLURM_DOWN = 0,		/* state=down reason=...: jobs requeue now */
	GB_SLURM_POWER_DOWN_FORCE,	/* state=power_down_force: back to idle~ */
	GB_SLURM_POWER_DOWN,		/* state=power_down: after jobs end */
	GB_SLURM_RESUME,		/* state=resume */
	GB_SLURM_POWER_DOWN_ASAP,	/* state=power_down_asap reason=...: DRAIN
					 * now (no new job), power down once
					 * the running jobs end (21.08+) */
};

/*
 * ActiveFeatures=[features_act] on nodes [names], batched like
 * gb_slurm_nodes_update.  Slurm keeps it a subset of AvailableFeatures,
 * without a node_features plugin too, across power-down (checked on
 * 22.05): a node of a nodeset of several instance types says which one it
 * got, and gets every type back when it is powered down.
 */
gb_err_t gb_slurm_nodes_set_active(char *const *names, size_t n,
				   const char *features_act, size_t *n_failed,
				   gb_error_t *err);

/*
 * [avail] (a comma-separated feature list) without the features of [drop].
 * RET NEW (free()), "" when nothing is left, NULL when out of memory.
 */
char *gb_slurm_features_without(const char *avail, const char *const *drop,
				size_t n_drop);

/*
 * Apply [action] with [reason] (required for DOWN and POWER_DOWN_ASAP;
 * may be NULL otherwise) to nodes [names], batched like
 * gb_slurm_nodes_set_addr (the node list is compressed into one
 * expression per batch).  POWER_DOWN_ASAP keeps [reason]: slurmctld sets
 * its own "POWER_DOWN_ASAP" only on a node without one (node_mgr.c
 * _drain_node, 22.05 to 26.05), and the reason is set first.  Seen on
 * 22.05 with CLOUD nodes: a node running a job is ALLOCATED+DRAIN+
 * POWER_DOWN until the job ends, then POWERING_DOWN, then POWERED_DOWN
 * (DRAIN cleared, the reason left); a node powering up for a job boots,
 * runs it, then does the same; a powered-down node is powered down again
 * (SuspendProgram runs once more): callers leave those out.
 */
gb_err_t gb_slurm_nodes_update(enum gb_slurm_node_action action,
			       char *const *names, size_t n,
			       const char *reason, size_t *n_failed,
			       gb_error_t *err);

/* RET static "down", "power_down_force", ... */
const char *gb_slurm_action_name(enum gb_slurm_node_action action);

/*****************************************************************************
 *  Reading nodes and jobs
 *****************************************************************************/

struct gb_slurm_node {
	char *name;
	char *addr;		/* NodeAddr */
	char *hostname;		/* NodeHostname */
	char *reason;		/* NULL when none */
	char *features;		/* AvailableFeatures, "" when none */
	char *features_act;	/* ActiveFeatures, "" when none */
	double reason_time;	/* epoch seconds, 0 when none */
	uint32_t state;		/* Slurm's node_state word */
	char *state_str;	/* "DOWN+CLOUD+POWERED_DOWN" (Slurm's spelling) */
	bool down, idle, allocated, cloud, drain, not_responding;
	bool powered_down, powering_up, powering_down, power_down_requested;
};

struct gb_slurm_node_list {
	struct gb_slurm_node *v;
	size_t n;
};

/*
 * slurm_load_node (all nodes, cloud ones included).  OUT *out NEW
 * (gb_slurm_node_list_free), sorted by name.
 */
gb_err_t gb_slurm_nodes_load(struct gb_slurm_node_list **out,
			     gb_error_t *err);
void gb_slurm_node_list_free(struct gb_slurm_node_list *l);

/* RET BORROWED node [name] of [l] (binary search), or NULL. */
const struct gb_slurm_node *gb_slurm_node_find(const struct gb_slurm_node_list *l,
					       const char *name);

/*
 * What a job says about itself: the AdminComment (the job_submit plugin's
 * intent tokens) and the user's own name and comment (untrusted text).
 * Every field NEW (free with gb_slurm_job_text_clear), NULL when unset.
 */
struct gb_slurm_job_text {
	char *admin_comment;
	char *name;
	char *comment;
	char *features;		/* the job's constraint (-C), or NULL */
	char *user;		/* who runs it, for cost attribution */
	char *account;
	char *partition;	/* the partition it runs in (or "a,b") */
	char *state;		/* "PENDING", "RUNNING+CONFIGURING", ... */
	char *reason;		/* why it waits, Slurm's word ("Resources",
				 * "JobHeldAdmin"); NULL: none */
	char *nodes;		/* the nodes it holds or held, or NULL */
	uint32_t num_nodes;
	uint32_t time_limit;	/* minutes; 0: none */
	double submit_time, start_time;	/* epoch s; 0: not yet */
};

/*
 * Load job [job_id] (slurm_load_job) into [out] (zeroed first).
 * RET GB_E_NOTFOUND when Slurm does not know the job (any more).
 */
gb_err_t gb_slurm_job_text(uint32_t job_id, struct gb_slurm_job_text *out,
			   gb_error_t *err);
void gb_slurm_job_text_clear(struct gb_slurm_job_text *t);

/* A job holding nodes (running, suspended, configuring or completing). */
struct gb_slurm_job {
	uint32_t job_id;
	uint32_t user_id;
	char *user;		/* user name, or NULL when Slurm did not say */
	char *name;		/* job name, or NULL */
	char *state;		/* "RUNNING", "COMPLETING", ... */
	char *nodes;		/* host list of all its nodes */
	bool requeue;		/* Slurm requeues it when its node fails */
};

struct gb_slurm_job_list {
	struct gb_slurm_job *v;
	size_t n;
};

/*
 * The jobs (slurm_load_jobs) that hold any of the nodes [names] ([n] of
 * them, any order), by job id.  OUT *out NEW (gb_slurm_job_list_free),
 * empty when none.  Needs gb_slurm_init().
 */
gb_err_t gb_slurm_jobs_on(char *const *names, size_t n,
			  struct gb_slurm_job_list **out, gb_error_t *err);
void gb_slurm_job_list_free(struct gb_slurm_job_list *l);

/*
 * Jobs held for approval at submit (job_submit/gpuburst: priority 0 and the
 * token GB_APPROVAL_KEY "pending" in the AdminComment).  Strings NEW.
 * slurmctld makes a plugin's priority 0 a user hold (JobHeldUser: it reads
 * the submitted priority after the plugin ran), which its user may
 * release; an operator's hold of the held job (GB_SLURM_JOB_HOLD) makes it
 * an admin hold (JobHeldAdmin).
 */
#define GB_APPROVAL_KEY "gpuburst:approval="
/* The job_submit plugin's cost estimate and budget tokens (its route.h). */
#define GB_COST_KEY "gpuburst:cost="
#define GB_BUDGET_KEY "gpuburst:budget="
struct gb_slurm_held_job {
	uint32_t job_id;
	uint32_t user_id;
	char *user;		/* user name, or NULL */
	char *account;		/* or NULL */
	char *partition;	/* "a,b", or NULL */
	char *name;		/* job name, or NULL */
	char *admin_comment;	/* never NULL */
	char *tres;		/* what it asks for, "cpu=4,node=2,gres/gpu=8" */
	uint32_t num_nodes;	/* asked for (at least) */
	uint32_t time_limit;	/* minutes; 0: none (INFINITE or unset) */
	bool user_hold;		/* JobHeldUser: its user may release it */
	int gpus;		/* GPUs asked for in all; -1: not known */
	bool allocated;		/* holds nodes (running, configuring,
				 * suspended or completing) */
};

struct gb_slurm_held_list {
	struct gb_slurm_held_job *v;
	size_t n;
};

/*
 * The pending jobs held with priority 0 whose AdminComment has a
 * GB_APPROVAL_KEY token (any value: the caller reads it), by job id.  OUT *out NEW
 * (gb_slurm_held_list_free), empty when none.  Needs gb_slurm_init().
 */
gb_err_t gb_slurm_jobs_held(struct gb_slurm_held_list **out, gb_error_t *err);
void gb_slurm_held_list_free(struct gb_slurm_held_list *l);

/*
 * Job [job_id] in the same shape, whatever its state (NEW strings:
 * gb_slurm_held_job_clear).  RET GB_E_NOTFOUND when Slurm does not know it.
 */
gb_err_t gb_slurm_job_brief(uint32_t job_id, struct gb_slurm_held_job *out,
			    gb_error_t *err);
void gb_slurm_held_job_clear(struct gb_slurm_held_job *j);

/*
 * What an approval decision does to a job, as an administrator's update
 * would (slurm_update_job; slurm_kill_job for CANCEL; slurm_requeue for
 * REQUEUE_HOLD): RELEASE (priority back to Slurm's), HOLD (priority 0: an
 * admin hold, which the user cannot release), CANCEL, REQUEUE_HOLD (a job
 * waiting for its nodes back to pending, held: a denied power-up does not
 * ask again).  RELEASE and HOLD also set the AdminComment to
 * [admin_comment] (NULL: unchanged).  RET GB_E_OK, GB_E_NOTFOUND (no such
 * job, or not in a state the action applies to: nothing done), GB_E_PERM
 * (REQUEUE_HOLD of a job that may not be requeued), GB_E_SLURM.
 */
enum gb_slurm_job_action {
	GB_SLURM_JOB_RELEASE = 0,
	GB_SLURM_JOB_HOLD,
	GB_SLURM_JOB_CANCEL,
	GB_SLURM_JOB_REQUEUE_HOLD,
};
gb_err_t gb_slurm_job_act(uint32_t job_id, enum gb_slurm_job_action a,
			  const char *admin_comment, gb_error_t *err);

/*
 * gb_slurm_job_act() with the job's AdminComment token set to
 * GB_APPROVAL_KEY[value] ("approved/ID", "denied/ID", "expired"), the rest
 * of the comment kept (REQUEUE_HOLD: requeued and held first, then the
 * comment, best effort).  RET as gb_slurm_job_act (GB_E_NOTFOUND: the job
 * is gone or no longer pending).
 */
gb_err_t gb_slurm_held_act(uint32_t job_id, enum gb_slurm_job_action a,
			   const char *value, gb_error_t *err);

/*
 * The AdminComment [old] with every GB_APPROVAL_KEY token replaced by
 * GB_APPROVAL_KEY[value] (appended when there was none).  OUT *out NEW.
 */
gb_err_t gb_approval_comment(const char *old, const char *value, char **out,
			     gb_error_t *err);
/*
 * GPUs a job asks for in all, from its --gpus ([per_job]) or
 * --gres/--gpus-per-node ([per_node], times [nodes]) TRES strings, in any
 * release's spelling ("gres:gpu:a10g:2", "gres/gpu:2", "gres/gpu=4",
 * "gpu:2", several items): RET the count, 0 for none, -1 when not
 * understood.
 */
int gb_tres_gpus(const char *per_job, const char *per_node, uint32_t nodes);

/*
 * The value of the first GB_APPROVAL_KEY token of [admin_comment] into
 * [buf] ("pending/4"); RET whether there is one.
 */
bool gb_approval_token(const char *admin_comment, char *buf, size_t n);

/*
 * The value of the first [key] token ("gpuburst:cost=") of [admin_comment]
 * (a whole word: after the start or a delimiter) into [buf]; RET whether
 * there is one.
 */
bool gb_admin_token(const char *admin_comment, const char *key, char *buf, size_t n);

/*
 * The plugin's estimate, GB_COST_KEY "LIKELY/WORST" of [admin_comment],
 * into *cost and *worst (US dollars).  RET false, both -1, when there is
 * none or it is not two numbers with 0 <= LIKELY <= WORST.
 */
bool gb_cost_token(const char *admin_comment, double *cost, double *worst);

/*
 * The Slurm version this gpuburst (and its job_submit plugin, which must
 * match slurmctld exactly) was built against, "22.05.8", into [buf] of
 * [n] bytes; RET [buf].  _number: SLURM_VERSION_NUMBER (0x160508).
 */
char *gb_slurm_built_version(char *buf, size_t n);
unsigned long gb_slurm_built_version_number(void);

/*
 * The version the running slurmctld reports (slurm_load_ctl_conf) into
 * [buf] of [n] bytes.  Needs gb_slurm_init().  RET GB_E_OK or GB_E_SLURM.
 */
gb_err_t gb_slurm_ctl_version(char *buf, size_t n, gb_error_t *err);

/*
 * The running power-saving configuration (scontrol show config, scontrol
 * show partition): what decides which nodes Slurm may power down into
 * gpuburst's programs.  Times in seconds, -1 when not set (or INFINITE).
 */
struct gb_slurm_power_part {
	char *name;
	char *nodes;		/* hostlist expression, "" for none */
	long suspend_time;
	long resume_timeout;
};

struct gb_slurm_power {
	long suspend_time;		/* the global one */
	long resume_timeout;
	char *slurmctld_params;		/* "" when unset */
	char *suspend_exc_nodes;
	char *suspend_exc_parts;
	struct gb_slurm_power_part *parts;
	size_t n_parts;
};

/* Needs gb_slurm_init().  OUT *out NEW (gb_slurm_power_free). */
gb_err_t gb_slurm_power_load(struct gb_slurm_power **out, gb_error_t *err);
void gb_slurm_power_free(struct gb_slurm_power *p);

/*****************************************************************************
 *  Reservations: maintenance windows on given nodes (needs gb_slurm_init)
 *
 *  What gpuburst reserves is a window in which no job may run on the
 *  nodes: Flags=MAINT,IGNORE_JOBS, Users=root.  The scheduler (main and
 *  backfill: reservation.c job_test_resv) starts no job outside the
 *  reservation whose time limit reaches into the window (without one, the
 *  partition's MaxTime; INFINITE counts as a year).  Such a job pends with
 *  "ReqNodeNotAvail, Reserved for maintenance" when the window covers
 *  every node of its partition, else runs elsewhere or pends with
 *  "Resources" (seen on 22.05).  IGNORE_JOBS lets it be created
 *  and changed while jobs run into the window ("Requested nodes are busy"
 *  otherwise); MAINT lets it overlap other reservations.  Running jobs
 *  are left alone.  Names: '-' is accepted ("gpuburst_cb_cr-0a..." was
 *  created on 22.05); ',' is not (a job's --reservation list).
 *****************************************************************************/

struct gb_slurm_resv {
	const char *name;
	const char *nodes;	/* hostlist expression ("a-[1-3]" or "a-1,a-2") */
	double start, end;	/* epoch seconds */
	const char *comment;	/* NULL for none; Slurm keeps it from 23.02
				 * (older releases have no field: ignored) */
};

enum gb_slurm_resv_did {
	GB_SLURM_RESV_UNCHANGED = 0,	/* it was already so: no RPC sent */
	GB_SLURM_RESV_CREATED,
	GB_SLURM_RESV_UPDATED,
};

/*
 * Create reservation [r]->name as above, or, when it exists, update what
 * differs from [r]: the node set (compared as a set), the end, the flags,
 * the comment, and the start while the reservation has not started
 * (Slurm refuses to move the start of a started one; the window is then
 * already there).  A start in the past is sent as now (Slurm refuses a
 * start more than 10 min back when creating, 1 min when updating).
 * Idempotent: the same call twice sends nothing the second time.  OUT
 * *did (may be NULL) what was done.  RET GB_E_INVALID (no name, a ',' in
 * it, no nodes, end not after start, end in the past), GB_E_SLURM (with
 * Slurm's message: an unknown node, not root), GB_E_NOMEM.
 */
gb_err_t gb_slurm_resv_ensure(const struct gb_slurm_resv *r,
			      enum gb_slurm_resv_did *did, gb_error_t *err);

/* Delete reservation [name]; one Slurm does not know is GB_E_OK. */
gb_err_t gb_slurm_resv_delete(const char *name, gb_error_t *err);

/*
 * Call [cb] with every reservation whose name starts with [prefix] (NULL
 * or "": all), in Slurm's order; the strings [cb] sees are BORROWED for
 * that call.  [cb] may call this module (no lock is held).  RET GB_E_OK,
 * GB_E_SLURM, GB_E_NOMEM, or GB_E_CANCELLED when [cb] returned non-zero
 * (the walk stops there).
 */
gb_err_t gb_slurm_resv_list(const char *prefix,
			    int (*cb)(const struct gb_slurm_resv *r, void *arg),
			    void *arg, gb_error_t *err);

/*****************************************************************************
 *  Text: node reasons and the job_submit plugin's intent (pure functions)
 *****************************************************************************/

#define GB_REASON_PREFIX "gpuburst: "
#define GB_REASON_CAPACITY_PREFIX "gpuburst: (Code:"
/* Set by the programs when they could not do their part (gb_prog.h). */
#define GB_REASON_CONFIG "gpuburst: configuration error: "
#define GB_REASON_NO_NODESET "gpuburst: node in no nodeset of "
#define GB_REASON_STATE "gpuburst: cannot queue the resume (state file)"
#define GB_REASON_RESUME_FILE "gpuburst: cannot read the resume file: "
#define GB_REASON_MAX 256		/* bytes, NUL included */
#define GB_INTENT_HOME_KEY "gpuburst:home="
#define GB_REGION_NAME_MAX 64

/*
 * The reason of a node a resume could not fill:
 * "gpuburst: (Code:<code>) <text> req=<id>".  [code] NULL/"" becomes
 * "Unfilled"; [text] is cut to keep the whole under GB_REASON_MAX with
 * control characters turned into blanks.  RET [buf].
 */
char *gb_reason_capacity(char *buf, size_t n, const char *code,
			 const char *text, const char *request_id);

/*
 * The reason of a node drained (power_down_asap) before its Capacity
 * Block ends: "gpuburst: capacity block <id> ends <end as
 * 2026-05-01T11:30:00Z>"; [id] is cut to keep it under [n].  RET [buf].
 */
#define GB_REASON_CAPACITY_BLOCK "gpuburst: capacity block "
char *gb_reason_capacity_block(char *buf, size_t n, const char *block_id, double end);

/*
 * Parse a reason made by gb_reason_capacity: RET whether [reason] starts
 * with GB_REASON_CAPACITY_PREFIX; the code and the request id (when the
 * reason ends with " req=<16 hex>") are copied out when their buffers are
 * not NULL ("" when absent).
 */
bool gb_reason_is_capacity(const char *reason, char *code, size_t code_n,
			   char *request_id, size_t id_n);

/*
 * Set by gpuburst-node, the agent on the instance, on its own node
 * (doc/gpuburst-node, "What it writes"): "gpuburst: spot interruption:
 * instance i-X at T" (DRAIN, jobs requeued, then POWER_DOWN_ASAP),
 * "gpuburst: rebalance recommendation: instance i-X" (POWER_DOWN_ASAP),
 * "gpuburst: unhealthy: instance i-X: SUMMARY" (POWER_DOWN_FORCE; also set
 * by reconcile when only the instance's tag says so).
 */
#define GB_REASON_SPOT "gpuburst: spot interruption: instance "
#define GB_REASON_REBALANCE "gpuburst: rebalance recommendation: instance "
#define GB_REASON_UNHEALTHY "gpuburst: unhealthy: instance "
#define GB_INSTANCE_ID_MAX 20		/* "i-" + 17 hex + NUL (EC2's ids) */

enum gb_reason_agent {
	GB_REASON_AGENT_NONE = 0,	/* not one of the agent's reasons */
	GB_REASON_AGENT_SPOT,
	GB_REASON_AGENT_REBALANCE,
	GB_REASON_AGENT_UNHEALTHY,
};

/*
 * Parse a reason of the agent: RET which one, and the instance it names
 * into [id] (of at least GB_INSTANCE_ID_MAX bytes; "" for NONE).  The id
 * must be EC2's: "i-" and 8 or 17 lower-case hex digits, followed by the
 * end, a blank or ':'; a reason with the prefix and another id is NONE
 * (it is not one gpuburst can act on).
 */
enum gb_reason_agent gb_reason_agent(const char *reason, char *id);

/*
 * "gpuburst: unhealthy: instance <id>: <summary>" into [buf]: what
 * reconcile sets when only the instance's gpuburst:agent tag says it
 * failed its GPU check; [summary] is cut to fit [n] with control
 * characters turned into blanks.  RET [buf].
 */
char *gb_reason_unhealthy(char *buf, size_t n, const char *instance_id,
			  const char *summary);

/*
 * Find the home-region intent of the job_submit plugin in a job's
 * AdminComment: the token "gpuburst:home=<region>", delimited by the start
 * or end of the string, blanks, ';' or ','.  The region is 1..63 of
 * [a-z0-9-].  Several tokens must agree.
 * RET GB_E_OK (region in [buf]), GB_E_NOTFOUND (no token; [buf] ""),
 * GB_E_INVALID (a malformed or conflicting token; detail says which).
 */
gb_err_t gb_intent_home_region(const char *admin_comment, char *buf,
			       size_t n, gb_error_t *err);

#endif /* GB_LIBSLURMIF_GB_SLURM_H */
