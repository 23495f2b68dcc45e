/* SPDX-License-Identifier: MIT */
/* `facts --counters` (counters.c): RDMA ports' error counters, read only. */
#ifndef LN_AGENT_COUNTERS_H
#define LN_AGENT_COUNTERS_H

#include <stddef.h>
#include <json-c/json.h>

struct ln_agent;

/* The error counters of the n ports ("rxe0/1"), each through its driver's
 * name table; nothing else is read. The answer into *out (the caller's). */
int ln_counters_collect(struct ln_agent *a, char *const *ports, size_t n,
			struct json_object **out);
/* "rxe0/1" into dev (size bytes) and port; 0, or -EINVAL. */
int ln_counters_parse_port(const char *s, char *dev, size_t size, unsigned *port);

#endif
