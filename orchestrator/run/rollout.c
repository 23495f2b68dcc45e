/* SPDX-License-Identifier: MIT */
/*
 * Counts and waves for apply's rollouts (rollout.h). A node's level is one
 * more than the highest level of the target nodes it connects to, found by
 * relaxing the initiator edges at most n times: a cycle (two nodes serving
 * each other) stops growing there, and its nodes keep spec order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/run/rollout.h"

int ln_count_parse(const char *s, long max, struct ln_count *c)
{
	char *end;
	long n;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	c->percent = *end == '%';
	if (c->percent)
		end++;
	if (*end || n > (c->percent ? 100 : max))
		return -EINVAL;
	c->n = n;
	c->set = 1;
	return 0;
}

size_t ln_count_batch(const struct ln_count *c, size_t total)
{
	size_t b;

	if (!c || !c->set)
		return total ? total : 1;
	b = c->percent ? total * (size_t)c->n / 100 : (size_t)c->n;
	if (b < 1)
		b = 1;
	return b > total && total ? total : b;
}

int ln_count_exceeded(const struct ln_count *c, size_t failed, size_t size)
{
	if (!c || !c->set)
		return 0;
	if (c->percent)
		return failed * 100 > (size_t)c->n * size;
	return failed > (size_t)c->n;
}

void ln_waves_release(struct ln_waves *w)
{
	free(w->nodes);
	free(w->start);
	memset(w, 0, sizeof(*w));
}

static int by_level(const void *a, const void *b, void *levels)
{
	const unsigned *level = levels;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (level[x] != level[y])
		return level[x] < level[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

void ln_waves_levels(const struct ln_spec *spec, unsigned *level)
{
	size_t n = spec->n_nodes, i, k, round;
	int changed = 1;

	memset(level, 0, (n ? n : 1) * sizeof(*level));
	for (round = 0; changed && round < n; round++) {
		changed = 0;
		for (k = 0; k < spec->n_initiators; k++) {
			size_t in = spec->initiators[k].node;
			size_t tn = spec->targets[spec->initiators[k].target].node;

			if (in != tn && level[in] <= level[tn]) {
				level[in] = level[tn] + 1;
				changed = 1;
			}
		}
	}
	/* A cycle still growing after n rounds: its levels mean nothing, so
	 * every node of it goes back to spec order at the top level. */
	if (changed)
		for (i = 0; i < n; i++)
			if (level[i] >= n)
				level[i] = (unsigned)n;
}

int ln_waves_build(const struct ln_spec *spec, const unsigned char *sel, size_t batch,
		   struct ln_waves *w)
{
	size_t n = spec->n_nodes, i;
	unsigned *level = NULL;

	memset(w, 0, sizeof(*w));
	if (!batch)
		batch = 1;
	level = calloc(n ? n : 1, sizeof(*level));
	w->nodes = calloc(n ? n : 1, sizeof(*w->nodes));
	w->start = calloc(n + 2, sizeof(*w->start));
	if (!level || !w->nodes || !w->start) {
		free(level);
		ln_waves_release(w);
		return -ENOMEM;
	}
	ln_waves_levels(spec, level);
	for (i = 0; i < n; i++)
		if (!sel || sel[i])
			w->nodes[w->n++] = i;
	qsort_r(w->nodes, w->n, sizeof(*w->nodes), by_level, level);
	for (i = 0; i < w->n; i += batch)
		w->start[w->n_waves++] = i;
	w->start[w->n_waves] = w->n;
	free(level);
	return 0;
}
