/* SPDX-License-Identifier: MIT */
/*
 * The spec language's grammar: one key table per mapping, from the top
 * level down (nodes, storage, mpi, validation stages, ssh). The walker
 * (walker.c) reads a spec by these tables, the schema (schema.c) is
 * generated from them and docs/spec.md documents every key they hold, so
 * a new key is one row here (and a handler when it is not a plain scalar).
 * This file is data: its tables may be long.
 */
#include <stddef.h>

#include "common/util.h"
#include "orchestrator/spec/parser.h"


static const char *const host_key_policies[] = { "strict", "accept-new", NULL };
static const char *const transports[] = { "tcp", "rdma", NULL };
static const char *const formats[] = { "never", "if-blank", NULL };
static const char *const mpi_formats[] = { "openmpi", "mpich", NULL };
static const char *const pairs_names[] = { "ring", "all", NULL };
static const char *const rails_names[] = { "aligned", "all", NULL };
static const char *const bw_tools[] = { "ib_write_bw", "ib_send_bw", NULL };
static const char *const bw_memories[] = { "host", "cuda", "dmabuf", NULL };
static const char *const lat_tools[] = { "ib_write_lat", "ib_send_lat", NULL };
/* The nccl stage runs llmnet's probe, which measures any of five
 * collectives, or nccl-tests' OP_perf from nccl.tests_dir (all_reduce_perf:
 * the old name of nccl-tests at scope node; the rules that tie the keys
 * together are in stages.c). */
static const char *const nccl_tools[] = { "probe", "all_reduce_perf", "nccl-tests", NULL };
static const char *const nccl_scopes[] = { "cluster", "node", NULL };
static const char *const nccl_launchers[] = { "mpirun", "none", NULL };


/* ---- nodes -------------------------------------------------------------- */

static const struct field rdma_fields[] = {
	{ .key = "device", .type = FT_STR, .off = offsetof(struct ln_rdma_port, device),
	  .flags = F_REQUIRED | F_RANGE, .pat = SP_DEVICE,
	  .doc = "RDMA device name as in /sys/class/infiniband (mlx5_0, rxe0)" },
	{ .key = "port", .type = FT_UINT, .off = offsetof(struct ln_rdma_port, port), .min = 1,
	  .max = 255, .def = "1", .doc = "port number on the device, from 1" },
	{ .key = "ip", .type = FT_STR, .off = offsetof(struct ln_rdma_port, ip), .flags = F_RANGE,
	  .pat = SP_IP, .doc = "the port's IP address (numeric); may be a range in a node range" },
	{ .key = "gid_index", .type = FT_INT, .off = offsetof(struct ln_rdma_port, gid_index),
	  .min = 0, .max = 255, .def = "chosen from the GID table",
	  .doc = "GID table index for RoCE" },
	{ .key = "min_rate", .type = FT_RATE, .off = offsetof(struct ln_rdma_port, min_rate_bps),
	  .flags = F_THRESHOLD, .min = 1, .doc = "lowest acceptable active link rate" },
	{ .key = "link_layer", .type = FT_ENUM, .off = offsetof(struct ln_rdma_port, link_layer),
	  .names = spec_link_layer_names, .def = "any", .doc = "expected link layer" },
	{ .key = "mtu", .type = FT_UINT, .off = offsetof(struct ln_rdma_port, mtu),
	  .sfn = spec_parse_mtu, .min = 256, .max = 4096, .doc = "expected active MTU" },
	{ .key = "rail", .type = FT_STR, .off = offsetof(struct ln_rdma_port, rail),
	  .flags = F_RANGE, .pat = SP_RAIL, .def = "the port's position",
	  .doc = "rail name: pairwise stages pair ports of the same rail" },
	{ .key = "gpus", .type = FT_CUSTOM, .fn = spec_parse_port_gpus, .schema_type = "gpu_list",
	  .def = "none declared: the nearest GPUs are reported",
	  .doc = "the GPUs the port serves, by NVML index: a list of indexes and ranges "
		 "such as [0, 1] or [\"0-3\"], each below the node's gpus; the devices stage "
		 "judges each pair's PCIe distance and GPUDirect RDMA readiness" },
};

static const struct table rdma_table = {
	"rdma port", rdma_fields, ARRAY_SIZE(rdma_fields),
	0, 0, "An RDMA port of the node.", NULL, NULL,
};

static const struct field node_fields[] = {
	{ .key = "name", .type = FT_STR, .off = offsetof(struct ln_node, name),
	  .flags = F_REQUIRED | F_RANGE, .pat = SP_NODE,
	  .doc = "unique node name, or a range such as gpu[001-128]" },
	{ .key = "address", .type = FT_STR, .off = offsetof(struct ln_node, address),
	  .flags = F_REQUIRED | F_RANGE, .pat = SP_HOST,
	  .doc = "where SSH reaches the node; a range expands in step with the name" },
	{ .key = "port", .type = FT_U16, .off = offsetof(struct ln_node, port), .min = 1,
	  .max = 65535, .def = "ssh.port", .doc = "SSH port" },
	{ .key = "user", .type = FT_STR, .off = offsetof(struct ln_node, user), .flags = F_RANGE,
	  .pat = SP_USER, .def = "ssh.user", .doc = "SSH user" },
	{ .key = "gpus", .type = FT_UINT, .off = offsetof(struct ln_node, gpus), .min = 0,
	  .max = 1024, .def = "0", .doc = "expected CUDA devices" },
	{ .key = "slots", .type = FT_UINT, .off = offsetof(struct ln_node, slots), .min = 1,
	  .max = 4096, .def = "max(gpus, 1)", .doc = "MPI slots in the hostfile" },
	{ .key = "rdma", .type = FT_CUSTOM, .fn = spec_parse_rdma, .sub = &rdma_table,
	  .schema_type = "list", .doc = "RDMA ports" },
	{ .key = "slurm_name", .type = FT_STR, .off = offsetof(struct ln_node, slurm_name),
	  .pat = SP_NODE, .def = "the node's name",
	  .doc = "the node's Slurm NodeName, where it differs from its name (not in a range)" },
};

static const struct table node_table = {
	"node", node_fields, ARRAY_SIZE(node_fields), 0, 0,
	"A node, or a range of nodes expanded in step.", NULL, NULL,
};

/* ---- storage ------------------------------------------------------------ */

static const struct field ns_fields[] = {
	{ .key = "nsid", .type = FT_UINT, .off = offsetof(struct ln_namespace, nsid),
	  .flags = F_REQUIRED, .min = 1, .max = 0xfffffffe, .doc = "namespace id, unique in the target" },
	{ .key = "file", .type = FT_STR, .off = offsetof(struct ln_namespace, file),
	  .pat = SP_OWNPATH, .doc = "backing file on the target node (absolute); needs size" },
	{ .key = "size", .type = FT_SIZE, .off = offsetof(struct ln_namespace, size), .min = 512,
	  .doc = "size of the backing file; a multiple of 512 bytes" },
	{ .key = "device", .type = FT_STR, .off = offsetof(struct ln_namespace, device),
	  .pat = SP_DEVPATH, .doc = "block device under /dev/ instead of a file" },
	{ .key = "adopt", .type = FT_BOOL, .off = offsetof(struct ln_namespace, adopt),
	  .def = "false",
	  .doc = "use the file already at 'file' (one llmnet did not create) and never delete "
		 "it; without it an existing file is refused" },
};

static const struct table ns_table = {
	"namespace", ns_fields, ARRAY_SIZE(ns_fields), 0, 0,
	"A namespace: a backing file with a size, or a block device.", "namespace", NULL,
};


#define KEY_DIR_REPLACED "'key_dir' replaced it: nvmet keys a host once per node, so there " \
	"is one secret per target node and host, KEY_DIR/<target-node>/<host-node>.key " \
	"(and .ctrl.key when bidirectional; 'llmnet keys SPEC' makes them)"

/* The single-file forms of earlier versions: nvmet keys a host once per
 * node, so one file cannot serve every (target node, host) pair. */
static const struct refused_key dhchap_refused[] = {
	{ "key_file", KEY_DIR_REPLACED },
	{ "ctrl_key_file", KEY_DIR_REPLACED },
	{ NULL, NULL },
};

static const struct field dhchap_fields[] = {
	{ .key = "key_dir", .type = FT_STR, .off = offsetof(struct ln_dhchap, key_dir),
	  .flags = F_REQUIRED, .pat = SP_LOCALPATH,
	  .doc = "directory on the controller holding the secrets, "
		 "KEY_DIR/<target-node>/<host-node>.key (0600 files, 0700 directories; "
		 "read by plan and apply, never by lint)" },
	{ .key = "hash", .type = FT_ENUM, .off = offsetof(struct ln_dhchap, hash),
	  .names = ln_dhchap_hash_names, .def = "sha256", .doc = "HMAC hash of the exchange" },
	{ .key = "dhgroup", .type = FT_ENUM, .off = offsetof(struct ln_dhchap, dhgroup),
	  .flags = F_NULL_NAME, .names = ln_dhchap_group_names, .def = "ffdhe2048",
	  .doc = "Diffie-Hellman group, or null for none" },
	{ .key = "bidirectional", .type = FT_BOOL, .off = offsetof(struct ln_dhchap, bidirectional),
	  .def = "false",
	  .doc = "the host authenticates the target too, with the .ctrl.key secret" },
};

static const struct table dhchap_table = {
	"dhchap", dhchap_fields, ARRAY_SIZE(dhchap_fields),
	offsetof(struct ln_dhchap, mark) + 1, offsetof(struct ln_dhchap, present) + 1,
	"DH-HMAC-CHAP authentication of the target's hosts.", NULL, dhchap_refused,
};

static const struct field target_fields[] = {
	{ .key = "nqn", .type = FT_STR, .off = offsetof(struct target_entry, t.nqn),
	  .flags = F_REQUIRED | F_RANGE, .pat = SP_NQN, .doc = "subsystem NQN" },
	{ .key = "node", .type = FT_STR, .off = offsetof(struct target_entry, node),
	  .flags = F_REQUIRED | F_RANGE, .pat = SP_NODE, .doc = "node that serves the target" },
	{ .key = "transport", .type = FT_ENUM, .off = offsetof(struct target_entry, t.transport),
	  .flags = F_REQUIRED, .names = transports, .doc = "NVMe-oF transport" },
	{ .key = "address", .type = FT_STR, .off = offsetof(struct target_entry, t.address),
	  .flags = F_RANGE, .pat = SP_IP, .def = "the node's first RDMA ip",
	  .doc = "address the target listens on (numeric)" },
	{ .key = "service", .type = FT_U16, .off = offsetof(struct target_entry, t.service),
	  .min = 1, .max = 65535, .def = "4420", .doc = "transport service id (port)" },
	{ .key = "hosts", .type = FT_CUSTOM, .fn = spec_parse_hosts, .schema_type = "hosts",
	  .def = "every initiator of this target",
	  .doc = "nodes allowed to connect, or 'any' (must be written out)" },
	{ .key = "namespaces", .type = FT_CUSTOM, .fn = spec_parse_namespaces, .sub = &ns_table,
	  .flags = F_REQUIRED, .schema_type = "list", .doc = "the target's namespaces" },
	{ .key = "dhchap", .type = FT_MAP, .off = offsetof(struct target_entry, t.dhchap),
	  .sub = &dhchap_table, .doc = "DH-HMAC-CHAP authentication of every host; none: open" },
	{ .key = "tls", .type = FT_ENUM, .off = offsetof(struct target_entry, t.tls),
	  .names = ln_tls_names, .def = "none",
	  .doc = "required: the TCP port takes TLS 1.3 only, each host with its PSK "
		 "KEY_DIR/<target-node>/<host-node>.psk in dhchap's key_dir (needs transport "
		 "tcp, dhchap, and tlshd on both ends)" },
};

static const struct table target_table = {
	"target", target_fields, ARRAY_SIZE(target_fields), 0, 0,
	"An NVMe-oF target (subsystem) on one node.", NULL, NULL,
};


static const struct field mount_fields[] = {
	{ .key = "path", .type = FT_STR, .off = offsetof(struct ln_mount, path),
	  .flags = F_REQUIRED, .pat = SP_OWNPATH, .doc = "mount point (absolute)" },
	{ .key = "fs", .type = FT_STR, .off = offsetof(struct ln_mount, fs), .sfn = spec_parse_fs,
	  .flags = F_REQUIRED, .pat = SP_FS,
	  .doc = "file system to mount with (and to make with format: if-blank)" },
	{ .key = "format", .type = FT_ENUM, .off = offsetof(struct ln_mount, format),
	  .names = formats, .def = "never",
	  .doc = "never, or if-blank: make the file system only on a device with no signature" },
	{ .key = "exec", .type = FT_BOOL, .off = offsetof(struct ln_mount, exec),
	  .doc = "true: programs may run from the mount (default: mounted noexec, as always "
		 "nosuid,nodev)" },
};

static const struct table mount_table = {
	"mount", mount_fields, ARRAY_SIZE(mount_fields),
	offsetof(struct ln_mount, mark) + 1, offsetof(struct ln_mount, present) + 1,
	"Mount the connected namespace.", NULL, NULL,
};

static const struct field init_fields[] = {
	{ .key = "node", .type = FT_STR, .off = offsetof(struct init_entry, node),
	  .flags = F_REQUIRED | F_RANGE, .pat = SP_NODE,
	  .doc = "node that connects; a range makes one initiator per node" },
	{ .key = "target", .type = FT_STR, .off = offsetof(struct init_entry, target),
	  .flags = F_REQUIRED | F_RANGE, .pat = SP_NQN, .doc = "NQN of a target in this spec" },
	{ .key = "nr_io_queues", .type = FT_UINT, .off = offsetof(struct init_entry, i.nr_io_queues),
	  .min = 1, .max = 1024, .def = "kernel default", .doc = "I/O queues" },
	{ .key = "queue_size", .type = FT_UINT, .off = offsetof(struct init_entry, i.queue_size),
	  .min = 16, .max = 1024, .def = "kernel default", .doc = "I/O queue depth" },
	{ .key = "ctrl_loss_tmo", .type = FT_DURATION, .flags = F_WHOLE_SECONDS,
	  .off = offsetof(struct init_entry, i.ctrl_loss_tmo_ms), .min = 1000, .max = 86400000,
	  .def = "kernel default", .doc = "give up reconnecting after this long" },
	{ .key = "reconnect_delay", .type = FT_DURATION, .flags = F_WHOLE_SECONDS,
	  .off = offsetof(struct init_entry, i.reconnect_delay_ms), .min = 1000, .max = 3600000,
	  .def = "kernel default", .doc = "delay between reconnect attempts" },
	{ .key = "mount", .type = FT_MAP, .off = offsetof(struct init_entry, i.mount),
	  .sub = &mount_table, .doc = "optional mount of the namespace" },
	/* index LN_INIT_F_DISCOVERY (storage.c takes its value's mark) */
	{ .key = "discovery", .type = FT_BOOL, .off = offsetof(struct init_entry, i.discovery),
	  .def = "false",
	  .doc = "find the target in its discovery log at the declared transport, address and "
		 "service, and connect from that entry; not listed there: the connect fails" },
	/* index LN_INIT_F_GDS */
	{ .key = "gds", .type = FT_BOOL, .off = offsetof(struct init_entry, i.gds),
	  .def = "false",
	  .doc = "GPUDirect Storage reads this namespace: the devices stage checks nvidia_fs, "
		 "the open kernel modules, the rdma transport and cufile.json on the node" },
};

static const struct table init_table = {
	"initiator", init_fields, ARRAY_SIZE(init_fields), 0, 0,
	"An NVMe-oF initiator: a node that connects to a target.", NULL, NULL,
};

static const struct field storage_fields[] = {
	{ .key = "targets", .type = FT_CUSTOM, .fn = spec_parse_targets, .sub = &target_table,
	  .schema_type = "list", .doc = "NVMe-oF targets" },
	{ .key = "initiators", .type = FT_CUSTOM, .fn = spec_parse_initiators, .sub = &init_table,
	  .schema_type = "list", .doc = "NVMe-oF initiators" },
};

static const struct table storage_table = {
	"storage", storage_fields, ARRAY_SIZE(storage_fields), 0, 0,
	"NVMe-oF targets and the initiators that use them.", NULL, NULL,
};

/* ---- mpi -------------------------------------------------------------- */

static const struct field mpi_fields[] = {
	{ .key = "hostfile", .type = FT_STR, .off = offsetof(struct ln_mpi_spec, hostfile),
	  .pat = SP_OWNPATH, .def = "/etc/llmnet/hostfile", .doc = "hostfile written on every node" },
	{ .key = "format", .type = FT_ENUM, .off = offsetof(struct ln_mpi_spec, format),
	  .names = mpi_formats, .def = "openmpi", .doc = "hostfile syntax" },
	{ .key = "mca", .type = FT_CUSTOM, .fn = spec_parse_mca, .schema_type = "mca",
	  .doc = "Open MPI MCA parameters passed to mpirun" },
};

static const struct table mpi_table = {
	"mpi", mpi_fields, ARRAY_SIZE(mpi_fields),
	offsetof(struct ln_mpi_spec, mark) + 1, offsetof(struct ln_mpi_spec, present) + 1,
	"The MPI hostfile and mpirun settings.", NULL, NULL,
};

/* ---- slurm ------------------------------------------------------------ */

static const struct field slurm_fields[] = {
	{ .key = "node", .type = FT_STR, .off = offsetof(struct ln_slurm_spec, node),
	  .flags = F_REQUIRED, .pat = SP_NODE,
	  .doc = "the declared node where the agent runs scontrol (a Slurm client)" },
	{ .key = "drain", .type = FT_BOOL, .off = offsetof(struct ln_slurm_spec, drain),
	  .def = "false", .doc = "validate drains the nodes its verdicts blame (as --drain)" },
	{ .key = "resume", .type = FT_BOOL, .off = offsetof(struct ln_slurm_spec, resume),
	  .def = "false",
	  .doc = "validate lifts llmnet's own drains of nodes that pass again (as --resume)" },
};

/* slurmd's HealthCheckProgram (issue 28, point 3) is not built yet. */
static const struct refused_key slurm_refused[] = {
	{ "health_check", "llmnet has no health check program for slurmd yet (issue 28, point "
	  "3); drains come from llmnet validate --drain" },
	{ NULL, NULL },
};

static const struct table slurm_table = {
	"slurm", slurm_fields, ARRAY_SIZE(slurm_fields),
	offsetof(struct ln_slurm_spec, mark) + 1, offsetof(struct ln_slurm_spec, present) + 1,
	"Slurm: drain the nodes validate blames, lift llmnet's own drains.", NULL,
	slurm_refused,
};

/* ---- validation ------------------------------------------------------- */

#define VOFF(m) offsetof(struct ln_validation, m)

/* Every stage table starts with its "stage" key (index 0). */
#define STAGE_KEY                                                                   \
	{ .key = "stage", .type = FT_ENUM, .flags = F_REQUIRED, .names = spec_stage_names, \
	  .doc = "the stage to run" }

static const struct field devices_fields[] = {
	STAGE_KEY,
	{ .key = "max_gpu_distance", .type = FT_ENUM, .off = VOFF(devices.max_gpu_distance),
	  .names = spec_pci_distance_names, .def = "PXB",
	  .doc = "farthest a declared GPU-port pair may be, in nvidia-smi's classes from "
		 "nearest: PIX (one PCIe switch), PXB (several switches), PHB (the host "
		 "bridge), NODE (host bridges of one NUMA node), SYS (across NUMA nodes)" },
};

/* The rail key every pairwise stage takes. */
#define RAILS_KEYS(st)                                                                        \
	{ .key = "rails", .type = FT_ENUM, .off = VOFF(st.rails), .names = rails_names,          \
	  .def = "aligned", .doc = "aligned: each port with the same rail's ports; all: also "    \
	  "with the other rails' ports" }

/* The ports' error counters are read before and after each pair; their
 * rise is judged only when the spec gives a limit. */
#define MAX_ERRORS_KEY(st)                                                                  \
	{ .key = "max_errors", .type = FT_INT, .off = VOFF(st.max_errors),                  \
	  .flags = F_THRESHOLD, .min = 0, .max = 1000000000,                                \
	  .def = "none: reported, not judged",                                              \
	  .doc = "most errors a port's counters may gain with one partner" }

/* A node's rails in one round: one probe per rail on each node at once,
 * each on a session of its own (stages.h, lanes). */
#define CONCURRENT_KEY(st)                                                                   \
	{ .key = "concurrent_rails", .type = FT_BOOL, .off = VOFF(st.concurrent_rails),     \
	  .def = "false", .doc = "test a node's rails in the same round (they share PCIe and "  \
	  "CPU); false: one test per node per round" }

#define PERFTEST_DIR_KEY(st)                                                                 \
	{ .key = "perftest_dir", .type = FT_STR, .off = VOFF(st.perftest_dir), .pat = SP_PATH,     \
	  .def = "/usr/bin", .doc = "the absolute directory on every node that holds the "   \
	  "perftest programs (it and every directory above it root's, writable by no one "  \
	  "else), such as a perftest built with CUDA" }

static const struct field rping_fields[] = {
	STAGE_KEY,
	{ .key = "count", .type = FT_UINT, .off = VOFF(rping.count), .min = 1, .max = 100000,
	  .def = "10", .doc = "pings per pair" },
	{ .key = "pairs", .type = FT_ENUM, .off = VOFF(rping.pairs), .names = pairs_names,
	  .def = "ring", .doc = "which pairs: ring neighbours or all" },
	RAILS_KEYS(rping),
	CONCURRENT_KEY(rping),
	MAX_ERRORS_KEY(rping),
	{ .key = "timeout", .type = FT_DURATION, .off = VOFF(rping.timeout_ms), .min = 1000,
	  .max = 3600000, .def = "30s", .doc = "bound on each probe" },
};

static const struct field bandwidth_fields[] = {
	STAGE_KEY,
	{ .key = "tool", .type = FT_ENUM, .off = VOFF(bandwidth.tool), .names = bw_tools,
	  .def = "ib_write_bw", .doc = "perftest program" },
	{ .key = "size", .type = FT_SIZE, .off = VOFF(bandwidth.size), .min = 1,
	  .max = 1ll << 30, .def = "1MiB", .doc = "message size" },
	{ .key = "pairs", .type = FT_ENUM, .off = VOFF(bandwidth.pairs), .names = pairs_names,
	  .def = "ring", .doc = "which pairs" },
	RAILS_KEYS(bandwidth),
	CONCURRENT_KEY(bandwidth),
	MAX_ERRORS_KEY(bandwidth),
	{ .key = "min", .type = FT_STR, .sfn = spec_parse_bw_min, .flags = F_THRESHOLD,
	  .schema_type = "bw_min", .doc = "threshold: a rate, or 'F of rate' (of the link's rate)" },
	{ .key = "min_msg_rate", .type = FT_STR, .sfn = spec_parse_bw_msg_rate,
	  .flags = F_THRESHOLD, .schema_type = "mpps",
	  .doc = "threshold on the message rate, in Mpps (millions of messages a second): a "
	  "second perftest run per pair at msg_size, judged on perftest's MsgRate[Mpps]" },
	{ .key = "msg_size", .type = FT_SIZE, .off = VOFF(bandwidth.msg_size), .min = 1,
	  .max = 1ll << 20, .def = "64B",
	  .doc = "message size of the message-rate run (with min_msg_rate only)" },
	{ .key = "port_base", .type = FT_U16, .off = VOFF(bandwidth.port_base), .min = 1024,
	  .max = 65535, .def = "18515", .doc = "first TCP port perftest uses" },
	{ .key = "timeout", .type = FT_DURATION, .off = VOFF(bandwidth.timeout_ms), .min = 1000,
	  .max = 3600000, .def = "60s", .doc = "bound on each probe" },
	{ .key = "memory", .type = FT_ENUM, .off = VOFF(bandwidth.memory), .names = bw_memories,
	  .def = "host", .doc = "perftest's buffers: host memory, or the memory of the GPU each "
	  "port serves (GPUDirect RDMA: cuda, or cuda through a dma-buf)" },
	PERFTEST_DIR_KEY(bandwidth),
};

/* Bisection bandwidth (issue 27, point 3) is not built yet. */
#define BISECTION_NOT_BUILT "bisection bandwidth (every pair across two halves at once) is not " \
	"built yet (issue 27, point 3); the stage tests pairs one round at a time"

static const struct refused_key bandwidth_refused[] = {
	{ "pattern", BISECTION_NOT_BUILT },
	{ "halves", BISECTION_NOT_BUILT },
	{ NULL, NULL },
};

static const struct field latency_fields[] = {
	STAGE_KEY,
	{ .key = "tool", .type = FT_ENUM, .off = VOFF(latency.tool), .names = lat_tools,
	  .def = "ib_write_lat", .doc = "perftest program" },
	{ .key = "size", .type = FT_SIZE, .off = VOFF(latency.size), .min = 1,
	  .max = 1ll << 20, .def = "2B", .doc = "message size" },
	{ .key = "iterations", .type = FT_UINT, .off = VOFF(latency.iterations), .min = 10,
	  .max = 1000000, .def = "1000", .doc = "round trips per pair (perftest's -n)" },
	{ .key = "pairs", .type = FT_ENUM, .off = VOFF(latency.pairs), .names = pairs_names,
	  .def = "ring", .doc = "which pairs" },
	RAILS_KEYS(latency),
	CONCURRENT_KEY(latency),
	{ .key = "max_typical", .type = FT_DURATION, .off = VOFF(latency.max_typical_us),
	  .flags = F_THRESHOLD | F_US, .min = 1, .max = 3600000000ll,
	  .doc = "threshold on the typical latency (perftest's t_typical)" },
	{ .key = "max_p99", .type = FT_DURATION, .off = VOFF(latency.max_p99_us),
	  .flags = F_THRESHOLD | F_US, .min = 1, .max = 3600000000ll,
	  .doc = "threshold on the 99th percentile latency" },
	MAX_ERRORS_KEY(latency),
	{ .key = "port_base", .type = FT_U16, .off = VOFF(latency.port_base), .min = 1024,
	  .max = 65535, .def = "18615", .doc = "first TCP port perftest uses" },
	{ .key = "timeout", .type = FT_DURATION, .off = VOFF(latency.timeout_ms), .min = 1000,
	  .max = 3600000, .def = "60s", .doc = "bound on each probe" },
	PERFTEST_DIR_KEY(latency),
};

static const struct field io_fields[] = {
	STAGE_KEY,
	{ .key = "size", .type = FT_SIZE, .off = VOFF(io.size), .min = 4096,
	  .max = 1ll << 50, .def = "256MiB", .doc = "bytes written and read per initiator" },
	{ .key = "min", .type = FT_RATE, .off = VOFF(io.min_bps), .flags = F_THRESHOLD, .min = 1,
	  .doc = "threshold on throughput" },
	{ .key = "destructive", .type = FT_BOOL, .off = VOFF(io.destructive), .def = "false",
	  .doc = "allow raw writes to the device (destroys its data)" },
	{ .key = "destructive_device", .type = FT_BOOL, .off = VOFF(io.destructive_device),
	  .def = "false",
	  .doc = "also destroy the data of a device: namespace's disk (with destructive)" },
	{ .key = "timeout", .type = FT_DURATION, .off = VOFF(io.timeout_ms), .min = 1000,
	  .max = 86400000, .def = "120s", .doc = "bound on each probe" },
};

static const struct field mpi_stage_fields[] = {
	STAGE_KEY,
	{ .key = "np", .type = FT_UINT, .off = VOFF(mpi.np), .min = 1, .max = 1 << 20,
	  .def = "every slot", .doc = "MPI processes" },
	{ .key = "timeout", .type = FT_DURATION, .off = VOFF(mpi.timeout_ms), .min = 1000,
	  .max = 86400000, .def = "120s", .doc = "bound on the run" },
};

static const struct field nccl_fields[] = {
	STAGE_KEY,
	{ .key = "tool", .type = FT_ENUM, .off = VOFF(nccl.tool), .names = nccl_tools,
	  .def = "probe",
	  .doc = "llmnet's probe, or nccl-tests (its OP_perf from tests_dir); all_reduce_perf: "
	  "the old name of nccl-tests, op all_reduce, scope node (lint warns)" },
	{ .key = "tests_dir", .type = FT_STR, .off = VOFF(nccl.tests_dir), .pat = SP_PATH,
	  .doc = "with tool nccl-tests, and only then: the absolute directory on every "
	  "node that holds nccl-tests' programs, built with MPI=1 (they and every directory "
	  "above them root's, writable by no one else)" },
	{ .key = "op", .type = FT_ENUM, .off = VOFF(nccl.op), .names = spec_nccl_op_names,
	  .def = "all_reduce",
	  .doc = "collective, every element it delivers checked (alltoall, sendrecv: "
	  "nccl-tests only)" },
	{ .key = "scope", .type = FT_ENUM, .off = VOFF(nccl.scope), .names = nccl_scopes,
	  .def = "cluster",
	  .doc = "nccl-tests: one mpirun across the GPU nodes, or each GPU node alone" },
	{ .key = "scaling", .type = FT_CUSTOM, .fn = spec_parse_nccl_scaling,
	  .schema_type = "node_counts",
	  .doc = "nccl-tests at scope cluster: the run again on the first N GPU nodes for "
	  "each N, ascending, efficiency busbw(N) / busbw(first N)" },
	{ .key = "min_efficiency", .type = FT_STR, .sfn = spec_parse_nccl_efficiency,
	  .schema_type = "fraction", .flags = F_THRESHOLD,
	  .doc = "threshold on scaling efficiency: a fraction (0.9) or a percentage (90%)" },
	{ .key = "max_latency", .type = FT_DURATION, .off = VOFF(nccl.max_latency_us),
	  .flags = F_THRESHOLD | F_US, .min = 1,
	  .doc = "threshold on the collective's time at the smallest size (collective latency)" },
	{ .key = "bytes", .type = FT_SIZE, .off = VOFF(nccl.bytes), .min = 4, .max = 64ll << 30,
	  .sfn = spec_parse_nccl_bytes, .schema_type = "nccl_bytes",
	  .def = "1GiB", .doc = "message size, as nccl-tests counts it (all_gather: what each "
	  "rank receives; reduce_scatter: what each rank sends), or a sweep A..B doubling "
	  "from A, judged at B" },
	{ .key = "socket_ifname", .type = FT_STR, .off = VOFF(nccl.socket_ifname),
	  .pat = SP_IFNAME, .def = "NCCL's choice",
	  .doc = "NCCL_SOCKET_IFNAME on every rank (bootstrap and socket transport)" },
	{ .key = "env", .type = FT_CUSTOM, .fn = spec_parse_nccl_env, .schema_type = "nccl_env",
	  .doc = "further NCCL_* variables set on every rank, from llmnet's allow-list" },
	{ .key = "min_busbw", .type = FT_RATE, .off = VOFF(nccl.min_busbw_bps),
	  .flags = F_THRESHOLD, .min = 1, .doc = "threshold on bus bandwidth" },
	{ .key = "timeout", .type = FT_DURATION, .off = VOFF(nccl.timeout_ms), .min = 1000,
	  .max = 86400000, .def = "300s", .doc = "bound on the run" },
	{ .key = "launcher", .type = FT_ENUM, .off = VOFF(nccl.launcher), .names = nccl_launchers,
	  .def = "mpirun",
	  .doc = "nccl-tests: started by mpirun, or by each node's agent itself (none): one "
	  "process per GPU node, -g its GPUs, no MPI" },
	{ .key = "nccl_lib", .type = FT_STR, .off = VOFF(nccl.nccl_lib), .pat = SP_PATH,
	  .doc = "with launcher none: the absolute directory of libnccl.so.2 on every node "
	  "(a Python wheel's), checked as tests_dir is, given to nccl-tests as LD_LIBRARY_PATH" },
	{ .key = "cuda_lib", .type = FT_STR, .off = VOFF(nccl.cuda_lib), .pat = SP_PATH,
	  .doc = "with launcher none: the absolute directory of libcudart on every node, checked "
	  "as tests_dir is, after nccl_lib in LD_LIBRARY_PATH" },
};

static const struct field access_fields[] = {
	STAGE_KEY,
	{ .key = "timeout", .type = FT_DURATION, .off = VOFF(access.timeout_ms), .min = 1000,
	  .max = 600000, .def = "20s",
	  .doc = "bound on each connect attempt that must be refused" },
};

#define STAGE(name, f, doc) { "stage '" name "'", f, ARRAY_SIZE(f), 0, 0, doc, NULL, NULL }

const struct table spec_stage_tables[LN_STAGE_COUNT] = {
	STAGE("devices", devices_fields,
	      "RDMA ports, GPUs, their placement and NVMe controllers as declared."),
	STAGE("rping", rping_fields, "rdma_cm reachability between pairs of nodes."),
	{ "stage 'bandwidth'", bandwidth_fields, ARRAY_SIZE(bandwidth_fields), 0, 0,
	  "RDMA bandwidth and message rate between pairs (perftest).", NULL, bandwidth_refused },
	STAGE("latency", latency_fields, "RDMA latency between pairs (perftest)."),
	STAGE("io", io_fields, "Storage I/O on every initiator."),
	STAGE("mpi", mpi_stage_fields, "An MPI job across every node's slots."),
	STAGE("nccl", nccl_fields, "An NCCL collective across the GPUs."),
	STAGE("access", access_fields,
	      "Connects each target must refuse: other hosts, claimed NQNs, wrong secrets."),
};

/* ---- ssh and the top level -------------------------------------------- */

static const struct field ssh_fields[] = {
	{ .key = "user", .type = FT_STR, .off = offsetof(struct ln_ssh_spec, user),
	  .pat = SP_USER, .def = "root",
	  .doc = "root, or a user with password-less sudo" },
	{ .key = "port", .type = FT_U16, .off = offsetof(struct ln_ssh_spec, port), .min = 1,
	  .max = 65535, .def = "22", .doc = "SSH port" },
	{ .key = "identity", .type = FT_STR, .off = offsetof(struct ln_ssh_spec, identity),
	  .pat = SP_LOCALPATH, .def = "libssh's default keys",
	  .doc = "private key file (absolute or ~/...)" },
	{ .key = "known_hosts", .type = FT_STR, .off = offsetof(struct ln_ssh_spec, known_hosts),
	  .pat = SP_LOCALPATH, .def = "~/.ssh/known_hosts", .doc = "known_hosts file" },
	{ .key = "host_key_policy", .type = FT_ENUM,
	  .off = offsetof(struct ln_ssh_spec, host_key_policy), .names = host_key_policies,
	  .def = "strict", .doc = "strict, or accept-new: record unknown keys, refuse changed ones" },
	{ .key = "jump", .type = FT_STR, .sfn = spec_parse_jump, .pat = SP_JUMP,
	  .doc = "jump host, [user@]host[:port]" },
	{ .key = "connect_timeout", .type = FT_DURATION,
	  .off = offsetof(struct ln_ssh_spec, connect_timeout_ms), .min = 100, .max = 600000,
	  .def = "10s", .doc = "bound on connecting and signing in" },
	{ .key = "timeout", .type = FT_DURATION, .off = offsetof(struct ln_ssh_spec, timeout_ms),
	  .min = 1000, .max = 86400000, .def = "120s", .doc = "bound on each remote step" },
	{ .key = "parallel", .type = FT_UINT, .off = offsetof(struct ln_ssh_spec, parallel),
	  .min = 1, .max = 1024, .def = "32", .doc = "nodes worked on at once" },
};

static const struct table ssh_table = {
	"ssh", ssh_fields, ARRAY_SIZE(ssh_fields),
	offsetof(struct ln_ssh_spec, mark) + 1, 0, "How llmnet reaches the nodes.", NULL, NULL,
};

static const struct field top_fields[] = {
	{ .key = "version", .type = FT_UINT, .sfn = spec_parse_version, .flags = F_REQUIRED, .min = 1,
	  .max = 1, .doc = "spec language version: 1" },
	{ .key = "cluster", .type = FT_STR, .off = offsetof(struct ln_spec, cluster),
	  .flags = F_REQUIRED, .pat = SP_CLUSTER,
	  .doc = "cluster name; scopes what llmnet owns on the nodes" },
	{ .key = "persist", .type = FT_BOOL, .off = offsetof(struct ln_spec, persist),
	  .def = "false",
	  .doc = "every node restores its part at boot, without the controller (systemd unit)" },
	{ .key = "ssh", .type = FT_MAP, .off = offsetof(struct ln_spec, ssh), .sub = &ssh_table,
	  .doc = "SSH settings" },
	{ .key = "nodes", .type = FT_CUSTOM, .fn = spec_parse_nodes, .sub = &node_table,
	  .flags = F_REQUIRED, .schema_type = "list", .doc = "the nodes" },
	{ .key = "storage", .type = FT_MAP, .off = 0, .sub = &storage_table,
	  .doc = "NVMe-oF targets and initiators" },
	{ .key = "mpi", .type = FT_MAP, .off = offsetof(struct ln_spec, mpi), .sub = &mpi_table,
	  .fn = spec_parse_mpi, .doc = "MPI hostfile" },
	{ .key = "validation", .type = FT_CUSTOM, .fn = spec_parse_validation,
	  .sub = spec_stage_tables, .schema_type = "validation",
	  .doc = "validation stages to run" },
	{ .key = "slurm", .type = FT_MAP, .off = offsetof(struct ln_spec, slurm),
	  .sub = &slurm_table, .fn = spec_parse_slurm, .doc = "Slurm drains and lifts" },
};

const struct table spec_top_table = {
	"the spec", top_fields, ARRAY_SIZE(top_fields), 0, 0,
	"A llmnet cluster spec, version 1.", NULL, NULL,
};
