#!/bin/bash
# SPDX-License-Identifier: MIT
# Run every cmocka binary in BUILD/tests and count tests: run.sh BUILD TIER
#
# The binaries run side by side, UNIT_JOBS at a time (default: the CPU
# count): most of their time is the agent's fixture runs, one process each,
# and every test makes its own temporary paths. Each binary's output goes
# to BUILD/check/NAME.log; the counts are read afterwards in name order, so
# the report reads the same however the runs interleaved.
set -u
build=$1 tier=$2
. "$(dirname "$0")/../lib/tap.sh"
tap_init "$tier"
mkdir -p "$build/check"
bins=()
for t in "$build"/tests/test_*; do
	[ -x "$t" ] && [ -f "$t" ] && bins+=("$t")
done
# One line per binary: its exit status into NAME.rc after its log is whole
# (no earlier run's log or status may stand in for a binary that did not run).
for t in "${bins[@]}"; do rm -f "$build/check/${t##*/}.log" "$build/check/${t##*/}.log.rc"; done
printf '%s\n' "${bins[@]}" | xargs -r -d '\n' -P "${UNIT_JOBS:-$(nproc)}" -I{} \
	sh -c 't=$1 log=$2/check/${1##*/}.log; "$t" > "$log" 2>&1; echo $? > "$log.rc"' _ {} "$build"
bad=()
for t in "${bins[@]}"; do
	log=$build/check/${t##*/}.log
	rc=$(cat "$log.rc" 2>/dev/null)
	[[ $rc =~ ^[0-9]+$ ]] || rc=127	# it did not run, or did not end
	rm -f "$log.rc"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" 2>/dev/null | awk '{s+=$1} END {print s+0}')
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" 2>/dev/null | awk '{s+=$1} END {print s+0}')
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crashed before its summary
	tap_count "$p" "$f"
	if [ "$f" -gt 0 ]; then
		bad+=("${t##*/}")
		cat "$log"
	fi
	printf '  %-28s %3d passed, %d failed\n' "${t##*/}" "$p" "$f"
done
[ ${#bad[@]} -eq 0 ] || echo "failing: ${bad[*]}"
tap_done "$build/check/$tier.counts"
