/* SPDX-License-Identifier: MIT */
/*
 * Reports of a validation run (struct ln_results): a terminal recap, JSON
 * (format "llmnet-validation/1", described in docs/validation.md), JUnit
 * XML for CI, one self-contained HTML page with node x node heatmaps, and
 * Prometheus text metrics; plus posting the JSON to an HTTP endpoint. Each
 * renderer appends to a caller-owned buffer and never prints.
 */
#ifndef LN_REPORT_H
#define LN_REPORT_H

#include "common/buf.h"
#include "orchestrator/validate/results.h"

#define LN_REPORT_FORMAT "llmnet-validation/1"

/* Per-stage summary, failing checks with value/threshold/line rate, and
 * the verdicts. color adds ANSI colours. */
int ln_report_text(const struct ln_results *r, int color, struct ln_buf *out);

/* Everything: per node, per pair, per attempt. */
int ln_report_json(const struct ln_results *r, int pretty, struct ln_buf *out);

/* One testcase per node check and per pair, one testsuite per stage. */
int ln_report_junit(const struct ln_results *r, struct ln_buf *out);

/* Heatmaps are drawn up to this many nodes; beyond, the page lists the
 * failing pairs only (a 1,024-node matrix is a million cells). */
#define LN_REPORT_HTML_MAX_HEATMAP 256

/* A page with no external resource. A heatmap cell is a <td> with
 * id "<stage>-<a>-<b>" (node names, lower index first) and a class of
 * "pass", "fail", "skip" or "none"; failing cells also carry a mark. */
int ln_report_html(const struct ln_results *r, struct ln_buf *out);

/* Prometheus text exposition format 0.0.4. */
int ln_report_metrics(const struct ln_results *r, struct ln_buf *out);

/* POST body (JSON) to url with libcurl, bounded by timeout_ms overall,
 * with auth (NULL: none; from ln_report_auth_load) as HTTP Basic
 * (USER:PASSWORD) or an Authorization header (SCHEME VALUE). Only http and
 * https; an HTTP status >= 400 is an error. Returns 0 or
 * -LN_EUNREACH/-LN_ETIMEOUT/-LN_EPROTO/-EINVAL with a message naming the
 * URL (credentials in it are hidden; auth is never in a message). */
int ln_report_post(const char *url, const char *auth, const char *body, size_t len,
		   long timeout_ms, struct ln_buf *err);
/* 0, or -EINVAL with a message naming the safe ways, when url (from argv)
 * carries credentials (user-info before the host). */
int ln_report_url_check(const char *url, struct ln_buf *err);
/* The webhook's credentials into out (a secret buffer, left empty when
 * none is given): the first line of file (a regular file of this user, not
 * a link, no group or other access), else $LLMNET_REPORT_AUTH; one line,
 * USER:PASSWORD or SCHEME VALUE. 0, or negative with err (never the
 * credentials themselves). */
int ln_report_auth_load(const char *file, struct ln_buf *out, struct ln_buf *err);

/* Append s with & < > " ' escaped, for XML and HTML text and attributes;
 * control characters other than tab and newline become '?'. */
int ln_report_escape_xml(struct ln_buf *out, const char *s);

/* A latency check's figures and thresholds as one phrase: "typical 14.2
 * us, avg 15.1 us, p99 30.5 us (max typical 20 us, max p99 50 us)"; a
 * figure not measured is left out. Appends nothing for other stages. */
void ln_report_latency_text(const struct ln_check *c, struct ln_buf *out);

/* A port's error counters check as one phrase: "80 errors (rcvd_seq_err
 * +80; not available: send_err), max_errors 10, over it with 2 of 2
 * partners"; "not judged" without a limit. Appends nothing for other
 * checks. */
void ln_report_counters_text(const struct ln_check *c, struct ln_buf *out);

/* A size sweep's figures (the nccl stage) as one phrase: "busbw by size
 * 8B 0.01, 16B 0.02, ..., 1GiB 201 GB/s (judged at 1GiB)", with "(N
 * wrong)" after a size that delivered wrong elements. Appends nothing
 * for a check without sizes. */
void ln_report_sizes_text(const struct ln_check *c, struct ln_buf *out);

/* A check's figures that are numbers (measured, threshold, line rate),
 * each as "<sep>threshold V UNIT<end>" with V to prec significant digits;
 * measured comes after lead instead of sep. Text: (" ", ", ", "", 3); JUnit: one a
 * line, ("", "", "\n", 6). */
struct ln_check;
void ln_report_figures(struct ln_buf *out, const struct ln_check *c, const char *lead,
		       const char *sep, const char *end, int prec);

/* Write buf to path atomically (mode 0644). */
int ln_report_save(const char *path, const struct ln_buf *buf, struct ln_buf *err);

#endif
