/* SPDX-License-Identifier: MIT */
/*
 * The check pass's rule for an initiator's 'discovery', called from
 * check.c's initiator loop once its target is resolved.
 */
#include "orchestrator/spec/impl.h"

/* Discovery is done and tested for plain ports only: a TLS port's
 * discovery controller asks TLS too, and one of a DH-HMAC-CHAP target has
 * not been proven in the lab; refused by name until they are. */
void spec_check_discovery(struct ln_spec *spec, const struct ln_initiator *in,
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
