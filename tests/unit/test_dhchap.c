/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for common/dhchap.c: the DHHC-1 format check (prefix,
 * transform, base64, key length, CRC-32) on the NVMe specification's
 * example secret and on generated ones, and that no message quotes a secret.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "common/buf.h"
#include "common/dhchap.h"

/* The example secret of the NVMe base specification, as quoted in the
 * kernel commit "nvme-auth: allow mixing of secret and hash lengths":
 * 32 bytes of key and a matching CRC-32, valid with every transform. */
#define SPEC_KEY "ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n"

static void expect_refused(const char *s, const char *why)
{
	struct ln_buf err = LN_BUF_INIT;

	assert_int_equal(ln_dhchap_check(s, &err), -EINVAL);
	assert_non_null(strstr(err.buf, why));
	/* The message never quotes the secret or its key. */
	if (s && strlen(s) > 10)
		assert_null(strstr(err.buf, s + 10));
	ln_buf_release(&err);
}

static void test_dhchap__crc32_matches_zlib(void **state)
{
	(void)state;
	/* The check value of CRC-32/ISO-HDLC (zlib's crc32). */
	assert_int_equal(ln_crc32("123456789", 9), 0xcbf43926u);
	assert_int_equal(ln_crc32("", 0), 0u);
}

static void test_dhchap__spec_example_passes_every_transform(void **state)
{
	struct ln_buf err = LN_BUF_INIT;

	(void)state;
	assert_int_equal(ln_dhchap_check("DHHC-1:00:" SPEC_KEY ":", &err), 0);
	assert_int_equal(ln_dhchap_check("DHHC-1:01:" SPEC_KEY ":", &err), 0);
	assert_int_equal(ln_dhchap_check("DHHC-1:02:" SPEC_KEY ":", &err), 0);
	assert_int_equal(ln_dhchap_check("DHHC-1:03:" SPEC_KEY ":", &err), 0);
	assert_string_equal(err.buf, "");
	ln_buf_release(&err);
}

static void test_dhchap__shape_errors_refused(void **state)
{
	(void)state;
	expect_refused(NULL, "empty");
	expect_refused("", "empty");
	expect_refused("DHHC-2:00:" SPEC_KEY ":", "does not start with 'DHHC-1:'");
	expect_refused("dhhc-1:00:" SPEC_KEY ":", "does not start with 'DHHC-1:'");
	expect_refused("DHHC-1:04:" SPEC_KEY ":", "transform");
	expect_refused("DHHC-1:10:" SPEC_KEY ":", "transform");
	expect_refused("DHHC-1:0:" SPEC_KEY ":", "transform");
	expect_refused("DHHC-1:00:" SPEC_KEY, "single ':'");
	expect_refused("DHHC-1:00:" SPEC_KEY "::", "single ':'");
	expect_refused("DHHC-1:00:" SPEC_KEY ":\n", "single ':'");
	expect_refused("DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2!:", "base64");
	expect_refused("DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2:", "base64");
	expect_refused("DHHC-1:00: a6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:", "base64");
	expect_refused("DHHC-1:00::", "base64");
	/* 16 bytes of key and a CRC: well-formed base64, wrong length. */
	expect_refused("DHHC-1:00:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:", "32, 48 or 64 bytes");
}

static void test_dhchap__flipped_byte_fails_crc(void **state)
{
	char s[] = "DHHC-1:00:" SPEC_KEY ":";
	size_t i = strlen("DHHC-1:00:") + 4;

	(void)state;
	/* 'G' -> 'H' changes one bit of the key's fourth byte. */
	assert_int_equal(s[i], 'G');
	s[i] = 'H';
	expect_refused(s, "CRC-32 does not match");
}

static void test_dhchap__generated_secret_checks_and_differs(void **state)
{
	char a[LN_DHCHAP_MAX], b[LN_DHCHAP_MAX];
	struct ln_buf err = LN_BUF_INIT;
	size_t i;

	(void)state;
	assert_int_equal(ln_dhchap_generate(a, sizeof(a)), 0);
	assert_int_equal(ln_dhchap_generate(b, sizeof(b)), 0);
	/* 32 bytes + CRC = 36 bytes = 48 base64 characters. */
	assert_int_equal(strlen(a), strlen("DHHC-1:00:") + 48 + 1);
	assert_memory_equal(a, "DHHC-1:00:", 10);
	assert_int_equal(ln_dhchap_check(a, &err), 0);
	assert_int_equal(ln_dhchap_check(b, &err), 0);
	assert_string_not_equal(a, b);
	/* Every single-character change in the key is caught. */
	for (i = 10; i < strlen(a) - 1; i++) {
		char c = a[i];

		a[i] = c == 'A' ? 'B' : 'A';
		assert_int_equal(ln_dhchap_check(a, &err), -EINVAL);
		a[i] = c;
	}
	assert_int_equal(ln_dhchap_check(a, &err), 0);
	ln_buf_release(&err);
}

static void test_dhchap__generate_refuses_small_buffer(void **state)
{
	char small[40];

	(void)state;
	assert_int_equal(ln_dhchap_generate(small, sizeof(small)), -ENOSPC);
	assert_int_equal(ln_dhchap_generate(NULL, 0), -ENOSPC);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_dhchap__crc32_matches_zlib),
	cmocka_unit_test(test_dhchap__spec_example_passes_every_transform),
	cmocka_unit_test(test_dhchap__shape_errors_refused),
	cmocka_unit_test(test_dhchap__flipped_byte_fails_crc),
	cmocka_unit_test(test_dhchap__generated_secret_checks_and_differs),
	cmocka_unit_test(test_dhchap__generate_refuses_small_buffer),
)
