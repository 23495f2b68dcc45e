#!/bin/bash
# SPDX-License-Identifier: MIT
# Self-test of tests/lib/tap.sh, run by make lint: counts, the closing
# line's exact form, the counts file and the exit status. Exits 0 on pass.
set -u
lib=$(cd "$(dirname "$0")" && pwd)/tap.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
expect() {	# DESCRIPTION WANTED GOT
	[ "$2" = "$3" ] || { echo "tap.sh self-test: $1: wanted '$2', got '$3'"; bad=1; }
}

out=$(bash -c '. "$1"; tap_init demo; check eq a a; check ne a b; check_cmd runs true
	check_cmd fails false; ok fine; TAP_GROUP=g fail broken; tap_count 2 1; tap_done "$2"' \
	_ "$lib" "$tmp/counts")
rc=$?
expect "exit status with failures" 1 "$rc"
expect "closing line" "demo: 5 passed, 4 failed" "$(tail -1 <<<"$out")"
expect "counts file" "5 4" "$(cat "$tmp/counts")"
expect "TAP lines" "ok 1 - eq|not ok 2 - ne: expected 'a', got 'b'|ok 3 - runs|not ok 4 - fails|ok 5 - fine|not ok 6 - broken" \
	"$(grep -E '^(not )?ok ' <<<"$out" | paste -sd'|')"
expect "failure list" "  g: broken" "$(grep '^  g:' <<<"$out")"

out=$(bash -c 'set -u; . "$1"; TAP_QUIET=1; ok quiet; tap_done' _ "$lib")
expect "exit status when all passed" 0 "$?"
expect "quiet, no name" "1 passed, 0 failed" "$out"

out=$(bash -c 'set -u; . "$1"; tap_init clock; TAP_CLOCK=1; ok first; fail second
	TAP_CLOCK=0; ok third' _ "$lib")
expect "TAP_CLOCK: seconds since the last line" "yes yes no" \
	"$(for n in 1 2 3; do sed -n "${n}p" <<<"$out" | grep -qE ' \[\+[0-9]+\.[0-9] s\]$' && echo yes || echo no; done | paste -sd' ')"
bash -c '. "$1"; tap_init none; tap_done' _ "$lib" > /dev/null
expect "exit status when nothing ran" 1 "$?"
exit "$bad"
