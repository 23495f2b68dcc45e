/* SPDX-License-Identifier: MIT */
/*
 * The facts phase: connect, make sure the agent is current, and gather
 * facts from every node of a run (see orchestrator/run/run.h for the run
 * record and its session policy). Includes run.h, so a file that needs
 * struct ln_run and the facts phase includes this one header.
 */
#ifndef LN_FACTS_H
#define LN_FACTS_H

#include "orchestrator/run/run.h"

/* Connect, ensure the agent, read facts from every node. Nodes that fail
 * are marked (state, reason) and the run goes on with the others; a host
 * identity the agent found not valid is a warning in r's notes. */
int ln_facts_gather(struct ln_run *r);

/* Read node nr's facts again over its session (reopened if it was
 * closed) and replace nr->facts; on failure nr->facts stays as it was
 * and err says why. */
int ln_facts_read(struct ln_run *r, struct ln_node_run *nr, struct ln_buf *err);

/* Read the facts of the nodes sel marks again, all at once through the
 * fan-out window; a node whose facts cannot be read is unmarked, with a
 * warning in r's notes. Returns 0, or a negative code when no worker
 * could start. */
int ln_facts_reread(struct ln_run *r, unsigned char *sel);

/* The host NQN a node reported, or NULL when none or when the agent's
 * rules (ln_valid_host_nqn) refuse it. */
const char *ln_facts_host_nqn(const struct ln_node_run *nr);
/* The host ID a node reported, or NULL when none or not a UUID. */
const char *ln_facts_host_id(const struct ln_node_run *nr);

#endif
