/* SPDX-License-Identifier: MIT */
/*
 * Diagnosis on simulated clusters: a fake round runner decides each pair
 * from injected bad nodes, bad links and flaky links, and the tests check
 * that exactly the injected culprits are named, that retests are recorded
 * as attempts, that ambiguous cases stay "undetermined", and that verdicts
 * are deterministic.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"
#include "orchestrator/validate/diagnose.h"
#include "orchestrator/report/report.h"
#include "orchestrator/validate/rails.h"

#define MAXN 64

struct sim {
	int bad_node[MAXN];
	int bad_link[MAXN][MAXN];
	int flaky[MAXN][MAXN];	/* fails this many more times, then passes */
	size_t calls;
};

static int sim_ok(struct sim *s, size_t a, size_t b)
{
	if (s->bad_node[a] || s->bad_node[b] || s->bad_link[a][b] || s->bad_link[b][a])
		return 0;
	if (s->flaky[a][b] > 0) {
		s->flaky[a][b]--;
		return 0;
	}
	return 1;
}

static int sim_round(void *ctx, enum ln_stage stage, const struct ln_pair *pairs, size_t n,
		     struct ln_attempt *out)
{
	struct sim *s = ctx;
	size_t i;

	(void)stage;
	for (i = 0; i < n; i++) {
		out[i].ok = sim_ok(s, pairs[i].a, pairs[i].b);
		out[i].value = out[i].ok ? 10.0 : NAN;
		if (!out[i].ok)
			assert_int_not_equal(asprintf(&out[i].detail, "no route %zu-%zu",
						      pairs[i].a, pairs[i].b), -1);
		assert_int_not_equal(asprintf(&out[i].command, "rping -c -a node%zu", pairs[i].a),
				     -1);
	}
	s->calls++;
	return 0;
}

/* First pass over the schedule, then the diagnosis. */
static void run(struct ln_results *r, size_t n, enum ln_pairing kind, struct sim *s,
		struct ln_diag_stats *st)
{
	const char *names[MAXN];
	char buf[MAXN][16];
	struct ln_schedule sch = LN_SCHEDULE_INIT;
	struct ln_buf err = LN_BUF_INIT;
	size_t i, rd;

	for (i = 0; i < n; i++) {
		snprintf(buf[i], sizeof(buf[i]), "node%zu", i);
		names[i] = buf[i];
	}
	assert_int_equal(ln_results_init(r, "sim", names, n), 0);
	r->stages[LN_STAGE_RPING].listed = r->stages[LN_STAGE_RPING].ran = 1;
	assert_int_equal(ln_pairing_build(kind, n, &sch, &err), 0);
	for (rd = 0; rd < sch.nrounds; rd++) {
		struct ln_attempt out[MAXN];

		memset(out, 0, sizeof(out));
		assert_int_equal(sim_round(s, LN_STAGE_RPING, sch.rounds[rd].pairs,
					   sch.rounds[rd].npairs, out), 0);
		for (i = 0; i < sch.rounds[rd].npairs; i++) {
			long idx = ln_results_add_check(r, LN_STAGE_RPING, sch.rounds[rd].pairs[i].a,
							sch.rounds[rd].pairs[i].b, "rping");

			assert_true(idx >= 0);
			assert_int_equal(ln_check_add_attempt(&r->checks[idx], &out[i]), 0);
			free(out[i].detail);
			free(out[i].command);
		}
	}
	assert_int_equal(ln_diagnose_stage(r, LN_STAGE_RPING, sim_round, s, st, &err), 0);
	ln_results_summarize(r);
	ln_schedule_release(&sch);
	ln_buf_release(&err);
}

/* The verdicts as one sorted-by-order string: "node:3 link:1-2 ". */
static char *verdicts(const struct ln_results *r)
{
	struct ln_buf b = LN_BUF_INIT;
	size_t i;

	for (i = 0; i < r->nverdicts; i++) {
		const struct ln_verdict *v = &r->verdicts[i];

		if (v->b == LN_NO_NODE)
			ln_buf_addf(&b, "%s:%zu ", ln_verdict_kind_name(v->kind), v->a);
		else
			ln_buf_addf(&b, "%s:%zu-%zu ", ln_verdict_kind_name(v->kind), v->a, v->b);
	}
	return ln_buf_detach(&b, NULL);
}

static void expect(size_t n, enum ln_pairing kind, struct sim *s, const char *want)
{
	struct ln_results r;
	struct ln_diag_stats st;
	char *got;

	run(&r, n, kind, s, &st);
	got = verdicts(&r);
	if (strcmp(got, want))
		fail_msg("n=%zu %s: verdicts '%s', want '%s'", n, ln_pairing_name(kind), got, want);
	assert_int_equal(ln_results_exit(&r), want[0] ? 1 : 0);
	free(got);
	ln_results_release(&r);
}

/* The faults (written as verdicts() writes them: "node:0 link:4-5 ")
 * planted in a fresh simulation of n nodes are found, and only they. */
static void expect_found(size_t n, enum ln_pairing kind, const char *faults)
{
	struct sim s = { 0 };
	const char *p = faults;
	size_t a, b;
	int used;

	while (*p) {
		used = 0;
		if (sscanf(p, "link:%zu-%zu %n", &a, &b, &used) == 2 && used)
			s.bad_link[a][b] = 1;
		else if (sscanf(p, "node:%zu %n", &a, &used) == 1 && used)
			s.bad_node[a] = 1;
		else
			fail_msg("bad fault list '%s'", faults);
		p += used;
	}
	expect(n, kind, &s, faults);
}

static void test_validate_diagnose__bad_node_ring(void **state)
{
	struct sim s = { 0 };
	struct ln_results r;
	struct ln_diag_stats st;
	size_t i, retests = 0;

	(void)state;
	s.bad_node[3] = 1;
	run(&r, 8, LN_PAIRING_RING, &s, &st);
	assert_int_equal(r.nverdicts, 1);
	assert_int_equal(r.verdicts[0].kind, LN_VERDICT_NODE);
	assert_int_equal(r.verdicts[0].a, 3);
	assert_non_null(strstr(r.verdicts[0].reason, "failed rping with all 2 partners and with "
						      "known-good peer"));
	/* the retest used a fresh witness: not neighbour 2 or 4 */
	for (i = 0; i < r.nchecks; i++)
		if (r.checks[i].retest) {
			retests++;
			assert_int_equal(r.checks[i].b, 3);
			assert_true(r.checks[i].a != 2 && r.checks[i].a != 4);
			assert_int_equal(r.checks[i].status, LN_ST_FAIL);
			assert_true(r.checks[i].attempts[0].retest);
		}
	assert_int_equal(retests, 1);
	assert_int_equal(st.bad_nodes, 1);
	assert_int_equal(st.bad_links, 0);
	ln_results_release(&r);
}

static void test_validate_diagnose__bad_link_ring(void **state)
{
	(void)state;
	expect_found(8, LN_PAIRING_RING, "link:1-2 ");
}

static void test_validate_diagnose__two_faults_odd_ring(void **state)
{
	(void)state;
	expect_found(9, LN_PAIRING_RING, "node:0 link:4-5 ");
}

static void test_validate_diagnose__all_pairs(void **state)
{
	(void)state;
	expect_found(7, LN_PAIRING_ALL, "node:2 link:4-6 ");
	expect_found(10, LN_PAIRING_ALL, "node:0 node:5 link:1-3 ");
}

/* Two bad links on one node make it fail with both ring partners; the
 * retest against a known-good peer clears the node and names both links. */
static void test_validate_diagnose__two_links_one_node(void **state)
{
	(void)state;
	expect_found(10, LN_PAIRING_RING, "link:4-5 link:5-6 ");
}

static void test_validate_diagnose__pass_on_retry_keeps_first_failure(void **state)
{
	struct sim s = { 0 };
	struct ln_results r;
	struct ln_diag_stats st;
	size_t i, seen = 0;

	(void)state;
	s.flaky[2][3] = 1;
	run(&r, 6, LN_PAIRING_RING, &s, &st);
	assert_int_equal(r.nverdicts, 0);
	assert_int_equal(st.passed_on_retry, 1);
	for (i = 0; i < r.nchecks; i++) {
		const struct ln_check *c = &r.checks[i];

		if (c->a == 2 && c->b == 3) {
			seen++;
			assert_int_equal(c->status, LN_ST_PASS);
			assert_int_equal(c->nattempts, 2);
			assert_false(c->attempts[0].ok);
			assert_false(c->attempts[0].retest);
			assert_string_equal(c->attempts[0].detail, "no route 2-3");
			assert_true(c->attempts[1].ok);
			assert_true(c->attempts[1].retest);
			assert_non_null(strstr(c->reason, "passed on retry; attempt 1 failed"));
		}
	}
	assert_int_equal(seen, 1);
	assert_int_equal(ln_results_exit(&r), 0);
	ln_results_release(&r);
}

/* Three nodes with a bad node and a bad link fail every pair: nothing can
 * tell which is which, so nothing is blamed. */
static void test_validate_diagnose__ambiguous_is_undetermined(void **state)
{
	struct sim s = { 0 };

	(void)state;
	s.bad_node[2] = 1;
	s.bad_link[0][1] = 1;
	expect(3, LN_PAIRING_RING, &s, "undetermined:0 undetermined:1 undetermined:2 ");
	memset(&s, 0, sizeof(s));
	s.bad_link[0][1] = 1;
	expect(2, LN_PAIRING_RING, &s, "undetermined:0 undetermined:1 ");
	memset(&s, 0, sizeof(s));
	expect(5, LN_PAIRING_ALL, &s, "");
}

static void test_validate_diagnose__deterministic(void **state)
{
	struct ln_results r1, r2;
	struct ln_diag_stats st;
	struct sim s1 = { 0 }, s2;
	size_t i;

	(void)state;
	s1.bad_node[7] = s1.bad_node[20] = 1;
	s1.bad_link[11][12] = s1.bad_link[30][31] = 1;
	s2 = s1;
	run(&r1, 40, LN_PAIRING_RING, &s1, &st);
	run(&r2, 40, LN_PAIRING_RING, &s2, &st);
	assert_int_equal(r1.nverdicts, 4);
	assert_int_equal(r1.nverdicts, r2.nverdicts);
	assert_int_equal(r1.nchecks, r2.nchecks);
	for (i = 0; i < r1.nverdicts; i++)
		assert_string_equal(r1.verdicts[i].reason, r2.verdicts[i].reason);
	for (i = 0; i < r1.nchecks; i++) {
		assert_int_equal(r1.checks[i].a, r2.checks[i].a);
		assert_int_equal(r1.checks[i].b, r2.checks[i].b);
	}
	ln_results_release(&r1);
	ln_results_release(&r2);
}

static void test_validate_diagnose__node_stage_verdicts(void **state)
{
	const char *names[] = { "a", "b" };
	struct ln_buf err = LN_BUF_INIT;
	struct ln_results r;
	long i1, i2, i3;

	(void)state;
	assert_int_equal(ln_results_init(&r, "c", names, 2), 0);
	r.stages[LN_STAGE_DEVICES].listed = r.stages[LN_STAGE_DEVICES].ran = 1;
	r.stages[LN_STAGE_MPI].listed = 1;
	i1 = ln_results_add_check(&r, LN_STAGE_DEVICES, 1, LN_NO_NODE, "rxe0/1 state");
	i2 = ln_results_add_check(&r, LN_STAGE_DEVICES, 1, LN_NO_NODE, "rxe0/1 rate");
	i3 = ln_results_add_check(&r, LN_STAGE_DEVICES, 0, LN_NO_NODE, "gpus");
	assert_int_equal(ln_check_set(&r.checks[i1], LN_ST_FAIL, "state DOWN, want ACTIVE"), 0);
	assert_int_equal(ln_check_set(&r.checks[i2], LN_ST_FAIL, "rate 10 Gb/s"), 0);
	(void)i3;
	assert_int_equal(ln_diagnose_nodes(&r, &err), 0);
	assert_int_equal(r.nverdicts, 1);
	assert_int_equal(r.verdicts[0].a, 1);
	assert_string_equal(r.verdicts[0].reason, "rxe0/1 state: state DOWN, want ACTIVE");
	ln_results_summarize(&r);
	assert_int_equal(r.stages[LN_STAGE_DEVICES].status, LN_ST_FAIL);
	/* listed but never ran: not run, and a failure */
	assert_int_equal(r.stages[LN_STAGE_MPI].status, LN_ST_NOT_RUN);
	assert_int_equal(ln_results_exit(&r), 1);
	ln_results_release(&r);
	ln_buf_release(&err);
}

/* ---- rails: two ports per node, rxe0 on rail0 and rxe1 on rail1 ---- */

struct psim {
	int bad_node[MAXN];
	int bad_port[MAXN][2];
	int bad_link[MAXN][MAXN][2];	/* on a rail, either direction */
};

static int psim_ok(const struct psim *s, const struct ln_pair *p)
{
	return !s->bad_node[p->a] && !s->bad_node[p->b] && !s->bad_port[p->a][p->pa] &&
	       !s->bad_port[p->b][p->pb] && !s->bad_link[p->a][p->b][p->pa] &&
	       !s->bad_link[p->b][p->a][p->pb];
}

static int psim_round(void *ctx, enum ln_stage stage, const struct ln_pair *pairs, size_t n,
		      struct ln_attempt *out)
{
	size_t i;

	(void)stage;
	for (i = 0; i < n; i++) {
		/* a retest stays on one rail */
		assert_int_equal(pairs[i].pa, pairs[i].pb);
		out[i].ok = psim_ok(ctx, &pairs[i]);
		out[i].value = out[i].ok ? 10.0 : NAN;
		if (!out[i].ok)
			assert_int_not_equal(asprintf(&out[i].detail, "no route"), -1);
	}
	return 0;
}

/* The rail schedule's first pass, then the diagnosis; verdicts as
 * "node:3 port:2/1 link:0/0-1/0 ". */
static char *rails_run(size_t n, enum ln_pairing kind, struct psim *s)
{
	const char *names[MAXN];
	char buf[MAXN][16];
	struct ln_results r;
	struct ln_railmap m;
	struct ln_schedule sch = LN_SCHEDULE_INIT;
	struct ln_rail_opts o = { kind, LN_RAILS_ALIGNED, 1, NULL, NULL, 0 };
	struct ln_buf err = LN_BUF_INIT, b = LN_BUF_INIT;
	size_t i, rd;

	for (i = 0; i < n; i++) {
		snprintf(buf[i], sizeof(buf[i]), "node%zu", i);
		names[i] = buf[i];
	}
	assert_int_equal(ln_results_init(&r, "sim", names, n), 0);
	assert_int_equal(ln_results_init_ports(&r, 2), 0);
	memset(&m, 0, sizeof(m));
	m.nnodes = n;
	m.nrails = m.stride = 2;
	m.port = calloc(n * 2, sizeof(*m.port));
	assert_non_null(m.port);
	for (i = 0; i < n; i++) {
		m.port[i * 2] = 0;
		m.port[i * 2 + 1] = 1;
		assert_int_equal(ln_results_set_port(&r, i, 0, "rxe0", "rail0"), 0);
		assert_int_equal(ln_results_set_port(&r, i, 1, "rxe1", "rail1"), 0);
	}
	r.stages[LN_STAGE_RPING].listed = r.stages[LN_STAGE_RPING].ran = 1;
	assert_int_equal(ln_rails_schedule(&m, &o, &sch, &err), 0);
	for (rd = 0; rd < sch.nrounds; rd++) {
		struct ln_attempt out[2 * MAXN];

		memset(out, 0, sizeof(out));
		assert_int_equal(psim_round(s, LN_STAGE_RPING, sch.rounds[rd].pairs,
					    sch.rounds[rd].npairs, out), 0);
		for (i = 0; i < sch.rounds[rd].npairs; i++) {
			const struct ln_pair *p = &sch.rounds[rd].pairs[i];
			long idx = ln_results_add_check(&r, LN_STAGE_RPING, p->a, p->b, "rping");

			assert_true(idx >= 0);
			r.checks[idx].pa = (int)p->pa;
			r.checks[idx].pb = (int)p->pb;
			assert_int_equal(ln_check_add_attempt(&r.checks[idx], &out[i]), 0);
			free(out[i].detail);
		}
	}
	assert_int_equal(ln_diagnose_stage(&r, LN_STAGE_RPING, psim_round, s, NULL, &err), 0);
	for (i = 0; i < r.nverdicts; i++) {
		const struct ln_verdict *v = &r.verdicts[i];

		if (v->kind == LN_VERDICT_NODE)
			ln_buf_addf(&b, "node:%zu ", v->a);
		else if (v->kind == LN_VERDICT_PORT)
			ln_buf_addf(&b, "port:%zu/%d ", v->a, v->pa);
		else
			ln_buf_addf(&b, "%s:%zu/%d-%zu/%d ", ln_verdict_kind_name(v->kind), v->a,
				    v->pa, v->b, v->pb);
	}
	/* the text names the port: "bad port node2/rxe1" */
	for (i = 0; i < r.nverdicts; i++)
		if (r.verdicts[i].kind == LN_VERDICT_PORT) {
			struct ln_buf t = LN_BUF_INIT;

			assert_int_equal(ln_report_text(&r, 0, &t), 0);
			ln_buf_reset(&err);
			ln_buf_addf(&err, "bad port node%zu/rxe%d (rping)", r.verdicts[i].a,
				    r.verdicts[i].pa);
			if (!strstr(t.buf, err.buf))
				fail_msg("the text report lacks '%s':\n%s", err.buf, t.buf);
			ln_buf_release(&t);
		}
	ln_schedule_release(&sch);
	ln_railmap_release(&m);
	ln_results_release(&r);
	ln_buf_release(&err);
	return ln_buf_detach(&b, NULL);
}

static void rails_expect(size_t n, enum ln_pairing kind, struct psim *s, const char *want)
{
	char *got = rails_run(n, kind, s);

	if (strcmp(got, want))
		fail_msg("n=%zu %s: verdicts '%s', want '%s'", n, ln_pairing_name(kind), got, want);
	free(got);
}

static void test_validate_diagnose__rails_port_node_link(void **state)
{
	struct psim s;

	(void)state;
	/* one rail of one node: a bad port, its other rail passes */
	memset(&s, 0, sizeof(s));
	s.bad_port[3][1] = 1;
	rails_expect(8, LN_PAIRING_RING, &s, "port:3/1 ");
	/* every rail: a bad node */
	memset(&s, 0, sizeof(s));
	s.bad_port[3][0] = s.bad_port[3][1] = 1;
	rails_expect(8, LN_PAIRING_RING, &s, "node:3 ");
	memset(&s, 0, sizeof(s));
	s.bad_node[5] = 1;
	rails_expect(8, LN_PAIRING_RING, &s, "node:5 ");
	/* one pair on one rail: a bad link, named with its ports */
	memset(&s, 0, sizeof(s));
	s.bad_link[1][2][0] = 1;
	rails_expect(8, LN_PAIRING_RING, &s, "link:1/0-2/0 ");
	/* the three at once, all pairs */
	memset(&s, 0, sizeof(s));
	s.bad_node[5] = 1;
	s.bad_port[2][1] = 1;
	s.bad_link[0][1][0] = 1;
	rails_expect(8, LN_PAIRING_ALL, &s, "port:2/1 node:5 link:0/0-1/0 ");
	/* and on a ring of 8 */
	rails_expect(8, LN_PAIRING_RING, &s, "port:2/1 node:5 link:0/0-1/0 ");
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_validate_diagnose__bad_node_ring),
	cmocka_unit_test(test_validate_diagnose__bad_link_ring),
	cmocka_unit_test(test_validate_diagnose__two_faults_odd_ring),
	cmocka_unit_test(test_validate_diagnose__all_pairs),
	cmocka_unit_test(test_validate_diagnose__two_links_one_node),
	cmocka_unit_test(test_validate_diagnose__pass_on_retry_keeps_first_failure),
	cmocka_unit_test(test_validate_diagnose__ambiguous_is_undetermined),
	cmocka_unit_test(test_validate_diagnose__deterministic),
	cmocka_unit_test(test_validate_diagnose__node_stage_verdicts),
	cmocka_unit_test(test_validate_diagnose__rails_port_node_link),
)
