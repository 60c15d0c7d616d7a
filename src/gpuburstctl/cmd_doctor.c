/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_doctor.c - gpuburstctl doctor: is this installation able to burst?
 *
 * One line per check, "ok NAME: detail" or "FAIL NAME: detail"; the exit
 * status is the error code of the first failed check (0 when all pass).
 * Secrets are never printed: credentials are reported by their source,
 * the proxy with its password as "***".
 * Network: only the configured EC2 endpoints (short timeouts, no
 * retries), through cloud.proxy as the programs reach them (never the
 * proxy environment variables): per region one signed
 * DescribeAvailabilityZones, then per nodeset that may launch there and
 * per subnet one RunInstances with DryRun=true and the launch's own
 * parameters (nothing is launched); and slurmctld through libslurm
 * (SLURM_CONF required, never configless).
 *
 * The regions are checked in parallel, one thread each (at most
 * DOCTOR_REGION_THREADS at a time); each keeps its lines until every
 * region before it in the configuration is done, so the output is in
 * configuration order whatever answers first.  On a terminal, stderr shows
 * how many regions are done while doctor waits.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"
#include "gb_creds.h"
#include "gb_ec2.h"
#include "gb_hostlist.h"
#include "gb_orch.h"
#include "gb_plan.h"
#include "gb_slurm.h"
#include "gb_slurmconf.h"
#include "gb_spawn.h"
#include "gb_util.h"

#define DOCTOR_CONNECT_MS 3000
#define DOCTOR_TIMEOUT_MS 5000
/* What ResumeTimeout must leave after the approval wait: a GPU instance
 * takes minutes to launch, boot and register its slurmd. */
#define DOCTOR_BOOT_MIN_S 120
#define DOCTOR_SLURM_TIMEOUT_S 120.0	/* the libslurm child (MessageTimeout x calls) */
#define DOCTOR_SLURM_OUTPUT_MAX (1u << 20)
#define DOCTOR_REGION_THREADS 8	/* regions checked at once */
#define DOCTOR_REQUEST_ID "doctor"	/* gpuburst:request of the dry runs */

struct doctor {
	struct ctl *ctl;
	FILE *pipe;		/* in the Slurm child: report lines go here */
	json_t *checks;
	gb_err_t first;		/* code of the first FAIL */
	size_t n_fail;
};

/* One check's result; the cloud checks also say where and EC2's code. */
struct line {
	char name[160];
	gb_err_t code;
	char *detail;		/* NEW */
	const char *region;	/* BORROWED from the config, or NULL */
	const char *nodeset;
	const char *type;	/* the instance type of a launch check of a
				 * nodeset with several, else NULL */
	char ec2_code[128];	/* "" when none */
};

static void report(struct doctor *d, const struct line *l)
{
	json_t *o;

	if (l->code) {
		d->n_fail++;
		if (!d->first) {
			d->first = l->code;
			ctl_error_note(l->code, "%s: %s", l->name, l->detail);
		}
	}
	if (!d->checks) {
		printf("%-4s %s: %s\n", l->code ? "FAIL" : "ok", l->name, l->detail);
		return;
	}
	o = json_pack("{s:s,s:b,s:s,s:s?}", "name", l->name, "ok", l->code == GB_E_OK,
		      "detail", l->detail, "code", l->code ? gb_err_name(l->code) : NULL);
	if (o && l->region)
		json_object_set_new(o, "region", json_string(l->region));
	if (o && l->nodeset)
		json_object_set_new(o, "nodeset", json_string(l->nodeset));
	if (o && l->type)
		json_object_set_new(o, "instance_type", json_string(l->type));
	if (o && l->ec2_code[0])
		json_object_set_new(o, "ec2_code", json_string(l->ec2_code));
	json_array_append_new(d->checks, o);
}

static void check(struct doctor *d, const char *name, gb_err_t code,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void check(struct doctor *d, const char *name, gb_err_t code,
		  const char *fmt, ...)
{
	char detail[2048];
	struct line l = { .code = code, .detail = detail };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (d->pipe) {
		for (char *p = detail; *p; p++)
			if (*p == '\n' || *p == '\t')
				*p = ' ';
		fprintf(d->pipe, "%s\t%d\t%s\n", name, (int)code, detail);
		return;
	}
	snprintf(l.name, sizeof(l.name), "%s", name);
	report(d, &l);
}

/*****************************************************************************
 *  Files
 *****************************************************************************/

static const char *owner_name(uid_t uid, char *buf, size_t n)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, n, "%s", pw->pw_name);
	else
		snprintf(buf, n, "#%lu", (unsigned long)uid);
	return buf;
}

/* As gb_state_open() judges it: "world-writable", "group-writable" or NULL. */
static const char *too_open(const struct stat *sb)
{
	mode_t mode = sb->st_mode & 07777;

	if (gb_state_mode_safe(mode, sb->st_uid) == mode)
		return NULL;
	return mode & S_IWOTH ? "world-writable" : "group-writable";
}

static void check_state_dir(struct doctor *d, const struct gb_conf *conf,
			    const struct gb_slurmconf *sc)
{
	const char *dir = conf->state_dir;
	struct passwd *su = sc ? getpwnam(sc->slurm_user) : NULL;
	char owner[64];
	struct stat sb;

	if (stat(dir, &sb) < 0) {
		check(d, "state-dir", errno == ENOENT ? GB_E_NOTFOUND : GB_E_IO,
		      "%s: %s (create it owned by the SlurmUser, mode 0750)", dir,
		      strerror(errno));
		return;
	}
	owner_name(sb.st_uid, owner, sizeof(owner));
	if (!S_ISDIR(sb.st_mode))
		check(d, "state-dir", GB_E_CONFIG, "%s is not a directory", dir);
	else if (too_open(&sb))
		check(d, "state-dir", GB_E_PERM, "%s is %s (mode %04o): chmod 0750",
		      dir, too_open(&sb), (unsigned)(sb.st_mode & 07777));
	else if (su && sb.st_uid != su->pw_uid && sb.st_uid != 0)
		check(d, "state-dir", GB_E_PERM,
		      "%s is owned by %s, but the programs run as the SlurmUser %s and write there",
		      dir, owner, sc->slurm_user);
	else if (su && sb.st_uid == 0 && su->pw_uid != 0 && !(sb.st_mode & S_IWGRP))
		check(d, "state-dir", GB_E_PERM,
		      "%s is owned by root and not writable for the SlurmUser %s: chown %s",
		      dir, sc->slurm_user, sc->slurm_user);
	else
		check(d, "state-dir", GB_E_OK, "%s (owner %s, mode %04o)", dir, owner,
		      (unsigned)(sb.st_mode & 07777));
}

static void check_state_file(struct doctor *d, const struct gb_conf *conf)
{
	char path[4096];
	struct stat sb;
	gb_state_t *st = NULL;
	gb_error_t err = { 0 };
	long n = 0, pending = 0;
	gb_err_t rc;

	snprintf(path, sizeof(path), "%s/%s", conf->state_dir, GB_STATE_FILE);
	if (stat(path, &sb) < 0) {
		if (errno == ENOENT)
			check(d, "state-file", GB_E_OK, "%s not created yet (the first program run creates it)",
			      path);
		else
			check(d, "state-file", GB_E_IO, "%s: %s", path, strerror(errno));
		return;
	}
	if (sb.st_mode & S_IROTH) {
		check(d, "state-file", GB_E_PERM, "%s is readable by everyone (mode %04o): chmod 0640",
		      path, (unsigned)(sb.st_mode & 07777));
		return;
	}
	if (too_open(&sb)) {
		check(d, "state-file", GB_E_PERM, "%s is %s (mode %04o): chmod 0640",
		      path, too_open(&sb), (unsigned)(sb.st_mode & 07777));
		return;
	}
	rc = gb_state_open(path, GB_STATE_RDONLY, CTL_STATE_BUSY_MS, &st, &err);
	if (rc == GB_E_OK)
		rc = gb_state_check(st, &err);
	if (rc == GB_E_OK)
		rc = gb_state_request_count(st, -1, &n, &err);
	if (rc == GB_E_OK)
		rc = gb_state_request_count(st, GB_RSTATE_PENDING_APPROVAL, &pending, &err);
	if (rc)
		check(d, "state-file", rc, "%s", err.text);
	else
		check(d, "state-file", GB_E_OK,
		      "%s: schema %d, integrity ok, %ld requests, %ld pending approval",
		      path, gb_state_schema_version(st), n, pending);
	gb_state_close(st);
}

static void check_log(struct doctor *d, const struct gb_conf *conf)
{
	char dir[4096], *slash;
	struct stat sb;

	if (!conf->log.file) {
		check(d, "log", GB_E_OK, "no log file%s", conf->log.syslog ? "; syslog" : " (and no syslog: nothing is logged)");
		return;
	}
	snprintf(dir, sizeof(dir), "%s", conf->log.file);
	if ((slash = strrchr(dir, '/')) && slash != dir)
		*slash = '\0';
	if (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode))
		check(d, "log", GB_E_IO, "directory %s of log.file does not exist", dir);
	else
		check(d, "log", GB_E_OK, "%s%s", conf->log.file, conf->log.syslog ? " and syslog" : "");
}

/*****************************************************************************
 *  Cloud
 *****************************************************************************/

static const char *source_name(enum gb_creds_source s)
{
	switch (s) {
	case GB_CREDS_SRC_EXPLICIT:
		return "the configuration (cloud.credentials)";
	case GB_CREDS_SRC_ENV:
		return "the environment (AWS_ACCESS_KEY_ID)";
	case GB_CREDS_SRC_CREDENTIALS_FILE:
		return "the shared credentials file";
	case GB_CREDS_SRC_CONFIG_FILE:
		return "the shared config file";
	case GB_CREDS_SRC_IMDS:
		return "instance metadata (IMDSv2)";
	case GB_CREDS_SRC_PROCESS:
		return "credential_process";
	case GB_CREDS_SRC_ASSUME_ROLE:
		return "STS AssumeRole";
	case GB_CREDS_SRC_WEB_IDENTITY:
		return "STS AssumeRoleWithWebIdentity";
	default:
		return "nowhere";
	}
}

/*
 * The proxy the programs use, as libcurl takes it (a URL libconf let
 * through but curl refuses fails here, once, not per region).
 */
static void check_proxy(struct doctor *d, const struct gb_conf *conf)
{
	const struct gb_conf_cloud *c = &conf->cloud;
	struct gb_http_opts ho = { 0 };
	struct gb_buf except = GB_BUF_INIT;
	char shown[512];
	gb_error_t err = { 0 };
	gb_http_t *h = NULL;
	gb_err_t rc;

	if (!c->proxy) {
		check(d, "proxy", GB_E_OK,
		      "none: every endpoint is reached directly (the proxy environment variables are ignored)");
		return;
	}
	gb_plan_http_opts(conf, &ho);
	/* a name that is never resolved: creating a client is no request */
	rc = gb_http_create("https://proxy-check.invalid", &ho, &h, &err);
	for (size_t i = 0; i < c->n_no_proxy; i++)
		gb_buf_printf(&except, "%s%s", i ? ", " : "; not for ", c->no_proxy[i]);
	if (rc)
		check(d, "proxy", rc == GB_E_INVALID ? GB_E_CONFIG : rc, "cloud.proxy: %s", err.text);
	else
		check(d, "proxy", GB_E_OK,
		      "%s for every endpoint but loopback ones and instance metadata%s",
		      gb_url_redact(c->proxy, shown, sizeof(shown)), gb_buf_str(&except));
	gb_http_destroy(h);
	gb_buf_free(&except);
}

static gb_creds_t *check_creds(struct doctor *d, const struct gb_conf *conf)
{
	const struct gb_conf_cloud *c = &conf->cloud;
	struct gb_creds_snapshot snap = { 0 };
	gb_creds_t *creds = NULL;
	gb_error_t err = { 0 };
	gb_err_t rc;

	rc = gb_plan_creds_create(conf, &creds, &err);
	if (rc == GB_E_OK)
		rc = gb_creds_get(creds, &snap, &err);
	if (rc) {
		check(d, "credentials", rc, "%s", err.text);
		gb_creds_destroy(creds);
		creds = NULL;
	} else {
		char when[32], exp[48] = "", *how = gb_creds_describe(creds);

		if (snap.expiration > 0)
			snprintf(exp, sizeof(exp), ", expire %s",
				 ctl_time(snap.expiration, when, sizeof(when)));
		check(d, "credentials", GB_E_OK, "found in %s%s%s%s (%s)", source_name(snap.source),
		      c->profile ? ", profile " : "", c->profile ? c->profile : "", exp,
		      how ? how : "?");
		free(how);
	}
	gb_creds_snapshot_clear(&snap);
	return creds;
}

/*
 * The per-region checks run in their own threads and never print: each
 * appends to its region's lines, which the main thread prints in order.
 */
struct region_job {
	const struct gb_conf *conf;
	const struct gb_conf_region *r;
	gb_creds_t *creds;
	const struct gb_conf_nodeset **ns;	/* nodesets that may launch here */
	const char **first_node;		/* ... and the first node of each */
	size_t n_ns;
	struct line *lines;
	size_t n_lines;
	bool lost;				/* a line could not be kept */
	bool done;
};

struct region_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct region_job *jobs;
	size_t n, next, n_done;
	bool tty;			/* stderr is a terminal: show progress */
	bool shown;			/* a progress line is on it */
};

/*
 * One line of region [j]: "region R", or for [nodeset] "launch R NODESET"
 * ("launch R NODESET TYPE" when [type] is given: a nodeset with several).
 */
static void job_line(struct region_job *j, const char *nodeset, const char *type,
		     gb_err_t code, const char *ec2_code, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void job_line(struct region_job *j, const char *nodeset, const char *type,
		     gb_err_t code, const char *ec2_code, const char *fmt, ...)
{
	struct line *v = realloc(j->lines, (j->n_lines + 1) * sizeof(*v));
	struct line *l;
	char detail[2048];
	va_list ap;

	if (!v) {
		j->lost = true;
		return;
	}
	j->lines = v;
	l = &v[j->n_lines++];
	memset(l, 0, sizeof(*l));
	if (nodeset)
		snprintf(l->name, sizeof(l->name), "launch %s %s%s%s", j->r->name, nodeset,
			 type ? " " : "", type ? type : "");
	else
		snprintf(l->name, sizeof(l->name), "region %s", j->r->name);
	l->code = code;
	l->region = j->r->name;
	l->nodeset = nodeset;
	l->type = type;
	snprintf(l->ec2_code, sizeof(l->ec2_code), "%s", ec2_code ? ec2_code : "");
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (!(l->detail = strdup(detail))) {
		j->n_lines--;
		j->lost = true;
	}
}

static bool zone_listed(const struct gb_ec2_az_list *l, const char *name)
{
	for (size_t i = 0; l && i < l->n; i++)
		if (l->v[i].zone_name && strcmp(l->v[i].zone_name, name) == 0)
			return true;
	return false;
}

/* DescribeAvailabilityZones; RET whether the endpoint answered. */
static bool check_zones(struct region_job *j, gb_ec2_t *ec2)
{
	struct gb_ec2_az_list *azs = NULL;
	struct gb_ec2_error ae = { 0 };
	struct gb_buf missing = GB_BUF_INIT;
	gb_error_t err = { 0 };
	double t0 = gb_time_mono();
	gb_err_t rc;

	rc = gb_ec2_describe_availability_zones(ec2, NULL, 0, &azs, &ae, &err);
	if (rc) {
		job_line(j, NULL, NULL, rc, ae.code, "%s: %s", gb_ec2_endpoint(ec2), err.text);
		return false;
	}
	for (size_t i = 0; i < j->r->n_azs; i++)
		if (!zone_listed(azs, j->r->azs[i].name))
			gb_buf_printf(&missing, "%s%s", missing.len ? ", " : "", j->r->azs[i].name);
	if (missing.len)
		job_line(j, NULL, NULL, GB_E_CONFIG, NULL, "%s answered, but has no zone %s",
			 gb_ec2_endpoint(ec2), gb_buf_str(&missing));
	else
		job_line(j, NULL, NULL, GB_E_OK, NULL, "%s answered in %.2f s (%zu zones)%s%s",
			 gb_ec2_endpoint(ec2), gb_time_mono() - t0, azs->n,
			 gb_ec2_proxy(ec2) ? " via proxy " : "",
			 gb_ec2_proxy(ec2) ? gb_ec2_proxy(ec2) : "");
	gb_buf_free(&missing);
	gb_ec2_az_list_free(azs);
	return true;
}

/* What to change when a dry run of [ns] in region [r] fails with [ae]. */
static void launch_fix(const struct gb_ec2_error *ae, const char *r, const char *ns,
		       const char *subnet, char *buf, size_t n)
{
	const char *c = ae->code;

	if (gb_str_has_prefix(c, "InvalidAMIID."))
		snprintf(buf, n, "set the ami of region %s to an image that exists in %s (AMIs are per region)",
			 r, r);
	else if (gb_str_has_prefix(c, "InvalidSubnetID.") || gb_str_has_prefix(c, "InvalidSubnetId."))
		snprintf(buf, n, "subnet %s is not in %s: fix the subnets of its AZ in region %s",
			 subnet, r, r);
	else if (gb_str_has_prefix(c, "InvalidGroup") || gb_str_has_prefix(c, "InvalidSecurityGroup"))
		snprintf(buf, n, "set the security_groups of region %s to groups of %s (in the subnets' VPC)",
			 r, r);
	else if (gb_str_has_prefix(c, "InvalidKeyPair."))
		snprintf(buf, n, "import the key pair into %s or fix the key_name of region %s", r, r);
	else if (strstr(ae->message, "iamInstanceProfile"))
		snprintf(buf, n, "set the iam_profile of region %s to an instance profile of this account", r);
	else if (strstr(ae->message, "InstanceType") || !strcmp(c, "InvalidInstanceType"))
		snprintf(buf, n, "fix the instance_type of nodeset %s", ns);
	else if (!strcmp(c, "OptInRequired"))
		snprintf(buf, n, "enable region %s for the account (an opt-in region), or remove it", r);
	else if (!strcmp(c, "PendingVerification"))
		snprintf(buf, n, "the account is still being verified for %s: wait for AWS, or remove "
			 "the region meanwhile", r);
	else if (ae->cls == GB_EC2_CLASS_AUTH || ae->cls == GB_EC2_CLASS_REGION)
		snprintf(buf, n, "allow these credentials ec2:RunInstances on the image, subnet, security "
			 "group, key pair, volume, network interface and tagged instance resources, and "
			 "iam:PassRole for the instance profile (etc/iam-policy.json); check that no "
			 "SCP denies region %s", r);
	else if (ae->cls == GB_EC2_CLASS_THROTTLE || ae->cls == GB_EC2_CLASS_TRANSIENT)
		snprintf(buf, n, "EC2 was busy or unreachable: run doctor again");
	else
		snprintf(buf, n, "a launch in %s would fail the same way", r);
}

/*
 * RunInstances DryRun of [type] of [ns] in every subnet of the region,
 * with the parameters the orchestrator would send.  An AZ that does not
 * offer the type is no failure: the planner's preflight skips it.
 */
static void check_launch(struct region_job *j, gb_ec2_t *ec2,
			 const struct gb_conf_nodeset *ns, const char *type,
			 const char *node)
{
	struct gb_buf okay = GB_BUF_INIT, skipped = GB_BUF_INIT;
	const struct gb_conf_region *r = j->r;
	struct gb_orch_launch l = { 0 };
	struct gb_ec2_error ae;
	gb_error_t err = { 0 };
	const char *nodes[1] = { node };
	const char *shown = ns->n_instance_types > 1 ? type : NULL;
	char fix[512], *munge_key = NULL;
	bool failed = false;
	gb_err_t rc;

	/* the key a launch would carry: this user must be able to seal it */
	if (r->user_data_munge_key &&
	    (rc = gb_orch_munge_seal(j->conf, DOCTOR_REQUEST_ID, &munge_key, &err))) {
		job_line(j, ns->name, shown, rc, NULL, "%s (fix cloud.munge_key)", err.text);
		return;
	}
	for (size_t a = 0; a < r->n_azs && !failed; a++) {
		for (size_t k = 0; k < r->azs[a].n_subnets && !failed; k++) {
			const char *sn = r->azs[a].subnets[k];

			memset(&ae, 0, sizeof(ae));
			rc = gb_orch_launch_params(j->conf, ns, type, NULL, r->name, sn,
						   DOCTOR_REQUEST_ID, nodes, 1, 1, NULL, munge_key,
						   &l, &err);
			if (rc) {
				job_line(j, ns->name, shown, rc, NULL, "%s (fix the user_data of region %s)",
					 err.text, r->name);
				failed = true;
				break;
			}
			rc = gb_ec2_run_instances_dry_run(ec2, &l.run, &ae, &err);
			if (rc == GB_E_OK) {
				gb_buf_printf(&okay, "%s%s", okay.len ? ", " : "", sn);
			} else if (gb_ec2_class_err(ae.cls) == GB_E_CAPACITY) {
				gb_buf_printf(&skipped, "%s%s (%s)", skipped.len ? ", " : "",
					      r->azs[a].name, ae.code);
			} else {
				launch_fix(&ae, r->name, ns->name, sn, fix, sizeof(fix));
				job_line(j, ns->name, shown, rc, ae.code,
					 "DryRun of %s from %s in subnet %s: %s; fix: %s",
					 type, r->ami, sn, err.text, fix);
				failed = true;
			}
		}
	}
	if (!failed && okay.len)
		job_line(j, ns->name, shown, GB_E_OK, "DryRunOperation",
			 "DryRun of %s from %s accepted in %s%s%s%s", type, r->ami,
			 gb_buf_str(&okay), skipped.len ? "; not offered in " : "",
			 gb_buf_str(&skipped), skipped.len ? ", which the planner skips" : "");
	else if (!failed)
		job_line(j, ns->name, shown, GB_E_OK, NULL,
			 "%s is offered in no AZ of %s (%s): the planner never launches it here",
			 type, r->name, gb_buf_str(&skipped));
	gb_orch_launch_clear(&l);
	free(munge_key);
	gb_buf_free(&okay);
	gb_buf_free(&skipped);
}

/* All traffic ([in]: from, else to) group [self] itself, by a rule of [g]. */
static bool self_rule(const struct gb_ec2_security_group *g, bool in)
{
	const struct gb_ec2_sg_permission *v = in ? g->ingress : g->egress;
	size_t n = in ? g->n_ingress : g->n_egress;

	for (size_t i = 0; i < n; i++) {
		if (!v[i].ip_protocol || strcmp(v[i].ip_protocol, "-1"))
			continue;
		for (size_t k = 0; k < v[i].n_group_ids; k++)
			if (strcmp(v[i].group_ids[k], g->group_id) == 0)
				return true;
		/* egress to anywhere reaches the group as well */
		for (size_t k = 0; !in && k < v[i].n_cidrs; k++)
			if (strcmp(v[i].cidrs[k], "0.0.0.0/0") == 0)
				return true;
	}
	return false;
}

/*
 * EFA needs a security group of the interface to allow all traffic from
 * and to itself (AWS's EFA guide): DescribeSecurityGroups once per region
 * that has a nodeset with efa.
 */
static void check_efa_groups(struct region_job *j, gb_ec2_t *ec2)
{
	const struct gb_conf_region *r = j->r;
	struct gb_ec2_security_group_list *l = NULL;
	struct gb_buf lacking = GB_BUF_INIT, names = GB_BUF_INIT;
	struct gb_ec2_error ae = { 0 };
	gb_error_t err = { 0 };
	bool efa = false, ok = false;
	gb_err_t rc;

	for (size_t i = 0; i < j->n_ns; i++)
		if (j->ns[i]->efa) {
			efa = true;
			gb_buf_printf(&names, "%s%s", names.len ? ", " : "", j->ns[i]->name);
		}
	if (!efa)
		goto out;
	if (!r->n_security_groups) {
		job_line(j, NULL, NULL, GB_E_CONFIG, NULL, "efa (nodeset %s) needs security_groups in "
			 "region %s: the VPC's default group has no rule for EFA traffic",
			 gb_buf_str(&names), r->name);
		goto out;
	}
	rc = gb_ec2_describe_security_groups(ec2, (const char *const *)r->security_groups,
					     r->n_security_groups, &l, &ae, &err);
	if (rc) {
		job_line(j, NULL, NULL, rc, ae.code, "efa: DescribeSecurityGroups in %s: %s", r->name,
			 err.text);
		goto out;
	}
	for (size_t i = 0; i < l->n; i++) {
		if (self_rule(&l->v[i], true) && self_rule(&l->v[i], false))
			ok = true;
		else
			gb_buf_printf(&lacking, "%s%s", lacking.len ? ", " : "", l->v[i].group_id);
	}
	if (ok)
		job_line(j, NULL, NULL, GB_E_OK, NULL, "efa: a security group of %s allows all traffic "
			 "from and to itself (nodeset %s)", r->name, gb_buf_str(&names));
	else
		job_line(j, NULL, NULL, GB_E_CONFIG, NULL, "efa (nodeset %s): no security group of region "
			 "%s allows all traffic from and to itself (%s); fix: add to one of them an "
			 "inbound and an outbound rule for all traffic with the group itself as "
			 "source and destination", gb_buf_str(&names), r->name, gb_buf_str(&lacking));
out:
	gb_ec2_security_group_list_free(l);
	gb_buf_free(&lacking);
	gb_buf_free(&names);
}

static void check_region(struct region_job *j)
{
	struct gb_ec2_opts eo = { 0 };
	gb_ec2_t *ec2 = NULL;
	gb_error_t err = { 0 };
	gb_err_t rc;

	if (!j->creds) {
		job_line(j, NULL, NULL, GB_E_AUTH, NULL, "not checked: no credentials");
		return;
	}
	eo.region = j->r->name;
	eo.endpoint = gb_conf_endpoint(j->conf, j->r);
	eo.creds = j->creds;
	eo.http.connect_timeout_ms = DOCTOR_CONNECT_MS;
	eo.http.timeout_ms = DOCTOR_TIMEOUT_MS;
	gb_plan_http_opts(j->conf, &eo.http);
	eo.retry.max_attempts = 1;
	rc = gb_ec2_create(&eo, &ec2, &err);
	if (rc)
		job_line(j, NULL, NULL, rc, NULL, "endpoint: %s", err.text);
	else if (check_zones(j, ec2)) {
		check_efa_groups(j, ec2);
		/* every type of a nodeset: each may be launched */
		for (size_t i = 0; i < j->n_ns; i++) {
			const struct gb_conf_nodeset *ns = j->ns[i];

			if (!j->r->ami) {
				job_line(j, ns->name, NULL, GB_E_CONFIG, NULL,
					 "region %s has no ami, so nodeset %s cannot launch there: set its ami",
					 j->r->name, ns->name);
				continue;
			}
			for (size_t t = 0; t < ns->n_instance_types; t++)
				check_launch(j, ec2, ns, ns->instance_types[t], j->first_node[i]);
		}
	}
	gb_ec2_destroy(ec2);
}

static void *region_worker(void *arg)
{
	struct region_pool *p = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&p->mu);
		i = p->next < p->n ? p->next++ : p->n;
		pthread_mutex_unlock(&p->mu);
		if (i == p->n)
			return NULL;
		check_region(&p->jobs[i]);
		pthread_mutex_lock(&p->mu);
		p->jobs[i].done = true;
		p->n_done++;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
}

/* On a terminal only: "checking 3/5 regions..." on stderr, redrawn; clear: erase it. */
static void progress(struct region_pool *p, bool clear)
{
	if (!p->tty || (clear && !p->shown))
		return;
	if (clear)
		fputs("\r\033[K", stderr);
	else
		fprintf(stderr, "\rchecking %zu/%zu regions...\033[K", p->n_done, p->n);
	p->shown = !clear;
	fflush(stderr);
}

/* Does nodeset [ns] launch in [region]?  Its candidate regions say. */
static bool launches_in(const struct gb_conf *conf, const struct gb_conf_nodeset *ns,
			const char *region)
{
	struct gb_candidates cand = { 0 };
	bool in = false;

	if (gb_plan_candidates(conf, ns->home_region, ns->mode, &cand, NULL) == GB_E_OK)
		for (size_t i = 0; i < cand.n && !in; i++)
			in = strcmp(cand.v[i].region->name, region) == 0;
	gb_plan_candidates_clear(&cand);
	return in;
}

/* The nodesets of each region, with a node name to tag the dry run with. */
static bool jobs_prepare(struct region_job *jobs, const struct gb_conf *conf,
			 gb_creds_t *creds, struct gb_strv *names)
{
	for (size_t i = 0; i < conf->n_nodesets; i++) {
		gb_hostlist_t *hl = NULL;
		struct gb_strv all = { 0 };

		if (gb_hostlist_parse(conf->nodesets[i].nodes, &hl, NULL) == GB_E_OK &&
		    gb_hostlist_expand(hl, gb_hostlist_count(hl), &all, NULL) == GB_E_OK &&
		    all.n)
			gb_strv_add(&names[i], all.v[0]);
		gb_strv_free(&all);
		gb_hostlist_destroy(hl);
	}
	for (size_t r = 0; r < conf->n_regions; r++) {
		struct region_job *j = &jobs[r];

		j->conf = conf;
		j->r = &conf->regions[r];
		j->creds = creds;
		j->ns = calloc(conf->n_nodesets + 1, sizeof(*j->ns));
		j->first_node = calloc(conf->n_nodesets + 1, sizeof(*j->first_node));
		if (!j->ns || !j->first_node)
			return false;
		for (size_t i = 0; i < conf->n_nodesets && j->r->n_azs; i++) {
			if (!names[i].n || !launches_in(conf, &conf->nodesets[i], j->r->name))
				continue;
			j->ns[j->n_ns] = &conf->nodesets[i];
			j->first_node[j->n_ns++] = names[i].v[0];
		}
	}
	return true;
}

static void jobs_free(struct region_job *jobs, size_t n)
{
	for (size_t r = 0; jobs && r < n; r++) {
		for (size_t k = 0; k < jobs[r].n_lines; k++)
			free(jobs[r].lines[k].detail);
		free(jobs[r].lines);
		free(jobs[r].ns);
		free(jobs[r].first_node);
	}
	free(jobs);
}

/* Print region [i]'s lines once it and every region before it are done. */
static void regions_print(struct doctor *d, struct region_pool *p)
{
	for (size_t i = 0; i < p->n; i++) {
		pthread_mutex_lock(&p->mu);
		while (!p->jobs[i].done) {
			progress(p, false);
			pthread_cond_wait(&p->cv, &p->mu);
		}
		pthread_mutex_unlock(&p->mu);
		progress(p, true);	/* before stdout: it may be the same terminal */
		for (size_t k = 0; k < p->jobs[i].n_lines; k++)
			report(d, &p->jobs[i].lines[k]);
		if (p->jobs[i].lost)
			check(d, "region", GB_E_NOMEM, "%s: out of memory, results lost",
			      p->jobs[i].r->name);
		fflush(stdout);
	}
}

static void check_regions(struct doctor *d, const struct gb_conf *conf, gb_creds_t *creds)
{
	size_t n = conf->n_regions, nt = n < DOCTOR_REGION_THREADS ? n : DOCTOR_REGION_THREADS;
	struct region_pool p = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
				 NULL, n, 0, 0, isatty(STDERR_FILENO), false };
	struct gb_strv *names = calloc(conf->n_nodesets + 1, sizeof(*names));
	pthread_t tid[DOCTOR_REGION_THREADS];
	size_t started = 0;

	p.jobs = calloc(n + 1, sizeof(*p.jobs));
	if (!names || !p.jobs || !jobs_prepare(p.jobs, conf, creds, names)) {
		check(d, "regions", GB_E_NOMEM, "out of memory");
		goto out;
	}
	/* libcurl: global initialisation before any thread uses it */
	if (n && gb_http_global_init(NULL) != GB_E_OK)
		nt = 0;
	fflush(stdout);
	for (; started < nt; started++)
		if (pthread_create(&tid[started], NULL, region_worker, &p) != 0)
			break;
	if (started == 0)	/* no thread at all: check them here, in order */
		region_worker(&p);
	regions_print(d, &p);
	for (size_t t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
out:
	jobs_free(p.jobs, n);
	for (size_t i = 0; names && i < conf->n_nodesets; i++)
		gb_strv_free(&names[i]);
	free(names);
}

/*****************************************************************************
 *  Slurm
 *****************************************************************************/

static void check_program(struct doctor *d, const char *key, const char *value,
			  const char *want)
{
	char name[64];
	struct stat sb;
	const char *base = value ? strrchr(value, '/') : NULL;

	snprintf(name, sizeof(name), "slurm %s", key);
	if (!value)
		check(d, name, GB_E_CONFIG, "not set in slurm.conf (want .../%s)", want);
	else if (value[0] != '/')
		check(d, name, GB_E_CONFIG, "%s is not an absolute path (slurmctld has no PATH)", value);
	else if (stat(value, &sb) < 0)
		check(d, name, GB_E_NOTFOUND, "%s: %s", value, strerror(errno));
	else if (!(sb.st_mode & S_IXUSR))
		check(d, name, GB_E_PERM, "%s is not executable", value);
	else if (sb.st_mode & (S_IWGRP | S_IWOTH))
		check(d, name, GB_E_PERM, "%s is group- or world-writable: slurmctld refuses to run it",
		      value);
	else if (!base || strcmp(base + 1, want) != 0)
		check(d, name, GB_E_CONFIG, "%s is not gpuburst's %s", value, want);
	else
		check(d, name, GB_E_OK, "%s", value);
}

static void check_timeouts(struct doctor *d, const struct gb_conf *conf,
			   const struct gb_slurmconf *sc)
{
	double rt = sc->resume_timeout;
	double at = gb_policy_approval_timeout(conf, rt, -1);

	if (at >= rt)
		check(d, "approval-timeout", GB_E_CONFIG,
		      "approvals may wait %.0f s but Slurm fails nodes after ResumeTimeout %.0f s: keep policy.approval_timeout well below it (auto: half)",
		      at, rt);
	else
		check(d, "approval-timeout", GB_E_OK,
		      "approvals wait at most %.0f s of ResumeTimeout %.0f s, leaving %.0f s to launch and boot",
		      at, rt, rt - at);
}

/* Every nodeset node exists in Slurm as a CLOUD node. */
static void check_nodes(struct doctor *d, const struct gb_conf *conf,
			const struct gb_slurm_node_list *sl)
{
	struct gb_buf unknown = GB_BUF_INIT, notcloud = GB_BUF_INIT;
	size_t total = 0, nu = 0, nc = 0;

	for (size_t i = 0; i < conf->n_nodesets; i++) {
		gb_hostlist_t *hl = NULL;
		struct gb_strv names = { 0 };

		if (gb_hostlist_parse(conf->nodesets[i].nodes, &hl, NULL) ||
		    gb_hostlist_expand(hl, 100000, &names, NULL)) {
			gb_hostlist_destroy(hl);
			continue;
		}
		for (size_t j = 0; j < names.n; j++) {
			const struct gb_slurm_node *sn = gb_slurm_node_find(sl, names.v[j]);

			total++;
			if (!sn && nu++ < 10)
				gb_buf_printf(&unknown, "%s%s", unknown.len ? " " : "", names.v[j]);
			else if (sn && !sn->cloud && nc++ < 10)
				gb_buf_printf(&notcloud, "%s%s", notcloud.len ? " " : "", names.v[j]);
		}
		gb_strv_free(&names);
		gb_hostlist_destroy(hl);
	}
	if (nu || nc)
		check(d, "slurm nodes", GB_E_CONFIG,
		      "%zu of %zu nodeset nodes unknown to Slurm%s%s%s, %zu not State=CLOUD%s%s%s (gpuburstctl slurm-conf)",
		      nu, total, nu ? " (" : "", gb_buf_str(&unknown), nu ? ")" : "", nc,
		      nc ? " (" : "", gb_buf_str(&notcloud), nc ? ")" : "");
	else
		check(d, "slurm nodes", GB_E_OK, "all %zu nodes of %zu nodesets are CLOUD nodes",
		      total, conf->n_nodesets);
	gb_buf_free(&unknown);
	gb_buf_free(&notcloud);
}

/*****************************************************************************
 *  Power saving as slurmctld runs it: it must reach gpuburst's nodes only
 *****************************************************************************/

#define GLOBAL_SUSPEND "the global SuspendTime"

/* Is [name] a node of a nodeset? */
static bool in_nodeset(const struct gb_conf *conf, const char *name)
{
	for (size_t i = 0; i < conf->n_nodesets; i++) {
		gb_hostlist_t *hl = NULL;
		bool m = gb_hostlist_parse(conf->nodesets[i].nodes, &hl, NULL) == GB_E_OK &&
			 gb_hostlist_match(hl, name);

		gb_hostlist_destroy(hl);
		if (m)
			return true;
	}
	return false;
}

/* Does comma list [list] hold [word]? */
static bool word_in(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p && *p;) {
		size_t l = strcspn(p, ",");

		if (l == n && strncmp(p, word, n) == 0)
			return true;
		p += l + (p[l] == ',');
	}
	return false;
}

/* The partitions' and SuspendExcNodes' host lists, expanded once. */
struct power_sets {
	struct gb_strv exc;
	struct gb_strv *parts;	/* [pw->n_parts] */
};

static void power_sets_free(struct power_sets *ps, size_t n)
{
	gb_strv_free(&ps->exc);
	for (size_t i = 0; ps->parts && i < n; i++)
		gb_strv_free(&ps->parts[i]);
	free(ps->parts);
}

/* Expand hostlist [expr] into [out]; 24.05's "NODES:N" counts as listed. */
static void expand_list(const char *expr, struct gb_strv *out)
{
	struct gb_buf b = GB_BUF_INIT;
	int depth = 0;

	for (const char *p = expr; p && *p; p++) {	/* drop ":N" at the top level */
		if (*p == '[')
			depth++;
		else if (*p == ']')
			depth--;
		if (*p == ':' && depth == 0) {
			while (p[1] && p[1] != ',')
				p++;
			continue;
		}
		gb_buf_putc(&b, *p);
	}
	if (b.len)
		gb_slurm_hostlist_expand(gb_buf_str(&b), 1000000, out, NULL);
	gb_buf_free(&b);
}

/*
 * The SuspendTime that applies to node [name]: the largest of its
 * partitions' (power_save.c), else the global one; -1 when none, or when
 * SuspendExcNodes/SuspendExcParts exclude it.
 */
static long node_suspend_time(const struct gb_slurm_power *pw, const struct power_sets *ps,
			      const char *name, const char **why)
{
	long t = -1;
	bool in_part = false;

	*why = GLOBAL_SUSPEND;
	if (gb_strv_find(&ps->exc, name) >= 0)
		return -1;
	for (size_t i = 0; i < pw->n_parts; i++) {
		const struct gb_slurm_power_part *pp = &pw->parts[i];

		if (gb_strv_find(&ps->parts[i], name) < 0)
			continue;
		if (word_in(pw->suspend_exc_parts, pp->name))
			return -1;
		if (pp->suspend_time >= 0 && pp->suspend_time > t) {
			t = pp->suspend_time;
			*why = pp->name;	/* a partition's */
			in_part = true;
		}
	}
	return in_part ? t : pw->suspend_time;
}

static void check_power_nodes(struct doctor *d, const struct gb_conf *conf,
			      const struct gb_slurm_node_list *sl,
			      const struct gb_slurm_power *pw)
{
	struct power_sets ps = {
		{ 0 }, calloc(pw->n_parts ? pw->n_parts : 1, sizeof(struct gb_strv))
	};
	struct gb_buf nodes = GB_BUF_INIT;
	const char *why = NULL, *w;
	size_t n = 0, site = 0;

	if (!ps.parts) {
		check(d, "power saving", GB_E_NOMEM, "out of memory");
		return;
	}
	expand_list(pw->suspend_exc_nodes, &ps.exc);
	for (size_t i = 0; i < pw->n_parts; i++)
		expand_list(pw->parts[i].nodes, &ps.parts[i]);
	for (size_t i = 0; i < sl->n; i++) {
		const struct gb_slurm_node *sn = &sl->v[i];

		if (sn->cloud || in_nodeset(conf, sn->name))
			continue;
		site++;
		if (node_suspend_time(pw, &ps, sn->name, &w) < 0)
			continue;
		if (n++ < 10)
			gb_buf_printf(&nodes, "%s%s", nodes.len ? " " : "", sn->name);
		why = w;
	}
	if (n)
		check(d, "power saving", GB_E_CONFIG,
		      "Slurm can power down %zu node%s gpuburst does not own (%s%s; %s%s) "
		      "into gpuburst-suspend: set SuspendTime on the gpuburst partitions only, or "
		      "exclude them (SuspendExcParts/SuspendExcNodes; gpuburstctl slurm-conf --merge)",
		      n, n == 1 ? "" : "s", gb_buf_str(&nodes), n > 10 ? " ..." : "",
		      strcmp(why, GLOBAL_SUSPEND) ? "SuspendTime of partition " : "", why);
	else
		check(d, "power saving", GB_E_OK,
		      "reaches no node outside the nodesets (%zu of the site's own checked)", site);
	gb_buf_free(&nodes);
	power_sets_free(&ps, pw->n_parts);
}

static void check_power_params(struct doctor *d, const struct gb_conf *conf,
			       const struct gb_slurm_power *pw)
{
	if (!word_in(pw->slurmctld_params, "idle_on_node_suspend"))
		check(d, "slurmctld parameters", GB_E_CONFIG,
		      "the running SlurmctldParameters (%s) lack idle_on_node_suspend (nodes gpuburst "
		      "sets DOWN would stay DOWN): lost to a later SlurmctldParameters line? "
		      "(gpuburstctl slurm-conf --merge /etc/slurm/slurm.conf)",
		      *pw->slurmctld_params ? pw->slurmctld_params : "none");
	else
		check(d, "slurmctld parameters", GB_E_OK, "%s", pw->slurmctld_params);
	for (size_t i = 0; i < conf->n_nodesets; i++) {
		const char *part = conf->nodesets[i].partition;
		long rt = pw->resume_timeout;
		double at;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(conf->nodesets[j].partition, part) == 0;
		for (size_t j = 0; j < pw->n_parts && !seen; j++)
			if (strcmp(pw->parts[j].name, part) == 0 &&
			    pw->parts[j].resume_timeout >= 0)
				rt = pw->parts[j].resume_timeout;
		if (seen || rt < 0)
			continue;
		at = gb_policy_approval_timeout(conf, (double)rt, -1);
		if ((double)rt - at < DOCTOR_BOOT_MIN_S)
			check(d, "resume timeout", GB_E_CONFIG,
			      "partition %s: ResumeTimeout %ld s leaves %.0f s after the approval wait "
			      "(%.0f s) to launch, boot and register an instance, under %d s: raise "
			      "ResumeTimeout on the partition (gpuburstctl slurm-conf --resume-timeout)",
			      part, rt, (double)rt - at, at, DOCTOR_BOOT_MIN_S);
		else
			check(d, "resume timeout", GB_E_OK,
			      "partition %s: ResumeTimeout %ld s (approval wait %.0f s)", part, rt, at);
	}
}

/*
 * The libslurm checks run in a child: libslurm calls fatal() (exit) on a
 * slurm.conf it cannot use, and doctor must report that, not die of it.
 * The child (gb_spawn_run's fn) writes "NAME<TAB>CODE<TAB>DETAIL" lines to
 * its stdout; its stderr stays the terminal, for libslurm's own message.
 */
struct slurm_probe {
	struct doctor *d;
	const struct gb_conf *conf;
};

static int slurm_child(void *arg)
{
	struct doctor *d = ((struct slurm_probe *)arg)->d;
	const struct gb_conf *conf = ((struct slurm_probe *)arg)->conf;
	struct gb_slurm_node_list *sl = NULL;
	struct gb_slurm_power *pw = NULL;
	char ctld[64], built[32];
	gb_error_t err = { 0 };
	FILE *fp = fdopen(1, "w");

	if (!fp)
		return 1;
	d->pipe = fp;
	if (gb_slurm_init(&err) || gb_slurm_ctl_version(ctld, sizeof(ctld), &err)) {
		check(d, "slurmctld", GB_E_SLURM, "%s", err.text);
		fclose(fp);
		return 0;
	}
	check(d, "slurmctld", GB_E_OK, "answered (Slurm %s)", ctld);
	gb_slurm_built_version(built, sizeof(built));
	/* Slurm loads a plugin only if it was built against its exact version. */
	if (strcmp(built, ctld) != 0)
		check(d, "slurm version", GB_E_SLURM,
		      "gpuburst and job_submit/gpuburst were built against Slurm %s, slurmctld runs %s: rebuild",
		      built, ctld);
	else
		check(d, "slurm version", GB_E_OK, "built against %s, slurmctld runs %s", built, ctld);
	if (gb_slurm_nodes_load(&sl, &err))
		check(d, "slurm nodes", GB_E_SLURM, "%s", err.text);
	else
		check_nodes(d, conf, sl);
	if (sl && gb_slurm_power_load(&pw, &err) == GB_E_OK) {
		check_power_nodes(d, conf, sl, pw);
		check_power_params(d, conf, pw);
	} else if (sl) {
		check(d, "power saving", GB_E_SLURM, "%s", err.text);
	}
	gb_slurm_power_free(pw);
	gb_slurm_node_list_free(sl);
	fclose(fp);
	return 0;
}

/* The child's lines as checks; RET whether there was one. */
static bool slurm_lines(struct doctor *d, char *text)
{
	bool any = false;

	for (char *line = text, *next; line && *line; line = next) {
		char *name = line, *code, *detail;
		long c;

		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		if (!(code = strchr(line, '\t')) || !(detail = strchr(code + 1, '\t')))
			continue;
		*code++ = '\0';
		*detail++ = '\0';
		if (gb_parse_long(code, 0, 125, &c))
			continue;
		check(d, name, (gb_err_t)c, "%s", detail);
		any = true;
	}
	return any;
}

static void slurm_checks(struct doctor *d, const struct gb_conf *conf)
{
	struct slurm_probe probe = { d, conf };
	struct gb_buf out = GB_BUF_INIT;
	struct gb_spawn r = { .fn = slurm_child, .arg = &probe,
			      .timeout = DOCTOR_SLURM_TIMEOUT_S, .out = &out,
			      .out_max = DOCTOR_SLURM_OUTPUT_MAX, .err_inherit = true };
	gb_error_t err = { 0 };
	char *text;
	gb_err_t rc;
	bool any;

	fflush(stdout);
	fflush(stderr);
	rc = gb_spawn_run(&r, &err);
	if (rc == GB_E_IO) {
		check(d, "slurmctld", GB_E_IO, "%s", err.text);
		gb_buf_free(&out);
		return;
	}
	text = gb_buf_steal(&out);
	any = slurm_lines(d, text);
	free(text);
	if (rc == GB_E_TIMEOUT)
		check(d, "slurmctld", GB_E_SLURM, "the libslurm checks %s", err.text);
	else if (!any || r.status != 0)
		check(d, "slurmctld", GB_E_SLURM,
		      "libslurm gave up on the Slurm configuration (exit status %d): see its message above; SLURM_CONF=%s",
		      r.status,
		      getenv(GB_SLURMCONF_ENV) ? getenv(GB_SLURMCONF_ENV) : "(unset)");
}

static void check_slurm(struct doctor *d, const struct gb_conf *conf,
			const struct gb_slurmconf *sc)
{
	if (sc) {
		check_program(d, "ResumeProgram", sc->resume_program, "gpuburst-resume");
		check_program(d, "SuspendProgram", sc->suspend_program, "gpuburst-suspend");
		check_program(d, "ResumeFailProgram", sc->resume_fail_program,
			      "gpuburst-resume-fail");
		check_timeouts(d, conf, sc);
		for (size_t i = 0; i < sc->duplicates.n; i++)
			check(d, "slurm.conf", GB_E_CONFIG,
			      "%s: Slurm uses only the later line (\"specified more than once\"): "
			      "merge them (gpuburstctl slurm-conf --merge %s)",
			      sc->duplicates.v[i], sc->path);
	}
	slurm_checks(d, conf);
}

/*****************************************************************************
 *  The command
 *****************************************************************************/

static const struct option doctor_longopts[] = {
	CTL_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

gb_err_t ctl_cmd_doctor(struct ctl *ctl, int argc, char **argv)
{
	const char *cmd = "doctor", *scpath;
	struct doctor d = { ctl, NULL, NULL, GB_E_OK, 0 };
	struct gb_errlist errs = { 0 };
	struct gb_slurmconf sc = { 0 };
	struct gb_conf *conf = NULL;
	gb_creds_t *creds = NULL;
	gb_error_t err = { 0 };
	bool first = true, have_sc;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, cmd, argc, argv, ":jh", doctor_longopts, &first,
			       &rc)) != -1) {
		if (c == CTL_OPT_DONE)
			return rc;
		return ctl_unimplemented(cmd, c);
	}
	if (optind < argc)
		return ctl_usage(cmd, "unexpected argument \"%s\"", argv[optind]);
	if (ctl->json)
		d.checks = json_array();
	rc = gb_conf_load(gb_conf_path(ctl->conf_path), &conf, &errs, &err);
	if (rc) {
		check(&d, "config", rc, "%s%s", errs.n ? errs.msgs[0] : err.text,
		      errs.n > 1 ? " (and more: gpuburstctl config check)" : "");
		goto out;
	}
	check(&d, "config", GB_E_OK, "%s: cluster %s, environment %s, %zu regions, %zu nodesets, approval threshold %d",
	      conf->path, conf->cluster_name, gb_conf_env_name(conf->environment),
	      conf->n_regions, conf->n_nodesets, gb_conf_threshold(conf));
	scpath = gb_slurmconf_path(!ctl->setid);
	have_sc = gb_slurmconf_read(scpath, &sc, &err) == GB_E_OK;
	if (have_sc)
		check(&d, "slurm.conf", GB_E_OK, "%s: SlurmUser %s, ResumeTimeout %.0f s", scpath,
		      sc.slurm_user, sc.resume_timeout);
	else
		check(&d, "slurm.conf", err.code, "%s", err.text);
	check_state_dir(&d, conf, have_sc ? &sc : NULL);
	check_state_file(&d, conf);
	check_log(&d, conf);
	check_proxy(&d, conf);
	creds = check_creds(&d, conf);
	check_regions(&d, conf, creds);
	check_slurm(&d, conf, have_sc ? &sc : NULL);
out:
	if (ctl->json)
		ctl_json_result(json_pack("{s:b,s:i,s:o}", "ok", d.n_fail == 0,
					  "failed", (int)d.n_fail, "checks", d.checks));
	else if (d.n_fail)
		printf("%zu check%s failed\n", d.n_fail, d.n_fail == 1 ? "" : "s");
	gb_creds_destroy(creds);
	gb_slurmconf_clear(&sc);
	gb_errlist_free(&errs);
	gb_conf_destroy(conf);
	return d.first;
}
