/* SPDX-License-Identifier: MIT */
/*
 * Bad node / bad link diagnosis with a second pass against known-good
 * peers (see diagnose.h for the rules). The work is linear in the number
 * of pair checks plus the retests: each pass over the checks runs once,
 * and a suspect's partners come from an adjacency list built in one of
 * those passes, not from a scan of every check per suspect. So a
 * 1,024-node all-pairs run (523,776 pairs) is diagnosed in well under a
 * second.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/validate/diagnose.h"

struct node_state {
	size_t tested, failed, passed;
	int suspect;		/* failed with every partner */
	int retest;		/* -1 not retested, 0 failed, 1 passed */
	int bad;		/* confirmed bad node */
	int unknown;		/* suspect that could not be retested */
	size_t peer;		/* the known-good peer of its retest */
};

static int counts_as_tested(const struct ln_check *c, enum ln_stage stage, size_t n)
{
	return c->stage == stage && !c->retest && c->a < n && c->b < n &&
	       (c->status == LN_ST_PASS || c->status == LN_ST_FAIL);
}

static void free_attempts(struct ln_attempt *at, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(at[i].detail);
		free(at[i].command);
		at[i].detail = at[i].command = NULL;
	}
}

/* Run every pair of sched round by round; hand each result to done(). */
static int run_schedule(struct ln_results *r, enum ln_stage stage, const struct ln_schedule *s,
			ln_round_fn run_round, void *ctx,
			int (*done)(struct ln_results *, enum ln_stage, const struct ln_pair *,
				    struct ln_attempt *, void *),
			void *dctx, struct ln_diag_stats *stats, struct ln_buf *err)
{
	size_t rd, i;
	int ret = 0;

	for (rd = 0; rd < s->nrounds && !ret; rd++) {
		const struct ln_round *round = &s->rounds[rd];
		struct ln_attempt *out = calloc(round->npairs, sizeof(*out));

		if (!out) {
			ln_buf_addstr(err, "cannot retest suspects: out of memory");
			return -ENOMEM;
		}
		for (i = 0; i < round->npairs; i++)
			out[i].value = NAN;
		ret = run_round(ctx, stage, round->pairs, round->npairs, out);
		if (ret < 0)
			ln_buf_addf(err, "cannot retest %s suspects: %s", ln_stage_name(stage),
				    strerror(-ret < 1000 ? -ret : EIO));
		for (i = 0; i < round->npairs && !ret; i++) {
			out[i].retest = 1;
			ret = done(r, stage, &round->pairs[i], &out[i], dctx);
		}
		free_attempts(out, round->npairs);
		free(out);
		stats->retests += round->npairs;
		stats->retest_rounds++;
	}
	r->stages[stage].rounds += s->nrounds;
	return ret;
}

static int node_retest_done(struct ln_results *r, enum ln_stage stage, const struct ln_pair *p,
			    struct ln_attempt *at, void *dctx)
{
	struct node_state *ns = dctx;
	long idx = ln_results_add_check(r, stage, p->a, p->b, "retest against a known-good peer");
	int ret;

	if (idx < 0)
		return (int)idx;
	r->checks[idx].retest = 1;
	ret = ln_check_add_attempt(&r->checks[idx], at);
	if (ret < 0)
		return ret;
	ns[p->b].retest = at->ok ? 1 : 0;
	ns[p->b].peer = p->a;
	return 0;
}

struct link_ctx {
	size_t *check_of;	/* pair index -> check index, looked up by (a,b) */
	struct ln_pair *pairs;
	size_t npairs;
};

static int link_retest_done(struct ln_results *r, enum ln_stage stage, const struct ln_pair *p,
			    struct ln_attempt *at, void *dctx)
{
	struct link_ctx *lc = dctx;
	size_t i;

	(void)stage;
	/* pairs[] is short (the failed links only) and searched in order */
	for (i = 0; i < lc->npairs; i++)
		if (lc->pairs[i].a == p->a && lc->pairs[i].b == p->b)
			return ln_check_add_attempt(&r->checks[lc->check_of[i]], at);
	return -EINVAL;
}

/* One stage's diagnosis in progress. */
struct diag {
	struct ln_results *r;
	enum ln_stage stage;
	size_t n;			/* nodes */
	struct node_state *ns;		/* per node */
	size_t *good, ngood;		/* nodes that passed a pair, in order */
	size_t *adj, *adj_off;		/* node i's tested partners: adj[adj_off[i]..adj_off[i+1]) */
	ln_round_fn run_round;
	void *ctx;
	struct ln_diag_stats *stats;
	struct ln_buf *err;
	struct ln_schedule *s;		/* retest rounds: ln_diagnose_stage's local */
	struct link_ctx lc;
};

/* First pass over the checks: per node, pairs tested, failed, passed; the
 * known-good nodes and the suspects. */
static void count_nodes(struct diag *d)
{
	struct node_state *ns = d->ns;
	size_t i;

	for (i = 0; i < d->r->nchecks; i++) {
		const struct ln_check *c = &d->r->checks[i];

		if (!counts_as_tested(c, d->stage, d->n))
			continue;
		ns[c->a].tested++;
		ns[c->b].tested++;
		if (c->status == LN_ST_FAIL) {
			ns[c->a].failed++;
			ns[c->b].failed++;
		} else {
			ns[c->a].passed++;
			ns[c->b].passed++;
		}
	}
	for (i = 0; i < d->n; i++) {
		ns[i].retest = -1;
		ns[i].peer = LN_NO_NODE;
		if (ns[i].passed)
			d->good[d->ngood++] = i;
		if (ns[i].tested && ns[i].failed == ns[i].tested) {
			ns[i].suspect = 1;
			d->stats->suspect_nodes++;
		}
	}
}

/* Every node's tested partners, in one pass over the checks (a
 * compressed adjacency list: offsets from the counts, then a fill). */
static int build_partners(struct diag *d)
{
	size_t i, *fill;

	d->adj_off = calloc(d->n + 1, sizeof(*d->adj_off));
	fill = calloc(d->n ? d->n : 1, sizeof(*fill));
	if (!d->adj_off || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (i = 0; i < d->n; i++)
		d->adj_off[i + 1] = d->adj_off[i] + d->ns[i].tested;
	d->adj = calloc(d->adj_off[d->n] ? d->adj_off[d->n] : 1, sizeof(*d->adj));
	if (!d->adj) {
		free(fill);
		return -ENOMEM;
	}
	for (i = 0; i < d->r->nchecks; i++) {
		const struct ln_check *c = &d->r->checks[i];

		if (!counts_as_tested(c, d->stage, d->n))
			continue;
		d->adj[d->adj_off[c->a] + fill[c->a]++] = c->b;
		d->adj[d->adj_off[c->b] + fill[c->b]++] = c->a;
	}
	free(fill);
	return 0;
}

/* Second pass, nodes (returns 0 or a negative code with err set, as
 * retest_links does): each suspect with a known-good peer it has not
 * been paired with yet (a fresh witness), spread over the good nodes
 * by the suspect's ordinal so that retests fill few rounds. */
static int retest_nodes(struct diag *d)
{
	struct node_state *ns = d->ns;
	struct ln_pair *pairs = calloc(d->n ? d->n : 1, sizeof(*pairs));
	size_t *partner_mark = calloc(d->n ? d->n : 1, sizeof(*partner_mark));
	size_t i, k, np = 0, nsus = 0;
	int ret = -ENOMEM;

	if (!pairs || !partner_mark || (d->ngood && d->run_round && build_partners(d) < 0)) {
		ln_buf_addstr(d->err, "cannot diagnose: out of memory");
		goto out;
	}
	for (i = 0; i < d->n; i++) {
		size_t pick = LN_NO_NODE;

		if (!ns[i].suspect)
			continue;
		if (!d->ngood || !d->run_round) {
			/* Without a second pass, one failed partner cannot tell
			 * the node from the link; two or more can. */
			ns[i].bad = d->ngood && ns[i].tested >= 2;
			ns[i].unknown = !ns[i].bad;
			nsus++;
			continue;
		}
		for (k = d->adj_off[i]; k < d->adj_off[i + 1]; k++)
			partner_mark[d->adj[k]] = i + 1;
		for (k = 0; k < d->ngood; k++) {
			size_t g = d->good[(nsus + k) % d->ngood];

			if (partner_mark[g] != i + 1) {
				pick = g;
				break;
			}
		}
		if (pick == LN_NO_NODE)
			pick = d->good[nsus % d->ngood];
		pairs[np].a = pick;
		pairs[np].b = i;
		np++;
		nsus++;
	}
	ret = 0;
	if (np) {
		ret = ln_pairing_pack(pairs, np, d->n, d->s, d->err);
		if (ret == 0)
			ret = run_schedule(d->r, d->stage, d->s, d->run_round, d->ctx,
					   node_retest_done, ns, d->stats, d->err);
	}
	for (i = 0; i < d->n && ret == 0; i++)
		if (ns[i].suspect && ns[i].retest == 0)
			ns[i].bad = 1;
out:
	free(pairs);
	free(partner_mark);
	return ret;
}

/* A failed pair whose ends are not bad (or unknown) nodes: a suspect link. */
static int suspect_link(const struct diag *d, const struct ln_check *c)
{
	const struct node_state *ns = d->ns;

	return counts_as_tested(c, d->stage, d->n) && c->status == LN_ST_FAIL && !ns[c->a].bad &&
	       !ns[c->b].bad && !ns[c->a].unknown && !ns[c->b].unknown;
}

/* Second pass, links: every suspect link among the first nchecks checks
 * runs again as it was. */
static int retest_links(struct diag *d, size_t nchecks)
{
	struct link_ctx *lc = &d->lc;
	size_t i, np = 0;
	int ret;

	for (i = 0; i < nchecks; i++)
		np += suspect_link(d, &d->r->checks[i]);
	if (!np)
		return 0;
	lc->pairs = calloc(np, sizeof(*lc->pairs));
	lc->check_of = calloc(np, sizeof(*lc->check_of));
	if (!lc->pairs || !lc->check_of) {
		ln_buf_addstr(d->err, "cannot diagnose: out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < nchecks; i++) {
		const struct ln_check *c = &d->r->checks[i];

		if (suspect_link(d, c)) {
			lc->pairs[lc->npairs].a = c->a;
			lc->pairs[lc->npairs].b = c->b;
			lc->check_of[lc->npairs++] = i;
		}
	}
	d->stats->suspect_links = lc->npairs;
	if (!d->run_round)
		return 0;
	ret = ln_pairing_pack(lc->pairs, lc->npairs, d->n, d->s, d->err);
	if (ret == 0)
		ret = run_schedule(d->r, d->stage, d->s, d->run_round, d->ctx, link_retest_done,
				   lc, d->stats, d->err);
	return ret;
}

/* Verdicts on nodes, in node order. */
static int node_verdicts(struct diag *d)
{
	const struct node_state *ns = d->ns;
	struct ln_results *r = d->r;
	const char *stage = ln_stage_name(d->stage);
	size_t i;
	int ret;

	for (i = 0; i < d->n; i++) {
		if (ns[i].bad && ns[i].peer != LN_NO_NODE) {
			ret = ln_results_add_verdict(r, LN_VERDICT_NODE, d->stage, i, LN_NO_NODE,
						     "'%s' failed %s with all %zu partners and "
						     "with known-good peer '%s'", r->nodes[i],
						     stage, ns[i].tested, r->nodes[ns[i].peer]);
			d->stats->bad_nodes++;
		} else if (ns[i].bad) {
			ret = ln_results_add_verdict(r, LN_VERDICT_NODE, d->stage, i, LN_NO_NODE,
						     "'%s' failed %s with all %zu partners (not "
						     "retested)", r->nodes[i], stage, ns[i].tested);
			d->stats->bad_nodes++;
		} else if (ns[i].unknown) {
			ret = ln_results_add_verdict(r, LN_VERDICT_UNDETERMINED, d->stage, i,
						     LN_NO_NODE, "'%s' failed %s with all %zu "
						     "partners, and %s: a bad node or bad links",
						     r->nodes[i], stage, ns[i].tested,
						     d->ngood ? "it was not retested" :
						     "no node passed to retest it against");
			d->stats->undetermined++;
		} else {
			continue;
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Verdicts on the retested links, in check order. */
static int link_verdicts(struct diag *d)
{
	const struct node_state *ns = d->ns;
	struct ln_results *r = d->r;
	const char *stage = ln_stage_name(d->stage);
	size_t i;
	int ret;

	for (i = 0; i < d->lc.npairs; i++) {
		struct ln_check *c = &r->checks[d->lc.check_of[i]];
		int a_ok = ns[c->a].passed || ns[c->a].retest == 1;
		int b_ok = ns[c->b].passed || ns[c->b].retest == 1;

		if (c->status == LN_ST_PASS) {
			d->stats->passed_on_retry++;
			ret = ln_check_set(c, LN_ST_PASS, "passed on retry; attempt 1 failed: %s",
					   c->attempts[0].detail ? c->attempts[0].detail :
					   "failed");
		} else if (a_ok && b_ok) {
			d->stats->bad_links++;
			ret = ln_results_add_verdict(r, LN_VERDICT_LINK, d->stage, c->a, c->b,
						     "'%s'-'%s' failed %s %s while both ends pass "
						     "with other nodes: %s", r->nodes[c->a],
						     r->nodes[c->b], stage,
						     d->run_round ? "twice" : "once",
						     c->reason ? c->reason : "failed");
		} else {
			size_t lone = a_ok ? c->b : c->a;

			d->stats->undetermined++;
			ret = ln_results_add_verdict(r, LN_VERDICT_UNDETERMINED, d->stage, c->a,
						     c->b, "'%s'-'%s' failed %s and '%s' passed "
						     "with no other node: the link or '%s' is bad",
						     r->nodes[c->a], r->nodes[c->b], stage,
						     r->nodes[lone], r->nodes[lone]);
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

int ln_diagnose_stage(struct ln_results *r, enum ln_stage stage, ln_round_fn run_round,
		      void *ctx, struct ln_diag_stats *stats, struct ln_buf *err)
{
	struct ln_diag_stats local = { 0 };
	struct ln_schedule s = LN_SCHEDULE_INIT;
	size_t nchecks_before = r->nchecks, n = r->nnodes;
	struct diag d = { .r = r, .stage = stage, .n = n, .run_round = run_round, .ctx = ctx,
			  .stats = stats ? stats : &local, .err = err, .s = &s };
	int ret;

	memset(d.stats, 0, sizeof(*d.stats));
	d.ns = calloc(n ? n : 1, sizeof(*d.ns));
	d.good = calloc(n ? n : 1, sizeof(*d.good));
	if (!d.ns || !d.good)
		goto nomem;
	count_nodes(&d);
	ret = retest_nodes(&d);
	if (ret == 0)
		ret = retest_links(&d, nchecks_before);
	if (ret < 0)
		goto out;
	if (node_verdicts(&d) < 0 || link_verdicts(&d) < 0)
		goto nomem;
	ret = 0;
	goto out;
nomem:
	ret = -ENOMEM;
	ln_buf_addstr(err, "cannot diagnose: out of memory");
out:
	ln_schedule_release(&s);
	free(d.lc.pairs);
	free(d.lc.check_of);
	free(d.adj);
	free(d.adj_off);
	free(d.good);
	free(d.ns);
	return ret;
}

int ln_diagnose_nodes(struct ln_results *r, struct ln_buf *err)
{
	size_t i, j;
	int ret;

	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i];
		enum ln_verdict_kind kind;
		int dup = 0;

		if (ln_stage_pairwise(c->stage) ||
		    (c->status != LN_ST_FAIL && c->status != LN_ST_NOT_RUN))
			continue;
		if (c->a == LN_NO_NODE)
			kind = LN_VERDICT_CLUSTER;
		else if (c->b == LN_NO_NODE)
			kind = LN_VERDICT_NODE;
		else
			kind = LN_VERDICT_LINK;
		/* one verdict per subject and stage; the first reason wins */
		for (j = 0; j < r->nverdicts && !dup; j++)
			dup = r->verdicts[j].kind == kind && r->verdicts[j].stage == c->stage &&
			      r->verdicts[j].a == c->a && r->verdicts[j].b == c->b;
		if (dup)
			continue;
		ret = ln_results_add_verdict(r, kind, c->stage, c->a, c->b, "%s: %s", c->name,
					     c->reason ? c->reason : ln_status_name(c->status));
		if (ret < 0) {
			ln_buf_addstr(err, "cannot record a verdict: out of memory");
			return ret;
		}
	}
	return 0;
}
