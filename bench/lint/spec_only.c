/* SPDX-License-Identifier: MIT */
/*
 * The spec module alone: ln_spec_load() on a file, in a binary linked
 * with only what the parser needs (libyaml, json-c), so the benchmark can
 * tell the parser's cost from the llmnet binary's start-up cost (its
 * other libraries: libssh, libcurl and their dependencies).
 *   spec_only FILE
 */
#include <stdio.h>

#include "common/buf.h"
#include "orchestrator/spec/spec.h"

int main(int argc, char **argv)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_spec *spec = NULL;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: spec_only FILE\n");
		return 64;
	}
	r = ln_spec_load(argv[1], &spec, &err);
	if (r < 0) {
		fputs(err.buf, stderr);
		return 3;
	}
	printf("%zu nodes\n", spec->n_nodes);
	ln_spec_free(spec);
	ln_buf_release(&err);
	return 0;
}
