/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * route-loop.c - the cost of one job_submit/gpuburst decision, alone
 *
 *   route-loop GPUBURST.YAML [ITERATIONS]
 *
 * Calls gb_route_job() (plugins/job_submit_gpuburst/route.c) in a loop on
 * the four kinds of job that bench/job_submit/run.sh submits, with a fresh
 * result each time as the plugin does, and prints the mean time per job.
 * No Slurm is involved: this is the plugin's own share of a submission.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gb_conf.h"
#include "gb_str.h"
#include "route.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	/* as run.sh submits them, with its 1-hour limit and as root */
	struct gb_route_job jobs[] = {
		{ .tres_per_node = "gres:gpu:a10g:1", .time_limit = 60 },
		{ .tres_per_job = "gres:gpu:a10g:4", .min_nodes = 1, .max_nodes = 1,
		  .time_limit = 60 },
		{ .tres_per_node = "gres:gpu:l4:1",
		  .comment = "gpuburst:home=ap-northeast-1", .time_limit = 60 },
		{ .partition = "cpu", .time_limit = 60 },
	};
	struct gb_spend_summary spent = { 0 };
	char spend[4096];
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 1000000;
	struct gb_conf *conf = NULL;
	gb_route_t *route = NULL;
	size_t accepted = 0;
	gb_error_t err;
	double t0, t1;

	if (argc < 2 || n <= 0) {
		fprintf(stderr, "usage: route-loop GPUBURST.YAML [ITERATIONS]\n");
		return 2;
	}
	if (gb_conf_load(argv[1], &conf, NULL, &err) ||
	    gb_route_create(conf, &route, &err)) {
		fprintf(stderr, "route-loop: %s\n", err.text);
		gb_conf_destroy(conf);
		return 1;
	}
	/* with budgets, the spend summary the plugin would hold */
	if (conf->policy.n_budgets && gb_conf_spend_file(conf, spend, sizeof(spend)) &&
	    gb_spend_read(spend, &spent, &err))
		fprintf(stderr, "route-loop: %s\n", err.text);
	for (size_t i = 0; i < GB_ARRAY_LEN(jobs); i++) {
		jobs[i].spent = &spent;
		jobs[i].now = (double)time(NULL);
	}
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		struct gb_route_result res;

		gb_route_result_init(&res);
		accepted += gb_route_job(route, &jobs[i % GB_ARRAY_LEN(jobs)],
					 &res) == GB_ROUTE_ACCEPT;
		gb_route_result_free(&res);
	}
	t1 = now_ns();
	printf("route-loop: %ld decisions (%zu accepted), %.0f ns per job%s\n",
	       n, accepted, (t1 - t0) / n, conf->policy.n_budgets ? " (budgets on)" : "");
	gb_spend_clear(&spent);
	gb_route_destroy(route);
	gb_conf_destroy(conf);
	return 0;
}
