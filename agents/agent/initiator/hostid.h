/* SPDX-License-Identifier: MIT */
/*
 * The node's NVMe host identity (hostid.c), not llmnet's: the host NQN in
 * LN_HOSTNQN_FILE and the host ID in LN_HOSTID_FILE. Read by facts, the
 * discovery verb and every connect; made by apply only where a file is
 * missing, and never rewritten or removed (teardown keeps it).
 */
#ifndef LN_AGENT_HOSTID_H
#define LN_AGENT_HOSTID_H

#include <stddef.h>

struct ln_agent;
struct ln_buf;
struct ln_converge;

#define LN_HOSTNQN_FILE "/etc/nvme/hostnqn"
#define LN_HOSTID_FILE "/etc/nvme/hostid"

/* LN_HOSTNQN_FILE into nqn and LN_HOSTID_FILE into id, trimmed; empty
 * where the file is missing or holds only white space. One that holds
 * anything else than a valid host NQN (ln_valid_host_nqn) or a UUID:
 * -EINVAL, err naming the file, the offset and the bad byte (or what is
 * wrong), quoting nothing of it; nqn and id empty. */
int ln_host_identity(const struct ln_agent *a, struct ln_buf *nqn, struct ln_buf *id,
		     struct ln_buf *err);
/* Apply's host identity: make the files that are missing (a host NQN from
 * ln_iniops.hostnqn_generate, the host ID from its UUID), reported as
 * host_identity; the host NQN into hostnqn (nlen bytes) and the host ID
 * into hostid (ilen), "" in a plan where they are still to be made. A file
 * there but not valid: refused, nothing written (negative). */
int ln_host_identity_ensure(struct ln_converge *cv, char *hostnqn, size_t nlen, char *hostid,
			    size_t ilen);

#endif
