/* SPDX-License-Identifier: MIT */
/* Unit tests for orchestrator/units: exact sizes, rates and durations. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "common/util.h"
#include "orchestrator/spec/units.h"

typedef int (*parse_fn)(const char *s, uint64_t *v, struct ln_buf *err);
typedef void (*format_fn)(uint64_t v, char out[32]);

struct unit_case {
	const char *text;
	uint64_t value;
};

/* Each text parses to its value, with no message. */
static void assert_parses(parse_fn parse, const struct unit_case *c, size_t n)
{
	struct ln_buf err = LN_BUF_INIT;
	uint64_t v;
	size_t i;

	for (i = 0; i < n; i++) {
		assert_int_equal(parse(c[i].text, &v, &err), 0);
		assert_int_equal(v, c[i].value);
	}
	assert_int_equal(err.len, 0);
	ln_buf_release(&err);
}

/* Each text (a NULL-terminated list) parses and formats back to itself. */
static void assert_round_trips(parse_fn parse, format_fn format, const char *const *texts)
{
	struct ln_buf err = LN_BUF_INIT;
	char out[32];
	uint64_t v;

	for (; *texts; texts++) {
		assert_int_equal(parse(*texts, &v, &err), 0);
		format(v, out);
		assert_string_equal(out, *texts);
	}
	ln_buf_release(&err);
}

static void test_units__sizes(void **state)
{
	static const struct unit_case sizes[] = {
		{ "1GiB", 1073741824ull }, { "1.5GiB", 1610612736ull }, { "256 MiB", 256ull << 20 },
		{ "2TB", 2000000000000ull }, { "4096", 4096 }, { "512B", 512 },
	};

	(void)state;
	assert_parses(ln_units_parse_size, sizes, ARRAY_SIZE(sizes));
}

static void test_units__size_errors(void **state)
{
	struct ln_buf err = LN_BUF_INIT;
	uint64_t v = 7;

	(void)state;
	assert_int_equal(ln_units_parse_size("1GB5", &v, &err), -EINVAL);
	assert_string_equal(err.buf, "cannot parse size '1GB5': unknown unit 'GB5' "
				     "(B, KiB, MiB, GiB, TiB, PiB, KB, MB, GB, TB, PB)");
	assert_int_equal(v, 7);
	ln_buf_reset(&err);
	assert_int_equal(ln_units_parse_size("0.3B", &v, &err), -EINVAL);
	assert_string_equal(err.buf, "cannot parse size '0.3B': not a whole number of bytes");
	ln_buf_reset(&err);
	assert_int_equal(ln_units_parse_size("-1GiB", &v, &err), -EINVAL);
	assert_int_equal(ln_units_parse_size("GiB", &v, &err), -EINVAL);
	assert_int_equal(ln_units_parse_size("1.GiB", &v, &err), -EINVAL);
	assert_int_equal(ln_units_parse_size("", &v, &err), -EINVAL);
	assert_int_equal(ln_units_parse_size("1gib", &v, &err), -EINVAL);
	/* 2^64 bytes does not fit */
	ln_buf_reset(&err);
	assert_int_equal(ln_units_parse_size("16384PiB", &v, &err), -EINVAL);
	assert_string_equal(err.buf, "cannot parse size '16384PiB': too large");
	assert_int_equal(ln_units_parse_size("99999999999999999999999", &v, &err), -EINVAL);
	assert_int_equal(ln_units_parse_size("1.0000000001GiB", &v, &err), -EINVAL);
	assert_int_equal(v, 7);
	ln_buf_release(&err);
}

static void test_units__rates(void **state)
{
	static const struct unit_case rates[] = {
		{ "100Gb/s", 100000000000ull }, { "20GB/s", 160000000000ull },
		{ "500MB/s", 4000000000ull }, { "12.5 Gb/s", 12500000000ull },
	};
	struct ln_buf err = LN_BUF_INIT;
	uint64_t v;

	(void)state;
	assert_parses(ln_units_parse_rate, rates, ARRAY_SIZE(rates));
	/* a bare number is ambiguous: bits or bytes? */
	assert_int_equal(ln_units_parse_rate("100", &v, &err), -EINVAL);
	assert_string_equal(err.buf, "cannot parse rate '100': missing unit "
				     "(Kb/s, Mb/s, Gb/s, Tb/s, KB/s, MB/s, GB/s, TB/s)");
	assert_int_equal(ln_units_parse_rate("100Gbps", &v, &err), -EINVAL);
	ln_buf_release(&err);
}

static void test_units__durations(void **state)
{
	static const struct unit_case durations[] = {
		{ "30s", 30000 }, { "250ms", 250 }, { "1.5m", 90000 }, { "2h", 7200000 },
	};
	struct ln_buf err = LN_BUF_INIT;
	uint64_t v;

	(void)state;
	assert_parses(ln_units_parse_duration, durations, ARRAY_SIZE(durations));
	assert_int_equal(ln_units_parse_duration("0.5ms", &v, &err), -EINVAL);
	assert_int_equal(ln_units_parse_duration("30", &v, &err), -EINVAL);
	assert_int_equal(ln_units_parse_duration("3d", &v, &err), -EINVAL);
	/* us: a millisecond field takes whole milliseconds only */
	assert_int_equal(ln_units_parse_duration("2000us", &v, &err), 0);
	assert_int_equal(v, 2);
	ln_buf_reset(&err);
	assert_int_equal(ln_units_parse_duration("1500us", &v, &err), -EINVAL);
	assert_string_equal(err.buf, "cannot parse duration '1500us': not a whole number of ms");
	ln_buf_release(&err);
}

/* The latency thresholds' microseconds: us is the finest unit, and a
 * fraction of a microsecond is refused, not rounded. */
static void test_units__durations_us(void **state)
{
	static const struct unit_case durations[] = {
		{ "20us", 20 }, { "1.5ms", 1500 }, { "2s", 2000000 }, { "0.25 ms", 250 },
		{ "1h", 3600000000ull },
	};
	struct ln_buf err = LN_BUF_INIT;
	char out[32];
	uint64_t v;

	(void)state;
	assert_parses(ln_units_parse_duration_us, durations, ARRAY_SIZE(durations));
	assert_int_equal(ln_units_parse_duration_us("0.5us", &v, &err), -EINVAL);
	assert_string_equal(err.buf, "cannot parse duration '0.5us': not a whole number of us");
	ln_buf_reset(&err);
	assert_int_equal(ln_units_parse_duration_us("20", &v, &err), -EINVAL);
	assert_string_equal(err.buf, "cannot parse duration '20': missing unit (us, ms, s, m, h)");
	ln_units_format_duration_us(1500, out);
	assert_string_equal(out, "1500us");
	ln_units_format_duration_us(3000, out);
	assert_string_equal(out, "3ms");
	ln_units_format_duration(250, out);
	assert_string_equal(out, "250ms");
	ln_buf_release(&err);
}

static void test_units__format_round_trips(void **state)
{
	static const char *const sizes[] = { "1GiB", "1536MiB", "1001B", "3KB", "0B", NULL };
	static const char *const rates[] = { "100Gb/s", "4Gb/s", "1500Mb/s", "0Gb/s", NULL };
	static const char *const durs[] = { "30s", "2m", "250ms", "1h", NULL };
	struct ln_buf err = LN_BUF_INIT;
	char out[32];
	uint64_t v, w;

	(void)state;
	assert_round_trips(ln_units_parse_size, ln_units_format_size, sizes);
	assert_round_trips(ln_units_parse_rate, ln_units_format_rate, rates);
	assert_round_trips(ln_units_parse_duration, ln_units_format_duration, durs);
	/* the largest unit that says it exactly */
	assert_int_equal(ln_units_parse_size("1000B", &v, &err), 0);
	ln_units_format_size(v, out);
	assert_string_equal(out, "1KB");
	/* a rate that is not whole Kb/s still parses back exactly */
	ln_units_format_rate(1234567, out);
	assert_string_equal(out, "1234.567Kb/s");
	assert_int_equal(ln_units_parse_rate(out, &w, &err), 0);
	assert_int_equal(w, 1234567);
	ln_buf_release(&err);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_units__sizes),
	cmocka_unit_test(test_units__size_errors),
	cmocka_unit_test(test_units__rates),
	cmocka_unit_test(test_units__durations),
	cmocka_unit_test(test_units__durations_us),
	cmocka_unit_test(test_units__format_round_trips),
)
