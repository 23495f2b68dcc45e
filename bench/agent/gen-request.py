#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The benchmark's desired state: 64 subsystems x 4 file namespaces, each
# subsystem allowing the same 64 host NQNs, served on 2 ports (tcp, rdma).
import json, sys

n_sub, n_ns, n_hosts = 64, 4, 64
hosts = ["nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-%012d" % h for h in range(n_hosts)]
targets = []
for s in range(n_sub):
    targets.append({
        "nqn": "nqn.2024-04.com.example:bench.t%03d" % s,
        "transport": "tcp" if s % 2 == 0 else "rdma",
        "address": "10.77.0.11",
        "service": 4420,
        "hosts": hosts,
        "namespaces": [{"nsid": i + 1, "file": "/var/lib/nvmet/t%03d-%d.img" % (s, i), "size": 1048576}
                       for i in range(n_ns)],
    })
json.dump({"protocol": 1, "cluster": "bench", "targets": targets}, sys.stdout)
