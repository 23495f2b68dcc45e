/* SPDX-License-Identifier: MIT */
/*
 * Whole-file reads and atomic writes. A write goes to a temporary file in
 * the same directory, is fsync'd, renamed over the target, and the
 * directory is fsync'd, so a crash leaves either the old or the new file.
 */
#ifndef LN_FILEIO_H
#define LN_FILEIO_H

#include <sys/types.h>

#include "buf.h"

/* Append the file's contents to out. Returns 0 or -errno (message in err). */
int ln_file_read(const char *path, struct ln_buf *out, struct ln_buf *err);
/* The same from an open fd, read to its end (path names it in messages). */
int ln_fd_read(int fd, const char *path, struct ln_buf *out, struct ln_buf *err);

/* Write all of len bytes to fd, retrying short writes and EINTR; 0 or -errno. */
int ln_write_all(int fd, const char *p, size_t len);

/* Replace path with data atomically, with the given mode. */
int ln_file_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
			 struct ln_buf *err);

/* mkdir -p with mode for every directory it creates. */
int ln_mkdir_p(const char *path, mode_t mode, struct ln_buf *err);

/* Call fn on each ancestor of path, then on path itself ("/a", "/a/b",
 * "/a/b/c"), with the prefix's length; the first negative return stops
 * the walk and is returned. -ENAMETOOLONG (fn never called) when path is
 * PATH_MAX or longer. */
int ln_path_each_prefix(const char *path, int (*fn)(const char *prefix, size_t len, void *ctx),
			void *ctx);

#endif
