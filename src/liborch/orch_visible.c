/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_visible.c - eventual consistency: instance ids and addresses EC2
 * does not show yet
 *
 * EC2's API is eventually consistent ("Eventual consistency in the Amazon
 * EC2 API"): an instance RunInstances just returned may be unknown to the
 * calls after it for a while (InvalidInstanceID.NotFound), and
 * DescribeInstances may list it without privateIpAddress for the first
 * seconds although RunInstances gave it one.  Both are "not yet", never
 * "gone": the caller retries with exponential back-off, within a bound.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "orch_int.h"

bool orch_not_visible(const struct orch_job *j)
{
	return j->rc && j->ae.http_status &&
	       strcmp(j->ae.code, GB_EC2_CODE_NOT_VISIBLE) == 0;
}

double orch_visible_wait(double *wait, double waited)
{
	double w = *wait;

	if (waited >= ORCH_VISIBLE_BOUND - 1e-9)
		return 0;
	if (w > ORCH_VISIBLE_BOUND - waited)
		w = ORCH_VISIBLE_BOUND - waited;
	*wait *= 2;
	return w;
}

/* One DescribeInstances of one id; its parameters live beside the job. */
struct addr_job {
	struct orch_job job;
	struct gb_ec2_describe_params dp;
	const char *id[1];
	size_t index;		/* in the caller's arrays */
};

/* The address, if the answer has the instance with one. */
static const char *answered_ip(const struct orch_job *j)
{
	const struct gb_ec2_instance_list *l = j->instances;

	if (j->rc || !l || l->n != 1 || !l->v[0].private_ip || !*l->v[0].private_ip)
		return NULL;
	return l->v[0].private_ip;
}

gb_err_t orch_describe_ips(gb_orch_t *o, struct orch_pool *pool,
			   const char *region, const char *const *ids, size_t n,
			   char **ips, bool *running, int *calls,
			   double *waited, gb_error_t *err)
{
	struct addr_job *a = calloc(n ? n : 1, sizeof(*a));
	struct orch_job **jp = calloc(n ? n : 1, sizeof(*jp));
	bool *failed = calloc(n ? n : 1, sizeof(*failed));
	double wait = ORCH_VISIBLE_FIRST, w;
	gb_err_t rc = GB_E_OK;

	*waited = 0;
	if (!a || !jp || !failed) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		size_t m = 0, later = 0;

		for (size_t i = 0; i < n; i++) {
			if (ips[i] || failed[i])
				continue;
			memset(&a[m], 0, sizeof(a[m]));
			a[m].index = i;
			a[m].id[0] = ids[i];
			a[m].dp.instance_ids = a[m].id;
			a[m].dp.n_instance_ids = 1;
			a[m].job.kind = ORCH_JOB_DESCRIBE;
			a[m].job.region = region;
			a[m].job.describe = &a[m].dp;
			jp[m] = &a[m].job;
			m++;
		}
		if (m == 0)
			break;
		orch_pool_run(pool, jp, m);
		for (size_t k = 0; k < m; k++) {
			struct orch_job *j = &a[k].job;
			const char *ip = answered_ip(j);

			*calls += j->ae.attempts > 0 ? j->ae.attempts : 1;
			if (ip) {
				if (!(ips[a[k].index] = strdup(ip)))
					rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
				running[a[k].index] = j->instances->v[0].state_code == 16;
			} else if (j->rc == GB_E_OK || orch_not_visible(j)) {
				later++;	/* not yet */
			} else {
				failed[a[k].index] = true;
				gb_log_warn("address_failed region=%s instance=%s error=%s",
					    region, ids[a[k].index], j->err.text);
			}
			orch_job_clear(j);
		}
		if (rc || later == 0 || !(w = orch_visible_wait(&wait, *waited)))
			break;
		gb_log_info("address_retry region=%s n=%zu wait=%.2f", region, later, w);
		orch_sleep(o, w);
		*waited += w;
	}
out:
	free(a);
	free(jp);
	free(failed);
	return rc;
}

/* The slots of [region] committed without an address, into [ids]. */
static void no_address(const struct orch_run *r, const char *region,
		       struct slot **v, const char **ids, size_t *n)
{
	*n = 0;
	for (int i = 0; i < r->n; i++) {
		struct slot *s = &r->slots[i];

		if (s->state != SLOT_COMMITTED || !s->instance_id ||
		    (s->private_ip && *s->private_ip) || strcmp(s->region, region))
			continue;
		v[*n] = s;
		ids[(*n)++] = s->instance_id;
	}
}

static void keep_address(struct orch_run *r, struct slot *s, char *ip,
			 bool running)
{
	struct gb_instance up = { 0 };
	gb_error_t e;

	free(s->private_ip);
	s->private_ip = ip;
	up.request_id = r->req->id;
	up.region = s->region;
	up.instance_id = s->instance_id;
	up.private_ip = ip;
	up.state = running ? GB_INST_RUNNING : GB_INST_PENDING;
	if (gb_state_instance_update(r->st, &up, &e))
		gb_log_warn("address_record_failed req=%s instance=%s error=%s",
			    r->req->id, s->instance_id, e.text);
}

gb_err_t orch_addresses(struct orch_run *r, gb_error_t *err)
{
	struct slot **v = calloc((size_t)r->n + 1, sizeof(*v));
	const char **ids = calloc((size_t)r->n + 1, sizeof(*ids));
	char **ips = calloc((size_t)r->n + 1, sizeof(*ips));
	bool *running = calloc((size_t)r->n + 1, sizeof(*running));
	gb_err_t rc = GB_E_OK;

	if (!v || !ids || !ips || !running) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	for (size_t c = 0; c < r->cand.n && !rc; c++) {
		const char *region = r->cand.v[c].region->name;
		double waited = 0;
		size_t n, got = 0;

		no_address(r, region, v, ids, &n);
		if (n == 0)
			continue;
		memset(ips, 0, n * sizeof(*ips));
		rc = orch_describe_ips(r->o, r->pool, region, ids, n, ips, running,
				       &r->other_calls, &waited, err);
		for (size_t i = 0; i < n; i++) {
			if (!ips[i])
				continue;
			keep_address(r, v[i], ips[i], running[i]);
			got++;
		}
		orch_trace(r, "address", "region=%s asked=%zu got=%zu waited=%.2f: the launch answer had no privateIpAddress%s",
			   region, n, got, waited,
			   got < n ? "; the others register from their slurmd" : "");
	}
out:
	free(v);
	free(ids);
	free(ips);
	free(running);
	return rc;
}
