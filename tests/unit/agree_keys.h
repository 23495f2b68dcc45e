/* SPDX-License-Identifier: MIT */
/*
 * The key cases of agree.h's part 2, one a key of the spec grammar, by spec
 * section; each section's program (test_agree_SECTION.c) walks the keys of
 * its section and finds their cases here. One table, so a key added to
 * the grammar has one place for its case.
 */
#ifndef LN_TEST_AGREE_KEYS_H
#define LN_TEST_AGREE_KEYS_H

#include "tests/unit/agree.h"

#define NQN1 "nqn.2024-04.io.llmnet:keys.t1"
/* nccl-tests from its directory, without the probe's variables */
/* nccl-tests across the nodes by mpirun, with the probe's variables */
#define TO_NCCL_CLUSTER "tool: probe, op: all_reduce, bytes: 1GiB,", \
	"tool: nccl-tests, tests_dir: /opt/nt, scope: cluster, scaling: [2, 4], " \
	"min_efficiency: 90%, op: all_reduce, bytes: 1GiB,"
#define NCCL_PROBE_KEYS "tool: probe, op: all_reduce, bytes: 1GiB, min_busbw: 100GB/s, " \
	"socket_ifname: eth0, env: { NCCL_ALGO: Ring }, "
#define TO_NCCL_TESTS NCCL_PROBE_KEYS, "tool: all_reduce_perf, tests_dir: /opt/nt, "
/* nccl-tests started by the agent, its NCCL and CUDA from a wheel's folders */
#define TO_NCCL_DIRECT NCCL_PROBE_KEYS, "tool: all_reduce_perf, tests_dir: /opt/nt, launcher: " \
	"none, nccl_lib: /opt/py/nvidia/nccl/lib, cuda_lib: /usr/local/cuda/lib64, "

#define BANDWIDTH_STAGE "  - { stage: bandwidth, tool: ib_write_bw, size: 1MiB, pairs: ring, " \
	"min: 50Gb/s, port_base: 18515, timeout: 60s, rails: aligned, max_errors: 5 }\n"

/* A case's trailing fields (both_*, pre) are NULL where not written. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct key_case key_cases[] = {
	/* ---- version, cluster, persist, ssh (test_agree_cluster.c) ---- */
	KC("version", ONLY_VALUE, "version: 1", "version: 2"),
	KC("cluster", CHANGES, "cluster: keys", "cluster: other"),
	KC("persist", CHANGES, "persist: true", "persist: false"),
	KC("ssh", SECTION, NULL, NULL),
	KC("ssh.user", CHANGES, "ssh:\n  user: root", "ssh:\n  user: ops"),
	KC("ssh.port", CHANGES, "  port: 22\n", "  port: 2222\n"),
	KC("ssh.identity", CHANGES, "/keys/id_ed25519", "/keys/id_rsa"),
	KC("ssh.known_hosts", CHANGES, "/keys/known_hosts", "/keys/other_hosts"),
	KC("ssh.host_key_policy", CHANGES, "policy: strict", "policy: accept-new"),
	KC("ssh.jump", CHANGES, "jump: bastion", "jump: ops@bastion:2200"),
	KC("ssh.connect_timeout", CHANGES, "connect_timeout: 10s", "connect_timeout: 20s"),
	KC("ssh.timeout", CHANGES, "timeout: 100s", "timeout: 200s"),
	KC("ssh.parallel", CHANGES, "parallel: 4", "parallel: 2"),
	/* ---- slurm (test_agree_cluster.c): scontrol through slurm.node's agent ---- */
	KC("slurm", SECTION, NULL, NULL),
	KC("slurm.node", CHANGES, "  node: alpha\n  drain", "  node: b2\n  drain"),
	/* the blamed nodes' state read, the verdicts that drain nobody said so */
	KC("slurm.drain", CHANGES, "drain: true", "drain: false"),
	/* without the bandwidth stage some nodes pass: their drains are looked at */
	{ "slurm.resume", CHANGES, "resume: true", "resume: false", BANDWIDTH_STAGE, "" },
	/* ---- nodes (test_agree_nodes.c) ---- */
	KC("nodes", SECTION, NULL, NULL),
	KC("nodes.name", CHANGES, "alpha", "omega"),
	KC("nodes.address", CHANGES, "address: 127.0.1.1\n", "address: 127.0.1.9\n"),
	KC("nodes.port", CHANGES, "port: 2200", "port: 2201"),
	KC("nodes.user", CHANGES, "    user: root", "    user: ops"),
	KC("nodes.gpus", CHANGES, "gpus: 8\n    slots", "gpus: 4\n    slots"),
	/* fewer slots than GPUs is refused with the nccl stage (one rank a GPU) */
	KC("nodes.slots", CHANGES, "slots: 8", "slots: 9"),
	/* alpha is blamed: its drain is looked up by its Slurm name */
	KC("nodes.slurm_name", CHANGES, "slurm_name: alpha-s", "slurm_name: alpha-t"),
	KC("nodes.rdma", SECTION, NULL, NULL),
	KC("nodes.rdma.device", CHANGES, "device: rxe0, port", "device: mlx5_0, port"),
	KC("nodes.rdma.port", CHANGES, "port: 1, ip", "port: 2, ip"),
	KC("nodes.rdma.ip", CHANGES, "ip: 10.0.0.1,", "ip: 10.0.0.9,"),
	KC("nodes.rdma.gid_index", CHANGES, "gid_index: 1", "gid_index: 0"),
	KC("nodes.rdma.min_rate", CHANGES, "min_rate: 100Gb/s", "min_rate: 200Gb/s"),
	KC("nodes.rdma.link_layer", CHANGES, "link_layer: ethernet", "link_layer: infiniband"),
	KC("nodes.rdma.mtu", CHANGES, "mtu: 1024", "mtu: 4096"),
	/* alpha's rxe1 alone on a rail: the other nodes' r1 pairs leave it out */
	/* alpha's two ports swap rails (a rail alone on one port does not lint) */
	KC("nodes.rdma.rail", CHANGES, "rail: r0 }\n      - { device: rxe1, ip: 10.0.1.1, rail: r1",
	   "rail: r1 }\n      - { device: rxe1, ip: 10.0.1.1, rail: r0"),
	/* alpha's rxe0 serves GPU 0 (PIX, below its switch) or GPU 4 (SYS) */
	KC("nodes.rdma.gpus", CHANGES, "gpus: [0], rail", "gpus: [4], rail"),
	/* ---- storage (test_agree_storage.c) ---- */
	KC("storage", SECTION, NULL, NULL),
	KC("storage.targets", SECTION, NULL, NULL),
	KC("storage.targets.nqn", CHANGES, "keys.t1", "keys.t7"),
	KC("storage.targets.node", CHANGES, "node: alpha\n      transport: tcp",
	  "node: b4\n      transport: tcp"),
	KC("storage.targets.transport", CHANGES, "transport: tcp", "transport: rdma"),
	KC("storage.targets.address", CHANGES, "address: 10.0.0.1\n", "address: 10.0.0.8\n"),
	KC("storage.targets.service", CHANGES, "service: 4420", "service: 4422"),
	/* hosts: any leaves no host to key: t1 without dhchap on both sides */
	{ "storage.targets.hosts", CHANGES, "hosts: [b2, b3, b4]", "hosts: any", DHCHAP_T1, "" },
	KC("storage.targets.dhchap", CHANGES, DHCHAP_T1, ""),
	KC("storage.targets.dhchap.key_dir", CHANGES, "~/llmnet-keys", "~/other-keys"),
	KC("storage.targets.dhchap.hash", CHANGES, "hash: sha384", "hash: sha512"),
	KC("storage.targets.dhchap.dhgroup", CHANGES, "dhgroup: ffdhe3072", "dhgroup: null"),
	KC("storage.targets.dhchap.bidirectional", CHANGES, "bidirectional: true",
	   "bidirectional: false"),
	KC("storage.targets.tls", CHANGES, "      service: 4420\n",
	   "      service: 4420\n      tls: required\n"),
	KC("storage.targets.namespaces", SECTION, NULL, NULL),
	KC("storage.targets.namespaces.nsid", CHANGES, "nsid: 2,", "nsid: 3,"),
	KC("storage.targets.namespaces.file", CHANGES, "keys.img", "other.img"),
	KC("storage.targets.namespaces.size", CHANGES, "size: 1GiB }", "size: 2GiB }"),
	KC("storage.targets.namespaces.adopt", CHANGES, "keys.img, size: 1GiB }",
	   "keys.img, size: 1GiB, adopt: true }"),
	KC("storage.targets.namespaces.device", CHANGES, "/dev/nvme9n1", "/dev/nvme8n1"),
	KC("storage.initiators", SECTION, NULL, NULL),
	KC("storage.initiators.node", CHANGES, "- node: b3", "- node: b4"),
	KC("storage.initiators.target", CHANGES, NQN1 " # b3's", "nqn.2024-04.io.llmnet:keys.t2"),
	KC("storage.initiators.nr_io_queues", CHANGES, "nr_io_queues: 4", "nr_io_queues: 8"),
	KC("storage.initiators.queue_size", CHANGES, "queue_size: 128", "queue_size: 256"),
	KC("storage.initiators.ctrl_loss_tmo", CHANGES, "ctrl_loss_tmo: 600s", "ctrl_loss_tmo: 60s"),
	KC("storage.initiators.reconnect_delay", CHANGES, "delay: 10s", "delay: 5s"),
	/* discovery is for a target without dhchap: t1's taken off both sides */
	{ "storage.initiators.discovery", CHANGES, "      nr_io_queues: 4\n",
	  "      nr_io_queues: 4\n      discovery: true\n", DHCHAP_T1, "" },
	/* b3 reads t2 (rdma) with GPUDirect Storage: the devices stage's gds
	 * check (the fake node has no gds facts: it fails) */
	{ "storage.initiators.gds", CHANGES, "keys.t2 # b3's\n", "keys.t2 # b3's\n      gds: true\n",
	  "keys.t1 # b3's", "keys.t2 # b3's" },
	KC("storage.initiators.mount", CHANGES,
	  "      mount: { path: /mnt/keys, fs: ext4, format: never }\n", ""),
	KC("storage.initiators.mount.path", CHANGES, "/mnt/keys", "/mnt/other"),
	KC("storage.initiators.mount.fs", CHANGES, "fs: ext4", "fs: xfs"),
	KC("storage.initiators.mount.format", CHANGES, "format: never", "format: if-blank"),
	KC("storage.initiators.mount.exec", CHANGES, "format: never", "format: never, exec: true"),
	/* ---- mpi and validation (test_agree_validation.c) ---- */
	KC("mpi", SECTION, NULL, NULL),
	KC("mpi.hostfile", CHANGES, "/etc/llmnet/hostfile", "/etc/llmnet/other"),
	/* the mpi and nccl stages run Open MPI's mpirun: lint refuses them
	 * with mpich, so the hostfile's lines are the effect */
	{ "mpi.format", CHANGES, "format: openmpi", "format: mpich",
	  "  - { stage: mpi, np: 4, timeout: 150s }\n  - { stage: nccl, tool: probe, op: all_reduce, "
	  "bytes: 1GiB, min_busbw: 100GB/s, socket_ifname: eth0, env: { NCCL_ALGO: Ring }, max_latency: 50ms, "
	  "timeout: 300s }\n", "" },
	KC("mpi.mca", CHANGES, "pml: ob1", "pml: ucx"),
	KC("validation", SECTION, NULL, NULL),
	KC("validation.devices.stage", CHANGES, "  - { stage: devices, max_gpu_distance: PIX }\n",
	   ""),
	/* alpha's rxe0 and GPU 4 are SYS apart: refused at NODE, passed at SYS */
	KC("validation.devices.max_gpu_distance", CHANGES, "max_gpu_distance: PIX",
	   "max_gpu_distance: SYS"),
	KC("validation.rping.stage", CHANGES, "  - { stage: rping, count: 10, pairs: ring, timeout: 30s, "
	  "rails: aligned, max_errors: 5 }\n", ""),
	KC("validation.rping.max_errors", CHANGES, "30s, rails: aligned, max_errors: 5",
	   "30s, rails: aligned, max_errors: 0"),
	KC("validation.rping.count", CHANGES, "count: 10", "count: 20"),
	KC("validation.rping.pairs", CHANGES, "pairs: ring, timeout", "pairs: all, timeout"),
	KC("validation.rping.timeout", CHANGES, "timeout: 30s", "timeout: 40s"),
	KC("validation.rping.rails", CHANGES, "30s, rails: aligned", "30s, rails: all"),
	/* both rails in one round: half the rounds, each port on its own lane */
	KC("validation.rping.concurrent_rails", CHANGES, "30s, rails: aligned,",
	   "30s, rails: aligned, concurrent_rails: true,"),
	KC("validation.bandwidth.stage", CHANGES, "  - { stage: bandwidth, tool: ib_write_bw, size: 1MiB, "
	  "pairs: ring, min: 50Gb/s, port_base: 18515, timeout: 60s, rails: aligned, max_errors: 5 }\n",
	  ""),
	KC("validation.bandwidth.max_errors", CHANGES, "60s, rails: aligned, max_errors: 5",
	   "60s, rails: aligned, max_errors: 7"),
	KC("validation.bandwidth.tool", CHANGES, "tool: ib_write_bw", "tool: ib_send_bw"),
	KC("validation.bandwidth.size", CHANGES, "size: 1MiB", "size: 2MiB"),
	KC("validation.bandwidth.pairs", CHANGES, "pairs: ring, min", "pairs: all, min"),
	KC("validation.bandwidth.min", CHANGES, "min: 50Gb/s", "min: 200Gb/s"),
	/* message rate: the second run at msg_size, judged on its Mpps (the
	 * fake's 0.011 at any size) */
	{ "validation.bandwidth.min_msg_rate", CHANGES, "min_msg_rate: 0.001", "min_msg_rate: 1",
	  "min: 50Gb/s,", "min: 50Gb/s, min_msg_rate: 0.001," },
	{ "validation.bandwidth.msg_size", CHANGES, "msg_size: 64B", "msg_size: 8B",
	  "min: 50Gb/s,", "min: 50Gb/s, min_msg_rate: 0.001, msg_size: 64B," },
	KC("validation.bandwidth.port_base", CHANGES, "port_base: 18515", "port_base: 20000"),
	KC("validation.bandwidth.timeout", CHANGES, "timeout: 60s", "timeout: 90s"),
	KC("validation.bandwidth.rails", CHANGES, "60s, rails: aligned", "60s, rails: all"),
	KC("validation.bandwidth.concurrent_rails", CHANGES, "60s, rails: aligned,",
	   "60s, rails: aligned, concurrent_rails: true,"),
	/* cuda asks each node's perftest whether it was built with CUDA (the
	 * fake's is not: the pairs are not run) */
	KC("validation.bandwidth.memory", CHANGES, "tool: ib_write_bw,",
	   "tool: ib_write_bw, memory: cuda,"),
	/* the program by its path there */
	KC("validation.bandwidth.perftest_dir", CHANGES, "tool: ib_write_bw,",
	   "tool: ib_write_bw, perftest_dir: /opt/perftest/bin,"),
	KC("validation.latency.stage", CHANGES, "  - { stage: latency, tool: ib_write_lat, size: 2B, "
	  "iterations: 1000, pairs: ring, rails: aligned, max_typical: 20us, max_p99: 50us, "
	  "port_base: 18615, timeout: 45s, max_errors: 5 }\n", ""),
	KC("validation.latency.max_errors", CHANGES, "45s, max_errors: 5", "45s, max_errors: 9"),
	KC("validation.latency.tool", CHANGES, "tool: ib_write_lat", "tool: ib_send_lat"),
	KC("validation.latency.size", CHANGES, "size: 2B", "size: 64B"),
	KC("validation.latency.iterations", CHANGES, "iterations: 1000", "iterations: 100"),
	KC("validation.latency.pairs", CHANGES, "1000, pairs: ring", "1000, pairs: all"),
	KC("validation.latency.rails", CHANGES, "ring, rails: aligned, max", "ring, rails: all, max"),
	KC("validation.latency.concurrent_rails", CHANGES, "timeout: 45s,",
	   "timeout: 45s, concurrent_rails: true,"),
	KC("validation.latency.max_typical", CHANGES, "max_typical: 20us", "max_typical: 2us"),
	KC("validation.latency.max_p99", CHANGES, "max_p99: 50us", "max_p99: 5us"),
	KC("validation.latency.port_base", CHANGES, "port_base: 18615", "port_base: 21000"),
	KC("validation.latency.timeout", CHANGES, "timeout: 45s", "timeout: 50s"),
	KC("validation.latency.perftest_dir", CHANGES, "tool: ib_write_lat,",
	   "tool: ib_write_lat, perftest_dir: /opt/perftest/bin,"),
	KC("validation.io.stage", CHANGES,
	  "  - { stage: io, size: 256MiB, min: 500MB/s, destructive: false, timeout: 120s }\n", ""),
	KC("validation.io.size", CHANGES, "size: 256MiB", "size: 512MiB"),
	KC("validation.io.min", CHANGES, "min: 500MB/s", "min: 5000MB/s"),
	{ "validation.io.destructive", CHANGES, "destructive: false", "destructive: true",
	  "      mount: { path: /mnt/keys, fs: ext4, format: never }\n", "" },
	/* t1's namespace a disk, unmounted, under a destructive io stage */
	{ "validation.io.destructive_device", ACCEPTS, "destructive: true",
	  "destructive: true, destructive_device: true", "destructive: false", "destructive: true",
	  { "file: /var/lib/nvmet/keys.img, size: 1GiB", "device: /dev/nvme8n1",
	    "      mount: { path: /mnt/keys, fs: ext4, format: never }\n", "" } },
	KC("validation.io.timeout", CHANGES, "timeout: 120s", "timeout: 130s"),
	KC("validation.mpi.stage", CHANGES, "  - { stage: mpi, np: 4, timeout: 150s }\n", ""),
	KC("validation.mpi.np", CHANGES, "np: 4", "np: 3"),
	KC("validation.mpi.timeout", CHANGES, "timeout: 150s", "timeout: 160s"),
	KC("validation.nccl.stage", CHANGES, "  - { stage: nccl, tool: probe, op: all_reduce, bytes: 1GiB, "
	   "min_busbw: 100GB/s, socket_ifname: eth0, env: { NCCL_ALGO: Ring }, max_latency: 50ms, timeout: 300s }\n",
	   ""),
	{ "validation.nccl.tool", CHANGES, TO_NCCL_TESTS, NULL, NULL },
	{ "validation.nccl.tests_dir", CHANGES, "/opt/nt", "/opt/nccl/bin", TO_NCCL_TESTS },
	KC("validation.nccl.op", CHANGES, "op: all_reduce", "op: all_gather"),
	/* a sweep: its last size and its first (--min-bytes) both change */
	KC("validation.nccl.bytes", CHANGES, "bytes: 1GiB", "bytes: 1MiB..2GiB"),
	KC("validation.nccl.min_busbw", CHANGES, "min_busbw: 100GB/s", "min_busbw: 500GB/s"),
	KC("validation.nccl.timeout", CHANGES, "timeout: 300s", "timeout: 310s"),
	KC("validation.nccl.socket_ifname", CHANGES, "socket_ifname: eth0", "socket_ifname: eth1"),
	KC("validation.nccl.env", CHANGES, "NCCL_ALGO: Ring", "NCCL_ALGO: Tree"),
	KC("validation.access.stage", CHANGES, "  - { stage: access, timeout: 25s }\n", ""),
	KC("validation.access.timeout", CHANGES, "timeout: 25s", "timeout: 26s"),
	/* nccl-tests: one mpirun across the nodes (-x NCCL_...), or each node alone */
	{ "validation.nccl.scope", CHANGES, "scope: cluster, scaling: [2, 4], min_efficiency: 90%, "
	  "op: all_reduce, bytes: 1GiB, min_busbw: 100GB/s, socket_ifname: eth0, env: "
	  "{ NCCL_ALGO: Ring },", "scope: node, op: all_reduce, bytes: 1GiB, min_busbw: 100GB/s,",
	  TO_NCCL_CLUSTER },
	{ "validation.nccl.scaling", CHANGES, "scaling: [2, 4]", "scaling: [2, 3]", TO_NCCL_CLUSTER },
	{ "validation.nccl.min_efficiency", CHANGES, "min_efficiency: 90%", "min_efficiency: 0.5",
	  TO_NCCL_CLUSTER },
	KC("validation.nccl.max_latency", CHANGES, "max_latency: 50ms", "max_latency: 5us"),
	/* launcher none: one process a node, started by its agent (issue 26) */
	{ "validation.nccl.launcher", CHANGES, "tests_dir: /opt/nt, ",
	  "tests_dir: /opt/nt, launcher: none, ", TO_NCCL_TESTS },
	{ "validation.nccl.nccl_lib", CHANGES, "/opt/py/nvidia/nccl/lib", "/opt/py3/nvidia/nccl/lib",
	  TO_NCCL_DIRECT },
	{ "validation.nccl.cuda_lib", CHANGES, "/usr/local/cuda/lib64", "/usr/local/cuda-13/lib64",
	  TO_NCCL_DIRECT },
};
#pragma GCC diagnostic pop

#endif
