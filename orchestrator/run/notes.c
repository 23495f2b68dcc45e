/* SPDX-License-Identifier: MIT */
/*
 * The run's notes (notes.h): a growing array in the run record, appended
 * to by any worker under the run log's lock, taken whole by the command.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "orchestrator/run/notes.h"
#include "orchestrator/run/run.h"

/* Append text (malloc'd) to r's notes; -ENOMEM leaves it the caller's. */
static int keep(struct ln_run *r, enum ln_log_level level, char *text)
{
	int rc = 0;

	pthread_mutex_lock(&r->log_lock);
	if (r->n_notes == r->alloc_notes) {
		size_t n = r->alloc_notes ? 2 * r->alloc_notes : 8;
		struct ln_note *v = realloc(r->notes, n * sizeof(*v));

		if (v) {
			r->notes = v;
			r->alloc_notes = n;
		}
	}
	if (r->n_notes < r->alloc_notes) {
		r->notes[r->n_notes].level = level;
		r->notes[r->n_notes++].text = text;
	} else {
		rc = -ENOMEM;
	}
	pthread_mutex_unlock(&r->log_lock);
	return rc;
}

void ln_notes_add(struct ln_run *r, enum ln_log_level level, const char *fmt, ...)
{
	char *text = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;	/* undefined after a failure */
	va_end(ap);
	if (text && keep(r, level, text) < 0)
		free(text);
}

size_t ln_notes_take(struct ln_run *r, struct ln_note **notes)
{
	size_t n;

	*notes = NULL;
	if (!r->spec)
		return 0;
	pthread_mutex_lock(&r->log_lock);
	*notes = r->notes;
	n = r->n_notes;
	r->notes = NULL;
	r->n_notes = r->alloc_notes = 0;
	pthread_mutex_unlock(&r->log_lock);
	return n;
}

void ln_notes_free(struct ln_note *notes, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(notes[i].text);
	free(notes);
}
