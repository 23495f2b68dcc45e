/* SPDX-License-Identifier: MIT */
/*
 * Report renderers on one sample run: the terminal recap, JSON (parsed
 * back and checked field by field), JUnit XML (checked well-formed by
 * python3's XML parser), Prometheus text and the HTML page's markup.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/cmocka.h"
#include "common/fileio.h"
#include "common/json.h"
#include "orchestrator/report/report.h"
#include "tests/unit/validate_sample.h"

static void has(const struct ln_buf *b, const char *needle)
{
	if (!strstr(b->buf, needle))
		fail_msg("missing '%s' in:\n%s", needle, b->buf);
}

static void test_report_render__text(void **state)
{
	struct ln_results r;
	struct ln_buf out = LN_BUF_INIT;

	(void)state;
	sample_results(&r);
	assert_int_equal(ln_report_text(&r, 0, &out), 0);
	has(&out, "  devices    pass     4 passed, 0 failed");
	has(&out, "  rping      FAIL     3 passed, 1 failed");
	has(&out, "  io         NOT RUN  no initiator in the spec");
	has(&out, "bandwidth n3-n4 fail: 41.5 Gb/s is below 90 Gb/s measured 41.5 Gb/s, threshold "
		  "90 Gb/s, line rate 100 Gb/s");
	has(&out, "bandwidth n1-n2 skipped: 'n1'-'n2' failed rping\n");
	has(&out, "bad link n1-n2 (rping)");
	has(&out, "bad link n3-n4 (bandwidth): 'n3'-'n4' failed bandwidth once");
	has(&out, "[2 attempts]");
	has(&out, "result: FAIL (exit 1)");
	assert_null(strstr(out.buf, "\033["));
	ln_buf_reset(&out);
	assert_int_equal(ln_report_text(&r, 1, &out), 0);
	assert_non_null(strstr(out.buf, "\033[31m"));
	ln_buf_release(&out);
	ln_results_release(&r);
}

static void test_report_render__json(void **state)
{
	struct ln_results r;
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	struct json_object *root, *v, *checks, *c, *ats;
	size_t i, found = 0;

	(void)state;
	sample_results(&r);
	assert_int_equal(ln_report_json(&r, 1, &out), 0);
	assert_int_equal(ln_json_parse(out.buf, out.len, &root, &err), 0);
	assert_true(json_object_object_get_ex(root, "format", &v));
	assert_string_equal(json_object_get_string(v), "llmnet-validation/1");
	assert_true(json_object_object_get_ex(root, "exit_code", &v));
	assert_int_equal(json_object_get_int(v), 1);
	assert_true(json_object_object_get_ex(root, "cluster", &v));
	assert_string_equal(json_object_get_string(v), "lab <\"x\">");
	assert_true(json_object_object_get_ex(root, "culprits", &v));
	assert_string_equal(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
			    "{\"nodes\":[],\"links\":[[\"n1\",\"n2\"],[\"n3\",\"n4\"]]}");
	assert_true(json_object_object_get_ex(root, "stages", &v));
	assert_int_equal(json_object_array_length(v), 4);
	c = json_object_array_get_idx(v, 3);
	assert_true(json_object_object_get_ex(c, "status", &v));
	assert_string_equal(json_object_get_string(v), "not run");
	assert_true(json_object_object_get_ex(root, "checks", &checks));
	assert_int_equal(json_object_array_length(checks), r.nchecks);
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
	ln_buf_release(&out);
	ln_buf_release(&err);
	ln_results_release(&r);
}

static void test_report_render__junit(void **state)
{
	struct ln_results r;
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	char path[] = "/tmp/ln-junit-XXXXXX";
	char cmd[256];
	int fd;

	(void)state;
	sample_results(&r);
	assert_int_equal(ln_report_junit(&r, &out), 0);
	/* 4 devices + 4 rping + 4 bandwidth + io stage */
	has(&out, "tests=\"13\" failures=\"3\"");
	has(&out, "<testsuite name=\"io\" tests=\"1\" failures=\"1\"");
	has(&out, "<failure type=\"not-run\" message=\"not run: no initiator in the spec has a "
		  "namespace &amp; &lt;path&gt;\"/>");
	has(&out, "<testcase classname=\"llmnet.rping\" name=\"n1-n2 rping\"");
	has(&out, "<skipped message=\"&#39;n1&#39;-&#39;n2&#39; failed rping\"/>");
	has(&out, "attempt 2 (retest): failed");
	has(&out, "name=\"llmnet validate lab &lt;&quot;x&quot;&gt;\"");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(ln_file_write_atomic(path, out.buf, out.len, 0600, &err), 0);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import sys,xml.dom.minidom as m; "
		 "d=m.parse(sys.argv[1]); print(len(d.getElementsByTagName(\"testcase\")))' %s "
		 "| grep -qx 13", path);
	assert_int_equal(system(cmd), 0);
	unlink(path);
	ln_buf_release(&out);
	ln_buf_release(&err);
	ln_results_release(&r);
}

static void test_report_render__metrics(void **state)
{
	struct ln_results r;
	struct ln_buf out = LN_BUF_INIT;

	(void)state;
	sample_results(&r);
	assert_int_equal(ln_report_metrics(&r, &out), 0);
	has(&out, "# TYPE llmnet_validation_success gauge\n"
		  "llmnet_validation_success{cluster=\"lab <\\\"x\\\">\"} 0\n");
	has(&out, "llmnet_validation_bad_link{cluster=\"lab <\\\"x\\\">\",stage=\"rping\",a=\"n1\","
		  "b=\"n2\"} 1\n");
	has(&out, "llmnet_validation_pair_value{cluster=\"lab <\\\"x\\\">\",stage=\"bandwidth\","
		  "a=\"n3\",b=\"n4\",unit=\"Gb/s\"} 41.5\n");
	has(&out, "llmnet_validation_stage_passed{cluster=\"lab <\\\"x\\\">\",stage=\"io\","
		  "status=\"not run\"} 0\n");
	has(&out, "llmnet_validation_pair_ok{cluster=\"lab <\\\"x\\\">\",stage=\"rping\",a=\"n1\","
		  "b=\"n2\"} 0\n");
	/* the skipped pair has no pair_ok sample */
	assert_null(strstr(out.buf, "stage=\"bandwidth\",a=\"n1\",b=\"n2\"} 0"));
	ln_buf_release(&out);
	ln_results_release(&r);
}

static void test_report_render__html_markup(void **state)
{
	struct ln_results r;
	struct ln_buf out = LN_BUF_INIT;

	(void)state;
	sample_results(&r);
	assert_int_equal(ln_report_html(&r, &out), 0);
	has(&out, "<td id=\"rping-n1-n2\" class=\"fail\" data-status=\"fail\"");
	has(&out, "<td id=\"rping-n2-n3\" class=\"pass\"");
	has(&out, "<td id=\"bandwidth-n3-n4\" class=\"fail\"");
	has(&out, "<td id=\"bandwidth-n1-n2\" class=\"skip\"");
	has(&out, ">97.2<");
	has(&out, ">&#x2717;41.5<");
	/* one id per pair: the mirror cell carries data-pair */
	has(&out, "<td data-pair=\"rping-n1-n2\" class=\"fail\"");
	assert_null(strstr(strstr(out.buf, "id=\"rping-n1-n2\"") + 1, "id=\"rping-n1-n2\""));
	has(&out, "<title>llmnet validation: lab &lt;&quot;x&quot;&gt;</title>");
	/* self-contained: nothing fetched from elsewhere */
	assert_null(strstr(out.buf, "src="));
	assert_null(strstr(out.buf, "href="));
	ln_buf_release(&out);
	ln_results_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_render__text),
		cmocka_unit_test(test_report_render__json),
		cmocka_unit_test(test_report_render__junit),
		cmocka_unit_test(test_report_render__metrics),
		cmocka_unit_test(test_report_render__html_markup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
