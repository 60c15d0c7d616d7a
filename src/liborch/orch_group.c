/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_group.c - locality groups: which pools form one, commit or roll back
 *
 * A job of several nodes with locality region (or az) holds its instances
 * tentatively until one group (a region, or an AZ) holds the whole job;
 * a group that cannot is rolled back (its instances terminated) before
 * the next is tried (doc/orchestrator.md, "Locality").
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "orch_int.h"

gb_err_t orch_rollback(struct orch_run *r, int group, const char *why,
		       gb_error_t *err)
{
	struct gb_strv ids = { 0 };
	gb_err_t rc = GB_E_OK;
	int done = 0;

	for (int i = 0; i < r->n && !rc; i++) {
		struct slot *s = &r->slots[i];
		char region[64];

		if (s->state != SLOT_TENTATIVE || (group >= 0 && s->group != group))
			continue;
		/* a copy: clearing the slots below frees their strings */
		gb_strlcpy(region, s->region, sizeof(region));
		gb_strv_free(&ids);
		for (int j = i; j < r->n; j++) {
			struct slot *t = &r->slots[j];

			if (t->state == SLOT_TENTATIVE && strcmp(t->region, region) == 0 &&
			    (group < 0 || t->group == group) &&
			    gb_strv_add(&ids, t->instance_id))
				rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		}
		if (rc)
			break;	/* not terminated: the slots keep their instances */
		rc = orch_terminate_ids(r, region, (const char *const *)ids.v,
					ids.n, why, &done, err);
		r->rolled_back += (int)ids.n;
		for (int j = i; j < r->n; j++) {
			struct slot *t = &r->slots[j];

			if (t->state == SLOT_TENTATIVE && t->region &&
			    strcmp(t->region, region) == 0 &&
			    (group < 0 || t->group == group)) {
				orch_slot_clear(t);
				free(t->code);
				free(t->why);
				t->code = strdup(gb_orch_code_name(r->grouped ?
					GB_ORCH_CODE_LOCALITY : GB_ORCH_CODE_ALL_OR_NOTHING));
				t->why = strdup(why);
			}
		}
	}
	gb_strv_free(&ids);
	r->terminated += done;
	return rc;
}

/* Distinct locality groups in plan order (one group 0 when not grouped). */
size_t orch_plan_groups(const struct orch_run *r, int *g)
{
	size_t n = 0;

	if (!r->grouped) {
		g[0] = 0;
		return 1;
	}
	for (size_t i = 0; r->plan && i < r->plan->n_steps; i++) {
		long p = orch_pool_index(r, &r->plan->steps[i]);
		int id;
		size_t k;

		if (p < 0)
			continue;
		id = orch_group_of(r, (size_t)p);
		if (r->lock_group >= 0 && id != r->lock_group)
			continue;
		for (k = 0; k < n && g[k] != id; k++)
			;
		if (k == n)
			g[n++] = id;
	}
	return n;
}

bool orch_in_group(const struct orch_run *r, size_t pool, int group)
{
	return !r->grouped || orch_group_of(r, pool) == group;
}

/* End of a locality group: commit it whole or roll it back. */
gb_err_t orch_group_close(struct orch_run *r, int group, gb_error_t *err)
{
	int held = 0;
	char why[160];

	if (!r->grouped)
		return GB_E_OK;
	for (int i = 0; i < r->n; i++)
		held += r->slots[i].state == SLOT_TENTATIVE &&
			(group < 0 || r->slots[i].group == group);
	if (orch_unfilled(r) == 0) {
		orch_commit_tentative(r);
		orch_trace(r, "locality", "group=%d holds the whole job of %d", group, r->n);
		return orch_check(r, "commit", err);
	}
	/* a group that gave nothing failed for capacity, not for locality */
	if (held > 0)
		r->saw_locality = true;
	snprintf(why, sizeof(why), "locality: this %s gave %d of the job's %d nodes",
		 r->locality == GB_LOCALITY_AZ && group >= 0 ? "AZ" : "region",
		 held, r->n);
	orch_trace(r, "locality", "%s; rolling back", why);
	return orch_rollback(r, group, why, err);
}
