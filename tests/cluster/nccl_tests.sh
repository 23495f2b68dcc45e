# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: nccl_tests (issue 14, point 6), the nccl
# stage with tool all_reduce_perf over real ssh and agents. Four nodes with
# two GPUs each; in each node's root, /opt/nccl-tests/build (root's, 0755
# all the way down) holds a stand-in all_reduce_perf, a script that prints
# nccl-tests' text report for the sizes it is given (-b, -e doubling by -f)
# and records its arguments:
#  - n1's is correct and fast: pass;
#  - n2's reports #wrong 5 at its largest size: fail, naming the size;
#  - n3 has none: "not run", naming the node and the path;
#  - n4's /opt/nccl-tests is owned by uid 4321: the agent refuses it with
#    the path and the owner, and nothing runs (no record of its arguments).
# --dry-run prints the absolute path each node runs; the exit is 1.

# The stand-in all_reduce_perf of node I: wrong elements at the largest size.
nt_standin() {
	local i=$1 wrong=$2 f
	f=$(root "$i")/opt/nccl-tests/build/all_reduce_perf
	cat > "$f" <<SH
#!/bin/bash
# stand-in nccl-tests all_reduce_perf of node n$i (tests/cluster/nccl_tests.sh)
echo "\$*" > "$C/nt-args.$i"
wrong=$wrong
SH
	cat >> "$f" <<'SH'
while [ $# -gt 0 ]; do
	case $1 in -b) b=$2 ;; -e) e=$2 ;; -f) fac=$2 ;; -g) g=$2 ;; esac
	shift 2
done
echo "# nThread 1 nGpus $g minBytes $b maxBytes $e step: $fac(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0"
echo "#"
echo "# Using devices"
for ((r = 0; r < g; r++)); do
	printf '#  Rank %2d Group  0 Pid  4100%d on      stand-in device %2d [0x1%d] NVIDIA H100 80GB HBM3\n' $r $r $r $r
done
echo "#"
echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
echo "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "
for ((s = b; s <= e; s *= fac)); do
	w=0
	[ "$s" -eq "$e" ] && w=$wrong
	printf '%12d  %12d     float     sum      -1    30.00   12.80   12.80  %5s    30.30   12.70   12.70      0\n' $s $((s / 4)) $w
done
[ "$wrong" -eq 0 ] && echo "# Out of bounds values : 0 OK" || echo "# Out of bounds values : $wrong FAILED"
echo "# Avg bus bandwidth    : 12.80"
echo "#"
SH
	chmod 0755 "$f"
}

nt_spec() {
	local i
	printf 'version: 1\ncluster: loop\nssh: { user: root, identity: %s/id_ed25519, known_hosts: %s/known_hosts, connect_timeout: 5s, timeout: 30s }\nnodes:\n' "$C" "$C"
	for i in 1 2 3 4; do
		printf '  - { name: n%d, address: %s, gpus: 2 }\n' "$i" "$(cluster_addr "$i")"
	done
	printf 'validation:\n  - { stage: nccl, tool: all_reduce_perf, tests_dir: /opt/nccl-tests/build, bytes: 1KiB..8KiB, min_busbw: 10GB/s, timeout: 30s }\n'
}

# node I's nccl check as "STATUS|REASON" from the JSON report
nt_check() {
	python3 -c 'import json,sys
c = [c for c in json.load(open(sys.argv[1]))["checks"] if c["stage"] == "nccl" and c.get("node") == sys.argv[2]]
print("%d %s|%s" % (len(c), c[0]["status"], c[0]["reason"] or "") if c else "0")' "$C/nt.json" "n$1"
}

scenario_nccl_tests() {
	local i prog=/opt/nccl-tests/build/all_reduce_perf
	new_cluster nccltests 4 || { fail "cluster up"; return; }
	for i in 1 2 3 4; do
		chmod 0755 "$(root "$i")"
		mkdir -p "$(root "$i")/opt/nccl-tests/build"
		chmod 0755 "$(root "$i")/opt" "$(root "$i")/opt/nccl-tests" "$(root "$i")/opt/nccl-tests/build"
	done
	nt_standin 1 0
	nt_standin 2 5
	rm -rf "$(root 3)/opt/nccl-tests/build"
	nt_standin 4 0
	chown 4321 "$(root 4)/opt/nccl-tests"
	nt_spec > "$C/nt.yaml"
	llmnet lint "$C/nt.yaml"
	check_cmd "lint accepts tool all_reduce_perf with tests_dir" rc_is 0
	llmnet validate --dry-run "$C/nt.yaml"
	check_cmd "--dry-run: nccl-tests on each GPU node" \
		out_has "nccl: nccl-tests' all_reduce_perf on each GPU node alone (no pairs)"
	check_cmd "--dry-run: n1's absolute program path and arguments" \
		out_has "  n1: $prog -b 1024 -e 8192 -f 2 -g 2 -c 1"
	check_cmd "--dry-run: n4's too" out_has "  n4: $prog -b 1024 -e 8192 -f 2 -g 2 -c 1"
	llmnet validate "$C/nt.yaml" --attempts 1 --report "$C/nt.json"
	check_cmd "a wrong result fails the run (exit 1)" rc_is 1
	check "n1: correct and above min_busbw: pass" "1 pass|" "$(nt_check 1)"
	check "n1's program got the stage's arguments" "-b 1024 -e 8192 -f 2 -g 2 -c 1" \
		"$(cat "$C/nt-args.1" 2>/dev/null)"
	check "n2: #wrong at the largest size: fail, naming it" \
		"1 fail|the collective result is wrong: 5 wrong elements at 8192 bytes" "$(nt_check 2)"
	check "n3: absent: not run, naming node and path" \
		"1 not run|'$prog' is not installed on 'n3' (nccl.tests_dir)" "$(nt_check 3)"
	check_cmd "n4: a directory uid 4321 owns: refused with the path and the owner" \
		grep -qF "'/opt/nccl-tests' is owned by uid 4321, not root" "$C/nt.json"
	check "n4: refused is a failure, not a pass" "fail" "$(nt_check 4 | cut -d' ' -f2 | cut -d'|' -f1)"
	check_cmd "n4: nothing ran" test ! -e "$C/nt-args.4"
	check_cmd "the text names the absent program" out_has "is not installed on 'n3'"
}
