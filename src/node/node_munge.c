/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * node_munge.c - `gpuburst-node munge-key`: the sealed munge key of the
 * user data, opened and written where munged reads it
 *
 * Run once at boot, before munged (gpuburst-munge-key.service): GET
 * user-data from IMDSv2, the first gbseal1: text in it (gb_seal_find),
 * opened with munge.sealed_with, written to munge.key by a temporary file
 * in the same directory (mode 0400, fsync, rename, the directory synced),
 * so munged never sees half a key.  The key is owned by the owner and
 * group of its directory (munge's /etc/munge is munge:munge), or by the
 * munge user and its group when that directory is root's.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gb_imds.h"
#include "gb_log.h"
#include "gb_seal.h"
#include "gb_util.h"
#include "node_int.h"

#define MUNGE_KEY_MIN 32	/* munge's own limits */
#define MUNGE_KEY_MAX 1024
#define PRIVKEY_MAX GB_SEAL_KEY_FILE_MAX
#define MUNGE_USER "munge"

/* The private key: a regular file that neither group nor others may use. */
static gb_err_t privkey_check(const char *path, gb_error_t *err)
{
	struct stat st;
	gb_error_t e;
	gb_err_t rc;
	int fd;

	if ((rc = gb_file_open(path, PRIVKEY_MAX, &fd, NULL, &e)))
		return gb_errorf(err, rc, "munge.sealed_with: %s", e.text);
	if (fstat(fd, &st) != 0)
		rc = gb_errorf(err, GB_E_IO, "munge.sealed_with %s: %s", path, strerror(errno));
	else if (st.st_mode & 077)
		rc = gb_errorf(err, GB_E_PERM,
			       "munge.sealed_with %s: mode %04o lets group or others at the private key (chmod 0400)",
			       path, (unsigned)(st.st_mode & 07777));
	close(fd);
	return rc;
}

/*
 * The directory of [path] into [dir] of [n] bytes.  RET GB_E_OK or
 * GB_E_INVALID (too long).
 */
static gb_err_t dir_of(const char *path, char *dir, size_t n)
{
	const char *slash = strrchr(path, '/');
	int len;

	if (!slash)
		len = snprintf(dir, n, ".");
	else if (slash == path)
		len = snprintf(dir, n, "/");
	else
		len = snprintf(dir, n, "%.*s", (int)(slash - path), path);
	return len < 0 || (size_t)len >= n ? GB_E_INVALID : GB_E_OK;
}

/*
 * Who owns the key: the owner and group of [dir], or the munge user and
 * its group when [dir] is root's and that user exists (else root).
 */
static gb_err_t key_owner(const char *dir, uid_t *uid, gid_t *gid, gb_error_t *err)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	struct stat st;

	if (stat(dir, &st) != 0)
		return gb_errorf(err, errno == ENOENT ? GB_E_NOTFOUND : GB_E_IO,
				 "munge key directory %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return gb_errorf(err, GB_E_IO, "munge key directory %s: not a directory", dir);
	*uid = st.st_uid;
	*gid = st.st_gid;
	if (st.st_uid == 0 && getpwnam_r(MUNGE_USER, &pw, buf, sizeof(buf), &res) == 0 && res) {
		*uid = pw.pw_uid;
		*gid = pw.pw_gid;
	}
	return GB_E_OK;
}

/*
 * Write the [n] bytes [key] to [path]: a temporary file next to it, mode
 * 0400, owned as key_owner() says, synced, renamed over [path], the
 * directory synced.  Nothing is left behind on failure.
 */
static gb_err_t key_write(const char *path, const unsigned char *key, size_t n,
			  uid_t *uid, gid_t *gid, gb_error_t *err)
{
	char dir[PATH_MAX], tmp[PATH_MAX];
	bool made = false;
	int fd = -1, dfd, len;
	gb_err_t rc;

	len = snprintf(tmp, sizeof(tmp), "%s.gpuburst.XXXXXX", path);
	if (len < 0 || (size_t)len >= sizeof(tmp) || dir_of(path, dir, sizeof(dir)))
		return gb_errorf(err, GB_E_INVALID, "munge key %s: path too long", path);
	if ((rc = key_owner(dir, uid, gid, err)))
		return rc;
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0)
		return gb_errorf(err, GB_E_IO, "munge key: cannot create a file in %s: %s", dir,
				 strerror(errno));
	made = true;
	if (fchmod(fd, 0400) != 0 || fchown(fd, *uid, *gid) != 0) {
		rc = gb_errorf(err, GB_E_PERM, "munge key %s: cannot make it mode 0400, owner %lu:%lu: %s",
			       tmp, (unsigned long)*uid, (unsigned long)*gid, strerror(errno));
		goto out;
	}
	if (gb_write_all(fd, key, n) || fsync(fd) != 0) {
		rc = gb_errorf(err, GB_E_IO, "munge key %s: cannot write: %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		rc = gb_errorf(err, GB_E_IO, "munge key %s: cannot write: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		rc = gb_errorf(err, GB_E_IO, "munge key: cannot rename %s to %s: %s", tmp, path,
			       strerror(errno));
		goto out;
	}
	made = false;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || fsync(dfd) != 0)
		rc = gb_errorf(err, GB_E_IO, "munge key %s: cannot sync %s: %s", path, dir,
			       strerror(errno));
	if (dfd >= 0)
		close(dfd);
out:
	if (fd >= 0)
		close(fd);
	if (made)
		unlink(tmp);
	return rc;
}

/* The user data from IMDS.  OUT *ud NEW (wipe, free), *len. */
static gb_err_t user_data(const struct gb_node_conf *conf, char **ud, size_t *len,
			  gb_error_t *err)
{
	struct gb_imds_opts io = { 0 };
	gb_imds_t *m = NULL;
	gb_err_t rc;

	io.endpoint = conf->imds.endpoint;
	io.local_address = conf->imds.source_address;
	io.timeout_ms = (long)(conf->imds.timeout * 1000);
	if ((rc = gb_imds_create(&io, &m, err)))
		return rc;
	rc = gb_imds_get(m, "user-data", ud, len, err);
	if (rc == GB_E_NOTFOUND)
		rc = gb_errorf(err, GB_E_NOTFOUND,
			       "the instance has no user data (IMDS user-data: 404), so no sealed munge key");
	gb_imds_destroy(m);
	return rc;
}

gb_err_t node_munge_key(const struct gb_node_conf *conf, gb_error_t *err)
{
	const char *priv = conf->munge.sealed_with, *tok;
	unsigned char *key = NULL;
	size_t len = 0, tok_n = 0, key_n = 0;
	char *ud = NULL;
	uid_t uid = 0;
	gid_t gid = 0;
	gb_err_t rc;

	if (!priv)
		return gb_errorf(err, GB_E_CONFIG,
				 "munge-key: munge.sealed_with is not set in %s (the private key that opens the sealed munge key)",
				 conf->path);
	if ((rc = privkey_check(priv, err)) || (rc = user_data(conf, &ud, &len, err)))
		goto out;
	if (!gb_seal_find(ud, len, &tok, &tok_n)) {
		rc = gb_errorf(err, GB_E_NOTFOUND,
			       "user data: no %s text (the sealed munge key: {munge_key} in the region's user_data, with cloud.munge_key)",
			       GB_SEAL_PREFIX);
		goto out;
	}
	if ((rc = gb_seal_open(priv, tok, tok_n, &key, &key_n, err))) {
		gb_error_t e = *err;

		gb_errorf(err, rc, "the sealed munge key of the user data, with %s: %s", priv,
			  e.text);
		goto out;
	}
	if (key_n < MUNGE_KEY_MIN || key_n > MUNGE_KEY_MAX) {
		rc = gb_errorf(err, GB_E_INVALID,
			       "the sealed munge key has %zu bytes: munge takes %d to %d", key_n,
			       MUNGE_KEY_MIN, MUNGE_KEY_MAX);
		goto out;
	}
	if ((rc = key_write(conf->munge.key, key, key_n, &uid, &gid, err)))
		goto out;
	gb_log_notice("munge_key_written path=%s bytes=%zu owner=%lu:%lu mode=0400",
		      GB_LOG_Q(conf->munge.key), key_n, (unsigned long)uid, (unsigned long)gid);
out:
	gb_seal_free(key, key_n);
	if (ud)
		gb_memzero(ud, len);
	free(ud);
	return rc;
}
