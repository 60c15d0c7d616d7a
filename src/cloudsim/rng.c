/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rng.c - xoshiro256** (Blackman and Vigna) with a splitmix64 seeder
 */
#include "config.h"

#include <math.h>

#include "rng.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void gb_rng_seed(struct gb_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL);

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

uint64_t gb_rng_next(struct gb_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double gb_rng_double(struct gb_rng *r)
{
	return (double)(gb_rng_next(r) >> 11) * 0x1.0p-53;
}

double gb_rng_normal(struct gb_rng *r)
{
	double u1 = gb_rng_double(r), u2 = gb_rng_double(r);

	if (u1 < 1e-300)	/* log(0) */
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}
