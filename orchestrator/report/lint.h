/* SPDX-License-Identifier: MIT */
/*
 * What `llmnet lint` says of a spec, rendered into a caller's buffer: the
 * one-line summary of a valid spec, and an invalid spec's problems as
 * JSON ({"errors": [...]}, for -o json).
 */
#ifndef LN_REPORT_LINT_H
#define LN_REPORT_LINT_H

#include "common/buf.h"
#include "orchestrator/spec/spec.h"

/* "PATH: ok: cluster 'C', 2 nodes, 8 GPUs, ...\n" into out. */
void ln_report_lint_summary(const struct ln_spec *s, struct ln_buf *out);

/* The problems in text ("PATH:LINE:COL: MESSAGE" a line, as the spec
 * loader reports them; a line in another form is kept whole, at line 0)
 * as {"errors": [{"file", "line", "col", "message"}, ...]}, pretty JSON,
 * into out. Returns 0 or -ENOMEM. */
int ln_report_lint_errors(const char *path, const char *text, struct ln_buf *out);

#endif
