# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh after hostile.sh (its three nodes with
# rxe0 and a /usr/bin overlay, ends_nodes): the bandwidth stage's message
# rate (issue 27 pt 3) over real sshd and agents. A stand-in ib_write_bw
# prints perftest 4.5's result row for the size it was given (-s): 0.21
# Gb/s, and at sizes below 4 KiB 1 Mpps, but 0.05 Mpps between n1 and n2
# (a link that moves large messages and not small ones). With min_msg_rate
# each pair runs twice, the second at 64 B; n1-n2 fails on its rate and is
# the one link named, the other pairs pass. The control: the same cluster
# without min_msg_rate runs each pair once and passes.

# The stand-in: the client prints its row and leaves it for its server,
# which prints the same row (as ib_write_bw's server prints its client's).
msgrate_standin() {
	local dir=$1 i=$2 st=$C/ends
	cat > "$dir/ib_write_bw" <<SH
#!/bin/bash
# stand-in ib_write_bw of node n$i (tests/cluster/msgrate.sh)
PATH=/usr/sbin:/usr/bin:/sbin:/bin
me=$i st=$st
SH
	cat >> "$dir/ib_write_bw" <<'SH'
if [ "$1" = --help ]; then
	echo "  -R, --rdma_cm  Connect QPs with rdma_cm and run test on those QPs"
	exit 1
fi
last=${!#}
while [ $# -gt 0 ]; do
	case $1 in -p) port=$2; shift ;; -s) size=$2; shift ;; esac
	shift
done
head='---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]'
if [[ $last =~ ^[0-9]+\.[0-9]+\.[0-9]+\.([0-9]+)$ ]]; then
	peer=$((BASH_REMATCH[1] - 10))
	mpps=0.000402
	if [ "$size" -lt 4096 ]; then
		mpps=1.000000
		[ $((me + peer)) -eq 3 ] && mpps=0.050000	# n1-n2
	fi
	row=$(printf ' %-7s    1000             0.22               0.21   \t\t   %s' "$size" "$mpps")
	echo "$me client -s $size" >> "$st/ran"
	printf '%s\n' "$row" > "$st/row.$port.tmp" && mv "$st/row.$port.tmp" "$st/row.$port"
	printf '%s\n%s\n' "$head" "$row"
	exit 0
fi
for _ in $(seq 150); do [ -e "$st/row.$port" ] && break; sleep 0.1; done
printf '%s\n' "$head"
cat "$st/row.$port" && rm -f "$st/row.$port"
SH
	chmod 0755 "$dir/ib_write_bw"
}

scenario_msg_rate() {
	local i
	new_cluster msgrate || { fail "cluster up"; return; }
	ends_nodes || return
	# the overlay is the node's /usr/bin as mounted: replace the tool in it
	for i in 1 2 3; do msgrate_standin "$C/node$i/usrbin" "$i"; done
	ends_spec > "$C/plain.yaml"
	llmnet validate "$C/plain.yaml" --attempts 1 --report "$C/plain.json"
	check_cmd "control, no min_msg_rate: validate exits 0" rc_is 0
	check "control: each pair runs once, at 1 MiB" 3 "$(grep -c ' client -s 1048576$' "$C/ends/ran")"
	check "control: no message-rate run" 0 "$(grep -c ' client -s 64$' "$C/ends/ran")"
	rm -f "$C/ends/ran"
	sed 's/min: 0.1Gb\/s,/min: 0.1Gb\/s, min_msg_rate: 0.5,/' "$C/plain.yaml" > "$C/rate.yaml"
	llmnet validate "$C/rate.yaml" --attempts 1 --report "$C/rate.json"
	check_cmd "n1-n2 below min_msg_rate: validate exits 1" rc_is 1
	check "each pair's message-rate run at 64 B (and the retests')" 1 \
		"$(grep -c ' client -s 64$' "$C/ends/ran" | awk '{print ($1 >= 3)}')"
	ends_checks "$C/rate.json" > "$C/rate.checks"
	check_cmd "n1-n2 fails on its message rate, its bandwidth passing" \
		grep -qE '^n[12]-n[12] fail 0.21 message rate 0.05 Mpps at 64 B is below 0.5 Mpps$' "$C/rate.checks"
	check "only that pair fails" 1 "$(grep -cE '^n[0-9]-n[0-9] fail' "$C/rate.checks")"
	check_cmd "the link n1-n2 is named with its ports" \
		grep -qE 'bad link n[12]/rxe0-n[12]/rxe0 \(bandwidth\)' "$C/out"
	check_cmd "the JSON report carries the rate and its threshold" python3 -c 'import json, sys
c = [c for c in json.load(open(sys.argv[1]))["checks"] if c["stage"] == "bandwidth" and c.get("pair") and c["status"] == "pass"]
sys.exit(0 if c and all(k["msg_rate_mpps"] == 1.0 and k["min_msg_rate_mpps"] == 0.5 for k in c) else 1)' "$C/rate.json"
}
