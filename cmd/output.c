/* SPDX-License-Identifier: MIT */
/*
 * What the controller commands print of a run. The library renders and
 * tells (orchestrator/report/recap.h, the fan-out's progress events);
 * cmd/ writes: results to stdout, progress to stderr through the logger.
 */
#include <stdio.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"
#include "orchestrator/report/recap.h"
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

/* A rendered result to stdout, then released; r: the renderer's return.
 * LN_EXIT_OK, or LN_EXIT_FAILED (said) when it is incomplete. */
static int emit(int r, struct ln_buf *out)
{
	fputs(out->buf, stdout);
	ln_buf_release(out);
	if (r >= 0)
		return LN_EXIT_OK;
	ln_error("the output is incomplete: %s", ln_strerror(r));
	return LN_EXIT_FAILED;
}

int ln_cmd_facts(struct ln_run *run)
{
	struct ln_buf out = LN_BUF_INIT;

	return emit(ln_recap_facts(run, ln_cli.output == LN_OUT_JSON, &out), &out);
}

int ln_cmd_plan(struct ln_run *run, struct ln_plan_summary *sum)
{
	struct ln_buf out = LN_BUF_INIT, tail = LN_BUF_INIT;
	int r;

	r = ln_recap_plan(run, ln_cli.output == LN_OUT_JSON, &out, &tail, sum);
	fputs(out.buf, stdout);
	ln_buf_release(&out);
	return emit(r, &tail);
}

int ln_cmd_recap(struct ln_run *run, const char *verb)
{
	struct ln_buf out = LN_BUF_INIT;
	int code, r;

	r = ln_recap_apply(run, verb, ln_cli.output == LN_OUT_JSON, &out, &code);
	return ln_exit_merge(code, emit(r, &out));
}
