/* SPDX-License-Identifier: MIT */
/*
 * An initiator's mount (mount.h): the mount point checked (no link on the
 * way, missing or empty), the device probed for signatures, formatted only
 * when blank and asked, mounted, and recorded with the device it holds so
 * that teardown unmounts only its own mount.
 */
#include <blkid/blkid.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "agents/agent/converge/converge.h"
#include "agents/agent/initiator/mount.h"
#include "agents/agent/kernel/fsops.h"
#include "agents/agent/kernel/paths.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/target/blockdev.h"
#include "agents/agent/target/inuse.h"
#include "common/json.h"

static int wanted_mount(struct ln_converge *cv, const char *path)
{
	size_t i;

	for (i = 0; cv->rq && i < cv->rq->ninits; i++)
		if (cv->rq->inits[i].mount_path && !strcmp(cv->rq->inits[i].mount_path, path))
			return 1;
	return 0;
}

/* Teardown unmounts path only while the device llmnet mounted there (rec's
 * "device", its major:minor) is what is mounted: never a mount made over
 * it or in its place by someone else. 0, or -EBUSY with err. */
static int mount_is_ours(struct ln_converge *cv, struct json_object *rec, const char *path,
			 struct ln_buf *err)
{
	const char *want = ln_json_str_at(rec, "device");
	struct ln_blockdev here;
	char id[PATH_MAX] = "";

	if (ln_blockdev_mounted_at(cv->a, path, &here) == 1)
		ln_blockdev_id(&here, id, sizeof(id));
	else
		snprintf(here.path, sizeof(here.path), "an unknown device");
	if (want && !strcmp(id, want))
		return 0;
	ln_buf_addf(err, "'%s' has %s mounted, not the device llmnet mounted there (%s); llmnet "
		    "unmounts only its own mounts: leaving it", path, here.path,
		    want ? want : "not recorded");
	return -EBUSY;
}

void ln_mount_remove(struct ln_converge *cv)
{
	struct json_object *l = ln_cv_owned_of(cv, "mount");
	struct ln_buf err = LN_BUF_INIT;
	size_t i, n = json_object_array_length(l);

	for (i = 0; i < n; i++) {
		struct json_object *rec = json_object_array_get_idx(l, i);
		const char *path = ln_json_str_at(rec, "id");
		int rc = 0;

		if (wanted_mount(cv, path))
			continue;
		ln_buf_reset(&err);
		if (!ln_path_mounted(cv->a, path, NULL, 0)) {
			if (!cv->plan)
				ln_cv_disown(cv, "mount", path);
			continue;
		}
		rc = mount_is_ours(cv, rec, path, &err);
		if (rc == 0 && !cv->plan)
			rc = ln_agent_change(cv->a, "umount") ?: cv->a->fs->umount(cv->a, path, &err);
		if (rc == 0 && !cv->plan)
			ln_cv_disown(cv, "mount", path);
		ln_cv_report(cv, "remove", "mount", path, NULL, rc < 0 ? err.buf : NULL);
	}
	json_object_put(l);
	ln_buf_release(&err);
}

/* 1: no filesystem or partition signature; 0: one found; negative: error. */
static int blank_device(struct ln_converge *cv, const char *dev, char *type, size_t tlen)
{
	char p[PATH_MAX];
	blkid_probe pr;
	int rc;

	type[0] = '\0';
	if (ln_agent_path(cv->a, dev, p) < 0)
		return -ENAMETOOLONG;
	pr = blkid_new_probe_from_filename(p);
	if (!pr)
		return errno ? -errno : -EIO;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
	blkid_probe_enable_partitions(pr, 1);
	rc = blkid_do_safeprobe(pr);
	if (rc == 0) {
		const char *v = NULL;

		if (blkid_probe_lookup_value(pr, "TYPE", &v, NULL) == 0 && v)
			snprintf(type, tlen, "%s", v);
		else if (blkid_probe_lookup_value(pr, "PTTYPE", &v, NULL) == 0 && v)
			snprintf(type, tlen, "partition table %s", v);
	}
	blkid_free_probe(pr);
	if (rc == 1)
		return 1;
	if (rc == 0)
		return 0;
	return rc == -2 ? 0 : -EIO;	/* -2: ambivalent signatures: not blank */
}

/* A mount hides what is below it: llmnet mounts only on a missing or an
 * empty directory, so nothing of the node's disappears under a namespace. */
static int mount_point_free(struct ln_converge *cv, const char *path, struct ln_buf *err)
{
	char **names = NULL;
	size_t n = 0;
	struct stat st;
	int r = ln_path_lstat(cv->a, path, &st, err);	/* refuses a link on the way */

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	r = ln_list_dir(cv->a, path, &names, &n);
	ln_names_free(names, n);
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		ln_buf_addf(err, "cannot use mount point '%s': %s", path, strerror(-r));
		return r;
	}
	if (n) {
		ln_buf_addf(err, "mount point '%s' is not empty (%zu entr%s): llmnet mounts only "
			    "on a missing or empty directory, so that nothing is hidden", path, n,
			    n == 1 ? "y" : "ies");
		return -ENOTEMPTY;
	}
	return 0;
}

/* An existing mount at the mount point counts only when its source is the
 * declared namespace's device (dev, NULL while not connected); else it is
 * refused, naming what is mounted there. 0 or -EBUSY with err. */
static int mount_is_namespace(struct ln_converge *cv, const struct ln_req_init *in,
			      const char *dev, struct ln_buf *err)
{
	struct ln_buf scratch = LN_BUF_INIT;
	struct ln_blockdev here, want;
	int same = 0;

	if (ln_blockdev_mounted_at(cv->a, in->mount_path, &here) != 1)
		snprintf(here.path, sizeof(here.path), "an unknown device");
	else if (dev && ln_blockdev_resolve(cv->a, dev, &want, &scratch) == 0)
		same = ln_blockdev_same(&here, &want);
	ln_buf_release(&scratch);
	if (same)
		return 0;
	ln_buf_addf(err, "'%s' already has %s mounted, not the namespace of '%s'%s%s%s; llmnet "
		    "uses only a mount of the declared namespace", in->mount_path, here.path,
		    in->target, dev ? " (" : "", dev ? dev : "", dev ? ")" : "");
	return -EBUSY;
}

/* Record the device mounted at the mount point with its ownership record:
 * teardown checks it (mount_is_ours). */
static int own_mount(struct ln_converge *cv, const struct ln_req_init *in, const char *dev,
		     struct ln_buf *err)
{
	struct ln_blockdev bd;
	struct json_object *rec;
	char id[PATH_MAX];
	int rc = ln_blockdev_resolve(cv->a, dev, &bd, err);

	if (rc == 0)
		rc = ln_cv_own(cv, "mount", in->mount_path);
	if (rc < 0)
		return rc;
	ln_blockdev_id(&bd, id, sizeof(id));
	rec = ln_state_find(&cv->st, cv->cluster, "mount", in->mount_path);
	json_object_object_del(rec, "device");
	ln_json_add_str(rec, "device", id);
	cv->st.dirty = 1;
	return ln_state_save(cv->a, &cv->st, err);
}

/* The per-mount flags llmnet decides on a fabric mount; a read-only flag
 * is the node's (the spec has no read-only mount): kept as it is. */
#define MANAGED_FLAGS (MS_NOSUID | MS_NODEV | MS_NOEXEC)

/* MS_* flags named in a comma list of mount options. */
static unsigned long opts_flags(const char *opts)
{
	static const struct {
		const char *word;
		unsigned long flag;
	} words[] = { { "ro", MS_RDONLY }, { "nosuid", MS_NOSUID }, { "nodev", MS_NODEV },
		      { "noexec", MS_NOEXEC } };
	char buf[1024], *t, *save = NULL;
	unsigned long f = 0;
	size_t i;

	snprintf(buf, sizeof(buf), "%s", opts);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (!strcmp(t, words[i].word))
				f |= words[i].flag;
	return f;
}

/* "ro,nosuid,nodev,noexec": the managed flags of f, each said both ways. */
static const char *opts_str(unsigned long f, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s,%s,%s", f & MS_RDONLY ? "ro," : "",
		 f & MS_NOSUID ? "nosuid" : "suid", f & MS_NODEV ? "nodev" : "dev",
		 f & MS_NOEXEC ? "noexec" : "exec");
	return buf;
}

/* The live flags of the topmost mount at mp: mountinfo's per-mount options
 * (field 6) and super options (last field) together, or, where mountinfo
 * does not list it (a fixture root), /proc/mounts' options. 1, or 0 when
 * nothing is mounted there. */
static int live_flags(const struct ln_agent *a, const char *mp, unsigned long *flags)
{
	struct ln_buf b = LN_BUF_INIT;
	char *line, *save = NULL;
	int found = 0;

	if (ln_read_attr(a, "/proc/self/mountinfo", &b) == 0)
		for (line = strtok_r(b.buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			char at[PATH_MAX], mo[1024], so[1024];
			const char *dash = strstr(line, " - ");

			if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s %1023s", at, mo) != 2 ||
			    sscanf(dash, " - %*s %*s %1023s", so) != 1)
				continue;
			ln_inuse_unescape(at);
			if (strcmp(at, mp))
				continue;
			*flags = opts_flags(mo) | opts_flags(so);
			found = 1;	/* go on: a later line is mounted over it */
		}
	ln_buf_reset(&b);
	if (!found && ln_read_attr(a, "/proc/mounts", &b) == 0)
		for (line = strtok_r(b.buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			char at[PATH_MAX], mo[1024];

			if (sscanf(line, "%*s %4095s %*s %1023s", at, mo) != 2)
				continue;
			ln_inuse_unescape(at);
			if (strcmp(at, mp))
				continue;
			*flags = opts_flags(mo);
			found = 1;
		}
	ln_buf_release(&b);
	return found;
}

/* The declared namespace is mounted at the mount point: its managed flags
 * are the request's, or they are a change (a mount made by hand, an older
 * agent's, an admin's remount), applied with a remount in place: never an
 * unmount, so what has files open there keeps them. */
static void mount_options(struct ln_converge *cv, const struct ln_req_init *in)
{
	unsigned long want = LN_FABRIC_MOUNT_FLAGS_FOR(in->mount_exec), live = want;
	struct ln_buf err = LN_BUF_INIT, det = LN_BUF_INIT;
	char was[64], now[64];
	int rc = 0;

	live_flags(cv->a, in->mount_path, &live);
	want |= live & MS_RDONLY;
	if ((live & MANAGED_FLAGS) == (want & MANAGED_FLAGS)) {
		ln_cv_report(cv, "ok", "mount", in->mount_path, opts_str(want, now, sizeof(now)),
			     NULL);
		return;
	}
	ln_buf_addf(&det, "%s -> %s", opts_str(live, was, sizeof(was)),
		    opts_str(want, now, sizeof(now)));
	if (!cv->plan)
		rc = ln_agent_change(cv->a, "remount") ?:
			cv->a->fs->remount(cv->a, in->mount_path, want, &err);
	ln_cv_report(cv, "change", "mount_options", in->mount_path, det.buf,
		     rc < 0 ? err.buf : NULL);
	ln_buf_release(&err);
	ln_buf_release(&det);
}

int ln_mount_precheck(struct ln_converge *cv, const struct ln_req_init *in)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc;

	rc = ln_inuse_place(cv->a, &cv->st, cv->cluster, "mount point", in->mount_path,
			    LN_PLACE_MOUNT, &err);
	/* not connected yet: a mount already there cannot be its namespace */
	if (rc == 0)
		rc = ln_path_mounted(cv->a, in->mount_path, NULL, 0)
			     ? mount_is_namespace(cv, in, NULL, &err)
			     : mount_point_free(cv, in->mount_path, &err);
	if (rc < 0)
		ln_cv_report(cv, "create", "mount", in->mount_path, NULL, err.buf);
	ln_buf_release(&err);
	return rc;
}

void ln_mount_apply(struct ln_converge *cv, const struct ln_req_init *in, const char *dev)
{
	struct ln_buf err = LN_BUF_INIT, det = LN_BUF_INIT;
	char fs[64], type[64], opts[64];
	int rc = 0, blank;

	opts_str(LN_FABRIC_MOUNT_FLAGS_FOR(in->mount_exec), opts, sizeof(opts));

	if (ln_inuse_place(cv->a, &cv->st, cv->cluster, "mount point", in->mount_path,
			   LN_PLACE_MOUNT, &err) < 0) {
		ln_cv_report(cv, "create", "mount", in->mount_path, NULL, err.buf);
		goto out;
	}
	if (ln_path_mounted(cv->a, in->mount_path, fs, sizeof(fs))) {
		if (mount_is_namespace(cv, in, dev, &err) < 0) {
			ln_cv_report(cv, "create", "mount", in->mount_path, NULL, err.buf);
		} else if (strcmp(fs, in->mount_fs)) {
			ln_buf_addf(&err, "'%s' is already mounted with %s, not %s", in->mount_path,
				    fs, in->mount_fs);
			ln_cv_report(cv, "create", "mount", in->mount_path, NULL, err.buf);
		} else {
			mount_options(cv, in);
		}
		goto out;
	}
	if (mount_point_free(cv, in->mount_path, &err) < 0) {
		ln_cv_report(cv, "create", "mount", in->mount_path, NULL, err.buf);
		goto out;
	}
	if (!dev) {
		ln_buf_addf(&det, "after connect; %s", opts);
		ln_cv_report(cv, "create", "mount", in->mount_path, det.buf, NULL);
		goto out;
	}
	blank = blank_device(cv, dev, type, sizeof(type));
	if (blank < 0) {
		ln_buf_addf(&err, "cannot probe '%s' for signatures: %s", dev, strerror(-blank));
		ln_cv_report(cv, "create", "mount", in->mount_path, NULL, err.buf);
		goto out;
	}
	if (blank && !in->format_if_blank) {
		ln_buf_addf(&err, "'%s' has no filesystem and format is 'never'", dev);
		ln_cv_report(cv, "create", "mount", in->mount_path, NULL, err.buf);
		goto out;
	}
	if (!blank && strcmp(type, in->mount_fs)) {
		ln_buf_addf(&err, "'%s' holds %s, not %s; llmnet never formats a device that is "
			    "not blank", dev, type[0] ? type : "an unknown signature", in->mount_fs);
		ln_cv_report(cv, "create", "mount", in->mount_path, NULL, err.buf);
		goto out;
	}
	ln_buf_addf(&det, "%s %s%s, %s", dev, in->mount_fs, blank ? " (formatted: was blank)" : "",
		    opts);
	if (!cv->plan) {
		rc = ln_cv_mkdirs(cv, in->mount_path, 1, &err);
		if (rc == 0 && blank)
			rc = ln_agent_change(cv->a, "mkfs") ?: cv->a->fs->mkfs(cv->a, dev, in->mount_fs, &err);
		if (rc == 0)
			rc = own_mount(cv, in, dev, &err);
		if (rc == 0)
			rc = ln_agent_change(cv->a, "mount") ?:
				cv->a->fs->mount(cv->a, dev, in->mount_path, in->mount_fs,
						 in->mount_exec, &err);
	}
	ln_cv_report(cv, "create", "mount", in->mount_path, det.buf, rc < 0 ? err.buf : NULL);
out:
	ln_buf_release(&err);
	ln_buf_release(&det);
}
