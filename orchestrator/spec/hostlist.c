/* SPDX-License-Identifier: MIT */
/*
 * Host-list range parsing and on-demand expansion (see hostlist.h). The
 * parser checks the whole expression up front (balanced brackets, bounds
 * in order, total count under the cap), so expansion cannot fail except
 * for memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/spec/hostlist.h"

int ln_hostlist_is_range(const char *s)
{
	return strchr(s, '[') != NULL;
}

void ln_hostlist_release(struct ln_hostlist *hl)
{
	size_t i;

	for (i = 0; i < hl->n_groups; i++)
		free(hl->groups[i].items);
	free(hl->groups);
	memset(hl, 0, sizeof(*hl));
}

/* Read up to 9 decimal digits at *p. */
static int read_num(const char **p, unsigned long *v, int *ndigits)
{
	const char *s = *p;
	unsigned long n = 0;
	int d = 0;

	while (*s >= '0' && *s <= '9') {
		if (++d > 9)
			return -2;
		n = n * 10 + (unsigned long)(*s - '0');
		s++;
	}
	if (!d)
		return -1;
	*p = s;
	*v = n;
	*ndigits = d;
	return 0;
}

static int parse_group(const char *expr, const char **pp, struct ln_hostlist_group *g,
		       struct ln_buf *err)
{
	const char *p = *pp + 1;	/* past '[' */
	size_t alloc = 0;
	int r;

	for (;;) {
		struct ln_hostlist_item it;
		int dlo, dhi;

		r = read_num(&p, &it.lo, &dlo);
		if (r < 0)
			goto badnum;
		it.hi = it.lo;
		it.width = (dlo > 1 && p[-dlo] == '0') ? dlo : 0;
		if (*p == '-') {
			p++;
			r = read_num(&p, &it.hi, &dhi);
			if (r < 0)
				goto badnum;
			if (it.hi < it.lo) {
				ln_buf_addf(err, "cannot expand range '%s': %lu-%lu runs backwards",
					    expr, it.lo, it.hi);
				return -EINVAL;
			}
		}
		if (it.hi - it.lo + 1 > LN_HOSTLIST_MAX ||
		    g->count + (it.hi - it.lo + 1) > LN_HOSTLIST_MAX)
			goto toomany;
		if (g->n_items == alloc) {
			struct ln_hostlist_item *n;

			alloc = alloc ? alloc * 2 : 4;
			n = realloc(g->items, alloc * sizeof(*n));
			if (!n)
				return -ENOMEM;
			g->items = n;
		}
		g->items[g->n_items++] = it;
		g->count += it.hi - it.lo + 1;
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == ']')
			break;
		ln_buf_addf(err, "cannot expand range '%s': expected ',' or ']' at offset %zu",
			    expr, (size_t)(p - expr));
		return -EINVAL;
	}
	*pp = p + 1;
	return 0;
badnum:
	ln_buf_addf(err, "cannot expand range '%s': %s at offset %zu", expr,
		    r == -2 ? "a number longer than 9 digits" : "expected a number",
		    (size_t)(p - expr));
	return -EINVAL;
toomany:
	ln_buf_addf(err, "cannot expand range '%s': more than %d names", expr, LN_HOSTLIST_MAX);
	return -EINVAL;
}

int ln_hostlist_parse(const char *expr, struct ln_hostlist *hl, struct ln_buf *err)
{
	const char *p = expr, *lit = expr;
	size_t alloc = 0;
	int r;

	memset(hl, 0, sizeof(*hl));
	hl->expr = expr;
	hl->count = 1;
	while (*p) {
		struct ln_hostlist_group *g;

		if (*p == ']') {
			ln_buf_addf(err, "cannot expand range '%s': ']' without '['", expr);
			r = -EINVAL;
			goto fail;
		}
		if (*p != '[') {
			p++;
			continue;
		}
		if (hl->n_groups == alloc) {
			struct ln_hostlist_group *n;

			alloc = alloc ? alloc * 2 : 2;
			n = realloc(hl->groups, alloc * sizeof(*n));
			if (!n) {
				r = -ENOMEM;
				goto fail;
			}
			hl->groups = n;
		}
		g = &hl->groups[hl->n_groups++];
		memset(g, 0, sizeof(*g));
		g->prefix_off = (size_t)(lit - expr);
		g->prefix_len = (size_t)(p - lit);
		r = parse_group(expr, &p, g, err);
		if (r < 0)
			goto fail;
		if (hl->count * g->count > LN_HOSTLIST_MAX) {
			ln_buf_addf(err, "cannot expand range '%s': more than %d names", expr,
				    LN_HOSTLIST_MAX);
			r = -EINVAL;
			goto fail;
		}
		hl->count *= g->count;
		lit = p;
	}
	hl->tail_off = (size_t)(lit - expr);
	return 0;
fail:
	ln_hostlist_release(hl);
	return r;
}

int ln_hostlist_get(const struct ln_hostlist *hl, size_t i, struct ln_buf *out)
{
	size_t stride = hl->count, gi, orig = out->len;
	int r;

	for (gi = 0; gi < hl->n_groups; gi++) {
		const struct ln_hostlist_group *g = &hl->groups[gi];
		size_t j, k;

		stride /= g->count;
		j = (i / stride) % g->count;
		r = ln_buf_add(out, hl->expr + g->prefix_off, g->prefix_len);
		if (r < 0)
			goto fail;
		for (k = 0; k < g->n_items; k++) {
			size_t n = g->items[k].hi - g->items[k].lo + 1;

			if (j < n)
				break;
			j -= n;
		}
		r = ln_buf_addf(out, "%0*lu", g->items[k].width, g->items[k].lo + j);
		if (r < 0)
			goto fail;
	}
	r = ln_buf_addstr(out, hl->expr + hl->tail_off);
	if (r < 0)
		goto fail;
	return 0;
fail:
	ln_buf_setlen(out, orig);
	return r;
}
