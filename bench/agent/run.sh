#!/bin/bash
# SPDX-License-Identifier: MIT
# Converged `apply` on a fixture tree with 64 subsystems x 4 namespaces,
# 2 ports and 64 allowed hosts, against the floor: a plain stat walk of the
# same tree (find -ls: one lstat per entry). Prints CPU and wall time per
# run for both and their ratio. Usage: bench/agent/run.sh [BUILD] [RUNS]
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build} runs=${2:-20}
agent=$build/llmnet-agent
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tests/fixtures/agent/build-tree.sh tests/fixtures/agent/node-target.tree "$tmp/root"
python3 bench/agent/gen-request.py > "$tmp/req.json"
"$agent" -q --budget-ms 600000 --root "$tmp/root" apply < "$tmp/req.json" > "$tmp/first.json"
python3 - "$agent" "$tmp" "$runs" <<'PY'
import json, os, resource, subprocess, sys, time
agent, tmp, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
root = tmp + "/root"
first = json.load(open(tmp + "/first.json"))["summary"]
entries = sum(len(d) + len(f) for _, d, f in os.walk(root))

def measure(cmd, stdin=None):
    best_wall, cpu_total, wall_total = 1e9, 0.0, 0.0
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        with open(stdin) if stdin else open(os.devnull) as f:
            p = subprocess.run(cmd, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        assert p.returncode == 0, cmd
        cpu_total += cpu; wall_total += wall; best_wall = min(best_wall, wall)
    return cpu_total / runs, wall_total / runs, p.stdout

cpu_a, wall_a, out = measure([agent, "-q", "--budget-ms", "600000", "--root", root, "apply"], tmp + "/req.json")
s = json.loads(out)["summary"]
assert s["create"] + s["change"] + s["remove"] + s["error"] == 0, s
cpu_f, wall_f, _ = measure(["find", root + "/sys/kernel/config/nvmet", root + "/var/lib", "-ls"])
print("tree: %d entries; first apply: %d creates; converged apply: %d ok" % (entries, first["create"], s["ok"]))
print("%-28s %10s %10s" % ("per run (mean of %d)" % runs, "cpu ms", "wall ms"))
print("%-28s %10.1f %10.1f" % ("converged apply", cpu_a * 1e3, wall_a * 1e3))
print("%-28s %10.1f %10.1f" % ("stat walk (find -ls)", cpu_f * 1e3, wall_f * 1e3))
print("%-28s %10.2f %10.2f" % ("ratio apply / floor", cpu_a / cpu_f, wall_a / wall_f))
PY
