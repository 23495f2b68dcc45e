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
env | grep -E '^(LD_LIBRARY_PATH|NCCL_|OMPI_|PMIX_)' | sort > "$C/nt-env.$i"
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
	nt_direct
}

# launcher none (issue 26, point 6): NCCL from a Python wheel, no MPI. n1
# and n2 run their stand-in by their agents with the environment llmnet
# derives; n1's library folders are root's, n2's /opt/cuda is uid 4321's.
nt_direct() {
	local i d prog=/opt/nccl-tests/build/all_reduce_perf
	local nlib=/opt/py/site-packages/nvidia/nccl/lib clib=/opt/cuda/lib
	for i in 1 2; do
		mkdir -p "$(root "$i")$nlib" "$(root "$i")$clib"
		d=$nlib
		while [ "$d" != / ]; do chmod 0755 "$(root "$i")$d"; d=$(dirname "$d"); done
		chmod 0755 "$(root "$i")/opt/cuda" "$(root "$i")$clib"
		rm -f "$C/nt-args.$i" "$C/nt-env.$i"
	done
	nt_standin 2 0
	chown 4321 "$(root 2)/opt/cuda"
	{
		printf 'version: 1\ncluster: loop\nssh: { user: root, identity: %s/id_ed25519, known_hosts: %s/known_hosts, connect_timeout: 5s, timeout: 30s }\nnodes:\n' "$C" "$C"
		for i in 1 2; do
			printf '  - { name: n%d, address: %s, gpus: 2 }\n' "$i" "$(cluster_addr "$i")"
		done
		printf 'validation:\n  - { stage: nccl, tool: nccl-tests, scope: node, launcher: none, tests_dir: /opt/nccl-tests/build, nccl_lib: %s, cuda_lib: %s, socket_ifname: lo, env: { NCCL_ALGO: Ring }, bytes: 1KiB..8KiB, timeout: 30s }\n' "$nlib" "$clib"
	} > "$C/ntd.yaml"
	llmnet lint "$C/ntd.yaml"
	check_cmd "lint accepts launcher none with nccl_lib and cuda_lib" rc_is 0
	llmnet validate --dry-run "$C/ntd.yaml"
	check_cmd "--dry-run: started by each agent, no MPI" \
		out_has "nccl: nccl-tests' all_reduce_perf on each GPU node alone, started by its agent (launcher none, no MPI)"
	check_cmd "--dry-run: n1's library path before its program" \
		out_has "  n1: LD_LIBRARY_PATH=$nlib:$clib $prog -b 1024 -e 8192 -f 2 -g 2 -c 1"
	llmnet validate "$C/ntd.yaml" --attempts 1 --report "$C/nt.json"
	check_cmd "n2's refused library folder fails the run (exit 1)" rc_is 1
	check "n1: launcher none passes" "pass" "$(nt_check 1 | cut -d' ' -f2 | cut -d'|' -f1)"
	check "n1's program: one process, -g 2" "-b 1024 -e 8192 -f 2 -g 2 -c 1" \
		"$(cat "$C/nt-args.1" 2>/dev/null)"
	check "n1's program got the library path and the NCCL variables, and no MPI's" \
		"LD_LIBRARY_PATH=$nlib:$clib NCCL_ALGO=Ring NCCL_SOCKET_IFNAME=lo" \
		"$(tr '\n' ' ' < "$C/nt-env.1" 2>/dev/null | sed 's/ $//')"
	check_cmd "the report's command is the program itself, no mpirun" \
		python3 -c 'import json,sys
c = [c for c in json.load(open(sys.argv[1]))["checks"] if c["stage"] == "nccl" and c.get("node") == "n1"]
cmd = c[0]["attempts"][0]["command"]
sys.exit(0 if "LD_LIBRARY_PATH=" in cmd and " /opt/nccl-tests/build/all_reduce_perf -b " in cmd
	    and "mpirun" not in cmd else 1)' "$C/nt.json"
	check_cmd "n2: its library folder uid 4321 owns: refused, naming it" \
		grep -qF "'/opt/cuda' is owned by uid 4321, not root" "$C/nt.json"
	check "n2: refused is a failure" "fail" "$(nt_check 2 | cut -d' ' -f2 | cut -d'|' -f1)"
	check_cmd "n2: nothing ran" test ! -e "$C/nt-args.2"
}

# ---- nccl-tests across the nodes by mpirun (issue 27, point 2) ----
#
# Three nodes with two GPUs each; each node's root holds a stand-in
# nccl-tests sendrecv_perf (root's, 0755 all the way down), and n1, the
# launcher, a stand-in mpirun laid over /usr/bin. The stand-in mpirun
# does what Open MPI's does with the arguments the agent let through: it
# reads --hostfile (in n1's root) or --host, and starts each node's own
# copy of the program (the path below that node's root) with the -x
# variables in its environment, one copy a host giving that host's rank
# lines, the first copy the table. Each copy records its environment, so
# the test sees the NCCL variables reach every node. busbw falls as the
# ranks grow (12.8, 9.6, 6.4 GB/s at 2, 4, 6 ranks) and the time at the
# smallest size is 20 us + 5 us a rank.

# node I's stand-in OP_perf: -h answers usage; RANKS=LIST prints those
# ranks' lines for host nI; TABLE=NP prints the table for NP ranks.
ntc_program() {
	local i=$1 f
	f=$(root "$i")/opt/nccl-tests/build/sendrecv_perf
	cat > "$f" <<SH
#!/bin/bash
# stand-in nccl-tests sendrecv_perf of node n$i (tests/cluster/nccl_tests.sh)
C=$C
i=$i
SH
	cat >> "$f" <<'SH'
if [ "$1" = -h ]; then echo "USAGE: sendrecv_perf"; echo h >> "$C/ntc-h.$i"; exit 0; fi
env | grep '^NCCL_' | sort > "$C/ntc-env.$i"
echo "$*" > "$C/ntc-args.$i"
for r in $RANKS; do
	printf '#  Rank %2d Group  0 Pid  4100%d on %10s device %2d [0x1%d] stand-in\n' $r $r "n$i" $((r % 2)) $r
done
[ -n "$TABLE" ] || exit 0
while [ $# -gt 0 ]; do case $1 in -b) b=$2 ;; -e) e=$2 ;; esac; shift 2; done
bw=$(awk -v n="$TABLE" 'BEGIN { printf "%.2f", 16 - 1.6 * n }')
t=$((20 + 5 * TABLE))
for ((s = b; s <= e; s *= 2)); do
	printf '%12d  %12d     float     sum      -1  %7d.00  %6s  %6s      0  %7d.00  %6s  %6s      0\n' $s $((s / 4)) $t 9.00 $bw $t 9.00 $bw
done
echo "# Out of bounds values : 0 OK"
SH
	chmod 0755 "$f"
}

# n1's stand-in mpirun (a stand-in's overlay folder DIR).
ntc_mpirun() {
	local dir=$1
	mkdir -p "$dir"
	cat > "$dir/mpirun" <<SH
#!/bin/bash
# stand-in mpirun of the launcher n1 (tests/cluster/nccl_tests.sh)
C=$C
SH
	cat >> "$dir/mpirun" <<'SH'
echo "$*" >> "$C/ntc-mpirun"
hosts=() np=0 prog=
while [ $# -gt 0 ] && [ -z "$prog" ]; do
	case $1 in
	--hostfile) while read -r h s; do hosts+=("$h:${s#slots=}"); done < <(grep -v '^#' "$C/node1/root$2"); shift 2 ;;
	--host) IFS=, read -ra hosts <<< "$2"; shift 2 ;;
	-np) np=$2; shift 2 ;;
	-x) export "${2%%=*}=${2#*=}"; shift 2 ;;
	--mca) shift 3 ;;
	--allow-run-as-root) shift ;;
	*) prog=$1; shift ;;
	esac
done
rel=${prog#"$C/node1/root"} r=0
echo "# nThread 1 nGpus 1 minBytes 1 maxBytes 1 step: 2(factor) warmup iters: 5 iters: 20 validation: 1"
echo "# Using devices"
for hs in "${hosts[@]}"; do
	h=${hs%%:*} n=${hs##*:} list=
	for ((k = 0; k < n; k++)); do list+="$r "; r=$((r + 1)); done
	RANKS=$list "$C/node${h#n}/root$rel" "$@" || exit 1
done
[ "$r" -eq "$np" ] || { echo "stand-in mpirun: $r slots for $np ranks" >&2; exit 1; }
echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
first=${hosts[0]%%:*}
TABLE=$np RANKS= "$C/node${first#n}/root$rel" "$@" | grep -v '^#  Rank'
SH
	chmod 0755 "$dir/mpirun"
}

ntc_spec() {	# EXTRA: more keys of the stage
	local i
	printf 'version: 1\ncluster: loop\nssh: { user: root, identity: %s/id_ed25519, known_hosts: %s/known_hosts, connect_timeout: 5s, timeout: 30s }\nnodes:\n' "$C" "$C"
	for i in 1 2 3; do
		printf '  - { name: n%d, address: %s, gpus: 2 }\n' "$i" "$(cluster_addr "$i")"
	done
	printf 'mpi: { hostfile: /etc/llmnet/hostfile }\nvalidation:\n'
	printf '  - { stage: nccl, tool: nccl-tests, op: sendrecv, tests_dir: /opt/nccl-tests/build, bytes: 1KiB..8KiB, min_busbw: 5GB/s, socket_ifname: lo, env: { NCCL_ALGO: Ring }, timeout: 30s%s }\n' "$1"
}

# the nccl check NAME as "STATUS VALUE|REASON" from the JSON report (VALUE to 4 digits)
ntc_check() {
	python3 -c 'import json,sys
c = [c for c in json.load(open(sys.argv[1]))["checks"] if c["name"] == sys.argv[2]]
v = c[0]["value"] if c else None
print("%s %s|%s" % (c[0]["status"], "none" if v is None else "%.4g" % v, c[0]["reason"] or "") if c else "none")' "$C/ntc.json" "$1"
}

scenario_nccl_tests_cluster() {
	local i prog=/opt/nccl-tests/build/sendrecv_perf
	new_cluster nccltc 3 || { fail "cluster up"; return; }
	for i in 1 2 3; do
		chmod 0755 "$(root "$i")"
		mkdir -p "$(root "$i")/opt/nccl-tests/build" "$(root "$i")/etc/llmnet"
		chmod 0755 "$(root "$i")/opt" "$(root "$i")/opt/nccl-tests" "$(root "$i")/opt/nccl-tests/build"
		ntc_program "$i"
	done
	printf 'n1 slots=2\nn2 slots=2\nn3 slots=2\n' > "$(root 1)/etc/llmnet/hostfile"
	rm -rf "$C/node1/usrbin" "$C/node1/usrbin.work"
	ntc_mpirun "$C/node1/usrbin"
	cluster_stop_node "$C" 1
	cluster_start_node "$C" 1 "$C/node1/usrbin" || { fail "n1 with its stand-in mpirun"; return; }
	ntc_spec ", max_latency: 60us, scaling: [1, 2, 3], min_efficiency: 70%" > "$C/ntc.yaml"
	llmnet lint "$C/ntc.yaml"
	check_cmd "lint accepts nccl-tests across nodes with scaling" rc_is 0
	llmnet validate --dry-run "$C/ntc.yaml"
	check_cmd "--dry-run: one mpirun across the GPU nodes" \
		out_has "nccl: nccl-tests' $prog by mpirun across the GPU nodes, 6 ranks (no pairs)"
	check_cmd "--dry-run: each scaling count" out_has "  scaling: again on the first 2 GPU nodes"
	llmnet validate "$C/ntc.yaml" --attempts 1 --report "$C/ntc.json"
	check_cmd "scaling below min_efficiency fails the run (exit 1)" rc_is 1
	check "every node's copy checked first (-h)" "h h h" \
		"$(cat "$C/ntc-h.1" "$C/ntc-h.2" "$C/ntc-h.3" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
	check "the full run: the hostfile, a rank a GPU, typed -x, the program below n1's root" \
		"--allow-run-as-root --hostfile /etc/llmnet/hostfile -np 6 -x NCCL_SOCKET_IFNAME=lo -x NCCL_ALGO=Ring $(root 1)$prog -b 1024 -e 8192 -f 2 -g 1 -c 1" \
		"$(head -n 1 "$C/ntc-mpirun" 2>/dev/null)"
	for i in 1 2 3; do
		check "n$i's copy ran with the NCCL variables" "NCCL_ALGO=Ring NCCL_SOCKET_IFNAME=lo" \
			"$(tr '\n' ' ' < "$C/ntc-env.$i" 2>/dev/null | sed 's/ $//')"
	done
	check "the cluster's check: busbw at 8 KiB over 6 ranks" "pass 6.4|" "$(ntc_check "nccl sendrecv")"
	check "collective latency: 50 us at 1 KiB" "pass 50|" "$(ntc_check "nccl sendrecv latency")"
	check "scaling, 1 node: by --host, the base" "pass 1|" "$(ntc_check "nccl sendrecv scaling 1 nodes")"
	check "scaling, 2 nodes: 9.6 of 12.8" "pass 0.75|" "$(ntc_check "nccl sendrecv scaling 2 nodes")"
	check "scaling, 3 nodes: 6.4 of 12.8, below 70%" \
		"fail 0.5|efficiency 0.5 (busbw 6.40 GB/s on 3 nodes, 12.80 GB/s on 1) is below 0.7" \
		"$(ntc_check "nccl sendrecv scaling 3 nodes")"
	check_cmd "the sweep's runs went by --host" grep -qF -- "--host n1:2,n2:2 -np 4 " "$C/ntc-mpirun"
	check_cmd "the text names the failed count" out_has "nccl sendrecv scaling 3 nodes: efficiency 0.5"
	# the old name still runs, per node, with a warning naming the new form
	printf 'version: 1\ncluster: loop\nnodes:\n  - { name: n1, address: 127.0.0.1, gpus: 2 }\nvalidation:\n  - { stage: nccl, tool: all_reduce_perf, tests_dir: /opt/nccl-tests/build }\n' > "$C/old.yaml"
	llmnet lint "$C/old.yaml"
	check_cmd "lint accepts all_reduce_perf (exit 0)" rc_is 0
	check_cmd "with a warning naming the new form" \
		out_has "old.yaml:6:26: warning: tool 'all_reduce_perf' is the old name of 'tool: nccl-tests, op: all_reduce, scope: node': write that"
}
