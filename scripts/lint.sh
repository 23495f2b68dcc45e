#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make lint, the `lint` tier of make check: scripts/lint.sh LINT_BUILD [COUNTS]
#  1. cppcheck over every C source (agreed false positives in
#     scripts/cppcheck.supp, each with its reason): each finding fails;
#  2. a DEVELOPER=1 (-Werror) build of everything (`make lint-everything`:
#     programs, probes, unit tests, fuzzer, benchmarks) in LINT_BUILD, apart
#     from build/, so it never disturbs the normal build;
#  3. every C source in the tree is compiled or shipped by a rule of that
#     build, so a moved or new file cannot silently drop out of it;
#  4. the shell test library (tests/lib/tap.sh) passes its self-test;
#  5. the programs and every probe were built;
#  6. no product file over 800 lines, no test (under tests/) over 1,000, and
#     no function over 100 (scripts/sizes.sh) but the known ones in
#     scripts/sizes.allow, a list that only shrinks;
#  7. no call circle between product files (scripts/callcircles.sh, over
#     the objects of the build of 2) but the known ones in
#     scripts/callcircles.allow, a list that only shrinks;
#  8. scripts/callcircles.sh passes its self-test (tests/lint/callcircles.sh).
# MAKE is the make to run (make's recipe passes its own).
set -u
cd "$(dirname "$0")/.."
. tests/lib/tap.sh
lb=${1:-build/lint} counts=${2:-}
make=${MAKE:-make}
tap_init lint
mkdir -p "$lb"
# every C source of the tree: build folders and hidden ones aside
mapfile -t sources < <(find . \( -path ./build -o -path "./$lb" -o -name '.?*' \) -prune -o \
	-name '*.c' -print | sed 's|^\./||' | sort)

# 1. cppcheck
if ! command -v cppcheck >/dev/null; then
	fail "cppcheck is not installed (make deps: deps/lint.list)"
else
	mkdir -p "$lb/cppcheck"
	cppcheck -q -j2 --std=c11 --library=posix -I. -D_GNU_SOURCE -DLN_VERSION='"lint"' \
		-DFIXTURES_DIR='"tests/fixtures"' -DBUILD_DIR='"build"' \
		--enable=warning,style,performance,portability --inline-suppr \
		--suppressions-list=scripts/cppcheck.supp --cppcheck-build-dir="$lb/cppcheck" \
		--error-exitcode=2 --template='{file}:{line}: {id}: {message}' \
		"${sources[@]}" > "$lb/cppcheck.log" 2>&1
	rc=$?
	n=0
	while IFS= read -r line; do
		fail "cppcheck: $line"
		n=$((n + 1))
	done < <(grep -E '^[^ :]+:[0-9]+: [A-Za-z_]+: ' "$lb/cppcheck.log")
	if [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then
		fail "cppcheck exited $rc: $(tail -3 "$lb/cppcheck.log" | tr '\n' ' ')"
	elif [ "$n" -eq 0 ]; then
		ok "cppcheck: no finding in ${#sources[@]} C sources"
	fi
fi

# 2. the warnings-as-errors build
# -k: one run names every file that does not build
if "$make" -k --no-print-directory BUILD="$lb" DEVELOPER=1 lint-everything > "$lb/build.log" 2>&1; then
	ok "DEVELOPER=1 (-Werror) build of everything in $lb"
else
	grep -E 'error|\*\*\*' "$lb/build.log" | head -40
	fail "DEVELOPER=1 (-Werror) build of everything in $lb (see $lb/build.log)"
fi

# 3. no C source outside the build: every one appears in a command of the
# build (a dry run of every rule, -B; one space before each word)
"$make" --no-print-directory -nB V=1 BUILD="$lb" DEVELOPER=1 lint-everything 2>&1 |
	sed 's/\t/ /g; s/^/ /' > "$lb/commands.txt"
missing=0
for f in "${sources[@]}"; do
	if ! grep -qF -- " $f" "$lb/commands.txt"; then
		fail "$f is compiled by no rule of the build (a moved file? see mk/*.mk)"
		missing=$((missing + 1))
	fi
done
[ "$missing" -gt 0 ] || ok "every C source (${#sources[@]}) is compiled or shipped by the build"

# 4. the shell test library every tier uses
check_cmd "tests/lib/tap.sh passes its self-test" tests/lib/selftest.sh

# 5. the programs, and every probe, compiled or shipped as source
for p in llmnet llmnet-agent llmnet-agent-dyn; do
	check_cmd "$lb/$p was built" test -x "$lb/$p"
done
for f in agents/probes/*.c; do
	p=$(basename "$f" .c)
	check_cmd "probe $p was built or shipped" test -x "$lb/probes/$p" -o -f "$lb/probes/$p.c"
done

# 6. the size limits
n=0
while IFS= read -r line; do
	case $line in
	known:*) ;;
	*) fail "size: $line"; n=$((n + 1)) ;;
	esac
done < <(scripts/sizes.sh)
[ "$n" -gt 0 ] || ok "no product file over 800 lines, test over 1,000 or function over 100 but the $(grep -cv '^#' scripts/sizes.allow) in scripts/sizes.allow"

# 7. the call circles
out=$(scripts/callcircles.sh "$lb")
rc=$? n=0
while IFS= read -r line; do
	case $line in
	known:* | '') ;;
	*) fail "$line"; n=$((n + 1)) ;;
	esac
done <<< "$out"
if [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then
	fail "scripts/callcircles.sh exited $rc"
elif [ "$n" -eq 0 ]; then
	ok "no call circle between product files but the $(grep -cv '^#' scripts/callcircles.allow) in scripts/callcircles.allow"
fi

# 8. the call-circle checker finds a circle it is shown, and no other
check_cmd "scripts/callcircles.sh passes its self-test" tests/lint/callcircles.sh

tap_done "$counts"
