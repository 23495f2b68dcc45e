/* SPDX-License-Identifier: MIT */
/* File helpers: see fileio.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"

int ln_fd_read(int fd, const char *path, struct ln_buf *out, struct ln_buf *err)
{
	char chunk[65536];
	int r;

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			ln_buf_addf(err, "cannot read '%s': %s", path, strerror(-r));
			break;
		}
		r = 0;
		if (n == 0)
			break;
		r = ln_buf_add(out, chunk, (size_t)n);
		if (r < 0) {
			ln_buf_addf(err, "cannot read '%s': file too large", path);
			break;
		}
	}
	/* a secret read passes through the stack too */
	if (out->secret)
		explicit_bzero(chunk, sizeof(chunk));
	return r;
}

int ln_file_read(const char *path, struct ln_buf *out, struct ln_buf *err)
{
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		ln_buf_addf(err, "cannot open '%s': %s", path, strerror(errno));
		return r;
	}
	r = ln_fd_read(fd, path, out, err);
	close(fd);
	return r;
}

int ln_write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fsync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, r = 0;

	if (!slash)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		return -ENAMETOOLONG;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

int ln_file_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
			 struct ln_buf *err)
{
	char tmp[PATH_MAX];
	int fd = -1, r;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp)) {
		ln_buf_addf(err, "path too long: '%s'", path);
		return -ENAMETOOLONG;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		ln_buf_addf(err, "cannot create temporary file for '%s': %s", path, strerror(errno));
		return r;
	}
	/* ln_write_all() fails with -errno, errno still set: one rule for all three. */
	if (fchmod(fd, mode) < 0 || ln_write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		r = -errno;
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		r = -errno;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		r = -errno;
		goto fail;
	}
	r = fsync_dir_of(path);
	if (r < 0) {
		ln_buf_addf(err, "cannot sync directory of '%s': %s", path, strerror(-r));
		return r;
	}
	return 0;
fail:
	ln_buf_addf(err, "cannot write '%s': %s", path, strerror(-r));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return r;
}

int ln_path_each_prefix(const char *path, int (*fn)(const char *prefix, size_t len, void *ctx),
			void *ctx)
{
	char p[PATH_MAX];
	size_t i, n = strlen(path);
	int r;

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		r = fn(p, i, ctx);
		if (r < 0)
			return r;
		p[i] = path[i];
	}
	return 0;
}

struct mkdir_p {
	mode_t mode;
	struct ln_buf *err;
};

static int mkdir_one(const char *dir, size_t len, void *ctx)
{
	const struct mkdir_p *m = ctx;
	int r;

	(void)len;
	if (mkdir(dir, m->mode) == 0 || errno == EEXIST)
		return 0;
	r = -errno;
	ln_buf_addf(m->err, "cannot create directory '%s': %s", dir, strerror(errno));
	return r;
}

int ln_mkdir_p(const char *path, mode_t mode, struct ln_buf *err)
{
	struct mkdir_p m = { mode, err };

	if (strlen(path) >= PATH_MAX) {
		ln_buf_addf(err, "path too long: '%s'", path);
		return -ENAMETOOLONG;
	}
	return ln_path_each_prefix(path, mkdir_one, &m);
}
