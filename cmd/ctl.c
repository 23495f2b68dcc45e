/* SPDX-License-Identifier: MIT */
/*
 * What the controller commands (facts, plan, apply, validate, teardown)
 * share: their common options, loading the spec and starting the run,
 * and running the validation stages over a run (validate, and apply
 * --validate over apply's own sessions), so that no command file calls
 * into another.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/util.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/report/report.h"
#include "orchestrator/secrets.h"
#include "orchestrator/spec/spec.h"
#include "orchestrator/run/state.h"
#include "orchestrator/transport/fanout.h"
#include "orchestrator/transport/ssh.h"
#include "orchestrator/validate/remote.h"
#include "orchestrator/validate/stages.h"

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

int ln_cmd_ctl_start(struct ln_ctl_opts *o, const char *command, struct ln_run *run)
{
	struct ln_secrets *secrets = NULL;
	struct ln_buf err = LN_BUF_INIT;
	int code, r;

	/* The spec first: a wrong spec stops everything before any node. */
	code = o->spec ? LN_EXIT_OK : ln_cmd_ctl_load_spec(o);
	if (code != LN_EXIT_OK)
		goto out;
	/* apply --validate: nothing to validate is refused before any change */
	if (o->validate && ln_validate_check_stages(o->spec, 0, &err) < 0) {
		ln_error("--validate: %s; no node was contacted", err.buf);
		code = LN_EXIT_USAGE;
		goto out;
	}
	/* The secrets the requests carry: before any node, like the spec. */
	if (!strcmp(command, "plan") || !strcmp(command, "apply")) {
		r = ln_secrets_load(o->spec, &secrets, &err);
		if (r < 0) {
			ln_buf_rtrim(&err);
			if (err.len)
				fprintf(stderr, "%s\n", err.buf);
			ln_error("the DH-HMAC-CHAP secrets of spec '%s' are not usable; no node was "
				 "contacted", o->spec_path);
			code = r == -LN_ESPEC ? LN_EXIT_SPEC : LN_EXIT_FAILED;
			goto out;
		}
	}
	if (ln_ssh_global_init() < 0) {
		ln_error("cannot initialise libssh");
		code = LN_EXIT_FAILED;
		goto out;
	}
	/* The key every sign-in uses: read once, before any node. */
	if (ln_ssh_identity_check(o->spec->ssh.identity, &err) < 0) {
		ln_error("%s; no node was contacted", err.buf);
		code = LN_EXIT_SPEC;
		goto out;
	}
	ln_fanout_signals();
	ln_cmd_progress(run);
	r = ln_run_init(run, o->spec, (unsigned)o->parallel, o->accept.v, o->accept.n, o->limit.v,
			o->limit.n, command, &err);
	if (r < 0) {
		/* an unknown name in --limit or --accept-replaced is -EINVAL */
		ln_error("%s", err.buf);
		code = r == -EINVAL ? LN_EXIT_USAGE : LN_EXIT_FAILED;
		goto out;
	}
	run->purge = o->purge;
	run->secrets = secrets;
	secrets = NULL;
	r = ln_facts_gather(run);
	ln_cmd_notes(run);
	if (r < 0) {
		ln_error("cannot start workers: %s", ln_strerror(r));
		code = LN_EXIT_FAILED;
		goto out;
	}
	/* the last-known facts (facts --cached, a silent node's plan) */
	r = ln_state_save_facts(run, &err);
	ln_cmd_notes(run);
	if (r < 0)
		ln_warn("cannot record the facts: %s", err.buf);
	code = LN_EXIT_OK;
out:
	ln_secrets_free(secrets);
	ln_buf_release(&err);
	return code;
}

int ln_cmd_ctl_run(struct ln_ctl_opts *o, const char *command,
		   int (*body)(struct ln_ctl_opts *o, struct ln_run *run))
{
	struct ln_run run;
	int code;

	memset(&run, 0, sizeof(run));
	code = ln_cmd_ctl_start(o, command, &run);
	if (code == LN_EXIT_OK)
		code = body(o, &run);
	ln_cmd_notes(&run);
	ln_run_release(&run);
	ln_cmd_ctl_release(o);
	return code;
}

int ln_cmd_ctl_nodes_exit(const struct ln_run *run, int code)
{
	size_t i;

	for (i = 0; i < run->n; i++)
		code = ln_exit_merge(code, ln_node_state_exit(run->nodes[i].state));
	if (ln_fanout_interrupted())
		code = ln_exit_merge(code, LN_EXIT_FAILED);
	return code;
}

static void on_progress(void *ctx, const char *line)
{
	(void)ctx;
	ln_info("validate: %s", line);
}

static int save(const char *what, const char *path, const struct ln_buf *b)
{
	struct ln_buf err = LN_BUF_INIT;
	int r = ln_report_save(path, b, &err);

	if (r < 0)
		ln_error("cannot write the %s report: %s", what, err.buf);
	else
		ln_info("wrote the %s report to '%s'", what, path);
	ln_buf_release(&err);
	return r;
}

static int report_json_pretty(const struct ln_results *res, struct ln_buf *out)
{
	return ln_report_json(res, 1, out);
}

/* The files and the URL v asks for; an exit code (1 when one failed). */
static int write_reports(const struct ln_results *res, const struct ln_cmd_vopts *v)
{
	const struct {
		const char *what, *path;
		int (*render)(const struct ln_results *res, struct ln_buf *out);
	} files[] = {
		{ "JSON", v->json, report_json_pretty },
		{ "JUnit", v->junit, ln_report_junit },
		{ "HTML", v->html, ln_report_html },
		{ "metrics", v->metrics, ln_report_metrics },
	};
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	int code = LN_EXIT_OK;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		if (!files[i].path)
			continue;
		ln_buf_reset(&out);
		if (files[i].render(res, &out) < 0 || save(files[i].what, files[i].path, &out) < 0)
			code = LN_EXIT_FAILED;
	}
	if (v->url) {
		ln_buf_reset(&out);
		if (ln_report_json(res, 0, &out) < 0 ||
		    ln_report_post(v->url, out.buf, out.len, v->url_timeout_s * 1000, &err) < 0) {
			ln_error("%s", err.buf);
			code = LN_EXIT_FAILED;
		}
	}
	ln_buf_release(&out);
	ln_buf_release(&err);
	return code;
}

/* Shared by validate and by apply --validate, which reuses the sessions
 * apply opened. */
int ln_cmd_ctl_validate(struct ln_ctl_opts *o, struct ln_run *run, const struct ln_cmd_vopts *v,
			unsigned stages)
{
	struct ln_validate_opts vo;
	struct ln_results res;
	struct ln_buf err = LN_BUF_INIT, out = LN_BUF_INIT;
	unsigned char *limit = NULL;
	char *mpi_src = NULL, *nccl = NULL, *io = NULL;
	int code, r;
	size_t i;

	memset(&res, 0, sizeof(res));
	memset(&vo, 0, sizeof(vo));
	vo.stages = stages;
	if (o->limit.n) {
		limit = calloc(run->n, 1);
		if (!limit) {
			code = LN_EXIT_FAILED;
			goto out;
		}
		for (i = 0; i < run->n; i++)
			limit[i] = (unsigned char)run->nodes[i].limited;
		vo.limit = limit;
	}
	mpi_src = ln_validate_find_probe(LN_PROBE_MPI_SRC);
	nccl = ln_validate_find_probe(LN_PROBE_NCCL_SRC);
	io = ln_validate_find_probe("io_probe");
	vo.io_probe_path = io;
	vo.mpi_probe_source = mpi_src;
	vo.nccl_probe_source = nccl;
	vo.parallel = run->parallel;
	vo.attempts = (int)v->attempts;
	vo.server_delay_ms = -1;
	vo.retry_delay_ms = -1;
	vo.run_as_root = !o->spec->ssh.user || !strcmp(o->spec->ssh.user, "root");
	vo.progress = on_progress;
	r = ln_validate_run(o->spec, &ln_validate_remote_ops, run, &vo, &res, &err);
	if (r < 0) {
		ln_error("%s", err.buf);
		code = LN_EXIT_FAILED;
		goto out;
	}
	/* the report states the exit code the run ends with (docs/exit-codes.md) */
	for (i = 0; i < run->n; i++)
		res.node_exit = ln_exit_merge(res.node_exit, ln_node_state_exit(run->nodes[i].state));
	if (ln_cli.output == LN_OUT_JSON)
		ln_report_json(&res, 1, &out);
	else
		ln_report_text(&res, ln_cli.color, &out);
	fputs(out.buf, stdout);
	fflush(stdout);
	code = ln_results_exit(&res);
	code = ln_exit_merge(code, write_reports(&res, v));
	if (ln_fanout_interrupted())
		code = ln_exit_merge(code, LN_EXIT_FAILED);
out:
	ln_results_release(&res);
	ln_buf_release(&err);
	ln_buf_release(&out);
	free(limit);
	free(mpi_src);
	free(nccl);
	free(io);
	return code;
}

int ln_cmd_validate_after_apply(struct ln_ctl_opts *o, struct ln_run *run)
{
	static const struct ln_cmd_vopts v = LN_CMD_VOPTS_INIT;
	int r;

	/* The facts apply started from predate its changes (no controllers,
	 * no mounts yet): validation judges the converged node, so read them
	 * again over the sessions apply kept open. */
	r = ln_facts_gather(run);
	ln_cmd_notes(run);
	if (r < 0) {
		ln_error("cannot read facts again after apply: %s", ln_strerror(r));
		return LN_EXIT_FAILED;
	}
	return ln_cmd_ctl_validate(o, run, &v, 0);
}
