/* SPDX-License-Identifier: MIT */
/*
 * The spec model: a llmnet YAML spec (version 1) parsed and checked into
 * plain typed structs, with ranges expanded and every default filled, so
 * that the planner, the transport and validation never look at YAML and
 * never have to second-guess a value. Anything here that will become a
 * path, a configfs name or a command argument has already passed a strict
 * pattern (see docs/spec.md); consumers may use it as is.
 *
 * Units, everywhere in the model:
 *   durations  milliseconds   (uint64_t, field names end in _ms), or
 *              microseconds where the field name ends in _us (the
 *              latency stage's thresholds)
 *   sizes      bytes          (uint64_t)
 *   rates      bits per second (uint64_t, field names end in _bps)
 *
 * Cross-references are indexes into the spec's arrays (a target's node,
 * an initiator's target), never pointers, so the model can be copied or
 * serialized without fix-ups. Every object keeps the position it was
 * written at (struct ln_mark) for later messages such as
 * "te-lab.yaml:12:7: target 'nqn...' ...": a node expanded from a range
 * carries the mark of its range entry.
 *
 * The whole model is owned by struct ln_spec and freed by ln_spec_free();
 * every string points into the spec's own storage.
 */
#ifndef LN_SPEC_H
#define LN_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/dhchap.h"

struct json_object;

#define LN_SPEC_VERSION 1

/* Where something was written: 1-based line and column; 0/0 means the
 * value is a default nobody wrote. */
struct ln_mark {
	uint32_t line;
	uint32_t col;
};

enum ln_host_key_policy {
	LN_HOST_KEY_STRICT = 0,		/* unknown or changed key: refuse (exit 4) */
	LN_HOST_KEY_ACCEPT_NEW,		/* record unknown keys, refuse changed ones */
};

struct ln_ssh_spec {
	const char *user;		/* default "root" */
	uint16_t port;			/* default 22 */
	const char *identity;		/* NULL: libssh's default keys and agent; "~/" kept as written */
	const char *known_hosts;	/* default "~/.ssh/known_hosts" */
	enum ln_host_key_policy host_key_policy;	/* default strict */
	/* Jump host, "[user@]host[:port]" split up; jump_host NULL when none. */
	const char *jump_host;
	const char *jump_user;		/* default: user */
	uint16_t jump_port;		/* default 22 */
	uint64_t connect_timeout_ms;	/* default 10 s */
	uint64_t timeout_ms;		/* bound on each remote step; default 120 s */
	unsigned parallel;		/* nodes worked on at once; default 32 */
	struct ln_mark mark;
};

enum ln_link_layer {
	LN_LINK_ANY = 0,		/* not stated: whatever the port reports */
	LN_LINK_INFINIBAND,
	LN_LINK_ETHERNET,		/* RoCE */
};

struct ln_rdma_port {
	const char *device;		/* e.g. "mlx5_0", as in /sys/class/infiniband */
	const char *ip;			/* numeric IPv4/IPv6 or NULL */
	uint64_t min_rate_bps;		/* 0: no expectation */
	struct ln_mark mark;
	unsigned port;			/* 1-based port number; default 1 */
	int gid_index;			/* -1: chosen from the port's GID table */
	enum ln_link_layer link_layer;	/* LN_LINK_ANY when not stated */
	unsigned mtu;			/* 0, or 256/512/1024/2048/4096 (active MTU) */
	const char *rail;		/* rail name, or NULL: rails by position */
	/* The GPUs (NVML indexes) the port serves, sorted, each once, every
	 * one below the node's gpus; NULL (n_gpus 0) when not declared. */
	const uint16_t *gpus;
	size_t n_gpus;
};

struct ln_node {
	const char *name;		/* unique; [A-Za-z0-9][A-Za-z0-9._-]*, <= 63 */
	const char *address;		/* SSH address: IPv4, IPv6 or host name */
	uint16_t port;			/* SSH port: the node's, else ssh.port */
	const char *user;		/* SSH user: the node's, else ssh.user */
	unsigned gpus;			/* expected CUDA devices; default 0 */
	unsigned slots;			/* MPI slots; default max(gpus, 1) */
	struct ln_rdma_port *rdma;	/* n_rdma ports, in spec order */
	size_t n_rdma;
	struct ln_mark mark;		/* the node's (or its range entry's) mapping */
	const char *slurm_name;		/* its Slurm NodeName; the check pass sets name */
};

enum ln_transport {
	LN_TRANSPORT_TCP = 0,
	LN_TRANSPORT_RDMA,
};

struct ln_namespace {
	uint32_t nsid;			/* 1 .. 0xfffffffe, unique within the target */
	const char *file;		/* backing file (absolute), or NULL */
	uint64_t size;			/* file size in bytes (multiple of 512); 0 with device */
	const char *device;		/* block device under /dev/, or NULL */
	int adopt;			/* file: use the existing one, never delete it */
	struct ln_mark mark;
};

enum ln_dhchap_hash {
	LN_DHCHAP_SHA256 = 0,		/* default */
	LN_DHCHAP_SHA384,
	LN_DHCHAP_SHA512,
};

enum ln_dhchap_group {
	LN_DHGROUP_FFDHE2048 = 0,	/* default */
	LN_DHGROUP_FFDHE3072,
	LN_DHGROUP_FFDHE4096,
	LN_DHGROUP_FFDHE6144,
	LN_DHGROUP_FFDHE8192,
	LN_DHGROUP_NULL,		/* no DH exchange: the HMAC alone */
};

/* DH-HMAC-CHAP for a target's hosts. The spec names only the key
 * directory on the controller: the secret of (target node, host node) is
 * KEY_DIR/<target-node>/<host-node>.key (and .ctrl.key when bidirectional),
 * read by plan and apply (orchestrator/secrets.c), never by lint. */
struct ln_dhchap {
	int present;
	const char *key_dir;		/* absolute, or "~/" and a relative path */
	enum ln_dhchap_hash hash;
	enum ln_dhchap_group dhgroup;
	int bidirectional;
	struct ln_mark mark;
};

/* Names of the enums above, as the spec, lint -o json and the request
 * write them: ln_dhchap_hash_names and ln_dhchap_group_names, defined once
 * for both binaries in common/dhchap.h. */
/* "none", "required": a target's tls */
extern const char *const ln_tls_names[];

struct ln_target {
	const char *nqn;		/* subsystem NQN, unique, checked by ln_nqn_check() */
	size_t node;			/* index into spec->nodes */
	enum ln_transport transport;	/* no default: must be written */
	const char *address;		/* numeric; default: the node's first RDMA ip */
	uint16_t service;		/* trsvcid; default 4420 */
	/* Allowed hosts. hosts_any: every host may connect (only when the spec
	 * says `hosts: any`). Otherwise hosts[] are node indexes: as written, or
	 * when hosts_given is 0, every node that has an initiator of this
	 * target (in initiator order). */
	int hosts_any;
	int hosts_given;
	size_t *hosts;
	size_t n_hosts;
	struct ln_namespace *namespaces;
	size_t n_namespaces;
	struct ln_dhchap dhchap;		/* present 0: no authentication */
	/* tls: 1 when the target's TCP port takes TLS 1.3 only, each host
	 * with its PSK KEY_DIR/<target-node>/<host-node>.psk (dhchap's
	 * key_dir) */
	int tls;
	struct ln_mark mark;
};

enum ln_mount_format {
	LN_FORMAT_NEVER = 0,		/* default: mount only what already has fs */
	LN_FORMAT_IF_BLANK,		/* mkfs only when blkid finds no signature */
};

struct ln_mount {
	int present;
	const char *path;		/* absolute mount point */
	const char *fs;			/* ext4 | xfs (lint and the agent refuse others) */
	enum ln_mount_format format;
	int exec;			/* 1: programs may run from it (no noexec) */
	struct ln_mark mark;
};

struct ln_initiator {
	size_t node;			/* index into spec->nodes */
	size_t target;			/* index into spec->targets */
	/* Queue settings passed to the connect; 0 / -1 mean the kernel's default. */
	unsigned nr_io_queues;		/* 0: default */
	unsigned queue_size;		/* 0: default */
	int64_t ctrl_loss_tmo_ms;	/* -1: default; whole seconds */
	int64_t reconnect_delay_ms;	/* -1: default; whole seconds */
	struct ln_mount mount;
	/* discovery: find the target in its discovery log, connect from the
	 * entry (the agent's discovery.c); its value's mark for messages */
	int discovery;
	struct ln_mark discovery_mark;
	/* gds: GPUDirect Storage reads the namespace (stage_gds.c judges the
	 * node); its value's mark for messages */
	int gds;
	struct ln_mark gds_mark;
	struct ln_mark mark;
};

enum ln_mpi_format {
	LN_MPI_OPENMPI = 0,		/* "host slots=N" */
	LN_MPI_MPICH,			/* "host:N" */
};

/* A NAME: value setting: an mca parameter of mpi.mca, or a variable of
 * nccl.env (their patterns: docs/spec.md). */
struct ln_setting {
	const char *key;
	const char *value;
	struct ln_mark mark;
};

struct ln_mpi_spec {
	int present;			/* the spec has an mpi section */
	const char *hostfile;		/* default "/etc/llmnet/hostfile" */
	struct ln_mark hostfile_mark;	/* its value; 0/0 when not written */
	enum ln_mpi_format format;	/* default openmpi */
	struct ln_setting *mca;		/* passed to mpirun as --mca KEY VALUE */
	size_t n_mca;
	struct ln_mark mark;
};

/* What llmnet does with Slurm (docs/operating.md, "Slurm"): scontrol
 * run by the agent on node, after validate. */
struct ln_slurm_spec {
	int present;			/* the spec has a slurm section */
	const char *node;		/* the node scontrol runs on (a declared node) */
	struct ln_mark node_mark;	/* its value; 0/0 when not written */
	int drain;			/* validate drains the nodes its verdicts blame */
	int resume;			/* validate lifts llmnet's own drains they pass */
	struct ln_mark mark;
};

/* Validation stages, in the one order they always run in. */
enum ln_stage {
	LN_STAGE_DEVICES = 0,
	LN_STAGE_RPING,
	LN_STAGE_BANDWIDTH,
	LN_STAGE_LATENCY,
	LN_STAGE_IO,
	LN_STAGE_MPI,
	LN_STAGE_NCCL,
	LN_STAGE_ACCESS,		/* the targets' access control, from the nodes */
	LN_STAGE_COUNT,
};

enum ln_pairs {
	LN_PAIRS_RING = 0,		/* each node with its ring neighbour */
	LN_PAIRS_ALL,			/* every pair, by the circle method */
};

/* Which ports a pairwise stage pairs (orchestrator/validate/rails.h). */
enum ln_rail_pairs {
	LN_RAILS_ALIGNED = 0,		/* each port with the partner's port on its rail */
	LN_RAILS_ALL,			/* and with the partner's other rails' ports */
};

enum ln_bw_tool {
	LN_BW_IB_WRITE_BW = 0,
	LN_BW_IB_SEND_BW,
};

/* Where the bandwidth stage's perftest keeps its buffers: host memory,
 * or the GPU the port serves (GPUDirect RDMA), pinned through
 * nvidia_peermem (cuda) or exported as a dma-buf (dmabuf). */
enum ln_bw_memory {
	LN_BW_MEM_HOST = 0,
	LN_BW_MEM_CUDA,
	LN_BW_MEM_DMABUF,
};

enum ln_lat_tool {
	LN_LAT_IB_WRITE_LAT = 0,
	LN_LAT_IB_SEND_LAT,
};

/* The message-rate run's size when msg_size is not written: small enough
 * that the rate, not the bandwidth, limits it (a cache line). */
#define LN_BW_MSG_SIZE 64

/* A bandwidth threshold: absolute, or a fraction of the link's rate. */
enum ln_min_kind {
	LN_MIN_NONE = 0,		/* reported, not judged (no result still fails) */
	LN_MIN_RATE,			/* min_bps */
	LN_MIN_FRACTION,		/* min_fraction * the port's active rate */
};

enum ln_nccl_tool {
	LN_NCCL_PROBE = 0,		/* llmnet's own probe */
	LN_NCCL_ALL_REDUCE_PERF,	/* the old name: lint makes it nccl-tests, scope node */
	LN_NCCL_TESTS,			/* nccl-tests' OP_perf from tests_dir */
};

/* Where nccl-tests runs: one mpirun across the nodes, or each node alone. */
enum ln_nccl_scope {
	LN_NCCL_SCOPE_CLUSTER = 0,
	LN_NCCL_SCOPE_NODE,
};

/* How nccl-tests starts: by mpirun, or by the node's agent itself, one
 * process per node (-g its GPUs), with no MPI. */
enum ln_nccl_launcher {
	LN_NCCL_LAUNCHER_MPIRUN = 0,
	LN_NCCL_LAUNCHER_NONE,
};

/* nccl.scaling's node counts at most. */
#define LN_NCCL_MAX_SCALING 8

/* A sweep's sizes at most (8B..8GiB, doubling, are 31). */
#define LN_NCCL_MAX_SWEEP 32

enum ln_nccl_op {
	LN_NCCL_ALL_REDUCE = 0,
	LN_NCCL_ALL_GATHER,
	LN_NCCL_REDUCE_SCATTER,
	LN_NCCL_BROADCAST,
	LN_NCCL_REDUCE,
	LN_NCCL_ALLTOALL,		/* nccl-tests only */
	LN_NCCL_SENDRECV,		/* nccl-tests only */
};

/* nvidia-smi's PCIe distance classes between two devices, nearest first
 * (docs/validation.md, "GPU placement"). */
enum ln_pci_distance {
	LN_DIST_PIX = 0,		/* at most one PCIe switch between them */
	LN_DIST_PXB,			/* several switches, no host bridge */
	LN_DIST_PHB,			/* through their (one) host bridge */
	LN_DIST_NODE,			/* across host bridges of one NUMA node */
	LN_DIST_SYS,			/* across NUMA nodes (the CPU interconnect) */
};

struct ln_validation {
	/* present[s]: the spec lists stage s; only those run. order[] lists
	 * the present stages in run order (n_order of them). */
	int present[LN_STAGE_COUNT];
	struct ln_mark mark[LN_STAGE_COUNT];
	enum ln_stage order[LN_STAGE_COUNT];
	size_t n_order;

	struct {
		/* farthest a declared GPU-port pair may be; default PXB */
		enum ln_pci_distance max_gpu_distance;
	} devices;
	struct {
		unsigned count;			/* pings per pair; default 10 */
		enum ln_pairs pairs;		/* default ring */
		enum ln_rail_pairs rails;		/* default aligned */
		int concurrent_rails;		/* a node's rails in one round; default 0 */
		int max_errors;			/* per port; -1: reported, not judged */
		uint64_t timeout_ms;		/* per probe; default 30 s */
	} rping;
	struct {
		enum ln_bw_tool tool;		/* default ib_write_bw */
		uint64_t size;			/* message size; default 1 MiB */
		enum ln_pairs pairs;		/* default ring */
		enum ln_rail_pairs rails;		/* default aligned */
		int concurrent_rails;		/* a node's rails in one round; default 0 */
		enum ln_min_kind min_kind;
		uint64_t min_bps;
		double min_fraction;		/* (0, 1] */
		/* message rate (issue 27 pt 3): a second perftest run per
		 * pair at msg_size, judged on its MsgRate[Mpps]; it runs only
		 * with min_msg_rate (0: none, and msg_size is refused) */
		double min_msg_rate;		/* Mpps */
		uint64_t msg_size;		/* 0: not written, LN_BW_MSG_SIZE */
		int max_errors;			/* per port; -1: reported, not judged */
		uint16_t port_base;		/* first TCP port for perftest; default 18515 */
		uint64_t timeout_ms;		/* per probe; default 60 s */
		enum ln_bw_memory memory;	/* default host */
		const char *perftest_dir;	/* perftest's programs; NULL: /usr/bin */
		struct ln_mark perftest_dir_mark;	/* its value, for messages */
	} bandwidth;
	struct {
		enum ln_lat_tool tool;		/* default ib_write_lat */
		uint64_t size;			/* message size; default 2 bytes */
		unsigned iterations;		/* default 1000 */
		enum ln_pairs pairs;		/* default ring */
		enum ln_rail_pairs rails;		/* default aligned */
		int concurrent_rails;		/* a node's rails in one round; default 0 */
		uint64_t max_typical_us;	/* 0: no threshold */
		uint64_t max_p99_us;		/* 0: no threshold */
		int max_errors;			/* per port; -1: reported, not judged */
		uint16_t port_base;		/* first TCP port for perftest; default 18615 */
		uint64_t timeout_ms;		/* per probe; default 60 s */
		const char *perftest_dir;	/* perftest's programs; NULL: /usr/bin */
		struct ln_mark perftest_dir_mark;	/* its value, for messages */
	} latency;
	struct {
		uint64_t size;			/* bytes per initiator; default 256 MiB */
		uint64_t min_bps;		/* 0: no threshold */
		int destructive;		/* raw writes to the device; default 0 */
		int destructive_device;		/* destructive also on device: namespaces; default 0 */
		uint64_t timeout_ms;		/* default 120 s */
	} io;
	struct {
		unsigned np;			/* processes; 0 = every slot */
		uint64_t timeout_ms;		/* default 120 s */
	} mpi;
	struct {
		enum ln_nccl_tool tool;		/* default probe */
		const char *tests_dir;		/* nccl-tests' programs (tool all_reduce_perf) */
		struct ln_mark tests_dir_mark;	/* its value, for messages */
		enum ln_nccl_op op;		/* default all_reduce */
		uint64_t bytes;			/* default 1 GiB; a sweep's last size */
		uint64_t min_bytes;		/* a sweep's first size; 0: one size */
		uint64_t min_busbw_bps;		/* 0: no threshold */
		uint64_t timeout_ms;		/* default 300 s */
		const char *socket_ifname;	/* NCCL_SOCKET_IFNAME; NULL: NCCL's choice */
		const struct ln_setting *env;	/* further NCCL_* variables (common/nccl_env.c) */
		size_t n_env;
		enum ln_nccl_scope scope;	/* nccl-tests; default cluster */
		unsigned scaling[LN_NCCL_MAX_SCALING];	/* node counts, ascending; n_scaling 0: none */
		size_t n_scaling;
		struct ln_mark scaling_mark;	/* its value, for messages */
		double min_efficiency;		/* busbw(N) / busbw(first N); 0: no threshold */
		uint64_t max_latency_us;	/* time at the smallest size; 0: no threshold */
		enum ln_nccl_launcher launcher;	/* nccl-tests; default mpirun */
		struct ln_mark launcher_mark;	/* its value, for messages */
		const char *nccl_lib;		/* libnccl.so.2's directory (launcher none) */
		struct ln_mark nccl_lib_mark;
		const char *cuda_lib;		/* libcudart's directory (launcher none) */
		struct ln_mark cuda_lib_mark;
	} nccl;
	struct {
		uint64_t timeout_ms;		/* per connect attempt; default 20 s */
	} access;
};

struct ln_spec_store;

struct ln_spec {
	const char *path;		/* as given to ln_spec_load() */
	const char *warnings;		/* "file:line:col: warning: ...\n" lines; NULL: none */
	int version;
	const char *cluster;		/* scopes ownership on the nodes */
	int persist;			/* nodes restore themselves at boot */
	struct ln_ssh_spec ssh;
	struct ln_node *nodes;
	size_t n_nodes;
	struct ln_target *targets;
	size_t n_targets;
	struct ln_initiator *initiators;
	size_t n_initiators;
	struct ln_mpi_spec mpi;
	struct ln_validation validation;
	struct ln_slurm_spec slurm;
	struct ln_spec_store *store;	/* private: storage and lookup tables */
};

/*
 * Parse and check the spec at path. On success *out is a new spec (free it
 * with ln_spec_free()) and 0 is returned. An invalid spec returns
 * -LN_ESPEC and appends every problem to err, one "path:line:col: message"
 * line each, sorted by position; other failures return -errno (file) or
 * -ENOMEM, with a message. *out is left NULL on any failure.
 */
int ln_spec_load(const char *path, struct ln_spec **out, struct ln_buf *err);

/* The same from memory; name stands for the path in messages. */
int ln_spec_load_buf(const char *name, const char *data, size_t len, struct ln_spec **out,
		     struct ln_buf *err);

void ln_spec_free(struct ln_spec *spec);

/* The normalized model as JSON (keys documented in docs/spec.md). No
 * secret is in it: key files are named by path only. Returns 0 or -ENOMEM;
 * the caller owns *out (json_object_put). */
int ln_spec_to_json(const struct ln_spec *spec, struct json_object **out);

/* The JSON Schema for editors, generated from the parser's key tables
 * (specs/llmnet.schema.json is this output). */
int ln_spec_schema(struct json_object **out);

/* Index of the node or target named, or -1. O(1). */
long ln_spec_node_index(const struct ln_spec *spec, const char *name);
long ln_spec_target_index(const struct ln_spec *spec, const char *nqn);

/* Names used in the spec and in messages. */
const char *ln_stage_name(enum ln_stage s);
const char *ln_transport_name(enum ln_transport t);
const char *ln_link_layer_name(enum ln_link_layer l);
const char *ln_nccl_op_name(enum ln_nccl_op op);
/* "PIX", "PXB", "PHB", "NODE", "SYS"; "?" out of range. */
const char *ln_pci_distance_name(enum ln_pci_distance d);

#endif
