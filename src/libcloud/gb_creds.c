/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_creds.c - AWS credential chain: gpuburst's own settings, environment,
 * shared credentials/config files (INI with profiles), role credentials
 * (credential_process, STS AssumeRole, AssumeRoleWithWebIdentity), EC2
 * IMDSv2
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
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
#include "gb_partition.h"
#include "gb_spawn.h"
#include "gb_str.h"
#include "gb_sts.h"
#include "gb_util.h"

#define INI_MAX_BYTES (1u << 20)	/* shared files larger than 1 MiB: refuse */
#define IMDS_MAX_BYTES (64u << 10)
#define RETRY_AFTER_FAILURE 60.0	/* seconds between failed refreshes */
#define MAX_CHAIN 8			/* source_profile hops */
#define PROCESS_OUT_MAX (64u << 10)
#define PROCESS_ERR_MAX (4u << 10)
#define TOKEN_FILE_MAX 20000		/* STS's WebIdentityToken limit */

struct gb_creds {
	pthread_mutex_t lock;
	/* options (owned copies) */
	char *access_key_id, *secret_access_key, *session_token;
	char *profile, *credentials_file, *config_file, *imds_endpoint;
	char *imds_local_address;
	char *role_arn, *source_profile, *credential_source, *external_id;
	char *role_session_name, *web_identity_token_file;
	long duration_seconds;
	struct gb_strv process;		/* credential_process argv */
	double process_timeout;
	char *sts_endpoint, *sts_region;
	bool sts_needs_endpoint;
	struct gb_http_opts http;	/* STS; strings owned: */
	char *http_ca_bundle;
	char *http_proxy;		/* a secret (its password) */
	char *http_no_proxy_hosts;
	char *http_user_agent;
	bool no_env, no_files, no_imds;
	long imds_timeout_ms;
	double refresh_window;
	double (*now)(void *ctx);
	void *now_ctx;
	/* state */
	struct gb_creds_snapshot cur;	/* cached; access_key_id NULL: none */
	double next_refresh;		/* when to walk the chain again */
	char *region;			/* from the config file */
	char desc[384];			/* what the last resolution used */
	gb_http_t *imds;		/* created on first use */
	char *imds_token;
	double imds_token_expiry;
};

/* ---- small helpers ---------------------------------------------------- */

void gb_creds_snapshot_clear(struct gb_creds_snapshot *s)
{
	if (!s)
		return;
	gb_free_secret(&s->access_key_id);
	gb_free_secret(&s->secret_access_key);
	gb_free_secret(&s->session_token);
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
	case GB_CREDS_SRC_PROCESS:
		return "credential-process";
	case GB_CREDS_SRC_ASSUME_ROLE:
		return "assume-role";
	case GB_CREDS_SRC_WEB_IDENTITY:
		return "web-identity";
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
	if (o->imds_timeout_ms < 0 || o->refresh_window < 0 || o->process_timeout < 0)
		return gb_errorf(err, GB_E_CONFIG,
				 "negative IMDS timeout, refresh window or process timeout");
	if ((o->role_arn != NULL) + (o->credential_process != NULL) +
	    (o->access_key_id != NULL) > 1)
		return gb_errorf(err, GB_E_CONFIG,
				 "give one of explicit keys, role_arn and credential_process");
	if (o->role_arn && (!!o->source_profile + !!o->credential_source +
			    !!o->web_identity_token_file) != 1)
		return gb_errorf(err, GB_E_CONFIG,
				 "role_arn needs exactly one of source_profile, credential_source and web_identity_token_file");
	if (!o->role_arn && (o->source_profile || o->credential_source ||
			     o->web_identity_token_file || o->external_id ||
			     o->role_session_name || o->duration_seconds))
		return gb_errorf(err, GB_E_CONFIG,
				 "source_profile, credential_source, web_identity_token_file, external_id, role_session_name and duration_seconds need role_arn");
	if (o->credential_process && (!o->credential_process[0] ||
				      o->credential_process[0][0] != '/'))
		return gb_errorf(err, GB_E_CONFIG,
				 "credential_process: the program must be an absolute path (it runs without a shell or PATH search)");
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
	    !dup_opt(&c->imds_endpoint, o->imds_endpoint) ||
	    !dup_opt(&c->imds_local_address, o->imds_local_address) ||
	    !dup_opt(&c->role_arn, o->role_arn) ||
	    !dup_opt(&c->source_profile, o->source_profile) ||
	    !dup_opt(&c->credential_source, o->credential_source) ||
	    !dup_opt(&c->external_id, o->external_id) ||
	    !dup_opt(&c->role_session_name, o->role_session_name) ||
	    !dup_opt(&c->web_identity_token_file, o->web_identity_token_file) ||
	    !dup_opt(&c->sts_endpoint, o->sts_endpoint) ||
	    !dup_opt(&c->sts_region, o->sts_region) ||
	    !dup_opt(&c->http_ca_bundle, o->http.ca_bundle) ||
	    !dup_opt(&c->http_proxy, o->http.proxy) ||
	    !dup_opt(&c->http_no_proxy_hosts, o->http.no_proxy_hosts) ||
	    !dup_opt(&c->http_user_agent, o->http.user_agent)) {
		gb_creds_destroy(c);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	if (o->secret_access_key)
		gb_log_secret_add(o->secret_access_key);
	if (o->session_token)
		gb_log_secret_add(o->session_token);
	for (size_t i = 0; o->credential_process && o->credential_process[i]; i++) {
		if (gb_strv_add(&c->process, o->credential_process[i])) {
			gb_creds_destroy(c);
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		}
	}
	c->duration_seconds = o->duration_seconds;
	c->process_timeout = o->process_timeout ? o->process_timeout
						: GB_CREDS_PROCESS_TIMEOUT;
	c->sts_needs_endpoint = o->sts_needs_endpoint;
	c->http = o->http;
	c->http.ca_bundle = c->http_ca_bundle;
	c->http.proxy = c->http_proxy;
	c->http.no_proxy_hosts = c->http_no_proxy_hosts;
	c->http.user_agent = c->http_user_agent;
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
	gb_free_secret(&c->access_key_id);
	gb_free_secret(&c->secret_access_key);
	gb_free_secret(&c->session_token);
	free(c->profile);
	free(c->credentials_file);
	free(c->config_file);
	free(c->imds_endpoint);
	free(c->imds_local_address);
	free(c->role_arn);
	free(c->source_profile);
	free(c->credential_source);
	gb_free_secret(&c->external_id);
	free(c->role_session_name);
	free(c->web_identity_token_file);
	gb_strv_free(&c->process);
	free(c->sts_endpoint);
	free(c->sts_region);
	free(c->http_ca_bundle);
	gb_free_secret(&c->http_proxy);
	free(c->http_no_proxy_hosts);
	free(c->http_user_agent);
	gb_creds_snapshot_clear(&c->cur);
	free(c->region);
	gb_free_secret(&c->imds_token);
	gb_http_destroy(c->imds);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* ---- shared files: a strict little INI reader ---------------------------- */

/* The settings of a profile gpuburst reads; anything else is ignored. */
enum pkey {
	P_AK, P_SK, P_TOKEN, P_TOKEN_OLD, P_REGION, P_ROLE_ARN,
	P_SOURCE_PROFILE, P_CREDENTIAL_SOURCE, P_EXTERNAL_ID, P_SESSION_NAME,
	P_DURATION, P_WEB_TOKEN_FILE, P_PROCESS, P_MFA_SERIAL,
	P_SSO,			/* the first sso_* key: not supported */
	P_COUNT
};

static const char *const pkey_names[P_COUNT] = {
	"aws_access_key_id", "aws_secret_access_key", "aws_session_token",
	"aws_security_token", "region", "role_arn", "source_profile",
	"credential_source", "external_id", "role_session_name",
	"duration_seconds", "web_identity_token_file", "credential_process",
	"mfa_serial", NULL,
};

struct ini_section {
	char *name;		/* "default", "profile x" or "x" */
	char *v[P_COUNT];	/* NEW values, or NULL */
};

/* One parsed file: every section, with the settings above. */
struct ini_file {
	char *path;		/* NEW; NULL: no home directory */
	bool exists;
	struct ini_section *sec;
	size_t n, cap;
	/* parser state */
	struct gb_strv seen_keys;	/* keys of the current section */
	bool may_continue;
};

static void ini_file_free(struct ini_file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->sec[i].name);
		for (size_t k = 0; k < P_COUNT; k++)
			gb_free_secret(&f->sec[i].v[k]);
	}
	free(f->sec);
	free(f->path);
	gb_strv_free(&f->seen_keys);
	memset(f, 0, sizeof(*f));
}

static const struct ini_section *ini_find(const struct ini_file *f,
					  const char *name)
{
	for (size_t i = 0; i < f->n; i++) {
		if (strcmp(f->sec[i].name, name) == 0)
			return &f->sec[i];
	}
	return NULL;
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

#define UTF8_BOM "\xef\xbb\xbf"	/* a byte order mark some editors write */
#define PROFILE_WORD "profile"
#define PROFILE_LEN (sizeof(PROFILE_WORD) - 1)

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
	if (gb_str_has_prefix(name, PROFILE_WORD) &&
	    (name[PROFILE_LEN] == ' ' || name[PROFILE_LEN] == '\t')) {
		char *p = trim(name + PROFILE_LEN + 1);

		memmove(name + PROFILE_LEN + 1, p, strlen(p) + 1);
		name[PROFILE_LEN] = ' ';
	}
	return name;
}

static gb_err_t ini_section_start(struct ini_file *f, char *line, size_t lineno,
				  gb_error_t *err)
{
	bool bad_tail;
	char *name = section_name(line, &bad_tail);

	if (!name)
		return gb_errorf(err, GB_E_CONFIG, "%s:%zu: section header without ']'",
				 f->path, lineno);
	if (bad_tail || !*name)
		return gb_errorf(err, GB_E_CONFIG, "%s:%zu: malformed section header",
				 f->path, lineno);
	if (ini_find(f, name))
		return gb_errorf(err, GB_E_CONFIG, "%s:%zu: duplicate section [%s]",
				 f->path, lineno, name);
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 8;
		struct ini_section *s = realloc(f->sec, cap * sizeof(*s));

		if (!s)
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		f->sec = s;
		f->cap = cap;
	}
	memset(&f->sec[f->n], 0, sizeof(f->sec[f->n]));
	if (!(f->sec[f->n].name = strdup(name)))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	f->n++;
	gb_strv_free(&f->seen_keys);
	return GB_E_OK;
}

static gb_err_t ini_setting(struct ini_file *f, char *line, size_t lineno,
			    gb_error_t *err)
{
	char *eq = strchr(line, '='), *key, *value;
	struct ini_section *s;
	int k = -1;

	if (!eq)
		return gb_errorf(err, GB_E_CONFIG,
				 "%s:%zu: expected \"key = value\", \"[section]\" or a comment",
				 f->path, lineno);
	if (!f->n)
		return gb_errorf(err, GB_E_CONFIG, "%s:%zu: setting outside any [section]",
				 f->path, lineno);
	*eq = '\0';
	key = trim(line);
	value = trim(eq + 1);
	if (!*key)
		return gb_errorf(err, GB_E_CONFIG, "%s:%zu: empty key", f->path, lineno);
	if (gb_strv_find(&f->seen_keys, key) >= 0)
		return gb_errorf(err, GB_E_CONFIG, "%s:%zu: duplicate key \"%s\"",
				 f->path, lineno, key);
	if (gb_strv_add(&f->seen_keys, key))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	f->may_continue = true;
	s = &f->sec[f->n - 1];
	for (int i = 0; i < P_SSO; i++) {
		if (strcmp(key, pkey_names[i]) == 0)
			k = i;
	}
	if (k < 0 && gb_str_has_prefix(key, "sso_") && !s->v[P_SSO]) {
		k = P_SSO;
		value = key;
	}
	if (k >= 0 && !(s->v[k] = strdup(value)))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	return GB_E_OK;
}

static gb_err_t ini_line(struct ini_file *f, char *line, size_t lineno,
			 gb_error_t *err)
{
	if (*line == ' ' || *line == '\t') {
		char *t = trim(line);

		if (*t == '\0' || *t == '#' || *t == ';')
			return GB_E_OK;
		if (!f->may_continue)
			return gb_errorf(err, GB_E_CONFIG,
					 "%s:%zu: indented line does not continue a setting",
					 f->path, lineno);
		return GB_E_OK;	/* nested value (e.g. "s3 =" block): ignored */
	}
	line = trim(line);
	f->may_continue = false;
	if (*line == '\0' || *line == '#' || *line == ';')
		return GB_E_OK;
	if (*line == '[')
		return ini_section_start(f, line, lineno, err);
	return ini_setting(f, line, lineno, err);
}

static gb_err_t ini_parse(struct ini_file *f, char *data, size_t len,
			  gb_error_t *err)
{
	size_t lineno = 0;
	char *p = data;

	if (memchr(data, '\0', len))
		return gb_errorf(err, GB_E_CONFIG, "%s: contains NUL bytes", f->path);
	while (p < data + len) {
		char *nl = strchr(p, '\n');
		char *end = nl ? nl : data + len;
		gb_err_t rc;

		lineno++;
		*end = '\0';
		if (end > p && end[-1] == '\r')
			end[-1] = '\0';
		if (lineno == 1 && gb_str_has_prefix(p, UTF8_BOM))
			p += sizeof(UTF8_BOM) - 1;
		rc = ini_line(f, p, lineno, err);
		if (rc)
			return rc;
		if (!nl)
			break;
		p = nl + 1;
	}
	return GB_E_OK;
}

/*
 * Read a small file that may hold secrets in one allocation (no realloc
 * leaves stray copies), NUL-terminated; the caller wipes and frees it.
 * gb_file_open() refuses what is not a regular file (a FIFO would block)
 * and a file over [max], before reading.  RET GB_E_NOTFOUND when missing.
 */
static gb_err_t read_secret_file(const char *path, size_t max, char **out,
				 size_t *len, gb_error_t *err)
{
	size_t size = 0, got = 0;
	char *data;
	gb_err_t rc;
	int fd;

	*out = NULL;
	*len = 0;
	rc = gb_file_open(path, max, &fd, &size, err);
	if (rc)
		return rc;
	data = malloc(size + 1);
	if (!data) {
		close(fd);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	while (got < size) {
		ssize_t r = read(fd, data + got, size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = gb_errorf(err, GB_E_CONFIG, "%s: %s", path, strerror(errno));
			gb_memzero(data, size + 1);
			free(data);
			close(fd);
			return rc;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	data[got] = '\0';
	*out = data;
	*len = got;
	return GB_E_OK;
}

/* Parse the file at f->path; a missing one leaves f->exists false. */
static gb_err_t ini_read(struct ini_file *f, gb_error_t *err)
{
	char *data = NULL;
	size_t len = 0;
	gb_err_t rc;

	f->exists = false;
	if (!f->path)
		return GB_E_OK;
	rc = read_secret_file(f->path, INI_MAX_BYTES, &data, &len, err);
	if (rc == GB_E_NOTFOUND)
		return GB_E_OK;
	f->exists = true;
	if (rc) {
		if (err && rc != GB_E_NOMEM)
			err->code = GB_E_CONFIG;
		return rc == GB_E_NOMEM ? rc : GB_E_CONFIG;
	}
	rc = ini_parse(f, data, len, err);
	gb_memzero(data, len + 1);
	free(data);
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

/* ---- one resolution: the files, read once, and the profiles in them ------- */

struct resolution {
	gb_creds_t *c;
	struct ini_file cred, conf;	/* the credentials and config files */
	bool loaded;
	struct gb_strv chain;		/* profiles being resolved (loops) */
	struct gb_buf *tried;
	struct gb_buf desc;		/* "assume-role ARN <- credentials-file [x]" */
};

/*
 * A profile's settings: its section in the credentials file and in the
 * config file (either may be NULL), or gpuburst.yaml's cloud.credentials
 * (then [own] holds them and [argv] the credential_process).
 */
struct prof {
	const char *name;		/* NULL: cloud.credentials */
	const struct ini_section *cred, *conf;
	struct ini_section own;		/* cloud.credentials (borrowed strings) */
	char *const *argv;
	char duration[24];
};

/* The credentials file's value, else the config file's (botocore's merge). */
static const char *pget(const struct prof *p, enum pkey k)
{
	if (!p->name)
		return p->own.v[k];
	if (p->cred && p->cred->v[k])
		return p->cred->v[k];
	return p->conf ? p->conf->v[k] : NULL;
}

/* For messages: where [p]'s settings are. */
static void pwhere(const struct resolution *r, const struct prof *p,
		   struct gb_buf *b)
{
	if (!p->name) {
		gb_buf_puts(b, "cloud.credentials");
		return;
	}
	gb_buf_printf(b, "AWS profile \"%s\" (", p->name);
	if (p->cred)
		gb_buf_printf(b, "%s [%s]%s", r->cred.path, p->cred->name,
			      p->conf ? ", " : "");
	if (p->conf)
		gb_buf_printf(b, "%s [%s]", r->conf.path, p->conf->name);
	gb_buf_putc(b, ')');
}

static gb_err_t perror_at(const struct resolution *r, const struct prof *p,
			  gb_err_t code, gb_error_t *err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static gb_err_t perror_at(const struct resolution *r, const struct prof *p,
			  gb_err_t code, gb_error_t *err, const char *fmt, ...)
{
	struct gb_buf b = GB_BUF_INIT;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pwhere(r, p, &b);
	gb_errorf(err, code, "%s: %s", gb_buf_str(&b), msg);
	gb_buf_free(&b);
	return code;
}

static gb_err_t files_load(struct resolution *r, gb_error_t *err)
{
	gb_creds_t *c = r->c;
	gb_err_t rc;

	if (r->loaded)
		return GB_E_OK;
	r->loaded = true;
	r->cred.path = file_path(c->credentials_file, "AWS_SHARED_CREDENTIALS_FILE",
				 "credentials");
	r->conf.path = file_path(c->config_file, "AWS_CONFIG_FILE", "config");
	if ((rc = ini_read(&r->cred, err)) || (rc = ini_read(&r->conf, err)))
		return rc;
	return GB_E_OK;
}

/* Look [name] up in both files.  RET whether either has it. */
static bool prof_named(struct resolution *r, const char *name, struct prof *p)
{
	char sect[256];

	memset(p, 0, sizeof(*p));
	p->name = name;
	if (strcmp(name, "default") == 0)
		snprintf(sect, sizeof(sect), "default");
	else
		snprintf(sect, sizeof(sect), "profile %s", name);
	p->cred = ini_find(&r->cred, name);
	p->conf = ini_find(&r->conf, sect);
	return p->cred || p->conf;
}

/* cloud.credentials as a profile of its own. */
static void prof_own(const gb_creds_t *c, struct prof *p)
{
	memset(p, 0, sizeof(*p));
	p->own.v[P_AK] = c->access_key_id;
	p->own.v[P_SK] = c->secret_access_key;
	p->own.v[P_TOKEN] = c->session_token;
	p->own.v[P_ROLE_ARN] = c->role_arn;
	p->own.v[P_SOURCE_PROFILE] = c->source_profile;
	p->own.v[P_CREDENTIAL_SOURCE] = c->credential_source;
	p->own.v[P_EXTERNAL_ID] = c->external_id;
	p->own.v[P_SESSION_NAME] = c->role_session_name;
	p->own.v[P_WEB_TOKEN_FILE] = c->web_identity_token_file;
	if (c->duration_seconds) {
		snprintf(p->duration, sizeof(p->duration), "%ld", c->duration_seconds);
		p->own.v[P_DURATION] = p->duration;
	}
	p->argv = c->process.n ? c->process.v : NULL;
}

static bool prof_own_used(const gb_creds_t *c)
{
	return c->access_key_id || c->role_arn || c->process.n;
}

static gb_err_t resolve_prof(struct resolution *r, struct prof *p, int depth,
			     struct gb_creds_snapshot *s, bool *got,
			     gb_error_t *err);

/* ---- static keys ---------------------------------------------------------- */

/* Keys of [sec] (one file's section) if it has them. */
static gb_err_t from_keys(const struct resolution *r, const struct prof *p,
			  const struct ini_section *sec, enum gb_creds_source src,
			  struct gb_creds_snapshot *s, bool *got, gb_error_t *err)
{
	const char *ak = sec ? sec->v[P_AK] : NULL, *sk = sec ? sec->v[P_SK] : NULL;
	const char *tok;

	if (!sec)
		return GB_E_OK;
	tok = sec->v[P_TOKEN] ? sec->v[P_TOKEN] : sec->v[P_TOKEN_OLD];
	if ((ak && *ak) != (sk && *sk))
		return perror_at(r, p, GB_E_CONFIG, err, "[%s] has %s but no %s", sec->name ? sec->name : "cloud.credentials",
				 ak && *ak ? "aws_access_key_id" : "aws_secret_access_key",
				 ak && *ak ? "aws_secret_access_key" : "aws_access_key_id");
	if (!(ak && *ak))
		return GB_E_OK;
	*got = true;
	return snapshot_set(s, ak, sk, tok, 0, src, err);
}

/* ---- credential_process ------------------------------------------------------ */

/*
 * Split [s] into words as a POSIX shell would without expanding anything
 * (botocore uses shlex): blanks separate; '...' is literal; "..." keeps
 * blanks, with \\ \" \$ \` escaped; a backslash outside quotes escapes the
 * next character.
 */
static gb_err_t split_words(const char *s, struct gb_strv *out, gb_error_t *err)
{
	struct gb_buf w = GB_BUF_INIT;
	bool in_word = false;
	gb_err_t rc = GB_E_OK;

	for (const char *q = s;; q++) {
		if (*q == '\0' || *q == ' ' || *q == '\t' || *q == '\n') {
			if (in_word && gb_strv_add(out, gb_buf_str(&w)))
				rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			gb_buf_reset(&w);
			in_word = false;
			if (*q == '\0' || rc)
				break;
			continue;
		}
		in_word = true;
		if (*q == '\'') {
			const char *e = strchr(q + 1, '\'');

			if (!e) {
				rc = gb_errorf(err, GB_E_CONFIG, "unterminated ' quote");
				break;
			}
			gb_buf_append(&w, q + 1, (size_t)(e - q - 1));
			q = e;
		} else if (*q == '"') {
			for (q++; *q && *q != '"'; q++) {
				if (*q == '\\' && q[1] && strchr("\\\"$`", q[1]))
					q++;
				gb_buf_putc(&w, *q);
			}
			if (*q != '"') {
				rc = gb_errorf(err, GB_E_CONFIG, "unterminated \" quote");
				break;
			}
		} else if (*q == '\\') {
			if (!q[1]) {
				rc = gb_errorf(err, GB_E_CONFIG, "a trailing backslash");
				break;
			}
			gb_buf_putc(&w, *++q);
		} else {
			gb_buf_putc(&w, *q);
		}
	}
	if (!rc && gb_buf_failed(&w))
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	gb_buf_free(&w);
	return rc;
}

/* Log what the helper wrote on stderr, one line per log line. */
static void log_stderr(const char *prog, const struct gb_buf *b, bool failed)
{
	char *copy = b->len ? strdup(b->data) : NULL, *save = NULL;
	char q[256];

	for (char *l = copy ? strtok_r(copy, "\r\n", &save) : NULL; l;
	     l = strtok_r(NULL, "\r\n", &save)) {
		if (failed)
			gb_log_warn("credential_process_stderr program=%s line=%s", prog,
				    gb_log_q(q, sizeof(q), l));
		else
			gb_log_info("credential_process_stderr program=%s line=%s", prog,
				    gb_log_q(q, sizeof(q), l));
	}
	free(copy);
}

/* Wipe a string inside a jansson value before it is freed. */
static void json_wipe(json_t *v)
{
	if (json_is_string(v))
		gb_memzero((char *)json_string_value(v), json_string_length(v));
}

/* The helper's JSON (botocore's contract: Version 1, Expiration optional). */
static gb_err_t process_parse(const struct resolution *r, const struct prof *p,
			      const char *prog, const char *out,
			      struct gb_creds_snapshot *s, gb_error_t *err)
{
	json_error_t je;
	json_t *doc = json_loads(out, JSON_REJECT_DUPLICATES, &je);
	json_t *ver = json_object_get(doc, "Version");
	const char *ak, *sk, *tok, *exp_s;
	double exp = 0;
	gb_err_t rc;

	if (!json_is_object(doc)) {
		rc = perror_at(r, p, GB_E_AUTH, err,
			       "credential_process %s printed no JSON object (%s)", prog,
			       doc ? "not an object" : je.text);
		goto out;
	}
	if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
		rc = perror_at(r, p, GB_E_AUTH, err,
			       "credential_process %s: \"Version\" must be the number 1",
			       prog);
		goto out;
	}
	ak = json_string_value(json_object_get(doc, "AccessKeyId"));
	sk = json_string_value(json_object_get(doc, "SecretAccessKey"));
	tok = json_string_value(json_object_get(doc, "SessionToken"));
	exp_s = json_string_value(json_object_get(doc, "Expiration"));
	if (!ak || !*ak || !sk || !*sk) {
		rc = perror_at(r, p, GB_E_AUTH, err,
			       "credential_process %s: no AccessKeyId or SecretAccessKey string",
			       prog);
		goto out;
	}
	if ((json_object_get(doc, "SessionToken") && !tok) ||
	    (json_object_get(doc, "Expiration") && !exp_s &&
	     !json_is_null(json_object_get(doc, "Expiration")))) {
		rc = perror_at(r, p, GB_E_AUTH, err,
			       "credential_process %s: SessionToken and Expiration must be strings",
			       prog);
		goto out;
	}
	if (exp_s && (gb_time_parse(exp_s, now(r->c), &exp) != GB_E_OK ||
		      !strchr(exp_s, 'T'))) {
		rc = perror_at(r, p, GB_E_AUTH, err,
			       "credential_process %s: Expiration \"%.40s\" is not an ISO-8601 time",
			       prog, exp_s);
		goto out;
	}
	if (exp_s && exp <= now(r->c)) {
		rc = perror_at(r, p, GB_E_AUTH, err,
			       "credential_process %s returned credentials that expired at %s",
			       prog, exp_s);
		goto out;
	}
	rc = snapshot_set(s, ak, sk, tok, exp, GB_CREDS_SRC_PROCESS, err);
out:
	if (doc) {
		json_wipe(json_object_get(doc, "SecretAccessKey"));
		json_wipe(json_object_get(doc, "SessionToken"));
		json_decref(doc);
	}
	return rc;
}

static gb_err_t from_process(struct resolution *r, const struct prof *p,
			     struct gb_creds_snapshot *s, bool *got,
			     gb_error_t *err)
{
	const char *line = pget(p, P_PROCESS);
	struct gb_strv words = { 0 };
	struct gb_buf out = GB_BUF_INIT, eo = GB_BUF_INIT;
	struct gb_spawn run = { 0 };
	char *env[3] = { (char *)GB_SPAWN_PATH, NULL, NULL };
	char *const *argv = p->argv;
	struct gb_buf home = GB_BUF_INIT;
	double t0;
	gb_error_t e;
	gb_err_t rc;

	if (!argv && !(line && *line))
		return GB_E_OK;
	*got = true;
	if (!argv) {
		rc = split_words(line, &words, &e);
		if (rc) {
			rc = perror_at(r, p, rc, err, "credential_process: %s", e.text);
			goto out;
		}
		if (!words.n || words.v[0][0] != '/') {
			rc = perror_at(r, p, GB_E_CONFIG, err,
				       "credential_process: \"%s\" must be an absolute path (it runs without a shell or PATH search)",
				       words.n ? words.v[0] : "");
			goto out;
		}
		argv = words.v;
	}
	if (env_nonempty("HOME")) {
		gb_buf_printf(&home, "HOME=%s", getenv("HOME"));
		env[1] = home.data;
	}
	if (!gb_buf_reserve(&out, PROCESS_OUT_MAX) || gb_buf_failed(&home)) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	run.argv = argv;
	run.envp = env;
	run.timeout = r->c->process_timeout;
	run.out = &out;
	run.out_max = PROCESS_OUT_MAX;
	run.err_out = &eo;
	run.err_max = PROCESS_ERR_MAX;
	t0 = gb_time_mono();
	rc = gb_spawn_run(&run, &e);
	log_stderr(argv[0], &eo, rc || run.status != 0);
	if (rc) {
		rc = perror_at(r, p, rc == GB_E_TIMEOUT ? GB_E_TIMEOUT : GB_E_AUTH, err,
			       "credential_process: %s", e.text);
		goto out;
	}
	if (run.status != 0) {
		rc = perror_at(r, p, GB_E_AUTH, err,
			       "credential_process %s exited with status %d (its stderr is in the log)",
			       argv[0], run.status);
		goto out;
	}
	if (run.out_truncated) {
		rc = perror_at(r, p, GB_E_AUTH, err,
			       "credential_process %s printed more than %u bytes", argv[0],
			       PROCESS_OUT_MAX);
		goto out;
	}
	rc = process_parse(r, p, argv[0], gb_buf_str(&out), s, err);
	if (!rc)
		gb_log_info("credential_process program=%s elapsed=%.3f expires_in=%.0f",
			    argv[0], gb_time_mono() - t0,
			    s->expiration ? s->expiration - now(r->c) : -1);
out:
	if (out.data)
		gb_memzero(out.data, out.cap);
	gb_buf_free(&out);
	gb_buf_free(&eo);
	gb_buf_free(&home);
	gb_strv_free(&words);
	return rc;
}

/* ---- roles ------------------------------------------------------------------- */

/* STS endpoint and signing region for [p]. */
static gb_err_t sts_opts(const struct resolution *r, const struct prof *p,
			 struct gb_sts_opts *so, char *ep, size_t n,
			 gb_error_t *err)
{
	const gb_creds_t *c = r->c;
	const char *region = c->sts_region ? c->sts_region : pget(p, P_REGION);
	gb_error_t e;

	memset(so, 0, sizeof(*so));
	so->region = region ? region : "us-east-1";
	so->http = c->http;
	if (c->sts_endpoint) {
		so->endpoint = c->sts_endpoint;
		return GB_E_OK;
	}
	if (c->sts_needs_endpoint)
		return perror_at(r, p, GB_E_CONFIG, err,
				 "role_arn needs STS, and with cloud.endpoint set gpuburst does not guess where STS is: set cloud.credentials.sts_endpoint");
	if (gb_partition_endpoint(GB_STS_SERVICE, so->region, ep, n, &e))
		return perror_at(r, p, GB_E_CONFIG, err, "STS: %s", e.text);
	so->endpoint = ep;
	return GB_E_OK;
}

/* The role parameters of [p]; [name] receives a default session name. */
static gb_err_t role_of(const struct resolution *r, const struct prof *p,
			struct gb_sts_role *role, char *name, size_t n,
			gb_error_t *err)
{
	const char *dur = pget(p, P_DURATION);

	memset(role, 0, sizeof(*role));
	role->role_arn = pget(p, P_ROLE_ARN);
	role->external_id = pget(p, P_EXTERNAL_ID);
	role->session_name = pget(p, P_SESSION_NAME);
	if (!role->session_name) {
		snprintf(name, n, "gpuburst-%.0f", now(r->c));
		role->session_name = name;
	}
	if (!gb_str_has_prefix(role->role_arn, "arn:") || strlen(role->role_arn) < 20)
		return perror_at(r, p, GB_E_CONFIG, err,
				 "role_arn \"%.80s\" is not a role ARN (arn:aws:iam::ACCOUNT:role/NAME)",
				 role->role_arn);
	if (!gb_sts_session_name_ok(role->session_name))
		return perror_at(r, p, GB_E_CONFIG, err,
				 "role_session_name \"%.64s\" is not 2-64 of letters, digits and _+=,.@-",
				 role->session_name);
	if (role->external_id && (strlen(role->external_id) < 2 ||
				  strlen(role->external_id) > 1224))
		return perror_at(r, p, GB_E_CONFIG, err,
				 "external_id must have 2-1224 characters");
	if (dur && gb_parse_long(dur, GB_STS_MIN_DURATION, GB_STS_MAX_DURATION,
				 &role->duration_seconds) != GB_E_OK)
		return perror_at(r, p, GB_E_CONFIG, err,
				 "duration_seconds \"%.20s\" is not a number of seconds in %ld-%ld",
				 dur, GB_STS_MIN_DURATION, GB_STS_MAX_DURATION);
	if (pget(p, P_MFA_SERIAL))
		return perror_at(r, p, GB_E_CONFIG, err,
				 "mfa_serial needs a person to type a code; gpuburst runs unattended: use a role without MFA");
	return GB_E_OK;
}

static gb_err_t step_env(gb_creds_t *c, struct gb_creds_snapshot *s, bool *got,
			 struct gb_buf *tried, gb_error_t *err);
static gb_err_t step_imds(gb_creds_t *c, struct gb_creds_snapshot *s,
			  bool *got, struct gb_buf *tried, gb_error_t *err);

/* The source credentials named by credential_source. */
static gb_err_t from_credential_source(struct resolution *r, const struct prof *p,
				       const char *src, struct gb_creds_snapshot *s,
				       gb_error_t *err)
{
	struct gb_buf tried = GB_BUF_INIT;
	bool got = false;
	gb_error_t e;
	gb_err_t rc;

	if (strcmp(src, "Environment") == 0) {
		bool saved = r->c->no_env;
		char *saved_profile = r->c->profile;

		/* named on purpose: the environment counts even with a profile */
		r->c->no_env = false;
		r->c->profile = NULL;
		rc = step_env(r->c, s, &got, &tried, &e);
		r->c->no_env = saved;
		r->c->profile = saved_profile;
	} else if (strcmp(src, "Ec2InstanceMetadata") == 0) {
		if (r->c->no_imds) {
			gb_buf_free(&tried);
			return perror_at(r, p, GB_E_CONFIG, err,
					 "credential_source Ec2InstanceMetadata, but instance metadata is off (cloud.credentials.imds: false)");
		}
		rc = step_imds(r->c, s, &got, &tried, &e);
	} else {
		gb_buf_free(&tried);
		return perror_at(r, p, GB_E_CONFIG, err,
				 "credential_source \"%.40s\" is not supported (Environment or Ec2InstanceMetadata)",
				 src);
	}
	gb_buf_free(&tried);
	if (!rc && !got)
		rc = gb_errorf(&e, GB_E_AUTH, "no credentials there");
	if (rc)
		return perror_at(r, p, rc == GB_E_NOMEM ? rc : GB_E_AUTH, err,
				 "credential_source %s: %s", src, e.text);
	gb_buf_printf(&r->desc, " <- %s", gb_creds_source_name(s->source));
	return GB_E_OK;
}

/* The source credentials named by source_profile. */
static gb_err_t from_source_profile(struct resolution *r, const struct prof *p,
				    const char *name, int depth,
				    struct gb_creds_snapshot *s, gb_error_t *err)
{
	struct prof src;
	bool got = false;
	gb_err_t rc;

	if ((rc = files_load(r, err)))
		return rc;
	/* a profile that names itself: its own keys are the source (botocore) */
	if (p->name && strcmp(name, p->name) == 0) {
		rc = from_keys(r, p, p->cred, GB_CREDS_SRC_CREDENTIALS_FILE, s, &got, err);
		if (!rc && !got)
			rc = from_keys(r, p, p->conf, GB_CREDS_SRC_CONFIG_FILE, s, &got, err);
		if (!rc && !got)
			rc = perror_at(r, p, GB_E_CONFIG, err,
				       "source_profile names the profile itself, which has no keys");
		if (!rc)
			gb_buf_printf(&r->desc, " <- its own keys");
		return rc;
	}
	if (gb_strv_find(&r->chain, name) >= 0)
		return perror_at(r, p, GB_E_CONFIG, err,
				 "source_profile \"%s\" leads back to a profile already in the chain",
				 name);
	if (depth >= MAX_CHAIN)
		return perror_at(r, p, GB_E_CONFIG, err,
				 "more than %d source_profile hops", MAX_CHAIN);
	if (!prof_named(r, name, &src))
		return perror_at(r, p, GB_E_CONFIG, err,
				 "source_profile \"%s\" is in neither %s nor %s", name,
				 r->cred.path ? r->cred.path : "(no home)",
				 r->conf.path ? r->conf.path : "(no home)");
	gb_buf_printf(&r->desc, " <- profile %s", name);
	rc = resolve_prof(r, &src, depth + 1, s, &got, err);
	if (!rc && !got)
		rc = perror_at(r, &src, GB_E_CONFIG, err,
			       "no credentials (keys, role_arn or credential_process) for source_profile");
	return rc;
}

static gb_err_t web_identity(struct resolution *r, const struct prof *p,
			     struct gb_creds_snapshot *s, gb_error_t *err)
{
	const char *path = pget(p, P_WEB_TOKEN_FILE);
	struct gb_sts_opts so;
	struct gb_sts_role role;
	char ep[256], name[64], *tok = NULL, *t;
	size_t len = 0, n;
	gb_error_t e;
	gb_err_t rc;

	if ((rc = role_of(r, p, &role, name, sizeof(name), err)) ||
	    (rc = sts_opts(r, p, &so, ep, sizeof(ep), err)))
		return rc;
	/* read at every refresh: the issuer rotates the token in place */
	rc = read_secret_file(path, TOKEN_FILE_MAX + 64, &tok, &len, &e);
	if (rc)
		return perror_at(r, p, rc == GB_E_NOMEM ? rc : GB_E_CONFIG, err,
				 "web_identity_token_file: %s", e.text);
	t = tok + strspn(tok, " \t\r\n");
	n = strlen(t);
	while (n && strchr(" \t\r\n", t[n - 1]))
		t[--n] = '\0';
	rc = gb_sts_assume_role_web_identity(&so, &role, t, s, &e);
	gb_memzero(tok, len + 1);
	free(tok);
	if (rc)
		return perror_at(r, p, rc, err, "%s", e.text);
	s->source = GB_CREDS_SRC_WEB_IDENTITY;
	gb_buf_printf(&r->desc, "%sweb-identity %s (token %s)", r->desc.len ? " " : "",
		      role.role_arn, path);
	return GB_E_OK;
}

static gb_err_t assume_role(struct resolution *r, const struct prof *p, int depth,
			    struct gb_creds_snapshot *s, gb_error_t *err)
{
	const char *src_prof = pget(p, P_SOURCE_PROFILE);
	const char *src = pget(p, P_CREDENTIAL_SOURCE);
	struct gb_creds_snapshot base = { 0 };
	struct gb_sts_opts so;
	struct gb_sts_role role;
	char ep[256], name[64];
	gb_error_t e;
	gb_err_t rc;

	if ((rc = role_of(r, p, &role, name, sizeof(name), err)) ||
	    (rc = sts_opts(r, p, &so, ep, sizeof(ep), err)))
		return rc;
	if (src_prof && src)
		return perror_at(r, p, GB_E_CONFIG, err,
				 "give source_profile or credential_source, not both");
	/* in a chain it follows "<- profile NAME" */
	gb_buf_printf(&r->desc, "%sassume-role %s", r->desc.len ? " " : "", role.role_arn);
	if (src_prof)
		rc = from_source_profile(r, p, src_prof, depth, &base, err);
	else
		rc = from_credential_source(r, p, src, &base, err);
	if (rc)
		goto out;
	rc = gb_sts_assume_role(&so, &base, &role, s, &e);
	if (rc) {
		rc = perror_at(r, p, rc, err, "%s", e.text);
		goto out;
	}
	s->source = GB_CREDS_SRC_ASSUME_ROLE;
out:
	gb_creds_snapshot_clear(&base);
	return rc;
}

/*
 * One profile, in botocore's order: a role (source_profile or
 * credential_source), a role by web identity, the credentials file's keys,
 * credential_process, the config file's keys.
 */
static gb_err_t resolve_prof(struct resolution *r, struct prof *p, int depth,
			     struct gb_creds_snapshot *s, bool *got,
			     gb_error_t *err)
{
	const char *role = pget(p, P_ROLE_ARN);
	gb_err_t rc;

	if (p->name && gb_strv_add(&r->chain, p->name))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	if (role && *role) {
		*got = true;
		if (pget(p, P_SOURCE_PROFILE) || pget(p, P_CREDENTIAL_SOURCE))
			return assume_role(r, p, depth, s, err);
		if (pget(p, P_WEB_TOKEN_FILE))
			return web_identity(r, p, s, err);
		return perror_at(r, p, GB_E_CONFIG, err,
				 "role_arn needs source_profile, credential_source or web_identity_token_file");
	}
	if (pget(p, P_WEB_TOKEN_FILE))
		return perror_at(r, p, GB_E_CONFIG, err,
				 "web_identity_token_file needs role_arn");
	if (!p->name) {
		rc = from_keys(r, p, &p->own, GB_CREDS_SRC_EXPLICIT, s, got, err);
	} else {
		rc = from_keys(r, p, p->cred, GB_CREDS_SRC_CREDENTIALS_FILE, s, got, err);
	}
	if (!rc && !*got)
		rc = from_process(r, p, s, got, err);
	if (!rc && !*got && p->name)
		rc = from_keys(r, p, p->conf, GB_CREDS_SRC_CONFIG_FILE, s, got, err);
	if (!rc && !*got && pget(p, P_SSO))
		rc = perror_at(r, p, GB_E_CONFIG, err,
			       "uses %s (IAM Identity Center), which needs a person to sign in; use credential_process or a role",
			       pget(p, P_SSO));
	if (!rc && *got) {
		if (r->desc.len && r->desc.data[r->desc.len - 1] != ' ')
			gb_buf_putc(&r->desc, ' ');
		gb_buf_puts(&r->desc, gb_creds_source_name(s->source));
	}
	return rc;
}

static void resolution_free(struct resolution *r)
{
	ini_file_free(&r->cred);
	ini_file_free(&r->conf);
	gb_strv_free(&r->chain);
	gb_buf_free(&r->desc);
}

/* ---- resolution steps ------------------------------------------------- */

/* RET GB_E_OK with *got set when the step produced credentials. */
typedef gb_err_t (*step_fn)(gb_creds_t *c, struct gb_creds_snapshot *s,
			    bool *got, struct gb_buf *tried, gb_error_t *err);

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

/* cloud.credentials' own source: keys, a role, or credential_process. */
static gb_err_t step_own(struct resolution *r, struct gb_creds_snapshot *s,
			 bool *got, gb_error_t *err)
{
	struct prof p;

	if (!prof_own_used(r->c))
		return GB_E_OK;
	prof_own(r->c, &p);
	return resolve_prof(r, &p, 0, s, got, err);
}

static gb_err_t step_files(struct resolution *r, struct gb_creds_snapshot *s,
			   bool *got, gb_error_t *err)
{
	gb_creds_t *c = r->c;
	const char *profile = c->profile;
	struct prof p;
	bool named, found;
	gb_err_t rc;

	if (c->no_files)
		return GB_E_OK;
	if (!profile)
		profile = env_nonempty("AWS_PROFILE");
	if (!profile)
		profile = env_nonempty("AWS_DEFAULT_PROFILE");
	named = profile && strcmp(profile, "default") != 0;
	if (!profile)
		profile = "default";
	if ((rc = files_load(r, err)))
		return rc;
	gb_buf_printf(r->tried, ", profile %s in %s and %s", profile,
		      r->cred.path ? r->cred.path : "(no home)",
		      r->conf.path ? r->conf.path : "(no home)");
	found = prof_named(r, profile, &p);
	free(c->region);
	c->region = gb_strdup0(p.conf ? p.conf->v[P_REGION] : NULL);
	if (named && !found)
		return gb_errorf(err, GB_E_CONFIG, "AWS profile \"%s\" not found in %s or %s",
				 profile, r->cred.path ? r->cred.path : "(no home)",
				 r->conf.path ? r->conf.path : "(no home)");
	if (!found)
		return GB_E_OK;
	gb_buf_printf(&r->desc, "profile %s: ", profile);
	rc = resolve_prof(r, &p, 0, s, got, err);
	if (!*got)
		gb_buf_reset(&r->desc);
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
	ho.local_address = c->imds_local_address;
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
	gb_free_secret(&c->imds_token);
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
		gb_free_secret(&c->imds_token);
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

/*
 * cloud.credentials' own source, the environment, the shared files'
 * profile, IMDS.  A source that is configured and fails is an error (no
 * silent fall-through to another identity); IMDS that cannot be reached or
 * has no role means nothing was found.
 */
static gb_err_t resolve(gb_creds_t *c, struct gb_creds_snapshot *s,
			gb_error_t *err)
{
	struct gb_buf tried = GB_BUF_INIT;
	struct resolution r = { .c = c, .tried = &tried };
	gb_err_t rc;
	gb_error_t e;
	bool got = false;

	gb_buf_puts(&tried, "cloud.credentials");
	rc = step_own(&r, s, &got, err);
	if (!rc && !got)
		rc = step_env(c, s, &got, &tried, err);
	if (!rc && !got)
		rc = step_files(&r, s, &got, err);
	if (!rc && !got) {
		rc = step_imds(c, s, &got, &tried, &e);
		if (rc == GB_E_HTTP || rc == GB_E_TIMEOUT || rc == GB_E_AUTH) {
			/* an unreachable or unwilling IMDS: nothing found */
			rc = gb_errorf(err, GB_E_AUTH,
				       "no AWS credentials found (tried %s: %s)",
				       gb_buf_str(&tried), e.text);
		} else if (rc && err) {
			*err = e;
		}
	}
	if (!rc && !got)
		rc = gb_errorf(err, GB_E_AUTH, "no AWS credentials found (tried %s)",
			       gb_buf_str(&tried));
	if (!rc) {
		if (!r.desc.len)
			gb_buf_puts(&r.desc, gb_creds_source_name(s->source));
		gb_strlcpy(c->desc, gb_buf_str(&r.desc), sizeof(c->desc));
	}
	resolution_free(&r);
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
	char q[sizeof(c->desc) + 8];
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
			gb_log_info("aws_credentials source=%s via=%s expires_in=%.0f",
				    gb_creds_source_name(c->cur.source),
				    gb_log_q(q, sizeof(q), c->desc),
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

char *gb_creds_describe(gb_creds_t *c)
{
	char *d;

	pthread_mutex_lock(&c->lock);
	d = strdup(c->desc);
	pthread_mutex_unlock(&c->lock);
	return d;
}
