// SPDX-License-Identifier: MIT
/*
 * The agent's setup: the root it works under and the implementations
 * behind its two seams, the node's (a real kernel, libnvme) or the
 * fixture's (a tree under --root), and the test knobs read from the
 * environment. The failpoint is failpoint.c; reads and changes under the
 * root are kernel/read.c and kernel/fs.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/budget.h"
#include "agents/agent/core/valid.h"

int ln_agent_init(struct ln_agent *a, const char *root, struct ln_buf *err)
{
	const char *fp;
	struct stat st;
	size_t n;

	memset(a, 0, sizeof(*a));
	if (!root || !*root)
		root = getenv("LLMNET_AGENT_ROOT");
	if (root && *root) {
		/* "DIR/" is DIR: sshd's SetEnv lines are written by hand */
		n = strlen(root);
		while (n > 1 && root[n - 1] == '/')
			n--;
		if (n >= sizeof(a->root) - 256) {
			ln_buf_addf(err, "invalid root '%s': too long", root);
			return -ENAMETOOLONG;
		}
		memcpy(a->root, root, n);
		a->root[n] = '\0';
		root = a->root;
	}
	if (root && *root && strcmp(root, "/")) {
		if (!ln_valid_abs_path(root)) {
			ln_buf_addf(err, "invalid root '%s': must be an absolute, normalized path",
				    root);
			return -EINVAL;
		}
		if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode)) {
			ln_buf_addf(err, "invalid root '%s': not a directory", root);
			return -ENOTDIR;
		}
		a->fixture = 1;
		a->fs = &ln_fsops_fixture;
		a->ini = &ln_iniops_fixture;
	} else {
		a->root[0] = '\0';
		a->fs = &ln_fsops_real;
		a->ini = &ln_iniops_real;
	}
	fp = getenv("LLMNET_CLOCK_STEP_MS");
	if (fp && *fp) {
		char *end;

		errno = 0;
		a->clock_step_ms = strtol(fp, &end, 10);
		if (errno || *end || a->clock_step_ms < 0 || a->clock_step_ms > LN_BUDGET_MAX_MS) {
			ln_buf_addf(err, "invalid LLMNET_CLOCK_STEP_MS '%s'", fp);
			return -EINVAL;
		}
	}
	fp = getenv("LLMNET_FAILPOINT");
	if (fp && *fp) {
		char *end;

		errno = 0;
		a->failpoint = strtoul(fp, &end, 10);
		if (errno || *end) {
			ln_buf_addf(err, "invalid LLMNET_FAILPOINT '%s'", fp);
			return -EINVAL;
		}
	}
	return 0;
}
