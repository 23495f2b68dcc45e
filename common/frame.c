// SPDX-License-Identifier: MIT
/*
 * Session framing (see frame.h): the header is read a byte at a time so
 * nothing past the frame is consumed, the payload in chunks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/frame.h"
#include "common/proto.h"

int ln_frame_read(ln_frame_read_fn rd, void *ctx, size_t max, struct ln_buf *payload,
		  struct ln_buf *err)
{
	uint64_t len = 0;
	size_t digits = 0;
	char c, chunk[65536];
	int n;

	ln_buf_reset(payload);
	for (;;) {
		n = rd(ctx, &c, 1, err);
		if (n < 0)
			return n;
		if (n == 0) {
			if (!digits)
				return 1;
			ln_buf_addf(err, "truncated frame: the input ended inside the header");
			return -ENODATA;
		}
		if (c == '\n' && digits)
			break;
		if (c < '0' || c > '9') {
			ln_buf_addf(err, "malformed frame header: byte 0x%02x after %zu digits "
				    "(a frame is LENGTH, a newline, then LENGTH bytes of JSON)",
				    (unsigned char)c, digits);
			return -EBADMSG;
		}
		if (++digits > LN_FRAME_DIGITS) {
			ln_buf_addf(err, "malformed frame header: more than %d digits",
				    LN_FRAME_DIGITS);
			return -EBADMSG;
		}
		len = len * 10 + (uint64_t)(c - '0');
	}
	if (len > max) {
		ln_buf_addf(err, "oversized frame: %llu bytes, at most %zu allowed",
			    (unsigned long long)len, max);
		return -EMSGSIZE;
	}
	if (ln_buf_grow(payload, (size_t)len) < 0) {
		ln_buf_addf(err, "cannot hold a frame of %llu bytes", (unsigned long long)len);
		return -ENOMEM;
	}
	n = 0;
	while (payload->len < len) {
		size_t want = len - payload->len;

		n = rd(ctx, chunk, want < sizeof(chunk) ? want : sizeof(chunk), err);
		if (n < 0)
			break;
		if (n == 0) {
			ln_buf_addf(err, "truncated frame: the input ended after %zu of %llu bytes",
				    payload->len, (unsigned long long)len);
			n = -ENODATA;
			break;
		}
		ln_buf_add(payload, chunk, (size_t)n);
		n = 0;
	}
	/* a request's secrets pass through the stack too */
	if (payload->secret)
		explicit_bzero(chunk, sizeof(chunk));
	return n;
}

int ln_frame_put(struct ln_buf *out, const void *payload, size_t len)
{
	size_t old = out->len;
	int r = ln_buf_addf(out, "%zu\n", len);

	if (r == 0)
		r = ln_buf_add(out, payload, len);
	if (r < 0)
		ln_buf_setlen(out, old);
	return r;
}
