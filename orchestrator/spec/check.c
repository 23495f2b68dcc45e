/* SPDX-License-Identifier: MIT */
/*
 * The spec's second pass: defaults that depend on other sections (a
 * node's SSH port and user, a target's address, a target's hosts),
 * references by name (targets and initiators to nodes, initiators to
 * targets), duplicates, and the rules that span objects. Every duplicate
 * check is a hash set or a sort, so the pass stays linear (n log n at
 * worst) in the size of the spec; nothing compares all pairs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/nccl_env.h"
#include "common/util.h"
#include "orchestrator/spec/hostlist.h"
#include "orchestrator/spec/impl.h"

struct ctx {
	struct ln_spec *spec;
	struct ln_spec_store *st;
	uint32_t *port_node;		/* node index of each RDMA port */
	uint32_t *ns_target;		/* target index of each namespace */
	/* (target, node) pairs: explicit hosts, then initiators */
	uint32_t *pair_t, *pair_n;
	size_t n_pairs, alloc_pairs;
	struct ln_mark unknown_init_mark;	/* the last initiator range reported unknown */
};

/* ---- hash callbacks --------------------------------------------------- */

static int streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/*
 * h_NAME, eq_NAME and match_NAME: the callbacks of an index of the spec's
 * ARRAY by its string member KEY (node names, target NQNs).
 */
#define SPEC_STRING_KEY(name, array, key)                                                        \
	static uint64_t h_##name(const void *c, uint32_t i)                                      \
	{                                                                                        \
		return spec_hash_str(((const struct ln_spec *)c)->array[i].key, HASH_SEED);      \
	}                                                                                        \
	static int match_##name(const void *c, uint32_t i, const void *k)                        \
	{                                                                                        \
		return streq(((const struct ln_spec *)c)->array[i].key, k);                      \
	}                                                                                        \
	static int eq_##name(const void *c, uint32_t a, uint32_t b)                              \
	{                                                                                        \
		return match_##name(c, a, ((const struct ln_spec *)c)->array[b].key);            \
	}

SPEC_STRING_KEY(node_name, nodes, name)
SPEC_STRING_KEY(nqn, targets, nqn)

/* Addresses by value, not spelling (spec_addr_canon). */
static uint64_t h_endpoint(const void *c, uint32_t i)
{
	const struct ln_node *n = &((const struct ln_spec *)c)->nodes[i];
	char buf[SPEC_ADDR_CANON];

	return spec_hash_str(spec_addr_canon(n->address, buf, sizeof(buf)), HASH_SEED ^ n->port);
}

static int eq_endpoint(const void *c, uint32_t a, uint32_t b)
{
	const struct ln_spec *s = c;

	return s->nodes[a].port == s->nodes[b].port &&
	       spec_addr_eq(s->nodes[a].address, s->nodes[b].address);
}

static uint64_t h_port_ip(const void *c, uint32_t i)
{
	char buf[SPEC_ADDR_CANON];

	return spec_hash_str(spec_addr_canon(((const struct ctx *)c)->st->ports[i].ip, buf,
					     sizeof(buf)),
			     HASH_SEED);
}

static int eq_port_ip(const void *c, uint32_t a, uint32_t b)
{
	const struct ctx *x = c;

	return spec_addr_eq(x->st->ports[a].ip, x->st->ports[b].ip);
}

/* A namespace's backing object on its node: (node, file or device). */
static const char *ns_backing(const struct ctx *x, uint32_t i)
{
	const struct ln_namespace *ns = &x->st->nss[i];

	return ns->file ? ns->file : ns->device;
}

static uint64_t h_backing(const void *c, uint32_t i)
{
	const struct ctx *x = c;

	return spec_hash_str(ns_backing(x, i), HASH_SEED ^ x->spec->targets[x->ns_target[i]].node);
}

static int eq_backing(const void *c, uint32_t a, uint32_t b)
{
	const struct ctx *x = c;

	return x->spec->targets[x->ns_target[a]].node == x->spec->targets[x->ns_target[b]].node &&
	       streq(ns_backing(x, a), ns_backing(x, b));
}

static uint64_t h_init_pair(const void *c, uint32_t i)
{
	const struct ln_initiator *in = &((const struct ln_spec *)c)->initiators[i];

	return spec_hash_str("", ((uint64_t)in->node << 32) ^ in->target ^ HASH_SEED);
}

static int eq_init_pair(const void *c, uint32_t a, uint32_t b)
{
	const struct ln_spec *s = c;

	return s->initiators[a].node == s->initiators[b].node &&
	       s->initiators[a].target == s->initiators[b].target;
}

static uint64_t h_mount(const void *c, uint32_t i)
{
	const struct ln_initiator *in = &((const struct ln_spec *)c)->initiators[i];

	return spec_hash_str(in->mount.path, HASH_SEED ^ in->node);
}

static int eq_mount(const void *c, uint32_t a, uint32_t b)
{
	const struct ln_spec *s = c;

	return s->initiators[a].node == s->initiators[b].node &&
	       streq(s->initiators[a].mount.path, s->initiators[b].mount.path);
}

static uint64_t h_pair(const void *c, uint32_t i)
{
	const struct ctx *x = c;

	return spec_hash_str("", ((uint64_t)x->pair_t[i] << 32) ^ x->pair_n[i] ^ HASH_SEED);
}

static int eq_pair(const void *c, uint32_t a, uint32_t b)
{
	const struct ctx *x = c;

	return x->pair_t[a] == x->pair_t[b] && x->pair_n[a] == x->pair_n[b];
}

static int match_pair(const void *c, uint32_t i, const void *key)
{
	const struct ctx *x = c;
	const uint32_t *k = key;

	return x->pair_t[i] == k[0] && x->pair_n[i] == k[1];
}

/* ---- helpers ---------------------------------------------------------- */

static long node_index(const struct ln_spec *spec, const char *name)
{
	if (!name)
		return -1;
	return spec_idxmap_find(&spec->store->node_by_name, spec_hash_str(name, HASH_SEED),
			   match_node_name, name);
}

static int add_pair(struct ctx *x, uint32_t t, uint32_t n)
{
	if (x->n_pairs == x->alloc_pairs) {
		size_t na = x->alloc_pairs ? x->alloc_pairs * 2 : 64;
		uint32_t *a = realloc(x->pair_t, na * sizeof(*a));

		if (!a)
			return -ENOMEM;
		x->pair_t = a;
		a = realloc(x->pair_n, na * sizeof(*a));
		if (!a)
			return -ENOMEM;
		x->pair_n = a;
		x->alloc_pairs = na;
	}
	x->pair_t[x->n_pairs] = t;
	x->pair_n[x->n_pairs] = n;
	x->n_pairs++;
	return 0;
}

static const void *sort_base;

static int cmp_port(const void *a, const void *b)
{
	const struct ln_rdma_port *p = sort_base;
	const struct ln_rdma_port *x = &p[*(const uint32_t *)a], *y = &p[*(const uint32_t *)b];
	int c = strcmp(x->device ? x->device : "", y->device ? y->device : "");

	if (c)
		return c;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int cmp_nsid(const void *a, const void *b)
{
	const struct ln_namespace *ns = sort_base;
	const struct ln_namespace *x = &ns[*(const uint32_t *)a], *y = &ns[*(const uint32_t *)b];

	if (x->nsid != y->nsid)
		return x->nsid < y->nsid ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int cmp_setting(const void *a, const void *b)
{
	const struct ln_setting *m = sort_base;
	int c = strcmp(m[*(const uint32_t *)a].key ? m[*(const uint32_t *)a].key : "",
		       m[*(const uint32_t *)b].key ? m[*(const uint32_t *)b].key : "");

	if (c)
		return c;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Sort idx[0..n) of base with cmp; a small stack array spares a malloc. */
static int sorted(uint32_t *buf, size_t n, const void *base, size_t first,
		  int (*cmp)(const void *, const void *))
{
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = (uint32_t)(first + i);
	sort_base = base;
	qsort(buf, n, sizeof(*buf), cmp);
	return 0;
}

/* ---- nodes ------------------------------------------------------------ */

static int check_nodes(struct ctx *x)
{
	struct ln_spec *spec = x->spec;
	struct ln_spec_store *st = x->st;
	struct spec_idxmap ep = { 0 }, ips = { 0 };
	uint32_t *order = NULL;
	size_t i, k, off = 0, maxports = 0;
	int r;

	r = spec_idxmap_init(&st->node_by_name, spec->n_nodes, h_node_name, eq_node_name, spec);
	if (r == 0)
		r = spec_idxmap_init(&ep, spec->n_nodes, h_endpoint, eq_endpoint, spec);
	if (r == 0)
		r = spec_idxmap_init(&ips, st->n_ports, h_port_ip, eq_port_ip, x);
	if (r < 0)
		goto out;
	x->port_node = malloc((st->n_ports + 1) * sizeof(*x->port_node));
	if (!x->port_node) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < spec->n_nodes; i++)
		if (spec->nodes[i].n_rdma > maxports)
			maxports = spec->nodes[i].n_rdma;
	order = malloc((maxports + 1) * sizeof(*order));
	if (!order) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < spec->n_nodes; i++) {
		struct ln_node *n = &spec->nodes[i];
		const struct node_raw *raw = &st->node_raw[i];
		long other;

		if (!n->port)
			n->port = spec->ssh.port;
		if (!n->user)
			n->user = spec->ssh.user;
		if (!n->slots)
			n->slots = n->gpus > 1 ? n->gpus : 1;
		other = spec_idxmap_insert(&st->node_by_name, (uint32_t)i);
		if (other >= 0)
			spec_diag(spec, raw->name, "duplicate node name '%s' (first on line %u)",
				  n->name, st->node_raw[other].name.line);
		if (n->address) {
			other = spec_idxmap_insert(&ep, (uint32_t)i);
			if (other >= 0)
				spec_diag(spec, raw->address,
					  "nodes '%s' and '%s' have the same SSH endpoint %s port %u",
					  spec->nodes[other].name, n->name, n->address, n->port);
		}
		sorted(order, n->n_rdma, st->ports, off, cmp_port);
		for (k = 0; k < n->n_rdma; k++) {
			struct ln_rdma_port *p = &st->ports[off + k];

			x->port_node[off + k] = (uint32_t)i;
			if (k && p->device) {
				const struct ln_rdma_port *a = &st->ports[order[k - 1]];
				const struct ln_rdma_port *b = &st->ports[order[k]];

				if (streq(a->device, b->device) && a->port == b->port)
					spec_diag(spec, b->mark,
						  "rdma port %s/%u is listed twice on node '%s' (first on line %u)",
						  b->device, b->port, n->name, a->mark.line);
			}
			if (p->ip) {
				other = spec_idxmap_insert(&ips, (uint32_t)(off + k));
				if (other >= 0)
					spec_diag(spec, p->mark,
						  "rdma ip %s of node '%s' is already on node '%s' (line %u)",
						  p->ip, n->name,
						  spec->nodes[x->port_node[other]].name,
						  st->ports[other].mark.line);
			}
		}
		off += n->n_rdma;
	}
	r = 0;
out:
	free(order);
	spec_idxmap_release(&ep);
	spec_idxmap_release(&ips);
	return r;
}

/* ---- targets ---------------------------------------------------------- */

/* What one 'hosts' entry (a name or a range) held that is wrong: one
 * message each for its unknown names and its names listed twice. */
struct host_miss {
	size_t unknown, twice;
	struct ln_buf first_unknown, first_twice;
};

static void host_miss_report(struct ln_spec *spec, const struct ln_target *t,
			     const struct host_raw *h, struct host_miss *m)
{
	const char *near = NULL;

	if (m->unknown == 1)
		near = spec_near_node(spec, m->first_unknown.buf);
	if (m->unknown == 1 && near)
		spec_diag(spec, h->mark, "target '%s' allows unknown host '%.100s' (did you mean '%s'?)",
			  t->nqn, m->first_unknown.buf, near);
	else if (m->unknown == 1)
		spec_diag(spec, h->mark, "target '%s' allows unknown host '%.100s'", t->nqn,
			  m->first_unknown.buf);
	else if (m->unknown)
		spec_diag(spec, h->mark, "target '%s' allows %zu unknown hosts in '%.100s', first '%.100s'",
			  t->nqn, m->unknown, h->name, m->first_unknown.buf);
	if (m->twice == 1)
		spec_diag(spec, h->mark, "host '%s' is listed twice in target '%s'",
			  m->first_twice.buf, t->nqn);
	else if (m->twice)
		spec_diag(spec, h->mark, "%zu hosts of '%.100s' are listed twice in target '%s', first '%s'",
			  m->twice, h->name, t->nqn, m->first_twice.buf);
	m->unknown = m->twice = 0;
}

/* Note name as missed (count, and the first one kept). */
static void host_miss_note(size_t *n, struct ln_buf *first, const char *name)
{
	if (!(*n)++) {
		ln_buf_reset(first);
		ln_buf_addstr(first, name);
	}
}

static int resolve_hosts(struct ctx *x, size_t ti, const struct host_raw *h, size_t nh,
			 uint32_t *stamp)
{
	struct ln_spec *spec = x->spec;
	struct ln_target *t = &spec->targets[ti];
	struct ln_buf name = LN_BUF_INIT, why = LN_BUF_INIT;
	struct host_miss miss = { 0, 0, LN_BUF_INIT, LN_BUF_INIT };
	size_t k, j;
	int r = 0;

	for (k = 0; k < nh; k++) {
		struct ln_hostlist hl;

		ln_buf_reset(&why);
		if (ln_hostlist_parse(h[k].name, &hl, &why) < 0) {
			spec_diag(spec, h[k].mark, "'hosts': %s", why.buf);
			continue;
		}
		for (j = 0; j < hl.count; j++) {
			long ni;

			ln_buf_reset(&name);
			r = ln_hostlist_get(&hl, j, &name);
			if (r < 0)
				break;
			ni = node_index(spec, name.buf);
			if (ni < 0) {
				host_miss_note(&miss.unknown, &miss.first_unknown, name.buf);
				continue;
			}
			if (stamp[ni] == ti + 1) {
				host_miss_note(&miss.twice, &miss.first_twice, name.buf);
				continue;
			}
			stamp[ni] = (uint32_t)(ti + 1);
			r = add_pair(x, (uint32_t)ti, (uint32_t)ni);
			if (r < 0)
				break;
		}
		ln_hostlist_release(&hl);
		host_miss_report(spec, t, &h[k], &miss);
		if (r < 0)
			break;
	}
	ln_buf_release(&name);
	ln_buf_release(&why);
	ln_buf_release(&miss.first_unknown);
	ln_buf_release(&miss.first_twice);
	return r;
}

/* A target's node index: resolved (t->node set) or reported; -1 if unknown. */
static long target_node(struct ctx *x, size_t i)
{
	struct ln_spec *spec = x->spec;
	struct ln_target *t = &spec->targets[i];
	const struct target_raw *raw = &x->st->target_raw[i];
	long ni = node_index(spec, raw->node);

	if (raw->node && ni < 0) {
		const char *near = spec_near_node(spec, raw->node);

		if (near)
			spec_diag(spec, raw->node_mark,
				  "target '%s' is on unknown node '%s' (did you mean '%s'?)",
				  t->nqn, raw->node, near);
		else
			spec_diag(spec, raw->node_mark, "target '%s' is on unknown node '%s'",
				  t->nqn, raw->node);
	}
	if (ni >= 0)
		t->node = (size_t)ni;
	return ni;
}

/* Target i's namespaces, st->nss[off...]: duplicate nsids in the target
 * (order: scratch for their sort) and backing files or devices already
 * used on the same node. */
static void check_target_namespaces(struct ctx *x, size_t i, long ni, size_t off,
				    uint32_t *order, struct spec_idxmap *backing)
{
	struct ln_spec *spec = x->spec;
	struct ln_spec_store *st = x->st;
	const struct ln_target *t = &spec->targets[i];
	size_t k;
	long other;

	sorted(order, t->n_namespaces, st->nss, off, cmp_nsid);
	for (k = 0; k < t->n_namespaces; k++) {
		struct ln_namespace *ns = &st->nss[off + k];

		x->ns_target[off + k] = (uint32_t)i;
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
				  ns_backing(x, (uint32_t)(off + k)), spec->nodes[ni].name,
				  st->nss[other].nsid, spec->targets[x->ns_target[other]].nqn,
				  st->nss[other].mark.line);
	}
}

static int check_targets(struct ctx *x)
{
	struct ln_spec *spec = x->spec;
	struct ln_spec_store *st = x->st;
	struct spec_idxmap backing = { 0 };
	uint32_t *order = NULL, *stamp = NULL;
	size_t i, k, off = 0, hoff = 0, maxns = 0;
	int r, too_many;

	r = spec_idxmap_init(&st->target_by_nqn, spec->n_targets, h_nqn, eq_nqn, spec);
	if (r < 0)
		goto out;
	x->ns_target = malloc((st->n_nss + 1) * sizeof(*x->ns_target));
	stamp = calloc(spec->n_nodes + 1, sizeof(*stamp));
	for (i = 0; i < spec->n_targets; i++)
		if (spec->targets[i].n_namespaces > maxns)
			maxns = spec->targets[i].n_namespaces;
	order = malloc((maxns + 1) * sizeof(*order));
	if (!x->ns_target || !stamp || !order) {
		r = -ENOMEM;
		goto out;
	}
	r = spec_idxmap_init(&backing, st->n_nss, h_backing, eq_backing, x);
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
		ni = target_node(x, i);
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
		check_target_namespaces(x, i, ni, off, order, &backing);
		off += t->n_namespaces;
		if (raw->n_hosts && !too_many) {
			r = resolve_hosts(x, i, &st->hosts_raw[hoff], raw->n_hosts, stamp);
			if (r < 0)
				goto out;
		}
		hoff += raw->n_hosts;
	}
	r = 0;
out:
	free(order);
	free(stamp);
	spec_idxmap_release(&backing);
	return r;
}

/* ---- initiators ------------------------------------------------------- */

static int same_mark(struct ln_mark a, struct ln_mark b)
{
	return a.line == b.line && a.col == b.col;
}

/* Initiator i is on an unknown node: one message for the range it came
 * from (its initiators share the node's mark), at its first one. */
static void report_unknown_init_node(struct ctx *x, size_t i)
{
	struct ln_spec *spec = x->spec;
	const struct init_raw *raw = x->st->init_raw;
	const char *near;
	size_t j, n = 1;

	if (same_mark(x->unknown_init_mark, raw[i].node_mark))
		return;
	x->unknown_init_mark = raw[i].node_mark;
	for (j = i + 1; j < spec->n_initiators && same_mark(raw[j].node_mark, raw[i].node_mark);
	     j++)
		n += node_index(spec, raw[j].node) < 0;
	near = n == 1 ? spec_near_node(spec, raw[i].node) : NULL;
	if (n > 1)
		spec_diag(spec, raw[i].node_mark, "%zu initiators are on unknown nodes, first '%.100s'",
			  n, raw[i].node);
	else if (near)
		spec_diag(spec, raw[i].node_mark,
			  "initiator is on unknown node '%.100s' (did you mean '%s'?)", raw[i].node,
			  near);
	else
		spec_diag(spec, raw[i].node_mark, "initiator is on unknown node '%.100s'", raw[i].node);
}

static int check_initiators(struct ctx *x)
{
	struct ln_spec *spec = x->spec;
	struct ln_spec_store *st = x->st;
	struct spec_idxmap pairs = { 0 }, mounts = { 0 }, explicit = { 0 };
	struct spec_mounters mounters = { 0 };
	size_t i, n_explicit = x->n_pairs;
	int r;

	r = spec_idxmap_init(&pairs, spec->n_initiators, h_init_pair, eq_init_pair, spec);
	if (r == 0)
		r = spec_mounters_init(&mounters, spec->n_targets);
	if (r == 0)
		r = spec_idxmap_init(&mounts, spec->n_initiators, h_mount, eq_mount, spec);
	if (r == 0)
		r = spec_idxmap_init(&explicit, n_explicit, h_pair, eq_pair, x);
	if (r < 0)
		goto out;
	for (i = 0; i < n_explicit; i++)
		spec_idxmap_insert(&explicit, (uint32_t)i);
	for (i = 0; i < spec->n_initiators; i++) {
		struct ln_initiator *in = &spec->initiators[i];
		const struct init_raw *raw = &st->init_raw[i];
		struct ln_target *t = NULL;
		long ni, ti, other;

		ni = node_index(spec, raw->node);
		if (raw->node && ni < 0)
			report_unknown_init_node(x, i);
		ti = -1;
		if (raw->target)
			ti = spec_idxmap_find(&st->target_by_nqn,
					      spec_hash_str(raw->target, HASH_SEED), match_nqn,
					      raw->target);
		if (raw->target && ti < 0)
			spec_diag(spec, raw->target_mark,
				  "initiator on '%.100s' names unknown target '%s'",
				  raw->node ? raw->node : "?", raw->target);
		if (ni < 0 || ti < 0)
			continue;
		in->node = (size_t)ni;
		in->target = (size_t)ti;
		t = &spec->targets[ti];
		other = spec_idxmap_insert(&pairs, (uint32_t)i);
		if (other >= 0) {
			spec_diag(spec, in->mark,
				  "node '%s' has two initiators for target '%s' (first on line %u)",
				  spec->nodes[ni].name, t->nqn, spec->initiators[other].mark.line);
			continue;
		}
		spec_check_discovery(spec, in, t);
		if (in->mount.present) {
			spec_check_mount_ns(spec, i);
			spec_mounters_add(&mounters, (size_t)ti, i);
		}
		if (in->mount.present && in->mount.path) {
			other = spec_idxmap_insert(&mounts, (uint32_t)i);
			if (other >= 0)
				spec_diag(spec, in->mount.mark,
					  "mount point '%s' on node '%s' is already used (line %u)",
					  in->mount.path, spec->nodes[ni].name,
					  spec->initiators[other].mount.mark.line);
		}
		if (t->hosts_given && !t->hosts_any) {
			uint32_t key[2] = { (uint32_t)ti, (uint32_t)ni };
			uint64_t h = spec_hash_str("", ((uint64_t)key[0] << 32) ^ key[1] ^ HASH_SEED);

			if (spec_idxmap_find(&explicit, h, match_pair, key) < 0)
				spec_diag(spec, in->mark,
					  "node '%s' connects to target '%s' but is not in its hosts",
					  spec->nodes[ni].name, t->nqn);
		} else if (!t->hosts_given) {
			r = add_pair(x, (uint32_t)ti, (uint32_t)ni);
			if (r < 0)
				goto out;
		}
	}
	spec_mounters_report(&mounters, spec);
	r = 0;
out:
	spec_mounters_release(&mounters);
	spec_idxmap_release(&pairs);
	spec_idxmap_release(&mounts);
	spec_idxmap_release(&explicit);
	return r;
}

/* Lay every target's hosts out in one array, by a counting sort of the
 * (target, node) pairs: explicit lists in written order, defaults in
 * initiator order. */
static int layout_hosts(struct ctx *x)
{
	struct ln_spec *spec = x->spec;
	size_t *start, i;

	start = calloc(spec->n_targets + 1, sizeof(*start));
	x->st->host_idx = malloc((x->n_pairs + 1) * sizeof(*x->st->host_idx));
	if (!start || !x->st->host_idx) {
		free(start);
		return -ENOMEM;
	}
	for (i = 0; i < x->n_pairs; i++)
		spec->targets[x->pair_t[i]].n_hosts++;
	for (i = 0; i < spec->n_targets; i++) {
		start[i + 1] = start[i] + spec->targets[i].n_hosts;
		spec->targets[i].hosts =
			spec->targets[i].n_hosts ? &x->st->host_idx[start[i]] : NULL;
	}
	for (i = 0; i < x->n_pairs; i++)
		x->st->host_idx[start[x->pair_t[i]]++] = x->pair_n[i];
	free(start);
	return 0;
}

/* ---- DH-HMAC-CHAP ----------------------------------------------------- */

static int same_dhchap(const struct ln_dhchap *a, const struct ln_dhchap *b)
{
	if (!a->present || !b->present)
		return a->present == b->present;
	return streq(a->key_dir, b->key_dir) && a->hash == b->hash && a->dhgroup == b->dhgroup &&
	       a->bidirectional == b->bidirectional;
}

/* (target node, host node, pair) order: a node's host entries together. */
static int cmp_host_entry(const void *a, const void *b)
{
	const struct ctx *x = sort_base;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	size_t ni = x->spec->targets[x->pair_t[i]].node, nj = x->spec->targets[x->pair_t[j]].node;

	if (ni != nj)
		return ni < nj ? -1 : 1;
	if (x->pair_n[i] != x->pair_n[j])
		return x->pair_n[i] < x->pair_n[j] ? -1 : 1;
	return i < j ? -1 : 1;
}

/*
 * A target with dhchap names its hosts (a subsystem open to any host has
 * no host entry to key), and nvmet keeps the secret, hash and group on
 * hosts/<hostnqn>, one entry per node shared by every subsystem there:
 * two targets of one node that allow one host must ask the same settings
 * (no dhchap is a setting too: the keyed entry would demand it).
 */
static int check_dhchap(struct ctx *x)
{
	struct ln_spec *spec = x->spec;
	uint32_t *order;
	size_t i;

	for (i = 0; i < spec->n_targets; i++) {
		const struct ln_target *t = &spec->targets[i];

		if (t->dhchap.present && t->hosts_any)
			spec_diag(spec, t->dhchap.mark,
				  "'dhchap' needs the target's hosts by name: with 'hosts: any' no "
				  "host has a secret, so '%s' would be open", t->nqn);
	}
	if (x->n_pairs < 2)
		return 0;
	order = malloc(x->n_pairs * sizeof(*order));
	if (!order)
		return -ENOMEM;
	sorted(order, x->n_pairs, x, 0, cmp_host_entry);
	for (i = 1; i < x->n_pairs; i++) {
		uint32_t a = order[i - 1], b = order[i];
		const struct ln_target *ta = &spec->targets[x->pair_t[a]];
		const struct ln_target *tb = &spec->targets[x->pair_t[b]];

		if (ta->node != tb->node || x->pair_n[a] != x->pair_n[b] || ta == tb ||
		    ta->hosts_any || tb->hosts_any || same_dhchap(&ta->dhchap, &tb->dhchap))
			continue;
		spec_diag(spec, tb->dhchap.present ? tb->dhchap.mark : tb->mark,
			  "target '%s' asks other DH-HMAC-CHAP settings than target '%s' (line %u) "
			  "for host '%s' on node '%s': nvmet keeps one entry per host and node; "
			  "give both the same 'dhchap'", tb->nqn, ta->nqn, ta->mark.line,
			  spec->nodes[x->pair_n[b]].name, spec->nodes[tb->node].name);
	}
	free(order);
	return 0;
}

/* spec_check_tls (check_tls.c) as one of the passes */
static int check_tls(struct ctx *x)
{
	return spec_check_tls(x->spec);
}

/* ---- mpi and validation ----------------------------------------------- */

/* A NAME: value mapping (mpi.mca, nccl.env) names each key once. */
static int check_settings(struct ln_spec *spec, const struct ln_setting *set, size_t n,
			  const char *what)
{
	uint32_t *order;
	size_t k;

	if (!n)
		return 0;
	order = malloc(n * sizeof(*order));
	if (!order)
		return -ENOMEM;
	sorted(order, n, set, 0, cmp_setting);
	for (k = 1; k < n; k++)
		if (streq(set[order[k - 1]].key, set[order[k]].key))
			spec_diag(spec, set[order[k]].mark, "duplicate %s key '%s' (first on line %u)",
				  what, set[order[k]].key, set[order[k - 1]].mark.line);
	free(order);
	return 0;
}

static int check_mpi(struct ctx *x)
{
	struct ln_spec *spec = x->spec;
	const struct ln_validation *v = &spec->validation;
	int r = check_settings(spec, spec->mpi.mca, spec->mpi.n_mca, "mca");

	if (!r)
		r = check_settings(spec, v->nccl.env, v->nccl.n_env, "nccl.env");
	if (!r && v->nccl.n_env > LN_NCCL_ENV_MAX)
		spec_diag(spec, v->nccl.env[LN_NCCL_ENV_MAX].mark,
			  "nccl.env sets more than %d variables", LN_NCCL_ENV_MAX);
	return r;
}

/* Rails: every port names its rail or none does, a node has a rail once,
 * and unnamed rails (by position) need as many ports on every node that
 * has any when a pairwise stage pairs them. */
static void check_rails(struct ctx *x)
{
	struct ln_spec *spec = x->spec;
	const struct ln_validation *v = &spec->validation;
	const struct ln_node *first = NULL;
	const struct ln_rdma_port *named = NULL;
	size_t i, k, j;

	for (i = 0; i < spec->n_nodes && !named; i++)
		for (k = 0; k < spec->nodes[i].n_rdma && !named; k++)
			if (spec->nodes[i].rdma[k].rail)
				named = &spec->nodes[i].rdma[k];
	for (i = 0; i < spec->n_nodes; i++) {
		const struct ln_node *n = &spec->nodes[i];

		for (k = 0; k < n->n_rdma; k++) {
			const struct ln_rdma_port *p = &n->rdma[k];

			if (named && !p->rail) {
				spec_diag(spec, p->mark,
					  "rdma port %s/%u of node '%s' has no 'rail' but the port on "
					  "line %u has one: name every port's rail or none", p->device,
					  p->port, n->name, named->mark.line);
				continue;
			}
			for (j = 0; p->rail && j < k; j++)
				if (streq(n->rdma[j].rail, p->rail)) {
					spec_diag(spec, p->mark,
						  "rail '%s' is on node '%s' twice (first on line %u)",
						  p->rail, n->name, n->rdma[j].mark.line);
					break;
				}
		}
	}
	if (named || (!v->present[LN_STAGE_RPING] && !v->present[LN_STAGE_BANDWIDTH] &&
		      !v->present[LN_STAGE_LATENCY]))
		return;
	for (i = 0; i < spec->n_nodes; i++) {
		const struct ln_node *n = &spec->nodes[i];

		if (!n->n_rdma)
			continue;
		if (!first) {
			first = n;
		} else if (n->n_rdma != first->n_rdma) {
			spec_diag(spec, n->mark,
				  "node '%s' has %zu RDMA ports and node '%s' %zu: the pairwise "
				  "stages pair ports by position only when every node has as many; "
				  "name each port's rail with 'rail:'", n->name, n->n_rdma,
				  first->name, first->n_rdma);
			return;
		}
	}
}

/* A pairwise stage tests each port with another node's port on its rail:
 * a port alone on its rail could never be tested, so it is refused. */
static void check_lone_rails(struct ln_spec *spec, enum ln_stage st)
{
	size_t i, k, j, m;

	for (i = 0; i < spec->n_nodes; i++)
		for (k = 0; k < spec->nodes[i].n_rdma; k++) {
			const struct ln_rdma_port *p = &spec->nodes[i].rdma[k];
			int partner = 0;

			for (j = 0; p->rail && j < spec->n_nodes && !partner; j++)
				for (m = 0; j != i && m < spec->nodes[j].n_rdma && !partner; m++)
					partner = streq(spec->nodes[j].rdma[m].rail, p->rail);
			if (p->rail && !partner)
				spec_diag(spec, p->mark,
					  "rdma port %s/%u of node '%s' is the only port on rail '%s': "
					  "stage '%s' pairs ports per rail and could never test it",
					  p->device, p->port, spec->nodes[i].name, p->rail,
					  ln_stage_name(st));
		}
}

static void check_validation(struct ctx *x)
{
	struct ln_spec *spec = x->spec;
	struct ln_validation *v = &spec->validation;
	size_t i, with_rdma = 0, slots = 0, gpus = 0;
	int s;

	for (i = 0; i < spec->n_nodes; i++) {
		with_rdma += spec->nodes[i].n_rdma > 0;
		slots += spec->nodes[i].slots;
		gpus += spec->nodes[i].gpus;
	}
	v->n_order = 0;
	for (s = 0; s < LN_STAGE_COUNT; s++)
		if (v->present[s])
			v->order[v->n_order++] = (enum ln_stage)s;
	for (s = LN_STAGE_RPING; s <= LN_STAGE_LATENCY; s++)
		if (v->present[s] && with_rdma < 2)
			spec_diag(spec, v->mark[s],
				  "stage '%s' needs two nodes with RDMA ports; the spec has %zu",
				  ln_stage_name((enum ln_stage)s), with_rdma);
	for (s = LN_STAGE_RPING; s <= LN_STAGE_LATENCY; s++)
		if (v->present[s] && with_rdma >= 2) {
			check_lone_rails(spec, (enum ln_stage)s);
			break;
		}
	if (v->present[LN_STAGE_IO] && !spec->n_initiators)
		spec_diag(spec, v->mark[LN_STAGE_IO], "stage 'io' needs an initiator; the spec has none");
	if (v->present[LN_STAGE_IO] && v->io.destructive) {
		for (i = 0; i < spec->n_initiators; i++) {
			const struct ln_initiator *in = &spec->initiators[i];

			if (in->mount.present) {
				spec_diag(spec, v->mark[LN_STAGE_IO],
					  "stage 'io' is destructive but the initiator on line %u mounts its namespace at '%s'",
					  in->mark.line, in->mount.path ? in->mount.path : "?");
				break;
			}
		}
	}
	if (v->present[LN_STAGE_MPI] && v->mpi.np > slots)
		spec_diag(spec, v->mark[LN_STAGE_MPI],
			  "stage 'mpi' asks for %u processes but the nodes have %zu slots", v->mpi.np,
			  slots);
	if (v->present[LN_STAGE_NCCL] && !gpus)
		spec_diag(spec, v->mark[LN_STAGE_NCCL],
			  "stage 'nccl' needs GPUs but no node declares any ('gpus')");
}

/* spec_check_paths (check_paths.c) as one of the passes */
static int check_paths(struct ctx *x)
{
	return spec_check_paths(x->spec);
}

int spec_check(struct ln_spec *spec)
{
	/* in this order: each pass uses what the ones before it resolved */
	static int (*const passes[])(struct ctx *x) = {
		check_nodes, check_targets, check_initiators, layout_hosts, check_dhchap, check_tls, check_mpi,
		check_paths,
	};
	struct ctx x;
	size_t i;
	int r;

	memset(&x, 0, sizeof(x));
	x.spec = spec;
	x.st = spec->store;
	for (i = 0; i < ARRAY_SIZE(passes); i++) {
		r = passes[i](&x);
		if (r < 0)
			goto out;
	}
	check_validation(&x);
	spec_check_stage_rules(spec);
	check_rails(&x);
	r = spec_check_pairs(spec);
	if (r < 0)
		goto out;
	r = 0;
out:
	free(x.port_node);
	free(x.ns_target);
	free(x.pair_t);
	free(x.pair_n);
	return r;
}

long ln_spec_node_index(const struct ln_spec *spec, const char *name)
{
	return node_index(spec, name);
}

long ln_spec_target_index(const struct ln_spec *spec, const char *nqn)
{
	if (!nqn)
		return -1;
	return spec_idxmap_find(&spec->store->target_by_nqn, spec_hash_str(nqn, HASH_SEED),
				match_nqn, nqn);
}
