/* SPDX-License-Identifier: MIT */
/*
 * One converge (plan, apply or teardown) as its parts see it: the state,
 * the change list and whether this is a dry run, with the helpers the
 * parts (nvmet.c, initiator.c, hostfile.c, modules.c) call back into to
 * record ownership and report changes. The driver is reconcile.c; it and
 * its parts both use this file, and it uses neither.
 */
#ifndef LN_AGENT_CONVERGE_H
#define LN_AGENT_CONVERGE_H

#include "agents/agent/core/agent.h"
#include "agents/agent/core/request.h"
#include "agents/agent/converge/changes.h"
#include "agents/agent/converge/state.h"

struct ln_converge {
	struct ln_agent *a;
	struct ln_request *rq;	/* NULL for teardown */
	const char *cluster;
	struct ln_state st;
	struct ln_changes ch;
	int plan;
	int purge;
	int teardown;
	/* teardown: the subsystems that stay, NQN -> why (ln_nvmet_keep);
	 * NULL otherwise */
	struct json_object *kept;
};

/* Record ownership before a create (saved at once, so a stop after the
 * create forgets nothing); 0 or negative. */
int ln_cv_own(struct ln_converge *cv, const char *kind, const char *id);
int ln_cv_owned(struct ln_converge *cv, const char *kind, const char *id);
/* This cluster's ownership records of kind, in a new array (the caller
 * puts it; the records are shared with the state). */
struct json_object *ln_cv_owned_of(struct ln_converge *cv, const char *kind);
void ln_cv_disown(struct ln_converge *cv, const char *kind, const char *id);
/* Report a change; err non-NULL marks it failed. */
void ln_cv_report(struct ln_converge *cv, const char *action, const char *kind, const char *id,
		  const char *detail, const char *err);
/* For a path that exists: 0 when this cluster owns it as kind, else
 * -EEXIST with "'ID' belongs to cluster 'NAME'" or "'ID' exists and is not
 * llmnet's" in err. The agent rewrites or deletes only what it owns. */
int ln_cv_existing(struct ln_converge *cv, const char *kind, const char *id, struct ln_buf *err);
/* Create the missing directories of path (a node path), never through a
 * link and only under directories root alone may change (paths.h); each
 * is owned by the cluster as a "directory" object when own is set (not for
 * the node's own files, such as its host identity, which no teardown
 * removes); on failure the ones it made are removed again; 0 or negative. */
int ln_cv_mkdirs(struct ln_converge *cv, const char *dir, int own, struct ln_buf *err);
/* Create or rewrite the file path, recorded as kind: its directories are
 * checked (ln_path_check_dirs()) and the missing ones made and owned, the
 * record saved, then make(cv, path, arg, err) writes it. When anything
 * fails, the record (unless it was there before) and the directories this
 * call made are removed again: a failed create leaves no record and no
 * file. 0 or negative with err. */
int ln_cv_create(struct ln_converge *cv, const char *kind, const char *path,
		 int (*make)(struct ln_converge *cv, const char *path, const void *arg,
			     struct ln_buf *err),
		 const void *arg, struct ln_buf *err);
/* The file path (kind) holding want: reported "ok" when it does (and has
 * mode, with check_mode), else made or rewritten by ln_cv_create() with
 * mode, atomically, and reported (with detail) as a create or change;
 * one this cluster does not own (someone's, or another cluster's even when
 * missing now), one under a directory someone but root may change, or one
 * reached through a link is refused and left as it is. 0 when the file is
 * (or, in a plan, would be) as wanted, else negative. */
int ln_cv_file(struct ln_converge *cv, const char *kind, const char *path,
	       const struct ln_buf *want, mode_t mode, int check_mode, const char *detail);

#endif
