#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Loopback-cluster scenarios: real libssh, real sshd, real host-key checks,
# each node's agent on its own fixture root. Every scenario asserts on the
# node trees, not only on llmnet's output.
#
#   tests/cluster/run.sh BUILD [SCENARIO...]
#
# Writes "PASSED FAILED" to BUILD/check/cluster.counts.
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
out_has() { grep -qF -- "$1" "$C/out"; }
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
		pgrep -f "$(root 1)/var/lib/llmnet/bin/llmnet-agent --budget-ms [0-9]+ apply" >/dev/null && break
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
	for _ in $(seq 300); do running "$agent --budget-ms 4000 apply" && break; sleep 0.1; done
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
	llmnet teardown "$C/spec.yaml" --purge
	check_cmd "teardown --purge exits 0" rc_is 0
	check_cmd "--purge removed the backing file" test ! -e "$(root 1)/var/lib/nvmet/disk1.img"
	check_cmd "--purge removed the agent" test ! -e "$(root 2)/var/lib/llmnet/bin/llmnet-agent"
	check_cmd "foreign objects still untouched" foreign_intact
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
	check_cmd "duplicate host NQN stops the run (exit 1)" rc_is 1
	check_cmd "the message names both nodes" out_has "nodes 'n2' and 'n3' report the same host NQN"
	check_cmd "nothing changed on n1" test ! -e "$(cfg 1)/subsystems/$T1"
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

all=(fresh_apply converged replace killed_mid_apply unreachable_initiator limit sigint budget
     teardown two_clusters adopt duplicate_nqn removed_node spec_error apply_validate batches
     cached_facts)
. tests/cluster/secrets.sh && all+=(secrets)	# DH-HMAC-CHAP leak test (issue 9)
[ $# -gt 0 ] && all=("$@")
for scenario in "${all[@]}"; do
	echo "scenario $scenario"
	TAP_GROUP=$scenario
	"scenario_$scenario"
done

[ "$TAP_FAIL" -eq 0 ] || echo "work directory kept: $WORK"
tap_done "$BUILD/check/cluster.counts"
