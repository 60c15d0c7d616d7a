/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * budget.c - policy.budgets against the spend summary <state_dir>/spend
 *
 * Spend is computed from the state file (libpolicy, by reconcile and the
 * worker) and written here as a small summary: per budget scope, the US
 * dollars spent in the current calendar month.  The job_submit plugin
 * reads the summary (re-read when it changes, never the state file) and
 * asks gb_budget_over() about each job it routes.  The format is in
 * gb_conf.h; gpuburst.yaml(5), BUDGETS, is the user-facing description.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf_int.h"
#include "gb_util.h"

#define MAGIC "gpuburst-spend 1"
#define LINE_MAX_ 256

#define N_SCOPES 4	/* enum gb_budget_scope */

double gb_spend_month(double t, char *buf, size_t n)
{
	time_t when = (time_t)t;
	struct tm tm;

	if (n)
		buf[0] = '\0';
	if (!gmtime_r(&when, &tm))
		return 0;
	if (n)
		strftime(buf, n, "%Y-%m", &tm);
	tm.tm_mday = 1;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	return (double)timegm(&tm);
}

void gb_spend_clear(struct gb_spend_summary *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int entry_cmp(const void *a, const void *b)
{
	const struct gb_spend_entry *x = a, *y = b;

	if (x->scope != y->scope)
		return (int)x->scope - (int)y->scope;
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	return n && n <= 64 && !strpbrk(s, " \t#") && conf_tf_printable(s);
}

static gb_err_t bad(gb_error_t *err, const char *path, unsigned line, const char *what)
{
	return gb_errorf(err, GB_E_INVALID, "spend summary %s:%u: %s", path, line, what);
}

/* One "scope name usd" line into [e]. */
static gb_err_t parse_entry(char *s, const char *path, unsigned line,
			    struct gb_spend_entry *e, gb_error_t *err)
{
	char *f[4], *end;
	int n = conf_tf_split(s, f, 4), k;

	if (n != 3)
		return bad(err, path, line, "expected 3 fields (scope name usd)");
	for (k = 0; k < N_SCOPES; k++) {
		if (strcmp(f[0], gb_conf_budget_scope_name((enum gb_budget_scope)k)) == 0)
			break;
	}
	if (k == N_SCOPES)
		return bad(err, path, line, "the scope is not cluster, account, partition or user");
	e->scope = (enum gb_budget_scope)k;
	if ((e->scope == GB_BUDGET_CLUSTER) != (strcmp(f[1], "-") == 0) ||
	    (e->scope != GB_BUDGET_CLUSTER && !name_ok(f[1])))
		return bad(err, path, line, "the name is not '-' for the cluster, else a Slurm name");
	errno = 0;
	e->usd = strtod(f[2], &end);
	if (errno || end == f[2] || *end || !isfinite(e->usd) || e->usd < 0)
		return bad(err, path, line, "the amount is not a number of US dollars");
	e->name = NULL;
	if (e->scope != GB_BUDGET_CLUSTER && !(e->name = strdup(f[1])))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	return GB_E_OK;
}

gb_err_t gb_spend_read(const char *path, struct gb_spend_summary *out, gb_error_t *err)
{
	char *text = NULL, *p, *end, *line, *rest;
	struct tm tm = { 0 };
	unsigned ln = 0;
	size_t len = 0, cap = 0;
	gb_err_t rc;

	memset(out, 0, sizeof(*out));
	rc = gb_file_read(path, GB_SPEND_MAX_BYTES, &text, &len, err);
	if (rc == GB_E_NOTFOUND)
		return GB_E_OK;
	if (rc)
		return rc;
	if (memchr(text, '\0', len)) {
		rc = bad(err, path, 0, "the file contains a NUL byte");
		goto out;
	}
	for (p = text, end = text + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		line = p;
		if (nl)
			*nl = '\0';
		p = nl ? nl + 1 : end;	/* before the fields are split in place */
		ln++;
		if (strlen(line) > LINE_MAX_) {
			rc = bad(err, path, ln, "the line is too long");
			goto out;
		}
		if (ln == 1 && strcmp(line, MAGIC) != 0) {
			rc = bad(err, path, ln, "the first line is not \"" MAGIC "\"");
			goto out;
		}
		if (ln == 2 && (strncmp(line, "refreshed ", 10) != 0 ||
				!(rest = strptime(line + 10, "%Y-%m-%dT%H:%M:%SZ", &tm)) || *rest)) {
			rc = bad(err, path, ln, "the second line is not \"refreshed TIME\"");
			goto out;
		}
		if (ln == 2)
			out->refreshed_at = (double)timegm(&tm);
		if (ln == 3 && (strncmp(line, "source ", 7) != 0 || strlen(line + 7) != 7 ||
				strspn(line + 7, "0123456789-") != 7 || line[11] != '-')) {
			rc = bad(err, path, ln, "the third line is not \"source YYYY-MM\"");
			goto out;
		}
		if (ln == 3)
			memcpy(out->month, line + 7, 8);
		if (ln <= 3 || !line[strspn(line, " \t")] || line[strspn(line, " \t")] == '#')
			continue;
		if (out->n == cap) {
			size_t nc = cap ? 2 * cap : 16;
			struct gb_spend_entry *v = realloc(out->v, nc * sizeof(*v));

			if (!v) {
				rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
				goto out;
			}
			out->v = v;
			cap = nc;
		}
		if ((rc = parse_entry(line, path, ln, &out->v[out->n], err)))
			goto out;
		out->n++;
	}
	if (ln < 3)
		rc = bad(err, path, ln, "the header is incomplete");
	else if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), entry_cmp);
out:
	free(text);
	if (rc)
		gb_spend_clear(out);
	return rc;
}

gb_err_t gb_spend_write(const char *path, const struct gb_spend_summary *s,
			gb_error_t *err)
{
	struct gb_buf b = GB_BUF_INIT;
	char stamp[32];
	gb_err_t rc;

	if (!conf_tf_stamp(s->refreshed_at, stamp, sizeof(stamp)) || strlen(s->month) != 7)
		return gb_errorf(err, GB_E_INVALID, "spend summary: bad time or month");
	gb_buf_printf(&b, MAGIC "\nrefreshed %s\nsource %s\n# scope name usd\n", stamp,
		      s->month);
	for (size_t i = 0; i < s->n; i++) {
		const struct gb_spend_entry *e = &s->v[i];

		if ((unsigned)e->scope >= N_SCOPES ||
		    (e->scope != GB_BUDGET_CLUSTER && (!e->name || !name_ok(e->name))))
			continue;	/* a name the reader would refuse: not counted */
		gb_buf_printf(&b, "%s %s %.6f\n", gb_conf_budget_scope_name(e->scope),
			      e->scope == GB_BUDGET_CLUSTER ? "-" : e->name, e->usd);
	}
	rc = gb_buf_failed(&b) ? gb_errorf(err, GB_E_NOMEM, "out of memory")
			       : gb_file_replace(path, b.data, b.len, 0644, err);
	gb_buf_free(&b);
	return rc;
}

double gb_spend_of(const struct gb_spend_summary *s, enum gb_budget_scope scope,
		   const char *name)
{
	struct gb_spend_entry key = { scope, (char *)name, 0 };
	const struct gb_spend_entry *e;

	if (!s || !s->n)
		return 0;
	if (scope == GB_BUDGET_CLUSTER)
		key.name = NULL;
	e = bsearch(&key, s->v, s->n, sizeof(key), entry_cmp);
	return e ? e->usd : 0;
}

bool gb_conf_spend_file(const struct gb_conf *conf, char *buf, size_t n)
{
	if (n == 0)
		return false;
	if (!conf->state_dir ||
	    snprintf(buf, n, "%s/%s", conf->state_dir, GB_SPEND_FILE) >= (int)n) {
		buf[0] = '\0';
		return false;
	}
	return true;
}

/* Is [name] one of the comma-separated [list]? */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] != 0)) {
		if (strcspn(p, ",") == n && strncmp(p, name, n) == 0)
			return true;
	}
	return false;
}

static bool applies(const struct gb_conf_budget *b, const struct gb_budget_job *job)
{
	switch (b->scope) {
	case GB_BUDGET_CLUSTER:
		return true;
	case GB_BUDGET_USER:
		return job->user && strcmp(job->user, b->who) == 0;
	case GB_BUDGET_ACCOUNT:
		return job->account && strcmp(job->account, b->who) == 0;
	case GB_BUDGET_PARTITION:
		return in_list(job->partitions, b->who);
	}
	return false;
}

const struct gb_conf_budget *gb_budget_over(const struct gb_conf *conf,
					    const struct gb_spend_summary *spent,
					    const struct gb_budget_job *job, double now,
					    struct gb_buf *msg)
{
	char month[8];

	gb_spend_month(now, month, sizeof(month));
	if (spent && strcmp(spent->month, month) != 0)
		spent = NULL;	/* last month's figures: nothing spent yet */
	for (size_t i = 0; i < conf->policy.n_budgets; i++) {
		const struct gb_conf_budget *b = &conf->policy.budgets[i];
		double used = gb_spend_of(spent, b->scope, b->who);
		char scope[96];

		if (!applies(b, job))
			continue;
		snprintf(scope, sizeof(scope), "%s%s%s", gb_conf_budget_scope_name(b->scope),
			 b->who ? " " : "", b->who ? b->who : "");
		if (job->estimate < 0) {
			if (msg)
				gb_buf_printf(msg, "budget '%s' (%s): this job's cost cannot be estimated: %s",
					      b->name, scope, job->why_unknown ? job->why_unknown
									       : "no price is known");
			return b;
		}
		if (b->per_job > 0 && job->estimate > b->per_job) {
			if (msg)
				gb_buf_printf(msg, "budget '%s' (%s): this job ~%.2f USD is over the %.2f USD a job may cost",
					      b->name, scope, job->estimate, b->per_job);
			return b;
		}
		if (b->monthly > 0 && used + job->estimate > b->monthly) {
			if (msg)
				gb_buf_printf(msg, "budget '%s' (%s): %.2f of %.2f USD spent in %s, this job ~%.2f USD",
					      b->name, scope, used, b->monthly, month,
					      job->estimate);
			return b;
		}
	}
	return NULL;
}
