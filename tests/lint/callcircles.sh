#!/bin/bash
# SPDX-License-Identifier: MIT
# Self-test of scripts/callcircles.sh, run by make lint: tiny trees of a few
# C files, compiled here, with a known 2-cycle, a known 3-cycle and a
# control without one (a static function of the same name, and a name
# defined in both binaries, must not make a circle), and the allow list's
# rules (a known circle passes, a stale line fails, a missing object fails).
# The trees are written to a temporary folder: the repository holds no C
# file the build does not compile. Exits 0 on pass.
set -u
script=$(cd "$(dirname "$0")/../.." && pwd)/scripts/callcircles.sh
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
expect() {	# DESCRIPTION WANTED GOT
	[ "$2" = "$3" ] || { printf 'callcircles self-test: %s:\nwanted: %s\ngot:    %s\n' "$1" "$2" "$3"; bad=1; }
}

# tree NAME FILE=SOURCE...: writes and compiles a tree in $tmp/NAME
tree() {
	local t=$tmp/$1 f src

	shift
	for arg in "$@"; do
		f=${arg%%=*} src=${arg#*=}
		mkdir -p "$t/$(dirname "$f")" "$t/build/obj/$(dirname "$f")"
		printf '%s\n' "$src" > "$t/$f"
		"$cc" -c -o "$t/build/obj/${f%.c}.o" "$t/$f" || bad=1
	done
	: > "$t/allow"
}
run() {	# NAME [ALLOW LINE...]: the script's output, then "rc=N"
	local t=$tmp/$1

	shift
	printf '%s\n' "$@" > "$t/allow"
	(cd "$t" && "$script" -C . -a allow build)
	echo "rc=$?"
}

# a 2-cycle in the controller: a.c uses ln_b of b.c, b.c uses ln_a of a.c;
# c.c is used by b.c and uses nothing back
tree two \
	'common/a.c=int ln_b(void); int ln_a(void); int ln_a(void) { return ln_b() + 1; }' \
	'orchestrator/b.c=int ln_a(void); int ln_c(void); int ln_b(void);
int ln_b(void) { return ln_c() ? ln_a() : 0; }' \
	'cmd/c.c=int ln_c(void); int ln_c(void) { return 1; }'
expect "a 2-cycle is a circle, and fails" \
	"call circle: common/a.c -> orchestrator/b.c (ln_b) -> back (ln_a)
rc=1" "$(run two)"
expect "a known 2-cycle passes" \
	"known: common/a.c -> orchestrator/b.c (ln_b) -> back (ln_a)
rc=0" "$(run two 'common/a.c -> orchestrator/b.c -> back  # the one')"
expect "a line that no longer applies fails" \
	"known: common/a.c -> orchestrator/b.c (ln_b) -> back (ln_a)
allow: 'orchestrator/b.c -> cmd/c.c -> back' is no longer a call circle: remove it from the list
rc=1" "$(run two 'common/a.c -> orchestrator/b.c -> back' 'orchestrator/b.c -> cmd/c.c -> back')"

# a 3-cycle in the agent, through a table: a.c -> b.c -> c.c -> a.c
tree three \
	'agents/agent/a.c=int ln_b(void); int ln_a(void); int ln_a(void) { return ln_b(); }' \
	'common/b.c=int ln_c(void); int ln_b(void); int ln_b(void) { return ln_c(); }' \
	'agents/agent/c.c=int ln_a(void); int (*const ln_table[])(void) = { ln_a };
int ln_c(void); int ln_c(void) { return 2; }'
expect "a 3-cycle is a circle" \
	"call circle: agents/agent/a.c -> common/b.c (ln_b) -> agents/agent/c.c (ln_c) -> back (ln_a)
rc=1" "$(run three)"

# the control: the same calls one way only. s.c's static ln_b is its own
# (found first, it must not stand for b.c's); ln_d is defined in the agent
# and ln_b in the controller, so b.c -> d.c and d.c -> b.c are no calls:
# they never link together
tree none \
	'common/a.c=int ln_b(void); int ln_a(void); int ln_a(void) { return ln_b() + 1; }' \
	'orchestrator/b.c=int ln_d(void); int ln_b(void); int ln_b(void) { return ln_d(); }' \
	'agents/agent/d.c=int ln_b(void); int ln_d(void); int ln_d(void) { return ln_b(); }' \
	'cmd/s.c=int ln_a(void); static int ln_b(void) { return 3; } int ln_s(void);
int ln_s(void) { return ln_a() + ln_b(); }'
expect "no circle: one way, a static, two binaries" "rc=0" "$(run none)"

# an object older than its source, or none, stops the check
touch -d '1 hour ago' "$tmp/none/build/obj/common/a.o"
expect "a stale object fails" \
	"callcircles: build/obj/common/a.o is missing or older than common/a.c: build first (make BUILD=build)
rc=2" "$(run none)"
rm "$tmp/none/build/obj/common/a.o"
expect "a missing object fails" \
	"callcircles: build/obj/common/a.o is missing or older than common/a.c: build first (make BUILD=build)
rc=2" "$(run none)"
exit "$bad"
