/* SPDX-License-Identifier: MIT */
/*
 * Report renderers on one sample run: the terminal recap, JSON (parsed
 * back and checked field by field), JUnit XML (checked well-formed by
 * python3's XML parser), Prometheus text and the HTML page's markup.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/cmocka.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/util.h"
#include "orchestrator/report/report.h"
#include "tests/unit/validate_sample.h"

static void has(const struct ln_buf *b, const char *needle)
{
	if (!strstr(b->buf, needle))
		fail_msg("missing '%s' in:\n%s", needle, b->buf);
}

/* Each test renders the one sample run into out. */
struct render {
	struct ln_results r;
	struct ln_buf out;
};

static int render_setup(void **state)
{
	struct render *w = calloc(1, sizeof(*w));

	if (!w)
		return -1;
	sample_results(&w->r);
	ln_buf_init(&w->out, 0);
	*state = w;
	return 0;
}

static int render_teardown(void **state)
{
	struct render *w = *state;

	ln_buf_release(&w->out);
	ln_results_release(&w->r);
	free(w);
	return 0;
}

static void test_report_render__text(void **state)
{
	struct render *w = *state;

	assert_int_equal(ln_report_text(&w->r, 0, &w->out), 0);
	has(&w->out, "  devices    pass     4 passed, 0 failed");
	has(&w->out, "  rping      FAIL     3 passed, 1 failed");
	has(&w->out, "  io         NOT RUN  no initiator in the spec");
	has(&w->out, "bandwidth n3-n4 fail: 41.5 Gb/s is below 90 Gb/s measured 41.5 Gb/s, "
		     "threshold 90 Gb/s, line rate 100 Gb/s");
	has(&w->out, "bandwidth n1-n2 skipped: 'n1'-'n2' failed rping\n");
	has(&w->out, "bad link n1-n2 (rping)");
	has(&w->out, "bad link n3-n4 (bandwidth): 'n3'-'n4' failed bandwidth once");
	has(&w->out, "[2 attempts]");
	has(&w->out, "result: FAIL (exit 1)");
	assert_null(strstr(w->out.buf, "\033["));
	ln_buf_reset(&w->out);
	assert_int_equal(ln_report_text(&w->r, 1, &w->out), 0);
	assert_non_null(strstr(w->out.buf, "\033[31m"));
}

static void test_report_render__json(void **state)
{
	struct render *w = *state;
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *root, *v, *checks, *c, *ats;
	size_t i, found = 0;

	assert_int_equal(ln_report_json(&w->r, 1, &w->out), 0);
	assert_int_equal(ln_json_parse(w->out.buf, w->out.len, &root, &err), 0);
	assert_true(json_object_object_get_ex(root, "format", &v));
	assert_string_equal(json_object_get_string(v), "llmnet-validation/1");
	assert_true(json_object_object_get_ex(root, "exit_code", &v));
	assert_int_equal(json_object_get_int(v), 1);
	assert_true(json_object_object_get_ex(root, "cluster", &v));
	assert_string_equal(json_object_get_string(v), "lab <\"x\">");
	assert_true(json_object_object_get_ex(root, "culprits", &v));
	assert_string_equal(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
			    "{\"nodes\":[],\"ports\":[],\"links\":[[\"n1\",\"n2\"],[\"n3\",\"n4\"]],"
			    "\"link_ports\":[[\"n1\",\"n2\"],[\"n3\",\"n4\"]]}");
	assert_true(json_object_object_get_ex(root, "stages", &v));
	assert_int_equal(json_object_array_length(v), 4);
	c = json_object_array_get_idx(v, 3);
	assert_true(json_object_object_get_ex(c, "status", &v));
	assert_string_equal(json_object_get_string(v), "not run");
	assert_true(json_object_object_get_ex(root, "checks", &checks));
	assert_int_equal(json_object_array_length(checks), w->r.nchecks);
	for (i = 0; i < json_object_array_length(checks); i++) {
		c = json_object_array_get_idx(checks, i);
		assert_true(json_object_object_get_ex(c, "stage", &v));
		if (strcmp(json_object_get_string(v), "rping"))
			continue;
		assert_true(json_object_object_get_ex(c, "pair", &v));
		if (strcmp(json_object_get_string(json_object_array_get_idx(v, 0)), "n1") ||
		    strcmp(json_object_get_string(json_object_array_get_idx(v, 1)), "n2"))
			continue;
		/* the bad link's check: two attempts, the second a retest, no value */
		found++;
		assert_true(json_object_object_get_ex(c, "attempts", &ats));
		assert_int_equal(json_object_array_length(ats), 2);
		assert_true(json_object_object_get_ex(json_object_array_get_idx(ats, 0),
						      "timed_out", &v));
		assert_true(json_object_get_boolean(v));
		assert_true(json_object_object_get_ex(json_object_array_get_idx(ats, 1),
						      "retest", &v));
		assert_true(json_object_get_boolean(v));
		assert_true(json_object_object_get_ex(c, "value", &v));
		assert_null(v);
	}
	assert_int_equal(found, 1);
	json_object_put(root);
	ln_buf_release(&err);
}

static void test_report_render__junit(void **state)
{
	struct render *w = *state;
	struct ln_buf err = LN_BUF_INIT;
	char path[] = "/tmp/ln-junit-XXXXXX";
	char cmd[256];
	int fd;

	assert_int_equal(ln_report_junit(&w->r, &w->out), 0);
	/* 4 devices + 4 rping + 4 bandwidth + io stage */
	has(&w->out, "tests=\"13\" failures=\"3\"");
	has(&w->out, "<testsuite name=\"io\" tests=\"1\" failures=\"1\"");
	has(&w->out, "<failure type=\"not-run\" message=\"not run: no initiator in the spec has a "
		     "namespace &amp; &lt;path&gt;\"/>");
	has(&w->out, "<testcase classname=\"llmnet.rping\" name=\"n1-n2 rping\"");
	has(&w->out, "<skipped message=\"&#39;n1&#39;-&#39;n2&#39; failed rping\"/>");
	has(&w->out, "attempt 2 (retest): failed");
	has(&w->out, "name=\"llmnet validate lab &lt;&quot;x&quot;&gt;\"");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(ln_file_write_atomic(path, w->out.buf, w->out.len, 0600, &err), 0);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import sys,xml.dom.minidom as m; "
		 "d=m.parse(sys.argv[1]); print(len(d.getElementsByTagName(\"testcase\")))' %s "
		 "| grep -qx 13", path);
	assert_int_equal(system(cmd), 0);
	unlink(path);
	ln_buf_release(&err);
}

static void test_report_render__metrics(void **state)
{
	struct render *w = *state;

	assert_int_equal(ln_report_metrics(&w->r, &w->out), 0);
	has(&w->out, "# TYPE llmnet_validation_success gauge\n"
		     "llmnet_validation_success{cluster=\"lab <\\\"x\\\">\"} 0\n");
	has(&w->out, "llmnet_validation_bad_link{cluster=\"lab <\\\"x\\\">\",stage=\"rping\","
		     "a=\"n1\",b=\"n2\"} 1\n");
	has(&w->out, "llmnet_validation_pair_value{cluster=\"lab <\\\"x\\\">\",stage=\"bandwidth\","
		     "a=\"n3\",b=\"n4\",unit=\"Gb/s\"} 41.5\n");
	has(&w->out, "llmnet_validation_stage_passed{cluster=\"lab <\\\"x\\\">\",stage=\"io\","
		     "status=\"not run\"} 0\n");
	has(&w->out, "llmnet_validation_pair_ok{cluster=\"lab <\\\"x\\\">\",stage=\"rping\","
		     "a=\"n1\",b=\"n2\"} 0\n");
	/* the skipped pair has no pair_ok sample */
	assert_null(strstr(w->out.buf, "stage=\"bandwidth\",a=\"n1\",b=\"n2\"} 0"));
}

static void test_report_render__html_markup(void **state)
{
	struct render *w = *state;

	assert_int_equal(ln_report_html(&w->r, &w->out), 0);
	has(&w->out, "<td id=\"rping-n1-n2\" class=\"fail\" data-status=\"fail\"");
	has(&w->out, "<td id=\"rping-n2-n3\" class=\"pass\"");
	has(&w->out, "<td id=\"bandwidth-n3-n4\" class=\"fail\"");
	has(&w->out, "<td id=\"bandwidth-n1-n2\" class=\"skip\"");
	has(&w->out, ">97.2<");
	has(&w->out, ">&#x2717;41.5<");
	/* one id per pair: the mirror cell carries data-pair */
	has(&w->out, "<td data-pair=\"rping-n1-n2\" class=\"fail\"");
	assert_null(strstr(strstr(w->out.buf, "id=\"rping-n1-n2\"") + 1, "id=\"rping-n1-n2\""));
	has(&w->out, "<title>llmnet validation: lab &lt;&quot;x&quot;&gt;</title>");
	/* self-contained: nothing fetched from elsewhere */
	assert_null(strstr(w->out.buf, "src="));
	assert_null(strstr(w->out.buf, "href="));
}

/* The devices stage's PCIe matrix of a node, escaped in a <pre> of
 * its own; a warning is listed with the failures (text and HTML), its
 * JSON says so, and the stage still passes. */
static void test_report_render__topo_and_warning(void **state)
{
	struct render *w = *state;
	long idx = ln_results_add_check(&w->r, LN_STAGE_DEVICES, 1, LN_NO_NODE,
					"mlx5_0/1 nearest GPUs");

	assert_true(idx >= 0);
	assert_int_equal(ln_check_set(&w->r.checks[idx], LN_ST_PASS, "warning: SYS-distant "
				      "from every GPU"), 0);
	w->r.checks[idx].warning = 1;
	assert_int_equal(ln_results_set_topo(&w->r, 1, "        GPU0  mlx5_0 <x>\n"), 0);
	ln_results_summarize(&w->r);
	assert_int_equal(ln_report_html(&w->r, &w->out), 0);
	has(&w->out, "<h3>n2</h3>\n<pre class=\"topo\" id=\"topo-n2\">        GPU0  mlx5_0 "
		     "&lt;x&gt;\n</pre>");
	has(&w->out, "mlx5_0/1 nearest GPUs</td><td class=\"pass\">pass</td>");
	assert_null(strstr(w->out.buf, "id=\"topo-n1\""));
	ln_buf_reset(&w->out);
	assert_int_equal(ln_report_text(&w->r, 0, &w->out), 0);
	has(&w->out, "  devices    pass");
	has(&w->out, "  devices   n2 warning: warning: SYS-distant from every GPU\n");
	ln_buf_reset(&w->out);
	assert_int_equal(ln_report_json(&w->r, 0, &w->out), 0);
	has(&w->out, "nearest GPUs\",\"status\":\"pass\",\"reason\":\"warning: SYS");
	has(&w->out, "\"warning\":true");
}

/* Three nodes on two rails (rxe0 on rail0, rxe1 on rail1) and a
 * cross-rail pair: one matrix per rail and one for the cross-rail pairs,
 * each cell its own rail's check (the rail-1 failure of n1-n2 is not
 * drawn over its passing rail-0 pair), ids carrying the rail. */
static void test_report_render__html_matrix_per_rail(void **state)
{
	static const char *const names[] = { "n1", "n2", "n3" };
	static const int pairs[][4] = {	/* a, pa, b, pb */
		{ 0, 0, 1, 0 }, { 1, 0, 2, 0 }, { 0, 1, 1, 1 }, { 1, 1, 2, 1 }, { 0, 0, 2, 1 },
	};
	struct ln_results r;
	struct ln_buf out = LN_BUF_INIT;
	size_t i, k;

	(void)state;
	assert_int_equal(ln_results_init(&r, "rails", names, 3), 0);
	assert_int_equal(ln_results_init_ports(&r, 2), 0);
	for (i = 0; i < 3; i++)
		for (k = 0; k < 2; k++)
			assert_int_equal(ln_results_set_port(&r, i, k, k ? "rxe1" : "rxe0",
							     k ? "rail1" : "rail0"), 0);
	r.stages[LN_STAGE_RPING].listed = r.stages[LN_STAGE_RPING].ran = 1;
	for (i = 0; i < ARRAY_SIZE(pairs); i++) {
		struct ln_attempt at = { .ok = i != 2, .value = NAN, .seconds = 1.0,
					 .command = (char *)"rping -c" };
		long c = ln_results_add_check(&r, LN_STAGE_RPING, (size_t)pairs[i][0],
					      (size_t)pairs[i][2], "rping");

		assert_true(c >= 0);
		r.checks[c].pa = pairs[i][1];
		r.checks[c].pb = pairs[i][3];
		at.detail = i == 2 ? (char *)"cma event RDMA_CM_EVENT_UNREACHABLE" : NULL;
		assert_int_equal(ln_check_add_attempt(&r.checks[c], &at), 0);
	}
	ln_results_summarize(&r);
	assert_int_equal(ln_report_html(&r, &out), 0);
	has(&out, "<h2>rping, rail rail0: node &times; node</h2>\n<table class=\"heat\" "
		  "id=\"heat-rping-rail0\">");
	has(&out, "<h2>rping, rail rail1: node &times; node</h2>\n<table class=\"heat\" "
		  "id=\"heat-rping-rail1\">");
	has(&out, "<h2>rping, cross-rail: node &times; node</h2>\n<table class=\"heat\" "
		  "id=\"heat-rping-cross-rail\">");
	assert_null(strstr(out.buf, "id=\"heat-rping\""));
	has(&out, "<td id=\"rping-rail0-n1-n2\" class=\"pass\"");
	has(&out, "<td id=\"rping-rail1-n1-n2\" class=\"fail\"");
	has(&out, "title=\"n1/rxe1-n2/rxe1: fail: cma event");
	has(&out, "<td id=\"rping-rail1-n2-n3\" class=\"pass\"");
	has(&out, "<td id=\"rping-cross-rail-n1-n3\" class=\"pass\" data-status=\"pass\" "
		  "title=\"n1/rxe0-n3/rxe1: pass");
	/* each matrix only its rail's pairs: n1-n3 is tested cross-rail only */
	has(&out, "id=\"heat-rping-rail0\">\n<tr><th></th><th>n1</th><th>n2</th><th>n3</th></tr>\n"
		  "<tr><th>n1</th><td class=\"self\"></td><td id=\"rping-rail0-n1-n2\"");
	assert_non_null(strstr(strstr(out.buf, "id=\"heat-rping-rail0\""),
			       "<td class=\"none\" title=\"not tested\"></td></tr>"));
	ln_buf_release(&out);
	ln_results_release(&r);
}

/* With a node unreachable the run exits 4: the report and its summary say
 * 4 as well, not 1 (docs/exit-codes.md: the highest code wins). */
static void test_report_render__unreachable_node_exit_in_report(void **state)
{
	struct render *w = *state;
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *root, *v;

	w->r.node_exit = LN_EXIT_UNREACHABLE;
	assert_int_equal(ln_results_exit(&w->r), LN_EXIT_UNREACHABLE);
	assert_int_equal(ln_report_text(&w->r, 0, &w->out), 0);
	assert_non_null(strstr(w->out.buf, "result: FAIL (exit 4)"));
	ln_buf_reset(&w->out);
	assert_int_equal(ln_report_json(&w->r, 1, &w->out), 0);
	assert_int_equal(ln_json_parse(w->out.buf, w->out.len, &root, &err), 0);
	assert_true(json_object_object_get_ex(root, "exit_code", &v));
	assert_int_equal(json_object_get_int(v), LN_EXIT_UNREACHABLE);
	assert_true(json_object_object_get_ex(root, "result", &v));
	assert_string_equal(json_object_get_string(v), "fail");
	json_object_put(root);
	ln_buf_release(&err);
}

/* A node's words in a check's reason are escaped in the text report (the
 * controller's colours stay), and a non-finite value is null in JSON. */
static void test_report_render__hostile_reason_and_value(void **state)
{
	struct render *w = *state;
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *root = NULL, *v, *c;
	size_t i;

	for (i = 0; i < w->r.nchecks; i++)
		w->r.checks[i].value = i % 2 ? INFINITY : NAN;
	ln_check_set(&w->r.checks[0], LN_ST_FAIL, "rate\r\033[2K\nresult: PASS (exit 0)");
	assert_int_equal(ln_report_text(&w->r, 1, &w->out), 0);
	has(&w->out, "rate\\x0d\\x1b[2K\\x0aresult: PASS (exit 0)");
	assert_null(strstr(w->out.buf, "\r"));
	assert_null(strstr(w->out.buf, "\033[2K"));
	has(&w->out, "\033[31m");
	ln_buf_reset(&w->out);
	assert_int_equal(ln_report_json(&w->r, 1, &w->out), 0);
	assert_null(strstr(w->out.buf, "Infinity"));
	assert_null(strstr(w->out.buf, "NaN"));
	assert_int_equal(ln_json_parse(w->out.buf, w->out.len, &root, &err), 0);
	assert_true(json_object_object_get_ex(root, "checks", &v));
	c = json_object_array_get_idx(v, 1);
	assert_true(json_object_object_get_ex(c, "value", &v));
	assert_null(v);
	json_object_put(root);
	ln_buf_release(&err);
}

#define RENDER_TEST(t) cmocka_unit_test_setup_teardown(t, render_setup, render_teardown)

LN_TEST_MAIN(NULL, NULL,
	RENDER_TEST(test_report_render__hostile_reason_and_value),
	RENDER_TEST(test_report_render__text),
	RENDER_TEST(test_report_render__json),
	RENDER_TEST(test_report_render__junit),
	RENDER_TEST(test_report_render__metrics),
	RENDER_TEST(test_report_render__html_markup),
	RENDER_TEST(test_report_render__topo_and_warning),
	cmocka_unit_test(test_report_render__html_matrix_per_rail),
	RENDER_TEST(test_report_render__unreachable_node_exit_in_report),
)
