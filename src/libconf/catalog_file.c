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
#define TIME_FMT "%Y-%m-%dT%H:%M:%SZ"

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

static bool printable(const char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
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
	if (!t->gpu_name || !printable(t->gpu_name) || strlen(t->gpu_name) > NAME_MAX_ ||
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
	time_t when = (time_t)refreshed_at;
	struct tm tm;
	char stamp[32];
	const char *why;

	if (!source || !*source || !printable(source) || strlen(source) > 256)
		return gb_errorf(err, GB_E_INVALID, "catalog source must be 1 to 256 printable characters");
	if (refreshed_at < 0 || !gmtime_r(&when, &tm) ||
	    !strftime(stamp, sizeof(stamp), TIME_FMT, &tm))
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

/* fsync the directory holding [path], so that the rename is durable. */
static gb_err_t sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int fd, r;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return GB_E_IO;
	r = fsync(fd);
	close(fd);
	return r == 0 ? GB_E_OK : GB_E_IO;
}

gb_err_t gb_catalog_write(const char *path, const struct gb_instance_type *v,
			  size_t n, const char *source, double refreshed_at,
			  gb_error_t *err)
{
	struct gb_buf b = GB_BUF_INIT;
	char tmp[PATH_MAX];
	bool made = false;		/* tmp exists and is ours to remove */
	int fd = -1, len;
	gb_err_t rc;

	len = snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path ? path : "");
	if (!path || !*path || len < 0 || (size_t)len >= sizeof(tmp)) {
		rc = gb_errorf(err, GB_E_INVALID, "catalog path is empty or too long");
		goto out;
	}
	if ((rc = format(&b, v, n, source, refreshed_at, err)))
		goto out;
	if ((fd = mkstemp(tmp)) < 0) {
		rc = gb_errorf(err, GB_E_IO, "%s: cannot create a temporary file: %s", tmp,
			       strerror(errno));
		goto out;
	}
	made = true;
	if (fchmod(fd, 0644) || gb_write_all(fd, b.data, b.len) || fsync(fd)) {
		rc = gb_errorf(err, GB_E_IO, "%s: cannot write: %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd)) {
		fd = -1;
		rc = gb_errorf(err, GB_E_IO, "%s: cannot write: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path)) {
		rc = gb_errorf(err, GB_E_IO, "cannot rename %s to %s: %s", tmp, path,
			       strerror(errno));
		goto out;
	}
	made = false;
	if (sync_dir(path))
		rc = gb_errorf(err, GB_E_IO, "%s: cannot sync its directory: %s", path,
			       strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	if (made)
		unlink(tmp);
	gb_buf_free(&b);
	return rc;
}

/*****************************************************************************
 *  Reading
 *****************************************************************************/

struct reader {
	struct conf_ctx *c;
	const char *path;
	unsigned line;
	size_t cap;			/* entries allocated: the file's lines */
	bool failed;
};

static void bad(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "PATH:LINE: what": the first problem only, the file is a program's. */
static void bad(struct reader *r, const char *fmt, ...)
{
	struct gb_conf_mark none = { 0, 0 };
	char text[256];
	va_list ap;

	if (r->failed)
		return;
	r->failed = true;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (r->line)
		conf_error(r->c, none, "catalog %s:%u: %s", r->path, r->line, text);
	else
		conf_error(r->c, none, "catalog %s: %s", r->path, text);
}

/* The next line of [*p] (NUL-terminated in place), or NULL at the end. */
static char *next_line(struct reader *r, char **p, char *end)
{
	char *s = *p, *nl;

	if (s >= end)
		return NULL;
	nl = memchr(s, '\n', (size_t)(end - s));
	*p = nl ? nl + 1 : end;
	if (nl)
		*nl = '\0';
	r->line++;
	if ((size_t)((nl ? nl : end) - s) > LINE_MAX_) {
		bad(r, "the line is longer than %d bytes", LINE_MAX_);
		return NULL;
	}
	return s;
}

static bool header(struct reader *r, char **p, char *end, struct gb_conf *conf)
{
	char *s, *rest;
	struct tm tm = { 0 };
	int version = 0, used = 0;

	if (!(s = next_line(r, p, end)) || sscanf(s, MAGIC " %d%n", &version, &used) != 1 ||
	    s[used] || strncmp(s, MAGIC " ", sizeof(MAGIC)) != 0) {
		bad(r, "the first line is not \"%s %d\": not a gpuburst catalog file", MAGIC,
		    CATALOG_VERSION);
		return false;
	}
	if (version != CATALOG_VERSION) {
		bad(r, "catalog format version %d, this gpuburst reads version %d", version,
		    CATALOG_VERSION);
		return false;
	}
	if (!(s = next_line(r, p, end)) || strncmp(s, "refreshed ", 10) != 0 ||
	    !(rest = strptime(s + 10, TIME_FMT, &tm)) || *rest) {
		bad(r, "the second line is not \"refreshed YYYY-MM-DDTHH:MM:SSZ\"");
		return false;
	}
	conf->catalog_refreshed_at = (double)timegm(&tm);
	if (!(s = next_line(r, p, end)) || strncmp(s, "source ", 7) != 0 || !s[7] ||
	    !printable(s + 7)) {
		bad(r, "the third line is not \"source TEXT\" (printable text)");
		return false;
	}
	if (!(conf->catalog_source = strdup(s + 7)))
		conf_nomem(r->c);
	return true;
}

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

/* Split [s] into N_FIELDS fields in place; the last takes the rest. */
static int split(char *s, char **f)
{
	int n = 0;

	while (n < N_FIELDS) {
		s += strspn(s, " \t");
		if (!*s)
			break;
		f[n++] = s;
		if (n == N_FIELDS)
			break;
		s += strcspn(s, " \t");
		if (*s)
			*s++ = '\0';
	}
	if (n == N_FIELDS) {	/* the rest of the line, trailing blanks off */
		char *e = f[n - 1] + strlen(f[n - 1]);

		while (e > f[n - 1] && (e[-1] == ' ' || e[-1] == '\t'))
			*--e = '\0';
	}
	return n;
}

/* One allocation holds an entry's strings: free(t->name) frees them all. */
static bool store(struct reader *r, struct gb_instance_type *t, char **f)
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

static bool type_line(struct reader *r, char *s, struct gb_instance_type *t)
{
	static const int int_fields[] = { 2, 3, 4, 5, 6, 9, 10, 11 };
	int *const dst[] = { &t->vcpus, &t->memory_mib, &t->gpus, &t->gpu_memory_mib,
			     &t->gpu_fraction, &t->efa_max_interfaces, &t->network_cards,
			     &t->max_interfaces };
	char *f[N_FIELDS];
	const char *why;
	int n = split(s, f);

	if (n != N_FIELDS) {
		bad(r, "%d fields, expected %d (%s ... %s)", n, N_FIELDS, field_names[0],
		    field_names[N_FIELDS - 1]);
		return false;
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(int_fields); i++) {
		if (!to_int(f[int_fields[i]], dst[i])) {
			bad(r, "%s '%.32s' is not a whole number", field_names[int_fields[i]],
			    f[int_fields[i]]);
			return false;
		}
	}
	if (strcmp(f[12], "yes") != 0 && strcmp(f[12], "no") != 0) {
		bad(r, "cluster_placement '%.32s' is neither yes nor no", f[12]);
		return false;
	}
	t->cluster_placement = strcmp(f[12], "yes") == 0;
	t->efa = t->efa_max_interfaces > 0;
	if (!store(r, t, f))
		return false;
	if ((why = type_problem(t))) {
		bad(r, "instance type %.64s: %s", t->name, why);
		return false;
	}
	return true;
}

static void types(struct reader *r, char **p, char *end, struct gb_conf *conf)
{
	unsigned *first = calloc(r->cap, sizeof(*first));	/* line of each type */
	char *s;

	if (!first) {
		conf_nomem(r->c);
		r->failed = true;
		return;
	}

	while ((s = next_line(r, p, end))) {
		struct gb_instance_type *t;

		if (!s[strspn(s, " \t")] || s[strspn(s, " \t")] == '#')
			continue;
		if (conf->n_catalog_ == r->cap) {
			bad(r, "more than %d instance types", CONF_CATALOG_MAX_TYPES);
			break;
		}
		t = &conf->catalog_[conf->n_catalog_];
		memset(t, 0, sizeof(*t));
		if (type_line(r, s, t)) {
			for (size_t i = 0; i < conf->n_catalog_ && !r->failed; i++) {
				if (strcmp(conf->catalog_[i].name, t->name) == 0)
					bad(r, "instance type %s is listed twice (first on line %u)",
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
		bad(r, "the file lists no instance type");
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
	struct reader r = { .c = c };
	char path[PATH_MAX], *text = NULL, *p;
	size_t len = 0, lines = 1;
	gb_error_t e;
	gb_err_t rc;

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
	rc = gb_file_read(path, CONF_CATALOG_MAX_BYTES, &text, &len, &e);
	if (rc == GB_E_NOTFOUND)
		return;		/* the built-in catalog */
	if (rc == GB_E_INVALID)
		bad(&r, "the file is larger than %d bytes", CONF_CATALOG_MAX_BYTES);
	else if (rc == GB_E_NOMEM)
		conf_nomem(c);
	else if (rc)
		conf_error(c, (struct gb_conf_mark){ 0, 0 }, "catalog %s", e.text);
	if (rc)
		return;
	if (memchr(text, '\0', len)) {
		bad(&r, "the file contains a NUL byte");
		goto out;
	}
	for (p = text; (p = memchr(p, '\n', len - (size_t)(p - text))); p++)
		lines++;
	if (lines > CONF_CATALOG_MAX_TYPES)
		lines = CONF_CATALOG_MAX_TYPES;
	r.cap = lines;
	if (!(conf->catalog_path = strdup(path)) ||
	    !(conf->catalog_ = calloc(lines, sizeof(*conf->catalog_)))) {
		conf_nomem(c);
		goto out;
	}
	p = text;
	if (header(&r, &p, text + len, conf))
		types(&r, &p, text + len, conf);
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
