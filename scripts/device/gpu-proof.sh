#!/bin/bash
# SPDX-License-Identifier: MIT
# The prepared real-GPU run of issue 26 (point 6), for a lent GPU machine
# (one H200 in a microVM: CUDA 13, NVML, PyTorch, pip's nvidia-nccl-cu13,
# no RDMA device, no mpirun). No test needs it; run it from the
# repository root with OUT set to an empty folder:
#   OUT=/tmp/out scripts/device/gpu-proof.sh
# It writes, under $OUT, each step's output and a summary.txt of what ran:
#  1. what the machine is: nvidia-smi -q, nvidia-smi topo -m (recorded as
#     seen: the PCIe tree of a microVM is virtual);
#  2. the NVML helper (agents/probes/gpu_facts.c) against the machine's
#     libnvidia-ml.so.1, and NVML's own common-ancestor answers for every
#     GPU pair (python ctypes) to cross-check the topology reader with;
#  3. the topology reader: the agent's facts (GPUs, PCIe paths, RDMA
#     ports: none expected) with the helper installed where the agent
#     looks for it, when build/llmnet-agent is there (make -j16);
#  4. llmnet's NCCL probe as one rank without MPI (scripts/device/
#     mpi_one_rank.h stands in for mpi.h), every op, one size and a sweep,
#     against the wheel's libnccl.so.2 and the CUDA runtime;
#  5. nccl-tests' all_reduce_perf by the agent with launcher none's typed
#     environment (run --env LD_LIBRARY_PATH=...), when NCCL_TESTS_DIR
#     names a root-owned build of it.
# Each step is bounded and its failure recorded; the script goes on.
set -u
: "${OUT:?set OUT to the folder for the results}"
cd "$(dirname "$0")/../.."
mkdir -p "$OUT"
sum=$OUT/summary.txt
note() { echo "$*" | tee -a "$sum"; }
step() {	# NAME SECONDS CMD...: CMD's output into $OUT/NAME.txt
	local name=$1 secs=$2 rc
	shift 2
	timeout "$secs" "$@" > "$OUT/$name.txt" 2>&1
	rc=$?
	note "$name: exit $rc"
	return $rc
}

note "gpu-proof $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), kernel $(uname -r)"
step nvidia-smi 60 nvidia-smi -q
step nvidia-smi-topo 60 nvidia-smi topo -m

# the wheel's NCCL and a CUDA runtime, as nccl_lib and cuda_lib name them
py=$(command -v python3 || command -v python)
nccl_lib=$("$py" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
if [ ! -e "$nccl_lib/libnccl.so.2" ]; then
	nccl_lib=$(find / -xdev -name libnccl.so.2 -path '*-packages*' 2>/dev/null | head -n 1)
	nccl_lib=${nccl_lib%/libnccl.so.2}
fi
cudart=$(find / -xdev \( -name 'libcudart.so.1[0-9]*' -o -name libcudart.so \) 2>/dev/null | sort | head -n 1)
cuda_lib=$(dirname "$cudart")
note "nccl_lib: $nccl_lib"
note "cuda_lib: $cuda_lib ($cudart)"
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())' > "$OUT/torch.txt" 2>&1

# 2. the NVML helper, and NVML's common ancestor of every GPU pair
cc -O2 -I. -o "$OUT/llmnet-gpu-facts" agents/probes/gpu_facts.c -ldl > "$OUT/gpu-facts-build.txt" 2>&1
step gpu-facts 60 "$OUT/llmnet-gpu-facts"
"$py" - > "$OUT/nvml-ancestors.txt" 2>&1 <<'PY'
import ctypes
names = {0: "INTERNAL", 10: "SINGLE (PIX)", 20: "MULTIPLE (PXB)", 30: "HOSTBRIDGE (PHB)",
         40: "NODE", 50: "SYSTEM (SYS)"}
nv = ctypes.CDLL("libnvidia-ml.so.1")
assert nv.nvmlInit_v2() == 0
n = ctypes.c_uint()
nv.nvmlDeviceGetCount_v2(ctypes.byref(n))
devs = []
for i in range(n.value):
    d = ctypes.c_void_p()
    nv.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(d))
    bus = ctypes.create_string_buffer(96)
    nv.nvmlDeviceGetPciInfo_v3(d, bus)
    devs.append(d)
    print("gpu", i, "pci", bus.raw[:32].split(b"\0")[0].decode())
for i in range(len(devs)):
    for j in range(i + 1, len(devs)):
        lv = ctypes.c_int()
        r = nv.nvmlDeviceGetTopologyCommonAncestor(devs[i], devs[j], ctypes.byref(lv))
        print("pair", i, j, "rc", r, names.get(lv.value, lv.value))
print("gpus", len(devs), "(one GPU: no pair to cross-check)" if len(devs) < 2 else "")
PY
note "nvml-ancestors: $(tail -n 1 "$OUT/nvml-ancestors.txt")"

# 3. the topology reader: the agent's facts, the helper where it looks
# (installed into /var/lib/llmnet only on a machine with a GPU: never on a
# developer's host)
if [ -x build/llmnet-agent ] && [ "$(id -u)" = 0 ] && nvidia-smi -L > /dev/null 2>&1; then
	install -D -m 0755 build/probes/gpu_facts /var/lib/llmnet/bin/llmnet-gpu-facts 2>/dev/null ||
		install -D -m 0755 "$OUT/llmnet-gpu-facts" /var/lib/llmnet/bin/llmnet-gpu-facts
	step agent-facts 120 build/llmnet-agent facts
	"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({k: d[k] for k in d if "gpu" in k or "topo" in k or "rdma" in k or "pci" in k}, indent=1))' \
		"$OUT/agent-facts.txt" > "$OUT/agent-facts-gpu.txt" 2>&1
else
	note "agent-facts: not run (no build/llmnet-agent, not root, or no GPU)"
fi

# 4. the NCCL probe, one rank, no MPI: every op, one size, then a sweep
mkdir -p "$OUT/shim"
cp scripts/device/mpi_one_rank.h "$OUT/shim/mpi.h"
if cc -O2 -I"$OUT/shim" -o "$OUT/nccl-probe-1" agents/probes/nccl_mpi_probe.c -ldl \
	> "$OUT/nccl-probe-build.txt" 2>&1; then
	for op in all_reduce all_gather reduce_scatter broadcast reduce; do
		step "nccl-$op" 120 env LD_LIBRARY_PATH="$nccl_lib:$cuda_lib" "$OUT/nccl-probe-1" \
			--op "$op" --bytes 1073741824 --nccl-lib "$nccl_lib/libnccl.so.2" \
			${cudart:+--cudart-lib "$cudart"}
		note "  $(grep -E '^(nccl version|result|error)' "$OUT/nccl-$op.txt" | tr '\n' ' ')"
	done
	step nccl-sweep 180 env LD_LIBRARY_PATH="$nccl_lib:$cuda_lib" "$OUT/nccl-probe-1" \
		--op all_reduce --min-bytes 8 --bytes 1073741824 --nccl-lib "$nccl_lib/libnccl.so.2" \
		${cudart:+--cudart-lib "$cudart"}
	note "  $(grep -E '^(result|error)' "$OUT/nccl-sweep.txt" | tr '\n' ' ')"
else
	note "nccl-probe build failed (see nccl-probe-build.txt)"
fi

# 5. nccl-tests by the agent, launcher none's environment
if [ -n "${NCCL_TESTS_DIR:-}" ] && [ -x build/llmnet-agent ]; then
	step nccl-tests-direct 300 build/llmnet-agent run --timeout 240 \
		--env "LD_LIBRARY_PATH=$nccl_lib:$cuda_lib" -- "$NCCL_TESTS_DIR/all_reduce_perf" \
		-b 8 -e 1073741824 -f 2 -g 1 -c 1
else
	note "nccl-tests-direct: not run (set NCCL_TESTS_DIR to a root-owned nccl-tests build)"
fi
note "done $(date -u +%Y-%m-%dT%H:%M:%SZ)"
