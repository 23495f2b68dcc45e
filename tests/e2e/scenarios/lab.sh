#!/bin/bash
# SPDX-License-Identifier: MIT
# images: 6.1 6.12
#
# The lab's own smoke test, run by tests/e2e/run.sh against a lab that is up.
# It asserts what it observes inside the guests over ssh, not exit codes:
# modules load and expose configfs/nvmet and /dev/nvme-fabrics, rxe0 and rxe1
# are ACTIVE on the two fabric NICs with the fabric addresses as RoCE GIDs,
# each guest has its own identity, the guests reach each other on both rails
# (ping, rping, ssh by name), RDMA traffic on one rail stays off the other,
# nothing of the fabric is addressed on the host, and a rebooted guest keeps
# its disk, machine-id, host key and host NQN.
set -uo pipefail
. "$(dirname "$0")/../../lab/lib.sh"
. "$(dirname "$0")/../../lib/tap.sh"
tap_init lab

N=$LAB_N
[ "$N" -ge 2 ] || { fail "lab has $N guests; the smoke test needs at least 2"; exit 1; }

# --- every guest: name, modules, configfs, rxe0, fabric address ------------
for i in $(seq 1 "$N"); do
	ip=$(lab_fabric_ip "$i")
	ip1=$(lab_fabric_ip "$i" 1)
	out=$(lab_ssh "$i" "hostname
modprobe -a configfs nvmet nvmet_tcp nvme_tcp rdma_rxe 2>&1 || echo modprobe-failed
for m in configfs nvmet nvmet_tcp nvme_tcp rdma_rxe; do [ -d /sys/module/\$m ] && echo mod:\$m; done
[ -d /sys/kernel/config/nvmet/subsystems ] && echo nvmet-configfs
[ -c /dev/nvme-fabrics ] && echo nvme-fabrics
modprobe -r nvmet_tcp nvmet nvme_tcp 2>&1 || echo unload-failed
[ -d /sys/module/nvmet ] || echo nvmet-unloaded
echo state=\$(cat /sys/class/infiniband/rxe0/ports/1/state)
echo ndev=\$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/1)
echo gid=\$(cat /sys/class/infiniband/rxe0/ports/1/gids/1)
echo addr=\$(ip -4 -o addr show dev fabric0 | awk '{ print \$4 }')
echo mtu=\$(cat /sys/class/net/fabric0/mtu)
echo state1=\$(cat /sys/class/infiniband/rxe1/ports/1/state)
echo ndev1=\$(cat /sys/class/infiniband/rxe1/ports/1/gid_attrs/ndevs/1)
echo gid1=\$(cat /sys/class/infiniband/rxe1/ports/1/gids/1)
echo addr1=\$(ip -4 -o addr show dev fabric1 | awk '{ print \$4 }')
echo mtu1=\$(cat /sys/class/net/fabric1/mtu)
[ -b /dev/nvme0n1 ] && echo scratch-nvme" 2>&1)
	got() { grep -qxF "$1" <<<"$out"; }
	val() { sed -n "s/^$1=//p" <<<"$out"; }
	check "lab$i answers as lab$i" "lab$i" "$(head -1 <<<"$out")"
	mods=$(grep '^mod:' <<<"$out" | tr '\n' ' ')
	check "lab$i loads configfs nvmet nvmet_tcp nvme_tcp rdma_rxe" \
		"mod:configfs mod:nvmet mod:nvmet_tcp mod:nvme_tcp mod:rdma_rxe " "$mods"
	if got nvmet-configfs && got nvme-fabrics; then
		ok "lab$i shows /sys/kernel/config/nvmet and /dev/nvme-fabrics"
	else
		fail "lab$i lacks nvmet in configfs or /dev/nvme-fabrics: $out"
	fi
	if got nvmet-unloaded && ! got unload-failed && ! got modprobe-failed; then
		ok "lab$i unloads nvmet and nvme_tcp again"
	else
		fail "lab$i module load/unload: $out"
	fi
	check "lab$i rxe0 port 1 is ACTIVE" "4: ACTIVE" "$(val state)"
	check "lab$i rxe0 sits on fabric0" "fabric0" "$(val ndev)"
	gid=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${ip//./ })
	check "lab$i rxe0 GID 1 is its fabric address $ip" "$gid" "$(val gid)"
	check "lab$i fabric0 has $ip/24" "$ip/24" "$(val addr)"
	check "lab$i fabric0 MTU" "$LAB_FABRIC_MTU" "$(val mtu)"
	check "lab$i rxe1 port 1 is ACTIVE" "4: ACTIVE" "$(val state1)"
	check "lab$i rxe1 sits on fabric1" "fabric1" "$(val ndev1)"
	gid1=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${ip1//./ })
	check "lab$i rxe1 GID 1 is its fabric1 address $ip1" "$gid1" "$(val gid1)"
	check "lab$i fabric1 has $ip1/24" "$ip1/24" "$(val addr1)"
	check "lab$i fabric1 MTU" "$LAB_FABRIC_MTU" "$(val mtu1)"
	if got scratch-nvme; then ok "lab$i has its emulated NVMe scratch disk"; else fail "lab$i has no /dev/nvme0n1"; fi
done

# --- identities differ, and follow the DMI UUID ------------------------------
ids=() nqns=() keys=()
for i in $(seq 1 "$N"); do
	read -r mid nqn < <(lab_ssh "$i" 'echo "$(cat /etc/machine-id) $(cat /etc/nvme/hostnqn)"')
	ids+=("$mid") nqns+=("$nqn")
	keys+=("$(lab_ssh "$i" cat /etc/ssh/ssh_host_ed25519_key.pub | awk '{ print $2 }')")
	check "lab$i host NQN derives from its DMI UUID" \
		"nqn.2014-08.org.nvmexpress:uuid:$(cat "$(lab_node_dir "$i")/uuid")" "$nqn"
done
uniq_ids=$(printf '%s\n' "${ids[@]}" | grep -E '^[0-9a-f]{32}$' | sort -u | wc -l)
uniq_nqns=$(printf '%s\n' "${nqns[@]}" | sort -u | wc -l)
uniq_keys=$(printf '%s\n' "${keys[@]}" | grep . | sort -u | wc -l)
check "every guest has its own machine-id" "$N" "$uniq_ids"
check "every guest has its own host NQN" "$N" "$uniq_nqns"
check "every guest has its own ssh host key" "$N" "$uniq_keys"

# --- the fabric exists only between the guests ------------------------------
host_fabric=$(ip -o addr show | grep -cE " ($LAB_FABRIC_NET|$LAB_FABRIC_NET1)\." || true)
check "the host has no fabric address" 0 "$host_fabric"
ns_addrs=$(ip -n "$LAB_NETNS" -o addr show dev "$LAB_BRIDGE" 2>/dev/null | wc -l)
check "the lab bridge has no address" 0 "$ns_addrs"
ns_addrs=$(ip -n "$LAB_NETNS" -o addr show dev "$LAB_BRIDGE1" 2>/dev/null | wc -l)
check "the rail-1 bridge has no address" 0 "$ns_addrs"

# --- guests reach each other: ping and ssh by name, in a ring ----------------
for i in $(seq 1 "$N"); do
	j=$((i % N + 1))
	loss=$(lab_ssh "$i" "ping -c 3 -i 0.3 -W 5 $(lab_fabric_ip "$j")" 2>&1 |
		sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p')
	check "lab$i pings lab$j on the fabric" 0 "$loss"
	loss=$(lab_ssh "$i" "ping -c 3 -i 0.3 -W 5 $(lab_fabric_ip "$j" 1)" 2>&1 |
		sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p')
	check "lab$i pings lab$j on fabric1" 0 "$loss"
	check "lab$i reaches lab$j by name over ssh (host key checked)" "lab$j" \
		"$(lab_ssh "$i" "ssh lab$j hostname" 2>&1)"
done

# --- rping over rxe: lab1 serves, lab2 connects ----------------------------
# rping has no connect timeout and the client may come before the server
# listens: a fresh bounded server per attempt, the client retried.
srv=$(lab_fabric_ip 1)
rping_ok=0
for try in 1 2 3; do
	lab_ssh 1 "pkill -x rping; rm -f /tmp/rping-server.out
		nohup sh -c 'timeout 60 rping -s -a $srv -C 10 -S 4096 -V >/tmp/rping-server.out 2>&1; echo rc=\$? >>/tmp/rping-server.out' >/dev/null 2>&1 &"
	sleep $((1 + try))
	client=$(lab_ssh 2 "timeout 60 rping -c -a $srv -C 10 -S 4096 -V -v 2>&1; echo rc=\$?")
	sleep 1
	server=$(lab_ssh 1 "for k in 1 2 3 4 5 6 7 8 9 10; do grep -q '^rc=' /tmp/rping-server.out && break; sleep 1; done; cat /tmp/rping-server.out")
	pings=$(grep -c '^ping data: rdma-ping-' <<<"$client")
	if [ "$(tail -1 <<<"$client")" = rc=0 ] && [ "$pings" = 10 ] && grep -qx rc=0 <<<"$server"; then
		rping_ok=1
		break
	fi
	echo "# rping attempt $try: client $(tail -1 <<<"$client"), $pings pings; server $(grep '^rc=' <<<"$server")"
done
if [ "$rping_ok" = 1 ]; then
	ok "rping lab2 -> lab1 over rxe0: 10 verified pings, both ends exit 0"
else
	fail "rping lab2 -> lab1 over rxe0 failed: $client / $server"
fi
lab_ssh 1 'pkill -x rping' || true

# --- each rail's traffic stays on its own fabric -------------------------------
# ib_write_bw over rxeR between lab2 and lab1 (its rdma_cm and TCP exchange
# use the same rail's addresses): both guests' fabricR byte counters rise by
# at least the 200 x 64 KiB written, and the other rail's do not move. The
# counters start once both rails have been quiet for 6 s: the neighbour
# cache confirms a rail's last peer with a unicast ARP exchange 5 s after
# the previous test's last use (84 bytes on each guest).
rail_bytes() {
	lab_ssh "$1" 'for r in 0 1; do s=/sys/class/net/fabric$r/statistics; echo $(($(cat $s/rx_bytes) + $(cat $s/tx_bytes))); done' |
		paste -sd' '
}
rails_quiet() {
	local k q1 q2
	read -r -a b1 < <(rail_bytes 1)
	read -r -a b2 < <(rail_bytes 2)
	for k in 1 2 3 4 5; do
		sleep 6
		read -r -a q1 < <(rail_bytes 1)
		read -r -a q2 < <(rail_bytes 2)
		[ "${q1[*]} ${q2[*]}" = "${b1[*]} ${b2[*]}" ] && return 0
		b1=("${q1[@]}") b2=("${q2[@]}")
	done
	echo "# the rails did not go quiet for 6 s before the test"
}
for r in 1 0; do
	o=$((1 - r))
	srv=$(lab_fabric_ip 1 "$r")
	rails_quiet
	bw_ok=0
	for try in 1 2 3; do
		lab_ssh 1 "pkill -x ib_write_bw; rm -f /tmp/bw.server.out
			nohup sh -c 'timeout 60 ib_write_bw -d rxe$r -R -F -s 65536 -n 200 >/tmp/bw.server.out 2>&1; echo rc=\$? >>/tmp/bw.server.out' >/dev/null 2>&1 &"
		sleep $((1 + try))
		client=$(lab_ssh 2 "timeout 60 ib_write_bw -d rxe$r -R -F -s 65536 -n 200 $srv 2>&1; echo rc=\$?")
		if [ "$(tail -1 <<<"$client")" = rc=0 ]; then
			bw_ok=1
			break
		fi
		echo "# ib_write_bw rxe$r attempt $try: $(tail -3 <<<"$client" | tr '\n' ' ')"
	done
	lab_ssh 1 'pkill -x ib_write_bw' || true
	read -r -a a1 < <(rail_bytes 1)
	read -r -a a2 < <(rail_bytes 2)
	d1_r=$((a1[r] - b1[r])) d2_r=$((a2[r] - b2[r])) d1_o=$((a1[o] - b1[o])) d2_o=$((a2[o] - b2[o]))
	if [ "$bw_ok" = 1 ]; then
		ok "ib_write_bw lab2 -> lab1 over rxe$r ($srv) exits 0"
	else
		fail "ib_write_bw lab2 -> lab1 over rxe$r ($srv) failed: $(tail -3 <<<"$client" | tr '\n' ' ')"
	fi
	if [ "$d1_r" -ge 13107200 ] && [ "$d2_r" -ge 13107200 ]; then
		ok "rxe$r's writes raised fabric$r's byte counters (lab1 +$d1_r, lab2 +$d2_r)"
	else
		fail "rxe$r's writes did not show on fabric$r: lab1 +$d1_r, lab2 +$d2_r bytes (expected >= 13107200)"
	fi
	check "rxe$r's writes left fabric$o's byte counters unchanged (lab1, lab2)" "+0 +0" "+$d1_o +$d2_o"
done

# --- reboot lab2: its disk and identity survive --------------------------------
token=$(tr -d '-' </proc/sys/kernel/random/uuid)
b=2
before=$(lab_ssh "$b" "echo $token >/root/lab-smoke.token; cat /etc/machine-id /etc/nvme/hostnqn; ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub | awk '{ print \$2 }'; cat /proc/sys/kernel/random/boot_id")
t=$(lab_now)
if lab_reboot "$b"; then
	ok "lab$b rebooted and answers ssh with the same host key ($(lab_since "$t")s)"
	after=$(lab_ssh "$b" "cat /root/lab-smoke.token /etc/machine-id /etc/nvme/hostnqn; ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub | awk '{ print \$2 }'; cat /proc/sys/kernel/random/boot_id; cat /sys/class/infiniband/rxe0/ports/1/state")
	check "lab$b kept a file written before the reboot" "$token" "$(sed -n 1p <<<"$after")"
	check "lab$b kept its machine-id" "$(sed -n 1p <<<"$before")" "$(sed -n 2p <<<"$after")"
	check "lab$b kept its host NQN" "$(sed -n 2p <<<"$before")" "$(sed -n 3p <<<"$after")"
	check "lab$b kept its host key" "$(sed -n 3p <<<"$before")" "$(sed -n 4p <<<"$after")"
	# the kernel's boot_id is new on every boot (uptime is not proof: under
	# TCG a warm reset may keep the TSC, and uptime counts from it)
	if [ -n "$(sed -n 4p <<<"$before")" ] && [ "$(sed -n 4p <<<"$before")" != "$(sed -n 5p <<<"$after")" ]; then
		ok "lab$b booted again (new boot_id)"
	else
		fail "lab$b did not really reboot: boot_id $(sed -n 5p <<<"$after") is still $(sed -n 4p <<<"$before")"
	fi
	check "lab$b rxe0 is ACTIVE again after the reboot" "4: ACTIVE" "$(sed -n 6p <<<"$after")"
	# the shutdown half of the reboot, as the console saw it
	halt=$(awk '/LAB-HALT poweroff/ { s = ""; on = 1 } on { s = s $0 "\n" }
		END { printf "%s", s }' "$(lab_console "$b").prev" | tr -d '\r')
	if grep -q 'LAB-HALT root is read-only' <<<"$halt" && ! grep -qiE 'I/O error|EXT4-fs error' <<<"$halt"; then
		ok "lab$b shut down with its root read-only and no I/O error"
	else
		fail "lab$b's shutdown was not clean: $(grep -iE 'LAB-HALT|error' <<<"$halt" | tr '\n' ' ')"
	fi
	lab_ssh "$b" rm -f /root/lab-smoke.token
else
	fail "lab$b did not come back from a reboot"
fi

tap_done
