/* SPDX-License-Identifier: MIT */
/*
 * teardown: remove, in reverse order (nodes with hostfiles and initiators
 * first, then target nodes), exactly what llmnet owns on each node for
 * this cluster name; the agents know what that is from their state files.
 * --purge also deletes the backing files the agents created and, last,
 * the agent itself.
 */
#ifndef LN_TEARDOWN_H
#define LN_TEARDOWN_H

#include "orchestrator/run.h"

/* After ln_facts_gather(). Returns 0 or a negative code when a phase could
 * not run at all; per-node outcomes are in the nodes (see ln_apply_recap). */
int ln_teardown_run(struct ln_run *r);

#endif
