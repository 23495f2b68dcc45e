/* SPDX-License-Identifier: MIT */
/*
 * Port error counters around each pair (max_errors) against the fake
 * cluster (validate_fake.h): healthy, a lossy port, a suspect partner,
 * counters that cannot be read.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/validate_fake.h"

/* Healthy, two rails: every tested port's counters read before and after
 * each of its pairs; rping's rises reported, not judged (no max_errors),
 * bandwidth's judged against max_errors: 10 and passing. A counter the
 * driver lacks stays not available (-1), never 0. */
/* The metrics' labels of the bandwidth stage's bad port. */
#define N2_RXE1 "cluster=\"fake\",stage=\"bandwidth\",node=\"n2\",port=\"rxe1\""

static void test_validate_counters__healthy(void **state)
{
	struct world *w = world_start(state, 4, make_spec_two_rails(4,
		"  - { stage: rping }\n  - { stage: bandwidth, max_errors: 10 }\n"));
	const struct ln_check *c;
	struct ln_buf text = LN_BUF_INIT, html = LN_BUF_INIT;
	size_t i, k, n = 0;

	fake_two_rails(&w->f);
	w->f.with_counters = 1;
	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 0);
	assert_int_equal(w->res.nverdicts, 0);
	/* 8 pairs per stage, 2 ends, before and after */
	assert_int_equal(w->f.counter_reads, 2 * 8 * 2 * 2);
	for (i = 0; i < 4; i++)
		for (k = 0; k < 2; k++) {
			c = ctr_check(&w->res, LN_STAGE_RPING, i, k ? "rxe1" : "rxe0");
			assert_non_null(c);
			assert_int_equal(c->status, LN_ST_PASS);
			assert_true(isnan(c->threshold));
			assert_float_equal(c->value, 0, 0);
			assert_int_equal(c->ctr->partners, 2);
			assert_int_equal(c->ctr->max_errors, -1);
			c = ctr_check(&w->res, LN_STAGE_BANDWIDTH, i, k ? "rxe1" : "rxe0");
			assert_non_null(c);
			assert_int_equal(c->status, LN_ST_PASS);
			assert_null(c->reason);
			assert_float_equal(c->threshold, 10, 0);
			assert_string_equal(c->unit, "errors");
			assert_string_equal(c->ctr->driver, "rdma_rxe");
			assert_int_equal(c->ctr->errors, 0);
			assert_int_equal(c->ctr->n, 4);
			assert_string_equal(c->ctr->v[2].name, "send_err");
			assert_int_equal(c->ctr->v[2].delta, -1);
			assert_string_equal(c->ctr->v[3].name, "sent_pkts");
			assert_false(c->ctr->v[3].error);
			assert_true(c->ctr->v[3].delta > 0);
			n++;
		}
	assert_int_equal(n, 8);
	/* the pairs plus a check per port */
	assert_int_equal(w->res.stages[LN_STAGE_BANDWIDTH].passed, 8 + 8);
	assert_int_equal(ln_report_text(&w->res, 0, &text), 0);
	assert_non_null(strstr(text.buf, "  rping      pass     16 passed, 0 failed, 0 skipped, "
					 "0 not run (4 rounds)\n             8 ports, 0 errors; "
					 "not judged (no max_errors)\n"));
	assert_non_null(strstr(text.buf, "8 ports, 0 errors; max_errors 10\n"));
	assert_int_equal(ln_report_html(&w->res, &html), 0);
	assert_non_null(strstr(html.buf, "16 of 16 ports gained no error (not listed)"));
	ln_test_release(&text, &html);
}

/* Loss on n2's rxe1: its counters rise with both its partners (n1, n3),
 * theirs with n2 only. Exactly n2/rxe1 is blamed; its partners pass with
 * a note, n2/rxe0 passes; the pairs themselves passed. */
static void test_validate_counters__bad_port(void **state)
{
	struct world *w = world_start(state, 4, make_spec_two_rails(4,
		"  - { stage: bandwidth, max_errors: 10 }\n"));
	const struct ln_check *c;
	struct ln_buf text = LN_BUF_INIT, json = LN_BUF_INIT, prom = LN_BUF_INIT,
		      junit = LN_BUF_INIT, html = LN_BUF_INIT;

	fake_two_rails(&w->f);
	w->f.with_counters = 1;
	w->f.lossy[1][1] = 1;
	world_run(w);
	assert_verdicts(w, "bandwidth:port:n2 ");
	assert_string_equal(ln_results_port(&w->res, 1, w->res.verdicts[0].pa), "rxe1");
	assert_non_null(strstr(w->res.verdicts[0].reason, "'n2/rxe1' gained more than 10 errors "
				 "with 2 partners (n1/rxe1, n3/rxe1): rcvd_seq_err +80"));
	assert_int_equal(ln_results_exit(&w->res), 1);
	c = ctr_check(&w->res, LN_STAGE_BANDWIDTH, 1, "rxe1");
	assert_int_equal(c->status, LN_ST_FAIL);
	assert_int_equal(c->ctr->errors, 80);
	assert_int_equal(c->ctr->partners_over, 2);
	c = ctr_check(&w->res, LN_STAGE_BANDWIDTH, 0, "rxe1");
	assert_int_equal(c->status, LN_ST_PASS);
	assert_string_equal(c->reason, "40 errors (rcvd_seq_err +40), over 10 only with "
				       "'n2/rxe1', which is blamed");
	assert_int_equal(ctr_check(&w->res, LN_STAGE_BANDWIDTH, 1, "rxe0")->status, LN_ST_PASS);
	assert_int_equal(ctr_check(&w->res, LN_STAGE_BANDWIDTH, 1, "rxe0")->ctr->errors, 0);
	assert_int_equal(ctr_check(&w->res, LN_STAGE_BANDWIDTH, 3, "rxe1")->status, LN_ST_PASS);
	assert_int_equal(w->res.stages[LN_STAGE_BANDWIDTH].failed, 1);
	assert_int_equal(ln_report_text(&w->res, 0, &text), 0);
	if (!strstr(text.buf, "bad port n2/rxe1 (bandwidth)"))
		fail_msg("%s", text.buf);
	assert_non_null(strstr(text.buf, "  bandwidth  FAIL     15 passed, 1 failed"));
	assert_non_null(strstr(text.buf, "8 ports, 160 errors (n1/rxe1 40, n2/rxe1 80, n3/rxe1 40); "
					 "max_errors 10\n"));
	assert_non_null(strstr(text.buf, "  bandwidth n2/rxe1 fail: 80 errors (rcvd_seq_err +80); "
					 "over 10 with 2 of its 2 partners (n1/rxe1, n3/rxe1)\n"));
	assert_int_equal(ln_report_json(&w->res, 0, &json), 0);
	assert_non_null(strstr(json.buf, "\"culprits\":{\"nodes\":[],\"ports\":[\"n2/rxe1\"],"
					 "\"links\":[]"));
	assert_non_null(strstr(json.buf, "\"node\":\"n2\",\"port\":\"rxe1\",\"rail\":\"rail1\","
					 "\"stage\":\"bandwidth\",\"name\":\"error counters\","
					 "\"status\":\"fail\""));
	assert_non_null(strstr(json.buf, "\"counters\":{\"driver\":\"rdma_rxe\",\"errors\":80,"
					 "\"max_errors\":10,\"partners\":2,\"partners_over\":2,"
					 "\"deltas\":{\"errors\":{\"rcvd_seq_err\":80,"
					 "\"out_of_seq_request\":0,\"send_err\":null}"));
	assert_int_equal(ln_report_metrics(&w->res, &prom), 0);
	assert_non_null(strstr(prom.buf, "llmnet_validation_port_errors{" N2_RXE1 "} 80\n"));
	assert_non_null(strstr(prom.buf, "llmnet_validation_port_counter_delta{" N2_RXE1
					 ",counter=\"rcvd_seq_err\",kind=\"error\"} 80\n"));
	assert_null(strstr(prom.buf, "counter=\"send_err\""));
	assert_non_null(strstr(prom.buf, "llmnet_validation_bad_port{" N2_RXE1 "} 1"));
	assert_int_equal(ln_report_junit(&w->res, &junit), 0);
	assert_non_null(strstr(junit.buf, "name=\"n2/rxe1 error counters\" time=\"0.000\">\n"
					  "      <failure type=\"fail\" message=\"80 errors"));
	assert_non_null(strstr(junit.buf, "name=\"n4/rxe0 error counters\" time=\"0.000\">\n"
					  "      <system-out>0 errors (not available: send_err), "
					  "max_errors 10, over it with 0 of 2 partners\n"));
	assert_int_equal(ln_report_html(&w->res, &html), 0);
	assert_non_null(strstr(html.buf, "<tr id=\"counters-bandwidth-n2/rxe1\" title=\"80 errors"));
	assert_non_null(strstr(html.buf, "<td class=\"fail\">fail</td><td>80</td><td>10</td>"
					 "<td>2 / 2</td>"));
	assert_non_null(strstr(html.buf, "5 of 8 ports gained no error (not listed)"));
	assert_non_null(strstr(html.buf, "bad port n2/rxe1</b> (bandwidth)"));
	ln_test_release(&json, &prom, &junit, &html);
	ln_buf_release(&text);
}

/* Two nodes: each port has one partner, so loss on one names no culprit:
 * both ends are suspects (undetermined), nothing is blamed, the stage
 * fails. */
static void test_validate_counters__one_partner_is_suspect(void **state)
{
	struct world *w = world_start(state, 2, make_spec(2, "  - { stage: rping, max_errors: 0 }\n",
							  0));

	w->f.with_counters = 1;
	w->f.lossy[0][0] = 1;
	world_run(w);
	assert_verdicts(w, "rping:undetermined:n1 rping:undetermined:n2 ");
	assert_int_equal(ln_results_exit(&w->res), 1);
	assert_non_null(strstr(ctr_check(&w->res, LN_STAGE_RPING, 0, "rxe0")->reason,
			       "suspect: 40 errors (rcvd_seq_err +40), over 0 with its one partner "
			       "'n2/rxe0' only"));
}

/* Counters that cannot be read never pass on them: "not run" (the stage
 * fails) with max_errors; without it they are not judged, and say so. */
static void test_validate_counters__unreadable(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: rping }\n"
							  "  - { stage: latency, max_errors: 5 }\n", 0));
	const struct ln_check *c;
	struct ln_buf text = LN_BUF_INIT;

	w->f.with_counters = 1;
	w->f.no_counters[2] = 1;
	world_run(w);
	c = ctr_check(&w->res, LN_STAGE_RPING, 2, "rxe0");
	assert_int_equal(c->status, LN_ST_PASS);
	assert_string_equal(c->reason, "not judged (no max_errors); counters of 'n3/rxe0' could "
				       "not be read: no counter table for this driver");
	assert_true(isnan(c->value));
	assert_int_equal(w->res.stages[LN_STAGE_RPING].status, LN_ST_PASS);
	c = ctr_check(&w->res, LN_STAGE_LATENCY, 2, "rxe0");
	assert_int_equal(c->status, LN_ST_NOT_RUN);
	assert_int_equal(ctr_check(&w->res, LN_STAGE_LATENCY, 0, "rxe0")->status, LN_ST_PASS);
	assert_int_equal(w->res.stages[LN_STAGE_LATENCY].status, LN_ST_FAIL);
	assert_int_equal(ln_results_exit(&w->res), 1);
	assert_int_equal(w->res.nverdicts, 0);
	assert_int_equal(ln_report_text(&w->res, 0, &text), 0);
	assert_non_null(strstr(text.buf, "3 ports, 0 errors; not read: n3/rxe0; not judged "
					 "(no max_errors)\n"));
	assert_non_null(strstr(text.buf, "  latency   n3/rxe0 not run: counters of 'n3/rxe0' could "
					 "not be read: no counter table for this driver\n"));
	ln_buf_release(&text);
}

/* --dry-run: the latency stage's pairs and rounds, from the same
 * schedule the run uses, without a probe run. */

LN_TEST_MAIN(group_setup, group_teardown,
	WORLD_TEST(test_validate_counters__healthy),
	WORLD_TEST(test_validate_counters__bad_port),
	WORLD_TEST(test_validate_counters__one_partner_is_suspect),
	WORLD_TEST(test_validate_counters__unreadable),
)
