/* SPDX-License-Identifier: MIT */
/*
 * rping judge. rping prints nothing on success without -v; with -V it
 * compares every buffer and fails with "data mismatch". It reports CM
 * failures as "cma event RDMA_CM_EVENT_..., error N" and the server's own
 * failure as "rping server failed: ...". So the verdict comes from the exit
 * status, and the reason from the first error line.
 */
#include <stdio.h>
#include <string.h>

#include "orchestrator/validate/parse/parse.h"

void ln_parse_rping(int exit_status, const char *text, size_t len, struct ln_rping *out)
{
	struct ln_lines it;
	const char *line;
	size_t n;
	int has_error;

	memset(out, 0, sizeof(*out));
	out->pings = -1;
	ln_lines_init(&it, text, len);
	while (ln_lines_next(&it, &line, &n, NULL))
		if (memmem(line, n, "ping data: ", 11))
			out->pings = out->pings < 0 ? 1 : out->pings + 1;
	has_error = ln_parse_error_line(text, len, out->reason, sizeof(out->reason));
	out->ok = exit_status == 0 && !has_error;
	if (!out->ok && !has_error)
		snprintf(out->reason, sizeof(out->reason), "rping exited with status %d",
			 exit_status);
}
