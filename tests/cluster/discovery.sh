# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: `discovery: true` (issue 15, point 3) on
# the loopback cluster. n2 and n3 find n1's target through its discovery
# controller: each fixture initiator reads the log made from n1's nvmet
# tree (etc/llmnet-fixture/fabric maps the target's address to n1's root).
# Then the discovery controller n3 reaches at that address does not list the
# subsystem for n3 (a copy of n1's tree without n3's allowed_hosts entry):
# apply fails on n3, naming n3, the target and what the log lists, and
# connects nothing; n2 stays connected. validate's devices stage reads the
# same logs (facts --discovery): it passes both initiators' discovery
# checks first, then fails n3's, naming what n3's log lists, while n2's
# still passes; no read leaves a discovery controller behind.

DISC_NQN=nqn.2014-08.org.nvmexpress.discovery
# node I holds a controller of the discovery subsystem
disc_ctrl_left() { grep -qxF "$DISC_NQN" "$(root "$1")"/sys/class/nvme/*/subsysnqn 2>/dev/null; }
# the status of node N's devices check "discoverable ..." in report R ("none": no such check)
disc_status() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
c = [c for c in r["checks"] if c.get("node") == sys.argv[2] and c["stage"] == "devices"
     and c["name"].startswith("discoverable ")]
print(c[0]["status"] + " " + c[0]["name"] if len(c) == 1 else "none")' "$1" "$2"
}

scenario_discovery() {
	local i n3
	new_cluster discovery || { fail "cluster up"; return; }
	for i in 2 3; do
		mkdir -p "$(root "$i")/etc/llmnet-fixture"
		echo "10.77.0.11 $(root 1)" > "$(root "$i")/etc/llmnet-fixture/fabric"
	done
	sed -e 's/target: nqn.2024-04.io.llmnet:n1.t1 }/target: nqn.2024-04.io.llmnet:n1.t1, discovery: true }/' \
		"$C/spec.yaml" > "$C/disc.yaml"
	check_cmd "the spec asks discovery for n2 and n3" test "$(grep -c 'discovery: true' "$C/disc.yaml")" = 2
	llmnet plan "$C/disc.yaml"
	check_cmd "plan shows the connects through the discovery log" \
		test "$(grep -c 'through the discovery log' "$C/out")" = 2
	llmnet apply "$C/disc.yaml"
	check_cmd "apply exits 0" rc_is 0
	check_cmd "n2 is connected" connected 2
	check_cmd "n3 is connected" connected 3
	check_cmd "n2: no discovery controller left" not disc_ctrl_left 2
	check_cmd "n3: no discovery controller left" not disc_ctrl_left 3
	llmnet apply "$C/disc.yaml"
	check_cmd "re-apply: 0 changed" out_has "apply: 0 changed on 3 nodes"
	printf 'validation:\n  - { stage: devices }\n' >> "$C/disc.yaml"
	llmnet validate "$C/disc.yaml" --report "$C/disc1.json"
	check_cmd "validate: n2 is discoverable there" test "$(disc_status "$C/disc1.json" n2)" = \
		"pass discoverable $T1 at 10.77.0.11:4420/tcp from n2"
	check_cmd "validate: n3 is discoverable there" test "$(disc_status "$C/disc1.json" n3)" = \
		"pass discoverable $T1 at 10.77.0.11:4420/tcp from n3"
	check_cmd "validate: n1 (the target) has no discovery check" \
		test "$(disc_status "$C/disc1.json" n1)" = none
	check_cmd "validate: no discovery controller left on n2 or n3" \
		eval '! disc_ctrl_left 2 && ! disc_ctrl_left 3'
	# the target at n3's view of 10.77.0.11 does not let n3 in: a copy of
	# n1's tree without n3's allowed_hosts entry serves n3's discovery
	n3=$(hostnqn 3)
	llmnet teardown "$C/disc.yaml" --limit n3
	check_cmd "n3's teardown exits 0" rc_is 0
	check_cmd "n3 is disconnected" not_connected 3
	cp -a "$(root 1)" "$C/n1-view"
	rm "$C/n1-view/sys/kernel/config/nvmet/subsystems/$T1/allowed_hosts/$n3"
	echo "10.77.0.11 $C/n1-view" > "$(root 3)/etc/llmnet-fixture/fabric"
	llmnet apply "$C/disc.yaml"
	check_cmd "n3's apply fails" not rc_is 0
	check_cmd "it names n3 and says what the log lists" \
		grep -qF "'$T1' is not in the discovery log at tcp 10.77.0.11:4420 for host '$n3': the log lists no subsystem for this host; not connecting" <(grep -A1 '^n3 ' "$C/out")
	check_cmd "n3 is not connected (no direct connect)" not_connected 3
	check_cmd "n3: no discovery controller left" not disc_ctrl_left 3
	check_cmd "n2 is still connected" connected 2
	llmnet validate "$C/disc.yaml" --report "$C/disc2.json"
	check_cmd "validate fails (exit 1)" rc_is 1
	check_cmd "validate: n3's discovery check fails" test "$(disc_status "$C/disc2.json" n3)" = \
		"fail discoverable $T1 at 10.77.0.11:4420/tcp from n3"
	check_cmd "it says what n3's log lists" out_has \
		"'$T1' is not in the discovery log at tcp 10.77.0.11:4420 for host '$n3': the log lists no subsystem for this host"
	check_cmd "validate: n2's still passes" test "$(disc_status "$C/disc2.json" n2)" = \
		"pass discoverable $T1 at 10.77.0.11:4420/tcp from n2"
	check_cmd "validate: no discovery controller left on n3" not disc_ctrl_left 3
}
