/* SPDX-License-Identifier: MIT */
/*
 * The in-use gate: the one place the agent's in-use rules live. Before an
 * existing file is exported as a namespace (an adopted backing file), the
 * agent asks whether the kernel already uses it, deciding on the file's
 * identity (st_dev, st_ino) as looked at without following a link, never
 * on its path string: active swap (/proc/swaps) and a loop device's
 * backing file (/sys/block/loop*\/loop/backing_file). A block device
 * (blockdev.c's caller) is asked the same of swap, and of holders and
 * signatures; an NVMe namespace of its transport.
 */
#ifndef LN_AGENT_INUSE_H
#define LN_AGENT_INUSE_H

#include <limits.h>
#include <sys/stat.h>

struct ln_agent;
struct ln_buf;
struct ln_state;

/* 0 when the file at path (st: what is there) is in none of those uses;
 * -EBUSY with err naming path and what holds it. */
int ln_inuse_file(const struct ln_agent *a, const char *path, const struct stat *st,
		  struct ln_buf *err);
/* The kernel's own uses of the block device name (sysfs: "sda2") at the
 * node path devpath (a disk or one of its partitions): an active swap
 * area (the same /proc/swaps walk as files, by device number; a fixture's
 * device is a regular file, by inode), a holder (device-mapper, LVM,
 * dm-crypt, md, bcache: /sys/class/block/NAME/holders), an unassembled
 * LVM PV or md member (its signature, read as blkid reads it). 1 with
 * "SUBJECT is in use as swap (ENTRY in /proc/swaps)", "SUBJECT is held by
 * HOLDER", "SUBJECT is an LVM physical volume (LVM2_member)" appended to
 * why; 0 when none holds it. Mounts are blockdev.c's (its wording). */
int ln_inuse_blockdev(const struct ln_agent *a, const char *subject, const char *name,
		      const char *devpath, struct ln_buf *why);
/* 0 unless the block device name (sysfs: "nvme1n1", or a partition of
 * it: "nvme1n1p1") is an NVMe namespace whose controller, or any controller of its multipath subsystem, has a
 * transport other than pcie (tcp, rdma, fc, loop) or none readable: then
 * -EBUSY with err naming given, the controller, transport and subsystem NQN.
 * A namespace imported from a fabric is never exported again. */
int ln_inuse_fabric(const struct ln_agent *a, const char *name, const char *given,
		    struct ln_buf *err);
/* 1 with disk (n bytes) the disk that the block device name is a
 * partition of (sysfs: /sys/class/block/NAME/partition, the link's
 * directory above; nvme1n1p2's name where a fixture has no link), 0 when
 * name is no partition. */
int ln_inuse_partition_disk(const struct ln_agent *a, const char *name, char *disk, size_t n);
/* A fabric controller behind a namespace, as ln_inuse_fabric_of found it. */
struct ln_inuse_ctrl {
	char ctrl[NAME_MAX + 1];	/* nvme1; "" when the subsystem lists none */
	char sub[NAME_MAX + 1];		/* nvme-subsys2 for a multipath head, else "" */
	char tr[64];			/* tcp, rdma, fc, loop; "" when unreadable */
	char nqn[256];
};
/* 1 with f when the block device name is a namespace ln_inuse_fabric
 * refuses (a fabric or unknown transport), or a partition of one, 0 when
 * it is local. */
int ln_inuse_fabric_of(const struct ln_agent *a, const char *name, struct ln_inuse_ctrl *f);
/* "NVMe controller nvme1 over transport tcp, subsystem NQN" onto out. */
void ln_inuse_ctrl_describe(const struct ln_inuse_ctrl *f, struct ln_buf *out);

/* Octal escapes of mountinfo and /proc/swaps ("\040" for a space), in place. */
void ln_inuse_unescape(char *s);

/*
 * Places (inuse_place.c): before the agent writes a file at path, mounts
 * on it, or runs programs from the folder path, it asks what path is, and
 * below what. The place (or, while it is missing, the nearest directory
 * above it) is opened without links (openat2), and the mount that holds
 * it is the one the kernel says the opened fd lies in (statx
 * STATX_MNT_ID, matched to /proc/self/mountinfo's mount id): by identity,
 * not by its path. Where no mount id can be had (a kernel older than
 * 5.8, a table with only /proc/mounts, a fixture root, whose mount table
 * is a recording), the mount table is followed down the path instead.
 * What is already at the place is compared by identity (st_dev, st_ino).
 */
enum ln_place_use {
	LN_PLACE_FILE,		/* a backing file or hostfile is written there */
	LN_PLACE_MOUNT,		/* a namespace is mounted on it */
	LN_PLACE_PROGRAMS,	/* programs run from the folder */
};

/* One line of the mount table (octal escapes undone). */
struct ln_mount {
	char point[PATH_MAX];
	char source[PATH_MAX];
	char fstype[64];
};

/*
 * The mount that holds the node path path, in text (the mount table as
 * read; mountinfo: 1 for /proc/self/mountinfo's format, 0 for
 * /proc/mounts'): the mount tree followed down the path (a mount at an
 * upper point mounted later hides those below it), so normally the
 * longest mount point equal to path or above it; the last listed of
 * mounts at one point. 1 with m, 0 when none matches.
 */
int ln_inuse_mount_of(const char *text, int mountinfo, const char *path, struct ln_mount *m);

/* The mount whose mountinfo id (the first field) is id, in mountinfo's
 * text; with parent, the mount it is mounted on instead (its second
 * field). 1 with m, 0 when none is listed. */
int ln_inuse_mount_by_id(const char *text, unsigned long long id, int parent,
			 struct ln_mount *m);

/* The class of file system type fstype the gate refuses to build on:
 * "a network file system", "a FUSE file system", or NULL (local). */
const char *ln_inuse_remote_fs(const char *fstype);

/*
 * The gate for a place (what: "backing file", "hostfile", "mount point",
 * "program folder", for messages). Refused (-EBUSY, err naming path, the
 * mount, its source and fstype, and the cluster) when path:
 *  - is a mount point that this cluster did not record (not for programs);
 *  - lies on a file system whose source is a fabric NVMe namespace
 *    (ln_inuse_fabric_of, a partition or device-mapper member of one too),
 *    a network or FUSE file system, or (not for programs) a loop device;
 *  - (st given) lies below, or is, another cluster's recorded mount; is
 *    inside or holds another cluster's mount point, backing file or
 *    hostfile; is (by identity) another cluster's backing file or hostfile;
 *  - (LN_PLACE_FILE) is, by identity, the device_path of a namespace in
 *    nvmet configfs that this cluster does not own (llmnet's or not).
 * st and cluster may be NULL (the run verb). 0 when none holds.
 */
int ln_inuse_place(const struct ln_agent *a, struct ln_state *st, const char *cluster,
		   const char *what, const char *path, enum ln_place_use use,
		   struct ln_buf *err);
/* The gate for running the program file path (absolute): its folder as
 * LN_PLACE_PROGRAMS (every program folder: tests_dir, perftest_dir...). */
int ln_inuse_program_file(const struct ln_agent *a, const char *path, struct ln_buf *err);

#endif
