# SPDX-License-Identifier: MIT
#
# Shared settings and helpers of the QEMU lab, sourced by every lab script and
# by the e2e scenarios (tests/e2e/scenarios/*.sh):
#
#   . tests/lab/lib.sh
#   lab_ssh 2 'nvme list-subsys'          # run a command on guest 2 (lab2)
#   lab_put 1 build/llmnet-agent /tmp/    # copy a file to guest 1
#   echo "$LAB_N $(lab_addr 1) $(lab_fabric_ip 1)"
#
# Guest i (1-based) is named lab<i>; its sshd is reachable from the host at
# 127.0.0.(10+i):22 (QEMU user-net hostfwd, nothing else is reachable), and
# it has two fabric NICs (rails), each on its own private bridge inside the
# network namespace "llmnetlab": "fabric0" with 10.77.0.(10+i)/24 and Soft-RoCE
# device rxe0, "fabric1" with 10.78.0.(10+i)/24 and rxe1.
#
# Two images, side by side (LLMNET_LAB_KERNEL, make's KERNEL=):
#   6.12  Debian 13 (trixie), systemd as PID 1                 image-6.12/  nodes-6.12/
#   6.1   Debian 12 (bookworm), tests/lab/guest-init as PID 1  image/  nodes/
# Unset, it is the running lab's, else 6.12. One lab runs at a time, so the run
# folder is shared and records the running lab's kernel in run/kernel.
#
# Two known_hosts files, on purpose:
#   $LAB_KNOWN_HOSTS  the controller's file (examples/lab.yaml points at it).
#                     lab-up adds a guest's key when lab-up created that guest;
#                     a replaced guest (tests/lab/replace) is NOT updated, so the
#                     controller sees the host key change as a real one would.
#                     tests/lab/trust I accepts the current key. The two images'
#                     guests share addresses but not keys: each image keeps its
#                     guests' trusted keys in $LAB_IMAGE_HOSTS (nodes*/known_hosts)
#                     and lab-up copies that file here, so switching images
#                     never turns the other image's guests into "replaced" ones.
#   $LAB_SEEN_HOSTS   the harness's own file: the keys each guest printed on its
#                     serial console during this boot (an out-of-band channel),
#                     used by lab_ssh / lab_put. Host keys are always verified.

LAB_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_REPO=$(cd "$LAB_SRC/../.." && pwd)
LAB_DIR=${LLMNET_LAB_DIR:-${HOME:-/root}/.cache/llmnet-lab}
LAB_RUN=$LAB_DIR/run
LAB_KERNEL=${LLMNET_LAB_KERNEL:-}
if [ -z "$LAB_KERNEL" ] && [ -r "$LAB_RUN/nodes" ] && [ -r "$LAB_RUN/kernel" ]; then
	LAB_KERNEL=$(cat "$LAB_RUN/kernel")
fi
LAB_KERNEL=${LAB_KERNEL:-6.12}
case $LAB_KERNEL in
6.1)
	LAB_IMAGE=$LAB_DIR/image
	LAB_NODES_DIR=$LAB_DIR/nodes
	;;
6.12)
	LAB_IMAGE=$LAB_DIR/image-6.12
	LAB_NODES_DIR=$LAB_DIR/nodes-6.12
	;;
*)
	printf "lab: invalid kernel '%s': the lab has images for 6.1 and 6.12\n" "$LAB_KERNEL" >&2
	exit 1
	;;
esac
export LAB_KERNEL
LAB_KEY=$LAB_DIR/ssh/id_ed25519
LAB_KNOWN_HOSTS=$LAB_DIR/ssh/known_hosts
LAB_IMAGE_HOSTS=$LAB_NODES_DIR/known_hosts
LAB_SEEN_HOSTS=$LAB_RUN/known_hosts.boot
# One lab per machine: guests bind 127.0.0.1x:22 and the netns name is fixed,
# so the lock is machine-wide, not per lab directory.
LAB_LOCK=${LLMNET_LAB_LOCK:-/run/llmnet-lab.lock}
LAB_ACTIVE=/run/llmnet-lab.active
LAB_NETNS=llmnetlab
LAB_BRIDGE=labbr0
LAB_FABRIC_NET=10.77.0
# the second rail: fabric1, rxe1
LAB_BRIDGE1=labbr1
LAB_FABRIC_NET1=10.78.0
LAB_FABRIC_MTU=9000
LAB_MEM=${LLMNET_LAB_MEM:-512}
# TCG by default: the figures in docs/lab.md are for software emulation, which
# is what CI machines without /dev/kvm get.
LAB_ACCEL=${LLMNET_LAB_ACCEL:-tcg}
LAB_BOOT_TIMEOUT=${LLMNET_LAB_BOOT_TIMEOUT:-300}
LAB_SCRATCH_SIZE=1G

# Node count: the running lab's, else LLMNET_LAB_N, else 3.
if [ -r "$LAB_RUN/nodes" ]; then
	LAB_N=$(cat "$LAB_RUN/nodes")
else
	LAB_N=${LLMNET_LAB_N:-3}
fi

lab_log() { printf 'lab: %s\n' "$*" >&2; }
lab_die() { printf 'lab: %s\n' "$*" >&2; exit 1; }
lab_now() { date +%s.%N; }
lab_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

lab_name() { echo "lab$1"; }
lab_addr() { echo "127.0.0.$((10 + $1))"; }
# lab_fabric_ip I [RAIL]: guest I's address on fabric0 (rail 0, the default)
# or fabric1 (rail 1)
lab_fabric_ip() {
	if [ "${2:-0}" = 1 ]; then echo "$LAB_FABRIC_NET1.$((10 + $1))"; else echo "$LAB_FABRIC_NET.$((10 + $1))"; fi
}
lab_node_dir() { echo "$LAB_NODES_DIR/lab$1"; }
lab_console() { echo "$LAB_RUN/lab$1.console"; }
lab_pidfile() { echo "$LAB_RUN/lab$1.pid"; }

# A guest index must be a number within 1..4 before it reaches a path or an
# address.
lab_check_index() {
	case $1 in
	[1-4]) ;;
	*) lab_die "invalid guest index '$1': expected 1..4" ;;
	esac
}

LAB_SSH_OPTS=(-i "$LAB_KEY" -o IdentitiesOnly=yes -o BatchMode=yes
	-o StrictHostKeyChecking=yes -o "UserKnownHostsFile=$LAB_SEEN_HOSTS"
	-o GlobalKnownHostsFile=/dev/null -o HostKeyAlgorithms=ssh-ed25519
	-o ConnectTimeout=30 -o ServerAliveInterval=10 -o ServerAliveCountMax=6
	-o LogLevel=ERROR
	# a fresh handshake costs 2-7 s against a TCG guest, a multiplexed one ~0.3 s
	-o ControlMaster=auto -o "ControlPath=$LAB_RUN/cm-%C" -o ControlPersist=120)

# lab_ssh I CMD...: run CMD as root on guest I; stdin is passed through.
lab_ssh() {
	local i=$1
	shift
	ssh "${LAB_SSH_OPTS[@]}" "root@$(lab_addr "$i")" "$@" 200>&-
}

# lab_roce_drop I DEV [PEER...]: the fault the RDMA path honours (issue 27):
# drop RoCE v2 (UDP 4791: the data and the RDMA CM's MADs on QP1) on guest
# I's fabric interface DEV, both ways (clsact egress and ingress, u32 match,
# gact drop), toward and from every peer, or only the PEER addresses (a bad
# link). A route (a blackhole) is what an unbound client consults; a
# client bound to its port's address, as llmnet's probes are, is not cut
# by it, nor is the kernel's RDMA CM resolving from that address.
# lab_roce_undrop I DEV removes it. Needs sch_ingress (clsact), cls_u32 and
# act_gact (tests/lab/guest-modules).
lab_roce_drop() {
	local i=$1 dev=$2 m="protocol ip prio 1 u32 match ip protocol 17 0xff match ip dport 4791 0xffff"
	local cmd a
	shift 2
	cmd="tc qdisc add dev $dev clsact"
	if [ $# -eq 0 ]; then
		cmd="$cmd && tc filter add dev $dev egress $m action drop"
		cmd="$cmd && tc filter add dev $dev ingress $m action drop"
	fi
	for a in "$@"; do
		cmd="$cmd && tc filter add dev $dev egress $m match ip dst $a/32 action drop"
		cmd="$cmd && tc filter add dev $dev ingress $m match ip src $a/32 action drop"
	done
	lab_ssh "$i" "$cmd"
}

lab_roce_undrop() {
	lab_ssh "$1" "tc qdisc del dev $2 clsact"
}

# lab_roce_dropped I DEV: the packets guest I's drop filters on DEV dropped
# (both ways), from tc's statistics.
lab_roce_dropped() {
	lab_ssh "$1" "tc -s filter show dev $2 egress; tc -s filter show dev $2 ingress" |
		sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | awk '{ n += $1 } END { print n + 0 }'
}

# lab_put I LOCAL REMOTE: copy a file to guest I (SFTP).
lab_put() {
	scp -q "${LAB_SSH_OPTS[@]}" "$2" "root@$(lab_addr "$1"):$3" 200>&-
}

# lab_get I REMOTE LOCAL: copy a file from guest I.
lab_get() {
	scp -q "${LAB_SSH_OPTS[@]}" "root@$(lab_addr "$1"):$2" "$3" 200>&-
}

# lab_push_agent I LOCAL REMOTE: install the agent binary LOCAL on guest I
# as REMOTE (0755): copied beside it, then renamed over it, so a running
# agent is never rewritten in place. Non-zero when any step failed.
lab_push_agent() {
	lab_ssh "$1" "mkdir -p ${3%/*}" && lab_put "$1" "$2" "$3.new" &&
		lab_ssh "$1" "chmod 755 $3.new && mv $3.new $3"
}

# Close guest I's multiplexed connection (before a reboot or a replacement).
lab_ssh_close() {
	ssh "${LAB_SSH_OPTS[@]}" -O exit "root@$(lab_addr "$1")" >/dev/null 2>&1 || true
}

# lab_lock: take the machine-wide lab lock for the rest of this process (and
# its children, which see LLMNET_LAB_LOCKED=1 and do not lock again). Waits
# up to LLMNET_LAB_LOCK_WAIT seconds (default 1800) for another session. The
# lock is fd 200; whatever may outlive the holder (qemu, ssh's multiplexing
# master) is started with fd 200 closed, or it would keep the lock.
lab_lock() {
	[ "${LLMNET_LAB_LOCKED:-}" = 1 ] && return 0
	exec 200>>"$LAB_LOCK" || lab_die "cannot open lock '$LAB_LOCK'"
	if ! flock -n 200; then
		lab_log "waiting for the lab lock '$LAB_LOCK' (another session uses the lab)"
		flock -w "${LLMNET_LAB_LOCK_WAIT:-1800}" 200 ||
			lab_die "cannot take the lab lock '$LAB_LOCK': still held after ${LLMNET_LAB_LOCK_WAIT:-1800}s"
	fi
	export LLMNET_LAB_LOCKED=1
}

# lab_qemu_pid I: print guest I's qemu pid if its pidfile names a live qemu of
# this lab (guards against a reused pid), else fail.
lab_qemu_pid() {
	local f pid
	f=$(lab_pidfile "$1")
	[ -r "$f" ] || return 1
	pid=$(cat "$f")
	case $pid in '' | *[!0-9]*) return 1 ;; esac
	[ -r "/proc/$pid/cmdline" ] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "-name llmnet-lab-lab$1 " || return 1
	echo "$pid"
}

# lab_is_up: every guest of the recorded lab has a live qemu.
lab_is_up() {
	local i
	[ -r "$LAB_RUN/nodes" ] || return 1
	for i in $(seq 1 "$LAB_N"); do
		lab_qemu_pid "$i" >/dev/null || return 1
	done
}

# lab_spec IN OUT: copy the spec IN to OUT with the lab's own identity and
# known_hosts paths: the examples name the default lab folder
# (~/.cache/llmnet-lab), which differs when LLMNET_LAB_DIR is set.
lab_spec() {
	sed "s|~/.cache/llmnet-lab/|$LAB_DIR/|g" "$1" >"$2"
}

# lab_runs_current_image: every guest of the running lab was made over the
# image build that is in the cache now.
lab_runs_current_image() {
	local i
	[ "$(cat "$LAB_RUN/kernel" 2>/dev/null || echo 6.1)" = "$LAB_KERNEL" ] || return 1
	for i in $(seq 1 "$LAB_N"); do
		[ "$(cat "$(lab_node_dir "$i")/image-stamp" 2>/dev/null)" = "$(cat "$LAB_IMAGE/stamp" 2>/dev/null)" ] ||
			return 1
	done
}

# lab_healthy: up, and every guest answers over ssh with its own name.
lab_healthy() {
	local i
	lab_is_up || return 1
	for i in $(seq 1 "$LAB_N"); do
		[ "$(timeout 60 ssh "${LAB_SSH_OPTS[@]}" "root@$(lab_addr "$i")" hostname 2>/dev/null 200>&-)" = "lab$i" ] ||
			return 1
	done
}

# lab_reboot I: reboot guest I cleanly and wait until it answers ssh again
# (tests/lab/reboot: a clean shutdown, then a new start on the same disk).
# Its host key must not change: ssh still checks it against this boot's
# known_hosts.
lab_reboot() {
	"$LAB_SRC/reboot" "$1" >&2
}
