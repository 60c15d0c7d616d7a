/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_cloudsim_sim.c - the simulated cloud's EC2 semantics with a driven
 * clock: MinCount/MaxCount, ICE, idempotency, quotas, offerings, CIDR
 * exhaustion, state timing, capacity events, filters and paging, Spot
 * as a market of its own (pool, quota, price, events, release), placement
 * groups, network interfaces, instance types, security groups, capacity
 * reservations and Capacity Block offerings
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gb_conf.h"
#include "gb_err.h"
#include "gb_str.h"
#include "scenario.h"
#include "sim.h"

static const char scenario_text[] =
	"seed: 99\n"
	"timing: {pending: 500ms, shutting_down: 1s, terminated_visible: 60s}\n"
	"regions:\n"
	"  ap-south-1:\n"
	"    quotas: {g_vt_vcpus: 40, instances: 9, spot_g_vt_vcpus: 16}\n"
	"    azs:\n"
	"      ap-south-1a:\n"
	"        offerings: [g5.xlarge, g6.xlarge]\n"
	"        capacity: {g5.xlarge: 3, g6.xlarge: 0}\n"
	"        spot: {g5.xlarge: {capacity: 2, price: 0.3}}\n"
	"        subnets: {subnet-a: 127.1.0.0/24}\n"
	"      ap-south-1b:\n"
	"        capacity: {g5.xlarge: 2, g6e.xlarge: 1, g5.2xlarge: 5}\n"
	"        subnets: {subnet-b: 127.1.1.0/24}\n"
	"      ap-south-1c:\n"
	"        capacity: {g5.xlarge: 100}\n"
	"        subnets: {subnet-c: 127.1.2.0/28}\n"
	"  ap-northeast-1:\n"
	"    azs:\n"
	"      ap-northeast-1a:\n"
	"        capacity: {g6.xlarge: 100}\n"
	"        subnets: {subnet-t: 127.2.0.0/24}\n"
	"capacity_events:\n"
	"  - {at: 100s, az: ap-south-1a, instance_type: g6.xlarge, set: 2}\n"
	"  - {at: 200s, az: ap-south-1a, instance_type: g6.xlarge, remove: 2}\n"
	"  - {at: 300s, az: ap-south-1a, instance_type: g5.xlarge, market: spot, add: 3}\n";

struct fix {
	struct gb_scenario *sc;
	gb_sim_t *sim;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	gb_error_t e;

	assert_int_equal(gb_scenario_parse("test.yaml", scenario_text,
					   sizeof(scenario_text) - 1, &f->sc, &e),
			 GB_E_OK);
	assert_int_equal(gb_sim_create(f->sc, &f->sim, &e), GB_E_OK);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	gb_sim_destroy(f->sim);
	gb_scenario_destroy(f->sc);
	free(f);
	return 0;
}

static struct gb_sim_launch launch_of(const char *type, const char *subnet,
				      long min, long max)
{
	struct gb_sim_launch l = { 0 };

	l.image_id = "ami-0123456789abcdef0";
	l.instance_type = type;
	l.subnet_id = subnet;
	l.min_count = min;
	l.max_count = max;
	l.digest = "digest-1";
	return l;
}

/* Run, expecting success; RET the number launched. */
static size_t run_ok(gb_sim_t *sim, const char *region, struct gb_sim_launch *l,
		     double now, struct gb_sim_reservation **res)
{
	struct gb_sim_reservation *r = NULL;
	struct gb_sim_error e;

	if (gb_sim_run_instances(sim, region, l, now, &r, &e) != GB_E_OK)
		fail_msg("RunInstances: %s: %s", e.code, e.message);
	if (res)
		*res = r;
	return r->n;
}

static void run_err(gb_sim_t *sim, const char *region, struct gb_sim_launch *l,
		    double now, int status, const char *code, struct gb_sim_error *e)
{
	struct gb_sim_reservation *r = NULL;

	assert_int_not_equal(gb_sim_run_instances(sim, region, l, now, &r, e), GB_E_OK);
	assert_null(r);
	assert_int_equal(e->status, status);
	assert_string_equal(e->code, code);
}

static long pool_used(gb_sim_t *sim, const char *az, const char *type, long *total)
{
	size_t n;
	const struct gb_sim_pool *p = gb_sim_pools(sim, &n);

	for (size_t i = 0; i < n; i++) {
		if (!strcmp(p[i].az->name, az) && !strcmp(p[i].type->name, type)) {
			if (total)
				*total = p[i].total;
			return p[i].used;
		}
	}
	fail_msg("no pool %s %s", az, type);
	return -1;
}

static const struct gb_sim_pool *pool_of(gb_sim_t *sim, const char *az, const char *type)
{
	size_t n;
	const struct gb_sim_pool *p = gb_sim_pools(sim, &n);

	for (size_t i = 0; i < n; i++) {
		if (!strcmp(p[i].az->name, az) && !strcmp(p[i].type->name, type))
			return &p[i];
	}
	fail_msg("no pool %s %s", az, type);
	return NULL;
}

static size_t ninstances(gb_sim_t *sim)
{
	size_t n;

	(void)gb_sim_instances(sim, &n);
	return n;
}

/* EC2: MaxCount launches the largest possible number >= MinCount. */
static void test_min_max(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g5.xlarge", "subnet-a", 1, 5);
	struct gb_sim_reservation *r;
	struct gb_sim_error e;

	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 0, &r), 3);
	assert_string_equal(r->inst[0]->ip, "127.1.0.4");	/* VPC reserves .0-.3 */
	assert_string_equal(r->inst[2]->ip, "127.1.0.6");
	assert_int_equal(r->inst[1]->launch_index, 1);
	assert_int_equal(r->inst[0]->state, GB_SIM_STATE_PENDING);
	assert_int_equal(pool_used(f->sim, "ap-south-1a", "g5.xlarge", NULL), 3);
	assert_true(strncmp(r->id, "r-", 2) == 0 && strlen(r->id) == 19);
	assert_true(strncmp(r->inst[0]->id, "i-", 2) == 0 && strlen(r->inst[0]->id) == 19);
	/* the AZ is full now: nothing launched, ICE names AZs with room */
	run_err(f->sim, "ap-south-1", &l, 1, 500, "InsufficientInstanceCapacity", &e);
	assert_string_equal(e.message,
		"We currently do not have sufficient g5.xlarge capacity in the Availability Zone you requested (ap-south-1a). Our system will be working on provisioning additional capacity. You can currently get g5.xlarge capacity by not specifying an Availability Zone in your request or choosing ap-south-1b, ap-south-1c.");
	assert_int_equal(ninstances(f->sim), 3);
}

static void test_ice_nothing_launched(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g5.xlarge", "subnet-b", 3, 4);
	struct gb_sim_error e;

	run_err(f->sim, "ap-south-1", &l, 0, 500, "InsufficientInstanceCapacity", &e);
	/* only 1c has 3 free: 1a (3 free) is listed too, 1b itself is not */
	assert_non_null(strstr(e.message, "choosing ap-south-1a, ap-south-1c."));
	assert_int_equal(ninstances(f->sim), 0);
	assert_int_equal(pool_used(f->sim, "ap-south-1b", "g5.xlarge", NULL), 0);
	/* no AZ with room: the message ends after the first two sentences */
	l = launch_of("g6e.xlarge", "subnet-b", 2, 2);
	run_err(f->sim, "ap-south-1", &l, 0, 500, "InsufficientInstanceCapacity", &e);
	assert_non_null(strstr(e.message, "provisioning additional capacity."));
	assert_null(strstr(e.message, "You can currently get"));
}

static void test_idempotency(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g5.xlarge", "subnet-a", 1, 2);
	struct gb_sim_reservation *r1, *r2;
	struct gb_sim_error e;
	char id0[GB_SIM_ID_MAX];

	l.client_token = "tok-1";
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 0, &r1), 2);
	gb_strlcpy(id0, r1->inst[0]->id, sizeof(id0));
	/* same token, same parameters: the original reservation, nothing new */
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 1, &r2), 2);
	assert_ptr_equal(r1, r2);
	assert_string_equal(r2->inst[0]->id, id0);
	assert_int_equal(ninstances(f->sim), 2);
	assert_int_equal(pool_used(f->sim, "ap-south-1a", "g5.xlarge", NULL), 2);
	/* same token, other parameters */
	l.max_count = 3;
	l.digest = "digest-2";
	run_err(f->sim, "ap-south-1", &l, 2, 400, "IdempotentParameterMismatch", &e);
	assert_int_equal(ninstances(f->sim), 2);
	/* zonal idempotency: the same token in another AZ is a new launch */
	l = launch_of("g5.xlarge", "subnet-b", 1, 1);
	l.client_token = "tok-1";
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 3, &r2), 1);
	assert_ptr_not_equal(r1, r2);
	/* tokens are case-sensitive */
	l.client_token = "TOK-1";
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 3, NULL), 1);
	assert_int_equal(ninstances(f->sim), 4);
}

static void terminate_all(gb_sim_t *sim, const char *region,
			  struct gb_sim_reservation *r, double now)
{
	const char *ids[64];
	struct gb_sim_state_change *ch = NULL;
	struct gb_sim_error e;
	size_t n;

	for (size_t k = 0; k < r->n; k++)
		ids[k] = r->inst[k]->id;
	assert_int_equal(gb_sim_terminate_instances(sim, region, ids, r->n, false,
						    now, &ch, &n, &e), GB_E_OK);
	assert_int_equal(n, r->n);
	free(ch);
}

static void test_idempotent_terminated(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g5.xlarge", "subnet-a", 1, 1);
	struct gb_sim_reservation *r;
	struct gb_sim_error e;

	l.client_token = "tok-t";
	run_ok(f->sim, "ap-south-1", &l, 0, &r);
	terminate_all(f->sim, "ap-south-1", r, 1);
	run_err(f->sim, "ap-south-1", &l, 5, 400, "IdempotentInstanceTerminated", &e);
}

/* 40 G/VT vCPUs, 9 instances: g5.xlarge has 4 vCPUs, g5.2xlarge 8. */
static void test_quotas(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g5.2xlarge", "subnet-b", 1, 5);
	struct gb_sim_reservation *r;
	struct gb_sim_error e;

	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 0, &r), 5);	/* 40 vCPUs */
	l = launch_of("g5.xlarge", "subnet-c", 1, 1);
	run_err(f->sim, "ap-south-1", &l, 0, 400, "VcpuLimitExceeded", &e);
	assert_string_equal(e.message,
		"You have requested more vCPU capacity than your current vCPU limit of 40 allows for the instance bucket that the specified instance type belongs to. Please visit http://aws.amazon.com/contact-us/ec2-request to request an adjustment to this limit.");
	/* terminating releases the quota only once terminated */
	terminate_all(f->sim, "ap-south-1", r, 1);
	run_err(f->sim, "ap-south-1", &l, 1.5, 400, "VcpuLimitExceeded", &e);
	l.max_count = 20;
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 2.0, NULL), 9);
	/* 9 instances of quota: the instance count is the limit now */
	l = launch_of("g5.xlarge", "subnet-a", 1, 1);
	run_err(f->sim, "ap-south-1", &l, 3, 400, "InstanceLimitExceeded", &e);
	assert_string_equal(e.message,
		"Your quota allows for 0 more running instance(s). You requested at least 1.");
	/* other regions have their own quotas */
	l = launch_of("g6.xlarge", NULL, 1, 1);
	assert_int_equal(run_ok(f->sim, "ap-northeast-1", &l, 3, NULL), 1);
}

static void test_offerings_unsupported(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g6e.xlarge", "subnet-a", 1, 1);
	struct gb_sim_error e;

	run_err(f->sim, "ap-south-1", &l, 0, 400, "Unsupported", &e);
	assert_string_equal(e.message,
		"Your requested instance type (g6e.xlarge) is not supported in your requested Availability Zone (ap-south-1a). Please retry your request by not specifying an Availability Zone or choosing ap-south-1b.");
	l = launch_of("g6e.xlarge", NULL, 1, 1);
	run_err(f->sim, "ap-northeast-1", &l, 0, 400, "Unsupported", &e);
	assert_non_null(strstr(e.message, "currently not supported"));
	l = launch_of("g9.xlarge", NULL, 1, 1);
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidParameterValue", &e);
	assert_string_equal(e.message, "Invalid value 'g9.xlarge' for InstanceType.");
	/* without subnet or AZ, the AZ with most room is picked */
	l = launch_of("g6e.xlarge", NULL, 1, 1);
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 0, NULL), 1);
	l = launch_of("g5.xlarge", "subnet-t", 1, 1);
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidSubnetID.NotFound", &e);
	l = launch_of("g5.xlarge", NULL, 1, 1);
	l.az = "ap-south-1z";
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidParameterValue", &e);
	l = launch_of("g5.xlarge", NULL, 2, 1);
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidParameterValue", &e);
	l.min_count = 1;
	l.image_id = "image-1";
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidAMIID.Malformed", &e);
	assert_int_equal(ninstances(f->sim), 1);
}

/* A /28 has 16 addresses; VPC reserves 5, so 11 instances fit. */
static void test_cidr_exhaustion(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g5.xlarge", "subnet-c", 1, 20);
	struct gb_sim_reservation *r;
	struct gb_sim_error e;
	const char *ids[1];
	struct gb_sim_state_change *ch;
	size_t n;

	f->sc->regions[0].instance_quota = GB_SC_UNLIMITED;
	f->sc->regions[0].vcpu_quota[GB_ITYPE_BUCKET_G] = GB_SC_UNLIMITED;
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 0, &r), 11);
	assert_string_equal(r->inst[0]->ip, "127.1.2.4");
	assert_string_equal(r->inst[10]->ip, "127.1.2.14");
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InsufficientFreeAddressesInSubnet", &e);
	assert_string_equal(e.message,
		"There are not enough free addresses in subnet 'subnet-c' to satisfy the requested number of instances.");
	/* a terminated instance gives its address back; the lowest is reused */
	ids[0] = r->inst[3]->id;
	assert_int_equal(gb_sim_terminate_instances(f->sim, "ap-south-1", ids, 1,
						    false, 1, &ch, &n, &e), GB_E_OK);
	free(ch);
	l.max_count = 1;
	run_err(f->sim, "ap-south-1", &l, 1.5, 400, "InsufficientFreeAddressesInSubnet", &e);
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 2.0, &r), 1);
	assert_string_equal(r->inst[0]->ip, "127.1.2.7");
}

static struct gb_sim_instance *describe_one(gb_sim_t *sim, const char *id, double now)
{
	const char *ids[] = { id };
	struct gb_sim_query q = { .ids = ids, .nids = 1 };
	struct gb_sim_instance **out = NULL, *i;
	char next[GB_SIM_TOKEN_MAX];
	struct gb_sim_error e;
	size_t n;

	if (gb_sim_describe_instances(sim, "ap-south-1", &q, now, &out, &n, next, &e))
		fail_msg("%s: %s", e.code, e.message);
	assert_int_equal(n, 1);
	i = out[0];
	free(out);
	return i;
}

/* pending -> running after 0.5 s; shutting-down -> terminated after 1 s. */
static void test_state_timing(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g5.xlarge", "subnet-a", 1, 1);
	struct gb_sim_reservation *r;
	struct gb_sim_error e;
	char id[GB_SIM_ID_MAX];
	struct gb_sim_instance **out;
	const char *ids[1];
	char next[GB_SIM_TOKEN_MAX];
	struct gb_sim_query q = { .ids = ids, .nids = 1 };
	size_t n;

	run_ok(f->sim, "ap-south-1", &l, 10.0, &r);
	gb_strlcpy(id, r->inst[0]->id, sizeof(id));
	ids[0] = id;
	assert_int_equal(describe_one(f->sim, id, 10.49)->state, GB_SIM_STATE_PENDING);
	assert_int_equal(describe_one(f->sim, id, 10.5)->state, GB_SIM_STATE_RUNNING);
	assert_true(describe_one(f->sim, id, 11)->state_time == 10.5);
	terminate_all(f->sim, "ap-south-1", r, 20.0);
	assert_int_equal(describe_one(f->sim, id, 20.0)->state, GB_SIM_STATE_SHUTTING_DOWN);
	assert_int_equal(pool_used(f->sim, "ap-south-1a", "g5.xlarge", NULL), 1);
	assert_int_equal(describe_one(f->sim, id, 20.99)->state, GB_SIM_STATE_SHUTTING_DOWN);
	assert_int_equal(describe_one(f->sim, id, 21.0)->state, GB_SIM_STATE_TERMINATED);
	assert_int_equal(pool_used(f->sim, "ap-south-1a", "g5.xlarge", NULL), 0);
	/* terminated instances stay visible for 60 s, then are forgotten */
	assert_int_equal(describe_one(f->sim, id, 80.9)->state, GB_SIM_STATE_TERMINATED);
	assert_int_equal(gb_sim_describe_instances(f->sim, "ap-south-1", &q, 81.0,
						   &out, &n, next, &e), GB_E_NOTFOUND);
	assert_string_equal(e.code, "InvalidInstanceID.NotFound");
	assert_int_equal(ninstances(f->sim), 0);
}

/* g6.xlarge in ap-south-1a: 0 until 100 s, 2 from 100 s, 0 again from 200 s. */
static void test_capacity_events(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g6.xlarge", "subnet-a", 1, 5);
	struct gb_sim_error e;
	long total;

	run_err(f->sim, "ap-south-1", &l, 99.9, 500, "InsufficientInstanceCapacity", &e);
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 100.0, NULL), 2);
	run_err(f->sim, "ap-south-1", &l, 150, 500, "InsufficientInstanceCapacity", &e);
	gb_sim_advance(f->sim, 200);
	assert_int_equal(pool_used(f->sim, "ap-south-1a", "g6.xlarge", &total), 2);
	assert_int_equal(total, 0);	/* running instances stay */
	/* the control interface: make 1 more fit */
	assert_int_equal(gb_sim_capacity_set(f->sim, "ap-south-1a", "g6.xlarge", false,
					     1, true, NULL), GB_E_OK);
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 201, NULL), 1);
	assert_int_not_equal(gb_sim_capacity_set(f->sim, "ap-south-1a", "g6e.xlarge",
						 false, 1, true, NULL), GB_E_OK);
}

static size_t describe_n(gb_sim_t *sim, struct gb_sim_query *q, double now,
			 char next[GB_SIM_TOKEN_MAX])
{
	struct gb_sim_instance **out = NULL;
	struct gb_sim_error e;
	size_t n;

	if (gb_sim_describe_instances(sim, "ap-south-1", q, now, &out, &n, next, &e))
		fail_msg("%s: %s", e.code, e.message);
	free(out);
	return n;
}

static void test_describe_filters(void **state)
{
	struct fix *f = *state;
	struct gb_sim_kv tags[] = { { "gpuburst:node", "g5-1" }, { "Project", "" } };
	struct gb_sim_launch l = launch_of("g5.xlarge", "subnet-a", 1, 2);
	struct gb_sim_reservation *r;
	const char *v_node[] = { "g5-*" }, *v_proj[] = { "Project" };
	const char *v_run[] = { "running" }, *v_az[] = { "ap-south-1b", "ap-south-1c" };
	struct gb_sim_filter ft[] = { { "tag:gpuburst:node", v_node, 1 } };
	struct gb_sim_filter fk[] = { { "tag-key", v_proj, 1 } };
	struct gb_sim_filter fs[] = { { "instance-state-name", v_run, 1 } };
	struct gb_sim_filter fa[] = { { "availability-zone", v_az, 2 },
				      { "instance-state-name", v_run, 1 } };
	struct gb_sim_filter fbad[] = { { "color", v_run, 1 } };
	struct gb_sim_query q = { 0 };
	struct gb_sim_error e;
	struct gb_sim_instance **out;
	char next[GB_SIM_TOKEN_MAX];
	const char *idv[1];
	struct gb_sim_filter fid[] = { { "instance-id", idv, 1 } };
	size_t n;

	l.tags = tags;
	l.ntags = 2;
	run_ok(f->sim, "ap-south-1", &l, 0, &r);
	l = launch_of("g5.xlarge", "subnet-b", 1, 1);
	run_ok(f->sim, "ap-south-1", &l, 1, NULL);
	l = launch_of("g6.xlarge", NULL, 1, 1);
	run_ok(f->sim, "ap-northeast-1", &l, 1, NULL);	/* other region */
	assert_int_equal(describe_n(f->sim, &q, 1.2, next), 3);
	assert_string_equal(next, "");
	q.filters = ft, q.nfilters = 1;
	assert_int_equal(describe_n(f->sim, &q, 1.2, next), 2);
	q.filters = fk;
	assert_int_equal(describe_n(f->sim, &q, 1.2, next), 2);
	q.filters = fs;
	assert_int_equal(describe_n(f->sim, &q, 0.6, next), 2);	/* third pending */
	q.filters = fa, q.nfilters = 2;
	assert_int_equal(describe_n(f->sim, &q, 1.2, next), 0);
	assert_int_equal(describe_n(f->sim, &q, 1.5, next), 1);
	idv[0] = r->inst[1]->id;
	q.filters = fid, q.nfilters = 1;
	assert_int_equal(describe_n(f->sim, &q, 1.5, next), 1);
	q.filters = fbad;
	assert_int_equal(gb_sim_describe_instances(f->sim, "ap-south-1", &q, 2, &out,
						   &n, next, &e), GB_E_CLOUDCONFIG);
	assert_string_equal(e.code, "InvalidParameterValue");
	assert_string_equal(e.message, "The filter 'color' is invalid");
}

static void test_describe_paging(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g5.xlarge", "subnet-c", 1, 9);
	struct gb_sim_query q = { .max_results = 5 };
	char next[GB_SIM_TOKEN_MAX], tok[GB_SIM_TOKEN_MAX];
	struct gb_sim_instance **out;
	struct gb_sim_error e;
	const char *ids[] = { "i-00000000000000000" };
	size_t n;

	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 0, NULL), 9);
	assert_int_equal(describe_n(f->sim, &q, 0, next), 5);
	assert_true(next[0]);
	gb_strlcpy(tok, next, sizeof(tok));
	q.next_token = tok;
	assert_int_equal(describe_n(f->sim, &q, 0, next), 4);
	assert_string_equal(next, "");
	q.next_token = "garbage";
	assert_int_equal(gb_sim_describe_instances(f->sim, "ap-south-1", &q, 0, &out,
						   &n, next, &e), GB_E_CLOUDCONFIG);
	assert_string_equal(e.code, "InvalidNextToken");
	q.next_token = NULL;
	q.max_results = 4;
	assert_int_equal(gb_sim_describe_instances(f->sim, "ap-south-1", &q, 0, &out,
						   &n, next, &e), GB_E_CLOUDCONFIG);
	q.max_results = 5;
	q.ids = ids;
	q.nids = 1;
	assert_int_equal(gb_sim_describe_instances(f->sim, "ap-south-1", &q, 0, &out,
						   &n, next, &e), GB_E_CLOUDCONFIG);
	assert_string_equal(e.code, "InvalidParameterCombination");
	q.max_results = 0;
	assert_int_equal(gb_sim_describe_instances(f->sim, "ap-south-1", &q, 0, &out,
						   &n, next, &e), GB_E_NOTFOUND);
	ids[0] = "i-12";
	assert_int_equal(gb_sim_describe_instances(f->sim, "ap-south-1", &q, 0, &out,
						   &n, next, &e), GB_E_CLOUDCONFIG);
	assert_string_equal(e.code, "InvalidInstanceID.Malformed");
}

static void test_terminate_all_or_nothing(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g5.xlarge", "subnet-a", 1, 1);
	struct gb_sim_reservation *r;
	struct gb_sim_state_change *ch = NULL;
	struct gb_sim_error e;
	const char *ids[2];
	char id[GB_SIM_ID_MAX];
	size_t n;

	run_ok(f->sim, "ap-south-1", &l, 0, &r);
	gb_strlcpy(id, r->inst[0]->id, sizeof(id));
	ids[0] = id;
	ids[1] = "i-0123456789abcdef0";
	assert_int_equal(gb_sim_terminate_instances(f->sim, "ap-south-1", ids, 2, false,
						    1, &ch, &n, &e), GB_E_NOTFOUND);
	assert_string_equal(e.message, "The instance ID 'i-0123456789abcdef0' does not exist");
	assert_int_equal(describe_one(f->sim, id, 1)->state, GB_SIM_STATE_RUNNING);
	/* instances of another region are not found either */
	assert_int_equal(gb_sim_terminate_instances(f->sim, "ap-northeast-1", ids, 1,
						    false, 1, &ch, &n, &e), GB_E_NOTFOUND);
	/* DryRun: 412 DryRunOperation, nothing happens */
	assert_int_equal(gb_sim_terminate_instances(f->sim, "ap-south-1", ids, 1, true,
						    1, &ch, &n, &e), GB_E_CANCELLED);
	assert_int_equal(e.status, 412);
	/* twice the same id: one change; terminated again: still terminated */
	ids[1] = id;
	assert_int_equal(gb_sim_terminate_instances(f->sim, "ap-south-1", ids, 2, false,
						    2, &ch, &n, &e), GB_E_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ch[0].prev, GB_SIM_STATE_RUNNING);
	assert_int_equal(ch[0].cur, GB_SIM_STATE_SHUTTING_DOWN);
	free(ch);
	assert_int_equal(gb_sim_terminate_instances(f->sim, "ap-south-1", ids, 1, false,
						    5, &ch, &n, &e), GB_E_OK);
	assert_int_equal(ch[0].prev, GB_SIM_STATE_TERMINATED);
	assert_int_equal(ch[0].cur, GB_SIM_STATE_TERMINATED);
	free(ch);
}

static void test_create_tags(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g5.xlarge", "subnet-a", 1, 1);
	struct gb_sim_kv t1[] = { { "Name", "a" } }, t2[] = { { "Name", "b" }, { "x", "" } };
	struct gb_sim_reservation *r;
	struct gb_sim_error e;
	const char *ids[1];

	l.tags = t1;
	l.ntags = 1;
	run_ok(f->sim, "ap-south-1", &l, 0, &r);
	ids[0] = r->inst[0]->id;
	assert_int_equal(gb_sim_create_tags(f->sim, "ap-south-1", ids, 1, t2, 2, false,
					    0, &e), GB_E_OK);
	assert_int_equal(r->inst[0]->ntags, 2);
	assert_string_equal(r->inst[0]->tags[0].value, "b");
	assert_string_equal(r->inst[0]->tags[1].key, "x");
	t1[0].key = "aws:reserved";
	assert_int_equal(gb_sim_create_tags(f->sim, "ap-south-1", ids, 1, t1, 1, false,
					    0, &e), GB_E_CLOUDCONFIG);
}

/*
 * Eventual consistency: a fresh id is unknown to the other calls for
 * "invisible" seconds (every missing id named), and described without
 * its address for "no_private_ip" seconds.
 */
static void test_consistency(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g5.xlarge", "subnet-c", 2, 2);
	struct gb_sim_consistency c = { 2, 3 }, got;
	struct gb_sim_kv tag[] = { { "Name", "n1" } };
	struct gb_sim_query q = { 0 };
	struct gb_sim_state_change *ch = NULL;
	struct gb_sim_reservation *r;
	struct gb_sim_error e;
	char next[GB_SIM_TOKEN_MAX], want[128];
	const char *ids[2];
	size_t n;

	gb_sim_consistency_get(f->sim, &got);
	assert_true(got.invisible == 0 && got.no_private_ip == 0);	/* off by default */
	gb_sim_consistency_set(f->sim, &c);
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 10, &r), 2);
	ids[0] = r->inst[0]->id;
	ids[1] = r->inst[1]->id;
	assert_true(r->inst[0]->ip[0] != '\0');	/* RunInstances has the address */
	/* 1.9 s later: not listed, and naming it fails the whole call */
	assert_int_equal(describe_n(f->sim, &q, 11.9, next), 0);
	q.ids = ids;
	q.nids = 1;
	{
		struct gb_sim_instance **out = NULL;

		assert_int_equal(gb_sim_describe_instances(f->sim, "ap-south-1", &q, 11.9, &out,
							   &n, next, &e), GB_E_NOTFOUND);
		free(out);
	}
	assert_int_equal(e.status, 400);
	assert_string_equal(e.code, "InvalidInstanceID.NotFound");
	snprintf(want, sizeof(want), "The instance ID '%s' does not exist", ids[0]);
	assert_string_equal(e.message, want);
	assert_int_equal(gb_sim_create_tags(f->sim, "ap-south-1", ids, 1, tag, 1, false,
					    11.9, &e), GB_E_NOTFOUND);
	assert_int_equal(gb_sim_terminate_instances(f->sim, "ap-south-1", ids, 2, false,
						    11.9, &ch, &n, &e), GB_E_NOTFOUND);
	snprintf(want, sizeof(want), "The instance IDs '%s, %s' do not exist", ids[0], ids[1]);
	assert_string_equal(e.message, want);
	assert_string_equal(r->inst[0]->tags ? "tagged" : "untagged", "untagged");
	assert_int_equal(r->inst[0]->state, GB_SIM_STATE_RUNNING);	/* nothing happened */
	/* at 2 s visible: listed and taggable, but no address until 3 s */
	q.ids = NULL;
	q.nids = 0;
	assert_int_equal(describe_n(f->sim, &q, 12, next), 2);
	assert_false(gb_sim_instance_shows_ip(f->sim, r->inst[0], 12.9));
	assert_true(gb_sim_instance_shows_ip(f->sim, r->inst[0], 13));
	assert_int_equal(gb_sim_create_tags(f->sim, "ap-south-1", ids, 1, tag, 1, false,
					    12, &e), GB_E_OK);
	assert_int_equal(gb_sim_terminate_instances(f->sim, "ap-south-1", ids, 2, false,
						    12, &ch, &n, &e), GB_E_OK);
	assert_int_equal(n, 2);
	free(ch);
	/* an unknown id and a fresh one: both named, the malformed check first */
	ids[0] = "i-0123456789abcdef0";
	assert_int_equal(gb_sim_terminate_instances(f->sim, "ap-south-1", ids, 1, false,
						    12, &ch, &n, &e), GB_E_NOTFOUND);
	assert_string_equal(e.message, "The instance ID 'i-0123456789abcdef0' does not exist");
	ids[1] = "i-bad";
	assert_int_equal(gb_sim_terminate_instances(f->sim, "ap-south-1", ids, 2, false,
						    12, &ch, &n, &e), GB_E_CLOUDCONFIG);
	assert_string_equal(e.code, "InvalidInstanceID.Malformed");
	/* off again: a fresh id is known at once */
	c.invisible = c.no_private_ip = 0;
	gb_sim_consistency_set(f->sim, &c);
	l = launch_of("g5.xlarge", "subnet-c", 1, 1);
	run_ok(f->sim, "ap-south-1", &l, 20, &r);
	assert_true(gb_sim_instance_visible(f->sim, r->inst[0], 20));
	assert_true(gb_sim_instance_shows_ip(f->sim, r->inst[0], 20));
}

/* The scenario's "consistency" map: durations; unknown keys refused. */
static void test_consistency_scenario(void **state)
{
	static const char ok[] =
		"consistency: {invisible: 1500ms, no_private_ip: 3s}\n"
		"regions: {r-1: {azs: {r-1a: {capacity: {g5.xlarge: 1}, subnets: {subnet-1: 127.9.0.0/24}}}}}\n";
	static const char bad[] =
		"consistency: {invisible: 1s, hidden: 2s}\n"
		"regions: {r-1: {azs: {r-1a: {capacity: {g5.xlarge: 1}, subnets: {subnet-1: 127.9.0.0/24}}}}}\n";
	struct gb_scenario *sc = NULL;
	struct gb_sim_consistency c;
	gb_sim_t *sim = NULL;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_scenario_parse("c.yaml", ok, sizeof(ok) - 1, &sc, &e), GB_E_OK);
	assert_int_equal(gb_sim_create(sc, &sim, &e), GB_E_OK);
	gb_sim_consistency_get(sim, &c);
	assert_true(c.invisible == 1.5 && c.no_private_ip == 3);
	gb_sim_destroy(sim);
	gb_scenario_destroy(sc);
	assert_int_equal(gb_scenario_parse("c.yaml", bad, sizeof(bad) - 1, &sc, &e), GB_E_CONFIG);
	assert_non_null(strstr(e.text, "hidden"));
}

static void test_offerings_list(void **state)
{
	struct fix *f = *state;
	struct gb_sim_query q = { 0 };
	struct gb_sim_offering *o = NULL;
	const char *vt[] = { "g5.*" };
	struct gb_sim_filter ft[] = { { "instance-type", vt, 1 } };
	char next[GB_SIM_TOKEN_MAX], tok[GB_SIM_TOKEN_MAX];
	struct gb_sim_error e;
	size_t n;

	assert_int_equal(gb_sim_describe_offerings(f->sim, "ap-south-1", GB_SIM_LOC_REGION,
						   &q, &o, &n, next, &e), GB_E_OK);
	assert_int_equal(n, 4);		/* g5.xlarge g6.xlarge g6e.xlarge g5.2xlarge */
	assert_string_equal(o[0].location, "ap-south-1");
	free(o);
	assert_int_equal(gb_sim_describe_offerings(f->sim, "ap-south-1", GB_SIM_LOC_AZ,
						   &q, &o, &n, next, &e), GB_E_OK);
	assert_int_equal(n, 6);
	assert_string_equal(o[5].location, "ap-south-1c");
	free(o);
	q.filters = ft;
	q.nfilters = 1;
	q.max_results = 5;
	assert_int_equal(gb_sim_describe_offerings(f->sim, "ap-south-1", GB_SIM_LOC_AZ_ID,
						   &q, &o, &n, next, &e), GB_E_OK);
	assert_int_equal(n, 4);
	assert_string_equal(o[0].location, "aps1-az1");
	assert_string_equal(next, "");
	free(o);
	q.nfilters = 0;
	assert_int_equal(gb_sim_describe_offerings(f->sim, "ap-south-1", GB_SIM_LOC_AZ,
						   &q, &o, &n, next, &e), GB_E_OK);
	assert_int_equal(n, 5);
	free(o);
	gb_strlcpy(tok, next, sizeof(tok));
	q.next_token = tok;
	assert_int_equal(gb_sim_describe_offerings(f->sim, "ap-south-1", GB_SIM_LOC_AZ,
						   &q, &o, &n, next, &e), GB_E_OK);
	assert_int_equal(n, 1);
	assert_string_equal(o[0].instance_type, "g5.xlarge");
	free(o);
}

static void test_describe_azs(void **state)
{
	struct fix *f = *state;
	const char *names[] = { "ap-south-1b" }, *bad[] = { "ap-south-1q" };
	struct gb_sim_query q = { 0 };
	const struct gb_sc_az **out = NULL;
	struct gb_sim_error e;
	size_t n;

	assert_int_equal(gb_sim_describe_azs(f->sim, "ap-south-1", &q, &out, &n, &e), GB_E_OK);
	assert_int_equal(n, 3);
	free(out);
	q.ids = names;
	q.nids = 1;
	assert_int_equal(gb_sim_describe_azs(f->sim, "ap-south-1", &q, &out, &n, &e), GB_E_OK);
	assert_int_equal(n, 1);
	assert_string_equal(out[0]->name, "ap-south-1b");
	free(out);
	q.ids = bad;
	assert_int_not_equal(gb_sim_describe_azs(f->sim, "ap-south-1", &q, &out, &n, &e),
			     GB_E_OK);
	assert_int_not_equal(gb_sim_describe_azs(f->sim, "eu-west-9", &q, &out, &n, &e),
			     GB_E_OK);
	assert_string_equal(e.code, "AuthFailure");
}

static void test_events(void **state)
{
	struct fix *f = *state;
	struct gb_sim_kv tags[] = { { "Name", "n1" } };
	struct gb_sim_launch l = launch_of("g5.xlarge", "subnet-a", 1, 1);
	struct gb_sim_reservation *r;
	struct gb_sim_event *ev;

	gb_sim_events_enable(f->sim, true);
	l.user_data = "#!/bin/sh\n";
	l.user_data_len = 10;
	l.tags = tags;
	l.ntags = 1;
	run_ok(f->sim, "ap-south-1", &l, 0, &r);
	assert_int_equal(gb_sim_events_take(f->sim, &ev), 0);
	gb_sim_events_free(ev, 0);
	gb_sim_advance(f->sim, 0.5);
	assert_int_equal(gb_sim_events_take(f->sim, &ev), 1);
	assert_int_equal(ev[0].kind, GB_SIM_EVENT_RUNNING);
	assert_string_equal(ev[0].ip, "127.1.0.4");
	assert_string_equal(ev[0].az, "ap-south-1a");
	assert_string_equal(ev[0].user_data, "#!/bin/sh\n");
	assert_string_equal(ev[0].tags[0].value, "n1");
	gb_sim_events_free(ev, 1);
	terminate_all(f->sim, "ap-south-1", r, 1);
	assert_int_equal(gb_sim_events_take(f->sim, &ev), 1);
	assert_int_equal(ev[0].kind, GB_SIM_EVENT_SHUTTING_DOWN);
	gb_sim_events_free(ev, 1);
}

/* The same seed and calls give the same ids and addresses. */
static void test_replay(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g5.xlarge", NULL, 1, 3);
	struct gb_sim_reservation *r1, *r2;
	gb_sim_t *other;
	char req1[40], req2[40];

	assert_int_equal(gb_sim_create(f->sc, &other, NULL), GB_E_OK);
	run_ok(f->sim, "ap-south-1", &l, 0, &r1);
	run_ok(other, "ap-south-1", &l, 0, &r2);
	assert_string_equal(r1->id, r2->id);
	for (size_t k = 0; k < r1->n; k++) {
		assert_string_equal(r1->inst[k]->id, r2->inst[k]->id);
		assert_string_equal(r1->inst[k]->ip, r2->inst[k]->ip);
	}
	gb_sim_request_id(f->sim, req1);
	gb_sim_request_id(other, req2);
	assert_string_equal(req1, req2);
	assert_int_equal(strlen(req1), 36);
	gb_sim_destroy(other);
}

static size_t lifecycle_n(gb_sim_t *sim, const char *filter, const char *value, double now)
{
	const char *vals[] = { value };
	struct gb_sim_filter flt = { filter, vals, 1 };
	struct gb_sim_query q = { 0 };
	struct gb_sim_instance **out = NULL;
	struct gb_sim_error e;
	char next[GB_SIM_TOKEN_MAX];
	size_t n;

	q.filters = &flt;
	q.nfilters = 1;
	if (gb_sim_describe_instances(sim, "ap-south-1", &q, now, &out, &n, next, &e))
		fail_msg("%s: %s", e.code, e.message);
	free(out);
	return n;
}

/* Spot takes the Spot pool and quota only, never On-Demand's. */
static void test_spot_market(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch spot = launch_of("g5.xlarge", "subnet-a", 1, 5);
	struct gb_sim_launch od = launch_of("g5.xlarge", "subnet-a", 1, 5);
	const struct gb_sim_usage *u = gb_sim_usage(f->sim, "ap-south-1");
	const struct gb_sim_pool *p = pool_of(f->sim, "ap-south-1a", "g5.xlarge");
	struct gb_sim_reservation *r = NULL;
	struct gb_sim_state_change *ch = NULL;
	struct gb_sim_error e;
	const char *id;
	size_t n;

	spot.spot = true;
	spot.digest = "spot";
	assert_int_equal(run_ok(f->sim, "ap-south-1", &spot, 0, &r), 2);
	assert_true(r->inst[0]->spot);
	assert_true(!strncmp(r->inst[0]->spot_request_id, "sir-", 4));
	assert_int_equal(strlen(r->inst[0]->spot_request_id), 12);
	assert_string_not_equal(r->inst[0]->spot_request_id, r->inst[1]->spot_request_id);
	id = r->inst[0]->id;
	assert_int_equal(p->spot_used, 2);
	assert_int_equal(p->used, 0);
	assert_int_equal(u->spot_vcpus[GB_ITYPE_BUCKET_G], 8);
	assert_int_equal(u->vcpus[GB_ITYPE_BUCKET_G], 0);
	assert_int_equal(u->instances, 0);
	/* On-Demand keeps all of its 3 */
	assert_int_equal(run_ok(f->sim, "ap-south-1", &od, 0, NULL), 3);
	assert_int_equal(p->spot_used, 2);
	run_err(f->sim, "ap-south-1", &spot, 0, 500, "InsufficientInstanceCapacity", &e);
	assert_string_equal(e.message, "There is no Spot capacity available that matches your request.");
	assert_int_equal(lifecycle_n(f->sim, "instance-lifecycle", "spot", 0), 2);
	assert_int_equal(lifecycle_n(f->sim, "instance-lifecycle", "*", 0), 2);
	assert_int_equal(lifecycle_n(f->sim, "spot-instance-request-id",
				     r->inst[1]->spot_request_id, 0), 1);
	/* MaxPrice below the pool's 0.3; the price is checked before the room */
	spot.spot_max_price = 0.29;
	run_err(f->sim, "ap-south-1", &spot, 0, 400, "SpotMaxPriceTooLow", &e);
	spot.spot_max_price = 0.3;
	run_err(f->sim, "ap-south-1", &spot, 0, 500, "InsufficientInstanceCapacity", &e);
	/* the scenario's Spot event at 300 s: 3 more, the quota allows 2 */
	assert_int_equal(run_ok(f->sim, "ap-south-1", &spot, 300, NULL), 2);
	assert_int_equal(p->spot_total, 5);
	run_err(f->sim, "ap-south-1", &spot, 300, 400, "MaxSpotInstanceCountExceeded", &e);
	/* terminating one gives its Spot room and quota back, nothing else */
	assert_int_equal(gb_sim_terminate_instances(f->sim, "ap-south-1", &id, 1, false, 300,
						    &ch, &n, &e), GB_E_OK);
	free(ch);
	gb_sim_advance(f->sim, 302);
	assert_int_equal(p->spot_used, 3);
	assert_int_equal(p->used, 3);
	assert_int_equal(u->spot_vcpus[GB_ITYPE_BUCKET_G], 12);
	assert_int_equal(u->vcpus[GB_ITYPE_BUCKET_G], 12);
	spot.max_count = 1;
	assert_int_equal(run_ok(f->sim, "ap-south-1", &spot, 302, NULL), 1);
}

/* The control interface's Spot capacity; Spot without subnet or AZ. */
static void test_spot_capacity_set(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch spot = launch_of("g5.xlarge", NULL, 1, 9);
	const struct gb_sim_pool *p = pool_of(f->sim, "ap-south-1a", "g5.xlarge");
	struct gb_sim_reservation *r = NULL;
	gb_error_t err;

	spot.spot = true;
	assert_int_equal(gb_sim_capacity_set(f->sim, "ap-south-1b", "g5.xlarge", true, 1, true,
					     &err), GB_E_NOTFOUND);
	assert_non_null(strstr(err.text, "no Spot pool"));
	assert_int_equal(gb_sim_capacity_set(f->sim, "ap-south-1a", "g5.xlarge", true, 0, false,
					     &err), GB_E_OK);
	assert_int_equal(p->spot_total, 0);
	assert_int_equal(p->total, 3);
	assert_int_equal(gb_sim_capacity_set(f->sim, "ap-south-1a", "g5.xlarge", true, 3, true,
					     &err), GB_E_OK);
	/* only ap-south-1a has Spot room: chosen though 1c has more On-Demand */
	assert_int_equal(run_ok(f->sim, "ap-south-1", &spot, 0, &r), 3);
	assert_string_equal(r->inst[0]->az->name, "ap-south-1a");
	/* a dry run changes nothing */
	spot.dry_run = true;
	spot.max_count = 1;
	{
		struct gb_sim_error e;

		run_err(f->sim, "ap-south-1", &spot, 0, 412, "DryRunOperation", &e);
	}
	assert_int_equal(p->spot_used, 3);
}


/*****************************************************************************
 *  GPU training capacity (a fixture catalog: gb_itype_catalog_set)
 *****************************************************************************/

static const struct gb_instance_type gpu_types[] = {
	{ "p5.48xlarge", "p5", 192, 2048 * 1024, 8, "h100", 80 * 1024, "x86_64",
	  "NVIDIA", true, 32, 32, 64, true },
	{ "g6.xlarge", "g6", 4, 16 * 1024, 1, "l4", 24 * 1024, "x86_64",
	  "NVIDIA", false, 0, 1, 4, true },
	/* more network cards than EFA interfaces: card 0 is ENA only */
	{ "p6-b300.48xlarge", "p6-b300", 192, 4096 * 1024, 8, "b300", 275040, "x86_64",
	  "NVIDIA", true, 16, 17, 68, true },
};

static const char gpu_text[] =
	"seed: 7\n"
	"timing: {pending: 1s, shutting_down: 1s, terminated_visible: 60s}\n"
	"regions:\n"
	"  ap-south-1:\n"
	"    quotas: {p_vcpus: 960, g_vt_vcpus: 8}\n"
	"    security_groups: [sg-1, {id: sg-2, rules: none}, sg-3, sg-4, sg-5, sg-6, sg-7]\n"
	"    placement_groups: {limit: 3, cluster_capacity: {default: 3, g6.xlarge: 1}}\n"
	"    azs:\n"
	"      ap-south-1a:\n"
	"        capacity: {p5.48xlarge: 8, g6.xlarge: 8, p6-b300.48xlarge: 2}\n"
	"        subnets: {subnet-a: 127.9.1.0/24, subnet-a2: 127.9.3.0/24}\n"
	"      ap-south-1b:\n"
	"        capacity: {p5.48xlarge: 8}\n"
	"        subnets: {subnet-b: 127.9.2.0/24}\n";

static int setup_gpu(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	gb_error_t e;

	gb_itype_catalog_set(gpu_types, GB_ARRAY_LEN(gpu_types));
	assert_int_equal(gb_scenario_parse("gpu.yaml", gpu_text, sizeof(gpu_text) - 1, &f->sc,
					   &e), GB_E_OK);
	assert_int_equal(gb_sim_create(f->sc, &f->sim, &e), GB_E_OK);
	*state = f;
	return 0;
}

static int teardown_gpu(void **state)
{
	teardown(state);
	gb_itype_catalog_set(NULL, 0);
	return 0;
}

static const struct gb_sim_pgroup *pg_create(gb_sim_t *sim, const char *name,
					     const char *strategy)
{
	const struct gb_sim_pgroup *g = NULL;
	struct gb_sim_error e;

	if (gb_sim_create_pgroup(sim, "ap-south-1", name, strategy, NULL, 0, false, 0, &g, &e))
		fail_msg("CreatePlacementGroup: %s: %s", e.code, e.message);
	return g;
}

/* A cluster group: its AZ, its room per type, live instances until terminated. */
static void test_pgroup_cluster(void **state)
{
	struct fix *f = *state;
	const struct gb_sim_pgroup *g = pg_create(f->sim, "c1", "cluster");
	struct gb_sim_launch l = launch_of("p5.48xlarge", NULL, 1, 5);
	const char *ids[3];
	struct gb_sim_state_change *ch = NULL;
	struct gb_sim_reservation *r;
	struct gb_sim_error e;
	size_t n;

	assert_string_equal(g->strategy, "cluster");
	assert_null(g->az);
	l.placement_group = "c1";
	l.az = "ap-south-1b";
	/* default capacity 3 per type in one group: MaxCount 5 gives 3 */
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 0, &r), 3);
	assert_ptr_equal(r->inst[0]->pg, g);
	assert_string_equal(g->az->name, "ap-south-1b");
	assert_int_equal(g->live, 3);
	/* the P bucket: 3 x 192 vCPUs counted there, none in G */
	assert_int_equal(gb_sim_usage(f->sim, "ap-south-1")->vcpus[GB_ITYPE_BUCKET_P], 576);
	assert_int_equal(gb_sim_usage(f->sim, "ap-south-1")->vcpus[GB_ITYPE_BUCKET_G], 0);
	l.min_count = 1;
	run_err(f->sim, "ap-south-1", &l, 0, 500, "InsufficientInstanceCapacity", &e);
	l.az = "ap-south-1a";
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidPlacementGroup.InUse", &e);
	assert_string_equal(e.message,
			    "The placement group 'c1' is in use in another availability zone: ap-south-1b");
	/* g6.xlarge holds 1 (the type's own capacity); no AZ named: the group's */
	l = launch_of("g6.xlarge", NULL, 1, 2);
	l.placement_group = "c1";
	run_err(f->sim, "ap-south-1", &l, 0, 400, "Unsupported", &e);	/* not offered in 1b */
	assert_int_equal(gb_sim_delete_pgroup(f->sim, "ap-south-1", "c1", false, 0, &e),
			 GB_E_CLOUDCONFIG);
	assert_string_equal(e.code, "InvalidPlacementGroup.InUse");
	for (size_t k = 0; k < 3; k++)
		ids[k] = r->inst[k]->id;
	assert_int_equal(gb_sim_terminate_instances(f->sim, "ap-south-1", ids, 3, false, 0, &ch,
						    &n, &e), GB_E_OK);
	free(ch);
	assert_int_equal(g->live, 3);			/* shutting-down */
	gb_sim_advance(f->sim, 1.5);
	assert_int_equal(g->live, 0);			/* terminated */
	assert_int_equal(gb_sim_delete_pgroup(f->sim, "ap-south-1", "c1", true, 2, &e),
			 GB_E_CANCELLED);			/* DryRun */
	assert_int_equal(gb_sim_delete_pgroup(f->sim, "ap-south-1", "c1", false, 2, &e), GB_E_OK);
	assert_true(g->deleted);
	/* the terminated instances still name their group; the name is free again */
	assert_string_equal(r->inst[0]->pg->name, "c1");
	assert_ptr_not_equal(pg_create(f->sim, "c1", "spread"), g);
}

static void test_pgroup_limits(void **state)
{
	struct fix *f = *state;
	const struct gb_sim_pgroup *g = NULL, **v = NULL;
	struct gb_sim_query q = { 0 };
	struct gb_sim_kv tag = { "team", "ml" };
	const char *names[] = { "b" };
	struct gb_sim_error e;
	size_t n;

	assert_int_equal(gb_sim_create_pgroup(f->sim, "ap-south-1", "a", "cluster", &tag, 1,
					      false, 0, &g, &e), GB_E_OK);
	assert_string_equal(g->tags[0].value, "ml");
	assert_true(gb_str_has_prefix(g->id, "pg-"));
	assert_int_equal(gb_sim_create_pgroup(f->sim, "ap-south-1", "a", "spread", NULL, 0, false,
					      0, &g, &e), GB_E_CLOUDCONFIG);
	assert_string_equal(e.code, "InvalidPlacementGroup.Duplicate");
	pg_create(f->sim, "b", "partition");
	pg_create(f->sim, "c", "spread");
	assert_int_equal(gb_sim_create_pgroup(f->sim, "ap-south-1", "d", "cluster", NULL, 0, false,
					      0, &g, &e), GB_E_QUOTA);
	assert_string_equal(e.code, "PlacementGroupLimitExceeded");
	assert_int_equal(gb_sim_create_pgroup(f->sim, "ap-northeast-1", "d", "cluster", NULL, 0,
					      false, 0, &g, &e), GB_E_AUTH);	/* no such region */
	q.ids = names;
	q.nids = 1;
	assert_int_equal(gb_sim_describe_pgroups(f->sim, "ap-south-1", &q, 0, &v, &n, &e), GB_E_OK);
	assert_int_equal(n, 1);
	assert_string_equal(v[0]->strategy, "partition");
	free(v);
	names[0] = "zz";
	assert_int_equal(gb_sim_describe_pgroups(f->sim, "ap-south-1", &q, 0, &v, &n, &e),
			 GB_E_NOTFOUND);
	assert_string_equal(e.code, "InvalidPlacementGroup.Unknown");
	assert_int_equal(gb_sim_delete_pgroup(f->sim, "ap-south-1", "zz", false, 0, &e),
			 GB_E_NOTFOUND);
	/* a deleted group frees its slot of the limit */
	assert_int_equal(gb_sim_delete_pgroup(f->sim, "ap-south-1", "b", false, 0, &e), GB_E_OK);
	pg_create(f->sim, "d", "cluster");
}

/* What an instance records of its interfaces, and the refusals in the sim. */
static void test_netifs(void **state)
{
	struct fix *f = *state;
	struct gb_sim_netif nif[2] = {
		{ 0, 0, "efa", "subnet-a", NULL, { 0 }, true },
		{ 0, 1, "efa-only", "subnet-a2", NULL, { 0 }, false },
	};
	struct gb_sim_launch l = launch_of("p5.48xlarge", NULL, 1, 1);
	struct gb_sim_reservation *r;
	struct gb_sim_instance *i;
	struct gb_sim_error e;

	assert_int_equal(gb_strv_add(&nif[0].sg_ids, "sg-1"), GB_E_OK);
	assert_int_equal(gb_strv_add(&nif[1].sg_ids, "sg-3"), GB_E_OK);
	l.netifs = nif;
	l.nnetifs = 2;
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 0, &r), 1);
	i = r->inst[0];
	assert_int_equal(i->nnetifs, 2);
	assert_string_equal(i->subnet->id, "subnet-a");		/* the primary's */
	assert_string_equal(i->netifs[1].subnet->id, "subnet-a2");
	assert_string_equal(i->netifs[1].type, "efa-only");
	assert_int_equal(i->netifs[1].card_index, 1);
	assert_false(i->netifs[1].delete_on_termination);
	assert_string_equal(i->netifs[1].sg_ids.v[0], "sg-3");
	assert_int_equal(i->sg_ids.n, 1);
	assert_string_equal(i->sg_ids.v[0], "sg-1");		/* the primary's groups */
	/* refusals: a group the region lacks, a card past 32, no primary, two slots alike */
	gb_strv_free(&nif[1].sg_ids);
	assert_int_equal(gb_strv_add(&nif[1].sg_ids, "sg-9"), GB_E_OK);
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidGroup.NotFound", &e);
	gb_strv_free(&nif[1].sg_ids);
	nif[1].card_index = 32;
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidParameterValue", &e);
	nif[1].card_index = 0;
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidParameterValue", &e);
	assert_non_null(strstr(e.message, "unique device index"));
	nif[0].device_index = 2;
	nif[1].device_index = 1;
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidParameterValue", &e);
	assert_non_null(strstr(e.message, "primary network interface"));
	/* checked in a dry run too */
	l.dry_run = true;
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidParameterValue", &e);
	nif[0].device_index = 0;
	nif[1].device_index = 0;
	nif[1].card_index = 1;
	run_err(f->sim, "ap-south-1", &l, 0, 412, "DryRunOperation", &e);
	/* p6-b300: no EFA on its card 0; a plain primary there, EFA on card 1 */
	l.instance_type = "p6-b300.48xlarge";
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidParameterCombination", &e);
	assert_non_null(strstr(e.message, "Network card 0 of instance type p6-b300.48xlarge"));
	nif[0].type = "interface";
	run_err(f->sim, "ap-south-1", &l, 0, 412, "DryRunOperation", &e);
	gb_strv_free(&nif[0].sg_ids);
	gb_strv_free(&nif[1].sg_ids);
}

static void test_itypes_query(void **state)
{
	struct fix *f = *state;
	struct gb_sim_filter flt = { "network-info.efa-supported", (const char *[]){ "false" }, 1 };
	struct gb_sim_query q = { 0 };
	const struct gb_itype **v = NULL;
	const char *ids[] = { "g6.xlarge", "p4d.24xlarge" };
	char next[GB_SIM_TOKEN_MAX], buf[32];
	struct gb_sim_error e;
	size_t n;

	assert_int_equal(gb_sim_describe_itypes(f->sim, "ap-south-1", &q, &v, &n, next, &e),
			 GB_E_OK);
	assert_int_equal(n, 3);				/* p4d.24xlarge has no entry */
	assert_string_equal(next, "");
	assert_string_equal(gb_sim_itype_value(v[0], "network-info.efa-info.maximum-efa-interfaces",
					       buf, sizeof(buf)), "32");
	assert_string_equal(gb_sim_itype_value(v[0], "memory-info.size-in-mib", buf, sizeof(buf)),
			    "2097152");
	assert_string_equal(gb_sim_itype_value(v[0], "vcpu-info.default-cores", buf, sizeof(buf)),
			    "96");
	assert_null(gb_sim_itype_value(v[1], "network-info.efa-info.maximum-efa-interfaces", buf,
				       sizeof(buf)));
	free(v);
	q.filters = &flt;
	q.nfilters = 1;
	assert_int_equal(gb_sim_describe_itypes(f->sim, "ap-south-1", &q, &v, &n, next, &e),
			 GB_E_OK);
	assert_int_equal(n, 1);
	assert_string_equal(v[0]->name, "g6.xlarge");
	free(v);
	q.nfilters = 0;
	q.ids = ids;
	q.nids = 2;
	assert_int_equal(gb_sim_describe_itypes(f->sim, "ap-south-1", &q, &v, &n, next, &e),
			 GB_E_CLOUDCONFIG);
	assert_string_equal(e.message,
			    "The following supplied instance types do not exist: [p4d.24xlarge]");
}

static void test_sgroups_query(void **state)
{
	struct fix *f = *state;
	struct gb_sim_query q = { 0 };
	const char *ids[] = { "sg-2", "sg-7" };
	char next[GB_SIM_TOKEN_MAX], token[GB_SIM_TOKEN_MAX];
	struct gb_sim_error e;
	size_t *v = NULL, n;

	q.max_results = 5;
	assert_int_equal(gb_sim_describe_sgroups(f->sim, "ap-south-1", &q, &v, &n, next, &e),
			 GB_E_OK);
	assert_int_equal(n, 5);
	assert_true(gb_str_has_prefix(next, "gbsim1"));
	free(v);
	memcpy(token, next, sizeof(token));
	q.next_token = token;
	assert_int_equal(gb_sim_describe_sgroups(f->sim, "ap-south-1", &q, &v, &n, next, &e),
			 GB_E_OK);
	assert_int_equal(n, 2);
	assert_int_equal(v[0], 5);
	assert_int_equal(v[1], 6);
	assert_string_equal(next, "");
	free(v);
	memset(&q, 0, sizeof(q));
	q.ids = ids;
	q.nids = 2;
	assert_int_equal(gb_sim_describe_sgroups(f->sim, "ap-south-1", &q, &v, &n, next, &e),
			 GB_E_OK);
	assert_int_equal(n, 2);
	assert_int_equal(f->sc->regions[0].sg_rules[v[0]], GB_SC_SG_NONE);
	assert_int_equal(f->sc->regions[0].sg_rules[v[1]], GB_SC_SG_SELF);
	free(v);
	q.max_results = 5;
	assert_int_equal(gb_sim_describe_sgroups(f->sim, "ap-south-1", &q, &v, &n, next, &e),
			 GB_E_CLOUDCONFIG);
	assert_string_equal(e.code, "InvalidParameterCombination");
	q.max_results = 0;
	ids[1] = "sg-8";
	assert_int_equal(gb_sim_describe_sgroups(f->sim, "ap-south-1", &q, &v, &n, next, &e),
			 GB_E_NOTFOUND);
	assert_string_equal(e.message, "The security group 'sg-8' does not exist");
}

/* Capacity reservations: ODCRs (targeted, open), a Capacity Block, offerings */
static const char cr_text[] =
	"seed: 5\n"
	"timing: {pending: 1s, shutting_down: 1s, terminated_visible: 60s}\n"
	"regions:\n"
	"  ap-south-1:\n"
	"    azs:\n"
	"      ap-south-1a:\n"
	"        capacity: {g5.xlarge: 2, p5.48xlarge: 0}\n"
	"        subnets: {subnet-a: 127.3.0.0/24}\n"
	"      ap-south-1b:\n"
	"        capacity: {g5.xlarge: 1}\n"
	"        subnets: {subnet-b: 127.3.1.0/24}\n"
	"    capacity_reservations:\n"
	"      - {id: cr-0000000000000000a, az: ap-south-1a, type: g5.xlarge, count: 2}\n"
	"      - {id: cr-0000000000000000b, az: ap-south-1b, type: g5.xlarge, count: 2,\n"
	"         match: open}\n"
	"      - {id: cr-0000000000000000c, az: ap-south-1a, type: p5.48xlarge, count: 2,\n"
	"         kind: capacity-block, start: 100s, end: 200s}\n"
	"      - {id: cr-0000000000000000d, az: ap-south-1a, type: g5.xlarge, count: 1,\n"
	"         state: cancelled}\n"
	"    capacity_block_offerings:\n"
	"      - {type: p5.48xlarge, az: ap-south-1a, count: 4, start: 1h,\n"
	"         duration_hours: 24, upfront_fee: 1000.00}\n"
	"      - {type: p5.48xlarge, az: ap-south-1a, count: 8, start: 48h,\n"
	"         duration_hours: 24, upfront_fee: 4000}\n"
	"      - {type: p5.48xlarge, az: ap-south-1a, count: 8, start: 2h,\n"
	"         duration_hours: 168, upfront_fee: 9000}\n";

static int setup_cr(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	gb_error_t e;

	if (gb_scenario_parse("cr.yaml", cr_text, sizeof(cr_text) - 1, &f->sc, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(gb_sim_create(f->sc, &f->sim, &e), GB_E_OK);
	*state = f;
	return 0;
}

static const struct gb_sim_cr *cr_of(gb_sim_t *sim, const char *id, double now)
{
	const char *ids[] = { id };
	struct gb_sim_query q = { .ids = ids, .nids = 1 };
	const struct gb_sim_cr **v = NULL, *cr;
	char next[GB_SIM_TOKEN_MAX];
	struct gb_sim_error e;
	size_t n;

	assert_int_equal(gb_sim_describe_crs(sim, "ap-south-1", &q, now, &v, &n, next, &e),
			 GB_E_OK);
	assert_int_equal(n, 1);
	cr = v[0];
	free(v);
	return cr;
}

static void test_cr_targeted(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g5.xlarge", NULL, 1, 5);
	struct gb_sim_reservation *r = NULL;
	struct gb_sim_state_change *ch = NULL;
	struct gb_sim_error e;
	const char *id;
	size_t n;

	l.cr_id = "cr-00000000000000009";
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidCapacityReservationId.NotFound", &e);
	l.cr_id = "cr-123";
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidCapacityReservationId.Malformed", &e);
	l.cr_id = "cr-0000000000000000a";
	l.instance_type = "g6.xlarge";
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidParameterCombination", &e);
	assert_string_equal(e.message, "The instance type g6.xlarge does not match the instance type g5.xlarge of Capacity Reservation cr-0000000000000000a");
	l.instance_type = "g5.xlarge";
	l.subnet_id = "subnet-b";
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidParameterCombination", &e);
	l.subnet_id = NULL;
	l.spot = true;
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidParameterCombination", &e);
	l.spot = false;
	/* MaxCount 5: the reservation's 2, never the pool's */
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 0, &r), 2);
	assert_ptr_equal(r->inst[0]->cr, cr_of(f->sim, l.cr_id, 0));
	assert_string_equal(r->inst[1]->az->name, "ap-south-1a");
	assert_int_equal(gb_sim_cr_available(cr_of(f->sim, l.cr_id, 0), 0), 0);
	assert_int_equal(gb_sim_pools(f->sim, &n)[0].used, 0);
	run_err(f->sim, "ap-south-1", &l, 1, 400, "ReservationCapacityExceeded", &e);
	assert_string_equal(e.message, "The requested number of instances (1) exceeds the available capacity of Capacity Reservation cr-0000000000000000a (0 of 2).");
	/* a terminated instance gives its slot back once terminated */
	id = r->inst[0]->id;
	assert_int_equal(gb_sim_terminate_instances(f->sim, "ap-south-1", &id, 1, false, 2, &ch,
						    &n, &e), GB_E_OK);
	free(ch);
	assert_int_equal(gb_sim_cr_available(cr_of(f->sim, l.cr_id, 2.5), 2.5), 0);
	assert_int_equal(gb_sim_cr_available(cr_of(f->sim, l.cr_id, 3), 3), 1);
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 3, NULL), 1);
	/* a cancelled one takes nothing */
	l.cr_id = "cr-0000000000000000d";
	run_err(f->sim, "ap-south-1", &l, 4, 400, "InvalidParameterValue", &e);
	assert_string_equal(e.message, "Capacity Reservation cr-0000000000000000d is in state cancelled: instances can be launched only into an active one");
}

static void test_cr_open(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("g5.xlarge", NULL, 3, 3);
	struct gb_sim_reservation *r = NULL;
	const struct gb_sim_cr *cr;
	struct gb_sim_error e;

	/* no AZ: EC2 lands it where the open reservation is, 2 in it, 1 from the pool */
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 0, &r), 3);
	cr = cr_of(f->sim, "cr-0000000000000000b", 0);
	assert_ptr_equal(r->inst[0]->cr, cr);
	assert_ptr_equal(r->inst[1]->cr, cr);
	assert_null(r->inst[2]->cr);
	assert_string_equal(r->inst[2]->az->name, "ap-south-1b");
	assert_int_equal(gb_sim_cr_available(cr, 0), 0);
	/* the pool of ap-south-1b is full now: capacity-reservations-only fails */
	l.min_count = l.max_count = 1;
	l.cr_pref = GB_SIM_CR_PREF_ONLY;
	l.az = "ap-south-1b";
	run_err(f->sim, "ap-south-1", &l, 1, 400, "ReservationCapacityExceeded", &e);
	/* preference none never uses it */
	l.cr_pref = GB_SIM_CR_PREF_NONE;
	l.az = "ap-south-1a";
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 1, &r), 1);
	assert_null(r->inst[0]->cr);
}

static void test_cr_block(void **state)
{
	struct fix *f = *state;
	struct gb_sim_launch l = launch_of("p5.48xlarge", NULL, 2, 2);
	struct gb_sim_reservation *r = NULL;
	struct gb_sim_instance **v = NULL;
	struct gb_sim_query q = { 0 };
	char next[GB_SIM_TOKEN_MAX];
	struct gb_sim_error e;
	size_t n;

	l.capacity_block = true;
	run_err(f->sim, "ap-south-1", &l, 0, 400, "InvalidParameterCombination", &e);
	l.cr_id = "cr-0000000000000000c";
	assert_string_equal(gb_sim_cr_state(cr_of(f->sim, l.cr_id, 0), 0), "scheduled");
	run_err(f->sim, "ap-south-1", &l, 50, 400, "InvalidParameterValue", &e);
	assert_true(gb_str_has_prefix(e.message, "Capacity Block cr-0000000000000000c is scheduled"));
	l.capacity_block = false;
	run_err(f->sim, "ap-south-1", &l, 100, 400, "InvalidParameterCombination", &e);
	l.capacity_block = true;
	assert_int_equal(run_ok(f->sim, "ap-south-1", &l, 100, &r), 2);
	assert_string_equal(gb_sim_cr_state(cr_of(f->sim, l.cr_id, 150), 150), "active");
	/* the block's end terminates its instances */
	assert_int_equal(gb_sim_describe_instances(f->sim, "ap-south-1", &q, 200, &v, &n, next,
						   &e), GB_E_OK);
	assert_int_equal(n, 2);
	assert_int_equal(v[0]->state, GB_SIM_STATE_SHUTTING_DOWN);
	assert_true(v[0]->cr_ended);
	assert_false(v[0]->user_terminated);
	free(v);
	assert_string_equal(gb_sim_cr_state(cr_of(f->sim, l.cr_id, 201), 201), "expired");
	assert_int_equal(cr_of(f->sim, l.cr_id, 201)->used, 0);
	run_err(f->sim, "ap-south-1", &l, 201, 400, "InvalidParameterValue", &e);
}

static void test_cr_describe(void **state)
{
	struct fix *f = *state;
	struct gb_sim_filter flt = { "instance-match-criteria", (const char *[]){ "targeted" }, 1 };
	struct gb_sim_filter bad = { "reservation-type", (const char *[]){ "default" }, 1 };
	const char *ids[] = { "cr-0000000000000000a", "cr-0000000000000000e" };
	struct gb_sim_query q = { .max_results = 2 };
	const struct gb_sim_cr **v = NULL;
	char next[GB_SIM_TOKEN_MAX], token[GB_SIM_TOKEN_MAX];
	struct gb_sim_error e;
	size_t n;

	assert_int_equal(gb_sim_describe_crs(f->sim, "ap-south-1", &q, 0, &v, &n, next, &e),
			 GB_E_OK);
	assert_int_equal(n, 2);
	assert_true(gb_str_has_prefix(next, "gbsim1"));
	free(v);
	memcpy(token, next, sizeof(token));
	q.next_token = token;
	q.filters = &flt;
	q.nfilters = 1;
	assert_int_equal(gb_sim_describe_crs(f->sim, "ap-south-1", &q, 0, &v, &n, next, &e),
			 GB_E_OK);
	assert_int_equal(n, 2);			/* c and d; b is open */
	assert_string_equal(v[0]->sc->id, "cr-0000000000000000c");
	assert_string_equal(next, "");
	free(v);
	q.filters = &bad;
	assert_int_equal(gb_sim_describe_crs(f->sim, "ap-south-1", &q, 0, &v, &n, next, &e),
			 GB_E_CLOUDCONFIG);
	assert_string_equal(e.message, "The filter 'reservation-type' is invalid");
	memset(&q, 0, sizeof(q));
	q.ids = ids;
	q.nids = 2;
	assert_int_equal(gb_sim_describe_crs(f->sim, "ap-south-1", &q, 0, &v, &n, next, &e),
			 GB_E_NOTFOUND);
	assert_string_equal(e.code, "InvalidCapacityReservationId.NotFound");
	ids[1] = "cr-0000000000000000A";
	assert_int_equal(gb_sim_describe_crs(f->sim, "ap-south-1", &q, 0, &v, &n, next, &e),
			 GB_E_CLOUDCONFIG);
	assert_string_equal(e.code, "InvalidCapacityReservationId.Malformed");
	q.nids = 1;
	q.max_results = 5;
	assert_int_equal(gb_sim_describe_crs(f->sim, "ap-south-1", &q, 0, &v, &n, next, &e),
			 GB_E_CLOUDCONFIG);
	assert_string_equal(e.code, "InvalidParameterCombination");
	/* another region has none of them */
	q.max_results = 0;
	assert_int_equal(gb_sim_describe_crs(f->sim, "ap-northeast-1", &q, 0, &v, &n, next, &e),
			 GB_E_AUTH);
}

static void test_cb_offerings(void **state)
{
	struct fix *f = *state;
	struct gb_sim_cb_query q = { "p5.48xlarge", 2, 24, -1, -1, 0, NULL };
	struct gb_sim_cb_offering *v = NULL;
	char next[GB_SIM_TOKEN_MAX];
	struct gb_sim_error e;
	size_t n;

	assert_int_equal(gb_sim_describe_cb_offerings(f->sim, "ap-south-1", &q, 0, &v, &n, next,
						      &e), GB_E_OK);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].count, 2);
	assert_true(v[0].fee > 499.99 && v[0].fee < 500.01);
	free(v);
	q.count = 5;		/* only the 8-instance one */
	q.end_range = 24 * 3600;
	assert_int_equal(gb_sim_describe_cb_offerings(f->sim, "ap-south-1", &q, 0, &v, &n, next,
						      &e), GB_E_OK);
	assert_int_equal(n, 0);
	free(v);
	q.end_range = -1;
	q.hours = 168;
	assert_int_equal(gb_sim_describe_cb_offerings(f->sim, "ap-south-1", &q, 0, &v, &n, next,
						      &e), GB_E_OK);
	assert_int_equal(n, 1);
	free(v);
	q.hours = 25;
	assert_int_equal(gb_sim_describe_cb_offerings(f->sim, "ap-south-1", &q, 0, &v, &n, next,
						      &e), GB_E_CLOUDCONFIG);
	assert_string_equal(e.code, "InvalidParameterValue");
	q.hours = 24;
	q.count = 65;
	assert_int_equal(gb_sim_describe_cb_offerings(f->sim, "ap-south-1", &q, 0, &v, &n, next,
						      &e), GB_E_CLOUDCONFIG);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define TC(fn) cmocka_unit_test_setup_teardown(fn, setup_cr, teardown)
#define TG(fn) cmocka_unit_test_setup_teardown(fn, setup_gpu, teardown_gpu)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_min_max),
		T(test_ice_nothing_launched),
		T(test_idempotency),
		T(test_idempotent_terminated),
		T(test_quotas),
		T(test_offerings_unsupported),
		T(test_cidr_exhaustion),
		T(test_state_timing),
		T(test_capacity_events),
		T(test_describe_filters),
		T(test_describe_paging),
		T(test_terminate_all_or_nothing),
		T(test_create_tags),
		T(test_consistency),
		T(test_consistency_scenario),
		T(test_offerings_list),
		T(test_describe_azs),
		T(test_events),
		T(test_replay),
		T(test_spot_market),
		T(test_spot_capacity_set),
		TG(test_pgroup_cluster),
		TG(test_pgroup_limits),
		TG(test_netifs),
		TG(test_itypes_query),
		TG(test_sgroups_query),
		TC(test_cr_targeted),
		TC(test_cr_open),
		TC(test_cr_block),
		TC(test_cr_describe),
		TC(test_cb_offerings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
