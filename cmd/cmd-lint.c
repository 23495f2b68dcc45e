/* SPDX-License-Identifier: MIT */
/*
 * llmnet lint SPEC: parse and check a spec without contacting anything.
 * Text mode prints a one-line summary (stdout) or every problem as
 * "file:line:col: message" (stderr). With -o json it prints the
 * normalized model, or {"errors": [...]} for an invalid spec, on stdout.
 * Exit 0 when valid, 3 when invalid, 64 on a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"
#include "orchestrator/report/lint.h"
#include "orchestrator/spec/spec.h"

static int print_json(struct json_object *o)
{
	struct ln_buf b = LN_BUF_INIT;
	int r;

	r = ln_json_write(o, 1, &b);
	if (r == 0 && fwrite(b.buf, 1, b.len, stdout) != b.len)
		r = -EIO;
	ln_buf_release(&b);
	return r;
}

/* The problems in text as {"errors": [...]} on stdout. */
static int print_errors(const char *path, const char *text)
{
	struct ln_buf b = LN_BUF_INIT;
	int r = ln_report_lint_errors(path, text, &b);

	if (r == 0 && fwrite(b.buf, 1, b.len, stdout) != b.len)
		r = -EIO;
	ln_buf_release(&b);
	return r;
}

static int dump_schema(void)
{
	struct json_object *o = NULL;
	int r;

	r = ln_spec_schema(&o);
	if (r == 0)
		r = print_json(o);
	json_object_put(o);
	if (r < 0) {
		ln_error("cannot print the schema: %s", strerror(-r));
		return LN_EXIT_FAILED;
	}
	return LN_EXIT_OK;
}

int cmd_lint(int argc, char **argv)
{
	int dump = 0;
	/* --dump-schema is hidden: the JSON Schema generated from the key
	 * tables, which is what specs/llmnet.schema.json holds. */
	const struct ln_option options[] = {
		LN_OPT_HIDDEN_BOOL("dump-schema", &dump),
		LN_OPT_END(),
	};
	const struct ln_opt_cmd c = {
		"llmnet lint [-o text|json] SPEC",
		"Parse and check SPEC without contacting any node. Every problem is\n"
		"reported as FILE:LINE:COL: MESSAGE, all of them in one run.\n"
		"With -o json, print the normalized spec (ranges expanded, defaults\n"
		"filled; keys in docs/spec.md), or {\"errors\": [...]} when invalid.\n"
		"\n"
		"exit status: 0 valid, 3 invalid, 64 usage",
		options,
	};
	struct ln_buf err = LN_BUF_INIT, out = LN_BUF_INIT;
	struct json_object *o = NULL;
	struct ln_spec *spec = NULL;
	const char *path;
	int n, r, rc;

	n = ln_cmd_parse(&c, argc, argv, &rc);
	if (n < 0)
		return rc;
	if (dump)
		return argc == 2 ? dump_schema() : ln_cmd_usage(&c);
	if (n != 2)
		return ln_cmd_usage(&c);
	path = argv[1];

	r = ln_spec_load(path, &spec, &err);
	if (r == -LN_ESPEC) {
		rc = LN_EXIT_SPEC;
		if (ln_cli.output == LN_OUT_JSON) {
			if (print_errors(path, err.buf) < 0)
				fputs(err.buf, stderr);
		} else {
			fputs(err.buf, stderr);
		}
		goto out;
	}
	if (r < 0) {
		/* Unreadable: the spec cannot be judged valid either; -o json
		 * still prints its {"errors": [...]}, at line 0. */
		ln_buf_rtrim(&err);
		ln_error("%s", err.buf);
		rc = LN_EXIT_SPEC;
		if (ln_cli.output == LN_OUT_JSON && print_errors(path, err.buf) < 0)
			ln_error("cannot print the error as JSON: out of memory");
		goto out;
	}
	rc = LN_EXIT_OK;
	if (spec->warnings)	/* valid, but better written otherwise */
		fputs(spec->warnings, stderr);
	if (ln_cli.output == LN_OUT_JSON) {
		if (ln_spec_to_json(spec, &o) < 0 || print_json(o) < 0) {
			ln_error("cannot print the spec as JSON: out of memory");
			rc = LN_EXIT_FAILED;
		}
	} else if (ln_cli.verbosity >= 0) {
		ln_report_lint_summary(spec, &out);
		fputs(out.buf, stdout);
	}
out:
	json_object_put(o);
	ln_spec_free(spec);
	ln_buf_release_all(&err, &out);
	return rc;
}
