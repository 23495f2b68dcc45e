#!/bin/bash
# SPDX-License-Identifier: MIT
# images: 6.12
#
# validate's access stage (issue 27, point 4) on the 6.12 lab, 3 guests.
# lab1 exports four subsystems, one spec, keys made by llmnet keys:
#   open   tcp 4423, hosts [lab3], no dhchap, no TLS
#   keyed  tcp 4424, hosts [lab2], dhchap (lab2 connects with its key)
#   tls    tcp 4425, hosts [lab2], dhchap and tls: required
#   rdma   rdma 4426, hosts [lab2], dhchap
# Every guest has the NVMe host modules loaded and a host identity first
# (the stage loads and makes neither). Then:
#  1. `llmnet validate --stages access`: every attempt the stage plans is
#     refused by the target but the claim on `open`, which gets in and is
#     deleted at once: the stage passes with one target verdict of
#     severity warning ("open to NQN claims") on lab1; over rdma the
#     wrong-secret check is skipped (never tried: 6.12's nvme_auth_wait
#     hang), the claim without a secret refused at once; no controller of
#     any of the four subsystems is left on any guest, no task is hung.
#  2. keyed's access control broken by hand (lab3's host entry linked
#     into keyed's allowed_hosts on lab1): the stage fails with a target verdict of severity fail naming
#     keyed (lab3 as itself got in and was deleted at once); the claim of
#     lab2's NQN is still refused (its host entry keeps its key); again
#     nothing is left behind. Then teardown --purge.
# Run through tests/e2e/run.sh (it takes the lab lock); about 60-90 s.
set -uo pipefail
. "$(dirname "$0")/../../lab/lib.sh"
. "$(dirname "$0")/../../lib/tap.sh"
tap_init access
cd "$LAB_REPO" || exit 1

[ "$LAB_N" -ge 3 ] || { fail "the access scenario needs 3 guests, the lab has $LAB_N"; tap_done; exit 1; }
LLMNET=$PWD/${BUILD:-build}/llmnet
[ -x "$LLMNET" ] || { fail "no $LLMNET: run make first"; exit 1; }
mkdir -p "${BUILD:-build}/check/e2e"
W=$(cd "${BUILD:-build}/check/e2e" && pwd)/access.run
rm -rf "$W" && mkdir -p "$W/keys" && chmod 700 "$W/keys" || { fail "cannot make '$W'"; exit 1; }
export LLMNET_AGENT=$PWD/${BUILD:-build}/llmnet-agent LLMNET_STATE_DIR=$W/state
P=nqn.2024-04.io.llmnet.e2e:lab1.access
t0=$(date +%s)

json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# controllers of the four subsystems on guest I, one "NQN" per line
ctrls() { lab_ssh "$1" "cat /sys/class/nvme/nvme*/subsysnqn 2>/dev/null | grep -c '^$P\.' || true"; }

# --- the guests: host modules and identities (what an initiator's apply
# would have made; the stage itself changes nothing) ------------------------
for i in 1 2 3; do
	lab_ssh "$i" 'modprobe nvme-tcp && modprobe nvme-rdma && mkdir -p /etc/nvme &&
		{ [ -s /etc/nvme/hostnqn ] || nvme gen-hostnqn >/etc/nvme/hostnqn; } &&
		{ [ -s /etc/nvme/hostid ] || cat /proc/sys/kernel/random/uuid >/etc/nvme/hostid; }' ||
		fail "lab$i: cannot load the host modules or make its host identity"
done

lab_spec examples/lab.yaml "$W/lab.yaml"
{
	sed -n '/^ssh:/,/^$/p' "$W/lab.yaml"
	cat <<YAML
version: 1
cluster: e2e-access
nodes:
YAML
	for i in 1 2 3; do
		echo "  - { name: lab$i, address: $(lab_addr "$i"), port: 22, rdma: [ { device: rxe0, port: 1, ip: $(lab_fabric_ip "$i"), link_layer: ethernet, mtu: 4096 } ] }"
	done
	cat <<YAML
storage:
  targets:
    - { nqn: $P.open, node: lab1, transport: tcp, service: 4423, hosts: [lab3],
        namespaces: [ { nsid: 1, file: /var/lib/nvmet/e2e/access-open.img, size: 16MiB } ] }
    - { nqn: $P.keyed, node: lab1, transport: tcp, service: 4424, hosts: [lab2],
        dhchap: { key_dir: $W/keys, hash: sha256, dhgroup: ffdhe2048 },
        namespaces: [ { nsid: 1, file: /var/lib/nvmet/e2e/access-keyed.img, size: 16MiB } ] }
    - { nqn: $P.tls, node: lab1, transport: tcp, service: 4425, hosts: [lab2], tls: required,
        dhchap: { key_dir: $W/keys, hash: sha256, dhgroup: ffdhe2048 },
        namespaces: [ { nsid: 1, file: /var/lib/nvmet/e2e/access-tls.img, size: 16MiB } ] }
    - { nqn: $P.rdma, node: lab1, transport: rdma, service: 4426, hosts: [lab2],
        dhchap: { key_dir: $W/keys, hash: sha256, dhgroup: ffdhe2048 },
        namespaces: [ { nsid: 1, file: /var/lib/nvmet/e2e/access-rdma.img, size: 16MiB } ] }
  initiators:
    - { node: lab2, target: $P.keyed, nr_io_queues: 1 }
validation:
  - { stage: access, timeout: 20s }
YAML
} >"$W/access.yaml"
"$LLMNET" --no-color lint "$W/access.yaml" >"$W/lint.out" 2>&1
check "the spec lints" 0 "$?"
"$LLMNET" --no-color keys "$W/access.yaml" >"$W/keys.out" 2>&1
check "llmnet keys exits 0" 0 "$?"
"$LLMNET" --no-color apply "$W/access.yaml" >"$W/apply.out" 2>&1
check "apply exits 0" 0 "$?"
before=$(for i in 1 2 3; do echo "lab$i $(ctrls "$i")"; done)
check "before: only lab2's keyed controller" "lab1 0 lab2 1 lab3 0" "$(echo $before)"
m3=$(lab_ssh 3 'dmesg | wc -l')

# the stage's checks as "status name" lines, and its verdicts
checks() { json "$1" "'\n'.join(('warning ' if c['warning'] else '') + c['status'] + ' ' + c['name'] for c in d['checks'] if c['stage'] == 'access')"; }
verdicts() { json "$1" "'\n'.join(v['kind'] + ' ' + v['severity'] + ' ' + v['node'] + ': ' + v['reason'] for v in d['verdicts'])"; }
reasons() { json "$1" "'\n'.join('# ' + c['name'] + ': ' + str(c['reason']) for c in d['checks'] if c['stage'] == 'access')"; }

# --- 1. the declared access control holds ----------------------------------
s=$(date +%s)
"$LLMNET" --no-color validate "$W/access.yaml" --stages access --report "$W/v1.json" >"$W/v1.out" 2>&1
rc=$?
check "holds: validate exits 0 ($(($(date +%s) - s)) s)" 0 "$rc"
reasons "$W/v1.json"
check "holds: every check as planned" "$(cat <<EOF
pass $P.open: lab1 as itself (not in hosts)
warning pass $P.open: lab1 claiming lab3's host NQN
pass $P.keyed: lab3 as itself (not in hosts)
pass $P.keyed: lab3 claiming lab2's host NQN
pass $P.keyed: lab3 claiming lab2's host NQN with a wrong secret
pass $P.tls: lab3 as itself (not in hosts)
pass $P.tls: lab3 claiming lab2's host NQN
pass $P.tls: lab3 claiming lab2's host NQN with a wrong secret
pass $P.tls: lab2 over plain TCP (no TLS)
pass $P.rdma: lab3 as itself (not in hosts)
pass $P.rdma: lab3 claiming lab2's host NQN
skipped $P.rdma: lab3 claiming lab2's host NQN with a wrong secret
EOF
)" "$(checks "$W/v1.json")"
check "holds: one warning verdict, open to NQN claims" \
	"target warning lab1: '$P.open' is open to NQN claims: 'lab1' connected as 'lab3' without a secret" \
	"$(verdicts "$W/v1.json")"
case $(grep -c "target warning lab1 (access)" "$W/v1.out") in 1) ok "holds: the text report shows the warning" ;;
	*) fail "holds: no warning in the text report: $(cat "$W/v1.out")" ;; esac
after=$(for i in 1 2 3; do echo "lab$i $(ctrls "$i")"; done)
check "holds: nothing left behind" "$(echo $before)" "$(echo $after)"
check "holds: no task hung on lab3 (no wrong secret over rdma)" 0 \
	"$(lab_ssh 3 "dmesg | tail -n +$((m3 + 1)) | grep -c 'blocked for more than'")"
check "holds: lab3 has no process in D state" "" \
	"$(lab_ssh 3 "ps -eo stat=,comm= | awk '\$1 ~ /^D/'")"

# --- 2. keyed's access control broken by hand ------------------------------
# lab3's host entry (allowed on open, no key) linked into keyed's allowed
# hosts, as a hand-made mistake would (nvmet refuses attr_allow_any_host
# while a subsystem lists hosts)
h3=$(lab_ssh 3 "cat /etc/nvme/hostnqn")
CFG=/sys/kernel/config/nvmet
lab_ssh 1 "ln -s $CFG/hosts/$h3 $CFG/subsystems/$P.keyed/allowed_hosts/$h3"
check "broken: lab3 linked into keyed's allowed hosts by hand" 0 "$?"
s=$(date +%s)
"$LLMNET" --no-color validate "$W/access.yaml" --stages access --report "$W/v2.json" >"$W/v2.out" 2>&1
rc=$?
check "broken: validate exits 1 ($(($(date +%s) - s)) s)" 1 "$rc"
reasons "$W/v2.json"
check "broken: keyed's checks" "$(cat <<EOF
fail $P.keyed: lab3 as itself (not in hosts)
pass $P.keyed: lab3 claiming lab2's host NQN
pass $P.keyed: lab3 claiming lab2's host NQN with a wrong secret
EOF
)" "$(checks "$W/v2.json" | grep "$P.keyed:")"
check "broken: a fail verdict on keyed beside the warning on open" "$(cat <<EOF
target warning lab1: '$P.open' is open to NQN claims: 'lab1' connected as 'lab3' without a secret
target fail lab1: '$P.keyed' accepted what it must refuse: $P.keyed: lab3 as itself (not in hosts)
EOF
)" "$(verdicts "$W/v2.json")"
after=$(for i in 1 2 3; do echo "lab$i $(ctrls "$i")"; done)
check "broken: nothing left behind" "$(echo $before)" "$(echo $after)"
lab_ssh 1 "rm $CFG/subsystems/$P.keyed/allowed_hosts/$h3"

"$LLMNET" --no-color teardown "$W/access.yaml" --purge >"$W/teardown.out" 2>&1
check "teardown --purge exits 0" 0 "$?"
check "nothing of the cluster left on lab1" "" \
	"$(lab_ssh 1 "ls -d /sys/kernel/config/nvmet/subsystems/$P.* 2>/dev/null")"
echo "# access scenario: $(($(date +%s) - t0)) s"
tap_done
