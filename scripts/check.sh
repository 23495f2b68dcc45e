#!/bin/bash
# SPDX-License-Identifier: MIT
# Run test tiers in order, each under a hard time limit: scripts/check.sh
# unit:600 cluster:900 ... Each tier is the make target tier-NAME and writes
# "PASSED FAILED" to $BUILD/check/NAME.counts. A tier that exits non-zero
# without counting a failure, that times out, or that writes no counts,
# counts one failure. Every tier runs even when an earlier one failed, so
# one run shows everything. The last line sums the tiers: "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
out=${BUILD:-build}/check
mkdir -p "$out"
total_p=0 total_f=0 failed=()
t_all=$(date +%s)
for spec in "$@"; do
	name=${spec%%:*} limit=${spec#*:}
	rm -f "$out/$name.counts"
	t0=$(date +%s)
	echo "=== tier $name (hard limit ${limit}s)"
	timeout --kill-after=30 "$limit" make --no-print-directory "tier-$name"
	rc=$?
	p=0 f=0 counted=0
	if [ -f "$out/$name.counts" ] && read -r p f < "$out/$name.counts" &&
		[[ $p =~ ^[0-9]+$ && $f =~ ^[0-9]+$ ]]; then
		counted=1
	else
		p=0 f=0
	fi
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "tier $name: TIMED OUT after ${limit}s" >&2
		f=$((f + 1))
		# the killed tier could not take its lab down: its guests
		# would slow every later tier
		case $name in e2e*) timeout 120 tests/lab/lab-down >&2 || true ;; esac
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "tier $name: exited $rc without reporting a failed test" >&2
		f=1
	elif [ "$counted" -eq 0 ]; then
		echo "tier $name: wrote no counts to $out/$name.counts" >&2
		f=$((f + 1))
	fi
	[ "$f" -gt 0 ] && failed+=("$name")
	echo "=== tier $name: $p passed, $f failed in $(( $(date +%s) - t0 ))s"
	total_p=$((total_p + p)) total_f=$((total_f + f))
done
echo "check: ${#@} tiers in $(( $(date +%s) - t_all ))s${failed[*]:+, failing: ${failed[*]}}"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
