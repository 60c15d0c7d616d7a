/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_simh.h - a gpuburst-cloudsim for a test or a benchmark: start it on
 * 127.0.0.1 with an ephemeral port and a pid file, drive its control
 * interface, read its state, stop it by its pid.
 *
 * Used by tests/integration/test_orch and bench/fill.  Not installed.
 */
#ifndef GB_TESTS_GB_SIMH_H
#define GB_TESTS_GB_SIMH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "gb_err.h"

struct gb_simh {
	pid_t pid;		/* 0 when not running */
	unsigned port;
	char dir[256];		/* its pid, port and log files */
	char endpoint[64];	/* "http://127.0.0.1:PORT" */
};

/*
 * Start [bin] with [scenario] and the extra arguments [argv] (NULL-ended,
 * may be NULL) in a new temporary directory; wait until it listens.
 */
gb_err_t gb_simh_start(struct gb_simh *s, const char *bin,
		       const char *scenario, const char *const *argv,
		       gb_error_t *err);
/* SIGTERM by pid, wait, remove the directory.  Safe to call twice. */
void gb_simh_stop(struct gb_simh *s);

/* Control interface: [method] "GET", "POST", "DELETE"; *out NEW body. */
gb_err_t gb_simh_call(const struct gb_simh *s, const char *method,
		      const char *path, const char *json, char **out,
		      gb_error_t *err);
/* POST /_sim/capacity {"az", "instance_type", "available": n} */
gb_err_t gb_simh_capacity(const struct gb_simh *s, const char *az,
			  const char *type, long available, gb_error_t *err);
/* POST /_sim/fault with [json] as given. */
gb_err_t gb_simh_fault(const struct gb_simh *s, const char *json,
		       gb_error_t *err);

/* Instances carrying tag gpuburst:request=[request_id]. */
struct gb_simh_count {
	int total;
	int alive;		/* pending or running */
	int dying;		/* shutting-down or terminated */
	int tagged;		/* alive, with a gpuburst:node tag */
};
gb_err_t gb_simh_count(const struct gb_simh *s, const char *request_id,
		       struct gb_simh_count *out, gb_error_t *err);

/*
 * The ids of the instances of [request_id] (alive only if [alive_only]),
 * NEW NULL-terminated (gb_simh_ids_free), *n their number.
 */
gb_err_t gb_simh_ids(const struct gb_simh *s, const char *request_id,
		     bool alive_only, char ***ids, size_t *n, gb_error_t *err);
void gb_simh_ids_free(char **ids);

#endif /* GB_TESTS_GB_SIMH_H */
