/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_state_schema.c - the state file's schema, one migration script per version
 *
 * gb_state_migrations[v] takes a file from version v-1 to v.  gb_state_open()
 * runs each missing step in its own IMMEDIATE transaction and sets PRAGMA
 * user_version = v inside that same transaction, so a crash mid-migration
 * leaves the file at v-1, never half-way.  Never edit a released step: add
 * the next one (and bump GB_STATE_SCHEMA_VERSION).  doc/state-schema.md
 * describes the tables for administrators; keep it in step.
 *
 * Constraints the tables rely on (SQLite >= 3.31, configure's minimum):
 *  - enumerated columns are readable text with a CHECK listing the values
 *    (the names of gb_state.h's enums, generated from its GB_*_MAP tables,
 *    byte for byte the text version 1 was released with), so the stock
 *    sqlite3 shell needs no decoder and a hand edit with a typo fails loudly;
 *  - times are REAL epoch seconds (UTC), 0 meaning "not yet/never";
 *  - a NULL AZ is stored as '' in the two keyed caches, because a NULL in a
 *    PRIMARY KEY column would not be unique (capacity_reservations has no
 *    region-level row: its az is always an AZ).
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gb_state_int.h"

static const char schema_v1[] =
	"PRAGMA application_id = 1195537268;\n"	/* GB_STATE_APPLICATION_ID */

	/* The durable queue: one row per (nodeset, job) of a Slurm call. */
	"CREATE TABLE requests (\n"
	"  id            TEXT PRIMARY KEY NOT NULL\n"
	"                CHECK (length(id) = 16 AND id NOT GLOB '*[^0-9a-f]*'),\n"
	"  kind          TEXT NOT NULL CHECK (kind IN\n"
	"                " GB_STATE_SQL_IN(GB_REQUEST_KIND_MAP) "),\n"
	"  state         TEXT NOT NULL CHECK (state IN\n"
	"                " GB_STATE_SQL_IN(GB_REQUEST_STATE_MAP) "),\n"
	"  nodeset       TEXT,\n"
	"  job_id        INTEGER NOT NULL DEFAULT 0 CHECK (job_id >= 0),\n"
	"  nodes         TEXT,\n"
	"  node_count    INTEGER NOT NULL DEFAULT 0 CHECK (node_count >= 0),\n"
	"  instance_type TEXT,\n"
	"  home_region   TEXT,\n"
	"  strategy      TEXT,\n"
	"  input         TEXT,\n"
	"  created_at    REAL NOT NULL,\n"
	"  updated_at    REAL NOT NULL,\n"
	"  not_before    REAL NOT NULL DEFAULT 0,\n"
	"  expires_at    REAL NOT NULL DEFAULT 0,\n"
	"  worker_pid    INTEGER NOT NULL DEFAULT 0,\n"
	"  claims        INTEGER NOT NULL DEFAULT 0 CHECK (claims >= 0),\n"
	"  result        TEXT NOT NULL DEFAULT 'none' CHECK (result IN\n"
	"                " GB_STATE_SQL_IN(GB_REQUEST_RESULT_MAP) "),\n"
	"  launched      INTEGER NOT NULL DEFAULT 0 CHECK (launched >= 0),\n"
	"  reason        TEXT\n"
	");\n"
	/* claim: state = 'queued' AND not_before <= now ORDER BY created_at */
	"CREATE INDEX requests_claim ON requests (state, not_before, created_at);\n"
	"CREATE INDEX requests_created ON requests (created_at);\n"

	/*
	 * The expanded node names of each request, so "requests of node X"
	 * is an index lookup instead of a hostlist match per row.
	 */
	"CREATE TABLE request_nodes (\n"
	"  node       TEXT NOT NULL,\n"
	"  request_id TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,\n"
	"  PRIMARY KEY (node, request_id)\n"
	") WITHOUT ROWID;\n"
	"CREATE INDEX request_nodes_request ON request_nodes (request_id);\n"

	"CREATE TABLE plans (\n"
	"  request_id TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,\n"
	"  version    INTEGER NOT NULL CHECK (version >= 1),\n"
	"  planner    TEXT NOT NULL,\n"
	"  status     TEXT NOT NULL CHECK (status IN ('used', 'rejected', 'fallback')),\n"
	"  reason     TEXT,\n"
	"  rationale  TEXT,\n"
	"  body       TEXT,\n"
	"  created_at REAL NOT NULL,\n"
	"  PRIMARY KEY (request_id, version)\n"
	");\n"

	/* AUTOINCREMENT: an attempt id is never reused, even after pruning. */
	"CREATE TABLE attempts (\n"
	"  id            INTEGER PRIMARY KEY AUTOINCREMENT,\n"
	"  request_id    TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,\n"
	"  seq           INTEGER NOT NULL CHECK (seq >= 0),\n"
	"  region        TEXT NOT NULL,\n"
	"  az            TEXT,\n"
	"  subnet        TEXT,\n"
	"  instance_type TEXT NOT NULL,\n"
	"  min_count     INTEGER NOT NULL CHECK (min_count >= 0),\n"
	"  asked         INTEGER NOT NULL CHECK (asked >= min_count),\n"
	"  got           INTEGER NOT NULL DEFAULT 0 CHECK (got >= 0),\n"
	/* EC2 ClientToken: up to 64 ASCII characters */
	"  client_token  TEXT NOT NULL UNIQUE CHECK (length(client_token)\n"
	"                BETWEEN 1 AND 64 AND client_token NOT GLOB '*[^ -~]*'),\n"
	"  state         TEXT NOT NULL CHECK (state IN\n"
	"                " GB_STATE_SQL_IN(GB_ATTEMPT_STATE_MAP) "),\n"
	"  error_code    TEXT,\n"
	"  error_class   TEXT,\n"
	"  message       TEXT,\n"
	"  started_at    REAL NOT NULL,\n"
	"  finished_at   REAL NOT NULL DEFAULT 0,\n"
	"  latency       REAL NOT NULL DEFAULT 0\n"
	");\n"
	"CREATE INDEX attempts_request ON attempts (request_id, seq);\n"
	"CREATE INDEX attempts_state ON attempts (state);\n"

	/*
	 * Key as the ancestor's DynamoDB records: (request_id,
	 * "region#instance_id").  No foreign key to requests: the cloud's
	 * tags are the ground truth, and reconcile must be able to record an
	 * instance whose request this file never saw (a restored backup).
	 */
	"CREATE TABLE instances (\n"
	"  request_id         TEXT NOT NULL,\n"
	"  region_instance_id TEXT NOT NULL\n"
	"                     CHECK (region_instance_id = region || '#' || instance_id),\n"
	"  region             TEXT NOT NULL\n"
	"                     CHECK (length(region) > 0 AND instr(region, '#') = 0),\n"
	"  instance_id        TEXT NOT NULL CHECK (length(instance_id) > 0),\n"
	"  node               TEXT,\n"
	"  az                 TEXT,\n"
	"  subnet             TEXT,\n"
	"  instance_type      TEXT,\n"
	"  private_ip         TEXT,\n"
	"  public_ip          TEXT,\n"
	"  state              TEXT NOT NULL CHECK (state IN\n"
	"                     " GB_STATE_SQL_IN(GB_INSTANCE_STATE_MAP) "),\n"
	"  attempt_id         INTEGER NOT NULL DEFAULT 0,\n"
	"  launched_at        REAL NOT NULL,\n"
	"  terminated_at      REAL NOT NULL DEFAULT 0,\n"
	"  reason             TEXT,\n"
	"  PRIMARY KEY (request_id, region_instance_id)\n"
	");\n"
	/* alive by node: node = ? AND state IN ('pending', ...) */
	"CREATE INDEX instances_node ON instances (node, state);\n"
	"CREATE INDEX instances_region ON instances (region, state);\n"
	"CREATE INDEX instances_instance_id ON instances (instance_id);\n"

	"CREATE TABLE approvals (\n"
	"  request_id   TEXT PRIMARY KEY NOT NULL\n"
	"               REFERENCES requests (id) ON DELETE CASCADE,\n"
	"  state        TEXT NOT NULL CHECK (state IN\n"
	"               " GB_STATE_SQL_IN(GB_APPROVAL_STATE_MAP) "),\n"
	"  why          TEXT,\n"
	"  requested_at REAL NOT NULL,\n"
	"  expires_at   REAL NOT NULL DEFAULT 0,\n"
	"  decided_by   TEXT,\n"
	"  decided_uid  INTEGER NOT NULL DEFAULT -1,\n"
	"  decided_at   REAL NOT NULL DEFAULT 0,\n"
	"  comment      TEXT\n"
	");\n"
	"CREATE INDEX approvals_state ON approvals (state, requested_at);\n"

	/* The decision log; request_id is free text (global events: NULL). */
	"CREATE TABLE events (\n"
	"  id         INTEGER PRIMARY KEY AUTOINCREMENT,\n"
	"  at         REAL NOT NULL,\n"
	"  request_id TEXT,\n"
	"  kind       TEXT NOT NULL CHECK (length(kind) > 0),\n"
	"  detail     TEXT\n"
	");\n"
	"CREATE INDEX events_request ON events (request_id, id);\n"

	"CREATE TABLE offerings_cache (\n"
	"  region        TEXT NOT NULL,\n"
	"  az            TEXT NOT NULL DEFAULT '',\n"
	"  instance_type TEXT NOT NULL,\n"
	"  offered       INTEGER NOT NULL CHECK (offered IN (0, 1)),\n"
	"  fetched_at    REAL NOT NULL,\n"
	"  PRIMARY KEY (region, az, instance_type)\n"
	") WITHOUT ROWID;\n"

	/* Values as of updated_at; readers decay them to "now". */
	"CREATE TABLE capacity_stats (\n"
	"  region          TEXT NOT NULL,\n"
	"  az              TEXT NOT NULL DEFAULT '',\n"
	"  instance_type   TEXT NOT NULL,\n"
	"  asked           REAL NOT NULL DEFAULT 0 CHECK (asked >= 0),\n"
	"  got             REAL NOT NULL DEFAULT 0 CHECK (got >= 0),\n"
	"  ice             REAL NOT NULL DEFAULT 0 CHECK (ice >= 0),\n"
	"  failures        REAL NOT NULL DEFAULT 0 CHECK (failures >= 0),\n"
	"  last_ice_at     REAL NOT NULL DEFAULT 0,\n"
	"  last_success_at REAL NOT NULL DEFAULT 0,\n"
	"  updated_at      REAL NOT NULL,\n"
	"  PRIMARY KEY (region, az, instance_type)\n"
	") WITHOUT ROWID;\n";

/*
 * Version 2: capacity memory that keeps what a visit proves apart (levels
 * measured when a pool ran dry, lower bounds when it gave all it was asked),
 * and quota memory per (region, quota): the limits EC2's quota refusals
 * revealed.  Values as of updated_at, like capacity_stats.
 */
static const char schema_v2[] =
	"ALTER TABLE capacity_stats ADD COLUMN level_sum REAL NOT NULL DEFAULT 0 CHECK (level_sum >= 0);\n"
	"ALTER TABLE capacity_stats ADD COLUMN level_n REAL NOT NULL DEFAULT 0 CHECK (level_n >= 0);\n"
	"ALTER TABLE capacity_stats ADD COLUMN floor_sum REAL NOT NULL DEFAULT 0 CHECK (floor_sum >= 0);\n"
	"ALTER TABLE capacity_stats ADD COLUMN floor_n REAL NOT NULL DEFAULT 0 CHECK (floor_n >= 0);\n"

	"CREATE TABLE quota_stats (\n"
	"  region          TEXT NOT NULL,\n"
	"  quota           TEXT NOT NULL CHECK (length(quota) > 0),\n"
	"  code            TEXT NOT NULL CHECK (length(code) > 0),\n"
	"  limit_sum       REAL NOT NULL DEFAULT 0 CHECK (limit_sum >= 0),\n"
	"  limit_n         REAL NOT NULL DEFAULT 0 CHECK (limit_n >= 0),\n"
	"  refusals        REAL NOT NULL DEFAULT 0 CHECK (refusals >= 0),\n"
	"  last_refusal_at REAL NOT NULL DEFAULT 0,\n"
	"  updated_at      REAL NOT NULL,\n"
	"  PRIMARY KEY (region, quota)\n"
	") WITHOUT ROWID;\n";

/*
 * Version 3: capacity kinds, the capacity ladder (GB_CAPACITY_KIND_MAP).
 * Capacity memory is kept per kind, so that a spot refusal does not make
 * the on-demand pool of the same AZ look dry: the kind joins the primary
 * key of capacity_stats, which SQLite cannot change in place, so the table
 * is rebuilt (https://sqlite.org/lang_altertable.html, "Making Other Kinds
 * Of Table Schema Changes": create the new table, copy, drop the old one,
 * rename), every column and CHECK of versions 1 and 2 kept.  Rows of
 * older files are on-demand: it is all gpuburst launched before.
 * Attempts and instances say which kind a launch used and which
 * reservation (or resource group) it targeted; capacity_reservations
 * caches DescribeCapacityReservations.
 */
#define CAPACITY_IN "CHECK (capacity IN\n" \
	"                  " GB_STATE_SQL_IN(GB_CAPACITY_KIND_MAP) ")"

static const char schema_v3[] =
	"CREATE TABLE capacity_stats_v3 (\n"
	"  region          TEXT NOT NULL,\n"
	"  az              TEXT NOT NULL DEFAULT '',\n"
	"  instance_type   TEXT NOT NULL,\n"
	"  capacity        TEXT NOT NULL DEFAULT 'on-demand' " CAPACITY_IN ",\n"
	"  asked           REAL NOT NULL DEFAULT 0 CHECK (asked >= 0),\n"
	"  got             REAL NOT NULL DEFAULT 0 CHECK (got >= 0),\n"
	"  ice             REAL NOT NULL DEFAULT 0 CHECK (ice >= 0),\n"
	"  failures        REAL NOT NULL DEFAULT 0 CHECK (failures >= 0),\n"
	"  last_ice_at     REAL NOT NULL DEFAULT 0,\n"
	"  last_success_at REAL NOT NULL DEFAULT 0,\n"
	"  updated_at      REAL NOT NULL,\n"
	"  level_sum       REAL NOT NULL DEFAULT 0 CHECK (level_sum >= 0),\n"
	"  level_n         REAL NOT NULL DEFAULT 0 CHECK (level_n >= 0),\n"
	"  floor_sum       REAL NOT NULL DEFAULT 0 CHECK (floor_sum >= 0),\n"
	"  floor_n         REAL NOT NULL DEFAULT 0 CHECK (floor_n >= 0),\n"
	"  PRIMARY KEY (region, az, instance_type, capacity)\n"
	") WITHOUT ROWID;\n"
	"INSERT INTO capacity_stats_v3 (region, az, instance_type, capacity,\n"
	"  asked, got, ice, failures, last_ice_at, last_success_at, updated_at,\n"
	"  level_sum, level_n, floor_sum, floor_n)\n"
	"  SELECT region, az, instance_type, 'on-demand',\n"
	"  asked, got, ice, failures, last_ice_at, last_success_at, updated_at,\n"
	"  level_sum, level_n, floor_sum, floor_n FROM capacity_stats;\n"
	"DROP TABLE capacity_stats;\n"
	"ALTER TABLE capacity_stats_v3 RENAME TO capacity_stats;\n"

	"ALTER TABLE attempts ADD COLUMN\n"
	"  capacity        TEXT NOT NULL DEFAULT 'on-demand' " CAPACITY_IN ";\n"
	"ALTER TABLE attempts ADD COLUMN capacity_target TEXT;\n"
	"ALTER TABLE instances ADD COLUMN\n"
	"  capacity        TEXT NOT NULL DEFAULT 'on-demand' " CAPACITY_IN ";\n"
	"ALTER TABLE instances ADD COLUMN capacity_target TEXT;\n"

	/* One row per reservation EC2 described, counted down by launches. */
	"CREATE TABLE capacity_reservations (\n"
	"  region        TEXT NOT NULL,\n"
	"  id            TEXT NOT NULL,\n"
	"  instance_type TEXT NOT NULL,\n"
	"  az            TEXT NOT NULL,\n"
	"  kind          TEXT NOT NULL CHECK (kind IN\n"
	"                " GB_STATE_SQL_IN(GB_RESERVATION_KIND_MAP) "),\n"
	"  state         TEXT NOT NULL,\n"
	"  match         TEXT NOT NULL CHECK (match IN\n"
	"                " GB_STATE_SQL_IN(GB_RESERVATION_MATCH_MAP) "),\n"
	"  total         INTEGER NOT NULL CHECK (total >= 0),\n"
	"  available     INTEGER NOT NULL CHECK (available >= 0),\n"
	"  start_at      REAL NOT NULL DEFAULT 0,\n"
	"  end_at        REAL NOT NULL DEFAULT 0,\n"
	"  fetched_at    REAL NOT NULL,\n"
	"  PRIMARY KEY (region, id)\n"
	") WITHOUT ROWID;\n"
	/* When each region was last described: an answer of none is news too */
	"CREATE TABLE capacity_reservations_fetched (\n"
	"  region        TEXT NOT NULL PRIMARY KEY,\n"
	"  fetched_at    REAL NOT NULL\n"
	") WITHOUT ROWID;\n";

/*
 * Version 4: the instance's side (gpuburst-node).  An instance record keeps
 * the gpuburst:agent tag its agent wrote on it, as reconcile last listed
 * it, and when reconcile's NOTICE acted on a spot interruption or a failed
 * GPU check of it (0: never): the mark that makes NOTICE once per instance
 * across passes and processes.  Older records have neither.
 */
static const char schema_v4[] =
	"ALTER TABLE instances ADD COLUMN agent TEXT;\n"
	"ALTER TABLE instances ADD COLUMN noticed_at REAL NOT NULL DEFAULT 0;\n";

/*
 * Version 5: approvals at submit.  A job held by job_submit/gpuburst has a
 * request (nodes NULL) from before it has nodes; its requests are found by
 * job id (gb_request_filter.job_id) when it is synced, decided and resumed.
 */
static const char schema_v5[] =
	"CREATE INDEX requests_job ON requests (job_id) WHERE job_id > 0;\n";

/*
 * Version 6: spend.  A request for a job records whose job it was (the
 * job's user, account and partition as Slurm reported them when the
 * worker launched for it), so that cost is attributed from the state
 * file alone, even after Slurm forgot the job.  NULL: not known (older
 * requests, power-ups without a job).
 */
static const char schema_v6[] =
	"ALTER TABLE requests ADD COLUMN job_user TEXT;\n"
	"ALTER TABLE requests ADD COLUMN job_account TEXT;\n"
	"ALTER TABLE requests ADD COLUMN job_partition TEXT;\n";

/*
 * Version 7: spot prices.  The price of each Spot pool (region, AZ, type)
 * as DescribeSpotPriceHistory last answered with StartTime "now" (the
 * price in effect), for cost and estimates: seen_at is EC2's timestamp,
 * when that price took effect.  spot_prices_fetched says when each
 * (region, type) was last asked for, so that a type EC2 has no pool of
 * is not asked again every pass.
 */
static const char schema_v7[] =
	"CREATE TABLE spot_prices (\n"
	"  region        TEXT NOT NULL,\n"
	"  az            TEXT NOT NULL CHECK (length(az) > 0),\n"
	"  instance_type TEXT NOT NULL,\n"
	"  usd_per_hour  REAL NOT NULL CHECK (usd_per_hour > 0),\n"
	"  seen_at       REAL NOT NULL,\n"
	"  fetched_at    REAL NOT NULL,\n"
	"  PRIMARY KEY (region, az, instance_type)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE spot_prices_fetched (\n"
	"  region        TEXT NOT NULL,\n"
	"  instance_type TEXT NOT NULL,\n"
	"  fetched_at    REAL NOT NULL,\n"
	"  PRIMARY KEY (region, instance_type)\n"
	") WITHOUT ROWID;\n";

/*
 * Version 8: runs.  The last run of each periodic job (a full reconcile
 * pass, a cheap one), one row each, replaced by the next: when it started
 * and finished, whether it completed, how many actions it took and how
 * many failed, and its findings by action kind (JSON), for the metrics
 * and `gpuburstctl why` after a restart.
 */
static const char schema_v8[] =
	"CREATE TABLE runs (\n"
	"  name        TEXT NOT NULL PRIMARY KEY,\n"
	"  started_at  REAL NOT NULL,\n"
	"  finished_at REAL NOT NULL CHECK (finished_at >= started_at),\n"
	"  ok          INTEGER NOT NULL CHECK (ok IN (0, 1)),\n"
	"  actions     INTEGER NOT NULL CHECK (actions >= 0),\n"
	"  failed      INTEGER NOT NULL CHECK (failed >= 0),\n"
	"  detail      TEXT\n"
	") WITHOUT ROWID;\n";

/*
 * Version 9: the CHECK lists as comparisons.  SQLite checks "col IN ('a',
 * 'b', 'c')" of more than two values by building a temporary index of the
 * list for every row it writes: three of them for a request row, which
 * made them most of the cost of writing one (a call of 10000 one-node
 * jobs: 2.4 of 2.4 G instructions, of which 1.4 G were the temporary
 * indexes; bench/README.md).  "(col = 'a' OR col = 'b' OR col = 'c')"
 * accepts the same values, NULL included, for a few comparisons.  Nothing
 * on disk changes but the tables' text, so the step edits that text the
 * way https://sqlite.org/lang_altertable.html allows for a CHECK change
 * (writable_schema, then schema_version + 1, in the step's transaction)
 * instead of rebuilding six tables.  Its SQL part is empty: see
 * checks_as_comparisons() below.
 */
static const char schema_v9[] = "";

/*
 * "col IN <ws> ( 'a', 'b', ... )" at [p] (p at the column name), of more
 * than two string literals: RET the end of the list (after its ")") with
 * the replacement appended to [out], else NULL and [out] untouched.
 */
static const char *in_list_as_or(const char *p, struct gb_buf *out)
{
	const char *col = p, *q, *lit[32];
	size_t col_len, lit_len[32], n = 0;

	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	col_len = (size_t)(p - col);
	if (col_len == 3 && strncasecmp(col, "NOT", 3) == 0)
		return NULL;
	q = p;
	while (isspace((unsigned char)*q))
		q++;
	if (q == p || strncasecmp(q, "IN", 2) != 0)
		return NULL;
	q += 2;
	while (isspace((unsigned char)*q))
		q++;
	if (*q++ != '(')
		return NULL;
	for (;;) {
		while (isspace((unsigned char)*q))
			q++;
		if (*q != '\'' || n == GB_ARRAY_LEN(lit))
			return NULL;
		lit[n] = q++;
		while (*q && !(*q == '\'' && q[1] != '\''))
			q += *q == '\'' ? 2 : 1;
		if (*q++ != '\'')
			return NULL;
		lit_len[n] = (size_t)(q - lit[n]);
		n++;
		while (isspace((unsigned char)*q))
			q++;
		if (*q == ')')
			break;
		if (*q++ != ',')
			return NULL;
	}
	if (n <= 2)
		return NULL;
	gb_buf_putc(out, '(');
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			gb_buf_puts(out, " OR ");
		gb_buf_append(out, col, col_len);
		gb_buf_puts(out, " = ");
		gb_buf_append(out, lit[i], lit_len[i]);
	}
	gb_buf_putc(out, ')');
	return q + 1;
}

char *gb_state_checks_as_or(const char *sql)
{
	struct gb_buf out = GB_BUF_INIT;
	const char *p = sql;
	bool word = false;

	while (*p) {
		const char *end = NULL;

		if (*p == '\'') {		/* a literal: copy it whole */
			const char *q = p + 1;

			while (*q && !(*q == '\'' && q[1] != '\''))
				q += *q == '\'' ? 2 : 1;
			if (*q)
				q++;
			gb_buf_append(&out, p, (size_t)(q - p));
			p = q;
			word = false;
			continue;
		}
		if (!word && (isalpha((unsigned char)*p) || *p == '_'))
			end = in_list_as_or(p, &out);
		if (end) {
			p = end;
			word = false;
			continue;
		}
		word = isalnum((unsigned char)*p) || *p == '_';
		gb_buf_putc(&out, *p++);
	}
	return gb_buf_steal(&out);
}

static gb_err_t checks_as_comparisons(gb_state_t *st, gb_error_t *err)
{
	sqlite3_stmt *list = NULL, *set = NULL;
	int version = 0, defensive = 0, src;
	gb_err_t rc = GB_E_OK;
	char sql[64];

	sqlite3_db_config(st->db, SQLITE_DBCONFIG_DEFENSIVE, -1, &defensive);
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_DEFENSIVE, 0, NULL);
	src = sqlite3_prepare_v2(st->db, "PRAGMA schema_version", -1, &list, NULL);
	if (src == SQLITE_OK && (src = sqlite3_step(list)) == SQLITE_ROW) {
		version = sqlite3_column_int(list, 0);
		src = SQLITE_OK;
	}
	sqlite3_finalize(list);
	list = NULL;
	if (src == SQLITE_OK)
		src = sqlite3_exec(st->db, "PRAGMA writable_schema = ON", NULL, NULL, NULL);
	if (src == SQLITE_OK)
		src = sqlite3_prepare_v2(st->db,
					 "SELECT name, sql FROM sqlite_master "
					 "WHERE type = 'table' AND sql IS NOT NULL", -1,
					 &list, NULL);
	if (src == SQLITE_OK)
		src = sqlite3_prepare_v2(st->db,
					 "UPDATE sqlite_master SET sql = ?1 "
					 "WHERE type = 'table' AND name = ?2", -1, &set, NULL);
	while (src == SQLITE_OK && (src = sqlite3_step(list)) == SQLITE_ROW) {
		const char *old = (const char *)sqlite3_column_text(list, 1);
		char *new = gb_state_checks_as_or(old);

		src = SQLITE_OK;
		if (!new) {
			src = SQLITE_NOMEM;
			break;
		}
		if (strcmp(new, old) != 0) {
			sqlite3_bind_text(set, 1, new, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(set, 2, (const char *)sqlite3_column_text(list, 0),
					  -1, SQLITE_TRANSIENT);
			if ((src = sqlite3_step(set)) == SQLITE_DONE)
				src = sqlite3_reset(set);
		}
		free(new);
	}
	if (src == SQLITE_DONE)
		src = SQLITE_OK;
	sqlite3_finalize(list);
	sqlite3_finalize(set);
	snprintf(sql, sizeof(sql), "PRAGMA schema_version = %d", version + 1);
	if (src == SQLITE_OK)
		src = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
	if (src != SQLITE_OK)
		rc = gb_state_sqlerr(st, src, err, "migrating %s: the CHECK lists", st->path);
	sqlite3_exec(st->db, "PRAGMA writable_schema = OFF", NULL, NULL, NULL);
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_DEFENSIVE, defensive, NULL);
	/* The new text parses, or the step's transaction is rolled back. */
	if (rc == GB_E_OK &&
	    (src = sqlite3_exec(st->db, "SELECT count(*) FROM sqlite_master", NULL, NULL,
				NULL)) != SQLITE_OK)
		rc = gb_state_sqlerr(st, src, err, "migrating %s: the CHECK lists",
				     st->path);
	return rc;
}

/*
 * Version 10: the queue by index.  A worker claims the oldest runnable
 * request of a family (terminations first, then resumes) and checks the
 * older queued ones of the other family that share its nodes.  With
 * requests_claim (state, not_before, created_at) each claim sorted the
 * whole queue, and a claim of terminations walked every queued resume to
 * find none: a cost per request that grew with the queue.  requests_state
 * (state, created_at) gives the queued rows in claim order, so a claim
 * stops at the first runnable one; requests_queued_term holds only the
 * queued terminations, so looking for one costs as many as there are.
 */
static const char schema_v10[] =
	"DROP INDEX requests_claim;\n"
	"CREATE INDEX requests_state ON requests (state, created_at);\n"
	"CREATE INDEX requests_queued_term ON requests (created_at)\n"
	"  WHERE state = 'queued' AND kind <> 'resume';\n";

/*
 * Version 11: instances by launch time.  The listings show the newest
 * first (ORDER BY launched_at DESC LIMIT n); without an index that sorted
 * every record, 100000 of them after a few weeks of bursts.
 */
static const char schema_v11[] =
	"CREATE INDEX instances_launched ON instances (launched_at);\n";

const char *const gb_state_migrations[GB_STATE_SCHEMA_VERSION + 1] = {
	[0] = NULL,
	[1] = schema_v1,
	[2] = schema_v2,
	[3] = schema_v3,
	[4] = schema_v4,
	[5] = schema_v5,
	[6] = schema_v6,
	[7] = schema_v7,
	[8] = schema_v8,
	[9] = schema_v9,
	[10] = schema_v10,
	[11] = schema_v11,
};

gb_err_t (*const gb_state_migration_steps[GB_STATE_SCHEMA_VERSION + 1])(gb_state_t *,
								   gb_error_t *) = {
	[9] = checks_as_comparisons,
};
