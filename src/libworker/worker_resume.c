/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * worker_resume.c - one resume request: reuse, launch, tell Slurm, finish
 *
 * NodeHostname: set to the node's own name, not the instance's private DNS
 * name.  Slurm uses NodeAddr to reach slurmd; NodeHostname only travels in
 * SLURM_NODE_ALIASES and is what `scontrol show node` prints.  The node
 * name needs no DNS (a private DNS name would, on the controller and in
 * jobs), and the instance learns which node it is from its gpuburst:node
 * tag in the instance metadata, set once its record keeps it for the node
 * (orch_tag_nodes), not from its hostname nor its launch index.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "gb_util.h"
#include "gb_policy.h"
#include "gb_slurmconf.h"
#include "prog_int.h"

struct live {
	char *instance_id;
	char *region;
	char *private_ip;
};

static int first_live(const struct gb_instance *in, void *arg)
{
	struct live *l = arg;

	if (in->state == GB_INST_TERMINATING)
		return 0;	/* a suspend is ending it: not the node's */
	l->instance_id = gb_strdup0(in->instance_id);
	l->region = gb_strdup0(in->region);
	l->private_ip = gb_strdup0(in->private_ip);
	return 1;
}

static void live_free(struct live *l)
{
	free(l->instance_id);
	free(l->region);
	free(l->private_ip);
	memset(l, 0, sizeof(*l));
}

/* Addresses to set: parallel name/address vectors. */
struct addrs {
	struct gb_strv names, ips;
};

static gb_err_t addrs_add(struct addrs *a, const char *name, const char *ip)
{
	if (gb_strv_add(&a->names, name) || gb_strv_add(&a->ips, ip))
		return GB_E_NOMEM;
	return GB_E_OK;
}

static void addrs_free(struct addrs *a)
{
	gb_strv_free(&a->names);
	gb_strv_free(&a->ips);
}

/*
 * Split [nodes] into those with a live instance in the state file (their
 * address goes into [reuse]) and the rest ([missing]).  slurmctld re-runs
 * ResumeProgram after a restart: a node must never get a second instance.
 */
static gb_err_t find_live(gb_state_t *st, const struct gb_strv *nodes,
			  struct addrs *reuse, struct gb_strv *missing,
			  size_t *no_ip, gb_error_t *err)
{
	for (size_t i = 0; i < nodes->n; i++) {
		struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
		struct live l = { 0 };
		gb_err_t rc;

		f.node = nodes->v[i];
		f.alive = true;
		if ((rc = gb_state_instance_list(st, &f, first_live, &l, err)))
			return rc;
		if (!l.instance_id)
			rc = gb_strv_add(missing, nodes->v[i]);
		else if (l.private_ip && *l.private_ip)
			rc = addrs_add(reuse, nodes->v[i], l.private_ip);
		else
			(*no_ip)++;	/* alive, no address known yet: leave it */
		live_free(&l);
		if (rc)
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	return GB_E_OK;
}

static int count_open(const struct gb_attempt *a, void *arg)
{
	if (a->state == GB_ATTEMPT_STARTED || a->state == GB_ATTEMPT_UNKNOWN)
		(*(size_t *)arg)++;
	return 0;
}

/*
 * RunInstances calls of [req] whose outcome the state file does not know
 * (a worker died while one was in flight, or before it recorded the
 * answer): the cloud may hold instances of them nobody has recorded.
 */
static gb_err_t open_attempts(gb_state_t *st, const struct gb_request *req,
			      size_t *n, gb_error_t *err)
{
	*n = 0;
	return gb_state_attempt_list(st, req->id, count_open, n, err);
}

/*
 * What the job says about itself, if it still exists: the job_submit
 * plugin's home-region intent ("gpuburst:home=<region>" in its
 * AdminComment; used when the region is a consumer region of a fallback
 * group: RET [buf], else NULL) and the user's name and comment, into
 * [text] ("" when none) for a proposing planner, which quotes it as
 * untrusted data.
 */
/*
 * The nodeset's types [features] (a job's -C constraint) names, in the
 * nodeset's order, into [out] (BORROWED from the config); none: all of
 * them.  A type counts when it appears as a whole word of the constraint
 * ("p5en.48xlarge", "p5e.48xlarge|p5en.48xlarge", "[p5en.48xlarge&efa]").
 */
static size_t job_types(const struct gb_conf_nodeset *ns, const char *features,
			const char **out, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; ns && features && i < ns->n_instance_types && k < max; i++) {
		const char *t = ns->instance_types[i], *p = features;
		size_t len = strlen(t);

		while ((p = strstr(p, t))) {
			bool start = p == features || strchr("&|,()[]*: ", p[-1]);
			bool end = strchr("&|,()[]*: ", p[len]) != NULL;

			if (start && end) {
				out[k++] = t;
				break;
			}
			p += len;
		}
	}
	return k;
}

/*
 * What the job says it wants: its home region (the RET, in [buf], or NULL),
 * the text of its name and comment ([text]) and the nodeset's types its
 * constraint names (OUT [types], *n_types; 0: any).
 */
/* Whose job a request is for (cost tags and attribution). */
struct owner {
	char user[65], account[65], partition[256];
};

static const char *owner_field(const char *s)
{
	return s && *s ? s : NULL;
}

/*
 * The owner the request recorded, else Slurm's answer [jt], recorded now:
 * the first launch's tags are every re-sent attempt's (ClientToken).
 */
static void job_owner(struct wthread *t, const struct gb_request *req,
		      const struct gb_slurm_job_text *jt, struct owner *o)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	gb_error_t e;

	if (req->job_user || req->job_account || req->job_partition) {
		snprintf(o->user, sizeof(o->user), "%s", req->job_user ? req->job_user : "");
		snprintf(o->account, sizeof(o->account), "%s",
			 req->job_account ? req->job_account : "");
		snprintf(o->partition, sizeof(o->partition), "%s",
			 req->job_partition ? req->job_partition : "");
		return;
	}
	if (!jt)
		return;
	snprintf(o->user, sizeof(o->user), "%s", jt->user ? jt->user : "");
	snprintf(o->account, sizeof(o->account), "%s", jt->account ? jt->account : "");
	snprintf(o->partition, sizeof(o->partition), "%s", jt->partition ? jt->partition : "");
	if (gb_state_request_set_owner(t->st, req->id, owner_field(o->user),
				       owner_field(o->account), owner_field(o->partition), &e))
		gb_log_warn("owner_unrecorded req=%s job=%lld error=%s", req->id,
			    (long long)req->job_id, gb_log_q(lq, sizeof(lq), e.text));
}

static const char *job_intent(struct wthread *t, const struct gb_request *req,
			      char *buf, size_t n, char *text, size_t tn,
			      const char **types, size_t max_types, size_t *n_types,
			      struct owner *o)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	struct gb_slurm_job_text jt;
	const char *res = NULL;
	gb_error_t e;
	gb_err_t rc;

	text[0] = '\0';
	*n_types = 0;
	memset(o, 0, sizeof(*o));
	if (req->job_id <= 0 || req->job_id > 4294967295LL)
		return NULL;
	rc = gb_slurm_job_text((uint32_t)req->job_id, &jt, &e);
	job_owner(t, req, rc ? NULL : &jt, o);
	if (rc) {
		if (rc != GB_E_NOTFOUND)
			gb_log_warn("intent_unreadable req=%s job=%lld error=%s", req->id,
				    (long long)req->job_id, gb_log_q(lq, sizeof(lq), e.text));
		return NULL;
	}
	if (jt.name || jt.comment)
		snprintf(text, tn, "job name: %s; job comment: %s",
			 jt.name ? jt.name : "", jt.comment ? jt.comment : "");
	*n_types = job_types(req->nodeset ? gb_conf_nodeset(t->w->conf, req->nodeset) : NULL,
			     jt.features, types, max_types);
	if (*n_types)
		gb_log_info("intent req=%s job=%lld types=%zu first_type=%s", req->id,
			    (long long)req->job_id, *n_types, types[0]);
	rc = gb_intent_home_region(jt.admin_comment, buf, n, &e);
	if (rc == GB_E_INVALID) {
		gb_log_warn("intent_ignored req=%s job=%lld error=%s", req->id,
			    (long long)req->job_id, gb_log_q(lq, sizeof(lq), e.text));
	} else if (rc == GB_E_OK && !gb_conf_group_for(t->w->conf, buf)) {
		gb_log_warn("intent_ignored req=%s job=%lld region=%s error=\"not a consumer "
			    "region of any fallback group\"", req->id, (long long)req->job_id, buf);
	} else if (rc == GB_E_OK) {
		res = buf;
		gb_log_info("intent req=%s job=%lld home_region=%s", req->id,
			    (long long)req->job_id, buf);
		prog_event_json(t->st, req->id, "intent",
				json_pack("{s:I,s:s}", "job", (json_int_t)req->job_id,
					  "home_region", buf));
	}
	gb_slurm_job_text_clear(&jt);
	return res;
}

/* Same (code, why) -> one reason, one DOWN call. */
struct unfilled {
	char reason[GB_REASON_MAX];
	struct gb_strv nodes;
};

static gb_err_t add_unfilled(struct unfilled **v, size_t *n, const char *reason,
			     const char *node)
{
	struct unfilled *u = NULL;

	for (size_t i = 0; i < *n && !u; i++) {
		if (strcmp((*v)[i].reason, reason) == 0)
			u = &(*v)[i];
	}
	if (!u) {
		struct unfilled *nv = realloc(*v, (*n + 1) * sizeof(*nv));

		if (!nv)
			return GB_E_NOMEM;
		*v = nv;
		u = &nv[(*n)++];
		memset(u, 0, sizeof(*u));
		snprintf(u->reason, sizeof(u->reason), "%s", reason);
	}
	return gb_strv_add(&u->nodes, node);
}

/* DOWN the unfilled nodes, so that their jobs requeue at once. */
static void down_unfilled(struct wthread *t, const struct gb_request *req,
			  struct unfilled *u, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *list = NULL;

		if (gb_slurm_hostlist_compress(u[i].nodes.v, u[i].nodes.n, &list, NULL))
			list = NULL;
		/* The marker resume-fail puts back after ResumeTimeout. */
		prog_event_json(t->st, req->id, "node_unfilled",
				json_pack("{s:s?,s:I,s:s}", "nodes", list,
					  "count", (json_int_t)u[i].nodes.n, "reason", u[i].reason));
		prog_slurm_update(t->st, req->id, GB_SLURM_DOWN, u[i].nodes.v, NULL,
				  u[i].nodes.n, u[i].reason);
		free(list);
	}
}

static enum gb_request_result result_of(size_t launched, size_t total)
{
	if (launched == total)
		return GB_RESULT_SUCCESS;
	return launched ? GB_RESULT_PARTIAL : GB_RESULT_FAILED;
}

/*
 * The text of an unfilled node's reason: the result's summary ("no
 * g5.xlarge capacity in ap-south-1, ...") when it is about the node's own
 * code, else the node's own "why" (EC2's message, long).  The code itself
 * is the node's (gb_reason_capacity writes it).
 */
static const char *short_text(const struct gb_orch_result *res,
			      const struct gb_orch_node *on)
{
	bool own_code = on->code && res->code[0] && strcmp(on->code, res->code) == 0;

	if (!own_code && on->why && *on->why)
		return on->why;
	return res->text;
}

/* Addresses and DOWNs from the orchestrator's per-node answers. */
static gb_err_t sort_result(const struct gb_request *req,
			    const struct gb_orch_result *res, struct addrs *set,
			    struct unfilled **u, size_t *nu, size_t *filled)
{
	char reason[GB_REASON_MAX];

	for (size_t i = 0; i < res->n_nodes; i++) {
		const struct gb_orch_node *on = &res->nodes[i];

		if (on->instance_id) {
			(*filled)++;
			if (on->private_ip && *on->private_ip &&
			    addrs_add(set, on->node, on->private_ip))
				return GB_E_NOMEM;
			if ((!on->private_ip || !*on->private_ip) && !on->reused)
				gb_log_warn("instance_without_ip req=%s node=%s instance=%s",
					    req->id, on->node, on->instance_id);
			continue;
		}
		gb_reason_capacity(reason, sizeof(reason), on->code,
				   short_text(res, on), req->id);
		if (add_unfilled(u, nu, reason, on->node))
			return GB_E_NOMEM;
	}
	return GB_E_OK;
}

static void finish(struct wthread *t, const struct gb_request *req, size_t launched,
		   size_t total, const char *reason)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	enum gb_request_result r = result_of(launched, total);
	gb_error_t e;

	if (gb_state_request_finish(t->st, req->id,
				    r == GB_RESULT_FAILED ? GB_RSTATE_FAILED : GB_RSTATE_DONE,
				    r, (int)launched, reason, &e))
		gb_log_error("request_finish_failed req=%s error=%s", req->id,
			     gb_log_q(lq, sizeof(lq), e.text));
	gb_log_info("resume_done req=%s result=%s launched=%zu/%zu reason=%s", req->id,
		    gb_request_result_name(r), launched, total, gb_log_q(lq, sizeof(lq), reason));
}

static int count_reprobes(const struct gb_event *ev, void *arg)
{
	if (strcmp(ev->kind, "reprobe") == 0)
		(*(int *)arg)++;
	return 0;
}

/*
 * Capacity that comes back: a request left short for capacity goes back
 * to the queue while its re-probe window (gb_policy_reprobe_window after
 * its creation: Slurm's ResumeTimeout started then) has room for the next
 * wait (gb_orch_reprobe_delay).  Its unfilled nodes stay POWERING_UP, the
 * filled ones have their addresses; the re-run asks only for the nodes
 * without a live instance.  RET whether it was requeued.
 */
static bool reprobe(struct wthread *t, const struct gb_request *req,
		    const struct gb_orch_result *res)
{
	char lq[GB_ERROR_TEXT_MAX + 8], why[GB_ORCH_REASON_MAX + 48];
	const struct gb_slurmconf *sc = t->w->have_sc ? &t->w->sc : NULL;
	double window = gb_policy_reprobe_window(t->w->conf, sc, req->nodeset);
	double left = req->created_at + window - gb_time_now(), delay;
	gb_error_t e;
	int done = 0;

	if (window <= 0 || res->cause != GB_E_CAPACITY)
		return false;
	if (gb_state_event_list(t->st, req->id, count_reprobes, &done, &e)) {
		gb_log_error("reprobe_count_failed req=%s error=%s", req->id,
			     gb_log_q(lq, sizeof(lq), e.text));
		return false;
	}
	delay = gb_orch_reprobe_delay(res, done, left);
	if (delay < 0) {
		if (done > 0)
			gb_log_info("reprobe_end req=%s reprobes=%d launched=%d/%d window_s=%.0f",
				    req->id, done, res->launched, res->requested, window);
		return false;
	}
	snprintf(why, sizeof(why), "re-probe %d in %.0f s: %s", done + 1, delay, res->reason);
	if (gb_state_request_requeue(t->st, req->id, gb_time_now() + delay, why, &e)) {
		gb_log_error("request_requeue_failed req=%s error=%s", req->id,
			     gb_log_q(lq, sizeof(lq), e.text));
		return false;
	}
	prog_event_json(t->st, req->id, "reprobe",
			json_pack("{s:i,s:f,s:i,s:i,s:s,s:f}", "round", done + 1,
				  "delay_s", delay, "launched", res->launched,
				  "requested", res->requested, "code", res->code,
				  "window_left_s", left));
	gb_log_info("resume_reprobe req=%s round=%d delay_s=%.0f launched=%d/%d code=%s window_left_s=%.0f",
		    req->id, done + 1, delay, res->launched, res->requested,
		    gb_log_q(lq, sizeof(lq), res->code), left);
	return true;
}

/*
 * policy.allowed_geo_regions: the plan the orchestrator would start with
 * (a dry run: it may fill the offerings cache, nothing else) must stay in
 * the allowed regions, or the request waits for an administrator
 * (gb_policy_geo_gate).  The heuristic plan lists every pool it may fall
 * through to, so its regions are the regions the launch may reach.
 * RET GB_E_OK (go on), GB_E_PENDING (gated: stop here), or an error.
 */
static gb_err_t geo_gate(struct wthread *t, const struct gb_request *req,
			 const struct gb_orch_resume_opts *ro, gb_error_t *err)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	const struct gb_conf *conf = t->w->conf;
	const struct gb_slurmconf *sc = t->w->have_sc ? &t->w->sc : NULL;
	struct gb_policy_verdict v;
	struct gb_plan *plan = NULL;
	const char **regions = NULL;
	gb_err_t rc;

	if (conf->policy.n_allowed_geo_regions == 0)
		return GB_E_OK;
	rc = gb_orch_plan_dry_run(t->w->orch, t->st, req, ro, &plan, NULL, NULL, err);
	if (rc == GB_E_PLAN) {
		gb_log_info("geo_check_skipped req=%s note=\"no plan: %s\"", req->id, err->text);
		return GB_E_OK;	/* gb_orch_resume reports it as the request's failure */
	}
	if (rc)
		return rc;
	if (!(regions = calloc(plan->n_steps + 1, sizeof(*regions)))) {
		gb_plan_free(plan);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < plan->n_steps; i++)
		regions[i] = plan->steps[i].region;
	rc = gb_policy_geo_gate(conf, t->st, req, regions, plan->n_steps, sc, &v, err);
	if (rc == GB_E_PENDING) {
		double expires = req->created_at + gb_policy_timeout_for(conf, sc, req->nodeset);

		gb_log_notice("resume_gated req=%s rule=geo why=%s", req->id,
			      gb_log_q(lq, sizeof(lq), v.why));
		gb_policy_notify_run(conf, req, v.why, expires, NULL);
	}
	free(regions);
	gb_plan_free(plan);
	return rc;
}

/* Slurm's ActiveFeatures say which of the nodeset's types each node got. */
static void node_types(struct wthread *t, const struct gb_request *req,
		       const struct gb_orch_result *res)
{
	struct gb_strv names = { 0 }, types = { 0 };

	for (size_t i = 0; i < res->n_nodes; i++) {
		const struct gb_orch_node *on = &res->nodes[i];

		if (on->instance_id && on->type &&
		    (gb_strv_add(&names, on->node) || gb_strv_add(&types, on->type)))
			break;	/* out of memory: the features are a courtesy */
	}
	if (names.n == types.n)
		prog_slurm_types(t->st, t->w->conf, req->id, names.v, types.v, names.n);
	gb_strv_free(&names);
	gb_strv_free(&types);
}

/*
 * The orchestrator gets every node of the request, also those that have a
 * live instance already: a re-run after a crash must know which live
 * instances are the nodes' (adopted, never terminated) to tell the true
 * surplus of a crashed launch from them, and must re-send the launches
 * whose outcome is unknown even when every node looks filled, or their
 * instances would live unrecorded.  Only when every node has a live
 * instance and no launch is open (slurmctld re-running ResumeProgram
 * after a restart) is the cloud not asked at all.
 */
gb_err_t worker_resume(struct wthread *t, const struct gb_request *req,
		       struct gb_strv *nodes, gb_error_t *err)
{
	struct gb_orch_resume_opts ro = GB_ORCH_RESUME_OPTS_INIT;
	struct gb_orch_result res = { 0 };
	struct addrs set = { 0 };
	struct gb_strv missing = { 0 };
	struct unfilled *u = NULL;
	size_t nu = 0, filled = 0, no_ip = 0, reused = 0, open = 0;
	char home[GB_REGION_NAME_MAX], reason[GB_ORCH_REASON_MAX + 64];
	char text[1024];
	struct owner own;
	const char *types[16];
	size_t n_types = 0;
	gb_err_t rc;

	if ((rc = find_live(t->st, nodes, &set, &missing, &no_ip, err)) ||
	    (rc = open_attempts(t->st, req, &open, err)))
		goto out;
	if (!missing.n && !open) {
		gb_log_info("resume_reuse req=%s nodes_with_instance=%zu note=\"address "
			    "re-applied, nothing launched for them\"", req->id, nodes->n);
		prog_slurm_update(t->st, req->id, PROG_SET_ADDR, set.names.v, set.ips.v,
				  set.names.n, NULL);
		snprintf(reason, sizeof(reason), "all %zu nodes already had a live instance "
			 "(addresses re-applied)", nodes->n);
		finish(t, req, nodes->n, nodes->n, reason);
		goto out;
	}
	addrs_free(&set);
	ro.home_region = job_intent(t, req, home, sizeof(home), text, sizeof(text), types,
				    GB_ARRAY_LEN(types), &n_types, &own);
	ro.user = owner_field(own.user);
	ro.account = owner_field(own.account);
	ro.partition = owner_field(own.partition);
	if (text[0])
		ro.untrusted = text;
	if (n_types) {
		ro.types = types;
		ro.n_types = n_types;
	}
	if (missing.n) {
		ro.nodes = (const char *const *)missing.v;
		ro.n_nodes = missing.n;
		rc = geo_gate(t, req, &ro, err);
		if (rc == GB_E_PENDING) {
			/* waits for approval: its nodes stay POWERING_UP */
			rc = GB_E_OK;
			goto out;
		}
		if (rc)
			goto out;
	}
	ro.nodes = (const char *const *)nodes->v;
	ro.n_nodes = nodes->n;
	rc = gb_orch_resume(t->w->orch, t->st, req, &ro, &res, err);
	if (rc)
		goto out;	/* requeued by the caller; client tokens make
				 * the re-run return the same instances */
	if ((rc = sort_result(req, &res, &set, &u, &nu, &filled))) {
		gb_errorf(err, rc, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < res.n_nodes; i++)
		reused += res.nodes[i].reused;
	prog_slurm_update(t->st, req->id, PROG_SET_ADDR, set.names.v, set.ips.v,
			  set.names.n, NULL);
	node_types(t, req, &res);
	if (reprobe(t, req, &res))
		goto out;	/* the unfilled nodes stay POWERING_UP */
	down_unfilled(t, req, u, nu);
	if (reused)
		snprintf(reason, sizeof(reason), "%s; %zu nodes already had a live instance",
			 res.reason, reused);
	else
		snprintf(reason, sizeof(reason), "%s", res.reason);
	finish(t, req, filled, nodes->n, reason);
out:
	for (size_t i = 0; i < nu; i++)
		gb_strv_free(&u[i].nodes);
	free(u);
	gb_orch_result_clear(&res);
	gb_strv_free(&missing);
	addrs_free(&set);
	return rc;
}
