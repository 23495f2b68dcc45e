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

static int answer_pending(const struct ln_node_run *nr)
{
	int c, ch, rm, ok, e;

	ln_plan_count(nr->answer, &c, &ch, &rm, &ok, &e);
	return c + ch + rm + e > 0;
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
		} else if (!tn->limited && answer_pending(tn)) {
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
	ln_error("rollout stopped after wave %zu of %zu: %zu of %zu nodes failed (--max-fail); "
		 "%zu nodes not run", k + 1, w->n_waves, failed, size, w->n - w->start[k + 1]);
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
			ln_info("wave %zu of %zu: %zu nodes", k + 1, w.n_waves, w.start[k + 1] - w.start[k]);
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

int ln_apply_save_applied(const struct ln_run *r, struct ln_buf *err)
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

/* The recap's totals over all nodes. */
struct recap {
	int code, changed, failed, pending, unreachable, skipped, stopped, kept;
};

/* A node's recap entry in JSON. */
static struct json_object *recap_node_json(const struct ln_node_run *nr, int fl, int sk, int unr,
					   int pend, int kept, const char *why)
{
	struct json_object *o = json_object_new_object();

	ln_json_add_str(o, "state", ln_node_state_name(nr->state));
	ln_json_add_i64(o, "ok", nr->n_ok);
	ln_json_add_i64(o, "changed", nr->n_changed);
	ln_json_add_i64(o, "failed", fl);
	ln_json_add_i64(o, "skipped", sk);
	ln_json_add_i64(o, "unreachable", unr);
	ln_json_add_bool(o, "pending_outside_limit", pend);
	ln_json_add_i64(o, "kept", kept);
	ln_json_add_double(o, "seconds", nr->seconds);
	if (why)
		ln_json_add_str(o, "reason", why);
	if (nr->answer)
		ln_json_add(o, "last_answer", json_object_get(nr->answer));
	return o;
}

/* The changes that failed in a node's last answer, one line each. */
static void print_failed_changes(FILE *out, const struct ln_node_run *nr, int w)
{
	struct json_object *chs = NULL;
	size_t j;

	json_object_object_get_ex(nr->answer, "changes", &chs);
	for (j = 0; chs && j < json_object_array_length(chs); j++) {
		struct json_object *c = json_object_array_get_idx(chs, j), *e = NULL, *id = NULL;

		if (json_object_object_get_ex(c, "error", &e)) {
			json_object_object_get_ex(c, "id", &id);
			fprintf(out, "%*s   ! %s: %s\n", w, "", json_object_get_string(id),
				json_object_get_string(e));
		}
	}
}

/* The targets a teardown kept on a node (its answer's "kept"): their
 * count, and with out, one line each. */
static int kept_targets(FILE *out, const struct ln_node_run *nr, int w)
{
	struct json_object *kept = nr->answer ? ln_json_at(nr->answer, "kept") : NULL;
	size_t j, n = kept && json_object_is_type(kept, json_type_array) ?
			      json_object_array_length(kept) : 0;

	for (j = 0; out && j < n; j++) {
		struct json_object *e = json_object_array_get_idx(kept, j);

		fprintf(out, "%*s   kept: %s; target '%s' stays (--force removes it)\n", w, "",
			ln_json_str_at(e, "reason"), ln_json_str_at(e, "nqn"));
	}
	return (int)n;
}

static void print_totals(FILE *out, const char *verb, size_t n, const struct recap *t)
{
	fprintf(out, "\n%s: %d changed on %zu nodes", verb, t->changed, n);
	ln_print_count(out, t->failed, ", %d failed", t->failed);
	ln_print_count(out, t->unreachable, ", %d unreachable", t->unreachable);
	ln_print_count(out, t->skipped, ", %d skipped", t->skipped);
	ln_print_count(out, t->pending, ", %d pending (outside --limit)", t->pending);
	ln_print_count(out, t->kept, ", %d target%s kept", t->kept, t->kept == 1 ? "" : "s");
	if (ln_fanout_interrupted())
		fprintf(out, "; interrupted");
	if (t->stopped)
		fprintf(out, "; rollout stopped");
	fprintf(out, "; %s.\n", t->code == LN_EXIT_OK ? "converged" : "not converged");
}

static void write_totals_json(FILE *out, struct json_object *all, struct json_object *nodes,
			      const struct recap *t)
{
	struct ln_buf b = LN_BUF_INIT;

	ln_json_add(all, "nodes", nodes);
	ln_json_add_i64(all, "changed", t->changed);
	ln_json_add_i64(all, "kept", t->kept);
	ln_json_add_bool(all, "converged", t->code == LN_EXIT_OK);
	ln_json_add_bool(all, "interrupted", ln_fanout_interrupted());
	ln_json_add_bool(all, "rollout_stopped", t->stopped);
	ln_json_add_i64(all, "exit", t->code);
	ln_json_write(all, 1, &b);
	fputs(b.buf, out);
	json_object_put(all);
	ln_buf_release(&b);
}

int ln_apply_recap(struct ln_run *r, const char *verb, int json, FILE *out)
{
	struct json_object *all = NULL, *nodes = NULL;
	struct recap t = { LN_EXIT_OK, 0, 0, 0, 0, 0, r->rollout_stopped, 0 };
	size_t i, w = 4;

	for (i = 0; i < r->n; i++)
		if (strlen(r->nodes[i].spec->name) > w)
			w = strlen(r->nodes[i].spec->name);
	if (json) {
		all = json_object_new_object();
		nodes = json_object_new_object();
		ln_json_add_str(all, "cluster", r->spec->cluster);
		ln_json_add_str(all, "command", verb);
	} else {
		fprintf(out, "\nRECAP\n");
	}
	for (i = 0; i < r->n; i++) {
		struct ln_node_run *nr = &r->nodes[i];
		int unr = nr->state == LN_NODE_UNREACHABLE || nr->state == LN_NODE_REFUSED;
		int sk, fl, pend, kept = kept_targets(NULL, nr, 0);
		const char *why;

		if (ln_fanout_interrupted() && nr->state == LN_NODE_OK && !nr->applied &&
		    !nr->skip.len && nr->limited)
			ln_buf_addstr(&nr->skip, "not started: interrupted");
		sk = nr->skip.len > 0 || nr->state == LN_NODE_INTERRUPTED;
		fl = nr->n_failed + (nr->state == LN_NODE_FAILED);
		pend = nr->state == LN_NODE_OK && !nr->limited && answer_pending(nr);
		why = nr->state != LN_NODE_OK ? nr->reason.buf : sk ? nr->skip.buf :
		      pend ? "pending (outside --limit)" : NULL;

		t.code = ln_exit_merge(t.code, ln_node_state_exit(nr->state));
		if (fl || sk || pend)
			t.code = ln_exit_merge(t.code, LN_EXIT_FAILED);
		/* storage kept under an initiator: as for a node not reached */
		if (kept)
			t.code = ln_exit_merge(t.code, LN_EXIT_UNREACHABLE);
		t.kept += kept;
		t.changed += nr->n_changed;
		t.failed += fl;
		t.pending += pend;
		t.unreachable += unr;
		t.skipped += sk;
		if (json) {
			ln_json_add(nodes, nr->spec->name, recap_node_json(nr, fl, sk, unr, pend, kept, why));
			continue;
		}
		fprintf(out, "%-*s : ok=%-4d changed=%-4d failed=%-3d skipped=%-2d unreachable=%d%s%s\n",
			(int)w, nr->spec->name, nr->n_ok, nr->n_changed, fl, sk, unr, why ? "  " : "",
			why ? why : "");
		if (nr->n_failed)
			print_failed_changes(out, nr, (int)w);
		kept_targets(out, nr, (int)w);
	}
	if (ln_fanout_interrupted())
		t.code = ln_exit_merge(t.code, LN_EXIT_FAILED);
	if (t.stopped)
		t.code = ln_exit_merge(t.code, LN_EXIT_STOPPED);
	if (json)
		write_totals_json(out, all, nodes, &t);
	else
		print_totals(out, verb, r->n, &t);
	ln_run_log(r, "%s finished: %d changed, %d failed, %d unreachable, %d skipped, %d pending, "
		   "%d kept, exit %d%s", verb, t.changed, t.failed, t.unreachable, t.skipped, t.pending,
		   t.kept, t.code,
		   ln_fanout_interrupted() ? " (interrupted)" : "");
	return t.code;
}
