/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch.c - the orchestrator object: options, credentials, its threads' end
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gb_llm.h"
#include "gb_log.h"
#include "gb_util.h"
#include "orch_int.h"

void gb_orch_destroy(gb_orch_t *o)
{
	if (!o)
		return;
	orch_workers_free(o);
	pthread_mutex_destroy(&o->workers_mu);
	pthread_mutex_destroy(&o->preflight_mu);
	gb_llm_destroy(o->llm);
	free(o->llm_error);
	orch_board_destroy(o->board);
	if (o->own_creds)
		gb_creds_destroy(o->creds);
	free(o->state_path);
	free(o);
}

/*
 * planner.kind llm: the LLM planner proposes first.  It is an optional
 * advisor (the heuristic plan is always there), so a planner that cannot
 * be set up (say, an unreadable key file) is logged, not fatal.
 */
static void llm_planner(gb_orch_t *o)
{
	struct gb_llm_opts lo = { o->conf, NULL, o->creds };
	gb_error_t e;
	char q[GB_ERROR_TEXT_MAX + 8];

	if (gb_llm_create(&lo, &o->llm, &e)) {
		gb_log_error("llm_planner_disabled error=%s", gb_log_q(q, sizeof(q), e.text));
		o->llm_error = strdup(e.text);	/* for gpuburstctl plan to say */
		return;
	}
	o->propose = gb_llm_propose;
	o->propose_ctx = o->llm;
}

gb_err_t gb_orch_create(const struct gb_orch_opts *opts, gb_orch_t **out,
			gb_error_t *err)
{
	gb_orch_t *o = NULL;
	gb_err_t rc;

	*out = NULL;
	if (!opts || !opts->conf)
		return gb_errorf(err, GB_E_INVALID, "orchestrator: no configuration");
	if (!(o = calloc(1, sizeof(*o))))
		return gb_errorf(err, GB_E_NOMEM, "orchestrator: out of memory");
	pthread_mutex_init(&o->workers_mu, NULL);
	pthread_mutex_init(&o->preflight_mu, NULL);
	o->conf = opts->conf;
	if (opts->state_path) {
		if (!(o->state_path = strdup(opts->state_path))) {
			gb_orch_destroy(o);
			return gb_errorf(err, GB_E_NOMEM, "orchestrator: out of memory");
		}
	} else if (opts->conf->state_dir) {
		struct gb_buf b = GB_BUF_INIT;

		gb_buf_printf(&b, "%s/%s", opts->conf->state_dir, GB_STATE_FILE);
		o->state_path = gb_buf_steal(&b);
	}
	o->max_parallel = opts->max_parallel > 0 ? opts->max_parallel :
			  GB_ORCH_DEFAULT_PARALLEL;
	if (o->max_parallel > GB_ORCH_MAX_PARALLEL)
		o->max_parallel = GB_ORCH_MAX_PARALLEL;
	/* the requests of one orchestrator share them: two at full width */
	o->pool_threads = 2 * o->max_parallel;
	o->busy_ms = opts->state_busy_ms > 0 ? opts->state_busy_ms : 10000;
	if (opts->tuning)
		o->tuning = *opts->tuning;
	if (o->tuning.max_rounds <= 0)
		o->tuning.max_rounds = 16;
	if (o->tuning.max_replans <= 0)
		o->tuning.max_replans = 4;
	if (o->tuning.hedge == 0)
		o->tuning.hedge = 1;
	if (o->tuning.max_attempts_per_subnet <= 0)
		o->tuning.max_attempts_per_subnet = GB_ORCH_MAX_ATTEMPTS_PER_SUBNET;
	if (o->tuning.throttle_limit <= 0)
		o->tuning.throttle_limit = 2;
	if (!(o->tuning.backoff_first > 0))
		o->tuning.backoff_first = 2.0;
	if (!(o->tuning.backoff_max > 0))
		o->tuning.backoff_max = 30.0;
	o->propose = opts->propose;
	o->propose_ctx = opts->propose_ctx;
	o->wall = opts->wall;
	o->mono = opts->mono;
	o->sleep = opts->sleep;
	o->seam_ctx = opts->seam_ctx;
	if (opts->creds) {
		o->creds = opts->creds;
	} else {
		rc = gb_plan_creds_create(opts->conf, &o->creds, err);
		if (rc) {
			gb_orch_destroy(o);
			return rc;
		}
		o->own_creds = true;
	}
	if ((rc = orch_board_create(&o->board, err)) ||
	    (rc = gb_http_global_init(err))) {
		gb_orch_destroy(o);
		return rc;
	}
	if (!o->propose && o->conf->planner.kind == GB_PLANNER_LLM)
		llm_planner(o);
	*out = o;
	return GB_E_OK;
}

const char *gb_orch_code_name(enum gb_orch_code c)
{
	static const char *const names[] = {
#define XX(name, text) text,
		GB_ORCH_CODE_MAP(XX)
#undef XX
	};

	return (unsigned)c < GB_ARRAY_LEN(names) ? names[c] : "";
}

const struct gb_conf *gb_orch_conf(const gb_orch_t *o)
{
	return o ? o->conf : NULL;
}
