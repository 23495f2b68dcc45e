/* SPDX-License-Identifier: MIT */
/*
 * The agent's answer (answer.c): one JSON object per request, on stdout for
 * a one-shot verb or into the session's capture buffer while a session
 * request runs (session.c sets it). Always valid JSON, whatever bytes the
 * request held: a byte that is not well-formed UTF-8 becomes "\ufffd".
 */
#ifndef LN_AGENT_ANSWER_H
#define LN_AGENT_ANSWER_H

#include <json-c/json.h>

struct ln_buf;

/* Emit an answer on stdout, or into the capture buffer while one is set;
 * 0, or negative when it could not be written. */
int ln_agent_emit(struct json_object *obj);
/* Session: answers go into b (NULL: back to stdout); b stays the caller's. */
void ln_agent_capture(struct ln_buf *b);
/* Emit an error answer {"error": {code, message}}, log message as an
 * error, and return exit_code. */
int ln_agent_fail(const char *code, const char *message, int exit_code);

#endif
