/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_spawn.c - paths in the state directory, starting the worker detached
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gb_prog.h"
#include "gb_spawn.h"
#include "gb_util.h"

void gb_prog_state_path(const struct gb_conf *conf, char *buf, size_t n)
{
	snprintf(buf, n, "%s/%s", conf->state_dir, GB_STATE_FILE);
}

void gb_prog_lock_path(const struct gb_conf *conf, char *buf, size_t n)
{
	snprintf(buf, n, "%s/%s", conf->state_dir, GB_WORKER_LOCK);
}

gb_err_t gb_prog_self_exe(char *buf, size_t n, gb_error_t *err)
{
	ssize_t len = readlink("/proc/self/exe", buf, n - 1);

	if (len <= 0 || (size_t)len >= n - 1)
		return gb_errorf(err, GB_E_IO, "readlink /proc/self/exe: %s",
				 len < 0 ? strerror(errno) : "path too long");
	buf[len] = '\0';
	return GB_E_OK;
}

const char *gb_prog_worker_path(void)
{
	const char *p = getenv(GB_WORKER_ENV);

	return p && *p ? p : GB_WORKER_PATH;
}

gb_err_t gb_prog_start_worker(const char *exe, const char *conf_path,
			      gb_error_t *err)
{
	char *argv[] = { (char *)exe, (char *)"-c", (char *)conf_path, NULL };

	return gb_spawn_detached(argv, err);
}
