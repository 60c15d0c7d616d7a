/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_cloudsim_api.c - the simulator's EC2 Query API and control interface
 * without HTTP: requests signed with libcloud's signer go through
 * gb_cloudsim_handle(); responses are parsed with libxml2 (well-formed, the
 * element names of tests/data/ec2) and checked for EC2's codes and statuses;
 * the parameter schema's refusals, Spot launches, and the instance members
 * EC2 always returns (also through libcloud's own parser).  STS too: the
 * sessions AssumeRole and AssumeRoleWithWebIdentity issue, EC2 and STS
 * taking them with their token until they expire, external ids, duration
 * limits and role chaining, STS's parameter checks, routing by the scope's
 * service, GET /_sim/sts.
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
#include <jansson.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include "cloudsim.h"
#include "gb_conf.h"
#include "gb_crypto.h"
#include "gb_ec2_xml.h"
#include "gb_log.h"
#include "gb_sigv4.h"
#include "schema.h"

#define WALL 1795000000.0	/* a fixed "now" for X-Amz-Date checks */
#define KEY "AKIDEXAMPLE"
#define SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define ROLE "arn:aws:iam::123456789012:role/gpuburst"
#define ROLE_PARTNER "arn:aws:iam::123456789012:role/gpuburst-partner"
#define ROLE_WEB "arn:aws:iam::123456789012:role/gpuburst-web"
#define WEB_TOKEN "eyJhbGciOiJSUzI1NiJ9.gpuburst-test-token.c2lnbmF0dXJl"
#define EC2_NS "http://ec2.amazonaws.com/doc/2016-11-15/"
#define STS_NS "https://sts.amazonaws.com/doc/2011-06-15/"

static const char scenario[] =
	"seed: 21\n"
	"timing: {pending: 1s, shutting_down: 1s}\n"
	"roles:\n"
	"  - arn: " ROLE "\n"
	"    max_session_duration: 7200\n"
	"  - arn: " ROLE_PARTNER "\n"
	"    external_id: site-42\n"
	"  - arn: " ROLE_WEB "\n"
	"    web_identity_tokens: [" WEB_TOKEN "]\n"
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

/* Who signs a request, and how. */
struct signer {
	const char *akid, *secret;
	const char *token;	/* X-Amz-Security-Token sent and signed; NULL: none */
	const char *region, *service;
	double skew;		/* moves X-Amz-Date */
	bool unsigned_req;	/* send no Authorization */
};

/* Sign [body] as the AWS CLI would and serve it. */
static void call_as(struct gb_cloudsim *cs, const struct signer *sg, const char *body,
		    struct resp *out)
{
	struct gb_sigv4_header sh[4] = {
		{ "Content-Type", "application/x-www-form-urlencoded; charset=utf-8" },
		{ "Host", "127.0.0.1:8773" },
		{ "X-Amz-Date", NULL },
		{ "X-Amz-Security-Token", sg->token },
	};
	size_t nsh = sg->token ? 4 : 3;
	struct gb_cs_header h[5];
	struct gb_sigv4_creds cr = { sg->akid, sg->secret, NULL };
	struct gb_sigv4_request sr = { 0 };
	struct gb_sigv4_result res = { 0 };
	struct gb_cs_request req = { 0 };
	char date[GB_SIGV4_AMZ_DATE_LEN + 1];

	memset(out, 0, sizeof(*out));
	sh[2].value = gb_sigv4_amz_date((time_t)(WALL + sg->skew), date);
	sr.method = "POST";
	sr.path = "/";
	sr.headers = sh;
	sr.n_headers = nsh;
	sr.payload = body;
	sr.payload_len = strlen(body);
	assert_int_equal(gb_sigv4_sign(&sr, &cr, sg->region, sg->service, 0, &res, NULL),
			 GB_E_OK);
	for (size_t i = 0; i < nsh; i++) {
		h[i].name = sh[i].name;
		h[i].value = sh[i].value;
	}
	h[nsh].name = "Authorization";
	h[nsh].value = res.authorization;
	req.method = "POST";
	req.path = "/";
	req.headers = h;
	req.nheaders = sg->unsigned_req ? nsh : nsh + 1;
	req.body = body;
	req.body_len = strlen(body);
	gb_cloudsim_handle(cs, &req, &out->r);
	gb_sigv4_result_free(&res);
	if (!out->r.close && out->r.body.len && strcmp(out->r.content_type, "application/json"))
		out->doc = xmlReadMemory(out->r.body.data, (int)out->r.body.len, "r.xml",
					 NULL, XML_PARSE_NONET | XML_PARSE_NOERROR);
}

/* The scenario's key signs [body] for EC2; [skew] moves X-Amz-Date. */
static void call_ex(struct gb_cloudsim *cs, const char *region, const char *secret,
		    const char *body, double skew, bool sign, struct resp *out)
{
	struct signer sg = { KEY, secret, NULL, region, "ec2", skew, !sign };

	call_as(cs, &sg, body, out);
}

static void call(struct gb_cloudsim *cs, const char *body, struct resp *out)
{
	call_ex(cs, "ap-south-1", SECRET, body, 0, true, out);
}

/* The text of the first node matching [xpath] (e: EC2's namespace, s: STS's), or "". */
static const char *xget(struct resp *rs, const char *xpath)
{
	static char buf[1024];
	xmlXPathContextPtr ctx;
	xmlXPathObjectPtr o;

	buf[0] = '\0';
	assert_non_null(rs->doc);
	ctx = xmlXPathNewContext(rs->doc);
	xmlXPathRegisterNs(ctx, BAD_CAST "e", BAD_CAST EC2_NS);
	xmlXPathRegisterNs(ctx, BAD_CAST "s", BAD_CAST STS_NS);
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
	xmlXPathRegisterNs(ctx, BAD_CAST "e", BAD_CAST EC2_NS);
	xmlXPathRegisterNs(ctx, BAD_CAST "s", BAD_CAST STS_NS);
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

/* GET [path] from [peer] with a token; RET the status, the body in [out]. */
static int imds_get(struct gb_cloudsim *cs, const char *path, const char *peer,
		    char *out, size_t n)
{
	struct gb_cs_header h[1] = { { "X-aws-ec2-metadata-token", "gbsim-imds-00" } };
	struct gb_cs_request req = { 0 };
	struct gb_cs_response r;
	int status;

	memset(&r, 0, sizeof(r));
	req.method = "GET";
	req.path = path;
	req.headers = h;
	req.nheaders = 1;
	req.peer = peer;
	gb_cloudsim_handle(cs, &req, &r);
	status = r.status;
	snprintf(out, n, "%.*s", (int)r.body.len, r.body.len ? r.body.data : "");
	gb_cs_response_free(&r);
	return status;
}

/*
 * POST /_sim/interrupt on a frozen clock: the instance-action's time is
 * exact, the instance stays running until then and is terminated by the
 * clock reaching it (Server.SpotInstanceTermination at that time); rebalance
 * and the role credentials' times too.
 */
static void test_imds_interrupt(void **state)
{
	static const char ia[] = "/latest/meta-data/spot/instance-action";
	static const char rb[] = "/latest/meta-data/events/recommendations/rebalance";
	static const char cr_path[] = "/latest/meta-data/iam/security-credentials/gpuburst-node";
	struct gb_cloudsim *cs = *state;
	char body[512], ip[2][32], id[2][32], out[4096], akid[32];
	struct gb_cs_response cr;
	struct resp rs;

	call(cs, SPOT_RUN "&MinCount=1&MaxCount=1&IamInstanceProfile.Name=gpuburst-node", &rs);
	assert_int_equal(rs.r.status, 200);
	snprintf(ip[0], sizeof(ip[0]), "%s", xget(&rs, "//e:item[1]/e:privateIpAddress"));
	snprintf(id[0], sizeof(id[0]), "%s", xget(&rs, "//e:item[1]/e:instanceId"));
	resp_free(&rs);
	call(cs, RUN1 "&IamInstanceProfile.Name=gpuburst-node", &rs);
	assert_int_equal(rs.r.status, 200);
	snprintf(ip[1], sizeof(ip[1]), "%s", xget(&rs, "//e:item[1]/e:privateIpAddress"));
	snprintf(id[1], sizeof(id[1]), "%s", xget(&rs, "//e:item[1]/e:instanceId"));
	resp_free(&rs);
	cs->offset += 2;	/* running */

	/* the role's credentials: issued now, six hours, the same key until
	 * fewer than 15 minutes are left */
	assert_int_equal(imds_get(cs, cr_path, ip[0], out, sizeof(out)), 200);
	assert_non_null(strstr(out, "\"LastUpdated\": \"2026-11-18T11:06:42Z\""));
	assert_non_null(strstr(out, "\"Expiration\": \"2026-11-18T17:06:42Z\""));
	snprintf(akid, sizeof(akid), "%.20s", strstr(out, "ASIA"));
	assert_int_equal(imds_get(cs, cr_path, ip[0], out, sizeof(out)), 200);
	assert_non_null(strstr(out, akid));
	assert_int_equal(imds_get(cs, cr_path, ip[1], out, sizeof(out)), 200);
	assert_null(strstr(out, akid));		/* a session per instance */
	snprintf(akid, sizeof(akid), "%.20s", strstr(out, "ASIA"));

	assert_int_equal(imds_get(cs, ia, ip[0], out, sizeof(out)), 404);
	snprintf(body, sizeof(body), "{\"instance\": \"%s\", \"kind\": \"spot\", \"in\": 30}", id[0]);
	control(cs, "POST", "/_sim/interrupt", body, &cr);
	assert_int_equal(cr.status, 200);
	assert_non_null(strstr(cr.body.data, "\"time\":\"2026-11-18T11:07:12Z\""));
	gb_cs_response_free(&cr);
	assert_int_equal(imds_get(cs, ia, ip[0], out, sizeof(out)), 200);
	assert_string_equal(out, "{\"action\": \"terminate\", \"time\": \"2026-11-18T11:07:12Z\"}");
	snprintf(body, sizeof(body), "{\"instance\": \"%s\", \"kind\": \"spot\"}", id[1]);
	control(cs, "POST", "/_sim/interrupt", body, &cr);
	assert_int_equal(cr.status, 400);
	gb_cs_response_free(&cr);
	/* a rebalance recommendation 10 s out: 404 until then */
	snprintf(body, sizeof(body), "{\"instance\": \"%s\", \"kind\": \"rebalance\", \"in\": 10}",
		 id[1]);
	control(cs, "POST", "/_sim/interrupt", body, &cr);
	assert_int_equal(cr.status, 200);
	gb_cs_response_free(&cr);
	assert_int_equal(imds_get(cs, rb, ip[1], out, sizeof(out)), 404);

	cs->offset += 29.5;
	assert_int_equal(imds_get(cs, rb, ip[1], out, sizeof(out)), 200);
	assert_string_equal(out, "{\"noticeTime\": \"2026-11-18T11:06:52Z\"}");
	snprintf(body, sizeof(body), "Action=DescribeInstances" V "&InstanceId.1=%s", id[0]);
	call(cs, body, &rs);
	assert_string_equal(xget(&rs, "//e:item[1]/e:instanceState/e:name"), "running");
	resp_free(&rs);
	cs->offset += 1;	/* past the notice's time, within shutting_down */
	call(cs, body, &rs);
	assert_string_equal(xget(&rs, "//e:item[1]/e:instanceState/e:name"), "shutting-down");
	assert_string_equal(xget(&rs, "//e:item[1]/e:stateReason/e:code"),
			    "Server.SpotInstanceTermination");
	assert_string_equal(xget(&rs, "//e:item[1]/e:stateReason/e:message"),
			    "Server.SpotInstanceTermination: Spot instance termination");
	assert_string_equal(xget(&rs, "//e:item[1]/e:reason"),
			    "Service initiated (2026-11-18 11:07:12 GMT)");
	resp_free(&rs);
	assert_int_equal(imds_get(cs, ia, ip[0], out, sizeof(out)), 404);	/* no longer an instance */
	cs->offset += 1;
	call(cs, body, &rs);
	assert_string_equal(xget(&rs, "//e:item[1]/e:instanceState/e:name"), "terminated");
	resp_free(&rs);
	control(cs, "GET", "/_sim/state", NULL, &cr);
	assert_non_null(strstr(cr.body.data, "\"spot_pools\":[{\"available\":2,"));
	gb_cs_response_free(&cr);

	snprintf(body, sizeof(body), "{\"instance\": \"%s\", \"kind\": \"rebalance\"}", id[0]);
	control(cs, "POST", "/_sim/interrupt", body, &cr);
	assert_int_equal(cr.status, 404);	/* terminated */
	gb_cs_response_free(&cr);

	/* the on-demand instance's credentials (issued at +2 s): the same key
	 * with 15 minutes left, a new one below */
	cs->offset = 2 + 21600 - 900;
	assert_int_equal(imds_get(cs, cr_path, ip[1], out, sizeof(out)), 200);
	assert_non_null(strstr(out, akid));
	cs->offset += 1;
	assert_int_equal(imds_get(cs, cr_path, ip[1], out, sizeof(out)), 200);
	assert_null(strstr(out, akid));
	assert_non_null(strstr(out, "\"Expiration\": \"2026-11-18T22:51:43Z\""));
	gb_cs_response_free(&cr);
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

/*****************************************************************************
 *  STS
 *****************************************************************************/

#define STS_V "Version=2011-06-15"
#define AR "/s:AssumeRoleResponse/s:AssumeRoleResult"
#define ARW "/s:AssumeRoleWithWebIdentityResponse/s:AssumeRoleWithWebIdentityResult"
#define GCI "/s:GetCallerIdentityResponse/s:GetCallerIdentityResult"
#define CALLER "Action=GetCallerIdentity&" STS_V
#define DESCRIBE "Action=DescribeInstances&Version=2016-11-15"
#define WEB "Action=AssumeRoleWithWebIdentity&" STS_V "&RoleSessionName=web"

/* Temporary credentials and the role user of an STS answer. */
struct sts_creds {
	char akid[32];
	char secret[64];
	char token[GB_CS_SESSION_TOKEN_MAX];
	char expiration[32];
	char role_id[128];
	char arn[256];
};

/* The scenario's key signs [body] for STS (in the scenario's region). */
static void sts_call(struct gb_cloudsim *cs, const char *body, struct resp *out)
{
	struct signer sg = { KEY, SECRET, NULL, "ap-south-1", "sts", 0, false };

	call_as(cs, &sg, body, out);
}

/* Session [c] signs [body] for [service], its token with it. */
static void session_call(struct gb_cloudsim *cs, const struct sts_creds *c,
			 const char *service, const char *body, struct resp *out)
{
	struct signer sg = { c->akid, c->secret, c->token, "ap-south-1", service, 0, false };

	call_as(cs, &sg, body, out);
}

/* Unsigned, as the AWS CLI sends with --no-sign-request. */
static void anon_call(struct gb_cloudsim *cs, const char *body, struct resp *out)
{
	struct signer sg = { KEY, SECRET, NULL, "ap-south-1", "sts", 0, true };

	call_as(cs, &sg, body, out);
}

/*
 * An STS error: [status], <ErrorResponse><Error> with Type Sender and
 * [code], the RequestId.  RET BORROWED the message (until the next xget).
 */
static const char *expect_sts_error(struct resp *rs, int status, const char *code)
{
	if (rs->r.status != status || !rs->doc ||
	    strcmp(xget(rs, "/s:ErrorResponse/s:Error/s:Code"), code))
		fail_msg("want %d %s, got %d: %s", status, code, rs->r.status,
			 rs->r.body.data ? rs->r.body.data : "");
	assert_string_equal(rs->r.content_type, "text/xml");
	assert_string_equal(xget(rs, "/s:ErrorResponse/s:Error/s:Type"), "Sender");
	assert_string_equal(xget(rs, "/s:ErrorResponse/s:RequestId"), rs->r.request_id);
	return xget(rs, "/s:ErrorResponse/s:Error/s:Message");
}

/* The credentials of a successful answer whose result element is [result]. */
static void take_creds(struct resp *rs, const char *result, struct sts_creds *c)
{
	static const struct {
		const char *member;
		size_t off, len;
	} m[] = {
		{ "Credentials/s:AccessKeyId", offsetof(struct sts_creds, akid), 32 },
		{ "Credentials/s:SecretAccessKey", offsetof(struct sts_creds, secret), 64 },
		{ "Credentials/s:SessionToken", offsetof(struct sts_creds, token),
		  GB_CS_SESSION_TOKEN_MAX },
		{ "Credentials/s:Expiration", offsetof(struct sts_creds, expiration), 32 },
		{ "AssumedRoleUser/s:AssumedRoleId", offsetof(struct sts_creds, role_id), 128 },
		{ "AssumedRoleUser/s:Arn", offsetof(struct sts_creds, arn), 256 },
	};
	char path[256];

	if (rs->r.status != 200 || !rs->doc)
		fail_msg("want 200, got %d: %s", rs->r.status,
			 rs->r.body.data ? rs->r.body.data : "");
	assert_string_equal(rs->r.content_type, "text/xml");
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		snprintf(path, sizeof(path), "%s/s:%s", result, m[i].member);
		snprintf((char *)c + m[i].off, m[i].len, "%s", xget(rs, path));
	}
	/* an ASIA key of 20 (base32) characters, a 40-character secret, a token */
	assert_int_equal(strlen(c->akid), 20);
	assert_true(gb_str_has_prefix(c->akid, "ASIA"));
	assert_int_equal(strspn(c->akid + 4, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"), 16);
	assert_int_equal(strlen(c->secret), 40);
	assert_true(strlen(c->token) >= 100);
	/* the role's unique id (AROA + 17) and the session name */
	assert_true(gb_str_has_prefix(c->role_id, "AROA"));
	assert_int_equal(strcspn(c->role_id, ":"), 21);
	assert_true(gb_str_has_prefix(c->arn, "arn:aws:sts::123456789012:assumed-role/"));
	assert_string_equal(strchr(c->role_id, ':') + 1, strrchr(c->arn, '/') + 1);
	snprintf(path, sizeof(path), "%.*sResponse/s:ResponseMetadata/s:RequestId",
		 (int)(strstr(result, "Response/") - result), result);
	assert_string_equal(xget(rs, path), rs->r.request_id);
}

/* AssumeRole with [params], signed by the scenario's key: the session. */
static void assume(struct gb_cloudsim *cs, const char *params, struct sts_creds *c)
{
	char body[1024];
	struct resp rs;

	snprintf(body, sizeof(body), "Action=AssumeRole&" STS_V "&%s", params);
	sts_call(cs, body, &rs);
	take_creds(&rs, AR, c);
	resp_free(&rs);
}

/* RET NEW the JSON of GET /_sim/sts. */
static json_t *sts_state(struct gb_cloudsim *cs)
{
	struct gb_cs_response cr;
	json_error_t je;
	json_t *j;

	control(cs, "GET", "/_sim/sts", NULL, &cr);
	assert_int_equal(cr.status, 200);
	j = json_loadb(cr.body.data, cr.body.len, 0, &je);
	if (!j)
		fail_msg("/_sim/sts: %s: %s", je.text, cr.body.data);
	gb_cs_response_free(&cr);
	return j;
}

/* RET BORROWED the session [akid] of a /_sim/sts document. */
static json_t *json_session(json_t *j, const char *akid)
{
	json_t *x;
	size_t i;

	json_array_foreach(json_object_get(j, "sessions"), i, x) {
		if (strcmp(json_string_value(json_object_get(x, "access_key_id")), akid) == 0)
			return x;
	}
	fail_msg("no session %s in /_sim/sts", akid);
	return NULL;
}

static json_int_t json_int_at(json_t *j, const char *obj, const char *key)
{
	json_t *v = json_object_get(json_object_get(j, obj), key);

	if (!json_is_integer(v))
		fail_msg("/_sim/sts: %s.%s is no integer", obj, key);
	return json_integer_value(v);
}

/*
 * AssumeRole: the credentials STS issues; EC2 and STS take them with their
 * token only: none, another session's, or a long-term key with a token are
 * AuthFailure (EC2) and InvalidClientTokenId (STS).
 */
static void test_sts_assume_role(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct sts_creds s, t;
	struct signer sg;
	struct resp rs;

	assume(cs, "RoleArn=" ROLE "&RoleSessionName=gpuburst-it&DurationSeconds=7200", &s);
	assert_string_equal(s.expiration, "2026-11-18T13:06:40Z");	/* WALL + 7200 */
	assert_string_equal(s.arn, "arn:aws:sts::123456789012:assumed-role/gpuburst/gpuburst-it");
	/* DurationSeconds defaults to an hour; each session has keys of its own;
	 * a session name may use + = , . @ - _ */
	assume(cs, "RoleArn=" ROLE "&RoleSessionName=a%2Bb%3Dc%2Cd.e%40f-g_h", &t);
	assert_string_equal(t.expiration, "2026-11-18T12:06:40Z");	/* WALL + 3600 */
	assert_string_equal(t.arn, "arn:aws:sts::123456789012:assumed-role/gpuburst/a+b=c,d.e@f-g_h");
	assert_string_not_equal(t.akid, s.akid);
	assert_string_not_equal(t.secret, s.secret);
	assert_string_not_equal(t.token, s.token);
	/* the same role: the same role id, another session name */
	assert_memory_equal(t.role_id, s.role_id, 22);

	session_call(cs, &s, "ec2", DESCRIBE, &rs);
	assert_int_equal(rs.r.status, 200);
	assert_int_equal(xcount(&rs, "/e:DescribeInstancesResponse"), 1);
	resp_free(&rs);

	sg = (struct signer){ s.akid, s.secret, NULL, "ap-south-1", "ec2", 0, false };
	call_as(cs, &sg, DESCRIBE, &rs);		/* no token */
	expect_error(&rs, 401, "AuthFailure");
	resp_free(&rs);
	sg.token = t.token;				/* another session's */
	call_as(cs, &sg, DESCRIBE, &rs);
	expect_error(&rs, 401, "AuthFailure");
	resp_free(&rs);
	sg = (struct signer){ KEY, SECRET, s.token, "ap-south-1", "ec2", 0, false };
	call_as(cs, &sg, DESCRIBE, &rs);		/* a long-term key has none */
	expect_error(&rs, 401, "AuthFailure");
	resp_free(&rs);
	sg = (struct signer){ s.akid, t.secret, s.token, "ap-south-1", "ec2", 0, false };
	call_as(cs, &sg, DESCRIBE, &rs);		/* another secret */
	expect_error(&rs, 403, "SignatureDoesNotMatch");
	resp_free(&rs);

	sg = (struct signer){ s.akid, s.secret, t.token, "ap-south-1", "sts", 0, false };
	call_as(cs, &sg, CALLER, &rs);
	assert_string_equal(expect_sts_error(&rs, 403, "InvalidClientTokenId"),
			    "The security token included in the request is invalid.");
	resp_free(&rs);
	sg.token = NULL;
	call_as(cs, &sg, CALLER, &rs);
	expect_sts_error(&rs, 403, "InvalidClientTokenId");
	resp_free(&rs);
	sg = (struct signer){ "ASIAAAAAAAAAAAAAAAAA", s.secret, s.token, "ap-south-1", "sts",
			      0, false };
	call_as(cs, &sg, CALLER, &rs);			/* a key STS never issued */
	expect_sts_error(&rs, 403, "InvalidClientTokenId");
	resp_free(&rs);
	sg = (struct signer){ s.akid, t.secret, s.token, "ap-south-1", "sts", 0, false };
	call_as(cs, &sg, CALLER, &rs);
	expect_sts_error(&rs, 403, "SignatureDoesNotMatch");
	resp_free(&rs);
}

/*
 * The STS clock is the wall clock plus the offset: at its expiration a
 * session is RequestExpired (EC2) and ExpiredToken (STS); a day later it is
 * forgotten (when the next session is issued) and its key is unknown.
 */
static void test_sts_expiry(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct gb_cs_response cr;
	struct sts_creds s, t, u;
	struct resp rs;
	json_t *j, *x;

	assume(cs, "RoleArn=" ROLE "&RoleSessionName=short&DurationSeconds=900", &s);
	assert_string_equal(s.expiration, "2026-11-18T11:21:40Z");
	cs->offset = 899;
	session_call(cs, &s, "ec2", DESCRIBE, &rs);
	assert_int_equal(rs.r.status, 200);
	resp_free(&rs);
	session_call(cs, &s, "sts", CALLER, &rs);
	assert_int_equal(rs.r.status, 200);
	resp_free(&rs);
	cs->offset = 900;
	session_call(cs, &s, "ec2", DESCRIBE, &rs);
	expect_error(&rs, 400, "RequestExpired");
	assert_string_equal(xget(&rs, "/Response/Errors/Error/Message"), "Request has expired.");
	resp_free(&rs);
	session_call(cs, &s, "sts", CALLER, &rs);
	assert_string_equal(expect_sts_error(&rs, 400, "ExpiredToken"),
			    "The security token included in the request is expired");
	resp_free(&rs);
	session_call(cs, &s, "sts", "Action=AssumeRole&" STS_V "&RoleArn=" ROLE
		     "&RoleSessionName=again", &rs);
	expect_sts_error(&rs, 400, "ExpiredToken");
	resp_free(&rs);
	/* the long-term key still assumes, an hour from the STS clock's now */
	assume(cs, "RoleArn=" ROLE "&RoleSessionName=later", &t);
	assert_string_equal(t.expiration, "2026-11-18T12:21:40Z");	/* WALL + 900 + 3600 */
	j = sts_state(cs);
	assert_true(json_real_value(json_object_get(j, "now")) == WALL + 900);
	x = json_session(j, s.akid);
	assert_true(json_is_true(json_object_get(x, "expired")));
	assert_true(json_real_value(json_object_get(x, "expires_in")) == 0);
	x = json_session(j, t.akid);
	assert_true(json_is_false(json_object_get(x, "expired")));
	assert_true(json_real_value(json_object_get(x, "expires_in")) == 3600);
	json_decref(j);

	/* a day and a second after its expiration (POST /_sim/time moves the
	 * same offset) */
	control(cs, "POST", "/_sim/time", "{\"advance\": 86401}", &cr);
	assert_int_equal(cr.status, 200);
	gb_cs_response_free(&cr);
	assume(cs, "RoleArn=" ROLE "&RoleSessionName=next", &u);
	j = sts_state(cs);
	assert_int_equal(json_array_size(json_object_get(j, "sessions")), 2);
	json_session(j, t.akid);
	json_session(j, u.akid);
	json_decref(j);
	session_call(cs, &s, "sts", CALLER, &rs);
	expect_sts_error(&rs, 403, "InvalidClientTokenId");
	resp_free(&rs);
	session_call(cs, &s, "ec2", DESCRIBE, &rs);
	expect_error(&rs, 401, "AuthFailure");
	resp_free(&rs);
	session_call(cs, &t, "ec2", DESCRIBE, &rs);	/* expired, not yet forgotten */
	expect_error(&rs, 400, "RequestExpired");
	resp_free(&rs);
}

/* A role with an external id: AccessDenied without it or with another. */
static void test_sts_external_id(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct sts_creds s;
	struct resp rs;
	json_t *j;

	sts_call(cs, "Action=AssumeRole&" STS_V "&RoleArn=" ROLE_PARTNER "&RoleSessionName=pt", &rs);
	assert_string_equal(expect_sts_error(&rs, 403, "AccessDenied"),
			    "User: arn:aws:iam::123456789012:user/sim-AKIDEXAMPLE is not authorized to perform: sts:AssumeRole on resource: " ROLE_PARTNER);
	resp_free(&rs);
	sts_call(cs, "Action=AssumeRole&" STS_V "&RoleArn=" ROLE_PARTNER "&RoleSessionName=pt"
		 "&ExternalId=site-43", &rs);
	expect_sts_error(&rs, 403, "AccessDenied");
	resp_free(&rs);
	/* roles the scenario does not have */
	sts_call(cs, "Action=AssumeRole&" STS_V "&RoleArn=arn:aws:iam::123456789012:role/nobody"
		 "&RoleSessionName=pt", &rs);
	assert_non_null(strstr(expect_sts_error(&rs, 403, "AccessDenied"),
			       "on resource: arn:aws:iam::123456789012:role/nobody"));
	resp_free(&rs);
	sts_call(cs, "Action=AssumeRole&" STS_V "&RoleArn=arn:aws:iam::999999999999:role/gpuburst"
		 "&RoleSessionName=pt", &rs);
	expect_sts_error(&rs, 403, "AccessDenied");
	resp_free(&rs);
	assume(cs, "RoleArn=" ROLE_PARTNER "&RoleSessionName=pt&ExternalId=site-42", &s);
	assert_string_equal(s.arn, "arn:aws:sts::123456789012:assumed-role/gpuburst-partner/pt");
	/* a session refused names itself as the assumed role it is */
	session_call(cs, &s, "sts", "Action=AssumeRole&" STS_V
		     "&RoleArn=arn:aws:iam::123456789012:role/nobody&RoleSessionName=qq", &rs);
	assert_string_equal(expect_sts_error(&rs, 403, "AccessDenied"),
			    "User: arn:aws:sts::123456789012:assumed-role/gpuburst-partner/pt is not authorized to perform: sts:AssumeRole on resource: arn:aws:iam::123456789012:role/nobody");
	resp_free(&rs);
	/* refusals count nothing */
	j = sts_state(cs);
	assert_int_equal(json_int_at(j, "calls", "AssumeRole"), 1);
	assert_int_equal(json_int_at(j, "roles", ROLE_PARTNER), 1);
	assert_int_equal(json_int_at(j, "roles", ROLE), 0);
	assert_int_equal(json_array_size(json_object_get(j, "sessions")), 1);
	json_decref(j);
}

/* DurationSeconds: at most the role's maximum; for a session signer (role
 * chaining) at most an hour. */
static void test_sts_durations(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct sts_creds s, c, d, e;
	struct resp rs;
	json_t *j;

	sts_call(cs, "Action=AssumeRole&" STS_V "&RoleArn=" ROLE "&RoleSessionName=xy"
		 "&DurationSeconds=7201", &rs);
	assert_string_equal(expect_sts_error(&rs, 400, "ValidationError"),
			    "The requested DurationSeconds exceeds the MaxSessionDuration set for this role.");
	resp_free(&rs);
	/* the default maximum is an hour */
	sts_call(cs, "Action=AssumeRole&" STS_V "&RoleArn=" ROLE_PARTNER "&RoleSessionName=xy"
		 "&ExternalId=site-42&DurationSeconds=3601", &rs);
	assert_string_equal(expect_sts_error(&rs, 400, "ValidationError"),
			    "The requested DurationSeconds exceeds the MaxSessionDuration set for this role.");
	resp_free(&rs);
	assume(cs, "RoleArn=" ROLE "&RoleSessionName=xy&DurationSeconds=7200", &s);

	session_call(cs, &s, "sts", "Action=AssumeRole&" STS_V "&RoleArn=" ROLE
		     "&RoleSessionName=chained&DurationSeconds=3601", &rs);
	assert_string_equal(expect_sts_error(&rs, 400, "ValidationError"),
			    "The requested DurationSeconds exceeds the 1 hour session limit for roles assumed by role chaining.");
	resp_free(&rs);
	session_call(cs, &s, "sts", "Action=AssumeRole&" STS_V "&RoleArn=" ROLE
		     "&RoleSessionName=chained&DurationSeconds=3600", &rs);
	take_creds(&rs, AR, &c);
	resp_free(&rs);
	assert_string_equal(c.expiration, "2026-11-18T12:06:40Z");
	assert_string_equal(c.arn, "arn:aws:sts::123456789012:assumed-role/gpuburst/chained");
	session_call(cs, &s, "sts", "Action=AssumeRole&" STS_V "&RoleArn=" ROLE_PARTNER
		     "&RoleSessionName=partner&ExternalId=site-42", &rs);
	take_creds(&rs, AR, &d);
	resp_free(&rs);
	/* a chained session chains again */
	session_call(cs, &c, "sts", "Action=AssumeRole&" STS_V "&RoleArn=" ROLE
		     "&RoleSessionName=twice&DurationSeconds=900", &rs);
	take_creds(&rs, AR, &e);
	resp_free(&rs);
	assert_string_equal(e.expiration, "2026-11-18T11:21:40Z");
	session_call(cs, &c, "sts", CALLER, &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, GCI "/s:Arn"), c.arn);
	resp_free(&rs);
	/* each session's source: the key that signed for it */
	j = sts_state(cs);
	assert_string_equal(json_string_value(json_object_get(json_session(j, s.akid), "source")), KEY);
	assert_string_equal(json_string_value(json_object_get(json_session(j, c.akid), "source")), s.akid);
	assert_string_equal(json_string_value(json_object_get(json_session(j, d.akid), "source")), s.akid);
	assert_string_equal(json_string_value(json_object_get(json_session(j, e.akid), "source")), c.akid);
	assert_int_equal(json_int_at(j, "roles", ROLE), 3);
	json_decref(j);
}

/* STS's parameter checks: ValidationError in its words, then the Query codes. */
static void test_sts_schema_refusals(void **state)
{
#define ARB "Action=AssumeRole&" STS_V "&RoleArn=" ROLE
#define X16 "xxxxxxxxxxxxxxxx"
	static const struct {
		const char *body, *code, *says;
	} cases[] = {
		{ ARB "&RoleSessionName=a", "ValidationError",
		  "1 validation error detected: Value 'a' at 'roleSessionName' failed to satisfy constraint: Member must have length greater than or equal to 2" },
		{ ARB "&RoleSessionName=" X16 X16 X16 X16 "x", "ValidationError",
		  "at 'roleSessionName' failed to satisfy constraint: Member must have length less than or equal to 64" },
		{ ARB "&RoleSessionName=a%20b", "ValidationError",
		  "1 validation error detected: Value 'a b' at 'roleSessionName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]*" },
		{ ARB "&RoleSessionName=a%3Ab", "ValidationError", "Value 'a:b' at 'roleSessionName'" },
		{ ARB "&RoleSessionName=it&DurationSeconds=899", "ValidationError",
		  "1 validation error detected: Value '899' at 'durationSeconds' failed to satisfy constraint: Member must have value greater than or equal to 900" },
		{ ARB "&RoleSessionName=it&DurationSeconds=43201", "ValidationError",
		  "Value '43201' at 'durationSeconds' failed to satisfy constraint: Member must have value less than or equal to 43200" },
		{ ARB "&RoleSessionName=it&DurationSeconds=1h", "ValidationError",
		  "Value '1h' at 'durationSeconds'" },
		{ "Action=AssumeRole&" STS_V "&RoleSessionName=it", "ValidationError",
		  "1 validation error detected: Value null at 'roleArn' failed to satisfy constraint: Member must not be null" },
		{ ARB, "ValidationError", "Value null at 'roleSessionName' failed to satisfy constraint: Member must not be null" },
		{ "Action=AssumeRole&" STS_V "&RoleArn=arn:aws:iam::1:r&RoleSessionName=it",
		  "ValidationError",
		  "Value 'arn:aws:iam::1:r' at 'roleArn' failed to satisfy constraint: Member must have length greater than or equal to 20" },
		{ ARB "&RoleSessionName=it&ExternalId=x", "ValidationError",
		  "Value 'x' at 'externalId' failed to satisfy constraint: Member must have length greater than or equal to 2" },
		{ ARB "&RoleSessionName=it&ExternalId=site%2342", "ValidationError",
		  "Value 'site#42' at 'externalId' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@:/-]*" },
		{ ARB "&RoleSessionName=it&Policy=%7B%7D", "UnknownParameter",
		  "The parameter Policy is not recognized" },
		{ ARB "&roleSessionName=it", "UnknownParameter", "roleSessionName" },
		{ ARB "&RoleSessionName=it&RoleSessionName=it", "InvalidQueryParameter",
		  "The parameter RoleSessionName is given more than once" },
		{ "Action=AssumeRole&Version=2011-06-16&RoleArn=" ROLE "&RoleSessionName=it",
		  "NoSuchVersion",
		  "The requested version (2011-06-16) of service AWSSecurityTokenService does not exist" },
		{ "Action=AssumeRole&Version=2016-11-15&RoleArn=" ROLE "&RoleSessionName=it",
		  "NoSuchVersion", "(2016-11-15) of service AWSSecurityTokenService" },
		{ "Action=AssumeRole&RoleArn=" ROLE "&RoleSessionName=it", "MissingParameter",
		  "The request must contain the parameter Version" },
		{ "Action=GetSessionToken&" STS_V, "InvalidAction",
		  "Could not find operation GetSessionToken for version 2011-06-15" },
		{ STS_V, "MissingAction", "The request must contain the parameter Action" },
		{ CALLER "&RoleArn=" ROLE, "UnknownParameter", "The parameter RoleArn is not recognized" },
		{ WEB "&RoleArn=" ROLE_WEB "&WebIdentityToken=abc", "ValidationError",
		  "at 'webIdentityToken' failed to satisfy constraint: Member must have length greater than or equal to 4" },
		{ WEB "&RoleArn=" ROLE_WEB, "ValidationError", "Value null at 'webIdentityToken'" },
		{ WEB "&RoleArn=" ROLE_WEB "&WebIdentityToken=" WEB_TOKEN "&ExternalId=site-42",
		  "UnknownParameter", "ExternalId" },
	};
#undef ARB
#undef X16
	struct gb_cloudsim *cs = *state;
	struct resp rs;
	json_t *j;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *msg;

		sts_call(cs, cases[i].body, &rs);
		msg = expect_sts_error(&rs, 400, cases[i].code);
		if (!strstr(msg, cases[i].says))
			fail_msg("%s: message '%s' lacks '%s'", cases[i].body, msg, cases[i].says);
		resp_free(&rs);
	}
	/* unsigned web identity goes through the same checks */
	anon_call(cs, WEB "&RoleArn=" ROLE_WEB "&WebIdentityToken=abc", &rs);
	expect_sts_error(&rs, 400, "ValidationError");
	resp_free(&rs);
	j = sts_state(cs);
	assert_int_equal(json_int_at(j, "calls", "AssumeRole"), 0);
	assert_int_equal(json_int_at(j, "calls", "AssumeRoleWithWebIdentity"), 0);
	assert_int_equal(json_int_at(j, "calls", "GetCallerIdentity"), 0);
	assert_int_equal(json_array_size(json_object_get(j, "sessions")), 0);
	json_decref(j);
}

/* AssumeRoleWithWebIdentity needs no signature, and one of the role's tokens. */
static void test_sts_web_identity(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct gb_cs_header h[] = { { "Host", "127.0.0.1:8773" } };
	struct gb_cs_request req = { "GET", "/", WEB "&RoleArn=" ROLE_WEB "&WebIdentityToken="
				     WEB_TOKEN, h, 1, NULL, 0, NULL };
	struct sts_creds s, g;
	struct resp rs;
	json_t *j;

	anon_call(cs, WEB "&RoleArn=" ROLE_WEB "&WebIdentityToken=" WEB_TOKEN, &rs);
	take_creds(&rs, ARW, &s);
	assert_string_equal(s.expiration, "2026-11-18T12:06:40Z");
	assert_string_equal(s.arn, "arn:aws:sts::123456789012:assumed-role/gpuburst-web/web");
	assert_string_equal(xget(&rs, ARW "/s:SubjectFromWebIdentityToken"),
			    "system:serviceaccount:gpuburst:sim");
	assert_string_equal(xget(&rs, ARW "/s:Audience"), "sts.amazonaws.com");
	assert_string_equal(xget(&rs, ARW "/s:Provider"),
			    "arn:aws:iam::123456789012:oidc-provider/oidc.gpuburst.test");
	resp_free(&rs);
	session_call(cs, &s, "ec2", DESCRIBE, &rs);
	assert_int_equal(rs.r.status, 200);
	resp_free(&rs);
	/* the query string of a GET does as well as a body */
	memset(&rs, 0, sizeof(rs));
	gb_cloudsim_handle(cs, &req, &rs.r);
	rs.doc = xmlReadMemory(rs.r.body.data, (int)rs.r.body.len, "r.xml", NULL, XML_PARSE_NONET);
	take_creds(&rs, ARW, &g);
	resp_free(&rs);

	anon_call(cs, WEB "&RoleArn=" ROLE_WEB "&WebIdentityToken=eyJ.other.token", &rs);
	assert_true(gb_str_has_prefix(expect_sts_error(&rs, 400, "InvalidIdentityToken"),
				      "The web identity token that was passed could not be validated by AWS."));
	resp_free(&rs);
	/* another role's token, a role with no tokens */
	anon_call(cs, WEB "&RoleArn=" ROLE "&WebIdentityToken=" WEB_TOKEN, &rs);
	expect_sts_error(&rs, 400, "InvalidIdentityToken");
	resp_free(&rs);
	anon_call(cs, WEB "&RoleArn=arn:aws:iam::123456789012:role/nobody&WebIdentityToken="
		  WEB_TOKEN, &rs);
	expect_sts_error(&rs, 403, "AccessDenied");
	resp_free(&rs);
	anon_call(cs, WEB "&RoleArn=" ROLE_WEB "&WebIdentityToken=" WEB_TOKEN
		  "&DurationSeconds=3601", &rs);
	assert_string_equal(expect_sts_error(&rs, 400, "ValidationError"),
			    "The requested DurationSeconds exceeds the MaxSessionDuration set for this role.");
	resp_free(&rs);
	/* any other action unsigned is not STS's: EC2 wants a signature */
	anon_call(cs, "Action=AssumeRole&" STS_V "&RoleArn=" ROLE "&RoleSessionName=xy", &rs);
	expect_error(&rs, 403, "MissingAuthenticationToken");
	resp_free(&rs);
	anon_call(cs, CALLER, &rs);
	expect_error(&rs, 403, "MissingAuthenticationToken");
	resp_free(&rs);

	j = sts_state(cs);
	assert_int_equal(json_int_at(j, "calls", "AssumeRoleWithWebIdentity"), 2);
	assert_int_equal(json_int_at(j, "roles", ROLE_WEB), 2);
	assert_string_equal(json_string_value(json_object_get(json_session(j, s.akid), "source")),
			    "web-identity");
	assert_int_equal(json_integer_value(json_object_get(json_session(j, s.akid), "calls")), 1);
	json_decref(j);
}

/* GetCallerIdentity: the IAM user of a long-term key, the assumed role of a session. */
static void test_sts_caller_identity(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct sts_creds s;
	struct resp rs;

	sts_call(cs, CALLER, &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, GCI "/s:Arn"), "arn:aws:iam::123456789012:user/sim-AKIDEXAMPLE");
	assert_string_equal(xget(&rs, GCI "/s:UserId"), KEY);
	assert_string_equal(xget(&rs, GCI "/s:Account"), "123456789012");
	assert_string_equal(xget(&rs, "/s:GetCallerIdentityResponse/s:ResponseMetadata/s:RequestId"),
			    rs.r.request_id);
	resp_free(&rs);
	assume(cs, "RoleArn=" ROLE "&RoleSessionName=who", &s);
	session_call(cs, &s, "sts", CALLER, &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, GCI "/s:Arn"), "arn:aws:sts::123456789012:assumed-role/gpuburst/who");
	assert_string_equal(xget(&rs, GCI "/s:UserId"), s.role_id);
	assert_string_equal(xget(&rs, GCI "/s:Account"), "123456789012");
	resp_free(&rs);
}

/*
 * Routing: a request whose scope names sts goes to STS, also from
 * us-east-1 (STS's global region, which EC2 does not have here); one scoped
 * for ec2 goes to EC2 whatever its action.
 */
static void test_sts_routing(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct signer sg = { KEY, SECRET, NULL, GB_CS_STS_GLOBAL_REGION, "sts", 0, false };
	struct resp rs;
	json_t *j;

	assert_string_equal(GB_CS_STS_GLOBAL_REGION, "us-east-1");
	call_as(cs, &sg, CALLER, &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, GCI "/s:Account"), "123456789012");
	resp_free(&rs);
	sg.region = "eu-west-3";
	call_as(cs, &sg, CALLER, &rs);
	expect_sts_error(&rs, 403, "InvalidClientTokenId");
	resp_free(&rs);
	sg = (struct signer){ KEY, SECRET, NULL, "us-east-1", "ec2", 0, false };
	call_as(cs, &sg, DESCRIBE, &rs);
	expect_error(&rs, 401, "AuthFailure");
	resp_free(&rs);

	sg.region = "ap-south-1";
	call_as(cs, &sg, CALLER, &rs);
	expect_error(&rs, 400, "InvalidAction");
	assert_string_equal(xget(&rs, "/Response/Errors/Error/Message"),
			    "The action GetCallerIdentity is not valid for this web service.");
	resp_free(&rs);
	call_as(cs, &sg, WEB "&RoleArn=" ROLE_WEB "&WebIdentityToken=" WEB_TOKEN, &rs);
	expect_error(&rs, 400, "InvalidAction");
	resp_free(&rs);
	call_as(cs, &sg, "Action=AssumeRole&" STS_V "&RoleArn=" ROLE "&RoleSessionName=xy", &rs);
	expect_error(&rs, 400, "InvalidAction");
	resp_free(&rs);
	/* and an EC2 action signed for sts is STS's to refuse */
	sts_call(cs, DESCRIBE, &rs);
	assert_string_equal(expect_sts_error(&rs, 400, "InvalidAction"),
			    "Could not find operation DescribeInstances for version 2011-06-15");
	resp_free(&rs);
	assert_int_equal(cs->received[GB_SIM_ACTION_DESCRIBE_INSTANCES], 0);
	j = sts_state(cs);
	assert_int_equal(json_int_at(j, "calls", "GetCallerIdentity"), 1);
	assert_int_equal(json_int_at(j, "calls", "AssumeRoleWithWebIdentity"), 0);
	assert_int_equal(json_int_at(j, "calls", "AssumeRole"), 0);
	json_decref(j);
}

/* GET /_sim/sts: calls answered per action, sessions per role, each session. */
static void test_sts_control(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct gb_cs_response cr;
	struct sts_creds s, t, w;
	struct resp rs;
	json_t *j, *x;

	assume(cs, "RoleArn=" ROLE "&RoleSessionName=one", &s);
	assume(cs, "RoleArn=" ROLE "&RoleSessionName=two&DurationSeconds=900", &t);
	sts_call(cs, "Action=AssumeRole&" STS_V "&RoleArn=" ROLE_PARTNER "&RoleSessionName=no", &rs);
	expect_sts_error(&rs, 403, "AccessDenied");
	resp_free(&rs);
	anon_call(cs, WEB "&RoleArn=" ROLE_WEB "&WebIdentityToken=" WEB_TOKEN, &rs);
	take_creds(&rs, ARW, &w);
	resp_free(&rs);
	sts_call(cs, CALLER, &rs);
	resp_free(&rs);
	for (int i = 0; i < 2; i++) {
		session_call(cs, &s, "sts", CALLER, &rs);
		assert_int_equal(rs.r.status, 200);
		resp_free(&rs);
	}
	session_call(cs, &s, "ec2", DESCRIBE, &rs);
	assert_int_equal(rs.r.status, 200);
	resp_free(&rs);

	j = sts_state(cs);
	assert_int_equal(json_object_size(json_object_get(j, "calls")), 3);
	assert_int_equal(json_int_at(j, "calls", "AssumeRole"), 2);
	assert_int_equal(json_int_at(j, "calls", "AssumeRoleWithWebIdentity"), 1);
	assert_int_equal(json_int_at(j, "calls", "GetCallerIdentity"), 3);
	assert_int_equal(json_object_size(json_object_get(j, "roles")), 3);
	assert_int_equal(json_int_at(j, "roles", ROLE), 2);
	assert_int_equal(json_int_at(j, "roles", ROLE_PARTNER), 0);
	assert_int_equal(json_int_at(j, "roles", ROLE_WEB), 1);
	assert_true(json_real_value(json_object_get(j, "now")) == WALL);
	assert_int_equal(json_array_size(json_object_get(j, "sessions")), 3);
	/* in the order issued */
	x = json_array_get(json_object_get(j, "sessions"), 0);
	assert_int_equal(json_object_size(x), 8);
	assert_string_equal(json_string_value(json_object_get(x, "access_key_id")), s.akid);
	assert_string_equal(json_string_value(json_object_get(x, "role_arn")), ROLE);
	assert_string_equal(json_string_value(json_object_get(x, "session_name")), "one");
	assert_string_equal(json_string_value(json_object_get(x, "source")), KEY);
	assert_string_equal(json_string_value(json_object_get(x, "expiration")), s.expiration);
	assert_true(json_real_value(json_object_get(x, "expires_in")) == 3600);
	assert_int_equal(json_integer_value(json_object_get(x, "calls")), 3);
	assert_true(json_is_false(json_object_get(x, "expired")));
	assert_null(json_object_get(x, "secret_access_key"));
	assert_null(json_object_get(x, "session_token"));
	x = json_array_get(json_object_get(j, "sessions"), 1);
	assert_string_equal(json_string_value(json_object_get(x, "access_key_id")), t.akid);
	assert_int_equal(json_integer_value(json_object_get(x, "calls")), 0);
	x = json_array_get(json_object_get(j, "sessions"), 2);
	assert_string_equal(json_string_value(json_object_get(x, "access_key_id")), w.akid);
	assert_string_equal(json_string_value(json_object_get(x, "role_arn")), ROLE_WEB);
	json_decref(j);

	control(cs, "POST", "/_sim/time", "{\"advance\": 1000}", &cr);
	gb_cs_response_free(&cr);
	j = sts_state(cs);
	assert_true(json_real_value(json_object_get(j, "now")) == WALL + 1000);
	x = json_session(j, t.akid);
	assert_true(json_is_true(json_object_get(x, "expired")));
	assert_true(json_real_value(json_object_get(x, "expires_in")) == -100);
	x = json_session(j, s.akid);
	assert_true(json_is_false(json_object_get(x, "expired")));
	assert_true(json_real_value(json_object_get(x, "expires_in")) == 2600);
	json_decref(j);
	control(cs, "POST", "/_sim/sts", "{}", &cr);
	assert_int_equal(cr.status, 405);
	gb_cs_response_free(&cr);
}


/*****************************************************************************
 *  GPU training capacity: instance types, placement groups, EFA interfaces,
 *  security groups (a fixture catalog with an EFA type, gb_itype_catalog_set)
 *****************************************************************************/

/* AWS's figures of the three types (instance-type pages), as libconf keeps them. */
static const struct gb_instance_type gpu_catalog[] = {
	{ "p5.48xlarge", "p5", 192, 2048 * 1024, 8, "h100", 80 * 1024, "x86_64",
	  "NVIDIA", true, 32, 32, 64, true },
	{ "g6.xlarge", "g6", 4, 16 * 1024, 1, "l4", 24 * 1024, "x86_64",
	  "NVIDIA", false, 0, 1, 4, true },
	{ "g5.xlarge", "g5", 4, 16 * 1024, 1, "a10g", 24 * 1024, "x86_64",
	  "NVIDIA", false, 0, 1, 4, false },	/* no cluster: for the refusal */
};

static const char gpu_scenario[] =
	"seed: 5\n"
	"timing: {pending: 1s, shutting_down: 1s, terminated_visible: 1s}\n"
	"regions:\n"
	"  ap-south-1:\n"
	"    security_groups: [sg-1, {id: sg-2, rules: none}, {id: sg-3, rules: egress},\n"
	"                      sg-4, sg-5, sg-6]\n"
	"    placement_groups: {limit: 2, cluster_capacity: {p5.48xlarge: 3}}\n"
	"    azs:\n"
	"      ap-south-1a:\n"
	"        capacity: {p5.48xlarge: 10, g6.xlarge: 4, g5.xlarge: 4}\n"
	"        spot: {p5.48xlarge: {capacity: 2, price: 31.5}, g6.xlarge: {capacity: 2, price: 0.29}}\n"
	"        subnets: {subnet-a: 127.61.1.0/24, subnet-a2: 127.61.3.0/24}\n"
	"      ap-south-1b:\n"
	"        capacity: {p5.48xlarge: 10}\n"
	"        spot: {p5.48xlarge: {capacity: 1, price: 29.25}}\n"
	"        subnets: {subnet-b: 127.61.2.0/24}\n"
	"    capacity_reservations:\n"
	"      - {id: cr-00000000000000001, az: ap-south-1a, type: g6.xlarge, count: 2}\n"
	"      - {id: cr-00000000000000002, az: ap-south-1b, type: p5.48xlarge, count: 2,\n"
	"         kind: capacity-block, start: 0, end: 1h}\n"
	"      - {id: cr-00000000000000003, az: ap-south-1a, type: p5.48xlarge, count: 4,\n"
	"         kind: capacity-block, start: 2h, end: 26h}\n"
	"    resource_groups:\n"
	"      arn:aws:resource-groups:ap-south-1:123456789012:group/gpu:\n"
	"        [cr-00000000000000001, cr-00000000000000002]\n"
	"    capacity_block_offerings:\n"
	"      - {type: p5.48xlarge, az: ap-south-1b, count: 8, start: 3h,\n"
	"         duration_hours: 48, upfront_fee: 8000}\n";

static int setup_gpu(void **state)
{
	struct gb_scenario *sc = NULL;
	struct gb_cloudsim *cs = NULL;
	gb_error_t e;

	gb_itype_catalog_set(gpu_catalog, GB_ARRAY_LEN(gpu_catalog));
	assert_int_equal(gb_scenario_parse("gpu.yaml", gpu_scenario, sizeof(gpu_scenario) - 1,
					   &sc, &e), GB_E_OK);
	assert_int_equal(gb_cloudsim_create(sc, NULL, 1.0, &cs, &e), GB_E_OK);
	cs->frozen = true;
	cs->no_sleep = true;
	cs->wall = fixed_wall;
	gb_sim_set_epoch(cs->sim, WALL);
	*state = cs;
	return 0;
}

static int teardown_gpu(void **state)
{
	gb_cloudsim_destroy(*state);
	gb_itype_catalog_set(NULL, 0);
	return 0;
}

/* Serve [body]; expect [status] [code] (200: none) and, when given, the message. */
static void expect_call(struct gb_cloudsim *cs, const char *body, int status, const char *code,
			const char *message)
{
	struct resp rs;

	call(cs, body, &rs);
	if (code)
		expect_error(&rs, status, code);
	else if (rs.r.status != status)
		fail_msg("want %d, got %d: %s", status, rs.r.status, rs.r.body.data);
	if (message)
		assert_string_equal(xget(&rs, "/Response/Errors/Error/Message"), message);
	resp_free(&rs);
}

#define DIT "Action=DescribeInstanceTypes" V
#define DITI "/e:DescribeInstanceTypesResponse/e:instanceTypeSet/e:item"

static void test_describe_itypes(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct resp rs;

	call(cs, DIT "&InstanceType.1=p5.48xlarge", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_int_equal(xcount(&rs, DITI), 1);
	assert_string_equal(xget(&rs, DITI "/e:instanceType"), "p5.48xlarge");
	assert_string_equal(xget(&rs, DITI "/e:vCpuInfo/e:defaultVCpus"), "192");
	assert_string_equal(xget(&rs, DITI "/e:vCpuInfo/e:defaultCores"), "96");
	assert_string_equal(xget(&rs, DITI "/e:memoryInfo/e:sizeInMiB"), "2097152");
	assert_string_equal(xget(&rs, DITI "/e:processorInfo/e:supportedArchitectures/e:item"),
			    "x86_64");
	assert_string_equal(xget(&rs, DITI "/e:gpuInfo/e:gpus/e:item/e:name"), "H100");
	assert_string_equal(xget(&rs, DITI "/e:gpuInfo/e:gpus/e:item/e:manufacturer"), "NVIDIA");
	assert_string_equal(xget(&rs, DITI "/e:gpuInfo/e:gpus/e:item/e:count"), "8");
	assert_string_equal(xget(&rs, DITI "/e:gpuInfo/e:gpus/e:item/e:memoryInfo/e:sizeInMiB"),
			    "81920");
	assert_string_equal(xget(&rs, DITI "/e:gpuInfo/e:totalGpuMemoryInMiB"), "655360");
	assert_string_equal(xget(&rs, DITI "/e:networkInfo/e:efaSupported"), "true");
	assert_string_equal(xget(&rs, DITI "/e:networkInfo/e:efaInfo/e:maximumEfaInterfaces"),
			    "32");
	assert_string_equal(xget(&rs, DITI "/e:networkInfo/e:maximumNetworkCards"), "32");
	assert_string_equal(xget(&rs, DITI "/e:networkInfo/e:maximumNetworkInterfaces"), "64");
	assert_string_equal(xget(&rs, DITI "/e:placementGroupInfo/e:supportedStrategies/e:item[1]"),
			    "cluster");
	resp_free(&rs);
	/* g5.xlarge of the fixture: no EFA, no cluster placement */
	call(cs, DIT "&InstanceType.1=g5.xlarge", &rs);
	assert_string_equal(xget(&rs, DITI "/e:networkInfo/e:efaSupported"), "false");
	assert_int_equal(xcount(&rs, DITI "/e:networkInfo/e:efaInfo"), 0);
	assert_string_equal(xget(&rs, DITI "/e:gpuInfo/e:gpus/e:item/e:name"), "A10G");
	assert_int_equal(xcount(&rs, DITI "/e:placementGroupInfo/e:supportedStrategies/e:item"), 2);
	resp_free(&rs);
	/* wildcards * and ?, the other filters; a type without a catalog entry is not listed */
	call(cs, DIT "&Filter.1.Name=instance-type&Filter.1.Value.1=g?.xlarge", &rs);
	assert_int_equal(xcount(&rs, DITI), 2);
	assert_string_equal(xget(&rs, DITI "[1]/e:instanceType"), "g6.xlarge");
	assert_string_equal(xget(&rs, DITI "[2]/e:instanceType"), "g5.xlarge");
	resp_free(&rs);
	call(cs, DIT "&Filter.1.Name=instance-type&Filter.1.Value.1=p*", &rs);
	assert_int_equal(xcount(&rs, DITI), 1);		/* not p4d.24xlarge: no entry */
	resp_free(&rs);
	call(cs, DIT "&Filter.1.Name=network-info.efa-supported&Filter.1.Value.1=true", &rs);
	assert_int_equal(xcount(&rs, DITI), 1);
	assert_string_equal(xget(&rs, DITI "/e:instanceType"), "p5.48xlarge");
	resp_free(&rs);
	call(cs, DIT "&Filter.1.Name=processor-info.supported-architecture&Filter.1.Value.1=arm64",
	     &rs);
	assert_int_equal(xcount(&rs, DITI), 0);
	resp_free(&rs);
	call(cs, DIT "&Filter.1.Name=vcpu-info.default-cores&Filter.1.Value.1=2"
		 "&Filter.2.Name=network-info.maximum-network-cards&Filter.2.Value.1=1"
		 "&Filter.3.Name=instance-type&Filter.3.Value.1=g6*&Filter.3.Value.2=p5*", &rs);
	assert_int_equal(xcount(&rs, DITI), 1);
	assert_string_equal(xget(&rs, DITI "/e:instanceType"), "g6.xlarge");
	resp_free(&rs);
	call(cs, DIT "&Filter.1.Name=network-info.efa-info.maximum-efa-interfaces"
		 "&Filter.1.Value.1=32", &rs);
	assert_int_equal(xcount(&rs, DITI), 1);
	resp_free(&rs);
	/* EC2 has no GPU filter */
	expect_call(cs, DIT "&Filter.1.Name=gpu-info.name&Filter.1.Value.1=H100", 400,
		    "InvalidParameterValue", "The filter 'gpu-info.name' is invalid");
	expect_call(cs, DIT "&Filter.1.Name=instance-family&Filter.1.Value.1=p5", 400,
		    "InvalidParameterValue", "The filter 'instance-family' is invalid");
	expect_call(cs, DIT "&InstanceType.1=p5.48xlarge&InstanceType.2=x1.huge", 400,
		    "InvalidInstanceType",
		    "The following supplied instance types do not exist: [x1.huge]");
	expect_call(cs, DIT "&MaxResults=4", 400, "InvalidParameterValue", NULL);
	expect_call(cs, DIT "&MaxResults=101", 400, "InvalidParameterValue", NULL);
	expect_call(cs, DIT "&NextToken=bogus", 400, "InvalidNextToken", NULL);
	expect_call(cs, DIT "&DryRun=true", 412, "DryRunOperation", NULL);
}

/* The real catalog, five per page: every type once, in order. */
static void test_describe_itypes_pages(void **state)
{
	struct gb_cloudsim *cs = *state;
	char body[256], token[GB_SIM_TOKEN_MAX] = "";
	size_t total, seen = 0;
	struct resp rs;

	gb_catalog_all(&total);
	do {
		snprintf(body, sizeof(body), DIT "&MaxResults=5%s%s", token[0] ? "&NextToken=" : "",
			 token);
		call(cs, body, &rs);
		assert_int_equal(rs.r.status, 200);
		assert_true(xcount(&rs, DITI) <= 5);
		assert_string_equal(xget(&rs, DITI "[1]/e:instanceType"),
				    gb_catalog_all(NULL)[seen].name);
		seen += (size_t)xcount(&rs, DITI);
		snprintf(token, sizeof(token), "%s",
			 xget(&rs, "/e:DescribeInstanceTypesResponse/e:nextToken"));
		resp_free(&rs);
	} while (token[0]);
	assert_int_equal(seen, total);
}

#define CPG "Action=CreatePlacementGroup" V
#define DPG "Action=DescribePlacementGroups" V
#define PGI "/e:DescribePlacementGroupsResponse/e:placementGroupSet/e:item"

static void test_placement_groups(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct resp rs;
	char id[GB_SIM_ID_MAX + 8], body[256];

	call(cs, CPG "&GroupName=job-1&Strategy=cluster"
		 "&TagSpecification.1.ResourceType=placement-group"
		 "&TagSpecification.1.Tag.1.Key=gpuburst:job&TagSpecification.1.Tag.1.Value=42", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, "//e:placementGroup/e:groupName"), "job-1");
	assert_string_equal(xget(&rs, "//e:placementGroup/e:strategy"), "cluster");
	assert_string_equal(xget(&rs, "//e:placementGroup/e:state"), "available");
	assert_string_equal(xget(&rs, "//e:placementGroup/e:tagSet/e:item/e:value"), "42");
	snprintf(id, sizeof(id), "%s", xget(&rs, "//e:placementGroup/e:groupId"));
	assert_true(gb_str_has_prefix(id, "pg-"));
	assert_int_equal(strlen(id), 20);
	resp_free(&rs);
	expect_call(cs, CPG "&GroupName=job-1&Strategy=cluster", 400,
		    "InvalidPlacementGroup.Duplicate", "The placement group 'job-1' already exists.");
	expect_call(cs, CPG "&Strategy=cluster", 400, "MissingParameter",
		    "The request must contain the parameter GroupName");
	expect_call(cs, CPG "&GroupName=x&Strategy=ring", 400, "InvalidParameterValue", NULL);
	expect_call(cs, CPG "&GroupName=job-2&Strategy=spread", 200, NULL, NULL);
	/* the scenario's limit: 2 per region */
	expect_call(cs, CPG "&GroupName=job-3&Strategy=cluster", 400,
		    "PlacementGroupLimitExceeded", NULL);
	/* Describe: all, by name, by id, by filters */
	call(cs, DPG, &rs);
	assert_int_equal(xcount(&rs, PGI), 2);
	resp_free(&rs);
	call(cs, DPG "&GroupName.1=job-2", &rs);
	assert_int_equal(xcount(&rs, PGI), 1);
	assert_string_equal(xget(&rs, PGI "/e:strategy"), "spread");
	resp_free(&rs);
	snprintf(body, sizeof(body), DPG "&GroupId.1=%s", id);
	call(cs, body, &rs);
	assert_string_equal(xget(&rs, PGI "/e:groupName"), "job-1");
	resp_free(&rs);
	call(cs, DPG "&Filter.1.Name=group-arn"
		 "&Filter.1.Value.1=arn:aws:ec2:ap-south-1:123456789012:placement-group/job-1", &rs);
	assert_int_equal(xcount(&rs, PGI), 1);
	assert_string_equal(xget(&rs, PGI "/e:groupArn"),
			    "arn:aws:ec2:ap-south-1:123456789012:placement-group/job-1");
	resp_free(&rs);
	expect_call(cs, DPG "&Filter.1.Name=group-id&Filter.1.Value.1=x", 400,
		    "InvalidParameterValue", "The filter 'group-id' is invalid");
	expect_call(cs, DPG "&GroupId.1=pg-0123456789abcdef0", 400,
		    "InvalidPlacementGroupId.NotFound", NULL);
	call(cs, DPG "&Filter.1.Name=strategy&Filter.1.Value.1=cluster", &rs);
	assert_int_equal(xcount(&rs, PGI), 1);
	assert_string_equal(xget(&rs, PGI "/e:groupName"), "job-1");
	resp_free(&rs);
	call(cs, DPG "&Filter.1.Name=tag:gpuburst:job&Filter.1.Value.1=4*", &rs);
	assert_int_equal(xcount(&rs, PGI), 1);
	resp_free(&rs);
	call(cs, DPG "&Filter.1.Name=tag-key&Filter.1.Value.1=nope", &rs);
	assert_int_equal(xcount(&rs, PGI), 0);
	resp_free(&rs);
	call(cs, DPG "&Filter.1.Name=group-name&Filter.1.Value.1=job-?"
		 "&Filter.2.Name=state&Filter.2.Value.1=available", &rs);
	assert_int_equal(xcount(&rs, PGI), 2);
	resp_free(&rs);
	expect_call(cs, DPG "&GroupName.1=nope", 400, "InvalidPlacementGroup.Unknown",
		    "The Placement Group 'nope' is unknown.");
	expect_call(cs, DPG "&Filter.1.Name=partition-count&Filter.1.Value.1=1", 400,
		    "InvalidParameterValue", "The filter 'partition-count' is invalid");
	/* the other region knows neither */
	call_ex(cs, "ap-northeast-1", SECRET, DPG "&GroupName.1=job-1", 0, true, &rs);
	assert_int_equal(rs.r.status, 401);	/* not in this scenario */
	resp_free(&rs);
	/* Delete: then the name is free again */
	expect_call(cs, "Action=DeletePlacementGroup" V "&GroupName=job-2", 200, NULL, NULL);
	expect_call(cs, "Action=DeletePlacementGroup" V "&GroupName=job-2", 400,
		    "InvalidPlacementGroup.Unknown", "The Placement Group 'job-2' is unknown.");
	expect_call(cs, CPG "&GroupName=job-2&Strategy=partition", 200, NULL, NULL);
}

#define P5 RUN "&InstanceType=p5.48xlarge"

static void test_cluster_launch(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct resp rs;

	expect_call(cs, CPG "&GroupName=c1&Strategy=cluster", 200, NULL, NULL);
	expect_call(cs, P5 "&MinCount=1&MaxCount=1&Placement.GroupName=none", 400,
		    "InvalidPlacementGroup.Unknown", "The Placement Group 'none' is unknown.");
	expect_call(cs, RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1&Placement.GroupName=c1",
		    400, "InvalidParameterCombination",
		    "Placement groups may not be used with instances of type 'g5.xlarge'.");
	/* the first launch fixes the group's AZ */
	call(cs, P5 "&MinCount=2&MaxCount=2&SubnetId=subnet-a&Placement.GroupName=c1", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, "//e:item[1]/e:placement/e:groupName"), "c1");
	assert_string_equal(xget(&rs, "//e:item[1]/e:placement/e:availabilityZone"),
			    "ap-south-1a");
	resp_free(&rs);
	expect_call(cs, P5 "&MinCount=1&MaxCount=1&SubnetId=subnet-b&Placement.GroupName=c1", 400,
		    "InvalidPlacementGroup.InUse",
		    "The placement group 'c1' is in use in another availability zone: ap-south-1a");
	/* capacity inside the group: 3 p5.48xlarge, all-or-nothing for MinCount */
	expect_call(cs, P5 "&MinCount=2&MaxCount=2&Placement.GroupName=c1", 500,
		    "InsufficientInstanceCapacity", NULL);
	call(cs, P5 "&MinCount=1&MaxCount=5&Placement.GroupName=c1", &rs);
	assert_int_equal(xcount(&rs, "//e:instancesSet/e:item"), 1);
	/* no AZ named: the group's */
	assert_string_equal(xget(&rs, "//e:item[1]/e:placement/e:availabilityZone"),
			    "ap-south-1a");
	resp_free(&rs);
	call(cs, P5 "&MinCount=1&MaxCount=1&SubnetId=subnet-b", &rs);	/* outside any group */
	assert_string_equal(xget(&rs, "//e:item[1]/e:placement/e:groupName"), "");
	resp_free(&rs);
	call(cs, "Action=DescribeInstances" V "&Filter.1.Name=placement-group-name"
		 "&Filter.1.Value.1=c1", &rs);
	assert_int_equal(xcount(&rs, "//e:instancesSet/e:item"), 3);
	assert_string_equal(xget(&rs, "//e:instancesSet/e:item[1]/e:placement/e:groupName"), "c1");
	resp_free(&rs);
	expect_call(cs, "Action=DeletePlacementGroup" V "&GroupName=c1", 400,
		    "InvalidPlacementGroup.InUse",
		    "The placement group 'c1' is in use and may not be deleted.");
	{
		size_t n;
		struct gb_sim_instance *const *in = gb_sim_instances(cs->sim, &n);
		char body[512];

		snprintf(body, sizeof(body), "Action=TerminateInstances" V "&InstanceId.1=%s"
			 "&InstanceId.2=%s&InstanceId.3=%s", in[0]->id, in[1]->id, in[2]->id);
		expect_call(cs, body, 200, NULL, NULL);
	}
	/* shutting-down still holds the group */
	expect_call(cs, "Action=DeletePlacementGroup" V "&GroupName=c1", 400,
		    "InvalidPlacementGroup.InUse", NULL);
	gb_sim_advance(cs->sim, 1.5);
	expect_call(cs, "Action=DeletePlacementGroup" V "&GroupName=c1", 200, NULL, NULL);
}

#define NI1 "&NetworkInterface.1.DeviceIndex=0&NetworkInterface.1.SubnetId=subnet-a"

static void test_network_interfaces(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct gb_buf many = GB_BUF_INIT;
	struct resp rs;

	expect_call(cs, P5 "&MinCount=1&MaxCount=1&SubnetId=subnet-a" NI1, 400,
		    "InvalidParameterCombination",
		    "Network interfaces and an instance-level subnet ID may not be specified on the same request");
	expect_call(cs, P5 "&MinCount=1&MaxCount=1&SecurityGroupId.1=sg-1" NI1, 400,
		    "InvalidParameterCombination",
		    "Network interfaces and an instance-level security groups may not be specified on the same request");
	expect_call(cs, RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=1" NI1
		    "&NetworkInterface.1.InterfaceType=efa", 400, "InvalidParameterCombination",
		    "g6.xlarge instances do not support Elastic Fabric Adapters.");
	expect_call(cs, P5 "&MinCount=1&MaxCount=1" NI1 "&NetworkInterface.1.InterfaceType=trunk",
		    400, "InvalidParameterValue", NULL);
	expect_call(cs, P5 "&MinCount=1&MaxCount=1" NI1
		    "&NetworkInterface.2.DeviceIndex=0&NetworkInterface.2.NetworkCardIndex=32"
		    "&NetworkInterface.2.SubnetId=subnet-a", 400, "InvalidParameterValue",
		    "Network card index 32 is not valid for instance type p5.48xlarge: it has 32 network card(s), numbered from 0.");
	expect_call(cs, P5 "&MinCount=1&MaxCount=1" NI1
		    "&NetworkInterface.2.DeviceIndex=0&NetworkInterface.2.NetworkCardIndex=1"
		    "&NetworkInterface.2.SubnetId=subnet-b", 400, "InvalidParameterValue",
		    "The network interfaces of an instance must be in one Availability Zone: subnet subnet-a is in ap-south-1a, subnet subnet-b in ap-south-1b.");
	expect_call(cs, P5 "&MinCount=1&MaxCount=1" NI1 "&NetworkInterface.1.SecurityGroupId.1=sg-9",
		    400, "InvalidGroup.NotFound", "The security group 'sg-9' does not exist");
	expect_call(cs, P5 "&MinCount=1&MaxCount=1&NetworkInterface.1.DeviceIndex=0"
		    "&NetworkInterface.1.SubnetId=subnet-x", 400, "InvalidSubnetID.NotFound", NULL);
	expect_call(cs, P5 "&MinCount=1&MaxCount=1&NetworkInterface.1.DeviceIndex=1"
		    "&NetworkInterface.1.SubnetId=subnet-a", 400, "InvalidParameterValue", NULL);
	expect_call(cs, P5 "&MinCount=1&MaxCount=1&NetworkInterface.1.SubnetId=subnet-a", 400,
		    "MissingParameter", "The request must contain the parameter NetworkInterface.1.DeviceIndex");
	/* 33 EFA interfaces: two on card 0, one on each of cards 1..31; the type has 32 */
	gb_buf_puts(&many, P5 "&MinCount=1&MaxCount=1");
	for (int k = 1; k <= 33; k++)
		gb_buf_printf(&many, "&NetworkInterface.%d.DeviceIndex=%d"
			      "&NetworkInterface.%d.NetworkCardIndex=%d&NetworkInterface.%d.SubnetId=subnet-a"
			      "&NetworkInterface.%d.InterfaceType=efa", k, k == 33, k, k == 33 ? 0 : k - 1,
			      k, k);
	expect_call(cs, gb_buf_str(&many), 400, "InvalidParameterValue",
		    "You have exceeded the maximum number of EFA interfaces (32) for instance type p5.48xlarge: the request has 33.");
	gb_buf_free(&many);
	/* EFA on card 0, EFA-only on card 1, into one subnet-pair of the AZ */
	call(cs, P5 "&MinCount=1&MaxCount=1" NI1 "&NetworkInterface.1.InterfaceType=efa"
		 "&NetworkInterface.1.SecurityGroupId.1=sg-1&NetworkInterface.1.DeleteOnTermination=true"
		 "&NetworkInterface.2.DeviceIndex=0&NetworkInterface.2.NetworkCardIndex=1"
		 "&NetworkInterface.2.SubnetId=subnet-a2&NetworkInterface.2.InterfaceType=efa-only"
		 "&NetworkInterface.2.SecurityGroupId.1=sg-1&NetworkInterface.2.SecurityGroupId.2=sg-4",
	     &rs);
	assert_int_equal(rs.r.status, 200);
	resp_free(&rs);
	call(cs, "Action=DescribeInstances" V, &rs);
#define NIS "//e:instancesSet/e:item/e:networkInterfaceSet/e:item"
	assert_int_equal(xcount(&rs, NIS), 2);
	assert_string_equal(xget(&rs, NIS "[1]/e:interfaceType"), "efa");
	assert_string_equal(xget(&rs, NIS "[1]/e:subnetId"), "subnet-a");
	assert_string_equal(xget(&rs, NIS "[1]/e:attachment/e:deviceIndex"), "0");
	assert_string_equal(xget(&rs, NIS "[1]/e:attachment/e:networkCardIndex"), "0");
	assert_string_equal(xget(&rs, NIS "[1]/e:groupSet/e:item/e:groupId"), "sg-1");
	assert_string_equal(xget(&rs, NIS "[1]/e:privateIpAddress"), "127.61.1.4");
	assert_string_equal(xget(&rs, NIS "[2]/e:interfaceType"), "efa-only");
	assert_string_equal(xget(&rs, NIS "[2]/e:subnetId"), "subnet-a2");
	assert_string_equal(xget(&rs, NIS "[2]/e:attachment/e:networkCardIndex"), "1");
	assert_int_equal(xcount(&rs, NIS "[2]/e:groupSet/e:item"), 2);
	assert_string_equal(xget(&rs, NIS "[2]/e:groupSet/e:item[2]/e:groupId"), "sg-4");
	assert_int_equal(xcount(&rs, NIS "[2]/e:privateIpAddress"), 0);
	assert_string_equal(xget(&rs, "//e:instancesSet/e:item/e:subnetId"), "subnet-a");
	assert_string_equal(xget(&rs, "//e:instancesSet/e:item/e:groupSet/e:item/e:groupId"),
			    "sg-1");
#undef NIS
	resp_free(&rs);
}

#define DSG "Action=DescribeSecurityGroups" V
#define SGI "/e:DescribeSecurityGroupsResponse/e:securityGroupInfo/e:item"

static void test_security_groups(void **state)
{
	struct gb_cloudsim *cs = *state;
	char body[256];
	struct resp rs;

	call(cs, DSG "&GroupId.1=sg-1&GroupId.2=sg-2&GroupId.3=sg-3", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_int_equal(xcount(&rs, SGI), 3);
	/* sg-1: EFA's rule, all traffic from and to itself */
	assert_string_equal(xget(&rs, SGI "[1]/e:groupId"), "sg-1");
	assert_string_equal(xget(&rs, SGI "[1]/e:ipPermissions/e:item/e:ipProtocol"), "-1");
	assert_string_equal(xget(&rs, SGI "[1]/e:ipPermissions/e:item/e:groups/e:item/e:groupId"),
			    "sg-1");
	assert_string_equal(xget(&rs, SGI "[1]/e:ipPermissionsEgress/e:item/e:groups/e:item/e:groupId"),
			    "sg-1");
	/* sg-2: no rule; sg-3: egress to the world only */
	assert_int_equal(xcount(&rs, SGI "[2]/e:ipPermissions/e:item"), 0);
	assert_int_equal(xcount(&rs, SGI "[2]/e:ipPermissionsEgress/e:item"), 0);
	assert_int_equal(xcount(&rs, SGI "[3]/e:ipPermissions/e:item"), 0);
	assert_string_equal(xget(&rs, SGI "[3]/e:ipPermissionsEgress/e:item/e:ipRanges/e:item/e:cidrIp"),
			    "0.0.0.0/0");
	resp_free(&rs);
	expect_call(cs, DSG "&GroupId.1=sg-1&GroupId.2=sg-9", 400, "InvalidGroup.NotFound",
		    "The security group 'sg-9' does not exist");
	expect_call(cs, DSG "&GroupId.1=default", 400, "InvalidGroupId.Malformed", NULL);
	/* 6 groups, 5 a page */
	call(cs, DSG "&MaxResults=5", &rs);
	assert_int_equal(xcount(&rs, SGI), 5);
	snprintf(body, sizeof(body), DSG "&MaxResults=5&NextToken=%s",
		 xget(&rs, "/e:DescribeSecurityGroupsResponse/e:nextToken"));
	resp_free(&rs);
	call(cs, body, &rs);
	assert_int_equal(xcount(&rs, SGI), 1);
	assert_string_equal(xget(&rs, SGI "/e:groupId"), "sg-6");
	assert_int_equal(xcount(&rs, "/e:DescribeSecurityGroupsResponse/e:nextToken"), 0);
	resp_free(&rs);
	expect_call(cs, DSG "&MaxResults=4", 400, "InvalidParameterValue", NULL);
}


#define DCR "Action=DescribeCapacityReservations" V
#define CRI "/e:DescribeCapacityReservationsResponse/e:capacityReservationSet/e:item"
#define CRT "&CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId="
#define CRG "&CapacityReservationSpecification.CapacityReservationTarget." \
	"CapacityReservationResourceGroupArn=arn:aws:resource-groups:ap-south-1:123456789012:group/"
#define CB_RUN RUN "&InstanceType=p5.48xlarge&MinCount=2&MaxCount=2" \
	"&InstanceMarketOptions.MarketType=capacity-block" CRT

static void test_capacity_reservations(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct resp rs;

	call(cs, DCR "&CapacityReservationId.1=cr-00000000000000002", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_int_equal(xcount(&rs, CRI), 1);
	assert_string_equal(xget(&rs, CRI "/e:capacityReservationArn"),
			    "arn:aws:ec2:ap-south-1:123456789012:capacity-reservation/cr-00000000000000002");
	assert_string_equal(xget(&rs, CRI "/e:reservationType"), "capacity-block");
	assert_string_equal(xget(&rs, CRI "/e:state"), "active");
	assert_string_equal(xget(&rs, CRI "/e:instancePlatform"), "Linux/UNIX");
	assert_string_equal(xget(&rs, CRI "/e:endDateType"), "limited");
	assert_string_equal(xget(&rs, CRI "/e:instanceMatchCriteria"), "targeted");
	assert_string_equal(xget(&rs, CRI "/e:totalInstanceCount"), "2");
	assert_string_equal(xget(&rs, CRI "/e:availableInstanceCount"), "2");
	resp_free(&rs);
	call(cs, DCR "&Filter.1.Name=state&Filter.1.Value.1=scheduled", &rs);
	assert_int_equal(xcount(&rs, CRI), 1);
	assert_string_equal(xget(&rs, CRI "/e:capacityReservationId"), "cr-00000000000000003");
	resp_free(&rs);
	call(cs, DCR "&MaxResults=1", &rs);
	assert_int_equal(xcount(&rs, CRI), 1);
	assert_int_equal(xcount(&rs, "//e:nextToken"), 1);
	resp_free(&rs);
	expect_call(cs, DCR "&CapacityReservationId.1=cr-00000000000000009", 400,
		    "InvalidCapacityReservationId.NotFound",
		    "The capacity reservation ID 'cr-00000000000000009' does not exist");
	expect_call(cs, DCR "&CapacityReservationId.1=cr-1", 400,
		    "InvalidCapacityReservationId.Malformed", NULL);
	expect_call(cs, DCR "&CapacityReservationId.1=cr-00000000000000001&MaxResults=5", 400,
		    "InvalidParameterCombination", NULL);
	expect_call(cs, DCR "&MaxResults=0", 400, "InvalidParameterValue", NULL);
	expect_call(cs, DCR "&MaxResults=1001", 400, "InvalidParameterValue", NULL);
	expect_call(cs, DCR "&CapacityReservationIds.1=cr-00000000000000001", 400,
		    "UnknownParameter", NULL);
	expect_call(cs, DCR "&Filter.1.Name=reservation-type&Filter.1.Value.1=default", 400,
		    "InvalidParameterValue", "The filter 'reservation-type' is invalid");
	expect_call(cs, DCR "&DryRun=true", 412, "DryRunOperation", NULL);
}

static void test_capacity_reservation_launch(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct resp rs;

	expect_call(cs, RUN "&InstanceType=g6.xlarge&MinCount=3&MaxCount=3" CRT
		    "cr-00000000000000001", 400, "ReservationCapacityExceeded", NULL);
	call(cs, RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=4" CRT "cr-00000000000000001",
	     &rs);
	assert_int_equal(rs.r.status, 200);
	assert_int_equal(xcount(&rs, "//e:instancesSet/e:item"), 2);
	assert_string_equal(xget(&rs, "//e:item[1]/e:placement/e:availabilityZone"), "ap-south-1a");
	assert_string_equal(xget(&rs, "//e:item[2]/e:capacityReservationId"), "cr-00000000000000001");
	assert_string_equal(xget(&rs, "//e:item[2]/e:capacityReservationSpecification/"
				 "e:capacityReservationTarget/e:capacityReservationId"),
			    "cr-00000000000000001");
	resp_free(&rs);
	call(cs, RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=1"
		 "&CapacityReservationSpecification.CapacityReservationPreference=none", &rs);
	assert_string_equal(xget(&rs, "//e:item[1]/e:capacityReservationSpecification/"
				 "e:capacityReservationPreference"), "none");
	assert_int_equal(xcount(&rs, "//e:item[1]/e:capacityReservationId"), 0);
	resp_free(&rs);
	expect_call(cs, RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=1"
		    "&CapacityReservationSpecification.CapacityReservationPreference=open" CRT
		    "cr-00000000000000001", 400, "InvalidParameterCombination", NULL);
	expect_call(cs, RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=1"
		    "&CapacityReservationSpecification.CapacityReservationPreference=sometimes",
		    400, "InvalidParameterValue", NULL);
	expect_call(cs, RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=1" CRG "nope", 400,
		    "InvalidParameterValue", NULL);
	/* the group's g6.xlarge reservation is full now; its Capacity Block is p5 */
	expect_call(cs, RUN "&InstanceType=g6.xlarge&MinCount=1&MaxCount=1" CRG "gpu", 400,
		    "ReservationCapacityExceeded", NULL);
	expect_call(cs, RUN "&InstanceType=g5.xlarge&MinCount=1&MaxCount=1" CRG "gpu", 400,
		    "InvalidParameterCombination", NULL);
	/* Capacity Blocks: the market type, the window, no Spot options */
	expect_call(cs, RUN "&InstanceType=p5.48xlarge&MinCount=1&MaxCount=1" CRT
		    "cr-00000000000000002", 400, "InvalidParameterCombination", NULL);
	expect_call(cs, CB_RUN "cr-00000000000000002"
		    "&InstanceMarketOptions.SpotOptions.MaxPrice=1", 400,
		    "InvalidParameterCombination", NULL);
	expect_call(cs, CB_RUN "cr-00000000000000003", 400, "InvalidParameterValue", NULL);
	call(cs, RUN "&InstanceType=p5.48xlarge&MinCount=2&MaxCount=2"
		 "&InstanceMarketOptions.MarketType=capacity-block" CRG "gpu", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_string_equal(xget(&rs, "//e:item[1]/e:capacityReservationId"), "cr-00000000000000002");
	assert_string_equal(xget(&rs, "//e:item[2]/e:placement/e:availabilityZone"), "ap-south-1b");
	assert_string_equal(xget(&rs, "//e:item[2]/e:instanceLifecycle"), "capacity-block");
	resp_free(&rs);
	call(cs, DCR "&CapacityReservationId.1=cr-00000000000000002", &rs);
	assert_string_equal(xget(&rs, CRI "/e:availableInstanceCount"), "0");
	resp_free(&rs);
}

#define DCBO "Action=DescribeCapacityBlockOfferings" V
#define CBI "/e:DescribeCapacityBlockOfferingsResponse/e:capacityBlockOfferingSet/e:item"

static void test_capacity_block_offerings(void **state)
{
	struct gb_cloudsim *cs = *state;
	struct resp rs;

	call(cs, DCBO "&InstanceType=p5.48xlarge&InstanceCount=4&CapacityDurationHours=48", &rs);
	assert_int_equal(rs.r.status, 200);
	assert_int_equal(xcount(&rs, CBI), 1);
	assert_string_equal(xget(&rs, CBI "/e:instanceCount"), "4");
	assert_string_equal(xget(&rs, CBI "/e:upfrontFee"), "4000.00");
	assert_string_equal(xget(&rs, CBI "/e:currencyCode"), "USD");
	assert_string_equal(xget(&rs, CBI "/e:capacityBlockDurationHours"), "48");
	assert_true(gb_str_has_prefix(xget(&rs, CBI "/e:capacityBlockOfferingId"), "cb-"));
	resp_free(&rs);
	call(cs, DCBO "&InstanceType=p5.48xlarge&InstanceCount=9&CapacityDurationHours=48", &rs);
	assert_int_equal(xcount(&rs, CBI), 0);
	resp_free(&rs);
	expect_call(cs, DCBO "&InstanceType=p5.48xlarge&InstanceCount=1", 400,
		    "MissingParameter", NULL);
	expect_call(cs, DCBO "&CapacityDurationHours=30", 400, "InvalidParameterValue", NULL);
	expect_call(cs, DCBO "&CapacityDurationHours=24&InstanceCount=0", 400,
		    "InvalidParameterValue", NULL);
	expect_call(cs, DCBO "&CapacityDurationHours=24&StartDateRange=tomorrow", 400,
		    "InvalidParameterValue", NULL);
	expect_call(cs, DCBO "&CapacityDurationHours=24&UltraserverCount=1", 400,
		    "UnknownParameter", NULL);
}

#define DSPH "Action=DescribeSpotPriceHistory" V
#define SPI "/e:DescribeSpotPriceHistoryResponse/e:spotPriceHistorySet/e:item"

/* DescribeSpotPriceHistory: each Spot pool's price since simulated time 0. */
static void test_spot_price_history(void **state)
{
	struct gb_cloudsim *cs = *state;
	char tok[GB_SIM_TOKEN_MAX + 64];
	struct resp rs;

	call(cs, DSPH, &rs);
	assert_int_equal(rs.r.status, 200);
	assert_int_equal(xcount(&rs, SPI), 3);
	assert_string_equal(xget(&rs, SPI "[1]/e:instanceType"), "p5.48xlarge");
	assert_string_equal(xget(&rs, SPI "[1]/e:availabilityZone"), "ap-south-1a");
	assert_string_equal(xget(&rs, SPI "[1]/e:productDescription"), "Linux/UNIX");
	assert_string_equal(xget(&rs, SPI "[1]/e:spotPrice"), "31.500000");
	assert_string_equal(xget(&rs, SPI "[1]/e:timestamp"), "2026-11-18T11:06:40.000Z");
	assert_string_equal(xget(&rs, SPI "[3]/e:availabilityZone"), "ap-south-1b");
	/* the last page ends with an empty token, as EC2's does */
	assert_string_equal(xget(&rs, "//e:nextToken"), "");
	resp_free(&rs);
	/* InstanceType.N, ProductDescription.N, AvailabilityZone, the filters */
	call(cs, DSPH "&InstanceType.1=p5.48xlarge&ProductDescription.1=Linux%2FUNIX"
		 "&AvailabilityZone=ap-south-1b", &rs);
	assert_int_equal(xcount(&rs, SPI), 1);
	assert_string_equal(xget(&rs, SPI "/e:spotPrice"), "29.250000");
	resp_free(&rs);
	call(cs, DSPH "&ProductDescription.1=Windows", &rs);
	assert_int_equal(xcount(&rs, SPI), 0);
	resp_free(&rs);
	call(cs, DSPH "&Filter.1.Name=spot-price&Filter.1.Value.1=0.29*"
		 "&Filter.2.Name=timestamp&Filter.2.Value.1=Wed Nov 18 *", &rs);
	assert_int_equal(xcount(&rs, SPI), 1);
	assert_string_equal(xget(&rs, SPI "/e:instanceType"), "g6.xlarge");
	resp_free(&rs);
	call(cs, DSPH "&Filter.1.Name=availability-zone&Filter.1.Value.1=ap-south-1b", &rs);
	assert_int_equal(xcount(&rs, SPI), 1);
	resp_free(&rs);
	/* StartTime after the change still lists it (the price in effect then); EndTime before not */
	call(cs, DSPH "&StartTime=2026-11-20T00:00:00Z", &rs);
	assert_int_equal(xcount(&rs, SPI), 3);
	resp_free(&rs);
	call(cs, DSPH "&EndTime=2026-11-18T11:00:00Z", &rs);
	assert_int_equal(xcount(&rs, SPI), 0);
	resp_free(&rs);
	/* MaxResults pages, NextToken resumes */
	call(cs, DSPH "&MaxResults=2", &rs);
	assert_int_equal(xcount(&rs, SPI), 2);
	snprintf(tok, sizeof(tok), DSPH "&MaxResults=2&NextToken=%s", xget(&rs, "//e:nextToken"));
	resp_free(&rs);
	call(cs, tok, &rs);
	assert_int_equal(xcount(&rs, SPI), 1);
	assert_string_equal(xget(&rs, SPI "/e:availabilityZone"), "ap-south-1b");
	resp_free(&rs);
	/* refusals, with EC2's codes */
	expect_call(cs, DSPH "&MaxResults=0", 400, "InvalidParameterValue", NULL);
	expect_call(cs, DSPH "&MaxResults=1001", 400, "InvalidParameterValue", NULL);
	expect_call(cs, DSPH "&NextToken=nope", 400, "InvalidNextToken", NULL);
	expect_call(cs, DSPH "&AvailabilityZone=ap-south-1z", 400, "InvalidParameterValue",
		    "Invalid availability zone: [ap-south-1z]");
	expect_call(cs, DSPH "&AvailabilityZoneId=aps1-az1", 400, "UnknownParameter", NULL);
	expect_call(cs, DSPH "&InstanceType.1=p9.huge", 400, "InvalidParameterValue",
		    "Value (p9.huge) for parameter instanceType is invalid.");
	expect_call(cs, DSPH "&ProductDescription.1=Linux", 400, "InvalidParameterValue",
		    "Value (Linux) for parameter productDescription is invalid.");
	expect_call(cs, DSPH "&StartTime=yesterday", 400, "InvalidParameterValue", NULL);
	expect_call(cs, DSPH "&StartTime=2026-11-20T00:00:00Z&EndTime=2026-11-19T00:00:00Z", 400,
		    "InvalidParameterValue", NULL);
	expect_call(cs, DSPH "&Filter.1.Name=state&Filter.1.Value.1=active", 400,
		    "InvalidParameterValue", "The filter 'state' is invalid");
	expect_call(cs, DSPH "&InstanceType.2=g6.xlarge", 400, "InvalidParameterValue", NULL);
	expect_call(cs, DSPH "&InstanceTypes.1=g6.xlarge", 400, "UnknownParameter", NULL);
	expect_call(cs, DSPH "&DryRun=true", 412, "DryRunOperation", NULL);
	expect_call(cs, DSPH "&DryRun=true&MaxResults=5000", 400, "InvalidParameterValue", NULL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define TG(fn) cmocka_unit_test_setup_teardown(fn, setup_gpu, teardown_gpu)

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
		T(test_imds_interrupt),
		T(test_injected_faults),
		T(test_control),
		T(test_consistency_api),
		T(test_sts_assume_role),
		T(test_sts_expiry),
		T(test_sts_external_id),
		T(test_sts_durations),
		T(test_sts_schema_refusals),
		T(test_sts_web_identity),
		T(test_sts_caller_identity),
		T(test_sts_routing),
		T(test_sts_control),
		TG(test_describe_itypes),
		T(test_describe_itypes_pages),
		TG(test_placement_groups),
		TG(test_cluster_launch),
		TG(test_network_interfaces),
		TG(test_security_groups),
		TG(test_capacity_reservations),
		TG(test_capacity_reservation_launch),
		TG(test_capacity_block_offerings),
		TG(test_spot_price_history),
	};
	int rc;

	gb_log_open("test_cloudsim_api", &(struct gb_log_opts){ .level = GB_LOG_ERROR }, NULL);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	xmlCleanupParser();
	return rc;
}
