// SPDX-License-Identifier: MIT
/*
 * Paths the agent creates, reached without following links (paths.h).
 * openat2 with RESOLVE_NO_SYMLINKS answers in one call where the kernel has
 * it; otherwise, and to name the link when it refuses, the path is walked
 * one component at a time with openat and O_NOFOLLOW from the root's fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef SYS_openat2
#include <linux/openat2.h>
#define HAVE_OPENAT2 1
#endif

#include "agents/agent/core/agent.h"
#include "common/fileio.h"
#include "agents/agent/kernel/fsops.h"
#include "agents/agent/kernel/paths.h"
#include "common/buf.h"

static int refuse_link(struct ln_buf *err, const char *link, const char *path)
{
	if (strcmp(link, path))
		ln_buf_addf(err, "'%s' is a symbolic link; llmnet does not follow links "
			    "(on the way to '%s')", link, path);
	else
		ln_buf_addf(err, "'%s' is a symbolic link; llmnet does not follow links", path);
	return -ELOOP;
}

/* path into its directory (node path, "" for /) and its last name. */
static int split(const char *path, char *dir, const char **base, struct ln_buf *err)
{
	const char *slash = strrchr(path, '/');

	if (path[0] != '/' || !slash || !slash[1] || strlen(path) >= PATH_MAX ||
	    !strcmp(slash + 1, ".") || !strcmp(slash + 1, "..")) {
		ln_buf_addf(err, "invalid path '%s'", path);
		return -EINVAL;
	}
	snprintf(dir, PATH_MAX, "%.*s", (int)(slash - path), path);
	*base = slash + 1;
	return 0;
}

static int open_root(const struct ln_agent *a, struct ln_buf *err)
{
	const char *root = a->root[0] ? a->root : "/";
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return ln_fsops_fail(err, errno, "open root", root);
	return fd;
}

#ifdef HAVE_OPENAT2
/* One call when nothing is to be created; -1 to walk instead. */
static int open_dir_fast(int rootfd, const char *dir)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH,
	};
	const char *rel = dir;
	long fd;

	while (*rel == '/')
		rel++;
	fd = syscall(SYS_openat2, rootfd, *rel ? rel : ".", &how, sizeof(how));
	return fd < 0 ? -1 : (int)fd;
}
#endif

#define W_CREATE 1	/* make missing directories */
#define W_CHECK 2	/* refuse a directory someone but root may change */

/*
 * A directory llmnet writes into must be root's (the agent's own user's,
 * which is root on a node) and writable by no one else: whoever else may
 * write to it could swap what is inside for a link or their own file
 * between a check and a write. prefix is the directory, path what the
 * caller is after.
 */
static int check_dir(int fd, const char *prefix, const char *path, struct ln_buf *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return ln_fsops_fail(err, errno, "look at", prefix);
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		ln_buf_addf(err, "'%s' is owned by uid %u, not root; llmnet writes only in "
			    "directories root owns (on the way to '%s')", prefix,
			    (unsigned)st.st_uid, path);
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		ln_buf_addf(err, "'%s' is writable by group or others (mode %04o); llmnet writes "
			    "only in directories no one but root may change (on the way to '%s')",
			    prefix, (unsigned)(st.st_mode & 07777), path);
		return -EPERM;
	}
	return 0;
}

/*
 * The directory dir (a node path), each component opened with O_NOFOLLOW
 * from the root; with W_CREATE, missing ones are made with mode; with
 * W_CHECK, each one below the root passes check_dir(). path is what the
 * caller is after, for messages. The fd, or -ENOENT (no message) when
 * something is missing, or negative with err.
 */
static int walk(const struct ln_agent *a, const char *dir, int flags, mode_t mode,
		const char *path, struct ln_buf *err)
{
	int create = flags & W_CREATE;
	const char *s = dir, *e;
	char comp[NAME_MAX + 1], prefix[PATH_MAX];
	int fd = open_root(a, err), nfd;

	if (fd < 0)
		return fd;
#ifdef HAVE_OPENAT2
	if (!flags) {
		nfd = open_dir_fast(fd, dir);
		if (nfd >= 0) {
			close(fd);
			return nfd;
		}
	}
#endif
	for (;;) {
		struct stat st;
		size_t n;

		while (*s == '/')
			s++;
		if (!*s)
			return fd;
		e = strchr(s, '/');
		if (!e)
			e = s + strlen(s);
		n = (size_t)(e - s);
		snprintf(prefix, sizeof(prefix), "%.*s", (int)(e - dir), dir);
		if (n > NAME_MAX || (n == 2 && !strncmp(s, "..", 2))) {
			close(fd);
			ln_buf_addf(err, "invalid path '%s'", path);
			return -EINVAL;
		}
		memcpy(comp, s, n);
		comp[n] = '\0';
		s = e;
		if (!strcmp(comp, "."))
			continue;
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, comp, mode) < 0 && errno != EEXIST) {
				int r = ln_fsops_fail(err, errno, "create directory", prefix);

				close(fd);
				return r;
			}
			nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0) {
			int r = -errno;

			if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				r = refuse_link(err, prefix, path);
			else if (r == -ENOTDIR)
				ln_buf_addf(err, "'%s' is not a directory (on the way to '%s')", prefix,
					    path);
			else if (r != -ENOENT)
				r = ln_fsops_fail(err, -r, "open directory", prefix);
			close(fd);
			return r;
		}
		close(fd);
		fd = nfd;
		if (flags & W_CHECK) {
			int r = check_dir(fd, prefix, path, err);

			if (r < 0) {
				close(fd);
				return r;
			}
		}
	}
}

/* The parent of path, opened as walk() does with flags; *base is its last name. */
static int open_parent(const struct ln_agent *a, const char *path, const char **base,
		       int flags, struct ln_buf *err)
{
	char dir[PATH_MAX];
	int r = split(path, dir, base, err);

	return r < 0 ? r : walk(a, dir, flags, 0, path, err);
}

/* 0 with st, -ENOENT, or -ELOOP/other with err: the entry base of dfd. */
static int entry(int dfd, const char *base, const char *path, struct stat *st,
		 struct ln_buf *err)
{
	if (fstatat(dfd, base, st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? -ENOENT : ln_fsops_fail(err, errno, "look at", path);
	return S_ISLNK(st->st_mode) ? refuse_link(err, path, path) : 0;
}

int ln_path_lstat(const struct ln_agent *a, const char *path, struct stat *st,
		  struct ln_buf *err)
{
	const char *base;
	int dfd = open_parent(a, path, &base, 0, err), r;

	if (dfd < 0)
		return dfd;
	r = entry(dfd, base, path, st, err);
	close(dfd);
	return r;
}

int ln_path_read(const struct ln_agent *a, const char *path, struct ln_buf *out,
		 struct ln_buf *err)
{
	const char *base;
	int dfd = open_parent(a, path, &base, 0, err), fd, r;

	if (dfd < 0)
		return dfd;
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (r == -ELOOP)
			r = refuse_link(err, path, path);
		else if (r != -ENOENT)
			ln_fsops_fail(err, -r, "open", path);
		close(dfd);
		return r;
	}
	close(dfd);
	{
		struct stat st;

		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			ln_buf_addf(err, "'%s' is not a regular file", path);
			return -EINVAL;
		}
	}
	r = ln_fd_read(fd, path, out, err);
	close(fd);
	return r;
}

static int change(struct ln_agent *a, const char *verb, const char *path)
{
	char what[PATH_MAX + 32];

	snprintf(what, sizeof(what), "%s %s", verb, path);
	return ln_agent_change(a, what);
}

/*
 * A change's opening: its failpoint (verb path), then path's folder opened
 * with walk flags; the folder's fd with *base set, or negative. A missing
 * folder is -ENOENT, or, when miss is set, "cannot <miss> path" in err.
 */
static int begin(struct ln_agent *a, const char *verb, const char *path, const char **base,
		 int flags, const char *miss, struct ln_buf *err)
{
	int dfd = change(a, verb, path);

	if (dfd < 0)
		return dfd;
	dfd = open_parent(a, path, base, flags, err);
	if (dfd == -ENOENT && miss)
		return ln_fsops_fail(err, ENOENT, miss, path);
	return dfd;
}

int ln_path_write(struct ln_agent *a, const char *path, const char *data, size_t len,
		  mode_t mode, struct ln_buf *err)
{
	static unsigned seq;
	char tmp[NAME_MAX + 1];
	const char *base;
	struct stat st;
	int fd = -1, r, dfd = begin(a, "write file", path, &base, W_CHECK, "write", err);

	if (dfd < 0)
		return dfd;
	r = entry(dfd, base, path, &st, err);
	if (r < 0 && r != -ENOENT)
		goto out;
	if (snprintf(tmp, sizeof(tmp), ".%s.tmp.%ld.%u", base, (long)getpid(), seq++) >=
	    (int)sizeof(tmp)) {
		r = ln_fsops_fail(err, ENAMETOOLONG, "write", path);
		goto out;
	}
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = ln_fsops_fail(err, errno, "create a temporary file for", path);
		goto out;
	}
	r = fchmod(fd, mode) < 0 ? -errno : ln_write_all(fd, data, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dfd, tmp, dfd, base) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(dfd, tmp, 0);
		ln_fsops_fail(err, -r, "write", path);
		goto out;
	}
	if (fsync(dfd) < 0)
		r = ln_fsops_fail(err, errno, "sync the directory of", path);
out:
	close(dfd);
	return r;
}

int ln_path_create_sparse(struct ln_agent *a, const char *path, uint64_t size,
			  struct ln_buf *err)
{
	const char *base;
	int fd, r = 0;
	int dfd = begin(a, "create sparse", path, &base, W_CHECK, "create backing file", err);

	if (dfd < 0)
		return dfd;
	/* O_EXCL: an existing file is never truncated or resized; O_NOFOLLOW:
	 * nor is one a link points at. */
	fd = openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = ln_fsops_fail(err, errno, "create backing file", path);
		close(dfd);
		return r;
	}
	if (ftruncate(fd, (off_t)size) < 0 || fsync(fd) < 0) {
		r = ln_fsops_fail(err, errno, "size backing file", path);
		unlinkat(dfd, base, 0);
	}
	close(fd);
	close(dfd);
	return r;
}

int ln_path_remove(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	const char *base;
	struct stat st;
	int r, dfd = begin(a, "remove file", path, &base, 0, NULL, err);

	if (dfd < 0)
		return dfd == -ENOENT ? 0 : dfd;
	r = entry(dfd, base, path, &st, err);
	if (r == 0 && !S_ISREG(st.st_mode)) {
		ln_buf_addf(err, "'%s' is not a regular file; not removed", path);
		r = -EINVAL;
	}
	if (r == 0 && unlinkat(dfd, base, 0) < 0 && errno != ENOENT)
		r = ln_fsops_fail(err, errno, "remove", path);
	close(dfd);
	return r == -ENOENT ? 0 : r;
}

int ln_path_mkdir(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	const char *base;
	int r = 0, dfd = begin(a, "mkdir", path, &base, W_CHECK, "create directory", err);

	if (dfd < 0)
		return dfd;
	if (mkdirat(dfd, base, 0755) < 0)
		r = ln_fsops_fail(err, errno, "create directory", path);
	close(dfd);
	return r;
}

int ln_path_rmdir(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	const char *base;
	struct stat st;
	int r, dfd = begin(a, "rmdir", path, &base, 0, "remove directory", err);

	if (dfd < 0)
		return dfd;
	r = entry(dfd, base, path, &st, err);
	if (r == -ENOENT)
		r = ln_fsops_fail(err, ENOENT, "remove directory", path);
	if (r == 0 && unlinkat(dfd, base, AT_REMOVEDIR) < 0)
		r = ln_fsops_fail(err, errno, "remove directory", path);
	close(dfd);
	return r;
}

int ln_path_open_own_dir(const struct ln_agent *a, const char *dir, mode_t mode,
			 struct ln_buf *err)
{
	int fd = walk(a, dir, W_CREATE | W_CHECK, mode, dir, err);

	return fd == -ENOENT ? ln_fsops_fail(err, ENOENT, "open directory", dir) : fd;
}

int ln_path_check_dirs(const struct ln_agent *a, const char *path, struct ln_buf *err)
{
	char dir[PATH_MAX];
	const char *base;
	int fd = split(path, dir, &base, err);

	if (fd == 0)
		fd = walk(a, dir, W_CHECK, 0, path, err);
	if (fd >= 0)
		close(fd);
	return fd == -ENOENT ? 0 : fd < 0 ? fd : 0;
}

int ln_path_open_dir(const struct ln_agent *a, const char *dir, struct ln_buf *err)
{
	return walk(a, dir, 0, 0, dir, err);
}
