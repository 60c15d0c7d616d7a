/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_state_queue.c - requests: the durable queue the worker drains
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_hostlist.h"
#include "gb_log.h"
#include "gb_state_int.h"
#include "gb_util.h"

#define REQ_COLS \
	"r.id, r.kind, r.state, r.nodeset, r.job_id, r.nodes, r.node_count, " \
	"r.instance_type, r.home_region, r.strategy, r.input, r.created_at, " \
	"r.updated_at, r.not_before, r.expires_at, r.worker_pid, r.claims, " \
	"r.result, r.launched, r.reason, r.job_user, r.job_account, r.job_partition"

/* Copy the current row of [s] (selected as REQ_COLS) into [rows]. */
static gb_err_t read_request(gb_state_t *st, sqlite3_stmt *s,
			     struct gb_state_rows *rows, gb_error_t *err)
{
	struct gb_request r = { .id = "" };
	const char *kind = (const char *)sqlite3_column_text(s, 1);
	const char *state = (const char *)sqlite3_column_text(s, 2);
	const char *result = (const char *)sqlite3_column_text(s, 17);
	const char *id = (const char *)sqlite3_column_text(s, 0);

	gb_strlcpy(r.id, id ? id : "", sizeof(r.id));
	if (gb_request_kind_parse(kind, &r.kind) ||
	    gb_request_state_parse(state, &r.state) ||
	    gb_request_result_parse(result, &r.result))
		return gb_errorf(err, GB_E_STATE,
				 "request %s in %s has an unknown kind, state or result (%s/%s/%s)",
				 r.id, st->path, kind ? kind : "NULL",
				 state ? state : "NULL",
				 result ? result : "NULL");
	r.nodeset = gb_state_col_text(rows, s, 3);
	r.job_id = sqlite3_column_int64(s, 4);
	r.nodes = gb_state_col_text(rows, s, 5);
	r.node_count = sqlite3_column_int(s, 6);
	r.instance_type = gb_state_col_text(rows, s, 7);
	r.home_region = gb_state_col_text(rows, s, 8);
	r.strategy = gb_state_col_text(rows, s, 9);
	r.input = gb_state_col_text(rows, s, 10);
	r.created_at = sqlite3_column_double(s, 11);
	r.updated_at = sqlite3_column_double(s, 12);
	r.not_before = sqlite3_column_double(s, 13);
	r.expires_at = sqlite3_column_double(s, 14);
	r.worker_pid = sqlite3_column_int64(s, 15);
	r.claims = sqlite3_column_int(s, 16);
	r.launched = sqlite3_column_int(s, 18);
	r.reason = gb_state_col_text(rows, s, 19);
	r.job_user = gb_state_col_text(rows, s, 20);
	r.job_account = gb_state_col_text(rows, s, 21);
	r.job_partition = gb_state_col_text(rows, s, 22);
	if (gb_state_rows_push(rows, &r))
		return gb_errorf(err, GB_E_NOMEM, "reading requests of %s",
				 st->path);
	return GB_E_OK;
}

/* Step [s] to the end, copying every row. */
static gb_err_t read_requests(gb_state_t *st, sqlite3_stmt *s,
			      struct gb_state_rows *rows, gb_error_t *err,
			      const char *what)
{
	gb_err_t rc = GB_E_OK;
	int src = SQLITE_DONE;

	while (rc == GB_E_OK && !rows->stop && (src = sqlite3_step(s)) == SQLITE_ROW)
		rc = read_request(st, s, rows, err);
	if (rc == GB_E_OK && !rows->stop && src != SQLITE_DONE)
		rc = gb_state_sqlerr(st, src, err, "%s", what);
	return rc;
}

/* Fetch request [id] into [rows] (GB_E_NOTFOUND if absent). */
static gb_err_t fetch_request(gb_state_t *st, const char *id,
			      struct gb_state_rows *rows, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	rc = GB_STMT(st, GB_STMT_REQ_GET,
		     "SELECT " REQ_COLS " FROM requests r WHERE r.id = ?1", &s,
		     err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, id))
		rc = gb_state_sqlerr(st, sqlite3_errcode(st->db), err,
				     "reading request %s", id);
	else
		rc = read_requests(st, s, rows, err, "reading request");
	if (rc == GB_E_OK && rows->n == 0)
		rc = gb_errorf(err, GB_E_NOTFOUND, "request %s not found in %s",
			       id ? id : "(null)", st->path);
	gb_state_stmt_done(s);
	return rc;
}

static gb_err_t insert_nodes(gb_state_t *st, const struct gb_request *req,
			     gb_error_t *err)
{
	struct gb_strv names = { 0 };
	gb_hostlist_t *hl = NULL;
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	if (!req->nodes)
		return GB_E_OK;
	rc = gb_hostlist_parse(req->nodes, &hl, err);
	if (rc == GB_E_OK)
		rc = gb_hostlist_expand(hl, GB_STATE_MAX_REQUEST_NODES, &names,
					err);
	if (rc) {
		gb_error_prefix(err, "adding request %s: nodes \"%s\"", req->id,
				req->nodes);
		goto out;
	}
	rc = GB_STMT(st, GB_STMT_REQ_NODE_ADD,
		     "INSERT OR IGNORE INTO request_nodes (node, request_id) "
		     "VALUES (?1, ?2)",
		     &s, err);
	for (size_t i = 0; rc == GB_E_OK && i < names.n; i++) {
		if (gb_state_bind_text(s, 1, names.v[i]) ||
		    gb_state_bind_text(s, 2, req->id))
			rc = gb_state_sqlerr(st, sqlite3_errcode(st->db), err,
					     "adding request %s", req->id);
		else
			rc = gb_state_step_done(st, s, err,
						"adding request nodes");
		gb_state_stmt_done(s);
	}
out:
	gb_strv_free(&names);
	gb_hostlist_destroy(hl);
	return rc;
}

/* What insert_nodes() would refuse, without expanding (deferred index). */
static gb_err_t check_nodes(const struct gb_request *req, gb_error_t *err)
{
	gb_hostlist_t *hl = NULL;
	gb_err_t rc;

	if (!req->nodes)
		return GB_E_OK;
	rc = gb_hostlist_parse(req->nodes, &hl, err);
	if (rc == GB_E_OK && gb_hostlist_count(hl) > GB_STATE_MAX_REQUEST_NODES)
		rc = gb_errorf(err, GB_E_INVALID, "more than %d nodes",
			       GB_STATE_MAX_REQUEST_NODES);
	gb_hostlist_destroy(hl);
	if (rc)
		gb_error_prefix(err, "adding request %s: nodes \"%s\"", req->id,
				req->nodes);
	return rc;
}

struct unindexed {
	char (*id)[GB_REQUEST_ID_LEN + 1];
	char **nodes;
	size_t n;
};

static void unindexed_free(struct unindexed *u)
{
	for (size_t i = 0; i < u->n; i++)
		free(u->nodes[i]);
	free(u->nodes);
	free(u->id);
}

static gb_err_t find_unindexed(gb_state_t *st, double since, struct unindexed *u,
			       gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;
	int src;

	rc = GB_STMT(st, GB_STMT_REQ_UNINDEXED,
		     "SELECT id, nodes FROM requests r WHERE created_at >= ?1 "
		     "AND nodes IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
		     "request_nodes n WHERE n.request_id = r.id) "
		     "ORDER BY created_at, rowid",
		     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_double(s, 1, since)) {
		rc = gb_state_sqlerr(st, sqlite3_errcode(st->db), err,
				     "listing unindexed requests");
		goto out;
	}
	while ((src = sqlite3_step(s)) == SQLITE_ROW) {
		void *ids = realloc(u->id, (u->n + 1) * sizeof(*u->id));
		void *nodes = ids ? realloc(u->nodes, (u->n + 1) * sizeof(*u->nodes)) : NULL;

		if (ids)
			u->id = ids;
		if (nodes)
			u->nodes = nodes;
		if (!ids || !nodes ||
		    !(u->nodes[u->n] = strdup((const char *)sqlite3_column_text(s, 1)))) {
			rc = gb_errorf(err, GB_E_NOMEM, "listing unindexed requests: out of memory");
			goto out;
		}
		gb_strlcpy(u->id[u->n++], (const char *)sqlite3_column_text(s, 0),
			   GB_REQUEST_ID_LEN + 1);
	}
	if (src != SQLITE_DONE)
		rc = gb_state_sqlerr(st, src, err, "listing unindexed requests");
out:
	gb_state_stmt_done(s);
	return rc;
}

gb_err_t gb_state_request_index_nodes(gb_state_t *st, double since, int *n,
				      gb_error_t *err)
{
	struct unindexed u = { 0 };
	gb_err_t rc;
	int done = 0;

	if (n)
		*n = 0;
	if ((rc = find_unindexed(st, since, &u, err)))
		goto out;
	for (size_t i = 0; i < u.n && rc == GB_E_OK; i++) {
		struct gb_request r = { 0 };
		bool own = false;

		gb_strlcpy(r.id, u.id[i], sizeof(r.id));
		r.nodes = u.nodes[i];
		rc = gb_state_tx_enter(st, &own, "indexing request nodes", err);
		if (rc == GB_E_OK)
			rc = gb_state_tx_end(st, own, insert_nodes(st, &r, err), err);
		if (rc == GB_E_OK)
			done++;
	}
	if (n)
		*n = done;
out:
	unindexed_free(&u);
	return rc;
}

static gb_err_t insert_request(gb_state_t *st, const struct gb_request *r,
			       gb_error_t *err)
{
	const char *kind = GB_STATE_NAME_OF(gb_state_kind_names, r->kind);
	const char *state = GB_STATE_NAME_OF(gb_state_rstate_names, r->state);
	const char *result = GB_STATE_NAME_OF(gb_state_result_names, r->result);
	sqlite3_stmt *s = NULL;
	char what[64];
	gb_err_t rc;

	if (!kind || !state || !result)
		return gb_errorf(err, GB_E_INVALID,
				 "adding request: invalid kind %d, state %d or result %d",
				 (int)r->kind, (int)r->state, (int)r->result);
	rc = GB_STMT(st, GB_STMT_REQ_ADD,
		     "INSERT INTO requests (id, kind, state, nodeset, job_id, "
		     "nodes, node_count, instance_type, home_region, strategy, "
		     "input, created_at, updated_at, not_before, expires_at, "
		     "worker_pid, claims, result, launched, reason) VALUES "
		     "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12, "
		     "?13, ?14, ?15, ?16, ?17, ?18, ?19)",
		     &s, err);
	if (rc)
		return rc;
	snprintf(what, sizeof(what), "adding request %s", r->id);
	if (gb_state_bind_text(s, 1, r->id) || gb_state_bind_text(s, 2, kind) ||
	    gb_state_bind_text(s, 3, state) ||
	    gb_state_bind_text(s, 4, r->nodeset) ||
	    gb_state_bind_int(s, 5, r->job_id) ||
	    gb_state_bind_text(s, 6, r->nodes) ||
	    gb_state_bind_int(s, 7, r->node_count) ||
	    gb_state_bind_text(s, 8, r->instance_type) ||
	    gb_state_bind_text(s, 9, r->home_region) ||
	    gb_state_bind_text(s, 10, r->strategy) ||
	    gb_state_bind_text(s, 11, r->input) ||
	    gb_state_bind_double(s, 12, r->created_at) ||
	    gb_state_bind_double(s, 13, r->not_before) ||
	    gb_state_bind_double(s, 14, r->expires_at) ||
	    gb_state_bind_int(s, 15, r->worker_pid) ||
	    gb_state_bind_int(s, 16, r->claims) ||
	    gb_state_bind_text(s, 17, result) ||
	    gb_state_bind_int(s, 18, r->launched) ||
	    gb_state_bind_text(s, 19, r->reason))
		rc = gb_state_sqlerr(st, sqlite3_errcode(st->db), err, "%s",
				     what);
	else
		rc = gb_state_step_done(st, s, err, what);
	gb_state_stmt_done(s);
	return rc;
}

gb_err_t gb_state_request_add(gb_state_t *st, struct gb_request *req,
			      gb_error_t *err)
{
	struct gb_request r = *req;
	bool own = false;
	gb_err_t rc;

	if (r.id[0] == '\0' && (rc = gb_state_new_id(r.id, err)))
		return rc;
	r.created_at = r.updated_at = gb_time_now();
	rc = gb_state_tx_enter(st, &own, "adding request", err);
	if (rc)
		return rc;
	rc = insert_request(st, &r, err);
	if (rc == GB_E_OK && !r.defer_node_index)
		rc = insert_nodes(st, &r, err);
	else if (rc == GB_E_OK)
		rc = check_nodes(&r, err);
	rc = gb_state_tx_end(st, own, rc, err);
	if (rc == GB_E_OK) {
		memcpy(req->id, r.id, sizeof(req->id));
		req->created_at = req->updated_at = r.created_at;
	}
	return rc;
}

/*****************************************************************************
 *  Claim
 *****************************************************************************/

/* A resume, and the kinds that end instances (gb_state.h). */
#define RESUME_FAMILY (1u << GB_REQ_RESUME)
#define TERM_FAMILY (((1u << GB_REQUEST_KIND_COUNT) - 1) & ~RESUME_FAMILY)

/*
 * ",resume,suspend," for a kind mask, matched with instr() so that one
 * cached statement serves every mask; NULL for "any".
 */
static void kinds_csv(unsigned kinds, char *buf, size_t n)
{
	size_t len;

	gb_strlcpy(buf, ",", n);
	for (size_t k = 0; k < GB_ARRAY_LEN(gb_state_kind_names); k++) {
		if (!(kinds & (1u << k)))
			continue;
		len = strlen(buf);
		snprintf(buf + len, n - len, "%s,", gb_state_kind_names[k]);
	}
}

static gb_err_t claim_one(gb_state_t *st, int64_t pid, unsigned kinds,
			  struct gb_state_rows *rows, gb_error_t *err)
{
	sqlite3_stmt *pick = NULL, *take = NULL;
	char csv[128], id[GB_REQUEST_ID_LEN + 1] = "";
	double now = gb_time_now();
	const bool general = kinds != RESUME_FAMILY && kinds != TERM_FAMILY;
	gb_err_t rc;
	int src;

	/*
	 * The worker's two families each have a statement of their own that
	 * walks an index in claim order and stops at the first runnable row
	 * (schema 10); any other mask shares the general one.  Without
	 * statistics SQLite would walk requests_state, every queued resume,
	 * to find the few queued terminations: the partial index is named.
	 */
	if (kinds == RESUME_FAMILY)
		rc = GB_STMT(st, GB_STMT_REQ_CLAIM_RESUME,
			     "SELECT id FROM requests WHERE state = 'queued' "
			     "AND kind = 'resume' AND not_before <= ?1 "
			     "ORDER BY created_at, rowid LIMIT 1",
			     &pick, err);
	else if (kinds == TERM_FAMILY)
		rc = GB_STMT(st, GB_STMT_REQ_CLAIM_TERM,
			     "SELECT id FROM requests INDEXED BY requests_queued_term "
			     "WHERE state = 'queued' "
			     "AND kind <> 'resume' AND not_before <= ?1 "
			     "ORDER BY created_at, rowid LIMIT 1",
			     &pick, err);
	else
		rc = GB_STMT(st, GB_STMT_REQ_CLAIM_PICK,
			     "SELECT id FROM requests WHERE state = 'queued' "
			     "AND not_before <= ?1 "
			     "AND (?2 IS NULL OR instr(?2, ',' || kind || ',') > 0) "
			     "ORDER BY created_at, rowid LIMIT 1",
			     &pick, err);
	if (rc)
		return rc;
	if (general)
		kinds_csv(kinds, csv, sizeof(csv));
	if (gb_state_bind_double(pick, 1, now) ||
	    (general && gb_state_bind_text(pick, 2, kinds ? csv : NULL))) {
		rc = gb_state_sqlerr(st, sqlite3_errcode(st->db), err,
				     "claiming a request");
		goto out;
	}
	src = sqlite3_step(pick);
	if (src == SQLITE_ROW) {
		gb_strlcpy(id, (const char *)sqlite3_column_text(pick, 0),
			   sizeof(id));
	} else if (src == SQLITE_DONE) {
		rc = gb_errorf(err, GB_E_NOTFOUND,
			       "no runnable request in %s", st->path);
		goto out;
	} else {
		rc = gb_state_sqlerr(st, src, err, "claiming a request");
		goto out;
	}
	gb_state_stmt_done(pick);
	rc = GB_STMT(st, GB_STMT_REQ_CLAIM_TAKE,
		     "UPDATE requests SET state = 'running', worker_pid = ?2, "
		     "claims = claims + 1, updated_at = ?3 "
		     "WHERE id = ?1 AND state = 'queued'",
		     &take, err);
	if (rc)
		goto out;
	if (gb_state_bind_text(take, 1, id) || gb_state_bind_int(take, 2, pid) ||
	    gb_state_bind_double(take, 3, now))
		rc = gb_state_sqlerr(st, sqlite3_errcode(st->db), err,
				     "claiming request %s", id);
	else
		rc = gb_state_step_done(st, take, err, "claiming a request");
	if (rc == GB_E_OK)
		rc = fetch_request(st, id, rows, err);
out:
	gb_state_stmt_done(pick);
	gb_state_stmt_done(take);
	return rc;
}

/*
 * The pick and the update run under one IMMEDIATE transaction, i.e. under
 * the database's single write lock: no other process can pick the same
 * row in between.  The callback runs after the commit, so a claim it sees
 * is durable.
 */
gb_err_t gb_state_request_claim(gb_state_t *st, int64_t pid, unsigned kinds,
				void (*cb)(const struct gb_request *, void *),
				void *arg, gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_request);
	bool own = false;
	gb_err_t rc;

	rc = gb_state_tx_enter(st, &own, "claiming a request", err);
	if (rc)
		return rc;
	rc = claim_one(st, pid, kinds, &rows, err);
	rc = gb_state_tx_end(st, own, rc, err);
	if (rc == GB_E_OK) {
		const struct gb_request *r = gb_state_rows_at(&rows, 0);

		gb_log_debug("state_claim req=%s pid=%lld", r->id,
			     (long long)pid);
		if (cb)
			cb(r, arg);
	}
	gb_state_rows_free(&rows);
	return rc;
}

/*****************************************************************************
 *  State changes
 *****************************************************************************/

/*
 * After an UPDATE ... WHERE id = ? AND state = ? changed nothing: tell
 * "absent" (GB_E_NOTFOUND) from "in another state" (GB_E_BUSY).
 */
static gb_err_t explain_no_change(gb_state_t *st, const char *id,
				  const char *expected, const char *what,
				  gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;
	int src;

	rc = GB_STMT(st, GB_STMT_REQ_STATE,
		     "SELECT state FROM requests WHERE id = ?1", &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, id))
		src = sqlite3_errcode(st->db);
	else
		src = sqlite3_step(s);
	if (src == SQLITE_ROW)
		rc = gb_errorf(err, GB_E_BUSY, "%s %s: it is %s, not %s", what,
			       id, sqlite3_column_text(s, 0) ? (const char *)sqlite3_column_text(s, 0) : "?",
			       expected);
	else if (src == SQLITE_DONE)
		rc = gb_errorf(err, GB_E_NOTFOUND, "%s %s: no such request",
			       what, id ? id : "(null)");
	else
		rc = gb_state_sqlerr(st, src, err, "%s %s", what, id);
	gb_state_stmt_done(s);
	return rc;
}

/* Run a prepared UPDATE in its own transaction; 0 rows changed -> explain. */
static gb_err_t run_update(gb_state_t *st, sqlite3_stmt *s, const char *id,
			   const char *expected, const char *what,
			   gb_error_t *err)
{
	bool own = false;
	gb_err_t rc;

	rc = gb_state_tx_enter(st, &own, what, err);
	if (rc)
		return rc;
	rc = gb_state_step_done(st, s, err, what);
	if (rc == GB_E_OK && sqlite3_changes(st->db) == 0)
		rc = explain_no_change(st, id, expected, what, err);
	return gb_state_tx_end(st, own, rc, err);
}

gb_err_t gb_state_request_transition(gb_state_t *st, const char *id,
				     enum gb_request_state from,
				     enum gb_request_state to,
				     const char *reason, gb_error_t *err)
{
	const char *f = GB_STATE_NAME_OF(gb_state_rstate_names, from);
	const char *t = GB_STATE_NAME_OF(gb_state_rstate_names, to);
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	if (!f || !t)
		return gb_errorf(err, GB_E_INVALID,
				 "moving request %s: invalid state %d -> %d",
				 id ? id : "(null)", (int)from, (int)to);
	rc = GB_STMT(st, GB_STMT_REQ_TRANSITION,
		     "UPDATE requests SET state = ?3, reason = ?4, "
		     "updated_at = ?5, worker_pid = "
		     "CASE WHEN ?3 = 'queued' THEN 0 ELSE worker_pid END "
		     "WHERE id = ?1 AND state = ?2",
		     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, id) || gb_state_bind_text(s, 2, f) ||
	    gb_state_bind_text(s, 3, t) || gb_state_bind_text(s, 4, reason) ||
	    gb_state_bind_double(s, 5, gb_time_now()))
		rc = gb_state_sqlerr(st, sqlite3_errcode(st->db), err,
				     "moving request %s", id);
	else
		rc = run_update(st, s, id, f, "moving request", err);
	gb_state_stmt_done(s);
	return rc;
}

gb_err_t gb_state_request_finish(gb_state_t *st, const char *id,
				 enum gb_request_state final,
				 enum gb_request_result result, int launched,
				 const char *reason, gb_error_t *err)
{
	const char *res = GB_STATE_NAME_OF(gb_state_result_names, result);
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	if ((final != GB_RSTATE_DONE && final != GB_RSTATE_FAILED) || !res)
		return gb_errorf(err, GB_E_INVALID,
				 "finishing request %s: final state must be done or failed (got %d, result %d)",
				 id ? id : "(null)", (int)final, (int)result);
	rc = GB_STMT(st, GB_STMT_REQ_FINISH,
		     "UPDATE requests SET state = ?2, result = ?3, "
		     "launched = ?4, reason = ?5, updated_at = ?6 "
		     "WHERE id = ?1 AND state = 'running'",
		     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, id) ||
	    gb_state_bind_text(s, 2, gb_request_state_name(final)) ||
	    gb_state_bind_text(s, 3, res) || gb_state_bind_int(s, 4, launched) ||
	    gb_state_bind_text(s, 5, reason) ||
	    gb_state_bind_double(s, 6, gb_time_now()))
		rc = gb_state_sqlerr(st, sqlite3_errcode(st->db), err,
				     "finishing request %s", id);
	else
		rc = run_update(st, s, id, "running", "finishing request", err);
	gb_state_stmt_done(s);
	return rc;
}

gb_err_t gb_state_request_requeue(gb_state_t *st, const char *id,
				  double not_before, const char *reason,
				  gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	rc = GB_STMT(st, GB_STMT_REQ_REQUEUE,
		     "UPDATE requests SET state = 'queued', not_before = ?2, "
		     "reason = ?3, worker_pid = 0, updated_at = ?4 "
		     "WHERE id = ?1 AND state IN ('running', 'queued')",
		     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, id) ||
	    gb_state_bind_double(s, 2, not_before) ||
	    gb_state_bind_text(s, 3, reason) ||
	    gb_state_bind_double(s, 4, gb_time_now()))
		rc = gb_state_sqlerr(st, sqlite3_errcode(st->db), err,
				     "requeueing request %s", id);
	else
		rc = run_update(st, s, id, "running or queued",
				"requeueing request", err);
	gb_state_stmt_done(s);
	return rc;
}

/*****************************************************************************
 *  Stale claims
 *****************************************************************************/

struct claimant {
	char id[GB_REQUEST_ID_LEN + 1];
	int64_t pid;
};

/*
 * A pid names a process of this host only; the state file is local to the
 * controller, so that is where every worker ran.  EPERM means the process
 * exists under another uid: alive.
 */
static bool pid_dead(int64_t pid)
{
	if (pid <= 0 || pid > INT32_MAX)
		return true;	/* running without a valid claimant */
	return kill((pid_t)pid, 0) == -1 && errno == ESRCH;
}

static gb_err_t list_running(gb_state_t *st, struct gb_state_rows *rows,
			     gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	struct claimant c;
	int src = SQLITE_DONE;
	gb_err_t rc;

	rc = GB_STMT(st, GB_STMT_REQ_RUNNING,
		     "SELECT id, worker_pid FROM requests "
		     "WHERE state = 'running' ORDER BY created_at, rowid",
		     &s, err);
	while (rc == GB_E_OK && (src = sqlite3_step(s)) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(s, 0);

		gb_strlcpy(c.id, id ? id : "", sizeof(c.id));
		c.pid = sqlite3_column_int64(s, 1);
		if (gb_state_rows_push(rows, &c))
			rc = gb_errorf(err, GB_E_NOMEM,
				       "listing running requests");
	}
	if (rc == GB_E_OK && src != SQLITE_DONE)
		rc = gb_state_sqlerr(st, src, err, "listing running requests");
	gb_state_stmt_done(s);
	return rc;
}

static gb_err_t requeue_dead(gb_state_t *st, const struct claimant *c,
			     double now, int *n, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	char reason[96];
	gb_err_t rc;

	rc = GB_STMT(st, GB_STMT_REQ_UNSTALE,
		     "UPDATE requests SET state = 'queued', worker_pid = 0, "
		     "reason = ?3, updated_at = ?4 "
		     "WHERE id = ?1 AND state = 'running' AND worker_pid = ?2",
		     &s, err);
	if (rc)
		return rc;
	snprintf(reason, sizeof(reason), "requeued: worker pid %lld is gone",
		 (long long)c->pid);
	if (gb_state_bind_text(s, 1, c->id) || gb_state_bind_int(s, 2, c->pid) ||
	    gb_state_bind_text(s, 3, reason) || gb_state_bind_double(s, 4, now))
		rc = gb_state_sqlerr(st, sqlite3_errcode(st->db), err,
				     "requeueing request %s", c->id);
	else
		rc = gb_state_step_done(st, s, err, "requeueing a stale request");
	if (rc == GB_E_OK && sqlite3_changes(st->db) > 0) {
		(*n)++;
		gb_log_info("state_requeue_stale req=%s pid=%lld", c->id,
			    (long long)c->pid);
	}
	gb_state_stmt_done(s);
	return rc;
}

gb_err_t gb_state_request_requeue_stale(gb_state_t *st, int *n,
					gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct claimant);
	double now = gb_time_now();
	bool own = false;
	int count = 0;
	gb_err_t rc;

	rc = gb_state_tx_enter(st, &own, "requeueing stale requests", err);
	if (rc)
		return rc;
	rc = list_running(st, &rows, err);
	for (size_t i = 0; rc == GB_E_OK && i < rows.n; i++) {
		const struct claimant *c = gb_state_rows_at(&rows, i);

		if (pid_dead(c->pid))
			rc = requeue_dead(st, c, now, &count, err);
	}
	rc = gb_state_tx_end(st, own, rc, err);
	gb_state_rows_free(&rows);
	if (n)
		*n = rc == GB_E_OK ? count : 0;
	return rc;
}

/*****************************************************************************
 *  Reads
 *****************************************************************************/

gb_err_t gb_state_request_get(gb_state_t *st, const char *id,
			      void (*cb)(const struct gb_request *, void *),
			      void *arg, gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_request);
	gb_err_t rc = fetch_request(st, id, &rows, err);

	if (rc == GB_E_OK && cb)
		cb(gb_state_rows_at(&rows, 0), arg);
	gb_state_rows_free(&rows);
	return rc;
}

enum {
	RL_STATE = 1 << 0,
	RL_KIND = 1 << 1,
	RL_SINCE = 1 << 2,
	RL_NODE = 1 << 3,
	RL_JOB = 1 << 4,
	RL_ALL = 1 << 5,	/* no limit */
};

/*
 * One statement per filter shape (32 at most), each with plain equality
 * terms, so that SQLite picks the right index for it (requests_state for a
 * state, request_nodes for a node) instead of one "?1 IS NULL OR ..."
 * statement that can use none.  Parameter numbers are fixed per filter.
 */
static gb_err_t list_stmt(gb_state_t *st, unsigned shape, sqlite3_stmt **out,
			  gb_error_t *err)
{
	char sql[1024], from[512];

	snprintf(from, sizeof(from), "FROM requests r%s WHERE 1%s%s%s%s",
		 shape & RL_NODE ? " JOIN request_nodes n ON n.request_id = "
				   "r.id AND n.node = ?4"
				 : "",
		 shape & RL_STATE ? " AND r.state = ?1" : "",
		 shape & RL_KIND ? " AND r.kind = ?2" : "",
		 shape & RL_SINCE ? " AND r.created_at >= ?3" : "",
		 shape & RL_JOB ? " AND r.job_id = ?6 AND r.job_id > 0" : "");
	if (shape & RL_ALL)	/* requests_created, in order: no sort to hold */
		snprintf(sql, sizeof(sql), "SELECT " REQ_COLS " %s ORDER BY r.created_at, r.rowid",
			 from);
	else	/* the newest ?5, listed oldest first */
		snprintf(sql, sizeof(sql), "SELECT * FROM (SELECT " REQ_COLS ", r.rowid AS o %s "
			 "ORDER BY r.created_at DESC, r.rowid DESC LIMIT ?5) ORDER BY created_at, o",
			 from);
	return gb_state_stmt(st, &st->req_list[shape], sql, out, err);
}

/* f->stream: the caller's callback, called with each row as it is read */
struct req_each_ctx {
	int (*cb)(const struct gb_request *, void *);
	void *arg;
};

static int req_each(const void *row, void *arg)
{
	const struct req_each_ctx *e = arg;

	return e->cb(row, e->arg);
}

gb_err_t gb_state_request_list(gb_state_t *st,
			       const struct gb_request_filter *f,
			       int (*cb)(const struct gb_request *, void *),
			       void *arg, gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_request);
	struct req_each_ctx each = { cb, arg };
	const struct gb_request_filter any = GB_REQUEST_FILTER_ANY;
	const char *state = NULL, *kind = NULL;
	sqlite3_stmt *s = NULL;
	unsigned shape = 0;
	gb_err_t rc;

	if (!f)
		f = &any;
	if (f->state >= 0 &&
	    !(state = GB_STATE_NAME_OF(gb_state_rstate_names, f->state)))
		return gb_errorf(err, GB_E_INVALID,
				 "listing requests: invalid state %d", f->state);
	if (f->kind >= 0 &&
	    !(kind = GB_STATE_NAME_OF(gb_state_kind_names, f->kind)))
		return gb_errorf(err, GB_E_INVALID,
				 "listing requests: invalid kind %d", f->kind);
	shape = (state ? RL_STATE : 0) | (kind ? RL_KIND : 0) |
		(f->since > 0 ? RL_SINCE : 0) | (f->node ? RL_NODE : 0) |
		(f->job_id > 0 ? RL_JOB : 0) | (f->limit ? 0 : RL_ALL);
	rc = list_stmt(st, shape, &s, err);
	if (rc)
		return rc;
	if (f->stream && cb) {
		rows.each = req_each;
		rows.each_arg = &each;
	}
	if ((state && gb_state_bind_text(s, 1, state)) ||
	    (kind && gb_state_bind_text(s, 2, kind)) ||
	    (f->since > 0 && gb_state_bind_double(s, 3, f->since)) ||
	    (f->node && gb_state_bind_text(s, 4, f->node)) ||
	    (f->job_id > 0 && gb_state_bind_int(s, 6, f->job_id)) ||
	    (f->limit && gb_state_bind_int(s, 5, (int64_t)f->limit)))
		rc = gb_state_sqlerr(st, sqlite3_errcode(st->db), err,
				     "listing requests");
	else
		rc = read_requests(st, s, &rows, err, "listing requests");
	gb_state_stmt_done(s);
	GB_STATE_ROWS_DELIVER(&rows, rc, cb, arg);
	return rc;
}

gb_err_t gb_state_request_older_active(gb_state_t *st,
				       const struct gb_request *req,
				       int (*cb)(const struct gb_request *, void *),
				       void *arg, gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_request);
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	/*
	 * requests_state, created_at <= ?1 for each state: the rows older
	 * than one being claimed are few (claims go oldest first), whatever
	 * the length of the queue behind it.  ?3: the other family is
	 * resumes (1) or the kinds that end instances (0).
	 */
	rc = GB_STMT(st, GB_STMT_REQ_OLDER,
		     "SELECT " REQ_COLS " FROM requests r "
		     "WHERE r.state IN ('queued', 'running') AND (r.kind = 'resume') = ?3 "
		     "AND r.created_at <= ?1 AND (r.created_at < ?1 OR r.id < ?2) "
		     "ORDER BY r.created_at, r.rowid",
		     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_double(s, 1, req->created_at) ||
	    gb_state_bind_text(s, 2, req->id) ||
	    gb_state_bind_int(s, 3, req->kind != GB_REQ_RESUME))
		rc = gb_state_sqlerr(st, sqlite3_errcode(st->db), err,
				     "listing the requests older than %s", req->id);
	else
		rc = read_requests(st, s, &rows, err, "listing older requests");
	gb_state_stmt_done(s);
	GB_STATE_ROWS_DELIVER(&rows, rc, cb, arg);
	return rc;
}

gb_err_t gb_state_job_node_lists(gb_state_t *st, int64_t lo, int64_t hi,
				 double since,
				 int (*cb)(int64_t job_id, const char *nodes,
					   void *arg),
				 void *arg, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;
	int src;

	/* SQLite plans it on requests_state (state, created_at >= ?3): the
	 * rows of the window, as the listing it replaces read */
	rc = GB_STMT(st, GB_STMT_REQ_JOB_NODES,
		     "SELECT DISTINCT job_id, nodes FROM requests "
		     "WHERE job_id > 0 AND job_id BETWEEN ?1 AND ?2 AND kind = 'resume' "
		     "AND created_at >= ?3 AND nodes IS NOT NULL "
		     "AND (state = 'pending_approval' OR state = 'queued' OR "
		     "state = 'running' OR state = 'done') "
		     "ORDER BY job_id",
		     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_int(s, 1, lo) || gb_state_bind_int(s, 2, hi) ||
	    gb_state_bind_double(s, 3, since)) {
		rc = gb_state_sqlerr(st, sqlite3_errcode(st->db), err,
				     "listing the node lists of jobs");
		gb_state_stmt_done(s);
		return rc;
	}
	while ((src = sqlite3_step(s)) == SQLITE_ROW) {
		const char *nodes = (const char *)sqlite3_column_text(s, 1);

		if (nodes && cb(sqlite3_column_int64(s, 0), nodes, arg))
			break;
	}
	if (src != SQLITE_ROW && src != SQLITE_DONE)
		rc = gb_state_sqlerr(st, src, err, "listing the node lists of jobs");
	gb_state_stmt_done(s);
	return rc;
}

gb_err_t gb_state_request_count(gb_state_t *st, int state, long *n,
				gb_error_t *err)
{
	const char *name = NULL;
	sqlite3_stmt *s = NULL;
	gb_err_t rc;
	int src;

	if (state >= 0 &&
	    !(name = GB_STATE_NAME_OF(gb_state_rstate_names, state)))
		return gb_errorf(err, GB_E_INVALID,
				 "counting requests: invalid state %d", state);
	if (name)
		rc = GB_STMT(st, GB_STMT_REQ_COUNT_STATE,
			     "SELECT count(*) FROM requests WHERE state = ?1",
			     &s, err);
	else
		rc = GB_STMT(st, GB_STMT_REQ_COUNT,
			     "SELECT count(*) FROM requests", &s, err);
	if (rc)
		return rc;
	if (name && gb_state_bind_text(s, 1, name))
		src = sqlite3_errcode(st->db);
	else
		src = sqlite3_step(s);
	if (src == SQLITE_ROW)
		*n = (long)sqlite3_column_int64(s, 0);
	else
		rc = gb_state_sqlerr(st, src, err, "counting requests");
	gb_state_stmt_done(s);
	return rc;
}
