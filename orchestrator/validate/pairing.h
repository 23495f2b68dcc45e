/* SPDX-License-Identifier: MIT */
/*
 * Pair schedules for pairwise validation stages (rping, bandwidth). A
 * schedule is a list of rounds; the pairs of one round share no node, so
 * every pair of a round can run at the same time without a node serving
 * two tests at once. Nodes are indices 0..n-1 into the caller's node list.
 *
 *   ring: every node with its successor; 2 rounds for even n (n >= 4),
 *         3 for odd n (n >= 3); n == 2 is one pair, hence one round.
 *   all:  every unordered pair, by the circle method: n-1 rounds for even
 *         n, n rounds for odd n (one node sits out of each round).
 *   against: each subject node with known-good peers only (a replaced node,
 *         or a diagnosis suspect), packed into disjoint rounds.
 */
#ifndef LN_VALIDATE_PAIRING_H
#define LN_VALIDATE_PAIRING_H

#include <stddef.h>

#include "common/buf.h"

enum ln_pairing {
	LN_PAIRING_RING = 0,
	LN_PAIRING_ALL,
};

/* In a pair, a runs the server side and b the client side, on their
 * RDMA ports pa and pb (indices into the node's declared ports; 0, the
 * first, unless a rail schedule says otherwise). */
struct ln_pair {
	size_t a, b;
	unsigned pa, pb;
};

struct ln_round {
	struct ln_pair *pairs;
	size_t npairs;
};

struct ln_schedule {
	struct ln_round *rounds;
	size_t nrounds;
	size_t npairs;		/* over all rounds */
};

#define LN_SCHEDULE_INIT { NULL, 0, 0 }

/* "ring" or "all" -> kind; -EINVAL for anything else. */
int ln_pairing_parse(const char *s, enum ln_pairing *kind);
const char *ln_pairing_name(enum ln_pairing kind);

/* Build the schedule of kind for n nodes into out (released first).
 * Fewer than 2 nodes give an empty schedule. Returns 0 or -ENOMEM. */
int ln_pairing_build(enum ln_pairing kind, size_t n, struct ln_schedule *out,
		     struct ln_buf *err);

/* Pair every subject with peers only: subject s is tested against
 * `per_subject` distinct peers (fewer if there are fewer peers), chosen
 * round-robin from peers[] in order, so the choice is deterministic. When
 * several subjects are given, subjects are also never paired with one
 * another. Pairs are packed greedily into rounds of disjoint nodes.
 * Returns 0, -EINVAL (no peers for a subject, or a subject also listed as
 * a peer) with a message, or -ENOMEM. */
int ln_pairing_against(const size_t *subjects, size_t nsubjects, const size_t *peers,
		       size_t npeers, size_t per_subject, struct ln_schedule *out,
		       struct ln_buf *err);

/* Pack an arbitrary list of pairs into rounds of disjoint nodes, greedily
 * and in list order (deterministic). n bounds the node indices. */
int ln_pairing_pack(const struct ln_pair *pairs, size_t npairs, size_t n,
		    struct ln_schedule *out, struct ln_buf *err);
/* The same where a round may use a node once per port: with stride > 0
 * (the most ports a node has), two pairs conflict only on the same port
 * of a node; stride 0 is ln_pairing_pack. */
int ln_pairing_pack_ports(const struct ln_pair *pairs, size_t npairs, size_t n, size_t stride,
			  struct ln_schedule *out, struct ln_buf *err);

/* Check that no round uses a node twice and that indices are < n.
 * Returns 0 or -EINVAL with a message naming the round and node. */
int ln_schedule_check(const struct ln_schedule *s, size_t n, struct ln_buf *err);
/* The same per port (stride > 0, see ln_pairing_pack_ports): no round
 * uses a port twice. */
int ln_schedule_check_ports(const struct ln_schedule *s, size_t n, size_t stride,
			    struct ln_buf *err);

void ln_schedule_release(struct ln_schedule *s);

#endif
