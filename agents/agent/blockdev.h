/* SPDX-License-Identifier: MIT */
/*
 * Block devices a namespace may export: a device path from the request
 * (often a link such as /dev/disk/by-id/...) is resolved once under the
 * agent's root, and the resolved device is what is checked and recorded.
 * "In use" is read from sysfs (partitions, holders), procfs (mountinfo by
 * major:minor, mounts, swaps), the device's own first and last blocks (LVM
 * and md signatures, which blkid reads too) and nvmet configfs. Under
 * --root a fixture device is a regular file and its major:minor comes from
 * the fixture's /sys/class/block/<name>/dev; every other check is the same.
 */
#ifndef LN_AGENT_BLOCKDEV_H
#define LN_AGENT_BLOCKDEV_H

#include <limits.h>

#include "agents/agent/agent.h"
#include "common/buf.h"

struct ln_blockdev {
	char path[PATH_MAX];	/* resolved node path, under /dev */
	char name[NAME_MAX + 1];	/* sysfs name: "sda", "nvme0n1", "dm-0" */
	unsigned int major, minor;
	int have_devt;		/* major:minor known (stat, or the fixture's sysfs) */
};

/*
 * Resolve given (a node path) through its links under the root, and check
 * that it stays under /dev and is a block device (on a fixture root: a
 * regular file). 0, or negative with the reason appended to err.
 */
int ln_blockdev_resolve(const struct ln_agent *a, const char *given, struct ln_blockdev *bd,
			struct ln_buf *err);

#endif
