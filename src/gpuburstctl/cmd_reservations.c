/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_reservations.c - gpuburstctl reservations, capacity-blocks,
 * capacity-blocks offerings
 *
 * What the account holds and what it could buy, read from EC2 in every
 * configured region (or one, --region): `reservations` lists the
 * On-Demand Capacity Reservations and Capacity Blocks
 * (DescribeCapacityReservations), `capacity-blocks` the blocks alone with
 * their windows, and `capacity-blocks offerings` the blocks that can be
 * bought (DescribeCapacityBlockOfferings).  Nothing is bought here: a
 * purchase costs money and stays a human act (aws ec2
 * purchase-capacity-block).  A region that does not answer is named and
 * makes the command fail; the others are still shown.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "gb_ec2.h"
#include "gb_plan.h"
#include "gb_util.h"

#define RESERVATIONS_TIMEOUT_MS 15000

/* The longest block EC2 sells: 182 days. */
#define BLOCK_DAYS_MAX 182
#define BLOCK_COUNT_MAX 64

static const char CB_KIND[] = "capacity-block";

/* --region [only]: it must be configured. */
static gb_err_t check_region(const struct gb_conf *conf, const char *cmd, const char *only)
{
	if (only && !gb_conf_region(conf, only))
		return ctl_usage(cmd, "region %s is not configured", only);
	return GB_E_OK;
}

/*
 * A region that did not answer: the first is the exit status (and the
 * --json error), each is said on stderr and listed in [failed].
 */
static void region_failed(const char *cmd, const char *action, const char *region,
			  gb_err_t rc, const gb_error_t *err, gb_err_t *first, json_t *failed)
{
	if (!*first)
		*first = ctl_fail(rc, "%s: %s in %s: %s", cmd, action, region, err->text);
	else
		fprintf(stderr, "gpuburstctl: %s: %s in %s: %s\n", cmd, action, region, err->text);
	if (failed)
		json_array_append_new(failed, json_string(region));
}

static bool is_block(const struct gb_ec2_capacity_reservation *cr)
{
	return cr->reservation_type && strcmp(cr->reservation_type, CB_KIND) == 0;
}

static json_t *reservation_json(const char *region, const struct gb_ec2_capacity_reservation *cr)
{
	return json_pack("{s:s,s:s?,s:s,s:s?,s:s?,s:s?,s:s?,s:i,s:i,s:o,s:o}", "region", region,
			 "id", cr->id, "kind", is_block(cr) ? CB_KIND : "odcr",
			 "instance_type", cr->instance_type, "availability_zone",
			 cr->availability_zone, "state", cr->state, "match", cr->match_criteria,
			 "total", cr->total, "available", cr->available,
			 "start", ctl_jtime(cr->start_date), "end", ctl_jtime(cr->end_date));
}

struct listing {
	const char *cmd;
	bool blocks;			/* capacity-blocks: only those */
	struct ctl_table t;
	json_t *items;			/* --json */
	size_t shown;
	size_t answered;		/* regions */
};

static void list_region(struct listing *ls, const char *region,
			const struct gb_ec2_capacity_reservation_list *l)
{
	char start[32], end[32], counts[32];

	for (size_t i = 0; i < l->n; i++) {
		const struct gb_ec2_capacity_reservation *cr = &l->v[i];

		if (ls->blocks && !is_block(cr))
			continue;
		ls->shown++;
		if (ls->items) {
			json_array_append_new(ls->items, reservation_json(region, cr));
			continue;
		}
		snprintf(counts, sizeof(counts), "%d/%d", cr->available, cr->total);
		ctl_table_row(&ls->t, region, cr->id, is_block(cr) ? CB_KIND : "odcr",
			      cr->instance_type ? cr->instance_type : "-",
			      cr->availability_zone ? cr->availability_zone : "-",
			      cr->state ? cr->state : "-", counts,
			      cr->match_criteria ? cr->match_criteria : "-",
			      ctl_time(cr->start_date, start, sizeof(start)),
			      cr->end_date > 0 ? ctl_time(cr->end_date, end, sizeof(end)) : "none");
	}
}

static gb_err_t run_listing(struct ctl *ctl, struct listing *ls, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "region", required_argument, NULL, 'r' },
		{ "type", required_argument, NULL, 't' },
		CTL_COMMON_LONGOPTS, { 0 }
	};
	struct gb_ec2_filter flt = { "instance-type", NULL, 0 };
	struct gb_ec2_capacity_reservations_params p = { 0 };
	const char *only = NULL, *type = NULL;
	const struct gb_conf *conf;
	json_t *failed = NULL;
	gb_creds_t *creds = NULL;
	gb_error_t err = { 0 };
	gb_err_t rc, first_rc = GB_E_OK;
	bool first = true;
	int c;

	while ((c = ctl_getopt(ctl, ls->cmd, argc, argv, ":jhr:t:", longopts, &first, &rc)) != -1) {
		if (c == CTL_OPT_DONE)
			return rc;
		if (c == 'r')
			only = optarg;
		else if (c == 't')
			type = optarg;
		else
			return ctl_unimplemented(ls->cmd, c);
	}
	if (optind < argc)
		return ctl_usage(ls->cmd, "unexpected argument '%s'", argv[optind]);
	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	if ((rc = check_region(conf, ls->cmd, only)))
		return rc;
	if (type) {
		flt.values = &type;
		flt.n_values = 1;
		p.filters = &flt;
		p.n_filters = 1;
	}
	ctl_log_open(ctl);
	if ((rc = gb_plan_creds_create(conf, &creds, &err))) {
		rc = ctl_fail(rc, "%s: credentials: %s", ls->cmd, err.text);
		goto out;
	}
	if (ctl->json) {
		ls->items = json_array();
		failed = json_array();
	} else {
		ctl_table_init(&ls->t, 10, "REGION", "ID", "KIND", "TYPE", "AZ", "STATE",
			       "AVAILABLE", "MATCH", "START", "END");
	}
	for (size_t i = 0; i < conf->n_regions; i++) {
		const struct gb_conf_region *r = &conf->regions[i];
		struct gb_ec2_capacity_reservation_list *l = NULL;
		struct gb_ec2_error ae = { 0 };
		gb_ec2_t *ec2 = NULL;

		if (only && strcmp(r->name, only))
			continue;
		if (!(rc = ctl_ec2_client(conf, r, creds, RESERVATIONS_TIMEOUT_MS, &ec2, &err)))
			rc = gb_ec2_describe_capacity_reservations(ec2, &p, &l, &ae, &err);
		if (rc) {
			region_failed(ls->cmd, "DescribeCapacityReservations", r->name, rc, &err,
				      &first_rc, failed);
		} else {
			ls->answered++;
			list_region(ls, r->name, l);
		}
		gb_ec2_capacity_reservation_list_free(l);
		gb_ec2_destroy(ec2);
	}
	if (ctl->json) {
		ctl_json_result(json_pack("{s:o,s:o}", "reservations", ls->items,
					  "failed_regions", failed));
		ls->items = failed = NULL;
	} else if (ls->shown) {
		ctl_table_print(&ls->t, stdout);
	} else {
		printf("%s: none%s%s in the %zu region%s that answered\n",
		       ls->blocks ? "capacity blocks" : "reservations", type ? " of " : "",
		       type ? type : "", ls->answered, ls->answered == 1 ? "" : "s");
	}
	rc = first_rc;
out:
	ctl_table_free(&ls->t);
	json_decref(ls->items);
	json_decref(failed);
	gb_creds_destroy(creds);
	return rc;
}

gb_err_t ctl_cmd_reservations(struct ctl *ctl, int argc, char **argv)
{
	struct listing ls = { .cmd = "reservations" };

	return run_listing(ctl, &ls, argc, argv);
}

gb_err_t ctl_cmd_capacity_blocks(struct ctl *ctl, int argc, char **argv)
{
	struct listing ls = { .cmd = "capacity-blocks", .blocks = true };

	return run_listing(ctl, &ls, argc, argv);
}

/*****************************************************************************
 *  offerings
 *****************************************************************************/

static json_t *offering_json(const char *region, const struct gb_ec2_capacity_block_offering *o)
{
	return json_pack("{s:s,s:s?,s:s?,s:s?,s:i,s:o,s:o,s:i,s:s?,s:s?}", "region", region,
			 "id", o->id, "instance_type", o->instance_type, "availability_zone",
			 o->availability_zone, "count", o->count, "start", ctl_jtime(o->start_date),
			 "end", ctl_jtime(o->end_date), "duration_hours", o->duration_hours,
			 "upfront_fee", o->upfront_fee, "currency", o->currency);
}

gb_err_t ctl_cmd_capacity_blocks_offerings(struct ctl *ctl, int argc, char **argv)
{
	static const char cmd[] = "capacity-blocks offerings";
	static const struct option longopts[] = {
		{ "type", required_argument, NULL, 't' },
		{ "count", required_argument, NULL, 'n' },
		{ "days", required_argument, NULL, 'd' },
		{ "region", required_argument, NULL, 'r' },
		CTL_COMMON_LONGOPTS, { 0 }
	};
	struct gb_ec2_capacity_block_offerings_params p = { 0 };
	const char *only = NULL;
	const struct gb_conf *conf;
	struct ctl_table t = { 0 };
	json_t *items = NULL, *failed = NULL;
	gb_creds_t *creds = NULL;
	gb_error_t err = { 0 };
	gb_err_t rc, first_rc = GB_E_OK;
	long count = 0, days = 0;
	bool first = true;
	size_t shown = 0;
	int c;

	while ((c = ctl_getopt(ctl, cmd, argc, argv, ":jht:n:d:r:", longopts, &first, &rc)) != -1) {
		if (c == CTL_OPT_DONE)
			return rc;
		if (c == 't')
			p.instance_type = optarg;
		else if (c == 'r')
			only = optarg;
		else if (c == 'n' && (rc = ctl_parse_long(cmd, "--count", optarg, 1, BLOCK_COUNT_MAX,
							  &count)))
			return rc;
		else if (c == 'd' && (rc = ctl_parse_long(cmd, "--days", optarg, 1, BLOCK_DAYS_MAX,
							  &days)))
			return rc;
		else if (c != 'n' && c != 'd')
			return ctl_unimplemented(cmd, c);
	}
	if (optind < argc)
		return ctl_usage(cmd, "unexpected argument '%s'", argv[optind]);
	if (!p.instance_type || !count || !days)
		return ctl_usage(cmd, "--type T, --count N and --days D are required");
	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	if ((rc = gb_conf_type_check(conf, p.instance_type, &err)))
		return ctl_fail(rc, "%s: %s", cmd, err.text);
	p.instance_count = (int)count;
	p.duration_hours = (int)days * 24;
	if ((rc = check_region(conf, cmd, only)))
		return rc;
	ctl_log_open(ctl);
	if ((rc = gb_plan_creds_create(conf, &creds, &err))) {
		rc = ctl_fail(rc, "%s: credentials: %s", cmd, err.text);
		goto out;
	}
	if (ctl->json) {
		items = json_array();
		failed = json_array();
	} else {
		ctl_table_init(&t, 8, "REGION", "OFFERING", "TYPE", "AZ", "COUNT", "START", "END",
			       "UPFRONT_FEE");
	}
	for (size_t i = 0; i < conf->n_regions; i++) {
		const struct gb_conf_region *r = &conf->regions[i];
		struct gb_ec2_capacity_block_offering_list *l = NULL;
		struct gb_ec2_error ae = { 0 };
		gb_ec2_t *ec2 = NULL;

		if (only && strcmp(r->name, only))
			continue;
		if (!(rc = ctl_ec2_client(conf, r, creds, RESERVATIONS_TIMEOUT_MS, &ec2, &err)))
			rc = gb_ec2_describe_capacity_block_offerings(ec2, &p, &l, &ae, &err);
		if (rc)
			region_failed(cmd, "DescribeCapacityBlockOfferings", r->name, rc, &err,
				      &first_rc, failed);
		for (size_t k = 0; !rc && k < l->n; k++) {
			const struct gb_ec2_capacity_block_offering *o = &l->v[k];
			char start[32], end[32], num[24], fee[64];

			shown++;
			if (items) {
				json_array_append_new(items, offering_json(r->name, o));
				continue;
			}
			snprintf(fee, sizeof(fee), "%s %s", o->upfront_fee ? o->upfront_fee : "?",
				 o->currency ? o->currency : "");
			ctl_table_row(&t, r->name, o->id ? o->id : "-",
				      o->instance_type ? o->instance_type : "-",
				      o->availability_zone ? o->availability_zone : "-",
				      ctl_itoa(o->count, num, sizeof(num)),
				      ctl_time(o->start_date, start, sizeof(start)),
				      ctl_time(o->end_date, end, sizeof(end)), fee);
		}
		gb_ec2_capacity_block_offering_list_free(l);
		gb_ec2_destroy(ec2);
	}
	if (items) {
		ctl_json_result(json_pack("{s:o,s:o}", "offerings", items, "failed_regions", failed));
		items = failed = NULL;
	} else if (shown) {
		ctl_table_print(&t, stdout);
		printf("buying one is not done here: aws ec2 purchase-capacity-block "
		       "--capacity-block-offering-id ID --instance-platform Linux/UNIX\n");
	} else {
		printf("no capacity block of %ld x %s for %ld day%s is offered\n", count,
		       p.instance_type, days, days == 1 ? "" : "s");
	}
	rc = first_rc;
out:
	ctl_table_free(&t);
	json_decref(items);
	json_decref(failed);
	gb_creds_destroy(creds);
	return rc;
}
