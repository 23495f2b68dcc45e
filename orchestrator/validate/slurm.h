/* SPDX-License-Identifier: MIT */
/*
 * The Slurm after-validate action (after.c's "slurm" row): the verdicts
 * mapped through one table to the nodes they drain, each drain made
 * safely (its state read first, never over someone's drain or a DOWN
 * node, read back after), and llmnet's own drains lifted (UNDRAIN, never
 * RESUME) of nodes that ran and passed every stage the drain's reason
 * lists. scontrol runs through the agent on slurm.node, in the three
 * forms of common/slurm.h; what it did or would do is added to the
 * results (res->slurm), which the recap and reports list.
 */
#ifndef LN_VALIDATE_SLURM_H
#define LN_VALIDATE_SLURM_H

#include "common/buf.h"
#include "orchestrator/validate/after.h"
#include "orchestrator/validate/results.h"

/* scontrol's bound, per call. */
#define LN_SLURM_TIMEOUT_S 20

/* One verdict kind's row: whether it drains the node it names, and, if
 * not, what it blames instead ("the link, not a node"). */
struct ln_slurm_verdict_row {
	enum ln_verdict_kind kind;
	int drains;
	const char *not_a_node;
};

/* The row of kind k; NULL for a kind the table has no row for (which
 * drains nobody, and the action says so). */
const struct ln_slurm_verdict_row *ln_slurm_verdict_row(enum ln_verdict_kind k);

/* --drain and --resume act through the spec's slurm section: without one
 * they are a usage error (-EINVAL, why in err), found before any node is
 * contacted. */
int ln_slurm_opts_check(const struct ln_spec *spec, const struct ln_after_opts *o,
			struct ln_buf *err);

/* after.c's row: wanted when --drain, --drain=plan, --resume, or the
 * spec's slurm.drain or slurm.resume asks; act over res. */
int ln_slurm_wanted(const struct ln_after_opts *o);
int ln_slurm_act(struct ln_results *res, const struct ln_after_opts *o, struct ln_buf *err);

#endif
