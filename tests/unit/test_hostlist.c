/* SPDX-License-Identifier: MIT */
/* Unit tests for orchestrator/hostlist: Slurm-style ranges. */
#include <errno.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "orchestrator/spec/hostlist.h"

static void expand(const char *expr, size_t count, const char *first, const char *last)
{
	struct ln_buf err = LN_BUF_INIT, s = LN_BUF_INIT;
	struct ln_hostlist hl;

	assert_int_equal(ln_hostlist_parse(expr, &hl, &err), 0);
	assert_int_equal(hl.count, count);
	assert_int_equal(ln_hostlist_get(&hl, 0, &s), 0);
	assert_string_equal(s.buf, first);
	ln_buf_reset(&s);
	assert_int_equal(ln_hostlist_get(&hl, count - 1, &s), 0);
	assert_string_equal(s.buf, last);
	ln_hostlist_release(&hl);
	ln_test_release(&s, &err);
}

static void test_hostlist__expands(void **state)
{
	(void)state;
	expand("gpu[001-128]", 128, "gpu001", "gpu128");
	expand("10.0.1.[1-128]", 128, "10.0.1.1", "10.0.1.128");
	expand("n[1-3,7,10-11]", 6, "n1", "n11");
	expand("plain", 1, "plain", "plain");
	expand("rack[1-2]-n[01-04]", 8, "rack1-n01", "rack2-n04");
	expand("[5-6]x", 2, "5x", "6x");
	/* padding follows the lower bound as written */
	expand("n[08-10]", 3, "n08", "n10");
	expand("n[8-10]", 3, "n8", "n10");
}

static void test_hostlist__order_and_middle(void **state)
{
	struct ln_buf err = LN_BUF_INIT, s = LN_BUF_INIT;
	struct ln_hostlist hl;

	(void)state;
	assert_int_equal(ln_hostlist_parse("r[1-2]n[1-3,9]", &hl, &err), 0);
	assert_int_equal(hl.count, 8);
	/* the rightmost group varies fastest */
	assert_int_equal(ln_hostlist_get(&hl, 3, &s), 0);
	assert_string_equal(s.buf, "r1n9");
	ln_buf_reset(&s);
	assert_int_equal(ln_hostlist_get(&hl, 4, &s), 0);
	assert_string_equal(s.buf, "r2n1");
	ln_hostlist_release(&hl);
	ln_test_release(&s, &err);
}

static void bad(const char *expr, const char *msg)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_hostlist hl;

	assert_int_equal(ln_hostlist_parse(expr, &hl, &err), -EINVAL);
	assert_string_equal(err.buf, msg);
	assert_null(hl.groups);
	ln_buf_release(&err);
}

static void test_hostlist__errors(void **state)
{
	(void)state;
	bad("gpu[10-1]", "cannot expand range 'gpu[10-1]': 10-1 runs backwards");
	bad("gpu[1-4", "cannot expand range 'gpu[1-4': expected ',' or ']' at offset 7");
	bad("gpu1-4]", "cannot expand range 'gpu1-4]': ']' without '['");
	bad("gpu[]", "cannot expand range 'gpu[]': expected a number at offset 4");
	bad("gpu[a-b]", "cannot expand range 'gpu[a-b]': expected a number at offset 4");
	bad("gpu[1-]", "cannot expand range 'gpu[1-]': expected a number at offset 6");
	bad("gpu[[1]]", "cannot expand range 'gpu[[1]]': expected a number at offset 4");
	bad("n[1-100000]", "cannot expand range 'n[1-100000]': more than 65536 names");
	/* the cap holds for products of groups too */
	bad("a[1-1000]b[1-1000]", "cannot expand range 'a[1-1000]b[1-1000]': more than 65536 names");
	bad("n[1234567890]", "cannot expand range 'n[1234567890]': a number longer than 9 digits at offset 2");
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_hostlist__expands),
	cmocka_unit_test(test_hostlist__order_and_middle),
	cmocka_unit_test(test_hostlist__errors),
)
