/* SPDX-License-Identifier: MIT */
/*
 * Bad node / bad link diagnosis with a second pass against known-good
 * peers (see diagnose.h for the rules). The work is linear in the number
 * of pair checks plus the retests, so a 1,024-node all-pairs run (523,776
 * pairs) is diagnosed in well under a second.
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
				    strerror(-ret > 0 && -ret < 1000 ? -ret : EIO));
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

int ln_diagnose_stage(struct ln_results *r, enum ln_stage stage, ln_round_fn run_round,
		      void *ctx, struct ln_diag_stats *stats, struct ln_buf *err)
{
	struct ln_diag_stats local;
	struct node_state *ns = NULL;
	size_t *good = NULL, *partner_mark = NULL, ngood = 0, nsus = 0, n = r->nnodes, i, k;
	size_t nchecks_before = r->nchecks;
	struct ln_pair *pairs = NULL;
	struct link_ctx lc = { NULL, NULL, 0 };
	struct ln_schedule s = LN_SCHEDULE_INIT;
	size_t np = 0;
	int ret = -ENOMEM;

	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	ns = calloc(n ? n : 1, sizeof(*ns));
	good = calloc(n ? n : 1, sizeof(*good));
	partner_mark = calloc(n ? n : 1, sizeof(*partner_mark));
	pairs = calloc(n ? n : 1, sizeof(*pairs));
	if (!ns || !good || !partner_mark || !pairs)
		goto nomem;
	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i];

		if (!counts_as_tested(c, stage, n))
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
	for (i = 0; i < n; i++) {
		ns[i].retest = -1;
		ns[i].peer = LN_NO_NODE;
		if (ns[i].passed)
			good[ngood++] = i;
		if (ns[i].tested && ns[i].failed == ns[i].tested) {
			ns[i].suspect = 1;
			stats->suspect_nodes++;
		}
	}

	/* Second pass, nodes: each suspect with a known-good peer it has not
	 * been paired with yet (a fresh witness), spread over the good nodes
	 * by the suspect's ordinal so that retests fill few rounds. */
	for (i = 0; i < n; i++) {
		size_t pick = LN_NO_NODE;

		if (!ns[i].suspect)
			continue;
		if (!ngood || !run_round) {
			/* Without a second pass, one failed partner cannot tell
			 * the node from the link; two or more can. */
			ns[i].bad = ngood && ns[i].tested >= 2;
			ns[i].unknown = !ns[i].bad;
			nsus++;
			continue;
		}
		for (k = 0; k < r->nchecks; k++) {
			const struct ln_check *c = &r->checks[k];

			if (counts_as_tested(c, stage, n) && (c->a == i || c->b == i))
				partner_mark[c->a == i ? c->b : c->a] = i + 1;
		}
		for (k = 0; k < ngood; k++) {
			size_t g = good[(nsus + k) % ngood];

			if (partner_mark[g] != i + 1) {
				pick = g;
				break;
			}
		}
		if (pick == LN_NO_NODE)
			pick = good[nsus % ngood];
		pairs[np].a = pick;
		pairs[np].b = i;
		np++;
		nsus++;
	}
	if (np) {
		ret = ln_pairing_pack(pairs, np, n, &s, err);
		if (ret < 0)
			goto out;
		ret = run_schedule(r, stage, &s, run_round, ctx, node_retest_done, ns, stats, err);
		if (ret < 0)
			goto out;
	}
	for (i = 0; i < n; i++)
		if (ns[i].suspect && ns[i].retest == 0)
			ns[i].bad = 1;

	/* Second pass, links: every failed pair whose ends are not bad (or
	 * unknown) nodes runs again as it was. */
	free(pairs);
	pairs = NULL;
	np = 0;
	for (i = 0; i < nchecks_before; i++) {
		const struct ln_check *c = &r->checks[i];

		if (counts_as_tested(c, stage, n) && c->status == LN_ST_FAIL &&
		    !ns[c->a].bad && !ns[c->b].bad && !ns[c->a].unknown && !ns[c->b].unknown)
			np++;
	}
	if (np) {
		lc.pairs = calloc(np, sizeof(*lc.pairs));
		lc.check_of = calloc(np, sizeof(*lc.check_of));
		if (!lc.pairs || !lc.check_of)
			goto nomem;
		for (i = 0; i < nchecks_before; i++) {
			const struct ln_check *c = &r->checks[i];

			if (counts_as_tested(c, stage, n) && c->status == LN_ST_FAIL &&
			    !ns[c->a].bad && !ns[c->b].bad && !ns[c->a].unknown &&
			    !ns[c->b].unknown) {
				lc.pairs[lc.npairs].a = c->a;
				lc.pairs[lc.npairs].b = c->b;
				lc.check_of[lc.npairs++] = i;
			}
		}
		stats->suspect_links = lc.npairs;
		if (run_round) {
			ret = ln_pairing_pack(lc.pairs, lc.npairs, n, &s, err);
			if (ret < 0)
				goto out;
			ret = run_schedule(r, stage, &s, run_round, ctx, link_retest_done, &lc,
					   stats, err);
			if (ret < 0)
				goto out;
		}
	}

	/* Verdicts, in node order then check order. */
	for (i = 0; i < n; i++) {
		if (ns[i].bad && ns[i].peer != LN_NO_NODE) {
			ret = ln_results_add_verdict(r, LN_VERDICT_NODE, stage, i, LN_NO_NODE,
						     "'%s' failed %s with all %zu partners and with "
						     "known-good peer '%s'",
						     r->nodes[i], ln_stage_name(stage),
						     ns[i].tested, r->nodes[ns[i].peer]);
			stats->bad_nodes++;
		} else if (ns[i].bad) {
			ret = ln_results_add_verdict(r, LN_VERDICT_NODE, stage, i, LN_NO_NODE,
						     "'%s' failed %s with all %zu partners (not "
						     "retested)",
						     r->nodes[i], ln_stage_name(stage), ns[i].tested);
			stats->bad_nodes++;
		} else if (ns[i].unknown) {
			ret = ln_results_add_verdict(r, LN_VERDICT_UNDETERMINED, stage, i,
						     LN_NO_NODE,
						     "'%s' failed %s with all %zu partners, and %s: a "
						     "bad node or bad links",
						     r->nodes[i], ln_stage_name(stage), ns[i].tested,
						     ngood ? "it was not retested" :
						     "no node passed to retest it against");
			stats->undetermined++;
		} else {
			continue;
		}
		if (ret < 0)
			goto nomem;
	}
	for (i = 0; i < lc.npairs; i++) {
		struct ln_check *c = &r->checks[lc.check_of[i]];
		int a_ok = ns[c->a].passed || ns[c->a].retest == 1;
		int b_ok = ns[c->b].passed || ns[c->b].retest == 1;

		if (c->status == LN_ST_PASS) {
			stats->passed_on_retry++;
			ret = ln_check_set(c, LN_ST_PASS, "passed on retry; attempt 1 failed: %s",
					   c->attempts[0].detail ? c->attempts[0].detail : "failed");
		} else if (a_ok && b_ok) {
			stats->bad_links++;
			ret = ln_results_add_verdict(r, LN_VERDICT_LINK, stage, c->a, c->b,
						     "'%s'-'%s' failed %s %s while both ends pass "
						     "with other nodes: %s",
						     r->nodes[c->a], r->nodes[c->b],
						     ln_stage_name(stage),
						     run_round ? "twice" : "once",
						     c->reason ? c->reason : "failed");
		} else {
			size_t lone = a_ok ? c->b : c->a;

			stats->undetermined++;
			ret = ln_results_add_verdict(r, LN_VERDICT_UNDETERMINED, stage, c->a, c->b,
						     "'%s'-'%s' failed %s and '%s' passed with no "
						     "other node: the link or '%s' is bad",
						     r->nodes[c->a], r->nodes[c->b],
						     ln_stage_name(stage), r->nodes[lone],
						     r->nodes[lone]);
		}
		if (ret < 0)
			goto nomem;
	}
	ret = 0;
	goto out;
nomem:
	ret = -ENOMEM;
	ln_buf_addstr(err, "cannot diagnose: out of memory");
out:
	ln_schedule_release(&s);
	free(lc.pairs);
	free(lc.check_of);
	free(pairs);
	free(partner_mark);
	free(good);
	free(ns);
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
