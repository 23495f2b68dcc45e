/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the report dispatch table (orchestrator/report/
 * dispatch.c): each file validate is asked for gets its format's bytes,
 * every one is tried when one cannot be written, and what happened comes
 * back as notes; and lint's renderings (orchestrator/report/lint.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"
#include "common/fileio.h"
#include "orchestrator/report/dispatch.h"
#include "orchestrator/report/lint.h"
#include "tests/unit/validate_sample.h"

static void test_report_dispatch__writes_each_file_asked_for(void **state)
{
	struct ln_buf want = LN_BUF_INIT, got = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_notes notes = LN_NOTES_INIT;
	struct ln_report_files f = { NULL, NULL, NULL, NULL };
	struct ln_results r;
	char dir[] = "/tmp/ln-dispatch-XXXXXX", json[64], prom[64], cmd[96];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(json, sizeof(json), "%s/r.json", dir);
	snprintf(prom, sizeof(prom), "%s/r.prom", dir);
	sample_results(&r);
	f.json = json;
	f.metrics = prom;
	assert_int_equal(ln_report_dispatch(&r, &f, &notes), 0);
	/* the file as its renderer makes it: pretty JSON, the metrics */
	assert_int_equal(ln_report_json(&r, 1, &want), 0);
	assert_int_equal(ln_file_read(json, &got, &err), 0);
	assert_string_equal(got.buf, want.buf);
	ln_buf_reset(&want);
	ln_buf_reset(&got);
	assert_int_equal(ln_report_metrics(&r, &want), 0);
	assert_int_equal(ln_file_read(prom, &got, &err), 0);
	assert_string_equal(got.buf, want.buf);
	/* said in the table's order, as info */
	assert_int_equal(notes.n, 2);
	assert_int_equal(notes.v[0].level, LN_LOG_INFO);
	snprintf(cmd, sizeof(cmd), "wrote the JSON report to '%s'", json);
	assert_string_equal(notes.v[0].text, cmd);
	snprintf(cmd, sizeof(cmd), "wrote the metrics report to '%s'", prom);
	assert_string_equal(notes.v[1].text, cmd);
	ln_notes_release(&notes);
	ln_results_release(&r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	ln_test_release(&want, &got, &err);
}

static void test_report_dispatch__a_failed_file_does_not_stop_the_others(void **state)
{
	struct ln_notes notes = LN_NOTES_INIT;
	struct ln_report_files f = { NULL, NULL, NULL, NULL };
	struct ln_buf got = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_results r;
	char dir[] = "/tmp/ln-dispatch-XXXXXX", html[64], cmd[96];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(html, sizeof(html), "%s/r.html", dir);
	sample_results(&r);
	f.junit = "/nonexistent/llmnet-test/r.xml";
	f.html = html;
	assert_int_equal(ln_report_dispatch(&r, &f, &notes), -1);
	assert_int_equal(notes.n, 2);
	assert_int_equal(notes.v[0].level, LN_LOG_ERROR);
	assert_non_null(strstr(notes.v[0].text, "cannot write the JUnit report: "));
	assert_int_equal(notes.v[1].level, LN_LOG_INFO);
	assert_int_equal(ln_file_read(html, &got, &err), 0);
	assert_non_null(strstr(got.buf, "<html"));
	ln_notes_release(&notes);
	ln_results_release(&r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	ln_test_release(&got, &err);
}

static void test_report_dispatch__lint_renders_summary_and_errors(void **state)
{
	static const char yaml[] =
		"version: 1\n"
		"cluster: c\n"
		"nodes:\n"
		"  - { name: \"n[1-2]\", address: \"10.0.0.[1-2]\", gpus: 4 }\n";
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_spec *spec = NULL;

	(void)state;
	assert_int_equal(ln_spec_load_buf("c.yaml", yaml, strlen(yaml), &spec, &err), 0);
	ln_report_lint_summary(spec, &out);
	assert_string_equal(out.buf, "c.yaml: ok: cluster 'c', 2 nodes, 8 GPUs, 0 RDMA ports, "
				     "0 targets, 0 namespaces, 0 initiators, 0 stages\n");
	ln_buf_reset(&out);
	assert_int_equal(ln_report_lint_errors("c.yaml", "c.yaml:3:5: unknown key 'x'\n"
						"cannot read c.yaml\n", &out), 0);
	assert_non_null(strstr(out.buf, "\"line\": 3,"));
	assert_non_null(strstr(out.buf, "\"col\": 5,"));
	assert_non_null(strstr(out.buf, "\"message\": \"unknown key 'x'\""));
	assert_non_null(strstr(out.buf, "\"message\": \"cannot read c.yaml\""));
	assert_non_null(strstr(out.buf, "\"line\": 0,"));
	ln_spec_free(spec);
	ln_test_release(&out, &err);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_report_dispatch__writes_each_file_asked_for),
	cmocka_unit_test(test_report_dispatch__a_failed_file_does_not_stop_the_others),
	cmocka_unit_test(test_report_dispatch__lint_renders_summary_and_errors),
)
