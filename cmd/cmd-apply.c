/* SPDX-License-Identifier: MIT */
/*
 * llmnet apply SPEC: converge every node (targets, then initiators, then
 * hostfiles) and print a recap; with --batch, in waves, stopped by
 * --max-fail; a run that did not converge leaves a retry file; with
 * --validate, then the spec's stages.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"
#include "orchestrator/run/apply.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/transport/fanout.h"
#include "orchestrator/run/plan.h"
#include "orchestrator/run/state.h"

/* What this apply leaves for the next runs: each node's applied state,
 * and when it did not converge, the nodes to retry. */
static void record(struct ln_run *run, int code)
{
	struct ln_buf err = LN_BUF_INIT;
	char *path = NULL;
	int r = ln_state_save_applied(run, 0, &err);

	ln_cmd_notes(run);
	if (r < 0)
		ln_warn("cannot record the applied state: %s", err.buf);
	ln_buf_reset(&err);
	if (code != LN_EXIT_OK) {
		if (ln_state_write_retry(run, &path, &err) < 0)
			ln_warn("cannot write the retry file: %s", err.buf);
		else
			ln_info("to retry the nodes that did not converge: llmnet apply %s --limit @%s",
				run->spec->path, path);
	}
	free(path);
	ln_buf_release(&err);
}

static int apply(struct ln_ctl_opts *o, struct ln_run *run)
{
	struct ln_buf err = LN_BUF_INIT;
	int code, r;

	if (ln_plan_check_duplicates(run, &err) < 0) {
		ln_error("%s", err.buf);
		ln_error("stopping before any change");
		ln_run_log(run, "apply stopped: %s", err.buf);
		ln_buf_release(&err);
		return ln_exit_merge(ln_cmd_recap(run, "apply"), LN_EXIT_FAILED);
	}
	if (!ln_fanout_interrupted()) {
		r = ln_apply_rollout(run, &o->batch, &o->max_fail);
		ln_cmd_notes(run);
		if (r < 0)
			ln_error("apply could not run: %s", ln_strerror(r));
	}
	code = ln_cmd_recap(run, "apply");
	record(run, code);
	if (ln_fanout_interrupted())
		ln_error("interrupted: nodes in flight finished, no new work was started");
	else if (o->validate && code == LN_EXIT_OK)
		code = ln_cmd_validate_after_apply(o, run);
	else if (o->validate)
		ln_error("validation not run: the cluster did not converge");
	return code;
}

int cmd_apply(int argc, char **argv)
{
	return ln_cmd_ctl_main(LN_CTL_APPLY, argc, argv, "apply", apply);
}
