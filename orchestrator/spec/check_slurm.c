/* SPDX-License-Identifier: MIT */
/*
 * The slurm section's rules (check.h): its node is a declared one (where
 * the agent runs scontrol), and every node has one Slurm name of its own
 * (slurm_name, else its name), checked by a sort.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/spec/check.h"

static int by_slurm_name(const void *a, const void *b)
{
	const struct ln_node *x = *(const struct ln_node *const *)a;
	const struct ln_node *y = *(const struct ln_node *const *)b;

	return strcmp(x->slurm_name, y->slurm_name);
}

/* Each node's Slurm name: its own, else its name; two nodes with one
 * (a slurm_name in a range entry, or one that is another node's name)
 * are reported at the second. */
static int slurm_names_once(struct ln_spec *spec)
{
	struct ln_node **v;
	size_t i;

	for (i = 0; i < spec->n_nodes; i++)
		if (!spec->nodes[i].slurm_name)
			spec->nodes[i].slurm_name = spec->nodes[i].name;
	if (spec->n_nodes < 2)
		return 0;
	v = malloc(spec->n_nodes * sizeof(*v));
	if (!v)
		return -1;
	for (i = 0; i < spec->n_nodes; i++)
		v[i] = &spec->nodes[i];
	qsort(v, spec->n_nodes, sizeof(*v), by_slurm_name);
	/* two nodes of one name are reported as such (check_nodes.c) */
	for (i = 1; i < spec->n_nodes; i++)
		if (!strcmp(v[i - 1]->slurm_name, v[i]->slurm_name) &&
		    strcmp(v[i - 1]->name, v[i]->name))
			spec_diag(spec, v[i]->mark, "nodes '%s' and '%s' have one Slurm name, "
				  "'%s' (slurm_name is one node's; not for a range)",
				  v[i - 1]->name, v[i]->name, v[i]->slurm_name);
	free(v);
	return 0;
}

int spec_check_slurm(struct spec_check_ctx *x)
{
	struct ln_spec *spec = x->spec;
	const struct ln_slurm_spec *s = &spec->slurm;

	if (s->present && s->node && ln_spec_node_index(spec, s->node) < 0)
		spec_diag(spec, s->node_mark.line ? s->node_mark : s->mark,
			  "slurm.node '%s' is not a declared node (scontrol runs there, through "
			  "its agent)", s->node);
	return slurm_names_once(spec) < 0 ? -ENOMEM : 0;
}
