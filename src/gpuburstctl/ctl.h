/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl.h - gpuburstctl: shared context and the subcommand table
 *
 * Every subcommand is a `struct ctl_cmd` row in main.c; its run function
 * gets argv starting at the subcommand's own name (argv[0]) and returns a
 * gb_err_t, which becomes the exit status (gpuburstctl(8), EXIT STATUS).
 * Human output goes to stdout; with --json, one JSON document goes to
 * stdout instead.  Usage errors and failures go to stderr.
 */
#ifndef GB_GPUBURSTCTL_CTL_H
#define GB_GPUBURSTCTL_CTL_H

#include <stdbool.h>

#include "gb_conf.h"
#include "gb_err.h"

struct ctl {
	const char *conf_path;		/* -c FILE, or NULL: default lookup */
	bool json;			/* --json */
	struct gb_conf *conf;		/* loaded on demand by ctl_conf() */
};

struct ctl_cmd {
	const char *name;
	const char *args;		/* usage synopsis after the name */
	const char *summary;		/* one line for --help */
	gb_err_t (*run)(struct ctl *ctl, int argc, char **argv);
};

/*
 * Load the configuration once (printing every error to stderr on failure).
 * RET BORROWED config, or NULL with *rc set to the exit status.
 */
const struct gb_conf *ctl_conf(struct ctl *ctl, gb_err_t *rc);

/* Print "gpuburstctl: <msg>" to stderr. RET [code]. */
gb_err_t ctl_fail(gb_err_t code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Usage error for subcommand [cmd]: message + its synopsis. RET GB_E_USAGE. */
gb_err_t ctl_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Subcommands (cmd_*.c). */
gb_err_t ctl_cmd_config(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_reconcile(struct ctl *ctl, int argc, char **argv);
gb_err_t ctl_cmd_worker(struct ctl *ctl, int argc, char **argv);

#endif /* GB_GPUBURSTCTL_CTL_H */
