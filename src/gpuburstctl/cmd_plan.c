/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_plan.c - gpuburstctl plan: the plan a resume would start with now
 *
 * gb_orch_plan_dry_run: candidates, preflight (may ask the cloud which AZs
 * offer the type, and cache the answer), capacity memory, the LLM
 * planner's proposal when it is configured (and why it was not used), the
 * heuristic plan.  Nothing is launched.  The approval policy is applied to
 * the hypothetical request too, so an administrator sees whether it would
 * wait.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "gb_orch.h"
#include "gb_prog.h"

struct plan_opts {
	const char *type, *home, *nodeset, *strategy;
	long count;
	bool jobless;
};

static const struct option plan_longopts[] = {
	CTL_COMMON_LONGOPTS,
	{ "type", required_argument, NULL, 't' },
	{ "count", required_argument, NULL, 'n' },
	{ "home", required_argument, NULL, 'r' },
	{ "strategy", required_argument, NULL, 's' },
	{ "nodeset", required_argument, NULL, 'N' },
	{ "jobless", no_argument, NULL, 'J' },
	{ NULL, 0, NULL, 0 }
};

static gb_err_t parse(struct ctl *ctl, int argc, char **argv,
		      struct plan_opts *p, bool *done)
{
	const char *cmd = "plan";
	enum gb_strategy s;
	bool first = true;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, cmd, argc, argv, ":jht:n:r:s:N:J", plan_longopts,
			       &first, &rc)) != -1) {
		switch (c) {
		case CTL_OPT_DONE:
			*done = true;
			return rc;
		case 't':
			p->type = optarg;
			break;
		case 'n':
			if ((rc = ctl_parse_long(cmd, "--count", optarg, 1, 100000,
						 &p->count)))
				return rc;
			break;
		case 'r':
			p->home = optarg;
			break;
		case 's':
			if (gb_conf_strategy_parse(optarg, &s))
				return ctl_usage(cmd, "invalid strategy \"%s\" (default, probe_fill, best_effort, all_or_nothing)",
						 optarg);
			p->strategy = optarg;
			break;
		case 'N':
			p->nodeset = optarg;
			break;
		case 'J':
			p->jobless = true;
			break;
		default:
			return ctl_unimplemented(cmd, c);
		}
	}
	if (optind < argc)
		return ctl_usage(cmd, "unexpected argument \"%s\"", argv[optind]);
	if (!p->count)
		return ctl_usage(cmd, "--count N is required");
	if (!p->type && !p->nodeset)
		return ctl_usage(cmd, "--type T (or --nodeset NAME) is required");
	return GB_E_OK;
}

/*
 * The nodeset that lends mode, locality and default strategy: the one
 * named; else the first with the type among its instance types (and the
 * home region, when given); else
 * the first of the home region; else the first one.
 */
static const struct gb_conf_nodeset *pick_nodeset(const struct gb_conf *conf,
						  const struct plan_opts *p)
{
	const struct gb_conf_nodeset *of_type = NULL, *of_home = NULL;

	if (p->nodeset)
		return gb_conf_nodeset(conf, p->nodeset);
	for (size_t i = 0; i < conf->n_nodesets; i++) {
		const struct gb_conf_nodeset *ns = &conf->nodesets[i];
		bool home = !p->home || strcmp(ns->home_region, p->home) == 0;

		if (gb_conf_nodeset_has_type(ns, p->type)) {
			if (home)
				return ns;
			if (!of_type)
				of_type = ns;
		} else if (home && p->home && !of_home) {
			of_home = ns;
		}
	}
	if (of_type)
		return of_type;
	if (of_home)
		return of_home;
	return conf->n_nodesets ? &conf->nodesets[0] : NULL;
}

/* {"planner", "status", "reason"}, or null when no plug-in planner was asked. */
static json_t *proposal_json(const struct gb_orch_proposal *pr)
{
	if (!pr->planner[0])
		return json_null();
	return json_pack("{s:s,s:s,s:o}", "planner", pr->planner, "status", pr->status,
			 "reason", pr->reason[0] ? json_string(pr->reason) : json_null());
}

/*
 * The LLM planner proposes, the validator decides: say when the plan shown
 * is the heuristic one because the proposal was rejected or never came.
 */
static void print_proposal(const struct gb_orch_proposal *pr)
{
	if (!pr->planner[0] || strcmp(pr->status, "used") == 0)
		return;
	if (strcmp(pr->status, "rejected") == 0)
		printf("Planner: %s plan rejected: %s; using the heuristic plan\n", pr->planner,
		       pr->reason);
	else if (strcmp(pr->status, "skipped") == 0)
		printf("Planner: %s not asked: %s\n", pr->planner, pr->reason);
	else
		printf("Planner: %s gave no plan: %s; using the heuristic plan\n", pr->planner,
		       pr->reason);
}

static void print_plan(struct ctl *ctl, const struct gb_plan *plan,
		       const struct gb_request *req, const char *summary,
		       const struct gb_orch_proposal *pr,
		       const struct gb_policy_verdict *size,
		       const struct gb_policy_verdict *geo)
{
	struct ctl_table t;
	bool typed = false;

	if (ctl->json) {
		char *body = NULL;
		json_t *doc = json_object();

		gb_plan_to_json(plan, &body, NULL);
		json_object_set_new(doc, "plan", ctl_jraw(body));
		json_object_set_new(doc, "proposal", proposal_json(pr));
		json_object_set_new(doc, "nodeset", json_string(req->nodeset));
		json_object_set_new(doc, "home_region", json_string(req->home_region));
		json_object_set_new(doc, "count", json_integer(req->node_count));
		json_object_set_new(doc, "capacity_summary", ctl_jstr(summary));
		json_object_set_new(doc, "approval", json_pack("{s:b,s:s,s:s}",
			"needed", size->needs_approval || geo->needs_approval,
			"rule", gb_policy_rule_name(size->needs_approval ? size->rule : geo->rule),
			"why", size->needs_approval ? size->why : geo->why));
		ctl_json_result(doc);
		free(body);
		return;
	}
	printf("Plan for %d x %s, home %s (nodeset %s, planner %s): aims for %d\n",
	       req->node_count, plan->instance_type, req->home_region, req->nodeset,
	       plan->planner, plan->total);
	print_proposal(pr);
	/*
	 * TYPE and CAPACITY columns only when a step launches another of the
	 * nodeset's types, or draws on another rung than on-demand
	 */
	for (size_t i = 0; i < plan->n_steps && !typed; i++)
		typed = strcmp(plan->steps[i].type, plan->instance_type) != 0 ||
			plan->steps[i].capacity != GB_CAPACITY_ON_DEMAND;
	if (typed)
		ctl_table_init(&t, 9, ">#", "REGION", "AZ", "SUBNET", "TYPE", "CAPACITY",
			       ">BATCH", ">EXPECT", "WHY");
	else
		ctl_table_init(&t, 7, ">#", "REGION", "AZ", "SUBNET", ">BATCH", ">EXPECT",
			       "WHY");
	t.indent = "  ";
	for (size_t i = 0; i < plan->n_steps; i++) {
		const struct gb_plan_step *s = &plan->steps[i];
		char n[16], b[16], e[16], cap[96];

		snprintf(cap, sizeof(cap), "%s%s%s", gb_conf_capacity_name(s->capacity),
			 s->target ? " " : "", s->target ? s->target : "");
		if (typed)
			ctl_table_row(&t, ctl_itoa((long long)i + 1, n, sizeof(n)), s->region,
				      s->az, s->subnet, s->type, cap,
				      ctl_itoa(s->batch, b, sizeof(b)),
				      s->expect ? ctl_itoa(s->expect, e, sizeof(e)) : "?",
				      s->reason);
		else
			ctl_table_row(&t, ctl_itoa((long long)i + 1, n, sizeof(n)), s->region,
				      s->az, s->subnet, ctl_itoa(s->batch, b, sizeof(b)),
				      s->expect ? ctl_itoa(s->expect, e, sizeof(e)) : "?",
				      s->reason);
	}
	ctl_table_print(&t, stdout);
	ctl_table_free(&t);
	if (plan->rationale)
		printf("Rationale: %s\n", plan->rationale);
	if (summary && *summary)
		printf("Capacity memory: %s\n", summary);
	if (size->needs_approval)
		printf("Approval: needed (%s)\n", size->why);
	else if (geo->needs_approval)
		printf("Approval: needed (%s)\n", geo->why);
	else
		printf("Approval: not needed (%d nodes <= %s threshold %d)\n", size->counted,
		       gb_conf_env_name(ctl->conf->environment), size->threshold);
}

/*
 * The state file, for the capacity memory and the offerings cache.  plan
 * is a read-only command: it creates nothing, neither the file nor its
 * directory.  An existing file is opened read-write when we may, so that
 * the offerings the preflight learns are cached as a resume would cache
 * them, else read-only; without a file the plan has no memory (NULL).
 */
static gb_state_t *plan_state(struct ctl *ctl)
{
	gb_error_t why = { 0 };
	gb_state_t *st;
	gb_err_t rc;

	if ((st = ctl_state_existing(ctl, &why)) || ctl->st_missing)
		return st;
	fprintf(stderr, "gpuburstctl: warning: planning without a writable state file (no offerings cache): %s\n",
		why.text);
	return ctl_state(ctl, false, &rc);
}

gb_err_t ctl_cmd_plan(struct ctl *ctl, int argc, char **argv)
{
	struct plan_opts p = { 0 };
	struct gb_orch_resume_opts ro = GB_ORCH_RESUME_OPTS_INIT;
	struct gb_orch_opts oo = { 0 };
	struct gb_policy_verdict size, geo;
	struct gb_orch_proposal pr;
	struct gb_request req = { .id = "" };
	const struct gb_conf_nodeset *ns;
	const struct gb_conf *conf;
	struct gb_plan *plan = NULL;
	const char **regions = NULL;
	gb_orch_t *orch = NULL;
	char *summary = NULL, path[4096];
	gb_error_t err = { 0 };
	bool done = false;
	gb_err_t rc;

	rc = parse(ctl, argc, argv, &p, &done);
	if (rc || done)
		return rc;
	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	if (!(ns = pick_nodeset(conf, &p)))
		return p.nodeset ? ctl_fail(GB_E_NOTFOUND, "no nodeset %s in %s", p.nodeset, conf->path)
				 : ctl_fail(GB_E_NOTFOUND, "%s has no nodesets", conf->path);
	if (p.type && !gb_conf_instance_type(conf, p.type))
		return ctl_fail(GB_E_INVALID, "instance type %s is not in the GPU catalog", p.type);
	if (p.type && !gb_conf_type_allowed(conf, p.type))
		return ctl_fail(GB_E_INVALID, "instance type %s is not in policy.allowed_families", p.type);
	req.kind = GB_REQ_RESUME;
	req.nodeset = ns->name;
	req.job_id = p.jobless ? 0 : 1;
	req.node_count = (int)p.count;
	req.instance_type = p.type ? p.type : ns->instance_type;
	req.home_region = p.home ? p.home : ns->home_region;
	req.strategy = p.strategy;

	gb_prog_state_path(conf, path, sizeof(path));
	oo.conf = conf;
	oo.state_path = path;
	if ((rc = gb_orch_create(&oo, &orch, &err))) {
		ctl_fail(rc, "%s", err.text);
		goto out;
	}
	rc = gb_orch_plan_dry_run(orch, plan_state(ctl), &req, &ro, &plan, &summary, &pr, &err);
	if (rc) {
		ctl_fail(rc, "%s", err.text);
		goto out;
	}
	gb_policy_judge(conf, req.job_id, req.node_count, &size);
	if (!(regions = calloc(plan->n_steps + 1, sizeof(*regions)))) {
		rc = ctl_fail(GB_E_NOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < plan->n_steps; i++)
		regions[i] = plan->steps[i].region;
	gb_policy_geo(conf, regions, plan->n_steps, &geo);
	print_plan(ctl, plan, &req, summary, &pr, &size, &geo);
out:
	free(regions);
	free(summary);
	gb_plan_free(plan);
	gb_orch_destroy(orch);
	return rc;
}
