#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Loopback-cluster scenarios: real libssh, real sshd, real host-key checks,
# each node's agent on its own fixture root. Every scenario asserts on the
# node trees, not only on llmnet's output.
#
#   tests/cluster/run.sh BUILD [SCENARIO...]
#
# Writes "PASSED FAILED" to BUILD/check/cluster.counts. Without SCENARIO
# names the list runs in two halves side by side (below).
set -u
cd "$(dirname "$0")/../.."
. tests/cluster/lib.sh
. tests/lib/tap.sh
tap_init cluster

BUILD=${1:-build}
shift || true
LLMNET=$PWD/$BUILD/llmnet
export LLMNET_AGENT=$PWD/$BUILD/llmnet-agent
WORK=$(mktemp -d /tmp/llmnet-cluster.XXXXXX)
export LLMNET_STATE_DIR=$WORK/state
T1=nqn.2024-04.io.llmnet:n1.t1
clusters=()

cleanup() {
	local c
	for c in "${clusters[@]}"; do cluster_down "$c"; done
	[ "$TAP_FAIL" -eq 0 ] && rm -rf "$WORK"
}
trap cleanup EXIT

# One assertion: check_cmd DESCRIPTION COMMAND... (tests/lib/tap.sh).

root() { echo "$C/node$1/root"; }
cfg() { echo "$C/node$1/root/sys/kernel/config/nvmet"; }
hostnqn() { cat "$C/node$1/root/etc/nvme/hostnqn" 2>/dev/null; }
allowed() { [ -L "$(cfg 1)/subsystems/$T1/allowed_hosts/$1" ]; }
not_allowed() { ! allowed "$1"; }
subsystem_exists() { [ -d "$(cfg 1)/subsystems/$T1" ]; }
port_links() { ls "$(cfg 1)"/ports/*/subsystems/ 2>/dev/null | grep -qxF "$T1"; }
connected() { grep -qxF "$T1" "$(root "$1")"/sys/class/nvme/*/subsysnqn 2>/dev/null; }
not_connected() { ! connected "$1"; }
hostfile_is() {	# node, expected content
	[ "$(grep -v '^#' "$(root "$1")/etc/llmnet/hostfile" 2>/dev/null)" = "$2" ]
}
no_hostfile() { [ ! -e "$(root "$1")/etc/llmnet/hostfile" ]; }
unchanged_since() { [ -z "$(find "$(root "$1")" -newer "$2" -print -quit)" ]; }
# the same, but for the agent binary itself (pushed to every node contacted)
unchanged_but_agent() {
	[ -z "$(find "$(root "$1")" -newer "$2" ! -path '*/var/lib/llmnet/bin*' ! -path '*/var/lib/llmnet' ! -path '*/var/lib' -print -quit)" ]
}
foreign_intact() {
	[ -d "$(cfg 1)/subsystems/nqn.2014-08.org.example:foreign.target/namespaces/1" ] &&
	[ -L "$(cfg 1)/ports/7/subsystems/nqn.2014-08.org.example:foreign.target" ] &&
	[ -d "$(cfg 1)/hosts/nqn.2014-08.org.example:foreign.host" ] &&
	[ -f "$(root 1)/srv/foreign.img" ] &&
	grep -qxF nqn.2014-08.org.example:other.target "$(root 2)/sys/class/nvme/nvme0/subsysnqn"
}
# node I's agent session processes (one per run at most)
agent_pids() { pgrep -f "$(root "$1")/var/lib/llmnet/bin/llmnet-agent session"; }
# node I's session agent has the node lock open: its apply waits for it
agent_waits_for_lock() {
	local p
	for p in $(agent_pids "$1"); do
		ls -l "/proc/$p/fd" 2>/dev/null | grep -qF "$(root "$1")/run/llmnet.lock" && return 0
	done
	return 1
}
out_has() { grep -qF -- "$1" "$C/out"; }
says_converged() { grep -qE '; converged\.$' "$C/out"; }	# the recap's last word
not() { ! "$@"; }
running() { pgrep -f "$1" >/dev/null; }
not_out_has() { ! out_has "$1"; }
node_says() { grep -A1 "^$1 (" "$C/out" | grep -qF -- "$2"; }	# facts: NODE's first line
not_out_has_file() { ! grep -qxF -- "$2" "$1"; }
llmnet() { "$LLMNET" --no-color "$@" > "$C/out" 2>&1; rc=$?; cat "$C/out" >> "$C/all.out"; return 0; }
rc_is() { [ "$rc" -eq "$1" ]; }

HOSTFILE3='n1 slots=1
n2 slots=1
n3 slots=1'

# A fresh cluster of N nodes with fixture trees, in $C.
new_cluster() {
	local n=${2:-3} i
	# one cluster at a time: they share the 127.0.1.x addresses
	[ -n "${C:-}" ] && cluster_down "$C"
	C=$WORK/$1
	mkdir -p "$C"
	# a new cluster's nodes are met for the first time, as its known_hosts
	# is new: the last cluster's host identity pins (issue 32) are not
	# theirs, nor its last-known facts, which stand in for pins not yet made
	rm -f "$LLMNET_STATE_DIR/loop.hostident.json" "$LLMNET_STATE_DIR/loop.facts.json"
	clusters+=("$C")
	cluster_up "$C" "$n" || return 1
	for i in $(seq "$n"); do cluster_build_tree "$C" "$i" || return 1; done
	cluster_spec "$C" "$n" > "$C/spec.yaml"
}

scenario_fresh_apply() {
	new_cluster fresh || { fail "cluster up"; return; }
	llmnet apply "$C/spec.yaml"
	check_cmd "apply exits 0" rc_is 0
	check_cmd "recap says converged" out_has "; converged."
	check_cmd "n2 and n3 got a host identity" test -n "$(hostnqn 2)" -a -n "$(hostnqn 3)"
	check_cmd "n1 exports the subsystem" subsystem_exists
	check_cmd "the subsystem is linked to a port" port_links
	check_cmd "n1 allows n2" allowed "$(hostnqn 2)"
	check_cmd "n1 allows n3" allowed "$(hostnqn 3)"
	check_cmd "n2 is connected" connected 2
	check_cmd "n3 is connected" connected 3
	check_cmd "every node has the hostfile" hostfile_is 1 "$HOSTFILE3"
	check_cmd "n3's hostfile" hostfile_is 3 "$HOSTFILE3"
	check_cmd "foreign objects untouched" foreign_intact
	check_cmd "agent was pushed to every node" test -x "$(root 3)/var/lib/llmnet/bin/llmnet-agent"
}

scenario_converged() {
	new_cluster converged || { fail "cluster up"; return; }
	llmnet apply "$C/spec.yaml"
	check_cmd "first apply exits 0" rc_is 0
	sleep 1.1	# mtimes have 1 s granularity on some filesystems
	touch "$C/marker"
	llmnet apply "$C/spec.yaml"
	check_cmd "re-apply exits 0" rc_is 0
	check_cmd "re-apply reports 0 changed" out_has "apply: 0 changed on 3 nodes"
	check_cmd "n1: no file written" unchanged_since 1 "$C/marker"
	check_cmd "n2: no file written" unchanged_since 2 "$C/marker"
	check_cmd "n3: no file written" unchanged_since 3 "$C/marker"
	llmnet plan "$C/spec.yaml" --detailed-exitcode
	check_cmd "plan --detailed-exitcode exits 0" rc_is 0
	check_cmd "plan says no changes" out_has "Plan: 0 to create, 0 to change, 0 to remove"
}

scenario_replace() {
	local old new m2
	new_cluster replace || { fail "cluster up"; return; }
	llmnet apply "$C/spec.yaml"
	check_cmd "first apply exits 0" rc_is 0
	old=$(hostnqn 3)
	# Reinstall n3: new host key, new host NQN, empty state.
	cluster_stop_node "$C" 3
	cluster_rekey_node "$C" 3
	cluster_build_tree "$C" 3 33
	cluster_start_node "$C" 3
	sleep 1.1
	touch "$C/marker"
	llmnet apply "$C/spec.yaml"
	check_cmd "changed host key: exit 4" rc_is 4
	check_cmd "refusal names the node and --accept-replaced" out_has "refusing 'n3': host key changed (known_hosts has SHA256:"
	check_cmd "refusal shows the new fingerprint" out_has "server offers SHA256:"
	check_cmd "n1 untouched while refused" unchanged_since 1 "$C/marker"
	check_cmd "old NQN still allowed while refused" allowed "$old"
	m2=$C/marker2; touch "$m2"
	llmnet apply "$C/spec.yaml" --accept-replaced n3
	new=$(hostnqn 3)
	check_cmd "accepted apply exits 0" rc_is 0
	check_cmd "the run log records the accepted key" grep -q "accepted replaced host key of 'n3'" "$LLMNET_STATE_DIR/loop.log"
	check_cmd "n3 has a new host NQN" test -n "$new" -a "$new" != "$old"
	check_cmd "n1 allows the new NQN" allowed "$new"
	check_cmd "n1 dropped the old NQN" not_allowed "$old"
	check_cmd "n3 is connected again" connected 3
	check_cmd "n3 has the hostfile" hostfile_is 3 "$HOSTFILE3"
	check_cmd "n2 got no needless change" unchanged_since 2 "$m2"
	llmnet apply "$C/spec.yaml"
	check_cmd "next apply: 0 changed, no flag needed" out_has "apply: 0 changed on 3 nodes"
	check_cmd "next apply exits 0" rc_is 0
}

scenario_killed_mid_apply() {
	new_cluster killed || { fail "cluster up"; return; }
	# n2's agent dies (as a crash would) before its 3rd change.
	cluster_stop_node "$C" 2
	sed -i "s|^SetEnv .*|& LLMNET_FAILPOINT=3|" "$C/node2/sshd_config"
	cluster_start_node "$C" 2
	llmnet apply "$C/spec.yaml"
	check_cmd "apply with a dying node exits non-zero" test "$rc" -ne 0
	check_cmd "recap reports n2 failed" grep -qE '^n2 +: .*failed=1' "$C/out"
	check_cmd "n1 finished" subsystem_exists
	check_cmd "n3 finished" connected 3
	check_cmd "n3 has the hostfile" hostfile_is 3 "$HOSTFILE3"
	cluster_stop_node "$C" 2
	sed -i "s| LLMNET_FAILPOINT=3||" "$C/node2/sshd_config"
	cluster_start_node "$C" 2
	llmnet apply "$C/spec.yaml"
	check_cmd "next run converges" rc_is 0
	check_cmd "n2 connected after the next run" connected 2
	check_cmd "n2 has the hostfile" hostfile_is 2 "$HOSTFILE3"
}

scenario_unreachable_initiator() {
	local n3
	new_cluster unreach || { fail "cluster up"; return; }
	llmnet apply "$C/spec.yaml"
	check_cmd "first apply exits 0" rc_is 0
	n3=$(hostnqn 3)
	cluster_stop_node "$C" 3
	llmnet plan "$C/spec.yaml"
	check_cmd "plan marks n3's access blocked: unreachable" out_has "blocked: unreachable ('n3' kept)"
	check_cmd "plan exits 4 (unreachable)" rc_is 4
	llmnet apply "$C/spec.yaml"
	check_cmd "apply exits 4" rc_is 4
	check_cmd "recap shows n3 unreachable" grep -qE '^n3 +: .*unreachable=1' "$C/out"
	check_cmd "n3's access is not revoked" allowed "$n3"
	check_cmd "n2 still allowed" allowed "$(hostnqn 2)"
	cluster_start_node "$C" 3
}

scenario_limit() {
	new_cluster limit || { fail "cluster up"; return; }
	touch "$C/marker"
	llmnet apply "$C/spec.yaml" --limit n1
	check_cmd "--limit apply exits 1 (not converged)" rc_is 1
	check_cmd "others are pending (outside --limit)" out_has "pending (outside --limit)"
	check_cmd "n1 was changed" subsystem_exists
	check_cmd "n2 untouched (but for the agent push)" unchanged_but_agent 2 "$C/marker"
	check_cmd "n3 untouched (but for the agent push)" unchanged_but_agent 3 "$C/marker"
	llmnet apply "$C/spec.yaml" --limit n1,n9
	check_cmd "--limit with an unknown node is a usage error" rc_is 64
	llmnet apply "$C/spec.yaml"
	check_cmd "full apply converges" rc_is 0
	check_cmd "n2 connected" connected 2
}

scenario_sigint() {
	local pid lockpid
	new_cluster sigint || { fail "cluster up"; return; }
	llmnet facts "$C/spec.yaml"	# pushes the agents, so the lock dir exists
	mkdir -p "$(root 1)/run"
	# Hold n1's node lock: its apply waits in flight while we interrupt.
	flock -o "$(root 1)/run/llmnet.lock" sleep 60 &
	lockpid=$!
	sleep 0.3
	"$LLMNET" --no-color apply "$C/spec.yaml" --parallel 1 > "$C/out" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		agent_waits_for_lock 1 && break
		sleep 0.1
	done
	kill -INT "$pid"
	sleep 0.5
	kill "$lockpid"
	wait "$pid"
	rc=$?
	wait "$lockpid" 2>/dev/null
	cp "$C/out" "$C/interrupted.out"
	check_cmd "interrupted apply exits non-zero" test "$rc" -ne 0
	check_cmd "it says it was interrupted" out_has "interrupted"
	check_cmd "the node in flight finished" subsystem_exists
	check_cmd "no new work started (n2 untouched)" no_hostfile 2
	check_cmd "no new work started (n3 untouched)" not_connected 3
	llmnet apply "$C/spec.yaml"
	check_cmd "next run converges" rc_is 0
}

# Issue 12, reproduction 6: with ssh.timeout 5s and n1's node lock held,
# apply reports the timeout, and nothing lands on n1 afterwards: the lock
# is let go 10 s after n1's agent started (where the old agent, still
# waiting, got it and wrote the hostfile), and n1 is checked at 20 s.
scenario_budget() {
	local lockpid t0 agent pid
	new_cluster budget || { fail "cluster up"; return; }
	sed 's/ timeout: 30s/ timeout: 5s/' "$C/spec.yaml" > "$C/spec5.yaml"
	llmnet facts "$C/spec5.yaml"	# pushes the agents, so the lock dir exists
	mkdir -p "$(root 1)/run"
	flock -o "$(root 1)/run/llmnet.lock" sleep 60 &
	lockpid=$!
	sleep 1.1	# mtimes have 1 s granularity on some filesystems
	touch "$C/marker"
	agent="$(root 1)/var/lib/llmnet/bin/llmnet-agent"
	"$LLMNET" --no-color apply "$C/spec5.yaml" > "$C/out" 2>&1 &
	pid=$!
	# t0: n1's agent has started its step (facts before it take a while)
	for _ in $(seq 300); do agent_waits_for_lock 1 && break; sleep 0.1; done
	check_cmd "n1's apply waits for its node lock" agent_waits_for_lock 1
	t0=$SECONDS
	wait "$pid"
	rc=$?
	cat "$C/out" >> "$C/all.out"
	check_cmd "apply with n1's lock held exits 4 (timeout)" rc_is 4
	check_cmd "its step ended within the 5 s bound (and a second)" test $((SECONDS - t0)) -le 6
	check_cmd "the message names n1, the stage and the command" \
		grep -qE "targets n1: .*'apply'.*time budget of 4000 ms ran out while waiting for the node lock" "$LLMNET_STATE_DIR/loop.log"
	check_cmd "the recap names n1's timeout" grep -qE "^n1 +: .*time budget of 4000 ms ran out" "$C/out"
	# let go of the lock where the old agent, still waiting, got it
	sleep $((10 - (SECONDS - t0) > 0 ? 10 - (SECONDS - t0) : 0))
	kill "$lockpid"
	wait "$lockpid" 2>/dev/null
	sleep $((20 - (SECONDS - t0) > 0 ? 20 - (SECONDS - t0) : 0))
	agent="$(root 1)/var/lib/llmnet/bin/llmnet-agent"
	check_cmd "no agent process is left on n1" not running "$agent"
	check_cmd "n1: nothing written after the timeout" unchanged_since 1 "$C/marker"
	check_cmd "n1: no hostfile" no_hostfile 1
	check_cmd "n1: no subsystem" not subsystem_exists
	llmnet apply "$C/spec5.yaml"
	check_cmd "with the lock free, the next apply converges" rc_is 0
	check_cmd "n1 has the hostfile now" hostfile_is 1 "$HOSTFILE3"
	# The other end: a caller that goes away (OpenSSH's client killed, so
	# sshd closes the session) ends an agent waiting with a long budget.
	flock -o "$(root 1)/run/llmnet.lock" sleep 60 &
	lockpid=$!
	sleep 1.1
	touch "$C/marker"
	ssh -n -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$C/known_hosts" \
		-i "$C/id_ed25519" "root@$(cluster_addr 1)" \
		'"${LLMNET_AGENT_ROOT%/}/var/lib/llmnet/bin/llmnet-agent" --budget-ms 60000 teardown' \
		> "$C/ssh.out" 2>&1 &
	pid=$!
	for _ in $(seq 50); do running "$agent --budget-ms 60000 teardown" && break; sleep 0.1; done
	check_cmd "the agent waits for the lock" running "$agent --budget-ms 60000 teardown"
	kill "$pid"
	wait "$pid" 2>/dev/null
	for _ in $(seq 30); do running "$agent" || break; sleep 0.1; done
	check_cmd "its caller gone, the agent ends within 3 s (budget 60 s)" not running "$agent"
	kill "$lockpid"
	wait "$lockpid" 2>/dev/null
	sleep 0.5
	check_cmd "n1: the cancelled teardown changed nothing" unchanged_since 1 "$C/marker"
	check_cmd "n1 keeps its hostfile" hostfile_is 1 "$HOSTFILE3"
}

scenario_teardown() {
	new_cluster teardown || { fail "cluster up"; return; }
	llmnet apply "$C/spec.yaml"
	check_cmd "apply exits 0" rc_is 0
	llmnet teardown "$C/spec.yaml"
	check_cmd "teardown exits 0" rc_is 0
	check_cmd "subsystem removed" test ! -e "$(cfg 1)/subsystems/$T1"
	check_cmd "no owned host entries left" test -z "$(ls "$(cfg 1)/hosts" | grep -v foreign)"
	check_cmd "n2 disconnected" not_connected 2
	check_cmd "n3 disconnected" not_connected 3
	check_cmd "hostfiles removed" no_hostfile 1
	check_cmd "foreign objects untouched" foreign_intact
	check_cmd "backing file kept without --purge" test -f "$(root 1)/var/lib/nvmet/disk1.img"
	llmnet teardown "$C/spec.yaml"
	check_cmd "second teardown exits 0" rc_is 0
	check_cmd "second teardown: nothing to do" out_has "teardown: 0 changed on 3 nodes"
	# what validate installs beside the agent (the io probe, an MPI probe
	# and its source) on n2, and a file llmnet did not put there on n3
	mkdir -p "$(root 2)/var/lib/llmnet/src"
	touch "$(root 2)/var/lib/llmnet/bin/llmnet-probe-io" "$(root 2)/var/lib/llmnet/bin/llmnet-probe-mpi" \
		"$(root 2)/var/lib/llmnet/src/mpi_probe.c" "$(root 3)/var/lib/llmnet/bin/site-tool"
	llmnet teardown "$C/spec.yaml" --purge
	check_cmd "teardown --purge exits 0" rc_is 0
	check_cmd "--purge removed the backing file" test ! -e "$(root 1)/var/lib/nvmet/disk1.img"
	check_cmd "--purge removed the agent" test ! -e "$(root 2)/var/lib/llmnet/bin/llmnet-agent"
	check_cmd "--purge removed the probes, their source and both folders" \
		test ! -e "$(root 2)/var/lib/llmnet/bin" -a ! -e "$(root 2)/var/lib/llmnet/src"
	check_cmd "control: a file llmnet did not install is kept, with its folder" \
		test -f "$(root 3)/var/lib/llmnet/bin/site-tool" -a ! -e "$(root 3)/var/lib/llmnet/bin/llmnet-agent"
	check_cmd "foreign objects still untouched" foreign_intact
}

# Issue 13, point 6: a target goes only once every initiator of it in the
# spec disconnected in this run, and while no host still holds it; else it
# is kept (exit 4), unless --force names it.
held_by() {	# make a host hold T1 on n1, as nvmet's debugfs shows it
	mkdir -p "$(root 1)/sys/kernel/debug/nvmet/$T1/ctrl7" &&
	printf '%s' "$1" > "$(root 1)/sys/kernel/debug/nvmet/$T1/ctrl7/hostnqn" &&
	echo 10.77.0.99 > "$(root 1)/sys/kernel/debug/nvmet/$T1/ctrl7/host_traddr"
}
scenario_teardown_initiators() {
	new_cluster tdinit || { fail "cluster up"; return; }
	llmnet apply "$C/spec.yaml"
	check_cmd "apply exits 0" rc_is 0
	# a silent initiator: n3's node is down
	cluster_stop_node "$C" 3
	llmnet teardown "$C/spec.yaml"
	check_cmd "n3 unreachable: teardown exits 4" rc_is 4
	check_cmd "the recap says why the target stays" \
		out_has "kept: initiator 'n3' not disconnected (unreachable); target '$T1' stays"
	check_cmd "the totals count it" out_has "1 target kept; not converged."
	check_cmd "n1 still exports T1" port_links
	check_cmd "n1 still holds T1's namespace" test -d "$(cfg 1)/subsystems/$T1/namespaces/1"
	check_cmd "n1 still allows n3" allowed "$(hostnqn 3)"
	check_cmd "n2 disconnected" not_connected 2
	check_cmd "n1's hostfile is gone all the same" no_hostfile 1
	check_cmd "the applied state no longer says n1 holds nothing" python3 -c \
		'import json,sys; d=json.load(open(sys.argv[1])); assert "n1" not in d.get("nodes", d)' \
		"$LLMNET_STATE_DIR/loop.applied.json"
	llmnet teardown "$C/spec.yaml" --force nosuch
	check_cmd "--force with an unknown name: usage error (64)" rc_is 64
	check_cmd "it names the word" out_has "--force: 'nosuch' is neither a target NQN nor a node of the spec"
	llmnet teardown "$C/spec.yaml" --force "$T1"
	check_cmd "--force T1 removes it though n3 is down (exit 4: n3)" rc_is 4
	check_cmd "--force is said" out_has "removing '$T1' on 'n1' (--force) though initiator 'n3' not disconnected"
	check_cmd "T1 is gone" not subsystem_exists
	check_cmd "nothing kept" not_out_has "kept:"
	llmnet teardown "$C/spec.yaml"
	check_cmd "a target already gone is not kept for a silent initiator" not_out_has "kept:"
	cluster_start_node "$C" 3
	llmnet teardown "$C/spec.yaml"
	check_cmd "n3 back: teardown exits 0" rc_is 0
	check_cmd "n3 disconnected" not_connected 3
	# the spec's initiators outside --limit did not disconnect in this run
	llmnet apply "$C/spec.yaml"
	check_cmd "apply again exits 0" rc_is 0
	llmnet teardown "$C/spec.yaml" --limit n1
	check_cmd "--limit n1: exit 4" rc_is 4
	check_cmd "n2 outside --limit keeps T1" out_has "kept: initiator 'n2' not disconnected (outside --limit), and 1 more; target '$T1' stays"
	check_cmd "T1 still exported" port_links
	check_cmd "n2 still connected" connected 2
	# a host the spec does not know still holds T1 (nvmet's debugfs)
	held_by nqn.2014-08.org.example:by.hand
	llmnet teardown "$C/spec.yaml"
	check_cmd "a host holds T1: exit 4" rc_is 4
	check_cmd "the recap names the host" out_has "kept: host 'nqn.2014-08.org.example:by.hand' (10.77.0.99) still holds controller ctrl7; target '$T1' stays"
	check_cmd "n2 disconnected" not_connected 2
	check_cmd "n3 disconnected" not_connected 3
	check_cmd "T1 still exported" port_links
	llmnet teardown "$C/spec.yaml" --purge
	check_cmd "still held: exit 4 again" rc_is 4
	check_cmd "--purge keeps the kept target's backing file" test -f "$(root 1)/var/lib/nvmet/disk1.img"
	check_cmd "--purge keeps the agent where a target is kept" test -e "$(root 1)/var/lib/llmnet/bin/llmnet-agent"
	check_cmd "--purge removed n2's agent" test ! -e "$(root 2)/var/lib/llmnet/bin/llmnet-agent"
	rm -rf "$(root 1)/sys/kernel/debug/nvmet/$T1/ctrl7"
	llmnet teardown "$C/spec.yaml" --purge
	check_cmd "the host let go: the normal order tears down all (exit 0)" rc_is 0
	check_cmd "T1 is gone" not subsystem_exists
	check_cmd "its backing file is gone" test ! -e "$(root 1)/var/lib/nvmet/disk1.img"
	check_cmd "foreign objects untouched" foreign_intact
}

# Issue 12, reproduction 2: a second cluster naming loop's backing file and
# hostfile is refused on both, and neither its apply nor its teardown
# --purge touches loop's files.
scenario_two_clusters() {
	local sum
	new_cluster two || { fail "cluster up"; return; }
	llmnet apply "$C/spec.yaml"
	check_cmd "loop's apply exits 0" rc_is 0
	sed -e 's/^cluster: loop$/cluster: loop2/' -e 's/n1\.t1/n1.t2/g' \
		-e 's/service: 4420/service: 4421/' "$C/spec.yaml" > "$C/spec2.yaml"
	sum=$(sha256sum "$(root 1)/var/lib/nvmet/disk1.img" "$(root 1)/etc/llmnet/hostfile")
	touch "$C/marker"
	# plan shows the refusals, with the path and its owner, before any apply
	llmnet plan "$C/spec2.yaml"
	check_cmd "loop2's plan names the backing file's owner" \
		out_has "'/var/lib/nvmet/disk1.img' belongs to cluster 'loop'"
	check_cmd "loop2's plan names the hostfile's owner" \
		out_has "'/etc/llmnet/hostfile' belongs to cluster 'loop'"
	check_cmd "loop2's plan changed nothing on n1" unchanged_but_agent 1 "$C/marker"
	llmnet apply "$C/spec2.yaml"
	check_cmd "loop2's apply exits 1" rc_is 1
	check_cmd "the backing file is named with its owner" \
		out_has "'/var/lib/nvmet/disk1.img' belongs to cluster 'loop'"
	check_cmd "the hostfile is named with its owner" \
		out_has "'/etc/llmnet/hostfile' belongs to cluster 'loop'"
	check_cmd "loop2 exported no namespace on loop's file" \
		test ! -e "$(cfg 1)/subsystems/nqn.2024-04.io.llmnet:n1.t2/namespaces/1"
	check_cmd "loop's files unchanged" test "$(sha256sum "$(root 1)/var/lib/nvmet/disk1.img" \
		"$(root 1)/etc/llmnet/hostfile")" = "$sum"
	check_cmd "loop's files not written" test -z "$(find "$(root 1)/var/lib/nvmet" \
		"$(root 1)/etc/llmnet" -newer "$C/marker" -print -quit)"
	llmnet teardown "$C/spec2.yaml" --purge
	check_cmd "loop2's teardown --purge exits 0" rc_is 0
	check_cmd "loop's files still there, unchanged" test "$(sha256sum \
		"$(root 1)/var/lib/nvmet/disk1.img" "$(root 1)/etc/llmnet/hostfile")" = "$sum"
	check_cmd "loop's namespace still exported" test -d "$(cfg 1)/subsystems/$T1/namespaces/1"
}

# A data file llmnet did not create is refused until the spec adopts it;
# then it is exported as it is, and teardown --purge keeps it.
scenario_adopt() {
	local sum file=/srv/data/keep.img
	new_cluster adopt || { fail "cluster up"; return; }
	mkdir -p "$(root 1)/srv/data"
	head -c 1048576 /dev/urandom > "$(root 1)$file"
	sum=$(sha256sum < "$(root 1)$file")
	sed -i "s|file: /var/lib/nvmet/disk1.img, size: 1MiB }|file: $file, size: 1MiB }|" "$C/spec.yaml"
	llmnet apply "$C/spec.yaml"
	check_cmd "without adopt, apply exits 1" rc_is 1
	check_cmd "the file is named" out_has "'$file' exists and is not llmnet's"
	sed -i "s|file: $file, size: 1MiB }|file: $file, size: 1MiB, adopt: true }|" "$C/spec.yaml"
	llmnet plan "$C/spec.yaml"
	check_cmd "plan shows the adoption" out_has "adopt, 1048576 bytes; never deleted"
	llmnet apply "$C/spec.yaml"
	check_cmd "with adopt, apply exits 0" rc_is 0
	check_cmd "the namespace is exported from the file" \
		grep -qxF "$file" "$(cfg 1)/subsystems/$T1/namespaces/1/device_path"
	llmnet teardown "$C/spec.yaml" --purge
	check_cmd "teardown --purge exits 0" rc_is 0
	check_cmd "teardown says it kept the file" \
		out_has "kept backing file '$file': adopted, llmnet never deletes it"
	check_cmd "the adopted file is still there, unchanged" \
		test "$(sha256sum < "$(root 1)$file")" = "$sum"
}

scenario_duplicate_nqn() {
	new_cluster dup || { fail "cluster up"; return; }
	cluster_build_tree "$C" 3 2	# n3 cloned from n2's image
	mkdir -p "$(root 2)/etc/nvme" "$(root 3)/etc/nvme"
	echo nqn.2014-08.org.nvmexpress:uuid:1f0f7b8a-0000-4000-8000-000000000002 > "$(root 2)/etc/nvme/hostnqn"
	cp "$(root 2)/etc/nvme/hostnqn" "$(root 3)/etc/nvme/hostnqn"
	touch "$C/marker"
	llmnet apply "$C/spec.yaml"
	check_cmd "duplicate host NQN excludes both (exit 4)" rc_is 4
	check_cmd "the message names both nodes" out_has "nodes 'n2' and 'n3' report the same host NQN"
	check_cmd "the rest goes on: n1 has its target" test -e "$(cfg 1)/subsystems/$T1"
	check_cmd "n1 allows neither claimant" not_allowed "$(hostnqn 2)"
	check_cmd "recap does not say converged" not says_converged
	check_cmd "... it says not converged" out_has "; not converged."
}

scenario_removed_node() {
	local n3
	new_cluster removed || { fail "cluster up"; return; }
	llmnet apply "$C/spec.yaml"
	n3=$(hostnqn 3)
	cluster_spec "$C" 2 > "$C/spec2.yaml"
	llmnet plan "$C/spec2.yaml"
	check_cmd "plan warns open connections stay open" out_has "connections it already has stay open until that host disconnects"
	llmnet apply "$C/spec2.yaml"
	check_cmd "apply without n3 exits 0" rc_is 0
	check_cmd "n3 lost its allowed-host link" not_allowed "$n3"
	check_cmd "n2 keeps its link" allowed "$(hostnqn 2)"
	check_cmd "n3 left the hostfile" hostfile_is 1 "n1 slots=1
n2 slots=1"
}

scenario_spec_error() {
	local before
	new_cluster specerr || { fail "cluster up"; return; }
	sed 's/^cluster: loop/cluster: loop\nbogus_key: 1/' "$C/spec.yaml" > "$C/bad.yaml"
	before=$(cluster_conn_count "$C" 1)
	llmnet apply "$C/bad.yaml"
	check_cmd "spec error exits 3" rc_is 3
	check_cmd "message has file:line:col" grep -qE "bad.yaml:[0-9]+:[0-9]+:" "$C/out"
	check_cmd "no node was contacted (sshd logged no connection)" test "$(cluster_conn_count "$C" 1)" = "$before"
	llmnet plan "$C/bad.yaml"
	check_cmd "plan on a bad spec exits 3" rc_is 3
	# a missing ssh.identity: found once, before any node (not per node,
	# after each connection and host-key step)
	sed "s|identity: [^,]*,|identity: $C/no-such-key,|" "$C/spec.yaml" > "$C/noid.yaml"
	before=$(cluster_conn_count "$C" 1)
	llmnet facts "$C/noid.yaml"
	check_cmd "a missing ssh.identity exits 3" rc_is 3
	check_cmd "... naming it, before any node" \
		out_has "ssh.identity '$C/no-such-key' cannot be read: No such file or directory; no node was contacted"
	check_cmd "no node was contacted for it (sshd logged no connection)" \
		test "$(cluster_conn_count "$C" 1)" = "$before"
}

# apply --validate runs the spec's stages on the converged cluster, over the
# same sessions: the fixture nodes have no GPU while the spec asks for one,
# so the devices stage must fail and name it; plain apply runs no stage.
scenario_apply_validate() {
	new_cluster validate || { fail "cluster up"; return; }
	# initiators with a host identity already: apply needs no second round
	# (which would read facts again), so only the re-read before validation
	# lets it see the controllers apply connected
	cluster_node_identity "$C" 2
	cluster_node_identity "$C" 3
	printf 'validation:\n  - { stage: devices }\n' >> "$C/spec.yaml"
	llmnet apply --validate "$C/spec.yaml"
	check_cmd "fresh apply --validate exits 1 (GPU missing)" rc_is 1
	check_cmd "the apply itself converged" out_has "; converged."
	check_cmd "the devices stage ran and failed" grep -qiE "devices +FAIL" "$C/out"
	check_cmd "the missing GPU is named" grep -qiE "gpu" "$C/out"
	check_cmd "validation saw the namespaces apply connected (facts read again)" \
		not_out_has "no live controller"
	llmnet apply "$C/spec.yaml"
	check_cmd "apply without --validate exits 0" rc_is 0
	check_cmd "apply without --validate runs no stage" not_out_has "devices"
}

# validate proves nothing it was not asked for, and a request that would
# run no stage is refused before any node is contacted (exit 64): a spec
# without a validation section, and --stages naming a stage the spec does
# not list; a stage that ran with no check never passes (unit tests).
scenario_validate_nothing() {
	local before
	new_cluster vnothing || { fail "cluster up"; return; }
	before=$(cluster_conn_count "$C" 1)
	llmnet validate "$C/spec.yaml"
	check_cmd "a spec without validation: exits 64" rc_is 64
	check_cmd "it says there is nothing to validate" out_has "lists no validation stage"
	llmnet -o json validate "$C/spec.yaml"
	check_cmd "-o json: exits 64 too, and prints no passing report" \
		eval 'rc_is 64 && not_out_has "\"pass\""'
	llmnet apply --validate "$C/spec.yaml"
	check_cmd "apply --validate without validation: exits 64" rc_is 64
	printf 'validation:\n  - { stage: devices }\n' >> "$C/spec.yaml"
	llmnet validate "$C/spec.yaml" --stages io
	check_cmd "--stages naming a stage the spec does not list exits 64" rc_is 64
	check_cmd "the message names it and what the spec lists" \
		out_has "--stages names 'io', which the spec's validation does not list (it lists: devices)"
	check_cmd "no node was contacted (sshd logged no connection)" \
		test "$(cluster_conn_count "$C" 1)" = "$before"
	check_cmd "no node was changed" test ! -e "$(root 2)/var/lib/llmnet/bin/llmnet-agent"
}

# devices checks every declared namespace, not the target's first: n1's
# target exports nsids 1, 2 and 7, and the fixture's initiators show only
# nsid 1 (the fixture connects one namespace head), so devices must name
# namespaces 2 and 7 as missing on n2 and n3, and pass namespace 1.
scenario_validate_namespaces() {
	new_cluster vns || { fail "cluster up"; return; }
	cluster_node_identity "$C" 2
	cluster_node_identity "$C" 3
	sed -i 's|^        - { nsid: 1, file: /var/lib/nvmet/disk1.img, size: 1MiB }|&\n        - { nsid: 2, file: /var/lib/nvmet/disk2.img, size: 1MiB }\n        - { nsid: 7, file: /var/lib/nvmet/disk7.img, size: 1MiB }|' "$C/spec.yaml"
	printf 'validation:\n  - { stage: devices }\n' >> "$C/spec.yaml"
	llmnet apply "$C/spec.yaml"
	check_cmd "apply exports the three namespaces" \
		test -d "$(cfg 1)/subsystems/$T1/namespaces/7" -a -d "$(cfg 1)/subsystems/$T1/namespaces/2"
	llmnet validate "$C/spec.yaml"
	check_cmd "validate exits 1" rc_is 1
	check_cmd "n2's namespace 2 is named missing" grep -qF \
		"namespace 2 of '$T1' is missing: its live controller shows nsid 1" "$C/out"
	check_cmd "namespace 7 is named missing on n3 too" \
		grep -qE "n3 .*namespace 7 of '$T1' is missing" "$C/out"
	check_cmd "namespace 1 is not among the failures" not_out_has "namespace 1 of '$T1'"
}

# Issue 13 point 5: apply --batch in waves, --max-fail stops the rollout
# (exit 6) when a node's sshd is down; the retry file names the nodes left,
# as ranges, and --limit @FILE takes them.
scenario_batches() {
	local retry
	new_cluster batches 5 || { fail "cluster up"; return; }
	cluster_node_identity "$C" 4
	cluster_node_identity "$C" 5
	cluster_stop_node "$C" 3
	touch "$C/marker"
	llmnet apply "$C/spec.yaml" --batch 2 --max-fail 0
	check_cmd "a stopped rollout exits 6" rc_is 6
	check_cmd "it says where it stopped" out_has "rollout stopped after wave 2 of 3: 1 of 2 nodes failed"
	check_cmd "wave 1 (target n1 first, then n2) converged" connected 2
	check_cmd "wave 2 ran: n4 connected" connected 4
	check_cmd "n5 (wave 3) was not run" not_connected 5
	check_cmd "n5 untouched (but for the agent push)" unchanged_but_agent 5 "$C/marker"
	check_cmd "the recap says n5 was not run" grep -qE '^n5 +: .*not run: the rollout stopped after wave 2 of 3' "$C/out"
	check_cmd "the recap marks the rollout stopped" out_has "; rollout stopped; not converged."
	retry=$LLMNET_STATE_DIR/loop.retry
	check_cmd "the retry file's path is printed" out_has "--limit @$retry"
	check_cmd "the retry file names n3 and n5 as a range" grep -qxF "n[3,5]" "$retry"
	check_cmd "the retry file adds their target's node" grep -qxF "n1" "$retry"
	check_cmd "the retry file leaves out the converged" not_out_has_file "$retry" "n2"
	check_cmd "the state folder is private" test "$(stat -c %a "$LLMNET_STATE_DIR")" = 700
	cluster_start_node "$C" 3
	touch "$C/marker2"
	llmnet apply "$C/spec.yaml" --limit "@$retry"
	check_cmd "the retry run converges" rc_is 0
	check_cmd "n3 connected" connected 3
	check_cmd "n5 connected" connected 5
	check_cmd "n2 (not in the retry file) untouched" unchanged_but_agent 2 "$C/marker2"
	llmnet apply "$C/spec.yaml" --limit n2
	check_cmd "an initiator alone, its converged target outside --limit: exit 0" rc_is 0
	check_cmd "... and nothing skipped" not_out_has "skipped:"
	llmnet apply "$C/spec.yaml" --limit 'n[2-4,9]'
	check_cmd "a range naming no node is a usage error" rc_is 64
	check_cmd "it names the missing node" out_has "--limit names 'n9', which is not a node"
	llmnet apply "$C/spec.yaml" --limit 'n[1-5]' --batch 40% --max-fail 50%
	check_cmd "--limit with a range and percentages converges" rc_is 0
	check_cmd "in waves of 2 (40% of 5)" out_has "wave 3 of 3: 1 nodes"
	llmnet apply "$C/spec.yaml" --batch 2x
	check_cmd "a bad --batch is a usage error" rc_is 64
	check_cmd "it says what --batch takes" out_has "--batch takes a number of nodes or a percentage (N or N%), not '2x'"
}

# Issue 13 point 4: the last-known facts answer facts --cached for a
# stopped node, without contacting it; a node never read is reported (exit
# 1); plan shows what a silent node would get against its last apply.
scenario_cached_facts() {
	local before
	new_cluster cached || { fail "cluster up"; return; }
	llmnet facts "$C/spec.yaml"
	check_cmd "facts exits 0" rc_is 0
	check_cmd "the facts are recorded, mode 0600" test "$(stat -c %a "$LLMNET_STATE_DIR/loop.facts.json")" = 600
	cluster_stop_node "$C" 2
	before=$(cluster_conn_count "$C" 1)
	llmnet facts --cached "$C/spec.yaml"
	check_cmd "facts --cached exits 0 with a stopped node" rc_is 0
	check_cmd "it shows n2's facts, with their age" grep -qE "cached +read [0-9T:-]+Z, [0-9]+s ago \(not contacted now\)" "$C/out"
	check_cmd "no node was contacted" test "$(cluster_conn_count "$C" 1)" = "$before"
	llmnet -o json facts --cached "$C/spec.yaml"
	check_cmd "-o json has n2's facts and age" python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["nodes"]["n2"]; assert d["state"]=="ok" and "facts" in d and d["age_s"]>=0' "$C/out"
	llmnet facts --cached --accept-replaced n2 "$C/spec.yaml"
	check_cmd "--cached with --accept-replaced is a usage error" rc_is 64
	check_cmd "... saying why" out_has "--accept-replaced has no effect with --cached"
	cluster_spec "$C" 3 | sed 's/^  - { name: n3, .*/&\n  - { name: n99, address: 127.0.0.99, gpus: 1 }/' > "$C/spec4.yaml"
	llmnet facts --cached "$C/spec4.yaml"
	check_cmd "a node with no facts on record: exit 1" rc_is 1
	check_cmd "n99 is reported as such" node_says n99 "pending: no facts on record in '$LLMNET_STATE_DIR/loop.facts.json'"
	cluster_start_node "$C" 2

	llmnet apply "$C/spec.yaml"
	check_cmd "apply exits 0" rc_is 0
	check_cmd "the applied state is recorded" test -s "$LLMNET_STATE_DIR/loop.applied.json"
	cluster_stop_node "$C" 3
	llmnet plan "$C/spec.yaml"
	check_cmd "plan with a silent node exits 4" rc_is 4
	check_cmd "n3 is planned against its last-known state: no changes" out_has "last-known state (applied "
	check_cmd "... and nothing to change" grep -qE "^  last-known state \(applied .*\): no changes" "$C/out"
	sed 's/^mpi: { hostfile: \/etc\/llmnet\/hostfile }/mpi: { hostfile: \/etc\/llmnet\/hosts2 }/' "$C/spec.yaml" > "$C/spec-hf.yaml"
	llmnet plan "$C/spec-hf.yaml"
	check_cmd "a changed spec: n3 would get the new hostfile" grep -qE "^  \+ hostfile +/etc/llmnet/hosts2" "$C/out"
	check_cmd "... and lose the old one" grep -qE "^  - hostfile +/etc/llmnet/hostfile" "$C/out"
	check_cmd "the summary counts it apart" out_has "1 unreachable (1 with changes against their last-known state)"
	llmnet -o json plan "$C/spec-hf.yaml"
	check_cmd "-o json marks it last_known" python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["nodes"]["n3"]; assert d["state"]=="unreachable" and len(d["last_known"]["changes"])==2' "$C/out"
	cluster_start_node "$C" 3
}

# ---- the agent session (issue 13): one agent process per node per run ----

# The agent's session on node I over OpenSSH (not llmnet's libssh), stdin
# from the caller, always in a subshell (a pipeline or &):
#   ... | agent_session I > ANSWERS
# (exec: a background call's $! is ssh itself, which the caller may kill)
agent_session() {
	exec ssh -F /dev/null -i "$C/id_ed25519" -o UserKnownHostsFile="$C/known_hosts" \
		-o StrictHostKeyChecking=yes -o BatchMode=yes -o ConnectTimeout=5 \
		"root@$(cluster_addr "$1")" \
		'"${LLMNET_AGENT_ROOT%/}/var/lib/llmnet/bin/llmnet-agent" session'
}
# One frame: the payload's length, a newline, the payload (ASCII only).
frame() { printf '%d\n%s' "${#1}" "$1"; }
no_agent_left() {	# node I, within 5 s
	local _
	for _ in $(seq 50); do agent_pids "$1" >/dev/null || return 0; sleep 0.1; done
	return 1
}
answers_has() { grep -qF -- "$1" "$C/answers"; }

# Framing errors are answered with an error frame, change nothing, and end
# that session; a well-formed request on a session is answered in turn.
scenario_session_framing() {
	local src
	new_cluster framing || { fail "cluster up"; return; }
	llmnet apply "$C/spec.yaml"
	check_cmd "apply exits 0" rc_is 0
	for i in 1 2 3; do wc -l < "$C/node$i/sshd.log" > "$C/node$i/lines"; done
	llmnet apply "$C/spec.yaml"
	check_cmd "a converged apply exits 0" rc_is 0
	for i in 1 2 3; do
		tail -n +$(($(cat "$C/node$i/lines") + 1)) "$C/node$i/sshd.log" > "$C/node$i/run.log"
		check_cmd "converged n$i: one connection" test "$(grep -c 'Connection from' "$C/node$i/run.log")" -eq 1
		check_cmd "converged n$i: one remote process (the agent's session)" \
			test "$(grep -c 'Starting session: ' "$C/node$i/run.log")" -eq 1
	done
	sleep 1.1
	touch "$C/marker"
	{ frame '{"id":7,"verb":"version"}'; frame '{"id":8,"verb":"facts"}'; } |
		agent_session 1 > "$C/answers" 2>"$C/answers.err"
	check_cmd "two requests, two answers, in order" test "$(grep -o '{"protocol":3,"id":[0-9]*,"exit":0' \
		"$C/answers" | paste -sd' ')" = '{"protocol":3,"id":7,"exit":0 {"protocol":3,"id":8,"exit":0'
	src=$(grep -o '"sha256_source":"[a-z]*"' "$C/answers")
	check_cmd "a sealed agent takes its digest from the sidecar" test "$src" = '"sha256_source":"sidecar"'
	check_cmd "the session speaks protocol 3" answers_has '{"protocol":3,"id":7,"exit":0,"answer":{'
	printf 'hello, agent\n' | agent_session 1 > "$C/answers" 2>"$C/answers.err"
	check_cmd "garbage: the session exits 2" test "${PIPESTATUS[1]}" -eq 2
	check_cmd "garbage: an error frame with code 'frame'" answers_has '"code":"frame"'
	check_cmd "garbage: the header is named" answers_has 'malformed frame header: byte 0x68 after 0 digits'
	printf '99999999\n{"verb":"apply"}' | agent_session 1 > "$C/answers" 2>"$C/answers.err"
	check_cmd "oversized: refused with the limit" answers_has 'oversized frame: 99999999 bytes, at most 16777216 allowed'
	printf '500\n{"verb":"apply","request":{"protocol":3,"cluster":"loop"' |
		agent_session 1 > "$C/answers" 2>"$C/answers.err"
	check_cmd "truncated: refused with the count" answers_has 'truncated frame: the input ended after 56 of 500 bytes'
	frame '{"verb":"apply","request":{"protocol":3,"cluster":"loop"}' | agent_session 1 > "$C/answers" 2>"$C/answers.err"
	check_cmd "a frame that is not JSON: a request error" answers_has '"code":"request"'
	frame '{"verb":"apply","budget":1,"request":{"protocol":3,"cluster":"loop"}}' |
		agent_session 1 > "$C/answers" 2>"$C/answers.err"
	check_cmd "an unknown envelope field: refused by name" answers_has "request envelope: unknown field 'budget'"
	check_cmd "nothing changed on n1 by any of them" unchanged_since 1 "$C/marker"
	check_cmd "n1 still exports the subsystem" subsystem_exists
	check_cmd "no agent left behind" no_agent_left 1
}

# A session dropped mid-request (its ssh client killed) leaves no agent
# process: one waiting for the node lock, one running a probe.
scenario_session_dropped() {
	local lockpid sshpid probe sum mpid
	new_cluster dropped || { fail "cluster up"; return; }
	llmnet facts "$C/spec.yaml"	# pushes the agents
	mkdir -p "$(root 1)/run"
	flock -o "$(root 1)/run/llmnet.lock" sleep 60 &
	lockpid=$!
	sleep 1.1
	touch "$C/marker"
	rm -f "$C/fifo" && mkfifo "$C/fifo"
	(agent_session 1 < "$C/fifo" > "$C/answers" 2>&1) &
	sshpid=$!
	exec 3>"$C/fifo"
	frame '{"verb":"teardown","budget_ms":60000,"args":["--cluster","loop"]}' >&3
	for _ in $(seq 100); do agent_waits_for_lock 1 && break; sleep 0.1; done
	check_cmd "the session's teardown waits for the node lock" agent_waits_for_lock 1
	kill "$sshpid"
	check_cmd "the dropped session's agent is gone within 5 s (lock still held)" no_agent_left 1
	exec 3>&-
	wait "$sshpid" 2>/dev/null
	check_cmd "nothing was changed on n1" unchanged_but_agent 1 "$C/marker"
	kill "$lockpid"
	wait "$lockpid" 2>/dev/null
	# a probe that runs until it is stopped, started as the mpi stage starts
	# its probe: by mpirun (a system tool on the allow-list), at the MPI
	# probe's exact path, with the SHA-256 the request names (the script's)
	probe=$(root 2)/var/lib/llmnet/bin/llmnet-probe-mpi
	printf '#!/bin/sh\nwhile :; do sleep 1; done\n' > "$probe"
	chmod 0755 "$probe"
	sum=$(sha256sum < "$probe" | cut -c1-64)
	(agent_session 2 < "$C/fifo" > "$C/answers" 2>&1) &
	sshpid=$!
	exec 3>"$C/fifo"
	frame '{"verb":"run","budget_ms":600000,"args":["--timeout","600","--sha256","'"$sum"'","--",'\
'"mpirun","--allow-run-as-root","-np","1","/var/lib/llmnet/bin/llmnet-probe-mpi"]}' >&3
	for _ in $(seq 100); do running "^/bin/sh $probe" && break; sleep 0.1; done
	check_cmd "the probe runs" running "^/bin/sh $probe"
	mpid=$(pgrep -f "^/usr/bin/mpirun .*$probe")
	kill "$sshpid"
	check_cmd "the dropped session's agent is gone within 5 s" no_agent_left 2
	check_cmd "and its probe with it" test -z "$(pgrep -f "$probe")"
	exec 3>&-
	wait "$sshpid" 2>/dev/null
	# mpirun, killed a second after its SIGTERM, leaves its session folder
	[ -n "$mpid" ] && rm -rf "/tmp/ompi.$(hostname).$(id -u)/pid.$mpid"
}

# A corrupted, a replaced and a truncated agent are each pushed again; the
# others keep theirs. The in-place corruption keeps size and mtime (ctime
# cannot be set back), so only the sidecar check catches it.
scenario_corrupt_agent() {
	local a1 a2 a3 want before
	new_cluster corrupt || { fail "cluster up"; return; }
	llmnet apply "$C/spec.yaml"
	check_cmd "first apply exits 0" rc_is 0
	a1=$(root 1)/var/lib/llmnet/bin/llmnet-agent
	a2=$(root 2)/var/lib/llmnet/bin/llmnet-agent
	a3=$(root 3)/var/lib/llmnet/bin/llmnet-agent
	want=$(sha256sum < "$LLMNET_AGENT")
	check_cmd "every agent is sealed" test -s "$a1.id" -a -s "$a2.id" -a -s "$a3.id"
	before=$(wc -l < "$LLMNET_STATE_DIR/loop.log")
	llmnet apply "$C/spec.yaml"
	check_cmd "a converged run pushes nothing" \
		test -z "$(tail -n +$((before + 1)) "$LLMNET_STATE_DIR/loop.log" | grep 'agent .* pushed')"
	stat -c '%s %y' "$a2" > "$C/stat.before"
	touch -r "$a2" "$C/times"
	# the last byte (ELF section headers: it still runs) changed in place
	printf '\x5a' | dd of="$a2" bs=1 seek=$(( $(stat -c %s "$a2") - 1 )) conv=notrunc status=none
	touch -r "$C/times" "$a2"
	check_cmd "n2's agent corrupted in place" test "$(sha256sum < "$a2")" != "$want"
	check_cmd "n2's agent keeps its size and mtime" test "$(stat -c '%s %y' "$a2")" = "$(cat "$C/stat.before")"
	cp "$BUILD/llmnet-agent-dyn" "$a3.other" && mv -f "$a3.other" "$a3"
	truncate -s 1000 "$a1"
	llmnet -v apply "$C/spec.yaml"
	check_cmd "apply after the corruption exits 0" rc_is 0
	check_cmd "n1's truncated agent was pushed again" out_has "facts        n1, agent pushed"
	check_cmd "n2's corrupted agent was pushed again" out_has "facts        n2, agent pushed"
	check_cmd "n3's replaced agent was pushed again" out_has "facts        n3, agent pushed"
	check_cmd "n1 runs our agent again" test "$(sha256sum < "$a1")" = "$want"
	check_cmd "n2 runs our agent again" test "$(sha256sum < "$a2")" = "$want"
	check_cmd "n3 runs our agent again" test "$(sha256sum < "$a3")" = "$want"
	llmnet -v apply "$C/spec.yaml"
	check_cmd "the next run pushes nothing" not_out_has "agent pushed"
}

# A node that dies mid-run (its sshd and the session's sshd killed while
# its apply waits for the node lock) is reported with the node, the phase
# and the request; the other nodes finish.
scenario_node_dies() {
	local lockpid pid master kids
	new_cluster dies || { fail "cluster up"; return; }
	llmnet facts "$C/spec.yaml"
	mkdir -p "$(root 2)/run"
	flock -o "$(root 2)/run/llmnet.lock" sleep 60 &
	lockpid=$!
	"$LLMNET" --no-color apply "$C/spec.yaml" > "$C/out" 2>&1 &
	pid=$!
	for _ in $(seq 150); do agent_waits_for_lock 2 && break; sleep 0.1; done
	check_cmd "n2's apply waits for its node lock" agent_waits_for_lock 2
	# the listener and every sshd it forked for this run (by PID)
	master=$(cat "$C/node2/harness.pid")
	kids=$(pgrep -P "$master")
	kill -9 $kids $(for k in $kids; do pgrep -P "$k"; done) 2>/dev/null
	cluster_stop_node "$C" 2
	wait "$pid"
	rc=$?
	check_cmd "apply exits 4 (a node unreachable)" rc_is 4
	check_cmd "n2 is reported with the request and the phase" \
		grep -qE "n2: connection to 'n2' broke during agent 'apply'.*\(phase initiators\)" "$C/out"
	check_cmd "recap shows n2 unreachable" grep -qE '^n2 +: .*unreachable=1' "$C/out"
	check_cmd "n1 finished" subsystem_exists
	check_cmd "n3 finished" connected 3
	check_cmd "n3 has the hostfile" hostfile_is 3 "$HOSTFILE3"
	check_cmd "n2's orphaned agent is gone within 5 s" no_agent_left 2
	kill "$lockpid"
	wait "$lockpid" 2>/dev/null
	cluster_start_node "$C" 2
	llmnet apply "$C/spec.yaml"
	check_cmd "next run converges" rc_is 0
}

# Issue 14 point 5: port error counters read through ssh and each node's
# agent (`facts --counters`) before and after every pair. Each node gets
# node 1's rxe0 (6.1's hw_counters) with its own GID; this machine has no
# rping, so the pairs fail to run, but the counters are read around them.
# Each node that could not run its own end of rping is named a bad node
# (issue 32: a node whose tool did not run is never a known-good peer),
# so no port is named as a culprit beside them. A run with nothing
# rising reports every port's deltas (0, passing); a run where n2's
# rcvd_seq_err rises all along (a loop writes it) fails exactly n2/rxe0's
# counters: over max_errors with both its partners, theirs with one.
counters_spec() {
	local i
	printf 'version: 1\ncluster: loop\nssh: { user: root, identity: %s/id_ed25519, known_hosts: %s/known_hosts, connect_timeout: 5s, timeout: 30s }\nnodes:\n' "$C" "$C"
	for i in 1 2 3; do
		printf '  - { name: n%d, address: %s, rdma: [ { device: rxe0, ip: 10.77.0.1%d } ] }\n' \
			"$i" "$(cluster_addr "$i")" "$i"
	done
	printf 'validation:\n  - { stage: rping, count: 2, timeout: 5s, max_errors: 3 }\n'
}

culprit_ports() {	# report: its culprits' ports, space-separated
	python3 -c 'import json,sys
print(" ".join(json.load(open(sys.argv[1]))["culprits"]["ports"]))' "$1"
}

culprit_nodes() {	# report: its culprit nodes, space-separated
	python3 -c 'import json,sys
print(" ".join(json.load(open(sys.argv[1]))["culprits"]["nodes"]))' "$1"
}

counter_of() {	# report, node, field of the n's rxe0 counters check
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
c = [c for c in r["checks"] if c.get("counters") and c["node"] == sys.argv[2]][0]
print(c[sys.argv[3]] if sys.argv[3] in c else c["counters"][sys.argv[3]])' "$@"
}

scenario_counters() {
	local i pid f
	new_cluster counters || { fail "cluster up"; return; }
	for i in 2 3; do
		cp -a "$(root 1)/sys/class/infiniband" "$(root "$i")/sys/class/"
		printf '0000:0000:0000:0000:0000:ffff:0a4d:%04x\n' $((10 + i)) \
			> "$(root "$i")/sys/class/infiniband/rxe0/ports/1/gids/1"
	done
	rm "$(root 3)/sys/class/infiniband/rxe0/ports/1/hw_counters/send_err"
	counters_spec > "$C/counters.yaml"
	llmnet validate "$C/counters.yaml" --report "$C/quiet.json"
	check_cmd "the stage fails: its pairs cannot run here (exit 1)" rc_is 1
	check_cmd "n1's counters were read through its agent (rdma_rxe)" \
		test "$(counter_of "$C/quiet.json" n1 driver)" = rdma_rxe
	check_cmd "n2's port had two partners" test "$(counter_of "$C/quiet.json" n2 partners)" = 2
	check_cmd "nothing rose: 0 errors on n3" test "$(counter_of "$C/quiet.json" n3 errors)" = 0
	check_cmd "a counter n3's port lacks is null, never 0" test "$(python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
print([c for c in r["checks"] if c.get("counters") and c["node"] == "n3"][0]["counters"]["deltas"]["errors"]["send_err"])' \
		"$C/quiet.json")" = None
	check_cmd "every port's counters pass" test "$(counter_of "$C/quiet.json" n2 status)" = pass
	check_cmd "no port is blamed" test -z "$(culprit_ports "$C/quiet.json")"
	f=$(root 2)/sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_seq_err
	(n=0; while :; do n=$((n + 7)); echo "$n" > "$f.tmp" && mv "$f.tmp" "$f"; sleep 0.1; done) &
	pid=$!
	llmnet validate "$C/counters.yaml" --report "$C/loss.json"
	kill "$pid"
	wait "$pid" 2>/dev/null
	check_cmd "the loss run fails (exit 1)" rc_is 1
	check_cmd "the nodes without rping are named, no port beside them" \
		test "$(culprit_nodes "$C/loss.json")/$(culprit_ports "$C/loss.json")" = "n1 n2 n3/"
	check_cmd "exactly n2/rxe0's counters fail" test "$(counter_of "$C/loss.json" n2 status)/$(
		counter_of "$C/loss.json" n1 status)/$(counter_of "$C/loss.json" n3 status)" = fail/pass/pass
	check_cmd "the text names it" out_has "over 3 with 2 of its 2 partners (n1/rxe0, n3/rxe0)"
	check_cmd "n2/rxe0 over max_errors with 2 partners" \
		test "$(counter_of "$C/loss.json" n2 partners_over)" = 2
	check_cmd "n1's own counters did not rise" test "$(counter_of "$C/loss.json" n1 errors)" = 0
}

# Issue 15: persist: true leaves on every node (systemd: /run/systemd/system
# in its tree) the stored request, loop's copy of the pushed agent and the
# enabled unit that runs it; another persisting cluster's teardown --purge
# (which deletes the pushed agent) leaves loop's copy, which still restores;
# the default (persist: false) removes them.
scenario_persist() {
	local i u=/etc/systemd/system/llmnet-restore-loop.service
	new_cluster persist 2 || { fail "cluster up"; return; }
	for i in 1 2; do mkdir -p "$(root "$i")/run/systemd/system" "$(root "$i")/etc/systemd/system"; done
	sed 's/^cluster: loop$/&\npersist: true/' "$C/spec.yaml" > "$C/persist.yaml"
	llmnet apply "$C/persist.yaml"
	check_cmd "apply with persist: true exits 0" rc_is 0
	for i in 1 2; do
		check_cmd "n$i: the unit runs loop's copy of the agent" grep -qx \
			"ExecStart=/var/lib/llmnet/restore/loop.agent --budget-ms 30000 restore --cluster loop" \
			"$(root "$i")$u"
		check_cmd "n$i: the unit is enabled" \
			test -L "$(root "$i")/etc/systemd/system/multi-user.target.wants/${u##*/}"
		check_cmd "n$i: the copy is the pushed agent" cmp -s \
			"$(root "$i")/var/lib/llmnet/restore/loop.agent" "$(root "$i")/var/lib/llmnet/bin/llmnet-agent"
		check_cmd "n$i: the stored request is 600" \
			test "$(stat -c %a "$(root "$i")/var/lib/llmnet/restore/loop.json")" = 600
	done
	llmnet facts "$C/persist.yaml"
	check_cmd "facts: both nodes persistent yes" test "$(grep -c 'persistent yes' "$C/out")" = 2
	sed -e 's/^cluster: loop$/cluster: loop2/' -e 's/n1\.t1/n1.t2/g' -e 's/service: 4420/service: 4421/' \
		-e 's|disk1.img|disk2.img|' -e 's|/etc/llmnet/hostfile|/etc/llmnet/hostfile2|' \
		"$C/persist.yaml" > "$C/persist2.yaml"
	llmnet apply "$C/persist2.yaml"
	check_cmd "loop2's apply with persist: true exits 0" rc_is 0
	llmnet teardown "$C/persist2.yaml" --purge
	check_cmd "loop2's teardown --purge exits 0" rc_is 0
	check_cmd "n2: the pushed agent is gone" test ! -e "$(root 2)/var/lib/llmnet/bin/llmnet-agent"
	check_cmd "n2: loop2's copy is gone, loop's stays" test ! -e \
		"$(root 2)/var/lib/llmnet/restore/loop2.agent" -a -x "$(root 2)/var/lib/llmnet/restore/loop.agent"
	# bounded: not restored, it would go on retrying in the background
	timeout -k 5 60 "$(root 2)/var/lib/llmnet/restore/loop.agent" --root "$(root 2)" \
		--budget-ms 20000 restore --cluster loop > "$C/restore.out" 2>&1
	grep -qF "restored (try 1)" "$C/restore.out" ||
		grep -E "^(error|warning):" "$C/restore.out" | head -n 5 | sed 's/^/    /'
	check_cmd "n2: loop's unit program restores loop without the pushed agent" \
		grep -qF "restore: cluster 'loop' restored (try 1)" "$C/restore.out"
	llmnet apply "$C/spec.yaml"
	check_cmd "apply without persist exits 0" rc_is 0
	for i in 1 2; do
		check_cmd "n$i: no unit, link, copy or stored request left" test -z "$(ls -d "$(root "$i")$u" \
			"$(root "$i")/etc/systemd/system/multi-user.target.wants/${u##*/}" \
			"$(root "$i")"/var/lib/llmnet/restore/loop.* 2>/dev/null)"
	done
}

all=(fresh_apply converged replace killed_mid_apply unreachable_initiator limit sigint budget
     teardown teardown_initiators two_clusters adopt duplicate_nqn removed_node spec_error apply_validate validate_nothing validate_namespaces
     batches cached_facts session_framing session_dropped corrupt_agent node_dies counters persist)
. tests/cluster/secrets.sh && all+=(secrets)	# DH-HMAC-CHAP leak test (issue 9)
. tests/cluster/rails.sh && all+=(rails)	# concurrent_rails over ssh lanes (issue 14)
. tests/cluster/discovery.sh && all+=(discovery)	# discovery: true (issue 15, point 3)
. tests/cluster/nccl_tests.sh && all+=(nccl_tests nccl_tests_cluster)	# nccl-tests per node (issue 14, point 6) and across nodes (issue 27)
. tests/cluster/identity.sh && all+=(host_identity)	# a node's host identity that is not valid
. tests/cluster/escape.sh && all+=(escape)	# node strings escaped (issue 32, point 4)
. tests/cluster/relay.sh
. tests/cluster/hostile.sh && all+=(hostile_upload hostile_second_signal hostile_answers hostile_changes hostile_run hostile_cut_upload hostile_probe_end hostile_mpicc)	# a hung upload or session cannot hold a run (issue 32)
. tests/cluster/msgrate.sh && all+=(msg_rate)	# bandwidth's message rate (issue 27, point 3)
. tests/cluster/hostident.sh && all+=(hostident)	# host identity pinning (issue 32)
. tests/cluster/devident.sh && all+=(accept_device)	# a replaced device: disk (issue 31, point 2)
. tests/cluster/mountopts.sh && all+=(mount_options)	# mount options shown and remounted (issue 31)
. tests/cluster/gpu.sh && all+=(gpu_facts)	# GPU facts from NVML, pushed and judged (issue 26)
. tests/cluster/destroy.sh && all+=(plan_destroy)	# plan --destroy (issue 27, point 5)
. tests/cluster/access.sh && all+=(access)	# validate's access stage (issue 27, point 4)
. tests/cluster/slurm.sh && all+=(slurm)	# validate --drain/--resume through scontrol (issue 28)
[ $# -gt 0 ] && all=("$@")

# Two halves side by side (CLUSTER_JOBS=1: one after the other): each is
# this script again on scenarios taken in turn from the list, on its own
# addresses (the second 100 above CLUSTER_NET's last number) and its own
# work folder, its output shown whole when it ends; the counts add up.
net=${CLUSTER_NET:-127.0.1}
if [ "${CLUSTER_JOBS:-2}" -gt 1 ] && [ -z "${CLUSTER_HALF:-}" ] && [ ${#all[@]} -gt 1 ] &&
	[ $((${net##*.} + 100)) -le 250 ]; then
	halves=("" "") pids=()
	for k in "${!all[@]}"; do halves[k % 2]+=" ${all[k]}"; done
	for h in 0 1; do
		rm -f "$BUILD/check/cluster.half$h.counts"	# never a stale one
		# shellcheck disable=SC2086 # the half's scenario names, one word each
		CLUSTER_HALF=$h CLUSTER_NET=${net%.*}.$((${net##*.} + 100 * h)) \
			tests/cluster/run.sh "$BUILD" ${halves[h]} > "$WORK/half$h.log" 2>&1 &
		pids+=($!)
	done
	for h in 0 1; do
		wait "${pids[h]}"
		rc=$?
		cat "$WORK/half$h.log"
		p='' f=''
		read -r p f < "$BUILD/check/cluster.half$h.counts" || echo "half $h wrote no counts"
		rm -f "$BUILD/check/cluster.half$h.counts"
		# counts that are not two numbers, or a half that exited non-zero
		# with none failed, count as one failure more
		[[ $p =~ ^[0-9]+$ && $f =~ ^[0-9]+$ ]] || p=0 f=1
		[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
		tap_count "$p" "$f"
		[ "$f" -eq 0 ] || TAP_FAILURES+=("half $h:${halves[h]} (exit $rc; its failures above)")
	done
	tap_done "$BUILD/check/cluster.counts"
	exit
fi

for scenario in "${all[@]}"; do
	echo "scenario $scenario"
	TAP_GROUP=$scenario
	"scenario_$scenario"
done

[ "$TAP_FAIL" -eq 0 ] || echo "work directory kept: $WORK"
tap_done "$BUILD/check/cluster${CLUSTER_HALF:+.half$CLUSTER_HALF}.counts"
