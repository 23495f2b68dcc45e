/* SPDX-License-Identifier: MIT */
/*
 * The mpi stage against the fake cluster (validate_fake.h): preflight,
 * the probe built once on the launcher and copied, a launcher without
 * mpicc, a corrupt copy.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/validate_fake.h"

static void test_validate_mpi__preflight_names_the_pair(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: mpi }\n", 1));

	w->f.no_ssh[1][2] = 1;
	world_run(w);
	assert_verdicts(w, "mpi:link:n2-n3 ");
	assert_non_null(strstr(w->res.verdicts[0].reason, "'n2' cannot start a rank on 'n3' (by SSH "
							"and name): no mpi probe result: 'ssh: Could "
							"not resolve hostname n3"));
	/* the full mpirun never started */
	assert_int_equal(w->res.stages[LN_STAGE_MPI].passed, 5);
	assert_int_equal(w->res.stages[LN_STAGE_MPI].failed, 1);
	assert_int_equal(ln_results_exit(&w->res), 1);
}

static void test_validate_mpi__probe_built_once_and_copied(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, "  - { stage: mpi }\n", 1));
	size_t i;

	world_run(w);
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_PASS);
	/* source and mpicc on the launcher (n1) only ... */
	assert_int_equal(w->f.src_puts[0], 1);
	assert_int_equal(w->f.mpicc_runs[0], 1);
	for (i = 1; i < 4; i++) {
		assert_int_equal(w->f.src_puts[i], 0);
		assert_int_equal(w->f.mpicc_runs[i], 0);
	}
	/* ... and its build, byte for byte, on every other node */
	assert_non_null(strstr(w->f.mpi_bin[0].buf, "built by mpicc on n1"));
	assert_true(same_bin_everywhere(&w->f, 0, 0));
	assert_int_equal(ln_results_exit(&w->res), 0);
}

/* No mpi section: apply wrote the hostfile at its default path all the
 * same, so mpi and nccl run over it (they said "not run" before). */
static void test_validate_mpi__and_nccl_without_mpi_section(void **state)
{
	struct world *w = world_start(state, 2, make_spec(2, "  - { stage: mpi }\n"
							  "  - { stage: nccl }\n", 0));

	assert_false(w->spec->mpi.present);
	assert_string_equal(w->spec->mpi.hostfile, "/etc/llmnet/hostfile");
	world_run(w);
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_PASS);
	assert_int_equal(w->res.stages[LN_STAGE_NCCL].status, LN_ST_PASS);
	assert_int_equal(w->f.mpicc_runs[0] + w->f.mpicc_runs[1], 1);
	assert_int_equal(ln_results_exit(&w->res), 0);
}

static void test_validate_mpi__launcher_skips_failed_devices(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: devices }\n"
							  "  - { stage: mpi }\n", 1));

	/* n1's port is down: the launcher is n2 */
	json_object_put(w->f.facts[0]);
	w->f.facts[0] = json_tokener_parse("{\"hostname\":\"n1\",\"rdma\":[],\"gpus\":"
					"{\"count\":8},\"nvme\":[]}");
	assert_non_null(w->f.facts[0]);
	world_run(w);
	assert_int_equal(w->f.mpicc_runs[0], 0);
	assert_int_equal(w->f.mpicc_runs[1], 1);
	assert_int_equal(w->f.mpicc_runs[2], 0);
	assert_true(same_bin_everywhere(&w->f, 0, 1));
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_PASS);
}

/* The run's one check, of that status and name. */
static const struct ln_check *only_check(const struct ln_results *res, enum ln_status status,
					 const char *name)
{
	assert_int_equal(res->nchecks, 1);
	assert_int_equal(res->checks[0].status, status);
	assert_string_equal(res->checks[0].name, name);
	return &res->checks[0];
}

static void test_validate_mpi__no_mpicc_on_launcher(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: mpi }\n", 1));
	const struct ln_check *c;

	w->f.no_mpicc[0] = 1;
	world_run(w);
	c = only_check(&w->res, LN_ST_NOT_RUN, "build the mpi probe");
	assert_string_equal(c->reason, "no mpicc on 'n1'");
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_FAIL);
	assert_int_equal(ln_results_exit(&w->res), 1);
	/* mpicc was tried once, nothing was copied, mpirun never ran */
	assert_int_equal(w->f.mpicc_runs[0] + w->f.mpicc_runs[1] + w->f.mpicc_runs[2], 1);
	assert_false(w->f.has_mpi_bin[1] || w->f.has_mpi_bin[2]);
	assert_int_equal(w->f.runs, 1);
}

static void test_validate_mpi__corrupt_copy_fails_that_node(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: mpi }\n", 1));
	const struct ln_check *c;

	w->f.corrupt_copy[2] = 1;
	world_run(w);
	c = only_check(&w->res, LN_ST_FAIL, "copy the mpi probe");
	assert_int_equal(c->a, 2);
	assert_non_null(strstr(c->reason, "the mpi probe copied to 'n3' has sha256 "));
	assert_non_null(strstr(c->reason, "the one built on 'n1' "));
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_FAIL);
	assert_int_equal(w->f.mpicc_runs[0], 1);
	assert_int_equal(w->f.runs, 1);	/* no preflight, no mpirun on a bad copy */
}

/* The NCCL stage: built once on the launcher, copied, one mpirun with a
 * rank per GPU; each way the probe can end is judged as such. */

LN_TEST_MAIN(group_setup, group_teardown,
	WORLD_TEST(test_validate_mpi__preflight_names_the_pair),
	WORLD_TEST(test_validate_mpi__probe_built_once_and_copied),
	WORLD_TEST(test_validate_mpi__and_nccl_without_mpi_section),
	WORLD_TEST(test_validate_mpi__launcher_skips_failed_devices),
	WORLD_TEST(test_validate_mpi__no_mpicc_on_launcher),
	WORLD_TEST(test_validate_mpi__corrupt_copy_fails_that_node),
)
