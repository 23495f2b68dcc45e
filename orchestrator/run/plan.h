/* SPDX-License-Identifier: MIT */
/*
 * Desired state per node, from the spec and every node's facts: a target's
 * allowed hosts are the host NQNs its initiators report (an unreachable
 * initiator keeps the NQN the target has on record, "blocked: unreachable",
 * never revoked), every node gets the hostfile. Then the read-only `plan`
 * of each agent (orchestrator/report/recap.h renders it).
 */
#ifndef LN_PLAN_H
#define LN_PLAN_H

#include "common/buf.h"
#include "orchestrator/run/run.h"

/* Two reachable nodes reporting one host NQN (a cloned image): -LN_ECONFLICT
 * naming both; nothing may change then. */
int ln_plan_check_duplicates(const struct ln_run *r, struct ln_buf *err);

/* Which phase a request is for. */
enum ln_plan_phase {
	LN_PHASE_FULL = 0,	/* everything the node should end up with */
	LN_PHASE_TARGETS,	/* targets now; initiators to other nodes only if already connected */
};

/*
 * The request (the agent protocol's desired local state) for node i.
 * notes (may be NULL) receives one line per allowed host kept for an
 * unreachable initiator. Returns a new object or NULL (-ENOMEM).
 */
struct json_object *ln_plan_request(const struct ln_run *r, size_t i, enum ln_plan_phase phase,
				    struct ln_buf *notes);

/* What node i is in the spec: LN_ROLE_TARGET when it exports targets,
 * LN_ROLE_INITIATOR when it connects to some, both or neither. */
#define LN_ROLE_TARGET 0x1u
#define LN_ROLE_INITIATOR 0x2u
unsigned ln_plan_roles(const struct ln_spec *spec, size_t i);

/* Build requests and ask every reachable node's agent for its plan. */
int ln_plan_run(struct ln_run *r);

/* Append the warnings of node nr's agent answer to w, a line "NODE: TEXT"
 * each (a kept backing file, free space, ...): the agent says them, the
 * controller must not drop them. */
void ln_plan_agent_warnings(const struct ln_node_run *nr, struct ln_buf *w);

/* Count actions in an answer's change list. */
void ln_plan_count(struct json_object *answer, int *create, int *change, int *remove, int *ok,
		   int *error);
/* 1 when node nr's last answer has a change (or a failed one) left to
 * make, else 0. */
int ln_plan_pending(const struct ln_node_run *nr);

/* The source address initiator in's connection to tg is bound to (issue
 * 27): the initiator node's declared port on the target's rail; NULL
 * when none (the route picks, as before). Borrowed from the spec. */
const char *ln_plan_initiator_source(const struct ln_spec *sp, const struct ln_initiator *in,
				     const struct ln_target *tg);

#endif
