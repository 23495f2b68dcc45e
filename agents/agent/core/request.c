// SPDX-License-Identifier: MIT
/*
 * The plan/apply request: parsed strictly (unknown fields, wrong types and
 * values that would reach configfs names, paths or command lines are
 * refused) before anything on the node is read or written.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/request.h"
#include "agents/agent/core/valid.h"
#include "common/dhchap.h"
#include "common/error.h"
#include "common/json.h"
#include "common/places.h"

/* "request: " then where, said once when where is the request itself. */
static void prefix(struct ln_buf *err, const char *where)
{
	ln_buf_addstr(err, "request: ");
	if (strcmp(where, "request"))
		ln_buf_addf(err, "%s: ", where);
}

static int bad(struct ln_buf *err, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(struct ln_buf *err, const char *where, const char *fmt, ...)
{
	va_list ap;

	prefix(err, where);
	va_start(ap, fmt);
	ln_buf_vaddf(err, fmt, ap);
	va_end(ap);
	return -LN_EREQUEST;
}

/*
 * Keys seen so far in one list, for the duplicate checks: an open-addressed
 * hash table of (pointer, length) into the request's own strings, so a
 * request of n entries is checked in O(n), not O(n^2).
 */
struct seen {
	struct seen_slot {
		const void *p;
		size_t n;
	} *slot;
	size_t mask;
};

static int seen_init(struct seen *s, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n)
		cap *= 2;
	s->slot = calloc(cap, sizeof(*s->slot));
	s->mask = cap - 1;
	return s->slot ? 0 : -ENOMEM;
}

/* A zeroed list for the items of the array a, one more than them (the
 * last stays zero), into *list and their count into *n; seen made ready
 * for them. 0 or -ENOMEM. */
static int new_list(struct json_object *a, void **list, size_t *n, size_t elem, struct seen *s)
{
	*n = json_object_array_length(a);
	*list = calloc(*n + 1, elem);
	if (!*list)
		return -ENOMEM;
	return seen_init(s, *n);
}
#define NEW_LIST(a, list, n, s) new_list((a), (void **)&(list), &(n), sizeof(*(list)), (s))

/* 1 if the key was seen before, 0 once it is recorded. */
static int seen_add(struct seen *s, const void *p, size_t n)
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

static int get_int(struct json_object *o, const char *key, int required, int64_t lo, int64_t hi,
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

static int get_str(struct json_object *o, const char *key, int required, const char **out,
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
static int get_path(struct json_object *o, const char *key, int required, const char **out,
		    const char *where, struct ln_buf *err)
{
	int r = get_str(o, key, required, out, where, err);

	if (r == -ENOENT && !required) {
		*out = NULL;
		return 0;
	}
	if (r < 0)
		return r;
	if (!ln_valid_abs_path(*out))
		return bad(err, where, "%s '%s' must be an absolute, normalized path", key, *out);
	return 0;
}

/* A path llmnet writes (hostfile, backing file, mount point) must not be
 * in a system place: lint refuses it, and the agent refuses it again,
 * whoever wrote the request (common/places.h). */
static int own_place(const char *key, const char *path, const char *where, struct ln_buf *err)
{
	struct ln_buf why = LN_BUF_INIT;
	int r = 0;

	if (ln_place_check(key, path, &why) < 0)
		r = bad(err, where, "%s", why.buf);
	ln_buf_release(&why);
	return r;
}

static int check_keys(struct json_object *o, const char *const *keys, const char *where,
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
static int get_ident(struct json_object *o, const char *key, int serial, const char **out,
		     const char *where, struct ln_buf *err)
{
	const char *s;
	int r = get_str(o, key, 0, out, where, err), ok;

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
		return bad(err, where, "%s '%s' must be %s", key, s,
			   serial ? "16 lower-case hex digits"
				  : "8-4-4-4-12 lower-case hex digits, not all zero");
	return 0;
}

static int parse_ns(struct json_object *o, struct ln_req_ns *ns, const char *where,
		    struct ln_buf *err)
{
	static const char *const keys[] = { "nsid", "file", "size", "device", "adopt", "uuid",
					    "nguid", NULL };
	struct ln_buf e = LN_BUF_INIT;
	int64_t v;
	int r;

	r = check_keys(o, keys, where, err);
	if (r < 0)
		return r;
	r = get_int(o, "nsid", 1, 1, 4294967294LL, &v, where, err);
	if (r < 0)
		return r;
	ns->nsid = (uint32_t)v;
	if ((r = get_ident(o, "uuid", 0, &ns->uuid, where, err)) < 0 ||
	    (r = get_ident(o, "nguid", 0, &ns->nguid, where, err)) < 0)
		return r;
	r = get_str(o, "file", 0, &ns->file, where, err);
	if (r < 0 && r != -ENOENT)
		return r;
	if (r == -ENOENT)
		ns->file = NULL;
	if ((r = get_str(o, "device", 0, &ns->device, where, err)) < 0 && r != -ENOENT)
		return r;
	if (r == -ENOENT)
		ns->device = NULL;
	if (!!ns->file == !!ns->device)
		return bad(err, where, "exactly one of 'file' and 'device' is needed%s", "");
	if (ns->file) {
		if (!ln_valid_abs_path(ns->file))
			return bad(err, where, "file '%s' must be an absolute, normalized path",
				   ns->file);
		if ((r = own_place("file", ns->file, where, err)) < 0)
			return r;
		r = get_int(o, "size", 1, 512, INT64_MAX, &v, where, err);
		if (r < 0)
			return r;
		if (v % 512)
			return bad(err, where, "size must be a multiple of 512 bytes%s", "");
		ns->size = (uint64_t)v;
	} else {
		if (!ln_valid_abs_path(ns->device) || strncmp(ns->device, "/dev/", 5))
			return bad(err, where, "device '%s' must be an absolute path under /dev",
				   ns->device);
		if (json_object_object_get_ex(o, "size", NULL))
			return bad(err, where, "'size' goes with 'file', not 'device'%s", "");
	}
	/* adopt: use an existing file llmnet did not create, and never delete it */
	r = ln_json_get_bool(o, "adopt", 0, &ns->adopt, &e);
	if (r == 0 && ns->device)
		r = bad(err, where, "'adopt' goes with 'file', not 'device'%s", "");
	else if (r < 0 && r != -ENOENT)
		r = bad(err, where, "%s", e.buf);
	ln_buf_release(&e);
	return r == -ENOENT ? 0 : r;
}

static int parse_endpoint(struct json_object *o, const char **transport, const char **address,
			  const char **family, char *service, const char *where, struct ln_buf *err)
{
	int64_t v;
	int r;

	if ((r = get_str(o, "transport", 1, transport, where, err)) < 0)
		return r;
	if (strcmp(*transport, "tcp") && strcmp(*transport, "rdma"))
		return bad(err, where, "transport '%s' must be tcp or rdma", *transport);
	if ((r = get_str(o, "address", 1, address, where, err)) < 0)
		return r;
	if (!ln_valid_addr(*address, family))
		return bad(err, where, "address '%s' must be a numeric IPv4 or IPv6 address",
			   *address);
	r = get_int(o, "service", 1, 1, 65535, &v, where, err);
	if (r < 0)
		return r;
	snprintf(service, 8, "%d", (int)v);
	return 0;
}

/* A DH-HMAC-CHAP secret under key: checked (length, CRC) before anything
 * on the node is touched; the message names the field, never the value. */
static int get_secret(struct json_object *o, const char *key, int required, const char **out,
		      const char *where, struct ln_buf *err)
{
	struct ln_buf why = LN_BUF_INIT;
	int r = get_str(o, key, required, out, where, err);

	if (r == -ENOENT && !required) {
		*out = NULL;
		return 0;
	}
	if (r < 0)
		return r;
	if (!strcmp(key, "psk")) {
		if (ln_tls_psk_check(*out, &why) < 0)
			r = bad(err, where, "'%s' is not a valid NVMe TLS PSK: %s", key, why.buf);
	} else if (ln_dhchap_check(*out, &why) < 0) {
		r = bad(err, where, "'%s' is not a valid DH-HMAC-CHAP secret: %s", key, why.buf);
	}
	ln_buf_release(&why);
	return r;
}

/* A target host's or a connect's secrets: keys[0] (required), keys[1] (the
 * controller's) and keys[2], the TLS PSK (required with tls, refused
 * without: what names the object), into *out[0..2]. */
static const char *const host_keys[] = { "key", "ctrl_key", "psk" };
static const char *const connect_keys[] = { "secret", "ctrl_secret", "psk" };

static int get_secrets(struct json_object *o, const char *const keys[3], int tls,
		       const char *what, const char **out[3], const char *where,
		       struct ln_buf *err)
{
	int r;

	if ((r = get_secret(o, keys[0], 1, out[0], where, err)) < 0 ||
	    (r = get_secret(o, keys[1], 0, out[1], where, err)) < 0 ||
	    (r = get_secret(o, keys[2], tls, out[2], where, err)) < 0)
		return r;
	if (*out[2] && !tls)
		return bad(err, where, "'psk' is only for a %s with tls", what);
	return 0;
}

/* "tls": "required" (a tcp endpoint only); 1 in *tls, or 0 when absent. */
static int get_tls(struct json_object *o, const char *transport, int *tls, const char *where,
		   struct ln_buf *err)
{
	const char *v;
	int r = get_str(o, "tls", 0, &v, where, err);

	*tls = 0;
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	if (strcmp(v, "required"))
		return bad(err, where, "tls '%s' must be \"required\"", v);
	if (strcmp(transport, "tcp"))
		return bad(err, where, "tls needs transport tcp, not '%s'", transport);
	*tls = 1;
	return 0;
}

/* targets[i].dhchap: the hash, the DH group and one keys entry per host. */
static int parse_dhchap(struct json_object *d, struct ln_req_target *t, const char *where,
			struct ln_buf *err)
{
	static const char *const dkeys[] = { "hash", "dhgroup", "keys", NULL };
	static const char *const kkeys[] = { "host", "key", "ctrl_key", "psk", NULL };
	static const char *const hashes[] = { "sha256", "hmac(sha256)", "sha384", "hmac(sha384)",
					      "sha512", "hmac(sha512)", NULL };
	static const char *const groups[] = { "null", "ffdhe2048", "ffdhe3072", "ffdhe4096",
					      "ffdhe6144", "ffdhe8192", NULL };
	struct json_object *keys;
	const char *hash, *group, *host;
	char w[160];
	size_t i, j, n;
	int r;

	if ((r = check_keys(d, dkeys, where, err)) < 0)
		return r;
	if (t->any)
		return bad(err, where, "DH-HMAC-CHAP needs a list of hosts: it cannot go with "
			   "hosts \"any\"%s", "");
	if ((r = get_str(d, "hash", 1, &hash, where, err)) < 0)
		return r;
	for (i = 0; hashes[i] && strcmp(hashes[i], hash); i += 2)
		;
	if (!hashes[i])
		return bad(err, where, "hash '%s' must be sha256, sha384 or sha512", hash);
	t->dh_hash = hashes[i + 1];
	if ((r = get_str(d, "dhgroup", 1, &group, where, err)) < 0)
		return r;
	for (i = 0; groups[i] && strcmp(groups[i], group); i++)
		;
	if (!groups[i])
		return bad(err, where, "dhgroup '%s' must be null or ffdhe2048, ffdhe3072, "
			   "ffdhe4096, ffdhe6144, ffdhe8192", group);
	t->dh_group = groups[i];
	if (!json_object_object_get_ex(d, "keys", &keys) ||
	    !json_object_is_type(keys, json_type_array))
		return bad(err, where, "'keys' must be a list (one entry per host)%s", "");
	n = json_object_array_length(keys);
	t->keys = calloc(t->nhosts + 1, sizeof(*t->keys));
	if (!t->keys)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct json_object *k = json_object_array_get_idx(keys, i);
		struct ln_req_key *dst;

		snprintf(w, sizeof(w), "%s.keys[%zu]", where, i);
		if ((r = check_keys(k, kkeys, w, err)) < 0)
			return r;
		if ((r = get_str(k, "host", 1, &host, w, err)) < 0)
			return r;
		for (j = 0; j < t->nhosts && strcmp(t->hosts[j], host); j++)
			;
		if (j == t->nhosts)
			return bad(err, w, "host '%s' is not one of the target's hosts",
				   ln_valid_nqn(host) ? host : "(invalid NQN)");
		dst = &t->keys[j];
		if (dst->key)
			return bad(err, w, "host '%s' has two keys entries", host);
		r = get_secrets(k, host_keys, t->tls, "target",
				(const char **[]){ &dst->key, &dst->ctrl_key, &dst->psk }, w, err);
		if (r < 0)
			return r;
	}
	for (j = 0; j < t->nhosts; j++)
		if (!t->keys[j].key)
			return bad(err, where, "host '%s' has no keys entry", t->hosts[j]);
	return 0;
}

/* What a target and an initiator open with: only known keys, then the
 * NQN under key (said before it when invalid), then the endpoint. */
static int parse_head(struct json_object *o, const char *const *keys, const char *key,
		      const char *said, const char **nqn, const char **transport,
		      const char **address, const char **family, char *service, const char *where,
		      struct ln_buf *err)
{
	int r;

	if ((r = check_keys(o, keys, where, err)) < 0)
		return r;
	if ((r = get_str(o, key, 1, nqn, where, err)) < 0)
		return r;
	if (!ln_valid_nqn(*nqn))
		return bad(err, where, "%s'%s' is not a valid NQN", said, *nqn);
	return parse_endpoint(o, transport, address, family, service, where, err);
}

/* The optional object o.key (*out): 0 when absent; 1 with its place
 * "WHERE.key" in w and its keys checked (when keys is not NULL); or the
 * check's negative code. */
static int section(struct json_object *o, const char *key, const char *const *keys,
		   const char *where, char *w, size_t size, struct json_object **out,
		   struct ln_buf *err)
{
	int r;

	if (!json_object_object_get_ex(o, key, out))
		return 0;
	snprintf(w, size, "%s.%s", where, key);
	r = keys ? check_keys(*out, keys, w, err) : 0;
	return r < 0 ? r : 1;
}

static int parse_target(struct json_object *o, struct ln_req_target *t, const char *where,
			struct ln_buf *err)
{
	static const char *const keys[] = { "nqn", "transport", "address", "service", "hosts",
					    "namespaces", "dhchap", "serial", "tls", NULL };
	struct json_object *hosts, *nss, *d;
	char w[128];
	struct seen seen;
	size_t i;
	int r;

	r = parse_head(o, keys, "nqn", "", &t->nqn, &t->transport, &t->address, &t->family,
		       t->service, where, err);
	if (r < 0)
		return r;
	if ((r = get_ident(o, "serial", 1, &t->serial, where, err)) < 0)
		return r;
	if ((r = get_tls(o, t->transport, &t->tls, where, err)) < 0)
		return r;
	if (!json_object_object_get_ex(o, "hosts", &hosts))
		return bad(err, where, "missing field 'hosts' (a list of host NQNs, or \"any\")%s", "");
	if (json_object_is_type(hosts, json_type_string)) {
		if (strcmp(json_object_get_string(hosts), "any"))
			return bad(err, where, "hosts must be a list or \"any\", not '%s'",
				   json_object_get_string(hosts));
		t->any = 1;
	} else if (json_object_is_type(hosts, json_type_array)) {
		if (NEW_LIST(hosts, t->hosts, t->nhosts, &seen) < 0)
			return -ENOMEM;
		for (i = 0, r = 0; i < t->nhosts && r == 0; i++) {
			t->hosts[i] = ln_nqn_at(hosts, i);
			if (!t->hosts[i]) {
				r = bad(err, where, "hosts[%s] is not a valid host NQN",
					json_object_to_json_string(json_object_array_get_idx(hosts, i)));
				break;
			}
			if (seen_add(&seen, t->hosts[i], strlen(t->hosts[i])))
				r = bad(err, where, "host '%s' is listed twice", t->hosts[i]);
		}
		free(seen.slot);
		if (r < 0)
			return r;
	} else {
		return bad(err, where, "hosts must be a list or \"any\"%s", "");
	}
	if (json_object_object_get_ex(o, "namespaces", &nss)) {
		if (!json_object_is_type(nss, json_type_array))
			return bad(err, where, "namespaces must be a list%s", "");
		if (NEW_LIST(nss, t->ns, t->nns, &seen) < 0)
			return -ENOMEM;
		for (i = 0, r = 0; i < t->nns && r == 0; i++) {
			snprintf(w, sizeof(w), "%s.namespaces[%zu]", where, i);
			if ((r = parse_ns(json_object_array_get_idx(nss, i), &t->ns[i], w, err)) < 0)
				break;
			if (seen_add(&seen, &t->ns[i].nsid, sizeof(t->ns[i].nsid)))
				r = bad(err, w, "nsid %s is used twice",
					json_object_to_json_string(json_object_object_get(
						json_object_array_get_idx(nss, i), "nsid")));
		}
		free(seen.slot);
		if (r < 0)
			return r;
	}
	r = section(o, "dhchap", NULL, where, w, sizeof(w), &d, err);
	if (r > 0)
		r = parse_dhchap(d, t, w, err);
	if (r < 0)
		return r;
	if (t->tls && !t->keys)
		return bad(err, where, "tls needs 'dhchap' (its keys carry each host's psk)%s", "");
	return 0;
}

/* "discovery": true; not (yet) through a port that asks TLS or a subsystem
 * with DH-HMAC-CHAP: lint refuses both, and so does the agent. */
static int parse_discovery(struct json_object *o, struct ln_req_init *in, const char *where,
			   struct ln_buf *err)
{
	struct ln_buf e = LN_BUF_INIT;
	int r = ln_json_get_bool(o, "discovery", 0, &in->discovery, &e);

	if (r < 0 && r != -ENOENT)
		r = bad(err, where, "%s", e.buf);
	ln_buf_release(&e);
	if (r < 0 && r != -ENOENT)
		return r;
	if (in->discovery && (in->tls || in->secret))
		return bad(err, where, "discovery is not supported with %s",
			   in->tls ? "tls" : "dhchap");
	return 0;
}

static int parse_init(struct json_object *o, struct ln_req_init *in, const char *where,
		      struct ln_buf *err)
{
	static const char *const keys[] = { "target", "transport", "address", "service", "queues",
					    "mount", "dhchap", "tls", "discovery", NULL };
	static const char *const dkeys[] = { "secret", "ctrl_secret", "psk", NULL };
	static const char *const qkeys[] = { "nr_io_queues", "queue_size", "ctrl_loss_tmo",
					     "reconnect_delay", NULL };
	static const char *const mkeys[] = { "path", "fs", "format", NULL };
	struct json_object *q, *m, *d;
	const char *family, *format = "never";
	char w[128];
	int64_t v;
	int r;

	r = parse_head(o, keys, "target", "target ", &in->target, &in->transport, &in->address,
		       &family, in->service, where, err);
	if (r < 0)
		return r;
	if ((r = get_tls(o, in->transport, &in->tls, where, err)) < 0)
		return r;
	r = section(o, "queues", qkeys, where, w, sizeof(w), &q, err);
	if (r < 0)
		return r;
	if (r) {
#define Q(key, lo, hi) \
	r = get_int(q, #key, 0, lo, hi, &v, w, err); \
	if (r < 0 && r != -ENOENT) \
		return r; \
	in->key = r == 0 ? (int)v : 0
		Q(nr_io_queues, 1, 1024);
		Q(queue_size, 16, 1024);
		Q(ctrl_loss_tmo, -1, 86400);
		Q(reconnect_delay, 1, 3600);
#undef Q
	}
	r = section(o, "mount", mkeys, where, w, sizeof(w), &m, err);
	if (r < 0)
		return r;
	if (r) {
		if ((r = get_path(m, "path", 1, &in->mount_path, w, err)) < 0 ||
		    (r = own_place("path", in->mount_path, w, err)) < 0)
			return r;
		if ((r = get_str(m, "fs", 1, &in->mount_fs, w, err)) < 0)
			return r;
		if (strcmp(in->mount_fs, "ext4") && strcmp(in->mount_fs, "xfs"))
			return bad(err, w, "fs '%s' must be ext4 or xfs", in->mount_fs);
		r = get_str(m, "format", 0, &format, w, err);
		if (r < 0 && r != -ENOENT)
			return r;
		if (strcmp(format, "never") && strcmp(format, "if-blank"))
			return bad(err, w, "format '%s' must be never or if-blank", format);
		in->format_if_blank = !strcmp(format, "if-blank");
	}
	r = section(o, "dhchap", dkeys, where, w, sizeof(w), &d, err);
	if (r < 0)
		return r;
	if (r) {
		r = get_secrets(d, connect_keys, in->tls, "connect",
				(const char **[]){ &in->secret, &in->ctrl_secret, &in->psk }, w, err);
		if (r < 0)
			return r;
	}
	if (in->tls && !in->psk)
		return bad(err, where, "tls needs dhchap.psk%s", "");
	return parse_discovery(o, in, where, err);
}

static int parse_hostfile(struct json_object *o, struct ln_request *rq, struct ln_buf *err)
{
	static const char *const keys[] = { "path", "format", "lines", NULL };
	static const char *const lkeys[] = { "name", "slots", NULL };
	struct json_object *lines;
	const char *format;
	char w[64];
	size_t i;
	int64_t v;
	int r;

	if ((r = check_keys(o, keys, "hostfile", err)) < 0)
		return r;
	if ((r = get_path(o, "path", 1, &rq->hostfile_path, "hostfile", err)) < 0 ||
	    (r = own_place("hostfile", rq->hostfile_path, "hostfile", err)) < 0)
		return r;
	if ((r = get_str(o, "format", 1, &format, "hostfile", err)) < 0)
		return r;
	if (strcmp(format, "openmpi") && strcmp(format, "mpich"))
		return bad(err, "hostfile", "format '%s' must be openmpi or mpich", format);
	rq->hostfile_mpich = !strcmp(format, "mpich");
	if (!json_object_object_get_ex(o, "lines", &lines) ||
	    !json_object_is_type(lines, json_type_array))
		return bad(err, "hostfile", "'lines' must be a list%s", "");
	rq->nlines = json_object_array_length(lines);
	rq->lines = calloc(rq->nlines + 1, sizeof(*rq->lines));
	if (!rq->lines)
		return -ENOMEM;
	for (i = 0; i < rq->nlines; i++) {
		struct json_object *l = json_object_array_get_idx(lines, i);

		snprintf(w, sizeof(w), "hostfile.lines[%zu]", i);
		if ((r = check_keys(l, lkeys, w, err)) < 0)
			return r;
		if ((r = get_str(l, "name", 1, &rq->lines[i].name, w, err)) < 0)
			return r;
		if (!ln_valid_name(rq->lines[i].name, 253))
			return bad(err, w, "name '%s' is not a valid host name", rq->lines[i].name);
		if ((r = get_int(l, "slots", 1, 1, 4096, &v, w, err)) < 0)
			return r;
		rq->lines[i].slots = (int)v;
	}
	return 0;
}

/*
 * The optional list under key: *arr the array (NULL when absent), *n its
 * length (0 unless *v is allocated) and *v a zeroed array of n + 1
 * elements of size (NULL when absent).
 */
static int get_list(struct json_object *obj, const char *key, size_t size,
		    struct json_object **arr, size_t *n, void **v, struct ln_buf *err)
{
	*arr = NULL;
	*n = 0;
	*v = NULL;
	if (!json_object_object_get_ex(obj, key, arr))
		return 0;
	if (!json_object_is_type(*arr, json_type_array))
		return bad(err, "request", "'%s' must be a list", key);
	*v = calloc(json_object_array_length(*arr) + 1, size);
	if (!*v)
		return -ENOMEM;
	*n = json_object_array_length(*arr);
	return 0;
}

/*
 * A string value holding a NUL byte ("\u0000") would be cut short where C
 * reads it: refused wherever it is (json-c's depth limit bounds the walk).
 */
static int refuse_nul(struct json_object *o, const char *key, struct ln_buf *err)
{
	size_t i;

	switch (json_object_get_type(o)) {
	case json_type_string:
		if (strlen(json_object_get_string(o)) != (size_t)json_object_get_string_len(o))
			return bad(err, "request", "value of '%s' holds a NUL byte", key);
		return 0;
	case json_type_array:
		for (i = 0; i < json_object_array_length(o); i++)
			if (refuse_nul(json_object_array_get_idx(o, i), key, err) < 0)
				return -LN_EREQUEST;
		return 0;
	case json_type_object: {
		json_object_object_foreach(o, k, v) {
			if (refuse_nul(v, k, err) < 0)
				return -LN_EREQUEST;
		}
		return 0;
	}
	default:
		return 0;
	}
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * nvmet keeps the DH-HMAC-CHAP settings on hosts/<nqn>, one entry shared by
 * every subsystem of the node: two targets must not ask different ones for
 * one host (or one of them none), whatever the controller sent.
 */
/* Targets sharing a port (transport, address, service) agree on tls: the
 * port, not the subsystem, requires it. */
static int check_shared_ports(const struct ln_request *rq, struct ln_buf *err)
{
	size_t i, j;

	for (i = 0; i < rq->ntargets; i++)
		for (j = 0; j < i; j++) {
			const struct ln_req_target *a = &rq->targets[j], *b = &rq->targets[i];

			if (a->tls != b->tls && !strcmp(a->transport, b->transport) &&
			    !strcmp(a->address, b->address) && !strcmp(a->service, b->service))
				return bad(err, "request", "targets '%s' and '%s' share port %s:%s but "
					   "only one asks tls (the port requires it for both)",
					   a->nqn, b->nqn, a->address, a->service);
		}
	return 0;
}

static int check_shared_hosts(struct ln_request *rq, struct ln_buf *err)
{
	struct json_object *first = json_object_new_object(), *v;
	size_t i, j;
	int r = 0;

	if (!first)
		return -ENOMEM;
	for (i = 0; i < rq->ntargets && r == 0; i++) {
		const struct ln_req_target *t = &rq->targets[i];

		for (j = 0; j < t->nhosts && r == 0; j++) {
			const struct ln_req_target *u;
			const struct ln_req_key *a, *b;
			int64_t at;

			if (!json_object_object_get_ex(first, t->hosts[j], &v)) {
				json_object_object_add(first, t->hosts[j],
						       json_object_new_int64((int64_t)i << 32 | j));
				continue;
			}
			at = json_object_get_int64(v);
			u = &rq->targets[at >> 32];
			a = t->keys ? &t->keys[j] : NULL;
			b = u->keys ? &u->keys[at & 0xffffffff] : NULL;
			if (!same_str(t->dh_hash, u->dh_hash) || !same_str(t->dh_group, u->dh_group) ||
			    !a != !b ||
			    (a && (!same_str(a->key, b->key) || !same_str(a->ctrl_key, b->ctrl_key) ||
				   !same_str(a->psk, b->psk))))
				r = bad(err, "request", "targets '%s' and '%s' ask different "
					"DH-HMAC-CHAP settings or secrets for host '%s' (nvmet keeps "
					"them on the host entry, one per node)", u->nqn, t->nqn,
					t->hosts[j]);
		}
	}
	json_object_put(first);
	return r;
}
/* The i-th item o of a request list, at where; seen holds what must be
 * unique across the list. */
typedef int item_fn(struct ln_request *rq, size_t i, struct json_object *o, const char *where,
		    struct seen *seen, struct ln_buf *err);

/* Each of the n items of the request's list key (arr) through item, with
 * its place "KEY[i]"; 0, or the first item's negative code. */
static int each_item(struct ln_request *rq, struct json_object *arr, const char *key, size_t n,
		     item_fn *item, struct ln_buf *err)
{
	struct seen seen;
	char w[64];
	size_t i;
	int r = 0;

	if (seen_init(&seen, n) < 0)
		return -ENOMEM;
	for (i = 0; i < n && r == 0; i++) {
		snprintf(w, sizeof(w), "%s[%zu]", key, i);
		r = item(rq, i, json_object_array_get_idx(arr, i), w, &seen, err);
	}
	free(seen.slot);
	return r;
}

/* A target, whose NQN no other target of the request has. */
static int target_item(struct ln_request *rq, size_t i, struct json_object *o, const char *where,
		       struct seen *seen, struct ln_buf *err)
{
	struct ln_req_target *t = &rq->targets[i];
	int r = parse_target(o, t, where, err);

	if (r == 0 && seen_add(seen, t->nqn, strlen(t->nqn)))
		r = bad(err, where, "target '%s' is listed twice", t->nqn);
	return r;
}

/* An initiator, whose mount path no other initiator of the request has. */
static int init_item(struct ln_request *rq, size_t i, struct json_object *o, const char *where,
		     struct seen *seen, struct ln_buf *err)
{
	struct ln_req_init *in = &rq->inits[i];
	const char *mp;
	int r = parse_init(o, in, where, err);

	mp = in->mount_path;
	if (r == 0 && mp && seen_add(seen, mp, strlen(mp)))
		r = bad(err, where, "mount path '%s' is used twice", mp);
	return r;
}


int ln_request_parse(const char *text, size_t len, struct ln_request *rq, struct ln_buf *err)
{
	static const char *const keys[] = { "protocol", "cluster", "targets", "initiators",
					    "hostfile", "persist", NULL };
	struct json_object *arr, *hf;
	struct ln_buf e = LN_BUF_INIT;
	void *v;
	int64_t proto;
	int r;

	memset(rq, 0, sizeof(*rq));
	r = ln_json_parse(text, len, &rq->json, &e);
	if (r < 0) {
		ln_buf_addf(err, "request: %s", e.buf);
		ln_buf_release(&e);
		return -LN_EREQUEST;
	}
	ln_buf_release(&e);
	if (!json_object_is_type(rq->json, json_type_object))
		return bad(err, "request", "expected a JSON object%s", "");
	/* The version first: a newer controller gets "protocol", not "unknown field". */
	r = get_int(rq->json, "protocol", 1, 1, INT32_MAX, &proto, "request", err);
	if (r < 0)
		return r;
	if (proto > LN_PROTO_VERSION) {
		ln_buf_addf(err, "request speaks protocol %lld but this agent speaks protocol %d; "
			    "push the agent that matches the controller", (long long)proto,
			    LN_PROTO_VERSION);
		return -LN_EPROTO;
	}
	if ((r = check_keys(rq->json, keys, "request", err)) < 0)
		return r;
	if ((r = refuse_nul(rq->json, "request", err)) < 0)
		return r;
	if ((r = get_str(rq->json, "cluster", 1, &rq->cluster, "request", err)) < 0)
		return r;
	if (!ln_valid_name(rq->cluster, 64))
		return bad(err, "request", "cluster '%s' must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}",
			   rq->cluster);
	if ((r = get_list(rq->json, "targets", sizeof(*rq->targets), &arr, &rq->ntargets, &v,
			  err)) < 0)
		return r;
	rq->targets = v;
	r = each_item(rq, arr, "targets", rq->ntargets, target_item, err);
	if (r == 0)
		r = check_shared_hosts(rq, err);
	if (r == 0)
		r = check_shared_ports(rq, err);
	if (r < 0)
		return r;
	if ((r = get_list(rq->json, "initiators", sizeof(*rq->inits), &arr, &rq->ninits, &v,
			  err)) < 0)
		return r;
	rq->inits = v;
	if ((r = each_item(rq, arr, "initiators", rq->ninits, init_item, err)) < 0)
		return r;
	if (json_object_object_get_ex(rq->json, "hostfile", &hf)) {
		if ((r = parse_hostfile(hf, rq, err)) < 0)
			return r;
	}
	/* persist: absent is false (a controller that does not know it) */
	r = ln_json_get_bool(rq->json, "persist", 0, &rq->persist, &e);
	if (r < 0 && r != -ENOENT)
		r = bad(err, "request", "%s", e.buf);
	ln_buf_release(&e);
	return r == -ENOENT ? 0 : r;
}

void ln_request_release(struct ln_request *rq)
{
	size_t i;

	for (i = 0; i < rq->ntargets; i++) {
		free(rq->targets[i].hosts);
		free(rq->targets[i].ns);
		free(rq->targets[i].keys);
	}
	free(rq->targets);
	free(rq->inits);
	free(rq->lines);
	json_object_put(rq->json);
	memset(rq, 0, sizeof(*rq));
}
