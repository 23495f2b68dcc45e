# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: the DH-HMAC-CHAP and NVMe/TCP TLS PSK
# leak test (issue 9, point 7) on the loopback cluster, the target with
# tls: required. `llmnet keys` makes the secrets; plan,
# apply, validate with every report format, teardown and lint -o json run
# at -vv with every trace area while /proc/*/cmdline and environ are
# snapshotted; then every output, the run log, the state folder, the
# reports, the agents' state files and answers, every file of the nodes'
# trees and the snapshots are searched for each secret (and for its key
# alone). Only the node key store and the kernel's own attributes may hold
# one, and they must (else the search proves nothing).

# secret_list DIR: every secret and PSK under the key directory, and its
# base64 key alone, one per line
secret_list() {
	local f s
	for f in "$1"/*/*.key "$1"/*/*.psk; do
		[ -e "$f" ] || continue
		s=$(head -n1 "$f")
		printf '%s\n' "$s"
		s=${s#DHHC-1:??:}
		s=${s#NVMeTLSkey-1:??:}
		printf '%s\n' "${s%:}"
	done
}

# The fixture kernels NVMe/TCP TLS needs: 6.12's nvmet (addr_tsas on a
# port) on n1, the .nvme keyring and a running tlshd on every node.
tls_nodes() {
	local i
	echo 6.12.118+deb13-amd64 > "$(root 1)/proc/sys/kernel/osrelease"
	for i in 1 2 3; do
		printf '292bb69c I------     2 perm 1f1f0000     0     0 keyring   .nvme: empty\n' \
			> "$(root "$i")/proc/keys"
		mkdir -p "$(root "$i")/proc/4242"
		echo tlshd > "$(root "$i")/proc/4242/comm"
	done
}
# in_keyring I HOST: node I's .nvme keyring holds HOST's PSK for the target
in_keyring() { grep -q " psk .*NVMe0R01 $2 $T1: 32\$" "$(root "$1")/proc/keys"; }
not_in_keyring() { ! in_keyring "$@"; }

# Snapshot every process's argv and environment every 50 ms until
# $C/snap.stop exists: hits go to $C/proc.hits; $C/proc.seen counts the
# snapshots that saw the controller and those that saw an agent (how many
# there are depends on the machine's load; that both were seen is what
# makes "no hit" mean something).
snap_start() {
	rm -f "$C/snap.stop" "$C/proc.hits" "$C/proc.seen"
	(
		ctl=0 agent=0
		while [ ! -e "$C/snap.stop" ]; do
			# one process reads every process's argv and environment (a
			# fork per process missed short-lived agents on a loaded machine)
			cur=$(python3 -c '
import os
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            print(open("/proc/%s/cmdline" % p, "rb").read().replace(b"\0", b" ").decode("latin-1"))
            print(open("/proc/%s/environ" % p, "rb").read().replace(b"\0", b"\n").decode("latin-1"))
        except OSError:
            pass' 2>/dev/null)
			grep -F -f "$C/secrets.list" <<< "$cur" >> "$C/proc.hits"
			grep -qE '(^|/)llmnet ' <<< "$cur" && ctl=$((ctl + 1))
			grep -qE 'llmnet-agent ' <<< "$cur" && agent=$((agent + 1))
			echo "$ctl $agent" > "$C/proc.seen"
			sleep 0.05
		done
	) &
	SNAP_PID=$!
}

snap_stop() {
	touch "$C/snap.stop"
	wait "$SNAP_PID"
}

# Files that hold a secret outside the allowed places (the node key store,
# nvmet's host attributes and the controller's dhchap attributes, the key
# directory itself and the snapshot hits).
leaks() {
	grep -rlF -f "$C/secrets.list" "$C" 2>/dev/null |
		grep -vE "^$C/keys/|^$C/(secrets\.list|proc\.hits)$" |
		grep -vE '/root/etc/llmnet/keys/loop/' |
		grep -vE '/root/sys/kernel/config/nvmet/hosts/[^/]+/dhchap_(key|ctrl_key)$' |
		grep -vE '/root/sys/class/nvme/nvme[0-9]+/dhchap_(secret|ctrl_secret)$'
}

scenario_secrets() {
	local k2 leaked
	new_cluster secrets || { fail "cluster up"; return; }
	# n1's fixture kernel has nvmet authentication (6.1's has none)
	mkdir -p "$(root 1)/etc/llmnet-fixture"
	touch "$(root 1)/etc/llmnet-fixture/nvmet-auth"
	cluster_node_identity "$C" 2
	cluster_node_identity "$C" 3
	tls_nodes
	sed -i "s|^      service: 4420|&\n      tls: required\n      dhchap: { key_dir: $C/keys, hash: sha384, bidirectional: true }|" \
		"$C/spec.yaml"
	printf 'validation:\n  - { stage: devices }\n' >> "$C/spec.yaml"

	llmnet plan "$C/spec.yaml"
	check_cmd "plan without secrets: exit 3" rc_is 3
	check_cmd "... naming the missing directory" out_has "key directory '$C/keys': No such file or directory ('llmnet keys SPEC' makes it)"
	check_cmd "... before any node" out_has "no node was contacted"
	check_cmd "no agent was pushed" test ! -e "$(root 1)/var/lib/llmnet/bin/llmnet-agent"

	llmnet keys "$C/spec.yaml"
	check_cmd "keys exits 0" rc_is 0
	check_cmd "keys prints the paths it made" out_has "$C/keys/n1/n3.ctrl.key"
	check_cmd "... the TLS PSKs too" out_has "$C/keys/n1/n3.psk"
	check_cmd "the PSKs are 0600, in the interchange format" \
		test "$(stat -c %a "$C/keys/n1/n2.psk") $(cut -c1-16 "$C/keys/n1/n2.psk")" = "600 NVMeTLSkey-1:01:"
	check_cmd "the secrets are 0600" test "$(stat -c %a "$C/keys/n1/n2.key")" = 600
	check_cmd "in 0700 directories" test "$(stat -c %a "$C/keys/n1")" = 700
	k2=$(cat "$C/keys/n1/n2.key")
	llmnet keys "$C/spec.yaml"
	check_cmd "a second keys run makes nothing" not_out_has "$C/keys/"
	check_cmd "... and replaces nothing" test "$(cat "$C/keys/n1/n2.key")" = "$k2"
	secret_list "$C/keys" > "$C/secrets.list"
	check_cmd "six secrets (two hosts, bidirectional, a PSK each) listed" test "$(wc -l < "$C/secrets.list")" -eq 12

	chmod 644 "$C/keys/n1/n3.key"
	llmnet apply "$C/spec.yaml"
	check_cmd "a loose secret: apply exits 3" rc_is 3
	check_cmd "... naming the file and the mode" out_has "secret '$C/keys/n1/n3.key' is open to others (mode 0644): chmod 600 it"
	check_cmd "... and nothing on the nodes" test ! -e "$(root 1)/var/lib/llmnet/bin/llmnet-agent"
	chmod 600 "$C/keys/n1/n3.key"

	snap_start
	llmnet -vv --trace=all plan "$C/spec.yaml"
	check_cmd "plan exits 0" rc_is 0
	llmnet -vv --trace=all -o json plan "$C/spec.yaml"
	check_cmd "plan -o json exits 0" rc_is 0
	llmnet -vv --trace=all apply "$C/spec.yaml"
	check_cmd "apply exits 0" rc_is 0
	check_cmd "apply converged" out_has "; converged."
	check_cmd "n1 keyed n2's host entry with its secret" \
		grep -qxF "$k2" "$(cfg 1)/hosts/$(hostnqn 2)/dhchap_key"
	check_cmd "n2 is connected" connected 2
	check_cmd "n3 is connected" connected 3
	check_cmd "n1's port requires TLS 1.3" grep -qx tls1.3 "$(cfg 1)"/ports/*/addr_tsas
	check_cmd "n1's keyring holds n2's and n3's PSKs" \
		sh -c "grep -q ' psk .*NVMe0R01 $(hostnqn 2) $T1: 32' '$(root 1)/proc/keys' && grep -q ' psk .*NVMe0R01 $(hostnqn 3) $T1: 32' '$(root 1)/proc/keys'"
	check_cmd "n2's keyring holds its PSK" in_keyring 2 "$(hostnqn 2)"
	check_cmd "n2 connected with tls" grep -q ',tls$' "$(root 2)/dev/nvme-fabrics"
	llmnet -vv --trace=all -o json apply "$C/spec.yaml"
	check_cmd "apply -o json exits 0" rc_is 0
	llmnet -vv --trace=all validate "$C/spec.yaml" --report "$C/r.json" --junit "$C/r.xml" \
		--html "$C/r.html" --metrics "$C/r.prom"
	check_cmd "validate wrote every report" test -s "$C/r.json" -a -s "$C/r.xml" -a -s "$C/r.html" -a -s "$C/r.prom"
	llmnet -vv --trace=all -o json lint "$C/spec.yaml"
	check_cmd "lint -o json shows the key directory" out_has "\"key_dir\": \"$C/keys\""
	# rotation: a new secret for n2 shows as a changed host key, by name only
	rm "$C/keys/n1/n2.key"
	llmnet keys "$C/spec.yaml"
	secret_list "$C/keys" >> "$C/secrets.list"
	llmnet -vv --trace=all plan "$C/spec.yaml"
	check_cmd "a changed secret: plan shows ~ nvmet_host_key" grep -qE "~ nvmet_host_key +$(hostnqn 2)" "$C/out"
	llmnet -vv --trace=all apply "$C/spec.yaml"
	check_cmd "rotation apply exits 0" rc_is 0
	check_cmd "n2's host entry has the new secret" \
		grep -qxF "$(cat "$C/keys/n1/n2.key")" "$(cfg 1)/hosts/$(hostnqn 2)/dhchap_key"
	check_cmd "the node key store holds the secrets (the search can find them)" \
		grep -rqF -f "$C/secrets.list" "$(root 1)/etc/llmnet/keys/loop"
	check_cmd "applied.json keeps fingerprints" grep -q '"redacted:' "$LLMNET_STATE_DIR/loop.applied.json"
	llmnet -vv --trace=all teardown "$C/spec.yaml"
	check_cmd "teardown exits 0" rc_is 0
	check_cmd "teardown wiped the node key store" test -z "$(ls -A "$(root 1)/etc/llmnet/keys/loop" 2>/dev/null)"
	check_cmd "teardown took the PSKs out of n1's keyring" not_in_keyring 1 "$(hostnqn 2)"
	check_cmd "... and out of n2's" not_in_keyring 2 "$(hostnqn 2)"
	snap_stop

	read -r seen_ctl seen_agent < "$C/proc.seen" 2>/dev/null || seen_ctl=0 seen_agent=0
	echo "# snapshots that saw llmnet: $seen_ctl, an agent: $seen_agent"
	check_cmd "the snapshots saw llmnet and its agents run" test "${seen_ctl:-0}" -ge 1 -a "${seen_agent:-0}" -ge 1
	check_cmd "no secret in any process's argv or environment" test ! -s "$C/proc.hits"
	cp -r "$LLMNET_STATE_DIR" "$C/state.copy"
	leaked=$(leaks)
	check_cmd "no secret in outputs, run log, state, reports or node files${leaked:+: $leaked}" test -z "$leaked"
	check_cmd "the search covered the outputs and the run log" test -s "$C/all.out" -a -s "$C/state.copy/loop.log"
}
