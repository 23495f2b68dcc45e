#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Run end-to-end scenarios against ONE boot of the QEMU lab.
#
#   tests/e2e/run.sh [--tier NAME] [-n N] [--keep|--down] [--list] [SCENARIO...]
#
# A scenario is tests/e2e/scenarios/NAME.sh: it sources tests/lab/lib.sh,
# prints its own step lines, checks real state inside the guests over ssh
# and exits 0 on pass. Its header line "# images: 6.1 6.12" names the lab
# images it runs on. The image is LLMNET_LAB_KERNEL's (lib.sh; make's
# KERNEL=), exported to the scenarios as $LAB_KERNEL. With no names, every
# scenario of that image runs, the lab's own smoke test ("lab") first, the
# rest in name order; naming a scenario of another image is an error.
# --list prints the scenarios that would run and exits.
#
# The machine-wide lab lock is held throughout, so two sessions never drive
# one lab at once. A lab that is already up and healthy with N guests, made
# from this tree's current image, is reused and left up; otherwise the lab is
# built (if needed) and booted with new machines (lab-up --fresh), and taken
# down at the end unless --keep. --down takes it down in any case.
# A lab that cannot be built or booted is a failure, never a skip: every
# scenario then counts as failed.
#
# Counts (scenarios passed, failed) go to $BUILD/check/NAME.counts (NAME
# defaults to e2e); each scenario's output also to $BUILD/check/e2e/NAME.log.
# LLMNET_E2E_TIMEOUT bounds each scenario (default 1200 s).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lab/lib.sh"
. "$here/../lib/tap.sh"
cd "$LAB_REPO"

tier=e2e n=${LLMNET_LAB_N:-3} keep=auto names=() list=0
while [ $# -gt 0 ]; do
	case $1 in
	--tier) tier=${2:-}; shift 2 ;;
	-n) n=${2:-}; shift 2 ;;
	--keep) keep=yes; shift ;;
	--down) keep=no; shift ;;
	--list) list=1; shift ;;
	-h | --help) sed -n '4,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) lab_die "unknown option '$1' (tests/e2e/run.sh --help)" ;;
	*) names+=("$1"); shift ;;
	esac
done
case $tier in '' | .* | *[!a-z0-9._-]*) lab_die "invalid tier name '$tier'" ;; esac
case $n in [2-4]) ;; *) lab_die "invalid guest count '$n': the lab runs 2 to 4 guests" ;; esac

# runs_on NAME: the scenario's "# images:" line names this lab's image
runs_on() {
	local images k
	images=$(sed -n '1,20s/^# images:[[:space:]]*//p' "$here/scenarios/$1.sh" | head -1)
	[ -n "$images" ] || lab_die "scenario '$1' has no '# images:' line (tests/e2e/scenarios/$1.sh)"
	for k in $images; do [ "$k" = "$LAB_KERNEL" ] && return 0; done
	return 1
}
if [ ${#names[@]} -eq 0 ]; then
	for f in "$here/scenarios/lab.sh" "$here"/scenarios/*.sh; do
		[ -f "$f" ] || continue
		s=${f##*/}
		s=${s%.sh}
		case " ${names[*]} " in *" $s "*) continue ;; esac
		runs_on "$s" && names+=("$s")
	done
	[ ${#names[@]} -gt 0 ] || lab_die "no scenario runs on the $LAB_KERNEL image"
fi
for s in "${names[@]}"; do
	case $s in '' | *[!A-Za-z0-9_-]*) lab_die "invalid scenario name '$s'" ;; esac
	[ -f "$here/scenarios/$s.sh" ] || lab_die "no scenario '$s' (tests/e2e/scenarios/$s.sh)"
	runs_on "$s" || lab_die "scenario '$s' does not run on the $LAB_KERNEL image (its '# images:' line)"
done
if [ "$list" = 1 ]; then
	echo "$LAB_KERNEL: ${names[*]}"
	exit 0
fi

build=${BUILD:-build}
logs=$build/check/e2e
mkdir -p "$logs"
counts=$build/check/$tier.counts
# "WHAT SECONDS" per line, for make check's time table (scripts/check.sh)
times=$build/check/$tier.times
rm -f "$counts" "$times"
timed() { printf '%s %s\n' "$1" "$2" >>"$times"; }
tap_init "$tier"
results=()
finish() {
	echo "=== e2e summary"
	printf '  %s\n' "${results[@]}"
	tap_done "$counts"
	exit
}

t_all=$(lab_now)
lab_lock
# the lock also waits for make check's background image build
timed "lab lock (and image build)" "$(lab_since "$t_all")"
# Under the lock nobody is using the lab, so a lab left up from another lab
# directory (another checkout's cache) may be stopped: it holds the ports.
if [ -s "$LAB_ACTIVE" ] && [ "$(cat "$LAB_ACTIVE")" != "$LAB_DIR" ]; then
	other=$(cat "$LAB_ACTIVE")
	lab_log "stopping the lab left up from '$other'"
	LLMNET_LAB_DIR=$other "$LAB_SRC/lab-down" ||
		lab_die "cannot stop the lab left up from '$other'"
fi
owned=0
# A lab that is up is reused only if it runs this tree's image: guests made
# from another tree's image would test other guest code.
if lab_is_up && [ "$LAB_N" = "$n" ] && "$LAB_SRC/build-image" --check >/dev/null 2>&1 &&
	lab_runs_current_image && lab_healthy; then
	echo "=== reusing the lab that is up ($n guests, $LAB_DIR)"
else
	if lab_is_up; then
		lab_log "the lab that is up is unhealthy, runs another image or has $LAB_N guests, not $n: restarting it"
		"$LAB_SRC/lab-down" || true
	fi
	echo "=== booting the lab ($n guests, kernel $LAB_KERNEL)"
	t=$(lab_now)
	# new machines: nothing an earlier run left on their disks (a replaced
	# guest's key, a hostfile) reaches these scenarios
	if ! "$LAB_SRC/lab-up" -n "$n" --fresh; then
		tap_count 0 ${#names[@]}
		for s in "${names[@]}"; do results+=("FAIL $s: not run, the lab did not come up"); done
		finish
	fi
	owned=1
	results+=("lab image and boot: $(lab_since "$t")s")
	timed "lab image and boot" "$(lab_since "$t")"
	# lab-up ran in a child: read what it recorded
	LAB_N=$(cat "$LAB_RUN/nodes")
fi

# every scenario's assertion lines carry the seconds since the one before
# (tests/lib/tap.sh), the profile behind the time table's scenario line
export TAP_CLOCK=1
for s in "${names[@]}"; do
	echo "=== scenario $s"
	t=$(lab_now)
	timeout -k 10 "${LLMNET_E2E_TIMEOUT:-1200}" bash "$here/scenarios/$s.sh" 2>&1 |
		tee "$logs/$s.log"
	rc=${PIPESTATUS[0]}
	dt=$(lab_since "$t")
	timed "scenario $s" "$dt"
	if [ "$rc" = 0 ]; then
		tap_count 1 0
		results+=("PASS $s (${dt}s)")
	elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		tap_count 0 1
		results+=("FAIL $s: timed out after ${LLMNET_E2E_TIMEOUT:-1200}s")
	else
		tap_count 0 1
		results+=("FAIL $s (exit $rc, ${dt}s)")
	fi
	echo "=== scenario $s: $([ "$rc" = 0 ] && echo PASS || echo FAIL) in ${dt}s"
done

if [ "$keep" = no ] || { [ "$keep" = auto ] && [ "$owned" = 1 ]; }; then
	t=$(lab_now)
	"$LAB_SRC/lab-down"
	rc=$?
	timed "lab down" "$(lab_since "$t")"
	if [ "$rc" != 0 ]; then
		tap_count 0 1
		results+=("FAIL lab-down did not leave a clean machine")
	fi
else
	echo "=== leaving the lab up (tests/lab/lab-down stops it)"
fi
results+=("total $(lab_since "$t_all")s")
finish
