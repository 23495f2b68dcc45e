/* SPDX-License-Identifier: MIT */
/*
 * facts.topology (topology.c, peermem.c): where each GPU and RDMA device
 * sits on PCIe, what its IOMMU does, and which GPUDirect RDMA peer-memory
 * path the node has, read from sysfs and procfs under the root (the shape
 * is docs/agent-protocol.md's, "topology"). The controller computes
 * distances and judges; the agent only reports.
 */
#ifndef LN_AGENT_TOPOLOGY_H
#define LN_AGENT_TOPOLOGY_H

#include <json-c/json.h>

struct ln_agent;

/* The most GPUs, and the most RDMA devices, one answer lists: a node with
 * more (SR-IOV functions) gets the first ones, in bus or name order, and
 * a warning. */
#define LN_TOPO_MAX_DEVICES 256

/* The `topology` object (never NULL); what cannot be read is null in it,
 * with a line appended to warnings (a JSON array). */
struct json_object *ln_topology_facts(const struct ln_agent *a, struct json_object *warnings);

/* Its `peer_memory` object (peermem.c): peer-memory modules, and whether
 * dma-buf is usable (kernel, GPU driver, rdma-core), with why not. */
struct json_object *ln_peermem_facts(const struct ln_agent *a);

#endif
