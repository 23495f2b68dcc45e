/* SPDX-License-Identifier: MIT */
/*
 * ln_escape(): node-derived text made safe to print (escape.h). One
 * function for every printer, so a new message is covered by its sink.
 */
#include <errno.h>
#include <string.h>

#include "common/escape.h"

size_t ln_utf8_seq(const unsigned char *s, size_t n)
{
	size_t len, i;
	unsigned int c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

/* Length of the printable UTF-8 sequence at s (a byte >= 0x80), 0 when it
 * is not well-formed or is a C1 control U+0080-U+009F (0xc2 0x80-0x9f). */
static size_t utf8_printable(const unsigned char *s, size_t n)
{
	size_t len = ln_utf8_seq(s, n);

	return len == 2 && s[0] == 0xc2 && s[1] < 0xa0 ? 0 : len;
}

int ln_escape(struct ln_buf *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t start = out->len, i = 0, k;

	while (i < n) {
		unsigned char c = p[i];
		int r;

		if (c >= 0x20 && c < 0x7f && c != '\\') {
			r = ln_buf_addch(out, (char)c);
			k = 1;
		} else if (c >= 0x80 && (k = utf8_printable(p + i, n - i))) {
			r = ln_buf_add(out, p + i, k);
		} else {
			char e[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };

			r = ln_buf_add(out, e, sizeof(e));
			k = 1;
		}
		if (r < 0) {
			ln_buf_setlen(out, start);
			return -ENOMEM;
		}
		i += k;
	}
	return 0;
}

int ln_escape_str(struct ln_buf *out, const char *s)
{
	return s ? ln_escape(out, s, strlen(s)) : 0;
}
