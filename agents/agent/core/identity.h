/* SPDX-License-Identifier: MIT */
/*
 * The agent's identity, as `version` reports it: the SHA-256 of the
 * running binary. Hashing 5 MB on every call is what a converged node
 * paid most for, so the push seals the agent instead: `seal` hashes it
 * once, checks the digest against the one the controller sent, and writes
 * a sidecar (LN_PROTO_AGENT_ID_SUFFIX) with the digest and the file's
 * size, mtime, ctime, inode and device. `version` trusts the sidecar only
 * while all of them match the running file; any change (a rewrite, a
 * replacement, a touch: ctime cannot be set back) makes it hash again.
 */
#ifndef LN_AGENT_IDENTITY_H
#define LN_AGENT_IDENTITY_H

#include "common/buf.h"

/* The running agent's SHA-256 into hex; *source gets "sidecar" or
 * "hashed". Returns 0 or a negative code. */
int ln_identity_sha256(char hex[65], const char **source);

/* Hash the running agent, compare with want (64 hex digits), and write
 * the sidecar next to it atomically. -EBADMSG when the digests differ
 * (the upload is corrupt), with both in err. */
int ln_identity_seal(const char *want, struct ln_buf *err);

#endif
