/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_state.c - libstate: open/migrate, queue, records, concurrency
 *
 * Every test works in its own mkdtemp directory, removed afterwards.  The
 * concurrency tests fork workers that use their own handles, as separate
 * gpuburst-resume processes and workers would.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "gb_err.h"
#include "gb_state.h"
#include "gb_state_int.h"	/* statement-cache test only */
#include "gb_str.h"
#include "gb_util.h"
#include "teststate.h"

#define BUSY_MS 30000

/*****************************************************************************
 *  Helpers
 *****************************************************************************/

static int setup(void **state)
{
	return ts_setup(state, "state", "lib/gpuburst/state.db");
}

static gb_state_t *open_ok(const char *path)
{
	gb_state_t *st = NULL;
	gb_error_t e = { 0 };
	gb_err_t rc = gb_state_open(path, 0, BUSY_MS, &st, &e);

	if (rc)
		fail_msg("open %s: %s", path, e.text);
	return st;
}

static char *slurp(const char *path, size_t *len)
{
	char *data = NULL;

	assert_int_equal(gb_file_read(path, 1 << 26, &data, len, NULL),
			 GB_E_OK);
	return data;
}

static void add_req(gb_state_t *st, enum gb_request_kind kind,
		    enum gb_request_state state, const char *nodes,
		    double not_before, char id[GB_REQUEST_ID_LEN + 1])
{
	struct gb_request r = { .id = "" };
	gb_error_t e = { 0 };

	r.kind = kind;
	r.state = state;
	r.nodes = nodes;
	r.node_count = 1;
	r.nodeset = "g5";
	r.instance_type = "g5.xlarge";
	r.home_region = "us-east-1";
	r.not_before = not_before;
	if (gb_state_request_add(st, &r, &e))
		fail_msg("add request: %s", e.text);
	if (id)
		memcpy(id, r.id, GB_REQUEST_ID_LEN + 1);
}

/* Callback sinks: copy what the tests look at (rows are BORROWED). */
struct req_copy {
	int calls;
	char id[GB_REQUEST_ID_LEN + 1];
	char nodes[128];
	char reason[128];
	enum gb_request_state state;
	enum gb_request_kind kind;
	enum gb_request_result result;
	int64_t pid;
	int claims;
	int launched;
	double created_at;
	double not_before;
};

static void req_sink(const struct gb_request *r, void *arg)
{
	struct req_copy *c = arg;

	c->calls++;
	gb_strlcpy(c->id, r->id, sizeof(c->id));
	gb_strlcpy(c->nodes, r->nodes ? r->nodes : "(null)", sizeof(c->nodes));
	gb_strlcpy(c->reason, r->reason ? r->reason : "(null)",
		   sizeof(c->reason));
	c->state = r->state;
	c->kind = r->kind;
	c->result = r->result;
	c->pid = r->worker_pid;
	c->claims = r->claims;
	c->launched = r->launched;
	c->created_at = r->created_at;
	c->not_before = r->not_before;
}

static struct req_copy get_req(gb_state_t *st, const char *id)
{
	struct req_copy c = { 0 };
	gb_error_t e = { 0 };

	if (gb_state_request_get(st, id, req_sink, &c, &e))
		fail_msg("get %s: %s", id, e.text);
	return c;
}

struct id_list {
	struct gb_strv ids;
	int stop_after;		/* 0: never stop */
};

static int req_ids(const struct gb_request *r, void *arg)
{
	struct id_list *l = arg;

	assert_int_equal(gb_strv_add(&l->ids, r->id), GB_E_OK);
	return l->stop_after && (int)l->ids.n >= l->stop_after;
}

static size_t list_n(gb_state_t *st, const struct gb_request_filter *f,
		     struct id_list *l)
{
	gb_error_t e = { 0 };

	gb_strv_free(&l->ids);
	if (gb_state_request_list(st, f, req_ids, l, &e))
		fail_msg("list: %s", e.text);
	return l->ids.n;
}

static long count(gb_state_t *st, int state)
{
	long n = -1;

	assert_int_equal(gb_state_request_count(st, state, &n, NULL), GB_E_OK);
	return n;
}

/* A pid that is certainly not running: a child we reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

/*****************************************************************************
 *  Open, modes, schema
 *****************************************************************************/

static void check_modes(struct ts_fx *f, mode_t mask)
{
	char dir[160], side[200];
	mode_t old = umask(mask);
	struct stat sb;
	gb_state_t *st = open_ok(f->path);

	umask(old);
	snprintf(dir, sizeof(dir), "%s/lib/gpuburst", f->dir);
	assert_int_equal(stat(dir, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0750);
	assert_int_equal(stat(f->path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0640);
	/* SQLite gives -wal/-shm the database file's mode */
	snprintf(side, sizeof(side), "%s-wal", f->path);
	assert_int_equal(stat(side, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0640);
	assert_int_equal(gb_state_schema_version(st), GB_STATE_SCHEMA_VERSION);
	gb_state_close(st);
}

static void test_open_modes_umask022(void **state)
{
	check_modes(*state, 022);
}

static void test_open_modes_umask077(void **state)
{
	check_modes(*state, 077);
}

static void test_open_wal_and_reopen(void **state)
{
	struct ts_fx *f = *state;
	char *a, *b, *mode = NULL;
	size_t alen, blen;
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	char id[GB_REQUEST_ID_LEN + 1];

	f->st = open_ok(f->path);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, id);
	gb_state_close(f->st);
	f->st = NULL;

	/* WAL is recorded in the file header (bytes 18 and 19 are 2) */
	a = slurp(f->path, &alen);
	assert_true(alen >= 100);
	assert_int_equal(a[18], 2);
	assert_int_equal(a[19], 2);
	assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY,
					 NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s,
					    NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	mode = strdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	sqlite3_close(db);
	assert_string_equal(mode, "wal");
	free(mode);

	/* re-open: no migration, no write, the data is there */
	f->st = open_ok(f->path);
	assert_int_equal(gb_state_schema_version(f->st), GB_STATE_SCHEMA_VERSION);
	assert_int_equal(get_req(f->st, id).state, GB_RSTATE_QUEUED);
	gb_state_close(f->st);
	f->st = NULL;
	b = slurp(f->path, &blen);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	free(a);
	free(b);
}

static void set_user_version(const char *path, int v)
{
	char sql[64];
	sqlite3 *db = NULL;

	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

static void test_open_newer_schema(void **state)
{
	struct ts_fx *f = *state;
	char copy[200], *a, *b, *data;
	size_t alen, blen, len;
	gb_state_t *st = NULL;
	gb_error_t e = { 0 };
	FILE *fp;

	f->st = open_ok(f->path);
	gb_state_close(f->st);
	f->st = NULL;
	data = slurp(f->path, &len);
	snprintf(copy, sizeof(copy), "%s/newer.db", f->dir);
	fp = fopen(copy, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
	free(data);
	set_user_version(copy, 99);

	a = slurp(copy, &alen);
	assert_int_equal(gb_state_open(copy, 0, BUSY_MS, &st, &e),
			 GB_E_SCHEMA);
	assert_null(st);
	assert_non_null(strstr(e.text, "has schema version 99"));
	{
		char want[64];

		snprintf(want, sizeof(want), "understands up to %d: upgrade gpuburst",
			 GB_STATE_SCHEMA_VERSION);
		assert_non_null(strstr(e.text, want));
	}
	assert_int_equal(gb_state_open(copy, GB_STATE_RDONLY, BUSY_MS, &st, &e),
			 GB_E_SCHEMA);
	b = slurp(copy, &blen);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);	/* not modified */
	free(a);
	free(b);
}

static void test_open_rdonly(void **state)
{
	struct ts_fx *f = *state;
	char dir[160];
	gb_state_t *st = NULL;
	gb_error_t e = { 0 };
	struct stat sb;
	struct gb_request r = { .id = "", .nodes = "g5-1" };

	/* missing: GB_E_NOTFOUND, nothing created */
	assert_int_equal(gb_state_open(f->path, GB_STATE_RDONLY, BUSY_MS, &st,
				       &e),
			 GB_E_NOTFOUND);
	assert_null(st);
	snprintf(dir, sizeof(dir), "%s/lib", f->dir);
	assert_int_equal(stat(dir, &sb), -1);

	f->st = open_ok(f->path);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, NULL);
	assert_int_equal(gb_state_open(f->path, GB_STATE_RDONLY, BUSY_MS, &st,
				       &e),
			 GB_E_OK);
	assert_int_equal(count(st, -1), 1);
	assert_int_equal(gb_state_request_add(st, &r, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "read-only"));
	assert_int_equal(gb_state_tx_begin(st, &e), GB_E_INVALID);
	assert_int_equal(count(st, -1), 1);
	gb_state_close(st);

	/* an empty (version 0) file is not migrated read-only */
	unlink(f->path);
	assert_int_equal(close(open(f->path, O_CREAT | O_WRONLY, 0640)), 0);
	assert_int_equal(gb_state_open(f->path, GB_STATE_RDONLY, BUSY_MS, &st,
				       &e),
			 GB_E_SCHEMA);
	assert_non_null(strstr(e.text, "read-only"));
}

/* GB_STATE_NO_CREATE: an existing file read-write, else nothing made. */
static void test_open_no_create(void **state)
{
	struct ts_fx *f = *state;
	char dir[160];
	gb_state_t *st = NULL;
	gb_error_t e = { 0 };
	struct stat sb;

	assert_int_equal(gb_state_open(f->path, GB_STATE_NO_CREATE, BUSY_MS, &st, &e),
			 GB_E_NOTFOUND);
	assert_null(st);
	assert_non_null(strstr(e.text, "No such file or directory"));
	snprintf(dir, sizeof(dir), "%s/lib", f->dir);
	assert_int_equal(stat(dir, &sb), -1);	/* not even the directory */

	f->st = open_ok(f->path);
	gb_state_close(f->st);
	f->st = NULL;
	assert_int_equal(gb_state_open(f->path, GB_STATE_NO_CREATE, BUSY_MS, &st, &e),
			 GB_E_OK);
	add_req(st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, NULL);
	assert_int_equal(count(st, -1), 1);
	gb_state_close(st);
}

/*
 * Child as uid/gid 65534 (in the file's group, not its owner): open
 * [flags], count.  RET the gb_err_t as exit status.
 */
static int child_reader(const char *path, unsigned flags)
{
	gb_state_t *st = NULL;
	long n = -1;
	gb_err_t rc;

	if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		return 100;
	rc = gb_state_open(path, flags, BUSY_MS, &st, NULL);
	if (rc == GB_E_OK)
		rc = gb_state_request_count(st, -1, &n, NULL);
	gb_state_close(st);
	return rc == GB_E_OK && n != 1 ? 101 : (int)rc;
}

static int run_reader(const char *path, unsigned flags)
{
	int status = 0;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_reader(path, flags));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/*
 * An admin in the file's group (0640, directory 0750) reads with
 * GB_STATE_RDONLY: that needs the -wal and -shm files, which a reader
 * cannot create, so writers keep them (SQLITE_FCNTL_PERSIST_WAL).
 */
static void test_rdonly_group_reader(void **state)
{
	struct ts_fx *f = *state;
	char dir[160], side[200];
	const char *files[] = { "", "-wal", "-shm" };

	if (geteuid() != 0) {
		fprintf(stderr, "# skipped: needs root to switch to uid 65534\n");
		skip();
	}
	f->st = open_ok(f->path);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, NULL);
	gb_state_close(f->st);
	f->st = NULL;
	assert_int_equal(chmod(f->dir, 0711), 0);
	snprintf(dir, sizeof(dir), "%s/lib/gpuburst", f->dir);
	assert_int_equal(chown(dir, 0, 65534), 0);
	for (size_t i = 0; i < GB_ARRAY_LEN(files); i++) {
		snprintf(side, sizeof(side), "%s%s", f->path, files[i]);
		assert_int_equal(chown(side, 0, 65534), 0);	/* must exist */
	}
	assert_int_equal(run_reader(f->path, GB_STATE_RDONLY), GB_E_OK);
	assert_int_equal(run_reader(f->path, 0), GB_E_PERM);

	/* without them (e.g. removed by hand) the reader gets a clear PERM */
	for (size_t i = 1; i < GB_ARRAY_LEN(files); i++) {
		snprintf(side, sizeof(side), "%s%s", f->path, files[i]);
		assert_int_equal(unlink(side), 0);
	}
	assert_int_equal(run_reader(f->path, GB_STATE_RDONLY), GB_E_PERM);
}

/* The state directory, the file, -wal and -shm of [f]. */
static void mode_paths(const struct ts_fx *f, char paths[4][200])
{
	snprintf(paths[0], 200, "%s/lib/gpuburst", f->dir);
	snprintf(paths[1], 200, "%s", f->path);
	snprintf(paths[2], 200, "%s-wal", f->path);
	snprintf(paths[3], 200, "%s-shm", f->path);
}

static mode_t mode_of(const char *path)
{
	struct stat sb;

	assert_int_equal(stat(path, &sb), 0);
	return sb.st_mode & 07777;
}

static void test_mode_safe(void **state)
{
	(void)state;
	assert_int_equal(gb_state_mode_safe(0750, 1000), 0750);
	assert_int_equal(gb_state_mode_safe(0640, 1000), 0640);
	assert_int_equal(gb_state_mode_safe(0777, 1000), 0755);
	assert_int_equal(gb_state_mode_safe(0666, 1000), 0644);
	assert_int_equal(gb_state_mode_safe(0770, 1000), 0750);
	assert_int_equal(gb_state_mode_safe(01777, 1000), 01755);
	/* root:slurm 0770 is how a root-owned directory lets SlurmUser in */
	assert_int_equal(gb_state_mode_safe(0770, 0), 0770);
	assert_int_equal(gb_state_mode_safe(0777, 0), 0775);
}

/*
 * A directory 0777 and a file (-wal, -shm) 0666: a read-only open warns
 * and changes nothing; a read-write open tightens each and says so.  As
 * root the paths are given to uid 65534 first, so that the group rule
 * applies (root's own group-writable paths keep their group write).
 */
static void test_open_tightens_modes(void **state)
{
	struct ts_fx *f = *state;
	static const mode_t too_open[4] = { 0777, 0666, 0666, 0666 };
	static const mode_t tight[4] = { 0755, 0644, 0644, 0644 };
	char paths[4][200];
	gb_state_t *st = NULL;
	gb_error_t e = { 0 };
	const char *note;

	f->st = open_ok(f->path);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, NULL);
	assert_null(gb_state_open_notice(f->st));
	gb_state_close(f->st);
	f->st = NULL;
	mode_paths(f, paths);
	for (int i = 0; i < 4; i++) {
		if (geteuid() == 0)
			assert_int_equal(chown(paths[i], 65534, 65534), 0);
		assert_int_equal(chmod(paths[i], too_open[i]), 0);
	}

	assert_int_equal(gb_state_open(f->path, GB_STATE_RDONLY, BUSY_MS, &st, &e),
			 GB_E_OK);
	assert_non_null(note = gb_state_open_notice(st));
	assert_non_null(strstr(note, "state directory "));
	assert_non_null(strstr(note, "/lib/gpuburst is world-writable (mode 0777): the next program that opens it read-write tightens it to 0755"));
	assert_non_null(strstr(note, "state.db is world-writable (mode 0666)"));
	assert_non_null(strstr(note, "state.db-wal is world-writable"));
	assert_non_null(strstr(note, "state.db-shm is world-writable"));
	assert_int_equal(count(st, -1), 1);
	gb_state_close(st);
	for (int i = 0; i < 4; i++)
		assert_int_equal(mode_of(paths[i]), too_open[i]);

	f->st = open_ok(f->path);
	assert_non_null(note = gb_state_open_notice(f->st));
	assert_non_null(strstr(note, "/lib/gpuburst was world-writable (mode 0777): tightened to 0755"));
	assert_non_null(strstr(note, "state.db was world-writable (mode 0666): tightened to 0644"));
	assert_int_equal(count(f->st, -1), 1);
	for (int i = 0; i < 4; i++)
		assert_int_equal(mode_of(paths[i]), tight[i]);
	gb_state_close(f->st);

	/* group-writable only (not root's): tightened the same way */
	assert_int_equal(chmod(paths[0], 0770), 0);
	assert_int_equal(chmod(paths[1], 0660), 0);
	f->st = open_ok(f->path);
	assert_non_null(note = gb_state_open_notice(f->st));
	assert_non_null(strstr(note, "/lib/gpuburst was group-writable (mode 0770): tightened to 0750"));
	assert_non_null(strstr(note, "state.db was group-writable (mode 0660): tightened to 0640"));
	assert_int_equal(mode_of(paths[0]), 0750);
	assert_int_equal(mode_of(paths[1]), 0640);
	gb_state_close(f->st);

	/* a safe layout says nothing */
	f->st = open_ok(f->path);
	assert_null(gb_state_open_notice(f->st));
}

/* Child as uid/gid 65534: open [path] read-write.  RET gb_err_t. */
static int child_writer(const char *path)
{
	gb_state_t *st = NULL;
	gb_error_t e = { 0 };
	gb_err_t rc;

	if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		return 100;
	rc = gb_state_open(path, 0, BUSY_MS, &st, &e);
	gb_state_close(st);
	if (rc == GB_E_PERM && !strstr(e.text, "is world-writable (mode 0777, owner uid 0) and uid 65534 cannot tighten it"))
		return 102;
	return (int)rc;
}

/* A directory too open that we cannot chmod (root's): refused, untouched. */
static void test_open_refuses_untightenable(void **state)
{
	struct ts_fx *f = *state;
	char paths[4][200];
	int status = 0;
	pid_t pid;

	if (geteuid() != 0) {
		fprintf(stderr, "# skipped: needs root to switch to uid 65534\n");
		skip();
	}
	f->st = open_ok(f->path);
	gb_state_close(f->st);
	f->st = NULL;
	mode_paths(f, paths);
	assert_int_equal(chmod(f->dir, 0711), 0);
	assert_int_equal(chmod(paths[0], 0777), 0);
	assert_int_equal(chmod(paths[1], 0666), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_writer(f->path));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), GB_E_PERM);
	assert_int_equal(mode_of(paths[0]), 0777);
	assert_int_equal(mode_of(paths[1]), 0666);
}

/*
 * A shared directory (1777, as /tmp) is never chmodded: a writer refuses
 * it, and a directory where the file should be is said before the mode of
 * the directory it is in (once that tightened /tmp itself).
 */
static void test_open_shared_dir(void **state)
{
	struct ts_fx *f = *state;
	char shared[200], path[220], sub[220];
	gb_state_t *st = NULL;
	gb_error_t e;

	snprintf(shared, sizeof(shared), "%s/shared", f->dir);
	snprintf(path, sizeof(path), "%s/state.db", shared);
	snprintf(sub, sizeof(sub), "%s/sub", shared);
	assert_int_equal(mkdir(shared, 0700), 0);
	assert_int_equal(chmod(shared, 01777), 0);
	assert_int_equal(gb_state_open(path, 0, BUSY_MS, &st, &e), GB_E_PERM);
	assert_non_null(strstr(e.text, "is a shared directory (mode 1777"));
	assert_int_equal(mode_of(shared), 01777);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(gb_state_open(sub, 0, BUSY_MS, &st, &e), GB_E_STATE);
	assert_non_null(strstr(e.text, "is not a regular file"));
	assert_int_equal(mode_of(shared), 01777);
}

static void test_open_not_a_database(void **state)
{
	struct ts_fx *f = *state;
	char junk[200], foreign[200], *a, *b;
	size_t alen, blen;
	gb_state_t *st = NULL;
	gb_error_t e = { 0 };
	sqlite3 *db = NULL;
	FILE *fp;

	snprintf(junk, sizeof(junk), "%s/junk.db", f->dir);
	fp = fopen(junk, "w");
	assert_non_null(fp);
	for (int i = 0; i < 200; i++)
		fputs("this is not a database at all\n", fp);
	assert_int_equal(fclose(fp), 0);
	a = slurp(junk, &alen);
	assert_int_equal(gb_state_open(junk, 0, BUSY_MS, &st, &e), GB_E_STATE);
	assert_null(st);
	assert_non_null(strstr(e.text, "is not an SQLite database"));
	assert_non_null(strstr(e.text, junk));
	assert_int_equal(gb_state_open(junk, GB_STATE_RDONLY, BUSY_MS, &st, &e),
			 GB_E_STATE);
	b = slurp(junk, &blen);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	free(a);
	free(b);

	/* someone else's SQLite database is not adopted */
	snprintf(foreign, sizeof(foreign), "%s/foreign.db", f->dir);
	assert_int_equal(sqlite3_open(foreign, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE t (x)", NULL, NULL,
				      NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(gb_state_open(foreign, 0, BUSY_MS, &st, &e),
			 GB_E_STATE);
	assert_non_null(strstr(e.text, "not a gpuburst state file"));

	/* a directory where the file should be */
	assert_int_equal(gb_state_open(f->dir, 0, BUSY_MS, &st, &e),
			 GB_E_STATE);
	assert_int_equal(gb_state_open("", 0, BUSY_MS, &st, &e), GB_E_INVALID);
}

/*****************************************************************************
 *  Requests
 *****************************************************************************/

static void test_request_add_get(void **state)
{
	struct ts_fx *f = *state;
	struct gb_request r = { .id = "" }, dup;
	struct req_copy c;
	gb_error_t e = { 0 };
	double before = gb_time_now();

	f->st = open_ok(f->path);
	r.kind = GB_REQ_RESUME;
	r.state = GB_RSTATE_QUEUED;
	r.nodes = "g5-[1-3]";
	r.node_count = 3;
	r.job_id = 4242;
	r.input = "{\"job_id\":4242}";
	assert_int_equal(gb_state_request_add(f->st, &r, &e), GB_E_OK);
	assert_int_equal(strlen(r.id), GB_REQUEST_ID_LEN);
	assert_int_equal(strspn(r.id, "0123456789abcdef"), GB_REQUEST_ID_LEN);
	assert_true(r.created_at >= before && r.created_at <= gb_time_now());

	c = get_req(f->st, r.id);
	assert_int_equal(c.calls, 1);
	assert_string_equal(c.nodes, "g5-[1-3]");
	assert_int_equal(c.state, GB_RSTATE_QUEUED);
	assert_int_equal(c.kind, GB_REQ_RESUME);
	assert_int_equal(c.result, GB_RESULT_NONE);
	assert_string_equal(c.reason, "(null)");
	assert_true(c.created_at == r.created_at);

	/* the same id again */
	dup = r;
	assert_int_equal(gb_state_request_add(f->st, &dup, &e), GB_E_EXISTS);
	assert_non_null(strstr(e.text, "adding request"));
	assert_non_null(strstr(e.text, "UNIQUE constraint failed"));

	/* bad input: nothing half-written */
	dup.id[0] = '\0';
	dup.nodes = "g5-[1-";
	assert_int_equal(gb_state_request_add(f->st, &dup, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "g5-[1-"));
	dup.nodes = "g5-[1-200000]";
	assert_int_equal(gb_state_request_add(f->st, &dup, &e), GB_E_INVALID);
	dup.nodes = "g5-1";
	dup.state = (enum gb_request_state)42;
	assert_int_equal(gb_state_request_add(f->st, &dup, &e), GB_E_INVALID);
	gb_strlcpy(dup.id, "NOT-HEX-AT-ALL!!", sizeof(dup.id));
	dup.state = GB_RSTATE_QUEUED;
	assert_int_equal(gb_state_request_add(f->st, &dup, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "CHECK constraint failed"));
	assert_int_equal(count(f->st, -1), 1);

	assert_int_equal(gb_state_request_get(f->st, "0123456789abcdef",
					      req_sink, &c, &e),
			 GB_E_NOTFOUND);
	assert_int_equal(gb_state_check(f->st, &e), GB_E_OK);
}

static void test_request_claim(void **state)
{
	struct ts_fx *f = *state;
	char a[17], b[17], c[17], d[17];
	struct req_copy got = { 0 };
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, a);
	add_req(f->st, GB_REQ_SUSPEND, GB_RSTATE_QUEUED, "g5-2", 0, b);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_PENDING_APPROVAL, "g5-3", 0, c);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-4",
		gb_time_now() + 3600, d);

	/* kinds: only suspends, although the resume is older */
	assert_int_equal(gb_state_request_claim(f->st, 777,
						1u << GB_REQ_SUSPEND, req_sink,
						&got, &e),
			 GB_E_OK);
	assert_string_equal(got.id, b);
	assert_int_equal(got.state, GB_RSTATE_RUNNING);
	assert_int_equal(got.pid, 777);
	assert_int_equal(got.claims, 1);
	assert_int_equal(gb_state_request_claim(f->st, 777,
						1u << GB_REQ_TERMINATE, NULL,
						NULL, &e),
			 GB_E_NOTFOUND);

	/* oldest queued */
	assert_int_equal(gb_state_request_claim(f->st, 778, 0, req_sink, &got,
						&e),
			 GB_E_OK);
	assert_string_equal(got.id, a);
	assert_int_equal(got.pid, 778);

	/* pending_approval and not_before in the future are not runnable */
	assert_int_equal(gb_state_request_claim(f->st, 779, 0, req_sink, &got,
						&e),
			 GB_E_NOTFOUND);
	assert_int_equal(got.calls, 2);
	assert_int_equal(get_req(f->st, c).state, GB_RSTATE_PENDING_APPROVAL);
	assert_int_equal(get_req(f->st, d).state, GB_RSTATE_QUEUED);

	/* back-off expired: d becomes claimable */
	assert_int_equal(gb_state_request_requeue(f->st, d, gb_time_now() - 1,
						  "back-off over", &e),
			 GB_E_OK);
	assert_int_equal(gb_state_request_claim(f->st, 780, 0, req_sink, &got,
						&e),
			 GB_E_OK);
	assert_string_equal(got.id, d);
	assert_int_equal(count(f->st, GB_RSTATE_RUNNING), 3);
}

struct older_sink {
	char ids[8][GB_REQUEST_ID_LEN + 1];
	int n;
	int stop_after;			/* 0: never */
};

/* The request [id] as the worker holds it: id, kind, created_at. */
static struct gb_request as_req(gb_state_t *st, const char *id)
{
	struct req_copy c = get_req(st, id);
	struct gb_request r = { 0 };

	gb_strlcpy(r.id, c.id, sizeof(r.id));
	r.kind = c.kind;
	r.created_at = c.created_at;
	return r;
}

static int older_cb(const struct gb_request *r, void *arg)
{
	struct older_sink *o = arg;

	if (o->n < 8)
		gb_strlcpy(o->ids[o->n], r->id, sizeof(o->ids[0]));
	o->n++;
	return o->stop_after && o->n >= o->stop_after;
}

/*
 * The worker's two families (schema 10): a claim of terminations finds the
 * oldest runnable termination behind any number of queued resumes, a claim
 * of resumes the oldest runnable resume; and the older requests, queued or
 * running, of the other family than a request's, oldest first, never its
 * own family, never a newer one, never a finished one.
 */
static void test_request_families(void **state)
{
	const unsigned term = (1u << GB_REQ_SUSPEND) | (1u << GB_REQ_RESUME_FAIL) |
			      (1u << GB_REQ_TERMINATE);
	struct ts_fx *f = *state;
	char r1[17], s1[17], r2[17], t1[17], r3[17], s2[17], x[17];
	struct older_sink o = { 0 };
	struct req_copy got = { 0 };
	struct gb_request q = { 0 };
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, r1);
	add_req(f->st, GB_REQ_SUSPEND, GB_RSTATE_QUEUED, "g5-1", gb_time_now() + 3600, s1);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-2", 0, r2);
	add_req(f->st, GB_REQ_TERMINATE, GB_RSTATE_QUEUED, "g5-2", 0, t1);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-3", 0, r3);
	add_req(f->st, GB_REQ_SUSPEND, GB_RSTATE_QUEUED, "g5-3", 0, s2);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_PENDING_APPROVAL, "g5-4", 0, x);

	/* the older queued or running of the other family, oldest first */
	q = as_req(f->st, r3);
	assert_int_equal(gb_state_request_older_active(f->st, &q, older_cb, &o, &e), GB_E_OK);
	assert_int_equal(o.n, 2);
	assert_string_equal(o.ids[0], s1);	/* backed off, still queued */
	assert_string_equal(o.ids[1], t1);
	memset(&o, 0, sizeof(o));
	q = as_req(f->st, s2);
	o.stop_after = 2;
	assert_int_equal(gb_state_request_older_active(f->st, &q, older_cb, &o, &e), GB_E_OK);
	assert_int_equal(o.n, 2);		/* r1, r2: the walk stopped there */
	assert_string_equal(o.ids[0], r1);
	assert_string_equal(o.ids[1], r2);
	memset(&o, 0, sizeof(o));
	q = as_req(f->st, r1);
	assert_int_equal(gb_state_request_older_active(f->st, &q, older_cb, &o, &e), GB_E_OK);
	assert_int_equal(o.n, 0);

	/* terminations: t1 (s1 waits), then s2; resumes: r1, r2, r3 */
	assert_int_equal(gb_state_request_claim(f->st, 7, term, req_sink, &got, &e), GB_E_OK);
	assert_string_equal(got.id, t1);
	assert_int_equal(gb_state_request_claim(f->st, 7, term, req_sink, &got, &e), GB_E_OK);
	assert_string_equal(got.id, s2);
	assert_int_equal(gb_state_request_claim(f->st, 7, term, NULL, NULL, &e), GB_E_NOTFOUND);
	assert_int_equal(gb_state_request_claim(f->st, 7, 1u << GB_REQ_RESUME, req_sink, &got,
						&e),
			 GB_E_OK);
	assert_string_equal(got.id, r1);
	memset(&o, 0, sizeof(o));
	q = as_req(f->st, r3);
	assert_int_equal(gb_state_request_older_active(f->st, &q, older_cb, &o, &e), GB_E_OK);
	assert_int_equal(o.n, 2);		/* s1 queued, t1 running */
	assert_string_equal(o.ids[0], s1);
	assert_string_equal(o.ids[1], t1);
	assert_int_equal(gb_state_request_finish(f->st, t1, GB_RSTATE_DONE, GB_RESULT_SUCCESS, 0,
						 "ok", &e),
			 GB_E_OK);
	memset(&o, 0, sizeof(o));
	assert_int_equal(gb_state_request_older_active(f->st, &q, older_cb, &o, &e), GB_E_OK);
	assert_int_equal(o.n, 1);		/* t1 is done */
	assert_string_equal(o.ids[0], s1);
	assert_int_equal(gb_state_request_claim(f->st, 7, 1u << GB_REQ_RESUME, req_sink, &got,
						&e),
			 GB_E_OK);
	assert_string_equal(got.id, r2);
	assert_int_equal(gb_state_request_claim(f->st, 7, 1u << GB_REQ_RESUME, req_sink, &got,
						&e),
			 GB_E_OK);
	assert_string_equal(got.id, r3);
	assert_int_equal(gb_state_request_claim(f->st, 7, 1u << GB_REQ_RESUME, NULL, NULL, &e),
			 GB_E_NOTFOUND);
}

static void test_request_transitions(void **state)
{
	struct ts_fx *f = *state;
	char a[17], b[17];
	struct req_copy c;
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_PENDING_APPROVAL, "g5-1", 0, a);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-2", 0, b);

	/* compare-and-set */
	assert_int_equal(gb_state_request_transition(f->st, a, GB_RSTATE_QUEUED,
						     GB_RSTATE_RUNNING, NULL,
						     &e),
			 GB_E_BUSY);
	assert_non_null(strstr(e.text, "pending_approval, not queued"));
	assert_int_equal(gb_state_request_transition(f->st, "ffffffffffffffff",
						     GB_RSTATE_QUEUED,
						     GB_RSTATE_RUNNING, NULL,
						     &e),
			 GB_E_NOTFOUND);
	assert_int_equal(gb_state_request_transition(f->st, a,
						     GB_RSTATE_PENDING_APPROVAL,
						     GB_RSTATE_QUEUED,
						     "approved by alice", &e),
			 GB_E_OK);
	c = get_req(f->st, a);
	assert_int_equal(c.state, GB_RSTATE_QUEUED);
	assert_string_equal(c.reason, "approved by alice");

	/* finish only from running */
	assert_int_equal(gb_state_request_finish(f->st, b, GB_RSTATE_DONE,
						 GB_RESULT_SUCCESS, 1, "ok", &e),
			 GB_E_BUSY);
	assert_int_equal(gb_state_request_claim(f->st, 99, 0, req_sink, &c, &e),
			 GB_E_OK);
	assert_string_equal(c.id, a);
	assert_int_equal(gb_state_request_finish(f->st, a, GB_RSTATE_QUEUED,
						 GB_RESULT_SUCCESS, 1, "ok", &e),
			 GB_E_INVALID);
	assert_int_equal(gb_state_request_finish(f->st, a, GB_RSTATE_DONE,
						 GB_RESULT_PARTIAL, 1,
						 "1/2 launched", &e),
			 GB_E_OK);
	c = get_req(f->st, a);
	assert_int_equal(c.state, GB_RSTATE_DONE);
	assert_int_equal(c.result, GB_RESULT_PARTIAL);
	assert_int_equal(c.launched, 1);
	assert_int_equal(c.pid, 99);
	assert_string_equal(c.reason, "1/2 launched");
	assert_int_equal(gb_state_request_finish(f->st, a, GB_RSTATE_FAILED,
						 GB_RESULT_FAILED, 0, "x", &e),
			 GB_E_BUSY);

	/* requeue: running -> queued, claimable again, claims counts up */
	assert_int_equal(gb_state_request_claim(f->st, 98, 0, req_sink, &c, &e),
			 GB_E_OK);
	assert_string_equal(c.id, b);
	assert_int_equal(gb_state_request_requeue(f->st, b, 0, "throttled", &e),
			 GB_E_OK);
	c = get_req(f->st, b);
	assert_int_equal(c.state, GB_RSTATE_QUEUED);
	assert_int_equal(c.pid, 0);
	assert_string_equal(c.reason, "throttled");
	assert_int_equal(gb_state_request_claim(f->st, 97, 0, req_sink, &c, &e),
			 GB_E_OK);
	assert_int_equal(c.claims, 2);
	assert_int_equal(gb_state_request_requeue(f->st, a, 0, NULL, &e),
			 GB_E_BUSY);	/* done stays done */
	assert_int_equal(gb_state_request_requeue(f->st, "0000000000000000", 0,
						  NULL, &e),
			 GB_E_NOTFOUND);
}

static void test_requeue_stale(void **state)
{
	struct ts_fx *f = *state;
	char a[17], b[17], c[17];
	struct req_copy got = { 0 };
	pid_t dead = dead_pid();
	int n = -1;

	f->st = open_ok(f->path);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, a);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-2", 0, b);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-3", 0, c);
	assert_int_equal(gb_state_request_claim(f->st, dead, 0, req_sink, &got,
						NULL),
			 GB_E_OK);
	assert_string_equal(got.id, a);
	assert_int_equal(gb_state_request_claim(f->st, getpid(), 0, req_sink,
						&got, NULL),
			 GB_E_OK);
	assert_string_equal(got.id, b);

	assert_int_equal(gb_state_request_requeue_stale(f->st, &n, NULL),
			 GB_E_OK);
	assert_int_equal(n, 1);
	got = get_req(f->st, a);
	assert_int_equal(got.state, GB_RSTATE_QUEUED);
	assert_int_equal(got.pid, 0);
	assert_non_null(strstr(got.reason, "is gone"));
	got = get_req(f->st, b);
	assert_int_equal(got.state, GB_RSTATE_RUNNING);
	assert_int_equal(got.pid, getpid());
	assert_int_equal(get_req(f->st, c).state, GB_RSTATE_QUEUED);

	assert_int_equal(gb_state_request_requeue_stale(f->st, NULL, NULL),
			 GB_E_OK);
	assert_int_equal(gb_state_request_requeue_stale(f->st, &n, NULL),
			 GB_E_OK);
	assert_int_equal(n, 0);
}

/* What gb_state_job_node_lists gives: "job:nodes;" in order. */
static int job_nodes_row(int64_t job_id, const char *nodes, void *arg)
{
	char *out = arg;
	size_t n = strlen(out);

	snprintf(out + n, 512 - n, "%lld:%s;", (long long)job_id, nodes);
	return 0;
}

/*
 * The approval gate's read of a job's earlier node lists: the resume
 * requests of the job range that count (pending_approval, queued,
 * running, done; not denied or failed, not of another kind), by job,
 * each distinct list of a job once, none older than [since].
 */
static void test_job_node_lists(void **state)
{
	static const struct {
		int64_t job;
		enum gb_request_kind kind;
		enum gb_request_state st;
		const char *nodes;
	} rows[] = {
		{ 5, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-[1-2]" },
		{ 3, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-7" },
		{ 3, GB_REQ_RESUME, GB_RSTATE_DONE, "g5-7" },	/* again: once */
		{ 3, GB_REQ_RESUME, GB_RSTATE_RUNNING, "g5-8" },
		{ 3, GB_REQ_RESUME, GB_RSTATE_FAILED, "g5-9" },	/* does not count */
		{ 4, GB_REQ_RESUME, GB_RSTATE_DENIED, "g5-10" },
		{ 4, GB_REQ_RESUME, GB_RSTATE_PENDING_APPROVAL, "g5-11" },
		{ 6, GB_REQ_SUSPEND, GB_RSTATE_QUEUED, "g5-12" },	/* not a resume */
		{ 9, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-13" },	/* out of range */
		{ 0, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-14" },	/* no job */
	};
	struct ts_fx *f = *state;
	char out[512] = "";
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	for (size_t i = 0; i < GB_ARRAY_LEN(rows); i++) {
		struct gb_request r = { .id = "" };

		r.kind = rows[i].kind;
		r.state = rows[i].st;
		r.job_id = rows[i].job;
		r.nodes = rows[i].nodes;
		r.node_count = 1;
		r.nodeset = "g5";
		r.instance_type = "g5.xlarge";
		r.home_region = "us-east-1";
		if (gb_state_request_add(f->st, &r, &e))
			fail_msg("add request: %s", e.text);
	}
	assert_int_equal(gb_state_job_node_lists(f->st, 1, 8, 0, job_nodes_row, out, &e),
			 GB_E_OK);
	assert_string_equal(out, "3:g5-7;3:g5-8;4:g5-11;5:g5-[1-2];");
	out[0] = '\0';
	assert_int_equal(gb_state_job_node_lists(f->st, 4, 4, 0, job_nodes_row, out, &e),
			 GB_E_OK);
	assert_string_equal(out, "4:g5-11;");
	out[0] = '\0';
	assert_int_equal(gb_state_job_node_lists(f->st, 1, 8, gb_time_now() + 60,
						 job_nodes_row, out, &e), GB_E_OK);
	assert_string_equal(out, "");
}

static void test_request_list(void **state)
{
	struct ts_fx *f = *state;
	struct gb_request_filter flt = GB_REQUEST_FILTER_ANY;
	struct id_list l = { { 0 }, 0 };
	char id[5][17];
	struct req_copy c;
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-[1-4]", 0, id[0]);
	add_req(f->st, GB_REQ_SUSPEND, GB_RSTATE_QUEUED, "g5-[3-5],p4-1", 0,
		id[1]);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_PENDING_APPROVAL, "p4-[1-2]", 0,
		id[2]);
	add_req(f->st, GB_REQ_TERMINATE, GB_RSTATE_QUEUED, NULL, 0, id[3]);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-10", 0, id[4]);

	assert_int_equal(list_n(f->st, &flt, &l), 5);
	for (int i = 0; i < 5; i++)	/* oldest first */
		assert_string_equal(l.ids.v[i], id[i]);
	assert_int_equal(list_n(f->st, NULL, &l), 5);

	flt.state = GB_RSTATE_PENDING_APPROVAL;
	assert_int_equal(list_n(f->st, &flt, &l), 1);
	assert_string_equal(l.ids.v[0], id[2]);

	flt.state = GB_RSTATE_QUEUED;
	flt.kind = GB_REQ_RESUME;
	assert_int_equal(list_n(f->st, &flt, &l), 2);
	assert_string_equal(l.ids.v[1], id[4]);

	flt = (struct gb_request_filter)GB_REQUEST_FILTER_ANY;
	flt.node = "g5-3";
	assert_int_equal(list_n(f->st, &flt, &l), 2);
	assert_string_equal(l.ids.v[0], id[0]);
	assert_string_equal(l.ids.v[1], id[1]);
	flt.node = "p4-1";
	assert_int_equal(list_n(f->st, &flt, &l), 2);
	assert_string_equal(l.ids.v[0], id[1]);
	flt.node = "g5-1";	/* not g5-10 */
	assert_int_equal(list_n(f->st, &flt, &l), 1);
	flt.node = "g5-99";
	assert_int_equal(list_n(f->st, &flt, &l), 0);
	flt.node = "g5-4";
	flt.kind = GB_REQ_SUSPEND;
	assert_int_equal(list_n(f->st, &flt, &l), 1);

	flt = (struct gb_request_filter)GB_REQUEST_FILTER_ANY;
	c = get_req(f->st, id[2]);
	flt.since = c.created_at;
	assert_int_equal(list_n(f->st, &flt, &l), 3);
	assert_string_equal(l.ids.v[0], id[2]);

	/* a limit keeps the newest, still listed oldest first */
	flt = (struct gb_request_filter)GB_REQUEST_FILTER_ANY;
	{
		int all = list_n(f->st, &flt, &l);
		char last[2][GB_REQUEST_ID_LEN + 1];

		assert_true(all > 2);
		gb_strlcpy(last[0], l.ids.v[all - 2], sizeof(last[0]));
		gb_strlcpy(last[1], l.ids.v[all - 1], sizeof(last[1]));
		flt.limit = 2;
		assert_int_equal(list_n(f->st, &flt, &l), 2);
		assert_string_equal(l.ids.v[0], last[0]);
		assert_string_equal(l.ids.v[1], last[1]);
	}

	/* the callback stops the walk */
	flt.limit = 0;
	l.stop_after = 3;
	assert_int_equal(list_n(f->st, &flt, &l), 3);
	l.stop_after = 0;

	/* streamed: the same rows, in the same order, and the stop */
	{
		struct id_list held = { { 0 }, 0 };

		flt = (struct gb_request_filter)GB_REQUEST_FILTER_ANY;
		assert_int_equal(list_n(f->st, &flt, &held), 5);
		flt.stream = true;
		assert_int_equal(list_n(f->st, &flt, &l), 5);
		for (int i = 0; i < 5; i++)
			assert_string_equal(l.ids.v[i], held.ids.v[i]);
		flt.node = "g5-3";
		assert_int_equal(list_n(f->st, &flt, &l), 2);
		flt.node = NULL;
		flt.limit = 2;
		assert_int_equal(list_n(f->st, &flt, &l), 2);
		assert_string_equal(l.ids.v[1], id[4]);
		flt.limit = 0;
		l.stop_after = 2;
		assert_int_equal(list_n(f->st, &flt, &l), 2);
		l.stop_after = 0;
		gb_strv_free(&held.ids);
		flt.stream = false;
	}

	flt.state = 99;
	assert_int_equal(gb_state_request_list(f->st, &flt, req_ids, &l, &e),
			 GB_E_INVALID);

	assert_int_equal(count(f->st, -1), 5);
	assert_int_equal(count(f->st, GB_RSTATE_QUEUED), 4);
	assert_int_equal(count(f->st, GB_RSTATE_DONE), 0);
	gb_strv_free(&l.ids);
}

/*
 * defer_node_index: the row is written without its request_nodes rows
 * (the programs' fast path); gb_state_request_index_nodes() adds them
 * later, once, for rows created since a time; a malformed node list is
 * still refused at add time.
 */
static void test_request_deferred_index(void **state)
{
	struct ts_fx *f = *state;
	struct gb_request_filter flt = GB_REQUEST_FILTER_ANY;
	struct id_list l = { { 0 }, 0 };
	struct gb_request r = { 0 }, r2 = { 0 }, bad = { 0 };
	gb_error_t e = { 0 };
	int n = -1;

	f->st = open_ok(f->path);
	r.kind = GB_REQ_RESUME;
	r.state = GB_RSTATE_QUEUED;
	r.nodes = "g5-[1-3]";
	r.node_count = 3;
	r.defer_node_index = true;
	assert_int_equal(gb_state_request_add(f->st, &r, &e), GB_E_OK);
	r2 = r;
	r2.id[0] = '\0';
	r2.nodes = "g5-4";
	r2.defer_node_index = false;
	assert_int_equal(gb_state_request_add(f->st, &r2, &e), GB_E_OK);
	flt.node = "g5-2";
	assert_int_equal(list_n(f->st, &flt, &l), 0);	/* not indexed yet */
	flt.node = "g5-4";
	assert_int_equal(list_n(f->st, &flt, &l), 1);

	/* rows created before [since] are left alone */
	assert_int_equal(gb_state_request_index_nodes(f->st, r.created_at + 3600, &n, &e),
			 GB_E_OK);
	assert_int_equal(n, 0);
	assert_int_equal(gb_state_request_index_nodes(f->st, 0, &n, &e), GB_E_OK);
	assert_int_equal(n, 1);
	flt.node = "g5-2";
	assert_int_equal(list_n(f->st, &flt, &l), 1);
	assert_string_equal(l.ids.v[0], r.id);
	assert_int_equal(gb_state_request_index_nodes(f->st, 0, &n, &e), GB_E_OK);
	assert_int_equal(n, 0);			/* once */

	bad.kind = GB_REQ_RESUME;
	bad.state = GB_RSTATE_QUEUED;
	bad.nodes = "g5-[1-";
	bad.defer_node_index = true;
	assert_int_equal(gb_state_request_add(f->st, &bad, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "g5-[1-"));
	assert_int_equal(count(f->st, -1), 2);
	gb_strv_free(&l.ids);
}

/* A callback may use the handle, even write: rows were copied first. */
static int requeue_from_cb(const struct gb_request *r, void *arg)
{
	gb_state_t *st = arg;

	assert_int_equal(gb_state_event_add(st, r->id, "seen", r->nodes, NULL),
			 GB_E_OK);
	return 0;
}

static int count_events(const struct gb_event *ev, void *arg)
{
	(void)ev;
	(*(int *)arg)++;
	return 0;
}

static void test_callback_reentry_and_stmt_cache(void **state)
{
	struct ts_fx *f = *state;
	char id[17];
	int n = 0, before = 0, after = 0;
	sqlite3_stmt *s;

	f->st = open_ok(f->path);
	for (int i = 0; i < 3; i++)
		add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, id);
	assert_int_equal(gb_state_request_list(f->st, NULL, requeue_from_cb,
					       f->st, NULL),
			 GB_E_OK);
	assert_int_equal(gb_state_event_list(f->st, NULL, count_events, &n,
					     NULL),
			 GB_E_OK);
	assert_int_equal(n, 3);

	/* statements are prepared once per handle, not per call */
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, id);
	(void)get_req(f->st, id);
	for (s = sqlite3_next_stmt(f->st->db, NULL); s;
	     s = sqlite3_next_stmt(f->st->db, s))
		before++;
	for (int i = 0; i < 50; i++) {
		add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, id);
		(void)get_req(f->st, id);
	}
	for (s = sqlite3_next_stmt(f->st->db, NULL); s;
	     s = sqlite3_next_stmt(f->st->db, s))
		after++;
	assert_int_equal(before, after);
}

/*****************************************************************************
 *  Transactions
 *****************************************************************************/

static void test_transactions(void **state)
{
	struct ts_fx *f = *state;
	struct gb_request dup = { .id = "" };
	char id[17];
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	assert_int_equal(gb_state_tx_begin(f->st, &e), GB_E_OK);
	for (int i = 0; i < 3; i++)
		add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, id);
	assert_int_equal(gb_state_tx_begin(f->st, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "do not nest"));
	gb_state_tx_rollback(f->st);
	assert_int_equal(count(f->st, -1), 0);

	assert_int_equal(gb_state_tx_commit(f->st, &e), GB_E_INVALID);
	gb_state_tx_rollback(f->st);	/* no-op */

	assert_int_equal(gb_state_tx_begin(f->st, &e), GB_E_OK);
	for (int i = 0; i < 3; i++)
		add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, id);
	/* a failing statement inside does not end the caller's transaction */
	gb_strlcpy(dup.id, id, sizeof(dup.id));
	assert_int_equal(gb_state_request_add(f->st, &dup, &e), GB_E_EXISTS);
	assert_int_equal(gb_state_tx_commit(f->st, &e), GB_E_OK);
	assert_int_equal(count(f->st, -1), 3);

	/* a transaction left open is rolled back by close */
	assert_int_equal(gb_state_tx_begin(f->st, &e), GB_E_OK);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, id);
	gb_state_close(f->st);
	f->st = open_ok(f->path);
	assert_int_equal(count(f->st, -1), 3);
}

/*
 * A read snapshot: two reads in it agree although another handle writes
 * between them; a write through the snapshot's handle is refused, as is
 * a second snapshot or a transaction; the end lets the new row show.
 */
static void test_read_snapshot(void **state)
{
	struct ts_fx *f = *state;
	gb_state_t *other;
	char id[17];
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	other = open_ok(f->path);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, id);
	assert_int_equal(gb_state_read_begin(f->st, &e), GB_E_OK);
	assert_int_equal(count(f->st, -1), 1);
	add_req(other, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-2", 0, id);
	assert_int_equal(count(f->st, -1), 1);	/* the snapshot's */
	assert_int_equal(count(other, -1), 2);
	assert_int_equal(gb_state_read_begin(f->st, &e), GB_E_INVALID);
	assert_int_equal(gb_state_tx_begin(f->st, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "read snapshot"));
	{
		struct gb_request r = { .id = "" };

		r.kind = GB_REQ_RESUME;
		r.state = GB_RSTATE_QUEUED;
		r.nodes = "g5-3";
		r.node_count = 1;
		assert_int_equal(gb_state_request_add(f->st, &r, &e), GB_E_INVALID);
	}
	gb_state_read_end(f->st);
	gb_state_read_end(f->st);	/* no-op */
	assert_int_equal(count(f->st, -1), 2);
	/* not inside a transaction */
	assert_int_equal(gb_state_tx_begin(f->st, &e), GB_E_OK);
	assert_int_equal(gb_state_read_begin(f->st, &e), GB_E_INVALID);
	gb_state_tx_rollback(f->st);
	gb_state_close(other);
}

static void test_busy(void **state)
{
	struct ts_fx *f = *state;
	struct gb_request r = { .id = "", .nodes = "g5-1" };
	gb_state_t *other = NULL;
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	assert_int_equal(gb_state_open(f->path, 0, 50, &other, &e), GB_E_OK);
	assert_int_equal(gb_state_tx_begin(f->st, &e), GB_E_OK);
	assert_int_equal(gb_state_request_add(other, &r, &e), GB_E_BUSY);
	assert_non_null(strstr(e.text, "adding request"));
	assert_non_null(strstr(e.text, "locked"));
	assert_int_equal(count(other, -1), 0);	/* readers are not blocked */
	assert_int_equal(gb_state_tx_commit(f->st, &e), GB_E_OK);
	r.id[0] = '\0';
	assert_int_equal(gb_state_request_add(other, &r, &e), GB_E_OK);
	gb_state_close(other);
}

/*****************************************************************************
 *  Plans, attempts, instances, approvals, events
 *****************************************************************************/

static int plan_check(const struct gb_plan_row *p, void *arg)
{
	int *next = arg;

	assert_int_equal(p->version, *next);
	assert_string_equal(p->planner, *next == 2 ? "llm:openai" : "heuristic");
	if (*next == 2)
		assert_string_equal(p->rationale, "us-west-2 had capacity");
	else
		assert_null(p->rationale);
	assert_true(p->created_at > 0);
	(*next)++;
	return 0;
}

static void test_plans(void **state)
{
	struct ts_fx *f = *state;
	struct gb_plan_row p = { 0 };
	char id[17];
	int v = 0, next = 1;
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_RUNNING, "g5-1", 0, id);
	p.request_id = id;
	p.status = "used";
	p.body = "{\"pools\":[]}";
	for (int i = 1; i <= 3; i++) {
		p.planner = i == 2 ? "llm:openai" : "heuristic";
		p.rationale = i == 2 ? "us-west-2 had capacity" : NULL;
		assert_int_equal(gb_state_plan_add(f->st, &p, &v, &e), GB_E_OK);
		assert_int_equal(v, i);
	}
	assert_int_equal(gb_state_plan_list(f->st, id, plan_check, &next, &e),
			 GB_E_OK);
	assert_int_equal(next, 4);

	p.status = "maybe";
	assert_int_equal(gb_state_plan_add(f->st, &p, &v, &e), GB_E_INVALID);
	p.status = "used";
	p.request_id = "0000000000000000";	/* no such request */
	assert_int_equal(gb_state_plan_add(f->st, &p, NULL, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "FOREIGN KEY"));
}

struct att_sink {
	int n;
	struct gb_attempt last;
	char token[80];
	char code[80];
};

static int att_cb(const struct gb_attempt *a, void *arg)
{
	struct att_sink *s = arg;

	s->n++;
	s->last = *a;
	gb_strlcpy(s->token, a->client_token, sizeof(s->token));
	gb_strlcpy(s->code, a->error_code ? a->error_code : "(null)",
		   sizeof(s->code));
	s->last.client_token = s->last.error_code = NULL;
	s->last.request_id = s->last.region = s->last.az = NULL;
	s->last.subnet = s->last.instance_type = NULL;
	s->last.error_class = s->last.message = NULL;
	s->last.capacity = s->last.capacity_target = NULL;
	return 0;
}

static void test_attempts(void **state)
{
	struct ts_fx *f = *state;
	struct gb_attempt a = { 0 }, b;
	struct att_sink s = { 0 };
	char id[17], token[80];
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_RUNNING, "g5-[1-4]", 0, id);
	a.request_id = id;
	a.region = "us-east-1";
	a.az = "us-east-1a";
	a.subnet = "subnet-1";
	a.instance_type = "g5.xlarge";
	a.min_count = 1;
	a.asked = 4;
	a.client_token = "gb-tok-0";
	assert_int_equal(gb_state_attempt_begin(f->st, &a, &e), GB_E_OK);
	assert_true(a.id > 0);
	assert_int_equal(a.state, GB_ATTEMPT_STARTED);
	assert_true(a.started_at > 0);

	b = a;
	b.seq = 1;
	b.client_token = "gb-tok-1";
	assert_int_equal(gb_state_attempt_begin(f->st, &b, &e), GB_E_OK);
	assert_true(b.id > a.id);

	/* duplicate client token */
	b.client_token = "gb-tok-0";
	assert_int_equal(gb_state_attempt_begin(f->st, &b, &e), GB_E_EXISTS);
	assert_non_null(strstr(e.text, "client_token"));
	memset(token, 'x', 65);
	token[65] = '\0';
	b.client_token = token;
	assert_int_equal(gb_state_attempt_begin(f->st, &b, &e), GB_E_INVALID);
	b.client_token = "gb-tok-2";
	b.min_count = 5;	/* MinCount > MaxCount */
	assert_int_equal(gb_state_attempt_begin(f->st, &b, &e), GB_E_INVALID);

	/* both started: crash recovery sees them */
	assert_int_equal(gb_state_attempt_list(f->st, NULL, att_cb, &s, &e),
			 GB_E_OK);
	assert_int_equal(s.n, 2);

	a.state = GB_ATTEMPT_FAILED;
	a.got = 0;
	a.error_code = "InsufficientInstanceCapacity";
	a.error_class = "CAPACITY";
	a.message = "We currently do not have sufficient capacity";
	a.latency = 0.25;
	assert_int_equal(gb_state_attempt_finish(f->st, &a, &e), GB_E_OK);
	assert_int_equal(gb_state_attempt_finish(f->st, &a, &e), GB_E_BUSY);
	a.state = GB_ATTEMPT_STARTED;
	assert_int_equal(gb_state_attempt_finish(f->st, &a, &e), GB_E_INVALID);
	b.id = 4242;
	b.state = GB_ATTEMPT_OK;
	assert_int_equal(gb_state_attempt_finish(f->st, &b, &e), GB_E_NOTFOUND);

	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_attempt_list(f->st, NULL, att_cb, &s, &e),
			 GB_E_OK);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.token, "gb-tok-1");
	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_attempt_list(f->st, id, att_cb, &s, &e),
			 GB_E_OK);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.last.seq, 1);
	assert_int_equal(s.last.state, GB_ATTEMPT_STARTED);
	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_attempt_list(f->st, id, att_cb, &s, &e),
			 GB_E_OK);
}

struct inst_sink {
	struct gb_strv ids;
	char node[64];
	char ip[64];
	char reason[64];
	enum gb_instance_state state;
	double terminated_at;
};

static int inst_cb(const struct gb_instance *in, void *arg)
{
	struct inst_sink *s = arg;

	assert_int_equal(gb_strv_add(&s->ids, in->instance_id), GB_E_OK);
	gb_strlcpy(s->node, in->node ? in->node : "(null)", sizeof(s->node));
	gb_strlcpy(s->ip, in->private_ip ? in->private_ip : "(null)",
		   sizeof(s->ip));
	gb_strlcpy(s->reason, in->reason ? in->reason : "(null)",
		   sizeof(s->reason));
	s->state = in->state;
	s->terminated_at = in->terminated_at;
	return 0;
}

static size_t inst_n(gb_state_t *st, const struct gb_instance_filter *flt,
		     struct inst_sink *s)
{
	gb_error_t e = { 0 };

	gb_strv_free(&s->ids);
	if (gb_state_instance_list(st, flt, inst_cb, s, &e))
		fail_msg("instance list: %s", e.text);
	return s->ids.n;
}

static void test_instances(void **state)
{
	struct ts_fx *f = *state;
	struct gb_instance in = { 0 };
	struct gb_instance_filter flt = GB_INSTANCE_FILTER_ANY;
	struct inst_sink s = { { 0 } };
	static const struct {
		const char *region, *id, *node, *type;
	} rows[] = {
		{ "us-east-1", "i-001", "g5-1", "g5.xlarge" },
		{ "us-east-1", "i-002", "g5-2", "g5.xlarge" },
		{ "us-west-2", "i-003", "g5-3", "g5.xlarge" },
		{ "us-west-2", "i-004", "p4-1", "p4d.24xlarge" },
	};
	char id[17];
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_RUNNING, "g5-[1-3],p4-1", 0, id);
	in.request_id = id;
	in.state = GB_INST_RUNNING;
	in.private_ip = "10.0.0.1";
	for (size_t i = 0; i < GB_ARRAY_LEN(rows); i++) {
		in.region = rows[i].region;
		in.instance_id = rows[i].id;
		in.node = rows[i].node;
		in.instance_type = rows[i].type;
		in.launched_at = 1000 + (double)i;
		assert_int_equal(gb_state_instance_add(f->st, &in, &e), GB_E_OK);
	}
	/* the same key again */
	assert_int_equal(gb_state_instance_add(f->st, &in, &e), GB_E_EXISTS);
	assert_non_null(strstr(e.text, "us-west-2#i-004"));
	/* same instance id in another region is another instance */
	in.region = "eu-west-1";
	assert_int_equal(gb_state_instance_add(f->st, &in, &e), GB_E_OK);
	in.region = "bad#region";
	assert_int_equal(gb_state_instance_add(f->st, &in, &e), GB_E_INVALID);

	assert_int_equal(inst_n(f->st, &flt, &s), 5);
	assert_string_equal(s.ids.v[0], "i-001");	/* by launch time */
	flt.node = "g5-2";
	flt.alive = true;
	assert_int_equal(inst_n(f->st, &flt, &s), 1);
	assert_string_equal(s.ids.v[0], "i-002");
	flt = (struct gb_instance_filter)GB_INSTANCE_FILTER_ANY;
	flt.region = "us-west-2";
	assert_int_equal(inst_n(f->st, &flt, &s), 2);
	flt.instance_type = "p4d.24xlarge";
	assert_int_equal(inst_n(f->st, &flt, &s), 1);
	flt = (struct gb_instance_filter)GB_INSTANCE_FILTER_ANY;
	flt.instance_id = "i-004";
	assert_int_equal(inst_n(f->st, &flt, &s), 2);
	flt.request_id = "ffffffffffffffff";
	assert_int_equal(inst_n(f->st, &flt, &s), 0);
	flt = (struct gb_instance_filter)GB_INSTANCE_FILTER_ANY;
	flt.limit = 3;
	assert_int_equal(inst_n(f->st, &flt, &s), 3);

	/* terminate i-002: NULL strings keep node and IP */
	memset(&in, 0, sizeof(in));
	in.region = "us-east-1";
	in.instance_id = "i-002";
	in.state = GB_INST_TERMINATED;
	in.terminated_at = 2000;
	in.reason = "suspend";
	assert_int_equal(gb_state_instance_update(f->st, &in, &e), GB_E_OK);
	flt = (struct gb_instance_filter)GB_INSTANCE_FILTER_ANY;
	flt.instance_id = "i-002";
	assert_int_equal(inst_n(f->st, &flt, &s), 1);
	assert_string_equal(s.node, "g5-2");
	assert_string_equal(s.ip, "10.0.0.1");
	assert_string_equal(s.reason, "suspend");
	assert_int_equal(s.state, GB_INST_TERMINATED);
	assert_true(s.terminated_at == 2000);
	flt.instance_id = NULL;
	flt.node = "g5-2";
	flt.alive = true;
	assert_int_equal(inst_n(f->st, &flt, &s), 0);
	flt.alive = false;
	flt.state = GB_INST_TERMINATED;
	assert_int_equal(inst_n(f->st, &flt, &s), 1);
	flt = (struct gb_instance_filter)GB_INSTANCE_FILTER_ANY;
	flt.alive = true;
	assert_int_equal(inst_n(f->st, &flt, &s), 4);
	flt.state = 17;
	assert_int_equal(gb_state_instance_list(f->st, &flt, inst_cb, &s, &e),
			 GB_E_INVALID);

	in.instance_id = "i-999";
	assert_int_equal(gb_state_instance_update(f->st, &in, &e),
			 GB_E_NOTFOUND);
	gb_strv_free(&s.ids);
}

struct app_sink {
	int n;
	enum gb_approval_state state;
	char by[32];
	char comment[64];
	int64_t uid;
};

static void app_get_cb(const struct gb_approval *a, void *arg)
{
	struct app_sink *s = arg;

	s->n++;
	s->state = a->state;
	s->uid = a->decided_uid;
	gb_strlcpy(s->by, a->decided_by ? a->decided_by : "(null)",
		   sizeof(s->by));
	gb_strlcpy(s->comment, a->comment ? a->comment : "(null)",
		   sizeof(s->comment));
}

static int app_list_cb(const struct gb_approval *a, void *arg)
{
	app_get_cb(a, arg);
	return 0;
}

static void test_approvals(void **state)
{
	struct ts_fx *f = *state;
	struct gb_approval a = { 0 };
	struct app_sink s = { 0 };
	char id[17], id2[17];
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_PENDING_APPROVAL, "g5-[1-30]", 0,
		id);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_PENDING_APPROVAL, "g5-[31-60]",
		0, id2);
	a.request_id = id;
	a.state = GB_APPROVAL_PENDING;
	a.why = "30 instances > prod threshold 10";
	a.decided_uid = -1;
	a.expires_at = gb_time_now() + 3600;
	assert_int_equal(gb_state_approval_add(f->st, &a, &e), GB_E_OK);
	assert_int_equal(gb_state_approval_add(f->st, &a, &e), GB_E_EXISTS);
	a.request_id = id2;
	assert_int_equal(gb_state_approval_add(f->st, &a, &e), GB_E_OK);

	assert_int_equal(gb_state_approval_get(f->st, id, app_get_cb, &s, &e),
			 GB_E_OK);
	assert_int_equal(s.state, GB_APPROVAL_PENDING);
	assert_int_equal(s.uid, -1);
	assert_string_equal(s.by, "(null)");

	assert_int_equal(gb_state_approval_decide(f->st, id,
						  GB_APPROVAL_APPROVED, "alice",
						  1001, "go", &e),
			 GB_E_OK);
	assert_int_equal(gb_state_approval_decide(f->st, id, GB_APPROVAL_DENIED,
						  "bob", 1002, "no", &e),
			 GB_E_BUSY);
	assert_non_null(strstr(e.text, "approved by alice"));
	assert_int_equal(gb_state_approval_decide(f->st, "0000000000000000",
						  GB_APPROVAL_DENIED, "bob",
						  1002, "no", &e),
			 GB_E_NOTFOUND);
	assert_int_equal(gb_state_approval_decide(f->st, id2,
						  GB_APPROVAL_PENDING, "bob",
						  1002, "no", &e),
			 GB_E_INVALID);
	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_approval_get(f->st, id, app_get_cb, &s, &e),
			 GB_E_OK);
	assert_int_equal(s.state, GB_APPROVAL_APPROVED);
	assert_string_equal(s.by, "alice");
	assert_int_equal(s.uid, 1001);
	assert_string_equal(s.comment, "go");

	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_approval_list(f->st, GB_APPROVAL_PENDING,
						app_list_cb, &s, &e),
			 GB_E_OK);
	assert_int_equal(s.n, 1);
	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_approval_list(f->st, -1, app_list_cb, &s, &e),
			 GB_E_OK);
	assert_int_equal(s.n, 2);
	assert_int_equal(gb_state_approval_get(f->st, "1111111111111111",
					       app_get_cb, &s, &e),
			 GB_E_NOTFOUND);
	a.request_id = "2222222222222222";	/* no such request */
	assert_int_equal(gb_state_approval_add(f->st, &a, &e), GB_E_INVALID);
}

struct ev_sink {
	int n;
	char kinds[256];
	int64_t last_id;
};

static int ev_cb(const struct gb_event *ev, void *arg)
{
	struct ev_sink *s = arg;
	size_t len = strlen(s->kinds);

	assert_true(ev->id > s->last_id);
	assert_true(ev->at > 0);
	s->last_id = ev->id;
	s->n++;
	snprintf(s->kinds + len, sizeof(s->kinds) - len, "%s%s:%s",
		 len ? "," : "", ev->kind, ev->request_id ? "r" : "-");
	return 0;
}

static void test_events(void **state)
{
	struct ts_fx *f = *state;
	struct ev_sink s = { 0 };
	char id[17];
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, id);
	assert_int_equal(gb_state_event_add(f->st, id, "enqueue", "nodes=g5-1",
					    &e),
			 GB_E_OK);
	assert_int_equal(gb_state_event_add(f->st, NULL, "reconcile", NULL, &e),
			 GB_E_OK);
	assert_int_equal(gb_state_event_add(f->st, id, "plan",
					    "{\"planner\":\"heuristic\"}", &e),
			 GB_E_OK);
	assert_int_equal(gb_state_event_add(f->st, id, "", NULL, &e),
			 GB_E_INVALID);
	assert_int_equal(gb_state_event_add(f->st, id, NULL, NULL, &e),
			 GB_E_INVALID);

	assert_int_equal(gb_state_event_list(f->st, id, ev_cb, &s, &e), GB_E_OK);
	assert_string_equal(s.kinds, "enqueue:r,plan:r");
	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_event_list(f->st, NULL, ev_cb, &s, &e),
			 GB_E_OK);
	assert_string_equal(s.kinds, "enqueue:r,reconcile:-,plan:r");
}

/*****************************************************************************
 *  Offerings and capacity memory
 *****************************************************************************/

struct off_sink {
	int n;
	char az[4][32];
	bool offered[4];
	double at[4];
};

static int off_cb(const struct gb_offering *o, void *arg)
{
	struct off_sink *s = arg;

	if (s->n < 4) {
		gb_strlcpy(s->az[s->n], o->az ? o->az : "(null)", sizeof(s->az[0]));
		s->offered[s->n] = o->offered;
		s->at[s->n] = o->fetched_at;
	}
	s->n++;
	return 0;
}

static void test_offerings(void **state)
{
	struct off_sink ol;
	struct ts_fx *f = *state;
	bool offered = false;
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	assert_int_equal(gb_state_offering_put(f->st, "us-east-1", "us-east-1a",
					       "g5.xlarge", true, 1000, &e),
			 GB_E_OK);
	assert_int_equal(gb_state_offering_put(f->st, "us-east-1", NULL,
					       "g5.xlarge", false, 1000, &e),
			 GB_E_OK);
	/* fresh */
	assert_int_equal(gb_state_offering_get(f->st, "us-east-1", "us-east-1a",
					       "g5.xlarge", 900, &offered, &e),
			 GB_E_OK);
	assert_true(offered);
	assert_int_equal(gb_state_offering_get(f->st, "us-east-1", NULL,
					       "g5.xlarge", 1000, &offered, &e),
			 GB_E_OK);
	assert_false(offered);
	/* stale */
	assert_int_equal(gb_state_offering_get(f->st, "us-east-1", "us-east-1a",
					       "g5.xlarge", 1001, &offered, &e),
			 GB_E_NOTFOUND);
	assert_non_null(strstr(e.text, "stale"));
	/* absent */
	assert_int_equal(gb_state_offering_get(f->st, "us-east-1", "us-east-1b",
					       "g5.xlarge", 0, &offered, &e),
			 GB_E_NOTFOUND);
	assert_non_null(strstr(e.text, "not cached"));
	/* replaced */
	assert_int_equal(gb_state_offering_put(f->st, "us-east-1", "us-east-1a",
					       "g5.xlarge", false, 2000, &e),
			 GB_E_OK);
	assert_int_equal(gb_state_offering_get(f->st, "us-east-1", "us-east-1a",
					       "g5.xlarge", 1500, &offered, &e),
			 GB_E_OK);
	assert_false(offered);
	/* the listing: every row, stale ones too, a region-level one with az NULL */
	assert_int_equal(gb_state_offering_put(f->st, "us-east-1", NULL, "g5.xlarge",
					       true, 100, &e),
			 GB_E_OK);
	memset(&ol, 0, sizeof(ol));
	assert_int_equal(gb_state_offering_list(f->st, off_cb, &ol, &e), GB_E_OK);
	assert_int_equal(ol.n, 2);
	assert_string_equal(ol.az[0], "(null)");	/* '' sorts first */
	assert_true(ol.offered[0] && ol.at[0] == 100);
	assert_string_equal(ol.az[1], "us-east-1a");
	assert_false(ol.offered[1]);
}

struct cap_sink {
	int n;
	struct gb_capacity c[4];
	char az[4][32];
	char kind[4][32];		/* capacity */
};

static int cap_cb(const struct gb_capacity *c, void *arg)
{
	struct cap_sink *s = arg;

	if (s->n < 4) {
		s->c[s->n] = *c;
		gb_strlcpy(s->az[s->n], c->az ? c->az : "(null)",
			   sizeof(s->az[0]));
		gb_strlcpy(s->kind[s->n], c->capacity, sizeof(s->kind[0]));
		s->c[s->n].region = s->c[s->n].az = NULL;
		s->c[s->n].instance_type = s->c[s->n].capacity = NULL;
	}
	s->n++;
	return 0;
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static void test_capacity(void **state)
{
	struct ts_fx *f = *state;
	const double t0 = 1e9, hl = 3600;
	struct cap_sink s = { 0 };
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	/* an ICE: asked 4, got 0 */
	assert_int_equal(gb_state_capacity_record(f->st, "us-east-1",
						  "us-east-1a", "g5.xlarge", NULL, 4,
						  0, true, false, t0, hl, &e),
			 GB_E_OK);
	/* one half life later everything is halved; reading writes nothing */
	for (int i = 0; i < 2; i++) {
		memset(&s, 0, sizeof(s));
		assert_int_equal(gb_state_capacity_list(f->st, NULL, t0 + hl, hl,
							cap_cb, &s, &e),
				 GB_E_OK);
		assert_int_equal(s.n, 1);
		NEAR(s.c[0].ice, 0.5);
		NEAR(s.c[0].asked, 2.0);
		NEAR(s.c[0].got, 0);
		NEAR(s.c[0].last_ice_at, t0);
		NEAR(s.c[0].updated_at, t0);
		assert_string_equal(s.az[0], "us-east-1a");
	}
	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_capacity_list(f->st, NULL, t0 + 2 * hl, hl,
						cap_cb, &s, &e),
			 GB_E_OK);
	NEAR(s.c[0].ice, 0.25);

	/* record decays then adds: at t0+hl, asked 2 got 2 */
	assert_int_equal(gb_state_capacity_record(f->st, "us-east-1",
						  "us-east-1a", "g5.xlarge", NULL, 2,
						  2, false, false, t0 + hl, hl,
						  &e),
			 GB_E_OK);
	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_capacity_list(f->st, "g5.xlarge", t0 + hl, hl,
						cap_cb, &s, &e),
			 GB_E_OK);
	NEAR(s.c[0].asked, 4.0);
	NEAR(s.c[0].got, 2.0);
	NEAR(s.c[0].ice, 0.5);
	NEAR(s.c[0].last_success_at, t0 + hl);
	NEAR(s.c[0].updated_at, t0 + hl);

	/* a region-level row (no AZ), a failure, another type */
	assert_int_equal(gb_state_capacity_record(f->st, "us-west-2", NULL,
						  "p4d.24xlarge", NULL, 1, 1, false,
						  true, t0, hl, &e),
			 GB_E_OK);
	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_capacity_list(f->st, NULL, t0 + hl, hl,
						cap_cb, &s, &e),
			 GB_E_OK);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.az[1], "(null)");
	NEAR(s.c[1].failures, 0.5);
	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_capacity_list(f->st, "g5.xlarge", t0, hl,
						cap_cb, &s, &e),
			 GB_E_OK);
	assert_int_equal(s.n, 1);

	assert_int_equal(gb_state_capacity_record(f->st, "us-east-1", NULL,
						  "g5.xlarge", NULL, 1, 0, true,
						  false, t0, 0, &e),
			 GB_E_INVALID);
	assert_int_equal(gb_state_capacity_list(f->st, NULL, t0, -1, cap_cb, &s,
						&e),
			 GB_E_INVALID);
}

/* Levels and lower bounds decay with the row; record() decays them too. */
static void test_capacity_levels(void **state)
{
	struct ts_fx *f = *state;
	const double t0 = 1e9, hl = 3600;
	struct cap_sink s = { 0 };
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	/* dry at 3, then at 2; then a visit that gave the 2 it was asked */
	assert_int_equal(gb_state_capacity_level(f->st, "us-east-1", "us-east-1a",
						 "g5.xlarge", NULL, 3, true, t0, hl, &e),
			 GB_E_OK);
	assert_int_equal(gb_state_capacity_level(f->st, "us-east-1", "us-east-1a",
						 "g5.xlarge", NULL, 2, true, t0 + hl, hl, &e),
			 GB_E_OK);
	assert_int_equal(gb_state_capacity_level(f->st, "us-east-1", "us-east-1a",
						 "g5.xlarge", NULL, 2, false, t0 + hl, hl, &e),
			 GB_E_OK);
	assert_int_equal(gb_state_capacity_list(f->st, "g5.xlarge", t0 + hl, hl,
						cap_cb, &s, &e),
			 GB_E_OK);
	assert_int_equal(s.n, 1);
	NEAR(s.c[0].level_sum, 1.5 + 2);
	NEAR(s.c[0].level_n, 1.5);
	NEAR(s.c[0].floor_n, 1);	/* at least 2: under the levels, kept */
	NEAR(s.c[0].floor_sum, 2);
	NEAR(s.c[0].asked, 0);		/* the old counters are untouched */
	NEAR(s.c[0].ice, 0);
	/* a bound of 1 proves nothing new; one of 2 again confirms them */
	assert_int_equal(gb_state_capacity_level(f->st, "us-east-1", "us-east-1a",
						 "g5.xlarge", NULL, 1, false, t0 + hl, hl, &e),
			 GB_E_OK);
	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_capacity_list(f->st, NULL, t0 + hl, hl, cap_cb, &s, &e),
			 GB_E_OK);
	NEAR(s.c[0].floor_n, 1);
	assert_int_equal(gb_state_capacity_level(f->st, "us-east-1", "us-east-1a",
						 "g5.xlarge", NULL, 2, false, t0 + hl, hl, &e),
			 GB_E_OK);
	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_capacity_list(f->st, NULL, t0 + hl, hl, cap_cb, &s, &e),
			 GB_E_OK);
	NEAR(s.c[0].floor_n, 2);
	NEAR(s.c[0].floor_sum, 4);
	/* one of 4, over the levels (it holds more than when it ran dry), drops them */
	assert_int_equal(gb_state_capacity_level(f->st, "us-east-1", "us-east-1a",
						 "g5.xlarge", NULL, 4, false, t0 + hl, hl, &e),
			 GB_E_OK);
	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_capacity_list(f->st, NULL, t0 + hl, hl, cap_cb, &s, &e),
			 GB_E_OK);
	NEAR(s.c[0].level_n, 0);
	NEAR(s.c[0].floor_n, 3);
	NEAR(s.c[0].floor_sum, 12);
	/* a record() one half life later halves the bounds as well */
	assert_int_equal(gb_state_capacity_record(f->st, "us-east-1", "us-east-1a",
						  "g5.xlarge", NULL, 4, 2, true, false,
						  t0 + 2 * hl, hl, &e),
			 GB_E_OK);
	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_capacity_list(f->st, NULL, t0 + 2 * hl, hl,
						cap_cb, &s, &e),
			 GB_E_OK);
	NEAR(s.c[0].floor_n, 1.5);
	NEAR(s.c[0].floor_sum, 6);
	NEAR(s.c[0].ice, 1);
	/* a level under the bounds (it holds less now) drops them */
	assert_int_equal(gb_state_capacity_level(f->st, "us-east-1", "us-east-1a",
						 "g5.xlarge", NULL, 1, true, t0 + 2 * hl, hl, &e),
			 GB_E_OK);
	memset(&s, 0, sizeof(s));
	assert_int_equal(gb_state_capacity_list(f->st, NULL, t0 + 2 * hl, hl,
						cap_cb, &s, &e),
			 GB_E_OK);
	NEAR(s.c[0].floor_n, 0);
	NEAR(s.c[0].level_n, 1);
	NEAR(s.c[0].level_sum, 1);
	assert_int_equal(gb_state_capacity_level(f->st, "us-east-1", "us-east-1a",
						 "g5.xlarge", NULL, -1, true, t0, hl, &e),
			 GB_E_INVALID);
	assert_int_equal(gb_state_capacity_level(f->st, "us-east-1", "us-east-1a",
						 "g5.xlarge", NULL, 1, true, t0, 0, &e),
			 GB_E_INVALID);
}

struct quota_sink {
	int n;
	struct gb_quota q[4];
	char name[4][32], code[4][32];
};

static int quota_cb(const struct gb_quota *q, void *arg)
{
	struct quota_sink *s = arg;

	if (s->n < 4) {
		s->q[s->n] = *q;
		gb_strlcpy(s->name[s->n], q->quota, sizeof(s->name[0]));
		gb_strlcpy(s->code[s->n], q->code, sizeof(s->code[0]));
		s->q[s->n].region = s->q[s->n].quota = s->q[s->n].code = NULL;
	}
	s->n++;
	return 0;
}

static void test_quota_memory(void **state)
{
	struct ts_fx *f = *state;
	const double t0 = 1e9, hl = 3600;
	struct quota_sink s = { 0 };
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	assert_int_equal(gb_state_quota_record(f->st, "ap-south-1", "vcpus:G",
					       "VcpuLimitExceeded", 16, true, t0,
					       hl, &e),
			 GB_E_OK);
	assert_int_equal(gb_state_quota_record(f->st, "ap-south-1", "instances",
					       "InstanceLimitExceeded", 3, true,
					       t0, hl, &e),
			 GB_E_OK);
	/* one half life later a grant showed at least 24 (no refusal) */
	assert_int_equal(gb_state_quota_record(f->st, "ap-south-1", "vcpus:G",
					       "VcpuLimitExceeded", 24, false,
					       t0 + hl, hl, &e),
			 GB_E_OK);
	assert_int_equal(gb_state_quota_list(f->st, t0 + hl, hl, quota_cb, &s, &e),
			 GB_E_OK);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.name[0], "instances");
	assert_string_equal(s.code[0], "InstanceLimitExceeded");
	NEAR(s.q[0].limit_sum / s.q[0].limit_n, 3);
	NEAR(s.q[0].refusals, 0.5);
	assert_string_equal(s.name[1], "vcpus:G");
	NEAR(s.q[1].limit_sum, 8 + 24);
	NEAR(s.q[1].limit_n, 1.5);
	NEAR(s.q[1].refusals, 0.5);
	NEAR(s.q[1].last_refusal_at, t0);
	NEAR(s.q[1].updated_at, t0 + hl);
	/* bad input is refused, nothing is written */
	assert_int_equal(gb_state_quota_record(f->st, "ap-south-1", "", "X", 1,
					       true, t0, hl, &e),
			 GB_E_INVALID);
	assert_int_equal(gb_state_quota_record(f->st, "ap-south-1", "vcpus:G",
					       "VcpuLimitExceeded", -4, true, t0,
					       hl, &e),
			 GB_E_INVALID);
	assert_int_equal(gb_state_quota_list(f->st, t0, 0, quota_cb, &s, &e),
			 GB_E_INVALID);
}

/* A version 1 file (the first release's schema) is migrated, rows kept. */
struct spot_sink {
	int n, stop;
	char what[8][96];
	double at[8];			/* fetched_at */
};

static int spot_cb(const struct gb_spot_price *p, void *arg)
{
	struct spot_sink *s = arg;

	if (s->n < 8) {
		snprintf(s->what[s->n], sizeof(s->what[0]), "%s %s %s %g %g", p->region, p->az,
			 p->instance_type, p->usd_per_hour, p->seen_at);
		s->at[s->n] = p->fetched_at;
	}
	return ++s->n == s->stop;
}

static struct spot_sink spot_list(gb_state_t *st, const char *region)
{
	struct spot_sink s = { 0 };
	gb_error_t e = { 0 };

	assert_int_equal(gb_state_spot_price_list(st, region, spot_cb, &s, &e), GB_E_OK);
	return s;
}

/* A region's answer replaces its rows; a price per AZ, or the region's highest. */
static void test_spot_prices(void **state)
{
	static const char *const types[] = { "g5.xlarge", "p5.48xlarge" };
	const struct gb_spot_price east[] = {
		{ NULL, "us-east-1a", "g5.xlarge", 0.42, 900, 0 },
		{ "us-east-1", "us-east-1b", "g5.xlarge", 0.61, 800, 0 },
		/* a pool twice: the later price wins, whatever the order */
		{ NULL, "us-east-1a", "g5.xlarge", 0.40, 850, 0 },
	};
	const struct gb_spot_price west[] = { { NULL, "us-west-2c", "g5.xlarge", 0.5, 700, 0 } };
	struct gb_spot_price p, bad;
	struct ts_fx *f = *state;
	struct spot_sink s;
	gb_error_t e = { 0 };
	double at = -1;

	f->st = open_ok(f->path);
	assert_int_equal(gb_state_spot_price_get(f->st, "us-east-1", NULL, "g5.xlarge", &p, &e),
			 GB_E_NOTFOUND);
	assert_int_equal(gb_state_spot_prices_fetched(f->st, "us-east-1", "g5.xlarge", &at, &e),
			 GB_E_NOTFOUND);
	assert_int_equal(gb_state_spot_prices_replace(f->st, "us-east-1", types, 2, east, 3, 1000,
						      &e),
			 GB_E_OK);
	assert_int_equal(gb_state_spot_prices_replace(f->st, "us-west-2", types, 1, west, 1, 2000,
						      &e),
			 GB_E_OK);
	s = spot_list(f->st, NULL);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.what[0], "us-east-1 us-east-1a g5.xlarge 0.42 900");
	assert_string_equal(s.what[1], "us-east-1 us-east-1b g5.xlarge 0.61 800");
	assert_string_equal(s.what[2], "us-west-2 us-west-2c g5.xlarge 0.5 700");
	NEAR(s.at[0], 1000);
	NEAR(s.at[2], 2000);
	assert_int_equal(spot_list(f->st, "us-west-2").n, 1);

	/* an AZ's own price; no AZ: the highest of the region's */
	assert_int_equal(gb_state_spot_price_get(f->st, "us-east-1", "us-east-1a", "g5.xlarge",
						 &p, &e),
			 GB_E_OK);
	NEAR(p.usd_per_hour, 0.42);
	NEAR(p.seen_at, 900);
	NEAR(p.fetched_at, 1000);
	assert_string_equal(p.az, "us-east-1a");
	assert_int_equal(gb_state_spot_price_get(f->st, "us-east-1", NULL, "g5.xlarge", &p, &e),
			 GB_E_OK);
	NEAR(p.usd_per_hour, 0.61);
	NEAR(p.seen_at, 800);
	assert_null(p.az);
	assert_int_equal(gb_state_spot_price_get(f->st, "us-east-1", "us-east-1c", "g5.xlarge",
						 &p, &e),
			 GB_E_NOTFOUND);
	assert_non_null(strstr(e.text, "us-east-1c"));
	/* asked for and none: fetched all the same */
	assert_int_equal(gb_state_spot_price_get(f->st, "us-east-1", NULL, "p5.48xlarge", &p,
						 &e),
			 GB_E_NOTFOUND);
	assert_int_equal(gb_state_spot_prices_fetched(f->st, "us-east-1", "p5.48xlarge", &at,
						      &e),
			 GB_E_OK);
	NEAR(at, 1000);
	assert_int_equal(gb_state_spot_prices_fetched(f->st, "us-west-2", "p5.48xlarge", &at,
						      &e),
			 GB_E_NOTFOUND);

	/* replaced: the region's rows and notes go, the other region's stay; 0 is now */
	assert_int_equal(gb_state_spot_prices_replace(f->st, "us-east-1", &types[1], 1, NULL, 0,
						      0, &e),
			 GB_E_OK);
	assert_int_equal(spot_list(f->st, "us-east-1").n, 0);
	assert_int_equal(spot_list(f->st, NULL).n, 1);
	assert_int_equal(gb_state_spot_prices_fetched(f->st, "us-east-1", "g5.xlarge", &at, &e),
			 GB_E_NOTFOUND);
	assert_int_equal(gb_state_spot_prices_fetched(f->st, "us-east-1", "p5.48xlarge", &at,
						      &e),
			 GB_E_OK);
	assert_true(at > 1.5e9);
	s = (struct spot_sink){ .stop = 1 };
	assert_int_equal(gb_state_spot_prices_replace(f->st, "us-east-1", types, 1, east, 2, 3000,
						      &e),
			 GB_E_OK);
	assert_int_equal(gb_state_spot_price_list(f->st, NULL, spot_cb, &s, &e), GB_E_OK);
	assert_int_equal(s.n, 1);

	/* bad input: refused before anything is written */
#define REFUSED(field, value, needle) \
	do { \
		bad = west[0]; \
		bad.field = value; \
		assert_int_equal(gb_state_spot_prices_replace(f->st, "us-west-2", types, 1, &bad, \
							      1, 4000, &e), \
				 GB_E_INVALID); \
		assert_non_null(strstr(e.text, needle)); \
	} while (0)
	REFUSED(az, NULL, "required");
	REFUSED(instance_type, "", "required");
	REFUSED(region, "us-east-1", "us-east-1");
	REFUSED(usd_per_hour, 0, "invalid price");
	REFUSED(usd_per_hour, -1, "invalid price");
	REFUSED(usd_per_hour, NAN, "invalid price");
	REFUSED(seen_at, INFINITY, "invalid price");
#undef REFUSED
	assert_int_equal(gb_state_spot_prices_replace(f->st, "", types, 1, west, 1, 0, &e),
			 GB_E_INVALID);
	assert_int_equal(gb_state_spot_prices_replace(f->st, "us-west-2", NULL, 1, west, 1, 0,
						      &e),
			 GB_E_INVALID);
	assert_int_equal(gb_state_spot_price_get(f->st, "us-west-2", "", "g5.xlarge", &p, &e),
			 GB_E_INVALID);
	s = spot_list(f->st, "us-west-2");
	assert_int_equal(s.n, 1);
	NEAR(s.at[0], 2000);
	/* read-only: reads, no writes */
	{
		gb_state_t *ro = NULL;

		assert_int_equal(gb_state_open(f->path, GB_STATE_RDONLY, 1000, &ro, &e), GB_E_OK);
		assert_int_equal(gb_state_spot_prices_replace(ro, "us-west-2", NULL, 0, NULL, 0, 0,
							      &e),
				 GB_E_INVALID);
		assert_int_equal(gb_state_spot_price_get(ro, "us-west-2", "us-west-2c", "g5.xlarge",
							 &p, &e),
				 GB_E_OK);
		NEAR(p.usd_per_hour, 0.5);
		gb_state_close(ro);
	}
}

static void test_migrate_v1(void **state)
{
	struct ts_fx *f = *state;
	struct cap_sink s = { 0 };
	sqlite3 *db = NULL;
	gb_error_t e = { 0 };
	char *msg = NULL, dir[300];

	snprintf(dir, sizeof(dir), "%s/lib/gpuburst", f->dir);
	assert_int_equal(gb_mkdir_p(dir, 0750, &e), GB_E_OK);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, gb_state_migrations[1], NULL, NULL, &msg),
			 SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
				      "INSERT INTO capacity_stats (region, az, instance_type, "
				      "asked, got, ice, updated_at) VALUES ('ap-south-1', "
				      "'ap-south-1a', 'g5.xlarge', 4, 3, 1, 1e9);"
				      "PRAGMA user_version = 1;", NULL, NULL, &msg),
			 SQLITE_OK);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
	f->st = open_ok(f->path);
	assert_int_equal(gb_state_schema_version(f->st), GB_STATE_SCHEMA_VERSION);
	assert_int_equal(gb_state_capacity_list(f->st, NULL, 1e9, 3600, cap_cb, &s,
						&e),
			 GB_E_OK);
	assert_int_equal(s.n, 1);
	NEAR(s.c[0].got, 3);
	NEAR(s.c[0].level_n, 0);
	NEAR(s.c[0].floor_n, 0);
	assert_int_equal(gb_state_quota_record(f->st, "ap-south-1", "instances",
					       "InstanceLimitExceeded", 0, true, 1e9,
					       3600, &e),
			 GB_E_OK);
	assert_int_equal(gb_state_check(f->st, &e), GB_E_OK);
}

/*****************************************************************************
 *  Names, integrity
 *****************************************************************************/

/*
 * Every value of every GB_*_MAP: its name, the name parsed back to the same
 * value, one past the last value named "invalid", and names the map does not
 * hold rejected.  The cases come from the maps themselves, so a value added
 * to a map is walked without touching this test.
 */
struct name_case {
	int value;
	const char *name;
};

#define WALK_MAP(MAP, CASE, type, count, name_fn, parse_fn) \
	do { \
		static const struct name_case cases[] = { \
			MAP(CASE, GB_STATE_NO_SEP) \
		}; \
		type v; \
		assert_int_equal(GB_ARRAY_LEN(cases), count); \
		for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) { \
			assert_int_equal(cases[i].value, (int)i); \
			assert_string_equal(name_fn((type)cases[i].value), \
					    cases[i].name); \
			assert_int_equal(parse_fn(cases[i].name, &v), GB_E_OK); \
			assert_int_equal((int)v, cases[i].value); \
		} \
		assert_string_equal(name_fn((type)(count)), "invalid"); \
		assert_string_equal(name_fn((type)-1), "invalid"); \
		assert_int_equal(parse_fn("invalid", &v), GB_E_INVALID); \
		assert_int_equal(parse_fn("", &v), GB_E_INVALID); \
		assert_int_equal(parse_fn(NULL, &v), GB_E_INVALID); \
	} while (0)

#define REQ_CASE(value, name) { GB_REQ_##value, #name },
#define RSTATE_CASE(value, name) { GB_RSTATE_##value, #name },
#define RESULT_CASE(value, name) { GB_RESULT_##value, #name },
#define ATTEMPT_CASE(value, name) { GB_ATTEMPT_##value, #name },
#define INST_CASE(value, name) { GB_INST_##value, #name },
#define APPROVAL_CASE(value, name) { GB_APPROVAL_##value, #name },

static void test_names(void **state)
{
	enum gb_request_state rs;

	(void)state;
	WALK_MAP(GB_REQUEST_KIND_MAP, REQ_CASE, enum gb_request_kind,
		 GB_REQUEST_KIND_COUNT, gb_request_kind_name,
		 gb_request_kind_parse);
	WALK_MAP(GB_REQUEST_STATE_MAP, RSTATE_CASE, enum gb_request_state,
		 GB_REQUEST_STATE_COUNT, gb_request_state_name,
		 gb_request_state_parse);
	WALK_MAP(GB_REQUEST_RESULT_MAP, RESULT_CASE, enum gb_request_result,
		 GB_REQUEST_RESULT_COUNT, gb_request_result_name,
		 gb_request_result_parse);
	WALK_MAP(GB_ATTEMPT_STATE_MAP, ATTEMPT_CASE, enum gb_attempt_state,
		 GB_ATTEMPT_STATE_COUNT, gb_attempt_state_name,
		 gb_attempt_state_parse);
	WALK_MAP(GB_INSTANCE_STATE_MAP, INST_CASE, enum gb_instance_state,
		 GB_INSTANCE_STATE_COUNT, gb_instance_state_name,
		 gb_instance_state_parse);
	WALK_MAP(GB_APPROVAL_STATE_MAP, APPROVAL_CASE, enum gb_approval_state,
		 GB_APPROVAL_STATE_COUNT, gb_approval_state_name,
		 gb_approval_state_parse);

	/* the stored text itself, spelled out: the maps must not drift */
	assert_string_equal(gb_request_state_name(GB_RSTATE_PENDING_APPROVAL),
			    "pending_approval");
	assert_string_equal(gb_request_kind_name(GB_REQ_RESUME_FAIL),
			    "resume_fail");
	assert_int_equal(gb_request_state_parse("Queued", &rs), GB_E_INVALID);
	assert_int_equal(gb_request_state_parse("queued ", &rs), GB_E_INVALID);
}

/*
 * The CHECK lists as released (versions 1 and 3), typed out by hand: the
 * text GB_STATE_SQL_IN() generates from the maps must be these bytes, or new
 * files would differ from existing ones (and a new value needs a migration).
 * Version 9 rewrites them as comparisons (test_migrate_checks_as_or).
 */
static void test_schema_check_text(void **state)
{
	static const struct {
		int version;
		const char *table;
		const char *check;
	} released[] = {
		{ 1, "requests", "  kind          TEXT NOT NULL CHECK (kind IN\n"
		  "                ('resume', 'suspend', 'resume_fail', 'terminate')),\n" },
		{ 1, "requests", "  state         TEXT NOT NULL CHECK (state IN\n"
		  "                ('pending_approval', 'queued', 'running', 'done', 'failed',\n"
		  "                 'denied', 'expired', 'cancelled')),\n" },
		{ 1, "requests", "  result        TEXT NOT NULL DEFAULT 'none' CHECK (result IN\n"
		  "                ('none', 'success', 'partial', 'failed')),\n" },
		{ 1, "attempts", "  state         TEXT NOT NULL CHECK (state IN\n"
		  "                ('started', 'ok', 'failed', 'unknown')),\n" },
		{ 1, "instances", "  state              TEXT NOT NULL CHECK (state IN\n"
		  "                     ('pending', 'running', 'terminating', 'terminated', 'lost')),\n" },
		{ 1, "approvals", "  state        TEXT NOT NULL CHECK (state IN\n"
		  "               ('pending', 'approved', 'denied', 'expired')),\n" },
		{ 3, "capacity_stats", "  capacity        TEXT NOT NULL DEFAULT 'on-demand' "
		  "CHECK (capacity IN\n"
		  "                  ('on-demand', 'spot', 'reservation', 'capacity-block')),\n" },
		{ 3, "attempts", "capacity        TEXT NOT NULL DEFAULT 'on-demand' "
		  "CHECK (capacity IN\n"
		  "                  ('on-demand', 'spot', 'reservation', 'capacity-block'))" },
		{ 3, "instances", "capacity        TEXT NOT NULL DEFAULT 'on-demand' "
		  "CHECK (capacity IN\n"
		  "                  ('on-demand', 'spot', 'reservation', 'capacity-block'))" },
		{ 3, "capacity_reservations", "  kind          TEXT NOT NULL CHECK (kind IN\n"
		  "                ('reservation', 'capacity-block')),\n" },
		{ 3, "capacity_reservations", "  match         TEXT NOT NULL CHECK (match IN\n"
		  "                ('open', 'targeted')),\n" },
	};
	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(released); i++)
		assert_non_null(strstr(gb_state_migrations[released[i].version],
				       released[i].check));
	assert_string_equal(GB_STATE_SQL_IN(GB_REQUEST_KIND_MAP),
			    "('resume', 'suspend', 'resume_fail', 'terminate')");
	assert_string_equal(GB_STATE_SQL_IN(GB_CAPACITY_KIND_MAP),
			    "('on-demand', 'spot', 'reservation', 'capacity-block')");
}

/*
 * Schema version 9 writes the CHECK lists of more than two values as
 * comparisons: a new file and a version 8 file with rows end with the same
 * table text, without one such list left, and the checks still refuse what
 * they refused (NULL still passes, as it did).
 */
static void test_migrate_checks_as_or(void **state)
{
	static const char *const tables[] = {
		"requests", "plans", "attempts", "instances", "approvals",
		"offerings_cache", "capacity_stats", "capacity_reservations",
	};
	struct ts_fx *f = *state;
	char old[300], *fresh_sql[GB_ARRAY_LEN(tables)];
	gb_error_t e = { 0 };
	gb_state_t *st;

	f->st = open_ok(f->path);
	for (size_t i = 0; i < GB_ARRAY_LEN(tables); i++)
		fresh_sql[i] = ts_table_sql(f->path, tables[i]);
	snprintf(old, sizeof(old), "%s.v8", f->path);
	for (int v = 1; v <= 8; v++)
		ts_sql(old, gb_state_migrations[v]);
	ts_sql(old, "INSERT INTO requests (id, kind, state, created_at, updated_at) "
	       "VALUES ('00000000000000aa', 'resume', 'queued', 1, 1);"
	       "PRAGMA user_version = 8;");
	assert_int_equal(gb_state_open(old, 0, 1000, &st, &e), GB_E_OK);
	assert_int_equal(gb_state_schema_version(st), GB_STATE_SCHEMA_VERSION);
	for (size_t i = 0; i < GB_ARRAY_LEN(tables); i++) {
		char *sql = ts_table_sql(old, tables[i]);

		char *again = gb_state_checks_as_or(sql);

		assert_string_equal(sql, fresh_sql[i]);
		if (strcmp(again, sql) != 0)
			fail_msg("%s: a CHECK list is left:\n%s", tables[i], sql);
		free(again);
		free(sql);
		free(fresh_sql[i]);
	}
	{
		char *sql = ts_table_sql(old, "requests");

		assert_non_null(strstr(sql, "CHECK ((kind = 'resume' OR kind = 'suspend' OR "
				       "kind = 'resume_fail' OR kind = 'terminate'))"));
		free(sql);
	}
	assert_int_equal(gb_state_check(st, &e), GB_E_OK);
	gb_state_close(st);
	/* and the indexes of versions 10 and 11 */
	assert_int_equal(ts_int(old, "SELECT count(*) FROM sqlite_master WHERE type = 'index' "
				"AND name IN ('requests_state', 'requests_queued_term', "
				"'instances_launched')"), 3);
	assert_int_equal(ts_int(old, "SELECT count(*) FROM sqlite_master "
				"WHERE name = 'requests_claim'"), 0);
	assert_int_not_equal(ts_sql_rc(old, "UPDATE requests SET state = 'bogus'"), 0);
	assert_int_not_equal(ts_sql_rc(old, "UPDATE requests SET kind = 'Resume'"), 0);
	assert_int_equal(ts_sql_rc(old, "UPDATE requests SET state = 'done', result = 'success'"),
			 0);
}

/* The rewrite of one table's text: only lists of more than two literals. */
static void test_checks_as_or_text(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "CREATE TABLE t (a TEXT CHECK (a IN ('x', 'y', 'z')))",
		  "CREATE TABLE t (a TEXT CHECK ((a = 'x' OR a = 'y' OR a = 'z')))" },
		{ "CREATE TABLE t (a TEXT CHECK (a IN\n   ('x',\n 'y', 'it''s')))",
		  "CREATE TABLE t (a TEXT CHECK ((a = 'x' OR a = 'y' OR a = 'it''s')))" },
		/* two values, numbers, NOT IN, a list inside a literal: kept */
		{ "CREATE TABLE t (a CHECK (a IN ('x', 'y')), b CHECK (b IN (0, 1, 2)))", NULL },
		{ "CREATE TABLE t (a CHECK (a NOT IN ('x', 'y', 'z')))", NULL },
		{ "CREATE TABLE t (a DEFAULT 'b IN (''x'', ''y'', ''z'')')", NULL },
		{ "CREATE TABLE t (a CHECK (a IN ('x', 'y', 'z'", NULL },
	};

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		char *out = gb_state_checks_as_or(cases[i].in);

		assert_non_null(out);
		assert_string_equal(out, cases[i].out ? cases[i].out : cases[i].in);
		free(out);
	}
}

static void test_check_finds_damage(void **state)
{
	struct ts_fx *f = *state;
	gb_error_t e = { 0 };
	sqlite3 *db = NULL;

	f->st = open_ok(f->path);
	assert_int_equal(gb_state_check(f->st, &e), GB_E_OK);
	/* a hand edit with foreign keys off leaves an orphan plan */
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
				      "INSERT INTO plans (request_id, version, "
				      "planner, status, created_at) VALUES "
				      "('0123456789abcdef', 1, 'x', 'used', 0)",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(gb_state_check(f->st, &e), GB_E_STATE);
	assert_non_null(strstr(e.text, "foreign key"));
	assert_non_null(strstr(e.text, "plans"));
}

/*****************************************************************************
 *  Concurrency: separate processes, separate handles
 *****************************************************************************/

#define ENQUEUE_EACH 1000
#define CLAIM_TOTAL 200

/*
 * Start line for two children: each reports "ready" (its handle is open)
 * on one pipe, then waits for the parent to close the other, so that their
 * writes overlap instead of the first child finishing before the second
 * has opened the file.
 */
struct barrier {
	int ready[2];
	int go[2];
};

static void barrier_init(struct barrier *b)
{
	assert_int_equal(pipe(b->ready), 0);
	assert_int_equal(pipe(b->go), 0);
}

static void barrier_child(struct barrier *b)
{
	char c = 'r';

	close(b->ready[0]);
	close(b->go[1]);
	if (write(b->ready[1], &c, 1) != 1 || read(b->go[0], &c, 1) != 0)
		_exit(3);
}

static void barrier_release(struct barrier *b, int children)
{
	char c;

	close(b->ready[1]);
	close(b->go[0]);
	for (int i = 0; i < children; i++)
		assert_int_equal(read(b->ready[0], &c, 1), 1);
	close(b->go[1]);
	close(b->ready[0]);
}

/* Child: open the (maybe not yet existing) file, enqueue, one tx each. */
static int child_enqueue(const char *path, int who, struct barrier *b)
{
	gb_state_t *st = NULL;
	gb_error_t e = { 0 };
	char nodes[32];

	if (gb_state_open(path, 0, BUSY_MS, &st, &e)) {
		fprintf(stderr, "child %d: open: %s\n", who, e.text);
		return 1;
	}
	barrier_child(b);
	for (int i = 0; i < ENQUEUE_EACH; i++) {
		struct gb_request r = { .id = "" };

		snprintf(nodes, sizeof(nodes), "c%d-[%d-%d]", who, 2 * i,
			 2 * i + 1);
		r.kind = GB_REQ_RESUME;
		r.state = GB_RSTATE_QUEUED;
		r.nodes = nodes;
		r.node_count = 2;
		if (gb_state_request_add(st, &r, &e)) {
			fprintf(stderr, "child %d: add %d: %s\n", who, i,
				e.text);
			gb_state_close(st);
			return 1;
		}
	}
	gb_state_close(st);
	return 0;
}

static void wait_ok(pid_t pid)
{
	int status = 0;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* How often consecutive rows come from different children (diagnostic). */
static int alternations(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	int n = 0;
	char prev = 0;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db,
					    "SELECT nodes FROM requests "
					    "ORDER BY rowid",
					    -1, &s, NULL),
			 SQLITE_OK);
	while (sqlite3_step(s) == SQLITE_ROW) {
		char who = (char)sqlite3_column_text(s, 0)[1];

		n += prev && who != prev;
		prev = who;
	}
	sqlite3_finalize(s);
	sqlite3_close(db);
	return n;
}

static void test_concurrent_enqueue(void **state)
{
	struct ts_fx *f = *state;
	struct gb_request_filter flt = GB_REQUEST_FILTER_ANY;
	struct id_list l = { { 0 }, 0 };
	struct barrier b;
	pid_t pid[2];
	double t0;
	gb_error_t e = { 0 };

	/* both children race on creating and migrating the file, too */
	barrier_init(&b);
	for (int i = 0; i < 2; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0)
			_exit(child_enqueue(f->path, i, &b));
	}
	barrier_release(&b, 2);
	t0 = gb_time_mono();
	for (int i = 0; i < 2; i++)
		wait_ok(pid[i]);
	fprintf(stderr,
		"# concurrent enqueue: 2 processes x %d transactions in %.2f s\n",
		ENQUEUE_EACH, gb_time_mono() - t0);

	f->st = open_ok(f->path);
	fprintf(stderr, "# concurrent enqueue: writers alternated %d times\n",
		alternations(f->path));
	assert_int_equal(count(f->st, -1), 2 * ENQUEUE_EACH);
	assert_int_equal(count(f->st, GB_RSTATE_QUEUED), 2 * ENQUEUE_EACH);
	assert_int_equal(gb_state_check(f->st, &e), GB_E_OK);
	assert_int_equal(gb_state_schema_version(f->st), GB_STATE_SCHEMA_VERSION);
	flt.node = "c1-1999";
	assert_int_equal(list_n(f->st, &flt, &l), 1);
	flt.node = "c0-0";
	assert_int_equal(list_n(f->st, &flt, &l), 1);
	gb_strv_free(&l.ids);
}

/* Child: claim until nothing is left, log each id, finish it. */
static int child_claim(const char *path, const char *log, struct barrier *b)
{
	struct req_copy c;
	gb_state_t *st = NULL;
	gb_error_t e = { 0 };
	gb_err_t rc;
	FILE *fp = fopen(log, "w");

	if (!fp || gb_state_open(path, 0, BUSY_MS, &st, &e)) {
		fprintf(stderr, "claimer: open: %s\n", e.text);
		return 1;
	}
	barrier_child(b);
	for (;;) {
		memset(&c, 0, sizeof(c));
		rc = gb_state_request_claim(st, getpid(), 0, req_sink, &c, &e);
		if (rc == GB_E_NOTFOUND)
			break;
		usleep(300);	/* "the launch": a worker is not always in a tx */
		if (rc || fprintf(fp, "%s\n", c.id) < 0 ||
		    gb_state_request_finish(st, c.id, GB_RSTATE_DONE,
					    GB_RESULT_SUCCESS, 1, NULL, &e)) {
			fprintf(stderr, "claimer: %s\n", e.text);
			gb_state_close(st);
			fclose(fp);
			return 1;
		}
	}
	gb_state_close(st);
	return fclose(fp) == 0 ? 0 : 1;
}

static int claimed_cb(const struct gb_request *r, void *arg)
{
	int *bad = arg;

	if (r->state != GB_RSTATE_DONE || r->claims != 1)
		(*bad)++;
	return 0;
}

static void test_concurrent_claim(void **state)
{
	struct ts_fx *f = *state;
	struct gb_strv seen = { 0 };
	char log[2][200], line[64];
	size_t per[2] = { 0, 0 };
	struct barrier b;
	pid_t pid[2];
	int bad = 0;
	gb_error_t e = { 0 };

	f->st = open_ok(f->path);
	assert_int_equal(gb_state_tx_begin(f->st, &e), GB_E_OK);
	for (int i = 0; i < CLAIM_TOTAL; i++)
		add_req(f->st, GB_REQ_RESUME, GB_RSTATE_QUEUED, "g5-1", 0, NULL);
	assert_int_equal(gb_state_tx_commit(f->st, &e), GB_E_OK);
	gb_state_close(f->st);
	f->st = NULL;

	barrier_init(&b);
	for (int i = 0; i < 2; i++) {
		snprintf(log[i], sizeof(log[i]), "%s/claimed.%d", f->dir, i);
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0)
			_exit(child_claim(f->path, log[i], &b));
	}
	barrier_release(&b, 2);
	for (int i = 0; i < 2; i++)
		wait_ok(pid[i]);

	for (int i = 0; i < 2; i++) {
		FILE *fp = fopen(log[i], "r");

		assert_non_null(fp);
		while (fgets(line, sizeof(line), fp)) {
			line[strcspn(line, "\n")] = '\0';
			assert_int_equal(gb_strv_find(&seen, line), -1);
			assert_int_equal(gb_strv_add(&seen, line), GB_E_OK);
			per[i]++;
		}
		fclose(fp);
	}
	fprintf(stderr, "# concurrent claim: %zu + %zu of %d\n", per[0],
		per[1], CLAIM_TOTAL);
	assert_int_equal(seen.n, CLAIM_TOTAL);	/* each exactly once */
	gb_strv_free(&seen);

	f->st = open_ok(f->path);
	assert_int_equal(count(f->st, GB_RSTATE_DONE), CLAIM_TOTAL);
	assert_int_equal(gb_state_request_list(f->st, NULL, claimed_cb, &bad,
					       &e),
			 GB_E_OK);
	assert_int_equal(bad, 0);
	assert_int_equal(gb_state_check(f->st, &e), GB_E_OK);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, ts_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_open_modes_umask022),
		T(test_open_modes_umask077),
		T(test_open_wal_and_reopen),
		T(test_open_newer_schema),
		T(test_open_rdonly),
		T(test_open_no_create),
		T(test_rdonly_group_reader),
		T(test_mode_safe),
		T(test_open_tightens_modes),
		T(test_open_refuses_untightenable),
		T(test_open_shared_dir),
		T(test_open_not_a_database),
		T(test_request_add_get),
		T(test_request_claim),
		T(test_request_families),
		T(test_request_transitions),
		T(test_requeue_stale),
		T(test_request_list),
		T(test_job_node_lists),
		T(test_request_deferred_index),
		T(test_callback_reentry_and_stmt_cache),
		T(test_transactions),
		T(test_read_snapshot),
		T(test_busy),
		T(test_plans),
		T(test_attempts),
		T(test_instances),
		T(test_approvals),
		T(test_events),
		T(test_offerings),
		T(test_capacity),
		T(test_capacity_levels),
		T(test_quota_memory),
		T(test_spot_prices),
		T(test_migrate_v1),
		cmocka_unit_test(test_names),
		T(test_schema_check_text),
		T(test_migrate_checks_as_or),
		cmocka_unit_test(test_checks_as_or_text),
		T(test_check_finds_damage),
		T(test_concurrent_enqueue),
		T(test_concurrent_claim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
