/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cloudsim.c - the simulator's context: clock, routing (control, IMDS, STS,
 * EC2), the timer's tick
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cloudsim.h"
#include "gb_log.h"
#include "gb_util.h"

gb_err_t gb_cloudsim_create(struct gb_scenario *sc, const char *boot_dir,
			    double time_scale, struct gb_cloudsim **out,
			    gb_error_t *err)
{
	struct gb_cloudsim *cs = calloc(1, sizeof(*cs));
	gb_err_t rc;

	*out = NULL;
	if (!cs) {
		gb_scenario_destroy(sc);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	cs->sc = sc;
	cs->scale = time_scale > 0 ? time_scale : 1.0;
	cs->mono0 = gb_time_mono();
	cs->wall = gb_time_now;
	pthread_mutex_init(&cs->mu, NULL);
	if ((rc = gb_sim_create(sc, &cs->sim, err)) ||
	    (rc = gb_faults_create(sc, &cs->faults, err)) ||
	    (rc = gb_cs_sts_create(cs, err)))
		goto fail;
	gb_sim_set_epoch(cs->sim, gb_time_now());
	if (sc->boot == GB_SC_BOOT_EXEC) {
		if ((rc = gb_boot_create(boot_dir, &cs->boot, err)))
			goto fail;
		gb_sim_events_enable(cs->sim, true);
	}
	*out = cs;
	return GB_E_OK;
fail:
	gb_cloudsim_destroy(cs);
	return rc;
}

void gb_cloudsim_destroy(struct gb_cloudsim *cs)
{
	if (!cs)
		return;
	gb_boot_destroy(cs->boot);
	gb_cs_sts_destroy(cs);
	gb_faults_destroy(cs->faults);
	gb_sim_destroy(cs->sim);
	gb_scenario_destroy(cs->sc);
	pthread_mutex_destroy(&cs->mu);
	free(cs);
}

double gb_cloudsim_now(const struct gb_cloudsim *cs)
{
	if (cs->frozen)
		return cs->offset;
	return (gb_time_mono() - cs->mono0) * cs->scale + cs->offset;
}

const char *gb_cs_header_get(const struct gb_cs_request *req, const char *name)
{
	for (size_t i = 0; i < req->nheaders; i++) {
		if (strcasecmp(req->headers[i].name, name) == 0)
			return req->headers[i].value;
	}
	return NULL;
}

void gb_cs_response_free(struct gb_cs_response *resp)
{
	gb_buf_free(&resp->body);
}

void gb_cloudsim_handle(struct gb_cloudsim *cs, const struct gb_cs_request *req,
			struct gb_cs_response *resp)
{
	if (req->path && gb_str_has_prefix(req->path, GB_CS_CONTROL_PREFIX))
		gb_simctl_handle(cs, req, resp);
	else if (req->path && gb_str_has_prefix(req->path, GB_CS_IMDS_PREFIX))
		gb_imds_handle(cs, req, resp);
	else if (gb_cs_is_sts(req))
		gb_sts_handle(cs, req, resp);
	else
		gb_ec2api_handle(cs, req, resp);
}

void gb_cloudsim_run_events(struct gb_cloudsim *cs, struct gb_sim_event *ev,
			    size_t n)
{
	gb_error_t err;

	for (size_t i = 0; cs->boot && i < n; i++) {
		if (gb_boot_event(cs->boot, &ev[i], &err) != GB_E_OK)
			gb_log_error("boot failed instance=%s error=%s", ev[i].id,
				     GB_LOG_Q(err.text));
	}
}

void gb_cloudsim_tick(struct gb_cloudsim *cs)
{
	struct gb_sim_event *ev = NULL;
	size_t n = 0;

	pthread_mutex_lock(&cs->mu);
	gb_sim_advance(cs->sim, gb_cloudsim_now(cs));
	if (cs->boot)
		n = gb_sim_events_take(cs->sim, &ev);
	pthread_mutex_unlock(&cs->mu);
	gb_cloudsim_run_events(cs, ev, n);
	gb_sim_events_free(ev, n);
	if (cs->boot)
		gb_boot_reap(cs->boot);
}
