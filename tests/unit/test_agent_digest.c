/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for agents/agent/core/digest.c, the agent's nettle hashes:
 * RFC 5869's HKDF test case 3 (SHA-256, empty salt and info), a SHA-384
 * vector computed independently (Python's hmac), agreement with
 * OpenSSL's HKDF and SHA-256 (linked into the tests, not the agent) over
 * many lengths, a file's SHA-256 from an fd, and the refusals.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/sha.h>

#include "tests/unit/cmocka.h"

#include "agents/agent/core/digest.h"

static void hex_of(const unsigned char *p, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

static void test_agent_digest__rfc5869_case3(void **st)
{
	unsigned char ikm[22], okm[42];
	char hex[85];

	(void)st;
	memset(ikm, 0x0b, sizeof(ikm));
	assert_int_equal(ln_hkdf(32, ikm, sizeof(ikm), NULL, 0, okm, sizeof(okm)), 0);
	hex_of(okm, sizeof(okm), hex);
	assert_string_equal(hex, "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
				 "9d201395faa4b61a96c8");
}

static void test_agent_digest__sha384_vector(void **st)
{
	unsigned char ikm[48], okm[48];
	char hex[97];
	size_t i;

	(void)st;
	for (i = 0; i < sizeof(ikm); i++)
		ikm[i] = (unsigned char)i;
	assert_int_equal(ln_hkdf(48, ikm, sizeof(ikm), (const unsigned char *)"tls13 test", 10,
				 okm, sizeof(okm)), 0);
	hex_of(okm, sizeof(okm), hex);
	assert_string_equal(hex, "a8c939c7cada998b7ab69581434ae5960baa2bae572cac14"
				 "7912c6d5ebee10f0fb8792726e8a0fc365a390ec0a182447");
}

/* OpenSSL's HKDF, extract and expand with no salt: what the agent used. */
static void openssl_hkdf(const EVP_MD *md, const unsigned char *key, size_t keylen,
			 const unsigned char *info, size_t infolen, unsigned char *out, size_t outlen)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
	size_t n = outlen;

	assert_non_null(ctx);
	assert_true(EVP_PKEY_derive_init(ctx) > 0);
	assert_true(EVP_PKEY_CTX_set_hkdf_md(ctx, md) > 0);
	assert_true(EVP_PKEY_CTX_set1_hkdf_key(ctx, key, (int)keylen) > 0);
	assert_true(EVP_PKEY_CTX_add1_hkdf_info(ctx, info, (int)infolen) > 0);
	assert_true(EVP_PKEY_derive(ctx, out, &n) > 0);
	assert_int_equal(n, outlen);
	EVP_PKEY_CTX_free(ctx);
}

static void test_agent_digest__hkdf_agrees_with_openssl(void **st)
{
	unsigned char key[48], info[200], a[255], b[255];
	size_t h, len, i;

	(void)st;
	srand(7);
	for (h = 32; h <= 48; h += 16)
		for (len = 1; len <= sizeof(a); len += 37) {
			for (i = 0; i < sizeof(key); i++)
				key[i] = (unsigned char)rand();
			for (i = 0; i < sizeof(info); i++)
				info[i] = (unsigned char)rand();
			assert_int_equal(ln_hkdf(h, key, h, info, len % sizeof(info), a, len), 0);
			openssl_hkdf(h == 32 ? EVP_sha256() : EVP_sha384(), key, h, info,
				     len % sizeof(info), b, len);
			assert_memory_equal(a, b, len);
		}
}

static void test_agent_digest__refusals(void **st)
{
	unsigned char key[32] = { 1 }, out[64];

	(void)st;
	assert_int_equal(ln_hkdf(20, key, sizeof(key), NULL, 0, out, 20), -EINVAL);
	assert_int_equal(ln_hkdf(64, key, sizeof(key), NULL, 0, out, 64), -EINVAL);
	assert_int_equal(ln_hkdf(32, key, sizeof(key), NULL, 0, out, 255 * 32 + 1), -EINVAL);
}

static void test_agent_digest__sha256_of_buffer_and_fd(void **st)
{
	char path[] = "/tmp/ln-digest-XXXXXX", hex[65], want[65];
	unsigned char md[32], ref[32];
	static unsigned char big[200000];
	size_t i;
	int fd;

	(void)st;
	ln_sha256("abc", 3, md);
	hex_of(md, 32, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	for (i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)(i * 7);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, big, sizeof(big)), (ssize_t)sizeof(big));
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(ln_sha256_fd_hex(fd, hex), 0);
	SHA256(big, sizeof(big), ref);
	hex_of(ref, 32, want);
	assert_string_equal(hex, want);
	close(fd);
	/* a read error is the errno, not a digest of what was read */
	assert_int_equal(ln_sha256_fd_hex(fd, hex), -EBADF);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_digest__rfc5869_case3),
	cmocka_unit_test(test_agent_digest__sha384_vector),
	cmocka_unit_test(test_agent_digest__hkdf_agrees_with_openssl),
	cmocka_unit_test(test_agent_digest__refusals),
	cmocka_unit_test(test_agent_digest__sha256_of_buffer_and_fd),
)
