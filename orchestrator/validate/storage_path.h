/* SPDX-License-Identifier: MIT */
/*
 * A failed storage check blamed on its path (issue 27, point 5): an io
 * check whose connection's rail is known (ln_check.via, via_port, from_port) is
 * judged with the pairwise verdicts of the same run on that rail. The
 * target's port, the link between the two nodes, or the target's node,
 * when a pairwise stage named it; the initiator's node otherwise, as for
 * any node check.
 */
#ifndef LN_VALIDATE_STORAGE_PATH_H
#define LN_VALIDATE_STORAGE_PATH_H

#include "orchestrator/spec/spec.h"
#include "orchestrator/validate/rails.h"
#include "orchestrator/validate/results.h"

/* The rail of initiator in's connection: the port of the target's node
 * that holds the target's address (*tport) and the initiator node's port
 * on that port's rail (*iport). 0, or -1 when the address is on no
 * declared port or the initiator has none on its rail. */
int ln_storage_path(const struct ln_spec *spec, const struct ln_railmap *m,
		    const struct ln_initiator *in, int *iport, int *tport);

/* The verdict of failed io check c when a pairwise verdict of r names its
 * path: added to r, 1. 0 when none does (the caller names the
 * initiator's node), -ENOMEM. */
int ln_storage_path_verdict(struct ln_results *r, const struct ln_check *c);

#endif
