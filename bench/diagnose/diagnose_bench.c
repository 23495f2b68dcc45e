/* SPDX-License-Identifier: MIT */
/*
 * Diagnosis benchmark: plan the pair schedule for a simulated 1,024-node
 * cluster, "run" every round against injected bad nodes and bad links,
 * diagnose (with the second pass against known-good peers), check that
 * exactly the injected culprits are named, and print the time and the
 * rounds next to the naive count of sequential pair tests.
 *
 *   build/bench/diagnose_bench [NODES]
 *
 * Exit 0 only when every scenario named exactly its culprits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "orchestrator/validate/diagnose.h"

struct sim {
	unsigned char *bad_node;
	size_t (*bad_links)[2];
	size_t nlinks;
	size_t tests;
};

static int bad_link(const struct sim *s, size_t a, size_t b)
{
	size_t i;

	for (i = 0; i < s->nlinks; i++)
		if ((s->bad_links[i][0] == a && s->bad_links[i][1] == b) ||
		    (s->bad_links[i][0] == b && s->bad_links[i][1] == a))
			return 1;
	return 0;
}

static int sim_round(void *ctx, enum ln_stage st, const struct ln_pair *p, size_t n,
		     struct ln_attempt *out)
{
	struct sim *s = ctx;
	size_t i;

	(void)st;
	for (i = 0; i < n; i++) {
		out[i].ok = !s->bad_node[p[i].a] && !s->bad_node[p[i].b] &&
			    !bad_link(s, p[i].a, p[i].b);
		out[i].value = out[i].ok ? 1.0 : NAN;
		out[i].detail = out[i].ok ? NULL : strdup("unreachable");
	}
	s->tests += n;
	return 0;
}

/* One scenario; returns 0 when the verdicts are exactly the injection. */
static int scenario(const char *title, size_t n, enum ln_pairing kind, const size_t *bn,
		    size_t nbn, size_t (*bl)[2], size_t nbl)
{
	struct sim s = { calloc(n, 1), bl, nbl, 0 };
	struct ln_schedule sch = LN_SCHEDULE_INIT;
	struct ln_buf err = LN_BUF_INIT;
	struct ln_results r;
	struct ln_diag_stats st;
	const char **names = calloc(n, sizeof(*names));
	char (*buf)[24] = calloc(n, 24);
	size_t i, rd, first_pass, rounds1, want_nodes = 0, want_links = 0, got_nodes = 0,
		      got_links = 0, wrong = 0;
	double t0, t_sched, t_all;
	int ok;

	if (!s.bad_node || !names || !buf)
		return 1;
	for (i = 0; i < n; i++) {
		snprintf(buf[i], 24, "gpu%04zu", i + 1);
		names[i] = buf[i];
	}
	for (i = 0; i < nbn; i++)
		s.bad_node[bn[i]] = 1;
	if (ln_results_init(&r, "sim", names, n) < 0)
		return 1;
	t0 = ln_now_s();
	if (ln_pairing_build(kind, n, &sch, &err) < 0)
		return 1;
	t_sched = ln_now_s() - t0;
	for (rd = 0; rd < sch.nrounds; rd++) {
		struct ln_round *round = &sch.rounds[rd];
		struct ln_attempt *out = calloc(round->npairs, sizeof(*out));

		sim_round(&s, LN_STAGE_RPING, round->pairs, round->npairs, out);
		for (i = 0; i < round->npairs; i++) {
			long k = ln_results_add_check(&r, LN_STAGE_RPING, round->pairs[i].a,
						      round->pairs[i].b, "rping");

			ln_check_add_attempt(&r.checks[k], &out[i]);
			free(out[i].detail);
		}
		free(out);
	}
	first_pass = s.tests;
	rounds1 = sch.nrounds;
	if (ln_diagnose_stage(&r, LN_STAGE_RPING, sim_round, &s, &st, &err) < 0) {
		fprintf(stderr, "%s\n", err.buf);
		return 1;
	}
	t_all = ln_now_s() - t0;
	for (i = 0; i < r.nverdicts; i++) {
		const struct ln_verdict *v = &r.verdicts[i];

		if (v->kind == LN_VERDICT_NODE && s.bad_node[v->a])
			got_nodes++;
		else if (v->kind == LN_VERDICT_LINK && !s.bad_node[v->a] && !s.bad_node[v->b] &&
			 bad_link(&s, v->a, v->b))
			got_links++;
		else
			wrong++;
	}
	want_nodes = nbn;
	/* a bad link that touches a bad node is hidden by it, and a ring
	 * only tests ring links */
	for (i = 0; i < nbl; i++) {
		size_t a = bl[i][0], b = bl[i][1];
		int tested = kind == LN_PAIRING_ALL || (a + 1) % n == b || (b + 1) % n == a;

		want_links += tested && !s.bad_node[a] && !s.bad_node[b];
	}
	ok = got_nodes == want_nodes && got_links == want_links && !wrong;
	printf("| %s | %zu | %s | %zu + %zu | %zu + %zu | %zu | %.1f | %.1f | %zu/%zu nodes, %zu/%zu links, "
	       "%zu wrong: %s |\n",
	       title, n, ln_pairing_name(kind), rounds1, st.retest_rounds, first_pass,
	       st.retests, first_pass + st.retests, t_sched * 1e3, t_all * 1e3, got_nodes,
	       want_nodes, got_links, want_links, wrong, ok ? "exact" : "WRONG");
	ln_schedule_release(&sch);
	ln_results_release(&r);
	ln_buf_release(&err);
	free(s.bad_node);
	free(names);
	free(buf);
	return !ok;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
	/* bad nodes: isolated, two adjacent, one at the ring's wrap */
	size_t bn[] = { 17, 300, 301, 777, n - 1 };
	/* bad links on ring edges, two sharing a node, plus off-ring ones
	 * that only all-pairs can see, and one hidden behind a bad node */
	size_t bl[][2] = { { 100, 101 }, { 512, 513 }, { 513, 514 }, { 900, 901 },
			   { 5, 600 }, { 42, 44 }, { 17, 18 } };
	int fails = 0;

	if (n < 1000) {
		fprintf(stderr, "usage: diagnose_bench [NODES >= 1000]\n");
		return 64;
	}
	printf("| scenario | nodes | pairs | rounds (first + retest) | pair tests (first + retest) | "
	       "naive sequential steps (one pair at a time) | schedule ms | schedule+diagnosis ms | named |\n"
	       "|---|---|---|---|---|---|---|---|---|\n");
	fails += scenario("healthy", n, LN_PAIRING_RING, NULL, 0, NULL, 0);
	fails += scenario("5 bad nodes + 7 bad links", n, LN_PAIRING_RING, bn, 5, bl, 7);
	fails += scenario("5 bad nodes + 7 bad links", n, LN_PAIRING_ALL, bn, 5, bl, 7);
	fails += scenario("bad links only", n, LN_PAIRING_ALL, NULL, 0, bl, 7);
	return fails ? 1 : 0;
}
