/* SPDX-License-Identifier: MIT */
/*
 * llmnet apply SPEC: converge every node (targets, then initiators, then
 * hostfiles) and print a recap; also the option parsing and set-up that
 * facts, plan and teardown share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"
#include "orchestrator/apply.h"
#include "orchestrator/facts.h"
#include "orchestrator/transport/fanout.h"
#include "orchestrator/plan.h"
#include "orchestrator/spec/spec.h"
#include "orchestrator/transport/ssh.h"

static int add_names(struct ln_ctl_opts *o, char ***v, size_t *n, const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char **nv = realloc(*v, (*n + 2) * sizeof(**v));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		(*v)[(*n)++] = strdup(tok);
		(*v)[*n] = NULL;
	}
	o->to_free[o->n_to_free++] = copy;
	return 0;
}

int ln_cmd_ctl_parse(int argc, char **argv, unsigned flags, const char *usage,
		     struct ln_ctl_opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf("usage: %s\n", usage);
			return 1;
		}
		if ((flags & LN_CTL_PARALLEL) && (!strcmp(a, "--parallel") || !strncmp(a, "--parallel=", 11))) {
			char *end;
			long n;

			v = a[10] == '=' ? a + 11 : (i + 1 < argc ? argv[++i] : NULL);
			n = v ? strtol(v, &end, 10) : 0;
			if (!v || *end || n < 1 || n > 4096) {
				ln_error("--parallel takes a number from 1 to 4096");
				return -1;
			}
			o->parallel = (unsigned)n;
		} else if ((flags & LN_CTL_LIMIT) && (!strcmp(a, "--limit") || !strncmp(a, "--limit=", 8))) {
			v = a[7] == '=' ? a + 8 : (i + 1 < argc ? argv[++i] : NULL);
			if (!v || !*v || o->n_to_free >= 30 || add_names(o, &o->limit, &o->n_limit, v) < 0) {
				ln_error("--limit takes node names, comma-separated");
				return -1;
			}
		} else if ((flags & LN_CTL_ACCEPT) && (!strcmp(a, "--accept-replaced") ||
						       !strncmp(a, "--accept-replaced=", 18))) {
			v = a[17] == '=' ? a + 18 : (i + 1 < argc ? argv[++i] : NULL);
			if (!v || !*v || o->n_to_free >= 30 || add_names(o, &o->accept, &o->n_accept, v) < 0) {
				ln_error("--accept-replaced takes node names, comma-separated");
				return -1;
			}
		} else if ((flags & LN_CTL_DETAILED) && !strcmp(a, "--detailed-exitcode")) {
			o->detailed = 1;
		} else if ((flags & LN_CTL_PURGE) && !strcmp(a, "--purge")) {
			o->purge = 1;
		} else if ((flags & LN_CTL_VALIDATE) && !strcmp(a, "--validate")) {
			o->validate = 1;
		} else if (a[0] == '-' && a[1]) {
			ln_error("unknown option '%s'", a);
			return -1;
		} else if (!o->spec_path) {
			o->spec_path = a;
		} else {
			ln_error("unexpected argument '%s'", a);
			return -1;
		}
	}
	if (!o->spec_path) {
		ln_error("no spec given");
		return -1;
	}
	return 0;
}

void ln_cmd_ctl_release(struct ln_ctl_opts *o)
{
	size_t i;

	for (i = 0; i < o->n_limit; i++)
		free(o->limit[i]);
	for (i = 0; i < o->n_accept; i++)
		free(o->accept[i]);
	free(o->limit);
	free(o->accept);
	for (i = 0; i < o->n_to_free; i++)
		free(o->to_free[i]);
	ln_spec_free(o->spec);
	memset(o, 0, sizeof(*o));
}

int ln_cmd_ctl_start(struct ln_ctl_opts *o, const char *command, struct ln_run *run)
{
	struct ln_buf err = LN_BUF_INIT;
	int r;

	/* The spec first: a wrong spec stops everything before any node. */
	r = ln_spec_load(o->spec_path, &o->spec, &err);
	if (r < 0) {
		ln_buf_rtrim(&err);
		fprintf(stderr, "%s\n", err.buf);
		ln_error("spec '%s' is invalid; no node was contacted", o->spec_path);
		ln_buf_release(&err);
		return r == -LN_ESPEC ? LN_EXIT_SPEC : LN_EXIT_SPEC;
	}
	if (ln_ssh_global_init() < 0) {
		ln_error("cannot initialise libssh");
		return LN_EXIT_FAILED;
	}
	ln_fanout_signals();
	r = ln_run_init(run, o->spec, o->parallel, o->accept, o->n_accept, o->limit, o->n_limit,
			command, &err);
	if (r < 0) {
		ln_error("%s", err.buf);
		ln_buf_release(&err);
		return r == -EINVAL ? LN_EXIT_USAGE : LN_EXIT_FAILED;
	}
	run->purge = o->purge;
	ln_buf_release(&err);
	r = ln_facts_gather(run);
	if (r < 0) {
		ln_error("cannot start workers: %s", ln_strerror(r));
		return LN_EXIT_FAILED;
	}
	return LN_EXIT_OK;
}

static const char apply_usage[] =
	"llmnet apply SPEC [--parallel N] [--limit NODES] [--accept-replaced NODES] [--validate]\n"
	"converges every node: targets, then initiators, then hostfiles; prints a recap;\n"
	"with --validate, a converged cluster then runs the spec's validation stages";

int cmd_apply(int argc, char **argv)
{
	struct ln_ctl_opts o;
	struct ln_run run;
	struct ln_buf err = LN_BUF_INIT;
	int code, r;

	memset(&run, 0, sizeof(run));
	r = ln_cmd_ctl_parse(argc, argv, LN_CTL_PARALLEL | LN_CTL_LIMIT | LN_CTL_ACCEPT | LN_CTL_VALIDATE,
			     apply_usage, &o);
	if (r)
		return r > 0 ? LN_EXIT_OK : ln_cmd_usage(apply_usage);
	code = ln_cmd_ctl_start(&o, "apply", &run);
	if (code != LN_EXIT_OK)
		goto out;
	if (ln_plan_check_duplicates(&run, &err) < 0) {
		ln_error("%s", err.buf);
		ln_error("stopping before any change");
		ln_run_log(&run, "apply stopped: %s", err.buf);
		code = ln_exit_merge(ln_apply_recap(&run, "apply", ln_cli.output == LN_OUT_JSON, stdout),
				     LN_EXIT_FAILED);
		goto out;
	}
	if (!ln_fanout_interrupted()) {
		r = ln_apply_run(&run);
		if (r < 0)
			ln_error("apply could not run: %s", ln_strerror(r));
	}
	code = ln_apply_recap(&run, "apply", ln_cli.output == LN_OUT_JSON, stdout);
	if (ln_fanout_interrupted())
		ln_error("interrupted: nodes in flight finished, no new work was started");
	else if (o.validate && code == LN_EXIT_OK)
		code = ln_cmd_validate_after_apply(&o, &run);
	else if (o.validate)
		ln_error("validation not run: the cluster did not converge");
out:
	ln_buf_release(&err);
	ln_run_release(&run);
	ln_cmd_ctl_release(&o);
	return code;
}
