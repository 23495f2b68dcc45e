/* SPDX-License-Identifier: MIT */
/*
 * What the two ln_fsops tables share (fsops.h), defined in neither: the
 * node's (fsops.c) and the fixture's (fixture/) both word a failed
 * operation the same way, and format a device with the same bounded mkfs
 * (the fixture's device is a file under --root).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agents/agent/kernel/fsops.h"
#include "agents/agent/run/bounded.h"
#include "common/buf.h"

int ln_fsops_fail(struct ln_buf *err, int e, const char *what, const char *path)
{
	ln_buf_addf(err, "cannot %s '%s': %s", what, path, strerror(e));
	return -e;
}

int ln_fsops_mkfs(const char *dev_real, const char *fs, struct ln_buf *err)
{
	char prog[64];
	const char *argv[6];
	struct ln_exec_result res;
	int r, i = 0;

	if (strcmp(fs, "ext4") && strcmp(fs, "xfs")) {
		ln_buf_addf(err, "unsupported filesystem '%s'", fs);
		return -EINVAL;
	}
	snprintf(prog, sizeof(prog), "/sbin/mkfs.%s", fs);
	if (access(prog, X_OK) < 0)
		snprintf(prog, sizeof(prog), "/usr/sbin/mkfs.%s", fs);
	argv[i++] = prog;
	argv[i++] = "-q";
	/* ext4 asks before formatting a regular file (fixture devices). */
	if (!strcmp(fs, "ext4"))
		argv[i++] = "-F";
	argv[i++] = dev_real;
	argv[i] = NULL;
	r = ln_exec_bounded(argv, 300, 4096, &res, err);
	if (r < 0)
		return r;
	if (res.timed_out || !res.exited || res.exit_status) {
		ln_buf_addf(err, "cannot format '%s' as %s: %s", dev_real, fs,
			    res.timed_out ? "timed out" : res.output.buf);
		ln_buf_rtrim(err);
		r = -EIO;
	}
	ln_exec_result_release(&res);
	return r;
}
