/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_cloudsim_fault.c - scenario faults reproduce: throttle rate, latency
 * percentiles (of the sampled values, no sleeping), bursts, token bucket,
 * injected faults, determinism of the seed
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* cmocka 2.0 deprecates assert_between(), and 1.1 has no assert_int_in_range() */
#define assert_between(v, lo, hi) \
	do { \
		double v_ = (double)(v); \
		if (v_ < (double)(lo) || v_ > (double)(hi)) \
			fail_msg("%s = %g, not in [%g, %g]", #v, v_, (double)(lo), (double)(hi)); \
	} while (0)

#include "fault.h"
#include "gb_err.h"
#include "scenario.h"

static struct gb_scenario *parse(const char *text)
{
	struct gb_scenario *sc = NULL;
	gb_error_t e;

	if (gb_scenario_parse("t.yaml", text, strlen(text), &sc, &e))
		fail_msg("%s", e.text);
	return sc;
}

#define REGIONS "regions:\n  ap-south-1:\n    azs:\n      ap-south-1a:\n" \
		"        capacity: {g5.xlarge: 1}\n        subnets: {subnet-a: 127.1.0.0/24}\n"

/* Issue 4: a throttle rate of 30% over 1000 calls gives 30% +- 5%. */
static void test_throttle_rate(void **state)
{
	struct gb_scenario *sc = parse("seed: 1234\nfaults:\n  default:\n    throttle: 0.3\n" REGIONS);
	gb_faults_t *f;
	struct gb_fault d;
	int throttled = 0;

	(void)state;
	assert_int_equal(gb_faults_create(sc, &f, NULL), GB_E_OK);
	for (int i = 0; i < 1000; i++) {
		gb_faults_decide(f, GB_SIM_ACTION_RUN_INSTANCES, "ap-south-1", i * 0.01, &d);
		if (d.kind == GB_FAULT_ERROR) {
			assert_string_equal(d.error.code, "RequestLimitExceeded");
			assert_int_equal(d.error.status, 503);
			throttled++;
		}
	}
	print_message("throttled %d of 1000 calls (configured 30%%)\n", throttled);
	assert_between(throttled, 250, 350);
	assert_int_equal(gb_faults_counters(f, GB_SIM_ACTION_RUN_INSTANCES)->throttled,
			 (unsigned long)throttled);
	gb_faults_destroy(f);
	gb_scenario_destroy(sc);
}

/* Every seed, not just a lucky one, stays within the tolerance. */
static void test_throttle_rate_seeds(void **state)
{
	(void)state;
	for (int seed = 1; seed <= 20; seed++) {
		char text[512];
		struct gb_scenario *sc;
		gb_faults_t *f;
		struct gb_fault d;
		int throttled = 0;

		snprintf(text, sizeof(text), "seed: %d\nfaults:\n  default:\n    throttle: 0.3\n" REGIONS, seed);
		sc = parse(text);
		assert_int_equal(gb_faults_create(sc, &f, NULL), GB_E_OK);
		for (int i = 0; i < 1000; i++) {
			gb_faults_decide(f, GB_SIM_ACTION_DESCRIBE_INSTANCES, "ap-south-1", 0, &d);
			throttled += d.kind == GB_FAULT_ERROR;
		}
		assert_between(throttled, 250, 350);
		gb_faults_destroy(f);
		gb_scenario_destroy(sc);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Empirical quantile (nearest rank) of sorted [v]. */
static double quantile(const double *v, size_t n, double p)
{
	size_t k = (size_t)ceil(p * (double)n);

	return v[k ? k - 1 : 0];
}

/* Sample [n] latencies of RunInstances; RET NEW sorted array. */
static double *sample_latencies(struct gb_scenario *sc, size_t n)
{
	double *v = calloc(n, sizeof(*v));
	gb_faults_t *f;
	struct gb_fault d;

	assert_int_equal(gb_faults_create(sc, &f, NULL), GB_E_OK);
	for (size_t i = 0; i < n; i++) {
		gb_faults_decide(f, GB_SIM_ACTION_RUN_INSTANCES, "ap-south-1", 0, &d);
		v[i] = d.latency;
	}
	gb_faults_destroy(f);
	qsort(v, n, sizeof(*v), cmp_double);
	return v;
}

/* Fraction of sorted [v] at or below [x]. */
static double cdf(const double *v, size_t n, double x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (double)lo / (double)n;
}

/*
 * The sampled p50/p90/p99 match the configured ones when the share of
 * samples at or below each configured value is that probability, within a
 * tolerance of about five standard errors (sqrt(p(1-p)/n)).  Comparing in
 * probability rather than in seconds keeps the check meaningful where the
 * quantile function is steep (just above p99).
 */
static void check_percentiles(const double *v, size_t n, double p50, double p90,
			      double p99)
{
	static const double prob[3] = { 0.5, 0.9, 0.99 };
	double conf[3] = { p50, p90, p99 };

	print_message("sampled p50 %.4f p90 %.4f p99 %.4f; configured %.4f %.4f %.4f\n",
		      quantile(v, n, 0.5), quantile(v, n, 0.9), quantile(v, n, 0.99),
		      p50, p90, p99);
	for (int i = 0; i < 3; i++) {
		double got = cdf(v, n, conf[i]);
		double tol = 5 * sqrt(prob[i] * (1 - prob[i]) / (double)n);

		if (fabs(got - prob[i]) > tol)
			fail_msg("%.1f%% of the samples are <= the configured p%g %.4f (want %g%% +- %.2f%%)",
				 100 * got, 100 * prob[i], conf[i], 100 * prob[i], 100 * tol);
	}
}

/* Issue 4: latency percentiles match the configuration (sampled, no sleep). */
static void test_latency_percentiles(void **state)
{
	struct gb_scenario *sc = parse("seed: 5\nfaults:\n  RunInstances:\n"
		"    latency: {distribution: percentiles, p50: 100ms, p90: 300ms, p99: 900ms, max: 2s}\n"
		REGIONS);
	double *v = sample_latencies(sc, 20000);

	(void)state;
	check_percentiles(v, 20000, 0.1, 0.3, 0.9);
	assert_true(v[0] >= 0 && v[19999] <= 2.0);
	free(v);
	gb_scenario_destroy(sc);
}

static void test_latency_lognormal(void **state)
{
	struct gb_scenario *sc = parse("seed: 6\nfaults:\n  default:\n"
		"    latency: {distribution: lognormal, median: 80ms, p99: 400ms}\n" REGIONS);
	const struct gb_latency *l = &sc->faults[GB_SIM_ACTION_RUN_INSTANCES].latency;
	double *v = sample_latencies(sc, 20000);

	(void)state;
	/* the configured p99 is the distribution's p99 */
	assert_true(fabs(gb_latency_quantile(l, 0.99) - 0.4) < 1e-6);
	assert_true(fabs(gb_latency_quantile(l, 0.5) - 0.08) < 1e-9);
	check_percentiles(v, 20000, 0.08, gb_latency_quantile(l, 0.9), 0.4);
	free(v);
	gb_scenario_destroy(sc);
}

static void test_latency_uniform_fixed(void **state)
{
	struct gb_scenario *sc = parse("faults:\n  RunInstances:\n"
		"    latency: {distribution: uniform, min: 1s, max: 3s}\n"
		"  DescribeInstances:\n    latency: 250ms\n" REGIONS);
	double *v = sample_latencies(sc, 10000);
	gb_faults_t *f;
	struct gb_fault d;

	(void)state;
	check_percentiles(v, 10000, 2.0, 2.8, 2.98);
	assert_true(v[0] >= 1.0 && v[9999] <= 3.0);
	assert_int_equal(gb_faults_create(sc, &f, NULL), GB_E_OK);
	gb_faults_decide(f, GB_SIM_ACTION_DESCRIBE_INSTANCES, "ap-south-1", 0, &d);
	assert_true(fabs(d.latency - 0.25) < 1e-12);
	gb_faults_destroy(f);
	free(v);
	gb_scenario_destroy(sc);
}

/* A burst window raises the rate; outside it the base rate holds. */
static void test_bursts(void **state)
{
	struct gb_scenario *sc = parse("seed: 3\nfaults:\n  default:\n    throttle:\n"
		"      rate: 0\n      bursts: [{at: 10s, duration: 5s, rate: 1.0}]\n" REGIONS);
	gb_faults_t *f;
	struct gb_fault d;
	int before = 0, during = 0, after = 0;

	(void)state;
	assert_int_equal(gb_faults_create(sc, &f, NULL), GB_E_OK);
	for (int i = 0; i < 100; i++) {
		gb_faults_decide(f, GB_SIM_ACTION_RUN_INSTANCES, "ap-south-1", 9.99, &d);
		before += d.kind == GB_FAULT_ERROR;
		gb_faults_decide(f, GB_SIM_ACTION_RUN_INSTANCES, "ap-south-1", 12, &d);
		during += d.kind == GB_FAULT_ERROR;
		gb_faults_decide(f, GB_SIM_ACTION_RUN_INSTANCES, "ap-south-1", 15, &d);
		after += d.kind == GB_FAULT_ERROR;
	}
	assert_int_equal(before, 0);
	assert_int_equal(during, 100);
	assert_int_equal(after, 0);
	gb_faults_destroy(f);
	gb_scenario_destroy(sc);
}

/* Bucket of 10, 2 tokens/s: 10 calls pass at once, then 2 per second. */
static void test_token_bucket(void **state)
{
	struct gb_scenario *sc = parse("faults:\n  default:\n    throttle:\n"
		"      bucket: {size: 10, refill: 2}\n" REGIONS);
	gb_faults_t *f;
	struct gb_fault d;
	int ok = 0;

	(void)state;
	assert_int_equal(gb_faults_create(sc, &f, NULL), GB_E_OK);
	for (int i = 0; i < 30; i++) {
		gb_faults_decide(f, GB_SIM_ACTION_RUN_INSTANCES, "ap-south-1", 0, &d);
		ok += d.kind == GB_FAULT_NONE;
	}
	assert_int_equal(ok, 10);
	ok = 0;
	for (int i = 0; i < 30; i++) {
		gb_faults_decide(f, GB_SIM_ACTION_RUN_INSTANCES, "ap-south-1", 3.0, &d);
		ok += d.kind == GB_FAULT_NONE;
	}
	assert_int_equal(ok, 6);
	/* buckets are per action: DescribeInstances still has its own */
	gb_faults_decide(f, GB_SIM_ACTION_DESCRIBE_INSTANCES, "ap-south-1", 3.0, &d);
	assert_int_equal(d.kind, GB_FAULT_NONE);
	gb_faults_destroy(f);
	gb_scenario_destroy(sc);
}

static void test_rates_of_other_faults(void **state)
{
	struct gb_scenario *sc = parse("seed: 8\nfaults:\n  default:\n"
		"    server_errors: {rate: 0.1, code: Unavailable}\n    drop_rate: 0.05\n"
		"    lost_response_rate: 0.2\n    slow_body: {rate: 0.5, bytes_per_second: 100}\n"
		REGIONS);
	gb_faults_t *f;
	struct gb_fault d;
	int err = 0, drop = 0, lost = 0, slow = 0;

	(void)state;
	assert_int_equal(gb_faults_create(sc, &f, NULL), GB_E_OK);
	for (int i = 0; i < 4000; i++) {
		gb_faults_decide(f, GB_SIM_ACTION_CREATE_TAGS, "ap-south-1", 0, &d);
		if (d.kind == GB_FAULT_ERROR) {
			assert_string_equal(d.error.code, "Unavailable");
			assert_int_equal(d.error.status, 503);
			err++;
		}
		drop += d.kind == GB_FAULT_DROP;
		lost += d.kind == GB_FAULT_LOST_RESPONSE;
		slow += d.slow_bps == 100;
	}
	/* drop first (5%), then 5xx (10% of the rest), then lost (20% of the rest) */
	assert_between(drop, 4000 * 0.05 * 0.8, 4000 * 0.05 * 1.2);
	assert_between(err, 4000 * 0.095 * 0.85, 4000 * 0.095 * 1.15);
	assert_between(lost, 4000 * 0.171 * 0.85, 4000 * 0.171 * 1.15);
	assert_between(slow, 4000 * 0.5 * 0.9, 4000 * 0.5 * 1.1);
	gb_faults_destroy(f);
	gb_scenario_destroy(sc);
}

static void test_injection(void **state)
{
	struct gb_scenario *sc = parse(REGIONS);
	struct gb_fault_injection inj = { 0 };
	gb_faults_t *f;
	struct gb_fault d;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_faults_create(sc, &f, NULL), GB_E_OK);
	inj.kind = GB_FAULT_ERROR;
	inj.code = "InsufficientInstanceCapacity";
	inj.count = 2;
	inj.action = GB_SIM_ACTION_RUN_INSTANCES;
	assert_int_equal(gb_faults_inject(f, &inj, &e), GB_E_OK);
	inj.kind = GB_FAULT_DROP;
	inj.code = NULL;
	inj.count = 1;
	inj.action = GB_SIM_ACTION_COUNT;
	inj.region = "ap-northeast-1";
	assert_int_equal(gb_faults_inject(f, &inj, &e), GB_E_OK);
	assert_int_equal(gb_faults_pending(f), 3);

	gb_faults_decide(f, GB_SIM_ACTION_DESCRIBE_INSTANCES, "ap-south-1", 0, &d);
	assert_int_equal(d.kind, GB_FAULT_NONE);	/* neither matches */
	gb_faults_decide(f, GB_SIM_ACTION_RUN_INSTANCES, "ap-south-1", 0, &d);
	assert_int_equal(d.kind, GB_FAULT_ERROR);
	assert_int_equal(d.error.status, 500);
	assert_string_equal(d.error.code, "InsufficientInstanceCapacity");
	assert_true(d.injected);
	gb_faults_decide(f, GB_SIM_ACTION_RUN_INSTANCES, "ap-south-1", 0, &d);
	assert_int_equal(d.kind, GB_FAULT_ERROR);
	gb_faults_decide(f, GB_SIM_ACTION_RUN_INSTANCES, "ap-south-1", 0, &d);
	assert_int_equal(d.kind, GB_FAULT_NONE);	/* count used up */
	gb_faults_decide(f, GB_SIM_ACTION_CREATE_TAGS, "ap-northeast-1", 0, &d);
	assert_int_equal(d.kind, GB_FAULT_DROP);
	assert_int_equal(gb_faults_pending(f), 0);

	inj.kind = GB_FAULT_ERROR;
	inj.code = NULL;
	assert_int_equal(gb_faults_inject(f, &inj, &e), GB_E_INVALID);
	inj.code = "X";
	inj.count = 0;
	assert_int_equal(gb_faults_inject(f, &inj, &e), GB_E_INVALID);
	gb_faults_destroy(f);
	gb_scenario_destroy(sc);
}

/* The same seed replays the same decisions. */
static void test_replay(void **state)
{
	struct gb_scenario *sc = parse("seed: 77\nfaults:\n  default:\n    throttle: 0.5\n"
		"    latency: {distribution: lognormal, median: 10ms, sigma: 1}\n" REGIONS);
	gb_faults_t *a, *b;
	struct gb_fault da, db;

	(void)state;
	assert_int_equal(gb_faults_create(sc, &a, NULL), GB_E_OK);
	assert_int_equal(gb_faults_create(sc, &b, NULL), GB_E_OK);
	for (int i = 0; i < 500; i++) {
		gb_faults_decide(a, GB_SIM_ACTION_RUN_INSTANCES, "ap-south-1", 0, &da);
		gb_faults_decide(b, GB_SIM_ACTION_RUN_INSTANCES, "ap-south-1", 0, &db);
		assert_int_equal(da.kind, db.kind);
		assert_true(da.latency == db.latency);
	}
	gb_faults_destroy(a);
	gb_faults_destroy(b);
	gb_scenario_destroy(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_throttle_rate),
		cmocka_unit_test(test_throttle_rate_seeds),
		cmocka_unit_test(test_latency_percentiles),
		cmocka_unit_test(test_latency_lognormal),
		cmocka_unit_test(test_latency_uniform_fixed),
		cmocka_unit_test(test_bursts),
		cmocka_unit_test(test_token_bucket),
		cmocka_unit_test(test_rates_of_other_faults),
		cmocka_unit_test(test_injection),
		cmocka_unit_test(test_replay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
