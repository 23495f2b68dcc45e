/* SPDX-License-Identifier: MIT */
/*
 * What llmnet says of itself: the commands' usage lines and the one
 * parser they share (ln_cmd_usage, ln_cmd_parse), the command list,
 * `llmnet help [COMMAND]` and `llmnet version`.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"

int ln_cmd_usage(const struct ln_opt_cmd *c)
{
	ln_parse_usage(c, 0, stderr);
	return LN_EXIT_USAGE;
}

int ln_cmd_parse(const struct ln_opt_cmd *c, int argc, char **argv, int *code)
{
	int n = ln_parse_options(c, argc, argv, 0);

	if (n == LN_PARSE_HELP)
		*code = LN_EXIT_OK;
	else if (n < 0)
		*code = LN_EXIT_USAGE;
	return n;
}

void ln_cmd_list(FILE *f)
{
	const struct ln_command *c;

	fprintf(f, "usage: %s\n", ln_cli_globals.usage);
	fputs("\ncommands:\n", f);
	for (c = ln_commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fputs("\nglobal options (anywhere before \"--\"):\n", f);
	ln_parse_option_lines(ln_cli_globals.options, f);
	fputs("\n'llmnet <command> --help' describes a command; 'man llmnet' has the rest.\n", f);
}

const struct ln_command *ln_cmd_find(const char *name)
{
	const struct ln_command *c;

	for (c = ln_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

int cmd_help(int argc, char **argv)
{
	static const struct ln_option options[] = { LN_OPT_END() };
	static const struct ln_opt_cmd cmd = {
		"llmnet help [COMMAND]", "lists the commands, or shows a command's help", options
	};
	const struct ln_command *c;
	char help[] = "--help";
	char *args[3];
	int code;

	argc = ln_cmd_parse(&cmd, argc, argv, &code);
	if (argc < 0)
		return code;
	if (argc < 2) {
		ln_cmd_list(stdout);
		return LN_EXIT_OK;
	}
	c = ln_cmd_find(argv[1]);
	if (!c) {
		ln_error("unknown command '%s'", argv[1]);
		return LN_EXIT_USAGE;
	}
	if (c->fn == cmd_help) {
		ln_cmd_list(stdout);
		return LN_EXIT_OK;
	}
	args[0] = argv[1];
	args[1] = help;
	args[2] = NULL;
	ln_cli.command = c;
	return c->fn(2, args);
}

int cmd_version(int argc, char **argv)
{
	static const struct ln_option options[] = { LN_OPT_END() };
	static const struct ln_opt_cmd cmd = {
		"llmnet version", "prints llmnet's version and agent protocol", options
	};
	int code;

	argc = ln_cmd_parse(&cmd, argc, argv, &code);
	if (argc < 0)
		return code;
	if (argc > 1)
		return ln_cmd_usage(&cmd);
	if (ln_cli.output == LN_OUT_JSON)
		printf("{\"version\":\"%s\"}\n", LN_VERSION);
	else
		printf("llmnet %s\n", LN_VERSION);
	return LN_EXIT_OK;
}
