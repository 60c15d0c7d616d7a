/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_config.c - gpuburstctl config check
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"

/* --json: {"ok": bool, "path": ..., "errors": [...]} on stdout. */
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
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
	fputc('\n', stdout);
	json_decref(o);
}

static gb_err_t config_check(struct ctl *ctl)
{
	const char *path = gb_conf_path(ctl->conf_path);
	struct gb_errlist errs = { 0 };
	struct gb_conf *conf = NULL;
	gb_error_t err = { 0 };
	gb_err_t rc;

	rc = gb_conf_load(path, &conf, &errs, &err);
	if (ctl->json) {
		print_json(path, &errs, &err, rc);
	} else if (rc == GB_E_OK) {
		gb_conf_print_summary(conf, stdout);
	} else {
		if (errs.n == 0)
			fprintf(stderr, "gpuburstctl: %s\n", err.text);
		for (size_t i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msgs[i]);
		fprintf(stderr, "gpuburstctl: %s: %zu error%s\n", path,
			errs.n ? errs.n : 1, errs.n > 1 ? "s" : "");
	}
	gb_conf_destroy(conf);
	gb_errlist_free(&errs);
	return rc;
}

gb_err_t ctl_cmd_config(struct ctl *ctl, int argc, char **argv)
{
	if (argc < 2)
		return ctl_usage("config", "config needs a subcommand");
	if (strcmp(argv[1], "check") == 0) {
		if (argc > 2)
			return ctl_usage("config", "unexpected argument \"%s\"",
					 argv[2]);
		return config_check(ctl);
	}
	return ctl_usage("config", "unknown config subcommand \"%s\"", argv[1]);
}
