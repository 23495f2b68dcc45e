/* SPDX-License-Identifier: MIT */
/*
 * What the controller remembers between runs, per cluster, in its state
 * folder (LLMNET_STATE_DIR, else $XDG_STATE_HOME/llmnet, else
 * ~/.local/state/llmnet; mode 0700), beside the run log:
 *
 *   CLUSTER.facts.json    each node's last facts and when they were read
 *   CLUSTER.applied.json  each node's desired state as of its last apply
 *                         that converged (or teardown), and when
 *   CLUSTER.retry         the nodes an apply that did not converge leaves
 *                         to retry (apply --limit @FILE reads it)
 *
 * Files are written whole, atomically (temporary file, fsync, rename),
 * mode 0600. They hold what facts and requests hold: names, addresses,
 * NQNs, paths; never a key (requests name key files, not keys).
 */
#ifndef LN_STATE_H
#define LN_STATE_H

#include "common/buf.h"
#include "orchestrator/run/run.h"

/* The state folder's path (malloc'd), or NULL without memory. */
char *ln_state_dir(void);

/* 0 when dir is a real directory (no link) owned by this user with no
 * group or other access; else the refusal, with the command that fixes
 * it, in err. */
int ln_state_dir_check(const char *dir, struct ln_buf *err);

/* The state folder, created 0700 when missing and then checked
 * (ln_state_dir_check); malloc'd, or NULL with the reason in err. */
char *ln_state_open_dir(struct ln_buf *err);

/* open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0600) for a file in the
 * state folder: a planted symbolic link is refused, not followed. The fd,
 * or -errno with the reason in err. */
int ln_state_open(const char *path, int flags, struct ln_buf *err);

/* Merge the facts of every node that answered this run into
 * CLUSTER.facts.json; the other nodes keep their last entry. (Here and
 * below, a state file that cannot be parsed is read as empty, with a
 * warning in r's notes.) */
int ln_state_save_facts(struct ln_run *r, struct ln_buf *err);

/*
 * After apply or teardown: record, for every node inside --limit, the
 * desired state it converged to; a node that did not converge loses its
 * entry, since what it holds is unknown. requests[i] is node i's desired
 * state (the caller's, built by plan.c; its secrets are made fingerprints
 * here, in place), NULL for a node to leave as recorded; requests NULL
 * after a teardown: each converged node is recorded holding nothing.
 */
int ln_state_save_applied(struct ln_run *r, struct json_object *const *requests,
			  struct ln_buf *err);

/*
 * Set up r for spec from CLUSTER.facts.json alone, contacting nothing
 * (facts --cached): a node with an entry is OK with its facts and
 * nr->cached_at; one without is PENDING, "no facts on record". Release
 * with ln_run_release().
 */
int ln_state_run_cached(struct ln_run *r, const struct ln_spec *spec, struct ln_buf *err);

/* The "nodes" object of CLUSTER.what in the state folder ("facts.json",
 * "applied.json") into *nodes, the caller's to put: a new empty one when
 * there is no file; a file that cannot be parsed is a note in r and read
 * as empty. Returns 0 or -ENOMEM. */
int ln_state_load(struct ln_run *r, const char *what, struct json_object **nodes,
		  struct ln_buf *err);

/* "2026-11-30T21:04:05Z, 3m ago" for a recorded time, into buf. */
void ln_state_when(time_t at, char *buf, size_t size);

/* Write the names of the nodes inside --limit that did not converge, one
 * a line, to CLUSTER.retry; *path receives its path (malloc'd). */
int ln_state_write_retry(const struct ln_run *r, char **path, struct ln_buf *err);

#endif
