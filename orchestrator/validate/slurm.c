/* SPDX-License-Identifier: MIT */
/*
 * The Slurm after-validate action (slurm.h). In three steps, so that
 * what will change is printed before anything does: decide (the verdict
 * table, each candidate's state read with scontrol), print the plan,
 * then change and read back. Only the nodes the verdicts blame are
 * drained; only llmnet's own drains of this cluster (reason
 * "llmnet:CLUSTER:") are lifted, by the rules of common/slurm.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/slurm.h"
#include "common/util.h"
#include "orchestrator/spec/spec.h"
#include "orchestrator/validate/slurm.h"
#include "orchestrator/validate/stages.h"

/* Every verdict kind: a node's or a port's drains that node; the rest
 * blame something that is not one node. A kind missing here drains
 * nobody (tests/unit/test_slurm.c fails until it has its row). */
static const struct ln_slurm_verdict_row verdict_rows[] = {
	{ LN_VERDICT_NODE, 1, NULL },
	{ LN_VERDICT_PORT, 1, NULL },
	{ LN_VERDICT_LINK, 0, "the link, not a node" },
	{ LN_VERDICT_UNDETERMINED, 0, "no single culprit, not a node" },
	{ LN_VERDICT_CLUSTER, 0, "a cluster-wide check, not a node" },
	{ LN_VERDICT_TARGET, 0, "the target, not a node" },
};

const struct ln_slurm_verdict_row *ln_slurm_verdict_row(enum ln_verdict_kind k)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(verdict_rows); i++)
		if (verdict_rows[i].kind == k)
			return &verdict_rows[i];
	return NULL;
}

int ln_slurm_wanted(const struct ln_after_opts *o)
{
	const struct ln_slurm_spec *s = o->spec ? &o->spec->slurm : NULL;

	return o->drain != LN_DRAIN_NONE || o->resume || (s && (s->drain || s->resume));
}

int ln_slurm_opts_check(const struct ln_spec *spec, const struct ln_after_opts *o,
			struct ln_buf *err)
{
	if ((o->drain != LN_DRAIN_NONE || o->resume) && !spec->slurm.present) {
		ln_buf_addstr(err, "--drain and --resume need the spec's slurm section "
			      "(slurm.node: where the agent runs scontrol)");
		return -EINVAL;
	}
	return 0;
}

/* A node's pending change, decided before any is made. */
struct pending {
	size_t node;
	int lift;			/* else a drain */
	char reason[LN_SLURM_REASON_MAX + 1];
};

struct sx {
	struct ln_results *res;
	const struct ln_after_opts *o;
	const struct ln_spec *spec;
	size_t at;			/* slurm.node's index */
	int plan, failed;
	unsigned char *blamed;		/* per node: a verdict drains it */
	struct pending *p;
	size_t np;
};

static const char *slurm_name(const struct sx *x, size_t i)
{
	return x->spec->nodes[i].slurm_name ? x->spec->nodes[i].slurm_name :
					      x->spec->nodes[i].name;
}

/* A change (or refusal) of node i (LN_NO_NODE: none) into the results;
 * a failed one marks the action failed. */
static void note(struct sx *x, enum ln_slurm_act act, size_t i, const char *reason,
		 const char *detail)
{
	if (act == LN_SLURM_ACT_FAILED)
		x->failed = 1;
	if (ln_results_add_slurm(x->res, act, i == LN_NO_NODE ? NULL : x->res->nodes[i],
				 i == LN_NO_NODE ? NULL : slurm_name(x, i), reason, "%s",
				 detail) < 0)
		x->failed = 1;
}

static void progress(const struct sx *x, const char *line)
{
	if (x->o->progress)
		x->o->progress(x->o->progress_ctx, line);
}

/* scontrol argv on slurm.node, bounded; its output into out. 0 when it
 * ran and exited 0, else -1 with why. */
static int scontrol(struct sx *x, const char *const *argv, struct ln_buf *out,
		    struct ln_buf *why)
{
	struct ln_probe_result pr;
	int r;

	memset(&pr, 0, sizeof(pr));
	ln_buf_init(&pr.output, 0);
	r = x->o->ops->run(x->o->ops_ctx, x->at, 0, argv, NULL, LN_SLURM_TIMEOUT_S, &pr, why);
	if (r == 0 && pr.timed_out) {
		ln_buf_addf(why, "scontrol did not answer within %d s", LN_SLURM_TIMEOUT_S);
		r = -1;
	} else if (r == 0 && pr.exit_status) {
		ln_buf_addf(why, "scontrol exited %d: %.*s", pr.exit_status,
			    (int)strcspn(pr.output.buf ? pr.output.buf : "", "\n"),
			    pr.output.buf ? pr.output.buf : "");
		r = -1;
	}
	if (r == 0)
		r = ln_buf_add(out, pr.output.buf ? pr.output.buf : "", pr.output.len) < 0 ? -1 : 0;
	ln_buf_release(&pr.output);
	return r < 0 ? -1 : 0;
}

/* Node i's state and reason, as scontrol states them. */
static int read_node(struct sx *x, size_t i, struct ln_slurm_node *n, struct ln_buf *why)
{
	struct ln_buf out = LN_BUF_INIT;
	const char *argv[6];
	int r;

	ln_slurm_argv_show(slurm_name(x, i), argv);
	r = scontrol(x, argv, &out, why);
	if (r == 0)
		r = ln_slurm_show_parse(out.buf ? out.buf : "", slurm_name(x, i), n, why) < 0 ? -1 : 0;
	ln_buf_release(&out);
	return r;
}

/* The reason for node i's drain: the stages of the verdicts that blame
 * it, and the first one's why (naming the port of a port verdict). */
static int drain_reason(const struct sx *x, size_t i, char *out)
{
	const struct ln_results *res = x->res;
	const char *stages[LN_SLURM_STAGES_MAX], *dev;
	struct ln_buf why = LN_BUF_INIT, reason = LN_BUF_INIT;
	unsigned seen = 0;
	size_t k, n = 0;
	int r;

	for (k = 0; k < res->nverdicts; k++) {
		const struct ln_verdict *v = &res->verdicts[k];
		const struct ln_slurm_verdict_row *row = ln_slurm_verdict_row(v->kind);

		if (!row || !row->drains || v->a != i)
			continue;
		if (!(seen & (1u << v->stage)) && n < LN_SLURM_STAGES_MAX)
			stages[n++] = ln_stage_name(v->stage);
		seen |= 1u << v->stage;
		if (why.len)
			continue;
		dev = v->kind == LN_VERDICT_PORT ? ln_results_port(res, i, v->pa) : NULL;
		ln_buf_addf(&why, "%s%s%s", dev ? dev : "", dev ? ": " : "",
			    v->reason ? v->reason : "failed");
	}
	r = ln_slurm_reason_make(&reason, res->cluster, stages, n, why.buf);
	if (r == 0)
		memcpy(out, reason.buf, reason.len + 1);
	ln_buf_release(&why);
	ln_buf_release(&reason);
	return r;
}

static int add_pending(struct sx *x, size_t i, int lift, const char *reason)
{
	struct pending *v = realloc(x->p, (x->np + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	x->p = v;
	v[x->np].node = i;
	v[x->np].lift = lift;
	snprintf(v[x->np].reason, sizeof(v[x->np].reason), "%s", reason);
	x->np++;
	return 0;
}

/* The verdicts through the table: blamed nodes marked, every verdict
 * that drains nobody said so (reported only when draining). */
static void blame(struct sx *x, int report)
{
	struct ln_buf d = LN_BUF_INIT;
	size_t k;

	for (k = 0; k < x->res->nverdicts; k++) {
		const struct ln_verdict *v = &x->res->verdicts[k];
		const struct ln_slurm_verdict_row *row = ln_slurm_verdict_row(v->kind);

		if (row && row->drains && v->a < x->res->nnodes) {
			x->blamed[v->a] = 1;
			continue;
		}
		if (!report)
			continue;
		ln_buf_reset(&d);
		ln_results_subject_ports(x->res, v->a, v->pa, v->b, v->pb, &d);
		if (row)
			ln_buf_addf(&d, " (%s): %s", ln_stage_name(v->stage),
				    row->not_a_node);
		else
			ln_buf_addf(&d, " (%s): llmnet's Slurm table has no row for a "
				    "'%s' verdict, so it drains nobody", ln_stage_name(v->stage),
				    ln_verdict_kind_name(v->kind));
		note(x, LN_SLURM_ACT_NOT_DRAINED, LN_NO_NODE, NULL, d.buf);
	}
	ln_buf_release(&d);
}

/* Each blamed node: its state read, a drain pending where one may be made. */
static int decide_drains(struct sx *x)
{
	struct ln_buf why = LN_BUF_INIT, d = LN_BUF_INIT;
	struct ln_slurm_node n;
	char reason[LN_SLURM_REASON_MAX + 1];
	size_t i;
	int r = 0;

	for (i = 0; i < x->res->nnodes && r == 0; i++) {
		if (!x->blamed[i])
			continue;
		ln_buf_reset(&why);
		ln_buf_reset(&d);
		if (drain_reason(x, i, reason) < 0) {
			note(x, LN_SLURM_ACT_FAILED, i, NULL, "no drain reason could be made");
			continue;
		}
		if (read_node(x, i, &n, &why) < 0) {
			ln_buf_addf(&d, "its Slurm state could not be read: %s", why.buf);
			note(x, LN_SLURM_ACT_FAILED, i, reason, d.buf);
			continue;
		}
		switch (ln_slurm_may_drain(&n, x->res->cluster)) {
		case LN_SLURM_MAY_DRAIN:
			r = add_pending(x, i, 0, reason);
			break;
		case LN_SLURM_DRAINED_BY_US:
			note(x, LN_SLURM_ACT_NOT_DRAINED, i, n.reason,
			     "llmnet's drain of this cluster is already on it");
			break;
		case LN_SLURM_DRAINED_BY_OTHER:
			ln_buf_addf(&d, "already drained by someone else (State=%s); "
				    "their drain and reason are left as they are", n.state);
			note(x, LN_SLURM_ACT_NOT_DRAINED, i, n.reason, d.buf);
			break;
		case LN_SLURM_IS_DOWN:
			ln_buf_addf(&d, "Slurm has it down (State=%s); left as it is",
				    n.state);
			note(x, LN_SLURM_ACT_NOT_DRAINED, i, n.reason, d.buf);
			break;
		}
	}
	ln_buf_release(&why);
	ln_buf_release(&d);
	return r;
}

/* Whether node i ran stage s in this run and passed it: the stage ran,
 * it has checks of its own there (or the stage's cluster-wide checks)
 * and every one passed, and no verdict of the stage names it. */
static int node_passed(const struct ln_results *res, size_t i, enum ln_stage s)
{
	size_t k, mine = 0, cluster = 0;

	if (!res->stages[s].ran)
		return 0;
	for (k = 0; k < res->nchecks; k++) {
		const struct ln_check *c = &res->checks[k];
		int ok = c->status == LN_ST_PASS || (c->status == LN_ST_SKIPPED && c->moot);

		if (c->stage != s)
			continue;
		if (c->a == i || c->b == i)
			mine++;
		else if (c->a == LN_NO_NODE)
			cluster++;
		else
			continue;
		if (!ok)
			return 0;
	}
	for (k = 0; k < res->nverdicts; k++)
		if (res->verdicts[k].stage == s &&
		    (res->verdicts[k].a == i || res->verdicts[k].b == i))
			return 0;
	return mine || cluster;
}

struct judge_ctx {
	const struct ln_results *res;
	size_t node;
};

static int judge_ran(void *ctx, const char *stage)
{
	const struct judge_ctx *j = ctx;
	enum ln_stage s;

	return ln_stage_parse(stage, &s) == 0 && j->res->stages[s].ran;
}

static int judge_passed(void *ctx, const char *stage)
{
	const struct judge_ctx *j = ctx;
	enum ln_stage s;

	return ln_stage_parse(stage, &s) == 0 && node_passed(j->res, j->node, s);
}

/* Whether node i was under test: some check of this run is its. */
static int under_test(const struct ln_results *res, size_t i)
{
	size_t k;

	for (k = 0; k < res->nchecks; k++)
		if (res->checks[k].a == i || res->checks[k].b == i)
			return 1;
	return 0;
}

/* Each node under test that no verdict blames: a lift pending for
 * llmnet's own drain where every stage it lists ran and passed. */
static int decide_lifts(struct sx *x)
{
	struct ln_buf why = LN_BUF_INIT, d = LN_BUF_INIT;
	struct ln_slurm_owned own;
	struct ln_slurm_node n;
	struct judge_ctx jc = { x->res, 0 };
	const struct ln_slurm_lift_judge j = { judge_ran, judge_passed, &jc };
	const char *stage;
	size_t i;
	int r = 0;

	for (i = 0; i < x->res->nnodes && r == 0; i++) {
		if (x->blamed[i] || !under_test(x->res, i))
			continue;
		ln_buf_reset(&why);
		ln_buf_reset(&d);
		if (read_node(x, i, &n, &why) < 0) {
			ln_buf_addf(&d, "its Slurm state could not be read: %s", why.buf);
			note(x, LN_SLURM_ACT_FAILED, i, NULL, d.buf);
			continue;
		}
		jc.node = i;
		switch (ln_slurm_may_lift(&n, x->res->cluster, &j, &own, &stage)) {
		case LN_SLURM_LIFT:
			r = add_pending(x, i, 1, n.reason);
			break;
		case LN_SLURM_NOT_DRAINED:
			break;
		case LN_SLURM_NOT_OURS:
			note(x, LN_SLURM_ACT_NOT_RESUMED, i, n.reason,
			     "the drain is not this cluster's llmnet drain; left as it is");
			break;
		case LN_SLURM_STAGE_NOT_RUN:
			ln_buf_addf(&d, "%s not run", stage);
			note(x, LN_SLURM_ACT_NOT_RESUMED, i, n.reason, d.buf);
			break;
		case LN_SLURM_STAGE_FAILED:
			ln_buf_addf(&d, "%s did not pass", stage);
			note(x, LN_SLURM_ACT_NOT_RESUMED, i, n.reason, d.buf);
			break;
		}
	}
	ln_buf_release(&why);
	ln_buf_release(&d);
	return r;
}

/* Before any change: one line per drain and lift to come. */
static void print_plan(struct sx *x)
{
	struct ln_buf l = LN_BUF_INIT;
	size_t k;

	for (k = 0; k < x->np; k++) {
		const struct pending *p = &x->p[k];

		ln_buf_reset(&l);
		ln_buf_addf(&l, "slurm: %s %s %s (Slurm node %s): %s",
			    x->plan ? "would" : "will", p->lift ? "lift the drain of" : "drain",
			    x->res->nodes[p->node], slurm_name(x, p->node), p->reason);
		progress(x, l.buf);
	}
	if (!x->np)
		progress(x, "slurm: nothing to drain or lift");
	ln_buf_release(&l);
}

/* The pending change p made, then read back. */
static void make_change(struct sx *x, const struct pending *p)
{
	struct ln_buf why = LN_BUF_INIT, out = LN_BUF_INIT, d = LN_BUF_INIT;
	char a1[80], a2[LN_SLURM_REASON_MAX + 8];
	const char *argv[6];
	struct ln_slurm_node n;
	int ok;

	if (p->lift)
		ln_slurm_argv_undrain(slurm_name(x, p->node), a1, argv);
	else
		ln_slurm_argv_drain(slurm_name(x, p->node), p->reason, a1, a2, argv);
	if (scontrol(x, argv, &out, &why) < 0 || read_node(x, p->node, &n, &why) < 0) {
		ln_buf_addf(&d, "%s failed: %s", p->lift ? "UNDRAIN" : "DRAIN", why.buf);
		note(x, LN_SLURM_ACT_FAILED, p->node, p->reason, d.buf);
		goto out;
	}
	ok = p->lift ? !n.drained : n.drained && !strcmp(n.reason, p->reason);
	if (!ok) {
		ln_buf_addf(&d, "%s not confirmed: Slurm reads State=%s Reason=%s",
			    p->lift ? "UNDRAIN" : "DRAIN", n.state, n.reason[0] ? n.reason : "none");
		note(x, LN_SLURM_ACT_FAILED, p->node, p->reason, d.buf);
	} else {
		ln_buf_addf(&d, "%s: State=%s", p->lift ? "llmnet's drain lifted (UNDRAIN)" :
			    "drained", n.state);
		note(x, p->lift ? LN_SLURM_ACT_LIFTED : LN_SLURM_ACT_DRAINED, p->node, p->reason,
		     d.buf);
	}
out:
	ln_buf_release(&why);
	ln_buf_release(&out);
	ln_buf_release(&d);
}

int ln_slurm_act(struct ln_results *res, const struct ln_after_opts *o, struct ln_buf *err)
{
	const struct ln_slurm_spec *s = &o->spec->slurm;
	int drain = o->drain != LN_DRAIN_NONE || s->drain, resume = o->resume || s->resume;
	struct sx x;
	size_t k;
	long at;
	int r = 0;

	memset(&x, 0, sizeof(x));
	x.res = res;
	x.o = o;
	x.spec = o->spec;
	x.plan = o->drain == LN_DRAIN_PLAN;
	at = s->present && s->node ? ln_spec_node_index(o->spec, s->node) : -1;
	if (at < 0 || !o->ops || res->nnodes != o->spec->n_nodes) {
		ln_buf_addstr(err, "slurm: --drain and --resume need the spec's slurm section "
			      "(slurm.node: where the agent runs scontrol)");
		return -EINVAL;
	}
	x.at = (size_t)at;
	x.blamed = calloc(res->nnodes ? res->nnodes : 1, 1);
	if (!x.blamed)
		return -ENOMEM;
	blame(&x, drain);
	if (drain)
		r = decide_drains(&x);
	if (r == 0 && resume)
		r = decide_lifts(&x);
	if (r == 0) {
		print_plan(&x);
		for (k = 0; k < x.np; k++)
			if (x.plan)
				note(&x, x.p[k].lift ? LN_SLURM_ACT_WOULD_LIFT :
				     LN_SLURM_ACT_WOULD_DRAIN, x.p[k].node, x.p[k].reason,
				     "--drain=plan: Slurm not changed");
			else
				make_change(&x, &x.p[k]);
	}
	if (r == 0 && x.failed)
		ln_buf_addstr(err, "slurm: a drain or lift failed or could not be checked (the "
			      "report lists each)");
	free(x.blamed);
	free(x.p);
	return r < 0 ? r : x.failed ? -EIO : 0;
}
