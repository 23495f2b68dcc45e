// SPDX-License-Identifier: MIT
/*
 * nvmet namespaces: the devices and backing files checked before any
 * object of a target is made, the free-space warning, and each
 * namespace created or brought to its device, buffered_io and identity.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/statvfs.h>

#include "agents/agent/target/blockdev.h"
#include "agents/agent/target/diskid.h"
#include "agents/agent/kernel/paths.h"
#include "agents/agent/target/nvmet.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/kernel/fs.h"
#include "common/json.h"
#include "common/log.h"

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

void ln_nvmet_warn_free_space(struct ln_converge *cv)
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
 * identity is asked, or it may not be changed (ln_nvmet_ident_settable); else the
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
	ok = !strcmp(cur.buf, want) || !ln_nvmet_ident_settable(cv, "nvmet_namespace", id, key, in_use);
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
			rc = ln_nvmet_record_field(cv, "nvmet_namespace", id, "uuid", ns->uuid, err);
	}
	if (rc == 0 && nguid && ns->nguid) {
		snprintf(p, sizeof(p), "%s/device_nguid", dir);
		rc = ln_fs_write_attr(cv->a, p, ns->nguid, err);
		if (rc == 0)
			rc = ln_nvmet_record_field(cv, "nvmet_namespace", id, "nguid", ns->nguid, err);
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
	if (ns->device && ns->device_was[0])
		ln_buf_addf(&det, ", %s replacing %s (--accept-device)", ns->device_id,
			    ns->device_was);
	if (rc == 0 && !cv->plan && ns->device)
		rc = ln_nvmet_record_field(cv, "nvmet_namespace", id, "device_id", ns->device_id, &err);
	ln_cv_report(cv, "create", "nvmet_namespace", id, det.buf, rc < 0 ? err.buf : NULL);
	ln_buf_release_all(&err, &det);
}

void ln_nvmet_apply_namespace(struct ln_converge *cv, struct ln_req_target *t, const struct ln_req_ns *ns)
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
		rc = ln_nvmet_record_field(cv, "nvmet_namespace", id, "device_id", ns->device_id, &err);
	snprintf(p, sizeof(p), "%s/device_path", dir);
	ln_read_attr(cv->a, p, &cur);
	/* a disk accepted as replaced is pointed at again (disable, write,
	 * enable), though its path reads the same: nvmet holds the old one */
	path_ok = !strcmp(cur.buf, want_path) && !(ns->device && ns->device_was[0]);
	if (ns->device && ns->device_was[0])
		ln_buf_addf(&det, "device '%s' -> '%s' (--accept-device)", ns->device_was,
			    ns->device_id);
	else if (!path_ok)
		ln_buf_addf(&det, "device_path '%s' -> '%s'", cur.buf, want_path);
	snprintf(p, sizeof(p), "%s/buffered_io", dir);
	bio_ok = ln_nvmet_read_eq(cv->a, p, want_bio);
	if (!bio_ok)
		ln_buf_addf(&det, "%sbuffered_io -> %s", det.len ? ", " : "", want_bio);
	snprintf(p, sizeof(p), "%s/enable", dir);
	enabled = ln_nvmet_read_eq(cv->a, p, "1");
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

/*
 * A device namespace's stable identity (ns->device_id, with its transport:
 * diskid.h) must be the one recorded when it was first exported: a path
 * such as /dev/sdb may name another disk after a reboot, and exporting it
 * would hand the hosts someone else's data. A device without any identity
 * is refused too: it could not be told from another one later. A pin of
 * an llmnet before transports is the same disk when its id is; it is
 * pinned again with the transport when the namespace is recorded. Another
 * disk is refused, with its old and new identity in det, unless the
 * request accepts it (apply --accept-device): then ns->device_was keeps
 * the old pin for the change line, and the run log gets a warning.
 */
static int same_device(struct ln_converge *cv, const struct ln_blockdev *bd, struct ln_req_ns *ns,
		       const char *id, struct ln_buf *det, struct ln_buf *err)
{
	struct json_object *rec = ln_state_find(&cv->st, cv->cluster, "nvmet_namespace", id);
	const char *was = rec ? ln_json_str_at(rec, "device_id") : NULL;
	const char *ref = ns->device_ref ? ns->device_ref : "NODE:PATH";
	int r;

	ns->device_was[0] = '\0';
	r = ln_blockdev_stable_id(cv->a, bd, ns->device, ns->device_id, sizeof(ns->device_id), err);
	if (r == -ENOENT) {
		ln_buf_addf(err, "device '%s' (%s) has no stable identity (no WWID, serial or "
			    "/dev/disk/by-id name), so llmnet could not tell it from another device "
			    "after a reboot; refusing to export it", ns->device, bd->path);
		return -ENODEV;
	}
	if (r < 0)
		return r;
	if (!was || ln_diskid_compare(was, ns->device_id) != LN_DISKID_OTHER)
		return 0;
	if (ns->accept_device) {
		snprintf(ns->device_was, sizeof(ns->device_was), "%s", was);
		if (!cv->plan)
			ln_changes_warn(&cv->ch, "'%s': device '%s' (%s) accepted as a replaced disk "
					"(--accept-device %s): pinned %s, was %s", id, ns->device,
					bd->path, ref, ns->device_id, was);
		return 0;
	}
	ln_buf_addf(det, "device identity '%s' -> '%s'", was, ns->device_id);
	ln_buf_addf(err, "device '%s' (%s) is not the device first exported as '%s': that was "
		    "%s, this is %s; refusing to export it (if that disk was really replaced, "
		    "`llmnet apply --accept-device %s` pins and exports this one)", ns->device,
		    bd->path, id, was, ns->device_id, ref);
	return -ENODEV;
}

/* A target with a namespace device in use (or not the one first exported)
 * is not exported at all: it is refused before any of its objects (host,
 * subsystem, port) is created. */
void ln_nvmet_check_devices(struct ln_converge *cv)
{
	struct ln_request *rq = cv->rq;
	struct ln_buf err = LN_BUF_INIT, det = LN_BUF_INIT;
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
			ln_buf_reset(&det);
			if (ln_blockdev_resolve(cv->a, t->ns[j].device, &bd, &err) == 0 &&
			    ln_blockdev_check_free(cv->a, &bd, t->ns[j].device, rq, &t->ns[j],
						   t->nqn, &err) == 0 &&
			    ln_blockdev_claim(cv->a, &bd, t->ns[j].device, &err) == 0 &&
			    same_device(cv, &bd, &t->ns[j], id, &det, &err) == 0) {
				ln_blockdev_release(&bd);
				continue;
			}
			ln_blockdev_release(&bd);
			/* another disk at a pinned path: a change, refused */
			ln_cv_report(cv, det.len ? "change" : "create", "nvmet_namespace", id,
				     det.len ? det.buf : NULL, err.buf);
			t->failed = 1;
		}
	}
	ln_buf_release_all(&err, &det);
}
