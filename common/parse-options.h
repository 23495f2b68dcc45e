/* SPDX-License-Identifier: MIT */
/*
 * The one option parser of every llmnet command (git's parse-options
 * idea): each command declares a table of its options, and the same code
 * parses argv by it, reports a bad option in one wording, and prints the
 * command's --help from it. Long options take their value as "--name V"
 * or "--name=V"; short ones as "-o V" or "-oV"; short flags bundle
 * ("-vv"). "--" ends the options.
 */
#ifndef LN_CMD_PARSE_OPTIONS_H
#define LN_CMD_PARSE_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

enum ln_opt_type {
	LN_OPT_END = 0,
	LN_OPT_BOOL,		/* int *: set to 1 */
	LN_OPT_STRING,		/* const char **: a non-empty value, borrowed from argv */
	LN_OPT_NUMBER,		/* long *: a decimal number from min to max */
	LN_OPT_LIST,		/* struct ln_strv *: comma-separated words, appended */
	LN_OPT_CALLBACK,	/* cb(opt, value or NULL for a flag) */
};

enum {
	LN_OPT_HIDDEN = 1,	/* accepted, not shown by --help */
	LN_OPT_NOARG = 2,	/* a callback that takes no value */
	LN_OPT_EQ_ONLY = 4,	/* the value only as --name=VALUE */
	LN_OPT_OPTARG = 8,	/* with EQ_ONLY: a callback's value may be absent (NULL) */
};

struct ln_option;
/* Returns 0, or -1 after reporting the problem with ln_error(). */
typedef int (*ln_opt_cb)(const struct ln_option *opt, const char *value);

struct ln_option {
	enum ln_opt_type type;
	int short_name;		/* 0: none */
	const char *long_name;	/* without "--"; NULL: none */
	void *value;
	const char *argh;	/* the value's name in help ("N", "NODES") */
	const char *help;
	unsigned flags;
	long min, max;		/* LN_OPT_NUMBER */
	/* After the option's name when its value is missing or bad
	 * ("takes node names, comma-separated"); NULL: "needs a value", or
	 * "takes a number from MIN to MAX". */
	const char *bad;
	ln_opt_cb cb;
};

/* A growing NULL-terminated vector of malloc'd words (LN_OPT_LIST). */
struct ln_strv {
	char **v;
	size_t n;
};

void ln_strv_release(struct ln_strv *sv);

#define LN_OPT_BOOL(s, l, p, h) { LN_OPT_BOOL, (s), (l), (p), NULL, (h), 0, 0, 0, NULL, NULL }
#define LN_OPT_STRING(l, p, a, h) { LN_OPT_STRING, 0, (l), (p), (a), (h), 0, 0, 0, NULL, NULL }
#define LN_OPT_NUMBER(l, p, a, h, lo, hi) \
	{ LN_OPT_NUMBER, 0, (l), (p), (a), (h), 0, (lo), (hi), NULL, NULL }
#define LN_OPT_LIST(l, p, a, h, b) { LN_OPT_LIST, 0, (l), (p), (a), (h), 0, 0, 0, (b), NULL }
#define LN_OPT_CALLBACK(s, l, a, h, f, b, c) \
	{ LN_OPT_CALLBACK, (s), (l), NULL, (a), (h), (f), 0, 0, (b), (c) }
#define LN_OPT_HIDDEN_BOOL(l, p) \
	{ LN_OPT_BOOL, 0, (l), (p), NULL, NULL, LN_OPT_HIDDEN, 0, 0, NULL, NULL }
#define LN_OPT_END() { LN_OPT_END, 0, NULL, NULL, NULL, NULL, 0, 0, 0, NULL, NULL }

/* A command as its --help shows it. */
struct ln_opt_cmd {
	const char *usage;	/* "llmnet apply SPEC"; the options follow, from the table */
	const char *about;	/* what it does, for --help; NULL: nothing */
	const struct ln_option *options;
};

enum {
	/* Keep unknown options and arguments in place, and stop (keeping it)
	 * at "--": main.c's pass over the global options. */
	LN_PARSE_KEEP_UNKNOWN = 1,
	/* Stop at the first word that is not an option of the table (an
	 * argument, an unknown option, "-" or "--"), keeping it and every
	 * word after it in place, and report nothing but a bad value: the
	 * agent's options, which come before its verb and the verb's own. */
	LN_PARSE_STOP_AT_ARG = 2,
};

#define LN_PARSE_HELP (-2)
#define LN_PARSE_ERROR (-1)

/*
 * Parse argv[1..argc-1] by c's table; -h and --help are built in (unless
 * LN_PARSE_KEEP_UNKNOWN or LN_PARSE_STOP_AT_ARG). Returns the new argc: argv[0], then the
 * arguments that are not options (and, with LN_PARSE_KEEP_UNKNOWN, the
 * unknown options), in their order, NULL-terminated. LN_PARSE_HELP after
 * printing the help on stdout, LN_PARSE_ERROR after reporting the problem
 * (ln_error) and the usage (stderr). Lists are appended to even on error:
 * the caller releases them.
 */
int ln_parse_options(const struct ln_opt_cmd *c, int argc, char **argv, unsigned flags);

/* "usage: ..." with the table's options, wrapped; with full, the about
 * text and one line per option follow. */
void ln_parse_usage(const struct ln_opt_cmd *c, int full, FILE *f);

/* The option list alone, one line per visible option (global options). */
void ln_parse_option_lines(const struct ln_option *opts, FILE *f);

#endif
