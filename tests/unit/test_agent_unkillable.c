/* SPDX-License-Identifier: MIT */
/*
 * Unit test for agents/agent/run/bounded.c: a child that SIGKILL cannot
 * end (uninterruptible sleep in a hung GPU driver) must not hold the
 * agent. No test can make a process unkillable, so waitpid is wrapped
 * (-Wl,--wrap=waitpid): while `hide` is set it answers "still running"
 * for every child, as the kernel does for a process in D state. The
 * control: the same run with nothing hidden reports its exit status.
 */
#include <errno.h>
#include <sys/wait.h>
#include <time.h>

#include "tests/unit/cmocka.h"

#include "agents/agent/run/bounded.h"
#include "common/buf.h"

pid_t __real_waitpid(pid_t pid, int *status, int options);
pid_t __wrap_waitpid(pid_t pid, int *status, int options);

static int hide;

pid_t __wrap_waitpid(pid_t pid, int *status, int options)
{
	if (hide)
		return (options & WNOHANG) ? 0 : (errno = EINTR, -1);
	return __real_waitpid(pid, status, options);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void test_agent_unkillable__left_behind_not_waited_for(void **state)
{
	const char *const argv[] = { "/bin/sleep", "60", NULL };
	struct ln_exec_result res;
	struct ln_buf err = LN_BUF_INIT;
	double t0 = now_s();

	(void)state;
	hide = 1;
	assert_int_equal(ln_exec_bounded(argv, 1, 1024, &res, &err), 0);
	hide = 0;
	/* 1 s bound, 1 s to SIGKILL, 2 s grace, 2 s of leftover rounds */
	assert_true(now_s() - t0 < 15);
	assert_int_equal(res.timed_out, 1);
	assert_int_equal(res.exited, 0);
	ln_exec_result_release(&res);
	/* the killed child, hidden so far, is reaped now */
	while (__real_waitpid(-1, NULL, WNOHANG) > 0)
		;
	ln_buf_release(&err);
}

static void test_agent_unkillable__control_exit_status(void **state)
{
	const char *const argv[] = { "/bin/sh", "-c", "exit 3", NULL };
	struct ln_exec_result res;
	struct ln_buf err = LN_BUF_INIT;

	(void)state;
	assert_int_equal(ln_exec_bounded(argv, 5, 1024, &res, &err), 0);
	assert_int_equal(res.timed_out, 0);
	assert_int_equal(res.exited, 1);
	assert_int_equal(res.exit_status, 3);
	ln_exec_result_release(&res);
	ln_buf_release(&err);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_unkillable__control_exit_status),
	cmocka_unit_test(test_agent_unkillable__left_behind_not_waited_for),
)
