// SPDX-License-Identifier: MIT
/*
 * Boot-time restore (request `persist`, agents/agent/converge/persist.c) on fixture
 * trees: the stored request (0600, no secret), the cluster's unit and its
 * enablement, owned and recorded; a converged apply that changes nothing;
 * plan's drift for a disabled, changed or missing unit; `restore` on a
 * "rebooted" tree (fresh configfs, the disk kept) bringing the target back
 * with the secrets from the key store; a node without systemd (a warning,
 * nothing written, facts "unsupported"); a unit llmnet did not write,
 * refused; persist false and teardown removing all of it. The unit runs
 * the cluster's own copy of the pushed agent (another cluster's purge does
 * not take it away); a teardown that cannot remove the boot unit stops
 * before anything else; `restore` with its target down tells systemd READY
 * within its bound and goes on retrying in the background until the target
 * answers, or until a teardown took its stored request.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "common/proto.h"

#define K1 "DHHC-1:00:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUEebzGt:"
#define K2 "DHHC-1:00:QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkK9MX0g:"
#define H1 "nqn.2014-08.org.example:h1"
#define NQN "nqn.2024-04.com.example:t"
#define UNIT "/etc/systemd/system/llmnet-restore-c.service"
#define LINK "/etc/systemd/system/multi-user.target.wants/llmnet-restore-c.service"
#define STORED "/var/lib/llmnet/restore/c.json"
#define COPY "/var/lib/llmnet/restore/c.agent"
#define PUSHED "/var/lib/llmnet/bin/llmnet-agent"

/* A keyed target of cluster c for host h1; persist "true", "false" or NULL. */
static const char *request(const char *persist)
{
	static char buf[2048];
	char p[64] = "";

	if (persist)
		snprintf(p, sizeof(p), ",\"persist\":%s", persist);
	snprintf(buf, sizeof(buf),
		 "{\"protocol\":3,\"cluster\":\"c\"%s,\"targets\":[{\"nqn\":\"" NQN "\","
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

/* A target tree (or initiator: node-initiator) with a pushed agent; with
 * systemd: /run/systemd/system and /etc/systemd/system. */
static char *tree_of(const char *fixture, int systemd)
{
	char *root = fx_build(fixture), cmd[1024];

	assert_non_null(root);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/var/lib/llmnet/bin", root);
	assert_int_equal(system(cmd), 0);
	write_node(root, PUSHED, "#!pushed agent, version 1\n");
	/* the fixture's kernel with DH-HMAC-CHAP */
	write_node(root, "/etc/llmnet-fixture/nvmet-auth", "");
	if (systemd) {
		snprintf(cmd, sizeof(cmd), "mkdir -p %s/run/systemd/system %s/etc/systemd/system",
			 root, root);
		assert_int_equal(system(cmd), 0);
	}
	return root;
}

static char *tree(int systemd)
{
	return tree_of("node-target", systemd);
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
	/* the unit runs the cluster's copy of the pushed agent, after the
	 * network; READY (Type=notify) within 30 s, no Restart= holding boot */
	assert_true(fx_has_change(&out, "create", "restore_agent"));
	assert_true(exists(root, COPY, &m));
	assert_int_equal(m & 07777, 0700);
	fx_read(root, COPY, &v);
	assert_string_equal(v.buf, "#!pushed agent, version 1\n");
	assert_true(exists(root, UNIT, &m));
	assert_int_equal(m & 07777, 0644);
	fx_read(root, UNIT, &v);
	assert_non_null(strstr(v.buf, "ExecStart=" COPY " --budget-ms 30000 restore --cluster c\n"));
	assert_non_null(strstr(v.buf, "After=network-online.target tlshd.service\n"));
	assert_non_null(strstr(v.buf, "Type=notify\n"));
	assert_non_null(strstr(v.buf, "TimeoutStartSec=45\n"));
	assert_null(strstr(v.buf, "Restart="));
	assert_null(strstr(v.buf, "oneshot"));
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
	assert_non_null(strstr(v.buf, COPY));
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
	/* the unit's program: edited, or a newer agent pushed since */
	write_node(root, COPY, "edited\n");
	assert_int_equal(plan(root, request("true"), &out), 0);
	assert_true(fx_has_change(&out, "change", "restore_agent"));
	ln_buf_release(&out);
	fx_remove(root);
}

/* A reboot on the fixture: a fresh tree (empty configfs) with the disk's
 * llmnet files copied over; restore brings the target back, its host key
 * from the key store (the stored request has none). */
static void test_agent_persist__restore_after_reboot(void **st)
{
	char *root = tree(1), *boot = tree(1), cmd[8192];
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
	/* the pushed agent gone (another cluster's purge): the restore leaves
	 * the unit's own files alone, so it does not miss it */
	snprintf(cmd, sizeof(cmd), "rm %s" PUSHED, boot);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(agent(boot, restore, NULL, &out), 0);
	assert_false(fx_has_change(&out, "create", "restore_agent"));
	assert_false(fx_has_change(&out, "ok", "systemd_unit"));
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

/* Restore mounts with the request's options (exec here: nosuid,nodev
 * only), after a reboot and over a remount that changed them since. */
static void test_agent_persist__restore_mounts_with_options(void **st)
{
	char *root = tree_of("node-initiator", 1), *boot = tree_of("node-initiator", 1), cmd[8192];
	const char *restore[] = { "restore", "--cluster", "c", NULL };
	const char *req = "{\"protocol\":3,\"cluster\":\"c\",\"persist\":true,\"initiators\":[{"
			  "\"target\":\"nqn.2024-04.x:t\",\"transport\":\"tcp\",\"address\":"
			  "\"10.77.0.11\",\"service\":4420,\"mount\":{\"path\":\"/mnt/x\",\"fs\":"
			  "\"ext4\",\"format\":\"if-blank\",\"exec\":true}}]}";
	const char *want = "/dev/nvme1n1 /mnt/x ext4 rw,nosuid,nodev,relatime 0 0";
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;

	(void)st;
	assert_int_equal(apply(root, req, &out), 0);
	snprintf(cmd, sizeof(cmd), "cp -a %s/var/lib/llmnet %s/var/lib/ && "
		 "cp -a %s/etc/systemd/system/. %s/etc/systemd/system/", root, boot, root, boot);
	assert_int_equal(system(cmd), 0);
	fx_read(boot, "/proc/mounts", &v);
	assert_null(strstr(v.buf, "/mnt/x"));
	assert_int_equal(agent(boot, restore, NULL, &out), 0);
	fx_read(boot, "/proc/mounts", &v);
	assert_non_null(strstr(v.buf, want));
	/* an admin's remount since (suid, noexec): restore puts it back */
	snprintf(cmd, sizeof(cmd), "sed -i 's| /mnt/x ext4 rw,nosuid,nodev,| /mnt/x ext4 "
		 "rw,noexec,|' %s/proc/mounts", boot);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(agent(boot, restore, NULL, &out), 0);
	assert_true(fx_has_change(&out, "change", "mount_options"));
	fx_read(boot, "/proc/mounts", &v);
	assert_non_null(strstr(v.buf, want));
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
		     exists(root, STORED, NULL) || exists(root, COPY, NULL));
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
		     exists(root, STORED, NULL) || exists(root, COPY, NULL) ||
		     exists(root, "/etc/llmnet/keys/c", NULL));
	ln_buf_release(&out);
	fx_remove(root);
}

/* Cluster d's request: another target on the same node (its own NQN,
 * port and file), persisting too. */
static const char *request_d(void)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{\"protocol\":3,\"cluster\":\"d\",\"persist\":true,\"targets\":[{\"nqn\":\""
		 NQN "2\",\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4431,"
		 "\"hosts\":[],\"namespaces\":[{\"nsid\":1,\"file\":\"/var/lib/nvmet/d.img\","
		 "\"size\":4096}]}]}");
	return buf;
}

/* Each cluster's unit runs its own copy of the agent that applied it:
 * another cluster's teardown --purge (the controller then deletes the
 * pushed agent) leaves it, and the unit, whole. */
static void test_agent_persist__unit_runs_its_own_agent(void **st)
{
	char *root = tree(1), p[4096];
	const char *facts[] = { "facts", NULL };
	const char *down_d[] = { "teardown", "--cluster", "d", "--purge", NULL };
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;

	(void)st;
	assert_int_equal(apply(root, request("true"), &out), 0);
	assert_int_equal(apply(root, request_d(), &out), 0);
	assert_true(exists(root, "/var/lib/llmnet/restore/d.agent", NULL));
	fx_read(root, "/etc/systemd/system/llmnet-restore-d.service", &v);
	assert_non_null(strstr(v.buf, "ExecStart=/var/lib/llmnet/restore/d.agent "));
	/* d goes with --purge, and its controller removes the pushed agent */
	assert_int_equal(agent(root, down_d, NULL, &out), 0);
	assert_true(fx_has_change(&out, "remove", "restore_agent"));
	assert_false(exists(root, "/var/lib/llmnet/restore/d.agent", NULL));
	snprintf(p, sizeof(p), "%s" PUSHED, root);
	assert_int_equal(unlink(p), 0);
	/* c's unit still has its program */
	fx_read(root, UNIT, &v);
	assert_non_null(strstr(v.buf, "ExecStart=" COPY " "));
	fx_read(root, COPY, &v);
	assert_string_equal(v.buf, "#!pushed agent, version 1\n");
	assert_int_equal(agent(root, facts, NULL, &out), 0);
	assert_non_null(strstr(out.buf, "\"persistent\": \"yes\""));
	/* a newer agent pushed: plan shows the unit's copy as drift, apply
	 * copies it */
	write_node(root, PUSHED, "#!pushed agent, version 2\n");
	assert_int_equal(plan(root, request("true"), &out), 0);
	assert_true(fx_has_change(&out, "change", "restore_agent"));
	assert_int_equal(apply(root, request("true"), &out), 0);
	fx_read(root, COPY, &v);
	assert_string_equal(v.buf, "#!pushed agent, version 2\n");
	/* no pushed agent at all: said by name, the unit is not made */
	assert_int_equal(unlink(p), 0);
	snprintf(p, sizeof(p), "%s" COPY, root);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(apply(root, request("true"), &out), 1);
	assert_non_null(strstr(out.buf, "the pushed agent '" PUSHED "' is missing"));
	ln_test_release(&out, &v);
	fx_remove(root);
}

#define INIT_REQUEST                                                                          \
	"{\"protocol\":3,\"cluster\":\"c\",\"persist\":true,\"initiators\":[{\"target\":\""   \
	"nqn.2024-04.x:t\",\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4420}]}"

/* A teardown that cannot remove the boot unit's files stops there: the
 * target, its namespace and the key store stay (a reboot would restore
 * them anyway), the answer says so and fails; once the obstacle is gone,
 * a teardown removes everything. */
static void test_agent_persist__teardown_stops_when_unit_stays(void **st)
{
	char *root = tree(1), p[4096], cmd[8192];
	const char *down[] = { "teardown", NULL };
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;
	struct stat sb;

	(void)st;
	assert_int_equal(apply(root, request("true"), &out), 0);
	/* the stored request replaced by something teardown cannot remove */
	snprintf(cmd, sizeof(cmd), "rm -f %s" STORED " && mkdir %s" STORED, root, root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(agent(root, down, NULL, &out), LN_AGENT_EXIT_PARTIAL);
	assert_non_null(strstr(out.buf, "not a regular file; not removed"));
	assert_non_null(strstr(out.buf, "teardown stopped"));
	assert_non_null(strstr(out.buf, "\"converged\": false"));
	assert_false(fx_has_change(&out, "remove", "nvmet_subsystem"));
	assert_false(fx_has_change(&out, "remove", "node_key_store"));
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/" NQN, root);
	assert_int_equal(stat(p, &sb), 0);
	assert_true(exists(root, "/etc/llmnet/keys/c", NULL));
	/* the obstacle gone: the teardown finishes */
	snprintf(cmd, sizeof(cmd), "rmdir %s" STORED, root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(agent(root, down, NULL, &out), 0);
	assert_true(fx_has_change(&out, "remove", "nvmet_subsystem"));
	assert_int_equal(stat(p, &sb), -1);
	assert_false(exists(root, "/etc/llmnet/keys/c", NULL));
	fx_remove(root);
	/* on an initiator, its connection stays and is said to: the
	 * controller then keeps its target (a "*" disconnect that failed) */
	root = tree_of("node-initiator", 1);
	assert_int_equal(apply(root, INIT_REQUEST, &out), 0);
	snprintf(cmd, sizeof(cmd), "rm -f %s" STORED " && mkdir %s" STORED, root, root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(agent(root, down, NULL, &out), LN_AGENT_EXIT_PARTIAL);
	assert_non_null(strstr(out.buf, "\"kind\": \"nvme_connection\",\n      \"id\": \"*\""));
	assert_non_null(strstr(out.buf, "teardown stopped"));
	fx_read(root, "/sys/class/nvme/nvme1/subsysnqn", &v);
	assert_string_equal(v.buf, "nqn.2024-04.x:t\n");
	ln_test_release(&out, &v);
	fx_remove(root);
}


/* systemd's side of sd_notify: a datagram socket at a path. */
struct notify_sock {
	char path[108];
	int fd;
	struct ln_buf got;	/* every message, each followed by '|' */
};

static void notify_open(struct notify_sock *n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(n->path, sizeof(n->path), "/tmp/llmnet-notify.%d", (int)getpid());
	unlink(n->path);
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(n->fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", n->path);
	assert_int_equal(bind(n->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ln_buf_init(&n->got, 0);
}

/* Read what is there (waiting ms at most for the first), closing any
 * descriptor sent along (a barrier: its sender waits for that). */
static void notify_drain(struct notify_sock *n, int ms)
{
	char text[1024], ctl[CMSG_SPACE(sizeof(int) * 4)];
	struct pollfd pf = { n->fd, POLLIN, 0 };

	while (poll(&pf, 1, ms) == 1) {
		struct iovec iov = { text, sizeof(text) - 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };
		struct cmsghdr *c;
		ssize_t len = recvmsg(n->fd, &mh, MSG_DONTWAIT);

		if (len < 0)
			break;
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
				int fd;

				memcpy(&fd, CMSG_DATA(c), sizeof(fd));
				close(fd);
			}
		}
		text[len] = '\0';
		ln_buf_addf(&n->got, "%s|", text);
		ms = 0;
	}
}

static void notify_close(struct notify_sock *n)
{
	close(n->fd);
	unlink(n->path);
	ln_buf_release(&n->got);
}

/* The boot unit's start: restore under a 1 s boot bound with n's socket,
 * the background pauses from 20 ms; stderr to errpath. The pid. */
static pid_t spawn_restore(const char *root, struct notify_sock *n, const char *errpath)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int nul = open("/dev/null", O_RDWR);

		dup2(nul, 0);
		dup2(nul, 1);
		dup2(fd, 2);
		setenv("NOTIFY_SOCKET", n->path, 1);
		setenv("LLMNET_RESTORE_PAUSE_MS", "20", 1);
		execl(AGENT_BIN, AGENT_BIN, "--root", root, "--budget-ms", "1000", "restore",
		      "--cluster", "c", (char *)NULL);
		_exit(126);
	}
	return pid;
}

/* Wait (30 s at most) until pid exits, reading n meanwhile; its status. */
static int wait_restore(pid_t pid, struct notify_sock *n)
{
	int status = 0, i;

	for (i = 0; i < 300; i++) {
		notify_drain(n, 100);
		if (waitpid(pid, &status, WNOHANG) == pid) {
			notify_drain(n, 0);
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fail_msg("restore did not end within 30 s");
	return -1;
}

/* Wait (30 s at most) until n got READY=1. */
static void wait_ready(struct notify_sock *n)
{
	int i;

	for (i = 0; i < 300 && !strstr(n->got.buf, "READY=1"); i++)
		notify_drain(n, 100);
	assert_non_null(strstr(n->got.buf, "READY=1"));
}

/* An initiator applied with persist, then "rebooted": a fresh tree with the
 * disk's llmnet files, its identity and units; refused connects to come. */
static char *rebooted_initiator(int refused)
{
	char *root = tree_of("node-initiator", 1), *boot = tree_of("node-initiator", 1);
	char n[32];
	struct ln_buf out = LN_BUF_INIT;

	assert_int_equal(apply(root, INIT_REQUEST, &out), 0);
	fx_copy_boot(root, boot);
	snprintf(n, sizeof(n), "%d\n", refused);
	write_node(boot, "/etc/llmnet-fixture/connect-refused", n);
	ln_buf_release(&out);
	fx_remove(root);
	return boot;
}

/* A controller for the target in the tree's sysfs (the state, copied from
 * before the "reboot", still records the old one). */
static int connected(const char *root)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "grep -qsx nqn.2024-04.x:t %s/sys/class/nvme/nvme*/subsysnqn",
		 root);
	return system(cmd) == 0;
}

/* The target down at boot: READY within the bound with the retries said
 * in the journal (stderr) and in the status, then the background retries
 * connect once the target answers (the third try). */
static void test_agent_persist__restore_retries_in_background(void **st)
{
	char *boot = rebooted_initiator(2), errpath[] = "/tmp/llmnet-restore-err.XXXXXX";
	struct notify_sock n = { "", -1, LN_BUF_INIT };
	struct ln_buf err = LN_BUF_INIT, e = LN_BUF_INIT;
	const char *ready, *later, *done;

	(void)st;
	close(mkstemp(errpath));
	notify_open(&n);
	assert_false(connected(boot));
	assert_int_equal(wait_restore(spawn_restore(boot, &n, errpath), &n), 0);
	assert_int_equal(ln_file_read(errpath, &err, &e), 0);
	assert_non_null(strstr(err.buf, "not restored after 1 tries in the 1 s boot bound; boot "
					"goes on, and the retries go on in the background"));
	assert_non_null(strstr(err.buf, "not restored (try 2); next try in 40 ms"));
	assert_non_null(strstr(err.buf, "cluster 'c' restored (try 3, in the background)"));
	/* systemd heard READY after the first try, then the status, in order */
	ready = strstr(n.got.buf, "READY=1\nSTATUS=not restored after 1 tries; retrying in the "
			      "background|");
	later = strstr(n.got.buf, "STATUS=not restored after 2 tries; next try in 1 s|");
	done = strstr(n.got.buf, "STATUS=cluster c restored (try 3)|");
	assert_non_null(ready);
	assert_non_null(later);
	assert_non_null(done);
	assert_true(ready < later && later < done);
	assert_non_null(strstr(done, "BARRIER=1|"));
	assert_true(connected(boot));
	unlink(errpath);
	notify_close(&n);
	ln_test_release(&err, &e);
	fx_remove(boot);
}

/* The target stays down: a teardown meanwhile takes the stored request,
 * and the retries end (exit 0) with nothing connected; systemctl stop
 * (SIGTERM) ends them too, as failed. */
static void test_agent_persist__restore_retries_end(void **st)
{
	char *boot = rebooted_initiator(1000), errpath[] = "/tmp/llmnet-restore-err.XXXXXX";
	const char *down[] = { "teardown", NULL };
	struct notify_sock n = { "", -1, LN_BUF_INIT };
	struct ln_buf err = LN_BUF_INIT, e = LN_BUF_INIT, out = LN_BUF_INIT;
	pid_t pid;

	(void)st;
	close(mkstemp(errpath));
	notify_open(&n);
	pid = spawn_restore(boot, &n, errpath);
	wait_ready(&n);
	assert_int_equal(agent(boot, down, NULL, &out), 0);
	assert_true(fx_has_change(&out, "remove", "restore_request"));
	assert_int_equal(wait_restore(pid, &n), 0);
	assert_int_equal(ln_file_read(errpath, &err, &e), 0);
	assert_non_null(strstr(err.buf, "stores no request on this node any more (teardown, or "
					"persist: false): the retries end"));
	assert_non_null(strstr(n.got.buf, "STATUS=nothing to restore any more|"));
	assert_false(connected(boot));
	fx_remove(boot);
	/* again, stopped by systemd instead */
	boot = rebooted_initiator(1000);
	ln_buf_reset(&n.got);
	pid = spawn_restore(boot, &n, errpath);
	wait_ready(&n);
	assert_int_equal(kill(pid, SIGTERM), 0);
	assert_int_equal(wait_restore(pid, &n), LN_AGENT_EXIT_TIMEOUT);
	ln_buf_reset(&err);
	assert_int_equal(ln_file_read(errpath, &err, &e), 0);
	assert_non_null(strstr(err.buf, "stopped (the request was cancelled)"));
	assert_false(connected(boot));
	unlink(errpath);
	notify_close(&n);
	ln_test_release(&err, &e, &out);
	fx_remove(boot);
}

/* A boot try that fails (here the kernel cannot authenticate yet) keeps
 * the key store whole, so a later try keys the target from it (audit B1:
 * a failed try removed the failed target's files, and every try after it
 * failed by name: "the node key store has no ..."). */
static void test_agent_persist__failed_restore_keeps_the_store(void **st)
{
	char *root = tree(1), *boot = tree(1), cmd[8192], key[4096];
	char errpath[] = "/tmp/llmnet-restore-err.XXXXXX";
	struct notify_sock n = { "", -1, LN_BUF_INIT };
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT, err = LN_BUF_INIT, e = LN_BUF_INIT;
	static const char *const host_auth[4][2] = {
		{ "dhchap_key", "\n" }, { "dhchap_ctrl_key", "\n" },
		{ "dhchap_hash", "hmac(sha256)\n" }, { "dhchap_dhgroup", "null\n" },
	};
	struct stat sb;
	pid_t pid;
	int i;

	(void)st;
	assert_int_equal(apply(root, request("true"), &out), 0);
	snprintf(cmd, sizeof(cmd),
		 "cp -a %s/var/lib/llmnet %s/var/lib/nvmet %s/var/lib/ && "
		 "mkdir -p %s/etc/llmnet && cp -a %s/etc/llmnet/keys %s/etc/llmnet/ && "
		 "cp -a %s/etc/systemd/system/. %s/etc/systemd/system/ && "
		 "rm %s/etc/llmnet-fixture/nvmet-auth",
		 root, root, boot, boot, root, boot, root, boot, boot);
	assert_int_equal(system(cmd), 0);
	snprintf(key, sizeof(key), "%s/etc/llmnet/keys/c/host-" H1 ".key", boot);
	close(mkstemp(errpath));
	notify_open(&n);
	pid = spawn_restore(boot, &n, errpath);
	wait_ready(&n);
	/* the boot tries failed, the store is whole. Now the kernel can (as a
	 * late tlshd or disk would come up): the host entry the first try made
	 * gets the attributes an authenticating kernel shows */
	assert_int_equal(lstat(key, &sb), 0);
	write_node(boot, "/etc/llmnet-fixture/nvmet-auth", "");
	for (i = 0; i < 4; i++) {
		snprintf(cmd, sizeof(cmd), "/sys/kernel/config/nvmet/hosts/" H1 "/%s",
			 host_auth[i][0]);
		write_node(boot, cmd, host_auth[i][1]);
	}
	assert_int_equal(wait_restore(pid, &n), 0);
	assert_int_equal(ln_file_read(errpath, &err, &e), 0);
	assert_non_null(strstr(err.buf, "this kernel's nvmet has no authentication"));
	assert_null(strstr(err.buf, "the node key store has no"));
	assert_non_null(strstr(err.buf, "cluster 'c' restored ("));
	fx_read(boot, "/sys/kernel/config/nvmet/hosts/" H1 "/dhchap_key", &v);
	assert_string_equal(v.buf, K1 "\n");
	assert_int_equal(lstat(key, &sb), 0);
	unlink(errpath);
	notify_close(&n);
	ln_test_release(&out, &v, &err, &e);
	fx_remove(root);
	fx_remove(boot);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_persist__apply_keeps_request_and_unit),
	cmocka_unit_test(test_agent_persist__plan_reports_unit_drift),
	cmocka_unit_test(test_agent_persist__restore_after_reboot),
	cmocka_unit_test(test_agent_persist__restore_mounts_with_options),
	cmocka_unit_test(test_agent_persist__failed_restore_keeps_the_store),
	cmocka_unit_test(test_agent_persist__restore_nothing_or_missing_secret),
	cmocka_unit_test(test_agent_persist__no_systemd_is_unsupported),
	cmocka_unit_test(test_agent_persist__foreign_unit_refused),
	cmocka_unit_test(test_agent_persist__off_and_teardown_remove_all),
	cmocka_unit_test(test_agent_persist__unit_runs_its_own_agent),
	cmocka_unit_test(test_agent_persist__teardown_stops_when_unit_stays),
	cmocka_unit_test(test_agent_persist__restore_retries_in_background),
	cmocka_unit_test(test_agent_persist__restore_retries_end),
)
