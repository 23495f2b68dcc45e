/* SPDX-License-Identifier: MIT */
/*
 * The check pass's rules for the initiators: each one's node and target
 * resolved by name, one initiator per (node, target), its 'discovery'
 * (refused where the target asks TLS or DH-HMAC-CHAP), its mount (one
 * namespace, one node, a mount point once on a node: check_paths.c), and
 * its node among its target's 'hosts', or, where the target names none,
 * a (target, node) pair of its own. Runs after the nodes and targets.
 */
#include <stdlib.h>

#include "orchestrator/spec/check.h"

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
	       spec_streq(s->initiators[a].mount.path, s->initiators[b].mount.path);
}

static uint64_t h_pair(const void *c, uint32_t i)
{
	const struct spec_check_ctx *x = c;

	return spec_hash_str("", ((uint64_t)x->pair_t[i] << 32) ^ x->pair_n[i] ^ HASH_SEED);
}

static int eq_pair(const void *c, uint32_t a, uint32_t b)
{
	const struct spec_check_ctx *x = c;

	return x->pair_t[a] == x->pair_t[b] && x->pair_n[a] == x->pair_n[b];
}

static int match_pair(const void *c, uint32_t i, const void *key)
{
	const struct spec_check_ctx *x = c;
	const uint32_t *k = key;

	return x->pair_t[i] == k[0] && x->pair_n[i] == k[1];
}

/* Discovery is done and tested for plain ports only: a TLS port's
 * discovery controller asks TLS too, and one of a DH-HMAC-CHAP target has
 * not been proven in the lab; refused by name until they are. */
static void check_discovery(struct ln_spec *spec, const struct ln_initiator *in,
			    const struct ln_target *t)
{
	if (!in->discovery)
		return;
	if (t->tls)
		spec_diag(spec, in->discovery_mark,
			  "'discovery' is not supported with target '%s', which asks 'tls: required' "
			  "(llmnet does not read a discovery log over TLS yet); remove 'discovery': "
			  "the initiator connects to the target's declared address directly", t->nqn);
	else if (t->dhchap.present)
		spec_diag(spec, in->discovery_mark,
			  "'discovery' is not supported with target '%s', which has 'dhchap' (not "
			  "proven against a DH-HMAC-CHAP target's discovery controller yet); remove "
			  "'discovery': the initiator connects to the target's declared address "
			  "directly", t->nqn);
}

/* GPUDirect Storage reads NVMe-oF over RDMA only, not TCP (NVIDIA's GDS
 * documentation). The file systems llmnet mounts, ext4 (data=ordered,
 * its default, which llmnet keeps) and xfs, are both ones GDS supports. */
static void check_gds(struct ln_spec *spec, const struct ln_initiator *in,
		      const struct ln_target *t)
{
	if (in->gds && t->transport != LN_TRANSPORT_RDMA)
		spec_diag(spec, in->gds_mark,
			  "'gds' needs transport rdma, but target '%s' is %s: GPUDirect Storage "
			  "does not read NVMe-oF over TCP", t->nqn, ln_transport_name(t->transport));
}

int spec_check_initiators(struct spec_check_ctx *x)
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

		ni = ln_spec_node_index(spec, raw->node);
		if (raw->node && ni < 0)
			spec_report_unknown_init_node(x, i);
		ti = ln_spec_target_index(spec, raw->target);
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
		check_discovery(spec, in, t);
		check_gds(spec, in, t);
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
			r = spec_pair_add(x, (uint32_t)ti, (uint32_t)ni);
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
