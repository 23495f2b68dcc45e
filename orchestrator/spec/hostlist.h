/* SPDX-License-Identifier: MIT */
/*
 * Host-list ranges, as Slurm and pdsh write them: "gpu[001-128]",
 * "10.0.1.[1-128]", "rack[1-2]-n[01-04,07]". A range expands to a list of
 * names without building the list: ln_hostlist_get() makes the i-th one on
 * demand, which lets the spec expand several fields of one entry in step.
 *
 * Rules: a group is "[" items "]" with items "N" or "A-B" (A <= B, decimal,
 * up to 9 digits) separated by commas; a lower bound written with leading
 * zeros sets the width every number of that item is padded to. Several
 * groups multiply, the rightmost varying fastest. At most LN_HOSTLIST_MAX
 * names.
 */
#ifndef LN_HOSTLIST_H
#define LN_HOSTLIST_H

#include <stddef.h>

#include "common/buf.h"

#define LN_HOSTLIST_MAX 65536

struct ln_hostlist_item {
	unsigned long lo, hi;
	int width;			/* zero-padding width; 0: none */
};

struct ln_hostlist_group {
	size_t prefix_off, prefix_len;	/* literal text before the group, in expr */
	struct ln_hostlist_item *items;
	size_t n_items;
	size_t count;			/* names this group contributes */
};

struct ln_hostlist {
	const char *expr;		/* borrowed: must outlive the hostlist */
	struct ln_hostlist_group *groups;
	size_t n_groups;
	size_t tail_off;		/* literal text after the last group */
	size_t count;
};

/* Does s hold a range at all (an opening bracket)? */
int ln_hostlist_is_range(const char *s);

/* Parse expr (borrowed). Returns 0, -EINVAL with a message, or -ENOMEM.
 * A string without brackets is a list of one. */
int ln_hostlist_parse(const char *expr, struct ln_hostlist *hl, struct ln_buf *err);

/* Append the i-th name (0 <= i < hl->count) to out. */
int ln_hostlist_get(const struct ln_hostlist *hl, size_t i, struct ln_buf *out);

void ln_hostlist_release(struct ln_hostlist *hl);

#endif
