# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: validate --drain, --drain=plan and
# --resume (issue 28, point 2) over real ssh and agents. Three nodes; n1
# is slurm.node, where a stand-in scontrol laid over /usr/bin (in its
# sshd's mount namespace, as rails.sh lays rping) keeps each node's Slurm
# state and reason under $C/slurm and logs every call; every node has
# rails.sh's stand-in rping, so a link can be made bad.
#  - n3's port DOWN: --drain drains n3 alone, with llmnet's reason, read
#    back; n1 and n2 stay idle;
#  - a person drains n2, n3 heals: --resume lifts n3's drain (UNDRAIN) and
#    keeps the person's drain and reason;
#  - a bad link n1-n2: --drain drains nobody ("the link, not a node");
#  - n3 DOWN again with --drain=plan: printed, nothing changed.

# The stand-in scontrol into DIR: the three forms the agent allows.
slurm_standin() {
	local dir=$1
	mkdir -p "$dir"
	printf '#!/bin/bash\n# stand-in scontrol (tests/cluster/slurm.sh)\nPATH=/usr/sbin:/usr/bin:/sbin:/bin\nst=%s\n' \
		"$C/slurm" > "$dir/scontrol"
	cat >> "$dir/scontrol" <<'SH'
echo "$*" >> "$st/calls"
if [ "$1" = -o ] && [ "$2" = show ] && [ "$3" = node ]; then
	[ -f "$st/$4.state" ] || { echo "Node $4 not found"; exit 1; }
	r=$(cat "$st/$4.reason" 2>/dev/null)
	echo "NodeName=$4 Arch=x86_64 OS=Linux 6.12 #1 SMP State=$(cat "$st/$4.state") Partitions=debug${r:+ Reason=$r [root@2026-12-04T01:00:00]}"
	exit 0
fi
[ "$1" = update ] || exit 1
n=${2#NodeName=}
case $3 in
State=DRAIN) echo IDLE+DRAIN > "$st/$n.state"; printf '%s\n' "${4#Reason=}" > "$st/$n.reason" ;;
State=UNDRAIN) echo IDLE > "$st/$n.state"; rm -f "$st/$n.reason" ;;
*) exit 1 ;;
esac
SH
	chmod 0755 "$dir/scontrol"
}

slurm_state() { cat "$C/slurm/$1.state"; }
slurm_reason() { cat "$C/slurm/$1.reason" 2>/dev/null; }
port_state() { echo "$2" > "$(root "$1")/sys/class/infiniband/rxe0/ports/1/state"; }

scenario_slurm() {
	local i ib
	new_cluster slurm 3 || { fail "cluster up"; return; }
	mkdir -p "$C/rails/run" "$C/slurm"
	: > "$C/rails/faults"
	: > "$C/slurm/calls"
	for i in 1 2 3; do
		ib=$(root "$i")/sys/class/infiniband
		mkdir -p "$ib"
		[ "$i" = 1 ] || cp -a "$(root 1)/sys/class/infiniband/rxe0" "$ib/"
		printf '0000:0000:0000:0000:0000:ffff:0a4d:%04x\n' $((10 + i)) > "$ib/rxe0/ports/1/gids/1"
		echo IDLE > "$C/slurm/n$i.state"
		rails_standin "$C/node$i/usrbin" "$i"
		[ "$i" = 1 ] && slurm_standin "$C/node$i/usrbin"
		cluster_stop_node "$C" "$i"
		cluster_start_node "$C" "$i" "$C/node$i/usrbin" || { fail "node $i with its stand-ins"; return; }
	done
	{
		printf 'version: 1\ncluster: loop\nssh: { user: root, identity: %s/id_ed25519, known_hosts: %s/known_hosts, connect_timeout: 5s, timeout: 30s }\nnodes:\n' "$C" "$C"
		for i in 1 2 3; do
			printf '  - { name: n%d, address: %s, rdma: [ { device: rxe0, ip: 10.77.0.%d } ] }\n' \
				"$i" "$(cluster_addr "$i")" $((10 + i))
		done
		printf 'slurm: { node: n1 }\nvalidation:\n  - { stage: devices }\n  - { stage: rping, count: 2, timeout: 30s }\n'
	} > "$C/slurm.yaml"

	port_state 3 "1: DOWN"
	llmnet validate "$C/slurm.yaml" --attempts 1 --drain --report "$C/drain.json"
	check_cmd "a bad port: validate fails (exit 1)" rc_is 1
	check "n3 is drained" IDLE+DRAIN "$(slurm_state n3)"
	check_cmd "with llmnet's reason" grep -q '^llmnet:loop: devices: ' "$C/slurm/n3.reason"
	check "n1 and n2 are not" "IDLE IDLE" "$(slurm_state n1) $(slurm_state n2)"
	check_cmd "the drain is printed before it is made" out_has "slurm: will drain n3 (Slurm node n3): llmnet:loop: devices: "
	check "the state read first, then the drain, then read back" \
		"-o show node n3|update NodeName=n3 State=DRAIN|-o show node n3" \
		"$(cut -d' ' -f1-4 "$C/slurm/calls" | sed 's/ Reason=.*//' | paste -sd'|')"
	check "the JSON report lists the drain" "drained n3" "$(python3 -c 'import json,sys
print(" ".join(c["action"] + " " + c["node"] for c in json.load(open(sys.argv[1]))["slurm"] if c["node"]))' "$C/drain.json")"

	echo IDLE+DRAIN > "$C/slurm/n2.state"
	echo "maintenance: new DIMMs" > "$C/slurm/n2.reason"
	port_state 3 "4: ACTIVE"
	: > "$C/slurm/calls"
	llmnet validate "$C/slurm.yaml" --attempts 1 --resume
	check_cmd "healed: validate passes (exit 0)" rc_is 0
	check "n3's llmnet drain is lifted" "IDLE" "$(slurm_state n3)$(slurm_reason n3)"
	check_cmd "with UNDRAIN" grep -qxF "update NodeName=n3 State=UNDRAIN" "$C/slurm/calls"
	check "the person's drain of n2 stays, with its reason" "IDLE+DRAIN maintenance: new DIMMs" \
		"$(slurm_state n2) $(slurm_reason n2)"
	check_cmd "n2 is never updated" not grep -q "NodeName=n2" "$C/slurm/calls"
	check_cmd "the recap says n2 was not resumed" out_has "not resumed n2: the drain is not this cluster's llmnet drain"

	echo "link 1 2 0" > "$C/rails/faults"
	: > "$C/slurm/calls"
	llmnet validate "$C/slurm.yaml" --attempts 1 --drain
	check_cmd "a bad link: validate fails (exit 1)" rc_is 1
	check_cmd "the link drains nobody, and says so" out_has "(rping): the link, not a node"
	check_cmd "no node is updated" not grep -q update "$C/slurm/calls"
	check "n1 and n3 stay idle" "IDLE IDLE" "$(slurm_state n1) $(slurm_state n3)"

	: > "$C/rails/faults"
	: > "$C/slurm/calls"
	port_state 3 "1: DOWN"
	llmnet validate "$C/slurm.yaml" --attempts 1 --drain=plan
	check_cmd "--drain=plan prints the drain" out_has "slurm: would drain n3 (Slurm node n3)"
	check_cmd "--drain=plan changes nothing" not grep -q update "$C/slurm/calls"
	check "n3 stays idle" IDLE "$(slurm_state n3)"
}
