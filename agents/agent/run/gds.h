/* SPDX-License-Identifier: MIT */
/*
 * facts.gds (gds.c): what GPUDirect Storage needs on this node and the
 * agent can see, read under the root through the read seams: whether
 * nvidia_fs is loaded, and libcufile's /etc/cufile.json, parsed (JSON
 * with // comments) for the flags llmnet reports. The controller judges
 * (orchestrator/validate/stage_gds.c); the shape is docs/agent-protocol.md's.
 */
#ifndef LN_AGENT_GDS_H
#define LN_AGENT_GDS_H

#include <json-c/json.h>

struct ln_agent;

#define LN_CUFILE_JSON "/etc/cufile.json"

/* The `gds` object (never NULL). */
struct json_object *ln_gds_facts(const struct ln_agent *a);

#endif
