/* SPDX-License-Identifier: MIT */
/*
 * DH-HMAC-CHAP secrets on the controller. A target's `dhchap.key_dir`
 * holds one secret per (target node, host node):
 * KEY_DIR/<target-node>/<host-node>.key and, when bidirectional, .ctrl.key,
 * and when the target has tls, the NVMe/TCP TLS PSK .psk (interchange
 * format, NVMeTLSkey-1),
 * each 0600 (no group or other access) in 0700 directories, all owned by
 * the user running llmnet. plan and apply load every secret the spec needs
 * before any node is contacted (ln_secrets_load) and refuse a missing,
 * malformed or loosely permitted file by name; `llmnet keys` makes the
 * missing ones (ln_secrets_make). A secret leaves this module only in the
 * agent's request body; ln_secrets_redact() takes it out of any copy that
 * is kept or shown.
 */
#ifndef LN_SECRETS_H
#define LN_SECRETS_H

#include <stddef.h>
#include <json-c/json.h>

#include "common/buf.h"
#include "common/dhchap.h"
#include "orchestrator/spec/spec.h"

struct ln_secret {
	size_t target_node, host_node;		/* spec->nodes indexes */
	char key[LN_DHCHAP_MAX];		/* the host's secret */
	char ctrl_key[LN_DHCHAP_MAX];		/* the controller's; "" unless bidirectional */
	char psk[LN_DHCHAP_MAX];		/* the TLS PSK (.psk); "" unless tls */
};

struct ln_secrets {
	struct ln_secret *v;			/* sorted by (target_node, host_node) */
	size_t n;
};

/*
 * Read every secret spec's targets need. 0 with *out set (NULL when no
 * target has dhchap), or -LN_ESPEC with one line per bad file in err
 * (the path and what is wrong, never the content), or -ENOMEM.
 */
int ln_secrets_load(const struct ln_spec *spec, struct ln_secrets **out, struct ln_buf *err);

/* The secrets of (target node, host node), or NULL. */
const struct ln_secret *ln_secrets_find(const struct ln_secrets *s, size_t target_node,
					size_t host_node);

/* Wipe and free (NULL-safe). */
void ln_secrets_free(struct ln_secrets *s);

/*
 * Create every missing secret the spec needs (and the 0700 directories on
 * the way), each written atomically and never over an existing file.
 * made receives one path per line for each file created. 0, or a negative
 * code with the reason in err (the files made before it stay).
 */
int ln_secrets_make(const struct ln_spec *spec, struct ln_buf *made, struct ln_buf *err);

/* Replace every secret in an agent request (each field of
 * common/secret_fields.h: targets[].dhchap.keys[].key, .ctrl_key, .psk,
 * initiators[].dhchap.secret, .ctrl_secret, .psk) with a fingerprint
 * ("redacted:" and 16 hex digits of its SHA-256), so a kept or printed
 * copy still shows that a secret changed, never the secret. */
void ln_secrets_redact(struct json_object *req);

#endif
