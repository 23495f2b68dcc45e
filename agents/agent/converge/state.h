/* SPDX-License-Identifier: MIT */
/*
 * Ownership and the node lock. ROOT/var/lib/llmnet/state.json records, per
 * cluster name, every object the agent created (kind + id + a few facts
 * such as the port id it chose); teardown and pruning touch only those.
 * It is written by temp file, fsync and rename, through the failpoint, and
 * never holds a secret.
 */
#ifndef LN_AGENT_STATE_H
#define LN_AGENT_STATE_H

#include <json-c/json.h>

#include "common/buf.h"

struct ln_agent;

#define LN_STATE_PATH "/var/lib/llmnet/state.json"
#define LN_LOCK_PATH "/run/llmnet.lock"

struct ln_state {
	struct json_object *root;	/* {"version":1,"clusters":{...}} */
	struct json_object *index;	/* "cluster\x1fkind\x1fid" -> record, built lazily */
	int dirty;
};

/* Load the state (an absent file is an empty state). */
int ln_state_load(struct ln_agent *a, struct ln_state *s, struct ln_buf *err);
void ln_state_release(struct ln_state *s);
/* Save when changed; a no-op otherwise. */
int ln_state_save(struct ln_agent *a, struct ln_state *s, struct ln_buf *err);

/* The record of (kind, id) owned by cluster, or NULL. Borrowed. */
struct json_object *ln_state_find(struct ln_state *s, const char *cluster, const char *kind,
				  const char *id);
/* The name of another cluster owning (kind, id), or NULL. */
const char *ln_state_other_owner(struct ln_state *s, const char *cluster, const char *kind,
				 const char *id);
/* Add a record (returned, borrowed, for extra fields); an existing one is kept. */
struct json_object *ln_state_add(struct ln_state *s, const char *cluster, const char *kind,
				 const char *id);
void ln_state_remove(struct ln_state *s, const char *cluster, const char *kind, const char *id);
/* The records of cluster (array, borrowed; NULL when none). */
struct json_object *ln_state_objects(struct ln_state *s, const char *cluster);
/* Cluster names in the state (array of strings, caller puts). */
struct json_object *ln_state_clusters(struct ln_state *s);
/* Drop a cluster with no records left. */
void ln_state_prune(struct ln_state *s, const char *cluster);

/* facts' "owned": {cluster: {objects, updated}}. */
int ln_state_owned_summary(struct ln_agent *a, struct json_object **out, struct ln_buf *err);

/* Take the node lock, waiting at most LLMNET_LOCK_WAIT (default 30) s and
 * never past the request's time budget (budget.h). Returns the fd (>= 0)
 * or -LN_ELOCKED / -LN_ETIMEOUT (budget) / -errno. */
int ln_lock_acquire(struct ln_agent *a, struct ln_buf *err);
void ln_lock_release(int fd);

#endif
