/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_nodes.c - gpuburstctl nodes resume NODES: a DOWN burst node back
 *
 * The explicit way back of a node gpuburst (or anyone) set DOWN, before
 * reconcile's cool-down would take it (gb_reconcile.h).  Slurm's intuitive
 * `scontrol update state=resume` on a DOWN CLOUD node leaves it
 * IDLE+CLOUD+NOT_RESPONDING+POWERING_UP, waiting for a slurmd that no
 * instance runs; the right transition is state=power_down_force: the node
 * is idle~ again and the next job resumes it through gpuburst-resume
 * (a live instance it may still have is terminated by gpuburst-suspend).
 *
 * A node that `scontrol update state=resume` already left NOT_RESPONDING
 * (POWERED_DOWN or POWERING_UP, Slurm's release decides) with nothing
 * behind it (no live instance, no resume request under way) is powered
 * down the same way.
 *
 * Every node of the list must be in a nodeset and known to Slurm, or
 * nothing is done: a node gpuburst does not own is never touched.  Other
 * nodes are reported and left alone (a drained node is the site's
 * decision: scontrol update state=resume).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "gb_log.h"
#include "gb_slurm.h"

struct row {
	const char *node;
	const char *state;	/* Slurm's state before */
	const char *reason;	/* Slurm's reason before, or NULL */
	const char *action;	/* "power_down_force", "none: ...", "failed" */
};

static const struct option nodes_longopts[] = {
	CTL_COMMON_LONGOPTS,
	{ "reason", required_argument, NULL, 'r' },
	{ NULL, 0, NULL, 0 }
};

static gb_err_t parse(struct ctl *ctl, int argc, char **argv, const char **expr,
		      const char **why, bool *done)
{
	bool first = true;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, "nodes resume", argc, argv, ":jhr:", nodes_longopts,
			       &first, &rc)) != -1) {
		switch (c) {
		case CTL_OPT_DONE:
			*done = true;
			return rc;
		case 'r':
			*why = optarg;
			break;
		default:
			return ctl_unimplemented("nodes resume", c);
		}
	}
	if (optind >= argc)
		return ctl_usage("nodes resume", "give NODES (a Slurm host list)");
	*expr = argv[optind++];
	if (optind < argc)
		return ctl_usage("nodes resume", "unexpected argument \"%s\"", argv[optind]);
	return GB_E_OK;
}

/* Every node in a nodeset, else the list of the others (nothing done). */
static gb_err_t check_owned(const struct gb_conf *conf, const struct gb_strv *names,
			    const struct gb_slurm_node_list *l)
{
	struct gb_buf foreign = GB_BUF_INIT, unknown = GB_BUF_INIT;
	size_t nf = 0, nu = 0;
	gb_err_t rc = GB_E_OK;

	for (size_t i = 0; i < names->n; i++) {
		if (!gb_conf_nodeset_for_node(conf, names->v[i]))
			gb_buf_printf(&foreign, "%s%s", nf++ ? "," : "", names->v[i]);
		else if (!gb_slurm_node_find(l, names->v[i]))
			gb_buf_printf(&unknown, "%s%s", nu++ ? "," : "", names->v[i]);
	}
	if (nf)
		rc = ctl_fail(GB_E_INVALID, "%zu node%s in no nodeset of %s (%s): not gpuburst's, "
			      "nothing done", nf, nf == 1 ? "" : "s", conf->path,
			      gb_buf_str(&foreign));
	else if (nu)
		rc = ctl_fail(GB_E_NOTFOUND, "%zu node%s unknown to Slurm (%s): nothing done", nu,
			      nu == 1 ? "" : "s", gb_buf_str(&unknown));
	gb_buf_free(&foreign);
	gb_buf_free(&unknown);
	return rc;
}

static int any_instance(const struct gb_instance *in, void *arg)
{
	(void)in;
	*(bool *)arg = true;
	return 1;
}

static int any_active(const struct gb_request *r, void *arg)
{
	if (r->state == GB_RSTATE_QUEUED || r->state == GB_RSTATE_RUNNING ||
	    r->state == GB_RSTATE_PENDING_APPROVAL) {
		*(bool *)arg = true;
		return 1;
	}
	return 0;
}

/*
 * Not responding, powered down or powering up, with nothing behind it: no live instance
 * and no resume queued, running or waiting for approval (a state file we
 * cannot read counts as something: left alone).
 */
static bool stuck_powering_up(struct ctl *ctl, const struct gb_slurm_node *sn)
{
	struct gb_instance_filter fi = GB_INSTANCE_FILTER_ANY;
	struct gb_request_filter fr = GB_REQUEST_FILTER_ANY;
	bool busy = false;
	gb_err_t rc;

	if (!sn->not_responding || !(sn->powering_up || sn->powered_down) ||
	    !ctl_state(ctl, true, &rc))
		return false;
	fi.node = sn->name;
	fi.alive = true;
	fr.node = sn->name;
	fr.kind = GB_REQ_RESUME;
	if (gb_state_instance_list(ctl->st, &fi, any_instance, &busy, NULL) ||
	    gb_state_request_list(ctl->st, &fr, any_active, &busy, NULL))
		return false;
	return !busy;
}

static void print_rows(struct ctl *ctl, const struct row *rows, size_t n)
{
	struct ctl_table t;

	if (ctl->json) {
		json_t *a = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, json_pack("{s:s,s:s,s:o,s:s}", "node",
				rows[i].node, "state", rows[i].state, "reason",
				ctl_jstr(rows[i].reason), "action", rows[i].action));
		ctl_json_result(json_pack("{s:o}", "nodes", a));
		return;
	}
	ctl_table_init(&t, 4, "NODE", "STATE", "ACTION", "REASON");
	for (size_t i = 0; i < n; i++)
		ctl_table_row(&t, rows[i].node, rows[i].state, rows[i].action,
			      rows[i].reason ? rows[i].reason : "-");
	ctl_table_print(&t, stdout);
	ctl_table_free(&t);
}

gb_err_t ctl_cmd_nodes_resume(struct ctl *ctl, int argc, char **argv)
{
	const char *expr = NULL, *why = NULL;
	struct gb_slurm_node_list *l = NULL;
	struct gb_strv names = { 0 }, down = { 0 };
	struct gb_policy_actor who;
	const struct gb_conf *conf;
	struct row *rows = NULL;
	char reason[GB_REASON_MAX], detail[GB_REASON_MAX + 128], q[GB_REASON_MAX + 8];
	size_t failed = 0;
	gb_error_t err = { 0 };
	bool done = false;
	gb_err_t rc, upd, src;

	rc = parse(ctl, argc, argv, &expr, &why, &done);
	if (rc || done)
		return rc;
	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	if ((rc = ctl_authorize(ctl, conf, &who)))
		return rc;
	if (gb_slurm_hostlist_expand(expr, 100000, &names, &err))
		return ctl_usage("nodes resume", "%s", err.text);
	if ((rc = gb_slurm_init(&err)) || (rc = gb_slurm_nodes_load(&l, &err))) {
		rc = ctl_fail(rc, "cannot read Slurm's nodes: %s", err.text);
		goto out;
	}
	if ((rc = check_owned(conf, &names, l)))
		goto out;
	if (!(rows = calloc(names.n, sizeof(*rows)))) {
		rc = ctl_fail(GB_E_NOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < names.n; i++) {
		const struct gb_slurm_node *sn = gb_slurm_node_find(l, names.v[i]);

		rows[i].node = sn->name;
		rows[i].state = sn->state_str ? sn->state_str : "?";
		rows[i].reason = sn->reason;
		if (!sn->down && !stuck_powering_up(ctl, sn)) {
			rows[i].action = sn->drain ? "none: drained, not DOWN (scontrol update state=resume)"
						   : "none: not DOWN";
			continue;
		}
		rows[i].action = "power_down_force";
		if (gb_strv_add(&down, sn->name)) {
			rc = ctl_fail(GB_E_NOMEM, "out of memory");
			goto out;
		}
	}
	ctl_log_open(ctl);
	snprintf(reason, sizeof(reason), "%sresumed by %s%s%s", GB_REASON_PREFIX, who.name,
		 why ? ": " : " (gpuburstctl nodes resume)", why ? why : "");
	upd = down.n ? gb_slurm_nodes_update(GB_SLURM_POWER_DOWN_FORCE, down.v, down.n, reason,
					     &failed, &err)
		     : GB_E_OK;
	for (size_t i = 0; upd && i < names.n; i++)
		if (strcmp(rows[i].action, "power_down_force") == 0)
			rows[i].action = failed >= down.n ? "failed (see the log)"
							  : "power_down_force (some failed: see the log)";
	snprintf(detail, sizeof(detail), "by=%s uid=%lld nodes=%s down=%zu failed=%zu reason=%s",
		 who.name, (long long)who.uid, expr, down.n, failed,
		 gb_log_q(q, sizeof(q), reason));
	gb_log_notice("nodes_resume %s", detail);
	if (ctl_state(ctl, true, &src))
		gb_state_event_add(ctl->st, NULL, "nodes_resume", detail, NULL);
	print_rows(ctl, rows, names.n);
	if (upd)
		rc = ctl_fail(failed && failed < down.n ? GB_E_PARTIAL : GB_E_SLURM,
			      "%zu of %zu nodes not updated in Slurm: %s", failed ? failed : down.n,
			      down.n, err.text);
out:
	free(rows);
	gb_strv_free(&names);
	gb_strv_free(&down);
	gb_slurm_node_list_free(l);
	return rc;
}
