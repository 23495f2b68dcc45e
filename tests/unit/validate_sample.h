/* SPDX-License-Identifier: MIT */
/*
 * A sample validation result for the report tests: four nodes, devices
 * pass, rping fails on the link n1-n2 (twice, so the diagnosis blames the
 * link), bandwidth skips n1-n2 and measures one pair below its threshold,
 * io is listed but could not run. Reasons carry XML/label metacharacters
 * on purpose.
 */
#ifndef LN_TEST_VALIDATE_SAMPLE_H
#define LN_TEST_VALIDATE_SAMPLE_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/validate/diagnose.h"

static int sample_round(void *ctx, enum ln_stage stage, const struct ln_pair *pairs, size_t n,
			struct ln_attempt *out)
{
	size_t i;

	(void)ctx;
	(void)stage;
	for (i = 0; i < n; i++) {
		int bad = (pairs[i].a == 0 && pairs[i].b == 1) || (pairs[i].a == 1 && pairs[i].b == 0);

		out[i].ok = !bad;
		out[i].detail = bad ? strdup("cma event RDMA_CM_EVENT_UNREACHABLE, error -110") : NULL;
		out[i].command = strdup("rping -c -a 10.0.0.2 -C 10 -V");
	}
	return 0;
}

static void sample_results(struct ln_results *r)
{
	static const char *const names[] = { "n1", "n2", "n3", "n4" };
	static const size_t ring[4][2] = { { 0, 1 }, { 2, 3 }, { 1, 2 }, { 3, 0 } };
	struct ln_buf err = LN_BUF_INIT;
	size_t i;
	long k;

	if (ln_results_init(r, "lab <\"x\">", names, 4) < 0)
		abort();
	r->started = 1764478800;
	r->seconds = 42.5;
	/* devices, rping, bandwidth and io (not latency) */
	for (i = LN_STAGE_DEVICES; i <= LN_STAGE_IO; i++)
		r->stages[i].listed = i != LN_STAGE_LATENCY;
	r->stages[LN_STAGE_DEVICES].ran = r->stages[LN_STAGE_RPING].ran = 1;
	r->stages[LN_STAGE_BANDWIDTH].ran = 1;
	r->stages[LN_STAGE_IO].reason = strdup("no initiator in the spec has a namespace & <path>");
	for (i = 0; i < 4; i++) {
		struct ln_attempt at = { .ok = 1, .value = 100.0, .seconds = 0.01 };

		k = ln_results_add_check(r, LN_STAGE_DEVICES, i, LN_NO_NODE, "rxe0/1 state");
		ln_check_add_attempt(&r->checks[k], &at);
	}
	for (i = 0; i < 4; i++) {
		struct ln_attempt at = { 0 };
		int bad = i == 0;

		at.ok = !bad;
		at.value = NAN;
		at.seconds = bad ? 10.0 : 1.5;
		at.timed_out = bad;
		at.detail = bad ? (char *)"rping client on 'n2' to 'n1' (stage rping) timed out after 10s" : NULL;
		at.command = (char *)"rping -c -a 10.0.0.1 -C 10 -V";
		k = ln_results_add_check(r, LN_STAGE_RPING, ring[i][0], ring[i][1], "rping");
		ln_check_add_attempt(&r->checks[k], &at);
	}
	ln_diagnose_stage(r, LN_STAGE_RPING, sample_round, NULL, NULL, &err);
	for (i = 0; i < 4; i++) {
		struct ln_check *c;

		k = ln_results_add_check(r, LN_STAGE_BANDWIDTH, ring[i][0], ring[i][1], "ib_write_bw");
		c = &r->checks[k];
		c->unit = "Gb/s";
		c->threshold = 90.0;
		c->line_rate = 100.0;
		if (i == 0) {
			ln_check_set(c, LN_ST_SKIPPED, "'n1'-'n2' failed rping");
			continue;
		}
		{
			struct ln_attempt at = {
				.ok = 1, .value = i == 1 ? 41.5 : 97.25, .seconds = 3.0,
				.command = (char *)"ib_write_bw -R -s 8388608 -p 18515" };

			at.ok = i != 1;
			at.detail = i == 1 ? (char *)"41.5 Gb/s is below 90 Gb/s" : NULL;
			ln_check_add_attempt(c, &at);
		}
	}
	ln_diagnose_stage(r, LN_STAGE_BANDWIDTH, NULL, NULL, NULL, &err);
	ln_diagnose_nodes(r, &err);
	ln_results_summarize(r);
	ln_buf_release(&err);
}

#endif
