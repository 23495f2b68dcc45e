/* SPDX-License-Identifier: MIT */
/*
 * The check pass's rules on what llmnet writes on a node's file system:
 * a namespace mounted by one node only (ext4 and xfs are single-host file
 * systems), and the hostfile, backing files and mount points kept apart,
 * none equal to, inside or above another on the same node. Called from
 * check.c once references are resolved; linear but for one sort.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/places.h"
#include "orchestrator/spec/check.h"

/* ---- one node per mounted namespace ----------------------------------- */

int spec_mounters_init(struct spec_mounters *m, size_t n_targets)
{
	m->first = calloc(n_targets + 1, sizeof(*m->first));
	m->second = calloc(n_targets + 1, sizeof(*m->second));
	m->count = calloc(n_targets + 1, sizeof(*m->count));
	m->n_targets = n_targets;
	if (!m->first || !m->second || !m->count)
		return -ENOMEM;
	return 0;
}

void spec_mounters_add(struct spec_mounters *m, size_t ti, size_t ii)
{
	if (!m->count[ti]++)
		m->first[ti] = (uint32_t)ii;
	else if (m->count[ti] == 2)
		m->second[ti] = (uint32_t)ii;
}

/*
 * Two nodes mounting one namespace read-write each keep their own idea of
 * the file system's allocation and journal: ext4 and xfs corrupt, and
 * with `format: if-blank` each node may even make the file system on a
 * blank device at once. One message per target, at the second mount.
 */
void spec_mounters_report(struct spec_mounters *m, struct ln_spec *spec)
{
	size_t ti;

	for (ti = 0; ti < m->n_targets; ti++) {
		const struct ln_initiator *a, *b;
		char more[48] = "";

		if (m->count[ti] < 2)
			continue;
		a = &spec->initiators[m->first[ti]];
		b = &spec->initiators[m->second[ti]];
		if (m->count[ti] > 2)
			snprintf(more, sizeof(more), " and %u more", m->count[ti] - 2);
		spec_diag(spec, b->mount.mark,
			  "target '%s' is mounted on %u nodes ('%s' on line %u, '%s'%s): %s is a "
			  "single-host file system, so nodes mounting one namespace at once corrupt "
			  "it%s; mount it on one node",
			  spec->targets[ti].nqn, m->count[ti], spec->nodes[a->node].name,
			  a->mount.mark.line, spec->nodes[b->node].name, more,
			  b->mount.fs ? b->mount.fs : "the file system",
			  a->mount.format == LN_FORMAT_IF_BLANK ||
					  b->mount.format == LN_FORMAT_IF_BLANK ?
				  ", and with 'format: if-blank' each may format it" : "");
	}
}

void spec_mounters_release(struct spec_mounters *m)
{
	free(m->first);
	free(m->second);
	free(m->count);
}

/* Initiator i (resolved) mounts: its target has one namespace, so which
 * one it means is never in doubt. */
void spec_check_mount_ns(struct ln_spec *spec, size_t i)
{
	const struct ln_initiator *in = &spec->initiators[i];
	const struct ln_target *t = &spec->targets[in->target];

	if (t->n_namespaces > 1)
		spec_diag(spec, in->mount.mark,
			  "initiator on '%s' mounts target '%s', which has %zu namespaces: a "
			  "mount needs a target with one namespace, so which one it means is "
			  "never in doubt (give the mounted one a target of its own)",
			  spec->nodes[in->node].name, t->nqn, t->n_namespaces);
}

/* ---- paths llmnet writes on a node ------------------------------------ */

enum wkind { W_FILE, W_MOUNT };

/* A path llmnet writes on one node: a backing file or a mount point. */
struct wpath {
	const char *path;
	uint32_t node;
	uint32_t kind;
	size_t owner;			/* namespace (W_FILE) or initiator (W_MOUNT) */
	struct ln_mark mark;
};

static const char *const kind_name[] = { "backing file", "mount point" };

/* Paths in an order where everything below a folder follows it at once:
 * '/' sorts before every other byte ("/a", "/a/b", "/a-b"). */
static int cmp_wpath(const void *pa, const void *pb)
{
	const struct wpath *a = pa, *b = pb;
	const unsigned char *x = (const unsigned char *)a->path, *y = (const unsigned char *)b->path;

	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	for (; *x && *x == *y; x++, y++)
		;
	if (*x == *y)
		return a->owner < b->owner ? -1 : a->owner > b->owner;
	return (*x == '/' ? 1 : *x) - (*y == '/' ? 1 : *y);
}

/* How path a stands to path b: "is", "is inside", "holds", or NULL. */
static const char *relation(const char *a, const char *b)
{
	if (!strcmp(a, b))
		return "is";
	if (ln_path_under(a, b))
		return "is inside";
	if (ln_path_under(b, a))
		return "holds";
	return NULL;
}

/* A path that broke its pattern or names a system place was reported by
 * the parser: left out here, so it is not reported twice. */
static int refused(struct ln_spec *spec, const char *path)
{
	struct ln_buf *why = &spec->store->scratch;
	int r;

	ln_buf_reset(why);
	r = spec_pattern_check(SP_OWNPATH, "path", path, why) < 0;
	ln_buf_reset(why);
	return r;
}

static int collect(struct ln_spec *spec, struct wpath **out, size_t *n)
{
	struct ln_spec_store *st = spec->store;
	struct wpath *w;
	size_t i, k, off = 0;

	*n = 0;
	*out = w = malloc((st->n_nss + spec->n_initiators + 1) * sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (i = 0; i < spec->n_targets; i++) {
		const struct ln_target *t = &spec->targets[i];
		long ni = ln_spec_node_index(spec, st->target_raw[i].node);

		for (k = 0; k < t->n_namespaces && ni >= 0; k++)
			if (t->namespaces[k].file && !refused(spec, t->namespaces[k].file))
				w[(*n)++] = (struct wpath){ t->namespaces[k].file, (uint32_t)ni,
							    W_FILE, off + k,
							    t->namespaces[k].mark };
		off += t->n_namespaces;
	}
	for (i = 0; i < spec->n_initiators; i++) {
		const struct ln_initiator *in = &spec->initiators[i];
		long ni = ln_spec_node_index(spec, st->init_raw[i].node);

		if (ni >= 0 && in->mount.present && in->mount.path &&
		    !refused(spec, in->mount.path))
			w[(*n)++] = (struct wpath){ in->mount.path, (uint32_t)ni, W_MOUNT, i,
						    in->mount.mark };
	}
	return 0;
}

/* The hostfile goes to every node: apart from every backing file and
 * mount point of any node. One message per kind, at the hostfile when
 * the spec writes it. */
static void check_hostfile(struct ln_spec *spec, const struct wpath *w, size_t n)
{
	const struct ln_mpi_spec *mpi = &spec->mpi;
	int said[2] = { 0, 0 };
	size_t i;

	if (!mpi->hostfile || refused(spec, mpi->hostfile))
		return;
	for (i = 0; i < n; i++) {
		const char *rel = relation(mpi->hostfile, w[i].path);

		if (!rel || said[w[i].kind])
			continue;
		said[w[i].kind] = 1;
		spec_diag(spec, mpi->hostfile_mark.line ? mpi->hostfile_mark : w[i].mark,
			  "hostfile '%s' %s %s '%s' of node '%s' (line %u): the hostfile is written "
			  "on every node, apart from every backing file and mount point",
			  mpi->hostfile, rel, kind_name[w[i].kind], w[i].path,
			  spec->nodes[w[i].node].name, w[i].mark.line);
	}
}

/*
 * On one node no path llmnet writes may be inside another (a backing file
 * inside a mounted file system, a mount point inside a backing file or
 * another mount): sorted by node and path, each path is checked against
 * the nearest of the paths above it, kept on a stack. The same backing
 * file twice and the same mount point twice are the rules of check.c.
 */
int spec_check_paths(struct ln_spec *spec)
{
	struct wpath *w = NULL;
	size_t *stack = NULL, n, i, depth = 0;
	int r;

	r = collect(spec, &w, &n);
	if (r < 0)
		goto out;
	check_hostfile(spec, w, n);
	qsort(w, n, sizeof(*w), cmp_wpath);
	stack = malloc((n + 1) * sizeof(*stack));
	if (!stack) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct wpath *a, *b = &w[i];

		while (depth && (w[stack[depth - 1]].node != b->node ||
				 !ln_path_under(b->path, w[stack[depth - 1]].path)))
			depth--;
		a = depth ? &w[stack[depth - 1]] : NULL;
		if (a && (a->kind != b->kind || strcmp(a->path, b->path)))
			spec_diag(spec, b->mark,
				  "%s '%s' on node '%s' %s %s '%s' (line %u): llmnet writes both, so "
				  "neither may be inside the other", kind_name[b->kind], b->path,
				  spec->nodes[b->node].name, relation(b->path, a->path),
				  kind_name[a->kind], a->path, a->mark.line);
		stack[depth++] = i;
	}
	r = 0;
out:
	free(stack);
	free(w);
	return r;
}
