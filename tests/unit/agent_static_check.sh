#!/bin/bash
# SPDX-License-Identifier: MIT
# The agent is pushed to nodes that may lack every shared library: check
# that it is static, that its stripped size stays at most 2 MB (what crosses
# every node's SSH link at first contact; libcrypto alone was 2.5 MB), and that it
# makes no NSS calls (no open of nsswitch.conf or libnss*) while it runs.
# Closes with "agent: N passed, N failed"; with COUNTS, writes "PASSED
# FAILED" there (tests/lib/tap.sh).
set -u
agent=$1 counts=${2:-}
fixdir=$(cd "$(dirname "$0")/../fixtures/agent" && pwd)
. "$(dirname "$0")/../lib/tap.sh"
tap_init agent
bad() { fail "$1: $2"; }

if file "$agent" | grep -q 'statically linked'; then ok static; else bad static "$(file "$agent")"; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$fixdir/build-tree.sh" "$fixdir/node-target.tree" "$tmp/root"
strip -o "$tmp/agent" "$agent"
size=$(stat -c %s "$tmp/agent")
if [ "$size" -le 2000000 ]; then ok "stripped size $size"; else bad size "$size bytes > 2 MB"; fi
if command -v strace >/dev/null; then
	for verb in version facts; do
		strace -f -e trace=open,openat,execve -o "$tmp/trace" "$agent" "$verb" >/dev/null 2>&1
		strace -f -e trace=open,openat,execve -o "$tmp/trace.fx" "$agent" --root "$tmp/root" "$verb" >/dev/null 2>&1
		if grep -Eq 'nsswitch\.conf|libnss' "$tmp/trace" "$tmp/trace.fx"; then
			bad "no NSS ($verb)" "$(grep -E 'nsswitch|libnss' "$tmp/trace" "$tmp/trace.fx" | head -3)"
		elif ! grep -q execve "$tmp/trace"; then
			bad "no NSS ($verb)" "strace recorded nothing"
		else
			ok "no NSS ($verb)"
		fi
	done
else
	bad "no NSS" "strace is not installed (deps/agent.list)"
fi
tap_done "$counts"
