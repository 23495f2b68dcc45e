/* SPDX-License-Identifier: MIT */
/*
 * Agent push and agent calls. The controller carries one llmnet-agent
 * binary; before a node's first agent call in a run it asks the node's agent
 * for its `version` (which reports the agent's SHA-256 and protocol) and
 * uploads its own copy only when the node has none, another build, or an
 * older protocol. Every call is a request on the node's one agent
 * session. The upload goes over SFTP to a staging file and is then
 * moved, by rename, into the root-only directory /var/lib/llmnet/bin.
 *
 * Every remote path is relative to the node's agent root: the login
 * environment's LLMNET_AGENT_ROOT (set per node by the loopback test
 * cluster's sshd), "/" on a real node. The shell that sshd starts expands
 * it, so the controller never needs to know a node's root in advance.
 */
#ifndef LN_PUSH_H
#define LN_PUSH_H

#include <json-c/json.h>

#include "common/buf.h"
#include "common/proto.h"
#include "orchestrator/transport/ssh.h"


/* The agent binary this controller carries. */
struct ln_agent_image {
	char *path;
	struct ln_buf data;
	char sha256[65];
};

/*
 * Find and load the local agent: $LLMNET_AGENT, else llmnet-agent next to
 * the running llmnet, else ../lib/llmnet/llmnet-agent from it.
 */
int ln_agent_image_load(struct ln_agent_image *img, struct ln_buf *err);
void ln_agent_image_release(struct ln_agent_image *img);

/* SHA-256 of data as 64 lowercase hex digits plus NUL. */
void ln_sha256_hex(const void *data, size_t len, char out[65]);

/*
 * Make sure the node runs img: one `version` request on the node's agent
 * session when it already does; otherwise the session is ended, img
 * uploaded, renamed into place and sealed, and a new session's `version`
 * confirms it. *pushed is set to 1 when an upload happened.
 */
int ln_agent_ensure(struct ln_session *s, const struct ln_agent_image *img, int *pushed,
		    struct ln_buf *err);

/*
 * One agent request on the node's agent session: the session (one
 * `llmnet-agent session` process per node, held by s for the whole run)
 * is started on first use. args is the verb and its arguments, carried
 * as JSON strings (no shell sees them); in, the plan/apply request, may
 * be NULL. timeout_ms <= 0 is the session's step timeout; when it passes
 * the agent is signalled and its session closed (-LN_ETIMEOUT), so no
 * agent outlives a timed-out request. Every request carries budget_ms,
 * ln_agent_budget_ms() of that bound, which the agent measures from
 * reading the request. The answer must be one JSON object with
 * "protocol"; an "error" answer becomes -LN_EREQUEST, -LN_ELOCKED,
 * -LN_ETIMEOUT or -LN_EPROTO with its message. *exit_status gets the
 * agent's exit code for the request (-1 when none came back).
 */
int ln_agent_call(struct ln_session *s, const char *const *args, struct json_object *in,
		  int timeout_ms, struct json_object **answer, int *exit_status,
		  struct ln_buf *err);

/*
 * The time budget (milliseconds) an agent request gets for a step bounded
 * by step_ms: the step less a margin for the transfer and the agent's
 * start (a fifth, at least 250 ms and at most 5 s), so the agent stops
 * before the controller gives up on it. Never below 1.
 */
int ln_agent_budget_ms(int step_ms);

/* Build the shell command line that runs the agent with args (safe
 * words only): the session's command, or a one-shot verb for debugging. */
int ln_agent_command(int sudo, const char *const *args, struct ln_buf *cmd);

#endif
