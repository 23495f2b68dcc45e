/* SPDX-License-Identifier: MIT */
/*
 * What the library has to tell the user, handed back instead of printed:
 * lines in the order they happened, each with its level. The command says
 * them (cmd/ctl.c: ln_cmd_say) on stderr, the way it says its own logs.
 */
#ifndef LN_NOTES_H
#define LN_NOTES_H

#include <stddef.h>

#include "common/log.h"

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

#endif
