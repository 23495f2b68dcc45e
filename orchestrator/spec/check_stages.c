/* SPDX-License-Identifier: MIT */
/*
 * The check pass's rules for the validation stages: their run order, what
 * each needs of the spec (two RDMA nodes, an initiator, slots for its
 * processes, GPUs, no mount under a destructive io stage), and what a
 * stage cannot do with the MPI, storage or port settings it is given.
 * A pairwise stage's ports and rails are check_pairs.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "common/places.h"
#include "common/util.h"
#include "orchestrator/spec/check.h"

/* A program folder llmnet runs as root from (nccl.tests_dir, a pairwise
 * stage's perftest_dir, the libraries nccl-tests loads) must not be
 * on a file system an initiator mounts: its bytes, uid 0 and setuid bits
 * included, are written by the target node and every host it allows. */
static void check_program_dirs(struct ln_spec *spec)
{
	const struct ln_validation *v = &spec->validation;
	const struct {
		const char *key, *dir;
		struct ln_mark mark;
	} dirs[] = {
		{ "tests_dir", v->present[LN_STAGE_NCCL] ? v->nccl.tests_dir : NULL,
		  v->nccl.tests_dir_mark },
		{ "perftest_dir", v->present[LN_STAGE_BANDWIDTH] ? v->bandwidth.perftest_dir : NULL,
		  v->bandwidth.perftest_dir_mark },
		{ "perftest_dir", v->present[LN_STAGE_LATENCY] ? v->latency.perftest_dir : NULL,
		  v->latency.perftest_dir_mark },
		{ "nccl_lib", v->present[LN_STAGE_NCCL] ? v->nccl.nccl_lib : NULL,
		  v->nccl.nccl_lib_mark },
		{ "cuda_lib", v->present[LN_STAGE_NCCL] ? v->nccl.cuda_lib : NULL,
		  v->nccl.cuda_lib_mark },
	};
	size_t i, k;

	for (k = 0; k < ARRAY_SIZE(dirs); k++) {
		if (!dirs[k].dir || dirs[k].dir[0] != '/')
			continue;
		for (i = 0; i < spec->n_initiators; i++) {
			const struct ln_initiator *in = &spec->initiators[i];
			const char *m = in->mount.path;

			if (!in->mount.present || !m || m[0] != '/' ||
			    !ln_path_under(dirs[k].dir, m))
				continue;
			spec_diag(spec, dirs[k].mark,
				  "'%s' '%s' is on the NVMe-oF file system that the initiator on "
				  "line %u mounts at '%s' on node '%s', whose files the target "
				  "writes: keep programs llmnet runs on a local disk",
				  dirs[k].key, dirs[k].dir, in->mark.line, m,
				  in->node < spec->n_nodes ? spec->nodes[in->node].name : "?");
			break;
		}
	}
}

void spec_check_validation(struct ln_spec *spec)
{
	struct ln_validation *v = &spec->validation;
	size_t i, with_rdma = 0, slots = 0, gpus = 0;
	int s;

	for (i = 0; i < spec->n_nodes; i++) {
		with_rdma += spec->nodes[i].n_rdma > 0;
		slots += spec->nodes[i].slots;
		gpus += spec->nodes[i].gpus;
	}
	v->n_order = 0;
	for (s = 0; s < LN_STAGE_COUNT; s++)
		if (v->present[s])
			v->order[v->n_order++] = (enum ln_stage)s;
	for (s = LN_STAGE_RPING; s <= LN_STAGE_LATENCY; s++)
		if (v->present[s] && with_rdma < 2)
			spec_diag(spec, v->mark[s],
				  "stage '%s' needs two nodes with RDMA ports; the spec has %zu",
				  ln_stage_name((enum ln_stage)s), with_rdma);
	for (s = LN_STAGE_RPING; s <= LN_STAGE_LATENCY; s++)
		if (v->present[s] && with_rdma >= 2) {
			spec_check_lone_rails(spec, (enum ln_stage)s);
			break;
		}
	if (v->present[LN_STAGE_IO] && !spec->n_initiators)
		spec_diag(spec, v->mark[LN_STAGE_IO], "stage 'io' needs an initiator; the spec has none");
	if (v->present[LN_STAGE_ACCESS] && !spec->n_targets)
		spec_diag(spec, v->mark[LN_STAGE_ACCESS],
			  "stage 'access' needs a target; the spec has none");
	if (v->present[LN_STAGE_IO] && v->io.destructive) {
		for (i = 0; i < spec->n_initiators; i++) {
			const struct ln_initiator *in = &spec->initiators[i];

			if (in->mount.present) {
				spec_diag(spec, v->mark[LN_STAGE_IO],
					  "stage 'io' is destructive but the initiator on line %u mounts its namespace at '%s'",
					  in->mark.line, in->mount.path ? in->mount.path : "?");
				break;
			}
		}
	}
	if (v->present[LN_STAGE_MPI] && v->mpi.np > slots)
		spec_diag(spec, v->mark[LN_STAGE_MPI],
			  "stage 'mpi' asks for %u processes but the nodes have %zu slots", v->mpi.np,
			  slots);
	check_program_dirs(spec);
	if (v->present[LN_STAGE_NCCL] && !gpus)
		spec_diag(spec, v->mark[LN_STAGE_NCCL],
			  "stage 'nccl' needs GPUs but no node declares any ('gpus')");
}

/* The nccl stage runs one rank per GPU, which mpirun places in the
 * nodes' slots: a node with fewer slots than GPUs cannot hold its ranks.
 * A scaling sweep runs on the first N GPU nodes, so N cannot pass them. */
static void check_nccl_nodes(struct ln_spec *spec)
{
	const struct ln_validation *v = &spec->validation;
	size_t i, gpu_nodes = 0;

	if (!v->present[LN_STAGE_NCCL])
		return;
	for (i = 0; i < spec->n_nodes; i++) {
		const struct ln_node *n = &spec->nodes[i];

		gpu_nodes += n->gpus > 0;
		if (n->gpus && n->slots < n->gpus)
			spec_diag(spec, n->mark, "node '%s' has slots: %u, fewer than its gpus: %u: "
				  "the nccl stage runs one rank per GPU in the node's slots (give "
				  "it slots: %u, or leave slots out)", n->name ? n->name : "?",
				  n->slots, n->gpus, n->gpus);
	}
	if (v->nccl.n_scaling && v->nccl.scaling[v->nccl.n_scaling - 1] > gpu_nodes)
		spec_diag(spec, v->nccl.scaling_mark, "'scaling' asks for %u nodes, but %zu "
			  "node%s declare%s GPUs", v->nccl.scaling[v->nccl.n_scaling - 1], gpu_nodes,
			  gpu_nodes == 1 ? "" : "s", gpu_nodes == 1 ? "s" : "");
	/* without MPI there is one process a node: across nodes its ranks
	 * cannot meet, so scope cluster means one GPU node only */
	if (v->nccl.tool != LN_NCCL_PROBE && v->nccl.launcher == LN_NCCL_LAUNCHER_NONE &&
	    v->nccl.scope == LN_NCCL_SCOPE_CLUSTER && gpu_nodes > 1)
		spec_diag(spec, v->nccl.launcher_mark, "launcher none starts one nccl-tests process "
			  "a node, with no MPI to join %zu GPU nodes' ranks into one run: set "
			  "scope: node (each node alone), or launcher: mpirun", gpu_nodes);
}

/* The mpi and nccl stages launch Open MPI's mpirun over the hostfile,
 * which reads only "HOST slots=N" lines. */
static void check_mpi_format(struct ln_spec *spec)
{
	const struct ln_validation *v = &spec->validation;
	static const enum ln_stage mpi_stages[] = { LN_STAGE_MPI, LN_STAGE_NCCL };
	size_t k;

	if (spec->mpi.format != LN_MPI_MPICH)
		return;
	for (k = 0; k < ARRAY_SIZE(mpi_stages); k++)
		if (v->present[mpi_stages[k]])
			spec_diag(spec, v->mark[mpi_stages[k]],
				  "stage '%s' runs Open MPI's mpirun, which reads only 'HOST slots=N' "
				  "hostfile lines, but mpi.format is 'mpich' (write format: openmpi, "
				  "or drop the stage)",
				  ln_stage_name(mpi_stages[k]));
}

static int ns_adopts(const struct ln_namespace *ns)
{
	return ns->adopt;
}

static int ns_is_device(const struct ln_namespace *ns)
{
	return ns->device != NULL;
}

/* The first namespace that an initiator reaches and that matches
 * (NULL when none), its target into *tp: what a destructive io stage
 * would overwrite. */
static const struct ln_namespace *reached_ns(const struct ln_spec *spec,
					     int (*matches)(const struct ln_namespace *),
					     const struct ln_target **tp)
{
	size_t i, k;

	for (i = 0; i < spec->n_initiators; i++) {
		const struct ln_target *t;

		if (spec->initiators[i].target >= spec->n_targets)
			continue;
		t = &spec->targets[spec->initiators[i].target];
		for (k = 0; k < t->n_namespaces; k++)
			if (matches(&t->namespaces[k])) {
				*tp = t;
				return &t->namespaces[k];
			}
	}
	return NULL;
}

/* A destructive io stage overwrites the raw namespaces initiators reach.
 * An adopted file is the user's data, which llmnet never destroys; a
 * device: namespace is a disk llmnet did not create either, overwritten
 * only when io.destructive_device names that risk. The first of each is
 * reported. */
static void check_destructive_foreign(struct ln_spec *spec)
{
	const struct ln_validation *v = &spec->validation;
	const struct ln_target *t = NULL;
	const struct ln_namespace *ns;

	if (!v->present[LN_STAGE_IO] || !v->io.destructive)
		return;
	if ((ns = reached_ns(spec, ns_adopts, &t)))
		spec_diag(spec, v->mark[LN_STAGE_IO],
			  "stage 'io' is destructive but namespace %u of '%s' adopts '%s' "
			  "(line %u): llmnet never destroys an adopted file; remove "
			  "'destructive' or 'adopt'",
			  ns->nsid, t->nqn, ns->file ? ns->file : "?", ns->mark.line);
	if (!v->io.destructive_device && (ns = reached_ns(spec, ns_is_device, &t)))
		spec_diag(spec, v->mark[LN_STAGE_IO],
			  "stage 'io' is destructive but namespace %u of '%s' exports the "
			  "disk '%s' (line %u), whose data it would overwrite; write "
			  "'destructive_device: true' to allow that, or remove 'destructive'",
			  ns->nsid, t->nqn, ns->device, ns->mark.line);
}

/* bandwidth and latency run pair k of a round on TCP port port_base + k;
 * a round's pairs share no RDMA port, so it holds at most half the
 * ports: the last port used stays within 65535. */
static void check_port_base(struct ln_spec *spec)
{
	const struct ln_validation *v = &spec->validation;
	const enum ln_stage st[] = { LN_STAGE_BANDWIDTH, LN_STAGE_LATENCY };
	const unsigned base[] = { v->bandwidth.port_base, v->latency.port_base };
	size_t i, k, ports = 0, most;

	for (i = 0; i < spec->n_nodes; i++)
		ports += spec->nodes[i].n_rdma;
	most = ports / 2;
	for (k = 0; k < ARRAY_SIZE(st); k++)
		if (v->present[st[k]] && most && base[k] + most - 1 > 65535)
			spec_diag(spec, v->mark[st[k]],
				  "stage '%s' runs up to %zu pairs in one round (the nodes have %zu "
				  "RDMA ports) on TCP ports from port_base %u: %zu is past 65535 "
				  "(make port_base at most %zu)",
				  ln_stage_name(st[k]), most, ports, base[k], base[k] + most - 1,
				  65536 - most);
}

/* msg_size sizes the message-rate run, which runs only with a threshold:
 * alone it would change nothing. */
static void check_msg_rate(struct ln_spec *spec)
{
	const struct ln_validation *v = &spec->validation;

	if (v->present[LN_STAGE_BANDWIDTH] && v->bandwidth.msg_size && !(v->bandwidth.min_msg_rate > 0))
		spec_diag(spec, v->mark[LN_STAGE_BANDWIDTH],
			  "stage 'bandwidth' has 'msg_size' but no 'min_msg_rate': the message-rate "
			  "run (at msg_size) runs only with its threshold; add 'min_msg_rate' or "
			  "remove 'msg_size'");
}

void spec_check_stage_rules(struct ln_spec *spec)
{
	check_port_base(spec);
	check_msg_rate(spec);
	check_mpi_format(spec);
	check_nccl_nodes(spec);
	check_destructive_foreign(spec);
}
