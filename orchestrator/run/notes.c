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
	char *text = NULL;
	va_list ap;
	int r;

	if (n->n == n->alloc) {
		size_t alloc = n->alloc ? n->alloc * 2 : 4;
		struct ln_note *v = realloc(n->v, alloc * sizeof(*v));

		if (!v)
			return;
		n->v = v;
		n->alloc = alloc;
	}
	va_start(ap, fmt);
	r = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (r < 0)
		return;
	n->v[n->n].level = level;
	n->v[n->n].text = text;
	n->n++;
}

void ln_notes_release(struct ln_notes *n)
{
	size_t i;

	for (i = 0; i < n->n; i++)
		free(n->v[i].text);
	free(n->v);
	n->v = NULL;
	n->n = n->alloc = 0;
}
