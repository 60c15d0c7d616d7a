/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * node_act.c - what gpuburst-node does outside itself: the health check's
 * programs, scontrol and squeue, the gpuburst:agent tag, the munge key
 *
 * Every program runs through gb_spawn_run(): no shell, its own process
 * group killed at the deadline (a hung nvidia-smi is a failure, not a
 * hang), PATH and (for Slurm's) SLURM_CONF as its environment.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gb_creds.h"
#include "gb_ec2.h"
#include "gb_log.h"
#include "gb_spawn.h"
#include "gb_util.h"
#include "node_int.h"

/* The PATH of GB_SPAWN_PATH, for a program whose own PATH is empty. */
#define DEFAULT_PATH (&GB_SPAWN_PATH[sizeof("PATH=") - 1])

#define SLURM_TIMEOUT 30.0	/* seconds per scontrol or squeue call */
#define TAG_TIMEOUT_MS 10000L	/* per CreateTags request */
#define MUNGE_KEY_MAX (1u << 20)

struct node_act {
	const struct gb_node_conf *conf;	/* BORROWED */
	const struct node_ident *id;		/* BORROWED */
	char *env_path;				/* "PATH=..." */
	char *env_slurm;			/* "SLURM_CONF=...", or NULL */
	char *envp[3];
	gb_creds_t *creds;			/* created on first tag */
	gb_ec2_t *ec2;
};

gb_err_t node_act_create(const struct gb_node_conf *conf, const struct node_ident *id,
			 struct node_act **out, gb_error_t *err)
{
	const char *path = getenv("PATH");
	struct node_act *a = calloc(1, sizeof(*a));
	struct gb_buf b = GB_BUF_INIT;
	size_t k = 0;

	*out = NULL;
	if (!a)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	a->conf = conf;
	a->id = id;
	gb_buf_printf(&b, "PATH=%s", path && *path ? path : DEFAULT_PATH);
	a->env_path = gb_buf_steal(&b);
	if (conf->slurm.conf) {
		gb_buf_printf(&b, "SLURM_CONF=%s", conf->slurm.conf);
		a->env_slurm = gb_buf_steal(&b);
	}
	gb_buf_free(&b);
	if (!a->env_path || (conf->slurm.conf && !a->env_slurm)) {
		node_act_destroy(a);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	a->envp[k++] = a->env_path;
	if (a->env_slurm)
		a->envp[k++] = a->env_slurm;
	a->envp[k] = NULL;
	*out = a;
	return GB_E_OK;
}

void node_act_destroy(struct node_act *a)
{
	if (!a)
		return;
	gb_ec2_destroy(a->ec2);
	gb_creds_destroy(a->creds);
	free(a->env_path);
	free(a->env_slurm);
	free(a);
}

char *node_which(const char *name)
{
	const char *path = getenv("PATH");
	struct gb_buf b = GB_BUF_INIT;

	if (strchr(name, '/'))
		return strdup(name);
	if (!path || !*path)
		path = DEFAULT_PATH;
	for (const char *p = path; ; ) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);

		gb_buf_reset(&b);
		/* an empty entry is the current directory: not on an instance */
		if (n > 0 && p[0] == '/') {
			gb_buf_printf(&b, "%.*s/%s", (int)n, p, name);
			if (!gb_buf_failed(&b) && access(gb_buf_str(&b), X_OK) == 0)
				return gb_buf_steal(&b);
		}
		if (!colon)
			break;
		p = colon + 1;
	}
	gb_buf_free(&b);
	return NULL;
}

/* First line of [s] into [buf]: what a failing program said. */
static const char *first_line(const char *s, char *buf, size_t n)
{
	size_t len;

	while (*s == '\n' || *s == ' ')
		s++;
	len = strcspn(s, "\n");
	snprintf(buf, n, "%.*s", (int)(len < 200 ? len : 200), s);
	return buf;
}

/*
 * Run [argv] (argv[0] a name or path) for at most [timeout] seconds.
 * OUT [out] its stdout; [why] what went wrong, when something did.
 * RET GB_E_OK (exit 0), GB_E_NOTFOUND, GB_E_TIMEOUT, GB_E_IO, GB_E_SLURM
 * (a non-zero status).
 */
static gb_err_t run(struct node_act *a, char **argv, double timeout, bool slurm,
		    struct gb_buf *out, char *why, size_t n)
{
	struct gb_buf errb = GB_BUF_INIT;
	struct gb_spawn r = { 0 };
	char *prog = node_which(argv[0]), line[256];
	char *envp[2] = { a->env_path, NULL };
	gb_error_t e;
	gb_err_t rc;

	if (!prog) {
		snprintf(why, n, "%s not found in PATH", argv[0]);
		return GB_E_NOTFOUND;
	}
	argv[0] = prog;
	r.argv = argv;
	r.envp = slurm ? a->envp : envp;
	r.timeout = timeout;
	r.out = out;
	r.err_out = &errb;
	rc = gb_spawn_run(&r, &e);
	if (rc == GB_E_TIMEOUT)
		snprintf(why, n, "%s timed out after %.0fs (killed)", prog, timeout);
	else if (rc)
		snprintf(why, n, "%s: %s", prog, e.text);
	else if (r.status != 0) {
		/* what it said: stderr, else stdout (nvidia-smi prints "No
		 * devices were found" there) */
		const char *said = errb.len ? gb_buf_str(&errb) : out && out->len ? gb_buf_str(out) : "";
		const char *base = strrchr(prog, '/');

		first_line(said, line, sizeof(line));
		snprintf(why, n, "%s failed: exit status %d%s%s", base ? base + 1 : prog, r.status,
			 line[0] ? ": " : "", line);
		rc = GB_E_SLURM;
	}
	argv[0] = NULL;
	free(prog);
	gb_buf_free(&errb);
	return rc;
}

gb_err_t node_act_health(struct node_act *a, const struct node_gpu_expect *e,
			 char *summary, size_t n)
{
	const struct gb_node_conf_health *h = &a->conf->health;
	char q[] = "--query-gpu=name", f[] = "--format=csv,noheader";
	char diag[] = "diag", r[] = "-r", one[] = "1";
	char *smi[] = { NULL, q, f, NULL };
	char *dcgm[] = { NULL, diag, r, one, NULL };
	struct gb_buf out = GB_BUF_INIT;
	char why[NODE_SUMMARY_MAX];
	double t0 = gb_time_mono();
	gb_err_t rc;

	snprintf(summary, n, "no GPU expected");
	if (e->gpus > 0) {
		smi[0] = h->nvidia_smi;
		rc = run(a, smi, h->timeout, false, &out, why, sizeof(why));
		if (rc) {
			snprintf(summary, n, "expected %d x %s, %s", e->gpus, e->model, why);
			goto out;
		}
		if (node_gpu_check(gb_buf_str(&out), e, summary, n)) {
			rc = GB_E_INVALID;
			goto out;
		}
		gb_log_info("health_nvidia_smi result=ok summary=%s ms=%.0f",
			    GB_LOG_Q(summary), (gb_time_mono() - t0) * 1000);
	}
	if (h->dcgm) {
		dcgm[0] = h->dcgmi;
		t0 = gb_time_mono();
		gb_buf_reset(&out);
		rc = run(a, dcgm, h->timeout, false, &out, why, sizeof(why));
		if (rc) {
			snprintf(summary, n, "diag -r 1: %s", why);
			goto out;
		}
		gb_log_info("health_dcgm result=ok ms=%.0f", (gb_time_mono() - t0) * 1000);
	}
	rc = GB_E_OK;
out:
	gb_buf_free(&out);
	return rc ? GB_E_INVALID : GB_E_OK;
}

gb_err_t node_munge_check(const char *path, gb_error_t *err)
{
	struct stat st;
	gb_error_t e;
	gb_err_t rc;
	int fd;

	if ((rc = gb_file_open(path, MUNGE_KEY_MAX, &fd, NULL, &e)))
		return gb_errorf(err, rc, "munge key %s", e.text);
	if (fstat(fd, &st) != 0) {
		rc = gb_errorf(err, GB_E_IO, "munge key %s: %s", path, strerror(errno));
	} else if (st.st_mode & 077) {
		rc = gb_errorf(err, GB_E_PERM,
			       "munge key %s: mode %04o lets group or others at it (munged refuses it: chmod 0400)",
			       path, (unsigned)(st.st_mode & 07777));
	} else if (st.st_size == 0) {
		rc = gb_errorf(err, GB_E_INVALID, "munge key %s: empty", path);
	}
	close(fd);
	return rc;
}

/* The command line of [argv] for a log line. */
static void argv_text(char *const *argv, struct gb_buf *b)
{
	for (size_t i = 0; argv[i]; i++)
		gb_buf_printf(b, "%s%s", i ? " " : "", argv[i]);
}

gb_err_t node_act_scontrol(struct node_act *a, const char *const *args, gb_error_t *err)
{
	char *argv[16] = { NULL }, why[NODE_SUMMARY_MAX];
	struct gb_buf cmd = GB_BUF_INIT;
	double t0 = gb_time_mono();
	size_t k = 1;
	gb_err_t rc;

	argv[0] = a->conf->slurm.scontrol;
	for (size_t i = 0; args[i] && k + 1 < GB_ARRAY_LEN(argv); i++)
		argv[k++] = (char *)args[i];
	argv_text(argv, &cmd);
	rc = run(a, argv, SLURM_TIMEOUT, true, NULL, why, sizeof(why));
	if (rc) {
		gb_log_error("scontrol_failed cmd=%s error=%s", GB_LOG_Q(gb_buf_str(&cmd)),
			     GB_LOG_Q(why));
		gb_errorf(err, rc == GB_E_TIMEOUT ? rc : GB_E_SLURM, "%s", why);
		rc = rc == GB_E_TIMEOUT ? rc : GB_E_SLURM;
	} else {
		gb_log_debug("scontrol cmd=%s call_ms=%.0f", GB_LOG_Q(gb_buf_str(&cmd)),
			     (gb_time_mono() - t0) * 1000);
	}
	gb_buf_free(&cmd);
	return rc;
}

gb_err_t node_act_jobs(struct node_act *a, const char *node, struct gb_strv *ids,
		       gb_error_t *err)
{
	char h[] = "-h", w[] = "-w", o[] = "-o", fmt[] = "%A";
	char *argv[] = { a->conf->slurm.squeue, h, w, (char *)node, o, fmt, NULL };
	struct gb_buf out = GB_BUF_INIT;
	char why[NODE_SUMMARY_MAX];
	gb_err_t rc;

	rc = run(a, argv, SLURM_TIMEOUT, true, &out, why, sizeof(why));
	if (rc)
		rc = gb_errorf(err, rc == GB_E_TIMEOUT ? rc : GB_E_SLURM, "%s", why);
	else
		rc = node_job_ids(gb_buf_str(&out), ids, err);
	gb_buf_free(&out);
	return rc;
}

/* The EC2 client, with the instance role's credentials from IMDS. */
static gb_err_t ec2_client(struct node_act *a, gb_error_t *err)
{
	const struct gb_node_conf *c = a->conf;
	struct gb_creds_opts co = { 0 };
	struct gb_ec2_opts eo = { 0 };
	gb_err_t rc;

	if (a->ec2)
		return GB_E_OK;
	co.no_env = true;
	co.no_files = true;
	co.imds_endpoint = c->imds.endpoint;
	co.imds_local_address = c->imds.source_address;
	co.imds_timeout_ms = (long)(c->imds.timeout * 1000);
	if (!a->creds && (rc = gb_creds_create(&co, &a->creds, err)))
		return rc;
	eo.region = a->id->region;
	eo.endpoint = c->ec2.endpoint;
	eo.creds = a->creds;
	eo.http.connect_timeout_ms = TAG_TIMEOUT_MS / 2;
	eo.http.timeout_ms = TAG_TIMEOUT_MS;
	eo.retry.max_attempts = 3;
	eo.retry.max_total = 20;
	return gb_ec2_create(&eo, &a->ec2, err);
}

gb_err_t node_act_tag(struct node_act *a, const char *value)
{
	const char *ids[] = { a->id->instance_id };
	char v[NODE_TAG_MAX * 4 + 1];
	struct gb_ec2_kv kv;
	double t0 = gb_time_mono();
	gb_error_t e;
	gb_err_t rc;

	gb_strlcpy(v, value, sizeof(v));
	node_text_cut(v, NODE_TAG_MAX);
	kv = (struct gb_ec2_kv){ NODE_TAG_KEY, v };
	rc = ec2_client(a, &e);
	if (!rc)
		rc = gb_ec2_create_tags(a->ec2, ids, 1, &kv, 1, NULL, &e);
	if (rc)
		gb_log_warn("tag_failed key=%s value=%s error=%s", NODE_TAG_KEY, GB_LOG_Q(v),
			    GB_LOG_Q(e.text));
	else
		gb_log_info("tag key=%s value=%s call_ms=%.0f", NODE_TAG_KEY, GB_LOG_Q(v),
			    (gb_time_mono() - t0) * 1000);
	return rc;
}
