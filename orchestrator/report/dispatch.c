/* SPDX-License-Identifier: MIT */
/*
 * The report dispatch table (dispatch.h): which renderer writes which of
 * the files validate was asked for.
 */
#include <stddef.h>

#include "common/util.h"
#include "orchestrator/report/dispatch.h"

static int report_json_pretty(const struct ln_results *res, struct ln_buf *out)
{
	return ln_report_json(res, 1, out);
}

/* One row per format: its name in messages, where f says it goes, and
 * its renderer. */
static const struct {
	const char *what;
	size_t path;	/* offset of its path in struct ln_report_files */
	int (*render)(const struct ln_results *res, struct ln_buf *out);
} formats[] = {
	{ "JSON", offsetof(struct ln_report_files, json), report_json_pretty },
	{ "JUnit", offsetof(struct ln_report_files, junit), ln_report_junit },
	{ "HTML", offsetof(struct ln_report_files, html), ln_report_html },
	{ "metrics", offsetof(struct ln_report_files, metrics), ln_report_metrics },
};

static int save(const char *what, const char *path, const struct ln_buf *b,
		struct ln_notes *notes)
{
	struct ln_buf err = LN_BUF_INIT;
	int r = ln_report_save(path, b, &err);

	if (r < 0)
		ln_notes_add(notes, LN_LOG_ERROR, "cannot write the %s report: %s", what, err.buf);
	else
		ln_notes_add(notes, LN_LOG_INFO, "wrote the %s report to '%s'", what, path);
	ln_buf_release(&err);
	return r;
}

int ln_report_dispatch(const struct ln_results *res, const struct ln_report_files *f,
		       struct ln_notes *notes)
{
	struct ln_buf out = LN_BUF_INIT;
	int rc = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(formats); i++) {
		const char *path = *(const char *const *)((const char *)f + formats[i].path);

		if (!path)
			continue;
		ln_buf_reset(&out);
		if (formats[i].render(res, &out) < 0 || save(formats[i].what, path, &out, notes) < 0)
			rc = -1;
	}
	ln_buf_release(&out);
	return rc;
}
