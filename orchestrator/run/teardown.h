/* SPDX-License-Identifier: MIT */
/*
 * teardown: remove, in reverse order (nodes with hostfiles and initiators
 * first, then target nodes, those serving others' targets before the nodes
 * they connect to), exactly what llmnet owns on each node for this
 * cluster name; the agents know what that is from their state files.
 * Storage is never pulled from under an initiator: a target goes only
 * once every initiator of it in the spec disconnected in this run, and its
 * agent keeps it still while the kernel shows a host holding a controller
 * on it; --force names the targets that go anyway. --purge also deletes
 * the backing files the agents created and, last, the agent itself.
 */
#ifndef LN_TEARDOWN_H
#define LN_TEARDOWN_H

#include "common/buf.h"
#include "orchestrator/run/notes.h"
#include "orchestrator/run/run.h"

/*
 * --force's names: target NQNs, or node names (each target the node
 * exports). Marks force[t] (spec->n_targets entries) for each. Returns 0,
 * or -EINVAL with the message in err for a name that is neither, or a node
 * that exports no target.
 */
int ln_teardown_force(const struct ln_spec *spec, const char *const *names, size_t n,
		      unsigned char *force, struct ln_buf *err);

/* The same check alone, before any node is contacted: 0, -EINVAL with
 * the message in err, or -ENOMEM. */
int ln_teardown_check_force(const struct ln_spec *spec, const char *const *names, size_t n,
			    struct ln_buf *err);

/*
 * Why target t may not be removed yet: the first initiator of it in the
 * spec, on another node, that did not disconnect in this run (its node
 * outside --limit, not reached, not torn down yet, or its disconnect
 * failed), as "initiator 'NODE' not disconnected (WHY)" in why. Returns 1
 * when it must stay, 0 when every one disconnected.
 */
int ln_teardown_target_kept(const struct ln_run *r, size_t t, struct ln_buf *why);

/* After ln_facts_gather(). force: --force's names (ln_teardown_force()).
 * Returns 0 or a negative code when a phase could not run at all (-EINVAL:
 * a name in force is unknown); per-node outcomes are in the nodes (see
 * ln_recap_apply, report/recap.h), a kept target in its node's answer
 * ("kept"). */
int ln_teardown_run(struct ln_run *r, const char *const *force, size_t n_force);

/* What a teardown leaves for the next runs: each node that converged is
 * recorded holding nothing (ln_state_save_applied()); why not, in notes. */
void ln_teardown_record(struct ln_run *r, struct ln_notes *notes);

#endif
