/* SPDX-License-Identifier: MIT */
/* Unit tests for orchestrator/units: exact sizes, rates and durations. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "orchestrator/spec/units.h"

static void test_units__sizes(void **state)
{
	struct ln_buf err = LN_BUF_INIT;
	uint64_t v;

	(void)state;
	assert_int_equal(ln_units_parse_size("1GiB", &v, &err), 0);
	assert_int_equal(v, 1073741824ull);
	assert_int_equal(ln_units_parse_size("1.5GiB", &v, &err), 0);
	assert_int_equal(v, 1610612736ull);
	assert_int_equal(ln_units_parse_size("256 MiB", &v, &err), 0);
	assert_int_equal(v, 256ull << 20);
	assert_int_equal(ln_units_parse_size("2TB", &v, &err), 0);
	assert_int_equal(v, 2000000000000ull);
	assert_int_equal(ln_units_parse_size("4096", &v, &err), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(ln_units_parse_size("512B", &v, &err), 0);
	assert_int_equal(v, 512);
	assert_int_equal(err.len, 0);
	ln_buf_release(&err);
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
	struct ln_buf err = LN_BUF_INIT;
	uint64_t v;

	(void)state;
	assert_int_equal(ln_units_parse_rate("100Gb/s", &v, &err), 0);
	assert_int_equal(v, 100000000000ull);
	assert_int_equal(ln_units_parse_rate("20GB/s", &v, &err), 0);
	assert_int_equal(v, 160000000000ull);
	assert_int_equal(ln_units_parse_rate("500MB/s", &v, &err), 0);
	assert_int_equal(v, 4000000000ull);
	assert_int_equal(ln_units_parse_rate("12.5 Gb/s", &v, &err), 0);
	assert_int_equal(v, 12500000000ull);
	/* a bare number is ambiguous: bits or bytes? */
	assert_int_equal(ln_units_parse_rate("100", &v, &err), -EINVAL);
	assert_string_equal(err.buf, "cannot parse rate '100': missing unit "
				     "(Kb/s, Mb/s, Gb/s, Tb/s, KB/s, MB/s, GB/s, TB/s)");
	assert_int_equal(ln_units_parse_rate("100Gbps", &v, &err), -EINVAL);
	ln_buf_release(&err);
}

static void test_units__durations(void **state)
{
	struct ln_buf err = LN_BUF_INIT;
	uint64_t v;

	(void)state;
	assert_int_equal(ln_units_parse_duration("30s", &v, &err), 0);
	assert_int_equal(v, 30000);
	assert_int_equal(ln_units_parse_duration("250ms", &v, &err), 0);
	assert_int_equal(v, 250);
	assert_int_equal(ln_units_parse_duration("1.5m", &v, &err), 0);
	assert_int_equal(v, 90000);
	assert_int_equal(ln_units_parse_duration("2h", &v, &err), 0);
	assert_int_equal(v, 7200000);
	assert_int_equal(ln_units_parse_duration("0.5ms", &v, &err), -EINVAL);
	assert_int_equal(ln_units_parse_duration("30", &v, &err), -EINVAL);
	assert_int_equal(ln_units_parse_duration("3d", &v, &err), -EINVAL);
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
	int i;

	(void)state;
	for (i = 0; sizes[i]; i++) {
		assert_int_equal(ln_units_parse_size(sizes[i], &v, &err), 0);
		ln_units_format_size(v, out);
		assert_string_equal(out, sizes[i]);
	}
	for (i = 0; rates[i]; i++) {
		assert_int_equal(ln_units_parse_rate(rates[i], &v, &err), 0);
		ln_units_format_rate(v, out);
		assert_string_equal(out, rates[i]);
	}
	for (i = 0; durs[i]; i++) {
		assert_int_equal(ln_units_parse_duration(durs[i], &v, &err), 0);
		ln_units_format_duration(v, out);
		assert_string_equal(out, durs[i]);
	}
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units__sizes),
		cmocka_unit_test(test_units__size_errors),
		cmocka_unit_test(test_units__rates),
		cmocka_unit_test(test_units__durations),
		cmocka_unit_test(test_units__format_round_trips),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
