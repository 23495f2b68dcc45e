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

#include <stddef.h>

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
int cmd_facts(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_teardown(int argc, char **argv);
int cmd_validate(int argc, char **argv);

/* Shared by facts, plan, apply and teardown (cmd-apply.c). */
struct ln_spec;
struct ln_run;
enum {
	LN_CTL_PARALLEL = 1,
	LN_CTL_LIMIT = 2,
	LN_CTL_ACCEPT = 4,
	LN_CTL_DETAILED = 8,
	LN_CTL_PURGE = 16,
	LN_CTL_VALIDATE = 32,
};
struct ln_ctl_opts {
	const char *spec_path;
	unsigned parallel;
	char **limit, **accept;
	size_t n_limit, n_accept;
	int detailed, purge, validate;
	char *to_free[32];
	size_t n_to_free;
	struct ln_spec *spec;
};
/* Parse the shared options; 1: --help printed, -1: usage error. */
int ln_cmd_ctl_parse(int argc, char **argv, unsigned flags, const char *usage,
		     struct ln_ctl_opts *o);
/* Load the spec (exit 3 on error, nothing contacted), set up the run and
 * gather facts. Returns an exit code; LN_EXIT_OK to go on. */
int ln_cmd_ctl_start(struct ln_ctl_opts *o, const char *command, struct ln_run *run);
void ln_cmd_ctl_release(struct ln_ctl_opts *o);
/* apply --validate: the spec's stages over apply's own run (cmd-validate.c). */
int ln_cmd_validate_after_apply(struct ln_ctl_opts *o, struct ln_run *run);
int cmd_version(int argc, char **argv);
int cmd_lint(int argc, char **argv);

#endif
