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
/* How many of [id]'s first characters a request id may have (lower-case hex). */
size_t ctl_id_len(const char *id);

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

/*
 * A listing that streams: the document's array [member] is written row by
 * row as the rows come (ctl_json_row STEALS [row]; one compact line each),
 * in constant memory; ctl_json_finish() then closes it and adds the
 * result's members (ctl_json_result: the totals), "schema" and "error".
 * A failure half-way leaves the rows written and says so in "error".
 */
void ctl_json_stream(const char *member);
void ctl_json_row(json_t *row);

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
 *
 * Held, the rows are kept until ctl_table_print().  Streamed, none is
 * kept: the caller makes its rows twice from one snapshot of the state
 * file (gb_state_read_begin), first after ctl_table_measure() (a row only
 * widens the columns), then after ctl_table_stream() (the header is
 * printed, then each row as it comes); ctl_table_print() prints nothing.
 */
#define CTL_TABLE_COLS_MAX 16
struct ctl_table {
	size_t ncols;
	const char *indent;		/* printed before each line, or NULL */
	struct gb_strv cells;		/* row-major, the header first; held:
					 * the rows too */
	bool failed;
	enum { CTL_TABLE_HOLD, CTL_TABLE_MEASURE, CTL_TABLE_STREAM } mode;
	size_t w[CTL_TABLE_COLS_MAX];	/* widths (measured, streamed) */
	FILE *fp;			/* streamed: where rows go */
};
void ctl_table_init(struct ctl_table *t, size_t ncols, ...);
void ctl_table_row(struct ctl_table *t, ...);	/* ncols const char * */
/* The same, [ncols] headers and a row's [ncols] cells as arrays. */
void ctl_table_init_v(struct ctl_table *t, size_t ncols, const char *const *headers);
void ctl_table_row_v(struct ctl_table *t, const char *const *cells);
void ctl_table_measure(struct ctl_table *t);
void ctl_table_stream(struct ctl_table *t, FILE *fp);
void ctl_table_print(struct ctl_table *t, FILE *fp);
void ctl_table_free(struct ctl_table *t);
/* A number as text for a cell: "%d" into [buf].  RET [buf]. */
const char *ctl_itoa(long long v, char *buf, size_t n);

/*
 * The capacity memory of the state file [st] as `capacity --json` shows
 * it (cmd_capacity.c): OUT *pools and *quotas NEW arrays (json_decref).
 * [st] may be NULL (no state file: empty arrays).
 */
gb_err_t ctl_capacity_json(struct ctl *ctl, const struct gb_conf *conf, gb_state_t *st,
			   json_t **pools, json_t **quotas, gb_error_t *err);

/* Rows as JSON objects (cmd_requests.c). */
json_t *ctl_request_json(const struct gb_request *r);
json_t *ctl_instance_json(const struct gb_instance *in, double now);
/* Counts of gb_state_prune() as JSON (cmd_state.c; reconcile's report too). */
json_t *ctl_prune_json(const struct gb_state_prune_counts *n);
/* Seconds [in] ran (terminated) or has run so far (alive); -1: unknown. */
double ctl_instance_ran(const struct gb_instance *in, double now);
/* RET the state word of an agent tag ("ok", "unhealthy"; "-" for none), in [buf] or static. */
const char *ctl_agent_word(const char *agent, char *buf, size_t n);

/*
 * The timeline picture of `requests show --svg` (timeline_svg.c): fed the
 * records `requests show` reads, in any order, then drawn as an SVG
 * document (svg.h).  Every feeding call does nothing on a NULL [tl] and
 * copies what it keeps.
 */
struct ctl_tl;

/* RET NEW (ctl_tl_destroy; accepts NULL), or NULL when out of memory. */
struct ctl_tl *ctl_tl_create(void);
void ctl_tl_destroy(struct ctl_tl *tl);
void ctl_tl_request(struct ctl_tl *tl, const struct gb_request *r);
void ctl_tl_approval(struct ctl_tl *tl, const struct gb_approval *a);
void ctl_tl_plan(struct ctl_tl *tl, const struct gb_plan_row *p);
void ctl_tl_attempt(struct ctl_tl *tl, const struct gb_attempt *a);
void ctl_tl_instance(struct ctl_tl *tl, const struct gb_instance *in);
void ctl_tl_event(struct ctl_tl *tl, const struct gb_event *ev);

/*
 * Draw [tl] as of ctl->now (open calls and live instances end there) and
 * write it to [file] ("-": standard output; else replaced atomically, see
 * ctl_svg_save()), then say what was written: a line on standard output
 * (none for "-"), or with --json the result {"svg": {file, bytes, width,
 * height, lanes, lanes_total, calls, calls_total, instances,
 * instances_total}}.  RET GB_E_OK, or the failure, printed (GB_E_NOMEM,
 * ctl_svg_save()'s); nothing is written then.
 */
gb_err_t ctl_tl_write(struct ctl *ctl, struct ctl_tl *tl, const char *file);
/* Draw [tl] as of [now] into [out].  RET GB_E_OK or GB_E_NOMEM. */
gb_err_t ctl_tl_draw(struct ctl_tl *tl, double now, struct gb_buf *out);
/*
 * The picture of request [id] of [st] as `requests show --svg` draws it,
 * into [svg].  RET GB_E_OK, GB_E_NOTFOUND (no such request), or the
 * failure, in [err].
 */
gb_err_t ctl_request_svg(struct ctl *ctl, gb_state_t *st, const char *id, struct gb_buf *svg,
			 gb_error_t *err);

/*
 * Approvals in [state] (-1: all) as `approvals --json` lists them (NEW
 * array in *out); the jobs that were not held at submit are looked up in
 * Slurm only when [ask_slurm].  [st] may be NULL (an empty list).
 */
gb_err_t ctl_approvals_json(struct ctl *ctl, gb_state_t *st, int state, bool ask_slurm,
			   json_t **out, gb_error_t *err);

/*
 * The status page's document (status.c): the newest requests of the last
 * day with their instances and calls by region, the pending approvals
 * (from the state file only) and the capacity memory.  OUT *out NEW.
 * [st] may be NULL.
 */
gb_err_t ctl_status_json(struct ctl *ctl, const struct gb_conf *conf, gb_state_t *st,
			 json_t **out, gb_error_t *err);

/* The status page's files (www/, made into C by www-embed.awk). */
struct ctl_www_file {
	const char *name;		/* "index.html" */
	const char *type;		/* Content-Type */
	const char *data;
	size_t len;
};
extern const struct ctl_www_file ctl_www_files[];	/* ends with a NULL name */

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

/*
 * Capacity Block prices (prices_blocks.c) for `prices refresh
 * --capacity-blocks`: one (region, type) of a nodeset with a
 * capacity-block rung, priced at its cheapest offering.
 */
struct ctl_block_price {
	struct gb_price p;		/* kind capacity-block; usd_per_hour -1:
					 * EC2 offered no block */
	const char *offering;		/* the cheapest offering's id, or NULL */
	int hours;			/* its capacityBlockDurationHours */
	size_t offerings;		/* how many EC2 answered */
};

struct ctl_block_prices {
	struct ctl_block_price *v;
	size_t n;
	size_t calls;			/* DescribeCapacityBlockOfferings sent */
	struct gb_strv keep;		/* the strings of v */
};

/*
 * Ask EC2 (DescribeCapacityBlockOfferings, one instance for [days] days)
 * about every (region, type) of a nodeset with a capacity-block rung in
 * the regions its planner may use ([only], [n_only]: those alone).
 * OUT [b] filled (ctl_block_prices_free, also on error).  RET GB_E_OK;
 * GB_E_NOTFOUND when no nodeset has such a rung; the first region's
 * failure or an offering that is not a price (GB_E_CLOUD), named in [err].
 */
gb_err_t ctl_block_prices_fetch(const struct gb_conf *conf, char **only, size_t n_only,
				int days, struct ctl_block_prices *b, gb_error_t *err);
void ctl_block_prices_free(struct ctl_block_prices *b);

/* Whether [region] is one of the [n_only] of --region ([n_only] 0: every region is). */
bool ctl_region_wanted(char *const *only, size_t n_only, const char *region);

/*
 * The metrics (cmd_metrics.c) of [conf] and the state file [st] (NULL:
 * none yet) appended to [text]; written atomically to [path].
 */
gb_err_t ctl_metrics_text(struct ctl *ctl, const struct gb_conf *conf, gb_state_t *st,
			  struct gb_buf *text, gb_error_t *err);
gb_err_t ctl_metrics_write(struct ctl *ctl, const struct gb_conf *conf, gb_state_t *st,
			   const char *path, gb_error_t *err);

gb_err_t ctl_cmd_metrics(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_why(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_metrics_serve(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_config_check(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_config_keys(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_requests(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_requests_show(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_instances(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_cost(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_capacity(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_catalog(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_catalog_refresh(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_prices(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_prices_refresh(struct ctl *ctl, int argc, char **argv);
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
gb_err_t ctl_cmd_ask(struct ctl *ctl, int argc, char **argv);

/*
 * What ask knows of the state file (ask_schema.c, generated at build time
 * from doc/state-schema.md by ask-schema.awk): the page's sections from
 * "Conventions" to the tables, the model's reference; and "table.column"
 * of every documented column, what a query may read (NULL-ended).
 */
extern const char ctl_ask_schema_doc[];
extern const char *const ctl_ask_columns[];

#endif /* GB_GPUBURSTCTL_CTL_H */
