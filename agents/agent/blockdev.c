/* SPDX-License-Identifier: MIT */
/*
 * Namespace devices: a device path from the request is resolved once,
 * through its links, under the agent's root (see blockdev.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "agents/agent/blockdev.h"
#include "common/log.h"

#define MAX_LINKS 40

/* Drop the last component of a node path ("/" stays "/" as ""). */
static void drop_last(char *cur)
{
	char *slash = strrchr(cur, '/');

	if (slash)
		*slash = '\0';
}

/* Resolve a node path through its links, each read under the root (an
 * absolute link target starts again at the root), like realpath(3) in a
 * chroot. 0 or negative. */
static int resolve(const struct ln_agent *a, const char *in, char *out)
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

/* major:minor of a sysfs block name, from its "dev" attribute. */
static int sysfs_devt(const struct ln_agent *a, const char *name, unsigned int *maj,
		      unsigned int *min)
{
	struct ln_buf b = LN_BUF_INIT;
	char p[PATH_MAX];
	int r;

	snprintf(p, sizeof(p), "/sys/class/block/%s/dev", name);
	r = ln_read_attr(a, p, &b);
	if (r == 0)
		r = sscanf(b.buf, "%u:%u", maj, min) == 2 ? 0 : -EINVAL;
	ln_buf_release(&b);
	return r;
}

int ln_blockdev_resolve(const struct ln_agent *a, const char *given, struct ln_blockdev *bd,
			struct ln_buf *err)
{
	char p[PATH_MAX], link[PATH_MAX];
	const char *base;
	struct stat st;
	ssize_t n;
	int r;

	memset(bd, 0, sizeof(*bd));
	r = resolve(a, given, bd->path);
	if (r == 0 && (ln_agent_path(a, bd->path, p) < 0 || stat(p, &st) < 0))
		r = -ENOENT;
	if (r < 0) {
		ln_buf_addf(err, "device '%s' does not exist", given);
		return -ENOENT;
	}
	if (strncmp(bd->path, "/dev/", 5)) {
		ln_buf_addf(err, "device '%s' resolves to '%s', outside /dev", given, bd->path);
		return -EPERM;
	}
	if (S_ISBLK(st.st_mode)) {
		bd->major = major(st.st_rdev);
		bd->minor = minor(st.st_rdev);
		bd->have_devt = 1;
	} else if (!a->fixture || !S_ISREG(st.st_mode)) {
		ln_buf_addf(err, "'%s' is not a block device", given);
		return -ENOTBLK;
	}
	/* The kernel's name for the device: /sys/dev/block/M:m links to it
	 * (a /dev node may be named anything); else the node's basename. */
	base = strrchr(bd->path, '/') + 1;
	if (bd->have_devt) {
		snprintf(p, sizeof(p), "/sys/dev/block/%u:%u", bd->major, bd->minor);
		if (ln_agent_path(a, p, link) == 0 && (n = readlink(link, p, sizeof(p) - 1)) > 0) {
			p[n] = '\0';
			base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
		}
	}
	snprintf(bd->name, sizeof(bd->name), "%s", base);
	if (!bd->have_devt && sysfs_devt(a, bd->name, &bd->major, &bd->minor) == 0)
		bd->have_devt = 1;
	ln_debug("device '%s' is '%s' (%s)", given, bd->path, bd->name);
	return 0;
}
