// SPDX-License-Identifier: MIT
/*
 * Backing files of file namespaces: made sparse at the declared size, used
 * again when this cluster's state records them, adopted only when the spec
 * says so (`adopt`, never deleted), never shared with another cluster, and
 * deleted by teardown --purge only when llmnet made them and no namespace
 * uses them. Reached without links, under directories only root may change.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agents/agent/converge/parts.h"
#include "agents/agent/kernel/paths.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/target/inuse.h"
#include "common/json.h"

#define P_SUB LN_NVMET "/subsystems/"

/* 1 (and who: SUBSYSTEM/NSID) when a namespace this cluster does not own
 * has path as its device_path; in a teardown, any namespace (one of a
 * kept target, or one whose removal failed), but in a plan not one it
 * plans to remove (a run would have by now). */
static int backing_in_use(struct ln_converge *cv, const char *path, char *who, size_t size)
{
	char **subs = NULL, **nss = NULL, p[PATH_MAX];
	struct ln_buf v = LN_BUF_INIT;
	size_t nsub = 0, nns = 0, i, j;
	int found = 0;

	ln_list_dir(cv->a, LN_NVMET "/subsystems", &subs, &nsub);
	for (i = 0; !found && i < nsub; i++) {
		snprintf(p, sizeof(p), P_SUB "%s/namespaces", subs[i]);
		ln_list_dir(cv->a, p, &nss, &nns);
		for (j = 0; !found && j < nns; j++) {
			snprintf(who, size, "%s/%s", subs[i], nss[j]);
			snprintf(p, sizeof(p), P_SUB "%s/namespaces/%s/device_path", subs[i], nss[j]);
			ln_buf_reset(&v);
			found = (cv->teardown || !ln_cv_owned(cv, "nvmet_namespace", who)) &&
				!(cv->plan && ln_changes_removes(&cv->ch, who)) &&
				ln_read_attr(cv->a, p, &v) == 0 && v.len && !strcmp(v.buf, path);
		}
		ln_names_free(nss, nns);
	}
	ln_names_free(subs, nsub);
	ln_buf_release(&v);
	return found;
}

int ln_nvmet_adopted(struct json_object *rec)
{
	struct json_object *v;

	return rec && json_object_object_get_ex(rec, "adopted", &v) && json_object_get_boolean(v);
}

static int create_sparse(struct ln_converge *cv, const char *path, const void *arg,
			 struct ln_buf *err)
{
	const struct ln_req_ns *ns = arg;

	return ln_path_create_sparse(cv->a, path, ns->size, err);
}

/* Adopt the existing, unrecorded file of ns: refused when a namespace this
 * cluster does not own exports it already; recorded "adopted" (state only,
 * never deleted) otherwise. */
static int adopt_backing_file(struct ln_converge *cv, const struct ln_req_ns *ns,
			      struct ln_buf *err)
{
	char who[600], det[96];
	int rc = 0;

	if (backing_in_use(cv, ns->file, who, sizeof(who))) {
		ln_buf_addf(err, "backing file '%s' is already exported by namespace '%s'; "
			    "llmnet does not share a backing file", ns->file, who);
		return -EBUSY;
	}
	if (!cv->plan) {
		/* marked before it is saved: a stop right after never leaves an
		 * adopted file recorded as one llmnet may delete */
		json_object_object_add(ln_state_add(&cv->st, cv->cluster, "backing_file", ns->file),
				       "adopted", json_object_new_boolean(1));
		cv->st.dirty = 1;
		rc = ln_state_save(cv->a, &cv->st, err);
	}
	snprintf(det, sizeof(det), "adopt, %llu bytes; never deleted",
		 (unsigned long long)ns->size);
	ln_cv_report(cv, "change", "backing_file", ns->file, det, rc < 0 ? err->buf : NULL);
	return rc < 0 ? -EALREADY : 0;
}

/* An existing backing file must be a regular file of the declared size. */
static int file_fits(const struct ln_req_ns *ns, const struct stat *st, struct ln_buf *err)
{
	if (!S_ISREG(st->st_mode)) {
		ln_buf_addf(err, "backing file '%s' is not a regular file", ns->file);
		return -EINVAL;
	}
	if ((uint64_t)st->st_size != ns->size) {
		ln_buf_addf(err, "backing file '%s' is %lld bytes but the request says %llu "
			    "bytes; llmnet never resizes a backing file", ns->file,
			    (long long)st->st_size, (unsigned long long)ns->size);
		return -EINVAL;
	}
	return 0;
}

/*
 * The refusals that need no change; *exists: the file is there (then a
 * regular file of the declared size). A file another cluster records,
 * even a missing one, is never shared (its teardown --purge would delete
 * it under this cluster's namespace), adopt or not; an existing one is
 * used when this cluster's state records it or the request adopts it.
 * Never through a link, never under a directory someone but root may
 * change.
 */
static int refusals(struct ln_converge *cv, const struct ln_req_ns *ns, int *exists,
		    struct ln_buf *err)
{
	struct stat st;
	int owned = ln_cv_owned(cv, "backing_file", ns->file);
	int rc = ln_path_lstat(cv->a, ns->file, &st, err);

	*exists = rc == 0;
	if (rc < 0 && rc != -ENOENT)
		return rc;
	if (rc == 0 && (rc = file_fits(ns, &st, err)) < 0)
		return rc;
	/* swap or a loop device's backing file: never exported, ours or not */
	if (rc == 0 && (rc = ln_inuse_file(cv->a, ns->file, &st, err)) < 0)
		return rc;
	if (!owned && ln_state_other_owner(&cv->st, cv->cluster, "backing_file", ns->file))
		return ln_cv_existing(cv, "backing_file", ns->file, err);
	if (*exists && !owned && !ns->adopt) {
		rc = ln_cv_existing(cv, "backing_file", ns->file, err);
		ln_buf_addstr(err, "; llmnet uses only backing files it created, or one the spec "
			      "adopts ('adopt: true'): remove or move it, or name another path");
		return rc;
	}
	/* the place: on a local disk, in no other cluster's objects, no other
	 * namespace's file (inuse.h) */
	rc = ln_inuse_place(cv->a, &cv->st, cv->cluster, "backing file", ns->file, LN_PLACE_FILE,
			    err);
	return rc < 0 ? rc : ln_path_check_dirs(cv->a, ns->file, err);
}

/* Record that the file llmnet made for this cluster is there: from now
 * on, missing means lost. Also for a file whose create was stopped after
 * it was made but before this mark (the failpoint). */
static int mark_made(struct ln_converge *cv, const char *file, struct ln_buf *err)
{
	struct json_object *rec = ln_state_find(&cv->st, cv->cluster, "backing_file", file);

	if (cv->plan || !rec || ln_nvmet_adopted(rec) ||
	    json_object_object_get_ex(rec, "made", NULL))
		return 0;
	json_object_object_add(rec, "made", json_object_new_boolean(1));
	cv->st.dirty = 1;
	return ln_state_save(cv->a, &cv->st, err);
}

/*
 * Make sure the backing file is there at the right size; 0 or negative
 * (-EALREADY: already reported). Past the refusals, an existing file is
 * this cluster's or adopted now; a missing one is made, unless the spec
 * adopts it or adopted it before, or llmnet made it before: an adopted or
 * made file must exist, and a missing one is not made in its place (its
 * disk may be unmounted, or its data lost).
 */
int ln_backing_file_apply(struct ln_converge *cv, const struct ln_req_ns *ns, struct ln_buf *err)
{
	struct json_object *rec;
	char det[64];
	int exists, rc = refusals(cv, ns, &exists, err);

	if (rc < 0)
		return rc;
	if (exists) {
		/* unrecorded (the spec adopts it), or one this cluster created
		 * which the spec now adopts: kept from now on */
		if (!ln_cv_owned(cv, "backing_file", ns->file) ||
		    (ns->adopt && !ln_nvmet_adopted(ln_state_find(&cv->st, cv->cluster,
								  "backing_file", ns->file))))
			return adopt_backing_file(cv, ns, err);
		return mark_made(cv, ns->file, err);
	}
	if (ns->adopt) {
		ln_buf_addf(err, "backing file '%s' is missing, and 'adopt' uses an existing file "
			    "(is its disk mounted?); remove 'adopt' to let llmnet create it",
			    ns->file);
		return -ENOENT;
	}
	if (ln_nvmet_adopted(ln_state_find(&cv->st, cv->cluster, "backing_file", ns->file))) {
		/* an empty file in place of adopted data would be exported as if it were it */
		ln_buf_addf(err, "adopted backing file '%s' is missing (is its disk mounted?); "
			    "llmnet does not make one in its place", ns->file);
		return -ENOENT;
	}
	rec = ln_state_find(&cv->st, cv->cluster, "backing_file", ns->file);
	if (rec && json_object_object_get_ex(rec, "made", NULL)) {
		/* a blank file in its place would be exported under the
		 * namespace's stable identity, as if it were the lost data */
		ln_buf_addf(err, "backing file '%s', which llmnet made for this cluster, is missing "
			    "(is its disk mounted?); llmnet does not make a blank one under the "
			    "namespace's identity: `llmnet teardown` forgets it, then apply makes "
			    "a new one", ns->file);
		return -ENOENT;
	}
	snprintf(det, sizeof(det), "sparse, %llu bytes", (unsigned long long)ns->size);
	rc = cv->plan ? 0 : ln_cv_create(cv, "backing_file", ns->file, create_sparse, ns, err);
	if (rc == 0)
		rc = mark_made(cv, ns->file, err);
	ln_cv_report(cv, "create", "backing_file", ns->file, det, rc < 0 ? err->buf : NULL);
	if (rc < 0)
		ln_buf_reset(err);
	return rc < 0 ? -EALREADY : 0;	/* already reported */
}

/* ln_backing_file_apply's refusals: checked before any object of the
 * target is made, so a refused file leaves no subsystem, host or port
 * around it. */
int ln_backing_file_usable(struct ln_converge *cv, const struct ln_req_ns *ns,
			   struct ln_buf *err)
{
	int exists;

	return refusals(cv, ns, &exists, err);
}

/* teardown --purge: remove the owned object id of kind (rc: what looking
 * at it gave; nothing is removed when planning), forget it once it is
 * gone, report either; releases err. */
static void remove_owned(struct ln_converge *cv, const char *kind, const char *id, int rc,
			 int (*rm)(struct ln_agent *, const char *, struct ln_buf *),
			 struct ln_buf *err)
{
	if (rc == 0 && !cv->plan)
		rc = rm(cv->a, id, err);
	if (rc == 0 && !cv->plan)
		ln_cv_disown(cv, kind, id);
	ln_cv_report(cv, "remove", kind, id, NULL, rc < 0 ? err->buf : NULL);
	ln_buf_release(err);
}

/* teardown: the owned backing files among the records l (kind, id,
 * adopted): deleted with --purge, unless adopted, another cluster's too, or
 * still used by a namespace. */
static void purge_backing_files(struct ln_converge *cv, struct json_object *l)
{
	size_t i, n = json_object_array_length(l);

	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(l, i);
		const char *id = ln_json_str_at(o, "id");
		struct ln_buf err = LN_BUF_INIT;
		const char *other;
		char who[600];
		struct stat st;
		int rc = 0;

		if (strcmp(ln_json_str_at(o, "kind"), "backing_file"))
			continue;
		rc = ln_path_lstat(cv->a, id, &st, &err);
		if (ln_nvmet_adopted(o)) {
			/* the spec adopted it: llmnet never deletes it, purge or not */
			if (rc != -ENOENT)
				ln_changes_warn(&cv->ch, "kept backing file '%s': adopted, llmnet "
					       "never deletes it", id);
			if (!cv->plan)
				ln_cv_disown(cv, "backing_file", id);
			ln_buf_release(&err);
			continue;
		}
		if (!cv->purge) {
			if (rc != -ENOENT)
				ln_changes_warn(&cv->ch, "kept backing file '%s' (use --purge to "
					       "delete it)", id);
			else if (!cv->plan)
				ln_cv_disown(cv, "backing_file", id);
			ln_buf_release(&err);
			continue;
		}
		/* a file another cluster also records is only forgotten here */
		other = ln_state_other_owner(&cv->st, cv->cluster, "backing_file", id);
		if (rc == -ENOENT || (rc == 0 && other)) {
			if (rc == 0)
				ln_changes_warn(&cv->ch, "kept backing file '%s': cluster '%s' also "
					       "records it", id, other);
			if (!cv->plan)
				ln_cv_disown(cv, "backing_file", id);
			ln_buf_release(&err);
			continue;
		}
		if (rc == 0 && backing_in_use(cv, id, who, sizeof(who))) {
			ln_changes_warn(&cv->ch, "kept backing file '%s': namespace '%s' uses it",
					id, who);
			ln_buf_release(&err);
			continue;
		}
		remove_owned(cv, "backing_file", id, rc, ln_path_remove, &err);
	}
}

/* How many of dir's entries stay: in a run, all that are there; in a
 * plan, those it has not planned to remove (a run would have by now). */
static size_t entries_left(struct ln_converge *cv, const char *dir, char **names, size_t n)
{
	char p[PATH_MAX];
	size_t i, left = 0;

	for (i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		left += !cv->plan || !ln_changes_removes(&cv->ch, p);
	}
	return left;
}

/* teardown --purge: the owned directories among l, deepest first; one
 * that holds anything (a kept file, something not ours) stays. */
static void purge_directories(struct ln_converge *cv, struct json_object *l)
{
	size_t i, n = json_object_array_length(l);

	/* directories, deepest first, so a parent is empty once its children go */
	for (;;) {
		struct json_object *deep = NULL;
		struct ln_buf err = LN_BUF_INIT;
		struct stat st;
		char **names;
		size_t nn, left;
		const char *id;
		int rc = 0;

		for (i = 0; i < n; i++) {
			struct json_object *o = json_object_array_get_idx(l, i);

			if (!strcmp(ln_json_str_at(o, "kind"), "directory") && !ln_json_str_at(o, "_done") &&
			    (!deep || strlen(ln_json_str_at(o, "id")) > strlen(ln_json_str_at(deep, "id"))))
				deep = o;
		}
		if (!deep)
			break;
		ln_json_add_str(deep, "_done", "1");	/* our copy's marker, never saved */
		id = ln_json_str_at(deep, "id");
		rc = ln_path_lstat(cv->a, id, &st, &err);
		if (rc == -ENOENT || (rc == 0 && !S_ISDIR(st.st_mode))) {
			if (!cv->plan)
				ln_cv_disown(cv, "directory", id);
			ln_buf_release(&err);
			continue;
		}
		if (rc == 0) {
			ln_list_dir(cv->a, id, &names, &nn);
			left = entries_left(cv, id, names, nn);
			ln_names_free(names, nn);
			if (left || ln_state_other_owner(&cv->st, cv->cluster, "directory", id)) {
				/* holds a kept backing file, or something not ours */
				ln_buf_release(&err);
				continue;
			}
		}
		remove_owned(cv, "directory", id, rc, ln_path_rmdir, &err);
	}
}

void ln_purge_files(struct ln_converge *cv)
{
	struct json_object *objs = ln_state_objects(&cv->st, cv->cluster), *l;
	size_t i, n = objs ? json_object_array_length(objs) : 0;

	l = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(objs, i);
		const char *k = ln_json_str_at(o, "kind");

		if (k && (!strcmp(k, "backing_file") || !strcmp(k, "directory"))) {
			struct json_object *c = json_object_new_object();

			ln_json_add_str(c, "kind", k);
			ln_json_add_str(c, "id", ln_json_str_at(o, "id"));
			ln_json_add_bool(c, "adopted", ln_nvmet_adopted(o));
			json_object_array_add(l, c);
		}
	}
	/* files first, then directories deepest first */
	purge_backing_files(cv, l);
	purge_directories(cv, l);
	json_object_put(l);
}
