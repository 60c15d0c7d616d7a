/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_cloudsim_api.c - the simulator's EC2 Query API and control interface
 * without HTTP: requests signed with libcloud's signer go through
 * gb_cloudsim_handle(); responses are parsed with libxml2 (well-formed, the
 * element names of tests/data/ec2) and checked for EC2's codes and statuses;
 * the parameter schema's refusals, Spot launches, and the instance members
 * EC2 always returns (also through libcloud's own parser).
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
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include "cloudsim.h"
#include "gb_crypto.h"
#include "gb_ec2_xml.h"
#include "gb_log.h"
#include "gb_sigv4.h"
#include "schema.h"

#define WALL 1795000000.0	/* a fixed "now" for X-Amz-Date checks */
#define KEY "AKIDEXAMPLE"
#define SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

static const char scenario[] =
	"seed: 21\n"
	"timing: {pending: 1s, shutting_down: 1s}\n"
	"faults:\n"
	"  CreateTags: {latency: 250ms, slow_body: {rate: 1, bytes_per_second: 100}}\n"
	"regions:\n"
	"  ap-south-1:\n"
	"    quotas: {g_vt_vcpus: 24, instances: 5, spot_g_vt_vcpus: 12}\n"
	"    images: [ami-0123456789abcdef0]\n"
	"    key_pairs: [k1]\n"
	"    security_groups: [sg-1, sg-2]\n"
	"    instance_profiles: [gpuburst-node]\n"
	"    azs:\n"
	"      ap-south-1a:\n"
	"        offerings: [g5.xlarge, g6.xlarge]\n"
	"        capacity: {g5.xlarge: 2, g6.xlarge: 10}\n"
	"        subnets: {subnet-a: 127.60.1.0/24}\n"
	"      ap-south-1b:\n"
	"        capacity: {g5.xlarge: 5, g6e.xlarge: 1, g5.12xlarge: 1}\n"
	"        spot: {g5.xlarge: {capacity: 2, price: 0.5}}\n"
	"        subnets: {subnet-b: 127.60.2.0/24}\n";

static double fixed_wall(void)
{
	return WALL;
}

static int setup(void **state)
{
	struct gb_scenario *sc = NULL;
	struct gb_cloudsim *cs = NULL;
	gb_error_t e;

	assert_int_equal(gb_scenario_parse("api.yaml", scenario, sizeof(scenario) - 1,
					   &sc, &e), GB_E_OK);
	assert_int_equal(gb_cloudsim_create(sc, NULL, 1.0, &cs, &e), GB_E_OK);
	cs->frozen = true;
	cs->no_sleep = true;
	cs->wall = fixed_wall;
	gb_sim_set_epoch(cs->sim, WALL);
	*state = cs;
	return 0;
}

static int teardown(void **state)
{
	gb_cloudsim_destroy(*state);
	return 0;
}

struct resp {
	struct gb_cs_response r;
	xmlDocPtr doc;
};

static void resp_free(struct resp *rs)
{
	gb_cs_response_free(&rs->r);
	if (rs->doc)
		xmlFreeDoc(rs->doc);
	memset(rs, 0, sizeof(*rs));
}

/* Sign [body] as the AWS CLI would and serve it; [skew] moves X-Amz-Date. */
static void call_ex(struct gb_cloudsim *cs, const char *region, const char *secret,
		    const char *body, double skew, bool sign, struct resp *out)
{
	struct gb_sigv4_header sh[3] = {
		{ "Content-Type", "application/x-www-form-urlencoded; charset=utf-8" },
		{ "Host", "127.0.0.1:8773" },
		{ "X-Amz-Date", NULL },
	};
	struct gb_cs_header h[4];
	struct gb_sigv4_creds cr = { KEY, secret, NULL };
	struct gb_sigv4_request sr = { 0 };
	struct gb_sigv4_result res = { 0 };
	struct gb_cs_request req = { 0 };
	char date[GB_SIGV4_AMZ_DATE_LEN + 1];

	memset(out, 0, sizeof(*out));
	sh[2].value = gb_sigv4_amz_date((time_t)(WALL + skew), date);
	sr.method = "POST";
	sr.path = "/";
	sr.headers = sh;
	sr.n_headers = 3;
	sr.payload = body;
	sr.payload_len = strlen(body);
	assert_int_equal(gb_sigv4_sign(&sr, &cr, region, "ec2", 0, &res, NULL), GB_E_OK);
	for (int i = 0; i < 3; i++) {
		h[i].name = sh[i].name;
		h[i].value = sh[i].value;
	}
	h[3].name = "Authorization";
	h[3].value = res.authorization;
	req.method = "POST";
	req.path = "/";
	req.headers = h;
	req.nheaders = sign ? 4 : 3;
	req.body = body;
	req.body_len = strlen(body);
	gb_cloudsim_handle(cs, &req, &out->r);
	gb_sigv4_result_free(&res);
	if (!out->r.close && out->r.body.len && strcmp(out->r.content_type, "application/json"))
		out->doc = xmlReadMemory(out->r.body.data, (int)out->r.body.len, "r.xml",
					 NULL, XML_PARSE_NONET | XML_PARSE_NOERROR);
}

static void call(struct gb_cloudsim *cs, const char *body, struct resp *out)
{
	call_ex(cs, "ap-south-1", SECRET, body, 0, true, out);
}

/* The text of the first node matching [xpath] (local names), or "". */
static const char *xget(struct resp *rs, const char *xpath)
{
	static char buf[1024];
	xmlXPathContextPtr ctx;
	xmlXPathObjectPtr o;

	buf[0] = '\0';
	assert_non_null(rs->doc);
	ctx = xmlXPathNewContext(rs->doc);
	xmlXPathRegisterNs(ctx, BAD_CAST "e", BAD_CAST "http://ec2.amazonaws.com/doc/2016-11-15/");
	o = xmlXPathEvalExpression(BAD_CAST xpath, ctx);
	if (o && o->nodesetval && o->nodesetval->nodeNr > 0) {
		xmlChar *t = xmlNodeGetContent(o->nodesetval->nodeTab[0]);

		snprintf(buf, sizeof(buf), "%s", t ? (const char *)t : "");
		xmlFree(t);
	}
	xmlXPathFreeObject(o);
	xmlXPathFreeContext(ctx);
	return buf;
}

static int xcount(struct resp *rs, const char *xpath)
{
	xmlXPathContextPtr ctx;
	xmlXPathObjectPtr o;
	int n = 0;

	assert_non_null(rs->doc);
	ctx = xmlXPathNewContext(rs->doc);
	xmlXPathRegisterNs(ctx, BAD_CAST "e", BAD_CAST "http://ec2.amazonaws.com/doc/2016-11-15/");
	o = xmlXPathEvalExpression(BAD_CAST xpath, ctx);
	if (o && o->nodesetval)
		n = o->nodesetval->nodeNr;
	xmlXPathFreeObject(o);
	xmlXPathFreeContext(ctx);
	return n;
}

/* An EC2 error: status, and the envelope <Response><Errors><Error>. */
static void expect_error(struct resp *rs, int status, const char *code)
{
	if (rs->r.status != status || strcmp(xget(rs, "/Response/Errors/Error/Code"), code))
		fail_msg("want %d %s, got %d: %s", status, code, rs->r.status, rs->r.body.data);
	assert_int_equal(xcount(rs, "/Response/Errors/Error/Message"), 1);
	assert_int_equal(strlen(xget(rs, "/Response/RequestID")), 36);
	assert_string_equal(xget(rs, "/Response/RequestID"), rs->r.request_id);
}

#define RUN "Action=RunInstances&Version=2016-11-15&ImageId=ami-0123456789abcdef0"

static void test_run_instances_xml(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct resp rs;
	char body[1024];
	char ud[64];

	/* UserData: base64, then form-encoded (+ / = become %2B %2F %3D) */
	gb_crypto_base64("#!/bin/sh\necho hi\n", 18, ud, sizeof(ud));
	assert_string_equal(ud, "IyEvYmluL3NoCmVjaG8gaGkK");
	snprintf(body, sizeof(body), RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=4"
		 "&SubnetId=subnet-a&ClientToken=tok-1&KeyName=k1&SecurityGroupId.1=sg-1"
		 "&UserData=%s&TagSpecification.1.ResourceType=instance"
		 "&TagSpecification.1.Tag.1.Key=Name&TagSpecification.1.Tag.1.Value=a+b%%26c"
		 "&TagSpecification.2.ResourceType=volume"
		 "&TagSpecification.2.Tag.1.Key=VolTag&TagSpecification.2.Tag.1.Value=x", ud);
	call(cs, body, &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(rs.r.content_type, "text/xml;charset=UTF-8");
	assert_non_null(rs.doc);
	assert_string_equal(xget(&rs, "/e:RunInstancesResponse/e:requestId"), rs.r.request_id);
	assert_true(!strncmp(xget(&rs, "/e:RunInstancesResponse/e:reservationId"), "r-", 2));
	assert_string_equal(xget(&rs, "/e:RunInstancesResponse/e:ownerId"), "123456789012");
	assert_int_equal(xcount(&rs, "//e:instancesSet/e:item"), 2);	/* 2 fit */
	assert_string_equal(xget(&rs, "//e:item[2]/e:amiLaunchIndex"), "1");
	assert_string_equal(xget(&rs, "//e:item[1]/e:instanceState/e:code"), "0");
	assert_string_equal(xget(&rs, "//e:item[1]/e:instanceState/e:name"), "pending");
	assert_string_equal(xget(&rs, "//e:item[1]/e:privateIpAddress"), "127.60.1.4");
	assert_string_equal(xget(&rs, "//e:item[1]/e:privateDnsName"),
			    "ip-127-60-1-4.ap-south-1.compute.internal");
	assert_string_equal(xget(&rs, "//e:item[1]/e:placement/e:availabilityZone"), "ap-south-1a");
	assert_string_equal(xget(&rs, "//e:item[1]/e:subnetId"), "subnet-a");
	assert_string_equal(xget(&rs, "//e:item[1]/e:instanceType"), "g5.xlarge");
	assert_string_equal(xget(&rs, "//e:item[1]/e:clientToken"), "tok-1");
	assert_string_equal(xget(&rs, "//e:item[1]/e:keyName"), "k1");
	assert_string_equal(xget(&rs, "//e:item[1]/e:groupSet/e:item/e:groupId"), "sg-1");
	assert_string_equal(xget(&rs, "//e:item[1]/e:launchTime"), "2026-11-18T11:06:40.000Z");
	/* only instance tags; form decoding of '+' and %26 */
	assert_int_equal(xcount(&rs, "//e:instancesSet/e:item[1]/e:tagSet/e:item"), 1);
	assert_string_equal(xget(&rs, "//e:item[1]/e:tagSet/e:item/e:value"), "a b&c");
	{
		size_t n;
		struct gb_sim_instance *const *in = gb_sim_instances(cs->sim, &n);

		assert_int_equal(n, 2);
		assert_string_equal(in[0]->user_data, "#!/bin/sh\necho hi\n");
	}
	resp_free(&rs);
}

static void test_errors_and_statuses(void **state)
{
	static const struct {
		const char *body;
		int status;
		const char *code;
	} cases[] = {
		{ RUN "&InstanceType=g5.xlarge&MinCount=3&MaxCount=3&SubnetId=subnet-a", 500,
		  "InsufficientInstanceCapacity" },
		{ RUN "&InstanceType=g6e.xlarge&MinCount=1&MaxCount=1&SubnetId=subnet-a", 400,
		  "Unsupported" },
		{ RUN "&InstanceType=g5.12xlarge&MinCount=1&MaxCount=1&SubnetId=subnet-b", 400,
		  "VcpuLimitExceeded" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=6&MaxCount=6&SubnetId=subnet-b", 400,
		  "InstanceLimitExceeded" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&SubnetId=subnet-zz", 400,
		  "InvalidSubnetID.NotFound" },
		{ RUN "&InstanceType=g9.xlarge&MinCount=1&MaxCount=1", 400, "InvalidParameterValue" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=1", 400, "MissingParameter" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&UserData=%21%21%21", 400,
		  "InvalidParameterValue" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&DryRun=true", 412,
		  "DryRunOperation" },
		{ "Action=DescribeInstances&Version=2016-11-15&Filter.1.Name=color&Filter.1.Value.1=red", 400,
		  "InvalidParameterValue" },
		{ "Action=DescribeInstances&Version=2016-11-15&InstanceId.1=i-0123456789abcdef0", 400,
		  "InvalidInstanceID.NotFound" },
		{ "Action=DescribeInstances&Version=2016-11-15&NextToken=nope", 400, "InvalidNextToken" },
		{ "Action=TerminateInstances&Version=2016-11-15&InstanceId.1=i-xyz", 400, "InvalidInstanceID.Malformed" },
		{ "Action=DescribeInstanceTypeOfferings&Version=2016-11-15&LocationType=planet", 400,
		  "InvalidParameterValue" },
		{ "Action=DescribeAvailabilityZones&Version=2016-11-15&ZoneName.1=ap-south-1q", 400,
		  "InvalidParameterValue" },
		{ "Action=RebootInstances&Version=2016-11-15&InstanceId.1=i-0123456789abcdef0", 400, "InvalidAction" },
		{ "Version=2016-11-15", 400, "MissingAction" },
	};
	struct gb_cloudsim *cs = *state;
	struct resp rs;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		call(cs, cases[i].body, &rs);
		expect_error(&rs, cases[i].status, cases[i].code);
		resp_free(&rs);
	}
	/* nothing was launched by any of them */
	call(cs, "Action=DescribeInstances&Version=2016-11-15", &rs);
	assert_int_equal(xcount(&rs, "//e:reservationSet/e:item"), 0);
	resp_free(&rs);
}

/* The ICE body has the shape of the observed one (tests/data/ec2/observed). */
static void test_ice_message(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct resp rs;

	call(cs, RUN "&InstanceType=g5.xlarge&MinCount=3&MaxCount=4"
		 "&Placement.AvailabilityZone=ap-south-1a", &rs);
	expect_error(&rs, 500, "InsufficientInstanceCapacity");
	assert_string_equal(xget(&rs, "/Response/Errors/Error/Message"),
		"We currently do not have sufficient g5.xlarge capacity in the Availability Zone you requested (ap-south-1a). Our system will be working on provisioning additional capacity. You can currently get g5.xlarge capacity by not specifying an Availability Zone in your request or choosing ap-south-1b.");
	assert_true(gb_str_has_prefix(rs.r.body.data,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>"));
	resp_free(&rs);
}

static void test_auth(void **state)
{
	struct gb_cloudsim *cs = *state;
	const char *body = "Action=DescribeInstances&Version=2016-11-15";
	struct resp rs;

	call_ex(cs, "ap-south-1", "wrong-secret", body, 0, true, &rs);
	expect_error(&rs, 403, "SignatureDoesNotMatch");
	resp_free(&rs);
	call_ex(cs, "eu-west-3", SECRET, body, 0, true, &rs);
	expect_error(&rs, 401, "AuthFailure");
	resp_free(&rs);
	call_ex(cs, "ap-south-1", SECRET, body, 16 * 60, true, &rs);
	expect_error(&rs, 400, "RequestExpired");
	resp_free(&rs);
	call_ex(cs, "ap-south-1", SECRET, body, -16 * 60, true, &rs);
	expect_error(&rs, 400, "RequestExpired");
	resp_free(&rs);
	call_ex(cs, "ap-south-1", SECRET, body, 14 * 60, true, &rs);
	assert_int_equal(rs.r.status, 200);
	resp_free(&rs);
	call_ex(cs, "ap-south-1", SECRET, body, 0, false, &rs);
	expect_error(&rs, 403, "MissingAuthenticationToken");
	resp_free(&rs);
}

static void test_auth_tampered_and_unknown_key(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct gb_cs_header h[] = {
		{ "Host", "127.0.0.1:8773" },
		{ "X-Amz-Date", "20261118T005320Z" },
		{ "Authorization", "AWS4-HMAC-SHA256 Credential=AKIDOTHER/20261118/ap-south-1/ec2/aws4_request, SignedHeaders=host;x-amz-date, Signature=0000000000000000000000000000000000000000000000000000000000000000" },
	};
	struct gb_cs_request req = { "POST", "/", NULL, h, 3, "Action=DescribeInstances", 24, NULL };
	struct resp rs = { 0 };

	gb_cloudsim_handle(cs, &req, &rs.r);
	rs.doc = xmlReadMemory(rs.r.body.data, (int)rs.r.body.len, "r.xml", NULL, XML_PARSE_NONET);
	expect_error(&rs, 401, "AuthFailure");
	resp_free(&rs);
	h[2].value = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261118/ap-south-1/ec2/aws4_request";
	gb_cloudsim_handle(cs, &req, &rs.r);
	rs.doc = xmlReadMemory(rs.r.body.data, (int)rs.r.body.len, "r.xml", NULL, XML_PARSE_NONET);
	expect_error(&rs, 400, "IncompleteSignature");
	resp_free(&rs);
	h[2].value = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261118/ap-south-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=0000000000000000000000000000000000000000000000000000000000000000";
	gb_cloudsim_handle(cs, &req, &rs.r);
	rs.doc = xmlReadMemory(rs.r.body.data, (int)rs.r.body.len, "r.xml", NULL, XML_PARSE_NONET);
	expect_error(&rs, 403, "SignatureDoesNotMatch");
	resp_free(&rs);
}

static void test_idempotency_api(void **state)
{
	struct gb_cloudsim *cs = *state;
	const char *b1 = RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=2&SubnetId=subnet-a&ClientToken=same";
	const char *b2 = RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=3&SubnetId=subnet-a&ClientToken=same";
	char res1[64], id1[64];
	struct resp rs;

	call(cs, b1, &rs);
	assert_int_equal(rs.r.status, 200);
	snprintf(res1, sizeof(res1), "%s", xget(&rs, "//e:reservationId"));
	snprintf(id1, sizeof(id1), "%s", xget(&rs, "//e:item[1]/e:instanceId"));
	resp_free(&rs);
	/* parameters in another order are the same parameters */
	call(cs, "ClientToken=same&SubnetId=subnet-a&MaxCount=2&MinCount=1&InstanceType=g6.xlarge"
		 "&ImageId=ami-0123456789abcdef0&Version=2016-11-15&Action=RunInstances", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, "//e:reservationId"), res1);
	assert_string_equal(xget(&rs, "//e:item[1]/e:instanceId"), id1);
	resp_free(&rs);
	call(cs, b2, &rs);
	expect_error(&rs, 400, "IdempotentParameterMismatch");
	resp_free(&rs);
}

static void test_describe_terminate_xml(void **state)
{
	struct gb_cloudsim *cs = *state;
	char body[256], id[64];
	struct resp rs;

	call(cs, RUN "&InstanceType=g6.xlarge&MinCount=2&MaxCount=2&SubnetId=subnet-a", &rs);
	snprintf(id, sizeof(id), "%s", xget(&rs, "//e:item[1]/e:instanceId"));
	resp_free(&rs);
	call(cs, RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&SubnetId=subnet-b", &rs);
	resp_free(&rs);
	call(cs, "Action=DescribeInstances&Version=2016-11-15&MaxResults=5", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_int_equal(xcount(&rs, "//e:reservationSet/e:item"), 2);
	assert_int_equal(xcount(&rs, "//e:reservationSet/e:item[1]/e:instancesSet/e:item"), 2);
	assert_int_equal(xcount(&rs, "/e:DescribeInstancesResponse/e:nextToken"), 0);
	resp_free(&rs);
	snprintf(body, sizeof(body), "Action=TerminateInstances&Version=2016-11-15&InstanceId.1=%s", id);
	call(cs, body, &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, "//e:instancesSet/e:item/e:instanceId"), id);
	assert_string_equal(xget(&rs, "//e:item/e:currentState/e:code"), "32");
	assert_string_equal(xget(&rs, "//e:item/e:currentState/e:name"), "shutting-down");
	assert_string_equal(xget(&rs, "//e:item/e:previousState/e:name"), "pending");
	resp_free(&rs);
	cs->offset += 5;	/* the driven clock */
	snprintf(body, sizeof(body), "Action=DescribeInstances&Version=2016-11-15&InstanceId.1=%s", id);
	call(cs, body, &rs);
	assert_string_equal(xget(&rs, "//e:instanceState/e:name"), "terminated");
	assert_string_equal(xget(&rs, "//e:stateReason/e:code"), "Client.UserInitiatedShutdown");
	resp_free(&rs);
}

static void test_offerings_azs_tags_xml(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct resp rs;

	call(cs, "Action=DescribeInstanceTypeOfferings&Version=2016-11-15&LocationType=availability-zone"
		 "&Filter.1.Name=instance-type&Filter.1.Value.1=g5.xlarge", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_int_equal(xcount(&rs, "//e:instanceTypeOfferingSet/e:item"), 2);
	assert_string_equal(xget(&rs, "//e:item[2]/e:location"), "ap-south-1b");
	assert_string_equal(xget(&rs, "//e:item[2]/e:locationType"), "availability-zone");
	resp_free(&rs);
	call(cs, "Action=DescribeInstanceTypeOfferings&Version=2016-11-15&Filter.1.Name=instance-type"
		 "&Filter.1.Value.1=p5.*", &rs);
	assert_int_equal(xcount(&rs, "//e:instanceTypeOfferingSet/e:item"), 0);
	assert_int_equal(xcount(&rs, "//e:instanceTypeOfferingSet"), 1);
	resp_free(&rs);
	call(cs, "Action=DescribeAvailabilityZones&Version=2016-11-15", &rs);
	assert_int_equal(xcount(&rs, "//e:availabilityZoneInfo/e:item"), 2);
	assert_string_equal(xget(&rs, "//e:item[1]/e:zoneState"), "available");
	assert_string_equal(xget(&rs, "//e:item[2]/e:zoneId"), "aps1-az2");
	assert_string_equal(xget(&rs, "//e:item[1]/e:regionName"), "ap-south-1");
	resp_free(&rs);
	call(cs, RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=1", &rs);
	{
		char body[256];

		snprintf(body, sizeof(body), "Action=CreateTags&Version=2016-11-15&ResourceId.1=%s&Tag.1.Key=Name"
			 "&Tag.1.Value=x", xget(&rs, "//e:item[1]/e:instanceId"));
		resp_free(&rs);
		call(cs, body, &rs);
	}
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, "/e:CreateTagsResponse/e:return"), "true");
	/* the scenario's CreateTags profile: 250 ms, body trickled at 100 B/s */
	assert_true(cs->last_latency == 0.25);
	assert_true(rs.r.slow_bps == 100);
	resp_free(&rs);
}

/*****************************************************************************
 *  DryRun
 *****************************************************************************/

static void control(struct gb_cloudsim *cs, const char *method, const char *path,
		    const char *json, struct gb_cs_response *r);

/* Everything a real launch of gpuburst's sends, over capacity and quota. */
#define DRY_LAUNCH RUN "&InstanceType=g5.xlarge&MinCount=5&MaxCount=50&SubnetId=subnet-a" \
	"&SecurityGroupId.1=sg-1&SecurityGroupId.2=sg-2&KeyName=k1&ClientToken=dry-1" \
	"&IamInstanceProfile.Name=gpuburst-node&UserData=IyEvYmluL3NoCmVjaG8gaGkK" \
	"&TagSpecification.1.ResourceType=instance" \
	"&TagSpecification.1.Tag.1.Key=gpuburst%3Acluster&TagSpecification.1.Tag.1.Value=t"

static size_t n_instances(struct gb_cloudsim *cs)
{
	size_t n;

	(void)gb_sim_instances(cs->sim, &n);
	return n;
}

/* The same checks as a launch, then 412; nothing launched, no token kept. */
static void test_dry_run_run_instances(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct gb_cs_response cr;
	struct resp rs;

	call(cs, DRY_LAUNCH "&DryRun=true", &rs);
	expect_error(&rs, 412, "DryRunOperation");
	assert_string_equal(xget(&rs, "/Response/Errors/Error/Message"),
			    "Request would have succeeded, but DryRun flag is set.");
	resp_free(&rs);
	call(cs, RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&DryRun=true"
		 "&IamInstanceProfile.Arn=arn%3Aaws%3Aiam%3A%3A123456789012%3Ainstance-profile%2Fhpc%2Fgpuburst-node",
		 &rs);
	expect_error(&rs, 412, "DryRunOperation");
	resp_free(&rs);
	assert_int_equal(n_instances(cs), 0);
	control(cs, "GET", "/_sim/state", NULL, &cr);
	assert_non_null(strstr(cr.body.data, "\"usage\":{\"g_vt_vcpus\":0,\"instances\":0"));
	assert_null(strstr(cr.body.data, "\"used\":1"));
	gb_cs_response_free(&cr);
	/* the token was not recorded: other parameters with it launch */
	call(cs, RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&SubnetId=subnet-a"
		 "&ClientToken=dry-1&DryRun=false", &rs);
	assert_int_equal(rs.r.status, 200);
	resp_free(&rs);
	assert_int_equal(n_instances(cs), 1);
	/* a dry run with a used token does not return its reservation */
	call(cs, RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&SubnetId=subnet-a"
		 "&ClientToken=dry-1&DryRun=true", &rs);
	expect_error(&rs, 412, "DryRunOperation");
	resp_free(&rs);
	assert_int_equal(n_instances(cs), 1);
}

static void test_dry_run_errors(void **state)
{
	static const struct {
		const char *body;
		int status;
		const char *code;
	} cases[] = {
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&DryRun=maybe", 400,
		  "InvalidParameterValue" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&DryRun=", 400,
		  "InvalidParameterValue" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&DryRun=true&Colour=red", 400,
		  "UnknownParameter" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&DryRun=true", 400, "MissingParameter" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=x&MaxCount=1&DryRun=true", 400,
		  "InvalidParameterValue" },
		{ "Action=RunInstances&Version=2016-11-15&ImageId=ami-0000000000000000a&InstanceType=g5.xlarge"
		  "&MinCount=1&MaxCount=1&DryRun=true", 400, "InvalidAMIID.NotFound" },
		{ "Action=RunInstances&Version=2016-11-15&ImageId=image-1&InstanceType=g5.xlarge"
		  "&MinCount=1&MaxCount=1&DryRun=true", 400, "InvalidAMIID.Malformed" },
		{ RUN "&InstanceType=g9.xlarge&MinCount=1&MaxCount=1&DryRun=true", 400,
		  "InvalidParameterValue" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&SubnetId=subnet-zz&DryRun=true",
		  400, "InvalidSubnetID.NotFound" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&SecurityGroupId.1=sg-9&DryRun=true",
		  400, "InvalidGroup.NotFound" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&SecurityGroupId.1=default"
		  "&DryRun=true", 400, "InvalidGroupId.Malformed" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&KeyName=k2&DryRun=true", 400,
		  "InvalidKeyPair.NotFound" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&IamInstanceProfile.Name=other"
		  "&DryRun=true", 400, "InvalidParameterValue" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&DryRun=true"
		  "&IamInstanceProfile.Arn=arn%3Aaws%3Aiam%3A%3A999999999999%3Ainstance-profile%2Fgpuburst-node",
		  400, "InvalidParameterValue" },
		/* an ARN of another partition than the region's (aws) */
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&DryRun=true"
		  "&IamInstanceProfile.Arn=arn%3Aaws-cn%3Aiam%3A%3A123456789012%3Ainstance-profile%2Fgpuburst-node",
		  400, "InvalidParameterValue" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&DryRun=true"
		  "&IamInstanceProfile.Name=gpuburst-node"
		  "&IamInstanceProfile.Arn=arn%3Aaws%3Aiam%3A%3A123456789012%3Ainstance-profile%2Fgpuburst-node",
		  400, "InvalidParameterCombination" },
		{ RUN "&InstanceType=g6e.xlarge&MinCount=1&MaxCount=1&SubnetId=subnet-a&DryRun=true",
		  400, "Unsupported" },
		{ RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&DryRun=true"
		  "&TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=aws%3Ax",
		  400, "InvalidParameterValue" },
		{ "Action=DescribeAvailabilityZones&Version=2016-11-15&ZoneName.1=ap-south-1q&DryRun=true", 400,
		  "InvalidParameterValue" },
		{ "Action=DescribeInstances&Version=2016-11-15&MaxResults=5&DryRun=1", 400, "InvalidParameterValue" },
		{ "Action=DescribeInstances&Version=2016-11-15&Colour=red", 400, "UnknownParameter" },
		{ "Action=TerminateInstances&Version=2016-11-15&InstanceId.1=i-0123456789abcdef0&DryRun=true", 400,
		  "InvalidInstanceID.NotFound" },
	};
	struct gb_cloudsim *cs = *state;
	struct resp rs;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		call(cs, cases[i].body, &rs);
		expect_error(&rs, cases[i].status, cases[i].code);
		resp_free(&rs);
	}
	assert_int_equal(n_instances(cs), 0);
}

/* A permission the caller lacks (injected) wins over DryRunOperation. */
static void test_dry_run_unauthorized(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct gb_cs_response cr;
	struct resp rs;

	control(cs, "POST", "/_sim/fault", "{\"code\": \"UnauthorizedOperation\", "
		"\"action\": \"RunInstances\", \"region\": \"ap-south-1\"}", &cr);
	assert_int_equal(cr.status, 200);
	gb_cs_response_free(&cr);
	call(cs, DRY_LAUNCH "&DryRun=true", &rs);
	expect_error(&rs, 403, "UnauthorizedOperation");
	resp_free(&rs);
	call(cs, DRY_LAUNCH "&DryRun=true", &rs);
	expect_error(&rs, 412, "DryRunOperation");
	resp_free(&rs);
}

/* The other actions accept DryRun too: checked, then 412, nothing changed. */
static void test_dry_run_other_actions(void **state)
{
	struct gb_cloudsim *cs = *state;
	char body[256], id[64];
	struct resp rs;

	call(cs, RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=1", &rs);
	assert_int_equal(rs.r.status, 200);
	snprintf(id, sizeof(id), "%s", xget(&rs, "//e:item[1]/e:instanceId"));
	resp_free(&rs);
	call(cs, "Action=DescribeInstances&Version=2016-11-15&DryRun=true", &rs);
	expect_error(&rs, 412, "DryRunOperation");
	resp_free(&rs);
	call(cs, "Action=DescribeAvailabilityZones&Version=2016-11-15&DryRun=true", &rs);
	expect_error(&rs, 412, "DryRunOperation");
	resp_free(&rs);
	call(cs, "Action=DescribeInstanceTypeOfferings&Version=2016-11-15&DryRun=true", &rs);
	expect_error(&rs, 412, "DryRunOperation");
	resp_free(&rs);
	snprintf(body, sizeof(body), "Action=CreateTags&Version=2016-11-15&ResourceId.1=%s&Tag.1.Key=Name"
		 "&Tag.1.Value=x&DryRun=true", id);
	call(cs, body, &rs);
	expect_error(&rs, 412, "DryRunOperation");
	resp_free(&rs);
	snprintf(body, sizeof(body), "Action=TerminateInstances&Version=2016-11-15&InstanceId.1=%s&DryRun=true", id);
	call(cs, body, &rs);
	expect_error(&rs, 412, "DryRunOperation");
	resp_free(&rs);
	snprintf(body, sizeof(body), "Action=DescribeInstances&Version=2016-11-15&InstanceId.1=%s&DryRun=false", id);
	call(cs, body, &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, "//e:instanceState/e:name"), "pending");
	assert_int_equal(xcount(&rs, "//e:instancesSet/e:item/e:tagSet"), 0);
	resp_free(&rs);
}

/*****************************************************************************
 *  The parameter schema
 *****************************************************************************/

#define RUN1 RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1"
#define V "&Version=2016-11-15"

/* Every refusal of the schema: EC2's code, and a message naming the parameter. */
static void test_schema_refusals(void **state)
{
	static const struct {
		const char *body, *code, *says;
	} cases[] = {
		{ "Action=DescribeInstances", "MissingParameter",
		  "must contain the parameter Version" },
		{ "Action=DescribeInstances&Version=2014-06-15", "NoSuchVersion",
		  "The requested version (2014-06-15) of service AmazonEC2 does not exist" },
		{ RUN1 "&InstanceTyp=g5.xlarge", "UnknownParameter",
		  "The parameter InstanceTyp is not recognized" },
		{ RUN1 "&BlockDeviceMapping.1.DeviceName=%2Fdev%2Fsda1", "UnknownParameter",
		  "BlockDeviceMapping.1.DeviceName" },
		{ RUN1 "&IamInstanceProfile.Nme=x", "UnknownParameter", "IamInstanceProfile.Nme" },
		{ RUN1 "&instanceType=g5.xlarge", "UnknownParameter", "instanceType" },
		{ RUN1 "&MetadataOptions.InstanceMetadataTags.1=enabled", "UnknownParameter",
		  "MetadataOptions.InstanceMetadataTags.1" },
		{ RUN "&MinCount=0&MaxCount=1", "InvalidParameterValue",
		  "Value (0) for parameter MinCount is invalid. Expecting a value of at least 1." },
		{ RUN "&MinCount=one&MaxCount=1", "InvalidParameterValue",
		  "Value (one) for parameter MinCount is invalid. Expecting an integer." },
		{ RUN "&MinCount=1&MaxCount=99999999999", "InvalidParameterValue", "MaxCount" },
		{ RUN "&MinCount=1&MaxCount=+1", "InvalidParameterValue", "MaxCount" },
		{ RUN "&MinCount=1", "MissingParameter", "the parameter MaxCount" },
		{ "Action=RunInstances" V "&MinCount=1&MaxCount=1", "MissingParameter",
		  "the parameter ImageId" },
		{ RUN1 "&DryRun=True", "InvalidParameterValue",
		  "Value (True) for parameter DryRun is invalid. Expecting a boolean" },
		{ RUN1 "&InstanceMarketOptions.MarketType=Spot", "InvalidParameterValue",
		  "Value (Spot) for parameter InstanceMarketOptions.MarketType is invalid. Valid values: spot" },
		{ RUN1 "&InstanceMarketOptions.MarketType=spot"
		  "&InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior=halt",
		  "InvalidParameterValue", "Valid values: hibernate, stop, terminate" },
		{ RUN1 "&InstanceMarketOptions.MarketType=spot"
		  "&InstanceMarketOptions.SpotOptions.ValidUntil=2031-13-01T00%3A00%3A00Z",
		  "InvalidParameterValue", "InstanceMarketOptions.SpotOptions.ValidUntil" },
		{ RUN1 "&MetadataOptions.HttpPutResponseHopLimit=65", "InvalidParameterValue",
		  "Expecting a value between 1 and 64." },
		{ RUN1 "&MetadataOptions.HttpTokens=maybe", "InvalidParameterValue",
		  "Valid values: optional, required" },
		{ RUN1 "&MetadataOptions.InstanceMetadataTags=on", "InvalidParameterValue",
		  "Valid values: disabled, enabled" },
		{ RUN1 "&TagSpecification.1.Tag.1.Key=a", "MissingParameter",
		  "the parameter TagSpecification.1.ResourceType" },
		{ RUN1 "&TagSpecification.1.ResourceType=vpc&TagSpecification.1.Tag.1.Key=a",
		  "InvalidParameterValue", "TagSpecification.1.ResourceType" },
		{ RUN1 "&TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Value=a",
		  "MissingParameter", "the parameter TagSpecification.1.Tag.1.Key" },
		{ RUN1 "&TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.2.Key=a",
		  "InvalidParameterValue", "there is no TagSpecification.1.Tag.1" },
		{ RUN1 "&SecurityGroupId.0=sg-1", "UnknownParameter", "SecurityGroupId.0" },
		{ RUN1 "&SecurityGroupId.01=sg-1", "UnknownParameter", "SecurityGroupId.01" },
		{ RUN1 "&MinCount=1", "InvalidQueryParameter",
		  "The parameter MinCount is given more than once" },
		{ "Action=DescribeInstances" V "&InstanceId.2=i-0123456789abcdef0",
		  "InvalidParameterValue", "there is no InstanceId.1" },
		{ "Action=DescribeInstances" V "&MaxResults=4", "InvalidParameterValue",
		  "Value (4) for parameter MaxResults is invalid. Expecting a value between 5 and 1000." },
		{ "Action=DescribeInstances" V "&MaxResults=1001", "InvalidParameterValue",
		  "MaxResults" },
		{ "Action=DescribeInstances" V "&Filter.1.Value.1=x", "MissingParameter",
		  "the parameter Filter.1.Name" },
		{ "Action=DescribeInstances" V "&Filter..Name=x", "UnknownParameter", "Filter..Name" },
		{ "Action=TerminateInstances" V, "MissingParameter", "the parameter InstanceId" },
		{ "Action=TerminateInstances" V "&InstanceId.1=i-0123456789abcdef0&Force=true",
		  "UnknownParameter", "Force" },
		{ "Action=CreateTags" V "&ResourceId.1=i-0123456789abcdef0", "MissingParameter",
		  "the parameter Tag" },
		{ "Action=CreateTags" V "&ResourceId.1=i-0123456789abcdef0&Tag.1.Value=x",
		  "MissingParameter", "the parameter Tag.1.Key" },
		{ "Action=DescribeInstanceTypeOfferings" V "&LocationType=outpost",
		  "InvalidParameterValue",
		  "Valid values: region, availability-zone, availability-zone-id" },
		{ "Action=DescribeAvailabilityZones" V "&AllAvailabilityZones=1",
		  "InvalidParameterValue", "AllAvailabilityZones" },
	};
	struct gb_cloudsim *cs = *state;
	struct resp rs;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		call(cs, cases[i].body, &rs);
		expect_error(&rs, 400, cases[i].code);
		if (!strstr(xget(&rs, "/Response/Errors/Error/Message"), cases[i].says))
			fail_msg("%s: message '%s' lacks '%s'", cases[i].body,
				 xget(&rs, "/Response/Errors/Error/Message"), cases[i].says);
		resp_free(&rs);
	}
	assert_int_equal(n_instances(cs), 0);
	/* refused before any handler or fault: nothing counted as received */
	assert_int_equal(cs->received[GB_SIM_ACTION_RUN_INSTANCES], 0);
}

/* What the schema lets through reaches the handlers as EC2 would take it. */
static void test_schema_accepts(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct resp rs;
	double t;

	call(cs, RUN "&MinCount=1&MaxCount=1&InstanceType=g6.xlarge&Monitoring.Enabled=false"
		 "&EbsOptimized=true&Placement.AvailabilityZone=ap-south-1a"
		 "&TagSpecification.1.ResourceType=volume&TagSpecification.1.Tag.1.Key=v"
		 "&TagSpecification.2.ResourceType=instance&TagSpecification.2.Tag.1.Key=i"
		 "&TagSpecification.2.Tag.1.Value=1&X-Amz-Foo=ignored", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, "//e:item[1]/e:ebsOptimized"), "true");
	assert_int_equal(xcount(&rs, "//e:instancesSet/e:item/e:tagSet/e:item"), 1);
	assert_string_equal(xget(&rs, "//e:instancesSet/e:item/e:tagSet/e:item/e:key"), "i");
	resp_free(&rs);
	/* timestamps: botocore's form, fractions and offsets */
	assert_true(gb_schema_timestamp("2026-01-31T12:00:00Z", &t));
	assert_true(t == 1769860800.0);
	assert_true(gb_schema_timestamp("2026-01-31T13:30:00.250+01:30", &t));
	assert_true(t == 1769860800.25);
	assert_false(gb_schema_timestamp("2026-01-31 12:00:00Z", &t));
	assert_false(gb_schema_timestamp("2026-01-31T12:00:00", &t));
	assert_false(gb_schema_timestamp("2026-01-31T24:00:00Z", &t));
	assert_false(gb_schema_timestamp("2026-01-31T12:00:00.Z", &t));
}

/* --dump-schema prints what gb_schema_check enforces: the same tables. */
static void test_schema_dump(void **state)
{
	char *s = gb_schema_dump();
	size_t n;
	const struct gb_schema_param *p = gb_schema_params(GB_SIM_ACTION_RUN_INSTANCES, &n);

	(void)state;
	assert_non_null(s);
	assert_non_null(strstr(s, "\"version\": \"2016-11-15\""));
	assert_true(n > 20);
	for (size_t i = 0; i < n; i++) {
		char want[160];

		snprintf(want, sizeof(want), "\"name\": \"%s\"", p[i].name);
		assert_non_null(strstr(s, want));
	}
	assert_non_null(strstr(s, "\"name\": \"MinCount\",\n    \"type\": \"integer\",\n"
			       "    \"required\": true,\n    \"min\": 1"));
	free(s);
}

/*****************************************************************************
 *  Spot
 *****************************************************************************/

#define SPOT_RUN RUN "&InstanceType=g5.xlarge&SubnetId=subnet-b" \
	"&InstanceMarketOptions.MarketType=spot"

static void test_spot_launch(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct gb_cs_response cr;
	struct resp rs;

	call(cs, SPOT_RUN "&MinCount=1&MaxCount=1"
		 "&InstanceMarketOptions.SpotOptions.SpotInstanceType=one-time"
		 "&InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior=terminate"
		 "&InstanceMarketOptions.SpotOptions.MaxPrice=0.5", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, "//e:item[1]/e:instanceLifecycle"), "spot");
	assert_true(gb_str_has_prefix(xget(&rs, "//e:item[1]/e:spotInstanceRequestId"), "sir-"));
	assert_int_equal(strlen(xget(&rs, "//e:item[1]/e:spotInstanceRequestId")), 12);
	resp_free(&rs);
	/* the Spot pool and quota only: On-Demand usage stays 0 */
	control(cs, "GET", "/_sim/state", NULL, &cr);
	assert_non_null(strstr(cr.body.data, "\"usage\":{\"g_vt_vcpus\":0,\"instances\":0"));
	assert_non_null(strstr(cr.body.data, "\"spot\":{\"quotas\":{\"g_vt_vcpus\":12,"
			       "\"p_vcpus\":null},\"usage\":{\"g_vt_vcpus\":4,\"p_vcpus\":0}}"));
	assert_non_null(strstr(cr.body.data, "\"spot_pools\":[{\"available\":1,"
			       "\"instance_type\":\"g5.xlarge\",\"price\":0.5,\"total\":2,\"used\":1}]"));
	assert_non_null(strstr(cr.body.data, "\"market\":\"spot\""));
	gb_cs_response_free(&cr);
	/* instance-lifecycle: only the Spot one; On-Demand has none */
	call(cs, RUN "&InstanceType=g5.xlarge&SubnetId=subnet-b&MinCount=1&MaxCount=1", &rs);
	assert_int_equal(xcount(&rs, "//e:item[1]/e:instanceLifecycle"), 0);
	assert_int_equal(xcount(&rs, "//e:item[1]/e:spotInstanceRequestId"), 0);
	resp_free(&rs);
	call(cs, "Action=DescribeInstances" V "&Filter.1.Name=instance-lifecycle"
		 "&Filter.1.Value.1=*", &rs);
	assert_int_equal(xcount(&rs, "//e:instancesSet/e:item"), 1);
	assert_string_equal(xget(&rs, "//e:instancesSet/e:item/e:instanceLifecycle"), "spot");
	resp_free(&rs);
	/* one left in the pool: MinCount 2 is ICE with EC2's Spot message */
	call(cs, SPOT_RUN "&MinCount=2&MaxCount=2", &rs);
	expect_error(&rs, 500, "InsufficientInstanceCapacity");
	assert_string_equal(xget(&rs, "/Response/Errors/Error/Message"),
			    "There is no Spot capacity available that matches your request.");
	resp_free(&rs);
	/* MinCount 1 MaxCount 5: the one left */
	call(cs, SPOT_RUN "&MinCount=1&MaxCount=5", &rs);
	assert_int_equal(xcount(&rs, "//e:instancesSet/e:item"), 1);
	resp_free(&rs);
}

static void test_spot_refusals(void **state)
{
	static const struct {
		const char *body;
		int status;
		const char *code, *says;
	} cases[] = {
		{ SPOT_RUN "&MinCount=1&MaxCount=1&InstanceMarketOptions.SpotOptions.MaxPrice=0.49",
		  400, "SpotMaxPriceTooLow",
		  "Your Spot request price of 0.49 is lower than the minimum required Spot request fulfillment price of 0.5." },
		{ SPOT_RUN "&MinCount=1&MaxCount=1&InstanceMarketOptions.SpotOptions.MaxPrice=cheap",
		  400, "InvalidParameterValue", "InstanceMarketOptions.SpotOptions.MaxPrice" },
		{ SPOT_RUN "&MinCount=1&MaxCount=1&InstanceMarketOptions.SpotOptions.MaxPrice=.5",
		  400, "InvalidParameterValue", "(.5)" },
		{ SPOT_RUN "&MinCount=1&MaxCount=1&InstanceMarketOptions.SpotOptions.MaxPrice=0",
		  400, "InvalidParameterValue", "(0)" },
		{ RUN1 "&InstanceMarketOptions.SpotOptions.MaxPrice=1", 400,
		  "InvalidParameterCombination", "requires InstanceMarketOptions.MarketType spot" },
		{ SPOT_RUN "&MinCount=1&MaxCount=1"
		  "&InstanceMarketOptions.SpotOptions.SpotInstanceType=persistent", 400,
		  "Unsupported", "one-time" },
		{ SPOT_RUN "&MinCount=1&MaxCount=1"
		  "&InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior=stop", 400,
		  "InvalidParameterCombination", "persistent Spot requests only" },
		{ SPOT_RUN "&MinCount=1&MaxCount=1"
		  "&InstanceMarketOptions.SpotOptions.ValidUntil=2031-01-01T00%3A00%3A00Z", 400,
		  "InvalidParameterCombination", "ValidUntil" },
		/* quota: 12 Spot vCPUs are 3 g5.xlarge */
		{ SPOT_RUN "&MinCount=4&MaxCount=4", 400, "MaxSpotInstanceCountExceeded",
		  "Max spot instance count exceeded" },
		/* ap-south-1a has no Spot pool */
		{ RUN "&InstanceType=g5.xlarge&SubnetId=subnet-a&MinCount=1&MaxCount=1"
		  "&InstanceMarketOptions.MarketType=spot", 500, "InsufficientInstanceCapacity",
		  "no Spot capacity" },
		{ RUN "&InstanceType=g6e.xlarge&SubnetId=subnet-a&MinCount=1&MaxCount=1"
		  "&InstanceMarketOptions.MarketType=spot", 400, "Unsupported", "g6e.xlarge" },
	};
	struct gb_cloudsim *cs = *state;
	struct resp rs;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		call(cs, cases[i].body, &rs);
		expect_error(&rs, cases[i].status, cases[i].code);
		if (!strstr(xget(&rs, "/Response/Errors/Error/Message"), cases[i].says))
			fail_msg("%s: message '%s' lacks '%s'", cases[i].body,
				 xget(&rs, "/Response/Errors/Error/Message"), cases[i].says);
		resp_free(&rs);
	}
	assert_int_equal(n_instances(cs), 0);
	/* without subnet or AZ a Spot launch goes where there is Spot room */
	call(cs, RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1"
		 "&InstanceMarketOptions.MarketType=spot", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, "//e:item[1]/e:placement/e:availabilityZone"), "ap-south-1b");
	resp_free(&rs);
}

/* Terminated Spot instances give their Spot room and quota back. */
static void test_spot_release(void **state)
{
	struct gb_cloudsim *cs = *state;
	char body[256], id[64];
	struct resp rs;

	call(cs, SPOT_RUN "&MinCount=2&MaxCount=2", &rs);
	assert_int_equal(xcount(&rs, "//e:instancesSet/e:item"), 2);
	snprintf(id, sizeof(id), "%s", xget(&rs, "//e:item[1]/e:instanceId"));
	resp_free(&rs);
	call(cs, SPOT_RUN "&MinCount=1&MaxCount=1", &rs);
	expect_error(&rs, 500, "InsufficientInstanceCapacity");
	resp_free(&rs);
	snprintf(body, sizeof(body), "Action=TerminateInstances" V "&InstanceId.1=%s", id);
	call(cs, body, &rs);
	assert_int_equal(rs.r.status, 200);
	resp_free(&rs);
	cs->offset += 2;	/* shutting-down -> terminated */
	call(cs, SPOT_RUN "&MinCount=1&MaxCount=1", &rs);
	assert_int_equal(rs.r.status, 200);
	resp_free(&rs);
}

/*****************************************************************************
 *  The instance as EC2 describes it
 *****************************************************************************/

static void test_instance_members(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct gb_ec2_instance_list *l = NULL;
	char body[256], id[64], ip[32];
	gb_error_t err;
	struct resp rs;

	call(cs, RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&SubnetId=subnet-a"
		 "&IamInstanceProfile.Name=gpuburst-node&Monitoring.Enabled=true"
		 "&MetadataOptions.HttpPutResponseHopLimit=3&MetadataOptions.HttpTokens=optional", &rs);
	assert_int_equal(rs.r.status, 200);
	snprintf(id, sizeof(id), "%s", xget(&rs, "//e:item[1]/e:instanceId"));
	snprintf(ip, sizeof(ip), "%s", xget(&rs, "//e:item[1]/e:privateIpAddress"));
	assert_string_equal(xget(&rs, "//e:item[1]/e:iamInstanceProfile/e:arn"),
			    "arn:aws:iam::123456789012:instance-profile/gpuburst-node");
	assert_true(gb_str_has_prefix(xget(&rs, "//e:item[1]/e:iamInstanceProfile/e:id"), "AIPA"));
	assert_int_equal(strlen(xget(&rs, "//e:item[1]/e:iamInstanceProfile/e:id")), 21);
	assert_string_equal(xget(&rs, "//e:item[1]/e:monitoring/e:state"), "pending");
	assert_string_equal(xget(&rs, "//e:item[1]/e:metadataOptions/e:state"), "pending");
	assert_string_equal(xget(&rs, "//e:item[1]/e:metadataOptions/e:httpTokens"), "optional");
	assert_string_equal(xget(&rs, "//e:item[1]/e:metadataOptions/e:httpPutResponseHopLimit"), "3");
	assert_string_equal(xget(&rs, "//e:item[1]/e:metadataOptions/e:httpEndpoint"), "enabled");
	assert_string_equal(xget(&rs, "//e:item[1]/e:metadataOptions/e:instanceMetadataTags"),
			    "disabled");
	assert_string_equal(xget(&rs, "//e:item[1]/e:cpuOptions/e:coreCount"), "2");
	assert_string_equal(xget(&rs, "//e:item[1]/e:cpuOptions/e:threadsPerCore"), "2");
	assert_string_equal(xget(&rs, "//e:item[1]/e:placement/e:tenancy"), "default");
	assert_string_equal(xget(&rs, "//e:item[1]/e:rootDeviceType"), "ebs");
	assert_string_equal(xget(&rs, "//e:item[1]/e:platformDetails"), "Linux/UNIX");
	/* no SecurityGroupId: the VPC's default group */
	assert_int_equal(xcount(&rs, "//e:instancesSet/e:item/e:groupSet/e:item"), 1);
	assert_true(gb_str_has_prefix(xget(&rs, "//e:item[1]/e:groupSet/e:item/e:groupId"), "sg-"));
	/* the primary interface has the instance's address; no volume yet */
	assert_true(gb_str_has_prefix(xget(&rs, "//e:networkInterfaceSet/e:item/e:networkInterfaceId"),
				      "eni-"));
	assert_string_equal(xget(&rs, "//e:networkInterfaceSet/e:item/e:privateIpAddress"), ip);
	assert_string_equal(xget(&rs, "//e:networkInterfaceSet/e:item/e:attachment/e:status"),
			    "attaching");
	assert_int_equal(xcount(&rs, "//e:blockDeviceMapping/e:item"), 0);
	/* libcloud's own parser reads it as before */
	assert_int_equal(gb_ec2_xml_parse_instances(rs.r.body.data, rs.r.body.len, &l, &err),
			 GB_E_OK);
	assert_int_equal(l->n, 1);
	assert_string_equal(l->v[0].instance_id, id);
	assert_string_equal(l->v[0].private_ip, ip);
	assert_string_equal(l->v[0].availability_zone, "ap-south-1a");
	assert_string_equal(l->v[0].subnet_id, "subnet-a");
	assert_int_equal(l->v[0].state_code, 0);
	assert_null(l->v[0].lifecycle);
	gb_ec2_instance_list_free(l);
	resp_free(&rs);
	cs->offset += 2;	/* running */
	snprintf(body, sizeof(body), "Action=DescribeInstances" V "&InstanceId.1=%s", id);
	call(cs, body, &rs);
	assert_string_equal(xget(&rs, "//e:item[1]/e:monitoring/e:state"), "enabled");
	assert_string_equal(xget(&rs, "//e:item[1]/e:metadataOptions/e:state"), "applied");
	assert_string_equal(xget(&rs, "//e:networkInterfaceSet/e:item/e:attachment/e:status"),
			    "attached");
	assert_string_equal(xget(&rs, "//e:blockDeviceMapping/e:item/e:deviceName"), "/dev/sda1");
	assert_string_equal(xget(&rs, "//e:blockDeviceMapping/e:item/e:ebs/e:status"), "attached");
	assert_true(gb_str_has_prefix(xget(&rs, "//e:blockDeviceMapping/e:item/e:ebs/e:volumeId"),
				      "vol-"));
	resp_free(&rs);
	/* terminated: no interface, no volume, no address */
	snprintf(body, sizeof(body), "Action=TerminateInstances" V "&InstanceId.1=%s", id);
	call(cs, body, &rs);
	resp_free(&rs);
	cs->offset += 2;
	snprintf(body, sizeof(body), "Action=DescribeInstances" V "&InstanceId.1=%s", id);
	call(cs, body, &rs);
	assert_string_equal(xget(&rs, "//e:item[1]/e:instanceState/e:name"), "terminated");
	assert_int_equal(xcount(&rs, "//e:networkInterfaceSet/e:item"), 0);
	assert_int_equal(xcount(&rs, "//e:blockDeviceMapping/e:item"), 0);
	assert_int_equal(xcount(&rs, "//e:instancesSet/e:item/e:privateIpAddress"), 0);
	resp_free(&rs);
}

/* GET (or PUT the token) on the IMDS from [peer]; RET the status. */
static int imds(struct gb_cloudsim *cs, const char *method, const char *path,
		const char *peer, const char *token)
{
	struct gb_cs_header h[1] = { { token ? "X-aws-ec2-metadata-token" :
				       "X-aws-ec2-metadata-token-ttl-seconds",
				       token ? token : "60" } };
	struct gb_cs_request req = { 0 };
	struct gb_cs_response r;
	int status;

	memset(&r, 0, sizeof(r));
	req.method = method;
	req.path = path;
	req.headers = h;
	req.nheaders = token || !strcmp(method, "PUT") ? 1 : 0;
	req.peer = peer;
	gb_cloudsim_handle(cs, &req, &r);
	status = r.status;
	gb_cs_response_free(&r);
	return status;
}

/* The IMDS follows each instance's MetadataOptions. */
static void test_imds_metadata_options(void **state)
{
	static const char *const opts[] = {
		"", "&MetadataOptions.HttpTokens=optional",
		"&MetadataOptions.HttpEndpoint=disabled",
	};
	static const char *const md = "/latest/meta-data/instance-id";
	struct gb_cloudsim *cs = *state;
	char body[512], ip[3][32];
	struct resp rs;

	for (int k = 0; k < 3; k++) {
		snprintf(body, sizeof(body), RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=1%s",
			 opts[k]);
		call(cs, body, &rs);
		assert_int_equal(rs.r.status, 200);
		snprintf(ip[k], sizeof(ip[k]), "%s", xget(&rs, "//e:item[1]/e:privateIpAddress"));
		resp_free(&rs);
	}
	/* default HttpTokens required: IMDSv1 refused, v2 answered */
	assert_int_equal(imds(cs, "GET", md, ip[0], NULL), 401);
	assert_int_equal(imds(cs, "PUT", "/latest/api/token", ip[0], NULL), 200);
	assert_int_equal(imds(cs, "GET", md, ip[0], "gbsim-imds-00"), 200);
	/* HttpTokens=optional: IMDSv1 too */
	assert_int_equal(imds(cs, "GET", md, ip[1], NULL), 200);
	/* HttpEndpoint=disabled: nothing, not even a token */
	assert_int_equal(imds(cs, "GET", md, ip[2], NULL), 403);
	assert_int_equal(imds(cs, "GET", md, ip[2], "gbsim-imds-00"), 403);
	assert_int_equal(imds(cs, "PUT", "/latest/api/token", ip[2], NULL), 403);
	/* no instance at that address */
	assert_int_equal(imds(cs, "GET", md, "127.0.0.1", NULL), 401);
	assert_int_equal(imds(cs, "GET", md, "127.0.0.1", "gbsim-imds-00"), 404);
}

/*****************************************************************************
 *  Faults through the API
 *****************************************************************************/

static void control(struct gb_cloudsim *cs, const char *method, const char *path,
		    const char *json, struct gb_cs_response *r)
{
	struct gb_cs_request req = { 0 };

	memset(r, 0, sizeof(*r));
	req.method = method;
	req.path = path;
	req.body = json;
	req.body_len = json ? strlen(json) : 0;
	gb_cloudsim_handle(cs, &req, r);
	assert_string_equal(r->content_type, "application/json");
}

static void test_injected_faults(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct gb_cs_response cr;
	struct resp rs;
	size_t n;

	control(cs, "POST", "/_sim/fault",
		"{\"code\": \"RequestLimitExceeded\", \"count\": 2, \"action\": \"DescribeInstances\"}", &cr);
	assert_int_equal(cr.status, 200);
	assert_string_equal(cr.body.data, "{\"pending\":2}\n");
	gb_cs_response_free(&cr);
	for (int i = 0; i < 2; i++) {
		call(cs, "Action=DescribeInstances&Version=2016-11-15", &rs);
		expect_error(&rs, 503, "RequestLimitExceeded");
		resp_free(&rs);
	}
	call(cs, "Action=DescribeInstances&Version=2016-11-15", &rs);
	assert_int_equal(rs.r.status, 200);
	resp_free(&rs);

	/* a dropped connection: nothing done, nothing sent */
	control(cs, "POST", "/_sim/fault", "{\"kind\": \"drop\", \"action\": \"RunInstances\"}", &cr);
	gb_cs_response_free(&cr);
	call(cs, RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=1", &rs);
	assert_true(rs.r.close);
	resp_free(&rs);
	(void)gb_sim_instances(cs->sim, &n);
	assert_int_equal(n, 0);
	/* a lost response: done, but nothing sent */
	control(cs, "POST", "/_sim/fault", "{\"kind\": \"lost_response\"}", &cr);
	gb_cs_response_free(&cr);
	call(cs, RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=1", &rs);
	assert_true(rs.r.close);
	resp_free(&rs);
	(void)gb_sim_instances(cs->sim, &n);
	assert_int_equal(n, 1);
	/* latency only, and an error with the caller's own status */
	control(cs, "POST", "/_sim/fault", "{\"latency\": 2.5}", &cr);
	gb_cs_response_free(&cr);
	control(cs, "POST", "/_sim/fault",
		"{\"code\": \"InternalError\", \"status\": 502, \"message\": \"bad gateway\"}", &cr);
	gb_cs_response_free(&cr);
	call(cs, "Action=DescribeAvailabilityZones&Version=2016-11-15", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_true(cs->last_latency == 2.5);
	resp_free(&rs);
	call(cs, "Action=DescribeAvailabilityZones&Version=2016-11-15", &rs);
	expect_error(&rs, 502, "InternalError");
	assert_string_equal(xget(&rs, "/Response/Errors/Error/Message"), "bad gateway");
	resp_free(&rs);
	/* clear */
	control(cs, "POST", "/_sim/fault", "{\"code\": \"Unavailable\", \"count\": 9}", &cr);
	gb_cs_response_free(&cr);
	control(cs, "DELETE", "/_sim/fault", NULL, &cr);
	assert_int_equal(cr.status, 200);
	gb_cs_response_free(&cr);
	call(cs, "Action=DescribeAvailabilityZones&Version=2016-11-15", &rs);
	assert_int_equal(rs.r.status, 200);
	resp_free(&rs);
}

static void test_control(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct gb_cs_response cr;
	struct resp rs;

	control(cs, "GET", "/_sim/health", NULL, &cr);
	assert_int_equal(cr.status, 200);
	gb_cs_response_free(&cr);
	/* make room for 3 more g5.xlarge in ap-south-1a, then launch them */
	control(cs, "POST", "/_sim/capacity",
		"{\"az\": \"ap-south-1a\", \"instance_type\": \"g5.xlarge\", \"available\": 3}", &cr);
	assert_int_equal(cr.status, 200);
	gb_cs_response_free(&cr);
	call(cs, RUN "&InstanceType=g5.xlarge&MinCount=3&MaxCount=9&SubnetId=subnet-a", &rs);
	assert_int_equal(xcount(&rs, "//e:instancesSet/e:item"), 3);
	resp_free(&rs);
	control(cs, "GET", "/_sim/state", NULL, &cr);
	assert_int_equal(cr.status, 200);
	assert_non_null(strstr(cr.body.data,
		"{\"available\":0,\"instance_type\":\"g5.xlarge\",\"total\":3,\"used\":3}"));
	assert_non_null(strstr(cr.body.data, "\"usage\":{\"g_vt_vcpus\":12,\"instances\":3,\"p_vcpus\":0}"));
	assert_non_null(strstr(cr.body.data, "\"quotas\":{\"g_vt_vcpus\":24,\"instances\":5,\"p_vcpus\":null}"));
	assert_non_null(strstr(cr.body.data, "\"private_ip\":\"127.60.1.6\""));
	assert_non_null(strstr(cr.body.data, "\"state\":\"pending\""));
	gb_cs_response_free(&cr);
	/* the driven clock */
	control(cs, "POST", "/_sim/time", "{\"advance\": 1.5}", &cr);
	assert_int_equal(cr.status, 200);
	assert_string_equal(cr.body.data, "{\"time\":1.5}\n");
	gb_cs_response_free(&cr);
	control(cs, "GET", "/_sim/state", NULL, &cr);
	assert_non_null(strstr(cr.body.data, "\"state\":\"running\""));
	assert_null(strstr(cr.body.data, "\"state\":\"pending\""));
	gb_cs_response_free(&cr);
	/* bad requests */
	control(cs, "POST", "/_sim/capacity", "{\"az\": \"ap-south-1a\"", &cr);
	assert_int_equal(cr.status, 400);
	gb_cs_response_free(&cr);
	control(cs, "POST", "/_sim/capacity",
		"{\"az\": \"ap-south-1z\", \"instance_type\": \"g5.xlarge\", \"total\": 1}", &cr);
	assert_int_equal(cr.status, 404);
	gb_cs_response_free(&cr);
	control(cs, "POST", "/_sim/capacity",
		"{\"az\": \"ap-south-1a\", \"instance_type\": \"g5.xlarge\", \"total\": 1, \"color\": 1}", &cr);
	assert_int_equal(cr.status, 400);
	gb_cs_response_free(&cr);
	control(cs, "POST", "/_sim/fault", "{\"kind\": \"explode\"}", &cr);
	assert_int_equal(cr.status, 400);
	gb_cs_response_free(&cr);
	control(cs, "POST", "/_sim/time", "{\"advance\": -1}", &cr);
	assert_int_equal(cr.status, 400);
	gb_cs_response_free(&cr);
	control(cs, "PUT", "/_sim/state", NULL, &cr);
	assert_int_equal(cr.status, 405);
	gb_cs_response_free(&cr);
	control(cs, "GET", "/_sim/nothing", NULL, &cr);
	assert_int_equal(cr.status, 404);
	gb_cs_response_free(&cr);
}

/*
 * POST /_sim/consistency over the wire: a fresh id is InvalidInstanceID.
 * NotFound to DescribeInstances, CreateTags and TerminateInstances until
 * "invisible" has passed; DescribeInstances then lists it without
 * privateIpAddress and privateDnsName until "no_private_ip" has.
 */
static void test_consistency_api(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct gb_cs_response cr;
	char body[256], id[64], ip[32], want[128];
	struct resp rs;

	control(cs, "GET", "/_sim/consistency", NULL, &cr);
	assert_string_equal(cr.body.data, "{\"invisible\":0.0,\"no_private_ip\":0.0}\n");
	gb_cs_response_free(&cr);
	control(cs, "POST", "/_sim/consistency", "{\"invisible\": 2, \"no_private_ip\": 3.5}", &cr);
	assert_int_equal(cr.status, 200);
	assert_string_equal(cr.body.data, "{\"invisible\":2.0,\"no_private_ip\":3.5}\n");
	gb_cs_response_free(&cr);
	call(cs, RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=1&SubnetId=subnet-a", &rs);
	assert_int_equal(rs.r.status, 200);
	snprintf(id, sizeof(id), "%s", xget(&rs, "//e:item[1]/e:instanceId"));
	snprintf(ip, sizeof(ip), "%s", xget(&rs, "//e:item[1]/e:privateIpAddress"));
	assert_true(ip[0] != '\0');	/* RunInstances answers with the address */
	resp_free(&rs);
	snprintf(want, sizeof(want), "The instance ID '%s' does not exist", id);
	snprintf(body, sizeof(body), "Action=DescribeInstances&Version=2016-11-15&InstanceId.1=%s", id);
	call(cs, body, &rs);
	expect_error(&rs, 400, "InvalidInstanceID.NotFound");
	assert_string_equal(xget(&rs, "/Response/Errors/Error/Message"), want);
	resp_free(&rs);
	snprintf(body, sizeof(body), "Action=CreateTags&Version=2016-11-15&ResourceId.1=%s&Tag.1.Key=Name&Tag.1.Value=n", id);
	call(cs, body, &rs);
	expect_error(&rs, 400, "InvalidInstanceID.NotFound");
	resp_free(&rs);
	call(cs, "Action=DescribeInstances&Version=2016-11-15", &rs);
	assert_int_equal(xcount(&rs, "//e:reservationSet/e:item"), 0);
	resp_free(&rs);
	cs->offset += 2;	/* the driven clock: visible, no address yet */
	snprintf(body, sizeof(body), "Action=DescribeInstances&Version=2016-11-15&InstanceId.1=%s", id);
	call(cs, body, &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, "//e:instancesSet/e:item/e:instanceId"), id);
	assert_int_equal(xcount(&rs, "//e:instancesSet/e:item/e:privateIpAddress"), 0);
	assert_string_equal(xget(&rs, "//e:instancesSet/e:item/e:privateDnsName"), "");
	resp_free(&rs);
	cs->offset += 1.5;
	call(cs, body, &rs);
	assert_string_equal(xget(&rs, "//e:instancesSet/e:item/e:privateIpAddress"), ip);
	resp_free(&rs);
	snprintf(body, sizeof(body), "Action=TerminateInstances&Version=2016-11-15&InstanceId.1=%s", id);
	call(cs, body, &rs);
	assert_int_equal(rs.r.status, 200);
	resp_free(&rs);
	/* bad settings: named, nothing changed */
	control(cs, "POST", "/_sim/consistency", "{\"invisible\": -1}", &cr);
	assert_int_equal(cr.status, 400);
	assert_non_null(strstr(cr.body.data, "invisible and no_private_ip are seconds"));
	gb_cs_response_free(&cr);
	control(cs, "POST", "/_sim/consistency", "{\"hidden\": 1}", &cr);
	assert_int_equal(cr.status, 400);
	gb_cs_response_free(&cr);
	control(cs, "GET", "/_sim/state", NULL, &cr);
	assert_non_null(strstr(cr.body.data, "\"consistency\":{\"invisible\":2.0,\"no_private_ip\":3.5}"));
	gb_cs_response_free(&cr);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_run_instances_xml),
		T(test_errors_and_statuses),
		T(test_ice_message),
		T(test_auth),
		T(test_auth_tampered_and_unknown_key),
		T(test_idempotency_api),
		T(test_describe_terminate_xml),
		T(test_offerings_azs_tags_xml),
		T(test_dry_run_run_instances),
		T(test_dry_run_errors),
		T(test_dry_run_unauthorized),
		T(test_dry_run_other_actions),
		T(test_schema_refusals),
		T(test_schema_accepts),
		T(test_schema_dump),
		T(test_spot_launch),
		T(test_spot_refusals),
		T(test_spot_release),
		T(test_instance_members),
		T(test_imds_metadata_options),
		T(test_injected_faults),
		T(test_control),
		T(test_consistency_api),
	};
	int rc;

	gb_log_open("test_cloudsim_api", &(struct gb_log_opts){ .level = GB_LOG_ERROR }, NULL);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	xmlCleanupParser();
	return rc;
}
