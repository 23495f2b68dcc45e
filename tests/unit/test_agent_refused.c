// SPDX-License-Identifier: MIT
/*
 * `facts --refused` (agents/agent/initiator/probe_refused.c) on fixture
 * trees: a target node (the agent applies the request below there) whose
 * nvmet tree judges each connect of the initiator node (access_fixture.c).
 * Each refusal beside its accepted control: a host not allowed and one
 * that is, a claimed NQN with a key and one without, a wrong secret, a
 * plain connect to a TLS port; an accepted connect deleted at once, the
 * node's tree as it was; a connect that hangs cut at the bound; a wrong
 * secret over rdma refused before anything is tried; no secret in any
 * output.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <errno.h>
#include <sys/stat.h>
#include <time.h>

#include "common/proto.h"
#include "common/util.h"

#define INIT "nqn.2014-08.org.nvmexpress:uuid:1f0f7b8a-0000-4000-8000-000000000002"
#define F1 "nqn.2014-08.org.example:foreign.keyed"
#define F2 "nqn.2014-08.org.example:foreign.open"
#define F3 "nqn.2014-08.org.example:foreign.tls"
#define S_OPEN "nqn.2024-04.com.example:te1.open"
#define S_KEYED "nqn.2024-04.com.example:te1.keyed"
#define S_TLS "nqn.2024-04.com.example:te1.tls"
#define K1 "DHHC-1:00:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUEebzGt:"
#define PSK "NVMeTLSkey-1:01:tSY3VcFaqJU/TsU5elbFS+ZxSUs8h9rEvPyr0dNSlqeWiDyN:"
#define NS(f) "\"namespaces\":[{\"nsid\":1,\"file\":\"/var/lib/nvmet/" f ".img\",\"size\":4096}]"

static const char target_req[] =
	"{\"protocol\":3,\"cluster\":\"c\",\"targets\":["
	"{\"nqn\":\"" S_OPEN "\",\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4420,"
	"\"hosts\":[\"" INIT "\",\"" F2 "\"]," NS("open") "},"
	"{\"nqn\":\"" S_KEYED "\",\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4420,"
	"\"hosts\":[\"" F1 "\"]," NS("keyed") ",\"dhchap\":{\"hash\":\"sha256\",\"dhgroup\":"
	"\"null\",\"keys\":[{\"host\":\"" F1 "\",\"key\":\"" K1 "\"}]}},"
	"{\"nqn\":\"" S_TLS "\",\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4430,"
	"\"tls\":\"required\",\"hosts\":[\"" F3 "\"]," NS("tls") ",\"dhchap\":{\"hash\":\"sha256\","
	"\"dhgroup\":\"null\",\"keys\":[{\"host\":\"" F3 "\",\"key\":\"" K1 "\",\"psk\":\"" PSK
	"\"}]}}]}";

/* The target node with the three subsystems, and the initiator node with
 * its host identity, whose fabric maps the target's address to it and
 * whose connects the target's tree judges. */
static void two_nodes(char **target, char **init)
{
	const char *apply[] = { "apply", NULL };
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	char map[4200], p[4200];

	*target = fx_build("node-target-6.12");
	*init = fx_build("node-initiator");
	assert_non_null(*target);
	assert_non_null(*init);
	assert_int_equal(fx_put(*target, "/proc/keys", "292bb69c I------     2 perm 1f1f0000     "
				"0     0 keyring   .nvme: empty\n"), 0);
	snprintf(p, sizeof(p), "%s/proc/4242", *target);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(fx_put(*target, "/proc/4242/comm", "tlshd\n"), 0);
	if (fx_agent(*target, apply, target_req, &out, &err, NULL) != 0)
		fail_msg("target apply: %s %s", err.buf, out.buf);
	snprintf(map, sizeof(map), "10.77.0.11 %s\n", *target);
	assert_int_equal(fx_put(*init, "/etc/llmnet-fixture/fabric", map), 0);
	assert_int_equal(fx_put(*init, "/etc/llmnet-fixture/access-control", ""), 0);
	snprintf(p, sizeof(p), "%s/etc/nvme", *init);
	mkdir(p, 0755);
	assert_int_equal(fx_put(*init, "/etc/nvme/hostnqn", INIT "\n"), 0);
	assert_int_equal(fx_put(*init, "/etc/nvme/hostid",
				"1f0f7b8a-0000-4000-8000-000000000002\n"), 0);
	ln_test_release(&out, &err);
}

/* `facts --refused P... --timeout T` on root: the answer's attempts (the
 * caller's) when want_rc is 0; the exit status is checked either way, and
 * neither output holds a secret. */
static struct json_object *refused(const char *root, const char *const *places, size_t n,
				   const char *timeout, int want_rc)
{
	const char *args[40];
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	struct json_object *o, *arr = NULL;
	size_t i, k = 0;

	args[k++] = "facts";
	for (i = 0; i < n; i++) {
		args[k++] = "--refused";
		args[k++] = places[i];
	}
	if (timeout) {
		args[k++] = "--timeout";
		args[k++] = timeout;
	}
	args[k] = NULL;
	assert_int_equal(fx_agent(root, args, NULL, &out, &err, NULL), want_rc);
	assert_null(strstr(out.buf, "DHHC-1"));
	assert_null(strstr(err.buf, "DHHC-1"));
	o = json_tokener_parse(out.buf);
	assert_non_null(o);
	if (!want_rc) {
		assert_true(json_object_object_get_ex(o, "refused", &arr));
		assert_int_equal(json_object_array_length(arr), n);
		json_object_get(arr);
	}
	json_object_put(o);
	ln_test_release(&out, &err);
	return arr;
}

static const char *str(struct json_object *arr, size_t i, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(json_object_array_get_idx(arr, i), key, &v))
		return "(absent)";
	return json_object_get_string(v);
}

static int unlink_knob(const char *root, const char *name)
{
	char p[4200];

	snprintf(p, sizeof(p), "%s/etc/llmnet-fixture/%s", root, name);
	return unlink(p);
}

/* The whole tree of root but the fixture's own knobs. */
static int skip_knobs(const char *rel)
{
	return !strncmp(rel, "/etc/llmnet-fixture", 19);
}

/* Each refusal beside its control, in one request, the attempts answered
 * in order; the accepted ones deleted at once, the initiator's tree as it
 * was before. */
static void test_agent_refused__refusals_and_controls(void **st)
{
	const char *places[] = {
		"tcp,10.77.0.11,4420," S_KEYED ",self,none",	/* not in hosts */
		"tcp,10.77.0.11,4420," S_OPEN ",self,none",	/* its control: in hosts */
		"tcp,10.77.0.11,4420," S_KEYED "," F1 ",none",	/* a claim, keyed */
		"tcp,10.77.0.11,4420," S_KEYED "," F1 ",wrong",	/* the same, a wrong secret */
		"tcp,10.77.0.11,4420," S_OPEN "," F2 ",none",	/* the control: no key */
		"tcp,10.77.0.11,4430," S_TLS "," F3 ",none",	/* plain TCP to a TLS port */
		"tcp,10.77.0.11,4431," S_OPEN ",self,none",	/* nothing listens there */
	};
	struct ln_buf before = LN_BUF_INIT, after = LN_BUF_INIT;
	struct json_object *a;
	char *target, *init;

	(void)st;
	two_nodes(&target, &init);
	fx_list(init, &before, skip_knobs);
	a = refused(init, places, ARRAY_SIZE(places), "10", 0);
	assert_string_equal(str(a, 0, "outcome"), "refused");
	assert_string_equal(str(a, 0, "errno"), "5");
	assert_non_null(strstr(str(a, 0, "error"), "(Connect Invalid Host)"));
	assert_string_equal(str(a, 0, "host_nqn"), INIT);
	assert_string_equal(str(a, 0, "claimed"), "false");
	assert_string_equal(str(a, 1, "outcome"), "accepted");
	assert_string_equal(str(a, 1, "deleted_at_once"), "true");
	assert_string_equal(str(a, 1, "left_behind"), "0");
	assert_string_equal(str(a, 1, "swept"), "0");
	assert_string_equal(str(a, 2, "outcome"), "refused");
	assert_non_null(strstr(str(a, 2, "error"), "(authentication failed)"));
	assert_string_equal(str(a, 2, "host_nqn"), F1);
	assert_string_equal(str(a, 2, "claimed"), "true");
	assert_string_equal(str(a, 3, "outcome"), "refused");
	assert_string_equal(str(a, 3, "secret"), "wrong");
	assert_non_null(strstr(str(a, 3, "error"), "(authentication failed)"));
	assert_string_equal(str(a, 4, "outcome"), "accepted");
	assert_string_equal(str(a, 4, "deleted_at_once"), "true");
	assert_string_equal(str(a, 5, "outcome"), "refused");
	assert_non_null(strstr(str(a, 5, "error"), "(the port takes TLS only)"));
	assert_string_equal(str(a, 6, "outcome"), "unreachable");
	json_object_put(a);
	fx_list(init, &after, skip_knobs);
	assert_string_equal(before.buf, after.buf);
	ln_test_release(&before, &after);
	fx_remove(target);
	fx_remove(init);
}

/* A target that never answers costs the bound, not more: the attempt is
 * "timeout" after 1 s of a 4 s hang, nothing left behind; the control,
 * the same attempt without the hang, is refused at once. A connect that
 * blocks after it made its controller is cut too, and the controller
 * swept. */
static void test_agent_refused__bounded(void **st)
{
	const char *place[] = { "tcp,10.77.0.11,4420," S_KEYED ",self,none" };
	const char *open_place[] = { "tcp,10.77.0.11,4420," S_OPEN ",self,none" };
	struct ln_buf before = LN_BUF_INIT, after = LN_BUF_INIT;
	struct json_object *a;
	char *target, *init;
	time_t t0;

	(void)st;
	two_nodes(&target, &init);
	fx_list(init, &before, skip_knobs);
	assert_int_equal(fx_put(init, "/etc/llmnet-fixture/connect-hangs", "4\n"), 0);
	t0 = time(NULL);
	a = refused(init, place, 1, "1", 0);
	assert_true(time(NULL) - t0 < 4);
	assert_string_equal(str(a, 0, "outcome"), "timeout");
	assert_string_equal(str(a, 0, "left_behind"), "0");
	json_object_put(a);
	fx_list(init, &after, skip_knobs);
	assert_string_equal(before.buf, after.buf);
	assert_int_equal(fx_put(init, "/etc/llmnet-fixture/connect-hangs", "0\n"), 0);
	a = refused(init, place, 1, "1", 0);
	assert_string_equal(str(a, 0, "outcome"), "refused");
	assert_string_equal(str(a, 0, "swept"), "0");
	json_object_put(a);
	/* accepted, then the connect blocks: the bound kills the child before
	 * its delete, and the sweep deletes the controller it made */
	assert_int_equal(fx_put(init, "/etc/llmnet-fixture/connected-hangs", "4\n"), 0);
	a = refused(init, open_place, 1, "1", 0);
	assert_string_equal(str(a, 0, "outcome"), "timeout");
	assert_string_equal(str(a, 0, "swept"), "1");
	assert_string_equal(str(a, 0, "left_behind"), "0");
	json_object_put(a);
	assert_int_equal(unlink_knob(init, "connected-hangs"), 0);
	fx_list(init, &after, skip_knobs);
	assert_string_equal(before.buf, after.buf);
	ln_test_release(&before, &after);
	fx_remove(target);
	fx_remove(init);
}

/* What is refused before anything is tried (usage, exit 64): a wrong
 * secret over rdma (its control, none over rdma, is tried), no bound or
 * one out of range, a bad host NQN or key, more than 16 places, and no
 * time budget. A node without its host ID tries nothing and says why. */
static void test_agent_refused__usage(void **st)
{
	const char *rdma_wrong[] = { "rdma,10.77.0.11,4420," S_OPEN ",self,wrong" };
	const char *rdma_none[] = { "rdma,10.77.0.11,4420," S_OPEN ",self,none" };
	const char *bad_host[] = { "tcp,10.77.0.11,4420," S_OPEN ",host one,none" };
	const char *bad_key[] = { "tcp,10.77.0.11,4420," S_OPEN ",self,right" };
	const char *many[17], *args[] = { "facts", "--refused", rdma_none[0], "--timeout", "5",
					  NULL };
	struct ln_buf before = LN_BUF_INIT, after = LN_BUF_INIT, out = LN_BUF_INIT;
	struct json_object *a;
	char *target, *init, p[4200];
	size_t i;

	(void)st;
	two_nodes(&target, &init);
	fx_list(init, &before, skip_knobs);
	json_object_put(refused(init, rdma_wrong, 1, "5", LN_AGENT_EXIT_USAGE));
	a = refused(init, rdma_none, 1, "5", 0);
	assert_string_equal(str(a, 0, "secret"), "none");
	json_object_put(a);
	json_object_put(refused(init, rdma_none, 1, NULL, LN_AGENT_EXIT_USAGE));
	json_object_put(refused(init, rdma_none, 1, "0", LN_AGENT_EXIT_USAGE));
	json_object_put(refused(init, rdma_none, 1, "601", LN_AGENT_EXIT_USAGE));
	json_object_put(refused(init, bad_host, 1, "5", LN_AGENT_EXIT_USAGE));
	json_object_put(refused(init, bad_key, 1, "5", LN_AGENT_EXIT_USAGE));
	for (i = 0; i < 17; i++)
		many[i] = rdma_none[0];
	json_object_put(refused(init, many, 17, "5", LN_AGENT_EXIT_USAGE));
	assert_int_equal(fx_agent_nobudget(init, args, NULL, &out, NULL, NULL),
			 LN_AGENT_EXIT_USAGE);
	assert_non_null(strstr(out.buf, "needs a time budget"));
	fx_list(init, &after, skip_knobs);
	assert_string_equal(before.buf, after.buf);
	snprintf(p, sizeof(p), "%s/etc/nvme/hostid", init);
	assert_int_equal(unlink(p), 0);
	a = refused(init, rdma_none, 1, "5", 0);
	assert_string_equal(str(a, 0, "outcome"), "error");
	assert_non_null(strstr(str(a, 0, "error"), "no host NQN or host ID"));
	json_object_put(a);
	ln_test_release(&before, &after, &out);
	fx_remove(target);
	fx_remove(init);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent_refused__refusals_and_controls),
		cmocka_unit_test(test_agent_refused__bounded),
		cmocka_unit_test(test_agent_refused__usage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
