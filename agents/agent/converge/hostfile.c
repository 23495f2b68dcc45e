// SPDX-License-Identifier: MIT
/*
 * The MPI hostfile: Open MPI's `name slots=N` or MPICH's `name:N`, one
 * line per node, written atomically and only when its content differs, so
 * a converged node's hostfile keeps its mtime. Only a hostfile this
 * cluster's state records is rewritten or removed (converge.h), and none is
 * reached through a link (paths.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "agents/agent/converge/parts.h"
#include "agents/agent/kernel/paths.h"
#include "agents/agent/target/inuse.h"
#include "common/json.h"

int ln_hostfile_render(const struct ln_request *rq, struct ln_buf *out)
{
	size_t i;
	int r = ln_buf_addf(out, "# written by llmnet for cluster %s; do not edit\n", rq->cluster);

	for (i = 0; r == 0 && i < rq->nlines; i++)
		r = rq->hostfile_mpich
			    ? ln_buf_addf(out, "%s:%d\n", rq->lines[i].name, rq->lines[i].slots)
			    : ln_buf_addf(out, "%s slots=%d\n", rq->lines[i].name, rq->lines[i].slots);
	return r;
}

/* Remove an owned hostfile: never through a link, never one another
 * cluster also records (it is only forgotten here). */
static void remove_hostfile(struct ln_converge *cv, const char *path)
{
	struct ln_buf err = LN_BUF_INIT;
	const char *other = ln_state_other_owner(&cv->st, cv->cluster, "hostfile", path);
	struct stat st;
	int rc = ln_path_lstat(cv->a, path, &st, &err);

	if (rc == -ENOENT || (rc == 0 && other)) {
		if (other)
			ln_changes_warn(&cv->ch, "kept hostfile '%s': cluster '%s' also records it",
					path, other);
		if (!cv->plan)
			ln_cv_disown(cv, "hostfile", path);
		goto out;
	}
	if (rc == 0 && !cv->plan)
		rc = ln_path_remove(cv->a, path, &err);
	if (rc == 0 && !cv->plan)
		ln_cv_disown(cv, "hostfile", path);
	ln_cv_report(cv, "remove", "hostfile", path, NULL, rc < 0 ? err.buf : NULL);
out:
	ln_buf_release(&err);
}

/* The wanted hostfile: written when missing or different, only when this
 * cluster owns it (ln_cv_file()). */
static void write_hostfile(struct ln_converge *cv, const char *path)
{
	struct ln_buf want = LN_BUF_INIT, err = LN_BUF_INIT;

	/* the place first: on a local disk, in no other cluster's objects */
	if (ln_inuse_place(cv->a, &cv->st, cv->cluster, "hostfile", path, LN_PLACE_FILE,
			   &err) < 0) {
		ln_cv_report(cv, "create", "hostfile", path, NULL, err.buf);
		ln_buf_release(&err);
		return;
	}
	ln_hostfile_render(cv->rq, &want);
	ln_cv_file(cv, "hostfile", path, &want, 0644, 0,
		   cv->rq->hostfile_mpich ? "mpich" : "openmpi");
	ln_buf_release(&want);
}

void ln_hostfile_reconcile(struct ln_converge *cv)
{
	struct json_object *objs = ln_state_objects(&cv->st, cv->cluster);
	const char *path = cv->rq ? cv->rq->hostfile_path : NULL;
	size_t i, n = objs ? json_object_array_length(objs) : 0;

	/* an owned hostfile at another path (or none wanted) goes */
	for (i = n; i-- > 0;) {
		struct json_object *o = json_object_array_get_idx(objs, i), *k, *id;

		if (json_object_object_get_ex(o, "kind", &k) && json_object_object_get_ex(o, "id", &id) &&
		    !strcmp(json_object_get_string(k), "hostfile") &&
		    (!path || strcmp(json_object_get_string(id), path))) {
			char idbuf[PATH_MAX];

			snprintf(idbuf, sizeof(idbuf), "%s", json_object_get_string(id));
			remove_hostfile(cv, idbuf);
		}
	}
	if (path)
		write_hostfile(cv, path);
}
