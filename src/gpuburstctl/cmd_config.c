/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_config.c - gpuburstctl config check | config keys
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"

static const struct option no_longopts[] = {
	CTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

/*
 * Only -j and -h, and no positional argument.  RET true when the caller
 * returns *rc at once (--help, a usage error).
 */
static bool no_args(struct ctl *ctl, const char *cmd, int argc, char **argv,
		    gb_err_t *rc)
{
	bool first = true;
	int c;

	*rc = GB_E_OK;
	while ((c = ctl_getopt(ctl, cmd, argc, argv, ":jh", no_longopts, &first,
			       rc)) != -1) {
		if (c != CTL_OPT_DONE)
			*rc = ctl_unimplemented(cmd, c);
		return true;
	}
	if (optind < argc) {
		*rc = ctl_usage(cmd, "unexpected argument \"%s\"", argv[optind]);
		return true;
	}
	return false;
}

/* --json: {"ok": bool, "path": ..., "errors": [...]}; stderr as without. */
static void print_json(const char *path, const struct gb_errlist *errs,
		       const gb_error_t *err, gb_err_t rc)
{
	json_t *o = json_object(), *a = json_array();

	for (size_t i = 0; i < errs->n; i++)
		json_array_append_new(a, json_string(errs->msgs[i]));
	if (rc && errs->n == 0)
		json_array_append_new(a, json_string(err->text));
	json_object_set_new(o, "ok", json_boolean(rc == GB_E_OK));
	json_object_set_new(o, "path", json_string(path));
	json_object_set_new(o, "errors", a);
	ctl_json_result(o);
}

gb_err_t ctl_cmd_config_check(struct ctl *ctl, int argc, char **argv)
{
	const char *path = gb_conf_path(ctl->conf_path);
	struct gb_errlist errs = { 0 };
	struct gb_conf *conf = NULL;
	gb_error_t err = { 0 };
	gb_err_t rc;

	if (no_args(ctl, "config check", argc, argv, &rc))
		return rc;
	rc = gb_conf_load(path, &conf, &errs, &err);
	if (ctl->json)
		print_json(path, &errs, &err, rc);
	else if (rc == GB_E_OK)
		gb_conf_print_summary(conf, stdout);
	if (rc) {
		ctl_conf_errors(rc, &errs, &err);
		fprintf(stderr, "gpuburstctl: %s: %zu error%s\n", path,
			errs.n ? errs.n : 1, errs.n > 1 ? "s" : "");
	}
	gb_conf_destroy(conf);
	gb_errlist_free(&errs);
	return rc;
}

/*****************************************************************************
 *  config keys
 *****************************************************************************/

struct keys_out {
	json_t *list;
	struct ctl_table table;
};

static void range_text(const struct gb_conf_key_info *k, char *buf, size_t n)
{
	buf[0] = '\0';
	if (k->values)
		snprintf(buf, n, "%s", k->values);
	else if (k->has_range && strcmp(k->type, "duration") == 0)
		snprintf(buf, n, "%.0fs..%.0fs%s", k->min, k->max,
			 k->auto_ok ? " or auto" : k->off_ok ? " or off (0)" : "");
	else if (k->has_range && k->max >= 1e9)
		snprintf(buf, n, ">= %g", k->min);
	else if (k->has_range)
		snprintf(buf, n, "%g..%g", k->min, k->max);
}

static int key_cb(const struct gb_conf_key_info *k, void *arg)
{
	struct keys_out *o = arg;
	char range[256];

	range_text(k, range, sizeof(range));
	if (o->list) {
		json_t *j = json_object();

		json_object_set_new(j, "key", json_string(k->path));
		json_object_set_new(j, "type", json_string(k->type));
		json_object_set_new(j, "default", ctl_jstr(k->def));
		json_object_set_new(j, "required", json_boolean(k->required));
		json_object_set_new(j, "values", ctl_jstr(k->values));
		if (k->has_range) {
			json_object_set_new(j, "min", json_real(k->min));
			json_object_set_new(j, "max", json_real(k->max));
		}
		json_array_append_new(o->list, j);
	} else {
		ctl_table_row(&o->table, k->path, k->type,
			      k->required ? "(required)" : k->def, range);
	}
	return 0;
}

gb_err_t ctl_cmd_config_keys(struct ctl *ctl, int argc, char **argv)
{
	struct keys_out o = { 0 };
	gb_err_t rc;

	if (no_args(ctl, "config keys", argc, argv, &rc))
		return rc;
	if (ctl->json) {
		json_t *doc = json_object();

		o.list = json_array();
		gb_conf_keys(key_cb, &o);
		json_object_set_new(doc, "keys", o.list);
		ctl_json_result(doc);
		return GB_E_OK;
	}
	ctl_table_init(&o.table, 4, "KEY", "TYPE", "DEFAULT", "VALUES");
	gb_conf_keys(key_cb, &o);
	ctl_table_print(&o.table, stdout);
	ctl_table_free(&o.table);
	return GB_E_OK;
}
