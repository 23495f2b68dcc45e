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

#include "agents/agent/converge/parts.h"
#include "agents/agent/kernel/read.h"
#include "common/json.h"

int ln_cv_module(struct ln_converge *cv, const char *module)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc = 0;

	if (ln_module_loaded(cv->a, module))
		return 0;
	if (!cv->plan) {
		rc = ln_cv_own(cv, "module", module);
		if (rc == 0)
			rc = ln_agent_change(cv->a, "modprobe");
		if (rc == 0)
			rc = cv->a->fs->modprobe(cv->a, module, &err);
	}
	ln_cv_report(cv, "create", "module", module, NULL, rc < 0 ? err.buf : NULL);
	ln_buf_release(&err);
	return rc;
}

int ln_cv_configfs(struct ln_converge *cv)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc = 0;

	if (ln_configfs_mounted(cv->a))
		return 0;
	if (!cv->plan) {
		rc = ln_cv_own(cv, "configfs_mount", "/sys/kernel/config");
		if (rc == 0)
			rc = ln_agent_change(cv->a, "mount configfs");
		if (rc == 0)
			rc = cv->a->fs->mount_configfs(cv->a, &err);
	}
	ln_cv_report(cv, "create", "configfs_mount", "/sys/kernel/config", NULL,
		     rc < 0 ? err.buf : NULL);
	ln_buf_release(&err);
	return rc;
}

/* Does the request still need module m? */
static int module_wanted(struct ln_converge *cv, const char *m)
{
	size_t i;

	if (!cv->rq)
		return 0;
	if (cv->rq->ntargets && (!strcmp(m, "configfs") || !strcmp(m, "nvmet")))
		return 1;
	for (i = 0; i < cv->rq->ntargets; i++)
		if (!strncmp(m, "nvmet_", 6) && !strcmp(m + 6, cv->rq->targets[i].transport))
			return 1;
	for (i = 0; i < cv->rq->ninits; i++)
		if (!strncmp(m, "nvme_", 5) && !strcmp(m + 5, cv->rq->inits[i].transport))
			return 1;
	return 0;
}

static void unload(struct ln_converge *cv, const char *m)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc;

	if (!ln_cv_owned(cv, "module", m) || module_wanted(cv, m))
		return;
	if (!ln_module_loaded(cv->a, m)) {
		if (!cv->plan)
			ln_cv_disown(cv, "module", m);
		return;
	}
	if (!cv->plan) {
		rc = ln_agent_change(cv->a, "rmmod");
		if (rc == 0)
			rc = cv->a->fs->rmmod(cv->a, m, &err);
		if (rc < 0) {
			/* in use by something llmnet did not make: not ours to stop */
			ln_changes_warn(&cv->ch, "kept module '%s': %s", m, err.buf);
			ln_cv_disown(cv, "module", m);
			ln_buf_release(&err);
			return;
		}
		ln_cv_disown(cv, "module", m);
	}
	ln_cv_report(cv, "remove", "module", m, NULL, NULL);
	ln_buf_release(&err);
}

void ln_modules_remove(struct ln_converge *cv)
{
	/* transports before the core they use; configfs last */
	static const char *const order[] = { "nvmet_tcp", "nvmet_rdma", "nvmet", "nvme_tcp",
					     "nvme_rdma", NULL };
	const char *const *m;
	struct ln_buf err = LN_BUF_INIT;
	int rc = 0;

	for (m = order; *m; m++)
		unload(cv, *m);
	if (ln_cv_owned(cv, "configfs_mount", "/sys/kernel/config") && !(cv->rq && cv->rq->ntargets)) {
		if (!ln_configfs_mounted(cv->a)) {
			if (!cv->plan)
				ln_cv_disown(cv, "configfs_mount", "/sys/kernel/config");
		} else {
			if (!cv->plan) {
				rc = ln_agent_change(cv->a, "umount configfs");
				if (rc == 0)
					rc = cv->a->fs->umount(cv->a, "/sys/kernel/config", &err);
				ln_cv_disown(cv, "configfs_mount", "/sys/kernel/config");
			}
			if (rc < 0)
				ln_changes_warn(&cv->ch, "kept configfs mounted: %s", err.buf);
			else
				ln_cv_report(cv, "remove", "configfs_mount", "/sys/kernel/config", NULL,
					     NULL);
		}
	}
	unload(cv, "configfs");
	ln_buf_release(&err);
}
