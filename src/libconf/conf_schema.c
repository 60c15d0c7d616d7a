/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conf_schema.c - the keys of gpuburst.yaml: one table row per key
 *
 * To add a key: add its field to struct gb_conf (gb_conf.h), one row here,
 * a line in etc/gpuburst.yaml.example and in gpuburst.yaml(5).  Parsing,
 * type errors, defaults, unknown-key lists and freeing follow from the row.
 * Checks that involve one mapping live in its post function below; checks
 * across mappings live in conf_check.c.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "conf_int.h"
#include "gb_hostlist.h"
#include "gb_util.h"

/* conv_enum() stores an int through memcpy: every config enum is int-sized. */
_Static_assert(sizeof(enum gb_env) == sizeof(int), "enum size");
_Static_assert(sizeof(enum gb_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(enum gb_strategy) == sizeof(int), "enum size");
_Static_assert(sizeof(enum gb_locality) == sizeof(int), "enum size");
_Static_assert(sizeof(enum gb_market) == sizeof(int), "enum size");
_Static_assert(GB_CAPACITY_BLOCK + 1 == GB_CAPACITY_COUNT, "GB_CAPACITY_COUNT");
_Static_assert(sizeof(enum gb_placement) == sizeof(int), "enum size");
_Static_assert(sizeof(enum gb_planner_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(enum gb_llm_provider) == sizeof(int), "enum size");
_Static_assert(sizeof(enum gb_log_level) == sizeof(int), "enum size");

#define MINUTE 60.0
#define HOUR 3600.0
#define DAY 86400.0

/*****************************************************************************
 *  Enum names (indexed by value; NULL: not accepted in the file)
 *****************************************************************************/

#define CONF_ENUM(var, ...) \
	static const char *const var##_names[] = { __VA_ARGS__ }; \
	const struct conf_enum var = { var##_names, (int)GB_ARRAY_LEN(var##_names) }

CONF_ENUM(conf_enum_env, "dev", "staging", "prod");
CONF_ENUM(conf_enum_mode, "multi_region", "single_region");
CONF_ENUM(conf_enum_strategy, "default", "probe_fill", "best_effort",
	  "all_or_nothing");
CONF_ENUM(conf_enum_locality, "region", "az", "none");
CONF_ENUM(conf_enum_market, "on-demand", "spot");
CONF_ENUM(conf_enum_capacity, "on-demand", "spot", "reservation", "capacity-block");
_Static_assert(GB_ARRAY_LEN(conf_enum_capacity_names) == GB_CAPACITY_COUNT,
	       "a name per capacity kind");
CONF_ENUM(conf_enum_placement, "none", "cluster");
CONF_ENUM(conf_enum_held, "hold", "cancel");
CONF_ENUM(conf_enum_over, "hold", "refuse");
CONF_ENUM(conf_enum_planner, "heuristic", "llm");
CONF_ENUM(conf_enum_llm, NULL, "openai", "bedrock", "anthropic");
CONF_ENUM(conf_enum_level, "error", "warning", "notice", "info", "debug");

#define SEEN(key) conf_seen(sc, seen, key)

/*****************************************************************************
 *  Checks of one value
 *****************************************************************************/

static bool name_chars_ok(const char *s, const char *extra, bool upper)
{
	for (; *s; s++) {
		if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) ||
		      (upper && isupper((unsigned char)*s)) || strchr(extra, *s)))
			return false;
	}
	return true;
}

/* ^[a-z0-9][a-z0-9-]{0,31}$: it goes into the gpuburst:cluster tag. */
static bool check_cluster_name(struct conf_ctx *c, const struct conf_key *k,
			       yaml_node_t *n, void *dst)
{
	const char *s = *(char **)dst;
	char tmp[CONF_SHOW_MAX + 8];

	(void)k;
	if (s[0] != '-' && strlen(s) <= 32 && name_chars_ok(s, "-", false))
		return true;
	conf_error_at(c, n, "cluster_name '%s' is invalid: use 1 to 32 lower-case letters, digits and '-', not starting with '-' (it goes into cloud tags)",
		      conf_show(s, tmp, sizeof(tmp)));
	return false;
}

static bool check_nodeset_name(struct conf_ctx *c, const struct conf_key *k,
			       yaml_node_t *n, void *dst)
{
	const char *s = *(char **)dst;
	char tmp[CONF_SHOW_MAX + 8];

	(void)k;
	if (name_chars_ok(s, "_-", true))
		return true;
	conf_error_at(c, n, "nodeset name '%s' is invalid: use letters, digits, '_' and '-'",
		      conf_show(s, tmp, sizeof(tmp)));
	return false;
}

static bool region_name_ok(const char *s)
{
	return s && strlen(s) <= 64 && name_chars_ok(s, "-", false);
}

static bool check_region_name(struct conf_ctx *c, const struct conf_key *k,
			      yaml_node_t *n, void *dst)
{
	const char *s = *(char **)dst;
	char tmp[CONF_SHOW_MAX + 8];

	(void)k;
	if (region_name_ok(s))
		return true;
	conf_error_at(c, n, "region name '%s' is invalid: use lower-case letters, digits and '-'",
		      conf_show(s, tmp, sizeof(tmp)));
	return false;
}

/* A string today; an enum the day a second cloud is added. */
static bool check_provider(struct conf_ctx *c, const struct conf_key *k,
			   yaml_node_t *n, void *dst)
{
	const char *s = *(char **)dst;
	char tmp[CONF_SHOW_MAX + 8];

	if (strcmp(s, "ec2") == 0)
		return true;
	conf_error_at(c, n, "'%s' must be one of ec2, got '%s'", k->name,
		      conf_show(s, tmp, sizeof(tmp)));
	return false;
}

static bool check_threshold(struct conf_ctx *c, const struct conf_key *k,
			    yaml_node_t *n, void *dst)
{
	int v = *(int *)dst;

	if (v >= 1)
		return true;
	conf_error_at(c, n, "approval threshold for %s must be at least 1, got %d",
		      k->name, v);
	return false;
}

static bool check_user_data(struct conf_ctx *c, const struct conf_key *k,
			    yaml_node_t *n, void *dst)
{
	size_t len = strlen(*(char **)dst);

	if (len <= CONF_MAX_USER_DATA)
		return true;
	conf_error_at(c, n, "'%s' has %zu bytes, more than EC2's limit of %d",
		      k->name, len, CONF_MAX_USER_DATA);
	return false;
}

static bool check_notify(struct conf_ctx *c, const struct conf_key *k,
			 yaml_node_t *n, void *dst)
{
	char **argv = *(char ***)dst;
	char tmp[CONF_SHOW_MAX + 8];

	(void)n;
	if (!argv[0] || argv[0][0] == '/')
		return true;
	conf_error(c, conf_mark_of(c, &argv[0]),
		   "'%s' must start with the absolute path of a program, got '%s'",
		   k->name, conf_show(argv[0], tmp, sizeof(tmp)));
	return false;
}

/*****************************************************************************
 *  metrics:
 *****************************************************************************/

/*
 * "HOST:PORT": an IPv4 literal or a bracketed IPv6 one (no name: the
 * address is bound, never looked up), a port from 1 to 65535.
 */
bool gb_conf_listen_parse(const char *s, char *host, size_t hn, unsigned *port)
{
	const char *colon, *h = s, *he;
	unsigned char addr[sizeof(struct in6_addr)];
	char *end;
	unsigned long p;

	if (!s || !*s)
		return false;
	if (*s == '[') {
		if (!(he = strchr(s, ']')) || he[1] != ':')
			return false;
		h = s + 1;
		colon = he + 1;
	} else {
		if (!(colon = strrchr(s, ':')) || memchr(s, ':', (size_t)(colon - s)))
			return false;
		he = colon;
	}
	if (he == h || (size_t)(he - h) >= hn || !isdigit((unsigned char)colon[1]))
		return false;
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (errno || *end || p < 1 || p > 65535)
		return false;
	memcpy(host, h, (size_t)(he - h));
	host[he - h] = '\0';
	/* a literal of the family its brackets say: inet_pton, as the bind will */
	if (inet_pton(*s == '[' ? AF_INET6 : AF_INET, host, addr) != 1)
		return false;
	*port = (unsigned)p;
	return true;
}

/* "unix:/ABSOLUTE/PATH", short enough for sockaddr_un: RET the path, else NULL. */
const char *gb_conf_listen_unix(const char *s)
{
	if (!s || strncmp(s, "unix:", 5) != 0 || s[5] != '/')
		return NULL;
	return strlen(s + 5) < GB_CONF_UNIX_PATH_MAX ? s + 5 : NULL;
}

static bool check_listen(struct conf_ctx *c, const struct conf_key *k, yaml_node_t *n,
			 void *dst)
{
	const char *s = *(char **)dst;
	char host[64], tmp[CONF_SHOW_MAX + 8];
	unsigned port;

	(void)k;
	if (gb_conf_listen_parse(s, host, sizeof(host), &port) || gb_conf_listen_unix(s))
		return true;
	conf_error_at(c, n, "listen '%s' is not an address and port nor a socket: use IPv4:PORT or [IPv6]:PORT (127.0.0.1:9812), a literal address, a port from 1 to 65535, or unix:/ABSOLUTE/PATH (at most %d bytes)",
		      conf_show(s, tmp, sizeof(tmp)), GB_CONF_UNIX_PATH_MAX - 1);
	return false;
}

#define S struct gb_conf_metrics
static const struct conf_key metrics_keys[] = {
	K_PATH("textfile", textfile, NULL, CF_EMPTY_NULL),
	K_STR("listen", listen, "127.0.0.1:9812", 0, .check = check_listen),
	K_BOOL("status_page", status_page, "false"),
	K_PATH("token_file", token_file, NULL, CF_EMPTY_NULL),
	K_END
};
#undef S

static const struct conf_schema metrics_schema = {
	"metrics", metrics_keys, sizeof(struct gb_conf_metrics), CONF_NO_OFF, CONF_NO_OFF,
	NULL, NULL
};

/*****************************************************************************
 *  log:
 *****************************************************************************/

#define S struct gb_conf_log
static const struct conf_key log_keys[] = {
	K_PATH("file", file, "/var/log/gpuburst/gpuburst.log", CF_EMPTY_NULL),
	K_BOOL("syslog", syslog, "false"),
	K_ENUM("level", level, "info", &conf_enum_level),
	K_END
};
#undef S

static const struct conf_schema log_schema = {
	"log", log_keys, sizeof(struct gb_conf_log), CONF_NO_OFF, CONF_NO_OFF,
	NULL, NULL
};

/*****************************************************************************
 *  cloud: and cloud.credentials:
 *****************************************************************************/

static bool check_credential_source(struct conf_ctx *c, const struct conf_key *k,
				    yaml_node_t *n, void *dst)
{
	const char *s = *(char **)dst;
	char tmp[CONF_SHOW_MAX + 8];

	if (strcmp(s, "Environment") == 0 || strcmp(s, "Ec2InstanceMetadata") == 0)
		return true;
	conf_error_at(c, n, "'%s' must be one of Environment, Ec2InstanceMetadata, got '%s'",
		      k->name, conf_show(s, tmp, sizeof(tmp)));
	return false;
}

static bool check_session_name(struct conf_ctx *c, const struct conf_key *k,
			       yaml_node_t *n, void *dst)
{
	const char *s = *(char **)dst;
	size_t len = strlen(s);
	char tmp[CONF_SHOW_MAX + 8];

	if (len >= 2 && len <= 64 && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
					 "abcdefghijklmnopqrstuvwxyz0123456789_+=,.@-") == len)
		return true;
	conf_error_at(c, n, "'%s' must be 2-64 letters, digits or _+=,.@-, got '%s'",
		      k->name, conf_show(s, tmp, sizeof(tmp)));
	return false;
}

/* [s] of [n] bytes is a host name or an IPv4 address: letters, digits, . - _ */
static bool host_chars_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!isalnum((unsigned char)s[i]) && !strchr(".-_", s[i]))
			return false;
	}
	return n > 0;
}

/* What is wrong with "[user[:password]@]host[:port]" [a] of [n] bytes, or NULL. */
static const char *authority_problem(const char *a, size_t n)
{
	const char *at = NULL, *host, *end = a + n, *port = NULL;
	long v;

	for (const char *p = a; p < end; p++)
		if (*p == '@')
			at = p;
	if (at && (at == a || *a == ':'))
		return "has an empty user name";
	host = at ? at + 1 : a;
	if (*host == '[') {
		const char *close = memchr(host, ']', (size_t)(end - host));

		if (!close || close == host + 1 ||
		    strspn(host + 1, "0123456789abcdefABCDEF:.") != (size_t)(close - host - 1))
			return "has no host, or a bad IPv6 address";
		if (close + 1 < end && close[1] != ':')
			return "has junk after its IPv6 address";
		port = close + 1 < end ? close + 2 : NULL;
	} else {
		const char *colon = memchr(host, ':', (size_t)(end - host));

		if (!host_chars_ok(host, (size_t)((colon ? colon : end) - host)))
			return "has no host, or a host that is neither a name nor an IP address";
		port = colon ? colon + 1 : NULL;
	}
	if (port) {
		char digits[8];
		size_t len = (size_t)(end - port);

		if (len == 0 || len >= sizeof(digits))
			return "has a port that is not 1 to 65535";
		memcpy(digits, port, len);
		digits[len] = '\0';
		if (gb_parse_long(digits, 1, 65535, &v))
			return "has a port that is not 1 to 65535";
	}
	return NULL;
}

/*
 * http(s)://[user[:password]@]host[:port][/]: what libcurl takes as a
 * proxy, checked here so that a typo fails the load, not every request.
 * The password never appears in a message (CF_SECRET, gb_url_redact()).
 */
static bool check_proxy(struct conf_ctx *c, const struct conf_key *k,
			yaml_node_t *n, void *dst)
{
	const char *s = *(char **)dst, *rest, *why = NULL;
	char shown[CONF_SHOW_MAX + 8], tmp[CONF_SHOW_MAX + 8];
	size_t alen;

	if (!s)		/* "": no proxy */
		return true;
	if (gb_str_has_prefix(s, "http://"))
		rest = s + 7;
	else if (gb_str_has_prefix(s, "https://"))
		rest = s + 8;
	else
		rest = NULL;
	alen = rest ? strcspn(rest, "/?#") : 0;
	for (const char *p = s; *p && !why; p++)
		if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p))
			why = "contains a blank or a control character";
	if (!why && !rest)
		why = "has another scheme";
	if (!why && rest[alen] && strcmp(rest + alen, "/") != 0)
		why = "has a path, query or fragment (give scheme, host and port only)";
	if (!why)
		why = authority_problem(rest, alen);
	if (!why)
		return true;
	gb_url_redact(s, tmp, sizeof(tmp));
	conf_error_at(c, n, "'%s' must be an http:// or https:// URL (http://[user:password@]host[:port]), got '%s': it %s",
		      k->name, conf_show(tmp, shown, sizeof(shown)), why);
	return false;
}

/* Host names, domain suffixes (".internal"), IP addresses, or "*". */
static bool check_no_proxy(struct conf_ctx *c, const struct conf_key *k,
			   yaml_node_t *n, void *dst)
{
	char **v = *(char ***)dst, tmp[CONF_SHOW_MAX + 8];
	bool ok = true;

	(void)n;
	for (size_t i = 0; v[i]; i++) {
		const char *s = v[i];
		size_t len = strlen(s);

		if (strcmp(s, "*") == 0 ||
		    (strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			       "0123456789.-_:[]") == len && strspn(s, ".") < len))
			continue;
		conf_error(c, conf_mark_of(c, &v[i]),
			   "items of '%s' must be a host name, a domain (.example.com), an IP address or *, one per item, got '%s'",
			   k->name, conf_show(s, tmp, sizeof(tmp)));
		ok = false;
	}
	return ok;
}

/* No more groups than one launch can carry (GB_CONF_SECURITY_GROUPS_MAX). */
static bool check_security_groups(struct conf_ctx *c, const struct conf_key *k,
				  yaml_node_t *n, void *dst)
{
	char **v = *(char ***)dst;
	size_t count = 0;

	while (v[count])
		count++;
	if (count <= GB_CONF_SECURITY_GROUPS_MAX)
		return true;
	conf_error_at(c, n, "'%s' lists %zu groups, more than EC2's limit of %d per instance",
		      k->name, count, GB_CONF_SECURITY_GROUPS_MAX);
	return false;
}

/*
 * cloud.credentials names at most one source of its own: explicit keys, a
 * role, or credential_process; a role has exactly one source.
 */
static void creds_post(struct conf_ctx *c, const struct conf_schema *sc,
		       yaml_node_t *map, void *obj, yaml_node_t *const *seen)
{
	static const char *const role_only[] = {
		"source_profile", "credential_source", "web_identity_token_file",
		"external_id", "role_session_name", "duration_seconds",
	};
	yaml_node_t *akid = SEEN("access_key_id"), *secret = SEEN("secret_access_key");
	yaml_node_t *token = SEEN("session_token"), *role = SEEN("role_arn");
	yaml_node_t *proc = SEEN("credential_process"), *profile = SEEN("profile");
	int sources = 0;

	(void)map;
	(void)obj;
	if (!!akid != !!secret)
		conf_error_at(c, akid ? akid : secret,
			      "'%s' needs '%s': give both or neither",
			      akid ? "access_key_id" : "secret_access_key",
			      akid ? "secret_access_key" : "access_key_id");
	if (token && !(akid && secret))
		conf_error_at(c, token,
			      "'session_token' needs 'access_key_id' and 'secret_access_key'");
	sources = !!(akid || secret) + !!role + !!proc;
	if (sources > 1)
		conf_error_at(c, role ? role : proc,
			      "give one of access_key_id, role_arn and credential_process");
	if (profile && (role || proc))
		conf_error_at(c, profile,
			      "'profile' names a profile of the shared files; '%s' is a source of its own: use one",
			      role ? "role_arn" : "credential_process");
	if (role) {
		int n = !!SEEN("source_profile") + !!SEEN("credential_source") +
			!!SEEN("web_identity_token_file");

		if (n != 1)
			conf_error_at(c, role,
				      "'role_arn' needs exactly one of 'source_profile', 'credential_source' and 'web_identity_token_file'");
		return;
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(role_only); i++) {
		if (SEEN(role_only[i]))
			conf_error_at(c, SEEN(role_only[i]), "'%s' needs 'role_arn'",
				      role_only[i]);
	}
}

#define S struct gb_conf_cloud
static const struct conf_key creds_keys[] = {
	K_STR("profile", profile, NULL, 0),
	K_PATH("file", credentials_file, NULL, 0),
	K_PATH("config_file", config_file, NULL, 0),
	K_STR("access_key_id", access_key_id, NULL, 0),
	K_STR("secret_access_key", secret_access_key, NULL, 0),
	K_STR("session_token", session_token, NULL, 0),
	K_STR("role_arn", role_arn, NULL, 0),
	K_STR("source_profile", source_profile, NULL, 0),
	K_STR("credential_source", credential_source, NULL, 0,
	      .check = check_credential_source),
	K_PATH("web_identity_token_file", web_identity_token_file, NULL, 0),
	K_STR("external_id", external_id, NULL, 0),
	K_STR("role_session_name", role_session_name, NULL, 0,
	      .check = check_session_name),
	K_DUR("duration_seconds", duration, NULL, 900, 43200, 0),
	{ .name = "credential_process", .type = CT_STRV,
	  .off = offsetof(S, credential_process), .off_n = CONF_NO_OFF,
	  .flags = CF_NONEMPTY, .check = check_notify },
	K_DUR("credential_process_timeout", process_timeout, "30s", 1, 10 * 60, 0),
	K_URL("sts_endpoint", sts_endpoint),
	K_STR("sts_region", sts_region, NULL, 0),
	K_BOOL("imds", imds, "true"),
	K_END
};

static const struct conf_schema creds_schema = {
	"cloud.credentials", creds_keys, sizeof(struct gb_conf_cloud),
	CONF_NO_OFF, CONF_NO_OFF, creds_post, NULL
};

/*
 * cloud.munge_key.file: what munged itself would accept (a private regular
 * file of 32 to 1024 bytes), checked without reading the secret.  A user
 * who may not search its directory (munge's is 0700) cannot tell: the
 * launch that seals the key reads it, and says so if it cannot.
 */
static bool check_munge_file(struct conf_ctx *c, const struct conf_key *k,
			     yaml_node_t *n, void *dst)
{
	const char *path = *(char **)dst;
	char tmp[CONF_SHOW_MAX + 8];
	struct stat st;

	conf_show(path, tmp, sizeof(tmp));
	if (stat(path, &st) != 0) {
		if (errno == EACCES)
			return true;
		conf_error_at(c, n, "'%s' %s: %s", k->name, tmp, strerror(errno));
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		conf_error_at(c, n, "'%s' %s is not a regular file", k->name, tmp);
		return false;
	}
	if (st.st_mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH)) {
		conf_error_at(c, n, "'%s' %s may be read or written by group or others (mode %04o): a munge key is private (chmod 0400)",
			      k->name, tmp, (unsigned)(st.st_mode & 07777));
		return false;
	}
	if (st.st_size < CONF_MUNGE_KEY_MIN || st.st_size > CONF_MUNGE_KEY_MAX) {
		conf_error_at(c, n, "'%s' %s has %lld bytes: a munge key has %d to %d",
			      k->name, tmp, (long long)st.st_size, CONF_MUNGE_KEY_MIN,
			      CONF_MUNGE_KEY_MAX);
		return false;
	}
	return true;
}

/*
 * cloud.munge_key.seal_to: a PEM public key.  Its type and size are the
 * sealer's to check (libcloud, OpenSSL); a private key here is refused
 * now, as that half belongs on the image only.
 */
static bool check_seal_to(struct conf_ctx *c, const struct conf_key *k,
			  yaml_node_t *n, void *dst)
{
	const char *path = *(char **)dst;
	char tmp[CONF_SHOW_MAX + 8], *text = NULL;
	size_t len = 0;
	gb_error_t e;
	bool ok = false;

	conf_show(path, tmp, sizeof(tmp));
	switch (gb_file_read(path, CONF_MAX_PUBKEY, &text, &len, &e)) {
	case GB_E_OK:
		break;
	case GB_E_NOMEM:
		conf_nomem(c);
		return false;
	case GB_E_INVALID:
		conf_error_at(c, n, "'%s' %s is larger than %d bytes: not a PEM public key",
			      k->name, tmp, CONF_MAX_PUBKEY);
		return false;
	default:
		conf_error_at(c, n, "'%s': %s", k->name, e.text);
		return false;
	}
	if (strlen(text) == len && strstr(text, "PRIVATE KEY-----"))
		conf_error_at(c, n, "'%s' %s holds a private key: give its public half (openssl pkey -in KEY -pubout)",
			      k->name, tmp);
	else if (strlen(text) != len || !strstr(text, "-----BEGIN PUBLIC KEY-----"))
		conf_error_at(c, n, "'%s' %s holds no PEM public key (BEGIN PUBLIC KEY)",
			      k->name, tmp);
	else
		ok = true;
	free(text);
	return ok;
}

#undef S
#define S struct gb_conf_munge_key
static const struct conf_key munge_key_keys[] = {
	{ K_("file", CT_ABSPATH, file), .flags = CF_REQUIRED, .check = check_munge_file },
	{ K_("seal_to", CT_ABSPATH, seal_to), .flags = CF_REQUIRED, .check = check_seal_to },
	K_END
};
#undef S

static const struct conf_schema munge_key_schema = {
	"cloud.munge_key", munge_key_keys, sizeof(struct gb_conf_munge_key),
	CONF_NO_OFF, CONF_NO_OFF, NULL, NULL
};

#define S struct gb_conf_cloud
static const struct conf_key cloud_keys[] = {
	K_STR("provider", provider, "ec2", 0, .check = check_provider),
	K_URL("endpoint", endpoint),
	K_PATH("ca_bundle", ca_bundle, NULL, 0),
	K_STR("proxy", proxy, NULL, CF_EMPTY_NULL | CF_SECRET, .check = check_proxy),
	K_STRV("no_proxy", no_proxy, NULL, 0, .check = check_no_proxy),
	K_DUR("connect_timeout", connect_timeout, "5s", 1, HOUR, 0),
	K_DUR("request_timeout", request_timeout, "30s", 1, HOUR, 0),
	K_INT("max_retries", max_retries, "4", 0, 20),
	K_DUR("retry_budget", retry_budget, "60s", 0, DAY, 0),
	/* credentials: a mapping of its own, stored in this same struct */
	{ .name = "credentials", .type = CT_MAP, .off = 0, .off_n = CONF_NO_OFF,
	  .arg = &creds_schema },
	K_MAP("munge_key", munge_key, &munge_key_schema),
	K_END
};
#undef S

/*
 * A role's STS is never guessed when EC2 is somewhere of the site's
 * choosing.  no_proxy says what bypasses the proxy: nothing to say without
 * one.  Its list is joined once here, in curl's form, for every client.
 */
static void cloud_post(struct conf_ctx *c, const struct conf_schema *sc,
		       yaml_node_t *map, void *obj, yaml_node_t *const *seen)
{
	struct gb_conf_cloud *cl = obj;
	yaml_node_t *creds = SEEN("credentials");
	struct gb_buf b = GB_BUF_INIT;

	(void)map;
	c->munge_key_seen = SEEN("munge_key") != NULL;
	if (cl->endpoint && cl->role_arn && !cl->sts_endpoint)
		conf_error_at(c, creds ? creds : SEEN("endpoint"),
			      "'role_arn' with 'cloud.endpoint' set needs 'sts_endpoint' (where STS is)");
	if (SEEN("no_proxy") && !cl->proxy)
		conf_error_at(c, SEEN("no_proxy"),
			      "'no_proxy' needs 'proxy': without one every host is reached directly");
	if (!cl->proxy || !cl->n_no_proxy)
		return;
	for (size_t i = 0; i < cl->n_no_proxy; i++)
		gb_buf_printf(&b, "%s%s", i ? "," : "", cl->no_proxy[i]);
	free(cl->no_proxy_hosts);
	cl->no_proxy_hosts = gb_buf_steal(&b);
	if (!cl->no_proxy_hosts)
		conf_nomem(c);
	gb_buf_free(&b);
}

static const struct conf_schema cloud_schema = {
	"cloud", cloud_keys, sizeof(struct gb_conf_cloud), CONF_NO_OFF,
	CONF_NO_OFF, cloud_post, NULL
};

/*****************************************************************************
 *  regions: and their azs:
 *****************************************************************************/

#define S struct gb_conf_az
static const struct conf_key az_keys[] = {
	K_STR("name", name, NULL, CF_REQUIRED),
	K_STRV("subnets", subnets, NULL, CF_REQUIRED | CF_NONEMPTY),
	K_END
};
#undef S

static const struct conf_schema az_schema = {
	"availability zone", az_keys, sizeof(struct gb_conf_az), CONF_NO_OFF,
	CONF_NO_OFF, NULL, NULL
};

/* user_data_file: read now, so that a bad path fails the load, not a launch. */
static void read_user_data_file(struct conf_ctx *c, const struct conf_key *k,
				yaml_node_t *n, void *obj)
{
	struct gb_conf_region *r = obj;
	char *data = NULL, tmp[CONF_SHOW_MAX + 8];
	const char *path;
	gb_error_t e;
	size_t len = 0;

	if (n->type != YAML_SCALAR_NODE) {
		conf_error_at(c, n, "'%s' must be an absolute path, got %s",
			      k->name, conf_kind_name(n));
		return;
	}
	path = (const char *)n->data.scalar.value;
	if (conf_has_nul(n)) {
		snprintf(tmp, sizeof(tmp), "'%s'", k->name);
		conf_error_nul(c, n, tmp);
		return;
	}
	if (path[0] != '/') {
		conf_error_at(c, n, "'%s' must be an absolute path, got '%s'",
			      k->name, conf_show(path, tmp, sizeof(tmp)));
		return;
	}
	switch (gb_file_read(path, CONF_MAX_USER_DATA, &data, &len, &e)) {
	case GB_E_OK:
		break;
	case GB_E_NOMEM:
		conf_nomem(c);
		return;
	case GB_E_INVALID:
		conf_error_at(c, n, "'%s' %s is larger than EC2's limit of %d bytes",
			      k->name, conf_show(path, tmp, sizeof(tmp)),
			      CONF_MAX_USER_DATA);
		return;
	default:
		conf_error_at(c, n, "'%s': %s", k->name, e.text);
		return;
	}
	if (strlen(data) != len) {
		conf_error_at(c, n, "'%s' %s contains a NUL byte", k->name,
			      conf_show(path, tmp, sizeof(tmp)));
		free(data);
		return;
	}
	free(r->user_data);
	r->user_data = data;
	conf_mark_add(c, &r->user_data, n);
}

static void region_coords(struct conf_ctx *c, const struct conf_schema *sc,
			  struct gb_conf_region *r, yaml_node_t *const *seen)
{
	yaml_node_t *lat = SEEN("lat"), *lon = SEEN("lon");
	char tmp[CONF_SHOW_MAX + 8];

	if (!!lat != !!lon) {
		conf_error_at(c, lat ? lat : lon,
			      "region '%s' has '%s' but no '%s': give both or neither",
			      r->name ? conf_show(r->name, tmp, sizeof(tmp)) : "?",
			      lat ? "lat" : "lon", lat ? "lon" : "lat");
		return;
	}
	if (lat || !region_name_ok(r->name) ||
	    gb_region_coords(r->name, &r->lat, &r->lon))
		return;
	conf_error(c, conf_mark_of(c, &r->name),
		   "region '%s' is not a known AWS region: give its 'lat' and 'lon'",
		   r->name);
}

static void region_post(struct conf_ctx *c, const struct conf_schema *sc,
			yaml_node_t *map, void *obj, yaml_node_t *const *seen)
{
	struct gb_conf_region *r = obj;
	const char *name = r->name ? r->name : "?";
	char tmp[CONF_SHOW_MAX + 8];

	(void)map;
	region_coords(c, sc, r, seen);
	r->user_data_per_node = r->user_data && strstr(r->user_data, "{node}");
	r->user_data_munge_key = r->user_data && strstr(r->user_data, "{munge_key}");
	if (SEEN("user_data") && SEEN("user_data_file"))
		conf_error_at(c, SEEN("user_data_file"),
			      "region '%s' has both 'user_data' and 'user_data_file': give one",
			      conf_show(name, tmp, sizeof(tmp)));
	if (r->n_azs && !r->ami)
		conf_error_at(c, SEEN("azs"),
			      "region '%s' has availability zones but no 'ami'",
			      conf_show(name, tmp, sizeof(tmp)));
	for (size_t i = 0; r->name && i < r->n_azs; i++) {
		const char *az = r->azs[i].name;
		char tmp2[CONF_SHOW_MAX + 8];

		if (!az || (gb_str_has_prefix(az, r->name) &&
			    strlen(az) > strlen(r->name)))
			continue;
		conf_error(c, conf_mark_of(c, &r->azs[i].name),
			   "availability zone '%s' is not in region '%s' (its name must start with '%s')",
			   conf_show(az, tmp2, sizeof(tmp2)), name, name);
	}
}

#define S struct gb_conf_region
static const struct conf_key region_keys[] = {
	K_STR("name", name, NULL, CF_REQUIRED, .check = check_region_name),
	K_NUM("lat", lat, -90, 90),
	K_NUM("lon", lon, -180, 180),
	K_URL("endpoint", endpoint),
	K_STR("ami", ami, NULL, 0),
	K_STR("key_name", key_name, NULL, 0),
	K_STRV("security_groups", security_groups, NULL, 0,
	       .check = check_security_groups),
	K_STR("iam_profile", iam_profile, NULL, 0),
	K_STR("user_data", user_data, NULL, 0, .check = check_user_data),
	K_FUNC("user_data_file", read_user_data_file),
	K_INT("priority", priority, "0", -1000000, 1000000),
	K_LIST("azs", azs, n_azs, &az_schema),
	K_END
};
#undef S

static const struct conf_schema region_schema = {
	"region", region_keys, sizeof(struct gb_conf_region), CONF_NO_OFF,
	offsetof(struct gb_conf_region, mark), region_post, NULL
};

/*****************************************************************************
 *  fallback_groups:
 *****************************************************************************/

#define S struct gb_conf_group
static const struct conf_key group_keys[] = {
	K_STRV("consumer_regions", consumer_regions, NULL, CF_REQUIRED | CF_NONEMPTY),
	K_STRV("fallback_regions", fallback_regions, NULL, CF_REQUIRED | CF_NONEMPTY),
	K_END
};
#undef S

static const struct conf_schema group_schema = {
	"fallback group", group_keys, sizeof(struct gb_conf_group),
	offsetof(struct gb_conf_group, name), CONF_NO_OFF, NULL, NULL
};

/*****************************************************************************
 *  nodesets[].capacity: the ladder of capacity kinds
 *****************************************************************************/

/*
 * Each item of capacity: is a mapping with one key, the kind; its value is
 * read by the kind's schema into the same struct gb_conf_rung (rows at
 * offset 0, as cloud.credentials), so reservations and capacity_blocks
 * share the field ids.  rung_post() sets the kind, nodeset_capacity() checks
 * the ladder as a whole.
 */
static const struct {
	const char *key;		/* the key of the item */
	enum gb_capacity_kind kind;
} rung_kinds[] = {
	{ "reservations", GB_CAPACITY_RESERVATION },
	{ "capacity_blocks", GB_CAPACITY_BLOCK },
	{ "spot", GB_CAPACITY_SPOT },
	{ "on_demand", GB_CAPACITY_ON_DEMAND },
};
#define RUNG_KEYS "reservations, capacity_blocks, spot, on_demand"

/* The item key of [kind] ("capacity_blocks"). */
static const char *rung_key(enum gb_capacity_kind kind)
{
	for (size_t i = 0; i < GB_ARRAY_LEN(rung_kinds); i++) {
		if (rung_kinds[i].kind == kind)
			return rung_kinds[i].key;
	}
	return "?";
}

/* EC2's capacity reservation ids (Capacity Blocks have them too). */
static bool cr_id_ok(const char *s)
{
	size_t n;

	if (!gb_str_has_prefix(s, "cr-"))
		return false;
	n = strlen(s + 3);
	return (n == 8 || n == 17) && strspn(s + 3, "0123456789abcdef") == n;
}

static bool check_cr_ids(struct conf_ctx *c, const struct conf_key *k,
			 yaml_node_t *n, void *dst)
{
	char **v = *(char ***)dst, tmp[CONF_SHOW_MAX + 8];
	bool ok = true;

	(void)n;
	for (size_t i = 0; v[i]; i++) {
		if (cr_id_ok(v[i]))
			continue;
		conf_error(c, conf_mark_of(c, &v[i]),
			   "items of '%s' must be capacity reservation ids ('cr-' and 8 or 17 lower-case hex digits, such as cr-0123456789abcdef0), got '%s'",
			   k->name, conf_show(v[i], tmp, sizeof(tmp)));
		ok = false;
	}
	return ok;
}

/* Copy the [len] bytes at [s] to [out] of [n] bytes; RET whether they fit. */
static bool field_copy(const char *s, size_t len, char *out, size_t n)
{
	if (!out)
		return true;
	if (len >= n)
		return false;
	memcpy(out, s, len);
	out[len] = '\0';
	return true;
}

bool conf_group_arn_parse(const char *arn, char *partition, char *region, size_t n)
{
	static const char *const partitions[] = { "aws", "aws-cn", "aws-us-gov" };
	const char *f[6];		/* the six fields between ':' */
	size_t len[6], name_len;
	bool part_ok = false;

	for (int i = 0; i < 6; i++) {
		f[i] = i ? f[i - 1] + len[i - 1] + 1 : arn;
		len[i] = strcspn(f[i], ":");
		if (i < 5 && f[i][len[i]] != ':')
			return false;
	}
	if (f[5][len[5]] || len[0] != 3 || strncmp(f[0], "arn", 3) != 0 ||
	    len[2] != 15 || strncmp(f[2], "resource-groups", 15) != 0)
		return false;
	for (size_t i = 0; i < GB_ARRAY_LEN(partitions); i++)
		part_ok |= len[1] == strlen(partitions[i]) &&
			   strncmp(f[1], partitions[i], len[1]) == 0;
	if (!part_ok || len[4] != 12 || strspn(f[4], "0123456789") < 12 ||
	    len[3] == 0 || len[3] > 64 || strspn(f[3], "abcdefghijklmnopqrstuvwxyz"
						 "0123456789-") < len[3])
		return false;
	if (!gb_str_has_prefix(f[5], "group/"))
		return false;
	name_len = len[5] - 6;
	if (name_len < 1 || name_len > 128 ||
	    strspn(f[5] + 6, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		   "0123456789._-") != name_len)
		return false;
	return field_copy(f[1], len[1], partition, n) && field_copy(f[3], len[3], region, n);
}

/* Whether each ARN is well formed; its region is checked in conf_check.c. */
static bool check_group_arns(struct conf_ctx *c, const struct conf_key *k,
			     yaml_node_t *n, void *dst)
{
	char **v = *(char ***)dst, tmp[CONF_SHOW_MAX + 8];
	bool ok = true;

	(void)n;
	for (size_t i = 0; v[i]; i++) {
		if (conf_group_arn_parse(v[i], NULL, NULL, 0))
			continue;
		conf_error(c, conf_mark_of(c, &v[i]),
			   "items of '%s' must be resource group ARNs, arn:PARTITION:resource-groups:REGION:ACCOUNT:group/NAME (PARTITION aws, aws-cn or aws-us-gov; ACCOUNT 12 digits; NAME 1 to 128 of A-Z a-z 0-9 . _ -), got '%s'",
			   k->name, conf_show(v[i], tmp, sizeof(tmp)));
		ok = false;
	}
	return ok;
}

/*
 * [s] as a plain decimal ("12.50", "3", ".5"), without leading zeros in
 * its integer part and trailing zeros in its fraction ("12.5", "3", "0.5").
 * RET NEW the text, or NULL when [s] is not one (or memory ran out: *oom).
 */
static char *price_norm(const char *s, bool *oom)
{
	size_t ip = strspn(s, "0123456789"), fp = 0, lead;
	const char *frac = s + ip + 1;
	char *out = NULL;

	if (s[ip] == '.') {
		fp = strspn(frac, "0123456789");
		if (frac[fp])
			return NULL;
	} else if (s[ip]) {
		return NULL;
	}
	if (ip + fp == 0 || ip + fp > 24)
		return NULL;
	lead = strspn(s, "0");
	lead = lead < ip ? lead : ip;
	while (fp && frac[fp - 1] == '0')
		fp--;
	if (asprintf(&out, "%.*s%s%s%.*s", (int)(ip - lead), s + lead,
		     ip == lead ? "0" : "", fp ? "." : "", (int)fp, frac) < 0) {
		*oom = true;
		return NULL;
	}
	return out;
}

/* EC2's SpotPrice: US dollars per hour, a decimal number; stored normalised. */
static bool check_max_price(struct conf_ctx *c, const struct conf_key *k,
			    yaml_node_t *n, void *dst)
{
	char **s = dst, *norm, tmp[CONF_SHOW_MAX + 8];
	bool oom = false;
	double v = 0;

	norm = price_norm(*s, &oom);
	if (oom) {
		conf_nomem(c);
		return false;
	}
	if (norm && gb_parse_double(norm, &v) == GB_E_OK && v > 0 && v <= 100000) {
		free(*s);
		*s = norm;
		return true;
	}
	free(norm);
	conf_error_at(c, n, "'%s' must be a price in US dollars per hour, a decimal number above 0 and at most 100000 such as \"12.50\", got '%s'",
		      k->name, conf_show(*s, tmp, sizeof(tmp)));
	return false;
}

#define S struct gb_conf_rung
static const struct conf_key reservation_keys[] = {
	K_STRV("ids", ids, NULL, 0, .check = check_cr_ids),
	/* each in a configured region: conf_check.c */
	K_STRV("resource_groups", resource_groups, NULL, 0, .check = check_group_arns),
	K_BOOL("open", open, "false"),
	K_END
};

static const struct conf_key block_keys[] = {
	K_STRV("ids", ids, NULL, 0, .check = check_cr_ids),
	K_END
};

static const struct conf_key spot_keys[] = {
	K_STR("max_price", max_price, NULL, 0, .check = check_max_price),
	K_END
};
#undef S

static const struct conf_key on_demand_keys[] = {
	K_END
};

#define RUNG_SCHEMA(var, what, keys) \
	static const struct conf_schema var = { \
		what, keys, sizeof(struct gb_conf_rung), CONF_NO_OFF, \
		CONF_NO_OFF, NULL, NULL \
	}
RUNG_SCHEMA(reservation_schema, "reservations", reservation_keys);
RUNG_SCHEMA(block_schema, "capacity_blocks", block_keys);
RUNG_SCHEMA(spot_schema, "spot", spot_keys);
RUNG_SCHEMA(on_demand_schema, "on_demand", on_demand_keys);

/* A rung's value is read into the rung itself. */
#define K_RUNG(k, sc) \
	{ .name = k, .type = CT_MAP, .off = 0, .off_n = CONF_NO_OFF, .arg = sc }
static const struct conf_key rung_keys[] = {
	K_RUNG("reservations", &reservation_schema),
	K_RUNG("capacity_blocks", &block_schema),
	K_RUNG("spot", &spot_schema),
	K_RUNG("on_demand", &on_demand_schema),
	K_END
};

/*
 * RET whether the item [map] names its kind alone, setting *kind; else
 * report why, unless the walker already did (an unknown key).
 */
static bool rung_kind_of(struct conf_ctx *c, yaml_node_t *map,
			 enum gb_capacity_kind *kind)
{
	size_t n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
	struct gb_buf b = GB_BUF_INIT;
	bool found = false;

	for (size_t i = 0; i < n; i++) {
		yaml_node_t *kn = yaml_document_get_node(c->doc,
							 map->data.mapping.pairs.start[i].key);
		const char *key = kn && kn->type == YAML_SCALAR_NODE ?
				  (const char *)kn->data.scalar.value : "?";

		gb_buf_printf(&b, "%s%s", i ? ", " : "", key);
		for (size_t j = 0; j < GB_ARRAY_LEN(rung_kinds); j++) {
			if (strcmp(key, rung_kinds[j].key) == 0) {
				*kind = rung_kinds[j].kind;
				found = true;
			}
		}
	}
	if (n == 0)
		conf_error_at(c, map, "items of 'capacity' must name one capacity kind (one of: " RUNG_KEYS "), got an empty mapping");
	else if (n > 1)
		conf_error_at(c, map, "items of 'capacity' must have exactly one key, their capacity kind (one of: " RUNG_KEYS "), got %zu (%s): write one item per kind",
			      n, gb_buf_str(&b));
	if (gb_buf_failed(&b))
		conf_nomem(c);
	gb_buf_free(&b);
	return n == 1 && found;
}

/*
 * The kind of the rung, from its one key (also when its value is left
 * empty: "- spot:" is "- spot: {}").  A rung whose kind is not known keeps
 * GB_CAPACITY_COUNT, which the ladder's checks skip.
 */
static void rung_post(struct conf_ctx *c, const struct conf_schema *sc,
		      yaml_node_t *map, void *obj, yaml_node_t *const *seen)
{
	struct gb_conf_rung *r = obj;
	enum gb_capacity_kind kind = GB_CAPACITY_ON_DEMAND;	/* set when found */
	yaml_node_t *at;

	r->kind = (enum gb_capacity_kind)GB_CAPACITY_COUNT;
	if (!rung_kind_of(c, map, &kind))
		return;
	r->kind = kind;
	if (kind != GB_CAPACITY_RESERVATION || r->n_ids || r->n_resource_groups || r->open)
		return;
	at = SEEN("reservations") ? SEEN("reservations") : map;
	conf_error_at(c, at, "'reservations' selects no reservation: give non-empty 'ids', non-empty 'resource_groups' or 'open: true'");
}

static const struct conf_schema rung_schema = {
	"capacity", rung_keys, sizeof(struct gb_conf_rung), CONF_NO_OFF,
	offsetof(struct gb_conf_rung, mark), rung_post, NULL
};

/* "line 7" or "line 7, column 12" for [first], seen again at [here]. */
static const char *at_str(struct gb_conf_mark first, struct gb_conf_mark here,
			  char *buf, size_t n)
{
	if (first.line == here.line)
		snprintf(buf, n, "line %u, column %u", first.line, first.col);
	else
		snprintf(buf, n, "line %u", first.line);
	return buf;
}

/* An id twice in one ladder: in one rung, or in reservations and capacity_blocks. */
static void dup_rung_id(struct conf_ctx *c, const struct conf_named *first,
			const struct conf_named *dup, const void *arg)
{
	const char *ns = arg;
	struct gb_conf_mark f = conf_mark_of(c, first->addr), m = conf_mark_of(c, dup->addr);
	char tmp[CONF_SHOW_MAX + 8], at[64];

	conf_show(dup->name, tmp, sizeof(tmp));
	if (first->owner == dup->owner)
		conf_error(c, m, "duplicate id '%s' in '%s' of nodeset '%s' (first at %s)",
			   tmp, rung_key((enum gb_capacity_kind)dup->owner), ns,
			   at_str(f, m, at, sizeof(at)));
	else
		conf_error(c, m, "id '%s' is in both '%s' and '%s' of nodeset '%s' (first at %s): a capacity reservation is either an On-Demand Capacity Reservation or a Capacity Block",
			   tmp, rung_key((enum gb_capacity_kind)first->owner),
			   rung_key((enum gb_capacity_kind)dup->owner), ns,
			   at_str(f, m, at, sizeof(at)));
}

/* Each kind once; each id once, in one rung only. */
static void ladder_check(struct conf_ctx *c, const struct gb_conf_nodeset *ns,
			 yaml_node_t *list)
{
	const struct gb_conf_rung *first[GB_CAPACITY_COUNT] = { NULL };
	const char *name = ns->name ? ns->name : "?";
	struct conf_namev ids = { 0 };
	char at[64];

	for (size_t i = 0; i < ns->n_capacity; i++) {
		const struct gb_conf_rung *r = &ns->capacity[i];
		yaml_node_t *item = yaml_document_get_node(c->doc,
							   list->data.sequence.items.start[i]);

		/* items that are no mapping were not read (and are reported) */
		if (!item || item->type != YAML_MAPPING_NODE || r->kind >= GB_CAPACITY_COUNT)
			continue;
		if (first[r->kind]) {
			conf_error(c, r->mark, "capacity kind '%s' is twice in the ladder of nodeset '%s' (first at %s): each kind is tried once",
				   rung_key(r->kind), name,
				   at_str(first[r->kind]->mark, r->mark, at, sizeof(at)));
			continue;
		}
		first[r->kind] = r;
		for (size_t j = 0; j < r->n_ids; j++)
			conf_namev_add(c, &ids, r->ids[j], &r->ids[j], (size_t)r->kind);
	}
	conf_dups_report(c, &ids, dup_rung_id, name);
	conf_namev_free(&ids);
}

/* No capacity: the ladder is one rung of market (written or default). */
static void ladder_of_market(struct conf_ctx *c, struct gb_conf_nodeset *ns,
			     yaml_node_t *market)
{
	if (!(ns->capacity = calloc(1, sizeof(*ns->capacity)))) {
		conf_nomem(c);
		return;
	}
	ns->n_capacity = 1;
	ns->capacity[0].kind = ns->market == GB_MARKET_SPOT ? GB_CAPACITY_SPOT :
			       GB_CAPACITY_ON_DEMAND;
	ns->capacity[0].mark = market ? conf_node_mark(market) : ns->mark;
}

/*
 * market: is the shorthand of a one-rung ladder, so a nodeset gives one
 * or the other; whichever it gives, market says spot exactly when the
 * ladder is [spot], for the code that reads market alone.
 */
static void nodeset_capacity(struct conf_ctx *c, const struct conf_schema *sc,
			     struct gb_conf_nodeset *ns, yaml_node_t *const *seen)
{
	yaml_node_t *list = SEEN("capacity"), *market = SEEN("market");

	if (list && market)
		conf_error_at(c, market, "nodeset '%s' has both 'capacity' and 'market: %s': give one: market: spot is capacity: [spot: {}], market: on-demand is capacity: [on_demand: {}]",
			      ns->name ? ns->name : "?", gb_conf_market_name(ns->market));
	if (!list)
		ladder_of_market(c, ns, market);
	else if (list->type == YAML_SEQUENCE_NODE)
		ladder_check(c, ns, list);
	ns->market = ns->n_capacity == 1 && ns->capacity[0].kind == GB_CAPACITY_SPOT ?
		     GB_MARKET_SPOT : GB_MARKET_ON_DEMAND;
}

/*****************************************************************************
 *  nodesets:
 *****************************************************************************/

/*
 * `instance_type: X` is `instance_types: [X]`; either way instance_type is
 * instance_types[0], so that code reading one type keeps working.
 */
static void nodeset_types(struct conf_ctx *c, const struct conf_schema *sc,
			  yaml_node_t *map, struct gb_conf_nodeset *ns,
			  yaml_node_t *const *seen)
{
	yaml_node_t *one = SEEN("instance_type"), *list = SEEN("instance_types");

	if (one && list) {
		conf_error_at(c, list, "nodeset '%s' has both 'instance_type' and 'instance_types': give one (a list in preference order, or a single type)",
			      ns->name ? ns->name : "?");
		return;
	}
	if (!one && !list) {
		if (!ns->instance_types)	/* not a list that failed to read */
			conf_error_at(c, map, "nodeset '%s' needs 'instance_types' (a list in preference order) or 'instance_type'",
				      ns->name ? ns->name : "?");
		return;
	}
	if (one && ns->instance_type) {
		if (!(ns->instance_types = calloc(2, sizeof(char *))) ||
		    !(ns->instance_types[0] = strdup(ns->instance_type))) {
			conf_nomem(c);
			return;
		}
		ns->n_instance_types = 1;
		conf_mark_add(c, &ns->instance_types[0], one);
	} else if (list && ns->n_instance_types) {
		free(ns->instance_type);
		if (!(ns->instance_type = strdup(ns->instance_types[0])))
			conf_nomem(c);
		conf_mark_add(c, &ns->instance_type,
			      yaml_document_get_node(c->doc, list->data.sequence.items.start[0]));
	}
}

/* EFA and cluster placement groups work inside one AZ: so must a job. */
static void nodeset_locality(struct conf_ctx *c, const struct conf_schema *sc,
			     struct gb_conf_nodeset *ns, yaml_node_t *const *seen)
{
	const char *why = ns->efa ? "efa: true" : "placement: cluster";

	if (!ns->efa && ns->placement != GB_PLACEMENT_CLUSTER)
		return;
	if (!SEEN("locality"))
		ns->locality = GB_LOCALITY_AZ;
	else if (ns->locality != GB_LOCALITY_AZ)
		conf_error_at(c, SEEN("locality"), "nodeset '%s' has %s: its jobs need one availability zone each (EFA and cluster placement groups do not cross zones), so locality must be az or left out, not %s",
			      ns->name ? ns->name : "?", why,
			      gb_conf_locality_name(ns->locality));
}

static void nodeset_post(struct conf_ctx *c, const struct conf_schema *sc,
			 yaml_node_t *map, void *obj, yaml_node_t *const *seen)
{
	struct gb_conf_nodeset *ns = obj;
	char tmp[CONF_SHOW_MAX + 8];
	gb_error_t e;
	size_t n;

	nodeset_types(c, sc, map, ns, seen);
	nodeset_locality(c, sc, ns, seen);
	nodeset_capacity(c, sc, ns, seen);
	if (!ns->nodes)
		return;
	if (gb_hostlist_parse(ns->nodes, &ns->pattern_, &e)) {
		if (e.code == GB_E_NOMEM)
			conf_nomem(c);
		else
			conf_error_at(c, SEEN("nodes"),
				      "'nodes' is not a valid host pattern: %s", e.text);
		return;
	}
	n = gb_hostlist_count(ns->pattern_);
	if (n <= CONF_MAX_NODESET_HOSTS)
		return;
	conf_error_at(c, SEEN("nodes"),
		      "'nodes' pattern '%s' has %zu nodes, more than the limit of %d per nodeset",
		      conf_show(ns->nodes, tmp, sizeof(tmp)), n, CONF_MAX_NODESET_HOSTS);
	gb_hostlist_destroy(ns->pattern_);
	ns->pattern_ = NULL;
}

static void nodeset_fini(void *obj)
{
	struct gb_conf_nodeset *ns = obj;

	gb_hostlist_destroy(ns->pattern_);
	ns->pattern_ = NULL;
}

#define S struct gb_conf_nodeset
static const struct conf_key nodeset_keys[] = {
	K_STR("name", name, NULL, CF_REQUIRED, .check = check_nodeset_name),
	K_STR("nodes", nodes, NULL, CF_REQUIRED),
	/* exactly one of instance_type and instance_types: nodeset_post */
	K_STR("instance_type", instance_type, NULL, 0),
	K_STRV("instance_types", instance_types, NULL, CF_NONEMPTY),
	K_BOOL("efa", efa, "false"),
	K_ENUM("placement", placement, "none", &conf_enum_placement),
	K_STR("home_region", home_region, NULL, CF_REQUIRED),
	K_ENUM("mode", mode, "multi_region", &conf_enum_mode),
	K_ENUM("strategy", strategy, "default", &conf_enum_strategy),
	/* efa and placement: cluster default it to az (nodeset_post) */
	K_ENUM("locality", locality, "region", &conf_enum_locality),
	/* market: X is capacity: [X: {}]; not both (nodeset_post) */
	K_ENUM("market", market, "on-demand", &conf_enum_market),
	K_LIST("capacity", capacity, n_capacity, &rung_schema, .flags = CF_NONEMPTY),
	K_STR("partition", partition, "gpuburst", 0),
	K_END
};
#undef S

static const struct conf_schema nodeset_schema = {
	"nodeset", nodeset_keys, sizeof(struct gb_conf_nodeset), CONF_NO_OFF,
	offsetof(struct gb_conf_nodeset, mark), nodeset_post, nodeset_fini
};

/*****************************************************************************
 *  policy:
 *****************************************************************************/

/* The rows fill int approval_thresholds[GB_ENV_COUNT]. */
#define K_THRESHOLD(k, env, d) \
	{ .name = k, .type = CT_INT, .off = (env) * sizeof(int), \
	  .off_n = CONF_NO_OFF, .def = d, .min = -1e9, .max = 1e6, \
	  .check = check_threshold }
static const struct conf_key threshold_keys[] = {
	K_THRESHOLD("dev", GB_ENV_DEV, "50"),
	K_THRESHOLD("staging", GB_ENV_STAGING, "20"),
	K_THRESHOLD("prod", GB_ENV_PROD, "10"),
	K_END
};

static const struct conf_schema threshold_schema = {
	"policy.approval_thresholds", threshold_keys, sizeof(int) * GB_ENV_COUNT,
	CONF_NO_OFF, CONF_NO_OFF, NULL, NULL
};

/*****************************************************************************
 *  policy.budgets and policy.cost_tags
 *****************************************************************************/

/* One of user, account, partition (none: the cluster); a limit at least. */
static void budget_post(struct conf_ctx *c, const struct conf_schema *sc,
			yaml_node_t *map, void *obj, yaml_node_t *const *seen)
{
	struct gb_conf_budget *b = obj;
	int scopes = !!b->user + !!b->account + !!b->partition;

	if (scopes > 1)
		conf_error_at(c, SEEN(b->partition ? "partition" : "account"),
			      "budget '%s' names more than one of user, account and partition: a budget counts one of them, or the whole cluster when it names none",
			      b->name);
	if (!SEEN("monthly") && !SEEN("per_job"))
		conf_error_at(c, map, "budget '%s' sets neither 'monthly' nor 'per_job' (US dollars)",
			      b->name);
	b->scope = b->user ? GB_BUDGET_USER : b->account ? GB_BUDGET_ACCOUNT :
		   b->partition ? GB_BUDGET_PARTITION : GB_BUDGET_CLUSTER;
	b->who = b->user ? b->user : b->account ? b->account : b->partition;
}

/*
 * Slurm's user, account and partition names, as they appear in a job and
 * in the spend summary the plugin reads: printable, no blank, no '#'.
 */
static bool check_slurm_name(struct conf_ctx *c, const struct conf_key *k,
			     yaml_node_t *n, void *dst)
{
	const char *v = *(char **)dst;
	char tmp[CONF_SHOW_MAX + 8];

	if (strlen(v) <= 64 && !strpbrk(v, " \t#") && conf_tf_printable(v))
		return true;
	conf_error_at(c, n, "'%s' must be a Slurm %s name (up to 64 printable characters, no blank or '#'), got '%s'",
		      k->name, k->name, conf_show(v, tmp, sizeof(tmp)));
	return false;
}

#define S struct gb_conf_budget
static const struct conf_key budget_keys[] = {
	K_STR("user", user, NULL, 0, .check = check_slurm_name),
	K_STR("account", account, NULL, 0, .check = check_slurm_name),
	K_STR("partition", partition, NULL, 0, .check = check_slurm_name),
	K_NUM("monthly", monthly, 0.01, 1e9),
	K_NUM("per_job", per_job, 0.01, 1e9),
	K_ENUM("over", over, "hold", &conf_enum_over),
	K_END
};
#undef S

static const struct conf_schema budget_schema = {
	"budget", budget_keys, sizeof(struct gb_conf_budget),
	offsetof(struct gb_conf_budget, name), CONF_NO_OFF, budget_post, NULL
};

/*
 * An AWS tag key: 1 to 128 letters, digits, blanks and + - = . _ : / @,
 * not starting with "aws:" (reserved), and not one of the tags gpuburst
 * sets itself at launch (a key twice in one TagSpecification is an error).
 */
static const char *const own_tags[] = {
	"Name", "gpuburst:cluster", "gpuburst:request", "gpuburst:capacity", "gpuburst:node",
};

static bool check_tag_key(struct conf_ctx *c, const struct conf_key *k,
			  yaml_node_t *n, void *dst)
{
	const char *v = *(char **)dst;
	char tmp[CONF_SHOW_MAX + 8];
	bool ok;

	if (!v)
		return true;	/* "": no such tag */
	ok = *v && strlen(v) <= 128 && strncasecmp(v, "aws:", 4) != 0;

	for (const char *p = v; ok && *p; p++)
		ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		     (*p >= '0' && *p <= '9') || strchr(" +-=._:/@", *p);
	if (!ok) {
		conf_error_at(c, n, "'%s' must be an AWS tag key (1 to 128 letters, digits, blanks and + - = . _ : / @, not starting with aws:), got '%s'",
			      k->name, conf_show(v, tmp, sizeof(tmp)));
		return false;
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(own_tags); i++) {
		if (strcmp(v, own_tags[i]) == 0) {
			conf_error_at(c, n, "'%s' is the tag '%s' gpuburst sets on every instance itself: choose another key",
				      k->name, v);
			return false;
		}
	}
	return true;
}

/* Two cost tags with one key would be one key twice at launch. */
static void cost_tags_post(struct conf_ctx *c, const struct conf_schema *sc,
			   yaml_node_t *map, void *obj, yaml_node_t *const *seen)
{
	const struct gb_conf_cost_tags *t = obj;
	const char *name[] = { "job", "user", "account", "partition" };
	const char *key[] = { t->job, t->user, t->account, t->partition };

	for (size_t i = 1; i < GB_ARRAY_LEN(key); i++) {
		for (size_t j = 0; j < i && key[i]; j++) {
			if (key[j] && strcmp(key[i], key[j]) == 0) {
				conf_error_at(c, SEEN(name[i]) ? SEEN(name[i]) : map,
					      "'%s' and '%s' are both the tag '%s': each cost tag needs a key of its own",
					      name[j], name[i], key[i]);
				return;
			}
		}
	}
}

#define S struct gb_conf_cost_tags
static const struct conf_key cost_tags_keys[] = {
	K_STR("job", job, "gpuburst:job", CF_EMPTY_NULL, .check = check_tag_key),
	K_STR("user", user, "gpuburst:user", CF_EMPTY_NULL, .check = check_tag_key),
	K_STR("account", account, "gpuburst:account", CF_EMPTY_NULL, .check = check_tag_key),
	K_STR("partition", partition, "gpuburst:partition", CF_EMPTY_NULL,
	      .check = check_tag_key),
	K_END
};
#undef S

static const struct conf_schema cost_tags_schema = {
	"policy.cost_tags", cost_tags_keys, sizeof(struct gb_conf_cost_tags), CONF_NO_OFF,
	CONF_NO_OFF, cost_tags_post, NULL
};

/* policy.prefer: a word, or nearest_within(PERCENT) with its argument. */
static void read_prefer(struct conf_ctx *c, const struct conf_key *k,
			yaml_node_t *n, void *obj)
{
	struct gb_conf_policy *p = obj;
	char tmp[CONF_SHOW_MAX + 8];
	const char *s;

	if (n->type != YAML_SCALAR_NODE) {
		conf_error_at(c, n, "'%s' must be a string, got %s", k->name,
			      conf_kind_name(n));
		return;
	}
	s = (const char *)n->data.scalar.value;
	if (conf_has_nul(n)) {
		snprintf(tmp, sizeof(tmp), "'%s'", k->name);
		conf_error_nul(c, n, tmp);
		return;
	}
	if (gb_conf_prefer_parse(s, &p->prefer, &p->prefer_within) == GB_E_OK)
		return;
	conf_error_at(c, n, "'%s' must be one of nearest, cheapest, nearest_within(PERCENT) with PERCENT between 0 and 1000, got '%s'",
		      k->name, conf_show(s, tmp, sizeof(tmp)));
}

#define S struct gb_conf_policy
static const struct conf_key policy_keys[] = {
	K_INT("batch_max", batch_max, "4", 1, 1000),
	K_INT("max_request_nodes", max_request_nodes, "1000", 1, 100000),
	K_MAP("approval_thresholds", approval_thresholds, &threshold_schema),
	K_STRV("allowed_geo_regions", allowed_geo_regions, NULL, 0),
	K_DUR("approval_timeout", approval_timeout, "auto", 1, 30 * DAY, CF_AUTO),
	K_BOOL("manual_resume_needs_approval", manual_resume_needs_approval, "false"),
	K_BOOL("approve_at_submit", approve_at_submit, "true"),
	K_DUR("submit_approval_timeout", submit_approval_timeout, "24h", 60, 30 * DAY, 0),
	K_ENUM("on_approval_expiry", on_approval_expiry, "hold", &conf_enum_held),
	{ .name = "approval_notify", .type = CT_STRV,
	  .off = offsetof(S, approval_notify), .off_n = CONF_NO_OFF,
	  .flags = CF_NONEMPTY, .check = check_notify },
	K_DUR("ice_cooldown", ice_cooldown, "10m", 0, 30 * DAY, 0),
	K_DUR("error_cooldown", error_cooldown, "15m", 1, 30 * DAY, 0),
	K_DUR("error_cooldown_max", error_cooldown_max, "6h", 1, 30 * DAY, 0),
	K_DUR("orphan_timeout", orphan_timeout, "10m", 1, 30 * DAY, 0),
	K_DUR("request_deadline", request_deadline, "1h", 1, 30 * DAY, 0),
	K_DUR("reprobe_window", reprobe_window, "auto", 0, DAY, CF_AUTO),
	K_DUR("offerings_ttl", offerings_ttl, "1h", 0, 30 * DAY, 0),
	K_DUR("capacity_half_life", capacity_half_life, "1h", 1, 30 * DAY, 0),
	K_DUR("capacity_block_margin", capacity_block_margin, "40m", 0, 7 * DAY, 0),
	K_DUR("capacity_block_wait", capacity_block_wait, "5m", 0, DAY, 0),
	K_DUR("reservation_ttl", reservation_ttl, "60s", 0, DAY, 0),
	K_DUR("spot_price_ttl", spot_price_ttl, "1h", 0, DAY, 0),
	/* under a day would prune what cool-downs and resume-fail still read */
	K_DUR("retention", retention, "90d", DAY, 3650 * DAY, CF_OFF),
	/* each must be a family of the catalog in use: conf_check.c */
	K_STRV("allowed_families", allowed_families, "g4dn g5 g5g g6 g6e", CF_NONEMPTY),
	K_DICT("budgets", budgets, n_budgets, &budget_schema),
	K_MAP("cost_tags", cost_tags, &cost_tags_schema),
	/* the zeroed policy is nearest: def is what config keys shows */
	{ .name = "prefer", .type = CT_FUNC, .off_n = CONF_NO_OFF, .def = "nearest",
	  .arg = "string", .func = read_prefer },
	K_END
};
#undef S

static const struct conf_schema policy_schema = {
	"policy", policy_keys, sizeof(struct gb_conf_policy), CONF_NO_OFF,
	CONF_NO_OFF, NULL, NULL
};

/*****************************************************************************
 *  planner: and planner.llm:
 *****************************************************************************/

/*
 * OpenAI and Anthropic have one public endpoint; Bedrock's is per region.
 * Whether temperature was given, and whether the provider takes its value.
 */
static void llm_post(struct conf_ctx *c, const struct conf_schema *sc,
		     yaml_node_t *map, void *obj, yaml_node_t *const *seen)
{
	struct gb_conf_llm *llm = obj;
	char **ep = &llm->endpoint;

	(void)map;
	/* 0 is a temperature: only the key's presence says it is set */
	llm->has_temperature = SEEN("temperature") != NULL;
	/* 0..2 is OpenAI's range; Anthropic's and Bedrock's models take 0..1 */
	if (llm->has_temperature && llm->temperature > 1 &&
	    (llm->provider == GB_LLM_ANTHROPIC || llm->provider == GB_LLM_BEDROCK))
		conf_error_at(c, SEEN("temperature"),
			      "'temperature' must be between 0 and 1 with provider %s, got %g",
			      gb_conf_llm_provider_name(llm->provider), llm->temperature);
	if (*ep)
		return;
	if (llm->provider == GB_LLM_OPENAI)
		*ep = strdup("https://api.openai.com");
	else if (llm->provider == GB_LLM_ANTHROPIC)
		*ep = strdup("https://api.anthropic.com");
	else
		return;
	if (!*ep)
		conf_nomem(c);
}

#define S struct gb_conf_llm
static const struct conf_key llm_keys[] = {
	K_ENUM("provider", provider, NULL, &conf_enum_llm),
	K_URL("endpoint", endpoint),
	K_STR("model", model, NULL, 0),
	K_STR("region", region, NULL, 0),
	K_PATH("api_key_file", api_key_file, NULL, 0),
	K_DUR("timeout", timeout, "5s", 1, HOUR, 0),
	K_INT("max_tokens", max_tokens, "1024", 1, 100000),
	K_INT("max_calls", max_calls, "3", 1, 10),
	K_NUM("temperature", temperature, 0, 2),
	K_END
};
#undef S

static const struct conf_schema llm_schema = {
	"planner.llm", llm_keys, sizeof(struct gb_conf_llm), CONF_NO_OFF,
	CONF_NO_OFF, llm_post, NULL
};

static void planner_post(struct conf_ctx *c, const struct conf_schema *sc,
			 yaml_node_t *map, void *obj, yaml_node_t *const *seen)
{
	struct gb_conf_planner *p = obj;
	yaml_node_t *at = SEEN("llm") ? SEEN("llm") : map;

	if (p->kind != GB_PLANNER_LLM)
		return;
	if (p->llm.provider == GB_LLM_NONE)
		conf_error_at(c, at, "planner kind llm needs llm.provider (one of openai, bedrock, anthropic)");
	if (!p->llm.model)
		conf_error_at(c, at, "planner kind llm needs llm.model");
	if (p->llm.provider == GB_LLM_BEDROCK && !p->llm.region)
		conf_error_at(c, at, "llm provider bedrock needs llm.region (the signing region)");
}

#define S struct gb_conf_planner
static const struct conf_key planner_keys[] = {
	K_ENUM("kind", kind, "heuristic", &conf_enum_planner),
	K_MAP("llm", llm, &llm_schema),
	K_END
};
#undef S

static const struct conf_schema planner_schema = {
	"planner", planner_keys, sizeof(struct gb_conf_planner), CONF_NO_OFF,
	CONF_NO_OFF, planner_post, NULL
};

/*****************************************************************************
 *  admins: and the top level
 *****************************************************************************/

#define S struct gb_conf_admins
static const struct conf_key admins_keys[] = {
	K_STRV("users", users, NULL, 0),
	K_STR("group", group, NULL, 0),
	K_END
};
#undef S

static const struct conf_schema admins_schema = {
	"admins", admins_keys, sizeof(struct gb_conf_admins), CONF_NO_OFF,
	CONF_NO_OFF, NULL, NULL
};

/*****************************************************************************
 *  job_submit:
 *****************************************************************************/

#define S struct gb_conf_job_submit
static const struct conf_key job_submit_keys[] = {
	K_BOOL("route_gpu_jobs", route_gpu_jobs, "true"),
	K_END
};
#undef S

static const struct conf_schema job_submit_schema = {
	"job_submit", job_submit_keys, sizeof(struct gb_conf_job_submit),
	CONF_NO_OFF, CONF_NO_OFF, NULL, NULL
};

#define S struct gb_conf
static const struct conf_key top_keys[] = {
	K_STR("cluster_name", cluster_name, NULL, CF_REQUIRED,
	      .check = check_cluster_name),
	K_ENUM("environment", environment, "dev", &conf_enum_env),
	K_PATH("state_dir", state_dir, GB_STATE_DIR, 0),
	K_MAP("log", log, &log_schema),
	K_MAP("metrics", metrics, &metrics_schema),
	K_MAP("cloud", cloud, &cloud_schema),
	K_LIST("regions", regions, n_regions, &region_schema),
	K_DICT("fallback_groups", groups, n_groups, &group_schema),
	K_LIST("nodesets", nodesets, n_nodesets, &nodeset_schema),
	K_MAP("policy", policy, &policy_schema),
	K_MAP("planner", planner, &planner_schema),
	K_MAP("admins", admins, &admins_schema),
	K_MAP("job_submit", job_submit, &job_submit_schema),
	K_END
};
#undef S

const struct conf_schema conf_schema_top = {
	"the top level", top_keys, sizeof(struct gb_conf), CONF_NO_OFF,
	CONF_NO_OFF, NULL, NULL
};
