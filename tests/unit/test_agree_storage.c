/* SPDX-License-Identifier: MIT */
/*
 * Every key of the storage section (targets with their DH-HMAC-CHAP,
 * TLS, namespaces and hosts; initiators with their discovery and mount)
 * has an effect: what lint accepts, the agent and the controller do
 * (agree.h, part 2; the cases in agree_keys.h).
 */
#include "tests/unit/agree_keys.h"

AGREE_KEYS_TEST(storage)
