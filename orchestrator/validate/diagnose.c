/* SPDX-License-Identifier: MIT */
/*
 * Bad node / bad port / bad link diagnosis with a second pass against
 * known-good peers (see diagnose.h for the rules). The diagnosis works on
 * ports ("units": node i's port p is unit i * stride + p; without port
 * names, stride 1 and a unit is a node): a unit that fails with every
 * partner is a suspect, retested against a known-good unit of its rail on
 * another node; a node whose every tested unit is bad is a bad node, a bad
 * unit of a node whose other rails pass is a bad port. The work is linear in the number
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
#include "orchestrator/validate/storage_path.h"

struct unit_state {
	size_t tested, failed, passed;
	int suspect;		/* failed with every partner */
	int retest;		/* -1 not retested, 0 failed, 1 passed */
	int bad;		/* confirmed bad node */
	int unknown;		/* suspect that could not be retested */
	size_t peer;		/* the known-good peer of its retest */
	int own_fault;		/* its own tool did not run in some pair */
	int own_fault_failed;	/* ... in a pair that failed: a verdict; one
				 * that passed on a later try is no witness,
				 * but is not named either */
};

static int counts_as_tested(const struct ln_check *c, enum ln_stage stage, size_t n)
{
	return c->stage == stage && !c->retest && c->a < n && c->b < n &&
	       (c->status == LN_ST_PASS || c->status == LN_ST_FAIL);
}

/* The unit of node's port (a check or pair without ports: port 0). */
static size_t unit(const struct ln_results *r, size_t node, int port)
{
	size_t stride = r->port_stride ? r->port_stride : 1;

	return node * stride + (port > 0 && (size_t)port < stride ? (size_t)port : 0);
}

static size_t unit_node(const struct ln_results *r, size_t u)
{
	return u / (r->port_stride ? r->port_stride : 1);
}

static int unit_port(const struct ln_results *r, size_t u)
{
	return r->port_stride ? (int)(u % r->port_stride) : -1;
}

/* "lab2/rxe1" (or "lab2" without port names) into out, reset first. */
static const char *unit_name(const struct ln_results *r, size_t u, struct ln_buf *out)
{
	ln_buf_reset(out);
	ln_results_subject_ports(r, unit_node(r, u), unit_port(r, u), LN_NO_NODE, -1, out);
	return out->buf;
}

static int same_rail(const struct ln_results *r, size_t u, size_t v)
{
	const char *a = ln_results_rail(r, unit_node(r, u), unit_port(r, u));
	const char *b = ln_results_rail(r, unit_node(r, v), unit_port(r, v));

	return (!a && !b) || (a && b && !strcmp(a, b));
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
		for (i = 0; i < round->npairs; i++) {
			out[i].value = NAN;
			ln_latency_init(&out[i].lat);
		}
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
	struct unit_state *ns = dctx;
	long idx = ln_results_add_check(r, stage, p->a, p->b, "retest against a known-good peer");
	size_t u = unit(r, p->b, (int)p->pb);
	int ret;

	if (idx < 0)
		return (int)idx;
	r->checks[idx].retest = 1;
	if (r->port_stride) {
		r->checks[idx].pa = (int)p->pa;
		r->checks[idx].pb = (int)p->pb;
	}
	ret = ln_check_add_attempt(&r->checks[idx], at);
	if (ret < 0)
		return ret;
	ns[u].retest = at->ok ? 1 : 0;
	ns[u].peer = unit(r, p->a, (int)p->pa);
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
		if (lc->pairs[i].a == p->a && lc->pairs[i].b == p->b &&
		    lc->pairs[i].pa == p->pa && lc->pairs[i].pb == p->pb)
			return ln_check_add_attempt(&r->checks[lc->check_of[i]], at);
	return -EINVAL;
}

/* One stage's diagnosis in progress. */
struct diag {
	struct ln_results *r;
	enum ln_stage stage;
	size_t n;			/* nodes */
	size_t nu;			/* units: ports of nodes */
	struct unit_state *ns;		/* per unit */
	size_t *good, ngood;		/* units that passed a pair, in order */
	size_t *adj, *adj_off;		/* unit i's tested partners: adj[adj_off[i]..adj_off[i+1]) */
	struct ln_buf name;		/* scratch for unit names */
	ln_round_fn run_round;
	void *ctx;
	struct ln_diag_stats *stats;
	struct ln_buf *err;
	struct ln_schedule *s;		/* retest rounds: ln_diagnose_stage's local */
	struct link_ctx lc;
};

/* First pass over the checks: per unit, pairs tested, failed, passed;
 * the known-good units and the suspects. */
static void count_nodes(struct diag *d)
{
	struct unit_state *ns = d->ns;
	size_t i;

	for (i = 0; i < d->r->nchecks; i++) {
		const struct ln_check *c = &d->r->checks[i];
		size_t ua = unit(d->r, c->a, c->pa), ub = unit(d->r, c->b, c->pb);

		if (!counts_as_tested(c, d->stage, d->n))
			continue;
		ns[ua].tested++;
		ns[ub].tested++;
		ns[ua].own_fault |= (c->own_fault & LN_END_A) != 0;
		ns[ub].own_fault |= (c->own_fault & LN_END_B) != 0;
		if (c->status == LN_ST_FAIL) {
			ns[ua].own_fault_failed |= (c->own_fault & LN_END_A) != 0;
			ns[ub].own_fault_failed |= (c->own_fault & LN_END_B) != 0;
			ns[ua].failed++;
			ns[ub].failed++;
		} else {
			ns[ua].passed++;
			ns[ub].passed++;
		}
	}
	for (i = 0; i < d->nu; i++) {
		ns[i].retest = -1;
		ns[i].peer = LN_NO_NODE;
		/* a unit whose own tool did not run passed only on its
		 * peers' word: never a witness for another's verdict */
		if (ns[i].passed && !ns[i].own_fault)
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

	d->adj_off = calloc(d->nu + 1, sizeof(*d->adj_off));
	fill = calloc(d->nu ? d->nu : 1, sizeof(*fill));
	if (!d->adj_off || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (i = 0; i < d->nu; i++)
		d->adj_off[i + 1] = d->adj_off[i] + d->ns[i].tested;
	d->adj = calloc(d->adj_off[d->nu] ? d->adj_off[d->nu] : 1, sizeof(*d->adj));
	if (!d->adj) {
		free(fill);
		return -ENOMEM;
	}
	for (i = 0; i < d->r->nchecks; i++) {
		const struct ln_check *c = &d->r->checks[i];
		size_t ua = unit(d->r, c->a, c->pa), ub = unit(d->r, c->b, c->pb);

		if (!counts_as_tested(c, d->stage, d->n))
			continue;
		d->adj[d->adj_off[ua] + fill[ua]++] = ub;
		d->adj[d->adj_off[ub] + fill[ub]++] = ua;
	}
	free(fill);
	return 0;
}

/* A known-good unit of u's rail on another node for u's retest: one it
 * has not been paired with yet (a fresh witness) when there is one,
 * spread over the good units by the suspect's ordinal so that retests
 * fill few rounds. LN_NO_NODE when its rail has none. */
static size_t pick_peer(struct diag *d, size_t u, size_t ordinal, const size_t *partner_mark)
{
	size_t k, any = LN_NO_NODE;

	for (k = 0; k < d->ngood; k++) {
		size_t g = d->good[(ordinal + k) % d->ngood];

		if (unit_node(d->r, g) == unit_node(d->r, u) || !same_rail(d->r, g, u))
			continue;
		if (partner_mark[g] != u + 1)
			return g;
		if (any == LN_NO_NODE)
			any = g;
	}
	return any;
}

/* Second pass, units (returns 0 or a negative code with err set, as
 * retest_links does): each suspect against a known-good unit. */
static int retest_nodes(struct diag *d)
{
	struct unit_state *ns = d->ns;
	struct ln_pair *pairs = calloc(d->nu ? d->nu : 1, sizeof(*pairs));
	size_t *partner_mark = calloc(d->nu ? d->nu : 1, sizeof(*partner_mark));
	size_t i, k, np = 0, nsus = 0;
	int ret = -ENOMEM;

	if (!pairs || !partner_mark || (d->ngood && d->run_round && build_partners(d) < 0)) {
		ln_buf_addstr(d->err, "cannot diagnose: out of memory");
		goto out;
	}
	for (i = 0; i < d->nu; i++) {
		size_t pick;

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
		pick = pick_peer(d, i, nsus, partner_mark);
		nsus++;
		if (pick == LN_NO_NODE) {
			ns[i].unknown = 1;
			continue;
		}
		pairs[np].a = unit_node(d->r, pick);
		pairs[np].pa = (unsigned)(unit_port(d->r, pick) > 0 ? unit_port(d->r, pick) : 0);
		pairs[np].b = unit_node(d->r, i);
		pairs[np].pb = (unsigned)(unit_port(d->r, i) > 0 ? unit_port(d->r, i) : 0);
		np++;
	}
	ret = 0;
	if (np) {
		ret = ln_pairing_pack(pairs, np, d->n, d->s, d->err);
		if (ret == 0)
			ret = run_schedule(d->r, d->stage, d->s, d->run_round, d->ctx,
					   node_retest_done, ns, d->stats, d->err);
	}
	for (i = 0; i < d->nu && ret == 0; i++)
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
	const struct unit_state *ns = d->ns;
	size_t ua, ub;

	if (!counts_as_tested(c, d->stage, d->n) || c->status != LN_ST_FAIL)
		return 0;
	ua = unit(d->r, c->a, c->pa);
	ub = unit(d->r, c->b, c->pb);
	return !ns[ua].bad && !ns[ub].bad && !ns[ua].unknown && !ns[ub].unknown &&
	       !(c->own_fault & LN_END_A && ns[ua].own_fault) &&
	       !(c->own_fault & LN_END_B && ns[ub].own_fault);
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
			lc->pairs[lc->npairs].pa = (unsigned)(c->pa > 0 ? c->pa : 0);
			lc->pairs[lc->npairs].pb = (unsigned)(c->pb > 0 ? c->pb : 0);
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

/* Whether every tested unit of node is bad (and it has one): a bad node. */
static int node_all_bad(const struct diag *d, size_t node, size_t *units)
{
	size_t stride = d->nu / (d->n ? d->n : 1), p, tested = 0;

	for (p = 0; p < stride; p++) {
		const struct unit_state *u = &d->ns[node * stride + p];

		if (!u->tested)
			continue;
		if (!u->bad)
			return 0;
		tested++;
	}
	*units = tested;
	return tested > 0;
}

/* A bad node: every tested port failed with every partner. */
static int bad_node_verdict(struct diag *d, size_t node, size_t nunits)
{
	struct ln_results *r = d->r;
	size_t stride = d->nu / (d->n ? d->n : 1), p, u = node * stride, tested = 0;
	int retested = 1;

	for (p = 0; p < stride; p++)
		if (d->ns[node * stride + p].tested) {
			tested += d->ns[node * stride + p].tested;
			retested &= d->ns[node * stride + p].peer != LN_NO_NODE;
			if (!d->ns[u].tested)
				u = node * stride + p;
		}
	d->stats->bad_nodes++;
	if (nunits > 1)
		return ln_results_add_verdict(r, LN_VERDICT_NODE, d->stage, node, LN_NO_NODE,
					      "'%s' failed %s on all %zu rails with all %zu "
					      "partners%s", r->nodes[node], ln_stage_name(d->stage),
					      nunits, tested, retested ?
					      " and with known-good peers" : " (not retested)");
	if (d->ns[u].peer != LN_NO_NODE)
		return ln_results_add_verdict(r, LN_VERDICT_NODE, d->stage, node, LN_NO_NODE,
					      "'%s' failed %s with all %zu partners and with "
					      "known-good peer '%s'", r->nodes[node],
					      ln_stage_name(d->stage), tested,
					      r->nodes[unit_node(r, d->ns[u].peer)]);
	return ln_results_add_verdict(r, LN_VERDICT_NODE, d->stage, node, LN_NO_NODE,
				      "'%s' failed %s with all %zu partners (not retested)",
				      r->nodes[node], ln_stage_name(d->stage), tested);
}

/* Whether a unit of unit i's node before i has its own fault (one
 * verdict per node). */
static int own_fault_before(const struct diag *d, size_t i)
{
	size_t stride = d->nu / (d->n ? d->n : 1), p;

	for (p = unit_node(d->r, i) * stride; p < i; p++)
		if (d->ns[p].own_fault_failed)
			return 1;
	return 0;
}

/* Verdicts on nodes and ports, in node order. */
static int node_verdicts(struct diag *d)
{
	const struct unit_state *ns = d->ns;
	struct ln_results *r = d->r;
	const char *stage = ln_stage_name(d->stage);
	struct ln_buf peer = LN_BUF_INIT;
	size_t i, nunits;
	int ret = 0;

	for (i = 0; i < d->nu && ret == 0; i++) {
		size_t node = unit_node(r, i);
		int port = unit_port(r, i);

		if (ns[i].bad && node_all_bad(d, node, &nunits)) {
			/* one verdict per node, at its first tested unit */
			size_t p, earlier = 0;

			for (p = node * (d->nu / d->n); p < i; p++)
				earlier |= ns[p].tested != 0;
			if (!earlier)
				ret = bad_node_verdict(d, node, nunits);
		} else if (ns[i].bad) {
			d->stats->bad_ports++;
			if (ns[i].peer != LN_NO_NODE)
				unit_name(r, ns[i].peer, &peer);
			ret = ln_results_add_port_verdict(r, LN_VERDICT_PORT, d->stage, node, port,
							  LN_NO_NODE, -1,
							  "'%s' failed %s with all %zu partners "
							  "on rail %s%s%s%s while the node's other "
							  "rails pass", unit_name(r, i, &d->name),
							  stage, ns[i].tested,
							  ln_results_rail(r, node, port),
							  ns[i].peer != LN_NO_NODE ?
							  " and with known-good peer '" : "",
							  ns[i].peer != LN_NO_NODE ? peer.buf : "",
							  ns[i].peer != LN_NO_NODE ? "'" : "");
		} else if (ns[i].own_fault_failed && !own_fault_before(d, i)) {
			ret = ln_results_add_verdict(r, LN_VERDICT_NODE, d->stage, node, LN_NO_NODE,
						     "'%s' could not run its own end of %s",
						     r->nodes[node], stage);
		} else if (ns[i].unknown) {
			ret = ln_results_add_port_verdict(r, LN_VERDICT_UNDETERMINED, d->stage, node,
							  port, LN_NO_NODE, -1,
							  "'%s' failed %s with all %zu partners, and "
							  "%s: a bad %s or bad links",
							  unit_name(r, i, &d->name), stage,
							  ns[i].tested, d->ngood ?
							  "it was not retested" :
							  "no node passed to retest it against",
							  port >= 0 && ln_results_port(r, node, port) ?
							  "port" : "node");
			d->stats->undetermined++;
		}
	}
	ln_buf_release(&peer);
	return ret;
}

/* Verdicts on the retested links, in check order. */
static int link_verdicts(struct diag *d)
{
	const struct unit_state *ns = d->ns;
	struct ln_buf ends = LN_BUF_INIT, lone = LN_BUF_INIT;	/* the a and b ends */
	struct ln_results *r = d->r;
	const char *stage = ln_stage_name(d->stage);
	size_t i;
	int ret = 0;

	for (i = 0; i < d->lc.npairs; i++) {
		struct ln_check *c = &r->checks[d->lc.check_of[i]];
		size_t ua = unit(r, c->a, c->pa), ub = unit(r, c->b, c->pb);
		int a_ok = ns[ua].passed || ns[ua].retest == 1;
		int b_ok = ns[ub].passed || ns[ub].retest == 1;

		if (c->status == LN_ST_PASS) {
			d->stats->passed_on_retry++;
			ret = ln_check_set(c, LN_ST_PASS, "passed on retry; attempt 1 failed: %s",
					   c->attempts[0].detail ? c->attempts[0].detail :
					   "failed");
		} else if (a_ok && b_ok) {
			d->stats->bad_links++;
			unit_name(r, ua, &ends);
			unit_name(r, ub, &lone);
			ret = ln_results_add_port_verdict(r, LN_VERDICT_LINK, d->stage, c->a, c->pa,
							  c->b, c->pb, "'%s'-'%s' failed %s %s while "
							  "both ends pass with other nodes: %s",
							  ends.buf, lone.buf, stage,
							  d->run_round ? "twice" : "once",
							  c->reason ? c->reason : "failed");
		} else {
			const char *la;

			d->stats->undetermined++;
			unit_name(r, ua, &ends);
			unit_name(r, ub, &lone);
			la = a_ok ? lone.buf : ends.buf;
			ret = ln_results_add_port_verdict(r, LN_VERDICT_UNDETERMINED, d->stage, c->a,
							  c->pa, c->b, c->pb, "'%s'-'%s' failed %s "
							  "and '%s' passed with no other node: the "
							  "link or '%s' is bad", ends.buf, lone.buf,
							  stage, la, la);
		}
		if (ret < 0)
			break;
	}
	ln_buf_release(&ends);
	ln_buf_release(&lone);
	return ret < 0 ? ret : 0;
}

int ln_diagnose_stage(struct ln_results *r, enum ln_stage stage, ln_round_fn run_round,
		      void *ctx, struct ln_diag_stats *stats, struct ln_buf *err)
{
	struct ln_diag_stats local = { 0 };
	struct ln_schedule s = LN_SCHEDULE_INIT;
	size_t nchecks_before = r->nchecks, n = r->nnodes;
	size_t nu = n * (r->port_stride ? r->port_stride : 1);
	struct diag d = { .r = r, .stage = stage, .n = n, .nu = nu, .run_round = run_round,
			  .ctx = ctx, .stats = stats ? stats : &local, .err = err,
			  .s = &s, .name = LN_BUF_INIT };
	int ret;

	memset(d.stats, 0, sizeof(*d.stats));
	d.ns = calloc(nu ? nu : 1, sizeof(*d.ns));
	d.good = calloc(nu ? nu : 1, sizeof(*d.good));
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
	ln_buf_release(&d.name);
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

		/* the access stage blames targets itself (stage_access.c) */
		if (ln_stage_pairwise(c->stage) || c->stage == LN_STAGE_ACCESS ||
		    (c->status != LN_ST_FAIL && c->status != LN_ST_NOT_RUN))
			continue;
		ret = c->status == LN_ST_FAIL ? ln_storage_path_verdict(r, c) : 0;
		if (ret < 0) {
			ln_buf_addstr(err, "cannot record a verdict: out of memory");
			return ret;
		}
		if (ret)
			continue;	/* its path was named, not its node */
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
