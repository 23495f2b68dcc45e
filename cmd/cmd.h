/* SPDX-License-Identifier: MIT */
/*
 * The llmnet command table's contract. main.c strips the global options
 * (-q, -v, --no-color, -o, --json, --trace) wherever they stand before
 * "--", fills ln_cli, and calls the command with the rest. Each command
 * parses its own options, answers --help, and returns an exit code from
 * DESIGN.md's table (enum ln_exit).
 */
#ifndef LN_CMD_H
#define LN_CMD_H

enum ln_output { LN_OUT_TEXT, LN_OUT_JSON };

struct ln_cli {
	enum ln_output output;
	int verbosity;		/* -1 quiet, 0 normal, 1 -v, 2 -vv */
	int color;		/* resolved: stdout and stderr may use colour */
};

extern struct ln_cli ln_cli;

struct ln_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/* NULL-terminated; defined in main.c. */
extern const struct ln_command ln_commands[];

/* Print "usage: ..." for a command to stderr and return LN_EXIT_USAGE. */
int ln_cmd_usage(const char *usage);

int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_lint(int argc, char **argv);

#endif
