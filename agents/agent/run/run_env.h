/* SPDX-License-Identifier: MIT */
/* The run verb's typed environment (run --env), for nccl-tests only. */
#ifndef LN_AGENT_RUN_ENV_H
#define LN_AGENT_RUN_ENV_H

struct ln_agent;
struct ln_buf;

/* Check env (n NAME=VALUE strings) for program (the request's pargv[0],
 * already allowed) and build *envp, the program's whole environment:
 * PATH and these. Only nccl-tests' programs take one; each entry is an
 * NCCL variable mpirun -x would pass (common/nccl_env.h) or
 * LD_LIBRARY_PATH, every directory of it judged by
 * ln_exec_tests_lib_dir. 0, or -LN_EREQUEST with why in err. */
int ln_run_env_build(const struct ln_agent *a, const char *program, char *const *env, int n,
		     char ***envp, struct ln_buf *err);

void ln_run_env_free(char **envp);

#endif
