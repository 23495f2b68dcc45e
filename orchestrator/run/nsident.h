/* SPDX-License-Identifier: MIT */
/*
 * Stable namespace identity (issue 15): the serial of a target's nvmet
 * subsystem and the uuid and nguid of each of its namespaces, derived from
 * the cluster name, the subsystem NQN and the nsid alone, so that the same
 * spec gives the same identity on every apply and after any reboot, with
 * no state needed to recompute it. nvmet would otherwise make them up at
 * random each time the object is created, and a host that reconnects to
 * a namespace whose ids changed drops it from under its mount.
 *
 *   serial = hex(SHA-256("llmnet/<cluster>/<nqn>")[0..8))        16 chars
 *   h      = SHA-256("llmnet/<cluster>/<nqn>/<nsid>")
 *   uuid   = h[0..16) as an RFC 9562 version 8 UUID, 8-4-4-4-12 lower case
 *   nguid  = h[16..32) in the same 8-4-4-4-12 form (how nvmet's
 *            device_nguid reads back)
 */
#ifndef LN_NSIDENT_H
#define LN_NSIDENT_H

#include <stddef.h>
#include <stdint.h>

struct ln_buf;
struct ln_spec;

#define LN_SERIAL_LEN 16	/* nvmet's attr_serial takes at most 20 ASCII bytes */
#define LN_UUID_LEN 36

void ln_nsident_serial(const char *cluster, const char *nqn, char out[LN_SERIAL_LEN + 1]);
void ln_nsident_ns(const char *cluster, const char *nqn, uint32_t nsid, char uuid[LN_UUID_LEN + 1],
		   char nguid[LN_UUID_LEN + 1]);

/*
 * `apply --accept-device NODE:PATH`: a device: namespace's disk was really
 * replaced, and the agent may pin the disk now at PATH in place of the one
 * first exported there (agents/agent/target/diskid.h). Each word must name
 * a node of spec and the device of a namespace of a target that node
 * exports, as the spec writes it. 0, or -EINVAL with err naming the first
 * word that does not (before any node is contacted).
 */
int ln_nsident_accept_check(const struct ln_spec *spec, char *const *words, size_t n,
			    struct ln_buf *err);
/* 1 when words (checked) name node's device. */
int ln_nsident_accepted(char *const *words, size_t n, const char *node, const char *device);

#endif
