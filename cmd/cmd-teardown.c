/* SPDX-License-Identifier: MIT */
/* llmnet teardown SPEC: remove what llmnet owns for this cluster. */
#include <stdio.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"
#include "orchestrator/apply.h"
#include "orchestrator/facts.h"
#include "orchestrator/state.h"
#include "orchestrator/transport/fanout.h"
#include "orchestrator/teardown.h"

static int teardown(struct ln_ctl_opts *o, struct ln_run *run)
{
	struct ln_buf err = LN_BUF_INIT;
	int r, code;

	(void)o;
	if (!ln_fanout_interrupted()) {
		r = ln_teardown_run(run);
		if (r < 0)
			ln_error("teardown could not run: %s", ln_strerror(r));
	}
	code = ln_apply_recap(run, "teardown", ln_cli.output == LN_OUT_JSON, stdout);
	/* a silent node's next plan starts from nothing */
	if (ln_state_save_applied(run, 1, &err) < 0)
		ln_warn("cannot record the applied state: %s", err.buf);
	ln_buf_release(&err);
	return code;
}

int cmd_teardown(int argc, char **argv)
{
	struct ln_ctl_opts o = { 0 };
	const struct ln_option options[] = {
		LN_CTL_OPTS_NODES(&o),
		LN_OPT_BOOL(0, "purge", &o.purge, "also delete the backing files llmnet created and the agent"),
		LN_OPT_END(),
	};
	const struct ln_opt_cmd c = {
		"llmnet teardown SPEC",
		"removes, in reverse order, what llmnet created for this cluster and nothing else;\n"
		"--purge also deletes the backing files it created and the agent",
		options,
	};

	return ln_cmd_ctl_main(&c, argc, argv, &o, "teardown", teardown);
}
