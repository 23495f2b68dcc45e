/* SPDX-License-Identifier: MIT */
/*
 * The notes a library call hands back for the command to say (notes.h):
 * a caller's struct ln_notes, or the run's own, appended to by any worker
 * under the run log's lock and taken whole by the command.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "orchestrator/run/notes.h"
#include "orchestrator/run/run.h"

/* Append text (malloc'd, now n's); out of memory frees it. */
static void append(struct ln_notes *n, int level, char *text)
{
	/* a command's notes are a handful: one more slot each time */
	struct ln_note *v = reallocarray(n->v, n->n + 1, sizeof(*v));

	if (!v) {
		free(text);
		return;
	}
	v[n->n].level = level;
	v[n->n].text = text;
	n->v = v;
	n->n++;
}

/* Append the formatted note to n; out of memory drops it. */
static void vadd(struct ln_notes *n, int level, const char *fmt, va_list ap)
{
	char *text = NULL;

	if (vasprintf(&text, fmt, ap) >= 0)
		append(n, level, text);
	/* else text is undefined: nothing to free */
}

void ln_notes_add(struct ln_notes *n, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vadd(n, level, fmt, ap);
	va_end(ap);
}

void ln_notes_release(struct ln_notes *n)
{
	while (n->n)
		free(n->v[--n->n].text);
	free(n->v);
	n->v = NULL;
}

void ln_run_note(struct ln_run *r, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pthread_mutex_lock(&r->log_lock);
	vadd(&r->notes, level, fmt, ap);
	pthread_mutex_unlock(&r->log_lock);
	va_end(ap);
}

struct ln_notes ln_run_notes_take(struct ln_run *r)
{
	struct ln_notes taken = LN_NOTES_INIT;

	if (!r->spec)
		return taken;
	pthread_mutex_lock(&r->log_lock);
	taken = r->notes;
	r->notes.v = NULL;
	r->notes.n = 0;
	pthread_mutex_unlock(&r->log_lock);
	return taken;
}
