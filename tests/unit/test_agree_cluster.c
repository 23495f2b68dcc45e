/* SPDX-License-Identifier: MIT */
/*
 * Every top-level key of the spec without a program of its own (version,
 * cluster, persist, and the ssh section) has an effect: what lint accepts,
 * the agent and the controller do (agree.h, part 2; the cases in
 * agree_keys.h).
 */
#include "tests/unit/agree_keys.h"

AGREE_KEYS_TEST(cluster)
