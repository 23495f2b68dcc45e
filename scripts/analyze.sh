#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make analyze: clang's static analyzer (scan-build) over a full rebuild of
# the programs and probes in its own build folder, so build/ is left alone.
# Fails on any report; lists each one (file:line: message [checker]) and
# keeps the HTML reports in BUILD/report.
#   scripts/analyze.sh [BUILD]     (default build/analyze)
# MAKE and ANALYZE_CC (the compiler that really builds) come from make.
set -u
cd "$(dirname "$0")/.."
ab=${1:-build/analyze}
make=${MAKE:-make}
if ! command -v scan-build >/dev/null; then
	echo "analyze: scan-build is not installed (make deps: deps/lint.list)" >&2
	exit 1
fi
rm -rf "$ab"
mkdir -p "$ab"
# CC on make's command line, not only in the environment scan-build sets,
# so a `make analyze CC=...` cannot bypass the analyzer.
scan-build --status-bugs -o "$ab/report" --use-cc="${ANALYZE_CC:-cc}" \
	sh -c '"$0" --no-print-directory BUILD="$1" CC="$CC" all' "$make" "$ab" \
	> "$ab/analyze.log" 2>&1
rc=$?
grep -E 'warning: .* \[[a-z]+\.[A-Za-z.]+\]$' "$ab/analyze.log" | sort -u > "$ab/findings.txt"
n=$(wc -l < "$ab/findings.txt")
grep -E '^scan-build: ' "$ab/analyze.log"
sed 's/^/  /' "$ab/findings.txt"
if [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then
	tail -20 "$ab/analyze.log"
	echo "analyze: the build failed (see $ab/analyze.log)"
elif [ "$rc" -ne 0 ]; then
	echo "analyze: $n findings (HTML reports in $ab/report)"
else
	echo "analyze: no report"
fi
exit "$rc"
