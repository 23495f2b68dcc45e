/* SPDX-License-Identifier: MIT */
/*
 * What the controller commands print of a run. The library renders and
 * keeps (orchestrator/report/recap.h, the run's notes, the fan-out's
 * progress events); cmd/ writes: results to stdout, notes and progress to
 * stderr through the logger, at the level the library gave them.
 */
#include <stdio.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/escape.h"
#include "common/log.h"
#include "orchestrator/report/recap.h"
#include "orchestrator/run/notes.h"
#include "orchestrator/transport/fanout.h"

static int stderr_tty;

/* Say one line at level (LN_NOTE_PLAIN: bare), escaped whole: a note or
 * a node's progress line may quote what a node sent (escape.h), and the
 * controller's own text in them holds no control byte. */
static void say_line(int level, const char *text)
{
	struct ln_buf e = LN_BUF_INIT;
	const char *shown = ln_escape_str(&e, text) < 0 ? "(out of memory)" : e.buf;

	if (level == LN_NOTE_PLAIN)
		fprintf(stderr, "%s\n", shown);
	else
		ln_log((enum ln_log_level)level, "%s", shown);
	ln_buf_release(&e);
}

/* Say each of n, oldest first, and release them. */
static void say(struct ln_notes *n)
{
	size_t i;

	for (i = 0; i < n->n; i++)
		say_line(n->v[i].level, n->v[i].text);
	ln_notes_release(n);
}

void ln_cmd_notes(struct ln_run *run, struct ln_notes *notes)
{
	if (run) {
		struct ln_notes kept = ln_run_notes_take(run);

		say(&kept);
	}
	if (notes)
		say(notes);
}

/* A fan-out event: the notes kept since the last one, the node's line,
 * and on a terminal (more than one node, not -q) the phase's live count,
 * rewritten in place and wiped at the end. */
static void progress(void *ctx, const struct ln_fanout_event *ev)
{
	int live = stderr_tty && ln_log_threshold >= LN_LOG_INFO && ev->total > 1;

	if (live)
		fputs("\r\033[K", stderr);
	ln_cmd_notes(ctx, NULL);
	if (ev->line)
		say_line(LN_LOG_INFO, ev->line);
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

int ln_cmd_facts(struct ln_run *run, int topo)
{
	struct ln_buf out = LN_BUF_INIT;
	int json = ln_cli.output == LN_OUT_JSON;

	ln_cmd_notes(run, NULL);
	return emit(topo ? ln_recap_topo(run, json, &out) : ln_recap_facts(run, json, &out), &out);
}

int ln_cmd_plan(struct ln_run *run, struct ln_plan_summary *sum)
{
	struct ln_buf out = LN_BUF_INIT, tail = LN_BUF_INIT;
	int r;

	ln_cmd_notes(run, NULL);
	r = ln_recap_plan(run, ln_cli.output == LN_OUT_JSON, &out, &tail, sum);
	fputs(out.buf, stdout);
	ln_buf_release(&out);
	/* the plan's warnings: after the nodes, before the closing line */
	ln_cmd_notes(run, NULL);
	return emit(r, &tail);
}

int ln_cmd_recap(struct ln_run *run, const char *verb)
{
	struct ln_buf out = LN_BUF_INIT;
	int code, r;

	ln_cmd_notes(run, NULL);
	r = ln_recap_apply(run, verb, ln_cli.output == LN_OUT_JSON, &out, &code);
	return ln_exit_merge(code, emit(r, &out));
}
