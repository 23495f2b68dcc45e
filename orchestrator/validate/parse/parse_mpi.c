/* SPDX-License-Identifier: MIT */
/*
 * Parser for llmnet's MPI probe output as mpirun relays it. The probe
 * (agents/probes/mpi_probe.c) prints, from rank 0 only:
 *   llmnet-mpi-probe 1
 *   ranks N
 *   rank R host NAME          (one per rank, gathered by rank 0)
 *   allreduce elements E seconds S result ok|wrong
 *   result pass|fail
 * mpirun adds its own lines around them (help banners, ORTE errors), which
 * are skipped, but the first of them that reads as an error becomes the
 * reason when the probe's result is missing.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "orchestrator/validate/parse/parse.h"

void ln_mpi_probe_release(struct ln_mpi_probe *p)
{
	long i;

	if (p->hosts)
		for (i = 0; i < p->ranks; i++)
			free(p->hosts[i]);
	free(p->hosts);
	memset(p, 0, sizeof(*p));
}

int ln_parse_mpi(const char *text, size_t len, struct ln_mpi_probe *out, struct ln_buf *err)
{
	struct ln_lines it;
	char line[512];
	int seen_magic = 0, seen_result = 0, seen_allreduce = 0, result_pass = 0;
	int r = -LN_EPROTO;

	memset(out, 0, sizeof(*out));
	out->ranks = -1;
	ln_lines_init(&it, text, len);
	while (ln_lines_next_copy(&it, line, sizeof(line))) {
		char word[16], host[256];
		long a;
		double s;

		if (!strcmp(line, "llmnet-mpi-probe 1")) {
			seen_magic = 1;
			continue;
		}
		if (!seen_magic)
			continue;
		if (sscanf(line, "ranks %ld", &a) == 1 && out->ranks < 0) {
			if (a < 1 || a > 1000000)
				continue;
			out->ranks = a;
			out->hosts = calloc((size_t)a, sizeof(*out->hosts));
			if (!out->hosts) {
				r = -ENOMEM;
				goto fail;
			}
		} else if (sscanf(line, "rank %ld host %255s", &a, host) == 2) {
			if (out->hosts && a >= 0 && a < out->ranks && !out->hosts[a]) {
				out->hosts[a] = strdup(host);
				if (!out->hosts[a]) {
					r = -ENOMEM;
					goto fail;
				}
			}
		} else if (sscanf(line, "allreduce elements %ld seconds %lf result %15s", &a, &s,
				  word) == 3) {
			if (!isfinite(s) || s < 0)
				continue;
			seen_allreduce = 1;
			out->elements = a;
			out->seconds = s;
			out->allreduce_ok = !strcmp(word, "ok");
		} else if (sscanf(line, "result %15s", word) == 1) {
			seen_result = 1;
			result_pass = !strcmp(word, "pass");
		}
	}
	if (seen_magic && seen_result && seen_allreduce && out->ranks > 0) {
		long i;

		for (i = 0; i < out->ranks; i++)
			if (!out->hosts[i]) {
				ln_buf_addf(err, "the mpi probe did not report rank %ld's host", i);
				goto fail;
			}
		out->pass = result_pass;
		return 0;
	}
	ln_parse_no_result(text, len, "mpi probe",
			   seen_magic ? "the output is truncated" : "the probe printed nothing", err);
fail:
	if (r == -ENOMEM)
		ln_buf_addstr(err, "cannot parse the mpi probe output: out of memory");
	ln_mpi_probe_release(out);
	return r;
}
