/* SPDX-License-Identifier: MIT */
/*
 * DH-HMAC-CHAP secrets: the format check both binaries run and the
 * generator `llmnet keys` uses. The decoded key lives only in stack
 * buffers that are wiped before return.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "dhchap.h"

#define PREFIX "DHHC-1:"
#define PREFIX_LEN (sizeof(PREFIX) - 1)
#define KEY_MAX 64
#define CRC_LEN 4

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

int ln_dhchap_check(const char *s, struct ln_buf *err)
{
	unsigned char key[KEY_MAX + CRC_LEN];
	const char *body, *end;
	size_t len;
	uint32_t crc;
	int n, r = -EINVAL;

	len = s ? strnlen(s, LN_DHCHAP_MAX) : 0;
	if (len == 0 || len >= LN_DHCHAP_MAX) {
		ln_buf_addstr(err, "secret is empty or too long");
		return -EINVAL;
	}
	if (strncmp(s, PREFIX, PREFIX_LEN) != 0) {
		ln_buf_addstr(err, "secret does not start with 'DHHC-1:'");
		return -EINVAL;
	}
	if (s[PREFIX_LEN] != '0' || s[PREFIX_LEN + 1] < '0' || s[PREFIX_LEN + 1] > '3' ||
	    s[PREFIX_LEN + 2] != ':') {
		ln_buf_addstr(err, "secret's transform is not 00, 01, 02 or 03");
		return -EINVAL;
	}
	body = s + PREFIX_LEN + 3;
	end = strchr(body, ':');
	if (!end || end[1] != '\0') {
		ln_buf_addstr(err, "secret does not end with a single ':'");
		return -EINVAL;
	}
	n = b64_decode(body, (size_t)(end - body), key, sizeof(key));
	if (n < 0) {
		ln_buf_addstr(err, "secret's key is not valid base64 of 36, 52 or 68 bytes");
		goto out;
	}
	if (n != 32 + CRC_LEN && n != 48 + CRC_LEN && n != 64 + CRC_LEN) {
		ln_buf_addstr(err, "secret's key is not 32, 48 or 64 bytes long");
		goto out;
	}
	n -= CRC_LEN;
	crc = (uint32_t)key[n] | (uint32_t)key[n + 1] << 8 | (uint32_t)key[n + 2] << 16 |
	      (uint32_t)key[n + 3] << 24;
	if (crc != ln_crc32(key, (size_t)n)) {
		ln_buf_addstr(err, "secret's CRC-32 does not match its key");
		goto out;
	}
	r = 0;
out:
	wipe(key, sizeof(key));
	return r;
}

int ln_dhchap_generate(char *out, size_t len)
{
	unsigned char key[32 + CRC_LEN];
	char text[((sizeof(key) + 2) / 3) * 4 + 1];
	size_t got = 0;
	uint32_t crc;
	int r = 0, n;

	if (!out || len < PREFIX_LEN + 3 + sizeof(text) + 1)
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
	n = snprintf(out, len, PREFIX "00:%s:", text);
	if (n < 0 || (size_t)n >= len)
		r = -ENOSPC;
out:
	wipe(key, sizeof(key));
	wipe(text, sizeof(text));
	if (r < 0)
		wipe(out, len);
	return r;
}

/* ---- NVMe/TCP TLS PSKs ------------------------------------------------ */

#define PSK_PREFIX "NVMeTLSkey-1:"
#define PSK_PREFIX_LEN (sizeof(PSK_PREFIX) - 1)

int ln_tls_psk_decode(const char *s, unsigned char *key, size_t max, struct ln_buf *err)
{
	unsigned char raw[48 + CRC_LEN];
	const char *body, *end;
	size_t len;
	uint32_t crc;
	int n, r = -EINVAL;

	len = s ? strnlen(s, LN_DHCHAP_MAX) : 0;
	if (len == 0 || len >= LN_DHCHAP_MAX) {
		ln_buf_addstr(err, "PSK is empty or too long");
		return -EINVAL;
	}
	if (strncmp(s, PSK_PREFIX, PSK_PREFIX_LEN) != 0) {
		ln_buf_addstr(err, "PSK does not start with 'NVMeTLSkey-1:'");
		return -EINVAL;
	}
	if (s[PSK_PREFIX_LEN] != '0' || (s[PSK_PREFIX_LEN + 1] != '1' &&
	    s[PSK_PREFIX_LEN + 1] != '2') || s[PSK_PREFIX_LEN + 2] != ':') {
		ln_buf_addstr(err, "PSK's hash is not 01 (SHA-256) or 02 (SHA-384)");
		return -EINVAL;
	}
	body = s + PSK_PREFIX_LEN + 3;
	end = strchr(body, ':');
	if (!end || end[1] != '\0') {
		ln_buf_addstr(err, "PSK does not end with a single ':'");
		return -EINVAL;
	}
	n = b64_decode(body, (size_t)(end - body), raw, sizeof(raw));
	if (n != (s[PSK_PREFIX_LEN + 1] == '1' ? 32 : 48) + CRC_LEN) {
		ln_buf_addstr(err, "PSK's key is not base64 of a 32-byte (01) or 48-byte (02) "
				   "key and its CRC-32");
		goto out;
	}
	n -= CRC_LEN;
	crc = (uint32_t)raw[n] | (uint32_t)raw[n + 1] << 8 | (uint32_t)raw[n + 2] << 16 |
	      (uint32_t)raw[n + 3] << 24;
	if (crc != ln_crc32(raw, (size_t)n)) {
		ln_buf_addstr(err, "PSK's CRC-32 does not match its key");
		goto out;
	}
	if (key) {
		if ((size_t)n > max) {
			ln_buf_addstr(err, "PSK's key is too long");
			goto out;
		}
		memcpy(key, raw, (size_t)n);
	}
	r = n;
out:
	wipe(raw, sizeof(raw));
	return r;
}

int ln_tls_psk_check(const char *s, struct ln_buf *err)
{
	int n = ln_tls_psk_decode(s, NULL, 0, err);

	return n < 0 ? n : 0;
}

int ln_tls_psk_generate(char *out, size_t len)
{
	unsigned char key[32 + CRC_LEN];
	char text[((sizeof(key) + 2) / 3) * 4 + 1];
	size_t got = 0;
	uint32_t crc;
	int r = 0, n;

	if (!out || len < PSK_PREFIX_LEN + 3 + sizeof(text) + 1)
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
	n = snprintf(out, len, PSK_PREFIX "01:%s:", text);
	if (n < 0 || (size_t)n >= len)
		r = -ENOSPC;
out:
	wipe(key, sizeof(key));
	wipe(text, sizeof(text));
	if (r < 0)
		wipe(out, len);
	return r;
}
