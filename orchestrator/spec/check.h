/* SPDX-License-Identifier: MIT */
/*
 * Private to the check pass (spec_check, check.c): the state its rules
 * share, and the rules file by file, one file per concept: nodes, targets,
 * initiators, references by name (check_refs.c), DH-HMAC-CHAP and TLS
 * (check_security.c), the mpi.mca and nccl.env mappings (settings.c),
 * paths on a node (check_paths.c), stages (check_stages.c), and rails and
 * the pairwise stages (check_pairs.c). check.c is the driver that runs
 * them in order; none of them calls back into it. Every rule reports
 * through spec_diag and returns 0, or a negative errno when it could not
 * run (out of memory).
 */
#ifndef LN_SPEC_CHECK_H
#define LN_SPEC_CHECK_H

#include "orchestrator/spec/impl.h"

/* What the passes hand on: the (target, node) host pairs, explicit
 * 'hosts' entries first (the targets rule), then each initiator of a
 * target without 'hosts' (the initiators rule), laid out as each
 * target's hosts[] by spec_layout_hosts. */
struct spec_check_ctx {
	struct ln_spec *spec;
	struct ln_spec_store *st;
	uint32_t *pair_t, *pair_n;
	size_t n_pairs, alloc_pairs;
	struct ln_mark unknown_init_mark;	/* the last initiator range reported unknown */
};

/* ---- nodes, targets, initiators (check_nodes.c, check_targets.c,
 * check_initiators.c), in this order ------------------------------------ */

/* A node's defaults (SSH port and user, slots), names, SSH endpoints, and
 * RDMA ports and ips each once; fills the node name index. */
int spec_check_nodes(struct spec_check_ctx *x);
/* A target's NQN once, its node, address default, namespaces (nsids once
 * in a target, a backing once on a node) and 'hosts' (as pairs); fills
 * the NQN index. */
int spec_check_targets(struct spec_check_ctx *x);
/* An initiator's node and target, one initiator per (node, target), its
 * discovery and mount, and its node among its target's hosts (or, when
 * the target names none, a pair of its own). */
int spec_check_initiators(struct spec_check_ctx *x);

/* ---- references by name (check_refs.c) -------------------------------- */

/* The node name and NQN indexes (ln_spec_node_index and
 * ln_spec_target_index, kept past the load), sized for the spec; the
 * nodes and targets rules insert into them. 0 or -ENOMEM. */
int spec_node_index_init(struct ln_spec *spec);
int spec_target_index_init(struct ln_spec *spec);
/* Target i's node index: resolved (t->node set) or reported; -1 if unknown. */
long spec_target_node(struct spec_check_ctx *x, size_t i);
/* Target ti's nh 'hosts' entries, h: each name (or range) as a pair, an
 * unknown or repeated one reported; stamp[node] == ti + 1 marks a node
 * named already. 0 or -ENOMEM. */
int spec_resolve_hosts(struct spec_check_ctx *x, size_t ti, const struct host_raw *h, size_t nh,
		       uint32_t *stamp);
/* Initiator i is on an unknown node: one message for the range it came
 * from, at its first one. */
void spec_report_unknown_init_node(struct spec_check_ctx *x, size_t i);
/* One more (target t, node n) host pair. 0 or -ENOMEM. */
int spec_pair_add(struct spec_check_ctx *x, uint32_t t, uint32_t n);
/* Every target's hosts[] in one array (st->host_idx). 0 or -ENOMEM. */
int spec_layout_hosts(struct spec_check_ctx *x);

/* The most host references all targets' 'hosts' lists may name, ranges
 * expanded (docs/spec.md), like SPEC_MAX_PAIRS. */
#define SPEC_MAX_HOST_REFS (1u << 20)
/* A node name close to an unknown one, or NULL; NULL once the messages
 * are full. */
const char *spec_near_node(const struct ln_spec *spec, const char *name);
/* Past SPEC_MAX_HOST_REFS: one message at the 'hosts' entry that crosses
 * it, with the total, and 1 (no list is to be expanded); else 0. */
int spec_check_host_refs(struct ln_spec *spec);
/* An address as compared for duplicates: a numeric one in inet_ntop's
 * spelling (fd00:0::1 is fd00::1), a host name in lower case; in buf (n
 * bytes, SPEC_ADDR_CANON will do), or addr itself when it does not fit. */
#define SPEC_ADDR_CANON 256
const char *spec_addr_canon(const char *addr, char *buf, size_t n);
/* a and b are one address (both non-NULL). */
int spec_addr_eq(const char *a, const char *b);

/* ---- DH-HMAC-CHAP and TLS (check_security.c) -------------------------- */

/* A target's dhchap: with its hosts by name, and one setting per host
 * entry of a node (nvmet keeps one). Needs the laid-out host pairs. */
int spec_check_dhchap(struct spec_check_ctx *x);
/* A target's tls: tcp only, with dhchap (its key_dir holds the PSKs),
 * and the same on every target of one port. */
int spec_check_tls(struct ln_spec *spec);

/* ---- settings (settings.c) -------------------------------------------- */

/* mpi.mca and nccl.env each name a key once; nccl.env within
 * LN_NCCL_ENV_MAX. 0 or -ENOMEM. */
int spec_check_settings(struct ln_spec *spec);

/* ---- slurm (check_slurm.c) -------------------------------------------- */

/* slurm.node a declared node, and each node's Slurm name (set to its
 * name where not given) once. 0 or -ENOMEM. */
int spec_check_slurm(struct spec_check_ctx *x);

/* ---- paths on a node (check_paths.c) ---------------------------------- */

/* The targets whose namespace initiators mount: the first two mounting
 * initiators of each, and how many mount it. */
struct spec_mounters {
	uint32_t *first, *second, *count;
	size_t n_targets;
};
int spec_mounters_init(struct spec_mounters *m, size_t n_targets);
/* Initiator ii (resolved, not a duplicate) mounts target ti. */
void spec_mounters_add(struct spec_mounters *m, size_t ti, size_t ii);
/* A target mounted by more than one node is an error, one per target. */
void spec_mounters_report(struct spec_mounters *m, struct ln_spec *spec);
void spec_mounters_release(struct spec_mounters *m);
/* Initiator i (resolved) mounts: its target has one namespace. */
void spec_check_mount_ns(struct ln_spec *spec, size_t i);
/* The hostfile, backing files and mount points kept apart: none equal
 * to, inside or above another where both are on one node. */
int spec_check_paths(struct ln_spec *spec);

/* ---- stages (check_stages.c) ------------------------------------------ */

/* The stages' run order (validation.order), and what each needs of the
 * spec: RDMA nodes, an initiator, slots, GPUs. */
void spec_check_validation(struct ln_spec *spec);
/* Rules between a stage and the MPI, storage and port settings it runs
 * with. */
void spec_check_stage_rules(struct ln_spec *spec);

/* ---- rails and the pairwise stages (check_pairs.c) -------------------- */

/* A port alone on its rail, which pairwise stage st could never test. */
void spec_check_lone_rails(struct ln_spec *spec, enum ln_stage st);
/* Every port names its rail or none does, a node has a rail once, and
 * unnamed rails need as many ports on every node a pairwise stage pairs. */
void spec_check_rails(struct ln_spec *spec);
/* The most port pairs one pairwise stage may test with 'pairs: all'
 * (docs/spec.md): 4,096 nodes on one rail are 8.4 million, whose dry run
 * took 640 MB and 10 s. */
#define SPEC_MAX_PAIRS (1u << 20)
/* The pairwise stages: each paired RDMA port has an 'ip'; 'pairs: all'
 * within SPEC_MAX_PAIRS. */
int spec_check_pairs(struct ln_spec *spec);

#endif
