/* SPDX-License-Identifier: MIT */
/*
 * The stage runner against the fake cluster (validate_fake.h): the stage
 * order, skips with reasons, retries per attempt, timeouts naming
 * node/pair/stage/command, "not run" counting as failure, --stages,
 * --limit, and that the verdicts name exactly the injected bad node and
 * bad link.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/validate_fake.h"

static const char all_stages[] =
	"  - { stage: devices }\n  - { stage: rping, count: 5 }\n"
	"  - { stage: bandwidth, tool: ib_write_bw, pairs: ring, min: 0.9 of rate }\n"
	"  - { stage: mpi }\n  - { stage: nccl, bytes: 1GiB, min_busbw: 100GB/s }\n";

static void test_validate_stages__healthy(void **state)
{
	struct world *w = world_start(state, 6, make_spec(6, all_stages, 1));
	size_t i, bw = 0;

	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 0);
	assert_int_equal(w->res.nverdicts, 0);
	assert_int_equal(w->res.stages[LN_STAGE_RPING].rounds, 2);
	assert_int_equal(w->res.stages[LN_STAGE_RPING].passed, 6);
	assert_int_equal(w->res.stages[LN_STAGE_DEVICES].passed, 12);	/* port + gpus per node */
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_PASS);
	/* one mpirun, 48 ranks: busbw 109.56 * 2 * 47/48 GB/s */
	assert_int_equal(w->res.stages[LN_STAGE_NCCL].passed, 1);
	assert_int_equal(w->f.nccl_mpicc_runs[0], 1);
	assert_true(same_bin_everywhere(&w->f, 1, 0));
	assert_false(w->res.stages[LN_STAGE_IO].listed);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage == LN_STAGE_DEVICES && !strcmp(c->name, "rxe0/1")) {
			char want[96];

			snprintf(want, sizeof(want), "RoCE v2 GID index 1 on 10.0.0.%zu", c->a + 1);
			assert_string_equal(c->reason, want);
		}
		if (c->stage != LN_STAGE_BANDWIDTH)
			continue;
		bw++;
		assert_float_equal(c->value, 95.0, 1e-9);
		assert_float_equal(c->threshold, 90.0, 1e-9);
		assert_float_equal(c->line_rate, 100.0, 1e-9);
		assert_non_null(strstr(c->attempts[0].command, "ib_write_bw -d rxe0 -i 1 -x 1 -s "
								"1048576"));
	}
	assert_int_equal(bw, 6);
	/* each probe's source to the launcher, its build to the 5 others */
	assert_int_equal(w->f.puts, 2 * (1 + 5));
}

static void test_validate_stages__bad_node_and_bad_link(void **state)
{
	struct world *w = world_start(state, 6, make_spec(6, all_stages, 1));
	size_t i;

	w->f.bad_node[3] = 1;
	w->f.bad_link[0][1] = 1;
	world_run(w);
	assert_verdicts(w, "rping:node:n4 rping:link:n1-n2 ");
	assert_int_equal(ln_results_exit(&w->res), 1);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != LN_STAGE_BANDWIDTH)
			continue;
		if ((c->a == 0 && c->b == 1) || c->a == 3 || c->b == 3) {
			assert_int_equal(c->status, LN_ST_SKIPPED);
			assert_true(strstr(c->reason, "cannot rping") ||
				    strstr(c->reason, "'n4' is a bad node in rping"));
		} else {
			assert_int_equal(c->status, LN_ST_PASS);
		}
	}
}

static void test_validate_stages__twin_run_fails_every_pair(void **state)
{
	struct world *w = world_start(state, 5, make_spec(5, "  - { stage: rping }\n"
							  "  - { stage: bandwidth, min: 950Gb/s }\n",
							  0));
	struct ln_buf text = LN_BUF_INIT;
	size_t i, failed = 0;

	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 1);
	assert_int_equal(ln_report_text(&w->res, 0, &text), 0);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];
		char want[64];

		if (c->stage != LN_STAGE_BANDWIDTH || c->retest)
			continue;
		failed++;
		assert_int_equal(c->status, LN_ST_FAIL);
		assert_string_equal(c->reason, "95 Gb/s is below 950 Gb/s");
		/* a low result is not retried (the second pass retests it) */
		assert_int_equal(c->nattempts, 1);
		/* the pair's nodes and the ports of its rail */
		snprintf(want, sizeof(want), "bandwidth n%zu/%s-n%zu/%s fail: 95 Gb/s is below",
			 c->a + 1, ln_results_port(&w->res, c->a, c->pa), c->b + 1,
			 ln_results_port(&w->res, c->b, c->pb));
		assert_non_null(strstr(text.buf, want));
	}
	assert_int_equal(failed, 5);
	ln_buf_release(&text);
}

static void test_validate_stages__port_down_skips_with_reason(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, all_stages, 1));
	size_t i, skipped = 0;

	/* node 3's port goes DOWN in its facts */
	json_object_object_add(json_object_array_get_idx(
		json_object_object_get(json_object_array_get_idx(
			json_object_object_get(w->f.facts[2], "rdma"), 0), "ports"), 0),
		"state", json_object_new_string("DOWN"));
	world_run(w);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage == LN_STAGE_DEVICES && c->a == 2 && !strcmp(c->name, "rxe0/1")) {
			assert_int_equal(c->status, LN_ST_FAIL);
			assert_string_equal(c->reason, "state DOWN, want ACTIVE");
		}
		if (c->stage == LN_STAGE_RPING && (c->a == 2 || c->b == 2)) {
			skipped++;
			assert_int_equal(c->status, LN_ST_SKIPPED);
			assert_string_equal(c->reason, "'n3' failed devices: state DOWN, want ACTIVE");
		}
	}
	assert_int_equal(skipped, 2);
	assert_verdicts(w, "devices:node:n3 ");
}

static void test_validate_stages__retry_and_timeout(void **state)
{
	struct world *w = world_start(state, 4,
				      make_spec(4, "  - { stage: rping, timeout: 7s }\n", 0));
	size_t i, seen = 0;

	w->f.race_once[0][1] = 1;
	w->f.hang[2][3] = 1;
	w->o.attempts = 2;
	world_run(w);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->a == 0 && c->b == 1 && !c->retest) {
			seen++;
			assert_int_equal(c->status, LN_ST_PASS);
			assert_int_equal(c->nattempts, 2);
			assert_false(c->attempts[0].ok);
			assert_string_equal(c->attempts[0].detail, "client on 'n2': cma event "
								   "RDMA_CM_EVENT_REJECTED, error 8");
			assert_true(c->attempts[1].ok);
		}
		if (c->a == 2 && c->b == 3 && !c->retest) {
			seen++;
			assert_int_equal(c->status, LN_ST_FAIL);
			assert_true(c->attempts[0].timed_out);
			assert_string_equal(c->attempts[0].detail,
					    "rping client on 'n4' (stage rping, pair n3-n4) timed out "
					    "after 7s: rping -c -a 10.0.0.3 -p 7175 -C 10 -V -I 10.0.0.4");
		}
	}
	assert_int_equal(seen, 2);
}

static void test_validate_stages__not_run_counts_as_failure(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, all_stages, 1));
	size_t i, nr = 0;

	w->f.no_mpicc[0] = 1;
	w->o.nccl_probe_source = NULL;
	world_run(w);
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_FAIL);
	assert_int_equal(w->res.stages[LN_STAGE_NCCL].status, LN_ST_FAIL);
	for (i = 0; i < w->res.nchecks; i++)
		if (w->res.checks[i].status == LN_ST_NOT_RUN) {
			nr++;
			assert_true(!strcmp(w->res.checks[i].reason, "no mpicc on 'n1'") ||
				    !strcmp(w->res.checks[i].reason, "the NCCL probe's source was not found"));
		}
	assert_int_equal(nr, 1 + 1);
	assert_int_equal(ln_results_exit(&w->res), 1);
}

static void test_validate_stages__stages_and_limit(void **state)
{
	struct world *w = world_start(state, 6, make_spec(6, all_stages, 1));
	struct ln_buf err = LN_BUF_INIT;
	unsigned char limit[6] = { 0, 0, 0, 0, 1, 0 };
	size_t i, pairs = 0;
	int s;

	assert_int_equal(ln_validate_parse_stages("devices,rping", &w->o.stages, &err), 0);
	assert_int_equal(ln_validate_parse_stages("devices,ping", &w->o.stages, &err), -EINVAL);
	assert_string_equal(err.buf, "unknown stage 'ping' (stages: devices, rping, bandwidth, "
				     "latency, io, mpi, nccl, access)");
	assert_int_equal(ln_validate_parse_stages("rping", &w->o.stages, &err), 0);
	w->o.limit = limit;
	world_run(w);
	for (s = 0; s < LN_STAGE_COUNT; s++)
		assert_int_equal(w->res.stages[s].listed, s == LN_STAGE_RPING);
	for (i = 0; i < w->res.nchecks; i++) {
		assert_int_equal(w->res.checks[i].stage, LN_STAGE_RPING);
		/* the new node only, against known-good peers */
		assert_int_equal(w->res.checks[i].b, 4);
		assert_true(w->res.checks[i].a != 4);
		pairs++;
	}
	assert_int_equal(pairs, 2);
	assert_int_equal(ln_results_exit(&w->res), 0);
	ln_buf_release(&err);
}

LN_TEST_MAIN(group_setup, group_teardown,
	WORLD_TEST(test_validate_stages__healthy),
	WORLD_TEST(test_validate_stages__bad_node_and_bad_link),
	WORLD_TEST(test_validate_stages__twin_run_fails_every_pair),
	WORLD_TEST(test_validate_stages__port_down_skips_with_reason),
	WORLD_TEST(test_validate_stages__retry_and_timeout),
	WORLD_TEST(test_validate_stages__not_run_counts_as_failure),
	WORLD_TEST(test_validate_stages__stages_and_limit),
)
