/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * node_int.h - gpuburst-node's parts (the program on each cloud instance)
 *
 * node_text.c  pure functions: the user data's node list, the nvidia-smi
 *              check, IMDS notice documents, the Slurm reasons and the
 *              gpuburst:agent tag values (unit-tested);
 * node_ident.c the instance's identity from IMDSv2 and its node name;
 * node_act.c   what it does outside: programs (nvidia-smi, dcgmi,
 *              scontrol, squeue), the tag, the munge key check;
 * node_run.c   the run: health, slurmd, the notice loop;
 * node_munge.c `munge-key`: the sealed munge key of the user data, opened
 *              and written for munged.
 */
#ifndef GB_NODE_NODE_INT_H
#define GB_NODE_NODE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_err.h"
#include "gb_imds.h"
#include "gb_node_conf.h"
#include "gb_str.h"

#define NODE_TAG_KEY "gpuburst:agent"
#define NODE_NAME_TAG "gpuburst:node"
#define NODE_TAG_MAX 255		/* characters of the tag's value */
#define NODE_NAME_MAX 64		/* a node name, as a host name */
#define NODE_USERDATA_KEY "GPUBURST_NODES"
#define NODE_SUMMARY_MAX 512
#define NODE_TIME_MAX 32		/* "2026-12-06T12:34:56Z" */

/* ---- node_text.c -------------------------------------------------------- */

/* RET whether [s] is a usable node name: 1..64 of [A-Za-z0-9._-]. */
bool node_name_ok(const char *s);

/*
 * The node list of the user data [ud] ([len] bytes): the first line
 * "GPUBURST_NODES=n1 n2 ..." (leading blanks and "export " allowed, the
 * value may be in single or double quotes), as gpuburst renders {nodes}.
 * OUT [out] the names (appended).
 * RET GB_E_OK; GB_E_NOTFOUND (no such line); GB_E_PARSE (an empty list,
 * an unterminated quote, a name that is not a node name: [err] names it
 * and the line); GB_E_NOMEM.
 */
gb_err_t node_userdata_nodes(const char *ud, size_t len, struct gb_strv *out,
			     gb_error_t *err);

/*
 * What the GPU check expects: [gpus] of a model whose nvidia-smi name
 * contains [model] (case-insensitive), e.g. 8 x "H100".
 */
struct node_gpu_expect {
	int gpus;
	const char *model;
};

/*
 * Check the output of `nvidia-smi --query-gpu=name --format=csv,noheader`
 * ([out], one GPU name per line) against [e].  Always writes a summary of
 * what was seen to [summary] of [n] bytes: "expected 8 x H100,
 * nvidia-smi shows 7 x NVIDIA H100 80GB HBM3" (several names: "3 x A,
 * 1 x B"; none: "no GPU").
 * RET GB_E_OK (count and every name match); GB_E_INVALID (they do not);
 * GB_E_PARSE (a line that is not a GPU name: a control character, or
 * longer than 256 bytes; the summary names the line).
 */
gb_err_t node_gpu_check(const char *out, const struct node_gpu_expect *e,
			char *summary, size_t n);

/*
 * EC2's spot/instance-action document, {"action": "terminate", "time":
 * "2026-12-06T12:34:56Z"}.  OUT [action] (terminate, stop, hibernate)
 * and [t] (UTC, "YYYY-MM-DDTHH:MM:SSZ") of NODE_TIME_MAX bytes each.
 * RET GB_E_OK or GB_E_PARSE ([err] says what is wrong).
 */
gb_err_t node_spot_parse(const char *json, char *action, char *t, gb_error_t *err);

/* events/recommendations/rebalance, {"noticeTime": "..."}: as above. */
gb_err_t node_rebalance_parse(const char *json, char *t, gb_error_t *err);

/*
 * Slurm reasons (contract section 2) and gpuburst:agent values (section
 * 3), written to [buf] of [n] bytes; a tag value is cut to NODE_TAG_MAX.
 * RET [buf].
 */
const char *node_reason_spot(char *buf, size_t n, const char *iid, const char *t);
const char *node_reason_rebalance(char *buf, size_t n, const char *iid);
const char *node_reason_unhealthy(char *buf, size_t n, const char *iid,
				  const char *summary);
const char *node_tag_ok(char *buf, size_t n, const char *node,
			const struct node_gpu_expect *e);
const char *node_tag_unhealthy(char *buf, size_t n, const char *summary);
/*
 * "interrupted: spot ACTION at T; drained; requeued 12,13" with "drain
 * failed" instead of "drained", "requeued none", "; not requeued 14"
 * when jobs refused, "; power down failed" when that failed.
 */
const char *node_tag_interrupted(char *buf, size_t n, const char *action,
				 const char *t, bool drained,
				 const struct gb_strv *requeued,
				 const struct gb_strv *refused, bool powered_down);
const char *node_tag_rebalance(char *buf, size_t n, const char *t, bool drain,
			       bool done);

/* Cut [s] in place to at most [max] bytes, never inside a UTF-8 character. */
void node_text_cut(char *s, size_t max);

/*
 * The job ids of `squeue -h -o %A` output [out]: one decimal id a line,
 * blank lines skipped.  OUT [ids] appended.  RET GB_E_OK or GB_E_PARSE
 * (a line that is not a job id; [err] quotes it).
 */
gb_err_t node_job_ids(const char *out, struct gb_strv *ids, gb_error_t *err);

/* ---- node_ident.c ------------------------------------------------------- */

struct node_ident {
	char *instance_id;
	long launch_index;
	char *instance_type;
	char *az;
	char *region;
	char *node;		/* the Slurm node name */
	const char *node_from;	/* "tag" or "user-data" */
};

/*
 * Read the identity and the node name (the gpuburst:node tag, polled
 * every 0.5 s for conf->node.tag_wait; with instance tags off, the user
 * data's list at the launch index).
 * RET GB_E_OK, else the failure ([err] names the IMDS path or the user
 * data line): GB_E_PARSE, GB_E_NOTFOUND, GB_E_TIMEOUT, GB_E_HTTP ...
 */
gb_err_t node_ident_read(gb_imds_t *m, const struct gb_node_conf *conf,
			 struct node_ident *id, gb_error_t *err);
void node_ident_clear(struct node_ident *id);

/* ---- node_act.c --------------------------------------------------------- */

struct node_act;	/* programs, SLURM_CONF, the tagging client */

/* OUT *out NEW (node_act_destroy()).  RET GB_E_OK or GB_E_NOMEM. */
gb_err_t node_act_create(const struct gb_node_conf *conf, const struct node_ident *id,
			 struct node_act **out, gb_error_t *err);
void node_act_destroy(struct node_act *a);

/*
 * RET NEW absolute path of program [name] (returned as is when it has a
 * '/'), searched in $PATH; NULL when not found (free()).
 */
char *node_which(const char *name);

/*
 * The health check of [e] (nvidia-smi, then dcgmi diag -r 1 when
 * configured), each bounded by health.timeout (its process group killed
 * then).  OUT [summary] one line (node_gpu_check()'s, or what failed).
 * RET GB_E_OK healthy; GB_E_INVALID not.
 */
gb_err_t node_act_health(struct node_act *a, const struct node_gpu_expect *e,
			 char *summary, size_t n);

/* The munge key: a regular file, not readable or writable by group or others. */
gb_err_t node_munge_check(const char *path, gb_error_t *err);

/*
 * scontrol with [args] (NULL-terminated, after "scontrol"), SLURM_CONF
 * set when not configless.  RET GB_E_OK (exit 0), GB_E_SLURM (another
 * status: [err] has it and the first line scontrol printed),
 * GB_E_TIMEOUT, GB_E_IO.  Each call is logged.
 */
gb_err_t node_act_scontrol(struct node_act *a, const char *const *args, gb_error_t *err);

/* The ids of the jobs on [node] (squeue -h -w NODE -o %A). */
gb_err_t node_act_jobs(struct node_act *a, const char *node, struct gb_strv *ids,
		       gb_error_t *err);

/*
 * Set the gpuburst:agent tag of this instance to [value] (CreateTags,
 * credentials of the instance role from IMDS).  Failures are logged
 * (never fatal) and returned.
 */
gb_err_t node_act_tag(struct node_act *a, const char *value);

/* ---- node_run.c --------------------------------------------------------- */

/* `gpuburst-node run`.  RET the exit status. */
int node_run(const struct gb_node_conf *conf);

/* ---- node_munge.c ------------------------------------------------------- */

/*
 * `gpuburst-node munge-key`: the first gbseal1: text of the user data
 * (IMDSv2), opened with munge.sealed_with (a regular file neither group
 * nor others may use), written to munge.key atomically (a temporary file
 * in its directory, fsync, rename), mode 0400, owned by the owner and
 * group of that directory, or by the munge user and its group when the
 * directory is root's and that user exists.  The key is wiped after use.
 * RET GB_E_OK; GB_E_CONFIG (no munge.sealed_with); GB_E_NOTFOUND (no user
 * data, no sealed text in it, a missing file); GB_E_PERM (the private
 * key's mode; cannot set the owner); what gb_imds_get() and
 * gb_seal_open() return ("sealed for another key or altered"); GB_E_IO.
 * Nothing is written on failure.
 */
gb_err_t node_munge_key(const struct gb_node_conf *conf, gb_error_t *err);

#endif /* GB_NODE_NODE_INT_H */
