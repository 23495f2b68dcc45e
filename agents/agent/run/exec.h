/* SPDX-License-Identifier: MIT */
/* The `run` verb: allow-listed programs under a bound (see exec.c). */
#ifndef LN_AGENT_EXEC_H
#define LN_AGENT_EXEC_H

struct ln_agent;

/* NULL-terminated list of what a run request may name: system tools by
 * name, llmnet's io probe by its installed path. */
const char *const *ln_exec_probes(void);
/* 1 when an argument may be passed to a probe. */
int ln_exec_check_arg(const char *s);
/* `run --timeout S [--max-output N] -- PROBE ARGS...`; returns the exit code. */
int ln_exec_verb(struct ln_agent *a, int argc, char **argv);

#endif
