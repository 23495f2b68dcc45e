// SPDX-License-Identifier: MIT
/*
 * The agent's session and identity, end to end through the agent binary:
 * requests answered in order with the one-shot verbs' answers and exit
 * codes, the same node state as one-shot runs, a framing error answered
 * and nothing changed, and the sidecar trusted only while the binary is
 * what `seal` described.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <sys/stat.h>
#include <fcntl.h>

#include "common/frame.h"
#include "orchestrator/transport/push.h"

/* frames of the session requests (NULL-terminated) into out */
static void frames(struct ln_buf *out, const char *const *reqs)
{
	ln_buf_reset(out);
	for (; *reqs; reqs++)
		assert_int_equal(ln_frame_put(out, *reqs, strlen(*reqs)), 0);
}

static char *request_target(void)
{
	struct ln_buf r = LN_BUF_INIT, e = LN_BUF_INIT, env = LN_BUF_INIT;

	assert_int_equal(ln_file_read(FIXTURES_DIR "/agent/request-target.json", &r, &e), 0);
	ln_buf_addf(&env, "{\"id\":2,\"verb\":\"apply\",\"budget_ms\":120000,\"request\":%s}",
		    r.buf);
	ln_test_release(&r, &e);
	return ln_buf_detach(&env, NULL);
}

static void test_agent_session__requests_in_order_as_one_shot(void **st)
{
	const char *session[] = { "session", NULL }, *apply[] = { "apply", NULL };
	char *a = fx_build("node-target"), *b = fx_build("node-target"), *req = request_target();
	const char *reqs[] = { "{\"id\":1,\"verb\":\"version\"}", req,
			       "{\"id\":3,\"verb\":\"teardown\",\"budget_ms\":120000,\"args\":[\"--cluster\"]}",
			       "{\"verb\":\"nosuch\"}", NULL };
	struct ln_buf in = LN_BUF_INIT, out = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_buf ta = LN_BUF_INIT, tb = LN_BUF_INIT, r = LN_BUF_INIT, e = LN_BUF_INIT;
	char *p;

	(void)st;
	frames(&in, reqs);
	assert_int_equal(fx_agent(a, session, in.buf, &out, &err, NULL), 0);
	/* four answers, in order, each with the one-shot verb's exit code */
	p = strstr(out.buf, "{\"protocol\":3,\"id\":1,\"exit\":0,\"answer\":{\"protocol\":3,\"agent\"");
	assert_non_null(p);
	p = strstr(p, "{\"protocol\":3,\"id\":2,\"exit\":0,\"answer\":{\"protocol\":3,\"mode\":\"apply\"");
	assert_non_null(p);
	p = strstr(p, "{\"protocol\":3,\"id\":3,\"exit\":64,\"answer\":{\"protocol\":3,\"error\"");
	assert_non_null(p);
	p = strstr(p, "{\"protocol\":3,\"id\":null,\"exit\":64,");
	assert_non_null(p);
	assert_non_null(strstr(p, "unknown verb 'nosuch'"));
	/* the same apply, one-shot, on a copy: the same node state */
	assert_int_equal(ln_file_read(FIXTURES_DIR "/agent/request-target.json", &r, &e), 0);
	assert_int_equal(fx_agent(b, apply, r.buf, &out, &err, NULL), 0);
	fx_list_rec(a, "/sys/kernel/config", &ta, NULL);
	fx_list_rec(b, "/sys/kernel/config", &tb, NULL);
	assert_true(ta.len > 0);
	assert_string_equal(ta.buf, tb.buf);
	free(req);
	ln_test_release(&in, &out, &err, &ta, &tb, &r, &e);
	fx_remove(a);
	fx_remove(b);
}

static void test_agent_session__framing_error_changes_nothing(void **st)
{
	const char *session[] = { "session", NULL };
	char *root = fx_build("node-target"), *req = request_target();
	struct ln_buf in = LN_BUF_INIT, out = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_buf before = LN_BUF_INIT, after = LN_BUF_INIT;

	(void)st;
	fx_list_mtimes(root, &before);
	/* an apply without its length: garbage, refused before anything runs */
	ln_buf_addstr(&in, req);
	assert_int_equal(fx_agent(root, session, in.buf, &out, &err, NULL), 2);
	assert_non_null(strstr(out.buf, "\"id\":null,\"exit\":2,"));
	assert_non_null(strstr(out.buf, "\"code\":\"frame\""));
	assert_non_null(strstr(out.buf, "malformed frame header: byte 0x7b after 0 digits"));
	/* an apply cut short */
	ln_buf_reset(&in);
	ln_buf_addf(&in, "%zu\n%.40s", strlen(req), req);
	assert_int_equal(fx_agent(root, session, in.buf, &out, &err, NULL), 2);
	assert_non_null(strstr(out.buf, "truncated frame: the input ended after 40 of"));
	fx_list_mtimes(root, &after);
	assert_string_equal(before.buf, after.buf);
	free(req);
	ln_test_release(&in, &out, &err, &before, &after);
	fx_remove(root);
}

/* The budget travels per request (budget_ms): a mutating request without
 * one, or with one out of range, is refused and changes nothing; the next
 * request, with one, runs; a budget that runs out before a change (the
 * fake clock: 1000 ms a change) is answered with code timeout, exit 4,
 * and ends the session, as a one-shot agent exits 4. */
static void test_agent_session__budget_per_request(void **st)
{
	const char *session[] = { "session", NULL };
	char *root = fx_build("node-target"), *req = request_target();
	struct ln_buf in = LN_BUF_INIT, out = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_buf before = LN_BUF_INIT, after = LN_BUF_INIT, nob = LN_BUF_INIT;
	struct ln_buf zero = LN_BUF_INIT, small = LN_BUF_INIT;
	const char *reqs[4] = { NULL };
	const char *p;

	(void)st;
	fx_list_mtimes(root, &before);
	/* the same apply without budget_ms, and with budget_ms 0 */
	p = strstr(req, ",\"budget_ms\":120000");
	assert_non_null(p);
	ln_buf_add(&nob, req, (size_t)(p - req));
	ln_buf_addstr(&nob, p + strlen(",\"budget_ms\":120000"));
	ln_buf_add(&zero, req, (size_t)(p - req));
	ln_buf_addstr(&zero, ",\"budget_ms\":0");
	ln_buf_addstr(&zero, p + strlen(",\"budget_ms\":120000"));
	reqs[0] = nob.buf;
	reqs[1] = zero.buf;
	frames(&in, reqs);
	assert_int_equal(fx_agent(root, session, in.buf, &out, &err, NULL), 0);
	assert_non_null(strstr(out.buf, "{\"protocol\":3,\"id\":2,\"exit\":2,"));
	assert_non_null(strstr(out.buf, "apply: refusing a request without a time budget"));
	assert_non_null(strstr(out.buf, "budget_ms must be 1-86400000 milliseconds"));
	fx_list_mtimes(root, &after);
	assert_string_equal(before.buf, after.buf);
	/* 5500 ms: changes 1-5 made, the 6th refused, the session ends with 4 */
	ln_buf_add(&small, req, (size_t)(p - req));
	ln_buf_addstr(&small, ",\"budget_ms\":5500");
	ln_buf_addstr(&small, p + strlen(",\"budget_ms\":120000"));
	reqs[0] = small.buf;
	reqs[1] = "{\"id\":9,\"verb\":\"version\"}";
	frames(&in, reqs);
	assert_int_equal(fx_agent(root, session, in.buf, &out, &err, "LLMNET_CLOCK_STEP_MS=1000"),
			 LN_AGENT_EXIT_TIMEOUT);
	assert_non_null(strstr(out.buf, "{\"protocol\":3,\"id\":2,\"exit\":4,"));
	assert_non_null(strstr(out.buf, "time budget of 5500 ms ran out before "));
	assert_null(strstr(out.buf, "\"id\":9"));
	/* the budget is the request's: the same apply with 120 s converges */
	reqs[0] = req;
	reqs[1] = NULL;
	frames(&in, reqs);
	assert_int_equal(fx_agent(root, session, in.buf, &out, &err, "LLMNET_CLOCK_STEP_MS=1000"),
			 0);
	assert_non_null(strstr(out.buf, "{\"protocol\":3,\"id\":2,\"exit\":0,"));
	free(req);
	ln_test_release(&in, &out, &err, &before, &after, &nob, &zero, &small);
	fx_remove(root);
}

/* Run the agent copy at bin with args; its stdout into out; exit status. */
static int run_copy(const char *bin, const char *args, const char *in, struct ln_buf *out)
{
	char cmd[8192];
	FILE *f;
	char chunk[4096];
	size_t n;
	int st;

	snprintf(cmd, sizeof(cmd), "printf '%%s' '%s' | '%s' %s 2>/dev/null", in ? in : "", bin,
		 args);
	f = popen(cmd, "r");
	assert_non_null(f);
	ln_buf_reset(out);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		ln_buf_add(out, chunk, n);
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_agent_session__sidecar_only_while_the_file_is_unchanged(void **st)
{
	char dir[] = "/tmp/llmnet-seal.XXXXXX", bin[256], side[300], cmd[600], sha[65];
	const char *version = "25\n{\"id\":1,\"verb\":\"version\"}";
	struct ln_buf data = LN_BUF_INIT, out = LN_BUF_INIT, e = LN_BUF_INIT;
	struct stat sb;
	struct timespec ts[2];

	(void)st;
	assert_non_null(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/llmnet-agent", dir);
	snprintf(side, sizeof(side), "%s.id", bin);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", AGENT_BIN, bin);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ln_file_read(bin, &data, &e), 0);
	ln_sha256_hex(data.buf, data.len, sha);
	/* unsealed: hashed */
	assert_int_equal(run_copy(bin, "session", version, &out), 0);
	assert_non_null(strstr(out.buf, "\"sha256_source\":\"hashed\""));
	assert_non_null(strstr(out.buf, sha));
	/* a seal with another digest is refused and writes nothing */
	assert_int_equal(run_copy(bin, "seal 0000000000000000000000000000000000000000000000000000000000000000",
				  NULL, &out), 70);
	assert_int_not_equal(access(side, F_OK), 0);
	/* sealed: the sidecar's digest */
	snprintf(cmd, sizeof(cmd), "seal %s", sha);
	assert_int_equal(run_copy(bin, cmd, NULL, &out), 0);
	assert_int_equal(access(side, F_OK), 0);
	assert_int_equal(run_copy(bin, "session", version, &out), 0);
	assert_non_null(strstr(out.buf, "\"sha256_source\":\"sidecar\""));
	assert_non_null(strstr(out.buf, sha));
	/* times set back after a touch: the ctime still moved, hashed again */
	assert_int_equal(stat(bin, &sb), 0);
	ts[0] = sb.st_atim;
	ts[1] = sb.st_mtim;
	sleep(1);
	assert_int_equal(chmod(bin, 0700), 0);
	assert_int_equal(utimensat(AT_FDCWD, bin, ts, 0), 0);
	assert_int_equal(run_copy(bin, "session", version, &out), 0);
	assert_non_null(strstr(out.buf, "\"sha256_source\":\"hashed\""));
	assert_non_null(strstr(out.buf, sha));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	ln_test_release(&data, &out, &e);
}

/* restore is the boot unit's verb alone: its retries may outlive any
 * request, so a session refuses it, like session and seal. */
static void test_agent_session__restore_is_no_request_verb(void **st)
{
	const char *session[] = { "session", NULL };
	const char *reqs[] = { "{\"id\":1,\"verb\":\"restore\",\"budget_ms\":1000,"
			       "\"args\":[\"--cluster\",\"c\"]}", NULL };
	char *root = fx_build("node-target");
	struct ln_buf in = LN_BUF_INIT, out = LN_BUF_INIT, err = LN_BUF_INIT;

	(void)st;
	frames(&in, reqs);
	fx_agent(root, session, in.buf, &out, &err, NULL);
	assert_non_null(strstr(out.buf, "'restore' is not a request verb"));
	assert_non_null(strstr(out.buf, "\"exit\":64,"));
	ln_test_release(&in, &out, &err);
	fx_remove(root);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_session__requests_in_order_as_one_shot),
	cmocka_unit_test(test_agent_session__framing_error_changes_nothing),
	cmocka_unit_test(test_agent_session__budget_per_request),
	cmocka_unit_test(test_agent_session__restore_is_no_request_verb),
	cmocka_unit_test(test_agent_session__sidecar_only_while_the_file_is_unchanged),
)
