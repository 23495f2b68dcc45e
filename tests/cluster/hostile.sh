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
