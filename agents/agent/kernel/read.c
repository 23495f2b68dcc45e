/* SPDX-License-Identifier: MIT */
/*
 * Reads under the agent's root (read.h): attributes, directory listings
 * and the mount table, from the node or from a fixture tree alike.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/kernel/paths.h"
#include "agents/agent/kernel/read.h"
#include "common/fileio.h"
#include "common/places.h"
#include "common/util.h"

int ln_agent_path(const struct ln_agent *a, const char *path, char *out)
{
	if (snprintf(out, PATH_MAX, "%s%s", a->root, path) >= PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

int ln_read_attr(const struct ln_agent *a, const char *path, struct ln_buf *out)
{
	struct ln_buf ignore = LN_BUF_INIT;
	char p[PATH_MAX];
	int r;

	if (ln_agent_path(a, path, p) < 0)
		return -ENAMETOOLONG;
	r = ln_file_read(p, out, &ignore);
	ln_buf_release(&ignore);
	if (r < 0)
		return r;
	if (out->len && out->buf[out->len - 1] == '\n')
		ln_buf_setlen(out, out->len - 1);
	return 0;
}

int ln_path_exists(const struct ln_agent *a, const char *path)
{
	char p[PATH_MAX];
	struct stat st;

	return ln_agent_path(a, path, p) == 0 && lstat(p, &st) == 0;
}

int ln_is_dir(const struct ln_agent *a, const char *path)
{
	char p[PATH_MAX];
	struct stat st;

	return ln_agent_path(a, path, p) == 0 && lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int ln_is_link(const struct ln_agent *a, const char *path)
{
	char p[PATH_MAX];
	struct stat st;

	return ln_agent_path(a, path, p) == 0 && lstat(p, &st) == 0 && S_ISLNK(st.st_mode);
}

static int cmp_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* sysfs, procfs and devtmpfs are reached through the kernel's own links
 * (/sys/class/infiniband/rxe0 -> ../../devices/...), which only the kernel
 * makes there; facts and device checks must follow them. */
static int kernel_tree(const char *path)
{
	return ln_path_under(path, "/sys") || ln_path_under(path, "/proc") ||
	       ln_path_under(path, "/dev");
}

int ln_list_dir(const struct ln_agent *a, const char *path, char ***names, size_t *n)
{
	struct ln_buf e = LN_BUF_INIT;
	struct dirent *de;
	char **v = NULL;
	size_t cnt = 0, alloc = 0;
	DIR *d;
	int r = 0, fd;

	*names = NULL;
	*n = 0;
	if (kernel_tree(path)) {
		char p[PATH_MAX];

		if (ln_agent_path(a, path, p) < 0)
			return -ENAMETOOLONG;
		fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
	} else {
		/* never through a link (paths.c): a listing decides what is done */
		fd = ln_path_open_dir(a, path, &e);
		ln_buf_release(&e);
		if (fd < 0)
			return fd;
	}
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (cnt + 2 > alloc) {
			char **nv;

			alloc = alloc ? alloc * 2 : 16;
			nv = realloc(v, alloc * sizeof(*v));
			if (!nv) {
				r = -ENOMEM;
				break;
			}
			v = nv;
		}
		v[cnt] = strdup(de->d_name);
		if (!v[cnt]) {
			r = -ENOMEM;
			break;
		}
		v[++cnt] = NULL;
	}
	closedir(d);
	if (r < 0) {
		ln_names_free(v, cnt);
		return r;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_names);
	*names = v;
	*n = cnt;
	return 0;
}

int ln_module_loaded(const struct ln_agent *a, const char *module)
{
	char p[128];

	snprintf(p, sizeof(p), "/sys/module/%s", module);
	return ln_is_dir(a, p);
}

/* Call fn for each line of ROOT/proc/mounts, split into its fields. */
static int scan_mounts(const struct ln_agent *a,
		       int (*fn)(const char *dev, const char *dir, const char *fs, void *arg),
		       void *arg)
{
	struct ln_buf b = LN_BUF_INIT;
	char *line, *save = NULL;
	int r;

	r = ln_read_attr(a, "/proc/mounts", &b);
	if (r < 0)
		goto out;
	r = 0;
	for (line = strtok_r(b.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char dev[PATH_MAX], dir[PATH_MAX], fs[64];

		if (sscanf(line, "%4095s %4095s %63s", dev, dir, fs) != 3)
			continue;
		r = fn(dev, dir, fs, arg);
		if (r)
			break;
	}
out:
	ln_buf_release(&b);
	return r;
}

static int match_configfs(const char *dev, const char *dir, const char *fs, void *arg)
{
	(void)dev;
	(void)arg;
	return !strcmp(fs, "configfs") && !strcmp(dir, "/sys/kernel/config");
}

int ln_configfs_mounted(const struct ln_agent *a)
{
	return scan_mounts(a, match_configfs, NULL) == 1;
}

struct dir_match {
	const char *path;
	char *fs;
	size_t fslen;
};

static int match_dir(const char *dev, const char *dir, const char *fs, void *arg)
{
	struct dir_match *m = arg;

	(void)dev;
	if (strcmp(dir, m->path))
		return 0;
	if (m->fs)
		snprintf(m->fs, m->fslen, "%s", fs);
	return 1;
}

int ln_path_mounted(const struct ln_agent *a, const char *path, char *fs, size_t fslen)
{
	struct dir_match m = { path, fs, fslen };

	return scan_mounts(a, match_dir, &m) == 1;
}

#define MAX_LINKS 40

/* Drop the last component of a node path ("/" stays "/" as ""). */
static void drop_last(char *cur)
{
	char *slash = strrchr(cur, '/');

	if (slash)
		*slash = '\0';
}

int ln_path_resolve(const struct ln_agent *a, const char *in, char *out)
{
	char rest[PATH_MAX], cur[PATH_MAX] = "", p[PATH_MAX], link[PATH_MAX], tmp[PATH_MAX];
	const char *r;
	int hops = 0;
	struct stat st;
	ssize_t n;

	if (snprintf(rest, sizeof(rest), "%s", in) >= (int)sizeof(rest))
		return -ENAMETOOLONG;
	r = rest;
	while (*r) {
		size_t len;

		while (*r == '/')
			r++;
		len = strcspn(r, "/");
		if (len == 0)
			break;
		if (len == 1 && r[0] == '.') {
			r += len;
			continue;
		}
		if (len == 2 && r[0] == '.' && r[1] == '.') {
			drop_last(cur);
			r += len;
			continue;
		}
		if (strlen(cur) + 1 + len >= sizeof(cur))
			return -ENAMETOOLONG;
		snprintf(cur + strlen(cur), sizeof(cur) - strlen(cur), "/%.*s", (int)len, r);
		r += len;
		if (ln_agent_path(a, cur, p) < 0)
			return -ENAMETOOLONG;
		if (lstat(p, &st) < 0)
			return -errno;
		if (!S_ISLNK(st.st_mode))
			continue;
		if (++hops > MAX_LINKS)
			return -ELOOP;
		n = readlink(p, link, sizeof(link) - 1);
		if (n < 0)
			return -errno;
		link[n] = '\0';
		if (snprintf(tmp, sizeof(tmp), "%s/%s", link, r) >= (int)sizeof(tmp))
			return -ENAMETOOLONG;
		memcpy(rest, tmp, sizeof(rest));
		r = rest;
		if (link[0] == '/')
			cur[0] = '\0';
		else
			drop_last(cur);
	}
	snprintf(out, PATH_MAX, "%s", cur[0] ? cur : "/");
	return 0;
}
