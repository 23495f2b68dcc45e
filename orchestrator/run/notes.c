/* SPDX-License-Identifier: MIT */
/*
 * The notes a library call hands back for the command to say (notes.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "orchestrator/run/notes.h"

void ln_notes_add(struct ln_notes *n, int level, const char *fmt, ...)
{
	struct ln_note *v;
	char *text = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (r < 0)
		return;
	/* a command's notes are a handful: one more slot each time */
	v = reallocarray(n->v, n->n + 1, sizeof(*v));
	if (!v) {
		free(text);
		return;
	}
	v[n->n].level = level;
	v[n->n].text = text;
	n->v = v;
	n->n++;
}

void ln_notes_release(struct ln_notes *n)
{
	while (n->n)
		free(n->v[--n->n].text);
	free(n->v);
	n->v = NULL;
}
