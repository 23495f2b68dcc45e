/* SPDX-License-Identifier: MIT */
/*
 * apply: drive the agents in dependency order, targets, then initiators,
 * then hostfiles, nodes in parallel within a phase; one agent call per node
 * per phase carrying the node's whole desired state. An initiator whose
 * target node failed or is unreachable is skipped with that reason. The
 * recap per node, and the exit code that says whether the cluster
 * converged, are orchestrator/report/recap.h's. Also the phase runner
 * teardown shares.
 */
#ifndef LN_APPLY_H
#define LN_APPLY_H

#include "orchestrator/run/run.h"

/* Which request a phase sends. */
enum ln_phase_kind {
	LN_PK_APPLY_TARGETS,	/* apply, targets-phase request */
	LN_PK_APPLY_FULL,	/* apply, the full desired state */
	LN_PK_PLAN,		/* plan (read-only), full desired state */
	LN_PK_TEARDOWN,		/* teardown --cluster C [--purge] */
};

/* Run one phase over the selected nodes; answers are counted into the
 * nodes' recap. Returns 0 or a negative code when the phase could not run. */
int ln_apply_phase(struct ln_run *r, const char *name, const unsigned char *sel,
		   enum ln_phase_kind kind);

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

#endif
