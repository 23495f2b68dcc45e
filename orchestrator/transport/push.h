/* SPDX-License-Identifier: MIT */
/*
 * Agent push. The controller carries one llmnet-agent binary; before a
 * node's first agent call in a run it asks the node's agent for its
 * `version` (which reports the agent's SHA-256 and protocol) and uploads
 * its own copy only when the node has none, another build, or an older
 * protocol. The upload goes as an exec channel's stdin to a staging file
 * in the login's home (ln_ssh_put) and is then moved, by rename, into the
 * root-only directory /var/lib/llmnet/bin.
 * The agent calls themselves are rpc.h's.
 */
#ifndef LN_PUSH_H
#define LN_PUSH_H

#include <json-c/json.h>

#include "common/buf.h"
#include "common/proto.h"
#include "orchestrator/transport/rpc.h"
#include "orchestrator/transport/ssh.h"

/* The agent binary this controller carries, and the GPU facts program
 * built with it (gpu_facts.len 0: none found; nodes then report their
 * GPUs from /proc). */
struct ln_agent_image {
	char *path;
	struct ln_buf data;
	char sha256[65];
	struct ln_buf gpu_facts;
	char gpu_facts_sha256[65];
};

/*
 * Find and load the local agent: $LLMNET_AGENT, else llmnet-agent next to
 * the running llmnet, else ../lib/llmnet/llmnet-agent from it; and the GPU
 * facts program: $LLMNET_PROBES/gpu_facts, else probes/gpu_facts beside
 * the agent found (the build folder's, or LIBEXECDIR's once installed).
 */
int ln_agent_image_load(struct ln_agent_image *img, struct ln_buf *err);
void ln_agent_image_release(struct ln_agent_image *img);

/* SHA-256 of data as 64 lowercase hex digits plus NUL. */
void ln_sha256_hex(const void *data, size_t len, char out[65]);

/*
 * Make sure the node runs img: one `version` request on the node's agent
 * session when it already does; otherwise the session is ended, img
 * uploaded, renamed into place and sealed, and a new session's `version`
 * confirms it. *pushed is set to 1 when an upload happened, and why (the
 * caller's, may be NULL) then says what made it push; the library never
 * prints, so the caller says it.
 */
int ln_agent_ensure(struct ln_session *s, const struct ln_agent_image *img, int *pushed,
		    struct ln_buf *why_pushed, struct ln_buf *err);

/*
 * Install the GPU facts program img carries on the node when its facts
 * (the filtered answer of `facts`) show GPUs and say the program is absent
 * or another build (gpus.program), as the agent is installed: staged by
 * ln_ssh_put, copied into the root-only directory under a temporary name,
 * renamed. *pushed is 1 when it was; the caller then reads the facts
 * again. Nothing to do (no program carried, no GPU, already installed): 0.
 */
int ln_gpu_facts_ensure(struct ln_session *s, const struct ln_agent_image *img,
			struct json_object *facts, int *pushed, struct ln_buf *err);

#endif
