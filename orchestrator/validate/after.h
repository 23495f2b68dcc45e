/* SPDX-License-Identifier: MIT */
/*
 * After-validate actions: what llmnet does with a validation's verdicts
 * once the run is over and its reports are written. They live in one
 * table (after.c), run in its order, each row:
 *
 *   name    what the action is called in messages and docs
 *   wanted  whether the command line asks for it (reads struct
 *           ln_after_opts only; contacts nothing)
 *   act     the action itself, fed the results (per-node and per-link
 *           verdicts, res->verdicts, and every check); 0, or a negative
 *           code with the message in err
 *
 * Row 1, "webhook": --report-url URL POSTs the JSON report there
 * (report/webhook.c), bounded by --report-timeout.
 *
 * A new action (say, draining the nodes a verdict names from Slurm) is
 * one more row: its options in struct ln_after_opts (set by cmd/ from its
 * own flags), a wanted() that looks at them, an act() that reads the
 * verdicts. An action that fails makes validate exit 1 (docs/exit-codes.md)
 * and does not stop the rows after it.
 */
#ifndef LN_VALIDATE_AFTER_H
#define LN_VALIDATE_AFTER_H

#include "orchestrator/run/notes.h"
#include "orchestrator/validate/results.h"

/* What the after-validate actions are asked to do: validate's options. */
struct ln_after_opts {
	const char *url;		/* --report-url: POST the JSON report there; NULL: not */
	long url_timeout_s;		/* --report-timeout: the POST's bound */
	const char *auth;		/* its credentials (--report-url-auth-file or
					 * $LLMNET_REPORT_AUTH); NULL: none */
};

/* Run every action o wants, in the table's order, over res. Returns
 * LN_EXIT_OK, or LN_EXIT_FAILED when one failed (notes say why). */
int ln_validate_after(const struct ln_results *res, const struct ln_after_opts *o,
		      struct ln_notes *notes);

#endif
