#!/bin/bash
# SPDX-License-Identifier: MIT
# The docs tier: tests/docs/run.sh [BUILD]. The docs say what the code is:
# the exit codes (exit-codes.sh) and the source layout (layout.sh), one
# count for both in BUILD/check/docs.counts.
set -u
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
tap_init docs
. tests/docs/exit-codes.sh
. tests/docs/layout.sh
tap_done "$build/check/docs.counts"
