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
#include <sys/types.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/request.h"
#include "common/buf.h"

struct ln_blockdev {
	char path[PATH_MAX];	/* resolved node path, under /dev */
	char name[NAME_MAX + 1];	/* sysfs name: "sda", "nvme0n1", "dm-0" */
	unsigned int major, minor;
	int have_devt;		/* major:minor known (stat, or the fixture's sysfs) */
	int fd;			/* -1, or the open device (ln_blockdev_claim) */
	dev_t dev, rdev;	/* of the open device: its inode's device, its number */
	ino_t ino;
};

/*
 * Resolve given (a node path) through its links under the root, and check
 * that it stays under /dev and is a block device (on a fixture root: a
 * regular file). 0, or negative with the reason appended to err.
 */
int ln_blockdev_resolve(const struct ln_agent *a, const char *given, struct ln_blockdev *bd,
			struct ln_buf *err);

/*
 * Refuse a device that is in use: it, a partition or a holder of it is
 * mounted, is swap, is an LVM PV or md member, or it backs another
 * namespace of rq (skipping self) or of the node's nvmet configfs (skipping
 * nqn/nsid). 0 when free; -EBUSY with the message appended to err (naming
 * given and what holds it); other negative codes on read errors.
 */
int ln_blockdev_check_free(const struct ln_agent *a, const struct ln_blockdev *bd,
			   const char *given, const struct ln_request *rq,
			   const struct ln_req_ns *self, const char *nqn, struct ln_buf *err);

/*
 * Open the resolved device with O_EXCL and keep it open (bd->fd): the
 * kernel's own in-use check (EBUSY while it is mounted, or held by dm, md
 * or another exclusive opener), in addition to ln_blockdev_check_free's
 * sysfs and procfs reads. The fd's major:minor must be the one resolved.
 * 0, or negative with the reason (naming given) appended to err.
 */
int ln_blockdev_claim(const struct ln_agent *a, struct ln_blockdev *bd, const char *given,
		      struct ln_buf *err);

/*
 * Just before the device's path is written (nvmet device_path): the path
 * must still name the device held open by ln_blockdev_claim (its st_rdev;
 * on a fixture, its inode). 0, or -ESTALE with the reason in err.
 */
int ln_blockdev_recheck(const struct ln_agent *a, const struct ln_blockdev *bd,
			const char *given, struct ln_buf *err);

/* Close what ln_blockdev_claim opened (safe to call again). */
void ln_blockdev_release(struct ln_blockdev *bd);

/*
 * What is mounted at the node path mp (the topmost mount there, from
 * mountinfo; on a fixture root from /proc/mounts, its source resolved):
 * 1 with src (path: the source as the mount table names it; major:minor
 * when known), 0 when nothing is mounted there.
 */
int ln_blockdev_mounted_at(const struct ln_agent *a, const char *mp, struct ln_blockdev *src);

/* 1 when x and y are the same device: by major:minor when both know it,
 * else by resolved path. */
int ln_blockdev_same(const struct ln_blockdev *x, const struct ln_blockdev *y);

/*
 * The device's stable identity, the same after a reboot and whatever its
 * /dev name: its transport (diskid.h: "pcie", "scsi", "virtio",
 * "virtual"...), then "wwid:VALUE" (the kernel's WWID of an NVMe namespace
 * or a SCSI disk), "dm:UUID", "serial:VALUE" (virtio-blk, ...), else
 * "by-id:NAME" (a /dev/disk/by-id link to it); a partition's is its
 * disk's with "/partN": "pcie:wwid:eui.0025...". 0; -ENOENT when the
 * device has no id (err untouched); -EBUSY or -ENODEV when its transport
 * is a fabric's or cannot be read (err names given and why).
 */
int ln_blockdev_stable_id(const struct ln_agent *a, const struct ln_blockdev *bd, const char *given,
			  char *out, size_t outlen, struct ln_buf *err);

/* A device's identity for the state file: "major:minor", else its path. */
void ln_blockdev_id(const struct ln_blockdev *bd, char *out, size_t outlen);

#endif
