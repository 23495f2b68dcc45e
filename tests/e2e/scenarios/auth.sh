#!/bin/bash
# SPDX-License-Identifier: MIT
# images: 6.1 6.12
#
# DH-HMAC-CHAP (issue 9) with llmnet-agent alone, lab1 the target and lab2
# the initiator, over TCP, ffdhe2048 and one I/O queue (every queue runs
# its own DH exchange under emulation):
#  - 6.12: lab1's host entry gets hash, group and secret, kept in the node
#    key store (0700/0600); a connect with a wrong secret and one with none
#    are refused by the kernel (its messages are shown); the right secret
#    connects, mounts, and I/O works; rotation re-keys the host entry and
#    the live controller (the mount stays, I/O goes on) and a fresh connect
#    with the old secret is refused; bidirectional with a wrong controller
#    secret is refused by the initiator; teardown wipes the key store.
#    No secret is ever in an answer. NVMe/TCP TLS (tls: required): lab1's
#    port takes TLS 1.3 only and its .nvme keyring holds lab2's PSK; a
#    plain connect is refused; the TLS connect (tlshd on both ends) mounts
#    and does I/O; a capture on the lab bridge shows the plain attempt's
#    ICReq in clear and the TLS connect starting with a TLS record, never a
#    plaintext NVMe/TCP PDU; teardown takes the keys out of both keyrings.
#    Then the controller: a spec with
#    dhchap, llmnet keys, one apply that keys lab1's host entry and connects
#    lab2 with the key file's secret, and teardown --purge.
#  - 6.1 (no NVME_TARGET_AUTH): the target fails with a clear message,
#    nothing is exported, no secret is stored.
# Run through tests/e2e/run.sh (it takes the lab lock).
set -uo pipefail
. "$(dirname "$0")/../../lab/lib.sh"
. "$(dirname "$0")/../../lib/tap.sh"
tap_init auth
cd "$LAB_REPO" || exit 1

AGENT=/usr/local/lib/llmnet/llmnet-agent
build=${BUILD:-build}
[ -x "$build/llmnet-agent" ] || { fail "no $build/llmnet-agent: run make first"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CL=e2e-auth
NQN=nqn.2024-04.io.llmnet:e2e.auth
MNT=/mnt/llmnet-e2e-auth
STORE=/etc/llmnet/keys/$CL

json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
agent() { local i=$1; shift; lab_ssh "$i" "$AGENT -q --budget-ms 600000 $*"; }
# a fresh DHHC-1 secret (transform 00, 32 random bytes and their CRC-32)
secret() {
	python3 -c 'import base64,os,struct,zlib; k=os.urandom(32)
print("DHHC-1:00:" + base64.b64encode(k + struct.pack("<I", zlib.crc32(k))).decode() + ":")'
}
# the change of KIND in answer FILE: "action" or "action error"
change_of() {
	json "$1" "' '.join(c['action'] + (' error' if 'error' in c else '') for c in d['changes'] if c['kind'] == '$2')"
}
# no_secret FILE...: none of the secrets made here is in any FILE
no_secret() {
	local s
	# -e: a PSK's slice starts with '-' (NVMeTLSkey-1:...)
	for s in "${secrets[@]}"; do grep -qF -e "${s:10:40}" "$@" && return 1; done
	return 0
}
# a fresh NVMe TLS PSK in the interchange format (hash 01, 32 random bytes
# and their CRC-32), as nvme-cli's gen-tls-key writes it
tls_psk() {
	python3 -c 'import base64,os,struct,zlib; k=os.urandom(32)
print("NVMeTLSkey-1:01:" + base64.b64encode(k + struct.pack("<I", zlib.crc32(k))).decode() + ":")'
}
# the kernel's authentication messages on guest I since mark M
kmsg() { lab_ssh "$1" "dmesg | tail -n +$(($2 + 1)) | grep -iE 'auth|dhchap|dh-hmac' | tail -4"; }
kmark() { lab_ssh "$1" 'dmesg | wc -l'; }

for i in 1 2; do
	lab_push_agent "$i" "$build/llmnet-agent" "$AGENT" || { fail "cannot push the agent to lab$i"; exit 1; }
done
snap_target='find /sys/kernel/config -mindepth 1 2>/dev/null | sort'
before1=$(lab_ssh 1 "$snap_target")
hostnqn=$(lab_ssh 2 'cat /etc/nvme/hostnqn')
case $hostnqn in nqn.*) ok "lab2's host NQN is $hostnqn" ;; *) fail "lab2 has no host NQN"; tap_done; exit 1 ;; esac
tip=$(lab_fabric_ip 1)
K1=$(secret) K2=$(secret) KW=$(secret) KC=$(secret) KCW=$(secret) P1=$(tls_psk)
secrets=("$K1" "$K2" "$KW" "$KC" "$KCW" "$P1")

target_req() { # KEY [CTRL_KEY]
	local ctrl=''
	[ -n "${2:-}" ] && ctrl=", \"ctrl_key\": \"$2\""
	cat <<JSON
{"protocol": 1, "cluster": "$CL", "targets": [{
  "nqn": "$NQN", "transport": "tcp", "address": "$tip", "service": 4420,
  "hosts": ["$hostnqn"],
  "namespaces": [{"nsid": 1, "file": "/var/lib/nvmet/e2e/auth.img", "size": 33554432}],
  "dhchap": {"hash": "sha256", "dhgroup": "ffdhe2048",
             "keys": [{"host": "$hostnqn", "key": "$1"$ctrl}]}}]}
JSON
}
init_req() { # [SECRET] [MOUNT]
	local d='' m=''
	[ -n "${1:-}" ] && d=", \"dhchap\": {\"secret\": \"$1\"}"
	[ -n "${2:-}" ] && m=", \"mount\": {\"path\": \"$MNT\", \"fs\": \"ext4\", \"format\": \"if-blank\"}"
	cat <<JSON
{"protocol": 1, "cluster": "$CL", "initiators": [{
  "target": "$NQN", "transport": "tcp", "address": "$tip", "service": 4420,
  "queues": {"nr_io_queues": 1}$d$m}]}
JSON
}
connected() { lab_ssh 2 "grep -lx '$NQN' /sys/class/nvme/nvme*/subsysnqn 2>/dev/null | wc -l"; }
teardown2() { agent 2 teardown --cluster "$CL" </dev/null >"$tmp/d2.json"; }

target_req "$K1" >"$tmp/t1.json"
agent 1 apply <"$tmp/t1.json" >"$tmp/a1.json"
rc=$?
if [ "$LAB_KERNEL" = 6.1 ]; then
	check "6.1: the keyed target fails (exit 1)" 1 "$rc"
	if grep -q NVME_TARGET_AUTH "$tmp/a1.json" && grep -q "not exported" "$tmp/a1.json"; then
		ok "6.1: a clear refusal: $(json "$tmp/a1.json" "[c['error'] for c in d['changes'] if c['kind'] == 'nvmet_subsystem'][0]")"
	else
		fail "6.1: no clear refusal: $(cat "$tmp/a1.json")"
	fi
	check_cmd "6.1: no secret in the answer" no_secret "$tmp/a1.json"
	check "6.1: nothing exported (no subsystem, no port link)" "" \
		"$(lab_ssh 1 "ls -d /sys/kernel/config/nvmet/subsystems/$NQN /sys/kernel/config/nvmet/ports/*/subsystems/$NQN 2>/dev/null")"
	check "6.1: no secret stored on lab1" "" "$(lab_ssh 1 "ls -A $STORE 2>/dev/null")"
	agent 1 teardown --cluster "$CL" --purge </dev/null >/dev/null
	check "6.1: lab1 configfs is as it was before" "$before1" "$(lab_ssh 1 "$snap_target")"
	tap_done
	exit
fi

# --- 6.12: the target ------------------------------------------------------
check "target: apply exits 0" 0 "$rc"
check "target: nvmet_host_key created" create "$(change_of "$tmp/a1.json" nvmet_host_key)"
check_cmd "target: no secret in the answer" no_secret "$tmp/a1.json"
h=/sys/kernel/config/nvmet/hosts/$hostnqn
check "target: host entry hash and group" "hmac(sha256) ffdhe2048" \
	"$(lab_ssh 1 "echo \$(cat $h/dhchap_hash) \$(cat $h/dhchap_dhgroup)")"
# compared inside the guest: the secret never goes through the TAP output
printf '%s\n' "$K1" >"$tmp/k1"
lab_put 1 "$tmp/k1" /run/e2e-k1
# (through a pipe: configfs files say 4096 bytes, and cmp -s trusts sizes)
check "target: the host entry holds the secret" same \
	"$(lab_ssh 1 "cat $h/dhchap_key | cmp -s /run/e2e-k1 - && echo same")"
check "target: the node key store holds the secret" same \
	"$(lab_ssh 1 "cmp -s /run/e2e-k1 $STORE/host-$hostnqn.key && echo same; rm -f /run/e2e-k1")"
check "target: key store modes (dir 700, file 600)" "700 600" \
	"$(lab_ssh 1 "stat -c %a $STORE $STORE/host-$hostnqn.key" | tr '\n' ' ' | sed 's/ $//')"
check "target: the state file holds no secret" 0 \
	"$(lab_ssh 1 "grep -c 'DHHC-1' /var/lib/llmnet/state.json")"
agent 1 apply <"$tmp/t1.json" >"$tmp/a1r.json"
check "target: apply again changes nothing" 0 \
	"$(json "$tmp/a1r.json" 'd["summary"]["create"]+d["summary"]["change"]+d["summary"]["remove"]')"

# --- refused by the kernel: a wrong secret, and none ------------------------
m1=$(kmark 1) m2=$(kmark 2)
init_req "$KW" >"$tmp/iw.json"
agent 2 apply <"$tmp/iw.json" >"$tmp/bw.json"
check "wrong secret: lab2 apply fails (exit 1)" 1 "$?"
check "wrong secret: the connection is refused" "create error" "$(change_of "$tmp/bw.json" nvme_connection)"
check "wrong secret: no controller" 0 "$(connected)"
check_cmd "wrong secret: no secret in the answer" no_secret "$tmp/bw.json"
echo "# wrong secret: agent: $(json "$tmp/bw.json" "[c['error'] for c in d['changes'] if c['kind'] == 'nvme_connection'][0]")"
kw2=$(kmsg 2 "$m2") kw1=$(kmsg 1 "$m1")
printf '# wrong secret: lab2 kernel: %s\n# wrong secret: lab1 kernel: %s\n' "$kw2" "$kw1"
case $kw2$kw1 in *[Aa]uth*) ok "wrong secret: the kernel logged the authentication failure" ;;
	*) fail "wrong secret: no authentication message from the kernel" ;; esac
teardown2
m1=$(kmark 1) m2=$(kmark 2)
init_req >"$tmp/in.json"
agent 2 apply <"$tmp/in.json" >"$tmp/bn.json"
check "no secret: lab2 apply fails (exit 1)" 1 "$?"
check "no secret: no controller" 0 "$(connected)"
kn2=$(kmsg 2 "$m2") kn1=$(kmsg 1 "$m1")
printf '# no secret: lab2 kernel: %s\n# no secret: lab1 kernel: %s\n' "$kn2" "$kn1"
case $kn2$kn1 in *[Aa]uth*) ok "no secret: the kernel logged the refusal" ;;
	*) fail "no secret: no authentication message from the kernel" ;; esac
teardown2

# --- the right secret: connect, mount, I/O ---------------------------------
init_req "$K1" mount >"$tmp/i1.json"
t0=$(date +%s)
agent 2 apply <"$tmp/i1.json" >"$tmp/b1.json"
check "right secret: lab2 apply exits 0 ($(($(date +%s) - t0)) s)" 0 "$?"
check "right secret: one controller" 1 "$(connected)"
check_cmd "right secret: no secret in the answer" no_secret "$tmp/b1.json"
ctrl=$(lab_ssh 2 "basename \$(dirname \$(grep -lx '$NQN' /sys/class/nvme/nvme*/subsysnqn))")
check "right secret: $ctrl authenticated (dhchap_secret set)" yes \
	"$(lab_ssh 2 "[ \"\$(cat /sys/class/nvme/$ctrl/dhchap_secret)\" != none ] && echo yes")"
check "right secret: lab2's key store holds the secret, 600" 600 \
	"$(lab_ssh 2 "stat -c %a $STORE/target-$NQN.key")"
# io NAME: write 2 MiB through the mount, drop the caches, read it back
io() { lab_ssh 2 "dd if=/dev/urandom of=/run/e2e-io bs=1M count=2 status=none &&
	cp /run/e2e-io $MNT/$1 && sync && echo 3 >/proc/sys/vm/drop_caches &&
	cmp /run/e2e-io $MNT/$1 && sha256sum <$MNT/$1 | cut -c1-16; rm -f /run/e2e-io"; }
sum=$(io a)
case $sum in [0-9a-f]*) ok "right secret: I/O on the mount ($sum)" ;; *) fail "right secret: I/O failed: $sum" ;; esac
agent 2 apply <"$tmp/i1.json" >"$tmp/b1r.json"
check "right secret: apply again changes nothing" 0 \
	"$(json "$tmp/b1r.json" 'd["summary"]["create"]+d["summary"]["change"]+d["summary"]["remove"]')"

# --- rotation in place -----------------------------------------------------
target_req "$K2" >"$tmp/t2.json"
agent 1 plan <"$tmp/t2.json" >"$tmp/p2.json"
check "rotation: plan shows ~ nvmet_host_key" change "$(change_of "$tmp/p2.json" nvmet_host_key)"
agent 1 apply <"$tmp/t2.json" >"$tmp/a2.json"
check "rotation: lab1 re-keys the host entry" change "$(change_of "$tmp/a2.json" nvmet_host_key)"
init_req "$K2" mount >"$tmp/i2.json"
agent 2 apply <"$tmp/i2.json" >"$tmp/b2.json"
check "rotation: lab2 re-keys the live controller" change "$(change_of "$tmp/b2.json" nvme_dhchap_secret)"
check_cmd "rotation: no secret in the answers" no_secret "$tmp/a2.json" "$tmp/b2.json" "$tmp/p2.json"
sleep 2
check "rotation: the controller is still live" live "$(lab_ssh 2 "cat /sys/class/nvme/$ctrl/state")"
check "rotation: the mount stays" 1 "$(lab_ssh 2 "findmnt -n $MNT | wc -l")"
sum=$(io b)
case $sum in [0-9a-f]*) ok "rotation: I/O goes on ($sum)" ;; *) fail "rotation: I/O failed: $sum" ;; esac
# a fresh connect with the old secret, by hand (nvme-cli; the secret is the
# test's own, so its command line may hold it)
m1=$(kmark 1) m2=$(kmark 2)
out=$(lab_ssh 2 "nvme connect -t tcp -a $tip -s 4420 -n $NQN -q $hostnqn -i 1 -D --dhchap-secret='$K1' 2>&1")
check "rotation: a fresh connect with the old secret is refused" 1 \
	"$([ "$(connected)" = 1 ] && echo 1 || echo "$(connected) controllers")"
printf '# old secret: nvme-cli: %s\n# old secret: lab2 kernel: %s\n' "$(echo "$out" | tail -1)" "$(kmsg 2 "$m2")"

# --- bidirectional: a wrong controller secret is refused by the initiator -----
target_req "$K2" "$KC" >"$tmp/t3.json"
agent 1 apply <"$tmp/t3.json" >"$tmp/a3.json"
check "bidirectional: lab1 sets the controller secret" change "$(change_of "$tmp/a3.json" nvmet_host_key)"
m2=$(kmark 2)
out=$(lab_ssh 2 "nvme connect -t tcp -a $tip -s 4420 -n $NQN -q $hostnqn -i 1 -D --dhchap-secret='$K2' --dhchap-ctrl-secret='$KCW' 2>&1")
check "bidirectional: a wrong controller secret is refused" 1 \
	"$([ "$(connected)" = 1 ] && echo 1 || echo "$(connected) controllers")"
printf '# wrong controller secret: nvme-cli: %s\n# wrong controller secret: lab2 kernel: %s\n' \
	"$(echo "$out" | tail -1)" "$(kmsg 2 "$m2")"
out=$(lab_ssh 2 "nvme connect -t tcp -a $tip -s 4420 -n $NQN -q $hostnqn -i 1 -D --dhchap-secret='$K2' --dhchap-ctrl-secret='$KC' 2>&1")
check "bidirectional: the right controller secret connects" 2 "$(connected)"
lab_ssh 2 "for c in /sys/class/nvme/nvme*; do [ \"\$(cat \$c/subsysnqn)\" = '$NQN' ] && [ \${c##*/} != $ctrl ] && echo 1 >\$c/delete_controller; done; true"

# --- teardown --------------------------------------------------------------
teardown2
check "teardown: lab2 exits 0" 0 "$?"
agent 1 teardown --cluster "$CL" --purge </dev/null >"$tmp/d1.json"
check "teardown: lab1 exits 0" 0 "$?"
check "teardown: no controller left" 0 "$(connected)"
check "teardown: both key stores wiped" "" "$(lab_ssh 1 "ls -d $STORE 2>/dev/null"; lab_ssh 2 "ls -d $STORE 2>/dev/null")"
check_cmd "teardown: no secret in the answers" no_secret "$tmp/d1.json" "$tmp/d2.json"
check "lab1 configfs is as it was before" "$before1" "$(lab_ssh 1 "$snap_target")"

# --- NVMe/TCP TLS ----------------------------------------------------------
# lab1 exports TNQN on its own port, tls required; lab2 connects with the
# same DH-HMAC-CHAP secret and its PSK. The agent inserts the TLS PSK into
# each end's .nvme keyring; tlshd (ktls-utils, enabled in the 6.12 image)
# makes the handshake.
TNQN=nqn.2024-04.io.llmnet:e2e.tls
TPORT=4422
tls_target_req() {
	cat <<JSON
{"protocol": 3, "cluster": "$CL", "targets": [{
  "nqn": "$TNQN", "transport": "tcp", "address": "$tip", "service": $TPORT, "tls": "required",
  "hosts": ["$hostnqn"],
  "namespaces": [{"nsid": 1, "file": "/var/lib/nvmet/e2e/tls.img", "size": 33554432}],
  "dhchap": {"hash": "sha256", "dhgroup": "ffdhe2048",
             "keys": [{"host": "$hostnqn", "key": "$K1", "psk": "$P1"}]}}]}
JSON
}
tls_init_req() { # tls|plain
	local t='' p=''
	[ "$1" = tls ] && t=', "tls": "required"' p=", \"psk\": \"$P1\""
	cat <<JSON
{"protocol": 3, "cluster": "$CL", "initiators": [{
  "target": "$TNQN", "transport": "tcp", "address": "$tip", "service": $TPORT$t,
  "queues": {"nr_io_queues": 1}, "dhchap": {"secret": "$K1"$p},
  "mount": {"path": "$MNT", "fs": "ext4", "format": "if-blank"}}]}
JSON
}
tconnected() { lab_ssh 2 "grep -lx '$TNQN' /sys/class/nvme/nvme*/subsysnqn 2>/dev/null | wc -l"; }
for i in 1 2; do
	check "tls: tlshd is active on lab$i" active "$(lab_ssh "$i" 'systemctl is-active tlshd')"
done
tls_target_req >"$tmp/tt.json"
agent 1 apply <"$tmp/tt.json" >"$tmp/ta.json"
check "tls: lab1 apply exits 0" 0 "$?"
check "tls: lab1 inserts lab2's PSK" create "$(change_of "$tmp/ta.json" tls_psk)"
check_cmd "tls: no secret in the answer" no_secret "$tmp/ta.json"
tp=$(lab_ssh 1 "dirname \$(grep -lx $TPORT /sys/kernel/config/nvmet/ports/*/addr_trsvcid)")
check "tls: lab1's port requires TLS 1.3" "tls1.3 required" \
	"$(lab_ssh 1 "echo \$(cat $tp/addr_tsas) \$(cat $tp/addr_treq)")"
check "tls: lab1's .nvme keyring holds the PSK for (lab2, $TNQN)" 1 \
	"$(lab_ssh 1 "grep -c ' psk .*NVMe0R01 $hostnqn $TNQN: 32\$' /proc/keys")"
check "tls: the state file holds no PSK" 0 "$(lab_ssh 1 "grep -c NVMeTLSkey /var/lib/llmnet/state.json")"
agent 1 apply <"$tmp/tt.json" >"$tmp/tar.json"
check "tls: lab1 apply again changes nothing" 0 \
	"$(json "$tmp/tar.json" 'd["summary"]["create"]+d["summary"]["change"]+d["summary"]["remove"]')"
# the capture covers the plain attempt (its ICReq must show: the capture
# sees plaintext when there is some) and then the TLS connect
ip netns exec "$LAB_NETNS" tests/lab/wirecap "$LAB_BRIDGE" 120 "$TPORT" >"$tmp/cap.json" 2>"$tmp/cap.err" &
cap=$!
sleep 1
m2=$(kmark 2)
tls_init_req plain >"$tmp/tip.json"
agent 2 apply <"$tmp/tip.json" >"$tmp/tbp.json"
check "tls: a plain connect fails (exit 1)" 1 "$?"
check "tls: a plain connect leaves no controller" 0 "$(tconnected)"
echo "# plain connect: lab2 kernel: $(lab_ssh 2 "dmesg | tail -n +$((m2 + 1)) | grep -i nvme | tail -2")"
teardown2
tls_init_req tls >"$tmp/tit.json"
t0=$(date +%s)
agent 2 apply <"$tmp/tit.json" >"$tmp/tbt.json"
check "tls: the TLS connect applies, exit 0 ($(($(date +%s) - t0)) s)" 0 "$?"
check "tls: one controller" 1 "$(tconnected)"
check "tls: lab2 inserts its PSK" create "$(change_of "$tmp/tbt.json" tls_psk)"
check_cmd "tls: no secret in lab2's answers" no_secret "$tmp/tbp.json" "$tmp/tbt.json"
sum=$(io t)
case $sum in [0-9a-f]*) ok "tls: I/O on the mount ($sum)" ;; *) fail "tls: I/O failed: $sum" ;; esac
# again: the live controller's tls_key says TLS, so the connection is as asked
agent 2 apply <"$tmp/tit.json" >"$tmp/tbt2.json"
check "tls: lab2 apply again exits 0" 0 "$?"
check "tls: lab2 apply again changes nothing" 0 \
	"$(json "$tmp/tbt2.json" 'd["summary"]["create"]+d["summary"]["change"]+d["summary"]["remove"]')"
echo "# tls: tlshd on lab2: $(lab_ssh 2 'journalctl -u tlshd -n 1 --no-pager -o cat 2>/dev/null')"
kill -TERM "$cap" 2>/dev/null
wait "$cap"
echo "# capture: $(cat "$tmp/cap.json" "$tmp/cap.err")"
# the verdict: some flow sent a plaintext ICReq (the plain attempt); a later
# flow opened with a TLS handshake record; no flow from the first TLS one
# on carries a plaintext NVMe/TCP PDU header (type 0..9, hlen 8..128) first
verdict=$(python3 - "$tmp/cap.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
fl = d["flows"]
plain = [f for f in fl if f.get("up", "").startswith("000080")]
tls = [f for f in fl if f.get("up", "").startswith("1603")]
def pdu(h): return len(h) >= 6 and int(h[0:2], 16) <= 9 and int(h[4:6], 16) in (8, 24, 72, 128)
first = min((f["order"] for f in tls), default=None)
leak = [f for f in fl if first is not None and f["order"] >= first and (pdu(f.get("up", "")) or pdu(f.get("down", "")))]
print("plain=%d tls=%d leak=%d" % (len(plain), len(tls), len(leak)))
PY
)
case $verdict in
"plain="[1-9]*" tls="[1-9]*" leak=0") ok "tls: on the wire, the plain attempt's ICReq in clear, the TLS connect encrypted ($verdict)" ;;
*) fail "tls: the capture does not show an encrypted connect: $verdict" ;;
esac
teardown2
check "tls: lab2's teardown exits 0" 0 "$?"
agent 1 teardown --cluster "$CL" --purge </dev/null >"$tmp/td1.json"
check "tls: lab1's teardown exits 0" 0 "$?"
check "tls: both keyrings are empty of the cluster's PSKs" 0 \
	"$(( $(lab_ssh 1 "grep -c 'NVMe0R01 $hostnqn $TNQN' /proc/keys") + $(lab_ssh 2 "grep -c 'NVMe0R01 $hostnqn $TNQN' /proc/keys") ))"
check_cmd "tls: no secret in the teardown answers" no_secret "$tmp/td1.json" "$tmp/d2.json"

# --- the controller: spec -> llmnet keys -> one apply keys both ends ----------
# lab1 exports to lab2 with dhchap and tls: required in the spec; the secret
# and the TLS PSK are made by llmnet keys in a 0700 key directory and reach
# both ends in the request.
LLMNET=$PWD/$build/llmnet
export LLMNET_AGENT=$PWD/$build/llmnet-agent LLMNET_STATE_DIR=$tmp/state
CNQN=nqn.2024-04.io.llmnet:e2e.auth-ctl
CMNT=/mnt/llmnet-e2e-auth-ctl
mkdir -m 700 "$tmp/keys"
lab_spec examples/lab.yaml "$tmp/lab.yaml"
{
	sed -n '/^ssh:/,/^$/p' "$tmp/lab.yaml"
	cat <<YAML
version: 1
cluster: e2e-auth-ctl
nodes:
  - { name: lab1, address: $(lab_addr 1), port: 22, rdma: [ { device: rxe0, port: 1, ip: $tip, link_layer: ethernet, mtu: 4096 } ] }
  - { name: lab2, address: $(lab_addr 2), port: 22, rdma: [ { device: rxe0, port: 1, ip: $(lab_fabric_ip 2), link_layer: ethernet, mtu: 4096 } ] }
storage:
  targets:
    - nqn: $CNQN
      node: lab1
      transport: tcp
      service: 4421
      tls: required
      dhchap: { key_dir: $tmp/keys, hash: sha256, dhgroup: ffdhe2048 }
      namespaces:
        - { nsid: 1, file: /var/lib/nvmet/e2e/auth-ctl.img, size: 32MiB }
  initiators:
    - { node: lab2, target: $CNQN, nr_io_queues: 1, mount: { path: $CMNT, fs: ext4, format: if-blank } }
YAML
} >"$tmp/auth.yaml"
"$LLMNET" --no-color keys "$tmp/auth.yaml" >"$tmp/keys.out" 2>&1
check "controller: llmnet keys exits 0" 0 "$?"
check "controller: llmnet keys made lab1/lab2.key, 600" 600 "$(stat -c %a "$tmp/keys/lab1/lab2.key" 2>/dev/null)"
check "controller: llmnet keys made lab1/lab2.psk, 600" 600 "$(stat -c %a "$tmp/keys/lab1/lab2.psk" 2>/dev/null)"
"$LLMNET" --no-color apply "$tmp/auth.yaml" >"$tmp/apply.out" 2>&1
rc=$?
sed 's/^/    /' "$tmp/apply.out"
check "controller: apply exits 0" 0 "$rc"
hn2=$(lab_ssh 2 'cat /etc/nvme/hostnqn')
lab_put 1 "$tmp/keys/lab1/lab2.key" /run/e2e-kc
check "controller: lab1's host entry for lab2 holds the key file's secret" same \
	"$(lab_ssh 1 "cat /sys/kernel/config/nvmet/hosts/$hn2/dhchap_key | cmp -s /run/e2e-kc - && echo same; rm -f /run/e2e-kc")"
cc=$(lab_ssh 2 "basename \$(dirname \$(grep -lx '$CNQN' /sys/class/nvme/nvme*/subsysnqn 2>/dev/null | head -n1) 2>/dev/null) 2>/dev/null")
check "controller: lab2 has a live, authenticated controller" "live yes" \
	"$(lab_ssh 2 "cat /sys/class/nvme/$cc/state; [ \"\$(cat /sys/class/nvme/$cc/dhchap_secret)\" != none ] && echo yes" | tr '\n' ' ' | sed 's/ $//')"
check "controller: lab2 mounted $CMNT" ext4 "$(lab_ssh 2 "findmnt -n -o FSTYPE $CMNT || echo none")"
# the port takes TLS 1.3 only (a plain connect is refused, above), so the
# live controller is a TLS one; both keyrings hold the pair's PSK
cp1=$(lab_ssh 1 "dirname \$(grep -lx 4421 /sys/kernel/config/nvmet/ports/*/addr_trsvcid)")
check "controller: lab1's port 4421 requires TLS 1.3" "tls1.3 required" \
	"$(lab_ssh 1 "echo \$(cat $cp1/addr_tsas) \$(cat $cp1/addr_treq)")"
check "controller: both .nvme keyrings hold the PSK for (lab2, $CNQN)" "1 1" \
	"$(lab_ssh 1 "grep -c 'NVMe0R01 $hn2 $CNQN: 32\$' /proc/keys") $(lab_ssh 2 "grep -c 'NVMe0R01 $hn2 $CNQN: 32\$' /proc/keys")"
check_cmd "controller: no secret in apply's output or the state folder" \
	sh -c '! grep -rqF -e "$(cut -c11-50 "$1")" -e "$(cut -c17-56 "$4")" "$2" "$3"' - \
	"$tmp/keys/lab1/lab2.key" "$tmp/apply.out" "$tmp/state" "$tmp/keys/lab1/lab2.psk"
"$LLMNET" --no-color teardown "$tmp/auth.yaml" --purge >"$tmp/td.out" 2>&1
check "controller: teardown --purge exits 0" 0 "$?"
check "controller: nothing of the cluster left on lab1" "" \
	"$(lab_ssh 1 "ls -d /sys/kernel/config/nvmet/subsystems/$CNQN /etc/llmnet/keys/e2e-auth-ctl 2>/dev/null")"
check "controller: teardown took the PSK out of both keyrings" "0 0" \
	"$(lab_ssh 1 "grep -c 'NVMe0R01 $hn2 $CNQN' /proc/keys") $(lab_ssh 2 "grep -c 'NVMe0R01 $hn2 $CNQN' /proc/keys")"
tap_done
