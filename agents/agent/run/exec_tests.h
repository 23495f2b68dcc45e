/* SPDX-License-Identifier: MIT */
/* nccl-tests' programs for the run verb: named, then opened (exec_tests.c). */
#ifndef LN_AGENT_EXEC_TESTS_H
#define LN_AGENT_EXEC_TESTS_H

struct ln_agent;
struct ln_buf;

/* 1 when path names one of nccl-tests' programs llmnet runs: an absolute
 * path whose last name is LN_NCCL_TESTS_ALL_REDUCE (common/proto.h). */
int ln_exec_tests_named(const char *path);

/* Open path (checked by the run verb: absolute, no empty, "." or ".."
 * part) to run it, under the agent's root: every directory from the root
 * down and the file itself owned by root, writable by no one else, none a
 * symbolic link, the file a regular, executable one. The fd to run
 * (fexecve), or -LN_EMISSING when it or a directory above it is absent,
 * -LN_EREQUEST when it may not run; both with the path (and the owner's
 * uid) in err. */
int ln_exec_tests_open(const struct ln_agent *a, const char *path, struct ln_buf *err);

/* A directory nccl-tests loads libraries from (nccl.nccl_lib, cuda_lib,
 * given as LD_LIBRARY_PATH): judged as tests_dir is and walked as
 * ln_exec_tests_open walks, every part a root-owned directory no one else
 * may write to and none a link. 0, or negative with why in err. */
int ln_exec_tests_lib_dir(const struct ln_agent *a, const char *dir, struct ln_buf *err);

#endif
