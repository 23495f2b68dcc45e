/* SPDX-License-Identifier: MIT */
/*
 * The llmnet command table's contract. main.c strips the global options
 * (-q, -v, --no-color, -o, --json, --trace) wherever they stand before
 * "--", fills ln_cli, and calls the command with the rest. Each command
 * parses its own options with its table (parse-options.h), which also
 * answers --help, and returns an exit code from docs/exit-codes.md
 * (enum ln_exit).
 */
#ifndef LN_CMD_H
#define LN_CMD_H

#include <stddef.h>

#include "common/parse-options.h"
#include "orchestrator/run/rollout.h"

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

/* Print c's "usage: ..." to stderr and return LN_EXIT_USAGE. */
int ln_cmd_usage(const struct ln_opt_cmd *c);
/* Parse a command's options by its table; *code is the exit code when it
 * returns < 0 (help printed: 0; usage error: 64); else the new argc. */
int ln_cmd_parse(const struct ln_opt_cmd *c, int argc, char **argv, int *code);

int cmd_help(int argc, char **argv);
int cmd_facts(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_teardown(int argc, char **argv);
int cmd_validate(int argc, char **argv);

/* Shared by facts, plan, apply, validate and teardown (ctl.c). */
struct ln_spec;
struct ln_run;
struct ln_ctl_opts {
	const char *spec_path;
	long parallel;			/* 0: the spec's ssh.parallel */
	struct ln_strv limit, accept;	/* node names, checked by ln_run_init */
	struct ln_strv force;		/* teardown --force: target NQNs or node names */
	int detailed, purge, validate, cached;
	struct ln_count batch, max_fail;	/* apply's rollout in waves */
	struct ln_spec *spec;
};

/* The shared options' table entries, one spelling and one wording. */
#define LN_CTL_OPT_PARALLEL(o)                                                                   \
	LN_OPT_NUMBER("parallel", &(o)->parallel, "N",                                           \
		      "work on at most N nodes at once (default: the spec's ssh.parallel)", 1, 4096)
#define LN_CTL_OPT_LIMIT(o)                                                                      \
	LN_OPT_LIST("limit", &(o)->limit, "NODES",                                              \
		    "work only on these nodes (names, ranges as gpu[01-64], @FILE)",             \
		    "takes node names, comma-separated")
#define LN_CTL_OPT_ACCEPT(o)                                                                     \
	LN_OPT_LIST("accept-replaced", &(o)->accept, "NODES",                                    \
		    "these nodes were reinstalled: accept and record their new host keys",       \
		    "takes node names, comma-separated")
/* The three of apply, plan and teardown, in their --help order. */
#define LN_CTL_OPTS_NODES(o) LN_CTL_OPT_PARALLEL(o), LN_CTL_OPT_LIMIT(o), LN_CTL_OPT_ACCEPT(o)

/* facts, plan, apply and teardown: one option table (ctl-options.c). */
enum ln_ctl_cmd { LN_CTL_FACTS, LN_CTL_PLAN, LN_CTL_APPLY, LN_CTL_TEARDOWN };
struct ln_ctl_table {
	struct ln_option options[16];
	struct ln_opt_cmd cmd;
};
/* Parse argv by cmd's options, their values into o (zeroed by the caller),
 * with t to hold the table: 0 to go on, else -1 with *code the exit code
 * (help printed: 0; usage error: 64) and o released. */
int ln_cmd_ctl_options(enum ln_ctl_cmd cmd, struct ln_ctl_opts *o, struct ln_ctl_table *t,
		       int argc, char **argv, int *code);

/*
 * Parse a controller command's argv by its table (o zeroed by the caller,
 * the table pointing into it): the options, then exactly one SPEC.
 * Returns 0 to go on, 1 when --help was printed, -1 on a usage error
 * (reported); on non-zero o is already released.
 */
int ln_cmd_ctl_parse(const struct ln_opt_cmd *c, int argc, char **argv, struct ln_ctl_opts *o);
/* Load the spec (exit 3 on error, nothing contacted; kept when o->spec is
 * already loaded), set up the run and gather facts. Returns an exit code;
 * LN_EXIT_OK to go on. */
int ln_cmd_ctl_start(struct ln_ctl_opts *o, const char *command, struct ln_run *run);
void ln_cmd_ctl_release(struct ln_ctl_opts *o);
/*
 * A controller command's whole course: parse argv by cmd's options, start
 * the run (spec, sessions, facts), then body over it, then release the run
 * and the options. Returns the exit code: body's, or the parse's or the
 * start's when they stop first.
 */
int ln_cmd_ctl_main(enum ln_ctl_cmd cmd, int argc, char **argv, const char *command,
		    int (*body)(struct ln_ctl_opts *o, struct ln_run *run));
/* Its second half, after ln_cmd_ctl_parse(): start the run, body, release. */
int ln_cmd_ctl_run(struct ln_ctl_opts *o, const char *command,
		   int (*body)(struct ln_ctl_opts *o, struct ln_run *run));
/* Load and check o->spec_path into o->spec; on failure print the problems
 * and return LN_EXIT_SPEC ("no node was contacted"), else LN_EXIT_OK. */
int ln_cmd_ctl_load_spec(struct ln_ctl_opts *o);
/* code merged with every node's state and with an interrupt. */
int ln_cmd_ctl_nodes_exit(const struct ln_run *run, int code);

/* What the commands print of a run (output.c); the library never prints. */
struct ln_plan_summary;
/* Print the notes the library kept in run (its warnings, a rollout's
 * waves) since the last call, each at its level on stderr. Called after
 * each library call on the run, before the command prints anything. */
void ln_cmd_notes(struct ln_run *run);
/* Install the fan-out's progress printer for run's phases: each node's
 * line, a live count on a terminal, run's notes before them. */
void ln_cmd_progress(struct ln_run *run);
/* Render to stdout the facts, the plan (sum filled) or the recap of verb
 * (apply, teardown). An exit code: LN_EXIT_FAILED when the output is
 * incomplete, merged into the recap's own for ln_cmd_recap. */
int ln_cmd_facts(struct ln_run *run);
int ln_cmd_plan(struct ln_run *run, struct ln_plan_summary *sum);
int ln_cmd_recap(struct ln_run *run, const char *verb);

/* validate's own options (the reports and their destinations). */
struct ln_cmd_vopts {
	const char *stages, *json, *junit, *html, *metrics, *url;
	long url_timeout_s, attempts;	/* attempts 0: the runner's default */
};
#define LN_CMD_VOPTS_INIT { NULL, NULL, NULL, NULL, NULL, NULL, 10, 0 }

/* Run the given stages (0: the spec's) over a run whose facts are
 * gathered, print the recap, write the reports v asks for. Returns an
 * exit code. */
int ln_cmd_ctl_validate(struct ln_ctl_opts *o, struct ln_run *run, const struct ln_cmd_vopts *v,
			unsigned stages);
/* apply --validate: read the facts again over apply's sessions, then the
 * spec's stages with validate's defaults. */
int ln_cmd_validate_after_apply(struct ln_ctl_opts *o, struct ln_run *run);

int cmd_version(int argc, char **argv);
int cmd_lint(int argc, char **argv);
int cmd_keys(int argc, char **argv);

#endif
