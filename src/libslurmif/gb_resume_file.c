/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_resume_file.c - parse SLURM_RESUME_FILE, split the resumed nodes by job
 */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "gb_resume_file.h"
#include "gb_slurm.h"
#include "gb_util.h"

#define SPLIT_MAX_NODES 100000u		/* as a request's node list */

/*****************************************************************************
 *  Parsing
 *****************************************************************************/

static const char *json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: return "null";
	}
	return "value";
}

const char *gb_resume_format_name(enum gb_resume_format f)
{
	return f == GB_RESUME_FORMAT_2302 ? "23.02" : "22.05";
}

/*
 * Copy optional string [key] of [obj] into *out: absent or null leaves
 * NULL, a string is copied, anything else is an error naming [where].
 */
static gb_err_t opt_string(const json_t *obj, const char *key,
			   const char *where, char **out, gb_error_t *err)
{
	const json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return GB_E_OK;
	if (!json_is_string(v))
		return gb_errorf(err, GB_E_PARSE, "%s%s: expected a string, got %s",
				 where, key, json_type_name(v));
	if (!(*out = strdup(json_string_value(v))))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	return GB_E_OK;
}

static gb_err_t parse_job(const json_t *j, size_t idx, struct gb_resume_job *job,
			  gb_error_t *err)
{
	const char *nodes_key = "nodes_resume";
	const json_t *id;
	char where[48];
	gb_err_t rc;

	snprintf(where, sizeof(where), "jobs[%zu].", idx);
	if (!json_is_object(j))
		return gb_errorf(err, GB_E_PARSE, "jobs[%zu]: expected an object, got %s",
				 idx, json_type_name(j));
	id = json_object_get(j, "job_id");
	if (id && !json_is_null(id)) {
		if (!json_is_integer(id))
			return gb_errorf(err, GB_E_PARSE,
					 "%sjob_id: expected an integer, got %s",
					 where, json_type_name(id));
		if (json_integer_value(id) < 1 || json_integer_value(id) > 4294967295LL)
			return gb_errorf(err, GB_E_PARSE,
					 "%sjob_id: %lld is out of range 1..4294967295",
					 where, (long long)json_integer_value(id));
		job->job_id = json_integer_value(id);
	}
	if (!json_object_get(j, nodes_key))
		nodes_key = "nodes";		/* 22.05 */
	if ((rc = opt_string(j, nodes_key, where, &job->nodes, err)))
		return rc;
	if (!job->nodes || !*job->nodes)
		return gb_errorf(err, GB_E_PARSE, "%snodes_resume (or nodes): missing or empty",
				 where);
	if ((rc = opt_string(j, "nodes_alloc", where, &job->nodes_alloc, err)) ||
	    (rc = opt_string(j, "partition", where, &job->partition, err)) ||
	    (rc = opt_string(j, "features", where, &job->features, err)) ||
	    (rc = opt_string(j, "reservation", where, &job->reservation, err)))
		return rc;
	if (!(job->raw = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS)))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	return GB_E_OK;
}

static gb_err_t parse_root(const json_t *root, struct gb_resume_file *rf,
			   gb_error_t *err)
{
	const char *all_key = "all_nodes_resume";
	const json_t *jobs;
	gb_err_t rc;

	if (!json_is_object(root))
		return gb_errorf(err, GB_E_PARSE, "expected a JSON object, got %s",
				 json_type_name(root));
	rf->format = GB_RESUME_FORMAT_2302;
	if (!json_object_get(root, all_key)) {
		all_key = "all_nodes";
		rf->format = GB_RESUME_FORMAT_2205;
	}
	if ((rc = opt_string(root, all_key, "", &rf->all_nodes, err)))
		return rc;
	if (!rf->all_nodes || !*rf->all_nodes)
		return gb_errorf(err, GB_E_PARSE,
				 "all_nodes_resume (or all_nodes): missing or empty");
	jobs = json_object_get(root, "jobs");
	if (!jobs || json_is_null(jobs))
		return GB_E_OK;
	if (!json_is_array(jobs))
		return gb_errorf(err, GB_E_PARSE, "jobs: expected an array, got %s",
				 json_type_name(jobs));
	if (json_array_size(jobs) == 0)
		return GB_E_OK;
	rf->jobs = calloc(json_array_size(jobs), sizeof(*rf->jobs));
	if (!rf->jobs)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (size_t i = 0; i < json_array_size(jobs); i++) {
		rf->n_jobs = i + 1;
		if ((rc = parse_job(json_array_get(jobs, i), i, &rf->jobs[i], err)))
			return rc;
	}
	return GB_E_OK;
}

gb_err_t gb_resume_file_parse(const char *text, size_t len,
			      struct gb_resume_file **out, gb_error_t *err)
{
	struct gb_resume_file *rf = NULL;
	json_error_t jerr;
	json_t *root = NULL;
	gb_err_t rc;

	*out = NULL;
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return gb_errorf(err, GB_E_PARSE, "line %d column %d: %s", jerr.line,
				 jerr.column, jerr.text);
	if (!(rf = calloc(1, sizeof(*rf)))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = parse_root(root, rf, err)))
		goto out;
	*out = rf;
	rf = NULL;
out:
	gb_resume_file_free(rf);
	json_decref(root);
	return rc;
}

gb_err_t gb_resume_file_read(const char *path, struct gb_resume_file **out,
			     gb_error_t *err)
{
	char *text = NULL;
	size_t len = 0;
	gb_err_t rc;

	*out = NULL;
	rc = gb_file_read(path, GB_RESUME_FILE_MAX, &text, &len, err);
	if (rc == GB_E_OK)
		rc = gb_resume_file_parse(text, len, out, err);
	free(text);
	return rc;
}

void gb_resume_file_free(struct gb_resume_file *rf)
{
	if (!rf)
		return;
	for (size_t i = 0; i < rf->n_jobs; i++) {
		struct gb_resume_job *j = &rf->jobs[i];

		free(j->nodes);
		free(j->nodes_alloc);
		free(j->partition);
		free(j->features);
		free(j->reservation);
		free(j->raw);
	}
	free(rf->jobs);
	free(rf->all_nodes);
	free(rf);
}

/*****************************************************************************
 *  Splitting by job
 *****************************************************************************/

struct slot {
	const char *name;
	size_t idx;		/* position in the resume list */
};

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int slot_key_cmp(const void *key, const void *b)
{
	return strcmp(key, ((const struct slot *)b)->name);
}

/* Sorted index of the resume list; duplicates after the first are marked. */
static struct slot *index_nodes(const struct gb_strv *resume, unsigned char *owner_set)
{
	struct slot *ix = calloc(resume->n ? resume->n : 1, sizeof(*ix));

	if (!ix)
		return NULL;
	for (size_t i = 0; i < resume->n; i++) {
		ix[i].name = resume->v[i];
		ix[i].idx = i;
	}
	qsort(ix, resume->n, sizeof(*ix), slot_cmp);
	for (size_t i = 1; i < resume->n; i++) {
		if (strcmp(ix[i].name, ix[i - 1].name) == 0)
			owner_set[ix[i].idx] = 1;	/* a duplicate: never placed */
	}
	return ix;
}

static gb_err_t add_group(struct gb_resume_split *s, int64_t job_id,
			  const char *raw, struct gb_resume_group **g)
{
	struct gb_resume_group *v = realloc(s->groups, (s->n_groups + 1) * sizeof(*v));

	if (!v)
		return GB_E_NOMEM;
	s->groups = v;
	*g = &v[s->n_groups++];
	memset(*g, 0, sizeof(**g));
	(*g)->job_id = job_id;
	(*g)->raw = raw;
	return GB_E_OK;
}

/* Claim the nodes of [job] that are being resumed and not yet placed. */
static gb_err_t place_job(const struct gb_resume_job *job, size_t jidx,
			  const struct gb_strv *resume, const struct slot *ix,
			  unsigned char *placed, struct gb_resume_split *s,
			  gb_error_t *err)
{
	struct gb_strv names = { 0 };
	struct gb_resume_group *g = NULL;
	gb_err_t rc;

	rc = gb_slurm_hostlist_expand(job->nodes, SPLIT_MAX_NODES, &names, err);
	if (rc) {
		gb_error_prefix(err, "jobs[%zu] (job %lld)", jidx, (long long)job->job_id);
		goto out;
	}
	for (size_t i = 0; i < names.n && rc == GB_E_OK; i++) {
		const struct slot *sl = bsearch(names.v[i], ix, resume->n, sizeof(*ix),
						slot_key_cmp);

		if (!sl) {
			if (gb_strv_find(&s->ignored, names.v[i]) < 0)
				rc = gb_strv_add(&s->ignored, names.v[i]);
			continue;
		}
		while (sl > ix && strcmp(sl[-1].name, sl->name) == 0)
			sl--;			/* the first occurrence */
		if (placed[sl->idx])
			continue;
		if (!g && (rc = add_group(s, job->job_id, job->raw, &g)))
			break;
		placed[sl->idx] = 1;
		rc = gb_strv_add(&g->nodes, resume->v[sl->idx]);
	}
	if (rc == GB_E_NOMEM)
		gb_errorf(err, rc, "out of memory");
out:
	gb_strv_free(&names);
	return rc;
}

gb_err_t gb_resume_split(const struct gb_resume_file *rf,
			 const struct gb_strv *resume,
			 struct gb_resume_split *out, gb_error_t *err)
{
	unsigned char *placed = calloc(resume->n ? resume->n : 1, 1);
	struct gb_resume_group *jobless = NULL;
	struct slot *ix = NULL;
	gb_err_t rc = GB_E_OK;

	memset(out, 0, sizeof(*out));
	if (!placed || !(ix = index_nodes(resume, placed))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	/* Jobs with an id first, in file order; id-less entries go jobless. */
	for (size_t j = 0; rf && j < rf->n_jobs && rc == GB_E_OK; j++) {
		if (rf->jobs[j].job_id > 0)
			rc = place_job(&rf->jobs[j], j, resume, ix, placed, out, err);
	}
	for (size_t i = 0; i < resume->n && rc == GB_E_OK; i++) {
		if (placed[i])
			continue;
		if (!jobless && (rc = add_group(out, 0, NULL, &jobless)))
			break;
		placed[i] = 1;
		rc = gb_strv_add(&jobless->nodes, resume->v[i]);
	}
	if (rc == GB_E_NOMEM)
		gb_errorf(err, rc, "out of memory");
out:
	if (rc)
		gb_resume_split_free(out);
	free(ix);
	free(placed);
	return rc;
}

void gb_resume_split_free(struct gb_resume_split *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_groups; i++)
		gb_strv_free(&s->groups[i].nodes);
	free(s->groups);
	gb_strv_free(&s->ignored);
	memset(s, 0, sizeof(*s));
}
