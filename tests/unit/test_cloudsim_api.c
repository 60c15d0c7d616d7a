/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_cloudsim_api.c - the simulator's EC2 Query API and control interface
 * without HTTP: requests signed with libcloud's signer go through
 * gb_cloudsim_handle(); responses are parsed with libxml2 (well-formed, the
 * element names of tests/data/ec2) and checked for EC2's codes and statuses.
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
#include "gb_log.h"
#include "gb_sigv4.h"

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
	"    quotas: {g_vt_vcpus: 24, instances: 5}\n"
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
		{ "Action=DescribeInstances&Filter.1.Name=color&Filter.1.Value.1=red", 400,
		  "InvalidParameterValue" },
		{ "Action=DescribeInstances&InstanceId.1=i-0123456789abcdef0", 400,
		  "InvalidInstanceID.NotFound" },
		{ "Action=DescribeInstances&NextToken=nope", 400, "InvalidNextToken" },
		{ "Action=TerminateInstances&InstanceId.1=i-xyz", 400, "InvalidInstanceID.Malformed" },
		{ "Action=DescribeInstanceTypeOfferings&LocationType=planet", 400,
		  "InvalidParameterValue" },
		{ "Action=DescribeAvailabilityZones&ZoneName.1=ap-south-1q", 400,
		  "InvalidParameterValue" },
		{ "Action=RebootInstances&InstanceId.1=i-0123456789abcdef0", 400, "InvalidAction" },
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
	call(cs, "Action=DescribeInstances", &rs);
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
	call(cs, "Action=DescribeInstances&MaxResults=5", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_int_equal(xcount(&rs, "//e:reservationSet/e:item"), 2);
	assert_int_equal(xcount(&rs, "//e:reservationSet/e:item[1]/e:instancesSet/e:item"), 2);
	assert_int_equal(xcount(&rs, "/e:DescribeInstancesResponse/e:nextToken"), 0);
	resp_free(&rs);
	snprintf(body, sizeof(body), "Action=TerminateInstances&InstanceId.1=%s", id);
	call(cs, body, &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, "//e:instancesSet/e:item/e:instanceId"), id);
	assert_string_equal(xget(&rs, "//e:item/e:currentState/e:code"), "32");
	assert_string_equal(xget(&rs, "//e:item/e:currentState/e:name"), "shutting-down");
	assert_string_equal(xget(&rs, "//e:item/e:previousState/e:name"), "pending");
	resp_free(&rs);
	cs->offset += 5;	/* the driven clock */
	snprintf(body, sizeof(body), "Action=DescribeInstances&InstanceId.1=%s", id);
	call(cs, body, &rs);
	assert_string_equal(xget(&rs, "//e:instanceState/e:name"), "terminated");
	assert_string_equal(xget(&rs, "//e:stateReason/e:code"), "Client.UserInitiatedShutdown");
	resp_free(&rs);
}

static void test_offerings_azs_tags_xml(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct resp rs;

	call(cs, "Action=DescribeInstanceTypeOfferings&LocationType=availability-zone"
		 "&Filter.1.Name=instance-type&Filter.1.Value.1=g5.xlarge", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_int_equal(xcount(&rs, "//e:instanceTypeOfferingSet/e:item"), 2);
	assert_string_equal(xget(&rs, "//e:item[2]/e:location"), "ap-south-1b");
	assert_string_equal(xget(&rs, "//e:item[2]/e:locationType"), "availability-zone");
	resp_free(&rs);
	call(cs, "Action=DescribeInstanceTypeOfferings&Filter.1.Name=instance-type"
		 "&Filter.1.Value.1=p5.*", &rs);
	assert_int_equal(xcount(&rs, "//e:instanceTypeOfferingSet/e:item"), 0);
	assert_int_equal(xcount(&rs, "//e:instanceTypeOfferingSet"), 1);
	resp_free(&rs);
	call(cs, "Action=DescribeAvailabilityZones", &rs);
	assert_int_equal(xcount(&rs, "//e:availabilityZoneInfo/e:item"), 2);
	assert_string_equal(xget(&rs, "//e:item[1]/e:zoneState"), "available");
	assert_string_equal(xget(&rs, "//e:item[2]/e:zoneId"), "aps1-az2");
	assert_string_equal(xget(&rs, "//e:item[1]/e:regionName"), "ap-south-1");
	resp_free(&rs);
	call(cs, RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=1", &rs);
	{
		char body[256];

		snprintf(body, sizeof(body), "Action=CreateTags&ResourceId.1=%s&Tag.1.Key=Name"
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
		{ "Action=RunInstances&ImageId=ami-0000000000000000a&InstanceType=g5.xlarge"
		  "&MinCount=1&MaxCount=1&DryRun=true", 400, "InvalidAMIID.NotFound" },
		{ "Action=RunInstances&ImageId=image-1&InstanceType=g5.xlarge"
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
		{ "Action=DescribeAvailabilityZones&ZoneName.1=ap-south-1q&DryRun=true", 400,
		  "InvalidParameterValue" },
		{ "Action=DescribeInstances&MaxResults=5&DryRun=1", 400, "InvalidParameterValue" },
		{ "Action=DescribeInstances&Colour=red", 400, "UnknownParameter" },
		{ "Action=TerminateInstances&InstanceId.1=i-0123456789abcdef0&DryRun=true", 400,
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
	call(cs, "Action=DescribeInstances&DryRun=true", &rs);
	expect_error(&rs, 412, "DryRunOperation");
	resp_free(&rs);
	call(cs, "Action=DescribeAvailabilityZones&DryRun=true", &rs);
	expect_error(&rs, 412, "DryRunOperation");
	resp_free(&rs);
	call(cs, "Action=DescribeInstanceTypeOfferings&DryRun=true", &rs);
	expect_error(&rs, 412, "DryRunOperation");
	resp_free(&rs);
	snprintf(body, sizeof(body), "Action=CreateTags&ResourceId.1=%s&Tag.1.Key=Name"
		 "&Tag.1.Value=x&DryRun=true", id);
	call(cs, body, &rs);
	expect_error(&rs, 412, "DryRunOperation");
	resp_free(&rs);
	snprintf(body, sizeof(body), "Action=TerminateInstances&InstanceId.1=%s&DryRun=true", id);
	call(cs, body, &rs);
	expect_error(&rs, 412, "DryRunOperation");
	resp_free(&rs);
	snprintf(body, sizeof(body), "Action=DescribeInstances&InstanceId.1=%s&DryRun=false", id);
	call(cs, body, &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, "//e:instanceState/e:name"), "pending");
	assert_int_equal(xcount(&rs, "//e:instancesSet/e:item/e:tagSet"), 0);
	resp_free(&rs);
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
		call(cs, "Action=DescribeInstances", &rs);
		expect_error(&rs, 503, "RequestLimitExceeded");
		resp_free(&rs);
	}
	call(cs, "Action=DescribeInstances", &rs);
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
	call(cs, "Action=DescribeAvailabilityZones", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_true(cs->last_latency == 2.5);
	resp_free(&rs);
	call(cs, "Action=DescribeAvailabilityZones", &rs);
	expect_error(&rs, 502, "InternalError");
	assert_string_equal(xget(&rs, "/Response/Errors/Error/Message"), "bad gateway");
	resp_free(&rs);
	/* clear */
	control(cs, "POST", "/_sim/fault", "{\"code\": \"Unavailable\", \"count\": 9}", &cr);
	gb_cs_response_free(&cr);
	control(cs, "DELETE", "/_sim/fault", NULL, &cr);
	assert_int_equal(cr.status, 200);
	gb_cs_response_free(&cr);
	call(cs, "Action=DescribeAvailabilityZones", &rs);
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
	snprintf(body, sizeof(body), "Action=DescribeInstances&InstanceId.1=%s", id);
	call(cs, body, &rs);
	expect_error(&rs, 400, "InvalidInstanceID.NotFound");
	assert_string_equal(xget(&rs, "/Response/Errors/Error/Message"), want);
	resp_free(&rs);
	snprintf(body, sizeof(body), "Action=CreateTags&ResourceId.1=%s&Tag.1.Key=Name&Tag.1.Value=n", id);
	call(cs, body, &rs);
	expect_error(&rs, 400, "InvalidInstanceID.NotFound");
	resp_free(&rs);
	call(cs, "Action=DescribeInstances", &rs);
	assert_int_equal(xcount(&rs, "//e:reservationSet/e:item"), 0);
	resp_free(&rs);
	cs->offset += 2;	/* the driven clock: visible, no address yet */
	snprintf(body, sizeof(body), "Action=DescribeInstances&InstanceId.1=%s", id);
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
	snprintf(body, sizeof(body), "Action=TerminateInstances&InstanceId.1=%s", id);
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
