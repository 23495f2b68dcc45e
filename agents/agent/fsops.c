// SPDX-License-Identifier: MIT
/*
 * The configfs/filesystem ops table, in two implementations.
 *
 * ln_fsops_real works on the node: the kernel enforces configfs's rules and
 * modules come from /sbin/modprobe under a bound.
 *
 * ln_fsops_fixture works on an ordinary directory tree under --root and
 * enforces, itself, the rules Linux 6.1's nvmet configfs applies, so that
 * the reconcile code is tested against them without a kernel:
 *  - mkdir creates the groups and attributes configfs creates by itself
 *    (a subsystem's namespaces/ and allowed_hosts/, a port's subsystems/,
 *    referrals/ and ana_groups/1, a namespace's attributes);
 *  - rmdir fails with ENOTEMPTY while an object holds user-made children or
 *    links, and EPERM on a default group; a linked-to host or subsystem is
 *    EBUSY;
 *  - enable fails (ENOENT/EINVAL) without a valid device path, and with
 *    EINVAL on a file whose filesystem refuses O_DIRECT unless buffered_io
 *    is 1; device_path and buffered_io cannot change while enabled (EBUSY);
 *  - addr_* cannot change while the port has a subsystem linked (EACCES), a
 *    port can only be linked once its transport and address are valid;
 *  - attr_allow_any_host and allowed_hosts links exclude each other.
 * The fixture's kernel has DH-HMAC-CHAP attributes on host entries only
 * when ROOT/etc/llmnet-fixture/nvmet-auth exists (Debian's 6.1 has none).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/agent/agent.h"
#include "common/fileio.h"
#include "common/log.h"

static int fail(struct ln_buf *err, int e, const char *what, const char *path)
{
	ln_buf_addf(err, "cannot %s '%s': %s", what, path, strerror(e));
	return -e;
}

/* ---- real ---- */

static int real_mkdir(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	(void)a;
	if (mkdir(path, 0755) < 0)
		return fail(err, errno, "create directory", path);
	return 0;
}

static int real_rmdir(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	(void)a;
	if (rmdir(path) < 0)
		return fail(err, errno, "remove directory", path);
	return 0;
}

static int real_symlink(struct ln_agent *a, const char *target, const char *linkpath,
			struct ln_buf *err)
{
	(void)a;
	if (symlink(target, linkpath) < 0)
		return fail(err, errno, "link", linkpath);
	return 0;
}

static int real_unlink(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	(void)a;
	if (unlink(path) < 0)
		return fail(err, errno, "unlink", path);
	return 0;
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
		return fail(err, errno, "open attribute", path);
	w = write(fd, val, n);
	if (w < 0 || (size_t)w != n) {
		int e = w < 0 ? errno : EIO;

		close(fd);
		return fail(err, e, "write attribute", path);
	}
	if (close(fd) < 0)
		return fail(err, errno, "write attribute", path);
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
		return fail(err, errno, "mount configfs on", "/sys/kernel/config");
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
		      struct ln_buf *err)
{
	(void)a;
	if (mount(dev, path, fs, 0, NULL) < 0)
		return fail(err, errno, "mount on", path);
	return 0;
}

static int real_umount(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	(void)a;
	if (umount2(path, 0) < 0)
		return fail(err, errno, "unmount", path);
	return 0;
}

static int run_mkfs(const char *dev_real, const char *fs, struct ln_buf *err)
{
	char prog[64];
	const char *argv[6];
	struct ln_exec_result res;
	int r, i = 0;

	if (strcmp(fs, "ext4") && strcmp(fs, "xfs")) {
		ln_buf_addf(err, "unsupported filesystem '%s'", fs);
		return -EINVAL;
	}
	snprintf(prog, sizeof(prog), "/sbin/mkfs.%s", fs);
	if (access(prog, X_OK) < 0)
		snprintf(prog, sizeof(prog), "/usr/sbin/mkfs.%s", fs);
	argv[i++] = prog;
	argv[i++] = "-q";
	/* ext4 asks before formatting a regular file (fixture devices). */
	if (!strcmp(fs, "ext4"))
		argv[i++] = "-F";
	argv[i++] = dev_real;
	argv[i] = NULL;
	r = ln_exec_bounded(argv, 300, 4096, &res, err);
	if (r < 0)
		return r;
	if (res.timed_out || !res.exited || res.exit_status) {
		ln_buf_addf(err, "cannot format '%s' as %s: %s", dev_real, fs,
			    res.timed_out ? "timed out" : res.output.buf);
		ln_buf_rtrim(err);
		r = -EIO;
	}
	ln_exec_result_release(&res);
	return r;
}

static int real_mkfs(struct ln_agent *a, const char *dev, const char *fs, struct ln_buf *err)
{
	(void)a;
	return run_mkfs(dev, fs, err);
}

const struct ln_fsops ln_fsops_real = {
	.name = "real",
	.mkdir = real_mkdir,
	.rmdir = real_rmdir,
	.symlink = real_symlink,
	.unlink = real_unlink,
	.write_attr = real_write_attr,
	.modprobe = real_modprobe,
	.rmmod = real_rmmod,
	.mount_configfs = real_mount_configfs,
	.odirect_ok = real_odirect_ok,
	.mount = real_mount,
	.umount = real_umount,
	.mkfs = real_mkfs,
};

/* ---- fixture ---- */

enum fx_kind { FX_NONE, FX_OTHER_CONFIGFS, FX_SUBSYS, FX_NS, FX_PORT, FX_HOST, FX_DEFAULT_GROUP };

/*
 * Classify a node path inside nvmet's configfs tree. parent gets the
 * object's path for FX_NS (its subsystem). Paths outside configfs are
 * FX_NONE (ordinary files and directories).
 */
static enum fx_kind classify(const char *path)
{
	const char *rel;
	char c1[256], c2[256], c3[256];
	int n;

	if (strncmp(path, "/sys/kernel/config", 18) || (path[18] && path[18] != '/'))
		return FX_NONE;
	if (strncmp(path, LN_NVMET "/", sizeof(LN_NVMET)))
		return FX_OTHER_CONFIGFS;
	rel = path + sizeof(LN_NVMET);
	c1[0] = c2[0] = c3[0] = '\0';
	n = sscanf(rel, "%255[^/]/%255[^/]/%255[^/]", c1, c2, c3);
	if (n == 2 && !strcmp(c1, "subsystems"))
		return FX_SUBSYS;
	if (n == 2 && !strcmp(c1, "ports"))
		return FX_PORT;
	if (n == 2 && !strcmp(c1, "hosts"))
		return FX_HOST;
	if (n == 3 && !strcmp(c1, "subsystems") &&
	    (!strcmp(c3, "namespaces") || !strcmp(c3, "allowed_hosts")) && !strchr(rel + strlen(c1) + strlen(c2) + 2 + strlen(c3), '/'))
		return FX_DEFAULT_GROUP;
	if (n == 3 && !strcmp(c1, "ports") &&
	    (!strcmp(c3, "subsystems") || !strcmp(c3, "referrals") || !strcmp(c3, "ana_groups")) &&
	    !strchr(rel + strlen(c1) + strlen(c2) + 2 + strlen(c3), '/'))
		return FX_DEFAULT_GROUP;
	if (n == 3 && !strcmp(c1, "subsystems") && !strcmp(c3, "namespaces")) {
		const char *ns = rel + strlen(c1) + strlen(c2) + strlen(c3) + 3;

		if (*ns && !strchr(ns, '/'))
			return FX_NS;
	}
	return FX_OTHER_CONFIGFS;
}

static int fx_write(const struct ln_agent *a, const char *path, const char *val)
{
	char p[PATH_MAX];
	int fd;
	size_t n = strlen(val);

	if (ln_agent_path(a, path, p) < 0)
		return -ENAMETOOLONG;
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, val, n) != (ssize_t)n || write(fd, "\n", 1) != 1) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return 0;
}

static int fx_mkdir_plain(const struct ln_agent *a, const char *path)
{
	char p[PATH_MAX];

	if (ln_agent_path(a, path, p) < 0)
		return -ENAMETOOLONG;
	return mkdir(p, 0755) < 0 ? -errno : 0;
}

static int fx_attrs(const struct ln_agent *a, const char *dir, const char *const *kv)
{
	char p[PATH_MAX];
	int r;

	for (; *kv; kv += 2) {
		snprintf(p, sizeof(p), "%s/%s", dir, kv[0]);
		r = fx_write(a, p, kv[1]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int fx_groups(const struct ln_agent *a, const char *dir, const char *const *names)
{
	char p[PATH_MAX];
	int r;

	for (; *names; names++) {
		snprintf(p, sizeof(p), "%s/%s", dir, *names);
		r = fx_mkdir_plain(a, p);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The attributes and default groups Linux 6.1 gives each object. */
static const char *const subsys_attrs[] = {
	"attr_allow_any_host", "0", "attr_version", "1.3", "attr_serial", "0f5b1c6a9e2d4c17",
	"attr_cntlid_min", "1", "attr_cntlid_max", "65519", "attr_model", "Linux",
	"attr_qid_max", "128", "attr_pi_enable", "0", NULL
};
static const char *const subsys_groups[] = { "namespaces", "allowed_hosts", NULL };
static const char *const ns_attrs[] = {
	"device_path", "", "device_nguid", "00000000-0000-0000-0000-000000000000",
	"device_uuid", "00000000-0000-0000-0000-000000000000", "ana_grpid", "1",
	"enable", "0", "buffered_io", "0", "revalidate_size", "", NULL
};
static const char *const port_attrs[] = {
	"addr_adrfam", "", "addr_treq", "not specified", "addr_traddr", "", "addr_trsvcid", "",
	"addr_trtype", "", "param_inline_data_size", "-1",
	"param_pi_enable", "0", NULL
};
static const char *const port_groups[] = { "subsystems", "referrals", "ana_groups", NULL };
static const char *const host_auth_attrs[] = {
	"dhchap_key", "", "dhchap_ctrl_key", "", "dhchap_hash", "hmac(sha256)",
	"dhchap_dhgroup", "null", NULL
};

static int fx_auth(const struct ln_agent *a)
{
	return ln_path_exists(a, "/etc/llmnet-fixture/nvmet-auth");
}

static int dir_empty(const struct ln_agent *a, const char *path)
{
	char **names;
	size_t n;
	int r = ln_list_dir(a, path, &names, &n);

	ln_names_free(names, n);
	return r < 0 || n == 0;
}

static int fx_mkdir(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	enum fx_kind k = classify(path);
	char parent[PATH_MAX], p[PATH_MAX];
	const char *base = strrchr(path, '/') + 1;
	int r;

	snprintf(parent, sizeof(parent), "%.*s", (int)(base - path - 1), path);
	if (k != FX_NONE && !ln_is_dir(a, parent))
		return fail(err, ENOENT, "create directory", path);
	if (k == FX_OTHER_CONFIGFS || k == FX_DEFAULT_GROUP)
		return fail(err, EPERM, "create directory", path);
	if (k == FX_PORT) {
		char *end;

		errno = 0;
		(void)strtoul(base, &end, 10);
		if (!*base || *end || errno)
			return fail(err, EINVAL, "create directory", path);
	}
	if (k == FX_NS) {
		char *end;
		unsigned long nsid;

		errno = 0;
		nsid = strtoul(base, &end, 10);
		if (!*base || *end || errno || nsid == 0 || nsid >= 0xffffffffUL)
			return fail(err, EINVAL, "create directory", path);
	}
	r = fx_mkdir_plain(a, path);
	if (r < 0)
		return fail(err, -r, "create directory", path);
	switch (k) {
	case FX_SUBSYS:
		r = fx_attrs(a, path, subsys_attrs);
		if (!r)
			r = fx_groups(a, path, subsys_groups);
		break;
	case FX_NS:
		r = fx_attrs(a, path, ns_attrs);
		break;
	case FX_PORT:
		r = fx_attrs(a, path, port_attrs);
		if (!r)
			r = fx_groups(a, path, port_groups);
		if (!r) {
			snprintf(p, sizeof(p), "%s/ana_groups/1", path);
			r = fx_mkdir_plain(a, p);
		}
		if (!r) {
			snprintf(p, sizeof(p), "%s/ana_groups/1/ana_state", path);
			r = fx_write(a, p, "optimized");
		}
		break;
	case FX_HOST:
		if (fx_auth(a))
			r = fx_attrs(a, path, host_auth_attrs);
		break;
	default:
		break;
	}
	if (r < 0)
		return fail(err, -r, "populate", path);
	return 0;
}

/* 1 when any link in dir (a node path) points at an object named name. */
static int linked_from(const struct ln_agent *a, const char *dir, const char *name)
{
	char **links;
	size_t n, i;
	int found = 0;

	if (ln_list_dir(a, dir, &links, &n) < 0)
		return 0;
	for (i = 0; i < n && !found; i++)
		found = !strcmp(links[i], name);
	ln_names_free(links, n);
	return found;
}

/* 1 when some subsystems/<s>/allowed_hosts or ports/<p>/subsystems links name. */
static int is_link_target(const struct ln_agent *a, const char *group, const char *name)
{
	const char *parent = !strcmp(group, "hosts") ? "subsystems" : "ports";
	const char *sub = !strcmp(group, "hosts") ? "allowed_hosts" : "subsystems";
	char dir[PATH_MAX], **objs;
	size_t n, i;
	int found = 0;

	snprintf(dir, sizeof(dir), LN_NVMET "/%s", parent);
	if (ln_list_dir(a, dir, &objs, &n) < 0)
		return 0;
	for (i = 0; i < n && !found; i++) {
		snprintf(dir, sizeof(dir), LN_NVMET "/%s/%s/%s", parent, objs[i], sub);
		found = linked_from(a, dir, name);
	}
	ln_names_free(objs, n);
	return found;
}

/* Remove a configfs object's attribute files and (empty) default groups. */
static int remove_tree(const struct ln_agent *a, const char *path)
{
	char p[PATH_MAX], **names;
	size_t n, i;
	int r;

	r = ln_list_dir(a, path, &names, &n);
	if (r < 0)
		return r;
	for (i = 0; i < n && r == 0; i++) {
		char sub[PATH_MAX];

		snprintf(sub, sizeof(sub), "%s/%s", path, names[i]);
		if (ln_is_dir(a, sub)) {
			r = remove_tree(a, sub);
		} else {
			if (ln_agent_path(a, sub, p) < 0 || unlink(p) < 0)
				r = -errno;
		}
	}
	ln_names_free(names, n);
	if (r < 0)
		return r;
	if (ln_agent_path(a, path, p) < 0 || rmdir(p) < 0)
		return -errno;
	return 0;
}

static int fx_rmdir(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	enum fx_kind k = classify(path);
	const char *base = strrchr(path, '/') + 1;
	char p[PATH_MAX];
	int r;

	if (k == FX_NONE) {
		if (ln_agent_path(a, path, p) < 0 || rmdir(p) < 0)
			return fail(err, errno, "remove directory", path);
		return 0;
	}
	if (!ln_is_dir(a, path))
		return fail(err, ENOENT, "remove directory", path);
	if (k == FX_OTHER_CONFIGFS || k == FX_DEFAULT_GROUP)
		return fail(err, EPERM, "remove directory", path);
	if (k == FX_SUBSYS) {
		snprintf(p, sizeof(p), "%s/namespaces", path);
		if (!dir_empty(a, p))
			return fail(err, ENOTEMPTY, "remove directory", path);
		snprintf(p, sizeof(p), "%s/allowed_hosts", path);
		if (!dir_empty(a, p))
			return fail(err, ENOTEMPTY, "remove directory", path);
		if (is_link_target(a, "subsystems", base))
			return fail(err, EBUSY, "remove directory", path);
	}
	if (k == FX_PORT) {
		snprintf(p, sizeof(p), "%s/subsystems", path);
		if (!dir_empty(a, p))
			return fail(err, ENOTEMPTY, "remove directory", path);
		snprintf(p, sizeof(p), "%s/referrals", path);
		if (!dir_empty(a, p))
			return fail(err, ENOTEMPTY, "remove directory", path);
	}
	if (k == FX_HOST && is_link_target(a, "hosts", base))
		return fail(err, EBUSY, "remove directory", path);
	r = remove_tree(a, path);
	if (r < 0)
		return fail(err, -r, "remove directory", path);
	return 0;
}

/* Relative form of target as seen from the directory holding linkpath. */
static void relpath(const char *target, const char *linkpath, char *out, size_t size)
{
	size_t common = 0, i;
	const char *rest;
	int ups = 0;

	for (i = 0; target[i] && target[i] == linkpath[i]; i++)
		if (target[i] == '/')
			common = i + 1;
	rest = linkpath + common;
	for (; *rest; rest++)
		if (*rest == '/')
			ups++;
	out[0] = '\0';
	for (i = 0; i < (size_t)ups; i++)
		strncat(out, "../", size - strlen(out) - 1);
	strncat(out, target + common, size - strlen(out) - 1);
}

static int attr_is(const struct ln_agent *a, const char *dir, const char *attr, const char *want)
{
	struct ln_buf b = LN_BUF_INIT;
	char p[PATH_MAX];
	int eq;

	snprintf(p, sizeof(p), "%s/%s", dir, attr);
	eq = ln_read_attr(a, p, &b) == 0 && !strcmp(b.buf, want);
	ln_buf_release(&b);
	return eq;
}

static int attr_empty(const struct ln_agent *a, const char *dir, const char *attr)
{
	return attr_is(a, dir, attr, "");
}

/* Split "<nvmet>/<group>/<obj>/<sub>/<link>" for link operations. */
static int split_link(const char *linkpath, char *group, char *obj, char *sub)
{
	if (strncmp(linkpath, LN_NVMET "/", sizeof(LN_NVMET)))
		return -1;
	if (sscanf(linkpath + sizeof(LN_NVMET), "%63[^/]/%255[^/]/%63[^/]/", group, obj, sub) != 3)
		return -1;
	return 0;
}

static int fx_symlink(struct ln_agent *a, const char *target, const char *linkpath,
		      struct ln_buf *err)
{
	char group[64], obj[256], sub[64], dir[PATH_MAX], rel[PATH_MAX], p[PATH_MAX];
	const char *tbase = strrchr(target, '/') + 1;

	if (split_link(linkpath, group, obj, sub) < 0)
		return fail(err, EPERM, "link", linkpath);
	snprintf(dir, sizeof(dir), LN_NVMET "/%s/%s", group, obj);
	if (!strcmp(group, "subsystems") && !strcmp(sub, "allowed_hosts")) {
		char want[PATH_MAX];

		snprintf(want, sizeof(want), LN_NVMET "/hosts/%s", tbase);
		if (strcmp(target, want) || !ln_is_dir(a, target))
			return fail(err, EINVAL, "link", linkpath);
		if (attr_is(a, dir, "attr_allow_any_host", "1"))
			return fail(err, EINVAL, "link", linkpath);
	} else if (!strcmp(group, "ports") && !strcmp(sub, "subsystems")) {
		char want[PATH_MAX];
		struct ln_buf t = LN_BUF_INIT;
		int ok;

		snprintf(want, sizeof(want), LN_NVMET "/subsystems/%s", tbase);
		if (strcmp(target, want) || !ln_is_dir(a, target))
			return fail(err, EINVAL, "link", linkpath);
		/* Enabling the port: its transport must be known and loaded,
		 * and the address family set (nvmet-tcp refuses otherwise). */
		snprintf(p, sizeof(p), "%s/addr_trtype", dir);
		ln_read_attr(a, p, &t);
		ok = (!strcmp(t.buf, "tcp") && ln_module_loaded(a, "nvmet_tcp")) ||
		     (!strcmp(t.buf, "rdma") && ln_module_loaded(a, "nvmet_rdma"));
		ln_buf_release(&t);
		if (!ok || attr_empty(a, dir, "addr_traddr") || attr_empty(a, dir, "addr_trsvcid") ||
		    !(attr_is(a, dir, "addr_adrfam", "ipv4") || attr_is(a, dir, "addr_adrfam", "ipv6")))
			return fail(err, EINVAL, "link", linkpath);
	} else {
		return fail(err, EPERM, "link", linkpath);
	}
	if (strcmp(strrchr(linkpath, '/') + 1, tbase))
		return fail(err, EINVAL, "link", linkpath);
	relpath(target, linkpath, rel, sizeof(rel));
	if (ln_agent_path(a, linkpath, p) < 0 || symlink(rel, p) < 0)
		return fail(err, errno, "link", linkpath);
	return 0;
}

static int fx_unlink(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	char group[64], obj[256], sub[64], p[PATH_MAX];

	if (classify(path) != FX_NONE) {
		if (split_link(path, group, obj, sub) < 0 || !ln_is_link(a, path))
			return fail(err, EPERM, "unlink", path);
	}
	if (ln_agent_path(a, path, p) < 0 || unlink(p) < 0)
		return fail(err, errno, "unlink", path);
	return 0;
}

static int fx_odirect_ok(struct ln_agent *a, const char *path);

static int fx_write_attr(struct ln_agent *a, const char *path, const char *val,
			 struct ln_buf *err)
{
	char dir[PATH_MAX], p[PATH_MAX];
	const char *attr = strrchr(path, '/') + 1;
	enum fx_kind k;
	struct stat st;
	int r;

	snprintf(dir, sizeof(dir), "%.*s", (int)(attr - path - 1), path);
	k = classify(dir);
	if (ln_agent_path(a, path, p) < 0 || lstat(p, &st) < 0)
		return fail(err, ENOENT, "open attribute", path);
	if (!S_ISREG(st.st_mode))
		return fail(err, EISDIR, "open attribute", path);
	if (k == FX_PORT && !strncmp(attr, "addr_", 5)) {
		snprintf(p, sizeof(p), "%s/subsystems", dir);
		if (!dir_empty(a, p))
			return fail(err, EACCES, "write attribute", path);
		if (!strcmp(attr, "addr_trtype") && strcmp(val, "tcp") && strcmp(val, "rdma") &&
		    strcmp(val, "fc") && strcmp(val, "loop"))
			return fail(err, EINVAL, "write attribute", path);
		if (!strcmp(attr, "addr_adrfam") && strcmp(val, "ipv4") && strcmp(val, "ipv6") &&
		    strcmp(val, "ib") && strcmp(val, "fc") && strcmp(val, "loop"))
			return fail(err, EINVAL, "write attribute", path);
	}
	if (k == FX_NS) {
		int enabled = attr_is(a, dir, "enable", "1");

		if ((!strcmp(attr, "device_path") || !strcmp(attr, "buffered_io")) && enabled)
			return fail(err, EBUSY, "write attribute", path);
		if (!strcmp(attr, "device_path") && !*val)
			return fail(err, EINVAL, "write attribute", path);
		if (!strcmp(attr, "enable")) {
			if (strcmp(val, "0") && strcmp(val, "1"))
				return fail(err, EINVAL, "write attribute", path);
			if (!strcmp(val, "1") && !enabled) {
				struct ln_buf dp = LN_BUF_INIT;
				char q[PATH_MAX];
				struct stat bst;

				snprintf(q, sizeof(q), "%s/device_path", dir);
				ln_read_attr(a, q, &dp);
				if (!dp.len) {
					ln_buf_release(&dp);
					return fail(err, EINVAL, "write attribute", path);
				}
				if (ln_agent_path(a, dp.buf, q) < 0 || stat(q, &bst) < 0) {
					ln_buf_release(&dp);
					return fail(err, ENOENT, "write attribute", path);
				}
				if (!attr_is(a, dir, "buffered_io", "1") && !fx_odirect_ok(a, dp.buf)) {
					ln_buf_release(&dp);
					return fail(err, EINVAL, "write attribute", path);
				}
				ln_buf_release(&dp);
			}
		}
	}
	if (k == FX_SUBSYS && !strcmp(attr, "attr_allow_any_host")) {
		snprintf(p, sizeof(p), "%s/allowed_hosts", dir);
		if (!strcmp(val, "1") && !dir_empty(a, p))
			return fail(err, EINVAL, "write attribute", path);
	}
	r = fx_write(a, path, val);
	if (r < 0)
		return fail(err, -r, "write attribute", path);
	return 0;
}

static int fx_append(const struct ln_agent *a, const char *path, const char *line)
{
	char p[PATH_MAX];
	int fd;
	size_t n = strlen(line);

	if (ln_agent_path(a, path, p) < 0)
		return -ENAMETOOLONG;
	fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, line, n) != (ssize_t)n) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return 0;
}

/* Drop the lines of ROOT/path for which keep() says no. */
static int fx_filter(const struct ln_agent *a, const char *path, const char *drop_field2)
{
	struct ln_buf in = LN_BUF_INIT, out = LN_BUF_INIT, e = LN_BUF_INIT;
	char p[PATH_MAX], *line, *save = NULL;
	int r;

	if (ln_agent_path(a, path, p) < 0)
		return -ENAMETOOLONG;
	r = ln_file_read(p, &in, &e);
	for (line = strtok_r(in.buf, "\n", &save); r == 0 && line;
	     line = strtok_r(NULL, "\n", &save)) {
		char f1[PATH_MAX], f2[PATH_MAX];

		if (sscanf(line, "%4095s %4095s", f1, f2) == 2 && !strcmp(f2, drop_field2))
			continue;
		ln_buf_addf(&out, "%s\n", line);
	}
	if (r == 0)
		r = ln_file_write_atomic(p, out.buf, out.len, 0644, &e);
	ln_buf_release(&in);
	ln_buf_release(&out);
	ln_buf_release(&e);
	return r;
}

static int fx_modprobe(struct ln_agent *a, const char *module, struct ln_buf *err)
{
	char p[PATH_MAX], line[128];
	int r;

	if (ln_module_loaded(a, module))
		return 0;
	if (!ln_valid_name(module, 64)) {
		ln_buf_addf(err, "invalid module name '%s'", module);
		return -EINVAL;
	}
	snprintf(p, sizeof(p), "%s/sys/module/%s", a->root, module);
	r = ln_mkdir_p(p, 0755, err);
	if (r < 0)
		return r;
	snprintf(line, sizeof(line), "%s 16384 0 - Live 0x0000000000000000\n", module);
	r = fx_append(a, "/proc/modules", line);
	if (r < 0)
		return fail(err, -r, "record module", module);
	if (!strcmp(module, "nvmet") && ln_configfs_mounted(a)) {
		static const char *const groups[] = { "subsystems", "ports", "hosts", NULL };

		r = fx_mkdir_plain(a, LN_NVMET);
		if (r == 0)
			r = fx_groups(a, LN_NVMET, groups);
		if (r < 0)
			return fail(err, -r, "create", LN_NVMET);
	}
	return 0;
}

static int rm_rf(const struct ln_agent *a, const char *path)
{
	char p[PATH_MAX], **names;
	size_t n, i;
	int r = 0;

	if (ln_is_dir(a, path) && ln_list_dir(a, path, &names, &n) == 0) {
		for (i = 0; i < n; i++) {
			char sub[PATH_MAX];

			snprintf(sub, sizeof(sub), "%s/%s", path, names[i]);
			rm_rf(a, sub);
		}
		ln_names_free(names, n);
		if (ln_agent_path(a, path, p) < 0 || rmdir(p) < 0)
			r = -errno;
	} else if (ln_agent_path(a, path, p) < 0 || unlink(p) < 0) {
		r = -errno;
	}
	return r;
}

/* Like the kernel: a module with users stays. nvmet is used by any
 * configfs object, a host transport by any controller on it. */
static int fx_module_in_use(const struct ln_agent *a, const char *module)
{
	static const char *const groups[] = { "subsystems", "ports", "hosts", NULL };
	const char *const *g;
	char p[PATH_MAX];

	if (!strcmp(module, "nvmet") || !strncmp(module, "nvmet_", 6)) {
		for (g = groups; *g; g++) {
			snprintf(p, sizeof(p), LN_NVMET "/%s", *g);
			if (!dir_empty(a, p))
				return 1;
		}
		if (!strcmp(module, "nvmet"))
			return ln_module_loaded(a, "nvmet_tcp") || ln_module_loaded(a, "nvmet_rdma");
	}
	if (!strcmp(module, "nvme_tcp") || !strcmp(module, "nvme_rdma")) {
		struct ln_ctrl_list l = { 0 };
		struct ln_buf e = LN_BUF_INIT;
		size_t i;
		int used = 0;

		if (ln_iniops_fixture.scan((struct ln_agent *)a, &l, &e) == 0)
			for (i = 0; i < l.n; i++)
				used |= !strcmp(l.v[i].transport, module + 5);
		free(l.v);
		ln_buf_release(&e);
		return used;
	}
	if (!strcmp(module, "configfs"))
		return ln_configfs_mounted(a) || ln_module_loaded(a, "nvmet");
	return 0;
}

static int fx_rmmod(struct ln_agent *a, const char *module, struct ln_buf *err)
{
	struct ln_buf in = LN_BUF_INIT, out = LN_BUF_INIT, e = LN_BUF_INIT;
	char p[PATH_MAX], *line, *save = NULL;
	int r;

	if (!ln_module_loaded(a, module))
		return 0;
	if (fx_module_in_use(a, module)) {
		ln_buf_addf(err, "modprobe -r %s failed (in use)", module);
		return -EBUSY;
	}
	snprintf(p, sizeof(p), "/sys/module/%s", module);
	rm_rf(a, p);
	if (!strcmp(module, "nvmet"))
		rm_rf(a, LN_NVMET);
	if (ln_agent_path(a, "/proc/modules", p) < 0)
		return -ENAMETOOLONG;
	r = ln_file_read(p, &in, &e);
	for (line = strtok_r(in.buf, "\n", &save); r == 0 && line;
	     line = strtok_r(NULL, "\n", &save)) {
		size_t n = strcspn(line, " ");

		if (n == strlen(module) && !strncmp(line, module, n))
			continue;
		ln_buf_addf(&out, "%s\n", line);
	}
	if (r == 0)
		r = ln_file_write_atomic(p, out.buf, out.len, 0644, &e);
	if (r < 0)
		ln_buf_addf(err, "cannot unload '%s': %s", module, e.buf);
	ln_buf_release(&in);
	ln_buf_release(&out);
	ln_buf_release(&e);
	return r;
}

static int fx_mount_configfs(struct ln_agent *a, struct ln_buf *err)
{
	char p[PATH_MAX];
	int r;

	snprintf(p, sizeof(p), "%s/sys/kernel/config", a->root);
	r = ln_mkdir_p(p, 0755, err);
	if (r < 0)
		return r;
	r = fx_append(a, "/proc/mounts",
		      "configfs /sys/kernel/config configfs rw,nosuid,nodev,noexec,relatime 0 0\n");
	if (r < 0)
		return fail(err, -r, "mount configfs on", "/sys/kernel/config");
	return 0;
}

/* ROOT/etc/llmnet-fixture/no-odirect lists directories whose filesystem
 * refuses O_DIRECT, like tmpfs on the real node. */
static int fx_odirect_ok(struct ln_agent *a, const char *path)
{
	struct ln_buf b = LN_BUF_INIT;
	char *line, *save = NULL;
	int ok = 1;

	if (ln_read_attr(a, "/etc/llmnet-fixture/no-odirect", &b) < 0)
		goto out;
	for (line = strtok_r(b.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(line);

		if (n && !strncmp(path, line, n) && path[n] == '/')
			ok = 0;
	}
out:
	ln_buf_release(&b);
	return ok;
}

static int fx_mount(struct ln_agent *a, const char *dev, const char *path, const char *fs,
		    struct ln_buf *err)
{
	char line[PATH_MAX * 2 + 64];
	int r;

	if (!ln_path_exists(a, dev))
		return fail(err, ENOENT, "mount", dev);
	if (!ln_is_dir(a, path))
		return fail(err, ENOENT, "mount on", path);
	snprintf(line, sizeof(line), "%s %s %s rw,relatime 0 0\n", dev, path, fs);
	r = fx_append(a, "/proc/mounts", line);
	return r < 0 ? fail(err, -r, "mount on", path) : 0;
}

static int fx_umount(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	int r;

	if (!ln_path_mounted(a, path, NULL, 0))
		return fail(err, EINVAL, "unmount", path);
	r = fx_filter(a, "/proc/mounts", path);
	return r < 0 ? fail(err, -r, "unmount", path) : 0;
}

static int fx_mkfs(struct ln_agent *a, const char *dev, const char *fs, struct ln_buf *err)
{
	char p[PATH_MAX];

	if (ln_agent_path(a, dev, p) < 0)
		return -ENAMETOOLONG;
	return run_mkfs(p, fs, err);
}

const struct ln_fsops ln_fsops_fixture = {
	.name = "fixture",
	.mkdir = fx_mkdir,
	.rmdir = fx_rmdir,
	.symlink = fx_symlink,
	.unlink = fx_unlink,
	.write_attr = fx_write_attr,
	.modprobe = fx_modprobe,
	.rmmod = fx_rmmod,
	.mount_configfs = fx_mount_configfs,
	.odirect_ok = fx_odirect_ok,
	.mount = fx_mount,
	.umount = fx_umount,
	.mkfs = fx_mkfs,
};
