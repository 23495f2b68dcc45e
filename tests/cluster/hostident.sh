# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: host identity pinning (issue 32, point
# 3). n3 claims the host NQN of n2 (pinned at first contact) while n2 is
# silent (reproduction 3), then while n2 answers (reproduction 5): n3 alone
# is excluded, n1 keeps n2's access and goes on, and the recap never says
# converged. Control: n3 back on its own NQN converges again.

scenario_hostident() {
	local n2 n3
	new_cluster hostident || { fail "cluster up"; return; }
	llmnet apply "$C/spec.yaml"
	check_cmd "first apply exits 0" rc_is 0
	llmnet apply "$C/spec.yaml"	# pins the identities the first apply made
	n2=$(hostnqn 2) n3=$(hostnqn 3)
	test -f "$LLMNET_STATE_DIR/loop.hostident.json"
	check_cmd "the pins are recorded, 0600" test "$(stat -c %a "$LLMNET_STATE_DIR/loop.hostident.json")" = 600
	cluster_stop_node "$C" 2
	cp "$(root 3)/etc/nvme/hostnqn" "$C/n3.hostnqn"
	printf '%s\n' "$n2" > "$(root 3)/etc/nvme/hostnqn"
	llmnet apply "$C/spec.yaml"
	check_cmd "n2 silent, n3 claims it: exit 4" rc_is 4
	check_cmd "n3 is excluded, the pin named" out_has "n3: excluded: host identity '$n2' is not the one pinned for it"
	check_cmd "recap does not say converged" not out_has "converged."
	check_cmd "n2's access is kept" allowed "$n2"
	check_cmd "n3's own access is not given away" allowed "$n3"
	cluster_start_node "$C" 2
	llmnet apply "$C/spec.yaml" --accept-replaced n3
	check_cmd "n2 back, n3 still claims it even with --accept-replaced: exit 4" rc_is 4
	check_cmd "n3 is excluded as n2's" out_has "n3: excluded: host NQN '$n2' is pinned to node 'n2'"
	check_cmd "n2 is converged" grep -qE '^n2 +: ok=' "$C/out"
	check_cmd "n2 still allowed" allowed "$n2"
	check_cmd "n2 still connected" connected 2
	cp "$C/n3.hostnqn" "$(root 3)/etc/nvme/hostnqn"
	llmnet apply "$C/spec.yaml"
	check_cmd "control: n3 on its own NQN converges" rc_is 0
	check_cmd "control: n3 allowed" allowed "$n3"
}
