/* SPDX-License-Identifier: MIT */
/*
 * common/escape.c: a node's string rendered for a terminal or a log line.
 * Each control class becomes \xNN, the backslash too; UTF-8 text is kept.
 */
#include <errno.h>
#include <string.h>

#include "tests/unit/cmocka.h"
#include "common/escape.h"

static void check(const char *in, size_t n, const char *want)
{
	struct ln_buf out = LN_BUF_INIT;

	ln_buf_addstr(&out, "> ");	/* appended after what the buffer holds */
	assert_int_equal(ln_escape(&out, in, n), 0);
	assert_string_equal(out.buf + 2, want);
	assert_memory_equal(out.buf, "> ", 2);
	ln_buf_release(&out);
}

#define CHECK(lit, want) check(lit, sizeof(lit) - 1, want)

static void test_escape__c0_and_del(void **state)
{
	(void)state;
	CHECK("\033]0;owned\a", "\\x1b]0;owned\\x07");
	CHECK("\r\033[2K", "\\x0d\\x1b[2K");
	CHECK("ok\n RECAP n1 : converged", "ok\\x0a RECAP n1 : converged");
	CHECK("a\tb\x7f", "a\\x09b\\x7f");
	CHECK("\0\x01\x1f", "\\x00\\x01\\x1f");
	CHECK("\033[32mPASS\033[0m", "\\x1b[32mPASS\\x1b[0m");
}

static void test_escape__backslash(void **state)
{
	(void)state;
	/* the rendering of ESC cannot be forged by the text "\x1b" */
	CHECK("\\x1b", "\\x5cx1b");
	CHECK("a\\", "a\\x5c");
}

static void test_escape__utf8_kept_c1_escaped(void **state)
{
	(void)state;
	/* honest text, UTF-8 included, is printed unchanged */
	CHECK("nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0035", "nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0035");
	CHECK("gpu \xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "gpu \xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	/* a lone C1 byte (CSI on an 8-bit terminal), and U+009B in UTF-8 */
	CHECK("\x9b" "2K", "\\x9b2K");
	CHECK("\xc2\x9b" "2K", "\\xc2\\x9b2K");
	/* invalid, truncated, overlong, surrogate, beyond U+10FFFF */
	CHECK("\xff\xfe", "\\xff\\xfe");
	CHECK("\xe2\x82", "\\xe2\\x82");
	CHECK("\xc0\xaf", "\\xc0\\xaf");
	CHECK("\xe0\x80\xaf", "\\xe0\\x80\\xaf");
	CHECK("\xed\xa0\x80", "\\xed\\xa0\\x80");
	CHECK("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
}

static void test_escape__str_and_null(void **state)
{
	struct ln_buf out = LN_BUF_INIT;

	(void)state;
	assert_int_equal(ln_escape_str(&out, NULL), 0);
	assert_int_equal(out.len, 0);
	assert_int_equal(ln_escape_str(&out, "x\ry"), 0);
	assert_string_equal(out.buf, "x\\x0dy");
	ln_buf_release(&out);
}

static void test_escape__full_buffer_unchanged(void **state)
{
	struct ln_buf out;

	(void)state;
	ln_buf_init(&out, 8);
	ln_buf_addstr(&out, "abc");
	/* 4 bytes left: "\x1b" fits, the rest does not, nothing is kept */
	assert_int_equal(ln_escape(&out, "\033\033", 2), -ENOMEM);
	assert_string_equal(out.buf, "abc");
	ln_buf_release(&out);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_escape__c0_and_del),
	cmocka_unit_test(test_escape__backslash),
	cmocka_unit_test(test_escape__utf8_kept_c1_escaped),
	cmocka_unit_test(test_escape__str_and_null),
	cmocka_unit_test(test_escape__full_buffer_unchanged),
)
