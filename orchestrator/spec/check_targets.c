/* SPDX-License-Identifier: MIT */
/*
 * The check pass's rules for the targets: each NQN once, the node a
 * target is on (and an RDMA port there when it uses rdma), its address
 * defaulted to that node's first RDMA ip, its namespaces (an nsid once in
 * a target, a backing file or device once on a node), and its 'hosts'
 * entries resolved into (target, node) pairs (check_refs.c). Runs after
 * the nodes, whose name index it reads.
 */
#include <errno.h>
#include <stdlib.h>

#include "orchestrator/spec/check.h"

/* What the backing index hashes through: the target of each namespace. */
struct ns_owner {
	const struct ln_spec *spec;
	const struct ln_spec_store *st;
	uint32_t *ns_target;		/* target index of each namespace */
};

/* A namespace's backing object on its node: (node, file or device). */
static const char *ns_backing(const struct ns_owner *o, uint32_t i)
{
	const struct ln_namespace *ns = &o->st->nss[i];

	return ns->file ? ns->file : ns->device;
}

static uint64_t h_backing(const void *c, uint32_t i)
{
	const struct ns_owner *o = c;

	return spec_hash_str(ns_backing(o, i), HASH_SEED ^ o->spec->targets[o->ns_target[i]].node);
}

static int eq_backing(const void *c, uint32_t a, uint32_t b)
{
	const struct ns_owner *o = c;

	return o->spec->targets[o->ns_target[a]].node == o->spec->targets[o->ns_target[b]].node &&
	       spec_streq(ns_backing(o, a), ns_backing(o, b));
}

/* Namespaces (st->nss) by nsid. */
static int cmp_nsid(const void *c, uint32_t a, uint32_t b)
{
	const struct ln_namespace *ns = c;

	if (ns[a].nsid != ns[b].nsid)
		return ns[a].nsid < ns[b].nsid ? -1 : 1;
	return 0;
}

/* Target i's namespaces, st->nss[off...]: duplicate nsids in the target
 * (order: scratch for their sort) and backing files or devices already
 * used on the same node. */
static void check_target_namespaces(struct ln_spec *spec, const struct ns_owner *o, size_t i,
				    long ni, size_t off, uint32_t *order,
				    struct spec_idxmap *backing)
{
	struct ln_spec_store *st = spec->store;
	const struct ln_target *t = &spec->targets[i];
	size_t k;
	long other;

	spec_sort_idx(order, t->n_namespaces, off, cmp_nsid, st->nss);
	for (k = 0; k < t->n_namespaces; k++) {
		struct ln_namespace *ns = &st->nss[off + k];

		o->ns_target[off + k] = (uint32_t)i;
		if (k && st->nss[order[k - 1]].nsid == st->nss[order[k]].nsid &&
		    st->nss[order[k]].nsid)
			spec_diag(spec, st->nss[order[k]].mark,
				  "duplicate nsid %u in target '%s' (first on line %u)",
				  st->nss[order[k]].nsid, t->nqn, st->nss[order[k - 1]].mark.line);
		/* file/size/device rules are the parser's (check_namespace) */
		if ((ns->file && ns->device) || (!ns->file && !ns->device))
			continue;
		if (ni < 0)
			continue;
		other = spec_idxmap_insert(backing, (uint32_t)(off + k));
		if (other >= 0)
			spec_diag(spec, ns->mark,
				  "'%s' on node '%s' already backs namespace %u of '%s' (line %u)",
				  ns_backing(o, (uint32_t)(off + k)), spec->nodes[ni].name,
				  st->nss[other].nsid, spec->targets[o->ns_target[other]].nqn,
				  st->nss[other].mark.line);
	}
}

int spec_check_targets(struct spec_check_ctx *x)
{
	struct ln_spec *spec = x->spec;
	struct ln_spec_store *st = x->st;
	struct ns_owner owner = { spec, st, NULL };
	struct spec_idxmap backing = { 0 };
	uint32_t *order = NULL, *stamp = NULL;
	size_t i, k, off = 0, hoff = 0, maxns = 0;
	int r, too_many;

	r = spec_target_index_init(spec);
	if (r < 0)
		goto out;
	owner.ns_target = malloc((st->n_nss + 1) * sizeof(*owner.ns_target));
	stamp = calloc(spec->n_nodes + 1, sizeof(*stamp));
	for (i = 0; i < spec->n_targets; i++)
		if (spec->targets[i].n_namespaces > maxns)
			maxns = spec->targets[i].n_namespaces;
	order = malloc((maxns + 1) * sizeof(*order));
	if (!owner.ns_target || !stamp || !order) {
		r = -ENOMEM;
		goto out;
	}
	r = spec_idxmap_init(&backing, st->n_nss, h_backing, eq_backing, &owner);
	if (r < 0)
		goto out;
	too_many = spec_check_host_refs(spec);
	for (i = 0; i < spec->n_targets; i++) {
		struct ln_target *t = &spec->targets[i];
		const struct target_raw *raw = &st->target_raw[i];
		const struct ln_node *node;
		long other, ni;

		other = spec_idxmap_insert(&st->target_by_nqn, (uint32_t)i);
		if (other >= 0)
			spec_diag(spec, raw->nqn, "duplicate target nqn '%s' (first on line %u)",
				  t->nqn, st->target_raw[other].nqn.line);
		/* tested on ni, not node: a NULL test on &nodes[ni] reads to the
		 * analyzer as spec->nodes being NULL */
		ni = spec_target_node(x, i);
		node = ni >= 0 ? &spec->nodes[ni] : NULL;
		if (ni >= 0 && t->transport == LN_TRANSPORT_RDMA && !node->n_rdma)
			spec_diag(spec, t->mark,
				  "target '%s' uses transport rdma but node '%s' has no RDMA port",
				  t->nqn, node->name);
		if (ni >= 0 && !t->address) {
			for (k = 0; k < node->n_rdma && !t->address; k++)
				t->address = node->rdma[k].ip;
			if (!t->address)
				spec_diag(spec, t->mark,
					  "target '%s' has no 'address' and node '%s' has no RDMA ip to default to",
					  t->nqn, node->name);
		}
		check_target_namespaces(spec, &owner, i, ni, off, order, &backing);
		off += t->n_namespaces;
		if (raw->n_hosts && !too_many) {
			r = spec_resolve_hosts(x, i, &st->hosts_raw[hoff], raw->n_hosts, stamp);
			if (r < 0)
				goto out;
		}
		hoff += raw->n_hosts;
	}
	r = 0;
out:
	free(order);
	free(stamp);
	free(owner.ns_target);
	spec_idxmap_release(&backing);
	return r;
}
