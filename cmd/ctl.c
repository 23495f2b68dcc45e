/* SPDX-License-Identifier: MIT */
/*
 * What the controller commands (facts, plan, apply, validate, teardown)
 * share: their common options, loading the spec and starting the run with
 * what the command's row needs (orchestrator/run/start.h), saying what
 * the library hands back, and printing a validation (validate, and apply
 * --validate over apply's own sessions), so that no command file calls
 * into another.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"
#include "orchestrator/run/start.h"
#include "orchestrator/spec/spec.h"
#include "orchestrator/validate/command.h"

int ln_cmd_ctl_parse(const struct ln_opt_cmd *c, int argc, char **argv, struct ln_ctl_opts *o)
{
	int n = ln_parse_options(c, argc, argv, 0);

	if (n == LN_PARSE_HELP) {
		ln_cmd_ctl_release(o);
		return 1;
	}
	if (n >= 0 && n < 2)
		ln_error("no spec given");
	else if (n > 2)
		ln_error("unexpected argument '%s'", argv[2]);
	if (n != 2) {
		if (n >= 0)
			ln_cmd_usage(c);
		ln_cmd_ctl_release(o);
		return -1;
	}
	o->spec_path = argv[1];
	return 0;
}

void ln_cmd_ctl_release(struct ln_ctl_opts *o)
{
	ln_strv_release(&o->limit);
	ln_strv_release(&o->accept);
	ln_strv_release(&o->force);
	ln_strv_release(&o->accept_device);
	ln_spec_free(o->spec);
	memset(o, 0, sizeof(*o));
}

int ln_cmd_ctl_load_spec(struct ln_ctl_opts *o)
{
	struct ln_buf err = LN_BUF_INIT;
	int r = ln_spec_load(o->spec_path, &o->spec, &err);

	if (r < 0) {
		ln_buf_rtrim(&err);
		fprintf(stderr, "%s\n", err.buf);
		ln_error("spec '%s' is invalid; no node was contacted", o->spec_path);
	}
	ln_buf_release(&err);
	return r < 0 ? LN_EXIT_SPEC : LN_EXIT_OK;
}

int ln_cmd_ctl_start(struct ln_ctl_opts *o, struct ln_run *run)
{
	struct ln_notes notes = LN_NOTES_INIT;
	struct ln_run_opts ro = { ln_cli.command->name, (unsigned)o->parallel, o->accept.v,
				  o->accept.n, o->limit.v, o->limit.n, o->purge };
	int code;

	/* The spec first: a wrong spec stops everything before any node. */
	code = o->spec ? LN_EXIT_OK : ln_cmd_ctl_load_spec(o);
	if (code == LN_EXIT_OK) {
		ln_cmd_progress(run);
		code = ln_run_start(run, o->spec, ln_cli.command->needs, &ro, &notes);
	}
	ln_cmd_notes(run, &notes);
	return code;
}

int ln_cmd_ctl_run(struct ln_ctl_opts *o, int (*body)(struct ln_ctl_opts *o, struct ln_run *run))
{
	struct ln_run run;
	int code;

	memset(&run, 0, sizeof(run));
	code = ln_cmd_ctl_start(o, &run);
	if (code == LN_EXIT_OK)
		code = body(o, &run);
	ln_cmd_notes(&run, NULL);
	ln_run_release(&run);
	ln_cmd_ctl_release(o);
	return code;
}

static void on_progress(void *ctx, const char *line)
{
	(void)ctx;
	ln_info("validate: %s", line);
}

int ln_cmd_validate_run(struct ln_run *run, struct ln_validate_cmd *vc, int after_apply)
{
	struct ln_notes notes = LN_NOTES_INIT;
	struct ln_buf out = LN_BUF_INIT;
	struct ln_results res;
	int code;

	vc->json = ln_cli.output == LN_OUT_JSON;
	vc->color = ln_cli.color;
	vc->progress = on_progress;
	code = after_apply ? ln_validate_after_apply(run, vc, &res, &out, &notes) :
			     ln_validate_command(run, vc, &res, &out, &notes);
	ln_cmd_notes(run, &notes);
	if (code >= 0) {
		fputs(out.buf, stdout);
		fflush(stdout);
		code = ln_exit_merge(code, ln_validate_finish(&res, vc, &notes));
		ln_cmd_notes(run, &notes);
	} else {
		code = LN_EXIT_FAILED;
	}
	ln_results_release(&res);
	ln_buf_release(&out);
	return code;
}
