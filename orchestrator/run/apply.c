/* SPDX-License-Identifier: MIT */
/*
 * apply's phases and recap. The ordering is the kernel's dependency: a
 * target must allow a host before that host connects, and the hostfile is
 * written last. Within a phase every node is independent, so the fan-out
 * window runs them in parallel.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "orchestrator/run/apply.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/run/plan.h"
#include "orchestrator/run/rollout.h"
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
		ln_notes_add(r, LN_LOG_WARN, "%.*s", (int)(nl - p), p);
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
	const char *args[5] = { NULL };
	double t0 = ln_now_s();
	int rc, status = -1, c, ch, rm, ok, e;
	size_t n = 0;

	args[n++] = phase_kinds[pc->kind].verb;
	if (pc->kind == LN_PK_TEARDOWN) {
		args[n++] = "--cluster";
		args[n++] = r->spec->cluster;
		if (r->purge)
			args[n++] = "--purge";
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
	ln_plan_count(ans, &c, &ch, &rm, &ok, &e);
	json_object_put(nr->answer);
	nr->answer = ans;
	ans = NULL;
	log_agent_warnings(r, nr);
	if (pc->kind != LN_PK_PLAN) {
		nr->applied = 1;
		nr->n_changed += c + ch + rm;
		nr->n_ok = ok;
		nr->n_failed = e;
		ln_run_log(r, "%s %s: %d created, %d changed, %d removed, %d ok, %d failed", pc->name,
			   nr->spec->name, c, ch, rm, ok, e);
	}
	ln_buf_addf(line, "%-12s %s: %s +%d ~%d -%d", e ? "failed" : (c + ch + rm) ?
		    (pc->kind == LN_PK_PLAN ? "pending" : "changed") : "ok",
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

int ln_apply_phase(struct ln_run *r, const char *name, const unsigned char *sel,
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

/* A node applied in phase 1 that came back broken blocks its initiators. */
static int node_blocked(const struct ln_node_run *nr)
{
	return nr->state != LN_NODE_OK || nr->n_failed > 0 || nr->skip.len > 0;
}

/* Skip initiator nodes whose targets cannot be relied on; say why. wave:
 * the nodes of the wave being applied (a target node of this rollout that
 * has not been applied yet comes later, which only a cycle allows). */
static void skip_blocked_initiators(struct ln_run *r, unsigned char *sel,
				    const unsigned char *wave)
{
	const struct ln_spec *spec = r->spec;
	size_t k;

	for (k = 0; k < spec->n_initiators; k++) {
		const struct ln_initiator *in = &spec->initiators[k];
		const struct ln_target *tg = &spec->targets[in->target];
		struct ln_node_run *nr = &r->nodes[in->node], *tn = &r->nodes[tg->node];

		if (!sel[in->node] || tg->node == in->node)
			continue;
		if (node_blocked(tn)) {
			sel[in->node] = 0;
			if (!nr->skip.len)
				ln_buf_addf(&nr->skip, "skipped: target node '%s' of '%s' is %s",
					    tn->spec->name, tg->nqn,
					    tn->state != LN_NODE_OK ? ln_node_state_name(tn->state) : "failed");
		} else if (!tn->limited && ln_plan_pending(tn)) {
			sel[in->node] = 0;
			if (!nr->skip.len)
				ln_buf_addf(&nr->skip, "skipped: target node '%s' has changes pending (outside --limit)",
					    tn->spec->name);
		} else if (tn->limited && !wave[tg->node] && !tn->applied) {
			sel[in->node] = 0;
			if (!nr->skip.len)
				ln_buf_addf(&nr->skip, "skipped: target node '%s' comes in a later wave",
					    tn->spec->name);
		}
	}
}

/*
 * An initiator of this wave that had no host identity got one in the
 * initiators phase: read it, then run its targets and it once more, so one
 * apply converges.
 */
static int new_hosts_round(struct ln_run *r, const unsigned char *had_nqn,
			   const unsigned char *wave, unsigned char *sel)
{
	const struct ln_spec *spec = r->spec;
	unsigned char *tsel = NULL;
	size_t k;
	int rc = 0, any;

	memset(sel, 0, r->n);
	for (k = 0, any = 0; k < spec->n_initiators; k++) {
		size_t n = spec->initiators[k].node;

		if (wave[n] && !had_nqn[n] && r->nodes[n].applied && r->nodes[n].state == LN_NODE_OK &&
		    !ln_fanout_interrupted())
			any |= sel[n] = 1;
	}
	if (!any)
		return 0;
	rc = ln_facts_reread(r, sel);
	if (rc < 0)
		return rc;
	tsel = calloc(r->n ? r->n : 1, 1);
	if (!tsel)
		return -ENOMEM;
	for (k = 0, any = 0; k < spec->n_initiators; k++)
		if (sel[spec->initiators[k].node]) {
			size_t tn = spec->targets[spec->initiators[k].target].node;

			if (r->nodes[tn].state == LN_NODE_OK && r->nodes[tn].limited)
				any |= tsel[tn] = 1;
		}
	if (any)
		rc = ln_apply_phase(r, "targets (new hosts)", tsel, LN_PK_APPLY_TARGETS);
	free(tsel);
	if (rc < 0)
		return rc;
	skip_blocked_initiators(r, sel, wave);
	return ln_apply_phase(r, "initiators (new hosts)", sel, LN_PK_APPLY_FULL);
}

/* The phases over the nodes of one wave (every node inside --limit when
 * the rollout is not batched); sel is scratch space. */
static int apply_wave(struct ln_run *r, const unsigned char *wave, const unsigned char *had_nqn,
		      unsigned char *sel)
{
	const struct ln_spec *spec = r->spec;
	size_t i;
	int rc, any;

	/* Phase 1: targets. */
	for (i = 0, any = 0; i < r->n && !ln_fanout_interrupted(); i++)
		any |= sel[i] = r->nodes[i].state == LN_NODE_OK && wave[i] &&
				(ln_plan_roles(spec, i) & LN_ROLE_TARGET);
	if (any && (rc = ln_apply_phase(r, "targets", sel, LN_PK_APPLY_TARGETS)) < 0)
		return rc;

	/* Phase 2: initiators, unless their target is in trouble. */
	for (i = 0, any = 0; i < r->n; i++)
		sel[i] = !ln_fanout_interrupted() && r->nodes[i].state == LN_NODE_OK && wave[i] &&
			 !r->nodes[i].skip.len && (ln_plan_roles(spec, i) & LN_ROLE_INITIATOR);
	skip_blocked_initiators(r, sel, wave);
	for (i = 0; i < r->n; i++)
		any |= sel[i];
	if (any && (rc = ln_apply_phase(r, "initiators", sel, LN_PK_APPLY_FULL)) < 0)
		return rc;

	/* Phase 3: hostfiles on every node not applied yet. */
	for (i = 0, any = 0; i < r->n; i++)
		any |= sel[i] = !ln_fanout_interrupted() && r->nodes[i].state == LN_NODE_OK &&
				wave[i] && !r->nodes[i].applied && !r->nodes[i].skip.len;
	if (any && (rc = ln_apply_phase(r, "hostfiles", sel, LN_PK_APPLY_FULL)) < 0)
		return rc;

	return new_hosts_round(r, had_nqn, wave, sel);
}

/* After wave k stopped the rollout: the nodes of the later waves are not
 * run, and say why. */
static void stop_rollout(struct ln_run *r, const struct ln_waves *w, size_t k, size_t failed)
{
	size_t j, size = w->start[k + 1] - w->start[k];

	r->rollout_stopped = 1;
	ln_notes_add(r, LN_LOG_ERROR, "rollout stopped after wave %zu of %zu: %zu of %zu nodes failed "
		    "(--max-fail); %zu nodes not run", k + 1, w->n_waves, failed, size,
		    w->n - w->start[k + 1]);
	ln_run_log(r, "rollout stopped after wave %zu of %zu: %zu of %zu nodes failed", k + 1,
		   w->n_waves, failed, size);
	for (j = w->start[k + 1]; j < w->n; j++) {
		struct ln_node_run *nr = &r->nodes[w->nodes[j]];

		if (!nr->skip.len)
			ln_buf_addf(&nr->skip, "not run: the rollout stopped after wave %zu of %zu",
				    k + 1, w->n_waves);
	}
}

int ln_apply_rollout(struct ln_run *r, const struct ln_count *batch,
		     const struct ln_count *max_fail)
{
	unsigned char *sel = calloc(r->n ? r->n : 1, 1), *had_nqn = calloc(r->n ? r->n : 1, 1);
	unsigned char *wave = calloc(r->n ? r->n : 1, 1);
	struct ln_waves w = { 0 };
	size_t i, j, k, failed, n_limited = 0;
	int rc = 0, any;

	if (!sel || !had_nqn || !wave) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < r->n; i++) {
		had_nqn[i] = ln_facts_host_nqn(&r->nodes[i]) != NULL;
		wave[i] = (unsigned char)r->nodes[i].limited;
		n_limited += wave[i];
	}

	/* Nodes outside --limit: only a read-only plan, to show what waits. */
	for (i = 0, any = 0; i < r->n; i++)
		any |= sel[i] = r->nodes[i].state == LN_NODE_OK && !r->nodes[i].limited;
	if (any && (rc = ln_apply_phase(r, "plan", sel, LN_PK_PLAN)) < 0)
		goto out;

	rc = ln_waves_build(r->spec, wave, ln_count_batch(batch, n_limited), &w);
	for (k = 0; rc == 0 && k < w.n_waves && !ln_fanout_interrupted(); k++) {
		memset(wave, 0, r->n);
		for (j = w.start[k]; j < w.start[k + 1]; j++)
			wave[w.nodes[j]] = 1;
		if (w.n_waves > 1) {
			ln_notes_add(r, LN_LOG_INFO, "wave %zu of %zu: %zu nodes", k + 1, w.n_waves,
				    w.start[k + 1] - w.start[k]);
			ln_run_log(r, "wave %zu of %zu: %zu nodes", k + 1, w.n_waves,
				   w.start[k + 1] - w.start[k]);
		}
		rc = apply_wave(r, wave, had_nqn, sel);
		for (j = w.start[k], failed = 0; j < w.start[k + 1]; j++)
			failed += node_blocked(&r->nodes[w.nodes[j]]);
		if (rc == 0 && k + 1 < w.n_waves && !ln_fanout_interrupted() &&
		    ln_count_exceeded(max_fail, failed, w.start[k + 1] - w.start[k])) {
			stop_rollout(r, &w, k, failed);
			break;
		}
	}
out:
	ln_waves_release(&w);
	free(sel);
	free(had_nqn);
	free(wave);
	ln_run_phase_done(r);
	return rc;
}

int ln_apply_run(struct ln_run *r)
{
	return ln_apply_rollout(r, NULL, NULL);
}
