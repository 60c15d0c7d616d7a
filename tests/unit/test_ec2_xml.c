/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_ec2_xml.c - EC2 response parsing, error classification, request
 * bodies and back-off arithmetic
 *
 * Data: tests/data/ec2 (botocore samples with their parsed .expected.json,
 * observed and constructed bodies, errors-manifest.tsv; see SOURCES.md).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "gb_ec2.h"
#include "gb_ec2_xml.h"
#include "gb_log.h"
#include "gb_retry.h"
#include "gb_str.h"
#include "gb_sts.h"
#include "gb_util.h"

#define DATA GB_TOP_SRCDIR "/tests/data/ec2"
/* A string literal and its length (NULs inside count). */
#define LIT(s) s, (sizeof(s) - 1)

static char *slurp(const char *rel, size_t *len)
{
	char path[512];
	char *data = NULL;
	gb_error_t e;

	snprintf(path, sizeof(path), "%s/%s", DATA, rel);
	if (gb_file_read(path, 1 << 24, &data, len, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	return data;
}

static json_t *load_json(const char *rel)
{
	char path[512];
	json_error_t je;
	json_t *j;

	snprintf(path, sizeof(path), "%s/%s", DATA, rel);
	j = json_load_file(path, 0, &je);
	if (!j)
		fail_msg("%s:%d: %s", path, je.line, je.text);
	return j;
}

/* Our field against botocore's: both absent, or the same text. */
static void same_str(const char *what, const char *ours, json_t *obj,
		     const char *key)
{
	json_t *v = obj ? json_object_get(obj, key) : NULL;
	const char *want = json_string_value(v);

	if (!want && !ours)
		return;
	if (!want || !ours || strcmp(want, ours) != 0)
		fail_msg("%s.%s: ours \"%s\", botocore \"%s\"", what, key,
			 ours ? ours : "(absent)", want ? want : "(absent)");
}

static void same_int(const char *what, int ours, json_t *obj, const char *key,
		     int absent)
{
	json_t *v = json_object_get(obj, key);
	int want = v ? (int)json_integer_value(v) : absent;

	if (ours != want)
		fail_msg("%s.%s: ours %d, botocore %d", what, key, ours, want);
}

static void check_instance(const struct gb_ec2_instance *i, json_t *ji,
			   const char *resv)
{
	json_t *state = json_object_get(ji, "State");
	json_t *reason = json_object_get(ji, "StateReason");
	json_t *tags = json_object_get(ji, "Tags");
	const char *w = i->instance_id;

	same_str(w, i->instance_id, ji, "InstanceId");
	same_str(w, i->image_id, ji, "ImageId");
	same_str(w, i->instance_type, ji, "InstanceType");
	same_int(w, i->state_code, state, "Code", -1);
	same_str(w, i->state_name, state, "Name");
	same_str(w, i->availability_zone, json_object_get(ji, "Placement"),
		 "AvailabilityZone");
	same_str(w, i->subnet_id, ji, "SubnetId");
	same_str(w, i->vpc_id, ji, "VpcId");
	same_str(w, i->private_ip, ji, "PrivateIpAddress");
	same_str(w, i->public_ip, ji, "PublicIpAddress");
	same_str(w, i->private_dns, ji, "PrivateDnsName");
	same_str(w, i->public_dns, ji, "PublicDnsName");
	same_str(w, i->key_name, ji, "KeyName");
	same_str(w, i->client_token, ji, "ClientToken");
	same_str(w, i->launch_time, ji, "LaunchTime");
	same_str(w, i->lifecycle, ji, "InstanceLifecycle");
	same_int(w, i->ami_launch_index, ji, "AmiLaunchIndex", -1);
	same_str(w, i->state_reason_code, reason, "Code");
	same_str(w, i->state_reason_message, reason, "Message");
	assert_string_equal(i->reservation_id, resv);
	assert_int_equal(i->n_tags, json_array_size(tags));
	for (size_t k = 0; k < i->n_tags; k++) {
		same_str(w, i->tags[k].key, json_array_get(tags, k), "Key");
		same_str(w, i->tags[k].value, json_array_get(tags, k), "Value");
	}
	if (i->launch_time)
		assert_true(i->launch_epoch > 1e9);
}

static const char *request_id_of(json_t *j)
{
	return json_string_value(json_object_get(json_object_get(j, "ResponseMetadata"),
						 "RequestId"));
}

/* botocore-ec2-run-instances.xml parses to what botocore parsed. */
static void test_botocore_run_instances(void **state)
{
	size_t len;
	char *xml = slurp("botocore-ec2-run-instances.xml", &len);
	json_t *j = load_json("botocore-ec2-run-instances.expected.json");
	json_t *insts = json_object_get(j, "Instances");
	struct gb_ec2_instance_list *l = NULL;
	gb_error_t e;

	(void)state;
	if (gb_ec2_xml_parse_instances(xml, len, &l, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_string_equal(l->request_id, request_id_of(j));
	same_str("run", l->reservation_id, j, "ReservationId");
	same_str("run", l->owner_id, j, "OwnerId");
	assert_null(l->next_token);
	assert_int_equal(l->n, json_array_size(insts));
	for (size_t i = 0; i < l->n; i++)
		check_instance(&l->v[i], json_array_get(insts, i), l->reservation_id);
	/* the network interface's subnet/ip are not taken for the instance's */
	assert_string_equal(l->v[0].subnet_id, "subnet-b2a249da");
	assert_true(l->v[0].launch_epoch == 1324369771.0);
	gb_ec2_instance_list_free(l);
	json_decref(j);
	free(xml);
}

/* launchTime keeps its fraction: a record must not precede its approval. */
static void test_launch_time_fraction(void **state)
{
	struct gb_ec2_instance_list *l = NULL;
	gb_error_t e;

	(void)state;
	if (gb_ec2_xml_parse_instances(LIT("<RunInstancesResponse><requestId>r</requestId>"
		"<instancesSet><item><instanceId>i-1</instanceId>"
		"<launchTime>2026-02-14T08:29:31.250Z</launchTime></item>"
		"<item><instanceId>i-2</instanceId><launchTime>yesterday</launchTime></item>"
		"</instancesSet></RunInstancesResponse>"), &l, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(l->n, 2);
	assert_true(l->v[0].launch_epoch == 1771057771.25);
	assert_true(l->v[1].launch_epoch == 0);
	gb_ec2_instance_list_free(l);
}

static void test_botocore_describe_instances(void **state)
{
	size_t len, k = 0;
	char *xml = slurp("botocore-ec2-describe-instances.xml", &len);
	json_t *j = load_json("botocore-ec2-describe-instances.expected.json");
	json_t *resv = json_object_get(j, "Reservations");
	struct gb_ec2_instance_list *l = NULL;
	gb_error_t e;

	(void)state;
	if (gb_ec2_xml_parse_instances(xml, len, &l, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_string_equal(l->request_id, request_id_of(j));
	for (size_t r = 0; r < json_array_size(resv); r++) {
		json_t *jr = json_array_get(resv, r);
		json_t *insts = json_object_get(jr, "Instances");
		const char *rid = json_string_value(json_object_get(jr, "ReservationId"));

		for (size_t i = 0; i < json_array_size(insts); i++) {
			assert_true(k < l->n);
			check_instance(&l->v[k++], json_array_get(insts, i), rid);
		}
	}
	assert_int_equal(k, l->n);
	assert_true(l->n >= 2);
	assert_string_equal(gb_ec2_instance_tag(&l->v[0], "notebook"), "");
	assert_null(gb_ec2_instance_tag(&l->v[0], "absent"));
	gb_ec2_instance_list_free(l);
	json_decref(j);
	free(xml);
}

static void test_botocore_stop_instances(void **state)
{
	size_t len;
	char *xml = slurp("botocore-ec2-stop-instances.xml", &len);
	json_t *j = load_json("botocore-ec2-stop-instances.expected.json");
	json_t *arr = json_object_get(j, "StoppingInstances");
	struct gb_ec2_state_change_list *l = NULL;
	gb_error_t e;

	(void)state;
	if (gb_ec2_xml_parse_state_changes(xml, len, &l, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_string_equal(l->request_id, request_id_of(j));
	assert_int_equal(l->n, json_array_size(arr));
	for (size_t i = 0; i < l->n; i++) {
		json_t *ji = json_array_get(arr, i);

		same_str("stop", l->v[i].instance_id, ji, "InstanceId");
		same_int("stop", l->v[i].current_code,
			 json_object_get(ji, "CurrentState"), "Code", -1);
		same_str("stop", l->v[i].current_name,
			 json_object_get(ji, "CurrentState"), "Name");
		same_int("stop", l->v[i].previous_code,
			 json_object_get(ji, "PreviousState"), "Code", -1);
		same_str("stop", l->v[i].previous_name,
			 json_object_get(ji, "PreviousState"), "Name");
	}
	gb_ec2_state_change_list_free(l);
	json_decref(j);
	free(xml);
}

static void test_botocore_azs(void **state)
{
	size_t len;
	char *xml = slurp("botocore-ec2-describe-availability-zones.xml", &len);
	json_t *j = load_json("botocore-ec2-describe-availability-zones.expected.json");
	json_t *arr = json_object_get(j, "AvailabilityZones");
	struct gb_ec2_az_list *l = NULL;
	gb_error_t e;

	(void)state;
	if (gb_ec2_xml_parse_azs(xml, len, &l, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_string_equal(l->request_id, request_id_of(j));
	assert_int_equal(l->n, json_array_size(arr));
	for (size_t i = 0; i < l->n; i++) {
		json_t *ji = json_array_get(arr, i);

		same_str("az", l->v[i].zone_name, ji, "ZoneName");
		same_str("az", l->v[i].state, ji, "State");
		same_str("az", l->v[i].region_name, ji, "RegionName");
		same_str("az", l->v[i].zone_id, ji, "ZoneId");
	}
	gb_ec2_az_list_free(l);
	json_decref(j);
	free(xml);
}

static void test_botocore_error(void **state)
{
	size_t len;
	char *xml = slurp("botocore-error-invalid-instance-id-malformed.xml", &len);
	json_t *j = load_json("botocore-error-invalid-instance-id-malformed.expected.json");
	struct gb_ec2_error ae;
	gb_error_t e;

	(void)state;
	memset(&ae, 0, sizeof(ae));
	assert_int_equal(gb_ec2_xml_parse_error(xml, len, &ae, &e), GB_E_OK);
	same_str("error", ae.code, json_object_get(j, "Error"), "Code");
	same_str("error", ae.message, json_object_get(j, "Error"), "Message");
	assert_string_equal(ae.request_id, request_id_of(j));
	json_decref(j);
	free(xml);
}

/* The constructed success samples (no .expected.json: asserted here). */
static void test_constructed_samples(void **state)
{
	struct gb_ec2_state_change_list *sc = NULL;
	struct gb_ec2_offering_list *of = NULL;
	struct gb_ec2_instance_list *il = NULL;
	size_t len;
	char *xml;
	gb_error_t e;

	(void)state;
	xml = slurp("constructed/terminate-instances-response.xml", &len);
	assert_int_equal(gb_ec2_xml_parse_state_changes(xml, len, &sc, &e), GB_E_OK);
	assert_int_equal(sc->n, 2);
	assert_string_equal(sc->v[0].instance_id, "i-0598c7d356eba48d7");
	assert_int_equal(sc->v[0].current_code, 32);
	assert_string_equal(sc->v[0].current_name, "shutting-down");
	assert_int_equal(sc->v[0].previous_code, 16);
	assert_int_equal(sc->v[1].current_code, 48);
	assert_string_equal(sc->v[1].previous_name, "terminated");
	gb_ec2_state_change_list_free(sc);
	free(xml);

	xml = slurp("constructed/describe-instance-type-offerings-page1.xml", &len);
	assert_int_equal(gb_ec2_xml_parse_offerings(xml, len, &of, &e), GB_E_OK);
	assert_int_equal(of->n, 2);
	assert_string_equal(of->next_token, "eyJ2IjoiMiIsImMiOiJwYWdlLTIifQ==");
	assert_string_equal(of->v[1].instance_type, "g6.xlarge");
	assert_string_equal(of->v[1].location_type, "availability-zone");
	assert_string_equal(of->v[1].location, "ap-northeast-1c");
	gb_ec2_offering_list_free(of);
	free(xml);
	xml = slurp("constructed/describe-instance-type-offerings-page2.xml", &len);
	assert_int_equal(gb_ec2_xml_parse_offerings(xml, len, &of, &e), GB_E_OK);
	assert_int_equal(of->n, 1);
	assert_null(of->next_token);
	assert_string_equal(of->v[0].location, "ap-northeast-1d");
	gb_ec2_offering_list_free(of);
	free(xml);
	xml = slurp("constructed/describe-instance-type-offerings-empty.xml", &len);
	assert_int_equal(gb_ec2_xml_parse_offerings(xml, len, &of, &e), GB_E_OK);
	assert_int_equal(of->n, 0);
	assert_string_equal(of->request_id, "6b8e2a4c-3333-4a4a-9b9b-0123456789ab");
	gb_ec2_offering_list_free(of);
	free(xml);

	xml = slurp("constructed/run-instances-response-partial.xml", &len);
	assert_int_equal(gb_ec2_xml_parse_instances(xml, len, &il, &e), GB_E_OK);
	assert_int_equal(il->n, 2);
	assert_string_equal(il->reservation_id, "r-0a1b2c3d4e5f67890");
	for (size_t i = 0; i < 2; i++) {
		assert_string_equal(il->v[i].client_token,
				    "req0001-ap-northeast-1-s0-0-1a2b3c4d");
		assert_string_equal(il->v[i].availability_zone, "ap-northeast-1a");
		assert_string_equal(il->v[i].state_name, "pending");
		assert_int_equal(il->v[i].ami_launch_index, (int)i);
		assert_null(il->v[i].public_ip);
		assert_string_equal(il->v[i].public_dns, "");
		assert_string_equal(gb_ec2_instance_tag(&il->v[i], "Project"),
				    "gpu-scheduler");
	}
	assert_string_equal(il->v[1].private_ip, "10.1.0.22");
	gb_ec2_instance_list_free(il);
	free(xml);
}

static enum gb_ec2_class class_from_name(const char *s)
{
	static const char *const names[] = { "NONE", "CAPACITY", "QUOTA", "THROTTLE",
					     "CONFIG", "AUTH", "TRANSIENT", "REGION" };

	for (size_t i = 0; i < GB_ARRAY_LEN(names); i++) {
		if (!strcmp(s, names[i]))
			return (enum gb_ec2_class)i;
	}
	fail_msg("unknown class %s in the manifest", s);
	return GB_EC2_CLASS_NONE;
}

/*
 * The manifest's classes are the research's coarse ones; gpuburst splits
 * CAPACITY (a subnet without addresses, an AZ without the type) and CONFIG
 * (a ClientToken of an earlier request) further, for the orchestrator.
 */
static enum gb_ec2_class coarse(enum gb_ec2_class c)
{
	switch (c) {
	case GB_EC2_CLASS_ADDRESSES:
	case GB_EC2_CLASS_UNSUPPORTED:
		return GB_EC2_CLASS_CAPACITY;
	case GB_EC2_CLASS_IDEMPOTENT:
		return GB_EC2_CLASS_CONFIG;
	default:
		return c;
	}
}

/* Every row of errors-manifest.tsv: code read, class as listed. */
static void test_errors_manifest(void **state)
{
	size_t len, rows = 0;
	char *tsv = slurp("errors-manifest.tsv", &len);
	char *save = NULL;

	(void)state;
	for (char *line = strtok_r(tsv, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *f[5] = { 0 };
		char *p = line, *xml;
		size_t n = 0, xlen;
		struct gb_ec2_error ae;
		gb_error_t e;
		long status;
		bool known = false;

		if (*line == '#')
			continue;
		while (n < 5 && p) {
			f[n++] = p;
			p = strchr(p, '\t');
			if (p)
				*p++ = '\0';
		}
		assert_int_equal(n, 5);
		assert_int_equal(gb_parse_long(f[2], 100, 599, &status), GB_E_OK);
		xml = slurp(f[0], &xlen);
		memset(&ae, 0, sizeof(ae));
		if (gb_ec2_xml_parse_error(xml, xlen, &ae, &e) != GB_E_OK)
			fail_msg("%s: %s", f[0], e.text);
		assert_string_equal(ae.code, f[1]);
		assert_true(ae.message[0] != '\0');
		assert_true(ae.request_id[0] != '\0');
		if (coarse(gb_ec2_classify(ae.code, status, &known)) != class_from_name(f[3]))
			fail_msg("%s: %s classified %s, manifest says %s", f[0], ae.code,
				 gb_ec2_class_name(gb_ec2_classify(ae.code, status, NULL)),
				 f[3]);
		assert_true(known);
		/* an error body is never mistaken for a success */
		{
			struct gb_ec2_instance_list *il = NULL;

			assert_int_equal(gb_ec2_xml_parse_instances(xml, xlen, &il, &e),
					 GB_E_PARSE);
			assert_non_null(strstr(e.text, "error envelope"));
			assert_null(il);
		}
		free(xml);
		rows++;
	}
	assert_int_equal(rows, 18);
	free(tsv);
}

/* botocore's EC2 protocol output vectors: errors read, successes are not errors. */
static void test_protocol_vectors(void **state)
{
	json_t *suites = load_json("protocol-tests/botocore-protocol-output-ec2.json");
	size_t n_err = 0, n_ok = 0, i, k;
	json_t *s, *c;

	(void)state;
	json_array_foreach(suites, i, s) {
		json_array_foreach(json_object_get(s, "cases"), k, c) {
			json_t *resp = json_object_get(c, "response");
			const char *body = json_string_value(json_object_get(resp, "body"));
			long status = (long)json_integer_value(json_object_get(resp, "status_code"));
			struct gb_ec2_error ae;
			gb_error_t e;

			if (!body || !*body)
				continue;
			memset(&ae, 0, sizeof(ae));
			if (status >= 400) {
				assert_int_equal(gb_ec2_xml_parse_error(body, strlen(body),
									&ae, &e), GB_E_OK);
				assert_string_equal(ae.code, json_string_value(
					json_object_get(c, "errorCode")));
				assert_string_equal(ae.message, "Hi");
				assert_string_equal(ae.request_id, "foo-id");
				n_err++;
			} else {
				assert_int_equal(gb_ec2_xml_parse_error(body, strlen(body),
									&ae, &e),
						 GB_E_NOTFOUND);
				n_ok++;
			}
		}
	}
	assert_int_equal(n_err, 2);
	assert_true(n_ok >= 20);
	json_decref(suites);
}

/* Run every parser on [body]; RET how many accepted it. */
static int parse_all(const char *body, size_t len)
{
	struct gb_ec2_instance_list *il = NULL;
	struct gb_ec2_state_change_list *sc = NULL;
	struct gb_ec2_offering_list *of = NULL;
	struct gb_ec2_az_list *az = NULL;
	struct gb_ec2_error ae;
	char *rid = NULL;
	gb_error_t e;
	int ok = 0;
	gb_err_t rc;

	rc = gb_ec2_xml_parse_error(body, len, &ae, &e);
	assert_true(rc == GB_E_OK || rc == GB_E_NOTFOUND || rc == GB_E_PARSE);
	if (rc)
		assert_true(e.text[0] != '\0');
	ok += rc == GB_E_OK;
	rc = gb_ec2_xml_parse_instances(body, len, &il, &e);
	assert_true(rc == GB_E_OK || (rc == GB_E_PARSE && !il && e.text[0]));
	ok += rc == GB_E_OK;
	gb_ec2_instance_list_free(il);
	rc = gb_ec2_xml_parse_state_changes(body, len, &sc, &e);
	assert_true(rc == GB_E_OK || (rc == GB_E_PARSE && !sc));
	ok += rc == GB_E_OK;
	gb_ec2_state_change_list_free(sc);
	rc = gb_ec2_xml_parse_offerings(body, len, &of, &e);
	assert_true(rc == GB_E_OK || (rc == GB_E_PARSE && !of));
	ok += rc == GB_E_OK;
	gb_ec2_offering_list_free(of);
	rc = gb_ec2_xml_parse_azs(body, len, &az, &e);
	assert_true(rc == GB_E_OK || (rc == GB_E_PARSE && !az));
	ok += rc == GB_E_OK;
	gb_ec2_az_list_free(az);
	rc = gb_ec2_xml_parse_ack(body, len, "CreateTagsResponse", &rid, &e);
	assert_true(rc == GB_E_OK || rc == GB_E_PARSE);
	ok += rc == GB_E_OK;
	free(rid);
	return ok;
}

static void expect_parse_error(const char *body, size_t len, const char *msg)
{
	struct gb_ec2_instance_list *il = NULL;
	gb_error_t e;

	assert_int_equal(gb_ec2_xml_parse_instances(body, len, &il, &e), GB_E_PARSE);
	assert_null(il);
	if (!strstr(e.text, msg))
		fail_msg("\"%s\" lacks \"%s\"", e.text, msg);
	assert_int_equal(parse_all(body, len), 0);
}

static void test_bad_bodies(void **state)
{
	static const char *const dtd_bomb =
		"<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [<!ENTITY lol \"lol\">"
		"<!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">"
		"<!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">]>"
		"<DescribeInstancesResponse><requestId>&lol3;</requestId>"
		"</DescribeInstancesResponse>";
	static const char *const xxe =
		"<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
		"<Response><Errors><Error><Code>&x;</Code></Error></Errors></Response>";
	struct gb_buf deep = GB_BUF_INIT;
	char *huge;
	gb_error_t e;
	struct gb_ec2_error ae;

	(void)state;
	expect_parse_error(LIT(""), "empty response body");
	expect_parse_error(NULL, 0, "empty response body");
	expect_parse_error(LIT("   \n"), "not well-formed XML");
	expect_parse_error(LIT("Service Unavailable"), "not well-formed XML");
	expect_parse_error(LIT("{\"Reservations\": []}"), "not well-formed XML");
	expect_parse_error(LIT("<html><body>502 Bad Gateway</body></html>"),
			   "expected RunInstancesResponse or DescribeInstancesResponse, got <html>");
	expect_parse_error(LIT("<DescribeInstancesResponse><reservationSet>"),
			   "not well-formed XML (line 1");
	expect_parse_error(LIT("<a></b>"), "not well-formed");
	expect_parse_error(LIT("<a>\xff\xfe</a>"), "not well-formed");
	expect_parse_error(LIT("<a>&undefined;</a>"), "not well-formed");
	/* any document with a DTD is refused before libxml2 reads it (its own
	 * amplification guard differs between releases) */
	expect_parse_error(dtd_bomb, strlen(dtd_bomb), "DTD");
	expect_parse_error(LIT("<?xml version=\"1.0\"?><!-- <a> --><?pi x?>\n<!DOCTYPE r><r/>"), "DTD");
	expect_parse_error(LIT("<!DOCTYPE r [<!ENTITY a \"x\">]><DescribeInstancesResponse>"
			       "<requestId>&a;</requestId></DescribeInstancesResponse>"),
			   "DTD");
	expect_parse_error(xxe, strlen(xxe), "DTD");
	assert_int_equal(gb_ec2_xml_parse_error(xxe, strlen(xxe), &ae, &e), GB_E_PARSE);
	/* a NUL inside: the length counts, not the terminator */
	expect_parse_error(LIT("<a>\0</a>"), "not well-formed");
	/* 100000 levels of nesting: refused by libxml2's depth limit */
	for (int i = 0; i < 100000; i++)
		gb_buf_puts(&deep, "<a>");
	expect_parse_error(deep.data, deep.len, "not well-formed");
	gb_buf_free(&deep);
	/* over the size limit: refused before parsing */
	huge = malloc(GB_EC2_XML_MAX + 1);
	assert_non_null(huge);
	memset(huge, ' ', GB_EC2_XML_MAX + 1);
	memcpy(huge, "<DescribeInstancesResponse/>", 28);
	expect_parse_error(huge, GB_EC2_XML_MAX + 1, "over the");
	/*
	 * At the limit it reaches libxml2 (which has its own limits: 16 MiB
	 * of blanks are a "huge input lookup" to it); either way, an answer.
	 */
	{
		struct gb_ec2_instance_list *il = NULL;
		gb_err_t rc = gb_ec2_xml_parse_instances(huge, GB_EC2_XML_MAX, &il, &e);

		assert_true(rc == GB_E_OK || rc == GB_E_PARSE);
		if (rc)
			assert_null(strstr(e.text, "over the"));
		gb_ec2_instance_list_free(il);
	}
	free(huge);
	/* items without their identifying element */
	expect_parse_error(LIT("<RunInstancesResponse><instancesSet><item><imageId>x</imageId>"
			   "</item></instancesSet></RunInstancesResponse>"),
			   "without <instanceId>");
	expect_parse_error(LIT("<RunInstancesResponse><requestId>r</requestId></RunInstancesResponse>"), "without <instancesSet>");
	expect_parse_error(LIT("<RunInstancesResponse><instancesSet><item><instanceId>i-1</instanceId>"
			   "<tagSet><item><value>v</value></item></tagSet></item></instancesSet>"
			   "</RunInstancesResponse>"), "tag without a key");
	/* an envelope without a Code, and an empty Code */
	assert_int_equal(gb_ec2_xml_parse_error(LIT("<Response><Errors><Error><Message>m</Message>"
						"</Error></Errors></Response>"), &ae, &e),
			 GB_E_PARSE);
	assert_int_equal(gb_ec2_xml_parse_error(LIT("<Response><Errors><Error><Code/>"
						"</Error></Errors></Response>"), &ae, &e),
			 GB_E_PARSE);
}

/* Every prefix and many corruptions of every sample: an answer, no crash. */
static void test_truncated_and_mangled(void **state)
{
	static const char *const files[] = {
		"botocore-ec2-run-instances.xml", "botocore-ec2-describe-instances.xml",
		"botocore-ec2-stop-instances.xml",
		"botocore-ec2-describe-availability-zones.xml",
		"constructed/describe-instance-type-offerings-page1.xml",
		"constructed/run-instances-response-partial.xml",
		"observed/error-insufficient-instance-capacity.xml",
	};
	size_t checked = 0;

	(void)state;
	for (size_t f = 0; f < GB_ARRAY_LEN(files); f++) {
		size_t len;
		char *xml = slurp(files[f], &len);
		size_t end = len;

		while (end > 0 && (xml[end - 1] == '\n' || xml[end - 1] == ' '))
			end--;
		assert_true(parse_all(xml, len) >= 1);
		/* a document cut before its end is never accepted */
		for (size_t cut = 0; cut < end; cut++) {
			assert_int_equal(parse_all(xml, cut), 0);
			checked++;
		}
		/* flip bytes: whatever comes out, nothing crashes or leaks */
		for (size_t pos = 0; pos < len; pos += 3) {
			char saved = xml[pos];

			xml[pos] = (char)(saved ^ 0x5a);
			parse_all(xml, len);
			xml[pos] = saved;
			checked++;
		}
		free(xml);
	}
	assert_true(checked > 5000);
}

static void test_namespaces(void **state)
{
	static const char *const docs[] = {
		"<DescribeAvailabilityZonesResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">"
		"<availabilityZoneInfo><item><zoneName>z1</zoneName><zoneId>use1-az1</zoneId>"
		"</item></availabilityZoneInfo></DescribeAvailabilityZonesResponse>",
		"<e:DescribeAvailabilityZonesResponse xmlns:e=\"urn:x\"><e:availabilityZoneInfo>"
		"<e:item><e:zoneName>z1</e:zoneName><e:zoneId>use1-az1</e:zoneId></e:item>"
		"</e:availabilityZoneInfo></e:DescribeAvailabilityZonesResponse>",
		"<?xml version='1.0' encoding='UTF-8'?><DescribeAvailabilityZonesResponse>"
		"<availabilityZoneInfo><item><zoneName><![CDATA[z1]]></zoneName><zoneId>use1-az1</zoneId>"
		"</item><junk/></availabilityZoneInfo></DescribeAvailabilityZonesResponse>",
	};

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(docs); i++) {
		struct gb_ec2_az_list *l = NULL;
		gb_error_t e;

		if (gb_ec2_xml_parse_azs(docs[i], strlen(docs[i]), &l, &e) != GB_E_OK)
			fail_msg("doc %zu: %s", i, e.text);
		assert_int_equal(l->n, 1);
		assert_string_equal(l->v[0].zone_name, "z1");
		assert_string_equal(l->v[0].zone_id, "use1-az1");
		assert_null(l->v[0].state);
		assert_null(l->request_id);
		gb_ec2_az_list_free(l);
	}
	/* CreateTags acknowledgement */
	{
		char *rid = NULL;
		gb_error_t e;

		assert_int_equal(gb_ec2_xml_parse_ack(
			LIT("<CreateTagsResponse xmlns=\"x\"><requestId>abc</requestId><return>true</return>"
			"</CreateTagsResponse>"), "CreateTagsResponse", &rid, &e), GB_E_OK);
		assert_string_equal(rid, "abc");
		free(rid);
		assert_int_equal(gb_ec2_xml_parse_ack(
			LIT("<CreateTagsResponse><return>false</return></CreateTagsResponse>"),
			"CreateTagsResponse", NULL, &e), GB_E_PARSE);
		/* an ErrorResponse-style envelope is read too */
		struct gb_ec2_error ae;

		assert_int_equal(gb_ec2_xml_parse_error(
			LIT("<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code>"
			"<Message>Rate exceeded</Message></Error><RequestId>r-1</RequestId>"
			"</ErrorResponse>"), &ae, &e), GB_E_OK);
		assert_string_equal(ae.code, "Throttling");
		assert_string_equal(ae.request_id, "r-1");
	}
}

static void test_classification(void **state)
{
	static const struct {
		const char *code;
		long status;
		enum gb_ec2_class cls;
		bool known;
	} cases[] = {
		{ "InsufficientInstanceCapacity", 500, GB_EC2_CLASS_CAPACITY, true },
		{ "InsufficientFreeAddressesInSubnet", 400, GB_EC2_CLASS_ADDRESSES, true },
		{ "Unsupported", 400, GB_EC2_CLASS_UNSUPPORTED, true },
		{ "IdempotentParameterMismatch", 400, GB_EC2_CLASS_IDEMPOTENT, true },
		{ "Client.IdempotentInstanceTerminated", 400, GB_EC2_CLASS_IDEMPOTENT, true },
		{ "Server.InsufficientInstanceCapacity", 500, GB_EC2_CLASS_CAPACITY, true },
		{ "InsufficientHostCapacity", 500, GB_EC2_CLASS_CAPACITY, true },
		{ "SpotMaxPriceTooLow", 400, GB_EC2_CLASS_CAPACITY, true },
		{ "MaxSpotInstanceCountExceeded", 400, GB_EC2_CLASS_QUOTA, true },
		{ "RequestLimitExceeded", 503, GB_EC2_CLASS_THROTTLE, true },
		{ "Client.RequestLimitExceeded", 503, GB_EC2_CLASS_THROTTLE, true },
		{ "Throttling", 400, GB_EC2_CLASS_THROTTLE, true },
		{ "InvalidSubnetId.NotFound", 400, GB_EC2_CLASS_CONFIG, true },
		{ "InvalidAMIID.Malformed", 400, GB_EC2_CLASS_CONFIG, true },
		{ "RequestExpired", 400, GB_EC2_CLASS_AUTH, true },
		{ "SignatureDoesNotMatch", 403, GB_EC2_CLASS_AUTH, true },
		{ "ServiceUnavailable", 503, GB_EC2_CLASS_TRANSIENT, true },
		{ "InternalFailure", 500, GB_EC2_CLASS_TRANSIENT, true },
		/* issue 17: limits of one request, not of the region */
		{ "ResourceCountExceeded", 400, GB_EC2_CLASS_CONFIG, true },
		{ "TagLimitExceeded", 400, GB_EC2_CLASS_CONFIG, true },
		{ "SecurityGroupsPerInstanceLimitExceeded", 400, GB_EC2_CLASS_CONFIG, true },
		{ "ConcurrentTagAccess", 400, GB_EC2_CLASS_TRANSIENT, true },
		{ "InsufficientReservedInstancesCapacity", 500, GB_EC2_CLASS_CAPACITY, true },
		/* issue 19: placement groups and EFA interfaces */
		{ "InvalidPlacementGroup.Duplicate", 400, GB_EC2_CLASS_CONFIG, true },
		{ "InvalidPlacementGroup.InUse", 400, GB_EC2_CLASS_CONFIG, true },
		{ "InvalidPlacementGroup.Unknown", 400, GB_EC2_CLASS_CONFIG, true },
		{ "PlacementGroupLimitExceeded", 400, GB_EC2_CLASS_QUOTA, true },
		{ "InvalidParameterCombination", 400, GB_EC2_CLASS_CONFIG, true },
		{ "InvalidParameterValue", 400, GB_EC2_CLASS_CONFIG, true },
		/* the capacity ladder: reservations and Capacity Blocks */
		{ "ReservationCapacityExceeded", 400, GB_EC2_CLASS_CAPACITY, true },
		{ "InvalidCapacityReservationId.NotFound", 400, GB_EC2_CLASS_CONFIG, true },
		{ "InvalidCapacityReservationId.Malformed", 400, GB_EC2_CLASS_CONFIG, true },
		/* the account may not use this region */
		{ "OptInRequired", 401, GB_EC2_CLASS_REGION, true },
		{ "PendingVerification", 401, GB_EC2_CLASS_REGION, true },
		{ "AuthFailure", 401, GB_EC2_CLASS_REGION, true },
		{ "UnauthorizedOperation", 403, GB_EC2_CLASS_REGION, true },
		{ "Client.UnauthorizedOperation", 403, GB_EC2_CLASS_REGION, true },
		/* the same everywhere: the credentials */
		{ "InvalidClientTokenId", 403, GB_EC2_CLASS_AUTH, true },
		{ "IncompleteSignature", 400, GB_EC2_CLASS_AUTH, true },
		{ "MissingAuthenticationToken", 403, GB_EC2_CLASS_AUTH, true },
		{ "ExpiredToken", 400, GB_EC2_CLASS_AUTH, true },
		/* unknown codes: by name, then by status */
		{ "InsufficientGpuCapacity", 500, GB_EC2_CLASS_CAPACITY, false },
		{ "SomethingThrottled", 400, GB_EC2_CLASS_THROTTLE, false },
		{ "GpuLimitExceeded", 400, GB_EC2_CLASS_QUOTA, false },
		{ "InvalidFoo.NotFound", 400, GB_EC2_CLASS_CONFIG, false },
		{ "Bar.Malformed", 400, GB_EC2_CLASS_CONFIG, false },
		{ "UnauthorizedThing", 400, GB_EC2_CLASS_AUTH, false },
		{ "TokenHasExpired", 400, GB_EC2_CLASS_AUTH, false },
		{ "Mystery", 503, GB_EC2_CLASS_TRANSIENT, false },
		{ "Mystery", 500, GB_EC2_CLASS_TRANSIENT, false },
		{ "Mystery", 400, GB_EC2_CLASS_CONFIG, false },
		{ "Mystery", 429, GB_EC2_CLASS_THROTTLE, false },
		{ "Mystery", 403, GB_EC2_CLASS_AUTH, false },
		{ "Mystery", 200, GB_EC2_CLASS_CONFIG, false },
		{ "", 502, GB_EC2_CLASS_TRANSIENT, false },
		{ NULL, 401, GB_EC2_CLASS_AUTH, false },
	};
	struct gb_log_opts lo = { .level = GB_LOG_DEBUG, .no_stderr = true };
	char logpath[] = "/tmp/gb-test-ec2-log-XXXXXX";
	char *log = NULL;
	gb_error_t e;
	int fd;

	(void)state;
	fd = mkstemp(logpath);
	assert_true(fd >= 0);
	close(fd);
	lo.file = logpath;
	assert_int_equal(gb_log_open("test_ec2_xml", &lo, &e), GB_E_OK);
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		bool known = !cases[i].known;
		enum gb_ec2_class c = gb_ec2_classify(cases[i].code, cases[i].status,
						      &known);

		if (c != cases[i].cls || known != cases[i].known)
			fail_msg("%s/%ld: %s known=%d", cases[i].code ? cases[i].code : "(null)",
				 cases[i].status, gb_ec2_class_name(c), known);
	}
	gb_log_close();
	assert_int_equal(gb_file_read(logpath, 1 << 20, &log, NULL, &e), GB_E_OK);
	/* the default is logged for unknown codes, not for known ones */
	assert_non_null(strstr(log, "ec2_unknown_code code=Mystery status=503 class=TRANSIENT"));
	assert_non_null(strstr(log, "ec2_unknown_code code=InsufficientGpuCapacity status=500 class=CAPACITY"));
	assert_null(strstr(log, "code=Throttling"));
	free(log);
	unlink(logpath);

	assert_int_equal(gb_ec2_class_err(GB_EC2_CLASS_CAPACITY), GB_E_CAPACITY);
	assert_int_equal(gb_ec2_class_err(GB_EC2_CLASS_ADDRESSES), GB_E_CAPACITY);
	assert_int_equal(gb_ec2_class_err(GB_EC2_CLASS_UNSUPPORTED), GB_E_CAPACITY);
	assert_int_equal(gb_ec2_class_err(GB_EC2_CLASS_IDEMPOTENT), GB_E_CLOUDCONFIG);
	assert_string_equal(gb_ec2_class_name(GB_EC2_CLASS_ADDRESSES), "ADDRESSES");
	assert_int_equal(gb_ec2_class_err(GB_EC2_CLASS_QUOTA), GB_E_QUOTA);
	assert_int_equal(gb_ec2_class_err(GB_EC2_CLASS_THROTTLE), GB_E_THROTTLE);
	assert_int_equal(gb_ec2_class_err(GB_EC2_CLASS_CONFIG), GB_E_CLOUDCONFIG);
	assert_int_equal(gb_ec2_class_err(GB_EC2_CLASS_AUTH), GB_E_AUTH);
	assert_int_equal(gb_ec2_class_err(GB_EC2_CLASS_REGION), GB_E_AUTH);
	assert_int_equal(gb_ec2_class_err(GB_EC2_CLASS_TRANSIENT), GB_E_TRANSIENT);
	assert_int_equal(gb_ec2_class_err(GB_EC2_CLASS_NONE), GB_E_OK);
	assert_true(gb_ec2_class_retryable(GB_EC2_CLASS_THROTTLE));
	assert_true(gb_ec2_class_retryable(GB_EC2_CLASS_TRANSIENT));
	assert_false(gb_ec2_class_retryable(GB_EC2_CLASS_CAPACITY));
	assert_false(gb_ec2_class_retryable(GB_EC2_CLASS_QUOTA));
	assert_false(gb_ec2_class_retryable(GB_EC2_CLASS_AUTH));
	assert_false(gb_ec2_class_retryable(GB_EC2_CLASS_REGION));
	assert_string_equal(gb_ec2_class_name(GB_EC2_CLASS_QUOTA), "QUOTA");
	assert_string_equal(gb_ec2_class_name(GB_EC2_CLASS_REGION), "REGION");
}

/* ---- request bodies ---------------------------------------------------- */

static void same_form(const char *rel, const struct gb_buf *b)
{
	size_t len;
	char *want = slurp(rel, &len);

	if (strcmp(gb_buf_str(b), want) != 0)
		fail_msg("%s\n--- ours\n%s\n--- file\n%s", rel, gb_buf_str(b), want);
	free(want);
}

static void test_form_bodies(void **state)
{
	static const char *const sgs[] = { "sg-0123456789abcdef0" };
	static const struct gb_ec2_kv tags[] = { { "Project", "gpu-scheduler" },
						 { "RequestId", "req0001" } };
	static const struct gb_ec2_tag_spec ts[] = { { "instance", tags, 2 } };
	static const char *const types[] = { "g6.xlarge" };
	static const struct gb_ec2_filter f[] = { { "instance-type", types, 1 } };
	static const char ud[] = "#!/bin/bash\necho hello\n";
	struct gb_ec2_run_params rp = {
		.image_id = "ami-025ece6a3a0e7558f", .instance_type = "g6.xlarge",
		.min_count = 1, .max_count = 4,
		.subnet_id = "subnet-0c82087f981728760",
		.security_group_ids = sgs, .n_security_group_ids = 1,
		.key_name = "gpu-key-ap-northeast-1",
		.iam_instance_profile_name = "gpu-worker",
		.tag_specs = ts, .n_tag_specs = 1,
		.user_data = ud, .user_data_len = sizeof(ud) - 1,
	};
	struct gb_ec2_run_params spot = {
		.image_id = "ami-025ece6a3a0e7558f", .instance_type = "g6.xlarge",
		.min_count = 1, .max_count = 1,
		.subnet_id = "subnet-0c82087f981728760", .spot = true,
		.spot_instance_type = "one-time", .spot_interruption = "terminate",
	};
	struct gb_ec2_offerings_params op = { "availability-zone", f, 1, 5 };
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_ec2_form_run_instances(
		&rp, "req0001-ap-northeast-1-s0-0-1a2b3c4d", &b, &e), GB_E_OK);
	same_form("constructed/run-instances-request-gpu.form.txt", &b);
	gb_buf_reset(&b);
	assert_int_equal(gb_ec2_form_run_instances(&spot, "req0002-spot-0", &b, &e),
			 GB_E_OK);
	same_form("constructed/run-instances-request-spot.form.txt", &b);
	gb_buf_reset(&b);
	assert_int_equal(gb_ec2_form_describe_instance_type_offerings(&op, NULL, &b, &e),
			 GB_E_OK);
	same_form("constructed/describe-instance-type-offerings-request.form.txt", &b);
	gb_buf_free(&b);
}

static void test_form_more(void **state)
{
	static const char *const ids[] = { "i-1", "i-2" };
	static const char *const vals[] = { "a b", "c&d=e" };
	static const struct gb_ec2_filter f[] = { { "tag:gpuburst:cluster", vals, 2 },
						  { "instance-state-name", ids, 1 } };
	static const struct gb_ec2_kv tags[] = { { "gpuburst:node", "g5-1" },
						 { "empty", NULL } };
	struct gb_ec2_describe_params dp = { NULL, 0, f, 2, 50 };
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_ec2_form_describe_instances(&dp, "tok/+=", &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b),
			    "Action=DescribeInstances&Version=2016-11-15"
			    "&Filter.1.Name=tag%3Agpuburst%3Acluster&Filter.1.Value.1=a%20b"
			    "&Filter.1.Value.2=c%26d%3De&Filter.2.Name=instance-state-name"
			    "&Filter.2.Value.1=i-1&MaxResults=50&NextToken=tok%2F%2B%3D");
	gb_buf_reset(&b);
	/* with instance ids MaxResults is not allowed: left out */
	dp.instance_ids = ids;
	dp.n_instance_ids = 2;
	dp.n_filters = 0;
	assert_int_equal(gb_ec2_form_describe_instances(&dp, NULL, &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DescribeInstances&Version=2016-11-15"
			    "&InstanceId.1=i-1&InstanceId.2=i-2");
	gb_buf_reset(&b);
	assert_int_equal(gb_ec2_form_describe_instances(NULL, NULL, &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DescribeInstances&Version=2016-11-15");
	gb_buf_reset(&b);
	assert_int_equal(gb_ec2_form_terminate_instances(ids, 2, &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=TerminateInstances&Version=2016-11-15"
			    "&InstanceId.1=i-1&InstanceId.2=i-2");
	gb_buf_reset(&b);
	assert_int_equal(gb_ec2_form_create_tags(ids, 1, tags, 2, &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=CreateTags&Version=2016-11-15"
			    "&ResourceId.1=i-1&Tag.1.Key=gpuburst%3Anode&Tag.1.Value=g5-1"
			    "&Tag.2.Key=empty&Tag.2.Value=");
	gb_buf_reset(&b);
	assert_int_equal(gb_ec2_form_describe_availability_zones(NULL, 0, &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b),
			    "Action=DescribeAvailabilityZones&Version=2016-11-15");
	gb_buf_free(&b);
}

static void test_form_rejects(void **state)
{
	static const char *const empty_sg[] = { "" };
	static char big_ud[GB_EC2_USER_DATA_MAX + 1];
	char long_token[80];
	struct gb_ec2_run_params ok = { .image_id = "ami-1", .instance_type = "g5.xlarge",
					.min_count = 1, .max_count = 1 };
	struct gb_ec2_run_params p;
	struct gb_buf b = GB_BUF_INIT;
	static const char *ids[GB_EC2_TERMINATE_BATCH + 1];
	struct gb_ec2_describe_params dp = { .max_results = 3 };
	struct gb_ec2_filter nov = { "x", NULL, 0 };
	gb_error_t e;

	(void)state;
	memset(long_token, 'a', sizeof(long_token));
	long_token[GB_EC2_CLIENT_TOKEN_MAX + 1] = '\0';
	p = ok;
	p.image_id = NULL;
	assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_INVALID);
	assert_string_equal(e.text, "RunInstances: ImageId is required");
	p = ok;
	p.min_count = 3;
	p.max_count = 2;
	assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_INVALID);
	p = ok;
	p.min_count = 0;
	assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_INVALID);
	p = ok;
	p.security_group_ids = empty_sg;
	p.n_security_group_ids = 1;
	assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_INVALID);
	p = ok;
	p.user_data = big_ud;
	p.user_data_len = sizeof(big_ud);
	assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_INVALID);
	p = ok;
	assert_int_equal(gb_ec2_form_run_instances(&p, long_token, &b, &e), GB_E_INVALID);
	assert_int_equal(gb_ec2_form_run_instances(&p, "has space", &b, &e), GB_E_INVALID);
	assert_int_equal(gb_ec2_form_run_instances(&p, "", &b, &e), GB_E_INVALID);
	long_token[GB_EC2_CLIENT_TOKEN_MAX] = '\0';
	assert_int_equal(gb_ec2_form_run_instances(&p, long_token, &b, &e), GB_E_OK);
	gb_buf_reset(&b);
	for (size_t i = 0; i < GB_ARRAY_LEN(ids); i++)
		ids[i] = "i-x";
	assert_int_equal(gb_ec2_form_terminate_instances(ids, GB_EC2_TERMINATE_BATCH + 1,
							 &b, &e), GB_E_INVALID);
	assert_int_equal(gb_ec2_form_terminate_instances(ids, 0, &b, &e), GB_E_INVALID);
	assert_int_equal(gb_ec2_form_describe_instances(&dp, NULL, &b, &e), GB_E_INVALID);
	dp.max_results = 0;
	dp.filters = &nov;
	dp.n_filters = 1;
	assert_int_equal(gb_ec2_form_describe_instances(&dp, NULL, &b, &e), GB_E_INVALID);
	assert_int_equal(gb_ec2_form_create_tags(ids, 1, NULL, 0, &b, &e), GB_E_INVALID);
	gb_buf_free(&b);
}

/* ---- issue 19: instance types, placement groups, security groups ------- */

static void test_instance_types_parse(void **state)
{
	struct gb_ec2_instance_type_list *l = NULL;
	const struct gb_ec2_instance_type *t;
	size_t len;
	char *xml = slurp("constructed/describe-instance-types-page1.xml", &len);
	gb_error_t e;

	(void)state;
	if (gb_ec2_xml_parse_instance_types(xml, len, &l, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(l->n, 2);
	assert_string_equal(l->request_id, "2d0c7f2a-5b8e-4c51-9a57-0d1f3e6b7a01");
	assert_string_equal(l->next_token, "eyJ2IjoiMSIsImMiOiJpdC0yIn0=");
	t = &l->v[0];
	assert_string_equal(t->instance_type, "p5.48xlarge");
	assert_int_equal(t->vcpus, 192);
	assert_int_equal(t->memory_mib, 2097152);
	assert_string_equal(t->arch, "x86_64");
	assert_string_equal(t->gpu_name, "H100");
	assert_string_equal(t->gpu_maker, "NVIDIA");
	assert_int_equal(t->gpus, 8);
	assert_int_equal(t->gpu_memory_mib, 81920);
	assert_int_equal(t->gpu_total_memory_mib, 655360);
	assert_true(t->efa);
	assert_int_equal(t->efa_max_interfaces, 32);
	assert_int_equal(t->network_cards, 32);
	assert_int_equal(t->max_interfaces, 64);
	assert_true(t->cluster_placement);
	/* no GPU, no EFA, no cluster placement */
	t = &l->v[1];
	assert_string_equal(t->instance_type, "m7i.large");
	assert_int_equal(t->vcpus, 2);
	assert_int_equal(t->memory_mib, 8192);
	assert_null(t->gpu_name);
	assert_null(t->gpu_maker);
	assert_int_equal(t->gpus, 0);
	assert_int_equal(t->gpu_memory_mib, 0);
	assert_int_equal(t->gpu_total_memory_mib, 0);
	assert_false(t->efa);
	assert_int_equal(t->efa_max_interfaces, 0);
	assert_int_equal(t->network_cards, 1);
	assert_int_equal(t->max_interfaces, 3);
	assert_false(t->cluster_placement);
	gb_ec2_instance_type_list_free(l);
	free(xml);
	xml = slurp("constructed/describe-instance-types-page2.xml", &len);
	assert_int_equal(gb_ec2_xml_parse_instance_types(xml, len, &l, &e), GB_E_OK);
	assert_int_equal(l->n, 1);
	assert_null(l->next_token);
	assert_string_equal(l->v[0].gpu_name, "L4");
	assert_int_equal(l->v[0].gpu_memory_mib, 22888);
	assert_true(l->v[0].cluster_placement);
	gb_ec2_instance_type_list_free(l);
	free(xml);
	gb_ec2_instance_type_list_free(NULL);
}

#define IT_ITEM(inner) \
	"<DescribeInstanceTypesResponse><instanceTypeSet><item>" inner \
	"</item></instanceTypeSet></DescribeInstanceTypesResponse>"

static void test_instance_types_bad(void **state)
{
	static const struct {
		const char *xml;
		gb_err_t rc;
		const char *text;
	} cases[] = {
		{ IT_ITEM("<vCpuInfo><defaultVCpus>4</defaultVCpus></vCpuInfo>"), GB_E_CLOUD,
		  "instance type item 1 without <instanceType>" },
		{ IT_ITEM("<instanceType></instanceType>"), GB_E_CLOUD,
		  "instance type item 1 without <instanceType>" },
		{ IT_ITEM("<instanceType>p5.48xlarge</instanceType>"
			  "<vCpuInfo><defaultVCpus>lots</defaultVCpus></vCpuInfo>"), GB_E_CLOUD,
		  "instance type p5.48xlarge: <vCpuInfo/defaultVCpus> 'lots' is not a number in 0..2147483647" },
		{ IT_ITEM("<instanceType>g6.xlarge</instanceType>"
			  "<memoryInfo><sizeInMiB>-16384</sizeInMiB></memoryInfo>"), GB_E_CLOUD,
		  "instance type g6.xlarge: <memoryInfo/sizeInMiB> '-16384' is not a number" },
		{ IT_ITEM("<instanceType>g6.xlarge</instanceType><gpuInfo><gpus><item>"
			  "<name>L4</name><count>1.5</count></item></gpus></gpuInfo>"), GB_E_CLOUD,
		  "instance type g6.xlarge: <count> '1.5' is not a number" },
		{ IT_ITEM("<instanceType>p5.48xlarge</instanceType><gpuInfo>"
			  "<totalGpuMemoryInMiB>99999999999</totalGpuMemoryInMiB></gpuInfo>"),
		  GB_E_CLOUD, "<gpuInfo/totalGpuMemoryInMiB> '99999999999' is not a number" },
		{ IT_ITEM("<instanceType>p5.48xlarge</instanceType>"
			  "<networkInfo><efaSupported>yes</efaSupported></networkInfo>"), GB_E_CLOUD,
		  "instance type p5.48xlarge: <networkInfo/efaSupported> 'yes' is not true or false" },
		{ IT_ITEM("<instanceType>p5.48xlarge</instanceType><networkInfo><efaInfo>"
			  "<maximumEfaInterfaces></maximumEfaInterfaces></efaInfo></networkInfo>"),
		  GB_E_CLOUD, "<networkInfo/efaInfo/maximumEfaInterfaces> '' is not a number" },
		{ IT_ITEM("<instanceType>p5.48xlarge</instanceType><networkInfo>"
			  "<maximumNetworkCards>x</maximumNetworkCards></networkInfo>"),
		  GB_E_CLOUD, "<networkInfo/maximumNetworkCards> 'x' is not a number" },
		{ "<DescribeInstanceTypeOfferingsResponse/>", GB_E_PARSE,
		  "expected DescribeInstanceTypesResponse, got <DescribeInstanceTypeOfferingsResponse>" },
		{ "<DescribeInstanceTypesResponse><instanceTypeSet>", GB_E_PARSE,
		  "response is not well-formed XML" },
	};

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		struct gb_ec2_instance_type_list *l = (void *)1;
		gb_error_t e = { 0 };
		gb_err_t rc = gb_ec2_xml_parse_instance_types(cases[i].xml, strlen(cases[i].xml),
							      &l, &e);

		if (rc != cases[i].rc || !strstr(e.text, cases[i].text))
			fail_msg("case %zu: %s, want '%s' in '%s'", i, gb_err_name(rc),
				 cases[i].text, e.text);
		assert_null(l);
	}
	{
		static const char empty[] = "<DescribeInstanceTypesResponse><requestId>r</requestId>"
					    "<instanceTypeSet/></DescribeInstanceTypesResponse>";
		struct gb_ec2_instance_type_list *l = NULL;

		assert_int_equal(gb_ec2_xml_parse_instance_types(LIT(empty), &l, NULL), GB_E_OK);
		assert_int_equal(l->n, 0);
		assert_string_equal(l->request_id, "r");
		gb_ec2_instance_type_list_free(l);
	}
}

static void test_placement_groups_parse(void **state)
{
	static const char noname[] =
		"<DescribePlacementGroupsResponse><placementGroupSet><item><groupId>pg-1"
		"</groupId></item></placementGroupSet></DescribePlacementGroupsResponse>";
	static const char nokey[] =
		"<DescribePlacementGroupsResponse><placementGroupSet><item><groupName>a"
		"</groupName><tagSet><item><value>v</value></item></tagSet></item>"
		"</placementGroupSet></DescribePlacementGroupsResponse>";
	struct gb_ec2_placement_group_list *l = NULL;
	size_t len;
	char *xml = slurp("constructed/describe-placement-groups.xml", &len);
	gb_error_t e;

	(void)state;
	if (gb_ec2_xml_parse_placement_groups(xml, len, &l, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(l->n, 2);
	assert_string_equal(l->request_id, "d4904fd9-82c2-4ea5-adfe-a9cc3EXAMPLE");
	assert_string_equal(l->v[0].group_name, "gpuburst-train-ap-northeast-1a");
	assert_string_equal(l->v[0].group_id, "pg-0a1b2c3d4e5f60718");
	assert_string_equal(l->v[0].strategy, "cluster");
	assert_string_equal(l->v[0].state, "available");
	assert_int_equal(l->v[0].n_tags, 2);
	assert_string_equal(l->v[0].tags[0].key, "gpuburst:cluster");
	assert_string_equal(l->v[0].tags[0].value, "gpu-cluster");
	assert_string_equal(l->v[0].tags[1].key, "gpuburst:managed");
	assert_string_equal(l->v[0].tags[1].value, "");
	assert_string_equal(l->v[1].group_name, "other-spread");
	assert_string_equal(l->v[1].strategy, "spread");
	assert_string_equal(l->v[1].state, "deleting");
	assert_int_equal(l->v[1].n_tags, 0);
	assert_null(l->v[1].tags);
	gb_ec2_placement_group_list_free(l);
	free(xml);
	l = (void *)1;
	assert_int_equal(gb_ec2_xml_parse_placement_groups(LIT(noname), &l, &e), GB_E_CLOUD);
	assert_string_equal(e.text, "placement group item 1 without <groupName>");
	assert_null(l);
	assert_int_equal(gb_ec2_xml_parse_placement_groups(LIT(nokey), &l, &e), GB_E_PARSE);
	assert_string_equal(e.text, "placement group tag without a key");
	assert_int_equal(gb_ec2_xml_parse_placement_groups(LIT("<CreateTagsResponse/>"), &l, &e),
			 GB_E_PARSE);
	assert_string_equal(e.text,
			    "expected DescribePlacementGroupsResponse, got <CreateTagsResponse>");
	gb_ec2_placement_group_list_free(NULL);
}

static void test_security_groups_parse(void **state)
{
	static const char noid[] =
		"<DescribeSecurityGroupsResponse><securityGroupInfo><item><groupName>x"
		"</groupName></item></securityGroupInfo></DescribeSecurityGroupsResponse>";
	static const char badport[] =
		"<DescribeSecurityGroupsResponse><securityGroupInfo><item><groupId>sg-9"
		"</groupId><ipPermissionsEgress><item><ipProtocol>tcp</ipProtocol>"
		"<fromPort>70000</fromPort></item></ipPermissionsEgress></item>"
		"</securityGroupInfo></DescribeSecurityGroupsResponse>";
	struct gb_ec2_security_group_list *l = NULL;
	const struct gb_ec2_security_group *g;
	size_t len;
	char *xml = slurp("constructed/describe-security-groups-page1.xml", &len);
	gb_error_t e;

	(void)state;
	if (gb_ec2_xml_parse_security_groups(xml, len, &l, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(l->n, 1);
	assert_string_equal(l->next_token, "eyJ2IjoiMSIsImMiOiJzZy0yIn0=");
	g = &l->v[0];
	assert_string_equal(g->group_id, "sg-0efa0000000000001");
	assert_string_equal(g->group_name, "gpuburst-efa");
	assert_string_equal(g->vpc_id, "vpc-0a1b2c3d4e5f60718");
	assert_int_equal(g->n_ingress, 2);
	assert_string_equal(g->ingress[0].ip_protocol, "-1");
	assert_int_equal(g->ingress[0].from_port, -1);
	assert_int_equal(g->ingress[0].to_port, -1);
	assert_int_equal(g->ingress[0].n_group_ids, 1);
	assert_string_equal(g->ingress[0].group_ids[0], "sg-0efa0000000000001");
	assert_null(g->ingress[0].group_ids[1]);
	assert_int_equal(g->ingress[0].n_cidrs, 0);
	assert_null(g->ingress[0].cidrs);
	assert_string_equal(g->ingress[1].ip_protocol, "tcp");
	assert_int_equal(g->ingress[1].from_port, 22);
	assert_int_equal(g->ingress[1].to_port, 22);
	assert_int_equal(g->ingress[1].n_group_ids, 0);
	assert_int_equal(g->ingress[1].n_cidrs, 2);
	assert_string_equal(g->ingress[1].cidrs[0], "10.0.0.0/16");
	assert_string_equal(g->ingress[1].cidrs[1], "192.0.2.0/24");
	assert_null(g->ingress[1].cidrs[2]);
	assert_int_equal(g->n_egress, 1);
	assert_string_equal(g->egress[0].group_ids[0], "sg-0efa0000000000001");
	assert_string_equal(g->egress[0].cidrs[0], "0.0.0.0/0");
	gb_ec2_security_group_list_free(l);
	free(xml);
	xml = slurp("constructed/describe-security-groups-page2.xml", &len);
	assert_int_equal(gb_ec2_xml_parse_security_groups(xml, len, &l, &e), GB_E_OK);
	assert_null(l->next_token);
	assert_string_equal(l->v[0].group_name, "default");
	assert_int_equal(l->v[0].n_ingress, 0);
	assert_null(l->v[0].ingress);
	assert_int_equal(l->v[0].n_egress, 1);
	gb_ec2_security_group_list_free(l);
	free(xml);
	l = (void *)1;
	assert_int_equal(gb_ec2_xml_parse_security_groups(LIT(noid), &l, &e), GB_E_CLOUD);
	assert_string_equal(e.text, "security group item 1 without <groupId>");
	assert_null(l);
	assert_int_equal(gb_ec2_xml_parse_security_groups(LIT(badport), &l, &e), GB_E_CLOUD);
	assert_string_equal(e.text,
			    "security group sg-9: <fromPort> '70000' is not a number in -1..65535");
	gb_ec2_security_group_list_free(NULL);
}

static void test_form_issue19(void **state)
{
	static const char *const sgs1[] = { "sg-0efa0000000000001", "sg-0de0000000000000002" };
	static const char *const sgs2[] = { "sg-0efa0000000000001" };
	static const struct gb_ec2_net_if nis[] = {
		{ 0, 0, "efa", "subnet-0c82087f981728760", sgs1, 2, true },
		{ 1, 1, "efa-only", "subnet-0c82087f981728760", sgs2, 1, true },
	};
	static const struct gb_ec2_kv tags[] = { { "gpuburst:cluster", "gpu-cluster" } };
	static const struct gb_ec2_tag_spec ts = { "instance", tags, 1 };
	static const struct gb_ec2_tag_spec pts = { "placement-group", tags, 1 };
	static const char *const types[] = { "p5.48xlarge", "g6.xlarge" };
	static const char *const pat[] = { "p5.*" };
	static const struct gb_ec2_filter f[] = { { "instance-type", pat, 1 } };
	static const char *const names[] = { "pg-a", "pg b" };
	struct gb_ec2_run_params rp = {
		.image_id = "ami-0b6c1e0b8f5e1a2c3", .instance_type = "p5.48xlarge",
		.min_count = 2, .max_count = 2, .availability_zone = "ap-northeast-1a",
		.placement_group = "gpuburst-train-ap-northeast-1a",
		.net_ifs = nis, .n_net_ifs = 2, .key_name = "gpu-key-ap-northeast-1",
		.tag_specs = &ts, .n_tag_specs = 1,
	};
	struct gb_ec2_net_if plain = { .device_index = 0, .delete_on_termination = false };
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_ec2_form_run_instances(&rp, "req0019-ap-northeast-1-s0-0", &b, &e),
			 GB_E_OK);
	same_form("constructed/run-instances-request-efa.form.txt", &b);
	gb_buf_reset(&b);
	/* an interface with nothing but its index: type and subnet omitted */
	rp.net_ifs = &plain;
	rp.n_net_ifs = 1;
	rp.placement_group = NULL;
	rp.n_tag_specs = 0;
	rp.key_name = NULL;
	assert_int_equal(gb_ec2_form_run_instances(&rp, "t", &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=RunInstances&Version=2016-11-15"
			    "&ImageId=ami-0b6c1e0b8f5e1a2c3&InstanceType=p5.48xlarge&MinCount=2"
			    "&MaxCount=2&Placement.AvailabilityZone=ap-northeast-1a"
			    "&NetworkInterface.1.DeviceIndex=0&NetworkInterface.1.NetworkCardIndex=0"
			    "&NetworkInterface.1.DeleteOnTermination=false&ClientToken=t");
	gb_buf_reset(&b);
	/* named types: one page, no MaxResults */
	assert_int_equal(gb_ec2_form_describe_instance_types(types, 2, NULL, 0, NULL, &b, &e),
			 GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DescribeInstanceTypes&Version=2016-11-15"
			    "&InstanceType.1=p5.48xlarge&InstanceType.2=g6.xlarge");
	gb_buf_reset(&b);
	assert_int_equal(gb_ec2_form_describe_instance_types(NULL, 0, f, 1, "tok=", &b, &e),
			 GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DescribeInstanceTypes&Version=2016-11-15"
			    "&Filter.1.Name=instance-type&Filter.1.Value.1=p5.%2A"
			    "&MaxResults=100&NextToken=tok%3D");
	gb_buf_reset(&b);
	assert_int_equal(gb_ec2_form_create_placement_group("gpuburst-train-1a", "cluster", &pts,
							    &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=CreatePlacementGroup&Version=2016-11-15"
			    "&GroupName=gpuburst-train-1a&Strategy=cluster"
			    "&TagSpecification.1.ResourceType=placement-group"
			    "&TagSpecification.1.Tag.1.Key=gpuburst%3Acluster"
			    "&TagSpecification.1.Tag.1.Value=gpu-cluster");
	gb_buf_reset(&b);
	assert_int_equal(gb_ec2_form_create_placement_group("g", "spread", NULL, &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=CreatePlacementGroup&Version=2016-11-15"
			    "&GroupName=g&Strategy=spread");
	gb_buf_reset(&b);
	assert_int_equal(gb_ec2_form_delete_placement_group("gpuburst-train-1a", &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DeletePlacementGroup&Version=2016-11-15"
			    "&GroupName=gpuburst-train-1a");
	gb_buf_reset(&b);
	assert_int_equal(gb_ec2_form_describe_placement_groups(names, 2, f, 1, &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DescribePlacementGroups&Version=2016-11-15"
			    "&GroupName.1=pg-a&GroupName.2=pg%20b"
			    "&Filter.1.Name=instance-type&Filter.1.Value.1=p5.%2A");
	gb_buf_reset(&b);
	assert_int_equal(gb_ec2_form_describe_security_groups(sgs1, 2, NULL, &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DescribeSecurityGroups&Version=2016-11-15"
			    "&GroupId.1=sg-0efa0000000000001&GroupId.2=sg-0de0000000000000002");
	gb_buf_reset(&b);
	assert_int_equal(gb_ec2_form_describe_security_groups(NULL, 0, "n/1", &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DescribeSecurityGroups&Version=2016-11-15"
			    "&MaxResults=1000&NextToken=n%2F1");
	gb_buf_free(&b);
}

static void test_form_issue19_rejects(void **state)
{
	static const char *const sg[] = { "sg-1" };
	static const char *const empty[] = { "" };
	static const struct gb_ec2_kv tags[] = { { "k", "v" } };
	static const struct gb_ec2_tag_spec inst = { "instance", tags, 1 };
	static const char *many[GB_EC2_INSTANCE_TYPES_MAX + 1];
	struct gb_ec2_net_if ni = { 0, 0, "efa", "subnet-1", sg, 1, true };
	struct gb_ec2_run_params ok = { .image_id = "ami-1", .instance_type = "p5.48xlarge",
					.min_count = 1, .max_count = 1, .net_ifs = &ni,
					.n_net_ifs = 1 };
	struct gb_ec2_run_params p;
	struct gb_buf b = GB_BUF_INIT;
	char long_name[300];
	gb_error_t e;

	(void)state;
	memset(long_name, 'a', sizeof(long_name));
	long_name[256] = '\0';
	p = ok;
	p.subnet_id = "subnet-top";
	assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_INVALID);
	assert_string_equal(e.text, "RunInstances: SubnetId with NetworkInterface: the subnet goes on each interface");
	p = ok;
	p.security_group_ids = sg;
	p.n_security_group_ids = 1;
	assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_INVALID);
	assert_string_equal(e.text, "RunInstances: SecurityGroupId with NetworkInterface: the security groups go on each interface");
	p = ok;
	ni.interface_type = "EFA";
	assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_INVALID);
	assert_string_equal(e.text, "RunInstances: NetworkInterface.1.InterfaceType 'EFA' is not interface, efa or efa-only");
	ni.interface_type = "";
	assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_INVALID);
	ni.interface_type = "interface";
	ni.device_index = -1;
	assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_INVALID);
	assert_string_equal(e.text, "RunInstances: NetworkInterface.1.DeviceIndex -1 is negative");
	ni.device_index = 0;
	ni.network_card_index = -2;
	assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_INVALID);
	assert_string_equal(e.text, "RunInstances: NetworkInterface.1.NetworkCardIndex -2 is negative");
	ni.network_card_index = 0;
	ni.security_group_ids = empty;
	assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_INVALID);
	assert_string_equal(e.text, "RunInstances: NetworkInterface.1.SecurityGroupId 1 is empty");
	ni.security_group_ids = sg;
	ni.subnet_id = "";
	assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_INVALID);
	assert_string_equal(e.text, "RunInstances: NetworkInterface.1.SubnetId is empty");
	ni.subnet_id = "subnet-1";
	p.net_ifs = NULL;
	assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_INVALID);
	assert_string_equal(e.text, "RunInstances: network interfaces missing");
	/* nothing was written by any refused call */
	assert_int_equal(b.len, 0);
	p.net_ifs = &ni;
	assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_OK);
	gb_buf_reset(&b);

	for (size_t i = 0; i < GB_ARRAY_LEN(many); i++)
		many[i] = "g6.xlarge";
	assert_int_equal(gb_ec2_form_describe_instance_types(many, GB_ARRAY_LEN(many), NULL, 0,
							     NULL, &b, &e), GB_E_INVALID);
	assert_string_equal(e.text, "DescribeInstanceTypes: 101 instance types (at most 100 per call)");
	assert_int_equal(gb_ec2_form_describe_instance_types(empty, 1, NULL, 0, NULL, &b, &e),
			 GB_E_INVALID);
	assert_string_equal(e.text, "DescribeInstanceTypes: InstanceType 1 is empty");
	assert_int_equal(gb_ec2_form_create_placement_group("g", "clustered", NULL, &b, &e),
			 GB_E_INVALID);
	assert_string_equal(e.text, "CreatePlacementGroup: Strategy 'clustered' is not cluster, spread or partition");
	assert_int_equal(gb_ec2_form_create_placement_group("g", NULL, NULL, &b, &e), GB_E_INVALID);
	assert_int_equal(gb_ec2_form_create_placement_group("g", "cluster", &inst, &b, &e),
			 GB_E_INVALID);
	assert_string_equal(e.text, "CreatePlacementGroup: TagSpecification.ResourceType 'instance' is not placement-group");
	assert_int_equal(gb_ec2_form_create_placement_group(long_name, "cluster", NULL, &b, &e),
			 GB_E_INVALID);
	assert_string_equal(e.text, "CreatePlacementGroup: GroupName must have 1 to 255 characters");
	assert_int_equal(gb_ec2_form_create_placement_group("a\tb", "cluster", NULL, &b, &e),
			 GB_E_INVALID);
	assert_string_equal(e.text, "CreatePlacementGroup: GroupName must be printable ASCII");
	assert_int_equal(gb_ec2_form_delete_placement_group(NULL, &b, &e), GB_E_INVALID);
	assert_string_equal(e.text, "DeletePlacementGroup: GroupName must have 1 to 255 characters");
	assert_int_equal(gb_ec2_form_describe_placement_groups(empty, 1, NULL, 0, &b, &e),
			 GB_E_INVALID);
	assert_string_equal(e.text, "DescribePlacementGroups: GroupName 1 is empty");
	assert_int_equal(gb_ec2_form_describe_security_groups(empty, 1, NULL, &b, &e),
			 GB_E_INVALID);
	assert_string_equal(e.text, "DescribeSecurityGroups: GroupId 1 is empty");
	assert_int_equal(b.len, 0);
	gb_buf_free(&b);
}

/* ---- the capacity ladder ------------------------------------------------- */

static void test_form_capacity(void **state)
{
	static const char *const ids[] = { "cr-1", "cr-2" };
	static const char *const st[] = { "active", "scheduled" };
	static const char *const types[] = { "p5.48xlarge" };
	static const struct gb_ec2_filter f[] = { { "instance-type", types, 1 },
						  { "state", st, 2 } };
	struct gb_ec2_run_params rp = { .image_id = "ami-1", .instance_type = "p5.48xlarge",
					.min_count = 1, .max_count = 1 };
	struct gb_ec2_capacity_reservations_params cp = { ids, 2, f, 2, 0 };
	struct gb_ec2_capacity_block_offerings_params bp = { "p5.48xlarge", 4, 24, 0, 0, 0 };
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t e;

	(void)state;
	rp.capacity_reservation_id = "cr-0a1b2c3d4e5f60718";
	rp.capacity_block = true;
	assert_int_equal(gb_ec2_form_run_instances(&rp, "t", &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=RunInstances&Version=2016-11-15"
			    "&ImageId=ami-1&InstanceType=p5.48xlarge&MinCount=1&MaxCount=1"
			    "&ClientToken=t&CapacityReservationSpecification.CapacityReservationTarget."
			    "CapacityReservationId=cr-0a1b2c3d4e5f60718"
			    "&InstanceMarketOptions.MarketType=capacity-block");
	gb_buf_reset(&b);
	rp.capacity_reservation_id = NULL;
	rp.capacity_block = false;
	rp.capacity_reservation_group_arn =
		"arn:aws:resource-groups:ap-northeast-1:111122223333:group/gpu-crs";
	assert_int_equal(gb_ec2_form_run_instances(&rp, "t", &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=RunInstances&Version=2016-11-15"
			    "&ImageId=ami-1&InstanceType=p5.48xlarge&MinCount=1&MaxCount=1"
			    "&ClientToken=t&CapacityReservationSpecification.CapacityReservationTarget."
			    "CapacityReservationResourceGroupArn=arn%3Aaws%3Aresource-groups%3A"
			    "ap-northeast-1%3A111122223333%3Agroup%2Fgpu-crs");
	gb_buf_reset(&b);
	rp.capacity_reservation_group_arn = NULL;
	rp.capacity_reservation_preference = "capacity-reservations-only";
	assert_int_equal(gb_ec2_form_run_instances(&rp, "t", &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=RunInstances&Version=2016-11-15"
			    "&ImageId=ami-1&InstanceType=p5.48xlarge&MinCount=1&MaxCount=1"
			    "&ClientToken=t&CapacityReservationSpecification."
			    "CapacityReservationPreference=capacity-reservations-only");
	gb_buf_reset(&b);
	/* DescribeCapacityReservations: named ids, filters; MaxResults only without ids */
	assert_int_equal(gb_ec2_form_describe_capacity_reservations(&cp, NULL, &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DescribeCapacityReservations"
			    "&Version=2016-11-15&CapacityReservationId.1=cr-1"
			    "&CapacityReservationId.2=cr-2&Filter.1.Name=instance-type"
			    "&Filter.1.Value.1=p5.48xlarge&Filter.2.Name=state&Filter.2.Value.1=active"
			    "&Filter.2.Value.2=scheduled");
	gb_buf_reset(&b);
	cp.n_ids = 0;
	cp.n_filters = 0;
	cp.max_results = 1;
	assert_int_equal(gb_ec2_form_describe_capacity_reservations(&cp, "n/1=", &b, &e),
			 GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DescribeCapacityReservations"
			    "&Version=2016-11-15&MaxResults=1&NextToken=n%2F1%3D");
	gb_buf_reset(&b);
	assert_int_equal(gb_ec2_form_describe_capacity_reservations(NULL, NULL, &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DescribeCapacityReservations"
			    "&Version=2016-11-15");
	gb_buf_reset(&b);
	/* DescribeCapacityBlockOfferings: dates ISO 8601 UTC, omitted when 0 */
	assert_int_equal(gb_ec2_form_describe_capacity_block_offerings(&bp, NULL, &b, &e),
			 GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DescribeCapacityBlockOfferings"
			    "&Version=2016-11-15&InstanceType=p5.48xlarge&InstanceCount=4"
			    "&CapacityDurationHours=24");
	gb_buf_reset(&b);
	bp.start_range = 1796292000.0;	/* 2026-12-03T10:00:00Z */
	bp.end_range = 1796896800.0;	/* 2026-12-10T10:00:00Z */
	bp.max_results = 1000;
	assert_int_equal(gb_ec2_form_describe_capacity_block_offerings(&bp, "tok", &b, &e),
			 GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DescribeCapacityBlockOfferings"
			    "&Version=2016-11-15&InstanceType=p5.48xlarge&InstanceCount=4"
			    "&CapacityDurationHours=24&StartDateRange=2026-12-03T10%3A00%3A00Z"
			    "&EndDateRange=2026-12-10T10%3A00%3A00Z&MaxResults=1000&NextToken=tok");
	gb_buf_free(&b);
}

static void test_form_capacity_rejects(void **state)
{
	static const char *const empty[] = { "" };
	static const char *many[GB_EC2_CAPACITY_RESERVATIONS_MAX + 1];
	static const struct {
		const char *id, *arn, *pref;
		bool block, spot;
		const char *msg;
	} runs[] = {
		{ "cr-1", NULL, "open", false, false,
		  "RunInstances: CapacityReservationTarget and CapacityReservationPreference exclude each other" },
		{ NULL, "arn:g", "none", false, false,
		  "RunInstances: CapacityReservationTarget and CapacityReservationPreference exclude each other" },
		{ "cr-1", "arn:g", NULL, false, false,
		  "RunInstances: CapacityReservationId and CapacityReservationResourceGroupArn exclude each other" },
		{ NULL, NULL, "targeted", false, false,
		  "RunInstances: CapacityReservationPreference 'targeted' is not open, none or capacity-reservations-only" },
		{ NULL, NULL, "", false, false,
		  "RunInstances: CapacityReservationPreference '' is not open, none or capacity-reservations-only" },
		{ NULL, NULL, NULL, true, false,
		  "RunInstances: a capacity block needs its CapacityReservationId" },
		{ NULL, "arn:g", NULL, true, false,
		  "RunInstances: a capacity block needs its CapacityReservationId" },
		{ "cr-1", NULL, NULL, true, true,
		  "RunInstances: MarketType capacity-block and spot exclude each other" },
		{ "", NULL, NULL, false, false, "RunInstances: CapacityReservationId is empty" },
		{ NULL, "", NULL, false, false,
		  "RunInstances: CapacityReservationResourceGroupArn is empty" },
	};
	static const struct {
		const char *type;
		int count, hours;
		double start, end;
		int max;
		const char *msg;
	} blocks[] = {
		{ NULL, 1, 24, 0, 0, 0, "DescribeCapacityBlockOfferings: InstanceType is required" },
		{ "", 1, 24, 0, 0, 0, "DescribeCapacityBlockOfferings: InstanceType is required" },
		{ "p5.48xlarge", 0, 24, 0, 0, 0,
		  "DescribeCapacityBlockOfferings: InstanceCount 0 is below 1" },
		{ "p5.48xlarge", 1, 0, 0, 0, 0,
		  "DescribeCapacityBlockOfferings: CapacityDurationHours 0 is below 1" },
		{ "p5.48xlarge", 1, 24, -1, 0, 0,
		  "DescribeCapacityBlockOfferings: a negative date range" },
		{ "p5.48xlarge", 1, 24, 1796896800.0, 1796292000.0, 0,
		  "DescribeCapacityBlockOfferings: EndDateRange before StartDateRange" },
		{ "p5.48xlarge", 1, 24, 0, 0, 1001,
		  "DescribeCapacityBlockOfferings: MaxResults 1001 is outside 1..1000" },
		{ "p5.48xlarge", 1, 24, 0, 0, -1,
		  "DescribeCapacityBlockOfferings: MaxResults -1 is outside 1..1000" },
	};
	struct gb_ec2_capacity_reservations_params cp = { 0 };
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t e;

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(runs); i++) {
		struct gb_ec2_run_params p = { .image_id = "ami-1", .instance_type = "p5.48xlarge",
					       .min_count = 1, .max_count = 1 };

		p.capacity_reservation_id = runs[i].id;
		p.capacity_reservation_group_arn = runs[i].arn;
		p.capacity_reservation_preference = runs[i].pref;
		p.capacity_block = runs[i].block;
		p.spot = runs[i].spot;
		assert_int_equal(gb_ec2_form_run_instances(&p, "t", &b, &e), GB_E_INVALID);
		assert_string_equal(e.text, runs[i].msg);
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(blocks); i++) {
		struct gb_ec2_capacity_block_offerings_params p = {
			blocks[i].type, blocks[i].count, blocks[i].hours, blocks[i].start,
			blocks[i].end, blocks[i].max };

		assert_int_equal(gb_ec2_form_describe_capacity_block_offerings(&p, NULL, &b, &e),
				 GB_E_INVALID);
		assert_string_equal(e.text, blocks[i].msg);
	}
	assert_int_equal(gb_ec2_form_describe_capacity_block_offerings(NULL, NULL, &b, &e),
			 GB_E_INVALID);
	assert_string_equal(e.text, "DescribeCapacityBlockOfferings: no parameters");
	cp.ids = empty;
	cp.n_ids = 1;
	assert_int_equal(gb_ec2_form_describe_capacity_reservations(&cp, NULL, &b, &e),
			 GB_E_INVALID);
	assert_string_equal(e.text, "DescribeCapacityReservations: CapacityReservationId 1 is empty");
	for (size_t i = 0; i < GB_ARRAY_LEN(many); i++)
		many[i] = "cr-1";
	cp.ids = many;
	cp.n_ids = GB_ARRAY_LEN(many);
	assert_int_equal(gb_ec2_form_describe_capacity_reservations(&cp, NULL, &b, &e),
			 GB_E_INVALID);
	assert_string_equal(e.text, "DescribeCapacityReservations: 1001 reservation ids (at most 1000 per call)");
	cp.n_ids = 0;
	cp.max_results = 1001;
	assert_int_equal(gb_ec2_form_describe_capacity_reservations(&cp, NULL, &b, &e),
			 GB_E_INVALID);
	assert_string_equal(e.text, "DescribeCapacityReservations: MaxResults 1001 is outside 1..1000");
	/* nothing was written by any refused call */
	assert_int_equal(b.len, 0);
	gb_buf_free(&b);
}

static void test_capacity_reservations_parse(void **state)
{
	static const char noid[] =
		"<DescribeCapacityReservationsResponse><capacityReservationSet><item>"
		"<instanceType>p5.48xlarge</instanceType></item></capacityReservationSet>"
		"</DescribeCapacityReservationsResponse>";
	static const char badcount[] =
		"<DescribeCapacityReservationsResponse><capacityReservationSet><item>"
		"<capacityReservationId>cr-9</capacityReservationId><availableInstanceCount>-1"
		"</availableInstanceCount></item></capacityReservationSet>"
		"</DescribeCapacityReservationsResponse>";
	static const char baddate[] =
		"<DescribeCapacityReservationsResponse><capacityReservationSet><item>"
		"<capacityReservationId>cr-9</capacityReservationId><endDate>2026-13-45T99:00:00Z"
		"</endDate></item></capacityReservationSet></DescribeCapacityReservationsResponse>";
	static const char empty[] =
		"<DescribeCapacityReservationsResponse><requestId>r</requestId>"
		"<capacityReservationSet/></DescribeCapacityReservationsResponse>";
	struct gb_ec2_capacity_reservation_list *l = NULL;
	const struct gb_ec2_capacity_reservation *r;
	size_t len;
	char *xml = slurp("constructed/describe-capacity-reservations-page1.xml", &len);
	gb_error_t e;

	(void)state;
	if (gb_ec2_xml_parse_capacity_reservations(xml, len, &l, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(l->n, 2);
	assert_string_equal(l->request_id, "7f1c2a3b-4d5e-4f60-8172-839405a6EXAM");
	assert_string_equal(l->next_token, "eyJ2IjoiMSIsImMiOiJjci0yIn0=");
	r = &l->v[0];
	assert_string_equal(r->id, "cr-0a1b2c3d4e5f60718");
	assert_string_equal(r->arn, "arn:aws:ec2:ap-northeast-1:111122223333:"
			    "capacity-reservation/cr-0a1b2c3d4e5f60718");
	assert_string_equal(r->instance_type, "p5.48xlarge");
	assert_string_equal(r->availability_zone, "ap-northeast-1a");
	assert_string_equal(r->platform, "Linux/UNIX");
	assert_string_equal(r->tenancy, "default");
	assert_string_equal(r->state, "active");
	assert_string_equal(r->reservation_type, "capacity-block");
	assert_string_equal(r->match_criteria, "targeted");
	assert_string_equal(r->end_date_type, "limited");
	assert_int_equal(r->total, 4);
	assert_int_equal(r->available, 3);
	assert_true(r->start_date == 1796292000.0);	/* 2026-12-03T10:00:00Z */
	assert_true(r->end_date == 1796464800.0);	/* 2026-12-05T10:00:00Z */
	assert_int_equal(r->n_tags, 2);
	assert_string_equal(r->tags[0].key, "gpuburst:cluster");
	assert_string_equal(r->tags[0].value, "gpu-cluster");
	assert_string_equal(r->tags[1].key, "Name");
	r = &l->v[1];
	assert_string_equal(r->id, "cr-0b2c3d4e5f6071829");
	assert_null(r->reservation_type);
	assert_string_equal(r->match_criteria, "open");
	assert_string_equal(r->end_date_type, "unlimited");
	assert_int_equal(r->available, 0);
	assert_true(r->start_date == 1790812800.0);	/* 2026-10-01T00:00:00Z */
	assert_true(r->end_date == 0);
	assert_int_equal(r->n_tags, 0);
	assert_null(r->tags);
	gb_ec2_capacity_reservation_list_free(l);
	free(xml);
	xml = slurp("constructed/describe-capacity-reservations-page2.xml", &len);
	assert_int_equal(gb_ec2_xml_parse_capacity_reservations(xml, len, &l, &e), GB_E_OK);
	assert_int_equal(l->n, 1);
	assert_null(l->next_token);
	assert_string_equal(l->v[0].state, "scheduled");
	gb_ec2_capacity_reservation_list_free(l);
	free(xml);
	assert_int_equal(gb_ec2_xml_parse_capacity_reservations(LIT(empty), &l, &e), GB_E_OK);
	assert_int_equal(l->n, 0);
	assert_string_equal(l->request_id, "r");
	gb_ec2_capacity_reservation_list_free(l);
	l = (void *)1;
	assert_int_equal(gb_ec2_xml_parse_capacity_reservations(LIT(noid), &l, &e), GB_E_CLOUD);
	assert_string_equal(e.text, "capacity reservation item 1 without <capacityReservationId>");
	assert_null(l);
	assert_int_equal(gb_ec2_xml_parse_capacity_reservations(LIT(badcount), &l, &e),
			 GB_E_CLOUD);
	assert_string_equal(e.text, "capacity reservation cr-9: <availableInstanceCount> '-1' "
			    "is not a number in 0..2147483647");
	assert_int_equal(gb_ec2_xml_parse_capacity_reservations(LIT(baddate), &l, &e),
			 GB_E_CLOUD);
	assert_string_equal(e.text, "capacity reservation cr-9: <endDate> '2026-13-45T99:00:00Z' "
			    "is not an ISO 8601 time");
	assert_int_equal(gb_ec2_xml_parse_capacity_reservations(LIT("<CreateTagsResponse/>"), &l,
								&e), GB_E_PARSE);
	assert_string_equal(e.text,
			    "expected DescribeCapacityReservationsResponse, got <CreateTagsResponse>");
	gb_ec2_capacity_reservation_list_free(NULL);
}

static void test_capacity_block_offerings_parse(void **state)
{
	static const char noid[] =
		"<DescribeCapacityBlockOfferingsResponse><capacityBlockOfferingSet><item>"
		"<instanceType>p5.48xlarge</instanceType></item></capacityBlockOfferingSet>"
		"</DescribeCapacityBlockOfferingsResponse>";
	static const char noaz[] =
		"<DescribeCapacityBlockOfferingsResponse><capacityBlockOfferingSet><item>"
		"<capacityBlockOfferingId>cbr-9</capacityBlockOfferingId><instanceType>p5.48xlarge"
		"</instanceType></item></capacityBlockOfferingSet>"
		"</DescribeCapacityBlockOfferingsResponse>";
	static const char badcount[] =
		"<DescribeCapacityBlockOfferingsResponse><capacityBlockOfferingSet><item>"
		"<capacityBlockOfferingId>cbr-9</capacityBlockOfferingId><instanceType>p5.48xlarge"
		"</instanceType><availabilityZone>ap-northeast-1a</availabilityZone>"
		"<instanceCount>two</instanceCount></item></capacityBlockOfferingSet>"
		"</DescribeCapacityBlockOfferingsResponse>";
	static const char baddate[] =
		"<DescribeCapacityBlockOfferingsResponse><capacityBlockOfferingSet><item>"
		"<capacityBlockOfferingId>cbr-9</capacityBlockOfferingId><instanceType>p5.48xlarge"
		"</instanceType><availabilityZone>ap-northeast-1a</availabilityZone>"
		"<startDate>1796297400</startDate></item></capacityBlockOfferingSet>"
		"</DescribeCapacityBlockOfferingsResponse>";
	struct gb_ec2_capacity_block_offering_list *l = NULL;
	const struct gb_ec2_capacity_block_offering *o;
	size_t len;
	char *xml = slurp("constructed/describe-capacity-block-offerings-page1.xml", &len);
	gb_error_t e;

	(void)state;
	if (gb_ec2_xml_parse_capacity_block_offerings(xml, len, &l, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(l->n, 1);
	assert_string_equal(l->request_id, "3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5EXAM");
	assert_string_equal(l->next_token, "eyJ2IjoiMSIsImMiOiJjYnItMiJ9");
	o = &l->v[0];
	assert_string_equal(o->id, "cbr-0123456789abcdef0");
	assert_string_equal(o->instance_type, "p5.48xlarge");
	assert_string_equal(o->availability_zone, "ap-northeast-1a");
	assert_int_equal(o->count, 2);
	assert_true(o->start_date == 1796297400.0);	/* 2026-12-03T11:30:00Z */
	assert_true(o->end_date == 1796470200.0);	/* 2026-12-05T11:30:00Z */
	assert_int_equal(o->duration_hours, 48);
	assert_string_equal(o->upfront_fee, "3787.20");
	assert_string_equal(o->currency, "USD");
	assert_string_equal(o->tenancy, "default");
	gb_ec2_capacity_block_offering_list_free(l);
	free(xml);
	xml = slurp("constructed/describe-capacity-block-offerings-page2.xml", &len);
	assert_int_equal(gb_ec2_xml_parse_capacity_block_offerings(xml, len, &l, &e), GB_E_OK);
	assert_int_equal(l->n, 1);
	assert_null(l->next_token);
	assert_string_equal(l->v[0].availability_zone, "ap-northeast-1c");
	gb_ec2_capacity_block_offering_list_free(l);
	free(xml);
	l = (void *)1;
	assert_int_equal(gb_ec2_xml_parse_capacity_block_offerings(LIT(noid), &l, &e), GB_E_CLOUD);
	assert_string_equal(e.text, "capacity block offering item 1 without <capacityBlockOfferingId>");
	assert_null(l);
	assert_int_equal(gb_ec2_xml_parse_capacity_block_offerings(LIT(noaz), &l, &e), GB_E_CLOUD);
	assert_string_equal(e.text, "capacity block offering cbr-9 without <instanceType> or "
			    "<availabilityZone>");
	assert_int_equal(gb_ec2_xml_parse_capacity_block_offerings(LIT(badcount), &l, &e),
			 GB_E_CLOUD);
	assert_string_equal(e.text, "capacity block offering cbr-9: <instanceCount> 'two' is not "
			    "a number in 0..2147483647");
	assert_int_equal(gb_ec2_xml_parse_capacity_block_offerings(LIT(baddate), &l, &e),
			 GB_E_CLOUD);
	assert_string_equal(e.text, "capacity block offering cbr-9: <startDate> '1796297400' is "
			    "not an ISO 8601 time");
	assert_int_equal(gb_ec2_xml_parse_capacity_block_offerings(LIT("<Response><Errors/></Response>"),
								   &l, &e), GB_E_PARSE);
	assert_string_equal(e.text, "expected DescribeCapacityBlockOfferingsResponse, got an "
			    "error envelope <Response>");
	gb_ec2_capacity_block_offering_list_free(NULL);
}

/* ---- DescribeSpotPriceHistory -------------------------------------------- */

static void test_form_spot_price_history(void **state)
{
	static const char *const types[] = { "p5.48xlarge", "g6.xlarge" };
	static const char *const linux_only[] = { GB_EC2_PRODUCT_LINUX };
	static const char *const price[] = { "0.35*" };
	static const struct gb_ec2_filter f[] = { { "spot-price", price, 1 } };
	struct gb_ec2_spot_price_history_params p = {
		.instance_types = types, .n_instance_types = 2,
		.product_descriptions = linux_only, .n_product_descriptions = 1,
	};
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_ec2_form_describe_spot_price_history(&p, NULL, &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DescribeSpotPriceHistory&Version=2016-11-15"
			    "&InstanceType.1=p5.48xlarge&InstanceType.2=g6.xlarge"
			    "&ProductDescription.1=Linux%2FUNIX");
	gb_buf_reset(&b);
	/* times ISO 8601 UTC, as botocore serializes them */
	p.availability_zone = "us-east-2a";
	p.start_time = 1772323200.0;	/* 2026-03-01T00:00:00Z */
	p.end_time = 1772452800.0;	/* 2026-03-02T12:00:00Z */
	p.filters = f;
	p.n_filters = 1;
	p.max_results = 1000;
	assert_int_equal(gb_ec2_form_describe_spot_price_history(&p, "t/1=", &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DescribeSpotPriceHistory&Version=2016-11-15"
			    "&InstanceType.1=p5.48xlarge&InstanceType.2=g6.xlarge"
			    "&ProductDescription.1=Linux%2FUNIX&AvailabilityZone=us-east-2a"
			    "&StartTime=2026-03-01T00%3A00%3A00Z&EndTime=2026-03-02T12%3A00%3A00Z"
			    "&Filter.1.Name=spot-price&Filter.1.Value.1=0.35%2A&MaxResults=1000"
			    "&NextToken=t%2F1%3D");
	gb_buf_reset(&b);
	/* no parameters: every pool's current price */
	assert_int_equal(gb_ec2_form_describe_spot_price_history(NULL, NULL, &b, &e), GB_E_OK);
	assert_string_equal(gb_buf_str(&b), "Action=DescribeSpotPriceHistory&Version=2016-11-15");
	gb_buf_free(&b);
}

static void test_form_spot_price_history_rejects(void **state)
{
	static const char *const empty[] = { "" };
	static const struct gb_ec2_filter nov[] = { { "instance-type", NULL, 0 } };
	static const struct {
		const char *const *types, *const *products;
		const char *az;
		double start, end;
		const struct gb_ec2_filter *f;
		int max;
		const char *msg;
	} cases[] = {
		{ empty, NULL, NULL, 0, 0, NULL, 0,
		  "DescribeSpotPriceHistory: InstanceType 1 is empty" },
		{ NULL, empty, NULL, 0, 0, NULL, 0,
		  "DescribeSpotPriceHistory: ProductDescription 1 is empty" },
		{ NULL, NULL, "", 0, 0, NULL, 0,
		  "DescribeSpotPriceHistory: AvailabilityZone is empty" },
		{ NULL, NULL, NULL, -1, 0, NULL, 0, "DescribeSpotPriceHistory: a negative time" },
		{ NULL, NULL, NULL, 1772452800.0, 1772323200.0, NULL, 0,
		  "DescribeSpotPriceHistory: EndTime before StartTime" },
		{ NULL, NULL, NULL, 0, 0, NULL, 1001,
		  "DescribeSpotPriceHistory: MaxResults 1001 is outside 1..1000" },
		{ NULL, NULL, NULL, 0, 0, NULL, -1,
		  "DescribeSpotPriceHistory: MaxResults -1 is outside 1..1000" },
		{ NULL, NULL, NULL, 0, 0, nov, 0,
		  "DescribeSpotPriceHistory: filter instance-type has no value" },
	};
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t e;

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		struct gb_ec2_spot_price_history_params p = {
			.instance_types = cases[i].types, .n_instance_types = cases[i].types ? 1 : 0,
			.product_descriptions = cases[i].products,
			.n_product_descriptions = cases[i].products ? 1 : 0,
			.availability_zone = cases[i].az, .start_time = cases[i].start,
			.end_time = cases[i].end, .filters = cases[i].f,
			.n_filters = cases[i].f ? 1 : 0, .max_results = cases[i].max,
		};

		assert_int_equal(gb_ec2_form_describe_spot_price_history(&p, NULL, &b, &e),
				 GB_E_INVALID);
		assert_string_equal(e.text, cases[i].msg);
		gb_buf_reset(&b);
	}
	gb_buf_free(&b);
}

#define SPH(items) "<DescribeSpotPriceHistoryResponse><spotPriceHistorySet><item>" items \
		   "</item></spotPriceHistorySet></DescribeSpotPriceHistoryResponse>"
#define SPH_AZ "<availabilityZone>us-east-2a</availabilityZone>"
#define SPH_TYPE "<instanceType>g6.xlarge</instanceType>"
#define SPH_PD "<productDescription>Linux/UNIX</productDescription>"
#define SPH_TS "<timestamp>2026-03-02T08:40:12.000Z</timestamp>"

static void test_spot_price_history_parse(void **state)
{
	static const struct {
		const char *body;
		const char *msg;
	} bad[] = {
		{ SPH(SPH_TYPE SPH_PD "<spotPrice>0.35</spotPrice>" SPH_TS),
		  "spot price item 1 without <availabilityZone>" },
		{ SPH(SPH_AZ "<instanceType/>" SPH_PD "<spotPrice>0.35</spotPrice>" SPH_TS),
		  "spot price item 1 without <instanceType>" },
		{ SPH(SPH_AZ SPH_TYPE "<spotPrice>0.35</spotPrice>" SPH_TS),
		  "spot price item 1 without <productDescription>" },
		{ SPH(SPH_AZ SPH_TYPE SPH_PD SPH_TS), "spot price item 1 without <spotPrice>" },
		{ SPH(SPH_AZ SPH_TYPE SPH_PD "<spotPrice>0.35</spotPrice>"),
		  "spot price item 1 without <timestamp>" },
		{ SPH(SPH_AZ SPH_TYPE SPH_PD "<spotPrice>$0.35</spotPrice>" SPH_TS),
		  "spot price g6.xlarge us-east-2a: <spotPrice> '$0.35' is not a price" },
		{ SPH(SPH_AZ SPH_TYPE SPH_PD "<spotPrice>0.000000</spotPrice>" SPH_TS),
		  "spot price g6.xlarge us-east-2a: <spotPrice> '0.000000' is not a price" },
		{ SPH(SPH_AZ SPH_TYPE SPH_PD "<spotPrice>1e3</spotPrice>" SPH_TS),
		  "spot price g6.xlarge us-east-2a: <spotPrice> '1e3' is not a price" },
		{ SPH(SPH_AZ SPH_TYPE SPH_PD "<spotPrice>0.</spotPrice>" SPH_TS),
		  "spot price g6.xlarge us-east-2a: <spotPrice> '0.' is not a price" },
		{ SPH(SPH_AZ SPH_TYPE SPH_PD "<spotPrice>0.35</spotPrice>"
		      "<timestamp>Mon Mar 02 08:40:12 UTC 2026</timestamp>"),
		  "spot price g6.xlarge us-east-2a: <timestamp> 'Mon Mar 02 08:40:12 UTC 2026' is "
		  "not an ISO 8601 time" },
	};
	struct gb_ec2_spot_price_list *l = NULL;
	size_t len;
	char *xml = slurp("constructed/describe-spot-price-history-page1.xml", &len);
	gb_error_t e;

	(void)state;
	if (gb_ec2_xml_parse_spot_price_history(xml, len, &l, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(l->n, 2);
	assert_string_equal(l->request_id, "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6bEXAM");
	assert_string_equal(l->next_token, "eyJ2IjoiMSIsImMiOiJzcGgtMiJ9");
	assert_string_equal(l->v[0].instance_type, "p5.48xlarge");
	assert_string_equal(l->v[0].availability_zone, "us-east-2a");
	assert_string_equal(l->v[0].product_description, "Linux/UNIX");
	assert_true(l->v[0].price == 38.4194);
	assert_true(l->v[0].timestamp == 1772442900.0);	/* 2026-03-02T09:15:00Z */
	assert_string_equal(l->v[1].availability_zone, "us-east-2b");
	assert_true(l->v[1].price == 0.353);
	assert_true(l->v[1].timestamp == 1772440812.0);
	gb_ec2_spot_price_list_free(l);
	free(xml);
	/* the last page: EC2 sends an empty <nextToken/> */
	xml = slurp("constructed/describe-spot-price-history-page2.xml", &len);
	assert_int_equal(gb_ec2_xml_parse_spot_price_history(xml, len, &l, &e), GB_E_OK);
	assert_int_equal(l->n, 1);
	assert_null(l->next_token);
	assert_true(l->v[0].price == 41.06);
	gb_ec2_spot_price_list_free(l);
	free(xml);
	assert_int_equal(gb_ec2_xml_parse_spot_price_history(
				 LIT("<DescribeSpotPriceHistoryResponse><spotPriceHistorySet/>"
				     "</DescribeSpotPriceHistoryResponse>"), &l, &e), GB_E_OK);
	assert_int_equal(l->n, 0);
	gb_ec2_spot_price_list_free(l);
	for (size_t i = 0; i < GB_ARRAY_LEN(bad); i++) {
		l = (void *)1;
		assert_int_equal(gb_ec2_xml_parse_spot_price_history(bad[i].body,
								     strlen(bad[i].body), &l, &e),
				 GB_E_CLOUD);
		assert_string_equal(e.text, bad[i].msg);
		assert_null(l);
	}
	assert_int_equal(gb_ec2_xml_parse_spot_price_history(LIT("<Response><Errors/></Response>"),
							     &l, &e), GB_E_PARSE);
	assert_string_equal(e.text, "expected DescribeSpotPriceHistoryResponse, got an "
			    "error envelope <Response>");
	gb_ec2_spot_price_list_free(NULL);
}

static void test_client_token(void **state)
{
	char a[40], b[40];

	(void)state;
	assert_int_equal(gb_ec2_client_token_new(a, sizeof(a), NULL), GB_E_OK);
	assert_int_equal(gb_ec2_client_token_new(b, sizeof(b), NULL), GB_E_OK);
	assert_int_equal(strlen(a), 35);
	assert_true(gb_str_has_prefix(a, "gb-"));
	assert_true(strspn(a + 3, "0123456789abcdef") == 32);
	assert_string_not_equal(a, b);
	assert_int_equal(gb_ec2_client_token_new(a, 10, NULL), GB_E_INVALID);
}

static void test_backoff(void **state)
{
	struct gb_retry_policy p = { 0 };

	(void)state;
	gb_retry_policy_fill(&p);
	assert_int_equal(p.max_attempts, GB_RETRY_DEFAULT_ATTEMPTS);
	assert_true(p.base_delay == GB_RETRY_DEFAULT_BASE);
	p.base_delay = 0.5;
	p.max_delay = 20;
	/* full jitter: u * min(cap, base * 2^n) */
	assert_true(gb_retry_backoff(&p, 0, 0.5) == 0.25);
	assert_true(gb_retry_backoff(&p, 3, 0.5) == 2.0);
	assert_true(gb_retry_backoff(&p, 5, 0.999999) < 16.0 + 1e-9);
	assert_true(gb_retry_backoff(&p, 6, 0.5) == 10.0);	/* capped at 20 */
	assert_true(gb_retry_backoff(&p, 100000, 0.5) == 10.0);	/* no overflow */
	assert_true(gb_retry_backoff(&p, 2, 0.0) == 0.0);
	assert_true(gb_retry_backoff(&p, 2, 7.0) == 0.0);	/* bad u: no wait */
	p.max_attempts = 3;
	p.max_total = 10;
	assert_true(gb_retry_allowed(&p, 1, 0, 1));
	assert_true(gb_retry_allowed(&p, 2, 8, 2));
	assert_false(gb_retry_allowed(&p, 3, 0, 0));	/* attempts used up */
	assert_false(gb_retry_allowed(&p, 1, 9, 2));	/* over the budget */
	for (int i = 0; i < 1000; i++) {
		double u = gb_retry_uniform();

		assert_true(u >= 0 && u < 1);
	}
}

/* STS answers: the credentials, or what is missing. */
static void test_sts_credentials(void **state)
{
	static const char ok[] =
		"<AssumeRoleResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
		"  <AssumeRoleResult>\n"
		"    <AssumedRoleUser>\n"
		"      <Arn>arn:aws:sts::123456789012:assumed-role/gpuburst/s1</Arn>\n"
		"      <AssumedRoleId>AROA3XFRBF535PLBIFPI4:s1</AssumedRoleId>\n"
		"    </AssumedRoleUser>\n"
		"    <Credentials>\n"
		"      <AccessKeyId>ASIAJEXAMPLEXEG2JICEA</AccessKeyId>\n"
		"      <SecretAccessKey>9drTJvcXLB89EXAMPLELB8923FB892xMFI</SecretAccessKey>\n"
		"      <SessionToken>AQoXdzELDDY//////////wEaoAK1wvxJY12r2IrDFT2IvAzTCn3zHoZ7YNtpiQLF0MqZye/qwjzP2iEXAMPLE</SessionToken>\n"
		"      <Expiration>2026-12-02T20:00:00Z</Expiration>\n"
		"    </Credentials>\n"
		"  </AssumeRoleResult>\n"
		"  <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata>\n"
		"</AssumeRoleResponse>\n";
	static const char web[] =
		"<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult>"
		"<Credentials><AccessKeyId>ASIAWEB</AccessKeyId><SecretAccessKey>w</SecretAccessKey>"
		"<SessionToken>t</SessionToken><Expiration>2026-12-02T20:00:00.500Z</Expiration>"
		"</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
	static const char no_token[] =
		"<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>A</AccessKeyId>"
		"<SecretAccessKey>s</SecretAccessKey><Expiration>2026-12-02T20:00:00Z</Expiration>"
		"</Credentials></AssumeRoleResult></AssumeRoleResponse>";
	static const char bad_time[] =
		"<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>A</AccessKeyId>"
		"<SecretAccessKey>s</SecretAccessKey><SessionToken>t</SessionToken>"
		"<Expiration>tomorrow</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>";
	static const char err_env[] =
		"<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><Error><Type>Sender</Type>"
		"<Code>AccessDenied</Code><Message>no</Message></Error><RequestId>r</RequestId></ErrorResponse>";
	struct gb_creds_snapshot s = { 0 };
	gb_error_t e;
	char *arn = NULL;

	(void)state;
	assert_int_equal(gb_sts_parse_credentials(ok, sizeof(ok) - 1, "AssumeRoleResult",
						  &s, &arn, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "ASIAJEXAMPLEXEG2JICEA");
	assert_string_equal(s.secret_access_key, "9drTJvcXLB89EXAMPLELB8923FB892xMFI");
	assert_non_null(strstr(s.session_token, "AQoXdzELDDY//"));
	assert_true(s.expiration == 1764705600.0 + 365 * 86400.0);
	assert_string_equal(arn, "arn:aws:sts::123456789012:assumed-role/gpuburst/s1");
	free(arn);
	gb_creds_snapshot_clear(&s);
	assert_int_equal(gb_sts_parse_credentials(web, sizeof(web) - 1,
						  "AssumeRoleWithWebIdentityResult",
						  &s, NULL, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "ASIAWEB");
	assert_true(s.expiration == 1764705600.5 + 365 * 86400.0);
	gb_creds_snapshot_clear(&s);
	/* the wrong action's answer, missing pieces, errors */
	assert_int_equal(gb_sts_parse_credentials(web, sizeof(web) - 1, "AssumeRoleResult",
						  &s, NULL, &e), GB_E_PARSE);
	assert_non_null(strstr(e.text, "expected AssumeRoleResponse"));
	assert_int_equal(gb_sts_parse_credentials(no_token, sizeof(no_token) - 1,
						  "AssumeRoleResult", &s, NULL, &e), GB_E_PARSE);
	assert_non_null(strstr(e.text, "lacks AccessKeyId, SecretAccessKey, SessionToken or Expiration"));
	assert_int_equal(gb_sts_parse_credentials(bad_time, sizeof(bad_time) - 1,
						  "AssumeRoleResult", &s, NULL, &e), GB_E_PARSE);
	assert_non_null(strstr(e.text, "Expiration \"tomorrow\""));
	assert_int_equal(gb_sts_parse_credentials(err_env, sizeof(err_env) - 1,
						  "AssumeRoleResult", &s, NULL, &e), GB_E_PARSE);
	assert_non_null(strstr(e.text, "error envelope"));
	assert_null(s.access_key_id);
	assert_int_equal(gb_sts_parse_credentials("<a", 2, "AssumeRoleResult", &s, NULL, &e),
			 GB_E_PARSE);
	assert_true(gb_sts_session_name_ok("gpuburst-1764705600"));
	assert_true(gb_sts_session_name_ok("a_b+c=d,e.f@g-h"));
	assert_false(gb_sts_session_name_ok("x"));
	assert_false(gb_sts_session_name_ok("has space"));
	assert_false(gb_sts_session_name_ok("a/b"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sts_credentials),
		cmocka_unit_test(test_botocore_run_instances),
		cmocka_unit_test(test_botocore_describe_instances),
		cmocka_unit_test(test_botocore_stop_instances),
		cmocka_unit_test(test_botocore_azs),
		cmocka_unit_test(test_botocore_error),
		cmocka_unit_test(test_constructed_samples),
		cmocka_unit_test(test_errors_manifest),
		cmocka_unit_test(test_protocol_vectors),
		cmocka_unit_test(test_bad_bodies),
		cmocka_unit_test(test_truncated_and_mangled),
		cmocka_unit_test(test_namespaces),
		cmocka_unit_test(test_launch_time_fraction),
		cmocka_unit_test(test_classification),
		cmocka_unit_test(test_form_bodies),
		cmocka_unit_test(test_form_more),
		cmocka_unit_test(test_form_rejects),
		cmocka_unit_test(test_instance_types_parse),
		cmocka_unit_test(test_instance_types_bad),
		cmocka_unit_test(test_placement_groups_parse),
		cmocka_unit_test(test_security_groups_parse),
		cmocka_unit_test(test_form_issue19),
		cmocka_unit_test(test_form_issue19_rejects),
		cmocka_unit_test(test_form_capacity),
		cmocka_unit_test(test_form_capacity_rejects),
		cmocka_unit_test(test_capacity_reservations_parse),
		cmocka_unit_test(test_capacity_block_offerings_parse),
		cmocka_unit_test(test_form_spot_price_history),
		cmocka_unit_test(test_form_spot_price_history_rejects),
		cmocka_unit_test(test_spot_price_history_parse),
		cmocka_unit_test(test_client_token),
		cmocka_unit_test(test_backoff),
	};

	return cmocka_run_group_tests_name("ec2_xml", tests, NULL, NULL);
}
