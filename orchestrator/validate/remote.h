/* SPDX-License-Identifier: MIT */
/*
 * The validation runner's probe operations over a controller run: facts
 * read once per node, probes run through the agent's bounded `run` verb,
 * files installed and read back over the node's SSH session. The runner
 * (stages.c) sees only the ln_probe_ops table; the unit tests give it a
 * fake one instead.
 */
#ifndef LN_VALIDATE_REMOTE_H
#define LN_VALIDATE_REMOTE_H

#include "orchestrator/validate/stages.h"

/* The ops table for ln_validate_run(); its ctx is the struct ln_run whose
 * facts are gathered (sessions are reopened as needed). */
extern const struct ln_probe_ops ln_validate_remote_ops;

/*
 * Find llmnet's probe file name: $LLMNET_PROBES/name, else probes/name
 * next to the running binary (the build tree), else
 * ../lib/llmnet/probes/name from it (an install). Returns a malloc'd
 * path the caller frees, or NULL when none is readable.
 */
char *ln_validate_find_probe(const char *name);

#endif
