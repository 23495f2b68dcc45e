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
 * Row 1, "slurm": --drain, --drain=plan, --resume (or the spec's
 * slurm.drain and slurm.resume) drain the nodes the verdicts blame and
 * lift llmnet's own drains of nodes that passed again, through scontrol
 * on slurm.node (validate/slurm.c). It runs on the results, before the
 * recap and the reports are rendered, so they list its drains and lifts.
 *
 * Row 2, "webhook": --report-url URL POSTs the JSON report there
 * (report/webhook.c), bounded by --report-timeout, after the files.
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

struct ln_probe_ops;
struct ln_spec;

/* --drain's three values. */
enum ln_drain_mode {
	LN_DRAIN_NONE = 0,	/* no --drain (the spec's slurm.drain may still ask) */
	LN_DRAIN_DO,		/* --drain */
	LN_DRAIN_PLAN,		/* --drain=plan: read Slurm, print, change nothing */
};

/* What the after-validate actions are asked to do: validate's options. */
struct ln_after_opts {
	const char *url;		/* --report-url: POST the JSON report there; NULL: not */
	long url_timeout_s;		/* --report-timeout: the POST's bound */
	const char *auth;		/* its credentials (--report-url-auth-file or
					 * $LLMNET_REPORT_AUTH); NULL: none */
	enum ln_drain_mode drain;	/* --drain[=plan] */
	int resume;			/* --resume */
	/* Set by validate's course, not by cmd/: the spec (its slurm
	 * section, each node's Slurm name), the agents' run verb (scontrol
	 * on slurm.node) and the progress lines (what will change, printed
	 * before it does). */
	const struct ln_spec *spec;
	const struct ln_probe_ops *ops;
	void *ops_ctx;
	void (*progress)(void *ctx, const char *line);
	void *progress_ctx;
};

/* Run the actions o wants that act on the results (the Slurm row), in
 * the table's order; they may add to res. Before the recap is rendered.
 * Returns LN_EXIT_OK, or LN_EXIT_FAILED when one failed (notes say why). */
int ln_validate_after_results(struct ln_results *res, const struct ln_after_opts *o,
			      struct ln_notes *notes);

/* Run the actions o wants that follow the reports (the webhook), in the
 * table's order, over res. The same returns. */
int ln_validate_after(struct ln_results *res, const struct ln_after_opts *o,
		      struct ln_notes *notes);

#endif
