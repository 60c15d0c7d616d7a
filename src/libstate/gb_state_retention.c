/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_state_retention.c - pruning finished requests, forgetting memory, VACUUM
 *
 * These are the only deletes of the library.  Each is one transaction that
 * deletes child rows explicitly, children first, so that the counts it
 * returns are the rows that went (sqlite3_changes() does not count the
 * rows an ON DELETE CASCADE removes) and so that nothing depends on
 * PRAGMA foreign_keys being on.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gb_log.h"
#include "gb_state_int.h"
#include "gb_util.h"

/* A statement parameter: text (NULL: SQL NULL), a REAL or an INTEGER. */
struct param {
	enum { P_TEXT, P_REAL, P_INT } type;
	const char *text;
	double num;
};

static int bind_params(sqlite3_stmt *s, const struct param *p, size_t n)
{
	int src = SQLITE_OK;

	for (size_t i = 0; src == SQLITE_OK && i < n &&
	     (int)i < sqlite3_bind_parameter_count(s); i++)
		src = p[i].type == P_REAL ? gb_state_bind_double(s, (int)i + 1, p[i].num) :
		      p[i].type == P_INT ? gb_state_bind_int(s, (int)i + 1, (int64_t)p[i].num) :
		      gb_state_bind_text(s, (int)i + 1, p[i].text);
	return src;
}

/*
 * Run "<verb> <rest>" once with parameters ?1.. from [p]: with [dry] verb
 * is "SELECT count(*) FROM" and OUT *n the rows it matches, else "DELETE
 * FROM" and *n the rows deleted.
 */
static gb_err_t count_or_delete(gb_state_t *st, bool dry, const char *rest,
				const struct param *p, size_t np, long *n,
				const char *what, gb_error_t *err)
{
	char sql[512];
	sqlite3_stmt *s = NULL;
	gb_err_t rc = GB_E_OK;
	int src;

	snprintf(sql, sizeof(sql), "%s %s", dry ? "SELECT count(*) FROM" : "DELETE FROM",
		 rest);
	src = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (src == SQLITE_OK)
		src = bind_params(s, p, np);
	if (src == SQLITE_OK)
		src = sqlite3_step(s);
	if (src == SQLITE_ROW && dry)
		*n = (long)sqlite3_column_int64(s, 0);
	else if (src == SQLITE_DONE && !dry)
		*n = (long)sqlite3_changes(st->db);
	else
		rc = gb_state_sqlerr(st, src, err, "%s", what);
	sqlite3_finalize(s);
	return rc;
}

/* Run [sql] (no rows) with parameters ?1.. from [p]. */
static gb_err_t exec1(gb_state_t *st, const char *sql, const struct param *p, size_t np,
		      const char *what, gb_error_t *err)
{
	sqlite3_stmt *s = NULL;
	gb_err_t rc = GB_E_OK;
	int src;

	src = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (src == SQLITE_OK)
		src = bind_params(s, p, np);
	if (src == SQLITE_OK)
		src = sqlite3_step(s);
	if (src != SQLITE_DONE)
		rc = gb_state_sqlerr(st, src, err, "%s", what);
	sqlite3_finalize(s);
	return rc;
}

/*****************************************************************************
 *  Prune
 *****************************************************************************/

/*
 * The requests whose whole story ended before ?1: final states only (the
 * CHECK's names of GB_RSTATE_DONE .. GB_RSTATE_CANCELLED), nothing they
 * launched alive or closed since, no event since (a reconcile action on
 * one of its nodes, a late Slurm update).  created_at <= updated_at, so
 * the created_at bound only lets the index narrow the scan.
 */
static const char doomed_sql[] =
	"INSERT INTO temp.gb_prune (id) "
	"SELECT r.id FROM requests r "
	"WHERE r.created_at < ?1 AND r.updated_at < ?1 "
	"AND r.state IN ('done', 'failed', 'denied', 'expired', 'cancelled') "
	"AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.request_id = r.id "
	"  AND (i.state IN ('pending', 'running', 'terminating') "
	"       OR i.terminated_at >= ?1)) "
	"AND NOT EXISTS (SELECT 1 FROM events e WHERE e.request_id = r.id "
	"  AND e.at >= ?1) "
	"ORDER BY r.created_at, r.id LIMIT ?2";

#define OF_DOOMED "WHERE request_id IN (SELECT id FROM temp.gb_prune)"

static gb_err_t prune_rows(gb_state_t *st, double cutoff, bool dry,
			   struct gb_state_prune_counts *c, gb_error_t *err)
{
	/* children first, requests last; then the global events */
	const struct { const char *rest; long *n; } steps[] = {
		{ "request_nodes " OF_DOOMED, &c->request_nodes },
		{ "plans " OF_DOOMED, &c->plans },
		{ "attempts " OF_DOOMED, &c->attempts },
		{ "approvals " OF_DOOMED, &c->approvals },
		{ "events " OF_DOOMED, &c->events },
		{ "instances " OF_DOOMED, &c->instances },
		{ "requests WHERE id IN (SELECT id FROM temp.gb_prune)", &c->requests },
		{ "events WHERE request_id IS NULL AND at < ?1", &c->global_events },
	};
	const struct param at = { P_REAL, NULL, cutoff };
	gb_err_t rc = GB_E_OK;

	for (size_t i = 0; rc == GB_E_OK && i < GB_ARRAY_LEN(steps); i++)
		rc = count_or_delete(st, dry, steps[i].rest, &at, 1, steps[i].n,
				     "pruning the state file", err);
	return rc;
}

gb_err_t gb_state_prune(gb_state_t *st, double cutoff, size_t limit, bool dry_run,
			struct gb_state_prune_counts *out, gb_error_t *err)
{
	const struct param p[] = {
		{ P_REAL, NULL, cutoff },
		{ P_INT, NULL, limit ? (double)limit : -1 },	/* LIMIT -1: all */
	};
	struct gb_state_prune_counts c = { 0 };
	bool own = false;
	gb_err_t rc;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!(cutoff > 0) || !isfinite(cutoff))
		return gb_errorf(err, GB_E_INVALID, "pruning: invalid cutoff %g", cutoff);
	/* A dry run writes only the temp schema: no lock on the file. */
	if (!dry_run && (rc = gb_state_tx_enter(st, &own, "pruning", err)))
		return rc;
	rc = exec1(st, "CREATE TEMP TABLE IF NOT EXISTS gb_prune "
		       "(id TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID", NULL, 0,
		   "pruning: temporary table", err);
	if (rc == GB_E_OK)
		rc = exec1(st, "DELETE FROM temp.gb_prune", NULL, 0, "pruning", err);
	if (rc == GB_E_OK)
		rc = exec1(st, doomed_sql, p, GB_ARRAY_LEN(p),
			   "pruning: finding finished requests", err);
	if (rc == GB_E_OK)
		rc = prune_rows(st, cutoff, dry_run, &c, err);
	/* empty again: the ids do not outlive the call */
	if (rc == GB_E_OK)
		rc = exec1(st, "DELETE FROM temp.gb_prune", NULL, 0, "pruning", err);
	if (!dry_run)
		rc = gb_state_tx_end(st, own, rc, err);
	if (rc == GB_E_OK && out)
		*out = c;
	return rc;
}

/*****************************************************************************
 *  Forget capacity and quota memory
 *****************************************************************************/

/*
 * ?2 NULL: every AZ (and a region's '' rows with them); ?3 NULL: every type.
 * capacity_stats: every capacity kind of the pool.
 */
#define IN_SCOPE "WHERE region = ?1 AND (?2 IS NULL OR az = ?2) " \
		 "AND (?3 IS NULL OR instance_type = ?3)"

gb_err_t gb_state_memory_forget(gb_state_t *st, const char *region, const char *az,
				const char *instance_type, unsigned what,
				struct gb_state_forget_counts *out, gb_error_t *err)
{
	struct gb_state_forget_counts c = { 0 };
	struct param p[3] = { { P_TEXT, region, 0 }, { P_TEXT, NULL, 0 },
			      { P_TEXT, instance_type, 0 } };
	long marks = 0;
	bool own = false;
	gb_err_t rc = GB_E_OK;

	if (out)
		memset(out, 0, sizeof(*out));
	if (az && !*az)
		az = NULL;
	if (!region || !*region || !what ||
	    (what & ~(unsigned)(GB_STATE_FORGET_CAPACITY | GB_STATE_FORGET_QUOTA)))
		return gb_errorf(err, GB_E_INVALID, "forgetting memory: a region and what to forget are required");
	if ((what & GB_STATE_FORGET_QUOTA) && (az || instance_type))
		return gb_errorf(err, GB_E_INVALID,
				 "forgetting quota memory: quotas are per region (no AZ, no instance type)");
	p[1].text = az;
	if ((rc = gb_state_tx_enter(st, &own, "forgetting memory", err)))
		return rc;
	if (what & GB_STATE_FORGET_CAPACITY)
		rc = count_or_delete(st, false, "capacity_stats " IN_SCOPE, p,
				     GB_ARRAY_LEN(p), &c.capacity,
				     "forgetting capacity memory", err);
	if (rc == GB_E_OK && (what & GB_STATE_FORGET_CAPACITY))
		rc = count_or_delete(st, false, "offerings_cache " IN_SCOPE, p,
				     GB_ARRAY_LEN(p), &c.offerings,
				     "forgetting cached offerings", err);
	if (rc == GB_E_OK && (what & GB_STATE_FORGET_CAPACITY))
		rc = count_or_delete(st, false, "capacity_reservations " IN_SCOPE, p,
				     GB_ARRAY_LEN(p), &c.reservations,
				     "forgetting cached reservations", err);
	/* what is left of the region's answer is incomplete: ask again */
	if (rc == GB_E_OK && (what & GB_STATE_FORGET_CAPACITY))
		rc = count_or_delete(st, false, "capacity_reservations_fetched WHERE region = ?1",
				     p, 1, &marks, "forgetting cached reservations", err);
	if (rc == GB_E_OK && (what & GB_STATE_FORGET_QUOTA))
		rc = count_or_delete(st, false, "quota_stats WHERE region = ?1", p, 1,
				     &c.quotas, "forgetting quota memory", err);
	rc = gb_state_tx_end(st, own, rc, err);
	if (rc == GB_E_OK && out)
		*out = c;
	return rc;
}

/*****************************************************************************
 *  VACUUM
 *****************************************************************************/

static int64_t file_size(const char *path, const char *suffix)
{
	char p[4096];
	struct stat sb;

	snprintf(p, sizeof(p), "%s%s", path, suffix);
	return stat(p, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

gb_err_t gb_state_vacuum(gb_state_t *st, struct gb_state_vacuum_info *out,
			 gb_error_t *err)
{
	struct gb_state_vacuum_info v = { 0 };
	double t0 = gb_time_mono();
	char *msg = NULL;
	int src, log = 0, ckpt = 0;

	if (out)
		memset(out, 0, sizeof(*out));
	if (st->flags & GB_STATE_RDONLY)
		return gb_errorf(err, GB_E_INVALID, "vacuum: state file %s is open read-only",
				 st->path);
	if (st->in_tx)
		return gb_errorf(err, GB_E_INVALID,
				 "vacuum: a transaction on %s is open (VACUUM runs outside one)",
				 st->path);
	v.db_before = file_size(st->path, "");
	v.wal_before = file_size(st->path, "-wal");
	/*
	 * VACUUM takes the write lock (waiting up to the busy timeout for
	 * the current writer) and holds it while it rewrites the file into
	 * the WAL; readers keep their snapshot meanwhile.
	 */
	src = sqlite3_exec(st->db, "VACUUM", NULL, NULL, &msg);
	if (src != SQLITE_OK) {
		gb_err_t rc = gb_state_sqlerr(st, src, err, "vacuum of %s%s%s", st->path,
					      msg ? ": " : "", msg ? msg : "");

		sqlite3_free(msg);
		return rc;
	}
	/*
	 * In WAL mode the file shrinks only when the WAL is copied back:
	 * TRUNCATE waits (busy handler) for readers of older snapshots and
	 * empties the WAL.  A reader that stays is not an error: a later
	 * checkpoint finishes the job.
	 */
	src = sqlite3_wal_checkpoint_v2(st->db, "main", SQLITE_CHECKPOINT_TRUNCATE, &log,
					&ckpt);
	if (src != SQLITE_OK && (src & 0xff) != SQLITE_BUSY)
		return gb_state_sqlerr(st, src, err, "checkpoint of %s after vacuum", st->path);
	v.checkpointed = src == SQLITE_OK;
	v.db_after = file_size(st->path, "");
	v.wal_after = file_size(st->path, "-wal");
	v.seconds = gb_time_mono() - t0;
	gb_log_info("state_vacuum file=%s bytes_before=%lld bytes_after=%lld wal_after=%lld checkpointed=%s elapsed_s=%.2f",
		    st->path, (long long)v.db_before, (long long)v.db_after,
		    (long long)v.wal_after, v.checkpointed ? "yes" : "no", v.seconds);
	if (out)
		*out = v;
	return GB_E_OK;
}
