/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_instances.c - gpuburstctl instances | capacity
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ctl.h"

/*****************************************************************************
 *  instances
 *****************************************************************************/

struct inst_out {
	struct ctl *ctl;
	json_t *list;
	struct ctl_table table;
	size_t n;
	double total;		/* instance-seconds of the listed ones */
};

static int inst_cb(const struct gb_instance *in, void *arg)
{
	struct inst_out *o = arg;
	double ran = ctl_instance_ran(in, o->ctl->now);
	char launched[32], terminated[32], secs[32], human[64];

	o->n++;
	if (ran > 0)
		o->total += ran;
	if (o->list) {
		json_array_append_new(o->list, ctl_instance_json(in, o->ctl->now));
		return 0;
	}
	ctl_table_row(&o->table, in->node ? in->node : "(none)", in->instance_id,
		      in->region, in->az, in->instance_type,
		      gb_instance_state_name(in->state),
		      ctl_time(in->launched_at, launched, sizeof(launched)),
		      ctl_time(in->terminated_at, terminated, sizeof(terminated)),
		      ran >= 0 ? ctl_itoa((long long)ran, secs, sizeof(secs)) : "-",
		      ctl_dur(ran, human, sizeof(human)), in->request_id);
	return 0;
}

static const struct option inst_longopts[] = {
	CTL_COMMON_LONGOPTS,
	{ "region", required_argument, NULL, 'r' },
	{ "type", required_argument, NULL, 't' },
	{ "state", required_argument, NULL, 's' },
	{ "node", required_argument, NULL, 'n' },
	{ "request", required_argument, NULL, 'q' },
	{ "alive", no_argument, NULL, 'a' },
	{ NULL, 0, NULL, 0 }
};

static gb_err_t inst_options(struct ctl *ctl, int argc, char **argv,
			     struct gb_instance_filter *f, bool *done)
{
	const char *cmd = "instances";
	enum gb_instance_state s;
	bool first = true;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, cmd, argc, argv, ":jhr:t:s:n:q:a",
			       inst_longopts, &first, &rc)) != -1) {
		switch (c) {
		case CTL_OPT_DONE:
			*done = true;
			return rc;
		case 'r':
			f->region = optarg;
			break;
		case 't':
			f->instance_type = optarg;
			break;
		case 's':
			if (gb_instance_state_parse(optarg, &s))
				return ctl_usage(cmd, "invalid state \"%s\" (pending, running, terminating, terminated, lost)",
						 optarg);
			f->state = (int)s;
			break;
		case 'n':
			f->node = optarg;
			break;
		case 'q':
			if ((rc = ctl_check_id(cmd, optarg)))
				return rc;
			f->request_id = optarg;
			break;
		case 'a':
			f->alive = true;
			break;
		default:
			return ctl_unimplemented(cmd, c);
		}
	}
	if (optind < argc)
		return ctl_usage(cmd, "unexpected argument \"%s\"", argv[optind]);
	return GB_E_OK;
}

gb_err_t ctl_cmd_instances(struct ctl *ctl, int argc, char **argv)
{
	struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
	struct inst_out o = { ctl };
	gb_error_t err = { 0 };
	bool done = false;
	gb_state_t *st;
	gb_err_t rc;

	rc = inst_options(ctl, argc, argv, &f, &done);
	if (rc || done)
		return rc;
	st = ctl_state(ctl, false, &rc);
	if (rc)
		return rc;
	if (ctl->json)
		o.list = json_array();
	else
		ctl_table_init(&o.table, 11, "NODE", "INSTANCE", "REGION", "AZ",
			       "TYPE", "STATE", "LAUNCHED", "TERMINATED",
			       ">SECONDS", "RAN", "REQUEST");
	if (st && (rc = gb_state_instance_list(st, &f, inst_cb, &o, &err)))
		ctl_fail(rc, "%s", err.text);
	if (ctl->json) {
		json_t *doc = json_object();

		json_object_set_new(doc, "instances", o.list);
		json_object_set_new(doc, "instance_seconds",
				    json_integer((json_int_t)o.total));
		if (rc == GB_E_OK)
			ctl_json_result(doc);
		else
			json_decref(doc);
	} else {
		char human[64];

		if (rc == GB_E_OK && o.n) {
			ctl_table_print(&o.table, stdout);
			printf("%zu instance%s, %s of running time in all\n", o.n,
			       o.n == 1 ? "" : "s",
			       ctl_dur(o.total, human, sizeof(human)));
		} else if (rc == GB_E_OK) {
			printf("no instances%s\n",
			       ctl->st_missing ? " (no state file yet)" : "");
		}
		ctl_table_free(&o.table);
	}
	return rc;
}

/*****************************************************************************
 *  capacity
 *****************************************************************************/

struct cap_out {
	const char *region;
	json_t *list;
	struct ctl_table table;
	size_t n;
};

static int cap_cb(const struct gb_capacity *c, void *arg)
{
	struct cap_out *o = arg;
	char asked[32], got[32], ice[32], fail[32], rate[32], li[32], ls[32], up[32];

	if (o->region && strcmp(o->region, c->region) != 0)
		return 0;
	o->n++;
	if (o->list) {
		json_t *j = json_object();

		json_object_set_new(j, "region", json_string(c->region));
		json_object_set_new(j, "az", ctl_jstr(c->az && *c->az ? c->az : NULL));
		json_object_set_new(j, "instance_type", json_string(c->instance_type));
		json_object_set_new(j, "asked", json_real(c->asked));
		json_object_set_new(j, "got", json_real(c->got));
		json_object_set_new(j, "ice", json_real(c->ice));
		json_object_set_new(j, "failures", json_real(c->failures));
		json_object_set_new(j, "fill_rate", c->asked > 0
			? json_real(c->got / c->asked) : json_null());
		json_object_set_new(j, "last_ice_at", ctl_jtime(c->last_ice_at));
		json_object_set_new(j, "last_success_at", ctl_jtime(c->last_success_at));
		json_object_set_new(j, "updated_at", ctl_jtime(c->updated_at));
		json_array_append_new(o->list, j);
		return 0;
	}
	snprintf(asked, sizeof(asked), "%.2f", c->asked);
	snprintf(got, sizeof(got), "%.2f", c->got);
	snprintf(ice, sizeof(ice), "%.2f", c->ice);
	snprintf(fail, sizeof(fail), "%.2f", c->failures);
	if (c->asked > 0)
		snprintf(rate, sizeof(rate), "%.0f%%", 100.0 * c->got / c->asked);
	else
		snprintf(rate, sizeof(rate), "-");
	ctl_table_row(&o->table, c->region, c->az && *c->az ? c->az : "-",
		      c->instance_type, asked, got, rate, ice, fail,
		      ctl_time(c->last_ice_at, li, sizeof(li)),
		      ctl_time(c->last_success_at, ls, sizeof(ls)),
		      ctl_time(c->updated_at, up, sizeof(up)));
	return 0;
}

static const struct option cap_longopts[] = {
	CTL_COMMON_LONGOPTS,
	{ "region", required_argument, NULL, 'r' },
	{ "type", required_argument, NULL, 't' },
	{ NULL, 0, NULL, 0 }
};

gb_err_t ctl_cmd_capacity(struct ctl *ctl, int argc, char **argv)
{
	const char *cmd = "capacity", *type = NULL;
	const struct gb_conf *conf;
	struct cap_out o = { 0 };
	gb_error_t err = { 0 };
	bool first = true;
	gb_state_t *st;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, cmd, argc, argv, ":jhr:t:", cap_longopts,
			       &first, &rc)) != -1) {
		switch (c) {
		case CTL_OPT_DONE:
			return rc;
		case 'r':
			o.region = optarg;
			break;
		case 't':
			type = optarg;
			break;
		default:
			return ctl_unimplemented(cmd, c);
		}
	}
	if (optind < argc)
		return ctl_usage(cmd, "unexpected argument \"%s\"", argv[optind]);
	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	st = ctl_state(ctl, false, &rc);
	if (rc)
		return rc;
	if (ctl->json)
		o.list = json_array();
	else
		ctl_table_init(&o.table, 11, "REGION", "AZ", "TYPE", ">ASKED",
			       ">GOT", ">FILL", ">ICE", ">FAILURES", "LAST_ICE",
			       "LAST_SUCCESS", "UPDATED");
	/* decayed to now with the configured half-life, as the planners see it */
	if (st && (rc = gb_state_capacity_list(st, type, ctl->now,
					       conf->policy.capacity_half_life,
					       cap_cb, &o, &err)))
		ctl_fail(rc, "%s", err.text);
	if (ctl->json) {
		json_t *doc = json_object();

		json_object_set_new(doc, "capacity", o.list);
		json_object_set_new(doc, "half_life",
				    json_real(conf->policy.capacity_half_life));
		json_object_set_new(doc, "as_of", ctl_jtime(ctl->now));
		if (rc == GB_E_OK)
			ctl_json_result(doc);
		else
			json_decref(doc);
	} else {
		char hl[64];

		if (rc == GB_E_OK && o.n) {
			ctl_table_print(&o.table, stdout);
			printf("counts decay with a half-life of %s (policy.capacity_half_life)\n",
			       ctl_dur(conf->policy.capacity_half_life, hl, sizeof(hl)));
		} else if (rc == GB_E_OK) {
			printf("no capacity memory%s\n",
			       ctl->st_missing ? " (no state file yet)" : "");
		}
		ctl_table_free(&o.table);
	}
	return rc;
}
