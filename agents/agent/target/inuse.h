/* SPDX-License-Identifier: MIT */
/*
 * The in-use gate for files: before an existing file is exported as a
 * namespace (an adopted backing file), the agent asks whether the kernel
 * already uses it, deciding on the file's identity (st_dev, st_ino) as
 * looked at without following a link, never on its path string: active
 * swap (/proc/swaps) and a loop device's backing file
 * (/sys/block/loop*\/loop/backing_file).
 */
#ifndef LN_AGENT_INUSE_H
#define LN_AGENT_INUSE_H

#include <sys/stat.h>

struct ln_agent;
struct ln_buf;

/* 0 when the file at path (st: what is there) is in none of those uses;
 * -EBUSY with err naming path and what holds it. */
int ln_inuse_file(const struct ln_agent *a, const char *path, const struct stat *st,
		  struct ln_buf *err);
/* 0 unless the block device name (sysfs: "nvme1n1") is an NVMe namespace
 * whose controller, or any controller of its multipath subsystem, has a
 * transport other than pcie (tcp, rdma, fc, loop) or none readable: then
 * -EBUSY with err naming given, the controller, transport and subsystem NQN.
 * A namespace imported from a fabric is never exported again. */
int ln_inuse_fabric(const struct ln_agent *a, const char *name, const char *given,
		    struct ln_buf *err);
/* Octal escapes of mountinfo and /proc/swaps ("\040" for a space), in place. */
void ln_inuse_unescape(char *s);

#endif
