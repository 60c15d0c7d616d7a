/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * keys.c - walk the key tables: every key the parser knows, as a dotted path
 *
 * gpuburst.yaml(5) must document every key; `gpuburstctl config keys`
 * prints this walk and a test compares it with the man page, so the tables
 * of conf_schema.c stay the single source of truth.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "conf_int.h"

#define KEY_PATH_MAX 256

static const char *type_name(const struct conf_key *k)
{
	switch (k->type) {
	case CT_STR:
		return "string";
	case CT_ABSPATH:
		return "path";
	case CT_URL:
		return "url";
	case CT_BOOL:
		return "bool";
	case CT_INT:
		return "integer";
	case CT_NUMBER:
		return "number";
	case CT_DURATION:
		return "duration";
	case CT_ENUM:
		return "enum";
	case CT_STRV:
		return "list of strings";
	case CT_MAP:
		return "mapping";
	case CT_LIST:
		return "list of mappings";
	case CT_DICT:
		return "mapping of mappings";
	case CT_FUNC:
		/* arg names what the row reads; none: user_data_file's path */
		return k->arg ? k->arg : "path";
	}
	return "?";
}

struct walk {
	gb_conf_key_fn *cb;
	void *arg;
	int stop;
};

static void walk_schema(struct walk *w, const struct conf_schema *sc,
			const char *prefix);

static void visit(struct walk *w, const struct conf_key *k, const char *path)
{
	struct gb_buf values = GB_BUF_INIT;
	struct gb_conf_key_info info = {
		.path = path,
		.name = k->name,
		.type = type_name(k),
		.def = k->def,
		.required = (k->flags & CF_REQUIRED) != 0,
		.min = k->min,
		.max = k->max,
		.has_range = k->type == CT_INT || k->type == CT_NUMBER ||
			     k->type == CT_DURATION,
		.auto_ok = (k->flags & CF_AUTO) != 0,
		.off_ok = (k->flags & CF_OFF) != 0,
	};

	if (k->type == CT_ENUM) {
		conf_enum_list(k->arg, &values);
		info.values = gb_buf_str(&values);
	}
	w->stop = w->cb(&info, w->arg);
	gb_buf_free(&values);
}

static void walk_schema(struct walk *w, const struct conf_schema *sc,
			const char *prefix)
{
	for (const struct conf_key *k = sc->keys; k->name && !w->stop; k++) {
		char path[KEY_PATH_MAX], sub[KEY_PATH_MAX];

		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "",
			 k->name);
		visit(w, k, path);
		if (w->stop)
			return;
		switch (k->type) {
		case CT_MAP:
			walk_schema(w, k->arg, path);
			break;
		case CT_LIST:
			snprintf(sub, sizeof(sub), "%s[]", path);
			walk_schema(w, k->arg, sub);
			break;
		case CT_DICT:
			snprintf(sub, sizeof(sub), "%s.NAME", path);
			walk_schema(w, k->arg, sub);
			break;
		default:
			break;
		}
	}
}

int gb_conf_keys(gb_conf_key_fn *cb, void *arg)
{
	struct walk w = { cb, arg, 0 };

	walk_schema(&w, &conf_schema_top, "");
	return w.stop;
}
