/* SPDX-License-Identifier: MIT */
/*
 * One controller run over a cluster: the per-node record every phase
 * shares (session, facts, desired state, last answer, recap counts), the
 * nodes' sessions, the run log, and the notes the user must see (notes.h:
 * the library never prints, the command does). The phases that work on it
 * follow in data-flow order: facts.h, plan.h, apply.h, teardown.h.
 *
 * Session policy: a node's SSH session is opened once, during the facts
 * phase, and kept for every later phase of the run (plan, targets,
 * initiators, hostfiles), so a node costs one key exchange per run, not
 * one per phase. The open-session budget is the process's file limit
 * (raised to its hard limit at start) less a reserve; beyond it sessions
 * are closed after each phase and reopened when next needed (see
 * docs/operating.md for the measurements behind this).
 */
#ifndef LN_RUN_H
#define LN_RUN_H

#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <json-c/json.h>

#include "common/buf.h"
#include "orchestrator/run/notes.h"
#include "orchestrator/transport/push.h"
#include "orchestrator/secrets.h"
#include "orchestrator/spec/spec.h"
#include "orchestrator/transport/ssh.h"

enum { LN_TD_REMOVE = 0, LN_TD_KEEP = 1, LN_TD_FORCE = 2 };

enum ln_node_state {
	LN_NODE_PENDING = 0,	/* not contacted yet */
	LN_NODE_OK,		/* reachable, agent current, facts read */
	LN_NODE_UNREACHABLE,	/* connect failed or timed out */
	LN_NODE_REFUSED,	/* host key or sign-in refused */
	LN_NODE_FAILED,		/* the agent failed */
	LN_NODE_INTERRUPTED,	/* never started: the run was interrupted */
};

struct ln_node_run {
	size_t idx;				/* index into spec->nodes */
	const struct ln_node *spec;
	struct ln_session *s;
	/* lanes[k - 1]: lane k's session, a connection of its own to the node
	 * so that it can run one probe per lane at once (validate's concurrent
	 * rails: lane = the port's index); n_rdma - 1 of them, each opened on
	 * first use and closed with nr->s. */
	struct ln_session **lanes;
	size_t nlanes;
	enum ln_node_state state;
	int err_code;				/* negative code behind state */
	struct ln_buf reason;			/* why not OK, for the recap */
	int pushed;				/* the agent was uploaded this run */
	int accept_replaced;			/* named in --accept-replaced */
	int limited;				/* inside --limit (1 when no --limit) */
	struct json_object *facts;
	struct json_object *request;		/* desired local state */
	struct json_object *answer;		/* last plan/apply/teardown answer */
	struct ln_buf skip;			/* set: skipped in apply, with reason */
	int n_ok, n_changed, n_failed;		/* objects, from answers */
	int applied;				/* an apply call ran this run */
	double seconds;
	time_t cached_at;			/* facts (or plan) from the state folder, as of then; 0: live */
};

struct ln_run {
	const struct ln_spec *spec;
	struct ln_node_run *nodes;
	size_t n;
	struct ln_agent_image img;
	unsigned parallel;
	int keep_sessions;			/* session budget allows keeping all */
	char *log_path;
	FILE *log;
	pthread_mutex_t log_lock;
	int exit;				/* merged exit code so far */
	const char *phase;			/* for progress lines and timeouts */
	int purge;				/* teardown --purge */
	int destroy_plan;			/* plan --destroy: teardown's phases,
						 * each agent asked with --plan */
	/* teardown, per spec target: LN_TD_KEEP (an initiator of it did not
	 * disconnect) or LN_TD_FORCE (named by --force); NULL otherwise */
	unsigned char *td_targets;
	int rollout_stopped;			/* apply --max-fail stopped the waves */
	int has_limit;				/* --limit given (nodes' limited say which) */
	/* apply --accept-device: NODE:PATH words (nsident.h), checked; the
	 * command's, NULL when none */
	char *const *accept_device;
	size_t n_accept_device;
	/* DH-HMAC-CHAP secrets the requests carry (secrets.h); NULL when no
	 * target has dhchap or the command sends no request. Owned. */
	struct ln_secrets *secrets;
	/* notes not yet taken by the command (notes.h), oldest first;
	 * under log_lock */
	struct ln_notes notes;
};

/* Prepare a run for spec. accept: node names whose changed host key the
 * operator accepted; limit: node names to change (NULL: all). Unknown
 * names are a usage error (-EINVAL, message in err). On failure r holds
 * nothing; ln_run_release() on it is still harmless. */
int ln_run_init(struct ln_run *r, const struct ln_spec *spec, unsigned parallel,
		char *const *accept, size_t n_accept, char *const *limit, size_t n_limit,
		const char *command, struct ln_buf *err);
void ln_run_release(struct ln_run *r);

/* Append one timestamped line to the run log (thread-safe). */
void ln_run_log(struct ln_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The SSH options the controller connects to node nr with, from the
 * spec's ssh section and the node's own keys; jump (jump_len bytes,
 * caller's) holds the jump host text o->jump points to. */
void ln_run_ssh_opts(const struct ln_run *r, const struct ln_node_run *nr, struct ln_ssh_opts *o,
		     char *jump, size_t jump_len);
/* Make sure a reachable node has a session (reopen if it was closed). */
int ln_run_session(struct ln_run *r, struct ln_node_run *nr, struct ln_buf *err);
/* Session `lane` of a reachable node into *s: lane 0 is nr->s
 * (ln_run_session), lane k in 1..nr->nlanes a connection of its own,
 * opened on first use with the same options and host-key check. One
 * thread at a time per (node, lane); -EINVAL for a lane the node has not. */
int ln_run_lane(struct ln_run *r, struct ln_node_run *nr, unsigned lane, struct ln_session **s,
		struct ln_buf *err);
/* Close sessions between phases when the budget says so. */
void ln_run_phase_done(struct ln_run *r);

/* Mark node nr as not OK: state st, the negative code behind it, and the
 * reason why (with " (phase NAME)" added when code is a timeout or a lost
 * connection and phase is not NULL); line receives the phase's progress line for the node. */
void ln_run_node_failed(struct ln_node_run *nr, enum ln_node_state st, int code,
			const char *why, const char *phase, struct ln_buf *line);

/* code merged with every node's state (ln_node_state_exit()) and with an
 * interrupt: the exit code of a command over the run. */
int ln_run_exit(const struct ln_run *r, int code);

/* Exit code for a node state (0 for OK). */
int ln_node_state_exit(enum ln_node_state st);
/* What a failed connect, push or agent call (a negative code) makes of a
 * node, the same in every phase: a refused host key or sign-in is
 * "refused", no answer or no answer in time "unreachable" (both exit 4,
 * docs/exit-codes.md), anything else "failed" (exit 5). */
enum ln_node_state ln_node_state_of(int code);
const char *ln_node_state_name(enum ln_node_state st);

#endif
