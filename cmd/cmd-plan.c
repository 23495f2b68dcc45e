/* SPDX-License-Identifier: MIT */
/* llmnet plan SPEC: what apply would change, per node, read-only; with
 * --destroy, what teardown would remove (teardown's own phases and keep
 * rules, every agent asked with --plan). */
#include <stdio.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"
#include "orchestrator/report/recap.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/run/lastknown.h"
#include "orchestrator/run/nsident.h"
#include "orchestrator/run/plan.h"
#include "orchestrator/run/teardown.h"

static int plan(struct ln_ctl_opts *o, struct ln_run *run)
{
	struct ln_plan_summary sum;
	struct ln_buf err = LN_BUF_INIT;
	int code = LN_EXIT_OK, r;

	/* what apply --accept-device would accept, shown as apply would do */
	run->accept_device = o->accept_device.v;
	run->n_accept_device = o->accept_device.n;
	if (ln_plan_check_duplicates(run, &err) < 0) {
		ln_error("%s", err.buf);
		code = LN_EXIT_FAILED;
	}
	ln_buf_release(&err);
	run->destroy_plan = o->destroy;
	r = o->destroy ? ln_teardown_run(run, NULL, 0) : ln_plan_run(run);
	if (r < 0) {
		ln_error("plan could not run: %s", ln_strerror(r));
		return LN_EXIT_FAILED;
	}
	/* a silent node's teardown cannot be known from its last apply: it
	 * is shown unreachable */
	r = o->destroy ? 0 : ln_lastknown_plan(run, &err);
	ln_cmd_notes(run, NULL);
	if (r < 0)
		ln_warn("cannot plan the silent nodes from their last-known state: %s", err.buf);
	ln_buf_release(&err);
	code = ln_exit_merge(code, ln_cmd_plan(run, &sum));
	code = ln_run_exit(run, code);
	if (o->detailed && sum.create + sum.change + sum.remove + sum.error > 0)
		code = ln_exit_merge(code, LN_EXIT_CHANGES);
	return code;
}

/* An --accept-device word that names no device: namespace of the spec is
 * refused before any node is contacted, as apply refuses it. */
static int check(struct ln_ctl_opts *o)
{
	struct ln_buf err = LN_BUF_INIT;
	int code = LN_EXIT_OK;

	if (o->purge && !o->destroy) {
		ln_error("--purge is for plan --destroy (what teardown --purge would remove); "
			 "no node was contacted");
		return LN_EXIT_USAGE;
	}
	if (o->destroy && o->accept_device.n) {
		ln_error("--accept-device is for apply's plan, not --destroy; no node was contacted");
		return LN_EXIT_USAGE;
	}
	if (ln_nsident_accept_check(o->spec, o->accept_device.v, o->accept_device.n, &err) < 0) {
		ln_error("%s: %s; no node was contacted", o->spec_path, err.buf);
		code = LN_EXIT_USAGE;
	}
	ln_buf_release(&err);
	return code;
}

int cmd_plan(int argc, char **argv)
{
	return ln_cmd_ctl_main(LN_CTL_PLAN, argc, argv, check, plan);
}
