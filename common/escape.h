/* SPDX-License-Identifier: MIT */
/*
 * Rendering a node-derived string for a terminal or a log line. A node
 * controls every byte it sends back; printed raw, a string could retitle
 * the window (ESC ] 0;...BEL), wipe a line (CR ESC [ 2K) or forge lines of
 * its own (LF). Every printer of such text goes through ln_escape().
 */
#ifndef LN_COMMON_ESCAPE_H
#define LN_COMMON_ESCAPE_H

#include <stddef.h>

#include "common/buf.h"

/*
 * Append s[0..n) to out with every byte a terminal could act on written
 * as the four characters \xNN (lowercase hex): C0 controls 0x00-0x1f (ESC,
 * CR, LF, TAB and BEL included), DEL 0x7f, the backslash itself (so the
 * rendering cannot be forged and reads back unambiguously), and every byte
 * of an invalid or overlong UTF-8 sequence (a lone 0x80-0x9f is a C1
 * control on an 8-bit terminal). Valid UTF-8 is kept, except the C1 code
 * points U+0080-U+009F, whose two bytes are escaped too. Returns 0, or
 * -ENOMEM with out unchanged.
 */
int ln_escape(struct ln_buf *out, const char *s, size_t n);

/* Length of the well-formed UTF-8 sequence at s (n > 0 bytes left): 1 for
 * ASCII, 0 for none (overlong, a surrogate, above U+10FFFF, truncated). */
size_t ln_utf8_seq(const unsigned char *s, size_t n);

/* ln_escape() of a NUL-terminated string; NULL appends nothing. */
int ln_escape_str(struct ln_buf *out, const char *s);

#endif
