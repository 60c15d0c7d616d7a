/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_cost.c - gpuburstctl cost
 *
 * Instance-hours and money from the state file: every instance's time in
 * the window (launch to termination, per second; a live one to now)
 * times the price of its region, type and capacity kind from the price
 * file (gb_policy_cost).  Grouped by cluster (default), job, user,
 * account, partition, region or type.  The window defaults to the current
 * calendar month (UTC), the one budgets count.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "gb_policy.h"
#include "gb_util.h"

static const struct option cost_longopts[] = {
	CTL_COMMON_LONGOPTS,
	{ "by", required_argument, NULL, 'b' },
	{ "since", required_argument, NULL, 's' },
	{ "until", required_argument, NULL, 'u' },
	{ NULL, 0, NULL, 0 }
};

#define TIME_HELP "2026-11-29T15:13:45Z, 2026-11-29, or an age: 90s, 15m, 2h, 3d"

struct cost_opts {
	enum gb_cost_by by;
	double since, until;
};

static gb_err_t cost_options(struct ctl *ctl, int argc, char **argv, struct cost_opts *o,
			     bool *done)
{
	const char *cmd = "cost";
	bool first = true;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, cmd, argc, argv, ":jhb:s:u:", cost_longopts, &first,
			       &rc)) != -1) {
		switch (c) {
		case CTL_OPT_DONE:
			*done = true;
			return rc;
		case 'b':
			if (gb_cost_by_parse(optarg, &o->by))
				return ctl_usage(cmd, "invalid --by \"%s\" (cluster, job, user, account, partition, region, type)",
						 optarg);
			break;
		case 's':
			if (gb_time_parse(optarg, ctl->now, &o->since))
				return ctl_usage(cmd, "invalid --since \"%s\" (" TIME_HELP ")", optarg);
			break;
		case 'u':
			if (gb_time_parse(optarg, ctl->now, &o->until))
				return ctl_usage(cmd, "invalid --until \"%s\" (" TIME_HELP ")", optarg);
			break;
		default:
			return ctl_unimplemented(cmd, c);
		}
	}
	if (optind < argc)
		return ctl_usage(cmd, "unexpected argument \"%s\"", argv[optind]);
	if (!(o->until > o->since))
		return ctl_usage(cmd, "--until must be after --since");
	return GB_E_OK;
}

static json_t *row_json(const char *by, const struct gb_cost_row *r)
{
	return json_pack("{s:s,s:I,s:f,s:f,s:f,s:b}", by, r->key, "instances",
			 (json_int_t)r->instances,
			 "instance_hours", r->seconds / 3600.0, "usd", r->usd,
			 "unpriced_instance_hours", r->unpriced_seconds / 3600.0,
			 "priced", r->unpriced_seconds <= 0);
}

static void print_json(const struct ctl *ctl, const struct cost_opts *o,
		       const struct gb_cost_report *r)
{
	const char *by = gb_cost_by_name(o->by);
	char since[32], until[32];
	json_t *rows = json_array(), *doc;

	for (size_t i = 0; i < r->n; i++)
		json_array_append_new(rows, row_json(by, &r->v[i]));
	doc = json_pack("{s:s,s:s,s:s,s:s?,s:o,s:{s:I,s:f,s:f,s:f}}", "by", by,
			"since", ctl_time(o->since, since, sizeof(since)),
			"until", ctl_time(o->until, until, sizeof(until)),
			"prices", ctl->conf->prices_path, "rows", rows, "total",
			"instances", (json_int_t)r->instances, "instance_hours",
			r->seconds / 3600.0, "usd", r->usd, "unpriced_instance_hours",
			r->unpriced_seconds / 3600.0);
	ctl_json_result(doc);
}

static void print_table(const struct ctl *ctl, const struct cost_opts *o,
			const struct gb_cost_report *r)
{
	char since[32], until[32], n[32], h[32], usd[32];
	struct ctl_table t;
	char by[16];

	snprintf(by, sizeof(by), "%s", gb_cost_by_name(o->by));
	for (char *p = by; *p; p++)
		*p = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
	printf("cost from %s to %s", ctl_time(o->since, since, sizeof(since)),
	       ctl_time(o->until, until, sizeof(until)));
	printf(", prices %s\n", ctl->conf->prices_path ? ctl->conf->prices_path
						       : "none (gpuburstctl prices refresh)");
	if (!r->n) {
		puts("no instance ran in this window");
		return;
	}
	ctl_table_init(&t, 5, by, ">INSTANCES", ">HOURS", ">USD", "NOTE");
	for (size_t i = 0; i < r->n; i++) {
		const struct gb_cost_row *row = &r->v[i];

		snprintf(h, sizeof(h), "%.3f", row->seconds / 3600.0);
		snprintf(usd, sizeof(usd), "%.2f", row->usd);
		ctl_table_row(&t, row->key, ctl_itoa((long long)row->instances, n, sizeof(n)), h,
			      usd, row->unpriced_seconds > 0 ? "some hours have no price" : "");
	}
	ctl_table_print(&t, stdout);
	ctl_table_free(&t);
	printf("total: %zu instance%s, %.3f instance-hours, %.2f USD", r->instances,
	       r->instances == 1 ? "" : "s", r->seconds / 3600.0, r->usd);
	if (r->unpriced_seconds > 0)
		printf(" (%.3f of the hours have no price: not counted)",
		       r->unpriced_seconds / 3600.0);
	putchar('\n');
}

gb_err_t ctl_cmd_cost(struct ctl *ctl, int argc, char **argv)
{
	struct cost_opts o = { GB_COST_BY_CLUSTER, 0, 0 };
	struct gb_cost_report r = { 0 };
	gb_error_t err = { 0 };
	bool done = false;
	gb_state_t *st;
	gb_err_t rc;

	o.since = gb_spend_month(ctl->now, (char[8]){ 0 }, 8);
	o.until = ctl->now;
	rc = cost_options(ctl, argc, argv, &o, &done);
	if (rc || done)
		return rc;
	st = ctl_state(ctl, false, &rc);
	if (rc)
		return rc;
	if (st && (rc = gb_policy_cost(ctl->conf, st, o.since, o.until, ctl->now, o.by, &r,
				       &err)))
		return ctl_fail(rc, "%s", err.text);
	if (ctl->json)
		print_json(ctl, &o, &r);
	else
		print_table(ctl, &o, &r);
	gb_cost_report_clear(&r);
	return GB_E_OK;
}
