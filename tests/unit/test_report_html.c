/* SPDX-License-Identifier: MIT */
/*
 * The HTML report in a real browser: headless chromium (Debian's, from
 * deps/validate.list) loads the page from a file and dumps the DOM it
 * built; the injected bad link's heatmap cell must be there, marked as
 * failing, and the passing cells must not be. A missing chromium fails
 * the test: a report nobody rendered is not a tested report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/cmocka.h"
#include "common/fileio.h"
#include "orchestrator/report/report.h"
#include "tests/unit/validate_sample.h"

/* The <td ...>...</td> element whose id is id, from the dumped DOM. */
static char *cell(const char *dom, const char *id)
{
	char needle[128];
	const char *p, *start, *end;

	snprintf(needle, sizeof(needle), "id=\"%s\"", id);
	p = strstr(dom, needle);
	if (!p)
		return NULL;
	for (start = p; start > dom && *start != '<'; start--)
		;
	end = strstr(p, "</td>");
	if (!end)
		return NULL;
	return strndup(start, (size_t)(end - start) + 5);
}

static void test_report_html__chromium_marks_bad_link(void **state)
{
	char dir[] = "/tmp/ln-html-XXXXXX", page[128], cmd[1024];
	struct ln_buf html = LN_BUF_INIT, dom = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_results r;
	char *bad, *good, *skip;
	FILE *f;
	char chunk[4096];
	size_t n;

	(void)state;
	if (access("/usr/bin/chromium", X_OK))
		fail_msg("chromium is not installed: run 'make deps' (deps/validate.list)");
	sample_results(&r);
	assert_int_equal(ln_report_html(&r, &html), 0);
	assert_non_null(mkdtemp(dir));
	snprintf(page, sizeof(page), "%s/report.html", dir);
	assert_int_equal(ln_report_save(page, &html, &err), 0);
	snprintf(cmd, sizeof(cmd),
		 "timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-quic "
		 "--no-first-run --disable-background-networking --disable-component-update "
		 "--disable-sync --user-data-dir=%s/profile --dump-dom file://%s 2>/dev/null",
		 dir, page);
	f = popen(cmd, "r");
	assert_non_null(f);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		assert_int_equal(ln_buf_add(&dom, chunk, n), 0);
	assert_int_equal(pclose(f), 0);
	/* the browser parsed it: the DOM has the body it built */
	assert_non_null(strstr(dom.buf, "<body>"));
	bad = cell(dom.buf, "rping-n1-n2");
	good = cell(dom.buf, "rping-n2-n3");
	skip = cell(dom.buf, "bandwidth-n1-n2");
	assert_non_null(bad);
	assert_non_null(good);
	assert_non_null(skip);
	assert_non_null(strstr(bad, "class=\"fail\""));
	assert_non_null(strstr(bad, "\xe2\x9c\x97"));	/* U+2717 ballot x */
	assert_null(strstr(good, "fail"));
	assert_non_null(strstr(good, "class=\"pass\""));
	assert_non_null(strstr(skip, "class=\"skip\""));
	assert_non_null(strstr(dom.buf, "id=\"result\" class=\"result-fail\">FAIL<"));
	free(bad);
	free(good);
	free(skip);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	ln_test_release(&html, &dom, &err);
	ln_results_release(&r);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_report_html__chromium_marks_bad_link),
)
