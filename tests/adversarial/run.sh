#!/bin/bash
# SPDX-License-Identifier: MIT
# The safety tier: tests/adversarial/run.sh BUILD [CASE...]
# Issue 12's reproductions, each as a case that must be refused:
#  spec/CASE.yaml     `llmnet lint` exits 3 with exactly the messages in
#                     CASE.err (stdout empty): no node is ever contacted;
#  request/CASE.case  the real llmnet-agent, on a fixture root built from
#                     tests/fixtures/agent trees, is given a request (or a
#                     `run` command line) and must refuse it: an exit code
#                     from want_exit, an answer naming want, and the root's
#                     tree byte for byte what it was before the call
#                     (modes, sizes, link targets, file contents).
# A .case file sets: tree (fixture trees, overlaid in order), extra (more
# tree lines), pre (requests applied first, in order, which must succeed:
# the state other runs or clusters left), verb (apply|plan|teardown|run),
# request (stdin for apply/plan/teardown), args (run: the command after
# --; other verbs: their options, as teardown's --cluster NAME), kept
# (node paths that must read the same after the call, even in a control),
# gone (node paths that must not be there after it),
# want_exit (accepted codes), want (a string the answer must hold), never
# (a string neither the answer nor the agent's log may hold: a secret),
# control=1 (a control beside a refusal: the request must be accepted,
# want_exit 0, and the tree may change; a gate that refuses everything
# fails it).
# Cases are named spec/CASE and request/CASE (also on the command line).
# xfail.list also holds the lab scenario's checks (e2e/NAME,
# tests/e2e/scenarios/safety.sh reads it); this tier checks they exist.
# Cases listed in xfail.list wait on another branch's fix: their failure is
# reported as XFAIL (never as a pass), and a listed case that passes fails
# the tier as XPASS until its line is removed.
set -u
build=$1
shift
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
tap_init safety
here=tests/adversarial
llmnet=$build/llmnet agent=$build/llmnet-agent
fixtures=tests/fixtures/agent
tmp=$(mktemp -d /tmp/llmnet-safety.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
xfails=()

# The helper and reason for case $1 from xfail.list, or nothing.
xfail_of() {
	awk -v c="$1" '$1 == c { $1 = ""; sub(/^ /, ""); print; exit }' "$here/xfail.list"
}

# Everything about a tree that a write could change; the agent's lock
# file is its own and made by every mutating call.
# The tree's every entry with its type, mode, size and allocated blocks,
# and the content hash of every file but a large one with no blocks: such
# a file (the fixtures' sparse disk images, up to 128 MiB) is all holes,
# any write gives it blocks, so its size and block count stand for its
# content, and hashing its zeros (seconds a case) proves nothing more.
snapshot() {
	(cd "$1" && find . -path ./run/llmnet.lock -prune -o -printf '%y %m %p -> %l\n' |
		LC_ALL=C sort &&
		find . -type f ! -path ./run/llmnet.lock -printf '%b %s %p\0' | LC_ALL=C sort -z |
		while IFS=' ' read -r -d '' b sz p; do
			if [ "$b" = 0 ] && [ "$sz" -ge 1048576 ]; then
				echo "holes only: $sz bytes $p"
			else
				sha256sum "$p"
			fi
		done)
}

# Run one spec case; prints why it failed, returns 1 then.
spec_case() {
	local y=$1 golden=${1%.yaml}.err out rc stdout
	out=$("$llmnet" lint "$y" 2>&1 >/dev/null)
	rc=$?
	stdout=$("$llmnet" lint "$y" 2>/dev/null)
	if [ ! -f "$golden" ]; then
		echo "no golden $golden"
	elif [ "$rc" -ne 3 ]; then
		echo "lint exited $rc, not 3: $out"
	elif [ -n "$stdout" ]; then
		echo "lint printed on stdout: $stdout"
	elif ! diff -u "$golden" <(printf '%s\n' "$out") >&2; then
		echo "messages differ from $golden"
	else
		return 0
	fi
	return 1
}

# Run one request case; prints why it failed, returns 1 then.
request_case() {
	local c=$1 tree='' extra='' pre='' verb='' request='' args='' want_exit='' want='' never=''
	local control='' kept='' gone=''
	local root t out rc before after k kept_before=
	# shellcheck disable=SC1090
	. "$c"
	root=$tmp/$(basename "$c" .case)
	for t in $tree; do
		tests/fixtures/agent/build-tree.sh "$fixtures/$t" "$root" || { echo "cannot build $t"; return 1; }
	done
	if [ -n "$extra" ]; then
		printf '%s\n' "$extra" > "$tmp/extra.tree"
		tests/fixtures/agent/build-tree.sh "$tmp/extra.tree" "$root" || { echo "bad extra lines"; return 1; }
	fi
	for t in $pre; do
		out=$("$agent" --root "$root" --budget-ms 120000 apply < "$here/request/$t" 2>&1)
		rc=$?
		[ "$rc" -eq 0 ] || { echo "the set-up request $t exited $rc: $out"; return 1; }
	done
	before=$(snapshot "$root")
	for k in $kept; do
		[ -e "$root$k" ] || { echo "kept path $k is not there before the call"; return 1; }
		kept_before+=$(cat "$root$k")
	done
	if [ "$verb" = run ]; then
		# shellcheck disable=SC2086
		out=$("$agent" --root "$root" --budget-ms 120000 run --timeout 10 -- $args 2>&1 < /dev/null)
	else
		# shellcheck disable=SC2086 # the verb's options, one word each
		out=$("$agent" --root "$root" --budget-ms 120000 "$verb" $args < "$here/request/$request" 2>&1)
	fi
	rc=$?
	after=$(snapshot "$root")
	local kept_after='' missing='' present=''
	for k in $kept; do
		[ -e "$root$k" ] || missing+=" $k"
		kept_after+=$(cat "$root$k" 2>/dev/null)
	done
	for k in $gone; do [ -e "$root$k" ] && present+=" $k"; done
	if [[ " $want_exit " != *" $rc "* ]]; then
		echo "the agent exited $rc, not ${want_exit// / or }: $out"
	elif [[ "$out" != *"$want"* ]]; then
		echo "the answer does not name '$want': $out"
	elif [ -n "$never" ] && [[ "$out" == *"$never"* ]]; then
		echo "the answer or the log holds '$never': $out"
	elif [ -n "$missing" ] || [ "$kept_before" != "$kept_after" ]; then
		echo "a path that must stay changed or went:${missing:- (its content changed)}"
	elif [ -n "$present" ]; then
		echo "a path that must go is still there:$present"
	elif [ -n "$control" ] && [ "$want_exit" != 0 ]; then
		echo "a control case must want exit 0, not '$want_exit'"
	elif [ -z "$control" ] && [ "$before" != "$after" ]; then
		echo "the node's tree changed:"
		diff <(printf '%s\n' "$before") <(printf '%s\n' "$after") | head -20
	else
		return 0
	fi
	return 1
}

run_one() { # KIND FILE
	local name why x
	name=$(basename "$(dirname "$2")")/$(basename "${2%.*}")
	why=$("$1" "$2" 2>&1)
	local rc=$?
	x=$(xfail_of "$name")
	if [ -n "$x" ]; then
		if [ "$rc" -ne 0 ]; then
			echo "XFAIL $name (expected to fail until merged: $x)"
			printf '%s\n' "$why" | sed 's/^/    /' | head -5
			xfails+=("$name: $x")
		else
			fail "XPASS $name: it passes now; remove its line from $here/xfail.list ($x)"
		fi
	elif [ "$rc" -eq 0 ]; then
		ok "$name"
	else
		fail "$name: $why"
	fi
}

want_case() { # NAME: true when no names were given or NAME is one of them
	[ ${#only[@]} -eq 0 ] && return 0
	local o
	for o in "${only[@]}"; do [ "$o" = "$1" ] && return 0; done
	return 1
}

only=("$@")
for y in "$here"/spec/*.yaml; do
	want_case "spec/$(basename "$y" .yaml)" && run_one spec_case "$y"
done
for c in "$here"/request/*.case; do
	want_case "request/$(basename "$c" .case)" && run_one request_case "$c"
done
# every xfail.list line names a case that exists
while read -r name _; do
	case $name in ''|'#'*) continue ;; esac
	case $name in
	e2e/*)	# a check of the lab scenario tests/e2e/scenarios/safety.sh
		grep -qE "^(refused|xcheck) ${name#e2e/} " tests/e2e/scenarios/safety.sh ||
			fail "xfail.list names '$name', which is no check of tests/e2e/scenarios/safety.sh" ;;
	*)	[ -f "$here/$name.yaml" ] || [ -f "$here/$name.case" ] ||
			fail "xfail.list names '$name', which is no case" ;;
	esac
done < "$here/xfail.list"

if [ ${#xfails[@]} -gt 0 ]; then
	echo "XFAIL: ${#xfails[@]} case(s) NOT passing, expected to fail until their branch is merged:"
	printf '  XFAIL %s\n' "${xfails[@]}"
	# shellcheck disable=SC2034 # read by tap_done
	TAP_NAME="safety (${#xfails[@]} XFAIL, not passed)"
fi
tap_done "$build/check/safety.counts"
