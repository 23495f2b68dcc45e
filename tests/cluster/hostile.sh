# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: a hostile node (tests/cluster/relay.sh)
# cannot hold a run. n2's sshd runs every command through the relay; its
# agent's `version` reports another build, so llmnet pushes, and the
# upload (the data as a command's stdin) never answers. `llmnet facts`
# ends anyway, names n2 and the upload that timed out, and n1 and n3
# answer. The honest relay beside it is the control: n2 answers as usual.
# Every run is under `timeout 60`, so a regression fails instead of hanging.
#
# hostile_answers: n2's facts answer is 6 MiB (then 3 MiB) of [{},{},...],
# the issue's reproduction (1.65 GB, then 2.5 GB resident before the
# answer limits; about 15 MB after): refused for n2 alone, on its size then
# on its structure, with the controller's peak memory bounded; the cache
# keeps n2's last good facts, so `facts --cached` with n2 silent pays
# nothing; an answer with unknown fields, at the top and nested, and a
# mistyped one, is cached without them. The honest relay is the control.
#
# hostile_cut_upload: 1 MiB of n2's agent upload reaches the node, then its
# input ends and the link stops: n2 times out, and the node's shell has
# removed the partial staging file from the login home (the old `cat >`
# left it there). The first, honest push is the control.
#
# hostile_probe_end (reproduction 7b): stand-in rping and ib_write_bw on
# three nodes; n2's ib_write_bw server cannot run while its client still
# reports a good figure. The pair n2 serves fails though its client
# measured, naming n2's server; n2 is named as a node that could not run
# its own end; the pair without n2 passes. All ends running is the control.
#
# hostile_mpicc (reproduction 8): n2's mpicc leaves its own file in place
# of the MPI probe; n1 and n3 build it with the real mpicc. n2's build is
# named as differing from the cluster's, mpirun (a stand-in that records
# its start) never starts, and n2's file reaches no other node. The
# control: every node's real mpicc, whose builds agree, and mpirun starts.

# llmnet under a hard bound; rc 124 or 137 means the bound ended it
llmnet_bounded() {
	timeout -k 5 60 "$LLMNET" --no-color "$@" > "$C/out" 2>&1
	rc=$?
	cat "$C/out" >> "$C/all.out"
}
ended_by_itself() { [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; }
answered() { grep -qE "^$1 \(" "$C/out" && ! grep -A3 "^$1 (" "$C/out" | grep -qiE 'fail|timed out'; }

scenario_hostile_upload() {
	local zeros
	zeros=$(printf '0%.0s' {1..64})
	new_cluster hostile || { fail "cluster up"; return; }
	# a short step bound: the hung upload ends after it, not after 30 s
	sed -i 's/ timeout: 30s/ timeout: 5s/' "$C/spec.yaml"
	relay_node "$C" 2
	llmnet_bounded facts "$C/spec.yaml"
	check_cmd "honest relay: facts exits 0" rc_is 0
	check_cmd "honest relay: n2 answers" answered n2
	check_cmd "honest relay: the agent was pushed to n2" \
		test -x "$(root 2)/var/lib/llmnet/bin/llmnet-agent"
	relay_rules "$C" 2 "version $zeros" 'hang : > "\$HOME/\.llmnet-agent\.upload\.'
	llmnet_bounded facts "$C/spec.yaml"
	check_cmd "hung upload: facts ends by itself" ended_by_itself
	check_cmd "hung upload: facts exits non-zero" not rc_is 0
	check_cmd "hung upload: n2 failed on the upload's timeout" \
		grep -qE "timed out after 5\.000s on 'n2' (running|sending input to) 'umask 177 && set -C && : > " "$C/out"
	check_cmd "hung upload: n1 answers" answered n1
	check_cmd "hung upload: n3 answers" answered n3
	check_cmd "the relay ran the hung upload" test "$(relay_count "$C" 2)" -gt 0
	relay_clear "$C" 2
}

# SIGTERM while n2's agent session hangs. Once (the control): new work
# stops, n2's request in flight runs out its bound (ssh.timeout 5s) and the
# run ends by itself. Twice: the second ends the run at once, with the
# interrupted run's code (1).
gone() { ! kill -0 "$1" 2>/dev/null; }

# start facts in the background ($pid) and wait (60 s at most) until n2's
# hung session is running
facts_hung_on_n2() {
	local i
	"$LLMNET" --no-color facts "$C/spec.yaml" > "$C/out" 2>&1 &
	pid=$!
	for i in $(seq 600); do
		[ "$(relay_count "$C" 2)" -gt "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# wait (60 s at most) for $pid to end; its exit code in rc
wait_ended() {
	local i
	for i in $(seq 600); do
		gone "$pid" && break
		sleep 0.1
	done
	gone "$pid" || kill -KILL "$pid"
	wait "$pid"
	rc=$?
	cat "$C/out" >> "$C/all.out"
}

scenario_hostile_second_signal() {
	local pid
	new_cluster hostile2 || { fail "cluster up"; return; }
	sed -i 's/ timeout: 30s/ timeout: 5s/' "$C/spec.yaml"
	relay_node "$C" 2 'hang llmnet-agent"? session$'
	facts_hung_on_n2 0
	check_cmd "once: n2's session reached the relay" test "$(relay_count "$C" 2)" -gt 0
	kill -TERM "$pid"
	wait_ended
	check_cmd "once: n2's request in flight ran to its bound" \
		out_has "timed out after 5.000s on 'n2' running agent 'version'"
	check_cmd "once: the run ends by itself, not 0" not rc_is 0
	check_cmd "once: not the second signal's ending" not_out_has "interrupted again"
	check_cmd "once: n1 answered" grep -qE "^n1 \(" "$C/out"

	sed -i 's/ timeout: 5s/ timeout: 30s/' "$C/spec.yaml"
	facts_hung_on_n2 "$(relay_count "$C" 2)"
	check_cmd "twice: n2's session reached the relay" test $? -eq 0
	kill -TERM "$pid"
	sleep 0.5	# two signals sent at once may arrive as one
	kill -TERM "$pid"
	wait_ended
	check_cmd "twice: llmnet is gone" gone "$pid"
	check_cmd "twice: the second SIGTERM ended it, saying so" \
		out_has "llmnet: interrupted again: ending now"
	check_cmd "twice: exit code 1: interrupted" rc_is 1
	relay_clear "$C" 2
}

# ---- answers are untrusted input (issue 32, point 2) ----

# llmnet under a hard bound, as llmnet_bounded; its peak resident memory
# (the kernel's VmHWM, as wait4's ru_maxrss gives it, in KiB) in $hwm
llmnet_hwm() {
	python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$C/hwm" timeout -k 5 60 "$LLMNET" --no-color "$@" > "$C/out" 2>&1
	rc=$?
	hwm=$(cat "$C/hwm")
	cat "$C/out" >> "$C/all.out"
}
hwm_below() { [ "$hwm" -lt "$1" ]; }	# KiB
FACTS_JSON() { echo "$LLMNET_STATE_DIR/loop.facts.json"; }
# python over n2's cached facts: cached_n2 'EXPR' [ARG] (f: n2's facts,
# n1: n1's; ARG is sys.argv[3])
cached_n2() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["nodes"]
f, n1 = d["n2"]["facts"], d["n1"]["facts"]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$(FACTS_JSON)" "$@"
}
# A facts answer of [{},{},...] of about $2 bytes into file $1: the
# issue's reproduction (json-c made a hash table per {}: 1.6 GB for 6 MiB)
empty_objects() {
	python3 -c 'import sys
n = int(sys.argv[2]) // 3
open(sys.argv[1], "w").write("{\"protocol\":3,\"hostname\":\"n2\",\"rdma\":[" + "{}," * n + "{}]}")' "$1" "$2"
}

scenario_hostile_answers() {
	local honest
	new_cluster hostans || { fail "cluster up"; return; }
	relay_node "$C" 2
	llmnet_hwm facts "$C/spec.yaml"
	honest=$hwm
	check_cmd "honest relay: facts exits 0" rc_is 0
	check_cmd "honest relay: n2 answers" answered n2
	check_cmd "honest relay: n2's facts cached whole (its fields are n1's)" \
		cached_n2 'sorted(f) == sorted(n1) and f["nvmet"] is not None and len(f["netdevs"]) > 0'
	check_cmd "honest relay: the cache is small" test "$(stat -c %s "$(FACTS_JSON)")" -lt 65536
	cp "$(FACTS_JSON)" "$C/facts.before"

	# the issue's 6 MiB: refused on the frame's header, n2 alone
	empty_objects "$C/bomb6.json" $((6 << 20))
	relay_rules "$C" 2 "facts $C/bomb6.json"
	llmnet_hwm facts "$C/spec.yaml"
	check_cmd "6 MiB of {}: facts ends by itself" ended_by_itself
	check_cmd "6 MiB of {}: exits non-zero" not rc_is 0
	check_cmd "6 MiB of {}: n2 is named over the facts limit" \
		grep -qE "agent on 'n2' sent an answer of 629[0-9]{4} bytes over the facts limit of 4194304" "$C/out"
	check_cmd "6 MiB of {}: n1 answers" answered n1
	check_cmd "6 MiB of {}: n3 answers" answered n3
	check_cmd "6 MiB of {}: peak memory under 64 MiB (was 1.6 GB)" hwm_below 65536
	check_cmd "6 MiB of {}: peak memory within 16 MiB of the honest run's" hwm_below $((honest + 16384))

	# under the size limit: refused on its structure, before json-c builds it
	empty_objects "$C/bomb3.json" $((3 << 20))
	relay_rules "$C" 2 "facts $C/bomb3.json"
	llmnet_hwm facts "$C/spec.yaml"
	check_cmd "3 MiB of {}: exits non-zero" not rc_is 0
	check_cmd "3 MiB of {}: n2 is named over the containers limit" \
		out_has "agent on 'n2' sent an answer over the facts limit of 8192 objects and arrays"
	check_cmd "3 MiB of {}: n1 and n3 answer" answered n1
	check_cmd "3 MiB of {}: n3 answers" answered n3
	check_cmd "3 MiB of {}: peak memory within 16 MiB of the honest run's" hwm_below $((honest + 16384))
	check_cmd "neither hostile answer reached the cache: n2's entry as it was" \
		cached_n2 'd["n2"] == json.load(open(sys.argv[3]))["nodes"]["n2"]' "$C/facts.before"

	# --cached with n2 silent pays nothing of it
	cluster_stop_node "$C" 2
	llmnet_hwm facts --cached "$C/spec.yaml"
	check_cmd "--cached, n2 silent: exits 0" rc_is 0
	check_cmd "--cached: n2 shows its last good facts" node_says n2 "cached"
	check_cmd "--cached: peak memory within 16 MiB of the honest run's" hwm_below $((honest + 16384))
	cluster_start_node "$C" 2

	# unknown fields, at the top and nested, and a mistyped one: dropped
	python3 -c 'import json, sys
f = json.load(open(sys.argv[1]))["nodes"]["n2"]["facts"]
f["implant"] = {"payload": "x" * 4000}
f["netdevs"][0]["implant_nested"] = [1, 2, 3]
f["nvmet"]["hosts_extra"] = ["nqn.evil"]
f["kernel"] = {"not": "a string"}
json.dump(f, open(sys.argv[2], "w"))' "$C/facts.before" "$C/unknown.json"
	relay_rules "$C" 2 "facts $C/unknown.json"
	llmnet facts "$C/spec.yaml"
	check_cmd "unknown fields: facts exits 0" rc_is 0
	check_cmd "unknown fields: n2 answers" answered n2
	check_cmd "unknown fields: n2's cache is what it sent, less those, kernel null" \
		cached_n2 'f == dict(json.load(open(sys.argv[3]))["nodes"]["n2"]["facts"], kernel=None)' \
		"$C/facts.before"
	check_cmd "unknown fields: none in the cache" \
		not grep -qE 'implant|hosts_extra' "$(FACTS_JSON)"
	check_cmd "unknown fields: the mistyped one is null" cached_n2 'f["kernel"] is None'
	check_cmd "unknown fields: the rest of n2's facts kept" \
		cached_n2 'sorted(f) == sorted(n1) and sorted(f["netdevs"][0]) == sorted(n1["netdevs"][0])'
	llmnet -o json facts "$C/spec.yaml"
	check_cmd "unknown fields: none in -o json" not_out_has implant
	relay_clear "$C" 2
}

# hostile_changes: n2's plan and apply answers gain unknown fields at their
# top, in each change and in the summary (relay rule implant): `llmnet
# plan -o json` and `llmnet apply -o json` carry none of them, while n2's
# known changes are there. The honest relay is the control.
scenario_hostile_changes() {
	new_cluster hostchg || { fail "cluster up"; return; }
	relay_node "$C" 2
	llmnet -o json plan "$C/spec.yaml"
	check_cmd "honest relay: plan -o json names n2's changes" out_has '"nvme_connection"'
	check_cmd "honest relay: no implant" not_out_has implant
	relay_rules "$C" 2 "implant plan"
	llmnet -o json plan "$C/spec.yaml"
	check_cmd "implanted plan: n2's changes still there" out_has '"nvme_connection"'
	check_cmd "implanted plan: none in plan -o json" not_out_has implant
	check_cmd "the relay implanted the plan answer" test "$(relay_count "$C" 2)" -gt 0
	relay_rules "$C" 2 "implant apply"
	llmnet -o json apply "$C/spec.yaml"
	check_cmd "implanted apply: none in apply -o json" not_out_has implant
	check_cmd "implanted apply: n2's changes still there" out_has '"nvme_connection"'
	relay_clear "$C" 2
}

# hostile_run: n2's validate run answers (relay rule implant run) gain
# unknown fields ("implant", a "verdict" of pass), exit 1, and carry an
# output whose error line holds a window-title change, an erase-line, a
# green PASS and a NUL (relay.py's FORGED), with stand-in rping on every
# node (ends_standin). The pairs with n2 fail on that line; the JSON
# report's reasons hold it with each control byte as '?', the text after
# the NUL included, and none of the unknown fields. The honest relay is
# the control: every pair passes.
run_reasons() {	# the rping checks of report $1: "PAIR STATUS REASON" lines, repr'd
	python3 -c 'import json, sys
for c in json.load(open(sys.argv[1]))["checks"]:
    if c["stage"] == "rping" and c.get("pair"):
        print("-".join(c["pair"]), c["status"], repr(c.get("reason") or ""))' "$1"
}
no_control_in_reasons() {
	python3 -c 'import json, sys
t = "".join(c.get("reason") or "" for c in json.load(open(sys.argv[1]))["checks"])
sys.exit(1 if any(ch in t for ch in "\x00\x07\x1b") else 0)' "$1"
}

scenario_hostile_run() {
	new_cluster hostrun || { fail "cluster up"; return; }
	ends_nodes 2 || return
	RELAY_USRBIN=$C/node2/usrbin relay_node "$C" 2 || { fail "n2 behind the relay"; return; }
	ends_spec | grep -v 'stage: bandwidth' > "$C/run.yaml"
	llmnet validate "$C/run.yaml" --attempts 1 --report "$C/honest.json"
	check_cmd "honest relay: validate exits 0" rc_is 0
	check "honest relay: the 3 rping pairs pass" 3 "$(run_reasons "$C/honest.json" | grep -c ' pass ')"
	relay_rules "$C" 2 "implant run"
	llmnet validate "$C/run.yaml" --attempts 1 --report "$C/forged.json"
	run_reasons "$C/forged.json" > "$C/forged.checks"
	check_cmd "forged run answers: validate exits 1" rc_is 1
	check "forged run answers: the 2 pairs with n2 fail" 2 \
		"$(grep -E '^(n2-|[^ ]*-n2 )' "$C/forged.checks" | grep ' fail ' | cut -d' ' -f1 | sort -u | wc -l)"
	check_cmd "forged run answers: the pair without n2 passes" grep -qE '^n3-n1 pass |^n1-n3 pass ' "$C/forged.checks"
	check_cmd "forged run answers: the reason is n2's line, control bytes as '?', nothing cut at the NUL" \
		grep -qF "rping: error ?]0;implant?\\r?[2K?[32mPASS? hidden" "$C/forged.checks"
	check_cmd "forged run answers: no NUL, BEL or ESC in any reason" no_control_in_reasons "$C/forged.json"
	check_cmd "forged run answers: no unknown field in the report" \
		not grep -qE 'implant-top|"verdict"' "$C/forged.json"
	check_cmd "the relay forged the run answers" test "$(relay_count "$C" 2)" -gt 0
	relay_clear "$C" 2
}

# ---- an upload cut short leaves no partial file (issue 32) ----

# the staging files of llmnet run PID for node NODE in the login home
# (the cluster's nodes share it: the name holds the run's PID and node)
staged() { compgen -G "$HOME/.llmnet-agent.upload.$1.$2.*" > /dev/null; }

# llmnet facts in the background, its own PID in $pid (the staging file's
# name holds it), waited for (60 s at most, then killed)
facts_pid() {
	"$LLMNET" --no-color facts "$C/spec.yaml" > "$C/out" 2>&1 &
	pid=$!
	wait_ended
}

scenario_hostile_cut_upload() {
	local zeros pid
	zeros=$(printf '0%.0s' {1..64})
	new_cluster hostcut || { fail "cluster up"; return; }
	sed -i 's/ timeout: 30s/ timeout: 5s/' "$C/spec.yaml"
	# the control: the first push (no agent on a new cluster's nodes)
	# through the honest relay
	relay_node "$C" 2
	facts_pid
	check_cmd "honest upload: n2 answers" answered n2
	check_cmd "honest upload: the agent was pushed to n2" \
		test -x "$(root 2)/var/lib/llmnet/bin/llmnet-agent"
	check_cmd "honest upload: no staging file left" not staged "$pid" n2
	# 1 MiB of the agent's upload reaches the node, then its input ends
	relay_rules "$C" 2 "version $zeros" 'cut 1048576 : > "\$HOME/\.llmnet-agent\.upload\.'
	facts_pid
	check_cmd "cut upload: facts ends by itself, not 0" test "$rc" -ne 0 -a "$rc" -ne 137
	check_cmd "cut upload: n2 failed on the upload's timeout" \
		grep -qE "timed out after 5\.000s on 'n2' (running|sending input to) 'umask 177" "$C/out"
	check_cmd "cut upload: n1 answers" answered n1
	check_cmd "cut upload: n3 answers" answered n3
	check_cmd "cut upload: no partial file left in the home" not staged "$pid" n2
	relay_clear "$C" 2
}

# ---- a probe end that did not run (issue 32, reproduction 7b) ----

# Stand-in rping and ib_write_bw of node I into DIR, laid over /usr/bin in
# that node's sshd's mount namespace (as tests/cluster/rails.sh does; this
# machine has neither tool). The server waits (15 s at most) for its
# client to be done, then prints perftest's server report; the client
# prints its own; both are the recorded perftest 4.5 reports
# (tests/fixtures/probes). $C/ends/broken.I present: node I's
# ib_write_bw server cannot run (exit 1, nothing measured), its client
# still reports a good figure: the node would pass on its peer's word.
ends_standin() {
	local dir=$1 i=$2 st=$C/ends fx=$PWD/tests/fixtures/probes
	mkdir -p "$dir" "$st"
	cat > "$dir/rping" <<SH
#!/bin/bash
# stand-in rping of node n$i (tests/cluster/hostile.sh)
[ "\$1" = -s ] && { sleep 0.5; exit 0; }
echo "ping data: rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ"
SH
	cat > "$dir/ib_write_bw" <<SH
#!/bin/bash
# stand-in ib_write_bw of node n$i (tests/cluster/hostile.sh)
PATH=/usr/sbin:/usr/bin:/sbin:/bin
me=$i st=$st fx=$fx
SH
	cat >> "$dir/ib_write_bw" <<'SH'
# perftest 4.5-0.17's --help (Debian 12): no --bind_source_ip, so the
# pairs run without -R (issue 27); its --help exits 1
if [ "$1" = --help ]; then
	echo "  -R, --rdma_cm  Connect QPs with rdma_cm and run test on those QPs"
	exit 1
fi
last=${!#}
while [ $# -gt 0 ]; do
	case $1 in -p) port=$2; shift ;; esac
	shift
done
key=$st/done.$port
if [[ $last =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
	echo "$me client" >> "$st/ran"
	touch "$key"
	cat "$fx/ib_write_bw-gbits.client.txt"
	exit 0
fi
if [ -e "$st/broken.$me" ]; then
	echo " Couldn't listen to port $port" >&2
	exit 1
fi
echo "$me server" >> "$st/ran"
for _ in $(seq 150); do [ -e "$key" ] && break; sleep 0.1; done
rm -f "$key"
cat "$fx/ib_write_bw-gbits.server.txt"
SH
	chmod 0755 "$dir/rping" "$dir/ib_write_bw"
}

# Nodes 1 to 3 with rxe0 (a GID each) and their stand-ins over /usr/bin;
# node SKIP (optional) is left for the caller to restart (behind a relay).
ends_nodes() {
	local i ib
	for i in 1 2 3; do
		ib=$(root "$i")/sys/class/infiniband
		mkdir -p "$ib"
		[ "$i" = 1 ] || cp -a "$(root 1)/sys/class/infiniband/rxe0" "$ib/"
		printf '0000:0000:0000:0000:0000:ffff:0a4d:%04x\n' $((10 + i)) > "$ib/rxe0/ports/1/gids/1"
		ends_standin "$C/node$i/usrbin" "$i"
		[ "$i" = "${1:-0}" ] && continue
		cluster_stop_node "$C" "$i"
		cluster_start_node "$C" "$i" "$C/node$i/usrbin" ||
			{ fail "node $i with its stand-in"; return 1; }
	done
}

ends_spec() {
	local i
	printf 'version: 1\ncluster: loop\nssh: { user: root, identity: %s/id_ed25519, known_hosts: %s/known_hosts, connect_timeout: 5s, timeout: 30s }\nnodes:\n' "$C" "$C"
	for i in 1 2 3; do
		printf '  - { name: n%d, address: %s, rdma: [ { device: rxe0, ip: 10.77.0.%d } ] }\n' \
			"$i" "$(cluster_addr "$i")" $((10 + i))
	done
	printf 'validation:\n  - { stage: rping, count: 1, timeout: 30s }\n'
	printf '  - { stage: bandwidth, tool: ib_write_bw, min: 0.1Gb/s, timeout: 30s }\n'
}

# node I's checks in the JSON report: "STAGE PAIR STATUS" lines
ends_checks() {
	python3 -c 'import json, sys
for c in json.load(open(sys.argv[1]))["checks"]:
    if c["stage"] == "bandwidth":
        print(c.get("pair") and "-".join(c["pair"]), c["status"], c.get("value"), c.get("reason") or "")' "$1"
}

scenario_hostile_probe_end() {
	new_cluster hostend || { fail "cluster up"; return; }
	ends_nodes || return
	ends_spec > "$C/ends.yaml"
	llmnet validate "$C/ends.yaml" --attempts 1 --report "$C/honest.json"
	check_cmd "both ends ran on every pair: validate exits 0" rc_is 0
	ends_checks "$C/honest.json" > "$C/honest.checks"
	check "the stand-ins ran: on 3 nodes, both ends each" \
		"1 client,1 server,2 client,2 server,3 client,3 server" \
		"$(sort -u "$C/ends/ran" | paste -sd,)"
	check "both ends ran: the 3 bandwidth pairs pass" 3 "$(grep -cE '^n[0-9]-n[0-9] pass 0.21' "$C/honest.checks")"
	touch "$C/ends/broken.2"
	llmnet validate "$C/ends.yaml" --attempts 1 --report "$C/broken.json"
	ends_checks "$C/broken.json" > "$C/broken.checks"
	check_cmd "n2's server cannot run: validate exits 1" rc_is 1
	check_cmd "the pair n2 serves fails, naming n2's server" \
		grep -qE "ib_write_bw server on 'n2' failed" "$C/out"
	check_cmd "n2 is named: it could not run its own end" \
		out_has "'n2' could not run its own end of bandwidth"
	# the pair whose server is n2 (its client n3 measured 0.21 Gb/s, over
	# min) does not pass on n3's word
	check_cmd "the pair n2 serves fails, though its client measured" \
		grep -qxF "n2-n3 fail 0.21 ib_write_bw server on 'n2' failed (exit status 1)" "$C/broken.checks"
	check "only that pair fails" 1 "$(grep -cE '^n[0-9]-n[0-9] fail' "$C/broken.checks")"
	check_cmd "the pair without n2 still passes" grep -qE '^n3-n1 pass 0.21' "$C/broken.checks"
	rm -f "$C/ends/broken.2"
}

# ---- a faked mpicc on one node (issue 32, reproduction 8) ----

# Node I's /usr/bin overlay for the mpi stage: a stand-in mpirun that
# records that it started (and runs nothing), and, with FAKE, an mpicc that
# leaves its own file in place of the probe (what a compromised node's
# mpicc can do); without FAKE the node's real mpicc builds the probe.
mpi_standin() {
	local dir=$1 i=$2 fake=${3:-}
	mkdir -p "$dir" "$C/mpi"
	cat > "$dir/mpirun" <<SH
#!/bin/bash
# stand-in mpirun of node n$i (tests/cluster/hostile.sh)
echo "n$i \$*" >> "$C/mpi/started"
exit 1
SH
	if [ -n "$fake" ]; then
		cat > "$dir/mpicc" <<SH
#!/bin/bash
# faked mpicc of node n$i (tests/cluster/hostile.sh): its own file
echo "n$i \$*" >> "$C/mpi/faked"
while [ \$# -gt 0 ]; do [ "\$1" = -o ] && out=\$2; shift; done
printf '#!/bin/sh\necho owned by n$i\n' > "\$out" && chmod 0755 "\$out"
SH
	fi
	chmod 0755 "$dir"/*
}

mpi_nodes() {	# FAKE_NODE (0: none)
	local i
	for i in 1 2 3; do
		rm -rf "$C/node$i/usrbin" "$C/node$i/usrbin.work"
		mpi_standin "$C/node$i/usrbin" "$i" "$([ "$i" = "$1" ] && echo fake)"
		cluster_stop_node "$C" "$i"
		cluster_start_node "$C" "$i" "$C/node$i/usrbin" || return 1
	done
}

scenario_hostile_mpicc() {
	new_cluster hostmpi || { fail "cluster up"; return; }
	llmnet apply "$C/spec.yaml"
	check_cmd "apply exits 0 (the hostfile installed)" rc_is 0
	printf 'validation:\n  - { stage: mpi, timeout: 60s }\n' >> "$C/spec.yaml"
	mpi_nodes 0 || { fail "nodes with their stand-ins"; return; }
	llmnet validate "$C/spec.yaml" --stages mpi --attempts 1 --report "$C/honest.json"
	cp "$C/out" "$C/honest.out"
	check_cmd "honest mpicc: no build differs" not out_has "differs from the cluster's"
	check_cmd "honest mpicc: mpirun started" test -s "$C/mpi/started"
	# the builds agreed, so the one-rank preflights ran (the stand-in
	# mpirun runs nothing: they fail, which is not what is tested here)
	check "honest mpicc: all 6 preflights started" 6 "$(python3 -c 'import json, sys
print(sum(1 for c in json.load(open(sys.argv[1]))["checks"] if c["name"] == "mpirun preflight"))' "$C/honest.json")"
	rm -f "$C/mpi/started"
	mpi_nodes 2 || { fail "nodes with their stand-ins"; return; }
	llmnet validate "$C/spec.yaml" --stages mpi --attempts 1 --report "$C/faked.json"
	check_cmd "faked mpicc: it ran on n2" grep -q "^n2 " "$C/mpi/faked"
	check_cmd "faked mpicc: validate exits 1" rc_is 1
	check_cmd "faked mpicc: n2's build is named, mpirun does not start" \
		grep -qE "MPI probe built on 'n2' differs from the cluster's \(sha256 [0-9a-f]{12}.*mpirun does not start" "$C/out"
	check_cmd "faked mpicc: n1's and n3's builds are not blamed" \
		not grep -qE "built on 'n[13]' differs" "$C/out"
	check_cmd "faked mpicc: mpirun never started, on any node" test ! -e "$C/mpi/started"
	check_cmd "faked mpicc: n2's file reached no other node" \
		not grep -rqs "owned by n2" "$(root 1)/var/lib/llmnet" "$(root 3)/var/lib/llmnet"
}
