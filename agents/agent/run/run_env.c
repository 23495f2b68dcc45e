// SPDX-License-Identifier: MIT
/*
 * The run verb's typed environment. nccl-tests started without mpirun
 * (the nccl stage's launcher none) gets from the agent what mpirun's -x
 * would give it: NCCL's variables, each by its own type, and
 * LD_LIBRARY_PATH for a NCCL that comes from a Python wheel. A loader
 * variable loads code as root, so each of its directories is held to the
 * rules of the program's own (exec_tests.c); LD_PRELOAD and every other
 * name is refused. Nothing else of the agent's environment passes but a
 * fixed PATH.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent/run/exec_tests.h"
#include "agents/agent/run/run_env.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/nccl_env.h"
#include "common/proto.h"

#define LIB_VAR "LD_LIBRARY_PATH="

/* Every ':'-separated directory of a LD_LIBRARY_PATH value. */
static int lib_dirs_ok(const struct ln_agent *a, const char *v, struct ln_buf *err)
{
	char *copy = strdup(v), *dir, *save = NULL;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	if (!*v || v[0] == ':' || v[strlen(v) - 1] == ':' || strstr(v, "::")) {
		ln_buf_addf(err, "LD_LIBRARY_PATH '%.200s' has an empty part (the current "
			    "directory to the loader)", v);
		r = -LN_EREQUEST;
	}
	for (dir = strtok_r(copy, ":", &save); dir && !r; dir = strtok_r(NULL, ":", &save)) {
		r = ln_exec_tests_lib_dir(a, dir, err);
		if (r < 0)
			ln_buf_addf(err, " (LD_LIBRARY_PATH)");
	}
	free(copy);
	return r;
}

int ln_run_env_build(const struct ln_agent *a, const char *program, char *const *env, int n,
		     char ***envp, struct ln_buf *err)
{
	char **out;
	int i, r;

	*envp = NULL;
	if (!ln_exec_tests_named(program)) {
		ln_buf_addf(err, "--env is for nccl-tests' programs, not '%.100s'", program);
		return -LN_EREQUEST;
	}
	for (i = 0; i < n; i++) {
		if (!strncmp(env[i], LIB_VAR, strlen(LIB_VAR))) {
			r = lib_dirs_ok(a, env[i] + strlen(LIB_VAR), err);
			if (r < 0)
				return r;
		} else if (!ln_nccl_x_ok(env[i])) {
			ln_buf_addf(err, "--env '%.100s' is not allowed (NCCL variables of "
				    "llmnet's allow-list with their own types, and LD_LIBRARY_PATH)",
				    env[i]);
			return -LN_EREQUEST;
		}
	}
	out = calloc((size_t)n + 2, sizeof(*out));
	if (!out)
		return -ENOMEM;
	out[0] = strdup("PATH=/usr/sbin:/usr/bin:/sbin:/bin");
	for (i = 0; i < n && out[i]; i++)
		out[i + 1] = strdup(env[i]);
	if (!out[n]) {
		ln_run_env_free(out);
		return -ENOMEM;
	}
	*envp = out;
	return 0;
}

void ln_run_env_free(char **envp)
{
	size_t i;

	for (i = 0; envp && envp[i]; i++)
		free(envp[i]);
	free(envp);
}
