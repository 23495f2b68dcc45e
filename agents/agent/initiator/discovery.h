/* SPDX-License-Identifier: MIT */
/*
 * discovery.c: an initiator's `discovery: true`. The target's discovery
 * controller is connected (ln_iniops.disc_connect), its discovery log page
 * read (ln_iniops.disc_log, LID 0x70) and the controller deleted again; the
 * log's entries are parsed here, from bytes, and the declared subsystem is
 * looked up in them. The connect is then made from the matching entry.
 * `facts --discovery` reads the same log for validation's devices stage.
 */
#ifndef LN_AGENT_DISCOVERY_H
#define LN_AGENT_DISCOVERY_H

#include <stddef.h>
#include <stdint.h>

#include "common/nvme.h"

struct ln_agent;
struct ln_buf;
struct ln_conn;

#define LN_DISC_NQN LN_NQN_DISCOVERY
#define LN_DISC_LID 0x70
#define LN_DISC_HDR 1024	/* the log's header: genctr, numrec, recfmt */
#define LN_DISC_REC 1024	/* one entry */
#define LN_DISC_MAX_RECS 1024	/* more is refused: no target lists that many */

/* Entry subtypes (NVMe-oF: SUBTYPE). */
#define LN_DISC_SUB_REFERRAL 1	/* another discovery subsystem */
#define LN_DISC_SUB_NVME 2	/* an NVM subsystem: what can be connected */
#define LN_DISC_SUB_CURRENT 3	/* this discovery subsystem itself */

struct ln_disc_entry {
	unsigned trtype, adrfam, subtype, treq, portid, cntlid;
	char transport[16];	/* "tcp", "rdma", "fc", "loop", else "trtype N" */
	char trsvcid[33];	/* the padding stripped */
	char traddr[257];
	char subnqn[257];
};

struct ln_disc_log {
	uint64_t genctr;
	size_t n;
	struct ln_disc_entry *v;
};

/* Parse a whole log page (header and its numrec entries) of len bytes.
 * A page shorter than its numrec says, or numrec over LN_DISC_MAX_RECS, is
 * -EPROTO with err. out is the caller's; ln_disc_log_release frees it. */
int ln_disc_parse(const unsigned char *buf, size_t len, struct ln_disc_log *out,
		  struct ln_buf *err);
void ln_disc_log_release(struct ln_disc_log *l);

/* Read len bytes of the log at offset off into buf: the transport. */
typedef int (*ln_disc_read_fn)(void *ctx, uint64_t off, void *buf, size_t len,
			       struct ln_buf *err);

/* Read the log as nvme-cli does: the header, then header and entries, then
 * the header again; a generation counter that moved means the log changed
 * while read, so it is read again (3 tries, then -EAGAIN). */
int ln_disc_read(ln_disc_read_fn fn, void *ctx, struct ln_disc_log *out, struct ln_buf *err);

/* The index of the NVM subsystem entry for nqn at transport, address
 * (compared parsed, as IPv4/IPv6) and service (compared as a number), or
 * -ENOENT. Referral and current-discovery entries never match. */
int ln_disc_match(const struct ln_disc_log *l, const char *nqn, const char *transport,
		  const char *address, const char *service);

/* What the log lists, for a message: "'NQN' at tcp 10.0.0.1:4420, ..." or
 * "no subsystem". */
void ln_disc_describe(const struct ln_disc_log *l, struct ln_buf *out);

/*
 * Discovery for the connect cn: connect the discovery controller at cn's
 * transport, address and service with cn's host NQN and ID, read its log,
 * delete the controller (always, also after an error), and find cn's
 * subsystem in the log. hit gets the matching entry. 0; -ENOENT when the
 * log does not list it there (err names node, NQN and what it listed);
 * another negative code when discovery itself failed (err).
 */
int ln_disc_find(struct ln_agent *a, const struct ln_conn *cn, struct ln_disc_entry *hit,
		 struct ln_buf *err);

/* `facts --discovery TRANSPORT,ADDRESS,SERVICE,NQN`: split s (modified in
 * place) into cn's transport, traddr, trsvcid and subsysnqn, pointing into
 * s. The transport is tcp or rdma, the address numeric IPv4/IPv6, the
 * service 1-65535, the NQN valid and not the discovery NQN; else -EINVAL. */
int ln_disc_parse_place(char *s, struct ln_conn *cn);

/*
 * `facts --discovery`: for each of the n places (as ln_disc_parse_place
 * made them), the log of the discovery controller there, read with this
 * node's host NQN and ID as an initiator's apply reads it, its controller
 * deleted again; or why none was read (no identity, or one that is not
 * valid: ln_host_identity). Judges nothing: the answer (*out, the
 * caller's) lists every entry (docs/agent-protocol.md).
 */
struct json_object;
int ln_disc_facts(struct ln_agent *a, const struct ln_conn *places, size_t n,
		  struct json_object **out);

#endif
