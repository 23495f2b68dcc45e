/* SPDX-License-Identifier: MIT */
/*
 * The access stage (stage_access.c): for each target, the connects it
 * must refuse, made from the nodes themselves through the agent's
 * `facts --refused` (agents/agent/initiator/probe_refused.c). The plan of
 * attempts is a pure function of the spec and of which nodes can probe,
 * so it is tested alone (test_validate_access).
 */
#ifndef LN_VALIDATE_STAGE_ACCESS_H
#define LN_VALIDATE_STAGE_ACCESS_H

#include <stddef.h>

#include "orchestrator/spec/spec.h"

enum vs_access_kind {
	VS_ACCESS_OTHER_HOST = 0,	/* a node not in hosts, as itself */
	VS_ACCESS_CLAIM,		/* a node claiming an allowed host's NQN, no secret */
	VS_ACCESS_WRONG_SECRET,		/* the same claim with a wrong secret (tcp only) */
	VS_ACCESS_PLAIN_TCP,		/* a TLS target: a connect without TLS */
};

struct vs_access_attempt {
	enum vs_access_kind kind;
	size_t prober;		/* the node that connects; (size_t)-1: none (not run) */
	size_t claimed;		/* the node whose host NQN is claimed; (size_t)-1: its own */
	int wrong_key;		/* a wrong DH-HMAC-CHAP secret (never over rdma) */
	int must_refuse;	/* 0: a claim on a target without dhchap or TLS, whose
				 * acceptance is a warning (open to NQN claims) */
	int moot;		/* not tried, and not to be (why says why) */
	const char *why;	/* static: why there is no prober, or why moot */
};

#define VS_ACCESS_MAX 4

/* The attempts for target t of sp into out (at most VS_ACCESS_MAX), in
 * kind order; their number. host_nqn[i]: node i's host NQN as its facts
 * say, NULL when unknown (it can neither probe nor be claimed); under[i]:
 * node i is under test (NULL: every node). A prober is never the claimed
 * node, and nodes that hold no NVMe-oF connection are preferred (their
 * host ID is then free for a claim, and a second connect to a subsystem
 * they are connected to is refused by their own kernel). */
size_t vs_access_plan(const struct ln_spec *sp, size_t t, const char *const *host_nqn,
		      const unsigned char *under, struct vs_access_attempt *out);

/* "TRANSPORT,ADDRESS,SERVICE,NQN,self|HOSTNQN,none|wrong": what the agent
 * is asked for attempt at of target t (malloc'd; NULL out of memory or
 * for a wrong key over rdma, which is never asked). */
char *vs_access_place(const struct ln_spec *sp, size_t t, const struct vs_access_attempt *at,
		      const char *const *host_nqn);

#endif
