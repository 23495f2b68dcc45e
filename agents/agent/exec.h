/* SPDX-License-Identifier: MIT */
/* The `run` verb: allow-listed probes under a bound (see run.c). */
#ifndef LN_AGENT_RUN_H
#define LN_AGENT_RUN_H

struct ln_agent;

/* NULL-terminated list of allow-listed probe names. */
const char *const *ln_run_probes(void);
/* 1 when an argument may be passed to a probe. */
int ln_run_check_arg(const char *s);
/* `run --timeout S [--max-output N] -- PROBE ARGS...`; returns the exit code. */
int ln_run_verb(struct ln_agent *a, int argc, char **argv);

#endif
