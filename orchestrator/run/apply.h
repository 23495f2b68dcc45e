/* SPDX-License-Identifier: MIT */
/*
 * apply: drive the agents in dependency order, targets, then initiators,
 * then hostfiles, nodes in parallel within a phase; one agent call per node
 * per phase carrying the node's whole desired state. An initiator whose
 * target node failed or is unreachable is skipped with that reason. The
 * recap per node, and the exit code that says whether the cluster
 * converged, are orchestrator/report/recap.h's. The phases themselves
 * run through phase.h.
 */
#ifndef LN_APPLY_H
#define LN_APPLY_H

#include "orchestrator/run/notes.h"
#include "orchestrator/run/run.h"

/* The whole apply after facts: checks, phases, a second round for
 * initiators whose host identity was created in this run. Returns 0 or a
 * negative code when it could not run. */
int ln_apply_run(struct ln_run *r);

struct ln_count;
/*
 * The same in waves of batch nodes (NULL: one wave), targets' nodes before
 * their initiators' (rollout.h), each wave's phases done before the next
 * starts. When more of a wave's nodes than max_fail (NULL: no limit) did
 * not converge, the later waves are not run: their nodes are skipped with
 * that reason and r->rollout_stopped is set (the recap's exit code is then
 * LN_EXIT_STOPPED); r's notes say each wave and where the rollout stopped.
 */
int ln_apply_rollout(struct ln_run *r, const struct ln_count *batch,
		     const struct ln_count *max_fail);

/* Record each node's desired state as converged to in the state folder
 * (ln_state_save_applied(), the requests built here). Returns 0 or a
 * negative code with err set. */
int ln_apply_save_applied(struct ln_run *r, struct ln_buf *err);

/* What an apply that ended with exit code code leaves for the next runs:
 * each node's applied state and, when it did not converge, the retry
 * file (its path, or why not, in notes). */
void ln_apply_record(struct ln_run *r, int code, struct ln_notes *notes);

#endif
