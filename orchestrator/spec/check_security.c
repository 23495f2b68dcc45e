/* SPDX-License-Identifier: MIT */
/*
 * The check pass's rules for NVMe/TCP TLS (a target's 'tls'), called from
 * check.c once the targets are resolved.
 */
#include "orchestrator/spec/impl.h"

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
