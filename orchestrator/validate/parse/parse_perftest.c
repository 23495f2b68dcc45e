/* SPDX-License-Identifier: MIT */
/*
 * perftest 4.5 text report parser. perftest 4.5-0.17 (Debian 12) has no
 * JSON output; its report is a result header
 *   " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"
 * (Gb/sec instead of MB/sec with --report_gbits) and one data line per
 * message size, between dashed rules. MB/sec is perftest's 2^20 bytes.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "orchestrator/validate/parse/parse.h"

void ln_perftest_release(struct ln_perftest *p)
{
	free(p->rows);
	memset(p, 0, sizeof(*p));
}

/* A data line: bytes iterations peak average msgrate, all numeric, and
 * nothing after them. */
static int parse_row(const char *s, size_t n, struct ln_perftest_row *row)
{
	char line[256], *p, *end;
	unsigned long long v;

	if (n >= sizeof(line))
		return -1;
	memcpy(line, s, n);
	line[n] = '\0';
	p = line;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (end == p || errno)
		return -1;
	row->bytes = v;
	p = end;
	v = strtoull(p, &end, 10);
	if (end == p || errno)
		return -1;
	row->iterations = v;
	p = end;
	row->bw_peak = strtod(p, &end);
	if (end == p)
		return -1;
	p = end;
	row->bw_avg = strtod(p, &end);
	if (end == p)
		return -1;
	p = end;
	row->msg_rate = strtod(p, &end);
	if (end == p)
		return -1;
	while (*end && isspace((unsigned char)*end))
		end++;
	if (*end)
		return -1;
	/* inf/nan would pass every threshold (NaN compares false) and are
	 * not JSON: a non-finite figure is no result */
	if (!isfinite(row->bw_peak) || !isfinite(row->bw_avg) || !isfinite(row->msg_rate))
		return -1;
	if (row->bw_peak < 0 || row->bw_avg < 0 || row->msg_rate < 0)
		return -1;
	return 0;
}

int ln_parse_perftest(const char *text, size_t len, struct ln_perftest *out, struct ln_buf *err)
{
	struct ln_lines it;
	const char *s, *e, *reason;
	size_t alloc = 0, n;
	int complete;

	ln_perftest_release(out);
	ln_lines_init(&it, text, len);
	while (ln_lines_next(&it, &s, &n, &complete)) {
		e = s + n;
		while (s < e && isspace((unsigned char)*s))
			s++;
		if (!out->has_header) {
			if (e - s > 6 && !strncmp(s, "#bytes", 6) && memmem(s, (size_t)(e - s), "BW average[", 11)) {
				out->has_header = 1;
				out->gbits = memmem(s, (size_t)(e - s), "[Gb/sec]", 8) != NULL;
			}
			continue;
		}
		if (s < e && isdigit((unsigned char)*s)) {
			struct ln_perftest_row row;

			/* A truncated last line (no newline, cut mid-number)
			 * either fails to parse or is the last row: a line
			 * without its newline is not trusted. */
			if (!complete || parse_row(s, (size_t)(e - s), &row) < 0)
				continue;
			if (out->nrows == alloc) {
				size_t na = alloc ? alloc * 2 : 8;
				void *nr = realloc(out->rows, na * sizeof(*out->rows));

				if (!nr) {
					ln_buf_addstr(err, "cannot parse the perftest report: out of memory");
					ln_perftest_release(out);
					return -ENOMEM;
				}
				out->rows = nr;
				alloc = na;
			}
			out->rows[out->nrows++] = row;
		}
	}
	if (out->nrows)
		return 0;
	if (!len)
		reason = "the report is empty";
	else if (!out->has_header)
		reason = "the report has no result header";
	else
		reason = "the report has a header but no data line (truncated)";
	ln_parse_no_result(text, len, "bandwidth", reason, err);
	ln_perftest_release(out);
	return -LN_EPROTO;
}

const struct ln_perftest_row *ln_perftest_large(const struct ln_perftest *p)
{
	const struct ln_perftest_row *best = NULL;
	size_t i;

	for (i = 0; i < p->nrows; i++)
		if (!best || p->rows[i].bytes > best->bytes)
			best = &p->rows[i];
	return best;
}

double ln_perftest_gbps(const struct ln_perftest *p, const struct ln_perftest_row *row)
{
	if (p->gbits)
		return row->bw_avg;
	return row->bw_avg * 1048576.0 * 8.0 / 1e9;
}
