// SPDX-License-Identifier: MIT
/*
 * The in-use gate for files (inuse.h): a file is compared by identity
 * (device and inode) with every active swap file and every loop device's
 * backing file, so another name for the same file (a hard link, a path
 * through a bind mount) is caught as well as the same name.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* 1 when the node path p is the file st describes. The kernel names swap
 * and loop backing files by the path it resolved, so p is looked at as
 * the kernel sees it (links followed); only the identity is compared. */
static int same_file(const struct ln_agent *a, const char *p, const struct stat *st)
{
	char full[PATH_MAX];
	struct stat o;

	return p[0] == '/' && ln_agent_path(a, p, full) == 0 && stat(full, &o) == 0 &&
	       S_ISREG(o.st_mode) && o.st_dev == st->st_dev && o.st_ino == st->st_ino;
}

/* 1 with the swap entry into who when st is an active swap file. */
static int swap_file(const struct ln_agent *a, const struct stat *st, char *who, size_t n)
{
	struct ln_buf b = LN_BUF_INIT;
	char *line, *save = NULL;
	int found = 0;

	if (ln_read_attr(a, "/proc/swaps", &b) == 0) {
		line = strtok_r(b.buf, "\n", &save);	/* the header */
		while (!found && line && (line = strtok_r(NULL, "\n", &save))) {
			char f[PATH_MAX];

			if (sscanf(line, "%4095s", f) != 1)
				continue;
			ln_inuse_unescape(f);
			if ((found = same_file(a, f, st)))
				snprintf(who, n, "%s", f);
		}
	}
	ln_buf_release(&b);
	return found;
}

/* 1 with the loop device into who when st backs one. */
static int loop_backing(const struct ln_agent *a, const struct stat *st, char *who, size_t n)
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
		/* a deleted backing file reads "PATH (deleted)": no file there is it */
		if (ln_read_attr(a, p, &b) == 0 && b.len && (found = same_file(a, b.buf, st)))
			snprintf(who, n, "/dev/%s", names[i]);
	}
	ln_names_free(names, nn);
	ln_buf_release(&b);
	return found;
}

int ln_inuse_file(const struct ln_agent *a, const char *path, const struct stat *st,
		  struct ln_buf *err)
{
	char who[PATH_MAX];

	if (swap_file(a, st, who, sizeof(who))) {
		ln_buf_addf(err, "'%s' is in use as swap (%s in /proc/swaps); llmnet does not "
			    "export a swap file: swapoff it first, or name another file", path, who);
		return -EBUSY;
	}
	if (loop_backing(a, st, who, sizeof(who))) {
		ln_buf_addf(err, "'%s' is the backing file of loop device %s; llmnet does not "
			    "export it: detach the loop device (losetup -d %s) first, or name "
			    "another file", path, who, who);
		return -EBUSY;
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

int ln_inuse_fabric_of(const struct ln_agent *a, const char *name, struct ln_inuse_ctrl *f)
{
	struct ln_buf nqn = LN_BUF_INIT;
	char dev[PATH_MAX], full[PATH_MAX], link[PATH_MAX];
	const char *base;
	ssize_t r;
	int fabric;

	memset(f, 0, sizeof(*f));
	if (strncmp(name, "nvme", 4))
		return 0;
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
