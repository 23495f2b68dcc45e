/* SPDX-License-Identifier: MIT */
/*
 * The `session` verb: one agent process serves a node's whole run. The
 * controller sends requests as frames (common/frame.h) on stdin, one at a
 * time, and gets one answer frame back for each; the process ends when the
 * input ends, and a request in flight stops writing as soon as the peer is
 * gone (ln_agent_stopping). docs/agent-protocol.md, "Session".
 */
#ifndef LN_AGENT_SESSION_H
#define LN_AGENT_SESSION_H

struct ln_agent;

/* Run one request's verb (argv[0]) with its arguments; returns the agent
 * exit code. The verb table lives with main(), which passes it in. */
typedef int (*ln_session_verb_fn)(struct ln_agent *a, int argc, char **argv);

/* Serve requests until the input ends (exit code 0), a frame is malformed
 * (an error frame, then LN_AGENT_EXIT_REQUEST), or the peer is gone.
 * Installs the failpoint's abort hook (ln_agent_on_abort), which sends the
 * answer captured so far when a request's budget ends the process. */
int ln_session_serve(struct ln_agent *a, ln_session_verb_fn run);

#endif
