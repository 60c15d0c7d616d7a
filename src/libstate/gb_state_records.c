/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_state_records.c - plans, attempts, instances, approvals, events, caches
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_state_int.h"
#include "gb_util.h"

#define BIND_FAILED(st, err, ...) \
	gb_state_sqlerr((st), sqlite3_errcode((st)->db), (err), __VA_ARGS__)

typedef gb_err_t (*row_reader_fn)(gb_state_t *st, sqlite3_stmt *s,
				  struct gb_state_rows *rows, gb_error_t *err);

/* Step [s] to the end, copying each row with [read]; then reset [s]. */
static gb_err_t read_all(gb_state_t *st, sqlite3_stmt *s, row_reader_fn read,
			 struct gb_state_rows *rows, const char *what,
			 gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;
	int src = SQLITE_DONE;

	while (rc == GB_E_OK && !rows->stop && (src = sqlite3_step(s)) == SQLITE_ROW) {
		rc = read(st, s, rows, err);
		if (rc == GB_E_OK && rows->oom)
			rc = GB_E_NOMEM;
		if (rc == GB_E_NOMEM)
			gb_errorf(err, rc, "%s: out of memory", what);
	}
	if (rc == GB_E_OK && !rows->stop && src != SQLITE_DONE)
		rc = gb_state_sqlerr(st, src, err, "%s", what);
	gb_state_stmt_done(s);
	return rc;
}

/*
 * The read of every *_list: unless a bind failed ([bind_failed], the error
 * is SQLite's), step [s] to the end copying each row with [read].  [s] is
 * reset either way.
 */
static gb_err_t list_read(gb_state_t *st, sqlite3_stmt *s, bool bind_failed,
			  row_reader_fn read, struct gb_state_rows *rows,
			  const char *what, gb_error_t *err)
{
	gb_err_t rc;

	if (!bind_failed)
		return read_all(st, s, read, rows, what, err);
	rc = BIND_FAILED(st, err, "%s", what);
	gb_state_stmt_done(s);
	return rc;
}

/* '' is how a NULL AZ is stored in the keyed caches (see the schema). */
static const char *az_key(const char *az)
{
	return az ? az : "";
}

static const char *az_value(const char *az)
{
	return az && *az ? az : NULL;
}

/* Keep a given time, or take the clock for 0. */
static double time_or_now(double t)
{
	return t > 0 ? t : gb_time_now();
}

/*****************************************************************************
 *  Plans
 *****************************************************************************/

static gb_err_t plan_next_version(gb_state_t *st, const char *request_id,
				  int *version, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;
	int src;

	rc = GB_STMT(st, GB_STMT_PLAN_NEXT,
		     "SELECT coalesce(max(version), 0) + 1 FROM plans "
		     "WHERE request_id = ?1",
		     &s, err);
	if (rc)
		return rc;
	src = gb_state_bind_text(s, 1, request_id);
	if (src == SQLITE_OK)
		src = sqlite3_step(s);
	if (src == SQLITE_ROW)
		*version = sqlite3_column_int(s, 0);
	else
		rc = gb_state_sqlerr(st, src, err, "adding a plan of request %s",
				     request_id);
	gb_state_stmt_done(s);
	return rc;
}

static gb_err_t plan_insert(gb_state_t *st, const struct gb_plan_row *p,
			    int version, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	rc = GB_STMT(st, GB_STMT_PLAN_ADD,
		     "INSERT INTO plans (request_id, version, planner, status, "
		     "reason, rationale, body, created_at) "
		     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
		     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, p->request_id) ||
	    gb_state_bind_int(s, 2, version) ||
	    gb_state_bind_text(s, 3, p->planner) ||
	    gb_state_bind_text(s, 4, p->status) ||
	    gb_state_bind_text(s, 5, p->reason) ||
	    gb_state_bind_text(s, 6, p->rationale) ||
	    gb_state_bind_text(s, 7, p->body) ||
	    gb_state_bind_double(s, 8, time_or_now(p->created_at)))
		rc = BIND_FAILED(st, err, "adding plan %d of request %s",
				 version, p->request_id);
	else
		rc = gb_state_step_done(st, s, err, "adding a plan");
	gb_state_stmt_done(s);
	return rc;
}

gb_err_t gb_state_plan_add(gb_state_t *st, const struct gb_plan_row *p,
			   int *version, gb_error_t *err)
{
	bool own = false;
	int v = 0;
	gb_err_t rc;

	rc = gb_state_tx_enter(st, &own, "adding a plan", err);
	if (rc)
		return rc;
	rc = plan_next_version(st, p->request_id, &v, err);
	if (rc == GB_E_OK)
		rc = plan_insert(st, p, v, err);
	rc = gb_state_tx_end(st, own, rc, err);
	if (rc == GB_E_OK && version)
		*version = v;
	return rc;
}

static gb_err_t read_plan(gb_state_t *st, sqlite3_stmt *s,
			  struct gb_state_rows *rows, gb_error_t *err)
{
	struct gb_plan_row p = {
		.request_id = gb_state_col_text(rows, s, 0),
		.version = sqlite3_column_int(s, 1),
		.planner = gb_state_col_text(rows, s, 2),
		.status = gb_state_col_text(rows, s, 3),
		.reason = gb_state_col_text(rows, s, 4),
		.rationale = gb_state_col_text(rows, s, 5),
		.body = gb_state_col_text(rows, s, 6),
		.created_at = sqlite3_column_double(s, 7),
	};

	(void)st;
	(void)err;
	return gb_state_rows_push(rows, &p);
}

gb_err_t gb_state_plan_list(gb_state_t *st, const char *request_id,
			    int (*cb)(const struct gb_plan_row *, void *),
			    void *arg, gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_plan_row);
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	rc = GB_STMT(st, GB_STMT_PLAN_LIST,
		     "SELECT request_id, version, planner, status, reason, "
		     "rationale, body, created_at FROM plans "
		     "WHERE request_id = ?1 ORDER BY version",
		     &s, err);
	if (rc)
		return rc;
	rc = list_read(st, s, gb_state_bind_text(s, 1, request_id),
		       read_plan, &rows, "listing plans", err);
	GB_STATE_ROWS_DELIVER(&rows, rc, cb, arg);
	return rc;
}

/*****************************************************************************
 *  Attempts
 *****************************************************************************/

gb_err_t gb_state_attempt_begin(gb_state_t *st, struct gb_attempt *a,
				gb_error_t *err)
{
	double started = time_or_now(a->started_at);
	const char *capacity;
	sqlite3_stmt *s = NULL;
	bool own = false;
	gb_err_t rc;

	if (!(capacity = gb_state_capacity_of(a->capacity, "recording an attempt",
					      err)))
		return GB_E_INVALID;
	rc = gb_state_tx_enter(st, &own, "recording an attempt", err);
	if (rc)
		return rc;
	rc = GB_STMT(st, GB_STMT_ATT_BEGIN,
		     "INSERT INTO attempts (request_id, seq, region, az, subnet, "
		     "instance_type, min_count, asked, got, client_token, state, "
		     "error_code, error_class, message, started_at, capacity, "
		     "capacity_target) VALUES "
		     "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0, ?9, 'started', "
		     "NULL, NULL, NULL, ?10, ?11, ?12)",
		     &s, err);
	if (rc)
		goto out;
	if (gb_state_bind_text(s, 1, a->request_id) ||
	    gb_state_bind_int(s, 2, a->seq) ||
	    gb_state_bind_text(s, 3, a->region) ||
	    gb_state_bind_text(s, 4, a->az) ||
	    gb_state_bind_text(s, 5, a->subnet) ||
	    gb_state_bind_text(s, 6, a->instance_type) ||
	    gb_state_bind_int(s, 7, a->min_count) ||
	    gb_state_bind_int(s, 8, a->asked) ||
	    gb_state_bind_text(s, 9, a->client_token) ||
	    gb_state_bind_double(s, 10, started) ||
	    gb_state_bind_text(s, 11, capacity) ||
	    gb_state_bind_text(s, 12, a->capacity_target))
		rc = BIND_FAILED(st, err, "recording attempt %d of request %s",
				 a->seq, a->request_id);
	else
		rc = gb_state_step_done(st, s, err, "recording an attempt");
	if (rc == GB_E_OK) {
		a->id = sqlite3_last_insert_rowid(st->db);
		a->state = GB_ATTEMPT_STARTED;
		a->got = 0;
		a->started_at = started;
	}
out:
	gb_state_stmt_done(s);
	return gb_state_tx_end(st, own, rc, err);
}

static gb_err_t attempt_explain(gb_state_t *st, int64_t id, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;
	int src;

	rc = GB_STMT(st, GB_STMT_ATT_STATE,
		     "SELECT state FROM attempts WHERE id = ?1", &s, err);
	if (rc)
		return rc;
	src = gb_state_bind_int(s, 1, id);
	if (src == SQLITE_OK)
		src = sqlite3_step(s);
	if (src == SQLITE_ROW)
		rc = gb_errorf(err, GB_E_BUSY,
			       "finishing attempt %lld: it is already %s",
			       (long long)id,
			       (const char *)sqlite3_column_text(s, 0));
	else if (src == SQLITE_DONE)
		rc = gb_errorf(err, GB_E_NOTFOUND,
			       "finishing attempt %lld: no such attempt",
			       (long long)id);
	else
		rc = gb_state_sqlerr(st, src, err, "finishing attempt %lld",
				     (long long)id);
	gb_state_stmt_done(s);
	return rc;
}

gb_err_t gb_state_attempt_finish(gb_state_t *st, const struct gb_attempt *a,
				 gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	bool own = false;
	gb_err_t rc;

	if (a->state == GB_ATTEMPT_STARTED ||
	    !GB_STATE_NAME_OF(gb_state_attempt_names, a->state))
		return gb_errorf(err, GB_E_INVALID,
				 "finishing attempt %lld: invalid final state %d",
				 (long long)a->id, (int)a->state);
	rc = gb_state_tx_enter(st, &own, "finishing an attempt", err);
	if (rc)
		return rc;
	rc = GB_STMT(st, GB_STMT_ATT_FINISH,
		     "UPDATE attempts SET state = ?2, got = ?3, error_code = ?4, "
		     "error_class = ?5, message = ?6, finished_at = ?7, "
		     "latency = ?8 "
		     "WHERE id = ?1 AND state IN ('started', 'unknown')",
		     &s, err);
	if (rc)
		goto out;
	if (gb_state_bind_int(s, 1, a->id) ||
	    gb_state_bind_text(s, 2, gb_attempt_state_name(a->state)) ||
	    gb_state_bind_int(s, 3, a->got) ||
	    gb_state_bind_text(s, 4, a->error_code) ||
	    gb_state_bind_text(s, 5, a->error_class) ||
	    gb_state_bind_text(s, 6, a->message) ||
	    gb_state_bind_double(s, 7, time_or_now(a->finished_at)) ||
	    gb_state_bind_double(s, 8, a->latency))
		rc = BIND_FAILED(st, err, "finishing attempt %lld",
				 (long long)a->id);
	else
		rc = gb_state_step_done(st, s, err, "finishing an attempt");
	if (rc == GB_E_OK && sqlite3_changes(st->db) == 0)
		rc = attempt_explain(st, a->id, err);
out:
	gb_state_stmt_done(s);
	return gb_state_tx_end(st, own, rc, err);
}

static gb_err_t read_attempt(gb_state_t *st, sqlite3_stmt *s,
			     struct gb_state_rows *rows, gb_error_t *err)
{
	const char *state = (const char *)sqlite3_column_text(s, 11);
	struct gb_attempt a = {
		.id = sqlite3_column_int64(s, 0),
		.request_id = gb_state_col_text(rows, s, 1),
		.seq = sqlite3_column_int(s, 2),
		.region = gb_state_col_text(rows, s, 3),
		.az = gb_state_col_text(rows, s, 4),
		.subnet = gb_state_col_text(rows, s, 5),
		.instance_type = gb_state_col_text(rows, s, 6),
		.min_count = sqlite3_column_int(s, 7),
		.asked = sqlite3_column_int(s, 8),
		.got = sqlite3_column_int(s, 9),
		.client_token = gb_state_col_text(rows, s, 10),
		.error_code = gb_state_col_text(rows, s, 12),
		.error_class = gb_state_col_text(rows, s, 13),
		.message = gb_state_col_text(rows, s, 14),
		.started_at = sqlite3_column_double(s, 15),
		.finished_at = sqlite3_column_double(s, 16),
		.latency = sqlite3_column_double(s, 17),
		.capacity = gb_state_col_text(rows, s, 18),
		.capacity_target = gb_state_col_text(rows, s, 19),
	};

	if (gb_attempt_state_parse(state, &a.state))
		return gb_errorf(err, GB_E_STATE,
				 "attempt %lld in %s has unknown state %s",
				 (long long)a.id, st->path,
				 state ? state : "NULL");
	return gb_state_rows_push(rows, &a);
}

#define ATT_COLS \
	"id, request_id, seq, region, az, subnet, instance_type, min_count, " \
	"asked, got, client_token, state, error_code, error_class, message, " \
	"started_at, finished_at, latency, capacity, capacity_target"

gb_err_t gb_state_attempt_list(gb_state_t *st, const char *request_id,
			       int (*cb)(const struct gb_attempt *, void *),
			       void *arg, gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_attempt);
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	if (request_id)
		rc = GB_STMT(st, GB_STMT_ATT_LIST,
			     "SELECT " ATT_COLS " FROM attempts "
			     "WHERE request_id = ?1 ORDER BY seq, id",
			     &s, err);
	else
		rc = GB_STMT(st, GB_STMT_ATT_LIST_STARTED,
			     "SELECT " ATT_COLS " FROM attempts "
			     "WHERE state = 'started' ORDER BY id",
			     &s, err);
	if (rc)
		return rc;
	rc = list_read(st, s,
		       request_id && gb_state_bind_text(s, 1, request_id),
		       read_attempt, &rows, "listing attempts", err);
	GB_STATE_ROWS_DELIVER(&rows, rc, cb, arg);
	return rc;
}

/*****************************************************************************
 *  Instances
 *****************************************************************************/

gb_err_t gb_state_instance_add(gb_state_t *st, const struct gb_instance *in,
			       gb_error_t *err)
{
	const char *state = GB_STATE_NAME_OF(gb_state_inst_names, in->state);
	const char *capacity;
	sqlite3_stmt *s = NULL;
	bool own = false;
	gb_err_t rc;

	if (!state)
		return gb_errorf(err, GB_E_INVALID,
				 "adding instance %s: invalid state %d",
				 in->instance_id ? in->instance_id : "(null)",
				 (int)in->state);
	if (!(capacity = gb_state_capacity_of(in->capacity, "adding an instance",
					      err)))
		return GB_E_INVALID;
	rc = gb_state_tx_enter(st, &own, "adding an instance", err);
	if (rc)
		return rc;
	rc = GB_STMT(st, GB_STMT_INST_ADD,
		     "INSERT INTO instances (request_id, region_instance_id, "
		     "region, instance_id, node, az, subnet, instance_type, "
		     "private_ip, public_ip, state, attempt_id, launched_at, "
		     "terminated_at, reason, capacity, capacity_target, agent) "
		     "VALUES (?1, ?2 || '#' || ?3, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
		     "?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
		     &s, err);
	if (rc)
		goto out;
	if (gb_state_bind_text(s, 1, in->request_id) ||
	    gb_state_bind_text(s, 2, in->region) ||
	    gb_state_bind_text(s, 3, in->instance_id) ||
	    gb_state_bind_text(s, 4, in->node) ||
	    gb_state_bind_text(s, 5, in->az) ||
	    gb_state_bind_text(s, 6, in->subnet) ||
	    gb_state_bind_text(s, 7, in->instance_type) ||
	    gb_state_bind_text(s, 8, in->private_ip) ||
	    gb_state_bind_text(s, 9, in->public_ip) ||
	    gb_state_bind_text(s, 10, state) ||
	    gb_state_bind_int(s, 11, in->attempt_id) ||
	    gb_state_bind_double(s, 12, time_or_now(in->launched_at)) ||
	    gb_state_bind_double(s, 13, in->terminated_at) ||
	    gb_state_bind_text(s, 14, in->reason) ||
	    gb_state_bind_text(s, 15, capacity) ||
	    gb_state_bind_text(s, 16, in->capacity_target) ||
	    gb_state_bind_text(s, 17, in->agent))
		rc = BIND_FAILED(st, err, "adding instance %s", in->instance_id);
	else
		rc = gb_state_step_done(st, s, err, "adding an instance");
	if (rc)
		gb_error_prefix(err, "%s#%s of request %s",
				in->region ? in->region : "(null)",
				in->instance_id ? in->instance_id : "(null)",
				in->request_id ? in->request_id : "(null)");
out:
	gb_state_stmt_done(s);
	return gb_state_tx_end(st, own, rc, err);
}

gb_err_t gb_state_instance_update(gb_state_t *st, const struct gb_instance *in,
				  gb_error_t *err)
{
	const char *state = GB_STATE_NAME_OF(gb_state_inst_names, in->state);
	sqlite3_stmt *s = NULL;
	bool own = false;
	gb_err_t rc;

	if (!state)
		return gb_errorf(err, GB_E_INVALID,
				 "updating instance %s: invalid state %d",
				 in->instance_id ? in->instance_id : "(null)",
				 (int)in->state);
	rc = gb_state_tx_enter(st, &own, "updating an instance", err);
	if (rc)
		return rc;
	rc = GB_STMT(st, GB_STMT_INST_UPDATE,
		     "UPDATE instances SET node = coalesce(?3, node), "
		     "private_ip = coalesce(?4, private_ip), "
		     "public_ip = coalesce(?5, public_ip), state = ?6, "
		     "terminated_at = CASE WHEN ?7 > 0 THEN ?7 "
		     "ELSE terminated_at END, "
		     "reason = coalesce(?8, reason), "
		     "agent = coalesce(?10, agent) "
		     "WHERE instance_id = ?2 AND region = ?1 "
		     "AND (?9 IS NULL OR request_id = ?9)",
		     &s, err);
	if (rc)
		goto out;
	if (gb_state_bind_text(s, 1, in->region) ||
	    gb_state_bind_text(s, 2, in->instance_id) ||
	    gb_state_bind_text(s, 3, in->node) ||
	    gb_state_bind_text(s, 4, in->private_ip) ||
	    gb_state_bind_text(s, 5, in->public_ip) ||
	    gb_state_bind_text(s, 6, state) ||
	    gb_state_bind_double(s, 7, in->terminated_at) ||
	    gb_state_bind_text(s, 8, in->reason) ||
	    gb_state_bind_text(s, 9, in->request_id) ||
	    gb_state_bind_text(s, 10, in->agent))
		rc = BIND_FAILED(st, err, "updating instance %s",
				 in->instance_id);
	else
		rc = gb_state_step_done(st, s, err, "updating an instance");
	if (rc == GB_E_OK && sqlite3_changes(st->db) == 0)
		rc = gb_errorf(err, GB_E_NOTFOUND,
			       "updating instance %s#%s: no such instance",
			       in->region ? in->region : "(null)",
			       in->instance_id ? in->instance_id : "(null)");
out:
	gb_state_stmt_done(s);
	return gb_state_tx_end(st, own, rc, err);
}

gb_err_t gb_state_instance_agent(gb_state_t *st, const char *region,
				 const char *instance_id, const char *agent,
				 gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	bool own = false;
	gb_err_t rc;

	rc = gb_state_tx_enter(st, &own, "tagging an instance", err);
	if (rc)
		return rc;
	rc = GB_STMT(st, GB_STMT_INST_AGENT,
		     "UPDATE instances SET agent = ?3 "
		     "WHERE instance_id = ?2 AND region = ?1 AND agent IS NOT ?3",
		     &s, err);
	if (rc)
		goto out;
	if (gb_state_bind_text(s, 1, region) ||
	    gb_state_bind_text(s, 2, instance_id) ||
	    gb_state_bind_text(s, 3, agent))
		rc = BIND_FAILED(st, err, "tagging instance %s", instance_id);
	else
		rc = gb_state_step_done(st, s, err, "tagging an instance");
out:
	gb_state_stmt_done(s);
	return gb_state_tx_end(st, own, rc, err);
}

gb_err_t gb_state_instance_notice(gb_state_t *st, const char *request_id,
				  const char *region, const char *instance_id,
				  double now, bool *first, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	bool own = false;
	gb_err_t rc;

	*first = false;
	if (!request_id || !region || !instance_id || !(now > 0))
		return gb_errorf(err, GB_E_INVALID, "noticing instance %s: missing "
				 "arguments", instance_id ? instance_id : "(null)");
	rc = gb_state_tx_enter(st, &own, "noticing an instance", err);
	if (rc)
		return rc;
	rc = GB_STMT(st, GB_STMT_INST_NOTICE,
		     "UPDATE instances SET noticed_at = ?4 "
		     "WHERE request_id = ?1 AND region = ?2 AND instance_id = ?3 "
		     "AND noticed_at = 0",
		     &s, err);
	if (rc)
		goto out;
	if (gb_state_bind_text(s, 1, request_id) ||
	    gb_state_bind_text(s, 2, region) ||
	    gb_state_bind_text(s, 3, instance_id) ||
	    gb_state_bind_double(s, 4, now))
		rc = BIND_FAILED(st, err, "noticing instance %s", instance_id);
	else
		rc = gb_state_step_done(st, s, err, "noticing an instance");
	if (rc == GB_E_OK)
		*first = sqlite3_changes(st->db) > 0;
out:
	gb_state_stmt_done(s);
	return gb_state_tx_end(st, own, rc, err);
}

static gb_err_t read_instance(gb_state_t *st, sqlite3_stmt *s,
			      struct gb_state_rows *rows, gb_error_t *err)
{
	const char *state = (const char *)sqlite3_column_text(s, 9);
	struct gb_instance in = {
		.request_id = gb_state_col_text(rows, s, 0),
		.region = gb_state_col_text(rows, s, 1),
		.instance_id = gb_state_col_text(rows, s, 2),
		.node = gb_state_col_text(rows, s, 3),
		.az = gb_state_col_text(rows, s, 4),
		.subnet = gb_state_col_text(rows, s, 5),
		.instance_type = gb_state_col_text(rows, s, 6),
		.private_ip = gb_state_col_text(rows, s, 7),
		.public_ip = gb_state_col_text(rows, s, 8),
		.attempt_id = sqlite3_column_int64(s, 10),
		.launched_at = sqlite3_column_double(s, 11),
		.terminated_at = sqlite3_column_double(s, 12),
		.reason = gb_state_col_text(rows, s, 13),
		.capacity = gb_state_col_text(rows, s, 15),
		.capacity_target = gb_state_col_text(rows, s, 16),
		.agent = gb_state_col_text(rows, s, 17),
		.noticed_at = sqlite3_column_double(s, 18),
	};

	if (gb_instance_state_parse(state, &in.state))
		return gb_errorf(err, GB_E_STATE,
				 "instance %s in %s has unknown state %s",
				 in.instance_id ? in.instance_id : "?",
				 st->path, state ? state : "NULL");
	return gb_state_rows_push(rows, &in);
}

enum {
	IL_REQUEST = 1 << 0,
	IL_NODE = 1 << 1,
	IL_REGION = 1 << 2,
	IL_TYPE = 1 << 3,
	IL_ID = 1 << 4,
	IL_STATE = 1 << 5,
	IL_ALIVE = 1 << 6,
	IL_CAPACITY = 1 << 7,
	IL_ALL = 1 << 8,	/* no limit */
};

/* The WHERE terms of a filter shape; parameter numbers fixed per filter. */
static void inst_where(unsigned shape, char *buf, size_t n)
{
	snprintf(buf, n, "WHERE 1%s%s%s%s%s%s%s%s",
		 shape & IL_REQUEST ? " AND request_id = ?1" : "",
		 shape & IL_NODE ? " AND node = ?2" : "",
		 shape & IL_REGION ? " AND region = ?3" : "",
		 shape & IL_TYPE ? " AND instance_type = ?4" : "",
		 shape & IL_ID ? " AND instance_id = ?5" : "",
		 shape & IL_STATE ? " AND state = ?6" : "",
		 shape & IL_ALIVE ? " AND state IN ('pending', 'running', "
				    "'terminating')"
				  : "",
		 shape & IL_CAPACITY ? " AND capacity = ?9" : "");
}

/* As the request listing: one statement per filter shape, for the indexes. */
static gb_err_t inst_list_stmt(gb_state_t *st, unsigned shape,
			       sqlite3_stmt **out, gb_error_t *err)
{
	char sql[1024], where[512];

#define INST_LIST_COLS "request_id, region, instance_id, node, az, subnet, " \
		       "instance_type, private_ip, public_ip, state, attempt_id, " \
		       "launched_at, terminated_at, reason, rowid AS o, capacity, " \
		       "capacity_target, agent, noticed_at"
	inst_where(shape, where, sizeof(where));
	if (shape & IL_ALL)	/* instances_launched, in order: no sort to hold */
		snprintf(sql, sizeof(sql), "SELECT " INST_LIST_COLS " FROM instances %s "
			 "ORDER BY launched_at, rowid", where);
	else	/* the newest ?8, listed oldest first (instances_launched) */
		snprintf(sql, sizeof(sql), "SELECT * FROM (SELECT " INST_LIST_COLS
			 " FROM instances %s ORDER BY launched_at DESC, rowid DESC LIMIT ?8) "
			 "ORDER BY launched_at, o", where);
#undef INST_LIST_COLS
	return gb_state_stmt(st, &st->inst_list[shape], sql, out, err);
}

static unsigned inst_shape(const struct gb_instance_filter *f)
{
	return (f->request_id ? IL_REQUEST : 0) | (f->node ? IL_NODE : 0) |
	       (f->region ? IL_REGION : 0) |
	       (f->instance_type ? IL_TYPE : 0) |
	       (f->instance_id ? IL_ID : 0) | (f->state >= 0 ? IL_STATE : 0) |
	       (f->alive ? IL_ALIVE : 0) | (f->capacity ? IL_CAPACITY : 0);
}

/* [f]'s state and capacity as stored; RET GB_E_INVALID for bad ones. */
static gb_err_t inst_filter_names(const struct gb_instance_filter *f, const char **state,
				  const char **capacity, const char *what, gb_error_t *err)
{
	*state = *capacity = NULL;
	if (f->state >= 0 &&
	    !(*state = GB_STATE_NAME_OF(gb_state_inst_names, f->state)))
		return gb_errorf(err, GB_E_INVALID, "%s: invalid state %d", what, f->state);
	if (f->capacity && !(*capacity = gb_state_capacity_of(f->capacity, what, err)))
		return GB_E_INVALID;
	return GB_E_OK;
}

/* Bind [f]'s values to the statement of its shape: RET true on failure. */
static bool inst_bind(sqlite3_stmt *s, const struct gb_instance_filter *f,
		      const char *state, const char *capacity)
{
	return (f->request_id && gb_state_bind_text(s, 1, f->request_id)) ||
	       (f->node && gb_state_bind_text(s, 2, f->node)) ||
	       (f->region && gb_state_bind_text(s, 3, f->region)) ||
	       (f->instance_type && gb_state_bind_text(s, 4, f->instance_type)) ||
	       (f->instance_id && gb_state_bind_text(s, 5, f->instance_id)) ||
	       (state && gb_state_bind_text(s, 6, state)) ||
	       (capacity && gb_state_bind_text(s, 9, capacity));
}

/* f->stream: the caller's callback, called with each row as it is read */
struct inst_each_ctx {
	int (*cb)(const struct gb_instance *, void *);
	void *arg;
};

static int inst_each(const void *row, void *arg)
{
	const struct inst_each_ctx *e = arg;

	return e->cb(row, e->arg);
}

gb_err_t gb_state_instance_list(gb_state_t *st,
				const struct gb_instance_filter *f,
				int (*cb)(const struct gb_instance *, void *),
				void *arg, gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_instance);
	struct inst_each_ctx each = { cb, arg };
	const struct gb_instance_filter any = GB_INSTANCE_FILTER_ANY;
	const char *state, *capacity;
	sqlite3_stmt *s = NULL;
	bool unbound;
	gb_err_t rc;

	if (!f)
		f = &any;
	if ((rc = inst_filter_names(f, &state, &capacity, "listing instances", err)))
		return rc;
	rc = inst_list_stmt(st, inst_shape(f) | (f->limit ? 0 : IL_ALL), &s, err);
	if (rc)
		return rc;
	unbound = inst_bind(s, f, state, capacity) ||
		  (f->limit && gb_state_bind_int(s, 8, (int64_t)f->limit));
	if (f->stream && cb) {
		rows.each = inst_each;
		rows.each_arg = &each;
	}
	rc = list_read(st, s, unbound, read_instance, &rows,
		       "listing instances", err);
	GB_STATE_ROWS_DELIVER(&rows, rc, cb, arg);
	return rc;
}

gb_err_t gb_state_instance_count(gb_state_t *st, const struct gb_instance_filter *f,
				 long *count, gb_error_t *err)
{
	const struct gb_instance_filter any = GB_INSTANCE_FILTER_ANY;
	const char *state, *capacity;
	char sql[1024], where[512];
	sqlite3_stmt *s = NULL;
	gb_err_t rc;
	int src;

	*count = 0;
	if (!f)
		f = &any;
	if ((rc = inst_filter_names(f, &state, &capacity, "counting instances", err)))
		return rc;
	inst_where(inst_shape(f), where, sizeof(where));
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM instances %s", where);
	src = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (src != SQLITE_OK)
		return gb_state_sqlerr(st, src, err, "counting instances");
	if (inst_bind(s, f, state, capacity))
		rc = BIND_FAILED(st, err, "counting instances");
	else if ((src = sqlite3_step(s)) == SQLITE_ROW)
		*count = (long)sqlite3_column_int64(s, 0);
	else
		rc = gb_state_sqlerr(st, src, err, "counting instances");
	sqlite3_finalize(s);
	return rc;
}

/*****************************************************************************
 *  Spend
 *****************************************************************************/

gb_err_t gb_state_request_set_owner(gb_state_t *st, const char *id, const char *user,
				    const char *account, const char *partition,
				    gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	bool own = false;
	gb_err_t rc;

	if (!id)
		return gb_errorf(err, GB_E_INVALID, "recording a job's owner: no request");
	rc = gb_state_tx_enter(st, &own, "recording a job's owner", err);
	if (rc)
		return rc;
	rc = GB_STMT(st, GB_STMT_REQ_OWNER,
		     "UPDATE requests SET job_user = ?2, job_account = ?3, job_partition = ?4 "
		     "WHERE id = ?1",
		     &s, err);
	if (rc)
		goto out;
	if (gb_state_bind_text(s, 1, id) || gb_state_bind_text(s, 2, user) ||
	    gb_state_bind_text(s, 3, account) || gb_state_bind_text(s, 4, partition))
		rc = BIND_FAILED(st, err, "recording the owner of request %s", id);
	else
		rc = gb_state_step_done(st, s, err, "recording a job's owner");
	if (rc == GB_E_OK && sqlite3_changes(st->db) == 0)
		rc = gb_errorf(err, GB_E_NOTFOUND, "recording a job's owner: no request %s", id);
out:
	gb_state_stmt_done(s);
	return gb_state_tx_end(st, own, rc, err);
}

static gb_err_t read_usage(gb_state_t *st, sqlite3_stmt *s, struct gb_state_rows *rows,
			   gb_error_t *err)
{
	struct gb_usage u = {
		.request_id = gb_state_col_text(rows, s, 0),
		.region = gb_state_col_text(rows, s, 1),
		.instance_id = gb_state_col_text(rows, s, 2),
		.node = gb_state_col_text(rows, s, 3),
		.instance_type = gb_state_col_text(rows, s, 4),
		.capacity = gb_state_col_text(rows, s, 5),
		.launched_at = sqlite3_column_double(s, 6),
		.terminated_at = sqlite3_column_double(s, 7),
		.job_id = sqlite3_column_int64(s, 8),
		.user = gb_state_col_text(rows, s, 9),
		.account = gb_state_col_text(rows, s, 10),
		.partition = gb_state_col_text(rows, s, 11),
		.az = gb_state_col_text(rows, s, 12),
	};

	(void)st;
	(void)err;
	return gb_state_rows_push(rows, &u);
}

gb_err_t gb_state_usage_list(gb_state_t *st, double since, double until,
			     int (*cb)(const struct gb_usage *, void *), void *arg,
			     gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_usage);
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	/* an instance without its request (pruned) still costs: LEFT JOIN */
	rc = GB_STMT(st, GB_STMT_USAGE_LIST,
		     "SELECT i.request_id, i.region, i.instance_id, i.node, i.instance_type, "
		     "i.capacity, i.launched_at, i.terminated_at, IFNULL(r.job_id, 0), "
		     "r.job_user, r.job_account, r.job_partition, i.az "
		     "FROM instances i LEFT JOIN requests r ON r.id = i.request_id "
		     "WHERE i.launched_at < ?2 AND (i.terminated_at = 0 OR i.terminated_at > ?1) "
		     "ORDER BY i.launched_at, i.rowid",
		     &s, err);
	if (rc)
		return rc;
	rc = list_read(st, s, gb_state_bind_double(s, 1, since) ||
			      gb_state_bind_double(s, 2, until),
		       read_usage, &rows, "listing instance time", err);
	GB_STATE_ROWS_DELIVER(&rows, rc, cb, arg);
	return rc;
}

/*****************************************************************************
 *  Approvals
 *****************************************************************************/

gb_err_t gb_state_approval_add(gb_state_t *st, const struct gb_approval *a,
			       gb_error_t *err)
{
	const char *state = GB_STATE_NAME_OF(gb_state_approval_names, a->state);
	sqlite3_stmt *s = NULL;
	bool own = false;
	gb_err_t rc;

	if (!state)
		return gb_errorf(err, GB_E_INVALID,
				 "adding approval of request %s: invalid state %d",
				 a->request_id ? a->request_id : "(null)",
				 (int)a->state);
	rc = gb_state_tx_enter(st, &own, "adding an approval", err);
	if (rc)
		return rc;
	rc = GB_STMT(st, GB_STMT_APP_ADD,
		     "INSERT INTO approvals (request_id, state, why, "
		     "requested_at, expires_at, decided_by, decided_uid, "
		     "decided_at, comment) "
		     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
		     &s, err);
	if (rc)
		goto out;
	if (gb_state_bind_text(s, 1, a->request_id) ||
	    gb_state_bind_text(s, 2, state) || gb_state_bind_text(s, 3, a->why) ||
	    gb_state_bind_double(s, 4, time_or_now(a->requested_at)) ||
	    gb_state_bind_double(s, 5, a->expires_at) ||
	    gb_state_bind_text(s, 6, a->decided_by) ||
	    gb_state_bind_int(s, 7, a->decided_uid) ||
	    gb_state_bind_double(s, 8, a->decided_at) ||
	    gb_state_bind_text(s, 9, a->comment))
		rc = BIND_FAILED(st, err, "adding approval of request %s",
				 a->request_id);
	else
		rc = gb_state_step_done(st, s, err, "adding an approval");
	if (rc)
		gb_error_prefix(err, "request %s",
				a->request_id ? a->request_id : "(null)");
out:
	gb_state_stmt_done(s);
	return gb_state_tx_end(st, own, rc, err);
}

static gb_err_t read_approval(gb_state_t *st, sqlite3_stmt *s,
			      struct gb_state_rows *rows, gb_error_t *err)
{
	const char *state = (const char *)sqlite3_column_text(s, 1);
	struct gb_approval a = {
		.request_id = gb_state_col_text(rows, s, 0),
		.why = gb_state_col_text(rows, s, 2),
		.requested_at = sqlite3_column_double(s, 3),
		.expires_at = sqlite3_column_double(s, 4),
		.decided_by = gb_state_col_text(rows, s, 5),
		.decided_uid = sqlite3_column_int64(s, 6),
		.decided_at = sqlite3_column_double(s, 7),
		.comment = gb_state_col_text(rows, s, 8),
	};

	if (gb_approval_state_parse(state, &a.state))
		return gb_errorf(err, GB_E_STATE,
				 "approval of %s in %s has unknown state %s",
				 a.request_id ? a.request_id : "?", st->path,
				 state ? state : "NULL");
	return gb_state_rows_push(rows, &a);
}

#define APP_COLS \
	"request_id, state, why, requested_at, expires_at, decided_by, " \
	"decided_uid, decided_at, comment"

static gb_err_t fetch_approval(gb_state_t *st, const char *request_id,
			       struct gb_state_rows *rows, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	rc = GB_STMT(st, GB_STMT_APP_GET,
		     "SELECT " APP_COLS " FROM approvals WHERE request_id = ?1",
		     &s, err);
	if (rc)
		return rc;
	rc = list_read(st, s, gb_state_bind_text(s, 1, request_id),
		       read_approval, rows, "reading approval", err);
	if (rc == GB_E_OK && rows->n == 0)
		rc = gb_errorf(err, GB_E_NOTFOUND,
			       "no approval for request %s in %s",
			       request_id ? request_id : "(null)", st->path);
	return rc;
}

gb_err_t gb_state_approval_decide(gb_state_t *st, const char *request_id,
				  enum gb_approval_state to, const char *by,
				  int64_t uid, const char *comment,
				  gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_approval);
	sqlite3_stmt *s = NULL;
	bool own = false;
	gb_err_t rc;

	if (to == GB_APPROVAL_PENDING ||
	    !GB_STATE_NAME_OF(gb_state_approval_names, to))
		return gb_errorf(err, GB_E_INVALID,
				 "deciding approval of request %s: invalid decision %d",
				 request_id ? request_id : "(null)", (int)to);
	rc = gb_state_tx_enter(st, &own, "deciding an approval", err);
	if (rc)
		return rc;
	rc = GB_STMT(st, GB_STMT_APP_DECIDE,
		     "UPDATE approvals SET state = ?2, decided_by = ?3, "
		     "decided_uid = ?4, decided_at = ?5, comment = ?6 "
		     "WHERE request_id = ?1 AND state = 'pending'",
		     &s, err);
	if (rc)
		goto out;
	if (gb_state_bind_text(s, 1, request_id) ||
	    gb_state_bind_text(s, 2, gb_approval_state_name(to)) ||
	    gb_state_bind_text(s, 3, by) || gb_state_bind_int(s, 4, uid) ||
	    gb_state_bind_double(s, 5, gb_time_now()) ||
	    gb_state_bind_text(s, 6, comment))
		rc = BIND_FAILED(st, err, "deciding approval of request %s",
				 request_id);
	else
		rc = gb_state_step_done(st, s, err, "deciding an approval");
	if (rc == GB_E_OK && sqlite3_changes(st->db) == 0) {
		rc = fetch_approval(st, request_id, &rows, err);
		if (rc == GB_E_OK) {
			const struct gb_approval *a = gb_state_rows_at(&rows, 0);

			rc = gb_errorf(err, GB_E_BUSY,
				       "approval of request %s was already decided: %s by %s",
				       request_id,
				       gb_approval_state_name(a->state),
				       a->decided_by ? a->decided_by : "?");
		}
	}
out:
	gb_state_stmt_done(s);
	gb_state_rows_free(&rows);
	return gb_state_tx_end(st, own, rc, err);
}

gb_err_t gb_state_approval_get(gb_state_t *st, const char *request_id,
			       void (*cb)(const struct gb_approval *, void *),
			       void *arg, gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_approval);
	gb_err_t rc = fetch_approval(st, request_id, &rows, err);

	if (rc == GB_E_OK && cb)
		cb(gb_state_rows_at(&rows, 0), arg);
	gb_state_rows_free(&rows);
	return rc;
}

gb_err_t gb_state_approval_list(gb_state_t *st, int state,
				int (*cb)(const struct gb_approval *, void *),
				void *arg, gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_approval);
	const char *name = NULL;
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	if (state >= 0 &&
	    !(name = GB_STATE_NAME_OF(gb_state_approval_names, state)))
		return gb_errorf(err, GB_E_INVALID,
				 "listing approvals: invalid state %d", state);
	if (name)
		rc = GB_STMT(st, GB_STMT_APP_LIST_STATE,
			     "SELECT " APP_COLS " FROM approvals WHERE state = ?1 "
			     "ORDER BY requested_at, rowid",
			     &s, err);
	else
		rc = GB_STMT(st, GB_STMT_APP_LIST,
			     "SELECT " APP_COLS " FROM approvals "
			     "ORDER BY requested_at, rowid",
			     &s, err);
	if (rc)
		return rc;
	rc = list_read(st, s, name && gb_state_bind_text(s, 1, name),
		       read_approval, &rows, "listing approvals", err);
	GB_STATE_ROWS_DELIVER(&rows, rc, cb, arg);
	return rc;
}

/*****************************************************************************
 *  Events
 *****************************************************************************/

gb_err_t gb_state_event_add(gb_state_t *st, const char *request_id,
			    const char *kind, const char *detail,
			    gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	bool own = false;
	gb_err_t rc;

	rc = gb_state_tx_enter(st, &own, "logging an event", err);
	if (rc)
		return rc;
	rc = GB_STMT(st, GB_STMT_EV_ADD,
		     "INSERT INTO events (at, request_id, kind, detail) "
		     "VALUES (?1, ?2, ?3, ?4)",
		     &s, err);
	if (rc)
		goto out;
	if (gb_state_bind_double(s, 1, gb_time_now()) ||
	    gb_state_bind_text(s, 2, request_id) ||
	    gb_state_bind_text(s, 3, kind) || gb_state_bind_text(s, 4, detail))
		rc = BIND_FAILED(st, err, "logging event %s", kind);
	else
		rc = gb_state_step_done(st, s, err, "logging an event");
out:
	gb_state_stmt_done(s);
	return gb_state_tx_end(st, own, rc, err);
}

static gb_err_t read_event(gb_state_t *st, sqlite3_stmt *s,
			   struct gb_state_rows *rows, gb_error_t *err)
{
	struct gb_event e = {
		.id = sqlite3_column_int64(s, 0),
		.at = sqlite3_column_double(s, 1),
		.request_id = gb_state_col_text(rows, s, 2),
		.kind = gb_state_col_text(rows, s, 3),
		.detail = gb_state_col_text(rows, s, 4),
	};

	(void)st;
	(void)err;
	return gb_state_rows_push(rows, &e);
}

gb_err_t gb_state_event_list(gb_state_t *st, const char *request_id,
			     int (*cb)(const struct gb_event *, void *),
			     void *arg, gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_event);
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	if (request_id)
		rc = GB_STMT(st, GB_STMT_EV_LIST,
			     "SELECT id, at, request_id, kind, detail FROM events "
			     "WHERE request_id = ?1 ORDER BY id",
			     &s, err);
	else
		rc = GB_STMT(st, GB_STMT_EV_LIST_ALL,
			     "SELECT id, at, request_id, kind, detail FROM events "
			     "ORDER BY id",
			     &s, err);
	if (rc)
		return rc;
	rc = list_read(st, s,
		       request_id && gb_state_bind_text(s, 1, request_id),
		       read_event, &rows, "listing events", err);
	GB_STATE_ROWS_DELIVER(&rows, rc, cb, arg);
	return rc;
}

/*****************************************************************************
 *  Offerings cache
 *****************************************************************************/

gb_err_t gb_state_offering_put(gb_state_t *st, const char *region,
			       const char *az, const char *instance_type,
			       bool offered, double fetched_at,
			       gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	bool own = false;
	gb_err_t rc;

	rc = gb_state_tx_enter(st, &own, "caching an offering", err);
	if (rc)
		return rc;
	rc = GB_STMT(st, GB_STMT_OFF_PUT,
		     "INSERT OR REPLACE INTO offerings_cache (region, az, "
		     "instance_type, offered, fetched_at) "
		     "VALUES (?1, ?2, ?3, ?4, ?5)",
		     &s, err);
	if (rc)
		goto out;
	if (gb_state_bind_text(s, 1, region) ||
	    gb_state_bind_text(s, 2, az_key(az)) ||
	    gb_state_bind_text(s, 3, instance_type) ||
	    gb_state_bind_int(s, 4, offered ? 1 : 0) ||
	    gb_state_bind_double(s, 5, time_or_now(fetched_at)))
		rc = BIND_FAILED(st, err, "caching an offering");
	else
		rc = gb_state_step_done(st, s, err, "caching an offering");
out:
	gb_state_stmt_done(s);
	return gb_state_tx_end(st, own, rc, err);
}

gb_err_t gb_state_offering_get(gb_state_t *st, const char *region,
			       const char *az, const char *instance_type,
			       double min_fetched_at, bool *offered,
			       gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;
	int src;

	rc = GB_STMT(st, GB_STMT_OFF_GET,
		     "SELECT offered, fetched_at FROM offerings_cache "
		     "WHERE region = ?1 AND az = ?2 AND instance_type = ?3",
		     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, region) ||
	    gb_state_bind_text(s, 2, az_key(az)) ||
	    gb_state_bind_text(s, 3, instance_type))
		src = sqlite3_errcode(st->db);
	else
		src = sqlite3_step(s);
	if (src == SQLITE_ROW && sqlite3_column_double(s, 1) >= min_fetched_at)
		*offered = sqlite3_column_int(s, 0) != 0;
	else if (src == SQLITE_ROW || src == SQLITE_DONE)
		rc = gb_errorf(err, GB_E_NOTFOUND,
			       "offering of %s in %s%s%s is %s",
			       instance_type ? instance_type : "(null)",
			       region ? region : "(null)", az ? "/" : "",
			       az ? az : "",
			       src == SQLITE_ROW ? "stale" : "not cached");
	else
		rc = gb_state_sqlerr(st, src, err, "reading offerings cache");
	gb_state_stmt_done(s);
	return rc;
}

static gb_err_t read_offering(gb_state_t *st, sqlite3_stmt *s,
			      struct gb_state_rows *rows, gb_error_t *err)
{
	struct gb_offering o = {
		.region = gb_state_col_text(rows, s, 0),
		.az = az_value(gb_state_col_text(rows, s, 1)),
		.instance_type = gb_state_col_text(rows, s, 2),
		.offered = sqlite3_column_int(s, 3) != 0,
		.fetched_at = sqlite3_column_double(s, 4),
	};

	(void)st;
	(void)err;
	return gb_state_rows_push(rows, &o);
}

gb_err_t gb_state_offering_list(gb_state_t *st,
				int (*cb)(const struct gb_offering *, void *),
				void *arg, gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_offering);
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	rc = GB_STMT(st, GB_STMT_OFF_LIST,
		     "SELECT region, az, instance_type, offered, fetched_at "
		     "FROM offerings_cache ORDER BY region, az, instance_type",
		     &s, err);
	if (rc)
		return rc;
	rc = read_all(st, s, read_offering, &rows, "listing offerings", err);
	GB_STATE_ROWS_DELIVER(&rows, rc, cb, arg);
	return rc;
}

/*****************************************************************************
 *  Capacity memory
 *****************************************************************************/

/*
 * value(now) = value * 2^(-(now - updated_at) / half_life).  A time before
 * updated_at (a clock step, an out-of-order writer) does not decay: the
 * memory never grows by itself.
 */
static double decay(double v, double updated_at, double now, double half_life)
{
	if (now <= updated_at)
		return v;
	return v * exp2(-(now - updated_at) / half_life);
}

struct cap_row {
	double asked, got, ice, failures;
	double last_ice_at, last_success_at, updated_at;
	double level_sum, level_n, floor_sum, floor_n;
};

#define CAP_COLUMNS "asked, got, ice, failures, last_ice_at, " \
		    "last_success_at, updated_at, level_sum, level_n, " \
		    "floor_sum, floor_n"

static void cap_columns(sqlite3_stmt *s, int i, struct cap_row *c)
{
	c->asked = sqlite3_column_double(s, i++);
	c->got = sqlite3_column_double(s, i++);
	c->ice = sqlite3_column_double(s, i++);
	c->failures = sqlite3_column_double(s, i++);
	c->last_ice_at = sqlite3_column_double(s, i++);
	c->last_success_at = sqlite3_column_double(s, i++);
	c->updated_at = sqlite3_column_double(s, i++);
	c->level_sum = sqlite3_column_double(s, i++);
	c->level_n = sqlite3_column_double(s, i++);
	c->floor_sum = sqlite3_column_double(s, i++);
	c->floor_n = sqlite3_column_double(s, i);
}

/* A pool of capacity memory: the primary key of capacity_stats. */
struct cap_key {
	const char *region, *az, *instance_type;
	const char *capacity;		/* stored text (gb_state_capacity_of) */
};

static gb_err_t cap_get(gb_state_t *st, const struct cap_key *k,
			struct cap_row *c, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;
	int src;

	rc = GB_STMT(st, GB_STMT_CAP_GET,
		     "SELECT " CAP_COLUMNS " FROM capacity_stats "
		     "WHERE region = ?1 AND az = ?2 AND instance_type = ?3 "
		     "AND capacity = ?4",
		     &s, err);
	if (rc)
		return rc;
	memset(c, 0, sizeof(*c));
	if (gb_state_bind_text(s, 1, k->region) ||
	    gb_state_bind_text(s, 2, az_key(k->az)) ||
	    gb_state_bind_text(s, 3, k->instance_type) ||
	    gb_state_bind_text(s, 4, k->capacity))
		src = sqlite3_errcode(st->db);
	else
		src = sqlite3_step(s);
	if (src == SQLITE_ROW)
		cap_columns(s, 0, c);
	else if (src != SQLITE_DONE)
		rc = gb_state_sqlerr(st, src, err, "reading capacity memory");
	gb_state_stmt_done(s);
	return rc;
}

static gb_err_t cap_put(gb_state_t *st, const struct cap_key *k,
			const struct cap_row *c, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	rc = GB_STMT(st, GB_STMT_CAP_PUT,
		     "INSERT OR REPLACE INTO capacity_stats (region, az, "
		     "instance_type, " CAP_COLUMNS ", capacity) "
		     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
		     "?12, ?13, ?14, ?15)",
		     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, k->region) ||
	    gb_state_bind_text(s, 2, az_key(k->az)) ||
	    gb_state_bind_text(s, 3, k->instance_type) ||
	    gb_state_bind_double(s, 4, c->asked) ||
	    gb_state_bind_double(s, 5, c->got) ||
	    gb_state_bind_double(s, 6, c->ice) ||
	    gb_state_bind_double(s, 7, c->failures) ||
	    gb_state_bind_double(s, 8, c->last_ice_at) ||
	    gb_state_bind_double(s, 9, c->last_success_at) ||
	    gb_state_bind_double(s, 10, c->updated_at) ||
	    gb_state_bind_double(s, 11, c->level_sum) ||
	    gb_state_bind_double(s, 12, c->level_n) ||
	    gb_state_bind_double(s, 13, c->floor_sum) ||
	    gb_state_bind_double(s, 14, c->floor_n) ||
	    gb_state_bind_text(s, 15, k->capacity))
		rc = BIND_FAILED(st, err, "recording capacity");
	else
		rc = gb_state_step_done(st, s, err, "recording capacity");
	gb_state_stmt_done(s);
	return rc;
}

/* Every decayed value of a row, to [now]; updated_at moves to [now]. */
static void cap_decay(struct cap_row *c, double now, double half_life)
{
	double k = decay(1.0, c->updated_at, now, half_life);

	c->asked *= k;
	c->got *= k;
	c->ice *= k;
	c->failures *= k;
	c->level_sum *= k;
	c->level_n *= k;
	c->floor_sum *= k;
	c->floor_n *= k;
	if (now > c->updated_at)
		c->updated_at = now;
}

static gb_err_t check_memory_args(double half_life, double now, int a, int b,
				  const char *what, gb_error_t *err)
{
	if (!(half_life > 0) || !isfinite(half_life) || !isfinite(now) ||
	    a < 0 || b < 0)
		return gb_errorf(err, GB_E_INVALID,
				 "%s: invalid half life %g, time %g or counts %d/%d",
				 what, half_life, now, a, b);
	return GB_E_OK;
}

/* OUT *k for the pool; GB_E_INVALID for a capacity kind the map lacks. */
static gb_err_t cap_key_of(const char *region, const char *az,
			   const char *instance_type, const char *capacity,
			   struct cap_key *k, const char *what, gb_error_t *err)
{
	k->region = region;
	k->az = az;
	k->instance_type = instance_type;
	k->capacity = gb_state_capacity_of(capacity, what, err);
	return k->capacity ? GB_E_OK : GB_E_INVALID;
}

gb_err_t gb_state_capacity_record(gb_state_t *st, const char *region,
				  const char *az, const char *instance_type,
				  const char *capacity, int asked, int got,
				  bool ice, bool failure, double now,
				  double half_life, gb_error_t *err)
{
	struct cap_key k;
	struct cap_row c;
	bool own = false;
	gb_err_t rc;

	if ((rc = check_memory_args(half_life, now, asked, got,
				    "recording capacity", err)) ||
	    (rc = cap_key_of(region, az, instance_type, capacity, &k,
			     "recording capacity", err)))
		return rc;
	rc = gb_state_tx_enter(st, &own, "recording capacity", err);
	if (rc)
		return rc;
	rc = cap_get(st, &k, &c, err);
	if (rc == GB_E_OK) {
		cap_decay(&c, now, half_life);
		c.asked += asked;
		c.got += got;
		c.ice += ice ? 1 : 0;
		c.failures += failure ? 1 : 0;
		if (ice && now > c.last_ice_at)
			c.last_ice_at = now;
		if (got > 0 && now > c.last_success_at)
			c.last_success_at = now;
		rc = cap_put(st, &k, &c, err);
	}
	return gb_state_tx_end(st, own, rc, err);
}

/*
 * Newer evidence wins where it contradicts older: a level under the mean
 * lower bound drops the bounds (the pool holds less than they said); a
 * bound over the mean level drops the levels (it holds more than when it
 * ran dry).  A bound at or over the mean bound confirms or raises the
 * bounds to it (their weight plus one); one under it proves nothing they
 * do not say and adds nothing.
 */
static void level_add(struct cap_row *c, int level, bool exact)
{
	if (exact) {
		if (c->floor_n > 0 && level < c->floor_sum / c->floor_n - 1e-6)
			c->floor_sum = c->floor_n = 0;
		c->level_sum += level;
		c->level_n += 1;
		return;
	}
	if (c->level_n > 0 && level > c->level_sum / c->level_n + 1e-6)
		c->level_sum = c->level_n = 0;
	if (c->floor_n > 0 && level < c->floor_sum / c->floor_n - 1e-6)
		return;
	c->floor_n += 1;
	c->floor_sum = level * c->floor_n;
}

gb_err_t gb_state_capacity_level(gb_state_t *st, const char *region,
				 const char *az, const char *instance_type,
				 const char *capacity, int level, bool exact,
				 double now, double half_life, gb_error_t *err)
{
	struct cap_key k;
	struct cap_row c;
	bool own = false;
	gb_err_t rc;

	if ((rc = check_memory_args(half_life, now, level, 0,
				    "recording a capacity level", err)) ||
	    (rc = cap_key_of(region, az, instance_type, capacity, &k,
			     "recording a capacity level", err)))
		return rc;
	rc = gb_state_tx_enter(st, &own, "recording a capacity level", err);
	if (rc)
		return rc;
	rc = cap_get(st, &k, &c, err);
	if (rc == GB_E_OK) {
		cap_decay(&c, now, half_life);
		level_add(&c, level, exact);
		rc = cap_put(st, &k, &c, err);
	}
	return gb_state_tx_end(st, own, rc, err);
}

static gb_err_t read_capacity(gb_state_t *st, sqlite3_stmt *s,
			      struct gb_state_rows *rows, gb_error_t *err)
{
	struct cap_row r;
	struct gb_capacity c = {
		.region = gb_state_col_text(rows, s, 0),
		.az = az_value(gb_state_col_text(rows, s, 1)),
		.instance_type = gb_state_col_text(rows, s, 2),
		.capacity = gb_state_col_text(rows, s, 14),
	};

	(void)st;
	(void)err;
	cap_columns(s, 3, &r);
	c.asked = r.asked;
	c.got = r.got;
	c.ice = r.ice;
	c.failures = r.failures;
	c.last_ice_at = r.last_ice_at;
	c.last_success_at = r.last_success_at;
	c.updated_at = r.updated_at;
	c.level_sum = r.level_sum;
	c.level_n = r.level_n;
	c.floor_sum = r.floor_sum;
	c.floor_n = r.floor_n;
	return gb_state_rows_push(rows, &c);
}

gb_err_t gb_state_capacity_list(gb_state_t *st, const char *instance_type,
				double now, double half_life,
				int (*cb)(const struct gb_capacity *, void *),
				void *arg, gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_capacity);
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	if (!(half_life > 0) || !isfinite(half_life) || !isfinite(now))
		return gb_errorf(err, GB_E_INVALID,
				 "listing capacity: invalid half life %g or time %g",
				 half_life, now);
	if (instance_type)
		rc = GB_STMT(st, GB_STMT_CAP_LIST_TYPE,
			     "SELECT region, az, instance_type, " CAP_COLUMNS
			     ", capacity FROM capacity_stats WHERE instance_type = ?1 "
			     "ORDER BY region, az, instance_type, capacity",
			     &s, err);
	else
		rc = GB_STMT(st, GB_STMT_CAP_LIST,
			     "SELECT region, az, instance_type, " CAP_COLUMNS
			     ", capacity FROM capacity_stats "
			     "ORDER BY region, az, instance_type, capacity",
			     &s, err);
	if (rc)
		return rc;
	rc = list_read(st, s,
		       instance_type && gb_state_bind_text(s, 1, instance_type),
		       read_capacity, &rows, "listing capacity", err);
	for (size_t i = 0; rc == GB_E_OK && i < rows.n; i++) {
		struct gb_capacity *c = gb_state_rows_at(&rows, i);
		double k = decay(1.0, c->updated_at, now, half_life);

		c->asked *= k;
		c->got *= k;
		c->ice *= k;
		c->failures *= k;
		c->level_sum *= k;
		c->level_n *= k;
		c->floor_sum *= k;
		c->floor_n *= k;
		if (cb && cb(c, arg))
			break;
	}
	gb_state_rows_free(&rows);
	return rc;
}

/*****************************************************************************
 *  Quota memory
 *****************************************************************************/

struct quota_row {
	double limit_sum, limit_n, refusals, last_refusal_at, updated_at;
};

static gb_err_t quota_get(gb_state_t *st, const char *region, const char *quota,
			  struct quota_row *q, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;
	int src;

	rc = GB_STMT(st, GB_STMT_QUOTA_GET,
		     "SELECT limit_sum, limit_n, refusals, last_refusal_at, "
		     "updated_at FROM quota_stats WHERE region = ?1 AND quota = ?2",
		     &s, err);
	if (rc)
		return rc;
	memset(q, 0, sizeof(*q));
	if (gb_state_bind_text(s, 1, region) || gb_state_bind_text(s, 2, quota))
		src = sqlite3_errcode(st->db);
	else
		src = sqlite3_step(s);
	if (src == SQLITE_ROW) {
		q->limit_sum = sqlite3_column_double(s, 0);
		q->limit_n = sqlite3_column_double(s, 1);
		q->refusals = sqlite3_column_double(s, 2);
		q->last_refusal_at = sqlite3_column_double(s, 3);
		q->updated_at = sqlite3_column_double(s, 4);
	} else if (src != SQLITE_DONE) {
		rc = gb_state_sqlerr(st, src, err, "reading quota memory");
	}
	gb_state_stmt_done(s);
	return rc;
}

static gb_err_t quota_put(gb_state_t *st, const char *region, const char *quota,
			  const char *code, const struct quota_row *q,
			  gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	rc = GB_STMT(st, GB_STMT_QUOTA_PUT,
		     "INSERT OR REPLACE INTO quota_stats (region, quota, code, "
		     "limit_sum, limit_n, refusals, last_refusal_at, updated_at) "
		     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
		     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, region) ||
	    gb_state_bind_text(s, 2, quota) ||
	    gb_state_bind_text(s, 3, code) ||
	    gb_state_bind_double(s, 4, q->limit_sum) ||
	    gb_state_bind_double(s, 5, q->limit_n) ||
	    gb_state_bind_double(s, 6, q->refusals) ||
	    gb_state_bind_double(s, 7, q->last_refusal_at) ||
	    gb_state_bind_double(s, 8, q->updated_at))
		rc = BIND_FAILED(st, err, "recording a quota");
	else
		rc = gb_state_step_done(st, s, err, "recording a quota");
	gb_state_stmt_done(s);
	return rc;
}

gb_err_t gb_state_quota_record(gb_state_t *st, const char *region,
			       const char *quota, const char *code,
			       double limit, bool refusal, double now,
			       double half_life, gb_error_t *err)
{
	struct quota_row q;
	bool own = false;
	double k;
	gb_err_t rc;

	if (!region || !*region || !quota || !*quota || !code || !*code)
		return gb_errorf(err, GB_E_INVALID,
				 "recording a quota: region, quota and code are required");
	if (!(half_life > 0) || !isfinite(half_life) || !isfinite(now) ||
	    !(limit >= 0) || !isfinite(limit))
		return gb_errorf(err, GB_E_INVALID,
				 "recording a quota: invalid half life %g, time %g or limit %g",
				 half_life, now, limit);
	rc = gb_state_tx_enter(st, &own, "recording a quota", err);
	if (rc)
		return rc;
	rc = quota_get(st, region, quota, &q, err);
	if (rc == GB_E_OK) {
		k = decay(1.0, q.updated_at, now, half_life);
		q.limit_sum = q.limit_sum * k + limit;
		q.limit_n = q.limit_n * k + 1;
		q.refusals = q.refusals * k + (refusal ? 1 : 0);
		if (refusal && now > q.last_refusal_at)
			q.last_refusal_at = now;
		if (now > q.updated_at)
			q.updated_at = now;
		rc = quota_put(st, region, quota, code, &q, err);
	}
	return gb_state_tx_end(st, own, rc, err);
}

static gb_err_t read_quota(gb_state_t *st, sqlite3_stmt *s,
			   struct gb_state_rows *rows, gb_error_t *err)
{
	struct gb_quota q = {
		.region = gb_state_col_text(rows, s, 0),
		.quota = gb_state_col_text(rows, s, 1),
		.code = gb_state_col_text(rows, s, 2),
		.limit_sum = sqlite3_column_double(s, 3),
		.limit_n = sqlite3_column_double(s, 4),
		.refusals = sqlite3_column_double(s, 5),
		.last_refusal_at = sqlite3_column_double(s, 6),
		.updated_at = sqlite3_column_double(s, 7),
	};

	(void)st;
	(void)err;
	return gb_state_rows_push(rows, &q);
}

gb_err_t gb_state_quota_list(gb_state_t *st, double now, double half_life,
			     int (*cb)(const struct gb_quota *, void *),
			     void *arg, gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_quota);
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	if (!(half_life > 0) || !isfinite(half_life) || !isfinite(now))
		return gb_errorf(err, GB_E_INVALID,
				 "listing quotas: invalid half life %g or time %g",
				 half_life, now);
	rc = GB_STMT(st, GB_STMT_QUOTA_LIST,
		     "SELECT region, quota, code, limit_sum, limit_n, refusals, "
		     "last_refusal_at, updated_at FROM quota_stats "
		     "ORDER BY region, quota",
		     &s, err);
	if (rc)
		return rc;
	rc = read_all(st, s, read_quota, &rows, "listing quotas", err);
	for (size_t i = 0; rc == GB_E_OK && i < rows.n; i++) {
		struct gb_quota *q = gb_state_rows_at(&rows, i);
		double k = decay(1.0, q->updated_at, now, half_life);

		q->limit_sum *= k;
		q->limit_n *= k;
		q->refusals *= k;
		if (cb && cb(q, arg))
			break;
	}
	gb_state_rows_free(&rows);
	return rc;
}

/*****************************************************************************
 *  Reservations cache
 *****************************************************************************/

static bool blank(const char *s)
{
	return !s || !*s;
}

static bool named_in(const char *const *names, size_t n, const char *s)
{
	return gb_state_index_of(names, n, s) >= 0;
}

/* Every row of [v] is checked before anything is written. */
static gb_err_t res_check(const char *region, const struct gb_reservation *v,
			  size_t n, gb_error_t *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct gb_reservation *r = &v[i];
		const char *id = blank(r->id) ? "(no id)" : r->id;

		if (blank(r->id) || blank(r->instance_type) || blank(r->az) ||
		    blank(r->state))
			return gb_errorf(err, GB_E_INVALID,
					 "caching reservation %zu (%s) of %s: id, instance type, AZ and state are required",
					 i, id, region);
		if (r->region && strcmp(r->region, region))
			return gb_errorf(err, GB_E_INVALID,
					 "caching reservations of %s: reservation %s is of %s",
					 region, id, r->region);
		if (!named_in(gb_state_res_kind_names,
			      GB_ARRAY_LEN(gb_state_res_kind_names), r->kind))
			return gb_errorf(err, GB_E_INVALID,
					 "caching reservation %s of %s: unknown kind \"%s\" (not in "
					 GB_STATE_SQL_IN(GB_RESERVATION_KIND_MAP) ")",
					 id, region, r->kind ? r->kind : "(null)");
		if (!named_in(gb_state_res_match_names,
			      GB_ARRAY_LEN(gb_state_res_match_names), r->match))
			return gb_errorf(err, GB_E_INVALID,
					 "caching reservation %s of %s: unknown match criteria \"%s\" (not in "
					 GB_STATE_SQL_IN(GB_RESERVATION_MATCH_MAP) ")",
					 id, region, r->match ? r->match : "(null)");
		if (r->total < 0 || r->available < 0)
			return gb_errorf(err, GB_E_INVALID,
					 "caching reservation %s of %s: invalid counts %d total, %d available",
					 id, region, r->total, r->available);
	}
	return GB_E_OK;
}

static gb_err_t res_clear(gb_state_t *st, const char *region, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	rc = GB_STMT(st, GB_STMT_RES_CLEAR,
		     "DELETE FROM capacity_reservations WHERE region = ?1", &s,
		     err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, region))
		rc = BIND_FAILED(st, err, "clearing the reservations of %s",
				 region);
	else
		rc = gb_state_step_done(st, s, err, "clearing cached reservations");
	gb_state_stmt_done(s);
	return rc;
}

static gb_err_t res_insert(gb_state_t *st, const char *region,
			   const struct gb_reservation *r, double fetched_at,
			   gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	rc = GB_STMT(st, GB_STMT_RES_ADD,
		     "INSERT INTO capacity_reservations (region, id, "
		     "instance_type, az, kind, state, match, total, available, "
		     "start_at, end_at, fetched_at) "
		     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
		     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, region) ||
	    gb_state_bind_text(s, 2, r->id) ||
	    gb_state_bind_text(s, 3, r->instance_type) ||
	    gb_state_bind_text(s, 4, r->az) ||
	    gb_state_bind_text(s, 5, r->kind) ||
	    gb_state_bind_text(s, 6, r->state) ||
	    gb_state_bind_text(s, 7, r->match) ||
	    gb_state_bind_int(s, 8, r->total) ||
	    gb_state_bind_int(s, 9, r->available) ||
	    gb_state_bind_double(s, 10, r->start_at) ||
	    gb_state_bind_double(s, 11, r->end_at) ||
	    gb_state_bind_double(s, 12, fetched_at))
		rc = BIND_FAILED(st, err, "caching a reservation");
	else
		rc = gb_state_step_done(st, s, err, "caching a reservation");
	if (rc)
		gb_error_prefix(err, "reservation %s of %s", r->id, region);
	gb_state_stmt_done(s);
	return rc;
}

static gb_err_t res_fetched_put(gb_state_t *st, const char *region, double at,
			       gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	rc = GB_STMT(st, GB_STMT_RES_FETCHED_PUT,
		     "INSERT OR REPLACE INTO capacity_reservations_fetched (region, fetched_at) "
		     "VALUES (?1, ?2)", &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, region) || gb_state_bind_double(s, 2, at))
		rc = BIND_FAILED(st, err, "noting when the reservations of %s were cached",
				 region);
	else
		rc = gb_state_step_done(st, s, err, "noting when reservations were cached");
	gb_state_stmt_done(s);
	return rc;
}

gb_err_t gb_state_reservations_replace(gb_state_t *st, const char *region,
				       const struct gb_reservation *v,
				       size_t n, double fetched_at,
				       gb_error_t *err)
{
	double at = time_or_now(fetched_at);
	bool own = false;
	gb_err_t rc;

	if (blank(region))
		return gb_errorf(err, GB_E_INVALID,
				 "caching reservations: a region is required");
	if (n > 0 && !v)
		return gb_errorf(err, GB_E_INVALID,
				 "caching reservations of %s: %zu rows and no array",
				 region, n);
	if ((rc = res_check(region, v, n, err)))
		return rc;
	rc = gb_state_tx_enter(st, &own, "caching reservations", err);
	if (rc)
		return rc;
	rc = res_clear(st, region, err);
	for (size_t i = 0; rc == GB_E_OK && i < n; i++)
		rc = res_insert(st, region, &v[i], at, err);
	if (rc == GB_E_OK)
		rc = res_fetched_put(st, region, at, err);
	return gb_state_tx_end(st, own, rc, err);
}

gb_err_t gb_state_reservations_fetched(gb_state_t *st, const char *region,
				       double *at, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;
	int step;

	*at = 0;
	if (blank(region))
		return gb_errorf(err, GB_E_INVALID,
				 "reading when reservations were cached: a region is required");
	rc = GB_STMT(st, GB_STMT_RES_FETCHED_GET,
		     "SELECT fetched_at FROM capacity_reservations_fetched WHERE region = ?1",
		     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, region)) {
		rc = BIND_FAILED(st, err, "reading when the reservations of %s were cached",
				 region);
	} else if ((step = sqlite3_step(s)) == SQLITE_ROW) {
		*at = sqlite3_column_double(s, 0);
	} else if (step == SQLITE_DONE) {
		rc = gb_errorf(err, GB_E_NOTFOUND, "the reservations of %s were never cached",
			       region);
	} else {
		rc = gb_state_sqlerr(st, step, err, "reading when reservations were cached");
	}
	gb_state_stmt_done(s);
	return rc;
}

static gb_err_t read_reservation(gb_state_t *st, sqlite3_stmt *s,
				 struct gb_state_rows *rows, gb_error_t *err)
{
	struct gb_reservation r = {
		.region = gb_state_col_text(rows, s, 0),
		.id = gb_state_col_text(rows, s, 1),
		.instance_type = gb_state_col_text(rows, s, 2),
		.az = gb_state_col_text(rows, s, 3),
		.kind = gb_state_col_text(rows, s, 4),
		.state = gb_state_col_text(rows, s, 5),
		.match = gb_state_col_text(rows, s, 6),
		.total = sqlite3_column_int(s, 7),
		.available = sqlite3_column_int(s, 8),
		.start_at = sqlite3_column_double(s, 9),
		.end_at = sqlite3_column_double(s, 10),
		.fetched_at = sqlite3_column_double(s, 11),
	};

	(void)st;
	(void)err;
	return gb_state_rows_push(rows, &r);
}

#define RES_COLS \
	"region, id, instance_type, az, kind, state, match, total, " \
	"available, start_at, end_at, fetched_at"

gb_err_t gb_state_reservation_list(gb_state_t *st, const char *region,
				   double min_fetched_at,
				   int (*cb)(const struct gb_reservation *,
					     void *),
				   void *arg, gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_reservation);
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	if (region && !*region)
		return gb_errorf(err, GB_E_INVALID,
				 "listing reservations: empty region name");
	if (!isfinite(min_fetched_at))
		return gb_errorf(err, GB_E_INVALID,
				 "listing reservations: invalid time %g",
				 min_fetched_at);
	if (region)
		rc = GB_STMT(st, GB_STMT_RES_LIST_REGION,
			     "SELECT " RES_COLS " FROM capacity_reservations "
			     "WHERE region = ?1 AND fetched_at >= ?2 ORDER BY id",
			     &s, err);
	else
		rc = GB_STMT(st, GB_STMT_RES_LIST,
			     "SELECT " RES_COLS " FROM capacity_reservations "
			     "WHERE fetched_at >= ?2 ORDER BY region, id",
			     &s, err);
	if (rc)
		return rc;
	rc = list_read(st, s,
		       (region && gb_state_bind_text(s, 1, region)) ||
			       gb_state_bind_double(s, 2, min_fetched_at),
		       read_reservation, &rows, "listing reservations", err);
	GB_STATE_ROWS_DELIVER(&rows, rc, cb, arg);
	return rc;
}

gb_err_t gb_state_reservation_take(gb_state_t *st, const char *region,
				   const char *id, int n, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	bool own = false;
	gb_err_t rc;

	if (blank(region) || blank(id))
		return gb_errorf(err, GB_E_INVALID,
				 "counting down a reservation: a region and a reservation id are required");
	if (n < 0)
		return gb_errorf(err, GB_E_INVALID,
				 "counting down reservation %s of %s: invalid count %d",
				 id, region, n);
	rc = gb_state_tx_enter(st, &own, "counting down a reservation", err);
	if (rc)
		return rc;
	rc = GB_STMT(st, GB_STMT_RES_TAKE,
		     "UPDATE capacity_reservations "
		     "SET available = max(available - ?3, 0) "
		     "WHERE region = ?1 AND id = ?2",
		     &s, err);
	if (rc)
		goto out;
	if (gb_state_bind_text(s, 1, region) || gb_state_bind_text(s, 2, id) ||
	    gb_state_bind_int(s, 3, n))
		rc = BIND_FAILED(st, err, "counting down reservation %s of %s",
				 id, region);
	else
		rc = gb_state_step_done(st, s, err, "counting down a reservation");
	if (rc == GB_E_OK && sqlite3_changes(st->db) == 0)
		rc = gb_errorf(err, GB_E_NOTFOUND,
			       "counting down reservation %s of %s: not cached",
			       id, region);
out:
	gb_state_stmt_done(s);
	return gb_state_tx_end(st, own, rc, err);
}

/*****************************************************************************
 *  Spot prices
 *****************************************************************************/

static gb_err_t spot_check(const char *region, const char *const *types, size_t n_types,
			   const struct gb_spot_price *v, size_t n, gb_error_t *err)
{
	for (size_t i = 0; i < n_types; i++)
		if (blank(types[i]))
			return gb_errorf(err, GB_E_INVALID,
					 "caching spot prices of %s: instance type %zu is empty",
					 region, i);
	for (size_t i = 0; i < n; i++) {
		const struct gb_spot_price *p = &v[i];

		if (blank(p->az) || blank(p->instance_type))
			return gb_errorf(err, GB_E_INVALID,
					 "caching spot price %zu of %s: AZ and instance type are required",
					 i, region);
		if (p->region && strcmp(p->region, region))
			return gb_errorf(err, GB_E_INVALID,
					 "caching spot prices of %s: the price of %s in %s is of %s",
					 region, p->instance_type, p->az, p->region);
		if (!(p->usd_per_hour > 0) || !isfinite(p->usd_per_hour) ||
		    !isfinite(p->seen_at))
			return gb_errorf(err, GB_E_INVALID,
					 "caching the spot price of %s in %s: invalid price %g at %g",
					 p->instance_type, p->az, p->usd_per_hour, p->seen_at);
	}
	return GB_E_OK;
}

/* DELETE ... WHERE region = ?1 through the statement of [slot]. */
static gb_err_t spot_clear(gb_state_t *st, enum gb_stmt slot, const char *sql,
			   const char *region, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	if ((rc = gb_state_stmt(st, &st->stmt[slot], sql, &s, err)))
		return rc;
	if (gb_state_bind_text(s, 1, region))
		rc = BIND_FAILED(st, err, "clearing the spot prices of %s", region);
	else
		rc = gb_state_step_done(st, s, err, "clearing cached spot prices");
	gb_state_stmt_done(s);
	return rc;
}

static gb_err_t spot_insert(gb_state_t *st, const char *region, const struct gb_spot_price *p,
			    double fetched_at, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	/* the later of a pool's prices wins (EC2 lists the changes since StartTime) */
	rc = GB_STMT(st, GB_STMT_SPOT_ADD,
		     "INSERT INTO spot_prices (region, az, instance_type, usd_per_hour, "
		     "seen_at, fetched_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
		     "ON CONFLICT (region, az, instance_type) DO UPDATE SET "
		     "usd_per_hour = excluded.usd_per_hour, seen_at = excluded.seen_at "
		     "WHERE excluded.seen_at >= spot_prices.seen_at",
		     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, region) || gb_state_bind_text(s, 2, p->az) ||
	    gb_state_bind_text(s, 3, p->instance_type) ||
	    gb_state_bind_double(s, 4, p->usd_per_hour) ||
	    gb_state_bind_double(s, 5, p->seen_at) || gb_state_bind_double(s, 6, fetched_at))
		rc = BIND_FAILED(st, err, "caching a spot price");
	else
		rc = gb_state_step_done(st, s, err, "caching a spot price");
	if (rc)
		gb_error_prefix(err, "spot price of %s in %s", p->instance_type, p->az);
	gb_state_stmt_done(s);
	return rc;
}

static gb_err_t spot_fetched_put(gb_state_t *st, const char *region, const char *type,
				 double at, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	rc = GB_STMT(st, GB_STMT_SPOT_FETCHED_PUT,
		     "INSERT OR REPLACE INTO spot_prices_fetched (region, instance_type, "
		     "fetched_at) VALUES (?1, ?2, ?3)",
		     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, region) || gb_state_bind_text(s, 2, type) ||
	    gb_state_bind_double(s, 3, at))
		rc = BIND_FAILED(st, err, "noting when the spot prices of %s in %s were cached",
				 type, region);
	else
		rc = gb_state_step_done(st, s, err, "noting when spot prices were cached");
	gb_state_stmt_done(s);
	return rc;
}

gb_err_t gb_state_spot_prices_replace(gb_state_t *st, const char *region,
				      const char *const *types, size_t n_types,
				      const struct gb_spot_price *v, size_t n,
				      double fetched_at, gb_error_t *err)
{
	double at = time_or_now(fetched_at);
	bool own = false;
	gb_err_t rc;

	if (blank(region))
		return gb_errorf(err, GB_E_INVALID, "caching spot prices: a region is required");
	if ((n > 0 && !v) || (n_types > 0 && !types))
		return gb_errorf(err, GB_E_INVALID,
				 "caching spot prices of %s: %zu rows, %zu types and no array",
				 region, n, n_types);
	if ((rc = spot_check(region, types, n_types, v, n, err)))
		return rc;
	rc = gb_state_tx_enter(st, &own, "caching spot prices", err);
	if (rc)
		return rc;
	rc = spot_clear(st, GB_STMT_SPOT_CLEAR, "DELETE FROM spot_prices WHERE region = ?1",
			region, err);
	if (rc == GB_E_OK)
		rc = spot_clear(st, GB_STMT_SPOT_FETCHED_CLEAR,
				"DELETE FROM spot_prices_fetched WHERE region = ?1", region, err);
	for (size_t i = 0; rc == GB_E_OK && i < n; i++)
		rc = spot_insert(st, region, &v[i], at, err);
	for (size_t i = 0; rc == GB_E_OK && i < n_types; i++)
		rc = spot_fetched_put(st, region, types[i], at, err);
	return gb_state_tx_end(st, own, rc, err);
}

gb_err_t gb_state_spot_prices_fetched(gb_state_t *st, const char *region,
				      const char *instance_type, double *at,
				      gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;
	int step;

	*at = 0;
	if (blank(region) || blank(instance_type))
		return gb_errorf(err, GB_E_INVALID,
				 "reading when spot prices were cached: a region and a type are required");
	rc = GB_STMT(st, GB_STMT_SPOT_FETCHED_GET,
		     "SELECT fetched_at FROM spot_prices_fetched "
		     "WHERE region = ?1 AND instance_type = ?2",
		     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, region) || gb_state_bind_text(s, 2, instance_type)) {
		rc = BIND_FAILED(st, err, "reading when the spot prices of %s in %s were cached",
				 instance_type, region);
	} else if ((step = sqlite3_step(s)) == SQLITE_ROW) {
		*at = sqlite3_column_double(s, 0);
	} else if (step == SQLITE_DONE) {
		rc = gb_errorf(err, GB_E_NOTFOUND, "the spot prices of %s in %s were never cached",
			       instance_type, region);
	} else {
		rc = gb_state_sqlerr(st, step, err, "reading when spot prices were cached");
	}
	gb_state_stmt_done(s);
	return rc;
}

gb_err_t gb_state_spot_price_get(gb_state_t *st, const char *region, const char *az,
				 const char *instance_type, struct gb_spot_price *out,
				 gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc;
	int step;

	memset(out, 0, sizeof(*out));
	if (blank(region) || blank(instance_type) || (az && !*az))
		return gb_errorf(err, GB_E_INVALID,
				 "reading a spot price: a region and a type are required");
	/* an aggregate always has a row: count(*) = 0 is "not cached" */
	if (az)
		rc = GB_STMT(st, GB_STMT_SPOT_GET_AZ,
			     "SELECT count(*), usd_per_hour, seen_at, fetched_at FROM spot_prices "
			     "WHERE region = ?1 AND instance_type = ?2 AND az = ?3",
			     &s, err);
	else
		rc = GB_STMT(st, GB_STMT_SPOT_GET_MAX,
			     "SELECT count(*), max(usd_per_hour), min(seen_at), min(fetched_at) "
			     "FROM spot_prices WHERE region = ?1 AND instance_type = ?2",
			     &s, err);
	if (rc)
		return rc;
	if (gb_state_bind_text(s, 1, region) || gb_state_bind_text(s, 2, instance_type) ||
	    (az && gb_state_bind_text(s, 3, az))) {
		rc = BIND_FAILED(st, err, "reading the spot price of %s in %s", instance_type,
				 region);
	} else if ((step = sqlite3_step(s)) != SQLITE_ROW) {
		rc = gb_state_sqlerr(st, step, err, "reading a spot price");
	} else if (sqlite3_column_int64(s, 0) == 0) {
		rc = gb_errorf(err, GB_E_NOTFOUND, "no spot price of %s in %s is cached",
			       instance_type, az ? az : region);
	} else {
		*out = (struct gb_spot_price){
			.region = region,
			.az = az,
			.instance_type = instance_type,
			.usd_per_hour = sqlite3_column_double(s, 1),
			.seen_at = sqlite3_column_double(s, 2),
			.fetched_at = sqlite3_column_double(s, 3),
		};
	}
	gb_state_stmt_done(s);
	return rc;
}

static gb_err_t read_spot_price(gb_state_t *st, sqlite3_stmt *s, struct gb_state_rows *rows,
				gb_error_t *err)
{
	struct gb_spot_price p = {
		.region = gb_state_col_text(rows, s, 0),
		.az = gb_state_col_text(rows, s, 1),
		.instance_type = gb_state_col_text(rows, s, 2),
		.usd_per_hour = sqlite3_column_double(s, 3),
		.seen_at = sqlite3_column_double(s, 4),
		.fetched_at = sqlite3_column_double(s, 5),
	};

	(void)st;
	(void)err;
	return gb_state_rows_push(rows, &p);
}

#define SPOT_COLS "region, az, instance_type, usd_per_hour, seen_at, fetched_at"

gb_err_t gb_state_spot_price_list(gb_state_t *st, const char *region,
				  int (*cb)(const struct gb_spot_price *, void *),
				  void *arg, gb_error_t *err)
{
	struct gb_state_rows rows = GB_STATE_ROWS_INIT(struct gb_spot_price);
	sqlite3_stmt *s = NULL;
	gb_err_t rc;

	if (region && !*region)
		return gb_errorf(err, GB_E_INVALID, "listing spot prices: empty region name");
	if (region)
		rc = GB_STMT(st, GB_STMT_SPOT_LIST_REGION,
			     "SELECT " SPOT_COLS " FROM spot_prices WHERE region = ?1 "
			     "ORDER BY instance_type, az",
			     &s, err);
	else
		rc = GB_STMT(st, GB_STMT_SPOT_LIST,
			     "SELECT " SPOT_COLS " FROM spot_prices "
			     "ORDER BY region, instance_type, az",
			     &s, err);
	if (rc)
		return rc;
	rc = list_read(st, s, region && gb_state_bind_text(s, 1, region), read_spot_price, &rows,
		       "listing spot prices", err);
	GB_STATE_ROWS_DELIVER(&rows, rc, cb, arg);
	return rc;
}
