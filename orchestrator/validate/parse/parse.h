/* SPDX-License-Identifier: MIT */
/*
 * Parsers for the text that probes print: perftest 4.5 (no JSON in that
 * version; bandwidth and latency reports), rping, llmnet's MPI probe under mpirun, llmnet's NCCL probe and
 * nccl-tests' all_reduce_perf. Each parser takes the captured output (and
 * where it matters the exit status), fills a plain result struct, and
 * returns 0, or -LN_EPROTO with a message quoting the tool's own error line
 * when there is one, so that "no result" can never read as a pass.
 */
#ifndef LN_VALIDATE_PARSE_H
#define LN_VALIDATE_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/* ---- the line reader all parsers share ---- */

/* Lines of a bounded text (not NUL-terminated), in order. */
struct ln_lines {
	const char *p, *end;
};

void ln_lines_init(struct ln_lines *it, const char *text, size_t len);
/* The next line as a span: *line, *n bytes without the newline; *complete
 * (may be NULL) is 0 for a last line that lost its newline. Returns 0
 * when the text is done. */
int ln_lines_next(struct ln_lines *it, const char **line, size_t *n, int *complete);
/* The next complete line copied into dst (size dstsz > 0), cut to fit and
 * NUL-terminated. Returns 0 when the text is done or its last line has
 * no newline: a line cut short is not trusted. */
int ln_lines_next_copy(struct ln_lines *it, char *dst, size_t dstsz);

/* ---- perftest (ib_write_bw, ib_send_bw) ---- */

struct ln_perftest_row {
	uint64_t bytes;
	uint64_t iterations;
	double bw_peak;		/* in the report's unit */
	double bw_avg;
	double msg_rate;	/* Mpps */
};

struct ln_perftest {
	int gbits;		/* 1: Gb/sec (--report_gbits), 0: MB/sec (2^20 bytes) */
	int has_header;		/* the result header was seen */
	struct ln_perftest_row *rows;
	size_t nrows;
};

/* Parse a perftest text report. Returns 0 with at least one row;
 * -LN_EPROTO when the header or every data line is missing (an empty,
 * truncated or failed run), with the tool's error line in err if any. */
int ln_parse_perftest(const char *text, size_t len, struct ln_perftest *out, struct ln_buf *err);
void ln_perftest_release(struct ln_perftest *p);
/* The row with the largest message size (the one thresholds judge). */
const struct ln_perftest_row *ln_perftest_large(const struct ln_perftest *p);
/* A row's average bandwidth in Gb/s (10^9 bit/s), whatever the unit. */
double ln_perftest_gbps(const struct ln_perftest *p, const struct ln_perftest_row *row);

/* ---- perftest latency (ib_write_lat, ib_send_lat) ---- */

/* The largest message size's row, in microseconds; a column the report
 * does not have is NAN (t_typical, t_avg and 99% percentile always are). */
struct ln_perftest_lat {
	uint64_t bytes;
	uint64_t iterations;
	double t_min, t_max;
	double typical;		/* t_typical: perftest's median */
	double avg;		/* t_avg */
	double stdev;
	double p99;		/* 99% percentile */
	double p999;		/* 99.9% percentile */
};

/* Parse a perftest latency report by its column names. Returns 0 with a
 * row; -LN_EPROTO when the header, a reported column or every data line
 * is missing, with the tool's error line in err if any. */
int ln_parse_perftest_lat(const char *text, size_t len, struct ln_perftest_lat *out,
			  struct ln_buf *err);

/* ---- rping ---- */

struct ln_rping {
	int ok;			/* exit 0 and no error line */
	long pings;		/* "ping data" lines seen (only with -v), else -1 */
	char reason[256];	/* first error line, or "exit status N" */
};

/* Judge an rping run from its exit status and output. Never fails. */
void ln_parse_rping(int exit_status, const char *text, size_t len, struct ln_rping *out);

/* ---- llmnet MPI probe (agents/probes/mpi_probe.c) under mpirun ---- */

struct ln_mpi_probe {
	long ranks;		/* world size the probe saw */
	char **hosts;		/* hosts[rank], ranks entries */
	int allreduce_ok;
	int pass;		/* the probe's own verdict (also checks --expect-ranks) */
	double seconds;		/* one allreduce, slowest rank */
	long elements;
};

/* Parse the probe's lines ("llmnet-mpi-probe 1", "rank R host H", ...).
 * -LN_EPROTO when the probe's result is missing; the message quotes the
 * first mpirun/ORTE error line found. */
int ln_parse_mpi(const char *text, size_t len, struct ln_mpi_probe *out, struct ln_buf *err);
void ln_mpi_probe_release(struct ln_mpi_probe *p);

/* ---- NCCL: llmnet's probe and nccl-tests' all_reduce_perf ---- */

#define LN_NCCL_MAX_SIZES 40	/* 4 B to 64 GiB, doubling */
#define LN_NCCL_MAX_WRONG 8	/* wrong ranks kept (nwrong counts them all) */
#define LN_NCCL_MAX_HOSTS 64	/* nccl-tests' rank hosts kept */

/* One size's figures, as nccl-tests prints a row. */
struct ln_nccl_size {
	uint64_t bytes;
	double time_us;
	double algbw;		/* GB/s (10^9 bytes/s) */
	double busbw;		/* GB/s */
	long wrong;		/* wrong elements; -1 not checked */
};

/* A rank that received a wrong element (the probe's "wrong rank" line). */
struct ln_nccl_wrong {
	long rank;
	char host[256];
	int device;
	uint64_t size;		/* at this size */
	long elements, first;	/* how many, the first one's index */
	double got, want;
};

struct ln_nccl {
	int from_nccl_tests;	/* 1: all_reduce_perf output, 0: llmnet's probe */
	char op[16];		/* the probe's collective ("" from nccl-tests) */
	long ranks;		/* -1 when unknown */
	uint64_t bytes;		/* the largest size measured: the one judged */
	double time_us;
	double algbw;		/* GB/s (10^9 bytes/s) */
	double busbw;		/* GB/s */
	long wrong;		/* wrong elements, all sizes; 0 means checked and correct */
	int correct;		/* result verified */
	int not_run;		/* the probe could not run (no NCCL, no GPU) */
	char reason[256];	/* the probe's first "error: " line */
	struct ln_nccl_size sizes[LN_NCCL_MAX_SIZES];	/* smallest first */
	size_t nsizes;
	struct ln_nccl_wrong wrongs[LN_NCCL_MAX_WRONG];
	size_t nwrong;		/* wrong rank lines seen (may exceed the kept) */
	/* nccl-tests: the hosts its "# Rank R ... on HOST device D" lines
	 * name, each once, in order (at most LN_NCCL_MAX_HOSTS kept; nhosts
	 * counts them all) */
	char hosts[LN_NCCL_MAX_HOSTS][64];
	size_t nhosts;
};

int ln_parse_nccl(const char *text, size_t len, struct ln_nccl *out, struct ln_buf *err);

/* busbw of collective op (its name) over ranks, as nccl-tests defines
 * it: all_reduce algbw x 2(n-1)/n, all_gather and reduce_scatter
 * algbw x (n-1)/n (0 for a single rank: nothing crosses a bus),
 * broadcast and reduce algbw. */
double ln_nccl_busbw(const char *op, double algbw, long ranks);

/* Copy the first line of text that looks like an error into dst (size
 * dstsz), trimmed; returns 1 if one was found. Shared by the parsers
 * (lines.c). */
int ln_parse_error_line(const char *text, size_t len, char *dst, size_t dstsz);
/* Append "no WHAT result: " and the output's error line, quoted, or else
 * reason to err; returns -LN_EPROTO. */
int ln_parse_no_result(const char *text, size_t len, const char *what, const char *reason,
		       struct ln_buf *err);

#endif
