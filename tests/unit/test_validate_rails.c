/* SPDX-License-Identifier: MIT */
/*
 * concurrent_rails against the fake cluster (validate_fake.h): a node's
 * rails in one round, each port on a session lane of its own, the same
 * culprits as one rail after the other in fewer rounds; the lab's fault
 * and netem runs; counters read around each port's own pair.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/validate_fake.h"

/* The culprits of a run with a bad link on rail0 (n1-n2), a dead port
 * (n4/rxe1) and a bad node (n7) in rping, a slow port (n2/rxe1) in
 * latency, over 8 nodes on two rails, with or without concurrent rails;
 * rounds[] gets rping's and latency's. */
/* The JSON report from its "culprits" key on (malloc'd). */
static char *culprits(const struct ln_results *res)
{
	struct ln_buf json = LN_BUF_INIT;
	const char *c;
	char *out;

	assert_int_equal(ln_report_json(res, 0, &json), 0);
	c = strstr(json.buf, "\"culprits\"");
	assert_non_null(c);
	out = strdup(c);
	assert_non_null(out);
	ln_buf_release(&json);
	return out;
}

/* The JSON report's culprits begin as want. */
static void assert_culprits(const struct ln_results *res, const char *want)
{
	char *c = culprits(res);

	if (strncmp(c, want, strlen(want)))
		fail_msg("%s", c);
	free(c);
}

static char *rail_faults(struct world *w, int concurrent, size_t rounds[2])
{
	char yaml[256];
	char *out;

	snprintf(yaml, sizeof(yaml), "  - { stage: rping, concurrent_rails: %s }\n"
		 "  - { stage: latency, max_typical: 50us, concurrent_rails: %s }\n",
		 concurrent ? "true" : "false", concurrent ? "true" : "false");
	w->spec = make_spec_two_rails(8, yaml);
	fake_init(&w->f, 8);
	fake_two_rails(&w->f);
	w->f.bad_rail_link[0][1] = 1;
	w->f.dead_port[3][1] = 1;
	w->f.bad_node[6] = 1;
	w->f.slow_port[1][1] = 1;
	world_run(w);
	/* a lane of its own for each port exactly when concurrent */
	assert_int_equal(w->f.lanes_used, concurrent);
	rounds[0] = w->res.stages[LN_STAGE_RPING].rounds;
	rounds[1] = w->res.stages[LN_STAGE_LATENCY].rounds;
	out = culprits(&w->res);
	ln_results_release(&w->res);
	memset(&w->res, 0, sizeof(w->res));
	ln_spec_free(w->spec);
	w->spec = NULL;
	fake_release(&w->f);
	memset(&w->f, 0, sizeof(w->f));
	return out;
}

/* concurrent_rails: true tests both rails of a node in one round, each
 * port on its own session lane (never two probes on one lane), in half
 * the rounds of one rail after the other, and the diagnosis names the
 * same bad link, bad port and bad node, exactly. */
static void test_validate_rails__same_verdicts(void **state)
{
	struct world *w = *state;
	size_t one[2], both[2];
	char *a = rail_faults(w, 0, one), *b = rail_faults(w, 1, both);

	assert_string_equal(a, b);
	if (!strstr(b, "\"culprits\":{\"nodes\":[\"n7\"],\"ports\":[\"n4/rxe1\",\"n2/rxe1\"],"
			"\"links\":[[\"n1\",\"n2\"]],\"link_ports\":[[\"n1/rxe0\",\"n2/rxe0\"]]}"))
		fail_msg("%s", b);
	/* a ring of 8 takes 2 rounds per rail: 4 one rail after the
	 * other, 2 with concurrent rails; the retests are the same */
	assert_int_equal(one[0] - both[0], 2);
	assert_int_equal(one[1] - both[1], 2);
	free(a);
	free(b);
}

/* A world of 4 nodes on two rails (fake_two_rails()) that runs stages. */
static struct world *two_rails(void **state, const char *stages)
{
	struct world *w = world_start(state, 4, make_spec_two_rails(4, stages));

	fake_two_rails(&w->f);
	return w;
}

/* The lab's fault run (tests/e2e/scenarios/validate.sh, 4 guests) with
 * concurrent rails: n3 dead, n1-n2 bad on rail0, n4's rxe1 dead; rping
 * then bandwidth (skipped where rping failed). Exactly those three. */
static void test_validate_rails__lab_faults(void **state)
{
	struct world *w = two_rails(state, "  - { stage: rping, concurrent_rails: true }\n"
				    "  - { stage: bandwidth, concurrent_rails: true }\n");

	w->f.bad_node[2] = 1;
	w->f.bad_rail_link[0][1] = 1;
	w->f.dead_port[3][1] = 1;
	w->o.attempts = 1;
	world_run(w);
	assert_culprits(&w->res, "\"culprits\":{\"nodes\":[\"n3\"],\"ports\":[\"n4/rxe1\"],"
			"\"links\":[[\"n1\",\"n2\"]],\"link_ports\":[[\"n1/rxe0\",\"n2/rxe0\"]]}");
}

/* The lab's netem run (validate.sh, 6.12, 4 guests): a delay on n2's
 * rxe0 and loss on n4's rxe1 in one latency stage, one rail a round, with
 * max_errors: the threshold names exactly n2/rxe0, the counters n4/rxe1
 * (its partners' rises are its loss, one faulty partner each), no node
 * and no link. */
static void test_validate_rails__netem(void **state)
{
	struct world *w = two_rails(state, "  - { stage: latency, max_typical: 50us, max_errors: 15, "
				    "concurrent_rails: false }\n");
	size_t i;
	int lat = 0, ctr = 0, k;

	w->f.with_counters = 1;
	w->f.slow_port[1][0] = 1;
	w->f.lossy[3][1] = 1;
	world_run(w);
	for (i = 0; i < w->res.nverdicts; i++) {
		const struct ln_verdict *v = &w->res.verdicts[i];
		int counters = strstr(v->reason, "gained more than") != NULL;

		assert_int_equal(v->kind, LN_VERDICT_PORT);
		assert_int_equal(v->a, counters ? 3 : 1);
		assert_string_equal(ln_results_port(&w->res, v->a, v->pa), counters ? "rxe1" : "rxe0");
		*(counters ? &ctr : &lat) += 1;
	}
	assert_int_equal(lat, 1);
	assert_int_equal(ctr, 1);
	/* n4's rail-1 partners: over the limit with n4 alone, which is blamed */
	for (k = 0; k < 3; k += 2) {
		const struct ln_check *c = ctr_check(&w->res, LN_STAGE_LATENCY, k, "rxe1");

		assert_int_equal(c->status, LN_ST_PASS);
		assert_non_null(strstr(c->reason, "which is blamed"));
	}
	assert_culprits(&w->res, "\"culprits\":{\"nodes\":[],\"ports\":[\"n2/rxe0\",\"n4/rxe1\"],"
			"\"links\":[],");
}

/* Loss on n2's rxe1 with concurrent rails: n2's rxe0 pairs run in the
 * same rounds, yet each port's counters are read around its own pair
 * only (a round holds one test per port), so exactly n2/rxe1 is blamed
 * and n2/rxe0 gained nothing. */
static void test_validate_rails__counters(void **state)
{
	struct world *w = two_rails(state, "  - { stage: bandwidth, max_errors: 10, "
				    "concurrent_rails: true }\n");
	struct ln_buf dry = LN_BUF_INIT, err = LN_BUF_INIT;
	char *v;

	w->f.with_counters = 1;
	w->f.lossy[1][1] = 1;
	world_run(w);
	assert_true(w->f.lanes_used);
	assert_int_equal(w->res.stages[LN_STAGE_BANDWIDTH].rounds, 2);
	v = verdicts(&w->res);
	assert_string_equal(v, "bandwidth:port:n2 ");
	free(v);
	assert_string_equal(ln_results_port(&w->res, 1, w->res.verdicts[0].pa), "rxe1");
	assert_int_equal(ctr_check(&w->res, LN_STAGE_BANDWIDTH, 1, "rxe1")->ctr->errors, 80);
	assert_int_equal(ctr_check(&w->res, LN_STAGE_BANDWIDTH, 1, "rxe0")->ctr->errors, 0);
	assert_int_equal(ctr_check(&w->res, LN_STAGE_BANDWIDTH, 0, "rxe0")->ctr->errors, 0);
	/* 8 pairs, 2 ends, before and after */
	assert_int_equal(w->f.counter_reads, 8 * 2 * 2);
	/* --dry-run shows the same rounds */
	assert_int_equal(ln_validate_schedule(w->spec, 0, &dry, &err), 0);
	if (!strstr(dry.buf, "bandwidth: pairs ring, rails aligned, concurrent rails: 8 pairs in "
			     "2 rounds\n  round 1: n1/rxe0-n2/rxe0 (rail0) n3/rxe0-n4/rxe0 (rail0) "
			     "n1/rxe1-n2/rxe1 (rail1) n3/rxe1-n4/rxe1 (rail1)\n  round 2: "))
		fail_msg("%s", dry.buf);
	ln_test_release(&dry, &err);
}

LN_TEST_MAIN(group_setup, group_teardown,
	WORLD_TEST(test_validate_rails__same_verdicts),
	WORLD_TEST(test_validate_rails__counters),
	WORLD_TEST(test_validate_rails__lab_faults),
	WORLD_TEST(test_validate_rails__netem),
)
