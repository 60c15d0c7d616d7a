/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_ec2_xml.c - fuzz target: every EC2 response parser on one input
 *
 * Built two ways: with clang -fsanitize=fuzzer (libFuzzer supplies main;
 * `make fuzz-short`), and with fuzz_driver.c, a plain main that replays the
 * seed corpus and a fixed-seed series of mutations (`make check`).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gb_ec2.h"
#include "gb_ec2_xml.h"
#include "gb_log.h"
#include "gb_str.h"
#include "gb_sts.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct gb_log_opts lo = { .level = GB_LOG_ERROR, .no_stderr = true };

	(void)argc;
	(void)argv;
	/* classification logs unknown codes: keep the fuzzer's output clean */
	gb_log_open("fuzz_ec2_xml", &lo, NULL);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *body = (const char *)data;
	struct gb_ec2_instance_list *il = NULL;
	struct gb_ec2_state_change_list *sc = NULL;
	struct gb_ec2_offering_list *of = NULL;
	struct gb_ec2_az_list *az = NULL;
	struct gb_ec2_capacity_reservation_list *cr_l = NULL;
	struct gb_ec2_capacity_block_offering_list *cb = NULL;
	struct gb_ec2_spot_price_list *sp = NULL;
	struct gb_ec2_error ae;
	struct gb_creds_snapshot cr = { 0 };
	char *rid = NULL, *arn = NULL;
	gb_error_t e;

	memset(&ae, 0, sizeof(ae));
	if (gb_ec2_xml_parse_error(body, size, &ae, &e) == GB_E_OK) {
		/* what the client does next with a parsed envelope */
		ae.cls = gb_ec2_classify(ae.code, 500, &ae.known_code);
		if (strlen(ae.code) >= sizeof(ae.code))
			abort();
	}
	if (gb_ec2_xml_parse_instances(body, size, &il, &e) == GB_E_OK) {
		for (size_t i = 0; i < il->n; i++) {
			if (!il->v[i].instance_id)
				abort();	/* the parser promises one */
			(void)gb_ec2_instance_tag(&il->v[i], "gpuburst:node");
		}
	}
	gb_ec2_instance_list_free(il);
	gb_ec2_xml_parse_state_changes(body, size, &sc, &e);
	gb_ec2_state_change_list_free(sc);
	gb_ec2_xml_parse_offerings(body, size, &of, &e);
	gb_ec2_offering_list_free(of);
	gb_ec2_xml_parse_azs(body, size, &az, &e);
	gb_ec2_az_list_free(az);
	if (gb_ec2_xml_parse_capacity_reservations(body, size, &cr_l, &e) == GB_E_OK) {
		for (size_t i = 0; i < cr_l->n; i++) {
			if (!cr_l->v[i].id || !*cr_l->v[i].id)
				abort();	/* the parser promises one */
		}
	}
	gb_ec2_capacity_reservation_list_free(cr_l);
	if (gb_ec2_xml_parse_capacity_block_offerings(body, size, &cb, &e) == GB_E_OK) {
		for (size_t i = 0; i < cb->n; i++) {
			if (!cb->v[i].id || !cb->v[i].instance_type || !cb->v[i].availability_zone)
				abort();	/* the parser promises all three */
		}
	}
	gb_ec2_capacity_block_offering_list_free(cb);
	if (gb_ec2_xml_parse_spot_price_history(body, size, &sp, &e) == GB_E_OK) {
		for (size_t i = 0; i < sp->n; i++) {
			if (!sp->v[i].availability_zone || !sp->v[i].instance_type ||
			    !sp->v[i].product_description || !(sp->v[i].price > 0) ||
			    !(sp->v[i].timestamp > 0))
				abort();	/* the parser promises every member */
		}
	}
	gb_ec2_spot_price_list_free(sp);
	gb_ec2_xml_parse_ack(body, size, "CreateTagsResponse", &rid, &e);
	free(rid);
	if (gb_sts_parse_credentials(body, size, "AssumeRoleResult", &cr, &arn,
				     &e) == GB_E_OK) {
		if (!cr.access_key_id || !cr.secret_access_key || !cr.session_token)
			abort();	/* the parser promises all three */
		gb_free_secret(&cr.access_key_id);
		gb_free_secret(&cr.secret_access_key);
		gb_free_secret(&cr.session_token);
		free(arn);
	} else if (cr.access_key_id || arn) {
		abort();	/* nothing is handed out on failure */
	}
	return 0;
}
