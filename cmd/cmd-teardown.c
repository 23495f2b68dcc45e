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

int cmd_teardown(int argc, char **argv)
{
	struct ln_ctl_opts o = { 0 };
	struct ln_ctl_table t;
	struct ln_buf err = LN_BUF_INIT;
	int r;

	if (ln_cmd_ctl_options(LN_CTL_TEARDOWN, &o, &t, argc, argv, &r) < 0)
		return r;
	/* --force's names are checked against the spec before any node */
	r = ln_cmd_ctl_load_spec(&o);
	if (r == LN_EXIT_OK) {
		int rc = ln_teardown_check_force(o.spec, (const char *const *)o.force.v, o.force.n,
						 &err);

		if (rc == -EINVAL)
			ln_error("%s", err.buf);
		if (rc < 0)
			r = rc == -EINVAL ? LN_EXIT_USAGE : LN_EXIT_FAILED;
	}
	ln_buf_release(&err);
	if (r != LN_EXIT_OK) {
		ln_cmd_ctl_release(&o);
		return r;
	}
	return ln_cmd_ctl_run(&o, teardown);
}
