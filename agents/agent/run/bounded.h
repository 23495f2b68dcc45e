/* SPDX-License-Identifier: MIT */
/*
 * Bounded execution (bounded.c): a child in its own process group under a
 * deadline, never past the request's time budget, its output captured up
 * to a cap, and whatever it leaves behind killed after it. The `run` verb
 * runs its probes with it, the kernel ops modprobe and mkfs.
 */
#ifndef LN_AGENT_BOUNDED_H
#define LN_AGENT_BOUNDED_H

#include <stddef.h>

#include "common/buf.h"

/* What became of a child. */
struct ln_exec_result {
	int exited;		/* 1: exit_status is valid */
	int exit_status;
	int signal;		/* when killed by a signal */
	int timed_out;
	long duration_ms;
	struct ln_buf output;
	size_t output_bytes;	/* all bytes the child wrote */
	int truncated;
	int leftovers;		/* processes it left behind, killed after it */
};

/* Run argv (argv[0] an absolute path) with a bound of timeout_s seconds,
 * output (stdout and stderr, in order) captured up to max_output bytes,
 * into res (release it with ln_exec_result_release). 0 once it ran, or
 * negative with err when it could not be started. */
int ln_exec_bounded(const char *const argv[], unsigned timeout_s, size_t max_output,
		   struct ln_exec_result *res, struct ln_buf *err);
/* The same, but runs the program open at fd (fexecve: what was checked is
 * what runs); argv[0] is only its name. fd < 0: argv[0]'s path. */
int ln_exec_bounded_fd(int fd, const char *const argv[], unsigned timeout_s, size_t max_output,
		       struct ln_exec_result *res, struct ln_buf *err);
/* The same with envp as the child's whole environment (ln_exec_bounded_fd
 * passes the agent's own): the GPU facts program gets none, so no loader
 * variable reaches the library it opens. */
int ln_exec_bounded_env(int fd, const char *const argv[], char *const envp[], unsigned timeout_s,
			size_t max_output, struct ln_exec_result *res, struct ln_buf *err);
/* The same bound for a function: fn(ctx, out) runs in a forked child in
 * its own process group, writing what it reports to the descriptor out
 * (captured as output), and its return value is the exit status. For a
 * kernel call that may block (a connect), so that the agent's request
 * never waits past the bound; name is for messages. */
int ln_exec_bounded_call(const char *name, int (*fn)(void *ctx, int out), void *ctx,
			 unsigned timeout_s, size_t max_output, struct ln_exec_result *res,
			 struct ln_buf *err);
void ln_exec_result_release(struct ln_exec_result *res);

#endif
