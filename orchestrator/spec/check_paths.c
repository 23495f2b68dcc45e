/* SPDX-License-Identifier: MIT */
/*
 * The check pass's rules on what llmnet writes on a node's file system:
 * a namespace mounted by one node only (ext4 and xfs are single-host file
 * systems), and the hostfile, backing files and mount points kept apart,
 * none equal to, inside or above another on the same node. Called from
 * check.c once references are resolved; linear but for one sort.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/spec/impl.h"

/* ---- one node per mounted namespace ----------------------------------- */

int spec_mounters_init(struct spec_mounters *m, size_t n_targets)
{
	m->first = calloc(n_targets + 1, sizeof(*m->first));
	m->second = calloc(n_targets + 1, sizeof(*m->second));
	m->count = calloc(n_targets + 1, sizeof(*m->count));
	m->n_targets = n_targets;
	if (!m->first || !m->second || !m->count)
		return -ENOMEM;
	return 0;
}

void spec_mounters_add(struct spec_mounters *m, size_t ti, size_t ii)
{
	if (!m->count[ti]++)
		m->first[ti] = (uint32_t)ii;
	else if (m->count[ti] == 2)
		m->second[ti] = (uint32_t)ii;
}

/*
 * Two nodes mounting one namespace read-write each keep their own idea of
 * the file system's allocation and journal: ext4 and xfs corrupt, and
 * with `format: if-blank` each node may even make the file system on a
 * blank device at once. One message per target, at the second mount.
 */
void spec_mounters_report(struct spec_mounters *m, struct ln_spec *spec)
{
	size_t ti;

	for (ti = 0; ti < m->n_targets; ti++) {
		const struct ln_initiator *a, *b;
		char more[48] = "";

		if (m->count[ti] < 2)
			continue;
		a = &spec->initiators[m->first[ti]];
		b = &spec->initiators[m->second[ti]];
		if (m->count[ti] > 2)
			snprintf(more, sizeof(more), " and %u more", m->count[ti] - 2);
		spec_diag(spec, b->mount.mark,
			  "target '%s' is mounted on %u nodes ('%s' on line %u, '%s'%s): %s is a "
			  "single-host file system, so nodes mounting one namespace at once corrupt "
			  "it%s; mount it on one node",
			  spec->targets[ti].nqn, m->count[ti], spec->nodes[a->node].name,
			  a->mount.mark.line, spec->nodes[b->node].name, more,
			  b->mount.fs ? b->mount.fs : "the file system",
			  a->mount.format == LN_FORMAT_IF_BLANK ||
					  b->mount.format == LN_FORMAT_IF_BLANK ?
				  ", and with 'format: if-blank' each may format it" : "");
	}
}

void spec_mounters_release(struct spec_mounters *m)
{
	free(m->first);
	free(m->second);
	free(m->count);
}
