/* SPDX-License-Identifier: MIT */
/*
 * One option parser for every command, driven by each command's table
 * (parse-options.h). It never exits: a problem is reported once, in one
 * wording ("unknown option '--x'", "--parallel takes a number from 1 to
 * 4096", "--stages needs a value"), and the caller returns exit 64.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse-options.h"
#include "common/log.h"

#define HELP_WIDTH 80
#define HELP_COLUMN 26

void ln_strv_release(struct ln_strv *sv)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = 0;
}

/* The length of the word at p: up to a comma outside brackets, so a
 * range's "gpu[1-4,9]" stays one word. */
static size_t word_len(const char *p)
{
	size_t n;
	int depth = 0;

	for (n = 0; p[n] && (depth || p[n] != ','); n++) {
		if (p[n] == '[')
			depth++;
		else if (p[n] == ']' && depth)
			depth--;
	}
	return n;
}

/* Append the comma-separated words of list (empty words are skipped). */
static int strv_add_list(struct ln_strv *sv, const char *list)
{
	const char *p = list;

	while (*p) {
		size_t len = word_len(p);
		char **nv;

		if (len) {
			nv = realloc(sv->v, (sv->n + 2) * sizeof(*sv->v));
			if (!nv)
				return -ENOMEM;
			sv->v = nv;
			sv->v[sv->n] = strndup(p, len);
			if (!sv->v[sv->n])
				return -ENOMEM;
			sv->v[++sv->n] = NULL;
		}
		p += len;
		if (*p)
			p++;
	}
	return 0;
}

static int takes_value(const struct ln_option *o)
{
	return o->type != LN_OPT_BOOL && !(o->type == LN_OPT_CALLBACK && (o->flags & LN_OPT_NOARG));
}

/* The option as the user spelled it, for messages. */
static void spelled(const struct ln_option *o, int is_long, char *buf, size_t size)
{
	if (is_long)
		snprintf(buf, size, "--%s", o->long_name);
	else
		snprintf(buf, size, "-%c", o->short_name);
}

static void report_bad(const struct ln_option *o, const char *name)
{
	if (o->bad)
		ln_error("%s %s", name, o->bad);
	else if (o->type == LN_OPT_NUMBER)
		ln_error("%s takes a number from %ld to %ld", name, o->min, o->max);
	else
		ln_error("%s needs a value", name);
}

/* Store value (NULL for a flag) into o. Returns 0 or -1 (reported). */
static int apply_value(const struct ln_option *o, const char *name, const char *value)
{
	char *end;
	long n;

	switch (o->type) {
	case LN_OPT_BOOL:
		*(int *)o->value = 1;
		return 0;
	case LN_OPT_STRING:
		if (!value || !*value)
			break;
		*(const char **)o->value = value;
		return 0;
	case LN_OPT_NUMBER:
		if (!value)
			break;
		errno = 0;
		n = strtol(value, &end, 10);
		if (end == value || *end || errno || n < o->min || n > o->max)
			break;
		*(long *)o->value = n;
		return 0;
	case LN_OPT_LIST:
		if (!value || !*value)
			break;
		if (strv_add_list(o->value, value) < 0) {
			ln_error("%s: out of memory", name);
			return -1;
		}
		return 0;
	case LN_OPT_CALLBACK:
		if (!value && takes_value(o) && !(o->flags & LN_OPT_OPTARG))
			break;
		return o->cb(o, value);
	case LN_OPT_END:
		break;
	}
	report_bad(o, name);
	return -1;
}

static const struct ln_option *find_long(const struct ln_option *opts, const char *arg,
					 size_t len)
{
	for (; opts->type != LN_OPT_END; opts++)
		if (opts->long_name && strlen(opts->long_name) == len &&
		    !strncmp(opts->long_name, arg, len))
			return opts;
	return NULL;
}

static const struct ln_option *find_short(const struct ln_option *opts, int c)
{
	for (; opts->type != LN_OPT_END; opts++)
		if (opts->short_name && opts->short_name == c)
			return opts;
	return NULL;
}

/* Does "-abc" name only known short options (a value-taking one ends it)? */
static int shorts_known(const struct ln_option *opts, const char *arg)
{
	const struct ln_option *o;

	for (arg++; *arg; arg++) {
		o = find_short(opts, *arg);
		if (!o)
			return 0;
		if (takes_value(o))
			return 1;
	}
	return 1;
}

/*
 * One option at argv[*i]. Returns 1 when it was taken (with *i on its
 * last word), 0 when it is not in the table, -1 on a reported error.
 */
static int parse_one(const struct ln_option *opts, int argc, char **argv, int *i)
{
	const char *arg = argv[*i], *value, *eq;
	const struct ln_option *o;
	char name[80];

	if (arg[1] == '-') {
		eq = strchr(arg + 2, '=');
		o = find_long(opts, arg + 2, eq ? (size_t)(eq - arg - 2) : strlen(arg + 2));
		if (!o)
			return 0;
		spelled(o, 1, name, sizeof(name));
		if (!takes_value(o)) {
			if (eq) {
				ln_error("%s takes no value", name);
				return -1;
			}
			return apply_value(o, name, NULL) < 0 ? -1 : 1;
		}
		if (eq)
			value = eq + 1;
		else if (!(o->flags & LN_OPT_EQ_ONLY) && *i + 1 < argc)
			value = argv[++*i];
		else
			value = NULL;
		return apply_value(o, name, value) < 0 ? -1 : 1;
	}
	if (!shorts_known(opts, arg))
		return 0;
	for (arg++; *arg; arg++) {
		o = find_short(opts, *arg);
		spelled(o, 0, name, sizeof(name));
		if (!takes_value(o)) {
			if (apply_value(o, name, NULL) < 0)
				return -1;
			continue;
		}
		value = arg[1] ? arg + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
		return apply_value(o, name, value) < 0 ? -1 : 1;
	}
	return 1;
}

static int is_help(const char *a)
{
	return !strcmp(a, "--help") || !strcmp(a, "-h");
}

/* argv[i..argc-1] kept in place after the n words kept so far; the new n. */
static int keep_rest(char **argv, int n, int i, int argc)
{
	while (i < argc)
		argv[n++] = argv[i++];
	return n;
}

int ln_parse_options(const struct ln_opt_cmd *c, int argc, char **argv, unsigned flags)
{
	int keep = flags & (LN_PARSE_KEEP_UNKNOWN | LN_PARSE_STOP_AT_ARG), i, n = 1, r;
	int stop = flags & LN_PARSE_STOP_AT_ARG;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			if (keep) {
				n = keep_rest(argv, n, i, argc);
				break;
			}
			for (i++; i < argc; i++)
				argv[n++] = argv[i];
			break;
		}
		if (a[0] != '-' || !a[1]) {
			if (stop) {
				n = keep_rest(argv, n, i, argc);
				break;
			}
			argv[n++] = argv[i];
			continue;
		}
		if (!keep && is_help(a)) {
			ln_parse_usage(c, 1, stdout);
			return LN_PARSE_HELP;
		}
		r = parse_one(c->options, argc, argv, &i);
		if (r < 0)
			goto fail;
		if (r > 0)
			continue;
		if (stop) {
			n = keep_rest(argv, n, i, argc);
			break;
		}
		if (!keep) {
			ln_error("unknown option '%s'", a);
			goto fail;
		}
		argv[n++] = argv[i];
	}
	argv[n] = NULL;
	return n;
fail:
	if (!keep)
		ln_parse_usage(c, 0, stderr);
	return LN_PARSE_ERROR;
}

/* "--name ARGH" or "-o, --name ARGH" into buf. */
static void option_words(const struct ln_option *o, int both, char *buf, size_t size)
{
	const char *sep = (o->flags & LN_OPT_EQ_ONLY) ? "=" : " ";
	size_t n = 0;

	buf[0] = '\0';
	if (o->short_name && (both || !o->long_name))
		n += (size_t)snprintf(buf, size, "-%c%s", o->short_name, o->long_name ? ", " : "");
	else if (both)
		n += (size_t)snprintf(buf, size, "    ");
	if (n < size && o->long_name)
		n += (size_t)snprintf(buf + n, size - n, "--%s", o->long_name);
	if (n < size && o->argh && takes_value(o))
		snprintf(buf + n, size - n, (o->flags & LN_OPT_OPTARG) ? "[%s%s]" : "%s%s", sep,
			 o->argh);
}

void ln_parse_option_lines(const struct ln_option *opts, FILE *f)
{
	char words[96];
	int w;

	for (; opts->type != LN_OPT_END; opts++) {
		if (opts->flags & LN_OPT_HIDDEN)
			continue;
		option_words(opts, 1, words, sizeof(words));
		w = fprintf(f, "  %s", words);
		if (w >= HELP_COLUMN - 1)
			fprintf(f, "\n%*s", HELP_COLUMN, "");
		else
			fprintf(f, "%*s", HELP_COLUMN - w, "");
		fprintf(f, "%s\n", opts->help ? opts->help : "");
	}
}

void ln_parse_usage(const struct ln_opt_cmd *c, int full, FILE *f)
{
	const struct ln_option *o;
	char words[96];
	int col;

	col = fprintf(f, "usage: %s", c->usage);
	for (o = c->options; o->type != LN_OPT_END; o++) {
		int len;

		if (o->flags & LN_OPT_HIDDEN)
			continue;
		option_words(o, 0, words, sizeof(words));
		len = (int)strlen(words) + 3;
		if (col + len > HELP_WIDTH) {
			fputs("\n      ", f);
			col = 6;
		}
		col += fprintf(f, " [%s]", words);
	}
	fputc('\n', f);
	if (!full)
		return;
	if (c->about)
		fprintf(f, "\n%s\n", c->about);
	fputs("\noptions:\n", f);
	ln_parse_option_lines(c->options, f);
	fprintf(f, "  -h, --help%*sshow this help\n", HELP_COLUMN - 12, "");
	fputs("\nglobal options (-q, -v, -o json, --trace=...): 'llmnet help'\n", f);
}
