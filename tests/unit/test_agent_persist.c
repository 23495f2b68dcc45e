// SPDX-License-Identifier: MIT
/*
 * Boot-time restore (request `persist`, agents/agent/persist.c) on fixture
 * trees: the stored request (0600, no secret), the cluster's unit and its
 * enablement, owned and recorded; a converged apply that changes nothing;
 * plan's drift for a disabled, changed or missing unit; `restore` on a
 * "rebooted" tree (fresh configfs, the disk kept) bringing the target back
 * with the secrets from the key store; a node without systemd (a warning,
 * nothing written, facts "unsupported"); a unit llmnet did not write,
 * refused; persist false and teardown removing all of it.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include "common/proto.h"

#define K1 "DHHC-1:00:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUEebzGt:"
#define K2 "DHHC-1:00:QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkK9MX0g:"
#define H1 "nqn.2014-08.org.example:h1"
#define NQN "nqn.2024-04.com.example:t"
#define UNIT "/etc/systemd/system/llmnet-restore-c.service"
#define LINK "/etc/systemd/system/multi-user.target.wants/llmnet-restore-c.service"
#define STORED "/var/lib/llmnet/restore/c.json"

/* A keyed target of cluster c for host h1; persist "true", "false" or NULL. */
static const char *request(const char *persist)
{
	static char buf[2048];
	char p[64] = "";

	if (persist)
		snprintf(p, sizeof(p), ",\"persist\":%s", persist);
	snprintf(buf, sizeof(buf),
		 "{\"protocol\":2,\"cluster\":\"c\"%s,\"targets\":[{\"nqn\":\"" NQN "\","
		 "\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4430,"
		 "\"hosts\":[\"" H1 "\"],\"namespaces\":[{\"nsid\":1,\"file\":\"/var/lib/nvmet/c.img\","
		 "\"size\":4096}],\"dhchap\":{\"hash\":\"sha256\","
		 "\"dhgroup\":\"ffdhe2048\",\"keys\":[{\"host\":\"" H1 "\",\"key\":\"" K1 "\"}]}}]}",
		 p);
	return buf;
}

static int agent(const char *root, const char *const *args, const char *in, struct ln_buf *out)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc = fx_agent(root, args, in, out, &err, NULL);

	/* no secret on any channel */
	assert_null(strstr(out->buf, "QUFBQUFB"));
	assert_null(strstr(err.buf, "QUFBQUFB"));
	if (rc != 0)
		fprintf(stderr, "%s rc %d: %s\n%s\n", args[0], rc, err.buf, out->buf);
	ln_buf_release(&err);
	return rc;
}

static int apply(const char *root, const char *in, struct ln_buf *out)
{
	const char *args[] = { "apply", NULL };

	return agent(root, args, in, out);
}

static int plan(const char *root, const char *in, struct ln_buf *out)
{
	const char *args[] = { "plan", NULL };

	return agent(root, args, in, out);
}

static int exists(const char *root, const char *path, mode_t *mode)
{
	char p[4096];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", root, path);
	if (lstat(p, &st) < 0)
		return 0;
	if (mode)
		*mode = st.st_mode;
	return 1;
}

static void write_node(const char *root, const char *path, const char *text)
{
	struct ln_buf e = LN_BUF_INIT;
	char p[4096];

	snprintf(p, sizeof(p), "%s%s", root, path);
	assert_int_equal(ln_file_write_atomic(p, text, strlen(text), 0644, &e), 0);
	ln_buf_release(&e);
}

/* A target tree; with systemd: /run/systemd/system and /etc/systemd/system. */
static char *tree(int systemd)
{
	char *root = fx_build("node-target"), cmd[1024];

	assert_non_null(root);
	/* the fixture's kernel with DH-HMAC-CHAP */
	write_node(root, "/etc/llmnet-fixture/nvmet-auth", "");
	if (systemd) {
		snprintf(cmd, sizeof(cmd), "mkdir -p %s/run/systemd/system %s/etc/systemd/system",
			 root, root);
		assert_int_equal(system(cmd), 0);
	}
	return root;
}

static void test_agent_persist__apply_keeps_request_and_unit(void **st)
{
	char *root = tree(1), p[4096], lnk[4096];
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;
	mode_t m = 0;
	ssize_t n;

	(void)st;
	assert_int_equal(apply(root, request("true"), &out), 0);
	assert_true(fx_has_change(&out, "create", "restore_request"));
	assert_true(fx_has_change(&out, "create", "systemd_unit"));
	assert_true(fx_has_change(&out, "create", "systemd_enable"));
	/* the request, private and without its secret */
	assert_true(exists(root, STORED, &m));
	assert_int_equal(m & 07777, 0600);
	fx_read(root, STORED, &v);
	assert_non_null(strstr(v.buf, "\"cluster\": \"c\""));
	assert_non_null(strstr(v.buf, H1));
	assert_null(strstr(v.buf, "QUFBQUFB"));
	assert_null(strstr(v.buf, "DHHC-1"));
	/* the unit runs the pushed agent's restore, after the network */
	assert_true(exists(root, UNIT, &m));
	assert_int_equal(m & 07777, 0644);
	fx_read(root, UNIT, &v);
	assert_non_null(strstr(v.buf, "ExecStart=/var/lib/llmnet/bin/llmnet-agent --budget-ms 30000 "
				      "restore --cluster c\n"));
	assert_non_null(strstr(v.buf, "After=network-online.target\n"));
	assert_non_null(strstr(v.buf, "Restart=on-failure\n"));
	assert_non_null(strstr(v.buf, "WantedBy=multi-user.target\n"));
	/* enabled as systemctl enable does it */
	snprintf(p, sizeof(p), "%s" LINK, root);
	n = readlink(p, lnk, sizeof(lnk) - 1);
	assert_true(n > 0);
	lnk[n] = '\0';
	assert_string_equal(lnk, UNIT);
	/* recorded as this cluster's */
	fx_read(root, "/var/lib/llmnet/state.json", &v);
	assert_non_null(strstr(v.buf, STORED));
	assert_non_null(strstr(v.buf, UNIT));
	assert_non_null(strstr(v.buf, LINK));
	assert_null(strstr(v.buf, "QUFBQUFB"));
	/* converged: nothing to do */
	assert_int_equal(apply(root, request("true"), &out), 0);
	assert_false(fx_has_change(&out, "create", "systemd_unit"));
	assert_false(fx_has_change(&out, "change", "systemd_unit"));
	assert_false(fx_has_change(&out, "change", "restore_request"));
	assert_false(fx_has_change(&out, "create", "systemd_enable"));
	assert_true(fx_has_change(&out, "ok", "systemd_enable"));
	ln_test_release(&out, &v);
	fx_remove(root);
}

/* plan: a disabled, edited or removed unit is drift; apply repairs it. */
static void test_agent_persist__plan_reports_unit_drift(void **st)
{
	char *root = tree(1), p[4096];
	struct ln_buf out = LN_BUF_INIT;

	(void)st;
	assert_int_equal(apply(root, request("true"), &out), 0);
	snprintf(p, sizeof(p), "%s" LINK, root);
	assert_int_equal(unlink(p), 0);		/* systemctl disable */
	assert_int_equal(plan(root, request("true"), &out), 0);
	assert_true(fx_has_change(&out, "create", "systemd_enable"));
	assert_false(exists(root, LINK, NULL));	/* a plan changes nothing */
	write_node(root, UNIT, "[Service]\nExecStart=/bin/true\n");
	assert_int_equal(plan(root, request("true"), &out), 0);
	assert_true(fx_has_change(&out, "change", "systemd_unit"));
	assert_int_equal(apply(root, request("true"), &out), 0);
	assert_true(fx_has_change(&out, "change", "systemd_unit"));
	assert_true(fx_has_change(&out, "create", "systemd_enable"));
	assert_true(exists(root, LINK, NULL));
	snprintf(p, sizeof(p), "%s" UNIT, root);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(plan(root, request("true"), &out), 0);
	assert_true(fx_has_change(&out, "create", "systemd_unit"));
	ln_buf_release(&out);
	fx_remove(root);
}

/* A reboot on the fixture: a fresh tree (empty configfs) with the disk's
 * llmnet files copied over; restore brings the target back, its host key
 * from the key store (the stored request has none). */
static void test_agent_persist__restore_after_reboot(void **st)
{
	char *root = tree(1), *boot = tree(1), cmd[4096];
	const char *restore[] = { "restore", "--cluster", "c", NULL };
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;
	struct stat sb;
	char p[4096];

	(void)st;
	assert_int_equal(apply(root, request("true"), &out), 0);
	snprintf(cmd, sizeof(cmd),
		 "cp -a %s/var/lib/llmnet %s/var/lib/nvmet %s/var/lib/ && "
		 "mkdir -p %s/etc/llmnet && cp -a %s/etc/llmnet/keys %s/etc/llmnet/ && "
		 "cp -a %s/etc/systemd/system/. %s/etc/systemd/system/",
		 root, root, boot, boot, root, boot, root, boot);
	assert_int_equal(system(cmd), 0);
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/" NQN, boot);
	assert_int_equal(stat(p, &sb), -1);
	assert_int_equal(agent(boot, restore, NULL, &out), 0);
	assert_true(fx_has_change(&out, "create", "nvmet_subsystem"));
	assert_int_equal(stat(p, &sb), 0);
	fx_read(boot, "/sys/kernel/config/nvmet/hosts/" H1 "/dhchap_key", &v);
	assert_string_equal(v.buf, K1 "\n");
	/* restored: a second restore changes nothing */
	assert_int_equal(agent(boot, restore, NULL, &out), 0);
	assert_false(fx_has_change(&out, "create", "nvmet_subsystem"));
	/* the stored request is still without its secret */
	fx_read(boot, STORED, &v);
	assert_null(strstr(v.buf, "DHHC-1"));
	ln_test_release(&out, &v);
	fx_remove(root);
	fx_remove(boot);
}

/* restore with nothing stored succeeds and does nothing; with the key
 * store's secret gone it fails by name and changes nothing. */
/* The lock file a mutating verb leaves, and its directory. */
static int skip_lock(const char *rel)
{
	return !strcmp(rel, "/run/llmnet.lock") || !strcmp(rel, "/var/lib/llmnet");
}

static void test_agent_persist__restore_nothing_or_missing_secret(void **st)
{
	char *root = tree(1), p[4096];
	const char *restore[] = { "restore", "--cluster", "c", NULL };
	const char *bad[] = { "restore", NULL };
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, before = LN_BUF_INIT,
		      after = LN_BUF_INIT;

	(void)st;
	fx_list(root, &before, skip_lock);
	assert_int_equal(fx_agent(root, restore, NULL, &out, &err, NULL), 0);
	assert_non_null(strstr(err.buf, "nothing to restore"));
	fx_list(root, &after, skip_lock);
	assert_string_equal(before.buf, after.buf);
	assert_int_equal(fx_agent(root, bad, NULL, &out, &err, NULL), LN_AGENT_EXIT_USAGE);
	assert_int_equal(apply(root, request("true"), &out), 0);
	snprintf(p, sizeof(p), "%s/etc/llmnet/keys/c/host-" H1 ".key", root);
	assert_int_equal(unlink(p), 0);
	fx_list(root, &before, skip_lock);
	assert_int_equal(fx_agent(root, restore, NULL, &out, &err, NULL), LN_AGENT_EXIT_REQUEST);
	assert_non_null(strstr(out.buf, "the node key store has no"));
	fx_list(root, &after, skip_lock);
	assert_string_equal(before.buf, after.buf);
	ln_test_release(&out, &err, &before, &after);
	fx_remove(root);
}

/* No systemd: a warning, no unit, no stored request; facts "unsupported". */
static void test_agent_persist__no_systemd_is_unsupported(void **st)
{
	char *root = tree(0);
	const char *facts[] = { "facts", NULL };
	struct ln_buf out = LN_BUF_INIT;

	(void)st;
	assert_int_equal(apply(root, request("true"), &out), 0);
	assert_non_null(strstr(out.buf, "persistent: unsupported"));
	assert_false(fx_has_change(&out, "create", "systemd_unit"));
	assert_false(exists(root, STORED, NULL));
	assert_false(exists(root, UNIT, NULL));
	assert_int_equal(agent(root, facts, NULL, &out), 0);
	assert_non_null(strstr(out.buf, "\"persistent\": \"unsupported\""));
	assert_non_null(strstr(out.buf, "\"systemd\": false"));
	ln_buf_release(&out);
	fx_remove(root);
}

/* A unit file llmnet did not write is refused by path, and kept. */
static void test_agent_persist__foreign_unit_refused(void **st)
{
	char *root = tree(1);
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;
	const char *mine = "[Service]\nExecStart=/usr/local/bin/mine\n";

	(void)st;
	write_node(root, UNIT, mine);
	assert_int_equal(apply(root, request("true"), &out), 1);
	assert_non_null(strstr(out.buf, "'" UNIT "' exists and is not llmnet's"));
	fx_read(root, UNIT, &v);
	assert_string_equal(v.buf, mine);
	assert_false(exists(root, LINK, NULL));
	fx_read(root, "/var/lib/llmnet/state.json", &v);
	assert_null(strstr(v.buf, UNIT));
	ln_test_release(&out, &v);
	fx_remove(root);
}

/* persist false removes what persist true made; teardown removes it with
 * the key store; facts follow. */
static void test_agent_persist__off_and_teardown_remove_all(void **st)
{
	char *root = tree(1);
	const char *facts[] = { "facts", NULL }, *down[] = { "teardown", NULL };
	struct ln_buf out = LN_BUF_INIT;

	(void)st;
	assert_int_equal(apply(root, request("true"), &out), 0);
	assert_int_equal(agent(root, facts, NULL, &out), 0);
	assert_non_null(strstr(out.buf, "\"persistent\": \"yes\""));
	assert_int_equal(apply(root, request("false"), &out), 0);
	assert_true(fx_has_change(&out, "remove", "systemd_unit"));
	assert_true(fx_has_change(&out, "remove", "systemd_enable"));
	assert_true(fx_has_change(&out, "remove", "restore_request"));
	assert_false(exists(root, UNIT, NULL) || exists(root, LINK, NULL) ||
		     exists(root, STORED, NULL));
	assert_int_equal(agent(root, facts, NULL, &out), 0);
	assert_non_null(strstr(out.buf, "\"persistent\": \"no\""));
	/* absent is off too (a controller that does not send it) */
	assert_int_equal(apply(root, request("true"), &out), 0);
	assert_int_equal(apply(root, request(NULL), &out), 0);
	assert_true(fx_has_change(&out, "remove", "systemd_unit"));
	assert_int_equal(apply(root, request("true"), &out), 0);
	assert_true(exists(root, UNIT, NULL));
	assert_int_equal(agent(root, down, NULL, &out), 0);
	assert_true(fx_has_change(&out, "remove", "systemd_unit"));
	assert_true(fx_has_change(&out, "remove", "node_key_store"));
	assert_false(exists(root, UNIT, NULL) || exists(root, LINK, NULL) ||
		     exists(root, STORED, NULL) || exists(root, "/etc/llmnet/keys/c", NULL));
	ln_buf_release(&out);
	fx_remove(root);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_persist__apply_keeps_request_and_unit),
	cmocka_unit_test(test_agent_persist__plan_reports_unit_drift),
	cmocka_unit_test(test_agent_persist__restore_after_reboot),
	cmocka_unit_test(test_agent_persist__restore_nothing_or_missing_secret),
	cmocka_unit_test(test_agent_persist__no_systemd_is_unsupported),
	cmocka_unit_test(test_agent_persist__foreign_unit_refused),
	cmocka_unit_test(test_agent_persist__off_and_teardown_remove_all),
)
