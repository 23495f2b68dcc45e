/* SPDX-License-Identifier: MIT */
/*
 * The change-gated file operations (fs.c): each counts as one change
 * through the failpoint (ln_agent_change: a dry run, a spent budget or a
 * closed session stops it there), then goes to the ops table of the node
 * or of the fixture (a->fs). PATH arguments are node paths (without the
 * root). 0, or negative with the reason in err.
 */
#ifndef LN_AGENT_FS_H
#define LN_AGENT_FS_H

#include <stddef.h>
#include <sys/types.h>

struct ln_agent;
struct ln_buf;

int ln_fs_mkdir(struct ln_agent *a, const char *path, struct ln_buf *err);
int ln_fs_rmdir(struct ln_agent *a, const char *path, struct ln_buf *err);
/* A link at linkpath pointing to the node path target. */
int ln_fs_symlink(struct ln_agent *a, const char *target, const char *linkpath,
		  struct ln_buf *err);
int ln_fs_unlink(struct ln_agent *a, const char *path, struct ln_buf *err);
int ln_fs_write_attr(struct ln_agent *a, const char *path, const char *val, struct ln_buf *err);
/* Replace the regular file at path atomically (temp file, fsync, rename). */
int ln_fs_write_file(struct ln_agent *a, const char *path, const char *data, size_t len,
		     mode_t mode, struct ln_buf *err);

#endif
