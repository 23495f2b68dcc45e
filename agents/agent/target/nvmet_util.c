// SPDX-License-Identifier: MIT
/*
 * What the nvmet parts share: the port tuple, reading an attribute for
 * a compare, a link search, owned creates, and the fields of an
 * ownership record (identities, devices).
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

void ln_nvmet_tuple(char *out, size_t size, const char *t, const char *a, const char *s)
{
	snprintf(out, size, "%s/%s/%s", t, a, s);
}

int ln_nvmet_read_eq(struct ln_agent *a, const char *path, const char *want)
{
	/* the attribute may be a host entry's dhchap_key: wiped on release */
	struct ln_buf b = LN_BUF_INIT_SECRET;
	int eq = ln_read_attr(a, path, &b) == 0 && !strcmp(b.buf, want);

	ln_buf_release(&b);
	return eq;
}

/* 1 when some subsystem's allowed_hosts (or port's subsystems) links name. */
int ln_nvmet_still_linked(struct ln_agent *a, const char *parent, const char *sub,
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

/* mkdir an owned configfs object; reports create (or the error). */
int ln_nvmet_create_dir(struct ln_converge *cv, const char *kind, const char *id, const char *path,
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

int ln_nvmet_create_link(struct ln_converge *cv, const char *kind, const char *id, const char *target,
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

/* Record key: value on this cluster's record of (kind, id) when it differs. */
int ln_nvmet_record_field(struct ln_converge *cv, const char *kind, const char *id, const char *key,
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
int ln_nvmet_ident_settable(struct ln_converge *cv, const char *kind, const char *id,
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
