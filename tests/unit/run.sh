#!/bin/bash
# SPDX-License-Identifier: MIT
# Run every cmocka binary in BUILD/tests and count tests: run.sh BUILD TIER
set -u
build=$1 tier=$2
. "$(dirname "$0")/../lib/tap.sh"
tap_init "$tier"
bad=()
for t in "$build"/tests/test_*; do
	[ -x "$t" ] || continue
	log=$build/check/${t##*/}.log
	mkdir -p "$build/check"
	"$t" > "$log" 2>&1
	rc=$?
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
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
