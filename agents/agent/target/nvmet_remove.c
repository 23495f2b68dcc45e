// SPDX-License-Identifier: MIT
/*
 * nvmet removals: what this cluster owns and no longer wants (in a
 * teardown, all but the objects of the kept subsystems), in the kernel's
 * reverse order: port links, ports, namespaces, allowed-host links,
 * subsystems, hosts, host keys. A host entry another cluster's subsystem
 * still allows is left to that cluster, key and all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent/kernel/fs.h"
#include "agents/agent/kernel/paths.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/target/nvmet.h"
#include "common/json.h"
#include "common/log.h"

static void want_key(struct json_object *set, const char *kind, const char *id)
{
	char key[1100];

	if (snprintf(key, sizeof(key), "%s\x1f%s", kind, id) < (int)sizeof(key))
		json_object_object_add(set, key, NULL);
}

/* A teardown keeps every owned object of a kept subsystem N: N, N/NSID,
 * N/HOST and the hosts (and keys) it allows, T/A/S/N and its port. */
static void want_kept(struct ln_converge *cv, struct json_object *set)
{
	struct json_object *objs = ln_state_objects(&cv->st, cv->cluster);
	size_t i, n = objs ? json_object_array_length(objs) : 0;

	for (i = 0; cv->kept && i < n; i++) {
		struct json_object *o = json_object_array_get_idx(objs, i);
		const char *k = ln_json_str_at(o, "kind"), *id = ln_json_str_at(o, "id");
		const char *first = id ? strchr(id, '/') : NULL, *last = id ? strrchr(id, '/') : NULL;
		char nqn[512];

		if (!k || !id)
			continue;
		if (!strcmp(k, "nvmet_subsystem")) {
			if (json_object_object_get_ex(cv->kept, id, NULL))
				want_key(set, k, id);
		} else if ((!strcmp(k, "nvmet_namespace") || !strcmp(k, "nvmet_allowed_host")) &&
			   first) {
			snprintf(nqn, sizeof(nqn), "%.*s", (int)(first - id), id);
			if (!json_object_object_get_ex(cv->kept, nqn, NULL))
				continue;
			want_key(set, k, id);
			if (!strcmp(k, "nvmet_allowed_host")) {
				want_key(set, "nvmet_host", first + 1);
				want_key(set, "nvmet_host_key", first + 1);
			}
		} else if (!strcmp(k, "nvmet_port_subsystem") && last &&
			   json_object_object_get_ex(cv->kept, last + 1, NULL)) {
			want_key(set, k, id);
			snprintf(nqn, sizeof(nqn), "%.*s", (int)(last - id), id);
			want_key(set, "nvmet_port", nqn);
		}
	}
}

/* Every (kind, id) the request wants, as a hash set: "kind\x1fid". */
static struct json_object *wanted_set(struct ln_converge *cv)
{
	struct json_object *set = json_object_new_object();
	char key[1100], tup[128];
	size_t i, j;

#define WANT(kind, ...) \
	do { \
		int n_ = snprintf(key, sizeof(key), kind "\x1f" __VA_ARGS__); \
		if (n_ > 0 && (size_t)n_ < sizeof(key)) \
			json_object_object_add(set, key, NULL); \
	} while (0)
	for (i = 0; cv->rq && i < cv->rq->ntargets; i++) {
		const struct ln_req_target *t = &cv->rq->targets[i];

		ln_nvmet_tuple(tup, sizeof(tup), t->transport, t->address, t->service);
		WANT("nvmet_subsystem", "%s", t->nqn);
		WANT("nvmet_port", "%s", tup);
		WANT("nvmet_port_subsystem", "%s/%s", tup, t->nqn);
		for (j = 0; j < t->nhosts; j++) {
			WANT("nvmet_host", "%s", t->hosts[j]);
			if (t->dh_hash)
				WANT("nvmet_host_key", "%s", t->hosts[j]);
			WANT("nvmet_allowed_host", "%s/%s", t->nqn, t->hosts[j]);
		}
		for (j = 0; j < t->nns; j++)
			WANT("nvmet_namespace", "%s/%u", t->nqn, t->ns[j].nsid);
	}
#undef WANT
	want_kept(cv, set);
	return set;
}

/* Owned records of kind this run no longer wants (a copy: the list changes). */
static struct json_object *unwanted(struct ln_converge *cv, struct json_object *want, const char *kind)
{
	struct json_object *objs = ln_state_objects(&cv->st, cv->cluster), *out;
	size_t i, n = objs ? json_object_array_length(objs) : 0;
	char key[1100];

	out = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(objs, i);
		const char *k = ln_json_str_at(o, "kind"), *id = ln_json_str_at(o, "id");

		if (!k || !id || strcmp(k, kind))
			continue;
		snprintf(key, sizeof(key), "%s\x1f%s", kind, id);
		if (!json_object_object_get_ex(want, key, NULL))
			json_object_array_add(out, json_object_get(o));
	}
	return out;
}

/* How many of a port's subsystem links (names, NQNs) stay once this
 * converge is done. Its own unwanted links go before the port (order in
 * ln_nvmet_remove), so in a run they are already gone; a plan removed
 * nothing, so they are counted out here: what is left is another's. */
static size_t links_left(struct ln_converge *cv, struct json_object *want, const char *port_id,
			 char **links, size_t n)
{
	char id[1100], key[1200];
	size_t i, left = 0;

	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "%s/%s", port_id, links[i]);
		snprintf(key, sizeof(key), "nvmet_port_subsystem\x1f%s", id);
		if (!cv->plan || !ln_cv_owned(cv, "nvmet_port_subsystem", id) ||
		    json_object_object_get_ex(want, key, NULL))
			left++;
	}
	return left;
}

/* Remove one owned configfs object: fn is rmdir or unlink. */
static void remove_owned(struct ln_converge *cv, const char *kind, const char *id, const char *path,
			 int is_link, const char *detail)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc = 0;

	if (!(is_link ? ln_is_link(cv->a, path) : ln_is_dir(cv->a, path))) {
		/* Already gone (a stopped run, or removed by hand): forget it. */
		if (!cv->plan)
			ln_cv_disown(cv, kind, id);
		return;
	}
	if (!cv->plan)
		rc = is_link ? ln_fs_unlink(cv->a, path, &err) : ln_fs_rmdir(cv->a, path, &err);
	if (rc == 0 && !cv->plan)
		ln_cv_disown(cv, kind, id);
	ln_cv_report(cv, "remove", kind, id, detail, rc < 0 ? err.buf : NULL);
	ln_buf_release(&err);
}

/* A subsystem this cluster does not own that still allows host h, another
 * cluster's first (its NQN into sub, its cluster into *owner), else one
 * llmnet did not make (*owner NULL). 1 when there is one. */
static int other_user(struct ln_converge *cv, const char *h, char *sub, size_t len,
		      const char **owner)
{
	char **subs = NULL, p[PATH_MAX];
	size_t n = 0, i;
	int found = 0;

	ln_list_dir(cv->a, P_SUB, &subs, &n);
	for (i = 0; i < n && !(found && *owner); i++) {
		const char *o;

		snprintf(p, sizeof(p), P_SUB "%s/allowed_hosts/%s", subs[i], h);
		if (ln_cv_owned(cv, "nvmet_subsystem", subs[i]) || !ln_is_link(cv->a, p))
			continue;
		o = ln_state_other_owner(&cv->st, cv->cluster, "nvmet_subsystem", subs[i]);
		if (found && !o)
			continue;
		snprintf(sub, len, "%s", subs[i]);
		*owner = o;
		found = 1;
	}
	ln_names_free(subs, n);
	return found;
}

/* Host entry h (kind: the entry or its key) that another cluster's
 * subsystem still allows: nvmet keeps one entry per host and node, and the
 * other cluster's settings are this one's (nvmet_hosts.c refuses unlike
 * ones), so it stays as it is and that cluster owns it from now on: its
 * teardown, the last user's, removes it. 1 when handed over. */
static int hand_over(struct ln_converge *cv, const char *kind, const char *h)
{
	const char *owner = NULL;
	char sub[512];

	if (!other_user(cv, h, sub, sizeof(sub), &owner) || !owner)
		return 0;
	if (!cv->plan) {
		ln_state_add(&cv->st, owner, kind, h);
		ln_cv_disown(cv, kind, h);
		cv->st.dirty = 1;
	}
	ln_changes_warn(&cv->ch, "%s '%s' kept for cluster '%s' ('%s'), whose subsystem still "
			"allows it; that cluster's teardown removes it",
			!strcmp(kind, "nvmet_host") ? "host entry" : "DH-HMAC-CHAP key of host entry",
			h, owner, sub);
	return 1;
}

/*
 * A host entry this cluster keyed and no longer wants keyed. Gone with its
 * entry (removed just before): forgotten. Still there (kept for a foreign
 * subsystem, or still allowed without a key): nvmet cannot clear a secret
 * in place, so the host would still have to authenticate: said, and kept
 * owned so that the next run says it again.
 */
static void unkey_host(struct ln_converge *cv, struct json_object *want, const char *h)
{
	char p[PATH_MAX], key[600];
	int with_entry;

	snprintf(p, sizeof(p), P_HOST "%s/dhchap_key", h);
	if (ln_path_exists(cv->a, p) && !ln_nvmet_read_eq(cv->a, p, "") &&
	    hand_over(cv, "nvmet_host_key", h))
		return;
	/* a plan removes nothing: the entry goes when owned and unwanted */
	snprintf(key, sizeof(key), "nvmet_host\x1f%s", h);
	with_entry = cv->plan && ln_cv_owned(cv, "nvmet_host", h) &&
		     !json_object_object_get_ex(want, key, NULL);
	snprintf(p, sizeof(p), P_HOST "%s/dhchap_key", h);
	if (with_entry || !ln_path_exists(cv->a, p) || ln_nvmet_read_eq(cv->a, p, "")) {
		if (!cv->plan)
			ln_cv_disown(cv, "nvmet_host_key", h);
		else
			ln_cv_report(cv, "remove", "nvmet_host_key", h, "with the host entry",
				     NULL);
		return;
	}
	ln_cv_report(cv, "remove", "nvmet_host_key", h, NULL,
		     "nvmet cannot clear a host entry's DH-HMAC-CHAP secret in place and the "
		     "entry stays (still allowed, or kept for another subsystem): tear the "
		     "cluster down on this node and apply again");
}

void ln_nvmet_remove(struct ln_converge *cv)
{
	static const char *const order[] = { "nvmet_port_subsystem", "nvmet_port",
					     "nvmet_namespace", "nvmet_allowed_host",
					     "nvmet_subsystem", "nvmet_host", "nvmet_host_key", NULL };
	struct json_object *want = wanted_set(cv);
	const char *const *k;

	for (k = order; *k; k++) {
		struct json_object *l = unwanted(cv, want, *k);
		size_t i, n = json_object_array_length(l);

		for (i = 0; i < n; i++) {
			struct json_object *o = json_object_array_get_idx(l, i);
			const char *id = ln_json_str_at(o, "id"), *port = ln_json_str_at(o, "port");
			char p[PATH_MAX], det[64] = "";
			const char *slash;

			if (!strcmp(*k, "nvmet_port_subsystem")) {
				slash = strrchr(id, '/');
				/* the NQN has no '/', so it is the last part */
				snprintf(p, sizeof(p), P_PORT "%s/subsystems/%s", port ? port : "?",
					 slash + 1);
				remove_owned(cv, *k, id, p, 1, NULL);
			} else if (!strcmp(*k, "nvmet_port")) {
				snprintf(p, sizeof(p), P_PORT "%s", port ? port : "?");
				snprintf(det, sizeof(det), "port %s", port ? port : "?");
				if (ln_is_dir(cv->a, p)) {
					char **links;
					size_t nl, left;

					snprintf(p, sizeof(p), P_PORT "%s/subsystems", port);
					ln_list_dir(cv->a, p, &links, &nl);
					left = links_left(cv, want, id, links, nl);
					ln_names_free(links, nl);
					if (left) {
						ln_changes_warn(&cv->ch,
								"kept port %s ('%s'): other subsystems "
								"are still linked to it", port, id);
						continue;
					}
				}
				snprintf(p, sizeof(p), P_PORT "%s", port ? port : "?");
				remove_owned(cv, *k, id, p, 0, det);
			} else if (!strcmp(*k, "nvmet_namespace")) {
				slash = strrchr(id, '/');
				snprintf(p, sizeof(p), P_SUB "%.*s/namespaces/%s", (int)(slash - id), id,
					 slash + 1);
				remove_owned(cv, *k, id, p, 0, NULL);
			} else if (!strcmp(*k, "nvmet_allowed_host")) {
				slash = strchr(id, '/');
				snprintf(p, sizeof(p), P_SUB "%.*s/allowed_hosts/%s", (int)(slash - id),
					 id, slash + 1);
				remove_owned(cv, *k, id, p, 1, NULL);
			} else if (!strcmp(*k, "nvmet_subsystem")) {
				snprintf(p, sizeof(p), P_SUB "%s", id);
				remove_owned(cv, *k, id, p, 0, NULL);
			} else if (!strcmp(*k, "nvmet_host_key")) {
				unkey_host(cv, want, id);
			} else {
				snprintf(p, sizeof(p), P_HOST "%s", id);
				if (ln_is_dir(cv->a, p) && hand_over(cv, *k, id))
					continue;
				if (ln_is_dir(cv->a, p) && ln_nvmet_still_linked(cv->a, LN_NVMET "/subsystems",
								       "allowed_hosts", id) &&
				    !cv->plan) {
					ln_changes_warn(&cv->ch, "kept host '%s': a subsystem llmnet "
						       "does not own still allows it", id);
					continue;
				}
				remove_owned(cv, *k, id, p, 0, NULL);
			}
		}
		json_object_put(l);
	}
	json_object_put(want);
}
