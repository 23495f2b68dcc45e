/* SPDX-License-Identifier: MIT */
/*
 * What a device namespace's pinned identity is made of beside the disk's
 * own id (blockdev.h, ln_blockdev_stable_id): the transport of the disk's
 * controller, so that the pin says "this local disk" and a namespace
 * imported from a fabric can never stand for it. An NVMe namespace's is
 * "pcie" once the in-use gate (inuse.h, ln_inuse_fabric) finds every one
 * of its controllers local; any other disk's is its bus as sysfs names it
 * (the device's subsystem link: scsi, virtio, ata, ...), and a disk with
 * no device behind it (dm, md, loop) is "virtual", as /sys/devices names
 * it. The pin reads "TRANSPORT:KIND:VALUE" ("pcie:wwid:eui.00a1...");
 * llmnet before transports pinned "KIND:VALUE".
 */
#ifndef LN_AGENT_DISKID_H
#define LN_AGENT_DISKID_H

#include <stddef.h>

struct ln_agent;
struct ln_buf;

/*
 * The transport of the disk whose sysfs directory is diskdir (a node
 * path; a partition's disk: "/sys/class/block/sda1/..") into tr. 0; or
 * -EBUSY (a fabric namespace, err from ln_inuse_fabric) or -ENODEV (a
 * device whose bus cannot be read), with err naming given.
 */
int ln_diskid_transport(const struct ln_agent *a, const char *diskdir, const char *given,
			char *tr, size_t n, struct ln_buf *err);

/* How a pin recorded at first export (was) and the identity found now
 * (now, always with its transport) compare. */
enum ln_diskid_match {
	LN_DISKID_OTHER = -1,	/* another disk, or the same id over another transport */
	LN_DISKID_SAME = 0,
	/* an old pin without transport whose id is now's: the same disk, to
	 * be pinned again with its transport (the gate has checked it) */
	LN_DISKID_UPGRADE = 1,
};
enum ln_diskid_match ln_diskid_compare(const char *was, const char *now);

/* 1 when id carries a transport (a pin of this llmnet), 0 for an old pin. */
int ln_diskid_has_transport(const char *id);

#endif
