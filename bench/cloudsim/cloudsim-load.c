/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cloudsim-load.c - load driver for gpuburst-cloudsim: RunInstances then
 * DescribeInstances of the launched instance, back to back, for a fixed
 * time, through libcloud's EC2 client (SigV4, one keep-alive connection).
 * Prints requests per second and latency percentiles.  Loopback only.
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_creds.h"
#include "gb_ec2.h"
#include "gb_log.h"
#include "gb_str.h"
#include "gb_util.h"

struct opts {
	const char *endpoint;
	const char *region;
	const char *type;
	double seconds;
};

struct lat {
	double *v;
	size_t n, cap;
};

static void lat_add(struct lat *l, double x)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4096;
		double *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = x;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(struct lat *l, double p)
{
	size_t k;

	if (!l->n)
		return 0;
	k = (size_t)ceil(p * (double)l->n);
	return l->v[k ? k - 1 : 0] * 1000.0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{ "endpoint", required_argument, NULL, 'e' },
		{ "region", required_argument, NULL, 'r' },
		{ "instance-type", required_argument, NULL, 't' },
		{ "seconds", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->region = "ap-south-1";
	o->type = "g5.xlarge";
	o->seconds = 10;
	while ((c = getopt_long(argc, argv, "e:r:t:s:", longs, NULL)) != -1) {
		if (c == 'e')
			o->endpoint = optarg;
		else if (c == 'r')
			o->region = optarg;
		else if (c == 't')
			o->type = optarg;
		else if (c == 's' && gb_parse_double(optarg, &o->seconds) == GB_E_OK)
			;
		else
			return -1;
	}
	/* this driver talks to the local simulator and nothing else */
	if (!o->endpoint || !gb_str_has_prefix(o->endpoint, "http://127.") || o->seconds <= 0)
		return -1;
	return 0;
}

/* One RunInstances (1 instance) and one DescribeInstances of it. */
static int one_pair(gb_ec2_t *ec2, const struct opts *o, struct lat *run,
		    struct lat *desc)
{
	struct gb_ec2_run_params rp = { 0 };
	struct gb_ec2_describe_params dp = { 0 };
	struct gb_ec2_instance_list *l = NULL, *d = NULL;
	struct gb_ec2_error ae;
	gb_error_t err;
	const char *ids[1];
	double t0 = gb_time_mono(), t1;
	int rc = -1;

	rp.image_id = "ami-0123456789abcdef0";
	rp.instance_type = o->type;
	rp.min_count = rp.max_count = 1;
	if (gb_ec2_run_instances(ec2, &rp, &l, &ae, &err) != GB_E_OK || l->n != 1) {
		fprintf(stderr, "cloudsim-load: RunInstances: %s\n", err.text);
		goto out;
	}
	t1 = gb_time_mono();
	lat_add(run, t1 - t0);
	ids[0] = l->v[0].instance_id;
	dp.instance_ids = ids;
	dp.n_instance_ids = 1;
	if (gb_ec2_describe_instances(ec2, &dp, &d, &ae, &err) != GB_E_OK || d->n != 1) {
		fprintf(stderr, "cloudsim-load: DescribeInstances: %s\n", err.text);
		goto out;
	}
	lat_add(desc, gb_time_mono() - t1);
	rc = 0;
out:
	gb_ec2_instance_list_free(l);
	gb_ec2_instance_list_free(d);
	return rc;
}

int main(int argc, char **argv)
{
	struct gb_creds_opts co = { 0 };
	struct gb_ec2_opts eo = { 0 };
	struct opts o = { 0 };
	struct lat run = { 0 }, desc = { 0 };
	gb_creds_t *creds = NULL;
	gb_ec2_t *ec2 = NULL;
	gb_error_t err;
	double t0, el;
	size_t pairs = 0;

	if (parse(argc, argv, &o)) {
		fprintf(stderr, "usage: cloudsim-load --endpoint http://127.0.0.1:PORT "
			"[--region R] [--instance-type T] [--seconds S]\n");
		return 2;
	}
	co.access_key_id = "AKIDEXAMPLE";
	co.secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
	co.no_env = co.no_files = co.no_imds = true;
	eo.region = o.region;
	eo.endpoint = o.endpoint;
	eo.http.no_proxy = true;
	eo.retry.max_attempts = 1;
	if (gb_creds_create(&co, &creds, &err) || (eo.creds = creds, 0) ||
	    gb_ec2_create(&eo, &ec2, &err)) {
		fprintf(stderr, "cloudsim-load: %s\n", err.text);
		return 1;
	}
	t0 = gb_time_mono();
	while ((el = gb_time_mono() - t0) < o.seconds && one_pair(ec2, &o, &run, &desc) == 0)
		pairs++;
	el = gb_time_mono() - t0;
	qsort(run.v, run.n, sizeof(double), dcmp);
	qsort(desc.v, desc.n, sizeof(double), dcmp);
	printf("seconds %.2f\npairs %zu\nrequests %zu\nrequests_per_second %.0f\n"
	       "pairs_per_second %.0f\n"
	       "run_ms p50 %.3f p90 %.3f p99 %.3f\ndescribe_ms p50 %.3f p90 %.3f p99 %.3f\n",
	       el, pairs, 2 * pairs, 2 * (double)pairs / el, (double)pairs / el,
	       pct(&run, 0.5), pct(&run, 0.9), pct(&run, 0.99),
	       pct(&desc, 0.5), pct(&desc, 0.9), pct(&desc, 0.99));
	free(run.v);
	free(desc.v);
	gb_ec2_destroy(ec2);
	gb_creds_destroy(creds);
	return pairs ? 0 : 1;
}
