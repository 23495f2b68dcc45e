// SPDX-License-Identifier: MIT
/*
 * Teardown keeps a subsystem a host still holds (agents/agent/target/holders.c),
 * on the target fixture tree after an apply of request-target.json:
 * nvmet's debugfs shape (ctrl<id>/hostnqn, host_traddr, as 6.10+ writes
 * them), /proc/net/tcp's shape on a kernel without it (and a port shared
 * with a subsystem llmnet does not own, which it cannot read), --force and --keep,
 * what --purge keeps of a kept target, and the warning on a kernel that
 * shows nothing.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <json-c/json.h>

#include "common/frame.h"
#include "common/json.h"

#define REQ FIXTURES_DIR "/agent/request-target.json"
#define T1 "nqn.2024-04.com.example:te1.target1"
#define T2 "nqn.2024-04.com.example:te1.target2"
#define T3 "nqn.2024-04.com.example:te1.target3"
#define CFG "/sys/kernel/config/nvmet"
#define DBG "/sys/kernel/debug/nvmet"

/* A target tree with request-target.json applied. */
static char *applied(void)
{
	const char *args[] = { "apply", NULL };
	struct ln_buf in = LN_BUF_INIT, out = LN_BUF_INIT, e = LN_BUF_INIT;
	char *root = fx_build("node-target");

	assert_non_null(root);
	assert_int_equal(ln_file_read(REQ, &in, &e), 0);
	assert_int_equal(fx_agent(root, args, in.buf, &out, NULL, NULL), 0);
	ln_test_release(&in, &out, &e);
	return root;
}

/* Write text to root/rel, making its directories. */
static void put(const char *root, const char *rel, const char *text)
{
	char p[4096], cmd[4300];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
	assert_int_equal(system(cmd), 0);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int exists(const char *root, const char *rel)
{
	char p[4096];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	return lstat(p, &st) == 0;
}

/* Each test's tree, applied, and the last teardown's answer. */
struct holders {
	char *root;
	struct json_object *ans;
};

static int set_up(void **st)
{
	struct holders *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	h->root = applied();
	*st = h;
	return 0;
}

static int tear_down(void **st)
{
	struct holders *h = *st;

	json_object_put(h->ans);
	fx_remove(h->root);
	free(h);
	return 0;
}

/* Run teardown with extra args; the answer parsed into h->ans (the one
 * before it released). */
static int teardown(struct holders *h, const char *a1, const char *a2, const char *a3)
{
	const char *args[] = { "teardown", a1, a2, a3, NULL };
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, e = LN_BUF_INIT;
	int rc = fx_agent(h->root, args, NULL, &out, &err, NULL);

	json_object_put(h->ans);
	h->ans = NULL;
	if (ln_json_parse(out.buf, out.len, &h->ans, &e) < 0)
		fprintf(stderr, "bad answer (exit %d): %s\n%s\n", rc, out.buf, err.buf);
	assert_non_null(h->ans);
	ln_test_release(&out, &err, &e);
	return rc;
}

/* The reason the answer gives for keeping nqn, or NULL. */
static const char *kept_reason(struct json_object *ans, const char *nqn)
{
	struct json_object *kept = ln_json_at(ans, "kept");
	size_t i;

	for (i = 0; kept && i < json_object_array_length(kept); i++) {
		struct json_object *e = json_object_array_get_idx(kept, i);

		if (!strcmp(ln_json_str_at(e, "nqn"), nqn))
			return ln_json_str_at(e, "reason");
	}
	return NULL;
}

static size_t n_kept(struct json_object *ans)
{
	struct json_object *kept = ln_json_at(ans, "kept");

	return kept ? json_object_array_length(kept) : 0;
}

/* 1 when some warning contains needle. */
static int warned(struct json_object *ans, const char *needle)
{
	struct json_object *w = ln_json_at(ans, "warnings");
	size_t i;

	for (i = 0; w && i < json_object_array_length(w); i++)
		if (strstr(json_object_get_string(json_object_array_get_idx(w, i)), needle))
			return 1;
	return 0;
}

static void test_agent_holders__debugfs_controller_keeps_its_subsystem(void **st)
{
	struct holders *h = *st;

	/* a host outside the spec holds target1, as 6.10+'s debugfs shows it
	 * (hostnqn without a newline, host_traddr with one) */
	put(h->root, DBG "/" T1 "/ctrl3/hostnqn", "nqn.2014-08.org.example:by.hand");
	put(h->root, DBG "/" T1 "/ctrl3/host_traddr", "10.77.0.13\n");
	put(h->root, DBG "/" T1 "/ctrl3/kato", "5000\n");
	put(h->root, DBG "/" T2 "/ns1/reservation", "enable=0\n");
	assert_int_equal(teardown(h, "--purge", NULL, NULL), 1);
	assert_string_equal(kept_reason(h->ans, T1), "host 'nqn.2014-08.org.example:by.hand' "
			    "(10.77.0.13) still holds controller ctrl3");
	assert_int_equal(n_kept(h->ans), 1);
	assert_false(json_object_get_boolean(ln_json_at(h->ans, "converged")));
	/* target1 whole: namespaces, allowed host and its host entry, port link */
	assert_true(exists(h->root, CFG "/subsystems/" T1 "/namespaces/1"));
	assert_true(exists(h->root, CFG "/subsystems/" T1 "/allowed_hosts/"
			    "nqn.2014-08.org.nvmexpress:uuid:1f0f7b8a-0000-4000-8000-000000000002"));
	assert_true(exists(h->root, CFG "/hosts/nqn.2014-08.org.nvmexpress:uuid:1f0f7b8a-0000-4000-8000-000000000002"));
	assert_true(exists(h->root, CFG "/ports/1/subsystems/" T1));
	/* and --purge left its backing files */
	assert_true(exists(h->root, "/var/lib/nvmet/disk1.img"));
	assert_true(exists(h->root, "/run/llmnet/scratch.img"));
	/* the others went: nobody holds them */
	assert_false(exists(h->root, CFG "/subsystems/" T2));
	assert_false(exists(h->root, CFG "/subsystems/" T3));
	assert_false(exists(h->root, "/var/lib/nvmet/disk2.img"));
	assert_false(warned(h->ans, "cannot see"));

	/* the host let go: the next teardown removes target1 */
	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s" DBG "/" T1 "/ctrl3'", h->root);
		assert_int_equal(system(cmd), 0);
	}
	assert_int_equal(teardown(h, "--purge", NULL, NULL), 0);
	assert_int_equal(n_kept(h->ans), 0);
	assert_true(json_object_get_boolean(ln_json_at(h->ans, "converged")));
	assert_false(exists(h->root, CFG "/subsystems/" T1));
	assert_false(exists(h->root, "/var/lib/nvmet/disk1.img"));
}

static void test_agent_holders__force_removes_a_held_subsystem(void **st)
{
	struct holders *h = *st;

	put(h->root, DBG "/" T1 "/ctrl3/hostnqn", "nqn.2014-08.org.example:by.hand");
	assert_int_equal(teardown(h, "--force", T1, NULL), 0);
	assert_int_equal(n_kept(h->ans), 0);
	assert_false(exists(h->root, CFG "/subsystems/" T1));
}

static void test_agent_holders__keep_keeps_what_nobody_holds(void **st)
{
	struct holders *h = *st;

	/* debugfs shows no controller anywhere: only --keep keeps target3 */
	put(h->root, DBG "/" T3 "/ns1/reservation", "enable=0\n");
	assert_int_equal(teardown(h, "--keep", T3, NULL), 1);
	assert_non_null(strstr(kept_reason(h->ans, T3), "did not disconnect (--keep)"));
	assert_int_equal(n_kept(h->ans), 1);
	assert_true(exists(h->root, CFG "/ports/1/subsystems/" T3));
	/* the foreign host target3 allows stays too, owned as it was */
	assert_true(exists(h->root, CFG "/subsystems/" T3 "/allowed_hosts/nqn.2014-08.org.example:foreign.host"));
	assert_false(exists(h->root, CFG "/subsystems/" T1));
	assert_int_equal(teardown(h, NULL, NULL, NULL), 0);
	assert_false(exists(h->root, CFG "/subsystems/" T3));
}

static void test_agent_holders__tcp_connection_keeps_without_debugfs(void **st)
{
	struct holders *h = *st;

	/* no debugfs; /proc/net/tcp as the kernel prints it: 10.77.0.11 is
	 * 0B004D0A (the address word in host order), 4420 is 1144; a LISTEN
	 * socket (0A) and an established one on another port do not hold */
	put(h->root, "/proc/net/tcp",
	    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	    "   0: 0B004D0A:1144 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 100 0 0 10 0\n"
	    "   1: 0B004D0A:0016 0D004D0A:C350 01 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 20 4 1 10 -1\n"
	    "   2: 0B004D0A:1144 0D004D0A:C351 01 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 20 4 1 10 -1\n");
	assert_int_equal(teardown(h, NULL, NULL, NULL), 1);
	/* both tcp subsystems on the port: the table cannot tell which */
	assert_string_equal(kept_reason(h->ans, T1), "a host at 10.77.0.13 still holds a connection "
			    "to tcp port 10.77.0.11:4420 (this kernel has no nvmet debugfs to tell "
			    "which subsystem)");
	assert_non_null(kept_reason(h->ans, T3));
	assert_int_equal(n_kept(h->ans), 2);
	/* the rdma one: nothing to see, said, and removed on the spec's word */
	assert_true(warned(h->ans, "cannot see whether a host outside the spec still holds '" T2
			   "': no nvmet debugfs on this kernel"));
	assert_false(exists(h->root, CFG "/subsystems/" T2));
	/* the connection closed: only the listener is left */
	put(h->root, "/proc/net/tcp",
	    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	    "   0: 0B004D0A:1144 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 100 0 0 10 0\n");
	assert_int_equal(teardown(h, NULL, NULL, NULL), 0);
	assert_int_equal(n_kept(h->ans), 0);
	assert_false(exists(h->root, CFG "/subsystems/" T1));
	assert_false(exists(h->root, CFG "/subsystems/" T3));
}

static void test_agent_holders__tcp_port_shared_with_another_is_not_read(void **st)
{
	struct holders *h = *st;
	char p[4096];

	/* port 1 also exports a subsystem llmnet does not own: a connection
	 * to it may be that one's, so it keeps nothing and says so */
	snprintf(p, sizeof(p), "%s" CFG "/ports/1/subsystems/nqn.2014-08.org.example:foreign.target",
		 h->root);
	assert_int_equal(symlink("../../../subsystems/nqn.2014-08.org.example:foreign.target", p), 0);
	put(h->root, "/proc/net/tcp",
	    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	    "   2: 0B004D0A:1144 0D004D0A:C351 01 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 20 4 1 10 -1\n");
	assert_int_equal(teardown(h, NULL, NULL, NULL), 0);
	assert_int_equal(n_kept(h->ans), 0);
	assert_true(warned(h->ans, "still holds '" T1 "'"));
	assert_true(warned(h->ans, "a tcp port shared with a subsystem llmnet does not own"));
	assert_false(exists(h->root, CFG "/subsystems/" T1));
}

static void test_agent_holders__blind_kernel_is_said(void **st)
{
	struct holders *h = *st;

	/* neither debugfs nor /proc/net/tcp: every subsystem goes, each said */
	assert_int_equal(teardown(h, NULL, NULL, NULL), 0);
	assert_true(warned(h->ans, "still holds '" T1 "'"));
	assert_true(warned(h->ans, "still holds '" T2 "'"));
	assert_true(warned(h->ans, "still holds '" T3 "'"));
	assert_true(warned(h->ans, "relied on the spec's initiators"));
	assert_false(exists(h->root, CFG "/subsystems/" T1));
}

static void test_agent_holders__bad_names_are_usage_errors(void **st)
{
	struct holders *h = *st;

	assert_int_equal(teardown(h, "--keep", "nqn.x/../../etc", NULL), 64);
	assert_true(exists(h->root, CFG "/subsystems/" T1));
	assert_int_equal(teardown(h, "--force", NULL, NULL), 64);
}

/* Teardown in a session with the request {"keep": [...]} the controller
 * sends: kept as with --keep, with no bound on the list (300 names and
 * more, past the envelope's args limit); a malformed request is refused
 * and removes nothing. */
static int session_teardown(const char *root, const char *request, struct json_object **ans)
{
	const char *session[] = { "session", NULL };
	struct ln_buf env = LN_BUF_INIT, in = LN_BUF_INIT, out = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_buf e = LN_BUF_INIT;
	struct json_object *answers = NULL;
	const char *p;
	int rc;

	ln_buf_addf(&env, "{\"id\":1,\"verb\":\"teardown\",\"budget_ms\":120000,"
		    "\"request\":%s}", request);
	assert_int_equal(ln_frame_put(&in, env.buf, env.len), 0);
	(void)fx_agent(root, session, in.buf, &out, &err, NULL);
	/* the one answer frame: "LEN\n{...}" */
	p = strchr(out.buf, '\n');
	assert_non_null(p);
	assert_int_equal(ln_json_parse(p + 1, strlen(p + 1), &answers, &e), 0);
	*ans = json_object_get(ln_json_at(answers, "answer"));
	rc = (int)json_object_get_int(ln_json_at(answers, "exit"));
	json_object_put(answers);
	ln_test_release(&env, &in, &out, &err, &e);
	return rc;
}

static void test_agent_holders__keep_in_the_session_request(void **st)
{
	char *root = applied();
	struct json_object *ans;
	struct ln_buf req = LN_BUF_INIT;
	int i;

	(void)st;
	assert_int_equal(session_teardown(root, "{\"keep\":[\"nqn.x/../../etc\"]}", &ans), 2);
	assert_non_null(strstr(json_object_to_json_string(ans), "keep[0] is not a valid NQN"));
	json_object_put(ans);
	assert_int_equal(session_teardown(root, "{\"keep\":[],\"spare\":1}", &ans), 2);
	json_object_put(ans);
	assert_true(exists(root, CFG "/subsystems/" T1));
	ln_buf_addstr(&req, "{\"force\":[],\"keep\":[");
	for (i = 0; i < 300; i++)
		ln_buf_addf(&req, "\"nqn.2024-04.com.example:other.t%d\",", i);
	ln_buf_addstr(&req, "\"" T3 "\"]}");
	assert_int_equal(session_teardown(root, req.buf, &ans), 1);
	assert_non_null(strstr(kept_reason(ans, T3), "did not disconnect (--keep)"));
	assert_int_equal(n_kept(ans), 1);
	assert_true(exists(root, CFG "/ports/1/subsystems/" T3));
	assert_false(exists(root, CFG "/subsystems/" T1));
	json_object_put(ans);
	ln_buf_release(&req);
	fx_remove(root);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test_setup_teardown(test_agent_holders__debugfs_controller_keeps_its_subsystem, set_up, tear_down),
	cmocka_unit_test_setup_teardown(test_agent_holders__force_removes_a_held_subsystem, set_up, tear_down),
	cmocka_unit_test_setup_teardown(test_agent_holders__keep_keeps_what_nobody_holds, set_up, tear_down),
	cmocka_unit_test_setup_teardown(test_agent_holders__tcp_connection_keeps_without_debugfs, set_up, tear_down),
	cmocka_unit_test_setup_teardown(test_agent_holders__tcp_port_shared_with_another_is_not_read, set_up, tear_down),
	cmocka_unit_test_setup_teardown(test_agent_holders__blind_kernel_is_said, set_up, tear_down),
	cmocka_unit_test_setup_teardown(test_agent_holders__bad_names_are_usage_errors, set_up, tear_down),
	cmocka_unit_test(test_agent_holders__keep_in_the_session_request),
)
