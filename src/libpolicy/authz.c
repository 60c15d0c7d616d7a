/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * authz.c - who may decide approvals and terminate instances
 *
 * Judged by the REAL uid: gpuburstctl may be installed set-uid SlurmUser so
 * that administrators can write the state file, and then the effective
 * uid says nothing about the person.
 */
#include "config.h"

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gb_policy.h"

#define MAX_GROUPS 4096

static bool in_group(const char *user, gid_t primary, const char *group)
{
	struct group *gr = getgrnam(group);
	gid_t *groups = NULL;
	int n = 64;
	bool member = false;

	if (!gr)
		return false;
	if (primary == gr->gr_gid)
		return true;
	for (int tries = 0; tries < 8 && !member; tries++) {
		gid_t *grown = realloc(groups, (size_t)n * sizeof(*groups));
		int want = n;

		if (!grown)
			break;
		groups = grown;
		if (getgrouplist(user, primary, groups, &want) >= 0) {
			for (int i = 0; i < want; i++)
				member = member || groups[i] == gr->gr_gid;
			break;
		}
		if (want <= n || want > MAX_GROUPS)
			break;
		n = want;
	}
	free(groups);
	return member;
}

static bool listed(const struct gb_conf *conf, const char *name, uid_t uid)
{
	char num[32];

	snprintf(num, sizeof(num), "#%lu", (unsigned long)uid);
	for (size_t i = 0; i < conf->admins.n_users; i++)
		if (strcmp(conf->admins.users[i], num) == 0 ||
		    (name && strcmp(conf->admins.users[i], name) == 0))
			return true;
	return false;
}

gb_err_t gb_policy_authorize(const struct gb_conf *conf, uid_t uid,
			     const char *slurm_user,
			     struct gb_policy_actor *a, gb_error_t *err)
{
	struct gb_policy_actor local;
	struct passwd *pw;
	bool known, slurm = false;
	gid_t gid = 0;

	if (!a)
		a = &local;
	memset(a, 0, sizeof(*a));
	a->uid = uid;
	/* getpw* share one static buffer: copy before the next call */
	pw = getpwuid(uid);
	known = pw != NULL;
	if (known) {
		snprintf(a->name, sizeof(a->name), "%s", pw->pw_name);
		gid = pw->pw_gid;
	} else {
		snprintf(a->name, sizeof(a->name), "#%lu", (unsigned long)uid);
	}
	if (slurm_user && (pw = getpwnam(slurm_user)))
		slurm = pw->pw_uid == uid;
	if (uid == 0)
		a->as = "root";
	else if (slurm)
		a->as = "SlurmUser";
	else if (listed(conf, known ? a->name : NULL, uid))
		a->as = "admins.users";
	else if (conf->admins.group && known &&
		 in_group(a->name, gid, conf->admins.group))
		a->as = "admins.group";
	if (a->as)
		return GB_E_OK;
	return gb_errorf(err, GB_E_PERM,
			 "user %s (uid %lu) may not approve, deny or terminate: only root, the SlurmUser (%s), admins.users and members of admins.group (%s) may",
			 a->name, (unsigned long)uid,
			 slurm_user ? slurm_user : "unknown",
			 conf->admins.group ? conf->admins.group : "none set");
}
