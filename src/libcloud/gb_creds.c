/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_creds.c - AWS credential chain: explicit, environment, shared
 * credentials/config files (INI with profiles), EC2 IMDSv2
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "gb_creds.h"
#include "gb_http.h"
#include "gb_log.h"
#include "gb_str.h"
#include "gb_util.h"

#define INI_MAX_BYTES (1u << 20)	/* shared files larger than 1 MiB: refuse */
#define IMDS_MAX_BYTES (64u << 10)
#define RETRY_AFTER_FAILURE 60.0	/* seconds between failed refreshes */

struct gb_creds {
	pthread_mutex_t lock;
	/* options (owned copies) */
	char *access_key_id, *secret_access_key, *session_token;
	char *profile, *credentials_file, *config_file, *imds_endpoint;
	bool no_env, no_files, no_imds;
	long imds_timeout_ms;
	double refresh_window;
	double (*now)(void *ctx);
	void *now_ctx;
	/* state */
	struct gb_creds_snapshot cur;	/* cached; access_key_id NULL: none */
	double next_refresh;		/* when to walk the chain again */
	char *region;			/* from the config file */
	gb_http_t *imds;		/* created on first use */
	char *imds_token;
	double imds_token_expiry;
};

/* ---- small helpers ---------------------------------------------------- */

static void free_secret(char **p)
{
	if (*p) {
		gb_memzero(*p, strlen(*p));
		free(*p);
		*p = NULL;
	}
}

void gb_creds_snapshot_clear(struct gb_creds_snapshot *s)
{
	if (!s)
		return;
	free_secret(&s->access_key_id);
	free_secret(&s->secret_access_key);
	free_secret(&s->session_token);
	s->expiration = 0;
	s->source = GB_CREDS_SRC_NONE;
}

static gb_err_t snapshot_set(struct gb_creds_snapshot *s, const char *ak,
			     const char *sk, const char *tok, double exp,
			     enum gb_creds_source src, gb_error_t *err)
{
	gb_creds_snapshot_clear(s);
	s->access_key_id = strdup(ak);
	s->secret_access_key = strdup(sk);
	s->session_token = tok && *tok ? strdup(tok) : NULL;
	s->expiration = exp;
	s->source = src;
	if (!s->access_key_id || !s->secret_access_key ||
	    (tok && *tok && !s->session_token)) {
		gb_creds_snapshot_clear(s);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	gb_log_secret_add(sk);
	if (tok && *tok)
		gb_log_secret_add(tok);
	return GB_E_OK;
}

const char *gb_creds_source_name(enum gb_creds_source s)
{
	switch (s) {
	case GB_CREDS_SRC_EXPLICIT:
		return "explicit";
	case GB_CREDS_SRC_ENV:
		return "env";
	case GB_CREDS_SRC_CREDENTIALS_FILE:
		return "credentials-file";
	case GB_CREDS_SRC_CONFIG_FILE:
		return "config-file";
	case GB_CREDS_SRC_IMDS:
		return "imds";
	case GB_CREDS_SRC_NONE:
		break;
	}
	return "none";
}

static double now(const gb_creds_t *c)
{
	return c->now ? c->now(c->now_ctx) : gb_time_now();
}

static const char *env_nonempty(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* ---- provider life cycle ---------------------------------------------- */

static gb_err_t imds_client(gb_creds_t *c, gb_error_t *err);

static bool dup_opt(char **dst, const char *src)
{
	*dst = gb_strdup0(src);
	return !src || *dst;
}

gb_err_t gb_creds_create(const struct gb_creds_opts *o, gb_creds_t **out,
			 gb_error_t *err)
{
	struct gb_creds_opts def = { 0 };
	gb_creds_t *c;

	*out = NULL;
	if (!o)
		o = &def;
	if (!o->access_key_id != !o->secret_access_key ||
	    (o->access_key_id && (!*o->access_key_id || !*o->secret_access_key)))
		return gb_errorf(err, GB_E_CONFIG,
				 "explicit credentials need both an access key id and a secret access key");
	if (o->session_token && !o->access_key_id)
		return gb_errorf(err, GB_E_CONFIG,
				 "an explicit session token needs explicit keys");
	if (o->imds_timeout_ms < 0 || o->refresh_window < 0)
		return gb_errorf(err, GB_E_CONFIG, "negative IMDS timeout or refresh window");
	c = calloc(1, sizeof(*c));
	if (!c)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	pthread_mutex_init(&c->lock, NULL);
	if (!dup_opt(&c->access_key_id, o->access_key_id) ||
	    !dup_opt(&c->secret_access_key, o->secret_access_key) ||
	    !dup_opt(&c->session_token, o->session_token) ||
	    !dup_opt(&c->profile, o->profile) ||
	    !dup_opt(&c->credentials_file, o->credentials_file) ||
	    !dup_opt(&c->config_file, o->config_file) ||
	    !dup_opt(&c->imds_endpoint, o->imds_endpoint)) {
		gb_creds_destroy(c);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	if (o->secret_access_key)
		gb_log_secret_add(o->secret_access_key);
	if (o->session_token)
		gb_log_secret_add(o->session_token);
	c->no_env = o->no_env;
	c->no_files = o->no_files;
	c->no_imds = o->no_imds;
	c->imds_timeout_ms = o->imds_timeout_ms ? o->imds_timeout_ms
						: GB_CREDS_IMDS_DEFAULT_TIMEOUT_MS;
	c->refresh_window = o->refresh_window ? o->refresh_window
					      : GB_CREDS_REFRESH_WINDOW;
	c->now = o->now;
	c->now_ctx = o->now_ctx;
	if (c->imds_endpoint && !c->no_imds) {
		gb_err_t rc = imds_client(c, err);

		if (rc) {
			gb_creds_destroy(c);
			return rc;
		}
	}
	*out = c;
	return GB_E_OK;
}

void gb_creds_destroy(gb_creds_t *c)
{
	if (!c)
		return;
	free_secret(&c->access_key_id);
	free_secret(&c->secret_access_key);
	free_secret(&c->session_token);
	free(c->profile);
	free(c->credentials_file);
	free(c->config_file);
	free(c->imds_endpoint);
	gb_creds_snapshot_clear(&c->cur);
	free(c->region);
	free_secret(&c->imds_token);
	gb_http_destroy(c->imds);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* ---- shared files: a strict little INI reader ---------------------------- */

/* What we want from one file: the keys of one section. */
struct ini_want {
	const char *path;
	const char *section;	/* "default", "profile x" or "x" */
	bool found;		/* the section exists */
	char *keys[6];		/* NEW values of the keys below, or NULL */
	/* duplicate detection */
	struct gb_strv sections;
	struct gb_strv seen_keys;	/* keys of the current section */
};

enum { K_AK, K_SK, K_TOKEN, K_TOKEN_OLD, K_REGION, K_UNSUPPORTED };

static const char *const ini_keys[] = {
	"aws_access_key_id", "aws_secret_access_key", "aws_session_token",
	"aws_security_token", "region",
};

/* Settings that name another credential source we do not implement. */
static bool unsupported_key(const char *k)
{
	return !strcmp(k, "role_arn") || !strcmp(k, "credential_process") ||
	       !strcmp(k, "web_identity_token_file") ||
	       !strcmp(k, "credential_source") || gb_str_has_prefix(k, "sso_");
}

static char *trim(char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

/* "[ profile   x ]" -> "profile x"; RET NULL when malformed. */
static char *section_name(char *line, bool *bad_tail)
{
	char *end = strchr(line, ']');
	char *name, *rest;

	*bad_tail = false;
	if (!end)
		return NULL;
	*end = '\0';
	rest = trim(end + 1);
	if (*rest && *rest != '#' && *rest != ';')
		*bad_tail = true;
	name = trim(line + 1);
	if (strncmp(name, "profile", 7) == 0 && (name[7] == ' ' || name[7] == '\t')) {
		char *p = trim(name + 8);

		memmove(name + 8, p, strlen(p) + 1);
		name[7] = ' ';
	}
	return name;
}

static gb_err_t ini_line(struct ini_want *w, char *line, size_t lineno,
			 bool *in_wanted, bool *have_section, bool *may_continue,
			 gb_error_t *err)
{
	char *eq, *key, *value;

	if (*line == ' ' || *line == '\t') {
		char *t = trim(line);

		if (*t == '\0' || *t == '#' || *t == ';')
			return GB_E_OK;
		if (!*may_continue)
			return gb_errorf(err, GB_E_CONFIG,
					 "%s:%zu: indented line does not continue a setting",
					 w->path, lineno);
		return GB_E_OK;	/* nested value (e.g. "s3 =" block): ignored */
	}
	line = trim(line);
	*may_continue = false;
	if (*line == '\0' || *line == '#' || *line == ';')
		return GB_E_OK;
	if (*line == '[') {
		bool bad_tail;
		char *name = section_name(line, &bad_tail);

		if (!name)
			return gb_errorf(err, GB_E_CONFIG,
					 "%s:%zu: section header without ']'",
					 w->path, lineno);
		if (bad_tail || !*name)
			return gb_errorf(err, GB_E_CONFIG,
					 "%s:%zu: malformed section header",
					 w->path, lineno);
		if (gb_strv_find(&w->sections, name) >= 0)
			return gb_errorf(err, GB_E_CONFIG,
					 "%s:%zu: duplicate section [%s]",
					 w->path, lineno, name);
		if (gb_strv_add(&w->sections, name))
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		gb_strv_free(&w->seen_keys);
		*have_section = true;
		*in_wanted = strcmp(name, w->section) == 0;
		if (*in_wanted)
			w->found = true;
		return GB_E_OK;
	}
	eq = strchr(line, '=');
	if (!eq)
		return gb_errorf(err, GB_E_CONFIG,
				 "%s:%zu: expected \"key = value\", \"[section]\" or a comment",
				 w->path, lineno);
	if (!*have_section)
		return gb_errorf(err, GB_E_CONFIG,
				 "%s:%zu: setting outside any [section]", w->path,
				 lineno);
	*eq = '\0';
	key = trim(line);
	value = trim(eq + 1);
	if (!*key)
		return gb_errorf(err, GB_E_CONFIG, "%s:%zu: empty key", w->path,
				 lineno);
	if (gb_strv_find(&w->seen_keys, key) >= 0)
		return gb_errorf(err, GB_E_CONFIG, "%s:%zu: duplicate key \"%s\"",
				 w->path, lineno, key);
	if (gb_strv_add(&w->seen_keys, key))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	*may_continue = true;
	if (!*in_wanted)
		return GB_E_OK;
	for (size_t i = 0; i < GB_ARRAY_LEN(ini_keys); i++) {
		if (strcmp(key, ini_keys[i]) == 0) {
			w->keys[i] = strdup(value);
			if (!w->keys[i])
				return gb_errorf(err, GB_E_NOMEM, "out of memory");
		}
	}
	if (unsupported_key(key) && !w->keys[K_UNSUPPORTED]) {
		w->keys[K_UNSUPPORTED] = strdup(key);
		if (!w->keys[K_UNSUPPORTED])
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	return GB_E_OK;
}

static gb_err_t ini_parse(struct ini_want *w, char *data, size_t len,
			  gb_error_t *err)
{
	bool in_wanted = false, have_section = false, may_continue = false;
	size_t lineno = 0;
	char *p = data;

	if (memchr(data, '\0', len))
		return gb_errorf(err, GB_E_CONFIG, "%s: contains NUL bytes",
				 w->path);
	while (p < data + len) {
		char *nl = strchr(p, '\n');
		char *end = nl ? nl : data + len;
		gb_err_t rc;

		lineno++;
		*end = '\0';
		if (end > p && end[-1] == '\r')
			end[-1] = '\0';
		if (lineno == 1 && !strncmp(p, "\xef\xbb\xbf", 3))
			p += 3;	/* UTF-8 byte order mark */
		rc = ini_line(w, p, lineno, &in_wanted, &have_section,
			      &may_continue, err);
		if (rc)
			return rc;
		if (!nl)
			break;
		p = nl + 1;
	}
	return GB_E_OK;
}

static void ini_want_free(struct ini_want *w)
{
	for (size_t i = 0; i < GB_ARRAY_LEN(w->keys); i++)
		free_secret(&w->keys[i]);
	gb_strv_free(&w->sections);
	gb_strv_free(&w->seen_keys);
}

/*
 * Read [path] in one allocation (no realloc leaves stray copies of the
 * secrets), parse it, wipe it.  A missing file is not an error:
 * *exists = false.  gb_file_open() refuses what is not a regular file
 * (a FIFO would block) and a file over the limit, before reading.
 */
static gb_err_t ini_read(struct ini_want *w, bool *exists, gb_error_t *err)
{
	char *data = NULL;
	size_t size = 0, got = 0;
	gb_err_t rc;
	int fd;

	*exists = false;
	rc = gb_file_open(w->path, INI_MAX_BYTES, &fd, &size, err);
	if (rc == GB_E_NOTFOUND)
		return GB_E_OK;
	*exists = true;
	if (rc) {
		if (err)
			err->code = GB_E_CONFIG;
		return GB_E_CONFIG;
	}
	data = malloc(size + 1);
	if (!data) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	while (got < size) {
		ssize_t r = read(fd, data + got, size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = gb_errorf(err, GB_E_CONFIG, "%s: %s", w->path,
				       strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	data[got] = '\0';
	rc = ini_parse(w, data, got, err);
out:
	if (data) {
		gb_memzero(data, size + 1);
		free(data);
	}
	close(fd);
	return rc;
}

/* RET NEW path: explicit option, else $ENV, else ~/.aws/NAME. */
static char *file_path(const char *opt, const char *env, const char *name)
{
	const char *home = env_nonempty("HOME");
	struct gb_buf b = GB_BUF_INIT;
	struct passwd pw, *res = NULL;
	char pwbuf[4096];

	if (opt)
		return strdup(opt);
	if (env_nonempty(env))
		return strdup(getenv(env));
	if (!home && getpwuid_r(getuid(), &pw, pwbuf, sizeof(pwbuf), &res) == 0 &&
	    res)
		home = res->pw_dir;
	if (!home)
		return NULL;
	gb_buf_printf(&b, "%s/.aws/%s", home, name);
	return gb_buf_steal(&b);
}

/* ---- resolution steps ------------------------------------------------- */

/* RET GB_E_OK with *got set when the step produced credentials. */
typedef gb_err_t (*step_fn)(gb_creds_t *c, struct gb_creds_snapshot *s,
			    bool *got, struct gb_buf *tried, gb_error_t *err);

static gb_err_t step_explicit(gb_creds_t *c, struct gb_creds_snapshot *s,
			      bool *got, struct gb_buf *tried, gb_error_t *err)
{
	(void)tried;
	if (!c->access_key_id)
		return GB_E_OK;
	*got = true;
	return snapshot_set(s, c->access_key_id, c->secret_access_key,
			    c->session_token, 0, GB_CREDS_SRC_EXPLICIT, err);
}

static gb_err_t step_env(gb_creds_t *c, struct gb_creds_snapshot *s, bool *got,
			 struct gb_buf *tried, gb_error_t *err)
{
	const char *ak = env_nonempty("AWS_ACCESS_KEY_ID");
	const char *sk = env_nonempty("AWS_SECRET_ACCESS_KEY");
	const char *tok = env_nonempty("AWS_SESSION_TOKEN");
	const char *exp_s = env_nonempty("AWS_CREDENTIAL_EXPIRATION");
	double exp = 0;

	if (c->no_env || c->profile)
		return GB_E_OK;
	gb_buf_puts(tried, ", environment");
	if (!ak && !sk)
		return GB_E_OK;
	if (!ak || !sk)
		return gb_errorf(err, GB_E_CONFIG, "%s is set but %s is not",
				 ak ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
				 ak ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
	if (!tok)
		tok = env_nonempty("AWS_SECURITY_TOKEN");
	if (exp_s && gb_time_parse(exp_s, now(c), &exp) != GB_E_OK)
		return gb_errorf(err, GB_E_CONFIG,
				 "AWS_CREDENTIAL_EXPIRATION \"%s\" is not an ISO-8601 time",
				 exp_s);
	*got = true;
	return snapshot_set(s, ak, sk, tok, exp, GB_CREDS_SRC_ENV, err);
}

/* Take credentials from [w] if its section has them. */
static gb_err_t from_section(gb_creds_t *c, struct ini_want *w,
			     enum gb_creds_source src,
			     struct gb_creds_snapshot *s, bool *got,
			     gb_error_t *err)
{
	const char *ak = w->keys[K_AK], *sk = w->keys[K_SK];
	const char *tok = w->keys[K_TOKEN] ? w->keys[K_TOKEN] : w->keys[K_TOKEN_OLD];

	(void)c;
	if (!w->found)
		return GB_E_OK;
	if ((ak && *ak) != (sk && *sk))
		return gb_errorf(err, GB_E_CONFIG,
				 "%s: [%s] has %s but no %s", w->path, w->section,
				 ak && *ak ? "aws_access_key_id" : "aws_secret_access_key",
				 ak && *ak ? "aws_secret_access_key" : "aws_access_key_id");
	if (!(ak && *ak)) {
		if (w->keys[K_UNSUPPORTED])
			return gb_errorf(err, GB_E_CONFIG,
					 "%s: [%s] uses %s, which gpuburst does not support; use static keys or an instance role",
					 w->path, w->section, w->keys[K_UNSUPPORTED]);
		return GB_E_OK;
	}
	*got = true;
	return snapshot_set(s, ak, sk, tok, 0, src, err);
}

static gb_err_t step_files(gb_creds_t *c, struct gb_creds_snapshot *s,
			   bool *got, struct gb_buf *tried, gb_error_t *err)
{
	const char *profile = c->profile;
	struct ini_want cw = { 0 }, fw = { 0 };
	struct gb_buf sect = GB_BUF_INIT;
	char *cpath = NULL, *fpath = NULL;
	bool c_exists = false, f_exists = false, named;
	gb_err_t rc = GB_E_OK;

	if (c->no_files)
		return GB_E_OK;
	if (!profile)
		profile = env_nonempty("AWS_PROFILE");
	if (!profile)
		profile = env_nonempty("AWS_DEFAULT_PROFILE");
	named = profile && strcmp(profile, "default") != 0;
	if (!profile)
		profile = "default";
	cpath = file_path(c->credentials_file, "AWS_SHARED_CREDENTIALS_FILE",
			  "credentials");
	fpath = file_path(c->config_file, "AWS_CONFIG_FILE", "config");
	if (strcmp(profile, "default") == 0)
		gb_buf_puts(&sect, "default");
	else
		gb_buf_printf(&sect, "profile %s", profile);
	if (gb_buf_failed(&sect)) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	gb_buf_printf(tried, ", profile %s in %s and %s", profile,
		      cpath ? cpath : "(no home)", fpath ? fpath : "(no home)");
	cw.path = cpath;
	cw.section = profile;
	fw.path = fpath;
	fw.section = sect.data;
	if (cpath && (rc = ini_read(&cw, &c_exists, err)) != GB_E_OK)
		goto out;
	if (fpath && (rc = ini_read(&fw, &f_exists, err)) != GB_E_OK)
		goto out;
	free(c->region);
	c->region = gb_strdup0(fw.keys[K_REGION]);
	if (named && !cw.found && !fw.found) {
		rc = gb_errorf(err, GB_E_CONFIG,
			       "AWS profile \"%s\" not found in %s or %s", profile,
			       cpath ? cpath : "(no home)", fpath ? fpath : "(no home)");
		goto out;
	}
	rc = from_section(c, &cw, GB_CREDS_SRC_CREDENTIALS_FILE, s, got, err);
	if (!rc && !*got)
		rc = from_section(c, &fw, GB_CREDS_SRC_CONFIG_FILE, s, got, err);
out:
	ini_want_free(&cw);
	ini_want_free(&fw);
	gb_buf_free(&sect);
	free(cpath);
	free(fpath);
	return rc;
}

/* ---- IMDSv2 ------------------------------------------------------------ */

static gb_err_t imds_client(gb_creds_t *c, gb_error_t *err)
{
	struct gb_http_opts ho = { 0 };
	const char *ep = c->imds_endpoint;

	if (c->imds)
		return GB_E_OK;
	if (!ep)
		ep = env_nonempty("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	if (!ep)
		ep = GB_CREDS_IMDS_DEFAULT_ENDPOINT;
	ho.connect_timeout_ms = c->imds_timeout_ms;
	ho.timeout_ms = c->imds_timeout_ms;
	ho.max_response_bytes = IMDS_MAX_BYTES;
	ho.no_proxy = true;	/* link-local metadata never goes via a proxy */
	if (gb_http_create(ep, &ho, &c->imds, err) != GB_E_OK) {
		gb_error_prefix(err, "IMDS endpoint");
		if (err)
			err->code = GB_E_CONFIG;
		return GB_E_CONFIG;
	}
	return GB_E_OK;
}

/* RET NEW "<endpoint path without trailing slash><rest>". */
static char *imds_path(gb_creds_t *c, const char *rest)
{
	const char *base = gb_http_base_path(c->imds);
	size_t n = strlen(base);
	struct gb_buf b = GB_BUF_INIT;

	while (n > 0 && base[n - 1] == '/')
		n--;
	gb_buf_append(&b, base, n);
	gb_buf_puts(&b, rest);
	return gb_buf_steal(&b);
}

/* One IMDS request; [resp] must be freed by the caller. */
static gb_err_t imds_do(gb_creds_t *c, const char *method, const char *rest,
			bool with_token, struct gb_http_response *resp,
			gb_error_t *err)
{
	struct gb_http_header h[1];
	struct gb_http_request req = { .method = method, .headers = h,
				       .n_headers = 1 };
	char ttl[32];
	gb_err_t rc;

	snprintf(ttl, sizeof(ttl), "%ld", GB_CREDS_IMDS_TOKEN_TTL);
	if (with_token) {
		h[0].name = "X-aws-ec2-metadata-token";
		h[0].value = c->imds_token;
	} else {
		h[0].name = "X-aws-ec2-metadata-token-ttl-seconds";
		h[0].value = ttl;
	}
	req.path = imds_path(c, rest);
	if (!req.path)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	rc = gb_http_do(c->imds, &req, resp, err);
	free((char *)req.path);
	if (rc)
		return gb_error_prefix(err, "IMDS");
	return GB_E_OK;
}

static gb_err_t imds_token(gb_creds_t *c, gb_error_t *err)
{
	struct gb_http_response r = { 0 };
	gb_err_t rc;
	char *t;

	if (c->imds_token && now(c) < c->imds_token_expiry)
		return GB_E_OK;
	free_secret(&c->imds_token);
	rc = imds_do(c, "PUT", "/latest/api/token", false, &r, err);
	if (rc)
		goto out;
	if (r.status != 200) {
		rc = gb_errorf(err, GB_E_AUTH,
			       "IMDS: token request refused (HTTP %ld; IMDSv2 unavailable or hop limit too low)",
			       r.status);
		goto out;
	}
	t = trim(r.body);
	if (!*t || strpbrk(t, "\r\n")) {
		rc = gb_errorf(err, GB_E_AUTH, "IMDS: empty or malformed token");
		goto out;
	}
	c->imds_token = strdup(t);
	if (!c->imds_token) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	gb_log_secret_add(c->imds_token);
	/* renew a minute early so a token never dies between two calls */
	c->imds_token_expiry = now(c) + GB_CREDS_IMDS_TOKEN_TTL - 60;
out:
	gb_http_response_free(&r);
	return rc;
}

/* GET with the token; a 401 (token expired) gets a new token once. */
static gb_err_t imds_get(gb_creds_t *c, const char *rest,
			 struct gb_http_response *r, gb_error_t *err)
{
	gb_err_t rc;

	for (int attempt = 0; attempt < 2; attempt++) {
		rc = imds_token(c, err);
		if (rc)
			return rc;
		rc = imds_do(c, "GET", rest, true, r, err);
		if (rc || r->status != 401)
			return rc;
		gb_http_response_free(r);
		free_secret(&c->imds_token);
	}
	return gb_errorf(err, GB_E_AUTH, "IMDS: token rejected twice (HTTP 401)");
}

static bool role_name_ok(const char *s)
{
	if (!*s || strlen(s) > 128)
		return false;
	for (; *s; s++) {
		if (!isalnum((unsigned char)*s) && !strchr("+=,.@_-", *s))
			return false;
	}
	return true;
}

/* Wipe a string inside a jansson value before it is freed. */
static void json_wipe(json_t *v)
{
	if (json_is_string(v))
		gb_memzero((char *)json_string_value(v), json_string_length(v));
}

static gb_err_t imds_parse(gb_creds_t *c, const char *body,
			   struct gb_creds_snapshot *s, gb_error_t *err)
{
	json_error_t je;
	json_t *doc = json_loads(body, JSON_REJECT_DUPLICATES, &je);
	const char *ak, *sk, *tok, *exp_s, *code;
	double exp = 0;
	gb_err_t rc;

	if (!json_is_object(doc)) {
		rc = gb_errorf(err, GB_E_AUTH,
			       "IMDS: credentials are not a JSON object (line %d: %s)",
			       je.line, doc ? "not an object" : je.text);
		goto out;
	}
	code = json_string_value(json_object_get(doc, "Code"));
	ak = json_string_value(json_object_get(doc, "AccessKeyId"));
	sk = json_string_value(json_object_get(doc, "SecretAccessKey"));
	tok = json_string_value(json_object_get(doc, "Token"));
	exp_s = json_string_value(json_object_get(doc, "Expiration"));
	if (code && strcmp(code, "Success") != 0) {
		rc = gb_errorf(err, GB_E_AUTH, "IMDS: credentials Code \"%.64s\"",
			       code);
		goto out;
	}
	if (!ak || !*ak || !sk || !*sk || !tok || !*tok || !exp_s) {
		rc = gb_errorf(err, GB_E_AUTH,
			       "IMDS: credentials lack AccessKeyId, SecretAccessKey, Token or Expiration");
		goto out;
	}
	if (gb_time_parse(exp_s, now(c), &exp) != GB_E_OK || strlen(exp_s) < 20) {
		rc = gb_errorf(err, GB_E_AUTH,
			       "IMDS: Expiration \"%.40s\" is not YYYY-MM-DDTHH:MM:SSZ",
			       exp_s);
		goto out;
	}
	rc = snapshot_set(s, ak, sk, tok, exp, GB_CREDS_SRC_IMDS, err);
out:
	if (doc) {
		json_wipe(json_object_get(doc, "SecretAccessKey"));
		json_wipe(json_object_get(doc, "Token"));
		json_decref(doc);
	}
	return rc;
}

static gb_err_t step_imds(gb_creds_t *c, struct gb_creds_snapshot *s,
			  bool *got, struct gb_buf *tried, gb_error_t *err)
{
	static const char roles[] = "/latest/meta-data/iam/security-credentials/";
	struct gb_http_response r = { 0 };
	struct gb_buf path = GB_BUF_INIT;
	const char *dis = getenv("AWS_EC2_METADATA_DISABLED");
	char *role, *nl;
	gb_err_t rc;

	if (c->no_imds || (dis && strcasecmp(dis, "true") == 0))
		return GB_E_OK;
	rc = imds_client(c, err);
	if (rc)
		return rc;
	gb_buf_printf(tried, ", IMDS at %s", gb_http_url(c->imds));
	rc = imds_get(c, roles, &r, err);
	if (rc)
		goto out;
	if (r.status == 404) {
		rc = gb_errorf(err, GB_E_AUTH, "IMDS: no IAM role attached to this instance");
		goto out;
	}
	if (r.status != 200) {
		rc = gb_errorf(err, GB_E_AUTH, "IMDS: role list: HTTP %ld", r.status);
		goto out;
	}
	role = r.body + strspn(r.body, " \t\r\n");
	nl = strpbrk(role, "\r\n");
	if (nl)
		*nl = '\0';
	role = trim(role);
	if (!role_name_ok(role)) {
		rc = gb_errorf(err, GB_E_AUTH, "IMDS: unusable role name");
		goto out;
	}
	gb_buf_printf(&path, "%s%s", roles, role);
	gb_http_response_free(&r);
	if (gb_buf_failed(&path)) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	rc = imds_get(c, path.data, &r, err);
	if (rc)
		goto out;
	if (r.status != 200) {
		rc = gb_errorf(err, GB_E_AUTH, "IMDS: credentials: HTTP %ld", r.status);
		goto out;
	}
	rc = imds_parse(c, r.body, s, err);
	if (!rc)
		*got = true;
out:
	gb_http_response_free(&r);
	gb_buf_free(&path);
	return rc;
}

/* ---- the chain -------------------------------------------------------- */

static gb_err_t resolve(gb_creds_t *c, struct gb_creds_snapshot *s,
			gb_error_t *err)
{
	static const step_fn steps[] = { step_explicit, step_env, step_files,
					 step_imds };
	struct gb_buf tried = GB_BUF_INIT;
	gb_err_t rc = GB_E_OK;
	bool got = false;

	gb_buf_puts(&tried, "explicit configuration");
	for (size_t i = 0; i < GB_ARRAY_LEN(steps) && !got; i++) {
		gb_error_t e;

		rc = steps[i](c, s, &got, &tried, &e);
		if (rc == GB_E_HTTP || rc == GB_E_TIMEOUT || rc == GB_E_AUTH) {
			/* an unreachable or unwilling IMDS: nothing found */
			rc = gb_errorf(err, GB_E_AUTH,
				       "no AWS credentials found (tried %s: %s)",
				       gb_buf_str(&tried), e.text);
			goto out;
		}
		if (rc) {
			if (err)
				*err = e;
			goto out;
		}
	}
	if (!got)
		rc = gb_errorf(err, GB_E_AUTH, "no AWS credentials found (tried %s)",
			       gb_buf_str(&tried));
out:
	gb_buf_free(&tried);
	return rc;
}

/* Cached credentials that need no refresh yet. */
static bool cache_fresh(const gb_creds_t *c, double t)
{
	if (!c->cur.access_key_id)
		return false;
	return c->cur.expiration == 0 ||
	       (t < c->next_refresh && t < c->cur.expiration);
}

static double plan_refresh(const gb_creds_t *c, double t)
{
	double exp = c->cur.expiration;
	double next = exp - c->refresh_window;

	if (exp == 0)
		return 0;
	/* short-lived credentials: do not ask again at every call */
	if (next < t + RETRY_AFTER_FAILURE)
		next = t + RETRY_AFTER_FAILURE < exp ? t + RETRY_AFTER_FAILURE : exp;
	return next;
}

gb_err_t gb_creds_get(gb_creds_t *c, struct gb_creds_snapshot *out,
		      gb_error_t *err)
{
	struct gb_creds_snapshot fresh = { 0 };
	gb_error_t e2;
	gb_err_t rc = GB_E_OK;
	double t;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&c->lock);
	t = now(c);
	if (!cache_fresh(c, t)) {
		rc = resolve(c, &fresh, &e2);
		if (rc == GB_E_OK) {
			gb_creds_snapshot_clear(&c->cur);
			c->cur = fresh;
			memset(&fresh, 0, sizeof(fresh));
			c->next_refresh = plan_refresh(c, t);
			gb_log_info("aws_credentials source=%s expires_in=%.0f",
				    gb_creds_source_name(c->cur.source),
				    c->cur.expiration ? c->cur.expiration - t : -1);
		} else if (c->cur.access_key_id && t < c->cur.expiration) {
			gb_log_warn("aws_credentials_refresh_failed source=%s expires_in=%.0f error=%s",
				    gb_creds_source_name(c->cur.source),
				    c->cur.expiration - t, gb_err_name(rc));
			c->next_refresh = t + RETRY_AFTER_FAILURE;
			rc = GB_E_OK;
		} else {
			if (err)
				*err = e2;
			goto out;
		}
	}
	rc = snapshot_set(out, c->cur.access_key_id, c->cur.secret_access_key,
			  c->cur.session_token, c->cur.expiration, c->cur.source,
			  err);
out:
	gb_creds_snapshot_clear(&fresh);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

void gb_creds_invalidate(gb_creds_t *c)
{
	pthread_mutex_lock(&c->lock);
	gb_creds_snapshot_clear(&c->cur);
	c->next_refresh = 0;
	pthread_mutex_unlock(&c->lock);
}

char *gb_creds_region(gb_creds_t *c)
{
	char *r;

	pthread_mutex_lock(&c->lock);
	r = gb_strdup0(c->region);
	pthread_mutex_unlock(&c->lock);
	return r;
}
