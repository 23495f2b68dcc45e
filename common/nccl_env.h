/* SPDX-License-Identifier: MIT */
/*
 * The one NCCL environment policy, for lint and the agent alike: which
 * NCCL_* variables the NCCL probe may set on its ranks (as root, on every
 * node) and what their values may hold. llmnet sets NCCL_IB_HCA (each
 * node's declared RDMA ports), NCCL_IB_GID_INDEX (when every port agrees)
 * and NCCL_SOCKET_IFNAME (the stage's socket_ifname) itself; a spec's
 * nccl.env may add only the names on the allow-list below, none of which
 * makes NCCL write or read a file or load code. docs/spec.md lists them.
 */
#ifndef LN_NCCL_ENV_H
#define LN_NCCL_ENV_H

#include <stddef.h>

#include "common/buf.h"

#define LN_NCCL_ENV_MAX 32	/* nccl.env entries */

/* 0 when name may be set by nccl.env; -1 with the reason appended to why
 * ("NCCL variable 'NAME' ..."). */
int ln_nccl_env_check(const char *name, struct ln_buf *why);

/* 1 when v may be a value of an nccl.env variable: 1-127 of
 * [A-Za-z0-9_.,:^=+-]. */
int ln_nccl_value_ok(const char *v);

/* 1 when v may be NCCL_SOCKET_IFNAME: 1-255 of [A-Za-z0-9_.,:^=-] (NCCL's
 * own syntax: prefixes, "^" excludes, "=" matches exactly). */
int ln_nccl_ifname_ok(const char *v);

/* 1 when v is a list of RDMA ports, "DEVICE:PORT[,DEVICE:PORT...]" (a
 * device 1-64 of [A-Za-z0-9_.-] not starting with '-', a port of 1-3
 * digits not starting with 0),
 * or empty when empty_ok. */
int ln_nccl_hca_ok(const char *v, int empty_ok);

/* nccl-tests' program for collective op (the order of the spec's enum
 * ln_nccl_op: all_reduce, all_gather, reduce_scatter, broadcast, reduce,
 * alltoall, sendrecv): "all_reduce_perf"; NULL past the end. */
const char *ln_nccl_tests_program(unsigned op);
/* 1 when name is one of those programs' names. */
int ln_nccl_tests_named(const char *name);

/* 1 when NAME=VALUE (v) is an nccl.env name with a plain value. */
int ln_nccl_env_pair_ok(const char *v);

/* 1 when NAME=VALUE (v) may reach nccl-tests' ranks by mpirun -x: an
 * nccl.env name with its value, or one llmnet sets itself with its own
 * type (NCCL_IB_HCA "=DEV:PORT,...", NCCL_IB_GID_INDEX digits,
 * NCCL_SOCKET_IFNAME interface names). */
int ln_nccl_x_ok(const char *v);

/* The allow-list, entry i; NULL past the end. */
const char *ln_nccl_env_allowed(size_t i);

#endif
