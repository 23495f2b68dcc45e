/* SPDX-License-Identifier: MIT */
/* The `run` verb: allow-listed programs under a bound (exec.c). */
#ifndef LN_AGENT_EXEC_H
#define LN_AGENT_EXEC_H

struct ln_agent;

/* NULL-terminated list of what a run request may name: system tools by
 * name, llmnet's io probe by its installed path (the allow-list, allow.c). */
const char *const *ln_exec_probes(void);
/* `run --timeout S [--max-output N] -- PROBE ARGS...`; returns the exit code. */
int ln_exec_verb(struct ln_agent *a, int argc, char **argv);

#endif
