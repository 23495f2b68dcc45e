/* SPDX-License-Identifier: MIT */
/*
 * Size, rate and duration parsing for the spec. The number is read as an
 * integer mantissa and a count of fractional digits, and scaled with
 * 128-bit arithmetic, so every accepted value is exact and every overflow
 * is caught instead of wrapping.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "orchestrator/spec/units.h"

struct unit {
	const char *name;
	uint64_t mult;
};

static const struct unit size_units[] = {
	{ "B", 1 },
	{ "KiB", 1ull << 10 }, { "MiB", 1ull << 20 }, { "GiB", 1ull << 30 },
	{ "TiB", 1ull << 40 }, { "PiB", 1ull << 50 },
	{ "KB", 1000ull }, { "MB", 1000000ull }, { "GB", 1000000000ull },
	{ "TB", 1000000000000ull }, { "PB", 1000000000000000ull },
	{ NULL, 0 },
};

static const struct unit rate_units[] = {
	{ "Kb/s", 1000ull }, { "Mb/s", 1000000ull }, { "Gb/s", 1000000000ull },
	{ "Tb/s", 1000000000000ull },
	{ "KB/s", 8000ull }, { "MB/s", 8000000ull }, { "GB/s", 8000000000ull },
	{ "TB/s", 8000000000000ull },
	{ NULL, 0 },
};

/* In microseconds, the finest the language writes; the model keeps most
 * durations in milliseconds (ln_units_parse_duration() checks that). */
static const struct unit duration_units[] = {
	{ "us", 1 }, { "ms", 1000 }, { "s", 1000000 }, { "m", 60000000 }, { "h", 3600000000ull },
	{ NULL, 0 },
};

static void list_units(const struct unit *u, struct ln_buf *err)
{
	for (; u->name; u++)
		ln_buf_addf(err, "%s%s", u->name, u[1].name ? ", " : "");
}

/*
 * Parse "<digits>[.<digits>][ ]<unit>". A missing unit uses bare_mult, or
 * is an error when bare_mult is 0.
 */
static int parse_scaled(const char *s, const struct unit *units, uint64_t bare_mult,
			const char *what, uint64_t *out, struct ln_buf *err)
{
	unsigned __int128 mant = 0, v, div = 1;
	const char *p = s, *unit;
	const struct unit *u;
	int idigits = 0, fdigits = 0;

	while (*p >= '0' && *p <= '9') {
		mant = mant * 10 + (unsigned)(*p - '0');
		if (++idigits > 20)
			goto toobig;
		p++;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			mant = mant * 10 + (unsigned)(*p - '0');
			div *= 10;
			if (++fdigits > 9) {
				ln_buf_addf(err, "cannot parse %s '%s': more than 9 decimals", what, s);
				return -EINVAL;
			}
			p++;
		}
		if (!fdigits)
			goto bad;
	}
	if (!idigits)
		goto bad;
	if (*p == ' ')
		p++;
	unit = p;
	if (!*unit) {
		if (!bare_mult) {
			ln_buf_addf(err, "cannot parse %s '%s': missing unit (", what, s);
			list_units(units, err);
			ln_buf_addch(err, ')');
			return -EINVAL;
		}
		v = mant * bare_mult;
	} else {
		for (u = units; u->name; u++)
			if (!strcmp(u->name, unit))
				break;
		if (!u->name) {
			ln_buf_addf(err, "cannot parse %s '%s': unknown unit '%s' (", what, s, unit);
			list_units(units, err);
			ln_buf_addch(err, ')');
			return -EINVAL;
		}
		v = mant * u->mult;
	}
	if (v % div) {
		ln_buf_addf(err, "cannot parse %s '%s': not a whole number of %s", what, s,
			    units == size_units ? "bytes" : units == rate_units ? "bits/s" : "us");
		return -EINVAL;
	}
	v /= div;
	if (v > UINT64_MAX)
		goto toobig;
	*out = (uint64_t)v;
	return 0;
bad:
	ln_buf_addf(err, "cannot parse %s '%s': expected a number and a unit", what, s);
	return -EINVAL;
toobig:
	ln_buf_addf(err, "cannot parse %s '%s': too large", what, s);
	return -EINVAL;
}

int ln_units_parse_size(const char *s, uint64_t *bytes, struct ln_buf *err)
{
	return parse_scaled(s, size_units, 1, "size", bytes, err);
}

int ln_units_parse_rate(const char *s, uint64_t *bps, struct ln_buf *err)
{
	return parse_scaled(s, rate_units, 0, "rate", bps, err);
}

int ln_units_parse_duration_us(const char *s, uint64_t *us, struct ln_buf *err)
{
	return parse_scaled(s, duration_units, 0, "duration", us, err);
}

int ln_units_parse_duration(const char *s, uint64_t *ms, struct ln_buf *err)
{
	uint64_t us;
	int r = ln_units_parse_duration_us(s, &us, err);

	if (r < 0)
		return r;
	if (us % 1000) {
		ln_buf_addf(err, "cannot parse duration '%s': not a whole number of ms", s);
		return -EINVAL;
	}
	*ms = us / 1000;
	return 0;
}

/* The largest unit that divides v exactly; units must be in ascending
 * order within each family for this to pick the shortest spelling. */
static void format_exact(uint64_t v, const struct unit *const *order, const char *zero,
			 char out[32])
{
	const struct unit *best = NULL;
	int i;

	if (!v) {
		snprintf(out, 32, "%s", zero);
		return;
	}
	for (i = 0; order[i]; i++)
		if (v % order[i]->mult == 0 && (!best || order[i]->mult > best->mult))
			best = order[i];
	snprintf(out, 32, "%llu%s", (unsigned long long)(v / best->mult), best->name);
}

void ln_units_format_size(uint64_t bytes, char out[32])
{
	static const struct unit *const order[] = {
		&size_units[0], &size_units[1], &size_units[2], &size_units[3], &size_units[4],
		&size_units[5], &size_units[6], &size_units[7], &size_units[8], &size_units[9],
		&size_units[10], NULL,
	};

	format_exact(bytes, order, "0B", out);
}

void ln_units_format_rate(uint64_t bps, char out[32])
{
	/* Bits are how links are rated; bytes only when bits cannot say it. */
	static const struct unit *const bits[] = {
		&rate_units[0], &rate_units[1], &rate_units[2], &rate_units[3], NULL,
	};

	if (bps % 1000)
		snprintf(out, 32, "%llu.%03lluKb/s", (unsigned long long)bps / 1000,
			 (unsigned long long)bps % 1000);
	else
		format_exact(bps, bits, "0Gb/s", out);
}

void ln_units_format_duration_us(uint64_t us, char out[32])
{
	static const struct unit *const order[] = {
		&duration_units[0], &duration_units[1], &duration_units[2], &duration_units[3],
		&duration_units[4], NULL,
	};

	format_exact(us, order, "0s", out);
}

void ln_units_format_duration(uint64_t ms, char out[32])
{
	/* every duration the model keeps in ms fits in microseconds */
	ln_units_format_duration_us(ms * 1000, out);
}
