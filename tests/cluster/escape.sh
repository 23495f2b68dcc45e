# SPDX-License-Identifier: MIT
# Sourced by tests/cluster/run.sh: a node's strings never reach the
# terminal or the run log raw (issue 32, point 4). n3's fixture root names
# an RDMA device after a window-title change, a carriage return with an
# erase-line and a forged " RECAP" line; facts print it as \xNN text, and
# no raw ESC or CR is in the output or the run log. The control: n2's
# honest device name is printed unchanged.

# A device DIR/NAME with one active port, in node I's fixture root.
rdma_device() {
	local d
	d="$(root "$1")/sys/class/infiniband/$2"
	mkdir -p "$d/ports/1" && printf '4: ACTIVE\n' > "$d/ports/1/state"
}

no_raw_control() { ! grep -qP '[\x1b\r\x07]' "$@"; }

scenario_escape() {
	local evil=$'\e]0;owned\a\r\e[2Kx\n RECAP n3 : converged'
	new_cluster escape || { fail "cluster up"; return; }
	rdma_device 2 rxe_honest-0
	rdma_device 3 "$evil"
	llmnet facts "$C/spec.yaml"
	check_cmd "facts exits 0" rc_is 0
	check_cmd "n3's device name is shown escaped" \
		out_has '\x1b]0;owned\x07\x0d\x1b[2Kx\x0a RECAP n3 : converged'
	check_cmd "no raw ESC, CR or BEL on the terminal" no_raw_control "$C/out"
	check_cmd "no forged line" not grep -q '^ RECAP' "$C/out"
	check_cmd "n2's honest device name is shown unchanged" out_has "             rxe_honest-0 1"
	check_cmd "the run log has entries" test -s "$LLMNET_STATE_DIR/loop.log"
	check_cmd "no raw ESC, CR or BEL in the run log" no_raw_control "$LLMNET_STATE_DIR/loop.log"
}
