/* SPDX-License-Identifier: MIT */
/*
 * probe_refused.c: `facts --refused PLACE`, the one connect validation's
 * access stage asks a node for, which the target must refuse. It is made
 * in a bounded child (run/bounded.h), so a connect the kernel never
 * answers costs the bound and no more; one that is accepted is deleted at
 * once (its namespace never opened), and whatever controller of that
 * subsystem the attempt made is deleted after it: nothing is left behind.
 */
#ifndef LN_AGENT_PROBE_REFUSED_H
#define LN_AGENT_PROBE_REFUSED_H

#include <stddef.h>

struct ln_agent;
struct json_object;

/* What the attempt presents as its secret. */
enum ln_refused_key {
	LN_REFUSED_KEY_NONE = 0,	/* no DH-HMAC-CHAP secret */
	LN_REFUSED_KEY_WRONG,		/* a fresh random one, made here: never the host's */
};

/* One attempt: the place (transport, address, service, subsystem), the
 * host NQN to present (NULL: the node's own; else an NQN it claims), and
 * the key. Strings point into the verb's copy of its argument. */
struct ln_refused_place {
	const char *transport, *traddr, *trsvcid, *subsysnqn;
	const char *claim;
	enum ln_refused_key key;
};

/* Split "TRANSPORT,ADDRESS,SERVICE,NQN,HOST,KEY" (s is modified in place):
 * the first four as facts --discovery takes them, HOST `self` or a valid
 * host NQN, KEY `none` or `wrong`. A wrong key over rdma is refused
 * (-EINVAL, as every malformed place): on 6.12 an NVMe/RDMA host given a
 * wrong DH-HMAC-CHAP secret blocks in nvme_auth_wait after the target has
 * refused it, and every later connect on the node hangs too. */
int ln_refused_parse_place(char *s, struct ln_refused_place *p);

/* Each of the n attempts, one after another, each bounded by timeout_s
 * seconds (and the request's budget), with the node's own host ID; the
 * answer (*out, the caller's) says for each what became of it
 * (docs/agent-protocol.md, "facts --refused"). Judges nothing. */
int ln_refused_facts(struct ln_agent *a, const struct ln_refused_place *places, size_t n,
		     unsigned timeout_s, struct json_object **out);

#endif
