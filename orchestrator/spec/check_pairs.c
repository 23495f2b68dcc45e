/* SPDX-License-Identifier: MIT */
/*
 * The check pass's rules for the pairwise stages (rping, bandwidth,
 * latency): every RDMA port they pair has an 'ip' (rping and perftest
 * connect to it; a port without one could only be "not run").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "orchestrator/spec/impl.h"

static const enum ln_stage pair_stages[] = { LN_STAGE_RPING, LN_STAGE_BANDWIDTH,
					     LN_STAGE_LATENCY };

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

/* The pairwise stages: the 'ip' of the ports they pair. */
int spec_check_pairs(struct ln_spec *spec)
{
	const struct ln_validation *v = &spec->validation;
	char stages[64] = "";
	size_t i, n = 0;
	int r;

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
	return 0;
}
