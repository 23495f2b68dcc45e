/* SPDX-License-Identifier: MIT */
/*
 * The check pass's rules between a validation stage and the rest of the
 * spec that check.c's check_validation does not hold: what a stage
 * cannot do with the MPI, storage or port settings it is given; and
 * which namespace an initiator's mount means.
 */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "orchestrator/spec/impl.h"

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

/* A destructive io stage writes the raw namespaces initiators reach; an
 * adopted file is the user's data, which llmnet never destroys. The first
 * one found is reported. */
static void check_destructive_adopt(struct ln_spec *spec)
{
	const struct ln_validation *v = &spec->validation;
	size_t i, k;

	if (!v->present[LN_STAGE_IO] || !v->io.destructive)
		return;
	for (i = 0; i < spec->n_initiators; i++) {
		const struct ln_target *t;

		if (spec->initiators[i].target >= spec->n_targets)
			continue;
		t = &spec->targets[spec->initiators[i].target];
		for (k = 0; k < t->n_namespaces; k++)
			if (t->namespaces[k].adopt) {
				spec_diag(spec, v->mark[LN_STAGE_IO],
					  "stage 'io' is destructive but namespace %u of '%s' adopts "
					  "'%s' (line %u): llmnet never destroys an adopted file; "
					  "remove 'destructive' or 'adopt'",
					  t->namespaces[k].nsid, t->nqn,
					  t->namespaces[k].file ? t->namespaces[k].file : "?",
					  t->namespaces[k].mark.line);
				return;
			}
	}
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

void spec_check_stage_rules(struct ln_spec *spec)
{
	check_port_base(spec);
	check_mpi_format(spec);
	check_destructive_adopt(spec);
}

void spec_check_mount_ns(struct ln_spec *spec, size_t i)
{
	const struct ln_initiator *in = &spec->initiators[i];
	const struct ln_target *t = &spec->targets[in->target];

	if (t->n_namespaces > 1)
		spec_diag(spec, in->mount.mark,
			  "initiator on '%s' mounts target '%s', which has %zu namespaces: a "
			  "mount needs a target with one namespace, so which one it means is "
			  "never in doubt (give the mounted one a target of its own)",
			  spec->nodes[in->node].name, t->nqn, t->n_namespaces);
}
