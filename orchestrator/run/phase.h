/* SPDX-License-Identifier: MIT */
/*
 * One phase of a run: the same agent verb on every selected node, in
 * parallel through the fan-out window, each node's answer counted into
 * its recap. apply's phases (targets, initiators, hostfiles, the plan of
 * the nodes outside --limit) and teardown's all run through it.
 */
#ifndef LN_PHASE_H
#define LN_PHASE_H

#include "orchestrator/run/run.h"

/* Which request a phase sends. */
enum ln_phase_kind {
	LN_PK_APPLY_TARGETS,	/* apply, targets-phase request */
	LN_PK_APPLY_FULL,	/* apply, the full desired state */
	LN_PK_PLAN,		/* plan (read-only), full desired state */
	LN_PK_TEARDOWN,		/* teardown --cluster C [--purge], the teardown request */
};

/* Run phase name over the nodes sel marks; answers are counted into the
 * nodes' recap (except a plan's), a node that fails is marked with the
 * reason, and a selected node not started (an interrupt) is skipped.
 * Returns 0, or a negative code when the phase could not run. */
int ln_phase_run(struct ln_run *r, const char *name, const unsigned char *sel,
		 enum ln_phase_kind kind);

#endif
