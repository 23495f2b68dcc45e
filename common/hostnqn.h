/* SPDX-License-Identifier: MIT */
/*
 * NQN and host ID rules both binaries apply (hostnqn.c): the agent to every
 * request field before it reaches configfs or a connect string, the
 * controller to the host identity a node reports in its facts, so a value
 * the agent would refuse never reaches another node's request. Each returns
 * 1 for a valid value, 0 otherwise, and prints nothing.
 */
#ifndef LN_HOSTNQN_H
#define LN_HOSTNQN_H

#include <stddef.h>

/* An NQN as the kernel and the spec accept it, and safe as a configfs name. */
int ln_valid_nqn(const char *s);
/* An NQN for this node's host identity, which goes into the kernel's
 * connect option string: ln_valid_nqn and neither ',' nor '='. */
int ln_valid_host_nqn(const char *s);
/* The offset of the first byte of s an NQN may not hold, strlen(s) when
 * none; strict: also ',' and '=' (ln_valid_host_nqn). For messages that
 * name the bad byte without quoting the rest. */
size_t ln_valid_nqn_bad_at(const char *s, int strict);
/* A UUID, 8-4-4-4-12 hex digits (a host ID). */
int ln_valid_uuid(const char *s);

#endif
