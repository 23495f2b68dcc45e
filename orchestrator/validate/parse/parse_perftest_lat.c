/* SPDX-License-Identifier: MIT */
/*
 * perftest 4.5 latency report parser (ib_write_lat, ib_send_lat). The
 * report is a header of named columns
 *   " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]
 *     t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] "
 * and one data line per message size. Columns are found by their names,
 * never by position, so a perftest that adds or drops one cannot make a
 * maximum read as a typical; the three the stage reports (t_typical,
 * t_avg, 99% percentile) must be there, the others are NAN when absent.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "orchestrator/validate/parse/parse.h"

#define MAX_COLS 16

enum col {
	C_BYTES, C_ITERS, C_MIN, C_MAX, C_TYPICAL, C_AVG, C_STDEV, C_P99, C_P999, C_COUNT,
};

/* perftest's own column names, indexed by enum col */
static const char *const col_names[C_COUNT] = {
	"#bytes", "#iterations", "t_min[usec]", "t_max[usec]", "t_typical[usec]", "t_avg[usec]",
	"t_stdev[usec]", "99% percentile[usec]", "99.9% percentile[usec]",
};

/* Split a header line into column names; "99%" and "percentile[usec]" are
 * one column. Fills idx[col] with the column's position or -1; returns
 * the number of columns, or -1 when the line is not a latency header. */
static int read_header(const char *s, size_t n, int idx[C_COUNT])
{
	char line[512], *tok, *save = NULL, *names[MAX_COLS];
	char merged[MAX_COLS][48];
	int ncols = 0, k, c;

	if (n >= sizeof(line))
		return -1;
	memcpy(line, s, n);
	line[n] = '\0';
	for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (!strcmp(tok, "percentile[usec]") && ncols) {
			size_t used = strlen(merged[ncols - 1]);

			if (used + 1 + strlen(tok) >= sizeof(merged[0]))
				return -1;
			merged[ncols - 1][used] = ' ';
			strcpy(merged[ncols - 1] + used + 1, tok);
			continue;
		}
		if (ncols == MAX_COLS || strlen(tok) >= sizeof(merged[0]))
			return -1;
		strcpy(merged[ncols], tok);
		names[ncols] = merged[ncols];
		ncols++;
	}
	for (c = 0; c < C_COUNT; c++) {
		idx[c] = -1;
		for (k = 0; k < ncols; k++)
			if (!strcmp(names[k], col_names[c]))
				idx[c] = k;
	}
	if (idx[C_BYTES] != 0 || idx[C_TYPICAL] < 0)
		return -1;
	return ncols;
}

/* A data line: exactly ncols numbers, none negative. */
static int read_row(const char *s, size_t n, int ncols, double *v)
{
	char line[512], *p = line, *end;
	int k;

	if (n >= sizeof(line))
		return -1;
	memcpy(line, s, n);
	line[n] = '\0';
	for (k = 0; k < ncols; k++) {
		errno = 0;
		v[k] = strtod(p, &end);
		if (end == p || errno || !isfinite(v[k]) || v[k] < 0)
			return -1;
		p = end;
	}
	while (*p && isspace((unsigned char)*p))
		p++;
	return *p ? -1 : 0;
}

/* The first data line that was refused, for the reason: its first 120
 * bytes, a tab as a space, anything else not printable as '?'. */
static void keep_refused(char *dst, size_t size, const char *s, size_t n)
{
	size_t i;

	if (dst[0])
		return;
	if (n >= size)
		n = size - 1;
	for (i = 0; i < n; i++)
		dst[i] = s[i] == '\t' ? ' ' : isprint((unsigned char)s[i]) ? s[i] : '?';
	dst[n] = '\0';
}

static double column(const double *v, const int idx[C_COUNT], enum col c)
{
	return idx[c] >= 0 ? v[idx[c]] : NAN;
}

int ln_parse_perftest_lat(const char *text, size_t len, struct ln_perftest_lat *out,
			  struct ln_buf *err)
{
	struct ln_lines it;
	const char *s, *e, *reason;
	int idx[C_COUNT], ncols = -1, complete, rows = 0;
	double v[MAX_COLS];
	char refused[121] = "", why[200];
	size_t n;

	memset(out, 0, sizeof(*out));
	ln_lines_init(&it, text, len);
	while (ln_lines_next(&it, &s, &n, &complete)) {
		e = s + n;
		while (s < e && isspace((unsigned char)*s))
			s++;
		if (ncols < 0) {
			if (e - s > 6 && !strncmp(s, "#bytes", 6))
				ncols = read_header(s, (size_t)(e - s), idx);
			if (ncols >= 0 && (idx[C_AVG] < 0 || idx[C_P99] < 0)) {
				ln_buf_addf(err, "no latency result: the report has no %s column",
					    idx[C_AVG] < 0 ? col_names[C_AVG] : col_names[C_P99]);
				return -LN_EPROTO;
			}
			continue;
		}
		if (s == e || !isdigit((unsigned char)*s))
			continue;
		/* a line cut short (no newline) is not trusted */
		if (!complete || read_row(s, (size_t)(e - s), ncols, v) < 0) {
			keep_refused(refused, sizeof(refused), s, (size_t)(e - s));
			continue;
		}
		/* the largest message size's row, as bandwidth judges */
		if (rows++ && (uint64_t)v[idx[C_BYTES]] < out->bytes)
			continue;
		out->bytes = (uint64_t)v[idx[C_BYTES]];
		out->iterations = idx[C_ITERS] >= 0 ? (uint64_t)v[idx[C_ITERS]] : 0;
		out->t_min = column(v, idx, C_MIN);
		out->t_max = column(v, idx, C_MAX);
		out->typical = column(v, idx, C_TYPICAL);
		out->avg = column(v, idx, C_AVG);
		out->stdev = column(v, idx, C_STDEV);
		out->p99 = column(v, idx, C_P99);
		out->p999 = column(v, idx, C_P999);
	}
	if (rows)
		return 0;
	if (!len)
		reason = "the report is empty";
	else if (ncols < 0)
		reason = "the report has no latency header";
	else if (refused[0]) {
		snprintf(why, sizeof(why), "the report's data line is not %d numbers of 0 or more "
			 "on one whole line: '%s'", ncols, refused);
		reason = why;
	} else
		reason = "the report has a header but no data line (truncated)";
	return ln_parse_no_result(text, len, "latency", reason, err);
}
