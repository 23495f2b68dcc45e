/* SPDX-License-Identifier: MIT */
/*
 * Pair schedules: round counts for ring and all pairs over odd and even n,
 * disjointness of every round, coverage (every wanted pair exactly once),
 * the "against" schedule used after a node replacement, and the rail
 * schedules (rails.h): per-rail circle method, concurrent rails sharing
 * rounds, cross-rail pairs, uneven named rails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"
#include "orchestrator/validate/pairing.h"
#include "orchestrator/validate/rails.h"

/* Count each unordered pair; fail on a repeat or a self-pair. */
static unsigned char *coverage(const struct ln_schedule *s, size_t n)
{
	unsigned char *seen = calloc(n * n, 1);
	size_t rd, i;

	assert_non_null(seen);
	for (rd = 0; rd < s->nrounds; rd++)
		for (i = 0; i < s->rounds[rd].npairs; i++) {
			size_t a = s->rounds[rd].pairs[i].a, b = s->rounds[rd].pairs[i].b;
			size_t lo = a < b ? a : b, hi = a < b ? b : a;

			assert_true(a != b);
			assert_int_equal(seen[lo * n + hi], 0);
			seen[lo * n + hi] = 1;
		}
	return seen;
}

/* kind's schedule for n nodes into s, checked; its coverage (free it). */
static unsigned char *build_checked(enum ln_pairing kind, size_t n, struct ln_schedule *s)
{
	struct ln_buf err = LN_BUF_INIT;

	assert_int_equal(ln_pairing_build(kind, n, s, &err), 0);
	assert_int_equal(ln_schedule_check(s, n, &err), 0);
	ln_buf_release(&err);
	return coverage(s, n);
}

/* check() on kind's schedule for every n from lo to hi, built and
 * checked by build_checked() (seen: its coverage). */
static void for_each_size(enum ln_pairing kind, size_t lo, size_t hi,
			  void (*check)(size_t n, const struct ln_schedule *s,
					const unsigned char *seen))
{
	size_t n;

	for (n = lo; n <= hi; n++) {
		struct ln_schedule s = LN_SCHEDULE_INIT;
		unsigned char *seen = build_checked(kind, n, &s);

		check(n, &s, seen);
		free(seen);
		ln_schedule_release(&s);
	}
}

static void ring_rounds_and_links(size_t n, const struct ln_schedule *s,
				  const unsigned char *seen)
{
	size_t i;

	if (n == 2)
		assert_int_equal(s->nrounds, 1);
	else
		assert_int_equal(s->nrounds, n % 2 ? 3 : 2);
	assert_int_equal(s->npairs, n == 2 ? 1 : n);
	/* every ring link i-(i+1) is present */
	for (i = 0; i < n; i++) {
		size_t j = (i + 1) % n, lo = i < j ? i : j, hi = i < j ? j : i;

		assert_int_equal(seen[lo * n + hi], 1);
	}
}

static void test_pairing__ring_rounds_and_links(void **state)
{
	(void)state;
	for_each_size(LN_PAIRING_RING, 2, 41, ring_rounds_and_links);
}

static void all_pairs_circle_method(size_t n, const struct ln_schedule *s,
				    const unsigned char *seen)
{
	size_t a, b;

	assert_int_equal(s->nrounds, n % 2 ? n : n - 1);
	assert_int_equal(s->npairs, n * (n - 1) / 2);
	for (a = 0; a < n; a++)
		for (b = a + 1; b < n; b++)
			assert_int_equal(seen[a * n + b], 1);
	/* even n: every node in every round; odd n: exactly one sits out */
	for (a = 0; a < s->nrounds; a++)
		assert_int_equal(s->rounds[a].npairs, n / 2);
}

static void test_pairing__all_pairs_circle_method(void **state)
{
	(void)state;
	for_each_size(LN_PAIRING_ALL, 2, 33, all_pairs_circle_method);
}

static void test_pairing__tiny_and_names(void **state)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_schedule s = LN_SCHEDULE_INIT;
	enum ln_pairing k;

	(void)state;
	assert_int_equal(ln_pairing_build(LN_PAIRING_ALL, 1, &s, &err), 0);
	assert_int_equal(s.nrounds, 0);
	assert_int_equal(ln_pairing_build(LN_PAIRING_RING, 0, &s, &err), 0);
	assert_int_equal(s.npairs, 0);
	assert_int_equal(ln_pairing_parse("all", &k), 0);
	assert_int_equal(k, LN_PAIRING_ALL);
	assert_int_equal(ln_pairing_parse("ring", &k), 0);
	assert_int_equal(k, LN_PAIRING_RING);
	assert_int_equal(ln_pairing_parse("Ring", &k), -EINVAL);
	assert_int_equal(ln_pairing_parse("rin", &k), -EINVAL);
	assert_string_equal(ln_pairing_name(LN_PAIRING_ALL), "all");
	ln_buf_release(&err);
}

static void test_pairing__against_known_good(void **state)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_schedule s = LN_SCHEDULE_INIT;
	size_t subj[] = { 7, 9 }, peers[] = { 0, 1, 2, 3 }, rd, i;
	int hits[10] = { 0 };

	(void)state;
	assert_int_equal(ln_pairing_against(subj, 2, peers, 4, 2, &s, &err), 0);
	assert_int_equal(ln_schedule_check(&s, 10, &err), 0);
	assert_int_equal(s.npairs, 4);
	assert_int_equal(s.nrounds, 2);
	for (rd = 0; rd < s.nrounds; rd++)
		for (i = 0; i < s.rounds[rd].npairs; i++) {
			const struct ln_pair *p = &s.rounds[rd].pairs[i];

			/* subjects are only ever clients of a known-good peer */
			assert_true(p->a <= 3);
			assert_true(p->b == 7 || p->b == 9);
			hits[p->b]++;
		}
	assert_int_equal(hits[7], 2);
	assert_int_equal(hits[9], 2);
	/* deterministic: first subject starts on the first peer */
	assert_int_equal(s.rounds[0].pairs[0].a, 0);
	assert_int_equal(s.rounds[0].pairs[0].b, 7);

	assert_int_equal(ln_pairing_against(subj, 2, NULL, 0, 1, &s, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "no node has passed"));
	ln_buf_reset(&err);
	assert_int_equal(ln_pairing_against(subj, 2, subj, 2, 1, &s, &err), -EINVAL);
	ln_schedule_release(&s);
	ln_buf_release(&err);
}

static void test_pairing__check_catches_overlap(void **state)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_pair pairs[] = { { 0, 1, 0, 0 }, { 1, 2, 0, 0 } };
	struct ln_round rd = { pairs, 2 };
	struct ln_schedule s = { &rd, 1, 2 };
	struct ln_schedule packed = LN_SCHEDULE_INIT;

	(void)state;
	assert_int_equal(ln_schedule_check(&s, 3, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "node 1 serves two tests in round 1"));
	ln_buf_reset(&err);
	assert_int_equal(ln_pairing_pack(pairs, 2, 3, &packed, &err), 0);
	assert_int_equal(packed.nrounds, 2);
	assert_int_equal(ln_schedule_check(&packed, 3, &err), 0);
	ln_schedule_release(&packed);
	ln_buf_release(&err);
}

/* A rail map by hand: node i has rail r at port ports[i][r] (-1 none). */
static void railmap(struct ln_railmap *m, size_t n, size_t nrails, const int *ports,
		    size_t stride)
{
	size_t i;

	memset(m, 0, sizeof(*m));
	m->nnodes = n;
	m->nrails = nrails;
	m->stride = stride;
	m->names = calloc(nrails, sizeof(*m->names));
	m->port = calloc(n * nrails, sizeof(*m->port));
	assert_non_null(m->names);
	assert_non_null(m->port);
	for (i = 0; i < nrails; i++)
		assert_int_not_equal(asprintf(&m->names[i], "rail%zu", i), -1);
	for (i = 0; i < n * nrails; i++)
		m->port[i] = ports ? ports[i] : (int)(i % nrails);
}

/* Count each unordered pair of ports (node*stride+port); fail on a repeat. */
static size_t port_coverage(const struct ln_schedule *s, size_t n, size_t stride)
{
	size_t np = n * stride, rd, i, total = 0;
	unsigned char *seen = calloc(np * np, 1);

	assert_non_null(seen);
	for (rd = 0; rd < s->nrounds; rd++)
		for (i = 0; i < s->rounds[rd].npairs; i++) {
			const struct ln_pair *p = &s->rounds[rd].pairs[i];
			size_t u = p->a * stride + p->pa, v = p->b * stride + p->pb;
			size_t lo = u < v ? u : v, hi = u < v ? v : u;

			assert_int_not_equal(p->a, p->b);
			assert_int_equal(seen[lo * np + hi], 0);
			seen[lo * np + hi] = 1;
			total++;
		}
	free(seen);
	return total;
}

static void test_pairing__rails_aligned_per_rail_circle(void **state)
{
	struct ln_railmap m;
	struct ln_schedule s = LN_SCHEDULE_INIT;
	struct ln_buf err = LN_BUF_INIT;
	struct ln_rail_opts o = { LN_PAIRING_ALL, LN_RAILS_ALIGNED, 1, NULL, NULL, 0 };
	size_t rd, i;

	(void)state;
	/* 8 nodes x 8 rails, all pairs: the rails share the circle method's
	 * n-1 rounds (optimal: a port meets 7 partners) */
	railmap(&m, 8, 8, NULL, 8);
	assert_int_equal(ln_rails_schedule(&m, &o, &s, &err), 0);
	assert_int_equal(s.nrounds, 7);
	assert_int_equal(s.npairs, 28 * 8);
	assert_int_equal(port_coverage(&s, 8, 8), 28 * 8);
	assert_int_equal(ln_schedule_check_ports(&s, 8, 8, &err), 0);
	/* a node is in 8 tests at once: per node, rounds overlap */
	assert_int_equal(ln_schedule_check(&s, 8, &err), -EINVAL);
	for (rd = 0; rd < s.nrounds; rd++)
		for (i = 0; i < s.rounds[rd].npairs; i++)
			assert_int_equal(s.rounds[rd].pairs[i].pa, s.rounds[rd].pairs[i].pb);
	/* without concurrent rails: one test per node per round, 8 x 7 */
	o.concurrent = 0;
	ln_buf_reset(&err);
	assert_int_equal(ln_rails_schedule(&m, &o, &s, &err), 0);
	assert_int_equal(s.nrounds, 56);
	assert_int_equal(ln_schedule_check(&s, 8, &err), 0);
	/* ring over 4 nodes and 2 rails: 2 rounds shared, 4 in turn */
	ln_railmap_release(&m);
	railmap(&m, 4, 2, NULL, 2);
	o.kind = LN_PAIRING_RING;
	assert_int_equal(ln_rails_schedule(&m, &o, &s, &err), 0);
	assert_int_equal(s.nrounds, 4);
	assert_int_equal(s.npairs, 8);
	o.concurrent = 1;
	assert_int_equal(ln_rails_schedule(&m, &o, &s, &err), 0);
	assert_int_equal(s.nrounds, 2);
	assert_int_equal(s.npairs, 8);
	ln_schedule_release(&s);
	ln_railmap_release(&m);
	ln_buf_release(&err);
}

static void test_pairing__rails_all_adds_cross_rail(void **state)
{
	struct ln_railmap m;
	struct ln_schedule s = LN_SCHEDULE_INIT;
	struct ln_buf err = LN_BUF_INIT;
	struct ln_rail_opts o = { LN_PAIRING_ALL, LN_RAILS_ALL, 1, NULL, NULL, 0 };

	(void)state;
	/* 6 nodes x 3 rails: every port with every port of the other nodes,
	 * once: 15 node pairs x 9 port pairs, in R x (n-1) rounds */
	railmap(&m, 6, 3, NULL, 3);
	assert_int_equal(ln_rails_schedule(&m, &o, &s, &err), 0);
	assert_int_equal(port_coverage(&s, 6, 3), 15 * 9);
	assert_int_equal(s.nrounds, 3 * 5);
	assert_int_equal(ln_schedule_check_ports(&s, 6, 3, &err), 0);
	o.concurrent = 0;
	assert_int_equal(ln_rails_schedule(&m, &o, &s, &err), 0);
	assert_int_equal(port_coverage(&s, 6, 3), 15 * 9);
	assert_int_equal(s.nrounds, 9 * 5);
	assert_int_equal(ln_schedule_check(&s, 6, &err), 0);
	ln_schedule_release(&s);
	ln_railmap_release(&m);
	ln_buf_release(&err);
}

static void test_pairing__rails_named_uneven(void **state)
{
	/* nodes 0-3 have rail 0 at port 0; nodes 2-5 have rail 1, at port 1
	 * on 2-3 and at port 0 on 4-5 (a node with one port) */
	static const int ports[] = { 0, -1, 0, -1, 0, 1, 0, 1, -1, 0, -1, 0 };
	struct ln_railmap m;
	struct ln_schedule s = LN_SCHEDULE_INIT;
	struct ln_buf err = LN_BUF_INIT;
	struct ln_rail_opts o = { LN_PAIRING_ALL, LN_RAILS_ALIGNED, 1, NULL, NULL, 0 };
	unsigned char subject[6] = { 0, 0, 0, 1, 0, 0 }, peer[6] = { 1, 1, 1, 0, 1, 1 };
	size_t rd, i;

	(void)state;
	railmap(&m, 6, 2, ports, 2);
	assert_int_equal(ln_rails_schedule(&m, &o, &s, &err), 0);
	assert_int_equal(s.npairs, 6 + 6);
	assert_int_equal(s.nrounds, 3);
	for (rd = 0; rd < s.nrounds; rd++)
		for (i = 0; i < s.rounds[rd].npairs; i++) {
			const struct ln_pair *p = &s.rounds[rd].pairs[i];
			int ra = ln_railmap_rail_of(&m, p->a, p->pa);

			assert_true(ra >= 0);
			assert_int_equal(ra, ln_railmap_rail_of(&m, p->b, p->pb));
			if (ra == 0)
				assert_true(p->a < 4 && p->b < 4);
			else
				assert_true(p->a >= 2 && p->b >= 2);
		}
	/* --limit: node 3 against two peers on each of its rails */
	o.subject = subject;
	o.peer = peer;
	o.per_subject = 2;
	assert_int_equal(ln_rails_schedule(&m, &o, &s, &err), 0);
	assert_int_equal(s.npairs, 4);
	for (rd = 0; rd < s.nrounds; rd++)
		for (i = 0; i < s.rounds[rd].npairs; i++)
			assert_int_equal(s.rounds[rd].pairs[i].b, 3);
	ln_schedule_release(&s);
	ln_railmap_release(&m);
	ln_buf_release(&err);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_pairing__ring_rounds_and_links),
	cmocka_unit_test(test_pairing__all_pairs_circle_method),
	cmocka_unit_test(test_pairing__tiny_and_names),
	cmocka_unit_test(test_pairing__against_known_good),
	cmocka_unit_test(test_pairing__check_catches_overlap),
	cmocka_unit_test(test_pairing__rails_aligned_per_rail_circle),
	cmocka_unit_test(test_pairing__rails_all_adds_cross_rail),
	cmocka_unit_test(test_pairing__rails_named_uneven),
)
