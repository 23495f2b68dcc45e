/* SPDX-License-Identifier: MIT */
/*
 * The spec's second pass: defaults that depend on other sections (a
 * node's SSH port and user, a target's address, a target's hosts),
 * references by name (targets and initiators to nodes, initiators to
 * targets), duplicates, and the rules that span objects. This file is the
 * driver: it runs the rules in order, one file per concept (check.h), and
 * none of them calls back into it. Every duplicate check is a hash set or
 * a sort, so the pass stays linear (n log n at worst) in the size of the
 * spec; nothing compares all pairs.
 */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "orchestrator/spec/check.h"

/* The rules of one concept that take the spec alone, as passes. */
static int check_tls(struct spec_check_ctx *x)
{
	return spec_check_tls(x->spec);
}

static int check_settings(struct spec_check_ctx *x)
{
	return spec_check_settings(x->spec);
}

static int check_paths(struct spec_check_ctx *x)
{
	return spec_check_paths(x->spec);
}

int spec_check(struct ln_spec *spec)
{
	/* in this order: each pass uses what the ones before it resolved */
	static int (*const passes[])(struct spec_check_ctx *x) = {
		spec_check_nodes, spec_check_targets, spec_check_initiators, spec_layout_hosts,
		spec_check_dhchap, check_tls, check_settings, check_paths, spec_check_slurm,
	};
	struct spec_check_ctx x;
	size_t i;
	int r;

	memset(&x, 0, sizeof(x));
	x.spec = spec;
	x.st = spec->store;
	for (i = 0; i < ARRAY_SIZE(passes); i++) {
		r = passes[i](&x);
		if (r < 0)
			goto out;
	}
	spec_check_validation(spec);
	spec_check_stage_rules(spec);
	spec_check_rails(spec);
	r = spec_check_pairs(spec);
	if (r < 0)
		goto out;
	r = 0;
out:
	free(x.pair_t);
	free(x.pair_n);
	return r;
}
