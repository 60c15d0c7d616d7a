/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * worker_main.c - main() of gpuburst-worker
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "gb_conf.h"
#include "gb_log.h"
#include "gb_str.h"
#include "gb_util.h"
#include "gb_worker.h"

#define PROG "gpuburst-worker"

static void usage(FILE *fp)
{
	fprintf(fp, "Usage: " PROG " [-c FILE] [--threads N]\n\n"
		    "Drain gpuburst's request queue: launch and terminate cloud\n"
		    "instances, update Slurm, reconcile.  gpuburst-resume, -suspend and\n"
		    "-resume-fail start it detached; one runs at a time (a lock in the\n"
		    "state directory), the others exit at once.  It logs to the\n"
		    "configured log file and/or syslog.\n\n"
		    "  -c, --config=FILE  configuration (default $%s, then gpuburst.yaml\n"
		    "                     next to $SLURM_CONF, then %s)\n"
		    "      --threads=N    requests worked on at once (default %d)\n"
		    "  -h, --help         this help\n"
		    "  -V, --version      print the version\n",
		GB_CONF_ENV_PATH, GB_CONF_DEFAULT_PATH, GB_WORKER_THREADS);
}

static gb_err_t parse_args(int argc, char **argv, const char **conf, int *threads,
			   bool *done)
{
	static const struct option longs[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "threads", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	long v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:hV", longs, NULL)) != -1) {
		switch (c) {
		case 'c':
			*conf = optarg;
			break;
		case 't':
			if (gb_parse_long(optarg, 1, 64, &v)) {
				fprintf(stderr, PROG ": --threads: expected 1..64, got \"%s\"\n",
					optarg);
				return GB_E_USAGE;
			}
			*threads = (int)v;
			break;
		case 'h':
			usage(stdout);
			*done = true;
			return GB_E_OK;
		case 'V':
			printf(PROG " %s\n", PACKAGE_VERSION);
			*done = true;
			return GB_E_OK;
		case ':':
			fprintf(stderr, PROG ": missing argument for option \"%s\"\n",
				argv[optind - 1]);
			return GB_E_USAGE;
		default:
			fprintf(stderr, PROG ": invalid option \"%s\"\n", argv[optind - 1]);
			return GB_E_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument \"%s\"\n", argv[optind]);
		return GB_E_USAGE;
	}
	return GB_E_OK;
}

int gb_worker_main(int argc, char **argv)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	struct gb_worker_opts wo = { 0 };
	struct gb_errlist errs = { 0 };
	struct gb_conf *conf = NULL;
	const char *conf_arg = NULL;
	char path[4096];
	bool done = false;
	gb_error_t err;
	gb_err_t rc;

	gb_stdio_sanitize();
	gb_signals_reset();
	rc = parse_args(argc, argv, &conf_arg, &wo.threads, &done);
	if (rc || done)
		return rc;
	if (!conf_arg || !*conf_arg)	/* as the programs: next to slurm.conf */
		conf_arg = gb_conf_path_slurm(getenv("SLURM_CONF"), path, sizeof(path));
	rc = gb_conf_load(gb_conf_path(conf_arg), &conf, &errs, &err);
	if (rc) {
		struct gb_log_opts lo = { NULL, true, GB_LOG_INFO, false };

		gb_log_open(PROG, &lo, NULL);
		gb_log_error("config_error path=%s error=%s", gb_conf_path(conf_arg),
			     gb_log_q(lq, sizeof(lq), err.text));
		for (size_t i = 0; i < errs.n; i++)
			gb_log_error("config_error %s", errs.msgs[i]);
		gb_errlist_free(&errs);
		goto out;
	} else {
		struct gb_log_opts lo = { conf->log.file, conf->log.syslog, conf->log.level,
					  false };

		if (gb_log_open(PROG, &lo, &err)) {
			lo.syslog = true;
			gb_log_open(PROG, &lo, NULL);
			gb_log_error("log_file_unusable error=%s",
				     gb_log_q(lq, sizeof(lq), err.text));
		}
	}
	wo.conf = conf;
	if ((rc = gb_worker_run(&wo, &err)))
		gb_log_error("worker_failed error=%s", gb_log_q(lq, sizeof(lq), err.text));
out:
	gb_conf_destroy(conf);
	gb_log_close();
	return rc;
}
