/* SPDX-License-Identifier: MIT */
/*
 * teardown's ordering and the agent's removal on --purge. The agents do
 * the removal itself (only objects their state file records for this
 * cluster); the controller only decides who goes first: initiators must
 * disconnect before their targets disappear.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "orchestrator/apply.h"
#include "orchestrator/plan.h"
#include "orchestrator/teardown.h"
#include "orchestrator/transport/fanout.h"

static int remove_agent(void *ctx, size_t i, struct ln_buf *line)
{
	struct ln_run *r = ctx;
	struct ln_node_run *nr = &r->nodes[i];
	struct ln_buf cmd = LN_BUF_INIT, out = LN_BUF_INIT, eo = LN_BUF_INIT, err = LN_BUF_INIT;
	int rc, status = -1;

	rc = ln_run_session(r, nr, &err);
	if (rc == 0) {
		/* the agent and its sidecar */
		ln_buf_addf(&cmd, "%srm -f -- \"${LLMNET_AGENT_ROOT%%/}%s/%s\" "
			    "\"${LLMNET_AGENT_ROOT%%/}%s/%s" LN_PROTO_AGENT_ID_SUFFIX "\" && "
			    "{ rmdir -- \"${LLMNET_AGENT_ROOT%%/}%s\" 2>/dev/null; true; }%s",
			    ln_ssh_is_sudo(nr->s) ? "sudo -n env ${LLMNET_AGENT_ROOT:+LLMNET_AGENT_ROOT=\"$LLMNET_AGENT_ROOT\"} sh -c '" : "",
			    LN_PROTO_REMOTE_DIR, LN_PROTO_AGENT_NAME, LN_PROTO_REMOTE_DIR,
			    LN_PROTO_AGENT_NAME, LN_PROTO_REMOTE_DIR, ln_ssh_is_sudo(nr->s) ? "'" : "");
		rc = ln_ssh_exec(nr->s, cmd.buf, NULL, 0, 0, &out, &eo, &status, &err);
		if (rc == 0 && status != 0) {
			ln_buf_rtrim(&eo);
			ln_buf_addf(&err, "cannot remove the agent from '%s': %s", nr->spec->name, eo.buf);
			rc = -EIO;
		}
	}
	if (rc < 0) {
		nr->n_failed++;
		ln_buf_addf(line, "%-12s %s: %s", "failed", nr->spec->name, err.buf);
	} else {
		nr->n_changed++;
		ln_buf_addf(line, "%-12s %s: agent removed", "changed", nr->spec->name);
		ln_run_log(r, "purge %s: agent removed", nr->spec->name);
	}
	ln_buf_release(&cmd);
	ln_buf_release(&out);
	ln_buf_release(&eo);
	ln_buf_release(&err);
	return rc;
}

int ln_teardown_run(struct ln_run *r)
{
	unsigned char *sel = calloc(r->n ? r->n : 1, 1);
	size_t i;
	int rc = 0, any;

	if (!sel)
		return -ENOMEM;
	/* Phase 1: everything but targets (hostfiles, initiators). */
	for (i = 0, any = 0; i < r->n; i++)
		any |= sel[i] = r->nodes[i].state == LN_NODE_OK && r->nodes[i].limited &&
				!ln_plan_has_targets(r->spec, i);
	if (any && (rc = ln_apply_phase(r, "teardown initiators", sel, LN_PK_TEARDOWN)) < 0)
		goto out;
	/* Phase 2: target nodes, once their initiators are gone. A target
	 * whose initiator failed to disconnect still goes: the initiator's
	 * controller then reconnects in vain, which the recap reports. */
	for (i = 0, any = 0; i < r->n; i++)
		any |= sel[i] = !ln_fanout_interrupted() && r->nodes[i].state == LN_NODE_OK &&
				r->nodes[i].limited && ln_plan_has_targets(r->spec, i);
	if (any && (rc = ln_apply_phase(r, "teardown targets", sel, LN_PK_TEARDOWN)) < 0)
		goto out;
	if (r->purge) {
		struct ln_fanout f = { "purge agent", r->n, sel, r->parallel, remove_agent, r, 0 };
		struct ln_fanout_result res;

		for (i = 0, any = 0; i < r->n; i++)
			any |= sel[i] = !ln_fanout_interrupted() && r->nodes[i].state == LN_NODE_OK &&
					r->nodes[i].limited && r->nodes[i].n_failed == 0;
		if (any && (rc = ln_fanout_run(&f, &res)) == 0)
			ln_fanout_result_release(&res);
	}
out:
	free(sel);
	ln_run_phase_done(r);
	return rc;
}
