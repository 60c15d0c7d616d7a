/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - gpuburst-node: the program on each cloud instance
 *
 *   gpuburst-node [-c FILE] [--source-address IP] run
 *   gpuburst-node [-c FILE] [--source-address IP] munge-key
 *   gpuburst-node [-c FILE] check
 *
 * Logs go to stderr, one key=value line per event, whatever stderr is
 * (systemd's journal, the user data's log file).
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_http.h"
#include "gb_log.h"
#include "gb_util.h"
#include "node_int.h"

#define PROG "gpuburst-node"

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: " PROG " [-c FILE] [--source-address IP] run\n"
		"       " PROG " [-c FILE] [--source-address IP] munge-key\n"
		"       " PROG " [-c FILE] check\n\n"
		"The instance side of gpuburst: identity from IMDSv2, a GPU check before\n"
		"slurmd registers, slurmd, and spot/rebalance notices acted on.\n\n"
		"  run                     identify, check, start slurmd, watch notices\n"
		"  munge-key               write munge.key from the sealed key in the user\n"
		"                          data (opened with munge.sealed_with), then exit\n"
		"  check                   validate the configuration and print it\n"
		"  -c, --config FILE       configuration (default %s)\n"
		"      --source-address IP connect to IMDS from IP (imds.source_address)\n"
		"  -v, --verbose           debug lines too\n"
		"  -h, --help              this help\n"
		"  -V, --version           print the version\n\n"
		"Exit status: 0, slurmd's status once it ran, or a gpuburst error code\n"
		"(gpuburst-node(8)).\n",
		GB_NODE_CONF_DEFAULT_PATH);
}

enum { OPT_SOURCE = 256 };

struct args {
	const char *conf;
	const char *source;
	const char *cmd;
	bool verbose;
};

/* RET -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longs[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "source-address", required_argument, NULL, OPT_SOURCE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:vhV", longs, NULL)) != -1) {
		switch (c) {
		case 'c':
			a->conf = optarg;
			break;
		case OPT_SOURCE:
			a->source = optarg;
			break;
		case 'v':
			a->verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf(PROG " %s\n", PACKAGE_VERSION);
			return 0;
		case ':':
			fprintf(stderr, PROG ": option %s needs an argument\n", argv[optind - 1]);
			return GB_E_USAGE;
		default:
			fprintf(stderr, PROG ": unknown option %s\n", argv[optind - 1]);
			usage(stderr);
			return GB_E_USAGE;
		}
	}
	if (optind != argc - 1 || (strcmp(argv[optind], "run") && strcmp(argv[optind], "check") &&
				   strcmp(argv[optind], "munge-key"))) {
		fprintf(stderr, PROG ": %s\n",
			optind >= argc ? "a command is needed: run, munge-key or check" :
			optind < argc - 1 ? "one command only: run, munge-key or check" :
			"unknown command: use run, munge-key or check");
		usage(stderr);
		return GB_E_USAGE;
	}
	a->cmd = argv[optind];
	return -1;
}

/* --source-address overrides imds.source_address, checked like it. */
static int set_source(struct gb_node_conf *conf, const char *ip)
{
	struct gb_http_opts ho = { .local_address = ip };
	gb_http_t *h = NULL;
	gb_error_t e;
	char *copy;

	if (gb_http_create("http://127.0.0.1", &ho, &h, &e)) {
		fprintf(stderr, PROG ": --source-address: %s\n", e.text);
		return GB_E_USAGE;
	}
	gb_http_destroy(h);
	if (!(copy = strdup(ip)))
		return GB_E_NOMEM;
	free(conf->imds.source_address);
	conf->imds.source_address = copy;
	return 0;
}

int main(int argc, char **argv)
{
	struct gb_log_opts lo = { .level = GB_LOG_INFO, .stderr_always = true };
	struct gb_errlist errs = { 0 };
	struct gb_node_conf *conf = NULL;
	struct args a = { 0 };
	gb_error_t e;
	int rc;

	gb_stdio_sanitize();
	if ((rc = parse_args(argc, argv, &a)) >= 0)
		return rc;
	if (a.verbose)
		lo.level = GB_LOG_DEBUG;
	gb_log_open(PROG, &lo, NULL);
	if (!a.conf)
		a.conf = GB_NODE_CONF_DEFAULT_PATH;
	if ((rc = (int)gb_node_conf_load(a.conf, &conf, &errs, &e))) {
		for (size_t i = 0; i < errs.n; i++)
			fprintf(stderr, PROG ": %s\n", errs.msgs[i]);
		gb_errlist_free(&errs);
		return rc;
	}
	if (a.source && (rc = set_source(conf, a.source)))
		goto out;
	if (!strcmp(a.cmd, "check")) {
		gb_node_conf_print(conf, stdout);
		rc = fflush(stdout) ? GB_E_IO : 0;
		goto out;
	}
	if ((rc = (int)gb_http_global_init(&e))) {
		gb_log_error("start_failed error=%s", GB_LOG_Q(e.text));
		goto out;
	}
	if (!strcmp(a.cmd, "munge-key")) {
		if ((rc = (int)node_munge_key(conf, &e)))
			gb_log_error("munge_key_failed code=%s error=%s", gb_err_name((gb_err_t)rc),
				     GB_LOG_Q(e.text));
		goto out;
	}
	gb_log_notice("start version=%s config=%s", PACKAGE_VERSION, GB_LOG_Q(a.conf));
	rc = node_run(conf);
out:
	gb_node_conf_destroy(conf);
	return rc;
}
