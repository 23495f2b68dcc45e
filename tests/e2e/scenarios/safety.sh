#!/bin/bash
# SPDX-License-Identifier: MIT
# images: 6.1 6.12
#
# Issue 12's file, mount and device reproductions against llmnet-agent on a
# real kernel (tests/adversarial/ has them all on fixture roots). Each
# request must be refused and leave the node as it was: the files it named,
# nvmet configfs, the mounts, swap, the fabric controllers and the agent's
# state, compared before and after.
#  lab1 (target side):
#   - a hostfile over /etc/passwd, and over the agent's own state file;
#   - a hostfile through a symlinked /etc/llmnet, a backing file through a
#     symlinked /var/lib/nvmet: nothing appears where the links point;
#   - two clusters naming one backing file: the second is refused, and its
#     teardown --purge leaves the first cluster's file;
#   - a whole disk (a loop device) whose partition is mounted, and one that
#     is swap: neither is exported;
#   - the in-use gate (issue 31): an adopted file that is active swap, and
#     one that backs a loop device, are refused; an ordinary adopted file
#     is exported (the control) and kept by teardown; one host entry
#     allowed by cluster a unkeyed is not keyed by cluster b (6.12: nvmet
#     has DH-HMAC-CHAP there), while b allowing it unkeyed too converges.
#  lab2 (initiator side, connecting to a target on lab1):
#   - a mount over /etc, a mount without fs, a mount with fs btrfs;
#   - a namespace lab2 imports from lab1 over TCP, exported again as a
#     device (its multipath head): refused, a fabric namespace; lab2's own
#     PCIe NVMe disk is exported (the control).
# Checks that wait on another branch's fix are listed in
# tests/adversarial/xfail.list as e2e/NAME and reported XFAIL, never as a
# pass (an XPASS fails). Run through tests/e2e/run.sh (it takes the lab lock).
set -uo pipefail
. "$(dirname "$0")/../../lab/lib.sh"
. "$(dirname "$0")/../../lib/tap.sh"
tap_init safety
cd "$LAB_REPO" || exit 1

AGENT=/usr/local/lib/llmnet/llmnet-agent
W=/tmp/e2e-safety		# the scenario's scratch folder on the guests
D=/var/lib/nvmet/e2e-safety	# and one on the root file system, where
				# backing files may be (nvmet's file backend
				# needs O_DIRECT, which tmpfs lacks)
build=${BUILD:-build}
[ -x "$build/llmnet-agent" ] || { fail "no $build/llmnet-agent: run make first"; exit 1; }
tmp=$(mktemp -d)
xfails=()

# agent I VERB [ARGS] < REQUEST: the agent's answer on stdout, its status
agent() { local i=$1; shift; lab_ssh "$i" "$AGENT -q --budget-ms 600000 $*"; }

# Everything on a guest that one of these requests could change.
snap='sha256sum /etc/passwd /var/lib/llmnet/state.json 2>/dev/null
find /sys/kernel/config/nvmet -mindepth 1 2>/dev/null | sort
cut -d" " -f5,10 /proc/self/mountinfo | sort
cat /proc/swaps
find /etc/llmnet /var/lib/nvmet '"$W"' '"$D"' -printf "%y %m %s %p %l\n" 2>/dev/null | sort
cat /sys/class/nvme/nvme*/subsysnqn 2>/dev/null | sort'

# xcheck NAME DESC EXPECTED ACTUAL: check, unless e2e/NAME is in
# xfail.list: then a mismatch is XFAIL and a match fails as XPASS.
xcheck() {
	local x
	x=$(awk -v c="e2e/$1" '$1 == c { $1 = ""; sub(/^ /, ""); print; exit }' \
		tests/adversarial/xfail.list)
	if [ -z "$x" ]; then
		check "$2" "$3" "$4"
	elif [ "$3" = "$4" ]; then
		fail "XPASS e2e/$1: $2 passes now; remove its line from tests/adversarial/xfail.list ($x)"
	else
		echo "XFAIL e2e/$1: $2 (expected to fail until merged: $x)"
		xfails+=("e2e/$1: $x")
	fi
}

# refused NAME I DESC WANT REQUEST-JSON: the agent on guest I refuses the
# request (exit 1 or 2, the answer names WANT) and the guest is unchanged.
refused() {
	local name=$1 i=$2 desc=$3 want=$4 req=$5 before after out rc
	before=$(lab_ssh "$i" "$snap")
	out=$(agent "$i" apply <<<"$req" 2>&1)
	rc=$?
	after=$(lab_ssh "$i" "$snap")
	case $rc in 1 | 2) ok "$desc: refused (exit $rc)" ;; *) fail "$desc: exit $rc: $out" ;; esac
	if [[ $out == *"$want"* ]]; then ok "$desc: the answer names '$want'"; else fail "$desc: the answer does not name '$want': $out"; fi
	xcheck "$name" "$desc: lab$i is unchanged" "$before" "$after"
}

# accepted DESC I REQUEST-JSON: the agent on guest I applies the request
# (exit 0, converged): the control beside a refusal, so that a gate that
# refuses everything fails
accepted() {
	local out rc
	out=$(agent "$2" apply <<<"$3" 2>&1)
	rc=$?
	if [ "$rc" = 0 ] && [[ $out == *'"converged": true'* ]]; then
		ok "$1: converged (the control)"
	else
		fail "$1: exit $rc, not converged: $out"
	fi
}

restore() {
	lab_ssh 2 "for c in /sys/class/nvme/nvme*; do grep -qs e2e.safety.mnt \$c/subsysnqn && nvme disconnect -d \${c##*/}; done" >/dev/null 2>&1
	for i in 2 1; do	# initiators go before their target
		lab_ssh "$i" "$AGENT -q --budget-ms 600000 teardown --cluster e2e-safety --purge >/dev/null 2>&1
			for c in e2e-safety-a e2e-safety-b; do $AGENT -q --budget-ms 600000 teardown --cluster \$c --purge >/dev/null 2>&1; done
			[ -L /etc/llmnet ] && rm /etc/llmnet; [ -d /etc/llmnet.e2e-saved ] && mv /etc/llmnet.e2e-saved /etc/llmnet
			[ -L /var/lib/nvmet ] && rm /var/lib/nvmet; [ -d /var/lib/nvmet.e2e-saved ] && mv /var/lib/nvmet.e2e-saved /var/lib/nvmet
			umount $W/mnt 2>/dev/null
			for l in \$(losetup -l -n -O NAME -j $W/swap.img 2>/dev/null); do swapoff \$l; done
			swapoff $D/swap.file 2>/dev/null
			for f in $W/disk $W/swap $D/back; do for l in \$(losetup -l -n -O NAME -j \$f.img 2>/dev/null); do losetup -d \$l; done; done
			rm -rf $D
			rm -rf $W" >/dev/null 2>&1
	done
	rm -rf "$tmp"
}
trap restore EXIT

for i in 1 2; do
	lab_ssh "$i" "mkdir -p /usr/local/lib/llmnet $W" && lab_put "$i" "$build/llmnet-agent" "$AGENT.new" &&
		lab_ssh "$i" "chmod 755 $AGENT.new && mv $AGENT.new $AGENT" ||
		{ fail "cannot push the agent to lab$i"; exit 1; }
done
hostnqn2=$(lab_ssh 2 'cat /etc/nvme/hostnqn')
tip=$(lab_fabric_ip 1)

hostfile_req() { # PATH
	echo '{"protocol": 1, "cluster": "e2e-safety", "hostfile": {"path": "'"$1"'",
	  "format": "openmpi", "lines": [{"name": "lab1", "slots": 1}]}}'
}
target_req() { # CLUSTER NQN-SUFFIX NAMESPACE-JSON
	echo '{"protocol": 1, "cluster": "'"$1"'", "targets": [{
	  "nqn": "nqn.2024-04.io.llmnet:e2e.safety.'"$2"'", "transport": "tcp",
	  "address": "'"$tip"'", "service": 4420, "hosts": ["'"$hostnqn2"'"],
	  "namespaces": ['"$3"']}]}'
}
mount_req() { # MOUNT-JSON
	echo '{"protocol": 1, "cluster": "e2e-safety", "initiators": [{
	  "target": "nqn.2024-04.io.llmnet:e2e.safety.mnt", "transport": "tcp",
	  "address": "'"$tip"'", "service": 4420, "mount": '"$1"'}]}'
}

# --- files: reproductions 1, 2 and 7 on lab1 -----------------------------
refused hostfile-passwd 1 "hostfile /etc/passwd" /etc/passwd "$(hostfile_req /etc/passwd)"
refused hostfile-agent-state 1 "hostfile over the agent's state" /var/lib/llmnet/state.json \
	"$(hostfile_req /var/lib/llmnet/state.json)"

lab_ssh 1 "mkdir -p $W/etc-elsewhere $W/nvmet-elsewhere
	[ -e /etc/llmnet ] && mv /etc/llmnet /etc/llmnet.e2e-saved; ln -s $W/etc-elsewhere /etc/llmnet
	[ -e /var/lib/nvmet ] && mv /var/lib/nvmet /var/lib/nvmet.e2e-saved; ln -s $W/nvmet-elsewhere /var/lib/nvmet"
refused symlinked-etc-llmnet 1 "hostfile through a symlinked /etc/llmnet" /etc/llmnet \
	"$(hostfile_req /etc/llmnet/hostfile)"
refused symlinked-var-lib-nvmet 1 "backing file through a symlinked /var/lib/nvmet" /var/lib/nvmet \
	"$(target_req e2e-safety link '{"nsid": 1, "file": "/var/lib/nvmet/e2e-safety.img", "size": 16777216}')"
check "nothing appeared where the links point" "" "$(lab_ssh 1 "ls -A $W/etc-elsewhere $W/nvmet-elsewhere | grep -v -e : -e '^\$'")"
lab_ssh 1 "$AGENT -q --budget-ms 600000 teardown --cluster e2e-safety --purge >/dev/null 2>&1; rm /etc/llmnet /var/lib/nvmet
	[ -d /etc/llmnet.e2e-saved ] && mv /etc/llmnet.e2e-saved /etc/llmnet
	[ -d /var/lib/nvmet.e2e-saved ] && mv /var/lib/nvmet.e2e-saved /var/lib/nvmet; true"

shared='{"nsid": 1, "file": "/var/lib/nvmet/e2e-safety-shared.img", "size": 16777216}'
agent 1 apply <<<"$(target_req e2e-safety-a a "$shared")" >/dev/null
check "cluster a exports the shared file" 0 "$?"
ino=$(lab_ssh 1 'stat -c %i /var/lib/nvmet/e2e-safety-shared.img')
refused backing-two-clusters 1 "cluster b names cluster a's backing file" "e2e-safety-a" \
	"$(target_req e2e-safety-b b "$shared")"
agent 1 teardown --cluster e2e-safety-b --purge </dev/null >/dev/null
check "cluster b's teardown --purge leaves a's file" "$ino" \
	"$(lab_ssh 1 'stat -c %i /var/lib/nvmet/e2e-safety-shared.img')"
agent 1 teardown --cluster e2e-safety-a --purge </dev/null >/dev/null
check "cluster a's teardown --purge removes its own file" "" \
	"$(lab_ssh 1 'ls /var/lib/nvmet/e2e-safety-shared.img 2>/dev/null')"

# --- devices in use: reproduction 5 on lab1 (loop devices) ----------------
disk=$(lab_ssh 1 "modprobe loop 2>/dev/null; truncate -s 64M $W/disk.img &&
	printf '\\0\\0\\0\\0\\203\\0\\0\\0\\0\\010\\0\\0\\0\\370\\0\\0\\0\\0\\0\\0\\203\\0\\0\\0\\0\\0\\001\\0\\0\\0\\001\\0' |
		dd of=$W/disk.img bs=1 seek=446 conv=notrunc status=none &&
	printf '\\125\\252' | dd of=$W/disk.img bs=1 seek=510 conv=notrunc status=none &&
	d=\$(losetup -P -f --show $W/disk.img) && mkfs.ext4 -q \${d}p1 && mkdir -p $W/mnt &&
	mount \${d}p1 $W/mnt && echo \$d")
case $disk in
/dev/loop*)
	refused whole-disk-partition-mounted 1 "a whole disk with a mounted partition" "${disk#/dev/}p1" \
		"$(target_req e2e-safety disk '{"nsid": 1, "device": "'"$disk"'"}')"
	;;
*) fail "cannot make a partitioned loop disk with a mounted partition on lab1: $disk" ;;
esac
swap=$(lab_ssh 1 "truncate -s 64M $W/swap.img && d=\$(losetup -f --show $W/swap.img) &&
	mkswap -q \$d >/dev/null && swapon \$d && echo \$d")
case $swap in
/dev/loop*)
	refused device-swap 1 "a disk in use as swap" swap \
		"$(target_req e2e-safety swap '{"nsid": 1, "device": "'"$swap"'"}')"
	;;
*) fail "cannot make a swap loop disk on lab1: $swap" ;;
esac

# --- the in-use gate for adopted files on lab1 (issue 31) ----------------
adopt_ns() { echo '{"nsid": 1, "file": "'"$1"'", "size": '"$2"', "adopt": true}'; } # FILE SIZE
# on the root file system (swap cannot live on the scratch folder's tmpfs),
# with a hard link beside it: the same file under another name
SWAPF=$D/swap.file
lab_ssh 1 "mkdir -p $D && truncate -s 0 $SWAPF && chmod 600 $SWAPF && fallocate -l 32M $SWAPF &&
	mkswap -q $SWAPF >/dev/null && swapon $SWAPF && ln -f $SWAPF $SWAPF.link" >/dev/null 2>&1
if lab_ssh 1 "grep -q $SWAPF /proc/swaps"; then
	refused gate-swap-file 1 "an adopted file that is active swap" "in use as swap" \
		"$(target_req e2e-safety swapfile "$(adopt_ns $SWAPF 33554432)")"
	refused gate-swap-file-link 1 "a hard link to the active swap file" "in use as swap" \
		"$(target_req e2e-safety swaplink "$(adopt_ns $SWAPF.link 33554432)")"
else
	fail "cannot make an active swap file on lab1"
fi
lab_ssh 1 "swapoff $SWAPF; rm -f $SWAPF $SWAPF.link" >/dev/null 2>&1
back=$(lab_ssh 1 "mkdir -p $D && truncate -s 16M $D/back.img && losetup -f --show $D/back.img")
case $back in
/dev/loop*)
	refused gate-loop-backing 1 "an adopted file that backs a loop device" "backing file of loop device $back" \
		"$(target_req e2e-safety back "$(adopt_ns $D/back.img 16777216)")"
	;;
*) fail "cannot make a loop device on lab1: $back" ;;
esac
lab_ssh 1 "truncate -s 16M $D/plain.img"
sum=$(lab_ssh 1 "sha256sum $D/plain.img")
accepted "an ordinary adopted file" 1 "$(target_req e2e-safety plain "$(adopt_ns $D/plain.img 16777216)")"
agent 1 teardown --cluster e2e-safety --purge </dev/null >/dev/null
check "teardown --purge keeps the adopted file as it was" "$sum" "$(lab_ssh 1 "sha256sum $D/plain.img")"

# one host entry, two clusters: a keyed entry would lock out a's unkeyed
# initiators (nvmet authenticates per host entry, not per subsystem)
if [ "${LAB_KERNEL:-6.12}" = 6.12 ]; then
	plainns='{"nsid": 1, "file": "/var/lib/nvmet/e2e-safety-a.img", "size": 16777216}'
	agent 1 apply <<<"$(target_req e2e-safety-a a "$plainns")" >/dev/null
	check "cluster a allows lab2 without a key" 0 "$?"
	keyed=$(target_req e2e-safety-b b '{"nsid": 1, "file": "/var/lib/nvmet/e2e-safety-b.img", "size": 16777216}' |
		python3 -c 'import base64,json,os,struct,sys,zlib; r=json.load(sys.stdin); t=r["targets"][0]
k=os.urandom(32); key="DHHC-1:00:" + base64.b64encode(k + struct.pack("<I", zlib.crc32(k))).decode() + ":"
t["dhchap"]={"hash": "sha256", "dhgroup": "ffdhe2048", "keys": [{"host": t["hosts"][0], "key": key}]}
print(json.dumps(r))')
	refused hosts-key-shared-unkeyed 1 "cluster b keys the host entry cluster a allows unkeyed" e2e-safety-a "$keyed"
	accepted "cluster b allows the same host unkeyed too" 1 \
		"$(target_req e2e-safety-b b '{"nsid": 1, "file": "/var/lib/nvmet/e2e-safety-b.img", "size": 16777216}')"
	agent 1 teardown --cluster e2e-safety-b --purge </dev/null >/dev/null
	check "cluster b's teardown keeps the host entry a allows" yes \
		"$(lab_ssh 1 "[ -L /sys/kernel/config/nvmet/subsystems/nqn.2024-04.io.llmnet:e2e.safety.a/allowed_hosts/$hostnqn2 ] && echo yes")"
	agent 1 teardown --cluster e2e-safety-a --purge </dev/null >/dev/null
fi

# --- mounts: reproductions 4 and 8 on lab2, a target on lab1 --------------
agent 1 apply <<<"$(target_req e2e-safety mnt '{"nsid": 1, "file": "/var/lib/nvmet/e2e-safety-mnt.img", "size": 67108864}')" >/dev/null
check "lab1 exports a namespace for lab2's mounts" 0 "$?"
refused mount-over-etc 2 "a mount over /etc" /etc "$(mount_req '{"path": "/etc", "fs": "ext4", "format": "if-blank"}')"
check "/etc is not a mount point" no "$(lab_ssh 2 'if mountpoint -q /etc; then echo yes; else echo no; fi')"
refused mount-without-fs 2 "a mount without fs" "missing field 'fs'" "$(mount_req '{"path": "/mnt/e2e-safety"}')"
refused mount-fs-btrfs 2 "a mount with fs btrfs" btrfs \
	"$(mount_req '{"path": "/mnt/e2e-safety", "fs": "btrfs"}')"

# --- a fabric namespace exported again (issue 31): lab2 imports lab1's ---
lab_ssh 2 "modprobe nvme-tcp 2>/dev/null; nvme connect -t tcp -a $tip -s 4420 -n nqn.2024-04.io.llmnet:e2e.safety.mnt -q $hostnqn2 >/dev/null"
fabric=$(lab_ssh 2 "for i in \$(seq 1 20); do for c in /sys/class/nvme/nvme*; do grep -qs e2e.safety.mnt \$c/subsysnqn || continue
	for n in /sys/block/nvme*n*; do [[ \${n##*/} =~ ^nvme[0-9]+n[0-9]+\$ ]] && grep -qs e2e.safety.mnt \$n/device/subsysnqn && { echo /dev/\${n##*/}; exit 0; }; done; done; sleep 0.5; done")
case $fabric in
/dev/nvme*)
	refused gate-fabric-device 2 "a namespace imported over TCP (its multipath head), exported again" "over transport tcp" \
		"$(target_req e2e-safety fabric '{"nsid": 1, "device": "'"$fabric"'"}' | sed "s/$tip/$(lab_fabric_ip 2)/")"
	;;
*) fail "lab2 did not import lab1's namespace: '$fabric'" ;;
esac
lab_ssh 2 "for c in /sys/class/nvme/nvme*; do grep -qs e2e.safety.mnt \$c/subsysnqn && nvme disconnect -d \${c##*/}; done" >/dev/null 2>&1
# the control: lab2's own NVMe disk (QEMU's, on PCIe, with a serial)
local=$(lab_ssh 2 "for n in /sys/block/nvme*n*; do [[ \${n##*/} =~ ^nvme[0-9]+n[0-9]+\$ ]] || continue
	for c in \$n/device \$n/device/nvme*; do [ \"\$(cat \$c/transport 2>/dev/null)\" = pcie ] && { echo /dev/\${n##*/}; exit 0; }; done; done")
case $local in
/dev/nvme*)
	accepted "lab2's local PCIe NVMe disk" 2 \
		"$(target_req e2e-safety local '{"nsid": 1, "device": "'"$local"'"}' | sed "s/$tip/$(lab_fabric_ip 2)/")"
	agent 2 teardown --cluster e2e-safety --purge </dev/null >/dev/null
	;;
*) fail "lab2 has no local PCIe NVMe disk: '$local'" ;;
esac

if [ ${#xfails[@]} -gt 0 ]; then
	echo "XFAIL: ${#xfails[@]} check(s) NOT passing, expected to fail until their branch is merged:"
	printf '  XFAIL %s\n' "${xfails[@]}"
	# shellcheck disable=SC2034 # read by tap_done
	TAP_NAME="safety (${#xfails[@]} XFAIL, not passed)"
fi
tap_done
