// SPDX-License-Identifier: MIT
/*
 * The helpers a converge's parts call back into: ownership is recorded
 * before each create and saved at once, so a run stopped anywhere (the
 * failpoint) leaves nothing owned unrecorded.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "agents/agent/converge.h"
#include "agents/agent/paths.h"
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

int ln_cv_mkdirs(struct ln_converge *cv, const char *dir, int own, struct ln_buf *err)
{
	char p[PATH_MAX];
	size_t i, n = strlen(dir);
	struct stat st;
	int rc;

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		/* a link on the way is refused (paths.h), never followed */
		rc = ln_path_lstat(cv->a, p, &st, err);
		if (rc == -ENOENT) {
			rc = own ? ln_cv_own(cv, "directory", p) : 0;
			if (rc == 0)
				rc = ln_path_mkdir(cv->a, p, err);
		} else if (rc == 0 && !S_ISDIR(st.st_mode)) {
			ln_buf_addf(err, "'%s' is not a directory", p);
			rc = -ENOTDIR;
		}
		if (rc < 0)
			return rc;
		p[i] = dir[i];
	}
	return 0;
}
