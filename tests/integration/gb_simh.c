/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_simh.c - start, drive and stop a gpuburst-cloudsim (tests, benchmarks)
 */
#include "config.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gb_http.h"
#include "gb_simh.h"
#include "gb_str.h"
#include "gb_util.h"

static void rm_dir(const char *dir)
{
	static const char *const names[] = { "pid", "port", "sim.log", "sim.out" };
	char path[512];

	for (size_t i = 0; i < GB_ARRAY_LEN(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

void gb_simh_stop(struct gb_simh *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		waitpid(s->pid, NULL, 0);
		s->pid = 0;
	}
	if (s->dir[0]) {
		rm_dir(s->dir);
		s->dir[0] = '\0';
	}
}

static void child(const char *bin, const char *scenario, const char *dir,
		  const char *const *argv)
{
	char pidf[512], portf[512], logf[512], outf[512];
	const char *args[48];
	size_t n = 0;

	snprintf(pidf, sizeof(pidf), "%s/pid", dir);
	snprintf(portf, sizeof(portf), "%s/port", dir);
	snprintf(logf, sizeof(logf), "%s/sim.log", dir);
	snprintf(outf, sizeof(outf), "%s/sim.out", dir);
	if (!freopen(outf, "w", stdout))
		_exit(127);
	args[n++] = bin;
	args[n++] = "--scenario";
	args[n++] = scenario;
	args[n++] = "--listen";
	args[n++] = "127.0.0.1:0";
	args[n++] = "--pid-file";
	args[n++] = pidf;
	args[n++] = "--port-file";
	args[n++] = portf;
	args[n++] = "--log";
	args[n++] = logf;
	for (size_t i = 0; argv && argv[i] && n + 1 < GB_ARRAY_LEN(args); i++)
		args[n++] = argv[i];
	args[n] = NULL;
	execv(bin, (char *const *)args);
	_exit(127);
}

gb_err_t gb_simh_start(struct gb_simh *s, const char *bin,
		       const char *scenario, const char *const *argv,
		       gb_error_t *err)
{
	char path[512], *text = NULL;
	const char *tmp = getenv("TMPDIR");
	size_t len;
	long port;

	memset(s, 0, sizeof(*s));
	snprintf(s->dir, sizeof(s->dir), "%s/gb-simh.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(s->dir)) {
		s->dir[0] = '\0';
		return gb_errorf(err, GB_E_IO, "mkdtemp failed");
	}
	fflush(NULL);	/* or the child's stdio flushes the parent's buffers again */
	s->pid = fork();
	if (s->pid < 0) {
		s->pid = 0;
		gb_simh_stop(s);
		return gb_errorf(err, GB_E_IO, "fork failed");
	}
	if (s->pid == 0)
		child(bin, scenario, s->dir, argv);
	snprintf(path, sizeof(path), "%s/pid", s->dir);
	for (int i = 0; i < 800; i++) {
		if (gb_file_read(path, 64, &text, &len, NULL) == GB_E_OK && len) {
			free(text);
			text = NULL;
			break;
		}
		if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
			s->pid = 0;
			gb_simh_stop(s);
			return gb_errorf(err, GB_E_IO, "%s exited at start (scenario %s)",
					 bin, scenario);
		}
		usleep(10000);
	}
	snprintf(path, sizeof(path), "%s/port", s->dir);
	if (gb_file_read(path, 64, &text, &len, NULL) != GB_E_OK) {
		gb_simh_stop(s);
		return gb_errorf(err, GB_E_IO, "simulator wrote no port file");
	}
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		text[--len] = '\0';
	if (gb_parse_long(text, 1, 65535, &port)) {
		free(text);
		gb_simh_stop(s);
		return gb_errorf(err, GB_E_IO, "bad port file");
	}
	free(text);
	s->port = (unsigned)port;
	snprintf(s->endpoint, sizeof(s->endpoint), "http://127.0.0.1:%u", s->port);
	return GB_E_OK;
}

gb_err_t gb_simh_call(const struct gb_simh *s, const char *method,
		      const char *path, const char *json, char **out,
		      gb_error_t *err)
{
	struct gb_http_opts ho = { 0 };
	struct gb_http_request rq = { 0 };
	struct gb_http_response rs = { 0 };
	struct gb_http_header h = { "Content-Type", "application/json" };
	gb_http_t *http = NULL;
	gb_err_t rc;

	if (out)
		*out = NULL;
	ho.no_proxy = true;
	ho.timeout_ms = 30000;
	ho.max_response_bytes = 256u << 20;
	if ((rc = gb_http_create(s->endpoint, &ho, &http, err)))
		return rc;
	rq.method = method;
	rq.path = path;
	rq.headers = &h;
	rq.n_headers = 1;
	rq.body = json;
	rq.body_len = json ? strlen(json) : 0;
	rc = gb_http_do(http, &rq, &rs, err);
	if (!rc && rs.status != 200)
		rc = gb_errorf(err, GB_E_HTTP, "%s %s: status %ld: %s", method, path,
			       rs.status, rs.body ? rs.body : "");
	if (!rc && out) {
		*out = rs.body;
		rs.body = NULL;
	}
	gb_http_response_free(&rs);
	gb_http_destroy(http);
	return rc;
}

gb_err_t gb_simh_capacity(const struct gb_simh *s, const char *az,
			  const char *type, long available, gb_error_t *err)
{
	char json[256];

	snprintf(json, sizeof(json),
		 "{\"az\":\"%s\",\"instance_type\":\"%s\",\"available\":%ld}",
		 az, type, available);
	return gb_simh_call(s, "POST", "/_sim/capacity", json, NULL, err);
}

gb_err_t gb_simh_fault(const struct gb_simh *s, const char *json,
		       gb_error_t *err)
{
	return gb_simh_call(s, "POST", "/_sim/fault", json, NULL, err);
}

/* [cb] for each instance of the state with tag gpuburst:request = [id]. */
static gb_err_t each_instance(const struct gb_simh *s, const char *id,
			      void (*cb)(json_t *inst, void *arg), void *arg,
			      gb_error_t *err)
{
	char *text = NULL;
	json_error_t je;
	json_t *root, *insts, *it;
	size_t i;
	gb_err_t rc;

	if ((rc = gb_simh_call(s, "GET", "/_sim/state", NULL, &text, err)))
		return rc;
	root = json_loads(text, 0, &je);
	free(text);
	if (!root)
		return gb_errorf(err, GB_E_PARSE, "/_sim/state: %s", je.text);
	insts = json_object_get(root, "instances");
	json_array_foreach(insts, i, it) {
		json_t *tags = json_object_get(it, "tags");
		const char *req = json_string_value(json_object_get(tags, "gpuburst:request"));

		if (!id || (req && strcmp(req, id) == 0))
			cb(it, arg);
	}
	json_decref(root);
	return GB_E_OK;
}

static bool alive_state(json_t *inst)
{
	const char *st = json_string_value(json_object_get(inst, "state"));

	return st && (strcmp(st, "pending") == 0 || strcmp(st, "running") == 0);
}

static void count_one(json_t *inst, void *arg)
{
	struct gb_simh_count *c = arg;

	c->total++;
	if (alive_state(inst))
		c->alive++;
	else
		c->dying++;
	if (alive_state(inst) &&
	    json_object_get(json_object_get(inst, "tags"), "gpuburst:node"))
		c->tagged++;
}

gb_err_t gb_simh_count(const struct gb_simh *s, const char *request_id,
		       struct gb_simh_count *out, gb_error_t *err)
{
	memset(out, 0, sizeof(*out));
	return each_instance(s, request_id, count_one, out, err);
}

struct ids_ctx {
	struct gb_strv v;
	bool alive_only;
};

static void id_one(json_t *inst, void *arg)
{
	struct ids_ctx *x = arg;
	const char *id = json_string_value(json_object_get(inst, "id"));

	if (id && (!x->alive_only || alive_state(inst)))
		gb_strv_add(&x->v, id);
}

gb_err_t gb_simh_ids(const struct gb_simh *s, const char *request_id,
		     bool alive_only, char ***ids, size_t *n, gb_error_t *err)
{
	struct ids_ctx x = { { 0 }, alive_only };
	gb_err_t rc = each_instance(s, request_id, id_one, &x, err);

	if (rc) {
		gb_strv_free(&x.v);
		return rc;
	}
	if (!x.v.v && !(x.v.v = calloc(1, sizeof(char *))))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	*ids = x.v.v;
	*n = x.v.n;
	return GB_E_OK;
}

void gb_simh_ids_free(char **ids)
{
	for (size_t i = 0; ids && ids[i]; i++)
		free(ids[i]);
	free(ids);
}
