/* SPDX-License-Identifier: MIT */
/*
 * The plan/apply request: parsed strictly (unknown fields, wrong types and
 * values that would reach configfs names, paths or command lines are
 * refused) before anything on the node is read or written. This file
 * drives the parse: the request's own fields, its lists (each target by
 * request_target.c, each initiator by request_init.c, with the readers of
 * request_fields.c), the checks across targets, and the hostfile.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/request.h"
#include "agents/agent/core/request_impl.h"
#include "common/error.h"
#include "common/json.h"

/* The slots alias the named secrets (request.h). */
_Static_assert(offsetof(struct ln_req_key, psk) ==
		       offsetof(struct ln_req_key, v) + LN_SECRET_PSK * sizeof(const char *),
	       "struct ln_req_key: v[] follows key, ctrl_key, psk");
_Static_assert(offsetof(struct ln_req_init, psk) ==
		       offsetof(struct ln_req_init, secrets) + LN_SECRET_PSK * sizeof(const char *),
	       "struct ln_req_init: secrets[] follows secret, ctrl_secret, psk");

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

	if ((r = rq_check_keys(o, keys, "hostfile", err)) < 0)
		return r;
	if ((r = rq_get_path(o, "path", 1, &rq->hostfile_path, "hostfile", err)) < 0 ||
	    (r = rq_own_place("hostfile", rq->hostfile_path, "hostfile", err)) < 0)
		return r;
	if ((r = rq_get_str(o, "format", 1, &format, "hostfile", err)) < 0)
		return r;
	if (strcmp(format, "openmpi") && strcmp(format, "mpich"))
		return rq_bad(err, "hostfile", "format '%s' must be openmpi or mpich", format);
	rq->hostfile_mpich = !strcmp(format, "mpich");
	if (!json_object_object_get_ex(o, "lines", &lines) ||
	    !json_object_is_type(lines, json_type_array))
		return rq_bad(err, "hostfile", "'lines' must be a list%s", "");
	rq->nlines = json_object_array_length(lines);
	rq->lines = calloc(rq->nlines + 1, sizeof(*rq->lines));
	if (!rq->lines)
		return -ENOMEM;
	for (i = 0; i < rq->nlines; i++) {
		struct json_object *l = json_object_array_get_idx(lines, i);

		snprintf(w, sizeof(w), "hostfile.lines[%zu]", i);
		if ((r = rq_check_keys(l, lkeys, w, err)) < 0)
			return r;
		if ((r = rq_get_str(l, "name", 1, &rq->lines[i].name, w, err)) < 0)
			return r;
		if (!ln_valid_name(rq->lines[i].name, 253))
			return rq_bad(err, w, "name '%s' is not a valid host name",
				      rq->lines[i].name);
		if ((r = rq_get_int(l, "slots", 1, 1, 4096, &v, w, err)) < 0)
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
		return rq_bad(err, "request", "'%s' must be a list", key);
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
			return rq_bad(err, "request", "value of '%s' holds a NUL byte", key);
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

/* Both NULL, or the same secret in every slot. */
/* The secrets a host entry holds: DH-HMAC-CHAP's two. A TLS PSK is not
 * the entry's (the keyring holds it, by an identity that names the
 * subsystem), so a TLS target and a plain one may allow one host. */
static int same_secrets(const struct ln_req_key *a, const struct ln_req_key *b)
{
	if (!a || !b)
		return !a == !b;
	return same_str(a->v[LN_SECRET_KEY], b->v[LN_SECRET_KEY]) &&
	       same_str(a->v[LN_SECRET_CTRL_KEY], b->v[LN_SECRET_CTRL_KEY]);
}

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
				return rq_bad(err, "request",
					      "targets '%s' and '%s' share port %s:%s but "
					      "only one asks tls (the port requires it for both)",
					      a->nqn, b->nqn, a->address, a->service);
		}
	return 0;
}

/*
 * nvmet keeps the DH-HMAC-CHAP settings on hosts/<nqn>, one entry shared by
 * every subsystem of the node: two targets must not ask different ones for
 * one host (or one of them none), whatever the controller sent.
 */
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
			    !same_secrets(a, b))
				r = rq_bad(err, "request", "targets '%s' and '%s' ask different "
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
		    struct rq_seen *seen, struct ln_buf *err);

/* Each of the n items of the request's list key (arr) through item, with
 * its place "KEY[i]"; 0, or the first item's negative code. */
static int each_item(struct ln_request *rq, struct json_object *arr, const char *key, size_t n,
		     item_fn *item, struct ln_buf *err)
{
	struct rq_seen seen;
	char w[64];
	size_t i;
	int r = 0;

	if (rq_seen_init(&seen, n) < 0)
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
		       struct rq_seen *seen, struct ln_buf *err)
{
	struct ln_req_target *t = &rq->targets[i];
	int r = rq_parse_target(o, t, where, err);

	if (r == 0 && rq_seen_add(seen, t->nqn, strlen(t->nqn)))
		r = rq_bad(err, where, "target '%s' is listed twice", t->nqn);
	return r;
}

/* An initiator, whose mount path no other initiator of the request has. */
static int init_item(struct ln_request *rq, size_t i, struct json_object *o, const char *where,
		     struct rq_seen *seen, struct ln_buf *err)
{
	struct ln_req_init *in = &rq->inits[i];
	const char *mp;
	int r = rq_parse_init(o, in, where, err);

	mp = in->mount_path;
	if (r == 0 && mp && rq_seen_add(seen, mp, strlen(mp)))
		r = rq_bad(err, where, "mount path '%s' is used twice", mp);
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
		return rq_bad(err, "request", "expected a JSON object%s", "");
	/* The version first: a newer controller gets "protocol", not "unknown field". */
	r = rq_get_int(rq->json, "protocol", 1, 1, INT32_MAX, &proto, "request", err);
	if (r < 0)
		return r;
	if (proto > LN_PROTO_VERSION) {
		ln_buf_addf(err, "request speaks protocol %lld but this agent speaks protocol %d; "
			    "push the agent that matches the controller", (long long)proto,
			    LN_PROTO_VERSION);
		return -LN_EPROTO;
	}
	if ((r = rq_check_keys(rq->json, keys, "request", err)) < 0)
		return r;
	if ((r = refuse_nul(rq->json, "request", err)) < 0)
		return r;
	if ((r = rq_get_str(rq->json, "cluster", 1, &rq->cluster, "request", err)) < 0)
		return r;
	if (!ln_valid_name(rq->cluster, 64))
		return rq_bad(err, "request",
			      "cluster '%s' must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}", rq->cluster);
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
		r = rq_bad(err, "request", "%s", e.buf);
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
