/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_cloudsim_scenario.c - cloudsim scenario parser: valid files and the
 * exact message of every invalid one in tests/data/cloudsim/invalid/
 *
 * Each invalid file starts with "# expect: LINE:COL: message"; the loader
 * must fail with "<path>:LINE:COL: message".
 */
#include "config.h"

#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gb_err.h"
#include "gb_conf.h"
#include "gb_str.h"
#include "gb_util.h"
#include "scenario.h"

#define DATA GB_TOP_SRCDIR "/tests/data/cloudsim"

static struct gb_scenario *load_ok(const char *path)
{
	struct gb_scenario *sc = NULL;
	gb_error_t e;

	if (gb_scenario_load(path, &sc, &e) != GB_E_OK)
		fail_msg("%s: %s", path, e.text);
	return sc;
}

static void test_full(void **state)
{
	struct gb_scenario *sc = load_ok(DATA "/valid/full.yaml");
	const struct gb_fault_profile *run, *desc, *term;
	const struct gb_sc_region *rg;
	const struct gb_sc_az *az;

	(void)state;
	assert_int_equal(sc->seed, 42);
	assert_string_equal(sc->account_id, "111122223333");
	assert_int_equal(sc->ncreds, 2);
	assert_string_equal(sc->creds[0].access_key_id, "AKIDTEST");
	assert_string_equal(sc->creds[0].secret_access_key, "secret/TEST");
	assert_true(fabs(sc->pending_s - 0.25) < 1e-9);
	assert_true(fabs(sc->shutting_down_s - 2) < 1e-9);
	assert_true(fabs(sc->terminated_visible_s - 300) < 1e-9);
	assert_int_equal(sc->boot, GB_SC_BOOT_EXEC);
	assert_string_equal(sc->boot_dir, "/tmp/boot");

	/* actions inherit default, then override what they name */
	run = &sc->faults[GB_SIM_ACTION_RUN_INSTANCES];
	desc = &sc->faults[GB_SIM_ACTION_DESCRIBE_INSTANCES];
	term = &sc->faults[GB_SIM_ACTION_TERMINATE_INSTANCES];
	assert_int_equal(run->latency.kind, GB_LATENCY_PERCENTILES);
	assert_true(fabs(run->latency.q[1] - 0.1) < 1e-9);
	assert_true(fabs(run->latency.q[4] - 0.6) < 1e-9);	/* default max */
	assert_true(fabs(run->throttle_rate - 0.25) < 1e-9);
	assert_int_equal(run->nbursts, 1);			/* inherited */
	assert_true(fabs(run->error_rate - 0.05) < 1e-9);
	assert_string_equal(run->error_code, "Unavailable");
	assert_int_equal(desc->latency.kind, GB_LATENCY_FIXED);
	assert_true(fabs(desc->latency.a - 0.01) < 1e-9);
	assert_true(fabs(desc->error_rate - 0.5) < 1e-9);
	assert_int_equal(term->latency.kind, GB_LATENCY_LOGNORMAL);
	assert_true(fabs(term->latency.a - 0.05) < 1e-9);
	assert_true(fabs(term->latency.b - log(4.0) / 2.3263478740408408) < 1e-9);
	assert_true(fabs(term->throttle_rate - 0.1) < 1e-9);
	assert_true(fabs(term->bursts[0].at - 10) < 1e-9);
	assert_true(fabs(term->bursts[0].rate - 0.9) < 1e-9);
	assert_true(fabs(term->bucket_size - 20) < 1e-9);
	assert_true(fabs(term->bucket_refill - 5) < 1e-9);
	assert_true(fabs(term->drop_rate - 0.01) < 1e-9);
	assert_true(fabs(term->lost_response_rate - 0.02) < 1e-9);
	assert_true(fabs(term->slow_body_bps - 1000) < 1e-9);

	assert_int_equal(sc->nregions, 2);
	rg = gb_scenario_region(sc, "ap-south-1");
	assert_non_null(rg);
	assert_int_equal(rg->vcpu_quota[GB_ITYPE_BUCKET_G], 64);
	assert_int_equal(rg->vcpu_quota[GB_ITYPE_BUCKET_P], 0);
	assert_int_equal(rg->instance_quota, 10);
	assert_int_equal(rg->spot_vcpu_quota[GB_ITYPE_BUCKET_G], 32);
	assert_int_equal(rg->spot_vcpu_quota[GB_ITYPE_BUCKET_P], 96);
	assert_int_equal(rg->images.n, 1);
	assert_int_equal(rg->security_groups.n, 3);
	assert_string_equal(rg->security_groups.v[1], "sg-0bb");
	assert_int_equal(rg->sg_rules[0], GB_SC_SG_SELF);
	assert_int_equal(rg->sg_rules[1], GB_SC_SG_NONE);
	assert_int_equal(rg->sg_rules[2], GB_SC_SG_EGRESS);
	assert_int_equal(rg->pg_limit, 3);
	assert_int_equal(rg->pg_capacity, 16);
	assert_int_equal(rg->npg_caps, 1);
	assert_string_equal(rg->pg_caps[0].type->name, "g5.xlarge");
	assert_int_equal(rg->pg_caps[0].n, 2);
	assert_int_equal(rg->nazs, 2);
	az = &rg->azs[0];
	assert_string_equal(az->zone_id, "aps1-az1");
	assert_int_equal(az->npools, 2);
	assert_string_equal(az->pools[0].type->name, "g5.xlarge");
	assert_int_equal(az->pools[0].capacity, 3);
	assert_int_equal(az->pools[1].capacity, 0);	/* offered, none free */
	assert_false(az->pools[0].spot);
	assert_true(az->pools[1].spot);			/* Spot of its own */
	assert_int_equal(az->pools[1].spot_capacity, 7);
	assert_true(fabs(az->pools[1].spot_price - 0.2345) < 1e-9);
	assert_int_equal(az->nsubnets, 2);
	assert_int_equal(az->subnets[1].prefix, 28);
	assert_string_equal(az->subnets[1].vpc_id, "vpc-aps1");
	/* without offerings the capacity keys are the offerings */
	assert_int_equal(rg->azs[1].npools, 2);
	assert_string_equal(rg->azs[1].zone_id, "aps1-az2");	/* generated */
	rg = gb_scenario_region(sc, "ap-northeast-1");
	assert_string_equal(rg->azs[0].zone_id, "apne1-az1");

	/* events sorted by time */
	assert_int_equal(sc->nevents, 3);
	assert_true(fabs(sc->events[0].at - 30) < 1e-9);
	assert_int_equal(sc->events[0].op, GB_SC_EVENT_SET);
	assert_int_equal(sc->events[1].op, GB_SC_EVENT_ADD);
	assert_int_equal(sc->events[1].n, 2);
	assert_false(sc->events[1].spot);
	assert_int_equal(sc->events[2].op, GB_SC_EVENT_REMOVE);
	assert_true(sc->events[2].spot);
	gb_scenario_destroy(sc);
}

static void test_defaults(void **state)
{
	struct gb_scenario *sc = load_ok(DATA "/valid/minimal.yaml");

	(void)state;
	assert_int_equal(sc->ncreds, 1);
	assert_string_equal(sc->creds[0].access_key_id, "AKIDEXAMPLE");
	assert_string_equal(sc->creds[0].secret_access_key,
			    "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
	assert_string_equal(sc->account_id, "123456789012");
	assert_true(fabs(sc->pending_s - 0.5) < 1e-9);
	assert_true(fabs(sc->shutting_down_s - 1.0) < 1e-9);
	assert_int_equal(sc->boot, GB_SC_BOOT_NONE);
	assert_null(sc->boot_dir);
	assert_int_equal(sc->regions[0].instance_quota, GB_SC_UNLIMITED);
	assert_int_equal(sc->regions[0].pg_limit, 500);	/* EC2's per Region */
	assert_int_equal(sc->regions[0].pg_capacity, GB_SC_UNLIMITED);
	assert_int_equal(sc->regions[0].npg_caps, 0);
	assert_int_equal(sc->regions[0].spot_vcpu_quota[GB_ITYPE_BUCKET_G], GB_SC_UNLIMITED);
	assert_false(sc->regions[0].azs[0].pools[0].spot);
	for (int a = 0; a < GB_SIM_ACTION_COUNT; a++) {
		assert_int_equal(sc->faults[a].latency.kind, GB_LATENCY_FIXED);
		assert_true(sc->faults[a].latency.a == 0);
		assert_true(sc->faults[a].throttle_rate == 0);
	}
	assert_string_equal(sc->regions[0].azs[0].zone_id, "use1-az1");
	gb_scenario_destroy(sc);
}

/* roles.yaml: each role's arn, maximum (default an hour), external id, tokens. */
static void test_roles(void **state)
{
	struct gb_scenario *sc = load_ok(DATA "/roles.yaml");
	const struct gb_sc_role *r;

	(void)state;
	assert_int_equal(sc->nroles, 3);
	r = gb_scenario_role(sc, "arn:aws:iam::123456789012:role/gpuburst");
	assert_ptr_equal(r, &sc->roles[0]);
	assert_int_equal(r->max_session_s, 7200);
	assert_null(r->external_id);
	assert_int_equal(r->web_tokens.n, 0);
	r = gb_scenario_role(sc, "arn:aws:iam::123456789012:role/gpuburst-partner");
	assert_non_null(r);
	assert_int_equal(r->max_session_s, 3600);
	assert_string_equal(r->external_id, "site-42");
	r = gb_scenario_role(sc, "arn:aws:iam::123456789012:role/gpuburst-web");
	assert_non_null(r);
	assert_int_equal(r->web_tokens.n, 1);
	assert_string_equal(r->web_tokens.v[0],
			    "eyJhbGciOiJSUzI1NiJ9.gpuburst-test-token.c2lnbmF0dXJl");
	assert_null(gb_scenario_role(sc, "arn:aws:iam::123456789012:role/nobody"));
	assert_null(gb_scenario_role(sc, NULL));
	gb_scenario_destroy(sc);
	sc = load_ok(DATA "/valid/minimal.yaml");
	assert_int_equal(sc->nroles, 0);
	gb_scenario_destroy(sc);
}

/* RET NEW "<path>:<expectation>" from the file's first line. */
static char *expected_message(const char *path)
{
	char *text = NULL, *nl, *msg;
	size_t len = 0;

	assert_int_equal(gb_file_read(path, 1 << 16, &text, &len, NULL), GB_E_OK);
	assert_true(strncmp(text, "# expect: ", 10) == 0);
	nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	msg = malloc(strlen(path) + strlen(text) + 2);
	assert_non_null(msg);
	snprintf(msg, strlen(path) + strlen(text) + 2, "%s:%s", path, text + 10);
	free(text);
	return msg;
}

static void test_invalid_files(void **state)
{
	DIR *d = opendir(DATA "/invalid");
	struct dirent *de;
	int n = 0, bad = 0;

	(void)state;
	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[512];
		struct gb_scenario *sc = NULL;
		gb_error_t e;
		char *want;

		if (!strstr(de->d_name, ".yaml"))
			continue;
		snprintf(path, sizeof(path), "%s/invalid/%s", DATA, de->d_name);
		want = expected_message(path);
		if (gb_scenario_load(path, &sc, &e) == GB_E_OK) {
			print_error("%s: loaded, expected %s\n", de->d_name, want);
			bad++;
		} else if (e.code != GB_E_CONFIG || strcmp(e.text, want) != 0) {
			print_error("%s:\n  got  %s\n  want %s\n", de->d_name, e.text, want);
			bad++;
		}
		assert_null(sc);
		free(want);
		n++;
	}
	closedir(d);
	assert_true(n >= 20);
	assert_int_equal(bad, 0);
}

static void test_missing_file(void **state)
{
	struct gb_scenario *sc = NULL;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_scenario_load(DATA "/no-such.yaml", &sc, &e), GB_E_NOTFOUND);
	assert_null(sc);
	assert_non_null(strstr(e.text, "no-such.yaml"));
}

/* capacity_reservations, capacity_block_offerings, resource_groups of capacity.yaml */
static void test_capacity_keys(void **state)
{
	struct gb_scenario *sc = load_ok(DATA "/capacity.yaml");
	const struct gb_sc_region *rg = &sc->regions[0];
	const struct gb_sc_cr *cr = rg->crs;

	(void)state;
	assert_int_equal(rg->ncrs, 4);
	assert_string_equal(cr[0].id, "cr-0123456789abcdef0");
	assert_ptr_equal(cr[0].az, &rg->azs[0]);
	assert_string_equal(cr[0].type->name, "g5.xlarge");
	assert_int_equal(cr[0].count, 2);
	assert_false(cr[0].open);			/* targeted by default */
	assert_int_equal(cr[0].kind, GB_SC_CR_DEFAULT);
	assert_true(cr[0].start == 0 && cr[0].end < 0);	/* no end */
	assert_null(cr[0].state);
	assert_true(cr[1].open);
	assert_ptr_equal(cr[1].az, &rg->azs[1]);
	assert_int_equal(cr[2].kind, GB_SC_CR_BLOCK);
	assert_true(fabs(cr[2].end - 3600) < 1e-9);
	assert_true(fabs(cr[3].start - 86400) < 1e-9 && fabs(cr[3].end - 172800) < 1e-9);
	assert_int_equal(rg->ncb_offers, 2);
	assert_ptr_equal(rg->cb_offers[1].az, &rg->azs[1]);
	assert_int_equal(rg->cb_offers[1].count, 2);
	assert_int_equal(rg->cb_offers[1].hours, 48);
	assert_string_equal(rg->cb_offers[1].upfront_fee, "3931.20");
	assert_true(fabs(rg->cb_offers[0].start - 3 * 86400) < 1e-9);
	assert_int_equal(rg->nrgroups, 1);
	assert_string_equal(rg->rgroups[0].arn,
			    "arn:aws:resource-groups:ap-south-1:123456789012:group/it");
	assert_int_equal(rg->rgroups[0].ids.n, 1);
	gb_scenario_destroy(sc);
}

static void test_shipped_scenarios(void **state)
{
	static const char *files[] = { "default.yaml", "bench.yaml",
				       "throttle-storm.yaml", "quota-wall.yaml" };

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[512];

		snprintf(path, sizeof(path), "%s/etc/cloudsim/%s", GB_TOP_SRCDIR, files[i]);
		gb_scenario_destroy(load_ok(path));
	}
}

/* vCPUs of the task's table; the G types come from libconf's catalog. */
static void test_itypes(void **state)
{
	static const struct { const char *name; int vcpus; enum gb_itype_bucket b; } want[] = {
		{ "g4dn.xlarge", 4, GB_ITYPE_BUCKET_G }, { "g5.2xlarge", 8, GB_ITYPE_BUCKET_G },
		{ "g6.4xlarge", 16, GB_ITYPE_BUCKET_G }, { "g6e.8xlarge", 32, GB_ITYPE_BUCKET_G },
		{ "g5.12xlarge", 48, GB_ITYPE_BUCKET_G }, { "g6.16xlarge", 64, GB_ITYPE_BUCKET_G },
		{ "g5.24xlarge", 96, GB_ITYPE_BUCKET_G }, { "g6e.48xlarge", 192, GB_ITYPE_BUCKET_G },
		{ "g4dn.metal", 96, GB_ITYPE_BUCKET_G }, { "g5g.16xlarge", 64, GB_ITYPE_BUCKET_G },
		{ "g5g.metal", 64, GB_ITYPE_BUCKET_G }, { "p4d.24xlarge", 96, GB_ITYPE_BUCKET_P },
		{ "p5.48xlarge", 192, GB_ITYPE_BUCKET_P },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct gb_itype *t = gb_itype_find(want[i].name);

		assert_non_null(t);
		assert_int_equal(t->vcpus, want[i].vcpus);
		assert_int_equal(t->bucket, want[i].b);
		assert_ptr_equal(gb_itype_find(want[i].name), t);	/* stable */
	}
	assert_string_equal(gb_itype_find("g5g.xlarge")->arch, "arm64");
	assert_string_equal(gb_itype_find("g5.xlarge")->arch, "x86_64");
	assert_null(gb_itype_find("m5.large"));
	assert_null(gb_itype_find(NULL));
	/* the G types are the catalog's, with its entry */
	assert_ptr_equal(gb_itype_find("g5.xlarge")->ct, gb_catalog_find("g5.xlarge"));
}

/* The bucket follows the family; a catalog's P type replaces the extra. */
static void test_itype_catalog(void **state)
{
	static const struct gb_instance_type fixture[] = {
		{ "p5.48xlarge", "p5", 192, 2048 * 1024, 8, "h100", 80 * 1024, "x86_64",
		  "NVIDIA", true, 32, 32, 64, true },
		{ "g6.xlarge", "g6", 4, 16 * 1024, 1, "l4", 24 * 1024, "x86_64",
		  "NVIDIA", false, 0, 1, 4, true },
	};
	const struct gb_itype *t;
	char buf[16];
	size_t n;

	(void)state;
	assert_int_equal(gb_itype_bucket_of("p5"), GB_ITYPE_BUCKET_P);
	assert_int_equal(gb_itype_bucket_of("p4d"), GB_ITYPE_BUCKET_P);
	assert_int_equal(gb_itype_bucket_of("g6e"), GB_ITYPE_BUCKET_G);
	assert_int_equal(gb_itype_bucket_of("vt1"), GB_ITYPE_BUCKET_G);
	assert_string_equal(gb_itype_gpu_name("h100", buf, sizeof(buf)), "H100");
	assert_string_equal(gb_itype_gpu_name("a10g", buf, sizeof(buf)), "A10G");
	assert_string_equal(gb_itype_gpu_name("t4g", buf, sizeof(buf)), "T4g");
	assert_string_equal(gb_itype_gpu_name("x9z", buf, sizeof(buf)), "X9Z");
	gb_itype_catalog_set(fixture, GB_ARRAY_LEN(fixture));
	t = gb_itype_all(&n);
	assert_int_equal(n, 3);			/* the fixture and p4d.24xlarge */
	assert_string_equal(t[0].name, "p5.48xlarge");
	assert_ptr_equal(t[0].ct, &fixture[0]);
	assert_int_equal(t[0].bucket, GB_ITYPE_BUCKET_P);
	assert_int_equal(t[1].bucket, GB_ITYPE_BUCKET_G);
	assert_string_equal(t[2].name, "p4d.24xlarge");
	assert_null(t[2].ct);
	assert_int_equal(t[2].bucket, GB_ITYPE_BUCKET_P);
	assert_ptr_equal(gb_itype_find("p5.48xlarge"), &t[0]);
	assert_null(gb_itype_find("g5.xlarge"));
	gb_itype_catalog_set(NULL, 0);
	assert_non_null(gb_itype_find("g5.xlarge"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_itypes),
		cmocka_unit_test(test_itype_catalog),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_roles),
		cmocka_unit_test(test_capacity_keys),
		cmocka_unit_test(test_invalid_files),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_shipped_scenarios),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
