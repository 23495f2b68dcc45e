/* SPDX-License-Identifier: MIT */
/*
 * The agent's hashes, from nettle: SHA-256 of a file (the binary's
 * identity, the probes' allow-list check), of a buffer (a PSK's
 * fingerprint), and the HKDF of the NVMe/TCP TLS PSK. nettle is static,
 * small and has exactly these; OpenSSL's libcrypto was 2.5 MB of the
 * 5 MB agent for the same three things.
 */
#ifndef LN_AGENT_DIGEST_H
#define LN_AGENT_DIGEST_H

#include <stddef.h>

#define LN_SHA256_LEN 32
#define LN_SHA384_LEN 48

/* SHA-256 of what fd reads from its offset to the end, as 64 lower-case
 * hex digits. -errno when a read fails. */
int ln_sha256_fd_hex(int fd, char hex[2 * LN_SHA256_LEN + 1]);

void ln_sha256(const void *data, size_t len, unsigned char out[LN_SHA256_LEN]);

/* RFC 5869 HKDF (extract with an empty salt, then expand) with HMAC-SHA-256
 * (hash_len 32) or HMAC-SHA-384 (48): outlen bytes into out. -EINVAL for
 * another hash_len or outlen > 255 * hash_len. */
int ln_hkdf(size_t hash_len, const unsigned char *key, size_t keylen, const unsigned char *info,
	    size_t infolen, unsigned char *out, size_t outlen);

#endif
