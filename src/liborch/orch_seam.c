/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_seam.c - the orchestrator's clocks and sleep (seams a benchmark or
 * a test replaces) and the EC2 clients it makes
 */
#include "config.h"

#include "gb_util.h"
#include "orch_int.h"

double orch_wall(const gb_orch_t *o)
{
	return o->wall ? o->wall(o->seam_ctx) : gb_time_now();
}

double orch_mono(const gb_orch_t *o)
{
	return o->mono ? o->mono(o->seam_ctx) : gb_time_mono();
}

void orch_sleep(const gb_orch_t *o, double seconds)
{
	if (seconds <= 0)
		return;
	if (o->sleep)
		o->sleep(seconds, o->seam_ctx);
	else
		gb_time_sleep(seconds);
}

static void ec2_sleep(double seconds, void *ctx)
{
	orch_sleep(ctx, seconds);
}

static double ec2_mono(void *ctx)
{
	return orch_mono(ctx);
}

gb_err_t orch_ec2_new(const gb_orch_t *o, const char *region,
			 gb_ec2_t **out, gb_error_t *err)
{
	const struct gb_conf_cloud *cc = &o->conf->cloud;
	const struct gb_conf_region *r = gb_conf_region(o->conf, region);
	struct gb_ec2_opts eo = { 0 };

	eo.region = region;
	eo.endpoint = gb_conf_endpoint(o->conf, r);
	eo.creds = o->creds;
	eo.http.connect_timeout_ms = (long)(cc->connect_timeout * 1000);
	eo.http.timeout_ms = (long)(cc->request_timeout * 1000);
	/* CA bundle and proxy; a loopback endpoint never uses the proxy */
	gb_plan_http_opts(o->conf, &eo.http);
	eo.retry.max_attempts = cc->max_retries + 1;
	eo.retry.max_total = cc->retry_budget;
	/*
	 * Waits and budgets follow the orchestrator's clock; X-Amz-Date keeps
	 * the real one (a shifted clock would be a signature error).
	 */
	eo.sleep = ec2_sleep;
	eo.mono = ec2_mono;
	eo.seam_ctx = (void *)o;
	return gb_ec2_create(&eo, out, err);
}
