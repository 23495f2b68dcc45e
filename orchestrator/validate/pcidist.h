/* SPDX-License-Identifier: MIT */
/*
 * PCIe distance between two devices of a node's topology facts (the
 * agent's facts.topology: docs/agent-protocol.md), in nvidia-smi's
 * classes (enum ln_pci_distance, spec.h), the bridge where their paths
 * meet, and the ports between that meeting point and either end that
 * could redirect peer-to-peer traffic (ACS). It reads the facts as given
 * and judges nothing: the devices stage (stage_placement.c) and `llmnet
 * facts --topo` (the GPU x (GPU + NIC) matrix) both use it.
 */
#ifndef LN_VALIDATE_PCIDIST_H
#define LN_VALIDATE_PCIDIST_H

#include <stddef.h>

#include <json-c/json.h>

#include "common/buf.h"
#include "orchestrator/spec/spec.h"

/* Where two devices' PCIe paths meet. */
struct ln_pci_meet {
	enum ln_pci_distance dist;
	/* PIX, PXB: the bus id of the deepest bridge both paths hold; PHB:
	 * the host bridge ("pci0000:00"); NODE, SYS: NULL (they meet past
	 * the host bridges; ha and hb name them). Borrowed from the facts. */
	const char *bridge;
	const char *ha, *hb;		/* each end's host bridge */
	int numa_a, numa_b;		/* each end's NUMA node, -1 unknown */
	int numa_unknown;		/* NODE or SYS, which cannot be told: the
					 * host bridges differ and a NUMA node is
					 * unknown (dist says NODE, the nearer) */
	size_t common;			/* bridges both paths hold */
	unsigned switches;		/* PCIe switches (or other bridges) crossed */
};

/* The distance between topology entries a and b (a GPU's or a NIC's:
 * bus_id, numa_node, host_bridge, path). -EINVAL, with the reason in
 * why, when either has no PCI place (a virtual device: bus_id null) or
 * its path cannot be read. */
int ln_pci_distance(struct json_object *a, struct json_object *b, struct ln_pci_meet *out,
		    struct ln_buf *why);

/* The ACS redirects (ReqRedir, CmpltRedir, EgressCtrl) where the pair
 * a, b meeting at m turns round: each end's downstream port just below
 * the switch they meet in, or the root port they meet at; none when they
 * meet at or past the host bridge (their traffic crosses the root
 * complex anyway). Each as "TYPE BUS (req_redir, cmplt_redir)",
 * "; "-separated, into bad. *ports counts the ports looked at, *no_acs
 * those without an ACS capability (null in the facts: nothing to
 * redirect with). Returns the number of redirecting ports. */
size_t ln_pci_acs_redirects(struct json_object *a, struct json_object *b,
			    const struct ln_pci_meet *m, struct ln_buf *bad, size_t *ports,
			    size_t *no_acs);

/* The GPU x (GPU + NIC) matrix of a node's topology facts in JSON:
 * { "columns": ["GPU0", ..., "mlx5_0", ...], "rows": [ { "gpu": "GPU0",
 * "bus_id", "numa_node" (null unknown), "cells": ["X", "PIX", ...] } ] },
 * a cell "X" on the diagonal and "?" where a distance cannot be told (a
 * virtual NIC). NULL when topology is not an object (-ENOMEM aside, the
 * caller says "no topology"). */
struct json_object *ln_pci_matrix(struct json_object *topology);

/* The matrix in nvidia-smi topo -m's layout: a header of the columns and
 * "NUMA Affinity", a row per GPU, then the legend. */
void ln_pci_matrix_text(struct json_object *matrix, struct ln_buf *out);

#endif
