/* SPDX-License-Identifier: MIT */
/*
 * The phase runner apply and teardown share: one agent call per selected
 * node, through the fan-out window, carrying the request its kind says
 * (a desired state from plan.c, or the teardown request built here: the
 * targets that stay or go whatever holds them). Each answer is counted
 * into the node's recap and its agent warnings said; a node that fails
 * is marked and its session closed.
 */
#include <errno.h>
#include <string.h>

#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "orchestrator/run/phase.h"
#include "orchestrator/run/plan.h"
#include "orchestrator/transport/answer.h"
#include "orchestrator/transport/fanout.h"

struct phase_ctx {
	struct ln_run *r;
	const char *name;
	enum ln_phase_kind kind;
};

/* What each kind of phase asks of the agent: the verb and, unless it is
 * teardown (which takes its arguments instead), the request it sends. */
static const struct {
	const char *verb;
	enum ln_plan_phase request;
} phase_kinds[] = {
	[LN_PK_APPLY_TARGETS] = { LN_VERB_APPLY, LN_PHASE_TARGETS },
	[LN_PK_APPLY_FULL] = { LN_VERB_APPLY, LN_PHASE_FULL },
	[LN_PK_PLAN] = { LN_VERB_PLAN, LN_PHASE_FULL },
	[LN_PK_TEARDOWN] = { LN_VERB_TEARDOWN, LN_PHASE_FULL },
};

/* What the agent warned about (a backing file it kept, ...): a note for
 * the user, and a line in the run log. */
static void log_agent_warnings(struct ln_run *r, const struct ln_node_run *nr)
{
	struct ln_buf w = LN_BUF_INIT;
	char *p, *nl;

	ln_plan_agent_warnings(nr, &w);
	for (p = w.buf; (nl = strchr(p, '\n')); p = nl + 1) {
		ln_run_note(r, LN_LOG_WARN, "%.*s", (int)(nl - p), p);
		ln_run_log(r, "warning %.*s", (int)(nl - p), p);
	}
	ln_buf_release(&w);
}

/* The teardown request of node i: the node's targets that stay (an
 * initiator of them did not disconnect), or go whatever holds them
 * (--force). In the request, not in args: the lists have no bound. */
static struct json_object *teardown_request(const struct ln_run *r, size_t i)
{
	struct json_object *req = json_object_new_object();
	struct json_object *keep = json_object_new_array(), *force = json_object_new_array();
	size_t t;

	for (t = 0; keep && force && r->td_targets && t < r->spec->n_targets; t++) {
		if (r->spec->targets[t].node != i || r->td_targets[t] == LN_TD_REMOVE)
			continue;
		json_object_array_add(r->td_targets[t] == LN_TD_KEEP ? keep : force,
				      json_object_new_string(r->spec->targets[t].nqn));
	}
	if (!req || !keep || !force) {
		json_object_put(req);
		json_object_put(keep);
		json_object_put(force);
		return NULL;
	}
	json_object_object_add(req, "keep", keep);
	json_object_object_add(req, "force", force);
	return req;
}

static int phase_one(void *vctx, size_t i, struct ln_buf *line)
{
	struct phase_ctx *pc = vctx;
	struct ln_run *r = pc->r;
	struct ln_node_run *nr = &r->nodes[i];
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *req = NULL, *ans = NULL;
	const char *args[6] = { NULL };
	double t0 = ln_now_s();
	int rc, status = -1, c, ch, rm, ok, e;
	size_t n = 0;

	args[n++] = phase_kinds[pc->kind].verb;
	if (pc->kind == LN_PK_TEARDOWN) {
		args[n++] = "--cluster";
		args[n++] = r->spec->cluster;
		if (r->purge)
			args[n++] = "--purge";
		if (r->destroy_plan)
			args[n++] = "--plan";
		req = teardown_request(r, i);
	} else {
		req = ln_plan_request(r, i, phase_kinds[pc->kind].request, NULL);
	}
	if (!req) {
		rc = -ENOMEM;
		goto out;
	}
	rc = ln_run_session(r, nr, &err);
	if (rc == 0)
		rc = ln_agent_call(nr->s, args, req, 0, &ans, &status, &err);
	nr->seconds += ln_now_s() - t0;
	if (rc < 0) {
		ln_run_node_failed(nr, ln_node_state_of(rc), rc, err.buf, pc->name, line);
		ln_run_log(r, "%s %s: %s", pc->name, nr->spec->name, nr->reason.buf);
		ln_ssh_close(nr->s);
		nr->s = NULL;
		goto out;
	}
	json_object_put(nr->answer);
	/* only the known fields of the untrusted answer go on (answer.h) */
	nr->answer = ln_answer_known_changes(ans);
	ln_plan_count(nr->answer, &c, &ch, &rm, &ok, &e);
	log_agent_warnings(r, nr);
	if (pc->kind != LN_PK_PLAN) {
		nr->applied = 1;
		nr->n_changed += c + ch + rm;
		nr->n_ok = ok;
		nr->n_failed = e;
		ln_run_log(r, "%s %s%s: %d created, %d changed, %d removed, %d ok, %d failed",
			   pc->name, nr->spec->name, r->destroy_plan ? " (plan --destroy)" : "", c,
			   ch, rm, ok, e);
	}
	ln_buf_addf(line, "%-12s %s: %s +%d ~%d -%d", e ? "failed" : (c + ch + rm) ?
		    (pc->kind == LN_PK_PLAN || r->destroy_plan ? "pending" : "changed") : "ok",
		    nr->spec->name, pc->name, c, ch, rm);
	if (e)
		ln_buf_addf(line, ", %d failed", e);
	ln_buf_addf(line, " (%.2fs)", ln_now_s() - t0);
out:
	json_object_put(req);
	json_object_put(ans);
	ln_buf_release(&err);
	return rc;
}

int ln_phase_run(struct ln_run *r, const char *name, const unsigned char *sel,
		 enum ln_phase_kind kind)
{
	struct phase_ctx pc = { r, name, kind };
	struct ln_fanout f = { name, r->n, sel, r->parallel, phase_one, &pc, 0 };
	struct ln_fanout_result res;
	size_t i;
	int rc;

	r->phase = name;
	f.quiet = kind == LN_PK_PLAN && ln_log_threshold < LN_LOG_VERBOSE;
	rc = ln_fanout_run(&f, &res);
	if (rc < 0)
		return rc;
	for (i = 0; i < r->n; i++) {
		if (sel[i] && !res.started[i] && !r->nodes[i].skip.len)
			ln_buf_addf(&r->nodes[i].skip, "%s not started: interrupted", name);
	}
	ln_fanout_result_release(&res);
	ln_run_phase_done(r);
	return 0;
}
