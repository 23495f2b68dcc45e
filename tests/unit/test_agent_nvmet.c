// SPDX-License-Identifier: MIT
/*
 * nvmet reconcile on fixture trees (the fixture fsops enforce 6.1's configfs
 * rules, and 6.12's objects on the tree recorded from the lab's 6.12 guest):
 * golden first apply, a converged apply that writes nothing,
 * teardown back to the exact prior listing, refused requests that change
 * nothing, DH-HMAC-CHAP on a kernel without it, and the failpoint loop over
 * every change of a full apply and teardown.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <json-c/json.h>

#include "common/json.h"

#define REQ FIXTURES_DIR "/agent/request-target.json"

static char *slurp(const char *path)
{
	struct ln_buf b = LN_BUF_INIT, e = LN_BUF_INIT;

	assert_int_equal(ln_file_read(path, &b, &e), 0);
	ln_buf_release(&e);
	return ln_buf_detach(&b, NULL);
}

static struct json_object *parse(struct ln_buf *out)
{
	struct ln_buf e = LN_BUF_INIT;
	struct json_object *o = NULL;

	if (ln_json_parse(out->buf, out->len, &o, &e) < 0)
		fprintf(stderr, "bad answer: %s\n%s\n", e.buf, out->buf);
	assert_non_null(o);
	ln_buf_release(&e);
	return o;
}

static int64_t summary(struct json_object *o, const char *key)
{
	struct json_object *s, *v;

	assert_true(json_object_object_get_ex(o, "summary", &s));
	assert_true(json_object_object_get_ex(s, key, &v));
	return json_object_get_int64(v);
}

static int run(const char *root, const char *verb, const char *in, struct ln_buf *out,
	       const char *env)
{
	const char *args[] = { verb, NULL };
	struct ln_buf err = LN_BUF_INIT;
	int rc = fx_agent(root, args, in, out, &err, env);

	if (rc != 0 && rc != 99)
		fprintf(stderr, "%s rc %d: %s\n%s\n", verb, rc, err.buf, out->buf);
	ln_buf_release(&err);
	return rc;
}

/* "ACTION KIND ID\n" per change of answer o. */
static void change_lines(struct json_object *o, struct ln_buf *b)
{
	struct json_object *changes = json_object_object_get(o, "changes");
	size_t i;

	for (i = 0; changes && i < json_object_array_length(changes); i++) {
		struct json_object *c = json_object_array_get_idx(changes, i);

		ln_buf_addf(b, "%s %s %s\n",
			    json_object_get_string(json_object_object_get(c, "action")),
			    json_object_get_string(json_object_object_get(c, "kind")),
			    json_object_get_string(json_object_object_get(c, "id")));
	}
}

/* What apply+teardown may leave: kept backing files (and their directories),
 * the state file, the lock file. */
static int skip_owned_leftovers(const char *rel)
{
	return !strncmp(rel, "/var/lib/llmnet", 15) || !strcmp(rel, "/run/llmnet.lock") ||
	       !strncmp(rel, "/var/lib/nvmet", 14) || !strncmp(rel, "/run/llmnet", 11) ||
	       !strcmp(rel, "/var/lib/nvmet/t.img");
}

/* The golden first apply (the changes listed in golden), a converged apply
 * and a teardown on the target tree; bio2: buffered_io of namespace 2, the
 * file on /run (tmpfs). */
static void golden_cycle(const char *tree, const char *golden_file, const char *bio2)
{
	char *root = fx_build(tree), *req = slurp(REQ), *golden;
	struct ln_buf out = LN_BUF_INIT, before = LN_BUF_INIT, after = LN_BUF_INIT, got = LN_BUF_INIT;
	struct ln_buf m1 = LN_BUF_INIT, m2 = LN_BUF_INIT;
	struct json_object *o, *changes;
	size_t i;

	assert_non_null(root);
	fx_list(root, &before, skip_owned_leftovers);
	assert_int_equal(run(root, "apply", req, &out, NULL), 0);
	o = parse(&out);
	assert_true(json_object_object_get_ex(o, "changes", &changes));
	for (i = 0; i < json_object_array_length(changes); i++) {
		struct json_object *c = json_object_array_get_idx(changes, i), *d;

		ln_buf_addf(&got, "%s %s %s %s\n",
			    json_object_get_string(json_object_object_get(c, "action")),
			    json_object_get_string(json_object_object_get(c, "kind")),
			    json_object_get_string(json_object_object_get(c, "id")),
			    json_object_object_get_ex(c, "detail", &d) ? json_object_get_string(d) : "");
	}
	{
		char gp[4096];

		snprintf(gp, sizeof(gp), "%s/agent/%s", FIXTURES_DIR, golden_file);
		golden = slurp(gp);
	}
	if (strcmp(got.buf, golden))
		fprintf(stderr, "%s: the changes differ from %s:\n%s", tree, golden_file, got.buf);
	assert_string_equal(got.buf, golden);
	json_object_put(o);
	/* the kernel's view: buffered_io only where O_DIRECT is refused */
	{
		char p[4096];
		struct ln_buf v = LN_BUF_INIT, e = LN_BUF_INIT;

		snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/"
			 "nqn.2024-04.com.example:te1.target1/namespaces/2/buffered_io", root);
		assert_int_equal(ln_file_read(p, &v, &e), 0);
		assert_string_equal(v.buf, bio2);
		ln_buf_reset(&v);
		snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/"
			 "nqn.2024-04.com.example:te1.target1/namespaces/1/buffered_io", root);
		assert_int_equal(ln_file_read(p, &v, &e), 0);
		assert_string_equal(v.buf, "0\n");
		ln_buf_reset(&v);
		snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/"
			 "nqn.2024-04.com.example:te1.target2/attr_allow_any_host", root);
		assert_int_equal(ln_file_read(p, &v, &e), 0);
		assert_string_equal(v.buf, "1\n");
		ln_test_release(&v, &e);
	}
	/* converged: only ok, and nothing written (mtimes and contents equal) */
	fx_list_mtimes(root, &m1);
	assert_int_equal(run(root, "apply", req, &out, NULL), 0);
	fx_list_mtimes(root, &m2);
	assert_string_equal(m1.buf, m2.buf);
	o = parse(&out);
	assert_int_equal(summary(o, "create") + summary(o, "change") + summary(o, "remove"), 0);
	assert_true(summary(o, "ok") > 10);
	json_object_put(o);
	/* plan on a converged node: converged */
	assert_int_equal(run(root, "plan", req, &out, NULL), 0);
	o = parse(&out);
	assert_true(json_object_get_boolean(json_object_object_get(o, "converged")));
	json_object_put(o);
	/* teardown --plan (plan --destroy): changes nothing, and lists
	 * exactly what the teardown after it removes */
	{
		const char *args[] = { "teardown", "--plan", NULL };
		struct ln_buf err = LN_BUF_INIT, planned = LN_BUF_INIT, removed = LN_BUF_INIT;

		fx_list_mtimes(root, &m1);
		assert_int_equal(fx_agent(root, args, NULL, &out, &err, NULL), 0);
		fx_list_mtimes(root, &m2);
		assert_string_equal(m1.buf, m2.buf);
		o = parse(&out);
		assert_true(summary(o, "remove") > 10);
		change_lines(o, &planned);
		json_object_put(o);
		assert_int_equal(run(root, "teardown", NULL, &out, NULL), 0);
		o = parse(&out);
		change_lines(o, &removed);
		json_object_put(o);
		assert_string_equal(planned.buf, removed.buf);
		ln_test_release(&err, &planned, &removed);
	}
	/* teardown: back to the listing from before, foreign objects intact */
	fx_list(root, &after, skip_owned_leftovers);
	assert_string_equal(before.buf, after.buf);
	assert_int_equal(run(root, "teardown", NULL, &out, NULL), 0);
	o = parse(&out);
	assert_int_equal(summary(o, "remove"), 0);
	json_object_put(o);
	free(req);
	free(golden);
	ln_test_release(&out, &before, &after, &got, &m1, &m2);
	fx_remove(root);
}

static void test_agent_nvmet__golden_then_converged_then_teardown(void **st)
{
	(void)st;
	golden_cycle("node-target", "request-target.golden", "1\n");
}

/* The same on the tree recorded from the lab's 6.12 guest
 * (tests/lab/record-agent-tree): 6.12's objects have more attributes and a
 * passthru group, its host entries DH-HMAC-CHAP attributes, and its tmpfs
 * takes O_DIRECT: the same changes as on 6.1, but no buffered_io. */
static void test_agent_nvmet__golden_on_the_6_12_tree(void **st)
{
	(void)st;
	golden_cycle("node-target-6.12", "request-target-6.12.golden", "0\n");
}

/* A subsystem llmnet did not make linked to llmnet's tcp port: teardown
 * keeps the port (its own links go, the other's stays), and teardown
 * --plan says the same, though in a plan the own links are still there;
 * the rdma port, with only its own link, is removed by both. */
static void test_agent_nvmet__destroy_plan_keeps_a_shared_port(void **st)
{
	const char *plan[] = { "teardown", "--plan", NULL };
	char *root = fx_build("node-target"), *req = slurp(REQ), p[4096], t[4096];
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, planned = LN_BUF_INIT,
		      removed = LN_BUF_INIT;
	struct json_object *o;

	(void)st;
	assert_int_equal(run(root, "apply", req, &out, NULL), 0);
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/ports/1/subsystems/"
		 "nqn.2014-08.org.example:foreign.target", root);
	snprintf(t, sizeof(t), "%s/sys/kernel/config/nvmet/subsystems/"
		 "nqn.2014-08.org.example:foreign.target", root);
	assert_int_equal(symlink(t, p), 0);
	assert_int_equal(fx_agent(root, plan, NULL, &out, &err, NULL), 0);
	o = parse(&out);
	change_lines(o, &planned);
	json_object_put(o);
	assert_null(strstr(planned.buf, "remove nvmet_port tcp/10.77.0.11/4420\n"));
	assert_non_null(strstr(planned.buf, "remove nvmet_port rdma/10.77.0.11/4420\n"));
	assert_non_null(strstr(out.buf, "kept port 1"));
	assert_int_equal(run(root, "teardown", NULL, &out, NULL), 0);
	o = parse(&out);
	change_lines(o, &removed);
	json_object_put(o);
	assert_string_equal(planned.buf, removed.buf);
	assert_int_equal(access(p, F_OK), 0);
	free(req);
	ln_test_release(&out, &err, &planned, &removed);
	fx_remove(root);
}

static void expect_refused(const char *root, const char *req, const char *needle, int code)
{
	struct ln_buf out = LN_BUF_INIT, before = LN_BUF_INIT, after = LN_BUF_INIT;

	fx_list_mtimes(root, &before);
	assert_int_equal(run(root, "apply", req, &out, NULL), code);
	if (!strstr(out.buf, needle))
		fprintf(stderr, "expected '%s' in %s\n", needle, out.buf);
	assert_non_null(strstr(out.buf, needle));
	fx_list_mtimes(root, &after);
	assert_string_equal(before.buf, after.buf);
	ln_test_release(&out, &before, &after);
}

static void test_agent_nvmet__bad_requests_change_nothing(void **st)
{
	char *root = fx_build("node-target");
	struct ln_buf out = LN_BUF_INIT;

	(void)st;
	/* a node that ran the agent once has its lock file; nothing else */
	assert_int_equal(run(root, "teardown", NULL, &out, NULL), 0);
	ln_buf_release(&out);
	expect_refused(root, "{\"protocol\":1,\"cluster\":\"c\",\"targetz\":[]}",
		       "unknown field 'targetz'", 2);
	expect_refused(root, "{\"protocol\":4,\"cluster\":\"c\",\"future\":1}",
		       "speaks protocol 4", 2);
	expect_refused(root,
		       "{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":\"nqn.x/../../etc\","
		       "\"transport\":\"tcp\",\"address\":\"10.0.0.1\",\"service\":4420,\"hosts\":\"any\"}]}",
		       "is not a valid NQN", 2);
	expect_refused(root,
		       "{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":\"nqn.2024-04.x:t\","
		       "\"transport\":\"tcp\",\"address\":\"host.example\",\"service\":4420,\"hosts\":\"any\"}]}",
		       "numeric IPv4 or IPv6", 2);
	expect_refused(root,
		       "{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":\"nqn.2024-04.x:t\","
		       "\"transport\":\"tcp\",\"address\":\"10.0.0.1\",\"service\":4420,\"hosts\":\"any\","
		       "\"namespaces\":[{\"nsid\":1,\"file\":\"/var/../etc/shadow\",\"size\":4096}]}]}",
		       "absolute, normalized path", 2);
	expect_refused(root,
		       "{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":\"nqn.2024-04.x:t\","
		       "\"transport\":\"tcp\",\"address\":\"10.0.0.1\",\"service\":4420,\"hosts\":\"any\","
		       "\"namespaces\":[{\"nsid\":1,\"file\":\"/a.img\",\"size\":4096,\"mode\":1}]}]}",
		       "unknown field 'mode'", 2);
	expect_refused(root,
		       "{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":\"nqn.2024-04.x:t\","
		       "\"transport\":\"tcp\",\"address\":\"10.0.0.1\",\"service\":4420,\"hosts\":\"any\","
		       "\"dhchap\":{\"hash\":\"sha256\",\"dhgroup\":\"null\",\"keys\":[]}}]}",
		       "cannot go with hosts", 2);
	expect_refused(root, "{\"protocol\":1,\"cluster\":\"c\",", "request", 2);
	fx_remove(root);
}

static const char *one_target(const char *ns, const char *extra)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":\"nqn.2024-04.com.example:t\","
		 "\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4430,"
		 "\"hosts\":[\"nqn.2014-08.org.example:h1\"],\"namespaces\":[%s]%s}]}", ns, extra);
	return buf;
}

static void test_agent_nvmet__size_mismatch_states_both_sizes(void **st)
{
	char *root = fx_build("node-target"), p[4096];
	struct ln_buf out = LN_BUF_INIT;

	(void)st;
	snprintf(p, sizeof(p), "%s/srv/foreign.img", root);
	assert_int_equal(run(root, "apply",
			     one_target("{\"nsid\":1,\"file\":\"/srv/foreign.img\",\"size\":1048576}", ""),
			     &out, NULL), 1);
	assert_non_null(strstr(out.buf, "is 16777216 bytes but the request says 1048576 bytes"));
	{
		struct stat s;

		assert_int_equal(stat(p, &s), 0);
		assert_int_equal(s.st_size, 16777216);	/* never truncated */
	}
	fx_remove(root);
	ln_buf_release(&out);
}

static void test_agent_nvmet__mounted_device_refused(void **st)
{
	char *root = fx_build("node-target");
	struct ln_buf out = LN_BUF_INIT;

	(void)st;
	assert_int_equal(run(root, "apply", one_target("{\"nsid\":1,\"device\":\"/dev/vdb\"}", ""),
			     &out, NULL), 1);
	assert_non_null(strstr(out.buf, "device '/dev/vdb' is mounted on this node"));
	fx_remove(root);
	ln_buf_release(&out);
}

#define K1 "DHHC-1:00:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUEebzGt:"
#define K2 "DHHC-1:00:QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkK9MX0g:"
#define K3 "DHHC-1:00:Q0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0Pc+0Zb:"
#define H1 "nqn.2014-08.org.example:h1"

/* One keyed target of cluster for host h1 (ctrl: its controller secret or NULL). */
static const char *dh_target(const char *cluster, const char *nqn, const char *key,
			     const char *ctrl)
{
	static char buf[2048];
	char c[160] = "";

	if (ctrl)
		snprintf(c, sizeof(c), ",\"ctrl_key\":\"%s\"", ctrl);
	snprintf(buf, sizeof(buf),
		 "{\"protocol\":1,\"cluster\":\"%s\",\"targets\":[{\"nqn\":\"%s\","
		 "\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4430,"
		 "\"hosts\":[\"" H1 "\"],\"namespaces\":[{\"nsid\":1,\"file\":\"/var/lib/nvmet/%s.img\","
		 "\"size\":4096}],\"dhchap\":{\"hash\":\"sha256\","
		 "\"dhgroup\":\"ffdhe2048\",\"keys\":[{\"host\":\"" H1 "\",\"key\":\"%s\"%s}]}}]}",
		 cluster, nqn, cluster, key, c);
	return buf;
}

/* The attribute of h1's host entry, as the fixture kernel holds it. */
static void host_attr(const char *root, const char *attr, struct ln_buf *v)
{
	struct ln_buf e = LN_BUF_INIT;
	char p[4096];

	ln_buf_reset(v);
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/hosts/" H1 "/%s", root, attr);
	assert_int_equal(ln_file_read(p, v, &e), 0);
	ln_buf_release(&e);
}

/* No secret anywhere the agent reports or records: answer, log, state. */
static void assert_no_secret(const char *root, const struct ln_buf *out, const struct ln_buf *err)
{
	static const char *const frags[] = { "QUFBQUFB", "QkJCQkJC", "Q0NDQ0ND", NULL };
	struct ln_buf state = LN_BUF_INIT, e = LN_BUF_INIT;
	const char *const *f;
	char p[4096];

	snprintf(p, sizeof(p), "%s/var/lib/llmnet/state.json", root);
	if (ln_file_read(p, &state, &e) < 0)
		ln_buf_reset(&state);
	for (f = frags; *f; f++) {
		assert_null(strstr(out->buf, *f));
		assert_null(err ? strstr(err->buf, *f) : NULL);
		assert_null(strstr(state.buf, *f));
	}
	ln_test_release(&state, &e);
}

static void test_agent_nvmet__dhchap_without_kernel_support_is_not_exported(void **st)
{
	char *root = fx_build("node-target"), p[4096];
	struct ln_buf out = LN_BUF_INIT, ports = LN_BUF_INIT;

	(void)st;
	assert_int_equal(run(root, "apply", dh_target("c", "nqn.2024-04.com.example:t", K1, NULL),
			     &out, NULL), 1);
	assert_non_null(strstr(out.buf, "NVME_TARGET_AUTH"));
	assert_non_null(strstr(out.buf, "not exported"));
	assert_no_secret(root, &out, NULL);
	/* nothing exported: no subsystem, and the only port is the foreign one */
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/nqn.2024-04.com.example:t",
		 root);
	assert_int_equal(access(p, F_OK), -1);
	fx_list_rec(root, "/sys/kernel/config/nvmet/ports", &ports, NULL);
	assert_null(strstr(ports.buf, "nqn.2024-04.com.example:t"));
	ln_test_release(&out, &ports);
	fx_remove(root);
}

/* args over req exits 0 with a change of nvmet_host_key in out, and no
 * secret in out, err or the node's logs and state. */
static void rekeyed(const char *root, const char *const *args, const char *req,
		    struct ln_buf *out, struct ln_buf *err)
{
	ln_buf_reset(out);
	assert_int_equal(fx_agent(root, args, req, out, err, NULL), 0);
	assert_true(fx_has_change(out, "change", "nvmet_host_key"));
	assert_no_secret(root, out, err);
}

/* Cluster c's node key store. */
#define KEYS_C "/etc/llmnet/keys/c/"

/* A kernel with auth: the host entry gets hash, group and secrets; the node
 * key store keeps them (0700/0600); a changed secret is a change of
 * nvmet_host_key in plan and apply; another cluster cannot re-key the
 * entry; teardown wipes the store; no secret in any answer, log or state. */
static void test_agent_nvmet__dhchap_keys_host_entry_and_store(void **st)
{
	char *root = fx_build("node-target"), p[4096];
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, v = LN_BUF_INIT, e = LN_BUF_INIT;
	const char *args_apply[] = { "apply", NULL }, *args_plan[] = { "plan", NULL };
	const char *nqn = "nqn.2024-04.com.example:t";
	struct stat sb;

	(void)st;
	snprintf(p, sizeof(p), "%s/etc/llmnet-fixture/nvmet-auth", root);
	assert_int_equal(ln_file_write_atomic(p, "", 0, 0644, &e), 0);
	assert_int_equal(fx_agent(root, args_apply, dh_target("c", nqn, K1, K3), &out, &err, NULL),
			 0);
	assert_true(fx_has_change(&out, "create", "nvmet_host_key"));
	assert_true(fx_has_change(&out, "create", "node_key"));
	assert_no_secret(root, &out, &err);
	host_attr(root, "dhchap_key", &v);
	assert_string_equal(v.buf, K1 "\n");
	host_attr(root, "dhchap_ctrl_key", &v);
	assert_string_equal(v.buf, K3 "\n");
	host_attr(root, "dhchap_hash", &v);
	assert_string_equal(v.buf, "hmac(sha256)\n");
	host_attr(root, "dhchap_dhgroup", &v);
	assert_string_equal(v.buf, "ffdhe2048\n");
	/* the node key store: this node's secrets only, private */
	snprintf(p, sizeof(p), "%s/etc/llmnet/keys/c", root);
	assert_int_equal(stat(p, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	snprintf(p, sizeof(p), "%s/etc/llmnet/keys/c/host-" H1 ".key", root);
	assert_int_equal(stat(p, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_string_equal(fx_read(root, KEYS_C "host-" H1 ".key", &v), K1 "\n");
	assert_string_equal(fx_read(root, KEYS_C "host-" H1 ".ctrl.key", &v), K3 "\n");
	/* converged: nothing to change */
	ln_buf_reset(&out);
	ln_buf_reset(&err);
	assert_int_equal(fx_agent(root, args_plan, dh_target("c", nqn, K1, K3), &out, &err, NULL),
			 0);
	assert_false(fx_has_change(&out, "change", "nvmet_host_key"));
	assert_false(fx_has_change(&out, "create", "node_key"));
	assert_false(fx_has_change(&out, "change", "node_key"));
	/* rotation: plan shows the change, apply makes it */
	rekeyed(root, args_plan, dh_target("c", nqn, K2, K3), &out, &err);
	host_attr(root, "dhchap_key", &v);
	assert_string_equal(v.buf, K1 "\n");	/* a plan changes nothing */
	rekeyed(root, args_apply, dh_target("c", nqn, K2, K3), &out, &err);
	host_attr(root, "dhchap_key", &v);
	assert_string_equal(v.buf, K2 "\n");
	assert_string_equal(fx_read(root, KEYS_C "host-" H1 ".key", &v), K2 "\n");
	/* another cluster may not key the shared host entry differently */
	ln_buf_reset(&out);
	assert_int_equal(fx_agent(root, args_apply,
				  dh_target("d", "nqn.2024-04.com.example:u", K1, K3), &out, &err,
				  NULL), 1);
	if (!strstr(out.buf, "keyed by cluster 'c'"))
		fprintf(stderr, "%s\n%s\n", out.buf, err.buf);
	assert_non_null(strstr(out.buf, "keyed by cluster 'c'"));
	assert_no_secret(root, &out, &err);
	host_attr(root, "dhchap_key", &v);
	assert_string_equal(v.buf, K2 "\n");
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/nqn.2024-04.com.example:u",
		 root);
	assert_int_equal(access(p, F_OK), -1);
	/* teardown wipes the store */
	{
		const char *args[] = { "teardown", "--cluster", "c", NULL };

		ln_buf_reset(&out);
		assert_int_equal(fx_agent(root, args, NULL, &out, &err, NULL), 0);
		assert_no_secret(root, &out, &err);
	}
	snprintf(p, sizeof(p), "%s/etc/llmnet/keys/c", root);
	assert_int_equal(access(p, F_OK), -1);
	ln_test_release(&out, &err, &v, &e);
	fx_remove(root);
}

/* nvmet cannot clear a secret: a host entry that stays allowed without
 * one is an error, said in plan and apply; when the entry goes, its key
 * goes with it. */
static void test_agent_nvmet__dhchap_unkeyed_host_entry(void **st)
{
	char *root = fx_build("node-target"), p[4096];
	struct ln_buf out = LN_BUF_INIT, e = LN_BUF_INIT, open_req = LN_BUF_INIT;
	const char *nqn = "nqn.2024-04.com.example:t", *req;

	(void)st;
	snprintf(p, sizeof(p), "%s/etc/llmnet-fixture/nvmet-auth", root);
	assert_int_equal(ln_file_write_atomic(p, "", 0, 0644, &e), 0);
	assert_int_equal(run(root, "apply", dh_target("c", nqn, K1, NULL), &out, NULL), 0);
	/* the same target without dhchap */
	req = dh_target("c", nqn, K1, NULL);
	ln_buf_add(&open_req, req, (size_t)(strstr(req, ",\"dhchap\"") - req));
	ln_buf_addstr(&open_req, "}]}");
	ln_buf_reset(&out);
	assert_int_equal(run(root, "plan", open_req.buf, &out, NULL), 1);
	assert_non_null(strstr(out.buf, "cannot clear a host entry's DH-HMAC-CHAP secret"));
	ln_buf_reset(&out);
	assert_int_equal(run(root, "apply", open_req.buf, &out, NULL), 1);
	assert_non_null(strstr(out.buf, "cannot clear a host entry's DH-HMAC-CHAP secret"));
	assert_no_secret(root, &out, NULL);
	/* nothing wanted: the entry goes, its key with it */
	ln_buf_reset(&out);
	assert_int_equal(run(root, "plan", "{\"protocol\":1,\"cluster\":\"c\"}", &out, NULL), 0);
	assert_true(fx_has_change(&out, "remove", "nvmet_host_key"));
	ln_buf_reset(&out);
	assert_int_equal(run(root, "apply", "{\"protocol\":1,\"cluster\":\"c\"}", &out, NULL), 0);
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/hosts/" H1, root);
	assert_int_equal(access(p, F_OK), -1);
	snprintf(p, sizeof(p), "%s/etc/llmnet/keys/c/host-" H1 ".key", root);
	assert_int_equal(access(p, F_OK), -1);
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/state.json", root);
	ln_buf_reset(&out);
	assert_int_equal(ln_file_read(p, &out, &e), 0);
	assert_null(strstr(out.buf, "nvmet_host_key"));
	ln_test_release(&out, &e, &open_req);
	fx_remove(root);
}

/* The key store is reached as every agent file: a link on the way is refused. */
static void test_agent_nvmet__dhchap_store_refuses_a_link(void **st)
{
	char *root = fx_build("node-target"), p[4096], q[4096];
	struct ln_buf out = LN_BUF_INIT, e = LN_BUF_INIT;

	(void)st;
	snprintf(p, sizeof(p), "%s/etc/llmnet-fixture/nvmet-auth", root);
	assert_int_equal(ln_file_write_atomic(p, "", 0, 0644, &e), 0);
	snprintf(p, sizeof(p), "%s/etc/llmnet", root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(q, sizeof(q), "%s/tmp", root);
	mkdir(q, 0755);
	snprintf(p, sizeof(p), "%s/etc/llmnet/keys", root);
	assert_int_equal(symlink(q, p), 0);
	assert_int_equal(run(root, "apply", dh_target("c", "nqn.2024-04.com.example:t", K1, NULL),
			     &out, NULL), 1);
	assert_non_null(strstr(out.buf, "symbolic link"));
	assert_no_secret(root, &out, NULL);
	snprintf(q, sizeof(q), "%s/tmp/c", root);
	assert_int_equal(access(q, F_OK), -1);
	ln_test_release(&out, &e);
	fx_remove(root);
}

static void test_agent_nvmet__bare_node_loads_then_unloads(void **st)
{
	char *root = fx_build("node-initiator");
	struct ln_buf out = LN_BUF_INIT, before = LN_BUF_INIT, after = LN_BUF_INIT;
	const char *req = one_target("{\"nsid\":1,\"file\":\"/var/lib/nvmet/t.img\",\"size\":4096}", "");

	(void)st;
	fx_list(root, &before, skip_owned_leftovers);
	assert_int_equal(run(root, "apply", req, &out, NULL), 0);
	assert_non_null(strstr(out.buf, "\"configfs_mount\""));
	assert_non_null(strstr(out.buf, "\"id\": \"nvmet_tcp\""));
	assert_int_equal(run(root, "teardown", NULL, &out, NULL), 0);
	assert_non_null(strstr(out.buf, "\"id\": \"nvmet_tcp\""));
	fx_list(root, &after, skip_owned_leftovers);
	assert_string_equal(before.buf, after.buf);
	ln_test_release(&out, &before, &after);
	fx_remove(root);
}

static void write_file(const char *root, const char *rel, const char *val)
{
	assert_int_equal(fx_put(root, rel, val), 0);
}

static void test_agent_nvmet__changes_follow_the_kernel_order(void **st)
{
	char *root = fx_build("node-target");
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT, e = LN_BUF_INIT;
	char p[4096];
	const char *port = "/sys/kernel/config/nvmet/ports/1";

	(void)st;
	assert_int_equal(run(root, "apply",
			     one_target("{\"nsid\":1,\"file\":\"/var/lib/nvmet/a.img\",\"size\":4096}", ""),
			     &out, NULL), 0);
	/* a new backing file: the enabled namespace is disabled, repointed,
	 * enabled (the fixture refuses device_path while enabled) */
	assert_int_equal(run(root, "apply",
			     one_target("{\"nsid\":1,\"file\":\"/var/lib/nvmet/b.img\",\"size\":4096}", ""),
			     &out, NULL), 0);
	assert_non_null(strstr(out.buf, "device_path '/var/lib/nvmet/a.img' -> '/var/lib/nvmet/b.img'"));
	/* the port drifted behind our back: its subsystem is unlinked, the
	 * address set back, the link restored (addr_* is refused while linked) */
	write_file(root, "/sys/kernel/config/nvmet/ports/1/addr_trsvcid", "4999\n");
	assert_int_equal(run(root, "apply",
			     one_target("{\"nsid\":1,\"file\":\"/var/lib/nvmet/b.img\",\"size\":4096}", ""),
			     &out, NULL), 0);
	assert_non_null(strstr(out.buf, "addr_trsvcid -> 4430"));
	snprintf(p, sizeof(p), "%s%s/addr_trsvcid", root, port);
	assert_int_equal(ln_file_read(p, &v, &e), 0);
	assert_string_equal(v.buf, "4430\n");
	snprintf(p, sizeof(p), "%s%s/subsystems/nqn.2024-04.com.example:t", root, port);
	{
		struct stat s;

		assert_int_equal(lstat(p, &s), 0);
		assert_true(S_ISLNK(s.st_mode));
	}
	/* a namespace dropped from the request is removed, the rest stays */
	assert_int_equal(run(root, "apply", one_target("", ""), &out, NULL), 0);
	assert_non_null(strstr(out.buf, "\"action\": \"remove\""));
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/nqn.2024-04.com.example:t/"
		 "namespaces/1", root);
	assert_int_equal(access(p, F_OK), -1);
	ln_test_release(&out, &v, &e);
	fx_remove(root);
}

static void assert_attr(const char *root, const char *rel, const char *want)
{
	struct ln_buf v = LN_BUF_INIT, e = LN_BUF_INIT;
	char p[4096];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	assert_int_equal(ln_file_read(p, &v, &e), 0);
	assert_string_equal(v.buf, want);
	ln_test_release(&v, &e);
}

#define SUB "/sys/kernel/config/nvmet/subsystems/nqn.2024-04.com.example:t"
#define UUID1 "5d2eb3e6-70a2-8a05-bd50-acf5a20db507"
#define NGUID1 "5ebc4145-9fc2-fe91-6f81-692ccdc71166"

/* Stable identity: serial, uuid and nguid written before the namespace is
 * enabled and the subsystem linked, recorded, drift set back where nvmet
 * allows it, and a serial it keeps (linked) reported with what to do. */
static void test_agent_nvmet__stable_identity(void **st)
{
	char *root = fx_build("node-target"), req[2048], p[4096];
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT, e = LN_BUF_INIT;
	struct json_object *o;

	(void)st;
	snprintf(req, sizeof(req), "%s",
		 one_target("{\"nsid\":1,\"file\":\"/var/lib/nvmet/a.img\",\"size\":4096,"
			    "\"uuid\":\"" UUID1 "\",\"nguid\":\"" NGUID1 "\"}",
			    ",\"serial\":\"4ab77e6f2e6e0c3c\""));
	assert_int_equal(run(root, "apply", req, &out, NULL), 0);
	/* nvmet pads the serial with spaces to 20 bytes */
	assert_attr(root, SUB "/attr_serial", "4ab77e6f2e6e0c3c    \n");
	assert_attr(root, SUB "/namespaces/1/device_uuid", UUID1 "\n");
	assert_attr(root, SUB "/namespaces/1/device_nguid", NGUID1 "\n");
	assert_attr(root, SUB "/namespaces/1/enable", "1\n");
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/state.json", root);
	assert_int_equal(ln_file_read(p, &v, &e), 0);
	assert_non_null(strstr(v.buf, "\"serial\": \"4ab77e6f2e6e0c3c\""));
	assert_non_null(strstr(v.buf, "\"uuid\": \"" UUID1 "\""));
	assert_non_null(strstr(v.buf, "\"nguid\": \"" NGUID1 "\""));
	/* converged: a second apply changes nothing */
	assert_int_equal(run(root, "apply", req, &out, NULL), 0);
	o = parse(&out);
	assert_int_equal(summary(o, "create") + summary(o, "change") + summary(o, "remove"), 0);
	json_object_put(o);
	/* a request without identity (an older controller) leaves it alone */
	assert_int_equal(run(root, "apply",
			     one_target("{\"nsid\":1,\"file\":\"/var/lib/nvmet/a.img\",\"size\":4096}", ""),
			     &out, NULL), 0);
	o = parse(&out);
	assert_int_equal(summary(o, "change"), 0);
	json_object_put(o);
	/* uuid drift (set by hand): plan shows it, apply disables, sets, enables */
	write_file(root, SUB "/namespaces/1/device_uuid", "11111111-2222-4333-8444-555555555555\n");
	assert_int_equal(run(root, "plan", req, &out, NULL), 0);
	assert_non_null(strstr(out.buf, "device_uuid '11111111-2222-4333-8444-555555555555' -> '"
				UUID1 "'"));
	assert_int_equal(run(root, "apply", req, &out, NULL), 0);
	assert_attr(root, SUB "/namespaces/1/device_uuid", UUID1 "\n");
	assert_attr(root, SUB "/namespaces/1/enable", "1\n");
	/* serial drift while linked to a port: nvmet keeps it; said, with the way out */
	write_file(root, SUB "/attr_serial", "0123456789abcdef    \n");
	assert_int_equal(run(root, "apply", req, &out, NULL), 1);
	assert_non_null(strstr(out.buf, "attr_serial '0123456789abcdef' -> '4ab77e6f2e6e0c3c'"));
	assert_non_null(strstr(out.buf, "nvmet keeps a subsystem's serial once a host has "
				"connected to it: tear the target down on this node and apply again"));
	assert_attr(root, SUB "/attr_serial", "0123456789abcdef    \n");
	/* not linked (no host can have seen it): set back, then linked again */
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/ports/1/subsystems/"
		 "nqn.2024-04.com.example:t", root);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(run(root, "apply", req, &out, NULL), 0);
	assert_attr(root, SUB "/attr_serial", "4ab77e6f2e6e0c3c    \n");
	assert_non_null(strstr(out.buf, "\"kind\": \"nvmet_port_subsystem\""));
	ln_test_release(&out, &v, &e);
	fx_remove(root);
}

/* A target made by an agent from before stable identities (nothing of it
 * recorded) keeps the kernel's serial, uuid and nguid: changing them would
 * take the namespace from hosts that have it mounted. Said, not changed. */
static void test_agent_nvmet__identity_kept_on_upgrade(void **st)
{
	char *root = fx_build("node-target"), req[2048];
	struct ln_buf out = LN_BUF_INIT;
	struct json_object *o;

	(void)st;
	assert_int_equal(run(root, "apply",
			     one_target("{\"nsid\":1,\"file\":\"/var/lib/nvmet/a.img\",\"size\":4096}", ""),
			     &out, NULL), 0);
	write_file(root, SUB "/attr_serial", "0123456789abcdef    \n");
	write_file(root, SUB "/namespaces/1/device_uuid", "11111111-2222-4333-8444-555555555555\n");
	snprintf(req, sizeof(req), "%s",
		 one_target("{\"nsid\":1,\"file\":\"/var/lib/nvmet/a.img\",\"size\":4096,"
			    "\"uuid\":\"" UUID1 "\",\"nguid\":\"" NGUID1 "\"}",
			    ",\"serial\":\"4ab77e6f2e6e0c3c\""));
	assert_int_equal(run(root, "plan", req, &out, NULL), 0);
	o = parse(&out);
	assert_int_equal(summary(o, "create") + summary(o, "change") + summary(o, "remove"), 0);
	json_object_put(o);
	assert_int_equal(run(root, "apply", req, &out, NULL), 0);
	o = parse(&out);
	assert_int_equal(summary(o, "create") + summary(o, "change") + summary(o, "remove"), 0);
	json_object_put(o);
	assert_non_null(strstr(out.buf, "subsystem 'nqn.2024-04.com.example:t' keeps the serial "
				"it was made with"));
	assert_non_null(strstr(out.buf, "namespace 'nqn.2024-04.com.example:t/1' keeps the uuid"));
	assert_non_null(strstr(out.buf, "teardown and apply give it the stable one"));
	assert_attr(root, SUB "/attr_serial", "0123456789abcdef    \n");
	assert_attr(root, SUB "/namespaces/1/device_uuid",
		    "11111111-2222-4333-8444-555555555555\n");
	assert_attr(root, SUB "/namespaces/1/enable", "1\n");
	/* not in use (disabled, as after a stopped create): nothing to take
	 * from a host, so the stable identity is set */
	write_file(root, SUB "/namespaces/1/enable", "0\n");
	assert_int_equal(run(root, "apply", req, &out, NULL), 0);
	assert_attr(root, SUB "/namespaces/1/device_uuid", UUID1 "\n");
	assert_attr(root, SUB "/namespaces/1/device_nguid", NGUID1 "\n");
	assert_attr(root, SUB "/namespaces/1/enable", "1\n");
	assert_null(strstr(out.buf, "namespace 'nqn.2024-04.com.example:t/1' keeps"));
	ln_buf_release(&out);
	fx_remove(root);
}

static void test_agent_nvmet__foreign_subsystem_and_free_space(void **st)
{
	char *root = fx_build("node-target");
	struct ln_buf out = LN_BUF_INIT;
	char req[2048];

	(void)st;
	/* a wanted NQN that exists and is not ours: a conflict, untouched */
	snprintf(req, sizeof(req),
		 "{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":"
		 "\"nqn.2014-08.org.example:foreign.target\",\"transport\":\"tcp\","
		 "\"address\":\"10.77.0.11\",\"service\":4421,\"hosts\":\"any\"}]}");
	assert_int_equal(run(root, "apply", req, &out, NULL), 1);
	assert_non_null(strstr(out.buf, "exists and was not created by llmnet"));
	/* declared sizes beyond the free space: a warning, files still sparse */
	assert_int_equal(run(root, "plan",
			     one_target("{\"nsid\":1,\"file\":\"/var/lib/nvmet/huge.img\","
					"\"size\":8796093022208}", ""),
			     &out, NULL), 0);
	assert_non_null(strstr(out.buf, "declared backing files need 8796093022208 bytes"));
	ln_buf_release(&out);
	fx_remove(root);
}

static void copy_tree(const char *from, const char *to)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s'", to, from, to);
	assert_int_equal(system(cmd), 0);
}

/* Stop before change n of apply (phase 0) or teardown (phase 1), re-run,
 * and check the node converges and teardown restores the listing. Returns
 * 0 when n was past the last change. */
static int failpoint_round(const char *pristine, const char *work, const char *req, int phase,
			   int n, const char *before)
{
	struct ln_buf out = LN_BUF_INIT, after = LN_BUF_INIT;
	char env[64];
	int rc;

	copy_tree(pristine, work);
	snprintf(env, sizeof(env), "LLMNET_FAILPOINT=%d", n);
	if (phase == 0) {
		rc = run(work, "apply", req, &out, env);
	} else {
		assert_int_equal(run(work, "apply", req, &out, NULL), 0);
		rc = run(work, "teardown", NULL, &out, env);
	}
	if (rc != 99) {
		assert_int_equal(rc, 0);
		ln_buf_release(&out);
		return 0;
	}
	if (phase == 0) {
		/* the re-run converges, and a third run has nothing to do */
		assert_int_equal(run(work, "apply", req, &out, NULL), 0);
		assert_int_equal(run(work, "apply", req, &out, NULL), 0);
		{
			struct json_object *o = parse(&out);

			assert_int_equal(summary(o, "create") + summary(o, "change") +
						 summary(o, "remove") + summary(o, "error"), 0);
			json_object_put(o);
		}
	}
	assert_int_equal(run(work, "teardown", NULL, &out, NULL), 0);
	fx_list(work, &after, skip_owned_leftovers);
	if (strcmp(before, after.buf))
		fprintf(stderr, "phase %d failpoint %d left:\n%s\n", phase, n, after.buf);
	assert_string_equal(before, after.buf);
	ln_test_release(&out, &after);
	return 1;
}

static void test_agent_nvmet__failpoint_every_change(void **st)
{
	char *pristine = fx_build("node-target"), *req = slurp(REQ), work[4200];
	struct ln_buf before = LN_BUF_INIT;
	int phase, n, counted[2] = { 0, 0 };

	(void)st;
	snprintf(work, sizeof(work), "%s.work", pristine);
	fx_list(pristine, &before, skip_owned_leftovers);
	for (phase = 0; phase < 2; phase++) {
		for (n = 1; n < 1000; n++) {
			if (!failpoint_round(pristine, work, req, phase, n, before.buf))
				break;
			counted[phase]++;
		}
	}
	fprintf(stderr, "failpoint loop: %d apply changes, %d teardown changes\n", counted[0],
		counted[1]);
	assert_true(counted[0] > 40);
	assert_true(counted[1] > 15);
	{
		char cmd[4300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
		assert_int_equal(system(cmd), 0);
	}
	free(req);
	ln_buf_release(&before);
	fx_remove(pristine);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_nvmet__golden_then_converged_then_teardown),
	cmocka_unit_test(test_agent_nvmet__destroy_plan_keeps_a_shared_port),
	cmocka_unit_test(test_agent_nvmet__golden_on_the_6_12_tree),
	cmocka_unit_test(test_agent_nvmet__stable_identity),
	cmocka_unit_test(test_agent_nvmet__identity_kept_on_upgrade),
	cmocka_unit_test(test_agent_nvmet__bad_requests_change_nothing),
	cmocka_unit_test(test_agent_nvmet__size_mismatch_states_both_sizes),
	cmocka_unit_test(test_agent_nvmet__mounted_device_refused),
	cmocka_unit_test(test_agent_nvmet__dhchap_without_kernel_support_is_not_exported),
	cmocka_unit_test(test_agent_nvmet__dhchap_keys_host_entry_and_store),
	cmocka_unit_test(test_agent_nvmet__dhchap_store_refuses_a_link),
	cmocka_unit_test(test_agent_nvmet__dhchap_unkeyed_host_entry),
	cmocka_unit_test(test_agent_nvmet__bare_node_loads_then_unloads),
	cmocka_unit_test(test_agent_nvmet__changes_follow_the_kernel_order),
	cmocka_unit_test(test_agent_nvmet__foreign_subsystem_and_free_space),
	cmocka_unit_test(test_agent_nvmet__failpoint_every_change),
)
