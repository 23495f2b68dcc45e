/* SPDX-License-Identifier: MIT */
/* The `facts` verb (facts.c): what the node is and holds, read only. */
#ifndef LN_AGENT_FACTS_H
#define LN_AGENT_FACTS_H

#include <stddef.h>
#include <json-c/json.h>

struct ln_agent;
struct ln_buf;

/* The facts answer into *out (the caller's); 0 or negative with err. */
int ln_facts_collect(struct ln_agent *a, struct json_object **out, struct ln_buf *err);

/* The visible namespace block devices (not the hidden nvmeXcYnZ paths)
 * whose subsystem NQN is nqn, sorted; each entry "nvme1n1". Free with
 * ln_names_free. */
int ln_nvme_blocks(const struct ln_agent *a, const char *nqn, char ***names, size_t *n);

/* The netdev holding the numeric address addr (the one facts lists it
 * under) into ifname (size); -ENOENT when none holds it. */
int ln_facts_addr_iface(const struct ln_agent *a, const char *addr, char *ifname, size_t size);

#endif
