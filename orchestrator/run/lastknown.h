/* SPDX-License-Identifier: MIT */
/*
 * plan for the nodes a run could not reach: what apply would change
 * against their last-known state (the state folder, state.h), so a
 * silent node's plan is not simply "unknown".
 */
#ifndef LN_LASTKNOWN_H
#define LN_LASTKNOWN_H

#include "common/buf.h"
#include "orchestrator/run/run.h"

/*
 * For every node that could not be reached (or refused us) in a plan:
 * what apply would change against its last-known state, from the desired
 * state now and the one recorded at its last apply, as an agent-style
 * change list in nr->answer with nr->cached_at the time of that apply
 * (nr->answer stays NULL when nothing is on record). A silent node
 * without facts is given its last-known ones first, since its desired
 * state depends on them. The node's state and exit code stay what they
 * are. Returns 0 or -ENOMEM.
 */
int ln_lastknown_plan(struct ln_run *r, struct ln_buf *err);

#endif
