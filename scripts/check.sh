#!/bin/bash
# SPDX-License-Identifier: MIT
# Run test tiers in order, each under a hard time limit: scripts/check.sh
# unit:600 cluster:900 ... Each tier is the make target tier-NAME and writes
# "PASSED FAILED" to $BUILD/check/NAME.counts. A tier that exits non-zero
# without counting a failure, that times out, or that writes no counts,
# counts one failure. Every tier runs even when an earlier one failed, so
# one run shows everything. A time table closes the run: each tier's
# seconds and, for the e2e tiers, each step's (boot, every scenario) from
# $BUILD/check/NAME.times, so every CI log shows where the budget goes.
# The last line sums the tiers: "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
out=${BUILD:-build}/check
mkdir -p "$out"
total_p=0 total_f=0 failed=() table=()
t_all=$(date +%s)

# The lab images the e2e tiers boot: from an empty cache each takes minutes
# to build, mostly downloading and unpacking packages, which need little of
# the CPU the first tiers compile with. So they are built in the background
# from the start, in the order the e2e tiers run; an e2e tier that comes
# first waits on the lab lock until its image is ready. A failed build is
# printed and left to the e2e tier, which builds again and reports it.
kernels=()
for spec in "$@"; do
	case ${spec%%:*} in e2e-6.1) kernels+=(6.1) ;; e2e-6.12) kernels+=(6.12) ;; esac
done
prefetch=
if [ ${#kernels[@]} -gt 0 ]; then
	(
		for k in "${kernels[@]}"; do
			LLMNET_LAB_KERNEL=$k tests/lab/build-image --check >/dev/null 2>&1 && continue
			echo "lab image $k: building in the background"
			t=$(date +%s)
			LLMNET_LAB_KERNEL=$k tests/lab/build-image || echo "lab image $k: build failed (exit $?)"
			echo "lab image $k: $(( $(date +%s) - t )) s"
		done
	) > "$out/lab-images.log" 2>&1 &
	prefetch=$!
fi
for spec in "$@"; do
	name=${spec%%:*} limit=${spec#*:}
	rm -f "$out/$name.counts" "$out/$name.times"
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
	dt=$(( $(date +%s) - t0 ))
	echo "=== tier $name: $p passed, $f failed in ${dt}s"
	table+=("$(printf '  %-34s %7d s   %s passed, %s failed' "tier $name" "$dt" "$p" "$f")")
	if [ -f "$out/$name.times" ]; then
		# "WHAT SECONDS": WHAT may hold spaces, SECONDS is the last word
		while read -r line; do
			table+=("$(printf '    %-32s %7.1f s' "${line% *}" "${line##* }")")
		done < "$out/$name.times"
	fi
	total_p=$((total_p + p)) total_f=$((total_f + f))
done
if [ -n "$prefetch" ]; then
	wait "$prefetch"
	grep -E '^lab image ' "$out/lab-images.log" || true
	while read -r k secs; do
		table+=("$(printf '  %-34s %7d s   (in the background)' "lab image $k" "$secs")")
	done < <(sed -n 's/^lab image \([0-9.]*\): \([0-9]*\) s$/\1 \2/p' "$out/lab-images.log")
fi
echo "=== time table"
printf '%s\n' "${table[@]}"
printf '  %-34s %7d s\n' "make check" "$(( $(date +%s) - t_all ))"
echo "check: ${#@} tiers in $(( $(date +%s) - t_all ))s${failed[*]:+, failing: ${failed[*]}}"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
