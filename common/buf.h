/* SPDX-License-Identifier: MIT */
/*
 * struct ln_buf: a growable, always NUL-terminated byte buffer with a size
 * cap, in the spirit of git's strbuf. Every append either succeeds whole or
 * leaves the buffer unchanged and returns -ENOMEM (allocation failure) or
 * -E2BIG (the cap would be passed), so callers never see half a message.
 *
 * A secret buffer (LN_BUF_INIT_SECRET, ln_buf_init_secret()) holds key
 * material: it never grows with realloc(), which may leave the old block's
 * copy in freed memory, but copies into a new block and wipes the old one;
 * release wipes the whole allocation, reset and setlen the bytes they drop.
 * A detached string is the caller's to wipe. Only the buffer's own blocks
 * are wiped: a copy made elsewhere (a stack chunk, json-c's parser, string
 * objects and printbuf, libssh's channel buffers) is that code's to wipe,
 * and json-c's and libssh's are not wiped at all.
 */
#ifndef LN_BUF_H
#define LN_BUF_H

#include <stdarg.h>
#include <stddef.h>

/* Default cap: large enough for any agent answer or report, small enough
 * that a runaway peer cannot exhaust the controller's memory. */
#define LN_BUF_DEFAULT_CAP (256u << 20)

struct ln_buf {
	char *buf;	/* never NULL after init: points at "" when empty */
	size_t len;	/* bytes used, excluding the terminating NUL */
	size_t alloc;	/* bytes allocated; 0 while buf points at the shared "" */
	size_t cap;	/* maximum len; 0 means LN_BUF_DEFAULT_CAP */
	int secret;	/* wipe what is dropped; never realloc (see above) */
};

extern char ln_buf_empty[];
#define LN_BUF_INIT { ln_buf_empty, 0, 0, 0, 0 }
#define LN_BUF_INIT_SECRET { ln_buf_empty, 0, 0, 0, 1 }

/* A plain (not secret) empty buffer, whatever b held: it may be called on
 * uninitialised memory, so it never keeps a secret mark. A function handed a
 * caller's buffer must not call it (nor memset the buffer) to set a cap. */
void ln_buf_init(struct ln_buf *b, size_t cap);
/* The same, for a buffer that will hold a secret: mark it at creation,
 * before anything is added. */
void ln_buf_init_secret(struct ln_buf *b, size_t cap);
/* Free the contents; the buffer is empty and reusable afterwards (and
 * still secret if it was). */
void ln_buf_release(struct ln_buf *b);
/* The same for every buffer named: ln_buf_release_all(&cmd, &out, &err). */
#define ln_buf_release_all(...) ln_buf_release_list((struct ln_buf *[]){ __VA_ARGS__, NULL })
void ln_buf_release_list(struct ln_buf **b);
/* Keep the allocation, drop the contents. */
void ln_buf_reset(struct ln_buf *b);
/* Hand the malloc'd string to the caller (never NULL); the buffer is empty. */
char *ln_buf_detach(struct ln_buf *b, size_t *len);

int ln_buf_grow(struct ln_buf *b, size_t extra);
int ln_buf_add(struct ln_buf *b, const void *data, size_t n);
int ln_buf_addstr(struct ln_buf *b, const char *s);
int ln_buf_addch(struct ln_buf *b, char c);
int ln_buf_addf(struct ln_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int ln_buf_vaddf(struct ln_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Drop bytes from the end down to len (len <= b->len). */
void ln_buf_setlen(struct ln_buf *b, size_t len);
/* Remove trailing whitespace. */
void ln_buf_rtrim(struct ln_buf *b);

#endif
