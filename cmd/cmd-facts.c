/* SPDX-License-Identifier: MIT */
/* llmnet facts SPEC: what every node is and holds, read-only; with
 * --cached, as last read, without contacting any node; with --topo, the
 * GPU x (GPU + NIC) PCIe matrix of each. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/run/state.h"

static int facts(struct ln_ctl_opts *o, struct ln_run *run)
{
	return ln_run_exit(run, ln_cmd_facts(run, o->topo));
}

/* facts --cached: the spec, then the state folder; no node, no agent. */
static int cached(struct ln_ctl_opts *o)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_run run;
	int code;

	memset(&run, 0, sizeof(run));
	code = ln_cmd_ctl_load_spec(o);
	if (code == LN_EXIT_OK && ln_state_run_cached(&run, o->spec, &err) < 0) {
		ln_cmd_notes(&run, NULL);
		ln_error("cannot read the last-known facts: %s", err.buf);
		code = LN_EXIT_FAILED;
	} else if (code == LN_EXIT_OK) {
		code = ln_run_exit(&run, ln_cmd_facts(&run, o->topo));
	}
	ln_run_release(&run);
	ln_cmd_ctl_release(o);
	ln_buf_release(&err);
	return code;
}

int cmd_facts(int argc, char **argv)
{
	struct ln_ctl_opts o = { 0 };
	struct ln_ctl_table t;
	int code;

	if (ln_cmd_ctl_options(LN_CTL_FACTS, &o, &t, argc, argv, &code) < 0)
		return code;
	if (o.cached && o.accept.n) {
		/* no node is contacted, so no host key is seen */
		ln_error("--accept-replaced has no effect with --cached");
		ln_cmd_ctl_release(&o);
		return ln_cmd_usage(&t.cmd);
	}
	return o.cached ? cached(&o) : ln_cmd_ctl_run(&o, facts);
}
