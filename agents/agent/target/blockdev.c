/* SPDX-License-Identifier: MIT */
/*
 * Is this block device free to export? A whole disk is in use when any of
 * its partitions is, so every check runs on the device and each partition
 * (sysfs: a child directory with a "partition" file). Mounts are matched
 * by major:minor in mountinfo, since a mount source may be any link to the
 * device, and by resolved path in /proc/mounts (fixture trees and old
 * kernels). Swap, holders (device-mapper, md, bcache) and the signatures
 * of unassembled LVM PVs and md members are the in-use gate's rules
 * (inuse.h, ln_inuse_blockdev), asked of the device and each partition.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "agents/agent/kernel/read.h"
#include "agents/agent/target/blockdev.h"
#include "agents/agent/target/diskid.h"
#include "agents/agent/target/inuse.h"
#include "common/log.h"

#define MAX_PARTS 128
#define NVMET_SUBSYS "/sys/kernel/config/nvmet/subsystems"

/* major:minor of a sysfs block name, from its "dev" attribute. */
static int sysfs_devt(const struct ln_agent *a, const char *name, unsigned int *maj,
		      unsigned int *min)
{
	struct ln_buf b = LN_BUF_INIT;
	char p[PATH_MAX];
	int r;

	snprintf(p, sizeof(p), "/sys/class/block/%s/dev", name);
	r = ln_read_attr(a, p, &b);
	if (r < 0) {	/* a fixture's namespace heads are only under /sys/block */
		snprintf(p, sizeof(p), "/sys/block/%s/dev", name);
		r = ln_read_attr(a, p, &b);
	}
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
	struct stat st = { 0 };
	ssize_t n;
	int r;

	memset(bd, 0, sizeof(*bd));
	bd->fd = -1;
	r = ln_path_resolve(a, given, bd->path);
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

/* The partitions of a sysfs block name (directories with a "partition"
 * file under /sys/class/block/<name>, else /sys/block/<name>). */
static size_t partitions(const struct ln_agent *a, const char *name, char (*out)[NAME_MAX + 1],
			 size_t max)
{
	static const char *const dirs[] = { "/sys/class/block/", "/sys/block/" };
	char p[PATH_MAX], q[PATH_MAX];
	struct dirent *e;
	size_t n = 0, i;
	DIR *d = NULL;

	for (i = 0; i < 2 && !d; i++) {
		snprintf(q, sizeof(q), "%s%s", dirs[i], name);
		if (ln_agent_path(a, q, p) == 0)
			d = opendir(p);
	}
	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		if (e->d_name[0] == '.' || strlen(e->d_name) > NAME_MAX)
			continue;
		snprintf(p, sizeof(p), "%s/%s/partition", q, e->d_name);
		if (ln_path_exists(a, p))
			snprintf(out[n++], NAME_MAX + 1, "%s", e->d_name);
	}
	closedir(d);
	return n;
}

/* Does the node path src name the device at devpath? */
static int same_node(const struct ln_agent *a, const char *src, const char *devpath)
{
	char res[PATH_MAX];

	return src[0] == '/' && ln_path_resolve(a, src, res) == 0 && !strcmp(res, devpath);
}

/* Where is /dev/<name> (major:minor, when known) mounted? 1 with at. */
static int mounted_at(const struct ln_agent *a, const char *name, const char *devpath,
		      const char *given, char *at, size_t atlen)
{
	struct ln_buf b = LN_BUF_INIT;
	unsigned int maj, min;
	int have = sysfs_devt(a, name, &maj, &min) == 0, found = 0;
	char *line, *save = NULL;

	if (have && ln_read_attr(a, "/proc/self/mountinfo", &b) == 0) {
		for (line = strtok_r(b.buf, "\n", &save); line && !found;
		     line = strtok_r(NULL, "\n", &save)) {
			unsigned int ma, mi;
			char mp[PATH_MAX];

			if (sscanf(line, "%*s %*s %u:%u %*s %4095s", &ma, &mi, mp) == 3 &&
			    ma == maj && mi == min) {
				ln_inuse_unescape(mp);
				snprintf(at, atlen, "%s", mp);
				found = 1;
			}
		}
	}
	ln_buf_reset(&b);
	save = NULL;
	if (!found && ln_read_attr(a, "/proc/mounts", &b) == 0) {
		for (line = strtok_r(b.buf, "\n", &save); line && !found;
		     line = strtok_r(NULL, "\n", &save)) {
			char src[PATH_MAX], dir[PATH_MAX];

			if (sscanf(line, "%4095s %4095s", src, dir) != 2)
				continue;
			ln_inuse_unescape(src);
			if ((given && !strcmp(src, given)) || same_node(a, src, devpath)) {
				ln_inuse_unescape(dir);
				snprintf(at, atlen, "%s", dir);
				found = 1;
			}
		}
	}
	ln_buf_release(&b);
	return found;
}

/* Is /dev/<name> (or devpath) in use on its own? 1 with why: mounted
 * (here, by major:minor), or what the in-use gate finds (swap, a holder,
 * an LVM or md signature). */
static int name_in_use(const struct ln_agent *a, const char *subject, const char *name,
		       const char *devpath, const char *given, struct ln_buf *why)
{
	char what[PATH_MAX];

	if (mounted_at(a, name, devpath, given, what, sizeof(what))) {
		ln_buf_addf(why, "%s is mounted at %s", subject, what);
		return 1;
	}
	return ln_inuse_blockdev(a, subject, name, devpath, why);
}

/* Does the device at other share blocks with bd (the same device, or one
 * is a partition of the other)? */
static int overlaps(const struct ln_agent *a, const struct ln_blockdev *bd, const char *other,
		    char (*parts)[NAME_MAX + 1], size_t nparts)
{
	char oparts[MAX_PARTS][NAME_MAX + 1];
	struct ln_buf scratch = LN_BUF_INIT;
	struct ln_blockdev o;
	size_t i, n;
	int r;

	r = ln_blockdev_resolve(a, other, &o, &scratch);
	ln_buf_release(&scratch);
	if (r < 0)
		return 0;
	if (!strcmp(o.name, bd->name))
		return 1;
	for (i = 0; i < nparts; i++)
		if (!strcmp(o.name, parts[i]))
			return 1;
	n = partitions(a, o.name, oparts, MAX_PARTS);
	for (i = 0; i < n; i++)
		if (!strcmp(oparts[i], bd->name))
			return 1;
	return 0;
}

/* Another namespace in nvmet configfs backed by bd; 1 with why. */
static int backs_configfs(const struct ln_agent *a, const struct ln_blockdev *bd,
			  const char *nqn, uint32_t nsid, char (*parts)[NAME_MAX + 1],
			  size_t nparts, struct ln_buf *why)
{
	struct ln_buf dp = LN_BUF_INIT;
	char p[PATH_MAX], q[PATH_MAX];
	struct dirent *s, *n;
	DIR *ds, *dn;
	int found = 0;

	if (ln_agent_path(a, NVMET_SUBSYS, p) < 0 || !(ds = opendir(p)))
		return 0;
	while (!found && (s = readdir(ds))) {
		if (s->d_name[0] == '.')
			continue;
		snprintf(q, sizeof(q), NVMET_SUBSYS "/%s/namespaces", s->d_name);
		if (ln_agent_path(a, q, p) < 0 || !(dn = opendir(p)))
			continue;
		while (!found && (n = readdir(dn))) {
			if (n->d_name[0] == '.' ||
			    (!strcmp(s->d_name, nqn) && strtoul(n->d_name, NULL, 10) == nsid))
				continue;
			snprintf(q, sizeof(q), NVMET_SUBSYS "/%s/namespaces/%s/device_path",
				 s->d_name, n->d_name);
			ln_buf_reset(&dp);
			if (ln_read_attr(a, q, &dp) == 0 && dp.len &&
			    overlaps(a, bd, dp.buf, parts, nparts)) {
				ln_buf_addf(why, "'%s' backs namespace %s of '%s' in nvmet configfs",
					    dp.buf, n->d_name, s->d_name);
				found = 1;
			}
		}
		closedir(dn);
	}
	closedir(ds);
	ln_buf_release(&dp);
	return found;
}

int ln_blockdev_check_free(const struct ln_agent *a, const struct ln_blockdev *bd,
			   const char *given, const struct ln_request *rq,
			   const struct ln_req_ns *self, const char *nqn, struct ln_buf *err)
{
	char parts[MAX_PARTS][NAME_MAX + 1];
	struct ln_buf why = LN_BUF_INIT;
	char at[PATH_MAX], subject[NAME_MAX + 16], devpath[PATH_MAX];
	size_t nparts, i, j;
	int busy = 0;

	if (ln_inuse_fabric(a, bd->name, given, err) < 0)
		return -EBUSY;
	if (mounted_at(a, bd->name, bd->path, given, at, sizeof(at))) {
		/* the wording tests and operators already know */
		ln_buf_addf(err, "device '%s' is mounted on this node at %s; refusing to export it",
			    given, at);
		return -EBUSY;
	}
	busy = name_in_use(a, "it", bd->name, bd->path, NULL, &why);
	nparts = partitions(a, bd->name, parts, MAX_PARTS);
	for (i = 0; i < nparts && !busy; i++) {
		snprintf(subject, sizeof(subject), "partition %s", parts[i]);
		snprintf(devpath, sizeof(devpath), "/dev/%s", parts[i]);
		busy = name_in_use(a, subject, parts[i], devpath, NULL, &why);
	}
	for (i = 0; rq && i < rq->ntargets && !busy; i++) {
		const struct ln_req_target *t = &rq->targets[i];

		for (j = 0; j < t->nns && !busy; j++) {
			if (&t->ns[j] == self || !t->ns[j].device)
				continue;
			if (overlaps(a, bd, t->ns[j].device, parts, nparts)) {
				ln_buf_addf(&why, "namespace %u of '%s' in this request uses '%s'",
					    t->ns[j].nsid, t->nqn, t->ns[j].device);
				busy = 1;
			}
		}
	}
	if (!busy)
		busy = backs_configfs(a, bd, nqn, self ? self->nsid : 0, parts, nparts, &why);
	if (busy) {
		if (strcmp(given, bd->path))
			ln_buf_addf(err, "device '%s' ('%s') is in use: %s; refusing to export it",
				    given, bd->path, why.buf);
		else
			ln_buf_addf(err, "device '%s' is in use: %s; refusing to export it", given,
				    why.buf);
	}
	ln_buf_release(&why);
	return busy ? -EBUSY : 0;
}

/* The topmost mount at mp in mountinfo (field 5; the source follows " - "
 * and the file system type). 1 with src and major:minor, 0 if none. */
static int mountinfo_at(const struct ln_agent *a, const char *mp, struct ln_blockdev *src)
{
	struct ln_buf b = LN_BUF_INIT;
	char *line, *save = NULL;
	int found = 0;

	if (ln_read_attr(a, "/proc/self/mountinfo", &b) < 0)
		return -ENOENT;
	for (line = strtok_r(b.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned int ma, mi;
		char at[PATH_MAX], dev[PATH_MAX];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %u:%u %*s %4095s", &ma, &mi, at) != 3 ||
		    sscanf(dash, " - %*s %4095s", dev) != 1)
			continue;
		ln_inuse_unescape(at);
		if (strcmp(at, mp))
			continue;
		ln_inuse_unescape(dev);
		memset(src, 0, sizeof(*src));
		src->fd = -1;
		snprintf(src->path, sizeof(src->path), "%s", dev);
		src->major = ma;
		src->minor = mi;
		src->have_devt = 1;
		found = 1;	/* go on: a later line is mounted over this one */
	}
	ln_buf_release(&b);
	return found;
}

int ln_blockdev_mounted_at(const struct ln_agent *a, const char *mp, struct ln_blockdev *src)
{
	struct ln_buf b = LN_BUF_INIT, scratch = LN_BUF_INIT;
	char *line, *save = NULL, dev[PATH_MAX] = "";
	int found = mountinfo_at(a, mp, src);

	if (found == 1)
		return 1;
	/* not in mountinfo (a fixture root has none, or only the node's
	 * own): the last /proc/mounts line at mp */
	found = 0;
	if (ln_read_attr(a, "/proc/mounts", &b) == 0)
		for (line = strtok_r(b.buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			char s[PATH_MAX], at[PATH_MAX];

			if (sscanf(line, "%4095s %4095s", s, at) != 2)
				continue;
			ln_inuse_unescape(at);
			if (strcmp(at, mp))
				continue;
			ln_inuse_unescape(s);
			memcpy(dev, s, sizeof(dev));
			found = 1;
		}
	ln_buf_release(&b);
	if (!found)
		return 0;
	if (dev[0] != '/' || ln_blockdev_resolve(a, dev, src, &scratch) < 0) {
		memset(src, 0, sizeof(*src));
		src->fd = -1;
		snprintf(src->path, sizeof(src->path), "%s", dev);
	}
	ln_buf_release(&scratch);
	return 1;
}

int ln_blockdev_same(const struct ln_blockdev *x, const struct ln_blockdev *y)
{
	if (x->have_devt && y->have_devt)
		return x->major == y->major && x->minor == y->minor;
	return !strcmp(x->path, y->path);
}

void ln_blockdev_id(const struct ln_blockdev *bd, char *out, size_t outlen)
{
	if (bd->have_devt)
		snprintf(out, outlen, "%u:%u", bd->major, bd->minor);
	else
		snprintf(out, outlen, "%s", bd->path);
}

/* "device 'given'" or "device 'given' ('resolved')" for messages. */
static void name_device(struct ln_buf *err, const char *given, const struct ln_blockdev *bd)
{
	if (strcmp(given, bd->path))
		ln_buf_addf(err, "device '%s' ('%s')", given, bd->path);
	else
		ln_buf_addf(err, "device '%s'", given);
}

int ln_blockdev_claim(const struct ln_agent *a, struct ln_blockdev *bd, const char *given,
		      struct ln_buf *err)
{
	char p[PATH_MAX];
	struct stat st;
	int fd, r;

	if (ln_agent_path(a, bd->path, p) < 0)
		return -ENAMETOOLONG;
	/* O_EXCL on a block device is the kernel's own in-use check: it fails
	 * with EBUSY while the device is mounted or claimed by dm, md or any
	 * other exclusive opener. A fixture's device is a regular file (O_EXCL
	 * has no effect there), where an exclusive flock stands for a claim. */
	fd = open(p, O_RDONLY | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		errno = -r;
		fd = -1;
	}
	if (fd >= 0 && S_ISREG(st.st_mode) && a->fixture && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		errno = errno == EWOULDBLOCK ? EBUSY : errno;
		fd = -1;
	}
	if (fd < 0) {
		r = -errno;
		name_device(err, given, bd);
		if (r == -EBUSY)
			ln_buf_addstr(err, " is in use: the kernel refuses to open it exclusively "
				      "(mounted, or held by device-mapper, md or another program); "
				      "refusing to export it");
		else
			ln_buf_addf(err, " cannot be opened: %s; refusing to export it",
				    strerror(-r));
		return r;
	}
	/* the device opened is the one checked: same major:minor (a fixture's
	 * regular file has none; its inode is what is compared later) */
	if (S_ISBLK(st.st_mode) ? !bd->have_devt || major(st.st_rdev) != bd->major ||
					  minor(st.st_rdev) != bd->minor
				: !(a->fixture && S_ISREG(st.st_mode))) {
		close(fd);
		name_device(err, given, bd);
		ln_buf_addstr(err, " changed while it was checked; refusing to export it");
		return -ESTALE;
	}
	bd->fd = fd;
	bd->dev = st.st_dev;
	bd->ino = st.st_ino;
	bd->rdev = st.st_rdev;
	return 0;
}

int ln_blockdev_recheck(const struct ln_agent *a, const struct ln_blockdev *bd,
			const char *given, struct ln_buf *err)
{
	char p[PATH_MAX];
	struct stat now, held;

	if (bd->fd < 0 || ln_agent_path(a, bd->path, p) < 0 || fstat(bd->fd, &held) < 0 ||
	    lstat(p, &now) < 0 || (now.st_mode & S_IFMT) != (held.st_mode & S_IFMT) ||
	    (S_ISBLK(now.st_mode) ? now.st_rdev != bd->rdev || held.st_rdev != bd->rdev
				  : now.st_dev != bd->dev || now.st_ino != bd->ino)) {
		name_device(err, given, bd);
		ln_buf_addf(err, " changed between its check and its use ('%s' is no longer the "
			    "device checked); refusing to export it", bd->path);
		return -ESTALE;
	}
	return 0;
}

void ln_blockdev_release(struct ln_blockdev *bd)
{
	if (bd->fd >= 0)
		close(bd->fd);
	bd->fd = -1;
}

/* The first line of a sysfs attribute, trimmed; 0 when it says something. */
static int read_id_attr(const struct ln_agent *a, const char *path, struct ln_buf *out)
{
	size_t n;

	ln_buf_reset(out);
	if (ln_read_attr(a, path, out) < 0)
		return -ENOENT;
	n = strcspn(out->buf, "\n");
	while (n && (out->buf[n - 1] == ' ' || out->buf[n - 1] == '\t'))
		n--;
	ln_buf_setlen(out, n);
	return n ? 0 : -ENOENT;
}

int ln_blockdev_stable_id(const struct ln_agent *a, const struct ln_blockdev *bd, const char *given,
			  char *out, size_t outlen, struct ln_buf *err)
{
	/* tried in order on the whole disk: the kernel's WWID (NVMe, SCSI),
	 * device-mapper's uuid, then the serial (virtio-blk, NVMe controller) */
	static const char *const attrs[][2] = {
		{ "wwid", "wwid" }, { "device/wwid", "wwid" }, { "dm/uuid", "dm" },
		{ "serial", "serial" }, { "device/serial", "serial" },
	};
	struct ln_buf v = LN_BUF_INIT, part = LN_BUF_INIT;
	char dir[PATH_MAX], p[PATH_MAX], **names = NULL, tr[64];
	size_t i, n = 0, at;
	int r;

	/* a partition's own directory sits in its disk's: "..", resolved by
	 * the kernel through /sys/class/block's link */
	snprintf(dir, sizeof(dir), "/sys/class/block/%s", bd->name);
	if (!ln_is_dir(a, dir) && !ln_path_exists(a, dir))
		snprintf(dir, sizeof(dir), "/sys/block/%s", bd->name);
	snprintf(p, sizeof(p), "%s/partition", dir);
	if (read_id_attr(a, p, &part) == 0)
		snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/..");
	/* the pin starts with the disk's transport (diskid.h): never a fabric's */
	r = ln_diskid_transport(a, dir, given, tr, sizeof(tr), err);
	if (r < 0)
		goto out;
	snprintf(out, outlen, "%s:", tr);
	at = strlen(out);
	r = -ENOENT;
	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]) && r < 0; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, attrs[i][0]);
		if (read_id_attr(a, p, &v) == 0) {
			snprintf(out + at, outlen - at, "%s:%s%s%s", attrs[i][1], v.buf,
				 part.len ? "/part" : "", part.buf);
			r = 0;
		}
	}
	/* else a /dev/disk/by-id name for it (udev's, from the same sources
	 * and the bus), the first in sorted order */
	if (r < 0 && ln_list_dir(a, "/dev/disk/by-id", &names, &n) == 0) {
		char best[NAME_MAX + 1] = "";

		for (i = 0; i < n; i++) {
			struct ln_blockdev o;
			struct ln_buf e = LN_BUF_INIT;

			snprintf(p, sizeof(p), "/dev/disk/by-id/%s", names[i]);
			if (ln_blockdev_resolve(a, p, &o, &e) == 0 && ln_blockdev_same(&o, bd) &&
			    (!best[0] || strcmp(names[i], best) < 0))
				snprintf(best, sizeof(best), "%s", names[i]);
			ln_buf_release(&e);
		}
		if (best[0]) {
			snprintf(out + at, outlen - at, "by-id:%s", best);
			r = 0;
		}
		ln_names_free(names, n);
	}
out:
	ln_buf_release(&v);
	ln_buf_release(&part);
	return r;
}
