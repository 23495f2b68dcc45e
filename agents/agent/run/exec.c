// SPDX-License-Identifier: MIT
/*
 * The `run` verb: `run --timeout S [--max-output N] [--sha256 HEX]
 * [--cluster NAME] [--env NAME=VALUE]... -- PROBE ARGS...` (NAME: the
 * requesting cluster, whose own objects alone the io probe may write to,
 * io_target.c; --env: nccl-tests' environment when no mpirun starts it,
 * run_env.c). The program
 * and its arguments pass the allow-list (allow.c: llmnet's own probes by their exact installed path and SHA-256,
 * system tools by one absolute path each, never $PATH, every argument typed
 * by its program's option table, args.c), then run under the bound
 * (bounded.c); the answer carries the output and what became of it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/answer.h"
#include "agents/agent/core/valid.h"
#include "agents/agent/run/allow.h"
#include "agents/agent/run/args.h"
#include "agents/agent/run/bounded.h"
#include "agents/agent/run/exec.h"
#include "agents/agent/run/run_env.h"
#include "common/error.h"
#include "common/json.h"

/* The run verb's answer: the request's argv, the path that ran, and what
 * became of it. */
static struct json_object *answer(int pargc, char **pargv, const char *path,
				  const struct ln_exec_result *res)
{
	struct json_object *o, *av;
	int i;

	o = json_object_new_object();
	av = json_object_new_array();
	for (i = 0; i < pargc; i++)
		json_object_array_add(av, json_object_new_string(pargv[i]));
	ln_json_add_i64(o, "protocol", LN_PROTO_VERSION);
	ln_json_add_str(o, "probe", pargv[0]);
	ln_json_add_str(o, "path", path);
	ln_json_add(o, "argv", av);
	if (res->exited)
		ln_json_add_i64(o, "exit_status", res->exit_status);
	else
		ln_json_add(o, "exit_status", NULL);
	if (res->signal) {
		char sig[32];

		snprintf(sig, sizeof(sig), "SIG%s", sigabbrev_np(res->signal));
		ln_json_add_str(o, "signal", sig);
	} else {
		ln_json_add(o, "signal", NULL);
	}
	ln_json_add_bool(o, "timed_out", res->timed_out);
	ln_json_add_i64(o, "duration_ms", res->duration_ms);
	ln_json_add(o, "output", json_object_new_string_len(res->output.buf, (int)res->output.len));
	ln_json_add_i64(o, "output_bytes", (int64_t)res->output_bytes);
	ln_json_add_bool(o, "truncated", res->truncated);
	return o;
}

int ln_exec_verb(struct ln_agent *a, int argc, char **argv)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_exec_result res;
	struct json_object *o = NULL;
	struct ln_run_plan *rp = NULL;
	const char *sha256 = NULL, *cluster = NULL;
	unsigned long timeout = 0, max_output = 1u << 20;
	char **pargv = NULL, *env[LN_RUN_ENV_MAX + 1], **envp = NULL;
	int i, pargc, rc, n_env = 0;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		char *end;

		if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			errno = 0;
			timeout = strtoul(argv[++i], &end, 10);
			if (errno || *end || timeout < 1 || timeout > 3600)
				return ln_agent_fail("usage", "run: --timeout must be 1-3600 seconds",
						     LN_AGENT_EXIT_USAGE);
		} else if (!strcmp(argv[i], "--max-output") && i + 1 < argc) {
			errno = 0;
			max_output = strtoul(argv[++i], &end, 10);
			if (errno || *end || max_output < 1 || max_output > (16ul << 20))
				return ln_agent_fail("usage",
						     "run: --max-output must be 1-16777216 bytes",
						     LN_AGENT_EXIT_USAGE);
		} else if (!strcmp(argv[i], "--cluster") && i + 1 < argc) {
			cluster = argv[++i];
			if (!ln_valid_name(cluster, 64))
				return ln_agent_fail("usage", "run: --cluster must match "
						     "[A-Za-z0-9][A-Za-z0-9._-]{0,63}",
						     LN_AGENT_EXIT_USAGE);
		} else if (!strcmp(argv[i], "--env") && i + 1 < argc) {
			if (n_env >= LN_RUN_ENV_MAX)
				return ln_agent_fail("usage", "run: too many --env",
						     LN_AGENT_EXIT_USAGE);
			env[n_env++] = argv[++i];
		} else if (!strcmp(argv[i], "--sha256") && i + 1 < argc) {
			sha256 = argv[++i];
			if (strlen(sha256) != 64 || !ln_arg_all_of(sha256, "0123456789abcdef"))
				return ln_agent_fail("usage", "run: --sha256 takes 64 lowercase hex "
						     "digits", LN_AGENT_EXIT_USAGE);
		} else {
			ln_buf_addf(&err, "run: unknown option '%s'", argv[i]);
			rc = ln_agent_fail("usage", err.buf, LN_AGENT_EXIT_USAGE);
			goto out;
		}
	}
	if (!timeout || i + 1 >= argc) {
		rc = ln_agent_fail("usage",
				   "usage: llmnet-agent run --timeout S [--max-output N] "
				   "[--sha256 HEX] [--cluster NAME] [--env NAME=VALUE]... -- "
				   "PROBE ARGS...",
				   LN_AGENT_EXIT_USAGE);
		goto out;
	}
	pargc = argc - i - 1;
	pargv = argv + i + 1;
	rp = calloc(1, sizeof(*rp));
	if (!rp) {
		rc = ln_agent_fail("internal", "run: out of memory", LN_AGENT_EXIT_INTERNAL);
		goto out;
	}
	rp->fd = -1;
	rp->cluster = cluster;
	ln_buf_addstr(&err, "run: ");
	env[n_env] = NULL;
	/* the environment first: it is for nccl-tests alone */
	rc = n_env ? ln_run_env_build(a, pargv[0], env, n_env, &envp, &err) : 0;
	if (rc == 0)
		rc = ln_allow_check(a, sha256, pargc, pargv, rp, &err);
	if (rc < 0) {
		rc = ln_agent_fail(rc == -LN_EMISSING ? LN_PROTO_CODE_MISSING : "request", err.buf,
				   rc == -ENOENT || rc == -LN_EREQUEST || rc == -LN_EMISSING ?
				   LN_AGENT_EXIT_REQUEST : LN_AGENT_EXIT_INTERNAL);
		goto out;
	}
	ln_buf_reset(&err);
	rc = envp ? ln_exec_bounded_env(rp->fd, (const char *const *)rp->argv, envp,
					(unsigned)timeout, max_output, &res, &err) :
		    ln_exec_bounded_fd(rp->fd, (const char *const *)rp->argv, (unsigned)timeout,
				       max_output, &res, &err);
	if (rc < 0) {
		rc = ln_agent_fail("internal", err.buf, LN_AGENT_EXIT_INTERNAL);
		goto out;
	}
	o = answer(pargc, pargv, rp->path, &res);
	ln_exec_result_release(&res);
	rc = ln_agent_emit(o) < 0 ? LN_AGENT_EXIT_INTERNAL : LN_AGENT_EXIT_OK;
out:
	if (rp && rp->fd >= 0)
		close(rp->fd);
	free(rp);
	ln_run_env_free(envp);
	json_object_put(o);
	ln_buf_release(&err);
	return rc;
}
