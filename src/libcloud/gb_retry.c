/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_retry.c - bounded exponential back-off with full jitter
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "gb_retry.h"
#include "gb_util.h"

void gb_retry_policy_fill(struct gb_retry_policy *p)
{
	if (p->max_attempts <= 0)
		p->max_attempts = GB_RETRY_DEFAULT_ATTEMPTS;
	if (p->base_delay <= 0)
		p->base_delay = GB_RETRY_DEFAULT_BASE;
	if (p->max_delay <= 0)
		p->max_delay = GB_RETRY_DEFAULT_MAX_DELAY;
	if (p->max_total <= 0)
		p->max_total = GB_RETRY_DEFAULT_TOTAL;
}

double gb_retry_backoff(const struct gb_retry_policy *p, int n, double u)
{
	double ceiling = p->base_delay;

	/* doubling stops at the cap: no overflow for any n */
	for (int i = 0; i < n && ceiling < p->max_delay; i++)
		ceiling *= 2;
	if (ceiling > p->max_delay)
		ceiling = p->max_delay;
	if (u < 0 || u >= 1)
		u = 0;
	return u * ceiling;
}

bool gb_retry_allowed(const struct gb_retry_policy *p, int attempts,
		      double elapsed, double delay)
{
	return attempts < p->max_attempts && elapsed + delay <= p->max_total;
}

double gb_retry_uniform(void)
{
	uint64_t r = 0;

	/* 53 random bits: every double in [0, 1) at that spacing */
	if (gb_random_bytes(&r, sizeof(r), NULL) != GB_E_OK)
		r = (uint64_t)rand();
	return (double)(r >> 11) / (double)(UINT64_C(1) << 53);
}
