/* SPDX-License-Identifier: MIT */
/*
 * Every key of the nodes section (a node, its RDMA ports and rails) has
 * an effect: what lint accepts, the agent and the controller do (agree.h,
 * part 2; the cases in agree_keys.h).
 */
#include "tests/unit/agree_keys.h"

AGREE_KEYS_TEST(nodes)
