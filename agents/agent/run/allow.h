/* SPDX-License-Identifier: MIT */
/*
 * The `run` verb's allow-list (allow.c): which programs a request may name,
 * from which file each runs, and the checks of its arguments (args.h) and
 * of its bytes (SHA-256 for llmnet's own probes) before it does.
 */
#ifndef LN_AGENT_ALLOW_H
#define LN_AGENT_ALLOW_H

#include <limits.h>

struct ln_agent;
struct ln_buf;

/* What will run: argv[0] the absolute path (or, for an own probe run
 * from fd, its name), and room for paths rewritten below --root. */
struct ln_run_plan {
	char *argv[258];
	char path[PATH_MAX], bin[PATH_MAX], src[PATH_MAX];
	int fd;		/* the checked file to run (fexecve), or -1 */
	const char *cluster; /* in: the requesting cluster (run --cluster), or NULL */
};

/* Check the request's program pargv[0] and its arguments (pargc of them,
 * sha256 the hash --sha256 named, or NULL) into rp, what runs: 0, or
 * negative with why in err (-LN_EREQUEST: not allowed; -LN_EMISSING or
 * -ENOENT: not there). */
int ln_allow_check(const struct ln_agent *a, const char *sha256, int pargc, char **pargv,
		   struct ln_run_plan *rp, struct ln_buf *err);

/* Open llmnet's own program at path (under the root), without following a
 * link, into *fd once its SHA-256 is sha256 (the build this agent came
 * with): 0, or negative with why in err (-LN_EREQUEST: not a regular file
 * or another build). The GPU facts program runs from it (gpu_nvml.c). */
int ln_allow_open_own(const struct ln_agent *a, const char *path, const char *sha256, int *fd,
		      struct ln_buf *err);

#endif
