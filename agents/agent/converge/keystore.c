// SPDX-License-Identifier: MIT
/*
 * The node key store: the DH-HMAC-CHAP secrets and NVMe/TCP TLS PSKs this
 * node needs, kept in
 * /etc/llmnet/keys/<cluster>/ (0700, files 0600, written atomically) so
 * that what configfs and the live controllers lose at a reboot can be set
 * again. Only this node's secrets are kept, one file per secret field of
 * the request (common/secret_fields.h): host-<host NQN>.key (and
 * .ctrl.key, .psk) for the host entries its targets key, target-<subsystem
 * NQN>.key (and .ctrl.key, .psk) for its initiators' connects. Files the request
 * no longer needs are removed by apply, never by a boot-time restore (a
 * target that fails a try needs its files on the next); teardown wipes the
 * cluster's folder. The secrets never go to the state file or an answer:
 * reports name the file.
 * Reached as every agent file is (paths.h): no link is followed and every
 * folder on the way must be root's alone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/agent/converge/parts.h"
#include "agents/agent/kernel/paths.h"
#include "agents/agent/kernel/read.h"
#include "common/json.h"
#include "common/secret_fields.h"

/* The files of one holder (common/secret_fields.h), name -> secret:
 * <store>-<nqn>.<ext> for each secret it has. */
static void want_add(struct json_object *files, enum ln_secret_holder_kind kind, const char *nqn,
		     const char *const secret[LN_SECRET_SLOTS])
{
	char name[NAME_MAX + 1];
	int k;

	for (k = 0; k < LN_SECRET_SLOTS; k++) {
		if (!secret[k])
			continue;
		if (snprintf(name, sizeof(name), "%s-%s.%s", ln_secret_holders[kind].store, nqn,
			     ln_secret_ext[k]) >= (int)sizeof(name))
			continue;	/* an NQN is at most LN_NQN_MAX bytes: cannot happen */
		json_object_object_add(files, name, json_object_new_string(secret[k]));
	}
}

/* Every file the request needs on this node, name -> secret. */
static struct json_object *wanted(const struct ln_request *rq)
{
	struct json_object *files = json_object_new_object();
	size_t i, j;

	for (i = 0; rq && i < rq->ntargets; i++) {
		const struct ln_req_target *t = &rq->targets[i];

		/* a target that is not exported needs no secret here */
		for (j = 0; t->keys && !t->failed && j < t->nhosts; j++)
			want_add(files, LN_SECRET_HOST, t->hosts[j], t->keys[j].v);
	}
	for (i = 0; rq && i < rq->ninits; i++)
		want_add(files, LN_SECRET_CONNECT, rq->inits[i].target, rq->inits[i].secrets);
	return files;
}

/* The names in the cluster's folder (none when it is missing); 0 or
 * negative with err (a link on the way is refused). */
static int list_store(struct ln_converge *cv, const char *dir, struct json_object *out,
		      struct ln_buf *err)
{
	struct dirent *de;
	DIR *d;
	int fd = ln_path_open_dir(cv->a, dir, err);

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		ln_buf_addf(err, "cannot read '%s': %s", dir, strerror(errno));
		return -EIO;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			json_object_array_add(out, json_object_new_string(de->d_name));
	closedir(d);
	return 0;
}

/* The cluster's folder into dir (PATH_MAX) and its names into have; when
 * they cannot be read, the store is reported as failed for action. */
static int read_store(struct ln_converge *cv, const char *action, char *dir,
		      struct json_object *have, struct ln_buf *err)
{
	int rc;

	snprintf(dir, PATH_MAX, LN_KEYS_DIR "/%s", cv->cluster);
	rc = list_store(cv, dir, have, err);
	if (rc < 0)
		ln_cv_report(cv, action, "node_key_store", dir, NULL, err->buf);
	return rc;
}

/* The store's folders, made when missing: /etc/llmnet 0755 (the hostfile
 * lives there), keys and the cluster's 0700, and made 0700 when looser. */
static int open_store(struct ln_converge *cv, const char *dir, struct ln_buf *err)
{
	int fd = ln_agent_change(cv->a, "create the node key store");

	if (fd < 0)
		return fd;
	fd = ln_path_open_own_dir(cv->a, "/etc/llmnet", 0755, err);
	if (fd >= 0) {
		close(fd);
		fd = ln_path_open_own_dir(cv->a, LN_KEYS_DIR, 0700, err);
	}
	if (fd >= 0) {
		if (fchmod(fd, 0700) < 0)
			ln_buf_addf(err, "cannot make '%s' private: %s", LN_KEYS_DIR, strerror(errno));
		close(fd);
		fd = ln_path_open_own_dir(cv->a, dir, 0700, err);
	}
	if (fd < 0)
		return fd;
	if (fchmod(fd, 0700) < 0) {
		ln_buf_addf(err, "cannot make '%s' private: %s", dir, strerror(errno));
		close(fd);
		return -errno;
	}
	close(fd);
	return 0;
}

/* 1 when path holds secret (and is private), 0 when not or missing. */
static int holds(struct ln_converge *cv, const char *path, const char *secret)
{
	struct ln_buf cur = LN_BUF_INIT_SECRET, err = LN_BUF_INIT;
	struct stat st;
	int same = ln_path_lstat(cv->a, path, &st, &err) == 0 && S_ISREG(st.st_mode) &&
		   !(st.st_mode & 077) && ln_path_read(cv->a, path, &cur, &err) == 0;

	ln_buf_rtrim(&cur);
	same = same && !strcmp(cur.buf, secret);
	ln_buf_release(&cur);	/* wiped */
	ln_buf_release(&err);
	return same;
}

void ln_keystore_apply(struct ln_converge *cv, int may_remove)
{
	struct json_object *want = wanted(cv->rq), *have = json_object_new_array();
	struct ln_buf err = LN_BUF_INIT, data = LN_BUF_INIT_SECRET;
	char dir[PATH_MAX], p[PATH_MAX];
	int rc, opened = 0;
	size_t i;

	if (read_store(cv, "change", dir, have, &err) < 0)
		goto out;
	json_object_object_foreach(want, name, v) {
		const char *secret = json_object_get_string(v);
		int existed;

		snprintf(p, sizeof(p), "%s/%s", dir, name);
		if (holds(cv, p, secret)) {
			ln_cv_report(cv, "ok", "node_key", p, NULL, NULL);
			continue;
		}
		ln_buf_reset(&err);
		existed = ln_path_exists(cv->a, p);
		rc = 0;
		if (!cv->plan && !opened) {
			rc = open_store(cv, dir, &err);
			opened = rc == 0;
		}
		if (rc == 0 && !cv->plan) {
			ln_buf_reset(&data);
			ln_buf_addf(&data, "%s\n", secret);
			rc = ln_path_write(cv->a, p, data.buf, data.len, 0600, &err);
			/* wiped now, not at the next key or the end: data is secret */
			ln_buf_reset(&data);
		}
		ln_cv_report(cv, existed ? "change" : "create", "node_key", p, NULL,
			     rc < 0 ? err.buf : NULL);
	}
	for (i = 0; may_remove && i < json_object_array_length(have); i++) {
		const char *nm = json_object_get_string(json_object_array_get_idx(have, i));

		if (json_object_object_get_ex(want, nm, NULL))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, nm);
		ln_buf_reset(&err);
		rc = cv->plan ? 0 : ln_path_remove(cv->a, p, &err);
		ln_cv_report(cv, "remove", "node_key", p, NULL, rc < 0 ? err.buf : NULL);
	}
out:
	json_object_put(want);
	json_object_put(have);
	ln_buf_release(&data);
	ln_buf_release(&err);
}

/* host-H.key, host-H.ctrl.key or host-H.psk (a host holder's files,
 * common/secret_fields.h) of a host entry a kept target still keys (the
 * cluster still owns nvmet_host_key H after the removals). */
static int kept_host_key(struct ln_converge *cv, const char *name)
{
	const char *store = ln_secret_holders[LN_SECRET_HOST].store;
	size_t len = strlen(name), pre = strlen(store) + 1, dot = 0, n;
	char h[NAME_MAX + 1];
	int k;

	if (!cv->kept || strncmp(name, store, pre - 1) || name[pre - 1] != '-')
		return 0;
	/* H is what the longest extension leaves, when it leaves one:
	 * host-H.ctrl.key is H's, not H.ctrl's */
	for (k = 0; k < LN_SECRET_SLOTS; k++) {
		n = strlen(ln_secret_ext[k]) + 1;	/* with its '.' */
		if (len > pre + n && name[len - n] == '.' &&
		    !strcmp(name + len - n + 1, ln_secret_ext[k]) && (!dot || len - n < dot))
			dot = len - n;
	}
	if (!dot)
		return 0;
	snprintf(h, sizeof(h), "%.*s", (int)(dot - pre), name + pre);
	return ln_cv_owned(cv, "nvmet_host_key", h);
}

void ln_keystore_wipe(struct ln_converge *cv)
{
	struct json_object *have = json_object_new_array();
	struct ln_buf err = LN_BUF_INIT;
	char dir[PATH_MAX], p[PATH_MAX];
	size_t i, n, kept = 0;
	int rc;

	if (!cv->cluster[0])
		goto out;
	if (read_store(cv, "remove", dir, have, &err) < 0)
		goto out;
	if (!ln_is_dir(cv->a, dir))
		goto out;
	n = json_object_array_length(have);
	for (i = 0, rc = 0; i < n && rc == 0; i++) {
		const char *name = json_object_get_string(json_object_array_get_idx(have, i));

		if (kept_host_key(cv, name)) {
			kept++;
			continue;
		}
		snprintf(p, sizeof(p), "%s/%s", dir, name);
		if (!cv->plan)
			rc = ln_path_remove(cv->a, p, &err);
	}
	if (kept) {
		ln_changes_warn(&cv->ch, "kept %zu file(s) of the node key store '%s': the hosts "
			       "of a kept target still need them", kept, dir);
		goto out;
	}
	if (rc == 0 && !cv->plan)
		rc = ln_path_rmdir(cv->a, dir, &err);
	ln_cv_report(cv, "remove", "node_key_store", dir, NULL, rc < 0 ? err.buf : NULL);
out:
	json_object_put(have);
	ln_buf_release(&err);
}
