/* SPDX-License-Identifier: MIT */
/*
 * The one line reader every probe parser uses (see parse.h): captured
 * output is not NUL-terminated where it was cut, and its last line may
 * have lost its newline, so lines are spans of a bounded text, and a
 * parser that trusts only whole lines asks for complete ones.
 */
#include <string.h>

#include "common/error.h"
#include "orchestrator/validate/parse/parse.h"

int ln_parse_no_result(const char *text, size_t len, const char *what, const char *reason,
		       struct ln_buf *err)
{
	char why[200];

	if (ln_parse_error_line(text, len, why, sizeof(why)))
		ln_buf_addf(err, "no %s result: '%s'", what, why);
	else
		ln_buf_addf(err, "no %s result: %s", what, reason);
	return -LN_EPROTO;
}

void ln_lines_init(struct ln_lines *it, const char *text, size_t len)
{
	it->p = text;
	it->end = text + len;
}

int ln_lines_next(struct ln_lines *it, const char **line, size_t *n, int *complete)
{
	const char *nl;

	if (it->p >= it->end)
		return 0;
	nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
	*line = it->p;
	*n = (size_t)((nl ? nl : it->end) - it->p);
	if (complete)
		*complete = nl != NULL;
	it->p = nl ? nl + 1 : it->end;
	return 1;
}

int ln_lines_next_copy(struct ln_lines *it, char *dst, size_t dstsz)
{
	const char *line;
	size_t n;
	int complete;

	if (!ln_lines_next(it, &line, &n, &complete) || !complete)
		return 0;
	if (n >= dstsz)
		n = dstsz - 1;
	memcpy(dst, line, n);
	dst[n] = '\0';
	return 1;
}
