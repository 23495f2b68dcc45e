/* SPDX-License-Identifier: MIT */
/*
 * NCCL result parser, for two producers:
 *  - llmnet's probe (agents/probes/nccl_mpi_probe.c), which prints
 *      llmnet-nccl-probe 2
 *      op OP ranks N bytes B
 *      size B time_us T algbw A busbw U wrong W      (each size)
 *      wrong rank R host H device D size B elements W first E got X want Y
 *      result pass|fail
 *    with "error: ..." lines, and "result notrun" when NCCL, the CUDA
 *    runtime or a GPU is missing (not_run set, reason from the error);
 *  - nccl-tests' OP_perf text report (every op alike; across nodes the
 *    "# Rank" lines name each rank's host): '#' comment lines, then one
 *    row per size: size count type redop [root] followed by out-of-place
 *    and in-place groups of (time algbw busbw #wrong). Older releases have
 *    no root column, so the groups are read from the right. #wrong is
 *    "N/A" when the run was started without -c 1 (no check), and printed
 *    with %g (1.04858e+06) when large. Every size's #wrong, both groups,
 *    must be 0 for a correct result.
 * The largest size is the one judged. Bandwidths are GB/s (10^9 B/s).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "orchestrator/validate/parse/parse.h"

double ln_nccl_busbw(const char *op, double algbw, long ranks)
{
	double share = ranks > 0 ? (double)(ranks - 1) / (double)ranks : 0.0;

	if (!strcmp(op, "all_reduce"))
		return algbw * 2.0 * share;
	if (!strcmp(op, "all_gather") || !strcmp(op, "reduce_scatter"))
		return algbw * share;
	return algbw;
}

/* A size's row, kept in out->sizes (the largest, last, is judged). */
static void add_size(struct ln_nccl *out, const struct ln_nccl_size *sz)
{
	if (out->nsizes < LN_NCCL_MAX_SIZES)
		out->sizes[out->nsizes++] = *sz;
}

static void parse_probe_line(const char *line, struct ln_nccl *out, int *seen_result,
			     int *pass)
{
	struct ln_nccl_wrong w;
	struct ln_nccl_size sz;
	long ranks;
	unsigned long long bytes, wsize;
	char word[16];

	if (sscanf(line, "op %15s ranks %ld bytes %llu", out->op, &ranks, &bytes) == 3) {
		out->ranks = ranks;
		out->bytes = bytes;
	} else if (sscanf(line, "size %llu time_us %lf algbw %lf busbw %lf wrong %ld", &bytes,
			  &sz.time_us, &sz.algbw, &sz.busbw, &sz.wrong) == 5) {
		/* inf/nan: not a result (no threshold judges it, not JSON) */
		if (!isfinite(sz.time_us) || !isfinite(sz.algbw) || !isfinite(sz.busbw))
			return;
		sz.bytes = bytes;
		add_size(out, &sz);
		out->bytes = bytes;
		out->time_us = sz.time_us;
		out->algbw = sz.algbw;
		out->busbw = sz.busbw;
		out->wrong = (out->nsizes > 1 ? out->wrong : 0) + sz.wrong;
		out->correct = out->wrong == 0;
	} else if (sscanf(line, "wrong rank %ld host %255s device %d size %llu elements %ld "
			  "first %ld got %lf want %lf", &w.rank, w.host, &w.device, &wsize,
			  &w.elements, &w.first, &w.got, &w.want) == 8) {
		w.size = wsize;
		if (out->nwrong < LN_NCCL_MAX_WRONG)
			out->wrongs[out->nwrong] = w;
		out->nwrong++;
	} else if (sscanf(line, "result %15s", word) == 1) {
		*seen_result = 1;
		*pass = !strcmp(word, "pass");
		out->not_run = !strcmp(word, "notrun");
	} else if (!strncmp(line, "error: ", 7) && !out->reason[0]) {
		snprintf(out->reason, sizeof(out->reason), "%.255s", line + 7);
	}
}

/* "#  Rank R Group G Pid P on HOST device D ...": HOST kept once (a
 * host name too long to keep counts, unnamed). */
static void add_rank_host(const char *line, struct ln_nccl *out)
{
	char host[256];
	long rank, group, pid;
	size_t k;

	if (sscanf(line, "# Rank %ld Group %ld Pid %ld on %255s device", &rank, &group, &pid,
		   host) != 4)
		return;
	for (k = 0; k < out->nhosts && k < LN_NCCL_MAX_HOSTS; k++)
		if (!strcmp(out->hosts[k], host))
			return;
	if (out->nhosts < LN_NCCL_MAX_HOSTS)
		snprintf(out->hosts[out->nhosts], sizeof(out->hosts[0]), "%.63s", host);
	out->nhosts++;
}

/* One OP_perf data row; returns 0 when it is one. */
static int parse_tests_row(const char *line, struct ln_nccl *row)
{
	char copy[512], *tok[32], *save = NULL, *t, *end;
	int n = 0;
	double w1, w2;

	if (strlen(line) >= sizeof(copy))
		return -1;
	strcpy(copy, line);
	for (t = strtok_r(copy, " \t", &save); t && n < 32; t = strtok_r(NULL, " \t", &save))
		tok[n++] = t;
	if (n < 10 || !isdigit((unsigned char)tok[0][0]))
		return -1;
	errno = 0;
	row->bytes = strtoull(tok[0], &end, 10);
	if (*end || errno)
		return -1;
	/* out-of-place: n-8..n-5, in-place: n-4..n-1 */
	row->time_us = strtod(tok[n - 8], &end);
	if (*end)
		return -1;
	row->algbw = strtod(tok[n - 7], &end);
	if (*end)
		return -1;
	row->busbw = strtod(tok[n - 6], &end);
	if (*end)
		return -1;
	if (!isfinite(row->time_us) || !isfinite(row->algbw) || !isfinite(row->busbw))
		return -1;
	if (!strcmp(tok[n - 5], "N/A") || !strcmp(tok[n - 1], "N/A")) {
		row->wrong = -1;
	} else {
		/* printed with %g: a large count reads 1.04858e+06 */
		w1 = strtod(tok[n - 5], &end);
		if (*end || !(w1 >= 0 && w1 < 1e15))
			return -1;
		w2 = strtod(tok[n - 1], &end);
		if (*end || !(w2 >= 0 && w2 < 1e15))
			return -1;
		row->wrong = (long)(w1 + w2);
	}
	return 0;
}

int ln_parse_nccl(const char *text, size_t len, struct ln_nccl *out, struct ln_buf *err)
{
	struct ln_lines it;
	char line[512];
	int probe = 0, seen_result = 0, pass = 0, rows = 0, oob_ok = -1;
	struct ln_nccl best;

	memset(out, 0, sizeof(*out));
	memset(&best, 0, sizeof(best));
	out->ranks = -1;
	out->wrong = -1;
	ln_lines_init(&it, text, len);
	while (ln_lines_next_copy(&it, line, sizeof(line))) {
		const char *s;
		long v;

		if (!strcmp(line, "llmnet-nccl-probe 2")) {
			probe = 1;
			continue;
		}
		if (probe) {
			parse_probe_line(line, out, &seen_result, &pass);
			continue;
		}
		for (s = line; isspace((unsigned char)*s); s++)
			;
		if (*s == '#') {
			/* The ranks listed under "# Using devices" give
			 * the rank count. */
			if (sscanf(s, "# Rank %ld", &v) == 1 && v >= 0 && v < (1l << 24)) {
				out->ranks = out->ranks < v + 1 ? v + 1 : out->ranks;
				add_rank_host(s, out);
			}
			else if (strstr(s, "Out of bounds values"))
				oob_ok = strstr(s, "OK") != NULL;
			continue;
		}
		{
			struct ln_nccl row = best;

			if (parse_tests_row(s, &row) == 0) {
				struct ln_nccl_size sz = { row.bytes, row.time_us, row.algbw,
							   row.busbw, row.wrong };

				add_size(out, &sz);
				rows++;
				if (row.bytes >= best.bytes)
					best = row;
			}
		}
	}
	if (probe) {
		if (seen_result && out->not_run)
			return 0;
		if (seen_result && out->ranks > 0 && out->time_us > 0) {
			if (!pass && out->correct)
				out->correct = 0;
			return 0;
		}
		return ln_parse_no_result(text, len, "nccl", "the probe's output is truncated", err);
	}
	if (rows) {
		long ranks = out->ranks, wrong = 0;
		size_t k;

		/* every size's out-of-place and in-place #wrong must be 0 */
		for (k = 0; k < out->nsizes && wrong >= 0; k++)
			wrong = out->sizes[k].wrong < 0 ? -1 : wrong + out->sizes[k].wrong;
		memcpy(best.sizes, out->sizes, sizeof(best.sizes));
		best.nsizes = out->nsizes;
		memcpy(best.hosts, out->hosts, sizeof(best.hosts));
		best.nhosts = out->nhosts;
		*out = best;
		out->ranks = ranks;
		out->from_nccl_tests = 1;
		out->wrong = wrong;
		out->correct = wrong == 0 && oob_ok != 0;
		return 0;
	}
	return ln_parse_no_result(text, len, "nccl",
				  len ? "no data row in the output" : "the output is empty", err);
}
