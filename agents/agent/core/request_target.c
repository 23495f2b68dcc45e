/* SPDX-License-Identifier: MIT */
/*
 * A target of the request (targets[i]): its subsystem NQN, endpoint,
 * serial, tls, hosts, namespaces and DH-HMAC-CHAP settings, each checked
 * before anything on the node is read. The hash and group names are both
 * ends' (common/dhchap.h), a host's secrets the fields of
 * common/secret_fields.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/request_impl.h"
#include "agents/agent/core/valid.h"
#include "common/dhchap.h"
#include "common/json.h"
#include "common/secret_fields.h"

/* device_ref ("NODE:PATH", PATH the namespace's device) and accept_device,
 * both with 'device' only. */
static int parse_accept(struct json_object *o, struct ln_req_ns *ns, const char *where,
			struct ln_buf *err)
{
	struct ln_buf e = LN_BUF_INIT;
	const char *colon;
	char node[64] = "";
	int r;

	if ((r = rq_get_str(o, "device_ref", 0, &ns->device_ref, where, err)) < 0 && r != -ENOENT)
		return r;
	if (r == -ENOENT)
		ns->device_ref = NULL;
	colon = ns->device_ref ? strchr(ns->device_ref, ':') : NULL;
	if (colon && (size_t)(colon - ns->device_ref) < sizeof(node)) {
		memcpy(node, ns->device_ref, (size_t)(colon - ns->device_ref));
		node[colon - ns->device_ref] = '\0';
	}
	if (ns->device_ref && (!ns->device || !colon || !ln_valid_name(node, 63) ||
			       strcmp(colon + 1, ns->device)))
		return rq_bad(err, where, "device_ref must be NODE:PATH, a node name and the "
			      "namespace's device%s", "");
	r = ln_json_get_bool(o, "accept_device", 0, &ns->accept_device, &e);
	if (r == 0 && !ns->device)
		r = rq_bad(err, where, "'accept_device' goes with 'device', not 'file'%s", "");
	else if (r < 0 && r != -ENOENT)
		r = rq_bad(err, where, "%s", e.buf);
	ln_buf_release(&e);
	return r == -ENOENT ? 0 : r;
}

static int parse_ns(struct json_object *o, struct ln_req_ns *ns, const char *where,
		    struct ln_buf *err)
{
	static const char *const keys[] = { "nsid", "file", "size", "device", "adopt", "uuid",
					    "nguid", "device_ref", "accept_device", NULL };
	struct ln_buf e = LN_BUF_INIT;
	int64_t v;
	int r;

	r = rq_check_keys(o, keys, where, err);
	if (r < 0)
		return r;
	r = rq_get_int(o, "nsid", 1, 1, 4294967294LL, &v, where, err);
	if (r < 0)
		return r;
	ns->nsid = (uint32_t)v;
	if ((r = rq_get_ident(o, "uuid", 0, &ns->uuid, where, err)) < 0 ||
	    (r = rq_get_ident(o, "nguid", 0, &ns->nguid, where, err)) < 0)
		return r;
	r = rq_get_str(o, "file", 0, &ns->file, where, err);
	if (r < 0 && r != -ENOENT)
		return r;
	if (r == -ENOENT)
		ns->file = NULL;
	if ((r = rq_get_str(o, "device", 0, &ns->device, where, err)) < 0 && r != -ENOENT)
		return r;
	if (r == -ENOENT)
		ns->device = NULL;
	if (!!ns->file == !!ns->device)
		return rq_bad(err, where, "exactly one of 'file' and 'device' is needed%s", "");
	if (ns->file) {
		if (!ln_valid_abs_path(ns->file))
			return rq_bad(err, where, "file '%s' must be an absolute, normalized path",
				      ns->file);
		if ((r = rq_own_place("file", ns->file, where, err)) < 0)
			return r;
		r = rq_get_int(o, "size", 1, 512, INT64_MAX, &v, where, err);
		if (r < 0)
			return r;
		if (v % 512)
			return rq_bad(err, where, "size must be a multiple of 512 bytes%s", "");
		ns->size = (uint64_t)v;
	} else {
		if (!ln_valid_abs_path(ns->device) || strncmp(ns->device, "/dev/", 5))
			return rq_bad(err, where, "device '%s' must be an absolute path under /dev",
				      ns->device);
		if (json_object_object_get_ex(o, "size", NULL))
			return rq_bad(err, where, "'size' goes with 'file', not 'device'%s", "");
	}
	if ((r = parse_accept(o, ns, where, err)) < 0)
		return r;
	/* adopt: use an existing file llmnet did not create, and never delete it */
	r = ln_json_get_bool(o, "adopt", 0, &ns->adopt, &e);
	if (r == 0 && ns->device)
		r = rq_bad(err, where, "'adopt' goes with 'file', not 'device'%s", "");
	else if (r < 0 && r != -ENOENT)
		r = rq_bad(err, where, "%s", e.buf);
	ln_buf_release(&e);
	return r == -ENOENT ? 0 : r;
}

/* targets[i].dhchap: the hash, the DH group and one keys entry per host. */
static int parse_dhchap(struct json_object *d, struct ln_req_target *t, const char *where,
			struct ln_buf *err)
{
	static const char *const dkeys[] = { "hash", "dhgroup", "keys", NULL };
	const struct ln_secret_holder *h = &ln_secret_holders[LN_SECRET_HOST];
	const char *const kkeys[] = { h->name, h->field[LN_SECRET_KEY],
				      h->field[LN_SECRET_CTRL_KEY], h->field[LN_SECRET_PSK], NULL };
	struct json_object *keys;
	const char *hash, *group, *host;
	char w[160];
	size_t i, j, n;
	int r, at;

	if ((r = rq_check_keys(d, dkeys, where, err)) < 0)
		return r;
	if (t->any)
		return rq_bad(err, where, "DH-HMAC-CHAP needs a list of hosts: it cannot go with "
			      "hosts \"any\"%s", "");
	if ((r = rq_get_str(d, "hash", 1, &hash, where, err)) < 0)
		return r;
	/* the spec's name or the kernel's; the kernel's goes to configfs */
	at = ln_dhchap_name_index(ln_dhchap_hash_names, hash);
	if (at < 0)
		at = ln_dhchap_name_index(ln_dhchap_hash_kernel, hash);
	if (at < 0)
		return rq_bad(err, where, "hash '%s' must be sha256, sha384 or sha512", hash);
	t->dh_hash = ln_dhchap_hash_kernel[at];
	if ((r = rq_get_str(d, "dhgroup", 1, &group, where, err)) < 0)
		return r;
	at = ln_dhchap_name_index(ln_dhchap_group_names, group);
	if (at < 0)
		return rq_bad(err, where, "dhgroup '%s' must be null or ffdhe2048, ffdhe3072, "
			      "ffdhe4096, ffdhe6144, ffdhe8192", group);
	t->dh_group = ln_dhchap_group_names[at];
	if (!json_object_object_get_ex(d, "keys", &keys) ||
	    !json_object_is_type(keys, json_type_array))
		return rq_bad(err, where, "'keys' must be a list (one entry per host)%s", "");
	n = json_object_array_length(keys);
	t->keys = calloc(t->nhosts + 1, sizeof(*t->keys));
	if (!t->keys)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct json_object *k = json_object_array_get_idx(keys, i);
		struct ln_req_key *dst;

		snprintf(w, sizeof(w), "%s.keys[%zu]", where, i);
		if ((r = rq_check_keys(k, kkeys, w, err)) < 0)
			return r;
		if ((r = rq_get_str(k, h->name, 1, &host, w, err)) < 0)
			return r;
		for (j = 0; j < t->nhosts && strcmp(t->hosts[j], host); j++)
			;
		if (j == t->nhosts)
			return rq_bad(err, w, "host '%s' is not one of the target's hosts",
				      ln_valid_nqn(host) ? host : "(invalid NQN)");
		dst = &t->keys[j];
		if (dst->key)
			return rq_bad(err, w, "host '%s' has two keys entries", host);
		r = rq_get_secrets(k, h, t->tls, "target", dst->v, w, err);
		if (r < 0)
			return r;
	}
	for (j = 0; j < t->nhosts; j++)
		if (!t->keys[j].key)
			return rq_bad(err, where, "host '%s' has no keys entry", t->hosts[j]);
	return 0;
}

int rq_parse_target(struct json_object *o, struct ln_req_target *t, const char *where,
		    struct ln_buf *err)
{
	static const char *const keys[] = { "nqn", "transport", "address", "service", "hosts",
					    "namespaces", "dhchap", "serial", "tls", NULL };
	struct json_object *hosts, *nss, *d;
	char w[128];
	struct rq_seen seen;
	size_t i;
	int r;

	r = rq_parse_head(o, keys, "nqn", "", &t->nqn, &t->transport, &t->address, &t->family,
			  t->service, where, err);
	if (r < 0)
		return r;
	if ((r = rq_get_ident(o, "serial", 1, &t->serial, where, err)) < 0)
		return r;
	if ((r = rq_get_tls(o, t->transport, &t->tls, where, err)) < 0)
		return r;
	if (!json_object_object_get_ex(o, "hosts", &hosts))
		return rq_bad(err, where, "missing field 'hosts' (a list of host NQNs, or \"any\")%s",
			      "");
	if (json_object_is_type(hosts, json_type_string)) {
		if (strcmp(json_object_get_string(hosts), "any"))
			return rq_bad(err, where, "hosts must be a list or \"any\", not '%s'",
				      json_object_get_string(hosts));
		t->any = 1;
	} else if (json_object_is_type(hosts, json_type_array)) {
		if (RQ_NEW_LIST(hosts, t->hosts, t->nhosts, &seen) < 0)
			return -ENOMEM;
		for (i = 0, r = 0; i < t->nhosts && r == 0; i++) {
			t->hosts[i] = ln_nqn_at(hosts, i);
			if (!t->hosts[i]) {
				struct json_object *bad_nqn = json_object_array_get_idx(hosts, i);

				r = rq_bad(err, where, "hosts[%s] is not a valid host NQN",
					   json_object_to_json_string(bad_nqn));
				break;
			}
			if (rq_seen_add(&seen, t->hosts[i], strlen(t->hosts[i])))
				r = rq_bad(err, where, "host '%s' is listed twice", t->hosts[i]);
		}
		free(seen.slot);
		if (r < 0)
			return r;
	} else {
		return rq_bad(err, where, "hosts must be a list or \"any\"%s", "");
	}
	if (json_object_object_get_ex(o, "namespaces", &nss)) {
		if (!json_object_is_type(nss, json_type_array))
			return rq_bad(err, where, "namespaces must be a list%s", "");
		if (RQ_NEW_LIST(nss, t->ns, t->nns, &seen) < 0)
			return -ENOMEM;
		for (i = 0, r = 0; i < t->nns && r == 0; i++) {
			snprintf(w, sizeof(w), "%s.namespaces[%zu]", where, i);
			if ((r = parse_ns(json_object_array_get_idx(nss, i), &t->ns[i], w, err)) < 0)
				break;
			if (rq_seen_add(&seen, &t->ns[i].nsid, sizeof(t->ns[i].nsid)))
				r = rq_bad(err, w, "nsid %s is used twice",
					   json_object_to_json_string(json_object_object_get(
						json_object_array_get_idx(nss, i), "nsid")));
		}
		free(seen.slot);
		if (r < 0)
			return r;
	}
	r = rq_section(o, "dhchap", NULL, where, w, sizeof(w), &d, err);
	if (r > 0)
		r = parse_dhchap(d, t, w, err);
	if (r < 0)
		return r;
	if (t->tls && !t->keys)
		return rq_bad(err, where, "tls needs 'dhchap' (its keys carry each host's psk)%s",
			      "");
	return 0;
}
