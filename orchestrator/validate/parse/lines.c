/* SPDX-License-Identifier: MIT */
/*
 * The one line reader every probe parser uses (see parse.h): captured
 * output is not NUL-terminated where it was cut, and its last line may
 * have lost its newline, so lines are spans of a bounded text, and a
 * parser that trusts only whole lines asks for complete ones. Also the
 * parsers' shared "find the tool's error line" and "no result" helpers.
 */
#include <ctype.h>
#include <string.h>

#include "common/error.h"
#include "orchestrator/validate/parse/parse.h"

/* Phrases tools print when they fail; matched case-insensitively. */
static const char *const error_words[] = {
	"error", "failed", "failure", "couldn't", "could not", "unable", "cannot",
	"mismatch", "refused", "timed out", "timeout", "not found", "no such", "abort",
	"rejected", "unreachable", "not enough", NULL,
};

static int line_is_error(const char *s, size_t n)
{
	char low[512];
	size_t i;

	if (n >= sizeof(low))
		n = sizeof(low) - 1;
	for (i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	low[n] = '\0';
	for (i = 0; error_words[i]; i++)
		if (strstr(low, error_words[i]))
			return 1;
	return 0;
}

int ln_parse_error_line(const char *text, size_t len, char *dst, size_t dstsz)
{
	struct ln_lines it;
	const char *s, *e;
	size_t n;

	ln_lines_init(&it, text, len);
	while (ln_lines_next(&it, &s, &n, NULL)) {
		e = s + n;
		while (s < e && isspace((unsigned char)*s))
			s++;
		while (e > s && isspace((unsigned char)e[-1]))
			e--;
		if (e > s && line_is_error(s, (size_t)(e - s))) {
			n = (size_t)(e - s);
			if (dstsz) {
				if (n >= dstsz)
					n = dstsz - 1;
				memcpy(dst, s, n);
				dst[n] = '\0';
			}
			return 1;
		}
	}
	if (dstsz)
		dst[0] = '\0';
	return 0;
}

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
