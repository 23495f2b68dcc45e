/* SPDX-License-Identifier: MIT */
/*
 * The check pass's rules between a validation stage and the rest of the
 * spec that check.c's check_validation does not hold: what a stage
 * cannot do with the MPI, storage or port settings it is given.
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

void spec_check_stage_rules(struct ln_spec *spec)
{
	check_mpi_format(spec);
}
