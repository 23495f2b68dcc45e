/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP TLS on a node (tlspsk.c): the TLS PSK derived from a configured
 * PSK and put in the kernel's .nvme keyring, and whether the node can do
 * TLS at all (the keyring, tlshd). Nothing here prints a key.
 */
#ifndef LN_AGENT_TLSPSK_H
#define LN_AGENT_TLSPSK_H

#include <stddef.h>

struct ln_agent;
struct ln_buf;

#define LN_TLS_KEY_MAX 48
#define LN_TLS_IDENTITY_MAX 600

/* The identity and TLS PSK (len 32 or 48 into key, LN_TLS_KEY_MAX) that
 * hostnqn and subnqn use with configured PSK psk; 0 or negative with err. */
int ln_tls_psk_derive(const char *psk, const char *hostnqn, const char *subnqn,
		      char *identity, size_t idsize, unsigned char *key, size_t *keylen,
		      struct ln_buf *err);
/* Derive and add_key(2) it to .nvme (a change: failpoint, dry run); the
 * identity goes to identity. 0 or negative with err. */
int ln_tls_psk_insert(struct ln_agent *a, const char *psk, const char *hostnqn,
		      const char *subnqn, char *identity, size_t idsize, struct ln_buf *err);
/* The serial of the key of type and description desc in /proc/keys, or 0. */
long ln_proc_key_serial(const struct ln_agent *a, const char *type, const char *desc);
/* The serial of the keyring called name in /proc/keys, or 0. */
long ln_keyring_serial(const struct ln_agent *a, const char *name);
/* 1 when tlshd runs on the node. */
int ln_tlshd_running(const struct ln_agent *a);
/* 0 when the node can do NVMe/TCP TLS (the .nvme keyring, unless keyring
 * is 0, and tlshd running), else negative with why in err. */
int ln_tls_ready(const struct ln_agent *a, int keyring, struct ln_buf *err);

#endif
