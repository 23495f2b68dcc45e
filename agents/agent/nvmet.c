// SPDX-License-Identifier: MIT
/*
 * nvmet target reconcile, by delta, in the kernel's order.
 *
 * Removals of what this cluster owns and no longer wants go first, in
 * reverse: port links, ports, namespaces, allowed-host links, subsystems,
 * hosts. Then creates and changes: hosts (and their DH-HMAC-CHAP keys),
 * subsystems, allowed-host links, backing files, namespaces, ports, port
 * links. A subsystem is linked to a port last, so a target that failed
 * anything before (a missing auth attribute above all) is never exported.
 *
 * Ownership ids: nvmet_host H, nvmet_subsystem N, nvmet_allowed_host N/H,
 * nvmet_namespace N/NSID, backing_file PATH, directory PATH, nvmet_port
 * T/A/S (with "port"), nvmet_port_subsystem T/A/S/N (with "port").
 * Objects that exist and are not owned are used where sharing is safe
 * (hosts, ports) and never removed; a foreign subsystem with a wanted NQN
 * is a conflict.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "agents/agent/blockdev.h"
#include "agents/agent/parts.h"
#include "agents/agent/tlspsk.h"
#include "agents/agent/paths.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/log.h"

#define P_SUB LN_NVMET "/subsystems/"
#define P_PORT LN_NVMET "/ports/"
#define P_HOST LN_NVMET "/hosts/"

static void tuple(char *out, size_t size, const char *t, const char *a, const char *s)
{
	snprintf(out, size, "%s/%s/%s", t, a, s);
}

static int read_eq(struct ln_agent *a, const char *path, const char *want)
{
	struct ln_buf b = LN_BUF_INIT;
	int eq = ln_read_attr(a, path, &b) == 0 && !strcmp(b.buf, want);

	ln_buf_release(&b);
	return eq;
}

static int read_prefix(struct ln_agent *a, const char *path, const char *prefix)
{
	struct ln_buf b = LN_BUF_INIT;
	int eq = ln_read_attr(a, path, &b) == 0 && !strncmp(b.buf, prefix, strlen(prefix));

	ln_buf_release(&b);
	return eq;
}

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

		tuple(tup, sizeof(tup), t->transport, t->address, t->service);
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

/* 1 when some subsystem's allowed_hosts (or port's subsystems) links name. */
static int still_linked(struct ln_agent *a, const char *parent, const char *sub,
			const char *name)
{
	char **objs, p[PATH_MAX];
	size_t n, i;
	int found = 0;

	if (ln_list_dir(a, parent, &objs, &n) < 0)
		return 0;
	for (i = 0; i < n && !found; i++) {
		snprintf(p, sizeof(p), "%s/%s/%s/%s", parent, objs[i], sub, name);
		found = ln_is_link(a, p);
	}
	ln_names_free(objs, n);
	return found;
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

	/* a plan removes nothing: the entry goes when owned and unwanted */
	snprintf(key, sizeof(key), "nvmet_host\x1f%s", h);
	with_entry = cv->plan && ln_cv_owned(cv, "nvmet_host", h) &&
		     !json_object_object_get_ex(want, key, NULL);
	snprintf(p, sizeof(p), P_HOST "%s/dhchap_key", h);
	if (with_entry || !ln_path_exists(cv->a, p) || read_eq(cv->a, p, "")) {
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
					size_t nl;

					snprintf(p, sizeof(p), P_PORT "%s/subsystems", port);
					ln_list_dir(cv->a, p, &links, &nl);
					ln_names_free(links, nl);
					if (nl && !(cv->plan && cv->teardown)) {
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
				if (ln_is_dir(cv->a, p) && still_linked(cv->a, LN_NVMET "/subsystems",
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

/* ---- creates ---- */

/* mkdir an owned configfs object; reports create (or the error). */
static int create_dir(struct ln_converge *cv, const char *kind, const char *id, const char *path,
		      const char *detail)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc = 0;

	if (!cv->plan) {
		rc = ln_cv_own(cv, kind, id);
		if (rc == 0)
			rc = ln_fs_mkdir(cv->a, path, &err);
	}
	ln_cv_report(cv, "create", kind, id, detail, rc < 0 ? err.buf : NULL);
	ln_buf_release(&err);
	return rc;
}

static int create_link(struct ln_converge *cv, const char *kind, const char *id, const char *target,
		       const char *link, const char *port)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc = 0;

	if (!cv->plan) {
		rc = ln_cv_own(cv, kind, id);
		if (rc == 0 && port) {
			json_object_object_del(ln_state_find(&cv->st, cv->cluster, kind, id), "port");
			ln_json_add_str(ln_state_find(&cv->st, cv->cluster, kind, id), "port", port);
			cv->st.dirty = 1;
			rc = ln_state_save(cv->a, &cv->st, &err);
		}
		if (rc == 0)
			rc = ln_fs_symlink(cv->a, target, link, &err);
	}
	ln_cv_report(cv, "create", kind, id, NULL, rc < 0 ? err.buf : NULL);
	ln_buf_release(&err);
	return rc;
}

/* Set one attribute of a host entry when it differs; *changed is set. */
static int set_host_attr(struct ln_converge *cv, const char *dir, const char *attr,
			 const char *want, int *changed, struct ln_buf *err)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", dir, attr);
	if (read_eq(cv->a, p, want))
		return 0;
	*changed = 1;
	return cv->plan ? 0 : ln_fs_write_attr(cv->a, p, want, err);
}

/*
 * Key host entry h for target t (its keys[j]): hash, group, then the
 * secrets. The entry is shared by every subsystem of the node, so one that
 * another cluster keyed is used only with the same secret. The kernel
 * shows the secret it holds; it is compared, never reported: details and
 * errors name the attribute only. 0 or negative with err.
 */
static int key_host(struct ln_converge *cv, const struct ln_req_target *t, size_t j,
		    struct ln_buf *err)
{
	const struct ln_req_key *k = &t->keys[j];
	const char *h = t->hosts[j], *other;
	char dir[PATH_MAX], p[PATH_MAX], det[160];
	int rc = 0, changed = 0, fresh;

	snprintf(dir, sizeof(dir), P_HOST "%s", h);
	snprintf(det, sizeof(det), "%s, dhgroup %s%s", t->dh_hash, t->dh_group,
		 k->ctrl_key ? ", bidirectional" : "");
	if (!ln_is_dir(cv->a, dir)) {
		/* plan: the host is still to be created; checked at apply */
		ln_cv_report(cv, "create", "nvmet_host_key", h, det, NULL);
		return 0;
	}
	snprintf(p, sizeof(p), "%s/dhchap_key", dir);
	if (!ln_path_exists(cv->a, p)) {
		ln_buf_addf(err, "cannot export '%s' with DH-HMAC-CHAP: this kernel's nvmet has no "
			    "authentication (no 'dhchap_key' on host entries; Debian's 6.1 is built "
			    "without NVME_TARGET_AUTH); the target is not exported", t->nqn);
		return -EOPNOTSUPP;
	}
	fresh = read_eq(cv->a, p, "");
	other = ln_state_other_owner(&cv->st, cv->cluster, "nvmet_host_key", h);
	if (other && !read_eq(cv->a, p, k->key)) {
		ln_buf_addf(err, "host entry '%s' is keyed by cluster '%s' with another secret; "
			    "nvmet keeps one per host and node", h, other);
		ln_cv_report(cv, "create", "nvmet_host_key", h, NULL, err->buf);
		return -EEXIST;
	}
	if (!cv->plan && !ln_cv_owned(cv, "nvmet_host_key", h))
		rc = ln_cv_own(cv, "nvmet_host_key", h);
	if (rc == 0)
		rc = set_host_attr(cv, dir, "dhchap_hash", t->dh_hash, &changed, err);
	if (rc == 0)
		rc = set_host_attr(cv, dir, "dhchap_dhgroup", t->dh_group, &changed, err);
	if (rc == 0)
		rc = set_host_attr(cv, dir, "dhchap_key", k->key, &changed, err);
	/* one-way: the kernel cannot clear a controller secret once set */
	if (rc == 0 && k->ctrl_key)
		rc = set_host_attr(cv, dir, "dhchap_ctrl_key", k->ctrl_key, &changed, err);
	else if (rc == 0 && (snprintf(p, sizeof(p), "%s/dhchap_ctrl_key", dir),
			     !read_eq(cv->a, p, ""))) {
		ln_buf_addf(err, "host entry '%s' holds a controller secret (bidirectional) the "
			    "request no longer wants, and nvmet cannot clear one in place: "
			    "tear the target down and apply again", h);
		rc = -EBUSY;
	}
	ln_cv_report(cv, !changed ? "ok" : fresh ? "create" : "change", "nvmet_host_key", h,
		     changed ? det : NULL, rc < 0 ? err->buf : NULL);
	return rc;
}

/* Key the hosts of target t; marks t failed when that is impossible. */
static void apply_dhchap(struct ln_converge *cv, struct ln_req_target *t)
{
	struct ln_buf err = LN_BUF_INIT;
	size_t j;
	int rc = 0;

	if (!t->dh_hash)
		return;
	for (j = 0; rc == 0 && j < t->nhosts; j++)
		rc = key_host(cv, t, j, &err);
	if (rc < 0) {
		t->failed = 1;
		if (rc == -EOPNOTSUPP)
			ln_cv_report(cv, "create", "nvmet_subsystem", t->nqn, "not exported",
				     err.buf);
	}
	ln_buf_release(&err);
}

/* Record key: value on this cluster's record of (kind, id) when it differs. */
static int record_field(struct ln_converge *cv, const char *kind, const char *id, const char *key,
			const char *val, struct ln_buf *err)
{
	struct json_object *rec = ln_state_find(&cv->st, cv->cluster, kind, id);
	const char *cur = rec ? ln_json_str_at(rec, key) : NULL;

	if (!rec || (cur && !strcmp(cur, val)))
		return 0;
	json_object_object_del(rec, key);
	ln_json_add_str(rec, key, val);
	cv->st.dirty = 1;
	return ln_state_save(cv->a, &cv->st, err);
}

/*
 * 1 when the identity key of (kind, id) may be set to what the request
 * asks: this cluster's record holds it (a difference is drift), or the
 * object is not in use yet (in_use: a port links the subsystem, the
 * namespace is enabled), as after a stopped create. An object in use that
 * an agent from before stable identities made has no such record: its
 * identity stays as the kernel gave it, with a warning, since changing it
 * would take the namespace from hosts that have it mounted (and nvmet
 * keeps a serial a host has seen). A teardown and apply give it the stable one.
 */
static int ident_settable(struct ln_converge *cv, const char *kind, const char *id,
			  const char *key, int in_use)
{
	struct json_object *rec = ln_state_find(&cv->st, cv->cluster, kind, id);

	if (!in_use || (rec && ln_json_str_at(rec, key)))
		return 1;
	ln_changes_warn(&cv->ch, "%s '%s' keeps the %s it was made with, before llmnet set "
			"stable identities; teardown and apply give it the stable one",
			!strcmp(kind, "nvmet_subsystem") ? "subsystem" : "namespace", id, key);
	return 0;
}

/* attr_serial as the kernel shows it: padded with spaces to 20 bytes. */
static void read_serial(struct ln_agent *a, const char *nqn, struct ln_buf *out)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), P_SUB "%s/attr_serial", nqn);
	ln_read_attr(a, p, out);
	while (out->len && out->buf[out->len - 1] == ' ')
		ln_buf_setlen(out, out->len - 1);
}

/*
 * Write t's serial. nvmet takes it until a host first identifies a
 * controller of the subsystem; after that it refuses (EINVAL) and keeps
 * the old one, which only a new subsystem (teardown, apply) replaces.
 */
static int write_serial(struct ln_converge *cv, const struct ln_req_target *t, struct ln_buf *err)
{
	char p[PATH_MAX];
	int rc;

	snprintf(p, sizeof(p), P_SUB "%s/attr_serial", t->nqn);
	rc = ln_fs_write_attr(cv->a, p, t->serial, err);
	if (rc == -EINVAL)
		ln_buf_addf(err, " (nvmet keeps a subsystem's serial once a host has connected to "
			    "it: tear the target down on this node and apply again)");
	if (rc == 0)
		rc = record_field(cv, "nvmet_subsystem", t->nqn, "serial", t->serial, err);
	return rc;
}

static void apply_subsystem(struct ln_converge *cv, struct ln_req_target *t)
{
	struct ln_buf err = LN_BUF_INIT, cur = LN_BUF_INIT, det = LN_BUF_INIT;
	char p[PATH_MAX];
	const char *other;
	int rc = 0;

	snprintf(p, sizeof(p), P_SUB "%s", t->nqn);
	other = ln_state_other_owner(&cv->st, cv->cluster, "nvmet_subsystem", t->nqn);
	if (other) {
		ln_buf_addf(&err, "subsystem '%s' belongs to cluster '%s'", t->nqn, other);
		t->failed = 1;
		ln_cv_report(cv, "create", "nvmet_subsystem", t->nqn, NULL, err.buf);
		goto out;
	}
	if (!ln_is_dir(cv->a, p)) {
		/* the serial goes in before anything can link or identify it */
		if (t->serial)
			ln_buf_addf(&det, "serial %s", t->serial);
		if (!cv->plan) {
			rc = ln_cv_own(cv, "nvmet_subsystem", t->nqn);
			if (rc == 0)
				rc = ln_fs_mkdir(cv->a, p, &err);
			if (rc == 0 && t->serial)
				rc = write_serial(cv, t, &err);
		}
		ln_cv_report(cv, "create", "nvmet_subsystem", t->nqn, det.len ? det.buf : NULL,
			     rc < 0 ? err.buf : NULL);
		if (rc < 0)
			t->failed = 1;
	} else if (!ln_cv_owned(cv, "nvmet_subsystem", t->nqn)) {
		ln_buf_addf(&err, "subsystem '%s' exists and was not created by llmnet; "
			    "remove it or choose another NQN", t->nqn);
		t->failed = 1;
		ln_cv_report(cv, "create", "nvmet_subsystem", t->nqn, NULL, err.buf);
		goto out;
	} else if (t->serial && (read_serial(cv->a, t->nqn, &cur), strcmp(cur.buf, t->serial)) &&
		   ident_settable(cv, "nvmet_subsystem", t->nqn, "serial",
				  still_linked(cv->a, LN_NVMET "/ports", "subsystems", t->nqn))) {
		/* drift: set by hand, or made by an agent without stable identity */
		ln_buf_addf(&det, "attr_serial '%s' -> '%s'", cur.buf, t->serial);
		if (!cv->plan)
			rc = write_serial(cv, t, &err);
		ln_cv_report(cv, "change", "nvmet_subsystem", t->nqn, det.buf,
			     rc < 0 ? err.buf : NULL);
		rc = 0;	/* exported already: its other objects still converge */
	} else {
		ln_cv_report(cv, "ok", "nvmet_subsystem", t->nqn, NULL, NULL);
	}
	if (t->failed)
		goto out;
	ln_buf_reset(&err);
	/* attr_allow_any_host: 1 only for "any" */
	snprintf(p, sizeof(p), P_SUB "%s/attr_allow_any_host", t->nqn);
	if (!read_eq(cv->a, p, t->any ? "1" : "0") &&
	    (ln_path_exists(cv->a, p) || t->any)) {
		if (!cv->plan)
			rc = ln_fs_write_attr(cv->a, p, t->any ? "1" : "0", &err);
		ln_cv_report(cv, "change", "nvmet_allow_any_host", t->nqn,
			     t->any ? "0 -> 1 (hosts: any)" : "1 -> 0", rc < 0 ? err.buf : NULL);
		if (rc < 0)
			t->failed = 1;
	}
out:
	ln_buf_release_all(&err, &cur, &det);
}

/* Nearest existing ancestor's free bytes, for the free-space warning. */
static long long free_bytes(struct ln_agent *a, const char *path, char *fsdir, size_t size)
{
	char p[PATH_MAX], q[PATH_MAX];
	struct statvfs sv;
	char *slash;

	snprintf(p, sizeof(p), "%s", path);
	while ((slash = strrchr(p, '/'))) {
		*slash = '\0';
		if (ln_agent_path(a, *p ? p : "/", q) == 0 && statvfs(q, &sv) == 0) {
			snprintf(fsdir, size, "%s", *p ? p : "/");
			return (long long)sv.f_bavail * (long long)sv.f_frsize;
		}
		if (!*p)
			break;
	}
	return -1;
}

static void warn_free_space(struct ln_converge *cv)
{
	struct fsreq {
		char dir[PATH_MAX];
		long long need, free;
	} *f = NULL;
	size_t nf = 0, i, j, k;

	for (i = 0; i < cv->rq->ntargets; i++) {
		const struct ln_req_target *t = &cv->rq->targets[i];

		for (j = 0; j < t->nns; j++) {
			char dir[PATH_MAX];
			long long fb;

			if (!t->ns[j].file || ln_path_exists(cv->a, t->ns[j].file))
				continue;
			fb = free_bytes(cv->a, t->ns[j].file, dir, sizeof(dir));
			if (fb < 0)
				continue;
			for (k = 0; k < nf && strcmp(f[k].dir, dir); k++)
				;
			if (k == nf) {
				struct fsreq *nfq = realloc(f, (nf + 1) * sizeof(*f));

				if (!nfq)
					break;
				f = nfq;
				snprintf(f[nf].dir, sizeof(f[nf].dir), "%s", dir);
				f[nf].need = 0;
				f[nf].free = fb;
				nf++;
			}
			f[k].need += (long long)t->ns[j].size;
		}
	}
	for (k = 0; k < nf; k++)
		if (f[k].need > f[k].free)
			ln_changes_warn(&cv->ch,
					"declared backing files need %lld bytes but '%s' has %lld "
					"bytes free (files are sparse: writes may fail later)",
					f[k].need, f[k].dir, f[k].free);
	free(f);
}

/* 1 when a namespace this cluster does not own has device_path path
 * (an older agent adopted files without recording them); its N/NSID in who. */





/* O_DIRECT answer for a path that may not exist yet: the file, else its
 * nearest existing directory. */
static int odirect_ok(struct ln_converge *cv, const char *path)
{
	char p[PATH_MAX], *slash;

	snprintf(p, sizeof(p), "%s", path);
	while (!ln_path_exists(cv->a, p) && (slash = strrchr(p, '/')) && slash != p)
		*slash = '\0';
	return cv->a->fs->odirect_ok(cv->a, p);
}

/* 1 when the namespace's attr (device_uuid/device_nguid) is want, no
 * identity is asked, or it may not be changed (ident_settable); else the
 * difference is added to det. */
static int ident_ok(struct ln_converge *cv, const char *dir, const char *attr, const char *want,
		    const char *id, const char *key, int in_use, struct ln_buf *det)
{
	struct ln_buf cur = LN_BUF_INIT;
	char p[PATH_MAX];
	int ok;

	if (!want)
		return 1;
	snprintf(p, sizeof(p), "%s/%s", dir, attr);
	ln_read_attr(cv->a, p, &cur);
	ok = !strcmp(cur.buf, want) || !ident_settable(cv, "nvmet_namespace", id, key, in_use);
	if (!ok)
		ln_buf_addf(det, "%s%s '%s' -> '%s'", det->len ? ", " : "", attr, cur.buf, want);
	ln_buf_release(&cur);
	return ok;
}

/* Write the namespace's uuid and/or nguid (disabled: nvmet refuses them on
 * an enabled one) and record them with its ownership. */
static int write_ns_ident(struct ln_converge *cv, const char *id, const char *dir,
			  const struct ln_req_ns *ns, int uuid, int nguid, struct ln_buf *err)
{
	char p[PATH_MAX];
	int rc = 0;

	if (uuid && ns->uuid) {
		snprintf(p, sizeof(p), "%s/device_uuid", dir);
		rc = ln_fs_write_attr(cv->a, p, ns->uuid, err);
		if (rc == 0)
			rc = record_field(cv, "nvmet_namespace", id, "uuid", ns->uuid, err);
	}
	if (rc == 0 && nguid && ns->nguid) {
		snprintf(p, sizeof(p), "%s/device_nguid", dir);
		rc = ln_fs_write_attr(cv->a, p, ns->nguid, err);
		if (rc == 0)
			rc = record_field(cv, "nvmet_namespace", id, "nguid", ns->nguid, err);
	}
	return rc;
}

/* A namespace that is not there yet: made, pointed at want_path, given
 * its identity and enabled, and reported. */
static void create_namespace(struct ln_converge *cv, const struct ln_req_ns *ns, const char *id,
			     const char *dir, const char *want_path, const char *want_bio,
			     struct ln_blockdev *bd)
{
	struct ln_buf err = LN_BUF_INIT, det = LN_BUF_INIT;
	char p[PATH_MAX];
	int rc = 0;

	if (!cv->plan) {
		rc = ln_cv_own(cv, "nvmet_namespace", id);
		if (rc == 0)
			rc = ln_fs_mkdir(cv->a, dir, &err);
		snprintf(p, sizeof(p), "%s/device_path", dir);
		if (rc == 0 && ns->device)
			rc = ln_blockdev_recheck(cv->a, bd, ns->device, &err);
		if (rc == 0)
			rc = ln_fs_write_attr(cv->a, p, want_path, &err);
		snprintf(p, sizeof(p), "%s/buffered_io", dir);
		if (rc == 0 && !strcmp(want_bio, "1"))
			rc = ln_fs_write_attr(cv->a, p, "1", &err);
		/* the identity, before enable (nvmet refuses it after) */
		if (rc == 0)
			rc = write_ns_ident(cv, id, dir, ns, 1, 1, &err);
		snprintf(p, sizeof(p), "%s/enable", dir);
		if (rc == 0)
			rc = ln_fs_write_attr(cv->a, p, "1", &err);
	}
	ln_buf_addf(&det, "%s %s%s", ns->file ? "file" : "device", want_path,
		    !strcmp(want_bio, "1") ? ", buffered_io (no O_DIRECT)" : "");
	if (ns->uuid)
		ln_buf_addf(&det, ", uuid %s", ns->uuid);
	if (ns->nguid)
		ln_buf_addf(&det, ", nguid %s", ns->nguid);
	if (rc == 0 && !cv->plan && ns->device)
		rc = record_field(cv, "nvmet_namespace", id, "device_id", ns->device_id, &err);
	ln_cv_report(cv, "create", "nvmet_namespace", id, det.buf, rc < 0 ? err.buf : NULL);
	ln_buf_release_all(&err, &det);
}

static void apply_namespace(struct ln_converge *cv, struct ln_req_target *t, const struct ln_req_ns *ns)
{
	struct ln_buf err = LN_BUF_INIT, cur = LN_BUF_INIT, det = LN_BUF_INIT;
	char dir[PATH_MAX], p[PATH_MAX], id[300];
	const char *want_path = ns->file ? ns->file : ns->device;
	const char *want_bio;
	struct ln_blockdev bd = { .fd = -1 };
	int rc = 0, bio_ok, path_ok, enabled, uuid_ok, nguid_ok, turned_off = 0;

	snprintf(id, sizeof(id), "%s/%u", t->nqn, ns->nsid);
	snprintf(dir, sizeof(dir), P_SUB "%s/namespaces/%u", t->nqn, ns->nsid);
	if (ns->file) {
		rc = ln_backing_file_apply(cv, ns, &err);
		if (rc == -EALREADY)
			goto out;
	} else {
		/* the resolved device is what is checked and recorded */
		rc = ln_blockdev_resolve(cv->a, ns->device, &bd, &err);
		if (rc == 0)
			rc = ln_blockdev_check_free(cv->a, &bd, ns->device, cv->rq, ns, t->nqn, &err);
		if (rc == 0)	/* held open until device_path is written */
			rc = ln_blockdev_claim(cv->a, &bd, ns->device, &err);
		if (rc == 0)
			want_path = bd.path;
	}
	if (rc) {
		ln_cv_report(cv, "create", "nvmet_namespace", id, NULL, err.buf);
		goto out;
	}
	want_bio = ns->file && !odirect_ok(cv, ns->file) ? "1" : "0";
	if (!ln_is_dir(cv->a, dir)) {
		create_namespace(cv, ns, id, dir, want_path, want_bio, &bd);
		goto out;
	}
	/* exported by an agent that did not record devices yet: from now on */
	if (!cv->plan && ns->device && ln_cv_owned(cv, "nvmet_namespace", id))
		rc = record_field(cv, "nvmet_namespace", id, "device_id", ns->device_id, &err);
	snprintf(p, sizeof(p), "%s/device_path", dir);
	ln_read_attr(cv->a, p, &cur);
	path_ok = !strcmp(cur.buf, want_path);
	if (!path_ok)
		ln_buf_addf(&det, "device_path '%s' -> '%s'", cur.buf, want_path);
	snprintf(p, sizeof(p), "%s/buffered_io", dir);
	bio_ok = read_eq(cv->a, p, want_bio);
	if (!bio_ok)
		ln_buf_addf(&det, "%sbuffered_io -> %s", det.len ? ", " : "", want_bio);
	snprintf(p, sizeof(p), "%s/enable", dir);
	enabled = read_eq(cv->a, p, "1");
	uuid_ok = ident_ok(cv, dir, "device_uuid", ns->uuid, id, "uuid", enabled, &det);
	nguid_ok = ident_ok(cv, dir, "device_nguid", ns->nguid, id, "nguid", enabled, &det);
	if (path_ok && bio_ok && uuid_ok && nguid_ok && enabled) {
		ln_cv_report(cv, "ok", "nvmet_namespace", id, NULL, NULL);
		goto out;
	}
	if (!enabled)
		ln_buf_addf(&det, "%senable", det.len ? ", " : "");
	if (!cv->plan) {
		/* The kernel refuses device_path, buffered_io, device_uuid and
		 * device_nguid on an enabled namespace. */
		snprintf(p, sizeof(p), "%s/enable", dir);
		if (enabled && (!path_ok || !bio_ok || !uuid_ok || !nguid_ok)) {
			rc = ln_fs_write_attr(cv->a, p, "0", &err);
			turned_off = rc == 0;
		}
		snprintf(p, sizeof(p), "%s/device_path", dir);
		if (rc == 0 && !path_ok && ns->device)
			rc = ln_blockdev_recheck(cv->a, &bd, ns->device, &err);
		if (rc == 0 && !path_ok)
			rc = ln_fs_write_attr(cv->a, p, want_path, &err);
		snprintf(p, sizeof(p), "%s/buffered_io", dir);
		if (rc == 0 && !bio_ok)
			rc = ln_fs_write_attr(cv->a, p, want_bio, &err);
		if (rc == 0)
			rc = write_ns_ident(cv, id, dir, ns, !uuid_ok, !nguid_ok, &err);
		snprintf(p, sizeof(p), "%s/enable", dir);
		if (rc == 0) {
			rc = ln_fs_write_attr(cv->a, p, "1", &err);
		} else if (turned_off) {
			/* a failed change must not leave the hosts without it */
			struct ln_buf e2 = LN_BUF_INIT;

			if (ln_fs_write_attr(cv->a, p, "1", &e2) < 0)
				ln_buf_addf(&err, "; and enabling it again failed: %s", e2.buf);
			ln_buf_release(&e2);
		}
	}
	ln_cv_report(cv, "change", "nvmet_namespace", id, det.buf, rc < 0 ? err.buf : NULL);
out:
	ln_blockdev_release(&bd);
	ln_buf_release_all(&err, &cur, &det);
}

struct port_want {
	const char *transport, *address, *family, *service;
	int tls;	/* addr_tsas tls1.3, addr_treq required */
	char id[16];
	int used;	/* some target that is not failed uses it */
};

static int port_matches(struct ln_agent *a, const char *id, const struct port_want *w)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), P_PORT "%s/addr_trtype", id);
	if (!read_eq(a, p, w->transport))
		return 0;
	snprintf(p, sizeof(p), P_PORT "%s/addr_traddr", id);
	if (!read_eq(a, p, w->address))
		return 0;
	snprintf(p, sizeof(p), P_PORT "%s/addr_trsvcid", id);
	return read_eq(a, p, w->service);
}

/* Choose the port for w: owned, else a matching existing one, else a new id. */
static void choose_port(struct ln_converge *cv, struct port_want *w, struct port_want *all, size_t nall,
			int *is_new)
{
	char tup[128], **ports;
	struct json_object *rec;
	size_t n, i;
	unsigned id;

	*is_new = 0;
	tuple(tup, sizeof(tup), w->transport, w->address, w->service);
	rec = ln_state_find(&cv->st, cv->cluster, "nvmet_port", tup);
	if (rec && ln_json_str_at(rec, "port")) {
		snprintf(w->id, sizeof(w->id), "%s", ln_json_str_at(rec, "port"));
		return;
	}
	if (ln_list_dir(cv->a, LN_NVMET "/ports", &ports, &n) == 0) {
		for (i = 0; i < n; i++) {
			if (port_matches(cv->a, ports[i], w)) {
				snprintf(w->id, sizeof(w->id), "%s", ports[i]);
				ln_names_free(ports, n);
				return;
			}
		}
		ln_names_free(ports, n);
	}
	for (id = 1; id < 65535; id++) {
		char p[PATH_MAX], s[16];
		size_t k;
		int taken;

		snprintf(s, sizeof(s), "%u", id);
		snprintf(p, sizeof(p), P_PORT "%s", s);
		taken = ln_path_exists(cv->a, p);
		for (k = 0; k < nall && !taken; k++)
			taken = !strcmp(all[k].id, s);
		if (!taken) {
			snprintf(w->id, sizeof(w->id), "%s", s);
			*is_new = 1;
			return;
		}
	}
}

static void apply_port(struct ln_converge *cv, struct port_want *w, struct port_want *all, size_t nall)
{
	static const char *const attrs[] = { "addr_trtype", "addr_adrfam", "addr_traddr",
					     "addr_trsvcid", "addr_tsas", "addr_treq" };
	struct ln_buf err = LN_BUF_INIT, det = LN_BUF_INIT;
	char tup[128], dir[PATH_MAX], p[PATH_MAX], **links = NULL;
	const char *vals[6];
	size_t nl = 0, i, nattrs = 4;
	int rc = 0, is_new, owned, differs = 0;
	struct json_object *rec;

	tuple(tup, sizeof(tup), w->transport, w->address, w->service);
	choose_port(cv, w, all, nall, &is_new);
	snprintf(dir, sizeof(dir), P_PORT "%s", w->id);
	owned = ln_cv_owned(cv, "nvmet_port", tup);
	vals[0] = w->transport;
	vals[1] = w->family;
	vals[2] = w->address;
	vals[3] = w->service;
	/* TLS: set after addr_trtype (the kernel takes addr_tsas on a tcp
	 * port only) and while no subsystem is linked; a port that had TLS
	 * and no longer should is set back to none / not specified */
	vals[4] = w->tls ? "tls1.3" : "none";
	vals[5] = w->tls ? "required" : "not specified";
	snprintf(p, sizeof(p), "%s/addr_tsas", dir);
	if (w->tls || (!strcmp(w->transport, "tcp") && read_prefix(cv->a, p, "tls")))
		nattrs = 6;
	snprintf(p, sizeof(p), "port %s", w->id);
	if (!ln_is_dir(cv->a, dir)) {
		if (!cv->plan) {
			rc = ln_cv_own(cv, "nvmet_port", tup);
			rec = ln_state_find(&cv->st, cv->cluster, "nvmet_port", tup);
			if (rc == 0 && !ln_json_str_at(rec, "port")) {
				ln_json_add_str(rec, "port", w->id);
				cv->st.dirty = 1;
				rc = ln_state_save(cv->a, &cv->st, &err);
			}
			if (rc == 0)
				rc = ln_fs_mkdir(cv->a, dir, &err);
			for (i = 0; rc == 0 && i < nattrs; i++) {
				char q[PATH_MAX];

				snprintf(q, sizeof(q), "%s/%s", dir, attrs[i]);
				rc = ln_fs_write_attr(cv->a, q, vals[i], &err);
			}
		}
		if (w->tls)
			snprintf(p, sizeof(p), "port %s, tls1.3 required", w->id);
		ln_cv_report(cv, "create", "nvmet_port", tup, p, rc < 0 ? err.buf : NULL);
		goto out;
	}
	if (!owned) {
		ln_cv_report(cv, "ok", "nvmet_port", tup, p, NULL);
		goto out;
	}
	for (i = 0; i < nattrs; i++) {
		char q[PATH_MAX];

		snprintf(q, sizeof(q), "%s/%s", dir, attrs[i]);
		if (!read_eq(cv->a, q, vals[i])) {
			differs = 1;
			ln_buf_addf(&det, "%s%s -> %s", det.len ? ", " : "", attrs[i], vals[i]);
		}
	}
	if (!differs) {
		ln_cv_report(cv, "ok", "nvmet_port", tup, p, NULL);
		goto out;
	}
	if (!cv->plan) {
		/* The kernel refuses addr_* while a subsystem is linked: unlink,
		 * set, and link back what was there. */
		snprintf(p, sizeof(p), "%s/subsystems", dir);
		ln_list_dir(cv->a, p, &links, &nl);
		for (i = 0; rc == 0 && i < nl; i++) {
			char q[PATH_MAX];

			snprintf(q, sizeof(q), "%s/subsystems/%s", dir, links[i]);
			rc = ln_fs_unlink(cv->a, q, &err);
		}
		for (i = 0; rc == 0 && i < nattrs; i++) {
			char q[PATH_MAX];

			snprintf(q, sizeof(q), "%s/%s", dir, attrs[i]);
			if (!read_eq(cv->a, q, vals[i]))
				rc = ln_fs_write_attr(cv->a, q, vals[i], &err);
		}
		for (i = 0; rc == 0 && i < nl; i++) {
			char q[PATH_MAX], t[PATH_MAX];

			snprintf(q, sizeof(q), "%s/subsystems/%s", dir, links[i]);
			snprintf(t, sizeof(t), P_SUB "%s", links[i]);
			rc = ln_fs_symlink(cv->a, t, q, &err);
		}
	}
	ln_cv_report(cv, "change", "nvmet_port", tup, det.buf, rc < 0 ? err.buf : NULL);
out:
	ln_names_free(links, nl);
	ln_buf_release(&err);
	ln_buf_release(&det);
}

/*
 * A device namespace's stable identity (ns->device_id) must be the one
 * recorded when it was first exported: a path such as /dev/sdb may name
 * another disk after a reboot, and exporting it would hand the hosts
 * someone else's data. A device without any identity is refused too: it
 * could not be told from another one later.
 */
static int same_device(struct ln_converge *cv, const struct ln_blockdev *bd, struct ln_req_ns *ns,
		       const char *id, struct ln_buf *err)
{
	struct json_object *rec = ln_state_find(&cv->st, cv->cluster, "nvmet_namespace", id);
	const char *was = rec ? ln_json_str_at(rec, "device_id") : NULL;

	if (ln_blockdev_stable_id(cv->a, bd, ns->device_id, sizeof(ns->device_id)) < 0) {
		ln_buf_addf(err, "device '%s' (%s) has no stable identity (no WWID, serial or "
			    "/dev/disk/by-id name), so llmnet could not tell it from another device "
			    "after a reboot; refusing to export it", ns->device, bd->path);
		return -ENODEV;
	}
	if (was && strcmp(was, ns->device_id)) {
		ln_buf_addf(err, "device '%s' (%s) is not the device first exported as '%s': that "
			    "was %s, this is %s; refusing to export it", ns->device, bd->path, id,
			    was, ns->device_id);
		return -ENODEV;
	}
	return 0;
}

/* A target with a namespace device in use (or not the one first exported)
 * is not exported at all: it is refused before any of its objects (host,
 * subsystem, port) is created. */
static void check_devices(struct ln_converge *cv)
{
	struct ln_request *rq = cv->rq;
	struct ln_buf err = LN_BUF_INIT;
	struct ln_blockdev bd;
	char id[300];
	size_t i, j;

	for (i = 0; i < rq->ntargets; i++) {
		struct ln_req_target *t = &rq->targets[i];

		for (j = 0; j < t->nns; j++) {
			ln_buf_reset(&err);
			if (t->ns[j].file) {
				if (ln_backing_file_usable(cv, &t->ns[j], &err) == 0)
					continue;
				snprintf(id, sizeof(id), "%s/%u", t->nqn, t->ns[j].nsid);
				ln_cv_report(cv, "create", "nvmet_namespace", id, NULL, err.buf);
				t->failed = 1;
				continue;
			}
			snprintf(id, sizeof(id), "%s/%u", t->nqn, t->ns[j].nsid);
			if (ln_blockdev_resolve(cv->a, t->ns[j].device, &bd, &err) == 0 &&
			    ln_blockdev_check_free(cv->a, &bd, t->ns[j].device, rq, &t->ns[j],
						   t->nqn, &err) == 0 &&
			    ln_blockdev_claim(cv->a, &bd, t->ns[j].device, &err) == 0 &&
			    same_device(cv, &bd, &t->ns[j], id, &err) == 0) {
				ln_blockdev_release(&bd);
				continue;
			}
			ln_blockdev_release(&bd);
			ln_cv_report(cv, "create", "nvmet_namespace", id, NULL, err.buf);
			t->failed = 1;
		}
	}
	ln_buf_release(&err);
}

/* The nvmet hosts the targets allow, each once. */
static void apply_hosts(struct ln_converge *cv)
{
	struct ln_request *rq = cv->rq;
	struct json_object *seen = json_object_new_object();
	char p[PATH_MAX];
	size_t i, j;

	for (i = 0; i < rq->ntargets; i++) {
		for (j = 0; !rq->targets[i].failed && j < rq->targets[i].nhosts; j++) {
			const char *h = rq->targets[i].hosts[j];

			if (json_object_object_get_ex(seen, h, NULL))
				continue;
			json_object_object_add(seen, h, NULL);
			snprintf(p, sizeof(p), P_HOST "%s", h);
			if (ln_is_dir(cv->a, p))
				ln_cv_report(cv, "ok", "nvmet_host", h, NULL, NULL);
			else
				create_dir(cv, "nvmet_host", h, p, NULL);
		}
	}
	json_object_put(seen);
}

/* Each subsystem's allowed_hosts links; a failed link fails its target. */
static void apply_allowed_hosts(struct ln_converge *cv)
{
	struct ln_request *rq = cv->rq;
	char p[PATH_MAX], t2[PATH_MAX], id[1024];
	size_t i, j;

	for (i = 0; i < rq->ntargets; i++) {
		struct ln_req_target *t = &rq->targets[i];

		for (j = 0; !t->failed && j < t->nhosts; j++) {
			snprintf(id, sizeof(id), "%s/%s", t->nqn, t->hosts[j]);
			snprintf(p, sizeof(p), P_SUB "%s/allowed_hosts/%s", t->nqn, t->hosts[j]);
			snprintf(t2, sizeof(t2), P_HOST "%s", t->hosts[j]);
			if (ln_is_link(cv->a, p))
				ln_cv_report(cv, "ok", "nvmet_allowed_host", id, NULL, NULL);
			else if (create_link(cv, "nvmet_allowed_host", id, t2, p, NULL) < 0)
				t->failed = 1;
		}
	}
}

/* The index of the port serving t's transport, address and service, or np. */
/*
 * A target with tls needs the .nvme keyring (a kernel with NVMe/TCP TLS)
 * and tlshd on this node: without them the port would refuse every host
 * or, worse, be set up without TLS. Such a target fails here, before any
 * of its objects is made, and nothing of it is exported. A plan on a node
 * where nvmet_tcp is not loaded yet cannot see the keyring: it checks
 * tlshd only.
 */
static void check_tls(struct ln_converge *cv)
{
	struct ln_buf err = LN_BUF_INIT;
	size_t i;
	int rc = 1;

	for (i = 0; i < cv->rq->ntargets; i++) {
		struct ln_req_target *t = &cv->rq->targets[i];

		if (!t->tls || t->failed)
			continue;
		if (rc > 0)
			rc = ln_tls_ready(cv->a, !cv->plan || ln_module_loaded(cv->a, "nvmet_tcp"),
					  &err);
		if (rc < 0) {
			t->failed = 1;
			ln_cv_report(cv, "create", "nvmet_subsystem", t->nqn, "tls", err.buf);
		}
	}
	ln_buf_release(&err);
}

static size_t find_port(const struct port_want *ports, size_t np, const struct ln_req_target *t)
{
	size_t k;

	for (k = 0; k < np; k++)
		if (!strcmp(ports[k].transport, t->transport) &&
		    !strcmp(ports[k].address, t->address) && !strcmp(ports[k].service, t->service))
			break;
	return k;
}

void ln_nvmet_apply(struct ln_converge *cv)
{
	struct ln_request *rq = cv->rq;
	struct port_want *ports = NULL;
	size_t np = 0, i, j, k;
	char p[PATH_MAX], t2[PATH_MAX], id[1024];

	if (!rq->ntargets)
		return;
	/* first, so that a node whose every target is refused is left as it
	 * was: no module loaded, no configfs mounted for nothing */
	check_devices(cv);
	for (i = 0; i < rq->ntargets && rq->targets[i].failed; i++)
		;
	if (i == rq->ntargets)
		return;
	if (ln_cv_module(cv, "configfs") < 0 || ln_cv_configfs(cv) < 0)
		return;
	ln_cv_module(cv, "nvmet");
	for (i = 0; i < rq->ntargets; i++) {
		const char *m = !strcmp(rq->targets[i].transport, "tcp") ? "nvmet_tcp" : "nvmet_rdma";

		ln_cv_module(cv, m);
	}
	if (!cv->plan && !ln_is_dir(cv->a, LN_NVMET)) {
		ln_cv_report(cv, "create", "nvmet_subsystem", "*", NULL,
			     "nvmet configfs is missing after loading nvmet");
		return;
	}
	check_tls(cv);
	apply_hosts(cv);
	for (i = 0; i < rq->ntargets; i++)
		apply_dhchap(cv, &rq->targets[i]);
	for (i = 0; i < rq->ntargets; i++)
		if (!rq->targets[i].failed)
			apply_subsystem(cv, &rq->targets[i]);
	apply_allowed_hosts(cv);
	/* backing files and namespaces */
	warn_free_space(cv);
	for (i = 0; i < rq->ntargets; i++)
		for (j = 0; !rq->targets[i].failed && j < rq->targets[i].nns; j++)
			apply_namespace(cv, &rq->targets[i], &rq->targets[i].ns[j]);
	/* TLS PSKs before the port: a host must find its key at its first connect */
	for (i = 0; i < rq->ntargets; i++)
		for (j = 0; rq->targets[i].tls && !rq->targets[i].failed && j < rq->targets[i].nhosts;
		     j++)
			if (ln_tls_psk_apply(cv, rq->targets[i].hosts[j], rq->targets[i].nqn,
					     rq->targets[i].keys[j].psk) < 0)
				rq->targets[i].failed = 1;
	/* ports */
	ports = calloc(rq->ntargets + 1, sizeof(*ports));
	if (!ports)
		return;
	for (i = 0; i < rq->ntargets; i++) {
		struct ln_req_target *t = &rq->targets[i];

		k = find_port(ports, np, t);
		if (k == np) {
			ports[np].transport = t->transport;
			ports[np].address = t->address;
			ports[np].family = t->family;
			ports[np].service = t->service;
			ports[np].tls = t->tls;
			np++;
		}
		if (!t->failed)
			ports[k].used = 1;
	}
	for (k = 0; k < np; k++)
		if (ports[k].used)
			apply_port(cv, &ports[k], ports, np);
	/* port links, last: this is what exports a subsystem */
	for (i = 0; i < rq->ntargets; i++) {
		struct ln_req_target *t = &rq->targets[i];
		char tup[128];

		if (t->failed)
			continue;
		k = find_port(ports, np, t);
		if (k == np || !ports[k].id[0])
			continue;
		tuple(tup, sizeof(tup), t->transport, t->address, t->service);
		snprintf(id, sizeof(id), "%s/%s", tup, t->nqn);
		snprintf(p, sizeof(p), P_PORT "%s/subsystems/%s", ports[k].id, t->nqn);
		snprintf(t2, sizeof(t2), P_SUB "%s", t->nqn);
		if (ln_is_link(cv->a, p))
			ln_cv_report(cv, "ok", "nvmet_port_subsystem", id, NULL, NULL);
		else
			create_link(cv, "nvmet_port_subsystem", id, t2, p, ports[k].id);
	}
	free(ports);
}

