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
#include <unistd.h>

#include "ctl.h"
#include "gb_log.h"
#include "gb_prog.h"
#include "gb_slurmconf.h"
#include "gb_str.h"
#include "gb_util.h"

/*****************************************************************************
 *  Command-Line Options
 *****************************************************************************/

enum { OPT_LIST_COMMANDS = 256, OPT_LIST_EXIT_CODES };

static const char short_opts[] = "+:c:hjV";

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ "json", no_argument, NULL, 'j' },
	{ "version", no_argument, NULL, 'V' },
	/* hidden: the tables, one item per line (the man page tests use them) */
	{ "list-commands", no_argument, NULL, OPT_LIST_COMMANDS },
	{ "list-exit-codes", no_argument, NULL, OPT_LIST_EXIT_CODES },
	{ NULL, 0, NULL, 0 }
};

static const struct ctl_cmd commands[] = {
	{ "config check", "", "validate the configuration and summarise it",
	  ctl_cmd_config_check },
	{ "config keys", "", "every configuration key, its type and default",
	  ctl_cmd_config_keys },
	{ "requests", "[--state S] [--kind K] [--since T] [--node N] [--limit N]",
	  "list requests, newest last", ctl_cmd_requests },
	{ "requests show", "ID [--svg FILE]",
	  "replay one request: plans, attempts, instances, decisions; --svg draws its timeline "
	  "as an SVG picture (FILE - is standard output)", ctl_cmd_requests_show },
	{ "instances", "[--region R] [--type T] [--state S] [--node N] [--request ID] [--alive]",
	  "list instances with how long they ran", ctl_cmd_instances },
	{ "cost", "[--by cluster|job|user|account|partition|region|type] [--since T] [--until T]",
	  "instance-hours and money (instance time x the price file), this month by default",
	  ctl_cmd_cost },
	{ "capacity", "[--region R] [--type T]",
	  "what the planners remember: pool estimates, cool-downs, quota walls",
	  ctl_cmd_capacity },
	{ "capacity forget", "REGION[/AZ] [--type T] [--quota]",
	  "clear capacity memory (or with --quota the quota walls) of a region",
	  ctl_cmd_capacity_forget },
	{ "catalog", "", "the GPU instance types gpuburst knows, and where from",
	  ctl_cmd_catalog },
	{ "catalog refresh", "[--dry-run]",
	  "fetch the GPU types from DescribeInstanceTypes into the state directory",
	  ctl_cmd_catalog_refresh },
	{ "why", "JOB | NODE",
	  "in plain sentences: what gpuburst did and does for a job or node, and what can be done",
	  ctl_cmd_why },
	{ "metrics", "[--output FILE]",
	  "what gpuburst did and holds, as Prometheus metrics (stdout, or a file replaced atomically)",
	  ctl_cmd_metrics },
	{ "metrics serve", "[--listen ADDR:PORT]",
	  "serve the metrics over HTTP, read-only (GET /metrics; metrics.listen, loopback by default)",
	  ctl_cmd_metrics_serve },
	{ "prices", "", "the prices in use, where from, and the launchable types without one",
	  ctl_cmd_prices },
	{ "prices refresh",
	  "[--from FILE ...] [--capacity-blocks [--days D]] [--region R ...] [--dry-run]",
	  "on-demand prices from AWS Price List files, and Capacity Block prices from EC2's "
	  "offerings, into the state directory; no Price List file is downloaded: curl -fsSLo "
	  "FILE https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/REGION/index.json",
	  ctl_cmd_prices_refresh },
	{ "reservations", "[--region R] [--type T]",
	  "the account's capacity reservations and Capacity Blocks, region by region",
	  ctl_cmd_reservations },
	{ "capacity-blocks", "[--region R] [--type T]",
	  "the account's Capacity Blocks and their windows", ctl_cmd_capacity_blocks },
	{ "capacity-blocks offerings", "--type T --count N --days D [--region R]",
	  "the Capacity Blocks that could be bought (nothing is bought)",
	  ctl_cmd_capacity_blocks_offerings },
	{ "approvals", "[--all | --state S]", "list requests waiting for approval",
	  ctl_cmd_approvals },
	{ "plan", "--type T --count N [--home R] [--strategy S] [--nodeset NAME] [--jobless]",
	  "the plan a resume would start with now, without launching", ctl_cmd_plan },
	{ "approve", "ID [--comment TEXT]", "let a gated request run",
	  ctl_cmd_approve },
	{ "deny", "ID --reason TEXT", "refuse a gated request (its nodes go down)",
	  ctl_cmd_deny },
	{ "terminate", "NODES|--all [--yes | --confirm TOKEN] [--force] [--reason TEXT]",
	  "terminate instances now, after a confirmation step", ctl_cmd_terminate },
	{ "nodes resume", "NODES [--reason TEXT]",
	  "give DOWN burst nodes back to Slurm (power_down_force)", ctl_cmd_nodes_resume },
	{ "slurm-conf", "[--lab] [--lab-ports BASE] [--sbindir DIR] [--section S] [--slurm-version V] [--merge SLURM.CONF] [--suspend-time S] [--suspend-timeout S] [--resume-timeout S]",
	  "slurm.conf and gres.conf lines for the nodesets", ctl_cmd_slurm_conf },
	{ "doctor", "", "check the installation: config, state, credentials, endpoints, Slurm",
	  ctl_cmd_doctor },
	{ "reconcile", "[--dry-run] [--cheap]",
	  "fix what the cloud, the state file and Slurm disagree on",
	  ctl_cmd_reconcile },
	{ "state vacuum", "[--older-than AGE|off] [--dry-run]",
	  "prune finished requests past the retention, then compact the state file",
	  ctl_cmd_state_vacuum },
	{ "ask", "[--limit N] [--timeout S] QUESTION",
	  "a question in plain language: the configured LLM writes one SQL query, run read-only "
	  "on the state file under guards", ctl_cmd_ask },
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
		if (commands[i].args[0])
			fprintf(fp, "  %-15s %s\n", commands[i].name, commands[i].args);
		else
			fprintf(fp, "  %s\n", commands[i].name);
		fprintf(fp, "    %s\n", commands[i].summary);
	}
	fprintf(fp, "\n`gpuburstctl COMMAND --help` shows one command's options.\n"
		    "Exit status: 0 on success, otherwise a gpuburst error code "
		    "(gpuburstctl(8)).\n");
}

const struct ctl_cmd *ctl_command(const char *name)
{
	for (size_t i = 0; name && i < GB_ARRAY_LEN(commands); i++)
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	return NULL;
}

/* Two-word commands whose first word is [word], e.g. "config ...". */
static bool is_group(const char *word, struct gb_buf *subs)
{
	size_t len = strlen(word);
	bool any = false;

	for (size_t i = 0; i < GB_ARRAY_LEN(commands); i++) {
		const char *n = commands[i].name;

		if (strncmp(n, word, len) == 0 && n[len] == ' ') {
			gb_buf_printf(subs, "%s%s", any ? ", " : "", n + len + 1);
			any = true;
		}
	}
	return any;
}

/*
 * The longest row matching argv: "requests show" before "requests".
 * OUT *words (1 or 2).  RET NULL after printing a usage error (*rc).
 */
static const struct ctl_cmd *find_command(int argc, char **argv, int *words,
					  gb_err_t *rc)
{
	struct gb_buf subs = GB_BUF_INIT;
	const struct ctl_cmd *cmd = NULL;
	char two[128];

	if (argc >= 2) {
		snprintf(two, sizeof(two), "%s %s", argv[0], argv[1]);
		if ((cmd = ctl_command(two))) {
			*words = 2;
			return cmd;
		}
	}
	if ((cmd = ctl_command(argv[0]))) {
		*words = 1;
		return cmd;
	}
	if (is_group(argv[0], &subs)) {
		if (argc < 2)
			*rc = ctl_usage(NULL, "%s needs a subcommand (%s)",
					argv[0], gb_buf_str(&subs));
		else
			*rc = ctl_usage(NULL, "unknown %s subcommand \"%s\" (%s)",
					argv[0], argv[1], gb_buf_str(&subs));
	} else {
		*rc = ctl_usage(NULL, "unknown command \"%s\" (see gpuburstctl --help)",
				argv[0]);
	}
	gb_buf_free(&subs);
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
			/* set-id: only the default (the worker is started so) */
			if (ctl->setid && strcmp(optarg, GB_CONF_DEFAULT_PATH) != 0)
				return ctl_usage(NULL, "-c/--config is refused when gpuburstctl runs set-uid or set-gid");
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
		case OPT_LIST_COMMANDS:
			for (size_t i = 0; i < GB_ARRAY_LEN(commands); i++)
				printf("%s\n", commands[i].name);
			*done = true;
			return GB_E_OK;
		case OPT_LIST_EXIT_CODES:
			/* gb_err.h numbers stay below 126 (exit statuses) */
			for (int i = 0; i < 126; i++)
				if (strcmp(gb_err_name(i), "UNKNOWN") != 0)
					printf("%d %s %s\n", i, gb_err_name(i), gb_strerror(i));
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

/*
 * --json anywhere before "--": a usage error stops the parsing before the
 * option is reached ("requests --frob --json"), and is a JSON error then.
 */
static bool json_asked(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "-j") == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct ctl ctl = { 0 };
	const struct ctl_cmd *cmd;
	bool done = false;
	int words = 1;
	gb_err_t rc;

	gb_stdio_sanitize();
	/*
	 * Installed set-uid SlurmUser so that administrators can write the
	 * state file, the caller must not pick the files that decide who is
	 * an administrator or where the state is.
	 */
	ctl.setid = getuid() != geteuid() || getgid() != getegid();
	if (ctl.setid) {
		unsetenv(GB_CONF_ENV_PATH);
		unsetenv(GB_CONF_ENV_ENVIRONMENT);
		setenv(GB_SLURMCONF_ENV, GB_SLURMCONF_DEFAULT, 1);
		unsetenv(GB_WORKER_ENV);	/* never run the caller's program */
	}
	ctl.now = gb_time_now();
	rc = parse_cmdline(argc, argv, &ctl, &done);
	if (done)
		return rc;
	if (rc == GB_E_OK && optind >= argc) {
		display_help(stderr);
		ctl_error_note(GB_E_USAGE, "no command (gpuburstctl --help lists them)");
		rc = GB_E_USAGE;
	}
	cmd = rc ? NULL : find_command(argc - optind, argv + optind, &words, &rc);
	if (cmd)
		rc = cmd->run(&ctl, argc - optind - (words - 1),
			      argv + optind + (words - 1));
	if (ctl.json || (rc == GB_E_USAGE && json_asked(argc, argv)))
		ctl_json_finish(rc);
	gb_state_close(ctl.st);
	gb_conf_destroy(ctl.conf);
	gb_log_close();
	return rc;
}
