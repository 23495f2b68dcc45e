/* SPDX-License-Identifier: MIT */
/*
 * The report files a validation writes, one row per format in a table
 * (dispatch.c): the path it goes to, its name in messages, its renderer.
 * A new format is a renderer in its own file (report.h) and one row.
 */
#ifndef LN_REPORT_DISPATCH_H
#define LN_REPORT_DISPATCH_H

#include "orchestrator/report/report.h"
#include "orchestrator/run/notes.h"

/* Where each report goes (validate's --report, --junit, --html,
 * --metrics); NULL: not asked for. */
struct ln_report_files {
	const char *json, *junit, *html, *metrics;
};

/* Render res in every format f asks for and write each to its path
 * (ln_report_save()), every one tried. Returns 0, or -1 when one could
 * not be rendered or written; notes say each path written, or why not. */
int ln_report_dispatch(const struct ln_results *res, const struct ln_report_files *f,
		       struct ln_notes *notes);

#endif
