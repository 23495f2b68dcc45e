/* SPDX-License-Identifier: MIT */
/*
 * DH-HMAC-CHAP secrets: the format check both binaries run and the
 * generator `llmnet keys` uses, and the hash and group names both ends
 * speak. The decoded key lives only in stack buffers that are wiped before
 * return.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "dhchap.h"

#define PREFIX "DHHC-1:"
#define PSK_PREFIX "NVMeTLSkey-1:"
#define KEY_MAX 64
#define CRC_LEN 4

const char *const ln_dhchap_hash_names[] = { "sha256", "sha384", "sha512", NULL };
const char *const ln_dhchap_hash_kernel[] = { "hmac(sha256)", "hmac(sha384)", "hmac(sha512)",
					      NULL };
const char *const ln_dhchap_group_names[] = { "ffdhe2048", "ffdhe3072", "ffdhe4096",
					      "ffdhe6144", "ffdhe8192", "null", NULL };

int ln_dhchap_name_index(const char *const *names, const char *name)
{
	int i;

	for (i = 0; name && names[i]; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

uint32_t ln_crc32(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint32_t crc = 0xffffffffu;
	size_t i;
	int k;

	for (i = 0; i < len; i++) {
		crc ^= p[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
	}
	return crc ^ 0xffffffffu;
}

/* Wipe in a way the compiler may not drop as a dead store. */
static void wipe(void *p, size_t n)
{
	explicit_bzero(p, n);
}

static int b64_value(char c)
{
	const char *q = c ? strchr(b64, c) : NULL;

	return q ? (int)(q - b64) : -1;
}

/* Strict base64 (padding required, no whitespace) of n characters into out
 * (room for max bytes); the byte count, or -1. */
static int b64_decode(const char *s, size_t n, unsigned char *out, size_t max)
{
	size_t i, o = 0;

	if (n == 0 || n % 4)
		return -1;
	for (i = 0; i < n; i += 4) {
		int v[4], k, pad = 0;

		for (k = 0; k < 4; k++) {
			if (s[i + k] == '=' && i + 4 == n && k >= 2) {
				v[k] = 0;
				pad++;
				continue;
			}
			if (pad)
				return -1;
			v[k] = b64_value(s[i + k]);
			if (v[k] < 0)
				return -1;
		}
		if (o + 3 - pad > max)
			return -1;
		out[o++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
		if (pad < 2)
			out[o++] = (unsigned char)((v[1] & 15) << 4 | v[2] >> 2);
		if (pad < 1)
			out[o++] = (unsigned char)((v[2] & 3) << 6 | v[3]);
	}
	return (int)o;
}

static void b64_encode(const unsigned char *in, size_t n, char *out)
{
	size_t i, o = 0;

	for (i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16;

		if (i + 1 < n)
			v |= (unsigned)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	out[o] = '\0';
}

/*
 * What a DH-HMAC-CHAP secret and an NVMe/TCP TLS PSK share:
 * "<prefix>0T:<base64 of the key and its CRC-32, little-endian>:", with T
 * the transform (a secret) or the hash (a PSK). The messages name `what`.
 */
struct key_text {
	const char *what;
	const char *prefix;
	const char *digits;	 /* the T allowed */
	const char *bad_digit;	 /* when T is not */
	const char *bad_base64;	 /* when the text between the ':'s is not base64 */
	const char *bad_len;	 /* when len_ok refuses the key's length */
	int (*len_ok)(char digit, int n);
};

/* Decode s into raw (room for size bytes): the key's length, raw holding the
 * key, or -EINVAL with what is wrong in err. The caller wipes raw. */
static int decode_key(const struct key_text *k, const char *s, unsigned char *raw, size_t size,
		      struct ln_buf *err)
{
	size_t plen = strlen(k->prefix), len = s ? strnlen(s, LN_DHCHAP_MAX) : 0;
	const char *body, *end;
	uint32_t crc;
	int n;

	if (len == 0 || len >= LN_DHCHAP_MAX) {
		ln_buf_addf(err, "%s is empty or too long", k->what);
		return -EINVAL;
	}
	if (strncmp(s, k->prefix, plen) != 0) {
		ln_buf_addf(err, "%s does not start with '%s'", k->what, k->prefix);
		return -EINVAL;
	}
	if (s[plen] != '0' || !s[plen + 1] || !strchr(k->digits, s[plen + 1]) ||
	    s[plen + 2] != ':') {
		ln_buf_addstr(err, k->bad_digit);
		return -EINVAL;
	}
	body = s + plen + 3;
	end = strchr(body, ':');
	if (!end || end[1] != '\0') {
		ln_buf_addf(err, "%s does not end with a single ':'", k->what);
		return -EINVAL;
	}
	n = b64_decode(body, (size_t)(end - body), raw, size);
	if (n < 0) {
		ln_buf_addstr(err, k->bad_base64);
		return -EINVAL;
	}
	n -= CRC_LEN;
	if (!k->len_ok(s[plen + 1], n)) {
		ln_buf_addstr(err, k->bad_len);
		return -EINVAL;
	}
	crc = (uint32_t)raw[n] | (uint32_t)raw[n + 1] << 8 | (uint32_t)raw[n + 2] << 16 |
	      (uint32_t)raw[n + 3] << 24;
	if (crc != ln_crc32(raw, (size_t)n)) {
		ln_buf_addf(err, "%s's CRC-32 does not match its key", k->what);
		return -EINVAL;
	}
	return n;
}

/* A new 32-byte key from getrandom(2), as prefix (up to and with the
 * transform's ':') "<base64 of key and CRC-32>:" in out; 0 or -errno, out
 * wiped on failure. */
static int generate_key(const char *prefix, char *out, size_t len)
{
	unsigned char key[32 + CRC_LEN];
	char text[((sizeof(key) + 2) / 3) * 4 + 1];
	size_t got = 0;
	uint32_t crc;
	int r = 0, n;

	if (!out || len < strlen(prefix) + sizeof(text) + 1)
		return -ENOSPC;
	while (got < 32) {
		ssize_t k = getrandom(key + got, 32 - got, 0);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto out;
		}
		got += (size_t)k;
	}
	crc = ln_crc32(key, 32);
	key[32] = (unsigned char)crc;
	key[33] = (unsigned char)(crc >> 8);
	key[34] = (unsigned char)(crc >> 16);
	key[35] = (unsigned char)(crc >> 24);
	b64_encode(key, sizeof(key), text);
	n = snprintf(out, len, "%s%s:", prefix, text);
	if (n < 0 || (size_t)n >= len)
		r = -ENOSPC;
out:
	if (r < 0)
		wipe(out, len);
	wipe(key, sizeof(key));
	wipe(text, sizeof(text));
	return r;
}

static int dhchap_len_ok(char digit, int n)
{
	(void)digit;
	return n == 32 || n == 48 || n == 64;
}

/* 01 is SHA-256 and a 32-byte key, 02 SHA-384 and a 48-byte one. */
static int psk_len_ok(char digit, int n)
{
	return n == (digit == '1' ? 32 : 48);
}

#define PSK_BAD_KEY "PSK's key is not base64 of a 32-byte (01) or 48-byte (02) key and its CRC-32"

static const struct key_text dhchap_text = {
	"secret", PREFIX, "0123", "secret's transform is not 00, 01, 02 or 03",
	"secret's key is not valid base64 of 36, 52 or 68 bytes",
	"secret's key is not 32, 48 or 64 bytes long", dhchap_len_ok,
}, psk_text = {
	"PSK", PSK_PREFIX, "12", "PSK's hash is not 01 (SHA-256) or 02 (SHA-384)", PSK_BAD_KEY,
	PSK_BAD_KEY, psk_len_ok,
};

/* ---- DH-HMAC-CHAP secrets --------------------------------------------- */

int ln_dhchap_check(const char *s, struct ln_buf *err)
{
	unsigned char key[KEY_MAX + CRC_LEN];
	int n = decode_key(&dhchap_text, s, key, sizeof(key), err);

	wipe(key, sizeof(key));
	return n < 0 ? n : 0;
}

int ln_dhchap_generate(char *out, size_t len)
{
	return generate_key(PREFIX "00:", out, len);
}

/* ---- NVMe/TCP TLS PSKs ------------------------------------------------ */

int ln_tls_psk_decode(const char *s, unsigned char *key, size_t max, struct ln_buf *err)
{
	unsigned char raw[48 + CRC_LEN];
	int n = decode_key(&psk_text, s, raw, sizeof(raw), err);

	if (n >= 0 && key) {
		if ((size_t)n > max) {
			ln_buf_addstr(err, "PSK's key is too long");
			n = -EINVAL;
		} else {
			memcpy(key, raw, (size_t)n);
		}
	}
	wipe(raw, sizeof(raw));
	return n;
}

int ln_tls_psk_check(const char *s, struct ln_buf *err)
{
	int n = ln_tls_psk_decode(s, NULL, 0, err);

	return n < 0 ? n : 0;
}

int ln_tls_psk_generate(char *out, size_t len)
{
	return generate_key(PSK_PREFIX "01:", out, len);
}
