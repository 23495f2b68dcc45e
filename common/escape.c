/* SPDX-License-Identifier: MIT */
/*
 * ln_escape(): node-derived text made safe to print (escape.h). One
 * function for every printer, so a new message is covered by its sink.
 */
#include <errno.h>
#include <string.h>

#include "common/escape.h"

/* Length of the valid UTF-8 sequence at s (of n bytes), 0 when there is
 * none or it is a C1 control (U+0080-U+009F), a surrogate, overlong or
 * above U+10FFFF. Only called on a byte >= 0x80. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned int cp;
	size_t len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < 0xa0 || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
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
		} else if (c >= 0x80 && (k = utf8_len(p + i, n - i))) {
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
