// SPDX-License-Identifier: MIT
/*
 * Boot-time restore (request `persist`). On a node where systemd runs
 * (/run/systemd/system), an apply that persists keeps four things, each
 * recorded in the state before it is made and rewritten only when owned:
 *
 *  - /var/lib/llmnet/restore/<cluster>.json (0600, written atomically):
 *    the request as applied, parsed form and all, without its secrets
 *    (those stay in the node key store, keystore.c);
 *  - /var/lib/llmnet/restore/<cluster>.agent (0700): a copy of the pushed
 *    agent that applied it, so the unit runs an agent of its own cluster:
 *    another cluster's `teardown --purge`, or its controller pushing
 *    another agent version, never takes the boot unit's program away;
 *  - /etc/systemd/system/llmnet-restore-<cluster>.service, one unit per
 *    cluster, so a teardown of one cluster never touches another's; it
 *    runs that copy's `restore --cluster NAME` after network-online.target
 *    as Type=notify: the agent says READY once restored or after its 30 s
 *    boot bound, whichever is first, so boot waits at most that long, and
 *    then retries in the background itself (restore.c);
 *  - its enablement, the link in multi-user.target.wants/ that
 *    `systemctl enable` would make (a missing link is a disabled unit).
 *
 * A request without persist (or a node without systemd, which gets a
 * warning) removes the owned ones; teardown removes them first, and stops
 * when it cannot. `restore` reads the stored request back, puts the
 * secrets from the key store into it and runs the same converge as apply
 * (reconcile.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/agent/converge/parts.h"
#include "agents/agent/kernel/paths.h"
#include "agents/agent/kernel/read.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"
#include "common/secret_fields.h"

#define SYSTEMD_RUN "/run/systemd/system"
#define UNIT_DIR "/etc/systemd/system"
#define WANTS_DIR UNIT_DIR "/multi-user.target.wants"
#define RESTORE_DIR "/var/lib/llmnet/restore"

struct persist_paths {
	char request[PATH_MAX], agent[PATH_MAX], unit[PATH_MAX], link[PATH_MAX];
};

#define PATHS_INIT { "", "", "", "" }

static void paths_of(const char *cluster, struct persist_paths *p)
{
	snprintf(p->request, sizeof(p->request), RESTORE_DIR "/%s.json", cluster);
	snprintf(p->agent, sizeof(p->agent), RESTORE_DIR "/%s.agent", cluster);
	snprintf(p->unit, sizeof(p->unit), UNIT_DIR "/llmnet-restore-%s.service", cluster);
	snprintf(p->link, sizeof(p->link), WANTS_DIR "/llmnet-restore-%s.service", cluster);
}

int ln_persist_supported(const struct ln_agent *a)
{
	return ln_is_dir(a, SYSTEMD_RUN);
}

static void render_unit(const char *cluster, const char *agent, struct ln_buf *out)
{
	ln_buf_addf(out,
		    "# Written by llmnet for cluster %s: `llmnet teardown` removes it, and\n"
		    "# `persist: false` in the spec. Do not edit: llmnet rewrites it.\n"
		    "[Unit]\n"
		    "Description=llmnet: restore cluster %s after a boot\n"
		    "Wants=network-online.target\n"
		    "After=network-online.target tlshd.service\n"
		    "\n"
		    "[Service]\n"
		    "# READY once restored, or after the %d s bound with the retries going\n"
		    "# on in the background: boot never waits longer for a missing target\n"
		    "Type=notify\n"
		    "NotifyAccess=main\n"
		    "RemainAfterExit=yes\n"
		    "ExecStart=%s --budget-ms %d restore --cluster %s\n"
		    "TimeoutStartSec=%d\n"
		    "TimeoutStopSec=%d\n"
		    "\n"
		    "[Install]\n"
		    "WantedBy=multi-user.target\n",
		    cluster, cluster, LN_RESTORE_BOOT_MS / 1000, agent, LN_RESTORE_BOOT_MS, cluster,
		    LN_RESTORE_BOOT_MS / 1000 + 15, LN_RESTORE_TRY_MS / 1000 + 5);
}

static void strip_field(struct json_object *holder, const char *key)
{
	json_object_object_del(holder, key);
}

/* `apply --accept-device` is the operator's word for that apply: what it
 * decided (the disk now at the path is the namespace's) is the pin the
 * apply recorded in the state, which the boot-time restore checks the
 * disk against. The word itself is not stored, so the stored request can
 * never accept another disk at boot (restore.c clears it too, for a
 * request an older agent stored). */
static void strip_accept_device(struct json_object *rq)
{
	struct json_object *ts = NULL, *nss;
	size_t i, j;

	if (!json_object_object_get_ex(rq, "targets", &ts) ||
	    !json_object_is_type(ts, json_type_array))
		return;
	for (i = 0; i < json_object_array_length(ts); i++) {
		nss = NULL;
		if (!json_object_object_get_ex(json_object_array_get_idx(ts, i), "namespaces", &nss) ||
		    !json_object_is_type(nss, json_type_array))
			continue;
		for (j = 0; j < json_object_array_length(nss); j++) {
			struct json_object *ns = json_object_array_get_idx(nss, j);

			if (json_object_is_type(ns, json_type_object))
				json_object_object_del(ns, "accept_device");
		}
	}
}

static int render_request(const struct ln_request *rq, struct ln_buf *out)
{
	struct json_object *copy = NULL;
	int r = json_object_deep_copy(rq->json, &copy, NULL);

	if (r < 0)
		return -ENOMEM;
	/* the request as stored: no secret (no field of common/secret_fields.h) */
	ln_secret_fields_each(copy, strip_field);
	strip_accept_device(copy);
	r = ln_json_write(copy, 1, out);
	json_object_put(copy);
	return r;
}

/* Split a node path into its directory's fd (no link on the way) and its
 * last name; the fd or negative with err. */
static int open_parent(struct ln_agent *a, const char *path, const char **base,
		       struct ln_buf *err)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	*base = slash + 1;
	return ln_path_open_dir(a, dir, err);
}

/* What the link at path says: 0 with out, -ENOENT when missing, -EINVAL
 * when something that is not a link is there. */
static int read_link(struct ln_agent *a, const char *path, char *out, size_t n)
{
	struct ln_buf err = LN_BUF_INIT;
	const char *base;
	struct stat st;
	ssize_t len;
	int fd = open_parent(a, path, &base, &err), r = 0;

	ln_buf_release(&err);
	if (fd < 0)
		return fd == -ENOENT ? -ENOENT : -EIO;
	if (fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	else if (!S_ISLNK(st.st_mode))
		r = -EINVAL;
	else if ((len = readlinkat(fd, base, out, n - 1)) < 0)
		r = -errno;
	else
		out[len] = '\0';
	close(fd);
	return r;
}

static int make_link(struct ln_converge *cv, const char *path, const void *arg,
		     struct ln_buf *err)
{
	const char *base;
	int fd, r = ln_agent_change(cv->a, "enable the restore unit");

	if (r < 0)
		return r;
	fd = open_parent(cv->a, path, &base, err);
	if (fd < 0)
		return fd;
	if (unlinkat(fd, base, 0) < 0 && errno != ENOENT)
		r = -errno;
	if (r == 0 && symlinkat(arg, fd, base) < 0)
		r = -errno;
	if (r < 0)
		ln_buf_addf(err, "cannot link '%s': %s", path, strerror(-r));
	close(fd);
	return r;
}

static int remove_link(struct ln_converge *cv, const char *path, struct ln_buf *err)
{
	const char *base;
	int fd, r = ln_agent_change(cv->a, "disable the restore unit");

	if (r < 0)
		return r;
	fd = open_parent(cv->a, path, &base, err);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (unlinkat(fd, base, 0) < 0 && errno != ENOENT) {
		r = -errno;
		ln_buf_addf(err, "cannot remove '%s': %s", path, strerror(errno));
	}
	close(fd);
	return r;
}

static void want_link(struct ln_converge *cv, const struct persist_paths *p)
{
	struct ln_buf err = LN_BUF_INIT;
	char cur[PATH_MAX];
	int rc = read_link(cv->a, p->link, cur, sizeof(cur)), exists = rc != -ENOENT;

	/* the link `systemctl enable` makes for the owned unit is this one */
	if (rc == 0 && !strcmp(cur, p->unit)) {
		if (!cv->plan && !ln_cv_owned(cv, "systemd_enable", p->link))
			rc = ln_cv_own(cv, "systemd_enable", p->link);
		/* a record that could not be saved is a change that failed */
		ln_cv_report(cv, rc < 0 ? "change" : "ok", "systemd_enable", p->link, NULL,
			     rc < 0 ? err.buf : NULL);
		goto out;
	}
	rc = exists ? ln_cv_existing(cv, "systemd_enable", p->link, &err) : 0;
	if (rc == 0 && !cv->plan)
		rc = ln_cv_create(cv, "systemd_enable", p->link, make_link, p->unit, &err);
	ln_cv_report(cv, exists ? "change" : "create", "systemd_enable", p->link,
		     exists ? NULL : "the unit is not enabled", rc < 0 ? err.buf : NULL);
out:
	ln_buf_release(&err);
}

/* Remove what this cluster owns of kind at path (a missing one is
 * forgotten); 0 or negative when it is still there. */
static int drop(struct ln_converge *cv, const char *kind, const char *path)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc = 0;

	if (!ln_cv_owned(cv, kind, path))
		goto out;
	if (!cv->plan)
		rc = strcmp(kind, "systemd_enable") ? ln_path_remove(cv->a, path, &err)
						    : remove_link(cv, path, &err);
	if (rc == 0 && !cv->plan)
		ln_cv_disown(cv, kind, path);
	ln_cv_report(cv, "remove", kind, path, NULL, rc < 0 ? err.buf : NULL);
out:
	ln_buf_release(&err);
	return rc;
}

int ln_persist_remove(struct ln_converge *cv)
{
	struct persist_paths p = PATHS_INIT;
	int rc;

	if (!cv->cluster[0])
		return 0;
	paths_of(cv->cluster, &p);
	/* the link first: a unit half removed is never left enabled; the first
	 * that cannot go stops the rest, so what is left still fits together */
	rc = drop(cv, "systemd_enable", p.link);
	if (rc == 0)
		rc = drop(cv, "systemd_unit", p.unit);
	if (rc == 0)
		rc = drop(cv, "restore_agent", p.agent);
	if (rc == 0)
		rc = drop(cv, "restore_request", p.request);
	return rc;
}

/* The pushed agent, copied for the unit (the agent of this cluster's last
 * apply); 0 when the copy is (or, in a plan, would be) as wanted. */
static int want_agent(struct ln_converge *cv, const struct persist_paths *p)
{
	struct ln_buf bin = LN_BUF_INIT, err = LN_BUF_INIT;
	int rc = ln_path_read(cv->a, LN_RESTORE_SOURCE, &bin, &err);

	if (rc < 0) {
		if (rc == -ENOENT)
			ln_buf_addf(&err, "the pushed agent '%s' is missing", LN_RESTORE_SOURCE);
		ln_buf_addf(&err, ": nothing to copy for the boot unit");
		ln_cv_report(cv, ln_path_exists(cv->a, p->agent) ? "change" : "create",
			     "restore_agent", p->agent, NULL, err.buf);
	} else {
		rc = ln_cv_file(cv, "restore_agent", p->agent, &bin, 0700, 1,
				"a copy of the pushed agent");
	}
	ln_buf_release(&bin);
	ln_buf_release(&err);
	return rc;
}

void ln_persist_apply(struct ln_converge *cv)
{
	struct ln_buf unit = LN_BUF_INIT, req = LN_BUF_INIT;
	struct persist_paths p = PATHS_INIT;
	const struct ln_request *rq = cv->rq;

	if (!rq->persist || (!rq->ntargets && !rq->ninits)) {
		ln_persist_remove(cv);
		return;
	}
	if (!ln_persist_supported(cv->a)) {
		ln_changes_warn(&cv->ch, "persist: this node does not run systemd (no %s): "
				"nothing restores cluster '%s' after a reboot (persistent: "
				"unsupported)", SYSTEMD_RUN, cv->cluster);
		ln_persist_remove(cv);
		return;
	}
	paths_of(cv->cluster, &p);
	if (render_request(rq, &req) < 0) {
		ln_cv_report(cv, "change", "restore_request", p.request, NULL, "out of memory");
		goto out;
	}
	render_unit(cv->cluster, p.agent, &unit);
	/* the stored request and the program first: the unit never starts
	 * without them */
	if (ln_cv_file(cv, "restore_request", p.request, &req, 0600, 1, NULL) == 0 &&
	    want_agent(cv, &p) == 0 &&
	    ln_cv_file(cv, "systemd_unit", p.unit, &unit, 0644, 1, NULL) == 0)
		want_link(cv, &p);
out:
	ln_buf_release(&unit);
	ln_buf_release(&req);
}

const char *ln_persist_status(struct ln_agent *a, struct ln_state *st, const char *cluster)
{
	struct persist_paths p = PATHS_INIT;
	char cur[PATH_MAX];

	paths_of(cluster, &p);
	if (!ln_state_find(st, cluster, "systemd_unit", p.unit))
		return ln_persist_supported(a) ? "no" : "unsupported";
	if (!ln_path_exists(a, p.unit) || !ln_path_exists(a, p.request) ||
	    !ln_path_exists(a, p.agent))
		return "broken";
	if (read_link(a, p.link, cur, sizeof(cur)) < 0 || strcmp(cur, p.unit))
		return "disabled";
	return "yes";
}

/* Put secret (the key store file's text) under key of o; 0 or negative. */
static int put_secret(struct ln_agent *a, const char *cluster, struct json_object *o,
		      const char *key, const char *file, int required, struct ln_buf *err)
{
	struct ln_buf s = LN_BUF_INIT_SECRET;
	char path[PATH_MAX];
	int r;

	snprintf(path, sizeof(path), LN_KEYS_DIR "/%s/%s", cluster, file);
	r = ln_path_read(a, path, &s, err);
	if (r == -ENOENT && !required)
		return 0;
	if (r == 0) {
		ln_buf_rtrim(&s);
		json_object_object_add(o, key, json_object_new_string(s.buf));
	} else if (r == -ENOENT) {
		ln_buf_addf(err, "the node key store has no '%s'", path);
	}
	ln_buf_release(&s);	/* wiped */
	return r;
}

struct refill {
	struct ln_agent *a;
	const char *cluster;
	struct ln_buf *err;
};

/* One holder's secrets back under its fields, from the key store files
 * keystore.c names: <store>-<name>.key (required), .ctrl.key and .psk
 * (host-<host NQN> for a target's host, target-<NQN> for a connect). */
static int refill_holder(struct json_object *o, const struct ln_secret_holder *h, size_t item,
			 const char *name, void *arg)
{
	const struct refill *rf = arg;
	char f[NAME_MAX + 1];
	int k, r = 0;

	(void)item;
	for (k = 0; r == 0 && k < LN_SECRET_SLOTS; k++) {
		snprintf(f, sizeof(f), "%s-%s.%s", h->store, name ? name : "", ln_secret_ext[k]);
		r = put_secret(rf->a, rf->cluster, o, h->field[k], f, k == LN_SECRET_KEY, rf->err);
	}
	return r;
}

int ln_persist_load(struct ln_agent *a, const char *cluster, struct ln_buf *out,
		    struct ln_buf *err)
{
	struct ln_buf text = LN_BUF_INIT;
	struct json_object *rq = NULL;
	struct persist_paths p = PATHS_INIT;
	struct ln_state st;
	int r;

	paths_of(cluster, &p);
	r = ln_state_load(a, &st, err);
	if (r < 0)
		return r;
	if (!ln_state_find(&st, cluster, "restore_request", p.request)) {
		r = -ENOENT;
		goto out;
	}
	r = ln_path_read(a, p.request, &text, err);
	if (r == -ENOENT)
		ln_buf_addf(err, "the stored request '%s' is missing", p.request);
	if (r == 0)
		r = ln_json_parse(text.buf, text.len, &rq, err);
	if (r == 0 && !json_object_is_type(rq, json_type_object)) {
		ln_buf_addf(err, "'%s' is not a request", p.request);
		r = -LN_EREQUEST;
	}
	if (r == 0) {
		struct refill rf = { a, cluster, err };

		r = ln_secret_fields_walk(rq, refill_holder, &rf);
	}
	if (r == 0)
		r = ln_json_write(rq, 0, out);
	if (r == -ENOENT)
		r = -EIO;	/* owned but unreadable: not "nothing to restore" */
out:
	json_object_put(rq);
	ln_buf_release(&text);
	ln_state_release(&st);
	return r;
}
