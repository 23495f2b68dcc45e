/* SPDX-License-Identifier: MIT */
/*
 * Node names as the operator gives them to --limit and --accept-replaced:
 * names, host-list ranges ("gpu[001-064]", orchestrator/spec/hostlist.h)
 * and "@FILE", a file of such words (Ansible's retry-file convention: one
 * or more per line, separated by commas or blanks, "#" starts a comment).
 */
#ifndef LN_NODESET_H
#define LN_NODESET_H

#include <stddef.h>

#include "common/buf.h"
#include "orchestrator/spec/spec.h"

/*
 * Set mark[i] to 1 for every node of spec the words name. option names
 * the option in messages. A name that is not a node of spec, a bad range,
 * an unreadable file, or a file that names no node is -EINVAL with the
 * reason in err; mark may then be partly set.
 */
int ln_nodeset_mark(const struct ln_spec *spec, const char *option, char *const *words,
		    size_t n, unsigned char *mark, struct ln_buf *err);

/*
 * The nodes with mark[i] set as words ln_nodeset_mark() reads back, ranges
 * where names share a prefix ("gpu[001-003,007] n4"), separated by blanks,
 * appended to out. Returns 0 or -ENOMEM.
 */
int ln_nodeset_format(const struct ln_spec *spec, const unsigned char *mark, struct ln_buf *out);

#endif
