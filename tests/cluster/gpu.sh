# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: GPU facts from NVML over real ssh and
# agents (issue 26, point 1). n2 shows a GPU in /proc and has the faulty
# stand-in NVML (tests/unit/standin/nvml_standin.c, NOT NVML) where the
# agent points the program under --root; n3 shows a GPU and has no NVML;
# n1 shows none.
#  - facts pushes llmnet-gpu-facts to n2 and n3 only, and n2's facts are
#    NVML's (5 GPUs, bus ids in sysfs's form), n3's /proc's with the reason;
#  - a second facts pushes nothing again;
#  - the devices stage fails exactly n2's GPUs 1-4, each named by index
#    and bus id, passes its GPU 0, and says which source counted.

gpu_node() {	# node I shows a GPU in /proc; VARIANT: its stand-in NVML, or none
	local d=$(root "$1")/proc/driver/nvidia/gpus/0000:1b:00.0
	mkdir -p "$d"
	printf 'Model: \t\t NVIDIA H100 80GB HBM3\n' > "$d/information"
	[ -z "${2:-}" ] || install -D -m 0644 "$BUILD/standin/nvml/$2/libnvidia-ml.so.1" \
		"$(root "$1")/usr/lib/llmnet-fixture/libnvidia-ml.so.1"
}
gpu_program() { echo "$(root "$1")/var/lib/llmnet/bin/llmnet-gpu-facts"; }
# the -o json facts answer's NODE.gpus.KEY, in Python's notation
gpus_at() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["nodes"][sys.argv[2]]["facts"]["gpus"]; print(eval("d" + sys.argv[3]))' "$C/out" "$1" "$2"
}
# the -o json validate report's check NAME of node NODE: "STATUS REASON"
# (the report starts at its first '{': progress lines come before it)
gpu_check() {
	python3 -c 'import json,sys; t=open(sys.argv[1]).read(); d=json.loads(t[t.index("{"):])
print(*next(("%s %s" % (c["status"], c["reason"]),) for c in d["checks"] if c.get("node") == sys.argv[2] and c["name"] == sys.argv[3]))' "$C/out" "$1" "$2"
}

scenario_gpu_facts() {
	new_cluster gpu || { fail "cluster up"; return; }
	gpu_node 2 faulty
	gpu_node 3
	sed -i -e 's/^  - { name: n2, address: \([^,]*\), gpus: 1 }/  - { name: n2, address: \1, gpus: 5 }/' \
		-e 's/^  - { name: n1, address: \([^,]*\), gpus: 1 }/  - { name: n1, address: \1 }/' "$C/spec.yaml"
	printf 'validation:\n  - { stage: devices }\n' >> "$C/spec.yaml"
	llmnet -o json facts "$C/spec.yaml"
	check_cmd "facts exits 0" rc_is 0
	check_cmd "the program was pushed to n2 and n3" test -x "$(gpu_program 2)" -a -x "$(gpu_program 3)"
	check_cmd "... not to n1, which shows no GPU" test ! -e "$(gpu_program 1)"
	check_cmd "n2's GPUs are NVML's" test "$(gpus_at n2 '["source"]')" = nvml
	check_cmd "n2: NVML's count" test "$(gpus_at n2 '["count"]')" = 5
	check_cmd "n2: bus ids in sysfs's form" test "$(gpus_at n2 '["devices"][4]["bus_id"]')" = 0000:9d:00.0
	check_cmd "n2: NVLinks up" test "$(gpus_at n2 '["devices"][4]["nvlink_up"]')" = 17
	check_cmd "n3's are /proc's" test "$(gpus_at n3 '["source"]')" = proc
	check_cmd "n3 says why NVML was not used" \
		eval 'gpus_at n3 "[\"nvml\"]" | grep -q "NVML is not usable: cannot load"'
	touch -d '1 minute ago' "$(gpu_program 2)"
	touch "$C/marker"
	llmnet facts "$C/spec.yaml"
	check_cmd "a second facts pushes nothing again" test ! "$(gpu_program 2)" -nt "$C/marker"
	llmnet -o json validate "$C/spec.yaml"
	check_cmd "validate exits 1 (n2's faulty GPUs)" rc_is 1
	check_cmd "n1, without GPUs, has no GPU check" not eval 'gpu_check n1 gpus 2>/dev/null'
	check_cmd "n2's count is NVML's" eval '[ "$(gpu_check n2 gpus)" = "pass counted by NVML" ]'
	check_cmd "n2's GPU 0 passes" eval 'gpu_check n2 "gpu 0 (0000:1b:00.0)" | grep -q "^pass"'
	check_cmd "n2's GPU 1: a row remap pending" \
		eval 'gpu_check n2 "gpu 1 (0000:43:00.0)" | grep -q "^fail a row remap is pending"'
	check_cmd "n2's GPU 2: row remapping failed" \
		eval 'gpu_check n2 "gpu 2 (0000:52:00.0)" | grep -q "^fail row remapping failed"'
	check_cmd "n2's GPU 3: ECC errors" \
		eval 'gpu_check n2 "gpu 3 (0000:61:00.0)" | grep -q "^fail 2 volatile uncorrected ECC errors"'
	check_cmd "n2's GPU 4: an NVLink down" \
		eval 'gpu_check n2 "gpu 4 (0000:9d:00.0)" | grep -q "^fail 17 of 18 NVLinks up"'
	check_cmd "n3's count is /proc's, and says why" \
		eval 'gpu_check n3 gpus | grep -q "^pass counted in /proc/driver/nvidia/gpus; NVML not used"'
}
