/* SPDX-License-Identifier: MIT */
/*
 * Diagnosis: from a pairwise stage's results, name the bad nodes and the
 * bad links. A node that fails with every partner is a suspect node; a
 * failed pair whose ends are not bad nodes is a suspect link. Before any
 * verdict, a second pass retests each suspect: a suspect node against a
 * known-good peer (one that passed a pair), a suspect link by running the
 * same pair again. The verdicts:
 *   bad node:  failed with every partner and with the known-good peer;
 *   bad link:  failed again while both ends passed with someone else;
 *   undetermined: the failures cannot be pinned (no known-good peer, e.g.
 *              every pair failed, or an end passed nowhere).
 * A pair that passes on retest passes, and keeps its first failure in its
 * attempts. Everything is decided in node-index order, so the same input
 * gives the same verdicts.
 */
#ifndef LN_VALIDATE_DIAGNOSE_H
#define LN_VALIDATE_DIAGNOSE_H

#include "orchestrator/validate/pairing.h"
#include "orchestrator/validate/results.h"

/* Runs one round of disjoint pairs for stage (all at once, as the runner
 * likes) and fills out[i] for pairs[i] (zeroed by the caller): ok, value,
 * seconds, timed_out, and malloc'd detail and command strings, which the
 * diagnosis records and then frees. Returns 0 or a negative error that
 * stops the diagnosis. */
typedef int (*ln_round_fn)(void *ctx, enum ln_stage stage, const struct ln_pair *pairs,
			   size_t npairs, struct ln_attempt *out);

struct ln_diag_stats {
	size_t suspect_nodes, suspect_links;
	size_t retests, retest_rounds;
	size_t bad_nodes, bad_ports, bad_links, undetermined, passed_on_retry;
};

/* Diagnose stage's pair checks in r: retest suspects through run_round
 * (NULL: no second pass, suspects stay undetermined), update the checks
 * and append verdicts to r. Returns 0 or a negative error with err set. */
int ln_diagnose_stage(struct ln_results *r, enum ln_stage stage, ln_round_fn run_round,
		      void *ctx, struct ln_diag_stats *stats, struct ln_buf *err);

/* Verdicts for the non-pairwise stages: a failed or not-run node check is
 * its node's fault, a failed cluster check is the cluster's. */
int ln_diagnose_nodes(struct ln_results *r, struct ln_buf *err);

#endif
