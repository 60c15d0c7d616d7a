/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_place.c - a cluster placement group per job and AZ
 *
 * A multi-node job of a nodeset with `placement: cluster` launches its
 * instances into a cluster placement group of its own, in the AZ the plan
 * chose, all in one call where the size allows (the request runs
 * all-or-nothing per AZ, orch_run.c).  Each AZ it tries gets a fresh
 * group, made here before the first call there: the name is
 * deterministic ("gpuburst-<cluster>-<request>-<az>"), so a request
 * re-run after a crash finds its own group (EC2's
 * InvalidPlacementGroup.Duplicate) instead of making another.  Reconcile
 * deletes the groups of requests no longer in progress once EC2 lets it
 * (no instance left in them); nothing here deletes (doc/orchestrator.md,
 * "Placement groups").
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "orch_int.h"

void orch_place_name(const struct orch_run *r, const char *az, char *buf,
		     size_t n)
{
	snprintf(buf, n, "gpuburst-%s-%s-%s", r->conf->cluster_name, r->req->id, az);
}

void orch_place_clear(struct orch_run *r)
{
	for (size_t i = 0; i < r->n_pgs; i++) {
		free(r->pgs[i].region);
		free(r->pgs[i].az);
		free(r->pgs[i].name);
	}
	free(r->pgs);
	r->pgs = NULL;
	r->n_pgs = 0;
}

static struct orch_group_pg *known(struct orch_run *r, const struct gb_pool *p)
{
	for (size_t i = 0; i < r->n_pgs; i++) {
		if (strcmp(r->pgs[i].region, p->region) == 0 &&
		    strcmp(r->pgs[i].az, p->az) == 0)
			return &r->pgs[i];
	}
	return NULL;
}

static struct orch_group_pg *remember(struct orch_run *r, const struct gb_pool *p,
				      const char *name)
{
	struct orch_group_pg *v = realloc(r->pgs, (r->n_pgs + 1) * sizeof(*v)), *g;

	if (!v)
		return NULL;
	r->pgs = v;
	g = &v[r->n_pgs];
	g->region = strdup(p->region);
	g->az = strdup(p->az);
	g->name = name ? strdup(name) : NULL;
	if (!g->region || !g->az || (name && !g->name)) {
		free(g->region);
		free(g->az);
		free(g->name);
		return NULL;
	}
	r->n_pgs++;
	return g;
}

/* What EC2's refusal to make the group rules out; RET the trace word. */
static const char *refused(struct orch_run *r, size_t pool, const struct orch_job *j)
{
	const struct gb_pool *p = &r->facts.pools[pool];
	char why[64];

	switch (j->ae.cls) {
	case GB_EC2_CLASS_AUTH:
	case GB_EC2_CLASS_CONFIG:
		/* ec2:CreatePlacementGroup denied, a malformed name: nowhere better */
		orch_abort(r, gb_ec2_class_err(j->ae.cls), j->ae.code, j->err.text);
		return "abort";
	case GB_EC2_CLASS_REGION:
	case GB_EC2_CLASS_QUOTA:
		/* PlacementGroupLimitExceeded: the region's groups are used up */
		snprintf(why, sizeof(why), "placement group: %s",
			 *j->ae.code ? j->ae.code : "refused");
		orch_exclude_region(r, p->region, why);
		return "region";
	default:
		snprintf(why, sizeof(why), "placement group: %s",
			 *j->ae.code ? j->ae.code : "refused");
		orch_exclude_az(r, pool, why);
		return "az";
	}
}

const char *orch_place_group(struct orch_run *r, size_t pool, gb_err_t *rc,
			     gb_error_t *err)
{
	const struct gb_pool *p = &r->facts.pools[pool];
	struct orch_group_pg *g = known(r, p);
	char name[256], lq[GB_ERROR_TEXT_MAX + 8];
	struct gb_ec2_kv kv[2] = {
		{ "gpuburst:cluster", r->conf->cluster_name },
		{ "gpuburst:request", r->req->id },
	};
	struct gb_ec2_tag_spec spec = { "placement-group", kv, 2 };
	struct orch_job j, *jp = &j;
	const char *scope;
	bool mine;

	*rc = GB_E_OK;
	if (g)
		return g->name;
	orch_place_name(r, p->az, name, sizeof(name));
	memset(&j, 0, sizeof(j));
	j.kind = ORCH_JOB_PLACEMENT;
	j.region = p->region;
	j.group = name;
	j.spec = &spec;
	orch_pool_run(r->pool, &jp, 1);
	r->other_calls++;
	mine = j.rc == GB_E_OK ||
	       strcmp(j.ae.code, GB_EC2_CODE_PG_DUPLICATE) == 0;
	if (mine) {
		orch_trace(r, "placement", "region=%s az=%s group=%s %s", p->region, p->az,
			   name, j.rc == GB_E_OK ? "created" : "exists (this request's)");
		g = remember(r, p, name);
	} else {
		scope = refused(r, pool, &j);
		orch_trace(r, "placement", "region=%s az=%s group=%s REFUSED code=%s scope=%s "
			   "error=%s", p->region, p->az, name,
			   *j.ae.code ? j.ae.code : "-", scope,
			   gb_log_q(lq, sizeof(lq), j.err.text));
		g = remember(r, p, NULL);
	}
	orch_job_clear(&j);
	if (!g) {
		*rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		return NULL;
	}
	return g->name;
}
