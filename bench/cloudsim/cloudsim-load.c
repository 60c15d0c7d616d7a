/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cloudsim-load.c - load driver for gpuburst-cloudsim: RunInstances then
 * DescribeInstances of the launched instance, back to back, for a fixed
 * time, through libcloud's EC2 client (SigV4, a keep-alive connection per
 * client).  --connections N runs N such clients in threads, so that the
 * simulator sees concurrent requests.  Prints requests per second and
 * latency percentiles.  Loopback only.
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <pthread.h>
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
	long connections;
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
		{ "connections", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->region = "ap-south-1";
	o->type = "g5.xlarge";
	o->seconds = 10;
	o->connections = 1;
	while ((c = getopt_long(argc, argv, "e:r:t:s:c:", longs, NULL)) != -1) {
		if (c == 'e')
			o->endpoint = optarg;
		else if (c == 'r')
			o->region = optarg;
		else if (c == 't')
			o->type = optarg;
		else if (c == 's' && gb_parse_double(optarg, &o->seconds) == GB_E_OK)
			;
		else if (c == 'c' && gb_parse_long(optarg, 1, 64, &o->connections) == GB_E_OK)
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

/* One client, one connection, one thread. */
struct worker {
	pthread_t tid;
	const struct opts *o;
	double deadline;
	struct lat run, desc;
	size_t pairs;
	int failed;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct gb_creds_opts co = { 0 };
	struct gb_ec2_opts eo = { 0 };
	gb_creds_t *creds = NULL;
	gb_ec2_t *ec2 = NULL;
	gb_error_t err;

	co.access_key_id = "AKIDEXAMPLE";
	co.secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
	co.no_env = co.no_files = co.no_imds = true;
	eo.region = w->o->region;
	eo.endpoint = w->o->endpoint;
	eo.http.no_proxy = true;
	eo.retry.max_attempts = 1;
	if (gb_creds_create(&co, &creds, &err) || (eo.creds = creds, 0) ||
	    gb_ec2_create(&eo, &ec2, &err)) {
		fprintf(stderr, "cloudsim-load: %s\n", err.text);
		w->failed = 1;
		goto out;
	}
	while (gb_time_mono() < w->deadline) {
		if (one_pair(ec2, w->o, &w->run, &w->desc)) {
			w->failed = 1;
			break;
		}
		w->pairs++;
	}
out:
	gb_ec2_destroy(ec2);
	gb_creds_destroy(creds);
	return NULL;
}

static void merge(struct lat *into, const struct lat *from)
{
	for (size_t i = 0; i < from->n; i++)
		lat_add(into, from->v[i]);
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct worker *w;
	struct lat run = { 0 }, desc = { 0 };
	size_t pairs = 0;
	int failed = 0;
	double t0, el;

	if (parse(argc, argv, &o)) {
		fprintf(stderr, "usage: cloudsim-load --endpoint http://127.0.0.1:PORT "
			"[--region R] [--instance-type T] [--seconds S] [--connections N]\n");
		return 2;
	}
	gb_http_global_init(NULL);
	w = calloc((size_t)o.connections, sizeof(*w));
	if (!w)
		return 1;
	t0 = gb_time_mono();
	for (long i = 0; i < o.connections; i++) {
		w[i].o = &o;
		w[i].deadline = t0 + o.seconds;
		pthread_create(&w[i].tid, NULL, work, &w[i]);
	}
	for (long i = 0; i < o.connections; i++) {
		pthread_join(w[i].tid, NULL);
		pairs += w[i].pairs;
		failed |= w[i].failed;
		merge(&run, &w[i].run);
		merge(&desc, &w[i].desc);
		free(w[i].run.v);
		free(w[i].desc.v);
	}
	el = gb_time_mono() - t0;
	free(w);
	qsort(run.v, run.n, sizeof(double), dcmp);
	qsort(desc.v, desc.n, sizeof(double), dcmp);
	printf("connections %ld\nseconds %.2f\npairs %zu\nrequests %zu\n"
	       "requests_per_second %.0f\npairs_per_second %.0f\n"
	       "run_ms p50 %.3f p90 %.3f p99 %.3f\ndescribe_ms p50 %.3f p90 %.3f p99 %.3f\n",
	       o.connections, el, pairs, 2 * pairs, 2 * (double)pairs / el,
	       (double)pairs / el, pct(&run, 0.5), pct(&run, 0.9), pct(&run, 0.99),
	       pct(&desc, 0.5), pct(&desc, 0.9), pct(&desc, 0.99));
	free(run.v);
	free(desc.v);
	return pairs && !failed ? 0 : 1;
}
