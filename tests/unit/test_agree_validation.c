/* SPDX-License-Identifier: MIT */
/*
 * Every key of the mpi section and of each validation stage has an
 * effect: what lint accepts, the probes' command lines, bounds and
 * verdicts of a validation run on a fake cluster show (agree.h, part 2;
 * the cases in agree_keys.h).
 */
#include "tests/unit/agree_keys.h"

AGREE_KEYS_TEST(validation)
