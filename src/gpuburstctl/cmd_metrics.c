/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_metrics.c - gpuburstctl metrics [--output FILE], metrics serve
 *
 * What gpuburst did and holds, in the Prometheus text exposition format
 * (version 0.0.4, which OpenMetrics parsers read too), derived from the
 * state file (gb_state_metrics: requests, RunInstances calls, instances,
 * time to capacity, approvals, nodes, reconcile's last runs), the capacity
 * memory as `capacity --json` reads it, the spend summary and the
 * configuration (budgets, nodesets).  Counters are counts of rows, so they
 * are right after a restart; `state vacuum` pruning old rows lowers them,
 * which Prometheus reads as a counter reset.
 *
 * Two ways out: stdout or a file replaced atomically (node_exporter's
 * textfile collector; `metrics.textfile`, which reconcile writes after
 * each pass), and `metrics serve` (serve.c), a small read-only HTTP
 * endpoint on `metrics.listen`, loopback by default.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "gb_log.h"
#include "gb_util.h"

/* Time to capacity: the histogram's upper bounds, seconds. */
static const double ttc_bounds[] = { 15, 30, 60, 120, 300, 600, 1200, 1800, 3600 };
#define N_TTC (sizeof(ttc_bounds) / sizeof(ttc_bounds[0]))

/* Node states, in the order exposed. */
static const char *const node_states[] = {
	"powered_down", "requested", "pending", "running", "terminating",
};
#define N_NODE_STATES (sizeof(node_states) / sizeof(node_states[0]))

struct ttc {
	const char *nodeset;		/* BORROWED from the configuration */
	unsigned long bucket[N_TTC];
	unsigned long count;
	double sum;
};

/* One metric family: its header and its samples, kept together. */
struct family {
	const char *name, *type, *help;	/* static strings */
	struct gb_buf b;
};

#define FAMILIES_MAX 48

struct out {
	const struct gb_conf *conf;
	double now;
	struct family fam[FAMILIES_MAX];
	size_t n_fam;
	bool failed;
	struct ttc *ttc;		/* one per nodeset */
	unsigned long (*nodes)[N_NODE_STATES];	/* [nodeset][state] */
	unsigned long other_nodes;	/* rows of nodes no nodeset has */
};

/*****************************************************************************
 *  The format
 *****************************************************************************/

/* A label value: backslash, double quote and newline escaped. */
static void label_value(struct gb_buf *b, const char *v)
{
	gb_buf_putc(b, '"');
	for (const char *p = v ? v : ""; *p; p++) {
		if (*p == '\\' || *p == '"')
			gb_buf_printf(b, "\\%c", *p);
		else if (*p == '\n')
			gb_buf_puts(b, "\\n");
		else
			gb_buf_putc(b, *p);
	}
	gb_buf_putc(b, '"');
}

static void number(struct gb_buf *b, double v)
{
	if (isnan(v))
		gb_buf_puts(b, "NaN");
	else if (isinf(v))
		gb_buf_puts(b, v > 0 ? "+Inf" : "-Inf");
	else if (v == floor(v) && fabs(v) < 1e15)
		gb_buf_printf(b, "%.0f", v);
	else
		gb_buf_printf(b, "%.17g", v);
}

/* The family [name] (a histogram's _bucket, _sum, _count go into [base]'s). */
static struct family *family(struct out *o, const char *name, const char *type,
			     const char *help)
{
	for (size_t i = 0; i < o->n_fam; i++)
		if (strcmp(o->fam[i].name, name) == 0)
			return &o->fam[i];
	if (o->n_fam == FAMILIES_MAX) {
		o->failed = true;
		return NULL;
	}
	o->fam[o->n_fam] = (struct family){ name, type, help, GB_BUF_INIT };
	return &o->fam[o->n_fam++];
}

/*
 * One sample of family [f]: [name]{k1="v1",...} value.  The labels are
 * [n] (name, value) pairs.
 */
static void sample(struct out *o, struct family *f, const char *name,
		   const char *const *labels, size_t n, double v)
{
	struct gb_buf *b;

	if (!f)
		return;
	b = &f->b;
	gb_buf_puts(b, name);
	if (n) {
		gb_buf_putc(b, '{');
		for (size_t i = 0; i < n; i++) {
			gb_buf_printf(b, "%s%s=", i ? "," : "", labels[2 * i]);
			label_value(b, labels[2 * i + 1]);
		}
		gb_buf_putc(b, '}');
	}
	gb_buf_putc(b, ' ');
	number(b, v);
	gb_buf_putc(b, '\n');
	if (gb_buf_failed(b))
		o->failed = true;
}

#define L(...) ((const char *const[]){ __VA_ARGS__ })
#define NL(...) (sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *) / 2)
/* A sample of a gauge or counter [name] with its help, and labels. */
#define EMIT(o, name, type, help, v, ...) \
	sample((o), family((o), (name), (type), (help)), (name), L(__VA_ARGS__), \
	       NL(__VA_ARGS__), (v))
#define EMIT0(o, name, type, help, v) \
	sample((o), family((o), (name), (type), (help)), (name), NULL, 0, (v))

/*****************************************************************************
 *  From the state file
 *****************************************************************************/

static struct ttc *ttc_of(struct out *o, const char *nodeset)
{
	for (size_t i = 0; nodeset && i < o->conf->n_nodesets; i++)
		if (strcmp(o->conf->nodesets[i].name, nodeset) == 0)
			return &o->ttc[i];
	return NULL;
}

static void node_row(struct out *o, const struct gb_metric_row *r)
{
	const struct gb_conf_nodeset *ns = r->label[0] ?
		gb_conf_nodeset_for_node(o->conf, r->label[0]) : NULL;
	size_t k;

	for (k = 0; k < N_NODE_STATES; k++)
		if (r->label[1] && strcmp(node_states[k], r->label[1]) == 0)
			break;
	if (!ns || k == N_NODE_STATES) {
		o->other_nodes++;
		return;
	}
	o->nodes[ns - o->conf->nodesets][k]++;
}

/* The last run of a reconcile pass, and its findings by action kind. */
static void runs_row(struct out *o, const struct gb_metric_row *r)
{
	const char *pass = r->label[0];
	json_t *d = r->label[2] ? json_loads(r->label[2], 0, NULL) : NULL, *v;
	const char *kind;

	EMIT(o, "gpuburst_reconcile_last_run_timestamp_seconds", "gauge",
	     "When the last pass of each kind (reconcile: full, reconcile_cheap: no cloud call) ended.",
	     r->value[1], "pass", pass);
	EMIT(o, "gpuburst_reconcile_last_run_duration_seconds", "gauge",
	     "How long the last pass took.", r->value[1] - r->value[0], "pass", pass);
	EMIT(o, "gpuburst_reconcile_last_run_ok", "gauge",
	     "1 when the last pass completed, 0 when it stopped on a state file error.",
	     r->label[1] && strcmp(r->label[1], "1") == 0 ? 1 : 0, "pass", pass);
	EMIT(o, "gpuburst_reconcile_last_run_failed_actions", "gauge",
	     "Actions of the last pass that failed.", r->value[3], "pass", pass);
	json_object_foreach(d, kind, v) {
		if (!json_is_integer(v))
			continue;
		EMIT(o, "gpuburst_reconcile_last_run_findings", "gauge",
		     "What the last pass found and acted on, by action kind (lost, orphan, stuck, ...).",
		     (double)json_integer_value(v), "pass", pass, "action", kind);
	}
	json_decref(d);
}

static int row_cb(const struct gb_metric_row *r, void *arg)
{
	struct out *o = arg;
	const char *const *l = r->label;
	struct ttc *t;

	switch (r->family) {
	case GB_METRIC_REQUESTS:
		EMIT(o, "gpuburst_requests", "gauge",
		     "Requests in the state file by kind, state and result.",
		     r->value[0], "kind", l[0], "state", l[1], "result", l[2]);
		break;
	case GB_METRIC_ATTEMPTS:
		EMIT(o, "gpuburst_run_instances_calls_total", "counter",
		     "RunInstances calls by region, AZ, capacity kind and outcome (ok, the EC2 error code, started, unknown).",
		     r->value[0], "region", l[0], "az", l[1], "capacity", l[2], "outcome", l[3]);
		EMIT(o, "gpuburst_run_instances_instances_total", "counter",
		     "Instances RunInstances calls returned, by region, AZ, capacity kind and outcome.",
		     r->value[2], "region", l[0], "az", l[1], "capacity", l[2], "outcome", l[3]);
		break;
	case GB_METRIC_INSTANCES:
		EMIT(o, "gpuburst_instances", "gauge",
		     "Instance records by region, type, capacity kind and state (pending, running and terminating are alive).",
		     r->value[0], "region", l[0], "instance_type", l[1], "capacity", l[2],
		     "state", l[3]);
		break;
	case GB_METRIC_EXTRAS:
		EMIT(o, "gpuburst_extra_instances_total", "counter",
		     "Instances launched beyond what a request needed (terminated at once), by region and type.",
		     r->value[0], "region", l[0], "instance_type", l[1]);
		break;
	case GB_METRIC_CAPACITY_TIME:
		if ((t = ttc_of(o, l[0]))) {
			for (size_t i = 0; i < N_TTC; i++)
				if (r->value[0] <= ttc_bounds[i])
					t->bucket[i]++;
			t->count++;
			t->sum += r->value[0] > 0 ? r->value[0] : 0;
		}
		break;
	case GB_METRIC_APPROVALS:
		EMIT(o, "gpuburst_approvals", "gauge", "Approvals by state.", r->value[0],
		     "state", l[0]);
		if (l[0] && strcmp(l[0], "pending") == 0)
			EMIT0(o, "gpuburst_approval_pending_oldest_seconds", "gauge",
			      "Age of the oldest pending approval (absent: none pending).",
			      o->now - r->value[1]);
		break;
	case GB_METRIC_NODES:
		node_row(o, r);
		break;
	case GB_METRIC_RUNS:
		runs_row(o, r);
		break;
	}
	return o->failed ? 1 : 0;
}

static void ttc_out(struct out *o)
{
	struct family *f = family(o, "gpuburst_time_to_capacity_seconds", "histogram",
				  "From a resume request's creation to the launch of its last instance, per nodeset (requests that got capacity).");
	char le[32];

	for (size_t i = 0; i < o->conf->n_nodesets; i++) {
		const struct ttc *t = &o->ttc[i];

		for (size_t k = 0; k < N_TTC; k++) {
			snprintf(le, sizeof(le), "%g", ttc_bounds[k]);
			sample(o, f, "gpuburst_time_to_capacity_seconds_bucket",
			       L("nodeset", t->nodeset, "le", le), 2, (double)t->bucket[k]);
		}
		sample(o, f, "gpuburst_time_to_capacity_seconds_bucket",
		       L("nodeset", t->nodeset, "le", "+Inf"), 2, (double)t->count);
		sample(o, f, "gpuburst_time_to_capacity_seconds_sum", L("nodeset", t->nodeset), 1,
		       t->sum);
		sample(o, f, "gpuburst_time_to_capacity_seconds_count", L("nodeset", t->nodeset), 1,
		       (double)t->count);
	}
}

static void nodes_out(struct out *o)
{
	for (size_t i = 0; i < o->conf->n_nodesets; i++) {
		const struct gb_conf_nodeset *ns = &o->conf->nodesets[i];
		size_t size = gb_conf_nodeset_size(ns);
		unsigned long held = 0;

		for (size_t k = 1; k < N_NODE_STATES; k++)
			held += o->nodes[i][k];
		o->nodes[i][0] = size > held ? size - held : 0;
		for (size_t k = 0; k < N_NODE_STATES; k++)
			EMIT(o, "gpuburst_nodes", "gauge",
			     "Nodes of each nodeset by what gpuburst holds for them: powered_down (nothing), requested (a live resume request, no instance yet), or the state of its alive instance.",
			     (double)o->nodes[i][k], "nodeset", ns->name, "state", node_states[k]);
	}
}

/*****************************************************************************
 *  From the capacity memory, the spend summary and the configuration
 *****************************************************************************/

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static double jnum(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void capacity_out(struct out *o, json_t *pools, json_t *quotas)
{
	size_t i;
	json_t *p;

	json_array_foreach(pools, i, p) {
		const char *az = jstr(p, "az") ? jstr(p, "az") : "";
		double est = jnum(p, "estimate");

		if (!isnan(est))
			EMIT(o, "gpuburst_capacity_estimate", "gauge",
			     "Instances the default strategy expects a pool to give now (capacity memory; gpuburstctl capacity).",
			     est, "region", jstr(p, "region"), "az", az, "instance_type",
			     jstr(p, "instance_type"), "capacity", jstr(p, "capacity"));
		EMIT(o, "gpuburst_capacity_cooling", "gauge",
		     "1 while a pool cools down after a capacity refusal.",
		     json_is_true(json_object_get(p, "cooling")) ? 1 : 0, "region",
		     jstr(p, "region"), "az", az, "instance_type", jstr(p, "instance_type"),
		     "capacity", jstr(p, "capacity"));
	}
	json_array_foreach(quotas, i, p) {
		if (!json_is_true(json_object_get(p, "heeded")))
			continue;
		EMIT(o, "gpuburst_quota_wall_limit", "gauge",
		     "A quota wall EC2 reported, as remembered: its limit (in its unit: vcpus, instances, region).",
		     jnum(p, "limit"), "region", jstr(p, "region"), "quota", jstr(p, "quota"),
		     "code", jstr(p, "code"), "unit", jstr(p, "unit"));
		EMIT(o, "gpuburst_quota_wall_held", "gauge",
		     "Of a quota wall's limit, what gpuburst's live instances hold.",
		     jnum(p, "held"), "region", jstr(p, "region"), "quota", jstr(p, "quota"),
		     "code", jstr(p, "code"), "unit", jstr(p, "unit"));
	}
}

static void budgets_out(struct out *o)
{
	const struct gb_conf *conf = o->conf;
	struct gb_spend_summary sp = { 0 };
	char path[4096], lq[GB_ERROR_TEXT_MAX + 8];
	gb_error_t err;
	bool have = false;

	if (!conf->policy.n_budgets)
		return;
	if (gb_conf_spend_file(conf, path, sizeof(path))) {
		if (gb_spend_read(path, &sp, &err) == GB_E_OK)
			have = sp.refreshed_at > 0;
		else
			gb_log_warn("metrics_no_spend error=%s", gb_log_q(lq, sizeof(lq), err.text));
	}
	if (have)
		EMIT0(o, "gpuburst_spend_refreshed_timestamp_seconds", "gauge",
		      "When reconcile or the worker last wrote the spend summary.", sp.refreshed_at);
	for (size_t i = 0; i < conf->policy.n_budgets; i++) {
		const struct gb_conf_budget *bu = &conf->policy.budgets[i];
		const char *scope = gb_conf_budget_scope_name(bu->scope);

		if (have)
			EMIT(o, "gpuburst_budget_spent_usd", "gauge",
			     "What a budget's scope spent this calendar month (UTC), in US dollars (spend summary).",
			     gb_spend_of(&sp, bu->scope, bu->who), "budget", bu->name, "scope", scope,
			     "name", bu->who ? bu->who : "");
		if (bu->monthly > 0)
			EMIT(o, "gpuburst_budget_monthly_usd", "gauge",
			     "A budget's monthly limit in US dollars.", bu->monthly, "budget", bu->name,
			     "scope", scope, "name", bu->who ? bu->who : "");
		if (bu->per_job > 0)
			EMIT(o, "gpuburst_budget_per_job_usd", "gauge",
			     "A budget's per-job limit in US dollars.", bu->per_job, "budget",
			     bu->name, "scope", scope, "name", bu->who ? bu->who : "");
	}
	gb_spend_clear(&sp);
}

/*****************************************************************************
 *  The exposition
 *****************************************************************************/

static void out_free(struct out *o)
{
	for (size_t i = 0; i < o->n_fam; i++)
		gb_buf_free(&o->fam[i].b);
	free(o->ttc);
	free(o->nodes);
}

gb_err_t ctl_metrics_text(struct ctl *ctl, const struct gb_conf *conf, gb_state_t *st,
			  struct gb_buf *text, gb_error_t *err)
{
	struct out o = { .conf = conf, .now = ctl->now };
	json_t *pools = NULL, *quotas = NULL;
	size_t n = conf->n_nodesets ? conf->n_nodesets : 1;
	gb_err_t rc = GB_E_OK;

	o.ttc = calloc(n, sizeof(*o.ttc));
	o.nodes = calloc(n, sizeof(*o.nodes));
	if (!o.ttc || !o.nodes) {
		out_free(&o);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < conf->n_nodesets; i++)
		o.ttc[i].nodeset = conf->nodesets[i].name;
	EMIT(&o, "gpuburst_build_info", "gauge", "gpuburst's version and the cluster it serves.",
	     1, "version", PACKAGE_VERSION, "cluster", conf->cluster_name);
	EMIT0(&o, "gpuburst_state_file_present", "gauge",
	      "1 when the state file exists (the metrics from it are then present).", st ? 1 : 0);
	if (st) {
		EMIT0(&o, "gpuburst_state_schema_version", "gauge",
		      "The state file's schema version.", gb_state_schema_version(st));
		if ((rc = gb_state_metrics(st, row_cb, &o, err)))
			goto out;
	}
	ttc_out(&o);
	nodes_out(&o);
	if (st) {
		if ((rc = ctl_capacity_json(ctl, conf, st, &pools, &quotas, err)))
			goto out;
		capacity_out(&o, pools, quotas);
	}
	budgets_out(&o);
	if (o.failed) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < o.n_fam; i++) {
		const struct family *f = &o.fam[i];

		gb_buf_printf(text, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name,
			      f->type);
		gb_buf_append(text, f->b.data, f->b.len);
	}
	if (gb_buf_failed(text))
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	json_decref(pools);
	json_decref(quotas);
	out_free(&o);
	return rc;
}

/*****************************************************************************
 *  gpuburstctl metrics [--output FILE]
 *****************************************************************************/

gb_err_t ctl_metrics_write(struct ctl *ctl, const struct gb_conf *conf, gb_state_t *st,
			   const char *path, gb_error_t *err)
{
	struct gb_buf b = GB_BUF_INIT;
	gb_err_t rc;

	if (!(rc = ctl_metrics_text(ctl, conf, st, &b, err)))
		rc = gb_file_replace(path, b.data ? b.data : "", b.len, 0644, err);
	gb_buf_free(&b);
	return rc;
}

gb_err_t ctl_cmd_metrics(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		CTL_COMMON_LONGOPTS, { 0 }
	};
	const struct gb_conf *conf;
	const char *output = NULL;
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t err = { 0 };
	gb_state_t *st;
	bool first = true;
	gb_err_t rc;
	int c;

	while ((c = ctl_getopt(ctl, "metrics", argc, argv, ":jho:", longopts, &first, &rc)) != -1) {
		if (c == CTL_OPT_DONE)
			return rc;
		if (c == 'o' && *optarg)
			output = optarg;
		else if (c == 'o')
			return ctl_usage("metrics", "--output needs a file name");
		else
			return ctl_unimplemented("metrics", c);
	}
	if (optind < argc)
		return ctl_usage("metrics", "unexpected argument '%s'", argv[optind]);
	if (ctl->json)
		return ctl_usage("metrics", "the metrics are Prometheus text, not JSON: drop --json");
	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	st = ctl_state(ctl, false, &rc);
	if (rc)
		return rc;
	if (output) {
		if ((rc = ctl_metrics_write(ctl, conf, st, output, &err)))
			return ctl_fail(rc, "metrics: %s (nothing written)", err.text);
		return GB_E_OK;
	}
	if ((rc = ctl_metrics_text(ctl, conf, st, &b, &err))) {
		gb_buf_free(&b);
		return ctl_fail(rc, "metrics: %s", err.text);
	}
	if (b.len && fwrite(b.data, 1, b.len, stdout) != b.len)
		rc = ctl_fail(GB_E_IO, "metrics: writing stdout: %s", strerror(errno));
	gb_buf_free(&b);
	return rc;
}
