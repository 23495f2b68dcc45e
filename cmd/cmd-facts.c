/* SPDX-License-Identifier: MIT */
/* llmnet facts SPEC: what every node is and holds, read-only. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "orchestrator/facts.h"
#include "orchestrator/transport/fanout.h"

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
	struct ln_run run;
	int code, r;
	size_t i;

	memset(&run, 0, sizeof(run));
	r = ln_cmd_ctl_parse(&c, argc, argv, &o);
	if (r)
		return r > 0 ? LN_EXIT_OK : LN_EXIT_USAGE;
	code = ln_cmd_ctl_start(&o, "facts", &run);
	if (code != LN_EXIT_OK)
		goto out;
	ln_facts_print(&run, ln_cli.output == LN_OUT_JSON, stdout);
	for (i = 0; i < run.n; i++)
		code = ln_exit_merge(code, ln_node_state_exit(run.nodes[i].state));
	if (ln_fanout_interrupted())
		code = ln_exit_merge(code, LN_EXIT_FAILED);
out:
	ln_run_release(&run);
	ln_cmd_ctl_release(&o);
	return code;
}
