#!/bin/bash
# SPDX-License-Identifier: MIT
# images: 6.12
#
# Boot-time restore (issue 15, spec `persist`, default true) on the systemd
# image, with the controller once and then no llmnet command until the
# teardown: lab1 exports one TCP namespace, lab2 connects and mounts it.
#  1. lab1 and lab2 reboot at once: each node's llmnet-restore unit
#     converges it alone; lab2 ends connected and mounted, the file written
#     before reads back equal, `llmnet plan` finds nothing to do, and the
#     devices and io stages pass.
#  2. lab1 stays off while lab2 reboots: lab2 answers ssh (root and a
#     non-root user), its unit's failed try is in the journal; once lab1 is
#     started again (its own unit restores the target), lab2's background
#     retry connects and mounts.
#  3. teardown removes the units, the stored requests and the key store;
#     a reboot of both brings nothing back.
# The restore times (boot to restored, from systemd's monotonic stamps) are
# printed as "time:" lines for docs/lab.md.
# Run through tests/e2e/run.sh (it takes the lab lock).
set -uo pipefail
. "$(dirname "$0")/../../lab/lib.sh"
. "$LAB_SRC/guests.sh"
. "$(dirname "$0")/../../lib/tap.sh"
tap_init persist
cd "$LAB_REPO" || exit 1

build=${BUILD:-build}
[ -x "$build/llmnet" ] || { fail "no $build/llmnet: run make first"; exit 1; }
tmp=$(mktemp -d)
LLMNET=$PWD/$build/llmnet
export LLMNET_AGENT=$PWD/$build/llmnet-agent LLMNET_STATE_DIR=$tmp/state
CL=e2e-persist
NQN=nqn.2024-04.io.llmnet:e2e.persist
MNT=/mnt/llmnet-e2e-persist
UNIT=llmnet-restore-$CL.service
UNITF=/etc/systemd/system/$UNIT
STORED=/var/lib/llmnet/restore/$CL.json
USER2=llmnet-e2e

# Whatever happens, lab1 runs again and the cluster is torn down, so the
# scenarios after this one find the lab as it was.
cleanup() {
	if ! lab_qemu_pid 1 >/dev/null; then
		guest_start 1 && guest_wait 1 "$(lab_now)"
	fi
	"$LLMNET" --no-color teardown "$tmp/persist.yaml" --purge >/dev/null 2>&1
	lab_ssh 2 "userdel -r $USER2" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

# seconds since guest I's kernel started when unit U became active ("" if not)
active_at() {
	lab_ssh "$1" "systemctl show -P ActiveEnterTimestampMonotonic $UNIT" |
		awk '$1 > 0 { printf "%.1f", $1 / 1e6 }'
}
# wait_for SECONDS CMD...: poll CMD every 2 s until it succeeds
wait_for() {
	local end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 2
	done
}
restored2() { [ "$(lab_ssh 2 "findmnt -n -o FSTYPE $MNT")" = ext4 ]; }
unit_active() { [ "$(lab_ssh "$1" "systemctl is-active $UNIT")" = active ]; }
unit_failed_once() { lab_ssh 2 "journalctl -b -u $UNIT --no-pager" | grep -q "Failed with result"; }

lab_spec examples/lab.yaml "$tmp/lab.yaml"
{
	sed -n '/^ssh:/,/^$/p' "$tmp/lab.yaml"
	cat <<YAML
version: 1
cluster: $CL
nodes:
  - { name: lab1, address: $(lab_addr 1), port: 22, rdma: [ { device: rxe0, port: 1, ip: $(lab_fabric_ip 1), link_layer: ethernet, mtu: 4096 } ] }
  - { name: lab2, address: $(lab_addr 2), port: 22, rdma: [ { device: rxe0, port: 1, ip: $(lab_fabric_ip 2), link_layer: ethernet, mtu: 4096 } ] }
storage:
  targets:
    - nqn: $NQN
      node: lab1
      transport: tcp
      service: 4422
      namespaces:
        - { nsid: 1, file: /var/lib/llmnet-e2e/persist.img, size: 32MiB }
  initiators:
    - { node: lab2, target: $NQN, nr_io_queues: 1, mount: { path: $MNT, fs: ext4, format: if-blank } }
validation:
  - { stage: devices }
  - { stage: io, size: 8MiB, min: 1Mb/s, timeout: 300s }
YAML
} >"$tmp/persist.yaml"

"$LLMNET" --no-color apply "$tmp/persist.yaml" >"$tmp/apply.out" 2>&1
rc=$?
sed 's/^/    /' "$tmp/apply.out"
check "apply exits 0" 0 "$rc"
check "lab2 mounted $MNT" ext4 "$(lab_ssh 2 "findmnt -n -o FSTYPE $MNT || echo none")"
for i in 1 2; do
	check "lab$i: $UNIT is enabled" enabled "$(lab_ssh "$i" "systemctl is-enabled $UNIT")"
	check "lab$i: the stored request is root's, 600" "600 root" "$(lab_ssh "$i" "stat -c '%a %U' $STORED")"
done
"$LLMNET" --no-color -o json facts "$tmp/persist.yaml" >"$tmp/facts.json" 2>&1
check "facts: both nodes persistent" "yes yes" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["nodes"]
print(" ".join(d[n]["facts"]["owned"][sys.argv[2]]["persistent"] for n in ("lab1", "lab2")))' \
	"$tmp/facts.json" "$CL" 2>&1)"
lab_ssh 2 "head -c 4M /dev/urandom >$MNT/before && sync && sha256sum <$MNT/before" >"$tmp/sum"
check "wrote a file on lab2's mount" 0 "$?"
# a non-root user on lab2, to prove logins do not wait for a restore
lab_ssh 2 "useradd -m $USER2 && install -d -o $USER2 -m 700 /home/$USER2/.ssh &&
	install -o $USER2 -m 600 /root/.ssh/authorized_keys /home/$USER2/.ssh/authorized_keys"
check "made user $USER2 on lab2" 0 "$?"
user_login() {
	[ "$(timeout 60 ssh "${LAB_SSH_OPTS[@]}" -o ControlMaster=no -o ControlPath=none \
		"$USER2@$(lab_addr 2)" id -un 2>/dev/null 200>&-)" = "$USER2" ]
}

# --- 1. both reboot at once ------------------------------------------------
lab_reboot 1 & r1=$!
lab_reboot 2 & r2=$!
wait "$r1"; rc1=$?
wait "$r2"; rc2=$?
check "lab1 and lab2 rebooted together" "0 0" "$rc1 $rc2"
check_cmd "lab2 restored its connection and mount within 120 s" wait_for 120 restored2
check_cmd "lab2's unit is active" wait_for 30 unit_active 2
check "the file written before reads back equal" "$(cat "$tmp/sum")" \
	"$(lab_ssh 2 "sha256sum <$MNT/before")"
check "lab1: the target is back" "$NQN" \
	"$(lab_ssh 1 "ls /sys/kernel/config/nvmet/subsystems/ | grep -x '$NQN'")"
echo "time: both rebooted: lab1 restored $(active_at 1) s after its kernel started," \
	"lab2 connected and mounted $(active_at 2) s after its kernel started"
"$LLMNET" --no-color plan "$tmp/persist.yaml" >"$tmp/plan.out" 2>&1
check "plan after the restore exits 0" 0 "$?"
check "plan after the restore: nothing to change" 1 \
	"$(grep -c "Plan: 0 to create, 0 to change, 0 to remove" "$tmp/plan.out")"
"$LLMNET" --no-color validate "$tmp/persist.yaml" >"$tmp/validate.out" 2>&1
rc=$?
sed 's/^/    /' "$tmp/validate.out" | tail -n 12
check "devices and io stages pass after the restore" 0 "$rc"

# --- 2. the target stays down while lab2 reboots ---------------------------
guest_stop 1
check "lab1 is off" "" "$(lab_qemu_pid 1)"
lab_reboot 2
check "lab2 answers root's ssh with its target down" 0 "$?"
echo "time: lab2 answered ssh $(cat "$LAB_RUN/lab2.boot") s after its qemu started, target down"
check_cmd "lab2 answers a non-root login ($USER2)" user_login
check_cmd "lab2: the unit's failed try is in the journal" wait_for 90 unit_failed_once
lab_ssh 2 "journalctl -b -u $UNIT --no-pager | grep -E 'Failed with result|not restored|Scheduled restart' | head -n 4" |
	sed 's/^/    /'
check "lab2 is not mounted while lab1 is off" none "$(lab_ssh 2 "findmnt -n -o FSTYPE $MNT || echo none")"
t1=$(lab_now)
guest_start 1 && guest_wait 1 "$t1"
check "lab1 started again" 0 "$?"
up1=$(lab_since "$t1")
check_cmd "lab2's background retry connects and mounts within 180 s of lab1's start" \
	wait_for 180 restored2
echo "time: target down: lab1 answered ssh ${up1} s after its start; lab2 mounted" \
	"$(lab_since "$t1") s after lab1's start"
check "the file reads back equal after the retry" "$(cat "$tmp/sum")" \
	"$(lab_ssh 2 "sha256sum <$MNT/before")"

# --- 3. teardown, then a reboot restores nothing ---------------------------
"$LLMNET" --no-color teardown "$tmp/persist.yaml" --purge >"$tmp/td.out" 2>&1
check "teardown --purge exits 0" 0 "$?"
for i in 1 2; do
	check "lab$i: no unit, stored request or key store left" "" \
		"$(lab_ssh "$i" "ls -d $UNITF /etc/systemd/system/multi-user.target.wants/$UNIT $STORED /etc/llmnet/keys/$CL 2>/dev/null")"
done
lab_reboot 1 & r1=$!
lab_reboot 2 & r2=$!
wait "$r1"; rc1=$?
wait "$r2"; rc2=$?
check "lab1 and lab2 rebooted after the teardown" "0 0" "$rc1 $rc2"
sleep 10
check "lab1: no subsystem after the reboot" "" \
	"$(lab_ssh 1 "ls /sys/kernel/config/nvmet/subsystems/ 2>/dev/null | grep -x '$NQN'")"
check "lab2: no controller and no mount after the reboot" "none" \
	"$(lab_ssh 2 "grep -lx '$NQN' /sys/class/nvme/nvme*/subsysnqn 2>/dev/null; findmnt -n $MNT >/dev/null || echo none")"
for i in 1 2; do
	check "lab$i: systemd knows no llmnet unit" "" \
		"$(lab_ssh "$i" "systemctl list-unit-files 'llmnet-restore*' --no-legend")"
done
tap_done
