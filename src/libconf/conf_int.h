/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conf_int.h - private to libconf: the key schema, the YAML walker, marks
 *
 * Every YAML mapping of gpuburst.yaml is described by a table of rows
 * (struct conf_key): key name, value type, where the value goes in the
 * struct being filled, its default (as text, parsed exactly like the file's
 * text) and an optional extra check.  One generic walker (conf_yaml.c) reads
 * any mapping through its table: it rejects unknown and duplicate keys,
 * type-checks and converts every value, fills defaults, and records where
 * each value came from (the "mark table") so that the cross-checks of
 * conf_check.c can point at the right line later.  The same tables drive
 * gb_conf_destroy(), so adding a key is adding one row.
 *
 * libyaml types stay in this header and the .c files; gb_conf.h has none.
 */
#ifndef GB_LIBCONF_CONF_INT_H
#define GB_LIBCONF_CONF_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <yaml.h>

#include "gb_conf.h"
#include "gb_str.h"

/* Limits that keep a hostile file from costing more than a bad error. */
#define CONF_MAX_FILE_BYTES (1024 * 1024)
#define CONF_MAX_NODE_VISITS 100000	/* aliases can repeat a subtree */
#define CONF_MAX_DEPTH 64		/* the schema itself nests 7 deep */
#define CONF_MAX_ERRORS 100
#define CONF_MAX_KEYS 32		/* rows per mapping */
#define CONF_MAX_USER_DATA 16384	/* EC2's UserData limit, bytes */
#define CONF_MAX_NODESET_HOSTS 65536
#define CONF_MUNGE_KEY_MIN 32		/* munge's own key limits, bytes */
#define CONF_MUNGE_KEY_MAX 1024
#define CONF_MAX_PUBKEY 65536		/* a PEM public key file, bytes */

enum conf_type {
	CT_STR,		/* char *, any non-empty scalar */
	CT_ABSPATH,	/* char *, starts with '/' */
	CT_URL,		/* char *, http:// or https:// */
	CT_BOOL,	/* bool: true/false/yes/no, unquoted */
	CT_INT,		/* int in [min, max], unquoted */
	CT_NUMBER,	/* double in [min, max], unquoted */
	CT_DURATION,	/* double seconds in [min, max]: 90, "90s", "10m" */
	CT_ENUM,	/* an enum (int-sized), names in arg (struct conf_enum) */
	CT_STRV,	/* char ** NULL-terminated at off, size_t count at off_n */
	CT_MAP,		/* nested struct at off, schema in arg */
	CT_LIST,	/* list of mappings: array at off, count at off_n */
	CT_DICT,	/* mapping name -> mapping: like CT_LIST, name inside */
	CT_FUNC,	/* custom: func reads the node; owns nothing */
};

/* Row flags. */
#define CF_REQUIRED	0x01u	/* absent or null is an error */
#define CF_EMPTY_NULL	0x02u	/* "" is allowed and stores NULL */
#define CF_NONEMPTY	0x04u	/* a list (CT_STRV, CT_LIST) must have at
				   least one item */
#define CF_AUTO		0x08u	/* CT_DURATION: "auto" stores -1 */
#define CF_OFF		0x10u	/* CT_DURATION: "off" and 0 store 0, under min */
#define CF_SECRET	0x20u	/* CT_STR: messages never show the value */

struct conf_ctx;
struct conf_key;

/*
 * Extra check of a converted value at [dst] (row [k], YAML node [n]).
 * Reports its own error through conf_error() and RET false if it did.
 */
typedef bool conf_check_fn(struct conf_ctx *c, const struct conf_key *k,
			   yaml_node_t *n, void *dst);

/* CT_FUNC handler: read node [n] for row [k] into the object [obj]. */
typedef void conf_func_fn(struct conf_ctx *c, const struct conf_key *k,
			  yaml_node_t *n, void *obj);

struct conf_schema;

/*
 * Checks a whole mapping after its keys are read: [seen][i] is the value
 * node of row i of [sc], or NULL when the key was absent or null.
 */
typedef void conf_post_fn(struct conf_ctx *c, const struct conf_schema *sc,
			  yaml_node_t *map, void *obj, yaml_node_t *const *seen);

/* Frees what a schema's struct owns beyond its rows (e.g. pattern_). */
typedef void conf_fini_fn(void *obj);

struct conf_enum {
	const char *const *names;	/* indexed by value; NULL: not accepted */
	int n;
};

struct conf_key {
	const char *name;
	enum conf_type type;
	size_t off;		/* destination inside the object */
	size_t off_n;		/* CT_STRV/CT_LIST/CT_DICT: the size_t count */
	const char *def;	/* default, parsed like file text; CT_STRV:
				   blank-separated words; CT_FUNC: shown by
				   config keys only (the zeroed field is it) */
	unsigned flags;		/* CF_* */
	double min, max;	/* CT_INT, CT_NUMBER, CT_DURATION */
	const void *arg;	/* CT_ENUM: conf_enum; CT_MAP/LIST/DICT: schema;
				   CT_FUNC: the type config keys shows (char *),
				   NULL: path */
	conf_check_fn *check;	/* extra check after conversion, or NULL */
	conf_func_fn *func;	/* CT_FUNC */
};

struct conf_schema {
	const char *what;		/* "policy", "region", ... for messages */
	const struct conf_key *keys;	/* terminated by a row with name NULL */
	size_t size;			/* sizeof the struct, for lists */
	size_t name_off;		/* CT_DICT: char * for the key, else CONF_NO_OFF */
	size_t mark_off;		/* struct gb_conf_mark, or CONF_NO_OFF */
	conf_post_fn *post;
	conf_fini_fn *fini;
};
#define CONF_NO_OFF ((size_t)-1)	/* no such field */

/*****************************************************************************
 *  Row constructors: S is the struct the current table fills (#define S
 *  struct ... before a table, #undef S after it)
 *****************************************************************************/

#define K_(k, t, f) .name = k, .type = t, .off = offsetof(S, f), .off_n = CONF_NO_OFF
#define K_STR(k, f, d, fl, ...) { K_(k, CT_STR, f), .def = d, .flags = fl, __VA_ARGS__ }
#define K_PATH(k, f, d, fl) { K_(k, CT_ABSPATH, f), .def = d, .flags = fl }
#define K_URL(k, f) { K_(k, CT_URL, f) }
#define K_BOOL(k, f, d) { K_(k, CT_BOOL, f), .def = d }
#define K_INT(k, f, d, lo, hi) { K_(k, CT_INT, f), .def = d, .min = lo, .max = hi }
#define K_NUM(k, f, lo, hi) { K_(k, CT_NUMBER, f), .min = lo, .max = hi }
#define K_DUR(k, f, d, lo, hi, fl) \
	{ K_(k, CT_DURATION, f), .def = d, .min = lo, .max = hi, .flags = fl }
#define K_ENUM(k, f, d, e) { K_(k, CT_ENUM, f), .def = d, .arg = e }
#define K_MAP(k, f, sc) { K_(k, CT_MAP, f), .arg = sc }
#define K_STRV(k, f, d, fl, ...) \
	{ .name = k, .type = CT_STRV, .off = offsetof(S, f), \
	  .off_n = offsetof(S, n_##f), .def = d, .flags = fl, __VA_ARGS__ }
#define K_LIST(k, f, n, sc, ...) \
	{ .name = k, .type = CT_LIST, .off = offsetof(S, f), \
	  .off_n = offsetof(S, n), .arg = sc, __VA_ARGS__ }
#define K_DICT(k, f, n, sc) \
	{ .name = k, .type = CT_DICT, .off = offsetof(S, f), \
	  .off_n = offsetof(S, n), .arg = sc }
#define K_FUNC(k, fn) { .name = k, .type = CT_FUNC, .off_n = CONF_NO_OFF, .func = fn }
#define K_END { .name = NULL }

/* One collected message; sorted by position before it is reported. */
struct conf_msg {
	unsigned line, col;		/* 1-based; 0: no position */
	size_t seq;
	char *text;
};

/* Where a stored value came from, keyed by the address it was stored at. */
struct conf_markent {
	const void *addr;
	struct gb_conf_mark mark;
};

struct conf_ctx {
	const char *file;		/* name used in messages */
	yaml_document_t *doc;
	struct gb_conf *conf;		/* being built */
	struct conf_msg *msgs;
	size_t n_msgs, cap_msgs, n_dropped;
	struct conf_markent *marks;
	size_t n_marks, cap_marks;
	bool marks_sorted;
	size_t visits;
	bool stop;			/* node budget exhausted: walk no more */
	bool munge_key_seen;		/* cloud.munge_key was given (maybe
					 * with errors of its own) */
	bool oom;
};

/* The whole file's schema (conf_schema.c). */
extern const struct conf_schema conf_schema_top;
extern const struct conf_enum conf_enum_env, conf_enum_mode,
	conf_enum_strategy, conf_enum_locality, conf_enum_market, conf_enum_placement,
	conf_enum_planner, conf_enum_llm, conf_enum_level;
/* The names of enum gb_capacity_kind (not a key's values: the rungs are keys). */
extern const struct conf_enum conf_enum_capacity;

/*
 * RET whether [arn] is a resource group's ARN,
 * arn:PARTITION:resource-groups:REGION:ACCOUNT:group/NAME (PARTITION aws,
 * aws-cn or aws-us-gov, ACCOUNT 12 digits, NAME 1-128 of [A-Za-z0-9._-]);
 * when it is, its partition and region are copied to [partition] and
 * [region] of [n] bytes each (either may be NULL).
 */
bool conf_group_arn_parse(const char *arn, char *partition, char *region, size_t n);

/* conf_yaml.c: messages, marks, walking. */
void conf_error(struct conf_ctx *c, struct gb_conf_mark m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void conf_error_at(struct conf_ctx *c, const yaml_node_t *n,
		   const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void conf_nomem(struct conf_ctx *c);
struct gb_conf_mark conf_node_mark(const yaml_node_t *n);
void conf_mark_add(struct conf_ctx *c, const void *addr, const yaml_node_t *n);
/* RET the mark recorded for [addr], or {0, 0}. */
struct gb_conf_mark conf_mark_of(struct conf_ctx *c, const void *addr);
/* "line 3", or "line 3, column 9" when [first] is on the line of [here]. */
const char *conf_mark_where(struct conf_ctx *c, const void *first,
			    const void *here, char *buf, size_t n);
const char *conf_kind_name(const yaml_node_t *n);
void conf_walk_mapping(struct conf_ctx *c, const struct conf_schema *sc,
		       yaml_node_t *map, void *obj, const char *where);
/* RET the value node of key [name] among [seen] of [sc], or NULL. */
yaml_node_t *conf_seen(const struct conf_schema *sc, yaml_node_t *const *seen,
		       const char *name);
/* RET [s] quoted for a message: control characters replaced, truncated. */
const char *conf_show(const char *s, char *buf, size_t n);
/* The same for the [len] bytes at [s] (a scalar's), a NUL shown as '?'. */
const char *conf_show_len(const char *s, size_t len, char *buf, size_t n);
/* RET whether scalar node [n] holds a NUL character ("\0", "\x00"). */
bool conf_has_nul(const yaml_node_t *n);
/* "WHAT must not contain a NUL character, got 'a?b'" at scalar [n]. */
void conf_error_nul(struct conf_ctx *c, const yaml_node_t *n, const char *what);
#define CONF_SHOW_MAX 80

/*
 * Duplicate finder: collect (name, address of the stored value) items,
 * then conf_dups_report() sorts them and calls [fn] for every item whose
 * name was seen before (with the first one), in file order.
 */
struct conf_named {
	const char *name;
	const void *addr;	/* for conf_mark_of() */
	size_t owner;		/* caller's data: e.g. the group index */
	size_t seq;
};
struct conf_namev {
	struct conf_named *v;
	size_t n, cap;
};
typedef void conf_dup_fn(struct conf_ctx *c, const struct conf_named *first,
			 const struct conf_named *dup, const void *arg);
void conf_namev_add(struct conf_ctx *c, struct conf_namev *nv,
		    const char *name, const void *addr, size_t owner);
void conf_dups_report(struct conf_ctx *c, struct conf_namev *nv,
		      conf_dup_fn *fn, const void *arg);
void conf_namev_free(struct conf_namev *nv);

/* Apply every row's default to [obj] (zeroed), recursively. */
void conf_defaults(struct conf_ctx *c, const struct conf_schema *sc, void *obj);
/* Free what [obj] owns according to [sc]; leaves [obj] itself. */
void conf_free_obj(const struct conf_schema *sc, void *obj);
/* Format seconds as "90s", "10m", "2h", "1d" (the largest exact unit). */
const char *conf_duration_str(double s, char *buf, size_t n);
/* RET the enum value of [s] in [e], or -1. */
int conf_enum_find(const struct conf_enum *e, const char *s);
/* Append "a, b, c" of the names of [e] to [b]. */
void conf_enum_list(const struct conf_enum *e, struct gb_buf *b);

/* catalog.c: RET whether the catalog in use by [conf] has a type of [family]. */
bool conf_catalog_family_known(const struct gb_conf *conf, const char *family);
/* Append the families of the catalog in use, "g4dn, g5, g5g, ...", to [b]. */
void conf_catalog_family_list(const struct gb_conf *conf, struct gb_buf *b);

/*
 * textfile.c: the line-oriented files gpuburstctl writes into state_dir
 * (catalog, prices): a header "MAGIC VERSION", "refreshed
 * YYYY-MM-DDTHH:MM:SSZ", "source TEXT", then one entry per line; blank
 * lines and '#' lines are ignored.  Only the first problem is reported,
 * "WHAT PATH:LINE: problem" (the file is a program's, not a person's).
 */
struct conf_tf {
	struct conf_ctx *c;
	const char *what;		/* "catalog", "prices" */
	const char *path;
	unsigned line;			/* of the last line read; 0: none */
	size_t line_max;		/* bytes per line */
	bool failed;
};

void conf_tf_bad(struct conf_tf *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The next line of [*p] (NUL-terminated in place), or NULL at the end. */
char *conf_tf_next_line(struct conf_tf *r, char **p, char *end);
/* The next line that is not blank or a comment, or NULL at the end. */
char *conf_tf_next_entry(struct conf_tf *r, char **p, char *end);
/*
 * Read the three header lines.  OUT *refreshed_at, *source NEW.
 * RET false (reported) when they are not right.
 */
bool conf_tf_header(struct conf_tf *r, char **p, char *end, const char *magic, int version,
		    double *refreshed_at, char **source);
/* RET whether [s] is all printable ASCII. */
bool conf_tf_printable(const char *s);
/* Split [s] in place into at most [max] blank-separated fields; RET how many. */
int conf_tf_split(char *s, char **f, int max);
/*
 * Read [path] (at most [max] bytes) for [r]: OUT *text NEW.  RET false
 * when there is no such file (*text NULL, nothing reported) or on an
 * error (reported, r->failed).
 */
bool conf_tf_read(struct conf_tf *r, size_t max, char **text, size_t *len);
/* "YYYY-MM-DDTHH:MM:SSZ" of [t] into [buf]; RET false when [t] is invalid. */
bool conf_tf_stamp(double t, char *buf, size_t n);

/* prices.c: read <state_dir>/prices into c->conf; free it. */
void conf_prices_load(struct conf_ctx *c);
void conf_prices_free(struct gb_conf *conf);

/* catalog_file.c: limits of the catalog file. */
#define CONF_CATALOG_MAX_BYTES (1024 * 1024)
#define CONF_CATALOG_MAX_TYPES 4096

/*
 * Read <state_dir>/catalog into c->conf (catalog_path, catalog_source,
 * catalog_refreshed_at, catalog_, n_catalog_) when the file exists; no
 * file: the built-in catalog stays in use.  Problems are reported through
 * conf_error() as "PATH:LINE: what is wrong".
 */
void conf_catalog_load(struct conf_ctx *c);
/* Free what conf_catalog_load() stored in [conf]. */
void conf_catalog_free(struct gb_conf *conf);

/*
 * conf.c: parse [text] of the file c->file (its defaults already applied
 * to [obj]) with the schema [sc]: a depth and tag pre-scan, one YAML
 * document whose root is a mapping, walked into [obj]; then [after](c)
 * (may be NULL) unless the walk was stopped.  [empty]: the message for a
 * file with no document, NULL when an empty file is valid.  Nothing is
 * parsed when c already holds a message.  Problems are collected in [c].
 */
void conf_parse(struct conf_ctx *c, const char *text, size_t len,
		const struct conf_schema *sc, void *obj, const char *empty,
		void (*after)(struct conf_ctx *c));
/*
 * Report what [c] collected in file order as "FILE:LINE:COL: message"
 * lines: every one to [errs] (may be NULL), the first to [err].
 * RET GB_E_OK when nothing was collected, GB_E_CONFIG, GB_E_NOMEM.
 */
gb_err_t conf_report(struct conf_ctx *c, struct gb_errlist *errs, gb_error_t *err);

/*
 * Read the configuration file [path] (a regular file, at most
 * CONF_MAX_FILE_BYTES) into [text] (NEW) and [len]; errors are also added
 * to [errs] when given.
 */
gb_err_t conf_read_file(const char *path, char **text, size_t *len,
			struct gb_errlist *errs, gb_error_t *err);

/* Free what [c] collected (not c->conf). */
void conf_ctx_free(struct conf_ctx *c);

/* conf_check.c: everything that needs more than one mapping. */
void conf_check_all(struct conf_ctx *c);

#endif /* GB_LIBCONF_CONF_INT_H */
