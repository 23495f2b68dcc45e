/* SPDX-License-Identifier: MIT */
/*
 * NVMe names both binaries check: the controller in lint and plan, the
 * agent again in every request, so the two ends cannot disagree on them.
 */
#ifndef LN_NVME_H
#define LN_NVME_H

/* The longest NQN the NVMe base specification allows, in bytes: a configfs
 * name (subsystems/<nqn>, hosts/<nqn>) and the spec take this many. The
 * kernel's fabrics option parser takes one byte less (NVMF_NQN_SIZE is the
 * buffer with its NUL), so an NQN that goes into a connect string is at
 * most LN_NQN_MAX - 1. */
#define LN_NQN_MAX 223
/* The well-known discovery subsystem: no cluster owns it. */
#define LN_NQN_DISCOVERY "nqn.2014-08.org.nvmexpress.discovery"

#endif
