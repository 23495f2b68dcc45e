/* SPDX-License-Identifier: MIT */
/*
 * llmnet validate --dry-run: the schedule of a run, from the spec alone.
 * The pairwise stages' rounds come from the same ln_rails_schedule() the
 * run uses, so what is printed is what would run (as long as no pair is
 * skipped for a failed device or rping).
 */
#include <errno.h>
#include <stdlib.h>

#include "common/nccl_env.h"
#include "orchestrator/validate/rails.h"
#include "orchestrator/validate/results.h"
#include "orchestrator/validate/stage_common.h"
#include "orchestrator/validate/stages.h"

static const char *const what[LN_STAGE_COUNT] = {
	[LN_STAGE_DEVICES] = "every node's declared RDMA ports, GPUs, namespaces and discovery logs",
	[LN_STAGE_IO] = "every initiator's namespaces",
	[LN_STAGE_MPI] = "one MPI job over the nodes' slots",
	[LN_STAGE_NCCL] = "one NCCL collective over the GPUs",
	[LN_STAGE_ACCESS] = "connects every target must refuse, from its nodes",
};

/* nccl-tests at scope cluster: one mpirun, then each scaling count. */
static void nccl_tests_cluster(const struct ln_spec *spec, struct ln_buf *out)
{
	const struct ln_validation *v = &spec->validation;
	size_t i;
	unsigned np = 0;

	for (i = 0; i < spec->n_nodes; i++)
		np += spec->nodes[i].gpus;
	ln_buf_addf(out, "nccl: nccl-tests' %s/%s by mpirun across the GPU nodes, %u ranks "
		    "(no pairs)\n", v->nccl.tests_dir, ln_nccl_tests_program(v->nccl.op), np);
	for (i = 0; i < v->nccl.n_scaling; i++)
		ln_buf_addf(out, "  scaling: again on the first %u GPU nodes\n", v->nccl.scaling[i]);
}

/* nccl-tests at scope node or launcher none: what runs on each GPU node,
 * its path first (launcher none: after the library path the agent sets;
 * the NCCL variables it adds come from the facts, at the run). */
static void nccl_tests(const struct ln_spec *spec, struct ln_buf *out)
{
	const struct ln_validation *v = &spec->validation;
	int direct = v->nccl.launcher == LN_NCCL_LAUNCHER_NONE;
	size_t i;

	ln_buf_addf(out, "nccl: nccl-tests' %s on each GPU node alone%s (no pairs)\n",
		    ln_nccl_tests_program(v->nccl.op),
		    direct ? ", started by its agent (launcher none, no MPI)" : "");
	for (i = 0; i < spec->n_nodes; i++) {
		struct argv av = { .n = 0 };
		char *line;

		if (!spec->nodes[i].gpus)
			continue;
		vs_nccl_tests_argv(spec, i, &av);
		if (direct)
			vs_nccl_lib_env(v, &av);
		line = vs_argv_join(&av);
		ln_buf_addf(out, "  %s: %s\n", spec->nodes[i].name, line ? line : av.v[0]);
		free(line);
		vs_argv_free(&av);
	}
}

static int pairwise(const struct ln_spec *spec, const struct ln_railmap *m, enum ln_stage st,
		    struct ln_buf *out, struct ln_buf *err)
{
	struct ln_schedule s = LN_SCHEDULE_INIT;
	struct ln_rail_opts ro;
	int r;

	ln_rails_stage_opts(spec, st, &ro);
	r = ln_rails_schedule(m, &ro, &s, err);
	if (r < 0)
		return r;
	ln_buf_addf(out, "%s: pairs %s, rails %s%s: %zu pairs in %zu rounds\n", ln_stage_name(st),
		    ln_pairing_name(ro.kind), ro.rails == LN_RAILS_ALL ? "all" : "aligned",
		    ro.concurrent ? ", concurrent rails" : "", s.npairs, s.nrounds);
	ln_rails_schedule_text(m, &s, spec, out);
	ln_schedule_release(&s);
	return 0;
}

int ln_validate_schedule(const struct ln_spec *spec, unsigned mask, struct ln_buf *out,
			 struct ln_buf *err)
{
	struct ln_railmap m = LN_RAILMAP_INIT;
	size_t i, k;
	int r;

	r = ln_railmap_from_spec(spec, &m, err);
	if (r < 0)
		return r;
	ln_buf_addf(out, "schedule of '%s': %zu nodes, %zu rails:", spec->cluster, spec->n_nodes,
		    m.nrails);
	for (i = 0; i < m.nrails; i++) {
		size_t on = 0;

		for (k = 0; k < m.nnodes; k++)
			on += m.port[k * m.nrails + i] >= 0;
		ln_buf_addf(out, "%s %s (%zu nodes)", i ? "," : "", m.names[i], on);
	}
	ln_buf_addch(out, '\n');
	for (i = 0; i < spec->validation.n_order && r == 0; i++) {
		enum ln_stage st = spec->validation.order[i];

		if (mask && !(mask & (1u << st)))
			continue;
		if (ln_stage_pairwise(st))
			r = pairwise(spec, &m, st, out, err);
		else if (st == LN_STAGE_NCCL && spec->validation.nccl.tool == LN_NCCL_TESTS &&
			 (spec->validation.nccl.scope == LN_NCCL_SCOPE_NODE ||
			  spec->validation.nccl.launcher == LN_NCCL_LAUNCHER_NONE))
			nccl_tests(spec, out);
		else if (st == LN_STAGE_NCCL && spec->validation.nccl.tool == LN_NCCL_TESTS)
			nccl_tests_cluster(spec, out);
		else
			ln_buf_addf(out, "%s: %s (no pairs)\n", ln_stage_name(st), what[st]);
	}
	ln_railmap_release(&m);
	return r;
}
