# SPDX-License-Identifier: MIT
#
# Guest lifecycle for lab-up, lab-down, replace and trust (sourced after
# lib.sh; not for scenarios). A guest's persistent state is its folder
# $LAB_DIR/nodes/labI:
#   uuid          DMI product UUID (QEMU -uuid): the guest's host NQN derives from it
#   image-stamp   the build of the base image its overlay was made over
#   overlay.qcow2 copy-on-write over $LAB_DIR/image/root.ext4: the guest's own disk
#   scratch.img   backing of the emulated NVMe disk /dev/nvme0n1
#   trust-on-boot present until lab-up has written the guest's key to the
#                 controller's known_hosts (absent for a replaced guest)
# and its run state $LAB_DIR/run/labI.{pid,console,boot}.

# guest_create I [trust]: make guest I a brand-new machine (new overlay, DMI
# UUID, scratch disk; machine-id, host key and host NQN follow on first boot).
guest_create() {
	local i=$1 d uuid
	d=$(lab_node_dir "$i")
	rm -rf "$d"
	mkdir -p "$d"
	uuid=$(cat /proc/sys/kernel/random/uuid)
	qemu-img create -q -f qcow2 -o backing_file="$LAB_IMAGE/root.ext4",backing_fmt=raw \
		"$d/overlay.qcow2.new" || lab_die "cannot create the overlay of lab$i"
	mv "$d/overlay.qcow2.new" "$d/overlay.qcow2"
	truncate -s "$LAB_SCRATCH_SIZE" "$d/scratch.img"
	cp "$LAB_IMAGE/stamp" "$d/image-stamp"
	[ "${2:-}" = trust ] && : >"$d/trust-on-boot"
	echo "$uuid" >"$d/uuid.new" && mv "$d/uuid.new" "$d/uuid"
}

# guest_prepare I: keep guest I's machine if its overlay is over the current
# image, else make a new one (lab-up trusts the keys of machines it makes).
guest_prepare() {
	local i=$1 d
	d=$(lab_node_dir "$i")
	if [ -s "$d/uuid" ] && [ -s "$d/overlay.qcow2" ] && [ -f "$d/scratch.img" ] &&
		[ "$(cat "$d/image-stamp" 2>/dev/null)" = "$(cat "$LAB_IMAGE/stamp")" ]; then
		return 0
	fi
	if [ -d "$d" ]; then
		lab_log "lab$i: its disk was made over another build of the image; making it a new machine"
	fi
	guest_create "$i" trust
}

lab_hosts_arg() {
	local i out=
	for i in $(seq 1 "$LAB_N"); do out+="${out:+,}lab$i:$(lab_fabric_ip "$i")"; done
	echo "$out"
}

# guest_taps I: guest I's fabric taps, rail 0 then rail 1
guest_taps() { echo "labtap$1 labtap$1r1"; }

# guest_start I: start guest I's qemu (daemonized) and plug its two fabric
# taps into the lab's bridges (fabric0 into labbr0, fabric1 into labbr1).
# A tap is made in the host namespace, where QEMU opens it by name, then
# moved into the lab namespace, so the fabric has no address and no route on
# the host.
guest_start() {
	local i=$1 d t tap tap1 mac uuid
	d=$(lab_node_dir "$i")
	read -r tap tap1 < <(guest_taps "$i")
	mac=$(printf '%02x' "$i")
	uuid=$(cat "$d/uuid")
	for t in $tap $tap1; do
		ip -n "$LAB_NETNS" link del "$t" 2>/dev/null || true
		ip link del "$t" 2>/dev/null || true
		ip tuntap add dev "$t" mode tap || lab_die "cannot create tap '$t'"
		ip link set "$t" mtu "$LAB_FABRIC_MTU"
	done
	rm -f "$(lab_pidfile "$i")" "$LAB_RUN/lab$i.boot"
	if ! qemu-system-x86_64 -name "llmnet-lab-lab$i" \
		-accel "$LAB_ACCEL" -cpu max -smp 1 -m "$LAB_MEM" \
		-nodefaults -no-user-config -display none -monitor none \
		-serial "file:$(lab_console "$i")" \
		-daemonize -pidfile "$(lab_pidfile "$i")" \
		-uuid "$uuid" \
		-kernel "$LAB_IMAGE/vmlinuz" -initrd "$LAB_IMAGE/initrd.img" \
		-append "console=ttyS0 quiet mitigations=off lab.name=lab$i lab.ip=$(lab_fabric_ip "$i")/24 lab.ip1=$(lab_fabric_ip "$i" 1)/24 lab.mtu=$LAB_FABRIC_MTU lab.hosts=$(lab_hosts_arg)" \
		-drive "file=$d/overlay.qcow2,if=virtio,format=qcow2,discard=unmap" \
		-netdev "user,id=mgmt,restrict=on,hostfwd=tcp:$(lab_addr "$i"):22-:22" \
		-device "virtio-net-pci,netdev=mgmt,mac=52:54:00:00:00:$mac" \
		-netdev "tap,id=fabric,ifname=$tap,script=no,downscript=no" \
		-device "virtio-net-pci,netdev=fabric,mac=52:54:00:77:00:$mac,host_mtu=$LAB_FABRIC_MTU" \
		-netdev "tap,id=fabric1,ifname=$tap1,script=no,downscript=no" \
		-device "virtio-net-pci,netdev=fabric1,mac=52:54:00:78:00:$mac,host_mtu=$LAB_FABRIC_MTU" \
		-drive "file=$d/scratch.img,if=none,id=scratch,format=raw" \
		-device "nvme,serial=lab$i-${uuid:0:8},drive=scratch" \
		-device virtio-rng-pci \
		2>"$LAB_RUN/lab$i.qemu.err" 200>&-; then
		cat "$LAB_RUN/lab$i.qemu.err" >&2
		ip link del "$tap" 2>/dev/null || true
		ip link del "$tap1" 2>/dev/null || true
		lab_die "cannot start lab$i's qemu"
	fi
	for t in "$tap:$LAB_BRIDGE" "$tap1:$LAB_BRIDGE1"; do
		ip link set "${t%%:*}" netns "$LAB_NETNS" || lab_die "cannot move tap '${t%%:*}' into netns '$LAB_NETNS'"
		ip -n "$LAB_NETNS" link set "${t%%:*}" master "${t#*:}" up ||
			lab_die "cannot attach tap '${t%%:*}' to bridge '${t#*:}'"
	done
}

# guest_hostkey I: the host key guest I printed on its console (this boot).
guest_hostkey() {
	awk -v n="lab$1" '{ sub(/\r$/, "") }
		$1 == "LAB-HOSTKEY" && $2 == n && $3 == "ssh-ed25519" && NF == 4 { k = $3 " " $4 }
		END { if (k != "") print k }' "$(lab_console "$1")" 2>/dev/null || true
}

# seen_hosts_set I KEY: record guest I's key in the harness's known_hosts.
seen_hosts_set() {
	local addr
	addr=$(lab_addr "$1")
	(
		flock 9
		touch "$LAB_SEEN_HOSTS"
		grep -v "^$addr " "$LAB_SEEN_HOSTS" >"$LAB_SEEN_HOSTS.new" || true
		echo "$addr $2" >>"$LAB_SEEN_HOSTS.new"
		mv "$LAB_SEEN_HOSTS.new" "$LAB_SEEN_HOSTS"
	) 9>>"$LAB_SEEN_HOSTS.lock"
}

# controller_hosts_set I: trust guest I's current key: write it into this
# image's record ($LAB_IMAGE_HOSTS) and so into the controller's known_hosts
# (what lab-up does for a machine it made, and what trust does).
controller_hosts_set() {
	local addr key
	addr=$(lab_addr "$1")
	key=$(guest_hostkey "$1")
	[ -n "$key" ] || lab_die "cannot trust lab$1: no host key on its console"
	touch "$LAB_IMAGE_HOSTS"
	grep -v "^$addr " "$LAB_IMAGE_HOSTS" >"$LAB_IMAGE_HOSTS.new" || true
	echo "$addr $key" >>"$LAB_IMAGE_HOSTS.new"
	mv "$LAB_IMAGE_HOSTS.new" "$LAB_IMAGE_HOSTS"
	rm -f "$(lab_node_dir "$1")/trust-on-boot"
	controller_hosts_install
}

# controller_hosts_install: the controller's known_hosts becomes this
# image's record (both images' guests use the same addresses).
controller_hosts_install() {
	mkdir -p "$(dirname "$LAB_KNOWN_HOSTS")"
	touch "$LAB_IMAGE_HOSTS"
	cp "$LAB_IMAGE_HOSTS" "$LAB_KNOWN_HOSTS.new" && mv "$LAB_KNOWN_HOSTS.new" "$LAB_KNOWN_HOSTS"
}

# guest_wait I T0: wait until guest I printed its host key and answers ssh
# with its own name; record seconds since T0 in run/labI.boot.
guest_wait() {
	local i=$1 t0=$2 deadline key=
	deadline=$(($(date +%s) + LAB_BOOT_TIMEOUT))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		if ! lab_qemu_pid "$i" >/dev/null; then
			lab_log "lab$i: qemu exited during boot; console tail:"
			tail -n 20 "$(lab_console "$i")" >&2
			return 1
		fi
		if [ -z "$key" ]; then
			key=$(guest_hostkey "$i")
			[ -n "$key" ] && seen_hosts_set "$i" "$key"
		fi
		if [ -n "$key" ] &&
			[ "$(timeout 30 ssh "${LAB_SSH_OPTS[@]}" -o ControlMaster=no -o ControlPath=none \
				"root@$(lab_addr "$i")" hostname 2>/dev/null)" = "lab$i" ]; then
			lab_since "$t0" >"$LAB_RUN/lab$i.boot"
			return 0
		fi
		sleep 1
	done
	lab_log "lab$i: no ssh after ${LAB_BOOT_TIMEOUT}s; console tail:"
	tail -n 20 "$(lab_console "$i")" >&2
	return 1
}

# gone PID N: wait until process PID is gone, at most N times 0.2 s.
gone() {
	local n
	for n in $(seq 1 "$2"); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.2
	done
}

# guest_stop I: power guest I off cleanly (sync, read-only root) if it
# answers, else terminate its qemu; only a pid that is this lab's qemu.
guest_stop() {
	local i=$1 pid
	pid=$(lab_qemu_pid "$i") || { rm -f "$(lab_pidfile "$i")"; return 0; }
	timeout 15 ssh "${LAB_SSH_OPTS[@]}" "root@$(lab_addr "$i")" \
		'nohup sh -c "sleep 0.5; /sbin/lab-halt poweroff" >/dev/null 2>&1 &' 2>/dev/null 200>&- || true
	lab_ssh_close "$i"
	gone "$pid" 100
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null
		gone "$pid" 50
	fi
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		sleep 0.5
	fi
	rm -f "$(lab_pidfile "$i")"
	for t in $(guest_taps "$i"); do
		ip -n "$LAB_NETNS" link del "$t" 2>/dev/null || true
		ip link del "$t" 2>/dev/null || true
	done
}

# guests_share_hostkeys: give every guest the others' keys (and its own) in
# /etc/ssh/ssh_known_hosts under their names and fabric addresses, so
# guest-to-guest ssh (mpirun) verifies host keys too.
guests_share_hostkeys() {
	local i list= key
	for i in $(seq 1 "$LAB_N"); do
		key=$(guest_hostkey "$i")
		[ -n "$key" ] || return 1
		list+="lab$i,$(lab_fabric_ip "$i") $key"$'\n'
	done
	for i in $(seq 1 "$LAB_N"); do
		printf '%s' "$list" | lab_ssh "$i" \
			'cat >/etc/ssh/ssh_known_hosts.new && mv /etc/ssh/ssh_known_hosts.new /etc/ssh/ssh_known_hosts' ||
			return 1
	done
}

lab_fingerprint() {
	local key
	key=$(guest_hostkey "$1")
	[ -n "$key" ] && echo "$(lab_addr "$1") $key" | ssh-keygen -lf - | awk '{ print $2 }'
}
