/* SPDX-License-Identifier: MIT */
/*
 * Rollouts in waves (apply --batch, --max-fail): the counts the options
 * take ("N" or "N%" of a total) and the waves themselves, nodes ordered so
 * that a target's node comes no later than its initiators' nodes, which is
 * the order apply's phases already keep within one wave.
 */
#ifndef LN_ROLLOUT_H
#define LN_ROLLOUT_H

#include <stddef.h>

#include "common/buf.h"
#include "orchestrator/spec/spec.h"

/* "N" or "N%"; set: given on the command line. */
struct ln_count {
	long n;
	int percent, set;
};

/* Parse "N" (0 to max) or "N%" (0 to 100) into c. Returns 0 or -EINVAL. */
int ln_count_parse(const char *s, long max, struct ln_count *c);

/* A batch size out of total nodes: N, or N% rounded down (Ansible's
 * serial); at least 1, at most total. Unset: total (one wave). */
size_t ln_count_batch(const struct ln_count *c, size_t total);

/* Do failed nodes out of a wave of size stop the rollout? More than N,
 * or more than N% of the wave (exactly, no rounding). Unset: never. */
int ln_count_exceeded(const struct ln_count *c, size_t failed, size_t size);

/* Waves over the selected nodes: wave w holds nodes[start[w] ..
 * start[w + 1]) (start has n_waves + 1 entries). */
struct ln_waves {
	size_t *nodes;
	size_t n;
	size_t *start;
	size_t n_waves;
};

/*
 * Each node's level (level has spec->n_nodes entries): 0 for a node that
 * connects to no other node's target, else one more than the highest
 * level of the target nodes it connects to. The nodes of a cycle (nodes
 * serving each other) all get n_nodes.
 */
void ln_waves_levels(const struct ln_spec *spec, unsigned *level);

/*
 * Order the nodes with sel[i] set (all when sel is NULL) so that a node
 * exporting a target comes before the nodes that connect to it (spec
 * order otherwise), and cut them into waves of batch nodes. Initiators and
 * targets that depend on each other both ways keep spec order. Returns 0
 * or -ENOMEM.
 */
int ln_waves_build(const struct ln_spec *spec, const unsigned char *sel, size_t batch,
		   struct ln_waves *w);
void ln_waves_release(struct ln_waves *w);

#endif
