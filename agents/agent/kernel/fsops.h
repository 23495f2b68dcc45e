/* SPDX-License-Identifier: MIT */
/*
 * What the two ln_fsops tables share (fsops.c, the real node, and
 * fixture/, the --root fake), defined in fsops_common.c: private to the
 * kernel seam (paths.c words its failures the same way).
 */
#ifndef LN_AGENT_FSOPS_H
#define LN_AGENT_FSOPS_H

#include <sys/mount.h>

struct ln_buf;

/* A file system on a fabric namespace holds bytes that the target node, and
 * any host the target allows, wrote: a setuid file or a device node there
 * must not give root on this node. The fixture records the same options. */
#define LN_FABRIC_MOUNT_FLAGS (MS_NOSUID | MS_NODEV)
/* ... and no program runs from it unless the spec's mount.exec says so. */
#define LN_FABRIC_MOUNT_FLAGS_FOR(exec) (LN_FABRIC_MOUNT_FLAGS | ((exec) ? 0 : MS_NOEXEC))

/* Append "cannot WHAT 'PATH': strerror(e)" to err; returns -e. */
int ln_fsops_fail(struct ln_buf *err, int e, const char *what, const char *path);
/* Format dev_real (a host path) as ext4 or xfs with mkfs, bounded; 0 or
 * negative with the tool's output in err. */
int ln_fsops_mkfs(const char *dev_real, const char *fs, struct ln_buf *err);

#endif
