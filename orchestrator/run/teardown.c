/* SPDX-License-Identifier: MIT */
/*
 * teardown's ordering, which targets stay, and the agent's removal on
 * --purge. The agents do the removal itself (only objects their state file
 * records for this cluster); the controller decides who goes first
 * (initiators must disconnect before their targets disappear) and which
 * targets its agent must keep: those with an initiator in the spec that
 * did not disconnect in this run, unless --force names them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/json.h"
#include "common/log.h"
#include "orchestrator/run/phase.h"
#include "orchestrator/run/plan.h"
#include "orchestrator/run/rollout.h"
#include "orchestrator/run/state.h"
#include "orchestrator/run/teardown.h"
#include "orchestrator/transport/fanout.h"

int ln_teardown_force(const struct ln_spec *spec, const char *const *names, size_t n,
		      unsigned char *force, struct ln_buf *err)
{
	size_t j, t, i;

	for (j = 0; j < n; j++) {
		int found = 0;

		for (t = 0; t < spec->n_targets; t++)
			if (!strcmp(spec->targets[t].nqn, names[j]))
				found = force[t] = 1;
		for (i = 0; !found && i < spec->n_nodes; i++) {
			if (strcmp(spec->nodes[i].name, names[j]))
				continue;
			for (t = 0; t < spec->n_targets; t++)
				if (spec->targets[t].node == i)
					found = force[t] = 1;
			if (!found) {
				ln_buf_addf(err, "--force: node '%s' exports no target", names[j]);
				return -EINVAL;
			}
		}
		if (!found) {
			ln_buf_addf(err, "--force: '%s' is neither a target NQN nor a node of the spec",
				    names[j]);
			return -EINVAL;
		}
	}
	return 0;
}

int ln_teardown_check_force(const struct ln_spec *spec, const char *const *names, size_t n,
			    struct ln_buf *err)
{
	unsigned char *force = calloc(spec->n_targets ? spec->n_targets : 1, 1);
	int r = force ? ln_teardown_force(spec, names, n, force, err) : -ENOMEM;

	free(force);
	return r;
}

/* 1 when a teardown answer says the disconnect from nqn failed (or the
 * node's controllers could not even be listed: id "*"). */
static int disconnect_failed(struct json_object *answer, const char *nqn)
{
	return ln_json_disconnect_failed(ln_json_at(answer, "changes"), nqn);
}

int ln_teardown_target_kept(const struct ln_run *r, size_t t, struct ln_buf *why)
{
	const struct ln_spec *spec = r->spec;
	const struct ln_target *tg = &spec->targets[t];
	size_t k, more = 0;
	int kept = 0;

	for (k = 0; k < spec->n_initiators; k++) {
		const struct ln_initiator *in = &spec->initiators[k];
		const struct ln_node_run *nr = &r->nodes[in->node];
		const char *w = NULL;

		/* an initiator on the target's own node: its agent disconnects
		 * it first, in the same request, and keeps the target if not */
		if (in->target != t || in->node == tg->node)
			continue;
		if (!nr->limited)
			w = "outside --limit";
		else if (nr->state != LN_NODE_OK)
			w = ln_node_state_name(nr->state);
		else if (!nr->applied)
			w = "its node was not torn down before this target's";
		else if (disconnect_failed(nr->answer, tg->nqn))
			w = "its disconnect failed";
		if (!w)
			continue;
		if (kept++)
			more++;
		else
			ln_buf_addf(why, "initiator '%s' not disconnected (%s)", nr->spec->name, w);
	}
	if (more)
		ln_buf_addf(why, ", and %zu more", more);
	return kept > 0;
}

/* The controller's reason in the answer's "kept" entry for nqn (the agent
 * only knows it was told to keep it). A target the agent did not list was
 * not there to keep (torn down before): nothing to say. */
static int note_kept(struct ln_node_run *nr, const char *nqn, const char *why)
{
	struct json_object *kept = ln_json_at(nr->answer, "kept");
	size_t j, n = kept && json_object_is_type(kept, json_type_array) ?
			      json_object_array_length(kept) : 0;

	for (j = 0; j < n; j++) {
		struct json_object *e = json_object_array_get_idx(kept, j);
		const char *k = ln_json_str_at(e, "nqn");

		if (k && !strcmp(k, nqn)) {
			json_object_object_add(e, "reason", json_object_new_string(why));
			return 1;
		}
	}
	return 0;
}

static int has_kept(const struct ln_node_run *nr)
{
	struct json_object *kept = ln_json_at(nr->answer, "kept");

	return kept && json_object_is_type(kept, json_type_array) &&
	       json_object_array_length(kept) > 0;
}

/* One round of target nodes (sel): decide each of their targets, run
 * their teardown, and put the controller's reasons in the answers. */
static int targets_round(struct ln_run *r, const char *name, const unsigned char *sel,
			 const unsigned char *force)
{
	const struct ln_spec *spec = r->spec;
	struct ln_buf *why = calloc(spec->n_targets ? spec->n_targets : 1, sizeof(*why));
	size_t t;
	int rc;

	if (!why)
		return -ENOMEM;
	for (t = 0; t < spec->n_targets; t++) {
		const struct ln_target *tg = &spec->targets[t];

		ln_buf_init(&why[t], 0);
		if (!sel[tg->node])
			continue;
		r->td_targets[t] = force[t] ? LN_TD_FORCE : LN_TD_REMOVE;
		if (!ln_teardown_target_kept(r, t, &why[t]))
			continue;
		if (r->td_targets[t] == LN_TD_FORCE) {
			ln_run_note(r, LN_LOG_WARN, "removing '%s' on '%s' (--force) though %s",
				   tg->nqn, spec->nodes[tg->node].name, why[t].buf);
			ln_run_log(r, "force %s: %s", tg->nqn, why[t].buf);
		} else {
			r->td_targets[t] = LN_TD_KEEP;
		}
	}
	rc = ln_phase_run(r, name, sel, LN_PK_TEARDOWN);
	for (t = 0; t < spec->n_targets; t++) {
		const struct ln_target *tg = &spec->targets[t];

		if (sel[tg->node] && r->td_targets[t] == LN_TD_KEEP &&
		    note_kept(&r->nodes[tg->node], tg->nqn, why[t].buf))
			ln_run_log(r, "kept %s: %s", tg->nqn, why[t].buf);
		ln_buf_release(&why[t]);
	}
	free(why);
	return rc;
}

/* The shell line that removes what llmnet installed beside the agent:
 * the agent and its sidecar, the GPU facts program, the probes and the
 * MPI probes' sources; then the two folders, only if that left them
 * empty (a file llmnet did not put there keeps its folder). */
static void purge_agent_cmd(int sudo, struct ln_buf *cmd)
{
	static const char *const files[] = {
		LN_PROTO_REMOTE_DIR "/" LN_PROTO_AGENT_NAME,
		LN_PROTO_REMOTE_DIR "/" LN_PROTO_AGENT_NAME LN_PROTO_AGENT_ID_SUFFIX,
		LN_PROTO_REMOTE_DIR "/" LN_PROBE_GPU_FACTS,
		LN_PROTO_REMOTE_DIR "/" LN_PROBE_IO,
		LN_PROTO_REMOTE_DIR "/" LN_PROBE_MPI,
		LN_PROTO_REMOTE_DIR "/" LN_PROBE_NCCL,
		LN_PROBE_SRC_DIR "/" LN_PROBE_MPI_SRC,
		LN_PROBE_SRC_DIR "/" LN_PROBE_NCCL_SRC,
	};
	size_t i;

	if (sudo)
		ln_buf_addstr(cmd, "sudo -n env ${LLMNET_AGENT_ROOT:+LLMNET_AGENT_ROOT="
				   "\"$LLMNET_AGENT_ROOT\"} sh -c '");
	ln_buf_addstr(cmd, "rm -f --");
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		ln_buf_addf(cmd, " \"${LLMNET_AGENT_ROOT%%/}%s\"", files[i]);
	ln_buf_addf(cmd, " && { rmdir -- \"${LLMNET_AGENT_ROOT%%/}%s\" "
			 "\"${LLMNET_AGENT_ROOT%%/}%s\" 2>/dev/null; true; }%s",
		    LN_PROBE_SRC_DIR, LN_PROTO_REMOTE_DIR, sudo ? "'" : "");
}

/* plan --destroy --purge: the agent's removal, which the controller does
 * and no agent plans, as one more planned change of the node's answer. */
static void plan_agent_removal(struct ln_node_run *nr)
{
	struct json_object *ch = ln_json_at(nr->answer, "changes"), *o;

	if (!ch || !json_object_is_type(ch, json_type_array))
		return;
	o = json_object_new_object();
	ln_json_add_str(o, "action", "remove");
	ln_json_add_str(o, "kind", "agent");
	ln_json_add_str(o, "id", LN_PROTO_REMOTE_DIR "/" LN_PROTO_AGENT_NAME);
	ln_json_add_str(o, "detail", "and the GPU facts program and probes beside it");
	json_object_array_add(ch, o);
}

static int remove_agent(void *ctx, size_t i, struct ln_buf *line)
{
	struct ln_run *r = ctx;
	struct ln_node_run *nr = &r->nodes[i];
	struct ln_buf cmd = LN_BUF_INIT, out = LN_BUF_INIT, eo = LN_BUF_INIT, err = LN_BUF_INIT;
	int rc, status = -1;

	rc = ln_run_session(r, nr, &err);
	if (rc == 0) {
		purge_agent_cmd(ln_ssh_is_sudo(nr->s), &cmd);
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
	ln_buf_release_all(&cmd, &out, &eo, &err);
	return rc;
}

static int target_node(const struct ln_run *r, size_t i)
{
	return r->nodes[i].state == LN_NODE_OK && r->nodes[i].limited &&
	       (ln_plan_roles(r->spec, i) & LN_ROLE_TARGET);
}

int ln_teardown_run(struct ln_run *r, const char *const *names, size_t n_names)
{
	const struct ln_spec *spec = r->spec;
	unsigned char *sel = calloc(r->n ? r->n : 1, 1);
	unsigned char *force = calloc(spec->n_targets ? spec->n_targets : 1, 1);
	unsigned *level = calloc(spec->n_nodes ? spec->n_nodes : 1, sizeof(*level));
	struct ln_buf err = LN_BUF_INIT;
	size_t i, rounds = 0, round = 0;
	long lv;
	int rc = 0, any;

	r->td_targets = calloc(spec->n_targets ? spec->n_targets : 1, 1);
	if (!sel || !force || !level || !r->td_targets) {
		rc = -ENOMEM;
		goto out;
	}
	rc = ln_teardown_force(spec, names, n_names, force, &err);
	if (rc < 0)
		goto out;
	/* Phase 1: everything but targets (hostfiles, initiators). */
	for (i = 0, any = 0; i < r->n; i++)
		any |= sel[i] = r->nodes[i].state == LN_NODE_OK && r->nodes[i].limited &&
				!(ln_plan_roles(spec, i) & LN_ROLE_TARGET);
	if (any && (rc = ln_phase_run(r, "teardown initiators", sel, LN_PK_TEARDOWN)) < 0)
		goto out;
	/*
	 * Then target nodes, in rounds from the highest level down: a node
	 * that connects to another's target goes before it (rollout.h). Each
	 * target whose initiators did not all disconnect by then is kept.
	 */
	ln_waves_levels(spec, level);
	for (lv = (long)spec->n_nodes; lv >= 0; lv--) {
		for (i = 0, any = 0; i < r->n; i++)
			any |= target_node(r, i) && level[i] == (unsigned)lv;
		rounds += any;
	}
	for (lv = (long)spec->n_nodes; lv >= 0 && !ln_fanout_interrupted(); lv--) {
		char name[64];

		for (i = 0, any = 0; i < r->n; i++)
			any |= sel[i] = target_node(r, i) && level[i] == (unsigned)lv;
		if (!any)
			continue;
		if (rounds > 1)
			snprintf(name, sizeof(name), "teardown targets (round %zu of %zu)", ++round,
				 rounds);
		else
			snprintf(name, sizeof(name), "teardown targets");
		rc = targets_round(r, name, sel, force);
		if (rc < 0)
			goto out;
	}
	if (r->purge && r->destroy_plan) {
		for (i = 0; i < r->n; i++)
			if (r->nodes[i].state == LN_NODE_OK && r->nodes[i].limited &&
			    r->nodes[i].n_failed == 0 && !has_kept(&r->nodes[i]))
				plan_agent_removal(&r->nodes[i]);
	} else if (r->purge) {
		struct ln_fanout f = { "purge agent", r->n, sel, r->parallel, remove_agent, r, 0 };
		struct ln_fanout_result res;

		/* the agent stays where it still owns a kept target */
		for (i = 0, any = 0; i < r->n; i++)
			any |= sel[i] = !ln_fanout_interrupted() && r->nodes[i].state == LN_NODE_OK &&
					r->nodes[i].limited && r->nodes[i].n_failed == 0 &&
					!has_kept(&r->nodes[i]);
		if (any && (rc = ln_fanout_run(&f, &res)) == 0)
			ln_fanout_result_release(&res);
	}
out:
	free(sel);
	free(force);
	free(level);
	ln_buf_release(&err);
	ln_run_phase_done(r);
	return rc;
}

void ln_teardown_record(struct ln_run *r, struct ln_notes *notes)
{
	struct ln_buf err = LN_BUF_INIT;

	/* a silent node's next plan starts from nothing */
	if (ln_state_save_applied(r, NULL, &err) < 0)
		ln_notes_add(notes, LN_LOG_WARN, "cannot record the applied state: %s", err.buf);
	ln_buf_release(&err);
}
