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
	const char *p = text, *end = text + len;
	int has_error;

	memset(out, 0, sizeof(*out));
	out->pings = -1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;

		if (memmem(p, (size_t)(e - p), "ping data: ", 11))
			out->pings = out->pings < 0 ? 1 : out->pings + 1;
		p = nl ? nl + 1 : end;
	}
	has_error = ln_parse_error_line(text, len, out->reason, sizeof(out->reason));
	out->ok = exit_status == 0 && !has_error;
	if (!out->ok && !has_error)
		snprintf(out->reason, sizeof(out->reason), "rping exited with status %d",
			 exit_status);
}
