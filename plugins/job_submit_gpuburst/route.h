/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * route.h - job_submit/gpuburst decisions, without Slurm types
 *
 * The plugin copies the few job fields it needs into struct gb_route_job,
 * asks gb_route_job() what to do, and applies the answer to Slurm's job
 * descriptor.  Everything here is plain C over a loaded gb_conf, so the
 * rules are unit-tested without slurmctld.  doc/job_submit_gpuburst.md is
 * the user-facing description of the same rules.
 *
 * A route table (gb_route_t) is built once per configuration load and is
 * read-only afterwards: gb_route_job() may run in several threads at once.
 * It allocates nothing for jobs it leaves alone, and only the strings it
 * hands back otherwise.
 */
#ifndef GB_PLUGIN_ROUTE_H
#define GB_PLUGIN_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gb_conf.h"
#include "gb_err.h"
#include "gb_str.h"

/* The home-region key, in the job's comment and in its admin comment. */
#define GB_ROUTE_HOME_KEY "gpuburst:home="
/*
 * A job held for approval at submit: "gpuburst:approval=pending/NODES" in
 * its admin comment (libslurmif's GB_APPROVAL_KEY reads it back).
 */
#define GB_ROUTE_APPROVAL_KEY "gpuburst:approval="
/* The job's cost estimate, "gpuburst:cost=LIKELY/WORST" (US dollars). */
#define GB_ROUTE_COST_KEY "gpuburst:cost="
/* The budget a held job would go over, "gpuburst:budget=NAME". */
#define GB_ROUTE_BUDGET_KEY "gpuburst:budget="

typedef struct gb_route gb_route_t;

/*
 * Build the route table of [conf] (BORROWED: it must outlive the table).
 * OUT *out NEW (gb_route_destroy).  RET GB_E_OK or GB_E_NOMEM.
 */
gb_err_t gb_route_create(const struct gb_conf *conf, gb_route_t **out,
			 gb_error_t *err);
void gb_route_destroy(gb_route_t *r);

/* RET BORROWED "gpuburst, gpuburst-tokyo" (the burst partitions), or "". */
const char *gb_route_partitions(const gb_route_t *r);

/* The fields of a job that matter here.  Strings BORROWED, NULL: not given. */
struct gb_route_job {
	const char *partition;		/* "a,b" */
	const char *features;		/* constraint expression */
	const char *tres_per_job;	/* "gres:gpu:a10g:2,..." */
	const char *tres_per_node;
	const char *tres_per_socket;
	const char *tres_per_task;
	const char *comment;
	const char *admin_comment;
	uint32_t min_nodes;		/* 0: not given */
	uint32_t max_nodes;		/* 0: not given */
	uint32_t num_tasks;		/* 0: not given */
	uint32_t ntasks_per_node;	/* 0: not given */
	uint32_t time_limit;		/* minutes; 0: not given */
	uint32_t user_id;		/* who submits it */
	const char *account;		/* -A, NULL: not given (the default
					 * account is not known here) */
	bool update;			/* job_modify(): only the changed fields */
	/* what budgets judge against (NULL: nothing spent known) and when */
	const struct gb_spend_summary *spent;
	double now;
};

enum gb_route_verdict {
	GB_ROUTE_UNTOUCHED = 0,		/* not a burst job: leave it alone */
	GB_ROUTE_ACCEPT,		/* accept it with the changes below */
	GB_ROUTE_REJECT,		/* refuse it; msg says why */
};

/* Why a job was refused (the plugin maps these to Slurm error codes). */
enum gb_route_reason {
	GB_ROUTE_OK = 0,
	GB_ROUTE_BAD_TYPE,		/* instance type forbidden or not offered */
	GB_ROUTE_BAD_HOME,		/* home region outside every fallback group */
	GB_ROUTE_BAD_MODEL,		/* no burst nodeset has this GPU model */
	GB_ROUTE_TOO_MANY_GPUS,		/* per node or in total */
	GB_ROUTE_TOO_MANY_NODES,
	GB_ROUTE_NO_NODESET,		/* e.g. single_region nodesets elsewhere */
	GB_ROUTE_BUDGET,		/* over a budget whose jobs are refused */
	GB_ROUTE_NOMEM,
};

/*
 * What to do with a job.  Zero-initialise (or gb_route_result_init) and
 * release with gb_route_result_free().  An empty buffer means "leave this
 * field as it is".
 */
struct gb_route_result {
	enum gb_route_verdict verdict;
	enum gb_route_reason reason;
	struct gb_buf msg;		/* for the user: why refused, or a notice */
	struct gb_buf partition;	/* new partition list */
	struct gb_buf features;		/* new constraint */
	struct gb_buf admin_comment;	/* new admin comment (home recorded) */
	const char *home;		/* validated home region, BORROWED, or NULL */
	uint64_t nodes;			/* cloud nodes the job needs (estimate) */
	bool needs_approval;		/* nodes above the approval threshold */
	bool hold;			/* held at submit until approved
					 * (policy.approve_at_submit, or a
					 * budget): set the job's priority to 0 */
	double estimate;		/* US dollars: nodes x time limit x the
					 * price of the likeliest pool; < 0:
					 * not known */
	double worst;			/* ... of the dearest pool it may get */
	const struct gb_conf_budget *budget;	/* the one it would go over */
};

void gb_route_result_init(struct gb_route_result *res);
void gb_route_result_free(struct gb_route_result *res);

/* Decide about [job].  RET res->verdict. */
enum gb_route_verdict gb_route_job(const gb_route_t *r,
				   const struct gb_route_job *job,
				   struct gb_route_result *res);

/*****************************************************************************
 *  The parsers, exposed for the unit tests
 *****************************************************************************/

/* GPUs asked for by one tres_per_* string. */
struct gb_route_gpus {
	uint64_t count;			/* 0: no GPU asked for */
	const char *model;		/* BORROWED from the string, not terminated */
	size_t model_len;		/* 0: any model */
	bool complex;			/* several GPU items, or one not understood */
};

/*
 * Parse [tres] ("gres:gpu:a10g:2,gres:mps:10", "gres/gpu=4", "gpu:l4").
 * Items that are not GPUs are ignored.  RET whether a GPU was asked for
 * (count > 0, or complex).
 */
bool gb_route_parse_gpus(const char *tres, struct gb_route_gpus *out);

/* RET whether [s] of [len] bytes looks like an EC2 instance type ("m7i.xlarge"). */
bool gb_route_is_instance_type(const char *s, size_t len);

/*
 * Find "gpuburst:home=REGION" in [text] (a whole word).  RET a BORROWED
 * pointer to REGION with *len set (0 for an empty value), or NULL.
 */
const char *gb_route_find_home(const char *text, size_t *len);

#endif /* GB_PLUGIN_ROUTE_H */
