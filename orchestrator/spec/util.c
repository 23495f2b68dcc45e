/* SPDX-License-Identifier: MIT */
/*
 * Storage for the spec module: the arena that holds the model's strings,
 * the index hash set and the index sort used for every duplicate check
 * (linear in the spec's size, n log n at worst, never all-pairs), and the
 * diagnostics list.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/spec/impl.h"

#define ARENA_CHUNK (64u << 10)

struct spec_arena_chunk {
	struct spec_arena_chunk *next;
	/* max_align_t keeps every allocation suitably aligned */
	max_align_t data[];
};

/* A new chunk of at least n bytes, linked for release. */
static char *new_chunk(struct spec_arena *a, size_t n)
{
	struct spec_arena_chunk *c = malloc(sizeof(*c) + n);

	if (!c)
		return NULL;
	c->next = a->head;
	a->head = c;
	return (char *)c->data;
}

void *spec_arena_alloc(struct spec_arena *a, size_t n)
{
	char *p;

	n = (n + 15) & ~(size_t)15;
	if (n > a->left) {
		/* A large request gets a chunk of its own; the current one
		 * keeps serving small ones. */
		if (n > ARENA_CHUNK / 4)
			return new_chunk(a, n);
		p = new_chunk(a, ARENA_CHUNK);
		if (!p)
			return NULL;
		a->cur = p;
		a->left = ARENA_CHUNK;
	}
	p = a->cur;
	a->cur += n;
	a->left -= n;
	return p;
}

char *spec_arena_strndup(struct spec_arena *a, const char *s, size_t n)
{
	char *d;

	/* Strings are packed byte by byte: a 4,096-node spec holds some
	 * 80,000 short ones, and 16-byte rounding would cost a third more. */
	if (n + 1 > a->sleft) {
		if (n + 1 > ARENA_CHUNK / 4) {
			d = new_chunk(a, n + 1);
			if (!d)
				return NULL;
		} else {
			d = new_chunk(a, ARENA_CHUNK);
			if (!d)
				return NULL;
			a->scur = d;
			a->sleft = ARENA_CHUNK;
		}
		if (n + 1 > ARENA_CHUNK / 4) {
			memcpy(d, s, n);
			d[n] = '\0';
			return d;
		}
	}
	d = a->scur;
	a->scur += n + 1;
	a->sleft -= n + 1;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

void spec_arena_release(struct spec_arena *a)
{
	struct spec_arena_chunk *c = a->head, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	memset(a, 0, sizeof(*a));
}

uint64_t spec_hash_str(const char *s, uint64_t h)
{
	/* FNV-1a, then a final mix so linear probing sees spread-out bits. */
	for (; s && *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

int spec_idxmap_init(struct spec_idxmap *m, size_t n, uint64_t (*hash)(const void *, uint32_t),
		int (*eq)(const void *, uint32_t, uint32_t), const void *ctx)
{
	size_t cap = 16;

	/* load factor at most 2/3: short probe runs, 4 bytes a slot */
	while (cap < n + n / 2 + 2)
		cap <<= 1;
	m->slot = calloc(cap, sizeof(*m->slot));
	if (!m->slot)
		return -ENOMEM;
	m->mask = cap - 1;
	m->hash = hash;
	m->eq = eq;
	m->ctx = ctx;
	return 0;
}

long spec_idxmap_insert(struct spec_idxmap *m, uint32_t idx)
{
	size_t i = (size_t)m->hash(m->ctx, idx) & m->mask;

	for (;; i = (i + 1) & m->mask) {
		uint32_t s = m->slot[i];

		if (!s) {
			m->slot[i] = idx + 1;
			return -1;
		}
		if (m->eq(m->ctx, s - 1, idx))
			return (long)(s - 1);
	}
}

long spec_idxmap_find(const struct spec_idxmap *m, uint64_t h,
		 int (*match)(const void *ctx, uint32_t idx, const void *key), const void *key)
{
	size_t i;

	if (!m->slot)
		return -1;
	for (i = (size_t)h & m->mask;; i = (i + 1) & m->mask) {
		uint32_t s = m->slot[i];

		if (!s)
			return -1;
		if (match(m->ctx, s - 1, key))
			return (long)(s - 1);
	}
}

void spec_idxmap_release(struct spec_idxmap *m)
{
	free(m->slot);
	m->slot = NULL;
}

struct sort_by {
	int (*cmp)(const void *ctx, uint32_t a, uint32_t b);
	const void *ctx;
};

static int cmp_idx(const void *pa, const void *pb, void *arg)
{
	const struct sort_by *by = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int c = by->cmp(by->ctx, a, b);

	if (c)
		return c;
	return a < b ? -1 : 1;
}

void spec_sort_idx(uint32_t *idx, size_t n, size_t first,
		   int (*cmp)(const void *ctx, uint32_t a, uint32_t b), const void *ctx)
{
	struct sort_by by = { cmp, ctx };
	size_t i;

	for (i = 0; i < n; i++)
		idx[i] = (uint32_t)(first + i);
	qsort_r(idx, n, sizeof(*idx), cmp_idx, &by);
}

/* A message is one line: control bytes (from spec text it echoes: a key,
 * a value, a name) become \xNN, so none can start a fake line or drive
 * the terminal. */
static int escape_controls(struct ln_buf *b)
{
	struct ln_buf out = LN_BUF_INIT;
	size_t i;
	int r = 0;

	for (i = 0; i < b->len && r == 0; i++) {
		unsigned char c = (unsigned char)b->buf[i];

		r = c < 0x20 || c == 0x7f ? ln_buf_addf(&out, "\\x%02x", c)
					  : ln_buf_addch(&out, (char)c);
	}
	if (r == 0) {
		ln_buf_release(b);
		*b = out;
	} else {
		ln_buf_release(&out);
	}
	return r;
}

void spec_diag(struct ln_spec *spec, struct ln_mark m, const char *fmt, ...)
{
	struct ln_spec_store *st = spec->store;
	struct ln_buf b = LN_BUF_INIT;
	va_list ap;

	/* A runaway spec (or a fuzzer) must not grow the list without end;
	 * past the cap only the count grows, reported at the end. */
	if (st->n_diags >= SPEC_MAX_DIAGS) {
		st->n_dropped++;
		return;
	}
	if (st->n_diags == st->alloc_diags) {
		size_t n = st->alloc_diags ? st->alloc_diags * 2 : 16;
		struct diag *d = realloc(st->diags, n * sizeof(*d));

		if (!d)
			return;
		st->diags = d;
		st->alloc_diags = n;
	}
	va_start(ap, fmt);
	if (ln_buf_vaddf(&b, fmt, ap) < 0) {
		va_end(ap);
		ln_buf_release(&b);
		return;
	}
	va_end(ap);
	if (escape_controls(&b) < 0) {
		ln_buf_release(&b);
		return;
	}
	st->diags[st->n_diags].line = m.line ? m.line : 1;
	st->diags[st->n_diags].col = m.line ? m.col : 1;
	st->diags[st->n_diags].seq = (uint32_t)st->n_diags;
	st->diags[st->n_diags].msg = ln_buf_detach(&b, NULL);
	st->n_diags++;
}

void spec_warn(struct ln_spec *spec, struct ln_mark m, const char *fmt, ...)
{
	struct ln_buf *w = &spec->store->warnings;
	struct ln_buf b = LN_BUF_INIT;
	va_list ap;

	if (w->len > (64u << 10))
		return;
	va_start(ap, fmt);
	if (ln_buf_vaddf(&b, fmt, ap) == 0 && escape_controls(&b) == 0)
		ln_buf_addf(w, "%s:%u:%u: warning: %s\n", spec->path ? spec->path : "?",
			    m.line ? m.line : 1, m.line ? m.col : 1, b.buf);
	va_end(ap);
	ln_buf_release(&b);
	spec->warnings = w->len ? w->buf : NULL;
}

int spec_diags_full(const struct ln_spec *spec)
{
	return spec->store->n_diags >= SPEC_MAX_DIAGS;
}
