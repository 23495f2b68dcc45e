// SPDX-License-Identifier: MIT
/* The agent's hashes (see digest.h), from nettle. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nettle/hkdf.h>
#include <nettle/hmac.h>
#include <nettle/sha2.h>

#include "agents/agent/core/digest.h"

int ln_sha256_fd_hex(int fd, char hex[2 * LN_SHA256_LEN + 1])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[LN_SHA256_LEN], chunk[65536];
	struct sha256_ctx ctx;
	ssize_t n;
	size_t i;

	sha256_init(&ctx);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		sha256_update(&ctx, (size_t)n, chunk);
	if (n < 0)
		return -errno;
	sha256_digest(&ctx, sizeof(md), md);
	for (i = 0; i < sizeof(md); i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[2 * sizeof(md)] = '\0';
	return 0;
}

void ln_sha256(const void *data, size_t len, unsigned char out[LN_SHA256_LEN])
{
	struct sha256_ctx ctx;

	sha256_init(&ctx);
	sha256_update(&ctx, len, data);
	sha256_digest(&ctx, LN_SHA256_LEN, out);
}

int ln_hkdf(size_t hash_len, const unsigned char *key, size_t keylen, const unsigned char *info,
	    size_t infolen, unsigned char *out, size_t outlen)
{
	unsigned char prk[LN_SHA384_LEN];

	if (outlen > 255 * hash_len)
		return -EINVAL;
	if (hash_len == LN_SHA256_LEN) {
		struct hmac_sha256_ctx c;

		hmac_sha256_set_key(&c, 0, (const uint8_t *)"");
		hkdf_extract(&c, (nettle_hash_update_func *)hmac_sha256_update,
			     (nettle_hash_digest_func *)hmac_sha256_digest, hash_len, keylen, key, prk);
		hmac_sha256_set_key(&c, hash_len, prk);
		hkdf_expand(&c, (nettle_hash_update_func *)hmac_sha256_update,
			    (nettle_hash_digest_func *)hmac_sha256_digest, hash_len, infolen, info,
			    outlen, out);
		explicit_bzero(&c, sizeof(c));
	} else if (hash_len == LN_SHA384_LEN) {
		struct hmac_sha384_ctx c;

		hmac_sha384_set_key(&c, 0, (const uint8_t *)"");
		hkdf_extract(&c, (nettle_hash_update_func *)hmac_sha384_update,
			     (nettle_hash_digest_func *)hmac_sha384_digest, hash_len, keylen, key, prk);
		hmac_sha384_set_key(&c, hash_len, prk);
		hkdf_expand(&c, (nettle_hash_update_func *)hmac_sha384_update,
			    (nettle_hash_digest_func *)hmac_sha384_digest, hash_len, infolen, info,
			    outlen, out);
		explicit_bzero(&c, sizeof(c));
	} else {
		return -EINVAL;
	}
	explicit_bzero(prk, sizeof(prk));
	return 0;
}
