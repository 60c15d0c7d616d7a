/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl.h - gpuburstctl: shared context, the subcommand table, output helpers
 *
 * Every subcommand is a `struct ctl_cmd` row in main.c, named by one or two
 * words ("approve", "requests show"); its run function gets argv starting
 * at the subcommand's last word (argv[0]) and returns a gb_err_t, which
 * becomes the exit status (gpuburstctl(8), EXIT STATUS).  Human output goes
 * to stdout; with --json, one JSON document goes to stdout instead, printed
 * by main() when the command returns (ctl_json_result).  Usage errors and
 * failures go to stderr, in both cases.
 */
#ifndef GB_GPUBURSTCTL_CTL_H
#define GB_GPUBURSTCTL_CTL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "gb_conf.h"
#include "gb_ec2.h"
#include "gb_err.h"
#include "gb_policy.h"
#include "gb_state.h"
#include "gb_str.h"

#define CTL_STATE_BUSY_MS 10000

struct ctl {
	const char *conf_path;		/* -c FILE, or NULL: default lookup */
	bool json;			/* --json */
	bool setid;			/* running set-uid/set-gid: the caller
					   chooses no files (config, slurm.conf) */
	double now;			/* one clock reading per run */
	struct gb_conf *conf;		/* loaded on demand by ctl_conf() */
	gb_state_t *st;			/* opened on demand by ctl_state() */
	bool st_rw;
	bool st_missing;		/* read-only open found no file */
	bool log_open;
};

struct ctl_cmd {
	const char *name;		/* "requests show" */
	const char *args;		/* usage synopsis after the name */
	const char *summary;		/* one line for --help */
	gb_err_t (*run)(struct ctl *ctl, int argc, char **argv);
};

/* The table (main.c), for usage messages. */
const struct ctl_cmd *ctl_command(const char *name);

/*
 * Print the errors of a failed gb_conf_load ([errs], else [err]) to stderr,
 * one a line; the first is the --json error message.
 */
void ctl_conf_errors(gb_err_t rc, const struct gb_errlist *errs,
		     const gb_error_t *err);

/*
 * Load the configuration once (printing every error to stderr on failure).
 * RET BORROWED config, or NULL with *rc set to the exit status.
 */
const struct gb_conf *ctl_conf(struct ctl *ctl, gb_err_t *rc);

/*
 * Open <state_dir>/state.db once: read-only unless [write].  A read-only
 * open of a file that does not exist yet RETs NULL with *rc = GB_E_OK and
 * ctl->st_missing set (listings print nothing); other failures print the
 * error and set *rc.  A path too open is warned about (ctl_state_notice).
 */
gb_state_t *ctl_state(struct ctl *ctl, bool write, gb_err_t *rc);

/*
 * For a read-only command that keeps a cache (plan: the offerings its
 * preflight learns): open <state_dir>/state.db read-write only if it
 * exists, never creating it or its directory.  RET the handle (kept as
 * ctl->st), or NULL: ctl->st_missing set when there is no file, else
 * [why] says why it cannot be written (the caller may read it instead).
 */
gb_state_t *ctl_state_existing(struct ctl *ctl, gb_error_t *why);

/*
 * Print to stderr what the open of [st] found too open (a state directory
 * or file writable by others, tightened or left to the next writer).
 */
void ctl_state_notice(const gb_state_t *st);

/*
 * May the real uid decide approvals and terminate (gb_policy_authorize,
 * SlurmUser from slurm.conf)?  OUT [who].  RET GB_E_OK, or GB_E_PERM
 * printed.
 */
gb_err_t ctl_authorize(struct ctl *ctl, const struct gb_conf *conf,
		       struct gb_policy_actor *who);

/* Log decisions to the configured log file / syslog (once; best effort). */
void ctl_log_open(struct ctl *ctl);

/*
 * Print "gpuburstctl: <msg>" to stderr; <msg> is also the message of the
 * --json error document when the run ends with [code].  RET [code].
 */
gb_err_t ctl_fail(gb_err_t code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Usage error for subcommand [cmd]: message + its synopsis. RET GB_E_USAGE. */
gb_err_t ctl_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The --json error message for a run that ends with [code], when the
 * failure was told another way (a report line, a config error list):
 * nothing is printed.
 */
void ctl_error_note(gb_err_t code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Subcommand options, munge style.  [shortopts] starts with ':'; -j/--json
 * and -h/--help are handled here (include CTL_COMMON_LONGOPTS and "jh").
 * RET the next option for the caller, -1 at the end of the options, or
 * CTL_OPT_DONE after --help (*rc = GB_E_OK) or a usage error (printed,
 * *rc = GB_E_USAGE).  Call with [first] true the first time.
 */
#define CTL_OPT_DONE (-2)
#define CTL_COMMON_LONGOPTS \
	{ "json", no_argument, NULL, 'j' }, \
	{ "help", no_argument, NULL, 'h' }
int ctl_getopt(struct ctl *ctl, const char *cmd, int argc, char **argv,
	       const char *shortopts, const struct option *longopts,
	       bool *first, gb_err_t *rc);

/* Usage error for an option the switch does not handle. */
gb_err_t ctl_unimplemented(const char *cmd, int c);

/*
 * Parse a number option [s] of [opt] in [min, max] (gb_parse_long).
 * RET GB_E_OK or a usage error (printed).
 */
gb_err_t ctl_parse_long(const char *cmd, const char *opt, const char *s,
			long min, long max, long *out);

/* A request id: 16 lower-case hex digits.  RET GB_E_OK or a usage error. */
gb_err_t ctl_check_id(const char *cmd, const char *id);

/*****************************************************************************
 *  Output
 *****************************************************************************/

/*
 * --json output (gpuburstctl(8), JSON OUTPUT): every document is an object
 * with "schema": CTL_JSON_SCHEMA.  The major number changes when a member
 * is removed or renamed or changes type or meaning; members are added
 * without a change.
 */
#define CTL_JSON_SCHEMA "gpuburstctl/1"

/*
 * Keep [doc] (STEALS it; an object) as the command's result, complete: a
 * command that fails before its result is whole hands over nothing.
 */
void ctl_json_result(json_t *doc);

/*
 * main(), after the command: print the result with "schema" and, when [rc]
 * is not GB_E_OK, "error": {"code", "exit", "message"}; a failure without
 * a result prints a document of those two alone.  Indented, sorted keys,
 * one trailing newline.  Nothing is printed for a success without a result
 * (--help, worker).  RET [rc].
 */
gb_err_t ctl_json_finish(gb_err_t rc);

/* NULL-safe constructors. */
json_t *ctl_jstr(const char *s);		/* NULL -> null */
json_t *ctl_jtime(double t);			/* 0 -> null, else ISO UTC, .mmm */
json_t *ctl_jraw(const char *text);		/* parsed JSON, else the string */

/* "2026-11-29T15:13:45Z" (tables: whole seconds), or "-" for 0.  RET [buf]
 * (>= 32 bytes). */
const char *ctl_time(double t, char *buf, size_t n);
/* "3h 02m 05s", or "-" when [seconds] < 0.  RET [buf]. */
const char *ctl_dur(double seconds, char *buf, size_t n);

/*
 * An aligned text table: columns separated by two blanks, a header line,
 * the last column not padded.  A header starting with '>' is right-aligned
 * (numbers; the '>' is not printed).  NULL cells print as "-".
 */
struct ctl_table {
	size_t ncols;
	const char *indent;		/* printed before each line, or NULL */
	struct gb_strv cells;		/* row-major, the header first */
	bool failed;
};
void ctl_table_init(struct ctl_table *t, size_t ncols, ...);
void ctl_table_row(struct ctl_table *t, ...);	/* ncols const char * */
void ctl_table_print(struct ctl_table *t, FILE *fp);
void ctl_table_free(struct ctl_table *t);
/* A number as text for a cell: "%d" into [buf].  RET [buf]. */
const char *ctl_itoa(long long v, char *buf, size_t n);

/* Rows as JSON objects (cmd_requests.c). */
json_t *ctl_request_json(const struct gb_request *r);
json_t *ctl_instance_json(const struct gb_instance *in, double now);
/* Counts of gb_state_prune() as JSON (cmd_state.c; reconcile's report too). */
json_t *ctl_prune_json(const struct gb_state_prune_counts *n);
/* Seconds [in] ran (terminated) or has run so far (alive); -1: unknown. */
double ctl_instance_ran(const struct gb_instance *in, double now);
/* RET the state word of an agent tag ("ok", "unhealthy"; "-" for none), in [buf] or static. */
const char *ctl_agent_word(const char *agent, char *buf, size_t n);

/*****************************************************************************
 *  Subcommands (cmd_*.c)
 *****************************************************************************/

/*
 * An EC2 client for region [r] of [conf] (its endpoint, the proxy and TLS
 * settings), signing with [creds] (BORROWED), [timeout_ms] per request, up
 * to 100 pages per Describe call.  OUT *out NEW (gb_ec2_destroy).
 * RET gb_ec2_create()'s.
 */
gb_err_t ctl_ec2_client(const struct gb_conf *conf, const struct gb_conf_region *r,
			gb_creds_t *creds, long timeout_ms, gb_ec2_t **out, gb_error_t *err);

gb_err_t ctl_cmd_config_check(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_config_keys(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_requests(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_requests_show(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_instances(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_capacity(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_catalog(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_catalog_refresh(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_reservations(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_capacity_blocks(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_capacity_blocks_offerings(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_capacity_forget(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_approvals(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_approve(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_deny(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_terminate(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_nodes_resume(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_plan(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_slurm_conf(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_doctor(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_reconcile(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_worker(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_state_vacuum(struct ctl *ctl, int argc, char **argv);

#endif /* GB_GPUBURSTCTL_CTL_H */
