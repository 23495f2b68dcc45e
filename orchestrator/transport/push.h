/* SPDX-License-Identifier: MIT */
/*
 * Agent push and agent calls. The controller carries one llmnet-agent
 * binary; before a node's first agent call in a run it asks the node's agent
 * for its `version` (which reports the agent's SHA-256 and protocol) and
 * uploads its own copy only when the node has none, another build, or an
 * older protocol. The upload goes over SFTP to a staging file and is then
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
 * Make sure the node runs img: one `version` call when it already does,
 * otherwise upload + rename + a second `version` to confirm. *pushed is
 * set to 1 when an upload happened.
 */
int ln_agent_ensure(struct ln_session *s, const struct ln_agent_image *img, int *pushed,
		    struct ln_buf *err);

/*
 * Run one agent verb: args is the verb and its options, already safe
 * words (checked here). in may be NULL. The answer (stdout) must be one
 * JSON object with "protocol"; an "error" answer becomes -LN_EREQUEST,
 * -LN_ELOCKED or -LN_ETIMEOUT with its message. *exit_status gets the
 * agent's status. Every call carries --budget-ms, ln_agent_budget_ms() of
 * the step's bound (timeout_ms, or the session's step timeout when <= 0).
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

/* Build the shell command line that runs the agent with args. */
int ln_agent_command(int sudo, const char *const *args, struct ln_buf *cmd);

#endif
