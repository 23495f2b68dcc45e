// SPDX-License-Identifier: MIT
/*
 * Kernel modules and the configfs mount. A minimal node has no udev and
 * loads nothing by itself, so the agent loads what a run needs (configfs,
 * nvmet and its transports for targets, nvme_tcp/nvme_rdma for initiators)
 * and mounts configfs when it is not. What it loaded or mounted is owned:
 * when no run needs it any more, teardown unloads or unmounts it, and the
 * kernel refuses that while anything else still uses it, which is then
 * kept with a warning.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agents/agent/reconcile.h"
#include "common/json.h"

int ln_rc_module(struct ln_rc *r, const char *module)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc = 0;

	if (ln_module_loaded(r->a, module))
		return 0;
	if (!r->plan) {
		rc = ln_rc_own(r, "module", module);
		if (rc == 0)
			rc = ln_agent_change(r->a, "modprobe");
		if (rc == 0)
			rc = r->a->fs->modprobe(r->a, module, &err);
	}
	ln_rc_report(r, "create", "module", module, NULL, rc < 0 ? err.buf : NULL);
	ln_buf_release(&err);
	return rc;
}

int ln_rc_configfs(struct ln_rc *r)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc = 0;

	if (ln_configfs_mounted(r->a))
		return 0;
	if (!r->plan) {
		rc = ln_rc_own(r, "configfs_mount", "/sys/kernel/config");
		if (rc == 0)
			rc = ln_agent_change(r->a, "mount configfs");
		if (rc == 0)
			rc = r->a->fs->mount_configfs(r->a, &err);
	}
	ln_rc_report(r, "create", "configfs_mount", "/sys/kernel/config", NULL,
		     rc < 0 ? err.buf : NULL);
	ln_buf_release(&err);
	return rc;
}

/* Does the request still need module m? */
static int module_wanted(struct ln_rc *r, const char *m)
{
	size_t i;

	if (!r->rq)
		return 0;
	if (r->rq->ntargets && (!strcmp(m, "configfs") || !strcmp(m, "nvmet")))
		return 1;
	for (i = 0; i < r->rq->ntargets; i++)
		if (!strncmp(m, "nvmet_", 6) && !strcmp(m + 6, r->rq->targets[i].transport))
			return 1;
	for (i = 0; i < r->rq->ninits; i++)
		if (!strncmp(m, "nvme_", 5) && !strcmp(m + 5, r->rq->inits[i].transport))
			return 1;
	return 0;
}

static void unload(struct ln_rc *r, const char *m)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc = 0;

	if (!ln_rc_owned(r, "module", m) || module_wanted(r, m))
		return;
	if (!ln_module_loaded(r->a, m)) {
		if (!r->plan)
			ln_rc_disown(r, "module", m);
		return;
	}
	if (!r->plan) {
		rc = ln_agent_change(r->a, "rmmod");
		if (rc == 0)
			rc = r->a->fs->rmmod(r->a, m, &err);
		if (rc < 0) {
			/* in use by something llmnet did not make: not ours to stop */
			ln_changes_warn(&r->ch, "kept module '%s': %s", m, err.buf);
			ln_rc_disown(r, "module", m);
			ln_buf_release(&err);
			return;
		}
		ln_rc_disown(r, "module", m);
	}
	ln_rc_report(r, "remove", "module", m, NULL, NULL);
	ln_buf_release(&err);
}

void ln_modules_remove(struct ln_rc *r)
{
	/* transports before the core they use; configfs last */
	static const char *const order[] = { "nvmet_tcp", "nvmet_rdma", "nvmet", "nvme_tcp",
					     "nvme_rdma", NULL };
	const char *const *m;
	struct ln_buf err = LN_BUF_INIT;
	int rc = 0;

	for (m = order; *m; m++)
		unload(r, *m);
	if (ln_rc_owned(r, "configfs_mount", "/sys/kernel/config") && !(r->rq && r->rq->ntargets)) {
		if (!ln_configfs_mounted(r->a)) {
			if (!r->plan)
				ln_rc_disown(r, "configfs_mount", "/sys/kernel/config");
		} else {
			if (!r->plan) {
				rc = ln_agent_change(r->a, "umount configfs");
				if (rc == 0)
					rc = r->a->fs->umount(r->a, "/sys/kernel/config", &err);
				ln_rc_disown(r, "configfs_mount", "/sys/kernel/config");
			}
			if (rc < 0)
				ln_changes_warn(&r->ch, "kept configfs mounted: %s", err.buf);
			else
				ln_rc_report(r, "remove", "configfs_mount", "/sys/kernel/config", NULL,
					     NULL);
		}
	}
	unload(r, "configfs");
	ln_buf_release(&err);
}
