/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rng.h - a small deterministic PRNG (xoshiro256**, seeded by splitmix64)
 *
 * A scenario's seed must replay exactly, on every platform, so the simulator
 * does not use rand(3) or random(3).  Not for secrets.
 */
#ifndef GB_CLOUDSIM_RNG_H
#define GB_CLOUDSIM_RNG_H

#include <stdint.h>

struct gb_rng {
	uint64_t s[4];
};

/* Seed [r] from [seed]; different [stream] values give independent streams. */
void gb_rng_seed(struct gb_rng *r, uint64_t seed, uint64_t stream);

uint64_t gb_rng_next(struct gb_rng *r);

/* RET a double uniform in [0, 1). */
double gb_rng_double(struct gb_rng *r);

/* RET a standard normal deviate (Box-Muller). */
double gb_rng_normal(struct gb_rng *r);

#endif /* GB_CLOUDSIM_RNG_H */
