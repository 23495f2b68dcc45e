/* SPDX-License-Identifier: MIT */
/*
 * The facts verb's GPU facts from NVML (gpu_nvml.c): the GPU facts program
 * llmnet pushed (agents/probes/gpu_facts.c), checked by SHA-256 and run
 * under a bound with no environment, its JSON checked field by field.
 */
#ifndef LN_AGENT_GPU_NVML_H
#define LN_AGENT_GPU_NVML_H

#include <json-c/json.h>

struct ln_agent;

/* The most GPUs, and NVLinks per GPU, a facts answer carries. */
#define LN_GPU_NVML_MAX 64
#define LN_GPU_NVML_NVLINKS_MAX 18

/*
 * Fill gpus (the facts' "gpus" object, already holding count, models and
 * source from /proc or /dev) from NVML when the node shows GPUs (seen > 0)
 * and the program is installed: then source is "nvml", count and models
 * are NVML's, and driver_version, cuda_version and devices are added
 * (docs/agent-protocol.md, "gpus"). Otherwise gpus keeps what it has and
 * its "nvml" says why NVML was not used. "program" says whether the
 * program is "installed", "absent" or "mismatch" (another build: the
 * controller pushes its own), or null when it was not looked at.
 */
void ln_gpu_nvml_facts(const struct ln_agent *a, int seen, struct json_object *gpus);

#endif
