/* SPDX-License-Identifier: MIT */
/*
 * The devices stage's GPU health checks (stage_gpu.c), from NVML's facts
 * (facts.gpus.devices, the GPU facts program's), and its GPUDirect
 * Storage readiness checks (stage_gds.c).
 */
#ifndef LN_VALIDATE_STAGE_GPU_H
#define LN_VALIDATE_STAGE_GPU_H

#include <stddef.h>

struct vctx;

/*
 * One check per GPU of node i's NVML facts, named "gpu INDEX (BUS_ID)": a
 * pending or failed row remap, a volatile uncorrected ECC count above 0,
 * fewer NVLinks up than the GPU has, or an NVML error fails it; a field
 * NVML does not support (null) is reported in the reason, not failed. No
 * check when the node's facts are not NVML's (the count check says why).
 * 0 or -ENOMEM.
 */
int vs_devices_gpu_health(struct vctx *c, size_t i);

/* One check per initiator of node i with gds: true, named "gds NQN"
 * (stage_gds.c): nvidia_fs, the open kernel modules and the live
 * transport judged, cufile.json reported. 0 or -ENOMEM. */
int vs_devices_gds(struct vctx *c, size_t i);

#endif
