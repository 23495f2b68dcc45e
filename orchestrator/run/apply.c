/* SPDX-License-Identifier: MIT */
/*
 * apply's rollout and recap. The ordering is the kernel's dependency: a
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
#include "orchestrator/run/phase.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/run/plan.h"
#include "orchestrator/run/rollout.h"
#include "orchestrator/run/state.h"
#include "orchestrator/transport/fanout.h"

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
		rc = ln_phase_run(r, "targets (new hosts)", tsel, LN_PK_APPLY_TARGETS);
	free(tsel);
	if (rc < 0)
		return rc;
	skip_blocked_initiators(r, sel, wave);
	return ln_phase_run(r, "initiators (new hosts)", sel, LN_PK_APPLY_FULL);
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
	if (any && (rc = ln_phase_run(r, "targets", sel, LN_PK_APPLY_TARGETS)) < 0)
		return rc;

	/* Phase 2: initiators, unless their target is in trouble. */
	for (i = 0, any = 0; i < r->n; i++)
		sel[i] = !ln_fanout_interrupted() && r->nodes[i].state == LN_NODE_OK && wave[i] &&
			 !r->nodes[i].skip.len && (ln_plan_roles(spec, i) & LN_ROLE_INITIATOR);
	skip_blocked_initiators(r, sel, wave);
	for (i = 0; i < r->n; i++)
		any |= sel[i];
	if (any && (rc = ln_phase_run(r, "initiators", sel, LN_PK_APPLY_FULL)) < 0)
		return rc;

	/* Phase 3: hostfiles on every node not applied yet. */
	for (i = 0, any = 0; i < r->n; i++)
		any |= sel[i] = !ln_fanout_interrupted() && r->nodes[i].state == LN_NODE_OK &&
				wave[i] && !r->nodes[i].applied && !r->nodes[i].skip.len;
	if (any && (rc = ln_phase_run(r, "hostfiles", sel, LN_PK_APPLY_FULL)) < 0)
		return rc;

	return new_hosts_round(r, had_nqn, wave, sel);
}

/* After wave k stopped the rollout: the nodes of the later waves are not
 * run, and say why. */
static void stop_rollout(struct ln_run *r, const struct ln_waves *w, size_t k, size_t failed)
{
	size_t j, size = w->start[k + 1] - w->start[k];

	r->rollout_stopped = 1;
	ln_run_note(r, LN_LOG_ERROR, "rollout stopped after wave %zu of %zu: %zu of %zu nodes failed "
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
	if (any && (rc = ln_phase_run(r, "plan", sel, LN_PK_PLAN)) < 0)
		goto out;

	rc = ln_waves_build(r->spec, wave, ln_count_batch(batch, n_limited), &w);
	for (k = 0; rc == 0 && k < w.n_waves && !ln_fanout_interrupted(); k++) {
		memset(wave, 0, r->n);
		for (j = w.start[k]; j < w.start[k + 1]; j++)
			wave[w.nodes[j]] = 1;
		if (w.n_waves > 1) {
			ln_run_note(r, LN_LOG_INFO, "wave %zu of %zu: %zu nodes", k + 1, w.n_waves,
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

int ln_apply_save_applied(struct ln_run *r, struct ln_buf *err)
{
	struct json_object **req = calloc(r->n ? r->n : 1, sizeof(*req));
	size_t i;
	int rc;

	if (!req)
		return -ENOMEM;
	/* only a node that applied can have converged (state.c judges) */
	for (i = 0; i < r->n; i++)
		if (r->nodes[i].limited && r->nodes[i].state == LN_NODE_OK && r->nodes[i].applied)
			req[i] = ln_plan_request(r, i, LN_PHASE_FULL, NULL);
	rc = ln_state_save_applied(r, req, err);
	for (i = 0; i < r->n; i++)
		json_object_put(req[i]);
	free(req);
	return rc;
}

void ln_apply_record(struct ln_run *r, int code, struct ln_notes *notes)
{
	struct ln_buf err = LN_BUF_INIT;
	char *path = NULL;

	if (ln_apply_save_applied(r, &err) < 0)
		ln_notes_add(notes, LN_LOG_WARN, "cannot record the applied state: %s", err.buf);
	ln_buf_reset(&err);
	if (code != LN_EXIT_OK) {
		if (ln_state_write_retry(r, &path, &err) < 0)
			ln_notes_add(notes, LN_LOG_WARN, "cannot write the retry file: %s", err.buf);
		else
			ln_notes_add(notes, LN_LOG_INFO, "to retry the nodes that did not converge: "
				     "llmnet apply %s --limit @%s", r->spec->path, path);
	}
	free(path);
	ln_buf_release(&err);
}
