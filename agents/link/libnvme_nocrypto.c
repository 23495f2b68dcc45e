// SPDX-License-Identifier: MIT
/*
 * Linked into the static agent only: libnvme 1.3 keeps nvme_open, which
 * the agent's scan needs, in the same object as nvme_gen_dhchap_key, the
 * one libnvme function that calls OpenSSL (its EVP_MAC HMAC). Without
 * these definitions that one reference links all of libcrypto, 2.5 MB of
 * a 5 MB agent. The agent never generates a DH-HMAC-CHAP key through
 * libnvme (the controller makes them, common/dhchap.c); if it ever did,
 * the call fails with EOPNOTSUPP instead of deriving anything. The agent's
 * own hashes come from nettle (agents/agent/core/digest.c).
 *
 * Not in libagent.a: the unit tests link the real libcrypto.
 */
#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

OSSL_LIB_CTX *OSSL_LIB_CTX_new(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

void OSSL_LIB_CTX_free(OSSL_LIB_CTX *ctx)
{
	(void)ctx;
}

EVP_MAC *EVP_MAC_fetch(OSSL_LIB_CTX *libctx, const char *algorithm, const char *properties)
{
	(void)libctx;
	(void)algorithm;
	(void)properties;
	errno = EOPNOTSUPP;
	return NULL;
}

void EVP_MAC_free(EVP_MAC *mac)
{
	(void)mac;
}

EVP_MAC_CTX *EVP_MAC_CTX_new(EVP_MAC *mac)
{
	(void)mac;
	errno = EOPNOTSUPP;
	return NULL;
}

void EVP_MAC_CTX_free(EVP_MAC_CTX *ctx)
{
	(void)ctx;
}

int EVP_MAC_init(EVP_MAC_CTX *ctx, const unsigned char *key, size_t keylen,
		 const OSSL_PARAM params[])
{
	(void)ctx;
	(void)key;
	(void)keylen;
	(void)params;
	return 0;
}

int EVP_MAC_update(EVP_MAC_CTX *ctx, const unsigned char *data, size_t datalen)
{
	(void)ctx;
	(void)data;
	(void)datalen;
	return 0;
}

int EVP_MAC_final(EVP_MAC_CTX *ctx, unsigned char *out, size_t *outl, size_t outsize)
{
	(void)ctx;
	(void)out;
	(void)outsize;
	if (outl)
		*outl = 0;
	return 0;
}

/* An empty parameter: the stubs above never read one. */
OSSL_PARAM OSSL_PARAM_construct_utf8_string(const char *key, char *buf, size_t bsize)
{
	OSSL_PARAM p;

	(void)key;
	(void)buf;
	(void)bsize;
	memset(&p, 0, sizeof(p));
	return p;
}

OSSL_PARAM OSSL_PARAM_construct_end(void)
{
	OSSL_PARAM p;

	memset(&p, 0, sizeof(p));
	return p;
}
