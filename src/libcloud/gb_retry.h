/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_retry.h - bounded exponential back-off with full jitter
 *
 * The n-th retry (0-based) waits random(0, min(max_delay, base_delay * 2^n))
 * seconds ("full jitter", as the AWS SDKs' standard mode), and retrying
 * stops after max_attempts requests or when the next wait would take the
 * whole operation past max_total seconds, whichever comes first.
 */
#ifndef GB_LIBCLOUD_GB_RETRY_H
#define GB_LIBCLOUD_GB_RETRY_H

#include <stdbool.h>

#define GB_RETRY_DEFAULT_ATTEMPTS 5
#define GB_RETRY_DEFAULT_BASE 0.5	/* seconds */
#define GB_RETRY_DEFAULT_MAX_DELAY 20.0
#define GB_RETRY_DEFAULT_TOTAL 90.0

struct gb_retry_policy {
	int max_attempts;	/* requests in all, the first included; 0: default */
	double base_delay;	/* seconds; 0: default */
	double max_delay;	/* cap of one wait; 0: default */
	double max_total;	/* budget for the whole operation; 0: default */
};

/* Replace every zero field of [p] by its default. */
void gb_retry_policy_fill(struct gb_retry_policy *p);

/*
 * RET the wait before retry [n] (0-based) given [u] uniform in [0, 1):
 * u * min(max_delay, base_delay * 2^n).  [p] must be filled.
 */
double gb_retry_backoff(const struct gb_retry_policy *p, int n, double u);

/*
 * RET whether another attempt is allowed after [attempts] requests that
 * took [elapsed] seconds so far, if it is preceded by a wait of [delay].
 */
bool gb_retry_allowed(const struct gb_retry_policy *p, int attempts,
		      double elapsed, double delay);

/* RET a uniform random number in [0, 1) from the system CSPRNG. */
double gb_retry_uniform(void);

#endif /* GB_LIBCLOUD_GB_RETRY_H */
