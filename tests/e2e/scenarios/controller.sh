#!/bin/bash
# SPDX-License-Identifier: MIT
# images: 6.1 6.12
#
# The controller on the real kernel, with the three lab guests and the lab's
# own spec (examples/lab.yaml): lab1 exports a TCP and an RDMA subsystem,
# lab2 and lab3 connect and mount them, every guest gets the hostfile.
#  - apply converges; the guests' configfs, controllers, mounts and
#    hostfiles are checked over ssh, not taken from llmnet's word;
#  - the subsystems' serial and the namespaces' uuid and nguid, in lab1's
#    configfs and as lab2 and lab3 see them, are the ones derived from the
#    cluster, NQN and nsid (computed here independently), and stay so;
#  - a second apply reports 0 changed;
#  - lab2 is replaced (tests/lab/replace 2: new disk, DMI UUID, host NQN,
#    host key): apply refuses it (exit 4) and lab1 keeps the old access
#    until the operator accepts; apply --accept-replaced lab2 converges
#    (lab1 drops the old NQN and allows the new one, lab2 connects again);
#    the next apply reports 0 changed;
#  - a host outside the spec (lab3 by hand, as any host) holding lab1's tcp
#    subsystem keeps it through a teardown (exit 4, named in the recap);
#  - teardown leaves no llmnet object in configfs and no tcp/rdma
#    controller on any guest;
#  - discovery: true on both initiators: lab2 and lab3 connect from lab1's
#    discovery log and mount, no discovery controller stays; a subsystem
#    the log does not list at the declared place (lab1's hand-made port
#    4421) fails the agent's apply by name and connects nothing.
# Run through tests/e2e/run.sh (it takes the lab lock).
set -uo pipefail
. "$(dirname "$0")/../../lab/lib.sh"
. "$(dirname "$0")/../../lib/tap.sh"
tap_init controller
cd "$LAB_REPO"

build=${BUILD:-build}
LLMNET=$PWD/$build/llmnet
export LLMNET_AGENT=$PWD/$build/llmnet-agent
[ -x "$LLMNET" ] && [ -x "$LLMNET_AGENT" ] || { fail "no $build/llmnet or llmnet-agent: run make first"; exit 1; }
tmp=$(mktemp -d)
# Once lab2 is replaced, the lab's own record of its key (what the next
# lab-up installs) must follow, however this scenario ends.
replaced=0
trap '[ "$replaced" = 0 ] || tests/lab/trust 2 >/dev/null 2>&1 || echo "# tests/lab/trust 2 failed: lab2 is refused until it is trusted"; rm -rf "$tmp"' EXIT
export LLMNET_STATE_DIR=$tmp/state

TCP=nqn.2024-04.io.llmnet.lab:lab1.tcp
RDMA=nqn.2024-04.io.llmnet.lab:lab1.rdma
# The lab's spec, pointed at this lab's key and known_hosts, without the
# validation stages (they have their own scenario).
sed -e "s|~/.cache/llmnet-lab/ssh/id_ed25519|$LAB_KEY|" \
    -e "s|~/.cache/llmnet-lab/ssh/known_hosts|$LAB_KNOWN_HOSTS|" \
    -e '/^validation:/,$d' examples/lab.yaml > "$tmp/lab.yaml"
SPEC=$tmp/lab.yaml

run() { "$LLMNET" --no-color "$@" > "$tmp/out" 2>&1; rc=$?; sed 's/^/    /' "$tmp/out"; }

ours_in_configfs() { lab_ssh 1 'ls /sys/kernel/config/nvmet/subsystems 2>/dev/null | grep -c "^nqn.2024-04.io.llmnet.lab:" || true'; }
allowed() { # TARGET_NQN HOST_NQN -> 1/0
	lab_ssh 1 "test -L '/sys/kernel/config/nvmet/subsystems/$1/allowed_hosts/$2' && echo 1 || echo 0"
}
port_linked() { lab_ssh 1 "ls /sys/kernel/config/nvmet/ports/*/subsystems/ 2>/dev/null | grep -cx '$1'"; }
ctrl_live() { # GUEST NQN -> transport of a live controller to NQN, or none
	lab_ssh "$1" "for c in /sys/class/nvme/nvme*; do [ -e \$c/subsysnqn ] || continue; [ \"\$(cat \$c/subsysnqn)\" = '$2' ] && [ \"\$(cat \$c/state)\" = live ] && cat \$c/transport; done | head -n1" || true
}
fabric_ctrls() { lab_ssh "$1" 'n=0; for c in /sys/class/nvme/nvme*; do [ -e $c/transport ] || continue; case $(cat $c/transport) in tcp|rdma) n=$((n+1));; esac; done; echo $n'; }
mounted() { lab_ssh "$1" "findmnt -n -o FSTYPE '$2' || echo none"; }
hostfile() { lab_ssh "$1" 'grep -v "^#" /etc/llmnet/hostfile 2>/dev/null | tr "\n" " "'; }
HF="lab1 slots=1 lab2 slots=1 lab3 slots=1 "
# The stable identity the plan derives (orchestrator/run/nsident.h), computed
# here from its definition: "SERIAL UUID NGUID" of NQN's namespace 1.
derived() {
	python3 - "$1" <<'PY'
import hashlib, sys, uuid
t = "llmnet/llmnet-lab/" + sys.argv[1]
h = bytearray(hashlib.sha256((t + "/1").encode()).digest())
nguid = str(uuid.UUID(bytes=bytes(h[16:])))
h[6] = (h[6] & 0x0f) | 0x80
h[8] = (h[8] & 0x3f) | 0x80
print(hashlib.sha256(t.encode()).hexdigest()[:16], uuid.UUID(bytes=bytes(h[:16])), nguid)
PY
}
# What GUEST's kernel got from Identify for NQN: the controller's serial,
# namespace 1's uuid and nguid (sysfs, as nvme id-ctrl / id-ns show them)
seen() {
	lab_ssh "$1" "for c in /sys/class/nvme/nvme*; do [ \"\$(cat \$c/subsysnqn 2>/dev/null)\" = '$2' ] && s=\$(cat \$c/serial); done
		for b in /sys/block/nvme*n*; do [ \"\$(cat \$b/device/subsysnqn 2>/dev/null)\" = '$2' ] && [ \"\$(cat \$b/nsid)\" = 1 ] && u=\$(cat \$b/uuid) && g=\$(cat \$b/nguid); done
		echo \$s \$u \$g" || true
}
# ... and what lab1's configfs holds (attr_serial is padded with spaces)
exported() {
	lab_ssh 1 "cd /sys/kernel/config/nvmet/subsystems/'$1' && echo \$(cat attr_serial) \$(cat namespaces/1/device_uuid) \$(cat namespaces/1/device_nguid)" || true
}
ID_TCP=$(derived "$TCP")
ID_RDMA=$(derived "$RDMA")

# Start from nothing of ours (a previous run may have left objects).
run teardown "$SPEC"

run apply "$SPEC"
check "apply exits 0" 0 "$rc"
check "apply converged" 1 "$(grep -c '; converged\.' "$tmp/out")"
h2=$(lab_ssh 2 'cat /etc/nvme/hostnqn')
h3=$(lab_ssh 3 'cat /etc/nvme/hostnqn')
check "lab1 exports the tcp subsystem through a port" 1 "$(port_linked "$TCP")"
check "lab1 exports the rdma subsystem through a port" 1 "$(port_linked "$RDMA")"
check "lab1 allows lab2 ($h2) on tcp" 1 "$(allowed "$TCP" "$h2")"
check "lab1 allows lab3 on rdma" 1 "$(allowed "$RDMA" "$h3")"
check "lab2 has a live tcp controller" tcp "$(ctrl_live 2 "$TCP")"
check "lab3 has a live rdma controller" rdma "$(ctrl_live 3 "$RDMA")"
check "lab2 mounted /mnt/lab-tcp" ext4 "$(mounted 2 /mnt/lab-tcp)"
check "lab3 mounted /mnt/lab-rdma" ext4 "$(mounted 3 /mnt/lab-rdma)"
for i in 1 2 3; do check "lab$i has the hostfile" "$HF" "$(hostfile "$i")"; done
check "lab1 exports tcp with the derived serial, uuid, nguid ($ID_TCP)" "$ID_TCP" "$(exported "$TCP")"
check "lab2 sees the tcp target's derived serial, uuid, nguid" "$ID_TCP" "$(seen 2 "$TCP")"
check "lab3 sees the rdma target's derived serial, uuid, nguid ($ID_RDMA)" "$ID_RDMA" "$(seen 3 "$RDMA")"

run apply "$SPEC"
check "re-apply exits 0" 0 "$rc"
check "re-apply reports 0 changed" 1 "$(grep -c '^apply: 0 changed on 3 nodes; converged' "$tmp/out")"
check "after the re-apply lab1 still exports the derived identity" "$ID_TCP $ID_RDMA" \
	"$(exported "$TCP") $(exported "$RDMA")"
check "after the re-apply lab2 still sees it" "$ID_TCP" "$(seen 2 "$TCP")"

# Replace lab2: new machine, new host key, new host NQN, empty state.
replaced=1
tests/lab/replace 2 > "$tmp/replace.out" 2>&1 || { fail "tests/lab/replace 2 failed"; cat "$tmp/replace.out"; }
n2=$(lab_ssh 2 'cat /etc/nvme/hostnqn 2>/dev/null || true')
check "lab2 came back with another host NQN" 1 "$([ -n "$n2" ] && [ "$n2" != "$h2" ] && echo 1 || echo 0)"
run apply "$SPEC"
check "apply refuses the changed host key (exit 4)" 4 "$rc"
check "the refusal names lab2 and both fingerprints" 1 \
	"$(grep -c "refusing 'lab2': host key changed (known_hosts has SHA256:.*, server offers SHA256:" "$tmp/out")"
check "lab1 keeps lab2's old access while refused" 1 "$(allowed "$TCP" "$h2")"
run apply "$SPEC" --accept-replaced lab2
check "apply --accept-replaced lab2 exits 0" 0 "$rc"
check "lab1 allows lab2's new NQN" 1 "$(allowed "$TCP" "$n2")"
check "lab1 dropped lab2's old NQN" 0 "$(allowed "$TCP" "$h2")"
check "lab2 has a live tcp controller again" tcp "$(ctrl_live 2 "$TCP")"
check "lab2 mounted /mnt/lab-tcp again (no reformat: same data)" ext4 "$(mounted 2 /mnt/lab-tcp)"
check "lab2's new connection sees the same serial, uuid, nguid" "$ID_TCP" "$(seen 2 "$TCP")"
check "lab2 has the hostfile" "$HF" "$(hostfile 2)"
check "lab3 got no change" 1 "$(grep -cE '^lab3 +: ok=[0-9]+ +changed=0 ' "$tmp/out")"
run apply "$SPEC"
check "next apply reports 0 changed" 1 "$(grep -c '^apply: 0 changed on 3 nodes; converged' "$tmp/out")"

# A host not in the spec holds lab1's tcp subsystem: lab3, with its own host
# NQN, allowed there and connected by hand. lab2 disconnects as the spec
# says, but lab1 keeps the target (exit 4) for as long as lab3 holds it.
h3=$(lab_ssh 3 'cat /etc/nvme/hostnqn')
lab_ssh 1 "ln -s '/sys/kernel/config/nvmet/hosts/$h3' '/sys/kernel/config/nvmet/subsystems/$TCP/allowed_hosts/'" 2>&1 | sed 's/^/    /'
lab_ssh 3 "modprobe nvme_tcp && nvme connect -t tcp -a 10.77.0.11 -s 4420 -n '$TCP'" 2>&1 | sed 's/^/    /'
check "lab3 holds the tcp subsystem, connected by hand" tcp "$(ctrl_live 3 "$TCP")"
run teardown "$SPEC"
check "teardown keeps a target a host still holds (exit 4)" 4 "$rc"
check "the recap names lab3's address and the target" 1 "$(grep -cE "kept: (a host at 10\.77\.0\.13 still holds a connection to tcp port 10\.77\.0\.11:4420|host '[^']*' \(10\.77\.0\.13\) still holds controller ctrl[0-9]+).*; target '$TCP' stays" "$tmp/out")"
check "lab1 still exports the tcp subsystem" 1 "$(port_linked "$TCP")"
check "lab3's hand-made controller is still live" tcp "$(ctrl_live 3 "$TCP")"
check "lab1 removed the rdma subsystem (nobody holds it)" 0 "$(port_linked "$RDMA")"
check "lab2 disconnected as the spec says" 0 "$(fabric_ctrls 2)"
lab_ssh 3 "nvme disconnect -n '$TCP'" >/dev/null 2>&1
lab_ssh 1 "rm -f '/sys/kernel/config/nvmet/subsystems/$TCP/allowed_hosts/$h3'"

run teardown "$SPEC" --purge
check "teardown exits 0" 0 "$rc"
check "configfs holds nothing of llmnet's" 0 "$(ours_in_configfs)"
check "lab1 has no llmnet port left" 0 "$(lab_ssh 1 'grep -l "^10.77.0.11$" /sys/kernel/config/nvmet/ports/*/addr_traddr 2>/dev/null | wc -l')"
for i in 2 3; do check "lab$i has no tcp/rdma controller" 0 "$(fabric_ctrls "$i")"; done
for i in 1 2 3; do check "lab$i has no hostfile" 0 "$(lab_ssh "$i" 'test -e /etc/llmnet/hostfile && echo 1 || echo 0')"; done
run teardown "$SPEC"
check "a second teardown has nothing to do" 1 "$(grep -c '^teardown: 0 changed on 3 nodes' "$tmp/out")"

# Discovery (issue 15, point 3): the lab's spec with discovery: true on both
# initiators. lab2 (tcp) and lab3 (rdma) read lab1's discovery log, connect
# from its entries and mount; each discovery controller is deleted again.
DISC=nqn.2014-08.org.nvmexpress.discovery
disc_ctrls() { lab_ssh "$1" "grep -lxF '$DISC' /sys/class/nvme/nvme*/subsysnqn 2>/dev/null | wc -l"; }
sed -e '/^      target: nqn.2024-04.io.llmnet.lab:lab1.\(tcp\|rdma\)$/a\      discovery: true' \
	"$SPEC" > "$tmp/disc.yaml"
check "the discovery spec asks it on both initiators" 2 "$(grep -c '^      discovery: true$' "$tmp/disc.yaml")"
run apply "$tmp/disc.yaml"
check "apply with discovery exits 0" 0 "$rc"
check "apply with discovery converged" 1 "$(grep -c '; converged\.' "$tmp/out")"
check "lab2 has a live tcp controller (from the log)" tcp "$(ctrl_live 2 "$TCP")"
check "lab3 has a live rdma controller (from the log)" rdma "$(ctrl_live 3 "$RDMA")"
check "lab2 mounted /mnt/lab-tcp" ext4 "$(mounted 2 /mnt/lab-tcp)"
check "lab3 mounted /mnt/lab-rdma" ext4 "$(mounted 3 /mnt/lab-rdma)"
for i in 2 3; do check "lab$i: no discovery controller left" 0 "$(disc_ctrls "$i")"; done
run apply "$tmp/disc.yaml"
check "re-apply with discovery reports 0 changed" 1 \
	"$(grep -c '^apply: 0 changed on 3 nodes; converged' "$tmp/out")"
# validate's devices stage reads the same logs (facts --discovery): both
# discoverable checks pass; with lab2 taken off the tcp subsystem's allowed
# hosts by hand (its live connection stays), lab2's check fails naming its
# log, lab3's still passes, no discovery controller stays; apply restores.
disc_check() { # REPORT NODE -> "STATUS NAME" of NODE's discoverable check, or none
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
c = [c for c in r["checks"] if c.get("node") == sys.argv[2] and c["name"].startswith("discoverable ")]
print(c[0]["status"] + " " + c[0]["name"] if len(c) == 1 else "none")' "$1" "$2"
}
# (the controller's spec has no validation section: the devices stage added)
grep -q '^validation:' "$tmp/disc.yaml" && { fail "the controller's spec has a validation section now"; }
{ cat "$tmp/disc.yaml"; printf 'validation:\n  - { stage: devices }\n'; } > "$tmp/disc-v.yaml"
run validate "$tmp/disc-v.yaml" --report "$tmp/disc-v1.json"
check "validate devices with discovery exits 0" 0 "$rc"
check "lab2's target is discoverable in lab1's log" \
	"pass discoverable $TCP at 10.77.0.11:4420/tcp from lab2" "$(disc_check "$tmp/disc-v1.json" lab2)"
check "lab3's target is discoverable in lab1's log" \
	"pass discoverable $RDMA at 10.77.0.11:4420/rdma from lab3" "$(disc_check "$tmp/disc-v1.json" lab3)"
for i in 2 3; do check "lab$i: no discovery controller left after validate" 0 "$(disc_ctrls "$i")"; done
h2=$(lab_ssh 2 'cat /etc/nvme/hostnqn')
lab_ssh 1 "rm -f '/sys/kernel/config/nvmet/subsystems/$TCP/allowed_hosts/$h2'"
run validate "$tmp/disc-v.yaml" --report "$tmp/disc-v2.json"
check "validate fails with lab2 not allowed (exit 1)" 1 "$rc"
check "lab2's discoverable check fails" \
	"fail discoverable $TCP at 10.77.0.11:4420/tcp from lab2" "$(disc_check "$tmp/disc-v2.json" lab2)"
check "its reason names the place, the host and what the log lists" \
	"'$TCP' is not in the discovery log at tcp 10.77.0.11:4420 for host '$h2': the log lists no subsystem for this host" \
	"$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(" | ".join(c["reason"] for c in r["checks"] if c.get("node") == "lab2" and c["name"].startswith("discoverable ")))' "$tmp/disc-v2.json")"
check "lab3's still passes" \
	"pass discoverable $RDMA at 10.77.0.11:4420/rdma from lab3" "$(disc_check "$tmp/disc-v2.json" lab3)"
check "lab2: no discovery controller left after the failed check" 0 "$(disc_ctrls 2)"
run apply "$tmp/disc.yaml"
check "apply puts lab2's host back (exit 0)" 0 "$rc"
# Not listed at the declared place: lab1 gets, by hand, a tcp port at
# 10.77.0.11:4421 exporting only a subsystem that allows no host. lab2's
# agent, asked (as apply asks it, under a cluster of its own so nothing of
# llmnet-lab's is touched) to connect lab1's tcp target there through
# discovery, must fail naming the target, the place and what the log
# lists, and connect nothing: no direct connect.
FOREIGN=nqn.2024-04.io.llmnet.lab:foreign.disc
lab_ssh 1 "cd /sys/kernel/config/nvmet && mkdir subsystems/$FOREIGN ports/4421 &&
	echo tcp > ports/4421/addr_trtype && echo ipv4 > ports/4421/addr_adrfam &&
	echo 10.77.0.11 > ports/4421/addr_traddr && echo 4421 > ports/4421/addr_trsvcid &&
	ln -s /sys/kernel/config/nvmet/subsystems/$FOREIGN ports/4421/subsystems/" 2>&1 | sed 's/^/    /'
printf '{"protocol": 3, "cluster": "llmnet-lab-disc", "initiators": [{"target": "%s", "transport": "tcp", "address": "10.77.0.11", "service": 4421, "discovery": true}]}\n' \
	"$TCP" | lab_ssh 2 "/var/lib/llmnet/bin/llmnet-agent -q --budget-ms 60000 apply" > "$tmp/disc.json"
arc=$?
sed 's/^/    /' "$tmp/disc.json"
check "the agent's apply fails (exit 1)" 1 "$arc"
check "it names the target, the place, the host and what the log lists" 1 \
	"$(grep -cF "'$TCP' is not in the discovery log at tcp 10.77.0.11:4421 for host '$h2': the log lists no subsystem for this host; not connecting" "$tmp/disc.json")"
check "lab2 has no controller at :4421 (no direct connect)" 0 \
	"$(lab_ssh 2 "grep -l 'trsvcid=4421' /sys/class/nvme/nvme*/address 2>/dev/null | wc -l")"
check "lab2: no discovery controller left" 0 "$(disc_ctrls 2)"
lab_ssh 1 "cd /sys/kernel/config/nvmet && rm -f ports/4421/subsystems/$FOREIGN && rmdir ports/4421 subsystems/$FOREIGN"
run teardown "$tmp/disc.yaml" --purge
check "teardown after discovery exits 0" 0 "$rc"
for i in 2 3; do check "lab$i has no tcp/rdma controller" 0 "$(fabric_ctrls "$i")"; done

tap_done
