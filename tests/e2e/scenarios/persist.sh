#!/bin/bash
# SPDX-License-Identifier: MIT
# images: 6.12
#
# Boot-time restore (issue 15, spec `persist: true`) on the systemd image,
# with the controller once (apply) and then no llmnet command until the
# checks after each case: lab1 exports one TCP namespace, lab2 connects and
# mounts it. Each node's llmnet-restore-CLUSTER.service (Type=notify) runs
# the node's own copy of the agent at boot: READY once restored or after
# its 30 s bound, then retries in the background (agents/agent/converge/restore.c).
#  1. lab1 and lab2 reboot at once: lab2 ends connected and mounted by
#     itself, the file written before reads back equal, the namespace's
#     serial, uuid and nguid are the ones it had, `llmnet plan` finds
#     nothing to do, and the devices and io stages pass.
#  2. lab1 stays off while lab2 reboots (lab2 shut down first, then lab1,
#     then lab2 started): lab2 answers ssh as root and as a
#     non-root user, multi-user.target is reached and the unit is active
#     (READY) with lab1 still down, the journal says the retries go on in
#     the background; once lab1 is started again (its own unit restores the
#     target), lab2's background retry connects and mounts.
#  3. teardown --purge removes the units, agent copies, stored requests and
#     key store; a reboot of both brings nothing back, and systemd knows no
#     llmnet unit.
# Boot-to-restored times (systemd's monotonic stamps: seconds since the
# guest's kernel started) are printed as "time:" lines for docs/lab.md;
# they are figures, not checks. Budget: about 5 minutes with 4 guests
# (three reboots of two guests, about 25 s each, and the retry waits).
# Needs `persist` accepted by lint (the commit "spec: accept persist");
# without it, the first check says so and the scenario stops.
# Run through tests/e2e/run.sh (it takes the lab lock):
#   make e2e KERNEL=6.12 N=4 SCENARIOS=persist
set -uo pipefail
. "$(dirname "$0")/../../lab/lib.sh"
. "$LAB_SRC/guests.sh"
. "$(dirname "$0")/../../lib/tap.sh"
tap_init persist
cd "$LAB_REPO" || exit 1

build=${BUILD:-build}
[ -x "$build/llmnet" ] && [ -x "$build/llmnet-agent" ] ||
	{ fail "no $build/llmnet or llmnet-agent: run make first"; exit 1; }
tmp=$(mktemp -d)
LLMNET=$PWD/$build/llmnet
export LLMNET_AGENT=$PWD/$build/llmnet-agent LLMNET_STATE_DIR=$tmp/state
CL=e2e-persist
NQN=nqn.2024-04.io.llmnet:e2e.persist
MNT=/mnt/llmnet-e2e-persist
UNIT=llmnet-restore-$CL.service
UNITF=/etc/systemd/system/$UNIT
LINK=/etc/systemd/system/multi-user.target.wants/$UNIT
STORED=/var/lib/llmnet/restore/$CL.json
COPY=/var/lib/llmnet/restore/$CL.agent
USER2=llmnet-e2e

# Whatever happens, lab1 runs again, the cluster is torn down and the user
# is gone, so the scenarios after this one find the lab as it was.
cleanup() {
	if ! lab_qemu_pid 1 >/dev/null; then
		guest_start 1 && guest_wait 1 "$(lab_now)"
	fi
	"$LLMNET" --no-color teardown "$tmp/persist.yaml" --purge >/dev/null 2>&1
	lab_ssh 2 "userdel -r $USER2" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

# systemd's monotonic stamp PROP of UNIT on guest I, in seconds since its
# kernel started ("-" when not set)
stamp() {
	lab_ssh "$1" "systemctl show -P $2 $3" | awk '$1 > 0 { printf "%.1f", $1 / 1e6; f = 1 } END { if (!f) print "-" }'
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
mounted2() { [ "$(lab_ssh 2 "findmnt -n -o FSTYPE $MNT")" = ext4 ]; }
# the live options of lab2's mount that keep a remote file system from
# handing out root, in a fixed order
mount_opts2() {
	lab_ssh 2 "findmnt -n -o OPTIONS $MNT" | tr ',' '\n' | grep -xE 'nosuid|nodev|noexec' | sort -r | tr '\n' ' ' | sed 's/ $//'
}
# "ACTIVESTATE SUBSTATE EXITSTATUS" of the unit on guest I: "active exited 0"
# once restored (the agent exited, RemainAfterExit), "active running" while
# it retries in the background (READY sent), "activating start" before READY
unit_state() {
	lab_ssh "$1" "for p in ActiveState SubState ExecMainStatus; do systemctl show -P \$p $UNIT; done" |
		tr '\n' ' ' | sed 's/ $//'
}
restored_unit() { [ "$(unit_state "$1")" = "active exited 0" ]; }
journal2() { lab_ssh 2 "journalctl -b -u $UNIT --no-pager -o cat"; }
retrying2() { journal2 | grep -q "the retries go on in the background"; }
# "SERIAL UUID NGUID" of lab2's namespace 1 of NQN ("none"): the head's
# device is the subsystem (multipath) or the controller, both with
# subsysnqn and serial
identity2() {
	lab_ssh 2 "for n in /sys/block/nvme*n1; do
		case \${n##*/} in *c*) continue ;; esac
		[ \"\$(cat \$n/device/subsysnqn 2>/dev/null)\" = '$NQN' ] || continue
		echo \$(cat \$n/device/serial) \$(cat \$n/uuid) \$(cat \$n/nguid); exit 0
	done; echo none"
}
user_login() {
	[ "$(timeout 60 ssh "${LAB_SSH_OPTS[@]}" -o ControlMaster=no -o ControlPath=none \
		"$USER2@$(lab_addr 2)" id -un 2>/dev/null 200>&-)" = "$USER2" ]
}
reboot_both() {
	local r1 r2 rc1 rc2
	lab_reboot 1 & r1=$!
	lab_reboot 2 & r2=$!
	wait "$r1"; rc1=$?
	wait "$r2"; rc2=$?
	echo "$rc1 $rc2"
}

lab_spec examples/lab.yaml "$tmp/lab.yaml"
{
	cat <<YAML
version: 1
cluster: $CL
persist: true
YAML
	sed -n '/^ssh:/,/^$/p' "$tmp/lab.yaml"
	cat <<YAML
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
        - { nsid: 1, file: /var/lib/nvmet/e2e/persist.img, size: 32MiB }
  initiators:
    - { node: lab2, target: $NQN, nr_io_queues: 1, mount: { path: $MNT, fs: ext4, format: if-blank } }
validation:
  - { stage: devices }
  - { stage: io, size: 8MiB, min: 1Mb/s, timeout: 300s }
YAML
} >"$tmp/persist.yaml"

"$LLMNET" --no-color lint "$tmp/persist.yaml" >"$tmp/lint.out" 2>&1
rc=$?
check "lint accepts the spec with persist: true" 0 "$rc"
if [ "$rc" != 0 ]; then
	sed 's/^/    /' "$tmp/lint.out"
	echo "# time: the scenario took ${SECONDS} s"
tap_done
	exit 1
fi

"$LLMNET" --no-color apply "$tmp/persist.yaml" >"$tmp/apply.out" 2>&1
rc=$?
sed 's/^/    /' "$tmp/apply.out"
check "apply exits 0" 0 "$rc"
check "lab2 mounted $MNT" ext4 "$(lab_ssh 2 "findmnt -n -o FSTYPE $MNT || echo none")"
check "lab2's fabric mount is nosuid,nodev,noexec" "nosuid noexec nodev" "$(mount_opts2)"
# mount options are the spec's (issue 31): a remount by hand with exec and
# suid is planned as "mount_options" and put back by apply, with the same
# mount (never unmounted: the file written before the remount stays);
# mount.exec: true drops noexec only, and the spec without it brings
# noexec back
lab_ssh 2 "echo kept >$MNT/kept && mount -o remount,exec,suid $MNT"
check "remounted lab2's mount by hand with exec,suid" "nodev" "$(mount_opts2)"
"$LLMNET" --no-color plan "$tmp/persist.yaml" >"$tmp/plan-opts.out" 2>&1
check "plan names the hand-made options as a mount_options change" 1 \
	"$(grep -c "mount_options.*$MNT.*suid,nodev,exec -> nosuid,nodev,noexec" "$tmp/plan-opts.out")"
"$LLMNET" --no-color apply "$tmp/persist.yaml" >"$tmp/apply-opts.out" 2>&1
check "apply puts the options back" "0 nosuid noexec nodev" "$? $(mount_opts2)"
check "the remount kept the mount's files" kept "$(lab_ssh 2 "cat $MNT/kept")"
sed 's/fs: ext4, format: if-blank }/fs: ext4, format: if-blank, exec: true }/' \
	"$tmp/persist.yaml" >"$tmp/persist-exec.yaml"
"$LLMNET" --no-color apply "$tmp/persist-exec.yaml" >"$tmp/apply-exec.out" 2>&1
check "mount.exec: true: nosuid,nodev without noexec" "0 nosuid nodev" "$? $(mount_opts2)"
"$LLMNET" --no-color apply "$tmp/persist.yaml" >"$tmp/apply-noexec.out" 2>&1
check "without mount.exec: noexec again" "0 nosuid noexec nodev" "$? $(mount_opts2)"
for i in 1 2; do
	check "lab$i: $UNIT is enabled" enabled "$(lab_ssh "$i" "systemctl is-enabled $UNIT")"
	check "lab$i: the stored request is root's, 600" "600 root" "$(lab_ssh "$i" "stat -c '%a %U' $STORED")"
	check "lab$i: the unit runs the cluster's copy of the agent" 1 \
		"$(lab_ssh "$i" "grep -c '^ExecStart=$COPY ' $UNITF; cmp -s $COPY /var/lib/llmnet/bin/llmnet-agent || echo differs")"
done
"$LLMNET" --no-color -o json facts "$tmp/persist.yaml" >"$tmp/facts.json" 2>&1
check "facts: both nodes persistent" "yes yes" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["nodes"]
print(" ".join(d[n]["facts"]["owned"][sys.argv[2]]["persistent"] for n in ("lab1", "lab2")))' \
	"$tmp/facts.json" "$CL" 2>&1)"
lab_ssh 2 "head -c 4M /dev/urandom >$MNT/before && sync && sha256sum <$MNT/before" >"$tmp/sum"
check "wrote a file on lab2's mount" 0 "$?"
id_before=$(identity2)
case $id_before in none | '') fail "lab2: no namespace identity for $NQN ($id_before)" ;;
*) ok "lab2: the namespace's serial, uuid and nguid: $id_before" ;; esac
# a non-root user on lab2, to prove logins do not wait for a restore
lab_ssh 2 "useradd -m $USER2 && install -d -o $USER2 -m 700 /home/$USER2/.ssh &&
	install -o $USER2 -m 600 /root/.ssh/authorized_keys /home/$USER2/.ssh/authorized_keys"
check "made user $USER2 on lab2" 0 "$?"

# --- 1. both reboot at once, no llmnet command until the checks -----------
echo "# time: set up ${SECONDS} s since the scenario started"
check "lab1 and lab2 rebooted together" "0 0" "$(reboot_both)"
check_cmd "lab2 restored its connection and mount by itself (waited up to 120 s)" wait_for 120 mounted2
check "lab1: the target is back" "$NQN" \
	"$(lab_ssh 1 "ls /sys/kernel/config/nvmet/subsystems/ | grep -x '$NQN'")"
check "the file written before reads back equal" "$(cat "$tmp/sum")" \
	"$(lab_ssh 2 "sha256sum <$MNT/before")"
check "the namespace's serial, uuid and nguid are unchanged" "$id_before" "$(identity2)"
check "the restored mount is nosuid,nodev,noexec" "nosuid noexec nodev" "$(mount_opts2)"
for i in 1 2; do
	check_cmd "lab$i: the unit ended restored: active, exited 0 (waited up to 60 s)" \
		wait_for 60 restored_unit "$i"
done
echo "time: both rebooted: lab1 restored (READY) $(stamp 1 ActiveEnterTimestampMonotonic "$UNIT") s" \
	"after its kernel started; lab2 READY $(stamp 2 ActiveEnterTimestampMonotonic "$UNIT") s," \
	"connected and mounted (restore exited) $(stamp 2 ExecMainExitTimestampMonotonic "$UNIT") s;" \
	"lab2 multi-user.target $(stamp 2 ActiveEnterTimestampMonotonic multi-user.target) s"
journal2 | grep -E "restore: " | tail -n 3 | sed 's/^/    lab2: /'
"$LLMNET" --no-color plan "$tmp/persist.yaml" >"$tmp/plan.out" 2>&1
check "plan after the restore exits 0" 0 "$?"
check "plan after the restore: nothing to change" 1 \
	"$(grep -c "Plan: 0 to create, 0 to change, 0 to remove" "$tmp/plan.out")"
"$LLMNET" --no-color validate "$tmp/persist.yaml" >"$tmp/validate.out" 2>&1
rc=$?
sed 's/^/    /' "$tmp/validate.out" | tail -n 12
check "devices and io stages pass after the restore" 0 "$rc"

echo "# time: case 1 done ${SECONDS} s since the scenario started"
# --- 2. the target stays down while lab2 reboots ---------------------------
# lab2 powers off first, while its target still answers (a clean shutdown
# unmounts; with the target gone the unmount would wait on the dead
# controller), then lab1 goes, and lab2 boots with its target down
guest_stop 2
guest_stop 1
check "lab1 is off" "" "$(lab_qemu_pid 1)"
t2=$(lab_now)
guest_start 2 && guest_wait 2 "$t2"
check "lab2 answers root's ssh with its target down" 0 "$?"
echo "time: target down: lab2 answered ssh $(cat "$LAB_RUN/lab2.boot") s after its qemu started"
check_cmd "lab2 answers a non-root login ($USER2) with its target down" user_login
# boot did not wait for the target: READY went out, so the start job and
# multi-user.target are done while lab1 is still off
check_cmd "lab2: the journal says the retries go on in the background (waited up to 90 s)" \
	wait_for 90 retrying2
check "lab2: multi-user.target is reached with lab1 off" active \
	"$(lab_ssh 2 "systemctl is-active multi-user.target")"
check "lab2: the unit is active (READY sent) and retrying with lab1 off" "active running" \
	"$(unit_state 2 | cut -d' ' -f1,2)"
check "lab2 is not mounted while lab1 is off" none "$(lab_ssh 2 "findmnt -n -o FSTYPE $MNT || echo none")"
echo "time: target down: lab2 unit READY $(stamp 2 ActiveEnterTimestampMonotonic "$UNIT") s" \
	"after its kernel started, multi-user.target $(stamp 2 ActiveEnterTimestampMonotonic multi-user.target) s"
lab_ssh 2 "systemctl show -P StatusText $UNIT" | sed 's/^/    lab2 status: /'
journal2 | grep -E "not restored|retries|next try" | head -n 4 | sed 's/^/    lab2: /'
t1=$(lab_now)
guest_start 1 && guest_wait 1 "$t1"
check "lab1 started again" 0 "$?"
up1=$(lab_since "$t1")
check_cmd "lab2's background retry connects and mounts (waited up to 180 s after lab1's start)" \
	wait_for 180 mounted2
echo "time: target down: lab1 answered ssh ${up1} s after its start; lab2 mounted" \
	"$(lab_since "$t1") s after lab1's start (the retry pause is 60 s at most)"
journal2 | grep -E "restored" | tail -n 1 | sed 's/^/    lab2: /'
check "the file reads back equal after the retry" "$(cat "$tmp/sum")" \
	"$(lab_ssh 2 "sha256sum <$MNT/before")"
check "the namespace's identity is unchanged after the retry" "$id_before" "$(identity2)"
check_cmd "lab2: the unit ended restored: active, exited 0 (waited up to 60 s)" \
	wait_for 60 restored_unit 2

echo "# time: case 2 done ${SECONDS} s since the scenario started"
# --- 3. teardown, then a reboot restores nothing ---------------------------
"$LLMNET" --no-color teardown "$tmp/persist.yaml" --purge >"$tmp/td.out" 2>&1
rc=$?
sed 's/^/    /' "$tmp/td.out" | tail -n 6
check "teardown --purge exits 0" 0 "$rc"
for i in 1 2; do
	check "lab$i: no unit, link, agent copy, stored request or key store left" "" \
		"$(lab_ssh "$i" "ls -d $UNITF $LINK $COPY $STORED /etc/llmnet/keys/$CL 2>/dev/null")"
done
check "lab1 and lab2 rebooted after the teardown" "0 0" "$(reboot_both)"
# what a restore would have done shows once boot is finished: every
# boot-time unit has run (or is known not to exist) when systemd says
# "running" or "degraded", bounded like the unit's own 30 s
for i in 1 2; do
	check_cmd "lab$i: boot finished after the teardown (waited up to 60 s)" \
		lab_ssh "$i" "timeout 60 systemctl is-system-running --wait | grep -qxE 'running|degraded'"
done
check "lab1: no subsystem after the reboot" "" \
	"$(lab_ssh 1 "ls /sys/kernel/config/nvmet/subsystems/ 2>/dev/null | grep -x '$NQN'")"
check "lab2: no controller and no mount after the reboot" "none" \
	"$(lab_ssh 2 "grep -lx '$NQN' /sys/class/nvme/nvme*/subsysnqn 2>/dev/null; findmnt -n $MNT >/dev/null || echo none")"
for i in 1 2; do
	check "lab$i: systemd knows no llmnet unit" "" \
		"$(lab_ssh "$i" "systemctl list-unit-files 'llmnet-restore*' --no-legend")"
done
echo "# time: the scenario took ${SECONDS} s"
tap_done
