#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Fan-out benchmark on N loopback nodes (default 64), side by side:
#   pdsh -f N true             the floor: one ssh connection and exec per node
#   ansible-playbook           the same work as llmnet apply (playbook.yml)
#   llmnet apply               first run and converged re-run
#   llmnet apply (per-phase)   converged re-run, sessions reopened per phase
# Wall time is the median of REPS runs; CPU is user+sys of the controller
# process tree (for pdsh that is the ssh clients it starts: OpenSSH's cost
# per connection). Node CPU is what the nodes spent: the growth of every
# node sshd's reaped-children time (its connections, their sessions and
# the agent or `true` they ran); node CPU less pdsh's is the agent's share.
# pdsh and ansible are installed here, not by make check.
#
#   bench/fanout/run.sh [BUILD] [N] [REPS]     (ANSIBLE_REPS=1: Ansible runs take minutes;
#                                               ANSIBLE_REPS=0 skips Ansible,
#                                               PER_PHASE_REPS=0 the per-phase runs)
#
# The remote-step bound is raised to 120 s and the connect timeout to 60 s
# here: on one shared machine all N "nodes" compete for the same cores (at
# 256 nodes and load 100, sshd took more than 5 s to accept), and a first
# run uploads N agents.
set -eu
cd "$(dirname "$0")/../.."
. tests/cluster/lib.sh
BUILD=${1:-build} N=${2:-64} REPS=${3:-5}
LLMNET=$PWD/$BUILD/llmnet
export LLMNET_AGENT=$PWD/$BUILD/llmnet-agent
OUT=${BENCH_OUT:-bench/out/fanout}
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/llmnet-bench.XXXXXX)
C=$WORK/c
export LLMNET_STATE_DIR=$WORK/state
trap 'cluster_down "$C"' EXIT
trap 'exit 130' INT TERM

need=()
command -v pdsh >/dev/null || need+=(pdsh)
command -v ansible-playbook >/dev/null || need+=(ansible-core)
if [ ${#need[@]} -gt 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need[@]}" >/dev/null
fi

cluster_up "$C" "$N"
build_trees() { local i; for i in $(seq "$N"); do cluster_build_tree "$C" "$i"; done; }
build_trees
CLUSTER_PARALLEL=$N cluster_spec "$C" "$N" | sed "s/connect_timeout: 5s/connect_timeout: 60s/; s/timeout: 30s/timeout: 120s/" > "$C/spec.yaml"

# node_cpu_ticks: user+sys clock ticks the node sshds' reaped children used
# (fields 16 and 17 of /proc/PID/stat, after the ")" of the command name)
node_cpu_ticks() {
	local i t=0 f
	for i in $(seq "$N"); do
		f=$(sed 's/.*) //' "/proc/$(cat "$C/node$i/harness.pid")/stat") || return 1
		set -- $f
		t=$((t + ${14} + ${15}))
	done
	echo "$t"
}
HZ=$(getconf CLK_TCK)

# measure NAME CMD...: appends "NAME wall user sys node_cpu_s" to $OUT/raw
measure() {
	local name=$1 before; shift
	before=$(node_cpu_ticks)
	/usr/bin/time -f '%e %U %S' -o "$WORK/t" "$@" > "$WORK/last.out" 2>&1 || true
	# sshd reaps a connection's process just after the client sees it end
	sleep 1
	echo "$name $(tail -n 1 "$WORK/t") $(awk -v a="$before" -v b="$(node_cpu_ticks)" -v hz="$HZ" \
		'BEGIN { printf "%.2f", (b - a) / hz }')" | tee -a "$OUT/raw"
}
: > "$OUT/raw"

SSHOPT="-o UserKnownHostsFile=$C/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes -i $C/id_ed25519"
for _ in $(seq "$REPS"); do
	PDSH_RCMD_TYPE=ssh PDSH_SSH_ARGS_APPEND="$SSHOPT" measure pdsh \
		pdsh -f "$N" -l root -w "$(for i in $(seq "$N"); do cluster_addr "$i"; done | paste -sd,)" true
done

# Ansible inventory: each node's root, role and the hostfile.
hostfile=$(for i in $(seq "$N"); do printf 'n%d slots=1\\n' "$i"; done)
{
	echo "[nodes]"
	for i in $(seq "$N"); do
		role=initiator; [ "$i" -eq 1 ] && role=target
		echo "n$i ansible_host=$(cluster_addr "$i") root=$C/node$i/root role=$role"
	done
	echo "[nodes:vars]"
	echo "ansible_user=root"
	echo "ansible_ssh_private_key_file=$C/id_ed25519"
	echo "ansible_ssh_common_args='-o UserKnownHostsFile=$C/known_hosts -o StrictHostKeyChecking=yes'"
	echo "ansible_python_interpreter=/usr/bin/python3"
	echo "agent=$LLMNET_AGENT"
	echo "t1=nqn.2024-04.io.llmnet:n1.t1"
	echo "hostfile=\"$hostfile\""
	printf 'host_nqns=['
	for i in $(seq 2 "$N"); do printf '"nqn.2014-08.org.nvmexpress:uuid:bench-%d",' "$i"; done
	echo ']'
} > "$WORK/inventory"
if [ "${ANSIBLE_REPS:-1}" -gt 0 ]; then
export ANSIBLE_PIPELINING=True ANSIBLE_HOST_KEY_CHECKING=True ANSIBLE_FORKS=$N \
	ANSIBLE_DISPLAY_OK_HOSTS=False ANSIBLE_DISPLAY_SKIPPED_HOSTS=False ANSIBLE_LOCALHOST_WARNING=False
measure ansible-first ansible-playbook -i "$WORK/inventory" bench/fanout/playbook.yml
grep -q 'failed=[1-9]\|unreachable=[1-9]\|ERROR' "$WORK/last.out" && { echo "ansible failed:"; cat "$WORK/last.out"; exit 1; }
for _ in $(seq "${ANSIBLE_REPS:-1}"); do
	measure ansible-converged ansible-playbook -i "$WORK/inventory" bench/fanout/playbook.yml
done
fi

# llmnet on fresh trees (and no agent on the nodes yet).
build_trees
measure llmnet-first "$LLMNET" apply "$C/spec.yaml"
grep -q '; converged' "$WORK/last.out" || { echo "llmnet first apply did not converge:"; cat "$WORK/last.out"; exit 1; }
for _ in $(seq "$REPS"); do
	measure llmnet-converged "$LLMNET" apply "$C/spec.yaml"
	grep -q 'apply: 0 changed' "$WORK/last.out" || { echo "converged re-run changed something:"; cat "$WORK/last.out"; exit 1; }
done
for _ in $(seq "${PER_PHASE_REPS:-$REPS}"); do
	LLMNET_SESSIONS=per-phase measure llmnet-converged-per-phase "$LLMNET" apply "$C/spec.yaml"
done

# Summary: medians, ratios, CPU per node.
awk -v n="$N" '
{ w[$1] = w[$1] " " $2; c[$1] = c[$1] " " ($3 + $4); nc[$1] = nc[$1] " " $5 }
function med(s,   a, k, i, j, t) { k = split(s, a, " "); for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return a[int((k + 1) / 2)] }
END {
	split("pdsh ansible-first ansible-converged llmnet-first llmnet-converged llmnet-converged-per-phase", order, " ")
	printf "%-28s %8s %12s %14s %16s\n", "run (" n " nodes)", "wall s", "x pdsh true", "CPU ms/node", "node CPU ms/node"
	p = med(w["pdsh"])
	for (i = 1; i <= 6; i++) { k = order[i]; if (!(k in w)) continue
		printf "%-28s %8.2f %12.2f %14.1f %16.1f\n", k, med(w[k]), med(w[k]) / p, 1000 * med(c[k]) / n, 1000 * med(nc[k]) / n }
	if ("ansible-converged" in w)
		printf "\nansible converged / llmnet converged: %.1fx\n", med(w["ansible-converged"]) / med(w["llmnet-converged"])
}' "$OUT/raw" | tee "$OUT/summary.txt"
