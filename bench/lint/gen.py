#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Write the lint benchmark's spec: 4,096 nodes written out one by one (no
# ranges), 8 GPUs and 8 RDMA ports each, 512 targets of one namespace,
# an initiator on every node (512 with a mount), every validation stage.
#   bench/lint/gen.py OUT.yaml [NODES]
import sys

out = sys.argv[1]
nodes = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
targets = max(1, nodes // 8)
w = []
w.append("version: 1\ncluster: bench\n")
w.append("ssh: { user: root, identity: ~/.ssh/id_ed25519, parallel: 64, timeout: 60s }\n")
w.append("nodes:\n")
for i in range(nodes):
    a, b = divmod(i + 1, 250)
    w.append("  - name: gpu%04d\n    address: 10.%d.%d.%d\n    gpus: 8\n    rdma:\n"
             % (i + 1, 100 + a // 250, a % 250, b + 1))
    for k in range(8):
        w.append("      - { device: mlx5_%d, port: 1, ip: 10.%d.%d.%d, gid_index: 3, "
                 "link_layer: ethernet, mtu: 4096, min_rate: 400Gb/s }\n"
                 % (k, 16 + k, a, b + 1))
w.append("storage:\n  targets:\n")
for t in range(targets):
    w.append("    - nqn: nqn.2024-04.com.example:bench.t%04d\n      node: gpu%04d\n"
             "      transport: rdma\n      service: 4420\n      namespaces:\n" % (t + 1, t + 1))
    # one namespace: a mounted target has one, so the mount means it
    for n in range(1):
        w.append("        - { nsid: %d, file: /var/lib/nvmet/t%04d-%d.img, size: 64GiB }\n"
                 % (n + 1, t + 1, n + 1))
w.append("  initiators:\n")
# A namespace is mounted on one node (ext4 and xfs are single-host): the
# first initiator of each target mounts it, the others only connect.
for i in range(nodes):
    mount = ", mount: { path: /mnt/data, fs: xfs, format: if-blank }" if i < targets else ""
    w.append("    - { node: gpu%04d, target: nqn.2024-04.com.example:bench.t%04d%s }\n"
             % (i + 1, i % targets + 1, mount))
w.append("mpi: { hostfile: /etc/llmnet/hostfile, mca: { pml: ucx } }\n")
w.append("validation:\n  - { stage: devices }\n  - { stage: rping }\n"
         "  - { stage: bandwidth, min: 0.9 of rate }\n  - { stage: io, size: 1GiB }\n"
         "  - { stage: mpi }\n  - { stage: nccl, min_busbw: 100GB/s }\n")
with open(out, "w") as f:
    f.write("".join(w))
