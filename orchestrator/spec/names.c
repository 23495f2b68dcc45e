/* SPDX-License-Identifier: MIT */
/*
 * The names of the spec's enums, defined once: the grammar's key tables
 * accept them, the schema lists them, and the check pass, the JSON model
 * and messages print them. A leaf: it calls nothing of the module.
 */
#include "orchestrator/spec/impl.h"

/* Indexed by enum ln_stage. */
const char *const spec_stage_names[] = { "devices", "rping", "bandwidth", "latency",
					  "io",      "mpi",   "nccl",      "access", NULL };
/* mkfs.<fs> is run and the mount made by the agent, which takes only
 * these (agents/agent/core/request_init.c): lint refuses what it would refuse. */
const char *const spec_fs_names[] = { "ext4", "xfs", NULL };
/* Indexed by enum ln_link_layer. */
const char *const spec_link_layer_names[] = { "any", "infiniband", "ethernet", NULL };

/* Indexed by enum ln_nccl_op: the grammar's names, the JSON model's and
 * the NCCL probe's --op. */
const char *const spec_nccl_op_names[] = { "all_reduce", "all_gather", "reduce_scatter",
					   "broadcast", "reduce", "alltoall", "sendrecv",
					   NULL };

/* Indexed by enum ln_pci_distance: nvidia-smi topo -m's words. */
const char *const spec_pci_distance_names[] = { "PIX", "PXB", "PHB", "NODE", "SYS", NULL };

const char *ln_pci_distance_name(enum ln_pci_distance d)
{
	return d <= LN_DIST_SYS ? spec_pci_distance_names[d] : "?";
}

const char *ln_nccl_op_name(enum ln_nccl_op op)
{
	return op <= LN_NCCL_SENDRECV ? spec_nccl_op_names[op] : "?";
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

/* "none", "required": a target's tls. The DH-HMAC-CHAP hash and group
 * names are the agent's too: common/dhchap.h, indexed by the enums. */
const char *const ln_tls_names[] = { "none", "required", NULL };

_Static_assert(LN_DHCHAP_SHA512 + 1 == LN_DHCHAP_HASHES,
	       "ln_dhchap_hash_names (common/dhchap.c) follows enum ln_dhchap_hash");
_Static_assert(LN_DHGROUP_NULL + 1 == LN_DHCHAP_GROUPS,
	       "ln_dhchap_group_names (common/dhchap.c) follows enum ln_dhchap_group");
