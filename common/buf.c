/* SPDX-License-Identifier: MIT */
/*
 * Bounded growable buffer. See buf.h for the contract: appends are
 * all-or-nothing and the buffer is NUL-terminated at every moment.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

char ln_buf_empty[1];

static size_t buf_cap(const struct ln_buf *b)
{
	return b->cap ? b->cap : LN_BUF_DEFAULT_CAP;
}

void ln_buf_init(struct ln_buf *b, size_t cap)
{
	b->buf = ln_buf_empty;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap;
	b->secret = 0;
}

void ln_buf_init_secret(struct ln_buf *b, size_t cap)
{
	b->buf = ln_buf_empty;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap;
	b->secret = 1;
}

void ln_buf_release(struct ln_buf *b)
{
	size_t cap = b->cap;
	int secret = b->secret;

	if (b->alloc) {
		if (secret)
			explicit_bzero(b->buf, b->alloc);
		free(b->buf);
	}
	ln_buf_init(b, cap);
	b->secret = secret;
}

void ln_buf_release_list(struct ln_buf **b)
{
	for (; *b; b++)
		ln_buf_release(*b);
}

void ln_buf_reset(struct ln_buf *b)
{
	if (b->secret)
		explicit_bzero(b->buf, b->len);
	b->len = 0;
	b->buf[0] = '\0';
}

char *ln_buf_detach(struct ln_buf *b, size_t *len)
{
	char *s;

	if (len)
		*len = b->len;
	if (b->alloc) {
		s = b->buf;
	} else {
		s = strdup("");
		if (!s)
			abort(); /* a one-byte allocation failing leaves nothing sane to do */
	}
	b->buf = ln_buf_empty;
	b->len = 0;
	b->alloc = 0;
	return s;
}

int ln_buf_grow(struct ln_buf *b, size_t extra)
{
	size_t want, n;
	char *p;

	if (extra > buf_cap(b) || b->len > buf_cap(b) - extra)
		return -E2BIG;
	want = b->len + extra + 1;
	if (want <= b->alloc)
		return 0;
	n = b->alloc ? b->alloc : 64;
	while (n < want)
		n = n / 2 * 3 + 16;
	if (b->alloc && b->secret) {
		/* realloc() might move it and leave the secret in freed memory */
		p = malloc(n);
		if (!p)
			return -ENOMEM;
		memcpy(p, b->buf, b->len + 1);
		explicit_bzero(b->buf, b->alloc);
		free(b->buf);
	} else {
		p = b->alloc ? realloc(b->buf, n) : malloc(n);
		if (!p)
			return -ENOMEM;
	}
	if (!b->alloc)
		p[0] = '\0';
	b->buf = p;
	b->alloc = n;
	return 0;
}

int ln_buf_add(struct ln_buf *b, const void *data, size_t n)
{
	int r = ln_buf_grow(b, n);

	if (r < 0)
		return r;
	if (n)
		memcpy(b->buf + b->len, data, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return 0;
}

int ln_buf_addstr(struct ln_buf *b, const char *s)
{
	return ln_buf_add(b, s, strlen(s));
}

int ln_buf_addch(struct ln_buf *b, char c)
{
	return ln_buf_add(b, &c, 1);
}

int ln_buf_vaddf(struct ln_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n, r;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return -EINVAL;
	r = ln_buf_grow(b, (size_t)n);
	if (r < 0)
		return r;
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int ln_buf_addf(struct ln_buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = ln_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return r;
}

void ln_buf_setlen(struct ln_buf *b, size_t len)
{
	if (len >= b->len)
		return;
	if (b->secret)
		explicit_bzero(b->buf + len, b->len - len);
	b->len = len;
	b->buf[len] = '\0';
}

void ln_buf_rtrim(struct ln_buf *b)
{
	size_t n = b->len;

	while (n && (b->buf[n - 1] == ' ' || b->buf[n - 1] == '\n' || b->buf[n - 1] == '\t' ||
		     b->buf[n - 1] == '\r'))
		n--;
	ln_buf_setlen(b, n);
}
