/* SPDX-License-Identifier: MIT */
/*
 * The check pass's references by name: the node name and NQN indexes
 * (kept past the load for ln_spec_node_index and ln_spec_target_index),
 * a target's node, its 'hosts' entries resolved into (target, node) pairs
 * and those pairs laid out as each target's hosts[], an initiator on an
 * unknown node; a suggestion for an unknown node name (an O(nodes) scan,
 * so only while messages are still kept), and the cap on host references
 * over every target's 'hosts' list, checked before any list is expanded;
 * addresses compared as addresses (inet_pton), host names without regard
 * to case.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "orchestrator/spec/check.h"
#include "orchestrator/spec/hostlist.h"

/* ---- the name indexes ------------------------------------------------- */

/*
 * h_NAME, eq_NAME and match_NAME: the callbacks of an index of the spec's
 * ARRAY by its string member KEY (node names, target NQNs).
 */
#define SPEC_STRING_KEY(name, array, key)                                                        \
	static uint64_t h_##name(const void *c, uint32_t i)                                      \
	{                                                                                        \
		return spec_hash_str(((const struct ln_spec *)c)->array[i].key, HASH_SEED);      \
	}                                                                                        \
	static int match_##name(const void *c, uint32_t i, const void *k)                        \
	{                                                                                        \
		return spec_streq(((const struct ln_spec *)c)->array[i].key, k);                 \
	}                                                                                        \
	static int eq_##name(const void *c, uint32_t a, uint32_t b)                              \
	{                                                                                        \
		return match_##name(c, a, ((const struct ln_spec *)c)->array[b].key);            \
	}

SPEC_STRING_KEY(node_name, nodes, name)
SPEC_STRING_KEY(nqn, targets, nqn)

int spec_node_index_init(struct ln_spec *spec)
{
	return spec_idxmap_init(&spec->store->node_by_name, spec->n_nodes, h_node_name,
				eq_node_name, spec);
}

int spec_target_index_init(struct ln_spec *spec)
{
	return spec_idxmap_init(&spec->store->target_by_nqn, spec->n_targets, h_nqn, eq_nqn,
				spec);
}

long ln_spec_node_index(const struct ln_spec *spec, const char *name)
{
	if (!name)
		return -1;
	return spec_idxmap_find(&spec->store->node_by_name, spec_hash_str(name, HASH_SEED),
			   match_node_name, name);
}

long ln_spec_target_index(const struct ln_spec *spec, const char *nqn)
{
	if (!nqn)
		return -1;
	return spec_idxmap_find(&spec->store->target_by_nqn, spec_hash_str(nqn, HASH_SEED),
				match_nqn, nqn);
}

/* ---- unknown names ---------------------------------------------------- */

const char *spec_near_node(const struct ln_spec *spec, const char *name)
{
	size_t i, best = (size_t)-1, bestd = 3, len;

	/* Past the message cap a suggestion would not be shown: a spec
	 * with 65,536 unknown names must not scan every node for each. */
	if (!name || spec_diags_full(spec))
		return NULL;
	len = strlen(name);
	for (i = 0; i < spec->n_nodes && i < 65536; i++) {
		const char *a = spec->nodes[i].name, *b = name;
		size_t d = 0;

		/* a node whose name was refused, or not of the same length */
		if (!a || strlen(a) != len)
			continue;
		for (; *a && d < bestd; a++, b++)
			d += *a != *b;
		if (d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return best == (size_t)-1 ? NULL : spec->nodes[best].name;
}

int spec_check_host_refs(struct ln_spec *spec)
{
	struct ln_spec_store *st = spec->store;
	struct ln_buf why = LN_BUF_INIT;
	size_t k, total = 0, at = (size_t)-1;

	for (k = 0; k < st->n_hosts_raw; k++) {
		struct ln_hostlist hl;

		ln_buf_reset(&why);
		if (ln_hostlist_parse(st->hosts_raw[k].name, &hl, &why) < 0)
			continue;	/* reported when the list is resolved */
		total += hl.count;
		ln_hostlist_release(&hl);
		if (total > SPEC_MAX_HOST_REFS && at == (size_t)-1)
			at = k;
	}
	ln_buf_release(&why);
	if (at == (size_t)-1)
		return 0;
	spec_diag(spec, st->hosts_raw[at].mark,
		  "the targets' 'hosts' lists name %zu hosts in all, more than %u "
		  "(list fewer, or write 'hosts: any')",
		  total, SPEC_MAX_HOST_REFS);
	return 1;
}

/* ---- addresses ------------------------------------------------------- */

const char *spec_addr_canon(const char *addr, char *buf, size_t n)
{
	unsigned char bin[16];
	size_t i;

	if (!addr)
		return NULL;
	if (inet_pton(AF_INET, addr, bin) == 1)
		return inet_ntop(AF_INET, bin, buf, (socklen_t)n) ? buf : addr;
	if (inet_pton(AF_INET6, addr, bin) == 1)
		return inet_ntop(AF_INET6, bin, buf, (socklen_t)n) ? buf : addr;
	for (i = 0; addr[i] && i + 1 < n; i++)
		buf[i] = (char)tolower((unsigned char)addr[i]);
	if (addr[i])
		return addr;	/* too long to fold: as written */
	buf[i] = '\0';
	return buf;
}

int spec_addr_eq(const char *a, const char *b)
{
	char ca[SPEC_ADDR_CANON], cb[SPEC_ADDR_CANON];

	if (!a || !b)
		return 0;
	return !strcmp(spec_addr_canon(a, ca, sizeof(ca)), spec_addr_canon(b, cb, sizeof(cb)));
}

/* ---- a target's node and its hosts ----------------------------------- */

/* What one 'hosts' entry (a name or a range) held that is wrong: one
 * message each for its unknown names and its names listed twice. */
struct host_miss {
	size_t unknown, twice;
	struct ln_buf first_unknown, first_twice;
};

static void host_miss_report(struct ln_spec *spec, const struct ln_target *t,
			     const struct host_raw *h, struct host_miss *m)
{
	const char *near = NULL;

	if (m->unknown == 1)
		near = spec_near_node(spec, m->first_unknown.buf);
	if (m->unknown == 1 && near)
		spec_diag(spec, h->mark, "target '%s' allows unknown host '%.100s' (did you mean '%s'?)",
			  t->nqn, m->first_unknown.buf, near);
	else if (m->unknown == 1)
		spec_diag(spec, h->mark, "target '%s' allows unknown host '%.100s'", t->nqn,
			  m->first_unknown.buf);
	else if (m->unknown)
		spec_diag(spec, h->mark, "target '%s' allows %zu unknown hosts in '%.100s', first '%.100s'",
			  t->nqn, m->unknown, h->name, m->first_unknown.buf);
	if (m->twice == 1)
		spec_diag(spec, h->mark, "host '%s' is listed twice in target '%s'",
			  m->first_twice.buf, t->nqn);
	else if (m->twice)
		spec_diag(spec, h->mark, "%zu hosts of '%.100s' are listed twice in target '%s', first '%s'",
			  m->twice, h->name, t->nqn, m->first_twice.buf);
	m->unknown = m->twice = 0;
}

/* Note name as missed (count, and the first one kept). */
static void host_miss_note(size_t *n, struct ln_buf *first, const char *name)
{
	if (!(*n)++) {
		ln_buf_reset(first);
		ln_buf_addstr(first, name);
	}
}

int spec_resolve_hosts(struct spec_check_ctx *x, size_t ti, const struct host_raw *h, size_t nh,
		       uint32_t *stamp)
{
	struct ln_spec *spec = x->spec;
	struct ln_target *t = &spec->targets[ti];
	struct ln_buf name = LN_BUF_INIT, why = LN_BUF_INIT;
	struct host_miss miss = { 0, 0, LN_BUF_INIT, LN_BUF_INIT };
	size_t k, j;
	int r = 0;

	for (k = 0; k < nh; k++) {
		struct ln_hostlist hl;

		ln_buf_reset(&why);
		if (ln_hostlist_parse(h[k].name, &hl, &why) < 0) {
			spec_diag(spec, h[k].mark, "'hosts': %s", why.buf);
			continue;
		}
		for (j = 0; j < hl.count; j++) {
			long ni;

			ln_buf_reset(&name);
			r = ln_hostlist_get(&hl, j, &name);
			if (r < 0)
				break;
			ni = ln_spec_node_index(spec, name.buf);
			if (ni < 0) {
				host_miss_note(&miss.unknown, &miss.first_unknown, name.buf);
				continue;
			}
			if (stamp[ni] == ti + 1) {
				host_miss_note(&miss.twice, &miss.first_twice, name.buf);
				continue;
			}
			stamp[ni] = (uint32_t)(ti + 1);
			r = spec_pair_add(x, (uint32_t)ti, (uint32_t)ni);
			if (r < 0)
				break;
		}
		ln_hostlist_release(&hl);
		host_miss_report(spec, t, &h[k], &miss);
		if (r < 0)
			break;
	}
	ln_buf_release(&name);
	ln_buf_release(&why);
	ln_buf_release(&miss.first_unknown);
	ln_buf_release(&miss.first_twice);
	return r;
}

long spec_target_node(struct spec_check_ctx *x, size_t i)
{
	struct ln_spec *spec = x->spec;
	struct ln_target *t = &spec->targets[i];
	const struct target_raw *raw = &x->st->target_raw[i];
	long ni = ln_spec_node_index(spec, raw->node);

	if (raw->node && ni < 0) {
		const char *near = spec_near_node(spec, raw->node);

		if (near)
			spec_diag(spec, raw->node_mark,
				  "target '%s' is on unknown node '%s' (did you mean '%s'?)",
				  t->nqn, raw->node, near);
		else
			spec_diag(spec, raw->node_mark, "target '%s' is on unknown node '%s'",
				  t->nqn, raw->node);
	}
	if (ni >= 0)
		t->node = (size_t)ni;
	return ni;
}

/* ---- an initiator on an unknown node --------------------------------- */

static int same_mark(struct ln_mark a, struct ln_mark b)
{
	return a.line == b.line && a.col == b.col;
}

/* The initiators of one range share the node's mark: the message names
 * how many of them are on unknown nodes. */
void spec_report_unknown_init_node(struct spec_check_ctx *x, size_t i)
{
	struct ln_spec *spec = x->spec;
	const struct init_raw *raw = x->st->init_raw;
	const char *near;
	size_t j, n = 1;

	if (same_mark(x->unknown_init_mark, raw[i].node_mark))
		return;
	x->unknown_init_mark = raw[i].node_mark;
	for (j = i + 1; j < spec->n_initiators && same_mark(raw[j].node_mark, raw[i].node_mark);
	     j++)
		n += ln_spec_node_index(spec, raw[j].node) < 0;
	near = n == 1 ? spec_near_node(spec, raw[i].node) : NULL;
	if (n > 1)
		spec_diag(spec, raw[i].node_mark, "%zu initiators are on unknown nodes, first '%.100s'",
			  n, raw[i].node);
	else if (near)
		spec_diag(spec, raw[i].node_mark,
			  "initiator is on unknown node '%.100s' (did you mean '%s'?)", raw[i].node,
			  near);
	else
		spec_diag(spec, raw[i].node_mark, "initiator is on unknown node '%.100s'", raw[i].node);
}

/* ---- (target, node) host pairs --------------------------------------- */

int spec_pair_add(struct spec_check_ctx *x, uint32_t t, uint32_t n)
{
	if (x->n_pairs == x->alloc_pairs) {
		size_t na = x->alloc_pairs ? x->alloc_pairs * 2 : 64;
		uint32_t *a = realloc(x->pair_t, na * sizeof(*a));

		if (!a)
			return -ENOMEM;
		x->pair_t = a;
		a = realloc(x->pair_n, na * sizeof(*a));
		if (!a)
			return -ENOMEM;
		x->pair_n = a;
		x->alloc_pairs = na;
	}
	x->pair_t[x->n_pairs] = t;
	x->pair_n[x->n_pairs] = n;
	x->n_pairs++;
	return 0;
}

/* Lay every target's hosts out in one array, by a counting sort of the
 * (target, node) pairs: explicit lists in written order, defaults in
 * initiator order. */
int spec_layout_hosts(struct spec_check_ctx *x)
{
	struct ln_spec *spec = x->spec;
	size_t *start, i;

	start = calloc(spec->n_targets + 1, sizeof(*start));
	x->st->host_idx = malloc((x->n_pairs + 1) * sizeof(*x->st->host_idx));
	if (!start || !x->st->host_idx) {
		free(start);
		return -ENOMEM;
	}
	for (i = 0; i < x->n_pairs; i++)
		spec->targets[x->pair_t[i]].n_hosts++;
	for (i = 0; i < spec->n_targets; i++) {
		start[i + 1] = start[i] + spec->targets[i].n_hosts;
		spec->targets[i].hosts =
			spec->targets[i].n_hosts ? &x->st->host_idx[start[i]] : NULL;
	}
	for (i = 0; i < x->n_pairs; i++)
		x->st->host_idx[start[x->pair_t[i]]++] = x->pair_n[i];
	free(start);
	return 0;
}
