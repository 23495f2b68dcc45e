// SPDX-License-Identifier: MIT
/*
 * The request's time budget (issue 12, point 6): apply, teardown and run
 * are refused without one; the node lock is waited for only while it
 * lasts; once it ran out no change is made (the tree equals the one the
 * failpoint leaves before the same change); a caller that goes away
 * (closed stdout, SIGTERM) ends the wait; a child is killed with its group
 * when the budget ends. The fake clock (LLMNET_CLOCK_STEP_MS) ends the
 * budget at a chosen change without racing the real clock.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <poll.h>
#include <signal.h>
#include <sys/file.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/budget.h"
#include "agents/agent/run/bounded.h"
#include "common/util.h"

#define STATE "/var/lib/llmnet/state.json"

/* The tree's listing (types, links, contents) and every mtime. */
static void snapshot(const char *root, struct ln_buf *out)
{
	struct ln_buf m = LN_BUF_INIT;

	fx_list(root, out, NULL);
	fx_list_mtimes(root, &m);
	ln_buf_addstr(out, m.buf);
	ln_buf_release(&m);
}

/* Hold root's node lock, as another agent run would; returns the fd. */
static int hold_lock(const char *root)
{
	char p[4096];
	int fd;

	snprintf(p, sizeof(p), "%s/run/llmnet.lock", root);
	fd = open(p, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	return fd;
}

static char *read_request(void)
{
	struct ln_buf r = LN_BUF_INIT, e = LN_BUF_INIT;

	assert_int_equal(ln_file_read(FIXTURES_DIR "/agent/request-target.json", &r, &e), 0);
	ln_buf_release(&e);
	return r.buf;
}

static void test_agent_budget__refused_without_one(void **st)
{
	static const char *const verbs[][6] = {
		{ "apply", NULL },
		{ "teardown", "--cluster", "te-lab", "--purge", NULL },
		{ "run", "--timeout", "5", "--", "mpirun", NULL },
	};
	char *root = fx_build("node-target"), *req = read_request();
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, before = LN_BUF_INIT;
	struct ln_buf after = LN_BUF_INIT, want = LN_BUF_INIT;
	size_t i;

	(void)st;
	snapshot(root, &before);
	for (i = 0; i < ARRAY_SIZE(verbs); i++) {
		assert_int_equal(fx_agent_nobudget(root, verbs[i], req, &out, &err, NULL),
				 LN_AGENT_EXIT_REQUEST);
		ln_buf_reset(&want);
		ln_buf_addf(&want, "\"%s: refusing a request without a time budget (--budget-ms MS)",
			    verbs[i][0]);
		assert_non_null(strstr(out.buf, want.buf));
	}
	snapshot(root, &after);
	assert_string_equal(before.buf, after.buf);
	/* a budget out of range is a usage error */
	assert_int_equal(fx_agent_nobudget(root, (const char *[]){ "--budget-ms", "0", "apply",
								   NULL }, req, &out, &err, NULL),
			 LN_AGENT_EXIT_USAGE);
	assert_int_equal(fx_agent_nobudget(root, (const char *[]){ "--budget-ms", "5s", "apply",
								   NULL }, req, &out, &err, NULL),
			 LN_AGENT_EXIT_USAGE);
	assert_non_null(strstr(out.buf, "--budget-ms must be 1-86400000 milliseconds"));
	/* read-only verbs need none */
	assert_int_equal(fx_agent_nobudget(root, (const char *[]){ "plan", NULL }, req, &out, &err,
					   NULL), 0);
	snapshot(root, &after);
	assert_string_equal(before.buf, after.buf);
	ln_test_release(&out, &err, &before, &after, &want);
	free(req);
	fx_remove(root);
}

static void test_agent_budget__lock_wait_ends_with_it(void **st)
{
	const char *args[] = { "--budget-ms", "600", "apply", NULL };
	char *root = fx_build("node-target"), *req = read_request();
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, before = LN_BUF_INIT;
	struct ln_buf after = LN_BUF_INIT;
	long long t0, took;
	int fd;

	(void)st;
	fd = hold_lock(root);
	snapshot(root, &before);
	t0 = ln_now_ms();
	/* LLMNET_LOCK_WAIT (30 s) is longer: the budget decides */
	assert_int_equal(fx_agent(root, args, req, &out, &err, NULL), LN_AGENT_EXIT_TIMEOUT);
	took = ln_now_ms() - t0;
	assert_true(took >= 550 && took < 3000);
	assert_non_null(strstr(out.buf, "\"code\": \"timeout\""));
	assert_non_null(strstr(out.buf, "time budget of 600 ms ran out while waiting for the "
					"node lock '/run/llmnet.lock'"));
	assert_non_null(strstr(out.buf, "nothing was changed"));
	snapshot(root, &after);
	assert_string_equal(before.buf, after.buf);
	close(fd);
	ln_test_release(&out, &err, &before, &after);
	free(req);
	fx_remove(root);
}

/* The state file less its "updated" stamps (seconds of the wall clock). */
static void state_without_stamps(const char *root, struct ln_buf *out)
{
	struct ln_buf e = LN_BUF_INIT;
	char p[4096], *u;

	snprintf(p, sizeof(p), "%s" STATE, root);
	ln_buf_reset(out);
	assert_int_equal(ln_file_read(p, out, &e), 0);
	for (u = strstr(out->buf, "\"updated\""); u; u = strstr(u + 1, "\"updated\""))
		memset(u, ' ', strcspn(u, ",}\n"));
	ln_buf_release(&e);
}

static int skip_state(const char *rel)
{
	return !strcmp(rel, STATE);
}

/*
 * The fake clock moves 1000 ms on with each change: a budget of 5500 ms
 * lets changes 1-6 through and refuses the 7th (on this fixture a configfs
 * attribute). The tree must be exactly the one a run stopped by the
 * failpoint before change 7 leaves, and the answer names the change that
 * was not made.
 */
static void test_agent_budget__nothing_committed_after_it(void **st)
{
	const char *args[] = { "--budget-ms", "5500", "apply", NULL };
	const char *plain[] = { "apply", NULL };
	char *a = fx_build("node-target"), *b = fx_build("node-target"), *req = read_request();
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, ta = LN_BUF_INIT, tb = LN_BUF_INIT;
	struct ln_buf sa = LN_BUF_INIT, sb = LN_BUF_INIT;

	(void)st;
	assert_int_equal(fx_agent(a, args, req, &out, &err, "LLMNET_CLOCK_STEP_MS=1000"),
			 LN_AGENT_EXIT_TIMEOUT);
	assert_non_null(strstr(out.buf, "\"code\": \"timeout\""));
	assert_non_null(strstr(out.buf, "time budget of 5500 ms ran out before "));
	assert_non_null(strstr(out.buf, "; nothing more was changed"));
	assert_int_equal(fx_agent(b, plain, req, &out, &err, "LLMNET_FAILPOINT=7"),
			 LN_AGENT_EXIT_FAILPOINT);
	fx_list(a, &ta, skip_state);
	fx_list(b, &tb, skip_state);
	assert_string_equal(ta.buf, tb.buf);
	state_without_stamps(a, &sa);
	state_without_stamps(b, &sb);
	assert_string_equal(sa.buf, sb.buf);
	/* the stop was the budget's alone: with time enough the run converges */
	assert_int_equal(fx_agent(a, plain, req, &out, &err, NULL), 0);
	assert_non_null(strstr(out.buf, "\"converged\": true"));
	ln_test_release(&out, &err, &ta, &tb, &sa, &sb);
	free(req);
	fx_remove(a);
	fx_remove(b);
}

/*
 * Start the agent on root with args, stdout into a pipe (its reader kept
 * in *rd) and stderr into errpath; the lock is held by the caller.
 */
static pid_t start_agent(const char *root, const char *const *args, int *rd, const char *errpath)
{
	const char *argv[16];
	int p[2], i = 0, n;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	argv[i++] = AGENT_BIN;
	argv[i++] = "--root";
	argv[i++] = root;
	for (n = 0; args[n] && i < 15; n++)
		argv[i++] = args[n];
	argv[i] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int in = open("/dev/null", O_RDONLY);

		dup2(in, 0);
		dup2(p[1], 1);
		dup2(e, 2);
		close(p[0]);
		execv(argv[0], (char *const *)argv);
		_exit(126);
	}
	close(p[1]);
	*rd = p[0];
	return pid;
}

/* Wait up to ms for pid; its exit status, or -1 (then it is killed). */
static int wait_exit(pid_t pid, long ms)
{
	long long end = ln_now_ms() + ms;
	int status;

	while (ln_now_ms() < end) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		poll(NULL, 0, 20);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/*
 * An agent waits for the held lock with a 60 s budget, and its caller goes
 * away: by_signal sends SIGTERM (ssh's signal request, or the sudo in
 * between), else stdout loses its reader (the controller closed the
 * channel). It must end at once with want on stderr, and once the holder
 * lets go the tree is still unchanged.
 */
static void cancelled_while_waiting(int by_signal, const char *want)
{
	const char *args[] = { "--budget-ms", "60000", "teardown", NULL };
	char *root = fx_build("node-target"), errpath[4200];
	struct ln_buf before = LN_BUF_INIT, after = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_buf e = LN_BUF_INIT;
	int fd, rd;
	pid_t pid;

	fd = hold_lock(root);
	snapshot(root, &before);
	snprintf(errpath, sizeof(errpath), "%s.err", root);
	pid = start_agent(root, args, &rd, errpath);
	poll(NULL, 0, 300);
	if (by_signal) {
		kill(pid, SIGTERM);
	} else {
		close(rd);
		rd = -1;
	}
	assert_int_equal(wait_exit(pid, 3000), LN_AGENT_EXIT_TIMEOUT);
	assert_int_equal(ln_file_read(errpath, &err, &e), 0);
	assert_non_null(strstr(err.buf, want));
	if (rd >= 0)
		close(rd);
	close(fd);
	poll(NULL, 0, 300);
	snapshot(root, &after);
	assert_string_equal(before.buf, after.buf);
	unlink(errpath);
	ln_test_release(&before, &after, &err, &e);
	fx_remove(root);
}

static void test_agent_budget__caller_gone_ends_the_wait(void **st)
{
	(void)st;
	cancelled_while_waiting(0, "the request was cancelled (its caller closed the channel) "
				   "while waiting for the node lock");
}

static void test_agent_budget__sigterm_ends_the_wait(void **st)
{
	(void)st;
	cancelled_while_waiting(1, "the request was cancelled (SIGTERM) while waiting for the "
				   "node lock");
}

/* A child (a probe, mkfs, modprobe) is killed with its whole group when
 * the budget ends, long before its own bound. In a child process: the
 * budget is process-wide. */
static void test_agent_budget__child_killed_when_it_ends(void **st)
{
	const char *argv[] = { "/bin/sh", "-c", "echo started; sleep 60 & sleep 60", NULL };
	int status;
	pid_t pid;

	(void)st;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ln_exec_result res;
		struct ln_buf err = LN_BUF_INIT;
		long long t0 = ln_now_ms(), took;

		ln_budget_start(500);
		if (ln_exec_bounded(argv, 60, 1024, &res, &err) < 0)
			_exit(1);
		took = ln_now_ms() - t0;
		if (!res.timed_out || res.signal != SIGTERM || strcmp(res.output.buf, "started\n"))
			_exit(2);
		_exit(took >= 450 && took < 5000 ? 0 : 3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_budget__refused_without_one),
	cmocka_unit_test(test_agent_budget__lock_wait_ends_with_it),
	cmocka_unit_test(test_agent_budget__nothing_committed_after_it),
	cmocka_unit_test(test_agent_budget__caller_gone_ends_the_wait),
	cmocka_unit_test(test_agent_budget__sigterm_ends_the_wait),
	cmocka_unit_test(test_agent_budget__child_killed_when_it_ends),
)
