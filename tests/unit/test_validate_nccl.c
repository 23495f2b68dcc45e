/* SPDX-License-Identifier: MIT */
/*
 * The nccl stage against the fake cluster (validate_fake.h): under
 * mpirun, every op, its environment, uneven GPU counts, a launcher
 * without mpicc.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/validate_fake.h"

static void test_validate_nccl__under_mpirun(void **state)
{
	static const struct {
		const char *printed, *status, *reason;
		size_t blamed;
	} cases[] = {
		/* a wrong result on one node's rank: that node is named and blamed */
		{ "error: rank 13 on n2: all_reduce result wrong at 1073741824 bytes: element "
		  "1023 is 7, expected 6\n"
		  "size 1073741824 time_us 9800.5 algbw 109.56 busbw 201.1 wrong 1\n"
		  "wrong rank 13 host n2 device 5 size 1073741824 elements 1 first 1023 got 7 "
		  "want 6\nresult fail\n", "fail",
		  "the all_reduce result is wrong: rank 13 on 'n2' (GPU 5) received 1 wrong "
		  "elements at 1073741824 bytes, the first (1023) 7 instead of 6", 1 },
		/* on two nodes: both named, the cluster's check */
		{ "size 1073741824 time_us 9800.5 algbw 109.56 busbw 201.1 wrong 3\n"
		  "wrong rank 2 host n1 device 2 size 1073741824 elements 1 first 0 got 7 want 6\n"
		  "wrong rank 9 host n2 device 1 size 1073741824 elements 2 first 5 got 0 want 6\n"
		  "result fail\n", "fail",
		  "the all_reduce result is wrong: rank 2 on 'n1' (GPU 2) received 1 wrong elements "
		  "at 1073741824 bytes, the first (0) 7 instead of 6; rank 9 on 'n2' (GPU 1) "
		  "received 2 wrong elements", LN_NO_NODE },
		{ "error: rank 0 on n1: ncclAllReduce failed: unhandled cuda error\nresult fail\n",
		  "fail", "ncclAllReduce failed", LN_NO_NODE },
		{ "error: rank 3 on n1: the library lacks 'ncclAllReduce': not an NCCL or CUDA "
		  "runtime this probe can use\nresult notrun\n", "not run", "lacks 'ncclAllReduce'",
		  LN_NO_NODE },
		{ "size 1073741824 time_us 9800.5 algbw 50.0 busbw 93.75 wrong 0\nresult pass\n",
		  "fail", "busbw 93.75 GB/s is below 100.00 GB/s", LN_NO_NODE },
	};
	size_t k, i;

	for (k = 0; k < ARRAY_SIZE(cases); k++) {
		struct world *w = world_start(state, 2, make_spec(2, "  - { stage: nccl, bytes: "
								  "1GiB, min_busbw: 100GB/s }\n",
								  1));
		size_t seen = 0;

		snprintf(w->f.nccl_result, sizeof(w->f.nccl_result), "%s", cases[k].printed);
		world_run(w);
		for (i = 0; i < w->res.nchecks; i++) {
			const struct ln_check *c = &w->res.checks[i];

			assert_string_equal(c->name, "nccl all_reduce");
			assert_string_equal(ln_status_name(c->status), cases[k].status);
			assert_int_equal(c->a, cases[k].blamed);
			if (!strstr(c->reason, cases[k].reason))
				fail_msg("case %zu: '%s' lacks '%s'", k, c->reason, cases[k].reason);
			seen++;
		}
		assert_int_equal(seen, 1);
		assert_int_equal(w->res.stages[LN_STAGE_NCCL].status, LN_ST_FAIL);
		assert_int_equal(w->f.nccl_mpicc_runs[0] + w->f.nccl_mpicc_runs[1], 1);
		world_teardown(state);
		world_setup(state);
	}
}

/* nccl.op reaches the probe's --op and names the check, for every op. */
static void test_validate_nccl__every_op(void **state)
{
	static const char *const ops[] = { "all_reduce", "all_gather", "reduce_scatter",
					    "broadcast", "reduce" };
	char stage[128], name[64];
	size_t k;

	for (k = 0; k < ARRAY_SIZE(ops); k++) {
		struct world *w;

		snprintf(stage, sizeof(stage), "  - { stage: nccl, op: %s }\n", ops[k]);
		w = world_start(state, 2, make_spec(2, stage, 1));
		world_run(w);
		snprintf(name, sizeof(name), "nccl %s", ops[k]);
		assert_int_equal(w->res.nchecks, 1);
		assert_string_equal(w->res.checks[0].name, name);
		assert_int_equal(w->res.checks[0].status, LN_ST_PASS);
		assert_string_equal(w->f.nccl_op, ops[k]);
		world_teardown(state);
		world_setup(state);
	}
}

/* The NCCL environment on the probe's command line: NCCL_IB_HCA from each
 * node's declared ports (the list most nodes share, and the node that
 * differs by its host), NCCL_IB_GID_INDEX only while every port agrees,
 * socket_ifname and nccl.env in the spec's order. */
static void test_validate_nccl__environment(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: nccl, socket_ifname: "
							 "\"^docker\", env: { NCCL_ALGO: Ring, "
							 "NCCL_IB_TC: 106 } }\n", 1));
	struct ln_node *nodes = w->spec->nodes;
	size_t i;

	for (i = 0; i < 3; i++)
		nodes[i].rdma[0].gid_index = 3;
	nodes[2].rdma[0].device = "mlx5_0";
	world_run(w);
	assert_int_equal(w->res.nchecks, 1);
	assert_int_equal(w->res.checks[0].status, LN_ST_PASS);
	if (!strstr(w->f.nccl_argv, " --expect-ranks 24 --hca rxe0:1 --hca-at n3=mlx5_0:1 "
			"--gid-index 3 --socket-ifname ^docker --env NCCL_ALGO=Ring --env "
			"NCCL_IB_TC=106"))
		fail_msg("argv: %s", w->f.nccl_argv);
	ln_results_release(&w->res);

	/* one port on another GID index: NCCL chooses its own */
	nodes[1].rdma[0].gid_index = 2;
	fake_release(&w->f);
	fake_init(&w->f, 3);
	world_run(w);
	assert_int_equal(w->res.checks[0].status, LN_ST_PASS);
	assert_non_null(strstr(w->f.nccl_argv, " --hca-at n3=mlx5_0:1 --socket-ifname ^docker "));
	assert_null(strstr(w->f.nccl_argv, "--gid-index"));
}

/* Uneven GPU counts: the hostfile's slots (= gpus) place the ranks; a
 * node whose slots differ from its GPUs makes the stage "not run". */
static void test_validate_nccl__uneven_gpus(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: nccl }\n", 1));

	w->spec->nodes[1].gpus = 4;
	w->spec->nodes[1].slots = 4;
	w->f.nccl_np = 8 + 4 + 8;
	world_run(w);
	assert_int_equal(w->res.nchecks, 1);
	assert_int_equal(w->res.checks[0].status, LN_ST_PASS);
	ln_results_release(&w->res);

	w->spec->nodes[1].slots = 1;
	fake_release(&w->f);
	fake_init(&w->f, 3);
	world_run(w);
	assert_int_equal(w->res.nchecks, 1);
	assert_int_equal(w->res.checks[0].status, LN_ST_NOT_RUN);
	assert_string_equal(w->res.checks[0].reason, "one rank per GPU: the nodes declare different "
				"GPU counts and 'n2' has 1 MPI slots for 4 GPUs (make its slots "
				"equal its gpus)");
	assert_int_equal(w->f.runs, 0);
}

static void test_validate_nccl__no_mpicc_on_launcher(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: nccl }\n", 1));

	w->f.no_mpicc[0] = 1;
	world_run(w);
	assert_int_equal(w->res.nchecks, 1);
	assert_int_equal(w->res.checks[0].status, LN_ST_NOT_RUN);
	assert_string_equal(w->res.checks[0].name, "build the nccl probe");
	assert_string_equal(w->res.checks[0].reason, "no mpicc on 'n1'");
	assert_int_equal(w->res.stages[LN_STAGE_NCCL].status, LN_ST_FAIL);
	assert_int_equal(ln_results_exit(&w->res), 1);
	assert_int_equal(w->f.runs, 1);	/* mpicc once, no mpirun */
}

/* The io stage's world: n1 exports, n2 (mounted) and n4 (raw) hold a live
 * controller with its namespace, n3 has none. */

/* A node without GPUs (a storage node, slots 1): the ranks go to the GPU
 * nodes only, by --host NAME:GPUS, one per GPU; the hostfile is not used. */
static void test_validate_nccl__gpuless_node(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: nccl }\n", 1));

	w->spec->nodes[1].gpus = 0;
	w->spec->nodes[1].slots = 1;
	w->f.nccl_np = 16;
	w->f.nccl_hosts = "n1:8,n3:8";
	world_run(w);
	assert_int_equal(w->res.nchecks, 1);
	assert_int_equal(w->res.checks[0].status, LN_ST_PASS);
	assert_non_null(strstr(w->f.nccl_argv, " --host n1:8,n3:8 -np 16 "));
	assert_null(strstr(w->f.nccl_argv, "--hostfile"));
}

LN_TEST_MAIN(group_setup, group_teardown,
	WORLD_TEST(test_validate_nccl__under_mpirun),
	WORLD_TEST(test_validate_nccl__every_op),
	WORLD_TEST(test_validate_nccl__environment),
	WORLD_TEST(test_validate_nccl__uneven_gpus),
	WORLD_TEST(test_validate_nccl__gpuless_node),
	WORLD_TEST(test_validate_nccl__no_mpicc_on_launcher),
)
