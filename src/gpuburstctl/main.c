/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - gpuburstctl: the administrator's command-line tool
 */
#include "config.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "gb_log.h"
#include "gb_str.h"
#include "gb_util.h"

/*****************************************************************************
 *  Command-Line Options
 *****************************************************************************/

static const char short_opts[] = "+:c:hjV";

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ "json", no_argument, NULL, 'j' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static const struct ctl_cmd commands[] = {
	{ "config", "check", "validate the configuration and summarise it",
	  ctl_cmd_config },
	{ "reconcile", "[--dry-run] [--cheap]",
	  "fix what the cloud, the state file and Slurm disagree on",
	  ctl_cmd_reconcile },
	{ "worker", "", "run the request worker in the foreground (the programs start it)",
	  ctl_cmd_worker },
};

/*****************************************************************************
 *  Functions
 *****************************************************************************/

static void display_help(FILE *fp)
{
	fprintf(fp, "Usage: gpuburstctl [OPTIONS] COMMAND [ARGS]\n\n");
	fprintf(fp, "Options:\n");
	fprintf(fp, "  %-22s %s\n", "-c, --config=FILE",
		"configuration file (default $" GB_CONF_ENV_PATH ", then "
		GB_CONF_DEFAULT_PATH ")");
	fprintf(fp, "  %-22s %s\n", "-j, --json", "machine-readable output");
	fprintf(fp, "  %-22s %s\n", "-h, --help", "this help");
	fprintf(fp, "  %-22s %s\n", "-V, --version", "print the version");
	fprintf(fp, "\nCommands:\n");
	for (size_t i = 0; i < GB_ARRAY_LEN(commands); i++) {
		char syn[64];

		snprintf(syn, sizeof(syn), "%s %s", commands[i].name,
			 commands[i].args);
		fprintf(fp, "  %-22s %s\n", syn, commands[i].summary);
	}
	fprintf(fp, "\nExit status: 0 on success, otherwise a gpuburst error code "
		    "(gpuburstctl(8)).\n");
}

gb_err_t ctl_fail(gb_err_t code, const char *fmt, ...)
{
	va_list ap;

	fputs("gpuburstctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

gb_err_t ctl_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("gpuburstctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	for (size_t i = 0; i < GB_ARRAY_LEN(commands); i++) {
		if (cmd && strcmp(cmd, commands[i].name) == 0)
			fprintf(stderr, "Usage: gpuburstctl %s %s\n",
				commands[i].name, commands[i].args);
	}
	return GB_E_USAGE;
}

const struct gb_conf *ctl_conf(struct ctl *ctl, gb_err_t *rc)
{
	struct gb_errlist errs = { 0 };
	gb_error_t err;

	if (ctl->conf)
		return ctl->conf;
	*rc = gb_conf_load(gb_conf_path(ctl->conf_path), &ctl->conf, &errs,
			   &err);
	if (*rc) {
		if (errs.n == 0)
			fprintf(stderr, "gpuburstctl: %s\n", err.text);
		for (size_t i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msgs[i]);
	}
	gb_errlist_free(&errs);
	return ctl->conf;
}

static const struct ctl_cmd *find_command(const char *name)
{
	for (size_t i = 0; i < GB_ARRAY_LEN(commands); i++) {
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	}
	return NULL;
}

static gb_err_t parse_cmdline(int argc, char **argv, struct ctl *ctl,
			      bool *done)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			ctl->conf_path = optarg;
			break;
		case 'h':
			display_help(stdout);
			*done = true;
			return GB_E_OK;
		case 'j':
			ctl->json = true;
			break;
		case 'V':
			printf("gpuburstctl %s\n", PACKAGE_VERSION);
			*done = true;
			return GB_E_OK;
		case '?':
			if (optopt)
				return ctl_usage(NULL, "invalid option \"-%c\"", optopt);
			return ctl_usage(NULL, "invalid option \"%s\"",
					 argv[optind - 1]);
		case ':':
			return ctl_usage(NULL, "missing argument for option \"%s\"",
					 argv[optind - 1]);
		default:
			return ctl_usage(NULL, "unimplemented option \"%s\"",
					 argv[optind - 1]);
		}
	}
	return GB_E_OK;
}

int main(int argc, char **argv)
{
	struct ctl ctl = { 0 };
	const struct ctl_cmd *cmd;
	bool done = false;
	gb_err_t rc;

	gb_stdio_sanitize();
	rc = parse_cmdline(argc, argv, &ctl, &done);
	if (rc || done)
		return rc;
	if (optind >= argc) {
		display_help(stderr);
		return GB_E_USAGE;
	}
	cmd = find_command(argv[optind]);
	if (!cmd)
		return ctl_usage(NULL, "unknown command \"%s\" (see gpuburstctl --help)",
				 argv[optind]);
	rc = cmd->run(&ctl, argc - optind, argv + optind);
	gb_conf_destroy(ctl.conf);
	gb_log_close();
	return rc;
}
