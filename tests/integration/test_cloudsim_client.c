/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_cloudsim_client.c - gpuburst's own EC2 client (libcloud) against the
 * real gpuburst-cloudsim on 127.0.0.1: the product's client code speaks to
 * the simulator exactly as to EC2 (partial launches, idempotent retries,
 * error classes, throttling retried inside the client, paging, terminate,
 * offerings, zones, Spot), and its role credentials against the
 * simulator's STS (AssumeRole from a profile, renewal by expiry and on
 * EC2's refusal, a chain with an external id, web identity, a
 * credential_process script alone and as a role's source).  Starts the simulator with an ephemeral port and a pid
 * file and stops it by that pid, also when a check fails.
 */
#include "config.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gb_creds.h"
#include "gb_ec2.h"
#include "gb_http.h"
#include "gb_log.h"
#include "gb_str.h"
#include "gb_util.h"
#include "tap.h"

static pid_t sim_pid;
static char tmpdir[256];

static void stop_sim(void)
{
	char path[512];

	if (sim_pid > 0) {
		kill(sim_pid, SIGTERM);
		waitpid(sim_pid, NULL, 0);
		sim_pid = 0;
	}
	if (tmpdir[0]) {
		const char *names[] = { "pid", "port", "sim.log", "sim.out", "credentials",
					"config", "token", "signing-helper" };

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", tmpdir, names[i]);
			unlink(path);
		}
		rmdir(tmpdir);
	}
}

/* One TAP check (tests/tap.h): "ok N - ..." or "not ok N - ...". */
#define check(ok, ...) tap_ok((ok), __VA_ARGS__)

static void die(const char *what)
{
	tap_bail("%s", what);
	stop_sim();
	exit(1);
}

/* Start the simulator; RET its port. */
static unsigned start_sim(const char *builddir, const char *scenario)
{
	char bin[512], pidf[512], portf[512], logf[512], outf[512], *text = NULL;
	size_t len;

	snprintf(bin, sizeof(bin), "%s/src/cloudsim/gpuburst-cloudsim", builddir);
	snprintf(pidf, sizeof(pidf), "%s/pid", tmpdir);
	snprintf(portf, sizeof(portf), "%s/port", tmpdir);
	snprintf(logf, sizeof(logf), "%s/sim.log", tmpdir);
	snprintf(outf, sizeof(outf), "%s/sim.out", tmpdir);
	sim_pid = fork();
	if (sim_pid == 0) {
		if (!freopen(outf, "w", stdout))
			_exit(127);
		execl(bin, bin, "--scenario", scenario, "--listen", "127.0.0.1:0",
		      "--pid-file", pidf, "--port-file", portf, "--log", logf,
		      "--manual-clock", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 400; i++) {
		if (gb_file_read(pidf, 64, &text, &len, NULL) == GB_E_OK && len) {
			free(text);
			break;
		}
		if (waitpid(sim_pid, NULL, WNOHANG) == sim_pid) {
			sim_pid = 0;
			die("gpuburst-cloudsim exited at start");
		}
		usleep(25000);
	}
	if (gb_file_read(portf, 64, &text, &len, NULL) != GB_E_OK)
		die("no port file");
	len = (size_t)strtoul(text, NULL, 10);
	free(text);
	return (unsigned)len;
}

/* POST a JSON body to the simulator's control interface. */
static void control(const char *endpoint, const char *path, const char *json)
{
	struct gb_http_opts ho = { 0 };
	struct gb_http_request rq = { 0 };
	struct gb_http_response rs = { 0 };
	struct gb_http_header h = { "Content-Type", "application/json" };
	gb_http_t *http = NULL;
	gb_error_t err;

	ho.no_proxy = true;
	if (gb_http_create(endpoint, &ho, &http, &err))
		die(err.text);
	rq.method = "POST";
	rq.path = path;
	rq.headers = &h;
	rq.n_headers = 1;
	rq.body = json;
	rq.body_len = strlen(json);
	if (gb_http_do(http, &rq, &rs, &err) || rs.status != 200)
		die("control request failed");
	gb_http_response_free(&rs);
	gb_http_destroy(http);
}

static size_t count_in_file(const char *path, const char *needle)
{
	char *text = NULL;
	size_t len, n = 0;

	if (gb_file_read(path, 64 << 20, &text, &len, NULL) != GB_E_OK)
		return 0;
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	free(text);
	return n;
}

/* The product's EC2 client for ap-south-1 at [endpoint], signing with [creds]. */
static gb_ec2_t *ec2_with(const char *endpoint, gb_creds_t *creds)
{
	struct gb_ec2_opts eo = { 0 };
	gb_ec2_t *ec2 = NULL;
	gb_error_t err;

	eo.region = "ap-south-1";
	eo.endpoint = endpoint;
	eo.creds = creds;
	eo.http.no_proxy = true;
	eo.retry.max_attempts = 3;
	eo.retry.base_delay = 0.01;
	eo.retry.max_delay = 0.05;
	if (gb_ec2_create(&eo, &ec2, &err))
		die(err.text);
	return ec2;
}

static gb_ec2_t *client(const char *endpoint, const char *secret, gb_creds_t **creds)
{
	struct gb_creds_opts co = { 0 };
	gb_error_t err;

	co.access_key_id = "AKIDEXAMPLE";
	co.secret_access_key = secret;
	co.no_env = co.no_files = co.no_imds = true;
	if (gb_creds_create(&co, creds, &err))
		die(err.text);
	return ec2_with(endpoint, *creds);
}

static gb_err_t run(gb_ec2_t *ec2, const char *type, const char *subnet, int min,
		    int max, const char *token, struct gb_ec2_instance_list **out,
		    struct gb_ec2_error *ae)
{
	static const struct gb_ec2_kv tags[] = { { "gpuburst:cluster", "it" } };
	struct gb_ec2_tag_spec ts = { "instance", tags, 1 };
	struct gb_ec2_run_params p = { 0 };
	gb_error_t err;

	p.image_id = "ami-0123456789abcdef0";
	p.instance_type = type;
	p.subnet_id = subnet;
	p.min_count = min;
	p.max_count = max;
	p.client_token = token;
	p.tag_specs = &ts;
	p.n_tag_specs = 1;
	memset(ae, 0, sizeof(*ae));
	return gb_ec2_run_instances(ec2, &p, out, ae, &err);
}

static size_t instances_now(gb_ec2_t *ec2)
{
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae;
	gb_error_t err;
	size_t n;

	if (gb_ec2_describe_instances(ec2, NULL, &l, &ae, &err))
		die(err.text);
	n = l->n;
	gb_ec2_instance_list_free(l);
	return n;
}

static void test_launches(gb_ec2_t *ec2, char ids[3][GB_EC2_CLIENT_TOKEN_MAX])
{
	struct gb_ec2_instance_list *a = NULL, *b = NULL;
	struct gb_ec2_error ae;
	gb_err_t rc;

	rc = run(ec2, "g5.xlarge", "subnet-it-a", 1, 5, "c-1", &a, &ae);
	check(rc == GB_E_OK && a->n == 3, "RunInstances 1..5 with room for 3 launched %zu",
	      a ? a->n : 0);
	if (rc)
		die("cannot continue");
	for (int k = 0; k < 3; k++)
		gb_strlcpy(ids[k], a->v[k].instance_id, GB_EC2_CLIENT_TOKEN_MAX);
	check(a->client_token && !strcmp(a->client_token, "c-1") &&
	      !strcmp(a->v[0].client_token, "c-1"), "the client token is echoed");
	check(!strcmp(a->v[0].state_name, "pending") && a->v[0].state_code == 0 &&
	      !strcmp(a->v[0].private_ip, "127.50.1.4") &&
	      !strcmp(gb_ec2_instance_tag(&a->v[0], "gpuburst:cluster"), "it"),
	      "instance fields parse: state, private IP, tags");
	rc = run(ec2, "g5.xlarge", "subnet-it-a", 1, 5, "c-1", &b, &ae);
	check(rc == GB_E_OK && !strcmp(a->reservation_id, b->reservation_id) &&
	      b->n == 3 && !strcmp(b->v[2].instance_id, a->v[2].instance_id),
	      "a retry with the same token returns the same reservation");
	gb_ec2_instance_list_free(a);
	gb_ec2_instance_list_free(b);
	check(instances_now(ec2) == 3, "and launches nothing new");
}

static void test_errors(gb_ec2_t *ec2)
{
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae;
	gb_err_t rc;

	rc = run(ec2, "g5.xlarge", "subnet-it-a", 1, 1, "c-2", &l, &ae);
	check(rc == GB_E_CAPACITY && ae.cls == GB_EC2_CLASS_CAPACITY && ae.http_status == 500 &&
	      !strcmp(ae.code, "InsufficientInstanceCapacity") && ae.attempts == 1 && !l,
	      "ICE: CAPACITY, HTTP 500, not retried (attempts %d)", ae.attempts);
	check(strstr(ae.message, "choosing ap-south-1b.") != NULL, "the ICE message names ap-south-1b");
	rc = run(ec2, "g6e.xlarge", "subnet-it-a", 1, 1, "c-3", &l, &ae);
	check(rc != GB_E_OK && !strcmp(ae.code, "Unsupported") && ae.http_status == 400,
	      "an unoffered type: Unsupported (%s)", gb_ec2_class_name(ae.cls));
	rc = run(ec2, "g6.xlarge", "subnet-it-a", 58, 58, "c-4", &l, &ae);
	check(rc == GB_E_QUOTA && !strcmp(ae.code, "InstanceLimitExceeded") &&
	      ae.http_status == 400, "the instance quota: QUOTA, InstanceLimitExceeded");
}

/* gb_ec2_run_instances_dry_run against the simulator: 412 is success. */
static void test_dry_run(gb_ec2_t *ec2)
{
	static const char *const sg[] = { "sg-0123456789abcdef0" };
	struct gb_ec2_run_params p = { 0 };
	struct gb_ec2_error ae;
	gb_error_t err;
	gb_err_t rc;
	size_t before = instances_now(ec2);

	p.image_id = "ami-0123456789abcdef0";
	p.instance_type = "g5.xlarge";
	p.subnet_id = "subnet-it-a";
	p.min_count = p.max_count = 50;		/* over capacity and quota */
	p.security_group_ids = sg;
	p.n_security_group_ids = 1;
	p.key_name = "gpuburst";
	p.iam_instance_profile_name = "gpuburst-node";
	rc = gb_ec2_run_instances_dry_run(ec2, &p, &ae, &err);
	check(rc == GB_E_OK && !strcmp(ae.code, "DryRunOperation") && ae.http_status == 412 &&
	      ae.cls == GB_EC2_CLASS_NONE, "a dry run: DryRunOperation 412 is GB_E_OK (%s)",
	      rc ? err.text : "ok");
	check(instances_now(ec2) == before, "and launches nothing");
	p.image_id = "ami-0000000000000000a";
	rc = gb_ec2_run_instances_dry_run(ec2, &p, &ae, &err);
	check(rc == GB_E_CLOUDCONFIG && !strcmp(ae.code, "InvalidAMIID.NotFound") &&
	      strstr(err.text, "InvalidAMIID.NotFound: The image id") != NULL,
	      "a dry run with a bad AMI: CLOUDCONFIG, InvalidAMIID.NotFound (%s)", err.text);
}

/* The client retries throttling itself, within its attempts. */
static void test_throttle(gb_ec2_t *ec2, const char *endpoint, const char *log)
{
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae;
	gb_error_t err;
	size_t before = count_in_file(log, "status=503 code=RequestLimitExceeded");
	gb_err_t rc;

	control(endpoint, "/_sim/fault",
		"{\"code\": \"RequestLimitExceeded\", \"count\": 2, \"action\": \"DescribeInstances\"}");
	rc = gb_ec2_describe_instances(ec2, NULL, &l, &ae, &err);
	check(rc == GB_E_OK && l && l->n == 3, "two throttled DescribeInstances, then success");
	gb_ec2_instance_list_free(l);
	check(count_in_file(log, "status=503 code=RequestLimitExceeded") == before + 2,
	      "the simulator throttled exactly two calls");
	control(endpoint, "/_sim/fault",
		"{\"code\": \"RequestLimitExceeded\", \"count\": 3, \"action\": \"DescribeInstances\"}");
	rc = gb_ec2_describe_instances(ec2, NULL, &l, &ae, &err);
	check(rc == GB_E_THROTTLE && ae.http_status == 503 && ae.attempts == 3,
	      "three throttled calls exhaust three attempts: THROTTLE, 503");
}

/* A response lost after the launch: the retry's token finds the launch. */
static void test_lost_response(gb_ec2_t *ec2, const char *endpoint)
{
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae;
	size_t before = instances_now(ec2);
	gb_err_t rc;

	control(endpoint, "/_sim/fault", "{\"kind\": \"lost_response\", \"action\": \"RunInstances\"}");
	rc = run(ec2, "g6.xlarge", "subnet-it-a", 2, 2, "c-lost", &l, &ae);
	check(rc == GB_E_OK && l && l->n == 2, "RunInstances whose response was lost succeeds on retry");
	gb_ec2_instance_list_free(l);
	check(instances_now(ec2) == before + 2, "and launched 2, not 4");
}

static void test_paging_terminate(gb_ec2_t *ec2, const char *endpoint, const char *log,
				  char ids[3][GB_EC2_CLIENT_TOKEN_MAX])
{
	const char *vals[] = { "it" }, *idv[3] = { ids[0], ids[1], ids[2] };
	struct gb_ec2_filter f = { "tag:gpuburst:cluster", vals, 1 };
	struct gb_ec2_describe_params dp = { 0 };
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_state_change_list *ch = NULL;
	struct gb_ec2_error ae;
	gb_error_t err;
	size_t calls = count_in_file(log, "action=DescribeInstances ");
	gb_err_t rc;

	rc = run(ec2, "g6.xlarge", "subnet-it-a", 12, 12, "c-5", &l, &ae);
	gb_ec2_instance_list_free(l);
	dp.filters = &f;
	dp.n_filters = 1;
	dp.max_results = 5;
	rc = gb_ec2_describe_instances(ec2, &dp, &l, &ae, &err);
	check(rc == GB_E_OK && l->n == 17, "DescribeInstances pages of 5 gather all 17 instances");
	gb_ec2_instance_list_free(l);
	check(count_in_file(log, "action=DescribeInstances ") - calls == 4,
	      "in 4 pages (the client followed NextToken)");
	rc = gb_ec2_terminate_instances(ec2, idv, 3, &ch, &ae, &err);
	check(rc == GB_E_OK && ch->n == 3 && !strcmp(ch->v[0].current_name, "shutting-down") &&
	      ch->v[0].current_code == 32, "TerminateInstances: shutting-down");
	gb_ec2_state_change_list_free(ch);
	control(endpoint, "/_sim/time", "{\"advance\": 2}");
	memset(&dp, 0, sizeof(dp));
	dp.instance_ids = idv;
	dp.n_instance_ids = 3;
	rc = gb_ec2_describe_instances(ec2, &dp, &l, &ae, &err);
	check(rc == GB_E_OK && l->n == 3 && !strcmp(l->v[0].state_name, "terminated") &&
	      !strcmp(l->v[2].state_name, "terminated"), "then terminated");
	gb_ec2_instance_list_free(l);
}

static void test_offerings_azs(gb_ec2_t *ec2)
{
	const char *vals[] = { "g6e.xlarge" };
	struct gb_ec2_filter f = { "instance-type", vals, 1 };
	struct gb_ec2_offerings_params op = { "availability-zone", &f, 1, 0 };
	struct gb_ec2_offering_list *o = NULL;
	struct gb_ec2_az_list *z = NULL;
	struct gb_ec2_error ae;
	gb_error_t err;

	check(gb_ec2_describe_instance_type_offerings(ec2, &op, &o, &ae, &err) == GB_E_OK &&
	      o->n == 1 && !strcmp(o->v[0].location, "ap-south-1b") &&
	      !strcmp(o->v[0].location_type, "availability-zone"),
	      "DescribeInstanceTypeOfferings: g6e.xlarge in ap-south-1b only");
	gb_ec2_offering_list_free(o);
	check(gb_ec2_describe_availability_zones(ec2, NULL, 0, &z, &ae, &err) == GB_E_OK &&
	      z->n == 2 && !strcmp(z->v[1].zone_name, "ap-south-1b") &&
	      !strcmp(z->v[1].zone_id, "aps1-az2") && !strcmp(z->v[0].state, "available"),
	      "DescribeAvailabilityZones");
	gb_ec2_az_list_free(z);
}

/* Spot through the product's client: InstanceMarketOptions as gb_ec2 sends them. */
static void test_spot(gb_ec2_t *ec2)
{
	struct gb_ec2_run_params p = { 0 };
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae;
	gb_error_t err;
	gb_err_t rc;

	p.image_id = "ami-0123456789abcdef0";
	p.instance_type = "g6e.xlarge";
	p.subnet_id = "subnet-it-b";
	p.min_count = p.max_count = 1;
	p.client_token = "c-spot-1";
	p.spot = true;
	p.spot_max_price = "0.5";
	rc = gb_ec2_run_instances(ec2, &p, &l, &ae, &err);
	check(rc != GB_E_OK && !strcmp(ae.code, "SpotMaxPriceTooLow") && ae.http_status == 400 &&
	      !l, "Spot MaxPrice 0.5 under the price 0.6: SpotMaxPriceTooLow (%s)", ae.code);
	p.client_token = "c-spot-2";
	p.spot_max_price = "0.75";
	p.spot_instance_type = "one-time";
	p.spot_interruption = "terminate";
	rc = gb_ec2_run_instances(ec2, &p, &l, &ae, &err);
	check(rc == GB_E_OK && l->n == 1 && l->v[0].lifecycle &&
	      !strcmp(l->v[0].lifecycle, "spot"), "a Spot launch: instanceLifecycle spot");
	gb_ec2_instance_list_free(l);
	l = NULL;
	p.client_token = "c-spot-3";
	rc = gb_ec2_run_instances(ec2, &p, &l, &ae, &err);
	check(rc == GB_E_CAPACITY && !strcmp(ae.code, "InsufficientInstanceCapacity") &&
	      strstr(ae.message, "no Spot capacity") && !l,
	      "the Spot pool full: InsufficientInstanceCapacity (%s)", ae.code);
	/* On-Demand g6e.xlarge in ap-south-1b keeps its 2 */
	p.spot = false;
	p.spot_max_price = p.spot_instance_type = p.spot_interruption = NULL;
	p.client_token = "c-spot-4";
	p.max_count = 2;
	rc = gb_ec2_run_instances(ec2, &p, &l, &ae, &err);
	check(rc == GB_E_OK && l->n == 2 && !l->v[0].lifecycle,
	      "On-Demand beside it: both of its 2, no lifecycle");
	gb_ec2_instance_list_free(l);
}

/* DescribeSpotPriceHistory through the product's client: every page, the scenario's price. */
static void test_spot_prices(gb_ec2_t *ec2)
{
	static const char *const linux_only[] = { GB_EC2_PRODUCT_LINUX };
	static const char *const types[] = { "g6e.xlarge", "g5.xlarge" };
	struct gb_ec2_spot_price_history_params p = {
		.instance_types = types, .n_instance_types = 2,
		.product_descriptions = linux_only, .n_product_descriptions = 1,
		.start_time = gb_time_now() - 3600, .max_results = 1,
	};
	struct gb_ec2_spot_price_list *l = NULL;
	struct gb_ec2_error ae;
	gb_error_t err;
	gb_err_t rc;

	rc = gb_ec2_describe_spot_price_history(ec2, &p, &l, &ae, &err);
	check(rc == GB_E_OK && l->n == 1 && !strcmp(l->v[0].instance_type, "g6e.xlarge") &&
	      !strcmp(l->v[0].availability_zone, "ap-south-1b") &&
	      !strcmp(l->v[0].product_description, "Linux/UNIX") && l->v[0].price == 0.6 &&
	      l->v[0].timestamp > 0 && !l->next_token,
	      "DescribeSpotPriceHistory: g6e.xlarge's Spot price 0.6 in ap-south-1b (%s)",
	      rc ? err.text : "ok");
	gb_ec2_spot_price_list_free(l);
	l = NULL;
	p.availability_zone = "ap-south-1z";
	rc = gb_ec2_describe_spot_price_history(ec2, &p, &l, &ae, &err);
	check(rc == GB_E_CLOUDCONFIG && !strcmp(ae.code, "InvalidParameterValue") &&
	      ae.http_status == 400 && ae.attempts == 1 && !l,
	      "DescribeSpotPriceHistory of an unknown AZ: InvalidParameterValue (%s)", ae.code);
}

static void test_bad_secret(const char *endpoint)
{
	gb_creds_t *creds = NULL;
	gb_ec2_t *ec2 = client(endpoint, "not-the-secret", &creds);
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae;
	gb_error_t err;
	gb_err_t rc = gb_ec2_describe_instances(ec2, NULL, &l, &ae, &err);

	check(rc == GB_E_AUTH && !strcmp(ae.code, "SignatureDoesNotMatch") && ae.http_status == 403,
	      "a wrong secret: AUTH, SignatureDoesNotMatch, 403");
	gb_ec2_destroy(ec2);
	gb_creds_destroy(creds);
}

/*****************************************************************************
 *  Role credentials: libcloud's gb_creds against the simulator's STS
 *****************************************************************************/

#define ROLE "arn:aws:iam::123456789012:role/gpuburst"
#define PARTNER "arn:aws:iam::123456789012:role/gpuburst-partner"
#define WEB_ROLE "arn:aws:iam::123456789012:role/gpuburst-web"
#define WEB_TOKEN "eyJhbGciOiJSUzI1NiJ9.gpuburst-test-token.c2lnbmF0dXJl"
#define SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

/* The client's clock, ahead of the wall clock by [skew] seconds. */
static double client_skew;

static double client_now(void *ctx)
{
	(void)ctx;
	return gb_time_now() + client_skew;
}

/* GET /_sim/sts.  RET NEW JSON. */
static json_t *sts_state(const char *endpoint)
{
	struct gb_http_opts ho = { 0 };
	struct gb_http_request rq = { 0 };
	struct gb_http_response rs = { 0 };
	gb_http_t *http = NULL;
	gb_error_t err;
	json_t *j;

	ho.no_proxy = true;
	if (gb_http_create(endpoint, &ho, &http, &err))
		die(err.text);
	rq.method = "GET";
	rq.path = "/_sim/sts";
	if (gb_http_do(http, &rq, &rs, &err) || rs.status != 200)
		die("GET /_sim/sts failed");
	j = json_loadb(rs.body, rs.body_len, 0, NULL);
	gb_http_response_free(&rs);
	gb_http_destroy(http);
	if (!j)
		die("GET /_sim/sts: no JSON");
	return j;
}

static long role_count(json_t *st, const char *arn)
{
	return (long)json_integer_value(json_object_get(json_object_get(st, "roles"), arn));
}

/* The last session STS issued: its "source", "role_arn", "calls"... */
static json_t *last_session(json_t *st)
{
	json_t *s = json_object_get(st, "sessions");

	return json_array_get(s, json_array_size(s) - 1);
}

static const char *sfield(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));

	return v ? v : "";
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0 || chmod(path, mode) != 0)
		die(path);
}

/* Options for a role client: the shared files of [tmpdir], STS at [endpoint]. */
static void role_opts(struct gb_creds_opts *co, const char *endpoint, char *cred_file,
		      char *config_file)
{
	memset(co, 0, sizeof(*co));
	snprintf(cred_file, 512, "%s/credentials", tmpdir);
	snprintf(config_file, 512, "%s/config", tmpdir);
	co->credentials_file = cred_file;
	co->config_file = config_file;
	co->sts_endpoint = endpoint;
	co->sts_region = "ap-south-1";
	co->http.no_proxy = true;
	co->no_env = co->no_imds = true;
	co->now = client_now;
}

/* One signed EC2 call with [creds]; RET its result, the error in [ae]/[err]. */
static gb_err_t zones(const char *endpoint, gb_creds_t *creds, struct gb_ec2_error *ae,
		      gb_error_t *err)
{
	gb_ec2_t *ec2 = ec2_with(endpoint, creds);
	struct gb_ec2_az_list *z = NULL;
	gb_err_t rc;

	memset(ae, 0, sizeof(*ae));
	rc = gb_ec2_describe_availability_zones(ec2, NULL, 0, &z, ae, err);
	gb_ec2_az_list_free(z);
	gb_ec2_destroy(ec2);
	return rc;
}

/*
 * AssumeRole from a profile's keys; renewal when the client's clock says
 * the session expired; renewal when EC2 refuses a session the client
 * still thought valid (the STS clock moved on: RequestExpired), the call
 * repeated once.
 */
static void test_role_renewal(const char *endpoint, const char *log)
{
	char cf[512], kf[512], *how;
	struct gb_creds_opts co;
	struct gb_ec2_error ae;
	gb_creds_t *creds = NULL;
	gb_error_t err;
	json_t *st;
	gb_err_t rc;

	role_opts(&co, endpoint, kf, cf);
	co.role_arn = ROLE;
	co.source_profile = "base";
	co.role_session_name = "it-renewal";
	co.duration_seconds = 900;
	if (gb_creds_create(&co, &creds, &err))
		die(err.text);
	rc = zones(endpoint, creds, &ae, &err);
	st = sts_state(endpoint);
	how = gb_creds_describe(creds);
	check(rc == GB_E_OK && role_count(st, ROLE) == 1 &&
	      !strcmp(sfield(last_session(st), "source"), "AKIDEXAMPLE") &&
	      !strcmp(sfield(last_session(st), "session_name"), "it-renewal") &&
	      json_integer_value(json_object_get(last_session(st), "calls")) == 1 &&
	      strstr(how, "assume-role " ROLE " <- profile base"),
	      "AssumeRole with profile base's keys; EC2 signed with the session (%s: %s)",
	      how, rc ? err.text : "ok");
	free(how);
	json_decref(st);

	/* both clocks 1000 s on: the client renews before it signs */
	client_skew += 1000;
	control(endpoint, "/_sim/time", "{\"advance\": 1000}");
	rc = zones(endpoint, creds, &ae, &err);
	st = sts_state(endpoint);
	check(rc == GB_E_OK && role_count(st, ROLE) == 2 &&
	      json_is_true(json_object_get(json_array_get(json_object_get(st, "sessions"), 0),
					   "expired")) &&
	      json_integer_value(json_object_get(last_session(st), "calls")) == 1,
	      "a session past its expiration on the client's clock is renewed before the call");
	json_decref(st);

	/* only STS's clock on: EC2 says RequestExpired, the client renews and repeats */
	control(endpoint, "/_sim/time", "{\"advance\": 1000}");
	rc = zones(endpoint, creds, &ae, &err);
	st = sts_state(endpoint);
	check(rc == GB_E_OK && role_count(st, ROLE) == 3 &&
	      count_in_file(log, "code=RequestExpired") == 1 &&
	      json_integer_value(json_object_get(last_session(st), "calls")) == 1,
	      "EC2's RequestExpired for a session the client thought valid: renewed, the call repeated once (%s)",
	      rc ? err.text : "ok");
	json_decref(st);
	gb_creds_destroy(creds);
}

/* A role reached through a role (source_profile chain), its external id, its limit. */
static void test_role_chain(const char *endpoint)
{
	char cf[512], kf[512], *how;
	struct gb_creds_opts co;
	struct gb_ec2_error ae;
	gb_creds_t *creds = NULL;
	gb_error_t err;
	json_t *st, *s;
	size_t n;
	gb_err_t rc;

	role_opts(&co, endpoint, kf, cf);
	co.role_arn = PARTNER;
	co.source_profile = "chain";
	co.external_id = "site-42";
	if (gb_creds_create(&co, &creds, &err))
		die(err.text);
	rc = zones(endpoint, creds, &ae, &err);
	st = sts_state(endpoint);
	s = json_object_get(st, "sessions");
	n = json_array_size(s);
	how = gb_creds_describe(creds);
	check(rc == GB_E_OK && n >= 2 &&
	      !strcmp(sfield(json_array_get(s, n - 2), "role_arn"), ROLE) &&
	      !strcmp(sfield(json_array_get(s, n - 1), "role_arn"), PARTNER) &&
	      !strcmp(sfield(json_array_get(s, n - 1), "source"),
		      sfield(json_array_get(s, n - 2), "access_key_id")) &&
	      strstr(how, "assume-role " PARTNER " <- profile chain assume-role " ROLE
		     " <- profile base credentials-file"),
	      "a chain: profile chain's role assumed with base's keys, the partner role with that session and its external id (%s: %s)",
	      how, rc ? err.text : "ok");
	free(how);
	json_decref(st);
	gb_creds_destroy(creds);

	co.external_id = "site-43";
	if (gb_creds_create(&co, &creds, &err))
		die(err.text);
	rc = zones(endpoint, creds, &ae, &err);
	check(rc != GB_E_OK && strstr(err.text, "AccessDenied") && strstr(err.text, PARTNER),
	      "a wrong external id: AccessDenied naming the role (%s)", err.text);
	gb_creds_destroy(creds);

	/* the gpuburst role allows 2 h, but not to a session (role chaining) */
	co.role_arn = ROLE;
	co.external_id = NULL;
	co.duration_seconds = 7200;
	if (gb_creds_create(&co, &creds, &err))
		die(err.text);
	rc = zones(endpoint, creds, &ae, &err);
	check(rc != GB_E_OK && strstr(err.text, "ValidationError") &&
	      strstr(err.text, "role chaining") && strstr(err.text, ROLE),
	      "2 h for a role reached through a role: STS's role-chaining limit (%s)", err.text);
	gb_creds_destroy(creds);
}

/* AssumeRoleWithWebIdentity with a token file, good and bad. */
static void test_role_web(const char *endpoint)
{
	char cf[512], kf[512], tok[512], *how;
	struct gb_creds_opts co;
	struct gb_ec2_error ae;
	gb_creds_t *creds = NULL;
	gb_error_t err;
	json_t *st;
	gb_err_t rc;

	snprintf(tok, sizeof(tok), "%s/token", tmpdir);
	write_file(tok, WEB_TOKEN "\n", 0600);
	role_opts(&co, endpoint, kf, cf);
	co.role_arn = WEB_ROLE;
	co.web_identity_token_file = tok;
	co.no_files = true;
	if (gb_creds_create(&co, &creds, &err))
		die(err.text);
	rc = zones(endpoint, creds, &ae, &err);
	st = sts_state(endpoint);
	how = gb_creds_describe(creds);
	check(rc == GB_E_OK && role_count(st, WEB_ROLE) == 1 &&
	      !strcmp(sfield(last_session(st), "source"), "web-identity") &&
	      strstr(how, "web-identity " WEB_ROLE),
	      "AssumeRoleWithWebIdentity with the token file; EC2 signed with the session (%s: %s)",
	      how, rc ? err.text : "ok");
	free(how);
	json_decref(st);
	gb_creds_destroy(creds);

	write_file(tok, "eyJhbGciOiJSUzI1NiJ9.another-token.c2ln\n", 0600);
	if (gb_creds_create(&co, &creds, &err))
		die(err.text);
	rc = zones(endpoint, creds, &ae, &err);
	check(rc != GB_E_OK && strstr(err.text, "InvalidIdentityToken"),
	      "a token STS does not accept: InvalidIdentityToken (%s)", err.text);
	gb_creds_destroy(creds);
}

/* credential_process (a real script) alone, and as the source of a role. */
static void test_role_process(const char *endpoint)
{
	char cf[512], kf[512], script[512], text[1024], exp[32];
	char *argv[2] = { script, NULL }, *how;
	struct gb_creds_opts co;
	struct gb_ec2_error ae;
	gb_creds_t *creds = NULL;
	gb_error_t err;
	time_t t = time(NULL) + 3600;
	struct tm tm;
	json_t *st;
	gb_err_t rc;

	gmtime_r(&t, &tm);
	strftime(exp, sizeof(exp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(script, sizeof(script), "%s/signing-helper", tmpdir);
	snprintf(text, sizeof(text),
		 "#!/bin/sh\n"
		 "echo 'signing helper: issuing credentials' >&2\n"
		 "printf '{\"Version\": 1, \"AccessKeyId\": \"AKIDEXAMPLE\", "
		 "\"SecretAccessKey\": \"%s\", \"Expiration\": \"%s\"}\\n'\n",
		 SECRET, exp);
	write_file(script, text, 0700);
	role_opts(&co, endpoint, kf, cf);
	co.credential_process = argv;
	co.no_files = true;
	if (gb_creds_create(&co, &creds, &err))
		die(err.text);
	rc = zones(endpoint, creds, &ae, &err);
	how = gb_creds_describe(creds);
	check(rc == GB_E_OK && !strcmp(how, "credential-process"),
	      "credential_process: a script's Version 1 JSON signs EC2 (%s: %s)", how,
	      rc ? err.text : "ok");
	free(how);
	gb_creds_destroy(creds);

	/* [profile rolesanywhere] credential_process = SCRIPT, the role's source */
	role_opts(&co, endpoint, kf, cf);
	co.role_arn = ROLE;
	co.source_profile = "rolesanywhere";
	if (gb_creds_create(&co, &creds, &err))
		die(err.text);
	rc = zones(endpoint, creds, &ae, &err);
	st = sts_state(endpoint);
	how = gb_creds_describe(creds);
	check(rc == GB_E_OK && !strcmp(sfield(last_session(st), "role_arn"), ROLE) &&
	      !strcmp(sfield(last_session(st), "source"), "AKIDEXAMPLE") &&
	      strstr(how, "<- profile rolesanywhere credential-process"),
	      "a role assumed with a credential_process profile's credentials (Roles Anywhere's setup) (%s: %s)",
	      how, rc ? err.text : "ok");
	free(how);
	json_decref(st);
	gb_creds_destroy(creds);
}

static void test_roles(const char *endpoint, const char *log)
{
	char path[512], text[1024];

	snprintf(path, sizeof(path), "%s/credentials", tmpdir);
	write_file(path, "[base]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = "
		   SECRET "\n", 0600);
	snprintf(path, sizeof(path), "%s/config", tmpdir);
	snprintf(text, sizeof(text),
		 "[profile chain]\nrole_arn = " ROLE "\nsource_profile = base\n\n"
		 "[profile rolesanywhere]\ncredential_process = %s/signing-helper\n", tmpdir);
	write_file(path, text, 0600);
	test_role_renewal(endpoint, log);
	test_role_chain(endpoint);
	test_role_web(endpoint);
	test_role_process(endpoint);
}

int main(void)
{
	const char *top = getenv("GB_TOP_BUILDDIR"), *src = getenv("GB_TOP_SRCDIR");
	const char *tmp = getenv("TMPDIR");
	char endpoint[64], scenario[512], log[512], ids[3][GB_EC2_CLIENT_TOKEN_MAX];
	gb_creds_t *creds = NULL;
	gb_ec2_t *ec2;

	if (!top || !src) {
		return tap_skip_all("run through make check (GB_TOP_BUILDDIR, GB_TOP_SRCDIR)");
	}
	gb_log_open("test_cloudsim_client", &(struct gb_log_opts){ .level = GB_LOG_ERROR }, NULL);
	snprintf(tmpdir, sizeof(tmpdir), "%s/cloudsim-client.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpdir))
		die("mkdtemp");
	snprintf(scenario, sizeof(scenario), "%s/tests/data/cloudsim/awscli.yaml", src);
	snprintf(log, sizeof(log), "%s/sim.log", tmpdir);
	snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%u", start_sim(top, scenario));
	ec2 = client(endpoint, "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", &creds);
	test_launches(ec2, ids);
	test_errors(ec2);
	test_dry_run(ec2);
	test_throttle(ec2, endpoint, log);
	test_lost_response(ec2, endpoint);
	test_paging_terminate(ec2, endpoint, log, ids);
	test_offerings_azs(ec2);
	test_spot(ec2);
	test_spot_prices(ec2);
	test_bad_secret(endpoint);
	test_roles(endpoint, log);
	gb_ec2_destroy(ec2);
	gb_creds_destroy(creds);
	stop_sim();
	return tap_done();
}
