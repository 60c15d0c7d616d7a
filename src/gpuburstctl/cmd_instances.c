/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_instances.c - gpuburstctl instances
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
	bool json;		/* streamed (ctl_json_row) */
	struct ctl_table table;
	size_t n;
	double total;		/* instance-seconds of the listed ones */
};

static int inst_cb(const struct gb_instance *in, void *arg)
{
	struct inst_out *o = arg;
	double ran = ctl_instance_ran(in, o->ctl->now);
	char launched[32], terminated[32], secs[32], human[64], agent[32];

	o->n++;
	if (ran > 0)
		o->total += ran;
	if (o->json) {
		ctl_json_row(ctl_instance_json(in, o->ctl->now));
		return 0;
	}
	ctl_table_row(&o->table, in->node ? in->node : "(none)", in->instance_id,
		      in->region, in->az, in->instance_type,
		      gb_instance_state_name(in->state),
		      ctl_time(in->launched_at, launched, sizeof(launched)),
		      ctl_time(in->terminated_at, terminated, sizeof(terminated)),
		      ran >= 0 ? ctl_itoa((long long)ran, secs, sizeof(secs)) : "-",
		      ctl_dur(ran, human, sizeof(human)), in->request_id,
		      ctl_agent_word(in->agent, agent, sizeof(agent)));
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
	{ "limit", required_argument, NULL, 'l' },
	{ "all", no_argument, NULL, 'A' },
	{ NULL, 0, NULL, 0 }
};

/* The table shows the newest this many unless --limit or --all says. */
#define INST_TABLE_LIMIT 100

static gb_err_t inst_options(struct ctl *ctl, int argc, char **argv,
			     struct gb_instance_filter *f, bool *done)
{
	const char *cmd = "instances";
	enum gb_instance_state s;
	bool first = true, all = false, limited = false;
	gb_err_t rc = GB_E_OK;
	long n;
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
		case 'l':
			if ((rc = ctl_parse_long(cmd, "--limit", optarg, 1, 100000000, &n)))
				return rc;
			f->limit = (size_t)n;
			limited = true;
			break;
		case 'A':
			all = true;
			break;
		default:
			return ctl_unimplemented(cmd, c);
		}
	}
	if (optind < argc)
		return ctl_usage(cmd, "unexpected argument \"%s\"", argv[optind]);
	if (all && limited)
		return ctl_usage(cmd, "--all and --limit exclude each other");
	/* the table pages; --json lists every match unless told otherwise */
	if (!all && !limited && !ctl->json)
		f->limit = INST_TABLE_LIMIT;
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
	/*
	 * Both stream the rows as SQLite reads them (constant memory): the
	 * table reads them twice in one snapshot, for its widths, then prints.
	 */
	f.stream = true;
	o.json = ctl->json;
	if (ctl->json) {
		ctl_json_stream("instances");
	} else {
		ctl_table_init(&o.table, 12, "NODE", "INSTANCE", "REGION", "AZ",
			       "TYPE", "STATE", "LAUNCHED", "TERMINATED",
			       ">SECONDS", "RAN", "REQUEST", "AGENT");
		ctl_table_measure(&o.table);
	}
	if (st && !ctl->json && (rc = gb_state_read_begin(st, &err)))
		ctl_fail(rc, "%s", err.text);
	if (st && !rc && (rc = gb_state_instance_list(st, &f, inst_cb, &o, &err)))
		ctl_fail(rc, "%s", err.text);
	if (st && !rc && !ctl->json && o.n) {
		ctl_table_stream(&o.table, stdout);
		o.n = 0;
		o.total = 0;
		if ((rc = gb_state_instance_list(st, &f, inst_cb, &o, &err)))
			ctl_fail(rc, "%s", err.text);
	}
	if (ctl->json) {
		json_t *doc = json_object();

		json_object_set_new(doc, "instance_seconds",
				    json_integer((json_int_t)o.total));
		if (rc == GB_E_OK)
			ctl_json_result(doc);
		else
			json_decref(doc);
	} else {
		char human[64];
		long all = (long)o.n;

		/* a page: how many match in all, by one count */
		if (rc == GB_E_OK && f.limit && o.n == f.limit &&
		    (rc = gb_state_instance_count(st, &f, &all, &err)))
			ctl_fail(rc, "%s", err.text);
		gb_state_read_end(st);
		if (rc == GB_E_OK && o.n) {
			if ((long)o.n < all)
				printf("the newest %zu of %ld instances (--all lists every one), "
				       "%s of running time for these\n", o.n, all,
				       ctl_dur(o.total, human, sizeof(human)));
			else
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
