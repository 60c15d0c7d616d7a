/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_state_metrics.c - the state file's aggregates for the metrics, and
 * the last run of each periodic job (schema 8)
 *
 * Every number gpuburstctl metrics exposes is derived from the state file
 * (so it is right after a restart of anything): one GROUP BY query per
 * family, in one read transaction.  A scrape reads a few thousand rows at
 * most; the queries are prepared per call, not cached, since they run
 * once per scrape.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gb_state_int.h"

gb_err_t gb_state_run_record(gb_state_t *st, const struct gb_run *r, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;
	int src;

	if (!r->name || !*r->name || r->actions < 0 || r->failed < 0 ||
	    !(r->finished_at >= r->started_at))
		return gb_errorf(err, GB_E_INVALID, "recording a run: a name, actions and "
				 "failures >= 0 and an end not before its start are required");
	src = sqlite3_prepare_v2(st->db,
				 "INSERT OR REPLACE INTO runs (name, started_at, finished_at, ok, "
				 "actions, failed, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
				 -1, &s, NULL);
	if (src == SQLITE_OK &&
	    (gb_state_bind_text(s, 1, r->name) || gb_state_bind_double(s, 2, r->started_at) ||
	     gb_state_bind_double(s, 3, r->finished_at) || gb_state_bind_int(s, 4, r->ok) ||
	     gb_state_bind_int(s, 5, r->actions) || gb_state_bind_int(s, 6, r->failed) ||
	     gb_state_bind_text(s, 7, r->detail)))
		src = sqlite3_errcode(st->db);
	if (src == SQLITE_OK)
		src = sqlite3_step(s);
	rc = src == SQLITE_DONE ? GB_E_OK :
	     gb_state_sqlerr(st, src, err, "recording the run of %s", r->name);
	sqlite3_finalize(s);
	return rc;
}

/* One family: [sql]'s columns are [nl] labels then the values. */
struct family {
	enum gb_metric_family id;
	int nl;
	const char *sql;
};

static const struct family families[] = {
	{ GB_METRIC_REQUESTS, 3,
	  "SELECT kind, state, result, count(*) FROM requests GROUP BY 1, 2, 3" },
	{ GB_METRIC_ATTEMPTS, 4,
	  "SELECT region, az, capacity, "
	  "CASE WHEN state = 'ok' THEN 'ok' WHEN state IN ('started', 'unknown') THEN state "
	  "ELSE coalesce(nullif(error_code, ''), nullif(error_class, ''), 'error') END, "
	  "count(*), total(asked), total(got) FROM attempts GROUP BY 1, 2, 3, 4" },
	{ GB_METRIC_INSTANCES, 4,
	  "SELECT region, instance_type, capacity, state, count(*) FROM instances "
	  "GROUP BY 1, 2, 3, 4" },
	{ GB_METRIC_EXTRAS, 2,
	  "SELECT region, instance_type, count(*) FROM instances WHERE node IS NULL "
	  "GROUP BY 1, 2" },
	{ GB_METRIC_CAPACITY_TIME, 1,
	  "SELECT r.nodeset, max(i.launched_at) - r.created_at FROM requests r "
	  "JOIN instances i ON i.request_id = r.id AND i.node IS NOT NULL "
	  "WHERE r.kind = 'resume' AND r.result IN ('success', 'partial') "
	  "AND r.nodeset IS NOT NULL GROUP BY r.id" },
	{ GB_METRIC_APPROVALS, 1,
	  "SELECT state, count(*), min(requested_at) FROM approvals GROUP BY 1" },
	{ GB_METRIC_NODES, 2,
	  "SELECT node, state FROM instances WHERE node IS NOT NULL "
	  "AND state IN ('pending', 'running', 'terminating') "
	  "UNION ALL "
	  "SELECT DISTINCT n.node, 'requested' FROM request_nodes n "
	  "JOIN requests r ON r.id = n.request_id "
	  "WHERE r.kind = 'resume' AND r.state IN ('pending_approval', 'queued', 'running') "
	  "AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.node = n.node "
	  "AND i.state IN ('pending', 'running', 'terminating'))" },
	{ GB_METRIC_RUNS, 3,
	  "SELECT name, CAST(ok AS TEXT), detail, started_at, finished_at, actions, failed "
	  "FROM runs ORDER BY name" },
};

static gb_err_t family_run(gb_state_t *st, const struct family *f, gb_metric_cb cb,
			   void *arg, bool *stop, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc = GB_E_OK;
	int src;

	if ((src = sqlite3_prepare_v2(st->db, f->sql, -1, &s, NULL)) != SQLITE_OK) {
		rc = gb_state_sqlerr(st, src, err, "metrics: preparing family %d", (int)f->id);
		goto out;
	}
	while ((src = sqlite3_step(s)) == SQLITE_ROW) {
		struct gb_metric_row row = { .family = f->id };
		int nc = sqlite3_column_count(s);

		for (int i = 0; i < f->nl && i < 4; i++)
			row.label[i] = (const char *)sqlite3_column_text(s, i);
		for (int i = f->nl; i < nc && i - f->nl < 4; i++)
			row.value[i - f->nl] = sqlite3_column_double(s, i);
		if (cb(&row, arg)) {
			*stop = true;
			break;
		}
	}
	if (!*stop && src != SQLITE_DONE)
		rc = gb_state_sqlerr(st, src, err, "metrics: reading family %d", (int)f->id);
out:
	sqlite3_finalize(s);
	return rc;
}

gb_err_t gb_state_metrics(gb_state_t *st, gb_metric_cb cb, void *arg, gb_error_t *err)
{
	bool own = !st->in_tx && !st->in_read, stop = false;
	gb_err_t rc = GB_E_OK;

	/* one snapshot: the families agree with each other */
	if (own && (rc = gb_state_read_begin(st, err)))
		return rc;
	for (size_t i = 0; !rc && !stop && i < sizeof(families) / sizeof(families[0]); i++)
		rc = family_run(st, &families[i], cb, arg, &stop, err);
	if (own)
		gb_state_read_end(st);
	return rc;
}
