/* SPDX-License-Identifier: MIT */
/*
 * The nodes section: each entry (a node, or a range of nodes with its
 * RDMA ports) is walked whole, then expanded into the model, one node
 * per name of its range, with address, user and port fields that hold
 * ranges expanded in step.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/spec/parser.h"

int spec_parse_mtu(struct parser *p, const struct field *f, void *obj, const char *v,
		   struct ln_mark m)
{
	long long n;

	if (spec_parse_int(v, &n) < 0 ||
	    (n != 256 && n != 512 && n != 1024 && n != 2048 && n != 4096)) {
		spec_diag(p->spec, m, "'%s' takes 256, 512, 1024, 2048 or 4096, not '%.100s'",
			  f->key, v);
		return 0;
	}
	*(unsigned *)spec_at(obj, f->off) = (unsigned)n;
	return 0;
}

/* rdma[].gpus: a list of NVML indexes and ranges "lo-hi", kept as
 * written with their marks; finish_node() judges them against the
 * entry's gpus, which may come after the rdma list. */
static int gpu_item(struct parser *p, const struct field *f)
{
	struct rdma_entry *re = &p->ne.rdma[p->ne.n_rdma - 1];
	const yaml_event_t *e = &p->ev;
	const char *v = (const char *)e->data.scalar.value;
	unsigned long lo, hi;
	char *end;

	if (e->type != YAML_SCALAR_EVENT) {
		spec_diag(p->spec, spec_ev_mark(p), "'%s' lists GPU indexes (0, 1) or ranges "
			  "(\"0-3\"), not %s", f->key, spec_kind(p));
		return spec_skip_node(p);
	}
	if (re->n_gpu == SPEC_PORT_GPU_ITEMS) {
		if (re->n_gpu++ == SPEC_PORT_GPU_ITEMS)
			spec_diag(p->spec, spec_ev_mark(p), "'%s' holds more than %d items: write "
				  "ranges such as \"0-7\"", f->key, SPEC_PORT_GPU_ITEMS);
		return 0;
	}
	if (re->n_gpu > SPEC_PORT_GPU_ITEMS)
		return 0;
	if (!(*v >= '0' && *v <= '9'))
		goto bad;
	lo = hi = strtoul(v, &end, 10);
	if (*end == '-' && end[1] >= '0' && end[1] <= '9')
		hi = strtoul(end + 1, &end, 10);
	if (*end || lo > 1023 || hi > 1023 || strlen(v) > 9)
		goto bad;
	if (lo > hi) {
		spec_diag(p->spec, spec_ev_mark(p), "'%s': the range '%.100s' goes down: write "
			  "it lo-hi", f->key, v);
		return 0;
	}
	re->gpu[re->n_gpu].lo = (uint16_t)lo;
	re->gpu[re->n_gpu].hi = (uint16_t)hi;
	re->gpu[re->n_gpu].mark = spec_ev_mark(p);
	re->n_gpu++;
	return 0;
bad:
	spec_diag(p->spec, spec_ev_mark(p), "'%s' takes GPU indexes from 0 to 1023 and ranges "
		  "such as \"0-3\", not '%.100s'", f->key, v);
	return 0;
}

int spec_parse_port_gpus(struct parser *p, const struct field *f, void *obj)
{
	(void)obj;
	return spec_walk_seq(p, f, gpu_item, "list the GPUs the port serves, or leave the "
			     "key out");
}

/* The entry's port k: its gpus items judged against the entry's gpus
 * (each index below it, none twice) into one sorted array in the arena,
 * shared by every node of the entry. */
static int port_gpus(struct parser *p, struct rdma_entry *re)
{
	const struct ln_node *n = &p->ne.n;
	unsigned char seen[1024] = { 0 };
	uint16_t *out;
	size_t j, cnt = 0;
	unsigned g;

	if (!re->n_gpu || re->n_gpu > SPEC_PORT_GPU_ITEMS)
		return 0;
	for (j = 0; j < re->n_gpu; j++) {
		const struct gpu_item *it = &re->gpu[j];

		for (g = it->lo; g <= it->hi; g++) {
			if (g >= n->gpus) {
				if (n->gpus)
					spec_diag(p->spec, it->mark, "rdma port '%s' serves GPU %u, "
						  "but node '%s' has gpus: %u (indexes 0 to %u)",
						  re->r.device ? re->r.device : "?", g,
						  n->name ? n->name : "?", n->gpus, n->gpus - 1);
				else
					spec_diag(p->spec, it->mark, "rdma port '%s' serves GPU %u, "
						  "but node '%s' declares no GPUs (set its gpus)",
						  re->r.device ? re->r.device : "?", g,
						  n->name ? n->name : "?");
				break;
			}
			if (seen[g]++ == 1)
				spec_diag(p->spec, it->mark, "GPU %u is listed twice in the port's "
					  "'gpus'", g);
			else if (seen[g] == 1)
				cnt++;
		}
	}
	if (!cnt)
		return 0;
	out = spec_arena_alloc(&p->st->arena, cnt * sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (g = 0, j = 0; g < 1024 && j < cnt; g++)
		if (seen[g])
			out[j++] = (uint16_t)g;
	re->r.gpus = out;
	re->r.n_gpus = cnt;
	return 0;
}

/* rdma: a list of ports of the current node entry. */
static int rdma_item(struct parser *p, const struct field *f)
{
	struct node_entry *ne = &p->ne;
	struct rdma_entry *re = GROW(ne->rdma, ne->n_rdma, ne->alloc_rdma);

	if (!re)
		return -ENOMEM;
	ne->n_rdma++;
	re->r.port = 1;
	re->r.gid_index = -1;
	re->r.mark = spec_ev_mark(p);
	return spec_walk_map(p, f->sub, &re->r, re->m, "rdma");
}

int spec_parse_rdma(struct parser *p, const struct field *f, void *obj)
{
	(void)obj;
	return spec_walk_seq(p, f, rdma_item, NULL);
}

/* Nodes usually repeat the same device names port by port (mlx5_0 ..
 * mlx5_7): keep one copy per port position, compared with the previous
 * node's, so a large cluster stores them once. */
static void share_device(struct parser *p, struct ln_rdma_port *port, size_t k)
{
	const char **last = p->last_device;

	if (k >= SHARED_DEVICES || !port->device)
		return;
	if (last[k] && !strcmp(last[k], port->device))
		port->device = last[k];
	else
		last[k] = port->device;
}

/* The fields of a node entry that expand in step with its name: address,
 * user, then device and ip of each port. */
struct node_ranges {
	struct rng addr, user;
	struct rng *port;	/* 2 per port: device, ip */
};

static int node_ranges_init(struct parser *p, struct node_ranges *nr, const struct lead *name)
{
	const struct node_entry *ne = &p->ne;
	size_t k;

	spec_rng_init(p, &nr->addr, ne->n.address, "address", SP_HOST, ne->m[1], name);
	spec_rng_init(p, &nr->user, ne->n.user, "user", SP_USER, ne->m[3], name);
	nr->port = NULL;
	if (!ne->n_rdma)
		return 0;
	nr->port = calloc(ne->n_rdma * 2, sizeof(*nr->port));
	if (!nr->port)
		return -ENOMEM;
	for (k = 0; k < ne->n_rdma; k++) {
		spec_rng_init(p, &nr->port[2 * k], ne->rdma[k].r.device, "device", SP_DEVICE,
			      ne->rdma[k].m[0], name);
		spec_rng_init(p, &nr->port[2 * k + 1], ne->rdma[k].r.ip, "ip", SP_IP,
			      ne->rdma[k].m[2], name);
	}
	return 0;
}

static void node_ranges_release(struct node_ranges *nr, size_t n_rdma)
{
	size_t k;

	spec_rng_release(&nr->addr);
	spec_rng_release(&nr->user);
	for (k = 0; nr->port && k < 2 * n_rdma; k++)
		spec_rng_release(&nr->port[k]);
	free(nr->port);
}

/* The i-th node of the entry, with its ports. */
static int add_node(struct parser *p, struct lead *name, size_t i, struct node_ranges *nr,
		    int *quiet)
{
	struct ln_spec *spec = p->spec;
	struct ln_spec_store *st = p->st;
	const struct node_entry *ne = &p->ne;
	struct ln_node *node;
	struct node_raw *raw;
	size_t k;
	int r;

	r = GROW_ENTRY(spec->nodes, st->alloc_nodes, &ne->n, st->node_raw, st->alloc_node_raw,
		       spec->n_nodes, &node, &raw);
	if (r < 0)
		return r;
	r = spec_lead_get(p, name, i, SP_NODE, quiet, &node->name);
	if (r < 0)
		return r;
	node->address = spec_rng_get(p, &nr->addr, i);
	node->user = spec_rng_get(p, &nr->user, i);
	raw->name = ne->m[0];
	raw->address = ne->m[1];
	for (k = 0; k < ne->n_rdma; k++) {
		struct ln_rdma_port *port = GROW(st->ports, st->n_ports, st->alloc_ports);

		if (!port)
			return -ENOMEM;
		*port = ne->rdma[k].r;
		port->device = spec_rng_get(p, &nr->port[2 * k], i);
		port->ip = spec_rng_get(p, &nr->port[2 * k + 1], i);
		share_device(p, port, k);
		st->n_ports++;
	}
	spec->n_nodes++;
	return 0;
}

/* Append the entry's nodes (one, or one per name of its range). */
static int finish_node(struct parser *p)
{
	struct node_entry *ne = &p->ne;
	struct node_ranges nr;
	struct lead name;
	size_t i;
	int r, quiet = 0;

	ne->n.n_rdma = ne->n_rdma;
	for (i = 0; i < ne->n_rdma; i++)
		if (port_gpus(p, &ne->rdma[i]) < 0)
			return -ENOMEM;
	if (!spec_lead_open(p, &name, ne->n.name, "name", ne->m[0], p->spec->n_nodes, "nodes"))
		return 0;
	r = node_ranges_init(p, &nr, &name);
	for (i = 0; !r && i < name.n; i++)
		r = add_node(p, &name, i, &nr, &quiet);
	spec_lead_release(&name);
	node_ranges_release(&nr, ne->n_rdma);
	return r;
}

static int node_item(struct parser *p, const struct field *f)
{
	struct node_entry *ne = &p->ne;

	memset(&ne->n, 0, sizeof(ne->n));
	memset(ne->m, 0, sizeof(ne->m));
	ne->n_rdma = 0;
	ne->n.mark = spec_ev_mark(p);
	return spec_walk_entry(p, f, &ne->n, ne->m, "nodes", finish_node);
}

int spec_parse_nodes(struct parser *p, const struct field *f, void *obj)
{
	(void)obj;
	return spec_walk_seq(p, f, node_item, "a cluster has at least one node");
}
