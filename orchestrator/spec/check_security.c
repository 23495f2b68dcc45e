/* SPDX-License-Identifier: MIT */
/*
 * The check pass's rules for a target's security: DH-HMAC-CHAP ('dhchap':
 * hosts by name, one setting per host entry of a node) and NVMe/TCP TLS
 * ('tls': tcp only, its PSKs in dhchap's key directory, one setting per
 * port). Runs once the targets' hosts are laid out.
 */
#include <errno.h>
#include <stdlib.h>

#include "orchestrator/spec/check.h"

/* ---- DH-HMAC-CHAP ----------------------------------------------------- */

static int same_dhchap(const struct ln_dhchap *a, const struct ln_dhchap *b)
{
	if (!a->present || !b->present)
		return a->present == b->present;
	return spec_streq(a->key_dir, b->key_dir) && a->hash == b->hash &&
	       a->dhgroup == b->dhgroup && a->bidirectional == b->bidirectional;
}

/* (target node, host node, pair) order: a node's host entries together. */
static int cmp_host_entry(const void *c, uint32_t i, uint32_t j)
{
	const struct spec_check_ctx *x = c;
	size_t ni = x->spec->targets[x->pair_t[i]].node, nj = x->spec->targets[x->pair_t[j]].node;

	if (ni != nj)
		return ni < nj ? -1 : 1;
	if (x->pair_n[i] != x->pair_n[j])
		return x->pair_n[i] < x->pair_n[j] ? -1 : 1;
	return 0;
}

/*
 * A target with dhchap names its hosts (a subsystem open to any host has
 * no host entry to key), and nvmet keeps the secret, hash and group on
 * hosts/<hostnqn>, one entry per node shared by every subsystem there:
 * two targets of one node that allow one host must ask the same settings
 * (no dhchap is a setting too: the keyed entry would demand it).
 */
int spec_check_dhchap(struct spec_check_ctx *x)
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
	spec_sort_idx(order, x->n_pairs, 0, cmp_host_entry, x);
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

/* ---- TLS -------------------------------------------------------------- */

/*
 * tls: TLS 1.3 exists for NVMe/TCP only; the PSKs live in dhchap's key
 * directory (so a TLS target has dhchap, and names its hosts through it);
 * the port, not the subsystem, requires TLS, so targets sharing one port
 * agree.
 */
int spec_check_tls(struct ln_spec *spec)
{
	size_t i, j;

	for (i = 0; i < spec->n_targets; i++) {
		const struct ln_target *t = &spec->targets[i];

		if (!t->tls)
			continue;
		if (t->transport != LN_TRANSPORT_TCP)
			spec_diag(spec, t->mark, "'tls' needs transport tcp: target '%s' uses %s, "
				  "which has no TLS", t->nqn, ln_transport_name(t->transport));
		else if (!t->dhchap.present)
			spec_diag(spec, t->mark, "'tls' keeps each host's PSK in dhchap's key_dir "
				  "(KEY_DIR/<target-node>/<host-node>.psk): give target '%s' a "
				  "'dhchap'", t->nqn);
	}
	for (i = 0; i < spec->n_targets; i++)
		for (j = 0; j < i; j++) {
			const struct ln_target *a = &spec->targets[j], *b = &spec->targets[i];

			if (a->tls == b->tls || a->node != b->node || a->transport != b->transport ||
			    a->service != b->service || !a->address || !b->address || !spec_addr_eq(a->address, b->address))
				continue;
			spec_diag(spec, b->mark, "target '%s' and target '%s' (line %u) share port "
				  "%s:%u on node '%s' but only one has 'tls: required' (the port "
				  "requires TLS for both)", b->nqn, a->nqn, a->mark.line,
				  b->address ? b->address : "?", b->service, spec->nodes[b->node].name);
			break;
		}
	return 0;
}
