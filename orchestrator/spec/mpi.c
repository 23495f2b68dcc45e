/* SPDX-License-Identifier: MIT */
/*
 * The mpi section's one special key, mca: a mapping of Open MPI
 * parameters to values, each name and value checked against its pattern
 * (both reach mpirun's command line).
 */
#include <errno.h>
#include <string.h>

#include "orchestrator/spec/parser.h"

int spec_parse_mca(struct parser *p, const struct field *f, void *obj)
{
	struct ln_mpi_spec *mpi = obj;
	struct ln_spec_store *st = p->st;

	if (p->ev.type != YAML_MAPPING_START_EVENT) {
		spec_diag(p->spec, spec_ev_mark(p),
			  "'%s' takes a mapping of parameter: value, not %s", f->key, spec_kind(p));
		return spec_skip_node(p);
	}
	for (;;) {
		struct ln_mca *mca;
		struct ln_mark km;
		const char *k, *v;

		if (spec_next(p) < 0)
			return -1;
		if (p->ev.type == YAML_MAPPING_END_EVENT)
			return 0;
		km = spec_ev_mark(p);
		if (p->ev.type != YAML_SCALAR_EVENT) {
			spec_diag(p->spec, km, "an mca key must be a name, not %s", spec_kind(p));
			if (spec_skip_pair(p) < 0)
				return -1;
			continue;
		}
		mca = GROW(st->mca, mpi->n_mca, st->alloc_mca);
		if (!mca)
			return -ENOMEM;
		k = spec_arena_strndup(&st->arena, (const char *)p->ev.data.scalar.value,
				       p->ev.data.scalar.length);
		if (!k)
			return -ENOMEM;
		mca->key = k;
		mca->mark = km;
		ln_buf_reset(&p->why);
		if (spec_pattern_check(SP_MCA_KEY, "mca", k, &p->why) < 0)
			spec_diag(p->spec, km, "%s", p->why.buf);
		if (spec_next(p) < 0)
			return -1;
		if (p->ev.type != YAML_SCALAR_EVENT) {
			spec_diag(p->spec, spec_ev_mark(p),
				  "mca '%.100s' takes a single value, not %s", k, spec_kind(p));
			if (spec_skip_node(p) < 0)
				return -1;
			continue;
		}
		v = spec_arena_strndup(&st->arena, (const char *)p->ev.data.scalar.value,
				       p->ev.data.scalar.length);
		if (!v)
			return -ENOMEM;
		mca->value = v;
		ln_buf_reset(&p->why);
		if (strlen(v) != p->ev.data.scalar.length ||
		    spec_pattern_check(SP_MCA_VALUE, k, v, &p->why) < 0) {
			if (!p->why.len)
				ln_buf_addf(&p->why, "mca value for '%.100s' holds a NUL byte", k);
			spec_diag(p->spec, spec_ev_mark(p), "%s", p->why.buf);
		}
		mpi->n_mca++;
	}
}
