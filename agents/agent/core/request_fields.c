/* SPDX-License-Identifier: MIT */
/*
 * The request's field readers, shared by its parts (request_impl.h): typed
 * getters that say where a value is wrong, the duplicate-key table, and
 * what targets and initiators both have (the endpoint, tls, a section, a
 * holder's secrets). They read the parsed JSON only.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/request_impl.h"
#include "common/dhchap.h"
#include "common/error.h"
#include "common/json.h"
#include "common/nvme.h"
#include "common/places.h"
#include "common/secret_fields.h"

/* "request: " then where, said once when where is the request itself. */
static void prefix(struct ln_buf *err, const char *where)
{
	ln_buf_addstr(err, "request: ");
	if (strcmp(where, "request"))
		ln_buf_addf(err, "%s: ", where);
}

int rq_bad(struct ln_buf *err, const char *where, const char *fmt, ...)
{
	va_list ap;

	prefix(err, where);
	va_start(ap, fmt);
	ln_buf_vaddf(err, fmt, ap);
	va_end(ap);
	return -LN_EREQUEST;
}

int rq_seen_init(struct rq_seen *s, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n)
		cap *= 2;
	s->slot = calloc(cap, sizeof(*s->slot));
	s->mask = cap - 1;
	return s->slot ? 0 : -ENOMEM;
}

int rq_new_list(struct json_object *a, void **list, size_t *n, size_t elem, struct rq_seen *s)
{
	*n = json_object_array_length(a);
	*list = calloc(*n + 1, elem);
	if (!*list)
		return -ENOMEM;
	return rq_seen_init(s, *n);
}

/* FNV-1a over the key, then linear probing. */
int rq_seen_add(struct rq_seen *s, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	for (i = (size_t)h & s->mask; s->slot[i].p; i = (i + 1) & s->mask)
		if (s->slot[i].n == n && !memcmp(s->slot[i].p, p, n))
			return 1;
	s->slot[i].p = p;
	s->slot[i].n = n;
	return 0;
}

int rq_get_int(struct json_object *o, const char *key, int required, int64_t lo, int64_t hi,
	       int64_t *out, const char *where, struct ln_buf *err)
{
	struct ln_buf e = LN_BUF_INIT;
	int r = ln_json_get_i64(o, key, required, out, &e);

	if (r == -ENOENT) {
		ln_buf_release(&e);
		return r;
	}
	if (r < 0) {
		prefix(err, where);
		ln_buf_addstr(err, e.buf);
		ln_buf_release(&e);
		return r;
	}
	ln_buf_release(&e);
	if (*out < lo || *out > hi) {
		prefix(err, where);
		ln_buf_addf(err, "'%s' must be %lld-%lld, not %lld", key,
			    (long long)lo, (long long)hi, (long long)*out);
		return -LN_EREQUEST;
	}
	return 0;
}

int rq_get_str(struct json_object *o, const char *key, int required, const char **out,
	       const char *where, struct ln_buf *err)
{
	struct ln_buf e = LN_BUF_INIT;
	int r = ln_json_get_str(o, key, required, out, &e);

	if (r < 0 && r != -ENOENT) {
		prefix(err, where);
		ln_buf_addstr(err, e.buf);
	}
	ln_buf_release(&e);
	return r;
}

/* A string under key that must be an absolute, normalized path; an
 * optional one that is absent is NULL. */
int rq_get_path(struct json_object *o, const char *key, int required, const char **out,
		const char *where, struct ln_buf *err)
{
	int r = rq_get_str(o, key, required, out, where, err);

	if (r == -ENOENT && !required) {
		*out = NULL;
		return 0;
	}
	if (r < 0)
		return r;
	if (!ln_valid_abs_path(*out))
		return rq_bad(err, where, "%s '%s' must be an absolute, normalized path", key,
			      *out);
	return 0;
}

/* A path llmnet writes (hostfile, backing file, mount point) must not be
 * in a system place: lint refuses it, and the agent refuses it again,
 * whoever wrote the request (common/places.h). */
int rq_own_place(const char *key, const char *path, const char *where, struct ln_buf *err)
{
	struct ln_buf why = LN_BUF_INIT;
	int r = 0;

	if (ln_place_check(key, path, &why) < 0)
		r = rq_bad(err, where, "%s", why.buf);
	ln_buf_release(&why);
	return r;
}

int rq_check_keys(struct json_object *o, const char *const *keys, const char *where,
		  struct ln_buf *err)
{
	struct ln_buf e = LN_BUF_INIT;
	int r = ln_json_check_keys(o, keys, where, &e);

	if (r < 0) {
		const char *const *k;

		ln_buf_addf(err, "%s%s (allowed:", strncmp(e.buf, "request", 7) ? "request: " : "",
			    e.buf);
		for (k = keys; *k; k++)
			ln_buf_addf(err, " %s", *k);
		ln_buf_addstr(err, ")");
	}
	ln_buf_release(&e);
	return r;
}

/* n hex digits, lower case: what the controller derives (nsident.h). */
static int lower_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* An optional identity string: a uuid/nguid in 8-4-4-4-12 lower-case form
 * (not all zero: NVMe reads zero as "none"), or a 16-digit serial. */
int rq_get_ident(struct json_object *o, const char *key, int serial, const char **out,
		 const char *where, struct ln_buf *err)
{
	const char *s;
	int r = rq_get_str(o, key, 0, out, where, err), ok;

	if (r == -ENOENT) {
		*out = NULL;
		return 0;
	}
	if (r < 0)
		return r;
	s = *out;
	if (serial)
		ok = strlen(s) == 16 && lower_hex(s, 16);
	else
		ok = strlen(s) == 36 && lower_hex(s, 8) && s[8] == '-' && lower_hex(s + 9, 4) &&
		     s[13] == '-' && lower_hex(s + 14, 4) && s[18] == '-' &&
		     lower_hex(s + 19, 4) && s[23] == '-' && lower_hex(s + 24, 12) &&
		     strspn(s, "0-") != 36;
	if (!ok)
		return rq_bad(err, where, "%s '%s' must be %s", key, s,
			      serial ? "16 lower-case hex digits"
				     : "8-4-4-4-12 lower-case hex digits, not all zero");
	return 0;
}

static int parse_endpoint(struct json_object *o, const char **transport, const char **address,
			  const char **family, char *service, const char *where, struct ln_buf *err)
{
	int64_t v;
	int r;

	if ((r = rq_get_str(o, "transport", 1, transport, where, err)) < 0)
		return r;
	if (strcmp(*transport, "tcp") && strcmp(*transport, "rdma"))
		return rq_bad(err, where, "transport '%s' must be tcp or rdma", *transport);
	if ((r = rq_get_str(o, "address", 1, address, where, err)) < 0)
		return r;
	if (!ln_valid_addr(*address, family))
		return rq_bad(err, where, "address '%s' must be a numeric IPv4 or IPv6 address",
			      *address);
	r = rq_get_int(o, "service", 1, 1, 65535, &v, where, err);
	if (r < 0)
		return r;
	snprintf(service, 8, "%d", (int)v);
	return 0;
}

/* A secret under key, a TLS PSK with psk, else a DH-HMAC-CHAP secret:
 * checked (length, CRC) before anything on the node is touched; the
 * message names the field, never the value. */
static int get_secret(struct json_object *o, const char *key, int psk, int required,
		      const char **out, const char *where, struct ln_buf *err)
{
	struct ln_buf why = LN_BUF_INIT;
	int r = rq_get_str(o, key, required, out, where, err);

	if (r == -ENOENT && !required) {
		*out = NULL;
		return 0;
	}
	if (r < 0)
		return r;
	if (psk) {
		if (ln_tls_psk_check(*out, &why) < 0)
			r = rq_bad(err, where, "'%s' is not a valid NVMe TLS PSK: %s", key,
				   why.buf);
	} else if (ln_dhchap_check(*out, &why) < 0) {
		r = rq_bad(err, where, "'%s' is not a valid DH-HMAC-CHAP secret: %s", key, why.buf);
	}
	ln_buf_release(&why);
	return r;
}

int rq_get_secrets(struct json_object *o, const struct ln_secret_holder *h, int tls,
		   const char *what, const char **out, const char *where, struct ln_buf *err)
{
	int k, r;

	for (k = 0; k < LN_SECRET_SLOTS; k++) {
		int required = k == LN_SECRET_KEY || (k == LN_SECRET_PSK && tls);

		r = get_secret(o, h->field[k], k == LN_SECRET_PSK, required, &out[k], where, err);
		if (r < 0)
			return r;
	}
	if (out[LN_SECRET_PSK] && !tls)
		return rq_bad(err, where, "'%s' is only for a %s with tls",
			      h->field[LN_SECRET_PSK], what);
	return 0;
}

/* "tls": "required" (a tcp endpoint only); 1 in *tls, or 0 when absent. */
int rq_get_tls(struct json_object *o, const char *transport, int *tls, const char *where,
	       struct ln_buf *err)
{
	const char *v;
	int r = rq_get_str(o, "tls", 0, &v, where, err);

	*tls = 0;
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	if (strcmp(v, "required"))
		return rq_bad(err, where, "tls '%s' must be \"required\"", v);
	if (strcmp(transport, "tcp"))
		return rq_bad(err, where, "tls needs transport tcp, not '%s'", transport);
	*tls = 1;
	return 0;
}

/* What a target and an initiator open with: only known keys, then the
 * NQN under key (said before it when invalid or the discovery NQN), then
 * the endpoint. */
int rq_parse_head(struct json_object *o, const char *const *keys, const char *key,
		  const char *said, const char **nqn, const char **transport,
		  const char **address, const char **family, char *service, const char *where,
		  struct ln_buf *err)
{
	int r;

	if ((r = rq_check_keys(o, keys, where, err)) < 0)
		return r;
	if ((r = rq_get_str(o, key, 1, nqn, where, err)) < 0)
		return r;
	if (!ln_valid_nqn(*nqn))
		return rq_bad(err, where, "%s'%s' is not a valid NQN", said, *nqn);
	/* The well-known discovery subsystem is the kernel's own: a target
	 * made with that name would shadow it on the port, as lint says. */
	if (!strcmp(*nqn, LN_NQN_DISCOVERY))
		return rq_bad(err, where, "%s'%s' is the discovery NQN, not a subsystem's", said,
			      *nqn);
	return parse_endpoint(o, transport, address, family, service, where, err);
}

/* The optional object o.key (*out): 0 when absent; 1 with its place
 * "WHERE.key" in w and its keys checked (when keys is not NULL); or the
 * check's negative code. */
int rq_section(struct json_object *o, const char *key, const char *const *keys,
	       const char *where, char *w, size_t size, struct json_object **out,
	       struct ln_buf *err)
{
	int r;

	if (!json_object_object_get_ex(o, key, out))
		return 0;
	snprintf(w, size, "%s.%s", where, key);
	r = keys ? rq_check_keys(*out, keys, w, err) : 0;
	return r < 0 ? r : 1;
}
