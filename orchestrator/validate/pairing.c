/* SPDX-License-Identifier: MIT */
/*
 * Pair schedules: ring, all pairs by the circle method, and "against"
 * (subjects with known-good peers). See pairing.h for the round counts.
 * Every schedule is deterministic for the same input, so two runs of the
 * same spec test the same pairs in the same order.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/validate/pairing.h"

int ln_pairing_parse(const char *s, enum ln_pairing *kind)
{
	if (!strcmp(s, "ring"))
		*kind = LN_PAIRING_RING;
	else if (!strcmp(s, "all"))
		*kind = LN_PAIRING_ALL;
	else
		return -EINVAL;
	return 0;
}

const char *ln_pairing_name(enum ln_pairing kind)
{
	return kind == LN_PAIRING_ALL ? "all" : "ring";
}

void ln_schedule_release(struct ln_schedule *s)
{
	size_t i;

	for (i = 0; i < s->nrounds; i++)
		free(s->rounds[i].pairs);
	free(s->rounds);
	s->rounds = NULL;
	s->nrounds = 0;
	s->npairs = 0;
}

/* Allocate nrounds empty rounds, each with room for cap pairs. */
static int alloc_rounds(struct ln_schedule *s, size_t nrounds, size_t cap)
{
	size_t i;

	s->rounds = calloc(nrounds ? nrounds : 1, sizeof(*s->rounds));
	if (!s->rounds)
		return -ENOMEM;
	s->nrounds = nrounds;
	for (i = 0; i < nrounds; i++) {
		s->rounds[i].pairs = calloc(cap ? cap : 1, sizeof(struct ln_pair));
		if (!s->rounds[i].pairs)
			return -ENOMEM;
	}
	return 0;
}

static void put_pair(struct ln_schedule *s, size_t r, const struct ln_pair *p)
{
	struct ln_round *rd = &s->rounds[r];

	rd->pairs[rd->npairs++] = *p;
	s->npairs++;
}

static void put(struct ln_schedule *s, size_t r, size_t a, size_t b)
{
	struct ln_pair p = { .a = a, .b = b };

	put_pair(s, r, &p);
}

/* The resource an end of p occupies: its node, or with stride its port. */
static size_t end_of(const struct ln_pair *p, int b_end, size_t stride)
{
	size_t node = b_end ? p->b : p->a, port = b_end ? p->pb : p->pa;

	return stride ? node * stride + port : node;
}

static int build_ring(size_t n, struct ln_schedule *s)
{
	size_t k, half = n / 2;
	int r;

	if (n == 2) {
		/* The ring 0->1->0 has one distinct link: testing it twice
		 * would only repeat the first round. */
		r = alloc_rounds(s, 1, 1);
		if (r < 0)
			return r;
		put(s, 0, 0, 1);
		return 0;
	}
	r = alloc_rounds(s, n % 2 ? 3 : 2, half);
	if (r < 0)
		return r;
	/* Round 1: (0,1) (2,3) ...; round 2: (1,2) (3,4) ..., wrapping to 0
	 * for even n; for odd n the closing link (n-1, 0) needs round 3,
	 * since round 1 uses 0 and round 2 uses n-1. */
	for (k = 0; k < half; k++)
		put(s, 0, 2 * k, 2 * k + 1);
	for (k = 0; k < half; k++) {
		size_t a = 2 * k + 1, b = (2 * k + 2) % n;

		if (n % 2 == 0 || b != 0)
			put(s, 1, a, b);
	}
	if (n % 2)
		put(s, 2, n - 1, 0);
	return 0;
}

/* Circle method: node m-1 stays fixed, the others rotate; with odd n a
 * phantom node m-1 == n takes the fixed place and its partner sits out. */
static int build_all(size_t n, struct ln_schedule *s)
{
	size_t m = n % 2 ? n + 1 : n, rounds = m - 1, rd, k;
	int r;

	r = alloc_rounds(s, rounds, m / 2);
	if (r < 0)
		return r;
	for (rd = 0; rd < rounds; rd++) {
		if (m - 1 < n)
			put(s, rd, rd, m - 1);
		for (k = 1; k < m / 2; k++) {
			size_t a = (rd + k) % (m - 1), b = (rd + (m - 1) - k) % (m - 1);

			put(s, rd, a < b ? a : b, a < b ? b : a);
		}
	}
	return 0;
}

int ln_pairing_build(enum ln_pairing kind, size_t n, struct ln_schedule *out,
		     struct ln_buf *err)
{
	int r = 0;

	ln_schedule_release(out);
	if (n < 2)
		return 0;
	if (kind == LN_PAIRING_ALL)
		r = build_all(n, out);
	else
		r = build_ring(n, out);
	if (r < 0) {
		ln_buf_addf(err, "cannot build the %s schedule for %zu nodes: out of memory",
			    ln_pairing_name(kind), n);
		ln_schedule_release(out);
	}
	return r;
}

int ln_pairing_pack(const struct ln_pair *pairs, size_t npairs, size_t n,
		    struct ln_schedule *out, struct ln_buf *err)
{
	return ln_pairing_pack_ports(pairs, npairs, n, 0, out, err);
}

int ln_pairing_pack_ports(const struct ln_pair *pairs, size_t npairs, size_t n, size_t stride,
			  struct ln_schedule *out, struct ln_buf *err)
{
	size_t *next = NULL, *count = NULL, *round_of = NULL, i, nrounds = 0;
	size_t nres = stride ? n * stride : n;
	int r = -ENOMEM;

	ln_schedule_release(out);
	if (!npairs)
		return 0;
	next = calloc(nres ? nres : 1, sizeof(*next));
	round_of = calloc(npairs, sizeof(*round_of));
	if (!next || !round_of)
		goto out;
	/* A pair goes to the round after the latest one either end is in:
	 * each node's rounds strictly increase, so rounds stay disjoint, and
	 * the result depends only on the input order. */
	for (i = 0; i < npairs; i++) {
		size_t a = end_of(&pairs[i], 0, stride), b = end_of(&pairs[i], 1, stride), rd;

		if (pairs[i].a >= n || pairs[i].b >= n || pairs[i].a == pairs[i].b ||
		    (stride && (pairs[i].pa >= stride || pairs[i].pb >= stride))) {
			ln_buf_addf(err, "cannot schedule pair %zu-%zu: not two of %zu nodes",
				    pairs[i].a, pairs[i].b, n);
			r = -EINVAL;
			goto out;
		}
		rd = next[a] > next[b] ? next[a] : next[b];
		if (rd >= nrounds)	/* past the last round: the pair opens one */
			rd = nrounds++;
		round_of[i] = rd;
		next[a] = next[b] = rd + 1;
	}
	count = calloc(nrounds ? nrounds : 1, sizeof(*count));
	if (!count)
		goto out;
	for (i = 0; i < npairs; i++)
		count[round_of[i]]++;
	out->rounds = calloc(nrounds, sizeof(*out->rounds));
	if (!out->rounds)
		goto out;
	out->nrounds = nrounds;
	for (i = 0; i < nrounds; i++) {
		out->rounds[i].pairs = calloc(count[i], sizeof(struct ln_pair));
		if (!out->rounds[i].pairs)
			goto out;
	}
	for (i = 0; i < npairs; i++)
		put_pair(out, round_of[i], &pairs[i]);
	r = 0;
out:
	if (r == -ENOMEM)
		ln_buf_addstr(err, "cannot schedule pairs: out of memory");
	if (r < 0)
		ln_schedule_release(out);
	free(next);
	free(count);
	free(round_of);
	return r;
}

int ln_pairing_against(const size_t *subjects, size_t nsubjects, const size_t *peers,
		       size_t npeers, size_t per_subject, struct ln_schedule *out,
		       struct ln_buf *err)
{
	struct ln_pair *pairs = NULL;
	size_t i, j, k, n = 0, per, np = 0, maxidx = 0;
	int r;

	ln_schedule_release(out);
	if (!nsubjects)
		return 0;
	if (!npeers) {
		ln_buf_addstr(err, "cannot pair the nodes under test: no node has passed to test "
				   "them against");
		return -EINVAL;
	}
	for (i = 0; i < nsubjects; i++)
		for (j = 0; j < npeers; j++)
			if (subjects[i] == peers[j]) {
				ln_buf_addf(err, "cannot pair node %zu against itself", subjects[i]);
				return -EINVAL;
			}
	per = per_subject < npeers ? per_subject : npeers;
	if (!per)
		per = 1;
	pairs = calloc(nsubjects * per, sizeof(*pairs));
	if (!pairs) {
		ln_buf_addstr(err, "cannot pair nodes: out of memory");
		return -ENOMEM;
	}
	/* Spread subjects over the peers so that different subjects start
	 * on different peers and the rounds stay few. The known-good peer
	 * serves (a), the subject is the client (b). */
	for (i = 0; i < nsubjects; i++)
		for (k = 0; k < per; k++) {
			pairs[np].a = peers[(i + k * nsubjects) % npeers];
			pairs[np].b = subjects[i];
			np++;
		}
	for (i = 0; i < np; i++) {
		if (pairs[i].a > maxidx)
			maxidx = pairs[i].a;
		if (pairs[i].b > maxidx)
			maxidx = pairs[i].b;
	}
	n = maxidx + 1;
	r = ln_pairing_pack(pairs, np, n, out, err);
	free(pairs);
	return r;
}

int ln_schedule_check(const struct ln_schedule *s, size_t n, struct ln_buf *err)
{
	return ln_schedule_check_ports(s, n, 0, err);
}

int ln_schedule_check_ports(const struct ln_schedule *s, size_t n, size_t stride,
			    struct ln_buf *err)
{
	size_t nres = stride ? n * stride : n;
	unsigned char *seen = calloc(nres ? nres : 1, 1);
	size_t rd, i;
	int r = 0;

	if (!seen)
		return -ENOMEM;
	for (rd = 0; rd < s->nrounds && !r; rd++) {
		memset(seen, 0, nres ? nres : 1);
		for (i = 0; i < s->rounds[rd].npairs; i++) {
			const struct ln_pair *p = &s->rounds[rd].pairs[i];
			size_t a, b;

			if (p->a >= n || p->b >= n || p->a == p->b ||
			    (stride && (p->pa >= stride || p->pb >= stride))) {
				ln_buf_addf(err, "bad pair %zu-%zu in round %zu", p->a, p->b,
					    rd + 1);
				r = -EINVAL;
				break;
			}
			a = end_of(p, 0, stride);
			b = end_of(p, 1, stride);
			if (seen[a] || seen[b]) {
				ln_buf_addf(err, "node %zu serves two tests in round %zu%s",
					    seen[a] ? p->a : p->b, rd + 1,
					    stride ? " on one port" : "");
				r = -EINVAL;
				break;
			}
			seen[a] = seen[b] = 1;
		}
	}
	free(seen);
	return r;
}
