// SPDX-License-Identifier: MIT
/*
 * The configfs/filesystem ops table on a real node: the kernel enforces
 * configfs's rules and modules come from /sbin/modprobe under a bound.
 * The --root kernel fake, ln_fsops_fixture, is fixture/fsops_fixture.c;
 * the two share the error wording and mkfs (fsops.h, fsops_common.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/keyctl.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/valid.h"
#include "agents/agent/kernel/fsops.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/kernel/tlspsk.h"
#include "agents/agent/run/bounded.h"
#include "common/fileio.h"
#include "common/log.h"

/* 0, or what failed on path in err when rc, a libc call's, is negative
 * (errno is still that call's: nothing runs in between). */
static int done(int rc, struct ln_buf *err, const char *what, const char *path)
{
	return rc < 0 ? ln_fsops_fail(err, errno, what, path) : 0;
}

static int real_mkdir(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	(void)a;
	return done(mkdir(path, 0755), err, "create directory", path);
}

static int real_rmdir(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	(void)a;
	return done(rmdir(path), err, "remove directory", path);
}

static int real_symlink(struct ln_agent *a, const char *target, const char *linkpath,
			struct ln_buf *err)
{
	(void)a;
	return done(symlink(target, linkpath), err, "link", linkpath);
}

static int real_unlink(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	(void)a;
	return done(unlink(path), err, "unlink", path);
}

static int real_write_attr(struct ln_agent *a, const char *path, const char *val,
			   struct ln_buf *err)
{
	size_t n = strlen(val);
	ssize_t w;
	int fd;

	(void)a;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return ln_fsops_fail(err, errno, "open attribute", path);
	w = write(fd, val, n);
	if (w < 0 || (size_t)w != n) {
		int e = w < 0 ? errno : EIO;

		close(fd);
		return ln_fsops_fail(err, e, "write attribute", path);
	}
	if (close(fd) < 0)
		return ln_fsops_fail(err, errno, "write attribute", path);
	return 0;
}

/* Load (or, with unload, remove) one checked module name with modprobe,
 * bounded. Returns 0, or -EIO (load) / -EBUSY (unload) with the reason. */
static int run_modprobe(const char *module, int unload, struct ln_buf *err)
{
	const char *load_argv[] = { "/sbin/modprobe", "-q", "--", module, NULL };
	const char *unload_argv[] = { "/sbin/modprobe", "-r", "-q", "--", module, NULL };
	const char **argv = unload ? unload_argv : load_argv;
	struct ln_exec_result res;
	int r;

	if (!ln_valid_name(module, 64)) {
		ln_buf_addf(err, "invalid module name '%s'", module);
		return -EINVAL;
	}
	if (access(argv[0], X_OK) < 0)
		argv[0] = "/usr/sbin/modprobe";
	r = ln_exec_bounded(argv, 30, 4096, &res, err);
	if (r < 0)
		return r;
	if (res.timed_out || !res.exited || res.exit_status) {
		if (unload)
			ln_buf_addf(err, "modprobe -r %s %s", module,
				    res.timed_out ? "timed out" : "failed (in use)");
		else
			ln_buf_addf(err, "cannot load module '%s': modprobe %s", module,
				    res.timed_out ? "timed out" : "failed");
		if (res.output.len)
			ln_buf_addf(err, ": %s", res.output.buf);
		ln_buf_rtrim(err);
		r = unload ? -EBUSY : -EIO;
	}
	ln_exec_result_release(&res);
	return r;
}

static int real_modprobe(struct ln_agent *a, const char *module, struct ln_buf *err)
{
	if (ln_module_loaded(a, module))
		return 0;
	return run_modprobe(module, 0, err);
}

static int real_rmmod(struct ln_agent *a, const char *module, struct ln_buf *err)
{
	(void)a;
	return run_modprobe(module, 1, err);
}

static int real_mount_configfs(struct ln_agent *a, struct ln_buf *err)
{
	(void)a;
	if (mount("configfs", "/sys/kernel/config", "configfs", 0, NULL) < 0)
		return ln_fsops_fail(err, errno, "mount configfs on", "/sys/kernel/config");
	return 0;
}

static int real_odirect_ok(struct ln_agent *a, const char *path)
{
	struct statfs sfs;
	struct stat st;
	int fd;

	(void)a;
	/* A directory (the file is not there yet) cannot be asked with an
	 * O_DIRECT open: judge its filesystem, tmpfs and ramfs have none. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		if (statfs(path, &sfs) < 0)
			return 1;
		return sfs.f_type != TMPFS_MAGIC && sfs.f_type != RAMFS_MAGIC;
	}
	fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == EINVAL ? 0 : 1;
}

static int real_mount(struct ln_agent *a, const char *dev, const char *path, const char *fs,
		      int exec, struct ln_buf *err)
{
	(void)a;
	if (mount(dev, path, fs, LN_FABRIC_MOUNT_FLAGS_FOR(exec), NULL) < 0)
		return ln_fsops_fail(err, errno, "mount on", path);
	return 0;
}

static int real_umount(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	(void)a;
	if (umount2(path, 0) < 0)
		return ln_fsops_fail(err, errno, "unmount", path);
	return 0;
}

static int real_remount(struct ln_agent *a, const char *path, unsigned long flags,
			struct ln_buf *err)
{
	(void)a;
	/* MS_BIND with MS_REMOUNT: this mount's flags only, not the file
	 * system's (the kernel keeps its atime flags when none is given) */
	if (mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | flags, NULL) < 0)
		return ln_fsops_fail(err, errno, "remount", path);
	return 0;
}

static int real_mkfs(struct ln_agent *a, const char *dev, const char *fs, struct ln_buf *err)
{
	(void)a;
	return ln_fsops_mkfs(dev, fs, err);
}

/*
 * add_key(2) into the kernel's .nvme keyring (root may write it: the
 * kernel makes it user-writable for uid 0). The psk key type has no update,
 * so a key of the same description is replaced in the keyring by the new
 * one, as nvme-cli's insert does. No keyring is linked into a session:
 * the agent never needs to possess (read) a key.
 */
static int real_add_psk(struct ln_agent *a, const char *identity, const unsigned char *key,
			size_t len, struct ln_buf *err)
{
	long ring = ln_keyring_serial(a, ".nvme"), k;

	if (!ring) {
		ln_buf_addstr(err, "cannot add a TLS PSK: no '.nvme' keyring in /proc/keys");
		return -ENOKEY;
	}
	k = syscall(SYS_add_key, "psk", identity, key, len, ring);
	return k < 0 ? ln_fsops_fail(err, errno, "add TLS PSK", identity) : 0;
}

/* Unlink the psk key of that identity from .nvme: its serial from
 * /proc/keys (a search would need to possess it), then KEYCTL_UNLINK,
 * which needs write on the keyring only; the kernel frees the key. */
static int real_drop_psk(struct ln_agent *a, const char *identity, struct ln_buf *err)
{
	long ring = ln_keyring_serial(a, ".nvme"), key = ln_proc_key_serial(a, "psk", identity);

	if (!ring || !key)
		return 0;
	if (syscall(SYS_keyctl, KEYCTL_UNLINK, key, ring) < 0 && errno != ENOENT)
		return ln_fsops_fail(err, errno, "remove TLS PSK", identity);
	return 0;
}

static int real_mount_id(const struct ln_agent *a, int fd, unsigned long long *id)
{
	struct statx stx;

	(void)a;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0)
		return errno == EINVAL ? -ENOSYS : -errno;
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -ENOSYS;
	*id = stx.stx_mnt_id;
	return 0;
}

static int real_loop_backing(const struct ln_agent *a, const char *name, dev_t *dev, ino_t *ino)
{
	struct loop_info64 li;
	char p[PATH_MAX];
	int fd, r = 0;

	/* a read-only open of a loop device claims nothing */
	if (snprintf(p, sizeof(p), "%s/dev/%s", a->root, name) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	fd = open(p, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memset(&li, 0, sizeof(li));
	if (ioctl(fd, LOOP_GET_STATUS64, &li) < 0) {
		r = -errno;
	} else {
		*dev = (dev_t)li.lo_device;
		*ino = (ino_t)li.lo_inode;
	}
	close(fd);
	return r;
}

const struct ln_fsops ln_fsops_real = LN_FSOPS("real", real);
