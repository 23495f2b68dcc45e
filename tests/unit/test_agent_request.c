// SPDX-License-Identifier: MIT
/*
 * The agent's request parser (agents/agent/request.c) on its own: the
 * wording of its refusals (issue 12, point 10), values it must refuse, and
 * the cost of its duplicate checks on large requests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "agents/agent/request.h"
#include "common/buf.h"

/* Parse text; the refusal's message in err. Returns the parser's code. */
static int parse(const char *text, struct ln_buf *err)
{
	struct ln_request rq;
	int r;

	ln_buf_reset(err);
	r = ln_request_parse(text, strlen(text), &rq, err);
	ln_request_release(&rq);
	return r;
}

static void test_agent_request__request_is_named_once(void **state)
{
	struct ln_buf err = LN_BUF_INIT;

	(void)state;
	assert_true(parse("[]", &err) < 0);
	assert_string_equal(err.buf, "request: expected a JSON object");
	assert_true(parse("{\"protocol\":1}", &err) < 0);
	assert_string_equal(err.buf, "request: missing field 'cluster'");
	assert_true(parse("{\"protocol\":\"x\"}", &err) < 0);
	assert_string_equal(err.buf, "request: field 'protocol' must be int");
	assert_true(parse("{\"protocol\":0}", &err) < 0);
	assert_string_equal(err.buf, "request: 'protocol' must be 1-2147483647, not 0");
	assert_true(parse("{\"protocol\":1,\"cluster\":\"a b\"}", &err) < 0);
	assert_string_equal(err.buf,
			    "request: cluster 'a b' must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}");
	assert_true(parse("{\"protocol\":1,\"cluster\":\"c\",\"targets\":3}", &err) < 0);
	assert_string_equal(err.buf, "request: 'targets' must be a list");
	/* a part of the request keeps its name */
	assert_true(parse("{\"protocol\":1,\"cluster\":\"c\",\"hostfile\":{\"path\":\"x\","
			  "\"format\":\"openmpi\",\"lines\":[]}}", &err) < 0);
	assert_string_equal(err.buf,
			    "request: hostfile: path 'x' must be an absolute, normalized path");
	ln_buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent_request__request_is_named_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
