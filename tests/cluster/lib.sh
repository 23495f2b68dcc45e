#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Loopback cluster: N simulated nodes on this machine, each an sshd of its
# own on 127.0.1.<i>:22 with its own host key (listed in a generated
# known_hosts, so host-key checking stays on), one generated client key,
# and `SetEnv LLMNET_AGENT_ROOT=<node>/root` so each node's agent works on
# its own fixture tree. The harness starts and stops only the sshd PIDs it
# recorded; it never touches another sshd (port 2024 belongs to the host).
#
#   . tests/cluster/lib.sh
#   cluster_up DIR N          create and start nodes 1..N
#   cluster_stop_node DIR I   stop node I's sshd (simulates a dead node)
#   cluster_start_node DIR I [TOOLS]  start it again; with TOOLS, a folder,
#                             its sshd runs in a mount namespace of its own
#                             where TOOLS is laid over /usr/bin (overlayfs),
#                             so that node's agent finds stand-in system
#                             tools there (nothing changes outside)
#   cluster_start_node DIR I  start it again
#   cluster_rekey_node DIR I  new host key (reinstall), not in known_hosts
#   cluster_down DIR          stop every sshd this harness started in DIR
#   cluster_addr I            127.0.1.<I> (CLUSTER_NET=127.0.2 moves the cluster);
#                             nodes past 250 go on in the next /24 (benchmarks)

SSHD=${SSHD:-/usr/sbin/sshd}

cluster_addr() {
	local net=${CLUSTER_NET:-127.0.1} i=$1
	echo "${net%.*}.$((${net##*.} + (i - 1) / 250)).$(((i - 1) % 250 + 1))"
}

cluster_fail() { echo "cluster: $*" >&2; return 1; }

# Wait until addr:22 accepts connections, up to 5 s.
cluster_wait_port() {
	local addr=$1 i
	for i in $(seq 50); do
		if (exec 3<>"/dev/tcp/$addr/22") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	return 1
}

cluster_check_port_free() {
	# A wildcard listener on :22 would swallow our 127.0.1.x addresses.
	if ss -Hltn 'sport = :22' | awk '{print $4}' | grep -qE '^(0\.0\.0\.0|\*|\[::\]):22$'; then
		cluster_fail "a wildcard sshd already listens on port 22; cannot place loopback nodes"
		return 1
	fi
}

cluster_write_sshd_config() {
	local dir=$1 i=$2 n=$dir/node$i
	cat > "$n/sshd_config" <<CFG
ListenAddress $(cluster_addr "$i"):22
HostKey $n/ssh_host_ed25519_key
PidFile $n/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
MaxStartups 200:30:400
MaxSessions 64
Subsystem sftp internal-sftp
SetEnv LLMNET_AGENT_ROOT=$n/root
LogLevel VERBOSE
CFG
}

cluster_keyscan_line() {
	local dir=$1 i=$2
	printf '%s %s\n' "$(cluster_addr "$i")" "$(cut -d' ' -f1,2 "$dir/node$i/ssh_host_ed25519_key.pub")"
}

cluster_start_node() {
	local dir=$1 i=$2 n=$1/node$2 addr pid
	addr=$(cluster_addr "$i")
	if [ -n "$(ss -Hltn "src $addr:22")" ]; then
		cluster_fail "node$i: $addr:22 is already taken (another cluster still running?)"
		return 1
	fi
	mkdir -p /run/sshd
	if [ -n "${3:-}" ]; then
		mkdir -p "$n/usrbin.work"
		# unshare and sh exec: the PID is sshd's, which cluster_stop_node checks
		unshare -m --propagation private sh -c 'mount -t overlay overlay -o \
			"lowerdir=/usr/bin,upperdir=$1,workdir=$2" /usr/bin && shift 2 && exec "$@"' \
			sh "$3" "$n/usrbin.work" "$SSHD" -D -f "$n/sshd_config" -E "$n/sshd.log" &
	else
		"$SSHD" -D -f "$n/sshd_config" -E "$n/sshd.log" &
	fi
	pid=$!
	echo "$pid" > "$n/harness.pid"
	cluster_wait_port "$addr" && kill -0 "$pid" 2>/dev/null ||
		{ cluster_fail "node$i: sshd did not start (see $n/sshd.log)"; return 1; }
}

cluster_stop_node() {
	local n=$1/node$2 pid
	[ -f "$n/harness.pid" ] || return 0
	pid=$(cat "$n/harness.pid")
	# Only a PID we started, and only while it is still our sshd.
	if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "$n/sshd_config"; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -f "$n/harness.pid"
}

cluster_rekey_node() {
	local dir=$1 i=$2 n=$1/node$2
	rm -f "$n/ssh_host_ed25519_key" "$n/ssh_host_ed25519_key.pub"
	ssh-keygen -q -t ed25519 -N '' -C "node$i-reinstalled" -f "$n/ssh_host_ed25519_key"
}

cluster_up() {
	local dir=$1 count=$2 i n
	cluster_check_port_free || return 1
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	[ -f "$dir/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C llmnet-cluster -f "$dir/id_ed25519"
	cp "$dir/id_ed25519.pub" "$dir/authorized_keys"
	: > "$dir/known_hosts"
	for i in $(seq "$count"); do
		n=$dir/node$i
		mkdir -p "$n/root"
		[ -f "$n/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C "node$i" -f "$n/ssh_host_ed25519_key"
		cluster_write_sshd_config "$dir" "$i"
		cluster_keyscan_line "$dir" "$i" >> "$dir/known_hosts"
	done
	echo "$count" > "$dir/count"
	for i in $(seq "$count"); do
		cluster_start_node "$dir" "$i" || { cluster_down "$dir"; return 1; }
	done
}

cluster_down() {
	local dir=$1 i count
	[ -f "$dir/count" ] || return 0
	count=$(cat "$dir/count")
	for i in $(seq "$count"); do cluster_stop_node "$dir" "$i"; done
}

# Number of accepted connections node I's sshd has logged.
cluster_conn_count() {
	grep -c 'Connection from' "$1/node$2/sshd.log" 2>/dev/null || true
}

# Write a spec for nodes 1..N: node 1 exports one target (tcp, a 1 MiB
# backing file), every other node mounts nothing but connects to it, and
# every node gets the hostfile. Extra YAML for the ssh section may follow.
#   cluster_spec DIR N [SSH_EXTRA] > spec.yaml
cluster_spec() {
	local dir=$1 count=$2 extra=${3:-} i
	cat <<YAML
version: 1
cluster: loop
ssh: { user: root, identity: $dir/id_ed25519, known_hosts: $dir/known_hosts, parallel: ${CLUSTER_PARALLEL:-64}, connect_timeout: 5s, timeout: 30s${extra:+, $extra} }
nodes:
YAML
	for i in $(seq "$count"); do
		printf '  - { name: n%d, address: %s, gpus: 1 }\n' "$i" "$(cluster_addr "$i")"
	done
	cat <<YAML
storage:
  targets:
    - nqn: nqn.2024-04.io.llmnet:n1.t1
      node: n1
      transport: tcp
      address: 10.77.0.11
      service: 4420
      namespaces:
        - { nsid: 1, file: /var/lib/nvmet/disk1.img, size: 1MiB }
  initiators:
YAML
	for i in $(seq 2 "$count"); do
		printf '    - { node: n%d, target: nqn.2024-04.io.llmnet:n1.t1 }\n' "$i"
	done
	cat <<YAML
mpi: { hostfile: /etc/llmnet/hostfile }
YAML
}

# Give node I a host identity, as nvme-cli's installation does on a real
# node: /etc/nvme/hostnqn and hostid under its root.
cluster_node_identity() {
	local dir=$1 i=$2 uuid=${3:-}
	[ -n "$uuid" ] || uuid=$(cat /proc/sys/kernel/random/uuid)
	mkdir -p "$dir/node$i/root/etc/nvme"
	echo "nqn.2014-08.org.nvmexpress:uuid:$uuid" > "$dir/node$i/root/etc/nvme/hostnqn"
	echo "$uuid" > "$dir/node$i/root/etc/nvme/hostid"
}

# Build node I's root from the agent's fixture trees: node 1 is a target
# node, the others initiator nodes without a host identity. Each node gets
# its own hostname, machine id and product UUID (the seed of its host NQN).
#   cluster_build_tree DIR I [SERIAL]
cluster_build_tree() {
	local dir=$1 i=$2 serial=${3:-$2} tree fx=${CLUSTER_FIXTURES:-tests/fixtures/agent}
	local root=$dir/node$i/root
	local id
	id=$(printf '%012d' "$serial")
	[ "$i" -eq 1 ] && tree=$fx/node-target.tree || tree=$fx/node-initiator.tree
	rm -rf "$root"
	sed -e "s/hostname te[0-9]*/hostname n$i/" \
	    -e "s/1f0f7b8a-0000-4000-8000-00000000000[0-9]/1f0f7b8a-0000-4000-8000-$id/g" \
	    -e "s/4b0c0d6f2a1e4c7e9d1b2f3a4c5d6e0[0-9]/4b0c0d6f2a1e4c7e9d1b$id/" \
	    "$tree" > "$dir/node$i/tree"
	bash "$fx/build-tree.sh" "$dir/node$i/tree" "$root"
}
