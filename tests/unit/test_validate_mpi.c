/* SPDX-License-Identifier: MIT */
/*
 * The mpi stage against the fake cluster (validate_fake.h): preflight,
 * the probe built on every node and its hashes compared, a node without
 * mpicc, a node whose build differs, two that disagree.
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

static void test_validate_mpi__probe_built_on_every_node(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, "  - { stage: mpi }\n", 1));
	size_t i;

	world_run(w);
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_PASS);
	/* source and mpicc on every node, and no binary carried anywhere */
	for (i = 0; i < 4; i++) {
		assert_int_equal(w->f.src_puts[i], 1);
		assert_int_equal(w->f.mpicc_runs[i], 1);
	}
	assert_int_equal(w->f.bin_puts, 0);
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
	assert_int_equal(w->f.mpicc_runs[0] + w->f.mpicc_runs[1], 2);
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
	assert_int_equal(w->f.mpicc_runs[0], 1);
	assert_int_equal(w->f.mpicc_runs[1], 1);
	assert_int_equal(w->f.mpicc_runs[2], 1);
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

static void test_validate_mpi__no_mpicc_on_a_node(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: mpi }\n", 1));
	const struct ln_check *c;

	w->f.no_mpicc[0] = 1;
	world_run(w);
	c = only_check(&w->res, LN_ST_NOT_RUN, "build the mpi probe");
	assert_string_equal(c->reason, "no mpicc on 'n1'");
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_FAIL);
	assert_int_equal(ln_results_exit(&w->res), 1);
	/* every node tried its own build; mpirun never ran */
	assert_int_equal(w->f.mpicc_runs[0] + w->f.mpicc_runs[1] + w->f.mpicc_runs[2], 3);
	assert_false(w->f.has_mpi_bin[0]);
	assert_int_equal(w->f.runs, 3);
}

/* n2's mpicc is faked and writes its own file: n2 is named and nothing
 * is copied to anyone; mpirun never starts. */
static void test_validate_mpi__odd_build_names_that_node(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: mpi }\n", 1));
	const struct ln_check *c;

	w->f.odd_build[1] = 1;
	world_run(w);
	c = only_check(&w->res, LN_ST_FAIL, "build the mpi probe");
	assert_int_equal(c->a, 1);
	assert_non_null(strstr(c->reason, "MPI probe built on 'n2' differs from the cluster's "
					  "(sha256 "));
	assert_non_null(strstr(c->reason, "; mpirun does not start"));
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_FAIL);
	assert_int_equal(w->f.bin_puts, 0);
	assert_null(strstr(w->f.mpi_bin[0].buf, "payload"));
	assert_null(strstr(w->f.mpi_bin[2].buf, "payload"));
	assert_int_equal(w->f.runs, 3);	/* the builds; no preflight, no mpirun */
}

/* Two nodes whose builds differ: no majority, both are named. */
static void test_validate_mpi__two_nodes_disagree_both_named(void **state)
{
	struct world *w = world_start(state, 2, make_spec(2, "  - { stage: mpi }\n", 1));

	w->f.odd_build[1] = 1;
	world_run(w);
	assert_int_equal(w->res.nchecks, 2);
	assert_int_equal(w->res.checks[0].status, LN_ST_FAIL);
	assert_int_equal(w->res.checks[1].status, LN_ST_FAIL);
	assert_non_null(strstr(w->res.checks[0].reason, "MPI probe built on 'n1' (sha256 "));
	assert_non_null(strstr(w->res.checks[1].reason, "MPI probe built on 'n2' (sha256 "));
	assert_non_null(strstr(w->res.checks[1].reason, "no hash is built by a majority"));
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_FAIL);
	assert_int_equal(w->f.bin_puts, 0);
	assert_int_equal(w->f.runs, 2);
}

/* The NCCL stage: built once on the launcher, copied, one mpirun with a
 * rank per GPU; each way the probe can end is judged as such. */

LN_TEST_MAIN(group_setup, group_teardown,
	WORLD_TEST(test_validate_mpi__preflight_names_the_pair),
	WORLD_TEST(test_validate_mpi__probe_built_on_every_node),
	WORLD_TEST(test_validate_mpi__and_nccl_without_mpi_section),
	WORLD_TEST(test_validate_mpi__launcher_skips_failed_devices),
	WORLD_TEST(test_validate_mpi__no_mpicc_on_a_node),
	WORLD_TEST(test_validate_mpi__odd_build_names_that_node),
	WORLD_TEST(test_validate_mpi__two_nodes_disagree_both_named),
)
