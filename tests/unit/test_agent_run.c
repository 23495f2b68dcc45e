// SPDX-License-Identifier: MIT
/*
 * The bounded runner and the node lock: a child that outlives its bound is
 * killed with its whole process group and reported as timed out; what it
 * leaves in a group of its own is killed after it (the agent is their
 * subreaper); output is
 * capped and the rest drained; a second mutating run waits for the lock
 * only as long as LLMNET_LOCK_WAIT says, then refuses with nothing changed;
 * plan writes nothing.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <errno.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <time.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/run/bounded.h"
#include "common/util.h"

static void test_agent_run__timeout_kills_the_group(void **st)
{
	/* the grandchild holds the pipe: only a group kill ends it */
	const char *argv[] = { "/bin/sh", "-c", "echo started; sleep 60 & sleep 60", NULL };
	struct ln_exec_result res;
	struct ln_buf err = LN_BUF_INIT;
	long t0 = ln_now_ms();

	(void)st;
	assert_int_equal(ln_exec_bounded(argv, 1, 1024, &res, &err), 0);
	assert_true(res.timed_out);
	assert_false(res.exited);
	assert_int_equal(res.signal, SIGTERM);
	assert_string_equal(res.output.buf, "started\n");
	assert_true(ln_now_ms() - t0 < 5000);
	ln_exec_result_release(&res);
	ln_buf_release(&err);
}

/* A launcher that starts its worker in a session of its own (as mpirun
 * puts ranks in their own groups) and exits: the worker outlives the group
 * kill, comes back to the agent (the subreaper) and is killed. */
static void test_agent_run__leftovers_are_killed(void **st)
{
	const char *argv[] = { "/bin/sh", "-c", "setsid sleep 300 >/dev/null 2>&1 & echo $!", NULL };
	struct ln_exec_result res;
	struct ln_buf err = LN_BUF_INIT;
	pid_t worker;

	(void)st;
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	assert_int_equal(ln_exec_bounded(argv, 10, 1024, &res, &err), 0);
	assert_true(res.exited);
	assert_int_equal(res.exit_status, 0);
	worker = (pid_t)atol(res.output.buf);
	assert_true(worker > 1);
	assert_int_equal(res.leftovers, 1);
	assert_int_equal(kill(worker, 0), -1);
	assert_int_equal(errno, ESRCH);
	ln_exec_result_release(&res);
	ln_buf_release(&err);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}

static void test_agent_run__exit_status_and_output_cap(void **st)
{
	const char *argv[] = { "/bin/sh", "-c", "head -c 100000 /dev/zero | tr '\\\\0' x; exit 3",
			       NULL };
	struct ln_exec_result res;
	struct ln_buf err = LN_BUF_INIT;

	(void)st;
	assert_int_equal(ln_exec_bounded(argv, 10, 1000, &res, &err), 0);
	assert_false(res.timed_out);
	assert_true(res.exited);
	assert_int_equal(res.exit_status, 3);
	assert_int_equal(res.output.len, 1000);
	assert_int_equal(res.output_bytes, 100000);
	assert_true(res.truncated);
	ln_exec_result_release(&res);
	ln_buf_release(&err);
}

static void test_agent_run__lock_wait_is_bounded(void **st)
{
	const char *args[] = { "teardown", NULL };
	char *root = fx_build("node-target"), p[4096];
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	long t0;
	int fd;

	(void)st;
	snprintf(p, sizeof(p), "%s/run/llmnet.lock", root);
	fd = open(p, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	t0 = ln_now_ms();
	assert_int_equal(fx_agent(root, args, NULL, &out, &err, "LLMNET_LOCK_WAIT=1"), 3);
	assert_true(ln_now_ms() - t0 >= 900);
	assert_non_null(strstr(out.buf, "\"locked\""));
	close(fd);
	assert_int_equal(fx_agent(root, args, NULL, &out, &err, "LLMNET_LOCK_WAIT=1"), 0);
	ln_test_release(&out, &err);
	fx_remove(root);
}

static void test_agent_run__plan_writes_nothing(void **st)
{
	const char *args[] = { "plan", NULL };
	char *root = fx_build("node-target"), *req;
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, before = LN_BUF_INIT;
	struct ln_buf after = LN_BUF_INIT, e = LN_BUF_INIT, r = LN_BUF_INIT;

	(void)st;
	assert_int_equal(ln_file_read(FIXTURES_DIR "/agent/request-target.json", &r, &e), 0);
	req = r.buf;
	fx_list_mtimes(root, &before);
	assert_int_equal(fx_agent(root, args, req, &out, &err, NULL), 0);
	fx_list_mtimes(root, &after);
	assert_string_equal(before.buf, after.buf);
	assert_non_null(strstr(out.buf, "\"mode\": \"plan\""));
	assert_non_null(strstr(out.buf, "\"converged\": false"));
	assert_non_null(strstr(out.buf, "nqn.2024-04.com.example:te1.target3"));
	ln_test_release(&out, &err, &before, &after, &e, &r);
	fx_remove(root);
}

static void test_agent_run__corrupt_state_changes_nothing(void **st)
{
	const char *args[] = { "apply", NULL };
	char *root = fx_build("node-target"), p[4096];
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, e = LN_BUF_INIT;
	struct ln_buf before = LN_BUF_INIT, after = LN_BUF_INIT;

	(void)st;
	snprintf(p, sizeof(p), "%s/var/lib/llmnet", root);
	assert_int_equal(ln_mkdir_p(p, 0700, &e), 0);
	strcat(p, "/state.json");
	assert_int_equal(ln_file_write_atomic(p, "{\"version\": 7}", 14, 0600, &e), 0);
	assert_int_equal(fx_agent(root, (const char *[]){ "teardown", NULL }, NULL, &out, &err,
				  NULL), 70);
	fx_list_mtimes(root, &before);
	assert_int_equal(fx_agent(root, args, "{\"protocol\":1,\"cluster\":\"c\"}", &out, &err,
				  NULL), 70);
	assert_non_null(strstr(out.buf, "is not llmnet state version 1"));
	fx_list_mtimes(root, &after);
	assert_string_equal(before.buf, after.buf);
	ln_test_release(&out, &err, &e, &before, &after);
	fx_remove(root);
}

#define IO_PROBE "/var/lib/llmnet/bin/llmnet-probe-io"

/* run [--cluster CLUSTER] -- IO_PROBE ARGS (space-separated) on root: the
 * agent's exit code; the answer in out. */
static int io_run_as(const char *root, const char *cluster, const char *args,
		     struct ln_buf *out)
{
	struct ln_buf err = LN_BUF_INIT;
	const char *argv[18] = { "run", "--timeout", "10" };
	char buf[512], *t, *save = NULL;
	int n = 3, rc;

	if (cluster) {
		argv[n++] = "--cluster";
		argv[n++] = cluster;
	}
	argv[n++] = "--";
	argv[n++] = IO_PROBE;

	snprintf(buf, sizeof(buf), "%s", args);
	for (t = strtok_r(buf, " ", &save); t && n < 17; t = strtok_r(NULL, " ", &save))
		argv[n++] = t;
	argv[n] = NULL;
	ln_buf_reset(out);
	rc = fx_agent(root, argv, NULL, out, &err, NULL);
	ln_buf_release(&err);
	return rc;
}

static int io_run(const char *root, const char *args, struct ln_buf *out)
{
	return io_run_as(root, NULL, args, out);
}

/* An initiator tree where cluster c connected nqn.2024-04.x:t and mounted
 * it at /mnt/x, with the io probe installed: the io probe tests' root. */
static char *io_root(void)
{
	const char *apply[] = { "apply", NULL };
	const char *req = "{\"protocol\":1,\"cluster\":\"c\",\"initiators\":[{\"target\":"
			  "\"nqn.2024-04.x:t\",\"transport\":\"tcp\",\"address\":\"10.77.0.11\","
			  "\"service\":4420,\"mount\":{\"path\":\"/mnt/x\",\"fs\":\"ext4\","
			  "\"format\":\"if-blank\"}}]}";
	char *root = fx_build("node-initiator"), cmd[8192];
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;

	assert_int_equal(fx_agent(root, apply, req, &out, &err, "LLMNET_NS_WAIT=2"), 0);
	snprintf(cmd, sizeof(cmd), "install -D -m 0755 %s/probes/io_probe %s" IO_PROBE, BUILD_DIR,
		 root);
	assert_int_equal(system(cmd), 0);
	ln_test_release(&out, &err);
	return root;
}

/* The io probe writes only to a namespace a cluster on the node connected
 * (issue 31, point 6): its --mount must be a mount llmnet made of one, its
 * --device with --write a whole namespace of a connected subsystem; /boot,
 * /var, the root disk and another subsystem's namespace are refused before
 * the probe starts, the tree unchanged. The controls: the cluster's own
 * mount and namespace pass the agent's check and the probe runs. */
static void test_agent_run__io_probe_writes_only_connected_namespaces(void **st)
{
	static const char *const refused[][2] = {
		{ "--mount /boot --size 1048576", "no cluster on this node mounted '/boot'" },
		{ "--mount /var --size 1048576", "no cluster on this node mounted '/var'" },
		{ "--mount /var/lib/llmnet --size 1048576",
		  "no cluster on this node mounted '/var/lib/llmnet'" },
		{ "--device /dev/vda --nqn nqn.2024-04.x:t --write --size 1048576",
		  "writes only to a namespace a cluster connected" },
		{ "--device /dev/nvme0n1 --nqn nqn.2014-08.org.example:other.target --write "
		  "--size 1048576", "which no cluster on this node connected" },
		{ "--device /dev/nvme1n1 --nqn nqn.2014-08.org.example:other.target --write "
		  "--size 1048576", "is a namespace of 'nqn.2024-04.x:t', not of" },
	};
	char *root = io_root();
	struct ln_buf out = LN_BUF_INIT, before = LN_BUF_INIT, after = LN_BUF_INIT;
	size_t i;

	(void)st;
	fx_list_mtimes(root, &before);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(io_run(root, refused[i][0], &out), 2);
		if (!strstr(out.buf, refused[i][1]))
			fail_msg("%s: want '%s', got:\n%s", refused[i][0], refused[i][1], out.buf);
		assert_null(strstr(out.buf, "llmnet-io-probe 1"));
	}
	fx_list_mtimes(root, &after);
	assert_string_equal(before.buf, after.buf);
	/* controls: the probe runs (it then checks the real node, where
	 * neither /mnt/x is mounted nor the namespace is: it writes nothing) */
	assert_int_equal(io_run(root, "--mount /mnt/x --size 1048576", &out), 0);
	assert_non_null(strstr(out.buf, "llmnet-io-probe 1"));
	assert_int_equal(io_run(root, "--device /dev/nvme1n1 --nqn nqn.2024-04.x:t --write "
				"--size 1048576", &out), 0);
	assert_non_null(strstr(out.buf, "llmnet-io-probe 1"));
	/* a read of any device is the probe's own check */
	assert_int_equal(io_run(root, "--device /dev/vda --size 1048576", &out), 0);
	assert_non_null(strstr(out.buf, "llmnet-io-probe 1"));
	ln_test_release(&out, &before, &after);
	fx_remove(root);
}

/* With `run --cluster NAME` (validate always names its cluster) the io
 * probe writes only to that cluster's own mount and connection (issue 31,
 * leftover 5): cluster c's /mnt/x and namespace are refused to cluster
 * "other", naming the object and its owner, the tree unchanged; a cluster
 * name that is not one is a usage error. The controls: cluster c's own
 * request runs the probe on both. */
static void test_agent_run__io_probe_refuses_another_clusters_objects(void **st)
{
	char *root = io_root();
	struct ln_buf out = LN_BUF_INIT, before = LN_BUF_INIT, after = LN_BUF_INIT;

	(void)st;
	fx_list_mtimes(root, &before);
	assert_int_equal(io_run_as(root, "other", "--mount /mnt/x --size 1048576", &out), 2);
	assert_non_null(strstr(out.buf, "the io probe writes only to what the requesting cluster "
				   "connected: the mount '/mnt/x' belongs to cluster 'c', not to "
				   "cluster 'other'"));
	assert_int_equal(io_run_as(root, "other", "--device /dev/nvme1n1 --nqn nqn.2024-04.x:t "
				   "--write --size 1048576", &out), 2);
	assert_non_null(strstr(out.buf, "'/dev/nvme1n1' (a namespace of the connection to "
				   "'nqn.2024-04.x:t') belongs to cluster 'c', not to cluster "
				   "'other'"));
	assert_null(strstr(out.buf, "llmnet-io-probe 1"));
	assert_int_equal(io_run_as(root, "../c", "--mount /mnt/x --size 1048576", &out), 64);
	assert_non_null(strstr(out.buf, "--cluster must match"));
	fx_list_mtimes(root, &after);
	assert_string_equal(before.buf, after.buf);
	/* controls: the owner's own request */
	assert_int_equal(io_run_as(root, "c", "--mount /mnt/x --size 1048576", &out), 0);
	assert_non_null(strstr(out.buf, "llmnet-io-probe 1"));
	assert_int_equal(io_run_as(root, "c", "--device /dev/nvme1n1 --nqn nqn.2024-04.x:t "
				   "--write --size 1048576", &out), 0);
	assert_non_null(strstr(out.buf, "llmnet-io-probe 1"));
	ln_test_release(&out, &before, &after);
	fx_remove(root);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_run__timeout_kills_the_group),
	cmocka_unit_test(test_agent_run__leftovers_are_killed),
	cmocka_unit_test(test_agent_run__exit_status_and_output_cap),
	cmocka_unit_test(test_agent_run__lock_wait_is_bounded),
	cmocka_unit_test(test_agent_run__plan_writes_nothing),
	cmocka_unit_test(test_agent_run__corrupt_state_changes_nothing),
	cmocka_unit_test(test_agent_run__io_probe_writes_only_connected_namespaces),
	cmocka_unit_test(test_agent_run__io_probe_refuses_another_clusters_objects),
)
