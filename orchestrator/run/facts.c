/* SPDX-License-Identifier: MIT */
/*
 * The facts phase, the first of every command after the run record is
 * set up: connect to each node, make sure its agent is current, and read
 * its facts, all through the fan-out window. Also the facts' readers
 * (host NQN); orchestrator/report/recap.c renders `llmnet facts`.
 */
#include <errno.h>
#include <string.h>

#include "common/error.h"
#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/run/hostident.h"
#include "orchestrator/transport/answer.h"
#include "orchestrator/transport/fanout.h"

int ln_facts_read(struct ln_run *r, struct ln_node_run *nr, struct ln_buf *err)
{
	static const char *const args[] = { LN_VERB_FACTS, NULL };
	struct json_object *ans = NULL, *facts;
	int rc;

	rc = ln_run_session(r, nr, err);
	if (rc == 0)
		rc = ln_agent_call(nr->s, args, NULL, 0, &ans, NULL, err);
	if (rc < 0)
		return rc;
	/* only the known fields, of their known types, are kept (and cached
	 * in facts.json): an unknown one is never paid for again */
	facts = ln_answer_known_facts(ans);
	json_object_put(ans);
	if (!facts)
		return -ENOMEM;
	json_object_put(nr->facts);
	nr->facts = facts;
	return 0;
}

struct reread_ctx {
	struct ln_run *r;
	unsigned char *sel;
};

static int reread_one(void *vctx, size_t i, struct ln_buf *line)
{
	struct reread_ctx *rc = vctx;
	struct ln_buf e = LN_BUF_INIT;

	(void)line;
	if (ln_facts_read(rc->r, &rc->r->nodes[i], &e) < 0) {
		ln_run_note(rc->r, LN_LOG_WARN, "cannot re-read facts of '%s': %s",
			   rc->r->nodes[i].spec->name, e.buf);
		rc->sel[i] = 0;	/* only this worker touches item i */
	}
	ln_buf_release(&e);
	return 0;
}

int ln_facts_reread(struct ln_run *r, unsigned char *sel)
{
	struct reread_ctx rc = { r, sel };
	struct ln_fanout f = { "facts", r->n, sel, r->parallel, reread_one, &rc, 1 };
	struct ln_fanout_result res;
	struct ln_buf err = LN_BUF_INIT;
	size_t i;
	int e;

	e = ln_fanout_run(&f, &res);
	if (e < 0)
		return e;
	for (i = 0; i < r->n; i++)
		if (sel[i] && !res.started[i])
			sel[i] = 0;
	ln_fanout_result_release(&res);
	/* an identity made in this apply is pinned now, before a target is
	 * keyed for it: one that is another node's pin is refused here */
	e = ln_hostident_check(r, &err);
	if (e < 0)
		ln_run_note(r, LN_LOG_WARN, "cannot record the host identities: %s", err.buf);
	ln_buf_release(&err);
	for (i = 0; i < r->n; i++)
		if (r->nodes[i].state != LN_NODE_OK)
			sel[i] = 0;
	return 0;
}

/* A node showing GPUs without the GPU facts program this controller
 * carries gets it, and its facts are read again (NVML's then). A failure
 * is a warning: the node's facts stay /proc's, and gpus.nvml says so. */
static void gpu_facts_ensure(struct ln_run *r, struct ln_node_run *nr)
{
	struct ln_buf err = LN_BUF_INIT;
	int pushed = 0, rc;

	rc = ln_gpu_facts_ensure(nr->s, &r->img, nr->facts, &pushed, &err);
	if (rc == 0 && pushed) {
		ln_run_note(r, LN_LOG_VERBOSE, "pushed the GPU facts program to '%s'",
			    nr->spec->name);
		ln_run_log(r, "%s: GPU facts program %.12s pushed", nr->spec->name,
			   r->img.gpu_facts_sha256);
		rc = ln_facts_read(r, nr, &err);
	}
	if (rc < 0)
		ln_run_note(r, LN_LOG_WARN, "%s: GPU facts from NVML not read: %s", nr->spec->name,
			    err.buf);
	ln_buf_release(&err);
}

static int gather_one(void *ctx, size_t i, struct ln_buf *line)
{
	struct ln_run *r = ctx;
	struct ln_node_run *nr = &r->nodes[i];
	struct ln_buf err = LN_BUF_INIT, why = LN_BUF_INIT;
	double t0 = ln_now_s();
	int rc;

	rc = ln_run_session(r, nr, &err);
	if (rc == 0) {
		rc = ln_agent_ensure(nr->s, &r->img, &nr->pushed, &why, &err);
		if (nr->pushed)
			ln_run_note(r, LN_LOG_VERBOSE, "pushed agent to '%s': %s", nr->spec->name,
				    why.buf);
	}
	if (rc == 0) {
		json_object_put(nr->facts);
		nr->facts = NULL;
		rc = ln_facts_read(r, nr, &err);
	}
	if (rc == 0)
		gpu_facts_ensure(r, nr);
	nr->seconds += ln_now_s() - t0;
	if (rc < 0) {
		/* A timeout always comes with a message, so err is empty only
		 * for codes that need no phase named. */
		ln_run_node_failed(nr, ln_node_state_of(rc), rc, err.len ? err.buf : ln_strerror(rc),
				   "facts", line);
		ln_run_log(r, "%s %s: %s", nr->spec->name, ln_node_state_name(nr->state),
			   nr->reason.buf);
		ln_ssh_close(nr->s);
		nr->s = NULL;
	} else {
		nr->state = LN_NODE_OK;
		ln_buf_addf(line, "%-12s %s%s (%.2fs)", "facts", nr->spec->name,
			    nr->pushed ? ", agent pushed" : "", ln_now_s() - t0);
		if (nr->pushed)
			ln_run_log(r, "%s: agent %.12s pushed", nr->spec->name, r->img.sha256);
	}
	ln_buf_release(&why);
	ln_buf_release(&err);
	return rc;
}

/* What the agent's facts say of the node's host identity files when they
 * are not valid (host_nqn null then: the node is left out of its targets'
 * hosts, so the reason is said once, in the run's notes and log). */
static void identity_warnings(struct ln_run *r, const struct ln_node_run *nr)
{
	struct json_object *ws = ln_json_at(nr->facts, "warnings");
	size_t i;

	for (i = 0; ws && json_object_is_type(ws, json_type_array) &&
		    i < json_object_array_length(ws); i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(ws, i));

		if (!s || strncmp(s, "/etc/nvme/host", 14))
			continue;
		ln_run_note(r, LN_LOG_WARN, "%s: %s", nr->spec->name, s);
		ln_run_log(r, "warning %s: %s", nr->spec->name, s);
	}
	if (json_object_is_type(ln_json_at(nr->facts, "host_nqn"), json_type_string) &&
	    !ln_facts_host_nqn(nr)) {
		ln_run_note(r, LN_LOG_WARN, "%s: reported host NQN '%s' is not valid; the node has "
			    "no host identity this run", nr->spec->name,
			    ln_json_str_at(nr->facts, "host_nqn"));
		ln_run_log(r, "warning %s: invalid host NQN", nr->spec->name);
	}
}

int ln_facts_gather(struct ln_run *r)
{
	struct ln_fanout f = { "facts", r->n, NULL, r->parallel, gather_one, r, 0 };
	struct ln_fanout_result res;
	struct ln_buf err = LN_BUF_INIT;
	size_t i;
	int rc;

	r->phase = "facts";
	f.quiet = ln_log_threshold < LN_LOG_VERBOSE;
	rc = ln_fanout_run(&f, &res);
	if (rc < 0)
		return rc;
	for (i = 0; i < r->n; i++) {
		struct ln_node_run *nr = &r->nodes[i];

		if (!res.started[i]) {
			nr->state = LN_NODE_INTERRUPTED;
			ln_buf_reset(&nr->reason);
			ln_buf_addstr(&nr->reason, "not contacted: interrupted");
		} else if (nr->state == LN_NODE_OK) {
			identity_warnings(r, nr);
		}
	}
	ln_fanout_result_release(&res);
	/* a node claiming an identity not its own is excluded here, before
	 * any plan is built on it (hostident.h) */
	rc = ln_hostident_check(r, &err);
	if (rc < 0)
		ln_run_note(r, LN_LOG_WARN, "cannot record the host identities: %s", err.buf);
	ln_buf_release(&err);
	return 0;
}
