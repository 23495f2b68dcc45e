/* SPDX-License-Identifier: MIT */
/*
 * What the two ln_fsops tables share (fsops.c, the real node, and
 * fixture/fsops_fixture.c, the --root fake): private to them.
 */
#ifndef LN_AGENT_FSOPS_H
#define LN_AGENT_FSOPS_H

struct ln_buf;

/* Append "cannot WHAT 'PATH': strerror(e)" to err; returns -e. */
int ln_fsops_fail(struct ln_buf *err, int e, const char *what, const char *path);
/* Format dev_real (a host path) as ext4 or xfs with mkfs, bounded; 0 or
 * negative with the tool's output in err. */
int ln_fsops_mkfs(const char *dev_real, const char *fs, struct ln_buf *err);

#endif
