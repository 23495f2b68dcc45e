# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: host identity pinning (issue 32, point
# 3). n1 exports T1 (hosts n3, n2) and T2 (host n2 alone), both with
# DH-HMAC-CHAP. n3 claims the host NQN of n2 (pinned at first contact)
# while n2 is silent (reproduction 3), then while n2 answers (reproduction
# 5): n3 alone is excluded, n2's host entry on n1 keeps its key, n3 gets
# nothing of T2, n1 goes on, and the recap never says converged. Then n3
# reports a host NQN the agent's rules refuse (reproduction 4): n3 alone
# has no identity, n1 converges. Control: n3 back on its own NQN converges.

T2=nqn.2024-04.io.llmnet:n1.t2

# hostident_spec: the cluster's spec with dhchap on T1, T1's hosts in the
# order n3, n2 (the first to report an NQN was its key owner), and T2
hostident_spec() {
	sed -e "s|^      service: 4420|&\n      dhchap: { key_dir: $C/keys }|" \
	    -e '/^  initiators:/i\
    - nqn: '"$T2"'\
      node: n1\
      transport: tcp\
      address: 10.77.0.11\
      service: 4421\
      dhchap: { key_dir: '"$C"'/keys }\
      namespaces:\
        - { nsid: 1, file: /var/lib/nvmet/disk2.img, size: 1MiB }' \
	    -e '/^    - { node: n2, target/d' \
	    -e "/^    - { node: n3, target/a\\
    - { node: n2, target: $T1 }\\
    - { node: n2, target: $T2 }" "$C/spec.yaml"
}
# key_sum NQN: a hash of n1's host entry keys for NQN (never the secrets)
key_sum() { cat "$(cfg 1)/hosts/$1/dhchap_key" "$(cfg 1)/hosts/$1/dhchap_ctrl_key" 2>/dev/null | sha256sum; }
t2_allowed() { [ -L "$(cfg 1)/subsystems/$T2/allowed_hosts/$1" ]; }
t2_connected() { grep -qxF "$T2" "$(root "$1")"/sys/class/nvme/*/subsysnqn 2>/dev/null; }
n1_converged() { grep -qE '^n1 +: ok=[0-9]+ +changed=[0-9]+ +failed=0 ' "$C/out"; }

scenario_hostident() {
	local n2 n3 k2 k3
	new_cluster hostident || { fail "cluster up"; return; }
	mkdir -p "$(root 1)/etc/llmnet-fixture"
	touch "$(root 1)/etc/llmnet-fixture/nvmet-auth"	# nvmet authentication
	hostident_spec > "$C/spec2.yaml" && mv "$C/spec2.yaml" "$C/spec.yaml"
	llmnet keys "$C/spec.yaml"
	check_cmd "keys exits 0" rc_is 0
	llmnet apply "$C/spec.yaml"
	check_cmd "first apply exits 0" rc_is 0
	n2=$(hostnqn 2) n3=$(hostnqn 3)
	check_cmd "the pins are recorded, 0600" test "$(stat -c %a "$LLMNET_STATE_DIR/loop.hostident.json")" = 600
	check_cmd "n2's host entry on n1 is keyed" test -s "$(cfg 1)/hosts/$n2/dhchap_key"
	check_cmd "n2 has T2" t2_connected 2
	k2=$(key_sum "$n2") k3=$(key_sum "$n3")
	cluster_stop_node "$C" 2
	cp "$(root 3)/etc/nvme/hostnqn" "$C/n3.hostnqn"
	printf '%s\n' "$n2" > "$(root 3)/etc/nvme/hostnqn"
	llmnet apply "$C/spec.yaml"
	check_cmd "n2 silent, n3 claims it: exit 4" rc_is 4
	check_cmd "n3 is excluded, the pin named" out_has "n3: excluded: host identity '$n2' is not the one pinned for it"
	check_cmd "recap does not say converged" not says_converged
	check_cmd "... it says not converged" out_has "; not converged."
	check_cmd "n2's access is kept" allowed "$n2"
	check_cmd "n2's T2 access is kept" t2_allowed "$n2"
	check_cmd "n2's host entry on n1 keeps its key" test "$(key_sum "$n2")" = "$k2"
	check_cmd "n3's host entry on n1 keeps its key" test "$(key_sum "$n3")" = "$k3"
	check_cmd "n3's own access is not given away" allowed "$n3"
	check_cmd "n3 gets no access to T2" not t2_allowed "$n3"
	check_cmd "n3 is not connected to T2" not t2_connected 3
	check_cmd "no output shows a secret" not grep -qE "DHHC-1" "$C/all.out"
	cluster_start_node "$C" 2
	llmnet apply "$C/spec.yaml" --accept-replaced n3
	check_cmd "n2 back, n3 still claims it even with --accept-replaced: exit 4" rc_is 4
	check_cmd "n3 is excluded as n2's" out_has "n3: excluded: host NQN '$n2' is pinned to node 'n2'"
	check_cmd "recap does not say converged (n2 back)" not says_converged
	check_cmd "n2 is converged" grep -qE '^n2 +: ok=' "$C/out"
	check_cmd "n2 still allowed" allowed "$n2"
	check_cmd "n2 still connected" connected 2
	check_cmd "n2's host entry on n1 still keeps its key" test "$(key_sum "$n2")" = "$k2"
	check_cmd "n3 still not connected to T2" not t2_connected 3
	printf '%s\n' 'nqn.2014-08.org.nvmexpress:uuid:evil/../x' > "$(root 3)/etc/nvme/hostnqn"
	llmnet apply "$C/spec.yaml"
	check_cmd "a bad NQN on n3: not converged" not says_converged
	check_cmd "n3 alone has no identity, its NQN refused" out_has "n3: /etc/nvme/hostnqn is not a valid host NQN"
	check_cmd "n1 converges" n1_converged
	check_cmd "n1 never allows the bad NQN" test -z "$(find "$(cfg 1)" -name '*evil*')"
	check_cmd "n2 still connected (bad NQN)" connected 2
	cp "$C/n3.hostnqn" "$(root 3)/etc/nvme/hostnqn"
	llmnet apply "$C/spec.yaml"
	check_cmd "control: n3 on its own NQN converges" rc_is 0
	check_cmd "control: recap says converged" says_converged
	check_cmd "control: n3 allowed" allowed "$n3"
	check_cmd "control: n3 connected" connected 3
	# the host ID is pinned as the NQN is: another node's is refused, and
	# a node cannot shed its pin by reporting none first, then a new one
	local id2 id3
	id2=$(cat "$(root 2)/etc/nvme/hostid") id3=$(cat "$(root 3)/etc/nvme/hostid")
	printf '%s\n' "$id2" > "$(root 3)/etc/nvme/hostid"
	llmnet apply "$C/spec.yaml"
	check_cmd "n3 claims n2's host ID: exit 4" rc_is 4
	check_cmd "n3 is excluded, its pinned host ID named" \
		out_has "n3: excluded: host ID '$id2' is not the one pinned for it ('$id3')"
	check_cmd "n2 converges beside it" grep -qE '^n2 +: ok=' "$C/out"
	llmnet apply "$C/spec.yaml" --accept-replaced n3
	check_cmd "n3 claims n2's host ID even with --accept-replaced: exit 4" rc_is 4
	check_cmd "... excluded as n2's" out_has "n3: excluded: host ID '$id2' is pinned to node 'n2'"
	printf 'not-a-uuid\n' > "$(root 3)/etc/nvme/hostid"
	llmnet apply "$C/spec.yaml"
	check_cmd "n3's pinned host ID is kept while it reports none" \
		grep -qF "$id3" "$LLMNET_STATE_DIR/loop.hostident.json"
	cat /proc/sys/kernel/random/uuid > "$(root 3)/etc/nvme/hostid"
	llmnet apply "$C/spec.yaml"
	check_cmd "then a new host ID on n3: exit 4" rc_is 4
	check_cmd "... n3 excluded as not its pinned host ID" out_has "n3: excluded: host ID '$(cat "$(root 3)/etc/nvme/hostid")' is not the one pinned for it ('$id3')"
	printf '%s\n' "$id3" > "$(root 3)/etc/nvme/hostid"
	llmnet apply "$C/spec.yaml"
	check_cmd "control: n3 on its own host ID converges" rc_is 0
}
