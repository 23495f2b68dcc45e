/* SPDX-License-Identifier: MIT */
/*
 * The storage section: NVMe-oF targets (with their namespaces and allowed
 * hosts) and the initiators that connect to them. Entries are walked
 * whole, then expanded, one target per NQN of a range and one initiator
 * per node of a range. References between them (an initiator naming a
 * target, a target's node and hosts) are resolved by the check pass.
 */
#include <errno.h>
#include <string.h>

#include "orchestrator/spec/parser.h"

/* ---- namespaces and hosts --------------------------------------------- */

/* A namespace is a file with a size, or a device. Judged on the keys
 * written (seen, by ns_fields index), so a size that failed to parse is
 * not also reported missing. */
static void check_namespace(struct parser *p, const struct ln_namespace *ns, uint64_t seen)
{
	int file = !!(seen & 2), size = !!(seen & 4), dev = !!(seen & 8), adopt = !!(seen & 16);

	if (file && dev)
		spec_diag(p->spec, ns->mark, "namespace %u has both 'file' and 'device': it takes one",
			  ns->nsid);
	else if (!file && !dev)
		spec_diag(p->spec, ns->mark, "namespace %u needs 'file' (with 'size') or 'device'",
			  ns->nsid);
	else if (file && !size)
		spec_diag(p->spec, ns->mark, "namespace %u: 'file' needs a 'size'", ns->nsid);
	else if (dev && size)
		spec_diag(p->spec, ns->mark,
			  "namespace %u: 'size' goes with 'file'; a device has its own size",
			  ns->nsid);
	else if (file && ns->size % 512)
		spec_diag(p->spec, ns->mark,
			  "namespace %u: size %llu is not a multiple of 512 bytes", ns->nsid,
			  (unsigned long long)ns->size);
	else if (dev && adopt)
		spec_diag(p->spec, ns->mark,
			  "namespace %u: 'adopt' goes with 'file'; llmnet never creates or deletes "
			  "a device", ns->nsid);
}

static int ns_item(struct parser *p, const struct field *f)
{
	struct target_entry *te = &p->te;
	struct ns_entry *e = GROW(te->ns, te->n_ns, te->alloc_ns);
	int r;

	if (!e)
		return -ENOMEM;
	te->n_ns++;
	e->ns.mark = spec_ev_mark(p);
	r = spec_walk_map(p, f->sub, &e->ns, e->m, "namespaces");
	if (r < 0 || p->ev.type != YAML_MAPPING_END_EVENT)
		return r;
	check_namespace(p, &e->ns, p->seen);
	return 0;
}

int spec_parse_namespaces(struct parser *p, const struct field *f, void *obj)
{
	(void)obj;
	return spec_walk_seq(p, f, ns_item, "a target serves at least one");
}

static int host_item(struct parser *p, const struct field *f)
{
	struct target_entry *te = &p->te;
	const yaml_event_t *e = &p->ev;
	struct host_raw *h;

	(void)f;
	if (e->type != YAML_SCALAR_EVENT) {
		spec_diag(p->spec, spec_ev_mark(p), "'hosts' lists node names, not %s",
			  spec_kind(p));
		return spec_skip_node(p);
	}
	if (strlen((const char *)e->data.scalar.value) != e->data.scalar.length) {
		spec_diag(p->spec, spec_ev_mark(p), "'hosts' holds a NUL byte");
		return 0;
	}
	h = GROW(te->hosts, te->n_hosts, te->alloc_hosts);
	if (!h)
		return -ENOMEM;
	h->name = spec_arena_strndup(&p->st->arena, (const char *)e->data.scalar.value,
				     e->data.scalar.length);
	if (!h->name)
		return -ENOMEM;
	h->mark = spec_ev_mark(p);
	te->n_hosts++;
	return 0;
}

int spec_parse_hosts(struct parser *p, const struct field *f, void *obj)
{
	struct target_entry *te = obj;
	const yaml_event_t *e = &p->ev;

	te->t.hosts_given = 1;
	if (e->type == YAML_SCALAR_EVENT) {
		if (!strcmp((const char *)e->data.scalar.value, "any")) {
			te->t.hosts_any = 1;
			return 0;
		}
		spec_diag(p->spec, spec_ev_mark(p),
			  "'hosts' takes a list of node names or 'any', not '%.100s'",
			  (const char *)e->data.scalar.value);
		return 0;
	}
	return spec_walk_seq(p, f, host_item, NULL);
}

/* ---- targets ---------------------------------------------------------- */

/* The i-th target of the entry, with its namespaces and hosts. */
static int add_target(struct parser *p, struct lead *nqn, size_t i, struct rng *node,
		      struct rng *addr, int *quiet)
{
	struct ln_spec *spec = p->spec;
	struct ln_spec_store *st = p->st;
	const struct target_entry *te = &p->te;
	struct ln_target *t;
	struct target_raw *raw;
	size_t k;
	int r;

	r = GROW_ENTRY(spec->targets, st->alloc_targets, &te->t, st->target_raw,
		       st->alloc_target_raw, spec->n_targets, &t, &raw);
	if (r < 0)
		return r;
	r = spec_lead_get(p, nqn, i, SP_NQN, quiet, &t->nqn);
	if (r < 0)
		return r;
	t->address = spec_rng_get(p, addr, i);
	raw->node = spec_rng_get(p, node, i);
	raw->nqn = te->m[0];
	raw->node_mark = te->m[1];
	raw->address = te->m[3];
	raw->hosts = te->m[5];
	raw->n_hosts = te->n_hosts;
	t->n_namespaces = te->n_ns;
	for (k = 0; k < te->n_ns; k++)
		if (APPEND(st->nss, st->n_nss, st->alloc_nss, &te->ns[k].ns) < 0)
			return -ENOMEM;
	for (k = 0; k < te->n_hosts; k++)
		if (APPEND(st->hosts_raw, st->n_hosts_raw, st->alloc_hosts_raw, &te->hosts[k]) < 0)
			return -ENOMEM;
	spec->n_targets++;
	return 0;
}

/* Append the entry's targets (one, or one per NQN of its range). */
static int finish_target(struct parser *p)
{
	struct target_entry *te = &p->te;
	struct rng node, addr;
	struct lead nqn;
	size_t i;
	int r = 0, quiet = 0;	/* the range's first bad NQN is reported, once */

	if (!spec_lead_open(p, &nqn, te->t.nqn, "nqn", te->m[0], p->spec->n_targets, "targets"))
		return 0;
	spec_rng_init(p, &node, te->node, "node", SP_NODE, te->m[1], &nqn);
	spec_rng_init(p, &addr, te->t.address, "address", SP_IP, te->m[3], &nqn);
	for (i = 0; !r && i < nqn.n; i++)
		r = add_target(p, &nqn, i, &node, &addr, &quiet);
	spec_lead_release(&nqn);
	spec_rng_release(&node);
	spec_rng_release(&addr);
	return r;
}

static int target_item(struct parser *p, const struct field *f)
{
	struct target_entry *te = &p->te;

	memset(&te->t, 0, sizeof(te->t));
	memset(te->m, 0, sizeof(te->m));
	te->node = NULL;
	te->n_ns = 0;
	te->n_hosts = 0;
	te->t.service = 4420;
	te->t.mark = spec_ev_mark(p);
	return spec_walk_entry(p, f, te, te->m, "targets", finish_target);
}

int spec_parse_targets(struct parser *p, const struct field *f, void *obj)
{
	(void)obj;
	return spec_walk_seq(p, f, target_item, NULL);
}

/* ---- initiators ------------------------------------------------------- */

/* The i-th initiator of the entry. */
static int add_initiator(struct parser *p, struct lead *node, size_t i, struct rng *target)
{
	struct ln_spec *spec = p->spec;
	struct ln_spec_store *st = p->st;
	const struct init_entry *ie = &p->ie;
	struct ln_initiator *in;
	struct init_raw *raw;
	int quiet = 1;	/* node names are judged by the check pass (unknown node) */
	int r;

	r = GROW_ENTRY(spec->initiators, st->alloc_initiators, &ie->i, st->init_raw,
		       st->alloc_init_raw, spec->n_initiators, &in, &raw);
	if (r < 0)
		return r;
	r = spec_lead_get(p, node, i, SP_NONE, &quiet, &raw->node);
	if (r < 0)
		return r;
	raw->target = spec_rng_get(p, target, i);
	raw->node_mark = ie->m[0];
	raw->target_mark = ie->m[1];
	in->discovery_mark = ie->m[LN_INIT_F_DISCOVERY];
	in->gds_mark = ie->m[LN_INIT_F_GDS];
	spec->n_initiators++;
	return 0;
}

/* Append the entry's initiators (one, or one per node of its range). */
static int finish_initiator(struct parser *p)
{
	struct init_entry *ie = &p->ie;
	struct rng target;
	struct lead node;
	size_t i;
	int r = 0;

	if (!spec_lead_open(p, &node, ie->node, "node", ie->m[0], p->spec->n_initiators,
			    "initiators"))
		return 0;
	spec_rng_init(p, &target, ie->target, "target", SP_NQN, ie->m[1], &node);
	for (i = 0; !r && i < node.n; i++)
		r = add_initiator(p, &node, i, &target);
	spec_lead_release(&node);
	spec_rng_release(&target);
	return r;
}

static int init_item(struct parser *p, const struct field *f)
{
	struct init_entry *ie = &p->ie;

	memset(ie, 0, sizeof(*ie));
	ie->i.ctrl_loss_tmo_ms = -1;
	ie->i.reconnect_delay_ms = -1;
	ie->i.mark = spec_ev_mark(p);
	return spec_walk_entry(p, f, ie, ie->m, "initiators", finish_initiator);
}

int spec_parse_initiators(struct parser *p, const struct field *f, void *obj)
{
	(void)obj;
	return spec_walk_seq(p, f, init_item, NULL);
}

/* ---- mounts ----------------------------------------------------------- */

int spec_parse_fs(struct parser *p, const struct field *f, void *obj, const char *v,
		  struct ln_mark m)
{
	size_t i;

	for (i = 0; spec_fs_names[i]; i++) {
		if (!strcmp(spec_fs_names[i], v)) {
			*(const char **)spec_at(obj, f->off) = spec_fs_names[i];
			return 0;
		}
	}
	/* Keep what was written, so the mount does not also read as lacking
	 * a file system. */
	*(const char **)spec_at(obj, f->off) = spec_arena_strndup(&p->st->arena, v, strlen(v));
	ln_buf_reset(&p->why);
	ln_buf_addf(&p->why, "'%s' takes ", f->key);
	spec_enum_list(&p->why, spec_fs_names);
	ln_buf_addf(&p->why, ", not '%.100s'", v);
	spec_did_you_mean(&p->why, v, spec_fs_names, i, sizeof(spec_fs_names[0]));
	spec_diag(p->spec, m, "%s", p->why.buf);
	return 0;
}
