/* SPDX-License-Identifier: MIT */
/*
 * What the library has to tell the user, handed back instead of printed:
 * lines in the order they happened, each with its level. A call that has
 * no run yet (ln_run_start) or whose notes belong to its own answer (a
 * report written, an after-validate action) fills a struct ln_notes the
 * caller hands it; a run's phases keep theirs in the run record
 * (ln_run_note, thread-safe, for the fan-out's workers). The command says
 * both on stderr (cmd/output.c: ln_cmd_notes), before each progress line
 * and after each library call, so they stand where they arose. Run log
 * lines are the caller's to write, as before.
 */
#ifndef LN_NOTES_H
#define LN_NOTES_H

#include <stddef.h>

#include "common/log.h"

struct ln_run;

/* A note's level: an enum ln_log_level, or LN_NOTE_PLAIN for lines said
 * as they are (a file's problems, each already "FILE:LINE: ..."). */
#define LN_NOTE_PLAIN (-1)

struct ln_note {
	int level;
	char *text;	/* one line or several, no trailing newline */
};

struct ln_notes {
	struct ln_note *v;
	size_t n;
};

#define LN_NOTES_INIT { NULL, 0 }

/* Append a note; out of memory drops it (a note is never worth failing
 * the run for). */
void ln_notes_add(struct ln_notes *n, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ln_notes_release(struct ln_notes *n);

/* Keep a note for the user in r's own notes (r->notes), as
 * ln_notes_add(); thread-safe, under r->log_lock, so any worker of a
 * phase may call it. r must be set up (ln_run_setup). */
void ln_run_note(struct ln_run *r, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Hand r's notes so far to the caller, oldest first (the caller's, free
 * with ln_notes_release()); r keeps none of them. A run not set up, or
 * released, has none. */
struct ln_notes ln_run_notes_take(struct ln_run *r);

#endif
