/* SPDX-License-Identifier: MIT */
/*
 * llmnet validate SPEC: run the spec's validation stages on the cluster
 * and report. Nodes are reached through the controller's run (one SSH
 * session per node, the agent pushed when needed, facts gathered once);
 * every probe goes through the agent's bounded `run` verb
 * (orchestrator/validate/remote.c). The recap goes to stdout (JSON with
 * -o json), progress to stderr, and the reports to the files and URL
 * asked for (orchestrator/validate/command.h; ln_cmd_validate_run, shared
 * with apply --validate). With
 * --dry-run it prints the schedule (stages, rails, pairs, rounds) from the
 * spec alone and contacts no node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/log.h"
#include "orchestrator/report/report.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/validate/command.h"
#include "orchestrator/validate/slurm.h"
#include "orchestrator/validate/stages.h"

/* --dry-run: the spec's schedule on stdout. Under --limit the pairs
 * depend on which nodes pass (each node under test against good peers),
 * so the two are refused together. */
static int dry_run_schedule(const struct ln_opt_cmd *c, struct ln_ctl_opts *o, unsigned stages)
{
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	int code;

	if (o->limit.n) {
		ln_error("--dry-run prints the whole schedule; it does not take --limit (a limited "
			 "run pairs the nodes under test with peers that pass)");
		return ln_cmd_usage(c);
	}
	code = LN_EXIT_OK;
	if (ln_validate_schedule(o->spec, stages, &out, &err) < 0) {
		ln_error("%s", err.buf);
		code = LN_EXIT_FAILED;
	} else {
		fputs(out.buf, stdout);
	}
	ln_buf_release(&out);
	ln_buf_release(&err);
	return code;
}

/* --report-url's scheme, and its auth file only with it. */
static int report_url_usage_ok(const char *url, const char *auth_file)
{
	if (url && strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		ln_error("--report-url takes an http:// or https:// URL");
		return 0;
	}
	if (auth_file && !url) {
		ln_error("--report-url-auth-file is for --report-url");
		return 0;
	}
	return 1;
}

static enum ln_drain_mode drain_mode;

/* --drain, or --drain=plan */
static int set_drain(const struct ln_option *opt, const char *v)
{
	(void)opt;
	if (v && strcmp(v, "plan")) {
		ln_error("--drain takes no value or =plan, not '%s'", v);
		return -1;
	}
	drain_mode = v ? LN_DRAIN_PLAN : LN_DRAIN_DO;
	return 0;
}

int cmd_validate(int argc, char **argv)
{
	struct ln_ctl_opts o = { 0 };
	struct ln_validate_cmd v = LN_VALIDATE_CMD_INIT;
	const char *stage_list = NULL;
	struct ln_buf auth = LN_BUF_INIT_SECRET;
	const char *auth_file = NULL;
	long attempts = 0;
	int dry_run = 0;
	const struct ln_option options[] = {
		LN_OPT_BOOL(0, "dry-run", &dry_run,
			    "print the schedule (stages, rails, pairs, rounds); contact no node"),
		LN_OPT_STRING("stages", &stage_list, "LIST",
			      "run only these of the spec's stages (comma-separated)"),
		LN_CTL_OPT_LIMIT(&o),
		LN_CTL_OPT_PARALLEL(&o),
		LN_CTL_OPT_ACCEPT(&o),
		LN_OPT_NUMBER("attempts", &attempts, "N",
			      "attempts per pair before a probe counts as failed (default 3)", 1, 8),
		LN_OPT_STRING("report", &v.files.json, "FILE.json", "also write the results as JSON"),
		LN_OPT_STRING("junit", &v.files.junit, "FILE.xml", "also write them as JUnit XML"),
		LN_OPT_STRING("html", &v.files.html, "FILE.html", "also write an HTML page with heatmaps"),
		LN_OPT_STRING("metrics", &v.files.metrics, "FILE.prom", "also write Prometheus metrics"),
		LN_OPT_STRING("report-url", &v.after.url, "URL",
			      "POST the JSON report to URL (no credentials in it)"),
		LN_OPT_STRING("report-url-auth-file", &auth_file, "FILE",
			      "the POST's credentials, USER:PASSWORD or SCHEME VALUE, from FILE "
			      "(mode 0600; else $LLMNET_REPORT_AUTH)"),
		LN_OPT_NUMBER("report-timeout", &v.after.url_timeout_s, "S",
			      "bound the POST by S seconds (default 10)", 1, 600),
		LN_OPT_CALLBACK(0, "drain", "plan",
				"drain the nodes the verdicts blame from Slurm (=plan: print the "
				"drains, change nothing)", LN_OPT_EQ_ONLY | LN_OPT_OPTARG,
				"takes no value or =plan", set_drain),
		LN_OPT_BOOL(0, "resume", &v.after.resume,
			    "lift llmnet's own Slurm drains of nodes that passed again (UNDRAIN)"),
		LN_OPT_END(),
	};
	const struct ln_opt_cmd c = {
		"llmnet validate SPEC",
		"runs the spec's validation stages (devices, rping, bandwidth, latency, io, mpi,\n"
		"nccl) and names the bad nodes and links; exit 0 only when every listed stage passed",
		options,
	};
	struct ln_run run;
	struct ln_buf err = LN_BUF_INIT;
	int code, r;

	memset(&run, 0, sizeof(run));
	r = ln_cmd_ctl_parse(&c, argc, argv, &o);
	if (r)
		return r > 0 ? LN_EXIT_OK : LN_EXIT_USAGE;
	v.attempts = (int)attempts;
	v.after.drain = drain_mode;
	if (stage_list && ln_validate_parse_stages(stage_list, &v.stages, &err) < 0) {
		ln_error("%s", err.buf);
		code = ln_cmd_usage(&c);
		goto out;
	}
	/* the spec, and what of it to run, before any node is contacted */
	code = ln_cmd_ctl_load_spec(&o);
	if (code != LN_EXIT_OK)
		goto out;
	if (ln_validate_check_stages(o.spec, v.stages, &err) < 0 ||
	    ln_slurm_opts_check(o.spec, &v.after, &err) < 0) {
		ln_error("%s; no node was contacted", err.buf);
		code = LN_EXIT_USAGE;
		goto out;
	}
	if (dry_run) {
		code = dry_run_schedule(&c, &o, v.stages);
		goto out;
	}
	if (!report_url_usage_ok(v.after.url, auth_file)) {
		code = ln_cmd_usage(&c);
		goto out;
	}
	/* credentials only from a file or the environment: never argv */
	if (v.after.url && (ln_report_url_check(v.after.url, &err) < 0 ||
			    ln_report_auth_load(auth_file, &auth, &err) < 0)) {
		ln_error("%s; no node was contacted", err.buf);
		code = LN_EXIT_USAGE;
		goto out;
	}
	/* read once (or not wanted): no process started from here inherits it */
	unsetenv("LLMNET_REPORT_AUTH");
	v.after.auth = auth.len ? auth.buf : NULL;
	code = ln_cmd_ctl_start(&o, &run);
	if (code == LN_EXIT_OK)
		code = ln_cmd_validate_run(&run, &v, 0);
	ln_cmd_notes(&run, NULL);
	ln_run_release(&run);
out:
	ln_cmd_ctl_release(&o);
	ln_buf_release(&err);
	ln_buf_release(&auth);
	return code;
}
