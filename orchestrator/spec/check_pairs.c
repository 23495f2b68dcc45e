/* SPDX-License-Identifier: MIT */
/*
 * The check pass's rules for rails and the pairwise stages (rping,
 * bandwidth, latency), which pair RDMA ports rail by rail: every port
 * names its rail or none does, a rail once on a node, no port alone on
 * its rail; every RDMA port they pair has an 'ip' (rping and perftest
 * connect to it; a port without one could only be "not run"), and
 * 'pairs: all' stays within the pairs a schedule may hold.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "orchestrator/spec/check.h"

/* ---- rails ----------------------------------------------------------- */

/* Rails: every port names its rail or none does, a node has a rail once,
 * and unnamed rails (by position) need as many ports on every node that
 * has any when a pairwise stage pairs them. */
void spec_check_rails(struct ln_spec *spec)
{
	const struct ln_validation *v = &spec->validation;
	const struct ln_node *first = NULL;
	const struct ln_rdma_port *named = NULL;
	size_t i, k, j;

	for (i = 0; i < spec->n_nodes && !named; i++)
		for (k = 0; k < spec->nodes[i].n_rdma && !named; k++)
			if (spec->nodes[i].rdma[k].rail)
				named = &spec->nodes[i].rdma[k];
	for (i = 0; i < spec->n_nodes; i++) {
		const struct ln_node *n = &spec->nodes[i];

		for (k = 0; k < n->n_rdma; k++) {
			const struct ln_rdma_port *p = &n->rdma[k];

			if (named && !p->rail) {
				spec_diag(spec, p->mark,
					  "rdma port %s/%u of node '%s' has no 'rail' but the port on "
					  "line %u has one: name every port's rail or none", p->device,
					  p->port, n->name, named->mark.line);
				continue;
			}
			for (j = 0; p->rail && j < k; j++)
				if (spec_streq(n->rdma[j].rail, p->rail)) {
					spec_diag(spec, p->mark,
						  "rail '%s' is on node '%s' twice (first on line %u)",
						  p->rail, n->name, n->rdma[j].mark.line);
					break;
				}
		}
	}
	if (named || (!v->present[LN_STAGE_RPING] && !v->present[LN_STAGE_BANDWIDTH] &&
		      !v->present[LN_STAGE_LATENCY]))
		return;
	for (i = 0; i < spec->n_nodes; i++) {
		const struct ln_node *n = &spec->nodes[i];

		if (!n->n_rdma)
			continue;
		if (!first) {
			first = n;
		} else if (n->n_rdma != first->n_rdma) {
			spec_diag(spec, n->mark,
				  "node '%s' has %zu RDMA ports and node '%s' %zu: the pairwise "
				  "stages pair ports by position only when every node has as many; "
				  "name each port's rail with 'rail:'", n->name, n->n_rdma,
				  first->name, first->n_rdma);
			return;
		}
	}
}

/* A pairwise stage tests each port with another node's port on its rail:
 * a port alone on its rail could never be tested, so it is refused. */
void spec_check_lone_rails(struct ln_spec *spec, enum ln_stage st)
{
	size_t i, k, j, m;

	for (i = 0; i < spec->n_nodes; i++)
		for (k = 0; k < spec->nodes[i].n_rdma; k++) {
			const struct ln_rdma_port *p = &spec->nodes[i].rdma[k];
			int partner = 0;

			for (j = 0; p->rail && j < spec->n_nodes && !partner; j++)
				for (m = 0; j != i && m < spec->nodes[j].n_rdma && !partner; m++)
					partner = spec_streq(spec->nodes[j].rdma[m].rail, p->rail);
			if (p->rail && !partner)
				spec_diag(spec, p->mark,
					  "rdma port %s/%u of node '%s' is the only port on rail '%s': "
					  "stage '%s' pairs ports per rail and could never test it",
					  p->device, p->port, spec->nodes[i].name, p->rail,
					  ln_stage_name(st));
		}
}

/* ---- the pairwise stages --------------------------------------------- */

static const enum ln_stage pair_stages[] = { LN_STAGE_RPING, LN_STAGE_BANDWIDTH,
					     LN_STAGE_LATENCY };

static void stage_opts(const struct ln_validation *v, enum ln_stage s, enum ln_pairs *pairs,
		       enum ln_rail_pairs *rails)
{
	if (s == LN_STAGE_RPING) {
		*pairs = v->rping.pairs;
		*rails = v->rping.rails;
	} else if (s == LN_STAGE_BANDWIDTH) {
		*pairs = v->bandwidth.pairs;
		*rails = v->bandwidth.rails;
	} else {
		*pairs = v->latency.pairs;
		*rails = v->latency.rails;
	}
}

/* One message per port as written: the ports of a node range share their
 * mark, so a port is skipped when the previous node's port k had it. */
static void check_ips(struct ln_spec *spec, const char *stages)
{
	size_t i, k;

	for (i = 0; i < spec->n_nodes; i++) {
		const struct ln_node *n = &spec->nodes[i], *prev = i ? &spec->nodes[i - 1] : NULL;

		for (k = 0; k < n->n_rdma; k++) {
			const struct ln_rdma_port *p = &n->rdma[k];

			if (p->ip)
				continue;
			if (prev && k < prev->n_rdma && !prev->rdma[k].ip &&
			    prev->rdma[k].mark.line == p->mark.line &&
			    prev->rdma[k].mark.col == p->mark.col)
				continue;
			spec_diag(spec, p->mark,
				  "rdma port %s/%u of node '%s' has no 'ip': %s connect%s to every "
				  "port they pair by its address", p->device ? p->device : "?",
				  p->port, n->name, stages, strchr(stages, ',') ||
				  strstr(stages, " and ") ? "" : "s");
		}
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* m ports on one rail: the pairs 'pairs: all' makes of them. */
static uint64_t choose2(uint64_t m)
{
	return m < 2 ? 0 : m * (m - 1) / 2;
}

/*
 * The ports on each rail (by name when ports name their rail, else by
 * position), then the pairs 'pairs: all' tests: every two ports of a rail
 * (aligned), and with 'rails: all' every two ports on different rails
 * too (an upper bound: the schedule leaves out a node with itself).
 */
static int count_pairs(const struct ln_spec *spec, uint64_t *aligned, uint64_t *cross)
{
	const struct ln_spec_store *st = spec->store;
	const char **names = NULL;
	uint64_t *per = NULL, sum = 0, sq = 0;
	size_t i, k, n = 0, nr = 0, run;
	int named = 0;

	for (i = 0; i < st->n_ports; i++)
		named |= st->ports[i].rail != NULL;
	names = malloc((st->n_ports + 1) * sizeof(*names));
	per = calloc(st->n_ports + 1, sizeof(*per));
	if (!names || !per) {
		free(names);
		free(per);
		return -ENOMEM;
	}
	if (named) {
		for (i = 0; i < st->n_ports; i++)
			if (st->ports[i].rail)
				names[n++] = st->ports[i].rail;
		qsort(names, n, sizeof(*names), cmp_str);
		for (i = 0; i < n; i += run) {
			for (run = 1; i + run < n && !strcmp(names[i], names[i + run]); run++)
				;
			per[nr++] = run;
		}
	} else {
		for (i = 0; i < spec->n_nodes; i++)
			for (k = 0; k < spec->nodes[i].n_rdma; k++)
				per[k]++;
		while (nr < st->n_ports && per[nr])
			nr++;
	}
	*aligned = 0;
	for (i = 0; i < nr; i++) {
		*aligned = sat_add(*aligned, choose2(per[i]));
		sum += per[i];
		sq = sat_add(sq, per[i] * per[i]);
	}
	*cross = (sum * sum - sq) / 2;
	free(names);
	free(per);
	return 0;
}

/* Pairs the pairwise stages check, the 'ip' of their ports and the size of
 * 'pairs: all'. */
int spec_check_pairs(struct ln_spec *spec)
{
	const struct ln_validation *v = &spec->validation;
	char stages[64] = "";
	uint64_t aligned = 0, cross = 0;
	size_t i, n = 0;
	int r, counted = 0;

	for (i = 0; i < ARRAY_SIZE(pair_stages); i++)
		if (v->present[pair_stages[i]])
			n++;
	for (i = 0, r = 0; i < ARRAY_SIZE(pair_stages); i++) {
		if (!v->present[pair_stages[i]])
			continue;
		r++;
		snprintf(stages + strlen(stages), sizeof(stages) - strlen(stages), "%s'%s'",
			 r == 1 ? "" : r == (int)n ? " and " : ", ", ln_stage_name(pair_stages[i]));
	}
	if (!n)
		return 0;
	check_ips(spec, stages);
	for (i = 0; i < ARRAY_SIZE(pair_stages); i++) {
		enum ln_stage s = pair_stages[i];
		enum ln_pairs pairs;
		enum ln_rail_pairs rails;
		uint64_t total;

		if (!v->present[s])
			continue;
		stage_opts(v, s, &pairs, &rails);
		if (pairs != LN_PAIRS_ALL)
			continue;
		if (!counted) {
			r = count_pairs(spec, &aligned, &cross);
			if (r < 0)
				return r;
			counted = 1;
		}
		total = rails == LN_RAILS_ALL ? sat_add(aligned, cross) : aligned;
		if (total > SPEC_MAX_PAIRS)
			spec_diag(spec, v->mark[s],
				  "stage '%s' with 'pairs: all' would test %llu port pairs%s, more "
				  "than the %u a stage may (its schedule and results take about 80 "
				  "bytes a pair): use 'pairs: ring'", ln_stage_name(s),
				  (unsigned long long)total,
				  rails == LN_RAILS_ALL ? " (at most, with 'rails: all')" : "",
				  SPEC_MAX_PAIRS);
	}
	return 0;
}
