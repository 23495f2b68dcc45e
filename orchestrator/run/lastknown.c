/* SPDX-License-Identifier: MIT */
/*
 * A plan's silent nodes (unreachable, or they refused us) shown against
 * their last-known state: the desired state now (plan.c) against the one
 * recorded at their last apply (state.c), as the agent would put the
 * difference if the node still holds what it was given. Reads the state
 * folder, contacts no node.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "orchestrator/run/lastknown.h"
#include "orchestrator/run/plan.h"
#include "orchestrator/run/state.h"
#include "orchestrator/transport/answer.h"

static void change(struct json_object *chs, const char *action, const char *kind,
		   const char *id, const char *detail)
{
	struct json_object *c = json_object_new_object();

	ln_json_add_str(c, "action", action);
	ln_json_add_str(c, "kind", kind);
	ln_json_add_str(c, "id", id);
	if (detail)
		ln_json_add_str(c, "detail", detail);
	json_object_array_add(chs, c);
}

/* The element of array arr equal to v. */
static struct json_object *find_by_value(struct json_object *arr, struct json_object *v)
{
	size_t i;

	for (i = 0; i < json_object_array_length(arr); i++)
		if (json_object_equal(json_object_array_get_idx(arr, i), v))
			return json_object_array_get_idx(arr, i);
	return NULL;
}

/* The element of array arr whose key member is val (a string or number). */
static struct json_object *find_by(struct json_object *arr, const char *key, struct json_object *val)
{
	size_t i;

	for (i = 0; arr && json_object_is_type(arr, json_type_array) &&
		    i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		if (json_object_equal(ln_json_at(e, key), val))
			return e;
	}
	return NULL;
}

static int in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

/* Does any member other than those in skip differ between a and b? */
static int differs_but(struct json_object *a, struct json_object *b, const char *const *skip)
{
	struct json_object *x = json_object_new_object(), *y = json_object_new_object();
	int d;

	json_object_object_foreach(a, ka, va) {
		if (!in_list(ka, skip))
			json_object_object_add(x, ka, json_object_get(va));
	}
	json_object_object_foreach(b, kb, vb) {
		if (!in_list(kb, skip))
			json_object_object_add(y, kb, json_object_get(vb));
	}
	d = !json_object_equal(x, y);
	json_object_put(x);
	json_object_put(y);
	return d;
}

/* The strings of array a that array b lacks, each as one change. */
static void strings_gone(struct json_object *chs, struct json_object *a, struct json_object *b,
			 const char *action, const char *kind, const char *prefix)
{
	struct ln_buf id = LN_BUF_INIT;
	size_t i;

	for (i = 0; a && json_object_is_type(a, json_type_array) && i < json_object_array_length(a); i++) {
		struct json_object *v = json_object_array_get_idx(a, i);

		if (b && json_object_is_type(b, json_type_array) && find_by_value(b, v))
			continue;
		ln_buf_reset(&id);
		ln_buf_addf(&id, "%s/%s", prefix, json_object_get_string(v));
		change(chs, action, kind, id.buf, NULL);
	}
	ln_buf_release(&id);
}

/* A host's key entry that is new or changed (secrets compared by their
 * fingerprints, hash and group with them): "~ nvmet_host_key HOSTNQN",
 * named as the agent names it (the entry is the node's, not the target's). */
static void diff_host_keys(struct json_object *chs, struct json_object *od, struct json_object *nd)
{
	struct json_object *ok = ln_json_at(od, "keys"), *nk = ln_json_at(nd, "keys");
	int same_params = od && json_object_equal(ln_json_at(od, "hash"), ln_json_at(nd, "hash")) &&
			  json_object_equal(ln_json_at(od, "dhgroup"), ln_json_at(nd, "dhgroup"));
	size_t i;

	for (i = 0; nk && json_object_is_type(nk, json_type_array) &&
		    i < json_object_array_length(nk); i++) {
		struct json_object *e = json_object_array_get_idx(nk, i);
		struct json_object *was = find_by(ok, "host", ln_json_at(e, "host"));

		if (was && same_params && json_object_equal(was, e))
			continue;
		change(chs, was ? "change" : "create", "nvmet_host_key", ln_json_str_at(e, "host"),
		       NULL);
	}
}

static void diff_target(struct json_object *chs, struct json_object *o, struct json_object *n)
{
	static const char *const own[] = { "hosts", "namespaces", "dhchap", NULL };
	struct json_object *oh = ln_json_at(o, "hosts"), *nh = ln_json_at(n, "hosts");
	struct json_object *ons = ln_json_at(o, "namespaces"), *nns = ln_json_at(n, "namespaces");
	const char *nqn = ln_json_str_at(n, "nqn");
	struct ln_buf id = LN_BUF_INIT;
	size_t i;

	if (differs_but(o, n, own))
		change(chs, "change", "nvmet_port", nqn, "transport, address or service");
	if (json_object_is_type(oh, json_type_string) != json_object_is_type(nh, json_type_string))
		change(chs, json_object_is_type(nh, json_type_string) ? "create" : "remove",
		       "nvmet_allow_any_host", nqn, NULL);
	strings_gone(chs, nh, oh, "create", "nvmet_allowed_host", nqn);
	strings_gone(chs, oh, nh, "remove", "nvmet_allowed_host", nqn);
	diff_host_keys(chs, ln_json_at(o, "dhchap"), ln_json_at(n, "dhchap"));
	for (i = 0; nns && i < json_object_array_length(nns); i++) {
		struct json_object *ns = json_object_array_get_idx(nns, i);
		struct json_object *was = find_by(ons, "nsid", ln_json_at(ns, "nsid"));

		ln_buf_reset(&id);
		ln_buf_addf(&id, "%s/%s", nqn, json_object_get_string(ln_json_at(ns, "nsid")));
		if (!was)
			change(chs, "create", "nvmet_namespace", id.buf, NULL);
		else if (!json_object_equal(was, ns))
			change(chs, "change", "nvmet_namespace", id.buf, NULL);
	}
	for (i = 0; ons && i < json_object_array_length(ons); i++) {
		struct json_object *ns = json_object_array_get_idx(ons, i);

		if (find_by(nns, "nsid", ln_json_at(ns, "nsid")))
			continue;
		ln_buf_reset(&id);
		ln_buf_addf(&id, "%s/%s", nqn, json_object_get_string(ln_json_at(ns, "nsid")));
		change(chs, "remove", "nvmet_namespace", id.buf, NULL);
	}
	ln_buf_release(&id);
}

/* Entries of a keyed list: + for new keys, - for gone ones, and for kept
 * ones diff (or a ~ of kind when diff is NULL and they differ). */
static void diff_list(struct json_object *chs, struct json_object *old, struct json_object *now,
		      const char *key, const char *kind,
		      void (*diff)(struct json_object *chs, struct json_object *o, struct json_object *n))
{
	size_t i;

	for (i = 0; now && json_object_is_type(now, json_type_array) && i < json_object_array_length(now); i++) {
		struct json_object *n = json_object_array_get_idx(now, i);
		struct json_object *o = find_by(old, key, ln_json_at(n, key));
		const char *id = ln_json_str_at(n, key);

		if (!o)
			change(chs, "create", kind, id, NULL);
		else if (diff)
			diff(chs, o, n);
		else if (!json_object_equal(o, n))
			change(chs, "change", kind, id, NULL);
	}
	for (i = 0; old && json_object_is_type(old, json_type_array) && i < json_object_array_length(old); i++) {
		struct json_object *o = json_object_array_get_idx(old, i);

		if (!find_by(now, key, ln_json_at(o, key)))
			change(chs, "remove", kind, ln_json_str_at(o, key), NULL);
	}
}

/*
 * The change list that takes a node from the desired state recorded at
 * its last apply (old) to the desired state now (now), in the agent's
 * kinds: what apply would do if the node still holds what it was given.
 */
static struct json_object *diff_requests(struct json_object *old, struct json_object *now)
{
	struct json_object *ans = json_object_new_object(), *chs = json_object_new_array();
	struct json_object *ohf = ln_json_at(old, "hostfile"), *nhf = ln_json_at(now, "hostfile");
	const char *op = ln_json_str_at(ohf, "path"), *np = ln_json_str_at(nhf, "path");

	diff_list(chs, ln_json_at(old, "targets"), ln_json_at(now, "targets"), "nqn",
		  "nvmet_subsystem", diff_target);
	diff_list(chs, ln_json_at(old, "initiators"), ln_json_at(now, "initiators"), "target",
		  "nvme_connection", NULL);
	if (op && (!np || strcmp(op, np)))
		change(chs, "remove", "hostfile", op, NULL);
	if (np && (!op || strcmp(op, np)))
		change(chs, "create", "hostfile", np, NULL);
	else if (np && !json_object_equal(ohf, nhf))
		change(chs, "change", "hostfile", np, NULL);
	ln_json_add(ans, "changes", chs);
	return ans;
}

static int silent(const struct ln_node_run *nr)
{
	return nr->state == LN_NODE_UNREACHABLE || nr->state == LN_NODE_REFUSED;
}

int ln_lastknown_plan(struct ln_run *r, struct ln_buf *err)
{
	struct json_object *applied = NULL, *facts = NULL;
	size_t i;
	int any = 0, rc;

	for (i = 0; i < r->n; i++)
		any |= silent(&r->nodes[i]);
	if (!any)
		return 0;
	rc = ln_state_load(r, "applied.json", &applied, err);
	if (rc == 0)
		rc = ln_state_load(r, "facts.json", &facts, err);
	if (rc < 0)
		goto out;
	/* A silent target node keeps the hosts its last-known facts allow
	 * (plan.c keeps a silent initiator's access the same way). */
	for (i = 0; i < r->n; i++) {
		struct ln_node_run *nr = &r->nodes[i];

		if (silent(nr) && !nr->facts)	/* the known fields only, as cached */
			nr->facts = ln_answer_known_facts(
				ln_json_at(ln_json_at(facts, nr->spec->name), "facts"));
	}
	for (i = 0; i < r->n; i++) {
		struct ln_node_run *nr = &r->nodes[i];
		struct json_object *e = ln_json_at(applied, nr->spec->name), *now;
		int64_t at = 0;

		if (!silent(nr))
			continue;
		if (!e || ln_json_i64_at(e, "applied_at", &at) < 0)
			continue;
		now = ln_plan_request(r, i, LN_PHASE_FULL, NULL);
		if (!now) {
			rc = -ENOMEM;
			goto out;
		}
		/* compared with the recorded request, fingerprint to fingerprint */
		ln_secrets_redact(now);
		json_object_put(nr->answer);
		nr->answer = diff_requests(ln_json_at(e, "request"), now);
		nr->cached_at = (time_t)at;
		json_object_put(now);
	}
out:
	json_object_put(applied);
	json_object_put(facts);
	return rc;
}
