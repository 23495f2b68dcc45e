/* SPDX-License-Identifier: MIT */
/*
 * Files and directories the agent creates outside configfs (hostfiles,
 * backing files, the directories made for them, the state file and the
 * lock), reached from the root one component at a time with O_NOFOLLOW, so
 * a symbolic link anywhere on the way (a linked /etc/llmnet, a linked
 * /var/lib/nvmet) is refused instead of followed, on a real node and under
 * --root alike. A link is refused with "'PATH' is a symbolic link; llmnet
 * does not follow links"; every PATH is a node path (without the root).
 */
#ifndef LN_AGENT_PATHS_H
#define LN_AGENT_PATHS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct ln_agent;
struct ln_buf;

/* What is at path, without following a link: 0 with st filled, -ENOENT
 * when it or a directory above it is missing (err untouched), -ELOOP when
 * path or a directory above it is a link, other negative errors; both
 * with the reason in err. */
int ln_path_lstat(const struct ln_agent *a, const char *path, struct stat *st,
		  struct ln_buf *err);
/* Read a regular file (never through a link); 0 or negative with err. */
int ln_path_read(const struct ln_agent *a, const char *path, struct ln_buf *out,
		 struct ln_buf *err);

/* The changes below count as one change each (the failpoint) and refuse
 * a link on the way; 0 or negative with the reason in err. */

/* Replace path atomically: temp file, fsync, rename, fsync the directory. */
int ln_path_write(struct ln_agent *a, const char *path, const char *data, size_t len,
		  mode_t mode, struct ln_buf *err);
/* Create a sparse file of size bytes, mode 0600; an existing file (O_EXCL)
 * is never truncated or resized. */
int ln_path_create_sparse(struct ln_agent *a, const char *path, uint64_t size,
			  struct ln_buf *err);
/* Remove a regular file; a missing one is 0. */
int ln_path_remove(struct ln_agent *a, const char *path, struct ln_buf *err);
/* Make one directory (mode 0755, its parent must exist) / remove an empty one. */
int ln_path_mkdir(struct ln_agent *a, const char *path, struct ln_buf *err);
int ln_path_rmdir(struct ln_agent *a, const char *path, struct ln_buf *err);

/* Open the directory dir to read it, without following a link on the way
 * or at dir itself: the fd, -ENOENT when something is missing (err
 * untouched), -ELOOP or another negative error with the reason in err. */
int ln_path_open_dir(const struct ln_agent *a, const char *dir, struct ln_buf *err);

/* Open the agent's own directory dir, creating what is missing with mode
 * (not a counted change: the state's and the lock's directories), each
 * directory checked as ln_path_check_dirs() does; the fd or negative with
 * err. */
int ln_path_open_own_dir(const struct ln_agent *a, const char *dir, mode_t mode,
			 struct ln_buf *err);
/* Every directory on the way to path (below the root, up to the first
 * missing one) is root's (or the agent's own user's: root on a node) and
 * writable by no one else, so nobody else can swap what llmnet writes
 * there; 0, or -EPERM with "'DIR' is owned by uid N, not root" or "'DIR'
 * is writable by group or others (mode M)" in err, -ELOOP for a link. */
int ln_path_check_dirs(const struct ln_agent *a, const char *path, struct ln_buf *err);

#endif
