/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_slurmconf.c - read SlurmUser, the power-save settings and partition
 * ResumeTimeouts from slurm.conf (slurm.conf(5) syntax, no libslurm)
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gb_slurmconf.h"
#include "gb_str.h"
#include "gb_util.h"

#define SLURMCONF_MAX_BYTES (8u << 20)
#define SLURMCONF_MAX_DEPTH 8
#define SLURMCONF_MAX_PAIRS 256

struct pair {
	char *key;
	char *value;	/* NULL: a word without '=' */
};

#define SLURMCONF_N_STRINGS 15	/* the string fields of string_field() */

struct parse {
	struct gb_slurmconf *sc;
	double part_default;	/* PartitionName=DEFAULT ResumeTimeout */
	gb_error_t *err;
	char *where[SLURMCONF_N_STRINGS];	/* "FILE:LINE" each field was set at */
};

static gb_err_t read_file(struct parse *p, const char *path, int depth);

static const struct {
	const char *key;
	size_t off;
} string_fields[SLURMCONF_N_STRINGS] = {
	{ "ClusterName", offsetof(struct gb_slurmconf, cluster_name) },
	{ "SlurmUser", offsetof(struct gb_slurmconf, slurm_user) },
	{ "ResumeProgram", offsetof(struct gb_slurmconf, resume_program) },
	{ "SuspendProgram", offsetof(struct gb_slurmconf, suspend_program) },
	{ "ResumeFailProgram", offsetof(struct gb_slurmconf, resume_fail_program) },
	{ "SlurmctldParameters", offsetof(struct gb_slurmconf, slurmctld_parameters) },
	{ "TreeWidth", offsetof(struct gb_slurmconf, tree_width) },
	{ "PrivateData", offsetof(struct gb_slurmconf, private_data) },
	{ "CommunicationParameters", offsetof(struct gb_slurmconf, communication_parameters) },
	{ "JobSubmitPlugins", offsetof(struct gb_slurmconf, job_submit_plugins) },
	{ "GresTypes", offsetof(struct gb_slurmconf, gres_types) },
	{ "ReturnToService", offsetof(struct gb_slurmconf, return_to_service) },
	{ "SchedulerParameters", offsetof(struct gb_slurmconf, scheduler_parameters) },
	{ "SuspendExcNodes", offsetof(struct gb_slurmconf, suspend_exc_nodes) },
	{ "SuspendExcParts", offsetof(struct gb_slurmconf, suspend_exc_parts) },
};

/* The string field of [key] (case-insensitive, as Slurm compares keys): its index, or -1. */
static int string_field(const char *key)
{
	for (size_t i = 0; i < GB_ARRAY_LEN(string_fields); i++)
		if (strcasecmp(key, string_fields[i].key) == 0)
			return (int)i;
	return -1;
}

/* Seconds: an integer; INFINITE, UNLIMITED and NONE give -1. */
static bool parse_seconds(const char *v, double *out)
{
	long l;

	if (strcasecmp(v, "INFINITE") == 0 || strcasecmp(v, "UNLIMITED") == 0 ||
	    strcasecmp(v, "NONE") == 0) {
		*out = -1;
		return true;
	}
	if (gb_parse_long(v, -1, 100000000L, &l))
		return false;
	*out = (double)l;
	return true;
}

/*
 * Split one logical line into pairs: blanks separate, double quotes group
 * (and are removed), "\#" was already unescaped.  RET the number of pairs.
 */
static size_t split(char *line, struct pair *v, size_t max)
{
	size_t n = 0;
	char *r = line, *w;

	while (*r && n < max) {
		while (isspace((unsigned char)*r))
			r++;
		if (!*r)
			break;
		w = r;
		v[n].key = w;
		v[n].value = NULL;
		for (bool quoted = false; *r && (quoted || !isspace((unsigned char)*r)); r++) {
			if (*r == '"') {
				quoted = !quoted;
				continue;
			}
			if (*r == '=' && !v[n].value && !quoted) {
				*w++ = '\0';
				v[n].value = w;
				continue;
			}
			*w++ = *r;
		}
		if (*r)
			r++;
		*w = '\0';
		n++;
	}
	return n;
}

/* Field [f] = [value], from FILE:LINE; a second setting is recorded as a duplicate. */
static gb_err_t set_string(struct parse *p, int f, const char *value,
			   const char *file, unsigned line)
{
	char **dst = (char **)((char *)p->sc + string_fields[f].off);
	char *copy = strdup(value), *where = NULL;

	if (!copy || asprintf(&where, "%s:%u", file, line) < 0) {
		free(copy);
		return gb_errorf(p->err, GB_E_NOMEM, "reading slurm.conf: out of memory");
	}
	if (p->where[f]) {
		struct gb_buf b = GB_BUF_INIT;

		gb_buf_printf(&b, "%s: %s replaces %s", string_fields[f].key, where, p->where[f]);
		if (gb_buf_failed(&b) || gb_strv_add(&p->sc->duplicates, gb_buf_str(&b))) {
			gb_buf_free(&b);
			free(copy);
			free(where);
			return gb_errorf(p->err, GB_E_NOMEM, "reading slurm.conf: out of memory");
		}
		gb_buf_free(&b);
	}
	free(p->where[f]);
	p->where[f] = where;
	free(*dst);
	*dst = copy;
	return GB_E_OK;
}

static gb_err_t add_partition(struct parse *p, const char *file, unsigned line,
			      const struct pair *v, size_t n)
{
	struct gb_slurmconf *sc = p->sc;
	struct gb_slurmconf_partition *part, *grown;
	double timeout = -2;	/* -2: not on this line */

	for (size_t i = 1; i < n; i++) {
		if (!v[i].value || strcasecmp(v[i].key, "ResumeTimeout") != 0)
			continue;
		if (!parse_seconds(v[i].value, &timeout))
			return gb_errorf(p->err, GB_E_PARSE,
					 "%s:%u: ResumeTimeout '%s' of partition %s is not a number of seconds",
					 file, line, v[i].value, v[0].value);
	}
	if (strcasecmp(v[0].value, "DEFAULT") == 0) {
		if (timeout > -2)
			p->part_default = timeout;
		return GB_E_OK;
	}
	part = NULL;
	for (size_t i = 0; i < sc->n_partitions; i++)
		if (strcmp(sc->partitions[i].name, v[0].value) == 0)
			part = &sc->partitions[i];
	if (!part) {
		grown = realloc(sc->partitions,
				(sc->n_partitions + 1) * sizeof(*grown));
		if (!grown)
			return gb_errorf(p->err, GB_E_NOMEM, "reading slurm.conf: out of memory");
		sc->partitions = grown;
		part = &sc->partitions[sc->n_partitions];
		part->name = strdup(v[0].value);
		if (!part->name)
			return gb_errorf(p->err, GB_E_NOMEM, "reading slurm.conf: out of memory");
		part->resume_timeout = p->part_default;
		sc->n_partitions++;
	}
	if (timeout > -2)
		part->resume_timeout = timeout;
	return GB_E_OK;
}

static gb_err_t global_pair(struct parse *p, const char *file, unsigned line,
			    const struct pair *pr)
{
	struct gb_slurmconf *sc = p->sc;
	double *num = NULL;
	int f;

	if (!pr->value)
		return GB_E_OK;
	if ((f = string_field(pr->key)) >= 0)
		return set_string(p, f, pr->value, file, line);
	if (strcasecmp(pr->key, "ResumeTimeout") == 0)
		num = &sc->resume_timeout;
	else if (strcasecmp(pr->key, "SuspendTimeout") == 0)
		num = &sc->suspend_timeout;
	else if (strcasecmp(pr->key, "SuspendTime") == 0)
		num = &sc->suspend_time;
	if (num && !parse_seconds(pr->value, num))
		return gb_errorf(p->err, GB_E_PARSE,
				 "%s:%u: %s '%s' is not a number of seconds",
				 file, line, pr->key, pr->value);
	return GB_E_OK;
}

/* Relative Include paths are relative to the including file's directory. */
static gb_err_t include(struct parse *p, const char *file, unsigned line,
			const char *target, int depth)
{
	const char *slash = strrchr(file, '/');
	struct gb_buf path = GB_BUF_INIT;
	gb_err_t rc;

	if (depth >= SLURMCONF_MAX_DEPTH)
		return gb_errorf(p->err, GB_E_PARSE,
				 "%s:%u: Include nested more than %d deep",
				 file, line, SLURMCONF_MAX_DEPTH);
	if (target[0] != '/' && slash)
		gb_buf_printf(&path, "%.*s/", (int)(slash - file), file);
	gb_buf_puts(&path, target);
	if (gb_buf_failed(&path))
		rc = gb_errorf(p->err, GB_E_NOMEM, "reading slurm.conf: out of memory");
	else
		rc = read_file(p, gb_buf_str(&path), depth + 1);
	gb_buf_free(&path);
	return rc;
}

static gb_err_t parse_line(struct parse *p, const char *file, unsigned line,
			   char *text, int depth)
{
	struct pair v[SLURMCONF_MAX_PAIRS];
	size_t n = split(text, v, GB_ARRAY_LEN(v));
	gb_err_t rc = GB_E_OK;

	if (n == 0)
		return GB_E_OK;
	if (!v[0].value && strcasecmp(v[0].key, "Include") == 0) {
		if (n < 2)
			return gb_errorf(p->err, GB_E_PARSE,
					 "%s:%u: Include without a file", file,
					 line);
		return include(p, file, line, v[1].key, depth);
	}
	if (v[0].value && strcasecmp(v[0].key, "PartitionName") == 0)
		return add_partition(p, file, line, v, n);
	/* The other pairs of these lines describe the object, not globals. */
	if (v[0].value && (strcasecmp(v[0].key, "NodeName") == 0 ||
			   strcasecmp(v[0].key, "NodeSet") == 0 ||
			   strcasecmp(v[0].key, "DownNodes") == 0 ||
			   strcasecmp(v[0].key, "FrontendName") == 0 ||
			   strcasecmp(v[0].key, "SwitchName") == 0))
		return GB_E_OK;
	for (size_t i = 0; i < n && !rc; i++)
		rc = global_pair(p, file, line, &v[i]);
	return rc;
}

/*
 * Logical lines: a '\' before the newline joins the next line (as Slurm
 * does, the next line's leading blanks stay and separate); '#' starts
 * a comment unless escaped as "\#".  Edits [data] in place.
 */
static gb_err_t parse_text(struct parse *p, const char *file, char *data,
			   int depth)
{
	struct gb_buf logical = GB_BUF_INIT;
	unsigned lineno = 0, first = 0;
	gb_err_t rc = GB_E_OK;
	char *save = data;

	while (!rc && save && *save) {
		char *line = save, *nl = strchr(line, '\n');
		size_t len;
		bool cont = false;

		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		lineno++;
		if (logical.len == 0)
			first = lineno;
		for (char *c = line; *c; c++) {
			if (c[0] == '\\' && c[1] == '#') {
				gb_buf_putc(&logical, '#');
				c++;
			} else if (*c == '#') {
				break;
			} else {
				gb_buf_putc(&logical, *c);
			}
		}
		len = logical.len;
		while (len && isspace((unsigned char)logical.data[len - 1]))
			len--;
		if (len && logical.data[len - 1] == '\\') {
			logical.len = len - 1;
			logical.data[logical.len] = '\0';
			cont = true;
		}
		if (gb_buf_failed(&logical)) {
			rc = gb_errorf(p->err, GB_E_NOMEM, "reading slurm.conf: out of memory");
			break;
		}
		if (cont && save)
			continue;
		if (logical.len)
			rc = parse_line(p, file, first, logical.data, depth);
		gb_buf_reset(&logical);
	}
	gb_buf_free(&logical);
	return rc;
}

static gb_err_t read_file(struct parse *p, const char *path, int depth)
{
	char *data = NULL;
	gb_err_t rc;

	rc = gb_file_read(path, SLURMCONF_MAX_BYTES, &data, NULL, p->err);
	if (rc)
		return rc;
	rc = parse_text(p, path, data, depth);
	free(data);
	return rc;
}

const char *gb_slurmconf_path(bool trusted_env)
{
	const char *env = trusted_env ? getenv(GB_SLURMCONF_ENV) : NULL;

	return env && *env ? env : GB_SLURMCONF_DEFAULT;
}

gb_err_t gb_slurmconf_read(const char *path, struct gb_slurmconf *out,
			   gb_error_t *err)
{
	struct parse p = { out, -1, err, { NULL } };
	gb_err_t rc;

	memset(out, 0, sizeof(*out));
	out->resume_timeout = GB_SLURM_DEFAULT_RESUME_TIMEOUT;
	out->suspend_timeout = 30;
	out->suspend_time = -1;
	if (!(out->path = strdup(path)))
		return gb_errorf(err, GB_E_NOMEM, "reading %s: out of memory", path);
	rc = read_file(&p, path, 0);
	for (size_t i = 0; i < GB_ARRAY_LEN(p.where); i++)
		free(p.where[i]);
	if (rc == GB_E_OK && !out->slurm_user &&
	    !(out->slurm_user = strdup("root")))
		rc = gb_errorf(err, GB_E_NOMEM, "reading %s: out of memory", path);
	if (rc == GB_E_OK) {
		/* "SlurmUser=slurm(64030)" names the user, then its uid. */
		char *paren = strchr(out->slurm_user, '(');

		if (paren)
			*paren = '\0';
	}
	return rc;
}

void gb_slurmconf_clear(struct gb_slurmconf *sc)
{
	if (!sc)
		return;
	free(sc->path);
	free(sc->cluster_name);
	free(sc->slurm_user);
	free(sc->resume_program);
	free(sc->suspend_program);
	free(sc->resume_fail_program);
	free(sc->slurmctld_parameters);
	free(sc->tree_width);
	free(sc->private_data);
	free(sc->communication_parameters);
	free(sc->job_submit_plugins);
	free(sc->gres_types);
	free(sc->return_to_service);
	free(sc->scheduler_parameters);
	free(sc->suspend_exc_nodes);
	free(sc->suspend_exc_parts);
	gb_strv_free(&sc->duplicates);
	for (size_t i = 0; i < sc->n_partitions; i++)
		free(sc->partitions[i].name);
	free(sc->partitions);
	memset(sc, 0, sizeof(*sc));
}

const char *gb_slurmconf_value(const struct gb_slurmconf *sc, const char *key)
{
	int f = sc && key ? string_field(key) : -1;

	return f < 0 ? NULL : *(char *const *)((const char *)sc + string_fields[f].off);
}

const struct gb_slurmconf_partition *
gb_slurmconf_partition(const struct gb_slurmconf *sc, const char *name)
{
	for (size_t i = 0; sc && name && i < sc->n_partitions; i++)
		if (strcmp(sc->partitions[i].name, name) == 0)
			return &sc->partitions[i];
	return NULL;
}
