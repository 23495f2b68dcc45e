#!/bin/bash
# SPDX-License-Identifier: MIT
# images: 6.1 6.12
#
# llmnet validate on the QEMU lab (run by tests/e2e/run.sh against a lab
# that is up; 3 or 4 guests). Every pairwise stage runs with
# concurrent_rails: true (a guest's two rails in the same rounds, each port
# over a session lane of its own). Asserts on llmnet's JSON report:
#  1. healthy: after apply, devices, rping, bandwidth, latency, io and mpi
#     pass, devices checked both rails (rxe0, rxe1) of every guest, and
#     rping, bandwidth and latency passed every ring pair on both rails
#     (rxe0-rxe0, rxe1-rxe1, in the rounds of one rail); every latency
#     pair reports perftest's typical, average and 99th percentile
#     (microseconds) in the JSON, JUnit and metrics, every pairwise
#     stage reports every port's counter deltas, and the latency stage's
#     seconds are printed (a figure, not a check);
#  2. twin run (6.1 only, where the netem run cannot go: the threshold's
#     failing path on real perftest output; on 6.12 the netem run proves a
#     threshold verdict and the unit tests judge captured output): bandwidth
#     alone with a threshold 10x the best measured value fails, and every
#     bandwidth pair (on each rail) is named as failing;
#  3. faults at once (rping and bandwidth), each a tc drop of RoCE v2
#     (UDP 4791: data and the RDMA CM's MADs) on a fabric interface, which
#     a probe bound to its port cannot go around (a blackhole route could
#     not cut a bound client: issue 27): a bad node (guest 3 drops on both
#     fabrics, its rxe0 still ACTIVE) and a bad link (guest 1's fabric0
#     drops to and from guest 2's fabric0 address only: rail 0); with 4
#     guests also a bad port (guest 4's fabric1 drops). With 4 guests the
#     verdicts must name exactly lab3, lab4/rxe1 and lab1/rxe0-lab2/rxe0,
#     and lab4's rxe0 pair with lab1 passes. With 3 guests (no bad port)
#     every rail-0 pair fails, which a bad node plus a link and two bad
#     nodes explain equally: the verdicts must then be "undetermined" and
#     blame no node or link (never a wrong one);
#  4. netem (6.12 only: 6.1 has no sch_netem; 4 guests), the latency stage
#     alone, one rail a round: `tc netem delay 200ms` on lab2's fabric0
#     (rail 0) and `netem loss 20%` on lab4's fabric1 (rail 1), the loss on
#     RoCE data only (a u32 filter keeps QP1, the RDMA CM's, out of it),
#     with max_typical 50ms and max_errors 15: the threshold names exactly
#     lab2/rxe0 (a delay of D adds about D/2 to perftest's figures), the
#     counters name exactly lab4/rxe1 (over max_errors with its two
#     partners) beside the delayed lab2/rxe0 (its retransmits rise too),
#     and no node and no link is named. Each rail has one faulty port, so
#     every other port has one faulty partner at most.
#  5. shared subnet (both images): two rails of every guest in one IP
#     subnet on one L2 (arp_ignore=1, arp_announce=2, a source rule per
#     address), lab2's fabric1 dropping RoCE: rping names exactly
#     lab2/rxe1, where an unbound client on lab2 would have passed.
set -uo pipefail
. "$(dirname "$0")/../../lab/lib.sh"
. "$(dirname "$0")/../../lib/tap.sh"
tap_init validate
cd "$LAB_REPO"

N=$LAB_N
LLMNET=${BUILD:-build}/llmnet
# The specs, outputs and reports of this run: kept for a look after a
# failure, replaced by the next run (never left behind in /tmp).
mkdir -p "${BUILD:-build}/check/e2e"
W=$(cd "${BUILD:-build}/check/e2e" && pwd)/validate.run
rm -rf "$W" && mkdir -p "$W" || { fail "cannot make '$W'"; exit 1; }
[ "$N" -ge 3 ] || { fail "the validate scenario needs 3 or more guests, the lab has $N"; exit 1; }
# A state folder of its own: host identities are pinned per cluster name,
# and a llmnet-lab applied elsewhere (another lab, another kernel) must not
# stand for these guests.
export LLMNET_STATE_DIR=$W/state

# The lab spec for N guests: examples/lab.yaml (3 guests) pointed at this
# lab folder's key and known_hosts, a lab4 added for 4; rping bounded at
# 20 s so failing pairs cost little; a latency stage after bandwidth (100
# round trips a pair: ~14 ms each under TCG; thresholds far above that,
# which prove the judging path, not speed). Both rails of every guest are
# tested (rails by position), in the same rounds (concurrent_rails).
lab_spec examples/lab.yaml "$W/base.yaml"
spec() {
	python3 - "$N" "$1" "$W/base.yaml" <<'PY'
import re, sys
n, bw = int(sys.argv[1]), sys.argv[2]
s = open(sys.argv[3]).read()
if n >= 4:
    # lab4: lab3's node entry (every rail) with guest 4's addresses
    m = re.search(r"^  - name: lab3\n(?:    .*\n)+", s, re.M)
    lab4 = m.group(0).replace("lab3", "lab4").replace(".13,", ".14,").replace(".13\n", ".14\n")
    s = s[:m.end()] + lab4 + s[m.end():]
t = s.replace("pairs: ring, timeout: 60s }", "pairs: ring, concurrent_rails: true, timeout: 20s }")
assert t != s, "the lab spec's rping stage changed"
s = t
t = s.replace("pairs: ring, min: 4Mb/s,", "pairs: ring, concurrent_rails: true, min: 4Mb/s,")
assert t != s, "the lab spec's bandwidth stage changed"
s = t
bwline = re.search(r"^  - \{ stage: bandwidth, .*\}\n", s, re.M)
assert bwline, "the lab spec's bandwidth stage changed"
if bw == "netem":
    # the netem run: the latency stage alone, 50 round trips a pair (each
    # at least 200 ms through the delayed port), its counters judged;
    # rails one at a time (concurrent_rails: false): under TCG the lossy
    # rail's retransmits slowed its nodes enough that their other rail's
    # pair, run beside it, retransmitted too (docs/validation.md)
    lat = ("  - { stage: latency, tool: ib_write_lat, iterations: 50, pairs: ring, "
           "concurrent_rails: false, max_typical: 50ms, max_errors: 15, timeout: 60s }\n")
else:
    lat = ("  - { stage: latency, tool: ib_write_lat, iterations: 100, pairs: ring, "
           "concurrent_rails: true, max_typical: 1s, max_p99: 2s, timeout: 30s }\n")
s = s[:bwline.end()] + lat + s[bwline.end():]
if bw and bw != "netem":
    s = re.sub(r"min: 4Mb/s, timeout: 120s", "min: %s, timeout: 120s" % bw, s)
sys.stdout.write(s)
PY
}
# jq-free JSON queries
# P: the pair checks (a pairwise stage also has a check per port, its
# error counters, scope "node")
q() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); P=[c for c in r['checks'] if c['scope']=='pair']; print($2)" "$1"; }

spec "" > "$W/lab.yaml"
"$LLMNET" --no-color apply "$W/lab.yaml" > "$W/apply.out" 2>&1
check "apply converges the lab" 0 $?

# --- 1. healthy -------------------------------------------------------------
"$LLMNET" --no-color validate "$W/lab.yaml" --report "$W/healthy.json" --html "$W/healthy.html" \
	--junit "$W/healthy.xml" --metrics "$W/healthy.prom" > "$W/healthy.out" 2>&1
rc=$?
cat "$W/healthy.out"
check "healthy lab: validate exits 0" 0 "$rc"
for s in devices rping bandwidth latency io mpi; do
	check "healthy lab: $s passes" pass \
		"$(q "$W/healthy.json" "[x['status'] for x in r['stages'] if x['stage']=='$s'][0]" 2>&1)"
done
# both rails of every guest: the devices stage checks each declared rail
for i in $(seq 1 "$N"); do
	check "healthy lab: devices passes lab$i's rails rxe0 and rxe1 on their own addresses" \
		"rxe0/1 pass 10.77.0.$((10 + i)) rxe1/1 pass 10.78.0.$((10 + i))" \
		"$(q "$W/healthy.json" "' '.join(c['name'] + ' ' + c['status'] + ' ' + c['reason'].split()[-1] for c in r['checks'] if c['stage']=='devices' and c['node']=='lab$i' and c['name'].startswith('rxe'))")"
done
# every ring pair on both rails, each passing: "lab1-lab2:rxe0/rxe0:pass ..."
want=$(python3 -c "
n = $N
print(' '.join(sorted('-'.join(sorted(['lab%d' % i, 'lab%d' % (i % n + 1)])) + ':' + d + '/' + d + ':pass'
                      for i in range(1, n + 1) for d in ('rxe0', 'rxe1'))))")
for s in rping bandwidth latency; do
	check "healthy lab: $s passes every ring pair on both rails" "$want" \
		"$(q "$W/healthy.json" "' '.join(sorted('-'.join(sorted(c['pair'])) + ':' + '/'.join(c['ports'] if c['pair'][0] < c['pair'][1] else c['ports'][::-1]) + ':' + c['status'] for c in P if c['stage']=='$s' and not c['retest']))")"
done
for s in rping bandwidth latency; do
	# the schedule's rounds, from the progress line: the JSON's count also
	# holds the diagnosis' retest rounds when a loaded lab fails a first try
	check "healthy lab: $s's two rails share a ring's rounds (concurrent_rails)" \
		"$([ "$N" = 3 ] && echo 3 || echo 2)" \
		"$(sed -n "s|^validate: $s round 1/\([0-9]*\):.*|\1|p" "$W/healthy.out")"
	# read on 6.12 (docs/validation.md); 6.1's rxe is not known to be
	# recognised by the agent's driver table yet
	[ "$LAB_KERNEL" = 6.12 ] &&
		check "healthy lab: $s reports the counter deltas of every port" "$((2 * N))" \
			"$(q "$W/healthy.json" "len([c for c in r['checks'] if c['stage']=='$s' and c.get('counters') and c['counters']['deltas']['errors']])")"
done
check "healthy lab: no culprit" "[] [] []" \
	"$(q "$W/healthy.json" "r['culprits']['nodes'], r['culprits']['ports'], r['culprits']['links']" | tr -d '(),')"
# latency: perftest's three figures per pair, in microseconds, in order
npairs=$((2 * N))
check "healthy lab: every latency pair reports typical <= p99 and an average (us)" "$npairs" \
	"$(q "$W/healthy.json" "len([c for c in P if c['stage']=='latency' and not c['retest'] and c['unit']=='us' and 0 < c['latency']['typical_us'] <= c['latency']['p99_us'] and c['latency']['avg_us'] > 0 and c['value']==c['latency']['typical_us'] and c['latency']['max_typical_us']==1000000 and c['latency']['max_p99_us']==2000000])")"
check "healthy lab: the metrics carry 3 latency figures per pair" "$((3 * npairs))" \
	"$(grep -c '^llmnet_validation_pair_latency_us{.*stage="latency"' "$W/healthy.prom")"
check "healthy lab: every latency testcase in the JUnit says its figures" "$npairs" \
	"$(grep -c '<system-out>typical [0-9.]* us, avg [0-9.]* us, p99 [0-9.]* us (max typical 1000000 us, max p99 2000000 us)' "$W/healthy.xml")"
lat_s=$(q "$W/healthy.json" "[x['seconds'] for x in r['stages'] if x['stage']=='latency'][0]")
echo "# latency stage: $lat_s s; typical us per pair: $(q "$W/healthy.json" "' '.join('%.0f' % c['latency']['typical_us'] for c in P if c['stage']=='latency' and not c['retest'])")"
best=$(q "$W/healthy.json" "max(c['value'] for c in P if c['stage']=='bandwidth' and c['value'])")
echo "# best bandwidth measured: $best Gb/s"

# --- 2. twin run: 10x the best measured bandwidth (6.1) ----------------------
# bandwidth alone: without rping in the run nothing gates its pairs
echo "# time: healthy run ${SECONDS} s since the scenario started"
if [ "$LAB_KERNEL" != 6.12 ]; then
	thr=$(python3 -c "print('%dMb/s' % (float('$best') * 1000 * 10 + 1))")
	spec "$thr" > "$W/twin.yaml"
	"$LLMNET" --no-color validate "$W/twin.yaml" --stages bandwidth --report "$W/twin.json" \
		> "$W/twin.out" 2>&1
	rc=$?
	cat "$W/twin.out"
	check "twin run at $thr: validate exits 1" 1 "$rc"
	pairs=$(q "$W/twin.json" "len([c for c in P if c['stage']=='bandwidth' and not c['retest']])")
	failed=$(q "$W/twin.json" "len([c for c in P if c['stage']=='bandwidth' and not c['retest'] and c['status']=='fail' and 'is below' in (c['reason'] or '')])")
	check "twin run: every bandwidth pair fails below the threshold" "$pairs" "$failed"
	for c in $(q "$W/twin.json" "' '.join('-'.join(p + '/' + d for p, d in zip(c['pair'], c['ports'])) for c in P if c['stage']=='bandwidth' and not c['retest'])"); do
		if grep -q "bandwidth $c fail: .* is below" "$W/twin.out"; then
			ok "twin run names pair $c"
		else
			fail "twin run does not name pair $c"
		fi
	done
fi
echo "# time: twin run done ${SECONDS} s since the scenario started"

# --- 3. faults at once: a bad node, a bad link on rail 0 (and a bad port) ----
# RoCE dropped by tc on the fabric interfaces (lab_roce_drop): a route no
# longer cuts a client bound to its own port's address (issue 27).
lab_roce_drop 3 fabric0 && lab_roce_drop 3 fabric1
check "fault: lab3 drops RoCE on both fabrics" 0 $?
lab_roce_drop 1 fabric0 "$(lab_fabric_ip 2)"
check "fault: lab1's fabric0 drops RoCE to and from lab2's fabric0 only" 0 $?
if [ "$N" -ge 4 ]; then
	lab_roce_drop 4 fabric1
	check "fault: lab4 drops RoCE on fabric1" 0 $?
fi
state=$(lab_ssh 3 cat /sys/class/infiniband/rxe0/ports/1/state)
check "fault: lab3's rxe0 stays ACTIVE" "4: ACTIVE" "$state"
[ "$N" -ge 4 ] && check "fault: lab4's rxe1 stays ACTIVE" "4: ACTIVE" \
	"$(lab_ssh 4 cat /sys/class/infiniband/rxe1/ports/1/state)"
# Only the pairwise stages: the drops also cut lab3's NVMe/RDMA path to
# lab1 (its namespace then fails devices, rightly), which is not what this
# step is about. One attempt per pair: the diagnosis' second pass retests.
"$LLMNET" --no-color validate "$W/lab.yaml" --stages rping,bandwidth --attempts 1 \
	--report "$W/faults.json" --html "$W/faults.html" --metrics "$W/faults.prom" \
	> "$W/faults.out" 2>&1
rc=$?
cat "$W/faults.out"
d3=$(lab_roce_dropped 3 fabric0)
d1=$(lab_roce_dropped 1 fabric0)
lab_roce_undrop 3 fabric0
lab_roce_undrop 3 fabric1
lab_roce_undrop 1 fabric0
[ "$N" -ge 4 ] && lab_roce_undrop 4 fabric1
echo "# faults: RoCE packets dropped by lab3's fabric0: $d3, by lab1's fabric0: $d1"
check "faults: the drop filters dropped RoCE (the faults were in force)" "True True" \
	"$(python3 -c "import sys; print(*[int(x or 0) > 0 for x in sys.argv[1:]])" "$d3" "$d1")"
echo "# time: faults run done ${SECONDS} s since the scenario started"
check "faults: validate exits 1" 1 "$rc"
nodes=$(q "$W/faults.json" "' '.join(r['culprits']['nodes'])")
links=$(q "$W/faults.json" "' '.join('-'.join(l) for l in r['culprits']['links'])")
if [ "$N" -ge 4 ]; then
	check "faults: the bad node named is exactly lab3" "lab3" "$nodes"
	check "faults: the bad link named is exactly lab1-lab2" "lab1-lab2" "$links"
	check "faults: the bad link is on rail 0: lab1/rxe0-lab2/rxe0" "lab1/rxe0-lab2/rxe0" \
		"$(q "$W/faults.json" "' '.join('-'.join(l) for l in r['culprits']['link_ports'])")"
	check "faults: the bad port named is exactly lab4/rxe1" "lab4/rxe1" \
		"$(q "$W/faults.json" "' '.join(r['culprits']['ports'])")"
	for v in "bad node lab3 (rping)" "bad port lab4/rxe1 (rping)" "bad link lab1/rxe0-lab2/rxe0 (rping)"; do
		if grep -qF "$v" "$W/faults.out"; then
			ok "faults: the text report says '$v'"
		else
			fail "faults: the text report does not say '$v'"
		fi
	done
	if grep -q 'llmnet_validation_bad_port{.*node="lab4",port="rxe1"} 1' "$W/faults.prom"; then
		ok "faults: the metrics name lab4's rxe1"
	else
		fail "faults: the metrics do not name lab4's rxe1"
	fi
	# lab4's other partner on rail 0 is lab3, the bad node
	for s in rping bandwidth; do
		check "faults: lab4's rxe0 passes $s with lab1" "pass" \
			"$(q "$W/faults.json" "' '.join(c['status'] for c in P if c['stage']=='$s' and not c['retest'] and sorted(c['pair'])==['lab1','lab4'] and c['ports']==['rxe0','rxe0'])")"
	done
else
	check "faults (3 guests, ambiguous): no node blamed" "" "$nodes"
	check "faults (3 guests, ambiguous): no link blamed" "" "$links"
	check "faults (3 guests): every guest is undetermined" "lab1 lab2 lab3" \
		"$(q "$W/faults.json" "' '.join(v['node'] for v in r['verdicts'] if v['kind']=='undetermined' and v['stage']=='rping')")"
fi
check "faults: no verdict outside rping" "" \
	"$(q "$W/faults.json" "' '.join(v['stage'] for v in r['verdicts'] if v['stage']!='rping')")"

# --- 4. netem: a delayed rail and a lossy rail (6.12, 4 guests) ---------------
# The latency stage alone (nothing else needs them), its rails in rounds of
# their own (concurrent_rails: false; the spec above says why).
# - lab2's fabric0 (rail 0) is delayed 200 ms: its pairs' typical rises by
#   about 100 ms, against max_typical 50ms (100 ms was too close,
#   docs/validation.md).
# - lab4's fabric1 (rail 1) loses 20% of its RoCE data packets: rxe
#   retransmits, and the counters rise with both partners, over max_errors
#   15. The loss spares QP1 (a u32 filter on the BTH's destination QP,
#   bytes 33-35 of an optionless IPv4/UDP packet, sends QP1 to a plain
#   band), so the RDMA CM exchange that sets up each pair is not lost: at
#   10% on all traffic it sometimes failed on every attempt, and a pair
#   that cannot connect is a bad link, not the counters' verdict this step
#   is about.
# The faults are on different rails: on one rail, the two ports between
# them would each have two faulty partners, and their counters would name
# them too.
if [ "$LAB_KERNEL" = 6.12 ] && [ "$N" -ge 4 ]; then
	spec netem > "$W/netem.yaml"
	lab_ssh 2 "tc qdisc add dev fabric0 root netem delay 200ms"
	check "netem: lab2's fabric0 delays 200ms" 0 $?
	# band 1:1 everything else, 1:2 the loss, 1:3 QP1 (its count is checked)
	lab_ssh 4 "tc qdisc add dev fabric1 root handle 1: prio bands 3 priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 &&
		tc qdisc add dev fabric1 parent 1:2 handle 20: netem loss 20% &&
		tc filter add dev fabric1 parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff \
			match ip dport 4791 0xffff match u32 0x00000001 0x00ffffff at 32 flowid 1:3 &&
		tc filter add dev fabric1 parent 1: protocol ip prio 2 u32 match ip protocol 17 0xff \
			match ip dport 4791 0xffff flowid 1:2"
	check "netem: lab4's fabric1 loses 20% of its RoCE data" 0 $?
	"$LLMNET" --no-color validate "$W/netem.yaml" --stages latency --report "$W/netem.json" \
		> "$W/netem.out" 2>&1
	rc=$?
	cat "$W/netem.out"
	lost=$(lab_ssh 4 "tc -s qdisc show dev fabric1 parent 1:2" | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -1)
	qp1=$(lab_ssh 4 "tc -s class show dev fabric1" | awk '/^class prio 1:3 / { getline; print $4 }')
	lab_ssh 2 "tc qdisc del dev fabric0 root"
	lab_ssh 4 "tc qdisc del dev fabric1 root"
	echo "# netem: lab4's fabric1 dropped ${lost:-?} RoCE data packets, sent ${qp1:-?} QP1 packets around the loss"
	check "netem: validate exits 1" 1 "$rc"
	# the fault model itself: data was lost (perftest runs without RDMA CM
	# now, docs/validation.md "Binding", so QP1 may carry nothing: its
	# count is printed above, not judged)
	check "netem: lab4's fabric1 dropped RoCE data" "True" \
		"$(python3 -c "print(int('${lost:-0}' or 0) > 0)")"
	# a threshold verdict says what was measured; a counters one "gained more than"
	check "netem: the latency threshold names exactly lab2/rxe0" "lab2/rxe0" \
		"$(q "$W/netem.json" "' '.join(v['node'] + '/' + v['port'] for v in r['verdicts'] if v['kind']=='port' and 'gained more than' not in v['reason'])")"
	check "netem: the counters name exactly lab4/rxe1 beside the delayed lab2/rxe0" "lab4/rxe1" \
		"$(q "$W/netem.json" "' '.join(v['node'] + '/' + v['port'] for v in r['verdicts'] if v['kind']=='port' and 'gained more than' in v['reason'] and v['node'] + '/' + v['port'] != 'lab2/rxe0')")"
	# both ring partners (a retest on rail 1 may add one)
	check "netem: lab4/rxe1 is over max_errors with both its partners" "fail True" \
		"$(q "$W/netem.json" "' '.join('%s %s' % (c['status'], c['counters']['partners_over'] >= 2) for c in r['checks'] if c.get('counters') and c['node']=='lab4' and c['port']=='rxe1')")"
	# lab1/rxe1 and lab3/rxe1 have one faulty partner: their rise is lab4's
	for p in lab1 lab3; do
		check "netem: $p/rxe1's counters are not over with two partners" "False" \
			"$(q "$W/netem.json" "' '.join(str(c['counters']['partners_over'] >= 2) for c in r['checks'] if c.get('counters') and c['node']=='$p' and c['port']=='rxe1')")"
	done
	check "netem: no node and no link is named" " " \
		"$(q "$W/netem.json" "' '.join(r['culprits']['nodes']) + ' ' + ' '.join('-'.join(l) for l in r['culprits']['links'])")"
	check "netem: every rail-1 pair connected and measured" "4" \
		"$(q "$W/netem.json" "len([c for c in P if c['stage']=='latency' and not c['retest'] and c['ports']==['rxe1','rxe1'] and c['value']])")"
	echo "# netem: typical us per pair: $(q "$W/netem.json" "' '.join('-'.join(p + '/' + d for p, d in zip(c['pair'], c['ports'])) + '=%.0f' % (c['value'] or -1) for c in P if c['stage']=='latency' and not c['retest'])")"
	echo "# netem: counter deltas (port: partners over, errors): $(q "$W/netem.json" "' '.join('%s/%s:%s,%s' % (c['node'], c['port'], c['counters']['partners_over'], c['counters']['errors']) for c in r['checks'] if c.get('counters'))")"
	echo "# netem: lab4/rxe1's counter deltas: $(q "$W/netem.json" "[c['counters']['deltas'] for c in r['checks'] if c.get('counters') and c['node']=='lab4' and c['port']=='rxe1']")"
else
	echo "# netem run: needs the 6.12 image (sch_netem) and 4 guests; not run here"
fi

# --- 5. two rails in one subnet, one of them broken (issue 27) ----------------
# As flat-L2 fabrics with policy routing are set up: both rails on one L2
# (the two bridges joined by a veth pair for the step), one subnet
# 10.79.0.0/24 on both fabric interfaces of every guest (fabric0 .1X,
# fabric1 .5X), arp_ignore=1 and arp_announce=2 (each interface answers
# and announces only its own addresses), and a source rule per address
# (ip rule from ADDR lookup 100/101: the subnet through that address's own
# interface). lab2's fabric1 drops RoCE. An unbound rping client on lab2
# would leave by the route's pick, fabric0, and pass; bound by -I to its
# rxe1 address it goes through fabric1, so exactly lab2/rxe1 is named: no
# node, no link. rping only, one attempt (the diagnosis retests).
shared_setup() {
	local i a0 a1
	ip -n "$LAB_NETNS" link add labsh0 mtu "$LAB_FABRIC_MTU" type veth peer name labsh1 \
		mtu "$LAB_FABRIC_MTU" &&
		ip -n "$LAB_NETNS" link set labsh0 master "$LAB_BRIDGE" up &&
		ip -n "$LAB_NETNS" link set labsh1 master "$LAB_BRIDGE1" up || return 1
	for i in $(seq 1 "$N"); do
		a0=10.79.0.$((10 + i)) a1=10.79.0.$((50 + i))
		lab_ssh "$i" "for d in all fabric0 fabric1; do
				sysctl -n net.ipv4.conf.\$d.arp_ignore net.ipv4.conf.\$d.arp_announce | paste -sd' ' |
					sed \"s/^/\$d /\"
			done > /run/llmnet-shared.sysctl &&
			sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 \
				net.ipv4.conf.fabric0.arp_ignore=1 net.ipv4.conf.fabric0.arp_announce=2 \
				net.ipv4.conf.fabric1.arp_ignore=1 net.ipv4.conf.fabric1.arp_announce=2 &&
			ip addr add $a0/24 dev fabric0 && ip addr add $a1/24 dev fabric1 &&
			ip route add 10.79.0.0/24 dev fabric0 src $a0 table 100 &&
			ip route add 10.79.0.0/24 dev fabric1 src $a1 table 101 &&
			ip rule add from $a0 lookup 100 && ip rule add from $a1 lookup 101" || return 1
	done
}
shared_cleanup() {
	local i a0 a1
	for i in $(seq 1 "$N"); do
		a0=10.79.0.$((10 + i)) a1=10.79.0.$((50 + i))
		lab_ssh "$i" "ip rule del from $a0 lookup 100; ip rule del from $a1 lookup 101
			ip route flush table 100; ip route flush table 101
			ip addr del $a0/24 dev fabric0; ip addr del $a1/24 dev fabric1
			while read -r d ign ann; do
				sysctl -qw net.ipv4.conf.\$d.arp_ignore=\$ign net.ipv4.conf.\$d.arp_announce=\$ann
			done < /run/llmnet-shared.sysctl; rm -f /run/llmnet-shared.sysctl" >/dev/null 2>&1
	done
	ip -n "$LAB_NETNS" link del labsh0 2>/dev/null
}
python3 - "$W/lab.yaml" > "$W/shared.yaml" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
t = re.sub(r"ip: 10\.78\.0\.(\d+),", lambda m: "ip: 10.79.0.%d," % (int(m.group(1)) + 40), s)
t = re.sub(r"ip: 10\.77\.0\.(\d+),", r"ip: 10.79.0.\1,", t)
assert t != s and "10.77.0." not in re.sub(r"(?m)^(?!.*ip: ).*$", "", t), "the lab spec's ports changed"
sys.stdout.write(t)
PY
# Written for issue 27 and not yet run in the lab: LAB_SHARED_SUBNET=1 runs
# it; without, the scenario says so and counts nothing for it.
if [ "${LAB_SHARED_SUBNET:-0}" = 1 ]; then
	shared_setup
	check "shared subnet: both rails of every guest in 10.79.0.0/24, one L2, a rule per address" 0 $?
	check "shared subnet: lab2's rxe1 holds its shared address as a GID" 0 \
		"$(lab_ssh 2 "for _ in \$(seq 20); do
			grep -qx '0000:0000:0000:0000:0000:ffff:0a4f:0034' /sys/class/infiniband/rxe1/ports/1/gids/* &&
				exit 0; sleep 0.5; done; exit 1" >/dev/null 2>&1; echo $?)"
	lab_roce_drop 2 fabric1
	check "shared subnet: lab2's fabric1 drops RoCE" 0 $?
	"$LLMNET" --no-color validate "$W/shared.yaml" --stages rping --attempts 1 \
		--report "$W/shared.json" > "$W/shared.out" 2>&1
	rc=$?
	cat "$W/shared.out"
	lab_roce_undrop 2 fabric1
	shared_cleanup
	echo "# time: shared subnet run done ${SECONDS} s since the scenario started"
	check "shared subnet: validate exits 1" 1 "$rc"
	check "shared subnet: the bad port named is exactly lab2/rxe1" "lab2/rxe1" \
		"$(q "$W/shared.json" "' '.join(r['culprits']['ports'])")"
	check "shared subnet: no node and no link is named" " " \
		"$(q "$W/shared.json" "' '.join(r['culprits']['nodes']) + ' ' + ' '.join('-'.join(l) for l in r['culprits']['links'])")"
	check "shared subnet: every rping client was bound to its own port's address (-I)" "True" \
		"$(q "$W/shared.json" "all(' -I 10.79.0.' in (a['command'] or '') for c in P if c['stage']=='rping' for a in c['attempts'])")"
	check "shared subnet: lab2's rxe0 passes with its rail-0 partners" "pass pass" \
		"$(q "$W/shared.json" "' '.join(c['status'] for c in P if c['stage']=='rping' and not c['retest'] and 'lab2' in c['pair'] and c['ports']==['rxe0','rxe0'])")"
else
	echo "# the shared-subnet case (step 5) is not run: LAB_SHARED_SUBNET=1 runs it"
fi

echo "# time: the scenario took ${SECONDS} s"
echo "# reports kept in $W"
tap_done
