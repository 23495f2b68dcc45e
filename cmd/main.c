/* SPDX-License-Identifier: MIT */
/*
 * llmnet: global options and the command table. Commands match exactly,
 * never by prefix, so a typo can never run a different command. Every
 * command parses its options with the same parser (parse-options.c);
 * help and version are cmd-help.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"
#include "orchestrator/run/start.h"

struct ln_cli ln_cli;

/* A row's needs: what ln_run_start() sets up before the command's body. */
#define FACTS (LN_NEED_SESSIONS | LN_NEED_FACTS)
#define REQUESTS (LN_NEED_SECRETS | FACTS)

const struct ln_command ln_commands[] = {
	{ "help", cmd_help, 0, "show help for llmnet or a command" },
	{ "version", cmd_version, 0, "print llmnet's version" },
	{ "lint", cmd_lint, 0, "check a spec without contacting any node" },
	{ "keys", cmd_keys, 0, "create the missing DH-HMAC-CHAP secrets and TLS PSKs of a spec" },
	{ "facts", cmd_facts, FACTS, "show what every node is and holds" },
	{ "plan", cmd_plan, REQUESTS, "show what apply would change" },
	{ "apply", cmd_apply, REQUESTS, "converge every node to the spec" },
	{ "validate", cmd_validate, FACTS,
	  "check the fabric stage by stage and name bad nodes and links" },
	{ "teardown", cmd_teardown, FACTS, "remove what llmnet created for this cluster" },
	{ NULL, NULL, 0, NULL },
};

static int set_verbose(const struct ln_option *opt, const char *v)
{
	(void)opt;
	(void)v;
	ln_cli.verbosity = ln_cli.verbosity < 0 ? 1 : ln_cli.verbosity + 1;
	return 0;
}

static int set_quiet(const struct ln_option *opt, const char *v)
{
	(void)opt;
	(void)v;
	ln_cli.verbosity = -1;
	return 0;
}

static int set_json(const struct ln_option *opt, const char *v)
{
	(void)opt;
	(void)v;
	ln_cli.output = LN_OUT_JSON;
	return 0;
}

static int set_output(const struct ln_option *opt, const char *v)
{
	(void)opt;
	if (!strcmp(v, "text"))
		ln_cli.output = LN_OUT_TEXT;
	else if (!strcmp(v, "json"))
		ln_cli.output = LN_OUT_JSON;
	else {
		ln_error("-o takes text or json, not '%s'", v);
		return -1;
	}
	return 0;
}

static int set_trace(const struct ln_option *opt, const char *v)
{
	(void)opt;
	if (ln_log_set_trace(v) < 0) {
		ln_error("unknown trace area in '%s'", v);
		return -1;
	}
	return 0;
}

static int no_color;

static const struct ln_option global_options[] = {
	LN_OPT_CALLBACK('q', "quiet", NULL, "errors only", LN_OPT_NOARG, NULL, set_quiet),
	LN_OPT_CALLBACK('v', "verbose", NULL, "more detail (repeat for debug: -vv)", LN_OPT_NOARG,
			NULL, set_verbose),
	LN_OPT_BOOL(0, "no-color", &no_color, "never colour output"),
	LN_OPT_CALLBACK('o', "output", "FMT", "text (default) or json; --json is -o json", 0,
			"takes text or json", set_output),
	LN_OPT_CALLBACK(0, "json", NULL, "the same as -o json", LN_OPT_NOARG | LN_OPT_HIDDEN, NULL,
			set_json),
	LN_OPT_CALLBACK(0, "trace", "AREAS", "trace ssh,agent,plan,spec,probe,fanout or all",
			LN_OPT_EQ_ONLY, "takes areas, as --trace=ssh,agent", set_trace),
	LN_OPT_END(),
};

const struct ln_opt_cmd ln_cli_globals = {
	"llmnet [-q] [-v...] [--no-color] [-o text|json] [--trace=AREAS] <command> [args]",
	NULL,
	global_options,
};

/* Strip global options anywhere before "--"; returns 0 or LN_EXIT_USAGE. */
static int parse_globals(int *argc, char **argv)
{
	int n = ln_parse_options(&ln_cli_globals, *argc, argv, LN_PARSE_KEEP_UNKNOWN);

	if (n < 0)
		return LN_EXIT_USAGE;
	*argc = n;
	if (getenv("NO_COLOR"))
		no_color = 1;
	ln_cli.color = !no_color && isatty(STDOUT_FILENO);
	ln_log_set_color(!no_color && isatty(STDERR_FILENO));
	if (ln_cli.verbosity < 0)
		ln_log_threshold = LN_LOG_ERROR;
	else
		ln_log_threshold = ln_cli.verbosity >= 2 ? LN_LOG_DEBUG :
				   ln_cli.verbosity == 1 ? LN_LOG_VERBOSE : LN_LOG_INFO;
	return 0;
}

int main(int argc, char **argv)
{
	const struct ln_command *c;
	int r;

	r = parse_globals(&argc, argv);
	if (r)
		return r;
	if (argc < 2) {
		ln_cmd_list(stderr);
		return LN_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(1, argv);
	if (!strcmp(argv[1], "--version"))
		return cmd_version(1, argv);
	c = ln_cmd_find(argv[1]);
	if (!c) {
		ln_error("unknown command '%s' (see 'llmnet help')", argv[1]);
		return LN_EXIT_USAGE;
	}
	ln_cli.command = c;
	return c->fn(argc - 1, argv + 1);
}
