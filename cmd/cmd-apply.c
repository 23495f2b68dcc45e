/* SPDX-License-Identifier: MIT */
/*
 * llmnet apply SPEC: converge every node (targets, then initiators, then
 * hostfiles) and print a recap; with --batch, in waves, stopped by
 * --max-fail; a run that did not converge leaves a retry file; with
 * --validate, then the spec's stages; --accept-device lets a replaced
 * disk be pinned.
 */
#include <stdio.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"
#include "orchestrator/run/apply.h"
#include "orchestrator/run/nsident.h"
#include "orchestrator/run/plan.h"
#include "orchestrator/transport/fanout.h"
#include "orchestrator/validate/command.h"
#include "orchestrator/validate/stages.h"

static int apply(struct ln_ctl_opts *o, struct ln_run *run)
{
	struct ln_validate_cmd vc = LN_VALIDATE_CMD_INIT;
	struct ln_notes notes = LN_NOTES_INIT;
	struct ln_buf err = LN_BUF_INIT;
	int code, r;

	/* the namespaces whose replaced disk the requests accept */
	run->accept_device = o->accept_device.v;
	run->n_accept_device = o->accept_device.n;
	if (ln_plan_check_duplicates(run, &err) < 0) {
		ln_error("%s", err.buf);
		ln_error("stopping before any change");
		ln_run_log(run, "apply stopped: %s", err.buf);
		ln_buf_release(&err);
		return ln_exit_merge(ln_cmd_recap(run, "apply"), LN_EXIT_FAILED);
	}
	if (!ln_fanout_interrupted()) {
		r = ln_apply_rollout(run, &o->batch, &o->max_fail);
		ln_cmd_notes(run, NULL);
		if (r < 0)
			ln_error("apply could not run: %s", ln_strerror(r));
	}
	code = ln_cmd_recap(run, "apply");
	ln_apply_record(run, code, &notes);
	ln_cmd_notes(run, &notes);
	if (ln_fanout_interrupted())
		ln_error("interrupted: nodes in flight finished, no new work was started");
	else if (o->validate && code == LN_EXIT_OK)
		code = ln_cmd_validate_run(run, &vc, 1);
	else if (o->validate)
		ln_error("validation not run: the cluster did not converge");
	return code;
}

/* --validate with nothing to validate, and an --accept-device word that
 * names no device: namespace of the spec, are refused before any change. */
static int check(struct ln_ctl_opts *o)
{
	struct ln_buf err = LN_BUF_INIT;
	int code = LN_EXIT_OK;

	if (o->validate && ln_validate_check_stages(o->spec, 0, &err) < 0) {
		ln_error("--validate: %s; no node was contacted", err.buf);
		code = LN_EXIT_USAGE;
	}
	if (code == LN_EXIT_OK &&
	    ln_nsident_accept_check(o->spec, o->accept_device.v, o->accept_device.n, &err) < 0) {
		ln_error("%s: %s; no node was contacted", o->spec_path, err.buf);
		code = LN_EXIT_USAGE;
	}
	ln_buf_release(&err);
	return code;
}

int cmd_apply(int argc, char **argv)
{
	return ln_cmd_ctl_main(LN_CTL_APPLY, argc, argv, check, apply);
}
