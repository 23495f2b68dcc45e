// SPDX-License-Identifier: MIT
/*
 * The in-use gate's kernel rules (inuse.h): a file is compared by
 * identity (device and inode) with every active swap area and every loop
 * device's backing file, so another name for the same file (a hard link,
 * a path through a bind mount) is caught as well as the same name; a
 * block device by its number with every swap partition, and by sysfs and
 * its own blocks for holders (device-mapper, LVM, md) and unassembled LVM
 * or md members; an NVMe namespace by its controllers' transports. One
 * walk of /proc/swaps serves files and partitions.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/target/inuse.h"
#include "common/buf.h"
#include "common/util.h"

void ln_inuse_unescape(char *s)
{
	char *q = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*q++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*q++ = *s++;
		}
	}
	*q = '\0';
}

/* The identity of what the node path p names as the kernel sees it: its
 * links resolved under the root (swap and loop name what the kernel
 * resolved). 0 with o, -1 when nothing is there. */
static int node_stat(const struct ln_agent *a, const char *p, struct stat *o)
{
	char res[PATH_MAX], full[PATH_MAX];

	return p[0] == '/' && ln_path_resolve(a, p, res) == 0 && ln_agent_path(a, res, full) == 0 &&
			       stat(full, o) == 0
		       ? 0
		       : -1;
}

/* 1 when o and want are one thing: one block device number, or one file
 * (device and inode; a fixture's block device is a regular file). */
static int same_thing(const struct stat *o, const struct stat *want)
{
	if (S_ISBLK(o->st_mode) && S_ISBLK(want->st_mode))
		return o->st_rdev == want->st_rdev;
	return S_ISREG(o->st_mode) && S_ISREG(want->st_mode) && o->st_dev == want->st_dev &&
	       o->st_ino == want->st_ino;
}

/* The one walk of /proc/swaps, for swap files and swap partitions alike:
 * 1 with the entry into who when an active swap area is want. An entry
 * whose file has no name left to look at (the kernel shows a deleted one
 * as "PATH (deleted)"; a renamed one by its new name, which is found) is
 * put into lost (the first such; "" when none), for swap_lost. */
static int swap_of(const struct ln_agent *a, const struct stat *want, char *who, size_t n,
		   char *lost, size_t ln)
{
	struct ln_buf b = LN_BUF_INIT;
	char *line, *save = NULL;
	int found = 0;

	lost[0] = '\0';
	if (ln_read_attr(a, "/proc/swaps", &b) == 0) {
		line = strtok_r(b.buf, "\n", &save);	/* the header */
		while (!found && line && (line = strtok_r(NULL, "\n", &save))) {
			char f[PATH_MAX];
			struct stat o;
			int seen;

			if (sscanf(line, "%4095s", f) != 1)
				continue;
			ln_inuse_unescape(f);
			seen = node_stat(a, f, &o) == 0;
			found = seen && same_thing(&o, want);
			if (found)
				snprintf(who, n, "%s", f);
			else if (!seen && !lost[0])
				snprintf(lost, ln, "%s", f);
		}
	}
	ln_buf_release(&b);
	return found;
}

/* 1 when the file at the node path p carries a swap area's signature
 * (mkswap's "SWAPSPACE2", or the old "SWAP-SPACE", in the last 10 bytes
 * of its first page, for each page size Linux has). */
static int swap_signature(const struct ln_agent *a, const char *p)
{
	static const off_t pages[] = { 4096, 8192, 16384, 65536 };
	char full[PATH_MAX], b[10];
	int fd, hit = 0;
	size_t i;

	if (ln_agent_path(a, p, full) < 0 ||
	    (fd = open(full, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		return 0;
	for (i = 0; !hit && i < sizeof(pages) / sizeof(pages[0]); i++)
		hit = pread(fd, b, sizeof(b), pages[i] - 10) == (ssize_t)sizeof(b) &&
		      (!memcmp(b, "SWAPSPACE2", 10) || !memcmp(b, "SWAP-SPACE", 10));
	close(fd);
	return hit;
}

/* A swap area the kernel lists under a name that is gone (lost, from
 * swap_of) cannot be compared by device and inode: the file at p is taken
 * for it when it carries a swap signature, so a swap file whose name was
 * deleted, with another link left, is not exported under that link. */
static int swap_lost(const struct ln_agent *a, const char *p, const char *lost)
{
	return lost[0] && swap_signature(a, p);
}

/* 1 when the node path name (a loop device's backing_file) is st's file. */
static int backs(const struct ln_agent *a, const char *name, const struct stat *st)
{
	struct stat o;

	return node_stat(a, name, &o) == 0 && same_thing(&o, st);
}

/* 1 when loop device name is attached to st's file: by identity where
 * the kernel tells it (LOOP_GET_STATUS64, fsops), which holds whatever
 * the file's name became, renamed or " (deleted)" with another link left;
 * else by the name backing_file reads (nothing is there for a deleted
 * name). */
static int loop_is(const struct ln_agent *a, const char *name, const char *backing,
		   const struct stat *st)
{
	dev_t dev;
	ino_t ino;

	if (a->fs && a->fs->loop_backing && a->fs->loop_backing(a, name, &dev, &ino) == 0)
		return S_ISREG(st->st_mode) && dev == st->st_dev && ino == st->st_ino;
	return backs(a, backing, st);
}

/* 1 with the loop device into who and what its backing_file reads into
 * shown when st backs one. */
static int loop_backing(const struct ln_agent *a, const struct stat *st, char *who, size_t n,
			char *shown, size_t sn)
{
	struct ln_buf b = LN_BUF_INIT;
	char **names = NULL, p[PATH_MAX];
	size_t nn = 0, i;
	int found = 0;

	ln_list_dir(a, "/sys/block", &names, &nn);
	for (i = 0; !found && i < nn; i++) {
		if (strncmp(names[i], "loop", 4))
			continue;
		snprintf(p, sizeof(p), "/sys/block/%s/loop/backing_file", names[i]);
		ln_buf_reset(&b);
		/* no backing_file: not attached */
		found = ln_read_attr(a, p, &b) == 0 && b.len && loop_is(a, names[i], b.buf, st);
		if (found) {
			snprintf(who, n, "/dev/%s", names[i]);
			snprintf(shown, sn, "%s", b.buf);
		}
	}
	ln_names_free(names, nn);
	ln_buf_release(&b);
	return found;
}

int ln_inuse_file(const struct ln_agent *a, const char *path, const struct stat *st,
		  struct ln_buf *err)
{
	char who[PATH_MAX], shown[PATH_MAX], lost[PATH_MAX];

	if (swap_of(a, st, who, sizeof(who), lost, sizeof(lost))) {
		ln_buf_addf(err, "'%s' is in use as swap (%s in /proc/swaps); llmnet does not "
			    "export a swap file: swapoff it first, or name another file", path, who);
		return -EBUSY;
	}
	if (swap_lost(a, path, lost)) {
		ln_buf_addf(err, "'%s' carries a swap signature and /proc/swaps lists an active "
			    "swap file by a name that is gone (%s): it may be that file under "
			    "another name; llmnet does not export it: swapoff it first (or wipe "
			    "the signature of a file that is not swap), or name another file",
			    path, lost);
		return -EBUSY;
	}
	if (loop_backing(a, st, who, sizeof(who), shown, sizeof(shown))) {
		ln_buf_addf(err, "'%s' is the backing file of loop device %s", path, who);
		if (strcmp(shown, path))
			ln_buf_addf(err, " (by identity: its backing_file reads '%s')", shown);
		ln_buf_addf(err, "; llmnet does not export it: detach the loop device (losetup -d "
			    "%s) first, or name another file", who);
		return -EBUSY;
	}
	return 0;
}

/* The first holder of name, described (dm name, md array); 1 if any. */
static int held_by(const struct ln_agent *a, const char *name, char *out, size_t outlen)
{
	struct ln_buf dm = LN_BUF_INIT, uuid = LN_BUF_INIT;
	char p[PATH_MAX], q[PATH_MAX];
	struct dirent *e;
	int found = 0;
	DIR *d;

	snprintf(q, sizeof(q), "/sys/class/block/%s/holders", name);
	if (ln_agent_path(a, q, p) < 0 || !(d = opendir(p)))
		return 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		found = 1;
		snprintf(q, sizeof(q), "/sys/class/block/%s/dm/name", e->d_name);
		if (ln_read_attr(a, q, &dm) == 0) {
			snprintf(q, sizeof(q), "/sys/class/block/%s/dm/uuid", e->d_name);
			ln_read_attr(a, q, &uuid);
			snprintf(out, outlen, "%s (%s '%s')", e->d_name,
				 !strncmp(uuid.buf, "LVM-", 4)	   ? "LVM volume"
				 : !strncmp(uuid.buf, "CRYPT-", 6) ? "dm-crypt volume"
								   : "device-mapper",
				 dm.buf);
		} else {
			snprintf(out, outlen, "%s%s", e->d_name,
				 !strncmp(e->d_name, "md", 2) ? " (md array)" : "");
		}
	}
	closedir(d);
	ln_buf_release(&dm);
	ln_buf_release(&uuid);
	return found;
}

static uint32_t le32(const unsigned char *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static int md_magic_at(int fd, off_t off)
{
	unsigned char b[4];

	return off >= 0 && pread(fd, b, 4, off) == 4 && le32(b) == 0xa92b4efc;
}

/* blkid's TYPE for an unassembled PV or md member, or NULL: the LVM label
 * ("LABELONE", then "LVM2 001" at 24) in one of the first four sectors;
 * the md superblock magic where 1.1 (0), 1.2 (4 KiB), 1.0 (end - 8 KiB,
 * 4 KiB aligned) and 0.90 (the last 64 KiB-aligned 64 KiB) put it. */
static const char *signature(const struct ln_agent *a, const char *devpath)
{
	unsigned char b[2048];
	const char *type = NULL;
	char p[PATH_MAX];
	off_t size;
	int fd, i;

	if (ln_agent_path(a, devpath, p) < 0 || (fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (pread(fd, b, sizeof(b), 0) == (ssize_t)sizeof(b))
		for (i = 0; i < 4 && !type; i++)
			if (!memcmp(b + i * 512, "LABELONE", 8) &&
			    !memcmp(b + i * 512 + 24, "LVM2 001", 8))
				type = "LVM2_member";
	size = lseek(fd, 0, SEEK_END);
	if (!type && size >= 65536 &&
	    (md_magic_at(fd, 0) || md_magic_at(fd, 4096) ||
	     md_magic_at(fd, (size - 8192) & ~(off_t)4095) ||
	     md_magic_at(fd, (size & ~(off_t)65535) - 65536)))
		type = "linux_raid_member";
	close(fd);
	return type;
}

int ln_inuse_blockdev(const struct ln_agent *a, const char *subject, const char *name,
		      const char *devpath, struct ln_buf *why)
{
	char what[PATH_MAX], lost[PATH_MAX];
	const char *sig;
	struct stat st;

	if (node_stat(a, devpath, &st) == 0 &&
	    swap_of(a, &st, what, sizeof(what), lost, sizeof(lost))) {
		ln_buf_addf(why, "%s is in use as swap (%s in /proc/swaps)", subject, what);
		return 1;
	}
	if (held_by(a, name, what, sizeof(what))) {
		ln_buf_addf(why, "%s is held by %s", subject, what);
		return 1;
	}
	sig = signature(a, devpath);
	if (sig) {
		ln_buf_addf(why, "%s is %s (%s)", subject,
			    !strcmp(sig, "LVM2_member") ? "an LVM physical volume" : "an md member",
			    sig);
		return 1;
	}
	return 0;
}

/* The controller dir's transport into tr ("pcie", "tcp"...); "" when unreadable. */
static void transport_of(const struct ln_agent *a, const char *dir, char *tr, size_t n)
{
	struct ln_buf b = LN_BUF_INIT;
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/transport", dir);
	tr[0] = '\0';
	if (ln_read_attr(a, p, &b) == 0 && b.len)
		snprintf(tr, n, "%s", b.buf);
	ln_buf_release(&b);
}

/* 1 when s is a controller's name, "nvme" and digits (not a head, "nvme2n1"). */
static int ctrl_name(const char *s)
{
	return !strncmp(s, "nvme", 4) && s[4] && strspn(s + 4, "0123456789") == strlen(s + 4);
}

/* The first controller of the multipath subsystem subsys whose transport is
 * not pcie, into ctrl and tr (tr "" when unreadable); 1 when one is, or
 * when the subsystem lists no controller at all (ctrl ""). */
static int subsys_fabric(const struct ln_agent *a, const char *subsys, char *ctrl, size_t cn,
			 char *tr, size_t tn)
{
	char **names = NULL, dir[PATH_MAX], p[PATH_MAX];
	size_t nn = 0, i, seen = 0;
	int found = 0;

	snprintf(dir, sizeof(dir), "/sys/class/nvme-subsystem/%s", subsys);
	ln_list_dir(a, dir, &names, &nn);
	for (i = 0; !found && i < nn; i++) {
		if (!ctrl_name(names[i]))
			continue;
		seen++;
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		transport_of(a, p, tr, tn);
		found = strcmp(tr, "pcie") != 0;
		if (found)
			snprintf(ctrl, cn, "%s", names[i]);
	}
	ln_names_free(names, nn);
	if (!found && !seen) {
		ctrl[0] = tr[0] = '\0';
		found = 1;
	}
	return found;
}

int ln_inuse_partition_disk(const struct ln_agent *a, const char *name, char *disk, size_t n)
{
	char p[PATH_MAX], full[PATH_MAX], link[PATH_MAX];
	const char *pp = strrchr(name, 'p');
	ssize_t r;

	/* the kernel's: /sys/class/block/NAME links into its disk's directory */
	snprintf(p, sizeof(p), "/sys/class/block/%s", name);
	r = ln_agent_path(a, p, full) == 0 ? readlink(full, link, sizeof(link) - 1) : -1;
	link[r > 0 ? r : 0] = '\0';
	if (r > 0 && strrchr(link, '/')) {
		*strrchr(link, '/') = '\0';
		snprintf(disk, n, "%s", strrchr(link, '/') ? strrchr(link, '/') + 1 : link);
		snprintf(p, sizeof(p), "/sys/class/block/%s/partition", name);
		return ln_path_exists(a, p) && strcmp(disk, name);
	}
	/* nvme1n1p2 where sysfs has no link (a fixture) */
	if (!strncmp(name, "nvme", 4) && pp > strchr(name, 'n') && pp[1] &&
	    strspn(pp + 1, "0123456789") == strlen(pp + 1)) {
		snprintf(disk, n, "%.*s", (int)(pp - name), name);
		return 1;
	}
	return 0;
}

int ln_inuse_fabric_of(const struct ln_agent *a, const char *name, struct ln_inuse_ctrl *f)
{
	struct ln_buf nqn = LN_BUF_INIT;
	char dev[PATH_MAX], full[PATH_MAX], link[PATH_MAX], disk[NAME_MAX + 1];
	const char *base;
	ssize_t r;
	int fabric;

	memset(f, 0, sizeof(*f));
	if (strncmp(name, "nvme", 4))
		return 0;
	/* a partition's controller is its disk's (/sys/block lists disks only) */
	if (ln_inuse_partition_disk(a, name, disk, sizeof(disk)))
		name = disk;
	snprintf(dev, sizeof(dev), "/sys/block/%s/device", name);
	r = ln_agent_path(a, dev, full) == 0 ? readlink(full, link, sizeof(link) - 1) : -1;
	link[r > 0 ? r : 0] = '\0';
	base = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	transport_of(a, dev, f->tr, sizeof(f->tr));
	if (f->tr[0]) {	/* a controller: one path, its own transport */
		snprintf(f->ctrl, sizeof(f->ctrl), "%s", base);
		fabric = strcmp(f->tr, "pcie") != 0;
	} else if (base[0]) {	/* a multipath head: every controller of its subsystem */
		snprintf(f->sub, sizeof(f->sub), "%s", base);
		fabric = subsys_fabric(a, f->sub, f->ctrl, sizeof(f->ctrl), f->tr, sizeof(f->tr));
	} else {
		fabric = 1;
	}
	if (!fabric)
		return 0;
	snprintf(full, sizeof(full), "%s/subsysnqn", dev);
	if (ln_read_attr(a, full, &nqn) < 0 || !nqn.len)
		ln_buf_addf(&nqn, "unknown");
	snprintf(f->nqn, sizeof(f->nqn), "%s", nqn.buf);
	ln_buf_release(&nqn);
	return 1;
}

void ln_inuse_ctrl_describe(const struct ln_inuse_ctrl *f, struct ln_buf *out)
{
	ln_buf_addf(out, "NVMe controller %s%s%s over transport %s, subsystem %s",
		    f->ctrl[0] ? f->ctrl : "(none found)", f->sub[0] ? " of " : "", f->sub,
		    f->tr[0] ? f->tr : "unknown (unreadable)", f->nqn);
}

int ln_inuse_fabric(const struct ln_agent *a, const char *name, const char *given,
		    struct ln_buf *err)
{
	struct ln_inuse_ctrl f;

	if (!ln_inuse_fabric_of(a, name, &f))
		return 0;
	ln_buf_addf(err, "device '%s' (%s) is a namespace of ", given, name);
	ln_inuse_ctrl_describe(&f, err);
	ln_buf_addstr(err, "; llmnet exports only local (pcie) NVMe namespaces, never one "
		      "imported from a fabric (an unknown transport counts as one): name a "
		      "local disk");
	return -EBUSY;
}
