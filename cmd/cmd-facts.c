/* SPDX-License-Identifier: MIT */
/* llmnet facts SPEC: what every node is and holds, read-only. */
#include <stdio.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "orchestrator/facts.h"

static int facts(struct ln_ctl_opts *o, struct ln_run *run)
{
	(void)o;
	ln_facts_print(run, ln_cli.output == LN_OUT_JSON, stdout);
	return ln_cmd_ctl_nodes_exit(run, LN_EXIT_OK);
}

int cmd_facts(int argc, char **argv)
{
	struct ln_ctl_opts o = { 0 };
	const struct ln_option options[] = {
		LN_CTL_OPT_PARALLEL(&o),
		LN_CTL_OPT_ACCEPT(&o),
		LN_OPT_END(),
	};
	const struct ln_opt_cmd c = {
		"llmnet facts SPEC",
		"prints per node: RDMA ports (state, rate, MTU), GPUs, NVMe-oF controllers, host NQN;\n"
		"-o json gives everything the agents report",
		options,
	};

	return ln_cmd_ctl_main(&c, argc, argv, &o, "facts", facts);
}
