/* SPDX-License-Identifier: MIT */
/*
 * The check pass's rules for the nodes: the defaults that come from the
 * ssh section (port, user) and from a node's GPUs (slots), then each name,
 * SSH endpoint (address and port, addresses compared by value), RDMA port
 * (device and port) and RDMA ip once. The first pass of spec_check: the
 * node name index it fills resolves every later reference.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/spec/check.h"

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

	return spec_hash_str(spec_addr_canon(((const struct ln_spec_store *)c)->ports[i].ip, buf,
					     sizeof(buf)),
			     HASH_SEED);
}

static int eq_port_ip(const void *c, uint32_t a, uint32_t b)
{
	const struct ln_spec_store *st = c;

	return spec_addr_eq(st->ports[a].ip, st->ports[b].ip);
}

/* RDMA ports (st->ports) by device, then port number. */
static int cmp_port(const void *c, uint32_t a, uint32_t b)
{
	const struct ln_rdma_port *x = &((const struct ln_rdma_port *)c)[a];
	const struct ln_rdma_port *y = &((const struct ln_rdma_port *)c)[b];
	int r = strcmp(x->device ? x->device : "", y->device ? y->device : "");

	if (r)
		return r;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return 0;
}

int spec_check_nodes(struct spec_check_ctx *x)
{
	struct ln_spec *spec = x->spec;
	struct ln_spec_store *st = x->st;
	struct spec_idxmap ep = { 0 }, ips = { 0 };
	uint32_t *order = NULL, *port_node = NULL;
	size_t i, k, off = 0, maxports = 0;
	int r;

	r = spec_node_index_init(spec);
	if (r == 0)
		r = spec_idxmap_init(&ep, spec->n_nodes, h_endpoint, eq_endpoint, spec);
	if (r == 0)
		r = spec_idxmap_init(&ips, st->n_ports, h_port_ip, eq_port_ip, st);
	if (r < 0)
		goto out;
	/* the node index of each RDMA port */
	port_node = malloc((st->n_ports + 1) * sizeof(*port_node));
	if (!port_node) {
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
		spec_sort_idx(order, n->n_rdma, off, cmp_port, st->ports);
		for (k = 0; k < n->n_rdma; k++) {
			struct ln_rdma_port *p = &st->ports[off + k];

			port_node[off + k] = (uint32_t)i;
			if (k && p->device) {
				const struct ln_rdma_port *a = &st->ports[order[k - 1]];
				const struct ln_rdma_port *b = &st->ports[order[k]];

				if (spec_streq(a->device, b->device) && a->port == b->port)
					spec_diag(spec, b->mark,
						  "rdma port %s/%u is listed twice on node '%s' (first on line %u)",
						  b->device, b->port, n->name, a->mark.line);
			}
			if (p->ip) {
				other = spec_idxmap_insert(&ips, (uint32_t)(off + k));
				if (other >= 0)
					spec_diag(spec, p->mark,
						  "rdma ip %s of node '%s' is already on node '%s' (line %u)",
						  p->ip, n->name, spec->nodes[port_node[other]].name,
						  st->ports[other].mark.line);
			}
		}
		off += n->n_rdma;
	}
	r = 0;
out:
	free(order);
	free(port_node);
	spec_idxmap_release(&ep);
	spec_idxmap_release(&ips);
	return r;
}
