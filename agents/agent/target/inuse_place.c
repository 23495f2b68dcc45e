// SPDX-License-Identifier: MIT
/*
 * The in-use gate for places (inuse.h): where the agent writes a file,
 * mounts, or runs programs from. A place is judged by the mount that holds
 * it (inuse_mounts.c) and by what is already there, opened without links
 * and compared by identity with what other clusters and namespaces use.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#include "agents/agent/converge/state.h"
#include "agents/agent/core/agent.h"
#include "agents/agent/kernel/paths.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/target/blockdev.h"
#include "agents/agent/target/inuse.h"
#include "common/buf.h"
#include "common/json.h"

#define NVMET_SUBS "/sys/kernel/config/nvmet/subsystems"

/* O_NOFOLLOW one component at a time from the root's fd: the walk for a
 * kernel without openat2 (ENOSYS; older than 5.6). */
static int open_walk(int fd, const char *rel)
{
	char comp[NAME_MAX + 1];
	const char *e;
	int nfd;

	fd = dup(fd);
	while (fd >= 0 && *rel) {
		e = strchr(rel, '/');
		if (!e)
			e = rel + strlen(rel);
		if ((size_t)(e - rel) > NAME_MAX) {
			close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		snprintf(comp, sizeof(comp), "%.*s", (int)(e - rel), rel);
		rel = *e ? e + 1 : e;
		if (!comp[0] || !strcmp(comp, "."))
			continue;
		nfd = openat(fd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = nfd;
	}
	return fd;
}

/* The node path p opened O_PATH without following any link and never
 * leaving the root: the fd, or -errno. */
static int place_open(const struct ln_agent *a, const char *p)
{
	int root = open(a->root[0] ? a->root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC), fd = -1, r;
	const char *rel = p;

	if (root < 0)
		return -errno;
	while (*rel == '/')
		rel++;
#ifdef SYS_openat2
	{
		struct open_how how = {
			.flags = O_PATH | O_CLOEXEC,
			.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH,
		};

		fd = (int)syscall(SYS_openat2, root, *rel ? rel : ".", &how, sizeof(how));
		if (fd < 0 && errno != ENOSYS) {
			r = -errno;
			close(root);
			return r;
		}
	}
#endif
	if (fd < 0)
		fd = open_walk(root, rel);
	r = fd < 0 ? -errno : fd;
	close(root);
	return r;
}

/* What is at the node path p, opened by place_open, then fstat'ed: the
 * decision is on that inode, not on a path resolved again later. 0 with
 * st, else -errno. */
static int place_stat(const struct ln_agent *a, const char *p, struct stat *st)
{
	int fd = place_open(a, p), r;

	if (fd < 0)
		return fd;
	r = fstat(fd, st) < 0 ? -errno : 0;
	close(fd);
	return r;
}

/* The mount id of the mount that holds the node path path: its own, or
 * (missing) the nearest directory's above it, each opened by place_open;
 * 0 with id, negative when the kernel (or the fixture) cannot say. */
static int place_mount_id(const struct ln_agent *a, const char *path, unsigned long long *id)
{
	char p[PATH_MAX], *slash;
	int fd, r;

	if (!a->fs || !a->fs->mount_id)
		return -ENOSYS;
	snprintf(p, sizeof(p), "%s", path);
	while ((fd = place_open(a, p[0] ? p : "/")) == -ENOENT && p[0]) {
		slash = strrchr(p, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	if (fd < 0)
		return fd;
	r = a->fs->mount_id(a, fd, id);
	close(fd);
	return r;
}

/* The mount that holds path (up: the mount that one is mounted on, for a
 * place that is itself a mount point), by the opened place's mount id
 * when there is one in mountinfo, else down the mount table's tree by
 * path (inuse.h). 1 with m, 0 when none. */
static int mount_holding(const struct ln_agent *a, const char *tab, int mi, const char *path,
			 int up, struct ln_mount *m)
{
	unsigned long long id;
	char parent[PATH_MAX];

	if (mi && place_mount_id(a, path, &id) == 0 && ln_inuse_mount_by_id(tab, id, up, m))
		return 1;
	if (!up)
		return ln_inuse_mount_of(tab, mi, path, m);
	snprintf(parent, sizeof(parent), "%s", path);
	*strrchr(parent, '/') = '\0';
	return ln_inuse_mount_of(tab, mi, parent[0] ? parent : "/", m);
}

/* The file the kernel uses at the node path p (links followed, as nvmet
 * and the state's own writes resolve it): 1 when it is st's inode. */
static int same_inode(const struct ln_agent *a, const char *p, const struct stat *st)
{
	char full[PATH_MAX];
	struct stat o;

	return p[0] == '/' && ln_agent_path(a, p, full) == 0 && stat(full, &o) == 0 &&
	       o.st_dev == st->st_dev && o.st_ino == st->st_ino;
}

/* 1 when q lies strictly below the directory p. */
static int below(const char *q, const char *p)
{
	size_t n = strlen(p);

	return !strcmp(p, "/") ? q[0] == '/' && q[1] : !strncmp(q, p, n) && q[n] == '/';
}

/* What makes the block device name unfit to build on, onto why: a loop
 * device (unless programs), a fabric namespace, or a partition or
 * device-mapper/md device made of one. 1 when one is. */
static int device_unfit(const struct ln_agent *a, const char *name, int loop_ok, int depth,
			struct ln_buf *why)
{
	struct ln_inuse_ctrl f;
	char p[PATH_MAX], parent[NAME_MAX + 1];
	char **names = NULL;
	size_t n = 0, i;
	int bad = 0;

	if (!strncmp(name, "loop", 4) && name[4] && strspn(name + 4, "0123456789") == strlen(name + 4)) {
		if (loop_ok)
			return 0;
		ln_buf_addf(why, "a loop device (/dev/%s), whose bytes are a file's", name);
		return 1;
	}
	/* a partition: judged as its disk */
	if (ln_inuse_partition_disk(a, name, parent, sizeof(parent)))
		return depth < 4 && device_unfit(a, parent, loop_ok, depth + 1, why);
	if (ln_inuse_fabric_of(a, name, &f)) {
		ln_buf_addf(why, "a namespace (%s) of ", name);
		ln_inuse_ctrl_describe(&f, why);
		return 1;
	}
	/* dm (LVM, crypt) and md: what it is made of */
	snprintf(p, sizeof(p), "/sys/block/%s/slaves", name);
	ln_list_dir(a, p, &names, &n);
	for (i = 0; !bad && depth < 4 && i < n; i++) {
		bad = device_unfit(a, names[i], loop_ok, depth + 1, why);
		if (bad)
			ln_buf_addf(why, ", under /dev/%s", name);
	}
	ln_names_free(names, n);
	return bad;
}

/* The cluster other than cluster that records (kind, id), or NULL. */
static const char *other(struct ln_state *st, const char *cluster, const char *kind,
			 const char *id)
{
	return st ? ln_state_other_owner(st, cluster, kind, id) : NULL;
}

static const char *doing(enum ln_place_use use)
{
	switch (use) {
	case LN_PLACE_MOUNT:
		return "llmnet mounts only on file systems of the node's own disks";
	case LN_PLACE_PROGRAMS:
		return "llmnet runs programs only from file systems of the node's own disks";
	default:
		return "llmnet writes backing files and hostfiles only on file systems of the "
		       "node's own disks";
	}
}

/* The file system m that holds path: refused when it is another
 * cluster's mount, remote, or on a device unfit to build on. */
static int judge_mount(const struct ln_agent *a, struct ln_state *st, const char *cluster,
		       const char *what, const char *path, const struct ln_mount *m,
		       enum ln_place_use use, struct ln_buf *err)
{
	struct ln_buf why = LN_BUF_INIT, scratch = LN_BUF_INIT;
	const char *remote = ln_inuse_remote_fs(m->fstype), *o = other(st, cluster, "mount", m->point);
	struct ln_blockdev bd;
	int bad = 0;

	if (remote) {
		ln_buf_addf(&why, "%s, whose owners, modes and bytes another machine decides", remote);
		bad = 1;
	} else if (!strncmp(m->source, "/dev/", 5)) {
		const char *name = strrchr(m->source, '/') + 1;

		if (ln_blockdev_resolve(a, m->source, &bd, &scratch) == 0)
			name = bd.name;
		bad = device_unfit(a, name, use == LN_PLACE_PROGRAMS, 0, &why);
	}
	if (!bad && o) {
		ln_buf_addf(&why, "cluster '%s''s mount", o);
		bad = 1;
	}
	if (bad) {
		ln_buf_addf(err, "%s '%s' is on the file system mounted at '%s' (source %s, %s%s%s%s), "
			    "%s; %s", what, path, m->point, m->source[0] ? m->source : "none",
			    m->fstype, o ? ", mounted by cluster '" : "", o ? o : "", o ? "'" : "",
			    why.buf, doing(use));
		if (o)
			ln_buf_addstr(err, ", and never inside another cluster's objects");
	}
	ln_buf_release(&why);
	ln_buf_release(&scratch);
	return bad ? -EBUSY : 0;
}

/* Another cluster's mount point, backing file or hostfile that path is,
 * is inside, or holds (by name, or by identity when here is set). */
static int nesting(const struct ln_agent *a, struct ln_state *st, const char *cluster,
		   const char *what, const char *path, const struct stat *here, struct ln_buf *err)
{
	struct json_object *names = ln_state_clusters(st);
	size_t i, j, nc = json_object_array_length(names);
	/* the record kind of what is made at path */
	const char *same = !strcmp(what, "mount point") ? "mount" :
			   !strcmp(what, "hostfile") ? "hostfile" : "backing_file";
	int rc = 0;

	for (i = 0; !rc && i < nc; i++) {
		const char *c = json_object_get_string(json_object_array_get_idx(names, i));
		struct json_object *objs = ln_state_objects(st, c);
		size_t n = objs ? json_object_array_length(objs) : 0;

		if (!strcmp(c, cluster))
			continue;
		for (j = 0; !rc && j < n; j++) {
			struct json_object *o = json_object_array_get_idx(objs, j);
			const char *k = ln_json_str_at(o, "kind"), *id = ln_json_str_at(o, "id");
			const char *how;

			if (!k || !id || (strcmp(k, "mount") && strcmp(k, "backing_file") &&
					  strcmp(k, "hostfile")))
				continue;
			if (!strcmp(id, path) && !strcmp(k, same))
				continue;	/* the caller's "belongs to cluster" */
			if (!strcmp(id, path))
				how = "is";
			else if (below(path, id))
				how = "is inside";
			else if (below(id, path))
				how = "holds";
			else if (here && strcmp(k, "mount") && same_inode(a, id, here))
				how = "is the same file as";
			else
				continue;
			ln_buf_addf(err, "%s '%s' %s cluster '%s''s %s '%s'; llmnet never puts one "
				    "cluster's mount points, backing files or hostfiles inside, over "
				    "or on another's", what, path, how, c,
				    !strcmp(k, "mount") ? "mount point" :
				    !strcmp(k, "hostfile") ? "hostfile" : "backing file", id);
			rc = -EBUSY;
		}
	}
	json_object_put(names);
	return rc;
}

/* A namespace in nvmet configfs, not this cluster's, whose device_path is
 * the file here (by identity: a hard link or a path through a link is
 * the same file). */
static int exported(const struct ln_agent *a, struct ln_state *st, const char *cluster,
		    const char *what, const char *path, const struct stat *here,
		    struct ln_buf *err)
{
	char **subs = NULL, **nss = NULL, p[PATH_MAX], who[PATH_MAX];
	struct ln_buf v = LN_BUF_INIT;
	size_t nsub = 0, nns = 0, i, j;
	int rc = 0;

	ln_list_dir(a, NVMET_SUBS, &subs, &nsub);
	for (i = 0; !rc && i < nsub; i++) {
		snprintf(p, sizeof(p), NVMET_SUBS "/%s/namespaces", subs[i]);
		ln_list_dir(a, p, &nss, &nns);
		for (j = 0; !rc && j < nns; j++) {
			const char *o;

			snprintf(who, sizeof(who), "%s/%s", subs[i], nss[j]);
			if (st && cluster && ln_state_find(st, cluster, "nvmet_namespace", who))
				continue;
			snprintf(p, sizeof(p), NVMET_SUBS "/%s/namespaces/%s/device_path", subs[i],
				 nss[j]);
			ln_buf_reset(&v);
			if (ln_read_attr(a, p, &v) < 0 || !v.len || !same_inode(a, v.buf, here))
				continue;
			o = other(st, cluster, "nvmet_namespace", who);
			ln_buf_addf(err, "%s '%s' is already exported by namespace '%s' (device_path "
				    "%s, %s%s%s); llmnet does not share a backing file", what, path,
				    who, v.buf, o ? "cluster '" : "not made by llmnet", o ? o : "",
				    o ? "'" : "");
			rc = -EBUSY;
		}
		ln_names_free(nss, nns);
	}
	ln_names_free(subs, nsub);
	ln_buf_release(&v);
	return rc;
}

int ln_inuse_place(const struct ln_agent *a, struct ln_state *st, const char *cluster,
		   const char *what, const char *path, enum ln_place_use use,
		   struct ln_buf *err)
{
	struct ln_buf tab = LN_BUF_INIT;
	struct ln_mount m;
	struct stat here;
	int mi = 1, rc = 0, found, have;

	if (ln_read_attr(a, "/proc/self/mountinfo", &tab) < 0) {
		mi = 0;
		ln_buf_reset(&tab);
		if (ln_read_attr(a, "/proc/mounts", &tab) < 0)
			ln_buf_reset(&tab);
	}
	found = mount_holding(a, tab.buf, mi, path, 0, &m);
	if (found && !strcmp(m.point, path) && use != LN_PLACE_PROGRAMS && strcmp(path, "/")) {
		const char *o = other(st, cluster, "mount", path);
		int own = st && cluster && ln_state_find(st, cluster, "mount", path);

		/* an unrecorded mount under a mount point is the mount code's to
		 * name (it compares its device with the namespace's) */
		if (o || (!own && use == LN_PLACE_FILE)) {
			ln_buf_addf(err, "%s '%s' is a mount point (source %s, %s) that ", what,
				    path, m.source[0] ? m.source : "none", m.fstype);
			if (o)
				ln_buf_addf(err, "cluster '%s' mounted", o);
			else
				ln_buf_addstr(err, "llmnet did not make for this cluster");
			ln_buf_addstr(err, "; llmnet never writes over, or mounts on, a mount point "
				      "someone else made");
			rc = -EBUSY;
			goto out;
		}
		/* the place is mounted on: what matters is what it is on */
		found = mount_holding(a, tab.buf, mi, path, 1, &m);
	}
	if (found && (rc = judge_mount(a, st, cluster, what, path, &m, use, err)) < 0)
		goto out;
	have = place_stat(a, path, &here) == 0;
	if (st && cluster && (rc = nesting(a, st, cluster, what, path, have ? &here : NULL, err)) < 0)
		goto out;
	if (use == LN_PLACE_FILE && have && S_ISREG(here.st_mode))
		rc = exported(a, st, cluster, what, path, &here, err);
out:
	ln_buf_release(&tab);
	return rc;
}

int ln_inuse_program_file(const struct ln_agent *a, const char *path, struct ln_buf *err)
{
	char dir[PATH_MAX];
	const char *e = strrchr(path, '/');

	snprintf(dir, sizeof(dir), "%.*s", e && e != path ? (int)(e - path) : 1, path);
	return ln_inuse_place(a, NULL, NULL, "program folder", dir, LN_PLACE_PROGRAMS, err);
}
