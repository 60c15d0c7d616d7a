/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_resume_file.h - SLURM_RESUME_FILE: parse it, split nodes by job
 *
 * slurmctld gives ResumeProgram a JSON map of jobs to the nodes it resumes
 * for them, in a memfd named by $SLURM_RESUME_FILE, readable only while the
 * program runs (power_save.shtml: use it within ten seconds).  Two formats:
 *
 *   22.05  {"all_nodes": "g5-[1-3]",
 *           "jobs": [{"job_id": 7, "nodes": "g5-[1-2]"}, ...]}
 *   23.02+ {"all_nodes_resume": "g5-[1-3]",
 *           "jobs": [{"job_id": 7, "nodes_resume": "g5-[1-2]",
 *                     "nodes_alloc": "g5-[1-4]", "partition": "gpu",
 *                     "features": null, "reservation": null,
 *                     "extra": null, "oversubscribe": "OK", ...}]}
 *
 * The parser is strict about the types of the keys it uses and ignores
 * every other key (26.05 added "exclusive" and "priority"; later releases
 * may add more):
 *  - top level: an object with "all_nodes_resume" (23.02+) or "all_nodes"
 *    (22.05), a string; when both are present the 23.02 key wins;
 *    "jobs": an array, or absent/null (no jobs: a manual power-up);
 *  - each job: an object with "job_id" (an integer 1..4294967295; absent or
 *    null means "no job") and "nodes_resume" or "nodes" (a string, the
 *    nodes resumed for it now); "nodes_alloc", "partition", "features" and
 *    "reservation" are strings or null when present.
 * Anything else is GB_E_PARSE with a message naming the key and the job
 * index ("jobs[3].job_id: expected an integer, got string").  The
 * programs then fall back to argv (logging the message as a warning).
 */
#ifndef GB_LIBSLURMIF_GB_RESUME_FILE_H
#define GB_LIBSLURMIF_GB_RESUME_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "gb_err.h"
#include "gb_str.h"

#define GB_RESUME_FILE_ENV "SLURM_RESUME_FILE"
#define GB_RESUME_FILE_MAX (64u << 20)	/* bytes read at most */

enum gb_resume_format {
	GB_RESUME_FORMAT_2205 = 0,	/* all_nodes, jobs[].nodes */
	GB_RESUME_FORMAT_2302,		/* all_nodes_resume, jobs[].nodes_resume */
};

struct gb_resume_job {
	int64_t job_id;		/* 0: the entry had no job id */
	char *nodes;		/* hostlist resumed for the job now */
	char *nodes_alloc;	/* 23.02+: all nodes of the job, or NULL */
	char *partition;	/* 23.02+, or NULL */
	char *features;
	char *reservation;
	char *raw;		/* the job object as compact JSON (sorted keys) */
};

struct gb_resume_file {
	enum gb_resume_format format;
	char *all_nodes;	/* hostlist of every node resumed */
	struct gb_resume_job *jobs;
	size_t n_jobs;
};

/*
 * Parse [len] bytes of [text].  OUT *out NEW (gb_resume_file_free), NULL
 * on failure.  RET GB_E_OK, GB_E_PARSE (detail: what and where), GB_E_NOMEM.
 */
gb_err_t gb_resume_file_parse(const char *text, size_t len,
			      struct gb_resume_file **out, gb_error_t *err);

/*
 * Read and parse [path] (at most GB_RESUME_FILE_MAX bytes).
 * RET as gb_resume_file_parse, or GB_E_NOTFOUND / GB_E_IO for the file.
 */
gb_err_t gb_resume_file_read(const char *path, struct gb_resume_file **out,
			     gb_error_t *err);

void gb_resume_file_free(struct gb_resume_file *rf);

/* RET static "22.05" or "23.02". */
const char *gb_resume_format_name(enum gb_resume_format f);

/*
 * One group of nodes to resume for one job (job_id 0: no job).  [nodes]
 * keeps the order of the node list it was split from.
 */
struct gb_resume_group {
	int64_t job_id;
	const char *raw;		/* BORROWED from the file's job, or NULL */
	struct gb_strv nodes;		/* NEW names */
};

struct gb_resume_split {
	struct gb_resume_group *groups;
	size_t n_groups;
	struct gb_strv ignored;		/* in a job's list but not resumed */
};

/*
 * Split the nodes being resumed, [resume] (already expanded, normally
 * argv[1]; duplicates are dropped), by the jobs of [rf] (may be NULL: one
 * jobless group).  Each node goes to the first job that lists it, in file
 * order; nodes no job lists form one jobless group (job_id 0), last.  Job
 * entries without a job id add their nodes to the jobless group.  Nodes a
 * job lists that are not in [resume] are skipped and listed in
 * out->ignored.  Empty groups are not returned.
 * OUT *out filled (gb_resume_split_free).  RET GB_E_OK, GB_E_INVALID for
 * a malformed hostlist in the file (detail names the job), GB_E_NOMEM.
 */
gb_err_t gb_resume_split(const struct gb_resume_file *rf,
			 const struct gb_strv *resume,
			 struct gb_resume_split *out, gb_error_t *err);

void gb_resume_split_free(struct gb_resume_split *s);

#endif /* GB_LIBSLURMIF_GB_RESUME_FILE_H */
