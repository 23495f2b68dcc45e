# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: a node's own host identity that is not
# valid. n3's /etc/nvme/hostnqn carries ",dhchap_secret=..." after a valid
# NQN, which pasted into the connect's option string would add an option:
# plan and apply name n3's file and what is wrong and never show the
# secret (the facts' warning says it too, the reason n3 is not among n1's
# hosts); n3's files stay as they were and n3 connects nothing; n1 does
# not allow that NQN; n2 is connected as usual.

# n1's allowed_hosts and hosts are there, and none holds a ','.
no_host_with_comma() {
	local a=$(cfg 1)/subsystems/$T1/allowed_hosts h=$(cfg 1)/hosts
	[ -d "$a" ] && [ -d "$h" ] && [ -z "$(find "$a" "$h" -name '*,*')" ]
}

scenario_host_identity() {
	local bad='nqn.2014-08.org.example:n3,dhchap_secret=DHHC-1:00:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUEebzGt:'
	new_cluster identity || { fail "cluster up"; return; }
	mkdir -p "$(root 3)/etc/nvme"
	printf '%s\n' "$bad" > "$(root 3)/etc/nvme/hostnqn"
	printf '%s\n' 1f0f7b8a-0000-4000-8000-000000000003 > "$(root 3)/etc/nvme/hostid"
	cp -a "$(root 3)/etc/nvme" "$C/nvme-before"
	llmnet plan "$C/spec.yaml"
	check_cmd "plan names n3's hostnqn and what is wrong" \
		out_has "/etc/nvme/hostnqn is not a valid host NQN: ',' at offset 26"
	check_cmd "plan says why n3 is left out of n1's hosts (facts' warning)" \
		out_has "n3: /etc/nvme/hostnqn is not a valid host NQN: ',' at offset 26"
	llmnet apply "$C/spec.yaml"
	check_cmd "apply fails" not rc_is 0
	check_cmd "apply names n3's hostnqn and what is wrong" \
		grep -qF "/etc/nvme/hostnqn is not a valid host NQN: ',' at offset 26" \
		<(grep -A3 '^n3 ' "$C/out")
	check_cmd "no output shows the secret" not grep -qE "DHHC-1|QUFBQUFB" "$C/all.out"
	check_cmd "n3's host identity files as they were" diff -r "$C/nvme-before" "$(root 3)/etc/nvme"
	check_cmd "n3 is not connected" not_connected 3
	check_cmd "n1 does not allow n3's NQN" no_host_with_comma
	check_cmd "n1 allows n2's NQN" allowed "$(hostnqn 2)"
	check_cmd "n2 is connected" connected 2
}
