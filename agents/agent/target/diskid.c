// SPDX-License-Identifier: MIT
/*
 * The transport part of a device namespace's pin and the comparison of a
 * pin with the disk found now (diskid.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/agent/kernel/read.h"
#include "agents/agent/target/diskid.h"
#include "agents/agent/target/inuse.h"
#include "common/buf.h"

/* The kinds of id ln_blockdev_stable_id gives; a pin that starts with one
 * was made before transports were pinned. */
static const char *const kinds[] = { "wwid", "dm", "serial", "by-id" };

int ln_diskid_has_transport(const char *id)
{
	size_t n = strcspn(id, ":"), i;

	if (!id[n])
		return 0;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strlen(kinds[i]) == n && !strncmp(id, kinds[i], n))
			return 0;
	return 1;
}

enum ln_diskid_match ln_diskid_compare(const char *was, const char *now)
{
	const char *rest = strchr(now, ':');

	if (ln_diskid_has_transport(was))
		return strcmp(was, now) ? LN_DISKID_OTHER : LN_DISKID_SAME;
	/* an old pin: the same id, whatever transport the gate let through */
	return rest && !strcmp(was, rest + 1) ? LN_DISKID_UPGRADE : LN_DISKID_OTHER;
}

/* The last component of link target s (sysfs links name their target's
 * directory: "../../../bus/scsi"). */
static const char *last_name(const char *s)
{
	const char *slash = strrchr(s, '/');

	return slash ? slash + 1 : s;
}

int ln_diskid_transport(const struct ln_agent *a, const char *diskdir, const char *given,
			char *tr, size_t n, struct ln_buf *err)
{
	char p[PATH_MAX], full[PATH_MAX], real[PATH_MAX], link[PATH_MAX];
	const char *name;
	ssize_t len;

	/* the disk's own name: its directory's, links and ".." resolved */
	if (ln_agent_path(a, diskdir, full) < 0 || !realpath(full, real)) {
		ln_buf_addf(err, "device '%s': its sysfs directory %s cannot be read; refusing to "
			    "export it", given, diskdir);
		return -ENODEV;
	}
	name = last_name(real);
	if (!strncmp(name, "nvme", 4)) {
		/* local only when every controller of it is pcie; the gate
		 * refuses anything else, an unknown transport included */
		if (ln_inuse_fabric(a, name, given, err) < 0)
			return -EBUSY;
		snprintf(tr, n, "pcie");
		return 0;
	}
	snprintf(p, sizeof(p), "%s/device", diskdir);
	if (!ln_path_exists(a, p)) {
		snprintf(tr, n, "virtual");	/* dm, md, loop: /sys/devices/virtual/block */
		return 0;
	}
	snprintf(p, sizeof(p), "%s/device/subsystem", diskdir);
	len = ln_agent_path(a, p, full) == 0 ? readlink(full, link, sizeof(link) - 1) : -1;
	if (len <= 0) {
		ln_buf_addf(err, "device '%s' (%s): the bus of its device cannot be read (%s), so "
			    "llmnet cannot pin which disk it is; refusing to export it", given,
			    name, p);
		return -ENODEV;
	}
	link[len] = '\0';
	snprintf(tr, n, "%s", last_name(link));
	return 0;
}
