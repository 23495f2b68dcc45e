#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The house's size limits (docs/hacking.md): no product C file (any but
# under tests/) over 800 lines, no test file over 1,000, and no function
# over 100 (the spec's grammar tables are data, not functions).
# Prints one line per file or function over its limit, "FILE: N lines" or
# "FILE NAME(): N lines, from line L", and exits 1 when one of them is not in
# scripts/sizes.allow, or when a line of that list no longer applies (the
# list only shrinks). A function is what kernel style writes: a signature
# line, then "{" and "}" alone at the start of a line.
#   scripts/sizes.sh [FILE...]      (default: every tracked .c and .h)
set -u
cd "$(dirname "$0")/.."
allow=scripts/sizes.allow
if [ $# -eq 0 ]; then
	mapfile -t files < <(git ls-files '*.c' '*.h')
else
	files=("$@")
fi
found=$(
	for f in "${files[@]}"; do
		n=$(wc -l < "$f")
		case $f in tests/* | ./tests/*) max=1000 ;; *) max=800 ;; esac
		[ "$n" -le "$max" ] || echo "$f: $n lines"
	done
	awk '
		FNR == 1 { sig = ""; start = 0 }
		/^[A-Za-z_]/ && !/;[ \t]*$/ { sig = $0; sigline = FNR }
		/^\{$/ && sig != "" { start = sigline; name = sig; next }
		/^\}/ && start {
			n = FNR - start + 1
			if (n > 100) {
				sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
				printf "%s %s(): %d lines, from line %d\n", FILENAME, name, n, start
			}
			start = 0; sig = ""
		}' "${files[@]}"
)
# the key is what a line says before ": N lines"
. scripts/allowlist.sh
awk '{ print substr($0, 1, index($0, ": ") - 1) "\t" $0 }' <<< "$found" |
	allow_check "$allow" "$allow" "over the limit" "is no longer over its limit"
