/* SPDX-License-Identifier: MIT */
/*
 * The failpoint every change passes through (ln_agent_change, agent.h): it
 * counts the change, and refuses it in a read-only verb, once the session
 * is closed, or once the request's time budget ran out (then the request
 * ends here, after the abort hook of the session, if one is installed, sent
 * the answer captured so far). Tests stop the agent before a chosen change
 * with LLMNET_FAILPOINT.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/answer.h"
#include "agents/agent/core/budget.h"
#include "common/error.h"
#include "common/log.h"

volatile int ln_agent_stopping;

/* Installed by the session while it serves a request (ln_agent_on_abort). */
static void (*abort_hook)(int rc);

void ln_agent_on_abort(void (*fn)(int rc))
{
	abort_hook = fn;
}

int ln_agent_change(struct ln_agent *a, const char *what)
{
	if (a->dry_run) {
		ln_error("refusing change in a read-only verb: %s", what);
		return -EROFS;
	}
	if (ln_budget_left_ms() == 0) {
		struct ln_buf m = LN_BUF_INIT;

		ln_buf_addf(&m, "%s before %s; nothing more was changed", ln_budget_why(), what);
		ln_agent_fail("timeout", m.buf, LN_AGENT_EXIT_TIMEOUT);
		ln_buf_release(&m);
		/* exit, as the failpoint does: no caller can go on changing; a
		 * session first sends the answer captured so far */
		if (abort_hook)
			abort_hook(LN_AGENT_EXIT_TIMEOUT);
		_exit(LN_AGENT_EXIT_TIMEOUT);
	}
	if (ln_agent_stopping) {
		ln_error("refusing change, the session is closed: %s", what);
		return -ECANCELED;
	}
	a->changes++;
	ln_trace("agent", "change %lu: %s", a->changes, what);
	if (a->clock_step_ms)
		ln_budget_advance(a->clock_step_ms);
	if (a->failpoint && a->changes == a->failpoint) {
		ln_warn("failpoint: stopping before change %lu (%s)", a->changes, what);
		fflush(stdout);
		_exit(LN_AGENT_EXIT_FAILPOINT);
	}
	return 0;
}
