/* SPDX-License-Identifier: MIT */
/*
 * What the controller commands print of a run. The library tells (the
 * fan-out's progress events); cmd/ writes, to stderr through the logger.
 */
#include <stdio.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/log.h"
#include "orchestrator/transport/fanout.h"

static int stderr_tty;

/* A fan-out event: the node's line, and on a terminal (more than one
 * node, not -q) the phase's live count, rewritten in place and wiped at
 * the end. */
static void progress(void *ctx, const struct ln_fanout_event *ev)
{
	int live = stderr_tty && ln_log_threshold >= LN_LOG_INFO && ev->total > 1;

	(void)ctx;
	if (live)
		fputs("\r\033[K", stderr);
	if (ev->line)
		ln_info("%s", ev->line);
	if (live && !ev->end) {
		fprintf(stderr, "\r\033[K%s: %zu/%zu done, %zu in flight", ev->phase, ev->done,
			ev->total, ev->in_flight);
		fflush(stderr);
	}
}

void ln_cmd_progress(struct ln_run *run)
{
	stderr_tty = isatty(STDERR_FILENO);
	ln_fanout_set_progress(progress, run);
}
