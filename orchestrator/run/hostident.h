/* SPDX-License-Identifier: MIT */
/*
 * Host identity pinning (issue 32). The host NQN and host ID each node
 * reports at first contact are recorded in the state folder,
 * CLUSTER.hostident.json; before it, a node's last facts stand in. After
 * the facts phase a reachable node is excluded from the run (state
 * refused; its own pin, if any, replaces what it reported in its facts, as
 * for a silent node, so no key, allowed host or revocation follows from
 * its claim) when it reports:
 *   - another identity than its own pin, unless named in --accept-replaced
 *     (which re-pins it);
 *   - the identity another node, silent or not, has pinned;
 *   - the identity another reachable node reports while neither is pinned
 *     to it (both are excluded: no one can tell the owner).
 * The rest of the run goes on. Apply checks again after it re-reads the
 * facts of a node it gave an identity (ln_facts_reread), which pins it.
 */
#ifndef LN_HOSTIDENT_H
#define LN_HOSTIDENT_H

#include "orchestrator/run/run.h"

/* Check every reachable node of r against the pins and each other, exclude
 * the claimants (a warning note each), and pin the identities of the nodes
 * left. Returns the number of nodes excluded, or a negative code when the
 * pins cannot be written (err says why; nothing is excluded then twice). */
int ln_hostident_check(struct ln_run *r, struct ln_buf *err);

#endif
