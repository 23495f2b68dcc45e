/* SPDX-License-Identifier: MIT */
/*
 * The secret fields of an agent request (docs/agent-protocol.md), listed
 * once for both ends. A DH-HMAC-CHAP secret, a controller secret or an
 * NVMe/TCP TLS PSK sits in one of two kinds of holder: an entry of a
 * target's targets[].dhchap.keys (one per host) or an initiator's
 * initiators[].dhchap. The controller's redaction (orchestrator/secrets.c),
 * the agent's request parser (agents/agent/core/), its persist strip and
 * restore (converge/persist.c) and its node key store (converge/keystore.c)
 * all go by this list, so a field added here is checked, redacted,
 * stripped and stored everywhere; test_secrets fails on a secret the
 * controller puts in a request anywhere else.
 */
#ifndef LN_SECRET_FIELDS_H
#define LN_SECRET_FIELDS_H

#include <stddef.h>

struct json_object;

/* The secrets of one holder, in the order every walk takes them. */
enum ln_secret_slot {
	LN_SECRET_KEY = 0,	/* the host's DH-HMAC-CHAP secret: always there */
	LN_SECRET_CTRL_KEY,	/* the controller's: bidirectional only */
	LN_SECRET_PSK,		/* the NVMe/TCP TLS PSK (NVMeTLSkey-1): tls only */
	LN_SECRET_SLOTS,
};

/* The holders, in the order every walk takes them. */
enum ln_secret_holder_kind {
	LN_SECRET_HOST = 0,	/* targets[].dhchap.keys[]: one host's, on a target */
	LN_SECRET_CONNECT,	/* initiators[].dhchap: one connect's */
	LN_SECRET_HOLDERS,
};

struct ln_secret_holder {
	const char *list;	/* the request's list: "targets", "initiators" */
	/* the list in an item's "dhchap" whose entries are the holders
	 * ("keys"), or NULL: the item's "dhchap" is the holder */
	const char *entries;
	/* the string naming the holder: a field of the holder with entries
	 * (a keys entry's "host"), else of the list item (an initiator's
	 * "target") */
	const char *name;
	/* the node key store's files: "<store>-<name>.<ln_secret_ext[slot]>" */
	const char *store;
	const char *field[LN_SECRET_SLOTS];	/* the JSON keys, by slot */
};

/* Indexed by enum ln_secret_holder_kind. */
extern const struct ln_secret_holder ln_secret_holders[LN_SECRET_HOLDERS];
/* By slot: "key", "ctrl.key", "psk" (the key store's and the controller's
 * KEY_DIR files end so). */
extern const char *const ln_secret_ext[LN_SECRET_SLOTS];

/*
 * One holder of a request: its object, what kind it is, the index of its
 * item in h->list, and its name (NULL when absent). A negative return
 * stops the walk.
 */
typedef int ln_secret_fn(struct json_object *holder, const struct ln_secret_holder *h,
			 size_t item, const char *name, void *arg);

/*
 * Call fn for every holder object in req: the targets' keys entries in
 * order, then the initiators' dhchap objects; a list, an entries list or
 * a holder of the wrong type is passed over. The holder's fields are for
 * fn to read, replace or delete. 0, or the first negative fn returned.
 */
int ln_secret_fields_walk(struct json_object *req, ln_secret_fn *fn, void *arg);

/* fn(holder, key) for every secret field of every holder in req (present
 * or not), in the walk's order: what redaction and the persist strip do
 * to each. */
void ln_secret_fields_each(struct json_object *req,
			   void (*fn)(struct json_object *holder, const char *key));

#endif
