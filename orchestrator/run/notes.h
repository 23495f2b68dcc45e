/* SPDX-License-Identifier: MIT */
/*
 * A run's notes: the messages the user must see (a warning, a rollout's
 * wave, why it stopped) that the library keeps in the run record instead
 * of printing them. The command takes them and prints each at its level
 * on stderr (cmd/output.c): before each progress line and after each
 * library call, so they stand where they arose. Run log lines are the
 * caller's to write, as before.
 */
#ifndef LN_NOTES_H
#define LN_NOTES_H

#include <stddef.h>

#include "common/log.h"

struct ln_run;

struct ln_note {
	enum ln_log_level level;	/* LN_LOG_ERROR, LN_LOG_WARN or LN_LOG_INFO */
	char *text;
};

/* Keep a note for the user in r (thread-safe, under r->log_lock), level
 * as the logger's. Without memory the note is lost. */
void ln_notes_add(struct ln_run *r, enum ln_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Hand r's notes so far to the caller, oldest first: *notes (the caller's,
 * free with ln_notes_free(); NULL when none) and their count; r keeps none
 * of them. A run not set up, or released, has none. */
size_t ln_notes_take(struct ln_run *r, struct ln_note **notes);

void ln_notes_free(struct ln_note *notes, size_t n);

#endif
