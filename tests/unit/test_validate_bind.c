/* SPDX-License-Identifier: MIT */
/*
 * Every probe bound to the port it is reported for (issue 27, point 1),
 * against the fake cluster (validate_fake.h): rping's client by -I, its
 * own port's address, so a dead port on rails that share a subnet is
 * named even where the route would have carried an unbound client by
 * another port; perftest over RDMA CM from each end's own address where
 * both ends' perftest lists --bind_source_ip (asked once per node and
 * tool), else without RDMA CM, bound by -d/-i/-x; the check says which.
 * The fake refuses any other binding (perf_bound_ok, rping_client_rail).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/validate_fake.h"
#include "orchestrator/validate/stage_common.h"

/* The ip of node's port (its index in the spec). */
static const char *port_ip(const struct world *w, size_t node, int port)
{
	return w->spec->nodes[node].rdma[port].ip;
}

/* Every attempt of every pair check of stage st ran a client whose
 * command holds "OPT ADDR" with ADDR the client port's declared ip;
 * the number of such checks. */
static size_t each_client_bound(const struct world *w, enum ln_stage st, const char *opt)
{
	size_t i, k, n = 0;

	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];
		char want[64];

		if (c->stage != st || c->b == LN_NO_NODE || c->ctr || !c->nattempts)
			continue;
		snprintf(want, sizeof(want), " %s %s", opt, port_ip(w, c->b, c->pb));
		for (k = 0; k < c->nattempts; k++)
			if (!strstr(c->attempts[k].command, want))
				fail_msg("'%s' lacks '%s'", c->attempts[k].command, want);
		n++;
	}
	return n;
}

/* Two rails in one subnet (flat L2 with policy routing), n2's rxe1 dead:
 * an rping client left to the route would leave by rxe0 and n2/rxe1
 * would pass as a client; bound by -I, exactly n2/rxe1 is named, and
 * every client's -I is its reported port's address, across rails too. */
static void test_validate_bind__rping_client_bound_to_its_port(void **state)
{
	struct world *w = world_start(state, 4, make_spec_two_rails(4,
				      "  - { stage: rping, concurrent_rails: true }\n"));

	fake_two_rails(&w->f);
	w->f.shared_subnet = 1;
	w->f.dead_port[1][1] = 1;
	world_run(w);
	assert_verdicts(w, "rping:port:n2 ");
	assert_string_equal(ln_results_port(&w->res, 1, w->res.verdicts[0].pa), "rxe1");
	assert_true(each_client_bound(w, LN_STAGE_RPING, "-I") >= 8);
}

/* The same with three nodes, as the 3-guest lab runs it (validate.sh's
 * shared subnet step): each rail a ring of three, lab2's rxe1 its only
 * fault, one attempt a pair. */
static void test_validate_bind__rping_shared_subnet_three_nodes(void **state)
{
	struct world *w = world_start(state, 3, make_spec_two_rails(3,
				      "  - { stage: rping, concurrent_rails: true }\n"));

	fake_two_rails(&w->f);
	w->f.shared_subnet = 1;
	w->f.dead_port[1][1] = 1;
	w->o.attempts = 1;
	world_run(w);
	assert_verdicts(w, "rping:port:n2 ");
	assert_string_equal(ln_results_port(&w->res, 1, w->res.verdicts[0].pa), "rxe1");
}

/* The control: the same shared subnet with every port alive passes. */
static void test_validate_bind__rping_shared_subnet_healthy(void **state)
{
	struct world *w = world_start(state, 4, make_spec_two_rails(4,
				      "  - { stage: rping, rails: all }\n"));

	fake_two_rails(&w->f);
	w->f.shared_subnet = 1;
	world_run(w);
	assert_int_equal(w->res.nverdicts, 0);
	/* rails: all: cross-rail pairs too, each client on its own port */
	assert_true(each_client_bound(w, LN_STAGE_RPING, "-I") > 8);
}

/* Every pair check of stage st passed, with want as its reason. */
static void each_pass_says(const struct world *w, enum ln_stage st, const char *want)
{
	size_t i, n = 0;

	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != st || c->b == LN_NO_NODE || c->ctr)
			continue;
		assert_int_equal(c->status, LN_ST_PASS);
		if (!c->reason || strcmp(c->reason, want))
			fail_msg("%s: want '%s'", c->reason ? c->reason : "(none)", want);
		n++;
	}
	assert_true(n > 0);
}

#define CM_NOTE "; RDMA CM's binding is not used: docs/validation.md, Binding)"

/* Every node's perftest has --bind_source_ip, yet no end runs over RDMA
 * CM (its client crashed in the lab): each is bound by -d and its port's
 * GID index (-x); --help is read once per node for each tool although
 * each node serves and runs several pairs on two rails at once, and the
 * checks say what each end's perftest lists. */
static void test_validate_bind__perftest_bound_by_device(void **state)
{
	struct world *w = world_start(state, 4, make_spec_two_rails(4,
				      "  - { stage: devices }\n"
				      "  - { stage: bandwidth, concurrent_rails: true }\n"
				      "  - { stage: latency, concurrent_rails: true }\n"));
	size_t i;

	fake_two_rails(&w->f);
	for (i = 0; i < 4; i++)
		w->f.bind_source[i] = 1;
	world_run(w);
	assert_int_equal(w->res.nverdicts, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(w->f.help_runs[i], 2);	/* ib_write_bw, ib_write_lat */
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];
		char x[32];

		if ((c->stage != LN_STAGE_BANDWIDTH && c->stage != LN_STAGE_LATENCY) ||
		    c->b == LN_NO_NODE || c->ctr)
			continue;
		assert_int_equal(c->status, LN_ST_PASS);
		assert_null(strstr(c->attempts[0].command, " -R"));
		snprintf(x, sizeof(x), "-d %s -i 1 -x 1 ", w->spec->nodes[c->b].rdma[c->pb].device);
		assert_non_null(strstr(c->attempts[0].command, x));
		assert_non_null(strstr(c->reason, "bound: -d/-i/-x, not RDMA CM (ib_write_"));
		assert_non_null(strstr(c->reason, "lists --bind_source_ip" CM_NOTE));
	}
}

/* n3's perftest is Debian 12's (no --bind_source_ip): the same binding,
 * and its pairs' notes say that it lists none. */
static void test_validate_bind__perftest_without_bind_source_ip(void **state)
{
	struct world *w = world_start(state, 4, make_spec_two_rails(4,
				      "  - { stage: devices }\n"
				      "  - { stage: bandwidth, pairs: all }\n"));
	size_t i, old = 0;

	fake_two_rails(&w->f);
	w->f.bind_source[0] = w->f.bind_source[1] = w->f.bind_source[3] = 1;
	world_run(w);
	assert_int_equal(w->res.nverdicts, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(w->f.help_runs[i], 1);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != LN_STAGE_BANDWIDTH || c->b == LN_NO_NODE || c->ctr)
			continue;
		assert_int_equal(c->status, LN_ST_PASS);
		assert_null(strstr(c->attempts[0].command, "-R"));
		assert_null(strstr(c->attempts[0].command, "--bind_source_ip"));
		if (c->a == 2 || c->b == 2) {
			assert_non_null(strstr(c->reason, "on 'n3' lists no --bind_source_ip"));
			old++;
		}
	}
	/* pairs: all on 4 nodes: 6 pairs per rail, 3 of them with n3 */
	assert_int_equal(old, 6);
}

/* A node whose --help cannot be read (the agent refused it): the note
 * says what the agent said. */
static void test_validate_bind__perftest_help_unreadable(void **state)
{
	struct world *w = world_start(state, 2, make_spec(2, "  - { stage: devices }\n"
							  "  - { stage: bandwidth }\n", 0));

	w->f.bind_source[0] = w->f.bind_source[1] = 1;
	w->f.help_refused[1] = 1;
	world_run(w);
	each_pass_says(w, LN_STAGE_BANDWIDTH, "bound: -d/-i/-x, not RDMA CM (ib_write_bw on 'n1' "
		       "lists --bind_source_ip; on 'n2' --help could not be read: agent on 'n2' "
		       "refused 'run': run: ib_write_bw option '--help' is not allowed" CM_NOTE);
}

/* The builder, both ways: -R with each end's own address, or neither
 * -R nor the option; -x wherever the port's GID index is known. */
static void test_validate_bind__perftest_argv_both_ways(void **state)
{
	const struct port_info srv = { .ip = "10.0.0.1", .dev = "rxe0", .port = 1,
				       .gid_index = 1 };
	const struct port_info cli = { .ip = "10.0.1.2", .dev = "rxe1", .port = 1,
				       .gid_index = -1 };
	struct argv sv = { .n = 0 }, cv = { .n = 0 };
	char *s, *c;

	(void)state;
	vs_perftest_argv(&srv, &cli, "ib_write_bw", 65536, 200, 18515, "--report_gbits", 1, &sv,
			 &cv);
	s = vs_argv_join(&sv);
	c = vs_argv_join(&cv);
	assert_string_equal(s, "ib_write_bw -d rxe0 -i 1 -x 1 -s 65536 -n 200 -p 18515 -R "
			       "--bind_source_ip 10.0.0.1 -F --report_gbits");
	assert_string_equal(c, "ib_write_bw -d rxe1 -i 1 -s 65536 -n 200 -p 18515 -R "
			       "--bind_source_ip 10.0.1.2 -F --report_gbits 10.0.0.1");
	free(s);
	free(c);
	vs_argv_free(&sv);
	vs_argv_free(&cv);
	vs_perftest_argv(&srv, &cli, "ib_write_lat", 2, 1000, 18615, NULL, 0, &sv, &cv);
	s = vs_argv_join(&sv);
	c = vs_argv_join(&cv);
	assert_string_equal(s, "ib_write_lat -d rxe0 -i 1 -x 1 -s 2 -n 1000 -p 18615 -F");
	assert_string_equal(c, "ib_write_lat -d rxe1 -i 1 -s 2 -n 1000 -p 18615 -F 10.0.0.1");
	free(s);
	free(c);
	vs_argv_free(&sv);
	vs_argv_free(&cv);
}

LN_TEST_MAIN(group_setup, group_teardown,
	WORLD_TEST(test_validate_bind__rping_client_bound_to_its_port),
	WORLD_TEST(test_validate_bind__rping_shared_subnet_healthy),
	WORLD_TEST(test_validate_bind__rping_shared_subnet_three_nodes),
	WORLD_TEST(test_validate_bind__perftest_bound_by_device),
	WORLD_TEST(test_validate_bind__perftest_without_bind_source_ip),
	WORLD_TEST(test_validate_bind__perftest_help_unreadable),
	WORLD_TEST(test_validate_bind__perftest_argv_both_ways),
)
