/* SPDX-License-Identifier: MIT */
/*
 * Inside the request parser (request.h is its face): the field readers
 * every part shares (request_fields.c), and the parts request.c drives,
 * a target (request_target.c) and an initiator (request_init.c). Every
 * reader appends "request: WHERE: what is wrong" to err and returns
 * -LN_EREQUEST (or -ENOMEM); a secret's value is never in a message.
 */
#ifndef LN_AGENT_REQUEST_IMPL_H
#define LN_AGENT_REQUEST_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "agents/agent/core/request.h"
#include "agents/agent/core/valid.h"

struct json_object;
struct ln_buf;
struct ln_secret_holder;

/* "request: WHERE: " (WHERE left out when it is "request") and the
 * message; returns -LN_EREQUEST. */
int rq_bad(struct ln_buf *err, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Keys seen so far in one list, for the duplicate checks: an open-addressed
 * hash table of (pointer, length) into the request's own strings, so a
 * request of n entries is checked in O(n), not O(n^2). The caller frees
 * slot.
 */
struct rq_seen {
	struct rq_seen_slot {
		const void *p;
		size_t n;
	} *slot;
	size_t mask;
};

/* Room for n keys; 0 or -ENOMEM. */
int rq_seen_init(struct rq_seen *s, size_t n);
/* 1 if the key was seen before, 0 once it is recorded. */
int rq_seen_add(struct rq_seen *s, const void *p, size_t n);

/* A zeroed list for the items of the array a, one more than them (the
 * last stays zero), into *list and their count into *n; seen made ready
 * for them. 0 or -ENOMEM. */
int rq_new_list(struct json_object *a, void **list, size_t *n, size_t elem, struct rq_seen *s);
#define RQ_NEW_LIST(a, list, n, s) rq_new_list((a), (void **)&(list), &(n), sizeof(*(list)), (s))

/* The typed readers: a missing optional key is -ENOENT (*out untouched);
 * a missing required one, a wrong type or a value out of lo-hi is
 * -LN_EREQUEST with the message. */
int rq_get_int(struct json_object *o, const char *key, int required, int64_t lo, int64_t hi,
	       int64_t *out, const char *where, struct ln_buf *err);
int rq_get_str(struct json_object *o, const char *key, int required, const char **out,
	       const char *where, struct ln_buf *err);
/* An absolute, normalized path; an optional one that is absent is NULL. */
int rq_get_path(struct json_object *o, const char *key, int required, const char **out,
		const char *where, struct ln_buf *err);
/* A path llmnet writes must not be in a system place (common/places.h). */
int rq_own_place(const char *key, const char *path, const char *where, struct ln_buf *err);
/* Only keys (NULL-terminated) in o; the message lists the allowed ones. */
int rq_check_keys(struct json_object *o, const char *const *keys, const char *where,
		  struct ln_buf *err);
/* An optional identity: with serial 16 lower-case hex digits, else a
 * uuid/nguid in 8-4-4-4-12 lower-case form, not all zero; absent: NULL. */
int rq_get_ident(struct json_object *o, const char *key, int serial, const char **out,
		 const char *where, struct ln_buf *err);

/* What a target and an initiator open with: only known keys, then the
 * NQN under key (said before it when invalid), then the endpoint
 * (transport, numeric address and its family, service as text). */
int rq_parse_head(struct json_object *o, const char *const *keys, const char *key,
		  const char *said, const char **nqn, const char **transport,
		  const char **address, const char **family, char *service, const char *where,
		  struct ln_buf *err);

/* The optional object o.key (*out): 0 when absent; 1 with its place
 * "WHERE.key" in w and its keys checked (when keys is not NULL); or the
 * check's negative code. */
int rq_section(struct json_object *o, const char *key, const char *const *keys,
	       const char *where, char *w, size_t size, struct json_object **out,
	       struct ln_buf *err);

/* "tls": "required" (a tcp endpoint only); 1 in *tls, or 0 when absent. */
int rq_get_tls(struct json_object *o, const char *transport, int *tls, const char *where,
	       struct ln_buf *err);

/* The secrets of holder h (common/secret_fields.h) in o, by slot into
 * out: the key (required), the controller's, and the TLS PSK (required
 * with tls, refused without: what names the object); each checked
 * (length, CRC) before anything on the node is touched. */
int rq_get_secrets(struct json_object *o, const struct ln_secret_holder *h, int tls,
		   const char *what, const char **out, const char *where, struct ln_buf *err);

/* request_target.c: targets[i] at where. */
int rq_parse_target(struct json_object *o, struct ln_req_target *t, const char *where,
		    struct ln_buf *err);
/* request_init.c: initiators[i] at where. */
int rq_parse_init(struct json_object *o, struct ln_req_init *in, const char *where,
		  struct ln_buf *err);

#endif
