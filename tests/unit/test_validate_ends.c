/* SPDX-License-Identifier: MIT */
/*
 * Both ends of a bandwidth or latency pair judged (issue 32) against the
 * fake cluster (validate_fake.h): a pair passes only when its server ran
 * too and reports what its client does; a node whose own end did not run
 * is named and is never the known-good peer of another's retest.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/validate_fake.h"

static const char bw_all[] = "  - { stage: bandwidth, pairs: all, min: 50Gb/s }\n";
static const char lat_all[] = "  - { stage: latency, pairs: all, max_typical: 20us }\n";

/* The failed first-pass checks of stage st with reason want in it;
 * returns how many, and that every one has node as its server. */
static size_t failed_as_server(struct world *w, enum ln_stage st, size_t node, const char *want)
{
	size_t i, n = 0;

	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != st || c->retest || c->status != LN_ST_FAIL ||
		    !strstr(c->reason, want))
			continue;
		if (c->a != node)
			fail_msg("check %zu-%zu: %s", c->a, c->b, c->reason);
		n++;
	}
	return n;
}

/* No retest of stage st had node as its known-good peer. */
static void not_a_witness(struct world *w, enum ln_stage st, size_t node)
{
	size_t i;

	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage == st && c->retest && (c->a == node || c->b == node))
			fail_msg("retest %zu-%zu used n%zu", c->a, c->b, node + 1);
	}
}

/* Control: both ends report the same figures; every pair passes. */
static void test_validate_ends__agree(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, bw_all, 0));

	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 0);
	assert_int_equal(w->res.stages[LN_STAGE_BANDWIDTH].passed, 6);
	assert_verdicts(w, "");
}

/* n2's server end cannot run: every pair it serves fails naming it, it
 * is named bad, and its passes as a client do not make it a known-good
 * peer: n5, bad with both its ring partners, is retested against n3
 * (the first fresh witness once n2 is out), never n2. */
static void test_validate_ends__server_failed(void **state)
{
	struct world *w = world_start(state, 5, make_spec(5, "  - { stage: bandwidth, pairs: ring, "
							  "min: 50Gb/s }\n", 0));
	size_t i, retests = 0;

	w->f.srv_fail[1] = 1;
	w->f.bad_node[4] = 1;
	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 1);
	assert_true(failed_as_server(w, LN_STAGE_BANDWIDTH, 1,
				     "ib_write_bw server on 'n2' failed (exit status 1)") > 0);
	assert_verdicts(w, "bandwidth:node:n2 bandwidth:node:n5 ");
	not_a_witness(w, LN_STAGE_BANDWIDTH, 1);
	for (i = 0; i < w->res.nchecks; i++)
		retests += w->res.checks[i].retest;
	assert_true(retests > 0);
}

/* n2's server exits 0 but prints no report: the same, for latency. */
static void test_validate_ends__server_output_missing(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, lat_all, 0));

	w->f.srv_mute[1] = 1;
	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 1);
	assert_true(failed_as_server(w, LN_STAGE_LATENCY, 1, "server on 'n2': ") > 0);
	assert_verdicts(w, "latency:node:n2 ");
	not_a_witness(w, LN_STAGE_LATENCY, 1);
}

/* n2's server loses its report once (exit 0, no row: seen under load):
 * that attempt is tried again and the pair passes, its check marking
 * the end that lost it; n2 is not named. */
static void test_validate_ends__server_output_lost_once(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, lat_all, 0));
	size_t i, retried = 0;

	w->f.srv_mute_once[1] = 1;
	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 0);
	assert_verdicts(w, "");
	for (i = 0; i < w->res.nchecks; i++)
		if (w->res.checks[i].own_fault == LN_END_A && w->res.checks[i].a == 1 &&
		    w->res.checks[i].status == LN_ST_PASS)
			retried++;
	assert_int_equal(retried, 1);
}

/* n2's client end cannot run (perftest's own failure, exit 1, no
 * report): the pairs it is the client of fail naming it, and n2 is named
 * bad, not "undetermined"; its passes as a server make it no witness. */
static void test_validate_ends__client_failed(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, bw_all, 0));

	w->f.cli_fail[1] = 1;
	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 1);
	assert_verdicts(w, "bandwidth:node:n2 ");
	not_a_witness(w, LN_STAGE_BANDWIDTH, 1);
}

/* The same for latency. */
static void test_validate_ends__client_failed_latency(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, lat_all, 0));

	w->f.cli_fail[2] = 1;
	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 1);
	assert_verdicts(w, "latency:node:n3 ");
	not_a_witness(w, LN_STAGE_LATENCY, 2);
}

/* n1's server reports half its client's bandwidth: its pairs fail as
 * disagreeing ends, whatever the threshold says; within the tolerance
 * (0.9 of it, the next test) they pass. */
static void test_validate_ends__disagree(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, bw_all, 0));

	w->f.srv_skew[0] = 0.5;
	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 1);
	assert_true(failed_as_server(w, LN_STAGE_BANDWIDTH, 0,
				     "the ends disagree: client on 'n") > 0);
}

static void test_validate_ends__within_tolerance(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, bw_all, 0));

	w->f.srv_skew[0] = 0.9;
	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 0);
	assert_verdicts(w, "");
}

LN_TEST_MAIN(group_setup, group_teardown,
	WORLD_TEST(test_validate_ends__agree),
	WORLD_TEST(test_validate_ends__server_failed),
	WORLD_TEST(test_validate_ends__server_output_missing),
	WORLD_TEST(test_validate_ends__server_output_lost_once),
	WORLD_TEST(test_validate_ends__client_failed),
	WORLD_TEST(test_validate_ends__client_failed_latency),
	WORLD_TEST(test_validate_ends__disagree),
	WORLD_TEST(test_validate_ends__within_tolerance),
)
