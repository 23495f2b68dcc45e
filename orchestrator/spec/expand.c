/* SPDX-License-Identifier: MIT */
/*
 * Range expansion. Node, target and initiator entries may be ranges
 * ("gpu[001-128]"): an entry is collected whole by the walker, then its
 * finisher (nodes.c, storage.c) makes one object per value of the lead
 * field, and every other field that holds a range expands in step with
 * it. Each value is checked against its field's pattern as it is made.
 */
#include <errno.h>
#include <string.h>

#include "orchestrator/spec/parser.h"

/* A spec of a few lines must not expand into millions of objects: the
 * total of each kind is capped, like a single range. */
#define MAX_OBJECTS LN_HOSTLIST_MAX

size_t spec_lead_open(struct parser *p, struct lead *l, const char *raw, const char *key,
		   struct ln_mark m, size_t have, const char *what)
{
	memset(l, 0, sizeof(*l));
	if (!raw)
		return 0;	/* the entry lacks it: reported as missing */
	l->raw = raw;
	l->key = key;
	l->mark = m;
	l->n = 1;
	if (!ln_hostlist_is_range(raw))
		goto cap;
	ln_buf_reset(&p->why);
	if (ln_hostlist_parse(raw, &l->hl, &p->why) < 0) {
		spec_diag(p->spec, m, "'%s': %s", key, p->why.buf);
		l->n = 0;
		return 0;
	}
	l->parsed = 1;
	l->n = l->hl.count;
cap:
	if (have + l->n > MAX_OBJECTS) {
		spec_diag(p->spec, m, "the spec expands to more than %d %s", MAX_OBJECTS, what);
		spec_lead_release(l);
	}
	return l->n;
}

int spec_lead_get(struct parser *p, struct lead *l, size_t i, enum spat pat, int *quiet,
		  const char **out)
{
	struct ln_buf *s = &p->st->scratch;
	int r;

	if (l->n <= 1) {
		*out = l->raw;
		return 0;
	}
	ln_buf_reset(s);
	r = ln_hostlist_get(&l->hl, i, s);
	if (r < 0)
		return r;
	ln_buf_reset(&p->why);
	if (spec_pattern_check(pat, l->key, s->buf, &p->why) < 0 && !*quiet) {
		spec_diag(p->spec, l->mark, "%s (from range '%.100s')", p->why.buf, l->raw);
		*quiet = 1;
	}
	*out = spec_arena_strndup(&p->st->arena, s->buf, s->len);
	return *out ? 0 : -ENOMEM;
}

void spec_lead_release(struct lead *l)
{
	if (l->parsed)
		ln_hostlist_release(&l->hl);
	l->parsed = 0;
	l->n = 0;
}

void spec_rng_init(struct parser *p, struct rng *r, const char *raw, const char *key,
		   enum spat pat, struct ln_mark mark, const struct lead *l)
{
	memset(r, 0, sizeof(*r));
	r->raw = raw;
	r->key = key;
	r->pat = pat;
	r->mark = mark;
	if (!raw || !ln_hostlist_is_range(raw))
		return;
	r->is_range = 1;
	ln_buf_reset(&p->why);
	if (ln_hostlist_parse(raw, &r->hl, &p->why) < 0) {
		spec_diag(p->spec, mark, "%s", p->why.buf);
		r->bad = 1;
		return;
	}
	if (r->hl.count != l->n) {
		if (l->n == 1 && l->raw && !ln_hostlist_is_range(l->raw))
			spec_diag(p->spec, mark,
				  "'%s' holds a range ('%.100s') but '%s' is the single '%.100s'",
				  key, raw, l->key, l->raw);
		else
			spec_diag(p->spec, mark,
				  "'%s' range '%.100s' expands to %zu values but '%s' to %zu",
				  key, raw, r->hl.count, l->key, l->n);
		r->bad = 1;
	}
}

const char *spec_rng_get(struct parser *p, struct rng *r, size_t i)
{
	struct ln_buf *s = &p->st->scratch;

	if (!r->is_range)
		return r->raw;
	if (r->bad)
		return NULL;
	ln_buf_reset(s);
	if (ln_hostlist_get(&r->hl, i, s) < 0)
		return NULL;
	ln_buf_reset(&p->why);
	if (spec_pattern_check(r->pat, r->key, s->buf, &p->why) < 0) {
		spec_diag(p->spec, r->mark, "%s (from range '%.100s')", p->why.buf, r->raw);
		r->bad = 1;	/* once per field, not once per node */
		return NULL;
	}
	return spec_arena_strndup(&p->st->arena, s->buf, s->len);
}

void spec_rng_release(struct rng *r)
{
	if (r->is_range)
		ln_hostlist_release(&r->hl);
}
