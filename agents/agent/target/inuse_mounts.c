// SPDX-License-Identifier: MIT
/*
 * The mount table, read for the in-use gate (inuse.h): which mount holds a
 * place, and what kind of file system it is. Pure text in, one line out,
 * so the same code reads a node's /proc/self/mountinfo and a fixture's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent/target/inuse.h"

struct row {
	struct ln_mount m;
	int id, parent;
};

/* 1 when the node path p is the mount point m or lies below it. */
static int under(const char *p, const char *m)
{
	size_t n = strlen(m);

	if (!strcmp(m, "/"))
		return p[0] == '/';
	return !strncmp(p, m, n) && (p[n] == '\0' || p[n] == '/');
}

/* One line of mountinfo ("36 35 98:0 / /mnt rw - ext4 /dev/sda1 rw") or
 * /proc/mounts ("/dev/sda1 /mnt ext4 rw 0 0") into r; 0 when it is none. */
static int parse_line(const char *line, int mountinfo, struct row *r)
{
	const char *dash;

	memset(r, 0, sizeof(*r));
	if (mountinfo) {
		dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%d %d %*s %*s %4095s", &r->id, &r->parent,
				    r->m.point) != 3 ||
		    sscanf(dash + 3, "%63s %4095s", r->m.fstype, r->m.source) < 1)
			return 0;
	} else if (sscanf(line, "%4095s %4095s %63s", r->m.source, r->m.point, r->m.fstype) != 3) {
		return 0;
	}
	ln_inuse_unescape(r->m.point);
	ln_inuse_unescape(r->m.source);
	return r->m.point[0] == '/';
}

/* Every line of text into *rows; the count. */
static size_t parse(const char *text, int mountinfo, struct row **rows)
{
	char *copy = strdup(text ? text : ""), *line, *save = NULL;
	size_t n = 0, cap = 0;
	struct row r, *v = NULL, *nv;

	for (line = copy ? strtok_r(copy, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!parse_line(line, mountinfo, &r))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[n++] = r;
	}
	free(copy);
	*rows = v;
	return n;
}

/* mountinfo: the root mount (at "/", its parent not listed: the
 * namespace's root), then down the tree: among the mounts on the current
 * one whose point is on the way to path, the shallowest is what a lookup
 * crosses first (a deeper one beside it is hidden); at one point, the
 * one mounted over the others is a child of it and is crossed next. */
static long walk_tree(const struct row *v, size_t n, const char *path)
{
	long cur = -1, best;
	size_t i, j, steps;

	for (i = 0; i < n && cur < 0; i++) {
		int listed = 0;

		for (j = 0; j < n && !listed; j++)
			listed = j != i && v[j].id == v[i].parent;
		if (!strcmp(v[i].m.point, "/") && !listed)
			cur = (long)i;
	}
	for (i = 0; i < n && cur < 0; i++)
		if (!strcmp(v[i].m.point, "/"))
			cur = (long)i;
	for (steps = 0; cur >= 0 && steps < n; steps++) {
		best = -1;
		for (i = 0; i < n; i++)
			if ((long)i != cur && v[i].parent == v[cur].id && under(path, v[i].m.point) &&
			    under(v[i].m.point, v[cur].m.point) &&
			    (best < 0 || strlen(v[i].m.point) <= strlen(v[best].m.point)))
				best = (long)i;
		if (best < 0)
			break;
		cur = best;
	}
	return cur;
}

/* /proc/mounts has no tree: the longest mount point, the last of equal ones. */
static long longest(const struct row *v, size_t n, const char *path)
{
	long best = -1;
	size_t i;

	for (i = 0; i < n; i++)
		if (under(path, v[i].m.point) &&
		    (best < 0 || strlen(v[i].m.point) >= strlen(v[best].m.point)))
			best = (long)i;
	return best;
}

int ln_inuse_mount_of(const char *text, int mountinfo, const char *path, struct ln_mount *m)
{
	struct row *v = NULL;
	size_t n = parse(text, mountinfo, &v);
	long i = mountinfo ? walk_tree(v, n, path) : longest(v, n, path);

	if (i >= 0)
		*m = v[i].m;
	free(v);
	return i >= 0;
}

int ln_inuse_mount_by_id(const char *text, unsigned long long id, int parent,
			 struct ln_mount *m)
{
	struct row *v = NULL;
	size_t n = parse(text, 1, &v), i;
	long hit = -1, up = -1;

	for (i = 0; i < n && hit < 0; i++)
		if (v[i].id >= 0 && (unsigned long long)v[i].id == id)
			hit = (long)i;
	for (i = 0; parent && hit >= 0 && i < n && up < 0; i++)
		if ((long)i != hit && v[i].id == v[hit].parent)
			up = (long)i;
	if (parent)
		hit = up;
	if (hit >= 0)
		*m = v[hit].m;
	free(v);
	return hit >= 0;
}

const char *ln_inuse_remote_fs(const char *fstype)
{
	/* file systems whose bytes another machine serves or shares (cluster
	 * file systems on a shared disk too): ownership and content are
	 * whatever that machine says */
	static const char *const net[] = {
		"nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "9p", "lustre",
		"beegfs", "gpfs", "afs", "ocfs2", "gfs2", "orangefs", "pvfs2", "ncpfs", "coda",
		"davfs", "virtiofs", NULL,
	};
	size_t i;

	if (!strcmp(fstype, "fuse") || !strcmp(fstype, "fuseblk") || !strncmp(fstype, "fuse.", 5))
		return "a FUSE file system";
	for (i = 0; net[i]; i++)
		if (!strcmp(fstype, net[i]))
			return "a network file system";
	return NULL;
}
