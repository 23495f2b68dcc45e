// SPDX-License-Identifier: MIT
/*
 * The helpers a converge's parts call back into: ownership is recorded
 * before each create and saved at once, so a run stopped anywhere (the
 * failpoint) leaves nothing owned unrecorded; a create that fails drops
 * its record and the directories it made again, so it leaves neither.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "agents/agent/converge/converge.h"
#include "agents/agent/kernel/paths.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/log.h"

int ln_cv_own(struct ln_converge *cv, const char *kind, const char *id)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc;

	if (ln_state_find(&cv->st, cv->cluster, kind, id))
		return 0;
	ln_state_add(&cv->st, cv->cluster, kind, id);
	rc = ln_state_save(cv->a, &cv->st, &err);
	if (rc < 0)
		ln_error("%s", err.buf);
	ln_buf_release(&err);
	return rc;
}

int ln_cv_owned(struct ln_converge *cv, const char *kind, const char *id)
{
	return ln_state_find(&cv->st, cv->cluster, kind, id) != NULL;
}

struct json_object *ln_cv_owned_of(struct ln_converge *cv, const char *kind)
{
	struct json_object *objs = ln_state_objects(&cv->st, cv->cluster), *out;
	size_t i, n = objs ? json_object_array_length(objs) : 0;

	out = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(objs, i);

		if (!strcmp(ln_json_str_at(o, "kind"), kind))
			json_object_array_add(out, json_object_get(o));
	}
	return out;
}

void ln_cv_disown(struct ln_converge *cv, const char *kind, const char *id)
{
	ln_state_remove(&cv->st, cv->cluster, kind, id);
}

void ln_cv_report(struct ln_converge *cv, const char *action, const char *kind, const char *id,
		  const char *detail, const char *err)
{
	ln_changes_add(&cv->ch, action, kind, id, detail, err && *err ? err : (err ? "failed" : NULL));
}

int ln_cv_existing(struct ln_converge *cv, const char *kind, const char *id, struct ln_buf *err)
{
	const char *other;

	if (ln_cv_owned(cv, kind, id))
		return 0;
	other = ln_state_other_owner(&cv->st, cv->cluster, kind, id);
	if (other)
		ln_buf_addf(err, "'%s' belongs to cluster '%s'", id, other);
	else
		ln_buf_addf(err, "'%s' exists and is not llmnet's", id);
	return -EEXIST;
}

/* Remove the directories from dir up to (not above) the one of length
 * from, deepest first, and forget them: they were made by this call. */
static void unmake_dirs(struct ln_converge *cv, const char *dir, size_t from)
{
	struct ln_buf err = LN_BUF_INIT;
	char p[PATH_MAX];
	char *slash;

	snprintf(p, sizeof(p), "%s", dir);
	while (strlen(p) >= from) {
		if (ln_path_rmdir(cv->a, p, &err) == 0)
			ln_cv_disown(cv, "directory", p);
		else
			ln_error("%s", err.buf);	/* stays recorded: a later teardown tries again */
		ln_buf_reset(&err);
		slash = strrchr(p, '/');
		if (!slash || slash == p)
			break;
		*slash = '\0';
	}
	ln_buf_release(&err);
}

struct make_dirs {
	struct ln_converge *cv;
	int own;
	size_t *made;
	struct ln_buf *err;
};

static int make_dir(const char *p, size_t len, void *ctx)
{
	const struct make_dirs *m = ctx;
	struct stat st;
	/* a link on the way is refused (paths.h), never followed */
	int rc = ln_path_lstat(m->cv->a, p, &st, m->err);

	if (rc == -ENOENT) {
		rc = m->own ? ln_cv_own(m->cv, "directory", p) : 0;
		if (rc == 0)
			rc = ln_path_mkdir(m->cv->a, p, m->err);
		if (rc == 0 && !*m->made)
			*m->made = len;
		else if (rc < 0 && m->own)
			ln_cv_disown(m->cv, "directory", p);
	} else if (rc == 0 && !S_ISDIR(st.st_mode)) {
		ln_buf_addf(m->err, "'%s' is not a directory", p);
		rc = -ENOTDIR;
	}
	return rc;
}

/* Make the missing directories of dir (owned when own is set); *made is
 * the length of the first one made (0: none). */
static int make_dirs(struct ln_converge *cv, const char *dir, int own, size_t *made,
		     struct ln_buf *err)
{
	struct make_dirs m = { cv, own, made, err };

	*made = 0;
	return ln_path_each_prefix(dir, make_dir, &m);
}

/* After a failed create: forget what this call recorded and remove the
 * directories it made, and save that at once. */
static void undo_create(struct ln_converge *cv, const char *kind, const char *path,
			const char *dir, size_t made)
{
	struct ln_buf err = LN_BUF_INIT;

	if (kind)
		ln_cv_disown(cv, kind, path);
	if (made)
		unmake_dirs(cv, dir, made);
	if (ln_state_save(cv->a, &cv->st, &err) < 0)
		ln_error("%s", err.buf);
	ln_buf_release(&err);
}

int ln_cv_mkdirs(struct ln_converge *cv, const char *dir, int own, struct ln_buf *err)
{
	size_t made;
	int rc = make_dirs(cv, dir, own, &made, err);

	if (rc < 0)
		undo_create(cv, NULL, NULL, dir, made);
	return rc;
}

int ln_cv_create(struct ln_converge *cv, const char *kind, const char *path,
		 int (*make)(struct ln_converge *cv, const char *path, const void *arg,
			     struct ln_buf *err),
		 const void *arg, struct ln_buf *err)
{
	int had = ln_cv_owned(cv, kind, path);
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	size_t made = 0;
	int rc;

	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	rc = ln_path_check_dirs(cv->a, path, err);
	if (rc == 0 && *dir)
		rc = make_dirs(cv, dir, 1, &made, err);
	if (rc == 0)
		rc = ln_cv_own(cv, kind, path);
	if (rc == 0)
		rc = make(cv, path, arg, err);
	if (rc < 0)
		undo_create(cv, had ? NULL : kind, path, dir, made);
	return rc;
}

struct cv_file {
	const struct ln_buf *want;
	mode_t mode;
};

static int write_file(struct ln_converge *cv, const char *path, const void *arg,
		      struct ln_buf *err)
{
	const struct cv_file *f = arg;

	return ln_path_write(cv->a, path, f->want->buf, f->want->len, f->mode, err);
}

int ln_cv_file(struct ln_converge *cv, const char *kind, const char *path,
	       const struct ln_buf *want, mode_t mode, int check_mode, const char *detail)
{
	struct ln_buf cur = LN_BUF_INIT, err = LN_BUF_INIT;
	struct cv_file f = { want, mode };
	struct stat st;
	int rc = ln_path_lstat(cv->a, path, &st, &err), exists = rc == 0;

	if (rc == 0 || (rc == -ENOENT && ln_state_other_owner(&cv->st, cv->cluster, kind, path)))
		rc = ln_cv_existing(cv, kind, path, &err);
	if (rc == 0)
		rc = ln_path_read(cv->a, path, &cur, &err);
	if (rc == 0 && cur.len == want->len && !memcmp(cur.buf, want->buf, want->len) &&
	    (!check_mode || (st.st_mode & 07777) == mode)) {
		ln_cv_report(cv, "ok", kind, path, NULL, NULL);
		goto out;
	}
	if (rc == -ENOENT)
		rc = 0;
	if (rc == 0 && cv->plan)
		rc = ln_path_check_dirs(cv->a, path, &err);
	if (rc == 0 && !cv->plan)
		rc = ln_cv_create(cv, kind, path, write_file, &f, &err);
	ln_cv_report(cv, exists ? "change" : "create", kind, path, detail, rc < 0 ? err.buf : NULL);
out:
	ln_buf_release(&cur);
	ln_buf_release(&err);
	return rc < 0 ? rc : 0;
}
