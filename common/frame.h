/* SPDX-License-Identifier: MIT */
/*
 * The agent session's framing, shared by both ends: a frame is the
 * payload's length in decimal ASCII (1 to LN_FRAME_DIGITS digits), a
 * newline, then exactly that many payload bytes (one JSON object). The
 * length comes first so a reader never scans a payload for its end and can
 * refuse an oversized frame before reading it. docs/agent-protocol.md,
 * "Session", is the contract.
 */
#ifndef LN_FRAME_H
#define LN_FRAME_H

#include <stddef.h>

#include "common/buf.h"

/*
 * Read up to n bytes into p: returns the count (> 0), 0 at the end of the
 * input, or a negative code (its detail in err). Blocks until at least one
 * byte, the end or an error.
 */
typedef int (*ln_frame_read_fn)(void *ctx, void *p, size_t n, struct ln_buf *err);

/*
 * Read one frame through rd into payload (reset first), refusing payloads
 * over max bytes. Returns 0 with the payload, 1 when the input ended cleanly
 * before a frame began, or a negative code with the reason in err:
 * -EBADMSG (the header is not digits and a newline), -EMSGSIZE (the length
 * passes max; the payload is not read), -ENODATA (the input ended inside
 * the frame), or rd's own code. After an error the stream is out of step.
 */
int ln_frame_read(ln_frame_read_fn rd, void *ctx, size_t max, struct ln_buf *payload,
		  struct ln_buf *err);

/* Append the frame of payload[0..len) to out. */
int ln_frame_put(struct ln_buf *out, const void *payload, size_t len);

#endif
