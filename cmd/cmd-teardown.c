/* SPDX-License-Identifier: MIT */
/* llmnet teardown SPEC: remove what llmnet owns for this cluster. */
#include <stdio.h>
#include <errno.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"
#include "orchestrator/run/apply.h"
#include "orchestrator/transport/fanout.h"
#include "orchestrator/run/teardown.h"

static int teardown(struct ln_ctl_opts *o, struct ln_run *run)
{
	struct ln_notes notes = LN_NOTES_INIT;
	int r, code;

	if (!ln_fanout_interrupted()) {
		r = ln_teardown_run(run, (const char *const *)o->force.v, o->force.n);
		ln_cmd_notes(run, NULL);
		if (r < 0)
			ln_error("teardown could not run: %s", ln_strerror(r));
	}
	code = ln_cmd_recap(run, "teardown");
	ln_teardown_record(run, &notes);
	ln_cmd_notes(run, &notes);
	return code;
}

/* --force's names are checked against the spec before any node. */
static int check(struct ln_ctl_opts *o)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc = ln_teardown_check_force(o->spec, (const char *const *)o->force.v, o->force.n,
					 &err);

	if (rc == -EINVAL)
		ln_error("%s", err.buf);
	ln_buf_release(&err);
	if (rc < 0)
		return rc == -EINVAL ? LN_EXIT_USAGE : LN_EXIT_FAILED;
	return LN_EXIT_OK;
}

int cmd_teardown(int argc, char **argv)
{
	return ln_cmd_ctl_main(LN_CTL_TEARDOWN, argc, argv, check, teardown);
}
