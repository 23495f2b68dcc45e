/* SPDX-License-Identifier: MIT */
/*
 * The option parser's optional value (common/parse-options.c,
 * LN_OPT_EQ_ONLY | LN_OPT_OPTARG, as validate's --drain[=plan]): the bare
 * option calls back with no value, --name=VALUE with it, a following word
 * stays an argument, and --help shows the value as optional; without
 * LN_OPT_OPTARG the bare option is still refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"
#include "common/parse-options.h"

static char seen[64];

static int record(const struct ln_option *opt, const char *v)
{
	(void)opt;
	snprintf(seen, sizeof(seen), "%s", v ? v : "(none)");
	return 0;
}

static const struct ln_option optional[] = {
	LN_OPT_CALLBACK(0, "drain", "plan", "drain", LN_OPT_EQ_ONLY | LN_OPT_OPTARG,
			"takes no value or =plan", record),
	LN_OPT_END(),
};

static const struct ln_option required[] = {
	LN_OPT_CALLBACK(0, "trace", "AREAS", "trace", LN_OPT_EQ_ONLY, "takes areas", record),
	LN_OPT_END(),
};

static int parse(const struct ln_option *opts, const char *a1, const char *a2)
{
	const struct ln_opt_cmd c = { "t", NULL, opts };
	char *argv[] = { (char *)"t", (char *)a1, (char *)a2, NULL };

	seen[0] = '\0';
	return ln_parse_options(&c, a2 ? 3 : 2, argv, 0);
}

static void test_parse_options__optional_value(void **state)
{
	char buf[256] = "";
	FILE *f;

	(void)state;
	assert_int_equal(parse(optional, "--drain", NULL), 1);
	assert_string_equal(seen, "(none)");
	assert_int_equal(parse(optional, "--drain=plan", NULL), 1);
	assert_string_equal(seen, "plan");
	/* the value only with '=': the next word is an argument */
	assert_int_equal(parse(optional, "--drain", "spec.yaml"), 2);
	assert_string_equal(seen, "(none)");
	f = fmemopen(buf, sizeof(buf) - 1, "w");
	assert_non_null(f);
	ln_parse_option_lines(optional, f);
	fclose(f);
	assert_non_null(strstr(buf, "--drain[=plan]"));
	/* the control: a value that is not optional is still needed */
	assert_int_equal(parse(required, "--trace", NULL), LN_PARSE_ERROR);
	assert_string_equal(seen, "");
	assert_int_equal(parse(required, "--trace=all", NULL), 1);
	assert_string_equal(seen, "all");
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_parse_options__optional_value),
)
