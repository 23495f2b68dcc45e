/* SPDX-License-Identifier: MIT */
/*
 * llmnet: global options and the command table. Commands match exactly,
 * never by prefix, so a typo can never run a different command.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/log.h"

struct ln_cli ln_cli;

const struct ln_command ln_commands[] = {
	{ "help", cmd_help, "show help for llmnet or a command" },
	{ "version", cmd_version, "print llmnet's version" },
	{ "lint", cmd_lint, "check a spec without contacting any node" },
	{ "facts", cmd_facts, "show what every node is and holds" },
	{ "plan", cmd_plan, "show what apply would change" },
	{ "apply", cmd_apply, "converge every node to the spec" },
	{ "validate", cmd_validate, "check the fabric stage by stage and name bad nodes and links" },
	{ "teardown", cmd_teardown, "remove what llmnet created for this cluster" },
	{ NULL, NULL, NULL },
};

static const char global_usage[] =
	"usage: llmnet [-q] [-v...] [--no-color] [-o text|json] [--trace=AREAS] <command> [args]\n";

int ln_cmd_usage(const char *usage)
{
	fprintf(stderr, "usage: %s\n", usage);
	return LN_EXIT_USAGE;
}

static void print_commands(FILE *f)
{
	const struct ln_command *c;

	fputs(global_usage, f);
	fputs("\ncommands:\n", f);
	for (c = ln_commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fputs("\nglobal options:\n"
	      "  -q, --quiet         errors only\n"
	      "  -v, --verbose       more detail (repeat for debug)\n"
	      "      --no-color      never colour output\n"
	      "  -o, --output FMT    text (default) or json; --json is -o json\n"
	      "      --trace=AREAS   trace ssh,agent,plan,spec,probe,fanout or all\n"
	      "\n'llmnet <command> --help' describes a command; 'man llmnet' has the rest.\n",
	      f);
}

static const struct ln_command *find_command(const char *name)
{
	const struct ln_command *c;

	for (c = ln_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

int cmd_help(int argc, char **argv)
{
	const struct ln_command *c;
	char help[] = "--help";
	char *args[3];

	if (argc < 2) {
		print_commands(stdout);
		return LN_EXIT_OK;
	}
	c = find_command(argv[1]);
	if (!c) {
		ln_error("unknown command '%s'", argv[1]);
		return LN_EXIT_USAGE;
	}
	if (c->fn == cmd_help) {
		print_commands(stdout);
		return LN_EXIT_OK;
	}
	args[0] = argv[1];
	args[1] = help;
	args[2] = NULL;
	return c->fn(2, args);
}

int cmd_version(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		if (!strcmp(argv[1], "--help")) {
			puts("usage: llmnet version\nprints llmnet's version and agent protocol");
			return LN_EXIT_OK;
		}
		return ln_cmd_usage("llmnet version");
	}
	if (ln_cli.output == LN_OUT_JSON)
		printf("{\"version\":\"%s\"}\n", LN_VERSION);
	else
		printf("llmnet %s\n", LN_VERSION);
	return LN_EXIT_OK;
}

/* Remove argv[i] (and n-1 followers) from the vector. */
static void drop_args(int *argc, char **argv, int i, int n)
{
	memmove(&argv[i], &argv[i + n], (size_t)(*argc - i - n + 1) * sizeof(*argv));
	*argc -= n;
}

static int set_output(const char *v)
{
	if (!strcmp(v, "text"))
		ln_cli.output = LN_OUT_TEXT;
	else if (!strcmp(v, "json"))
		ln_cli.output = LN_OUT_JSON;
	else
		return -1;
	return 0;
}

/* Strip global options anywhere before "--"; returns 0 or LN_EXIT_USAGE. */
static int parse_globals(int *argc, char **argv)
{
	int i = 1, no_color = 0;

	while (i < *argc) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			ln_cli.verbosity = -1;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			ln_cli.verbosity = ln_cli.verbosity < 0 ? 1 : ln_cli.verbosity + 1;
		} else if (!strcmp(a, "-vv")) {
			ln_cli.verbosity = 2;
		} else if (!strcmp(a, "--no-color")) {
			no_color = 1;
		} else if (!strcmp(a, "--json")) {
			ln_cli.output = LN_OUT_JSON;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (i + 1 >= *argc || set_output(argv[i + 1]) < 0) {
				ln_error("%s takes text or json", a);
				return LN_EXIT_USAGE;
			}
			drop_args(argc, argv, i, 2);
			continue;
		} else if (!strncmp(a, "--output=", 9) || (!strncmp(a, "-o", 2) && a[2])) {
			const char *v = a[1] == 'o' ? a + 2 : a + 9;

			if (set_output(v) < 0) {
				ln_error("-o takes text or json, not '%s'", v);
				return LN_EXIT_USAGE;
			}
		} else if (!strncmp(a, "--trace=", 8)) {
			if (ln_log_set_trace(a + 8) < 0) {
				ln_error("unknown trace area in '%s'", a + 8);
				return LN_EXIT_USAGE;
			}
		} else {
			i++;
			continue;
		}
		drop_args(argc, argv, i, 1);
	}
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
		print_commands(stderr);
		return LN_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(1, argv);
	if (!strcmp(argv[1], "--version"))
		return cmd_version(1, argv);
	c = find_command(argv[1]);
	if (!c) {
		ln_error("unknown command '%s' (see 'llmnet help')", argv[1]);
		return LN_EXIT_USAGE;
	}
	return c->fn(argc - 1, argv + 1);
}
