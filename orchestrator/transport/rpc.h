/* SPDX-License-Identifier: MIT */
/*
 * Agent calls: every request to a node's agent goes over the node's one
 * agent session (transport/stream.c), as one frame out and one frame
 * back, and its answer is checked to be the protocol's JSON before anyone
 * reads it.
 *
 * Every remote path is relative to the node's agent root: the login
 * environment's LLMNET_AGENT_ROOT (set per node by the loopback test
 * cluster's sshd), "/" on a real node. The shell that sshd starts expands
 * it, so the controller never needs to know a node's root in advance.
 */
#ifndef LN_RPC_H
#define LN_RPC_H

#include <json-c/json.h>

#include "common/buf.h"
#include "common/proto.h"
#include "orchestrator/transport/ssh.h"

/* Where the agent lives, relative to the node's root; quoted for the shell. */
#define LN_AGENT_DIR_EXPR "\"${LLMNET_AGENT_ROOT%/}" LN_PROTO_REMOTE_DIR "\""
#define LN_AGENT_PATH_EXPR \
	"\"${LLMNET_AGENT_ROOT%/}" LN_PROTO_REMOTE_DIR "/" LN_PROTO_AGENT_NAME "\""
/* The same, for use inside printf formats. */
#define LN_AGENT_DIR_FMT "\"${LLMNET_AGENT_ROOT%%/}" LN_PROTO_REMOTE_DIR "\""
#define LN_AGENT_PATH_FMT \
	"\"${LLMNET_AGENT_ROOT%%/}" LN_PROTO_REMOTE_DIR "/" LN_PROTO_AGENT_NAME "\""

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
