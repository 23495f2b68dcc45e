/* SPDX-License-Identifier: MIT */
/*
 * An initiator's mount (mount.c): a connected namespace's block device
 * mounted at the declared path, formatted only when libblkid finds it
 * blank and only with format: if-blank, on a missing or empty directory
 * only. Ownership id: mount PATH, with "device", the mounted device's
 * major:minor: teardown unmounts only while that device is what is
 * mounted there.
 */
#ifndef LN_AGENT_MOUNT_H
#define LN_AGENT_MOUNT_H

struct ln_converge;
struct ln_req_init;

/* Mount in's namespace, block device dev ("/dev/nvme1n1"; NULL in a plan
 * before the connect), at in->mount_path; reported as a mount change. */
void ln_mount_apply(struct ln_converge *cv, const struct ln_req_init *in, const char *dev);
/* Before a new connection whose namespace is to be mounted: the mount
 * point's checks that need no device (the in-use gate's place rules; a
 * mount already there, which cannot be the unconnected namespace's; a
 * link on the way, a directory that is not empty), so that a bad mount
 * point is refused before anything is connected. 0, or negative with the
 * mount reported as refused. */
int ln_mount_precheck(struct ln_converge *cv, const struct ln_req_init *in);
/* Unmount what llmnet mounted and the request no longer asks for (all of
 * it in a teardown), while it is still the device it mounted there. */
void ln_mount_remove(struct ln_converge *cv);

#endif
