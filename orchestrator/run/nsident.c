// SPDX-License-Identifier: MIT
/* Stable namespace identity: see nsident.h for the derivation. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <openssl/sha.h>

#include "orchestrator/run/nsident.h"

static void digest(const char *text, unsigned char md[SHA256_DIGEST_LENGTH])
{
	SHA256((const unsigned char *)text, strlen(text), md);
}

/* 16 bytes as 8-4-4-4-12 lower-case hex. */
static void uuid_form(const unsigned char *b, char out[LN_UUID_LEN + 1])
{
	size_t i, o = 0;

	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		snprintf(out + o, 3, "%02x", b[i]);
		o += 2;
	}
	out[o] = '\0';
}

void ln_nsident_serial(const char *cluster, const char *nqn, char out[LN_SERIAL_LEN + 1])
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	char text[600];
	size_t i;

	snprintf(text, sizeof(text), "llmnet/%s/%s", cluster, nqn);
	digest(text, md);
	for (i = 0; i < LN_SERIAL_LEN / 2; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

void ln_nsident_ns(const char *cluster, const char *nqn, uint32_t nsid, char uuid[LN_UUID_LEN + 1],
		   char nguid[LN_UUID_LEN + 1])
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	char text[620];

	snprintf(text, sizeof(text), "llmnet/%s/%s/%" PRIu32, cluster, nqn, nsid);
	digest(text, md);
	uuid_form(md + 16, nguid);
	md[6] = (unsigned char)((md[6] & 0x0f) | 0x80);	/* version 8 */
	md[8] = (unsigned char)((md[8] & 0x3f) | 0x80);	/* variant 10 */
	uuid_form(md, uuid);
}
