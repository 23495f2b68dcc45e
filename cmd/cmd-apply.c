/* SPDX-License-Identifier: MIT */
/*
 * llmnet apply SPEC: converge every node (targets, then initiators, then
 * hostfiles) and print a recap; with --validate, then the spec's stages.
 */
#include <stdio.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"
#include "orchestrator/apply.h"
#include "orchestrator/facts.h"
#include "orchestrator/transport/fanout.h"
#include "orchestrator/plan.h"

static int apply(struct ln_ctl_opts *o, struct ln_run *run)
{
	struct ln_buf err = LN_BUF_INIT;
	int code, r;

	if (ln_plan_check_duplicates(run, &err) < 0) {
		ln_error("%s", err.buf);
		ln_error("stopping before any change");
		ln_run_log(run, "apply stopped: %s", err.buf);
		ln_buf_release(&err);
		return ln_exit_merge(ln_apply_recap(run, "apply", ln_cli.output == LN_OUT_JSON, stdout),
				     LN_EXIT_FAILED);
	}
	if (!ln_fanout_interrupted()) {
		r = ln_apply_run(run);
		if (r < 0)
			ln_error("apply could not run: %s", ln_strerror(r));
	}
	code = ln_apply_recap(run, "apply", ln_cli.output == LN_OUT_JSON, stdout);
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
	struct ln_ctl_opts o = { 0 };
	const struct ln_option options[] = {
		LN_CTL_OPT_PARALLEL(&o),
		LN_CTL_OPT_LIMIT(&o),
		LN_CTL_OPT_ACCEPT(&o),
		LN_OPT_BOOL(0, "validate", &o.validate,
			    "then, if the cluster converged, run the spec's validation stages"),
		LN_OPT_END(),
	};
	const struct ln_opt_cmd c = {
		"llmnet apply SPEC",
		"converges every node: targets, then initiators, then hostfiles; prints a recap;\n"
		"with --validate, a converged cluster then runs the spec's validation stages",
		options,
	};

	return ln_cmd_ctl_main(&c, argc, argv, &o, "apply", apply);
}
