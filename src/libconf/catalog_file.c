/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * catalog_file.c - the refreshed GPU catalog: <state_dir>/catalog
 *
 * `gpuburstctl catalog refresh` writes what DescribeInstanceTypes says
 * (gb_catalog_write); gb_conf_load() reads it, so programs and the plugin
 * read it when they load the configuration (init, reconfigure), never on
 * a job's path.  The format, version 1, is line-oriented text:
 *
 *	gpuburst-catalog 1
 *	refreshed 2026-12-03T13:41:47Z
 *	source ec2:DescribeInstanceTypes us-east-1
 *	# name family vcpus memory_mib gpus gpu_memory_mib gpu_fraction arch
 *	#   gpu_maker efa_max_interfaces network_cards max_interfaces
 *	#   cluster_placement gpu_name
 *	p5.48xlarge p5 192 2097152 8 81920 0 x86_64 NVIDIA 32 32 64 yes H100
 *
 * The three header lines come first, in that order ("refreshed" in UTC,
 * to the second; "source" one line of printable text).  Then one type per
 * line, fields separated by blanks; the last field, EC2's GpuInfo Name,
 * is the rest of the line (it may hold blanks: "RTX PRO 6000").  efa is
 * efa_max_interfaces > 0; gpu_fraction 0 means whole GPUs, N a 1/N share
 * of one; cluster_placement is yes or no; gpu_model is computed with
 * gb_catalog_gres_name(), never stored.  Blank lines and lines starting
 * with '#' are ignored.  A reader of version 1 refuses any other version.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf_int.h"
#include "gb_util.h"

#define MAGIC "gpuburst-catalog"
#define CATALOG_VERSION 1
#define LINE_MAX_ 1024			/* bytes per line */
#define NAME_MAX_ 64			/* an instance type's name */
#define N_FIELDS 14

/*****************************************************************************
 *  What a type must be, for the writer and the reader alike
 *****************************************************************************/

static bool chars_ok(const char *s, const char *extra)
{
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      strchr(extra, *s)))
			return false;
	}
	return true;
}

static bool range_ok(int v, int lo, int hi)
{
	return v >= lo && v <= hi;
}

/* RET NULL when [t] may be written and read back, else what is wrong. */
static const char *type_problem(const struct gb_instance_type *t)
{
	const char *dot = t->name ? strchr(t->name, '.') : NULL;
	char model[NAME_MAX_];

	if (!t->name || !dot || dot == t->name || !dot[1] || strlen(t->name) > NAME_MAX_ ||
	    !chars_ok(t->name, ".-") || strchr(dot + 1, '.'))
		return "the name is not an instance type (like p5.48xlarge)";
	if (!t->family || strlen(t->family) != (size_t)(dot - t->name) ||
	    strncmp(t->family, t->name, strlen(t->family)) != 0)
		return "the family is not the name's text before '.'";
	if (!range_ok(t->vcpus, 1, 4096))
		return "vcpus is not in 1..4096";
	if (!range_ok(t->memory_mib, 1, 64 * 1024 * 1024))
		return "memory_mib is not in 1..67108864";
	if (!range_ok(t->gpus, 1, 64))
		return "gpus is not in 1..64";
	if (!range_ok(t->gpu_memory_mib, 1, 16 * 1024 * 1024))
		return "gpu_memory_mib is not in 1..16777216";
	if (t->gpu_fraction != 0 && !range_ok(t->gpu_fraction, 2, 64))
		return "gpu_fraction is neither 0 (whole GPUs) nor in 2..64";
	if (!t->arch || (strcmp(t->arch, "x86_64") != 0 && strcmp(t->arch, "arm64") != 0))
		return "arch is neither x86_64 nor arm64";
	if (!t->gpu_maker || !*t->gpu_maker || strlen(t->gpu_maker) > 32 ||
	    !chars_ok(t->gpu_maker, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_-"))
		return "gpu_maker is not 1 to 32 letters, digits, '_' and '-'";
	if (!range_ok(t->efa_max_interfaces, 0, 64) || t->efa != (t->efa_max_interfaces > 0))
		return "efa_max_interfaces is not in 0..64 (0: no EFA)";
	if (!range_ok(t->network_cards, 1, 64))
		return "network_cards is not in 1..64";
	if (!range_ok(t->max_interfaces, 1, 1024))
		return "max_interfaces is not in 1..1024";
	if (!t->gpu_name || !conf_tf_printable(t->gpu_name) || strlen(t->gpu_name) > NAME_MAX_ ||
	    !gb_catalog_gres_name(t->gpu_name, model, sizeof(model)))
		return "gpu_name is not printable text that gives a gres name";
	if (t->gpu_model && strcmp(t->gpu_model, model) != 0)
		return "gpu_model is not gb_catalog_gres_name() of gpu_name";
	return NULL;
}

/*****************************************************************************
 *  Writing
 *****************************************************************************/

static void put_type(struct gb_buf *b, const struct gb_instance_type *t)
{
	gb_buf_printf(b, "%s %s %d %d %d %d %d %s %s %d %d %d %s %s\n", t->name, t->family,
		      t->vcpus, t->memory_mib, t->gpus, t->gpu_memory_mib, t->gpu_fraction,
		      t->arch, t->gpu_maker, t->efa_max_interfaces, t->network_cards,
		      t->max_interfaces, t->cluster_placement ? "yes" : "no", t->gpu_name);
}

static gb_err_t format(struct gb_buf *b, const struct gb_instance_type *v, size_t n,
		       const char *source, double refreshed_at, gb_error_t *err)
{
	char stamp[32];
	const char *why;

	if (!source || !*source || !conf_tf_printable(source) || strlen(source) > 256)
		return gb_errorf(err, GB_E_INVALID, "catalog source must be 1 to 256 printable characters");
	if (!conf_tf_stamp(refreshed_at, stamp, sizeof(stamp)))
		return gb_errorf(err, GB_E_INVALID, "catalog refresh time %.0f is invalid",
				 refreshed_at);
	if (n == 0 || n > CONF_CATALOG_MAX_TYPES)
		return gb_errorf(err, GB_E_INVALID, "a catalog holds 1 to %d types, not %zu",
				 CONF_CATALOG_MAX_TYPES, n);
	gb_buf_printf(b, "%s %d\nrefreshed %s\nsource %s\n", MAGIC, CATALOG_VERSION, stamp, source);
	gb_buf_puts(b, "# name family vcpus memory_mib gpus gpu_memory_mib gpu_fraction arch\n"
		    "#   gpu_maker efa_max_interfaces network_cards max_interfaces\n"
		    "#   cluster_placement gpu_name\n");
	for (size_t i = 0; i < n; i++) {
		if ((why = type_problem(&v[i])))
			return gb_errorf(err, GB_E_INVALID, "catalog type %zu (%s): %s", i + 1,
					 v[i].name ? v[i].name : "no name", why);
		for (size_t j = 0; j < i; j++) {
			if (strcmp(v[i].name, v[j].name) == 0)
				return gb_errorf(err, GB_E_INVALID, "catalog type %s is listed twice",
						 v[i].name);
		}
		put_type(b, &v[i]);
	}
	if (gb_buf_failed(b))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	return GB_E_OK;
}

gb_err_t gb_catalog_write(const char *path, const struct gb_instance_type *v,
			  size_t n, const char *source, double refreshed_at,
			  gb_error_t *err)
{
	struct gb_buf b = GB_BUF_INIT;
	gb_err_t rc;

	if (!path || !*path)
		return gb_errorf(err, GB_E_INVALID, "catalog path is empty");
	if (!(rc = format(&b, v, n, source, refreshed_at, err)))
		rc = gb_file_replace(path, b.data, b.len, 0644, err);
	gb_buf_free(&b);
	return rc;
}

/*****************************************************************************
 *  Reading
 *****************************************************************************/

static bool to_int(const char *s, int *out)
{
	char *e;
	long v;

	errno = 0;
	v = strtol(s, &e, 10);
	if (errno || e == s || *e || v < 0 || v > INT_MAX || (s[0] == '0' && s[1]))
		return false;
	*out = (int)v;
	return true;
}

static const char *const field_names[N_FIELDS] = {
	"name", "family", "vcpus", "memory_mib", "gpus", "gpu_memory_mib", "gpu_fraction",
	"arch", "gpu_maker", "efa_max_interfaces", "network_cards", "max_interfaces",
	"cluster_placement", "gpu_name",
};

/* One allocation holds an entry's strings: free(t->name) frees them all. */
static bool store(struct conf_tf *r, struct gb_instance_type *t, char **f)
{
	static const int str_fields[] = { 0, 1, 7, 8, 13 };
	char model[NAME_MAX_], *blk, *q;
	size_t need = 0;

	if (!gb_catalog_gres_name(f[13], model, sizeof(model)))
		model[0] = '\0';
	for (size_t i = 0; i < GB_ARRAY_LEN(str_fields); i++)
		need += strlen(f[str_fields[i]]) + 1;
	if (!(blk = malloc(need + strlen(model) + 1))) {
		conf_nomem(r->c);
		return false;
	}
	q = blk;
#define PUT(dst, s) do { size_t l_ = strlen(s) + 1; memcpy(q, s, l_); dst = q; q += l_; } while (0)
	PUT(t->name, f[0]);
	PUT(t->family, f[1]);
	PUT(t->arch, f[7]);
	PUT(t->gpu_maker, f[8]);
	PUT(t->gpu_name, f[13]);
	PUT(t->gpu_model, model);
#undef PUT
	return true;
}

static bool type_line(struct conf_tf *r, char *s, struct gb_instance_type *t)
{
	static const int int_fields[] = { 2, 3, 4, 5, 6, 9, 10, 11 };
	int *const dst[] = { &t->vcpus, &t->memory_mib, &t->gpus, &t->gpu_memory_mib,
			     &t->gpu_fraction, &t->efa_max_interfaces, &t->network_cards,
			     &t->max_interfaces };
	char *f[N_FIELDS];
	const char *why;
	int n = conf_tf_split(s, f, N_FIELDS);

	if (n != N_FIELDS) {
		conf_tf_bad(r, "%d fields, expected %d (%s ... %s)", n, N_FIELDS, field_names[0],
		    field_names[N_FIELDS - 1]);
		return false;
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(int_fields); i++) {
		if (!to_int(f[int_fields[i]], dst[i])) {
			conf_tf_bad(r, "%s '%.32s' is not a whole number", field_names[int_fields[i]],
			    f[int_fields[i]]);
			return false;
		}
	}
	if (strcmp(f[12], "yes") != 0 && strcmp(f[12], "no") != 0) {
		conf_tf_bad(r, "cluster_placement '%.32s' is neither yes nor no", f[12]);
		return false;
	}
	t->cluster_placement = strcmp(f[12], "yes") == 0;
	t->efa = t->efa_max_interfaces > 0;
	if (!store(r, t, f))
		return false;
	if ((why = type_problem(t))) {
		conf_tf_bad(r, "instance type %.64s: %s", t->name, why);
		return false;
	}
	return true;
}

static void types(struct conf_tf *r, char **p, char *end, size_t cap, struct gb_conf *conf)
{
	unsigned *first = calloc(cap, sizeof(*first));	/* line of each type */
	char *s;

	if (!first) {
		conf_nomem(r->c);
		r->failed = true;
		return;
	}

	while ((s = conf_tf_next_entry(r, p, end))) {
		struct gb_instance_type *t;

		if (conf->n_catalog_ == cap) {
			conf_tf_bad(r, "more than %d instance types", CONF_CATALOG_MAX_TYPES);
			break;
		}
		t = &conf->catalog_[conf->n_catalog_];
		memset(t, 0, sizeof(*t));
		if (type_line(r, s, t)) {
			for (size_t i = 0; i < conf->n_catalog_ && !r->failed; i++) {
				if (strcmp(conf->catalog_[i].name, t->name) == 0)
					conf_tf_bad(r, "instance type %s is listed twice (first on line %u)",
					    t->name, first[i]);
			}
		}
		if (r->failed) {
			free((char *)t->name);
			break;
		}
		first[conf->n_catalog_++] = r->line;
	}
	free(first);
	if (!r->failed && conf->n_catalog_ == 0) {
		r->line = 0;
		conf_tf_bad(r, "the file lists no instance type");
	}
}

bool gb_conf_catalog_file(const struct gb_conf *conf, char *buf, size_t n)
{
	if (n == 0)
		return false;
	if (!conf->state_dir ||
	    snprintf(buf, n, "%s/%s", conf->state_dir, GB_CATALOG_FILE) >= (int)n) {
		buf[0] = '\0';
		return false;
	}
	return true;
}

void conf_catalog_load(struct conf_ctx *c)
{
	struct gb_conf *conf = c->conf;
	struct conf_tf r = { .c = c, .what = "catalog", .line_max = LINE_MAX_ };
	char path[PATH_MAX], *text = NULL, *p;
	size_t len = 0, lines = 1;

	if (!gb_conf_catalog_file(conf, path, sizeof(path)))
		return;		/* the path check of state_dir reports it */
	r.path = path;
	/*
	 * A user who may not search state_dir (gpuburstctl run by anyone, the
	 * state owned by the daemons' user) cannot know the refreshed catalog:
	 * the built-in one, said in the summary.  An unreadable file in a
	 * searchable directory is an error below.
	 */
	if (access(path, F_OK) != 0 && errno == EACCES) {
		if (!(conf->catalog_unreachable = strdup(path)))
			conf_nomem(c);
		return;
	}
	if (!conf_tf_read(&r, CONF_CATALOG_MAX_BYTES, &text, &len))
		return;		/* no file: the built-in catalog */
	for (p = text; (p = memchr(p, '\n', len - (size_t)(p - text))); p++)
		lines++;
	if (lines > CONF_CATALOG_MAX_TYPES)
		lines = CONF_CATALOG_MAX_TYPES;
	if (!(conf->catalog_path = strdup(path)) ||
	    !(conf->catalog_ = calloc(lines, sizeof(*conf->catalog_)))) {
		conf_nomem(c);
		goto out;
	}
	p = text;
	if (conf_tf_header(&r, &p, text + len, MAGIC, CATALOG_VERSION,
			   &conf->catalog_refreshed_at, &conf->catalog_source))
		types(&r, &p, text + len, lines, conf);
out:
	free(text);
	if (r.failed)	/* the load fails: check the rest against the built-in */
		conf_catalog_free(conf);
}

void conf_catalog_free(struct gb_conf *conf)
{
	for (size_t i = 0; i < conf->n_catalog_; i++)
		free((char *)conf->catalog_[i].name);
	free(conf->catalog_);
	free(conf->catalog_path);
	free(conf->catalog_source);
	free(conf->catalog_unreachable);
	conf->catalog_unreachable = NULL;
	conf->catalog_ = NULL;
	conf->n_catalog_ = 0;
	conf->catalog_path = conf->catalog_source = NULL;
}
