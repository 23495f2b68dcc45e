# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: a device: namespace's disk replaced on
# n1's fixture root (issue 31, point 2). n1 exports /dev/nvme0n1 (the
# fixture's local pcie drive) as nsid 2 beside its file namespace; the
# disk's WWID is then changed, as a really replaced disk's is. Without
# --accept-device apply refuses n1's target naming both identities and the
# flag, and changes nothing on n1; plan shows the change line; a word that
# names no node or no device of the spec is refused before any node is
# contacted; with the flag the new disk is pinned (run log) and exported;
# the control (the same disk, no flag) converges before and after.

DEV_WWID0=nvme.1b36-6465616462656566-51454d55204e564d65204374726c-00000001
DEV_WWID1=nvme.1b36-6465616462656566-51454d55204e564d65204374726c-000000aa

# n1's state pins nsid 2 to the disk with WWID $1 (pcie)
pinned() { grep -qF "\"device_id\": \"pcie:wwid:$1\"" "$(root 1)/var/lib/llmnet/state.json"; }
dev_exported() {
	grep -qxF /dev/nvme0n1 "$(cfg 1)/subsystems/$T1/namespaces/2/device_path" &&
	grep -qx 1 "$(cfg 1)/subsystems/$T1/namespaces/2/enable"
}
no_node_reached() { unchanged_since 1 "$C/mark" && unchanged_since 2 "$C/mark" && unchanged_since 3 "$C/mark"; }

scenario_accept_device() {
	local ns="$T1/2" log=$LLMNET_STATE_DIR/loop.log
	new_cluster devident || { fail "cluster up"; return; }
	sed -i 's|^        - { nsid: 1, file: /var/lib/nvmet/disk1.img, size: 1MiB }$|&\n        - { nsid: 2, device: /dev/nvme0n1 }|' "$C/spec.yaml"
	check_cmd "the spec exports n1's /dev/nvme0n1" grep -qF 'nsid: 2, device: /dev/nvme0n1' "$C/spec.yaml"
	llmnet apply "$C/spec.yaml"
	check_cmd "first apply exits 0" rc_is 0
	check_cmd "n1 exports /dev/nvme0n1" dev_exported
	check_cmd "the pin has the transport and the WWID" pinned "$DEV_WWID0"
	# the control: the same disk, no flag
	llmnet apply "$C/spec.yaml"
	check_cmd "the same disk: apply exits 0" rc_is 0
	check_cmd "the same disk: converged, nothing changed" out_has "apply: 0 changed on 3 nodes; converged."

	# the disk is replaced
	printf '%s\n' "$DEV_WWID1" > "$(root 1)/sys/block/nvme0n1/wwid"
	llmnet plan "$C/spec.yaml"
	check_cmd "plan shows the old and the new identity" \
		out_has "$ns  (device identity 'pcie:wwid:$DEV_WWID0' -> 'pcie:wwid:$DEV_WWID1')"
	check_cmd "as a change line of n1's target" grep -qE "^ +! nvmet_namespace +$ns  \(device identity" "$C/out"
	check_cmd "plan names the flag that accepts it" out_has '`llmnet apply --accept-device n1:/dev/nvme0n1`'
	touch "$C/mark"; sleep 1.1
	llmnet apply "$C/spec.yaml"
	check_cmd "without the flag, apply fails" not rc_is 0
	check_cmd "apply names both identities" \
		out_has "that was pcie:wwid:$DEV_WWID0, this is pcie:wwid:$DEV_WWID1; refusing to export it"
	check_cmd "apply names the flag" out_has '`llmnet apply --accept-device n1:/dev/nvme0n1` pins and exports this one'
	check_cmd "n1's configfs unchanged" test -z "$(find "$(cfg 1)" -newer "$C/mark" -print -quit)"
	check_cmd "the old pin stays" pinned "$DEV_WWID0"
	check_cmd "the apply does not say converged" not says_converged

	# a word that names no node, or no device of the spec: before any node
	touch "$C/mark"; sleep 1.1
	llmnet apply "$C/spec.yaml" --accept-device n9:/dev/nvme0n1
	check_cmd "an unknown node: usage error (64)" rc_is 64
	check_cmd "it names the word and the node" \
		out_has "--accept-device 'n9:/dev/nvme0n1': the spec has no node 'n9'; no node was contacted"
	llmnet apply "$C/spec.yaml" --accept-device n1:/dev/nvme1n1
	check_cmd "a path that is no device of n1: usage error (64)" rc_is 64
	check_cmd "it names the node and the path" \
		out_has "no target on node 'n1' has a namespace with device '/dev/nvme1n1'"
	llmnet apply "$C/spec.yaml" --accept-device n2:/dev/nvme0n1
	check_cmd "a device of another node: usage error (64)" rc_is 64
	check_cmd "no node was reached for the wrong words" no_node_reached

	# plan takes the flag as apply does: the change it would make, both identities
	touch "$C/mark"; sleep 1.1
	llmnet plan "$C/spec.yaml" --accept-device n1:/dev/nvme0n1
	check_cmd "plan --accept-device: accepted (not a usage error)" not rc_is 64
	check_cmd "plan --accept-device: the old and the new identity, accepted" \
		out_has "$ns  (device 'pcie:wwid:$DEV_WWID0' -> 'pcie:wwid:$DEV_WWID1' (--accept-device))"
	check_cmd "plan --accept-device: n1's namespace would change" \
		out_has "Plan: 0 to create, 1 to change, 0 to remove on 1 of 3 nodes."
	check_cmd "plan --accept-device: n1's configfs unchanged" \
		test -z "$(find "$(cfg 1)" -newer "$C/mark" -print -quit)"
	llmnet plan "$C/spec.yaml" --accept-device n9:/dev/nvme0n1
	check_cmd "plan, an unknown node: usage error (64)" rc_is 64

	# accepted
	llmnet apply "$C/spec.yaml" --accept-device n1:/dev/nvme0n1
	check_cmd "with the flag, apply exits 0" rc_is 0
	check_cmd "with the flag, converged" says_converged
	check_cmd "apply says what it accepted" \
		out_has "warning: n1: '$ns': device '/dev/nvme0n1' (/dev/nvme0n1) accepted as a replaced disk"
	check_cmd "n1's namespace is one change" out_has "n1: targets +0 ~1 -0"
	check_cmd "the namespace is pointed at the new disk again" \
		test -n "$(find "$(cfg 1)/subsystems/$T1/namespaces/2/device_path" -newer "$C/mark")"
	check_cmd "the new disk is pinned" pinned "$DEV_WWID1"
	check_cmd "and exported" dev_exported
	check_cmd "the run log records the old and the new identity" \
		grep -qF "accepted as a replaced disk (--accept-device n1:/dev/nvme0n1): pinned pcie:wwid:$DEV_WWID1, was pcie:wwid:$DEV_WWID0" "$log"
	check_cmd "n2 is still connected" connected 2
	# the control again: the new disk, no flag
	llmnet apply "$C/spec.yaml"
	check_cmd "then without the flag: converged, nothing changed" \
		out_has "apply: 0 changed on 3 nodes; converged."
}
