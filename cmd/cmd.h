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
#include <stdio.h>

#include "common/parse-options.h"
#include "orchestrator/run/rollout.h"

enum ln_output { LN_OUT_TEXT, LN_OUT_JSON };

struct ln_command;
struct ln_cli {
	enum ln_output output;
	int verbosity;		/* -1 quiet, 0 normal, 1 -v, 2 -vv */
	int color;		/* resolved: stdout and stderr may use colour */
	const struct ln_command *command;	/* the one running (main.c sets it) */
};

extern struct ln_cli ln_cli;

/* A row of the command table. needs: what the library sets up before a
 * controller command's body (LN_NEED_*, orchestrator/run/start.h), as
 * git's builtins declare RUN_SETUP; 0 for a command that contacts no
 * node. */
struct ln_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	unsigned needs;
	const char *summary;
};

/* NULL-terminated; defined in main.c. */
extern const struct ln_command ln_commands[];
/* The global options and llmnet's usage line (main.c). */
extern const struct ln_opt_cmd ln_cli_globals;

/* The command named name exactly, or NULL (cmd-help.c). */
const struct ln_command *ln_cmd_find(const char *name);
/* llmnet's usage, the commands and the global options, to f. */
void ln_cmd_list(FILE *f);

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
	struct ln_strv accept_device;	/* apply --accept-device: NODE:PATH words */
	int detailed, purge, validate, cached, topo, destroy;
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
 * already loaded), then start the run with what the running command's
 * row needs (ln_run_start()). Returns an exit code; LN_EXIT_OK to go on. */
int ln_cmd_ctl_start(struct ln_ctl_opts *o, struct ln_run *run);
void ln_cmd_ctl_release(struct ln_ctl_opts *o);
/*
 * A controller command's whole course: parse argv by cmd's options; with
 * check, load the spec and let check (an exit code: LN_EXIT_OK to go on)
 * refuse the options against it before any node; start the run, then
 * body over it, then release the run and the options. Returns the exit
 * code: body's, or the parse's, the check's or the start's when they stop
 * first.
 */
int ln_cmd_ctl_main(enum ln_ctl_cmd cmd, int argc, char **argv,
		    int (*check)(struct ln_ctl_opts *o),
		    int (*body)(struct ln_ctl_opts *o, struct ln_run *run));
/* Its second half, after ln_cmd_ctl_parse(): start the run, body, release. */
int ln_cmd_ctl_run(struct ln_ctl_opts *o, int (*body)(struct ln_ctl_opts *o, struct ln_run *run));
/* Load and check o->spec_path into o->spec; on failure print the problems
 * and return LN_EXIT_SPEC ("no node was contacted"), else LN_EXIT_OK. */
int ln_cmd_ctl_load_spec(struct ln_ctl_opts *o);

/* What the commands print of a run (output.c); the library never prints. */
struct ln_notes;
struct ln_plan_summary;
/* Say on stderr, each at its level (LN_NOTE_PLAIN as it is), the notes
 * run kept since the last call (run NULL or not set up: none), then those
 * a library call handed back in notes (NULL: none), and release them.
 * Called after each library call, before the command prints anything. */
void ln_cmd_notes(struct ln_run *run, struct ln_notes *notes);
/* Install the fan-out's progress printer for run's phases: each node's
 * line, a live count on a terminal, run's notes before them. */
void ln_cmd_progress(struct ln_run *run);
/* Render to stdout the facts, the plan (sum filled) or the recap of verb
 * (apply, teardown). An exit code: LN_EXIT_FAILED when the output is
 * incomplete, merged into the recap's own for ln_cmd_recap. */
int ln_cmd_facts(struct ln_run *run, int topo);
int ln_cmd_plan(struct ln_run *run, struct ln_plan_summary *sum);
int ln_cmd_recap(struct ln_run *run, const char *verb);


/* validate over a started run (validate, and apply --validate with
 * after_apply set, over apply's own sessions): the recap on stdout, then
 * the reports and after-validate actions vc asks for. The recap's form
 * and the progress lines are set here. Returns the exit code. */
struct ln_validate_cmd;
int ln_cmd_validate_run(struct ln_run *run, struct ln_validate_cmd *vc, int after_apply);

int cmd_version(int argc, char **argv);
int cmd_lint(int argc, char **argv);
int cmd_keys(int argc, char **argv);

#endif
