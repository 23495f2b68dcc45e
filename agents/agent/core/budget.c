// SPDX-License-Identifier: MIT
/*
 * The request's time budget and the watch for a caller that went away
 * (budget.h). The signal handlers only set a flag: the waits poll it at
 * least every 100 ms and the next change stops on it, so a change that
 * has begun is finished (each is atomic) and none begins afterwards.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/agent/core/budget.h"
#include "common/util.h"

static long long start_ms, skew_ms;
static long budget_ms;
static int active, watch_stdout;
static volatile sig_atomic_t cancel_signal;
static int peer_gone;
static char why[128];

static void on_signal(int sig)
{
	if (!cancel_signal)
		cancel_signal = sig;
}

void ln_budget_start(long ms)
{
	static const int sigs[] = { SIGTERM, SIGHUP, SIGINT, SIGPIPE };
	struct sigaction sa;
	struct stat st;
	size_t i;

	start_ms = ln_now_ms();
	budget_ms = ms;
	active = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: a blocking call returns EINTR and its loop looks */
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
	/* ssh hands the agent pipes; a file (tests, a shell redirect) never goes away */
	watch_stdout = fstat(STDOUT_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

void ln_budget_request(long ms)
{
	start_ms = ln_now_ms();
	budget_ms = ms;
	skew_ms = 0;
	active = ms > 0;
	why[0] = '\0';
}

int ln_budget_active(void)
{
	return active;
}

long ln_budget_ms(void)
{
	return budget_ms;
}

void ln_budget_advance(long ms)
{
	skew_ms += ms;
}

/* 1 when stdout's reader has gone (Linux reports POLLERR on a pipe's
 * write end without readers, POLLHUP on a shut-down socket). */
static int stdout_gone(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = 0 };

	if (!watch_stdout)
		return 0;
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP | POLLNVAL));
}

int ln_budget_cancelled(void)
{
	return cancel_signal || peer_gone || stdout_gone();
}

long ln_budget_left_ms(void)
{
	long long left;

	if (!active)
		return LN_BUDGET_MAX_MS;
	if (cancel_signal) {
		snprintf(why, sizeof(why), "the request was cancelled (SIG%s)",
			 sigabbrev_np(cancel_signal));
		return 0;
	}
	if (peer_gone || stdout_gone()) {
		peer_gone = 1;
		snprintf(why, sizeof(why), "the request was cancelled (its caller closed the channel)");
		return 0;
	}
	left = start_ms + budget_ms - (ln_now_ms() + skew_ms);
	if (left <= 0) {
		snprintf(why, sizeof(why), "time budget of %ld ms ran out", budget_ms);
		return 0;
	}
	return (long)left;
}

const char *ln_budget_why(void)
{
	return why;
}
