# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: validate's access stage (issue 27,
# point 4) over real ssh and agent sessions. n1 exports t1 to n2 only
# (hosts: [n2], no dhchap); n3 is in no hosts list and connects nothing.
# n3's fixture initiator has its connects judged by n1's nvmet tree
# (etc/llmnet-fixture/access-control, the fabric map to n1's root).
#  1. The stage asks n3, through `facts --refused`: n3 as itself is refused
#     (not in hosts); n3 claiming n2's host NQN gets in, is deleted at once,
#     and is a warning ("open to NQN claims"): exit 0, one target verdict of
#     severity warning on n1; no controller of t1 left on n3.
#  2. t1 made to let any host in (attr_allow_any_host 1 in n1's tree): n3 as
#     itself gets in, and the check fails with a target verdict of severity
#     fail, exit 1; again nothing left on n3.

# the access checks of report R as "status name" lines, and its verdicts
access_checks() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print("\n".join(("warning " if c["warning"] else "") + c["status"] + " " + c["name"]
                for c in r["checks"] if c["stage"] == "access"))
print("\n".join(v["kind"] + " " + v["severity"] + " " + v["node"] for v in r["verdicts"]))' "$1"
}

scenario_access() {
	new_cluster access || { fail "cluster up"; return; }
	cluster_node_identity "$C" 3
	sed -e "s|^      service: 4420$|      service: 4420\n      hosts: [n2]|" \
	    -e '/- { node: n3, target: /d' "$C/spec.yaml" > "$C/access.yaml"
	printf 'validation:\n  - { stage: access, timeout: 10s }\n' >> "$C/access.yaml"
	llmnet apply "$C/access.yaml"
	check_cmd "apply exits 0" rc_is 0
	check_cmd "n2 is connected" connected 2
	check_cmd "n3 is not connected" not_connected 3
	check_cmd "n1 does not allow n3" not_allowed "$(hostnqn 3)"
	mkdir -p "$(root 3)/etc/llmnet-fixture"
	echo "10.77.0.11 $(root 1)" > "$(root 3)/etc/llmnet-fixture/fabric"
	: > "$(root 3)/etc/llmnet-fixture/access-control"
	llmnet validate "$C/access.yaml" --report "$C/access1.json"
	check_cmd "holds: validate exits 0" rc_is 0
	check_cmd "holds: n3 refused as itself, its claim of n2's NQN a warning" \
		test "$(access_checks "$C/access1.json")" = "pass $T1: n3 as itself (not in hosts)
warning pass $T1: n3 claiming n2's host NQN
target warning n1"
	check_cmd "holds: the recap shows the warning verdict" \
		out_has "target warning n1 (access): '$T1' is open to NQN claims: 'n3' connected as 'n2' without a secret"
	check_cmd "holds: nothing left on n3" not_connected 3
	check_cmd "holds: n2 still connected" connected 2
	echo 1 > "$(cfg 1)/subsystems/$T1/attr_allow_any_host"
	llmnet validate "$C/access.yaml" --report "$C/access2.json"
	check_cmd "broken: validate exits 1" rc_is 1
	check_cmd "broken: n3 got in as itself, a fail verdict on n1" \
		test "$(access_checks "$C/access2.json")" = "fail $T1: n3 as itself (not in hosts)
warning pass $T1: n3 claiming n2's host NQN
target fail n1
target warning n1"
	check_cmd "broken: nothing left on n3" not_connected 3
	echo 0 > "$(cfg 1)/subsystems/$T1/attr_allow_any_host"
}
