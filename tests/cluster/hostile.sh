# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: a hostile node (tests/cluster/relay.sh)
# cannot hold a run. n2's sshd runs every command through the relay; its
# agent's `version` reports another build, so llmnet pushes, and the
# upload (the data as a command's stdin) never answers. `llmnet facts`
# ends anyway, names n2 and the upload that timed out, and n1 and n3
# answer. The honest relay beside it is the control: n2 answers as usual.
# Every run is under `timeout 60`, so a regression fails instead of hanging.

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
	relay_rules "$C" 2 "version $zeros" 'hang cat > "\$HOME/\.llmnet-agent\.upload\.'
	llmnet_bounded facts "$C/spec.yaml"
	check_cmd "hung upload: facts ends by itself" ended_by_itself
	check_cmd "hung upload: facts exits non-zero" not rc_is 0
	check_cmd "hung upload: n2 failed on the upload's timeout" \
		grep -qE "timed out after 5\.000s on 'n2' (running|sending input to) 'umask 177 && set -C && cat > " "$C/out"
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
