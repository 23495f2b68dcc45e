/* SPDX-License-Identifier: MIT */
/*
 * The names of the spec's enums, defined once: the grammar's key tables
 * accept them, the schema lists them, and the check pass, the JSON model
 * and messages print them. A leaf: it calls nothing of the module.
 */
#include "orchestrator/spec/impl.h"

/* Indexed by enum ln_stage. */
const char *const spec_stage_names[] = { "devices", "rping", "bandwidth", "latency",
					  "io",      "mpi",   "nccl",      NULL };
/* mkfs.<fs> is run and the mount made by the agent, which takes only
 * these (agents/agent/core/request.c): lint refuses what it would refuse. */
const char *const spec_fs_names[] = { "ext4", "xfs", NULL };
/* Indexed by enum ln_link_layer. */
const char *const spec_link_layer_names[] = { "any", "infiniband", "ethernet", NULL };

/* Indexed by enum ln_nccl_op: the grammar's names, the JSON model's and
 * the NCCL probe's --op. */
const char *const spec_nccl_op_names[] = { "all_reduce", "all_gather", "reduce_scatter",
					   "broadcast", "reduce", NULL };

const char *ln_nccl_op_name(enum ln_nccl_op op)
{
	return op <= LN_NCCL_REDUCE ? spec_nccl_op_names[op] : "?";
}

const char *ln_stage_name(enum ln_stage s)
{
	return s < LN_STAGE_COUNT ? spec_stage_names[s] : "?";
}

const char *ln_transport_name(enum ln_transport t)
{
	return t == LN_TRANSPORT_RDMA ? "rdma" : "tcp";
}

const char *ln_link_layer_name(enum ln_link_layer l)
{
	return spec_link_layer_names[l <= LN_LINK_ETHERNET ? l : 0];
}

/* Indexed by enum ln_dhchap_hash: the spec's names; the agent writes
 * "hmac(NAME)" to the host entry's dhchap_hash. */
const char *const ln_tls_names[] = { "none", "required", NULL };
const char *const ln_dhchap_hash_names[] = { "sha256", "sha384", "sha512", NULL };
/* Indexed by enum ln_dhchap_group; "null" (no DH exchange) is the
 * kernel's own name for it. */
const char *const ln_dhchap_group_names[] = { "ffdhe2048", "ffdhe3072", "ffdhe4096",
					      "ffdhe6144", "ffdhe8192", "null", NULL };
