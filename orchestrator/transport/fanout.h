/* SPDX-License-Identifier: MIT */
/*
 * Fan-out: run one function per node with at most `parallel` nodes in
 * flight (a sliding window: a node starts as soon as any other finishes),
 * and tell the progress callback the command installed of each node as it
 * finishes (its one-line outcome, the counts a live display shows); the
 * fan-out itself never prints. SIGINT or SIGTERM (after ln_fanout_signals())
 * stops new work: nodes in flight finish within their own bounds, nodes
 * not started are reported as such, and ln_fanout_interrupted() says so.
 * A second one ends the process at once (exit 1), closing its connections.
 *
 * Workers are threads, one per in-flight node; a node's SSH session is
 * only ever used by the one thread working on that node at the time.
 */
#ifndef LN_FANOUT_H
#define LN_FANOUT_H

#include <stddef.h>

#include "common/buf.h"

/* Work on item i; write a one-line outcome into line (no newline). The
 * return value is handed to done. */
typedef int (*ln_fanout_fn)(void *ctx, size_t i, struct ln_buf *line);

struct ln_fanout {
	const char *phase;		/* shown in the live count */
	size_t n;			/* items 0..n-1 */
	const unsigned char *select;	/* NULL, or 1 for the items to run */
	unsigned parallel;		/* window; 0 means 64 */
	ln_fanout_fn fn;
	void *ctx;
	int quiet;			/* no per-item lines */
};

/* What a fan-out tells the progress callback: after each item, and once
 * more (end) when all its workers have finished. */
struct ln_fanout_event {
	const char *phase;		/* the fan-out's phase */
	size_t done, total, in_flight;	/* items finished, selected, running */
	const char *line;		/* the item's outcome line; NULL when it
					 * wrote none, when quiet, and at the end */
	int end;			/* 1: the last event of this fan-out */
};
typedef void (*ln_fanout_progress_fn)(void *ctx, const struct ln_fanout_event *ev);

/* Install fn (NULL: none, the default) and its ctx for every later
 * fan-out: the command's printer (cmd/ prints the lines and, on a
 * terminal, a live count). Calls are serialised: one at a time, from the
 * worker whose item finished, or from ln_fanout_run() for the end. */
void ln_fanout_set_progress(ln_fanout_progress_fn fn, void *ctx);

/* Per item after a run: 1 when it ran, 0 when it was never started. */
struct ln_fanout_result {
	unsigned char *started;
	int *rc;
	size_t n_started, n_skipped_by_signal;
};

/* Install SIGINT/SIGTERM handlers that only set the stop flag. */
void ln_fanout_signals(void);
int ln_fanout_interrupted(void);
/* For tests: raise or clear the stop flag as a signal would. */
void ln_fanout_set_stop(int stop);

/* Run; res is filled (free with ln_fanout_result_release). Returns 0, or
 * -ENOMEM / -EAGAIN when threads could not be created at all; res then
 * holds nothing (releasing it is harmless). */
int ln_fanout_run(const struct ln_fanout *f, struct ln_fanout_result *res);
void ln_fanout_result_release(struct ln_fanout_result *res);

#endif
