/* SPDX-License-Identifier: MIT */
/*
 * The nccl stage against the fake cluster (validate_fake.h): under
 * mpirun, every op, its environment, uneven GPU counts, a launcher
 * without mpicc, a size sweep (per size in every report, judged at the
 * largest).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/report/report.h"
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
		assert_int_equal(w->f.nccl_mpicc_runs[0] + w->f.nccl_mpicc_runs[1], 2);
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
	assert_int_equal(w->f.runs, 3);	/* mpicc on each node, no mpirun */
}

/* n3's mpicc writes its own NCCL probe: n3 is named, nothing is copied
 * to anyone and mpirun never starts. */
static void test_validate_nccl__odd_build_names_that_node(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: nccl }\n", 1));

	w->f.odd_build[2] = 1;
	world_run(w);
	assert_int_equal(w->res.nchecks, 1);
	assert_int_equal(w->res.checks[0].status, LN_ST_FAIL);
	assert_int_equal(w->res.checks[0].a, 2);
	assert_non_null(strstr(w->res.checks[0].reason, "NCCL probe built on 'n3' differs from "
							 "the cluster's (sha256 "));
	assert_int_equal(w->f.bin_puts, 0);
	assert_int_equal(w->f.runs, 3);
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

/* Four sizes, 1 KiB to 8 KiB, with these busbw (GB/s); wrong elements at
 * the first size when wrong0. */
static void sweep_output(struct world *w, const double busbw[4], int wrong0)
{
	size_t n = 0;
	int k;

	for (k = 0; k < 4; k++)
		n += (size_t)snprintf(w->f.nccl_result + n, sizeof(w->f.nccl_result) - n,
				      "size %d time_us 10.0 algbw %.2f busbw %.2f wrong %d\n",
				      1024 << k, busbw[k] / 2, busbw[k], k == 0 && wrong0);
	if (wrong0)
		n += (size_t)snprintf(w->f.nccl_result + n, sizeof(w->f.nccl_result) - n,
				      "wrong rank 3 host n1 device 3 size 1024 elements 1 first 7 "
				      "got 9 want 8\n");
	snprintf(w->f.nccl_result + n, sizeof(w->f.nccl_result) - n, "result %s\n",
		 wrong0 ? "fail" : "pass");
}

static void assert_has(const struct ln_buf *b, const char *what, const char *part)
{
	if (!strstr(b->buf, part))
		fail_msg("%s lacks '%s':\n%s", what, part, b->buf);
}

/* Every report shows busbw at each size of the sweep. */
static void sweep_in_reports(const struct ln_results *res)
{
	struct ln_buf b = LN_BUF_INIT;

	ln_report_text(res, 0, &b);
	assert_has(&b, "text", "busbw by size 1KiB 10, 2KiB 20, 4KiB 50, 8KiB 150 GB/s "
		   "(judged at 8KiB)");
	ln_buf_reset(&b);
	assert_int_equal(ln_report_json(res, 0, &b), 0);
	assert_has(&b, "json", "\"sizes\":[{\"bytes\":1024,\"algbw_gbs\":5.0,\"busbw_gbs\":10.0,"
		   "\"wrong\":0}");
	assert_has(&b, "json", "{\"bytes\":8192,\"algbw_gbs\":75.0,\"busbw_gbs\":150.0,"
		   "\"wrong\":0}]");
	ln_buf_reset(&b);
	assert_int_equal(ln_report_html(res, &b), 0);
	assert_has(&b, "html", "<td>nccl all_reduce</td><td>2048</td><td>10</td><td>20</td>"
		   "<td>0</td><td></td></tr>");
	assert_has(&b, "html", "<td>8192</td><td>75</td><td>150</td><td>0</td><td>pass</td>");
	ln_buf_reset(&b);
	assert_int_equal(ln_report_metrics(res, &b), 0);
	assert_has(&b, "metrics", "llmnet_validation_busbw_gbs{cluster=\"fake\",stage=\"nccl\","
		   "check=\"nccl all_reduce\",node=\"\",bytes=\"4096\"} 50\n");
	ln_buf_reset(&b);
	assert_int_equal(ln_report_junit(res, &b), 0);
	assert_has(&b, "junit", "<system-out>busbw by size 1KiB 10, 2KiB 20, 4KiB 50, 8KiB 150");
	ln_buf_release(&b);
}

/* A sweep of 1KiB..8KiB judged against min_busbw 100GB/s, the probe
 * answering busbw at each size (sweep_output()): the world, run, with
 * its one check of that status and reason (NULL: not compared). */
static struct world *sweep_run(void **state, const double busbw[4], int wrong0,
			       enum ln_status status, const char *reason)
{
	struct world *w = world_start(state, 2, make_spec(2, "  - { stage: nccl, bytes: 1KiB..8KiB, "
							     "min_busbw: 100GB/s }\n", 1));

	sweep_output(w, busbw, wrong0);
	world_run(w);
	assert_int_equal(w->res.nchecks, 1);
	assert_int_equal(w->res.checks[0].status, status);
	if (reason)
		assert_string_equal(w->res.checks[0].reason, reason);
	return w;
}

/* bytes: A..B reaches the probe as --min-bytes A --bytes B; each size's
 * figures are kept, and min_busbw is judged at the largest only: slow
 * small sizes pass, a slow largest fails naming its size, a wrong result
 * at any size fails. */
static void test_validate_nccl__sweep(void **state)
{
	static const double slow_small[4] = { 10, 20, 50, 150 }, slow_last[4] = { 150, 150, 150, 90 };
	struct world *w;
	const struct ln_check *c;

	w = sweep_run(state, slow_small, 0, LN_ST_PASS, NULL);
	assert_non_null(strstr(w->f.nccl_argv, " --bytes 8192 --min-bytes 1024 "));
	c = &w->res.checks[0];
	assert_float_equal(c->value, 150, 1e-9);
	assert_int_equal(c->nsizes, 4);
	assert_int_equal(c->sizes[0].bytes, 1024);
	assert_float_equal(c->sizes[0].busbw, 10, 1e-9);
	assert_int_equal(c->sizes[3].bytes, 8192);
	sweep_in_reports(&w->res);
	world_teardown(state);
	world_setup(state);

	w = sweep_run(state, slow_last, 0, LN_ST_FAIL,
		      "busbw 90.00 GB/s at 8192 bytes (the largest size) is below 100.00 GB/s");
	assert_int_equal(w->res.checks[0].nsizes, 4);
	world_teardown(state);
	world_setup(state);

	w = sweep_run(state, slow_small, 1, LN_ST_FAIL,
		      "the all_reduce result is wrong: rank 3 on 'n1' (GPU 3) received 1 wrong "
		      "elements at 1024 bytes, the first (7) 9 instead of 8");
	c = &w->res.checks[0];
	assert_int_equal(c->a, 0);	/* its node is blamed */
	assert_int_equal(c->sizes[0].wrong, 1);
	world_teardown(state);
	world_setup(state);

	/* the fake probe's own sweep: 4 sizes, no threshold */
	w = world_start(state, 2, make_spec(2, "  - { stage: nccl, bytes: 1KiB..8KiB }\n", 1));
	world_run(w);
	assert_int_equal(w->res.checks[0].status, LN_ST_PASS);
	assert_int_equal(w->res.checks[0].nsizes, 4);
}

/* nccl-tests' report of one node's 8 GPUs, 1 KiB to 8 KiB: busbw at
 * 8 KiB and the #wrong of 2 KiB (both groups). */
static const char *tests_report(char *buf, size_t len, const char *busbw, const char *wrong)
{
	snprintf(buf, len,
		 "# nThread 1 nGpus 8 minBytes 1024 maxBytes 8192 step: 2(factor) warmup iters: 5 "
		 "iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
		 "#  Rank  0 Group  0 Pid  41000 on      gpu001 device  0 [0x18] NVIDIA H100\n"
		 "#  Rank  7 Group  0 Pid  41000 on      gpu001 device  7 [0x1f] NVIDIA H100\n"
		 "#       size         count      type   redop    root     time   algbw   busbw "
		 "#wrong     time   algbw   busbw #wrong\n"
		 "        1024           256     float     sum      -1    30.08    0.03    0.06"
		 "      0    30.38    0.03    0.06      0\n"
		 "        2048           512     float     sum      -1    30.10    0.07    0.12"
		 "      %s    30.40    0.07    0.12      0\n"
		 "        4096          1024     float     sum      -1    30.20    0.14    0.24"
		 "      0    30.50    0.14    0.24      0\n"
		 "        8192          2048     float     sum      -1    31.00    0.26    %s"
		 "      0    31.20    0.26    %s      0\n"
		 "# Out of bounds values : %s\n# Avg bus bandwidth    : 0.2\n#\n",
		 wrong, busbw, busbw, strcmp(wrong, "0") ? "1 FAILED" : "0 OK");
	return buf;
}

/* tool all_reduce_perf: nccl-tests on each GPU node alone, by its path in
 * tests_dir, the sweep doubling (-f 2), the node's GPUs, checked; a check
 * per node, judged like the probe (every size correct, min_busbw at the
 * largest): n1 passes, n2's wrong 2 KiB fails, n3 without the program is
 * not run (naming node and path), n4 is slow at 8 KiB. No probe is built. */
static void test_validate_nccl__nccl_tests_per_node(void **state)
{
	static const char *const want[] = { "pass", "fail", "not run", "fail" };
	char good[2048], wrong[2048], slow[2048];
	struct world *w = world_start(state, 4, make_spec(4, "  - { stage: nccl, tool: "
		"all_reduce_perf, tests_dir: /opt/nccl-tests/build, bytes: 1KiB..8KiB, "
		"min_busbw: 0.4GB/s }\n", 0));
	const struct ln_check *c;
	struct ln_buf dry = LN_BUF_INIT, err = LN_BUF_INIT;
	size_t i;

	w->f.nccl_tests_out[0] = tests_report(good, sizeof(good), "0.48", "0");
	w->f.nccl_tests_out[1] = tests_report(wrong, sizeof(wrong), "0.48", "3");
	w->f.nccl_tests_out[3] = tests_report(slow, sizeof(slow), "0.31", "0");
	world_run(w);
	c = w->res.checks;
	assert_int_equal(w->res.nchecks, 4);
	for (i = 0; i < 4; i++) {
		assert_string_equal(c[i].name, "nccl all_reduce");
		assert_int_equal(c[i].a, i);
		assert_string_equal(ln_status_name(c[i].status), want[i]);
		assert_string_equal(w->f.nccl_tests_argv[i], "/opt/nccl-tests/build/all_reduce_perf "
				    "-b 1024 -e 8192 -f 2 -g 8 -c 1");
	}
	assert_float_equal(c[0].value, 0.48, 1e-9);
	assert_int_equal(c[0].nsizes, 4);
	assert_string_equal(c[1].reason, "the collective result is wrong: 3 wrong elements at "
			    "2048 bytes");
	assert_int_equal(c[1].sizes[1].wrong, 3);
	assert_string_equal(c[2].reason, "'/opt/nccl-tests/build/all_reduce_perf' is not "
			    "installed on 'n3' (nccl.tests_dir)");
	assert_string_equal(c[3].reason, "busbw 0.31 GB/s at 8192 bytes (the largest size) is "
			    "below 0.40 GB/s");
	assert_int_equal(w->res.stages[LN_STAGE_NCCL].status, LN_ST_FAIL);
	assert_int_equal(w->f.nccl_mpicc_runs[0] + w->f.nccl_mpicc_runs[1], 0);
	/* validate --dry-run names the program each node runs */
	assert_int_equal(ln_validate_schedule(w->spec, 0, &dry, &err), 0);
	assert_non_null(strstr(dry.buf, "nccl: nccl-tests' all_reduce_perf on each GPU node "
				       "alone (no pairs)\n  n1: /opt/nccl-tests/build/all_reduce_perf "
				       "-b 1024 -e 8192 -f 2 -g 8 -c 1\n  n2: /opt/nccl-tests/build/"));
	ln_test_release(&dry, &err);
}

LN_TEST_MAIN(group_setup, group_teardown,
	WORLD_TEST(test_validate_nccl__under_mpirun),
	WORLD_TEST(test_validate_nccl__every_op),
	WORLD_TEST(test_validate_nccl__environment),
	WORLD_TEST(test_validate_nccl__uneven_gpus),
	WORLD_TEST(test_validate_nccl__gpuless_node),
	WORLD_TEST(test_validate_nccl__no_mpicc_on_launcher),
	WORLD_TEST(test_validate_nccl__odd_build_names_that_node),
	WORLD_TEST(test_validate_nccl__sweep),
	WORLD_TEST(test_validate_nccl__nccl_tests_per_node),
)
