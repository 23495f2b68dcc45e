#!/bin/bash
# SPDX-License-Identifier: MIT
# images: 6.1 6.12
#
# llmnet-agent alone (no controller) on the real kernel, between lab1 (target)
# and lab2 (initiator), over TCP and over RDMA (rxe):
#  - lab1 exports a file namespace on its disk and one on tmpfs (buffered_io);
#  - lab2 connects, writes data, disconnects, reconnects and reads it back;
#  - the request's serial, uuid and nguid are what lab2 sees, and the
#    fixture holds them as the real kernel does;
#  - apply run again reports no changes on both guests;
#  - teardown leaves configfs and the tcp/rdma controllers as they were;
#  - the failpoint loop once against real configfs: stop before every change
#    of an apply and of a teardown, re-run, and check nothing is left over.
# Run through tests/e2e/run.sh (it takes the lab lock).
set -uo pipefail
. "$(dirname "$0")/../../lab/lib.sh"
. "$(dirname "$0")/../../lib/tap.sh"
tap_init agent
cd "$LAB_REPO"

AGENT=/usr/local/lib/llmnet/llmnet-agent
build=${BUILD:-build}
[ -x "$build/llmnet-agent" ] || { fail "no $build/llmnet-agent: run make first"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# json FILE EXPR: evaluate a Python expression on the parsed answer d
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# agent I VERB [ARGS] < REQUEST > ANSWER; returns the agent's exit status
agent() { local i=$1; shift; lab_ssh "$i" "$AGENT -q --budget-ms 600000 $*"; }
changes() { json "$1" 'd["summary"]["create"]+d["summary"]["change"]+d["summary"]["remove"]'; }

for i in 1 2; do
	lab_push_agent "$i" "$build/llmnet-agent" "$AGENT" || { fail "cannot push the agent to lab$i"; exit 1; }
done
check "the pushed agent speaks protocol 3" 3 "$(agent 1 version | python3 -c 'import json,sys; print(json.load(sys.stdin)["protocol"])')"

# what was there before: configfs on lab1, fabric controllers on lab2
snap_target='find /sys/kernel/config -mindepth 1 2>/dev/null | sort'
snap_ctrls='for c in /sys/class/nvme/nvme*; do [ -e "$c" ] && echo "${c##*/} $(cat $c/transport) $(cat $c/address) $(cat $c/subsysnqn)"; done | sort'
before1=$(lab_ssh 1 "$snap_target")
before2=$(lab_ssh 2 "$snap_ctrls")
hostnqn=$(lab_ssh 2 'cat /etc/nvme/hostnqn')
case $hostnqn in nqn.*) ok "lab2's host NQN is $hostnqn" ;; *) fail "lab2 has no host NQN" ;; esac
tip=$(lab_fabric_ip 1)

# stable identity as a controller would send it (the agent takes it as given)
SERIAL=0e2ea6e17d1c4b38
UUID1=6a0c1f52-9d3e-8b47-a1c2-3d4e5f607182
NGUID1=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0
UUID2=7b1d2063-ae4f-8c58-b2d3-4e5f60718293
target_req() { # TRANSPORT
	cat <<JSON
{"protocol": 1, "cluster": "e2e-agent", "targets": [{
  "nqn": "nqn.2024-04.io.llmnet:e2e.agent.$1", "transport": "$1",
  "address": "$tip", "service": 4420, "hosts": ["$hostnqn"], "serial": "$SERIAL",
  "namespaces": [{"nsid": 1, "file": "/var/lib/nvmet/e2e/$1.img", "size": 16777216,
                  "uuid": "$UUID1", "nguid": "$NGUID1"},
                 {"nsid": 2, "file": "/run/llmnet/e2e/$1.img", "size": 4194304, "uuid": "$UUID2"}]}]}
JSON
}
init_req() { # TRANSPORT
	cat <<JSON
{"protocol": 1, "cluster": "e2e-agent", "initiators": [{
  "target": "nqn.2024-04.io.llmnet:e2e.agent.$1", "transport": "$1",
  "address": "$tip", "service": 4420, "queues": {"nr_io_queues": 1}}]}
JSON
}

# facts from the real kernel: RoCE on rxe0 over fabric0, the host NQN
agent 1 facts >"$tmp/f1.json"
check "facts: rxe0 port 1 is ACTIVE / LINK_UP" "ACTIVE LINK_UP" \
	"$(json "$tmp/f1.json" 'd["rdma"][0]["ports"][0]["state"] + " " + d["rdma"][0]["ports"][0]["phys_state"]')"
check "facts: rxe0 GID 1 is RoCE v2 on fabric0" "RoCE v2 fabric0" \
	"$(json "$tmp/f1.json" '[g["type"] + " " + g["netdev"] for g in d["rdma"][0]["ports"][0]["gids"] if g["index"] == 1][0]')"
check "facts: RoCE MTU from fabric0's MTU $LAB_FABRIC_MTU" 4096 \
	"$(json "$tmp/f1.json" 'd["rdma"][0]["ports"][0]["active_mtu"]')"
check "facts: lab1's host NQN and machine id" "$(lab_ssh 1 'cat /etc/nvme/hostnqn /etc/machine-id' | tr '\n' ' ')" \
	"$(json "$tmp/f1.json" 'd["host_nqn"] + " " + d["machine_id"] + " "')"

for tr in tcp rdma; do
	nqn=nqn.2024-04.io.llmnet:e2e.agent.$tr
	target_req "$tr" >"$tmp/t.json"
	init_req "$tr" >"$tmp/i.json"
	agent 1 apply <"$tmp/t.json" >"$tmp/a1.json"
	rc=$?
	check "$tr: lab1 apply exits 0" 0 "$rc"
	check "$tr: lab1 exports through a port link" 1 \
		"$(lab_ssh 1 "ls /sys/kernel/config/nvmet/ports/*/subsystems/ | grep -cx '$nqn'")"
	# tmpfs refuses O_DIRECT on 6.1 and has it since Linux 6.6: the agent
	# sets buffered_io only where the kernel needs it
	if [ "$LAB_KERNEL" = 6.1 ]; then bio=1; else bio=0; fi
	check "$tr: the tmpfs-backed namespace got buffered_io=$bio on $LAB_KERNEL" "$bio" \
		"$(lab_ssh 1 "cat /sys/kernel/config/nvmet/subsystems/$nqn/namespaces/2/buffered_io")"
	check "$tr: the disk-backed namespace is enabled with O_DIRECT" "1 0" \
		"$(lab_ssh 1 "cd /sys/kernel/config/nvmet/subsystems/$nqn/namespaces/1 && echo \$(cat enable) \$(cat buffered_io)")"
	if [ "$tr" = tcp ]; then
		# the fixture's configfs shapes against the real kernel's: the same
		# request on a fixture root built from this image's target tree
		# (node-target.tree: 6.1; node-target-6.12.tree, recorded by
		# tests/lab/record-agent-tree) inside lab1
		tree=tests/fixtures/agent/node-target.tree
		[ "$LAB_KERNEL" = 6.1 ] || tree=tests/fixtures/agent/node-target-$LAB_KERNEL.tree
		lab_put 1 tests/fixtures/agent/build-tree.sh /tmp/build-tree.sh &&
			lab_put 1 "$tree" /tmp/node-target.tree
		shape='find . | grep -v -e foreign -e "^./ports/7" | sort'
		# ... and the identity attributes' values, byte for byte (the
		# kernel pads the serial with spaces; uuid and nguid read back
		# as it prints them)
		shape="$shape"'; for f in subsystems/*/attr_serial subsystems/*/namespaces/*/device_[un]*uid; do case $f in *foreign*) ;; *) printf "%s=[%s]\n" "$f" "$(cat "$f")" ;; esac; done'
		real=$(lab_ssh 1 "cd /sys/kernel/config/nvmet && $shape")
		fx=$(lab_ssh 1 "rm -rf /tmp/fx && bash /tmp/build-tree.sh /tmp/node-target.tree /tmp/fx &&
			$AGENT -q --budget-ms 600000 --root /tmp/fx apply >/dev/null && cd /tmp/fx/sys/kernel/config/nvmet && $shape" <"$tmp/t.json")
		check "the real kernel holds the serial as the fixture models it" "subsystems/$nqn/attr_serial=[$SERIAL    ]" \
			"$(grep -F "subsystems/$nqn/attr_serial=" <<<"$real")"
		if [ "$real" = "$fx" ]; then
			ok "fixture configfs shapes match the real kernel's ($(wc -l <<<"$real") entries)"
		else
			fail "fixture configfs shapes differ from the real kernel's: $(diff <(echo "$real") <(echo "$fx") | grep '^[<>]' | tr '\n' ' ')"
		fi
		lab_ssh 1 'rm -rf /tmp/fx /tmp/build-tree.sh /tmp/node-target.tree'
	fi
	agent 2 apply <"$tmp/i.json" >"$tmp/a2.json"
	check "$tr: lab2 apply (connect) exits 0" 0 "$?"
	dev=$(agent 2 facts | python3 -c '
import json,sys
d=json.load(sys.stdin)
print(" ".join("/dev/"+n["block"] for c in d["nvme"] if c["subsysnqn"]==sys.argv[1] for n in c["namespaces"] if n["nsid"]==1))' "$nqn")
	# nvmeXnY: Y is the kernel's own count, not the nsid (6.12 may name nsid 1
	# nvme1n2 when namespace 2 was scanned first): the block device's nsid is
	case $dev in
	/dev/nvme*n*) check "$tr: lab2 sees namespace 1 as $dev (its sysfs nsid)" 1 \
		"$(lab_ssh 2 "cat /sys/block/${dev#/dev/}/nsid")" ;;
	*) fail "$tr: no block device for $nqn ('$dev')"; continue ;;
	esac
	check "$tr: lab2 sees the serial, uuid and nguid lab1 was given" "$SERIAL $UUID1 $NGUID1" \
		"$(lab_ssh 2 "b=/sys/block/${dev#/dev/}; echo \$(cat \$b/device/serial 2>/dev/null || cat \$b/device/nvme*/serial | head -n1) \$(cat \$b/uuid) \$(cat \$b/nguid)")"
	sum_w=$(lab_ssh 2 "head -c 4194304 /dev/urandom >/tmp/e2e.data && dd if=/tmp/e2e.data of=$dev bs=1M oflag=direct status=none && sha256sum </tmp/e2e.data | cut -d' ' -f1")
	agent 2 teardown --cluster e2e-agent <"/dev/null" >"$tmp/d2.json"
	check "$tr: lab2 teardown (disconnect) exits 0" 0 "$?"
	check "$tr: the controller is gone after disconnect" "" \
		"$(lab_ssh 2 "grep -lx '$nqn' /sys/class/nvme/nvme*/subsysnqn 2>/dev/null")"
	agent 2 apply <"$tmp/i.json" >"$tmp/a2.json"
	check "$tr: lab2 reconnects" 0 "$?"
	dev=$(agent 2 facts | python3 -c '
import json,sys
d=json.load(sys.stdin)
print(" ".join("/dev/"+n["block"] for c in d["nvme"] if c["subsysnqn"]==sys.argv[1] for n in c["namespaces"] if n["nsid"]==1))' "$nqn")
	sum_r=$(lab_ssh 2 "dd if=$dev bs=1M count=4 iflag=direct status=none | sha256sum | cut -d' ' -f1")
	if [ -n "$sum_w" ] && [ "$sum_w" = "$sum_r" ]; then
		ok "$tr: data written before the disconnect reads back the same ($sum_r)"
	else
		fail "$tr: read back '$sum_r', wrote '$sum_w'"
	fi
	agent 1 apply <"$tmp/t.json" >"$tmp/r1.json"
	check "$tr: lab1 apply again: no changes" 0 "$(changes "$tmp/r1.json")"
	agent 2 apply <"$tmp/i.json" >"$tmp/r2.json"
	check "$tr: lab2 apply again: no changes" 0 "$(changes "$tmp/r2.json")"
	agent 2 teardown --cluster e2e-agent </dev/null >"$tmp/d2.json"
	check "$tr: lab2 teardown exits 0" 0 "$?"
	agent 1 teardown --cluster e2e-agent --purge </dev/null >"$tmp/d1.json"
	check "$tr: lab1 teardown exits 0" 0 "$?"
	check "$tr: lab1 configfs is as it was before" "$before1" "$(lab_ssh 1 "$snap_target")"
	check "$tr: lab2 controllers are as they were before" "$before2" "$(lab_ssh 2 "$snap_ctrls")"
done

# DH-HMAC-CHAP (refused on 6.1, keyed and proven on 6.12): scenarios/auth.sh

# --- the failpoint loop against real configfs, inside lab1 ----------------
target_req tcp >"$tmp/t.json"
lab_put 1 "$tmp/t.json" /tmp/e2e-fp.json
out=$(lab_ssh 1 "before=\$($snap_target); bad=0; counts=
for phase in apply teardown; do
  n=1
  while [ \$n -lt 200 ]; do
    if [ \$phase = apply ]; then
      LLMNET_FAILPOINT=\$n $AGENT -q --budget-ms 600000 apply </tmp/e2e-fp.json >/dev/null 2>&1; rc=\$?
    else
      $AGENT -q --budget-ms 600000 apply </tmp/e2e-fp.json >/dev/null 2>&1
      LLMNET_FAILPOINT=\$n $AGENT -q --budget-ms 600000 teardown --cluster e2e-agent >/dev/null 2>&1; rc=\$?
    fi
    [ \$rc = 99 ] || break
    if [ \$phase = apply ]; then
      $AGENT -q --budget-ms 600000 apply </tmp/e2e-fp.json >/dev/null 2>&1 || { echo \"rerun-failed \$phase \$n\"; bad=1; }
      $AGENT -q --budget-ms 600000 apply </tmp/e2e-fp.json | grep -q '\"converged\": true' || { echo \"not-converged \$phase \$n\"; bad=1; }
    fi
    $AGENT -q --budget-ms 600000 teardown --cluster e2e-agent --purge >/dev/null 2>&1 || { echo \"teardown-failed \$phase \$n\"; bad=1; }
    [ \"\$($snap_target)\" = \"\$before\" ] || { echo \"leftover \$phase \$n\"; bad=1; }
    n=\$((n + 1))
  done
  counts=\"\$counts \$phase=\$((n - 1))\"
done
$AGENT -q --budget-ms 600000 teardown --cluster e2e-agent --purge >/dev/null 2>&1
echo \"counts\$counts bad=\$bad\"" 2>&1)
echo "# failpoint loop: $(tail -1 <<<"$out")"
if grep -q 'bad=0' <<<"$out" && ! grep -q 'apply=0' <<<"$out"; then
	ok "failpoint loop on real configfs: every stop re-converges and teardown leaves nothing ($(tail -1 <<<"$out"))"
else
	fail "failpoint loop on real configfs: $out"
fi
check "lab1 configfs is as it was before the whole scenario" "$before1" "$(lab_ssh 1 "$snap_target")"

tap_done
