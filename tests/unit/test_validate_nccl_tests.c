/* SPDX-License-Identifier: MIT */
/*
 * The nccl stage's nccl-tests at scope cluster against the fake cluster
 * (validate_fake.h): one mpirun across the GPU nodes with typed -x NCCL
 * variables, every node's copy checked first, nodes whose RDMA ports
 * differ "not run", collective latency (max_latency) and the scaling
 * sweep (min_efficiency), each with a control that passes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/report/report.h"
#include "tests/unit/validate_fake.h"

#define TESTS_OUT "# stand-in: -h answered\n"

/* Every node holds the program (its -h preflight answers). */
static void every_copy(struct world *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		w->f.nccl_tests_out[i] = TESTS_OUT;
}

/* The next world: this one's released. */
static void world_stop(struct world *w)
{
	void *state = w;

	world_teardown(&state);
	world_setup(&state);
}

static const struct ln_check *find_check(const struct world *w, const char *name)
{
	size_t i;

	for (i = 0; i < w->res.nchecks; i++)
		if (!strcmp(w->res.checks[i].name, name))
			return &w->res.checks[i];
	fail_msg("no check '%s'", name);
	return NULL;
}

static void assert_has(const struct ln_buf *b, const char *what, const char *part)
{
	if (!strstr(b->buf, part))
		fail_msg("%s lacks '%s':\n%s", what, part, b->buf);
}

/* The sweep's checks in every report: text, JSON, HTML, Prometheus, JUnit. */
static void in_reports(const struct ln_results *res)
{
	struct ln_buf b = LN_BUF_INIT;

	ln_report_text(res, 0, &b);
	assert_has(&b, "text", "nccl sendrecv scaling 4 nodes: efficiency 0.5 (busbw 4.00 GB/s on 4 nodes, 8.00 GB/s on 1) is below 0.625");
	ln_buf_reset(&b);
	assert_int_equal(ln_report_json(res, 0, &b), 0);
	assert_has(&b, "json", "\"name\":\"nccl sendrecv scaling 2 nodes\",\"status\":\"pass\","
		   "\"reason\":null,\"value\":0.75,\"threshold\":0.625,\"line_rate_gbps\":null,"
		   "\"unit\":\"ratio\"");
	ln_buf_reset(&b);
	assert_int_equal(ln_report_html(res, &b), 0);
	assert_has(&b, "html", "<td>nccl sendrecv scaling 4 nodes</td><td class=\"fail\">fail</td>"
		   "<td>0.5 ratio</td><td>0.625 ratio</td>");
	ln_buf_reset(&b);
	assert_int_equal(ln_report_metrics(res, &b), 0);
	assert_has(&b, "metrics", "llmnet_validation_nccl_ok{cluster=\"fake\",stage=\"nccl\","
		   "check=\"nccl sendrecv scaling 4 nodes\",node=\"\"} 0\n");
	assert_has(&b, "metrics", "llmnet_validation_nccl_value{cluster=\"fake\",stage=\"nccl\","
		   "check=\"nccl sendrecv scaling 2 nodes\",node=\"\",unit=\"ratio\"} 0.75\n");
	ln_buf_reset(&b);
	assert_int_equal(ln_report_junit(res, &b), 0);
	assert_has(&b, "junit", "<testcase classname=\"llmnet.nccl\" name=\"cluster nccl sendrecv "
		   "scaling 4 nodes\" time=\"0.000\">\n      <failure type=\"fail\" message=\""
		   "efficiency 0.5 (busbw");
	ln_buf_release(&b);
}

#define CLUSTER_STAGE(extra) \
	"  - { stage: nccl, tool: nccl-tests, tests_dir: /opt/nt, op: sendrecv, " \
	"bytes: 1KiB..8KiB, socket_ifname: eth0, env: { NCCL_ALGO: Ring }" extra " }\n"

/* One mpirun over the hostfile (every node's slots are its GPUs), a rank
 * a GPU (-g 1), the op's program, NCCL_IB_HCA (exact names),
 * socket_ifname and nccl.env as typed -x (NCCL_IB_GID_INDEX only when
 * every port's is known: the fake's facts give none); each node's copy
 * checked by -h before. One check, judged like the probe's. */
static void test_validate_nccl_tests__across_nodes(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, CLUSTER_STAGE(
		", min_busbw: 8GB/s"), 1));
	const struct ln_check *c;
	size_t i;

	every_copy(w, 3);
	world_run(w);
	assert_string_equal(w->f.nccl_mpirun_tests,
			    "mpirun --hostfile /etc/llmnet/hostfile -np 24 "
			    "--mca pml ob1 -x NCCL_IB_HCA==rxe0:1 -x "
			    "NCCL_SOCKET_IFNAME=eth0 -x NCCL_ALGO=Ring /opt/nt/sendrecv_perf -b 1024 "
			    "-e 8192 -f 2 -g 1 -c 1\n");
	for (i = 0; i < 3; i++)
		assert_string_equal(w->f.nccl_tests_argv[i], "/opt/nt/sendrecv_perf -h");
	assert_int_equal(w->res.nchecks, 1);
	c = find_check(w, "nccl sendrecv");
	assert_string_equal(ln_status_name(c->status), "pass");
	assert_int_equal(c->a, LN_NO_NODE);
	assert_float_equal(c->value, 10.0, 1e-9);
	assert_int_equal(c->nsizes, 4);
	assert_int_equal(w->res.stages[LN_STAGE_NCCL].status, LN_ST_PASS);
	world_stop(w);
	/* #wrong at the largest size fails it, naming the size */
	w = world_start(state, 3, make_spec(3, CLUSTER_STAGE(""), 1));
	every_copy(w, 3);
	w->f.tests_wrong = 7;
	world_run(w);
	c = find_check(w, "nccl sendrecv");
	assert_string_equal(ln_status_name(c->status), "fail");
	assert_string_equal(c->reason, "the collective result is wrong: 7 wrong elements at "
			    "8192 bytes");
	world_stop(w);
	/* ranks that all landed on one host did not cross the network */
	w = world_start(state, 3, make_spec(3, CLUSTER_STAGE(""), 1));
	every_copy(w, 3);
	w->f.tests_one_host = 1;
	world_run(w);
	c = find_check(w, "nccl sendrecv");
	assert_string_equal(ln_status_name(c->status), "fail");
	assert_string_equal(c->reason, "nccl-tests reported 24 ranks on 1 hosts, not the 24 ranks "
			    "(one a GPU) on 3 nodes mpirun was given");
}

/* launcher none: no mpirun, no -h preflight; each GPU node's agent runs
 * its program, -g its GPUs, with its own NCCL_IB_HCA, the spec's NCCL
 * variables and the wheel's libraries as LD_LIBRARY_PATH (nccl_lib
 * first). The control: scope node with launcher mpirun gives no
 * environment at all. */
static void test_validate_nccl_tests__launcher_none(void **state)
{
	struct world *w = world_start(state, 2, make_spec(2,
		"  - { stage: nccl, tool: nccl-tests, tests_dir: /opt/nt, scope: node, launcher: none, "
		"nccl_lib: /opt/py/nvidia/nccl/lib, cuda_lib: /usr/local/cuda/lib64, "
		"socket_ifname: eth0, env: { NCCL_ALGO: Ring } }\n", 1));
	size_t i;

	every_copy(w, 2);
	world_run(w);
	assert_string_equal(w->f.nccl_mpirun_tests, "");
	for (i = 0; i < 2; i++) {
		assert_string_equal(w->f.nccl_tests_argv[i],
				    "/opt/nt/all_reduce_perf -b 1073741824 -e 1073741824 -f 2 -g 8 -c 1");
		assert_string_equal(w->f.nccl_tests_env[i],
				    "NCCL_IB_HCA==rxe0:1 NCCL_SOCKET_IFNAME=eth0 NCCL_ALGO=Ring "
				    "LD_LIBRARY_PATH=/opt/py/nvidia/nccl/lib:/usr/local/cuda/lib64");
	}
	world_stop(w);
	w = world_start(state, 2, make_spec(2, "  - { stage: nccl, tool: nccl-tests, tests_dir: "
					    "/opt/nt, scope: node }\n", 1));
	every_copy(w, 2);
	world_run(w);
	for (i = 0; i < 2; i++) {
		assert_string_equal(w->f.nccl_tests_argv[i],
				    "/opt/nt/all_reduce_perf -b 1073741824 -e 1073741824 -f 2 -g 8 -c 1");
		assert_string_equal(w->f.nccl_tests_env[i], "");
	}
}

/* A node without the program: that node's check "not run", naming node
 * and path, and mpirun never starts; a node whose RDMA ports differ
 * (NCCL_IB_HCA is one value for every rank): "not run" with both lists. */
static void test_validate_nccl_tests__copies_and_ports(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, CLUSTER_STAGE(""), 1));
	struct ln_buf y = LN_BUF_INIT;
	const struct ln_check *c;

	w->f.nccl_tests_out[0] = w->f.nccl_tests_out[2] = TESTS_OUT;
	world_run(w);
	assert_string_equal(w->f.nccl_mpirun_tests, "");
	assert_int_equal(w->res.nchecks, 2);
	c = &w->res.checks[0];
	assert_int_equal(c->a, 1);
	assert_string_equal(ln_status_name(c->status), "not run");
	assert_string_equal(c->reason, "'/opt/nt/sendrecv_perf' is not installed on 'n2' "
			    "(nccl.tests_dir)");
	assert_string_equal(w->res.checks[1].reason, "mpirun did not start: nccl-tests' "
			    "sendrecv_perf could not run on every node (each is named)");
	world_stop(w);
	/* n2 declares rxe1 where the others declare rxe0 */
	fake_nodes(&y, 3, 1);
	{
		char *p = strstr(y.buf, "{ device: rxe0, port: 1, ip: 10.0.0.2");

		assert_non_null(p);
		p[13] = '1';
	}
	w = world_start(state, 3, spec_from(&y, CLUSTER_STAGE("")));
	every_copy(w, 3);
	world_run(w);
	assert_string_equal(w->f.nccl_mpirun_tests, "");
	c = find_check(w, "nccl sendrecv");
	assert_string_equal(ln_status_name(c->status), "not run");
	assert_string_equal(c->reason, "mpirun gives every rank one NCCL_IB_HCA, but 'n1' "
			    "declares RDMA ports 'rxe0:1' and 'n2' declares 'rxe1:1' (declare the "
			    "same device names, or run scope: node)");
}

/* max_latency judges the time at the smallest size (40 us + 1 a rank
 * here: 64 us with 24 ranks), a check beside the bandwidth's. */
static void test_validate_nccl_tests__latency(void **state)
{
	static const struct {
		const char *max, *status, *reason;
	} cases[] = {
		{ "64us", "pass", NULL },
		{ "63us", "fail", "time 64.0 us at 1024 bytes (the smallest size) is above 63 us" },
	};
	size_t k;

	for (k = 0; k < ARRAY_SIZE(cases); k++) {
		char stage[512];
		struct world *w;
		const struct ln_check *c;

		snprintf(stage, sizeof(stage), CLUSTER_STAGE(", max_latency: %s"), cases[k].max);
		w = world_start(state, 3, make_spec(3, stage, 1));
		every_copy(w, 3);
		world_run(w);
		assert_int_equal(w->res.nchecks, 2);
		c = find_check(w, "nccl sendrecv latency");
		assert_string_equal(ln_status_name(c->status), cases[k].status);
		assert_float_equal(c->value, 64.0, 1e-9);
		assert_float_equal(c->threshold, 63.0 + (double)(k == 0), 1e-9);
		if (cases[k].reason)
			assert_string_equal(c->reason, cases[k].reason);
		assert_string_equal(ln_status_name(find_check(w, "nccl sendrecv")->status), "pass");
		if (k + 1 < ARRAY_SIZE(cases))
			world_stop(w);
	}
}

/* scaling [1, 2, 4]: the run again on the first N GPU nodes by --host
 * NODE:GPUS (4: the hostfile), each a check valued busbw(N) / busbw(1);
 * min_efficiency 62.5%: 2 nodes at 0.75 pass, 4 at 0.50 fail. */
static void test_validate_nccl_tests__scaling(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, CLUSTER_STAGE(
		", scaling: [1, 2, 4], min_efficiency: 62.5%"), 1));
	const struct ln_check *c;

	every_copy(w, 4);
	w->f.tests_busbw[1] = 8.0;
	w->f.tests_busbw[2] = 6.0;
	w->f.tests_busbw[4] = 4.0;
	world_run(w);
	assert_non_null(strstr(w->f.nccl_mpirun_tests, "--host n1:8 -np 8 "));
	assert_non_null(strstr(w->f.nccl_mpirun_tests, "--host n1:8,n2:8 -np 16 "));
	assert_int_equal(w->res.nchecks, 4);
	c = find_check(w, "nccl sendrecv scaling 1 nodes");
	assert_string_equal(ln_status_name(c->status), "pass");
	assert_float_equal(c->value, 1.0, 1e-9);
	c = find_check(w, "nccl sendrecv scaling 2 nodes");
	assert_string_equal(ln_status_name(c->status), "pass");
	assert_float_equal(c->value, 0.75, 1e-9);
	assert_float_equal(c->threshold, 0.625, 1e-9);
	c = find_check(w, "nccl sendrecv scaling 4 nodes");
	assert_string_equal(ln_status_name(c->status), "fail");
	assert_float_equal(c->value, 0.5, 1e-9);
	assert_string_equal(c->reason, "efficiency 0.5 (busbw 4.00 GB/s on 4 nodes, 8.00 GB/s "
			    "on 1) is below 0.625");
	assert_string_equal(c->unit, "ratio");
	assert_int_equal(w->res.stages[LN_STAGE_NCCL].status, LN_ST_FAIL);
	in_reports(&w->res);
}

LN_TEST_MAIN(group_setup, group_teardown,
	WORLD_TEST(test_validate_nccl_tests__across_nodes),
	WORLD_TEST(test_validate_nccl_tests__copies_and_ports),
	WORLD_TEST(test_validate_nccl_tests__latency),
	WORLD_TEST(test_validate_nccl_tests__scaling),
	WORLD_TEST(test_validate_nccl_tests__launcher_none),
)
