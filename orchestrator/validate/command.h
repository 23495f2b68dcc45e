/* SPDX-License-Identifier: MIT */
/*
 * `llmnet validate` over a started run, as library calls: find the probes,
 * set the runner's options from the command's, run the stages
 * (stages.h) through the agents (remote.h), render the recap; then the
 * report files (report/dispatch.h) and the after-validate actions
 * (after.h). apply --validate runs the same over apply's own sessions,
 * with the facts read again. The command prints what these hand back.
 */
#ifndef LN_VALIDATE_COMMAND_H
#define LN_VALIDATE_COMMAND_H

#include "common/buf.h"
#include "orchestrator/report/dispatch.h"
#include "orchestrator/run/notes.h"
#include "orchestrator/run/run.h"
#include "orchestrator/validate/after.h"
#include "orchestrator/validate/results.h"

/* What validate is asked for. */
struct ln_validate_cmd {
	unsigned stages;		/* bit per enum ln_stage (--stages); 0: the spec's */
	int attempts;			/* --attempts; 0: the runner's default */
	int json, color;		/* the recap as JSON (-o json), else text, in colour */
	struct ln_report_files files;	/* the report files to write */
	struct ln_after_opts after;	/* the after-validate actions' options */
	/* Progress: one line per stage, round or node check. */
	void (*progress)(void *ctx, const char *line);
	void *progress_ctx;
};

/* The defaults: the spec's stages, no file, no action, a 10 s POST bound. */
#define LN_VALIDATE_CMD_INIT { .after = { NULL, 10 } }

/*
 * Run vc's stages over run, whose facts are gathered, into res (released
 * by the caller, whatever this returns), then the after-validate actions
 * that act on the results (Slurm's drains and lifts, added to res), and
 * render the recap into out.
 * Returns the exit code so far (the stages', the nodes', an interrupt),
 * or -1 when validation could not run: why in notes, nothing in out, and
 * the command ends there with exit 1, no report written.
 */
int ln_validate_command(struct ln_run *run, const struct ln_validate_cmd *vc,
			struct ln_results *res, struct ln_buf *out, struct ln_notes *notes);

/* After the recap: write the report files and run the after-validate
 * actions over res. Returns LN_EXIT_OK, or LN_EXIT_FAILED when one of
 * them failed; notes say each file written and every failure. */
int ln_validate_finish(struct ln_results *res, const struct ln_validate_cmd *vc,
		       struct ln_notes *notes);

/* apply --validate: read the facts again over apply's sessions (they
 * predate its changes), then ln_validate_command() with vc (the spec's
 * stages, no report: LN_VALIDATE_CMD_INIT, the recap's form and the
 * progress set). The same returns; a failed read is -1 with why in
 * notes. */
int ln_validate_after_apply(struct ln_run *run, const struct ln_validate_cmd *vc,
			    struct ln_results *res, struct ln_buf *out, struct ln_notes *notes);

#endif
