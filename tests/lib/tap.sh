# SPDX-License-Identifier: MIT
#
# The shell test library: one set of assertion helpers and one closing line
# for every shell tier (unit, spec, agent, lint, cluster, e2e and each e2e
# scenario). Source it, then:
#
#   tap_init NAME             reset the counts; NAME opens the closing line
#   ok DESC                   one assertion passed   ("ok 3 - DESC")
#   fail DESC                 one assertion failed   ("not ok 4 - DESC")
#   check DESC EXPECTED ACTUAL      passes when the two strings are equal
#   check_cmd DESC COMMAND [ARG...] passes when COMMAND exits 0
#   tap_count PASSED FAILED   add counts made elsewhere (cmocka binaries)
#   tap_done [COUNTS]         list the failed assertions, write "PASSED
#                             FAILED" to the file COUNTS (scripts/check.sh
#                             reads it), print the closing line
#                             "NAME: N passed, N failed" and return 0 only
#                             when nothing failed and something passed
#
# TAP_GROUP, when set, prefixes each failure in the closing list (the
# cluster tier sets it to the scenario's name). TAP_QUIET=1 prints no line
# for a passed assertion (failures are always printed). The lines follow
# TAP (https://testanything.org) without its plan line: the number of
# assertions is known only at the end. TAP_CLOCK=1 (the e2e runner sets it)
# ends each line with the seconds since the one before ("[+12.3 s]"), so
# every CI log shows where a scenario's time goes.

tap_init() {
	TAP_NAME=${1:-}
	TAP_PASS=0
	TAP_FAIL=0
	TAP_STEP=0
	TAP_FAILURES=()
	TAP_LAST=${EPOCHREALTIME:-0}
}

# TAP_SINCE: " [+N.N s]" since the last assertion when TAP_CLOCK=1, else
# "" (set in this shell, not printed from a subshell, so the clock moves)
tap_clock() {
	local now=${EPOCHREALTIME:-0} us

	TAP_SINCE=
	[ "${TAP_CLOCK:-0}" = 1 ] || return 0
	us=$(( 10#${now/./} - 10#${TAP_LAST/./} ))
	TAP_LAST=$now
	TAP_SINCE=$(printf ' [+%d.%d s]' $((us / 1000000)) $((us % 1000000 / 100000)))
}

ok() {
	TAP_STEP=$((TAP_STEP + 1))
	TAP_PASS=$((TAP_PASS + 1))
	tap_clock
	[ "${TAP_QUIET:-0}" = 1 ] || echo "ok $TAP_STEP - $*$TAP_SINCE"
}

fail() {
	TAP_STEP=$((TAP_STEP + 1))
	TAP_FAIL=$((TAP_FAIL + 1))
	TAP_FAILURES+=("${TAP_GROUP:+$TAP_GROUP: }$*")
	tap_clock
	echo "not ok $TAP_STEP - $*$TAP_SINCE"
}

check() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		fail "$1: expected '$2', got '$3'"
	fi
}

check_cmd() {
	local desc=$1

	shift
	if "$@"; then
		ok "$desc"
	else
		fail "$desc"
	fi
}

tap_count() {
	TAP_PASS=$((TAP_PASS + $1))
	TAP_FAIL=$((TAP_FAIL + $2))
}

tap_done() {
	local counts=${1:-}

	if [ "$TAP_FAIL" -gt 0 ] && [ ${#TAP_FAILURES[@]} -gt 0 ]; then
		echo "failed:"
		printf '  %s\n' "${TAP_FAILURES[@]}"
	fi
	if [ -n "$counts" ]; then
		mkdir -p "$(dirname "$counts")"
		echo "$TAP_PASS $TAP_FAIL" > "$counts"
	fi
	echo "${TAP_NAME:+$TAP_NAME: }$TAP_PASS passed, $TAP_FAIL failed"
	[ "$TAP_FAIL" -eq 0 ] && [ "$TAP_PASS" -gt 0 ]
}

tap_init
