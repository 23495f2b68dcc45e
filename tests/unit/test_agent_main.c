/* SPDX-License-Identifier: MIT */
/*
 * The agent's own options (agents/agent/core/main.c), parsed by the one
 * option parser of common/parse-options.c: they stop at the verb, so what
 * follows it is the verb's; short flags bundle (-vv); an unknown option, a
 * bad one or none of the verbs is a usage answer (exit 64) that names the
 * agent's usage line, as docs/agent-protocol.md states it.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include "agents/agent/core/agent.h"
#include "common/parse-options.h"
#include "common/util.h"

#define USAGE "usage: llmnet-agent [--root DIR] [--budget-ms MS] [-q|-v|-vv] [--trace=AREAS] " \
	      "session|version|facts|plan|apply|teardown|run|restore ..."

static int n_verbose, quiet;
static const char *root_opt;

static int count_verbose(const struct ln_option *opt, const char *v)
{
	(void)opt;
	(void)v;
	n_verbose++;
	return 0;
}

static const struct ln_option options[] = {
	LN_OPT_STRING("root", &root_opt, "DIR", "a root"),
	LN_OPT_CALLBACK('v', NULL, NULL, "verbose", LN_OPT_NOARG, NULL, count_verbose),
	LN_OPT_BOOL('q', NULL, &quiet, "quiet"),
	LN_OPT_END(),
};

static const struct ln_opt_cmd test_cmd = { "test", NULL, options };

/* The words of the last parse, as made (argv is rearranged in place, and
 * a value points into its word). */
static char *copy[16];

static void release_words(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(copy); i++) {
		free(copy[i]);
		copy[i] = NULL;
	}
}

/* Parse words (NULL-terminated) with LN_PARSE_STOP_AT_ARG; the new argc,
 * and what is left of argv after argv[0], space-separated, in left. */
static int parse(const char *const *words, struct ln_buf *left)
{
	char *argv[16];
	int argc = 0, n, i;

	release_words();
	n_verbose = quiet = 0;
	root_opt = NULL;
	while (words[argc]) {
		argv[argc] = copy[argc] = strdup(words[argc]);
		argc++;
	}
	argv[argc] = NULL;
	n = ln_parse_options(&test_cmd, argc, argv, LN_PARSE_STOP_AT_ARG);
	ln_buf_reset(left);
	for (i = 1; i < n; i++)
		ln_buf_addf(left, "%s%s", i > 1 ? " " : "", argv[i]);
	return n;
}

static void test_agent_main__parser_stops_at_the_first_argument(void **st)
{
	struct ln_buf left = LN_BUF_INIT;

	(void)st;
	/* options, then the verb and its own options, untouched */
	assert_int_equal(parse((const char *[]){ "t", "-vv", "--root=/x", "-q", "run", "-v",
						 "--root", "y", NULL }, &left), 5);
	assert_string_equal(left.buf, "run -v --root y");
	assert_int_equal(n_verbose, 2);
	assert_true(quiet);
	assert_string_equal(root_opt, "/x");
	/* "--root DIR" takes the next word */
	assert_int_equal(parse((const char *[]){ "t", "--root", "/y", "version", NULL }, &left), 2);
	assert_string_equal(root_opt, "/y");
	assert_string_equal(left.buf, "version");
	/* an unknown option stops the parse, kept for the caller to refuse */
	assert_int_equal(parse((const char *[]){ "t", "-v", "--bogus", "-v", "x", NULL }, &left),
			 4);
	assert_string_equal(left.buf, "--bogus -v x");
	assert_int_equal(n_verbose, 1);
	assert_int_equal(parse((const char *[]){ "t", "-vx", "y", NULL }, &left), 3);
	assert_string_equal(left.buf, "-vx y");
	assert_int_equal(n_verbose, 0);
	/* "--", "-" and -h are not options of the table either */
	assert_int_equal(parse((const char *[]){ "t", "--", "-v", NULL }, &left), 3);
	assert_string_equal(left.buf, "-- -v");
	assert_int_equal(parse((const char *[]){ "t", "-", NULL }, &left), 2);
	assert_int_equal(parse((const char *[]){ "t", "-h", NULL }, &left), 2);
	assert_string_equal(left.buf, "-h");
	/* a value that is missing is an error */
	assert_int_equal(parse((const char *[]){ "t", "--root", NULL }, &left), LN_PARSE_ERROR);
	assert_int_equal(parse((const char *[]){ "t", NULL }, &left), 1);
	release_words();
	ln_test_release(&left);
}

/* The agent's answer to args: its exit status, and the error message (or
 * the root a version answer names) in what. */
static int agent(const char *const *args, struct ln_buf *what)
{
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, e = LN_BUF_INIT;
	struct json_object *o = NULL;
	const char *s;
	int rc = fx_agent(NULL, args, NULL, &out, &err, NULL);

	ln_buf_reset(what);
	assert_int_equal(ln_json_parse(out.buf, out.len, &o, &e), 0);
	s = ln_json_str_at(ln_json_at(o, "error"), "message");
	if (!s)
		s = ln_json_str_at(o, "root");
	ln_buf_addstr(what, s ? s : "");
	json_object_put(o);
	ln_test_release(&out, &err, &e);
	return rc;
}

static void test_agent_main__options_before_the_verb(void **st)
{
	struct ln_buf what = LN_BUF_INIT, root_eq = LN_BUF_INIT;
	char *root = fx_build("node-target");
	const char *opt;

	(void)st;
	ln_buf_addf(&root_eq, "--root=%s", root);
	opt = root_eq.buf;
	/* bundled flags and --root=DIR: the version answer names that root */
	assert_int_equal(agent((const char *[]){ opt, "-qvv", "--trace=all", "version", NULL },
			       &what), 0);
	assert_string_equal(what.buf, root);
	assert_int_equal(agent((const char *[]){ "-v", "-v", "--root", root, "version", NULL },
			       &what), 0);
	assert_string_equal(what.buf, root);
	/* what follows the verb is the verb's: version takes no option */
	assert_int_equal(agent((const char *[]){ opt, "version", "-v", NULL }, &what),
			 LN_AGENT_EXIT_USAGE);
	assert_string_equal(what.buf, "usage: llmnet-agent version");
	/* an unknown or bad option, or no verb: the agent's usage */
	assert_int_equal(agent((const char *[]){ opt, "--bogus", "version", NULL }, &what),
			 LN_AGENT_EXIT_USAGE);
	assert_string_equal(what.buf, USAGE);
	assert_int_equal(agent((const char *[]){ opt, "--trace=nosuch", "version", NULL }, &what),
			 LN_AGENT_EXIT_USAGE);
	assert_string_equal(what.buf, USAGE);
	assert_int_equal(agent((const char *[]){ opt, "--trace", "all", "version", NULL }, &what),
			 LN_AGENT_EXIT_USAGE);
	assert_string_equal(what.buf, USAGE);
	assert_int_equal(agent((const char *[]){ opt, "-vq", NULL }, &what), LN_AGENT_EXIT_USAGE);
	assert_string_equal(what.buf, USAGE);
	assert_int_equal(agent((const char *[]){ opt, "--", "version", NULL }, &what),
			 LN_AGENT_EXIT_USAGE);
	assert_string_equal(what.buf, USAGE);
	assert_int_equal(agent((const char *[]){ opt, "--root", NULL }, &what),
			 LN_AGENT_EXIT_USAGE);
	assert_string_equal(what.buf, USAGE);
	ln_test_release(&what, &root_eq);
	fx_remove(root);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_main__parser_stops_at_the_first_argument),
	cmocka_unit_test(test_agent_main__options_before_the_verb),
)
