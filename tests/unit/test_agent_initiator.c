// SPDX-License-Identifier: MIT
/*
 * Initiator, hostfile and run on fixture trees: host identity generated
 * once from the DMI UUID, idempotent connect (an existing controller for
 * the same tuple counts as connected and is never disconnected), format
 * only when libblkid finds the device blank, MPICH hostfile rewritten only
 * on difference, teardown back to the prior listing; the probe runner's
 * allow-list and bound.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <json-c/json.h>

#include "common/fileio.h"
#include "common/json.h"

/* The live controller's attributes. */
#define CTRL "/sys/class/nvme/nvme1/"

static char *slurp(const char *path)
{
	struct ln_buf b = LN_BUF_INIT, e = LN_BUF_INIT;

	assert_int_equal(ln_file_read(path, &b, &e), 0);
	ln_buf_release(&e);
	return ln_buf_detach(&b, NULL);
}

static int skip_leftovers(const char *rel)
{
	/* generated identity, state and lock are the documented leftovers */
	return !strncmp(rel, "/var/lib/llmnet", 15) || !strcmp(rel, "/run/llmnet.lock") ||
	       !strncmp(rel, "/etc/nvme", 9);
}

#define K1 "DHHC-1:00:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUEebzGt:"
#define K2 "DHHC-1:00:QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkK9MX0g:"

/* The request of one tcp connect to nqn.2024-04.x:t, with extra (",..."
 * fields) at the end of its entry. */
static const char *init_req(const char *extra)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"protocol\":1,\"cluster\":\"c\",\"initiators\":[{\"target\":\"nqn.2024-04.x:t\","
		 "\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4420%s}]}", extra);
	return buf;
}

static const char *dh_init(const char *secret, const char *ctrl)
{
	char c[160] = "", d[320] = "";

	if (ctrl)
		snprintf(c, sizeof(c), ",\"ctrl_secret\":\"%s\"", ctrl);
	if (secret)
		snprintf(d, sizeof(d), ",\"dhchap\":{\"secret\":\"%s\"%s}", secret, c);
	return init_req(d);
}

static const char *q_init(int nr, int qs, int tmo, int delay)
{
	char q[160];

	snprintf(q, sizeof(q),
		 ",\"queues\":{\"nr_io_queues\":%d,\"queue_size\":%d,\"ctrl_loss_tmo\":%d,"
		 "\"reconnect_delay\":%d}", nr, qs, tmo, delay);
	return init_req(q);
}

/* The connect carries the secrets; a changed one re-keys the live
 * controller in place (a change of nvme_dhchap_secret); the node key store
 * keeps them; a controller connected without a secret is not re-keyed;
 * teardown wipes the store; no secret in an answer or the state. */
static void test_agent_initiator__dhchap_connect_and_rekey(void **st)
{
	const char *apply[] = { "apply", NULL }, *plan[] = { "plan", NULL };
	const char *td[] = { "teardown", NULL };
	char *root = fx_build("node-initiator");
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;
	const char *store = "/etc/llmnet/keys/c/target-nqn.2024-04.x:t.key";

	(void)st;
	assert_int_equal(fx_run_ini(root, apply, dh_init(K1, K2), &out), 0);
	fx_read(root, CTRL "dhchap_secret", &v);
	assert_string_equal(v.buf, K1 "\n");
	fx_read(root, CTRL "dhchap_ctrl_secret", &v);
	assert_string_equal(v.buf, K2 "\n");
	fx_read(root, store, &v);
	assert_string_equal(v.buf, K1 "\n");
	assert_null(strstr(out.buf, "QUFBQUFB"));
	assert_null(strstr(out.buf, "QkJCQkJC"));
	fx_read(root, "/var/lib/llmnet/state.json", &v);
	assert_null(strstr(v.buf, "DHHC-1"));
	/* rotation: plan says so and changes nothing; apply re-keys */
	ln_buf_reset(&out);
	assert_int_equal(fx_run_ini(root, plan, dh_init(K2, K2), &out), 0);
	assert_non_null(strstr(out.buf, "nvme_dhchap_secret"));
	fx_read(root, CTRL "dhchap_secret", &v);
	assert_string_equal(v.buf, K1 "\n");
	ln_buf_reset(&out);
	assert_int_equal(fx_run_ini(root, apply, dh_init(K2, K2), &out), 0);
	assert_non_null(strstr(out.buf, "re-authenticate the live controller"));
	assert_null(strstr(out.buf, "QkJCQkJC"));
	fx_read(root, CTRL "dhchap_secret", &v);
	assert_string_equal(v.buf, K2 "\n");
	fx_read(root, store, &v);
	assert_string_equal(v.buf, K2 "\n");
	/* converged: nothing more */
	ln_buf_reset(&out);
	assert_int_equal(fx_run_ini(root, apply, dh_init(K2, K2), &out), 0);
	assert_null(strstr(out.buf, "nvme_dhchap_secret"));
	/* teardown disconnects and wipes the store */
	ln_buf_reset(&out);
	assert_int_equal(fx_run_ini(root, td, NULL, &out), 0);
	{
		char p[4096];

		snprintf(p, sizeof(p), "%s/etc/llmnet/keys/c", root);
		assert_int_equal(access(p, F_OK), -1);
	}
	/* connected without a secret: the kernel cannot re-key it; said */
	ln_buf_reset(&out);
	assert_int_equal(fx_run_ini(root, apply, dh_init(NULL, NULL), &out), 0);
	ln_buf_reset(&out);
	{
		struct ln_buf err = LN_BUF_INIT;

		assert_int_equal(fx_agent(root, apply, dh_init(K1, NULL), &out, &err,
					  "LLMNET_NS_WAIT=2"), 1);
		ln_buf_release(&err);
	}
	assert_non_null(strstr(out.buf, "was connected without DH-HMAC-CHAP"));
	assert_null(strstr(out.buf, "QUFBQUFB"));
	ln_test_release(&out, &v);
	fx_remove(root);
}

static void test_agent_initiator__connect_mount_hostfile_teardown(void **st)
{
	const char *apply[] = { "apply", NULL }, *td[] = { "teardown", NULL };
	char *root = fx_build("node-initiator"), p[4096];
	char *req = slurp(FIXTURES_DIR "/agent/request-initiator.json");
	struct ln_buf out = LN_BUF_INIT, before = LN_BUF_INIT, after = LN_BUF_INIT, v = LN_BUF_INIT;
	struct ln_buf e = LN_BUF_INIT, m1 = LN_BUF_INIT, m2 = LN_BUF_INIT;

	(void)st;
	fx_list(root, &before, skip_leftovers);
	assert_int_equal(fx_run_ini(root, apply, req, &out), 0);
	/* identity from the DMI product UUID */
	snprintf(p, sizeof(p), "%s/etc/nvme/hostnqn", root);
	assert_int_equal(ln_file_read(p, &v, &e), 0);
	assert_string_equal(v.buf,
			    "nqn.2014-08.org.nvmexpress:uuid:1f0f7b8a-0000-4000-8000-000000000002\n");
	ln_buf_reset(&v);
	snprintf(p, sizeof(p), "%s/etc/nvme/hostid", root);
	assert_int_equal(ln_file_read(p, &v, &e), 0);
	assert_string_equal(v.buf, "1f0f7b8a-0000-4000-8000-000000000002\n");
	/* the foreign controller nvme0 already serves the second tuple: ok */
	assert_non_null(strstr(out.buf, "\"action\":\"ok\",\"kind\":\"nvme_connection\"") ||
			strstr(out.buf, "\"action\": \"ok\""));
	/* the new controller and its block device, formatted (blank) and mounted */
	snprintf(p, sizeof(p), "%s/sys/class/nvme/nvme1/subsysnqn", root);
	ln_buf_reset(&v);
	assert_int_equal(ln_file_read(p, &v, &e), 0);
	assert_string_equal(v.buf, "nqn.2024-04.com.example:te1.target1\n");
	assert_non_null(strstr(out.buf, "formatted: was blank"));
	snprintf(p, sizeof(p), "%s/proc/mounts", root);
	ln_buf_reset(&v);
	assert_int_equal(ln_file_read(p, &v, &e), 0);
	/* a fabric file system: no setuid, no device nodes, no programs */
	assert_non_null(strstr(v.buf, "/dev/nvme1n1 /mnt/ckpt ext4 rw,nosuid,nodev,noexec,relatime"));
	/* MPICH hostfile */
	snprintf(p, sizeof(p), "%s/etc/llmnet/hostfile", root);
	ln_buf_reset(&v);
	assert_int_equal(ln_file_read(p, &v, &e), 0);
	assert_non_null(strstr(v.buf, "\nte1:2\nte2:4\n"));
	/* converged: nothing written */
	fx_list_mtimes(root, &m1);
	assert_int_equal(fx_run_ini(root, apply, req, &out), 0);
	fx_list_mtimes(root, &m2);
	assert_string_equal(m1.buf, m2.buf);
	assert_null(strstr(out.buf, "\"action\": \"create\""));
	assert_null(strstr(out.buf, "\"action\": \"change\""));
	assert_non_null(strstr(out.buf, "\"action\": \"ok\""));
	/* teardown: our controller and mount go; nvme0 (foreign) stays */
	assert_int_equal(fx_run_ini(root, td, NULL, &out), 0);
	fx_list(root, &after, skip_leftovers);
	assert_string_equal(before.buf, after.buf);
	/* a second apply keeps the generated identity (never overwritten) */
	assert_int_equal(fx_run_ini(root, apply, req, &out), 0);
	snprintf(p, sizeof(p), "%s/etc/nvme/hostid", root);
	ln_buf_reset(&v);
	assert_int_equal(ln_file_read(p, &v, &e), 0);
	assert_string_equal(v.buf, "1f0f7b8a-0000-4000-8000-000000000002\n");
	/* now the device holds ext4: it is mounted without formatting again */
	assert_int_equal(fx_run_ini(root, td, NULL, &out), 0);
	free(req);
	ln_test_release(&out, &before, &after, &v, &e, &m1, &m2);
	fx_remove(root);
}

/* The host identity is the node's, not the cluster's: after teardown
 * --purge the state records nothing of it (issue 12, point 10). */
static void test_agent_initiator__purge_leaves_no_host_identity_record(void **st)
{
	const char *apply[] = { "apply", NULL }, *td[] = { "teardown", "--purge", NULL };
	char *root = fx_build("node-initiator"), p[4096];
	char *req = slurp(FIXTURES_DIR "/agent/request-initiator.json");
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT, e = LN_BUF_INIT;

	(void)st;
	assert_int_equal(fx_run_ini(root, apply, req, &out), 0);
	assert_int_equal(fx_run_ini(root, td, NULL, &out), 0);
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/state.json", root);
	assert_int_equal(ln_file_read(p, &v, &e), 0);
	if (strstr(v.buf, "/etc/nvme"))
		fail_msg("state after teardown --purge still names /etc/nvme:\n%s", v.buf);
	/* the identity itself stays: it is never removed */
	snprintf(p, sizeof(p), "%s/etc/nvme/hostnqn", root);
	ln_buf_reset(&v);
	assert_int_equal(ln_file_read(p, &v, &e), 0);
	free(req);
	ln_test_release(&out, &v, &e);
	fx_remove(root);
}

static void test_agent_initiator__format_never_refuses_blank(void **st)
{
	const char *apply[] = { "apply", NULL };
	char *root = fx_build("node-initiator");
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	const char *req =
		"{\"protocol\":1,\"cluster\":\"c\",\"initiators\":[{\"target\":\"nqn.2024-04.x:t\","
		"\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4420,"
		"\"mount\":{\"path\":\"/mnt/x\",\"fs\":\"ext4\"}}]}";

	(void)st;
	assert_int_equal(fx_agent(root, apply, req, &out, &err, "LLMNET_NS_WAIT=2"), 1);
	assert_non_null(strstr(out.buf, "has no filesystem and format is 'never'"));
	ln_test_release(&out, &err);
	fx_remove(root);
}

/* A mount point that holds something is refused, in plan and apply, and
 * nothing of the tree changes but the connection llmnet made for it. */
static void test_agent_initiator__mount_point_not_empty(void **st)
{
	const char *plan[] = { "plan", NULL }, *apply[] = { "apply", NULL };
	char *root = fx_build("node-initiator"), p[4096];
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, before = LN_BUF_INIT, after = LN_BUF_INIT;
	const char *req =
		"{\"protocol\":1,\"cluster\":\"c\",\"initiators\":[{\"target\":\"nqn.2024-04.x:t\","
		"\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4420,"
		"\"mount\":{\"path\":\"/srv/data\",\"fs\":\"ext4\",\"format\":\"if-blank\"}}]}";

	(void)st;
	snprintf(p, sizeof(p), "%s/srv/data", root);
	assert_int_equal(ln_mkdir_p(p, 0755, &err), 0);
	snprintf(p, sizeof(p), "%s/srv/data/keep.txt", root);
	assert_int_equal(ln_file_write_atomic(p, "the node's own\n", 15, 0644, &err), 0);
	fx_list(root, &before, skip_leftovers);
	assert_int_equal(fx_agent(root, plan, req, &out, &err, "LLMNET_NS_WAIT=2"), 1);
	assert_non_null(strstr(out.buf, "mount point '/srv/data' is not empty (1 entry)"));
	ln_buf_reset(&out);
	assert_int_equal(fx_agent(root, apply, req, &out, &err, "LLMNET_NS_WAIT=2"), 1);
	assert_non_null(strstr(out.buf, "mount point '/srv/data' is not empty (1 entry)"));
	/* no mkfs, no mount, and the directory keeps what it held */
	assert_null(strstr(out.buf, "formatted"));
	fx_list(root, &after, skip_leftovers);
	assert_non_null(strstr(after.buf, "/srv/data/keep.txt"));
	snprintf(p, sizeof(p), "%s/proc/mounts", root);
	ln_buf_reset(&err);
	ln_buf_reset(&out);
	assert_int_equal(ln_file_read(p, &out, &err), 0);
	assert_null(strstr(out.buf, "/srv/data"));
	ln_test_release(&out, &err, &before, &after);
	fx_remove(root);
}

static const char *mount_req(const char *path)
{
	static char buf[512];

	snprintf(buf, sizeof(buf),
		 "{\"protocol\":1,\"cluster\":\"c\",\"initiators\":[{\"target\":"
		 "\"nqn.2024-04.x:t\",\"transport\":\"tcp\",\"address\":\"10.77.0.11\","
		 "\"service\":4420,\"mount\":{\"path\":\"%s\",\"fs\":\"ext4\",\"format\":"
		 "\"if-blank\"}}]}",
		 path);
	return buf;
}

static void read_into(const char *root, const char *rel, struct ln_buf *out)
{
	struct ln_buf e = LN_BUF_INIT;
	char p[4096];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	ln_buf_reset(out);
	assert_int_equal(ln_file_read(p, out, &e), 0);
	ln_buf_release(&e);
}

static void append_mount(const char *root, const char *line)
{
	char p[4096];
	FILE *f;

	snprintf(p, sizeof(p), "%s/proc/mounts", root);
	f = fopen(p, "a");
	assert_non_null(f);
	fputs(line, f);
	fclose(f);
}

/* Run args with req on root: refused (exit 1) with want in the answer,
 * and /proc/mounts as it was. */
static void refused_mounts_kept(const char *root, const char *const *args, const char *req,
				const char *want)
{
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, m1 = LN_BUF_INIT, m2 = LN_BUF_INIT;

	read_into(root, "/proc/mounts", &m1);
	assert_int_equal(fx_agent(root, args, req, &out, &err, "LLMNET_NS_WAIT=2"), 1);
	if (!strstr(out.buf, want))
		fail_msg("want: %s\ngot: %s", want, out.buf);
	read_into(root, "/proc/mounts", &m2);
	assert_string_equal(m1.buf, m2.buf);
	ln_test_release(&out, &err, &m1, &m2);
}

/* Something else mounted at the mount point (same fs type) is not the
 * declared namespace: refused, naming it, never reported ok or recorded
 * (issue 12 point 3). */
static void test_agent_initiator__foreign_mount_at_mount_point_refused(void **st)
{
	const char *apply[] = { "apply", NULL };
	char *root = fx_build("node-initiator"), p[4096];
	struct ln_buf err = LN_BUF_INIT, state = LN_BUF_INIT;

	(void)st;
	snprintf(p, sizeof(p), "%s/mnt/ckpt", root);
	assert_int_equal(ln_mkdir_p(p, 0755, &err), 0);
	append_mount(root, "/dev/vdb /mnt/ckpt ext4 rw,relatime 0 0\n");
	refused_mounts_kept(root, apply, mount_req("/mnt/ckpt"),
			    "'/mnt/ckpt' already has /dev/vdb mounted, not the namespace of "
			    "'nqn.2024-04.x:t'; llmnet uses only");
	/* refused before the connect: no connection made or recorded (no
	 * state at all: nothing changed) */
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/state.json", root);
	if (access(p, F_OK) == 0) {
		read_into(root, "/var/lib/llmnet/state.json", &state);
		assert_null(strstr(state.buf, "/mnt/ckpt"));
		assert_null(strstr(state.buf, "nvme_connection"));
	}
	snprintf(p, sizeof(p), "%s/sys/class/nvme/nvme1", root);
	assert_int_not_equal(access(p, F_OK), 0);
	ln_test_release(&err, &state);
	fx_remove(root);
}

/* The change of answer out for the connection whose id holds target. */
static struct json_object *change_of(const struct ln_buf *out, const char *target,
				     struct json_object **answer)
{
	struct ln_buf e = LN_BUF_INIT;
	struct json_object *chs;
	size_t i;

	assert_int_equal(ln_json_parse(out->buf, out->len, answer, &e), 0);
	ln_buf_release(&e);
	chs = ln_json_at(*answer, "changes");
	for (i = 0; chs && i < json_object_array_length(chs); i++) {
		struct json_object *c = json_object_array_get_idx(chs, i);

		if (!strcmp(ln_json_str_at(c, "kind"), "nvme_connection") &&
		    strstr(ln_json_str_at(c, "id"), target))
			return c;
	}
	fail_msg("no nvme_connection change for %s in:\n%s", target, out->buf);
	return NULL;
}

/* A refused mount point refuses every initiator of the request before
 * any connect; one already connected (other.target, which the fixture's
 * nvme0 serves) is reported as it is, ok on nvme0 and left as it is,
 * never as "not connected" (it was, before); the new one is "not
 * connected". The control: the same request without the foreign mount
 * connects. */
static void test_agent_initiator__refused_mount_keeps_connected_labels(void **st)
{
	const char *apply[] = { "apply", NULL };
	char *root = fx_build("node-initiator"), p[4096];
	char *req = slurp(FIXTURES_DIR "/agent/request-initiator.json");
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, mounts = LN_BUF_INIT;
	struct json_object *answer = NULL, *c;

	(void)st;
	snprintf(p, sizeof(p), "%s/mnt/ckpt", root);
	assert_int_equal(ln_mkdir_p(p, 0755, &err), 0);
	append_mount(root, "/dev/vdb /mnt/ckpt ext4 rw,relatime 0 0\n");
	refused_mounts_kept(root, apply, req, "already has /dev/vdb mounted");
	assert_int_equal(fx_agent(root, apply, req, &out, &err, "LLMNET_NS_WAIT=2"), 1);
	c = change_of(&out, "other.target", &answer);
	assert_string_equal(ln_json_str_at(c, "action"), "ok");
	assert_string_equal(ln_json_str_at(c, "detail"), "nvme0");
	assert_non_null(strstr(ln_json_str_at(c, "error"), "connected, left as it is"));
	json_object_put(answer);
	c = change_of(&out, "te1.target1", &answer);
	assert_string_equal(ln_json_str_at(c, "action"), "create");
	assert_non_null(strstr(ln_json_str_at(c, "error"), "not connected: a mount point"));
	json_object_put(answer);
	/* the control: the mount point freed, both converge */
	read_into(root, "/proc/mounts", &mounts);
	*strstr(mounts.buf, "/dev/vdb /mnt/ckpt") = '\0';
	assert_int_equal(fx_put(root, "/proc/mounts", mounts.buf), 0);
	assert_int_equal(fx_agent(root, apply, req, &out, &err, "LLMNET_NS_WAIT=2"), 0);
	c = change_of(&out, "other.target", &answer);
	assert_string_equal(ln_json_str_at(c, "action"), "ok");
	assert_null(ln_json_str_at(c, "error"));
	json_object_put(answer);
	free(req);
	ln_test_release(&out, &err, &mounts);
	fx_remove(root);
}

/* Teardown unmounts only the device llmnet mounted: a mount made over
 * its own at the same point is left alone, named in the error. */
static void test_agent_initiator__teardown_leaves_a_mount_over_its_own(void **st)
{
	const char *apply[] = { "apply", NULL }, *td[] = { "teardown", NULL };
	char *root = fx_build("node-initiator");
	struct ln_buf out = LN_BUF_INIT, state = LN_BUF_INIT;

	(void)st;
	assert_int_equal(fx_run_ini(root, apply, mount_req("/mnt/x"), &out), 0);
	read_into(root, "/var/lib/llmnet/state.json", &state);
	assert_non_null(strstr(state.buf, "\"device\": \"259:1\""));
	append_mount(root, "/dev/vdb /mnt/x ext4 rw,relatime 0 0\n");
	refused_mounts_kept(root, td, NULL,
			    "'/mnt/x' has /dev/vdb mounted, not the device llmnet mounted there "
			    "(259:1)");
	ln_test_release(&out, &state);
	fx_remove(root);
}

/* mount.exec: true drops noexec (never nosuid,nodev); a non-boolean exec
 * is refused and nothing is mounted. */
static void test_agent_initiator__mount_exec_option(void **st)
{
	const char *apply[] = { "apply", NULL };
	const char *head = "{\"protocol\":1,\"cluster\":\"c\",\"initiators\":[{\"target\":"
			   "\"nqn.2024-04.x:t\",\"transport\":\"tcp\",\"address\":\"10.77.0.11\","
			   "\"service\":4420,\"mount\":{\"path\":\"/mnt/x\",\"fs\":\"ext4\","
			   "\"format\":\"if-blank\",\"exec\":";
	char *root = fx_build("node-initiator"), req[512];
	struct ln_buf out = LN_BUF_INIT, m = LN_BUF_INIT;

	(void)st;
	snprintf(req, sizeof(req), "%s\"yes\"}}]}", head);
	assert_int_not_equal(fx_run_ini(root, apply, req, &out), 0);
	assert_non_null(strstr(out.buf, "field 'exec' must be boolean"));
	read_into(root, "/proc/mounts", &m);
	assert_null(strstr(m.buf, "/mnt/x"));
	snprintf(req, sizeof(req), "%strue}}]}", head);
	assert_int_equal(fx_run_ini(root, apply, req, &out), 0);
	read_into(root, "/proc/mounts", &m);
	assert_non_null(strstr(m.buf, "/dev/nvme1n1 /mnt/x ext4 rw,nosuid,nodev,relatime 0 0"));
	ln_test_release(&out, &m);
	fx_remove(root);
}

/* A mount point that is a link is refused, never followed to its target
 * (ln_list_dir and the mount point check do not follow links), in plan
 * (which lists the mount point and creates nothing) and in apply. */
static void test_agent_initiator__mount_point_link_refused(void **st)
{
	const char *apply[] = { "apply", NULL }, *plan[] = { "plan", NULL };
	const char *want = "'/mnt/link' is a symbolic link; llmnet does not follow links";
	char *root = fx_build("node-initiator"), p[4096];
	struct ln_buf err = LN_BUF_INIT;

	(void)st;
	snprintf(p, sizeof(p), "%s/srv/empty", root);
	assert_int_equal(ln_mkdir_p(p, 0755, &err), 0);
	snprintf(p, sizeof(p), "%s/mnt/link", root);
	assert_int_equal(symlink("/srv/empty", p), 0);
	refused_mounts_kept(root, plan, mount_req("/mnt/link"), want);
	refused_mounts_kept(root, apply, mount_req("/mnt/link"), want);
	ln_buf_release(&err);
	fx_remove(root);
}

static void test_agent_initiator__run_bounded_and_allow_listed(void **st)
{
	const char *bad[] = { "run", "--timeout", "5", "--", "sh", "-c", "id", NULL };
	const char *path[] = { "run", "--timeout", "5", "--", "/usr/bin/rping", NULL };
	const char *meta[] = { "run", "--timeout", "5", "--", "rping", "-a", "1.2.3.4;reboot", NULL };
	const char *mpi[] = { "run", "--timeout", "5", "--", "mpirun", "-np", "2", "sh", NULL };
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;

	(void)st;
	assert_int_equal(fx_agent(NULL, bad, NULL, &out, &err, NULL), 2);
	assert_non_null(strstr(out.buf, "not on the allow-list"));
	assert_int_equal(fx_agent(NULL, path, NULL, &out, &err, NULL), 2);
	assert_int_equal(fx_agent(NULL, meta, NULL, &out, &err, NULL), 2);
	assert_non_null(strstr(out.buf, "argument 2 of 'rping' is not allowed"));
	assert_int_equal(fx_agent(NULL, mpi, NULL, &out, &err, NULL), 2);
	assert_non_null(strstr(out.buf, "mpirun may only start llmnet's probes"));
	ln_test_release(&out, &err);
}

/* verb over req, which must exit 0: its output, in out (reset first). */
static const char *ran(const char *root, const char *verb, const char *req, struct ln_buf *out)
{
	const char *args[] = { verb, NULL };

	ln_buf_reset(out);
	assert_int_equal(fx_run_ini(root, args, req, out), 0);
	return out->buf;
}

/* ROOT/rel with its first old replaced by new (old must be there). */
static void edit_file(const char *root, const char *rel, const char *old, const char *new)
{
	struct ln_buf v = LN_BUF_INIT, n = LN_BUF_INIT, e = LN_BUF_INIT;
	char p[4096], *at;

	read_into(root, rel, &v);
	at = strstr(v.buf, old);
	if (!at)
		fail_msg("'%s' not in %s:\n%s", old, rel, v.buf);
	ln_buf_add(&n, v.buf, (size_t)(at - v.buf));
	ln_buf_addf(&n, "%s%s", new, at + strlen(old));
	snprintf(p, sizeof(p), "%s%s", root, rel);
	assert_int_equal(ln_file_write_atomic(p, n.buf, n.len, 0644, &e), 0);
	ln_test_release(&v, &n, &e);
}

/* Live options that differ from the request's (an admin's remount, a mount
 * an older agent made): plan shows a mount_options change, old -> new, and
 * writes nothing; apply remounts in place (never an unmount: the mount
 * line stays where it is); the next apply has nothing to do. Read from
 * /proc/mounts on a fixture root, and from mountinfo's per-mount and
 * super options where it lists the mount; a read-only flag is kept. */
static void test_agent_initiator__mount_options_remounted(void **st)
{
	const char *req = mount_req("/mnt/x");
	char *root = fx_build("node-initiator"), p[4096];
	struct ln_buf out = LN_BUF_INIT, m = LN_BUF_INIT, e = LN_BUF_INIT;

	(void)st;
	assert_non_null(strstr(ran(root, "apply", req, &out),
			       "/dev/nvme1n1 ext4 (formatted: was blank), nosuid,nodev,noexec"));
	edit_file(root, "/proc/mounts", "/mnt/x ext4 rw,nosuid,nodev,noexec,", "/mnt/x ext4 rw,nodev,");
	assert_non_null(strstr(ran(root, "plan", req, &out), "\"kind\": \"mount_options\""));
	assert_non_null(strstr(out.buf, "suid,nodev,exec -> nosuid,nodev,noexec"));
	read_into(root, "/proc/mounts", &m);
	assert_non_null(strstr(m.buf, "/mnt/x ext4 rw,nodev,relatime 0 0"));
	ran(root, "apply", req, &out);
	assert_null(strstr(out.buf, "\"action\": \"remove\""));
	read_into(root, "/proc/mounts", &m);
	assert_non_null(strstr(m.buf, "/dev/nvme1n1 /mnt/x ext4 rw,nosuid,nodev,noexec,relatime 0 0"));
	/* control: converged, the options said on the ok line */
	assert_non_null(strstr(ran(root, "apply", req, &out), "\"change\": 0"));
	assert_non_null(strstr(out.buf, "\"detail\": \"nosuid,nodev,noexec\""));
	/* mountinfo: exec per mount, read-only super block */
	snprintf(p, sizeof(p), "%s/proc/self", root);
	assert_int_equal(ln_mkdir_p(p, 0755, &e), 0);
	assert_int_equal(fx_put(root, "/proc/self/mountinfo",
				"36 25 259:1 / /mnt/x rw,nosuid,nodev,relatime shared:1 - ext4 "
				"/dev/nvme1n1 ro\n"), 0);
	assert_non_null(strstr(ran(root, "plan", req, &out),
			       "ro,nosuid,nodev,exec -> ro,nosuid,nodev,noexec"));
	ran(root, "apply", req, &out);
	read_into(root, "/proc/self/mountinfo", &m);
	assert_non_null(strstr(m.buf, " /mnt/x ro,nosuid,nodev,noexec,relatime shared:1 - ext4"));
	assert_non_null(strstr(ran(root, "apply", req, &out), "\"change\": 0"));
	ln_test_release(&out, &m, &e);
	fx_remove(root);
}

/* Queue settings on a live connection: ctrl_loss_tmo and reconnect_delay
 * are written to the controller (plan shows them, writes nothing); a new
 * nr_io_queues or queue_size, which only a new connection takes, is shown
 * by plan and failed by apply with how to get it, the connection kept. */
static void test_agent_initiator__queue_settings_on_a_live_connection(void **st)
{
	const char *apply[] = { "apply", NULL };
	char *root = fx_build("node-initiator");
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT, err = LN_BUF_INIT;

	(void)st;
	ran(root, "apply", q_init(2, 64, 600, 10), &out);
	assert_string_equal(fx_read(root, CTRL "ctrl_loss_tmo", &v), "600\n");
	/* converged */
	assert_non_null(strstr(ran(root, "apply", q_init(2, 64, 600, 10), &out), "\"change\": 0"));
	/* live ones: plan shows, apply writes */
	assert_non_null(strstr(ran(root, "plan", q_init(2, 64, 1800, 5), &out),
			       "ctrl_loss_tmo 600 -> 1800, reconnect_delay 10 -> 5"));
	assert_string_equal(fx_read(root, CTRL "ctrl_loss_tmo", &v), "600\n");
	ran(root, "apply", q_init(2, 64, 1800, 5), &out);
	assert_string_equal(fx_read(root, CTRL "ctrl_loss_tmo", &v), "1800\n");
	assert_string_equal(fx_read(root, CTRL "reconnect_delay", &v), "5\n");
	assert_non_null(strstr(ran(root, "apply", q_init(2, 64, 1800, 5), &out), "\"change\": 0"));
	/* queues: plan shows, apply fails it and keeps the connection */
	assert_non_null(strstr(ran(root, "plan", q_init(8, 64, 1800, 5), &out),
			       "nr_io_queues 2 -> 8: only a new connection takes it"));
	ln_buf_reset(&out);
	assert_int_equal(fx_agent(root, apply, q_init(8, 64, 1800, 5), &out, &err,
				  "LLMNET_NS_WAIT=2"), 1);
	assert_non_null(strstr(out.buf, "needs a new connection: disconnect it (llmnet teardown) "
					"and apply again"));
	fx_read(root, CTRL "state", &v);
	assert_string_equal(v.buf, "live\n");
	ln_test_release(&out, &v, &err);
	fx_remove(root);
}

#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:1f0f7b8a-0000-4000-8000-000000000002"
#define HOSTID "1f0f7b8a-0000-4000-8000-000000000002"

static int skip_state(const char *rel)
{
	return !strncmp(rel, "/var/lib/llmnet", 15) || !strcmp(rel, "/run/llmnet.lock");
}

/* A node whose host identity files hold nqn and id: plan and apply are
 * refused with want (the path and what is wrong), the secret after the
 * bad byte never shown; the files, the controllers and /dev/nvme-fabrics
 * as they were: nothing connected. */
static void identity_refused(const char *nqn, const char *id, const char *want)
{
	const char *verbs[] = { "plan", "apply" };
	char *root = fx_build("node-initiator"), p[4096];
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, before = LN_BUF_INIT,
		      after = LN_BUF_INIT;
	int i;

	snprintf(p, sizeof(p), "%s/etc/nvme", root);
	assert_int_equal(mkdir(p, 0755), 0);
	if (nqn) {
		assert_int_equal(fx_put(root, "/etc/nvme/hostnqn", nqn), 0);
	} else {	/* one that cannot be read is not absent */
		snprintf(p, sizeof(p), "%s/etc/nvme/hostnqn", root);
		assert_int_equal(mkdir(p, 0755), 0);
	}
	assert_int_equal(fx_put(root, "/etc/nvme/hostid", id), 0);
	fx_list(root, &before, skip_state);
	for (i = 0; i < 2; i++) {
		const char *args[] = { verbs[i], NULL };

		ln_buf_reset(&out);
		ln_buf_reset(&err);
		assert_int_equal(fx_agent(root, args, init_req(""), &out, &err, NULL), 1);
		if (!strstr(out.buf, want))
			fail_msg("%s: want '%s' in\n%s", verbs[i], want, out.buf);
		assert_null(strstr(out.buf, "DHHC-1"));
		assert_null(strstr(err.buf, "DHHC-1"));
		assert_null(strstr(out.buf, "QUFB"));
		assert_null(strstr(err.buf, "QUFB"));
		assert_null(strstr(out.buf, "it begins"));
		assert_null(strstr(out.buf, "\"kind\": \"nvme_connection\""));
	}
	fx_list(root, &after, skip_state);
	assert_string_equal(before.buf, after.buf);
	snprintf(p, sizeof(p), "%s" CTRL, root);
	assert_int_equal(access(p, F_OK), -1);
	ln_test_release(&out, &err, &before, &after);
	fx_remove(root);
}

/* The host identity files are the node's: one that would add options to
 * the connect's option string (",dhchap_secret=...", a newline), or a host
 * ID that is not a UUID, is refused, never rewritten; a valid pair is
 * used as it is. */
static void test_agent_initiator__host_identity_checked(void **st)
{
	const char *apply[] = { "apply", NULL };
	char *root = fx_build("node-initiator"), p[4096];
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;

	(void)st;
	identity_refused(HOSTNQN ",dhchap_secret=" K1 "\n", HOSTID "\n",
			 "/etc/nvme/hostnqn is not a valid host NQN: ',' at offset 68; llmnet "
			 "never rewrites");
	identity_refused(HOSTNQN "\ntransport=rdma\n", HOSTID "\n",
			 "/etc/nvme/hostnqn is not a valid host NQN: byte 0x0a at offset 68;");
	identity_refused("nqn.x\n", HOSTID "\n",
			 "/etc/nvme/hostnqn is not a valid host NQN: an NQN is 'nqn.' and 8 to "
			 "218 more bytes;");
	/* 223 bytes: configfs takes it, the kernel's option parser does not */
	identity_refused("nqn.2014-08.org.example:"
			 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
			 HOSTID "\n", "/etc/nvme/hostnqn is not a valid host NQN: an NQN is 'nqn.' and 8 "
			 "to 218 more bytes;");
	identity_refused(NULL, HOSTID "\n",
			 "/etc/nvme/hostnqn cannot be read: Is a directory; llmnet never rewrites");
	/* a pasted key: nothing of the file is quoted, not its start either */
	identity_refused(K1 "\n", HOSTID "\n",
			 "/etc/nvme/hostnqn is not a valid host NQN: an NQN is 'nqn.' and 8 to "
			 "218 more bytes;");
	identity_refused("nqn.2014-08.org.example:QUFBQUFBQUFBQUFBQUFBQUFB'x\n", HOSTID "\n",
			 "/etc/nvme/hostnqn is not a valid host NQN: byte 0x27 at offset 48;");
	identity_refused(HOSTNQN "\n", HOSTID ",tls_key=0x1\n",
			 "/etc/nvme/hostid is not a host ID (a UUID: 8-4-4-4-12 hex digits): "
			 "',' at offset 36;");
	identity_refused(HOSTNQN "\n", "1f0f7b8a00004000800000000000000200\n",
			 "/etc/nvme/hostid is not a host ID (a UUID: 8-4-4-4-12 hex digits): not "
			 "8-4-4-4-12 hex digits;");
	/* a valid pair: used as it is, nothing rewritten */
	snprintf(p, sizeof(p), "%s/etc/nvme", root);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(fx_put(root, "/etc/nvme/hostnqn", HOSTNQN "\n"), 0);
	assert_int_equal(fx_put(root, "/etc/nvme/hostid", "1F0F7B8A-0000-4000-8000-00000000000A\n"), 0);
	assert_int_equal(fx_run_ini(root, apply, init_req(""), &out), 0);
	assert_string_equal(fx_read(root, CTRL "hostnqn", &v), HOSTNQN "\n");
	assert_string_equal(fx_read(root, "/etc/nvme/hostid", &v),
			    "1F0F7B8A-0000-4000-8000-00000000000A\n");
	fx_remove(root);
	/* files holding only white space are none, as empty ones: apply makes them */
	root = fx_build("node-initiator");
	snprintf(p, sizeof(p), "%s/etc/nvme", root);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(fx_put(root, "/etc/nvme/hostnqn", " \n"), 0);
	assert_int_equal(fx_put(root, "/etc/nvme/hostid", " \t\n"), 0);
	assert_int_equal(fx_run_ini(root, apply, init_req(""), &out), 0);
	assert_int_equal(strncmp(fx_read(root, "/etc/nvme/hostnqn", &v), "nqn.", 4), 0);
	assert_int_equal(strlen(fx_read(root, "/etc/nvme/hostid", &v)), 37);
	ln_test_release(&out, &v);
	fx_remove(root);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_initiator__connect_mount_hostfile_teardown),
	cmocka_unit_test(test_agent_initiator__dhchap_connect_and_rekey),
	cmocka_unit_test(test_agent_initiator__queue_settings_on_a_live_connection),
	cmocka_unit_test(test_agent_initiator__purge_leaves_no_host_identity_record),
	cmocka_unit_test(test_agent_initiator__format_never_refuses_blank),
	cmocka_unit_test(test_agent_initiator__mount_point_not_empty),
	cmocka_unit_test(test_agent_initiator__foreign_mount_at_mount_point_refused),
	cmocka_unit_test(test_agent_initiator__refused_mount_keeps_connected_labels),
	cmocka_unit_test(test_agent_initiator__teardown_leaves_a_mount_over_its_own),
	cmocka_unit_test(test_agent_initiator__mount_point_link_refused),
	cmocka_unit_test(test_agent_initiator__mount_exec_option),
	cmocka_unit_test(test_agent_initiator__mount_options_remounted),
	cmocka_unit_test(test_agent_initiator__run_bounded_and_allow_listed),
	cmocka_unit_test(test_agent_initiator__host_identity_checked),
)
