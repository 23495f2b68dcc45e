/* SPDX-License-Identifier: MIT */
/*
 * DH-HMAC-CHAP secrets in the NVMe representation both ends use:
 * "DHHC-1:NN:" with NN the transform (00 none, 01 SHA-256, 02 SHA-384,
 * 03 SHA-512), then base64 of the key (32, 48 or 64 bytes) followed by its
 * CRC-32 (zlib's polynomial, little-endian), then ":". The controller
 * checks a secret before it sends it and the agent checks it again before
 * the kernel sees it, since the kernel fails late on a bad one. Nothing
 * here ever copies a secret into a message.
 */
#ifndef LN_DHCHAP_H
#define LN_DHCHAP_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Longer than any valid secret (a 64-byte key is 106 characters): a buffer
 * of this size holds a secret and its NUL. */
#define LN_DHCHAP_MAX 256

/*
 * The DH-HMAC-CHAP hashes and DH groups, defined once for both ends, each
 * list NULL-terminated and in the order of the spec's enum ln_dhchap_hash
 * and enum ln_dhchap_group (orchestrator/spec/spec.h): the names the spec,
 * lint -o json and the request write. The agent takes a hash by either
 * name and writes the kernel's "hmac(NAME)" to a host entry's dhchap_hash;
 * "null" (no DH exchange, the HMAC alone) is the kernel's own group name.
 */
#define LN_DHCHAP_HASHES 3
#define LN_DHCHAP_GROUPS 6
extern const char *const ln_dhchap_hash_names[];	/* "sha256", "sha384", "sha512" */
extern const char *const ln_dhchap_hash_kernel[];	/* "hmac(sha256)" .. */
extern const char *const ln_dhchap_group_names[];	/* "ffdhe2048" .. "ffdhe8192", "null" */

/* The index of name in names (a NULL-terminated list above), or -1. */
int ln_dhchap_name_index(const char *const *names, const char *name);

/* 0 when s is a well-formed secret; -EINVAL otherwise, with why in err
 * (the rule broken, never any part of s). */
int ln_dhchap_check(const char *s, struct ln_buf *err);

/* Write a new secret into out (len bytes, at least LN_DHCHAP_MAX is always
 * enough): transform 00, 32 bytes from getrandom(2). 0 or -errno; out is
 * wiped on failure. */
int ln_dhchap_generate(char *out, size_t len);

/* CRC-32 as zlib computes it (reflected, polynomial 0xEDB88320). */
uint32_t ln_crc32(const void *data, size_t len);

/*
 * NVMe/TCP TLS pre-shared keys in the interchange format nvme-cli's
 * gen-tls-key writes: "NVMeTLSkey-1:HH:" with HH the hash of the retained
 * PSK's derivation (01 SHA-256 with a 32-byte key, 02 SHA-384 with 48),
 * then base64 of the key and its CRC-32 (as DHHC-1), then ":".
 * ln_tls_psk_decode: the key's length (32 or 48), the key copied into key
 * (max bytes; NULL: only checked), or -EINVAL with why in err (never any
 * part of s).
 */
int ln_tls_psk_decode(const char *s, unsigned char *key, size_t max, struct ln_buf *err);
/* 0 when s is a well-formed PSK; -EINVAL with why in err. */
int ln_tls_psk_check(const char *s, struct ln_buf *err);
/* A new PSK into out (len >= LN_DHCHAP_MAX is enough): hash 01, 32 bytes
 * from getrandom(2). 0 or -errno; out is wiped on failure. */
int ln_tls_psk_generate(char *out, size_t len);

#endif
