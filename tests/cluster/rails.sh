# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: concurrent_rails (issue 14) over real
# ssh and agents. Eight nodes with two rails each (rxe0 on 10.77.0.x, rxe1
# on 10.78.0.x in their fixture trees); each node's sshd runs with a
# stand-in rping laid over /usr/bin in its own mount namespace (this
# machine has no rping, and nothing outside those namespaces changes).
# The stand-in is a script per node: a server waits until its client is
# done (so a node's servers of one round overlap), a client fails where
# $C/rails/faults says (a node, a node's rail, or two nodes on one rail)
# and every run records how many stand-ins its node had in flight.
#  - healthy, concurrent_rails: true: --dry-run gives 16 pairs in 2
#    rounds (a ring of 8 per rail, both rails together); every pair passes;
#    a node ran two probes at once (each over a session lane of its own);
#  - three faults at once: a bad link n1-n2 on rail0 only, n4's rxe1 dead,
#    n7 dead: the culprits are exactly n7, n4/rxe1 and n1/rxe0-n2/rxe0;
#  - the same spec with concurrent_rails: false never has two probes in
#    flight on one node.

# The stand-in rping of node I into DIR.
rails_standin() {
	local dir=$1 i=$2 st=$C/rails
	mkdir -p "$dir"
	cat > "$dir/rping" <<SH
#!/bin/bash
# stand-in rping of node n$i (tests/cluster/rails.sh)
PATH=/usr/sbin:/usr/bin:/sbin:/bin
me=$i st=$st
SH
	cat >> "$dir/rping" <<'SH'
role=$1
shift
while [ $# -gt 0 ]; do
	case $1 in -a) ip=$2; shift ;; -p) port=$2; shift ;; -I) src=$2; shift ;; esac
	shift
done
peer=$((${ip##*.} - 10))
rail=$(($(echo "$ip" | cut -d. -f2) - 77))
# the client is bound to its own port on the server's rail (-I, issue 27)
if [ "$role" = -c ] && [ "${src:-}" != "10.$((77 + rail)).0.$((10 + me))" ]; then
	echo "stand-in rping: client bound to '${src:-nothing}', not its port on rail $rail"
	exit 1
fi
key=$st/done.$ip.$port
mkdir "$st/run/$me.$$"
echo "$me $(ls "$st/run" | grep -c "^$me\.")" >> "$st/inflight"
if [ "$role" = -s ]; then
	for _ in $(seq 150); do [ -e "$key" ] && break; sleep 0.1; done
	rm -f "$key"
	rmdir "$st/run/$me.$$"
	exit 0
fi
bad=0
grep -qxF -e "node $me" -e "node $peer" -e "port $me $rail" -e "port $peer $rail" \
	-e "link $me $peer $rail" -e "link $peer $me $rail" "$st/faults" && bad=1
touch "$key"
rmdir "$st/run/$me.$$"
if [ "$bad" = 1 ]; then
	echo "cma event RDMA_CM_EVENT_UNREACHABLE, error -110"
	exit 1
fi
echo "ping data: rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ"
SH
	chmod 0755 "$dir/rping"
}

rails_spec() {	# concurrent_rails value
	local i
	printf 'version: 1\ncluster: loop\nssh: { user: root, identity: %s/id_ed25519, known_hosts: %s/known_hosts, connect_timeout: 5s, timeout: 30s }\nnodes:\n' "$C" "$C"
	for i in $(seq 8); do
		printf '  - { name: n%d, address: %s, rdma: [ { device: rxe0, ip: 10.77.0.%d }, { device: rxe1, ip: 10.78.0.%d } ] }\n' \
			"$i" "$(cluster_addr "$i")" $((10 + i)) $((10 + i))
	done
	printf 'validation:\n  - { stage: rping, count: 2, timeout: 30s, concurrent_rails: %s }\n' "$1"
}

# The most stand-ins any node had in flight at once.
rails_peak() { sort -k2,2n "$C/rails/inflight" | tail -n1 | cut -d' ' -f2; }

rails_culprits() {
	python3 -c 'import json,sys
c = json.load(open(sys.argv[1]))["culprits"]
print(" ".join(c["nodes"] + c["ports"] + ["-".join(p) for p in c["link_ports"]]))' "$1"
}

scenario_rails() {
	local i ib
	new_cluster rails 8 || { fail "cluster up"; return; }
	mkdir -p "$C/rails/run"
	: > "$C/rails/faults"
	for i in $(seq 8); do
		ib=$(root "$i")/sys/class/infiniband
		mkdir -p "$ib"
		cp -a "$(root 1)/sys/class/infiniband/rxe0" "$ib/rxe1.new"
		[ "$i" = 1 ] || cp -a "$(root 1)/sys/class/infiniband/rxe0" "$ib/"
		mv "$ib/rxe1.new" "$ib/rxe1"
		printf '0000:0000:0000:0000:0000:ffff:0a4d:%04x\n' $((10 + i)) > "$ib/rxe0/ports/1/gids/1"
		printf '0000:0000:0000:0000:0000:ffff:0a4e:%04x\n' $((10 + i)) > "$ib/rxe1/ports/1/gids/1"
		rails_standin "$C/node$i/usrbin" "$i"
		cluster_stop_node "$C" "$i"
		cluster_start_node "$C" "$i" "$C/node$i/usrbin" || { fail "node $i with its stand-in"; return; }
	done
	rails_spec true > "$C/rails.yaml"
	llmnet validate --dry-run "$C/rails.yaml"
	check_cmd "--dry-run: both rails in the same rounds" \
		out_has "rping: pairs ring, rails aligned, concurrent rails: 16 pairs in 2 rounds"
	check_cmd "--dry-run: round 1 holds rail0 and rail1" \
		out_has "  round 1: n1/rxe0-n2/rxe0 (rail0) n3/rxe0-n4/rxe0 (rail0) n5/rxe0-n6/rxe0 (rail0) n7/rxe0-n8/rxe0 (rail0) n1/rxe1-n2/rxe1 (rail1)"
	llmnet validate "$C/rails.yaml" --attempts 1 --report "$C/healthy.json"
	check_cmd "healthy: every pair of both rails passes (exit 0)" rc_is 0
	check "healthy: 16 pairs passed in 2 rounds" "16 2" "$(python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
s = [s for s in r["stages"] if s["stage"] == "rping"][0]
print(sum(1 for c in r["checks"] if c.get("pair") and c["status"] == "pass"), s["rounds"])' \
		"$C/healthy.json")"
	check "healthy: a node ran its two rails' probes at once" 2 "$(rails_peak)"
	printf 'link 1 2 0\nport 4 1\nnode 7\n' > "$C/rails/faults"
	: > "$C/rails/inflight"
	llmnet validate "$C/rails.yaml" --attempts 1 --report "$C/faults.json"
	check_cmd "three faults: the run fails (exit 1)" rc_is 1
	check "three faults: exactly the bad node, the bad port and the bad link" \
		"n7 n4/rxe1 n1/rxe0-n2/rxe0" "$(rails_culprits "$C/faults.json")"
	check_cmd "the text names the bad port" out_has "bad port n4/rxe1 (rping)"
	check_cmd "the text names the bad link on rail0" out_has "bad link n1/rxe0-n2/rxe0 (rping)"
	check_cmd "the text names the bad node" out_has "bad node n7 (rping)"
	rails_spec false > "$C/rails-serial.yaml"
	: > "$C/rails/faults"
	: > "$C/rails/inflight"
	llmnet validate "$C/rails-serial.yaml" --attempts 1 --report "$C/serial.json"
	check_cmd "concurrent_rails: false passes too (exit 0)" rc_is 0
	check "concurrent_rails: false: one probe per node at a time" 1 "$(rails_peak)"
	check "concurrent_rails: false: 4 rounds" 4 "$(python3 -c 'import json,sys
print([s for s in json.load(open(sys.argv[1]))["stages"] if s["stage"] == "rping"][0]["rounds"])' \
		"$C/serial.json")"
}
