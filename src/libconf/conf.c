/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conf.c - gb_conf_load(): read, parse, validate; lookups and names
 *
 * libyaml's conventions (1/0 returns, problem/context/marks in the parser)
 * are translated here into "file:line:col: message" lines; nothing of
 * libyaml leaves libconf.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf_int.h"
#include "gb_hostlist.h"
#include "gb_util.h"

const char *gb_conf_path(const char *cli)
{
	const char *env = getenv(GB_CONF_ENV_PATH);

	if (cli && *cli)
		return cli;
	if (env && *env)
		return env;
	return GB_CONF_DEFAULT_PATH;
}

const char *gb_conf_path_slurm(const char *slurm_conf, char *buf, size_t n)
{
	const char *env = getenv(GB_CONF_ENV_PATH);
	const char *slash = slurm_conf ? strrchr(slurm_conf, '/') : NULL;
	int len;

	if (env && *env)
		len = snprintf(buf, n, "%s", env);
	else if (slash)
		len = snprintf(buf, n, "%.*s/gpuburst.yaml",
			       (int)(slash - slurm_conf), slurm_conf);
	else
		len = snprintf(buf, n, "%s", GB_CONF_DEFAULT_PATH);
	if (len < 0 || (size_t)len >= n)
		return NULL;
	/* next to slurm.conf only when it is there: else the usual place */
	if (!(env && *env) && slash && access(buf, F_OK) != 0)
		len = snprintf(buf, n, "%s", GB_CONF_DEFAULT_PATH);
	return len < 0 || (size_t)len >= n ? NULL : buf;
}

/*****************************************************************************
 *  Reporting
 *****************************************************************************/

static int msg_cmp(const void *a, const void *b)
{
	const struct conf_msg *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Add one finished line to [errs] and, if it is the first, to [err]. */
static void emit(struct gb_errlist *errs, gb_error_t *err, bool *first,
		 const char *line)
{
	if (*first)
		gb_errorf(err, GB_E_CONFIG, "%s", line);
	*first = false;
	if (errs)
		gb_errlist_add(errs, "%s", line);
}

/* RET GB_E_OK when nothing was collected, else report it all in file order. */
gb_err_t conf_report(struct conf_ctx *c, struct gb_errlist *errs,
		     gb_error_t *err)
{
	bool first = true;
	char *line = NULL;

	if (c->n_msgs == 0 && !c->oom)
		return GB_E_OK;
	qsort(c->msgs, c->n_msgs, sizeof(*c->msgs), msg_cmp);
	for (size_t i = 0; i < c->n_msgs; i++) {
		const struct conf_msg *m = &c->msgs[i];
		int r = m->line ? asprintf(&line, "%s:%u:%u: %s", c->file, m->line,
					   m->col, m->text) :
				  asprintf(&line, "%s: %s", c->file, m->text);

		if (r < 0) {
			c->oom = true;
			break;
		}
		emit(errs, err, &first, line);
		GB_FREE_NULL(line);
	}
	if (c->n_dropped && asprintf(&line, "%s: %zu more errors not shown",
				     c->file, c->n_dropped) >= 0) {
		emit(errs, err, &first, line);
		GB_FREE_NULL(line);
	}
	if (c->oom) {
		gb_errorf(err, GB_E_NOMEM, "%s: out of memory", c->file);
		if (errs)
			gb_errlist_add(errs, "%s: out of memory", c->file);
		return GB_E_NOMEM;
	}
	return GB_E_CONFIG;
}

void conf_ctx_free(struct conf_ctx *c)
{
	for (size_t i = 0; i < c->n_msgs; i++)
		free(c->msgs[i].text);
	free(c->msgs);
	free(c->marks);
}

/*****************************************************************************
 *  Parsing
 *****************************************************************************/

/* Line/column of byte [off] of [text]: reader errors only give an offset. */
static struct gb_conf_mark offset_mark(const char *text, size_t len, size_t off)
{
	struct gb_conf_mark m = { 1, 1 };

	for (size_t i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			m.line++;
			m.col = 1;
		} else {
			m.col++;
		}
	}
	return m;
}

/* libyaml reports a tab as "found character that cannot start any token". */
static bool line_has_tab_indent(const char *text, size_t len, unsigned line)
{
	size_t i = 0;

	for (unsigned l = 1; l < line && i < len; i++) {
		if (text[i] == '\n')
			l++;
	}
	for (; i < len && (text[i] == ' ' || text[i] == '\t'); i++) {
		if (text[i] == '\t')
			return true;
	}
	return false;
}

static void syntax_error(struct conf_ctx *c, const yaml_parser_t *p,
			 const char *text, size_t len)
{
	struct gb_conf_mark m;

	if (p->error == YAML_MEMORY_ERROR) {
		conf_nomem(c);
		return;
	}
	if (p->error == YAML_READER_ERROR) {
		m = offset_mark(text, len, p->problem_offset);
	} else {
		m.line = (unsigned)p->problem_mark.line + 1;
		m.col = (unsigned)p->problem_mark.column + 1;
	}
	conf_error(c, m, "YAML syntax error: %s%s%s%s",
		   p->problem ? p->problem : "unknown problem",
		   p->context ? " " : "", p->context ? p->context : "",
		   line_has_tab_indent(text, len, m.line) ?
		   " (tabs are not allowed for indentation)" : "");
}

/* A resolved tag as it was most likely written: "!!binary", "!x", "!<uri>". */
static const char *tag_show(const yaml_char_t *tag, char *buf, size_t n)
{
	static const char core[] = "tag:yaml.org,2002:";
	const char *t = (const char *)tag;
	char tmp[CONF_SHOW_MAX + 8];

	if (gb_str_has_prefix(t, core))
		snprintf(buf, n, "!!%s", conf_show(t + strlen(core), tmp, sizeof(tmp)));
	else if (t[0] == '!')
		snprintf(buf, n, "%s", conf_show(t, tmp, sizeof(tmp)));
	else
		snprintf(buf, n, "!<%s>", conf_show(t, tmp, sizeof(tmp)));
	return buf;
}

/*
 * The document loader gives an explicit tag to the node and nothing reads
 * it, so "!!binary", "!!python/object:..." or "!!int" would be dropped
 * without a word.  gpuburst.yaml has no use for tags: every key has its
 * type, which a tag could only repeat or contradict.  So any explicit
 * tag, the core schema's (!!str, !!int, !!bool, !!null, !!map, !!seq) and
 * the non-specific "!" included, is an error at its position.  Only the
 * events tell an explicit tag from the loader's default one.
 */
static void check_tag(struct conf_ctx *c, const yaml_event_t *ev)
{
	const yaml_char_t *tag = NULL;
	char shown[CONF_SHOW_MAX + 16];

	if (ev->type == YAML_SCALAR_EVENT)
		tag = ev->data.scalar.tag;
	else if (ev->type == YAML_SEQUENCE_START_EVENT)
		tag = ev->data.sequence_start.tag;
	else if (ev->type == YAML_MAPPING_START_EVENT)
		tag = ev->data.mapping_start.tag;
	if (!tag)
		return;
	conf_error(c, (struct gb_conf_mark){ (unsigned)ev->start_mark.line + 1,
					     (unsigned)ev->start_mark.column + 1 },
		   "YAML tag '%s' is not allowed (gpuburst.yaml uses no tags: write the value plainly, or quote a string)",
		   tag_show(tag, shown, sizeof(shown)));
}

/*
 * libyaml's scanner takes time quadratic in the nesting depth (200000
 * '[' cost 90 s), and nothing in gpuburst.yaml nests more than 6 deep:
 * refuse deep files with a cheap event pass before loading the document.
 * The same pass reports explicit tags (check_tag), which do not stop the
 * load: the walk still reports everything else.
 */
static bool prescan(struct conf_ctx *c, const char *text, size_t len)
{
	yaml_parser_t p;
	yaml_event_t ev;
	bool ok = true, done = false;
	int depth = 0;

	if (!yaml_parser_initialize(&p)) {
		conf_nomem(c);
		return false;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			syntax_error(c, &p, text, len);
			ok = false;
			break;
		}
		check_tag(c, &ev);
		if (ev.type == YAML_SEQUENCE_START_EVENT ||
		    ev.type == YAML_MAPPING_START_EVENT)
			depth++;
		else if (ev.type == YAML_SEQUENCE_END_EVENT ||
			 ev.type == YAML_MAPPING_END_EVENT)
			depth--;
		if (depth > CONF_MAX_DEPTH) {
			struct gb_conf_mark m = { (unsigned)ev.start_mark.line + 1,
						  (unsigned)ev.start_mark.column + 1 };

			conf_error(c, m, "nesting deeper than %d levels", CONF_MAX_DEPTH);
			ok = false;
		}
		done = !ok || ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return ok;
}

/*
 * Walk the document from its root, which must be a mapping, with [sc] into
 * [obj].  [empty]: the message for a file without a document, or NULL
 * when an empty file is valid (every key has a default).
 */
static void walk_root(struct conf_ctx *c, yaml_document_t *doc,
		      const struct conf_schema *sc, void *obj, const char *empty)
{
	yaml_node_t *root = yaml_document_get_root_node(doc);
	struct gb_conf_mark start = { 1, 1 };

	if (!root) {
		if (empty)
			conf_error(c, start, "%s", empty);
		return;
	}
	if (root->type != YAML_MAPPING_NODE) {
		conf_error_at(c, root, "the top level must be a mapping of keys, got %s",
			      conf_kind_name(root));
		return;
	}
	conf_walk_mapping(c, sc, root, obj, "");
}

/* A second document would be silently ignored: refuse it instead. */
static void check_single_document(struct conf_ctx *c, yaml_parser_t *parser,
				  const char *text, size_t len)
{
	yaml_document_t extra;
	yaml_node_t *root;

	if (!yaml_parser_load(parser, &extra)) {
		syntax_error(c, parser, text, len);
		return;
	}
	if ((root = yaml_document_get_root_node(&extra)))
		conf_error_at(c, root, "only one YAML document is allowed per file");
	yaml_document_delete(&extra);
}

void conf_parse(struct conf_ctx *c, const char *text, size_t len,
		const struct conf_schema *sc, void *obj, const char *empty,
		void (*after)(struct conf_ctx *c))
{
	yaml_parser_t parser;
	yaml_document_t doc;
	bool have_doc = false;

	if (c->n_msgs || c->oom || !prescan(c, text, len))
		return;
	if (!yaml_parser_initialize(&parser)) {
		conf_nomem(c);
		return;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		syntax_error(c, &parser, text, len);
		goto out;
	}
	have_doc = true;
	c->doc = &doc;
	walk_root(c, &doc, sc, obj, empty);
	check_single_document(c, &parser, text, len);
	if (!c->stop && after)
		after(c);
out:
	c->doc = NULL;
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
}

/* What gpuburst.yaml checks once its keys are read. */
static void after_top(struct conf_ctx *c)
{
	conf_catalog_load(c);
	conf_prices_load(c);
	conf_check_all(c);
}

/* The password of cloud.proxy, if any, never reaches a log line. */
static void proxy_secret(const char *proxy)
{
	size_t n;
	const char *pw = gb_url_password(proxy, &n);
	char *copy;

	if (!pw || !(copy = strndup(pw, n)))
		return;
	gb_log_secret_add(copy);
	gb_free_secret(&copy);
}

gb_err_t gb_conf_load_string(const char *name, const char *text, size_t len,
			     struct gb_conf **out, struct gb_errlist *errs,
			     gb_error_t *err)
{
	struct conf_ctx c = { 0 };
	struct gb_conf_mark none = { 0, 0 };
	gb_err_t rc;

	*out = NULL;
	c.file = name;
	if (!(c.conf = calloc(1, sizeof(*c.conf))) ||
	    !(c.conf->path = strdup(name)))
		conf_nomem(&c);
	else if (len > CONF_MAX_FILE_BYTES)
		conf_error(&c, none, "the file is larger than %d bytes",
			   CONF_MAX_FILE_BYTES);
	else
		conf_defaults(&c, &conf_schema_top, c.conf);
	conf_parse(&c, text, len, &conf_schema_top, c.conf,
		   "the file is empty: expected a mapping with at least 'cluster_name'",
		   after_top);
	rc = conf_report(&c, errs, err);
	conf_ctx_free(&c);
	if (rc) {
		gb_conf_destroy(c.conf);
		return rc;
	}
	if (c.conf->cloud.secret_access_key)
		gb_log_secret_add(c.conf->cloud.secret_access_key);
	if (c.conf->cloud.session_token)
		gb_log_secret_add(c.conf->cloud.session_token);
	proxy_secret(c.conf->cloud.proxy);
	*out = c.conf;
	return GB_E_OK;
}

gb_err_t conf_read_file(const char *path, char **text, size_t *len,
			struct gb_errlist *errs, gb_error_t *err)
{
	gb_error_t e;
	gb_err_t rc;

	rc = gb_file_read(path, CONF_MAX_FILE_BYTES, text, len, &e);
	if (rc == GB_E_INVALID) {
		rc = gb_errorf(&e, GB_E_CONFIG, "%s: the file is larger than %d bytes",
			       path, CONF_MAX_FILE_BYTES);
	}
	if (rc) {
		gb_errorf(err, rc, "%s", e.text);
		if (errs)
			gb_errlist_add(errs, "%s", e.text);
	}
	return rc;
}

gb_err_t gb_conf_load(const char *path, struct gb_conf **out,
		      struct gb_errlist *errs, gb_error_t *err)
{
	char *text = NULL;
	size_t len = 0;
	gb_err_t rc;

	*out = NULL;
	if ((rc = conf_read_file(path, &text, &len, errs, err)))
		return rc;
	rc = gb_conf_load_string(path, text, len, out, errs, err);
	free(text);
	return rc;
}

static void wipe(char *s)
{
	if (s)
		gb_memzero(s, strlen(s));
}

void gb_conf_destroy(struct gb_conf *conf)
{
	if (!conf)
		return;
	wipe(conf->cloud.secret_access_key);
	wipe(conf->cloud.session_token);
	wipe(conf->cloud.proxy);
	free(conf->cloud.no_proxy_hosts);
	conf_catalog_free(conf);
	conf_prices_free(conf);
	conf_free_obj(&conf_schema_top, conf);
	free(conf->path);
	free(conf);
}

/*****************************************************************************
 *  Lookups
 *****************************************************************************/

const struct gb_conf_region *gb_conf_region(const struct gb_conf *conf,
					    const char *name)
{
	for (size_t i = 0; name && i < conf->n_regions; i++) {
		if (conf->regions[i].name && !strcmp(conf->regions[i].name, name))
			return &conf->regions[i];
	}
	return NULL;
}

const struct gb_conf_nodeset *gb_conf_nodeset(const struct gb_conf *conf,
					      const char *name)
{
	for (size_t i = 0; name && i < conf->n_nodesets; i++) {
		if (conf->nodesets[i].name && !strcmp(conf->nodesets[i].name, name))
			return &conf->nodesets[i];
	}
	return NULL;
}

bool gb_conf_nodeset_has_type(const struct gb_conf_nodeset *ns, const char *type)
{
	for (size_t i = 0; type && i < ns->n_instance_types; i++) {
		if (strcmp(ns->instance_types[i], type) == 0)
			return true;
	}
	return false;
}

const struct gb_conf_nodeset *gb_conf_nodeset_for_node(const struct gb_conf *conf,
						       const char *node)
{
	for (size_t i = 0; node && i < conf->n_nodesets; i++) {
		const struct gb_conf_nodeset *ns = &conf->nodesets[i];

		if (ns->pattern_ && gb_hostlist_match(ns->pattern_, node))
			return ns;
	}
	return NULL;
}

size_t gb_conf_nodeset_size(const struct gb_conf_nodeset *ns)
{
	return ns && ns->pattern_ ? gb_hostlist_count(ns->pattern_) : 0;
}

const struct gb_conf_rung *gb_conf_nodeset_rung(const struct gb_conf_nodeset *ns,
						 enum gb_capacity_kind kind)
{
	for (size_t i = 0; ns && i < ns->n_capacity; i++) {
		if (ns->capacity[i].kind == kind)
			return &ns->capacity[i];
	}
	return NULL;
}

const struct gb_conf_group *gb_conf_group_for(const struct gb_conf *conf,
					      const char *consumer)
{
	for (size_t i = 0; consumer && i < conf->n_groups; i++) {
		const struct gb_conf_group *g = &conf->groups[i];

		for (size_t j = 0; j < g->n_consumer_regions; j++) {
			if (strcmp(g->consumer_regions[j], consumer) == 0)
				return g;
		}
	}
	return NULL;
}

int gb_conf_threshold(const struct gb_conf *conf)
{
	return conf->policy.approval_thresholds[conf->environment];
}

const char *gb_conf_endpoint(const struct gb_conf *conf,
			     const struct gb_conf_region *region)
{
	if (region && region->endpoint)
		return region->endpoint;
	return conf->cloud.endpoint;
}

/*****************************************************************************
 *  Names
 *****************************************************************************/

static const char *enum_name(const struct conf_enum *e, int v)
{
	if (v < 0 || v >= e->n)
		return "unknown";
	return e->names[v] ? e->names[v] : "none";
}

const char *gb_conf_env_name(enum gb_env e)
{
	return enum_name(&conf_enum_env, (int)e);
}

const char *gb_conf_mode_name(enum gb_mode m)
{
	return enum_name(&conf_enum_mode, (int)m);
}

const char *gb_conf_strategy_name(enum gb_strategy s)
{
	return enum_name(&conf_enum_strategy, (int)s);
}

const char *gb_conf_locality_name(enum gb_locality l)
{
	return enum_name(&conf_enum_locality, (int)l);
}

const char *gb_conf_market_name(enum gb_market m)
{
	return enum_name(&conf_enum_market, (int)m);
}

const char *gb_conf_capacity_name(enum gb_capacity_kind c)
{
	return enum_name(&conf_enum_capacity, (int)c);
}

const char *gb_conf_placement_name(enum gb_placement p)
{
	return enum_name(&conf_enum_placement, (int)p);
}

const char *gb_conf_llm_provider_name(enum gb_llm_provider p)
{
	return enum_name(&conf_enum_llm, (int)p);
}

gb_err_t gb_conf_prefer_parse(const char *s, enum gb_prefer *prefer, double *within)
{
	static const char fn[] = "nearest_within(";
	char *end;
	double v;

	*prefer = GB_PREFER_NEAREST;
	*within = 0;
	if (!s)
		return GB_E_INVALID;
	if (strcmp(s, "nearest") == 0)
		return GB_E_OK;
	if (strcmp(s, "cheapest") == 0) {
		*prefer = GB_PREFER_CHEAPEST;
		return GB_E_OK;
	}
	if (strncmp(s, fn, sizeof(fn) - 1) != 0)
		return GB_E_INVALID;
	s += sizeof(fn) - 1;
	/* strtod() alone would take " 1", "inf", "nan" and hex */
	if (!(isdigit((unsigned char)s[0]) || (s[0] == '.' && isdigit((unsigned char)s[1]))))
		return GB_E_INVALID;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || s[1] == 'x' || s[1] == 'X' || !(v >= 0 && v <= 1000))
		return GB_E_INVALID;
	if (*end == '%')
		end++;
	if (strcmp(end, ")") != 0)
		return GB_E_INVALID;
	*prefer = GB_PREFER_NEAREST_WITHIN;
	*within = v;
	return GB_E_OK;
}

const char *gb_conf_prefer_name(enum gb_prefer prefer, double within, char *buf,
				size_t n)
{
	if (prefer == GB_PREFER_NEAREST_WITHIN)
		snprintf(buf, n, "nearest_within(%g%%)", within);
	else
		snprintf(buf, n, "%s", prefer == GB_PREFER_CHEAPEST ? "cheapest" : "nearest");
	return buf;
}

gb_err_t gb_conf_strategy_parse(const char *s, enum gb_strategy *out)
{
	int v = s ? conf_enum_find(&conf_enum_strategy, s) : -1;

	if (v < 0)
		return GB_E_INVALID;
	*out = (enum gb_strategy)v;
	return GB_E_OK;
}

gb_err_t gb_conf_capacity_parse(const char *s, enum gb_capacity_kind *out)
{
	int v = s ? conf_enum_find(&conf_enum_capacity, s) : -1;

	if (v < 0)
		return GB_E_INVALID;
	*out = (enum gb_capacity_kind)v;
	return GB_E_OK;
}

const char *gb_conf_budget_scope_name(enum gb_budget_scope s)
{
	static const char *const names[] = { "cluster", "account", "partition", "user" };

	return (unsigned)s < GB_ARRAY_LEN(names) ? names[s] : "?";
}
