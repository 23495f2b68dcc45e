/* SPDX-License-Identifier: MIT */
/*
 * The change-gated file operations (fs.h): the failpoint first, then the
 * ops table, so no change reaches the node or the fixture uncounted.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/kernel/fs.h"
#include "agents/agent/kernel/read.h"
#include "common/fileio.h"

static int change2(struct ln_agent *a, const char *verb, const char *path)
{
	char what[PATH_MAX + 32];

	snprintf(what, sizeof(what), "%s %s", verb, path);
	return ln_agent_change(a, what);
}

int ln_fs_mkdir(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	int r = change2(a, "mkdir", path);

	return r < 0 ? r : a->fs->mkdir(a, path, err);
}

int ln_fs_rmdir(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	int r = change2(a, "rmdir", path);

	return r < 0 ? r : a->fs->rmdir(a, path, err);
}

int ln_fs_symlink(struct ln_agent *a, const char *target, const char *linkpath,
		  struct ln_buf *err)
{
	int r = change2(a, "symlink", linkpath);

	return r < 0 ? r : a->fs->symlink(a, target, linkpath, err);
}

int ln_fs_unlink(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	int r = change2(a, "unlink", path);

	return r < 0 ? r : a->fs->unlink(a, path, err);
}

int ln_fs_write_attr(struct ln_agent *a, const char *path, const char *val, struct ln_buf *err)
{
	int r = change2(a, "write", path);

	return r < 0 ? r : a->fs->write_attr(a, path, val, err);
}

int ln_fs_write_file(struct ln_agent *a, const char *path, const char *data, size_t len,
		     mode_t mode, struct ln_buf *err)
{
	char p[PATH_MAX];
	int r = change2(a, "write file", path);

	if (r < 0)
		return r;
	if (ln_agent_path(a, path, p) < 0) {
		ln_buf_addf(err, "path too long: '%s'", path);
		return -ENAMETOOLONG;
	}
	return ln_file_write_atomic(p, data, len, mode, err);
}
