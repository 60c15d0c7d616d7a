/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_slurm_release.c - the table of what each Slurm release changed
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_slurm_release.h"

static const char *const what[GB_SLURM_N_CHANGES] = {
#define GB_XX(name, major, minor, text) [GB_SLURM_##name] = text,
	GB_SLURM_CHANGES(GB_XX)
#undef GB_XX
};

char *gb_slurm_change_since(enum gb_slurm_change change, char *buf, size_t n)
{
	unsigned long v = gb_slurm_change_version(change);

	if (!v)
		return NULL;
	snprintf(buf, n, "%lu.%02lu", v >> 16, (v >> 8) & 0xff);
	return buf;
}

const char *gb_slurm_change_what(enum gb_slurm_change change)
{
	return (unsigned)change < GB_SLURM_N_CHANGES ? what[change] : NULL;
}

/* One decimal field of at most 3 digits at *p; advances *p. */
static bool field(const char **p, unsigned long *v)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return false;
	errno = 0;
	*v = strtoul(*p, &end, 10);
	if (errno || end - *p > 3 || *v > 255)
		return false;
	*p = end;
	return true;
}

gb_err_t gb_slurm_version_parse(const char *s, unsigned long *out, gb_error_t *err)
{
	unsigned long major, minor, micro = 0;
	const char *p = s;

	if (!s)
		return gb_errorf(err, GB_E_INVALID, "no Slurm version");
	/* scontrol --version: "slurm 24.11.5"; Debian's: "slurm-wlm 24.11.5" */
	if (strncmp(p, "slurm ", 6) == 0)
		p += 6;
	else if (strncmp(p, "slurm-wlm ", 10) == 0)
		p += 10;
	if (!field(&p, &major) || *p++ != '.' || !field(&p, &minor))
		goto bad;
	if (*p == '.' && (p++, !field(&p, &micro)))
		goto bad;
	/* what may follow: a package revision ("-4+deb13u1"), a newline */
	if (*p && *p != '-' && *p != '\n')
		goto bad;
	*out = GB_SLURM_VERSION(major, minor, micro);
	if (*out < GB_SLURM_VERSION(22, 5, 0))
		return gb_errorf(err, GB_E_INVALID,
				 "Slurm \"%s\" is too old: gpuburst needs 22.05 or later", s);
	return GB_E_OK;
bad:
	return gb_errorf(err, GB_E_INVALID,
			 "bad Slurm version \"%s\" (want MAJOR.MINOR or MAJOR.MINOR.MICRO, "
			 "such as 24.11 or 24.11.5)", s);
}

char *gb_slurm_version_str(unsigned long version, char *buf, size_t n)
{
	snprintf(buf, n, "%lu.%02lu.%lu", version >> 16, (version >> 8) & 0xff,
		 version & 0xff);
	return buf;
}
