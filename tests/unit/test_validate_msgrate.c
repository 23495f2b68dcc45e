/* SPDX-License-Identifier: MIT */
/*
 * The bandwidth stage's message rate (issue 27 pt 3) against the fake
 * cluster (validate_fake.h): with min_msg_rate every pair runs perftest a
 * second time at msg_size and is judged on its MsgRate[Mpps]; a link that
 * moves large messages at line rate but small ones slowly is named, with
 * both its ends' ports, as a slow link is; without the key nothing more
 * runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/validate_fake.h"

/* The bandwidth check of the pair n(a+1)-n(b+1), first pass; NULL none. */
static const struct ln_check *bw_check(const struct ln_results *r, size_t a, size_t b)
{
	size_t i;

	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i];

		if (c->stage == LN_STAGE_BANDWIDTH && !c->retest && !c->ctr &&
		    ((c->a == a && c->b == b) || (c->a == b && c->b == a)))
			return c;
	}
	return NULL;
}

/* Every pair passes both runs: 95 Gb/s of 64 B messages are 185.5 Mpps;
 * each attempt's command names both runs, the second at msg_size's
 * default, 64 B; the JSON report carries the rate and its threshold. */
static void test_validate_msgrate__healthy(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, "  - { stage: rping }\n"
		"  - { stage: bandwidth, min: 50Gb/s, min_msg_rate: 10 }\n", 0));
	struct ln_buf js = LN_BUF_INIT;
	size_t i, bw = 0;

	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 0);
	assert_int_equal(w->res.nverdicts, 0);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != LN_STAGE_BANDWIDTH || c->ctr)
			continue;
		bw++;
		assert_int_equal(c->status, LN_ST_PASS);
		assert_float_equal(c->value, 95.0, 1e-9);
		assert_float_equal(c->msg_rate, 95e3 / 8 / 64, 1e-3);
		assert_float_equal(c->msg_rate_min, 10.0, 1e-12);
		assert_non_null(strstr(c->attempts[0].command, "-s 1048576"));
		assert_non_null(strstr(c->attempts[0].command, "; ib_write_bw"));
		assert_non_null(strstr(c->attempts[0].command, "-s 64 "));
	}
	assert_int_equal(bw, 4);
	assert_int_equal(ln_report_json(&w->res, 0, &js), 0);
	assert_non_null(strstr(js.buf, "\"msg_rate_mpps\":185.5"));
	assert_non_null(strstr(js.buf, "\"min_msg_rate_mpps\":10"));
	ln_buf_release(&js);
}

/* n1-n2 moves 1 MiB at 95 Gb/s but 64 B at 0.256 Gb/s (0.5 Mpps): its
 * bandwidth passes, its message rate fails, and the diagnosis' retests
 * against good peers make it a link verdict naming both ends and ports. */
static void test_validate_msgrate__slow_link_named(void **state)
{
	struct world *w = world_start(state, 6, make_spec(6, "  - { stage: rping }\n"
		"  - { stage: bandwidth, min: 50Gb/s, min_msg_rate: 10 }\n", 0));
	struct ln_buf text = LN_BUF_INIT;
	const struct ln_check *c;
	char want[128];

	w->f.small_gbps[0][1] = w->f.small_gbps[1][0] = 0.256;
	world_run(w);
	assert_verdicts(w, "bandwidth:link:n1-n2 ");
	assert_int_equal(ln_results_exit(&w->res), 1);
	c = bw_check(&w->res, 0, 1);
	assert_non_null(c);
	assert_int_equal(c->status, LN_ST_FAIL);
	assert_float_equal(c->value, 95.0, 1e-9);	/* the bandwidth run passed */
	assert_float_equal(c->msg_rate, 0.5, 1e-9);
	assert_string_equal(c->reason, "message rate 0.5 Mpps at 64 B is below 10 Mpps");
	/* a low rate is a result, not retried within the pass: one attempt,
	 * then the diagnosis' retest of the link, which fails the same way */
	assert_int_equal(c->nattempts, 2);
	assert_string_equal(c->attempts[1].detail, c->reason);
	c = bw_check(&w->res, 1, 2);
	assert_non_null(c);
	assert_int_equal(c->status, LN_ST_PASS);
	assert_int_equal(ln_report_text(&w->res, 0, &text), 0);
	snprintf(want, sizeof(want), "bandwidth n1/%s-n2/%s fail: message rate 0.5 Mpps",
		 ln_results_port(&w->res, 0, 0), ln_results_port(&w->res, 1, 0));
	if (!strstr(text.buf, want))
		fail_msg("no '%s' in:\n%s", want, text.buf);
	ln_buf_release(&text);
}

/* msg_size sizes the second run; a rate above every pair's passes. */
static void test_validate_msgrate__msg_size_and_threshold(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: bandwidth, "
		"min_msg_rate: 2000, msg_size: 4B }\n", 0));
	const struct ln_check *c;

	world_run(w);
	c = bw_check(&w->res, 0, 1);
	assert_non_null(c);
	assert_non_null(strstr(c->attempts[0].command, "-s 4 "));
	/* 95 Gb/s of 4 B messages: 2968.75 Mpps */
	assert_int_equal(c->status, LN_ST_PASS);
	assert_int_equal(ln_results_exit(&w->res), 0);
}

/* The accepted control of the key: without min_msg_rate one run, no rate. */
static void test_validate_msgrate__absent_runs_once(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: bandwidth }\n", 0));
	struct ln_buf js = LN_BUF_INIT;
	const struct ln_check *c;

	w->f.small_gbps[0][1] = w->f.small_gbps[1][0] = 0.256;
	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 0);
	c = bw_check(&w->res, 0, 1);
	assert_non_null(c);
	assert_null(strchr(c->attempts[0].command, ';'));
	assert_true(isnan(c->msg_rate) && isnan(c->msg_rate_min));
	assert_int_equal(ln_report_json(&w->res, 0, &js), 0);
	assert_null(strstr(js.buf, "msg_rate"));
	ln_buf_release(&js);
}

LN_TEST_MAIN(group_setup, group_teardown,
	WORLD_TEST(test_validate_msgrate__healthy),
	WORLD_TEST(test_validate_msgrate__slow_link_named),
	WORLD_TEST(test_validate_msgrate__msg_size_and_threshold),
	WORLD_TEST(test_validate_msgrate__absent_runs_once),
)
