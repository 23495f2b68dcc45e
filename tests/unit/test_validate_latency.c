/* SPDX-License-Identifier: MIT */
/*
 * The latency stage against the fake cluster (validate_fake.h): healthy,
 * a bad node and link, a bad port of two rails, and --dry-run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/validate_fake.h"

static const char lat_stages[] =
	"  - { stage: devices }\n  - { stage: rping }\n"
	"  - { stage: latency, tool: ib_send_lat, iterations: 200, size: 64B, "
	"max_typical: 20us, max_p99: 0.05ms }\n";

/* Healthy: every pair passes with the client's figures, the argv is the
 * stage's (device, port, GID, size, iterations, its own TCP ports), and
 * every report format carries the figures. */
static void test_validate_latency__healthy(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, lat_stages, 0));
	struct ln_buf json = LN_BUF_INIT, text = LN_BUF_INIT, junit = LN_BUF_INIT,
		      prom = LN_BUF_INIT, html = LN_BUF_INIT;
	size_t i, n = 0;

	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 0);
	assert_int_equal(w->res.stages[LN_STAGE_LATENCY].passed, 4);
	assert_int_equal(w->res.stages[LN_STAGE_LATENCY].rounds, 2);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != LN_STAGE_LATENCY)
			continue;
		n++;
		assert_string_equal(c->name, "ib_send_lat");
		assert_string_equal(c->unit, "us");
		assert_float_equal(c->value, 3.0, 1e-9);
		assert_float_equal(c->lat.typical, 3.0, 1e-9);
		assert_float_equal(c->lat.avg, 3.75, 1e-9);
		assert_float_equal(c->lat.p99, 6.0, 1e-9);
		assert_float_equal(c->lat.max_typical, 20.0, 0);
		assert_float_equal(c->lat.max_p99, 50.0, 0);
		assert_float_equal(c->threshold, 20.0, 0);
		if (!strstr(c->attempts[0].command, "ib_send_lat -d rxe0 -i 1 -x 1 -s 64 "
								"-n 200 -p 1861"))
			fail_msg("%s", c->attempts[0].command);
		assert_null(strstr(c->attempts[0].command, "report_gbits"));
	}
	assert_int_equal(n, 4);
	assert_int_equal(ln_report_json(&w->res, 0, &json), 0);
	if (!strstr(json.buf, "\"latency\":{\"typical_us\":3.0,\"avg_us\":3.75,\"p99_us\":6.0,"))
		fail_msg("%s", strstr(json.buf, "\"unit\":\"us\""));
	assert_non_null(strstr(json.buf, "\"max_typical_us\":20.0,\"max_p99_us\":50.0"));
	assert_int_equal(ln_report_text(&w->res, 0, &text), 0);
	assert_non_null(strstr(text.buf, "  latency    pass     4 passed, 0 failed"));
	assert_int_equal(ln_report_junit(&w->res, &junit), 0);
	assert_non_null(strstr(junit.buf, "<system-out>typical 3.00 us, avg 3.75 us, p99 6.00 us "
					  "(max typical 20 us, max p99 50 us)"));
	assert_int_equal(ln_report_metrics(&w->res, &prom), 0);
	assert_non_null(strstr(prom.buf, "llmnet_validation_pair_latency_us{cluster=\"fake\","
					 "stage=\"latency\",a=\"n1\",a_port=\"rxe0\","
					 "b_port=\"rxe0\",b=\"n2\",stat=\"p99\"} 6\n"));
	assert_int_equal(ln_report_html(&w->res, &html), 0);
	assert_non_null(strstr(html.buf, "id=\"latency-n1-n2\" class=\"pass\""));
	ln_test_release(&json, &text, &junit, &prom, &html);
}

/* A slow node and a slow link: the latency failures go through the same
 * diagnosis as bandwidth's and name exactly those, in every format. */
static void test_validate_latency__bad_node_and_link(void **state)
{
	struct world *w = world_start(state, 6, make_spec(6, "  - { stage: rping }\n"
							  "  - { stage: latency, pairs: all, "
							  "max_typical: 20us }\n", 0));
	struct ln_buf text = LN_BUF_INIT, json = LN_BUF_INIT, prom = LN_BUF_INIT;
	size_t i;

	w->f.slow_node[3] = 1;
	w->f.slow_link[0][1] = 1;
	world_run(w);
	assert_verdicts(w, "latency:node:n4 latency:link:n1-n2 ");
	assert_int_equal(ln_results_exit(&w->res), 1);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != LN_STAGE_LATENCY || c->retest || c->status == LN_ST_PASS)
			continue;
		assert_true(c->a == 3 || c->b == 3 || (c->a + c->b == 1));
		assert_string_equal(c->reason, "typical latency 80.00 us is above 20 us");
		assert_float_equal(c->lat.p99, 160.0, 1e-9);
	}
	assert_int_equal(ln_report_text(&w->res, 0, &text), 0);
	assert_non_null(strstr(text.buf, "bad node n4 (latency)"));
	assert_non_null(strstr(text.buf, "bad link n1/rxe0-n2/rxe0 (latency)"));
	assert_non_null(strstr(text.buf, "fail: typical latency 80.00 us is above 20 us typical "
					 "80.00 us, avg 100.00 us, p99 160.00 us (max typical 20 us)"));
	assert_int_equal(ln_report_json(&w->res, 0, &json), 0);
	if (!strstr(json.buf, "\"culprits\":{\"nodes\":[\"n4\"],\"ports\":[],\"links\":"
			      "[[\"n1\",\"n2\"]],\"link_ports\":[[\"n1/rxe0\",\"n2/rxe0\"]]}"))
		fail_msg("%s", strstr(json.buf, "\"culprits\""));
	assert_int_equal(ln_report_metrics(&w->res, &prom), 0);
	assert_non_null(strstr(prom.buf, "llmnet_validation_bad_node{cluster=\"fake\","
					 "stage=\"latency\",node=\"n4\"} 1"));
	ln_test_release(&text, &json, &prom);
}

/* Two rails, n2's rxe1 slow with every partner: a bad port, exactly
 * n2/rxe1, while n2's rxe0 passes every pair; named so in every format. */
static void test_validate_latency__bad_port(void **state)
{
	struct world *w = world_start(state, 4, make_spec_two_rails(4, "  - { stage: devices }\n"
								      "  - { stage: latency, "
								      "max_p99: 100us }\n"));
	struct ln_buf text = LN_BUF_INIT, json = LN_BUF_INIT, prom = LN_BUF_INIT,
		      junit = LN_BUF_INIT, html = LN_BUF_INIT;
	size_t i, rxe0 = 0;

	fake_two_rails(&w->f);
	w->f.slow_port[1][1] = 1;
	world_run(w);
	assert_int_equal(ln_report_text(&w->res, 0, &text), 0);
	if (w->res.nverdicts != 1)
		fail_msg("%s", text.buf);
	assert_int_equal(w->res.verdicts[0].kind, LN_VERDICT_PORT);
	assert_int_equal(w->res.verdicts[0].stage, LN_STAGE_LATENCY);
	assert_int_equal(w->res.verdicts[0].a, 1);
	assert_string_equal(ln_results_port(&w->res, 1, w->res.verdicts[0].pa), "rxe1");
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != LN_STAGE_LATENCY || c->retest || (c->a != 1 && c->b != 1) ||
		    strcmp(ln_results_port(&w->res, c->a, c->pa), "rxe0"))
			continue;
		rxe0++;
		assert_int_equal(c->status, LN_ST_PASS);
	}
	assert_int_equal(rxe0, 2);
	if (!strstr(text.buf, "bad port n2/rxe1 (latency)"))
		fail_msg("%s", text.buf);
	assert_non_null(strstr(text.buf, "99th percentile 160.00 us is above 100 us"));
	assert_int_equal(ln_report_json(&w->res, 0, &json), 0);
	assert_non_null(strstr(json.buf, "\"culprits\":{\"nodes\":[],\"ports\":[\"n2/rxe1\"],"
					 "\"links\":[]"));
	assert_int_equal(ln_report_metrics(&w->res, &prom), 0);
	assert_non_null(strstr(prom.buf, "llmnet_validation_bad_port{cluster=\"fake\","
					 "stage=\"latency\",node=\"n2\",port=\"rxe1\"} 1"));
	assert_int_equal(ln_report_junit(&w->res, &junit), 0);
	assert_non_null(strstr(junit.buf, "classname=\"llmnet.latency\" name=\"n1/rxe1-n2/rxe1"));
	assert_int_equal(ln_report_html(&w->res, &html), 0);
	assert_non_null(strstr(html.buf, "bad port n2/rxe1</b> (latency)"));
	ln_test_release(&text, &json, &prom, &junit, &html);
}

/* The "error counters" check of node's port dev in stage st; NULL none. */
static void test_validate_latency__dry_run(void **state)
{
	struct ln_spec *spec = make_spec(4, "  - { stage: latency, pairs: all, max_p99: 30us }\n", 0);
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;

	(void)state;
	assert_int_equal(ln_validate_schedule(spec, 0, &out, &err), 0);
	assert_string_equal(out.buf, "schedule of 'fake': 4 nodes, 1 rails: rail0 (4 nodes)\n"
				     "latency: pairs all, rails aligned: 6 pairs in 3 rounds\n"
				     "  round 1: n1/rxe0-n4/rxe0 (rail0) n2/rxe0-n3/rxe0 (rail0)\n"
				     "  round 2: n2/rxe0-n4/rxe0 (rail0) n1/rxe0-n3/rxe0 (rail0)\n"
				     "  round 3: n3/rxe0-n4/rxe0 (rail0) n1/rxe0-n2/rxe0 (rail0)\n");
	ln_test_release(&out, &err);
	ln_spec_free(spec);
}

LN_TEST_MAIN(group_setup, group_teardown,
	WORLD_TEST(test_validate_latency__healthy),
	WORLD_TEST(test_validate_latency__bad_node_and_link),
	WORLD_TEST(test_validate_latency__bad_port),
	cmocka_unit_test(test_validate_latency__dry_run),
)
